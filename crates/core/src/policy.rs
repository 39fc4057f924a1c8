//! The policy interface (one screen) and the policy registry.

use crate::cpu::Topology;
use crate::platform::Platform;
pub use crate::spec::{Spec, SpecError};
use crate::task::{TaskId, TaskParams, TaskTable};

/// What happened to the task that was running when `schedule()` is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable: preempted (`need_resched`) or yielding (SCHED_YIELD set).
    Runnable,
    /// Went to sleep (blocking receive, sleep): leaves the run queue.
    Blocked,
    /// Exited: leaves the run queue and the task table.
    Exited,
}

/// A run-queue organisation and its decisions, modelled on Linux's `sched_class` and
/// sched_ext's `sched_ext_ops`. Every method runs "on" `p.this_cpu()`, takes the
/// policy's own locks through the platform, and reports its work through the
/// platform's cost hooks. The engine owns `need_resched`, IPIs and context switches;
/// the policy asks for them with [`Platform::resched`].
pub trait Policy<P: Platform> {
    /// Name as given in specs, e.g. `"dss"`, `"mqs"`.
    fn name(&self) -> &str;
    /// The per-task scheduling state.
    fn tasks(&self) -> &TaskTable;

    /// Fork: set up the new task `id` (not yet runnable). `parent` donates half its
    /// counter, as in 2.4 `do_fork`. The engine then calls [`Policy::wake_up`].
    fn task_new(&self, p: &P, id: TaskId, params: &TaskParams, parent: Option<TaskId>);
    /// `wake_up_process`: make `id` runnable, choose its run queue and, through
    /// `reschedule_idle`, an idle CPU to kick or a running task to preempt.
    /// `sync` is the `_synchronous` variant (enqueue only, no placement).
    fn wake_up(&self, p: &P, id: TaskId, sync: bool);
    /// `schedule()` on this CPU. `prev` was running (None = idle) and is now in
    /// `prev_state`. Returns the task to run next (None = idle).
    fn schedule(&self, p: &P, prev: Option<TaskId>, prev_state: PrevState) -> Option<TaskId>;
    /// Timer tick on this CPU with `curr` running; returns whether `need_resched` is set.
    fn tick(&self, p: &P, curr: Option<TaskId>) -> bool;
    /// `sched_yield()` by `curr`; the engine calls [`Policy::schedule`] next with
    /// [`PrevState::Runnable`].
    fn yield_now(&self, p: &P, curr: TaskId);
    /// Periodic or idle balancing hook (PMQS balancers, O(1) `load_balance`).
    fn balance(&self, _p: &P) {}

    /// Observation (free, uncharged): number of run queues and their lengths
    /// (tasks linked on the queue, including a running task the policy keeps linked).
    fn nr_queues(&self) -> usize;
    fn queue_len(&self, q: usize) -> usize;
    /// Check the policy's structural invariants (each live task on at most one queue,
    /// list lengths consistent, ...). For tests and `--check` runs; may be slow.
    fn check_invariants(&self) -> Result<(), String>;
}

/// A policy selection, parsed from `name[:key=value,...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicySpec {
    /// Linux 2.4 default scheduler: one global list and lock.
    Dss,
    /// IBM multi-queue scheduler (2.5.0 RFC).
    Mqs,
}

/// Policy names `schedlab` knows, for `--help` and error messages.
pub const POLICY_NAMES: &[&str] = &["dss", "mqs"];

impl PolicySpec {
    pub fn parse(s: &str) -> Result<PolicySpec, SpecError> {
        let spec = Spec::parse("policy", s)?;
        let out = match spec.name.as_str() {
            "dss" => PolicySpec::Dss,
            "mqs" => PolicySpec::Mqs,
            other => return Err(SpecError(format!("unknown policy '{other}' (known: {})", POLICY_NAMES.join(", ")))),
        };
        spec.finish(&[])?;
        Ok(out)
    }
    /// Canonical spec string (round-trips through [`PolicySpec::parse`]).
    pub fn canonical(&self) -> String {
        match self {
            PolicySpec::Dss => "dss".into(),
            PolicySpec::Mqs => "mqs".into(),
        }
    }
}

/// Instantiate a policy for a machine. `capacity` bounds task ids; `hz` is the tick rate.
pub fn build_policy<P: Platform + 'static>(
    spec: &PolicySpec,
    p: &P,
    topo: &Topology,
    capacity: usize,
    hz: u32,
) -> Box<dyn Policy<P>> {
    match spec {
        PolicySpec::Dss => Box::new(crate::policies::dss::Dss::new(p, topo, capacity, hz)),
        PolicySpec::Mqs => Box::new(crate::policies::mqs::Mqs::new(p, topo, capacity, hz)),
    }
}
