//! A policy worker's reschedule signal: 2.4's `need_resched` flag and the IPI that
//! carries it to another CPU (here: an unpark of the worker's thread).
//!
//! The protocol, loom-checked (`tests/loom_park.rs`):
//! * A request from another thread sets the flag and wakes the worker **only if the
//!   flag was clear**, as 2.4's `reschedule_idle` does (`need_resched =
//!   tsk->need_resched; tsk->need_resched = 1; if (!need_resched)
//!   smp_send_reschedule(cpu)`): a worker whose flag is still set has a wake-up on its
//!   way already, and will see the new work when it acts on the flag (it clears the
//!   flag before it takes the run-queue lock that the requester held).
//! * The worker clears the flag before it calls `schedule()`, and sleeps only after a
//!   `SeqCst` look at the flag finds it clear; the requester's swap is `SeqCst` too, so
//!   either the worker sees the flag or the requester sees it clear and unparks.

use crate::park::Parker;
use crate::sync::AtomicBool;
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};

/// One worker's `need_resched` and parking spot.
#[derive(Debug, Default)]
pub struct Resched {
    flag: AtomicBool,
    parker: Parker,
}

impl Resched {
    pub fn new() -> Resched {
        Resched { flag: AtomicBool::new(false), parker: Parker::new() }
    }

    /// Ask the worker, from another thread, to call `schedule()`. Returns whether a
    /// wake-up (the IPI) was sent: not when the flag was already set.
    #[inline]
    pub fn request(&self) -> bool {
        if self.flag.swap(true, SeqCst) {
            return false;
        }
        self.parker.unpark();
        true
    }

    /// The worker asks itself (a tick ended the slice, a policy call on its own CPU):
    /// only its own thread reads the flag before acting on it, so no locked store.
    #[inline]
    pub fn request_own(&self) {
        self.flag.store(true, Relaxed);
    }

    /// Whether a reschedule is pending (the worker's own look, between polls).
    #[inline]
    pub fn is_set(&self) -> bool {
        self.flag.load(Relaxed)
    }

    /// Whether a reschedule is pending, acquiring what the requester published (the
    /// idle worker's spin).
    #[inline]
    pub fn is_set_acquire(&self) -> bool {
        self.flag.load(Acquire)
    }

    /// The worker is about to call `schedule()`: the request is taken. Only a set flag
    /// is stored (a locked store per pass saved); a request that lands after the load
    /// stays set for the next pass.
    #[inline]
    pub fn clear(&self) {
        if self.flag.load(Relaxed) {
            self.flag.store(false, SeqCst);
        }
    }

    /// Sleep until a request (or `wake`), at most `timeout` (`None`: no limit), unless
    /// one is pending. Returns whether the worker slept.
    pub fn sleep_unless_requested(&self, timeout: Option<std::time::Duration>) -> bool {
        if self.flag.load(SeqCst) {
            return false;
        }
        self.parker.park_driving(timeout, &mut || {});
        true
    }

    /// Wake the worker without a request (shutdown).
    pub fn wake(&self) {
        self.parker.unpark();
    }
}
