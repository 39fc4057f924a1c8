//! Tasks: what every scheduler sees of a task, and the one thing a task needs from a
//! scheduler (`Schedule`).
//!
//! A task is one `Arc<Cell<F, S>>` allocation (`cell.rs`): header (state, policy id,
//! nice), the handle of the scheduler it belongs to, the future, and the join slot.
//! Run queues hold it type-erased as `Task` (`Arc<dyn RawTask>`); wakers hold a thin
//! pointer to the same `Arc` with a per-`(F, S)` `RawWakerVTable`, so waking needs no
//! allocation and polling needs no reference-count traffic (the poll-time waker borrows
//! the queue's reference).
//!
//! Nothing here knows a runtime or a run queue: a waker hands its task to `S`, which is
//! how the task module stays independent of the schedulers (as in Tokio's
//! `task::Schedule`).
//!
//! * `state.rs`: the state machine ([`TaskState`]), model-checked with loom;
//! * `cell.rs`: the allocation, polling with panic capture, cancellation, the wakers;
//! * `join.rs`: [`JoinHandle`] and [`JoinError`];
//! * `lend.rs`: a worker lends its queue reference to the first waker clone of a poll.

mod cell;
mod join;
pub(crate) mod lend;
mod state;

pub(crate) use cell::Cell;
pub use join::{JoinError, JoinHandle};
pub use state::{TaskState, WakeAction, COMPLETE, HANDED, IDLE, NOTIFIED, RUNNING, SCHEDULED, WATCHED};

use std::sync::atomic::AtomicU32;
use std::sync::Arc;

/// The scheduler side of a task: where a waker sends the task it woke.
///
/// `Clone` because a waker that cannot prove the scheduler outlives the hand-over
/// clones it first: the task it hands over may hold the last reference to the cell the
/// scheduler lives in.
pub(crate) trait Schedule: Clone + Send + Sync + 'static {
    /// A waker moved `task` from `IDLE` to `SCHEDULED`: put it on a run queue (or, if
    /// the scheduler is shutting down, cancel it).
    fn schedule(&self, task: Task);

    /// [`Schedule::schedule`] for a waker: `this` is the scheduler stored in `task`'s
    /// own cell. The default clones it first; an implementation that can reach the
    /// same scheduler through something that outlives the call (a worker's context)
    /// skips that clone, two reference-count RMWs per wake.
    ///
    /// # Safety
    /// `this` must point into `task`'s allocation. The implementation must not read
    /// through `this` after `task` has been handed over (it may be freed by then).
    unsafe fn schedule_woken(this: *const Self, task: Task) {
        // SAFETY: `task` keeps the allocation alive until it is handed over below.
        let s = unsafe { (*this).clone() };
        s.schedule(task)
    }

    /// A waker moved a watched task (`id`) from `WATCHED` to `SCHEDULED` (or `HANDED`,
    /// if `handed`: the waker's reference now belongs to the watching worker). The
    /// worker holding it will run it, and it is awake: a worker gives up its watched
    /// task before it sleeps. What is left is the wake of a task watched by the
    /// calling thread's own worker, which must run it from there.
    ///
    /// `id` is only compared, never read through: after a hand-over the task may
    /// already be gone. The scheduler is reached through the calling thread's context.
    fn watched_woken(id: *const (), handed: bool);
}

/// The part of a task every scheduler sees.
pub(crate) struct Header {
    pub state: TaskState,
    /// Scheduler-specific key: the policy scheduler's `TaskId` (set at admission), the
    /// fast scheduler's registry slot.
    pub id: AtomicU32,
    pub nice: i8,
    /// Real-time priority (1..=99) or 0 for a time-shared task ([`crate::TaskOpts`]).
    pub rt_priority: u8,
    /// Address space for the policy schedulers ([`crate::TaskOpts::mm`]).
    pub mm: Option<u32>,
    /// The worker a pinned task always runs on ([`NO_HOME`] if unpinned).
    pub home: u32,
}

/// [`Header::home`] of a task that may run on any worker.
pub(crate) const NO_HOME: u32 = u32::MAX;

impl Header {
    /// The worker this task is pinned to, if any.
    #[inline]
    pub(crate) fn home(&self) -> Option<usize> {
        (self.home != NO_HOME).then_some(self.home as usize)
    }
}

/// Outcome of one poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Polled {
    Ready,
    Pending,
}

/// Type-erased task, as held by run queues.
pub(crate) trait RawTask: Send + Sync {
    fn header(&self) -> &Header;
    /// Poll once. The caller must have won [`TaskState::start_poll`]; panics are caught
    /// and reported through the join handle.
    fn poll(&self) -> Polled;
    /// Drop the future of a task that is not running and report "cancelled".
    fn cancel(&self);
}

pub(crate) type Task = Arc<dyn RawTask>;
