//! The policy contract, on one screen: what a scheduling policy implements.
//!
//! A policy asks its platform ([`Platform`]) for everything else: locks
//! ([`Platform::new_lock`]), the CPU it runs on ([`Platform::this_cpu`]), the time
//! ([`Platform::now`]), and a reschedule of a CPU ([`Platform::resched`]: `need_resched`
//! plus an IPI); it reports its work ([`Platform::charge`]) and every access to shared
//! scheduler data ([`Platform::touch`]) so that the simulator can price them.
//! How a policy is named, configured and constructed is the registry's business
//! ([`crate::policies`]).

use crate::platform::Platform;
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
///
/// `Send + Sync`: the runtime calls a policy from every worker at once. A policy keeps
/// its mutable state in atomics and platform locks (which are `Send + Sync`), so this
/// holds without any `unsafe`.
pub trait Policy<P: Platform>: Send + Sync {
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
    /// `sched_yield()` by `curr`. To give way, the policy asks for a reschedule of
    /// this CPU ([`Platform::resched`]`(p.this_cpu())`, 2.4's `need_resched = 1`); the
    /// engine then calls [`Policy::schedule`] with [`PrevState::Runnable`] at the next
    /// operation boundary. Without the request, the task simply goes on running.
    fn yield_now(&self, p: &P, curr: TaskId);
    /// Periodic or idle balancing hook (PMQS balancers, O(1) `load_balance`).
    fn balance(&self, _p: &P) {}

    /// Observation (free, uncharged): number of run queues and their lengths
    /// (tasks linked on the queue, including a running task the policy keeps linked).
    fn nr_queues(&self) -> usize;
    fn queue_len(&self, q: usize) -> usize;
    /// Observation (free, uncharged): the policy's own counters, like the kernel's
    /// schedstats (`name`, value), in a fixed order. Engines report them as they are.
    fn stats(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// Observation (free, uncharged): the policy's own figures for task `t` (`name`,
    /// value), in a fixed order, also after `t` exited. Engines summarise them per role
    /// at the end of a run.
    fn task_stats(&self, _t: TaskId) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// Check the policy's structural invariants (each live task on at most one queue,
    /// list lengths consistent, ...). For tests and `--check` runs; may be slow.
    fn check_invariants(&self) -> Result<(), InvariantViolation>;
}

/// A broken structural invariant of a policy ([`Policy::check_invariants`]): what is
/// wrong, naming the queue and task. Always a bug in the policy or the engine.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvariantViolation(pub String);

impl From<String> for InvariantViolation {
    fn from(m: String) -> InvariantViolation {
        InvariantViolation(m)
    }
}
