//! What the 2.4-family policies (DSS, MQS, PMQS) share: the task table, per-CPU
//! `aligned_data`, HZ and the published run-queue lengths ([`SchedCommon`]); the body
//! of 2.4's `schedule()` with the hooks where DSS and MQS differ ([`schedule`],
//! [`Hooks24`]); and the run-list invariant checks ([`ListChecker`]).

use crate::cpu::{CpuId, Topology};
use crate::goodness::{nice_to_ticks, recalc_counter, MIN_GOODNESS, PREEMPTION_THRESHOLD};
use crate::options::{Options, Param, Value};
use crate::platform::{Access, Line, Platform, SchedLock, Work};
use crate::policy::{InvariantViolation, PrevState};
use crate::runlist::RunList;
use crate::task::{SchedClass, TaskId, TaskParams, TaskSched, TaskTable, NIL};
use crate::task_state;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};

/// `aligned_data[cpu]` of 2.4 (plus MQS's `curr_na_goodness`).
#[derive(Debug)]
pub struct CpuSched {
    curr: AtomicU32,
    /// Time of the last `schedule()` on this CPU (2.4 keeps TSC cycles; we keep ns).
    pub last_schedule: AtomicU64,
    /// MQS: na_goodness of the running task, MIN_GOODNESS when idle.
    pub curr_na_goodness: AtomicI32,
    /// `active_mm`: the address space loaded on this CPU (the idle task borrows the
    /// last one, as 2.4's lazy TLB does). `this_mm` of goodness().
    pub active_mm: AtomicU32,
}

impl CpuSched {
    /// The running task, `None` when idle.
    #[inline]
    pub fn curr(&self) -> Option<TaskId> {
        match self.curr.load(Relaxed) {
            NIL => None,
            t => Some(t),
        }
    }
    #[inline]
    pub fn set_curr(&self, t: Option<TaskId>) {
        self.curr.store(t.unwrap_or(NIL), Relaxed)
    }
}

/// The options every 2.4-family policy takes (`dss`, `mqs`, and `pmqs` beside its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opts24 {
    /// A woken task preempts a running one when `preemption_goodness > preempt_threshold`
    /// (2.4.7: 1, the default; the 2.5.0 multi-queue RFC: 0).
    pub preempt_threshold: i32,
}

impl Default for Opts24 {
    fn default() -> Opts24 {
        Opts24 { preempt_threshold: PREEMPTION_THRESHOLD }
    }
}

impl Opts24 {
    /// The option's row in an options table, for a struct that holds an `Opts24` at
    /// `opts` (`dss`/`mqs`: the struct itself; `pmqs`: its `sched` field). The range
    /// stops at the RT goodness scale: a larger threshold would only mean "never
    /// preempt", which 1000 already says.
    pub const fn param<T>(get: fn(&T) -> Value, set: fn(&mut T, Value)) -> Param<T> {
        Param::int(
            "preempt_threshold",
            0,
            1000,
            "a woken task preempts when its preemption goodness exceeds this (2.4.7: 1; 2.5.0's multi-queue RFC: 0)",
            get,
            set,
        )
    }
}

/// `dss[:preempt_threshold=N]`, `mqs[:preempt_threshold=N]`.
impl Options for Opts24 {
    const PARAMS: &'static [Param<Opts24>] =
        &[Opts24::param(|o| Value::Int(o.preempt_threshold as i64), |o, v| o.preempt_threshold = v.int() as i32)];
}

/// Common state embedded by each 2.4-family policy.
#[derive(Debug)]
pub struct SchedCommon {
    pub tasks: TaskTable,
    /// One cache line (pair) per CPU, as 2.4's `aligned_data` is `____cacheline_aligned`:
    /// the simulator prices each CPU's as its own line (`Line::CpuData`), and on the
    /// runtime two workers' entries in one line would be false sharing it does not model.
    pub cpus: Box<[CachePadded<CpuSched>]>,
    pub topo: Topology,
    pub hz: u32,
    /// Published run-queue lengths (tasks linked on queue `q`, running or not),
    /// written under the queue's lock, read freely by observers.
    /// Padded like `cpus`: each is a field of its queue's own line in the kernel.
    queue_lens: Box<[CachePadded<AtomicU32>]>,
    /// See [`Opts24::preempt_threshold`]; only the 2.4 family reads it.
    preempt_threshold: i32,
    /// Observations of the 2.4 family (uncharged): counter recalculations, and
    /// wake-ups that made a CPU running another task reschedule (`reschedule_idle`'s
    /// preemption, as opposed to waking an idle CPU).
    recalculations: AtomicU64,
    wakeup_preemptions: AtomicU64,
    /// Observation (uncharged): the counter each task got from `do_fork`, in ticks.
    fork_counter: Box<[AtomicU32]>,
    /// Observation (uncharged), per task: where its counter stood among the others'
    /// at its fork. Empty unless the platform wants observations that scan every
    /// task ([`Platform::observes_task_population`]).
    fork_ahead: Box<[ForkAhead]>,
}

/// Where a new task's counter stood among the other SCHED_OTHER tasks' (queued or
/// asleep, its parent aside) at its fork. Between equal-niced tasks `goodness()` ranks
/// by counter, and no recalculation comes while the child has counter left, so on one
/// busy CPU the child's first run waits until the tasks ahead have run their excess
/// down, as far as they are runnable to spend it; a task level with it wins the tie
/// when it comes first on the list, where every task woken after the fork stands.
#[derive(Debug, Default)]
struct ForkAhead {
    ahead: AtomicU32,
    ticks: AtomicU32,
    level: AtomicU32,
}

impl SchedCommon {
    /// The common state of a policy on platform `p`, whose [`Platform::task_layout`]
    /// lays out the task table. Panics if that layout cannot hold `capacity` tasks:
    /// an engine that asks for a bounded layout checks the capacity first
    /// ([`crate::TaskLayout::check`]) and reports the error itself.
    pub fn new<P: Platform>(p: &P, topo: &Topology, nqueues: usize, capacity: usize, hz: u32) -> SchedCommon {
        let tasks = TaskTable::with_layout(capacity, p.task_layout()).unwrap_or_else(|e| panic!("task table: {e}"));
        SchedCommon {
            tasks,
            cpus: (0..topo.ncpus())
                .map(|_| {
                    CachePadded::new(CpuSched {
                        curr: AtomicU32::new(NIL),
                        last_schedule: AtomicU64::new(0),
                        curr_na_goodness: AtomicI32::new(MIN_GOODNESS),
                        active_mm: AtomicU32::new(0),
                    })
                })
                .collect(),
            topo: topo.clone(),
            hz,
            queue_lens: (0..nqueues).map(|_| CachePadded::new(AtomicU32::new(0))).collect(),
            preempt_threshold: PREEMPTION_THRESHOLD,
            recalculations: AtomicU64::new(0),
            wakeup_preemptions: AtomicU64::new(0),
            fork_counter: (0..capacity).map(|_| AtomicU32::new(0)).collect(),
            fork_ahead: match p.observes_task_population() {
                true => (0..capacity).map(|_| ForkAhead::default()).collect(),
                false => Box::new([]),
            },
        }
    }

    /// This state with the 2.4 family's options.
    pub fn with_opts(mut self, opts: Opts24) -> SchedCommon {
        self.preempt_threshold = opts.preempt_threshold;
        self
    }

    /// `reschedule_idle`'s test, the one place DSS, MQS and PMQS compare against the
    /// threshold: does a woken task whose `preemption_goodness` over the running one is
    /// `prio` replace it?
    #[inline]
    pub fn preempts(&self, prio: i32) -> bool {
        prio > self.preempt_threshold
    }

    /// A woken task is about to preempt the task running on another or this CPU.
    pub fn note_wakeup_preemption(&self) {
        self.wakeup_preemptions.fetch_add(1, Relaxed);
    }

    /// The 2.4 family's observations, for [`crate::Policy::stats`].
    pub fn stats24(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("recalculations", self.recalculations.load(Relaxed)),
            ("wakeup_preemptions", self.wakeup_preemptions.load(Relaxed)),
        ]
    }

    pub fn ncpus(&self) -> usize {
        self.cpus.len()
    }
    pub fn cpu(&self, cpu: CpuId) -> &CpuSched {
        &self.cpus[cpu]
    }
    pub fn queue_len(&self, q: usize) -> usize {
        self.queue_lens[q].load(Relaxed) as usize
    }
    pub fn nr_queues(&self) -> usize {
        self.queue_lens.len()
    }
    pub fn publish_len(&self, q: usize, len: usize) {
        self.queue_lens[q].store(len as u32, Relaxed)
    }

    /// `do_fork`'s scheduler part: the child gets half the parent's remaining
    /// counter (rounded up) and the parent keeps the other half; a task without a
    /// parent starts with a full quantum. The child starts on the forking CPU.
    pub fn task_new<P: Platform>(&self, p: &P, id: TaskId, params: &TaskParams, parent: Option<TaskId>) {
        let counter = match parent {
            Some(par) => {
                p.touch(Line::Task(par), Access::Write);
                let pt = self.tasks.get(par);
                let c = pt.counter();
                pt.set_counter(c >> 1);
                (c + 1) >> 1
            }
            None => nice_to_ticks(params.nice, self.hz),
        };
        p.touch(Line::Task(id), Access::Write);
        self.tasks.init(id, params, self.fork_cpu(p, params), counter);
        if let Some(f) = self.fork_counter.get(id as usize) {
            f.store(counter as u32, Relaxed);
        }
        if let Some(f) = self.fork_ahead.get(id as usize) {
            self.note_counters_ahead(f, counter, id, parent);
        }
    }

    /// Fill `f` from the SCHED_OTHER tasks other than `id` and `parent`: those whose
    /// counter exceeds `counter` (how many, by how many ticks in all) and those level
    /// with it. An uncharged observation.
    fn note_counters_ahead(&self, f: &ForkAhead, counter: i32, id: TaskId, parent: Option<TaskId>) {
        let (mut ahead, mut ticks, mut level) = (0u32, 0u32, 0u32);
        for t in self.tasks.live_ids() {
            let ts = self.tasks.get(t);
            if t == id || Some(t) == parent || ts.class() != SchedClass::Other {
                continue;
            }
            let excess = ts.counter() - counter;
            if excess > 0 {
                ahead += 1;
                ticks += excess as u32;
            } else if excess == 0 {
                level += 1;
            }
        }
        f.ahead.store(ahead, Relaxed);
        f.ticks.store(ticks, Relaxed);
        f.level.store(level, Relaxed);
    }

    /// The 2.4 family's per-task observations ([`crate::Policy::task_stats`]):
    /// `fork_counter_ticks`, the counter `do_fork` gave the task (half its parent's),
    /// `counter_ticks`, its counter now, and, where the platform observes the task
    /// population, at its fork the other tasks whose counter was higher
    /// (`fork_ahead_tasks`), by how much in all (`fork_ahead_ticks`), and those level
    /// with it (`fork_level_tasks`).
    pub fn task_stats24(&self, t: TaskId) -> Vec<(&'static str, u64)> {
        let Some(c) = self.fork_counter.get(t as usize) else { return Vec::new() };
        let mut stats =
            vec![("fork_counter_ticks", c.load(Relaxed) as u64), ("counter_ticks", self.tasks.get(t).counter() as u64)];
        if let Some(f) = self.fork_ahead.get(t as usize) {
            stats.extend([
                ("fork_ahead_tasks", f.ahead.load(Relaxed) as u64),
                ("fork_ahead_ticks", f.ticks.load(Relaxed) as u64),
                ("fork_level_tasks", f.level.load(Relaxed) as u64),
            ]);
        }
        stats
    }

    /// The CPU a new task starts on: the forking CPU if allowed, else the first
    /// allowed CPU.
    pub fn fork_cpu<P: Platform>(&self, p: &P, params: &TaskParams) -> CpuId {
        let cpu = p.this_cpu();
        if params.cpus_allowed.contains(cpu) {
            cpu
        } else {
            (0..self.ncpus()).find(|&c| params.cpus_allowed.contains(c)).unwrap_or(cpu)
        }
    }

    /// `update_process_times` for the running task: decrement the counter and ask for
    /// a reschedule when the quantum is used up. Returns `need_resched`.
    pub fn tick<P: Platform>(&self, p: &P, curr: Option<TaskId>) -> bool {
        p.charge(Work::Tick);
        let Some(t) = curr else { return false };
        p.touch(Line::Task(t), Access::Write);
        let ts = self.tasks.get(t);
        let c = ts.counter() - 1;
        if c <= 0 {
            ts.set_counter(0);
            task_state::touch_state(p, curr, p.this_cpu(), Access::Write);
            true
        } else {
            ts.set_counter(c);
            false
        }
    }

    /// Recalculate every task's counter when all runnable counters are exhausted:
    /// `counter = counter/2 + NICE_TO_TICKS(nice)` for *all* tasks, sleeping ones too
    /// (2.4 does this outside the run-queue lock, under `tasklist_lock`).
    pub fn recalculate<P: Platform>(&self, p: &P) {
        self.recalculations.fetch_add(1, Relaxed);
        for id in self.tasks.live_ids() {
            p.touch(Line::Task(id), Access::Write);
            p.charge(Work::Recalc);
            let t = self.tasks.get(id);
            t.set_counter(recalc_counter(t.counter(), t.nice(), self.hz));
        }
    }

    /// Bookkeeping after `schedule()` has chosen `next` on this CPU: `curr`,
    /// `has_cpu`, `processor`, `last_schedule`; `prev` leaves the CPU and its
    /// SCHED_YIELD bit is cleared (`schedule_tail`). Returns whether prev was yielding.
    ///
    /// Its three lines (`prev`, `next`, this CPU's data) are all known before any is
    /// loaded: their misses overlap ([`Platform::overlapped`]).
    pub fn switch_to<P: Platform>(
        &self,
        p: &P,
        prev: Option<TaskId>,
        prev_state: PrevState,
        next: Option<TaskId>,
    ) -> bool {
        p.overlapped(|| self.switch_to_lines(p, prev, prev_state, next))
    }

    fn switch_to_lines<P: Platform>(
        &self,
        p: &P,
        prev: Option<TaskId>,
        prev_state: PrevState,
        next: Option<TaskId>,
    ) -> bool {
        let cpu = p.this_cpu();
        let mut yielded = false;
        if let Some(prev) = prev {
            let pt = self.tasks.get(prev);
            yielded = pt.yielded();
            if yielded {
                pt.set_yielded(false);
            }
            if prev_state == PrevState::Exited {
                pt.set_live(false);
            }
            if Some(prev) != next {
                p.touch(Line::Task(prev), Access::Write);
                self.tasks.get(prev).set_has_cpu(false);
            }
        }
        if let Some(n) = next {
            p.touch(Line::Task(n), Access::Write);
            let t = self.tasks.get(n);
            t.set_has_cpu(true);
            t.set_processor(cpu);
            if t.mm() != 0 {
                self.cpu(cpu).active_mm.store(t.mm(), Relaxed);
            }
        }
        p.touch(Line::CpuData(cpu), Access::Write);
        let c = self.cpu(cpu);
        c.set_curr(next);
        // 2.4 jumps to `same_process` before stamping when prev == next (idle → idle
        // included): a CPU that re-idles after a useless IPI still looks long idle to
        // `reschedule_idle`'s "least recently active idle CPU" choice.
        if prev != next {
            c.last_schedule.store(p.now(), Relaxed);
        }
        yielded
    }
}

/// `can_schedule(t, cpu)`: allowed on `cpu` and not running on another CPU (`prev`,
/// still running here, is schedulable).
#[inline]
pub fn can_schedule(ts: &TaskSched, t: TaskId, cpu: CpuId, prev: Option<TaskId>) -> bool {
    ts.cpus_allowed().contains(cpu) && (!ts.has_cpu() || Some(t) == prev)
}

/// What `schedule()` found under the lock.
#[derive(Clone, Copy, Debug)]
pub struct Picked {
    /// The task to run next (`None`: idle).
    pub next: Option<TaskId>,
    /// `prev`, still runnable, was taken off this CPU's queue because it may no longer
    /// run here (MQS): `schedule_tail` must place it whatever its SCHED_YIELD state.
    pub displaced: bool,
}

/// Where DSS and MQS differ inside 2.4's `schedule()` ([`schedule`] is the rest).
pub trait Hooks24<P: Platform> {
    /// What `schedule()` locks on this CPU: DSS's global list, MQS's per-CPU queue.
    type Rq;
    fn common(&self) -> &SchedCommon;
    /// goodness()'s `this_mm` on `cpu` (charged as the policy reads it).
    fn this_mm(&self, p: &P, cpu: CpuId, prev: Option<TaskId>) -> u32;
    /// `spin_lock_irq(&runqueue_lock)` of `cpu`'s queue; run `f`; unlock.
    fn lock_local<R>(&self, p: &P, cpu: CpuId, f: impl FnOnce(&mut Self::Rq) -> R) -> R;
    /// The run list inside the locked queue.
    fn list(rq: &mut Self::Rq) -> &mut RunList;
    /// `del_from_runqueue(t)` with the policy's own bookkeeping.
    fn unlink(&self, p: &P, rq: &mut Self::Rq, t: TaskId);
    /// Choose the next task with the lock held, `prev` already handled; `None` when
    /// every runnable counter is 0 (recalculate and pick again).
    fn pick(
        &self,
        p: &P,
        rq: &mut Self::Rq,
        cpu: CpuId,
        prev: Option<TaskId>,
        prev_state: PrevState,
        this_mm: u32,
    ) -> Option<Picked>;
    /// `schedule_tail`: lock `prev`'s queue and, if [`SchedCommon::still_to_place`],
    /// `reschedule_idle(prev)`: a preempted task may run on another CPU at once.
    fn place_prev(&self, p: &P, prev: TaskId, displaced: bool);
}

/// 2.4's `schedule()` on `p.this_cpu()`, written once for DSS and MQS: under the local
/// lock, `prev` leaves the queue if it blocked or exited and a SCHED_RR task that used
/// its quantum gets a new one at the back; the policy picks; if every counter is spent,
/// all counters are recalculated (outside the lock) and it picks again. Then the
/// switch bookkeeping and `schedule_tail`.
pub fn schedule<P: Platform, H: Hooks24<P>>(
    h: &H,
    p: &P,
    prev: Option<TaskId>,
    prev_state: PrevState,
) -> Option<TaskId> {
    let cpu = p.this_cpu();
    let common = h.common();
    p.charge(Work::ScheduleEntry);
    let this_mm = h.this_mm(p, cpu, prev);
    task_state::schedule_before_lock(p, prev, cpu);
    let mut first_pass = true;
    let picked = loop {
        let picked = h.lock_local(p, cpu, |rq| {
            // The queue header and `prev`'s lines (`current`: the switch on
            // `prev->state` and `prev->need_resched = 0`, then its hot line): the
            // addresses are known up front, so their misses overlap. The unlink and
            // the pick follow: the pick walks from the header, each task's address
            // loaded from the one before.
            let leaves = p.overlapped(|| {
                p.touch(Line::Queue(H::list(rq).queue()), Access::Write);
                if first_pass {
                    task_state::schedule_under_lock(p, prev, cpu);
                }
                prev.filter(|_| first_pass).filter(|&t| common.put_prev(p, H::list(rq), t, prev_state))
            });
            if let Some(t) = leaves {
                h.unlink(p, rq, t);
            }
            h.pick(p, rq, cpu, prev, prev_state, this_mm)
        });
        first_pass = false;
        match picked {
            Some(picked) => break picked,
            None => common.recalculate(p),
        }
    };
    p.after_pick(|| {
        let yielded = common.switch_to(p, prev, prev_state, picked.next);
        // schedule_tail: a preempted (not yielding) task may be pushed to another CPU.
        if let Some(t) = prev.filter(|_| prev_state == PrevState::Runnable) {
            if picked.next != Some(t) && (!yielded || picked.displaced) {
                h.place_prev(p, t, picked.displaced);
            }
        }
    });
    picked.next
}

impl SchedCommon {
    /// `prev`'s part of `schedule()`, under the lock of `list`: a runnable SCHED_RR task
    /// whose quantum ran out gets a new one and goes to the back of its list. Returns
    /// whether `prev` must leave the list (it blocked or exited and is still linked).
    pub fn put_prev<P: Platform>(&self, p: &P, list: &mut RunList, prev: TaskId, prev_state: PrevState) -> bool {
        let tasks = &self.tasks;
        let ts = tasks.get(prev);
        p.touch(Line::Task(prev), Access::Write);
        if prev_state == PrevState::Runnable && ts.class() == SchedClass::Rr && ts.counter() == 0 {
            ts.set_counter(nice_to_ticks(ts.nice(), self.hz));
            if list.contains(tasks, prev) {
                p.charge(Work::ListOp);
                list.move_to_back(p, tasks, prev);
            }
        }
        prev_state != PrevState::Runnable && list.contains(tasks, prev)
    }

    /// Under the lock of `t`'s queue in `schedule_tail`: is the preempted `t` still
    /// waiting for a CPU? 2.4 checks `prev->state == TASK_RUNNING` here. On the real
    /// runtime another CPU may have picked `t`, or run and blocked it, between
    /// `switch_to` and this lock; the simulator's atomic calls never see that.
    /// A `displaced` task is off every queue, where nobody else can reach it.
    pub fn still_to_place(&self, t: TaskId, displaced: bool) -> bool {
        let ts = self.tasks.get(t);
        ts.live() && !ts.has_cpu() && (displaced || ts.on_rq().is_some())
    }
}

/// Run-list invariant checks (reads without charging): every member's `on_rq` names
/// the list, the walk visits exactly `len` tasks (no cycle), each task is on at most
/// one list, and no queued task has exited. Policies add their own checks.
pub struct ListChecker {
    seen: Vec<Option<usize>>,
}

impl ListChecker {
    pub fn new(common: &SchedCommon) -> ListChecker {
        ListChecker { seen: vec![None; common.tasks.high_water() as usize] }
    }

    /// Walk one list; returns its length. The list is a whole queue: its length must
    /// be the published one.
    pub fn list(&mut self, common: &SchedCommon, rq: &RunList) -> Result<usize, InvariantViolation> {
        let n = self.walk(common, rq)?;
        if common.queue_len(rq.queue()) != n {
            return Err(
                format!("queue {}: published length {} != {n}", rq.queue(), common.queue_len(rq.queue())).into()
            );
        }
        Ok(n)
    }

    /// Walk one list that may be one of several making up its queue (O(1)'s priority
    /// lists); returns its length. The caller checks the queue's total.
    pub fn walk(&mut self, common: &SchedCommon, rq: &RunList) -> Result<usize, InvariantViolation> {
        let tasks = &common.tasks;
        let q = rq.queue();
        let mut n = 0usize;
        for t in rq.iter(tasks) {
            n += 1;
            if n > rq.len() {
                return Err(format!("queue {q}: walk is longer than len {} (cycle?)", rq.len()).into());
            }
            if let Some(other) = self.seen[t as usize].replace(q) {
                return Err(format!("task {t} is on queues {other} and {q}").into());
            }
            if tasks.get(t).on_rq() != Some(q) {
                return Err(format!("task {t} is on queue {q} but on_rq = {:?}", tasks.get(t).on_rq()).into());
            }
            if !tasks.get(t).live() {
                return Err(format!("exited task {t} is still on queue {q}").into());
            }
        }
        if n != rq.len() {
            return Err(format!("queue {q}: walk found {n} tasks, len says {}", rq.len()).into());
        }
        Ok(n)
    }

    /// After all lists: no task claims a queue it is not linked on.
    pub fn finish(&self, common: &SchedCommon) -> Result<(), InvariantViolation> {
        for (t, s) in self.seen.iter().enumerate() {
            let claimed = common.tasks.get(t as TaskId).on_rq();
            if s.is_none() && claimed.is_some() {
                return Err(format!("task {t} claims queue {claimed:?} but is on no list").into());
            }
        }
        Ok(())
    }
}

/// `task_rq_lock`: lock the queue of `t` (queue = `t`'s `processor`) and run `f` on
/// it. `processor` may change (a steal, a wake-up placement, a balancer's pull)
/// between reading it and getting the lock, so it is re-checked under the lock and
/// the task chased if it moved.
pub fn with_task_queue<P: Platform, T: Send, R>(
    p: &P,
    tasks: &TaskTable,
    queues: &[P::Lock<T>],
    t: TaskId,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    task_queue(p, tasks, queues, t, false, f)
}

/// [`with_task_queue`] for a wake-up, which writes `t`'s lines first thing under the
/// lock (its state, [`task_state`]; its run-list link): those writes and the queue header's are
/// [`overlapped`](Platform::overlapped), both addresses being known before either line
/// is loaded (`try_to_wake_up` has `p` and the `rq` it has just locked). `f` runs
/// after both.
pub fn with_task_queue_waking<P: Platform, T: Send, R>(
    p: &P,
    tasks: &TaskTable,
    queues: &[P::Lock<T>],
    t: TaskId,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    task_queue(p, tasks, queues, t, true, f)
}

fn task_queue<P: Platform, T: Send, R>(
    p: &P,
    tasks: &TaskTable,
    queues: &[P::Lock<T>],
    t: TaskId,
    write_task: bool,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    let ts = tasks.get(t);
    let mut f = Some(f);
    loop {
        p.touch(Line::Task(t), Access::Read);
        let q = ts.processor();
        let r = queues[q].with(p, |rq| {
            let here = p.overlapped(|| {
                p.touch(Line::Queue(q), Access::Write);
                let here = ts.processor() == q;
                if here && write_task {
                    task_state::touch_state(p, Some(t), p.this_cpu(), Access::Write);
                    p.touch(Line::Task(t), Access::Write);
                }
                here
            });
            if !here {
                return None;
            }
            f.take().map(|f| f(rq))
        });
        if let Some(r) = r {
            return r;
        }
    }
}

/// Lock queues `a` and `b` (distinct) in ascending index order, the kernel's rule
/// for holding two run-queue locks (two CPUs balancing towards each other cannot
/// deadlock), touching each queue's line as it is taken; run `f` on them in argument
/// order.
pub fn with_two_queues<P: Platform, T: Send, R>(
    p: &P,
    queues: &[P::Lock<T>],
    a: usize,
    b: usize,
    f: impl FnOnce(&mut T, &mut T) -> R,
) -> R {
    debug_assert_ne!(a, b, "with_two_queues needs two distinct queues");
    let (lo, hi) = (a.min(b), a.max(b));
    queues[lo].with(p, |x| {
        p.touch(Line::Queue(lo), Access::Write);
        queues[hi].with(p, |y| {
            p.touch(Line::Queue(hi), Access::Write);
            if a == lo {
                f(x, y)
            } else {
                f(y, x)
            }
        })
    })
}
