//! The reactor's timers: a map from (deadline, id) to the waiting task's waker, and
//! the deadline the driver is blocked towards.
//!
//! A timer that is due before the driver's deadline wakes the driver, so that it
//! waits again with the earlier deadline. Both sides read and write the deadline
//! under the map's lock: a timer inserted while the driver computes its timeout is
//! either seen by that computation or sees the driver's deadline and wakes it.

use parking_lot::Mutex;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::task::Waker;
use std::time::{Duration, Instant};

thread_local! {
    /// The latest clock reading this thread took for the timers: a worker's look before
    /// a pick ([`Timers::due_now`], [`Timers::due`]) or a firing ([`Timers::fire`]).
    static SEEN: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// This thread's latest clock reading for the timers, if it took one: never ahead of
/// the clock (`crate::time::Timer` compares a new timer's deadline with it).
#[inline]
pub(crate) fn seen_now() -> Option<Instant> {
    SEEN.with(Cell::get)
}

#[inline]
fn saw(now: Instant) {
    SEEN.with(|s| s.set(Some(now)));
}

#[derive(Default)]
struct State {
    map: BTreeMap<(Instant, u64), Waker>,
    /// `Some(d)` while a driver blocks: until `d` (`None`: no deadline).
    blocked_until: Option<Option<Instant>>,
}

/// The timer map.
pub(crate) struct Timers {
    state: Mutex<State>,
    /// Timers in the map, for the busy workers' look without the lock.
    len: AtomicUsize,
    next_id: AtomicU64,
    /// The origin of `earliest`.
    base: Instant,
    /// The earliest deadline, in ns since `base` (`u64::MAX`: none), for a busy
    /// worker that reads the clock after every poll ([`Timers::due`]). It may be
    /// earlier than the map's (a timer removed since): then one look finds nothing
    /// due and puts it right.
    earliest: AtomicU64,
}

impl Timers {
    pub(crate) fn new() -> Timers {
        Timers {
            state: Mutex::new(State::default()),
            len: AtomicUsize::new(0),
            next_id: AtomicU64::new(0),
            base: Instant::now(),
            earliest: AtomicU64::new(u64::MAX),
        }
    }

    fn since_base(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Whether a timer is due at `at_ns` after `origin` (a worker's clock): one load.
    #[inline]
    pub(crate) fn due(&self, origin: Instant, at_ns: u64) -> bool {
        let e = self.earliest.load(Relaxed);
        if e == u64::MAX {
            return false;
        }
        let now = origin + Duration::from_nanos(at_ns);
        saw(now);
        now >= self.base + Duration::from_nanos(e)
    }

    /// Whether a timer is due now: one load, and a clock reading only if a timer is set.
    #[inline]
    pub(crate) fn due_now(&self) -> bool {
        let e = self.earliest.load(Relaxed);
        if e == u64::MAX {
            return false;
        }
        let now = Instant::now();
        saw(now);
        now >= self.base + Duration::from_nanos(e)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len.load(Relaxed) == 0
    }

    /// A fresh id: with the deadline, the key of one registration.
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Relaxed)
    }

    /// Wake `waker` at `when` (key `(when, id)`, replacing a registration with that
    /// key). Wakes the driver if it is blocked towards a later deadline.
    pub(crate) fn insert(&self, when: Instant, id: u64, waker: Waker) {
        let wake = {
            let mut s = self.state.lock();
            if s.map.insert((when, id), waker).is_none() {
                self.len.fetch_add(1, Relaxed);
            }
            // Under the lock: `fire` recomputes it under the lock too.
            let at = self.since_base(when);
            if at < self.earliest.load(Relaxed) {
                self.earliest.store(at, Relaxed);
            }
            match s.blocked_until {
                Some(None) => true,
                Some(Some(d)) => when < d,
                None => false,
            }
        };
        if wake {
            super::wake_driver();
        }
    }

    /// Drop the registration `(when, id)` if it has not fired.
    pub(crate) fn remove(&self, when: Instant, id: u64) {
        if self.state.lock().map.remove(&(when, id)).is_some() {
            self.len.fetch_sub(1, Relaxed);
        }
    }

    /// The driver is about to block for at most `timeout`: the timeout shortened to
    /// the earliest timer, recorded as the driver's deadline.
    pub(crate) fn arm(&self, timeout: Option<Duration>) -> Option<Duration> {
        let mut s = self.state.lock();
        let now = Instant::now();
        let asked = timeout.and_then(|t| now.checked_add(t));
        let first = s.map.keys().next().map(|&(when, _)| when);
        let until = match (asked, first) {
            (Some(a), Some(f)) => Some(a.min(f)),
            (a, f) => a.or(f),
        };
        s.blocked_until = Some(until);
        // `None`: no timer, and no timeout (or one too far to represent).
        until.map(|u| u.saturating_duration_since(now))
    }

    /// The driver is no longer blocked.
    pub(crate) fn disarm(&self) {
        self.state.lock().blocked_until = None;
    }

    /// Move the wakers of every due timer to `due`.
    pub(crate) fn fire(&self, due: &mut Vec<Waker>) {
        if self.is_empty() && self.earliest.load(Relaxed) == u64::MAX {
            return;
        }
        let now = Instant::now();
        saw(now);
        let mut s = self.state.lock();
        while let Some(e) = s.map.first_entry() {
            if e.key().0 > now {
                break;
            }
            due.push(e.remove());
            self.len.fetch_sub(1, Relaxed);
        }
        let next = s.map.keys().next().map_or(u64::MAX, |&(when, _)| self.since_base(when));
        self.earliest.store(next, Relaxed);
    }
}
