//! Run-queue walk cost on the real runtime, vanilla against coloured task blocks.
//!
//! The runtime lays out each task's scheduling state (`TaskSched`) as the kernel lays
//! out `task_struct`: one 8 KB-aligned block per task, the state in the one line that
//! holds the kernel's hot fields, moved by `colour × 64` bytes under `colours=N`
//! (`schedlab_core::layout`). Without colours
//! every task's hot line lands in the same few cache sets, and DSS's `goodness()` walk
//! over a long run queue misses on each step; colours spread the lines over the sets.
//!
//! [`measure`]: the runtime with one pinned worker and `N` tasks that loop on
//! `yield_now().await`, so every poll ends in a `schedule()` that walks all `N`
//! runnable tasks. Over a window of wall time: ns per task visited = time ÷
//! (`schedule()` calls × run-queue length), the length read from the policy's
//! published `queue_len` at both ends of the window. Rows: [`names::RQ_WALK`], one per
//! setting of [`SETTINGS`], repetitions interleaved across settings.
//!
//! [`policy_walks`] drives the same policy code and layout without the runtime's
//! threads, a fixed number of walks: the program `tests/rq_walk_cachegrind.rs` runs
//! under cachegrind to count the cache misses themselves.

use crate::measure::{Measure, Stopwatch};
use crate::row::aggregate;
use crate::yielders::with_full_queue;
use crate::{names, runtimes, units, Filter, Row};
use schedlab_core::{PolicySource, PolicySpec, PrevState, TaskLayout};
use std::time::Duration;

/// The settings measured, vanilla then coloured per policy (the ratio line pairs them).
pub const SETTINGS: &[&str] = &["dss", "dss:colours=32", "mqs", "mqs:colours=32"];

/// Tasks, window and repetitions.
#[derive(Clone, Debug)]
pub struct WalkScale {
    /// Runnable tasks on the one worker.
    pub tasks: usize,
    /// Timed window per repetition.
    pub window: Duration,
    /// Repetitions per setting (interleaved).
    pub reps: usize,
}

impl WalkScale {
    /// 1,024 tasks, 30 ms windows, 3 repetitions (about 1 s for the section).
    pub fn quick() -> WalkScale {
        WalkScale { tasks: 1024, window: Duration::from_millis(30), reps: 3 }
    }
    /// 1,024 tasks, 150 ms windows, 5 repetitions.
    pub fn full() -> WalkScale {
        WalkScale { tasks: 1024, window: Duration::from_millis(150), reps: 5 }
    }
    /// [`WalkScale::quick`] if `quick`, else [`WalkScale::full`].
    pub fn new(quick: bool) -> WalkScale {
        if quick {
            WalkScale::quick()
        } else {
            WalkScale::full()
        }
    }
}

/// One window: ns (and CPU ns) per task visited.
pub fn measure(spec: &str, n: usize, window: Duration) -> Result<Measure, crate::BenchError> {
    measure_walk(spec, n, window).map_err(crate::BenchError::Run)
}

fn measure_walk(spec: &str, n: usize, window: Duration) -> Result<Measure, String> {
    if n < 2 {
        return Err("the run-queue walk needs at least 2 runnable tasks".into());
    }
    let queued = |rt: &schedlab_rt::Runtime| rt.queue_lens().iter().sum::<usize>();
    crate::yielders::with_yielders(spec, n, |rt| {
        // Warm-up: every task has run once; now a few walks more.
        std::thread::sleep(window / 4);
        let (q0, s0, sw) = (queued(rt), rt.stats().schedule_calls, Stopwatch::start());
        std::thread::sleep(window);
        // On a loaded machine the worker may not have run in a short window.
        while rt.stats().schedule_calls == s0 && sw.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(window);
        }
        let (calls, q1) = (rt.stats().schedule_calls - s0, queued(rt));
        if q0 < n || q1 < n {
            return Err(format!("{spec}: run queue held {q0} and {q1} tasks, not all {n}"));
        }
        if calls == 0 {
            return Err(format!("{spec}: no schedule() call in {window:?}"));
        }
        Ok(sw.per_op(calls * ((q0 + q1) / 2) as u64))
    })
}

/// The row's policy column for `spec`.
fn label(spec: &str, n: usize) -> String {
    format!("{spec}, {n} runnable, 1 worker")
}

/// The [`names::RQ_WALK`] rows: every setting of [`SETTINGS`], `scale.reps`
/// repetitions interleaved (A B C D A B C D …), aggregated. A setting that cannot be
/// measured is a failed row.
pub fn rows(scale: &WalkScale, filter: &Filter, progress: &mut dyn FnMut(&str)) -> Vec<Row> {
    let rt = runtimes::SCHEDLAB;
    if !filter.wants(names::RQ_WALK, rt) {
        return Vec::new();
    }
    progress(&format!(
        "{} on {rt}: {} ({} runnable tasks, 1 worker)",
        names::RQ_WALK,
        SETTINGS.join(", "),
        scale.tasks
    ));
    let mut samples = Vec::new();
    for _ in 0..scale.reps.max(1) {
        for spec in SETTINGS {
            let policy = label(spec, scale.tasks);
            samples.push(match measure(spec, scale.tasks, scale.window) {
                Ok(m) => Row::measured(names::RQ_WALK, rt, &policy, units::NS_VISIT, crate::row::NO_CHANNEL, m),
                Err(e) => {
                    Row::failed(names::RQ_WALK, rt, &policy, units::NS_VISIT, crate::row::NO_CHANNEL, e.to_string())
                }
            });
        }
    }
    aggregate(samples)
}

/// `vanilla ÷ coloured` for every [`names::RQ_WALK`] row of a coloured setting whose
/// vanilla row (the same spec without `colours=`) is present: `(coloured policy, ratio)`.
pub fn colour_ratios(rows: &[Row]) -> Vec<(String, f64)> {
    let walk: Vec<&Row> = rows.iter().filter(|r| r.bench == names::RQ_WALK && r.error.is_none()).collect();
    let spec_of = |r: &Row| r.policy.split(", ").next().unwrap_or("").to_string();
    let rest_of = |r: &Row| r.policy.split_once(", ").map_or(String::new(), |(_, rest)| rest.to_string());
    let mut out = Vec::new();
    for c in &walk {
        let spec = spec_of(c);
        let Some(i) = spec.find(":colours=").or_else(|| spec.find(",colours=")) else { continue };
        let base = &spec[..i];
        if let Some(v) = walk.iter().find(|v| spec_of(v) == base && rest_of(v) == rest_of(c)) {
            out.push((c.policy.clone(), v.value / c.value));
        }
    }
    out
}

/// `walks` cycles of `yield_now(curr)` + `schedule(curr, Runnable)` — what a worker
/// does for a yielding task, without the poll — of policy `spec` with `n` runnable
/// tasks on one CPU, on the runtime's platform with the runtime's task layout (kernel
/// blocks, the spec's colours). Returns the tasks visited (`walks × n`). With
/// `walks = 0` it does everything but the walks: the baseline a cache simulation
/// subtracts.
pub fn policy_walks(spec: &str, n: usize, walks: u64) -> Result<u64, crate::BenchError> {
    walk_policy(spec, n, walks).map_err(crate::BenchError::Run)
}

fn walk_policy(spec: &str, n: usize, walks: u64) -> Result<u64, String> {
    let spec = PolicySpec::parse(spec).map_err(|e| e.0)?;
    if spec.runtime_native() {
        return Err(format!("{}: not a core policy", spec.canonical()));
    }
    let layout = TaskLayout::KernelBlocks { colours: spec.colours() };
    layout.check(n).map_err(|e| e.to_string())?;
    with_full_queue(&spec, layout, n, |p, policy, mut curr| {
        if policy.tasks().layout() != layout {
            return Err(format!("{}: task table laid out as {:?}", spec.canonical(), policy.tasks().layout()));
        }
        for _ in 0..walks {
            policy.yield_now(p, curr);
            curr = policy.schedule(p, Some(curr), PrevState::Runnable).ok_or("no runnable task to pick")?;
        }
        Ok(walks * n as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_pair_each_coloured_row_with_its_vanilla_row() {
        let row =
            |spec: &str, v: f64| Row::new(names::RQ_WALK, runtimes::SCHEDLAB, &label(spec, 1024), v, units::NS_VISIT);
        let rows = [row("dss", 6.0), row("dss:colours=32", 2.0), row("mqs:colours=32", 1.0), row("pmqs:pool=1", 3.0)];
        assert_eq!(colour_ratios(&rows), vec![(label("dss:colours=32", 1024), 3.0)]);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(measure("dss", 1, Duration::from_millis(1)).is_err());
        assert!(measure("nope", 10, Duration::from_millis(1)).is_err());
        assert!(policy_walks("fast", 10, 1).is_err());
        assert!(policy_walks("dss", 200_000, 1).unwrap_err().to_string().contains("200000 tasks"));
    }

    #[test]
    fn policy_walks_visit_every_task_on_each_walk() {
        assert_eq!(policy_walks("dss:colours=32", 64, 5).unwrap(), 320);
    }
}
