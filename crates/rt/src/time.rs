//! Timers: [`sleep`], [`interval`], [`timeout`], and the [`Timer`] they are made of,
//! on the runtime's reactor (`reactor/timers.rs`; docs/architecture.md, "The
//! runtime's I/O path").
//!
//! A timer is a future like any other: a task that awaits one returns `Pending`, so
//! its scheduler sees it block (under a core policy: `schedule(prev, Blocked)`, it
//! leaves the run queue), and when the deadline passes the thread that drives the
//! reactor — a worker asleep in its poll, or a busy worker's look — fires the task's
//! waker, which goes through the scheduler's ordinary wake path (under a core policy:
//! `wake_up`). They work under every scheduler, and in `block_on`, while a runtime is
//! running.

use crate::reactor;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// A one-shot or periodic timer. As a future it resolves to its deadline; as a stream
/// (periodic ones) it yields every deadline.
#[derive(Debug)]
pub struct Timer {
    /// `None`: never fires.
    when: Option<Instant>,
    /// Zero: one-shot.
    period: Duration,
    /// The registration in the reactor's timers (the entry's clone of the waker keeps
    /// that task alive while it is registered).
    registered: Option<Registration>,
}

impl Timer {
    /// A timer that never fires.
    pub fn never() -> Timer {
        Timer { when: None, period: Duration::ZERO, registered: None }
    }

    /// Fires `dur` from now.
    pub fn after(dur: Duration) -> Timer {
        Instant::now().checked_add(dur).map_or_else(Timer::never, Timer::at)
    }

    /// Fires at `deadline`.
    pub fn at(deadline: Instant) -> Timer {
        Timer { when: Some(deadline), period: Duration::ZERO, registered: None }
    }

    /// Fires every `period`, the first time `period` from now.
    pub fn interval(period: Duration) -> Timer {
        Instant::now().checked_add(period).map_or_else(Timer::never, |start| Timer::interval_at(start, period))
    }

    /// Fires at `start`, then every `period`.
    pub fn interval_at(start: Instant, period: Duration) -> Timer {
        Timer { when: Some(start), period, registered: None }
    }

    /// Fire at `deadline` instead (a one-shot timer again if it was periodic).
    pub fn set_at(&mut self, deadline: Instant) {
        self.deregister();
        self.when = Some(deadline);
        self.period = Duration::ZERO;
    }

    /// Fire `dur` from now instead.
    pub fn set_after(&mut self, dur: Duration) {
        match Instant::now().checked_add(dur) {
            Some(d) => self.set_at(d),
            None => {
                self.deregister();
                self.when = None;
            }
        }
    }

    fn deregister(&mut self) {
        if let Some(Registration { when, id, slot, .. }) = self.registered.take() {
            if let Some(r) = reactor::started() {
                r.timers.remove(when, id, slot);
            }
        }
    }

    /// The next deadline now, or `Pending` with the waker registered for it.
    ///
    /// A timer polled for the first time with this waker compares its deadline with
    /// the clock reading this thread last took for the timers (a worker's look before
    /// each pick: `reactor::timers::seen_now`), as Tokio's timers compare with their
    /// driver's last time: never ahead of the clock, so a timer it finds due is due,
    /// and one it finds not yet due is registered and fired by the next look if it is
    /// due already. A timer polled again with the same waker may have fired meanwhile
    /// (its registration is then gone): it reads the clock.
    fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        let Some(when) = self.when else { return Poll::Pending };
        let waker = WakerId::of(cx.waker());
        let same = matches!(self.registered, Some(r) if r.when == when && r.waker == waker);
        let now = match reactor::timers::seen_now() {
            Some(seen) if !same => seen,
            _ => Instant::now(),
        };
        if now >= when {
            self.deregister();
            if self.period.is_zero() {
                // Fired: a one-shot timer stays pending if polled again.
                self.when = None;
            } else {
                // On the grid `start + k·period`: a late tick is delivered at once and
                // the missed ones follow in a burst.
                self.when = when.checked_add(self.period);
            }
            return Poll::Ready(when);
        }
        if !same {
            self.deregister();
            // A timer needs a running reactor; if none could start, it never fires.
            if let Ok(r) = reactor::get() {
                let id = r.timers.next_id();
                let slot = r.timers.insert(when, id, cx.waker().clone());
                self.registered = Some(Registration { when, id, slot, waker });
            }
        }
        Poll::Pending
    }
}

/// A timer's entry in the reactor's timers: its key, the slab slot of a far timer (a
/// hint: it may have moved into the map), and which waker the entry holds.
#[derive(Clone, Copy, Debug)]
struct Registration {
    when: Instant,
    id: u64,
    slot: Option<usize>,
    waker: WakerId,
}

/// Which waker a registration holds: the addresses `Waker::will_wake` compares, kept
/// as integers so that a `Timer` stays `Send` and `Sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WakerId(usize, usize);

impl WakerId {
    fn of(w: &Waker) -> WakerId {
        WakerId(w.data() as usize, w.vtable() as *const _ as usize)
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.deregister();
    }
}

impl Future for Timer {
    type Output = Instant;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Instant> {
        self.get_mut().poll_tick(cx)
    }
}

impl futures_lite::Stream for Timer {
    type Item = Instant;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        self.get_mut().poll_tick(cx).map(Some)
    }
}

/// Wait until `dur` has passed. Resolves to the instant the task was polled after the
/// deadline (so it includes the wake-up's latency).
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
/// but come in a burst.
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
