//! The thread-local runtime context: which runtime and worker this thread is, where
//! its scheduler keeps its worker state, and whether the running task asked to yield.

use crate::scheduler::{Handle, WorkerLocal};
use std::cell::Cell;

#[derive(Clone, Copy)]
pub(crate) struct Ctx {
    /// The runtime this thread runs for.
    pub handle: *const Handle,
    /// Worker index, or [`NO_WORKER`] on a `block_on` thread.
    pub worker: usize,
    /// The worker's scheduler-specific state (interpreted by that scheduler).
    pub local: WorkerLocal,
}

impl Ctx {
    /// A thread that runs for `handle`'s runtime without being one of its workers: a
    /// `block_on` caller. Wakes from it go through the runtime's global queues.
    pub fn not_a_worker(handle: *const Handle) -> Ctx {
        Ctx { handle, worker: NO_WORKER, local: WorkerLocal::None }
    }
}

pub(crate) const NO_WORKER: usize = usize::MAX;

thread_local! {
    static CTX: Cell<Option<Ctx>> = const { Cell::new(None) };
    static YIELDED: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn get() -> Option<Ctx> {
    CTX.with(|c| c.get())
}

/// Install `ctx` for the duration of `f`.
pub(crate) fn enter<R>(ctx: Ctx, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<Ctx>);
    impl Drop for Reset {
        fn drop(&mut self) {
            CTX.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(CTX.with(|c| c.replace(Some(ctx))));
    f()
}

/// The worker this thread is, if it is a runtime worker.
pub fn current_worker() -> Option<usize> {
    get().map(|c| c.worker).filter(|&w| w != NO_WORKER)
}

/// `yield_now` sets it during a poll; the worker reads and clears it after the poll
/// to tell a yield from a self-wake.
pub(crate) fn set_yielded(v: bool) {
    YIELDED.with(|y| y.set(v))
}
pub(crate) fn take_yielded() -> bool {
    YIELDED.with(|y| y.replace(false))
}
