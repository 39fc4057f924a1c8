//! Micro-benchmarks of what one hop of a message between two workers costs the runtime
//! beyond the hot-cache operations `calibrate` times on one thread: the sender's side
//! of a reschedule "IPI", a run-queue lock last held by the other CPU, a read-modify-
//! write of a line the other CPU wrote last (the task header's state word), a channel
//! receive that blocks (event listener registration and removal) and the transfer of
//! a channel's lines between CPUs, and a clock read (the runtime reads the clock after
//! every poll and at every preemption point).
//!
//! Each is timed on two threads pinned on CPUs 0 and 1 taking turns, one operation at
//! a time between two clock reads; the median of the samples, minus the median of an
//! empty interval (the clock read itself), is the cost. A median, because other users'
//! processes share these CPUs (see `calibrate::time_per`).

use crate::calibrate::{median, pin};
use schedlab_rt::park::Parker;
use serde::Serialize;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

/// The measured costs, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CrossCpu {
    /// One `Instant::now()` (the median of an empty timed interval).
    pub clock_read_ns: f64,
    /// The sender's side of the runtime's reschedule IPI to a worker that spins idle:
    /// the `need_resched` store (`SeqCst`, a line the target is reading) and
    /// `Parker::unpark` (a swap; no futex call, since the target never parked).
    pub ipi_send_ns: f64,
    /// From the sender's `need_resched` store to a worker spinning idle (the
    /// runtime's idle loop: a look at the flag every 4 `pause`s) seeing it.
    pub ipi_latency_ns: f64,
    /// `parking_lot` lock + unlock of a lock last held by the other CPU.
    pub lock_handoff_ns: f64,
    /// A compare-and-swap of a word the other CPU wrote last (a task header's state).
    pub rmw_transfer_ns: f64,
    /// A receive that blocks, beyond a hot `try_send` + `try_recv`: the `recv()`
    /// future's listener registration, the sender's notification and the removal of
    /// the listener at the ready poll (one thread, hot caches).
    pub recv_block_ns: f64,
    /// A message whose channel was last used on the other CPU, beyond the blocking
    /// receive and the signal to the receiver: the channel's lines moving between the
    /// CPUs (half a blocking ping-pong between two pinned threads minus the one-thread
    /// cycle, and the flag that stands for the IPI: its store and its latency).
    pub chan_transfer_ns: f64,
}

/// Median of `f`'s samples (each one operation between two clock reads) minus the
/// clock read itself, never below 0.
fn net(samples: Vec<f64>, clock: f64) -> f64 {
    (median(samples) - clock).max(0.0)
}

fn clock_read(n: usize) -> f64 {
    let s = (0..n)
        .map(|_| {
            let t = Instant::now();
            t.elapsed().as_nanos() as f64
        })
        .collect();
    median(s)
}

/// Two pinned threads alternate (`turn` says whose), each timing `op` once per turn.
/// Returns CPU 0's samples (both sides do the same thing).
fn alternate<F>(rounds: usize, op: F) -> Vec<f64>
where
    F: Fn(usize) + Send + Sync + 'static,
{
    let turn = Arc::new(AtomicU64::new(0));
    let op = Arc::new(op);
    let side = |me: u64| {
        let (turn, op) = (turn.clone(), op.clone());
        std::thread::spawn(move || {
            pin(me as usize);
            let mut s = Vec::with_capacity(rounds);
            for i in 0..rounds as u64 {
                while turn.load(Ordering::Acquire) != 2 * i + me {
                    std::hint::spin_loop();
                }
                let t = Instant::now();
                op(me as usize);
                s.push(t.elapsed().as_nanos() as f64);
                turn.store(2 * i + me + 1, Ordering::Release);
            }
            s
        })
    };
    let (a, b) = (side(0), side(1));
    b.join().expect("cpu 1 side");
    a.join().expect("cpu 0 side")
}

/// The sender's cost of `resched` to a spinning worker: CPU 1 spins on the flag (as the
/// idle loop does) and clears it; CPU 0, once it sees it cleared, times the store and
/// the unpark.
fn ipi_send(rounds: usize, clock: f64) -> f64 {
    let flag = Arc::new(AtomicBool::new(false));
    let parker = Arc::new(Parker::new());
    let stop = Arc::new(AtomicBool::new(false));
    let (f2, s2) = (flag.clone(), stop.clone());
    let spinner = std::thread::spawn(move || {
        pin(1);
        while !s2.load(Ordering::Relaxed) {
            if f2.load(Ordering::Acquire) {
                f2.store(false, Ordering::Release);
            }
            for _ in 0..4 {
                std::hint::spin_loop();
            }
        }
    });
    let sender = std::thread::spawn(move || {
        pin(0);
        let mut s = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            while flag.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
            // Let the spinner read the line again, as an idle worker does between hops.
            for _ in 0..50 {
                std::hint::spin_loop();
            }
            let t = Instant::now();
            flag.store(true, Ordering::SeqCst);
            parker.unpark();
            s.push(t.elapsed().as_nanos() as f64);
        }
        stop.store(true, Ordering::Relaxed);
        s
    });
    let s = sender.join().expect("sender");
    spinner.join().expect("spinner");
    net(s, clock)
}

/// From a store of the flag (the sender's clock reading in it) to CPU 1, spinning as
/// the runtime's idle loop does, seeing it; minus the reader's clock read.
fn ipi_latency(rounds: usize, clock: f64) -> f64 {
    let base = Instant::now();
    let stamp = Arc::new(AtomicU64::new(0));
    let s2 = stamp.clone();
    let spinner = std::thread::spawn(move || {
        pin(1);
        let mut s = Vec::with_capacity(rounds);
        while s.len() < rounds {
            let v = s2.load(Ordering::Acquire);
            if v != 0 {
                let now = base.elapsed().as_nanos() as u64;
                s.push(now.saturating_sub(v - 1) as f64);
                s2.store(0, Ordering::Release);
            }
            for _ in 0..4 {
                std::hint::spin_loop();
            }
        }
        s
    });
    let sender = std::thread::spawn(move || {
        pin(0);
        for _ in 0..rounds {
            while stamp.load(Ordering::Acquire) != 0 {
                std::hint::spin_loop();
            }
            // A pause between rounds, so that the spinner is in its loop, not at the store.
            let t = Instant::now();
            while t.elapsed().as_nanos() < 2_000 {
                std::hint::spin_loop();
            }
            stamp.store(base.elapsed().as_nanos() as u64 + 1, Ordering::SeqCst);
        }
    });
    sender.join().expect("sender");
    net(spinner.join().expect("spinner"), clock)
}

/// A waker that raises a flag the blocked side spins on (the IPI's stand-in).
struct FlagWaker(AtomicBool);
impl Wake for FlagWaker {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// Receive one message with `recv().await`'s path: poll; if pending, spin on the
/// waker's flag and poll again.
fn blocking_recv(rx: &async_channel::Receiver<()>, w: &Arc<FlagWaker>, waker: &Waker) {
    let mut f = pin!(rx.recv());
    let mut cx = Context::from_waker(waker);
    loop {
        if let Poll::Ready(r) = f.as_mut().poll(&mut cx) {
            r.expect("channel open");
            return;
        }
        while !w.0.swap(false, Ordering::Acquire) {
            std::hint::spin_loop();
        }
    }
}

/// One thread: `recv()` polled pending on an empty channel, a send (notifying it), the
/// ready poll; the median per cycle minus a hot `try_send` + `try_recv` (`pair_ns`).
fn recv_block(n: u64, pair_ns: f64) -> f64 {
    let (tx, rx) = async_channel::unbounded::<()>();
    let w = Arc::new(FlagWaker(AtomicBool::new(false)));
    let waker = Waker::from(w.clone());
    let cycle = crate::calibrate::time_per(n, || {
        let mut f = pin!(rx.recv());
        let mut cx = Context::from_waker(&waker);
        let first = f.as_mut().poll(&mut cx);
        debug_assert!(first.is_pending());
        tx.try_send(()).expect("unbounded");
        let r = f.as_mut().poll(&mut cx);
        debug_assert!(r.is_ready());
        w.0.store(false, Ordering::Relaxed);
    });
    (cycle - pair_ns).max(0.0)
}

/// Half the round trip of a blocking ping-pong between two pinned threads over two
/// channels (receive as `recv().await` does, the waker raising a flag).
fn blocking_pingpong(n: u64) -> f64 {
    let (a_tx, a_rx) = async_channel::unbounded::<()>();
    let (b_tx, b_rx) = async_channel::unbounded::<()>();
    let n = (n / crate::calibrate::BATCH).max(1) * crate::calibrate::BATCH;
    let pong = std::thread::spawn(move || {
        pin(1);
        let w = Arc::new(FlagWaker(AtomicBool::new(false)));
        let waker = Waker::from(w.clone());
        for _ in 0..n {
            blocking_recv(&a_rx, &w, &waker);
            b_tx.try_send(()).expect("unbounded");
        }
    });
    let ping = std::thread::spawn(move || {
        pin(0);
        let w = Arc::new(FlagWaker(AtomicBool::new(false)));
        let waker = Waker::from(w.clone());
        let mut batches = Vec::new();
        for _ in 0..n / crate::calibrate::BATCH {
            let t = Instant::now();
            for _ in 0..crate::calibrate::BATCH {
                a_tx.try_send(()).expect("unbounded");
                blocking_recv(&b_rx, &w, &waker);
            }
            batches.push(t.elapsed().as_nanos() as f64 / crate::calibrate::BATCH as f64);
        }
        median(batches)
    });
    let rtt = ping.join().expect("ping");
    pong.join().expect("pong");
    rtt / 2.0
}

/// Measure everything. `pair_ns`: a hot `try_send` + `try_recv`.
pub fn measure(quick: bool, pair_ns: f64) -> CrossCpu {
    let rounds = if quick { 2_000 } else { 20_000 };
    let clock_read_ns = clock_read(rounds * 5);
    let ipi_send_ns = ipi_send(rounds, clock_read_ns);
    let ipi_latency_ns = ipi_latency(rounds, clock_read_ns);
    let lock = Arc::new(parking_lot::Mutex::new(0u64));
    let lock_handoff_ns = net(alternate(rounds, move |_| *lock.lock() += 1), clock_read_ns);
    let word = Arc::new(AtomicU64::new(0));
    let rmw_transfer_ns = net(
        alternate(rounds, move |me| {
            let v = word.load(Ordering::Relaxed);
            let _ = word.compare_exchange(v, v + 1 + me as u64, Ordering::AcqRel, Ordering::Relaxed);
        }),
        clock_read_ns,
    );
    let recv_block_ns = recv_block(rounds as u64 * 5, pair_ns);
    let half = blocking_pingpong(rounds as u64 * 5);
    let chan_transfer_ns = (half - pair_ns - recv_block_ns - ipi_send_ns - ipi_latency_ns).max(0.0);
    CrossCpu {
        clock_read_ns,
        ipi_send_ns,
        ipi_latency_ns,
        lock_handoff_ns,
        rmw_transfer_ns,
        recv_block_ns,
        chan_transfer_ns,
    }
}
