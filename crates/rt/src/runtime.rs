//! [`Runtime`]: a running set of worker threads — starting them, spawning onto them,
//! reading their counters, stopping them.

use crate::context;
use crate::scheduler::Handle;
use crate::spawn::TaskOpts;
use crate::{block_on, BuildError, Builder, JoinHandle, Stats};
use schedlab_core::trace::Trace;
use std::future::Future;
use std::sync::Arc;
use std::thread;

/// A running set of workers. Dropping it (or [`Runtime::shutdown`]) stops the workers,
/// joins their threads and cancels the tasks that have not finished.
pub struct Runtime {
    handle: Arc<Handle>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Runtime {
    /// Start the workers of `handle`'s scheduler.
    pub(crate) fn start(handle: Handle, pin: bool) -> Result<Runtime, BuildError> {
        let handle = Arc::new(handle);
        // The reactor before the workers: a worker that goes to sleep can then always
        // drive it, and no timer or socket created later finds every worker asleep on
        // its condition variable with nobody polling. If it cannot start, timers and
        // sockets report why when they are made; the runtime runs without them.
        #[cfg(not(loom))]
        let _ = crate::reactor::get();
        let threads = match start_workers(&handle, pin) {
            Ok(t) => t,
            Err(e) => {
                let rt = Runtime { handle, threads: Vec::new() };
                rt.stop();
                return Err(e);
            }
        };
        Ok(Runtime { handle, threads })
    }

    /// A runtime with the default [`Builder`] settings.
    pub fn new() -> Result<Runtime, BuildError> {
        Builder::new().build()
    }

    /// Run `f` to completion on the calling thread (which drives nothing else; the
    /// workers run spawned tasks). Inside, [`spawn`](crate::spawn()) spawns onto this runtime.
    pub fn block_on<F: Future>(&self, f: F) -> F::Output {
        context::enter(context::Ctx::not_a_worker(Arc::as_ptr(&self.handle)), || block_on::block_on(f))
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
        self.handle.spawn(TaskOpts { nice: 0, worker: Some(worker), pinned: false, ..TaskOpts::default() }, f)
    }

    /// Spawn `f` pinned to worker `worker`: it starts there and every wake brings it
    /// back there (see [`TaskOpts::pinned`]).
    pub fn spawn_pinned<F>(&self, worker: usize, f: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(TaskOpts { nice: 0, worker: Some(worker), pinned: true, ..TaskOpts::default() }, f)
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
    pub fn check_invariants(&self) -> Result<(), schedlab_core::InvariantViolation> {
        self.handle.check_invariants()
    }

    /// Polls, context switches, `schedule()` calls and IPIs of the workers so far.
    pub fn stats(&self) -> Stats {
        self.handle.stats()
    }

    /// Policy schedulers: the policy's own counters (`Policy::stats`, e.g. O(1)'s
    /// array swaps and longest expired-array wait), as the simulator reports them.
    /// Empty for "fast".
    pub fn policy_stats(&self) -> Vec<(&'static str, u64)> {
        self.handle.policy_stats()
    }

    /// Policy schedulers: the tasks linked on each run queue, as the policy publishes
    /// them (`Policy::queue_len`; running tasks included). Empty for "fast".
    pub fn queue_lens(&self) -> Vec<usize> {
        self.handle.queue_lens()
    }

    /// Policy schedulers: when each worker's first timer tick was due (one period
    /// after its loop started; `None` for a worker whose loop has not started yet).
    /// Its later ticks fall on the grid this starts, so this gives the grids' phases
    /// (`schedlab validate` measures them against a root task's first run). Empty
    /// for "fast".
    pub fn first_ticks(&self) -> Vec<Option<std::time::Instant>> {
        self.handle.first_ticks()
    }

    /// Policy schedulers: when the policy's clock read 0 (it starts once the policy is
    /// built, just before the workers start). `None` for "fast".
    pub fn clock_start(&self) -> Option<std::time::Instant> {
        self.handle.clock_start()
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

    /// With [`Builder::trace`]: the events recorded since the start (or the last
    /// take), all workers' merged, ready for `schedlab_core::trace::chrome::write`;
    /// the buffers start again, empty. Events of workers still running may land on
    /// either side of the cut. `None` when not tracing.
    pub fn take_trace(&self) -> Option<Trace> {
        self.handle.take_trace()
    }

    /// Stop the workers (as [`Runtime::shutdown`]), then return their final counters
    /// and the whole trace (`None` when not tracing): every event up to the last
    /// worker's exit, so the two agree (the tests check that every counted switch and
    /// wake-up is in the trace).
    pub fn shutdown_traced(mut self) -> (Stats, Option<Trace>) {
        self.stop_and_join();
        (self.handle.stats(), self.handle.take_trace())
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

/// One thread per worker, named, pinned to CPU `i % ncpus` if `pin`; each runs its
/// scheduler's worker loop until shutdown.
fn start_workers(handle: &Arc<Handle>, pin: bool) -> Result<Vec<thread::JoinHandle<()>>, BuildError> {
    let cores = if pin { core_affinity::get_core_ids().unwrap_or_default() } else { Vec::new() };
    let mut threads = Vec::with_capacity(handle.nworkers);
    for i in 0..handle.nworkers {
        let worker = handle.clone();
        let core = (!cores.is_empty()).then(|| cores[i % cores.len()]);
        let thread = thread::Builder::new()
            .name(format!("schedlab-rt-{i}"))
            .spawn(move || {
                if let Some(c) = core {
                    core_affinity::set_for_current(c);
                }
                worker.run_worker(i)
            })
            .map_err(|source| BuildError::WorkerThread { index: i, source })?;
        threads.push(thread);
    }
    Ok(threads)
}
