//! Lending the run queue's task reference to the poll's first waker clone.
//!
//! A task that blocks on a channel clones its waker during the poll (one
//! reference-count increment) and, when the poll returns `Pending`, the worker drops
//! the queue's reference (one decrement): two locked read-modify-writes per blocking
//! poll that cancel out. Tokio folds the decrement into its `transition_to_idle`; here
//! the reference count is the `Arc`'s, so instead the worker *lends* its reference:
//! it marks the task in a thread-local before the poll, and the first clone of any
//! waker of that task made on this thread during the poll takes the worker's reference
//! instead of counting a new one. After the poll the worker asks whether the loan was
//! taken; if so, it must not drop its `Task` (it `forget`s it) — it only borrows the
//! task from then on, which stays alive because the scheduler's registry of live tasks
//! holds a reference until the task is unregistered after its last poll.
//!
//! Counts stay exact: exactly one clone takes the loan (the thread-local is cleared by
//! it), clones on other threads see their own thread-local and count as usual, and
//! the worker gives up its reference if and only if the loan was taken.

use std::cell::Cell;

thread_local! {
    /// The task (cell address) whose worker reference is on loan, or null.
    static LENT: Cell<*const ()> = const { Cell::new(std::ptr::null()) };
}

/// Offer the calling thread's reference to `task` (a cell address) to the next waker
/// clone of that task on this thread. The caller must own a reference it will give up
/// if [`end`] says the loan was taken, and must keep the task alive by other means
/// (the registry of live tasks) while it still uses it.
#[inline]
pub(crate) fn begin(task: *const ()) {
    LENT.with(|l| l.set(task))
}

/// End the loan: true if a waker clone took the reference.
#[inline]
pub(crate) fn end() -> bool {
    LENT.with(|l| l.replace(std::ptr::null())).is_null()
}

/// A waker of `task` is being cloned: true if it takes the lent reference (then it
/// must not count a new one).
#[inline]
pub(crate) fn take(task: *const ()) -> bool {
    LENT.with(|l| {
        if l.get() == task {
            l.set(std::ptr::null());
            true
        } else {
            false
        }
    })
}
