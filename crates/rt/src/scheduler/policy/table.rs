//! The policy scheduler's task table: policy ids (`TaskId`, what the policy's run
//! queues hold) to tasks, ids recycled. The table has a fixed capacity
//! (`Builder::max_tasks`); spawns beyond it wait in an overflow queue and take the id
//! of the next task that exits.

use crate::task::Task;
use schedlab_core::TaskId;
use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Release};

/// A spawned task that has no id yet: (task, cpu to fork on, parent).
pub(super) type Waiting = (Task, usize, Option<TaskId>);

pub(super) struct TaskTable {
    slots: Box<[Slot]>,
    ids: parking_lot::Mutex<Ids>,
}

struct Slot {
    task: parking_lot::Mutex<Option<Task>>,
    /// Bumped by every [`TaskTable::insert`]: a worker that kept a reference to the
    /// slot's task (worker.rs, `Recent`) checks with one load that it is still the task
    /// with this id, instead of taking the lock and counting a new reference (four
    /// locked operations per poll).
    generation: AtomicU64,
}

struct Ids {
    free: Vec<TaskId>,
    overflow: VecDeque<Waiting>,
}

impl TaskTable {
    pub fn new(capacity: usize) -> TaskTable {
        TaskTable {
            slots: (0..capacity)
                .map(|_| Slot { task: parking_lot::Mutex::new(None), generation: AtomicU64::new(0) })
                .collect(),
            ids: parking_lot::Mutex::new(Ids {
                free: (0..capacity as TaskId).rev().collect(),
                overflow: VecDeque::new(),
            }),
        }
    }

    /// A free id for `spawn`, or `None` when the table is full: then `spawn` waits in
    /// the overflow queue (and comes back from [`TaskTable::release`]).
    pub fn alloc(&self, spawn: Waiting) -> Option<(Waiting, TaskId)> {
        let mut ids = self.ids.lock();
        match ids.free.pop() {
            Some(id) => Some((spawn, id)),
            None => {
                ids.overflow.push_back(spawn);
                None
            }
        }
    }

    pub fn insert(&self, id: TaskId, task: Task) {
        let s = &self.slots[id as usize];
        let mut t = s.task.lock();
        *t = Some(task);
        // Under the lock, so that `get` reads a generation and task that belong together.
        s.generation.store(s.generation.load(Acquire).wrapping_add(1), Release);
    }

    /// The task with policy id `id` and the generation of its slot.
    pub fn get(&self, id: TaskId) -> (Task, u64) {
        let s = &self.slots[id as usize];
        let t = s.task.lock();
        let task = t.clone().expect("policy picked a task that has no slot");
        (task, s.generation.load(Acquire))
    }

    /// The generation of slot `id`: equal to what [`TaskTable::get`] returned if no task
    /// has been inserted since. (Whoever learnt `id` from the policy after the insert
    /// sees the new value: the policy's own locks order the insert before.)
    #[inline]
    pub fn generation(&self, id: TaskId) -> u64 {
        self.slots[id as usize].generation.load(Acquire)
    }

    /// Free `id` (its task exited). Returns the oldest waiting spawn, which now owns
    /// `id`, if any.
    pub fn release(&self, id: TaskId) -> Option<Waiting> {
        let old = self.slots[id as usize].task.lock().take();
        let next = {
            let mut ids = self.ids.lock();
            match ids.overflow.pop_front() {
                Some(x) => Some(x),
                None => {
                    ids.free.push(id);
                    None
                }
            }
        };
        // Dropped outside both locks: it may be the last reference to the task.
        drop(old);
        next
    }

    /// Cancel every task still in the table or waiting for an id (shutdown).
    pub fn cancel_all(&self) {
        for s in self.slots.iter() {
            let t = s.task.lock().take();
            if let Some(t) = t {
                t.cancel();
            }
        }
        let overflow: Vec<_> = self.ids.lock().overflow.drain(..).collect();
        for (t, _, _) in overflow {
            t.cancel();
        }
    }
}
