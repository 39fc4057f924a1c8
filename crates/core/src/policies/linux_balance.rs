//! Wake-up placement and load balancing shared by Linux's fair classes, `cfs` and
//! `eevdf`: the two differ in how a queue orders and picks its tasks, not in how tasks
//! reach a queue. Also the CPU-count scaling of their tunables ([`Scaling`]).
//!
//! * **Scheduling domains.** Built from the machine description the policies see
//!   (`SchedCommon::topo`, which has each CPU's NUMA node and no cache topology): the
//!   lowest level, the last-level-cache domain (`sd_llc`, the kernel's `MC` level), is
//!   a CPU's NUMA node; above it, on a machine of several nodes, one NUMA level spans
//!   every CPU. The presets' Pentium III CPUs each have a private L2, so on that
//!   hardware the kernel would find no cache shared between CPUs and no LLC domain
//!   wider than one CPU; schedlab takes the node as the LLC, as on a multi-core socket.
//!   Every level has `SD_WAKE_AFFINE` and `imbalance_pct` 117 (`sd_init`, Linux v6.6
//!   `kernel/sched/topology.c`); the node distances are not in the policies' view, so
//!   the kernel's cut of `SD_WAKE_AFFINE` above `RECLAIM_DISTANCE` (30) is left out.
//! * **Wake-up placement** ([`select_task_rq`], `select_task_rq_fair` of Linux v6.6
//!   `kernel/sched/fair.c`, its fast path for `WF_TTWU`). The waker (the task running
//!   on the waking CPU, `current`) records the wakee (`record_wakee`: a flip each time
//!   it wakes another task than the last one, the count halved at most once a
//!   second). Unless the pair looks many-to-many (`wake_wide`: the smaller of the two
//!   flip counts at least the LLC's size and the larger at least that many times the
//!   smaller), a wake-up from another CPU the wakee may use asks `wake_affine`
//!   between the waking CPU and the previous one: `wake_affine_idle` (the waking CPU
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
//! * **Fork placement** ([`select_cpu`], standing in for the slow path
//!   `find_idlest_cpu` of `SD_BALANCE_FORK`): the previous CPU if it is idle, else an
//!   idle CPU the task may use (the previous CPU's node first, then the others, each
//!   in CPU order from the previous CPU on), else the previous CPU.
//! * **Newly idle balance** (`Balance::newidle_balance`, `newidle_balance`): a CPU
//!   whose queue runs empty in `schedule()` pulls the first movable waiting task of the
//!   busiest queue (highest published weighted load among queues with a task waiting).
//! * **Periodic balance** (`Balance::periodic_balance`): on every tick each CPU
//!   compares the published weighted loads and, while the busiest queue's load exceeds
//!   its own by more than `imbalance_pct` %, pulls waiting tasks lighter than the
//!   difference (so each move strictly reduces the imbalance), at most
//!   [`NR_MIGRATE`] per pass (`sysctl_sched_nr_migrate`). The last pulled task kicks
//!   an idle CPU or is tested for preemption against the running one.
//!
//! Left out of the placement: `SIS_UTIL` (the kernel bounds the LLC scan by the LLC's
//! recent utilisation; here the whole LLC is scanned), idle cores (`has_idle_cores`,
//! `select_idle_smt`, `select_idle_core`: the machines have no SMT), clusters, energy-
//! and capacity-aware placement (every CPU has the same capacity, which cancels in
//! `wake_affine_weight`), `WF_CURRENT_CPU`, the per-CPU-kthread stacking rule, and
//! group scheduling (`task_h_load` is the task's weight). Loads are the published sums
//! of the runnable tasks' weights, not PELT averages: a sleeping wakee is not in its
//! previous CPU's load, so `wake_affine_weight` subtracts nothing for it. A CPU is
//! idle when it runs nothing and has nothing queued (`available_idle_cpu`; no
//! `SCHED_IDLE` tasks). Every CPU the placement tests must be allowed for the task;
//! a result outside its mask falls back to the previous CPU or the first allowed one
//! (`select_fallback_rq`). A task allowed on one CPU only is not placed at all.
//!
//! Balancing is flat: one level over all CPUs, no scheduling domains. Only waiting
//! (not running) tasks allowed on the pulling CPU move; each policy decides how a
//! moved task keeps its lag (`Balance::move_task`) and which waiting tasks may not
//! leave at all (`Balance::may_leave`).
//!
//! Costs: a `Work::Examine` and a read of the CPU's data per CPU placement tests for
//! idleness, a read of the queue's line per load `wake_affine_weight` reads, a write of
//! the waker's line (`record_wakee`; the wakee's line is already read by the wake-up); a
//! `Work::Examine` and a read of the queue's line per queue balancing looks at, a
//! read of each candidate task's line.

use crate::common::{self, SchedCommon};
use crate::cpu::{CpuId, CpuMask, Topology};
use crate::options::{Param, Value};
use crate::platform::{Access, Line, Platform, Work};
use crate::task::TaskId;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

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
}

impl Default for WakeFields {
    fn default() -> Self {
        WakeFields {
            recent_used_cpu: AtomicU32::new(NO_CPU),
            last_wakee: AtomicU32::new(NO_TASK),
            wakee_flips: AtomicU32::new(0),
            flip_decay_ts: AtomicU64::new(0),
        }
    }
}

/// What the wake-up placement keeps: each CPU's LLC size (`sd_llc_size`) and each
/// task's wake-up fields.
#[derive(Debug)]
pub struct Wakeups {
    llc_size: Box<[u32]>,
    tasks: Box<[WakeFields]>,
}

/// How often `record_wakee` halves a waker's flips at most: once a second (`HZ`
/// jiffies).
const FLIP_DECAY_NS: u64 = 1_000_000_000;

impl Wakeups {
    /// For a machine of topology `topo` and task ids `0..capacity`.
    pub fn new(topo: &Topology, capacity: usize) -> Wakeups {
        let llc_size =
            (0..topo.ncpus()).map(|c| topo.node_of.iter().filter(|&&n| n == topo.node_of[c]).count() as u32).collect();
        Wakeups { llc_size, tasks: (0..capacity).map(|_| WakeFields::default()).collect() }
    }

    /// A new task `t` (created at `now`): no flips, no recently used CPU.
    pub fn task_new(&self, t: TaskId, now: u64) {
        let f = &self.tasks[t as usize];
        f.recent_used_cpu.store(NO_CPU, Relaxed);
        f.last_wakee.store(NO_TASK, Relaxed);
        f.wakee_flips.store(0, Relaxed);
        f.flip_decay_ts.store(now, Relaxed);
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
    let want_affine = !w.wakeups.wake_wide(waker, t, this) && allowed.contains(this);
    let mut target = prev;
    // Every domain level has SD_WAKE_AFFINE and the top one spans every CPU, so the
    // lowest level spanning `this` and `prev` always exists.
    if want_affine && this != prev {
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

/// The placement of a task's first wake-up after fork (standing in for
/// `find_idlest_cpu`): the previous CPU if it is idle, else an idle CPU allowed for
/// `t` (the previous CPU's node first, then the others, each in CPU order from `prev`
/// on), else the previous CPU (or the first allowed CPU if `prev` is not).
pub fn select_cpu<P: Platform>(common: &SchedCommon, p: &P, t: TaskId, prev: CpuId) -> CpuId {
    let n = common.ncpus();
    let allowed = common.tasks.get(t).cpus_allowed();
    if allowed.contains(prev) && is_idle(common, p, prev) {
        return prev;
    }
    let node = common.topo.node_of[prev];
    for same_node in [true, false] {
        for k in 1..n {
            let c = (prev + k) % n;
            if (common.topo.node_of[c] == node) == same_node && allowed.contains(c) && is_idle(common, p, c) {
                return c;
            }
        }
    }
    home_cpu(common, t, prev)
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

/// The busiest queue other than `this` by `load` among those with a task waiting (at
/// least two linked), if its load is above `floor`; ties go to the lower CPU.
pub fn find_busiest<P: Platform>(
    common: &SchedCommon,
    p: &P,
    this: CpuId,
    floor: u64,
    load: impl Fn(CpuId) -> u64,
) -> Option<CpuId> {
    let mut best: Option<(CpuId, u64)> = None;
    for i in 0..common.ncpus() {
        if i == this {
            continue;
        }
        p.charge(Work::Examine);
        p.touch(Line::Queue(i), Access::Read);
        let l = load(i);
        if common.queue_len(i) >= 2 && l > floor && best.is_none_or(|(_, b)| l > b) {
            best = Some((i, l));
        }
    }
    best.map(|(i, _)| i)
}

// ------------------------------------------------------------ balancing ------

/// What the shared balancer needs of a policy with per-CPU queues of type
/// [`Balance::Rq`]; the passes themselves are the provided methods.
pub(crate) trait Balance<P: Platform> {
    /// One CPU's run queue, guarded by its platform lock.
    type Rq: Send;

    fn common(&self) -> &SchedCommon;
    /// The wake-up placement's per-task fields.
    fn wakeups(&self) -> &Wakeups;
    /// The per-CPU queues' locks, by CPU.
    fn queues(&self) -> &[P::Lock<Self::Rq>];
    /// The weighted load queue `cpu` last published (read without its lock).
    fn published_load(&self, cpu: CpuId) -> u64;
    /// The periodic balance's threshold, in % of this CPU's load.
    fn imbalance_pct(&self) -> u32;

    /// Runnable tasks linked on `rq` (waiting and running).
    fn nr_running(rq: &Self::Rq) -> usize;
    /// Their weights' sum.
    fn load(rq: &Self::Rq) -> u64;
    /// The first waiting task of `rq`, in the order balancing considers them, for
    /// which `ok` holds.
    fn first_waiting(&self, rq: &Self::Rq, ok: impl FnMut(TaskId) -> bool) -> Option<TaskId>;
    fn weight(&self, t: TaskId) -> u64;
    /// May the waiting `t` leave its queue at all (besides being allowed on the
    /// destination and not running)?
    fn may_leave(&self, _t: TaskId) -> bool {
        true
    }
    /// Move the waiting `t` from `there` to `here` (both locked), keeping its lag.
    fn move_task(&self, p: &P, here: &mut Self::Rq, there: &mut Self::Rq, t: TaskId);
    /// Bring `rq`'s clock up to date (before a newly idle pull).
    fn sync_clock(&self, p: &P, rq: &mut Self::Rq);
    /// Account `rq`'s running task (before a periodic pull).
    fn account_curr(&self, p: &P, rq: &mut Self::Rq);
    /// `t` was just queued on `rq`: kick an idle CPU or test for preemption.
    fn check_preempt(&self, p: &P, rq: &Self::Rq, t: TaskId);

    /// May `t`, waiting on another queue, move to `cpu`? Allowed there, not running
    /// anywhere (`task_running`), and [`Balance::may_leave`].
    fn can_migrate(&self, p: &P, t: TaskId, cpu: CpuId) -> bool {
        p.touch(Line::Task(t), Access::Read);
        let ts = self.common().tasks.get(t);
        ts.cpus_allowed().contains(cpu) && !ts.has_cpu() && self.may_leave(t)
    }

    /// [`select_task_rq`] over the published loads and the policy's weights.
    fn select_task_rq(&self, p: &P, t: TaskId, prev: CpuId, sync: bool) -> CpuId {
        let w = Wake { wakeups: self.wakeups(), load: |c| self.published_load(c), weight: |t| self.weight(t) };
        select_task_rq(self.common(), p, &w, t, prev, sync)
    }

    /// The CPU of `t`'s wake-up from `prev`: its first one after fork is placed by
    /// [`select_cpu`] (on `prev` if `sync`: no placement), every later one by
    /// [`Balance::select_task_rq`].
    fn wake_cpu(&self, p: &P, t: TaskId, prev: CpuId, sync: bool, forked: bool) -> CpuId {
        match (forked, sync) {
            (true, true) => home_cpu(self.common(), t, prev),
            (true, false) => select_cpu(self.common(), p, t, prev),
            (false, _) => self.select_task_rq(p, t, prev, sync),
        }
    }

    /// [`find_busiest`] over the published loads.
    fn find_busiest(&self, p: &P, this: CpuId, floor: u64) -> Option<CpuId> {
        find_busiest(self.common(), p, this, floor, |i| self.published_load(i))
    }

    /// `newidle_balance`: this CPU's queue is empty; pull the busiest queue's first
    /// migratable waiting task. Returns whether a task was pulled.
    fn newidle_balance(&self, p: &P, this: CpuId) -> bool {
        let Some(busiest) = self.find_busiest(p, this, 0) else { return false };
        common::with_two_queues(p, self.queues(), this, busiest, |here, there| {
            if Self::nr_running(there) < 2 {
                return false;
            }
            match self.first_waiting(there, |t| self.can_migrate(p, t, this)) {
                Some(t) => {
                    self.sync_clock(p, here);
                    self.move_task(p, here, there, t);
                    true
                }
                None => false,
            }
        })
    }

    /// The periodic balance: while the busiest queue's load exceeds this CPU's by more
    /// than `imbalance_pct`, pull waiting tasks lighter than the difference (at most
    /// [`NR_MIGRATE`]). The last pulled task kicks an idle CPU or may preempt the
    /// running one. Returns how many moved.
    fn periodic_balance(&self, p: &P, this: CpuId) -> usize {
        if self.common().ncpus() < 2 {
            return 0;
        }
        p.touch(Line::Queue(this), Access::Read);
        let here_load = self.published_load(this);
        let pct = self.imbalance_pct() as u128;
        let exceeds = |there: u64, here: u64| there as u128 * 100 > here as u128 * pct;
        let floor = (here_load as u128 * pct / 100).min(u64::MAX as u128) as u64;
        let Some(busiest) = self.find_busiest(p, this, floor) else { return 0 };
        common::with_two_queues(p, self.queues(), this, busiest, |here, there| {
            self.account_curr(p, here);
            let mut moved = 0;
            let mut last = None;
            while moved < NR_MIGRATE && Self::nr_running(there) >= 2 && exceeds(Self::load(there), Self::load(here)) {
                let diff = Self::load(there) - Self::load(here);
                let cand = self.first_waiting(there, |t| self.weight(t) < diff && self.can_migrate(p, t, this));
                let Some(t) = cand else { break };
                self.move_task(p, here, there, t);
                moved += 1;
                last = Some(t);
            }
            if let Some(t) = last {
                self.check_preempt(p, here, t);
            }
            moved
        })
    }
}
