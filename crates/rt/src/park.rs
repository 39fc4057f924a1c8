//! Parking a worker thread: the runtime's sleep and its reschedule IPI.
//!
//! [`Parker`] — one per worker, used by both schedulers: a token
//! (`EMPTY/PARKED/NOTIFIED`) plus a mutex and a condition variable. `unpark` before
//! `park` makes `park` return at once, so an unpark can never be lost between a
//! worker's last check and its sleep. Model-checked with loom (`tests/loom_park.rs`).
//!
//! A worker sleeps with [`Parker::park_driving`]: if the reactor's driver is free it
//! sleeps in the reactor's poll instead (state `DRIVING`, and an unpark becomes a
//! wake-up of the driver), so that readiness and timers are handled on a worker's
//! thread (`reactor/mod.rs`). Otherwise it parks on its condition variable as before.
//!
//! [`Idle`], the fast scheduler's registry of spinning and sleeping workers, lives
//! with that scheduler (`scheduler/fast/idle.rs`); it is re-exported here because the
//! loom tests check it together with the parker.

pub use crate::scheduler::fast::idle::Idle;
/// The fast scheduler's per-worker mailbox, re-exported for the same loom tests (a
/// wake handed over through it must not be lost by a worker going to sleep).
pub use crate::scheduler::fast::mailbox::Mailbox;

use crate::sync::{lock, AtomicUsize, Condvar, Mutex, MutexGuard};
use std::sync::atomic::Ordering::{AcqRel, Acquire};

const EMPTY: usize = 0;
const PARKED: usize = 1;
const NOTIFIED: usize = 2;
/// Asleep in the reactor's poll: an unpark wakes the driver.
const DRIVING: usize = 3;
/// How long a worker that found the driver taken sleeps before it looks again. The
/// driver's holder normally comes back to it whenever it has nothing to run; this
/// bound only matters when the holder leaves for good (its runtime shut down) while
/// workers of another runtime sleep: one of them takes the driver within this time.
#[cfg(not(loom))]
const STANDBY: std::time::Duration = std::time::Duration::from_millis(10);

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

    /// Like [`Parker::park`], but gives up after `dur`. Returns whether it was
    /// unparked (not timed out).
    #[cfg(not(loom))]
    pub fn park_timeout(&self, dur: std::time::Duration) -> bool {
        let Some(g) = self.enter() else { return true };
        let (_g, _) = match self.cvar.wait_timeout(g, dur) {
            Ok(r) => r,
            Err(p) => p.into_inner(),
        };
        // Timed out or notified: either way leave the token empty.
        self.state.swap(EMPTY, AcqRel) == NOTIFIED
    }

    /// loom has no clock: a timed park is modelled as an immediate timeout.
    #[cfg(loom)]
    pub fn park_timeout(&self, _dur: std::time::Duration) -> bool {
        self.state.compare_exchange(NOTIFIED, EMPTY, AcqRel, Acquire).is_ok()
    }

    /// A worker's sleep: until [`Parker::unpark`], at most `timeout` (`None`: no
    /// limit). If the reactor's driver is free, the sleep is a turn of the reactor
    /// (its events and due timers fire on this thread, and the turn may end early
    /// because of them: a return without an unpark). Otherwise a park on the condition
    /// variable, looking at the driver again every `STANDBY`. `before_wakes` runs on
    /// this thread before a turn fires any waker (the fast scheduler takes the worker
    /// off its sleeper list there, so that the wakes it fires notify another worker,
    /// not this one).
    pub fn park_driving(&self, timeout: Option<std::time::Duration>, before_wakes: &mut dyn FnMut()) {
        #[cfg(not(loom))]
        let deadline = timeout.and_then(|t| std::time::Instant::now().checked_add(t));
        loop {
            if self.state.compare_exchange(NOTIFIED, EMPTY, AcqRel, Acquire).is_ok() {
                return;
            }
            if let Some(mut driver) = crate::reactor::try_drive() {
                match self.state.compare_exchange(EMPTY, DRIVING, AcqRel, Acquire) {
                    Ok(_) => {
                        driver.turn(timeout, before_wakes);
                        // Unparked or not, leave the token empty: an unpark during the
                        // turn woke the driver (at worst the next turn returns at once).
                        self.state.swap(EMPTY, AcqRel);
                    }
                    Err(NOTIFIED) => {
                        self.state.swap(EMPTY, AcqRel);
                    }
                    Err(s) => panic!("park: inconsistent state {s}"),
                }
                return;
            }
            #[cfg(loom)]
            {
                return self.park_at_most(timeout);
            }
            #[cfg(not(loom))]
            {
                let now = std::time::Instant::now();
                let left = match deadline {
                    Some(d) => match d.checked_duration_since(now) {
                        Some(left) if !left.is_zero() => Some(left),
                        _ => return,
                    },
                    None => None,
                };
                // No reactor: nothing to drive, sleep as asked.
                if crate::reactor::started().is_none() {
                    return self.park_at_most(left);
                }
                let step = left.map_or(STANDBY, |l| l.min(STANDBY));
                if self.park_timeout(step) {
                    return;
                }
            }
        }
    }

    /// [`Parker::park`], or [`Parker::park_timeout`] for at most `d`.
    fn park_at_most(&self, d: Option<std::time::Duration>) {
        match d {
            Some(d) => {
                self.park_timeout(d);
            }
            None => self.park(),
        }
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
            DRIVING => crate::reactor::wake_driver(),
            s => panic!("unpark: inconsistent state {s}"),
        }
    }
}
