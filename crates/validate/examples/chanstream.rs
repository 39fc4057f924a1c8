//! Probe (O(1) hackbench's hand-off): the per-message price of a
//! sender streaming round-robin over 20 channels (`async_channel::unbounded`, the
//! workloads' channel) while a receiver on the other CPU drains them concurrently,
//! against the same sends with no receiver running (the lines stay on the sender's
//! CPU). `target/release/examples/chanstream [REPS]` (default 200 batches of 2,000
//! messages, hackbench's per-sender count); prints the medians per message.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

const CHANNELS: usize = 20;
const BATCH: usize = 2000;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let reps: usize = std::env::args().nth(1).map_or(200, |s| s.parse().expect("reps"));
    let chans: Vec<_> = (0..CHANNELS).map(|_| async_channel::unbounded::<u64>()).collect();
    let rxs: Vec<_> = chans.iter().map(|c| c.1.clone()).collect();
    let txs: Vec<_> = chans.iter().map(|c| c.0.clone()).collect();
    let (mut alone, mut streamed, mut recv_ns) = (Vec::new(), Vec::new(), Vec::new());
    let draining = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let receiver = {
        let (draining, stop) = (draining.clone(), stop.clone());
        std::thread::spawn(move || {
            schedlab_validate::pin(1);
            let mut per_msg = Vec::new();
            while !stop.load(Ordering::Acquire) {
                if !draining.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                    continue;
                }
                // Drain round-robin until the sender's batch is all received.
                let t = Instant::now();
                let mut got = 0;
                while got < BATCH {
                    for rx in &rxs {
                        while rx.try_recv().is_ok() {
                            got += 1;
                        }
                    }
                }
                per_msg.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
                draining.store(false, Ordering::Release);
            }
            per_msg
        })
    };
    schedlab_validate::pin(0);
    for _ in 0..reps {
        // Alone: the receiver waits; the sender's lines stay on its CPU, then drained
        // on this CPU (not timed).
        let t = Instant::now();
        for i in 0..BATCH {
            txs[i % CHANNELS].try_send(i as u64).expect("unbounded");
        }
        alone.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
        for (_, rx) in &chans {
            while rx.try_recv().is_ok() {}
        }
        // Streamed: the receiver drains on the other CPU while the sender sends.
        draining.store(true, Ordering::Release);
        let t = Instant::now();
        for i in 0..BATCH {
            txs[i % CHANNELS].try_send(i as u64).expect("unbounded");
        }
        streamed.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
        while draining.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
    }
    stop.store(true, Ordering::Release);
    recv_ns.extend(receiver.join().expect("receiver"));
    println!(
        "per message (medians of {reps} batches of {BATCH}): send alone {:.1} ns, send while the other CPU receives {:.1} ns, receive (other CPU, concurrent) {:.1} ns",
        median(alone),
        median(streamed),
        median(recv_ns)
    );
}
