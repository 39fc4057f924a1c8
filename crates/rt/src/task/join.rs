//! Join handles: the output slot of a task and the errors it can carry (panic,
//! cancellation).
//!
//! The slot lives in the task's own allocation (`cell.rs`) under a small `parking_lot`
//! mutex that is taken twice per task (completion, and the join handle's poll); the
//! handle reaches it through `Arc<dyn JoinTarget<T>>`, so its type names only the
//! output, not the future or the scheduler.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// Why a task produced no value.
pub struct JoinError {
    repr: Repr,
}

enum Repr {
    Panic(Box<dyn Any + Send + 'static>),
    Cancelled,
}

impl JoinError {
    pub(crate) fn panic(p: Box<dyn Any + Send + 'static>) -> JoinError {
        JoinError { repr: Repr::Panic(p) }
    }
    pub(crate) fn cancelled() -> JoinError {
        JoinError { repr: Repr::Cancelled }
    }
    /// The task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }
    /// The task was dropped unfinished (runtime shut down).
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }
    /// The panic payload; panics if the task did not panic.
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        match self.repr {
            Repr::Panic(p) => p,
            Repr::Cancelled => panic!("JoinError::into_panic on a cancelled task"),
        }
    }
    /// The panic message, when the payload is a string.
    pub fn panic_message(&self) -> Option<&str> {
        match &self.repr {
            Repr::Panic(p) => {
                p.downcast_ref::<&str>().copied().or_else(|| p.downcast_ref::<String>().map(|s| s.as_str()))
            }
            Repr::Cancelled => None,
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Panic(_) => match self.panic_message() {
                Some(m) => write!(f, "task panicked: {m}"),
                None => f.write_str("task panicked"),
            },
            Repr::Cancelled => f.write_str("task was cancelled"),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Panic(_) => write!(f, "JoinError::Panic({:?})", self.panic_message().unwrap_or("..")),
            Repr::Cancelled => f.write_str("JoinError::Cancelled"),
        }
    }
}

impl std::error::Error for JoinError {}

/// The output slot of a task.
pub(crate) struct JoinSlot<T> {
    pub output: Option<Result<T, JoinError>>,
    pub waker: Option<Waker>,
    pub done: bool,
}

impl<T> Default for JoinSlot<T> {
    fn default() -> Self {
        JoinSlot { output: None, waker: None, done: false }
    }
}

/// What a [`JoinHandle`] needs of its task (implemented by the task cell).
pub(crate) trait JoinTarget<T>: Send + Sync {
    fn poll_join(&self, cx: &mut Context<'_>) -> Poll<Result<T, JoinError>>;
    fn is_done(&self) -> bool;
}

/// An owned permission to await a task's output. `.await` gives `Ok(value)`, or a
/// [`JoinError`] if the task panicked or was cancelled. Dropping it detaches the task.
pub struct JoinHandle<T> {
    raw: Arc<dyn JoinTarget<T>>,
}

impl<T> JoinHandle<T> {
    pub(crate) fn new(raw: Arc<dyn JoinTarget<T>>) -> JoinHandle<T> {
        JoinHandle { raw }
    }
    /// Has the task finished (completed, panicked or been cancelled)?
    pub fn is_finished(&self) -> bool {
        self.raw.is_done()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.raw.poll_join(cx)
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").field("finished", &self.is_finished()).finish()
    }
}
