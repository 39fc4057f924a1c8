//! The policy adapter: run any `schedlab_core::Policy<RtPlatform>` (DSS, MQS, PMQS
//! and its balancers) as the runtime's run-queue organisation — the very code the
//! simulator runs.
//!
//! Mapping of the kernel model onto futures:
//!
//! | kernel (policy's view)          | runtime                                             |
//! |---------------------------------|-----------------------------------------------------|
//! | task id / `task_struct`         | slot in a fixed table of `Task`s, ids recycled      |
//! | `do_fork` + `wake_up_forked`    | `spawn`: `task_new(parent = spawning task)` + `wake_up` |
//! | `wake_up_process`               | a waker fires on an `IDLE` task (`IDLE → SCHEDULED`) |
//! | running                         | being polled; self-wakes re-poll it directly until `need_resched` or the poll budget |
//! | `schedule(prev, Runnable)`      | poll ended, task woke itself during it (`NOTIFIED`) |
//! | `sched_yield` + `schedule`      | `yield_now().await`                                 |
//! | `schedule(prev, Blocked)`       | poll returned `Pending` and nobody woke it          |
//! | `schedule(prev, Exited)`        | poll returned `Ready` (or panicked)                 |
//! | timer tick (`tick` + `balance`) | every `1/hz` of wall time, checked at poll boundaries and by idle workers (`park_timeout`) |
//! | `need_resched` + IPI            | `RtPlatform::resched`: flag + unpark                |
//! | preemption (return to user mode) | [`crate::preemption_point`]: a task that asks sees `need_resched` or a due tick and is switched out as still runnable |
//!
//! **No lost wake-up across `schedule(prev, Blocked)`**: DSS/MQS keep the running task
//! linked, so a waker must not call `wake_up` while the task is still `RUNNING` (the
//! policy would see it on the queue and do nothing, then `schedule` would unlink it).
//! The worker therefore calls `schedule(prev, Blocked)` while the task is still
//! `RUNNING` (wakes only mark it `NOTIFIED`), and only then tries `RUNNING → IDLE`; if
//! a wake came in meanwhile it calls `wake_up(prev)` itself.
//!
//! The task table has a fixed capacity (`Builder::max_tasks`); spawns beyond it wait
//! in an overflow queue and are admitted as ids free up.

use crate::context;
use crate::platform::{RtPlatform, Signals};
use crate::task::{Polled, Task};
use schedlab_core::{BuildEnv, Platform, Policy, PolicySource, PrevState, TaskId, TaskParams, Topology};
use std::collections::VecDeque;
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `pause` instructions between two looks at `need_resched` in the idle spin.
const IDLE_PAUSES: u32 = 4;

/// Consecutive polls of a self-waking task before the worker calls `schedule()`.
pub const POLL_BUDGET: u32 = 64;

/// A policy choice as the runtime keeps it: any [`PolicySource`] (a parsed
/// `PolicySpec`, or a `Configured` kind from outside the registry), built for
/// [`RtPlatform`] when the runtime starts.
pub(crate) trait RtSource: Send + Sync {
    fn canonical(&self) -> String;
    fn runtime_native(&self) -> bool;
    fn build(&self, p: &RtPlatform, env: &BuildEnv) -> Result<Box<dyn Policy<RtPlatform>>, schedlab_core::SpecError>;
}

impl<S: PolicySource + Send + Sync> RtSource for S {
    fn canonical(&self) -> String {
        PolicySource::canonical(self)
    }
    fn runtime_native(&self) -> bool {
        PolicySource::runtime_native(self)
    }
    fn build(&self, p: &RtPlatform, env: &BuildEnv) -> Result<Box<dyn Policy<RtPlatform>>, schedlab_core::SpecError> {
        PolicySource::build(self, p, env)
    }
}

struct Ids {
    free: Vec<TaskId>,
    /// Spawned tasks waiting for an id: (task, cpu to fork on, parent).
    overflow: VecDeque<(Task, usize, Option<TaskId>)>,
}

pub(crate) struct PolicySched {
    policy: Box<dyn Policy<RtPlatform>>,
    plats: Box<[RtPlatform]>,
    pub(crate) signals: Arc<Signals>,
    slots: Box<[parking_lot::Mutex<Option<Task>>]>,
    ids: parking_lot::Mutex<Ids>,
    tick_ns: u64,
    spin: Duration,
    name: String,
}

impl PolicySched {
    pub fn new(spec: &dyn RtSource, n: usize, capacity: usize, hz: u32, spin: Duration) -> Result<PolicySched, String> {
        let start = Instant::now();
        let signals = Arc::new(Signals::new(n, start));
        let plats: Box<[RtPlatform]> = (0..n).map(|c| RtPlatform::new(c, start, signals.clone())).collect();
        let env = BuildEnv { topo: &Topology::smp(n), capacity, hz };
        let policy = spec.build(&plats[0], &env).map_err(|e| e.0)?;
        Ok(PolicySched {
            policy,
            plats,
            signals,
            slots: (0..capacity).map(|_| parking_lot::Mutex::new(None)).collect(),
            ids: parking_lot::Mutex::new(Ids {
                free: (0..capacity as TaskId).rev().collect(),
                overflow: VecDeque::new(),
            }),
            tick_ns: 1_000_000_000 / hz.max(1) as u64,
            spin,
            name: spec.canonical(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn policy(&self) -> &dyn Policy<RtPlatform> {
        &*self.policy
    }
    pub fn stats(&self) -> crate::Stats {
        self.signals.stats.sum()
    }

    /// The platform view of the calling thread (worker `w`, or 0 for other threads).
    fn view(&self) -> &RtPlatform {
        let w = context::worker_of_signals(Arc::as_ptr(&self.signals)).unwrap_or(0);
        &self.plats[w]
    }

    /// A new task (`state == SCHEDULED`), to fork on `cpu` (placement hint) or on the
    /// calling worker.
    pub fn spawn(&self, task: Task, cpu: Option<usize>) {
        let here = context::worker_of_signals(Arc::as_ptr(&self.signals));
        let cpu = cpu.map(|c| c % self.plats.len()).or(here).unwrap_or(0);
        let parent = match here {
            Some(_) => Some(context::current_task()).filter(|&t| t != u32::MAX),
            None => None,
        };
        let id = {
            let mut ids = self.ids.lock();
            match ids.free.pop() {
                Some(id) => id,
                None => {
                    ids.overflow.push_back((task, cpu, parent));
                    return;
                }
            }
        };
        self.admit(task, id, cpu, parent);
    }

    fn admit(&self, task: Task, id: TaskId, cpu: usize, parent: Option<TaskId>) {
        task.header().id.store(id, Relaxed);
        let params = TaskParams { nice: task.header().nice.clamp(-20, 19), ..TaskParams::default() };
        *self.slots[id as usize].lock() = Some(task);
        let p = &self.plats[cpu];
        self.policy.task_new(p, id, &params, parent);
        self.policy.wake_up(p, id, false);
    }

    /// A waker moved `task` from IDLE to SCHEDULED.
    pub fn wake(&self, task: Task) {
        let id = task.header().id.load(Relaxed);
        drop(task); // the slot holds the task
        self.policy.wake_up(self.view(), id, false);
    }

    fn task(&self, id: TaskId) -> Task {
        self.slots[id as usize].lock().clone().expect("policy picked a task that has no slot")
    }

    /// Free `id` after `schedule(prev, Exited)`; admit a waiting spawn.
    fn release(&self, id: TaskId, cpu: usize) {
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
        drop(old);
        if let Some((t, c, parent)) = next {
            let parent = parent.filter(|&p| p != id);
            self.admit(t, id, if c < self.plats.len() { c } else { cpu }, parent);
        }
    }

    /// Stop: cancel every task still in the table or waiting for an id.
    pub fn drain(&self) {
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

    pub fn unpark_all(&self) {
        for p in self.signals.parkers.iter() {
            p.unpark();
        }
    }

    pub fn run_worker(&self, shared: &crate::Shared, me: usize) {
        let ctx = context::Ctx { shared, worker: me, local: std::ptr::null(), signals: Arc::as_ptr(&self.signals) };
        context::enter(ctx, || self.worker_loop(shared, me));
    }

    fn worker_loop(&self, shared: &crate::Shared, me: usize) {
        let p = &self.plats[me];
        let policy = &*self.policy;
        let need_resched = &self.signals.need_resched[me];
        let mut idle_since: Option<Instant> = None;
        let mut next_tick = p.now() + self.tick_ns;
        self.signals.next_tick[me].store(next_tick, Relaxed);
        let mut prev: Option<TaskId> = None;
        let mut prev_state = PrevState::Runnable;
        let stats = self.signals.stats.worker(me);
        let mut last_polled: Option<TaskId> = None;
        // The task whose `schedule(.., Blocked)` still has to be finished.
        let mut blocked: Option<Task> = None;
        loop {
            if shared.shutdown.load(Acquire) {
                // Leave the policy consistent: the last task leaves this CPU.
                if prev.is_some() {
                    policy.schedule(p, prev, prev_state);
                }
                if let Some(t) = blocked.take() {
                    t.header().state.finish_pending();
                }
                return;
            }
            need_resched.store(false, SeqCst);
            let called_with = (prev, prev_state);
            let next = policy.schedule(p, prev, prev_state);
            stats.scheduled();
            if let Some(t) = blocked.take() {
                if t.header().state.finish_pending() {
                    // Woken while we were unlinking it: it is off every queue now.
                    policy.wake_up(p, t.header().id.load(Relaxed), false);
                }
            }
            if let (Some(id), PrevState::Exited) = (prev, prev_state) {
                self.release(id, me);
            }
            prev = None;
            prev_state = PrevState::Runnable;
            let Some(id) = next else {
                last_polled = None;
                self.idle(p, me, &mut next_tick, &mut idle_since, shared);
                continue;
            };
            idle_since = None;
            let task = self.task(id);
            let h = task.header();
            if !h.state.start_poll() {
                prev = Some(id);
                if h.state.load() == crate::task::COMPLETE {
                    // Cancelled (shutdown race): treat as exited.
                    prev_state = PrevState::Exited;
                } else {
                    // The policy returned a task that is not runnable: a policy bug
                    // (one was found this way in MQS's schedule_tail). Unlink it as
                    // blocked so that it stays alive and a later wake finds it; count it.
                    debug_assert!(
                        false,
                        "worker {me}: policy picked task {id} in state {} (schedule called with {:?})",
                        h.state.load(),
                        called_with
                    );
                    stats.bad_pick();
                    prev_state = PrevState::Blocked;
                }
                continue;
            }
            context::set_current_task(id);
            let mut polls = 0u32;
            prev = Some(id);
            loop {
                context::set_yielded(false);
                let r = task.poll();
                polls += 1;
                let now = p.now();
                while now >= next_tick {
                    if policy.tick(p, Some(id)) {
                        need_resched.store(true, Relaxed);
                    }
                    policy.balance(p);
                    next_tick += self.tick_ns;
                    self.signals.next_tick[me].store(next_tick, Relaxed);
                }
                if r == Polled::Ready {
                    prev_state = PrevState::Exited;
                    break;
                }
                if context::take_yielded() && h.state.is_notified() {
                    h.state.requeue();
                    policy.yield_now(p, id);
                    break;
                }
                if h.state.is_notified() {
                    h.state.requeue();
                    if polls < POLL_BUDGET && !need_resched.load(Relaxed) && !shared.shutdown.load(Relaxed) {
                        let ok = h.state.start_poll();
                        debug_assert!(ok);
                        continue;
                    }
                    break;
                }
                prev_state = PrevState::Blocked;
                blocked = Some(task.clone());
                break;
            }
            context::set_current_task(u32::MAX);
            stats.polled(u64::from(polls), last_polled != Some(id));
            last_polled = Some(id);
        }
    }

    /// Nothing to run: spin on `need_resched` for `spin` since the worker went idle
    /// (returning every few µs so that `schedule` can run MQS's remote-queue
    /// examination or an LBC pull), then park until the next tick. Ticks of an idle
    /// CPU run here (`tick(None)` + `balance`).
    fn idle(
        &self,
        p: &RtPlatform,
        me: usize,
        next_tick: &mut u64,
        idle_since: &mut Option<Instant>,
        shared: &crate::Shared,
    ) {
        let policy = &*self.policy;
        let need_resched = &self.signals.need_resched[me];
        let since = *idle_since.get_or_insert_with(Instant::now);
        let tick = |next_tick: &mut u64| {
            let now = p.now();
            while now >= *next_tick {
                policy.tick(p, None);
                policy.balance(p);
                *next_tick += self.tick_ns;
                self.signals.next_tick[me].store(*next_tick, Relaxed);
            }
        };
        tick(next_tick);
        if since.elapsed() < self.spin {
            // Poll the flag often (a `pause` is ~65 cycles on Zen, ~140 on Skylake):
            // every spin between checks adds to the wake-up latency of this CPU.
            for _ in 0..512 {
                if need_resched.load(Acquire) || shared.shutdown.load(Acquire) {
                    return;
                }
                for _ in 0..IDLE_PAUSES {
                    std::hint::spin_loop();
                }
            }
            return;
        }
        let now = p.now();
        if now < *next_tick && !need_resched.load(SeqCst) {
            self.signals.stats.worker(me).parked();
            self.signals.parkers[me].park_timeout(Duration::from_nanos(*next_tick - now));
        }
        tick(next_tick);
    }
}
