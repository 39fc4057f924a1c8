#![cfg(not(loom))]
//! Reference counting of wakers (the fast worker lends its queue reference to a poll's
//! first waker clone, `task::lend`) and placement of pinned tasks that leave the LIFO
//! slot (the fast worker's private queue).
mod common;
use common::{policies, rt};
use schedlab_rt::{current_worker, yield_now, Builder};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Clones, drops and wakes its waker in every way a lending poll must count right,
/// then completes with `out`.
struct Clones {
    step: u32,
    kept: Arc<Mutex<Vec<Waker>>>,
    out: Option<Arc<()>>,
}

impl Future for Clones {
    type Output = Arc<()>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Arc<()>> {
        match self.step {
            0 => {
                // First clone (takes the loan) dropped at once; a second one kept; a
                // third woken by value during the poll (a self-wake: re-queued).
                drop(cx.waker().clone());
                self.kept.lock().unwrap().push(cx.waker().clone());
                // (A clone woken by value on purpose: the worker gave its reference away,
                // yet must re-queue the self-woken task with one of its own.)
                #[allow(clippy::waker_clone_wake)]
                cx.waker().clone().wake();
                self.step = 1;
                Poll::Pending
            }
            1 => {
                // Kept (takes the loan of this poll); the test wakes it by reference.
                self.kept.lock().unwrap().push(cx.waker().clone());
                self.step = 2;
                Poll::Pending
            }
            _ => Poll::Ready(self.out.take().expect("polled after completion")),
        }
    }
}

fn wait_until(what: &str, p: &str, mut ok: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ok() {
        assert!(t0.elapsed() < Duration::from_secs(10), "{p}: timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A finished task whose join handle was dropped unawaited keeps its output in its
/// cell: the output lives exactly as long as the last reference to the cell. While the
/// test holds two wakers the cell must be alive (a missing increment would free it);
/// once they are dropped it must be freed (an extra increment would leak it).
#[test]
fn waker_references_are_counted_exactly() {
    for p in policies() {
        let rt = rt(p);
        let probe = Arc::new(());
        let kept = Arc::new(Mutex::new(Vec::new()));
        let h = rt.spawn(Clones { step: 0, kept: kept.clone(), out: Some(probe.clone()) });
        wait_until("the task waits for the second time", p, || kept.lock().unwrap().len() == 2);
        kept.lock().unwrap()[1].wake_by_ref();
        wait_until("the task finishes", p, || h.is_finished());
        drop(h);
        // Let the worker finish its bookkeeping of the exit (the policy worker forgets
        // its reference at the next `schedule`).
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(Arc::strong_count(&probe), 2, "{p}: the cell was freed while wakers of it were alive");
        kept.lock().unwrap().clear();
        wait_until("the cell is freed", p, || Arc::strong_count(&probe) == 1);
        rt.shutdown();
    }
}

/// Tasks pinned to worker 0 that keep yielding (so they leave the LIFO slot for the
/// worker's private queue) run only there and are not starved by unpinned yielders on
/// the deque, nor starve them.
#[test]
fn pinned_yielders_stay_home_and_share() {
    let rt = Builder::new().workers(2).policy("fast").build().unwrap();
    let away = Arc::new(AtomicUsize::new(0));
    let counts: Arc<Vec<AtomicUsize>> = Arc::new((0..4).map(|_| AtomicUsize::new(0)).collect());
    let hs: Vec<_> = (0..4)
        .map(|i| {
            let (away, counts) = (away.clone(), counts.clone());
            let body = async move {
                for _ in 0..300 {
                    if i < 2 && current_worker() != Some(0) {
                        away.fetch_add(1, Relaxed);
                    }
                    counts[i].fetch_add(1, Relaxed);
                    yield_now().await;
                }
            };
            if i < 2 {
                rt.spawn_pinned(0, body)
            } else {
                rt.spawn_on(0, body)
            }
        })
        .collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        rt.block_on(async {
            for h in hs {
                h.await.unwrap();
            }
        });
        let _ = tx.send(());
        rt.shutdown();
    });
    let done = rx.recv_timeout(Duration::from_secs(30));
    let c: Vec<usize> = counts.iter().map(|c| c.load(Relaxed)).collect();
    assert!(done.is_ok(), "yielders did not finish in 30 s: counts {c:?}");
    waiter.join().unwrap();
    assert_eq!(c, vec![300; 4]);
    assert_eq!(away.load(Relaxed), 0, "a pinned task was polled away from its worker");
}
