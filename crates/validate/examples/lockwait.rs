//! Probe: what a *contended* acquisition of the runtime's run-queue lock
//! (`RtLock`'s mutex, `schedlab_rt::PolicyMutex`: `parking_lot::Mutex`, or with the
//! runtime's `spin-lock` feature a polling spin lock) costs beyond an uncontended one that takes the
//! lock from the other CPU. CPU 0 takes the lock, holds it for H ns and releases it,
//! stamping the release time just before the unlock; CPU 1 either asks for the lock
//! while it is held (contended: it waits as the lock's waiter does) or only after the
//! release (uncontended, remote: the line transfer the simulator's `lock_handoff_ns`
//! prices). Printed: the median delay from the release stamp to CPU 1 holding the
//! lock, both ways, per hold time. The simulator grants a contended lock at the
//! release plus the same hand-off as an uncontended remote one, delayed to the
//! waiter's next poll by the host machine's back-off (`schedlab_sim::lockwait`, with
//! this machine's `pause`, `sched_yield` and parked wake-up measured first, as the
//! calibration does): "model extra" is the median over the rounds of that delay for
//! each round's own wait (its `lock()` call less release→held), to compare with the
//! measured extra.
//! `target/release/examples/lockwait [ROUNDS]`

use schedlab_rt::{lock_policy_mutex as lock_it, PolicyMutex as Mutex};
use schedlab_sim::lockwait::Backoff;
use schedlab_validate::backoff;
use schedlab_validate::calibrate::park_wake;
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
/// Returns the medians of (release → CPU 1 holds it), of CPU 1's whole `lock()` call
/// and of the model's delay past the release for each round's wait.
fn run(rounds: u64, hold_ns: u64, contended: bool, model: Backoff) -> (f64, f64, f64) {
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
                let mut g = lock_it(&lock);
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
        let (mut after_release, mut call, mut predicted) = (Vec::new(), Vec::new(), Vec::new());
        for i in 1..=rounds {
            let gate = if contended { &held } else { &released };
            while gate.load(Acquire) != i {
                std::hint::spin_loop();
            }
            let c = Instant::now();
            let g = lock_it(&lock);
            let got = t0.elapsed().as_nanos() as u64;
            let whole = c.elapsed().as_nanos() as u64;
            call.push(whole as f64);
            drop(g);
            let late = got.saturating_sub(rel_ns.load(Relaxed));
            after_release.push(late as f64);
            // The round's wait: from its ask to the release (0: asked after it).
            let wait = whole.saturating_sub(late);
            predicted.push(if wait == 0 { 0.0 } else { (model.sees_release(wait) - wait) as f64 });
            done.store(i, Release);
        }
        (median(after_release), median(call), median(predicted))
    });
    owner.join().expect("owner");
    waiter.join().expect("waiter")
}

fn main() {
    let rounds: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    // The host machine's back-off, measured as `calibrate` measures it.
    let b = backoff::measure(false);
    let park = park_wake(200);
    let shape = backoff::runtime_waiter();
    let model = Backoff {
        pause_ns: b.pause_ns.round().max(1.0) as u64,
        spin_steps: shape.spin_steps,
        yield_ns: b.yield_ns.round().max(1.0) as u64,
        yields: shape.yields,
        unpark_ns: if shape.parks { park.round().max(1.0) as u64 } else { 0 },
    };
    println!("runtime lock waiter: {:?} -> {shape:?}", schedlab_rt::POLICY_LOCK_WAITER);
    println!(
        "model: {model:?} (pause {:.1} ns, sched_yield {:.0} ns, parked wake-up {park:.0} ns)",
        b.pause_ns, b.yield_ns
    );
    println!("hold ns | release→held: contended, uncontended remote, extra, model extra | contended lock() call, of it before the release");
    for hold in [50, 100, 150, 200, 250, 300, 350, 400, 500, 600, 800, 1_000, 1_500, 2_000, 3_000, 5_000] {
        let (c, cc, m) = run(rounds, hold, true, model);
        let (u, _, _) = run(rounds, hold, false, model);
        println!("{hold:>7} | {c:>6.0} {u:>6.0} {:>+6.0} {m:>+6.0} | {cc:>6.0} {:>6.0}", c - u, cc - c);
    }
}
