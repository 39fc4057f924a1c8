//! MQS: the IBM Linux Technology Center multi-queue scheduler (Kravetz/Franke), as in
//! the 2.5.0 RFC patch of 7 Dec 2001 (S3 in docs/sources.md).
//!
//! The global run list of DSS is split into one run queue per CPU, each under its own
//! lock; a task belongs to queue `processor` (the CPU it last ran on, or was placed
//! on). The design goal is *functional equivalence* with DSS: each decision should be
//! the globally best one DSS would make, but taken with only the local lock held.
//!
//! * `schedule()` runs in two phases. **Phase 1** (`scan_runqueue`) scans the local
//!   list with `local_goodness` (no CPU term: every local task has it) and, on the
//!   way, records the *second best* schedulable, non-running task as this queue's
//!   `max_na_*` ("maximum non-affinity goodness"). The local winner then gets the
//!   affinity bonus `PROC_CHANGE_PENALTY`. **Phase 2** (`examine_rmt_rqs`) reads every
//!   other queue's `max_na_goodness` *without its lock*; a remote task is stolen only if
//!   its na_goodness still beats the boosted local best after a `trylock` of its queue.
//!   A remote task therefore wins exactly when it is more than 15 better, which is the
//!   DSS trade-off between the same two tasks. If every trylock failed and the CPU
//!   would go idle, it rescans (`premature_idle`).
//! * `reschedule_idle(p)` (wakeup placement) builds an on-stack list of every allowed
//!   CPU's current na_goodness (idle CPUs sort by how long they have been idle, longest
//!   first; busy remote CPUs pay `PROC_CHANGE_PENALTY`) and tries the CPUs whose value
//!   is below `na_goodness(p)` in increasing order, moving `p` to the first one whose
//!   current task it would preempt (trylock again).
//! * `max_na_*` is maintained incrementally: adding a non-running task raises it if the
//!   task beats it; removing the max_na task rescans and takes the *first* schedulable
//!   task with positive na_goodness ("good enough" approximation of the patch).
//!
//! Locking: only the local (or the task's own) queue is ever `lock`ed; remote queues are
//! only `trylock`ed, so there is no lock-ordering problem. The `max_na_*` fields are
//! written under the queue lock and mirrored in per-queue atomics that other CPUs read
//! locklessly (charged as a read of the queue's cache line).
//!
//! Deviations from the patch, each for a stated reason:
//! * The premature-idle rescan is bounded by [`PREMATURE_IDLE_RESCANS`]: in the patch
//!   the loop is unbounded because the lock holder eventually releases; in a simulator
//!   that runs a policy call atomically a held lock might never be released during it.
//! * `has_cpu(next)` and `curr` are set under the local lock (as the patch's
//!   `update_sched_data` does); [`SchedCommon::switch_to`] repeats them afterwards.
//! * Time for idle ordering is the platform's ns clock instead of TSC cycles.

use crate::common::{self, can_schedule, Hooks24, ListChecker, Opts24, Picked, SchedCommon};
use crate::cpu::{CpuId, CpuMask, Topology, MAX_CPUS};
use crate::goodness::{local_goodness, na_goodness, MIN_GOODNESS, PROC_CHANGE_PENALTY};
use crate::platform::{Access, Line, Platform, SchedLock, Work};
use crate::policies::{BuildEnv, PolicyKind};
use crate::policy::{InvariantViolation, Policy, PrevState};
use crate::runlist::{PrevLink, RunList};
use crate::spec::SpecError;
use crate::task::{SchedClass, TaskId, TaskParams, TaskSched, TaskTable};
use crate::task_state;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering::Relaxed};

/// The registry entry.
pub struct Kind;

impl PolicyKind for Kind {
    const NAME: &'static str = "mqs";
    const SUMMARY: &'static str =
        "IBM's multi-queue scheduler: per-CPU queues and locks, steal only what beats the local best by more than the affinity bonus";
    type Config = Opts24;

    fn build<P: Platform>(opts: &Opts24, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError> {
        Ok(Box::new(Mqs::with_opts(p, env.topo, env.capacity, env.hz, *opts)))
    }
}

/// How many times phase 2 rescans the remote queues when every trylock it needed
/// failed and the CPU would otherwise go idle (the patch loops until it succeeds).
pub const PREMATURE_IDLE_RESCANS: u32 = 3;

/// Every run queue of an [`Mqs`], locked ([`Mqs::with_all_queues`]).
pub(crate) struct LockedQueues<'a, 'b, P: Platform> {
    mqs: &'a Mqs<P>,
    held: &'a mut Vec<&'b mut MqRq>,
}

impl<P: Platform> LockedQueues<'_, '_, P> {
    /// Queue `q`'s `nt_running`, read under its lock (one `Work::Examine`; its line is
    /// already held from taking the lock).
    pub(crate) fn nt_running(&self, p: &P, q: usize) -> usize {
        p.charge(Work::Examine);
        self.held[q].nt_running
    }

    /// [`Mqs::migrate`]'s move with both queues already locked (no kick).
    pub(crate) fn migrate(
        &mut self,
        p: &P,
        src: usize,
        dst: usize,
        max: usize,
        on_move: &mut dyn FnMut(TaskId),
    ) -> usize {
        if src == dst || max == 0 {
            return 0;
        }
        let (s, d) = if src < dst {
            let (a, b) = self.held.split_at_mut(dst);
            (&mut *a[src], &mut *b[0])
        } else {
            let (a, b) = self.held.split_at_mut(src);
            (&mut *b[0], &mut *a[dst])
        };
        self.mqs.move_tasks(p, s, d, max, on_move)
    }
}

/// `runqueue_data[cpu]`: one CPU's run queue, guarded by its `runqueue_lock`.
#[derive(Debug)]
pub struct MqRq {
    /// The tasks of this queue, running ones included; new and woken at the front.
    list: RunList,
    /// Tasks linked on `list` (the patch's `nt_running`).
    nt_running: usize,
    /// na_goodness of `max_na_ptr` when it was recorded, `MIN_GOODNESS` if none.
    max_na_goodness: i32,
    /// A schedulable, non-running task of this queue that another CPU may steal.
    max_na_ptr: Option<TaskId>,
    /// Copy of `max_na_ptr`'s `cpus_allowed`, so that remote CPUs need not touch the task.
    max_na_cpus_allowed: CpuMask,
}

/// The fields of [`MqRq`] that other CPUs read without the lock. Written only with the
/// queue lock held, so under the lock they equal the `MqRq` fields.
#[derive(Debug)]
struct RqPublished {
    max_na_goodness: AtomicI32,
    max_na_cpus_allowed: AtomicU64,
    nt_running: AtomicU32,
    /// The CPU runs a task (not idle); `sched_yield` counts pending tasks with it.
    running_non_idle: AtomicBool,
}

pub struct Mqs<P: Platform> {
    common: SchedCommon,
    /// Pool size: `schedule()` phase 2 and `reschedule_idle()` look only at the CPUs of
    /// one pool of `pool` contiguous CPU ids (PMQS). MQS is `pool == ncpus`.
    pool: usize,
    /// Queue `q` belongs to CPU `q`.
    rqs: Box<[P::Lock<MqRq>]>,
    /// One cache line (pair) per queue, as the patch's per-CPU runqueue data is
    /// `____cacheline_aligned` (the simulator prices each as its queue's own line).
    published: Box<[CachePadded<RqPublished>]>,
    /// Failed remote trylocks in phase 2 (the patch's `premature_idle` events).
    premature_idle: AtomicU64,
    /// PMQS's machine-wide bitmap of non-idle CPUs (S2): one shared word, written by
    /// every CPU that goes idle or stops being idle, read by `reschedule_idle()`. MQS
    /// keeps the flag in each CPU's own runqueue data and has no such word.
    idle_map: bool,
}

impl<P: Platform> Mqs<P> {
    /// MQS with the default options (2.4.7's preemption threshold).
    pub fn new(p: &P, topo: &Topology, capacity: usize, hz: u32) -> Self {
        Self::with_opts(p, topo, capacity, hz, Opts24::default())
    }

    pub fn with_opts(p: &P, topo: &Topology, capacity: usize, hz: u32, opts: Opts24) -> Self {
        Self::with_pool(p, topo, capacity, hz, topo.ncpus(), opts)
    }

    /// MQS restricted to pools of `pool` contiguous CPUs (the PMQS core). `pool` must
    /// divide the CPU count; [`crate::policies::pmqs::Pmqs::new`] checks that and
    /// reports a [`SpecError`] instead of panicking.
    pub fn with_pool(p: &P, topo: &Topology, capacity: usize, hz: u32, pool: usize, opts: Opts24) -> Self {
        let n = topo.ncpus();
        assert!((1..=MAX_CPUS).contains(&n), "MQS supports 1..={MAX_CPUS} CPUs, got {n}");
        assert!(pool >= 1 && n.is_multiple_of(pool), "pool size {pool} does not divide {n} CPUs");
        Mqs {
            common: SchedCommon::new(p, topo, n, capacity, hz).with_opts(opts),
            pool,
            rqs: (0..n)
                .map(|q| {
                    p.new_lock(
                        &format!("runqueue_lock[{q}]"),
                        MqRq {
                            list: RunList::new(q, PrevLink::OwnLine),
                            nt_running: 0,
                            max_na_goodness: MIN_GOODNESS,
                            max_na_ptr: None,
                            max_na_cpus_allowed: CpuMask(0),
                        },
                    )
                })
                .collect(),
            published: (0..n)
                .map(|_| {
                    CachePadded::new(RqPublished {
                        max_na_goodness: AtomicI32::new(MIN_GOODNESS),
                        max_na_cpus_allowed: AtomicU64::new(0),
                        nt_running: AtomicU32::new(0),
                        running_non_idle: AtomicBool::new(false),
                    })
                })
                .collect(),
            premature_idle: AtomicU64::new(0),
            idle_map: false,
        }
    }

    /// Keep PMQS's machine-wide bitmap of non-idle CPUs (S2), at any pool size.
    pub fn with_idle_map(mut self) -> Self {
        self.idle_map = true;
        self
    }

    /// Observation (uncharged, takes the lock): queue `q`'s `(max_na_goodness, max_na_ptr)`.
    pub fn max_na(&self, q: usize) -> (i32, Option<TaskId>) {
        self.rqs[q].inspect(|rq| (rq.max_na_goodness, rq.max_na_ptr))
    }

    /// Pool size (the CPU count for plain MQS).
    pub fn pool_size(&self) -> usize {
        self.pool
    }

    /// The pool of `cpu`: the patch's `first_cpu..=last_cpu` of `aligned_data[cpu]`.
    #[inline]
    pub fn pool_of(&self, cpu: CpuId) -> std::ops::Range<CpuId> {
        let first = cpu / self.pool * self.pool;
        first..first + self.pool
    }

    /// Observation: failed remote trylocks in `schedule()` so far.
    pub fn premature_idle_count(&self) -> u64 {
        self.premature_idle.load(Relaxed)
    }

    // ---- queue primitives (caller holds the queue's lock) ----------------------

    /// Set this queue's `max_na_*`, locked copy and published copy together.
    fn set_max_na(&self, rq: &mut MqRq, na: Option<(TaskId, i32, CpuMask)>) {
        let pb = &self.published[rq.list.queue()];
        match na {
            Some((t, g, mask)) => {
                rq.max_na_ptr = Some(t);
                rq.max_na_goodness = g;
                rq.max_na_cpus_allowed = mask;
                pb.max_na_cpus_allowed.store(mask.0, Relaxed);
                pb.max_na_goodness.store(g, Relaxed);
            }
            None => {
                // As in the patch, the mask is left stale: a remote CPU never uses it
                // because MIN_GOODNESS is never above its own best.
                rq.max_na_ptr = None;
                rq.max_na_goodness = MIN_GOODNESS;
                pb.max_na_goodness.store(MIN_GOODNESS, Relaxed);
            }
        }
    }

    fn publish_len(&self, rq: &MqRq) {
        let q = rq.list.queue();
        self.common.publish_len(q, rq.list.len());
        self.published[q].nt_running.store(rq.nt_running as u32, Relaxed);
    }

    /// `add_to_runqueue` (front of the list). With `upd`, a non-running task that beats
    /// the queue's max_na becomes it, so remote CPUs can see it before the next local
    /// `schedule()`. The caller has touched the task.
    fn add_to_runqueue(&self, p: &P, rq: &mut MqRq, t: TaskId, upd: bool) {
        let tasks = &self.common.tasks;
        p.charge(Work::ListOp);
        rq.list.push_front(p, tasks, t);
        rq.nt_running += 1;
        self.publish_len(rq);
        if upd {
            let ts = tasks.get(t);
            if !ts.has_cpu() {
                p.charge(Work::Goodness);
                let g = na_goodness(ts);
                if g > rq.max_na_goodness {
                    self.set_max_na(rq, Some((t, g, ts.cpus_allowed())));
                }
            }
        }
    }

    /// `del_from_runqueue`. If `t` was the max_na task, `rescan` looks for a
    /// replacement (the FIRST non-running task with positive na_goodness, not the best:
    /// the patch's cheap approximation); without it max_na is just cleared, for callers
    /// that recompute it before unlocking.
    fn del_from_runqueue(&self, p: &P, rq: &mut MqRq, t: TaskId, rescan: bool) {
        let tasks = &self.common.tasks;
        p.charge(Work::ListOp);
        rq.list.remove(p, tasks, t);
        rq.nt_running -= 1;
        self.publish_len(rq);
        if rq.max_na_ptr != Some(t) {
            return;
        }
        let mut found = None;
        if rescan {
            let mut cur = rq.list.first();
            while let Some(u) = cur {
                p.touch(Line::Task(u), Access::Read);
                let us = tasks.get(u);
                if !us.has_cpu() {
                    p.charge(Work::Goodness);
                    let g = na_goodness(us);
                    if g > 0 {
                        found = Some((u, g, us.cpus_allowed()));
                        break;
                    }
                }
                cur = rq.list.next_of(us);
            }
        }
        self.set_max_na(rq, found);
    }

    /// `lock_task_rq_verify`: lock `t`'s run queue and run `f` on it. `processor` may
    /// change (a steal or a wakeup placement) between reading it and getting the lock,
    /// so re-check under the lock and chase the task if it moved.
    fn with_task_rq<R>(&self, p: &P, t: TaskId, f: impl FnOnce(&mut MqRq) -> R) -> R {
        common::with_task_queue(p, &self.common.tasks, &self.rqs, t, f)
    }

    // ---- balancing primitives (PMQS balancers) ----------------------------------

    /// The shared state (task table, per-CPU data).
    pub(crate) fn common(&self) -> &SchedCommon {
        &self.common
    }

    /// Lockless read of queue `q`'s `nt_running`, charged as examining the queue
    /// (one `Work::Examine` and a read of its header line).
    pub(crate) fn peek_nt_running(&self, p: &P, q: usize) -> usize {
        p.charge(Work::Examine);
        p.touch(Line::Queue(q), Access::Read);
        self.published[q].nt_running.load(Relaxed) as usize
    }

    /// Move up to `max` non-running tasks allowed on CPU `dst` from queue `src` to
    /// queue `dst`, taking them from the back of `src` (the tasks queued longest, whose
    /// cache is coldest). Both queue locks are taken, in ascending queue order, so two
    /// balancers cannot deadlock (MQS proper only ever blocks on one lock at a time).
    /// Each visited task costs a read of its line, each move two `ListOp`s and a write.
    /// `max_na` of both queues is maintained. With `kick`, an idle `dst` CPU is sent a
    /// reschedule (a pull pass runs on `dst` itself and needs none). Returns the number
    /// of tasks moved.
    pub(crate) fn migrate(
        &self,
        p: &P,
        src: usize,
        dst: usize,
        max: usize,
        kick: bool,
        on_move: &mut dyn FnMut(TaskId),
    ) -> usize {
        if src == dst || max == 0 {
            return 0;
        }
        let moved = common::with_two_queues(p, &self.rqs, src, dst, |s, d| self.move_tasks(p, s, d, max, on_move));
        if moved > 0 && kick {
            self.kick_if_idle(p, dst);
        }
        moved
    }

    /// Run `f` with every run queue's lock held (taken in ascending queue order, each
    /// queue's line touched as it is taken, as [`common::with_two_queues`] does) and a
    /// [`LockedQueues`] to read lengths and move tasks through: a balancer pass that
    /// keeps the whole machine's queues still while it looks and moves.
    pub(crate) fn with_all_queues<R>(&self, p: &P, f: impl FnOnce(&mut LockedQueues<'_, '_, P>) -> R) -> R {
        fn lock_from<P: Platform, R>(
            mqs: &Mqs<P>,
            p: &P,
            i: usize,
            held: Vec<&mut MqRq>,
            f: impl FnOnce(&mut LockedQueues<'_, '_, P>) -> R,
        ) -> R {
            let mut held = held;
            if i == mqs.rqs.len() {
                return f(&mut LockedQueues { mqs, held: &mut held });
            }
            mqs.rqs[i].with(p, move |rq| {
                p.touch(Line::Queue(i), Access::Write);
                // Shorten the held references' lifetime to this lock's, then add it.
                let mut held: Vec<&mut MqRq> = held;
                held.push(rq);
                lock_from(mqs, p, i + 1, held, f)
            })
        }
        lock_from(self, p, 0, Vec::with_capacity(self.rqs.len()), f)
    }

    /// Send an idle CPU `dst` a reschedule (after a balancer moved work to it).
    pub(crate) fn kick_if_idle(&self, p: &P, dst: usize) {
        p.touch(Line::CpuData(dst), Access::Read);
        if self.common.cpu(dst).curr().is_none() {
            task_state::resched_task(p, dst, None);
        }
    }

    /// The body of [`Mqs::migrate`], both queues locked.
    fn move_tasks(&self, p: &P, s: &mut MqRq, d: &mut MqRq, max: usize, on_move: &mut dyn FnMut(TaskId)) -> usize {
        let tasks = &self.common.tasks;
        let dst = d.list.queue();
        let mut victims = [0 as TaskId; 64];
        let mut n = 0;
        // Walk from the back: collect first, the list changes as tasks move.
        let mut cur = s.list.first();
        let mut walk: Vec<TaskId> = Vec::with_capacity(s.list.len());
        while let Some(t) = cur {
            walk.push(t);
            cur = s.list.next(tasks, t);
        }
        for &t in walk.iter().rev() {
            if n == max.min(victims.len()) {
                break;
            }
            p.touch(Line::Task(t), Access::Read);
            let ts = tasks.get(t);
            if !ts.has_cpu() && ts.cpus_allowed().contains(dst) {
                victims[n] = t;
                n += 1;
            }
        }
        for &t in &victims[..n] {
            p.touch(Line::Task(t), Access::Write);
            self.del_from_runqueue(p, s, t, true);
            tasks.get(t).set_processor(dst);
            self.add_to_runqueue(p, d, t, true);
            on_move(t);
        }
        n
    }

    // ---- goodness --------------------------------------------------------------

    /// The patch's full `goodness(t, cpu, mm)`: `local_goodness` plus
    /// `PROC_CHANGE_PENALTY` for a positive SCHED_OTHER task that last ran on `cpu`.
    /// Unlike DSS's it gives no bonus to `mm == NULL` and ignores SCHED_YIELD for RT.
    #[inline]
    fn goodness(t: &TaskSched, cpu: CpuId, mm: u32) -> i32 {
        let g = local_goodness(t, mm);
        if g > 0 && t.class() == SchedClass::Other && t.processor() == cpu {
            g + PROC_CHANGE_PENALTY
        } else {
            g
        }
    }

    /// `preemption_goodness(curr, t, cpu)` with MQS's goodness, against the address
    /// space loaded on `cpu`. [`SchedCommon::preempts`] decides whether it means "replace".
    fn preemption_goodness(&self, p: &P, curr: TaskId, t: TaskId, cpu: CpuId) -> i32 {
        let tasks = &self.common.tasks;
        p.touch(Line::Task(curr), Access::Read);
        p.charge(Work::Goodness);
        p.charge(Work::Goodness);
        let mm = self.common.cpu(cpu).active_mm.load(Relaxed);
        Self::goodness(tasks.get(t), cpu, mm) - Self::goodness(tasks.get(curr), cpu, mm)
    }

    // ---- wakeup placement --------------------------------------------------------

    /// Step 2 of [`reschedule_idle`](Self::reschedule_idle): what every allowed CPU of
    /// `pool` runs, from its `aligned_data` alone, into `list` (other slots untouched).
    fn snapshot(
        &self,
        p: &P,
        list: &mut [i32; MAX_CPUS],
        pool: std::ops::Range<CpuId>,
        allowed: CpuMask,
        now: u64,
        tsk_cpu: CpuId,
    ) {
        for cpu in pool {
            if !allowed.contains(cpu) {
                continue;
            }
            p.charge(Work::Examine);
            p.touch(Line::CpuData(cpu), Access::Read);
            let cs = self.common.cpu(cpu);
            let g = cs.curr_na_goodness.load(Relaxed);
            list[cpu] = if g == MIN_GOODNESS {
                // Idle: minus the idle time, so the longest-idle CPU (coldest cache,
                // least likely to be about to get work) sorts lowest.
                let idle = now.saturating_sub(cs.last_schedule.load(Relaxed));
                if idle > i32::MAX as u64 {
                    i32::MIN
                } else {
                    -(idle as i32)
                }
            } else if cpu != tsk_cpu {
                // Moving away costs the task its cache: the DSS affinity term.
                g + PROC_CHANGE_PENALTY
            } else {
                g
            };
        }
    }

    /// Does woken `t` preempt `curr`, running on `target`? Counted when it does.
    fn wakeup_preempts(&self, p: &P, curr: TaskId, t: TaskId, target: CpuId) -> bool {
        let preempts = self.common.preempts(self.preemption_goodness(p, curr, t, target));
        if preempts {
            self.common.note_wakeup_preemption();
        }
        preempts
    }

    /// `reschedule_idle(t)`, called with `t`'s run queue (`src`, queue `processor`)
    /// locked. Places `t` on a queue (it may already be on `src`) and kicks the CPU
    /// that should run it, if any.
    fn reschedule_idle(&self, p: &P, t: TaskId, src: &mut MqRq) {
        let tasks = &self.common.tasks;
        let ts = tasks.get(t);
        p.touch(Line::Task(t), Access::Read);
        let tsk_cpu = ts.processor();
        debug_assert_eq!(src.list.queue(), tsk_cpu);
        let allowed = ts.cpus_allowed();
        let on_rq = ts.on_rq().is_some();

        // 1. The task's own CPU is idle: its cache is there and nobody is disturbed.
        if allowed.contains(tsk_cpu) {
            p.touch(Line::CpuData(tsk_cpu), Access::Read);
            if self.common.cpu(tsk_cpu).curr().is_none() {
                if !on_rq {
                    self.add_to_runqueue(p, src, t, true);
                }
                task_state::resched_task(p, tsk_cpu, None);
                return;
            }
        }

        // 2. Lockless snapshot of what every allowed CPU runs. Only CPUs below
        // na_goodness(t) are candidates; `saved` marks "not a candidate".
        p.charge(Work::Goodness);
        let saved = na_goodness(ts);
        let now = p.now();
        let ncpus = self.common.ncpus();
        let mut list = [saved; MAX_CPUS];
        // PMQS: only the CPUs of the task's pool (its queue's), so that tasks leave a
        // pool only through a balancer. For MQS the pool is the whole machine.
        let pool = self.pool_of(tsk_cpu);
        if self.idle_map {
            // PMQS looks up the non-idle bitmap before it searches (S2: it is kept so
            // that idle CPUs can be found quickly).
            p.touch(Line::IdleMap, Access::Read);
        }
        // Every CPU's `aligned_data` is at a known address and nothing here loads a
        // task line: the reads of the snapshot overlap.
        p.overlapped(|| self.snapshot(p, &mut list, pool, allowed, now, tsk_cpu));

        while let Some(target) = lowest_below(&list[..ncpus], saved) {
            list[target] = saved;
            if target == tsk_cpu {
                // Already holding this queue's lock. It cannot be idle (step 1), so
                // preempt only a worse task; else the patch's trylock of its own held
                // lock would fail, so move on.
                p.touch(Line::CpuData(target), Access::Read);
                let curr = self.common.cpu(target).curr();
                let preempt = match curr {
                    None => true,
                    Some(curr) => self.wakeup_preempts(p, curr, t, target),
                };
                if preempt {
                    if !on_rq {
                        self.add_to_runqueue(p, src, t, true);
                    }
                    task_state::resched_task(p, target, curr);
                    return;
                }
                continue;
            }
            let moved = self.rqs[target].try_with(p, |dst| {
                p.touch(Line::Queue(target), Access::Write);
                p.touch(Line::CpuData(target), Access::Read);
                let curr = self.common.cpu(target).curr();
                let take = match curr {
                    None => true,
                    Some(curr) => self.wakeup_preempts(p, curr, t, target),
                };
                if take {
                    if on_rq {
                        self.del_from_runqueue(p, src, t, true);
                    }
                    p.touch(Line::Task(t), Access::Write);
                    ts.set_processor(target);
                    self.add_to_runqueue(p, dst, t, true);
                    task_state::resched_task(p, target, curr);
                }
                take
            });
            if moved == Some(true) {
                return;
            }
        }

        // 4. Nowhere better: stay on the current queue; its CPU runs something at
        // least as good.
        if !on_rq {
            self.add_to_runqueue(p, src, t, true);
        }
    }

    // ---- schedule() phases -------------------------------------------------------

    /// Phase 1, `scan_runqueue`: best local task by `local_goodness` and, as a by-product,
    /// this queue's max_na (the best schedulable non-running task that is not `next`).
    /// Returns `(next, c)` with the affinity boost already added to a positive `c`.
    fn scan_runqueue(
        &self,
        p: &P,
        rq: &mut MqRq,
        cpu: CpuId,
        prev: Option<TaskId>,
        this_mm: u32,
    ) -> (Option<TaskId>, i32) {
        let tasks = &self.common.tasks;
        let (mut next, mut c) = (None::<TaskId>, MIN_GOODNESS);
        let (mut second, mut second_w) = (None::<TaskId>, MIN_GOODNESS);
        let mut cur = rq.list.first();
        while let Some(t) = cur {
            p.touch(Line::Task(t), Access::Read);
            let ts = tasks.get(t);
            if can_schedule(ts, t, cpu, prev) {
                p.charge(Work::Goodness);
                let w = local_goodness(ts, this_mm);
                if w > c {
                    // The displaced best becomes the runner-up, unless it is running
                    // (prev, or the idle task): a running task cannot be stolen.
                    if let Some(n) = next.filter(|&n| !tasks.get(n).has_cpu()) {
                        second = Some(n);
                        second_w = c;
                    }
                    c = w;
                    next = Some(t);
                } else if w > second_w && !ts.has_cpu() {
                    second = Some(t);
                    second_w = w;
                }
            }
            cur = rq.list.next_of(ts);
        }
        let na = second.map(|s| {
            let ss = tasks.get(s);
            p.charge(Work::Goodness);
            (s, na_goodness(ss), ss.cpus_allowed())
        });
        self.set_max_na(rq, na);
        if c > 0 {
            c += PROC_CHANGE_PENALTY;
        }
        (next, c)
    }

    /// Phase 2, `examine_rmt_rqs`: steal a remote max_na task if it beats `c`. Called
    /// with the local queue `rq` locked; remote queues are only trylocked.
    fn examine_rmt_rqs(&self, p: &P, rq: &mut MqRq, cpu: CpuId, c: &mut i32, next: Option<TaskId>) -> Option<TaskId> {
        let tasks = &self.common.tasks;
        let ncpus = self.common.ncpus();
        let mut rescans = 0;
        loop {
            let mut premature_idle = 0u32;
            // Lockless snapshot of the remote max_na values worth trying.
            let mut list = [MIN_GOODNESS; MAX_CPUS];
            // PMQS: remote queues of this CPU's pool only (all of them for MQS).
            let pool = self.pool_of(cpu);
            for (r, slot) in list.iter_mut().enumerate().take(pool.end).skip(pool.start) {
                if r == cpu {
                    continue;
                }
                p.charge(Work::Examine);
                p.touch(Line::Queue(r), Access::Read);
                let pb = &self.published[r];
                let g = pb.max_na_goodness.load(Relaxed);
                if g > *c && CpuMask(pb.max_na_cpus_allowed.load(Relaxed)).contains(cpu) {
                    *slot = g;
                }
            }
            // Highest first; the snapshot may be stale, so re-validate under the lock.
            while let Some(r) = highest_above(&list[..ncpus], *c) {
                list[r] = MIN_GOODNESS;
                let stolen = self.rqs[r].try_with(p, |rrq| {
                    p.touch(Line::Queue(r), Access::Write);
                    let s = rrq.max_na_ptr?;
                    if rrq.max_na_goodness <= *c || !rrq.max_na_cpus_allowed.contains(cpu) {
                        return None;
                    }
                    // The local best is displaced but still runnable here: it becomes
                    // this queue's max_na so that other CPUs can find it.
                    if let Some(n) = next {
                        p.touch(Line::Task(n), Access::Read);
                        let ns = tasks.get(n);
                        if !ns.has_cpu() {
                            p.charge(Work::Goodness);
                            self.set_max_na(rq, Some((n, na_goodness(ns), ns.cpus_allowed())));
                        }
                    }
                    *c = rrq.max_na_goodness;
                    p.touch(Line::Task(s), Access::Write);
                    self.del_from_runqueue(p, rrq, s, true);
                    tasks.get(s).set_processor(cpu);
                    // No max_na update: it is about to run here.
                    self.add_to_runqueue(p, rq, s, false);
                    Some(s)
                });
                match stolen {
                    Some(Some(s)) => return Some(s),
                    Some(None) => {}
                    None => {
                        premature_idle += 1;
                        self.premature_idle.fetch_add(1, Relaxed);
                    }
                }
            }
            // Going idle only because remote queues were busy: their tasks are probably
            // still there. Clear our own max_na first (nothing runnable here anyway) so
            // that no other CPU is spinning to steal from us, and look again.
            if next.is_none() && premature_idle > 0 && rescans < PREMATURE_IDLE_RESCANS {
                rescans += 1;
                self.set_max_na(rq, None);
                continue;
            }
            return next;
        }
    }

    /// `update_sched_data`, under the local lock: `curr` and `curr_na_goodness` (read
    /// locklessly by `reschedule_idle` on other CPUs) and `has_cpu(next)`, so that no
    /// other CPU can pick or steal `next` once the lock is dropped.
    fn update_sched_data(&self, p: &P, cpu: CpuId, next: Option<TaskId>) {
        // This CPU's data and `next`'s line (its address already in a register):
        // independent, their misses overlap.
        p.overlapped(|| self.write_sched_data(p, cpu, next))
    }

    fn write_sched_data(&self, p: &P, cpu: CpuId, next: Option<TaskId>) {
        let cs = self.common.cpu(cpu);
        p.touch(Line::CpuData(cpu), Access::Write);
        cs.set_curr(next);
        let pb = &self.published[cpu];
        match next {
            Some(n) => {
                p.touch(Line::Task(n), Access::Write);
                let ns = self.common.tasks.get(n);
                ns.set_has_cpu(true);
                p.charge(Work::Goodness);
                cs.curr_na_goodness.store(na_goodness(ns), Relaxed);
                self.set_non_idle(p, pb, true);
            }
            None => {
                cs.curr_na_goodness.store(MIN_GOODNESS, Relaxed);
                self.set_non_idle(p, pb, false);
            }
        }
    }

    /// Record whether this CPU runs a task; with PMQS's bitmap, a change of state is a
    /// locked bit operation on the machine-wide word.
    fn set_non_idle(&self, p: &P, pb: &RqPublished, non_idle: bool) {
        if pb.running_non_idle.swap(non_idle, Relaxed) != non_idle && self.idle_map {
            p.touch(Line::IdleMap, Access::Write);
        }
    }

    /// The uncharged structural check of one queue: the list itself ([`ListChecker`])
    /// and the MQS fields beside it (`nt_running`, `max_na_*`, `processor` of members).
    fn check_queue(&self, q: usize, rq: &MqRq, checker: &mut ListChecker) -> Result<(), String> {
        let tasks = &self.common.tasks;
        if rq.list.queue() != q {
            return Err(format!("queue {q}: list says queue {}", rq.list.queue()));
        }
        let n = checker.list(&self.common, &rq.list).map_err(|e| e.0)?;
        for t in rq.list.iter(tasks) {
            let ts = tasks.get(t);
            if ts.processor() != q {
                return Err(format!("task {t} is on queue {q} but processor = {}", ts.processor()));
            }
        }
        let published = self.published[q].nt_running.load(Relaxed) as usize;
        if n != rq.list.len() || n != rq.nt_running || n != published || n != self.common.queue_len(q) {
            return Err(format!(
                "queue {q}: walk {n}, len {}, nt_running {}, published {published}/{}",
                rq.list.len(),
                rq.nt_running,
                self.common.queue_len(q)
            ));
        }
        let pb = &self.published[q];
        if pb.max_na_goodness.load(Relaxed) != rq.max_na_goodness {
            return Err(format!("queue {q}: published max_na_goodness differs"));
        }
        match rq.max_na_ptr {
            Some(t) => {
                let ts = tasks.get(t);
                if ts.on_rq() != Some(q) {
                    return Err(format!("queue {q}: max_na task {t} is on {:?}", ts.on_rq()));
                }
                if ts.has_cpu() {
                    return Err(format!("queue {q}: max_na task {t} is running"));
                }
                if rq.max_na_goodness == MIN_GOODNESS {
                    return Err(format!("queue {q}: max_na task {t} with MIN_GOODNESS"));
                }
                if pb.max_na_cpus_allowed.load(Relaxed) != rq.max_na_cpus_allowed.0
                    || rq.max_na_cpus_allowed != ts.cpus_allowed()
                {
                    return Err(format!("queue {q}: max_na_cpus_allowed is not task {t}'s"));
                }
            }
            None if rq.max_na_goodness != MIN_GOODNESS => {
                return Err(format!("queue {q}: max_na_goodness without a task"));
            }
            None => {}
        }
        Ok(())
    }
}

/// Index of the smallest value `< bound` (first on ties), if any.
#[inline]
fn lowest_below(list: &[i32], bound: i32) -> Option<usize> {
    let (mut best, mut low) = (None, bound);
    for (i, &v) in list.iter().enumerate() {
        if v < low {
            (best, low) = (Some(i), v);
        }
    }
    best
}

/// Index of the largest value `> bound` (first on ties), if any.
#[inline]
fn highest_above(list: &[i32], bound: i32) -> Option<usize> {
    let (mut best, mut high) = (None, bound);
    for (i, &v) in list.iter().enumerate() {
        if v > high {
            (best, high) = (Some(i), v);
        }
    }
    best
}

impl<P: Platform> Policy<P> for Mqs<P> {
    fn name(&self) -> &str {
        Kind::NAME
    }
    fn tasks(&self) -> &TaskTable {
        &self.common.tasks
    }

    /// 2.4's `schedule()` ([`common::schedule`]) with MQS's two-phase pick.
    fn schedule(&self, p: &P, prev: Option<TaskId>, prev_state: PrevState) -> Option<TaskId> {
        common::schedule(self, p, prev, prev_state)
    }

    fn wake_up(&self, p: &P, id: TaskId, sync: bool) {
        p.charge(Work::WakeupEntry);
        let here = p.this_cpu();
        // The task's line is written with the queue header's, overlapped.
        common::with_task_queue_waking(p, &self.common.tasks, &self.rqs, id, |rq| {
            let ts = self.common.tasks.get(id);
            if ts.on_rq().is_some() {
                return;
            }
            // A synchronous wakeup of a task allowed here skips placement: the waker is
            // about to sleep, and the task stays on its own queue.
            if !sync || !ts.cpus_allowed().contains(here) {
                self.reschedule_idle(p, id, rq);
            } else {
                self.add_to_runqueue(p, rq, id, true);
            }
        });
    }

    fn task_new(&self, p: &P, id: TaskId, params: &TaskParams, parent: Option<TaskId>) {
        self.common.task_new(p, id, params, parent);
    }

    fn tick(&self, p: &P, curr: Option<TaskId>) -> bool {
        let need_resched = self.common.tick(p, curr);
        if let Some(t) = curr {
            // Keep curr_na_goodness current so that wakeups on other CPUs compare
            // against the running task's remaining quantum.
            let cpu = p.this_cpu();
            let cs = self.common.cpu(cpu);
            if cs.curr_na_goodness.load(Relaxed) != MIN_GOODNESS {
                p.charge(Work::Goodness);
                p.touch(Line::CpuData(cpu), Access::Write);
                cs.curr_na_goodness.store(na_goodness(self.common.tasks.get(t)), Relaxed);
            }
        }
        need_resched
    }

    fn yield_now(&self, p: &P, curr: TaskId) {
        // Pending tasks machine-wide: queued minus running, read without locks.
        let mut pending = 0i64;
        for q in 0..self.common.ncpus() {
            p.charge(Work::Examine);
            p.touch(Line::Queue(q), Access::Read);
            let pb = &self.published[q];
            pending += pb.nt_running.load(Relaxed) as i64;
            pending -= pb.running_non_idle.load(Relaxed) as i64;
        }
        if pending <= 0 {
            return;
        }
        let tasks = &self.common.tasks;
        p.touch(Line::Task(curr), Access::Write);
        let t = tasks.get(curr);
        if t.class() == SchedClass::Other {
            t.set_yielded(true);
        }
        task_state::resched_task(p, p.this_cpu(), Some(curr));
        self.with_task_rq(p, curr, |rq| {
            if rq.list.contains(tasks, curr) {
                p.charge(Work::ListOp);
                rq.list.move_to_back(p, tasks, curr);
            }
        });
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        self.common.stats24()
    }
    fn task_stats(&self, t: TaskId) -> Vec<(&'static str, u64)> {
        self.common.task_stats24(t)
    }
    fn nr_queues(&self) -> usize {
        self.common.ncpus()
    }
    fn queue_len(&self, q: usize) -> usize {
        self.common.queue_len(q)
    }

    fn check_invariants(&self) -> Result<(), InvariantViolation> {
        let tasks = &self.common.tasks;
        let hw = tasks.high_water() as usize;
        let mut checker = ListChecker::new(&self.common);
        for (q, lock) in self.rqs.iter().enumerate() {
            lock.inspect(|rq| self.check_queue(q, rq, &mut checker))?;
        }
        checker.finish(&self.common)?;
        let mut running_on: Vec<Option<CpuId>> = vec![None; hw];
        for cpu in 0..self.common.ncpus() {
            let cs = self.common.cpu(cpu);
            let na = cs.curr_na_goodness.load(Relaxed);
            let non_idle = self.published[cpu].running_non_idle.load(Relaxed);
            match cs.curr() {
                Some(t) => {
                    let slot =
                        running_on.get_mut(t as usize).ok_or_else(|| format!("cpu {cpu} runs unknown task {t}"))?;
                    if let Some(other) = slot.replace(cpu) {
                        return Err(format!("task {t} is curr of cpus {other} and {cpu}").into());
                    }
                    let ts = tasks.get(t);
                    if !ts.has_cpu() || ts.on_rq() != Some(cpu) {
                        return Err(format!(
                            "cpu {cpu} runs task {t} with has_cpu {} on queue {:?}",
                            ts.has_cpu(),
                            ts.on_rq()
                        )
                        .into());
                    }
                    if na == MIN_GOODNESS || !non_idle {
                        return Err(format!("cpu {cpu} runs task {t} but looks idle").into());
                    }
                }
                None if na != MIN_GOODNESS || non_idle => {
                    return Err(format!("cpu {cpu} is idle but curr_na_goodness = {na}").into());
                }
                None => {}
            }
        }
        for t in tasks.live_ids() {
            let ts = tasks.get(t);
            if ts.has_cpu() && running_on[t as usize] != Some(ts.processor()) {
                return Err(format!("task {t} has_cpu but is not curr of cpu {}", ts.processor()).into());
            }
        }
        Ok(())
    }
}

impl<P: Platform> Hooks24<P> for Mqs<P> {
    type Rq = MqRq;
    fn common(&self) -> &SchedCommon {
        &self.common
    }
    /// `prev->active_mm`: `switch_to` keeps the CPU's `active_mm` equal to it.
    fn this_mm(&self, p: &P, cpu: CpuId, _: Option<TaskId>) -> u32 {
        p.touch(Line::CpuData(cpu), Access::Read);
        self.common.cpu(cpu).active_mm.load(Relaxed)
    }
    fn lock_local<R>(&self, p: &P, cpu: CpuId, f: impl FnOnce(&mut MqRq) -> R) -> R {
        self.rqs[cpu].with(p, f)
    }
    fn list(rq: &mut MqRq) -> &mut RunList {
        &mut rq.list
    }
    /// max_na is recomputed by the scan that follows.
    fn unlink(&self, p: &P, rq: &mut MqRq, t: TaskId) {
        self.del_from_runqueue(p, rq, t, false);
    }

    /// Phase 1 on the local queue, phase 2 on the pool's remote queues, then
    /// `update_sched_data`. A runnable `prev` that may no longer run here is taken off
    /// this queue (displaced) for `schedule_tail` to place.
    fn pick(
        &self,
        p: &P,
        rq: &mut MqRq,
        cpu: CpuId,
        prev: Option<TaskId>,
        prev_state: PrevState,
        this_mm: u32,
    ) -> Option<Picked> {
        let (next, mut c) = self.scan_runqueue(p, rq, cpu, prev, this_mm);
        let next = if self.pool > 1 { self.examine_rmt_rqs(p, rq, cpu, &mut c, next) } else { next };
        if c == 0 {
            return None;
        }
        self.update_sched_data(p, cpu, next);
        let mut displaced = false;
        if let Some(t) = prev.filter(|_| prev_state == PrevState::Runnable) {
            let tasks = &self.common.tasks;
            let ts = tasks.get(t);
            if !ts.cpus_allowed().contains(cpu) && rq.list.contains(tasks, t) {
                self.del_from_runqueue(p, rq, t, true);
                let allowed = ts.cpus_allowed();
                // Stay in this pool if possible (PMQS); MQS's pool is everything.
                let first =
                    self.pool_of(cpu).chain(0..self.common.ncpus()).find(|&c| allowed.contains(c)).unwrap_or(cpu);
                ts.set_processor(first);
                displaced = true;
            }
        }
        Some(Picked { next, displaced })
    }

    /// Another CPU may have stolen and started `t` meanwhile, and it may even have
    /// blocked there since: [`SchedCommon::still_to_place`] decides.
    fn place_prev(&self, p: &P, t: TaskId, displaced: bool) {
        self.with_task_rq(p, t, |rq| {
            if self.common.still_to_place(t, displaced) {
                self.reschedule_idle(p, t, rq);
            }
        });
    }
}
