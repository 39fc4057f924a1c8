//! The task cell: one allocation holding a task's header, its scheduler handle, its
//! future and its join slot; polling with panic capture, cancellation, and the wakers.

use super::join::{JoinError, JoinSlot, JoinTarget};
use super::{Header, Polled, RawTask, Schedule, TaskState, WakeAction};
use crate::TaskOpts;
use std::cell::UnsafeCell;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::AtomicU32;
use std::sync::Arc;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

/// `repr(C)`, header first: the state word sits beside the reference counts and the
/// start of the future. Not aligned to cache lines: every cell would round up to whole
/// lines, which costs about 7 % on the `pick-next` row with 100,000 tasks and gains
/// nothing measurable on the cross-worker hand-off.
#[repr(C)]
pub(crate) struct Cell<F: Future, S> {
    header: Header,
    /// Where a waker sends this task. Here rather than in the type-erased [`Header`]:
    /// the run queues never need it, only the wakers, which know `S`.
    scheduler: S,
    future: UnsafeCell<Option<F>>,
    join: parking_lot::Mutex<JoinSlot<F::Output>>,
}

// The future is only touched by the worker that owns the RUNNING state (or by
// `cancel`, which wins the state first), so the cell may be shared.
unsafe impl<F: Future + Send, S: Send> Send for Cell<F, S> where F::Output: Send {}
unsafe impl<F: Future + Send, S: Sync> Sync for Cell<F, S> where F::Output: Send {}

impl<F, S> Cell<F, S>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    pub(crate) fn new(f: F, opts: &TaskOpts, home: Option<usize>, scheduler: S) -> Arc<Cell<F, S>> {
        Arc::new(Cell {
            header: Header {
                state: TaskState::default(),
                id: AtomicU32::new(u32::MAX),
                nice: opts.nice,
                rt_priority: opts.rt_priority.min(99),
                mm: opts.mm,
                home: home.map_or(super::NO_HOME, |w| w as u32),
            },
            scheduler,
            future: UnsafeCell::new(Some(f)),
            join: parking_lot::Mutex::new(JoinSlot::default()),
        })
    }

    const VTABLE: RawWakerVTable =
        RawWakerVTable::new(Self::waker_clone, Self::waker_wake, Self::waker_wake_by_ref, Self::waker_drop);

    // The four vtable functions share one contract, the `RawWaker` one: `p` is a pointer
    // obtained from `Arc::<Self>::into_raw` that owns one strong count (clone and
    // wake-by-ref borrow it; wake and drop consume it).

    /// # Safety
    /// `p` comes from `Arc::<Self>::into_raw` and its count is still held by the waker.
    unsafe fn waker_clone(p: *const ()) -> RawWaker {
        // The first clone during a lending poll takes the worker's reference instead
        // of counting a new one (see `super::lend`).
        if !super::lend::take(p) {
            Arc::increment_strong_count(p as *const Self);
        }
        RawWaker::new(p, &Self::VTABLE)
    }
    /// # Safety
    /// `p` comes from `Arc::<Self>::into_raw`; the call consumes the waker's count.
    unsafe fn waker_wake(p: *const ()) {
        let me = Arc::from_raw(p as *const Self);
        // A watched task gets this waker's reference with it.
        match me.header.state.wake_handing() {
            WakeAction::Schedule => {
                let scheduler: *const S = &me.scheduler;
                // SAFETY: `scheduler` lives in the allocation `me` keeps alive.
                S::schedule_woken(scheduler, me)
            }
            WakeAction::Handed => {
                let id = Arc::as_ptr(&me) as *const ();
                // The reference is the watching worker's now, and so may be the task.
                std::mem::forget(me);
                S::watched_woken(id, true)
            }
            WakeAction::Watched => S::watched_woken(Arc::as_ptr(&me) as *const (), false),
            WakeAction::Nothing => {}
        }
    }
    /// # Safety
    /// `p` comes from `Arc::<Self>::into_raw` and the waker keeps its count.
    unsafe fn waker_wake_by_ref(p: *const ()) {
        let me = ManuallyDrop::new(Arc::from_raw(p as *const Self));
        match me.header.state.wake() {
            WakeAction::Schedule => {
                let t: Arc<Self> = Arc::clone(&me);
                // SAFETY: the waker's own reference keeps the allocation alive.
                S::schedule_woken(&me.scheduler, t);
            }
            WakeAction::Watched => S::watched_woken(p, false),
            WakeAction::Handed | WakeAction::Nothing => {}
        }
    }
    /// # Safety
    /// `p` comes from `Arc::<Self>::into_raw`; the call releases the waker's count.
    unsafe fn waker_drop(p: *const ()) {
        drop(Arc::from_raw(p as *const Self));
    }

    fn finish(&self, out: Result<F::Output, JoinError>) {
        let waker = {
            let mut j = self.join.lock();
            j.output = Some(out);
            j.done = true;
            j.waker.take()
        };
        self.header.state.complete();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<F, S> RawTask for Cell<F, S>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    fn header(&self) -> &Header {
        &self.header
    }

    fn poll(&self) -> Polled {
        // A waker that borrows the caller's reference: no count traffic unless cloned.
        let raw = RawWaker::new(self as *const Self as *const (), &Self::VTABLE);
        let waker = ManuallyDrop::new(unsafe { Waker::from_raw(raw) });
        let mut cx = Context::from_waker(&waker);
        // SAFETY: we own the RUNNING state, so no one else touches the future.
        let slot = unsafe { &mut *self.future.get() };
        let Some(fut) = slot.as_mut() else { return Polled::Ready };
        let res = catch_unwind(AssertUnwindSafe(|| unsafe { Pin::new_unchecked(fut) }.poll(&mut cx)));
        match res {
            Ok(Poll::Pending) => Polled::Pending,
            Ok(Poll::Ready(v)) => {
                let _ = catch_unwind(AssertUnwindSafe(|| *slot = None));
                self.finish(Ok(v));
                Polled::Ready
            }
            Err(payload) => {
                let _ = catch_unwind(AssertUnwindSafe(|| *slot = None));
                self.finish(Err(JoinError::panic(payload)));
                Polled::Ready
            }
        }
    }

    fn cancel(&self) {
        if self.header.state.cancel() {
            // SAFETY: the state is COMPLETE and was not RUNNING: nobody polls it again.
            let slot = unsafe { &mut *self.future.get() };
            let _ = catch_unwind(AssertUnwindSafe(|| *slot = None));
            let waker = {
                let mut j = self.join.lock();
                j.output = Some(Err(JoinError::cancelled()));
                j.done = true;
                j.waker.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        }
    }
}

impl<F, S> JoinTarget<F::Output> for Cell<F, S>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    fn poll_join(&self, cx: &mut Context<'_>) -> Poll<Result<F::Output, JoinError>> {
        let mut j = self.join.lock();
        if j.done {
            return Poll::Ready(j.output.take().expect("JoinHandle polled after completion"));
        }
        match &mut j.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            w => *w = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
    fn is_done(&self) -> bool {
        self.join.lock().done
    }
}
