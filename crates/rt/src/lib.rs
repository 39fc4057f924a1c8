//! # schedlab-rt: a multi-threaded async runtime whose run queue is a policy
//!
//! The second engine of schedlab. One worker thread per CPU (pinned with
//! `core_affinity` where possible) polls Rust futures. What a worker runs next is
//! decided by a pluggable scheduler:
//!
//! * **`"fast"`** (default, [`fast`](crate::Builder::policy)): per-worker lock-free
//!   deques + a LIFO "next task" slot with a starvation cap, per-worker inboxes and a
//!   global injection queue, random-start work stealing, spin-then-park idle workers.
//!   See `fast.rs` for how it differs from Tokio's scheduler.
//! * **any core policy** — `"dss"`, `"mqs"`, `"pmqs:pool=1,lb=lbp,period=10"`, …: the
//!   exact `schedlab_core` code the simulator runs, instantiated with [`RtPlatform`]
//!   (real `parking_lot` locks, a monotonic clock, free cost hooks, and `resched` =
//!   `need_resched` flag + unpark of the worker: the runtime's IPI). Nice values,
//!   counters, goodness and time slices apply: every task has a nice value
//!   ([`TaskOpts`]), a timer tick of `1/hz` runs at poll boundaries, and a task that
//!   keeps waking itself is polled again until `need_resched` or a poll budget. See
//!   `policy_sched.rs` for the mapping of `schedule(prev, Runnable|Blocked|Exited)`.
//!
//! [`channel`] is the runtime's own unbounded MPSC channel (one lock, batched
//! receive); runtime-agnostic channels work too.
//!
//! Files, one concern each: `channel.rs`, `task.rs` (state machine, one-allocation task cell,
//! wakers), `stats.rs` (per-worker counters), `join.rs` (JoinHandle, panic capture), `park.rs` (park/unpark protocol),
//! `fast.rs`, `policy_sched.rs`, `platform.rs` (RtPlatform), `worker.rs` (threads,
//! `block_on`), `context.rs` (thread-local runtime context), `sync.rs` (loom shim).
//!
//! Correctness: the park/unpark protocol and the task state machine are model-checked
//! with loom (`crates/rt/loom.sh`); `tests/` hold a per-policy stress test that counts
//! every one of over a million messages. A panicking task is caught at its poll
//! (`catch_unwind`) and reported through its [`JoinHandle`] as a [`JoinError`]; the
//! worker carries on.

pub mod channel;
mod context;
#[doc(hidden)]
pub mod park;
mod scheduler;
mod stats;
mod sync;
#[doc(hidden)]
pub mod task;
mod worker;

pub use scheduler::policy::platform::{RtLock, RtPlatform};
pub use stats::Stats;
pub use task::{JoinError, JoinHandle};

use scheduler::{Handle, Scheduler};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// Per-task options for [`Runtime::spawn_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskOpts {
    /// −20 (most favoured) ..= 19. Used by the policy schedulers (goodness, quantum);
    /// the fast scheduler ignores it.
    pub nice: i8,
    /// Placement hint: initial run queue / processor.
    pub worker: Option<usize>,
}

/// Configures and builds a [`Runtime`].
#[derive(Clone, Debug)]
pub struct Builder {
    workers: usize,
    policy: String,
    pin: bool,
    hz: u32,
    max_tasks: usize,
    spin: Duration,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// Defaults: one worker per available CPU, policy `"fast"`, pinned workers,
    /// HZ = 1000, 65 536 task slots for policy schedulers, 50 µs idle spin.
    pub fn new() -> Builder {
        Builder {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            policy: "fast".into(),
            pin: true,
            hz: 1000,
            max_tasks: 1 << 16,
            spin: Duration::from_micros(50),
        }
    }
    /// Number of worker threads (at least 1, at most 64 for policy schedulers).
    pub fn workers(mut self, n: usize) -> Builder {
        self.workers = n.max(1);
        self
    }
    /// `"fast"` or any `schedlab_core::PolicySpec` string (`"dss"`, `"mqs"`,
    /// `"pmqs:pool=1,lb=lbp,period=10"`).
    pub fn policy(mut self, spec: &str) -> Builder {
        self.policy = spec.to_string();
        self
    }
    /// Pin worker `i` to CPU `i % ncpus`.
    pub fn pin(mut self, yes: bool) -> Builder {
        self.pin = yes;
        self
    }
    /// Timer tick rate for policy schedulers (counters are in ticks).
    pub fn hz(mut self, hz: u32) -> Builder {
        self.hz = hz.max(1);
        self
    }
    /// Task-table capacity of policy schedulers; further spawns wait for a free id.
    pub fn max_tasks(mut self, n: usize) -> Builder {
        self.max_tasks = n.clamp(1, u32::MAX as usize - 1);
        self
    }
    /// How long an idle worker spins before parking.
    pub fn spin(mut self, d: Duration) -> Builder {
        self.spin = d;
        self
    }

    pub fn build(self) -> Result<Runtime, String> {
        let n = self.workers;
        let kind = if self.policy.trim().eq_ignore_ascii_case("fast") {
            Scheduler::Fast(Box::new(scheduler::fast::Fast::new(n, self.spin)))
        } else {
            let spec = schedlab_core::PolicySpec::parse(&self.policy)
                .map_err(|e| format!("bad policy '{}': {e} (or use 'fast')", self.policy))?;
            if n > schedlab_core::cpu::MAX_CPUS {
                return Err(format!(
                    "policy '{}' supports at most {} workers",
                    self.policy,
                    schedlab_core::cpu::MAX_CPUS
                ));
            }
            Scheduler::Policy(
                scheduler::policy::PolicySched::new(&spec, n, self.max_tasks, self.hz, self.spin)
                    .map_err(|e| format!("bad policy '{}': {e}", self.policy))?,
            )
        };
        let handle = Arc::new(Handle::new(kind, n));
        let threads = match worker::start(&handle, self.pin) {
            Ok(t) => t,
            Err(e) => {
                let rt = Runtime { handle, threads: Vec::new() };
                rt.stop();
                return Err(e);
            }
        };
        Ok(Runtime { handle, threads })
    }
}

/// A running set of workers. Dropping it (or [`Runtime::shutdown`]) stops the workers,
/// joins their threads and cancels the tasks that have not finished.
pub struct Runtime {
    handle: Arc<Handle>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Runtime {
    /// A runtime with the default [`Builder`] settings.
    pub fn new() -> Result<Runtime, String> {
        Builder::new().build()
    }

    /// Run `f` to completion on the calling thread (which drives nothing else; the
    /// workers run spawned tasks). Inside, [`spawn`] spawns onto this runtime.
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        context::enter(context::Ctx::not_a_worker(Arc::as_ptr(&self.handle)), || worker::block_on(f))
    }

    pub fn spawn<F>(&self, f: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(TaskOpts::default(), f)
    }

    /// Spawn with a placement hint: the task starts on `worker`'s run queue
    /// (fast: its inbox; policies: forked on that CPU).
    pub fn spawn_on<F>(&self, worker: usize, f: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(TaskOpts { nice: 0, worker: Some(worker) }, f)
    }

    pub fn spawn_with<F>(&self, opts: TaskOpts, f: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(opts, f)
    }

    pub fn workers(&self) -> usize {
        self.handle.nworkers
    }

    /// `"fast"` or the canonical policy spec (e.g. `"pmqs:pool=1,lb=lbp,period=10"`).
    pub fn policy_name(&self) -> String {
        self.handle.policy_name()
    }

    /// Policy schedulers: check the policy's structural invariants (run lists, task
    /// table). Meaningful when the runtime is quiescent. `Ok` for "fast".
    pub fn check_invariants(&self) -> Result<(), String> {
        self.handle.check_invariants()
    }

    /// Polls, context switches, `schedule()` calls and IPIs of the workers so far.
    pub fn stats(&self) -> Stats {
        self.handle.stats()
    }

    /// Polls done by the workers so far.
    pub fn polls(&self) -> u64 {
        self.stats().polls
    }

    #[doc(hidden)]
    pub fn debug_state(&self) -> String {
        self.handle.debug_state()
    }

    pub fn shutdown(self) {
        // Drop does it.
    }

    fn stop(&self) {
        self.handle.stop();
    }

    fn stop_and_join(&mut self) {
        self.stop();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        self.handle.drain();
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("workers", &self.workers()).field("policy", &self.policy_name()).finish()
    }
}

/// Spawn onto the runtime this code runs in (a task, or `block_on`). Panics outside a
/// runtime.
pub fn spawn<F>(f: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Handle::current().expect("schedlab_rt::spawn called outside a runtime").spawn(TaskOpts::default(), f)
}

pub use context::current_worker;

/// Whether the running task should give up its worker now: under a policy scheduler,
/// the policy has asked for a reschedule (a woken task with better goodness, or the
/// tick ended this task's time slice) or a timer tick is due. Always `false` under
/// `fast` and outside a worker. Cheap: a flag and a clock read.
pub fn should_yield() -> bool {
    match context::get() {
        Some(c) if c.worker != context::NO_WORKER => c.local.should_yield(c.worker),
        _ => false,
    }
}

/// A preemption point: if [`should_yield`], return `Pending` once with the task still
/// runnable, so that the worker ticks and calls `schedule(prev, Runnable)`: the
/// policy, not the task, decides whether it keeps running (unlike [`yield_now`], which
/// is `sched_yield`). This is how a cooperative runtime gives long-running tasks the
/// kernel's preemption on return to user mode; the validation interpreter calls it
/// between workload operations and inside long computations.
pub async fn preemption_point() {
    if should_yield() {
        GiveWay { polled: false, sched_yield: false }.await
    }
}

/// Yield to the scheduler: the task goes to the back of the run queue (fast), or
/// `sched_yield` + `schedule()` (policies), and is polled again later.
pub async fn yield_now() {
    GiveWay { polled: false, sched_yield: true }.await
}

/// Pending once, self-woken, so that the worker takes the task off the CPU still
/// runnable; `sched_yield` marks it as yielding (the worker then calls the policy's
/// `yield_now`) rather than preempted.
struct GiveWay {
    polled: bool,
    sched_yield: bool,
}

impl Future for GiveWay {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.polled {
            return Poll::Ready(());
        }
        self.polled = true;
        if self.sched_yield {
            context::set_yielded(true);
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
