//! The thread-local runtime context: which runtime and worker this thread is, the
//! fast scheduler's worker-local queues, the running task, and the yield flag.

use crate::platform::Signals;
use crate::Shared;
use std::cell::Cell;

#[derive(Clone, Copy)]
pub(crate) struct Ctx {
    pub shared: *const Shared,
    /// Worker index, or `usize::MAX` on a `block_on` thread.
    pub worker: usize,
    /// Fast scheduler: this worker's `Local` (null otherwise).
    pub local: *const crate::fast::Local,
    /// Policy scheduler: the runtime's signals (null otherwise).
    pub signals: *const Signals,
}

pub(crate) const NO_WORKER: usize = usize::MAX;

thread_local! {
    static CTX: Cell<Option<Ctx>> = const { Cell::new(None) };
    static YIELDED: Cell<bool> = const { Cell::new(false) };
    static CURRENT_TASK: Cell<u32> = const { Cell::new(u32::MAX) };
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

/// The worker index of this thread if it is a worker of the runtime owning `signals`.
pub(crate) fn worker_of_signals(signals: *const Signals) -> Option<usize> {
    match get() {
        Some(c) if c.signals == signals && c.worker != NO_WORKER => Some(c.worker),
        _ => None,
    }
}

pub(crate) fn set_yielded(v: bool) {
    YIELDED.with(|y| y.set(v))
}
pub(crate) fn take_yielded() -> bool {
    YIELDED.with(|y| y.replace(false))
}
pub(crate) fn set_current_task(id: u32) {
    CURRENT_TASK.with(|c| c.set(id))
}
pub(crate) fn current_task() -> u32 {
    CURRENT_TASK.with(|c| c.get())
}
