//! Diagnosis aid (session 27): what reading K lines the other CPU wrote last costs per
//! line, as a dependent chain (each line holds the next one's index: no overlap) and as
//! independent loads (addresses known up front: the core overlaps the misses). CPU 1
//! writes every line and hands the turn over; CPU 0 times a cold pass, then a hot one;
//! the difference over K is the price of a line. `target/release/examples/linexfer`

use std::sync::atomic::{AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::Instant;

/// One line of its own.
#[repr(align(64))]
struct Line(AtomicU64);

#[derive(Clone, Copy)]
enum Pass {
    /// Each load's address comes from the previous load.
    Chain,
    /// Each line read, then written (a read-for-ownership on a line read already).
    ChainWrite,
    /// Every address known up front.
    Independent,
}

fn pin(c: usize) {
    if let Some(ids) = core_affinity::get_core_ids() {
        core_affinity::set_for_current(ids[c % ids.len()]);
    }
}

/// One timed pass over the lines, in ns.
fn pass(lines: &[Line], order: &[usize], how: Pass) -> f64 {
    let t = Instant::now();
    let mut at = order[0];
    match how {
        Pass::Independent => at = order.iter().fold(0u64, |s, &j| s.wrapping_add(lines[j].0.load(Relaxed))) as usize,
        Pass::Chain | Pass::ChainWrite => {
            for _ in 0..order.len() {
                let next = lines[at].0.load(Relaxed);
                if matches!(how, Pass::ChainWrite) {
                    lines[at].0.store(next, Relaxed);
                }
                at = next as usize;
            }
        }
    }
    std::hint::black_box(at);
    t.elapsed().as_nanos() as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median cold and hot pass over `k` lines, `rounds` turns.
fn run(k: usize, rounds: u64, how: Pass) -> (f64, f64) {
    let lines: Arc<Vec<Line>> = Arc::new((0..k).map(|_| Line(AtomicU64::new(0))).collect());
    // A stride through the lines, so that the prefetcher cannot follow the chain.
    let order: Arc<Vec<usize>> = Arc::new((0..k).map(|i| (i * 7 + 3) % k).collect());
    let turn = Arc::new(AtomicU64::new(0));
    let side = |me: u64| {
        let (lines, turn, order) = (lines.clone(), turn.clone(), order.clone());
        std::thread::spawn(move || {
            pin(me as usize);
            let mut samples = Vec::new();
            for i in 0..rounds {
                while turn.load(Acquire) != 2 * i + me {
                    std::hint::spin_loop();
                }
                if me == 1 {
                    // The writer: each line gets the index of the next in the chain.
                    for j in 0..k {
                        lines[order[j]].0.store(order[(j + 1) % k] as u64, Relaxed);
                    }
                } else {
                    let cold = pass(&lines, &order, how);
                    samples.push((cold, pass(&lines, &order, how)));
                }
                turn.store(2 * i + me + 1, Release);
            }
            samples
        })
    };
    let (reader, writer) = (side(0), side(1));
    writer.join().expect("writer");
    let s = reader.join().expect("reader");
    (median(s.iter().map(|x| x.0).collect()), median(s.iter().map(|x| x.1).collect()))
}

fn main() {
    for k in [1usize, 4, 16, 64] {
        for (name, how) in
            [("chain", Pass::Chain), ("chain+write", Pass::ChainWrite), ("independent", Pass::Independent)]
        {
            let (cold, hot) = run(k, 20_000, how);
            println!("k {k:3} {name:12} cold {cold:6.0} hot {hot:6.0} ns → {:6.1} ns a line", (cold - hot) / k as f64);
        }
    }
}
