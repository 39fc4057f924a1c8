//! Micro-benchmarks of what one hop of a message between two workers costs the runtime
//! beyond the hot-cache operations `calibrate` times on one thread: the sender's side
//! of a reschedule "IPI", a run-queue lock last held by the other CPU, a read-modify-
//! write of a line the other CPU wrote last (the task header's state word), a channel
//! receive that blocks (event listener registration and removal), a send into and a
//! receive from a channel whose lines the other CPU wrote last, and a clock read (the runtime reads the clock after
//! every poll and at every preemption point).
//!
//! Each is timed on two threads pinned on CPUs 0 and 1 taking turns, one operation at
//! a time between two clock reads; the median of the samples, minus the median of an
//! empty interval (the clock read itself), is the cost. A median, because other users'
//! processes share these CPUs (see `timing::time_per`).

use crate::timing::median;
use crate::timing::pin;
use schedlab_rt::park::Parker;
use serde::Serialize;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
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
    /// From the end of the sender's side (the store and the unpark) to the spinning
    /// worker seeing the flag: what is left of the IPI's latency once the sender has
    /// paid `ipi_send_ns`. The simulator starts an IPI's latency there (the send is
    /// charged first), so this is the host machine's `ipi_latency_ns`; taken from the
    /// store, the host's IPIs would land a whole send (70–100 ns) late and lose the
    /// woken task to the waker (docs/cost-model.md).
    pub ipi_after_send_ns: f64,
    /// Policy-lock mutex (`schedlab_rt::PolicyMutex`) lock + unlock of a lock last held by the other CPU.
    pub lock_handoff_ns: f64,
    /// A compare-and-swap of a word the other CPU wrote last (a task header's state).
    pub rmw_transfer_ns: f64,
    /// A receive that blocks, beyond a hot `try_send` + `try_recv`: the `recv()`
    /// future's listener registration, the sender's notification and the removal of
    /// the listener at the ready poll (one thread, hot caches).
    pub recv_block_ns: f64,
    /// A `try_send` into a channel whose lines the other CPU wrote last (its receive:
    /// the slot's READ mark, and the tail index it read), beyond a hot `try_send` on one
    /// CPU (`chan_send_hot_ns`).
    pub chan_send_xcpu_ns: f64,
    /// A `try_recv` of a message the other CPU sent (the slot it wrote, the tail index
    /// it advanced), beyond a hot `try_recv` on one CPU (`chan_recv_hot_ns`).
    pub chan_recv_xcpu_ns: f64,
    /// A `try_send` into a channel the other CPU last sent into *and* received from
    /// (the tail index too was written there), beyond a hot `try_send`: how much more
    /// a send pays after another CPU's send (hackbench's senders share channels).
    /// Reported, not charged: the simulator prices a send by the last touch alone.
    pub chan_send_after_send_ns: f64,
    /// A blocking receive whose channel's latest send was on the other CPU: the
    /// pending poll that registers the listener, beyond the same poll on one thread
    /// (`blocking_cross`). The host machine's `recv_register_xcpu_ns`.
    pub recv_register_xcpu_ns: f64,
    /// A `try_send` that notifies a listener registered on the other CPU, beyond a hot
    /// notifying send and beyond `chan_send_xcpu_ns` (which the simulator charges for
    /// the same send). The host machine's `notify_xcpu_ns`.
    pub notify_xcpu_ns: f64,
    /// The hot baselines, timed the same way (one operation between two clock reads,
    /// the clock read included): what the cross-CPU costs are measured against.
    pub chan_send_hot_ns: f64,
    pub chan_recv_hot_ns: f64,
    /// One of 16 lines the other CPU wrote, read as a dependent chain, and read as
    /// independent loads (`crate::linexfer`): their ratio is the host's `mlp`.
    pub line_chain_ns: f64,
    pub line_independent_ns: f64,
    /// The same 16 lines read and written as a chain: against `line_chain_ns`, whether
    /// a store's ownership request is on the critical path (the host's `store_buffer`).
    pub line_chain_write_ns: f64,
}

impl CrossCpu {
    /// Misses this machine overlaps: the host machine's `mlp`.
    pub fn mlp(&self) -> u32 {
        crate::linexfer::mlp_of(self.line_chain_ns, self.line_independent_ns)
    }
    /// Store-buffer entries for write misses: the host machine's `store_buffer`.
    pub fn store_buffer(&self) -> u32 {
        crate::linexfer::store_buffer_of(self.line_chain_ns, self.line_chain_write_ns)
    }
}

/// Median of `f`'s samples (each one operation between two clock reads) minus the
/// clock read itself, never below 0.
fn net(samples: Vec<f64>, clock: f64) -> f64 {
    (median(samples) - clock).max(0.0)
}

fn clock_read(n: usize) -> f64 {
    let s: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            t.elapsed().as_nanos() as f64
        })
        .collect();
    median(s)
}

/// Two threads pinned to CPUs 0 and 1 take turns (`turn` says whose), each running
/// `op(me)` once per turn; returns each side's samples (what its `op` returned).
fn take_turns<F>(rounds: usize, op: F) -> [Vec<f64>; 2]
where
    F: Fn(usize) -> Option<f64> + Send + Sync + 'static,
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
                s.extend(op(me as usize));
                turn.store(2 * i + me + 1, Ordering::Release);
            }
            s
        })
    };
    let (a, b) = (side(0), side(1));
    let b = b.join().expect("cpu 1 side");
    [a.join().expect("cpu 0 side"), b]
}

/// Two pinned threads alternate, each timing `op` once per turn. Returns CPU 0's
/// samples (both sides do the same thing).
fn alternate<F>(rounds: usize, op: F) -> Vec<f64>
where
    F: Fn(usize) + Send + Sync + 'static,
{
    let [a, _] = take_turns(rounds, move |me| {
        let t = Instant::now();
        op(me);
        Some(t.elapsed().as_nanos() as f64)
    });
    a
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
/// the runtime's idle loop does, seeing it; and from the end of the sender's whole
/// side (that store and `Parker::unpark`, as `resched` does them) to the same moment.
/// Each minus the reader's clock read. The second can be below the first by more than
/// the send: the target may see the flag while the sender is still in its unpark.
fn ipi_latency(rounds: usize, clock: f64) -> (f64, f64) {
    let base = Instant::now();
    let stamp = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let (s2, d2) = (stamp.clone(), done.clone());
    let spinner = std::thread::spawn(move || {
        pin(1);
        let (mut from_store, mut after_send) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
        while from_store.len() < rounds {
            let v = s2.load(Ordering::Acquire);
            if v != 0 {
                let now = base.elapsed().as_nanos() as u64;
                from_store.push(now.saturating_sub(v - 1) as f64);
                let mut e = d2.load(Ordering::Acquire);
                while e == 0 {
                    std::hint::spin_loop();
                    e = d2.load(Ordering::Acquire);
                }
                after_send.push(now as f64 - (e - 1) as f64);
                d2.store(0, Ordering::Relaxed);
                s2.store(0, Ordering::Release);
            }
            for _ in 0..4 {
                std::hint::spin_loop();
            }
        }
        (from_store, after_send)
    });
    let sender = std::thread::spawn(move || {
        pin(0);
        let parker = Parker::new();
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
            parker.unpark();
            done.store(base.elapsed().as_nanos() as u64 + 1, Ordering::Release);
        }
    });
    sender.join().expect("sender");
    let (from_store, after_send) = spinner.join().expect("spinner");
    (net(from_store, clock), net(after_send, clock))
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

/// One thread: `recv()` polled pending on an empty channel, a send (notifying it), the
/// ready poll; the median per cycle minus a hot `try_send` + `try_recv` (`pair_ns`).
fn recv_block(n: u64, pair_ns: f64) -> f64 {
    let (tx, rx) = async_channel::unbounded::<()>();
    let w = Arc::new(FlagWaker(AtomicBool::new(false)));
    let waker = Waker::from(w.clone());
    let cycle = crate::timing::time_per(n, || {
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

/// Nanoseconds since `t` (one timed operation, the clock read included).
fn timed(t: Instant) -> f64 {
    t.elapsed().as_nanos() as f64
}

/// The channel's operations on one thread, all its lines in this CPU's cache: the
/// median `try_send` and `try_recv`, each between two clock reads.
fn chan_hot(rounds: usize) -> (f64, f64) {
    let (tx, rx) = async_channel::unbounded::<()>();
    let (mut s, mut r) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for _ in 0..rounds {
        let t = Instant::now();
        tx.try_send(()).expect("unbounded");
        s.push(timed(t));
        let t = Instant::now();
        rx.try_recv().expect("just sent");
        r.push(timed(t));
    }
    (median(s), median(r))
}

/// The lines an `async_channel::unbounded` send and receive touch (the workloads'
/// channel, `crates/rtrun`): a send CASes the tail index (its own line, which the
/// receiver reads at every receive), writes the slot and sets its WRITE bit (a line
/// of 8-byte slots whose READ bits the receiver sets), and reads the receive-side
/// event's `notified` word (the receiver writes it when it registers a listener; a
/// blocking receive, priced apart as `recv_block`); a receive CASes the head index
/// (the receiver's own), reads the tail index, reads the slot and sets its READ bit.
///
/// Two pinned threads take turns on one channel. `both_send` false: CPU 0 only sends
/// and CPU 1 only receives (a ping-pong's channel): each send finds the slot line and
/// the tail index's copy last touched on CPU 1, each receive a message written on CPU
/// 0. `both_send` true: on its turn each side sends and then receives its own message,
/// so each send finds every line last written on the other CPU. Returns the medians of
/// CPU 0's sends and CPU 1's receives.
fn chan_cross(rounds: usize, both_send: bool) -> (f64, f64) {
    let (tx, rx) = async_channel::unbounded::<()>();
    let [sends, recvs] = take_turns(rounds, move |me| {
        let mut sample = None;
        if me == 0 || both_send {
            let t = Instant::now();
            tx.try_send(()).expect("unbounded");
            if me == 0 {
                sample = Some(timed(t));
            }
        }
        if me == 1 || both_send {
            let t = Instant::now();
            rx.try_recv().expect("a message is queued");
            if me == 1 {
                sample = Some(timed(t));
            }
        }
        sample
    });
    (median(sends), median(recvs))
}

/// The time of a receive's first poll, which finds the channel empty and registers a
/// listener (pending), in ns.
fn timed_registration<F: Future>(f: std::pin::Pin<&mut F>, cx: &mut Context) -> f64 {
    let t = Instant::now();
    let first = f.poll(cx);
    let ns = timed(t);
    debug_assert!(first.is_pending());
    ns
}

/// A blocking receive completed from the other CPU, step by step: CPU 1 polls `recv()`
/// pending (registers a listener), CPU 0 `try_send`s (notifies it), CPU 1 polls it
/// ready (removes it); each step timed alone. Then the same steps on one thread.
/// Returns the medians (register, notifying send) cross-CPU and hot. The ready poll is
/// not returned: beyond its hot time it measures what `chan_recv_xcpu_ns` already
/// prices (the slot and tail index the sender wrote; +110 ns against +110–120 here).
fn blocking_cross(rounds: u64) -> [f64; 4] {
    struct Nop;
    impl Wake for Nop {
        fn wake(self: Arc<Self>) {}
    }
    let (tx, rx) = async_channel::unbounded::<()>();
    let turn = Arc::new(AtomicU64::new(0));
    let wait = |turn: &AtomicU64, v: u64| {
        while turn.load(Ordering::Acquire) != v {
            std::hint::spin_loop();
        }
    };
    let t1 = turn.clone();
    let receiver = std::thread::spawn(move || {
        pin(1);
        let waker = Waker::from(Arc::new(Nop));
        let mut reg = Vec::with_capacity(rounds as usize);
        for i in 0..rounds {
            wait(&t1, 3 * i);
            let mut f = pin!(rx.recv());
            let mut cx = Context::from_waker(&waker);
            reg.push(timed_registration(f.as_mut(), &mut cx));
            t1.store(3 * i + 1, Ordering::Release);
            wait(&t1, 3 * i + 2);
            let r = f.as_mut().poll(&mut cx);
            debug_assert!(r.is_ready());
            t1.store(3 * i + 3, Ordering::Release);
        }
        median(reg)
    });
    let t0 = turn.clone();
    let sender = std::thread::spawn(move || {
        pin(0);
        let mut send = Vec::with_capacity(rounds as usize);
        for i in 0..rounds {
            wait(&t0, 3 * i + 1);
            let t = Instant::now();
            tx.try_send(()).expect("unbounded");
            send.push(timed(t));
            t0.store(3 * i + 2, Ordering::Release);
        }
        median(send)
    });
    let send_x = sender.join().expect("notifying side");
    let reg_x = receiver.join().expect("registering side");
    let (tx, rx) = async_channel::unbounded::<()>();
    let waker = Waker::from(Arc::new(Nop));
    let (mut reg, mut send) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut f = pin!(rx.recv());
        let mut cx = Context::from_waker(&waker);
        reg.push(timed_registration(f.as_mut(), &mut cx));
        let t = Instant::now();
        tx.try_send(()).expect("unbounded");
        send.push(timed(t));
        let r = f.as_mut().poll(&mut cx);
        debug_assert!(r.is_ready());
    }
    [reg_x, send_x, median(reg), median(send)]
}

/// Measure everything. `pair_ns`: a hot `try_send` + `try_recv`.
pub fn measure(quick: bool, pair_ns: f64) -> CrossCpu {
    let rounds = if quick { 2_000 } else { 20_000 };
    let clock_read_ns = clock_read(rounds * 5);
    let ipi_send_ns = ipi_send(rounds, clock_read_ns);
    let (ipi_latency_ns, ipi_after_send_ns) = ipi_latency(rounds, clock_read_ns);
    // The runtime's policy-lock mutex, as `RtLock` takes it.
    let lock = Arc::new(schedlab_rt::PolicyMutex::new(0u64));
    let lock_handoff_ns = net(alternate(rounds, move |_| *schedlab_rt::lock_policy_mutex(&lock) += 1), clock_read_ns);
    let word = Arc::new(AtomicU64::new(0));
    let rmw_transfer_ns = net(
        alternate(rounds, move |me| {
            let v = word.load(Ordering::Relaxed);
            let _ = word.compare_exchange(v, v + 1 + me as u64, Ordering::AcqRel, Ordering::Relaxed);
        }),
        clock_read_ns,
    );
    let recv_block_ns = recv_block(rounds as u64 * 5, pair_ns);
    let (chan_send_hot_ns, chan_recv_hot_ns) = chan_hot(rounds * 5);
    let (send_x, recv_x) = chan_cross(rounds, false);
    let (send_xx, _) = chan_cross(rounds, true);
    let chan_send_xcpu_ns = (send_x - chan_send_hot_ns).max(0.0);
    let chan_recv_xcpu_ns = (recv_x - chan_recv_hot_ns).max(0.0);
    let chan_send_after_send_ns = (send_xx - chan_send_hot_ns).max(0.0);
    let [reg_x, notify_x, reg_hot, notify_hot] = blocking_cross(rounds as u64);
    let recv_register_xcpu_ns = (reg_x - reg_hot).max(0.0);
    let notify_xcpu_ns = (notify_x - notify_hot - chan_send_xcpu_ns).max(0.0);
    let (line_chain_ns, line_independent_ns) = crate::linexfer::measure(rounds as u64);
    let line_chain_write_ns = crate::linexfer::measure_chain_write(rounds as u64);
    CrossCpu {
        clock_read_ns,
        ipi_send_ns,
        ipi_latency_ns,
        ipi_after_send_ns,
        lock_handoff_ns,
        rmw_transfer_ns,
        recv_block_ns,
        chan_send_xcpu_ns,
        chan_recv_xcpu_ns,
        chan_send_after_send_ns,
        recv_register_xcpu_ns,
        notify_xcpu_ns,
        chan_send_hot_ns,
        chan_recv_hot_ns,
        line_chain_ns,
        line_independent_ns,
        line_chain_write_ns,
    }
}
