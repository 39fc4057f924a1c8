//! `RtPlatform`: the zero-cost [`Platform`] the runtime gives a core policy.
//!
//! * locks are real `parking_lot` mutexes ([`RtLock`]); `peek` locks too (Rust has no
//!   sound racy read of a `T`; no core policy peeks through a lock it holds);
//! * `now()` is nanoseconds since the runtime started (monotonic clock);
//! * `charge`/`touch` are empty and inline away;
//! * `resched(cpu)` sets that worker's `need_resched` flag and, if it is another
//!   worker, unparks it: that is the runtime's reschedule IPI.
//!
//! One `RtPlatform` value per worker (its `this_cpu`); threads that are not workers
//! (a `block_on` caller waking a task) use worker 0's view.

use crate::park::Parker;
use schedlab_core::{Access, CpuId, Line, Platform, SchedLock, Work};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// Per-worker signals shared by all platform views: `need_resched` and the parker.
#[derive(Debug)]
pub(crate) struct Signals {
    pub need_resched: Box<[AtomicBool]>,
    pub parkers: Box<[Parker]>,
    /// IPIs sent (resched of another worker), for observation.
    pub ipis: AtomicU64,
}

impl Signals {
    pub fn new(n: usize) -> Signals {
        Signals {
            need_resched: (0..n).map(|_| AtomicBool::new(false)).collect(),
            parkers: (0..n).map(|_| Parker::new()).collect(),
            ipis: AtomicU64::new(0),
        }
    }
}

/// A policy lock: a `parking_lot` mutex.
#[derive(Debug)]
pub struct RtLock<T>(parking_lot::Mutex<T>);

impl<T> SchedLock<T, RtPlatform> for RtLock<T> {
    #[inline]
    fn with<R>(&self, _: &RtPlatform, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.0.lock())
    }
    #[inline]
    fn try_with<R>(&self, _: &RtPlatform, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.0.try_lock().map(|mut g| f(&mut g))
    }
    #[inline]
    fn peek<R>(&self, _: &RtPlatform, f: impl FnOnce(&T) -> R) -> R {
        f(&self.0.lock())
    }
    fn inspect<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.0.lock())
    }
}

/// One worker's view of the machine.
#[derive(Debug, Clone)]
pub struct RtPlatform {
    cpu: CpuId,
    start: Instant,
    signals: Arc<Signals>,
}

impl RtPlatform {
    pub(crate) fn new(cpu: CpuId, start: Instant, signals: Arc<Signals>) -> RtPlatform {
        RtPlatform { cpu, start, signals }
    }
}

impl Platform for RtPlatform {
    type Lock<T> = RtLock<T>;
    fn new_lock<T>(&self, _name: &str, value: T) -> RtLock<T> {
        RtLock(parking_lot::Mutex::new(value))
    }
    #[inline]
    fn this_cpu(&self) -> CpuId {
        self.cpu
    }
    #[inline]
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
    #[inline]
    fn charge(&self, _: Work) {}
    #[inline]
    fn touch(&self, _: Line, _: Access) {}
    fn resched(&self, cpu: CpuId) {
        let Some(flag) = self.signals.need_resched.get(cpu) else { return };
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        // The target is asleep or busy elsewhere unless it is this very thread (a
        // non-worker thread borrows worker 0's view, so compare threads, not views).
        if crate::context::worker_of_signals(Arc::as_ptr(&self.signals)) != Some(cpu) {
            self.signals.ipis.fetch_add(1, Relaxed);
            self.signals.parkers[cpu].unpark();
        }
    }
}
