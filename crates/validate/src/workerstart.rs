//! How far apart the runtime's workers start their tick grids (the host machine's
//! `tick_stagger_ns`, with `tick_phase = "boot"`).
//!
//! A policy runtime starts one thread per worker, one after another
//! (`schedlab_rt`'s `start_workers`: spawn, then the thread pins itself), and each
//! worker's first tick is one period after its loop starts (`worker_loop`). So the
//! workers' tick grids are offset by how long one thread start takes after the
//! previous one, and `validate` builds a fresh runtime right before each real run:
//! the run starts with its timers. This times the same sequence: `workers` threads
//! spawned in a loop, each pinned to its core and stamping the clock first thing,
//! over several rounds; the offset is the median of (last start − first start) /
//! (workers − 1), taking the threads in their spawn order, at least 0.

use crate::timing::median;
use crate::timing::pin;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The median ns between consecutive workers' starts, over `rounds` starts of
/// `workers` threads (at least 2).
pub fn stagger_ns(workers: usize, rounds: usize) -> f64 {
    let workers = workers.max(2);
    let mut gaps = Vec::with_capacity(rounds);
    for _ in 0..rounds.max(1) {
        let t0 = Instant::now();
        let starts = Arc::new(Mutex::new(vec![0i64; workers]));
        let threads: Vec<_> = (0..workers)
            .map(|i| {
                let starts = starts.clone();
                std::thread::spawn(move || {
                    pin(i);
                    starts.lock().unwrap()[i] = t0.elapsed().as_nanos() as i64;
                })
            })
            .collect();
        for t in threads {
            let _ = t.join();
        }
        let s = starts.lock().unwrap();
        gaps.push(((s[workers - 1] - s[0]) as f64 / (workers - 1) as f64).max(0.0));
    }
    median(gaps)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_stagger_is_a_finite_non_negative_time() {
        let s = super::stagger_ns(2, 5);
        assert!(s.is_finite() && s >= 0.0, "{s}");
        assert!(s < 1e9, "one thread start took a second: {s} ns");
    }
}
