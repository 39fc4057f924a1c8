//! The free platform, counting what a policy call asks the simulator to charge: each
//! `Work`, each lock acquisition, each cache-line access (a touch or a racy peek).
//! The calibration times a policy's calls on [`NullPlatform`] and counts them here, so
//! that the host machine can price a call's fixed path as what was measured less what
//! the simulator charges for the same call separately (its lock, its goodness scan,
//! its list operations, its L2 hits) — otherwise those are paid twice.

use schedlab_core::{Access, Line, NullPlatform, Platform, SchedLock, Work};
use std::cell::Cell;

/// Counts of one or more calls (plain cells: an atomic increment per charge would add
/// its own nanoseconds where the platform is also used for timing).
pub struct Counting {
    pub inner: NullPlatform,
    work: [Cell<u64>; Work::COUNT],
    locks: Cell<u64>,
    lines: Cell<u64>,
}

/// What a sequence of policy calls asked for, per call (see [`Counting::per_call`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Charges {
    /// Per kind of `Work`, indexed by [`Work::index`].
    pub work: [f64; Work::COUNT],
    /// Lock acquisitions (`with`, successful `try_with`).
    pub locks: f64,
    /// Cache-line accesses (`touch`, `peek`): L2 hits when one CPU makes every call.
    pub lines: f64,
}

impl Charges {
    /// `self - other`, kind by kind.
    pub fn minus(&self, other: &Charges) -> Charges {
        let mut work = self.work;
        for (w, o) in work.iter_mut().zip(other.work) {
            *w -= o;
        }
        Charges { work, locks: self.locks - other.locks, lines: self.lines - other.lines }
    }

    /// What these charges cost at `work_ns` per kind, `lock_ns` per acquisition and
    /// `line_ns` per access, leaving out the kinds in `except`.
    pub fn priced(&self, work_ns: &[f64; Work::COUNT], lock_ns: f64, line_ns: f64, except: &[Work]) -> f64 {
        let work: f64 = (0..Work::COUNT)
            .filter(|&i| !except.iter().any(|w| w.index() == i))
            .map(|i| self.work[i] * work_ns[i])
            .sum();
        work + self.locks * lock_ns + self.lines * line_ns
    }
}

impl Counting {
    pub fn new(cpu: usize) -> Counting {
        Counting { inner: NullPlatform::new(cpu), work: Default::default(), locks: Cell::new(0), lines: Cell::new(0) }
    }

    /// Forget what the set-up charged: only the calls after this are counted.
    pub fn reset(&self) {
        for w in &self.work {
            w.set(0);
        }
        self.locks.set(0);
        self.lines.set(0);
    }

    /// How many of each `Work` kind were charged since the last reset.
    pub fn work(&self, w: Work) -> u64 {
        self.work[w.index()].get()
    }

    /// Lock acquisitions since the last reset.
    pub fn locks(&self) -> u64 {
        self.locks.get()
    }

    /// The counts since the last reset, divided by `calls`.
    pub fn per_call(&self, calls: u64) -> Charges {
        let n = calls.max(1) as f64;
        let mut work = [0.0; Work::COUNT];
        for (w, c) in work.iter_mut().zip(&self.work) {
            *w = c.get() as f64 / n;
        }
        Charges { work, locks: self.locks.get() as f64 / n, lines: self.lines.get() as f64 / n }
    }

    fn line(&self) {
        self.lines.set(self.lines.get() + 1);
    }
}

/// A real (uncontended) lock, the runtime's policy-lock mutex, counted at each acquisition.
pub struct CountingLock<T>(schedlab_rt::PolicyMutex<T>);

impl<T> SchedLock<T, Counting> for CountingLock<T> {
    fn with<R>(&self, p: &Counting, f: impl FnOnce(&mut T) -> R) -> R {
        p.locks.set(p.locks.get() + 1);
        f(&mut schedlab_rt::lock_policy_mutex(&self.0))
    }
    fn try_with<R>(&self, p: &Counting, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.0.try_lock().map(|mut g| {
            p.locks.set(p.locks.get() + 1);
            f(&mut g)
        })
    }
    fn peek<R>(&self, p: &Counting, f: impl FnOnce(&T) -> R) -> R {
        p.line();
        f(&schedlab_rt::lock_policy_mutex(&self.0))
    }
    fn inspect<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&schedlab_rt::lock_policy_mutex(&self.0))
    }
}

impl Platform for Counting {
    type Lock<T: Send> = CountingLock<T>;
    fn new_lock<T: Send>(&self, _: &str, value: T) -> CountingLock<T> {
        CountingLock(schedlab_rt::PolicyMutex::new(value))
    }
    fn this_cpu(&self) -> usize {
        self.inner.cpu
    }
    fn now(&self) -> u64 {
        self.inner.now()
    }
    fn task_clock(&self, cpu: usize) -> u64 {
        self.inner.task_clock(cpu)
    }
    fn charge(&self, w: Work) {
        let c = &self.work[w.index()];
        c.set(c.get() + 1);
    }
    fn touch(&self, _: Line, _: Access) {
        self.line();
    }
    fn resched(&self, cpu: usize) {
        self.inner.resched(cpu)
    }
}
