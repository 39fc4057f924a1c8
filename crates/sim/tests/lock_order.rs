//! A `schedule()` that finds its run-queue lock held waits as a deferred step, so
//! that the lock goes to the CPUs in the order they would take it (docs/cost-model.md,
//! "The lock waiter's back-off"). Without that, on a machine whose lock waiter backs off
//! (the host machines), a `schedule()` simulated whole held the lock from its next poll
//! on, ahead of a CPU whose step came later but which asked while the lock was free:
//! under DSS on hackbench the woken receiver, which the wake-up asked the waker's CPU
//! to run (a preemption), ran on the *other* CPU in 51 % (store_buffer 0) and 88 %
//! (48) of those wake-ups; the runtime runs it on the waker's CPU in 90–96 %.
//! docs/traces.md, "Lock order in virtual time".

use schedlab_core::trace::Event;
use schedlab_core::PolicySpec;
use schedlab_sim::{simulate_traced, Machine, SimConfig};
use schedlab_workloads::parse_workload;
use std::collections::HashMap;

/// A calibration of a 2-vCPU host (`schedlab validate --machine-out`),
/// with `store_buffer` set by the caller: a lock waiter that backs off (pauses, then
/// yields), as the runtime's does.
const HOST: &str = include_str!("data/host-2vcpu.toml");

/// Of the wake-ups whose target is the waker's own CPU, how many ran the woken task
/// there next, and how many in all.
fn preemptions_kept(store_buffer: u32, seed: u64) -> (usize, usize) {
    let mut m = Machine::from_toml(HOST).unwrap();
    m.costs.hw.store_buffer = store_buffer;
    let spec = PolicySpec::parse("dss").unwrap();
    let w = parse_workload("hackbench:groups=1,loops=100,start=fork").unwrap();
    let cfg = SimConfig { seed, ..SimConfig::default() };
    let (_, trace) = simulate_traced(&m, &spec, &w, &cfg, 4_000_000).unwrap();
    assert_eq!(trace.dropped, 0);
    let mut records = trace.records.clone();
    records.sort_by_key(|r| r.ts_ns);
    let mut pending: HashMap<u32, u32> = HashMap::new();
    let (mut kept, mut all) = (0, 0);
    for r in &records {
        match r.ev {
            Event::Wakeup { task, waker: Some(_), target: Some(t) } if t == r.cpu => {
                pending.insert(task, r.cpu);
            }
            Event::Wakeup { task, .. } => {
                pending.remove(&task);
            }
            Event::Switch { next: Some(n), .. } => {
                if let Some(waker_cpu) = pending.remove(&n) {
                    all += 1;
                    kept += (waker_cpu == r.cpu) as usize;
                }
            }
            _ => {}
        }
    }
    (kept, all)
}

#[test]
fn a_wake_up_that_preempts_the_wakers_cpu_mostly_runs_there() {
    for store_buffer in [0, 48] {
        for seed in 1..=2 {
            let (kept, all) = preemptions_kept(store_buffer, seed);
            assert!(all > 10_000, "store_buffer {store_buffer}, seed {seed}: {all} such wake-ups");
            assert!(
                4 * kept >= 3 * all,
                "store_buffer {store_buffer}, seed {seed}: {kept} of {all} ran on the waker's CPU"
            );
        }
    }
}
