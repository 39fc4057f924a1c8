//! `fast`'s watch slot: a pinned task that went idle stays with its worker, and a wake
//! from elsewhere only flips its state (`scheduler/fast/worker.rs`). Several pinned
//! tasks per worker take turns in the one slot (each new idle task displaces the last),
//! wakes come from the other worker, from the same worker and from a plain thread, and
//! every message is counted; a runtime dropped while tasks are watched drops them.
#![cfg(not(loom))]
mod common;

use common::rt;
use schedlab_rt::channel;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

const PAIRS: usize = 4;
const ROUNDS: u64 = 5_000;
const OUTSIDE: u64 = 5_000;

#[test]
fn pinned_tasks_woken_from_every_side_lose_nothing() {
    let rt = rt("fast");
    let mut joins = Vec::new();
    // Pairs across the workers, and one pair on each worker (wakes from the home
    // worker: the watched task moves to the LIFO slot).
    for p in 0..PAIRS {
        let (a_worker, b_worker) = if p < 2 { (p % 2, (p + 1) % 2) } else { (p % 2, p % 2) };
        let (to_b, mut b_rx) = channel::unbounded::<u64>();
        let (to_a, mut a_rx) = channel::unbounded::<u64>();
        joins.push(rt.spawn_pinned(b_worker, async move {
            let mut n = 0u64;
            while let Some(x) = b_rx.recv().await {
                assert_eq!(x, n, "pair {p}: message out of order");
                n += 1;
                to_a.send(x).unwrap();
            }
            n
        }));
        joins.push(rt.spawn_pinned(a_worker, async move {
            for i in 0..ROUNDS {
                to_b.send(i).unwrap();
                assert_eq!(a_rx.recv().await, Some(i), "pair {p}: reply");
            }
            ROUNDS
        }));
    }
    // One task per worker fed by a plain thread (wakes from outside the runtime).
    let mut feeders = Vec::new();
    for w in 0..2 {
        let (tx, mut rx) = channel::unbounded::<u64>();
        joins.push(rt.spawn_pinned(w, async move {
            let mut n = 0u64;
            while let Some(x) = rx.recv().await {
                assert_eq!(x, n, "fed task on worker {w}: out of order");
                n += 1;
            }
            n
        }));
        feeders.push(std::thread::spawn(move || {
            for i in 0..OUTSIDE {
                tx.send(i).unwrap();
                if i % 64 == 0 {
                    std::thread::yield_now();
                }
            }
        }));
    }
    for f in feeders {
        f.join().unwrap();
    }
    let got: Vec<u64> = rt.block_on(async {
        let mut v = Vec::new();
        for j in joins {
            v.push(j.await.unwrap());
        }
        v
    });
    let mut want = Vec::new();
    for _ in 0..PAIRS {
        want.extend([ROUNDS, ROUNDS]);
    }
    want.extend([OUTSIDE, OUTSIDE]);
    assert_eq!(got, want);
    rt.check_invariants().unwrap();
}

/// Counts its drops.
struct Guard(Arc<AtomicUsize>);
impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

#[test]
fn a_runtime_dropped_while_tasks_are_watched_drops_every_future() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let mut senders = Vec::new();
    {
        let rt = rt("fast");
        let mut started = Vec::new();
        for k in 0..6 {
            let (tx, mut rx) = channel::unbounded::<()>();
            let (ready_tx, mut ready_rx) = channel::unbounded::<()>();
            let guard = Guard(dropped.clone());
            rt.spawn_pinned(k % 2, async move {
                let _guard = guard;
                ready_tx.send(()).unwrap();
                // Never sent: the task waits here (the last one idle on each worker
                // is watched) until the runtime goes.
                rx.recv().await;
            });
            senders.push(tx);
            started.push(rt.block_on(async move { ready_rx.recv().await }));
        }
        assert_eq!(started.len(), 6);
        assert_eq!(dropped.load(SeqCst), 0);
    }
    assert_eq!(dropped.load(SeqCst), 6, "every waiting task's future dropped with the runtime");
    drop(senders);
}

/// A worker gives up its watched task before it sleeps, so that a wake of that task,
/// which wakes nobody while it is watched, then queues it and wakes the worker. The
/// task is fed by a plain thread that pauses long enough between messages for both
/// workers to stop spinning and park; every message must still arrive.
#[test]
fn a_task_watched_by_a_worker_that_went_to_sleep_is_still_woken() {
    const MESSAGES: u64 = 40;
    let rt = rt("fast");
    let (tx, mut rx) = channel::unbounded::<u64>();
    let (ack_tx, mut ack_rx) = channel::unbounded::<u64>();
    let fed = rt.spawn_pinned(1, async move {
        let mut n = 0u64;
        while let Some(x) = rx.recv().await {
            assert_eq!(x, n, "out of order");
            n += 1;
            ack_tx.send(x).unwrap();
        }
        n
    });
    let parks_before = rt.stats().parks;
    for i in 0..MESSAGES {
        // The task went idle after a hand-over from this thread: watched, while the
        // workers spin for 50 µs and then park.
        std::thread::sleep(Duration::from_millis(2));
        tx.send(i).unwrap();
        let ack = rt.block_on(schedlab_rt::time::timeout(Duration::from_secs(10), ack_rx.recv()));
        assert_eq!(ack, Ok(Some(i)), "message {i} not handled within 10 s");
    }
    assert!(rt.stats().parks > parks_before, "the workers never parked: the test proves nothing");
    drop(tx);
    assert_eq!(rt.block_on(fed).unwrap(), MESSAGES);
    rt.check_invariants().unwrap();
}
