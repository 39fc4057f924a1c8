//! The reactor under loom: only the driver's hand-shake with the parker — one thread
//! at a time holds the driver, a turn blocks until a wake-up, and a wake-up that comes
//! before the turn is kept (as an `eventfd` write is kept until `epoll_wait` reads it).
//! What the loom models check with it is `Parker::park_driving` (`tests/loom_park.rs`).

use loom::sync::atomic::AtomicBool;
use loom::sync::{Condvar, Mutex};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::time::Duration;

struct Model {
    held: AtomicBool,
    woken: Mutex<bool>,
    cvar: Condvar,
}

loom::lazy_static! {
    static ref MODEL: Model = Model { held: AtomicBool::new(false), woken: Mutex::new(false), cvar: Condvar::new() };
}

/// The driver, held.
pub(crate) struct DriveGuard(());

pub(crate) fn try_drive() -> Option<DriveGuard> {
    MODEL.held.compare_exchange(false, true, AcqRel, Acquire).ok().map(|_| DriveGuard(()))
}

/// The reactor as a scheduler keeps it: nothing to look at in the model.
#[derive(Clone, Copy)]
pub(crate) struct ReactorRef;

impl ReactorRef {
    pub(crate) fn get() -> ReactorRef {
        ReactorRef
    }
    pub(crate) fn timer_due_now(self) -> bool {
        false
    }
    pub(crate) fn poll_now(self) -> usize {
        0
    }
    pub(crate) fn timer_due(self, _origin: std::time::Instant, _at_ns: u64) -> bool {
        false
    }
}

pub(crate) fn wake_driver() {
    *MODEL.woken.lock().unwrap() = true;
    MODEL.cvar.notify_all();
}

impl DriveGuard {
    /// Block until a wake-up (a timed turn is an immediate timeout: loom has no clock).
    pub(crate) fn turn(&mut self, timeout: Option<Duration>, _before_wakes: &mut dyn FnMut()) -> usize {
        let mut w = MODEL.woken.lock().unwrap();
        if timeout.is_none() {
            while !*w {
                w = MODEL.cvar.wait(w).unwrap();
            }
        }
        *w = false;
        0
    }
}

impl Drop for DriveGuard {
    fn drop(&mut self) {
        MODEL.held.store(false, Release);
    }
}
