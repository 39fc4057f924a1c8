//! Timers: [`sleep`], [`interval`], [`timeout`], on the process's one reactor
//! (`async-io`'s `Timer`; docs/architecture.md, "The runtime's I/O path").
//!
//! A timer is a future like any other: a task that awaits one returns `Pending`, so
//! its scheduler sees it block (under a core policy: `schedule(prev, Blocked)`, it
//! leaves the run queue), and when the deadline passes the reactor's thread fires
//! the task's waker, which goes through the scheduler's ordinary wake path (under a
//! core policy: `wake_up`). They work under every scheduler, and in `block_on`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

pub use async_io::Timer;

/// Wait until `dur` has passed. Resolves to the instant the timer fired at (read when
/// the task is polled again, so it includes the wake-up's latency).
pub fn sleep(dur: Duration) -> Sleep {
    let deadline = Instant::now().checked_add(dur);
    Sleep { timer: deadline.map_or_else(Timer::never, Timer::at), deadline }
}

/// Wait until `deadline`.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep { timer: Timer::at(deadline), deadline: Some(deadline) }
}

/// The future [`sleep`] returns.
#[derive(Debug)]
#[must_use = "a sleep does nothing unless awaited"]
pub struct Sleep {
    timer: Timer,
    /// `None`: too far away to represent (never fires).
    deadline: Option<Instant>,
}

impl Sleep {
    /// When it is due.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
}

impl Future for Sleep {
    type Output = Instant;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Instant> {
        // `Timer` is `Unpin`.
        Pin::new(&mut self.timer).poll(cx).map(|_| Instant::now())
    }
}

/// A tick every `period`, the first one `period` from now.
///
/// A tick that is late (the task ran long, or waited for a CPU) is delivered at once,
/// and the next one stays on the grid `start + k·period`: missed ticks are not skipped
/// but come in a burst, as `async-io`'s periodic `Timer` delivers them.
pub fn interval(period: Duration) -> Interval {
    Interval(Timer::interval(period))
}

/// The ticker [`interval`] returns.
#[derive(Debug)]
pub struct Interval(Timer);

impl Interval {
    /// Wait for the next tick; resolves to the tick's deadline.
    pub async fn tick(&mut self) -> Instant {
        (&mut self.0).await
    }
}

impl futures_lite::Stream for Interval {
    type Item = Instant;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        Pin::new(&mut self.0).poll_next(cx)
    }
}

/// A [`timeout`] ran out before its future finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed;

impl std::fmt::Display for Elapsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    fn from(_: Elapsed) -> std::io::Error {
        std::io::ErrorKind::TimedOut.into()
    }
}

/// Run `fut` for at most `dur`: its output, or [`Elapsed`] (and `fut` is dropped).
/// The future is polled first, so one that is ready wins over a timer that is due.
pub async fn timeout<F: Future>(dur: Duration, fut: F) -> Result<F::Output, Elapsed> {
    futures_lite::future::or(async { Ok(fut.await) }, async {
        Timer::after(dur).await;
        Err(Elapsed)
    })
    .await
}
