//! State every 2.4-family policy shares: the task table, per-CPU `aligned_data`,
//! HZ, and the run-queue lengths published for observation.

use crate::cpu::{CpuId, Topology};
use crate::goodness::{nice_to_ticks, recalc_counter, MIN_GOODNESS};
use crate::platform::{Access, Line, Platform, Work};
use crate::policy::PrevState;
use crate::task::{TaskId, TaskParams, TaskTable, NIL};
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

/// Common state embedded by each 2.4-family policy.
#[derive(Debug)]
pub struct SchedCommon {
    pub tasks: TaskTable,
    pub cpus: Box<[CpuSched]>,
    pub topo: Topology,
    pub hz: u32,
    /// Published run-queue lengths (tasks linked on queue `q`, running or not),
    /// written under the queue's lock, read freely by observers.
    queue_lens: Box<[AtomicU32]>,
}

impl SchedCommon {
    pub fn new(topo: &Topology, nqueues: usize, capacity: usize, hz: u32) -> SchedCommon {
        SchedCommon {
            tasks: TaskTable::new(capacity),
            cpus: (0..topo.ncpus())
                .map(|_| CpuSched {
                    curr: AtomicU32::new(NIL),
                    last_schedule: AtomicU64::new(0),
                    curr_na_goodness: AtomicI32::new(MIN_GOODNESS),
                    active_mm: AtomicU32::new(0),
                })
                .collect(),
            topo: topo.clone(),
            hz,
            queue_lens: (0..nqueues).map(|_| AtomicU32::new(0)).collect(),
        }
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
    pub fn task_new<P: Platform + ?Sized>(&self, p: &P, id: TaskId, params: &TaskParams, parent: Option<TaskId>) {
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
        let cpu = p.this_cpu();
        let cpu = if params.cpus_allowed.contains(cpu) {
            cpu
        } else {
            (0..self.ncpus()).find(|&c| params.cpus_allowed.contains(c)).unwrap_or(cpu)
        };
        self.tasks.init(id, params, cpu, counter);
    }

    /// `update_process_times` for the running task: decrement the counter and ask for
    /// a reschedule when the quantum is used up. Returns `need_resched`.
    pub fn tick<P: Platform + ?Sized>(&self, p: &P, curr: Option<TaskId>) -> bool {
        p.charge(Work::Tick);
        let Some(t) = curr else { return false };
        p.touch(Line::Task(t), Access::Write);
        let ts = self.tasks.get(t);
        let c = ts.counter() - 1;
        if c <= 0 {
            ts.set_counter(0);
            true
        } else {
            ts.set_counter(c);
            false
        }
    }

    /// Recalculate every task's counter when all runnable counters are exhausted:
    /// `counter = counter/2 + NICE_TO_TICKS(nice)` for *all* tasks, sleeping ones too
    /// (2.4 does this outside the run-queue lock, under `tasklist_lock`).
    pub fn recalculate<P: Platform + ?Sized>(&self, p: &P) {
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
    pub fn switch_to<P: Platform + ?Sized>(
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
        c.last_schedule.store(p.now(), Relaxed);
        yielded
    }
}
