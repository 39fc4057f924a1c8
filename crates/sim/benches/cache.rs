//! What one modelled memory access costs the simulator on the host: `Platform::touch`
//! on an `smp-8` platform (4-way L2, 32-byte lines, task lines 8 KB apart as in the
//! kernel), one case per path through the cache model. `cargo bench -p schedlab-sim
//! --bench cache`; throughput is in modelled accesses per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedlab_core::{Access, Line, Platform};
use schedlab_sim::platform::SimPlatform;
use schedlab_sim::{CostModel, Machine};
use std::hint::black_box;

/// Task lines the platform has room for: with 8 KB blocks, far more than a 4-way set
/// of the preset's L2 holds, so every task line's set keeps recency order.
const TASKS: usize = 1024;
/// Accesses per iteration.
const N: usize = 4096;

fn platform() -> SimPlatform {
    let m = Machine::preset("smp-8").unwrap();
    SimPlatform::new(CostModel::new(&m), m.node_of.clone(), TASKS, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
}

/// CPU 0 reads the hot lines of tasks `0..tasks` round and round: with few tasks
/// every read after the first round hits (the recency update only), with more tasks
/// per set than it has ways every read misses and evicts (a run-queue walk over
/// more tasks than the cache holds).
fn walk(p: &SimPlatform, tasks: usize) {
    p.begin(0, 0);
    // A counter that wraps, not `i % tasks`: a division per access would cost about
    // as much as the access.
    let mut t = 0;
    for _ in 0..N {
        p.touch(Line::Task(black_box(t) as u32), Access::Read);
        t += 1;
        if t == tasks {
            t = 0;
        }
    }
}

/// Bus transactions of every kind so far.
fn transactions(p: &SimPlatform) -> u64 {
    p.bus_stats().by.iter().flatten().sum()
}

/// `run` on a fresh platform once to warm it, then checked to take the path its case
/// names: a further run makes `per_run` bus transactions (0: all hits).
fn warmed(run: impl Fn(&SimPlatform), per_run: u64) -> SimPlatform {
    let p = platform();
    run(&p);
    let before = transactions(&p);
    run(&p);
    assert_eq!(transactions(&p) - before, per_run, "bus transactions of one run");
    p
}

/// Two CPUs write one run-queue line in turn: every write takes the line from the
/// other's cache (a cache-to-cache read-for-ownership, the other copy dropped).
fn write_pingpong(p: &SimPlatform) {
    for i in 0..N {
        p.begin(i & 1, 0);
        p.touch(Line::Queue(0), Access::Write);
    }
}

/// Rounds of: CPUs 1–7 read one CPU-data line that CPU 0 then writes. Per round one
/// cache-to-cache read (the line is modified on CPU 0), six read misses and one
/// upgrade that invalidates seven copies: eight transactions in eight accesses.
fn share_then_write(p: &SimPlatform) {
    for _ in 0..N / 8 {
        for cpu in 1..8 {
            p.begin(cpu, 0);
            p.touch(Line::CpuData(0), Access::Read);
        }
        p.begin(0, 0);
        p.touch(Line::CpuData(0), Access::Write);
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("touch");
    g.throughput(Throughput::Elements(N as u64));
    let p = warmed(|p| walk(p, 1), 0);
    g.bench_function("read hit (one line)", |b| b.iter(|| walk(&p, 1)));
    let p = warmed(|p| walk(p, 64), 0);
    g.bench_function("read hit (walk of 64 tasks, within the ways)", |b| b.iter(|| walk(&p, 64)));
    let p = warmed(|p| walk(p, 512), N as u64);
    g.bench_function("read miss + eviction (walk of 512 tasks)", |b| b.iter(|| walk(&p, 512)));
    let p = warmed(write_pingpong, N as u64);
    g.bench_function("write, line modified on the other CPU", |b| b.iter(|| write_pingpong(&p)));
    let p = warmed(share_then_write, N as u64);
    g.bench_function("8 shared reads then an invalidating write", |b| b.iter(|| share_then_write(&p)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
