//! PMQS: the pooled multi-queue scheduler and its load balancers (S1, S2 in
//! docs/sources.md; docs/policies.md, "pmqs").
//!
//! PMQS is MQS with every loop over "all CPUs" restricted to the invoking CPU's
//! *pool* of contiguous CPU ids (`first_cpu..=last_cpu` in the patch's
//! `aligned_data`). That restriction lives in [`Mqs`] itself ([`Mqs::with_pool`],
//! [`Mqs::pool_of`]): `schedule()` phase 2 examines only the remote queues of this
//! CPU's pool, and `reschedule_idle()` only the CPUs of the woken task's pool. Plain
//! MQS is the pool size `ncpus`. This file is the thin layer on top: pool
//! configuration and the balancers, the only way a task crosses a pool boundary
//! (apart from `cpus_allowed` forcing it: a task not allowed anywhere in its pool is
//! placed on its first allowed CPU, as in MQS).
//!
//! The balancers' definitions are [UNKNOWN] in the recovered sources; the readings
//! chosen here (see also `docs/policies.md`, section "balancer"):
//!
//! * **LBOFF** — no balancing.
//! * **IP** (initial placement) — on fork, the new task is put on the least-loaded pool
//!   (sum of `nt_running` of its queues; ties keep the forking CPU's pool, then the
//!   lowest pool), then on the least-loaded allowed CPU of that pool (ties: the
//!   forking CPU, then the lowest id). No migration afterwards.
//! * **LBP-x** (periodic) — with `reading=period` (default) x is a period in ms: the
//!   balancer is global, driven by the timer tick ([`Policy::balance`] is called on
//!   every tick of every CPU); the first CPU whose tick finds that x ms have passed
//!   since the last pass claims the pass (an atomic compare-exchange on the time of the
//!   last pass) and runs it. With `reading=threshold` x is an imbalance threshold in %:
//!   a pass is attempted once per tick period (same claiming) and moves tasks only
//!   while the longest queue exceeds the average length by more than x %.
//! * **LBC** (continuous, event-driven) — a pass runs (1) when `schedule()` is about to
//!   leave a CPU idle: a *pull* pass towards this CPU, after which the CPU schedules
//!   again so that a pulled task runs at once; and (2) after an enqueue (wakeup or fork
//!   placement) that leaves the task's queue with at least 2 tasks, i.e. a queue length
//!   change that can create an imbalance: a global pass.
//!
//! **A pass** reads every queue's `nt_running` locklessly (one `Work::Examine` and a
//! read of the queue line each), then repeatedly picks the (source, destination) pair
//! of queues in *different* pools whose lengths differ most (for each source the
//! shortest queue outside its pool; the destination is fixed for a pull pass) and, if
//! they differ by at least 2, moves half the difference — toward the
//! average — of the source's non-running tasks allowed on the destination
//! ([`Mqs::migrate`]: both queue locks in ascending order, a `ListOp` per list
//! operation, task lines touched). A source that yields no movable task is skipped;
//! the pass stops after `ncpus` rounds. By default (`scope=pools`) a pass never moves
//! tasks inside a pool, which is left to MQS's own phase-2 stealing, so with one pool
//! it does nothing; with `scope=queues` it evens out every pair of run queues, in the
//! pool or not (S2 says only that the balancer moves processes between run queues to
//! even out their lengths; docs/policies.md, "balancer"). Every move makes the length
//! vector strictly more even, so passes cannot ping-pong.
//!
//! Which locks a pass takes is a reading too (`locks=`): by default (`pair`) it reads
//! the lengths locklessly and each move locks its two queues; with `locks=all` it takes
//! every run queue's lock in ascending order before reading the lengths and holds them
//! all until its last move ([`Mqs::with_all_queues`]), so that no queue changes while it
//! looks. Both make the same moves on the same lengths.
//!
//! The counters `balancer_ns` (virtual time inside passes, lock waits included),
//! `pull_passes` and `pull_moves` (LBC's trigger 1) are observations: their clock
//! reads are [`Platform::observe_now`], which the simulator does not charge.

use crate::common::Opts24;
use crate::cpu::{CpuId, Topology, MAX_CPUS};
use crate::options::{Options, Param, Value};
use crate::platform::{Access, Line, Platform};
use crate::policies::mqs::Mqs;
use crate::policies::{BuildEnv, PolicyKind};
use crate::policy::{InvariantViolation, Policy, PrevState};
use crate::spec::SpecError;
use crate::task::{TaskId, TaskParams, TaskTable};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The registry entry:
/// `pmqs[:pool=P,lb=off|ip|lbp|lbc,period=X,reading=period|threshold,scope=pools|queues,locks=pair|all,preempt_threshold=N]`.
pub struct Kind;

impl PolicyKind for Kind {
    const NAME: &'static str = "pmqs";
    const SUMMARY: &'static str = "MQS in pools of CPUs, with a load balancer between pools (LBOFF, IP, LBP-x, LBC)";
    /// One pool per CPU balanced every 10 ms: on the 2-worker runtime of `bench` and
    /// `validate`, the only pool size at which PMQS differs from MQS.
    const EXAMPLE: &'static str = "pmqs:pool=1,lb=lbp,period=10";
    type Config = PmqsConfig;

    fn build<P: Platform>(cfg: &PmqsConfig, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError> {
        Ok(Box::new(Pmqs::new(p, env.topo, env.capacity, env.hz, *cfg)?))
    }
}

/// A PMQS load balancer (the definitions are [UNKNOWN] in the sources,
/// these are the acronym readings, see `docs/policies.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Balancer {
    /// LBOFF: pools, no balancing.
    Off,
    /// IP: initial placement of new tasks on the least-loaded pool, then CPU.
    Ip,
    /// LBP-x: periodic balancer (x = `period`).
    Lbp,
    /// LBC: continuous, event-driven balancer.
    Lbc,
}

impl Balancer {
    pub fn name(self) -> &'static str {
        match self {
            Balancer::Off => "off",
            Balancer::Ip => "ip",
            Balancer::Lbp => "lbp",
            Balancer::Lbc => "lbc",
        }
    }
}

/// What LBP's number x (`period=`) means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbReading {
    /// x is the balancing period in milliseconds (default).
    Period,
    /// x is an imbalance threshold in percent; the balancer runs every tick.
    Threshold,
}

impl LbReading {
    pub fn name(self) -> &'static str {
        match self {
            LbReading::Period => "period",
            LbReading::Threshold => "threshold",
        }
    }
}

/// Which run queues a balancer pass evens out (`scope=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbScope {
    /// Queues of different pools only (default): inside a pool MQS's own stealing
    /// is left to act, and with one pool a pass does nothing.
    Pools,
    /// Every pair of run queues, in the pool or not (S2: the balancer moves
    /// processes between run queues to even out their lengths).
    Queues,
}

impl LbScope {
    pub fn name(self) -> &'static str {
        match self {
            LbScope::Pools => "pools",
            LbScope::Queues => "queues",
        }
    }
}

/// Which run-queue locks a balancer pass takes (`locks=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbLocks {
    /// Default: the lengths are read locklessly, and each move locks its two queues.
    Pair,
    /// The pass takes every run queue's lock (ascending order) before it reads the
    /// lengths and holds them all until its last move.
    All,
}

impl LbLocks {
    pub fn name(self) -> &'static str {
        match self {
            LbLocks::Pair => "pair",
            LbLocks::All => "all",
        }
    }
}

/// How a pass moves tasks: `(src, dst, max, note each moved task) -> moved`.
type Mover<'a> = dyn FnMut(usize, usize, usize, &mut dyn FnMut(TaskId)) -> usize + 'a;

/// Default of PMQS's `period` (LBP-45).
pub const DEFAULT_LB_PERIOD: u32 = 45;

impl Options for PmqsConfig {
    const PARAMS: &'static [Param<PmqsConfig>] = &[
        Param::int(
            "pool",
            1,
            MAX_CPUS as i64,
            "CPUs per pool, a divisor of the machine's",
            |c: &Self| c.pool.map_or(Value::Unset, |n| Value::Int(n as i64)),
            |c, v| {
                c.pool = match v {
                    Value::Int(n) => Some(n as usize),
                    _ => None,
                }
            },
        )
        .unset("whole machine (one pool)"),
        Param::choice(
            "lb",
            BALANCERS,
            "balancer between pools: none, initial placement, periodic (LBP-x), continuous",
            |c: &Self| Value::Word(c.lb.name()),
            |c, v| {
                c.lb = match v.word() {
                    "ip" => Balancer::Ip,
                    "lbp" => Balancer::Lbp,
                    "lbc" => Balancer::Lbc,
                    _ => Balancer::Off,
                }
            },
        )
        .aliases(&[("lboff", "off")])
        .always(),
        Param::int(
            "period",
            1,
            1_000_000,
            "LBP's x: the period in ms, or the imbalance threshold in % (reading=threshold)",
            |c: &Self| Value::Int(c.period as i64),
            |c, v| c.period = v.int() as u32,
        )
        .always(),
        Param::choice(
            "reading",
            &["period", "threshold"],
            "what LBP's x (period=) means",
            |c| Value::Word(c.reading.name()),
            |c, v| {
                c.reading = match v.word() {
                    "threshold" => LbReading::Threshold,
                    _ => LbReading::Period,
                }
            },
        ),
        Param::choice(
            "scope",
            &["pools", "queues"],
            "what a balancer pass evens out: queues of different pools, or every run queue",
            |c| Value::Word(c.scope.name()),
            |c, v| {
                c.scope = match v.word() {
                    "queues" => LbScope::Queues,
                    _ => LbScope::Pools,
                }
            },
        ),
        Param::choice(
            "locks",
            &["pair", "all"],
            "run-queue locks a balancer pass takes: the two queues of each move, or all of them for the whole pass",
            |c| Value::Word(c.locks.name()),
            |c, v| {
                c.locks = match v.word() {
                    "all" => LbLocks::All,
                    _ => LbLocks::Pair,
                }
            },
        ),
        Opts24::param(
            |c| Value::Int(c.sched.preempt_threshold as i64),
            |c, v| c.sched.preempt_threshold = v.int() as i32,
        ),
    ];
}

/// The balancers' names, in `lb=` order.
const BALANCERS: &[&str] = &["off", "ip", "lbp", "lbc"];

impl Default for PmqsConfig {
    fn default() -> Self {
        PmqsConfig {
            pool: None,
            lb: Balancer::Off,
            period: DEFAULT_LB_PERIOD,
            reading: LbReading::Period,
            scope: LbScope::Pools,
            locks: LbLocks::Pair,
            sched: Opts24::default(),
        }
    }
}

/// PMQS configuration (the parsed `pmqs:` spec).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PmqsConfig {
    /// CPUs per pool; `None` = the whole machine (one pool).
    pub pool: Option<usize>,
    pub lb: Balancer,
    /// LBP's x: period in ms, or threshold in % (see `reading`).
    pub period: u32,
    pub reading: LbReading,
    /// Which queues a pass evens out (`scope=`).
    pub scope: LbScope,
    /// Which locks a pass takes (`locks=`).
    pub locks: LbLocks,
    /// The options shared with DSS and MQS (`preempt_threshold`).
    pub sched: Opts24,
}

pub struct Pmqs<P: Platform> {
    inner: Mqs<P>,
    cfg: PmqsConfig,
    /// Time (ns) of the last periodic pass.
    last_pass: AtomicU64,
    /// Interval between periodic passes, ns.
    interval_ns: u64,
    /// Tasks moved across pools by the balancer (observation).
    moved: AtomicU64,
    /// Balancer passes run (observation).
    passes: AtomicU64,
    /// Per task: 1 + the time (ns) the balancer last moved it, 0 once it has run since
    /// (observation: how soon a moved task runs, and whether it is moved again first).
    moved_at: Box<[AtomicU64]>,
    /// Moved tasks that then ran, and the sum of their move-to-run delays (ns).
    moved_ran: AtomicU64,
    move_to_run_ns: AtomicU64,
    /// Moves of a task that had been moved and had not run since.
    moved_again: AtomicU64,
    /// Virtual time spent in passes, lock waits included (observation).
    pass_ns: AtomicU64,
    /// Passes that pulled towards an idle CPU (LBC's trigger 1), and their moves.
    pull_passes: AtomicU64,
    pull_moves: AtomicU64,
}

impl<P: Platform> Pmqs<P> {
    /// Fails if the pool size does not divide the CPU count.
    pub fn new(p: &P, topo: &Topology, capacity: usize, hz: u32, cfg: PmqsConfig) -> Result<Self, SpecError> {
        let n = topo.ncpus();
        let pool = cfg.pool.unwrap_or(n);
        if pool == 0 || !n.is_multiple_of(pool) {
            return Err(SpecError(format!(
                "policy 'pmqs': pool={pool} does not divide the machine's {n} CPUs (pool size must be a divisor of {n})"
            )));
        }
        let interval_ns = match cfg.reading {
            LbReading::Period => cfg.period as u64 * 1_000_000,
            LbReading::Threshold => 1_000_000_000 / hz.max(1) as u64,
        };
        Ok(Pmqs {
            inner: Mqs::with_pool(p, topo, capacity, hz, pool, cfg.sched).with_idle_map(),
            cfg,
            last_pass: AtomicU64::new(0),
            interval_ns,
            moved: AtomicU64::new(0),
            passes: AtomicU64::new(0),
            moved_at: (0..capacity).map(|_| AtomicU64::new(0)).collect(),
            moved_ran: AtomicU64::new(0),
            move_to_run_ns: AtomicU64::new(0),
            moved_again: AtomicU64::new(0),
            pass_ns: AtomicU64::new(0),
            pull_passes: AtomicU64::new(0),
            pull_moves: AtomicU64::new(0),
        })
    }

    /// The MQS core.
    pub fn inner(&self) -> &Mqs<P> {
        &self.inner
    }
    pub fn config(&self) -> PmqsConfig {
        self.cfg
    }
    /// Observation: tasks moved by the balancer so far.
    pub fn moved_count(&self) -> u64 {
        self.moved.load(Relaxed)
    }
    /// Observation: balancer passes run so far.
    pub fn pass_count(&self) -> u64 {
        self.passes.load(Relaxed)
    }

    fn ncpus(&self) -> usize {
        self.inner.common().ncpus()
    }

    /// One balancing pass (see the module documentation). `pull_to` fixes the
    /// destination; `threshold` (%) requires the source to exceed the average by more
    /// than that. Returns the number of tasks moved.
    fn pass(&self, p: &P, pull_to: Option<CpuId>, threshold: Option<u32>) -> usize {
        let n = self.ncpus();
        if self.cfg.scope == LbScope::Pools && self.inner.pool_size() == n {
            return 0;
        }
        let start = p.observe_now();
        self.passes.fetch_add(1, Relaxed);
        let moved = match self.cfg.locks {
            LbLocks::Pair => {
                let mut len = [0usize; MAX_CPUS];
                for (q, l) in len.iter_mut().enumerate().take(n) {
                    *l = self.inner.peek_nt_running(p, q);
                }
                self.rounds(p, &mut len, pull_to, threshold, &mut |src, dst, max, note| {
                    self.inner.migrate(p, src, dst, max, pull_to.is_none(), note)
                })
            }
            LbLocks::All => {
                let mut kick = [false; MAX_CPUS];
                let moved = self.inner.with_all_queues(p, |qs| {
                    let mut len = [0usize; MAX_CPUS];
                    for (q, l) in len.iter_mut().enumerate().take(n) {
                        *l = qs.nt_running(p, q);
                    }
                    self.rounds(p, &mut len, pull_to, threshold, &mut |src, dst, max, note| {
                        let m = qs.migrate(p, src, dst, max, note);
                        kick[dst] |= m > 0;
                        m
                    })
                });
                if pull_to.is_none() {
                    for dst in (0..n).filter(|&q| kick[q]) {
                        self.inner.kick_if_idle(p, dst);
                    }
                }
                moved
            }
        };
        self.moved.fetch_add(moved as u64, Relaxed);
        if pull_to.is_some() {
            self.pull_passes.fetch_add(1, Relaxed);
            self.pull_moves.fetch_add(moved as u64, Relaxed);
        }
        self.pass_ns.fetch_add(p.observe_now().saturating_sub(start), Relaxed);
        moved
    }

    /// The rounds of a pass over the queue lengths `len`: pick the pair, move through
    /// `mv(src, dst, max, note)`, keep `len` current. Returns the number of tasks moved.
    fn rounds(
        &self,
        p: &P,
        len: &mut [usize; MAX_CPUS],
        pull_to: Option<CpuId>,
        threshold: Option<u32>,
        mv: &mut Mover<'_>,
    ) -> usize {
        let n = self.ncpus();
        let scope = self.cfg.scope;
        let total: usize = len[..n].iter().sum();
        let mut skip = [false; MAX_CPUS];
        let mut moved = 0;
        for _ in 0..n {
            // The pair with the largest difference (longest source first), across pools
            // (or, with scope=queues, any two queues).
            let mut best: Option<(usize, usize)> = None;
            for src in (0..n).filter(|&q| !skip[q]) {
                let src_pool = self.inner.pool_of(src);
                // The queues `src` may give to: those of other pools, or (scope=queues) all others.
                let target = |q: usize| match scope {
                    LbScope::Pools => !src_pool.contains(&q),
                    LbScope::Queues => q != src,
                };
                let dst = match pull_to {
                    Some(d) if !target(d) => continue,
                    Some(d) => d,
                    None => match (0..n).filter(|&q| target(q)).min_by_key(|&q| (len[q], q)) {
                        Some(d) => d,
                        None => continue,
                    },
                };
                if best.is_none_or(|(s, d)| len[src] as isize - len[dst] as isize > len[s] as isize - len[d] as isize) {
                    best = Some((src, dst));
                }
            }
            let Some((src, dst)) = best else { break };
            if len[src] < len[dst] + 2 {
                break;
            }
            if let Some(x) = threshold {
                // len[src] > avg · (1 + x/100), in integers.
                if (len[src] * n * 100) as u64 <= (100 + x as u64) * total as u64 {
                    break;
                }
            }
            let now = p.now();
            let mut note = |t: TaskId| {
                if self.moved_at[t as usize].swap(now + 1, Relaxed) != 0 {
                    self.moved_again.fetch_add(1, Relaxed);
                }
            };
            let m = mv(src, dst, (len[src] - len[dst]) / 2, &mut note);
            if m == 0 {
                skip[src] = true;
                continue;
            }
            len[src] -= m;
            len[dst] += m;
            moved += m;
        }
        moved
    }

    /// Observation: `t` is about to run; if the balancer moved it since it last ran,
    /// record how long it waited after the move.
    fn note_runs(&self, p: &P, t: TaskId) {
        let at = self.moved_at[t as usize].swap(0, Relaxed);
        if at != 0 {
            self.moved_ran.fetch_add(1, Relaxed);
            self.move_to_run_ns.fetch_add(p.now().saturating_sub(at - 1), Relaxed);
        }
    }

    /// IP: move the just-created task `id` to the least-loaded pool, then CPU.
    fn initial_placement(&self, p: &P, id: TaskId) {
        let n = self.ncpus();
        let pool = self.inner.pool_size();
        let here = p.this_cpu();
        let ts = self.inner.common().tasks.get(id);
        let allowed = ts.cpus_allowed();
        let mut len = [0usize; MAX_CPUS];
        for (q, l) in len.iter_mut().enumerate().take(n) {
            *l = self.inner.peek_nt_running(p, q);
        }
        let home = here / pool;
        let best_pool = (0..n / pool)
            .filter(|&k| (k * pool..(k + 1) * pool).any(|c| allowed.contains(c)))
            .min_by_key(|&k| (len[k * pool..(k + 1) * pool].iter().sum::<usize>(), k != home, k));
        let Some(k) = best_pool else { return };
        let target = (k * pool..(k + 1) * pool)
            .filter(|&c| allowed.contains(c))
            .min_by_key(|&c| (len[c], c != here, c))
            .expect("pool has an allowed CPU");
        if target != ts.processor() {
            p.touch(Line::Task(id), Access::Write);
            ts.set_processor(target);
        }
    }

    /// LBC trigger (2): after an enqueue onto `id`'s queue.
    fn after_enqueue(&self, p: &P, id: TaskId) {
        if self.cfg.lb != Balancer::Lbc {
            return;
        }
        p.touch(Line::Task(id), Access::Read);
        let q = self.inner.common().tasks.get(id).processor();
        if self.inner.peek_nt_running(p, q) >= 2 {
            self.pass(p, None, None);
        }
    }
}

impl<P: Platform> Policy<P> for Pmqs<P> {
    fn name(&self) -> &str {
        Kind::NAME
    }
    fn tasks(&self) -> &TaskTable {
        self.inner.tasks()
    }

    fn task_new(&self, p: &P, id: TaskId, params: &TaskParams, parent: Option<TaskId>) {
        self.inner.task_new(p, id, params, parent);
        if self.cfg.lb == Balancer::Ip {
            self.initial_placement(p, id);
        }
    }

    fn wake_up(&self, p: &P, id: TaskId, sync: bool) {
        self.inner.wake_up(p, id, sync);
        self.after_enqueue(p, id);
    }

    fn schedule(&self, p: &P, prev: Option<TaskId>, prev_state: PrevState) -> Option<TaskId> {
        let mut next = self.inner.schedule(p, prev, prev_state);
        if next.is_none() && self.cfg.lb == Balancer::Lbc && self.pass(p, Some(p.this_cpu()), None) > 0 {
            // LBC trigger (1): pulled work onto this idle CPU; run it now.
            next = self.inner.schedule(p, None, PrevState::Runnable);
        }
        if let Some(t) = next {
            self.note_runs(p, t);
        }
        next
    }

    fn tick(&self, p: &P, curr: Option<TaskId>) -> bool {
        self.inner.tick(p, curr)
    }

    fn yield_now(&self, p: &P, curr: TaskId) {
        self.inner.yield_now(p, curr)
    }

    fn balance(&self, p: &P) {
        if self.cfg.lb != Balancer::Lbp {
            return;
        }
        let now = p.now();
        let last = self.last_pass.load(Relaxed);
        if now < last.saturating_add(self.interval_ns) {
            return;
        }
        // One CPU claims each period.
        if self.last_pass.compare_exchange(last, now, Relaxed, Relaxed).is_err() {
            return;
        }
        let threshold = (self.cfg.reading == LbReading::Threshold).then_some(self.cfg.period);
        self.pass(p, None, threshold);
    }

    fn nr_queues(&self) -> usize {
        self.inner.nr_queues()
    }
    fn task_stats(&self, t: TaskId) -> Vec<(&'static str, u64)> {
        self.inner.common().task_stats24(t)
    }
    fn stats(&self) -> Vec<(&'static str, u64)> {
        let ran = self.moved_ran.load(Relaxed);
        let mut stats = self.inner.common().stats24();
        stats.extend([
            ("balancer_passes", self.pass_count()),
            ("balancer_moves", self.moved_count()),
            ("moved_then_ran", ran),
            ("moved_again_before_running", self.moved_again.load(Relaxed)),
            ("move_to_run_mean_ns", self.move_to_run_ns.load(Relaxed).checked_div(ran).unwrap_or(0)),
            ("balancer_ns", self.pass_ns.load(Relaxed)),
            ("pull_passes", self.pull_passes.load(Relaxed)),
            ("pull_moves", self.pull_moves.load(Relaxed)),
        ]);
        stats
    }
    fn queue_len(&self, q: usize) -> usize {
        self.inner.queue_len(q)
    }
    fn check_invariants(&self) -> Result<(), InvariantViolation> {
        self.inner.check_invariants()
    }
}
