//! DSS: the Linux 2.4 default SMP scheduler (Linux 2.4 `kernel/sched.c`,
//! S5 in docs/sources.md).
//!
//! One global run list (`runqueue_head`; new and woken tasks go to the front) under
//! one global `runqueue_lock`. Running tasks stay on the list. `schedule()` scans the
//! *whole* list under the lock computing `goodness()` for every task that may run on
//! this CPU; when every runnable SCHED_OTHER counter is 0 it recalculates the counters
//! of *all* tasks. `reschedule_idle()` sends a woken task to its last CPU if idle, else
//! to the longest-idle allowed CPU, else preempts the CPU with the best
//! `preemption_goodness` above the threshold (`preempt_threshold`, default 1: 2.4.7).

use crate::common::{self, can_schedule, Hooks24, ListChecker, Opts24, Picked, SchedCommon};
use crate::cpu::{CpuId, Topology};
use crate::goodness::{goodness, preemption_goodness, MIN_GOODNESS};
use crate::platform::{Access, Line, Platform, SchedLock, Work};
use crate::policies::{BuildEnv, PolicyKind};
use crate::policy::{InvariantViolation, Policy, PrevState};
use crate::runlist::{PrevLink, RunList};
use crate::spec::SpecError;
use crate::task::{SchedClass, TaskId, TaskParams, TaskTable};
use crate::task_state;
use std::sync::atomic::Ordering::Relaxed;

/// The registry entry.
pub struct Kind;

impl PolicyKind for Kind {
    const NAME: &'static str = "dss";
    const SUMMARY: &'static str = "Linux 2.4's scheduler: one global run queue and lock, goodness() over every task";
    type Config = Opts24;

    fn build<P: Platform>(opts: &Opts24, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError> {
        Ok(Box::new(Dss::with_opts(p, env.topo, env.capacity, env.hz, *opts)))
    }
}

/// The single run queue is queue 0.
const RQ: usize = 0;

pub struct Dss<P: Platform> {
    common: SchedCommon,
    runqueue: P::Lock<RunList>,
}

impl<P: Platform> Dss<P> {
    /// DSS with the default options (2.4.7's preemption threshold).
    pub fn new(p: &P, topo: &Topology, capacity: usize, hz: u32) -> Self {
        Self::with_opts(p, topo, capacity, hz, Opts24::default())
    }

    pub fn with_opts(p: &P, topo: &Topology, capacity: usize, hz: u32, opts: Opts24) -> Self {
        Dss {
            common: SchedCommon::new(p, topo, 1, capacity, hz).with_opts(opts),
            runqueue: p.new_lock("runqueue_lock", RunList::new(RQ, PrevLink::OwnLine)),
        }
    }

    /// `reschedule_idle(p)`, called with the run-queue lock held.
    fn reschedule_idle(&self, p: &P, t: TaskId) {
        let tasks = &self.common.tasks;
        let ts = tasks.get(t);
        p.touch(Line::Task(t), Access::Read);
        let best = ts.processor();
        if ts.cpus_allowed().contains(best) {
            p.touch(Line::CpuData(best), Access::Read);
            if self.common.cpu(best).curr().is_none() {
                task_state::resched_task(p, best, None);
                return;
            }
        }
        let mut oldest_idle: Option<(u64, CpuId)> = None;
        // 2.4 starts `max_prio` at the threshold; "above the threshold and above the
        // best so far" is the same test.
        let mut preempt: Option<(i32, CpuId, TaskId)> = None;
        for cpu in 0..self.common.ncpus() {
            if !ts.cpus_allowed().contains(cpu) {
                continue;
            }
            p.charge(Work::Examine);
            p.touch(Line::CpuData(cpu), Access::Read);
            let cs = self.common.cpu(cpu);
            match cs.curr() {
                None => {
                    let last = cs.last_schedule.load(Relaxed);
                    if oldest_idle.is_none_or(|(t0, _)| last < t0) {
                        oldest_idle = Some((last, cpu));
                    }
                }
                Some(curr) if oldest_idle.is_none() => {
                    p.touch(Line::Task(curr), Access::Read);
                    p.charge(Work::Goodness);
                    p.charge(Work::Goodness);
                    let prio = preemption_goodness(tasks.get(curr), ts, cpu);
                    if self.common.preempts(prio) && preempt.is_none_or(|(max_prio, _, _)| prio > max_prio) {
                        preempt = Some((prio, cpu, curr));
                    }
                }
                Some(_) => {}
            }
        }
        if let Some((_, cpu)) = oldest_idle {
            task_state::resched_task(p, cpu, None);
        } else if let Some((_, cpu, curr)) = preempt {
            self.common.note_wakeup_preemption();
            task_state::resched_task(p, cpu, Some(curr));
        }
    }
}

impl<P: Platform> Policy<P> for Dss<P> {
    fn name(&self) -> &str {
        Kind::NAME
    }
    fn tasks(&self) -> &TaskTable {
        &self.common.tasks
    }

    fn task_new(&self, p: &P, id: TaskId, params: &TaskParams, parent: Option<TaskId>) {
        self.common.task_new(p, id, params, parent);
    }

    fn wake_up(&self, p: &P, id: TaskId, sync: bool) {
        p.charge(Work::WakeupEntry);
        self.runqueue.with(p, |rq| {
            // `runqueue_head` and `p` itself: 2.4's `try_to_wake_up` has the addresses
            // before it loads any (`p->state` on the structure's first line,
            // `task_on_runqueue(p)` and `list_add` on its hot line), so the misses
            // overlap. `reschedule_idle` then reads `p->processor`
            // and the per-CPU data it names: dependent loads, charged after.
            let queued = p.overlapped(|| {
                p.touch(Line::Queue(RQ), Access::Write);
                task_state::touch_state(p, Some(id), p.this_cpu(), Access::Write);
                if rq.contains(&self.common.tasks, id) {
                    return true;
                }
                p.touch(Line::Task(id), Access::Write);
                false
            });
            if queued {
                return;
            }
            p.charge(Work::ListOp);
            rq.push_front(p, &self.common.tasks, id);
            self.common.publish_len(RQ, rq.len());
            let here_ok = self.common.tasks.get(id).cpus_allowed().contains(p.this_cpu());
            if !sync || !here_ok {
                self.reschedule_idle(p, id);
            }
        });
    }

    fn schedule(&self, p: &P, prev: Option<TaskId>, prev_state: PrevState) -> Option<TaskId> {
        common::schedule(self, p, prev, prev_state)
    }

    fn tick(&self, p: &P, curr: Option<TaskId>) -> bool {
        self.common.tick(p, curr)
    }

    /// `sys_sched_yield`: count the pending tasks without the lock (`nr_running` minus
    /// the CPUs running a task; 2.4: "this test does not have to be atomic") and return
    /// at once if there are none. Otherwise set SCHED_YIELD and `need_resched`, and move
    /// the task to the back of the list under the lock.
    fn yield_now(&self, p: &P, curr: TaskId) {
        p.touch(Line::Queue(RQ), Access::Read);
        let mut pending = self.common.queue_len(RQ) as i64;
        for cpu in 0..self.common.ncpus() {
            p.charge(Work::Examine);
            p.touch(Line::CpuData(cpu), Access::Read);
            pending -= self.common.cpu(cpu).curr().is_some() as i64;
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
        self.runqueue.with(p, |rq| {
            p.touch(Line::Queue(RQ), Access::Write);
            if rq.contains(tasks, curr) {
                p.charge(Work::ListOp);
                rq.move_to_back(p, tasks, curr);
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
        1
    }
    fn queue_len(&self, q: usize) -> usize {
        self.common.queue_len(q)
    }
    fn check_invariants(&self) -> Result<(), InvariantViolation> {
        let mut check = ListChecker::new(&self.common);
        self.runqueue.inspect(|rq| check.list(&self.common, rq))?;
        check.finish(&self.common)
    }
}

impl<P: Platform> Hooks24<P> for Dss<P> {
    type Rq = RunList;
    fn common(&self) -> &SchedCommon {
        &self.common
    }
    /// 2.4 passes `prev->active_mm`: the running task's own `mm`, or the one the idle
    /// task borrowed.
    fn this_mm(&self, _: &P, cpu: CpuId, prev: Option<TaskId>) -> u32 {
        match prev {
            Some(t) => self.common.tasks.get(t).mm(),
            None => self.common.cpu(cpu).active_mm.load(Relaxed),
        }
    }
    fn lock_local<R>(&self, p: &P, _: CpuId, f: impl FnOnce(&mut RunList) -> R) -> R {
        self.runqueue.with(p, f)
    }
    fn list(rq: &mut RunList) -> &mut RunList {
        rq
    }
    fn unlink(&self, p: &P, rq: &mut RunList, t: TaskId) {
        p.charge(Work::ListOp);
        rq.remove(p, &self.common.tasks, t);
        self.common.publish_len(RQ, rq.len());
    }

    /// The whole list, `goodness()` for every task that may run here; `prev`, if still
    /// runnable, starts as the candidate to beat.
    fn pick(
        &self,
        p: &P,
        rq: &mut RunList,
        cpu: CpuId,
        prev: Option<TaskId>,
        prev_state: PrevState,
        this_mm: u32,
    ) -> Option<Picked> {
        let tasks = &self.common.tasks;
        let (mut next, mut c) = (None, MIN_GOODNESS);
        if let Some(t) = prev.filter(|_| prev_state == PrevState::Runnable) {
            p.charge(Work::Goodness);
            c = goodness(tasks.get(t), cpu, this_mm);
            next = Some(t);
        }
        let mut cur = rq.first();
        while let Some(t) = cur {
            p.touch(Line::Task(t), Access::Read);
            let ts = tasks.get(t);
            if can_schedule(ts, t, cpu, prev) {
                p.charge(Work::Goodness);
                let w = goodness(ts, cpu, this_mm);
                if w > c {
                    c = w;
                    next = Some(t);
                }
            }
            cur = rq.next_of(ts);
        }
        if c == 0 {
            return None;
        }
        // Claim `next` while still holding the lock (2.4 sets has_cpu here), so no
        // other CPU can pick it between the unlock and the switch.
        if let Some(n) = next {
            p.touch(Line::Task(n), Access::Write);
            tasks.get(n).set_has_cpu(true);
        }
        Some(Picked { next, displaced: false })
    }

    fn place_prev(&self, p: &P, t: TaskId, _displaced: bool) {
        self.runqueue.with(p, |_| {
            if self.common.still_to_place(t, false) {
                self.reschedule_idle(p, t)
            }
        });
    }
}
