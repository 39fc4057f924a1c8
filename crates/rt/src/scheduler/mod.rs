//! The scheduler dispatch: a runtime runs one of two schedulers, chosen when it is
//! built, and this is the one place that tells them apart.
//!
//! * `fast/`: work stealing with a LIFO slot (the default);
//! * `policy/`: the adapter that runs any `schedlab_core` policy.
//!
//! Each owns its per-worker state and its worker loop (one monomorphic function per
//! scheduler: the hot path never dispatches on the scheduler). What they share is
//! [`Handle`]: the scheduler, the shutdown flag and the worker count. Tasks hold an
//! `Arc<Handle>` as their [`Schedule`] implementation; the only per-wake dispatch is the
//! `match` in [`Schedule::schedule`] below.
//!
//! A worker thread tells code running on it where its scheduler's worker state is
//! through [`WorkerLocal`] in the thread-local context: the fast scheduler's wakes use
//! it to reach the worker's LIFO slot, the policy scheduler's to find the worker's
//! platform view and `need_resched` flag.

pub(crate) mod fast;
pub(crate) mod policy;

use crate::context::{self, Ctx};
use crate::spawn::TaskOpts;
use crate::task::{Cell, JoinHandle, RawTask, Schedule, Task};
use crate::Stats;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;

/// The scheduler a runtime runs.
pub(crate) enum Scheduler {
    Fast(Box<fast::Fast>),
    Policy(policy::PolicySched),
}

/// What every task and worker of one runtime shares.
pub(crate) struct Handle {
    pub(crate) scheduler: Scheduler,
    /// Set once by `Runtime` drop; workers return, wakes and spawns cancel their task.
    pub(crate) shutdown: AtomicBool,
    pub(crate) nworkers: usize,
    /// Canonical spec of the scheduler (`"fast"`, `"pmqs:pool=1,lb=lbp,period=10"`).
    policy_name: String,
}

/// A worker's scheduler-specific state, as the thread-local context holds it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WorkerLocal {
    /// Not a worker (a `block_on` thread).
    None,
    /// A fast worker: its deque and LIFO slot.
    Fast(*const fast::Local),
    /// A policy worker: the runtime's signals (with [`Ctx::worker`], its own flags).
    Policy(*const policy::Signals),
}

impl WorkerLocal {
    /// Whether the task running on worker `worker` should give way now (see
    /// [`crate::should_yield`]): only policy schedulers ask.
    #[inline]
    pub(crate) fn should_yield(self, worker: usize) -> bool {
        match self {
            // SAFETY: the context is installed only while its runtime is alive.
            WorkerLocal::Policy(signals) => unsafe { &*signals }.should_yield(worker),
            _ => false,
        }
    }
}

impl Schedule for Arc<Handle> {
    /// A waker moved `task` from IDLE to SCHEDULED.
    fn schedule(&self, task: Task) {
        self.schedule_in(task, context::get())
    }

    /// A wake from a thread of this runtime (a worker, or its `block_on` caller) uses
    /// the context's handle, which outlives the call (a worker holds an `Arc`,
    /// `block_on` borrows the runtime): no clone of the task's `Arc<Handle>`.
    ///
    /// # Safety
    /// As [`Schedule::schedule_woken`]: `this` points into `task`'s allocation.
    unsafe fn schedule_woken(this: *const Self, task: Task) {
        let ctx = context::get();
        // SAFETY: `task` is not handed over yet, so `this` is alive.
        let mine = unsafe { Arc::as_ptr(&*this) };
        match ctx {
            // SAFETY: an installed context's handle is alive (see above).
            Some(c) if std::ptr::eq(c.handle, mine) => unsafe { &*c.handle }.schedule_in(task, ctx),
            _ => {
                // SAFETY: as above; the clone keeps the handle alive past the hand-over.
                let h = unsafe { (*this).clone() };
                h.schedule_in(task, ctx)
            }
        }
    }

    fn watched_woken(id: *const (), handed: bool) {
        // Only a task watched by this thread's own worker needs anything (the trait's
        // documentation): a fast worker's context, whose handle is alive while
        // installed, and the task in that worker's slot.
        let Some(Ctx { handle, local: WorkerLocal::Fast(l), .. }) = context::get() else { return };
        // SAFETY: an installed context's handle, and its worker's `Local`, are alive.
        let (handle, l) = unsafe { (&*handle, &*l) };
        match &handle.scheduler {
            Scheduler::Fast(f) => f.watched_woken(id, l, handed),
            Scheduler::Policy(_) => debug_assert!(false, "a fast worker's context on a policy scheduler"),
        }
    }
}

impl Handle {
    /// The fast worker state of the calling thread (`ctx`), if it is a worker of this
    /// runtime.
    #[inline(always)]
    fn fast_local(&self, ctx: Option<Ctx>) -> Option<&fast::Local> {
        match ctx {
            Some(Ctx { handle: h, local: WorkerLocal::Fast(l), .. }) if std::ptr::eq(h, self) => {
                // SAFETY: the worker's `Local` outlives its installed context.
                Some(unsafe { &*l })
            }
            _ => None,
        }
    }

    /// Queue a woken `task`; `ctx` is the calling thread's context. Inlined into both
    /// callers: the wake path is a few dozen instructions, a call's frame a third more.
    #[inline(always)]
    fn schedule_in(&self, task: Task, ctx: Option<Ctx>) {
        let handle: &Handle = self;
        if handle.shutdown.load(SeqCst) {
            task.cancel();
            return;
        }
        match &handle.scheduler {
            // Woken by a task running on one of this runtime's workers: that worker's
            // LIFO slot.
            Scheduler::Fast(f) => f.schedule(task, handle.fast_local(ctx)),
            Scheduler::Policy(p) => p.wake(task),
        }
    }
}

impl Handle {
    pub(crate) fn new(scheduler: Scheduler, nworkers: usize, policy_name: String) -> Handle {
        Handle { scheduler, shutdown: AtomicBool::new(false), nworkers, policy_name }
    }

    /// The runtime the calling code runs in (a task, or `block_on`).
    pub(crate) fn current() -> Option<Arc<Handle>> {
        let ctx = context::get()?;
        // SAFETY: the context is installed only while its runtime's `Handle` is alive (a
        // worker holds an Arc; `block_on` borrows the Runtime).
        Some(unsafe {
            Arc::increment_strong_count(ctx.handle);
            Arc::from_raw(ctx.handle)
        })
    }

    pub(crate) fn spawn<F>(self: &Arc<Self>, opts: TaskOpts, f: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let home = opts.worker.filter(|_| opts.pinned).map(|w| w % self.nworkers.max(1));
        let cell = Cell::new(f, &opts, home, self.clone());
        let join = JoinHandle::new(cell.clone());
        if self.shutdown.load(SeqCst) {
            // Complete it as cancelled: it was never scheduled.
            cell.cancel();
            return join;
        }
        let task: Task = cell;
        match &self.scheduler {
            Scheduler::Fast(fq) => {
                let here = context::get().filter(|c| std::ptr::eq(c.handle, &**self)).map(|c| c.worker);
                fq.register(&task, here);
                match opts.worker {
                    Some(w) => fq.schedule_on(task, w),
                    // From a worker: its LIFO slot, as a wake.
                    None if here.is_some_and(|w| w != context::NO_WORKER) => self.schedule(task),
                    None => fq.inject(task),
                }
            }
            Scheduler::Policy(p) => p.spawn(task, opts.worker, home),
        }
        join
    }

    /// Run worker `index`'s loop on the calling thread until shutdown.
    pub(crate) fn run_worker(&self, index: usize) {
        match &self.scheduler {
            Scheduler::Fast(f) => f.run_worker(self, index),
            Scheduler::Policy(p) => p.run_worker(self, index),
        }
    }

    /// Ask the workers to return: set the flag, wake the sleeping ones.
    pub(crate) fn stop(&self) {
        self.shutdown.store(true, SeqCst);
        match &self.scheduler {
            Scheduler::Fast(f) => f.unpark_all(),
            Scheduler::Policy(p) => p.unpark_all(),
        }
    }

    /// Cancel every task left (after the workers have returned).
    pub(crate) fn drain(&self) {
        match &self.scheduler {
            Scheduler::Fast(f) => f.drain(),
            Scheduler::Policy(p) => p.drain(),
        }
    }

    /// The canonical spec of the scheduler.
    pub(crate) fn policy_name(&self) -> String {
        self.policy_name.clone()
    }

    pub(crate) fn check_invariants(&self) -> Result<(), schedlab_core::InvariantViolation> {
        match &self.scheduler {
            Scheduler::Fast(_) => Ok(()),
            Scheduler::Policy(p) => p.policy().check_invariants(),
        }
    }

    pub(crate) fn queue_lens(&self) -> Vec<usize> {
        match &self.scheduler {
            Scheduler::Fast(_) => Vec::new(),
            Scheduler::Policy(p) => p.queue_lens(),
        }
    }

    pub(crate) fn policy_stats(&self) -> Vec<(&'static str, u64)> {
        match &self.scheduler {
            Scheduler::Fast(_) => Vec::new(),
            Scheduler::Policy(p) => p.policy().stats(),
        }
    }

    pub(crate) fn first_ticks(&self) -> Vec<Option<std::time::Instant>> {
        match &self.scheduler {
            Scheduler::Fast(_) => Vec::new(),
            Scheduler::Policy(p) => p.first_ticks(),
        }
    }

    pub(crate) fn clock_start(&self) -> Option<std::time::Instant> {
        match &self.scheduler {
            Scheduler::Fast(_) => None,
            Scheduler::Policy(p) => Some(p.clock_start()),
        }
    }

    pub(crate) fn take_trace(&self) -> Option<schedlab_core::trace::Trace> {
        match &self.scheduler {
            Scheduler::Fast(_) => None,
            Scheduler::Policy(p) => p.take_trace(),
        }
    }

    pub(crate) fn stats(&self) -> Stats {
        match &self.scheduler {
            Scheduler::Fast(f) => f.stats(),
            Scheduler::Policy(p) => p.stats(),
        }
    }

    pub(crate) fn debug_state(&self) -> String {
        match &self.scheduler {
            Scheduler::Fast(f) => f.debug_state(),
            Scheduler::Policy(p) => p.name().to_string(),
        }
    }
}
