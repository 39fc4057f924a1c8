//! # schedlab-rt: a multi-threaded async runtime whose run queue is a policy
//!
//! The second engine of schedlab. One worker thread per CPU (pinned with
//! `core_affinity` where possible) polls Rust futures. What a worker runs next is
//! decided by a pluggable scheduler:
//!
//! * **`"fast"`** (default; a runtime-native entry of `schedlab_core`'s policy registry): per-worker lock-free
//!   deques + a LIFO "next task" slot with a starvation cap, a shared runnext queue
//!   for wakes from outside the workers, per-worker inboxes and a
//!   global injection queue, random-start work stealing, spin-then-park idle workers.
//!   See `scheduler/fast/` for how it differs from Tokio's scheduler.
//! * **any core policy** — `"dss"`, `"mqs"`, `"pmqs:pool=1,lb=lbp,period=10"`, …: the
//!   exact `schedlab_core` code the simulator runs, instantiated with [`RtPlatform`]
//!   (real `parking_lot` locks, a monotonic clock, free cost hooks, and `resched` =
//!   `need_resched` flag + unpark of the worker: the runtime's IPI). Nice values,
//!   counters, goodness and time slices apply: every task has a nice value
//!   ([`TaskOpts`]), a timer tick of `1/hz` runs at poll boundaries, and a task that
//!   keeps waking itself is polled again until `need_resched` or a poll budget. See
//!   `scheduler/policy/` for the mapping of `schedule(prev, Runnable|Blocked|Exited)`.
//!
//! [`channel`] is the runtime's own unbounded MPSC channel (one lock, batched
//! receive); runtime-agnostic channels work too.
//!
//! [`time`] (`sleep`, `interval`, `timeout`) and [`net`] (TCP, UDP and Unix sockets,
//! with [`io`]'s read/write traits) live on the runtime's own reactor (epoll through
//! `mio`), which the workers drive: an idle worker sleeps in the poll and fires the
//! wakers of what became ready on its own thread, through the scheduler's ordinary
//! wake path, so under a core policy a task waiting on I/O sleeps and wakes through
//! the policy (docs/runtime.md; docs/architecture.md, "The runtime's I/O path").
//!
//! ## Files, one concern each
//!
//! ```text
//! lib.rs                         this front door: docs, modules, the public names
//! builder.rs                     Builder: settings, and the one place that turns the policy choice into a scheduler
//! error.rs                       BuildError: why a runtime did not start
//! runtime.rs                     Runtime: start the worker threads, spawn, counters, shutdown
//! block_on.rs                    block_on: the caller's thread polls one future, parks between polls
//! spawn.rs                       spawn() from inside a runtime; TaskOpts
//! give_way.rs                    yield_now, preemption_point, should_yield (one GiveWay future)
//! context.rs                     the thread-local context: runtime, worker, worker state, yield flag
//! task/mod.rs                    Task, Header, RawTask, and the Schedule trait tasks are generic over
//! task/state.rs                  the task state machine (loom-checked)
//! task/cell.rs                   the one-allocation task cell: poll, cancel, thin-pointer wakers
//! task/join.rs                   JoinHandle, JoinError
//! scheduler/mod.rs               Handle (what a runtime's tasks and workers share) and the one
//!                                dispatch between the two schedulers
//! scheduler/fast/mod.rs          work stealing: the shared queues and how work enters them
//! scheduler/fast/worker.rs       a fast worker's own state and loop: pick, steal, spin, sleep
//! scheduler/fast/idle.rs         who spins and who sleeps (loom-checked)
//! scheduler/fast/mailbox.rs      one slot per worker for a pinned task woken elsewhere (loom-checked)
//! scheduler/fast/owned.rs        the live tasks, for shutdown to cancel
//! scheduler/policy/mod.rs        the policy adapter: spawn, wake and exit into a core policy
//! scheduler/policy/worker.rs     a policy worker's loop: schedule(), poll, tick, idle
//! scheduler/policy/table.rs      policy ids <-> tasks, with an overflow queue
//! scheduler/policy/platform.rs   RtPlatform (the policy's platform) and its signals
//! scheduler/policy/lock.rs      the policy locks' mutex: parking_lot, or a bounded spin (feature spin-lock)
//! scheduler/policy/build.rs      building the core policy with core's one constructor (RtSource)
//! park.rs                        Parker: a worker's sleep (on its condvar, or driving the reactor) and wake-up token (loom-checked)
//! reactor/mod.rs                 the reactor: mio's poll, driven by the workers; who drives, a busy worker's look
//! reactor/source.rs              a socket's readiness (with its tick) and the wakers waiting on it
//! reactor/timers.rs              the timer map and the deadline the driver waits towards
//! reactor/model.rs               the driver's hand-shake under loom
//! resched.rs                     a policy worker's need_resched and its IPI, sent only when the flag was clear (loom-checked)
//! channel.rs                     the runtime's MPSC channel (loom-checked)
//! stats.rs                       per-worker counters
//! trace.rs                       the scheduling trace: per-worker buffers of core's trace events
//! sync.rs                        the loom shim
//! time.rs                        timers (Timer, sleep, interval, timeout) on the reactor
//! net.rs                         sockets (Async<T>: TCP, UDP, Unix) on the reactor
//! io.rs                          the async read/write traits and their extension methods
//! ```
//!
//! A task knows its scheduler only through [`task`]'s `Schedule` trait; each scheduler
//! owns its per-worker state and its worker loop (one monomorphic function each: the
//! loop never dispatches on the scheduler; a wake does, once, in `scheduler/mod.rs`);
//! the thread-local context holds a worker's state as a small enum that only the
//! owning scheduler reads.
//!
//! Correctness: the park/unpark protocol and the task state machine are model-checked
//! with loom (`crates/rt/loom.sh`); `tests/` hold a per-policy stress test that counts
//! every one of over a million messages. A panicking task is caught at its poll
//! (`catch_unwind`) and reported through its [`JoinHandle`] as a [`JoinError`]; the
//! worker carries on.

mod block_on;
mod builder;
pub mod channel;
mod context;
mod error;
mod give_way;
#[cfg(not(loom))]
pub mod io;
#[cfg(not(loom))]
pub mod net;
#[doc(hidden)]
pub mod park;
mod reactor;
pub mod resched;
mod runtime;
mod scheduler;
mod spawn;
mod stats;
mod sync;
#[doc(hidden)]
pub mod task;
#[cfg(not(loom))]
pub mod time;
mod trace;

pub use builder::{Builder, DEFAULT_HZ, DEFAULT_IDLE_SPIN};
pub use context::current_worker;
pub use error::BuildError;
pub use give_way::{preemption_point, should_yield, yield_now};
pub use runtime::Runtime;
pub use scheduler::policy::lock::{
    lock as lock_policy_mutex, LockWaiter, PolicyGuard, PolicyMutex, POLICY_LOCK_WAITER,
};
pub use scheduler::policy::platform::{RtLock, RtPlatform};
pub use spawn::{spawn, spawn_with, TaskOpts};
pub use stats::Stats;
pub use task::{JoinError, JoinHandle};
pub use trace::DEFAULT_RING_CAPACITY;
