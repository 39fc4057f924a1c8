//! Locks in virtual time: an acquire waits until the lock is free (a FIFO spinlock
//! in virtual time, its waiter seeing the release at its back-off's next poll:
//! `crate::lockwait`), pays the lock word's hand-off from the CPU that held it last,
//! and is recorded Lockmeter-style ([`LockStats`]), with the task-line reads made
//! under it (the run-queue walk). The engine defers a `schedule()` that would wait
//! on a machine whose waiter backs off (`begin_schedule`, `lock_seen_free_at`).

use super::SimPlatform;
use schedlab_core::trace::Event;
use schedlab_core::{CpuId, SchedLock};

/// Lockmeter-style statistics of one lock.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LockStats {
    pub name: String,
    pub acquisitions: u64,
    /// Acquisitions that had to wait.
    pub contended: u64,
    pub trylock_failures: u64,
    pub hold_total_ns: u64,
    pub hold_max_ns: u64,
    pub wait_total_ns: u64,
    pub wait_max_ns: u64,
}

/// Where a `schedule()` call's walk is measured from ([`SimPlatform::walk_start`]).
#[derive(Clone, Copy, Debug)]
pub struct WalkMark {
    locked: u64,
    after_pick: u64,
}

#[derive(Debug)]
pub(super) struct LockState {
    pub(super) stats: LockStats,
    /// Virtual time the current or last holder releases it.
    pub(super) free_at: u64,
    pub(super) acquired_at: u64,
    /// CPU that last held it (its lock word is in that CPU's cache).
    pub(super) last_cpu: Option<CpuId>,
}

impl SimPlatform {
    /// A new lock named `name`, free and never held: its id.
    pub(super) fn add_lock(&self, name: &str) -> usize {
        let mut locks = self.locks.borrow_mut();
        locks.push(LockState {
            stats: LockStats { name: name.to_string(), ..LockStats::default() },
            free_at: 0,
            acquired_at: 0,
            last_cpu: None,
        });
        locks.len() - 1
    }

    pub fn lock_stats(&self) -> Vec<LockStats> {
        self.locks.borrow().iter().map(|l| l.stats.clone()).collect()
    }

    /// When a waiter that began to ask for lock `id` at `asked` (≤ `at`) and still asks
    /// at `at` sees it free: `at` if the lock is free then, else its back-off's first
    /// poll after the release of the last holder the simulation has processed. The
    /// engine defers a `schedule()` that would wait to that time
    /// (`Engine::defer_schedule`), so that a CPU asking meanwhile, while the lock is
    /// free, takes it first. `None`: no such lock.
    pub fn lock_seen_free_at(&self, id: usize, asked: u64, at: u64) -> Option<u64> {
        let locks = self.locks.borrow();
        let l = locks.get(id)?;
        Some(if l.free_at > at { self.seen_free(l, asked) } else { at })
    }

    /// When a waiter that began to ask at `asked` sees held lock `l` released: its
    /// back-off's first poll after the release (`lockwait`: at once on the presets,
    /// whose `spin_lock` polls continuously; later for a backing-off user-level
    /// waiter). One rule for the acquire and for the engine's deferral.
    pub(super) fn seen_free(&self, l: &LockState, asked: u64) -> u64 {
        asked.saturating_add(self.cost.lock_backoff.sees_release(l.free_at - asked))
    }

    /// The next `schedule()` call: its first lock is recorded, and its first acquire
    /// counts its wait from `asked` (`u64::MAX`: from the acquire; a deferred call's
    /// waiter began earlier).
    pub fn begin_schedule(&self, asked: u64) {
        self.first_lock.set(usize::MAX);
        self.asked_at.set(asked);
        self.schedule_open.set(true);
    }

    /// The first lock the `schedule()` call that just returned acquired (and the call
    /// is over).
    pub fn schedule_lock(&self) -> Option<usize> {
        self.schedule_open.set(false);
        Some(self.first_lock.get()).filter(|&id| id != usize::MAX)
    }

    /// Task-line reads made under a lock so far, those of a critical section still
    /// open included (the walk counters take them in at its release).
    #[inline]
    pub(super) fn locked_task_reads(&self) -> u64 {
        let open = if self.locks_held.get() > 0 { self.task_reads.get() - self.walk_mark.get().0 } else { 0 };
        self.walk_reads.get() + open
    }

    /// A mark to measure a `schedule()` call's run-queue walk from
    /// ([`walked_since`](Self::walked_since)).
    #[inline]
    pub fn walk_start(&self) -> WalkMark {
        WalkMark { locked: self.locked_task_reads(), after_pick: self.after_pick_reads.get() }
    }

    /// The run-queue walk of the `schedule()` call made since `mark`: the task
    /// structures it read under a run-queue lock — its own queue's walk, and any look
    /// at other queues that reads their tasks (a steal, an idle pull) — less those read
    /// after its pick ([`schedlab_core::Platform::after_pick`]: the placement of a
    /// preempted task reads it and the tasks running elsewhere). The same reads as
    /// [`BusStats::locked_task_reads`](super::BusStats), so the walk the miss ratio is
    /// taken over and the walk whose length is reported are one.
    #[inline]
    pub fn walked_since(&self, mark: WalkMark) -> u64 {
        (self.locked_task_reads() - mark.locked) - (self.after_pick_reads.get() - mark.after_pick)
    }

    pub(super) fn lock_acquire(&self, id: usize, try_only: bool) -> bool {
        debug_assert!(
            !self.overlap.open.get(),
            "a lock acquire inside an overlapped scope (a locked instruction orders memory)"
        );
        // `lock; decb` (a trylock's `lock; btsl`) waits for the store buffer.
        self.drain_stores();
        let cpu = self.cpu.get();
        let mut locks = self.locks.borrow_mut();
        let l = &mut locks[id];
        let now = self.cursor.get();
        // A `schedule()`'s first acquire: recorded, and a deferred call's waiter asked
        // before it.
        let asked = if self.schedule_open.get() {
            self.schedule_open.set(false);
            self.first_lock.set(id);
            self.asked_at.get().min(now)
        } else {
            now
        };
        if l.free_at > now && try_only {
            l.stats.trylock_failures += 1;
            return false;
        }
        if l.free_at > now || asked < now {
            l.stats.contended += 1;
        }
        // A waiter sees the release at its next poll, and only then starts its hand-off.
        let start = if l.free_at > now { self.seen_free(l, asked) } else { now };
        let wait = start - asked;
        // The lock word moves to this CPU's cache unless it is already there.
        let handoff = match l.last_cpu {
            // Measured as a whole where it is (the host machine): the transfer overlaps
            // the locked operation there.
            Some(c) if c != cpu && self.cost.lock_remote_ns > 0 => self.cost.lock_remote_ns,
            Some(c) if c != cpu => {
                self.cost.transfer_ns(self.node_of(c), self.node_of(cpu)) + self.cost.lock_handoff_ns
            }
            Some(_) => 0,
            None => self.cost.memory_ns(0, self.node_of(cpu)),
        };
        let got = start + handoff + self.cost.lock_ns;
        l.stats.acquisitions += 1;
        l.stats.wait_total_ns += wait;
        l.stats.wait_max_ns = l.stats.wait_max_ns.max(wait);
        l.acquired_at = got;
        l.last_cpu = Some(cpu);
        // Mark busy until released (a nested acquire by another call sees it held).
        l.free_at = u64::MAX;
        if self.locks_held.get() == 0 {
            self.walk_mark.set((self.task_reads.get(), self.task_read_misses.get()));
        }
        self.locks_held.set(self.locks_held.get() + 1);
        self.cursor.set(got);
        drop(locks);
        if self.tracing() {
            self.trace_lock(Event::LockAcquire { lock: id as u32, wait_ns: wait });
        }
        true
    }

    pub(super) fn lock_release(&self, id: usize) {
        let mut locks = self.locks.borrow_mut();
        let l = &mut locks[id];
        // `spin_unlock` is a plain store (`movb $1`): the CPU goes on, but the other
        // CPUs see the lock free only once the stores ahead of it have committed (TSO).
        let now = if self.store_buffers.depth > 0 {
            self.store_buffers.visible_at(self.cpu.get(), self.cursor.get())
        } else {
            self.cursor.get()
        };
        let hold = now - l.acquired_at;
        l.stats.hold_total_ns += hold;
        l.stats.hold_max_ns = l.stats.hold_max_ns.max(hold);
        l.free_at = now;
        let held = self.locks_held.get().saturating_sub(1);
        self.locks_held.set(held);
        if held == 0 {
            // The task-line reads made under the lock: the run-queue walk of equation 1.
            let (reads, misses) = self.walk_mark.get();
            self.walk_reads.set(self.walk_reads.get() + self.task_reads.get() - reads);
            self.walk_misses.set(self.walk_misses.get() + self.task_read_misses.get() - misses);
        }
        drop(locks);
        if self.tracing() {
            self.trace_lock(Event::LockRelease { lock: id as u32 });
        }
    }
}

/// A lock in virtual time, guarding `T`. Its waiting and holding are the platform's
/// accounting; the data sits in a real spin lock only so that the lock is `Send +
/// Sync` like every platform's, which makes every policy `Send + Sync` by construction
/// (one constructor for both engines). The simulator runs a policy on one thread, so
/// the spin lock is always free: one uncontended atomic per critical section, and a
/// policy that re-enters a lock it holds panics instead of deadlocking.
pub struct SimLock<T> {
    id: usize,
    data: spin::Mutex<T>,
}

impl<T> SimLock<T> {
    /// The lock the platform knows as `id`, guarding `value`.
    pub(super) fn new(id: usize, value: T) -> SimLock<T> {
        SimLock { id, data: spin::Mutex::new(value) }
    }

    #[inline]
    fn data(&self) -> spin::MutexGuard<'_, T> {
        self.data.try_lock().expect("a policy re-entered a simulated lock it holds")
    }
}

impl<T> SchedLock<T, SimPlatform> for SimLock<T> {
    #[inline]
    fn with<R>(&self, p: &SimPlatform, f: impl FnOnce(&mut T) -> R) -> R {
        p.lock_acquire(self.id, false);
        let r = f(&mut self.data());
        p.lock_release(self.id);
        r
    }
    #[inline]
    fn try_with<R>(&self, p: &SimPlatform, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        if !p.lock_acquire(self.id, true) {
            return None;
        }
        let r = f(&mut self.data());
        p.lock_release(self.id);
        Some(r)
    }
    #[inline]
    fn peek<R>(&self, p: &SimPlatform, f: impl FnOnce(&T) -> R) -> R {
        p.advance(p.cost.l2_hit_ns);
        f(&self.data())
    }
    fn inspect<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.data())
    }
}
#[cfg(test)]
mod tests {
    use super::super::testing::plat;
    use super::super::*;
    use crate::machine::Machine;
    use schedlab_core::SchedLock;

    #[test]
    fn contended_lock_waits_and_is_accounted() {
        let p = plat("smp-8");
        let l = p.new_lock("rq", 0u32);
        p.begin(0, 1000);
        l.with(&p, |_| p.advance(500));
        let released = p.cursor();
        // CPU 1 wants it before it was released: waits until `released`.
        p.begin(1, 1100);
        assert!(l.try_with(&p, |_| ()).is_none(), "trylock of a held lock fails");
        p.begin(1, 1100);
        l.with(&p, |_| ());
        assert!(p.cursor() >= released + p.cost.transfer_ns(0, 0));
        let s = &p.lock_stats()[0];
        assert_eq!((s.acquisitions, s.contended, s.trylock_failures), (2, 1, 1));
        assert_eq!(s.wait_total_ns, released - 1100);
        assert_eq!(s.hold_max_ns, 500);
    }

    /// smp-2 at 1000 MHz with a backing-off waiter: polls 20, 60 and 140 ns after it
    /// asks (2, 4, 8 pauses of 10 ns), then every 300 ns (yields) up to 740, then parked
    /// (seen 5 µs after the release); the hand-off a measured 40 ns.
    fn plat_backoff() -> SimPlatform {
        let mut m = Machine::preset("smp-2").unwrap();
        m.mhz = 1000;
        m.costs.host.lock_remote_ns = 40;
        m.costs.host.lock_pause_ns = 10;
        m.costs.host.lock_spin_steps = 3;
        m.costs.host.lock_yield_ns = 300;
        m.costs.host.lock_yields = 2;
        m.costs.host.lock_unpark_ns = 5_000;
        SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 64, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
    }

    /// CPU 0 takes the lock at 0 (the word from memory: it holds it from `first`) for
    /// `hold` ns; CPU 1 asks at `first`. How long after `first` CPU 1 holds it.
    fn contended_grant(hold: u64) -> u64 {
        let p = plat_backoff();
        let first = p.cost.memory_ns(0, 0) + p.cost.lock_ns;
        let l = p.new_lock("rq", ());
        p.begin(0, 0);
        l.with(&p, |_| p.advance(hold));
        assert_eq!(p.cursor(), first + hold);
        p.begin(1, first);
        l.with(&p, |_| ());
        assert_eq!(p.lock_stats()[0].contended, 1, "hold {hold}: not contended");
        p.cursor() - p.cost.lock_ns - first
    }

    #[test]
    fn a_backing_off_waiter_gets_the_lock_at_its_next_poll_after_the_release() {
        // (hold = release after the ask, the poll that sees it): never before the release.
        for (hold, poll) in [(5, 20), (20, 20), (21, 60), (100, 140), (141, 440), (600, 740), (740, 740)] {
            assert_eq!(contended_grant(hold), poll + 40, "hold {hold}");
        }
        // Past the last poll: parked, running 5 µs after the release.
        assert_eq!(contended_grant(741), 741 + 5_000 + 40);
    }

    #[test]
    fn a_continuously_polling_waiter_gets_the_lock_at_the_release() {
        let p = plat("smp-2");
        let l = p.new_lock("rq", ());
        p.begin(0, 0);
        l.with(&p, |_| p.advance(333));
        let released = p.cursor();
        p.begin(1, 10);
        l.with(&p, |_| ());
        assert_eq!(p.cursor(), released + p.cost.transfer_ns(0, 0) + p.cost.lock_ns);
    }
}
