//! The policy scheduler's task table: policy ids (`TaskId`, what the policy's run
//! queues hold) to tasks, ids recycled. The table has a fixed capacity
//! (`Builder::max_tasks`); spawns beyond it wait in an overflow queue and take the id
//! of the next task that exits.

use crate::task::Task;
use schedlab_core::TaskId;
use std::collections::VecDeque;

/// A spawned task that has no id yet: (task, cpu to fork on, parent).
pub(super) type Waiting = (Task, usize, Option<TaskId>);

pub(super) struct TaskTable {
    slots: Box<[parking_lot::Mutex<Option<Task>>]>,
    ids: parking_lot::Mutex<Ids>,
}

struct Ids {
    free: Vec<TaskId>,
    overflow: VecDeque<Waiting>,
}

impl TaskTable {
    pub fn new(capacity: usize) -> TaskTable {
        TaskTable {
            slots: (0..capacity).map(|_| parking_lot::Mutex::new(None)).collect(),
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
        *self.slots[id as usize].lock() = Some(task);
    }

    /// The task with policy id `id`.
    pub fn get(&self, id: TaskId) -> Task {
        self.slots[id as usize].lock().clone().expect("policy picked a task that has no slot")
    }

    /// Free `id` (its task exited). Returns the oldest waiting spawn, which now owns
    /// `id`, if any.
    pub fn release(&self, id: TaskId) -> Option<Waiting> {
        let old = self.slots[id as usize].lock().take();
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
            let t = s.lock().take();
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
