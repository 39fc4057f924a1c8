//! `RtPlatform`: the zero-cost [`Platform`] the runtime gives a core policy.
//!
//! * locks are real mutexes ([`RtLock`]): `parking_lot`'s, or with the `spin-lock`
//!   feature a spinning one (`super::lock` says why and how); `peek` locks too (Rust has no
//!   sound racy read of a `T`; no core policy peeks through a lock it holds);
//! * `now()` is nanoseconds since the runtime started (monotonic clock): since the
//!   policy was built, just before the workers start, so its constructor's time is not
//!   part of the clock's origin;
//!   `task_clock(cpu)` is that less worker `cpu`'s steal time (the time the host kept
//!   its thread off a CPU while it ran a task), which the simulator's CPUs never have;
//! * `charge`/`touch` are empty and inline away;
//! * `resched(cpu)` sets that worker's `need_resched` flag and, if it is another
//!   worker whose flag was clear, unparks it: that is the runtime's reschedule IPI
//!   ([`crate::resched`]).
//! * with tracing on ([`crate::Builder::trace`]) the locks record their holds and
//!   `resched` its IPIs (`crate::trace`); off, each of these hooks tests one `Option`.
//!
//! One `RtPlatform` value per worker (its `this_cpu`); threads that are not workers
//! (a `block_on` caller waking a task) use worker 0's view.

use super::lock::{lock, try_lock, PolicyMutex};
use crate::resched::Resched;
use crate::stats::StatsTable;
use crate::trace::Tracer;
use crossbeam_utils::CachePadded;
use schedlab_core::trace::Event;
use schedlab_core::{Access, CpuId, Line, Platform, SchedLock, TaskLayout, Work};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// Per-worker signals shared by all platform views: `need_resched` with its parker.
#[derive(Debug)]
pub(crate) struct Signals {
    /// Each worker's signals are on cache lines of their own (`CachePadded`): every
    /// worker polls its `need_resched` and writes its tick and steal figures, and a
    /// line shared between workers would be false sharing the simulator does not model.
    pub resched: Box<[CachePadded<Resched>]>,
    /// Per-worker counters, IPIs included.
    pub stats: StatsTable,
    /// When each worker's next timer tick is due (ns since `start`; written by the
    /// worker), so that a running task can tell that its time slice may be over.
    pub next_tick: Box<[CachePadded<AtomicU64>]>,
    /// When each worker's first tick was due (ns since `start`; 0 until its loop
    /// starts): its tick grid, which later ticks keep (`worker::due_tick`).
    pub first_tick: Box<[CachePadded<AtomicU64>]>,
    /// Each worker's steal time so far (ns its thread was kept off a CPU while it ran a
    /// task; written by the worker at its ticks): its task clock is the clock less this.
    pub steal: Box<[CachePadded<AtomicU64>]>,
    pub start: Instant,
    /// The trace recorder, when tracing is on (its clock is `start`).
    pub trace: Option<Arc<Tracer>>,
}

impl Signals {
    pub fn new(n: usize, start: Instant, trace: Option<Arc<Tracer>>) -> Signals {
        Signals {
            trace,
            next_tick: (0..n).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            first_tick: (0..n).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            steal: (0..n).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            start,
            resched: (0..n).map(|_| CachePadded::new(Resched::new())).collect(),
            stats: StatsTable::new(n),
        }
    }

    /// Start the clock (and the trace's) again at `start`, before any worker has read
    /// it; `None` if another view still shares the trace recorder.
    pub fn restart_clock(&mut self, start: Instant) -> Option<()> {
        if let Some(t) = &mut self.trace {
            Arc::get_mut(t)?.restart_clock(start);
        }
        self.start = start;
        Some(())
    }
}

/// A policy lock: the build's mutex (`super::lock`), and its index in a trace. Each
/// lock with the data it guards is on cache lines of its own, as the kernel's per-CPU
/// run queues are `____cacheline_aligned`: the simulator prices every queue as its own
/// line, and two workers' queues in one line would be false sharing it does not model.
#[derive(Debug)]
pub struct RtLock<T>(CachePadded<PolicyMutex<T>>, u32);

/// Traced, a lock hold: records the acquire (with the time spent waiting) when made,
/// on the calling thread's track, and the release when dropped. Callers declare it
/// after the guard, so it drops first: the release is recorded while the lock is still
/// held, and holds of one lock never overlap in the trace.
struct Hold<'a> {
    tr: &'a Tracer,
    worker: Option<usize>,
    lock: u32,
}

impl<'a> Hold<'a> {
    /// `t0`: when the caller started to take the lock.
    #[cold]
    #[inline(never)]
    fn new(p: &'a RtPlatform, lock: u32, t0: u64) -> Hold<'a> {
        let tr = p.trace.as_deref().expect("a hold is made only when tracing");
        let worker = p.signals.current_worker();
        let t1 = tr.now();
        tr.push(worker, t1, Event::LockAcquire { lock, wait_ns: t1.saturating_sub(t0) });
        Hold { tr, worker, lock }
    }
}

impl Drop for Hold<'_> {
    #[inline(never)]
    fn drop(&mut self) {
        self.tr.push(self.worker, self.tr.now(), Event::LockRelease { lock: self.lock });
    }
}

// Each hook calls the policy's closure at one place, whether tracing or not (two call
// sites would stop LLVM from inlining it: +110 instructions per ping-pong round trip
// under DSS, measured with cachegrind). Off, the cost is two tests of `p.trace`.
impl<T> SchedLock<T, RtPlatform> for RtLock<T> {
    #[inline]
    fn with<R>(&self, p: &RtPlatform, f: impl FnOnce(&mut T) -> R) -> R {
        let t0 = p.trace.as_deref().map(Tracer::now);
        let mut g = lock(&self.0);
        let _hold = t0.map(|t0| Hold::new(p, self.1, t0));
        f(&mut g)
    }
    #[inline]
    fn try_with<R>(&self, p: &RtPlatform, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let t0 = p.trace.as_deref().map(Tracer::now);
        let mut g = try_lock(&self.0)?;
        let _hold = t0.map(|t0| Hold::new(p, self.1, t0));
        Some(f(&mut g))
    }
    #[inline]
    fn peek<R>(&self, p: &RtPlatform, f: impl FnOnce(&T) -> R) -> R {
        let t0 = p.trace.as_deref().map(Tracer::now);
        let g = lock(&self.0);
        let _hold = t0.map(|t0| Hold::new(p, self.1, t0));
        f(&g)
    }
    fn inspect<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&lock(&self.0))
    }
}

/// One worker's view of the machine.
#[derive(Debug, Clone)]
pub struct RtPlatform {
    cpu: CpuId,
    start: Instant,
    signals: Arc<Signals>,
    /// `signals.trace`, one load closer: the lock hooks test it on every lock taken.
    trace: Option<Arc<Tracer>>,
    /// The task-table layout the policy is built with ([`Platform::task_layout`]).
    layout: TaskLayout,
}

impl RtPlatform {
    pub(crate) fn new(cpu: CpuId, start: Instant, signals: Arc<Signals>, layout: TaskLayout) -> RtPlatform {
        RtPlatform { cpu, start, trace: signals.trace.clone(), signals, layout }
    }

    /// The clock (ns since the runtime started), read now: never the worker's stamp.
    #[inline]
    pub(crate) fn read_clock(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// The views of a machine of `n` CPUs that belongs to no runtime: the runtime's
    /// own platform (the same locks, clock, and `resched` = flag + unpark of a parker
    /// nobody waits on), for driving a core policy's code directly from one thread
    /// (`schedlab bench`'s pick-next rows measure each policy this way).
    /// Their policies keep dense task tables: the pick-next rows measure the policy's
    /// algorithm, not the kernel layout (which at 100,000 tasks would put 800 MB of
    /// address space and a page per task under the measurement); see
    /// [`RtPlatform::detached_with`].
    pub fn detached(n: usize) -> Vec<RtPlatform> {
        RtPlatform::detached_with(n, TaskLayout::Dense)
    }

    /// [`RtPlatform::detached`] whose policies lay out their task tables as `layout`
    /// (the runtime's own choice is kernel blocks with the spec's colours).
    pub fn detached_with(n: usize, layout: TaskLayout) -> Vec<RtPlatform> {
        let start = Instant::now();
        let signals = Arc::new(Signals::new(n.max(1), start, None));
        (0..n.max(1)).map(|c| RtPlatform::new(c, start, signals.clone(), layout)).collect()
    }
}

impl Platform for RtPlatform {
    type Lock<T: Send> = RtLock<T>;
    fn new_lock<T: Send>(&self, name: &str, value: T) -> RtLock<T> {
        let id = self.trace.as_ref().map_or(0, |t| t.register_lock(name));
        RtLock(CachePadded::new(PolicyMutex::new(value)), id)
    }
    #[inline]
    fn this_cpu(&self) -> CpuId {
        self.cpu
    }
    #[inline]
    fn now(&self) -> u64 {
        match clock_stamp() {
            NO_STAMP => self.read_clock(),
            t => t,
        }
    }
    /// `rq_clock_task`: the clock less worker `cpu`'s steal time. A stall is known at
    /// the worker's next tick only, so a reading may step back after one; the policy
    /// keeps the largest (cfs's queue clock), which defers the steal to the next
    /// time charged there, as Linux does with steal it has not yet subtracted.
    #[inline]
    fn task_clock(&self, cpu: CpuId) -> u64 {
        let steal = self.signals.steal.get(cpu).map_or(0, |s| s.load(Relaxed));
        self.now().saturating_sub(steal)
    }
    #[inline]
    fn charge(&self, _: Work) {}
    #[inline]
    fn touch(&self, _: Line, _: Access) {}
    fn resched(&self, cpu: CpuId) {
        let Some(target) = self.signals.resched.get(cpu) else { return };
        // The target is asleep or busy elsewhere unless it is this very thread (a
        // non-worker thread borrows worker 0's view, so compare threads, not views).
        let here = self.signals.current_worker();
        if here == Some(cpu) {
            target.request_own();
            if self.trace.is_some() {
                Tracer::note_resched(cpu);
            }
            return;
        }
        // No IPI to a worker whose flag is still set (2.4: `!tsk->need_resched`), as
        // the simulator sends none to a CPU with one in flight.
        let sent = target.request();
        if let Some(tr) = &self.trace {
            Tracer::note_resched(cpu);
            // Stamped when the sender's side is done (the flag and the unpark), as the
            // simulator stamps its IPI after `ipi_send_cycles`: the `ipi` class of
            // `validate`'s distributions (IPI → the target's next switch) then times
            // the same interval on both engines, the one `ipi_latency_ns` starts.
            if sent {
                tr.push(here, tr.now(), Event::Ipi { to: cpu as u32 });
            }
        }
        if sent {
            self.signals.stats.ipi(here);
        }
    }
    fn task_layout(&self) -> TaskLayout {
        self.layout
    }
}

/// [`clock_stamp`] when the thread holds none.
const NO_STAMP: u64 = u64::MAX;

thread_local! {
    /// The clock as a policy worker read it after its last poll (ns since its runtime's
    /// start), while that worker runs the scheduler for it; [`NO_STAMP`] otherwise.
    static CLOCK_STAMP: std::cell::Cell<u64> = const { std::cell::Cell::new(NO_STAMP) };
}

#[inline]
fn clock_stamp() -> u64 {
    CLOCK_STAMP.with(|c| c.get())
}

/// A policy worker read the clock (`now`, after a poll): until [`clear_clock_stamp`],
/// `now()` on this thread returns it instead of reading the clock again. The policy
/// calls between two polls (`schedule`, a blocked task's late `wake_up`) then see the
/// time the poll ended, at most one scheduling pass (≈ 1 µs) old, and a same-worker
/// ping-pong reads the clock once per poll instead of twice (a clock read is ~50 ns on
/// this VM: a fifth of a policy scheduler's round trip).
#[inline]
pub(crate) fn set_clock_stamp(now: u64) {
    CLOCK_STAMP.with(|c| c.set(now))
}

/// The worker is about to poll or idle: `now()` reads the clock again.
#[inline]
pub(crate) fn clear_clock_stamp() {
    CLOCK_STAMP.with(|c| c.set(NO_STAMP))
}

impl Signals {
    /// Whether worker `w`'s running task should give up the worker: a reschedule was
    /// requested (`need_resched`) or a timer tick is due (it may end the time slice).
    #[inline]
    pub fn should_yield(&self, w: usize) -> bool {
        self.resched[w].is_set() || self.start.elapsed().as_nanos() as u64 >= self.next_tick[w].load(Relaxed)
    }
}
