//! The simulator's platform: turns a policy's locks, memory accesses and work into
//! virtual time on the CPU it runs on.
//!
//! A policy call runs atomically at one event, but its *cost* advances a per-call
//! cursor: each [`Work`] adds cycles, each [`Platform::touch`] adds the latency the
//! coherence model gives, and each lock acquire first waits until the modelled lock is
//! free. Locks are granted in the order of the events that want them (a FIFO spinlock
//! in virtual time): an acquire at cursor `t` of a lock released at `free_at > t` spins
//! until `free_at`, burning its CPU. Every acquire and release is recorded, as
//! Lockmeter did.
//!
//! Cache lines follow a MESI-like model with one state per line: which CPUs hold a
//! copy and which one (if any) holds it modified. A read that misses is served by the
//! modified copy's cache (cache-to-cache transfer) or by memory on the line's home
//! node (node 0: the kernel of the NUMA study kept its data there); a write to a line
//! others hold invalidates them.
//!
//! On top of coherence, each CPU has a private set-associative L2 ([`L2Cache`]: size,
//! ways and line size from the machine, true LRU by small stamps, ways scanned
//! linearly). A line is present in a CPU's cache only while that CPU is among its
//! sharers; filling a set evicts its least recently used way, which removes the CPU
//! from that line's sharers (and, if it held the line modified, is a write-back). So a
//! line can miss because another CPU took it (coherence) or because it was evicted
//! (capacity or set conflict). Every line has an address in the kernel's layout
//! ([`line_addr`](SimPlatform::line_addr)): a task's scheduler-hot line at offset
//! [`TASK_HOT_OFFSET`] of its 8 KB-aligned block, run queues and per-CPU data in
//! kernel data at [`KDATA_BASE`]. Memory traffic is counted as bus transactions
//! ([`BusStats`]).

use crate::cost::{CostModel, CostParams};
use schedlab_core::cpu::MAX_CPUS;
use schedlab_core::trace::{Event, TraceBuf};
use schedlab_core::{Access, CpuId, Line, Platform, SchedLock, TaskId, Work};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

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

#[derive(Debug)]
struct LockState {
    stats: LockStats,
    /// Virtual time the current or last holder releases it.
    free_at: u64,
    acquired_at: u64,
    /// CPU that last held it (its lock word is in that CPU's cache).
    last_cpu: Option<CpuId>,
}

const NO_OWNER: u8 = u8::MAX;
/// `LineState::set_base` of a line whose set can never overflow: no LRU state.
const NO_LRU: u32 = u32::MAX;

/// One line's coherence state. Each field is its own cell: an access reads and writes
/// only the fields it needs (a hit reads two; an eviction updates two), where copying
/// the whole state in and out was five loads and five stores per miss and eviction.
#[derive(Debug)]
struct LineState {
    sharers: Cell<u64>,
    dirty: Cell<u8>,
    /// Node whose memory holds the line (NO_OWNER: not yet placed, first touch decides).
    home: Cell<u8>,
    /// Nodes whose shared cache below the L2 holds a valid copy of this line: the
    /// remote cache (NUMA-Q's IQ-Link; lines of other nodes only) or, on a machine with
    /// a last-level cache, the node's LLC (every line the node fetched).
    remote: Cell<u16>,
    /// Offset of the line's L2 set in a CPU's tags (dense set index × ways): kept
    /// here, in the 16 bytes the coherence state needs anyway, so that an access
    /// reads one host cache line for both.
    set_base: Cell<u32>,
}

pub use schedlab_core::layout::{TASK_BASE, TASK_BLOCK, TASK_HOT_OFFSET};
/// Kernel static data (run queues then per-CPU data): each object on its own 128-byte
/// slot (`____cacheline_aligned` for the largest line of the modelled machines).
pub const KDATA_BASE: u64 = 0xC030_0000;
/// Slot of one kernel-data object.
pub const KDATA_SLOT: u64 = 128;
/// Physical base of the tasks' own working sets (user memory, above the kernel image
/// and task blocks of a 640 MB-era machine). Each task's working set is contiguous and
/// page-aligned, [`ws_stride`](SimPlatform::with_working_sets) bytes apart.
pub const USER_BASE: u64 = 0x1000_0000;

/// Line classes of [`BusStats`].
pub const CLASS_TASK: usize = 0;
pub const CLASS_SCHED: usize = 1;
pub const CLASS_WORKLOAD: usize = 2;
/// Kinds of bus transactions.
pub const KIND_READ_MISS: usize = 0;
pub const KIND_RFO: usize = 1;
pub const KIND_WRITEBACK: usize = 2;
pub const KIND_C2C: usize = 3;

/// Bus transactions, `by[class][kind]`, and the run-queue-walk counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BusStats {
    pub by: [[u64; 4]; 3],
    /// Reads of task lines made while a lock is held, and how many missed in L2.
    pub locked_task_reads: u64,
    pub locked_task_misses: u64,
}

/// Where every line lives: the address map of [`SimPlatform`]'s line indices.
#[derive(Clone, Copy)]
struct Geometry {
    task_lines: usize,
    ws_base: usize,
    ws_lines: usize,
    colours: u32,
    line_bytes: u32,
}

impl Geometry {
    /// Address of line `i` in the kernel's layout: task lines at [`TASK_HOT_OFFSET`]
    /// of their 8 KB block, shifted by `colour × line_bytes` with
    /// `colour = (block >> 13) & (colours − 1)` (the colouring paper, S6 in docs/sources.md); then run queues and
    /// per-CPU data, one [`KDATA_SLOT`] each, in kernel data; then each task's
    /// working set, contiguous from a page boundary at [`USER_BASE`].
    fn addr_of(&self, i: usize) -> u64 {
        if i < self.task_lines {
            schedlab_core::layout::task_hot_addr(TASK_BASE + i as u64 * TASK_BLOCK, self.colours, self.line_bytes)
        } else if i < self.ws_base {
            KDATA_BASE + (i - self.task_lines) as u64 * KDATA_SLOT
        } else {
            let (t, j) = ((i - self.ws_base) / self.ws_lines, (i - self.ws_base) % self.ws_lines);
            let stride = (self.ws_lines as u64 * self.line_bytes as u64).next_multiple_of(4096);
            USER_BASE + t as u64 * stride + j as u64 * self.line_bytes as u64
        }
    }
}

/// The platform for one simulation.
pub struct SimPlatform {
    cpu: Cell<CpuId>,
    cursor: Cell<u64>,
    /// A running task's operation is calling the policy (a send's wake-up, a spawn, a
    /// yield): the runtime has no clock stamp then, so each `now`/`task_clock` the
    /// policy asks for is a clock read (`clock_read_ns`; 0 on the kernel presets).
    in_task_op: Cell<bool>,
    /// What the policy's clock reads at time 0 (the root's fork): see
    /// `CostModel::clock_origin`. Only `now` adds it; events and traces keep time 0.
    clock_origin: u64,
    pub cost: CostModel,
    node_of: Vec<usize>,
    /// `node_of` in a table of the largest machine's size, indexed by a masked CPU
    /// (no bounds check: read at every `begin` and on the miss paths).
    node_at: Box<[usize; MAX_CPUS]>,
    locks: RefCell<Vec<LockState>>,
    lines: Vec<LineState>,
    task_lines: usize,
    queue_lines: usize,
    /// First working-set line, and working-set lines per task.
    ws_base: usize,
    ws_lines: usize,
    /// Whether a node's shared cache below the L2 keeps a line it fetches, as masks
    /// for `LineState::remote` (all ones or zero), fixed by the machine: with an LLC
    /// every line (`keep_always`), with a remote cache another node's line
    /// (`keep_if_remote`). A miss selects with them instead of testing two latencies.
    keep_always: u16,
    keep_if_remote: u16,
    /// Latency of a read served by the shared cache below the L2 that a machine has
    /// (the LLC, else the remote cache): read on a miss the cache keeps.
    below_l2_ns: u64,
    /// Every node's bit with an LLC, none without: `1 << node` masked by it is what a
    /// write leaves in `LineState::remote` ([`kept_on_write`](Self::kept_on_write)).
    /// Computed at the (rarer) writes, not at every `begin`: 0 on every preset.
    llc_keep: u16,
    /// Reschedule requests of the current call: the target, and, when the request paid
    /// an IPI's send, the cursor after it (the IPI leaves then, inside the caller's lock
    /// hold). A request for the calling CPU, or for one with an IPI already on its way,
    /// sends none.
    resched: RefCell<Vec<(CpuId, Option<u64>)>>,
    /// CPUs (`1 << cpu`) with a reschedule IPI on its way: 2.4's `reschedule_idle` sends
    /// one only to a CPU whose task has no `need_resched` yet. Set here when a request
    /// pays the send; cleared by the engine when the IPI arrives. The one record of it:
    /// the engine reads it through [`ipi_in_flight`](SimPlatform::ipi_in_flight).
    ipi_in_flight: Cell<u64>,
    /// Address of each task's structure (`task_addr[id]`).
    task_addr: RefCell<Vec<u64>>,
    /// Every CPU's L2, `[cpu][set][way]` flat: line index + 1 (0 = empty), most
    /// recently used way first. Only the sets some modelled line maps to are stored
    /// (numbered densely, [`SimPlatform::line_set`]): the others can never hold a line,
    /// and leaving them out keeps the array small enough to stay in the host's cache
    /// (8 KB-aligned task blocks fall into few sets; a full 2 MB L2 × 8 CPUs of tags
    /// made every simulated access a host cache miss, 30 % of the run time).
    tags: Vec<Cell<u32>>,
    /// The same sets when the L2 is 4-way (every preset): one 16-byte value per set,
    /// loaded and stored whole, so that moving a tag to the front, filling and
    /// dropping are a few register compares and moves instead of a loop over four
    /// cells with a bounds check each. `tags` is empty then.
    quads: Vec<Cell<[u32; 4]>>,
    /// Whether the sets are in `quads`.
    quad: bool,
    /// For each node, the other nodes' CPUs (`1 << cpu` masks) with the latency of a
    /// transfer from them to this node, farthest first: an upgrade's latency is that
    /// of the first entry that holds one of the other sharers.
    upgrade_from: Vec<Vec<(u64, u64)>>,
    /// Offset of the current CPU's tags.
    cpu_tags: Cell<usize>,
    /// Tags per CPU (dense sets × ways): CPU `c`'s tags start at `c × cpu_stride`.
    cpu_stride: usize,
    /// Node of the current CPU (`node_of[cpu]`, read on every miss).
    node: Cell<usize>,
    /// Whether every CPU is on one node: then every transfer costs the same and an
    /// upgrade's latency needs no loop over the other sharers.
    one_node: bool,
    /// An upgrade's latency when `one_node`: a transfer within that node.
    one_node_upgrade_ns: u64,
    /// Sets of the whole L2 (before the dense numbering).
    nsets_full: u64,
    ways: usize,
    set_mask: u64,
    line_shift: u32,
    /// Dense index of the set every line maps to (fixed by its address): lines
    /// share a dense index exactly when they share a cache set.
    colours: u32,
    line_bytes: u32,
    /// Bus transactions, `[class * 4 + kind]` (a fixed array: the index is in range by
    /// construction, so the count is one add with no bounds check).
    bus: [Cell<u64>; 12],
    /// Reads of task lines, and those that missed, ever (the walk counters below are
    /// their growth while a lock is held: counting every task-line read costs one add
    /// where the line kind is known at compile time, `touch`, and no test of the lock).
    task_reads: Cell<u64>,
    task_read_misses: Cell<u64>,
    /// `(task_reads, task_read_misses)` when the outermost lock was taken.
    walk_mark: Cell<(u64, u64)>,
    walk_reads: Cell<u64>,
    walk_misses: Cell<u64>,
    locks_held: Cell<u32>,
    /// The first lock the current `schedule()` call acquired (`usize::MAX`: none yet),
    /// and when its waiter began to ask if the engine deferred the call
    /// ([`SimPlatform::lock_seen_free_at`]; `u64::MAX`: not deferred).
    first_lock: Cell<usize>,
    asked_at: Cell<u64>,
    /// A `schedule()` call is under way whose first acquire is still to come (only on
    /// a machine whose waiter backs off: the presets test this one flag).
    schedule_open: Cell<bool>,
    /// `1 << cpu` of the current call.
    me: Cell<u64>,
    /// The scheduling trace being recorded (`None`: off, one branch per event).
    trace: Option<RefCell<TraceBuf>>,
    /// The open [`overlapped`](Platform::overlapped) scope, if any (never at `mlp` 1).
    overlap: Overlap,
    /// Each CPU's pending write misses (empty and never used at `store_buffer` 0).
    store_buffers: StoreBuffers,
}

/// Each CPU's store buffer, as far as it delays anything: the completion times of its
/// pending write misses and upgrades, oldest first. x86 (TSO) commits stores in program
/// order, so a store completes no earlier than the one before it and the times are
/// ascending: the front is the oldest, the back the time the buffer is empty.
/// A buffer outlives the policy call that filled it (`switch_to` and a call's return
/// do not serialize), so it is kept per CPU.
#[derive(Debug, Default)]
struct StoreBuffers {
    /// Entries per CPU (`CostParams::store_buffer`; 0: off, writes charged in place).
    depth: usize,
    pending: RefCell<Vec<VecDeque<u64>>>,
}

impl StoreBuffers {
    fn new(depth: usize, cpus: usize) -> StoreBuffers {
        StoreBuffers {
            depth,
            pending: RefCell::new(vec![VecDeque::with_capacity(depth); if depth > 0 { cpus } else { 0 }]),
        }
    }

    /// A write miss of `ns` by `cpu` at `now`: retired into the buffer. Returns when
    /// the CPU goes on: `now`, or when the oldest pending store completes if the buffer
    /// is full. The store completes `ns` after it retires, and not before the one
    /// ahead of it.
    fn retire(&self, cpu: CpuId, now: u64, ns: u64) -> u64 {
        let mut all = self.pending.borrow_mut();
        let q = &mut all[cpu];
        while q.front().is_some_and(|&end| end <= now) {
            q.pop_front();
        }
        let mut goes_on = now;
        if q.len() == self.depth {
            // Full: the CPU stalls until the oldest store commits (and every other
            // store that has completed by then leaves with it).
            goes_on = q.pop_front().expect("a full buffer has an oldest store");
            while q.front().is_some_and(|&end| end <= goes_on) {
                q.pop_front();
            }
        }
        let end = (goes_on + ns).max(q.back().copied().unwrap_or(0));
        q.push_back(end);
        goes_on
    }

    /// When every store `cpu` has pending has completed (`now` if none is), and the
    /// buffer emptied.
    fn drain(&self, cpu: CpuId, now: u64) -> u64 {
        let mut all = self.pending.borrow_mut();
        let q = &mut all[cpu];
        let empty_at = q.back().map_or(now, |&end| end.max(now));
        q.clear();
        empty_at
    }

    /// When a plain store `cpu` makes at `now` becomes visible to the other CPUs: after
    /// every store ahead of it in the buffer (TSO). The buffer is left as it is.
    fn visible_at(&self, cpu: CpuId, now: u64) -> u64 {
        self.pending.borrow()[cpu].back().map_or(now, |&end| end.max(now))
    }
}

/// Accesses a policy marked independent, in flight together: the cursor is where the
/// next one issues (pure work advances it), each access starts there or when the one
/// `mlp` accesses before it ended, whichever is later (at most `mlp` outstanding),
/// and the scope ends at the latest end.
#[derive(Debug, Default)]
struct Overlap {
    open: Cell<bool>,
    /// `mlp` > 1 and no scope open: the one test `overlapped` makes.
    ready: Cell<bool>,
    /// End of access `i`, at `i % mlp`.
    ends: [Cell<u64>; CostParams::MAX_MLP as usize],
    /// Accesses issued in the scope so far.
    issued: Cell<usize>,
    /// The latest end so far.
    last_end: Cell<u64>,
}

impl SimPlatform {
    /// Policy calls from here on are made by a running task's operation (or not).
    #[inline]
    pub(crate) fn set_in_task_op(&self, on: bool) {
        self.in_task_op.set(on);
    }
}

impl SimPlatform {
    /// A platform with one L2 per CPU of `l2_kb` KB, `l2_assoc` ways and
    /// `line_bytes`-byte lines (validated by [`crate::Machine::validate`]).
    pub fn new(
        cost: CostModel,
        node_of: Vec<usize>,
        task_capacity: usize,
        l2_kb: u32,
        l2_assoc: u32,
        line_bytes: u32,
        colours: u32,
    ) -> SimPlatform {
        SimPlatform::build(cost, node_of, task_capacity, (l2_kb, l2_assoc, line_bytes), colours, 0)
    }

    /// This platform with `lines` cache lines of working set per task: the task's own
    /// memory, touched when it computes ([`SimPlatform::touch_working_set`]).
    pub fn with_working_sets(self, lines: usize) -> SimPlatform {
        if lines == 0 {
            return self;
        }
        let l2 = (
            (self.nsets_full * self.ways as u64 * self.line_bytes as u64 / 1024) as u32,
            self.ways as u32,
            self.line_bytes,
        );
        SimPlatform::build(self.cost, self.node_of, self.task_lines, l2, self.colours, lines)
    }

    fn build(
        cost: CostModel,
        node_of: Vec<usize>,
        task_capacity: usize,
        (l2_kb, l2_assoc, line_bytes): (u32, u32, u32),
        colours: u32,
        ws_lines: usize,
    ) -> SimPlatform {
        let ncpus = node_of.len();
        let mlp = cost.mlp;
        let store_buffer = cost.store_buffer;
        // Queue lines: enough for one run queue per CPU plus a global one; as many
        // tree lines (`Line::Tree`) after the CPUs' data, then `Line::IdleMap`.
        let queue_lines = ncpus + 1;
        let ws_base = task_capacity + queue_lines + ncpus + queue_lines + 1;
        let nlines = ws_base + task_capacity * ws_lines;
        // One bit per node in `LineState::remote` (remote cache or LLC).
        let bit_per_node = node_of.iter().max().is_some_and(|&n| n < 16);
        let remote_cache_ns = if bit_per_node { cost.remote_cache_ns } else { 0 };
        let llc_ns = if bit_per_node { cost.llc_ns } else { 0 };
        let geo = Geometry { task_lines: task_capacity, ws_base, ws_lines, colours, line_bytes };
        let ways = l2_assoc.max(1) as usize;
        let sets = ((l2_kb as u64 * 1024) / (ways as u64 * line_bytes as u64)).max(1);
        let line_shift = line_bytes.max(1).trailing_zeros();
        let set_mask = sets.next_power_of_two() - 1;
        let set_of: Vec<u64> = (0..nlines).map(|i| (geo.addr_of(i) >> line_shift) & set_mask).collect();
        // Only sets that more lines map to than they have ways can ever evict: only
        // those need recency order (tags). The others hold their lines for good, and
        // their lines skip the LRU bookkeeping entirely (NO_LRU).
        let mut sorted = set_of.clone();
        sorted.sort_unstable();
        let mut used: Vec<u64> = Vec::new();
        for run in sorted.chunk_by(|a, b| a == b) {
            if run.len() > ways {
                used.push(run[0]);
            }
        }
        let set_base = |i: usize| match used.binary_search(&set_of[i]) {
            Ok(d) => (d * ways) as u32,
            Err(_) => NO_LRU,
        };
        let dense_sets = used.len();
        let node_of_one = node_of.iter().all(|&n| n == node_of[0]);
        let quad = ways == 4;
        let nnodes = node_of.iter().max().map_or(1, |&n| n + 1);
        let upgrade_from = (0..nnodes)
            .map(|to| {
                let mut v: Vec<(u64, u64)> = (0..nnodes)
                    .map(|from| {
                        let mask =
                            node_of.iter().enumerate().filter(|&(_, &n)| n == from).fold(0u64, |m, (c, _)| m | 1 << c);
                        (mask, cost.transfer_ns(from, to))
                    })
                    .filter(|&(mask, _)| mask != 0)
                    .collect();
                // Farthest first; equal latencies in node order (either gives the same value).
                v.sort_by_key(|&(_, ns)| std::cmp::Reverse(ns));
                v
            })
            .collect();
        let first_node = node_of.first().copied().unwrap_or(0);
        let one_node_upgrade_ns = cost.transfer_ns(first_node, first_node);
        let mut node_at = Box::new([0; MAX_CPUS]);
        node_at[..ncpus].copy_from_slice(&node_of);
        SimPlatform {
            cpu: Cell::new(0),
            cursor: Cell::new(0),
            in_task_op: Cell::new(false),
            clock_origin: 0,
            node_of,
            node_at,
            locks: RefCell::new(Vec::new()),
            keep_always: if llc_ns > 0 { u16::MAX } else { 0 },
            keep_if_remote: if remote_cache_ns > 0 { u16::MAX } else { 0 },
            below_l2_ns: if llc_ns > 0 { llc_ns } else { remote_cache_ns },
            llc_keep: if llc_ns > 0 { u16::MAX } else { 0 },
            cost,
            // Kernel lines live on node 0 (the NUMA study's kernel kept its data there);
            // working-set pages on the node that touches them first.
            lines: (0..nlines)
                .map(|i| LineState {
                    sharers: Cell::new(0),
                    dirty: Cell::new(NO_OWNER),
                    home: Cell::new(if i < ws_base { 0 } else { NO_OWNER }),
                    remote: Cell::new(0),
                    set_base: Cell::new(set_base(i)),
                })
                .collect(),
            task_lines: task_capacity,
            queue_lines,
            ws_base,
            ws_lines,
            nsets_full: sets,
            resched: RefCell::new(Vec::with_capacity(64)),
            ipi_in_flight: Cell::new(0),
            task_addr: RefCell::new(Vec::with_capacity(task_capacity)),
            tags: if quad { Vec::new() } else { vec![Cell::new(0); ncpus * dense_sets * ways] },
            quads: if quad { vec![Cell::new([0; 4]); ncpus * dense_sets] } else { Vec::new() },
            quad,
            upgrade_from,
            cpu_tags: Cell::new(0),
            cpu_stride: dense_sets * ways,
            node: Cell::new(0),
            one_node: node_of_one,
            one_node_upgrade_ns,
            ways,
            set_mask,
            line_shift,
            colours,
            line_bytes,
            bus: Default::default(),
            task_reads: Cell::new(0),
            task_read_misses: Cell::new(0),
            walk_mark: Cell::new((0, 0)),
            walk_reads: Cell::new(0),
            walk_misses: Cell::new(0),
            locks_held: Cell::new(0),
            first_lock: Cell::new(usize::MAX),
            asked_at: Cell::new(u64::MAX),
            schedule_open: Cell::new(false),
            me: Cell::new(1),
            trace: None,
            overlap: Overlap { ready: Cell::new(mlp > 1), ..Overlap::default() },
            store_buffers: StoreBuffers::new(store_buffer, ncpus),
        }
    }

    /// This platform with the policy's clock reading `origin` at time 0.
    pub fn with_clock_origin(mut self, origin: u64) -> SimPlatform {
        self.clock_origin = origin;
        self
    }

    /// This platform recording a scheduling trace of at most `cap` events.
    pub fn with_trace(mut self, cap: usize) -> SimPlatform {
        self.trace = Some(RefCell::new(TraceBuf::new(cap)));
        self
    }

    /// Record `ev()` at the cursor on the current CPU, when tracing.
    #[inline]
    pub fn trace(&self, ev: impl FnOnce() -> Event) {
        if let Some(t) = &self.trace {
            t.borrow_mut().push(self.cursor.get(), self.cpu.get(), ev());
        }
    }

    /// Record `ev()` at `ts_ns` on `cpu`, when tracing.
    #[inline]
    pub fn trace_at(&self, ts_ns: u64, cpu: CpuId, ev: impl FnOnce() -> Event) {
        if let Some(t) = &self.trace {
            t.borrow_mut().push(ts_ns, cpu, ev());
        }
    }

    /// Whether a trace is being recorded.
    #[inline]
    pub fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    /// The recorded events, leaving tracing off.
    pub fn take_trace(&mut self) -> Option<TraceBuf> {
        self.trace.take().map(RefCell::into_inner)
    }

    /// Reschedule requests not yet drained (the trace reads a wake-up's target as
    /// the request its policy call added).
    pub fn resched_pending(&self) -> &RefCell<Vec<(CpuId, Option<u64>)>> {
        &self.resched
    }

    /// Whether a reschedule IPI is on its way to `cpu`.
    #[inline]
    pub fn ipi_in_flight(&self, cpu: CpuId) -> bool {
        self.ipi_in_flight.get() & (1u64 << cpu) != 0
    }

    /// `cpu`'s reschedule IPI has arrived: the next request for it sends another.
    #[inline]
    pub fn ipi_arrived(&self, cpu: CpuId) {
        self.ipi_in_flight.set(self.ipi_in_flight.get() & !(1u64 << cpu));
    }

    fn geometry(&self) -> Geometry {
        Geometry {
            task_lines: self.task_lines,
            ws_base: self.ws_base,
            ws_lines: self.ws_lines,
            colours: self.colours,
            line_bytes: self.line_bytes,
        }
    }
    /// Address of a line in the kernel's layout.
    pub fn line_addr(&self, line: Line) -> u64 {
        self.geometry().addr_of(self.line_index(line))
    }
    /// Address of line `j` of task `t`'s working set.
    pub fn working_set_addr(&self, t: TaskId, j: usize) -> u64 {
        self.geometry().addr_of(self.ws_base + t as usize * self.ws_lines + j)
    }
    /// L2 set a line maps to.
    pub fn line_set_of(&self, line: Line) -> u64 {
        (self.line_addr(line) >> self.line_shift) & self.set_mask
    }
    pub fn bus_stats(&self) -> BusStats {
        let mut b = BusStats {
            locked_task_reads: self.walk_reads.get(),
            locked_task_misses: self.walk_misses.get(),
            ..BusStats::default()
        };
        for (i, c) in self.bus.iter().enumerate() {
            b.by[i / 4][i % 4] = c.get();
        }
        b
    }

    /// Line `idx`, which the current CPU holds (it is among the line's sharers, so its
    /// tag is in the set at `base`), becomes the most recently used way (move-to-front:
    /// each set's ways are kept in recency order).
    #[inline(always)]
    fn make_mru(&self, idx: usize, base: usize) {
        let tag = idx as u32 + 1;
        if self.quad {
            let cell = self.quad_at(base);
            let [a, b, c, d] = cell.get();
            debug_assert!(a == tag || b == tag || c == tag || d == tag, "line {idx}: a sharer's tag is not in its set");
            // The ways more recent than the tag's move down one; with the tag in way 0
            // the set stays as it is. Selects and one store, no branch: whether a hit
            // is on way 0 depends on the run, and the host CPU mispredicted it often
            // enough to cost more than the store.
            let (in_a, in_b) = (a == tag, b == tag);
            cell.set([tag, if in_a { b } else { a }, if in_a | in_b { c } else { b }, if d == tag { c } else { d }]);
        } else if self.tags[base].get() != tag {
            self.cache_promote(idx, base);
        }
    }

    /// [`make_mru`](Self::make_mru) of a set that is not 4-way, whose tag is not in
    /// way 0.
    #[inline(never)]
    fn cache_promote(&self, idx: usize, base: usize) {
        let tag = idx as u32 + 1;
        let set = &self.tags[base..base + self.ways];
        // The tag is there (a sharer's line is in its cache), and not in way 0 (the
        // caller checked): shift the more recent ways down until it is found.
        let mut carry = set[0].get();
        for way in &set[1..] {
            carry = way.replace(carry);
            if carry == tag {
                set[0].set(tag);
                return;
            }
        }
        unreachable!("line {idx}: a sharer's tag is not in its set");
    }

    /// Line `idx`, which `cpu` does not hold, is filled into the set at `base` as its
    /// most recently used way. Ways are compact (the lines in recency order, then the
    /// empty ways: a line that loses this CPU as a sharer leaves its way at once,
    /// `drop_tag`), so the set is full exactly when its last way is taken; then the
    /// last (least recently used) way's line leaves this cache, which drops this CPU
    /// from its sharers (a write-back if it held it modified).
    #[inline(always)]
    fn cache_fill(&self, cpu: CpuId, idx: usize, base: usize) {
        if self.quad {
            let cell = self.quad_at(base);
            let [a, b, c, d] = cell.get();
            if d != 0 {
                self.evict(cpu, d as usize - 1);
            }
            // Compact ways: shifting every way down one drops the last (evicted or empty).
            cell.set([idx as u32 + 1, a, b, c]);
            return;
        }
        let set = &self.tags[base..base + self.ways];
        let last = set[self.ways - 1].get();
        let pos = if last != 0 {
            self.evict(cpu, last as usize - 1);
            self.ways - 1
        } else {
            set.iter().position(|t| t.get() == 0).unwrap_or(self.ways - 1)
        };
        for w in (1..=pos).rev() {
            set[w].set(set[w - 1].get());
        }
        set[0].set(idx as u32 + 1);
    }

    /// Line `oi`, the least recently used of a full set of `cpu`'s cache, leaves it:
    /// `cpu` is no longer a sharer, and a modified copy is written back.
    #[inline(always)]
    fn evict(&self, cpu: CpuId, oi: usize) {
        let line = self.line_at(oi);
        line.sharers.set(line.sharers.get() & !(1u64 << cpu));
        if line.dirty.get() as usize == cpu {
            line.dirty.set(NO_OWNER);
            self.count(self.class_of(oi), KIND_WRITEBACK);
        }
    }

    /// Line `idx` leaves the caches of the CPUs in `cpus` (invalidated by another CPU's
    /// write): in each, its way is freed and the ways behind it move up, keeping the set
    /// compact. One call for all of them, so the layout test and the tag are not
    /// repeated per CPU (a write to a shared line invalidates five copies on average).
    #[inline(always)]
    fn drop_tags(&self, mut cpus: u64, idx: usize, set_base: u32) {
        let tag = idx as u32 + 1;
        if self.quad {
            while cpus != 0 {
                let cpu = cpus.trailing_zeros() as usize;
                cpus &= cpus - 1;
                let cell = self.quad_at(cpu * self.cpu_stride + set_base as usize);
                let [a, b, c, d] = cell.get();
                // The ways behind the dropped one move up; the last becomes empty.
                // Selects, not a compare-and-branch chain: which way holds a shared
                // line is data the host CPU cannot predict.
                let (in_a, in_b, in_c, in_d) = (a == tag, b == tag, c == tag, d == tag);
                let by_b = in_a | in_b;
                let by_c = by_b | in_c;
                cell.set([
                    if in_a { b } else { a },
                    if by_b { c } else { b },
                    if by_c { d } else { c },
                    if by_c | in_d { 0 } else { d },
                ]);
            }
            return;
        }
        while cpus != 0 {
            let cpu = cpus.trailing_zeros() as usize;
            cpus &= cpus - 1;
            let base = cpu * self.cpu_stride + set_base as usize;
            let set = &self.tags[base..base + self.ways];
            if let Some(p) = set.iter().position(|t| t.get() == tag) {
                for w in p..self.ways - 1 {
                    set[w].set(set[w + 1].get());
                }
                set[self.ways - 1].set(0);
            }
        }
    }

    /// The 4-way set at tag offset `base`. Unchecked: every `base` is a CPU's tag offset
    /// (`cpu × cpu_stride`, `cpu` below the CPU count: `begin` indexes `node_of` with it,
    /// and a line's sharers are CPUs that ran `begin`) plus a line's `set_base` (below
    /// `cpu_stride`), and `quads` holds CPUs × `cpu_stride / 4` sets. The bounds check
    /// was a compare and branch on every access that reaches the LRU state.
    #[inline(always)]
    fn quad_at(&self, base: usize) -> &Cell<[u32; 4]> {
        debug_assert!(base >> 2 < self.quads.len(), "set offset {base} out of range");
        // SAFETY: in range, as above (checked in debug builds).
        unsafe { self.quads.get_unchecked(base >> 2) }
    }

    /// Line `idx`'s state, for the out-of-line miss paths and evictions. Unchecked: the
    /// misses are called from `touch_index` with an index it has just read through the
    /// checked `self.lines[idx]`, and an evicted index is a tag minus one, and tags are
    /// only written from such indices (`cache_fill`).
    #[inline(always)]
    fn line_at(&self, idx: usize) -> &LineState {
        debug_assert!(idx < self.lines.len(), "line {idx} out of range");
        // SAFETY: in range, as above (checked in debug builds).
        unsafe { self.lines.get_unchecked(idx) }
    }

    #[inline]
    fn count(&self, class: usize, kind: usize) {
        let c = &self.bus[class * 4 + kind];
        c.set(c.get() + 1);
    }

    #[inline]
    fn class_of(&self, idx: usize) -> usize {
        if idx < self.task_lines {
            CLASS_TASK
        } else if idx < self.ws_base {
            CLASS_SCHED
        } else {
            CLASS_WORKLOAD
        }
    }

    /// Task `t`, running on the current CPU, works through `lines` lines of its
    /// working set (capped at the platform's lines per task): it reads every line and
    /// writes every fourth (one store per 128 bytes of 32-byte lines: buffers and
    /// stack written, file data and code only read). Returns the latency charged.
    pub fn touch_working_set(&self, t: TaskId, lines: usize) -> u64 {
        let start = self.cursor.get();
        let base = self.ws_base + t as usize * self.ws_lines;
        for j in 0..lines.min(self.ws_lines) {
            let access = if j % 4 == 3 { Access::Write } else { Access::Read };
            self.touch_index(base + j, access, CLASS_WORKLOAD);
        }
        self.cursor.get() - start
    }

    /// Node of `cpu`, one of the machine's CPUs (below `MAX_CPUS`, which machine
    /// validation enforces).
    #[inline(always)]
    fn node_of(&self, cpu: CpuId) -> usize {
        debug_assert!(cpu < self.node_of.len(), "CPU {cpu} of {}", self.node_of.len());
        self.node_at[cpu & (MAX_CPUS - 1)]
    }

    /// What a write by the current CPU leaves in `LineState::remote`: no copy in
    /// another node's shared cache, and with an LLC this node's copy. (Without one the
    /// mask is 0, whatever the shift: a node beyond 16 only exists then.)
    #[inline(always)]
    fn kept_on_write(&self) -> u16 {
        1u16.wrapping_shl(self.node.get() as u32) & self.llc_keep
    }

    /// Start a policy call on `cpu` at virtual time `now`.
    #[inline]
    pub fn begin(&self, cpu: CpuId, now: u64) {
        self.cpu.set(cpu);
        self.me.set(1u64 << cpu);
        self.cpu_tags.set(cpu * self.cpu_stride);
        self.node.set(self.node_of(cpu));
        self.cursor.set(now);
    }
    /// Virtual time reached by the work charged so far.
    #[inline]
    pub fn cursor(&self) -> u64 {
        self.cursor.get()
    }
    #[inline]
    pub fn advance(&self, ns: u64) {
        self.cursor.set(self.cursor.get() + ns);
    }
    /// Take the reschedule requests made since the last call into `out`.
    #[inline]
    pub fn drain_resched(&self, out: &mut Vec<(CpuId, Option<u64>)>) {
        out.clear();
        out.append(&mut self.resched.borrow_mut());
    }
    pub fn lock_stats(&self) -> Vec<LockStats> {
        self.locks.borrow().iter().map(|l| l.stats.clone()).collect()
    }
    /// Record the task-structure address of a new task: 8 KB blocks handed out in
    /// order, as the buddy allocator does on a freshly booted machine.
    pub fn alloc_task_struct(&self, id: TaskId) -> u64 {
        let mut a = self.task_addr.borrow_mut();
        debug_assert_eq!(a.len(), id as usize);
        let addr = TASK_BASE + id as u64 * TASK_BLOCK;
        a.push(addr);
        addr
    }
    pub fn task_struct_addr(&self, id: TaskId) -> u64 {
        self.task_addr.borrow()[id as usize]
    }

    #[inline]
    fn line_index(&self, line: Line) -> usize {
        match line {
            Line::Task(t) => t as usize,
            Line::Queue(q) => self.task_lines + q.min(self.queue_lines - 1),
            Line::CpuData(c) => self.task_lines + self.queue_lines + c,
            Line::Tree(q) => self.ws_base - 1 - self.queue_lines + q.min(self.queue_lines - 1),
            Line::IdleMap => self.ws_base - 1,
        }
    }

    /// [`class_of`](Self::class_of) a policy's line, from its kind: a constant where
    /// the kind is (every `touch` call site names it), so the miss paths need not compare
    /// the index with the line ranges. A task's line is below `task_lines` (the policy's
    /// task table has the platform's capacity and panics beyond it), a CPU's data line
    /// below `ws_base` (the policy's topology has the machine's CPUs).
    #[inline(always)]
    fn class_of_line(&self, line: Line) -> usize {
        let class = match line {
            Line::Task(_) => CLASS_TASK,
            Line::Queue(_) | Line::CpuData(_) | Line::Tree(_) | Line::IdleMap => CLASS_SCHED,
        };
        debug_assert_eq!(class, self.class_of(self.line_index(line)), "{line:?}");
        class
    }

    /// Latency of `cpu` reading line `idx` in state `st`, which misses in its cache (a
    /// hit is handled inline in `touch_index`), and the new state: the line becomes
    /// shared, a modified copy elsewhere is written back on the way. Out of line and
    /// apart from writes, so that the common miss saves few registers.
    ///
    /// The line is not in this CPU's cache (it is not among the sharers), so it is
    /// filled here too: one call per miss, no second call for the L2 bookkeeping.
    #[inline(never)]
    fn read_miss<const CLASS: usize>(&self, idx: usize, cpu: CpuId) -> u64 {
        let class = CLASS;
        let line = self.line_at(idx);
        debug_assert!(line.sharers.get() & (1u64 << cpu) == 0);
        debug_assert_eq!(class, self.class_of(idx));
        self.task_read_misses.set(self.task_read_misses.get() + (class == CLASS_TASK) as u64);
        let ns = self.miss(class, line, KIND_READ_MISS);
        line.sharers.set(line.sharers.get() | 1u64 << cpu);
        line.dirty.set(NO_OWNER);
        let set_base = line.set_base.get();
        if set_base != NO_LRU {
            self.cache_fill(cpu, idx, self.cpu_tags.get() + set_base as usize);
        }
        ns
    }

    /// Latency of `cpu` writing line `idx` in state `st`, which others hold or it does
    /// not hold at all (a write to a line only it holds is handled inline), and the new state: every other copy is
    /// invalidated and this CPU owns the line.
    /// Its L2 bookkeeping is done here too: the line becomes this CPU's most recently
    /// used way (a fill if it did not hold it).
    #[inline(never)]
    fn write_access<const CLASS: usize>(&self, idx: usize, cpu: CpuId) -> u64 {
        let class = CLASS;
        debug_assert_eq!(class, self.class_of(idx));
        let line = self.line_at(idx);
        let me = 1u64 << cpu;
        let sharers = line.sharers.get();
        let others = sharers & !me;
        let had = sharers & me != 0;
        debug_assert!(sharers != me, "an exclusive line's write is a hit");
        let ns = if had {
            // Upgrade: invalidate the other sharers; the farthest one sets the latency
            // (on one node every transfer costs the same, and there is another sharer).
            self.count(class, KIND_RFO);
            if self.one_node {
                self.one_node_upgrade_ns
            } else {
                self.upgrade_from[self.node.get()]
                    .iter()
                    .find(|&&(mask, _)| mask & others != 0)
                    .map_or(0, |&(_, ns)| ns)
            }
        } else {
            self.miss(class, line, KIND_RFO)
        };
        // Every other copy is invalidated: it leaves its cache.
        let set_base = line.set_base.get();
        if set_base != NO_LRU {
            self.drop_tags(others, idx, set_base);
        }
        line.sharers.set(me);
        line.dirty.set(cpu as u8);
        // Ownership invalidates every remote-cache copy too (the writer's quad gets the
        // line back from this CPU's cache, not its remote cache); an LLC keeps this
        // node's copy (it is inclusive: a write-back lands there).
        line.remote.set(self.kept_on_write());
        if set_base != NO_LRU {
            let base = self.cpu_tags.get() + set_base as usize;
            if !had {
                self.cache_fill(cpu, idx, base);
            } else {
                self.make_mru(idx, base);
            }
        }
        if self.store_buffers.depth > 0 {
            return self.buffer_store(cpu, ns);
        }
        ns
    }

    /// A write miss of `ns` retired into `cpu`'s store buffer: the line's state has
    /// changed already (the model's order is the order of the calls), only the charge
    /// moves. The cursor goes on at once, or when the oldest pending store completes if
    /// the buffer is full; nothing is left for the caller to charge.
    #[inline(never)]
    fn buffer_store(&self, cpu: CpuId, ns: u64) -> u64 {
        self.cursor.set(self.store_buffers.retire(cpu, self.cursor.get(), ns));
        0
    }

    /// A locked instruction (or another serializing one) on the current CPU: it waits
    /// until every store the CPU has pending has completed. Nothing at `store_buffer` 0.
    #[inline]
    pub(crate) fn drain_stores(&self) {
        if self.store_buffers.depth > 0 {
            self.cursor.set(self.store_buffers.drain(self.cpu.get(), self.cursor.get()));
        }
    }

    /// A locked read-modify-write of `ns` (the runtime's task-header CAS): after the
    /// store buffer drains.
    #[inline]
    pub(crate) fn locked_op(&self, ns: u64) {
        self.drain_stores();
        self.advance(ns);
    }

    /// A miss of a line of class `class` (not in this CPU's cache, not modified here):
    /// served by the modified copy's cache, this quad's remote cache, this node's
    /// last-level cache, or the line's home memory.
    #[inline(always)]
    fn miss(&self, class: usize, line: &LineState, kind: usize) -> u64 {
        let node = self.node.get();
        let mut home = line.home.get();
        if home == NO_OWNER {
            // First touch of a working-set line: its page is allocated on this node.
            home = node as u8;
            line.home.set(home);
        }
        let home = home as usize;
        // Whether this node's shared cache below the L2 keeps the line: every line it
        // fetches with an LLC, another node's line with a remote cache.
        // Whether the line is on another node and whether that node's shared cache has
        // it depend on the run: they are computed as masks and selected arithmetically,
        // not branched on (the host CPU mispredicted them on NUMA machines). `keeps` is
        // all ones or zero; the node's bit wraps as `1 << node` did in release builds
        // (more than 16 nodes exist only without a shared cache, with `keeps` zero).
        let keeps = self.keep_always | (self.keep_if_remote & ((home != node) as u16).wrapping_neg());
        let node_bit = 1u16.wrapping_shl(node as u32);
        let remote = line.remote.get();
        let dirty = line.dirty.get();
        let ns = if dirty != NO_OWNER {
            self.count(class, KIND_C2C);
            self.cost.transfer_ns(self.node_of(dirty as usize), node)
        } else {
            // Served below the L2 (memory, remote cache or LLC): counted by kind alike.
            self.count(class, kind);
            let memory = self.cost.memory_ns(home, node);
            let below = (remote & node_bit & keeps != 0) as u64;
            memory ^ ((memory ^ self.below_l2_ns) & below.wrapping_neg())
        };
        // A line from another quad's memory is kept in this quad's remote cache;
        // with an LLC, every line this node fetches is kept in its LLC.
        line.remote.set(remote | (node_bit & keeps));
        ns
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
    fn seen_free(&self, l: &LockState, asked: u64) -> u64 {
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

    fn lock_acquire(&self, id: usize, try_only: bool) -> bool {
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

    /// A lock event of a traced run.
    #[cold]
    #[inline(never)]
    fn trace_lock(&self, ev: Event) {
        self.trace(|| ev);
    }

    fn lock_release(&self, id: usize) {
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

impl Platform for SimPlatform {
    type Lock<T: Send> = SimLock<T>;

    fn new_lock<T: Send>(&self, name: &str, value: T) -> SimLock<T> {
        let mut locks = self.locks.borrow_mut();
        locks.push(LockState {
            stats: LockStats { name: name.to_string(), ..LockStats::default() },
            free_at: 0,
            acquired_at: 0,
            last_cpu: None,
        });
        SimLock { id: locks.len() - 1, data: spin::Mutex::new(value) }
    }
    #[inline]
    fn this_cpu(&self) -> CpuId {
        self.cpu.get()
    }
    /// The time; inside a task's operation, after one clock read (the runtime's worker
    /// stamps the clock for the policy calls it makes between polls, not during one).
    #[inline]
    fn now(&self) -> u64 {
        if self.in_task_op.get() {
            self.advance(self.cost.clock_read_ns);
        }
        self.cursor.get() + self.clock_origin
    }
    #[inline]
    fn charge(&self, work: Work) {
        self.advance(self.cost.work(work));
    }
    #[inline(always)]
    fn touch(&self, line: Line, access: Access) {
        if matches!(line, Line::Task(_)) && access == Access::Read {
            self.task_reads.set(self.task_reads.get() + 1);
        }
        self.touch_index(self.line_index(line), access, self.class_of_line(line));
    }
    /// A request for another CPU sends its IPI here, at the policy's cursor, as 2.4's
    /// `reschedule_idle` does from inside `wake_up_process` under the run-queue lock:
    /// the send's cost lengthens the caller's lock hold, and the target's IPI starts
    /// before the waker releases the lock (the runtime's `wake_up` does the same).
    #[inline]
    fn resched(&self, cpu: CpuId) {
        let bit = 1u64 << cpu;
        let sent_at = if cpu != self.cpu.get() && self.ipi_in_flight.get() & bit == 0 {
            self.ipi_in_flight.set(self.ipi_in_flight.get() | bit);
            // The ICR write is ordered after the stores ahead of it (an uncached
            // xAPIC write; Linux fences an x2APIC one), so the target's handler
            // sees them: the send waits for the store buffer.
            self.drain_stores();
            self.advance(self.cost.ipi_send_ns);
            Some(self.cursor.get())
        } else {
            None
        };
        self.resched.borrow_mut().push((cpu, sent_at));
    }
    /// At `mlp` 1 (every preset), or inside another scope, just `f`: the serial
    /// charging, with nothing added to the touch path but one test of a flag.
    #[inline(always)]
    fn overlapped<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.overlap.ready.get() {
            return self.in_overlap(f);
        }
        f()
    }
}

impl SimPlatform {
    /// `f` in a scope of its own (out of line: the serial path keeps nothing live
    /// across `f`).
    #[inline(never)]
    fn in_overlap<R>(&self, f: impl FnOnce() -> R) -> R {
        self.open_overlap();
        let r = f();
        self.close_overlap();
        r
    }

    #[inline(never)]
    fn open_overlap(&self) {
        let o = &self.overlap;
        o.open.set(true);
        o.ready.set(false);
        o.issued.set(0);
        o.last_end.set(self.cursor.get());
        for e in &o.ends[..self.cost.mlp] {
            e.set(0);
        }
    }

    /// The scope ends when its last access does (or its work, if later).
    #[inline(never)]
    fn close_overlap(&self) {
        let o = &self.overlap;
        o.open.set(false);
        o.ready.set(true);
        self.cursor.set(self.cursor.get().max(o.last_end.get()));
    }

    /// An access of `ns` in the open scope: it starts at the cursor, or when the
    /// access `mlp` before it ended if that is later; the cursor stays.
    #[inline(never)]
    fn overlapped_access(&self, ns: u64) {
        if ns == 0 && self.store_buffers.depth > 0 {
            // A store retired into the store buffer: it holds no miss slot here.
            return;
        }
        let o = &self.overlap;
        let i = o.issued.get();
        o.issued.set(i + 1);
        let slot = &o.ends[i % self.cost.mlp];
        let end = self.cursor.get().max(slot.get()) + ns;
        slot.set(end);
        o.last_end.set(o.last_end.get().max(end));
    }
}

impl SimPlatform {
    #[inline(always)]
    fn touch_index(&self, idx: usize, access: Access, class: usize) {
        let line = &self.lines[idx];
        let sharers = line.sharers.get();
        let cpu = self.cpu.get();
        let me = self.me.get();
        // Fast path: a read of a line this CPU holds, or a write of a line only it
        // holds (modified already, or exclusive and clean: no bus transaction, the line
        // becomes modified here and no remote cache keeps a valid copy).
        let hit = match access {
            Access::Read => sharers & me != 0,
            Access::Write => sharers == me,
        };
        let ns = if hit {
            if access == Access::Write && line.dirty.get() as usize != cpu {
                line.dirty.set(cpu as u8);
                line.remote.set(self.kept_on_write());
            }
            let set_base = line.set_base.get();
            if set_base != NO_LRU {
                self.make_mru(idx, self.cpu_tags.get() + set_base as usize);
            }
            self.cost.l2_hit_ns
        } else {
            match access {
                // One copy of each miss path per line class (a constant at every call
                // site): the host predicts each copy's branches on line state (is the
                // set LRU-tracked, is the line remote) from its own class's history,
                // not from a mix of task, scheduler and workload lines.
                Access::Read => match class {
                    CLASS_TASK => self.read_miss::<CLASS_TASK>(idx, cpu),
                    CLASS_SCHED => self.read_miss::<CLASS_SCHED>(idx, cpu),
                    _ => self.read_miss::<CLASS_WORKLOAD>(idx, cpu),
                },
                Access::Write => match class {
                    CLASS_TASK => self.write_access::<CLASS_TASK>(idx, cpu),
                    CLASS_SCHED => self.write_access::<CLASS_SCHED>(idx, cpu),
                    _ => self.write_access::<CLASS_WORKLOAD>(idx, cpu),
                },
            }
        };
        if self.overlap.open.get() {
            self.overlapped_access(ns);
        } else {
            self.advance(ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;

    fn plat(machine: &str) -> SimPlatform {
        let m = Machine::preset(machine).unwrap();
        SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 1024, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
    }

    /// smp-2 at 1000 MHz with `mlp` outstanding misses: a memory read costs 180 ns.
    fn plat_mlp(mlp: u32) -> SimPlatform {
        let mut m = Machine::preset("smp-2").unwrap();
        m.costs.hw.mlp = mlp;
        SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 64, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
    }

    /// smp-2 with a store buffer of `depth` entries: a cold line costs 180 ns (memory),
    /// a first lock acquire 180 + `lock_ns`.
    fn plat_sb(depth: u32) -> SimPlatform {
        let mut m = Machine::preset("smp-2").unwrap();
        m.costs.hw.store_buffer = depth;
        SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 64, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
    }

    /// Cursor after a cold write at 1000, 100 ns of work, then a lock acquire.
    fn write_work_lock(p: &SimPlatform) -> (u64, u64) {
        let l = p.new_lock("rq", ());
        p.begin(0, 1000);
        p.touch(Line::CpuData(1), Access::Write);
        let after_write = p.cursor();
        p.advance(100);
        l.with(p, |_| ());
        (after_write, p.cursor())
    }

    /// A queue's tree line is a line of its own: the queue header does not bring it,
    /// and a write on one CPU after the other wrote it is a miss (a transfer), not a hit.
    #[test]
    fn a_queue_tree_line_is_apart_from_its_header_and_moves_between_cpus() {
        let p = plat("smp-2");
        p.begin(0, 1000);
        p.touch(Line::Queue(1), Access::Write);
        let t = p.cursor();
        p.touch(Line::Tree(1), Access::Write);
        assert!(p.cursor() - t > p.cost.l2_hit_ns, "the header did not bring the tree line");
        let t = p.cursor();
        p.touch(Line::Tree(1), Access::Write);
        assert_eq!(p.cursor() - t, p.cost.l2_hit_ns, "then it is held");
        p.begin(1, 10_000);
        p.touch(Line::Tree(1), Access::Write);
        assert!(p.cursor() - 10_000 > p.cost.l2_hit_ns, "CPU 1 takes it from CPU 0");
        p.begin(0, 20_000);
        p.touch(Line::Tree(1), Access::Write);
        assert!(p.cursor() - 20_000 > p.cost.l2_hit_ns, "and CPU 0 back");
    }

    #[test]
    fn a_store_miss_is_not_charged_until_a_locked_operation() {
        let p = plat_sb(4);
        let (mem, lock) = (180, 180 + p.cost.lock_ns);
        let (after_write, after_lock) = write_work_lock(&p);
        assert_eq!(after_write, 1000, "the store retired into the buffer");
        // The ownership request overlapped the work; the acquire waited for its end.
        assert_eq!(after_lock, 1000 + mem + lock);
        // store_buffer 0: the write charged where it is made, then the work.
        let (after_write, after_lock) = write_work_lock(&plat_sb(0));
        assert_eq!(after_write, 1000 + mem);
        assert_eq!(after_lock, 1000 + mem + 100 + lock);
        // A read of the line it has a store pending on hits (store forwarding).
        let p = plat_sb(4);
        p.begin(0, 1000);
        p.touch(Line::CpuData(1), Access::Write);
        p.touch(Line::CpuData(1), Access::Read);
        assert_eq!(p.cursor(), 1000 + p.cost.l2_hit_ns);
    }

    #[test]
    fn a_full_store_buffer_waits_for_its_oldest_store() {
        let mem = 180;
        let three_writes = |p: &SimPlatform| {
            p.begin(0, 1000);
            for t in [1, 2, 3] {
                p.touch(Line::Task(t), Access::Write);
            }
            p.cursor()
        };
        // Two entries: the third store waits until the first completes (and the
        // second, issued at the same instant, with it).
        let p = plat_sb(2);
        assert_eq!(three_writes(&p), 1000 + mem);
        p.drain_stores();
        assert_eq!(p.cursor(), 1000 + 2 * mem, "the third completes 180 ns after it retired");
        assert_eq!(three_writes(&plat_sb(8)), 1000, "room for all three");
        assert_eq!(three_writes(&plat_sb(0)), 1000 + 3 * mem, "store_buffer 0: serial");
    }

    #[test]
    fn a_release_is_seen_only_after_the_stores_ahead_of_it() {
        let p = plat_sb(4);
        let l = p.new_lock("rq", ());
        p.begin(0, 1000);
        l.with(&p, |_| p.touch(Line::CpuData(1), Access::Write));
        let got = 1000 + 180 + p.cost.lock_ns;
        assert_eq!(p.cursor(), got, "the releasing CPU goes on (a plain store)");
        // CPU 1 asks 5 ns later: the lock is free once the write (180 ns) committed.
        p.begin(1, got + 5);
        l.with(&p, |_| ());
        let s = &p.lock_stats()[0];
        assert_eq!(s.wait_total_ns, got + 180 - (got + 5));
        assert_eq!(s.hold_max_ns, 180);
    }

    /// Virtual time of three cold reads (memory, 180 ns each) and `work` between the
    /// first two, in one overlapped scope.
    fn scope_of_three(p: &SimPlatform, work: Work) -> u64 {
        p.begin(0, 1000);
        p.overlapped(|| {
            p.touch(Line::Task(1), Access::Read);
            p.charge(work);
            p.touch(Line::Task(2), Access::Read);
            p.touch(Line::CpuData(1), Access::Write);
        });
        p.cursor() - 1000
    }

    #[test]
    fn overlapped_misses_cost_the_longest_up_to_mlp_and_the_sum_at_mlp_1() {
        let work = Work::ListOp;
        let (mem, w) = (180, plat_mlp(1).cost.work(work));
        assert!(w > 0 && w < mem);
        assert_eq!(scope_of_three(&plat_mlp(1), work), 3 * mem + w, "mlp 1: one after another");
        // mlp 4: all three in flight; the later two issue after the work.
        assert_eq!(scope_of_three(&plat_mlp(4), work), w + mem, "mlp 4: the longest, not the sum");
        // mlp 2: the third waits for the first to end.
        assert_eq!(scope_of_three(&plat_mlp(2), work), 2 * mem);
        // After the scope, accesses are serial again, and hits cost a hit.
        let p = plat_mlp(4);
        scope_of_three(&p, work);
        let at = p.cursor();
        p.touch(Line::Task(3), Access::Read);
        p.touch(Line::Task(1), Access::Read);
        assert_eq!(p.cursor() - at, mem + p.cost.l2_hit_ns);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "lock acquire inside an overlapped scope")]
    fn a_lock_inside_an_overlapped_scope_is_refused() {
        let p = plat_mlp(4);
        let l = p.new_lock("rq", ());
        p.begin(0, 0);
        p.overlapped(|| l.with(&p, |_| ()));
    }

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

    #[test]
    fn coherence_charges_transfers_and_hits() {
        let p = plat("numa-4x4");
        p.begin(0, 0);
        p.touch(Line::Task(3), Access::Write); // memory, local to node 0
        assert_eq!(p.cursor(), 250);
        p.touch(Line::Task(3), Access::Read); // hit
        assert_eq!(p.cursor(), 250 + p.cost.l2_hit_ns);
        p.begin(4, 0); // node 1 reads a line dirty on node 0: remote transfer
        p.touch(Line::Task(3), Access::Read);
        assert_eq!(p.cursor(), 2500);
        p.begin(4, 0); // now shared: hit
        p.touch(Line::Task(3), Access::Read);
        assert_eq!(p.cursor(), p.cost.l2_hit_ns);
        p.begin(0, 0); // upgrade invalidates the node-1 copy
        p.touch(Line::Task(3), Access::Write);
        assert_eq!(p.cursor(), 2500);
    }

    #[test]
    fn set_conflicts_evict_and_write_back() {
        // smp-8: 2 MB, 4-way, 32-byte lines = 16384 sets spanning 512 KB: the hot lines of
        // 8 KB-aligned blocks fall into only 64 sets, so every 64th task shares one.
        let p = plat("smp-8");
        let s0 = p.line_set_of(Line::Task(0));
        let same: Vec<u32> = (0..1024u32).filter(|&t| p.line_set_of(Line::Task(t)) == s0).take(8).collect();
        assert_eq!(same, [0, 64, 128, 192, 256, 320, 384, 448]);
        let l = p.new_lock("rq", ());
        p.begin(0, 0);
        // Dirty them all, then walk twice under the lock: more lines than ways in one
        // set, so LRU misses on every read of the walk.
        for &t in &same {
            p.touch(Line::Task(t), Access::Write);
        }
        let wb = p.bus_stats().by[CLASS_TASK][KIND_WRITEBACK];
        assert_eq!(wb as usize, same.len() - 4, "each dirty eviction is a write-back");
        l.with(&p, |_| {
            for _ in 0..2 {
                for &t in &same {
                    p.touch(Line::Task(t), Access::Read);
                }
            }
        });
        let b = p.bus_stats();
        assert_eq!(b.locked_task_reads, 2 * same.len() as u64);
        assert_eq!(b.locked_task_misses, b.locked_task_reads);
        // Four of them fit: those hit.
        p.begin(1, 0);
        let l2 = p.new_lock("rq2", ());
        l2.with(&p, |_| {
            for _ in 0..3 {
                for &t in &same[..4] {
                    p.touch(Line::Task(t), Access::Read);
                }
            }
        });
        let b2 = p.bus_stats();
        assert_eq!(b2.locked_task_misses - b.locked_task_misses, 4, "only the first walk misses");
    }

    #[test]
    fn eviction_removes_sharer() {
        let p = plat("smp-8");
        let s0 = p.line_set_of(Line::Task(0));
        let same: Vec<u32> = (0..1024u32).filter(|&t| p.line_set_of(Line::Task(t)) == s0).take(8).collect();
        p.begin(0, 0);
        for &t in &same {
            p.touch(Line::Task(t), Access::Read);
        }
        // The first was evicted: reading it again goes to memory.
        let before = p.cursor();
        p.touch(Line::Task(same[0]), Access::Read);
        assert_eq!(p.cursor() - before, p.cost.memory_ns(0, 0));
    }

    #[test]
    fn a_last_level_cache_serves_lines_the_l2_evicted() {
        // smp-8 with a 20 ns LLC: a line's first fetch comes from memory, a line
        // evicted from the L2 (or written by another CPU and written back) from the LLC.
        let mut m = Machine::preset("smp-8").unwrap();
        m.costs.hw.llc_latency_ns = 20;
        let p = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 1024, m.l2_kb, m.l2_assoc, m.line_bytes, 1);
        let s0 = p.line_set_of(Line::Task(0));
        let same: Vec<u32> = (0..1024u32).filter(|&t| p.line_set_of(Line::Task(t)) == s0).take(8).collect();
        let cost = |cpu, t, a| cost_of(&p, cpu, t, a);
        for &t in &same {
            assert_eq!(cost(0, t, Access::Read), 180, "first fetch: memory");
        }
        assert_eq!(cost(0, same[0], Access::Read), 20, "evicted from the 4-way set: the LLC has it");
        assert_eq!(cost(1, same[0], Access::Read), 20, "another CPU of the node: the LLC too");
        // Written on CPU 2 (invalidating 0 and 1), then evicted there by its set-mates.
        assert_eq!(cost(2, same[0], Access::Write), 20, "a write miss of a clean line: the LLC serves it too");
        for &t in &same[1..] {
            cost(2, t, Access::Read);
        }
        assert_eq!(cost(3, same[0], Access::Read), 20, "written back into the LLC");
        // Without an LLC (every preset) the same evicted line goes to memory.
        let q = plat("smp-8");
        for &t in &same {
            q.begin(0, 0);
            q.touch(Line::Task(t), Access::Read);
        }
        assert_eq!(cost_of(&q, 0, same[0], Access::Read), q.cost.memory_ns(0, 0));
        // A last-level cache and NUMA-Q's remote cache together are refused.
        let mut n = Machine::preset("numa-4x4").unwrap();
        n.costs.hw.llc_latency_ns = 20;
        let e = n.validate().unwrap_err().0;
        assert!(e.contains("llc_latency_ns") && e.contains("remote_cache_ns"), "{e}");
    }

    /// Virtual time `cpu` spends on one access to task `t`'s hot line.
    fn cost_of(p: &SimPlatform, cpu: CpuId, t: u32, a: Access) -> u64 {
        p.begin(cpu, 0);
        p.touch(Line::Task(t), a);
        p.cursor()
    }

    #[test]
    fn colours_spread_conflicting_hot_lines() {
        // numa-4x4: 512 KB 4-way, 32-byte lines: sets span 128 KB, so every 16th block
        // shares a set. The colour (address bits 13..17) differs in bit 17 between
        // task k·16 and (k+1)·16: two sets of four, which fit.
        let m = Machine::preset("numa-4x4").unwrap();
        let mk =
            |c| SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 1024, m.l2_kb, m.l2_assoc, m.line_bytes, c);
        let walk: Vec<u32> = (0..8).map(|k| k * 16).collect();
        let vanilla = mk(1);
        assert!(walk.iter().all(|&t| vanilla.line_set_of(Line::Task(t)) == vanilla.line_set_of(Line::Task(0))));
        let p = mk(32);
        let l = p.new_lock("rq", ());
        p.begin(0, 0);
        l.with(&p, |_| {
            for _ in 0..3 {
                for &t in &walk {
                    p.touch(Line::Task(t), Access::Read);
                }
            }
        });
        let b = p.bus_stats();
        assert_eq!((b.locked_task_reads, b.locked_task_misses), (24, 8), "only the cold walk misses");
    }

    #[test]
    fn remote_cache_serves_a_quads_second_reader() {
        // numa-4x4: CPUs 4..8 are node 1; kernel lines live on node 0.
        let p = plat("numa-4x4");
        let read = |cpu, t| {
            p.begin(cpu, 0);
            p.touch(Line::Task(t), Access::Read);
            p.cursor()
        };
        assert_eq!(read(4, 7), 2500, "first read from quad 1 goes to quad 0's memory");
        assert_eq!(read(5, 7), p.cost.remote_cache_ns, "the second reader on quad 1 hits its remote cache");
        p.begin(0, 0);
        p.touch(Line::Task(7), Access::Write); // invalidates every copy, remote caches included
        assert_eq!(read(6, 7), 2500, "dirty on node 0: a remote cache-to-cache transfer");
        assert_eq!(read(8, 7), 2500, "quad 2 has no copy yet");
        assert_eq!(read(9, 7), p.cost.remote_cache_ns);
        // Without a remote cache (remote_cache_ns = 0) every remote miss pays the interconnect.
        let mut m = Machine::preset("numa-4x4").unwrap();
        m.costs.hw.remote_cache_ns = 0;
        let q = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 16, m.l2_kb, m.l2_assoc, m.line_bytes, 1);
        for cpu in [4, 5] {
            q.begin(cpu, 0);
            q.touch(Line::Task(1), Access::Read);
            assert_eq!(q.cursor(), 2500);
        }
    }

    #[test]
    fn working_sets_are_workload_lines_placed_by_first_touch() {
        let m = Machine::preset("numa-4x4").unwrap();
        let p = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 4, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
            .with_working_sets(8);
        assert_eq!(p.working_set_addr(1, 3) - p.working_set_addr(1, 0), 3 * 32);
        assert_eq!(p.working_set_addr(2, 0) - p.working_set_addr(1, 0), 4096, "page-aligned per task");
        // A task on quad 1 touches its working set first: its pages live on quad 1.
        p.begin(4, 0);
        let ns = p.touch_working_set(2, 8);
        assert_eq!(ns, 8 * 250, "local memory: eight misses at 250 ns");
        let b = p.bus_stats();
        assert_eq!(b.by[CLASS_WORKLOAD][KIND_READ_MISS] + b.by[CLASS_WORKLOAD][KIND_RFO], 8);
        assert_eq!(b.by[CLASS_TASK].iter().sum::<u64>(), 0);
        // Again: all hits.
        p.begin(4, 0);
        assert_eq!(p.touch_working_set(2, 8), 8 * p.cost.l2_hit_ns);
        // The same task moved to quad 0: remote lines (dirty ones by transfer).
        p.begin(0, 0);
        assert!(p.touch_working_set(2, 8) >= 8 * 2500);
    }
}
