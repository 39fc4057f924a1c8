//! O(1): Ingo Molnar's scheduler of 2002 (S11, S12, S13 in docs/sources.md), the
//! scheduler of the NetBench starvation report (S10), in three eras (`era=`, [`Era`]): `j7`, the
//! kernel the report ran (the -J7 patch of 25 Jan 2002); `2.5`, mid 2002 (the default);
//! `2.6`, with 2.6's starvation changes. Every constant and switch is an option that
//! overrides its era's value.
//!
//! * **Per-CPU runqueues**, each under its own lock, each with two *priority arrays*
//!   (`active`, `expired`): 140 FIFO lists (RT 0..99, SCHED_OTHER 100..139; lower is
//!   better) and a bitmap. `schedule()` takes the head of the first non-empty list of
//!   the active array (find-first-set), so a pick costs the same with 2 tasks or 2000.
//!   When the active array is empty the two arrays swap.
//! * **Timeslices** depend on the static priority only (`TASK_TIMESLICE`: nice −20 →
//!   300 ms, nice 0 → 150 ms, nice 19 → 10 ms). A task whose slice runs out gets a new
//!   one and goes to the *expired* array — unless it is rated interactive, when it goes
//!   back to the active array, *unless* the expired tasks are starving
//!   (`EXPIRED_STARVING`: the first expired task has waited `STARVATION_LIMIT ×
//!   nr_running` ticks; the scaling by `nr_running` is what lets ~40 interactive tasks on
//!   a UP box starve the others for ~80 s).
//! * **Interactivity**: `sleep_avg` (ticks, 0..MAX_SLEEP_AVG) grows by the time slept at
//!   each wake-up and shrinks by one per tick run; `effective_prio` maps it to a bonus of
//!   −5..+5 on the static priority; `TASK_INTERACTIVE` compares the result with a
//!   nice-scaled delta.
//! * **Fork** splits the parent's remaining slice with the child (the child gets the
//!   larger half) and gives the child 95 % of the parent's `sleep_avg`; the child starts
//!   on the parent's CPU. **Wake-up** puts a task on its own CPU's runqueue (`task_cpu`,
//!   no placement) and preempts that CPU's task if it has a better priority.
//! * **`load_balance`** is the only way a task changes CPU: from `schedule()` when the
//!   local queue is empty, on every tick of an idle CPU and every 250 ms on a busy one.
//!   It pulls from the busiest queue (smoothed lengths, `prev_nr_running`; a busy CPU
//!   needs a ~25 % imbalance) — expired array first, highest priority first, each list
//!   from its tail — every task not running, allowed here and not cache-hot.
//!
//! Readings where the sources are silent or differ between 2002 versions (each in
//! `docs/policies.md`, section o1):
//!
//! * `sched_yield` is the January 2002 one (S11, S12): the task drops one priority
//!   level (not below 139, RT tasks keep theirs) and goes to the tail of its list in its
//!   current array. The spring-2002 variant that gives up timeslices at 139 and then
//!   expires the task is not modelled.
//! * Wake-up ignores `sync` (no cross-CPU fast migration; that came later in 2002).
//! * A forked child never preempts on its wake-up (`wake_up_forked_process` has no
//!   preemption test) — except that a child put on an *idle* CPU (only the engines'
//!   parentless root task or a runtime spawn with a CPU hint can be) kicks that CPU.
//! * `load_balance` (eras `2.5`, `2.6`) walks each priority list from its tail towards
//!   its head and, on a busy CPU, pulls up to `imbalance` tasks over both arrays, as
//!   from 2.5.27 (July 2002); before that (era `j7`) it looked only at each list's tail
//!   and pulled at most one task per array.
//! * `load_balance` runs outside the local runqueue lock and takes both locks in
//!   ascending CPU order (the kernel holds the local lock and re-takes it in order only
//!   when a trylock of the busiest queue fails); it therefore always re-reads the local
//!   length under the locks, as `double_lock_balance` does after re-locking.
//! * Rebalance ticks: the kernel's `jiffies % BUSY_REBALANCE_TICK == 0`, evaluated as
//!   "a multiple of the interval was crossed since this CPU's previous tick" so that the
//!   runtime, whose ticks may bunch up, does not skip a balance.
//! * `jiffies` is the platform clock divided by the tick length (one global tick count).
//! * `sched_exit` (the parent reclaiming an exiting child's slice and sleep_avg) is not
//!   modelled: the engines have no `wait()` in which the parent would reap the child.
//!
//! Fix options: `expired_prio_guard=on` adds 2.6's clause (a task is also expired when
//! its static priority is worse than the best static priority already waiting in the
//! expired array, `best_expired_prio`); `scale=off` makes the starvation deadline
//! `STARVATION_LIMIT + 1` ticks whatever `nr_running`.
//!
//! What differs between the eras ([`Era`] names the sources):
//!
//! * `j7`: `PRIO_BONUS_RATIO` 70 (a bonus of ±14), `INTERACTIVE_DELTA` 3, and
//!   `TASK_INTERACTIVE` as `prio ≤ PRIO_INTERACTIVE || (prio < PRIO_CPU_HOG && prio ≤
//!   static_prio − 3)` ([`InteractiveRule::J7`]); `load_balance` looks at the tail of
//!   each list only and takes at most one task per array ([`BalanceScan::Tail`]).
//! * `2.6`: `sleep_avg` is kept in ticks here (2.6 keeps nanoseconds): the run time
//!   charged at switch-out and the run-queue wait credited at pick are converted with
//!   a per-task sub-tick remainder. Every wake-up is credited at `ON_RUNQUEUE_WEIGHT`
//!   (2.6's `activated == 1`, a wake-up from process context): the engines do not
//!   tell interrupt wake-ups (`activated == 2`, full credit) apart. 2.6's
//!   `interactive_credit`, its `INTERACTIVE_SLEEP` cap on a long sleep's credit and the
//!   sleep credit scaled by `MAX_BONUS − CURRENT_BONUS` are not modelled; timeslices,
//!   `sched_yield` and the rest are those of the 2002 model.
//! * All eras keep the January 2002 `sched_yield` (above).
//!
//! Costs reported to the platform: a `Work::ListOp` per enqueue/dequeue, a
//! `Work::Recalc` per `effective_prio`/timeslice computation, one `Work::Goodness` for the
//! find-first-set pick, a `Work::Examine` per queue looked at by `load_balance`; the
//! runqueue's header line (`Line::Queue(cpu)`: lengths, bitmaps, array pointers) on
//! every locked access; each task's line when its O(1) fields are read or written.

use crate::common::{self, ListChecker, SchedCommon};
use crate::cpu::{CpuId, MAX_CPUS};
use crate::options::{Options, Param, Value};
use crate::platform::{Access, Line, Platform, SchedLock, Work};
use crate::policies::{BuildEnv, PolicyKind};
use crate::policy::{InvariantViolation, Policy, PrevState};
use crate::runlist::{PrevLink, RunList};
use crate::spec::SpecError;
use crate::task::{SchedClass, TaskId, TaskParams, TaskTable};
use crate::task_state;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

/// The registry entry: `o1[:key=value,...]`, every 2002 constant settable.
pub struct Kind;

impl PolicyKind for Kind {
    const NAME: &'static str = "o1";
    const SUMMARY: &'static str =
        "Linux 2.5's O(1) scheduler (eras: j7 = the -J7 patch of Jan 2002, 2.5 = mid 2002, 2.6): per-CPU active/expired priority arrays, sleep_avg interactivity, load_balance";
    type Config = O1Config;

    fn build<P: Platform>(cfg: &O1Config, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError> {
        Ok(Box::new(O1::new(p, env, cfg)?))
    }
}

/// Real-time priorities are `0..MAX_RT_PRIO`.
pub const MAX_RT_PRIO: u8 = 100;
/// Priorities are `0..MAX_PRIO`; the idle task counts as `MAX_PRIO`.
pub const MAX_PRIO: u8 = 140;
/// Width of the nice range (`USER_PRIO(MAX_PRIO)`).
pub const MAX_USER_PRIO: i64 = 40;
/// A task's `array` when it is on no runqueue (`p->array == NULL`).
const NO_ARRAY: u8 = u8::MAX;

/// `NICE_TO_PRIO(nice)`: the static priority, 100..=139.
pub fn nice_to_prio(nice: i8) -> u8 {
    (120 + nice.clamp(-20, 19) as i16) as u8
}

/// The priority of a real-time task: `MAX_USER_RT_PRIO − 1 − rt_priority`.
pub fn rt_prio(rt_priority: u8) -> u8 {
    99 - rt_priority.min(99)
}

mod config;
mod tunables;

pub use config::*;
pub use tunables::*;

// ---------------------------------------------------------- data structures ------

/// The O(1) fields of one task (`task_struct`), guarded by the lock of the runqueue the
/// task is on (or owned by `task_new` before the task is visible). A line of its own,
/// as `FairTask` (`cfs.rs`) says why.
#[derive(Debug, Default)]
#[repr(align(64))]
struct O1Task {
    /// Dynamic priority (`p->prio`): the list the task is on.
    prio: AtomicU8,
    static_prio: AtomicU8,
    /// Which of its runqueue's two arrays holds the task (0, 1), or [`NO_ARRAY`].
    array: AtomicU8,
    time_slice: AtomicU64,
    sleep_avg: AtomicU64,
    /// Jiffy of the task's last `schedule()` (it slept or left the CPU then).
    sleep_timestamp: AtomicU64,
    /// Created and not yet woken: the wake-up is `wake_up_forked_process`.
    forked: AtomicBool,
    /// Platform time (ns) the task was last picked: its run time is charged from here
    /// (`charge_run`).
    ran_since: AtomicU64,
    /// Platform time + 1 of the wake-up whose run-queue wait is still to be credited
    /// (2.6's `activated`; 0: none).
    woke_at: AtomicU64,
    /// Sub-tick remainders (ns) of the run time charged and the waiting credited.
    charge_rem: AtomicU64,
    credit_rem: AtomicU64,
    /// Observation only (never read by the algorithm): platform time + 1 since which
    /// the task waits on a run queue (0: not waiting), and whether that wait began in
    /// the expired array.
    ready_at: AtomicU64,
    ready_expired: AtomicBool,
    /// Wait from the fork's wake-up to the first run, + 1 (0: never ran).
    first_wait: AtomicU64,
    /// `sleep_avg` when the task first ran, + 1 (0: never ran): what a task joining a
    /// loaded run queue brings to it.
    first_sleep_avg: AtomicU64,
    /// Longest wait on a run queue, and whether it began in the expired array.
    max_wait: AtomicU64,
    max_wait_expired: AtomicBool,
    /// Time waited on a run queue in all, by the array each wait began in.
    wait_active_ns: AtomicU64,
    wait_expired_ns: AtomicU64,
    /// Platform time + 1 of the `load_balance` pull the task has not run since (0: none).
    pulled_at: AtomicU64,
}

/// A `prio_array`: 140 FIFO lists, a bitmap of the non-empty ones, their total.
#[derive(Debug)]
struct PrioArray {
    nr_active: usize,
    bitmap: [u64; 3],
    queue: Box<[RunList]>,
}

impl PrioArray {
    fn new(cpu: CpuId) -> PrioArray {
        PrioArray {
            nr_active: 0,
            bitmap: [0; 3],
            queue: (0..MAX_PRIO).map(|_| RunList::new(cpu, PrevLink::HotLine)).collect(),
        }
    }
    fn bit(&self, i: usize) -> bool {
        self.bitmap[i / 64] & (1 << (i % 64)) != 0
    }
    /// `find_next_bit(bitmap, MAX_PRIO, from)`: the first non-empty list at or after
    /// `from`; `sched_find_first_bit` is `from = 0`.
    fn scan_from(&self, from: usize) -> Option<usize> {
        let mut w = from / 64;
        let mut word = self.bitmap.get(w)? & (u64::MAX << (from % 64));
        loop {
            if word != 0 {
                let i = w * 64 + word.trailing_zeros() as usize;
                return (i < MAX_PRIO as usize).then_some(i);
            }
            w += 1;
            word = *self.bitmap.get(w)?;
        }
    }
    /// `enqueue_task`: the tail of list `prio`.
    fn enqueue<P: Platform>(&mut self, p: &P, tasks: &TaskTable, t: TaskId, prio: usize) {
        self.queue[prio].push_back(p, tasks, t);
        self.bitmap[prio / 64] |= 1 << (prio % 64);
        self.nr_active += 1;
    }
    /// `dequeue_task`.
    fn dequeue<P: Platform>(&mut self, p: &P, tasks: &TaskTable, t: TaskId, prio: usize) {
        self.queue[prio].remove(p, tasks, t);
        if self.queue[prio].is_empty() {
            self.bitmap[prio / 64] &= !(1 << (prio % 64));
        }
        self.nr_active -= 1;
    }
}

/// One CPU's `runqueue`, guarded by its lock.
#[derive(Debug)]
pub struct Runqueue {
    cpu: CpuId,
    nr_running: usize,
    /// Jiffy at which the first task went to the expired array since the last swap.
    expired_timestamp: Option<u64>,
    curr: Option<TaskId>,
    arrays: [PrioArray; 2],
    /// Index of the active array in `arrays` (the other is expired).
    active: usize,
    /// Best static priority in the expired array ([`O1Config::expired_prio_guard`]).
    best_expired_prio: u8,
    nr_switches: u64,
}

impl Runqueue {
    fn expired(&self) -> usize {
        1 - self.active
    }
}

/// Which array a queued task is in (observation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayKind {
    Active,
    Expired,
}

/// A task's O(1) state (observation for tests and reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskView {
    pub prio: u8,
    pub static_prio: u8,
    pub time_slice: u64,
    pub sleep_avg: u64,
    pub sleep_timestamp: u64,
    /// `(cpu, array)` if the task is on a runqueue.
    pub queued: Option<(CpuId, ArrayKind)>,
}

/// A runqueue's state (observation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RqView {
    pub nr_running: usize,
    pub active: usize,
    pub expired: usize,
    pub expired_timestamp: Option<u64>,
    pub curr: Option<TaskId>,
    pub nr_switches: u64,
}

pub struct O1<P: Platform> {
    /// Task table, per-CPU `curr`, published runqueue lengths (`nr_running`).
    common: SchedCommon,
    rqs: Box<[P::Lock<Runqueue>]>,
    o1: Box<[O1Task]>,
    /// `prev_nr_running`: row `c` belongs to CPU `c`'s `load_balance`. Per-CPU data
    /// (a field of 2.5's `runqueue_t`), so each row and each `last_tick` is on lines of
    /// its own: the simulator prices them as the CPU's queue line, and on the runtime
    /// two workers' entries in one line would be false sharing it does not model.
    prev_nr_running: Box<[CachePadded<[AtomicU32; MAX_CPUS]>]>,
    /// Jiffy of each CPU's previous rebalance-tick check (`u64::MAX`: none yet).
    last_tick: Box<[CachePadded<AtomicU64>]>,
    tun: Tunables,
    tick_ns: u64,
    /// Tasks moved by `load_balance` and array swaps (observations).
    pulled: AtomicU64,
    swaps: AtomicU64,
    /// Pulled tasks that have run since, and their waits from the pull to that run
    /// (observations: does a balanced task run soon where it was moved?).
    pulled_ran: AtomicU64,
    pull_to_run_ns: AtomicU64,
    /// Why tasks sat in the expired array (observations, see [`Policy::stats`]).
    trace: Trace,
}

/// What `scheduler_tick` did with spent slices, and how long expired arrays waited
/// for their swap: the trace of the starvation mechanism.
#[derive(Debug, Default)]
struct Trace {
    /// Slices that ended in the expired array because the task was not interactive.
    expired_not_interactive: AtomicU64,
    /// Slices of interactive tasks sent to the expired array because
    /// `EXPIRED_STARVING` (or the `best_expired_prio` guard) held.
    expired_starving: AtomicU64,
    /// Slices of interactive tasks re-inserted into the active array.
    reinserted: AtomicU64,
    /// Of those, re-insertions while the expired array held waiting tasks: each one
    /// keeps the active array from draining, so the arrays do not swap.
    reinserted_over_expired: AtomicU64,
    /// Longest wait, in ticks, from the first expiry to the array swap, over all
    /// runqueues.
    max_swap_wait_ticks: AtomicU64,
    /// Largest number of tasks in one expired array.
    max_expired: AtomicU64,
}

// ------------------------------------------------------------- the policy ------

impl<P: Platform> O1<P> {
    /// Fails on options that do not fit the machine's HZ or its CPU count.
    pub fn new(p: &P, env: &BuildEnv, cfg: &O1Config) -> Result<Self, SpecError> {
        let n = env.topo.ncpus();
        if !(1..=MAX_CPUS).contains(&n) {
            return Err(SpecError(format!("policy 'o1': supports 1..={MAX_CPUS} CPUs, the machine has {n}")));
        }
        let tun = Tunables::new(cfg, env.hz)?;
        Ok(O1 {
            common: SchedCommon::new(p, env.topo, n, env.capacity, tun.hz),
            rqs: (0..n)
                .map(|cpu| {
                    p.new_lock(
                        &format!("runqueue_lock[{cpu}]"),
                        Runqueue {
                            cpu,
                            nr_running: 0,
                            expired_timestamp: None,
                            curr: None,
                            arrays: [PrioArray::new(cpu), PrioArray::new(cpu)],
                            active: 0,
                            best_expired_prio: MAX_PRIO,
                            nr_switches: 0,
                        },
                    )
                })
                .collect(),
            o1: (0..env.capacity).map(|_| O1Task::default()).collect(),
            prev_nr_running: (0..n).map(|_| CachePadded::new(std::array::from_fn(|_| AtomicU32::new(0)))).collect(),
            last_tick: (0..n).map(|_| CachePadded::new(AtomicU64::new(u64::MAX))).collect(),
            tick_ns: 1_000_000_000 / tun.hz as u64,
            tun,
            pulled: AtomicU64::new(0),
            swaps: AtomicU64::new(0),
            pulled_ran: AtomicU64::new(0),
            pull_to_run_ns: AtomicU64::new(0),
            trace: Trace::default(),
        })
    }

    /// The options in ticks.
    pub fn tunables(&self) -> &Tunables {
        &self.tun
    }
    /// Tasks moved between CPUs by `load_balance` so far.
    pub fn pulled(&self) -> u64 {
        self.pulled.load(Relaxed)
    }
    /// Active/expired array swaps so far.
    pub fn swaps(&self) -> u64 {
        self.swaps.load(Relaxed)
    }

    /// Observation (uncharged): task `t`'s O(1) state.
    pub fn task_view(&self, t: TaskId) -> TaskView {
        let ot = self.task(t);
        let queued = self.common.tasks.get(t).on_rq().and_then(|cpu| {
            let which = ot.array.load(Relaxed) as usize;
            self.rqs.get(cpu)?.inspect(|rq| {
                (which < 2).then_some((cpu, if which == rq.active { ArrayKind::Active } else { ArrayKind::Expired }))
            })
        });
        TaskView {
            prio: ot.prio.load(Relaxed),
            static_prio: ot.static_prio.load(Relaxed),
            time_slice: ot.time_slice.load(Relaxed),
            sleep_avg: ot.sleep_avg.load(Relaxed),
            sleep_timestamp: ot.sleep_timestamp.load(Relaxed),
            queued,
        }
    }

    /// Observation (uncharged): CPU `cpu`'s runqueue.
    pub fn rq_view(&self, cpu: CpuId) -> RqView {
        self.rqs[cpu].inspect(|rq| RqView {
            nr_running: rq.nr_running,
            active: rq.arrays[rq.active].nr_active,
            expired: rq.arrays[rq.expired()].nr_active,
            expired_timestamp: rq.expired_timestamp,
            curr: rq.curr,
            nr_switches: rq.nr_switches,
        })
    }

    fn task(&self, t: TaskId) -> &O1Task {
        &self.o1[t as usize]
    }
    fn jiffies(&self, p: &P) -> u64 {
        p.now() / self.tick_ns
    }
    fn is_rt(&self, t: TaskId) -> bool {
        self.task(t).prio.load(Relaxed) < MAX_RT_PRIO
    }

    // ---- array primitives (the runqueue lock is held) ---------------------------

    /// `enqueue_task(t, array)`: the tail of its priority's list.
    fn enqueue(&self, p: &P, rq: &mut Runqueue, t: TaskId, which: usize) {
        p.charge(Work::ListOp);
        let ot = self.task(t);
        rq.arrays[which].enqueue(p, &self.common.tasks, t, ot.prio.load(Relaxed) as usize);
        ot.array.store(which as u8, Relaxed);
    }

    /// `dequeue_task(t, t->array)`; returns the array `t` was in. A task's priority
    /// only changes while it is dequeued, so its list is `queue[prio]`.
    fn dequeue(&self, p: &P, rq: &mut Runqueue, t: TaskId) -> Option<usize> {
        let ot = self.task(t);
        let which = ot.array.load(Relaxed) as usize;
        if which >= 2 {
            return None;
        }
        p.charge(Work::ListOp);
        rq.arrays[which].dequeue(p, &self.common.tasks, t, ot.prio.load(Relaxed) as usize);
        ot.array.store(NO_ARRAY, Relaxed);
        Some(which)
    }

    fn set_nr_running(&self, rq: &mut Runqueue, n: usize) {
        rq.nr_running = n;
        self.common.publish_len(rq.cpu, n);
    }

    /// `activate_task`: credit the time slept to `sleep_avg` (not for RT tasks),
    /// recompute the priority, enqueue in the active array.
    fn activate(&self, p: &P, rq: &mut Runqueue, t: TaskId, jiffies: u64) {
        p.touch(Line::Task(t), Access::Write);
        let ot = self.task(t);
        let slept = jiffies.saturating_sub(ot.sleep_timestamp.load(Relaxed));
        if !self.is_rt(t) && slept > 0 {
            let avg = (ot.sleep_avg.load(Relaxed) + slept).min(self.tun.max_sleep_avg);
            ot.sleep_avg.store(avg, Relaxed);
            p.charge(Work::Recalc);
            ot.prio.store(self.tun.effective_prio(ot.static_prio.load(Relaxed), avg), Relaxed);
        }
        self.enqueue(p, rq, t, rq.active);
        self.set_nr_running(rq, rq.nr_running + 1);
        self.note_ready(p, t, false);
    }

    /// Observation: `t` starts to wait on a run queue now, in the expired array or not.
    fn note_ready(&self, p: &P, t: TaskId, expired: bool) {
        let ot = self.task(t);
        ot.ready_at.store(p.now() + 1, Relaxed);
        ot.ready_expired.store(expired, Relaxed);
    }

    /// Observation: `t` is dispatched now; its wait ends.
    fn note_run(&self, p: &P, t: TaskId) {
        let ot = self.task(t);
        let pulled_at = ot.pulled_at.swap(0, Relaxed);
        if pulled_at != 0 {
            self.pulled_ran.fetch_add(1, Relaxed);
            self.pull_to_run_ns.fetch_add(p.now().saturating_sub(pulled_at - 1), Relaxed);
        }
        let since = ot.ready_at.swap(0, Relaxed);
        if since == 0 {
            return;
        }
        let wait = p.now().saturating_sub(since - 1);
        if ot.first_wait.load(Relaxed) == 0 {
            ot.first_wait.store(wait + 1, Relaxed);
            ot.first_sleep_avg.store(ot.sleep_avg.load(Relaxed) + 1, Relaxed);
        }
        let by_array = if ot.ready_expired.load(Relaxed) { &ot.wait_expired_ns } else { &ot.wait_active_ns };
        by_array.fetch_add(wait, Relaxed);
        if wait > ot.max_wait.load(Relaxed) {
            ot.max_wait.store(wait, Relaxed);
            ot.max_wait_expired.store(ot.ready_expired.load(Relaxed), Relaxed);
        }
    }

    /// Add `ns` to a sub-tick remainder and return the whole ticks it makes.
    fn whole_ticks(&self, rem: &AtomicU64, ns: u64) -> u64 {
        let total = rem.load(Relaxed) + ns;
        rem.store(total % self.tick_ns, Relaxed);
        total / self.tick_ns
    }

    /// 2.6's `schedule()` on a picked task woken from a sleep: `runqueue_credit` % of
    /// the time it waited on the run queue since the wake-up counts as sleep, and its
    /// priority is recomputed (it stays the task picked).
    fn credit_wait(&self, p: &P, rq: &mut Runqueue, t: TaskId) {
        let ot = self.task(t);
        let woke = ot.woke_at.swap(0, Relaxed);
        if woke == 0 || self.tun.runqueue_credit == 0 || self.is_rt(t) {
            return;
        }
        let waited = p.now().saturating_sub(woke - 1);
        // The kernel's fixed-point `delta · (ON_RUNQUEUE_WEIGHT · 128 / 100) / 128`.
        let credit = waited.saturating_mul(self.tun.runqueue_credit * 128 / 100) / 128;
        let ticks = self.whole_ticks(&ot.credit_rem, credit);
        if ticks == 0 {
            return;
        }
        p.touch(Line::Task(t), Access::Write);
        let avg = (ot.sleep_avg.load(Relaxed) + ticks).min(self.tun.max_sleep_avg);
        ot.sleep_avg.store(avg, Relaxed);
        p.charge(Work::Recalc);
        let prio = self.tun.effective_prio(ot.static_prio.load(Relaxed), avg);
        if prio != ot.prio.load(Relaxed) {
            let which = self.dequeue(p, rq, t).unwrap_or(rq.active);
            ot.prio.store(prio, Relaxed);
            self.enqueue(p, rq, t, which);
        }
    }

    /// `deactivate_task`.
    fn deactivate(&self, p: &P, rq: &mut Runqueue, t: TaskId) {
        if self.dequeue(p, rq, t).is_some() {
            self.set_nr_running(rq, rq.nr_running - 1);
        }
    }

    /// The priority of `rq`'s running task; the idle task's is `MAX_PRIO`.
    fn curr_prio(&self, p: &P, rq: &Runqueue) -> u8 {
        match rq.curr {
            Some(c) => {
                p.touch(Line::Task(c), Access::Read);
                self.task(c).prio.load(Relaxed)
            }
            None => MAX_PRIO,
        }
    }

    /// `EXPIRED_STARVING(rq)` for the task `static_prio` whose slice just ended.
    fn expired_starving(&self, rq: &Runqueue, jiffies: u64, static_prio: u8) -> bool {
        let n = if self.tun.scale { rq.nr_running as u64 } else { 1 };
        let deadline = self.tun.starvation_limit.saturating_mul(n).saturating_add(1);
        let late = rq.expired_timestamp.is_some_and(|ts| jiffies.saturating_sub(ts) >= deadline);
        late || (self.tun.expired_prio_guard && static_prio > rq.best_expired_prio)
    }

    /// The body of `scheduler_tick` for the running task `t` of `rq`: RR slices
    /// round-robin, SCHED_OTHER tasks lose a tick of `sleep_avg` and of their slice;
    /// a spent slice is refilled and the task re-queued — in the active array if it is
    /// interactive and the expired tasks are not starving, else in the expired array.
    /// Returns `need_resched`.
    fn slice_tick(&self, p: &P, rq: &mut Runqueue, t: TaskId, jiffies: u64) -> bool {
        p.touch(Line::Task(t), Access::Write);
        let ot = self.task(t);
        let which = ot.array.load(Relaxed) as usize;
        if which != rq.active {
            // Expired already but not yet switched out.
            return true;
        }
        let left = ot.time_slice.load(Relaxed).saturating_sub(1);
        let static_prio = ot.static_prio.load(Relaxed);
        if self.is_rt(t) {
            if self.common.tasks.get(t).class() != SchedClass::Rr {
                return false; // SCHED_FIFO has no timeslice.
            }
            if left > 0 {
                ot.time_slice.store(left, Relaxed);
                return false;
            }
            ot.time_slice.store(self.tun.timeslice(static_prio), Relaxed);
            self.dequeue(p, rq, t);
            self.enqueue(p, rq, t, which);
            return true;
        }
        if !self.tun.charge_run {
            ot.sleep_avg.store(ot.sleep_avg.load(Relaxed).saturating_sub(1), Relaxed);
        }
        if left > 0 {
            ot.time_slice.store(left, Relaxed);
            return false;
        }
        self.dequeue(p, rq, t);
        p.charge(Work::Recalc);
        let prio = self.tun.effective_prio(static_prio, ot.sleep_avg.load(Relaxed));
        ot.prio.store(prio, Relaxed);
        ot.time_slice.store(self.tun.timeslice(static_prio), Relaxed);
        let interactive = self.tun.interactive(prio, static_prio);
        if self.tun.stamp_any {
            rq.expired_timestamp.get_or_insert(jiffies);
        }
        let tr = &self.trace;
        if !interactive || self.expired_starving(rq, jiffies, static_prio) {
            let why = if interactive { &tr.expired_starving } else { &tr.expired_not_interactive };
            why.fetch_add(1, Relaxed);
            rq.expired_timestamp.get_or_insert(jiffies);
            rq.best_expired_prio = rq.best_expired_prio.min(static_prio);
            self.enqueue(p, rq, t, rq.expired());
            tr.max_expired.fetch_max(rq.arrays[rq.expired()].nr_active as u64, Relaxed);
        } else {
            tr.reinserted.fetch_add(1, Relaxed);
            if rq.expired_timestamp.is_some() {
                tr.reinserted_over_expired.fetch_add(1, Relaxed);
            }
            self.enqueue(p, rq, t, rq.active);
        }
        true
    }

    // ---- schedule ---------------------------------------------------------------

    /// `prev`'s part of `schedule()`: it leaves the CPU now (`sleep_timestamp`, which
    /// also dates its cache) and, if it blocked or exited, its runqueue.
    fn put_prev(&self, p: &P, rq: &mut Runqueue, t: TaskId, state: PrevState, jiffies: u64) {
        p.touch(Line::Task(t), Access::Write);
        let ot = self.task(t);
        ot.sleep_timestamp.store(jiffies, Relaxed);
        if self.tun.charge_run && !self.is_rt(t) {
            // 2.6: `prev->sleep_avg -= run_time` (in ns there; here in whole ticks).
            let ran = p.now().saturating_sub(ot.ran_since.load(Relaxed));
            let ticks = self.whole_ticks(&ot.charge_rem, ran);
            ot.sleep_avg.store(ot.sleep_avg.load(Relaxed).saturating_sub(ticks), Relaxed);
        }
        let on_rq = self.common.tasks.get(t).on_rq() == Some(rq.cpu);
        if state != PrevState::Runnable && on_rq {
            self.deactivate(p, rq, t);
        } else if on_rq {
            self.note_ready(p, t, ot.array.load(Relaxed) as usize != rq.active);
        }
    }

    /// Pick the head of the best list of the active array, swapping the arrays first
    /// if the active one is empty, and do the switch bookkeeping under the lock (so
    /// no balancer can pull `next`, nor see `prev` half switched out).
    fn pick_next(&self, p: &P, rq: &mut Runqueue, prev: Option<TaskId>, state: PrevState) -> Option<TaskId> {
        if let Some(ts) = rq.expired_timestamp {
            if rq.nr_running > 0 && rq.arrays[rq.active].nr_active == 0 {
                let waited = self.jiffies(p).saturating_sub(ts);
                self.trace.max_swap_wait_ticks.fetch_max(waited, Relaxed);
            }
        }
        let next = if rq.nr_running == 0 {
            rq.expired_timestamp = None;
            None
        } else {
            if rq.arrays[rq.active].nr_active == 0 {
                rq.active = rq.expired();
                rq.expired_timestamp = None;
                rq.best_expired_prio = MAX_PRIO;
                self.swaps.fetch_add(1, Relaxed);
            }
            p.charge(Work::Goodness);
            let array = &rq.arrays[rq.active];
            let next = array.scan_from(0).and_then(|idx| array.queue[idx].first());
            if let Some(n) = next {
                self.credit_wait(p, rq, n);
                self.task(n).ran_since.store(p.now(), Relaxed);
                self.note_run(p, n);
            }
            next
        };
        if next != prev {
            rq.nr_switches += 1;
        }
        rq.curr = next;
        self.common.switch_to(p, prev, state, next);
        next
    }

    // ---- load balancing -----------------------------------------------------------

    /// `load_balance(this_rq, idle)`: find the busiest queue from smoothed lengths
    /// (locklessly), then, with both queues locked, pull from it — one task for an idle
    /// CPU, `imbalance` for a busy one. With `kick`, a pulled task that beats this
    /// CPU's current one sets `need_resched` here (from `schedule()` it is not needed).
    /// Returns the number of tasks pulled.
    fn load_balance(&self, p: &P, this: CpuId, idle: bool, kick: bool) -> usize {
        let n = self.common.ncpus();
        if n < 2 {
            return 0;
        }
        let row = &self.prev_nr_running[this][..n];
        // The local length is smoothed towards the larger, remote ones towards the
        // smaller value: balancing needs a stably long remote and short local queue.
        let own = |cur: usize| {
            if idle || cur > row[this].load(Relaxed) as usize {
                cur
            } else {
                row[this].load(Relaxed) as usize
            }
        };
        let nr_running = own(self.common.queue_len(this));
        let (mut busiest, mut max_load) = (None, 1usize);
        for (i, slot) in row.iter().enumerate().take(n) {
            p.charge(Work::Examine);
            p.touch(Line::Queue(i), Access::Read);
            let cur = self.common.queue_len(i);
            let prev = slot.load(Relaxed) as usize;
            let load = if idle || cur < prev { cur } else { prev };
            slot.store(cur as u32, Relaxed);
            if load > max_load && i != this {
                busiest = Some(i);
                max_load = load;
            }
        }
        let Some(busiest) = busiest else { return 0 };
        let imbalance = (max_load as i64 - nr_running as i64) / 2;
        // "~25 %": the pull must be at least a quarter of the busiest length.
        if !idle && imbalance < (max_load as i64 + 3) / 4 {
            return 0;
        }
        let jiffies = self.jiffies(p);
        let pulled = common::with_two_queues(p, &self.rqs, this, busiest, |here, there| {
            if there.nr_running <= own(here.nr_running) + 1 {
                return 0;
            }
            let max = if idle { 1 } else { imbalance.max(1) as usize };
            match self.tun.balance {
                BalanceScan::Walk => self.pull_tasks(p, here, there, max, jiffies, kick),
                BalanceScan::Tail => self.pull_tails(p, here, there, max, jiffies, kick),
            }
        });
        self.pulled.fetch_add(pulled as u64, Relaxed);
        pulled
    }

    /// Pull up to `max` migratable tasks from `there` to `here`: the expired array
    /// first (likely cache-cold, and not about to run), then the active one; the best
    /// priority first; each list from its tail.
    fn pull_tasks(
        &self,
        p: &P,
        here: &mut Runqueue,
        there: &mut Runqueue,
        max: usize,
        jiffies: u64,
        kick: bool,
    ) -> usize {
        let tasks = &self.common.tasks;
        let mut moved = 0;
        for which in [there.expired(), there.active] {
            let mut idx = there.arrays[which].scan_from(0);
            while let Some(i) = idx {
                let mut cur = there.arrays[which].queue[i].last();
                while let Some(t) = cur {
                    cur = there.arrays[which].queue[i].prev(tasks, t);
                    if self.can_migrate(p, there, t, here.cpu, jiffies) {
                        self.pull_task(p, here, there, t, kick);
                        moved += 1;
                        if moved == max {
                            return moved;
                        }
                    }
                }
                idx = there.arrays[which].scan_from(i + 1);
            }
        }
        moved
    }

    /// The pull of `load_balance` before July 2002: the expired array (if it has
    /// tasks) and then the active one, best priority first, but only the *tail* of
    /// each list is looked at (the scan stepped from the tail to the list head and
    /// took that for the end of the list); after a pull a busy CPU with `imbalance`
    /// left moves on to the active array, and a pull from the active array ends the
    /// balance: at most one task per array.
    fn pull_tails(
        &self,
        p: &P,
        here: &mut Runqueue,
        there: &mut Runqueue,
        max: usize,
        jiffies: u64,
        kick: bool,
    ) -> usize {
        let mut moved = 0;
        let expired = there.expired();
        let from_expired = there.arrays[expired].nr_active > 0;
        let arrays = [from_expired.then_some(expired), Some(there.active)];
        for which in arrays.into_iter().flatten() {
            let mut idx = there.arrays[which].scan_from(0);
            while let Some(i) = idx {
                if let Some(t) = there.arrays[which].queue[i].last() {
                    if self.can_migrate(p, there, t, here.cpu, jiffies) {
                        self.pull_task(p, here, there, t, kick);
                        moved += 1;
                        break;
                    }
                }
                idx = there.arrays[which].scan_from(i + 1);
            }
            if moved == max {
                break;
            }
        }
        moved
    }

    /// `CAN_MIGRATE_TASK`: not running, allowed on `cpu`, and not cache-hot (left its
    /// CPU more than `cache_decay_ticks` ago).
    fn can_migrate(&self, p: &P, there: &Runqueue, t: TaskId, cpu: CpuId, jiffies: u64) -> bool {
        p.touch(Line::Task(t), Access::Read);
        let cold = jiffies.saturating_sub(self.task(t).sleep_timestamp.load(Relaxed)) > self.tun.cache_decay;
        cold && there.curr != Some(t) && self.common.tasks.get(t).cpus_allowed().contains(cpu)
    }

    /// `pull_task`: move `t` into `here`'s active array.
    fn pull_task(&self, p: &P, here: &mut Runqueue, there: &mut Runqueue, t: TaskId, kick: bool) {
        p.touch(Line::Task(t), Access::Write);
        self.task(t).pulled_at.store(p.now() + 1, Relaxed);
        self.deactivate(p, there, t);
        self.common.tasks.get(t).set_processor(here.cpu);
        self.enqueue(p, here, t, here.active);
        self.set_nr_running(here, here.nr_running + 1);
        if kick && self.task(t).prio.load(Relaxed) < self.curr_prio(p, here) {
            task_state::resched_task(p, here.cpu, here.curr);
        }
    }

    /// Is a rebalance tick due on `cpu` at `jiffies` (`jiffies % interval == 0`, or a
    /// multiple of `interval` passed since this CPU's previous tick)?
    fn rebalance_due(&self, cpu: CpuId, jiffies: u64, interval: u64) -> bool {
        let last = self.last_tick[cpu].swap(jiffies, Relaxed);
        if last == u64::MAX {
            jiffies.is_multiple_of(interval)
        } else {
            jiffies > last && jiffies / interval > last / interval
        }
    }

    // ---- fork -----------------------------------------------------------------------

    /// `do_fork`'s share of the parent's timeslice and `wake_up_forked_process`'s
    /// `sleep_avg` penalties, under the parent's runqueue lock. The child gets the
    /// larger half; a parent left with nothing keeps one tick and runs a
    /// `scheduler_tick` at once (which expires it). Returns the child's `(time_slice,
    /// sleep_avg)`.
    fn fork_share(&self, p: &P, parent: TaskId, jiffies: u64) -> (u64, u64) {
        common::with_task_queue(p, &self.common.tasks, &self.rqs, parent, |rq| {
            p.touch(Line::Task(parent), Access::Write);
            let pt = self.task(parent);
            let slice = pt.time_slice.load(Relaxed).max(1);
            let avg = pt.sleep_avg.load(Relaxed);
            pt.sleep_avg.store(avg * self.tun.parent_penalty / 100, Relaxed);
            let child = ((slice + 1) >> 1, avg * self.tun.child_penalty / 100);
            pt.time_slice.store((slice >> 1).max(1), Relaxed);
            if slice >> 1 == 0 && rq.curr == Some(parent) && self.slice_tick(p, rq, parent, jiffies) {
                task_state::resched_task(p, rq.cpu, rq.curr);
            }
            child
        })
    }

    // ---- invariants -------------------------------------------------------------------

    /// The uncharged check of one runqueue: every list ([`ListChecker::walk`]: each task
    /// once, `on_rq`, live), each list's tasks have its priority, that array and this
    /// CPU; bitmap bit set iff list non-empty; `nr_active`, `nr_running`, the published
    /// length and `curr` consistent.
    fn check_rq(&self, cpu: CpuId, rq: &Runqueue, checker: &mut ListChecker) -> Result<(), String> {
        let tasks = &self.common.tasks;
        if rq.cpu != cpu || rq.active > 1 {
            return Err(format!("runqueue {cpu}: says cpu {} active {}", rq.cpu, rq.active));
        }
        let mut total = 0;
        for (w, array) in rq.arrays.iter().enumerate() {
            let mut count = 0;
            for (i, list) in array.queue.iter().enumerate() {
                let len = checker.walk(&self.common, list).map_err(|e| e.0)?;
                if array.bit(i) != (len > 0) {
                    return Err(format!(
                        "cpu {cpu} array {w}: bitmap bit {i} is {} but list {i} has {len} tasks",
                        array.bit(i)
                    ));
                }
                for t in list.iter(tasks) {
                    let ot = self.task(t);
                    let (prio, a) = (ot.prio.load(Relaxed) as usize, ot.array.load(Relaxed) as usize);
                    if prio != i || a != w || tasks.get(t).processor() != cpu {
                        return Err(format!(
                            "task {t} is on cpu {cpu} array {w} list {i} but has prio {prio}, array {a}, processor {}",
                            tasks.get(t).processor()
                        ));
                    }
                }
                count += len;
            }
            if array.bitmap[2] >> (MAX_PRIO as usize - 128) != 0 {
                return Err(format!("cpu {cpu} array {w}: bitmap bits beyond MAX_PRIO are set"));
            }
            if count != array.nr_active {
                return Err(format!("cpu {cpu} array {w}: {count} tasks listed, nr_active {}", array.nr_active));
            }
            total += count;
        }
        if total != rq.nr_running || total != self.common.queue_len(cpu) {
            return Err(format!(
                "cpu {cpu}: {total} tasks in the arrays, nr_running {}, published {}",
                rq.nr_running,
                self.common.queue_len(cpu)
            ));
        }
        if rq.arrays[rq.expired()].nr_active > 0 && rq.expired_timestamp.is_none() {
            return Err(format!("cpu {cpu}: expired tasks without expired_timestamp"));
        }
        if rq.curr != self.common.cpu(cpu).curr() {
            return Err(format!("cpu {cpu}: runqueue curr {:?}, cpu curr {:?}", rq.curr, self.common.cpu(cpu).curr()));
        }
        if let Some(c) = rq.curr {
            if tasks.get(c).on_rq() != Some(cpu) || !tasks.get(c).has_cpu() {
                return Err(format!("cpu {cpu} runs task {c}, which is on queue {:?}", tasks.get(c).on_rq()));
            }
        }
        Ok(())
    }
}

impl<P: Platform> Policy<P> for O1<P> {
    fn name(&self) -> &str {
        Kind::NAME
    }
    fn tasks(&self) -> &TaskTable {
        &self.common.tasks
    }

    /// `do_fork`: the child starts on the forking CPU (if allowed), with half the
    /// parent's slice and 95 % of its `sleep_avg`; a task without a parent gets a full
    /// slice and `sleep_avg` 0.
    fn task_new(&self, p: &P, id: TaskId, params: &TaskParams, parent: Option<TaskId>) {
        let cpu = self.common.fork_cpu(p, params);
        p.touch(Line::Task(id), Access::Write);
        self.common.tasks.init(id, params, cpu, 0);
        let jiffies = self.jiffies(p);
        let static_prio = nice_to_prio(params.nice);
        let parent = parent.filter(|&t| t != id && self.common.tasks.get(t).live());
        let (slice, avg) = match parent {
            Some(par) => self.fork_share(p, par, jiffies),
            None => (self.tun.timeslice(static_prio), 0),
        };
        let prio = if params.class.is_rt() {
            rt_prio(params.rt_priority)
        } else {
            p.charge(Work::Recalc);
            self.tun.effective_prio(static_prio, avg)
        };
        let ot = self.task(id);
        ot.static_prio.store(static_prio, Relaxed);
        ot.prio.store(prio, Relaxed);
        ot.array.store(NO_ARRAY, Relaxed);
        ot.time_slice.store(slice, Relaxed);
        ot.sleep_avg.store(avg, Relaxed);
        ot.sleep_timestamp.store(jiffies, Relaxed);
        ot.forked.store(true, Relaxed);
        for field in [
            &ot.ran_since,
            &ot.woke_at,
            &ot.charge_rem,
            &ot.credit_rem,
            &ot.ready_at,
            &ot.first_wait,
            &ot.first_sleep_avg,
            &ot.max_wait,
            &ot.wait_active_ns,
            &ot.wait_expired_ns,
            &ot.pulled_at,
        ] {
            field.store(0, Relaxed);
        }
        ot.ready_expired.store(false, Relaxed);
        ot.max_wait_expired.store(false, Relaxed);
    }

    /// `try_to_wake_up`: activate on the task's own CPU and preempt that CPU's task if
    /// the woken one has a better priority. A forked task's first wake-up is
    /// `wake_up_forked_process` (no preemption test; an idle CPU is kicked).
    fn wake_up(&self, p: &P, id: TaskId, _sync: bool) {
        p.charge(Work::WakeupEntry);
        let jiffies = self.jiffies(p);
        // The task's line is written with the run queue's header, overlapped.
        common::with_task_queue_waking(p, &self.common.tasks, &self.rqs, id, |rq| {
            let ot = self.task(id);
            if ot.array.load(Relaxed) != NO_ARRAY {
                return; // already runnable
            }
            let forked = ot.forked.swap(false, Relaxed);
            self.activate(p, rq, id, jiffies);
            if !forked {
                ot.woke_at.store(p.now() + 1, Relaxed);
            }
            let preempt = if forked { rq.curr.is_none() } else { ot.prio.load(Relaxed) < self.curr_prio(p, rq) };
            if preempt {
                task_state::resched_task(p, rq.cpu, rq.curr);
            }
        });
    }

    /// `schedule()`: `prev` leaves (and its runqueue if it blocked or exited); an empty
    /// runqueue first tries `load_balance(idle)`; then the O(1) pick.
    fn schedule(&self, p: &P, prev: Option<TaskId>, prev_state: PrevState) -> Option<TaskId> {
        p.charge(Work::ScheduleEntry);
        let cpu = p.this_cpu();
        let jiffies = self.jiffies(p);
        let mut first = true;
        let mut balanced = self.common.ncpus() < 2;
        task_state::schedule_before_lock(p, prev, cpu);
        loop {
            let put_prev = prev.filter(|_| first);
            let picked = self.rqs[cpu].with(p, |rq| {
                p.touch(Line::Queue(cpu), Access::Write);
                if first {
                    task_state::schedule_under_lock(p, prev, cpu);
                }
                if let Some(t) = put_prev {
                    self.put_prev(p, rq, t, prev_state, jiffies);
                }
                if rq.nr_running == 0 && !balanced {
                    return None;
                }
                Some(self.pick_next(p, rq, prev, prev_state))
            });
            first = false;
            match picked {
                Some(next) => return next,
                None => {
                    self.load_balance(p, cpu, true, false);
                    balanced = true;
                }
            }
        }
    }

    /// `scheduler_tick` for the running task (the idle task's `idle_tick` balancing is
    /// in [`Policy::balance`]).
    fn tick(&self, p: &P, curr: Option<TaskId>) -> bool {
        p.charge(Work::Tick);
        let Some(t) = curr else { return false };
        let cpu = p.this_cpu();
        let jiffies = self.jiffies(p);
        self.rqs[cpu].with(p, |rq| {
            p.touch(Line::Queue(cpu), Access::Write);
            let need_resched = rq.curr == Some(t) && self.slice_tick(p, rq, t, jiffies);
            if need_resched {
                task_state::touch_state(p, curr, cpu, Access::Write);
            }
            need_resched
        })
    }

    /// The rebalance ticks: `load_balance(idle)` every `IDLE_REBALANCE_TICK` on an idle
    /// CPU, `load_balance(busy)` every `BUSY_REBALANCE_TICK` on a busy one.
    fn balance(&self, p: &P) {
        let cpu = p.this_cpu();
        let idle = self.common.cpu(cpu).curr().is_none();
        let interval = if idle { self.tun.idle_rebalance } else { self.tun.busy_rebalance };
        if self.rebalance_due(cpu, self.jiffies(p), interval) {
            self.load_balance(p, cpu, idle, true);
        }
    }

    /// `sched_yield()` (January 2002): one priority level down (not below 139; RT tasks
    /// keep theirs), to the tail of the list, in the task's current array.
    fn yield_now(&self, p: &P, curr: TaskId) {
        common::with_task_queue(p, &self.common.tasks, &self.rqs, curr, |rq| {
            p.touch(Line::Task(curr), Access::Write);
            let ot = self.task(curr);
            let prio = ot.prio.load(Relaxed);
            let Some(which) = self.dequeue(p, rq, curr) else { return };
            if (MAX_RT_PRIO..MAX_PRIO - 1).contains(&prio) {
                ot.prio.store(prio + 1, Relaxed);
            }
            self.enqueue(p, rq, curr, which);
        });
        // 2002's `sys_sched_yield` ends in `schedule()` unconditionally; the engines
        // call it when asked (without this, a yield under o1 did nothing in the
        // simulator until the next tick).
        task_state::resched_task(p, p.this_cpu(), Some(curr));
    }

    fn nr_queues(&self) -> usize {
        self.common.ncpus()
    }
    fn queue_len(&self, q: usize) -> usize {
        self.common.queue_len(q)
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let tr = &self.trace;
        vec![
            ("array_swaps", self.swaps()),
            ("pulled", self.pulled()),
            ("pulled_then_ran", self.pulled_ran.load(Relaxed)),
            (
                "pull_to_run_mean_ns",
                self.pull_to_run_ns.load(Relaxed).checked_div(self.pulled_ran.load(Relaxed)).unwrap_or(0),
            ),
            ("expired_not_interactive", tr.expired_not_interactive.load(Relaxed)),
            ("expired_starving", tr.expired_starving.load(Relaxed)),
            ("reinserted_interactive", tr.reinserted.load(Relaxed)),
            ("reinserted_over_expired", tr.reinserted_over_expired.load(Relaxed)),
            ("max_swap_wait_ticks", tr.max_swap_wait_ticks.load(Relaxed)),
            ("max_expired", tr.max_expired.load(Relaxed)),
        ]
    }

    /// `sleep_avg_ticks` now; `first_wait_ns` from the fork's wake-up to the first run
    /// (0 if it never ran) and `first_sleep_avg_ticks`, the `sleep_avg` it then had;
    /// `max_wait_ns`, the longest wait on a run queue, and `max_wait_expired`, 1 if that
    /// wait began in the expired array; `wait_active_ns` and `wait_expired_ns`, the time
    /// waited on a run queue in all by the array each wait began in.
    fn task_stats(&self, t: TaskId) -> Vec<(&'static str, u64)> {
        let Some(ot) = self.o1.get(t as usize) else { return Vec::new() };
        vec![
            ("sleep_avg_ticks", ot.sleep_avg.load(Relaxed)),
            ("first_wait_ns", ot.first_wait.load(Relaxed).saturating_sub(1)),
            ("first_sleep_avg_ticks", ot.first_sleep_avg.load(Relaxed).saturating_sub(1)),
            ("max_wait_ns", ot.max_wait.load(Relaxed)),
            ("max_wait_expired", ot.max_wait_expired.load(Relaxed) as u64),
            ("wait_active_ns", ot.wait_active_ns.load(Relaxed)),
            ("wait_expired_ns", ot.wait_expired_ns.load(Relaxed)),
        ]
    }

    fn check_invariants(&self) -> Result<(), InvariantViolation> {
        let mut checker = ListChecker::new(&self.common);
        for (cpu, lock) in self.rqs.iter().enumerate() {
            lock.inspect(|rq| self.check_rq(cpu, rq, &mut checker))?;
        }
        checker.finish(&self.common)?;
        let tasks = &self.common.tasks;
        for t in 0..tasks.high_water() {
            let queued = self.task(t).array.load(Relaxed) != NO_ARRAY;
            if queued != tasks.get(t).on_rq().is_some() {
                return Err(format!(
                    "task {t}: array {} but on_rq {:?}",
                    self.task(t).array.load(Relaxed),
                    tasks.get(t).on_rq()
                )
                .into());
            }
        }
        Ok(())
    }
}
