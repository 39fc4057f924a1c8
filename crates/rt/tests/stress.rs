//! Millions of messages over every scheduler, each one counted: no loss, no duplicate.
#![cfg(not(loom))]
mod common;
use common::rt;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

const SENDERS: usize = 8;
const RECEIVERS: usize = 4;
const PER_SENDER: usize = 128 * 1024; // 8 × 131 072 = 1 048 576 messages

fn stress(policy: &str) {
    let rt = rt(policy);
    let t0 = Instant::now();
    let seen: Arc<Vec<AtomicU8>> = Arc::new((0..SENDERS * PER_SENDER).map(|_| AtomicU8::new(0)).collect());
    let (tx, rx) = async_channel::bounded::<(u32, u32)>(256);
    let senders: Vec<_> = (0..SENDERS)
        .map(|s| {
            let tx = tx.clone();
            rt.spawn(async move {
                for i in 0..PER_SENDER {
                    tx.send((s as u32, i as u32)).await.unwrap();
                    if i % 4096 == 0 {
                        schedlab_rt::yield_now().await;
                    }
                }
            })
        })
        .collect();
    drop(tx);
    let receivers: Vec<_> = (0..RECEIVERS)
        .map(|_| {
            let rx = rx.clone();
            let seen = seen.clone();
            rt.spawn(async move {
                let mut n = 0usize;
                while let Ok((s, i)) = rx.recv().await {
                    seen[s as usize * PER_SENDER + i as usize].fetch_add(1, Relaxed);
                    n += 1;
                }
                n
            })
        })
        .collect();
    drop(rx);
    let total: usize = rt.block_on(async {
        for s in senders {
            s.await.unwrap();
        }
        let mut t = 0;
        for r in receivers {
            t += r.await.unwrap();
        }
        t
    });
    assert_eq!(total, SENDERS * PER_SENDER, "{policy}: received count");
    for s in 0..SENDERS {
        for i in 0..PER_SENDER {
            let c = seen[s * PER_SENDER + i].load(Relaxed);
            assert_eq!(c, 1, "{policy}: message {i} of sender {s} seen {c} times");
        }
    }
    rt.check_invariants().unwrap();
    eprintln!("{policy}: {} messages in {:?}", total, t0.elapsed());
}

#[test]
fn stress_fast() {
    stress("fast");
}
#[test]
fn stress_dss() {
    stress("dss");
}
#[test]
fn stress_mqs() {
    stress("mqs");
}
#[test]
fn stress_pmqs_lbp() {
    stress("pmqs:pool=1,lb=lbp,period=10");
}
#[test]
fn stress_fair() {
    stress("cfs");
}
#[test]
fn stress_eevdf() {
    stress("eevdf");
}
