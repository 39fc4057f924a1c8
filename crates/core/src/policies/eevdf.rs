//! `eevdf`: Linux's Earliest Eligible Virtual Deadline First scheduler (the fair class
//! from 6.6 on), read from Linux v6.12 `kernel/sched/fair.c` and
//! `kernel/sched/features.h` (in the 6.12.y stable series; where that series moved a
//! default, v6.12's is kept and the later one is an option). The algorithm is Stoica and
//! Abdel-Wahab's, "Earliest Eligible Virtual Deadline First: A Flexible and Accurate
//! Mechanism for Proportional Share Resource Allocation", Old Dominion University
//! TR-95-22, 1995.
//!
//! * **Entities.** Each task has a weight from its nice level (the kernel's
//!   `sched_prio_to_weight`, shared with `cfs`), a `vruntime` advancing by
//!   `delta_exec · 1024 / weight` while it runs, a request `slice` and a virtual
//!   `deadline = vruntime + calc_delta_fair(slice)`, renewed when its vruntime reaches
//!   it (`update_deadline`; the running task is then rescheduled if another entity is
//!   queued: the tick preemption).
//! * **Virtual time** `V` is the weight-averaged vruntime of the queue's entities, the
//!   running one included (`avg_vruntime`). An entity is *eligible* when its lag
//!   `V − vruntime` is not negative, tested in the kernel's exact integer form
//!   `Σ vᵢ·wᵢ ≥ v·Σ wᵢ` (`vruntime_eligible`; here over absolute vruntimes in 128-bit
//!   arithmetic, which the kernel avoids by keeping them relative to a moving zero).
//! * **Pick** (`pick_eevdf`): the eligible entity with the earliest deadline. The
//!   kernel finds it in O(log n) in an rb-tree ordered by deadline and augmented with
//!   each subtree's minimum vruntime; here a `BTreeSet<(deadline, id)>` is scanned from
//!   the left to the first eligible entity (O(n) at worst; ties go to the lower id).
//! * **Lag across sleep** (`place_lag`, the kernel's `PLACE_LAG`): a task leaving the
//!   queue keeps its lag `vlag = V − v`, clamped to ±`calc_delta_fair(max(2·slice,
//!   TICK_NSEC))` (`update_entity_lag`); on its return it is placed at `v = V − vlag′`
//!   with `vlag′ = vlag · (W + w) / W` so that its lag after joining is `vlag` again
//!   (`place_entity`). Off: every wake-up is placed at `V`.
//! * **New tasks** (`place_deadline_initial`, `PLACE_DEADLINE_INITIAL`): a forked task
//!   starts at `V` with half a slice to its deadline.
//! * **Run to parity** (`run_to_parity`, `RUN_TO_PARITY`): once picked, an eligible
//!   running task is not preempted by a wake-up until its deadline moves (its slice is
//!   used up). The kernel also cancels this protection when an entity with a shorter
//!   custom slice wakes (`PREEMPT_SHORT`); schedlab has no custom slices, so only its
//!   other half applies: an unprotected running task that falls behind `V` is
//!   rescheduled at the next accounting (`did_preempt_short`).
//! * **Delayed dequeue** (`delay_dequeue`, `DELAY_DEQUEUE` with `DELAY_ZERO`): a task
//!   that blocks while not eligible stays in the competition as a *delayed* entity,
//!   burning off its negative lag; it leaves when the pick chooses it (then a positive
//!   lag is clipped to 0) or returns to the run if it is woken first (a positive lag is
//!   clipped and it is placed again). Its task is blocked to the engines (`on_rq` is
//!   none, it counts in no queue length or load), but it weighs in `V`.
//! * **Wake-up preemption** (`check_preempt_wakeup_fair`): after accounting the
//!   running task, the woken task preempts it if it is now what `pick_eevdf` would
//!   choose, the running task included (so subject to run-to-parity). A woken task on
//!   an idle CPU kicks it.
//! * **Slice**: `base_slice` (0.75 ms, v6.12's `sysctl_sched_base_slice`; 0.70 ms from
//!   commit 2ae891b82695, "sched: Reduce the default slice to avoid tasks getting an
//!   extra tick", v6.15 and the 6.12.y stable series) times the kernel's CPU-count factor (`update_sysctl`,
//!   `get_update_sysctl_factor`): `1 + ilog2(min(ncpus, 8))` under the default
//!   `SCHED_TUNABLESCALING_LOG`, `min(ncpus, 8)` under `linear`, 1 under `none`.
//!
//! Left out: group scheduling (`CONFIG_FAIR_GROUP_SCHED`; every task is an entity of
//! its CPU's root queue), bandwidth control, custom slices (`sched_attr.sched_runtime`),
//! the next buddy (`NEXT_BUDDY` is off by default; `PICK_BUDDY` only acts on buddies set
//! by group scheduling or `yield_to`) and PELT load tracking. Placement and balancing
//! are shared with `cfs` ([`crate::policies::linux_balance`]; `docs/policies.md`):
//! v6.6's scheduling domains (LLC and NUMA levels built from the machine),
//! `select_task_rq_fair` over them (`wake_wide`, `wake_affine`, `select_idle_sibling`;
//! `find_idlest_cpu` for a forked task's first wake-up), and the periodic and newly
//! idle `load_balance` per domain. A migrated task keeps its lag and its relative deadline
//! (`PLACE_REL_DEADLINE`). A delayed entity is not migrated and is woken on its CPU
//! (as 6.12's `ttwu_runnable` requeues it). Real-time tasks are handled as in `cfs`:
//! a queue of their own per CPU, picked first in priority order, not time-sliced, not
//! preempted by fair tasks; they weigh in the queue's load but not in `V`. `sched_yield`
//! is `yield_task_fair`: an eligible yielder's vruntime jumps to its deadline and its
//! deadline one slice further.
//!
//! Costs reported to the platform follow `cfs`: a `Work::TreeOp` per tree insert or
//! removal, a `Work::Recalc` per vruntime, lag or deadline computation, one
//! `Work::Goodness` per pick and a `Work::Examine` per entity the pick tests for
//! eligibility, a `Work::Examine` per CPU or queue looked at by placement and
//! balancing; the queue's line on every locked access, each task's line when its fields
//! are read or written.

use crate::common::{self, SchedCommon};
use crate::cpu::{CpuId, MAX_CPUS};
use crate::options::{Options, Param, Value};
use crate::platform::{Access, Line, Platform, SchedLock, Work};
use crate::policies::cfs::{self, calc_delta_fair, nice_to_weight, FAIR_EPOCH};
pub use crate::policies::linux_balance::Scaling;
use crate::policies::linux_balance::{Balance, Domains, Wakeups, SD_IMBALANCE_PCT};
use crate::policies::{BuildEnv, PolicyKind};
use crate::policy::{InvariantViolation, Policy, PrevState};
use crate::spec::SpecError;
use crate::task::{TaskId, TaskParams, TaskTable};
use crossbeam_utils::CachePadded;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};

/// The registry entry: `eevdf[:base_slice=T,scaling=...,place_lag=on|off,...]`.
pub struct Kind;

impl PolicyKind for Kind {
    const NAME: &'static str = "eevdf";
    const SUMMARY: &'static str = "Linux's EEVDF (v6.12 fair class): eligible entity with the earliest virtual \
deadline, lag kept across sleep, run-to-parity, delayed dequeue; the per-CPU placement and balancing it shares with cfs";
    type Config = EevdfConfig;

    fn build<P: Platform>(cfg: &EevdfConfig, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError> {
        Ok(Box::new(Eevdf::new(p, env, cfg)?))
    }
}

// ------------------------------------------------------------------ options ------

/// The `eevdf:` options; times in ns. Defaults are v6.12's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EevdfConfig {
    /// `normalized_sysctl_sched_base_slice` (0.75 ms), before the CPU-count factor.
    pub base_slice: u64,
    /// `sysctl_sched_tunable_scaling` (`log`).
    pub scaling: Scaling,
    /// `PLACE_LAG` (on): keep lag across sleep; off places every wake-up at `V`.
    pub place_lag: bool,
    /// `PLACE_DEADLINE_INITIAL` (on): a new task's first deadline is half a slice away.
    pub place_deadline_initial: bool,
    /// `RUN_TO_PARITY` (on): no wake-up preemption of an eligible running task before
    /// its deadline moves.
    pub run_to_parity: bool,
    /// `DELAY_DEQUEUE` (on, with `DELAY_ZERO`): a task blocking while not eligible stays
    /// queued until picked or woken.
    pub delay_dequeue: bool,
    /// Every scheduling domain's `imbalance_pct` in load balancing (117), as in `cfs`.
    pub imbalance_pct: u32,
}

impl Default for EevdfConfig {
    fn default() -> Self {
        EevdfConfig {
            base_slice: 750_000,
            scaling: Scaling::Log,
            place_lag: true,
            place_deadline_initial: true,
            run_to_parity: true,
            delay_dequeue: true,
            imbalance_pct: SD_IMBALANCE_PCT as u32,
        }
    }
}

/// `eevdf[:key=value,...]`.
impl Options for EevdfConfig {
    const PARAMS: &'static [Param<EevdfConfig>] = &[
        crate::time_param!(
            base_slice,
            1,
            cfs::MAX_TIME_NS,
            "normalized_sysctl_sched_base_slice, before the CPU-count factor"
        ),
        Scaling::param(
            "sysctl_sched_tunable_scaling: the base slice's CPU-count factor",
            |c| Value::Word(c.scaling.name()),
            |c, v| c.scaling = Scaling::from_word(v.word()),
        ),
        Param::switch(
            "place_lag",
            "PLACE_LAG: lag kept across sleep (off: every wake-up placed at V)",
            |c| Value::switch(c.place_lag),
            |c, v| c.place_lag = v.on(),
        ),
        Param::switch(
            "place_deadline_initial",
            "PLACE_DEADLINE_INITIAL: a new task's first deadline half a slice away",
            |c| Value::switch(c.place_deadline_initial),
            |c, v| c.place_deadline_initial = v.on(),
        ),
        Param::switch(
            "run_to_parity",
            "RUN_TO_PARITY: no wake-up preemption before the running task's deadline moves",
            |c| Value::switch(c.run_to_parity),
            |c, v| c.run_to_parity = v.on(),
        ),
        Param::switch(
            "delay_dequeue",
            "DELAY_DEQUEUE: a task blocking while not eligible stays queued",
            |c| Value::switch(c.delay_dequeue),
            |c, v| c.delay_dequeue = v.on(),
        ),
        Param::int(
            "imbalance_pct",
            100,
            1000,
            "every scheduling domain's imbalance_pct in load balancing, as in cfs",
            |c: &Self| Value::Int(c.imbalance_pct as i64),
            |c, v| c.imbalance_pct = v.int() as u32,
        )
        .unit("%"),
    ];
}

// ---------------------------------------------------------- data structures ------

/// One task's `sched_entity`, guarded by the lock of the queue the task is on (or
/// owned by its waker while it is on none). Line-aligned, as `cfs`'s, so that two
/// tasks' entities never share a line on the runtime (it spans two 64-byte lines; the
/// simulator prices it as the task's line).
#[derive(Debug, Default)]
#[repr(align(64))]
struct Entity {
    vruntime: AtomicU64,
    deadline: AtomicU64,
    /// Lag at the last dequeue (`vlag`), in virtual time.
    vlag: AtomicI64,
    weight: AtomicU64,
    sum_exec: AtomicU64,
    prev_sum_exec: AtomicU64,
    exec_start: AtomicU64,
    /// The deadline when the task was last picked: run-to-parity protects it while
    /// its deadline is still this one (the kernel keeps it in `vlag`, unused then).
    protect: AtomicU64,
    /// Still queued although its task blocked (`sched_delayed`).
    delayed: AtomicBool,
    /// Created and not yet woken: its first placement is `ENQUEUE_INITIAL`.
    forked: AtomicBool,
}

/// One CPU's run queue (`cfs_rq` plus the real-time tasks), guarded by its lock.
#[derive(Debug)]
pub struct Runqueue {
    cpu: CpuId,
    /// Waiting fair entities by `(deadline, id)`, delayed ones included.
    tree: BTreeSet<(u64, TaskId)>,
    /// Waiting real-time tasks by `(99 − rt_priority, id)`.
    rt: BTreeSet<(u64, TaskId)>,
    curr: Option<TaskId>,
    /// Runnable tasks linked here: waiting (not delayed) and running.
    nr_running: usize,
    /// Their weights' sum.
    load: u64,
    /// Delayed entities in the tree.
    nr_delayed: usize,
    /// `Σ vᵢ·wᵢ` and `Σ wᵢ` over the tree (the kernel's `avg_vruntime`, `avg_load`,
    /// kept absolute).
    sum_vw: u128,
    sum_w: u64,
    /// `V` when the tree last changed (`zero_vruntime`): where a task joining an empty
    /// queue is placed.
    zero_vruntime: u64,
    /// The queue clock: the largest task clock seen under the lock.
    clock: u64,
    nr_switches: u64,
}

/// A task's entity (observation for tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntityView {
    pub vruntime: u64,
    pub deadline: u64,
    pub vlag: i64,
    pub weight: u64,
    pub sum_exec: u64,
    pub delayed: bool,
    pub rt: bool,
    /// The queue the task is linked on as runnable (running or waiting).
    pub queued: Option<CpuId>,
}

/// A run queue's state (observation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RqView {
    pub nr_running: usize,
    pub nr_delayed: usize,
    pub load: u64,
    pub curr: Option<TaskId>,
    /// Waiting fair entities in deadline order (delayed ones included).
    pub order: Vec<TaskId>,
    /// `Σ vᵢ·wᵢ` and `Σ wᵢ` over the fair entities, the running one included.
    pub avg_sum: u128,
    pub avg_load: u64,
    /// `V` (floor of `avg_sum / avg_load`), or the last one if the queue is empty.
    pub avg_vruntime: u64,
    pub nr_switches: u64,
}

pub struct Eevdf<P: Platform> {
    common: SchedCommon,
    rqs: Box<[P::Lock<Runqueue>]>,
    se: Box<[Entity]>,
    /// The wake-up placement's per-task fields (`recent_used_cpu`, `wakee_flips`).
    wakeups: Wakeups,
    domains: Domains,
    /// Published weighted load of each queue (read racily by balancing).
    load: Box<[CachePadded<AtomicU64>]>,
    cfg: EevdfConfig,
    /// `base_slice` × the CPU-count factor.
    slice: u64,
    /// `TICK_NSEC`: the floor of the lag clamp.
    tick_ns: u64,
    pulled: AtomicU64,
    wakeup_preemptions: AtomicU64,
    delayed_dequeues: AtomicU64,
    delayed_requeues: AtomicU64,
}

/// The tree key of a real-time task of priority `rt_priority` (1..=99; higher first).
fn rt_key(rt_priority: u8) -> u64 {
    99 - rt_priority.clamp(1, 99) as u64
}

impl<P: Platform> Eevdf<P> {
    pub fn new(p: &P, env: &BuildEnv, cfg: &EevdfConfig) -> Result<Self, SpecError> {
        let n = env.topo.ncpus();
        if !(1..=MAX_CPUS).contains(&n) {
            return Err(SpecError(format!("policy 'eevdf': supports 1..={MAX_CPUS} CPUs, the machine has {n}")));
        }
        let hz = env.hz.max(1);
        Ok(Eevdf {
            common: SchedCommon::new(p, env.topo, n, env.capacity, hz),
            rqs: (0..n)
                .map(|cpu| {
                    p.new_lock(
                        &format!("cfs_rq_lock[{cpu}]"),
                        Runqueue {
                            cpu,
                            tree: BTreeSet::new(),
                            rt: BTreeSet::new(),
                            curr: None,
                            nr_running: 0,
                            load: 0,
                            nr_delayed: 0,
                            sum_vw: 0,
                            sum_w: 0,
                            zero_vruntime: FAIR_EPOCH,
                            clock: 0,
                            nr_switches: 0,
                        },
                    )
                })
                .collect(),
            se: (0..env.capacity).map(|_| Entity::default()).collect(),
            wakeups: Wakeups::new(env.topo, env.capacity),
            domains: Domains::new(env.topo, env.hz, cfg.imbalance_pct),
            load: (0..n).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            cfg: *cfg,
            slice: cfg.base_slice.saturating_mul(cfg.scaling.factor(n)),
            tick_ns: 1_000_000_000 / hz as u64,
            pulled: AtomicU64::new(0),
            wakeup_preemptions: AtomicU64::new(0),
            delayed_dequeues: AtomicU64::new(0),
            delayed_requeues: AtomicU64::new(0),
        })
    }

    pub fn config(&self) -> &EevdfConfig {
        &self.cfg
    }
    /// `sysctl_sched_base_slice` as scaled for this machine.
    pub fn slice(&self) -> u64 {
        self.slice
    }
    /// Tasks moved between CPUs by balancing so far.
    pub fn pulled(&self) -> u64 {
        self.pulled.load(Relaxed)
    }
    /// Wake-ups that preempted a running task so far.
    pub fn wakeup_preemptions(&self) -> u64 {
        self.wakeup_preemptions.load(Relaxed)
    }
    /// Blocking tasks kept queued (delayed) so far.
    pub fn delayed_dequeues(&self) -> u64 {
        self.delayed_dequeues.load(Relaxed)
    }

    /// Observation (uncharged): task `t`'s entity.
    pub fn entity_view(&self, t: TaskId) -> EntityView {
        let e = self.ent(t);
        EntityView {
            vruntime: e.vruntime.load(Relaxed),
            deadline: e.deadline.load(Relaxed),
            vlag: e.vlag.load(Relaxed),
            weight: e.weight.load(Relaxed),
            sum_exec: e.sum_exec.load(Relaxed),
            delayed: e.delayed.load(Relaxed),
            rt: self.is_rt(t),
            queued: self.common.tasks.get(t).on_rq(),
        }
    }

    /// Observation (uncharged): CPU `cpu`'s run queue.
    pub fn rq_view(&self, cpu: CpuId) -> RqView {
        self.rqs[cpu].inspect(|rq| {
            let (avg_sum, avg_load) = self.avg_parts(rq);
            RqView {
                nr_running: rq.nr_running,
                nr_delayed: rq.nr_delayed,
                load: rq.load,
                curr: rq.curr,
                order: rq.tree.iter().map(|&(_, t)| t).collect(),
                avg_sum,
                avg_load,
                avg_vruntime: self.avg_vruntime(rq),
                nr_switches: rq.nr_switches,
            }
        })
    }

    fn ent(&self, t: TaskId) -> &Entity {
        &self.se[t as usize]
    }
    fn is_rt(&self, t: TaskId) -> bool {
        self.common.tasks.get(t).class().is_rt()
    }
    fn weight(&self, t: TaskId) -> u64 {
        self.ent(t).weight.load(Relaxed)
    }
    fn vruntime(&self, t: TaskId) -> u64 {
        self.ent(t).vruntime.load(Relaxed)
    }
    fn deadline(&self, t: TaskId) -> u64 {
        self.ent(t).deadline.load(Relaxed)
    }
    fn delayed(&self, t: TaskId) -> bool {
        self.ent(t).delayed.load(Relaxed)
    }
    /// `calc_delta_fair(slice)` for `t`.
    fn vslice(&self, t: TaskId) -> u64 {
        calc_delta_fair(self.slice, self.weight(t))
    }

    // ---- virtual time (the queue's lock is held; uncharged arithmetic) ---------------

    /// The running task if it is a fair one.
    fn curr_fair(&self, rq: &Runqueue) -> Option<TaskId> {
        rq.curr.filter(|&c| !self.is_rt(c))
    }

    /// `Σ vᵢ·wᵢ` and `Σ wᵢ` over the queue's fair entities, the running one included.
    fn avg_parts(&self, rq: &Runqueue) -> (u128, u64) {
        let (mut sum, mut load) = (rq.sum_vw, rq.sum_w);
        if let Some(c) = self.curr_fair(rq) {
            let w = self.weight(c);
            sum += self.vruntime(c) as u128 * w as u128;
            load += w;
        }
        (sum, load)
    }

    /// `avg_vruntime`: `V`, rounded down (the kernel's left bias: an entity at `V` is
    /// eligible).
    fn avg_vruntime(&self, rq: &Runqueue) -> u64 {
        match self.avg_parts(rq) {
            (_, 0) => rq.zero_vruntime,
            (sum, load) => (sum / load as u128) as u64,
        }
    }

    /// `vruntime_eligible`: `Σ vᵢ·wᵢ ≥ v · Σ wᵢ`.
    fn vruntime_eligible(&self, rq: &Runqueue, v: u64) -> bool {
        let (sum, load) = self.avg_parts(rq);
        load == 0 || sum >= v as u128 * load as u128
    }

    /// `entity_lag`: `V − v`, clamped to ±`calc_delta_fair(max(2·slice, TICK_NSEC))`.
    fn entity_lag(&self, rq: &Runqueue, t: TaskId) -> i64 {
        let vlag = self.avg_vruntime(rq) as i128 - self.vruntime(t) as i128;
        let limit = calc_delta_fair((2 * self.slice).max(self.tick_ns), self.weight(t)) as i128;
        vlag.clamp(-limit, limit) as i64
    }

    /// `update_zero_vruntime`, after the tree changed.
    fn update_zero(&self, rq: &mut Runqueue) {
        if self.avg_parts(rq).1 > 0 {
            rq.zero_vruntime = self.avg_vruntime(rq);
        }
    }

    /// Run-to-parity's protection of the running `t`: picked, and its deadline not
    /// renewed since.
    fn protected(&self, t: TaskId) -> bool {
        let e = self.ent(t);
        e.protect.load(Relaxed) == e.deadline.load(Relaxed)
    }

    // ---- queue primitives -------------------------------------------------------------

    fn clock(&self, p: &P, rq: &mut Runqueue) -> u64 {
        rq.clock = rq.clock.max(p.task_clock(rq.cpu));
        rq.clock
    }

    fn publish(&self, rq: &Runqueue) {
        self.common.publish_len(rq.cpu, rq.nr_running);
        self.load[rq.cpu].store(rq.load, Relaxed);
    }

    /// Link the runnable `t` on `rq` (counted; not in a tree yet).
    fn account_add(&self, rq: &mut Runqueue, t: TaskId) {
        let ts = self.common.tasks.get(t);
        ts.set_on_rq(Some(rq.cpu));
        ts.set_processor(rq.cpu);
        rq.nr_running += 1;
        rq.load += self.weight(t);
        self.publish(rq);
    }

    /// Unlink the runnable `t` from `rq` (already out of its tree, or running).
    fn account_sub(&self, rq: &mut Runqueue, t: TaskId) {
        self.common.tasks.get(t).set_on_rq(None);
        rq.nr_running -= 1;
        rq.load -= self.weight(t);
        self.publish(rq);
    }

    /// `__enqueue_entity`: `t` into its tree (and, if fair, into the averages).
    fn tree_insert(&self, p: &P, rq: &mut Runqueue, t: TaskId) {
        p.charge(Work::TreeOp);
        p.touch(Line::Tree(rq.cpu), Access::Write);
        if self.is_rt(t) {
            rq.rt.insert((rt_key(self.common.tasks.get(t).rt_priority()), t));
        } else {
            let w = self.weight(t);
            rq.tree.insert((self.deadline(t), t));
            rq.sum_vw += self.vruntime(t) as u128 * w as u128;
            rq.sum_w += w;
            self.update_zero(rq);
        }
    }

    /// `__dequeue_entity`.
    fn tree_remove(&self, p: &P, rq: &mut Runqueue, t: TaskId) -> bool {
        p.charge(Work::TreeOp);
        p.touch(Line::Tree(rq.cpu), Access::Write);
        if self.is_rt(t) {
            return rq.rt.remove(&(rt_key(self.common.tasks.get(t).rt_priority()), t));
        }
        if !rq.tree.remove(&(self.deadline(t), t)) {
            return false;
        }
        let w = self.weight(t);
        rq.sum_vw -= self.vruntime(t) as u128 * w as u128;
        rq.sum_w -= w;
        self.update_zero(rq);
        true
    }

    /// `update_curr` and `update_deadline`: charge the running task its time since it
    /// was last accounted; renew its deadline once its vruntime reaches it. Returns
    /// whether it should be rescheduled: its slice is used up, or (run-to-parity's
    /// other half) it is unprotected and no longer eligible — and another fair entity
    /// is queued.
    fn update_curr(&self, p: &P, rq: &mut Runqueue) -> bool {
        let now = self.clock(p, rq);
        let Some(c) = rq.curr else { return false };
        let e = self.ent(c);
        let start = e.exec_start.load(Relaxed);
        if now <= start {
            return false;
        }
        let delta = now - start;
        p.charge(Work::Recalc);
        p.touch(Line::Task(c), Access::Write);
        e.sum_exec.store(e.sum_exec.load(Relaxed) + delta, Relaxed);
        e.exec_start.store(now, Relaxed);
        if self.is_rt(c) {
            return false;
        }
        let w = e.weight.load(Relaxed);
        let v = e.vruntime.load(Relaxed).saturating_add(calc_delta_fair(delta, w));
        e.vruntime.store(v, Relaxed);
        let mut resched = false;
        if v >= e.deadline.load(Relaxed) {
            e.deadline.store(v.saturating_add(calc_delta_fair(self.slice, w)), Relaxed);
            resched = true;
        }
        if rq.tree.is_empty() {
            return false;
        }
        resched || (!self.protected(c) && !self.vruntime_eligible(rq, v))
    }

    /// `place_entity`: `t`'s vruntime and deadline as it joins `rq` (not yet counted
    /// there). `initial`: its first enqueue after fork. `rel_deadline`: the deadline
    /// relative to the vruntime it keeps across a migration (`PLACE_REL_DEADLINE`).
    fn place(&self, p: &P, rq: &Runqueue, t: TaskId, initial: bool, rel_deadline: Option<u64>) {
        p.charge(Work::Recalc);
        let e = self.ent(t);
        let w = e.weight.load(Relaxed);
        let v_avg = self.avg_vruntime(rq);
        let mut lag: i128 = 0;
        let load = self.avg_parts(rq).1;
        // Only among other fair entities (the kernel's `cfs_rq->nr_running`): alone,
        // a task has no one to be ahead of or behind.
        if self.cfg.place_lag && load > 0 {
            // Inflate the lag so that after t's own weight joins the average its lag
            // comes out as it left (the kernel's derivation in place_entity); integer
            // division truncates toward zero, as div_s64.
            lag = e.vlag.load(Relaxed) as i128 * (load + w) as i128 / load as i128;
        }
        let v = (v_avg as i128 - lag).clamp(0, u64::MAX as i128) as u64;
        e.vruntime.store(v, Relaxed);
        let vslice = calc_delta_fair(self.slice, w);
        let d = match rel_deadline {
            Some(rel) => v.saturating_add(rel),
            None if initial && self.cfg.place_deadline_initial => v.saturating_add(vslice / 2),
            None => v.saturating_add(vslice),
        };
        e.deadline.store(d, Relaxed);
    }

    /// `enqueue_entity` of a runnable `t` not linked anywhere.
    fn enqueue(&self, p: &P, rq: &mut Runqueue, t: TaskId, initial: bool, rel_deadline: Option<u64>) {
        p.touch(Line::Task(t), Access::Write);
        if !self.is_rt(t) {
            self.place(p, rq, t, initial, rel_deadline);
        }
        self.account_add(rq, t);
        self.tree_insert(p, rq, t);
    }

    /// The fair part of `dequeue_entity` for a waiting (not running) `t`: its lag, then
    /// out of the tree. Returns its deadline relative to its vruntime.
    fn dequeue_waiting(&self, p: &P, rq: &mut Runqueue, t: TaskId) -> u64 {
        p.charge(Work::Recalc);
        let e = self.ent(t);
        if !self.is_rt(t) {
            e.vlag.store(self.entity_lag(rq, t), Relaxed);
        }
        self.tree_remove(p, rq, t);
        e.deadline.load(Relaxed).saturating_sub(e.vruntime.load(Relaxed))
    }

    /// A delayed entity leaves for good (picked, or nothing runnable is left):
    /// `dequeue_entity(DEQUEUE_DELAYED)` with `DELAY_ZERO`.
    fn finish_delayed(&self, p: &P, rq: &mut Runqueue, t: TaskId) {
        p.touch(Line::Task(t), Access::Write);
        self.dequeue_waiting(p, rq, t);
        let e = self.ent(t);
        if e.vlag.load(Relaxed) > 0 {
            e.vlag.store(0, Relaxed);
        }
        e.delayed.store(false, Relaxed);
        rq.nr_delayed -= 1;
    }

    /// `requeue_delayed_entity`: the delayed `t` is woken where it waits. A positive
    /// lag is clipped to 0 and the task placed again; a negative one is kept.
    fn requeue_delayed(&self, p: &P, rq: &mut Runqueue, t: TaskId) {
        p.charge(Work::Recalc);
        let e = self.ent(t);
        e.vlag.store(self.entity_lag(rq, t), Relaxed);
        if e.vlag.load(Relaxed) > 0 {
            self.tree_remove(p, rq, t);
            e.vlag.store(0, Relaxed);
            self.place(p, rq, t, false, None);
            self.tree_insert(p, rq, t);
        }
        e.delayed.store(false, Relaxed);
        rq.nr_delayed -= 1;
        let ts = self.common.tasks.get(t);
        ts.set_on_rq(Some(rq.cpu));
        rq.nr_running += 1;
        rq.load += e.weight.load(Relaxed);
        self.publish(rq);
        self.delayed_requeues.fetch_add(1, Relaxed);
    }

    /// `pick_eevdf` among the waiting fair entities and `curr` (the running fair task,
    /// if it competes): the eligible one with the earliest deadline; `curr` on a tie
    /// only if nothing waiting is eligible. With run-to-parity, an eligible protected
    /// `curr` is kept.
    fn pick_eevdf(&self, p: &P, rq: &Runqueue, curr: Option<TaskId>) -> Option<TaskId> {
        p.charge(Work::Goodness);
        let curr = curr.filter(|&c| {
            p.touch(Line::Task(c), Access::Read);
            self.vruntime_eligible(rq, self.vruntime(c))
        });
        if let Some(c) = curr {
            if self.cfg.run_to_parity && self.protected(c) {
                return Some(c);
            }
        }
        let best = rq.tree.iter().map(|&(_, t)| t).find(|&t| {
            p.charge(Work::Examine);
            p.touch(Line::Task(t), Access::Read);
            self.vruntime_eligible(rq, self.vruntime(t))
        });
        match (best, curr) {
            (Some(b), Some(c)) if self.deadline(c) < self.deadline(b) => Some(c),
            (None, c) => c,
            (b, _) => b,
        }
    }

    /// `set_next_entity`: `t` (out of its tree) runs.
    fn set_next(&self, p: &P, rq: &mut Runqueue, t: TaskId) {
        p.touch(Line::Task(t), Access::Write);
        let e = self.ent(t);
        e.exec_start.store(rq.clock, Relaxed);
        e.prev_sum_exec.store(e.sum_exec.load(Relaxed), Relaxed);
        e.protect.store(e.deadline.load(Relaxed), Relaxed);
        rq.curr = Some(t);
    }

    /// `pick_next_task_fair` after prev was accounted and put: a waiting real-time task
    /// first; else the EEVDF pick among the waiting entities and `keep` (a runnable
    /// fair prev still running). A delayed entity picked leaves and the pick repeats.
    fn pick_next(&self, p: &P, rq: &mut Runqueue, keep: Option<TaskId>) -> Option<TaskId> {
        let mut keep = keep;
        loop {
            if let Some(&(_, t)) = rq.rt.first() {
                p.charge(Work::Goodness);
                if let Some(k) = keep.take() {
                    rq.curr = None;
                    self.tree_insert(p, rq, k);
                }
                self.tree_remove(p, rq, t);
                self.set_next(p, rq, t);
                return Some(t);
            }
            let cand = self.pick_eevdf(p, rq, keep);
            if cand.is_some() && cand == keep {
                return cand;
            }
            if let Some(k) = keep.take() {
                rq.curr = None;
                self.tree_insert(p, rq, k);
            }
            let t = cand?;
            if self.delayed(t) {
                self.finish_delayed(p, rq, t);
                continue;
            }
            self.tree_remove(p, rq, t);
            self.set_next(p, rq, t);
            return Some(t);
        }
    }

    /// `prev` leaves the CPU (`rq.curr`): back into its tree if runnable and real-time
    /// (a runnable fair prev competes as `curr` in the pick instead); delayed if it
    /// blocks while not eligible; otherwise off the queue with its lag.
    fn put_prev(&self, p: &P, rq: &mut Runqueue, t: TaskId, state: PrevState) -> Option<TaskId> {
        p.touch(Line::Task(t), Access::Write);
        if rq.curr != Some(t) {
            // Not running here (never picked since it was queued): only a task leaving
            // is unlinked.
            if state != PrevState::Runnable
                && self.common.tasks.get(t).on_rq() == Some(rq.cpu)
                && !self.delayed(t)
                && self.tree_remove(p, rq, t)
            {
                self.account_sub(rq, t);
            }
            return None;
        }
        let fair = !self.is_rt(t);
        if state == PrevState::Runnable {
            if fair {
                return Some(t);
            }
            rq.curr = None;
            self.tree_insert(p, rq, t);
            return None;
        }
        if fair {
            p.charge(Work::Recalc);
            let e = self.ent(t);
            if state == PrevState::Blocked
                && self.cfg.delay_dequeue
                && !self.vruntime_eligible(rq, e.vruntime.load(Relaxed))
            {
                // DELAY_DEQUEUE: it stays in the competition until picked or woken.
                self.account_sub(rq, t);
                rq.curr = None;
                e.delayed.store(true, Relaxed);
                rq.nr_delayed += 1;
                self.tree_insert(p, rq, t);
                self.delayed_dequeues.fetch_add(1, Relaxed);
                return None;
            }
            e.vlag.store(self.entity_lag(rq, t), Relaxed);
        }
        rq.curr = None;
        self.account_sub(rq, t);
        self.update_zero(rq);
        None
    }

    /// Every delayed entity leaves, in pick order (the queue has nothing runnable: the
    /// kernel's pick would choose and dequeue each in turn).
    fn purge_delayed(&self, p: &P, rq: &mut Runqueue) {
        while rq.nr_delayed > 0 {
            match self.pick_eevdf(p, rq, None) {
                Some(t) => self.finish_delayed(p, rq, t),
                None => break,
            }
        }
    }

    /// `check_preempt_wakeup_fair` for `t`, just queued on `rq` (whose running task is
    /// accounted): kick an idle CPU; preempt a fair running task if `t` is now the
    /// pick. A real-time task preempts a fair one and is never preempted by one.
    fn check_preempt(&self, p: &P, rq: &Runqueue, t: TaskId) {
        match rq.curr {
            None => p.resched(rq.cpu),
            Some(c) if c != t => {
                p.touch(Line::Task(c), Access::Read);
                let preempt = match (self.is_rt(c), self.is_rt(t)) {
                    (true, _) => false,
                    (false, true) => true,
                    (false, false) => self.pick_eevdf(p, rq, Some(c)) == Some(t),
                };
                if preempt {
                    self.wakeup_preemptions.fetch_add(1, Relaxed);
                    p.resched(rq.cpu);
                }
            }
            Some(_) => {}
        }
    }

    // ---- invariants ------------------------------------------------------------------

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
        let (mut count, mut load, mut delayed) = (0usize, 0u64, 0usize);
        let (mut sum_vw, mut sum_w) = (0u128, 0u64);
        for &(key, t) in &rq.tree {
            claim(t)?;
            let ts = tasks.get(t);
            if self.is_rt(t) {
                return Err(format!("real-time task {t} in queue {cpu}'s fair tree"));
            }
            if self.deadline(t) != key {
                return Err(format!("task {t} queued on {cpu} at deadline {key} but has {}", self.deadline(t)));
            }
            if ts.processor() != cpu || !ts.live() || ts.has_cpu() || !ts.cpus_allowed().contains(cpu) {
                return Err(format!(
                    "task {t} queued on {cpu}: processor {}, live {}, has_cpu {}",
                    ts.processor(),
                    ts.live(),
                    ts.has_cpu()
                ));
            }
            let w = self.weight(t);
            sum_vw += self.vruntime(t) as u128 * w as u128;
            sum_w += w;
            if self.delayed(t) {
                if ts.on_rq().is_some() {
                    return Err(format!("delayed task {t} on {cpu} claims queue {:?}", ts.on_rq()));
                }
                delayed += 1;
            } else {
                if ts.on_rq() != Some(cpu) {
                    return Err(format!("task {t} queued on {cpu} but on_rq {:?}", ts.on_rq()));
                }
                count += 1;
                load += w;
            }
        }
        for &(key, t) in &rq.rt {
            claim(t)?;
            let ts = tasks.get(t);
            if !self.is_rt(t) || key != rt_key(ts.rt_priority()) {
                return Err(format!("task {t} in queue {cpu}'s real-time set at key {key}"));
            }
            if ts.on_rq() != Some(cpu) || ts.processor() != cpu || !ts.live() || ts.has_cpu() {
                return Err(format!("real-time task {t} queued on {cpu}: on_rq {:?}", ts.on_rq()));
            }
            count += 1;
            load += self.weight(t);
        }
        if let Some(c) = rq.curr {
            claim(c)?;
            let ts = tasks.get(c);
            if ts.on_rq() != Some(cpu) || !ts.has_cpu() || !ts.live() || self.delayed(c) {
                return Err(format!("cpu {cpu} runs task {c}: on_rq {:?}, has_cpu {}", ts.on_rq(), ts.has_cpu()));
            }
            count += 1;
            load += self.weight(c);
        }
        if rq.curr != self.common.cpu(cpu).curr() {
            return Err(format!("cpu {cpu}: queue curr {:?}, cpu curr {:?}", rq.curr, self.common.cpu(cpu).curr()));
        }
        if count != rq.nr_running || count != self.common.queue_len(cpu) || delayed != rq.nr_delayed {
            return Err(format!(
                "cpu {cpu}: {count} runnable and {delayed} delayed linked, nr_running {}, published {}, nr_delayed {}",
                rq.nr_running,
                self.common.queue_len(cpu),
                rq.nr_delayed
            ));
        }
        if load != rq.load || load != self.load[cpu].load(Relaxed) {
            return Err(format!(
                "cpu {cpu}: weights sum to {load}, load {}, published {}",
                rq.load,
                self.load[cpu].load(Relaxed)
            ));
        }
        if sum_vw != rq.sum_vw || sum_w != rq.sum_w {
            return Err(format!("cpu {cpu}: tree sums Σvw {sum_vw}, Σw {sum_w}; kept {} and {}", rq.sum_vw, rq.sum_w));
        }
        Ok(())
    }
}

impl<P: Platform> Balance<P> for Eevdf<P> {
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
        self.load[cpu].load(Relaxed)
    }
    fn nr_running(rq: &Runqueue) -> usize {
        rq.nr_running
    }
    fn rq_clock(rq: &Runqueue) -> u64 {
        rq.clock
    }
    /// The real-time tasks first, then the fair entities in deadline order.
    fn first_waiting(&self, rq: &Runqueue, mut ok: impl FnMut(TaskId) -> bool) -> Option<TaskId> {
        rq.rt.iter().chain(rq.tree.iter()).map(|&(_, t)| t).find(|&t| ok(t))
    }
    fn weight(&self, t: TaskId) -> u64 {
        Eevdf::weight(self, t)
    }
    fn exec_start(&self, t: TaskId) -> u64 {
        self.ent(t).exec_start.load(Relaxed)
    }
    /// A delayed entity stays where it waits.
    fn may_leave(&self, t: TaskId) -> bool {
        !self.delayed(t)
    }

    /// Move the waiting `t` from `there` to `here`, keeping its lag and its relative
    /// deadline.
    fn move_task(&self, p: &P, here: &mut Runqueue, there: &mut Runqueue, t: TaskId) {
        p.touch(Line::Task(t), Access::Write);
        let rel = self.dequeue_waiting(p, there, t);
        self.account_sub(there, t);
        if self.is_rt(t) {
            self.account_add(here, t);
            self.tree_insert(p, here, t);
        } else {
            self.enqueue(p, here, t, false, Some(rel));
        }
        self.pulled.fetch_add(1, Relaxed);
    }
    fn sync_clock(&self, p: &P, rq: &mut Runqueue) {
        self.clock(p, rq);
    }
    fn account_curr(&self, p: &P, rq: &mut Runqueue) {
        if self.update_curr(p, rq) {
            p.resched(rq.cpu);
        }
    }
    fn check_preempt(&self, p: &P, rq: &Runqueue, t: TaskId) {
        Eevdf::check_preempt(self, p, rq, t)
    }
}

impl<P: Platform> Policy<P> for Eevdf<P> {
    fn name(&self) -> &str {
        Kind::NAME
    }
    fn tasks(&self) -> &TaskTable {
        &self.common.tasks
    }

    /// `sched_fork`: weight from the nice level, no lag; placed by its first wake-up.
    fn task_new(&self, p: &P, id: TaskId, params: &TaskParams, _parent: Option<TaskId>) {
        let cpu = self.common.fork_cpu(p, params);
        p.touch(Line::Task(id), Access::Write);
        self.common.tasks.init(id, params, cpu, 0);
        let e = self.ent(id);
        e.weight.store(nice_to_weight(params.nice), Relaxed);
        e.vruntime.store(FAIR_EPOCH, Relaxed);
        e.deadline.store(FAIR_EPOCH, Relaxed);
        e.vlag.store(0, Relaxed);
        e.sum_exec.store(0, Relaxed);
        e.prev_sum_exec.store(0, Relaxed);
        e.exec_start.store(0, Relaxed);
        e.protect.store(0, Relaxed);
        e.delayed.store(false, Relaxed);
        e.forked.store(true, Relaxed);
        self.wakeups.task_new(id, p.now());
    }

    /// `try_to_wake_up`: a delayed task is requeued where it waits (`ttwu_runnable`);
    /// otherwise choose a CPU (the placement shared with `cfs`, `Balance::wake_cpu`), place the task
    /// there with its lag, and kick or preempt.
    fn wake_up(&self, p: &P, id: TaskId, sync: bool) {
        p.charge(Work::WakeupEntry);
        p.touch(Line::Task(id), Access::Read);
        let ts = self.common.tasks.get(id);
        if !ts.live() {
            return;
        }
        if self.delayed(id) {
            let cpu = ts.processor();
            let done = self.rqs[cpu].with(p, |rq| {
                p.touch(Line::Queue(cpu), Access::Write);
                // The pick may have dequeued it since: then it is woken as any other.
                if !self.delayed(id) {
                    return false;
                }
                if self.update_curr(p, rq) {
                    p.resched(cpu);
                }
                self.requeue_delayed(p, rq, id);
                self.check_preempt(p, rq, id);
                true
            });
            if done {
                return;
            }
        }
        if ts.on_rq().is_some() {
            return;
        }
        let prev = ts.processor();
        let forked = self.ent(id).forked.swap(false, Relaxed);
        let target = self.wake_cpu(p, id, prev, sync, forked);
        self.rqs[target].with(p, |rq| {
            p.touch(Line::Queue(target), Access::Write);
            if self.update_curr(p, rq) {
                p.resched(target);
            }
            self.enqueue(p, rq, id, forked, None);
            self.check_preempt(p, rq, id);
            self.domains.note_wakeup(target, rq.clock);
        });
    }

    /// `schedule()`: account the running task, put it (back, delayed, or off), pick.
    /// A queue with nothing runnable first lets its delayed entities go, finishes the
    /// switch to idle, pulls one task from the busiest queue and picks again.
    fn schedule(&self, p: &P, prev: Option<TaskId>, prev_state: PrevState) -> Option<TaskId> {
        p.charge(Work::ScheduleEntry);
        let cpu = p.this_cpu();
        let mut balanced = self.common.ncpus() < 2;
        let mut leaving = prev;
        loop {
            let picked = self.rqs[cpu].with(p, |rq| {
                p.touch(Line::Queue(cpu), Access::Write);
                self.update_curr(p, rq);
                let keep = match leaving {
                    Some(t) => self.put_prev(p, rq, t, prev_state),
                    None => None,
                };
                if rq.nr_running == 0 {
                    self.purge_delayed(p, rq);
                    if !balanced {
                        rq.curr = None;
                        self.common.switch_to(p, leaving.take(), prev_state, None);
                        return None;
                    }
                }
                let next = self.pick_next(p, rq, keep);
                if next != leaving {
                    rq.nr_switches += 1;
                }
                if next.is_none() {
                    rq.curr = None;
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

    /// `task_tick_fair`: account the running task; reschedule once its slice is used
    /// up (or it fell behind unprotected) and another entity is queued.
    fn tick(&self, p: &P, curr: Option<TaskId>) -> bool {
        p.charge(Work::Tick);
        let Some(t) = curr else { return false };
        let cpu = p.this_cpu();
        self.rqs[cpu].with(p, |rq| {
            p.touch(Line::Queue(cpu), Access::Write);
            rq.curr == Some(t) && self.update_curr(p, rq)
        })
    }

    /// `yield_task_fair`: if another task is runnable here, an eligible yielder gives up
    /// the rest of its request (vruntime to its deadline, deadline one slice on) and
    /// its CPU reschedules. A real-time yielder only reschedules.
    fn yield_now(&self, p: &P, curr: TaskId) {
        common::with_task_queue(p, &self.common.tasks, &self.rqs, curr, |rq| {
            if rq.curr != Some(curr) || rq.nr_running < 2 {
                return;
            }
            p.touch(Line::Task(curr), Access::Write);
            self.update_curr(p, rq);
            if !self.is_rt(curr) && self.vruntime_eligible(rq, self.vruntime(curr)) {
                let e = self.ent(curr);
                let d = e.deadline.load(Relaxed);
                e.vruntime.store(d, Relaxed);
                e.deadline.store(d.saturating_add(self.vslice(curr)), Relaxed);
            }
            p.resched(rq.cpu);
        });
    }

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
        let mut v = vec![
            ("pulled", self.pulled()),
            ("wakeup_preemptions", self.wakeup_preemptions()),
            ("delayed_dequeues", self.delayed_dequeues()),
            ("delayed_requeues", self.delayed_requeues.load(Relaxed)),
        ];
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
            let t = t as TaskId;
            let claimed = tasks.get(t).on_rq();
            if claimed.is_some() && s.is_none() {
                return Err(format!("task {t} claims queue {claimed:?} but is on none").into());
            }
            if self.delayed(t) && s.is_none() {
                return Err(format!("task {t} is delayed but on no queue").into());
            }
        }
        Ok(())
    }
}
