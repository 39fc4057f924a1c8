//! DSS: the Linux 2.4 default SMP scheduler (spec §1.1, `kernel/sched.c`).
//!
//! One global run list (`runqueue_head`; new and woken tasks go to the front) under
//! one global `runqueue_lock`. Running tasks stay on the list. `schedule()` scans the
//! *whole* list under the lock computing `goodness()` for every task that may run on
//! this CPU; when every runnable SCHED_OTHER counter is 0 it recalculates the counters
//! of *all* tasks. `reschedule_idle()` sends a woken task to its last CPU if idle, else
//! to the longest-idle allowed CPU, else preempts the CPU with the best
//! `preemption_goodness > 1`.

use crate::cpu::{CpuId, Topology};
use crate::goodness::{goodness, nice_to_ticks, preemption_goodness, MIN_GOODNESS};
use crate::percpu::SchedCommon;
use crate::platform::{Access, Line, Platform, SchedLock, Work};
use crate::policy::{Policy, PrevState};
use crate::runlist::RunList;
use crate::task::{SchedClass, TaskId, TaskParams, TaskTable};
use std::sync::atomic::Ordering::Relaxed;

/// The single run queue is queue 0.
const RQ: usize = 0;

pub struct Dss<P: Platform> {
    common: SchedCommon,
    runqueue: P::Lock<RunList>,
}

impl<P: Platform> Dss<P> {
    pub fn new(p: &P, topo: &Topology, capacity: usize, hz: u32) -> Self {
        Dss { common: SchedCommon::new(topo, 1, capacity, hz), runqueue: p.new_lock("runqueue_lock", RunList::new(RQ)) }
    }

    /// `can_schedule(t, cpu)`: allowed here and not running elsewhere (prev, running
    /// here, is schedulable).
    #[inline]
    fn can_schedule(&self, t: TaskId, cpu: CpuId, prev: Option<TaskId>) -> bool {
        let ts = self.common.tasks.get(t);
        ts.cpus_allowed().contains(cpu) && (!ts.has_cpu() || Some(t) == prev)
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
                p.resched(best);
                return;
            }
        }
        let mut oldest_idle: Option<(u64, CpuId)> = None;
        let mut preempt: Option<CpuId> = None;
        let mut max_prio = 1;
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
                    if prio > max_prio {
                        max_prio = prio;
                        preempt = Some(cpu);
                    }
                }
                Some(_) => {}
            }
        }
        if let Some((_, cpu)) = oldest_idle {
            p.resched(cpu);
        } else if let Some(cpu) = preempt {
            p.resched(cpu);
        }
    }
}

impl<P: Platform> Policy<P> for Dss<P> {
    fn name(&self) -> &str {
        "dss"
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
            p.touch(Line::Queue(RQ), Access::Write);
            if rq.contains(&self.common.tasks, id) {
                return;
            }
            p.touch(Line::Task(id), Access::Write);
            p.charge(Work::ListOp);
            rq.push_front(&self.common.tasks, id);
            self.common.publish_len(RQ, rq.len());
            let here_ok = self.common.tasks.get(id).cpus_allowed().contains(p.this_cpu());
            if !sync || !here_ok {
                self.reschedule_idle(p, id);
            }
        });
    }

    fn schedule(&self, p: &P, prev: Option<TaskId>, prev_state: PrevState) -> Option<TaskId> {
        let cpu = p.this_cpu();
        let tasks = &self.common.tasks;
        p.charge(Work::ScheduleEntry);
        let this_mm = match prev {
            Some(t) => tasks.get(t).mm(),
            None => self.common.cpu(cpu).active_mm.load(Relaxed),
        };
        let prev_runnable = prev.filter(|_| prev_state == PrevState::Runnable);
        let mut first_pass = true;
        let next = loop {
            let (next, c) = self.runqueue.with(p, |rq| {
                p.touch(Line::Queue(RQ), Access::Write);
                if first_pass {
                    if let Some(t) = prev {
                        let ts = tasks.get(t);
                        p.touch(Line::Task(t), Access::Write);
                        if prev_state == PrevState::Runnable && ts.class() == SchedClass::Rr && ts.counter() == 0 {
                            ts.set_counter(nice_to_ticks(ts.nice(), self.common.hz));
                            p.charge(Work::ListOp);
                            rq.move_to_back(tasks, t);
                        }
                        if prev_state != PrevState::Runnable && rq.contains(tasks, t) {
                            p.charge(Work::ListOp);
                            rq.remove(tasks, t);
                            self.common.publish_len(RQ, rq.len());
                        }
                    }
                }
                let (mut next, mut c) = (None, MIN_GOODNESS);
                if let Some(t) = prev_runnable {
                    p.charge(Work::Goodness);
                    c = goodness(tasks.get(t), cpu, this_mm);
                    next = Some(t);
                }
                let mut cur = rq.first();
                while let Some(t) = cur {
                    p.touch(Line::Task(t), Access::Read);
                    if self.can_schedule(t, cpu, prev) {
                        p.charge(Work::Goodness);
                        let w = goodness(tasks.get(t), cpu, this_mm);
                        if w > c {
                            c = w;
                            next = Some(t);
                        }
                    }
                    cur = rq.next(tasks, t);
                }
                // Claim `next` while still holding the lock (2.4 sets has_cpu here), so
                // no other CPU can pick it between the unlock and the switch.
                if c != 0 {
                    if let Some(n) = next {
                        p.touch(Line::Task(n), Access::Write);
                        tasks.get(n).set_has_cpu(true);
                    }
                }
                (next, c)
            });
            first_pass = false;
            if c == 0 {
                self.common.recalculate(p);
                continue;
            }
            break next;
        };
        let yielded = self.common.switch_to(p, prev, prev_state, next);
        // schedule_tail: a preempted (not yielding) task may be pushed to another CPU.
        if let Some(t) = prev_runnable {
            if next != Some(t) && !yielded {
                self.runqueue.with(p, |_| {
                    // 2.4 checks `prev->state == TASK_RUNNING` under the lock: on the
                    // real runtime another CPU may have run prev and blocked it since
                    // `switch_to` (the simulator's atomic calls never see that).
                    let ts = self.common.tasks.get(t);
                    if ts.on_rq().is_some() && !ts.has_cpu() {
                        self.reschedule_idle(p, t)
                    }
                });
            }
        }
        next
    }

    fn tick(&self, p: &P, curr: Option<TaskId>) -> bool {
        self.common.tick(p, curr)
    }

    fn yield_now(&self, p: &P, curr: TaskId) {
        let tasks = &self.common.tasks;
        self.runqueue.with(p, |rq| {
            p.touch(Line::Queue(RQ), Access::Write);
            let running = (0..self.common.ncpus()).filter(|&c| self.common.cpu(c).curr().is_some()).count();
            if rq.len() > running {
                p.touch(Line::Task(curr), Access::Write);
                let t = tasks.get(curr);
                if t.class() == SchedClass::Other {
                    t.set_yielded(true);
                }
                p.charge(Work::ListOp);
                rq.move_to_back(tasks, curr);
            }
        });
    }

    fn nr_queues(&self) -> usize {
        1
    }
    fn queue_len(&self, q: usize) -> usize {
        self.common.queue_len(q)
    }
    fn check_invariants(&self) -> Result<(), String> {
        let mut check = crate::policies::ListChecker::new(&self.common);
        self.runqueue.inspect(|rq| check.list(&self.common, rq))?;
        check.finish(&self.common)
    }
}
