//! Diagnosis aid (session 25): what a blocking receive costs when the send that
//! completes it comes from the other CPU, against the calibration's one-thread
//! `recv_block` (both pinned threads take turns, as `xcpu.rs` does).
//! CPU 1 polls `recv()` pending (registers a listener) → CPU 0 `try_send`s (notifies it)
//! → CPU 1 polls it ready (removes the listener). Each step timed alone; medians in ns.
//! `target/release/examples/xblock [rounds]`

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::Instant;

struct Nop;
impl Wake for Nop {
    fn wake(self: Arc<Self>) {}
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pin_to(cpu: usize) {
    let ids = core_affinity::get_core_ids().expect("core ids");
    core_affinity::set_for_current(ids[cpu % ids.len()]);
}

fn main() {
    let rounds: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let (tx, rx) = async_channel::unbounded::<()>();
    let turn = Arc::new(AtomicU64::new(0));
    let wait = |turn: &AtomicU64, v: u64| {
        while turn.load(Ordering::Acquire) != v {
            std::hint::spin_loop();
        }
    };
    // Steps per round: 0 CPU 1 registers, 1 CPU 0 sends, 2 CPU 1 completes.
    let t1 = turn.clone();
    let receiver = std::thread::spawn(move || {
        pin_to(1);
        let waker = Waker::from(Arc::new(Nop));
        let (mut reg, mut done) = (Vec::new(), Vec::new());
        for i in 0..rounds {
            wait(&t1, 3 * i);
            let mut f = pin!(rx.recv());
            let mut cx = Context::from_waker(&waker);
            let t = Instant::now();
            assert!(f.as_mut().poll(&mut cx).is_pending());
            reg.push(t.elapsed().as_nanos() as f64);
            t1.store(3 * i + 1, Ordering::Release);
            wait(&t1, 3 * i + 2);
            let t = Instant::now();
            assert!(f.as_mut().poll(&mut cx).is_ready());
            done.push(t.elapsed().as_nanos() as f64);
            t1.store(3 * i + 3, Ordering::Release);
        }
        (median(reg), median(done))
    });
    let t0 = turn.clone();
    let sender = std::thread::spawn(move || {
        pin_to(0);
        let mut send = Vec::new();
        for i in 0..rounds {
            wait(&t0, 3 * i + 1);
            let t = Instant::now();
            tx.try_send(()).expect("unbounded");
            send.push(t.elapsed().as_nanos() as f64);
            t0.store(3 * i + 2, Ordering::Release);
        }
        median(send)
    });
    let send = sender.join().expect("sender");
    let (reg, done) = receiver.join().expect("receiver");
    // The same three steps on one thread (hot lines).
    let (tx, rx) = async_channel::unbounded::<()>();
    let waker = Waker::from(Arc::new(Nop));
    let (mut h_reg, mut h_send, mut h_done) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut f = pin!(rx.recv());
        let mut cx = Context::from_waker(&waker);
        let t = Instant::now();
        assert!(f.as_mut().poll(&mut cx).is_pending());
        h_reg.push(t.elapsed().as_nanos() as f64);
        let t = Instant::now();
        tx.try_send(()).expect("unbounded");
        h_send.push(t.elapsed().as_nanos() as f64);
        let t = Instant::now();
        assert!(f.as_mut().poll(&mut cx).is_ready());
        h_done.push(t.elapsed().as_nanos() as f64);
    }
    let (hr, hs, hd) = (median(h_reg), median(h_send), median(h_done));
    println!("blocking receive, each step timed with one clock read included (median ns):");
    println!("  register (pending poll): hot {hr:.0}  cross-CPU {reg:.0}");
    println!("  notifying send:          hot {hs:.0}  cross-CPU {send:.0}");
    println!("  ready poll (removal):    hot {hd:.0}  cross-CPU {done:.0}");
    println!(
        "  sum: hot {:.0}  cross-CPU {:.0}  (+{:.0})",
        hr + hs + hd,
        reg + send + done,
        reg + send + done - hr - hs - hd
    );
}
