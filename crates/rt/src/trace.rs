//! The runtime's half of the scheduling-trace vocabulary (`schedlab_core::trace`,
//! `docs/traces.md`): the same [`Event`]s the simulator records, taken on real workers.
//!
//! * **Per-worker buffers**, one per worker plus one for threads that are not workers
//!   (a `block_on` caller's wakes and spawns), each preallocated to the capacity given
//!   to [`crate::Builder::trace`] ([`DEFAULT_RING_CAPACITY`] if unsure). Each is
//!   written only by its own thread (its lock is never contended; the reader is
//!   [`crate::Runtime::take_trace`]).
//! * **Full buffer: the newest events are dropped** and counted, as the simulator's
//!   `--trace-cap` does, so that a runtime trace and a simulator trace of one
//!   `validate` row both cover the beginning of the run, every track keeps an unbroken
//!   prefix (a run slice or a lock hold is never cut at its start), and the buffer is
//!   written once, front to back, with no wrap-around.
//! * **Timestamps** are ns since the runtime started, from the one `Instant` every
//!   worker's platform reads (`CLOCK_MONOTONIC`, the same on every core).
//! * **Off** (the default) the runtime holds `None` where the tracer would be: each
//!   recording point is one test of that option, with no atomic, no thread-local read
//!   and no allocation behind it.
//!
//! Task ids are the policy's ids, which the runtime recycles when a task exits: a
//! `fork` event on an id starts a new task.

use crossbeam_utils::CachePadded;
use schedlab_core::trace::{Event, Record, Trace, TraceMeta};
use std::cell::Cell;
use std::time::Instant;

/// Events kept per worker, a reasonable [`crate::Builder::trace`] capacity: 262,144
/// (40 bytes each: 10 MB of address space per worker, touched only as it fills). A
/// 2-worker `chat:rooms=1,messages=40` run under DSS records about 29,000 per worker.
pub const DEFAULT_RING_CAPACITY: usize = 1 << 18;

/// One thread's buffer: its events in recording order, up to the capacity.
struct Ring {
    recs: Vec<Record>,
    dropped: u64,
}

/// The recorder of one runtime (present only when tracing is on).
pub(crate) struct Tracer {
    start: Instant,
    /// `workers + 1` buffers: one per worker, the last for other threads.
    rings: Box<[CachePadded<parking_lot::Mutex<Ring>>]>,
    cap: usize,
    /// Names of the policy's locks, by the index their events carry.
    locks: parking_lot::Mutex<Vec<String>>,
    /// The worker each task id last ran on (`u32::MAX`: not since its fork), for
    /// migration events. Written only by the worker that runs the task.
    last_cpu: Box<[std::sync::atomic::AtomicU32]>,
}

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer").field("workers", &(self.rings.len() - 1)).field("cap", &self.cap).finish()
    }
}

thread_local! {
    /// The CPU the last `resched` on this thread asked for: what a wake-up's `target` is.
    static RESCHED_TARGET: Cell<Option<u32>> = const { Cell::new(None) };
}

const NEVER: u32 = u32::MAX;

impl Tracer {
    pub fn new(workers: usize, cap: usize, max_tasks: usize, start: Instant) -> Tracer {
        let cap = cap.max(1);
        Tracer {
            start,
            rings: (0..=workers)
                .map(|_| CachePadded::new(parking_lot::Mutex::new(Ring { recs: Vec::with_capacity(cap), dropped: 0 })))
                .collect(),
            cap,
            locks: parking_lot::Mutex::new(Vec::new()),
            last_cpu: (0..max_tasks).map(|_| std::sync::atomic::AtomicU32::new(NEVER)).collect(),
        }
    }

    /// Count from `start` instead (the policy's clock starts once it is built: nothing
    /// has been recorded yet, only lock names registered).
    pub fn restart_clock(&mut self, start: Instant) {
        self.start = start;
    }

    /// ns since the runtime started (every worker's clock).
    #[inline]
    pub fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// The buffer of worker `w`, or of threads that are not workers (`None`).
    fn ring_of(&self, w: Option<usize>) -> usize {
        w.map_or(self.rings.len() - 1, |w| w.min(self.rings.len() - 1))
    }

    /// Record `ev` at `ts_ns` on worker `w`'s track (`None`: the outside track).
    pub fn push(&self, w: Option<usize>, ts_ns: u64, ev: Event) {
        let i = self.ring_of(w);
        let mut r = self.rings[i].lock();
        if r.recs.len() < self.cap {
            r.recs.push(Record { ts_ns, cpu: i as u32, ev });
        } else {
            r.dropped += 1;
        }
    }

    /// A lock the policy created: its index in the trace.
    pub fn register_lock(&self, name: &str) -> u32 {
        let mut l = self.locks.lock();
        l.push(name.to_string());
        (l.len() - 1) as u32
    }

    /// A new task took `id`: it has run nowhere yet.
    pub fn forked(&self, id: u32) {
        if let Some(c) = self.last_cpu.get(id as usize) {
            c.store(NEVER, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Task `id` starts running on worker `w`: the worker it ran on before, if another.
    pub fn dispatched(&self, id: u32, w: usize) -> Option<u32> {
        let c = self.last_cpu.get(id as usize)?;
        let before = c.swap(w as u32, std::sync::atomic::Ordering::Relaxed);
        (before != NEVER && before != w as u32).then_some(before)
    }

    /// Start watching which CPU a `resched` on this thread asks for.
    pub fn watch_resched() {
        RESCHED_TARGET.with(|t| t.set(None));
    }
    /// `resched(cpu)` was called on this thread.
    pub fn note_resched(cpu: usize) {
        RESCHED_TARGET.with(|t| t.set(Some(cpu as u32)));
    }
    /// The last CPU a `resched` on this thread asked for since [`Tracer::watch_resched`].
    pub fn resched_target() -> Option<u32> {
        RESCHED_TARGET.with(|t| t.take())
    }

    /// Everything recorded so far, every buffer's, in one trace for core's writer (which
    /// orders each track by time); the buffers start again, empty. `source` names the run.
    pub fn take(&self, source: String) -> Trace {
        let workers = self.rings.len() - 1;
        let mut records = Vec::new();
        let mut dropped = 0;
        for ring in self.rings.iter() {
            let mut r = ring.lock();
            let fresh = Vec::with_capacity(self.cap);
            records.extend(std::mem::replace(&mut r.recs, fresh));
            dropped += std::mem::take(&mut r.dropped);
        }
        let mut track_names: Vec<String> = (0..workers).map(|w| format!("worker {w}")).collect();
        track_names.push("other threads".to_string());
        let meta =
            TraceMeta { source, cpus: workers, task_roles: Vec::new(), locks: self.locks.lock().clone(), track_names };
        Trace { meta, records, cap: self.cap, dropped }
    }
}
