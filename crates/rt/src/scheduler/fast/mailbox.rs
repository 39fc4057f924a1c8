//! A worker's mailbox: one slot for a task pinned to that worker and woken on another.
//!
//! A cross-worker hand-off through a queue (`crossbeam_deque::Injector`) moves the
//! queue's tail line to the producer, its slot line and head line to the consumer,
//! and pays a fence for each look that finds the queue empty. The mailbox is one
//! cache line holding a state byte and the task: the producer claims it with one
//! compare-and-swap, writes the task and publishes it with a release store; the
//! owning worker, spinning, loads the state byte, takes the task and stores EMPTY.
//! The line moves once each way per hand-off.
//!
//! The slot holds at most one task. A producer that finds it taken (or finds tasks
//! already waiting in the worker's home queue) uses the home queue instead, so a task
//! in the mailbox, which the owner takes first, does not pass tasks that were waiting
//! in the queue when it was offered (two producers racing can still swap their two
//! tasks). Any thread may offer; one thread at a time takes (the owner while it runs,
//! shutdown after the workers stopped).
//! Model-checked with loom (`tests/loom_park.rs`: `mailbox_*`).

use crate::sync::{AtomicU8, UnsafeCell};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

const EMPTY: u8 = 0;
/// A producer owns the slot and is writing it.
const WRITING: u8 = 1;
const FULL: u8 = 2;

/// One slot, handed from any producer to one consumer at a time.
#[derive(Debug)]
pub struct Mailbox<T> {
    state: AtomicU8,
    slot: UnsafeCell<Option<T>>,
}

// SAFETY: the slot is only touched by the producer that moved the state to WRITING (a
// compare-and-swap) or by the single taker that saw FULL, and the release/acquire
// pairs on the state order one owner's accesses before the next owner's.
unsafe impl<T: Send> Sync for Mailbox<T> {}
unsafe impl<T: Send> Send for Mailbox<T> {}

impl<T> Default for Mailbox<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Mailbox<T> {
    pub fn new() -> Mailbox<T> {
        Mailbox { state: AtomicU8::new(EMPTY), slot: UnsafeCell::new(None) }
    }

    /// Put `v` in the slot if it is empty; give it back otherwise.
    #[inline]
    pub fn offer(&self, v: T) -> Result<(), T> {
        // The compare-and-swap alone, no load before it: the line is the consumer's,
        // and a load then a CAS would move it twice.
        if self.state.compare_exchange(EMPTY, WRITING, Acquire, Relaxed).is_err() {
            return Err(v);
        }
        // SAFETY: WRITING makes this thread the slot's only user; the acquire above
        // orders this write after the last consumer's read.
        self.slot.with_mut(|p| unsafe { *p = Some(v) });
        self.state.store(FULL, Release);
        Ok(())
    }

    /// Whether a task waits in the slot (a plain load: a hint, for spinning looks).
    #[inline]
    pub fn is_full(&self) -> bool {
        self.state.load(Relaxed) == FULL
    }

    /// Take the waiting task, if any.
    ///
    /// # Safety
    /// Only one thread may take at a time (the owning worker while it runs; shutdown
    /// after the workers have stopped). Producers never leave FULL, so the taker owns
    /// the slot from its acquire load of FULL to its release store of EMPTY: a load
    /// and a store that waits in the store buffer, where a compare-and-swap would
    /// stall on the line.
    #[inline]
    pub unsafe fn take(&self) -> Option<T> {
        if self.state.load(Acquire) != FULL {
            return None;
        }
        // SAFETY: FULL and a single taker make this thread the slot's only user; the
        // acquire load orders this read after the producer's write.
        let v = self.slot.with_mut(|p| unsafe { (*p).take() });
        self.state.store(EMPTY, Release);
        v
    }
}
