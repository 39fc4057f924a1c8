//! The default scheduler ("fast"): work stealing with a LIFO slot.
//!
//! * Each worker owns a FIFO `crossbeam_deque::Worker` (others steal half of it
//!   from the front) and a **LIFO slot**: a task woken *by a task running on this
//!   worker* goes there and runs next, so a message hand-off (A sends to B, A waits)
//!   stays on one core with hot caches and no cross-core wake-up.
//! * **Starvation cap**: at most [`LIFO_CAP`] consecutive LIFO picks — but only while
//!   something else is waiting (local deque, inbox or injector non-empty). Tokio
//!   always demotes the LIFO task after 3 picks, which pushes a ping-pong pair onto
//!   the stealable queue and bounces it between cores; here the cap only bites when
//!   another task would otherwise starve.
//! * A global **injector** for wakes from outside the runtime, and a per-worker
//!   **inbox** for placement hints (`spawn_on`); both are stealable.
//! * Every [`GLOBAL_INTERVAL`] picks the worker looks at its inbox and the injector
//!   first, so a busy local queue cannot starve outside wakes.
//! * Stealing starts at a random victim (xorshift per worker).
//! * Idle: spin for `spin` (default 50 µs: a futex wake of an idle vCPU costs tens of
//!   µs here), then register as a sleeper, re-check, park ([`crate::park`]). Producers
//!   skip the wake-up while anyone spins; a spinner that finds work and leaves more
//!   behind wakes the next sleeper.
//! * Self-woken and yielding tasks go to the back of the local deque (never the LIFO
//!   slot), so `yield_now` lets every other queued task run first.

use crate::context;
use crate::park::Idle;
use crate::stats::StatsTable;
use crate::task::{Polled, Task};
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use std::cell::Cell;
use std::sync::atomic::Ordering::Acquire;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Consecutive LIFO-slot picks allowed while other work waits.
pub const LIFO_CAP: u32 = 3;
/// Every this many picks, check the inbox and the injector first.
pub const GLOBAL_INTERVAL: u32 = 61;

pub(crate) struct Fast {
    injector: Injector<Task>,
    inboxes: Box<[Injector<Task>]>,
    stealers: Box<[Stealer<Task>]>,
    pub idle: Idle,
    /// The workers' deques, taken by their threads at start.
    deques: parking_lot::Mutex<Vec<Option<Worker<Task>>>>,
    spin: Duration,
    /// Every live task, so that shutdown can cancel idle ones (whose futures may hold
    /// wakers of each other in cycles). Sharded by spawning worker (last shard: other
    /// threads); the key is kept in the task header's `id`.
    owned: Box<[parking_lot::Mutex<Owned>]>,
    stats: StatsTable,
}

#[derive(Default)]
struct Owned {
    tasks: Vec<Option<Task>>,
    free: Vec<u32>,
}

const SHARD_SHIFT: u32 = 26;

/// Worker-local state, reachable from the thread-local context for wakes.
pub(crate) struct Local {
    index: usize,
    deque: Worker<Task>,
    lifo: Cell<Option<Task>>,
    lifo_streak: Cell<u32>,
    rng: Cell<u32>,
    /// The task polled last (identity only, for the switch count).
    last_polled: Cell<*const ()>,
}

impl Fast {
    pub fn new(n: usize, spin: Duration) -> Fast {
        let deques: Vec<Worker<Task>> = (0..n).map(|_| Worker::new_fifo()).collect();
        Fast {
            injector: Injector::new(),
            inboxes: (0..n).map(|_| Injector::new()).collect(),
            stealers: deques.iter().map(|d| d.stealer()).collect(),
            idle: Idle::new(n),
            deques: parking_lot::Mutex::new(deques.into_iter().map(Some).collect()),
            spin,
            owned: (0..=n).map(|_| parking_lot::Mutex::new(Owned::default())).collect(),
            stats: StatsTable::new(n),
        }
    }

    /// Record a new task in the registry (shard of the spawning worker, if any).
    pub fn register(&self, task: &Task, worker: Option<usize>) {
        let shard = worker.unwrap_or(self.owned.len() - 1).min(self.owned.len() - 1);
        let mut o = self.owned[shard].lock();
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
        task.header().id.store(((shard as u32) << SHARD_SHIFT) | slot, std::sync::atomic::Ordering::Relaxed);
    }

    fn unregister(&self, task: &Task) {
        let key = task.header().id.load(std::sync::atomic::Ordering::Relaxed);
        let (shard, slot) = ((key >> SHARD_SHIFT) as usize, key & ((1 << SHARD_SHIFT) - 1));
        let old = {
            let mut o = self.owned[shard].lock();
            o.free.push(slot);
            o.tasks[slot as usize].take()
        };
        drop(old);
    }

    /// A woken or new task. `local` is this thread's worker state if the thread is a
    /// worker of this runtime.
    pub fn schedule(&self, task: Task, local: Option<&Local>) {
        match local {
            Some(l) => {
                if let Some(prev) = l.lifo.replace(Some(task)) {
                    l.deque.push(prev);
                    self.idle.notify_one();
                }
            }
            None => {
                self.injector.push(task);
                self.idle.notify_one();
            }
        }
    }

    /// Placement hint: `task` should start on worker `w`.
    pub fn schedule_on(&self, task: Task, w: usize) {
        let w = w % self.inboxes.len();
        self.inboxes[w].push(task);
        if !self.idle.wake_worker(w) {
            self.idle.notify_one();
        }
    }

    pub fn stats(&self) -> crate::Stats {
        self.stats.sum()
    }

    pub fn debug_state(&self) -> String {
        format!(
            "live={:?} injector={} inboxes={:?} stealers={:?} spinning={} idle={:?}",
            self.owned
                .iter()
                .flat_map(|o| o.lock().tasks.iter().flatten().map(|t| t.header().state.load()).collect::<Vec<_>>())
                .collect::<Vec<_>>(),
            self.injector.len(),
            self.inboxes.iter().map(|q| q.len()).collect::<Vec<_>>(),
            self.stealers.iter().map(|q| q.len()).collect::<Vec<_>>(),
            self.idle.num_spinning(),
            self.idle
        )
    }

    /// Drop every queued task (shutdown, after the workers have stopped).
    pub fn drain(&self) {
        for shard in self.owned.iter() {
            let tasks = std::mem::take(&mut shard.lock().tasks);
            for t in tasks.into_iter().flatten() {
                t.cancel();
            }
        }
        let mut deques = self.deques.lock();
        for d in deques.iter_mut().flatten() {
            while let Some(t) = d.pop() {
                t.cancel();
            }
        }
        for q in std::iter::once(&self.injector).chain(self.inboxes.iter()) {
            loop {
                match q.steal() {
                    Steal::Success(t) => t.cancel(),
                    Steal::Retry => continue,
                    Steal::Empty => break,
                }
            }
        }
    }

    pub fn run_worker(&self, shared: &crate::Shared, index: usize) {
        let deque = self.deques.lock()[index].take().expect("worker started twice");
        let local = Local {
            index,
            deque,
            lifo: Cell::new(None),
            lifo_streak: Cell::new(0),
            rng: Cell::new(0x9E37_79B9u32.wrapping_mul(index as u32 + 1) | 1),
            last_polled: Cell::new(std::ptr::null()),
        };
        let ctx = context::Ctx { shared, worker: index, local: &local, signals: std::ptr::null() };
        context::enter(ctx, || self.worker_loop(shared, &local));
        // Give the deque back so shutdown can drain what is left in it.
        if let Some(t) = local.lifo.take() {
            local.deque.push(t);
        }
        self.deques.lock()[index] = Some(local.deque);
    }

    fn worker_loop(&self, shared: &crate::Shared, l: &Local) {
        let mut tick: u32 = 0;
        loop {
            if shared.shutdown.load(Acquire) {
                return;
            }
            tick = tick.wrapping_add(1);
            if let Some(t) = self.next_local(l, tick) {
                self.run_task(l, t);
                continue;
            }
            // Idle: spin, then sleep. (The idle "task" runs: the next poll is a switch.)
            l.last_polled.set(std::ptr::null());
            self.idle.start_spinning();
            let start = Instant::now();
            let mut found = None;
            let mut rounds = 0u32;
            loop {
                if let Some(t) = self.find_work(l) {
                    found = Some(t);
                    break;
                }
                if shared.shutdown.load(Acquire) {
                    break;
                }
                rounds += 1;
                if rounds.is_multiple_of(16) && start.elapsed() >= self.spin {
                    break;
                }
                for _ in 0..32 {
                    std::hint::spin_loop();
                }
            }
            let last = self.idle.stop_spinning();
            if let Some(t) = found {
                if last && (!l.deque.is_empty() || !self.injector.is_empty()) {
                    self.idle.notify_one();
                }
                self.run_task(l, t);
                continue;
            }
            self.idle.register(l.index);
            if shared.shutdown.load(Acquire) {
                self.idle.unregister(l.index);
                return;
            }
            if let Some(t) = self.find_work(l) {
                self.idle.unregister(l.index);
                self.run_task(l, t);
                continue;
            }
            self.stats.worker(l.index).parked();
            self.idle.sleep(l.index);
        }
    }

    fn next_local(&self, l: &Local, tick: u32) -> Option<Task> {
        if tick.is_multiple_of(GLOBAL_INTERVAL) {
            if let Some(t) = self.steal_global(l) {
                return Some(t);
            }
        }
        if let Some(t) = l.lifo.take() {
            let streak = l.lifo_streak.get();
            if streak < LIFO_CAP || (l.deque.is_empty() && self.inboxes[l.index].is_empty() && self.injector.is_empty())
            {
                l.lifo_streak.set(streak + 1);
                return Some(t);
            }
            l.deque.push(t);
        }
        l.lifo_streak.set(0);
        l.deque.pop()
    }

    fn steal_global(&self, l: &Local) -> Option<Task> {
        for q in [&self.inboxes[l.index], &self.injector] {
            loop {
                match q.steal_batch_and_pop(&l.deque) {
                    Steal::Success(t) => return Some(t),
                    Steal::Retry => continue,
                    Steal::Empty => break,
                }
            }
        }
        None
    }

    /// Look everywhere: own queues, the global queues, then steal from the others.
    fn find_work(&self, l: &Local) -> Option<Task> {
        if let Some(t) = l.lifo.take().or_else(|| l.deque.pop()) {
            return Some(t);
        }
        if let Some(t) = self.steal_global(l) {
            return Some(t);
        }
        let n = self.stealers.len();
        if n <= 1 {
            return None;
        }
        let mut x = l.rng.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        l.rng.set(x);
        let start = x as usize % n;
        loop {
            let mut retry = false;
            for k in 0..n {
                let v = (start + k) % n;
                if v == l.index {
                    continue;
                }
                // One victim queue at a time: a steal that succeeds must be returned.
                for s in 0..2 {
                    let r = if s == 0 {
                        self.stealers[v].steal_batch_and_pop(&l.deque)
                    } else {
                        self.inboxes[v].steal_batch_and_pop(&l.deque)
                    };
                    match r {
                        Steal::Success(t) => return Some(t),
                        Steal::Retry => retry = true,
                        Steal::Empty => {}
                    }
                }
            }
            if !retry {
                return None;
            }
        }
    }

    fn run_task(&self, l: &Local, t: Task) {
        let h = t.header();
        if !h.state.start_poll() {
            return;
        }
        context::set_yielded(false);
        let r = t.poll();
        let id = Arc::as_ptr(&t) as *const ();
        self.stats.worker(l.index).polled(1, l.last_polled.replace(id) != id);
        if r == Polled::Ready {
            self.unregister(&t);
        } else if h.state.finish_pending() {
            // Woken during its own poll (self-wake or yield_now): back of the queue.
            context::set_yielded(false);
            l.deque.push(t);
            self.idle.notify_one();
        }
    }
}
