//! When a waiter for a held lock sees it released: the waiter's back-off in virtual time.
//!
//! A 2.4 `spin_lock` waiter polls the lock word continuously, so it sees the release at
//! once (every preset: all the parameters below are 0). A user-level runtime's lock
//! does not: `parking_lot`'s `Mutex::lock_slow` (with `SpinWait::spin`, parking_lot_core
//! 0.9) polls after 2, 4 and 8 `pause`s, then after each of up to 7 `sched_yield`s, then
//! parks in a futex and runs again only when the releaser unparks it. It therefore sees
//! a release at its first poll at or after it, and a parked waiter one unpark after it.
//! Deterministic: the polls are a pure function of when the waiter began to wait.
//! docs/cost-model.md, "The lock waiter's back-off".

use crate::machine::HostKnobs;

/// A waiter's back-off, in ns (`HostKnobs::lock_pause_ns` and the fields after it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backoff {
    /// One `pause` (spin-loop hint). 0 with `yield_ns` and `unpark_ns` 0: continuous polling.
    pub pause_ns: u64,
    /// Spin steps: step k (1..=`spin_steps`) spins 2^k pauses before its poll.
    pub spin_steps: u32,
    /// One `sched_yield` round trip, after which the waiter polls again.
    pub yield_ns: u64,
    /// Yields after the spin steps, each followed by a poll.
    pub yields: u32,
    /// From the release to a parked waiter running again (the releaser's unpark). 0:
    /// the waiter never parks; after its last yield it polls continuously.
    pub unpark_ns: u64,
}

impl Backoff {
    /// A machine's waiter (ns: the lock's waiter is priced in time, not cycles).
    pub fn of(h: &HostKnobs) -> Backoff {
        Backoff {
            pause_ns: h.lock_pause_ns as u64,
            spin_steps: h.lock_spin_steps,
            yield_ns: h.lock_yield_ns as u64,
            yields: h.lock_yields,
            unpark_ns: h.lock_unpark_ns as u64,
        }
    }

    /// Continuous polling: the waiter sees the release when it happens (the presets).
    pub fn is_continuous(&self) -> bool {
        *self == Backoff { spin_steps: self.spin_steps, yields: self.yields, ..Backoff::default() }
    }

    /// A waiter that asked at time 0 for a lock released at `release` (> 0): the time at
    /// which it sees the lock free (its hand-off, the line's transfer and the locked
    /// operation, follows). At its first poll at or after the release; if the release
    /// comes after its last poll, the waiter has parked and runs `unpark_ns` after it.
    #[inline]
    pub fn sees_release(&self, release: u64) -> u64 {
        // The presets' continuous polling, without walking the (empty) schedule.
        if self.pause_ns | self.yield_ns | self.unpark_ns == 0 {
            return release;
        }
        let mut poll = 0u64;
        for k in 1..=self.spin_steps {
            poll += self.pause_ns << k;
            if poll >= release {
                return poll;
            }
        }
        for _ in 0..self.yields {
            poll += self.yield_ns;
            if poll >= release {
                return poll;
            }
        }
        release.saturating_add(self.unpark_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// parking_lot's schedule with round numbers: polls at 20, 60, 140 (2, 4, 8 pauses
    /// of 10 ns), then every 300 ns up to 140 + 7 × 300 = 2,240, then parked.
    fn parking_lot_like() -> Backoff {
        Backoff { pause_ns: 10, spin_steps: 3, yield_ns: 300, yields: 7, unpark_ns: 15_000 }
    }

    #[test]
    fn a_waiter_sees_the_release_at_its_next_poll_never_before() {
        let b = parking_lot_like();
        for (release, seen) in [(1, 20), (20, 20), (21, 60), (61, 140), (141, 440), (2_240, 2_240)] {
            assert_eq!(b.sees_release(release), seen, "release at {release}");
        }
        for release in 1..3_000 {
            assert!(b.sees_release(release) >= release, "seen before the release at {release}");
        }
    }

    #[test]
    fn a_release_after_the_last_poll_finds_the_waiter_parked() {
        let b = parking_lot_like();
        assert_eq!(b.sees_release(2_241), 2_241 + 15_000);
    }

    #[test]
    fn zero_costs_poll_continuously() {
        let b = Backoff { spin_steps: 3, yields: 7, ..Backoff::default() };
        assert!(b.is_continuous());
        for release in [1, 77, 100_000] {
            assert_eq!(b.sees_release(release), release);
        }
        assert!(!parking_lot_like().is_continuous());
    }
}
