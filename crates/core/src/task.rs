//! Per-task scheduling state: the scheduler's part of `task_struct`.
//!
//! The fields are atomics with relaxed ordering so that one table serves both the
//! single-threaded simulator and the multi-threaded runtime. As in Linux, *which lock
//! protects a field* is policy discipline (the run-queue lock of the queue the task is
//! on); the atomics only make unsynchronised reads (MQS's lockless peeks) memory-safe.
//! Relaxed loads and stores compile to plain moves on x86.

use crate::cpu::{CpuId, CpuMask};
use crate::layout::{LayoutError, TaskLayout};
use crate::task_blocks::Slots;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI8, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

/// Dense task index, `0..capacity`. Also the task's slot in the [`TaskTable`].
pub type TaskId = u32;

/// "No task" in intrusive links.
pub const NIL: TaskId = u32::MAX;

/// Scheduling class (`p->policy` without the SCHED_YIELD bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SchedClass {
    /// SCHED_OTHER: time-shared, goodness from counter and nice.
    Other = 0,
    /// SCHED_FIFO: real-time, runs until it blocks or yields.
    Fifo = 1,
    /// SCHED_RR: real-time with a round-robin quantum.
    Rr = 2,
}

impl SchedClass {
    fn from_u8(v: u8) -> SchedClass {
        match v {
            1 => SchedClass::Fifo,
            2 => SchedClass::Rr,
            _ => SchedClass::Other,
        }
    }
    pub fn is_rt(self) -> bool {
        self != SchedClass::Other
    }
}

/// How a task is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskParams {
    /// −20..=19.
    pub nice: i8,
    pub class: SchedClass,
    /// 1..=99 for real-time classes, 0 otherwise.
    pub rt_priority: u8,
    /// Address-space id (`mm`). Tasks (threads) of one process share it; 0 = kernel thread (`mm == NULL`).
    pub mm: u32,
    pub cpus_allowed: CpuMask,
}

impl Default for TaskParams {
    fn default() -> Self {
        TaskParams { nice: 0, class: SchedClass::Other, rt_priority: 0, mm: 1, cpus_allowed: CpuMask::all() }
    }
}

/// The scheduler's fields of one task.
#[derive(Debug, Default)]
pub struct TaskSched {
    counter: AtomicI32,
    nice: AtomicI8,
    class: AtomicU8,
    yielded: AtomicBool,
    rt_priority: AtomicU8,
    processor: AtomicU32,
    mm: AtomicU32,
    cpus_allowed: AtomicU64,
    has_cpu: AtomicBool,
    live: AtomicBool,
    /// Run queue the task is linked on, plus one (0 = on no queue).
    on_rq: AtomicU32,
    /// Intrusive run-list links (Linux's `p->run_list`), guarded by that queue's lock.
    pub(crate) next: AtomicU32,
    pub(crate) prev: AtomicU32,
    /// Free word for a policy's own per-task bookkeeping (e.g. O(1)'s priority array index).
    pub aux: AtomicU64,
}

macro_rules! field {
    ($get:ident, $set:ident, $field:ident, $t:ty) => {
        #[inline]
        pub fn $get(&self) -> $t {
            self.$field.load(Relaxed)
        }
        #[inline]
        pub fn $set(&self, v: $t) {
            self.$field.store(v, Relaxed)
        }
    };
}

impl TaskSched {
    field!(counter, set_counter, counter, i32);
    field!(nice, set_nice, nice, i8);
    field!(yielded, set_yielded, yielded, bool);
    field!(rt_priority, set_rt_priority, rt_priority, u8);
    field!(mm, set_mm, mm, u32);
    field!(has_cpu, set_has_cpu, has_cpu, bool);
    field!(live, set_live, live, bool);

    #[inline]
    pub fn class(&self) -> SchedClass {
        SchedClass::from_u8(self.class.load(Relaxed))
    }
    pub fn set_class(&self, c: SchedClass) {
        self.class.store(c as u8, Relaxed)
    }
    /// Last CPU the task ran on (`p->processor`); for MQS also the queue it belongs to.
    #[inline]
    pub fn processor(&self) -> CpuId {
        self.processor.load(Relaxed) as CpuId
    }
    #[inline]
    pub fn set_processor(&self, cpu: CpuId) {
        self.processor.store(cpu as u32, Relaxed)
    }
    #[inline]
    pub fn cpus_allowed(&self) -> CpuMask {
        CpuMask(self.cpus_allowed.load(Relaxed))
    }
    pub fn set_cpus_allowed(&self, m: CpuMask) {
        self.cpus_allowed.store(m.0, Relaxed)
    }
    /// The run queue the task is linked on, if any.
    #[inline]
    pub fn on_rq(&self) -> Option<usize> {
        match self.on_rq.load(Relaxed) {
            0 => None,
            q => Some(q as usize - 1),
        }
    }
    #[inline]
    pub(crate) fn set_on_rq(&self, q: Option<usize>) {
        self.on_rq.store(q.map_or(0, |q| q as u32 + 1), Relaxed)
    }
}

/// All tasks' scheduling state, indexed by [`TaskId`]. Fixed capacity: engines
/// allocate dense ids and may recycle the ids of exited tasks. Where each task's state
/// lives in memory is the table's [`TaskLayout`], chosen at construction; policies see
/// only [`TaskTable::get`].
#[derive(Debug)]
pub struct TaskTable {
    slots: Slots,
    high_water: AtomicU32,
}

impl TaskTable {
    /// A dense table of `capacity` tasks.
    pub fn new(capacity: usize) -> TaskTable {
        TaskTable::with_layout(capacity, TaskLayout::Dense).expect("a dense task table of this capacity")
    }
    /// A table of `capacity` tasks laid out as `layout`; fails when the layout cannot
    /// hold that many ([`TaskLayout::check`]).
    pub fn with_layout(capacity: usize, layout: TaskLayout) -> Result<TaskTable, LayoutError> {
        Ok(TaskTable { slots: Slots::new(capacity, layout)?, high_water: AtomicU32::new(0) })
    }
    pub fn capacity(&self) -> usize {
        self.slots.capacity()
    }
    /// How this table lays out task state.
    pub fn layout(&self) -> TaskLayout {
        self.slots.layout()
    }
    #[inline]
    pub fn get(&self, id: TaskId) -> &TaskSched {
        self.slots.get(id as usize)
    }
    /// Initialise slot `id` for a new task (called by [`crate::Policy::task_new`]
    /// implementations through [`TaskTable::init`]).
    pub fn init(&self, id: TaskId, params: &TaskParams, cpu: CpuId, counter: i32) {
        let t = self.get(id);
        t.set_counter(counter);
        t.set_nice(params.nice.clamp(-20, 19));
        t.set_class(params.class);
        t.set_rt_priority(params.rt_priority);
        t.set_mm(params.mm);
        t.set_cpus_allowed(params.cpus_allowed);
        t.set_processor(cpu);
        t.set_yielded(false);
        t.set_has_cpu(false);
        t.set_on_rq(None);
        t.next.store(crate::task::NIL, Relaxed);
        t.prev.store(crate::task::NIL, Relaxed);
        t.aux.store(0, Relaxed);
        t.set_live(true);
        self.high_water.fetch_max(id + 1, Relaxed);
    }
    /// Ids that have ever been initialised: `0..high_water` (live or exited).
    pub fn high_water(&self) -> TaskId {
        self.high_water.load(Relaxed)
    }
    /// Every live task ("for_each_task"), in id order.
    pub fn live_ids(&self) -> impl Iterator<Item = TaskId> + '_ {
        (0..self.high_water()).filter(move |&i| self.get(i).live())
    }
}
