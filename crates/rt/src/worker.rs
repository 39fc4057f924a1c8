//! Worker threads (one per CPU, pinned where possible) and `block_on`.
//!
//! The scheduling loops themselves live with their schedulers (`fast.rs`,
//! `policy_sched.rs`): each is one function from "pick" through "poll with a budget"
//! to "handle the result", so the hot path has no dynamic dispatch on the scheduler.

use crate::scheduler::Handle;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;

pub(crate) fn start(handle: &Arc<Handle>, pin: bool) -> Result<Vec<thread::JoinHandle<()>>, String> {
    let cores = if pin { core_affinity::get_core_ids().unwrap_or_default() } else { Vec::new() };
    let mut threads = Vec::with_capacity(handle.nworkers);
    for i in 0..handle.nworkers {
        let h = handle.clone();
        let core = (!cores.is_empty()).then(|| cores[i % cores.len()]);
        let h = thread::Builder::new()
            .name(format!("schedlab-rt-{i}"))
            .spawn(move || {
                if let Some(c) = core {
                    core_affinity::set_for_current(c);
                }
                h.run_worker(i)
            })
            .map_err(|e| format!("cannot start worker thread {i}: {e}"))?;
        threads.push(h);
    }
    Ok(threads)
}

struct ThreadWaker(thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Poll `f` on this thread until it is ready, parking between polls.
pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        crate::context::set_yielded(false);
        thread::park();
    }
}
