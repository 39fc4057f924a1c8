//! Wake-up placement and load balancing shared by Linux's fair classes, `cfs` and
//! `eevdf`: the two differ in how a queue orders and picks its tasks, not in how tasks
//! reach a queue. Also the CPU-count scaling of their tunables ([`Scaling`]). Read
//! from Linux v6.6 `kernel/sched/fair.c` and `kernel/sched/topology.c`.
//!
//! * **Scheduling domains** ([`Domains`], `build_sched_domains`, `sd_init`). Built from
//!   the machine description the policies see (`SchedCommon::topo`: each CPU's NUMA
//!   node and the nodes' SLIT distances, no cache topology). The lowest level, `MC`,
//!   the last-level-cache domain (`sd_llc`), is a CPU's NUMA node; its groups are
//!   single CPUs. Above it, one `NUMA` level per distinct node distance beyond the
//!   local one spans the nodes within that distance; its groups are the spans of the
//!   level below. A level of one CPU, or with its child's span, is degenerate and
//!   dropped, so a 1-CPU machine has no domain, a 1-node machine one (`MC`), and a
//!   preset of several nodes at one distance two (`MC`, `NUMA`); nodes of one CPU
//!   keep only `NUMA`. The presets' Pentium III CPUs each have a private L2, so on
//!   that hardware the kernel would find no cache shared between CPUs and no LLC
//!   domain wider than one CPU; schedlab takes the node as the LLC, as on a
//!   multi-core socket. Every level starts with `SD_BALANCE_NEWIDLE`,
//!   `SD_BALANCE_EXEC`, `SD_BALANCE_FORK` and `SD_WAKE_AFFINE`, `imbalance_pct` 117
//!   (the policies' `imbalance_pct=` option), `busy_factor` 16, `min_interval` its
//!   weight in ms, `max_interval` twice that, `balance_interval` starting at the
//!   minimum. `MC` adds `SD_SHARE_PKG_RESOURCES` and `SD_PREFER_SIBLING`,
//!   `cache_nice_tries` 1; `NUMA` adds `SD_NUMA` and `SD_SERIALIZE`, `cache_nice_tries`
//!   2, and loses `SD_WAKE_AFFINE`, `SD_BALANCE_FORK` and `SD_BALANCE_EXEC` when its
//!   distance exceeds `RECLAIM_DISTANCE` (30: `numa-4x4`'s 100 does). `imb_numa_nr`
//!   is the node's weight / 8 (at least 1), scaled by the level's weight over the
//!   first NUMA level's.
//! * **Wake-up placement** ([`select_task_rq`], `select_task_rq_fair`, its fast path
//!   for `WF_TTWU`). The waker (the task running
//!   on the waking CPU, `current`) records the wakee (`record_wakee`: a flip each time
//!   it wakes another task than the last one, the count halved at most once a
//!   second). Unless the pair looks many-to-many (`wake_wide`: the smaller of the two
//!   flip counts at least the LLC's size and the larger at least that many times the
//!   smaller), a wake-up from another CPU the wakee may use asks `wake_affine`
//!   between the waking CPU and the previous one if the lowest domain spanning both
//!   has `SD_WAKE_AFFINE` ([`wake_affine_domain`]): `wake_affine_idle` (the waking CPU
//!   idle and sharing the LLC with the previous one: the previous one if it is idle,
//!   else the waking one; a `sync` wake-up with the waker alone on its CPU: the
//!   waking CPU; the previous CPU idle: the previous one), else `wake_affine_weight`
//!   (the waking CPU if its load with the wakee, minus the waker's for `sync`, ×100 is
//!   below the previous CPU's ×(100 + (117 − 100)/2), +1 for `sync`), else the
//!   previous CPU. Then `select_idle_sibling` from that target: the target if idle,
//!   the previous CPU if idle and in the target's LLC, the task's recently used CPU
//!   (`recent_used_cpu`, its previous CPU at its last wake-up) if idle and in the
//!   target's LLC, else the first idle CPU of the target's LLC from the target on
//!   (`select_idle_cpu`, wrapping), else the target.
//! * **Fork placement** ([`find_idlest_cpu`], `select_task_rq_fair` for `WF_FORK`):
//!   from the highest of the forking CPU's levels reached through `SD_BALANCE_FORK`,
//!   down: `find_idlest_group` (the allowed group of the lowest kind — has spare
//!   capacity, fully busy, overloaded —, then the most idle CPUs and least
//!   utilisation, or the lowest `avg_load`; taken over the forking CPU's own group
//!   only if it is of a lower kind, or has more idle CPUs, or its load is lower by
//!   more than `imbalance_pct`; a NUMA level keeps a task near its parent while the
//!   idle-CPU difference is at most 2 and the local group runs fewer than
//!   `imb_numa_nr` tasks), then `find_idlest_group_cpu` (the idle CPU that went idle
//!   last, by `idle_stamp`, else the least loaded one), continuing in that CPU's
//!   levels below. A `sync` first wake-up stays on the forking CPU.
//! * **Periodic balance** (`Balance::periodic_balance`, `rebalance_domains`): at each
//!   tick each CPU walks its levels from the lowest; a level is balanced when its
//!   `balance_interval` (×`busy_factor` while the CPU is not idle), in jiffies rounded
//!   up, at least 1 and at most `HZ × CPUs / 10`, has passed since its last balance;
//!   an `SD_SERIALIZE` level only while no other CPU balances one. `load_balance`:
//!   `should_we_balance` (the local group's first idle CPU, or its first CPU, does the
//!   work; otherwise the higher levels are not tried), the groups' statistics
//!   (`update_sg_lb_stats`: load, tasks, idle CPUs, and the kind: overloaded when it
//!   has more tasks than CPUs and its utilisation or runnable figure exceeds its
//!   capacity by `imbalance_pct`, fully busy when it has no spare capacity, else spare),
//!   the busiest group (`update_sd_pick_busiest`), `find_busiest_group`'s tests (a
//!   local group of a higher kind, or overloaded and within `imbalance_pct` of the
//!   busiest or above the average, is balanced; `SD_PREFER_SIBLING` groups with a
//!   task-count difference above 1 force a move; a busy CPU does not pull from a group
//!   that is not overloaded), `calculate_imbalance` (local group with spare capacity:
//!   at a level not sharing the LLC and a busiest group overloaded, fill the local
//!   spare capacity — `migrate_util` —; else half the task-count difference —
//!   `sibling_imbalance` for single-CPU or sibling-preferring groups, the idle-CPU
//!   difference otherwise —, a NUMA level ignoring up to 2 while the local group runs
//!   fewer than `imb_numa_nr` tasks; otherwise move load to bring both groups to the
//!   domain's average — `migrate_load`), `find_busiest_queue` (the most loaded queue,
//!   skipping one whose lone task outweighs the imbalance; the most utilised with two
//!   tasks or more; or the one with the most tasks), then `detach_tasks`: at most
//!   `min(`[`NR_MIGRATE`]`, nr_running)` tasks looked at, none if the source would be
//!   left with fewer than one while this CPU is idle, each subject to
//!   `can_migrate_task` (allowed here, not running, not cache hot — ran less than
//!   `sysctl_sched_migration_cost`, 0.5 ms, ago by the source's clock — unless the
//!   level has failed more than `cache_nice_tries` times in a row), a load move taking
//!   a task whose load shifted right by the failure count fits the remaining
//!   imbalance. Each pulled task is tested for preemption against this CPU's running
//!   one (an idle CPU is kicked). When every task looked at is pinned elsewhere the
//!   source CPU is dropped and the level tried again without it. A pass that moves
//!   nothing counts a failure; an unbalanced pass resets `balance_interval` to
//!   `min_interval`; a balanced one doubles it up to `max_interval` (to
//!   `MAX_PINNED_INTERVAL`, 512 ms, when everything was pinned).
//! * **Newly idle balance** (`Balance::newidle_balance`, `newidle_balance`): a CPU whose
//!   queue runs empty in `schedule()` stamps `idle_stamp` and, unless no queue has a
//!   task waiting (`rd->overload`) or its `avg_idle` is below the lowest level's
//!   `max_newidle_lb_cost`, runs `load_balance` on each `SD_BALANCE_NEWIDLE` level from
//!   the lowest while `avg_idle` covers the cost so far plus the level's
//!   `max_newidle_lb_cost`, stopping at the first pull (one task per pass). The cost
//!   of a level is the platform time the pass took (`sched_clock_cpu` before and
//!   after): virtual time in the simulator, the host's clock in the runtime. Each
//!   level's maximum decays by 1 % a second (`update_newidle_cost`); `avg_idle` (1 ms
//!   at first) moves an eighth of the way to each idle period ended by a wake-up, at
//!   most twice `max_idle_balance_cost`.
//!
//! Left out of the placement: `SIS_UTIL` (the kernel bounds the LLC scan by the LLC's
//! recent utilisation; here the whole LLC is scanned), idle cores (`has_idle_cores`,
//! `select_idle_smt`, `select_idle_core`: the machines have no SMT), clusters, energy-
//! and capacity-aware placement (every CPU has the same capacity, which cancels in
//! `wake_affine_weight`), `WF_CURRENT_CPU`, the per-CPU-kthread stacking rule, NUMA
//! balancing's preferred node, and group scheduling (`task_h_load` is the task's
//! weight). A CPU is idle when it runs nothing and has nothing queued
//! (`available_idle_cpu`; no `SCHED_IDLE` tasks, no idle states). Every CPU the
//! placement tests must be allowed for the task; a result outside its mask falls back
//! to the previous CPU or the first allowed one (`select_fallback_rq`). A task allowed
//! on one CPU only is not placed at all.
//!
//! Left out of the balancing. PELT is not modelled: a queue's load is the sum of its
//! runnable tasks' weights as last published (so a sleeping wakee is not in its
//! previous CPU's load, and `wake_affine_weight` subtracts nothing for it); a CPU's
//! utilisation is its full capacity (1024) when it has a task and 0 when not, its
//! runnable figure 1024 per task, a task's utilisation a full CPU. Active balancing
//! (the stopper pushing a running task) is left out: only waiting tasks move, so a
//! queue whose one task runs is never emptied by balancing. Also left out: the
//! `group_imbalanced` kind (the flag a child domain leaves when pinned tasks kept it
//! unbalanced), misfit, asymmetric-packing and SMT-balance groups, `LBF_DST_PINNED`'s
//! retry with another destination CPU, `LBF_NEED_BREAK` (with at most 32 tasks looked
//! at, the kernel's break at 32 never comes first), nohz idle balancing (every CPU's
//! tick runs here, idle or not, so an idle CPU balances itself at its idle interval),
//! `next_balance` bookkeeping, and the cache-hot rule's next-buddy and NUMA-locality
//! terms. Tasks are looked at in the policy's queue order (`cfs`: by vruntime,
//! `eevdf`: real-time then by deadline), where the kernel walks `cfs_tasks` from its
//! least recently run end. Each policy decides how a moved task keeps its lag
//! (`Balance::move_task`) and which waiting tasks may not leave at all
//! (`Balance::may_leave`).
//!
//! Costs: a `Work::Examine` and a read of the CPU's data per CPU placement tests for
//! idleness, a read of the queue's line per load `wake_affine_weight` reads, a write of
//! the waker's line (`record_wakee`; the wakee's line is already read by the wake-up).
//! Balancing and fork placement: a read of this CPU's data for its domains, a
//! `Work::Examine` and a read of the queue's line per CPU whose statistics a group
//! gathers or `find_busiest_queue` looks at (and of the CPU's data when its queue is
//! empty), a read of each candidate task's line, a read of one machine-wide line for
//! `rd->overload`, both queues locked for a move. `avg_idle` and `idle_stamp` sit on
//! the queue's line, which the wake-up that updates them writes.
//!
//! Observations, free and read by no decision: the placement's counters
//! ([`Wakeups::stats`]) and the balancing's and the migrations' by cause
//! ([`BalanceStats`]), which both policies report with their own.

use crate::common::{self, SchedCommon};
use crate::cpu::{CpuId, CpuMask, Topology, LOCAL_DISTANCE, MAX_CPUS};
use crate::options::{Param, Value};
use crate::platform::{Access, Line, Platform, Work};
use crate::task::TaskId;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

/// Most tasks one periodic balancing pass moves (`sysctl_sched_nr_migrate`).
pub const NR_MIGRATE: usize = 32;

/// `imbalance_pct` of every scheduling domain level above SMT (`sd_init`, Linux v6.6
/// `kernel/sched/topology.c`), which `wake_affine_weight` halves into its bias.
pub const SD_IMBALANCE_PCT: u64 = 117;

// ----------------------------------------------------------- tunable scaling ------

/// `sysctl_sched_tunable_scaling`: how the fair class's time tunables grow with the
/// CPU count (`get_update_sysctl_factor`, `update_sysctl` in `kernel/sched/fair.c`,
/// the same from 2.6.32 to v6.12): CFS scales `sched_latency`,
/// `sched_min_granularity` and `sched_wakeup_granularity`, EEVDF `sched_base_slice`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaling {
    /// ×1.
    None,
    /// ×(1 + ilog2(min(ncpus, 8))), the kernel's default.
    Log,
    /// ×min(ncpus, 8).
    Linear,
}

impl Scaling {
    /// The option's words, the default first.
    pub const WORDS: &'static [&'static str] = &["log", "none", "linear"];

    /// `get_update_sysctl_factor` for `ncpus` CPUs.
    pub fn factor(self, ncpus: usize) -> u64 {
        let cpus = ncpus.clamp(1, 8) as u64;
        match self {
            Scaling::None => 1,
            Scaling::Log => 1 + cpus.ilog2() as u64,
            Scaling::Linear => cpus,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Scaling::None => "none",
            Scaling::Log => "log",
            Scaling::Linear => "linear",
        }
    }
    /// The scaling a word of [`Scaling::WORDS`] names.
    pub fn from_word(w: &str) -> Scaling {
        match w {
            "none" => Scaling::None,
            "linear" => Scaling::Linear,
            _ => Scaling::Log,
        }
    }
    /// The `scaling=` option row of a policy whose config keeps it at `get`/`set`.
    pub(crate) const fn param<C>(doc: &'static str, get: fn(&C) -> Value, set: fn(&mut C, Value)) -> Param<C> {
        Param::choice("scaling", Scaling::WORDS, doc, get, set)
    }
}

// ------------------------------------------------------------ placement ------

/// A CPU index or none, in an atomic.
const NO_CPU: u32 = u32::MAX;
/// A task id or none.
const NO_TASK: u32 = u32::MAX;

/// The wake-up fields of one task's `task_struct` (written by the waker or by the
/// wakee's waker, which owns it until it is queued).
#[derive(Debug)]
struct WakeFields {
    /// `recent_used_cpu`: the previous CPU at its last wake-up.
    recent_used_cpu: AtomicU32,
    /// `last_wakee`: the task it last woke.
    last_wakee: AtomicU32,
    /// `wakee_flips`: how often it woke another task than the last one.
    wakee_flips: AtomicU32,
    /// `wakee_flip_decay_ts`: when the flips were last halved (ns).
    flip_decay_ts: AtomicU64,
    /// Observation: the CPU the task last ran on (`NO_CPU` before its first run).
    last_ran: AtomicU32,
    /// Observation: what last moved it to another queue since it last ran
    /// ([`Moved`] as a byte).
    moved: AtomicU8,
}

impl Default for WakeFields {
    fn default() -> Self {
        WakeFields {
            recent_used_cpu: AtomicU32::new(NO_CPU),
            last_wakee: AtomicU32::new(NO_TASK),
            wakee_flips: AtomicU32::new(0),
            flip_decay_ts: AtomicU64::new(0),
            last_ran: AtomicU32::new(NO_CPU),
            moved: AtomicU8::new(Moved::Not as u8),
        }
    }
}

/// What last moved a task to another queue (observation, for [`BalanceStats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Moved {
    /// Nothing since it last ran.
    Not = 0,
    /// Its wake-up's placement (`select_task_rq`).
    Wake = 1,
    /// A newly idle balance pulled it.
    NewIdle = 2,
    /// The periodic balance of an idle CPU pulled it.
    Idle = 3,
    /// The periodic balance of a busy CPU pulled it.
    Busy = 4,
}

impl Moved {
    fn from_byte(b: u8) -> Moved {
        match b {
            1 => Moved::Wake,
            2 => Moved::NewIdle,
            3 => Moved::Idle,
            4 => Moved::Busy,
            _ => Moved::Not,
        }
    }
    fn by(idle: IdleType) -> Moved {
        match idle {
            IdleType::NewlyIdle => Moved::NewIdle,
            IdleType::Idle => Moved::Idle,
            IdleType::NotIdle => Moved::Busy,
        }
    }
}

/// Observations of the shared placement and balancing, like the kernel's schedstats
/// (free: nothing is charged or touched for them, and no decision reads them). The
/// policies report them with their own counters (`Policy::stats`).
#[derive(Debug, Default)]
pub struct BalanceStats {
    /// Dispatches of a task on another CPU than the one it last ran on (what the
    /// simulator's report counts as `migrations`), by what last moved it: its
    /// wake-up's placement, a newly idle balance, the periodic balance of an idle
    /// CPU, of a busy CPU, or by none of these (never expected: the five sum to the
    /// migrations only if every path that moves a task is recorded).
    migr_wake: AtomicU64,
    migr_newidle: AtomicU64,
    migr_idle: AtomicU64,
    migr_busy: AtomicU64,
    migr_other: AtomicU64,
    /// Wake-ups (not a task's first) placed on another CPU than its previous one,
    /// by whether the chosen CPU was idle (ran and queued nothing) then.
    wake_moved_to_idle: AtomicU64,
    wake_moved_to_busy: AtomicU64,
    /// `newidle_balance` calls (a queue ran empty in `schedule()`), those that
    /// balanced nothing because no queue had a task waiting (`rd->overload`) or
    /// because `avg_idle` was shorter than the lowest level's cost, and those that
    /// pulled a task.
    newidle: AtomicU64,
    newidle_no_overload: AtomicU64,
    newidle_short_idle: AtomicU64,
    newidle_pulled: AtomicU64,
    /// `load_balance` passes of the periodic balance, and tasks they moved.
    periodic_passes: AtomicU64,
    periodic_pulled: AtomicU64,
    /// Tasks `detach_tasks` refused as cache hot, in newly idle and in periodic passes.
    hot_refused_newidle: AtomicU64,
    hot_refused_periodic: AtomicU64,
}

impl BalanceStats {
    fn bump(c: &AtomicU64) {
        c.fetch_add(1, Relaxed);
    }

    /// The counters (`name`, value) in a fixed order.
    pub fn list(&self) -> Vec<(&'static str, u64)> {
        let g = |c: &AtomicU64| c.load(Relaxed);
        vec![
            ("migrations_by_wake", g(&self.migr_wake)),
            ("migrations_by_newidle", g(&self.migr_newidle)),
            ("migrations_by_idle_balance", g(&self.migr_idle)),
            ("migrations_by_busy_balance", g(&self.migr_busy)),
            ("migrations_by_other", g(&self.migr_other)),
            ("wake_moved_to_idle", g(&self.wake_moved_to_idle)),
            ("wake_moved_to_busy", g(&self.wake_moved_to_busy)),
            ("newidle", g(&self.newidle)),
            ("newidle_no_overload", g(&self.newidle_no_overload)),
            ("newidle_short_idle", g(&self.newidle_short_idle)),
            ("newidle_pulled", g(&self.newidle_pulled)),
            ("periodic_passes", g(&self.periodic_passes)),
            ("periodic_pulled", g(&self.periodic_pulled)),
            ("hot_refused_newidle", g(&self.hot_refused_newidle)),
            ("hot_refused_periodic", g(&self.hot_refused_periodic)),
        ]
    }
}

/// What the wake-up placement keeps: each CPU's LLC size (`sd_llc_size`) and each
/// task's wake-up fields.
#[derive(Debug)]
pub struct Wakeups {
    llc_size: Box<[u32]>,
    tasks: Box<[WakeFields]>,
    /// Observations of the placement (free: nothing is charged or touched for them).
    /// Wake-ups placed by [`select_task_rq`] (a task allowed on more than one CPU),
    /// those from another CPU than the task's previous one, those `wake_wide` kept
    /// from `wake_affine`, the `wake_affine` calls, and those that chose the waking
    /// CPU by `wake_affine_weight`.
    placed: AtomicU64,
    from_other_cpu: AtomicU64,
    wide: AtomicU64,
    affine: AtomicU64,
    affine_weight_to_waker: AtomicU64,
}

/// How often `record_wakee` halves a waker's flips at most: once a second (`HZ`
/// jiffies).
const FLIP_DECAY_NS: u64 = 1_000_000_000;

impl Wakeups {
    /// For a machine of topology `topo` and task ids `0..capacity`.
    pub fn new(topo: &Topology, capacity: usize) -> Wakeups {
        let llc_size =
            (0..topo.ncpus()).map(|c| topo.node_of.iter().filter(|&&n| n == topo.node_of[c]).count() as u32).collect();
        Wakeups {
            llc_size,
            tasks: (0..capacity).map(|_| WakeFields::default()).collect(),
            placed: AtomicU64::new(0),
            from_other_cpu: AtomicU64::new(0),
            wide: AtomicU64::new(0),
            affine: AtomicU64::new(0),
            affine_weight_to_waker: AtomicU64::new(0),
        }
    }

    /// A new task `t` (created at `now`): no flips, no recently used CPU.
    pub fn task_new(&self, t: TaskId, now: u64) {
        let f = &self.tasks[t as usize];
        f.recent_used_cpu.store(NO_CPU, Relaxed);
        f.last_wakee.store(NO_TASK, Relaxed);
        f.wakee_flips.store(0, Relaxed);
        f.flip_decay_ts.store(now, Relaxed);
        f.last_ran.store(NO_CPU, Relaxed);
        f.moved.store(Moved::Not as u8, Relaxed);
    }

    /// The placement counters (`name`, value) in a fixed order.
    pub fn stats(&self) -> Vec<(&'static str, u64)> {
        let g = |c: &AtomicU64| c.load(Relaxed);
        vec![
            ("wake_placed", g(&self.placed)),
            ("wake_from_other_cpu", g(&self.from_other_cpu)),
            ("wake_wide", g(&self.wide)),
            ("wake_affine", g(&self.affine)),
            ("wake_affine_weight_to_waker", g(&self.affine_weight_to_waker)),
        ]
    }

    /// Observation: `t` moved to another queue, by `why`.
    fn set_moved(&self, t: TaskId, why: Moved) {
        self.tasks[t as usize].moved.store(why as u8, Relaxed);
    }

    /// `t`'s `wakee_flips` (observation).
    pub fn wakee_flips(&self, t: TaskId) -> u32 {
        self.tasks[t as usize].wakee_flips.load(Relaxed)
    }

    /// `record_wakee`: `waker` wakes `wakee` at `now`.
    fn record_wakee(&self, waker: TaskId, wakee: TaskId, now: u64) {
        let f = &self.tasks[waker as usize];
        if now > f.flip_decay_ts.load(Relaxed).saturating_add(FLIP_DECAY_NS) {
            f.wakee_flips.store(f.wakee_flips.load(Relaxed) >> 1, Relaxed);
            f.flip_decay_ts.store(now, Relaxed);
        }
        if f.last_wakee.load(Relaxed) != wakee {
            f.last_wakee.store(wakee, Relaxed);
            f.wakee_flips.store(f.wakee_flips.load(Relaxed).saturating_add(1), Relaxed);
        }
    }

    /// `wake_wide`: do `waker` and `wakee` look like a many-to-many relation wider
    /// than the LLC of `this` (so the wakee should not be pulled to the waker)?
    fn wake_wide(&self, waker: Option<TaskId>, wakee: TaskId, this: CpuId) -> bool {
        let mut master = waker.map_or(0, |w| self.wakee_flips(w));
        let mut slave = self.wakee_flips(wakee);
        let factor = self.llc_size[this];
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave.saturating_mul(factor))
    }
}

/// Do `a` and `b` share the last-level cache (`cpus_share_cache`: the same node here)?
pub fn shares_cache(common: &SchedCommon, a: CpuId, b: CpuId) -> bool {
    common.topo.node_of[a] == common.topo.node_of[b]
}

fn is_idle<P: Platform>(common: &SchedCommon, p: &P, cpu: CpuId) -> bool {
    p.charge(Work::Examine);
    p.touch(Line::CpuData(cpu), Access::Read);
    common.cpu(cpu).curr().is_none() && common.queue_len(cpu) == 0
}

/// The inputs of one wake-up placement besides the machine state.
pub struct Wake<'a, L: Fn(CpuId) -> u64, W: Fn(TaskId) -> u64> {
    pub wakeups: &'a Wakeups,
    /// A queue's published weighted load (`cpu_load`).
    pub load: L,
    /// A task's weight (`task_h_load`).
    pub weight: W,
}

/// `select_task_rq_fair` for the wake-up (`WF_TTWU`, `WF_SYNC` if `sync`) of `t`,
/// whose previous CPU is `prev`, from `p.this_cpu()` (see the module doc).
pub fn select_task_rq<P: Platform, L: Fn(CpuId) -> u64, W: Fn(TaskId) -> u64>(
    common: &SchedCommon,
    p: &P,
    w: &Wake<'_, L, W>,
    t: TaskId,
    prev: CpuId,
    sync: bool,
) -> CpuId {
    let n = common.ncpus();
    let allowed = common.tasks.get(t).cpus_allowed();
    // `select_task_rq`: a task that can run on one CPU only is not placed.
    if (allowed.0 & CpuMask::first(n).0).count_ones() <= 1 {
        return home_cpu(common, t, prev);
    }
    let this = p.this_cpu();
    let waker = common.cpu(this).curr().filter(|&c| c != t);
    if let Some(c) = waker {
        p.touch(Line::Task(c), Access::Write);
        w.wakeups.record_wakee(c, t, p.now());
    }
    let wide = w.wakeups.wake_wide(waker, t, this);
    let want_affine = !wide && allowed.contains(this);
    let mut target = prev;
    let bump = |c: &AtomicU64| c.fetch_add(1, Relaxed);
    bump(&w.wakeups.placed);
    if this != prev {
        bump(&w.wakeups.from_other_cpu);
    }
    if wide {
        bump(&w.wakeups.wide);
    }
    // The lowest domain spanning `this` and `prev` (the top one spans every CPU)
    // decides; without SD_WAKE_AFFINE the search starts from `prev`.
    if want_affine && this != prev && wake_affine_domain(common, this, prev) {
        bump(&w.wakeups.affine);
        target = wake_affine(common, p, w, t, this, prev, sync && waker.is_some(), waker);
    }
    let cpu = select_idle_sibling(common, p, w.wakeups, t, prev, target);
    if allowed.contains(cpu) {
        cpu
    } else {
        home_cpu(common, t, prev)
    }
}

/// `wake_affine`: the waking CPU `this` or the previous CPU `prev` as the target of
/// the idle-sibling search.
#[allow(clippy::too_many_arguments)]
fn wake_affine<P: Platform, L: Fn(CpuId) -> u64, W: Fn(TaskId) -> u64>(
    common: &SchedCommon,
    p: &P,
    w: &Wake<'_, L, W>,
    t: TaskId,
    this: CpuId,
    prev: CpuId,
    sync: bool,
    waker: Option<TaskId>,
) -> CpuId {
    // `wake_affine_idle`.
    if is_idle(common, p, this) && shares_cache(common, this, prev) {
        return if is_idle(common, p, prev) { prev } else { this };
    }
    if sync && common.queue_len(this) == 1 {
        return this;
    }
    if is_idle(common, p, prev) {
        return prev;
    }
    // `wake_affine_weight` (`WA_BIAS`; equal capacities cancel).
    p.touch(Line::Queue(this), Access::Read);
    let mut this_load = (w.load)(this) as u128;
    if sync {
        let current = waker.map_or(0, |c| (w.weight)(c)) as u128;
        if current > this_load {
            return this;
        }
        this_load -= current;
    }
    let this_eff = (this_load + (w.weight)(t) as u128) * 100;
    p.touch(Line::Queue(prev), Access::Read);
    let prev_eff = (w.load)(prev) as u128 * (100 + (SD_IMBALANCE_PCT as u128 - 100) / 2) + sync as u128;
    if this_eff < prev_eff {
        w.wakeups.affine_weight_to_waker.fetch_add(1, Relaxed);
        this
    } else {
        prev
    }
}

/// `select_idle_sibling`: `target` if idle, else `prev` if idle and sharing its LLC,
/// else `t`'s recently used CPU if idle and sharing it, else the first idle CPU of
/// `target`'s LLC from `target` on, else `target`.
fn select_idle_sibling<P: Platform>(
    common: &SchedCommon,
    p: &P,
    wakeups: &Wakeups,
    t: TaskId,
    prev: CpuId,
    target: CpuId,
) -> CpuId {
    let allowed = common.tasks.get(t).cpus_allowed();
    let idle = |c: CpuId| allowed.contains(c) && is_idle(common, p, c);
    if idle(target) {
        return target;
    }
    if prev != target && shares_cache(common, prev, target) && idle(prev) {
        return prev;
    }
    let recent = wakeups.tasks[t as usize].recent_used_cpu.swap(prev as u32, Relaxed);
    let recent = recent as usize;
    if recent != NO_CPU as usize
        && recent < common.ncpus()
        && recent != prev
        && recent != target
        && shares_cache(common, recent, target)
        && idle(recent)
    {
        return recent;
    }
    // `select_idle_cpu` over the target's LLC, from the CPU after it, wrapping.
    let n = common.ncpus();
    for k in 1..=n {
        let c = (target + k) % n;
        if shares_cache(common, c, target) && idle(c) {
            return c;
        }
    }
    target
}

/// `prev` if `t` may run there, else its first allowed CPU.
pub fn home_cpu(common: &SchedCommon, t: TaskId, prev: CpuId) -> CpuId {
    let allowed = common.tasks.get(t).cpus_allowed();
    if allowed.contains(prev) {
        prev
    } else {
        (0..common.ncpus()).find(|&c| allowed.contains(c)).unwrap_or(prev)
    }
}

// ------------------------------------------------------------- domains ------

/// A scheduling domain's behaviour flags (the names of Linux v6.6
/// `include/linux/sched/sd_flags.h`; the bit values are schedlab's).
pub mod sd {
    /// Balance when a CPU is about to go idle (`newidle_balance`).
    pub const BALANCE_NEWIDLE: u32 = 1 << 0;
    /// Balance on `exec`.
    pub const BALANCE_EXEC: u32 = 1 << 1;
    /// Place a forked task with `find_idlest_cpu`.
    pub const BALANCE_FORK: u32 = 1 << 2;
    /// `wake_affine` may pull a wakee to the waking CPU across this domain.
    pub const WAKE_AFFINE: u32 = 1 << 3;
    /// The CPUs share the last-level cache (`SD_SHARE_PKG_RESOURCES`).
    pub const SHARE_PKG_RESOURCES: u32 = 1 << 4;
    /// Only one CPU at a time balances this domain (`SD_SERIALIZE`).
    pub const SERIALIZE: u32 = 1 << 5;
    /// Spread tasks over the child domains first (`SD_PREFER_SIBLING`).
    pub const PREFER_SIBLING: u32 = 1 << 6;
    /// A NUMA level.
    pub const NUMA: u32 = 1 << 7;
}

/// `SCHED_CAPACITY_SCALE`: one CPU's capacity; every CPU here has it.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;
/// `busy_factor` of every domain (`sd_init`, Linux v6.6 `kernel/sched/topology.c`):
/// a busy CPU balances this many times less often.
pub const BUSY_FACTOR: u64 = 16;
/// `sysctl_sched_migration_cost` (Linux v6.6 `kernel/sched/fair.c`): a task that ran
/// less than this long ago is cache hot; also the initial `max_idle_balance_cost`.
pub const MIGRATION_COST_NS: u64 = 500_000;
/// `RECLAIM_DISTANCE` (`node_reclaim_distance`, Linux v6.6 `include/linux/topology.h`):
/// a NUMA level farther than this loses `SD_WAKE_AFFINE`, `SD_BALANCE_FORK` and
/// `SD_BALANCE_EXEC` (`sd_init`).
pub const RECLAIM_DISTANCE: u32 = 30;
/// `NUMA_IMBALANCE_MIN` (Linux v6.6 `kernel/sched/fair.c`): an imbalance of at most
/// this many tasks between NUMA groups is allowed while the destination is lightly
/// loaded (`adjust_numa_imbalance`).
pub const NUMA_IMBALANCE_MIN: i64 = 2;
/// `MAX_PINNED_INTERVAL` (ms, Linux v6.6 `kernel/sched/fair.c`): how far the interval
/// of a domain whose tasks are all pinned may double.
pub const MAX_PINNED_INTERVAL: u64 = 512;

/// One scheduling domain of one CPU (`struct sched_domain` as `sd_init` and
/// `build_sched_domains` make it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    /// `MC` (the LLC, a node here) or `NUMA`.
    pub name: &'static str,
    pub span: CpuMask,
    /// The level's groups: the spans of the level below (`build_sched_groups`), one
    /// CPU each at the lowest level; this CPU's group first, then from this CPU on in
    /// CPU order, wrapping.
    pub groups: Vec<CpuMask>,
    /// [`sd`] flags.
    pub flags: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    /// In ms: `min_interval` is the span's weight, `max_interval` twice it.
    pub min_interval: u64,
    pub max_interval: u64,
    /// `imb_numa_nr`: up to how many running tasks a NUMA level tolerates a small
    /// imbalance (`adjust_numa_imbalance`); 0 elsewhere.
    pub imb_numa_nr: usize,
    /// The groups' `SD_PREFER_SIBLING` (a group carries its child domain's flags).
    pub groups_prefer_sibling: bool,
}

impl Level {
    /// `span_weight`.
    pub fn weight(&self) -> usize {
        self.span.0.count_ones() as usize
    }
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
}

/// What one CPU's copy of a domain changes as it balances.
#[derive(Debug)]
struct LevelState {
    /// `balance_interval`, ms.
    balance_interval: AtomicU64,
    /// `last_balance`, jiffies.
    last_balance: AtomicU64,
    nr_balance_failed: AtomicU32,
    /// `max_newidle_lb_cost`, ns.
    max_newidle_lb_cost: AtomicU64,
    /// `last_decay_max_lb_cost`, jiffies.
    last_decay: AtomicU64,
}

/// A run queue's idle statistics (`struct rq`: `avg_idle`, `idle_stamp`,
/// `max_idle_balance_cost`).
#[derive(Debug)]
struct RqIdle {
    avg_idle: AtomicU64,
    /// When the CPU last went newly idle and has not had a task since (0: not idle).
    idle_stamp: AtomicU64,
    max_idle_balance_cost: AtomicU64,
}

/// The scheduling domains of every CPU and their balancing state.
#[derive(Debug)]
pub struct Domains {
    levels: Vec<Vec<Level>>,
    state: Vec<Vec<LevelState>>,
    rq: Box<[RqIdle]>,
    /// Timer ticks per second (`HZ`).
    hz: u64,
    /// `max_load_balance_interval`: `HZ * ncpus / 10` jiffies.
    max_lb_interval: u64,
    /// The `SD_SERIALIZE` balancing lock.
    serialize: AtomicBool,
    /// Observations of placement and balancing.
    stats: BalanceStats,
}

fn mask_of(cpus: impl Iterator<Item = CpuId>) -> CpuMask {
    CpuMask(cpus.fold(0u64, |m, c| m | 1u64 << c))
}

fn cpus_of(m: CpuMask) -> impl Iterator<Item = CpuId> {
    (0..MAX_CPUS).filter(move |&c| m.contains(c))
}

fn weight_of(m: CpuMask) -> usize {
    m.0.count_ones() as usize
}

impl Domains {
    /// The domains `build_sched_domains` makes for `topo` (see the module doc), each
    /// level's `imbalance_pct` `imbalance_pct`, at `hz` ticks per second.
    pub fn new(topo: &Topology, hz: u32, imbalance_pct: u32) -> Domains {
        let n = topo.ncpus();
        let node = &topo.node_of;
        let nnodes = topo.nnodes();
        // The distances above local, in increasing order (`sched_domains_numa_distance`).
        let mut dists: Vec<u32> = (0..nnodes)
            .flat_map(|a| (0..nnodes).map(move |b| (a, b)))
            .map(|(a, b)| topo.node_distance(a, b))
            .filter(|&d| d > LOCAL_DISTANCE)
            .collect();
        dists.sort_unstable();
        dists.dedup();
        // Candidate levels, before degenerate ones go: MC (the node), then one NUMA
        // level per distance. Their spans, by level and CPU.
        let mc = |c: CpuId| mask_of((0..n).filter(|&i| node[i] == node[c]));
        let mut spans: Vec<Vec<CpuMask>> = vec![(0..n).map(mc).collect()];
        for &d in &dists {
            spans
                .push((0..n).map(|c| mask_of((0..n).filter(|&i| topo.node_distance(node[c], node[i]) <= d))).collect());
        }
        // `imb_numa_nr` (`build_sched_domains`): the first level above the LLC spans
        // one LLC (the node), so `imb` is its weight / 8, at least 1, scaled by the
        // level's weight over the first NUMA level's.
        let node_weight = |c: CpuId| weight_of(spans[0][c]);
        let levels: Vec<Vec<Level>> = (0..n)
            .map(|c| {
                let mut out: Vec<Level> = Vec::new();
                for (k, row) in spans.iter().enumerate() {
                    let span = row[c];
                    let groups = {
                        let mut g: Vec<CpuMask> = Vec::new();
                        for i in (0..n).map(|j| (c + j) % n).filter(|&i| span.contains(i)) {
                            let m = if k == 0 { CpuMask::single(i) } else { spans[k - 1][i] };
                            if !g.contains(&m) {
                                g.push(m);
                            }
                        }
                        g
                    };
                    let base = sd::BALANCE_NEWIDLE | sd::BALANCE_EXEC | sd::BALANCE_FORK | sd::WAKE_AFFINE;
                    let w = weight_of(span) as u64;
                    let level = if k == 0 {
                        Level {
                            name: "MC",
                            span,
                            groups,
                            flags: base | sd::PREFER_SIBLING | sd::SHARE_PKG_RESOURCES,
                            imbalance_pct,
                            cache_nice_tries: 1,
                            min_interval: w,
                            max_interval: 2 * w,
                            imb_numa_nr: 0,
                            groups_prefer_sibling: false,
                        }
                    } else {
                        let d = dists[k - 1];
                        let mut flags = base | sd::NUMA | sd::SERIALIZE;
                        if d > RECLAIM_DISTANCE {
                            flags &= !(sd::BALANCE_EXEC | sd::BALANCE_FORK | sd::WAKE_AFFINE);
                        }
                        let imb = (node_weight(c) >> 3).max(1);
                        let imb_span = weight_of(spans[1][c]).max(1);
                        Level {
                            name: "NUMA",
                            span,
                            groups,
                            flags,
                            imbalance_pct,
                            cache_nice_tries: 2,
                            min_interval: w,
                            max_interval: 2 * w,
                            imb_numa_nr: imb * (weight_of(span) / imb_span).max(1),
                            // The first NUMA level's groups are nodes, whose domain
                            // (`NODE`) prefers siblings; a NUMA level's does not.
                            groups_prefer_sibling: k == 1,
                        }
                    };
                    // `sd_degenerate` (one CPU) and `sd_parent_degenerate` (the span
                    // of the level kept below).
                    let degenerate = level.weight() <= 1 || out.last().is_some_and(|l| l.span == level.span);
                    if !degenerate {
                        out.push(level);
                    }
                }
                out
            })
            .collect();
        let state = levels
            .iter()
            .map(|ls| {
                ls.iter()
                    .map(|l| LevelState {
                        balance_interval: AtomicU64::new(l.min_interval),
                        last_balance: AtomicU64::new(0),
                        nr_balance_failed: AtomicU32::new(0),
                        max_newidle_lb_cost: AtomicU64::new(0),
                        last_decay: AtomicU64::new(0),
                    })
                    .collect()
            })
            .collect();
        let rq = (0..n)
            .map(|_| RqIdle {
                avg_idle: AtomicU64::new(2 * MIGRATION_COST_NS),
                idle_stamp: AtomicU64::new(0),
                max_idle_balance_cost: AtomicU64::new(MIGRATION_COST_NS),
            })
            .collect();
        let hz = hz.max(1) as u64;
        Domains {
            levels,
            state,
            rq,
            hz,
            max_lb_interval: (hz * n as u64 / 10).max(1),
            serialize: AtomicBool::new(false),
            stats: BalanceStats::default(),
        }
    }

    /// CPU `cpu`'s domains, lowest first (none on a machine of one CPU).
    pub fn levels(&self, cpu: CpuId) -> &[Level] {
        &self.levels[cpu]
    }

    /// `balance_interval` (ms) of `cpu`'s level `k`.
    pub fn balance_interval(&self, cpu: CpuId, k: usize) -> u64 {
        self.state[cpu][k].balance_interval.load(Relaxed)
    }

    /// `nr_balance_failed` of `cpu`'s level `k`.
    pub fn nr_balance_failed(&self, cpu: CpuId, k: usize) -> u32 {
        self.state[cpu][k].nr_balance_failed.load(Relaxed)
    }

    /// The placement and balancing counters (observation).
    pub fn stats(&self) -> &BalanceStats {
        &self.stats
    }

    /// `avg_idle` of `cpu`'s queue (ns).
    pub fn avg_idle(&self, cpu: CpuId) -> u64 {
        self.rq[cpu].avg_idle.load(Relaxed)
    }

    /// `jiffies` at `now` ns.
    fn jiffies(&self, now: u64) -> u64 {
        now / (1_000_000_000 / self.hz).max(1)
    }

    /// `get_sd_balance_interval`: level `k`'s interval in jiffies, ×`busy_factor`
    /// when the CPU is busy, at least 1 and at most `max_load_balance_interval`.
    pub fn interval_jiffies(&self, cpu: CpuId, k: usize, busy: bool) -> u64 {
        let ms = self.balance_interval(cpu, k) * if busy { BUSY_FACTOR } else { 1 };
        // `msecs_to_jiffies` rounds up.
        (ms * self.hz).div_ceil(1000).clamp(1, self.max_lb_interval)
    }

    /// `update_newidle_cost`: raise `cpu`'s level `k`'s `max_newidle_lb_cost` to
    /// `cost`, or decay it by 1 % once a second. Returns whether it decayed.
    fn update_newidle_cost(&self, cpu: CpuId, k: usize, cost: u64, jiffies: u64) -> bool {
        let st = &self.state[cpu][k];
        if cost > st.max_newidle_lb_cost.load(Relaxed) {
            st.max_newidle_lb_cost.store(cost, Relaxed);
            st.last_decay.store(jiffies, Relaxed);
        } else if jiffies > st.last_decay.load(Relaxed) + self.hz {
            st.max_newidle_lb_cost.store(st.max_newidle_lb_cost.load(Relaxed) * 253 / 256, Relaxed);
            st.last_decay.store(jiffies, Relaxed);
            return true;
        }
        false
    }

    /// A task was woken onto `cpu` at `now`, its queue's clock (`ttwu_do_activate`;
    /// the fields are on the queue's line the wake-up writes): if the CPU went
    /// newly idle, fold the idle period into `avg_idle` (an eighth of the difference,
    /// `update_avg`), at most twice `max_idle_balance_cost`.
    pub fn note_wakeup(&self, cpu: CpuId, now: u64) {
        let rq = &self.rq[cpu];
        let stamp = rq.idle_stamp.swap(0, Relaxed);
        if stamp != 0 {
            let delta = now.saturating_sub(stamp) as i64;
            let avg = rq.avg_idle.load(Relaxed) as i64;
            let new = (avg + (delta - avg) / 8).max(0) as u64;
            rq.avg_idle.store(new.min(2 * rq.max_idle_balance_cost.load(Relaxed)), Relaxed);
        }
    }
}

/// Does `this`'s lowest domain spanning `prev` have `SD_WAKE_AFFINE`? Within a node
/// (the LLC) always; across nodes when their distance is at most
/// [`RECLAIM_DISTANCE`] (the NUMA level of that distance keeps the flag).
pub fn wake_affine_domain(common: &SchedCommon, this: CpuId, prev: CpuId) -> bool {
    let topo = &common.topo;
    shares_cache(common, this, prev) || topo.node_distance(topo.node_of[this], topo.node_of[prev]) <= RECLAIM_DISTANCE
}

// ------------------------------------------------------------ balancing ------

/// `enum cpu_idle_type`: why a CPU balances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleType {
    /// The periodic balance of an idle CPU.
    Idle,
    /// The periodic balance of a busy CPU.
    NotIdle,
    /// A CPU about to go idle (`newidle_balance`).
    NewlyIdle,
}

/// `enum group_type`, the kinds schedlab's machines produce, in the kernel's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GroupType {
    HasSpare,
    FullyBusy,
    Overloaded,
}

/// `enum migration_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Migration {
    Load,
    Util,
    Task,
}

/// `struct sg_lb_stats`: one group's statistics.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupStats {
    load: u64,
    util: u64,
    runnable: u64,
    nr: usize,
    idle_cpus: usize,
    weight: usize,
    capacity: u64,
    avg_load: u64,
    kind: GroupType,
}

/// `group_is_overloaded`.
fn overloaded(pct: u64, s: &GroupStats) -> bool {
    s.nr > s.weight && (s.capacity * 100 < s.util * pct || s.capacity * pct < s.runnable * 100)
}

/// `group_has_capacity`.
fn has_capacity(pct: u64, s: &GroupStats) -> bool {
    s.nr < s.weight || (s.capacity * pct >= s.runnable * 100 && s.capacity * 100 > s.util * pct)
}

/// `update_sd_pick_busiest`: is `s` busier than the busiest so far?
fn pick_busiest(s: &GroupStats, busiest: Option<&GroupStats>) -> bool {
    if s.nr == 0 {
        return false;
    }
    let Some(b) = busiest else { return true };
    if s.kind != b.kind {
        return s.kind > b.kind;
    }
    match s.kind {
        GroupType::Overloaded => s.avg_load > b.avg_load,
        // `avg_load` is computed for overloaded groups only, so the last one wins.
        GroupType::FullyBusy => s.avg_load >= b.avg_load,
        GroupType::HasSpare => !(s.idle_cpus > b.idle_cpus || (s.idle_cpus == b.idle_cpus && s.nr <= b.nr)),
    }
}

/// `sibling_imbalance`: the task-count difference to spread between two groups,
/// normalised by their CPU counts when they differ.
fn sibling_imbalance(idle: IdleType, busiest: &GroupStats, local: &GroupStats) -> i64 {
    if idle == IdleType::NotIdle || busiest.nr == 0 {
        return 0;
    }
    let (nb, nl) = (busiest.weight as i64, local.weight as i64);
    if nb == nl {
        return (busiest.nr as i64 - local.nr as i64).max(0);
    }
    let mut imb = (nl * busiest.nr as i64 - nb * local.nr as i64).max(0);
    imb = (2 * imb + nl + nb) / (nl + nb);
    if imb <= 1 && local.nr == 0 && busiest.nr > 1 {
        imb = 2;
    }
    imb
}

/// `calculate_imbalance`, for the group kinds schedlab's machines produce.
fn calculate_imbalance(
    level: &Level,
    idle: IdleType,
    local: &mut GroupStats,
    busiest: &GroupStats,
    sds_avg: &mut u64,
    total: (u64, u64),
) -> (Migration, i64) {
    if local.kind == GroupType::HasSpare {
        if busiest.kind > GroupType::FullyBusy && !level.has(sd::SHARE_PKG_RESOURCES) {
            let imb = local.capacity.max(local.util) - local.util;
            if idle != IdleType::NotIdle && imb == 0 {
                return (Migration::Task, 1);
            }
            return (Migration::Util, imb as i64);
        }
        let mut imb = if busiest.weight == 1 || level.groups_prefer_sibling {
            sibling_imbalance(idle, busiest, local)
        } else {
            (local.idle_cpus as i64 - busiest.idle_cpus as i64).max(0)
        };
        // `adjust_numa_imbalance`.
        if level.has(sd::NUMA) && local.nr < level.imb_numa_nr && imb <= NUMA_IMBALANCE_MIN {
            imb = 0;
        }
        return (Migration::Task, imb >> 1);
    }
    if local.kind < GroupType::Overloaded {
        local.avg_load = local.load * SCHED_CAPACITY_SCALE / local.capacity;
        if local.avg_load >= busiest.avg_load {
            return (Migration::Load, 0);
        }
        *sds_avg = total.0 * SCHED_CAPACITY_SCALE / total.1.max(1);
        if local.avg_load >= *sds_avg {
            return (Migration::Load, 0);
        }
    }
    let a = busiest.avg_load.saturating_sub(*sds_avg) as u128 * busiest.capacity as u128;
    let b = sds_avg.saturating_sub(local.avg_load) as u128 * local.capacity as u128;
    (Migration::Load, (a.min(b) / SCHED_CAPACITY_SCALE as u128).min(i64::MAX as u128) as i64)
}

/// What the shared balancer needs of a policy with per-CPU queues of type
/// [`Balance::Rq`]; the passes themselves are the provided methods.
pub(crate) trait Balance<P: Platform> {
    /// One CPU's run queue, guarded by its platform lock.
    type Rq: Send;

    fn common(&self) -> &SchedCommon;
    /// The wake-up placement's per-task fields.
    fn wakeups(&self) -> &Wakeups;
    /// The scheduling domains and their balancing state.
    fn domains(&self) -> &Domains;
    /// The per-CPU queues' locks, by CPU.
    fn queues(&self) -> &[P::Lock<Self::Rq>];
    /// The weighted load queue `cpu` last published (read without its lock).
    fn published_load(&self, cpu: CpuId) -> u64;

    /// Runnable tasks linked on `rq` (waiting and running).
    fn nr_running(rq: &Self::Rq) -> usize;
    /// The queue's clock (`rq_clock_task`), as last brought up to date.
    fn rq_clock(rq: &Self::Rq) -> u64;
    /// The first waiting task of `rq`, in the order balancing considers them, for
    /// which `ok` holds.
    fn first_waiting(&self, rq: &Self::Rq, ok: impl FnMut(TaskId) -> bool) -> Option<TaskId>;
    fn weight(&self, t: TaskId) -> u64;
    /// When `t` last ran (`se.exec_start`: the queue clock at its last accounting).
    fn exec_start(&self, t: TaskId) -> u64;
    /// May the waiting `t` leave its queue at all (besides being allowed on the
    /// destination and not running)?
    fn may_leave(&self, _t: TaskId) -> bool {
        true
    }
    /// Move the waiting `t` from `there` to `here` (both locked), keeping its lag.
    fn move_task(&self, p: &P, here: &mut Self::Rq, there: &mut Self::Rq, t: TaskId);
    /// Bring `rq`'s clock up to date.
    fn sync_clock(&self, p: &P, rq: &mut Self::Rq);
    /// Account `rq`'s running task (before tasks are attached to it).
    fn account_curr(&self, p: &P, rq: &mut Self::Rq);
    /// `t` was just queued on `rq`: kick an idle CPU or test for preemption.
    fn check_preempt(&self, p: &P, rq: &Self::Rq, t: TaskId);

    /// [`select_task_rq`] over the published loads and the policy's weights.
    fn select_task_rq(&self, p: &P, t: TaskId, prev: CpuId, sync: bool) -> CpuId {
        let w = Wake { wakeups: self.wakeups(), load: |c| self.published_load(c), weight: |t| self.weight(t) };
        select_task_rq(self.common(), p, &w, t, prev, sync)
    }

    /// The CPU of `t`'s wake-up from `prev`: its first one after fork is placed by
    /// [`find_idlest_cpu`] (on `prev` if `sync`: no placement), every later one by
    /// [`Balance::select_task_rq`].
    fn wake_cpu(&self, p: &P, t: TaskId, prev: CpuId, sync: bool, forked: bool) -> CpuId {
        match (forked, sync) {
            (true, true) => home_cpu(self.common(), t, prev),
            (true, false) => find_idlest_cpu(self.common(), self.domains(), p, t, prev, |c| self.published_load(c)),
            (false, _) => {
                let cpu = self.select_task_rq(p, t, prev, sync);
                if cpu != prev {
                    // Observation only: read without charge.
                    let common = self.common();
                    let stats = &self.domains().stats;
                    let idle = common.cpu(cpu).curr().is_none() && common.queue_len(cpu) == 0;
                    BalanceStats::bump(if idle { &stats.wake_moved_to_idle } else { &stats.wake_moved_to_busy });
                    self.wakeups().set_moved(t, Moved::Wake);
                }
                cpu
            }
        }
    }

    /// Observation (uncharged): `schedule()` on `cpu` dispatches `t`. If `t` last ran
    /// on another CPU, count the migration by what last moved it.
    fn note_dispatch(&self, t: TaskId, cpu: CpuId) {
        let f = &self.wakeups().tasks[t as usize];
        let last = f.last_ran.swap(cpu as u32, Relaxed);
        let why = Moved::from_byte(f.moved.swap(Moved::Not as u8, Relaxed));
        if last == NO_CPU || last as usize == cpu {
            return;
        }
        let s = &self.domains().stats;
        BalanceStats::bump(match why {
            Moved::Wake => &s.migr_wake,
            Moved::Not => &s.migr_other,
            Moved::NewIdle => &s.migr_newidle,
            Moved::Idle => &s.migr_idle,
            Moved::Busy => &s.migr_busy,
        });
    }

    /// `idle_cpu`: nothing running, nothing queued.
    fn cpu_idle(&self, p: &P, cpu: CpuId) -> bool {
        is_idle(self.common(), p, cpu)
    }

    /// `update_sg_lb_stats` of `group`'s CPUs in `cpus`: a `Work::Examine` and a read
    /// of the queue's line per CPU, and of the CPU's data when its queue is empty.
    fn group_stats(&self, p: &P, group: CpuMask, cpus: CpuMask, pct: u64) -> GroupStats {
        let both = CpuMask(group.0 & cpus.0);
        let mut s = sum_group(self.common(), p, weight_of(group), both, pct, |i| self.published_load(i));
        if s.kind == GroupType::Overloaded {
            s.avg_load = s.load * SCHED_CAPACITY_SCALE / s.capacity;
        }
        s
    }

    /// `should_we_balance`: a newly idle CPU with nothing queued balances; otherwise
    /// the first idle CPU of the local group, or its first CPU if none is idle.
    fn should_we_balance(&self, p: &P, this: CpuId, level: &Level, idle: IdleType) -> bool {
        if idle == IdleType::NewlyIdle {
            return self.common().queue_len(this) == 0;
        }
        let local = level.groups[0];
        for c in cpus_of(local) {
            if self.cpu_idle(p, c) {
                return c == this;
            }
        }
        cpus_of(local).next() == Some(this)
    }

    /// `find_busiest_queue` among `cpus`: the most loaded (`migrate_load`, skipping a
    /// lone task heavier than the imbalance), the most utilised with two tasks or
    /// more (`migrate_util`), or the one with the most tasks (`migrate_task`); ties to
    /// the lower CPU.
    fn find_busiest_queue(&self, p: &P, cpus: CpuMask, migration: Migration, imbalance: i64) -> Option<CpuId> {
        let common = self.common();
        let mut best: Option<(CpuId, u64)> = None;
        for i in cpus_of(cpus) {
            p.charge(Work::Examine);
            p.touch(Line::Queue(i), Access::Read);
            let nr = common.queue_len(i);
            if nr == 0 {
                continue;
            }
            let key = match migration {
                Migration::Load => {
                    let load = self.published_load(i);
                    if nr == 1 && load as i128 > imbalance as i128 {
                        continue;
                    }
                    load
                }
                Migration::Util if nr <= 1 => continue,
                Migration::Util => SCHED_CAPACITY_SCALE,
                Migration::Task => nr as u64,
            };
            if best.is_none_or(|(_, b)| key > b) {
                best = Some((i, key));
            }
        }
        best.map(|(i, _)| i)
    }

    /// `load_balance` of `this`'s level `k` (see the module doc). Returns the tasks
    /// moved and whether higher levels are to be balanced (`continue_balancing`).
    fn load_balance(&self, p: &P, this: CpuId, k: usize, idle: IdleType) -> (usize, bool) {
        let d = self.domains();
        let level = &d.levels[this][k];
        let st = &d.state[this][k];
        p.touch(Line::CpuData(this), Access::Read);
        let pct = level.imbalance_pct as u64;
        let mut cpus = level.span;
        let mut all_pinned = false;
        let mut cont = true;
        let balanced = 'redo: loop {
            if !self.should_we_balance(p, this, level, idle) {
                cont = false;
                break 'redo true;
            }
            // `update_sd_lb_stats`.
            let mut local = self.group_stats(p, level.groups[0], cpus, pct);
            let mut total = (local.load, local.capacity);
            let mut busiest: Option<(CpuMask, GroupStats)> = None;
            for &g in &level.groups[1..] {
                let s = self.group_stats(p, g, cpus, pct);
                total.0 += s.load;
                total.1 += s.capacity;
                if pick_busiest(&s, busiest.as_ref().map(|(_, b)| b)) {
                    busiest = Some((g, s));
                }
            }
            // `find_busiest_group`.
            let Some((group, b)) = busiest else { break 'redo true };
            if local.kind > b.kind {
                break 'redo true;
            }
            let mut sds_avg = 0;
            if local.kind == GroupType::Overloaded {
                if local.avg_load >= b.avg_load {
                    break 'redo true;
                }
                sds_avg = total.0 * SCHED_CAPACITY_SCALE / total.1.max(1);
                if local.avg_load >= sds_avg || 100 * b.avg_load <= pct * local.avg_load {
                    break 'redo true;
                }
            }
            let force = level.groups_prefer_sibling
                && local.kind == GroupType::HasSpare
                && sibling_imbalance(idle, &b, &local) > 1;
            if !force
                && b.kind != GroupType::Overloaded
                && (idle == IdleType::NotIdle || (b.weight > 1 && local.idle_cpus <= b.idle_cpus + 1) || b.nr == 1)
            {
                break 'redo true;
            }
            let (migration, mut imbalance) = calculate_imbalance(level, idle, &mut local, &b, &mut sds_avg, total);
            if imbalance <= 0 {
                break 'redo true;
            }
            let Some(src) =
                self.find_busiest_queue(p, CpuMask(group.0 & cpus.0 & !CpuMask::single(this).0), migration, imbalance)
            else {
                break 'redo true;
            };
            // `detach_tasks` and `attach_tasks`.
            all_pinned = true;
            let failed = st.nr_balance_failed.load(Relaxed);
            let moved = common::with_two_queues(p, self.queues(), this, src, |here, there| {
                let n = Self::nr_running(there);
                if n <= 1 {
                    all_pinned = false;
                    return 0;
                }
                self.sync_clock(p, there);
                let clock = Self::rq_clock(there);
                // The running task is on the kernel's task list too: if it may run
                // here, not every task is pinned.
                if let Some(c) = self.common().cpu(src).curr() {
                    if self.common().tasks.get(c).cpus_allowed().contains(this) {
                        all_pinned = false;
                    }
                }
                let loop_max = NR_MIGRATE.min(n);
                let (mut seen, mut rejected) = (0usize, 0usize);
                let mut pulled = Vec::new();
                loop {
                    if idle != IdleType::NotIdle && Self::nr_running(there) <= 1 {
                        break;
                    }
                    let mut skip = rejected;
                    let cand = self.first_waiting(there, |_| {
                        if skip > 0 {
                            skip -= 1;
                            false
                        } else {
                            true
                        }
                    });
                    let Some(t) = cand else { break };
                    seen += 1;
                    if seen > loop_max && !all_pinned {
                        break;
                    }
                    // `can_migrate_task`.
                    p.touch(Line::Task(t), Access::Read);
                    let ts = self.common().tasks.get(t);
                    let mut ok = ts.cpus_allowed().contains(this);
                    if ok {
                        all_pinned = false;
                        ok = !ts.has_cpu() && self.may_leave(t);
                    }
                    if ok {
                        let hot = clock.saturating_sub(self.exec_start(t)) < MIGRATION_COST_NS;
                        ok = !hot || failed > level.cache_nice_tries;
                        if !ok {
                            let s = &d.stats;
                            BalanceStats::bump(if idle == IdleType::NewlyIdle {
                                &s.hot_refused_newidle
                            } else {
                                &s.hot_refused_periodic
                            });
                        }
                    }
                    if ok {
                        ok = match migration {
                            Migration::Load => {
                                let load = self.weight(t).max(1);
                                let bound = load >> failed.min(63);
                                bound as i128 <= imbalance as i128 && {
                                    imbalance = imbalance.saturating_sub(load.min(i64::MAX as u64) as i64);
                                    true
                                }
                            }
                            Migration::Util => {
                                let util = SCHED_CAPACITY_SCALE as i64;
                                util <= imbalance && {
                                    imbalance -= util;
                                    true
                                }
                            }
                            Migration::Task => {
                                imbalance -= 1;
                                true
                            }
                        };
                    }
                    if !ok {
                        rejected += 1;
                        continue;
                    }
                    if pulled.is_empty() {
                        self.account_curr(p, here);
                    }
                    self.move_task(p, here, there, t);
                    self.wakeups().set_moved(t, Moved::by(idle));
                    pulled.push(t);
                    if idle == IdleType::NewlyIdle || imbalance <= 0 {
                        break;
                    }
                }
                for &t in &pulled {
                    self.check_preempt(p, here, t);
                }
                pulled.len()
            });
            if moved == 0 && all_pinned {
                cpus = CpuMask(cpus.0 & !CpuMask::single(src).0);
                if cpus.0 & !level.groups[0].0 != 0 {
                    continue 'redo;
                }
                // `out_all_pinned`.
                st.nr_balance_failed.store(0, Relaxed);
                break 'redo false;
            }
            if moved == 0 {
                if idle != IdleType::NewlyIdle {
                    st.nr_balance_failed.store(failed + 1, Relaxed);
                }
            } else {
                st.nr_balance_failed.store(0, Relaxed);
            }
            st.balance_interval.store(level.min_interval, Relaxed);
            return (moved, cont);
        };
        if balanced {
            st.nr_balance_failed.store(0, Relaxed);
        }
        // `out_one_pinned`: a balanced (or wholly pinned) periodic pass doubles the
        // interval, up to `max_interval` (`MAX_PINNED_INTERVAL` when pinned).
        if idle != IdleType::NewlyIdle {
            let bi = st.balance_interval.load(Relaxed);
            if (all_pinned && bi < MAX_PINNED_INTERVAL) || bi < level.max_interval {
                st.balance_interval.store(bi * 2, Relaxed);
            }
        }
        (0, cont)
    }

    /// `newidle_balance`: this CPU's queue is empty. Unless no queue has a task
    /// waiting (`rd->overload`) or the CPU's average idle time is shorter than its
    /// lowest domain's highest balancing cost, balance each level with
    /// `SD_BALANCE_NEWIDLE` from the lowest up while the idle time covers the cost so
    /// far plus the level's, until a task is pulled. Returns whether one was.
    fn newidle_balance(&self, p: &P, this: CpuId) -> bool {
        let d = self.domains();
        let common = self.common();
        let rq = &d.rq[this];
        let now = p.now();
        rq.idle_stamp.store(now.max(1), Relaxed);
        // `rd->overload`: one machine-wide word.
        p.touch(Line::IdleMap, Access::Read);
        let overload = (0..common.ncpus()).any(|c| common.queue_len(c) > 1);
        let levels = d.levels(this);
        let avg_idle = rq.avg_idle.load(Relaxed);
        BalanceStats::bump(&d.stats.newidle);
        if !overload {
            BalanceStats::bump(&d.stats.newidle_no_overload);
            return false;
        }
        if levels.first().is_some_and(|_| avg_idle < d.state[this][0].max_newidle_lb_cost.load(Relaxed)) {
            BalanceStats::bump(&d.stats.newidle_short_idle);
            return false;
        }
        let jiffies = d.jiffies(now);
        let (mut t0, mut curr_cost, mut pulled) = (now, 0u64, false);
        for (k, level) in levels.iter().enumerate() {
            if avg_idle < curr_cost + d.state[this][k].max_newidle_lb_cost.load(Relaxed) {
                break;
            }
            if level.has(sd::BALANCE_NEWIDLE) {
                pulled = self.load_balance(p, this, k, IdleType::NewlyIdle).0 > 0;
                let t1 = p.now();
                let cost = t1.saturating_sub(t0);
                d.update_newidle_cost(this, k, cost, jiffies);
                curr_cost += cost;
                t0 = t1;
            }
            if pulled || common.queue_len(this) > 0 {
                break;
            }
        }
        if curr_cost > rq.max_idle_balance_cost.load(Relaxed) {
            rq.max_idle_balance_cost.store(curr_cost, Relaxed);
        }
        if pulled || common.queue_len(this) > 0 {
            rq.idle_stamp.store(0, Relaxed);
        }
        if pulled {
            BalanceStats::bump(&d.stats.newidle_pulled);
        }
        pulled
    }

    /// `rebalance_domains`, at a tick of `this`: each level whose interval
    /// (×`busy_factor` while the CPU is busy) has passed since its last balance is
    /// balanced, lowest first; an `SD_SERIALIZE` level only if no other CPU is
    /// balancing one. Returns how many tasks moved.
    fn periodic_balance(&self, p: &P, this: CpuId) -> usize {
        let d = self.domains();
        if d.levels(this).is_empty() {
            return 0;
        }
        p.touch(Line::CpuData(this), Access::Read);
        let jiffies = d.jiffies(p.now());
        let mut idle = if self.cpu_idle(p, this) { IdleType::Idle } else { IdleType::NotIdle };
        let mut busy = idle == IdleType::NotIdle;
        let mut moved = 0;
        let mut max_cost = 0;
        let mut need_decay = false;
        for (k, level) in d.levels(this).iter().enumerate() {
            let st = &d.state[this][k];
            need_decay |= d.update_newidle_cost(this, k, 0, jiffies);
            max_cost = max_cost.max(st.max_newidle_lb_cost.load(Relaxed));
            let interval = d.interval_jiffies(this, k, busy);
            if jiffies < st.last_balance.load(Relaxed) + interval {
                continue;
            }
            let serialize = level.has(sd::SERIALIZE);
            if serialize && d.serialize.compare_exchange(false, true, Relaxed, Relaxed).is_err() {
                break;
            }
            let (m, cont) = self.load_balance(p, this, k, idle);
            BalanceStats::bump(&d.stats.periodic_passes);
            d.stats.periodic_pulled.fetch_add(m as u64, Relaxed);
            if serialize {
                d.serialize.store(false, Relaxed);
            }
            if m > 0 {
                moved += m;
                idle = if self.cpu_idle(p, this) { IdleType::Idle } else { IdleType::NotIdle };
                busy = idle == IdleType::NotIdle;
            }
            st.last_balance.store(jiffies, Relaxed);
            if !cont {
                break;
            }
        }
        if need_decay {
            d.rq[this].max_idle_balance_cost.store(max_cost.max(MIGRATION_COST_NS), Relaxed);
        }
        moved
    }
}

// -------------------------------------------------------- fork placement ------

/// `update_sg_wakeup_stats`: a group's statistics for placing a new task (the task
/// is on no queue yet), `avg_load` for fully busy and overloaded groups.
fn wakeup_stats<P: Platform>(
    common: &SchedCommon,
    p: &P,
    group: CpuMask,
    pct: u64,
    load: &impl Fn(CpuId) -> u64,
) -> GroupStats {
    let mut s = sum_group(common, p, weight_of(group), group, pct, load);
    if s.kind != GroupType::HasSpare {
        s.avg_load = s.load * SCHED_CAPACITY_SCALE / s.capacity;
    }
    s
}

/// The sums both group statistics take over `cpus` (of a group of `weight` CPUs) and
/// the group's type: a `Work::Examine` and a read of the queue's line per CPU, and of
/// the CPU's data when its queue is empty; `avg_load` is left to the caller.
fn sum_group<P: Platform>(
    common: &SchedCommon,
    p: &P,
    weight: usize,
    cpus: CpuMask,
    pct: u64,
    load: impl Fn(CpuId) -> u64,
) -> GroupStats {
    let mut s = GroupStats {
        load: 0,
        util: 0,
        runnable: 0,
        nr: 0,
        idle_cpus: 0,
        weight,
        capacity: SCHED_CAPACITY_SCALE * weight as u64,
        avg_load: 0,
        kind: GroupType::HasSpare,
    };
    for i in cpus_of(cpus) {
        p.charge(Work::Examine);
        p.touch(Line::Queue(i), Access::Read);
        let nr = common.queue_len(i);
        s.load += load(i);
        s.nr += nr;
        s.runnable += SCHED_CAPACITY_SCALE * nr as u64;
        if nr > 0 {
            s.util += SCHED_CAPACITY_SCALE;
        } else {
            p.touch(Line::CpuData(i), Access::Read);
            if common.cpu(i).curr().is_none() {
                s.idle_cpus += 1;
            }
        }
    }
    s.kind = if overloaded(pct, &s) {
        GroupType::Overloaded
    } else if !has_capacity(pct, &s) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    };
    s
}

/// `update_pick_idlest`: is `s` idler than the idlest so far?
fn pick_idlest(s: &GroupStats, idlest: Option<&GroupStats>) -> bool {
    let Some(b) = idlest else { return true };
    if s.kind != b.kind {
        return s.kind < b.kind;
    }
    match s.kind {
        GroupType::Overloaded | GroupType::FullyBusy => s.avg_load < b.avg_load,
        GroupType::HasSpare => !(b.idle_cpus > s.idle_cpus || (b.idle_cpus == s.idle_cpus && b.util <= s.util)),
    }
}

/// `find_idlest_group`: the idlest group of `level` allowed for `t` other than
/// `this`'s, if placing `t` there beats keeping it in `this`'s group.
fn find_idlest_group<P: Platform>(
    common: &SchedCommon,
    p: &P,
    level: &Level,
    t: TaskId,
    this: CpuId,
    load: &impl Fn(CpuId) -> u64,
) -> Option<CpuMask> {
    let allowed = common.tasks.get(t).cpus_allowed();
    let pct = level.imbalance_pct as u64;
    let mut local: Option<GroupStats> = None;
    let mut idlest: Option<(CpuMask, GroupStats)> = None;
    for &g in &level.groups {
        if g.0 & allowed.0 == 0 {
            continue;
        }
        let s = wakeup_stats(common, p, g, pct, load);
        if g.contains(this) {
            local = Some(s);
        } else if pick_idlest(&s, idlest.as_ref().map(|(_, b)| b)) {
            idlest = Some((g, s));
        }
    }
    let (group, idl) = idlest?;
    let Some(loc) = local else { return Some(group) };
    if loc.kind != idl.kind {
        return (loc.kind > idl.kind).then_some(group);
    }
    match loc.kind {
        GroupType::Overloaded | GroupType::FullyBusy => {
            let imbalance = SCHED_CAPACITY_SCALE * (pct - 100) / 100;
            if level.has(sd::NUMA) && idl.avg_load + imbalance >= loc.avg_load {
                return None;
            }
            if idl.avg_load >= loc.avg_load + imbalance || 100 * loc.avg_load <= pct * idl.avg_load {
                return None;
            }
        }
        GroupType::HasSpare => {
            if level.has(sd::NUMA) {
                // No preferred node (NUMA balancing is not modelled): keep the task
                // near its parent while the imbalance stays small.
                let local_allowed = weight_of(CpuMask(level.groups[0].0 & allowed.0));
                let imb_numa_nr = local_allowed.min(level.imb_numa_nr);
                let imb = (loc.idle_cpus as i64 - idl.idle_cpus as i64).abs();
                if loc.nr < imb_numa_nr && imb <= NUMA_IMBALANCE_MIN {
                    return None;
                }
            }
            if loc.idle_cpus >= idl.idle_cpus {
                return None;
            }
        }
    }
    Some(group)
}

/// `find_idlest_group_cpu`: the group's CPU if it has one; else, among those allowed
/// for `t`, the idle one that went idle most recently (`idle_stamp`; no idle states
/// are modelled), else the least loaded, else `this`.
fn find_idlest_group_cpu<P: Platform>(
    common: &SchedCommon,
    d: &Domains,
    p: &P,
    group: CpuMask,
    t: TaskId,
    this: CpuId,
    load: &impl Fn(CpuId) -> u64,
) -> CpuId {
    if weight_of(group) == 1 {
        return cpus_of(group).next().unwrap_or(this);
    }
    let allowed = common.tasks.get(t).cpus_allowed();
    let (mut shallowest, mut latest) = (None, 0u64);
    let (mut least, mut min_load) = (this, u64::MAX);
    for i in cpus_of(CpuMask(group.0 & allowed.0)) {
        if is_idle(common, p, i) {
            let stamp = d.rq[i].idle_stamp.load(Relaxed);
            if stamp > latest {
                latest = stamp;
                shallowest = Some(i);
            }
        } else if shallowest.is_none() {
            p.touch(Line::Queue(i), Access::Read);
            let l = load(i);
            if l < min_load {
                min_load = l;
                least = i;
            }
        }
    }
    shallowest.unwrap_or(least)
}

/// The placement of a task's first wake-up after fork (`select_task_rq_fair` with
/// `WF_FORK`, `find_idlest_cpu`): from the highest of `prev`'s domains reached by
/// levels with `SD_BALANCE_FORK`, down: the idlest group ([`find_idlest_group`]),
/// then its idlest CPU, continuing in that CPU's domains below the level; `prev`
/// when no level qualifies or the task may use no CPU of it. `prev` is the forking
/// CPU. A result the task may not use falls back as [`home_cpu`] does.
pub fn find_idlest_cpu<P: Platform>(
    common: &SchedCommon,
    d: &Domains,
    p: &P,
    t: TaskId,
    prev: CpuId,
    load: impl Fn(CpuId) -> u64,
) -> CpuId {
    let allowed = common.tasks.get(t).cpus_allowed();
    if (allowed.0 & CpuMask::first(common.ncpus()).0).count_ones() <= 1 {
        return home_cpu(common, t, prev);
    }
    let fork = |c: CpuId| d.levels(c).iter().take_while(|l| l.has(sd::BALANCE_FORK)).count();
    let Some(mut k) = fork(prev).checked_sub(1) else { return home_cpu(common, t, prev) };
    if d.levels(prev)[k].span.0 & allowed.0 == 0 {
        return home_cpu(common, t, prev);
    }
    p.touch(Line::CpuData(prev), Access::Read);
    let (mut cpu, mut new_cpu) = (prev, prev);
    let mut at = Some(k);
    while let Some(level_k) = at {
        k = level_k;
        let level = &d.levels(cpu)[k];
        let child = k.checked_sub(1);
        if !level.has(sd::BALANCE_FORK) {
            at = child;
            continue;
        }
        let Some(group) = find_idlest_group(common, p, level, t, cpu, &load) else {
            at = child;
            continue;
        };
        new_cpu = find_idlest_group_cpu(common, d, p, group, t, cpu, &load);
        if new_cpu == cpu {
            at = child;
            continue;
        }
        // Continue in `new_cpu`'s domains below this level's weight.
        let weight = level.weight();
        cpu = new_cpu;
        at = d
            .levels(cpu)
            .iter()
            .take_while(|l| l.weight() < weight)
            .enumerate()
            .filter(|(_, l)| l.has(sd::BALANCE_FORK))
            .map(|(j, _)| j)
            .last();
    }
    if allowed.contains(new_cpu) {
        new_cpu
    } else {
        home_cpu(common, t, prev)
    }
}
