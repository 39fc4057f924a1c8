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
//! Files: this one holds the state all workers share and the ways tasks enter the
//! policy (spawn, wake, exit, shutdown drain); `worker.rs` the worker loop (`schedule`,
//! poll, tick, idle); `table.rs` the task table; `platform.rs` the [`RtPlatform`] the
//! policy runs on and the per-worker [`Signals`]; `build.rs` the construction of the
//! policy itself from the policy choice the `Builder` kept ([`RtSource`]).

mod build;
pub(crate) mod lock;
pub(crate) mod platform;
mod table;
mod worker;

use crate::context;
use crate::scheduler::WorkerLocal;
use crate::task::Task;
use crate::trace::Tracer;
pub(crate) use build::RtSource;
use platform::RtPlatform;
pub(crate) use platform::Signals;
use schedlab_core::trace::{Event, Trace};
use schedlab_core::{CpuMask, Policy, SchedClass, TaskId, TaskLayout, TaskParams};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use table::TaskTable;

/// The state all workers of a policy scheduler share.
pub(crate) struct PolicySched {
    policy: Box<dyn Policy<RtPlatform>>,
    /// One platform view per worker (its `this_cpu`).
    plats: Box<[RtPlatform]>,
    signals: Arc<Signals>,
    table: TaskTable,
    tick_ns: u64,
    spin: Duration,
    name: String,
    /// The reactor, for the workers' looks at ticks, after polls and while they spin.
    reactor: crate::reactor::ReactorRef,
}

impl PolicySched {
    /// The policy's task table is laid out as the kernel's task blocks, coloured by the
    /// spec's `colours=N` ([`TaskLayout::KernelBlocks`]): `capacity × 8 KB` of address
    /// space, at most 1 GiB (an error beyond). `trace`: record a trace, keeping this
    /// many events per worker.
    pub fn new(
        spec: &dyn RtSource,
        n: usize,
        capacity: usize,
        hz: u32,
        spin: Duration,
        trace: Option<usize>,
    ) -> Result<PolicySched, String> {
        let layout = TaskLayout::KernelBlocks { colours: spec.colours() };
        layout.check(capacity).map_err(|e| format!("max_tasks: {e}"))?;
        let built = Instant::now();
        let tracer = trace.map(|cap| Arc::new(Tracer::new(n, cap, capacity, built)));
        let mut signals = Arc::new(Signals::new(n, built, tracer));
        let policy = build::policy(spec, &RtPlatform::new(0, built, signals.clone(), layout), n, capacity, hz)?;
        let table = TaskTable::new(capacity);
        // The clock starts once the policy and its tables are built, just before the
        // workers start: how long a policy's constructor takes (O(1)'s is ~1.4 ms
        // longer than DSS's at 65,536 tasks) must not move where the run starts on the
        // clock (O(1)'s jiffy grid, PMQS's first balancing pass). The build's platform
        // view is gone (no core policy keeps one), so nothing read the old origin.
        let start = Instant::now();
        Arc::get_mut(&mut signals)
            .and_then(|s| s.restart_clock(start))
            .ok_or("the policy kept the platform view it was built with")?;
        let plats: Box<[RtPlatform]> = (0..n).map(|c| RtPlatform::new(c, start, signals.clone(), layout)).collect();
        Ok(PolicySched {
            policy,
            plats,
            signals,
            table,
            tick_ns: 1_000_000_000 / hz.max(1) as u64,
            spin,
            name: spec.canonical(),
            reactor: crate::reactor::ReactorRef::get(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    #[inline]
    pub fn policy(&self) -> &dyn Policy<RtPlatform> {
        &*self.policy
    }
    /// Tasks linked on each of the policy's run queues (its published lengths).
    pub fn queue_lens(&self) -> Vec<usize> {
        (0..self.policy().nr_queues()).map(|q| self.policy().queue_len(q)).collect()
    }
    pub fn stats(&self) -> crate::Stats {
        self.signals.stats.sum()
    }
    /// Each worker's first timer tick (`None` before its loop has started). A worker's
    /// later ticks stay on the grid this sets (`worker::due_tick` skips whole periods).
    pub fn first_ticks(&self) -> Vec<Option<std::time::Instant>> {
        let at = |ns: u64| (ns != 0).then(|| self.signals.start + std::time::Duration::from_nanos(ns));
        self.signals.first_tick.iter().map(|t| at(t.load(std::sync::atomic::Ordering::Relaxed))).collect()
    }
    /// When the policy's clock reads 0 (`Platform::now` counts from here).
    pub fn clock_start(&self) -> std::time::Instant {
        self.signals.start
    }
    /// The trace recorded so far (the buffers start again), if tracing is on.
    pub fn take_trace(&self) -> Option<Trace> {
        let tr = self.signals.trace.as_ref()?;
        Some(tr.take(format!("schedlab-rt: {} on {} workers", self.name, self.plats.len())))
    }

    /// A new task (`state == SCHEDULED`), to fork on `cpu` (placement hint) or on the
    /// calling worker.
    /// A pinned task (`home`) starts on, and may only run on, that worker's CPU.
    pub fn spawn(&self, task: Task, cpu: Option<usize>, home: Option<usize>) {
        let here = self.signals.current_worker();
        let cpu = home.or(cpu).map(|c| c % self.plats.len()).or(here).unwrap_or(0);
        let parent = match here {
            Some(_) => worker::current_task(),
            None => None,
        };
        if let Some(((task, cpu, parent), id)) = self.table.alloc((task, cpu, parent)) {
            self.admit(task, id, cpu, parent);
        }
    }

    /// Give `task` the policy id `id` and fork it on `cpu`.
    fn admit(&self, task: Task, id: TaskId, cpu: usize, parent: Option<TaskId>) {
        task.header().id.store(id, Relaxed);
        let h = task.header();
        let mut params = TaskParams { nice: h.nice.clamp(-20, 19), ..TaskParams::default() };
        if h.rt_priority > 0 {
            params.class = SchedClass::Fifo;
            params.rt_priority = h.rt_priority;
        }
        if let Some(mm) = h.mm {
            params.mm = mm;
        }
        if task.header().home().is_some() {
            params.cpus_allowed = CpuMask::single(cpu);
        }
        self.table.insert(id, task);
        let p = &self.plats[cpu];
        let here = self.signals.current_worker();
        self.signals.stats.woke(here);
        match &self.signals.trace {
            None => {
                self.policy().task_new(p, id, &params, parent);
                self.policy().wake_up(p, id, false);
            }
            Some(tr) => {
                tr.forked(id);
                tr.push(here, tr.now(), Event::Fork { parent, child: id });
                self.policy().task_new(p, id, &params, parent);
                self.traced_wake(tr, p, here, id, parent);
            }
        }
    }

    /// A waker moved `task` from IDLE to SCHEDULED.
    pub fn wake(&self, task: Task) {
        let id = task.header().id.load(Relaxed);
        drop(task); // the table holds the task
        let here = self.signals.current_worker();
        self.signals.stats.woke(here);
        let p = &self.plats[here.unwrap_or(0)];
        match &self.signals.trace {
            None => self.policy().wake_up(p, id, false),
            Some(tr) => self.traced_wake(tr, p, here, id, here.and_then(|_| worker::current_task())),
        }
    }

    /// `wake_up(id)` on `p`, recorded on `here`'s track with the CPU the policy asked
    /// to reschedule for it (`waker`: the task whose action woke it, if known).
    fn traced_wake(&self, tr: &Tracer, p: &RtPlatform, here: Option<usize>, id: TaskId, waker: Option<TaskId>) {
        let ts = tr.now();
        Tracer::watch_resched();
        self.policy().wake_up(p, id, false);
        tr.push(here, ts, Event::Wakeup { task: id, waker, target: Tracer::resched_target() });
    }

    /// Free `id` after `schedule(prev, Exited)` on worker `cpu`; admit a waiting spawn.
    fn release(&self, id: TaskId, cpu: usize) {
        if let Some((t, c, parent)) = self.table.release(id) {
            let parent = parent.filter(|&p| p != id);
            self.admit(t, id, if c < self.plats.len() { c } else { cpu }, parent);
        }
    }

    /// Stop: cancel every task still in the table or waiting for an id.
    pub fn drain(&self) {
        self.table.cancel_all();
    }

    pub fn unpark_all(&self) {
        for r in self.signals.resched.iter() {
            r.wake();
        }
    }
}

impl Signals {
    /// The calling thread's worker index, if it is a worker of the runtime that owns
    /// these signals. (A platform view cannot tell: non-workers borrow worker 0's.)
    #[inline]
    pub(crate) fn current_worker(&self) -> Option<usize> {
        match context::get() {
            Some(c)
                if matches!(c.local, WorkerLocal::Policy(s) if std::ptr::eq(s, self))
                    && c.worker != context::NO_WORKER =>
            {
                Some(c.worker)
            }
            _ => None,
        }
    }
}
