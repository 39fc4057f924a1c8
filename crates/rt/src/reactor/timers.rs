//! The reactor's timers: a map from (deadline, id) to the waiting task's waker, and
//! the deadline the driver is blocked towards.
//!
//! A timer due more than [`FAR`] after it is set waits in an unordered slab instead, in
//! and out in constant time: a timeout that guards an operation (hyper's 30 s
//! header-read timeout, armed for every request) is nearly always cancelled long before
//! it is due, and in the map it would pay an ordered insert and removal among every
//! connection's live timer (docs/architecture.md, "What a timer costs"). The slab's
//! timers move into the map once they are within `FAR` of the clock, at a look that the
//! earliest of them asks for.
//!
//! A timer that is due before the driver's deadline wakes the driver, so that it
//! waits again with the earlier deadline. Both sides read and write the deadline
//! under the map's lock: a timer inserted while the driver computes its timeout is
//! either seen by that computation or sees the driver's deadline and wakes it.

use parking_lot::Mutex;
use slab::Slab;
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

/// How far ahead a timer must be due to wait in the slab rather than the map.
pub(crate) const FAR: Duration = Duration::from_secs(1);

#[derive(Default)]
struct State {
    map: BTreeMap<(Instant, u64), Waker>,
    /// Timers due more than [`FAR`] after they were set: deadline, id, waker.
    far: Slab<(Instant, u64, Waker)>,
    /// No later than any deadline in `far` (it may be earlier: a removal leaves it, and
    /// the next move into the map recomputes it).
    far_min: Option<Instant>,
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

    /// When the timers next need a look: the map's first deadline, or the time the
    /// slab's earliest comes within [`FAR`].
    fn attention(s: &State) -> Option<Instant> {
        let near = s.map.keys().next().map(|&(when, _)| when);
        let far = s.far_min.map(|m| m.checked_sub(FAR).unwrap_or(m));
        match (near, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
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

    /// Wake `waker` at `when` (key `(when, id)`, a fresh id). Wakes the driver if it is
    /// blocked towards a later deadline. Returns the slab slot of a far timer, which
    /// [`Timers::remove`] takes as a hint.
    pub(crate) fn insert(&self, when: Instant, id: u64, waker: Waker) -> Option<usize> {
        // This thread's latest reading is never ahead of the clock: at worst a near
        // timer goes to the slab, and moves into the map at the next look.
        let now = seen_now().unwrap_or_else(Instant::now);
        let far = now.checked_add(FAR).is_some_and(|h| when > h);
        let (wake, slot) = {
            let mut s = self.state.lock();
            let (slot, attention) = if far {
                let slot = s.far.insert((when, id, waker));
                s.far_min = Some(s.far_min.map_or(when, |m| m.min(when)));
                (Some(slot), when.checked_sub(FAR).unwrap_or(when))
            } else {
                s.map.insert((when, id), waker);
                (None, when)
            };
            self.len.fetch_add(1, Relaxed);
            // Under the lock: `fire` recomputes it under the lock too.
            let at = self.since_base(attention);
            if at < self.earliest.load(Relaxed) {
                self.earliest.store(at, Relaxed);
            }
            let wake = match s.blocked_until {
                Some(None) => true,
                Some(Some(d)) => attention < d,
                None => false,
            };
            (wake, slot)
        };
        if wake {
            super::wake_driver();
        }
        slot
    }

    /// Drop the registration `(when, id)` if it has not fired: in the slab at `slot`
    /// if it is still there, else in the map.
    pub(crate) fn remove(&self, when: Instant, id: u64, slot: Option<usize>) {
        let mut s = self.state.lock();
        let removed = match slot {
            Some(k) if s.far.get(k).is_some_and(|e| e.1 == id) => {
                s.far.remove(k);
                true
            }
            _ => s.map.remove(&(when, id)).is_some(),
        };
        if removed {
            self.len.fetch_sub(1, Relaxed);
        }
    }

    /// The driver is about to block for at most `timeout`: the timeout shortened to
    /// the earliest timer, recorded as the driver's deadline.
    pub(crate) fn arm(&self, timeout: Option<Duration>) -> Option<Duration> {
        let mut s = self.state.lock();
        let now = Instant::now();
        let asked = timeout.and_then(|t| now.checked_add(t));
        let first = Self::attention(&s);
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
        let horizon = now.checked_add(FAR).unwrap_or(now);
        if s.far_min.is_some_and(|m| m <= horizon) {
            // The slab's timers within `FAR` of the clock move into the map.
            let State { map, far, far_min, .. } = &mut *s;
            let moving: Vec<usize> = far.iter().filter(|(_, e)| e.0 <= horizon).map(|(k, _)| k).collect();
            for k in moving {
                let (when, id, waker) = far.remove(k);
                map.insert((when, id), waker);
            }
            *far_min = far.iter().map(|(_, e)| e.0).min();
        }
        while let Some(e) = s.map.first_entry() {
            if e.key().0 > now {
                break;
            }
            due.push(e.remove());
            self.len.fetch_sub(1, Relaxed);
        }
        let next = Self::attention(&s).map_or(u64::MAX, |t| self.since_base(t));
        self.earliest.store(next, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Relaxed);
        }
    }

    /// A far timer waits in the slab, moves into the map when it comes within `FAR`,
    /// and fires at its deadline; a removal finds it wherever it is, by its id, and a
    /// stale slot hint (the slot reused by another timer) removes nothing else.
    #[test]
    fn far_timers_move_into_the_map_and_fire_on_time() {
        let t = Timers::new();
        let hits = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(hits.clone());
        let now = Instant::now();
        saw(now);
        let far_when = now + FAR + Duration::from_millis(30);
        let near_when = now + Duration::from_millis(10);
        let (a, b) = (t.next_id(), t.next_id());
        let slot = t.insert(far_when, a, waker.clone());
        assert!(slot.is_some(), "more than FAR ahead: the slab");
        assert_eq!(t.insert(near_when, b, waker.clone()), None, "within FAR: the map");
        assert_eq!(t.arm(None).map(|d| d <= Duration::from_millis(10)), Some(true), "the near one bounds the wait");
        t.disarm();
        // Removed from the slab by its slot; a second removal with the same hint finds a
        // reused slot holding another id and leaves it alone.
        t.remove(far_when, a, slot);
        let c = t.next_id();
        let reused = t.insert(far_when, c, waker.clone());
        assert_eq!(reused, slot, "the slab reuses the slot");
        t.remove(far_when, a, slot);
        assert_eq!(t.len.load(Relaxed), 2);
        // Nothing due yet.
        let mut due = Vec::new();
        t.fire(&mut due);
        assert!(due.is_empty());
        std::thread::sleep(Duration::from_millis(15));
        t.fire(&mut due);
        assert_eq!(due.len(), 1, "the near timer");
        // The far one is asked for at `far_when - FAR` (30 ms from the start), moves into
        // the map, and fires at `far_when`.
        while Instant::now() < far_when - FAR + Duration::from_millis(5) {
            assert!(!t.due_now() || Instant::now() >= far_when - FAR);
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(t.due_now(), "the look that moves it is due");
        t.fire(&mut due);
        assert_eq!(due.len(), 1, "moved, not due yet");
        assert!(t.state.lock().far.is_empty());
        assert!(!t.due_now());
        while Instant::now() < far_when {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(t.due_now());
        t.fire(&mut due);
        assert_eq!(due.len(), 2);
        assert!(t.is_empty());
        assert_eq!(t.earliest.load(Relaxed), u64::MAX);
        drop(due);
        assert_eq!(hits.0.load(Relaxed), 0, "fire only collects the wakers");
    }
}
