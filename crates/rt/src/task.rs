//! Tasks: the state machine, the single allocation that holds a future, and wakers.
//!
//! A task is one `Arc<Cell<F>>` allocation: header (state, scheduler handle, policy
//! id, nice), the future, and the join slot. Run queues hold it as [`Task`]
//! (`Arc<dyn RawTask>`); wakers hold a thin pointer to the same `Arc` with a
//! per-future-type `RawWakerVTable`, so waking needs no allocation and polling needs
//! no reference-count traffic (the poll-time waker borrows the queue's reference).
//!
//! ## State machine ([`TaskState`])
//!
//! ```text
//!            wake                 picked                poll → Pending
//!   IDLE ───────────▶ SCHEDULED ─────────▶ RUNNING ─────────────────────▶ IDLE
//!    ▲                    ▲                 │   │ wake                    (not notified)
//!    │                    │                 │   ▼
//!    │                    └──────────── NOTIFIED   poll → Pending: back to SCHEDULED,
//!    │                                               the worker re-queues it itself
//!    └─ poll → Ready / cancel ─▶ COMPLETE (terminal; wakes are no-ops)
//! ```
//!
//! Only `IDLE → SCHEDULED` hands the task to the scheduler, so a task is on at most one
//! queue and a wake during a poll re-schedules it exactly once (by the worker, after
//! the poll). Only the worker that won `SCHEDULED → RUNNING` leaves `RUNNING`/`NOTIFIED`.

use crate::join::{JoinError, JoinSlot};
use crate::sync::AtomicU8;
use std::cell::UnsafeCell;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::sync::Arc;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

pub const IDLE: u8 = 0;
pub const SCHEDULED: u8 = 1;
pub const RUNNING: u8 = 2;
pub const NOTIFIED: u8 = 3;
pub const COMPLETE: u8 = 4;

/// What a wake must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeAction {
    /// The task was idle: the waker must hand it to the scheduler.
    Schedule,
    /// Already queued, running (now marked notified) or complete: nothing to do.
    Nothing,
}

/// The task state word (see the module documentation).
#[derive(Debug)]
pub struct TaskState(AtomicU8);

impl Default for TaskState {
    fn default() -> Self {
        Self::new(SCHEDULED)
    }
}

impl TaskState {
    pub fn new(s: u8) -> TaskState {
        TaskState(AtomicU8::new(s))
    }
    pub fn load(&self) -> u8 {
        self.0.load(Acquire)
    }
    /// A waker fired.
    pub fn wake(&self) -> WakeAction {
        let mut cur = self.0.load(Acquire);
        loop {
            // SCHEDULED/NOTIFIED are "rewritten" too: the wake must be an RMW on the
            // state so that a worker's later `start_poll` (also an RMW) acquires what
            // the waker published before waking. A plain load that returns early can
            // miss that ordering and lose the wake-up (found by loom:
            // `task_wake_during_poll_reschedules_once`).
            let next = match cur {
                IDLE => SCHEDULED,
                RUNNING => NOTIFIED,
                SCHEDULED | NOTIFIED => cur,
                _ => return WakeAction::Nothing,
            };
            match self.0.compare_exchange_weak(cur, next, AcqRel, Acquire) {
                Ok(_) => return if cur == IDLE { WakeAction::Schedule } else { WakeAction::Nothing },
                Err(c) => cur = c,
            }
        }
    }
    /// A worker picked the task from a queue. False if it was cancelled meanwhile.
    pub fn start_poll(&self) -> bool {
        self.0.compare_exchange(SCHEDULED, RUNNING, AcqRel, Acquire).is_ok()
    }
    /// Was the task woken during the current poll? (Only meaningful while RUNNING.)
    pub fn is_notified(&self) -> bool {
        self.0.load(Acquire) == NOTIFIED
    }
    /// The poll returned `Pending`: `RUNNING → IDLE` and `false`, or, if a wake came in
    /// during the poll, `NOTIFIED → SCHEDULED` and `true`: the caller re-queues it.
    pub fn finish_pending(&self) -> bool {
        match self.0.compare_exchange(RUNNING, IDLE, AcqRel, Acquire) {
            Ok(_) => false,
            Err(s) => {
                debug_assert_eq!(s, NOTIFIED);
                // A swap keeps the release sequence of the wakers' RMWs intact.
                self.0.swap(SCHEDULED, AcqRel);
                true
            }
        }
    }
    /// The worker keeps the task runnable: `RUNNING|NOTIFIED → SCHEDULED`.
    pub fn requeue(&self) {
        self.0.swap(SCHEDULED, AcqRel);
    }
    pub fn complete(&self) {
        self.0.store(COMPLETE, Release);
    }
    /// Cancel a task that is not running: `IDLE|SCHEDULED → COMPLETE`. True if this
    /// call did it (the caller then drops the future).
    pub fn cancel(&self) -> bool {
        let mut cur = self.0.load(Acquire);
        loop {
            if cur != IDLE && cur != SCHEDULED {
                return false;
            }
            match self.0.compare_exchange_weak(cur, COMPLETE, AcqRel, Acquire) {
                Ok(_) => return true,
                Err(c) => cur = c,
            }
        }
    }
}

/// The part of a task every scheduler sees.
pub(crate) struct Header {
    pub state: TaskState,
    /// Policy scheduler: the task's `TaskId` (set at admission).
    pub id: AtomicU32,
    pub nice: i8,
    pub sched: Arc<crate::Shared>,
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

pub(crate) struct Cell<F: Future> {
    header: Header,
    future: UnsafeCell<Option<F>>,
    pub(crate) join: parking_lot::Mutex<JoinSlot<F::Output>>,
}

// The future is only touched by the worker that owns the RUNNING state (or by
// `cancel`, which wins the state first), so the cell may be shared.
unsafe impl<F: Future + Send> Send for Cell<F> where F::Output: Send {}
unsafe impl<F: Future + Send> Sync for Cell<F> where F::Output: Send {}

impl<F> Cell<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    pub(crate) fn new(f: F, nice: i8, sched: Arc<crate::Shared>) -> Arc<Cell<F>> {
        Arc::new(Cell {
            header: Header { state: TaskState::default(), id: AtomicU32::new(u32::MAX), nice, sched },
            future: UnsafeCell::new(Some(f)),
            join: parking_lot::Mutex::new(JoinSlot::default()),
        })
    }

    const VTABLE: RawWakerVTable =
        RawWakerVTable::new(Self::waker_clone, Self::waker_wake, Self::waker_wake_by_ref, Self::waker_drop);

    unsafe fn waker_clone(p: *const ()) -> RawWaker {
        Arc::increment_strong_count(p as *const Self);
        RawWaker::new(p, &Self::VTABLE)
    }
    unsafe fn waker_wake(p: *const ()) {
        let me = Arc::from_raw(p as *const Self);
        if me.header.state.wake() == WakeAction::Schedule {
            let sched = me.header.sched.clone();
            sched.schedule(me);
        }
    }
    unsafe fn waker_wake_by_ref(p: *const ()) {
        let me = ManuallyDrop::new(Arc::from_raw(p as *const Self));
        if me.header.state.wake() == WakeAction::Schedule {
            let t: Arc<Self> = Arc::clone(&me);
            t.header.sched.clone().schedule(t);
        }
    }
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

impl<F> RawTask for Cell<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
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
