//! Scheduling counters: per worker, written only by their worker (a plain load + store
//! on its own cache line, no shared read-modify-write on the hot path), summed on read.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What the workers have done since the runtime started (see [`crate::Runtime::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Future polls.
    pub polls: u64,
    /// Context switches: a worker started polling a task other than the one it ran
    /// just before, idling counting as running the idle task (the kernel's and the
    /// simulator's definition: `next != prev`).
    pub switches: u64,
    /// Policy schedulers: `schedule()` calls.
    pub schedule_calls: u64,
    /// Policy schedulers: reschedule IPIs, i.e. `resched` of another worker (an unpark).
    pub ipis: u64,
    /// Times a worker parked its thread (went to sleep in the kernel) when idle.
    pub parks: u64,
    /// Policy schedulers: wake-ups, i.e. `wake_up` calls of the policy (a waker that
    /// found its task idle, a spawn, a wake that raced with the task blocking). A wake
    /// of a task that is running only marks it and is not one (as in the kernel).
    pub wakeups: u64,
    /// Policy schedulers: `schedule()` returned a task that was not runnable (a policy
    /// bug; the worker unlinks it as blocked and carries on). Tests expect 0.
    pub bad_picks: u64,
    /// Policy schedulers: timer ticks delivered (`tick` + `balance`), all workers.
    pub ticks: u64,
    /// Policy schedulers: tick periods that passed without a tick, because the
    /// worker thread was not on a CPU through them (kept off by the host, or blocked in
    /// a poll): a late worker charges only the periods its thread ran (thread CPU time).
    pub skipped_ticks: u64,
    /// Policy schedulers: ns the workers' threads were kept off a CPU while they ran a
    /// task (wall time less thread CPU time and parking, taken at each tick): steal
    /// time, left out of the task clock that charges running tasks
    /// (`Platform::task_clock`).
    pub stolen_ns: u64,
}

#[derive(Default)]
pub(crate) struct WorkerStats {
    polls: AtomicU64,
    switches: AtomicU64,
    schedule_calls: AtomicU64,
    ipis: AtomicU64,
    parks: AtomicU64,
    bad_picks: AtomicU64,
    wakeups: AtomicU64,
    ticks: AtomicU64,
    skipped_ticks: AtomicU64,
    stolen_ns: AtomicU64,
}

/// Owner-only increment: the worker is the single writer of its counters.
#[inline]
fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

impl WorkerStats {
    #[inline]
    pub fn polled(&self, n: u64, switched: bool) {
        bump(&self.polls, n);
        if switched {
            bump(&self.switches, 1);
        }
    }
    #[inline]
    pub fn scheduled(&self) {
        bump(&self.schedule_calls, 1);
    }
    pub fn parked(&self) {
        bump(&self.parks, 1);
    }
    pub fn bad_pick(&self) {
        bump(&self.bad_picks, 1);
    }
    /// `delivered` ticks given at once, and `skipped` periods that got none.
    #[inline]
    pub fn ticked(&self, delivered: u64, skipped: u64) {
        bump(&self.ticks, delivered);
        if skipped > 0 {
            bump(&self.skipped_ticks, skipped);
        }
    }
    /// `ns` of steal time noticed at a tick.
    #[inline]
    pub fn stolen(&self, ns: u64) {
        if ns > 0 {
            bump(&self.stolen_ns, ns);
        }
    }
    /// A wake-up done by this worker (its owner).
    #[inline]
    pub fn woke(&self) {
        bump(&self.wakeups, 1);
    }
}

/// One [`WorkerStats`] per worker, plus IPI counters per sender (the last one for
/// threads that are not workers, which may send concurrently, hence a real RMW there).
pub(crate) struct StatsTable {
    workers: Box<[CachePadded<WorkerStats>]>,
}

impl StatsTable {
    pub fn new(n: usize) -> StatsTable {
        StatsTable { workers: (0..=n).map(|_| CachePadded::new(WorkerStats::default())).collect() }
    }
    #[inline]
    pub fn worker(&self, w: usize) -> &WorkerStats {
        &self.workers[w.min(self.workers.len() - 1)]
    }
    /// An IPI sent by worker `from` (`None`: another thread).
    #[inline]
    pub fn ipi(&self, from: Option<usize>) {
        let i = from.map_or(self.workers.len() - 1, |w| w.min(self.workers.len() - 2));
        self.workers[i].ipis.fetch_add(1, Relaxed);
    }
    /// A wake-up done by worker `by` (its own counter), or by another thread (the
    /// shared last counter, with a real read-modify-write).
    #[inline]
    pub fn woke(&self, by: Option<usize>) {
        match by {
            Some(w) => self.worker(w).woke(),
            None => {
                self.workers[self.workers.len() - 1].wakeups.fetch_add(1, Relaxed);
            }
        }
    }
    pub fn sum(&self) -> Stats {
        let mut s = Stats::default();
        for w in self.workers.iter() {
            s.polls += w.polls.load(Relaxed);
            s.switches += w.switches.load(Relaxed);
            s.schedule_calls += w.schedule_calls.load(Relaxed);
            s.ipis += w.ipis.load(Relaxed);
            s.parks += w.parks.load(Relaxed);
            s.bad_picks += w.bad_picks.load(Relaxed);
            s.wakeups += w.wakeups.load(Relaxed);
            s.ticks += w.ticks.load(Relaxed);
            s.skipped_ticks += w.skipped_ticks.load(Relaxed);
            s.stolen_ns += w.stolen_ns.load(Relaxed);
        }
        s
    }
}

impl std::fmt::Debug for StatsTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.sum().fmt(f)
    }
}
