//! Spawning from inside a runtime, and the per-task options.

use crate::scheduler::Handle;
use crate::JoinHandle;
use std::future::Future;

/// Per-task options for [`Runtime::spawn_with`](crate::Runtime::spawn_with).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskOpts {
    /// −20 (most favoured) ..= 19. Used by the policy schedulers (goodness, quantum);
    /// the fast scheduler ignores it.
    pub nice: i8,
    /// Placement hint: initial run queue / processor.
    pub worker: Option<usize>,
    /// Pin the task to `worker` (ignored without one): under `fast` every wake of the
    /// task goes to that worker (its inbox, or its LIFO slot if the waker runs there)
    /// and a thief that takes it hands it back; under a policy scheduler its
    /// `cpus_allowed` is that worker's CPU.
    pub pinned: bool,
    /// 1..=99: a real-time task (SCHED_FIFO at this priority) for the policy
    /// schedulers, ahead of every time-shared task; 0 (default): time-shared. The fast
    /// scheduler ignores it.
    pub rt_priority: u8,
    /// The address space (2.4's `mm`: tasks of one process share it, 0 is a kernel
    /// thread) for the policy schedulers, whose `goodness` favours a task of the `mm`
    /// the CPU has loaded. `None` (default): the policies' default, 1 (one process).
    /// The fast scheduler ignores it.
    pub mm: Option<u32>,
}

/// Spawn onto the runtime this code runs in (a task, or `block_on`). Panics outside a
/// runtime.
pub fn spawn<F>(f: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Handle::current().expect("schedlab_rt::spawn called outside a runtime").spawn(TaskOpts::default(), f)
}

/// [`spawn`] with per-task options (nice, placement, real-time priority). Panics
/// outside a runtime.
pub fn spawn_with<F>(opts: TaskOpts, f: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Handle::current().expect("schedlab_rt::spawn_with called outside a runtime").spawn(opts, f)
}
