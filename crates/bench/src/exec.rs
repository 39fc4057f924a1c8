//! The executor interface the async benchmark programs are written against.

use std::future::Future;

/// A multi-threaded async runtime, as the benchmark programs see it.
///
/// Implemented by schedlab's runtime (in `schedlab` itself) and by Tokio (in
/// `schedlab-peer-tokio`). The programs start their tasks from outside with
/// [`Exec::spawn_on`], wait with [`Exec::block_on`], and inside a task use the
/// associated functions [`Exec::spawn`] and [`Exec::yield_now`], which act on the
/// runtime of the calling task.
pub trait Exec: Send + Sync + 'static {
    /// Runtime name for the rows, e.g. `"schedlab"` or `"tokio"`.
    fn runtime(&self) -> &str;
    /// Policy or configuration for the rows, e.g. `"mqs"` or `"multi_thread(2)"`.
    fn policy(&self) -> String;
    /// Whether [`Exec::spawn_on`] really places a task on the given worker (if not, the
    /// ping-pong rows say so in their policy column).
    fn placement(&self) -> bool;
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
    /// From inside a task of this runtime: spawn `f` (usually onto the current worker).
    fn spawn<T, F>(f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static;
    /// From inside a task: give up the worker and be scheduled again (the runtime's own
    /// `yield_now`).
    fn yield_now() -> impl Future<Output = ()> + Send;
}
