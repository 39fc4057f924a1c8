//! The hardware limit: two threads pinned to different CPUs bouncing a counter through
//! one `AtomicU64` (spinning, no kernel involvement).

use crate::measure::{Measure, Stopwatch};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Round trips through one cache line between two threads pinned to the first two
/// CPUs (unpinned if the machine has fewer or pinning fails): ns per round trip.
/// `None` with only one CPU, where spinning would never end.
pub fn pingpong(budget: Duration) -> Option<f64> {
    pingpong_measure(budget).map(|m| m.value)
}

/// [`pingpong`] as a [`Measure`] (both threads spin: about 2 CPU-ns per ns); checks
/// that pong answered every round trip.
pub fn pingpong_measure(budget: Duration) -> Option<Measure> {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return None;
    }
    let (c0, c1) = (cores.first().copied(), cores.get(1).copied());
    let word = Arc::new(AtomicU64::new(0));
    let stop = u64::MAX;
    let w = word.clone();
    // Pong: waits for an odd value, answers with the next even one.
    let pong = std::thread::spawn(move || {
        if let Some(c) = c1 {
            core_affinity::set_for_current(c);
        }
        let mut expect = 1;
        loop {
            let v = w.load(Ordering::Acquire);
            if v == stop {
                return expect / 2;
            }
            if v == expect {
                w.store(v + 1, Ordering::Release);
                expect += 2;
            } else {
                std::hint::spin_loop();
            }
        }
    });
    let ping = std::thread::spawn(move || {
        if let Some(c) = c0 {
            core_affinity::set_for_current(c);
        }
        let mut v = 0u64;
        let mut round = || {
            word.store(v + 1, Ordering::Release);
            while word.load(Ordering::Acquire) != v + 2 {
                std::hint::spin_loop();
            }
            v += 2;
        };
        for _ in 0..10_000 {
            round();
        }
        let sw = Stopwatch::start();
        let mut n = 0u64;
        while sw.elapsed() < budget {
            for _ in 0..1024 {
                round();
            }
            n += 1024;
        }
        let m = sw.per_op(n);
        word.store(stop, Ordering::Release);
        (m, n + 10_000)
    });
    let (m, rounds) = ping.join().expect("ping thread");
    let answered = pong.join().expect("pong thread");
    assert_eq!(answered, rounds, "atomic ping-pong: pong answered every round trip");
    Some(m)
}

#[cfg(test)]
mod tests {
    #[test]
    fn atomic_pingpong_measures_something() {
        if let Some(ns) = super::pingpong(std::time::Duration::from_millis(20)) {
            assert!(ns > 0.0 && ns < 1e6, "{ns}");
        }
    }
}
