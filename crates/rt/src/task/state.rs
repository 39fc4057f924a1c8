//! The task state machine ([`TaskState`]): who may hand a task to a scheduler, who
//! may poll it, and what a wake during a poll does.
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
//!
//! `WATCHED` is an idle task whose worker kept it (the fast scheduler's watch slot
//! for a task pinned to it: `scheduler/fast/worker.rs`): `RUNNING → WATCHED` instead
//! of `→ IDLE` at the end of its poll. A wake then moves it `WATCHED → SCHEDULED` and
//! queues nothing ([`WakeAction::Watched`]): the worker that holds it sees the state
//! and runs it. The worker gives it up with `WATCHED → IDLE` (or, if a wake came
//! first, owns a scheduled task). A cross-worker wake so touches the task's line and
//! no queue's.
//!
//! `HANDED` is `SCHEDULED` reached from `WATCHED` by a wake by value
//! ([`TaskState::wake_handing`]): the waker hands its reference to the task over to
//! the watching worker instead of dropping it, so the reference count, which the
//! worker would otherwise raise again to keep watching the task, is not written by
//! both cores at every hand-off. The worker that finds `HANDED` owns one reference
//! more than the one its slot holds.

use crate::sync::AtomicU8;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};

pub const IDLE: u8 = 0;
pub const SCHEDULED: u8 = 1;
pub const RUNNING: u8 = 2;
pub const NOTIFIED: u8 = 3;
pub const COMPLETE: u8 = 4;
pub const WATCHED: u8 = 5;
pub const HANDED: u8 = 6;

/// What a wake must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeAction {
    /// The task was idle: the waker must hand it to the scheduler.
    Schedule,
    /// Already queued, running (now marked notified) or complete: nothing to do.
    Nothing,
    /// The task was watched by its worker (now scheduled there): the waker queues
    /// nothing, and makes sure that worker is not asleep.
    Watched,
    /// As `Watched`, and the waker's reference now belongs to the watching worker
    /// (the waker must neither drop it nor touch the task again).
    Handed,
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
        self.wake_to(SCHEDULED)
    }
    /// A wake by value: if the task is watched, the waker's reference goes over with
    /// it (`WATCHED → HANDED`); otherwise as [`TaskState::wake`].
    pub fn wake_handing(&self) -> WakeAction {
        self.wake_to(HANDED)
    }
    /// A wake that moves a watched task to `watched_to`.
    #[inline]
    fn wake_to(&self, watched_to: u8) -> WakeAction {
        let mut cur = self.0.load(Acquire);
        loop {
            // SCHEDULED/NOTIFIED are "rewritten" too: the wake must be an RMW on the
            // state so that a worker's later `start_poll` (also an RMW) acquires what
            // the waker published before waking. A plain load that returns early can
            // miss that ordering and lose the wake-up (found by loom:
            // `task_wake_during_poll_reschedules_once`).
            let (next, action) = match cur {
                IDLE => (SCHEDULED, WakeAction::Schedule),
                WATCHED if watched_to == HANDED => (HANDED, WakeAction::Handed),
                WATCHED => (SCHEDULED, WakeAction::Watched),
                RUNNING => (NOTIFIED, WakeAction::Nothing),
                SCHEDULED | NOTIFIED | HANDED => (cur, WakeAction::Nothing),
                _ => return WakeAction::Nothing,
            };
            match self.0.compare_exchange_weak(cur, next, AcqRel, Acquire) {
                Ok(_) => return action,
                Err(c) => cur = c,
            }
        }
    }
    /// A worker picked the task from a queue (or its watch slot). False if it was
    /// cancelled meanwhile.
    pub fn start_poll(&self) -> bool {
        match self.0.compare_exchange(SCHEDULED, RUNNING, AcqRel, Acquire) {
            Ok(_) => true,
            Err(HANDED) => self.0.compare_exchange(HANDED, RUNNING, AcqRel, Acquire).is_ok(),
            Err(_) => false,
        }
    }
    /// [`TaskState::start_poll`] of a task the worker found `HANDED` in its watch
    /// slot: one compare-and-swap from the state it saw.
    pub fn start_poll_handed(&self) -> bool {
        self.0.compare_exchange(HANDED, RUNNING, AcqRel, Acquire).is_ok()
    }
    /// Was the task woken during the current poll? (Only meaningful while RUNNING.)
    pub fn is_notified(&self) -> bool {
        self.0.load(Acquire) == NOTIFIED
    }
    /// The poll returned `Pending`: `RUNNING → IDLE` and `false`, or, if a wake came in
    /// during the poll, `NOTIFIED → SCHEDULED` and `true`: the caller re-queues it.
    pub fn finish_pending(&self) -> bool {
        self.finish_pending_to(IDLE)
    }
    /// [`TaskState::finish_pending`] for a task the worker keeps watching:
    /// `RUNNING → WATCHED` and `false`, or `NOTIFIED → SCHEDULED` and `true`.
    pub fn finish_pending_watched(&self) -> bool {
        self.finish_pending_to(WATCHED)
    }
    #[inline]
    fn finish_pending_to(&self, idle: u8) -> bool {
        match self.0.compare_exchange(RUNNING, idle, AcqRel, Acquire) {
            Ok(_) => false,
            Err(s) => {
                debug_assert_eq!(s, NOTIFIED);
                // A swap keeps the release sequence of the wakers' RMWs intact.
                self.0.swap(SCHEDULED, AcqRel);
                true
            }
        }
    }
    /// The watching worker gives the task up: `WATCHED → IDLE` and `None`, or the
    /// state a wake or a cancel left (`SCHEDULED` or `HANDED`: the worker now owns a
    /// runnable task, and with `HANDED` the waker's reference too; `COMPLETE`).
    pub fn unwatch(&self) -> Option<u8> {
        self.0.compare_exchange(WATCHED, IDLE, AcqRel, Acquire).err()
    }
    /// The worker keeps the task runnable: `RUNNING|NOTIFIED → SCHEDULED`.
    pub fn requeue(&self) {
        self.0.swap(SCHEDULED, AcqRel);
    }
    pub fn complete(&self) {
        self.0.store(COMPLETE, Release);
    }
    /// Cancel a task that is not running: `IDLE|WATCHED|SCHEDULED|HANDED → COMPLETE`. True if this
    /// call did it (the caller then drops the future).
    pub fn cancel(&self) -> bool {
        let mut cur = self.0.load(Acquire);
        loop {
            if !matches!(cur, IDLE | WATCHED | SCHEDULED | HANDED) {
                return false;
            }
            match self.0.compare_exchange_weak(cur, COMPLETE, AcqRel, Acquire) {
                Ok(_) => return true,
                Err(c) => cur = c,
            }
        }
    }
}
