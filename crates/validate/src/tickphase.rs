//! Where the runtime's workers' timer ticks fall against a run's start (the host
//! machine's `tick_first_ns`, with `tick_phase = "boot"`).
//!
//! `validate` builds a fresh runtime right before each real run (`real_run`): the
//! workers start one thread after another (`start_workers`), each starts its tick grid
//! one period after its loop starts (`worker_loop`), and the root task is spawned once
//! `build()` has returned. The simulator's time 0 is the root's fork on CPU 0, where it
//! runs at once. So what the simulator needs per run is each worker's first tick after
//! the root's first run, the root's worker first. This does that sequence `rounds`
//! times (a fresh runtime, a root that stamps the clock when it first runs) and reads
//! the workers' grids ([`schedlab_rt::Runtime::next_ticks`]).

use serde::Serialize;
use std::time::{Duration, Instant};

/// One fresh runtime's tick grids against its root task's first run.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    /// Per simulated CPU (the root's worker first, then the others in worker order):
    /// ns from the root's first run to the worker's first tick after it (more than a
    /// period when the worker started after the root ran).
    pub first_tick_ns: Vec<u64>,
    /// Per worker (worker order): its loop's start less the root's first run, ns
    /// (negative: the worker started before the root ran).
    pub start_ns: Vec<i64>,
    /// The worker the root first ran on.
    pub root_worker: usize,
    /// The root's first run on the policy's clock (ns since it started, once the policy
    /// was built): where the run starts on O(1)'s jiffy grid (`now / tick`).
    pub clock_ns: u64,
}

/// `rounds` fresh runtimes of `workers` pinned workers at `hz` under `policy`, each
/// built and started as `validate`'s real runs are.
pub fn measure(workers: usize, hz: u32, policy: &str, rounds: usize) -> Result<Vec<Round>, crate::ValidateError> {
    measure_rounds(workers, hz, policy, rounds).map_err(crate::ValidateError::Runtime)
}

fn measure_rounds(workers: usize, hz: u32, policy: &str, rounds: usize) -> Result<Vec<Round>, String> {
    let period = 1_000_000_000 / hz.max(1) as u64;
    let mut out = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let rt = schedlab_rt::Builder::new()
            .workers(workers)
            .pin(true)
            .hz(hz)
            .policy(policy)
            .build()
            .map_err(|e| e.to_string())?;
        // `real_run` reads the workers' run delays between the build and the spawn.
        let _ = crate::hostdelay::worker_run_delays();
        let root = rt.spawn(async { (Instant::now(), schedlab_rt::current_worker().unwrap_or(0)) });
        let (ran, root_worker) = rt.block_on(root).map_err(|e| format!("tick phase root: {e}"))?;
        // Every worker's loop starts within a few ms of the build, or something is
        // badly wrong with the host.
        let deadline = Instant::now() + Duration::from_secs(1);
        let first = loop {
            let f = rt.first_ticks();
            if f.iter().all(Option::is_some) || Instant::now() > deadline {
                break f;
            }
            std::thread::yield_now();
        };
        let first: Vec<Instant> = first.into_iter().collect::<Option<_>>().ok_or("a worker never started its loop")?;
        let clock_start = rt.clock_start().ok_or("the tick phases need a policy scheduler")?;
        rt.shutdown();
        let mut r = round(&first, ran, root_worker, period);
        r.clock_ns = ran.saturating_duration_since(clock_start).as_nanos() as u64;
        out.push(r);
    }
    Ok(out)
}

/// What the host machine takes from the rounds: the 10th to 90th percentile of the
/// root's CPU's first tick and of every other CPU's (ns after the root's first run),
/// so that a round in which the host stalled a thread start for milliseconds does not
/// set the range.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Ranges {
    pub rounds: usize,
    pub first_ns: (f64, f64),
    pub other_ns: (f64, f64),
    /// The median of the other CPUs' first ticks less the root CPU's (ns).
    pub gap_median_ns: f64,
    /// The p10..p90 of the root's first run on the policy's clock ([`Round::clock_ns`]):
    /// how long the runtime took from the built policy to running the root (starting
    /// the workers, spawning the root), which no policy's constructor is part of.
    pub clock_ns: (f64, f64),
}

/// The p10..p90 ranges of `rounds` (at least one round of at least one worker).
pub fn ranges(rounds: &[Round]) -> Ranges {
    let first = rounds.iter().map(|r| r.first_tick_ns[0] as f64).collect();
    let other: Vec<f64> = rounds.iter().flat_map(|r| r.first_tick_ns[1..].iter().map(|&t| t as f64)).collect();
    let gaps: Vec<f64> = rounds
        .iter()
        .flat_map(|r| r.first_tick_ns[1..].iter().map(move |&t| t as f64 - r.first_tick_ns[0] as f64))
        .collect();
    Ranges {
        rounds: rounds.len(),
        first_ns: pct(first),
        other_ns: if other.is_empty() { (0.0, 0.0) } else { pct(other) },
        gap_median_ns: if gaps.is_empty() { 0.0 } else { crate::timing::median(gaps) },
        clock_ns: pct(rounds.iter().map(|r| r.clock_ns as f64).collect()),
    }
}

/// The 10th and 90th percentiles of `v` (0 for an empty `v`).
fn pct(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v.get(((v.len().max(1) - 1) as f64 * q).round() as usize).copied().unwrap_or(0.0);
    (at(0.1), at(0.9))
}

/// Signed ns from `a` to `b`.
fn ns_between(a: Instant, b: Instant) -> i64 {
    if b >= a {
        (b - a).as_nanos() as i64
    } else {
        -((a - b).as_nanos() as i64)
    }
}

/// One round from the workers' first ticks, the root's first run and worker, and the
/// tick period.
fn round(first: &[Instant], ran: Instant, root_worker: usize, period: u64) -> Round {
    let p = period as i64;
    // The first point of the grid at or after the root ran (at least 1 ns after).
    let after = |g: i64| if g > 0 { g } else { (g - 1).rem_euclid(p) + 1 } as u64;
    let order = std::iter::once(root_worker).chain((0..first.len()).filter(|&w| w != root_worker));
    Round {
        first_tick_ns: order.map(|w| after(ns_between(ran, first[w]))).collect(),
        start_ns: first.iter().map(|&t| ns_between(ran, t) - p).collect(),
        root_worker,
        clock_ns: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_takes_the_first_grid_point_after_the_root_ran() {
        let ran = Instant::now() + Duration::from_secs(1);
        let at = |ns: i64| {
            if ns >= 0 {
                ran + Duration::from_nanos(ns as u64)
            } else {
                ran - Duration::from_nanos(-ns as u64)
            }
        };
        // Worker 0 started 20 µs before the root ran, worker 1 10 µs after.
        let r = round(&[at(980_000), at(1_010_000)], ran, 1, 1_000_000);
        assert_eq!(r.first_tick_ns, vec![1_010_000, 980_000]);
        assert_eq!(r.start_ns, vec![-20_000, 10_000]);
        // Worker 0 started 2.3 periods before the root ran: its grid point 0.7 periods
        // after; worker 1 started 3 ms after the root.
        let r = round(&[at(-1_300_000), at(4_000_000)], ran, 0, 1_000_000);
        assert_eq!(r.first_tick_ns, vec![700_000, 4_000_000]);
        assert_eq!(r.start_ns, vec![-2_300_000, 3_000_000]);
    }

    #[test]
    fn fresh_runtimes_give_every_worker_a_first_tick_after_the_root_ran() {
        let rounds = measure(2, 1000, "dss", 3).unwrap();
        assert_eq!(rounds.len(), 3);
        for r in rounds {
            assert_eq!(r.first_tick_ns.len(), 2);
            assert!(r.first_tick_ns.iter().all(|&t| t >= 1), "{r:?}");
            assert!(r.root_worker < 2);
            // The clock starts before the workers, which start before the root runs.
            assert!(r.clock_ns > 0, "{r:?}");
        }
    }
}
