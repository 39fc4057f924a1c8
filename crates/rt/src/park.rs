//! Parking a worker thread: the runtime's sleep and its reschedule IPI.
//!
//! [`Parker`] — one per worker, used by both schedulers: a token
//! (`EMPTY/PARKED/NOTIFIED`) plus a mutex and a condition variable. `unpark` before
//! `park` makes `park` return at once, so an unpark can never be lost between a
//! worker's last check and its sleep. Model-checked with loom (`tests/loom_park.rs`).
//!
//! [`Idle`], the fast scheduler's registry of spinning and sleeping workers, lives
//! with that scheduler (`scheduler/fast/idle.rs`); it is re-exported here because the
//! loom tests check it together with the parker.

pub use crate::scheduler::fast::idle::Idle;

use crate::sync::{lock, AtomicUsize, Condvar, Mutex, MutexGuard};
use std::sync::atomic::Ordering::{AcqRel, Acquire};

const EMPTY: usize = 0;
const PARKED: usize = 1;
const NOTIFIED: usize = 2;

/// A parking spot with a wake-up token.
#[derive(Debug)]
pub struct Parker {
    state: AtomicUsize,
    lock: Mutex<()>,
    cvar: Condvar,
}

impl Default for Parker {
    fn default() -> Self {
        Self::new()
    }
}

impl Parker {
    pub fn new() -> Parker {
        Parker { state: AtomicUsize::new(EMPTY), lock: Mutex::new(()), cvar: Condvar::new() }
    }

    /// The common start of a park: consume a pending token (→ `None`: return at
    /// once), or move to PARKED with the lock held (→ the guard to wait on).
    fn enter(&self) -> Option<MutexGuard<'_, ()>> {
        if self.state.compare_exchange(NOTIFIED, EMPTY, AcqRel, Acquire).is_ok() {
            return None;
        }
        let g = lock(&self.lock);
        match self.state.compare_exchange(EMPTY, PARKED, AcqRel, Acquire) {
            Ok(_) => Some(g),
            Err(NOTIFIED) => {
                // A swap, not a store: it must read (and acquire) the *latest* unpark.
                // A plain store can overwrite a second unpark's token without
                // synchronising with it (found by loom: `parker_two_rounds`).
                self.state.swap(EMPTY, AcqRel);
                None
            }
            Err(s) => panic!("park: inconsistent state {s}"),
        }
    }

    /// Sleep until [`Parker::unpark`] (returns at once, consuming the token, if an
    /// unpark came first). May not return spuriously.
    pub fn park(&self) {
        let Some(mut g) = self.enter() else { return };
        loop {
            g = match self.cvar.wait(g) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            if self.state.compare_exchange(NOTIFIED, EMPTY, AcqRel, Acquire).is_ok() {
                return;
            }
        }
    }

    /// Like [`Parker::park`], but gives up after `dur`.
    #[cfg(not(loom))]
    pub fn park_timeout(&self, dur: std::time::Duration) {
        let Some(g) = self.enter() else { return };
        let (_g, _) = match self.cvar.wait_timeout(g, dur) {
            Ok(r) => r,
            Err(p) => p.into_inner(),
        };
        // Timed out or notified: either way leave the token empty.
        self.state.swap(EMPTY, AcqRel);
    }

    /// loom has no clock: a timed park is modelled as an immediate timeout.
    #[cfg(loom)]
    pub fn park_timeout(&self, _dur: std::time::Duration) {
        let _ = self.state.compare_exchange(NOTIFIED, EMPTY, AcqRel, Acquire);
    }

    /// Wake the parked thread, or make its next `park` return at once.
    pub fn unpark(&self) {
        match self.state.swap(NOTIFIED, AcqRel) {
            EMPTY | NOTIFIED => {}
            PARKED => {
                // Take the lock so the notification cannot slip in between the
                // sleeper's PARKED store and its wait.
                drop(lock(&self.lock));
                self.cvar.notify_one();
            }
            s => panic!("unpark: inconsistent state {s}"),
        }
    }
}
