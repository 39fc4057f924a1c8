//! The fast scheduler's registry of live tasks.
//!
//! The work-stealing queues only hold tasks that are runnable; an idle task lives in
//! whatever holds its wakers. Those may form cycles (two tasks waiting on each other's
//! channels), so shutdown cannot rely on dropping queues: it cancels every task still
//! registered here. Sharded by spawning worker (last shard: other threads) so that
//! spawns on different workers do not contend; a task's key (shard and slot) is kept
//! in its header's `id`.

use crate::task::Task;
use std::sync::atomic::Ordering::Relaxed;

/// Bits of the key that are the slot; the rest is the shard.
const SHARD_SHIFT: u32 = 26;

pub(super) struct OwnedTasks {
    shards: Box<[parking_lot::Mutex<Shard>]>,
}

#[derive(Default)]
struct Shard {
    tasks: Vec<Option<Task>>,
    free: Vec<u32>,
}

impl OwnedTasks {
    /// Shards for `nworkers` workers plus one for other threads.
    pub fn new(nworkers: usize) -> OwnedTasks {
        OwnedTasks { shards: (0..=nworkers).map(|_| parking_lot::Mutex::new(Shard::default())).collect() }
    }

    /// Record a new task (in the shard of the spawning worker, if any).
    pub fn register(&self, task: &Task, worker: Option<usize>) {
        let shard = worker.unwrap_or(self.shards.len() - 1).min(self.shards.len() - 1);
        let mut o = self.shards[shard].lock();
        let slot = match o.free.pop() {
            Some(i) => {
                o.tasks[i as usize] = Some(task.clone());
                i
            }
            None => {
                o.tasks.push(Some(task.clone()));
                (o.tasks.len() - 1) as u32
            }
        };
        drop(o);
        task.header().id.store(((shard as u32) << SHARD_SHIFT) | slot, Relaxed);
    }

    /// Forget a finished task.
    pub fn unregister(&self, task: &Task) {
        let key = task.header().id.load(Relaxed);
        let (shard, slot) = ((key >> SHARD_SHIFT) as usize, key & ((1 << SHARD_SHIFT) - 1));
        let old = {
            let mut o = self.shards[shard].lock();
            o.free.push(slot);
            o.tasks[slot as usize].take()
        };
        // Dropped outside the lock: it may be the last reference to the task.
        drop(old);
    }

    /// Cancel every registered task (shutdown, after the workers have stopped).
    pub fn cancel_all(&self) {
        for shard in self.shards.iter() {
            let tasks = std::mem::take(&mut shard.lock().tasks);
            for t in tasks.into_iter().flatten() {
                t.cancel();
            }
        }
    }

    /// The states of the live tasks (debugging).
    pub fn states(&self) -> Vec<u8> {
        self.shards
            .iter()
            .flat_map(|o| o.lock().tasks.iter().flatten().map(|t| t.header().state.load()).collect::<Vec<_>>())
            .collect()
    }
}
