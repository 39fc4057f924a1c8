//! `cfs`: Linux's Completely Fair Scheduler as the fair class was from about 2.6.32 to
//! 6.5 (the era of `min_vruntime`, a sleeper credit of half a latency —
//! `GENTLE_FAIR_SLEEPERS`, 2.6.32 on — and the wake-up granularity; 6.6 replaced it
//! with EEVDF, the `eevdf` policy). `fair` is an accepted alias of the name, to be
//! removed.
//!
//! * **Per-CPU run queues** ordered by virtual runtime: a `BTreeSet<(vruntime, id)>`
//!   per CPU under its own lock (deterministic order; ties go to the lower id). The
//!   running task is *not* in the tree (`set_next_entity` takes it out) but stays
//!   counted in the queue's `nr_running` and weighted `load`, and linked (`on_rq`).
//! * **Weights**: the kernel's `sched_prio_to_weight` (nice 0 = 1024, each nice step
//!   ≈ ×1.25). A running task's `vruntime` advances by `delta_exec · 1024 / weight`
//!   (`calc_delta_fair`); each queue keeps a monotonic `min_vruntime` (the smaller of
//!   the running task's and the leftmost's, never decreasing).
//! * **Slice**: `max(latency · w / W, min_granularity)`, `W` the queue's load with the
//!   task counted. **Tick preemption**: the running task is rescheduled at a tick once
//!   it has run its slice since it was picked *and* it is no longer the leftmost.
//! * **Wake-up**: placement by `select_task_rq_fair` with scheduling domains
//!   (`wake_wide`, `wake_affine`, `select_idle_sibling` in the LLC, `find_idlest_cpu`
//!   for a fork; see [`crate::policies::linux_balance`]). A sleeper's
//!   vruntime is `max(own, min_vruntime − latency/2)` (bounded sleeper credit); a
//!   forked task's first one is `min_vruntime + vslice` (`START_DEBIT`). **Wake-up
//!   preemption** when `curr.vruntime − woken.vruntime > wakeup_granularity`; a woken
//!   task on an idle CPU kicks it.
//! * **Yield**: the yielding task is skipped once by the next pick of its queue (the
//!   kernel's skip buddy): it goes behind the leftmost other task, its vruntime
//!   unchanged. It asks for a reschedule of its CPU only if another task is queued.
//!   `yield=tail` is 2.6.23's `sched_compat_yield` instead: the yielder's vruntime goes
//!   just behind the rightmost queued task's, so yielding tasks take turns.
//! * **Placement and load balancing** are shared with `eevdf`
//!   ([`crate::policies::linux_balance`]): v6.6's scheduling domains, the periodic
//!   `load_balance` of each domain at its interval and the newly idle one when a queue
//!   runs empty in `schedule()`. Only queued (not running) tasks allowed on the pulling
//!   CPU move, taken from the left of the tree; a moved task keeps its lag: `vruntime −
//!   src.min_vruntime + dst.min_vruntime`.
//!
//! **Left out**: group scheduling (`CONFIG_FAIR_GROUP_SCHED`) and bandwidth control,
//! PELT load tracking (the load is the sum of the queued tasks' weights), the next and
//! last buddies, `hrtick` (slices end at
//! ticks) and `sched_rt` as a class of its own (real-time tasks are handled inside this
//! class, below).
//!
//! Readings where the sources differ or a simpler rule was chosen (each in
//! `docs/policies.md`, section cfs):
//!
//! * Defaults are CFS's normalized values from 2.6.26 on (2.6.23 shipped 20 ms /
//!   4 ms / 10 ms): latency 6 ms, minimum granularity 0.75 ms, wake-up granularity
//!   1 ms, each times the CPU-count factor of `sysctl_sched_tunable_scaling`
//!   (`update_sysctl`; the default `SCHED_TUNABLESCALING_LOG`: `1 + ilog2(min(ncpus,
//!   8))`, [`Sysctl`]). The period stretch `nr · min_granularity` of
//!   `__sched_period` is expressed only through the `min_granularity` floor of each
//!   slice.
//! * The wake-up granularity is compared unscaled (the kernel scales it by the woken
//!   task's weight in `wakeup_gran`).
//! * Sleeper credit is half the latency (`GENTLE_FAIR_SLEEPERS`).
//! * A forked child does not inherit its parent's vruntime: it starts at the chosen
//!   queue's `min_vruntime` plus its slice in virtual time (`START_DEBIT`).
//! * A task's first wake-up after fork is placed by `find_idlest_cpu`; a `sync` one
//!   stays on the forking CPU. A later `sync` wake-up is `WF_SYNC` (the waker is about
//!   to sleep) for `wake_affine`.
//! * Yield's skip is unconditional (the kernel takes the second entity only if it is
//!   within the wake-up granularity of the first).
//! * Placement and balancing are v6.6's (the kernel that replaced CFS with EEVDF), not
//!   those of the CFS era: one implementation serves both fair classes.
//! * Real-time classes (SCHED_FIFO/RR) run ahead of every fair task, as the kernel's
//!   `sched_rt` class sits above `sched_fair`: a real-time task's key in the tree is
//!   `99 − rt_priority`, below every fair vruntime (fair time starts at
//!   [`FAIR_EPOCH`]); it accrues no vruntime, is not placed, preempts a fair task at
//!   once and is not preempted by one; real-time tasks of one priority run in task-id
//!   order and are not time-sliced (SCHED_RR's quantum is not modelled). They count in
//!   the queue's load with their nice weight. NetBench's NIC stand-ins rely on this.
//! * Time is each queue's clock: the largest `Platform::task_clock` of its CPU seen
//!   under its lock, so it never runs backwards when CPUs' clocks differ slightly or a
//!   stall is subtracted late (the runtime). The task clock is `rq_clock_task`: time
//!   the host stole from the runtime's worker is not charged to the running task.
//!
//! Costs reported to the platform: a `Work::TreeOp` per tree insert or removal, a
//! `Work::Recalc` per vruntime/slice computation, one `Work::Goodness` per pick, a
//! `Work::Examine` per CPU or queue looked at by placement and balancing; the queue's
//! header line on every locked access and each remote queue's line when its published
//! load is read; each task's line when its fields are read or written.

use crate::common::{self, SchedCommon};
use crate::cpu::{CpuId, MAX_CPUS};
use crate::options::{Options, Param, Value};
use crate::platform::{Access, Line, Platform, SchedLock, Work};
use crate::policies::linux_balance::{Balance, Domains, Scaling, Wakeups, SD_IMBALANCE_PCT};
use crate::policies::{BuildEnv, PolicyKind};
use crate::policy::{InvariantViolation, Policy, PrevState};
use crate::spec::SpecError;
use crate::task::{TaskId, TaskParams, TaskTable};
use crossbeam_utils::CachePadded;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// The registry entry: `cfs[:latency=T,min_granularity=T,wakeup_granularity=T,imbalance_pct=N,yield=skip|tail]`;
/// `fair` is an alias, to be removed.
pub struct Kind;

impl PolicyKind for Kind {
    const NAME: &'static str = "cfs";
    const SUMMARY: &'static str = "Linux's CFS (the fair class of 2.6.32-6.5): per-CPU vruntime-ordered \
queues, min_vruntime, sleeper credit of half a latency, wake-up granularity, nice weights; \
'fair' is an alias, to be removed";
    const ALIASES: &'static [&'static str] = &["fair"];
    type Config = CfsConfig;

    fn build<P: Platform>(cfg: &CfsConfig, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError> {
        Ok(Box::new(Cfs::new(p, env, cfg)?))
    }
}

/// The weight of a nice-0 task.
pub const NICE_0_LOAD: u64 = 1024;

/// The kernel's `sched_prio_to_weight`, nice −20 ..= 19.
pub const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    /* -20 */ 88761, 71755, 56483, 46273, 36291, //
    /* -15 */ 29154, 23254, 18705, 14949, 11916, //
    /* -10 */ 9548, 7620, 6100, 4904, 3906, //
    /*  -5 */ 3121, 2501, 1991, 1586, 1277, //
    /*   0 */ 1024, 820, 655, 526, 423, //
    /*   5 */ 335, 272, 215, 172, 137, //
    /*  10 */ 110, 87, 70, 56, 45, //
    /*  15 */ 36, 29, 23, 18, 15, //
];

/// The load weight of nice level `nice` (clamped to −20..=19).
pub fn nice_to_weight(nice: i8) -> u64 {
    SCHED_PRIO_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}

/// `calc_delta_fair`: `delta` ns of real time as virtual time for weight `weight`.
pub fn calc_delta_fair(delta: u64, weight: u64) -> u64 {
    if weight == NICE_0_LOAD {
        delta
    } else {
        (delta as u128 * NICE_0_LOAD as u128 / weight.max(1) as u128).min(u64::MAX as u128) as u64
    }
}

// ------------------------------------------------------------------ options ------

/// The `cfs:` options; times in ns, before the CPU-count factor of `scaling`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfsConfig {
    /// `normalized_sysctl_sched_latency`: the period in which every runnable task runs
    /// once (6 ms).
    pub latency: u64,
    /// `normalized_sysctl_sched_min_granularity`: the shortest slice (0.75 ms).
    pub min_granularity: u64,
    /// `normalized_sysctl_sched_wakeup_granularity`: how far a woken task's vruntime
    /// must be behind the running one's to preempt it (1 ms).
    pub wakeup_granularity: u64,
    /// `sysctl_sched_tunable_scaling` (`log`): the three times above grow with the CPU
    /// count (`update_sysctl`).
    pub scaling: Scaling,
    /// `imbalance_pct` of every scheduling domain in load balancing (117, `sd_init`
    /// of Linux v6.6): how far the busiest group must be over this CPU's before it
    /// counts as overloaded or as worth pulling from.
    pub imbalance_pct: u32,
    /// `yield=tail`: 2.6.23's `sched_compat_yield` — the yielder's vruntime goes just
    /// behind the rightmost queued task's. Default (`yield=skip`): the skip buddy.
    pub yield_tail: bool,
}

impl Default for CfsConfig {
    fn default() -> Self {
        CfsConfig {
            latency: 6_000_000,
            min_granularity: 750_000,
            wakeup_granularity: 1_000_000,
            scaling: Scaling::Log,
            imbalance_pct: SD_IMBALANCE_PCT as u32,
            yield_tail: false,
        }
    }
}

/// Largest time option: 10 s.
pub(crate) const MAX_TIME_NS: u64 = 10_000_000_000;

/// `cfs[:key=value,...]`.
impl Options for CfsConfig {
    const PARAMS: &'static [Param<CfsConfig>] = &[
        crate::time_param!(
            latency,
            1,
            MAX_TIME_NS,
            "sysctl_sched_latency before the CPU-count factor: every runnable task runs once in it"
        ),
        crate::time_param!(
            min_granularity,
            1,
            MAX_TIME_NS,
            "sysctl_sched_min_granularity before the CPU-count factor: the shortest slice"
        ),
        crate::time_param!(
            wakeup_granularity,
            0,
            MAX_TIME_NS,
            "sysctl_sched_wakeup_granularity before the CPU-count factor: how far behind a woken task must be to preempt"
        ),
        Scaling::param(
            "sysctl_sched_tunable_scaling: the CPU-count factor of latency, min_granularity, wakeup_granularity",
            |c| Value::Word(c.scaling.name()),
            |c, v| c.scaling = Scaling::from_word(v.word()),
        ),
        Param::int(
            "imbalance_pct",
            100,
            1000,
            "every scheduling domain's imbalance_pct in load balancing (sd_init)",
            |c: &Self| Value::Int(c.imbalance_pct as i64),
            |c, v| c.imbalance_pct = v.int() as u32,
        )
        .unit("%"),
        Param::choice(
            "yield",
            &["skip", "tail"],
            "sched_yield: the skip buddy, or 2.6.23's sched_compat_yield",
            |c| Value::Word(if c.yield_tail { "tail" } else { "skip" }),
            |c, v| c.yield_tail = v.word() == "tail",
        ),
    ];
}

/// `sysctl_sched_latency`, `sysctl_sched_min_granularity` and
/// `sysctl_sched_wakeup_granularity` as `update_sysctl` sets them: the configured
/// (normalized) values times the CPU-count factor of `scaling`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sysctl {
    pub latency: u64,
    pub min_granularity: u64,
    pub wakeup_granularity: u64,
}

impl Sysctl {
    /// For `cfg` on a machine of `ncpus` CPUs.
    pub fn new(cfg: &CfsConfig, ncpus: usize) -> Sysctl {
        let f = cfg.scaling.factor(ncpus);
        Sysctl {
            latency: cfg.latency.saturating_mul(f),
            min_granularity: cfg.min_granularity.saturating_mul(f),
            wakeup_granularity: cfg.wakeup_granularity.saturating_mul(f),
        }
    }
}

// ---------------------------------------------------------- data structures ------

/// The fair fields of one task (`sched_entity`), guarded by the lock of the queue the
/// task is on (or owned by its waker while it is on none). A line of its own (64 bytes,
/// the host's line): a field of the task's `task_struct` in the kernel, priced as the
/// task's line (`Line::Task`) by the simulator; packed 48 bytes apart, two tasks on
/// different CPUs would share a line on the runtime (false sharing the model lacks).
#[derive(Debug, Default)]
#[repr(align(64))]
struct FairTask {
    vruntime: AtomicU64,
    weight: AtomicU64,
    /// Total run time (`sum_exec_runtime`).
    sum_exec: AtomicU64,
    /// `sum_exec` when the task was last picked (`prev_sum_exec_runtime`).
    prev_sum_exec: AtomicU64,
    /// Queue clock at which the running task's time was last accounted.
    exec_start: AtomicU64,
    /// Created and not yet woken: its first placement is `START_DEBIT`.
    forked: AtomicBool,
}

/// A queue's figures that other CPUs read without its lock.
#[derive(Debug)]
struct Published {
    load: AtomicU64,
    min_vr: AtomicU64,
}

/// One CPU's run queue (`cfs_rq`), guarded by its lock.
#[derive(Debug)]
pub struct Runqueue {
    cpu: CpuId,
    /// Queued, not running tasks by `(vruntime, id)`.
    tree: BTreeSet<(u64, TaskId)>,
    curr: Option<TaskId>,
    /// Tasks in the tree plus the running one.
    nr_running: usize,
    /// Their weights' sum.
    load: u64,
    min_vruntime: u64,
    /// The queue clock: the largest `now` seen under the lock.
    clock: u64,
    /// Skip this task at the next pick (set by `yield`).
    skip: Option<TaskId>,
    nr_switches: u64,
}

/// Where fair virtual time starts on every queue: far above every real-time key
/// (`0..=98`), so real-time tasks sort first in the same tree (2^40 ns ≈ 18 minutes,
/// and vruntime is only ever compared, never shown as time since boot).
pub const FAIR_EPOCH: u64 = 1 << 40;

/// The tree key of a real-time task of priority `rt_priority` (1..=99; higher first).
fn rt_key(rt_priority: u8) -> u64 {
    99 - rt_priority.clamp(1, 99) as u64
}

/// A task's fair state (observation for tests and reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskView {
    pub vruntime: u64,
    pub weight: u64,
    pub sum_exec: u64,
    /// The queue the task is linked on (running or queued).
    pub queued: Option<CpuId>,
}

/// A run queue's state (observation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RqView {
    pub nr_running: usize,
    pub load: u64,
    pub min_vruntime: u64,
    pub curr: Option<TaskId>,
    /// The queued tasks in pick order (leftmost first), without the running one.
    pub order: Vec<TaskId>,
    pub skip: Option<TaskId>,
    pub nr_switches: u64,
}

pub struct Cfs<P: Platform> {
    /// Task table, per-CPU `curr`, published queue lengths (`nr_running`).
    common: SchedCommon,
    rqs: Box<[P::Lock<Runqueue>]>,
    ft: Box<[FairTask]>,
    /// Published weighted load and `min_vruntime` of each queue (written under its
    /// lock, read racily by placement and balancing). Fields of the queue in the
    /// kernel (`cfs_rq`, per-CPU), so each queue's pair is on lines of its own: the
    /// simulator prices them as the queue's line, and on the runtime two workers'
    /// entries in one line would be false sharing it does not model.
    published: Box<[CachePadded<Published>]>,
    /// The wake-up placement's per-task fields (`recent_used_cpu`, `wakee_flips`).
    wakeups: Wakeups,
    domains: Domains,
    cfg: CfsConfig,
    /// The tunables as scaled for this machine (`update_sysctl`).
    sysctl: Sysctl,
    /// Observations: tasks moved by balancing, wake-up preemptions.
    pulled: AtomicU64,
    wakeup_preemptions: AtomicU64,
}

// ------------------------------------------------------------- the policy ------

impl<P: Platform> Cfs<P> {
    pub fn new(p: &P, env: &BuildEnv, cfg: &CfsConfig) -> Result<Self, SpecError> {
        let n = env.topo.ncpus();
        if !(1..=MAX_CPUS).contains(&n) {
            return Err(SpecError(format!("policy 'cfs': supports 1..={MAX_CPUS} CPUs, the machine has {n}")));
        }
        Ok(Cfs {
            common: SchedCommon::new(p, env.topo, n, env.capacity, env.hz.max(1)),
            rqs: (0..n)
                .map(|cpu| {
                    p.new_lock(
                        &format!("cfs_rq_lock[{cpu}]"),
                        Runqueue {
                            cpu,
                            tree: BTreeSet::new(),
                            curr: None,
                            nr_running: 0,
                            load: 0,
                            min_vruntime: FAIR_EPOCH,
                            clock: 0,
                            skip: None,
                            nr_switches: 0,
                        },
                    )
                })
                .collect(),
            ft: (0..env.capacity).map(|_| FairTask::default()).collect(),
            published: (0..n)
                .map(|_| CachePadded::new(Published { load: AtomicU64::new(0), min_vr: AtomicU64::new(FAIR_EPOCH) }))
                .collect(),
            wakeups: Wakeups::new(env.topo, env.capacity),
            domains: Domains::new(env.topo, env.hz, cfg.imbalance_pct),
            cfg: *cfg,
            sysctl: Sysctl::new(cfg, n),
            pulled: AtomicU64::new(0),
            wakeup_preemptions: AtomicU64::new(0),
        })
    }

    pub fn config(&self) -> &CfsConfig {
        &self.cfg
    }
    /// The latency, minimum and wake-up granularity as scaled for this machine.
    pub fn sysctl(&self) -> Sysctl {
        self.sysctl
    }
    /// The scheduling domains and their balancing state (observation).
    pub fn domains(&self) -> &Domains {
        &self.domains
    }
    /// Tasks moved between CPUs by balancing so far.
    pub fn pulled(&self) -> u64 {
        self.pulled.load(Relaxed)
    }
    /// Wake-ups that preempted a running task so far.
    pub fn wakeup_preemptions(&self) -> u64 {
        self.wakeup_preemptions.load(Relaxed)
    }

    /// Observation (uncharged): task `t`'s fair state.
    pub fn task_view(&self, t: TaskId) -> TaskView {
        let f = self.task(t);
        TaskView {
            vruntime: f.vruntime.load(Relaxed),
            weight: f.weight.load(Relaxed),
            sum_exec: f.sum_exec.load(Relaxed),
            queued: self.common.tasks.get(t).on_rq(),
        }
    }

    /// Observation (uncharged): CPU `cpu`'s run queue.
    pub fn rq_view(&self, cpu: CpuId) -> RqView {
        self.rqs[cpu].inspect(|rq| RqView {
            nr_running: rq.nr_running,
            load: rq.load,
            min_vruntime: rq.min_vruntime,
            curr: rq.curr,
            order: rq.tree.iter().map(|&(_, t)| t).collect(),
            skip: rq.skip,
            nr_switches: rq.nr_switches,
        })
    }

    /// The slice of a task of weight `w` on a queue of total load `total` (the task
    /// included): `max(latency · w / total, min_granularity)`.
    pub fn slice(&self, w: u64, total: u64) -> u64 {
        let s = self.sysctl.latency as u128 * w as u128 / total.max(w).max(1) as u128;
        (s as u64).max(self.sysctl.min_granularity)
    }

    /// Is `t` a real-time task (ahead of every fair task, see the module doc)?
    fn is_rt(&self, t: TaskId) -> bool {
        self.common.tasks.get(t).class().is_rt()
    }

    fn rt_key(&self, t: TaskId) -> u64 {
        rt_key(self.common.tasks.get(t).rt_priority())
    }

    fn task(&self, t: TaskId) -> &FairTask {
        &self.ft[t as usize]
    }
    fn vruntime(&self, t: TaskId) -> u64 {
        self.task(t).vruntime.load(Relaxed)
    }
    fn weight(&self, t: TaskId) -> u64 {
        self.task(t).weight.load(Relaxed)
    }

    // ---- queue primitives (the queue's lock is held) -----------------------------

    /// The queue clock, advanced to its CPU's task clock (`rq_clock_task`: the time
    /// the host stole from the runtime's worker is not run time; the same as `now`
    /// in the simulator).
    fn clock(&self, p: &P, rq: &mut Runqueue) -> u64 {
        rq.clock = rq.clock.max(p.task_clock(rq.cpu));
        rq.clock
    }

    /// `update_curr`: charge the running task the time since it was last accounted,
    /// in real (`sum_exec`) and virtual time, and move `min_vruntime` on.
    fn update_curr(&self, p: &P, rq: &mut Runqueue) {
        let now = self.clock(p, rq);
        if let Some(c) = rq.curr {
            let f = self.task(c);
            let start = f.exec_start.load(Relaxed);
            if now > start {
                let delta = now - start;
                p.charge(Work::Recalc);
                p.touch(Line::Task(c), Access::Write);
                f.sum_exec.store(f.sum_exec.load(Relaxed) + delta, Relaxed);
                if !self.is_rt(c) {
                    let dv = calc_delta_fair(delta, f.weight.load(Relaxed));
                    f.vruntime.store(f.vruntime.load(Relaxed).saturating_add(dv), Relaxed);
                }
                f.exec_start.store(now, Relaxed);
            }
        }
        self.update_min_vruntime(rq);
    }

    /// `update_min_vruntime`: the smaller of the running task's and the leftmost's
    /// vruntime, never moving backwards.
    fn update_min_vruntime(&self, rq: &mut Runqueue) {
        // Real-time keys are not virtual time: only fair tasks move the clock.
        let curr = rq.curr.filter(|&c| !self.is_rt(c)).map(|c| self.vruntime(c));
        let left = rq.tree.range((FAIR_EPOCH, 0)..).next().map(|&(v, _)| v);
        let v = match (curr, left) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return,
        };
        if v > rq.min_vruntime {
            rq.min_vruntime = v;
            self.published[rq.cpu].min_vr.store(v, Relaxed);
        }
    }

    fn publish(&self, rq: &Runqueue) {
        self.common.publish_len(rq.cpu, rq.nr_running);
        self.published[rq.cpu].load.store(rq.load, Relaxed);
    }

    /// Link `t` on `rq` (counted, not yet in the tree).
    fn account_add(&self, rq: &mut Runqueue, t: TaskId) {
        let ts = self.common.tasks.get(t);
        ts.set_on_rq(Some(rq.cpu));
        ts.set_processor(rq.cpu);
        rq.nr_running += 1;
        rq.load += self.weight(t);
        self.publish(rq);
    }

    /// Unlink `t` from `rq` (already out of the tree).
    fn account_sub(&self, rq: &mut Runqueue, t: TaskId) {
        self.common.tasks.get(t).set_on_rq(None);
        rq.nr_running -= 1;
        rq.load -= self.weight(t);
        self.publish(rq);
    }

    fn tree_insert(&self, p: &P, rq: &mut Runqueue, t: TaskId) {
        p.charge(Work::TreeOp);
        p.touch(Line::Tree(rq.cpu), Access::Write);
        rq.tree.insert((self.vruntime(t), t));
    }

    fn tree_remove(&self, p: &P, rq: &mut Runqueue, t: TaskId) -> bool {
        p.charge(Work::TreeOp);
        p.touch(Line::Tree(rq.cpu), Access::Write);
        rq.tree.remove(&(self.vruntime(t), t))
    }

    /// `enqueue_entity` of a woken task: placement of its vruntime, then the tree.
    /// `lag` is its vruntime relative to its previous queue's `min_vruntime` when it
    /// comes from another queue.
    fn enqueue_woken(&self, p: &P, rq: &mut Runqueue, t: TaskId, forked: bool, lag: Option<i128>) {
        p.charge(Work::Recalc);
        p.touch(Line::Task(t), Access::Write);
        let f = self.task(t);
        let w = f.weight.load(Relaxed);
        let v = if self.is_rt(t) {
            self.rt_key(t)
        } else if forked {
            // START_DEBIT: one slice behind, in virtual time.
            rq.min_vruntime.saturating_add(calc_delta_fair(self.slice(w, rq.load + w), w))
        } else {
            let own = match lag {
                Some(lag) => (rq.min_vruntime as i128 + lag).clamp(0, u64::MAX as i128) as u64,
                None => f.vruntime.load(Relaxed),
            };
            // Sleeper credit, at most half a latency.
            own.max(rq.min_vruntime.saturating_sub(self.sysctl.latency / 2))
        };
        f.vruntime.store(v, Relaxed);
        self.account_add(rq, t);
        self.tree_insert(p, rq, t);
        self.update_min_vruntime(rq);
    }

    /// `check_preempt_wakeup` for `t`, just queued on `rq` (whose running task's time
    /// is accounted): kick an idle CPU; preempt a running task whose vruntime is more
    /// than the wake-up granularity ahead.
    fn check_preempt(&self, p: &P, rq: &Runqueue, t: TaskId) {
        match rq.curr {
            None => p.resched(rq.cpu),
            Some(c) if c != t => {
                p.touch(Line::Task(c), Access::Read);
                // A real-time task preempts a fair one at once (its key is far below any
                // vruntime) and is never preempted by a fair one (the reverse holds).
                let gran = if self.is_rt(t) { 0 } else { self.sysctl.wakeup_granularity };
                if self.vruntime(c) > self.vruntime(t).saturating_add(gran) {
                    self.wakeup_preemptions.fetch_add(1, Relaxed);
                    p.resched(rq.cpu);
                }
            }
            Some(_) => {}
        }
    }

    // ---- schedule -----------------------------------------------------------------------

    /// `put_prev_task`: a runnable `prev` goes back into the tree (at its accounted
    /// vruntime); a blocked or exited one leaves the queue.
    fn put_prev(&self, p: &P, rq: &mut Runqueue, t: TaskId, state: PrevState) {
        p.touch(Line::Task(t), Access::Write);
        if rq.curr == Some(t) {
            rq.curr = None;
            if state == PrevState::Runnable {
                self.tree_insert(p, rq, t);
            } else {
                self.account_sub(rq, t);
            }
        } else if state != PrevState::Runnable
            && self.common.tasks.get(t).on_rq() == Some(rq.cpu)
            && self.tree_remove(p, rq, t)
        {
            self.account_sub(rq, t);
        }
        self.update_min_vruntime(rq);
    }

    /// `pick_next_entity`: the leftmost task, or the second if the leftmost yielded.
    fn pick_next(&self, p: &P, rq: &mut Runqueue) -> Option<TaskId> {
        p.charge(Work::Goodness);
        let skip = rq.skip.take();
        let mut it = rq.tree.iter();
        let first = it.next().copied();
        let chosen = match first {
            Some((_, t)) if Some(t) == skip => it.next().copied().or(first),
            other => other,
        };
        let (v, t) = chosen?;
        p.charge(Work::TreeOp);
        p.touch(Line::Tree(rq.cpu), Access::Write);
        rq.tree.remove(&(v, t));
        p.touch(Line::Task(t), Access::Write);
        let now = rq.clock;
        let f = self.task(t);
        f.exec_start.store(now, Relaxed);
        f.prev_sum_exec.store(f.sum_exec.load(Relaxed), Relaxed);
        rq.curr = Some(t);
        self.update_min_vruntime(rq);
        Some(t)
    }

    // ---- invariants -------------------------------------------------------------------

    fn check_rq(&self, cpu: CpuId, rq: &Runqueue, seen: &mut [Option<CpuId>]) -> Result<(), String> {
        let tasks = &self.common.tasks;
        if rq.cpu != cpu {
            return Err(format!("queue {cpu} says cpu {}", rq.cpu));
        }
        let mut claim = |t: TaskId| -> Result<(), String> {
            match seen.get_mut(t as usize) {
                None => Err(format!("queue {cpu}: task {t} was never created")),
                Some(Some(other)) => Err(format!("task {t} is on queues {other} and {cpu}")),
                Some(s) => {
                    *s = Some(cpu);
                    Ok(())
                }
            }
        };
        let (mut count, mut load) = (0usize, 0u64);
        for &(v, t) in &rq.tree {
            claim(t)?;
            let ts = tasks.get(t);
            if ts.on_rq() != Some(cpu) || ts.processor() != cpu || !ts.live() || ts.has_cpu() {
                return Err(format!(
                    "task {t} queued on {cpu}: on_rq {:?}, processor {}, live {}, has_cpu {}",
                    ts.on_rq(),
                    ts.processor(),
                    ts.live(),
                    ts.has_cpu()
                ));
            }
            if self.vruntime(t) != v {
                return Err(format!("task {t} queued on {cpu} at vruntime {v} but has {}", self.vruntime(t)));
            }
            if !ts.cpus_allowed().contains(cpu) {
                return Err(format!("task {t} queued on {cpu}, not allowed there"));
            }
            count += 1;
            load += self.weight(t);
        }
        if let Some(c) = rq.curr {
            claim(c)?;
            let ts = tasks.get(c);
            if ts.on_rq() != Some(cpu) || !ts.has_cpu() || !ts.live() {
                return Err(format!("cpu {cpu} runs task {c}: on_rq {:?}, has_cpu {}", ts.on_rq(), ts.has_cpu()));
            }
            count += 1;
            load += self.weight(c);
        }
        if rq.curr != self.common.cpu(cpu).curr() {
            return Err(format!("cpu {cpu}: queue curr {:?}, cpu curr {:?}", rq.curr, self.common.cpu(cpu).curr()));
        }
        if count != rq.nr_running || count != self.common.queue_len(cpu) {
            return Err(format!(
                "cpu {cpu}: {count} tasks linked, nr_running {}, published {}",
                rq.nr_running,
                self.common.queue_len(cpu)
            ));
        }
        if load != rq.load || load != self.published[cpu].load.load(Relaxed) {
            return Err(format!(
                "cpu {cpu}: weights sum to {load}, load {}, published {}",
                rq.load,
                self.published[cpu].load.load(Relaxed)
            ));
        }
        if rq.min_vruntime != self.published[cpu].min_vr.load(Relaxed) {
            return Err(format!(
                "cpu {cpu}: min_vruntime {} but published {}",
                rq.min_vruntime,
                self.published[cpu].min_vr.load(Relaxed)
            ));
        }
        Ok(())
    }
}

impl<P: Platform> Balance<P> for Cfs<P> {
    type Rq = Runqueue;

    fn common(&self) -> &SchedCommon {
        &self.common
    }
    fn wakeups(&self) -> &Wakeups {
        &self.wakeups
    }
    fn domains(&self) -> &Domains {
        &self.domains
    }
    fn queues(&self) -> &[P::Lock<Runqueue>] {
        &self.rqs
    }
    fn published_load(&self, cpu: CpuId) -> u64 {
        self.published[cpu].load.load(Relaxed)
    }
    fn nr_running(rq: &Runqueue) -> usize {
        rq.nr_running
    }
    fn rq_clock(rq: &Runqueue) -> u64 {
        rq.clock
    }
    /// From the left of the tree.
    fn first_waiting(&self, rq: &Runqueue, mut ok: impl FnMut(TaskId) -> bool) -> Option<TaskId> {
        rq.tree.iter().map(|&(_, t)| t).find(|&t| ok(t))
    }
    fn weight(&self, t: TaskId) -> u64 {
        Cfs::weight(self, t)
    }
    fn exec_start(&self, t: TaskId) -> u64 {
        self.task(t).exec_start.load(Relaxed)
    }

    /// Move the queued `t` from `there` to `here`, keeping its lag: `vruntime −
    /// there.min_vruntime + here.min_vruntime`.
    fn move_task(&self, p: &P, here: &mut Runqueue, there: &mut Runqueue, t: TaskId) {
        p.touch(Line::Task(t), Access::Write);
        let f = self.task(t);
        let lag = f.vruntime.load(Relaxed) as i128 - there.min_vruntime as i128;
        self.tree_remove(p, there, t);
        self.account_sub(there, t);
        self.update_min_vruntime(there);
        if !self.is_rt(t) {
            let v = here.min_vruntime as i128 + lag;
            f.vruntime.store(v.clamp(FAIR_EPOCH as i128, u64::MAX as i128) as u64, Relaxed);
        }
        self.account_add(here, t);
        self.tree_insert(p, here, t);
        self.update_min_vruntime(here);
        self.pulled.fetch_add(1, Relaxed);
    }
    fn sync_clock(&self, p: &P, rq: &mut Runqueue) {
        self.clock(p, rq);
    }
    fn account_curr(&self, p: &P, rq: &mut Runqueue) {
        self.update_curr(p, rq);
    }
    fn check_preempt(&self, p: &P, rq: &Runqueue, t: TaskId) {
        Cfs::check_preempt(self, p, rq, t)
    }
}

impl<P: Platform> Policy<P> for Cfs<P> {
    fn name(&self) -> &str {
        Kind::NAME
    }
    fn tasks(&self) -> &TaskTable {
        &self.common.tasks
    }

    /// `sched_fork`: the task's weight from its nice level; its vruntime is set when
    /// its first wake-up places it (`START_DEBIT`). The parent gives nothing.
    fn task_new(&self, p: &P, id: TaskId, params: &TaskParams, _parent: Option<TaskId>) {
        let cpu = self.common.fork_cpu(p, params);
        p.touch(Line::Task(id), Access::Write);
        self.common.tasks.init(id, params, cpu, 0);
        let f = self.task(id);
        f.weight.store(nice_to_weight(params.nice), Relaxed);
        f.vruntime.store(if params.class.is_rt() { rt_key(params.rt_priority) } else { FAIR_EPOCH }, Relaxed);
        f.sum_exec.store(0, Relaxed);
        f.prev_sum_exec.store(0, Relaxed);
        f.exec_start.store(0, Relaxed);
        f.forked.store(true, Relaxed);
        self.wakeups.task_new(id, p.now());
    }

    /// `try_to_wake_up`: choose a CPU (`Balance::wake_cpu`: `select_task_rq_fair`), place
    /// the vruntime there, queue, and kick or preempt. The engines wake a sleeping task
    /// once (its waker owns it until it is queued); a task already queued is left alone.
    fn wake_up(&self, p: &P, id: TaskId, sync: bool) {
        p.charge(Work::WakeupEntry);
        p.touch(Line::Task(id), Access::Read);
        let ts = self.common.tasks.get(id);
        if ts.on_rq().is_some() || !ts.live() {
            return;
        }
        let prev = ts.processor();
        let forked = self.task(id).forked.swap(false, Relaxed);
        let target = self.wake_cpu(p, id, prev, sync, forked);
        let lag = (!forked && target != prev).then(|| {
            p.touch(Line::Queue(prev), Access::Read);
            self.vruntime(id) as i128 - self.published[prev].min_vr.load(Relaxed) as i128
        });
        self.rqs[target].with(p, |rq| {
            p.touch(Line::Queue(target), Access::Write);
            self.update_curr(p, rq);
            self.enqueue_woken(p, rq, id, forked, lag);
            self.check_preempt(p, rq, id);
            self.domains.note_wakeup(target, rq.clock);
        });
    }

    /// `schedule()`: account the running task, put it back (or take it off), and pick
    /// the leftmost. A queue left empty first finishes the switch to idle, then pulls
    /// one task from the busiest queue (`newidle_balance`) and picks again.
    fn schedule(&self, p: &P, prev: Option<TaskId>, prev_state: PrevState) -> Option<TaskId> {
        p.charge(Work::ScheduleEntry);
        let cpu = p.this_cpu();
        let mut balanced = self.common.ncpus() < 2;
        // The task `switch_to` still has to take off this CPU.
        let mut leaving = prev;
        loop {
            let picked = self.rqs[cpu].with(p, |rq| {
                p.touch(Line::Queue(cpu), Access::Write);
                self.update_curr(p, rq);
                if let Some(t) = leaving {
                    self.put_prev(p, rq, t, prev_state);
                }
                if rq.tree.is_empty() && !balanced {
                    rq.curr = None;
                    self.common.switch_to(p, leaving.take(), prev_state, None);
                    return None;
                }
                let next = self.pick_next(p, rq);
                if next != leaving {
                    rq.nr_switches += 1;
                }
                self.common.switch_to(p, leaving.take(), prev_state, next);
                Some(next)
            });
            match picked {
                Some(next) => {
                    if let Some(t) = next {
                        self.note_dispatch(t, cpu);
                    }
                    return next;
                }
                None => {
                    self.newidle_balance(p, cpu);
                    balanced = true;
                }
            }
        }
    }

    /// `task_tick_fair` / `check_preempt_tick`: account the running task; reschedule
    /// once it has run its slice and another task is further left.
    fn tick(&self, p: &P, curr: Option<TaskId>) -> bool {
        p.charge(Work::Tick);
        let Some(t) = curr else { return false };
        let cpu = p.this_cpu();
        self.rqs[cpu].with(p, |rq| {
            p.touch(Line::Queue(cpu), Access::Write);
            if rq.curr != Some(t) {
                return false;
            }
            self.update_curr(p, rq);
            let Some(&left) = rq.tree.first() else { return false };
            if self.is_rt(t) {
                return false; // SCHED_FIFO: runs until it blocks or yields.
            }
            p.charge(Work::Recalc);
            let f = self.task(t);
            let ran = f.sum_exec.load(Relaxed) - f.prev_sum_exec.load(Relaxed);
            ran >= self.slice(f.weight.load(Relaxed), rq.load) && (f.vruntime.load(Relaxed), t) > left
        })
    }

    /// `sched_yield()`: if another task is queued here, skip `curr` at the next pick
    /// (`yield=tail`: move its vruntime just behind the rightmost's) and reschedule
    /// this CPU; otherwise `curr` runs on.
    fn yield_now(&self, p: &P, curr: TaskId) {
        common::with_task_queue(p, &self.common.tasks, &self.rqs, curr, |rq| {
            if rq.curr != Some(curr) || rq.tree.is_empty() {
                return;
            }
            p.touch(Line::Task(curr), Access::Write);
            if self.cfg.yield_tail {
                self.update_curr(p, rq);
                if let Some(&(right, _)) = rq.tree.last() {
                    let f = self.task(curr);
                    if right >= f.vruntime.load(Relaxed) {
                        f.vruntime.store(right + 1, Relaxed);
                    }
                }
                self.update_min_vruntime(rq);
            } else {
                rq.skip = Some(curr);
            }
            p.resched(rq.cpu);
        });
    }

    /// The periodic balance, on every tick of every CPU.
    fn balance(&self, p: &P) {
        self.periodic_balance(p, p.this_cpu());
    }

    fn nr_queues(&self) -> usize {
        self.common.ncpus()
    }
    fn queue_len(&self, q: usize) -> usize {
        self.common.queue_len(q)
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![("pulled", self.pulled()), ("wakeup_preemptions", self.wakeup_preemptions())];
        v.extend(self.wakeups.stats());
        v.extend(self.domains.stats().list());
        v
    }

    fn check_invariants(&self) -> Result<(), InvariantViolation> {
        let tasks = &self.common.tasks;
        let mut seen = vec![None; tasks.high_water() as usize];
        for (cpu, lock) in self.rqs.iter().enumerate() {
            lock.inspect(|rq| self.check_rq(cpu, rq, &mut seen))?;
        }
        for (t, s) in seen.iter().enumerate() {
            let claimed = tasks.get(t as TaskId).on_rq();
            if claimed.is_some() && s.is_none() {
                return Err(format!("task {t} claims queue {claimed:?} but is on none").into());
            }
        }
        Ok(())
    }
}
