//! The reactor: one `mio::Poll` (epoll on Linux) per process, its timers, and the
//! readiness of every registered socket — driven by the runtime's own workers.
//!
//! **Who drives it.** There is no reactor thread. A worker that has nothing to run and
//! is about to sleep takes the driver if it is free ([`try_drive`]) and sleeps in
//! `epoll_wait` instead of on its condition variable (`park.rs`,
//! `Parker::park_driving`): an event, a due timer or an unpark (an `eventfd` write,
//! [`wake_driver`]) ends the wait, and the worker fires the wakers of what became
//! ready *on its own thread*, so the woken task takes the scheduler's wake path from a
//! worker (under `fast`, into that worker's LIFO slot; under a core policy,
//! `wake_up` on that worker's CPU) and runs without a thread switch. Busy workers
//! look without blocking ([`ReactorRef::poll_now`]): a `fast` worker every `GLOBAL_INTERVAL` picks
//! and while it spins, a policy worker at every tick and while it spins, and both when
//! a timer is due (the earliest deadline is one atomic they compare with the clock
//! between polls). This is Tokio's design (`runtime/scheduler/multi_thread/park.rs`,
//! `runtime/driver.rs`), with timers checked between polls rather than every 61.
//!
//! **Why `mio`.** `mio` is the maintained portable poller of the Tokio project:
//! `Poll`, `Registry`, edge-triggered registration of a raw fd (`SourceFd`), and a
//! cross-thread `Waker` (an `eventfd`). What it leaves to the user is what decides who
//! runs the wake-up — who polls, and where the wakers fire — which is the part this
//! runtime must own (`async-io`'s reactor comes with its own thread, which costs two
//! thread switches per readiness event on a busy CPU; docs/bench.md).
//!
//! Files: `source.rs` (a socket's readiness and its wakers), `timers.rs` (the timer
//! map and the driver's deadline). The loom build replaces this module with a model
//! of the driver's hand-shake (`model.rs`): `tests/loom_park.rs` checks the park path.

#[cfg(loom)]
mod model;
#[cfg(loom)]
pub(crate) use model::{try_drive, wake_driver, ReactorRef};

#[cfg(not(loom))]
pub(crate) mod source;
#[cfg(not(loom))]
pub(crate) mod timers;

#[cfg(not(loom))]
pub(crate) use real::*;

#[cfg(not(loom))]
mod real {
    use super::source::ScheduledIo;
    use super::timers::Timers;
    use mio::{Events, Interest, Poll, Registry, Token};
    use parking_lot::{Mutex, MutexGuard};
    use slab::Slab;
    use std::io;
    use std::os::fd::RawFd;
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use std::sync::{Arc, OnceLock};
    use std::task::Waker;
    use std::time::Duration;

    /// The token of the driver's `Waker` (no source has it: slab keys are small).
    const WAKE_TOKEN: Token = Token(usize::MAX);
    /// Events taken per `epoll_wait`.
    const EVENTS: usize = 1024;

    /// The process's reactor.
    pub(crate) struct Reactor {
        driver: Mutex<Driver>,
        registry: Registry,
        waker: mio::Waker,
        /// Registered sockets by token. An event for a key that was removed (or
        /// reused) meanwhile only marks a socket ready that is not: its next
        /// operation sees `WouldBlock` and clears it.
        sources: Mutex<Slab<Arc<ScheduledIo>>>,
        /// How many sockets are registered: a busy worker's look ([`ReactorRef::poll_now`]) skips
        /// the system call when there are none and no timer is set.
        nsources: AtomicUsize,
        pub(crate) timers: Timers,
    }

    /// What only the driving thread touches.
    struct Driver {
        poll: Poll,
        events: Events,
        /// The wakers an event or a timer made due, fired after the lookup.
        due: Vec<Waker>,
    }

    static REACTOR: OnceLock<Result<Reactor, String>> = OnceLock::new();

    fn create() -> io::Result<Reactor> {
        let poll = Poll::new()?;
        let registry = poll.registry().try_clone()?;
        let waker = mio::Waker::new(poll.registry(), WAKE_TOKEN)?;
        Ok(Reactor {
            driver: Mutex::new(Driver { poll, events: Events::with_capacity(EVENTS), due: Vec::new() }),
            registry,
            waker,
            sources: Mutex::new(Slab::new()),
            nsources: AtomicUsize::new(0),
            timers: Timers::new(),
        })
    }

    /// The reactor, created at the first call (a runtime's start, the first timer or
    /// socket). An error (no epoll instance could be made) is returned to every caller.
    pub(crate) fn get() -> io::Result<&'static Reactor> {
        match REACTOR.get_or_init(|| create().map_err(|e| e.to_string())) {
            Ok(r) => Ok(r),
            Err(e) => Err(io::Error::other(format!("the reactor could not start: {e}"))),
        }
    }

    /// The reactor if it is running.
    pub(crate) fn started() -> Option<&'static Reactor> {
        REACTOR.get().and_then(|r| r.as_ref().ok())
    }

    /// The driver, held by the thread that polls.
    pub(crate) struct DriveGuard {
        reactor: &'static Reactor,
        driver: MutexGuard<'static, Driver>,
    }

    /// Take the driver unless another thread has it (or no reactor runs).
    pub(crate) fn try_drive() -> Option<DriveGuard> {
        let reactor = started()?;
        let driver = reactor.driver.try_lock()?;
        Some(DriveGuard { reactor, driver })
    }

    /// End the current (or the next) blocking turn of whoever drives.
    pub(crate) fn wake_driver() {
        if let Some(r) = started() {
            // An `eventfd` write: it fails only if the counter would overflow, and then
            // the driver has a wake-up pending anyway.
            let _ = r.waker.wake();
        }
    }

    impl DriveGuard {
        /// Wait for events for at most `timeout` (`None`: until an event, a timer or
        /// [`wake_driver`]), fire the wakers of what is ready and of the timers that
        /// are due, calling `before_wakes` first if there are any. Returns how many
        /// wakers fired.
        pub(crate) fn turn(&mut self, timeout: Option<Duration>, before_wakes: &mut dyn FnMut()) -> usize {
            let r = self.reactor;
            let d = &mut *self.driver;
            // A look that does not block needs no deadline for inserts to wake.
            let blocks = timeout != Some(Duration::ZERO);
            let timeout = if blocks { r.timers.arm(timeout) } else { timeout };
            let polled = d.poll.poll(&mut d.events, timeout);
            if blocks {
                r.timers.disarm();
            }
            // EINTR: no events; anything else (EBADF, EFAULT) cannot happen with the
            // poll we own. Either way the timers below still fire.
            if polled.is_ok() && !d.events.is_empty() {
                let sources = r.sources.lock();
                for ev in d.events.iter() {
                    if ev.token() == WAKE_TOKEN {
                        continue;
                    }
                    if let Some(s) = sources.get(ev.token().0) {
                        s.set_ready(ev, &mut d.due);
                    }
                }
            }
            r.timers.fire(&mut d.due);
            let n = d.due.len();
            if n > 0 {
                before_wakes();
            }
            for w in d.due.drain(..) {
                w.wake();
            }
            n
        }
    }

    /// A look without blocking, by a worker that is busy or spinning: fire what is
    /// ready. Nothing (not even a system call) when there is nothing to watch or
    /// another thread drives. Returns how many wakers fired.
    fn poll_now_on(reactor: &'static Reactor) -> usize {
        if reactor.nsources.load(Relaxed) == 0 && reactor.timers.is_empty() {
            return 0;
        }
        match reactor.driver.try_lock() {
            Some(driver) => DriveGuard { reactor, driver }.turn(Some(Duration::ZERO), &mut || {}),
            None => 0,
        }
    }

    /// The reactor as a scheduler keeps it, for its workers' looks (ticks, picks, polls,
    /// spins) without the lookup of the process's reactor.
    #[derive(Clone, Copy)]
    pub(crate) struct ReactorRef(Option<&'static Reactor>);

    impl ReactorRef {
        /// The process's reactor (started here if it is not yet).
        pub(crate) fn get() -> ReactorRef {
            ReactorRef(get().ok())
        }
        /// Whether a timer is due now: a `fast` worker's look before each pick (one
        /// load when no timer is set; a clock reading otherwise).
        #[inline]
        pub(crate) fn timer_due_now(self) -> bool {
            self.0.is_some_and(|r| r.timers.due_now())
        }
        /// Whether a timer is due at `at_ns` after `origin`: a policy worker's look
        /// after each poll, with the clock it has just read (one load when no timer is
        /// set).
        #[inline]
        pub(crate) fn timer_due(self, origin: std::time::Instant, at_ns: u64) -> bool {
            self.0.is_some_and(|r| r.timers.due(origin, at_ns))
        }
        /// A look without blocking (see `poll_now_on`): how many wakers fired.
        #[inline]
        pub(crate) fn poll_now(self) -> usize {
            self.0.map_or(0, poll_now_on)
        }
    }

    impl Reactor {
        /// Register `fd` for read and write readiness (edge-triggered, once for its
        /// life): its readiness and wakers, and the key to deregister with.
        pub(crate) fn register(&self, fd: RawFd) -> io::Result<(usize, Arc<ScheduledIo>)> {
            let io = Arc::new(ScheduledIo::default());
            let key = self.sources.lock().insert(io.clone());
            let mut src = mio::unix::SourceFd(&fd);
            if let Err(e) = self.registry.register(&mut src, Token(key), Interest::READABLE | Interest::WRITABLE) {
                self.sources.lock().remove(key);
                return Err(e);
            }
            self.nsources.fetch_add(1, Relaxed);
            Ok((key, io))
        }

        /// Undo [`Reactor::register`], before `fd` is closed.
        pub(crate) fn deregister(&self, fd: RawFd, key: usize) {
            // The fd is still open here, so this only fails if it was never added.
            let _ = self.registry.deregister(&mut mio::unix::SourceFd(&fd));
            if self.sources.lock().try_remove(key).is_some() {
                self.nsources.fetch_sub(1, Relaxed);
            }
        }
    }
}
