//! `TaskOpts::mm` reaches the policy: 2.4's `goodness` gives +1 to a task of the address
//! space the CPU has loaded, so of two equal tasks the one sharing the previous task's
//! `mm` runs first even when the other is ahead of it on the run list. (Without the
//! option every runtime task is in mm 1 and the list order decides.)
#![cfg(not(loom))]
use schedlab_rt::{Builder, TaskOpts};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// On one worker under `policy`: a gate task in mm 2 holds the worker while the main
/// thread spawns `same` (mm 2) and then `other` (mm 1), which DSS and MQS link at the
/// head of the list, ahead of `same`. Both have a full counter (no parent) and last ran
/// nowhere else; the gate exits and `schedule()` chooses. Returns the order they ran in.
fn first_after_gate(policy: &str) -> Vec<&'static str> {
    let rt = Builder::new().workers(1).policy(policy).build().unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let (entered, release) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let opts = |mm| TaskOpts { mm: Some(mm), ..TaskOpts::default() };
    let gate = {
        let (entered, release) = (entered.clone(), release.clone());
        rt.spawn_with(opts(2), async move {
            entered.store(true, SeqCst);
            // Hold the worker inside this one poll: no preemption point.
            let t = Instant::now();
            while !release.load(SeqCst) && t.elapsed() < Duration::from_secs(10) {
                std::hint::spin_loop();
            }
        })
    };
    let t = Instant::now();
    while !entered.load(SeqCst) {
        assert!(t.elapsed() < Duration::from_secs(10), "the gate task never ran");
        std::thread::yield_now();
    }
    let mut hs = Vec::new();
    for (mm, name) in [(2, "same"), (1, "other")] {
        let order = order.clone();
        hs.push(rt.spawn_with(opts(mm), async move { order.lock().unwrap().push(name) }));
    }
    release.store(true, SeqCst);
    rt.block_on(async {
        gate.await.unwrap();
        for h in hs {
            h.await.unwrap();
        }
    });
    let v = order.lock().unwrap().clone();
    v
}

#[test]
fn the_same_mm_runs_first_under_dss() {
    assert_eq!(first_after_gate("dss"), ["same", "other"]);
}

#[test]
fn the_same_mm_runs_first_under_mqs() {
    assert_eq!(first_after_gate("mqs"), ["same", "other"]);
}
