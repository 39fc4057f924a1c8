//! A registered socket's readiness and the wakers of the tasks waiting on it.
//!
//! Registration is edge-triggered: the reactor reports a socket when it *becomes*
//! readable or writable, and [`ScheduledIo`] remembers it until an operation finds
//! out otherwise (`WouldBlock`), which clears the direction. A clear names the
//! readiness *tick* it observed, so an edge that arrived after the operation tried
//! (and before the clear) is not wiped out (Tokio's `ScheduledIo` does the same).
//!
//! One waiting task per direction: a second task that waits on the same direction
//! takes the slot, and the task it displaces is woken so that it polls again and
//! takes the slot back (it never sleeps through its readiness).

use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::AcqRel, Ordering::Acquire};
use std::task::{Context, Poll, Waker};

/// Which way an operation goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
}

const READABLE: usize = 1;
const WRITABLE: usize = 2;
/// The low bits hold readiness; the rest is the tick, one per reported event.
const TICK_SHIFT: u32 = 8;
const READY_MASK: usize = (1 << TICK_SHIFT) - 1;

impl Direction {
    fn bit(self) -> usize {
        match self {
            Direction::Read => READABLE,
            Direction::Write => WRITABLE,
        }
    }
}

/// Readiness (with its tick) and the two waker slots of one socket.
#[derive(Debug)]
pub(crate) struct ScheduledIo {
    readiness: AtomicUsize,
    reader: Mutex<Option<Waker>>,
    writer: Mutex<Option<Waker>>,
}

impl Default for ScheduledIo {
    /// A new socket counts as ready both ways: its first operation tries at once (an
    /// accepted connection's request may be there already) and learns otherwise from
    /// `WouldBlock`, without waiting for the reactor's first report.
    fn default() -> ScheduledIo {
        ScheduledIo {
            readiness: AtomicUsize::new(READABLE | WRITABLE),
            reader: Mutex::new(None),
            writer: Mutex::new(None),
        }
    }
}

impl ScheduledIo {
    fn slot(&self, dir: Direction) -> &Mutex<Option<Waker>> {
        match dir {
            Direction::Read => &self.reader,
            Direction::Write => &self.writer,
        }
    }

    /// The reactor saw `ev` for this socket: mark what it says and collect the wakers
    /// of the directions that became ready. A hang-up or an error counts as both
    /// (the next operation returns it).
    pub(crate) fn set_ready(&self, ev: &mio::event::Event, due: &mut Vec<Waker>) {
        let mut bits = 0;
        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
            bits |= READABLE;
        }
        if ev.is_writable() || ev.is_write_closed() || ev.is_error() {
            bits |= WRITABLE;
        }
        if bits == 0 {
            return;
        }
        let mut cur = self.readiness.load(Acquire);
        loop {
            let next = ((cur >> TICK_SHIFT).wrapping_add(1) << TICK_SHIFT) | (cur & READY_MASK) | bits;
            match self.readiness.compare_exchange_weak(cur, next, AcqRel, Acquire) {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
        // After the readiness store: a task that stores its waker later re-reads the
        // readiness under the slot's lock order (see `poll_ready`).
        for dir in [Direction::Read, Direction::Write] {
            if bits & dir.bit() != 0 {
                if let Some(w) = self.slot(dir).lock().take() {
                    due.push(w);
                }
            }
        }
    }

    /// Ready for `dir`: the tick to clear with; or register `cx`'s waker and pend.
    pub(crate) fn poll_ready(&self, cx: &mut Context<'_>, dir: Direction) -> Poll<usize> {
        let cur = self.readiness.load(Acquire);
        if cur & dir.bit() != 0 {
            return Poll::Ready(cur >> TICK_SHIFT);
        }
        let displaced = {
            let mut slot = self.slot(dir).lock();
            match &*slot {
                Some(w) if w.will_wake(cx.waker()) => None,
                _ => slot.replace(cx.waker().clone()),
            }
        };
        if let Some(w) = displaced {
            w.wake();
        }
        // The reactor stores readiness before it locks the slot: either it found this
        // waker there, or its store is visible now.
        let cur = self.readiness.load(Acquire);
        if cur & dir.bit() != 0 {
            return Poll::Ready(cur >> TICK_SHIFT);
        }
        Poll::Pending
    }

    /// An operation in `dir` found the socket not ready (`WouldBlock`) after readiness
    /// with `tick`: clear the direction unless a newer event came meanwhile.
    pub(crate) fn clear(&self, dir: Direction, tick: usize) {
        let mut cur = self.readiness.load(Acquire);
        while cur >> TICK_SHIFT == tick && cur & dir.bit() != 0 {
            match self.readiness.compare_exchange_weak(cur, cur & !dir.bit(), AcqRel, Acquire) {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
    }
}
