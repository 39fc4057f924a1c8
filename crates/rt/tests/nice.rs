//! Nice values matter under DSS, MQS and cfs: a nice −10 CPU hog gets more polls than a
//! nice 19 one.
#![cfg(not(loom))]
use schedlab_rt::{Builder, TaskOpts};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// A CPU-bound task: each poll does a little work, wakes itself and yields control
/// back to the worker (a preemption point, not a `yield_now`).
struct Spinner {
    polls: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Future for Spinner {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.stop.load(Relaxed) {
            return Poll::Ready(());
        }
        let mut x = 1u64;
        for i in 0..200 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        std::hint::black_box(x);
        self.polls.fetch_add(1, Relaxed);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn shares(policy: &str) -> (u64, u64) {
    let rt = Builder::new().workers(2).policy(policy).build().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (hi, lo) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut hs = Vec::new();
    // Three of each: more runnable hogs than workers, so the policy must choose.
    for _ in 0..3 {
        for (nice, polls) in [(-10i8, &hi), (19, &lo)] {
            let f = Spinner { polls: polls.clone(), stop: stop.clone() };
            hs.push(rt.spawn_with(TaskOpts { nice, worker: None, pinned: false, ..TaskOpts::default() }, f));
        }
    }
    std::thread::sleep(Duration::from_millis(400));
    stop.store(true, Relaxed);
    rt.block_on(async {
        for h in hs {
            h.await.unwrap();
        }
    });
    (hi.load(Relaxed), lo.load(Relaxed))
}

#[test]
fn nice_affects_share_under_dss() {
    let (hi, lo) = shares("dss");
    eprintln!("dss: nice -10 polls {hi}, nice 19 polls {lo}");
    assert!(hi > 2 * lo, "nice -10 got {hi} polls, nice 19 got {lo}");
}

#[test]
fn nice_affects_share_under_mqs() {
    let (hi, lo) = shares("mqs");
    eprintln!("mqs: nice -10 polls {hi}, nice 19 polls {lo}");
    assert!(hi > lo, "nice -10 got {hi} polls, nice 19 got {lo}");
}

/// cfs's weights are 9548 against 15: the nice −10 hogs should get nearly everything.
#[test]
fn nice_affects_share_under_cfs() {
    let (hi, lo) = shares("cfs");
    eprintln!("cfs: nice -10 polls {hi}, nice 19 polls {lo}");
    assert!(hi > 2 * lo, "nice -10 got {hi} polls, nice 19 got {lo}");
}
