//! Probe: a wake-up made on CPU 0 into CPU 1's queue and the pick on CPU 1, two
//! pinned threads taking turns, for DSS and `fair` on the free platform: what a policy's
//! queue costs when its lines (a tree's heap nodes, a list's links) last moved on the
//! other CPU. `target/release/examples/fairxcpu`

use schedlab_core::policies::{cfs, dss};
use schedlab_core::{BuildEnv, Configured, NullPlatform, Policy, PolicySource, PrevState, TaskParams, Topology};
use schedlab_validate::median;
use std::sync::atomic::{AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::Instant;

fn pin(c: usize) {
    if let Some(ids) = core_affinity::get_core_ids() {
        core_affinity::set_for_current(ids[c % ids.len()]);
    }
}

fn run(pol: &str, rounds: u64) -> (f64, f64) {
    let p0 = NullPlatform::new(0);
    let env = BuildEnv { topo: &Topology::smp(2), capacity: 4, hz: 1000 };
    let s: Arc<dyn Policy<NullPlatform>> = Arc::from(match pol {
        "dss" => Configured::<dss::Kind>(Default::default()).build(&p0, &env).unwrap(),
        _ => Configured::<cfs::Kind>(Default::default()).build(&p0, &env).unwrap(),
    });
    // Task 0 starts on CPU 1 (forked there, woken, picked by CPU 1).
    let p1 = NullPlatform::new(1);
    s.task_new(&p1, 0, &TaskParams::default(), None);
    s.wake_up(&p1, 0, false);
    let first = s.schedule(&p1, None, PrevState::Runnable);
    assert_eq!(first, Some(0));
    let turn = Arc::new(AtomicU64::new(0));
    let (s2, t2) = (s.clone(), turn.clone());
    let b = std::thread::spawn(move || {
        pin(1);
        let p1 = NullPlatform::new(1);
        let mut picks = Vec::new();
        for i in 0..rounds {
            // Block the task, hand the turn to CPU 0, wait for its wake-up, pick.
            p1.set_now(i * 2000 + 1000);
            let _ = s2.schedule(&p1, Some(0), PrevState::Blocked);
            t2.store(2 * i + 1, Release);
            while t2.load(Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
            let t = Instant::now();
            let got = s2.schedule(&p1, None, PrevState::Runnable);
            picks.push(t.elapsed().as_nanos() as f64);
            assert_eq!(got, Some(0));
            let _ = p1.take_resched();
        }
        median(picks)
    });
    // On a thread of its own: pinning this one would confine every later thread it
    // spawns to CPU 0 (calibrate.rs, `atomic_rtt`).
    let a = std::thread::spawn(move || {
        pin(0);
        let p0 = NullPlatform::new(0);
        let mut wakes = Vec::new();
        for i in 0..rounds {
            while turn.load(Acquire) != 2 * i + 1 {
                std::hint::spin_loop();
            }
            p0.set_now(i * 2000 + 1500);
            let t = Instant::now();
            s.wake_up(&p0, 0, false);
            wakes.push(t.elapsed().as_nanos() as f64);
            let _ = p0.take_resched();
            turn.store(2 * i + 2, Release);
        }
        median(wakes)
    });
    let pick = b.join().unwrap();
    (a.join().unwrap(), pick)
}

fn main() {
    for _ in 0..3 {
        for pol in ["cfs", "dss"] {
            let (w, pk) = run(pol, 20_000);
            println!("{pol:<5} cross-CPU wake-up {w:6.0} ns   pick on the owner {pk:6.0} ns (each timed alone, clock read included)");
        }
    }
}
