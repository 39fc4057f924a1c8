//! Diagnosis aid: what a *contended* acquisition of the runtime's run-queue lock
//! (`parking_lot::Mutex`, `RtLock`) costs beyond an uncontended one that takes the
//! lock from the other CPU. CPU 0 takes the lock, holds it for H ns and releases it,
//! stamping the release time just before the unlock; CPU 1 either asks for the lock
//! while it is held (contended: it spins in `parking_lot`'s backoff) or only after the
//! release (uncontended, remote: the line transfer the simulator's `lock_handoff_ns`
//! prices). Printed: the median delay from the release stamp to CPU 1 holding the
//! lock, both ways, per hold time. The simulator grants a contended lock at the
//! release plus the same hand-off as an uncontended remote one.
//! `target/release/examples/lockwait [ROUNDS]`

use parking_lot::Mutex;
use schedlab_validate::{median, pin};
use std::sync::atomic::{AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn spin_for(start: Instant, ns: u64) {
    while start.elapsed() < Duration::from_nanos(ns) {
        std::hint::spin_loop();
    }
}

/// `contended`: CPU 1 calls `lock()` while CPU 0 still holds it (else after the release).
/// Returns the medians of (release → CPU 1 holds it) and of CPU 1's whole `lock()` call.
fn run(rounds: u64, hold_ns: u64, contended: bool) -> (f64, f64) {
    let lock = Arc::new(Mutex::new(0u64));
    let held = Arc::new(AtomicU64::new(0));
    let released = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let rel_ns = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let owner = {
        let (lock, held, released, done, rel_ns) =
            (lock.clone(), held.clone(), released.clone(), done.clone(), rel_ns.clone());
        std::thread::spawn(move || {
            pin(0);
            for i in 1..=rounds {
                let mut g = lock.lock();
                held.store(i, Release);
                let s = Instant::now();
                // Give CPU 1 time to reach its `lock()` call before the hold's timed part.
                spin_for(s, hold_ns);
                *g += 1;
                rel_ns.store(t0.elapsed().as_nanos() as u64, Relaxed);
                drop(g);
                released.store(i, Release);
                while done.load(Acquire) != i {
                    std::hint::spin_loop();
                }
            }
        })
    };
    let waiter = std::thread::spawn(move || {
        pin(1);
        let (mut after_release, mut call) = (Vec::new(), Vec::new());
        for i in 1..=rounds {
            let gate = if contended { &held } else { &released };
            while gate.load(Acquire) != i {
                std::hint::spin_loop();
            }
            let c = Instant::now();
            let g = lock.lock();
            let got = t0.elapsed().as_nanos() as u64;
            call.push(c.elapsed().as_nanos() as f64);
            drop(g);
            after_release.push(got.saturating_sub(rel_ns.load(Relaxed)) as f64);
            done.store(i, Release);
        }
        (median(after_release), median(call))
    });
    owner.join().expect("owner");
    waiter.join().expect("waiter")
}

fn main() {
    let rounds: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    println!("hold ns | release→held: contended, uncontended remote, extra | contended lock() call, of it before the release");
    for hold in [50, 100, 150, 200, 250, 300, 350, 400, 500, 600, 800, 1_000, 1_500, 2_000, 3_000, 5_000] {
        let (c, cc) = run(rounds, hold, true);
        let (u, _) = run(rounds, hold, false);
        println!("{hold:>7} | {c:>6.0} {u:>6.0} {:>+6.0} | {cc:>6.0} {:>6.0}", c - u, cc - c);
    }
}
