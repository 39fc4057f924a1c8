//! The cross-worker ping-pong of `schedlab bench` (two tasks pinned to workers 0 and
//! 1 of a `fast` runtime), over `schedlab_rt::channel` and over the least a
//! hand-off needs: one cache line per direction holding a sequence word and a
//! waiting flag, the waiter's waker stored once. The two taking the same time says
//! the round trip is the runtime's wake path, not the channel's lines
//! (docs/runtime.md, "The cross-worker hand-off, line by line").
//! `target/release/examples/pp_cross_flag [ROUND_TRIPS]` (default 2,000,000) prints
//! ns per round trip for `channel` then `flag`, in one process.

use schedlab_bench::schedlab_exec::SchedlabExec;
use schedlab_bench::Exec;
use schedlab_rt::channel;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// One direction of the hand-off: the sender stores the sequence number and wakes the
/// waiter if it said it waits (a store-then-swap against the waiter's
/// store-then-load, both `SeqCst`, so one of the two sees the other).
#[repr(align(64))]
struct Flag {
    seq: AtomicU64,
    waiting: AtomicBool,
    waker: OnceLock<Waker>,
}

impl Flag {
    fn new() -> Arc<Flag> {
        Arc::new(Flag { seq: AtomicU64::new(0), waiting: AtomicBool::new(false), waker: OnceLock::new() })
    }
    fn set(&self, v: u64) {
        self.seq.store(v, SeqCst);
        if self.waiting.swap(false, SeqCst) {
            self.waker.get().expect("a waiter stores its waker first").wake_by_ref();
        }
    }
    /// Wait until the sequence reaches `want`. One task waits on a flag, always with
    /// the same waker (it is stored once).
    fn reach(&self, want: u64) -> Reach<'_> {
        Reach { flag: self, want }
    }
}

struct Reach<'a> {
    flag: &'a Flag,
    want: u64,
}

impl Future for Reach<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let f = self.flag;
        if f.seq.load(SeqCst) >= self.want {
            return Poll::Ready(());
        }
        f.waker.get_or_init(|| cx.waker().clone());
        f.waiting.store(true, SeqCst);
        if f.seq.load(SeqCst) >= self.want {
            f.waiting.store(false, SeqCst);
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

fn over_flag(e: &SchedlabExec, n: u64) -> f64 {
    let (ping_to_pong, pong_to_ping) = (Flag::new(), Flag::new());
    let (a, b) = (ping_to_pong.clone(), pong_to_ping.clone());
    let pong = e.spawn_pinned(1, async move {
        for i in 1..=n {
            a.reach(i).await;
            b.set(i);
        }
    });
    let ping = e.spawn_pinned(0, async move {
        let t = Instant::now();
        for i in 1..=n {
            ping_to_pong.set(i);
            pong_to_ping.reach(i).await;
        }
        t.elapsed().as_nanos() as f64 / n as f64
    });
    e.block_on(async move {
        pong.await;
        ping.await
    })
}

fn over_channel(e: &SchedlabExec, n: u64) -> f64 {
    let (to_pong, mut pong_rx) = channel::unbounded::<u64>();
    let (to_ping, mut ping_rx) = channel::unbounded::<u64>();
    let pong = e.spawn_pinned(1, async move {
        while let Some(m) = pong_rx.recv().await {
            to_ping.send(m + 1).expect("ping alive");
        }
    });
    let ping = e.spawn_pinned(0, async move {
        let t = Instant::now();
        let mut x = 0;
        for _ in 0..n {
            to_pong.send(x).expect("pong alive");
            x = ping_rx.recv().await.expect("pong alive");
        }
        assert_eq!(x, n, "every message came back");
        t.elapsed().as_nanos() as f64 / n as f64
    });
    e.block_on(async move {
        let ns = ping.await;
        pong.await;
        ns
    })
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2_000_000);
    let e = SchedlabExec::new(2, "fast").expect("a two-worker fast runtime");
    let channel = over_channel(&e, n);
    let flag = over_flag(&e, n);
    e.shutdown();
    println!("channel {channel:.0} ns/round-trip\nflag    {flag:.0} ns/round-trip");
}
