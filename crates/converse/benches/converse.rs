//! Converse message layer: ping-pong round trips (direct and via the
//! scheduler queue, thesis Fig. 2.4/2.5) and the queueing overhead on one PE.
//! `cargo bench -p schedlab-converse`.

use criterion::{criterion_group, criterion_main, Criterion};
use schedlab_converse::{bench_pingpong, bench_queueing_overhead, Cqs, Strategy};
use std::time::Duration;

fn from_ns(ns_each: f64, iters: u64) -> Duration {
    Duration::from_nanos((ns_each * iters as f64) as u64)
}

fn pingpong(c: &mut Criterion) {
    let mut g = c.benchmark_group("pingpong");
    g.sample_size(10);
    for via_queue in [false, true] {
        let name = if via_queue { "via_queue" } else { "direct" };
        g.bench_function(name, |b| b.iter_custom(|iters| from_ns(bench_pingpong(iters.max(1000), via_queue), iters)));
    }
    g.finish();
}

fn queueing(c: &mut Criterion) {
    let mut g = c.benchmark_group("queueing_overhead");
    g.sample_size(10);
    g.bench_function("enqueue_dispatch", |b| {
        b.iter_custom(|iters| from_ns(bench_queueing_overhead(iters.max(1000)).0, iters))
    });
    g.bench_function("direct_call", |b| {
        b.iter_custom(|iters| from_ns(bench_queueing_overhead(iters.max(1000)).1, iters))
    });
    g.finish();
}

fn cqs(c: &mut Criterion) {
    let mut g = c.benchmark_group("cqs");
    g.bench_function("fifo_1000", |b| {
        let mut q = Cqs::new();
        b.iter(|| {
            for i in 0..1000u32 {
                q.enqueue_fifo(i);
            }
            while q.dequeue().is_some() {}
        })
    });
    g.bench_function("ififo_16_prios_1000", |b| {
        let mut q = Cqs::new();
        b.iter(|| {
            for i in 0..1000u32 {
                q.enqueue(i, Strategy::IFifo((i % 16) as i32 - 8));
            }
            while q.dequeue().is_some() {}
        })
    });
    g.finish();
}

criterion_group!(benches, pingpong, queueing, cqs);
criterion_main!(benches);
