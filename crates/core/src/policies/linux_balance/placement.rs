//! Wake-up placement (`select_task_rq_fair` for `WF_TTWU`): the waker's wakee record,
//! `wake_affine` and `select_idle_sibling` (described in `mod.rs`, "Wake-up
//! placement").

use super::*;

/// A CPU index or none, in an atomic.
pub(super) const NO_CPU: u32 = u32::MAX;
/// A task id or none.
const NO_TASK: u32 = u32::MAX;

/// The wake-up fields of one task's `task_struct` (written by the waker or by the
/// wakee's waker, which owns it until it is queued).
#[derive(Debug)]
pub(super) struct WakeFields {
    /// `recent_used_cpu`: the previous CPU at its last wake-up.
    recent_used_cpu: AtomicU32,
    /// `last_wakee`: the task it last woke.
    last_wakee: AtomicU32,
    /// `wakee_flips`: how often it woke another task than the last one.
    wakee_flips: AtomicU32,
    /// `wakee_flip_decay_ts`: when the flips were last halved (ns).
    flip_decay_ts: AtomicU64,
    /// Observation: the CPU the task last ran on (`NO_CPU` before its first run).
    pub(super) last_ran: AtomicU32,
    /// Observation: what last moved it to another queue since it last ran
    /// ([`Moved`] as a byte).
    pub(super) moved: AtomicU8,
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
pub(super) enum Moved {
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
    pub(super) fn from_byte(b: u8) -> Moved {
        match b {
            1 => Moved::Wake,
            2 => Moved::NewIdle,
            3 => Moved::Idle,
            4 => Moved::Busy,
            _ => Moved::Not,
        }
    }
    pub(super) fn by(idle: IdleType) -> Moved {
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
    pub(super) migr_wake: AtomicU64,
    pub(super) migr_newidle: AtomicU64,
    pub(super) migr_idle: AtomicU64,
    pub(super) migr_busy: AtomicU64,
    pub(super) migr_other: AtomicU64,
    /// Wake-ups (not a task's first) placed on another CPU than its previous one,
    /// by whether the chosen CPU was idle (ran and queued nothing) then.
    pub(super) wake_moved_to_idle: AtomicU64,
    pub(super) wake_moved_to_busy: AtomicU64,
    /// `newidle_balance` calls (a queue ran empty in `schedule()`), those that
    /// balanced nothing because no queue had a task waiting (`rd->overload`) or
    /// because `avg_idle` was shorter than the lowest level's cost, and those that
    /// pulled a task.
    pub(super) newidle: AtomicU64,
    pub(super) newidle_no_overload: AtomicU64,
    pub(super) newidle_short_idle: AtomicU64,
    pub(super) newidle_pulled: AtomicU64,
    /// `load_balance` passes of the periodic balance, and tasks they moved.
    pub(super) periodic_passes: AtomicU64,
    pub(super) periodic_pulled: AtomicU64,
    /// Tasks `detach_tasks` refused as cache hot, in newly idle and in periodic passes.
    pub(super) hot_refused_newidle: AtomicU64,
    pub(super) hot_refused_periodic: AtomicU64,
}

impl BalanceStats {
    pub(super) fn bump(c: &AtomicU64) {
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
    pub(super) tasks: Box<[WakeFields]>,
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
    pub(super) fn set_moved(&self, t: TaskId, why: Moved) {
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

pub(super) fn is_idle<P: Platform>(common: &SchedCommon, p: &P, cpu: CpuId) -> bool {
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
