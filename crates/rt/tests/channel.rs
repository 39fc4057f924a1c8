//! The runtime's own channel: ordering, close semantics, and a counted multi-producer
//! stress test over every scheduler (no loss, no duplicate, per-sender FIFO).
#![cfg(not(loom))]
mod common;
use common::{policies, rt};
use schedlab_rt::channel::{unbounded, SendError, TryRecvError};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

#[test]
fn fifo_and_try_recv_without_a_runtime() {
    let (tx, mut rx) = unbounded();
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    for i in 0..100 {
        tx.send(i).unwrap();
    }
    assert_eq!(rx.len(), 100);
    // Part of the queue moves to the receiver's buffer; later sends go behind it.
    assert_eq!(rx.try_recv(), Ok(0));
    tx.send(100).unwrap();
    for i in 1..=100 {
        assert_eq!(rx.try_recv(), Ok(i));
    }
    assert!(rx.is_empty());
    drop(tx);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn recv_returns_none_after_the_last_sender_and_the_queue_drain() {
    let r = rt("fast");
    let (tx, mut rx) = unbounded::<u32>();
    let tx2 = tx.clone();
    let got = r.spawn(async move {
        let mut v = Vec::new();
        while let Some(x) = rx.recv().await {
            v.push(x);
        }
        v
    });
    tx.send(1).unwrap();
    drop(tx);
    tx2.send(2).unwrap();
    drop(tx2);
    assert_eq!(r.block_on(got).unwrap(), vec![1, 2]);
}

#[test]
fn send_fails_once_the_receiver_is_gone_and_queued_messages_are_dropped() {
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Relaxed);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = unbounded();
    tx.send(Counted(drops.clone())).unwrap();
    tx.send(Counted(drops.clone())).unwrap();
    assert!(!tx.is_closed());
    drop(rx);
    assert_eq!(drops.load(Relaxed), 2, "queued messages dropped with the receiver");
    assert!(tx.is_closed());
    match tx.send(Counted(drops.clone())) {
        Err(SendError(m)) => drop(m),
        Ok(()) => panic!("send to a dropped receiver succeeded"),
    }
    assert_eq!(drops.load(Relaxed), 3);
}

#[test]
fn a_waiting_receiver_is_woken_from_another_thread() {
    for policy in policies() {
        let r = rt(policy);
        let (tx, mut rx) = unbounded::<u64>();
        let h = r.spawn(async move { rx.recv().await });
        std::thread::sleep(std::time::Duration::from_millis(5));
        tx.send(7).unwrap();
        assert_eq!(r.block_on(h).unwrap(), Some(7), "{policy}");
    }
}

const SENDERS: usize = 8;
const PER_SENDER: u32 = 64 * 1024;

fn stress(policy: &str) {
    let r = rt(policy);
    let (tx, mut rx) = unbounded::<(u32, u32)>();
    let senders: Vec<_> = (0..SENDERS as u32)
        .map(|s| {
            let tx = tx.clone();
            r.spawn(async move {
                for i in 0..PER_SENDER {
                    tx.send((s, i)).unwrap();
                    if i % 1024 == 0 {
                        schedlab_rt::yield_now().await;
                    }
                }
            })
        })
        .collect();
    drop(tx);
    let receiver = r.spawn(async move {
        let mut next = [0u32; SENDERS];
        let mut n = 0u64;
        while let Some((s, i)) = rx.recv().await {
            assert_eq!(i, next[s as usize], "{s}: out of order, lost or duplicated");
            next[s as usize] += 1;
            n += 1;
        }
        (n, next)
    });
    let (n, next) = r.block_on(async move {
        for s in senders {
            s.await.unwrap();
        }
        receiver.await.unwrap()
    });
    assert_eq!(n, SENDERS as u64 * PER_SENDER as u64, "{policy}: received count");
    assert!(next.iter().all(|&k| k == PER_SENDER), "{policy}: {next:?}");
    r.check_invariants().unwrap();
}

#[test]
fn stress_every_policy_counts_every_message_in_order() {
    for policy in policies() {
        stress(policy);
    }
}
