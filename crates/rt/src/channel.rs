//! An unbounded multi-producer, single-consumer channel for message-driven tasks.
//!
//! Any runtime-agnostic channel works on this runtime (async-channel, flume, futures'
//! mpsc); this one is the runtime's own, made for the Chat / hackbench pattern where a
//! receiver wakes up to a burst of queued messages:
//!
//! * One lock per channel guards the queue, the receiver's waker and the close flags.
//!   A send is one uncontended lock, a `push_back`, and, only if the receiver is
//!   waiting, taking its waker (the wake happens after the unlock).
//! * **One message inline.** A message sent to an empty channel waits in a slot of the
//!   channel's own state, next to the lock: a request-reply hand-off then moves the
//!   lock's cache line and no line of a queue's heap buffer (which the two sides
//!   would otherwise trade at every message). Later messages queue behind it.
//! * **Batched receive.** The receiver owns a private buffer. When that runs dry it
//!   swaps it with the shared queue under the lock, so a burst of `k` queued messages
//!   costs one lock acquisition, not `k`, and the two `VecDeque`s trade capacity back
//!   and forth without allocating in the steady state.
//! * The receiver registers its waker when it finds nothing, and also when it takes a
//!   single message (a request-reply hand-off: it will most likely wait again once the
//!   message is handled; a batch of several is a stream, where a registered waker would
//!   only wake the running receiver); a send takes it out, so a receiver that is
//!   already scheduled is never woken twice.
//! * **Waiting without the lock.** Every send (and the close) bumps `events` under the
//!   lock, with a plain store. A receiver whose buffer is empty, whose waker is still
//!   registered (same task) and that sees `events` unchanged since it last held the
//!   lock returns `Pending` without taking the lock: nothing was queued since, or a send
//!   is under way that will take that very waker and wake it. (A stale read of
//!   `events` is possible only before the wake reaches the task; the executor's
//!   wake → poll hand-over orders the next poll after the send: schedlab's through
//!   the task state's acquire/release read-modify-writes, loom's `block_on` through
//!   its notify. A receiver that took a batch after the close never waits this way:
//!   no event would come.) A message hand-off
//!   (receive, reply, wait again) then costs two lock acquisitions per message, not
//!   three.
//!
//! Everything else is behind the one lock: a send either finds the waker (and wakes
//! it) or happened before the receiver looked at the queue (and the receiver finds
//! the message). loom checks that, the lock-free wait and the close hand-shake
//! (`tests/loom_park.rs`).

use crate::sync::{chan_lock, Arc, AtomicUsize, ChanMutex};
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, RawWakerVTable, Waker};

/// A new unbounded channel.
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    let chan = Arc::new(Chan {
        events: AtomicUsize::new(0),
        state: ChanMutex::new(State {
            first: None,
            queue: VecDeque::new(),
            waker: None,
            senders_gone: false,
            receiver_gone: false,
        }),
        senders: AtomicUsize::new(1),
    });
    (Sender { chan: chan.clone() }, Receiver { chan, buf: VecDeque::new(), registered: None })
}

/// Laid out so that what a hand-off touches, `events`, the lock, the inline message
/// and the waker, shares one cache line (for a small message); the queue and the
/// sender count come after.
#[repr(C, align(64))]
struct Chan<T> {
    /// Sends and closes so far. Written only under the lock (a load and a store, no
    /// read-modify-write); read without it by the receiver (see the module docs).
    events: AtomicUsize,
    state: ChanMutex<State<T>>,
    /// Live senders; the last one to drop closes the channel.
    senders: AtomicUsize,
}

impl<T> Chan<T> {
    /// Count a send or the close; the caller holds the lock.
    fn bump_events(&self) {
        self.events.store(self.events.load(Ordering::Relaxed).wrapping_add(1), Ordering::Release);
    }
}

#[repr(C)]
struct State<T> {
    /// The oldest message queued, if any: `queue` holds only messages sent after it
    /// (so an empty `first` means an empty queue, and a send reads nothing else).
    first: Option<T>,
    /// The receiver, if it is waiting for a message.
    waker: Option<Waker>,
    senders_gone: bool,
    receiver_gone: bool,
    queue: VecDeque<T>,
}

impl<T> State<T> {
    /// Take every queued message: the oldest is returned, the rest land in `buf`
    /// (empty: the receiver looks here only once its buffer is drained).
    fn take_all(&mut self, buf: &mut VecDeque<T>) -> Option<T> {
        debug_assert!(buf.is_empty());
        let first = self.first.take()?;
        if !self.queue.is_empty() {
            std::mem::swap(&mut self.queue, buf);
        }
        Some(first)
    }
}

/// The sending half; clone it for more producers. Sending never waits.
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

/// The receiving half (one consumer).
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
    /// Messages already taken from the shared queue, in order.
    buf: VecDeque<T>,
    /// The waker this receiver left in the channel (its data and vtable pointers) and
    /// `events` at that moment, while it may still be there.
    /// (Addresses as integers: compared, never dereferenced.)
    registered: Option<(usize, usize, usize)>,
}

/// A waker's identity, as `Waker::will_wake` compares it: data and vtable addresses.
#[inline]
fn identity(w: &Waker) -> (usize, usize) {
    (w.data() as usize, w.vtable() as *const RawWakerVTable as usize)
}

/// The receiver is gone; the message comes back.
#[derive(PartialEq, Eq)]
pub struct SendError<T>(pub T);

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sending on a channel whose receiver is gone")
    }
}

impl<T> std::error::Error for SendError<T> {}

/// Why [`Receiver::try_recv`] returned no message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TryRecvError {
    /// Nothing queued, but senders remain.
    Empty,
    /// Nothing queued and every sender is gone.
    Disconnected,
}

impl<T> Sender<T> {
    /// Queue `msg` and wake the receiver if it is waiting. Fails only if the receiver
    /// has been dropped.
    pub fn send(&self, msg: T) -> Result<(), SendError<T>> {
        let mut s = chan_lock(&self.chan.state);
        if s.receiver_gone {
            return Err(SendError(msg));
        }
        if s.first.is_none() {
            debug_assert!(s.queue.is_empty());
            s.first = Some(msg);
        } else {
            s.queue.push_back(msg);
        }
        let waker = s.waker.take();
        self.chan.bump_events();
        drop(s);
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Whether the receiver has been dropped.
    pub fn is_closed(&self) -> bool {
        chan_lock(&self.chan.state).receiver_gone
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.senders.fetch_add(1, Ordering::Relaxed);
        Sender { chan: self.chan.clone() }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.chan.senders.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let waker = {
            let mut s = chan_lock(&self.chan.state);
            s.senders_gone = true;
            self.chan.bump_events();
            s.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> Receiver<T> {
    /// The next message, or `None` once every sender is gone and the queue is empty.
    pub fn recv(&mut self) -> Recv<'_, T> {
        Recv { rx: self }
    }

    /// The next message if one is queued.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        if let Some(v) = self.buf.pop_front() {
            return Ok(v);
        }
        let mut s = chan_lock(&self.chan.state);
        match s.take_all(&mut self.buf) {
            Some(v) => Ok(v),
            None if s.senders_gone => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }

    /// Poll for the next message; registers `cx`'s waker when there is none.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if let Some(v) = self.buf.pop_front() {
            return Poll::Ready(Some(v));
        }
        let w = cx.waker();
        if let Some((data, vtable, seen)) = self.registered {
            // Our waker is still in the channel and nothing was sent since we last
            // looked (or a send under way will take that waker and wake it).
            if (data, vtable) == identity(w) && self.chan.events.load(Ordering::Acquire) == seen {
                return Poll::Pending;
            }
        }
        self.poll_locked(w)
    }

    /// [`Receiver::poll_recv`] under the lock: take the queue, or wait (register `w`).
    /// Out of line: the two cheap paths above stay small.
    #[inline(never)]
    fn poll_locked(&mut self, w: &Waker) -> Poll<Option<T>> {
        let mut s = chan_lock(&self.chan.state);
        if s.senders_gone || (s.first.is_some() && !s.queue.is_empty()) {
            // No event will come any more: never wait without the lock (found by loom:
            // a batch taken after the close, then a lock-free wait for nothing).
            // Or a stream: a batch of several messages says more are likely on the way
            // while we work through it, and a waker left here would be woken for each
            // batch while this task runs (a wake and a spurious poll per batch: Chat
            // and hackbench lost 5–18 % that way). Register again when we find nothing.
            self.registered = None;
        } else {
            // Leave (or keep) our waker there, also when taking a single message (a
            // request-reply hand-off): once it is handled we will most likely wait
            // again, and then need no lock.
            match &s.waker {
                Some(old) if old.will_wake(w) => {}
                _ => s.waker = Some(w.clone()),
            }
            let (data, vtable) = identity(w);
            self.registered = Some((data, vtable, self.chan.events.load(Ordering::Relaxed)));
        }
        if let Some(v) = s.take_all(&mut self.buf) {
            return Poll::Ready(Some(v));
        }
        if s.senders_gone {
            return Poll::Ready(None);
        }
        Poll::Pending
    }

    /// Messages queued and not yet received.
    pub fn len(&self) -> usize {
        let s = chan_lock(&self.chan.state);
        self.buf.len() + s.queue.len() + usize::from(s.first.is_some())
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        // Drop undelivered messages outside the lock (their destructors may send).
        let queued = {
            let mut s = chan_lock(&self.chan.state);
            s.receiver_gone = true;
            s.waker = None;
            (s.first.take(), std::mem::take(&mut s.queue))
        };
        drop(queued);
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").field("buffered", &self.buf.len()).finish_non_exhaustive()
    }
}

/// Future of [`Receiver::recv`].
#[must_use = "futures do nothing unless polled"]
pub struct Recv<'a, T> {
    rx: &'a mut Receiver<T>,
}

impl<T> Future for Recv<'_, T> {
    type Output = Option<T>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.rx.poll_recv(cx)
    }
}
