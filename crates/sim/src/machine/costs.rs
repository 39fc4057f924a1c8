//! A machine's cost parameters ([`CostParams`], the `[costs]` table of a machine file)
//! and their presets: part of the machine description. [`crate::cost`] resolves them
//! to the nanosecond costs the event loop charges.
//!
//! All numbers live here and in `docs/cost-model.md`, which gives the reasoning for
//! each. Nothing here is fitted to a published result: every value is an estimate
//! from the hardware and the code path it prices, and every value can be overridden
//! in a machine file's `[costs]` table.

use super::MachineError;
use serde::{Deserialize, Serialize};

/// Cost parameters of a machine (the `[costs]` table of a machine file, one flat
/// table: each group below is flattened into it). See `docs/cost-model.md`.
///
/// Three groups, by who sets them: the kernel's code paths ([`KernelCosts`]), the
/// hardware's ([`HardwareCosts`]), and what only a user-level runtime measured on
/// this host has ([`HostKnobs`]: every one 0 on the presets, which carry
/// `HostKnobs::default()`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostParams {
    #[serde(flatten)]
    pub kernel: KernelCosts,
    #[serde(flatten)]
    pub hw: HardwareCosts,
    #[serde(flatten)]
    pub host: HostKnobs,
}

/// The kernel's (or a runtime's) CPU work on its own code paths, in cycles of the
/// modelled CPU (memory accesses are charged apart, through the coherence model).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelCosts {
    /// `schedule()` fixed path: irq off/on, prev-state handling, bookkeeping.
    pub schedule_entry_cycles: u32,
    /// `wake_up_process()` fixed path.
    pub wakeup_entry_cycles: u32,
    /// One `goodness()`: ~10 integer instructions and a compare (memory access separate).
    pub goodness_cycles: u32,
    /// `list_add`/`list_del`: four pointer stores (memory access separate).
    pub list_op_cycles: u32,
    /// One task's counter recalculation.
    pub recalc_cycles: u32,
    /// Timer interrupt entry/exit plus `update_process_times`.
    pub tick_cycles: u32,
    /// Examining one CPU in a placement or balancing loop.
    pub examine_cycles: u32,
    /// Inserting or removing one task in a vruntime-ordered run queue (`cfs`'s tree):
    /// a walk of a few levels and the rebalancing (memory access separate). A machine
    /// file without it gets the P6 presets' figure.
    #[serde(default = "CostParams::p3_tree_op_cycles")]
    pub tree_op_cycles: u32,
    /// `switch_to`: register and kernel-stack switch, return path to the new task.
    pub context_switch_cycles: u32,
    /// Extra when the address space changes: `%cr3` reload and TLB refill.
    pub mm_switch_cycles: u32,
    /// System call entry and exit (`int 0x80`).
    pub syscall_cycles: u32,
    /// Protocol path of sending one small message on a local socket (excluding copy).
    pub send_cycles: u32,
    /// Protocol path of receiving one message (excluding copy).
    pub recv_cycles: u32,
    /// Copying message payload to/from user space, per KiB.
    pub copy_cycles_per_kb: u32,
    /// `clone()` of a thread: task structure, stack, copying/sharing of the parent's state.
    pub fork_cycles: u32,
    /// `exit()`: tearing the task down, reparenting, notifying.
    pub exit_cycles: u32,
}

/// The machine's processor and memory system: locked operations, cache hits and
/// misses, the interconnect, the APIC, and how many misses a CPU overlaps. Cycles of
/// the modelled CPU for work on the core; ns for the memory system (bus and
/// interconnect speeds do not scale with the core clock).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HardwareCosts {
    /// A locked read-modify-write (spin_lock/trylock) on a line this CPU already owns.
    pub lock_cycles: u32,
    /// L2 hit latency (the scheduler's task lines usually live in L2).
    pub l2_hit_cycles: u32,
    /// Writing the local APIC's interrupt command register.
    pub ipi_send_cycles: u32,
    /// Read miss served by local memory.
    pub mem_latency_ns: u32,
    /// Read miss served by another CPU's cache on the same bus (HITM + implicit write-back).
    pub c2c_latency_ns: u32,
    /// From the ICR write to the target CPU entering its reschedule-interrupt handler.
    pub ipi_latency_ns: u32,
    /// Read miss served by the node's **remote cache** (IBM NUMA-Q: the IQ-Link board
    /// of each quad caches lines of other quads' memory; 0 = no remote cache, every
    /// remote miss goes to the home quad). Only machines with more than one node use it.
    #[serde(default)]
    pub remote_cache_ns: u32,
    /// Read miss served by the node's shared **last-level cache** (an L3 behind the
    /// modelled L2; 0 = none, every miss no other cache serves goes to memory: the
    /// P6 presets, whose L2 was the last level). The LLC is taken to hold every line
    /// the node has fetched (a runtime host's L3 is tens of MB, the modelled lines a
    /// few MB), so only a node's first fetch of a line pays `mem_latency_ns`. It
    /// cannot be combined with `remote_cache_ns`.
    #[serde(default)]
    pub llc_latency_ns: u32,
    /// Memory-level parallelism: how many misses one CPU keeps outstanding at once
    /// among accesses a policy marks independent (`Platform::overlapped`), 1..=16.
    /// 1 = every miss charged after the previous one (every preset: the model they
    /// were studied with). A machine file without it gets 1.
    #[serde(default = "CostParams::serial_mlp")]
    pub mlp: u32,
    /// Store-buffer entries per CPU for write misses and upgrades: with N > 0 a store
    /// that misses retires at once and its ownership request completes in the
    /// background (at most N pending; a full buffer waits for the oldest); a locked
    /// operation (lock acquire, the runtime's task-header CAS) or an IPI send waits
    /// for every pending one, and a lock release becomes visible only after them.
    /// 0 = every write miss charged where it is made (every preset; a machine file
    /// without it). At most [`CostParams::MAX_STORE_BUFFER`].
    #[serde(default)]
    pub store_buffer: u32,
}

/// What a user-level runtime on this host adds to the model, measured by the
/// calibration (`schedlab validate`; docs/cost-model.md, "Measuring this machine"):
/// its channels, parking, lock back-off, task blocks, price jitter, and where its
/// ticks and clock start. Every one is 0 on the kernel presets, and a machine file
/// that leaves one out gets 0: the default is the kernel model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostKnobs {
    // --- the runtime's task blocks and parked workers ---
    /// Extra cost of a fork whose task block no task has used before: the first touch
    /// of its memory (a page fault on the runtime, whose task table maps its blocks
    /// lazily and hands an exited task's block to the next fork). Charged when a spawn
    /// raises the number of live tasks above every earlier count, since only then does
    /// no freed block exist. 0 on the presets: 2.4's fork takes its `task_struct` from a
    /// slab and its stack from the page allocator, priced in `fork_cycles`.
    pub task_block_fresh_ns: u32,
    /// Extra latency of a reschedule IPI to a CPU that has been idle for at least
    /// `idle_spin_ns`: the time a sleeping CPU takes to run again (a halted CPU's exit
    /// latency; on a runtime host, a parked worker's futex wake-up). 0 = none: an idle
    /// CPU answers like a busy one (the presets: an idle P6 halts and wakes on the
    /// interrupt within the IPI latency).
    pub park_wake_ns: u32,
    /// How long an idle CPU polls before it sleeps (a runtime worker's idle spin); an
    /// IPI in that window costs only `ipi_latency_ns`.
    pub idle_spin_ns: u32,
    // --- the runtime's clock and channels ---
    /// One clock read. Charged where the runtime reads the clock: at every completed
    /// operation (its preemption point) and at every switch to another task (the
    /// worker's read after a poll).
    pub clock_read_cycles: u32,
    /// A receive that blocks, beyond a hot send + receive: registering for a
    /// notification, the sender's notification and its removal. Charged at the
    /// receive that finds its channel empty.
    pub recv_block_cycles: u32,
    /// A send into a channel whose lines another CPU touched last (its latest send or
    /// receive was there): the slot line and the tail index coming back to this CPU.
    /// Charged at that send.
    pub chan_send_xcpu_ns: u32,
    /// A receive of a message sent on another CPU: the slot and the tail index the
    /// sender wrote. Charged at that receive.
    pub chan_recv_xcpu_ns: u32,
    /// A receive that blocks on a channel whose latest send was on another CPU, beyond
    /// `recv_block_cycles`: registering its listener on the event lines that CPU's
    /// notifications wrote. Charged at that receive.
    pub recv_register_xcpu_ns: u32,
    /// A send that wakes a receiver which registered on another CPU, beyond
    /// `chan_send_xcpu_ns`: the notification's walk of that CPU's listener. Charged at
    /// that send.
    pub notify_xcpu_ns: u32,
    // --- its run-queue lock: the hand-off, and a contended waiter's back-off (0: a
    // `spin_lock` waiter polls the word continuously and sees the release at once;
    // docs/cost-model.md, "The lock waiter's back-off"; `crate::lockwait`) ---
    /// A run-queue lock whose word was last held by another CPU, beyond one
    /// cache-line transfer (a locked read-modify-write of a remote line, not a read).
    /// Charged at the acquire, with the transfer.
    pub lock_handoff_ns: u32,
    /// A run-queue lock whose word was last held by another CPU, beyond `lock_cycles`,
    /// **transfer included**, when measured as a whole (the host machine: its locked
    /// read-modify-write of a remote line costs less than a line transfer plus a local
    /// lock, because the transfer and the locked operation overlap). 0: not measured;
    /// the line's transfer latency plus `lock_handoff_ns` is charged (every preset).
    pub lock_remote_ns: u32,
    /// One `pause` (spin-loop hint) of a waiting CPU, in ns.
    pub lock_pause_ns: u32,
    /// Back-off steps before the waiter yields: step k (1..=this) spins 2^k pauses, then
    /// polls the lock word. At most [`CostParams::MAX_LOCK_SPIN_STEPS`].
    pub lock_spin_steps: u32,
    /// One `sched_yield` round trip of a waiter that has spun its steps, in ns; it polls
    /// after each.
    pub lock_yield_ns: u32,
    /// Yields after the spin steps before the waiter parks. At most
    /// [`CostParams::MAX_LOCK_YIELDS`].
    pub lock_yields: u32,
    /// From a release to a waiter that has parked (its last poll came before the
    /// release) running again, woken by the releaser, in ns. 0: the waiter never
    /// parks, it keeps polling continuously after its yields.
    pub lock_unpark_ns: u32,
    // --- a woken task's header line ---
    /// One transfer of a task's own header line (its run state) between CPUs: paid by
    /// a waker on another CPU than the task last ran on, and again by a CPU that
    /// dispatches a task another CPU woke.
    pub wake_transfer_ns: u32,
    // --- how its prices vary, and where its ticks and clock start ---
    /// Event-to-event variation of the per-event CPU prices (a task switch, a send, a
    /// receive, a `schedule()` and a wake-up entry): one event's price's standard
    /// deviation over its median, in percent (`crate::jitter`). Before each event each
    /// such price is multiplied by its own factor, drawn uniformly around 1 from the
    /// run's seed.
    /// 0 = every event costs its price exactly and nothing is drawn (every preset; a
    /// machine file without it). At most [`CostParams::MAX_JITTER_PCT`].
    pub cost_jitter_pct: u32,
    /// With `tick_phase = "boot"`: CPU c's first tick comes `c ×` this many ns after
    /// CPU 0's (one period after the start), as the runtime's workers, started one
    /// after another, begin their tick grids (`worker_loop`). 0 = all at one instant
    /// (every preset; ignored with `random`). At most [`CostParams::MAX_TICK_STAGGER_NS`].
    pub tick_stagger_ns: u32,
    /// With `tick_phase = "boot"`: CPU 0's first tick, drawn per run from the seed,
    /// uniformly in `tick_first_min_ns..=tick_first_max_ns` ns after the start (the
    /// root's worker's first tick after the root first ran, as the calibration
    /// measures it over fresh runtimes). 0 (both) = one period (every preset).
    pub tick_first_min_ns: u32,
    pub tick_first_max_ns: u32,
    /// With `tick_phase = "boot"`: every other CPU's first tick, drawn per run and CPU
    /// from the seed, uniformly in `tick_other_min_ns..=tick_other_max_ns` ns after the
    /// start (the other workers' first ticks). 0 (both) = CPU 0's plus `c ×
    /// tick_stagger_ns` (every preset).
    pub tick_other_min_ns: u32,
    pub tick_other_max_ns: u32,
    /// The policy's clock at the root's first run, drawn per run from the seed,
    /// uniformly in `clock_origin_min_ns..=clock_origin_max_ns` ns: the runtime's clock
    /// (and so O(1)'s jiffy grid, `now / tick`) starts once the policy is built, before
    /// its workers start and the root is spawned, while the simulator's time 0
    /// is the root's fork. 0 (both) = the clock starts with the root (every preset).
    pub clock_origin_min_ns: u32,
    pub clock_origin_max_ns: u32,
}

impl CostParams {
    /// An rbtree insert or erase on a P6 (docs/cost-model.md): about five levels of
    /// compare-and-descend (a 64-bit key compared in two 32-bit halves, a dependent
    /// pointer load that hits L2: ~6 cycles each) and a few recolourings or rotations.
    fn p3_tree_op_cycles() -> u32 {
        40
    }

    /// One miss at a time: the presets' serial charging.
    fn serial_mlp() -> u32 {
        1
    }

    /// The largest `mlp` a machine may have (the simulator keeps that many end times).
    pub const MAX_MLP: u32 = 16;
    /// The largest `store_buffer` (entries; Zen 5's store queue has 104, Golden Cove's
    /// store buffer 114).
    pub const MAX_STORE_BUFFER: u32 = 128;
    /// The most back-off steps a lock waiter may spin (2^20 pauses: a millisecond even
    /// at 1 ns a pause; and `lock_pause_ns << steps` stays within 64 bits).
    pub const MAX_LOCK_SPIN_STEPS: u32 = 20;
    /// The most yields a lock waiter may make before it parks.
    pub const MAX_LOCK_YIELDS: u32 = 1000;

    /// The largest `cost_jitter_pct`: a standard deviation of 50 % is a uniform factor
    /// in 1 ± 0.866, so no price is ever scaled below 13 % of itself.
    pub const MAX_JITTER_PCT: u32 = 50;

    /// The largest `tick_stagger_ns`: one second (a worker that starts later than that
    /// is not a stagger but a stall).
    pub const MAX_TICK_STAGGER_NS: u32 = 1_000_000_000;

    /// Pentium III on a shared 100/133 MHz front-side bus (the PMQS SMP box, `up`, `smp-N`).
    pub fn p3_smp() -> CostParams {
        CostParams {
            kernel: KernelCosts {
                schedule_entry_cycles: 150,
                wakeup_entry_cycles: 80,
                goodness_cycles: 12,
                list_op_cycles: 8,
                recalc_cycles: 10,
                tick_cycles: 500,
                examine_cycles: 6,
                tree_op_cycles: CostParams::p3_tree_op_cycles(),
                context_switch_cycles: 1200,
                mm_switch_cycles: 600,
                syscall_cycles: 300,
                send_cycles: 3000,
                recv_cycles: 1500,
                copy_cycles_per_kb: 1000,
                fork_cycles: 30_000,
                exit_cycles: 20_000,
            },
            hw: HardwareCosts {
                lock_cycles: 25,
                l2_hit_cycles: 10,
                ipi_send_cycles: 100,
                mem_latency_ns: 180,
                c2c_latency_ns: 220,
                ipi_latency_ns: 1500,
                remote_cache_ns: 0,
                llc_latency_ns: 0,
                // The P6 bus allowed a few outstanding transactions per CPU, but the
                // presets keep the serial model they were studied with (docs/cost-model.md).
                mlp: CostParams::serial_mlp(),
                // The P6 had a store buffer too (12 entries), but the presets keep the
                // serial charging they were studied with (docs/cost-model.md).
                store_buffer: 0,
            },
            // A kernel, not a runtime: none of a runtime's own costs.
            host: HostKnobs::default(),
        }
    }

    /// IBM NUMA-Q quads: P6 CPUs on a 100 MHz quad bus; remote traffic through the
    /// IQ-Link, priced by the machine's distance matrix.
    pub fn numa_q() -> CostParams {
        // The remote cache is DRAM on the quad's own IQ-Link board, reached over the
        // local quad bus: priced like local memory [reading; the exact figure is not
        // in the sources].
        let p3 = CostParams::p3_smp();
        CostParams {
            hw: HardwareCosts { mem_latency_ns: 250, c2c_latency_ns: 250, remote_cache_ns: 250, ..p3.hw },
            ..p3
        }
    }

    /// Overlay a `[costs]` table from a machine file; unknown keys are errors.
    pub fn with_overrides(&self, overrides: toml::Table) -> Result<CostParams, MachineError> {
        let mut base = toml::Table::try_from(self).map_err(|e| MachineError(format!("costs: {e}")))?;
        for (k, v) in overrides {
            if !base.contains_key(&k) {
                return Err(MachineError(format!(
                    "costs: unknown key '{k}' (known: {})",
                    base.keys().cloned().collect::<Vec<_>>().join(", ")
                )));
            }
            // Every cost is a non-negative integer: say which one is not.
            if !v.as_integer().is_some_and(|n| (0..=u32::MAX as i64).contains(&n)) {
                return Err(MachineError(format!("costs: {k} = {v}: must be a whole number in 0..={}", u32::MAX)));
            }
            base.insert(k, v);
        }
        base.try_into().map_err(|e: toml::de::Error| MachineError(format!("costs: {}", e.message())))
    }

    pub fn validate(&self) -> Result<(), MachineError> {
        let positive = [
            ("context_switch_cycles", self.kernel.context_switch_cycles),
            ("tick_cycles", self.kernel.tick_cycles),
            ("mem_latency_ns", self.hw.mem_latency_ns),
            ("c2c_latency_ns", self.hw.c2c_latency_ns),
            ("ipi_latency_ns", self.hw.ipi_latency_ns),
        ];
        for (k, v) in positive {
            if v == 0 {
                return Err(MachineError(format!("costs: {k} = 0 must be positive")));
            }
        }
        if !(1..=CostParams::MAX_MLP).contains(&self.hw.mlp) {
            return Err(MachineError(format!(
                "costs: mlp = {} must be in 1..={} (outstanding misses per CPU)",
                self.hw.mlp,
                CostParams::MAX_MLP
            )));
        }
        let bounded = [
            (
                "lock_spin_steps",
                self.host.lock_spin_steps,
                CostParams::MAX_LOCK_SPIN_STEPS,
                "back-off steps of 2^k pauses",
            ),
            ("lock_yields", self.host.lock_yields, CostParams::MAX_LOCK_YIELDS, "yields before a lock waiter parks"),
            ("store_buffer", self.hw.store_buffer, CostParams::MAX_STORE_BUFFER, "store-buffer entries per CPU"),
            (
                "cost_jitter_pct",
                self.host.cost_jitter_pct,
                CostParams::MAX_JITTER_PCT,
                "a price's standard deviation, percent of its median",
            ),
            (
                "tick_stagger_ns",
                self.host.tick_stagger_ns,
                CostParams::MAX_TICK_STAGGER_NS,
                "ns between consecutive CPUs' first ticks",
            ),
        ];
        for (k, v, max, what) in bounded {
            if v > max {
                return Err(MachineError(format!("costs: {k} = {v} must be in 0..={max} ({what})")));
            }
        }
        let ranges = [
            ("tick_first", self.host.tick_first_min_ns, self.host.tick_first_max_ns),
            ("tick_other", self.host.tick_other_min_ns, self.host.tick_other_max_ns),
            ("clock_origin", self.host.clock_origin_min_ns, self.host.clock_origin_max_ns),
        ];
        for (k, lo, hi) in ranges {
            if lo > hi || hi > CostParams::MAX_TICK_STAGGER_NS {
                return Err(MachineError(format!(
                    "costs: {k}_min_ns = {lo}, {k}_max_ns = {hi}: need min <= max <= {} (ns: a CPU's first tick after the start, or the clock at the start)",
                    CostParams::MAX_TICK_STAGGER_NS
                )));
            }
        }
        Ok(())
    }
}
