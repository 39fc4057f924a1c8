//! A minimal timer for `Sleep` ops: one thread, a deadline heap, wakers. Workloads
//! need only coarse sleeps; this timer's thread is apart from the runtime's reactor
//! (`schedlab_rt::time`), so a workload's sleeps start no reactor.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

struct Entry(Instant, u64, Waker);
impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        (self.0, self.1) == (o.0, o.1)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(o.0, o.1))
    }
}

struct Timer {
    heap: Mutex<(BinaryHeap<Reverse<Entry>>, u64)>,
    cv: Condvar,
}

fn timer() -> &'static Timer {
    static T: OnceLock<&'static Timer> = OnceLock::new();
    T.get_or_init(|| {
        let t: &'static Timer =
            Box::leak(Box::new(Timer { heap: Mutex::new((BinaryHeap::new(), 0)), cv: Condvar::new() }));
        std::thread::Builder::new()
            .name("schedlab-timer".into())
            .spawn(move || loop {
                let mut g = t.heap.lock().unwrap();
                let now = Instant::now();
                while g.0.peek().is_some_and(|Reverse(e)| e.0 <= now) {
                    let Reverse(e) = g.0.pop().unwrap();
                    e.2.wake();
                }
                g = match g.0.peek() {
                    Some(Reverse(e)) => {
                        let d = e.0.saturating_duration_since(now);
                        t.cv.wait_timeout(g, d).unwrap().0
                    }
                    None => t.cv.wait(g).unwrap(),
                };
                drop(g);
            })
            .expect("spawn timer thread");
        t
    })
}

/// Completes after `d`.
pub fn sleep(d: Duration) -> Sleep {
    Sleep { deadline: Instant::now() + d, registered: false }
}

pub struct Sleep {
    deadline: Instant,
    registered: bool,
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            return Poll::Ready(());
        }
        if !self.registered {
            let t = timer();
            let mut g = t.heap.lock().unwrap();
            g.1 += 1;
            let seq = g.1;
            g.0.push(Reverse(Entry(self.deadline, seq, cx.waker().clone())));
            drop(g);
            t.cv.notify_one();
            self.registered = true;
        }
        Poll::Pending
    }
}
