//! Pick-next cost against run-queue length: for every runtime policy of the registry,
//! the time one CPU takes to give up a runnable task and pick the next one, with 10 to
//! 100,000 runnable tasks.
//!
//! * **Core policies** (`dss`, `mqs`, `pmqs`, `o1`, and whatever the registry adds):
//!   the policy's own code on the runtime's platform ([`RtPlatform::detached`]: the
//!   `parking_lot` locks, clock and `resched` the runtime's workers use, free cost
//!   hooks), built through the registry for a one-CPU machine. `N` tasks are forked
//!   and woken (`task_new` + `wake_up`), one is picked, then the bench times `K`
//!   cycles of `yield_now(curr)` + `schedule(curr, Runnable)` — what a worker does for
//!   a task that calls `yield_now().await`, without the poll. Every task stays
//!   runnable, so the run queue holds `N` tasks throughout. No timer ticks run.
//! * **Runtime-native schedulers** (`fast`): they have no policy code to drive, so the
//!   bench runs the real runtime with one pinned worker and `N` tasks that each loop on
//!   `yield_now().await`, and divides a window of wall time by the polls the runtime
//!   counted in it. That is pick + poll + re-queue (a yielded task goes to the back of
//!   the worker's FIFO deque): an upper bound of the pick alone, and not like-for-like
//!   with the core rows.
//!
//! `K` is not fixed: a calibration doubles it until a batch takes an eighth of the
//! target time, then one batch of about the target time is timed (DSS scans its queue
//! linearly, so at 100k tasks `K` is small). Rows: [`names::PICK_NEXT`] (ns per pick,
//! one per policy and size) and [`names::PICK_NEXT_GROWTH`] (largest size ÷ smallest).

use crate::yielders::with_full_queue;
use crate::{names, runtimes, units, Filter, Row};
use schedlab_core::policies::{self, PolicySource};
use schedlab_core::{PolicySpec, PrevState, TaskLayout};
use std::time::{Duration, Instant};

/// The schedulers `bench` runs on the real runtime: every registry entry in its example
/// configuration, runtime-native ones (the default, `fast`) first.
pub fn runtime_policies() -> Vec<String> {
    policies::runtime_examples().into_iter().map(str::to_string).collect()
}

/// Run-queue lengths and time per measurement.
#[derive(Clone, Debug)]
pub struct PickScale {
    /// Runnable tasks, ascending; the growth row compares the last with the first.
    pub sizes: Vec<usize>,
    /// Timed batch length per (policy, size).
    pub target: Duration,
}

impl PickScale {
    /// 10, 1k and 100k tasks, 8 ms per size (the whole section in well under a second).
    pub fn quick() -> PickScale {
        PickScale { sizes: vec![10, 1_000, 100_000], target: Duration::from_millis(8) }
    }
    /// 10, 100, 1k, 10k and 100k tasks, 25 ms per size.
    pub fn full() -> PickScale {
        PickScale { sizes: vec![10, 100, 1_000, 10_000, 100_000], target: Duration::from_millis(25) }
    }
    /// [`PickScale::quick`] if `quick`, else [`PickScale::full`].
    pub fn new(quick: bool) -> PickScale {
        if quick {
            PickScale::quick()
        } else {
            PickScale::full()
        }
    }
}

/// One measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct PickCost {
    /// Nanoseconds per pick (per yield for runtime-native schedulers).
    pub ns: f64,
    /// Picks timed.
    pub picks: u64,
    /// What was timed: `policy code` or `runtime yield+poll`.
    pub method: &'static str,
}

/// Pick-next cost of scheduler `spec` with `n` runnable tasks on one CPU.
pub fn measure(spec: &str, n: usize, target: Duration) -> Result<PickCost, crate::BenchError> {
    measure_picks(spec, n, target).map_err(crate::BenchError::Run)
}

fn measure_picks(spec: &str, n: usize, target: Duration) -> Result<PickCost, String> {
    if n == 0 {
        return Err("pick-next needs at least one runnable task".into());
    }
    let parsed = PolicySpec::parse(spec).map_err(|e| e.0)?;
    if parsed.runtime_native() {
        runtime_yields(spec, n, target)
    } else {
        policy_code(&parsed, n, target)
    }
}

/// The core policy's `yield_now` + `schedule` on a one-CPU [`RtPlatform`].
fn policy_code(spec: &PolicySpec, n: usize, target: Duration) -> Result<PickCost, String> {
    with_full_queue(spec, TaskLayout::Dense, n, |p, policy, mut curr| {
        let mut cycles = |k: u64| -> Duration {
            let start = Instant::now();
            for _ in 0..k {
                policy.yield_now(p, curr);
                curr = policy.schedule(p, Some(curr), PrevState::Runnable).expect("a runnable task to pick");
            }
            start.elapsed()
        };
        let (ns, picks) = calibrated(target, &mut cycles);
        Ok(PickCost { ns, picks, method: "policy code" })
    })
}

/// Double `k` until `run(k)` takes target/8 (the calibration doubles as warm-up), then
/// time one run of about `target`: (ns per cycle, cycles timed).
fn calibrated(target: Duration, run: &mut dyn FnMut(u64) -> Duration) -> (f64, u64) {
    let mut k = 1u64;
    let took = loop {
        let took = run(k);
        if took >= target / 8 || k >= 1 << 40 {
            break took;
        }
        k *= 2;
    };
    let k = ((k as f64 * target.as_secs_f64() / took.as_secs_f64().max(1e-9)).ceil() as u64).max(1);
    let took = run(k);
    (took.as_nanos() as f64 / k as f64, k)
}

/// `fast` (any runtime-native scheduler): the runtime with one pinned worker and `n`
/// tasks looping on `yield_now().await`; wall time of a window ÷ polls counted in it.
fn runtime_yields(spec: &str, n: usize, target: Duration) -> Result<PickCost, String> {
    let (ns, picks) = crate::yielders::with_yielders(spec, n, |rt| {
        std::thread::sleep(target / 4);
        let (t0, p0) = (Instant::now(), rt.polls());
        std::thread::sleep(target);
        // On a loaded machine the OS may not have run the worker at all in a short
        // window: measure on until it has polled (the ratio stays time / polls).
        while rt.polls() == p0 && t0.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(target);
        }
        let (took, polls) = (t0.elapsed(), rt.polls() - p0);
        Ok((took.as_nanos() as f64 / polls.max(1) as f64, polls))
    })?;
    if picks == 0 {
        return Err(format!("{spec}: no task was polled in {target:?}"));
    }
    Ok(PickCost { ns, picks, method: "runtime yield+poll, 1 worker" })
}

/// The [`names::PICK_NEXT`] rows for every runtime policy and every size of `scale`,
/// and a [`names::PICK_NEXT_GROWTH`] row per policy; a policy that cannot be measured
/// is reported through `progress` and skipped.
pub fn rows(scale: &PickScale, filter: &Filter, progress: &mut dyn FnMut(&str)) -> Vec<Row> {
    let rt = runtimes::SCHEDLAB;
    let (want_rows, want_growth) = (filter.wants(names::PICK_NEXT, rt), filter.wants(names::PICK_NEXT_GROWTH, rt));
    let mut out = Vec::new();
    if !want_rows && !want_growth {
        return out;
    }
    let sizes: Vec<String> = scale.sizes.iter().map(|s| s.to_string()).collect();
    for policy in runtime_policies() {
        progress(&format!("{} on {rt} {policy} ({} runnable tasks)", names::PICK_NEXT, sizes.join(", ")));
        let mut measured = Vec::new();
        for &n in &scale.sizes {
            match measure(&policy, n, scale.target) {
                Ok(c) => {
                    if want_rows {
                        let what = if c.method == "policy code" { String::new() } else { format!(" ({})", c.method) };
                        out.push(Row::new(
                            names::PICK_NEXT,
                            rt,
                            &format!("{policy}, {n} runnable{what}"),
                            c.ns,
                            units::NS_PICK,
                        ));
                    }
                    measured.push((n, c.ns));
                }
                Err(e) => progress(&format!("{} {policy} with {n} tasks skipped: {e}", names::PICK_NEXT)),
            }
        }
        if let (true, [(n0, v0), .., (n1, v1)]) = (want_growth, measured.as_slice()) {
            out.push(Row::new(
                names::PICK_NEXT_GROWTH,
                rt,
                &format!("{policy}, {n1} vs {n0} runnable"),
                v1 / v0,
                units::GROWTH,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_times_about_the_target() {
        let mut calls = Vec::new();
        let (ns, k) = calibrated(Duration::from_millis(8), &mut |k| {
            calls.push(k);
            Duration::from_micros(10 * k)
        });
        // 10 µs per cycle: doubled to 128 (1.28 ms ≥ 1 ms), then 800 cycles.
        assert_eq!(calls, [1, 2, 4, 8, 16, 32, 64, 128, 800]);
        assert_eq!((ns, k), (10_000.0, 800));
    }

    /// The runtime's platform keeps no observation that scans every task at a fork
    /// (the 2.4 family's counters ahead): forking `N` tasks stays linear in `N`.
    #[test]
    fn the_runtime_platform_keeps_no_per_fork_scan() {
        let spec: PolicySpec = "dss".parse().expect("a policy spec");
        let names = with_full_queue(&spec, TaskLayout::Dense, 3, |_, policy, curr| {
            Ok(policy.task_stats(curr).into_iter().map(|(name, _)| name).collect::<Vec<_>>())
        })
        .expect("dss on the runtime's platform");
        assert_eq!(names, ["fork_counter_ticks", "counter_ticks"]);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(measure("nope", 10, Duration::from_millis(1)).is_err());
        assert!(measure("dss", 0, Duration::from_millis(1)).is_err());
    }
}
