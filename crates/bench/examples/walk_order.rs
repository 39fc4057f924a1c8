//! What decides the `rq-walk` rows on a host with hardware prefetchers: a dependent
//! walk over 1,024 task lines laid out as the runtime lays them out (one 8 KB block per
//! task, the line at `colour × 64`, `schedlab_core::layout`), in block order (as the
//! runtime's run list holds its tasks) and in a shuffled order, vanilla and with 32
//! colours. Same lines, same cache sets; only the order differs between the two rows
//! of one colouring, so their gap is what the host's prefetch of a constant stride
//! hides. `cargo run --release -p schedlab-bench --example walk_order [reps]`; pin it
//! with `taskset -c 1` for steadier figures.

use schedlab_core::layout::{task_hot_line, TASK_BLOCK};
use std::time::Instant;

const TASKS: usize = 1024;
const WALKS: usize = 20_000;

/// ns per line visited: each line holds the address of the next one, in `order`.
fn walk(colours: u32, shuffled: bool) -> f64 {
    let block = TASK_BLOCK as usize;
    let mut mem = vec![0u64; (TASKS + 1) * block / 8];
    let base = (mem.as_ptr() as usize).next_multiple_of(block);
    let start = (base - mem.as_ptr() as usize) / 8;
    let slot = |t: usize| {
        let b = (base + t * block) as u64;
        start + (task_hot_line(b, colours, 64) - base as u64) as usize / 8
    };
    let mut order: Vec<usize> = (0..TASKS).collect();
    if shuffled {
        // A fixed permutation (xorshift), the same every run.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in (1..TASKS).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
    }
    for k in 0..TASKS {
        mem[slot(order[k])] = slot(order[(k + 1) % TASKS]) as u64;
    }
    let mut at = slot(order[0]);
    for _ in 0..200 * TASKS {
        at = mem[at] as usize;
    }
    let t0 = Instant::now();
    for _ in 0..WALKS * TASKS {
        at = std::hint::black_box(mem[at] as usize);
    }
    t0.elapsed().as_nanos() as f64 / (WALKS * TASKS) as f64
}

fn main() {
    let reps: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let cases = [(1, false), (1, true), (32, false), (32, true)];
    let mut ns = vec![Vec::new(); cases.len()];
    for _ in 0..reps {
        for (i, &(c, s)) in cases.iter().enumerate() {
            ns[i].push(walk(c, s));
        }
    }
    println!(
        "{TASKS} task lines, {WALKS} walks, {reps} interleaved repetitions: ns per line visited, median [min..max]"
    );
    for (&(c, s), mut v) in cases.iter().zip(ns) {
        v.sort_by(f64::total_cmp);
        let label = format!(
            "{} in {} order",
            if c == 1 { "vanilla" } else { "colours=32" },
            if s { "shuffled" } else { "block" }
        );
        println!("  {label:<32} {:>6.1} [{:.1}..{:.1}]", v[v.len() / 2], v[0], v[v.len() - 1]);
    }
}
