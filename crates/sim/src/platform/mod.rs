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
//! One type, [`SimPlatform`], with one file per concern; this file holds its state,
//! its construction, the call's cursor and CPU, reschedule requests and their IPIs,
//! and the [`Platform`] trait, which delegates to the others:
//!
//! | file | what |
//! |------|------|
//! | `layout.rs` | where every line lives: line indices, their addresses in the kernel's layout, their classes |
//! | `coherence.rs` | a touch: MESI-like coherence, misses served by caches, memory, a remote cache or an LLC; bus transactions |
//! | `cache.rs` | each CPU's set-associative L2: recency order, fills, evictions, invalidations |
//! | `overlap.rs` | misses in flight together (`mlp`) and the store buffer |
//! | `locks.rs` | locks in virtual time, a waiter's back-off, Lockmeter statistics; [`SimLock`] |
//! | `trace.rs` | the scheduling trace the platform records |
//!
//! The parts share the one struct (its fields, grouped by the file that uses them,
//! are visible to this module's children) rather than each owning a part of it: a
//! touch reads the call's CPU and cursor, the line's state, the L2 tags, the lock
//! walk's counters and the overlap and store-buffer state in one inlined path, so the
//! concerns are split by code, not by data, and that path is compiled as one.

mod cache;
mod coherence;
mod layout;
mod locks;
mod overlap;
mod trace;

pub use coherence::{BusStats, KIND_C2C, KIND_READ_MISS, KIND_RFO, KIND_WRITEBACK};
pub use layout::{
    CLASS_SCHED, CLASS_TASK, CLASS_WORKLOAD, KDATA_BASE, KDATA_SLOT, TASK_BASE, TASK_BLOCK, TASK_HOT_OFFSET, USER_BASE,
};
pub use locks::{LockStats, SimLock, WalkMark};

use crate::cost::CostModel;
use cache::NO_LRU;
use coherence::{LineState, NO_OWNER};
use layout::Geometry;
use locks::LockState;
use overlap::{Overlap, StoreBuffers};
use schedlab_core::cpu::MAX_CPUS;
use schedlab_core::trace::TraceBuf;
use schedlab_core::{Access, CpuId, Line, Platform, Work};
use std::cell::{Cell, RefCell};

/// The platform for one simulation.
pub struct SimPlatform {
    // --- the call: where and when the policy runs, and what it costs ---
    cpu: Cell<CpuId>,
    /// `1 << cpu` of the current call.
    me: Cell<u64>,
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
    /// Node of the current CPU (`node_of[cpu]`, read on every miss).
    node: Cell<usize>,
    // --- reschedule requests and their IPIs (this file) ---
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
    // --- where lines live (`layout.rs`) ---
    task_lines: usize,
    queue_lines: usize,
    /// Whether the kernel's `task_struct` layout is modelled (machine key
    /// `task_struct = "kernel"`): the `run_list.prev` and state lines below exist, and
    /// the policies' state accesses are charged (`Platform::task_state_priced`).
    kernel_layout: bool,
    /// First line of the tasks' `run_list.prev` lines (after the kernel data), and how
    /// many there are: one per task, or none where `prev` shares the hot line
    /// (`Line::TaskLink` then names the hot line).
    link_base: usize,
    link_lines: usize,
    /// First of the state lines (`Line::TaskState`, after the link lines): one per task
    /// where the state words are a line apart from the hot block (`state_task_lines`
    /// of them, else none and a task's state line is its hot line), then one per CPU's
    /// idle task (`Line::IdleState`); none outside the kernel's layout.
    state_base: usize,
    state_task_lines: usize,
    /// First working-set line, and working-set lines per task.
    ws_base: usize,
    ws_lines: usize,
    /// Colours of the task blocks: a task's line is shifted by `colour × line_bytes`
    /// ([`Geometry::addr_of`]).
    colours: u32,
    line_bytes: u32,
    /// Address of each task's structure (`task_addr[id]`).
    task_addr: RefCell<Vec<u64>>,
    // --- coherence and misses (`coherence.rs`) ---
    lines: Vec<LineState>,
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
    /// For each node, the other nodes' CPUs (`1 << cpu` masks) with the latency of a
    /// transfer from them to this node, farthest first: an upgrade's latency is that
    /// of the first entry that holds one of the other sharers.
    upgrade_from: Vec<Vec<(u64, u64)>>,
    /// Whether every CPU is on one node: then every transfer costs the same and an
    /// upgrade's latency needs no loop over the other sharers.
    one_node: bool,
    /// An upgrade's latency when `one_node`: a transfer within that node.
    one_node_upgrade_ns: u64,
    /// Bus transactions, `[class * 4 + kind]` (a fixed array: the index is in range by
    /// construction, so the count is one add with no bounds check).
    bus: [Cell<u64>; 12],
    /// Reads of task lines, and those that missed, ever (the walk counters below are
    /// their growth while a lock is held: counting every task-line read costs one add
    /// where the line kind is known at compile time, `touch`, and no test of the lock).
    task_reads: Cell<u64>,
    task_read_misses: Cell<u64>,
    // --- the per-CPU L2s (`cache.rs`) ---
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
    /// Offset of the current CPU's tags.
    cpu_tags: Cell<usize>,
    /// Tags per CPU (dense sets × ways): CPU `c`'s tags start at `c × cpu_stride`.
    cpu_stride: usize,
    /// Sets of the whole L2 (before the dense numbering).
    nsets_full: u64,
    ways: usize,
    set_mask: u64,
    line_shift: u32,
    // --- locks (`locks.rs`) ---
    locks: RefCell<Vec<LockState>>,
    locks_held: Cell<u32>,
    /// `(task_reads, task_read_misses)` when the outermost lock was taken.
    walk_mark: Cell<(u64, u64)>,
    walk_reads: Cell<u64>,
    walk_misses: Cell<u64>,
    /// Of those, the reads made inside [`Platform::after_pick`] scopes: `schedule()`'s
    /// work after its pick, which walks no run queue ([`SimPlatform::walked_since`]).
    after_pick_reads: Cell<u64>,
    /// The first lock the current `schedule()` call acquired (`usize::MAX`: none yet),
    /// and when its waiter began to ask if the engine deferred the call
    /// ([`SimPlatform::lock_seen_free_at`]; `u64::MAX`: not deferred).
    first_lock: Cell<usize>,
    asked_at: Cell<u64>,
    /// A `schedule()` call is under way whose first acquire is still to come (only on
    /// a machine whose waiter backs off: the presets test this one flag).
    schedule_open: Cell<bool>,
    // --- overlapped misses and store buffers (`overlap.rs`) ---
    /// The open [`overlapped`](Platform::overlapped) scope, if any (never at `mlp` 1).
    overlap: Overlap,
    /// Each CPU's pending write misses (empty and never used at `store_buffer` 0).
    store_buffers: StoreBuffers,
    // --- the trace (`trace.rs`) ---
    /// The scheduling trace being recorded (`None`: off, one branch per event).
    trace: Option<RefCell<TraceBuf>>,
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
        SimPlatform::build(cost, node_of, task_capacity, (l2_kb, l2_assoc, line_bytes), colours, 0, true)
    }

    /// This platform with every task's scheduling state on its one hot line, both list
    /// links included, as schedlab's runtime lays it out (`TaskLayout::KernelBlocks`):
    /// a [`Line::TaskLink`] is then the task's hot line, and the kernel's state words
    /// are not priced (machine key `task_struct = "runtime"`). Without it, a 2.4 task's
    /// `run_list.prev` line and its state line are lines of their own wherever the
    /// kernel's layout makes them so.
    pub fn with_one_line_tasks(self) -> SimPlatform {
        if !self.kernel_layout {
            return self;
        }
        let l2 = self.l2_geometry();
        SimPlatform::build(self.cost, self.node_of, self.task_lines, l2, self.colours, self.ws_lines, false)
    }

    /// The L2 this platform was built with, as `(KiB, ways, line bytes)`.
    fn l2_geometry(&self) -> (u32, u32, u32) {
        ((self.nsets_full * self.ways as u64 * self.line_bytes as u64 / 1024) as u32, self.ways as u32, self.line_bytes)
    }

    /// This platform with `lines` cache lines of working set per task: the task's own
    /// memory, touched when it computes ([`SimPlatform::touch_working_set`]).
    pub fn with_working_sets(self, lines: usize) -> SimPlatform {
        if lines == 0 {
            return self;
        }
        let l2 = self.l2_geometry();
        let kernel = self.kernel_layout;
        SimPlatform::build(self.cost, self.node_of, self.task_lines, l2, self.colours, lines, kernel)
    }

    pub(super) fn build(
        cost: CostModel,
        node_of: Vec<usize>,
        task_capacity: usize,
        (l2_kb, l2_assoc, line_bytes): (u32, u32, u32),
        colours: u32,
        ws_lines: usize,
        kernel_layout: bool,
    ) -> SimPlatform {
        let ncpus = node_of.len();
        let mlp = cost.mlp;
        let store_buffer = cost.store_buffer;
        // Queue lines: enough for one run queue per CPU plus a global one; as many
        // tree lines (`Line::Tree`) after the CPUs' data, then `Line::IdleMap`; then
        // the tasks' `run_list.prev` lines (`Line::TaskLink`) and state lines
        // (`Line::TaskState`) where they are lines of their own, and the idle tasks'
        // state lines, in the kernel's layout.
        let queue_lines = ncpus + 1;
        let link_base = task_capacity + queue_lines + ncpus + queue_lines + 1;
        let apart = |on_hot: fn(u32) -> bool| kernel_layout && !on_hot(line_bytes);
        let link_lines = if apart(schedlab_core::layout::prev_link_on_hot_line) { task_capacity } else { 0 };
        let state_base = link_base + link_lines;
        let state_task_lines = if apart(schedlab_core::layout::state_on_hot_line) { task_capacity } else { 0 };
        let idle_lines = if kernel_layout { ncpus } else { 0 };
        let ws_base = state_base + state_task_lines + idle_lines;
        let nlines = ws_base + task_capacity * ws_lines;
        // One bit per node in `LineState::remote` (remote cache or LLC).
        let bit_per_node = node_of.iter().max().is_some_and(|&n| n < 16);
        let remote_cache_ns = if bit_per_node { cost.remote_cache_ns } else { 0 };
        let llc_ns = if bit_per_node { cost.llc_ns } else { 0 };
        let geo = Geometry {
            task_lines: task_capacity,
            link_base,
            state_base,
            state_task_lines,
            ws_base,
            ws_lines,
            colours,
            line_bytes,
        };
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
            kernel_layout,
            link_base,
            link_lines,
            state_base,
            state_task_lines,
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
            after_pick_reads: Cell::new(0),
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

    /// Node of `cpu`, one of the machine's CPUs (below `MAX_CPUS`, which machine
    /// validation enforces).
    #[inline(always)]
    pub(super) fn node_of(&self, cpu: CpuId) -> usize {
        debug_assert!(cpu < self.node_of.len(), "CPU {cpu} of {}", self.node_of.len());
        self.node_at[cpu & (MAX_CPUS - 1)]
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
}

impl Platform for SimPlatform {
    type Lock<T: Send> = SimLock<T>;

    fn new_lock<T: Send>(&self, name: &str, value: T) -> SimLock<T> {
        SimLock::new(self.add_lock(name), value)
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
    /// The cursor, with no clock read charged (an observation, not the policy's work).
    #[inline]
    fn observe_now(&self) -> u64 {
        self.cursor.get() + self.clock_origin
    }
    #[inline]
    fn charge(&self, work: Work) {
        self.advance(self.cost.work(work));
    }
    #[inline(always)]
    fn touch(&self, line: Line, access: Access) {
        self.touch_line(line, access);
    }
    #[inline]
    fn prev_link_apart(&self) -> bool {
        self.link_lines > 0
    }
    #[inline]
    fn task_state_priced(&self) -> bool {
        self.kernel_layout
    }
    /// The simulator reports per-task figures (`role_stats`), uncharged.
    fn observes_task_population(&self) -> bool {
        true
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
    /// Counts the task-line reads `f` makes under a lock as no walk's.
    #[inline]
    fn after_pick<R>(&self, f: impl FnOnce() -> R) -> R {
        let start = self.locked_task_reads();
        let r = f();
        self.after_pick_reads.set(self.after_pick_reads.get() + self.locked_task_reads() - start);
        r
    }
}
#[cfg(test)]
pub(crate) mod testing {
    //! Platforms of small machines for the tests of the platform's parts.
    use super::*;
    use crate::machine::Machine;

    pub(crate) fn plat(machine: &str) -> SimPlatform {
        let m = Machine::preset(machine).unwrap();
        SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 1024, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
    }

    /// smp-2 at 1000 MHz with `mlp` outstanding misses: a memory read costs 180 ns.
    pub(crate) fn plat_mlp(mlp: u32) -> SimPlatform {
        let mut m = Machine::preset("smp-2").unwrap();
        m.costs.hw.mlp = mlp;
        SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 64, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
    }

    /// smp-2 with a store buffer of `depth` entries: a cold line costs 180 ns (memory),
    /// a first lock acquire 180 + `lock_ns`.
    pub(crate) fn plat_sb(depth: u32) -> SimPlatform {
        let mut m = Machine::preset("smp-2").unwrap();
        m.costs.hw.store_buffer = depth;
        SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 64, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
    }

    /// Virtual time `cpu` spends on one access to task `t`'s hot line.
    pub(crate) fn cost_of(p: &SimPlatform, cpu: CpuId, t: u32, a: Access) -> u64 {
        p.begin(cpu, 0);
        p.touch(Line::Task(t), a);
        p.cursor()
    }
}
