//! The executor interface the async benchmark programs are written against.

use std::future::Future;
use std::time::Instant;

/// A multi-threaded async runtime, as the benchmark programs see it.
///
/// Implemented by schedlab's runtime (in `schedlab` itself) and by Tokio (in
/// `schedlab-peer-tokio`). The programs start their tasks from outside with
/// [`Exec::spawn_on`], wait with [`Exec::block_on`], and inside a task use the
/// associated functions [`Exec::spawn`] and [`Exec::yield_now`], which act on the
/// runtime of the calling task.
pub trait Exec: Send + Sync + 'static {
    /// The runtime's own channel (what a user of this runtime would reach for).
    type Chan: Channels;
    /// Runtime name for the rows, e.g. `"schedlab"` or `"tokio"`.
    fn runtime(&self) -> &str;
    /// Policy or configuration for the rows, e.g. `"mqs"` or `"multi_thread(2)"`.
    fn policy(&self) -> String;
    /// Whether [`Exec::spawn_on`] really places a task on the given worker (if not, the
    /// ping-pong rows say so in their policy column).
    fn placement(&self) -> bool;
    /// Policy column of the placed (ping-pong) rows: what [`Exec::spawn_pinned`] runs on.
    /// "placed" = tasks kept on their worker thread; whether threads are pinned to CPUs
    /// is the row's `pin`.
    fn pinned_policy(&self) -> String {
        if self.placement() {
            format!("{} (placed)", self.policy())
        } else {
            format!("{} (no placement)", self.policy())
        }
    }
    /// Run `f` on the calling (non-worker) thread until it completes.
    fn block_on<F>(&self, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;
    /// From outside the runtime: spawn `f`, on worker `worker` if the runtime supports
    /// placement; the returned future resolves to its output (panics propagate).
    fn spawn_on<T, F>(&self, worker: usize, f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static;
    /// From outside the runtime: spawn `f` pinned to worker `worker` where the runtime
    /// can pin (its wakes bring it back there); the ping-pong rows place with this.
    /// By default, [`Exec::spawn_on`].
    fn spawn_pinned<T, F>(&self, worker: usize, f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        self.spawn_on(worker, f)
    }
    /// From inside a task of this runtime: spawn `f` (usually onto the current worker).
    fn spawn<T, F>(f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static;
    /// From inside a task: give up the worker and be scheduled again (the runtime's own
    /// `yield_now`).
    fn yield_now() -> impl Future<Output = ()> + Send;
    /// From inside a task: wait on the runtime's own timer until `deadline` (the
    /// wake-latency driver inside the runtime sleeps with it). The timer is armed at
    /// the first poll.
    fn sleep_until(deadline: Instant) -> impl Future<Output = ()> + Send;
    /// From inside a task: the worker it runs on, if the runtime can tell (the
    /// ping-pong rows count the round trips that crossed workers with it).
    fn current_worker() -> Option<usize> {
        None
    }
}

/// A family of unbounded multi-producer, single-consumer channels, as the programs use
/// them: each runtime brings its own ([`Exec::Chan`]), and [`AsyncChannel`] is the
/// runtime-agnostic one every Rust runtime can run.
pub trait Channels: 'static {
    /// Name for progress lines, e.g. `"async-channel"`.
    const NAME: &'static str;
    /// The sending half (cloneable).
    type Tx<T: Send + 'static>: ChanTx<T>;
    /// The receiving half.
    type Rx<T: Send + 'static>: ChanRx<T>;
    /// A new unbounded channel.
    fn unbounded<T: Send + 'static>() -> (Self::Tx<T>, Self::Rx<T>);
}

/// Sending half of a [`Channels`] channel. Unbounded: sending never waits.
pub trait ChanTx<T>: Clone + Send + Sync + 'static {
    /// Queue `msg`; panics if the receiver is gone (a bug in a benchmark program).
    fn send(&self, msg: T);
}

/// Receiving half of a [`Channels`] channel.
pub trait ChanRx<T>: Send + 'static {
    /// The next message, or `None` once every sender is gone.
    fn recv(&mut self) -> impl Future<Output = Option<T>> + Send;
}

/// `async-channel`'s unbounded channel: runtime-agnostic, the same code on every Rust
/// runtime.
pub struct AsyncChannel;

impl Channels for AsyncChannel {
    const NAME: &'static str = "async-channel";
    type Tx<T: Send + 'static> = async_channel::Sender<T>;
    type Rx<T: Send + 'static> = async_channel::Receiver<T>;
    fn unbounded<T: Send + 'static>() -> (Self::Tx<T>, Self::Rx<T>) {
        async_channel::unbounded()
    }
}

impl<T: Send + 'static> ChanTx<T> for async_channel::Sender<T> {
    fn send(&self, msg: T) {
        self.try_send(msg).expect("unbounded send: receiver alive");
    }
}

impl<T: Send + 'static> ChanRx<T> for async_channel::Receiver<T> {
    fn recv(&mut self) -> impl Future<Output = Option<T>> + Send {
        let r = async_channel::Receiver::recv(self);
        async move { r.await.ok() }
    }
}
