//! schedlab's runtime (`schedlab-rt`) as an [`Exec`].

use crate::{runtimes, ChanRx, ChanTx, Channels, Exec, Pin};
use std::future::Future;

/// A `schedlab_rt::Runtime` with `workers` workers (pinned to CPUs or not) under one
/// policy.
pub struct SchedlabExec {
    rt: schedlab_rt::Runtime,
    policy: String,
}

impl SchedlabExec {
    /// `Builder::new().workers(workers).policy(policy).pin(true).build()`.
    pub fn new(workers: usize, policy: &str) -> Result<SchedlabExec, crate::BenchError> {
        SchedlabExec::with_pin(workers, policy, Pin::All)
    }
    /// Workers pinned to CPUs under [`Pin::All`], left to the kernel under [`Pin::None`]
    /// (spin-then-park and task placement unchanged: a placed task stays on its
    /// worker thread, wherever the kernel runs that thread).
    pub fn with_pin(workers: usize, policy: &str, pin: Pin) -> Result<SchedlabExec, crate::BenchError> {
        let rt = schedlab_rt::Builder::new().workers(workers).policy(policy).pin(pin.pinned()).build()?;
        Ok(SchedlabExec { policy: rt.policy_name(), rt })
    }
    /// Stop the workers.
    pub fn shutdown(self) {
        self.rt.shutdown();
    }
}

async fn join<T>(h: schedlab_rt::JoinHandle<T>) -> T {
    match h.await {
        Ok(v) => v,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("schedlab task did not finish: {e}"),
    }
}

impl Exec for SchedlabExec {
    type Chan = RtChannel;
    fn runtime(&self) -> &str {
        runtimes::SCHEDLAB
    }
    fn policy(&self) -> String {
        self.policy.clone()
    }
    fn placement(&self) -> bool {
        true
    }
    fn block_on<F>(&self, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.rt.block_on(f)
    }
    fn spawn_on<T, F>(&self, worker: usize, f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        join(self.rt.spawn_on(worker, f))
    }
    fn spawn_pinned<T, F>(&self, worker: usize, f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        join(self.rt.spawn_pinned(worker, f))
    }
    fn spawn<T, F>(f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        join(schedlab_rt::spawn(f))
    }
    fn yield_now() -> impl Future<Output = ()> + Send {
        schedlab_rt::yield_now()
    }
    fn sleep_until(deadline: std::time::Instant) -> impl Future<Output = ()> + Send {
        let sleep = schedlab_rt::time::sleep_until(deadline);
        async move {
            sleep.await;
        }
    }
    fn current_worker() -> Option<usize> {
        schedlab_rt::current_worker()
    }
}

/// `schedlab_rt::channel`, the runtime's own unbounded MPSC channel.
pub struct RtChannel;

impl Channels for RtChannel {
    const NAME: &'static str = "schedlab_rt::channel";
    type Tx<T: Send + 'static> = schedlab_rt::channel::Sender<T>;
    type Rx<T: Send + 'static> = schedlab_rt::channel::Receiver<T>;
    fn unbounded<T: Send + 'static>() -> (Self::Tx<T>, Self::Rx<T>) {
        schedlab_rt::channel::unbounded()
    }
}

impl<T: Send + 'static> ChanTx<T> for schedlab_rt::channel::Sender<T> {
    fn send(&self, msg: T) {
        schedlab_rt::channel::Sender::send(self, msg).expect("receiver alive");
    }
}

impl<T: Send + 'static> ChanRx<T> for schedlab_rt::channel::Receiver<T> {
    fn recv(&mut self) -> impl std::future::Future<Output = Option<T>> + Send {
        schedlab_rt::channel::Receiver::recv(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{programs, AsyncChannel, ChatSize, HackSize, TokioMpsc};
    use std::time::Duration;

    #[test]
    fn programs_run_on_every_policy() {
        // Every registry entry in its example configuration.
        for p in schedlab_core::policies::entries().into_iter().map(|e| e.example) {
            let e = SchedlabExec::new(2, p).expect("runtime builds");
            let b = Duration::from_millis(5);
            for cross in [false, true] {
                assert!(programs::pingpong::<_, RtChannel>(&e, cross, b) > 0.0, "{p}");
                assert!(programs::pingpong::<_, AsyncChannel>(&e, cross, b) > 0.0, "{p}");
                assert!(programs::pingpong::<_, TokioMpsc>(&e, cross, b) > 0.0, "{p}");
            }
            assert!(programs::local_dispatch(&e, b) > 0.0, "{p}");
            let m = programs::self_wake_dispatch(&e, b);
            assert!(m.value > 0.0 && m.cpu_per_op > 0.0, "{p}: {m:?}");
            assert!(programs::spawn_throughput(&e, b) > 0.0, "{p}");
            let (cs, hs) = (ChatSize { rooms: 2, users: 5, messages: 7 }, HackSize { groups: 2, fds: 4, loops: 5 });
            assert!(programs::chat::<_, RtChannel>(&e, cs) > 0.0, "{p}");
            assert!(programs::chat::<_, AsyncChannel>(&e, cs) > 0.0, "{p}");
            assert!(programs::hackbench::<_, RtChannel>(&e, hs) > 0.0, "{p}");
            assert!(programs::hackbench::<_, AsyncChannel>(&e, hs) > 0.0, "{p}");
            assert!(programs::chat::<_, TokioMpsc>(&e, cs) > 0.0, "{p}");
            assert!(programs::hackbench::<_, TokioMpsc>(&e, hs) > 0.0, "{p}");
            e.shutdown();
        }
    }

    /// Placement is real: the cross-worker ping-pong crosses on > 95 % of round trips
    /// (the pinned tasks' wakes go back to their own workers), the same-worker one on
    /// none, under `fast` and under the policy schedulers.
    #[test]
    fn cross_worker_pingpong_crosses() {
        for p in ["fast", "mqs", "pmqs:pool=1,lb=lbp,period=10"] {
            let e = SchedlabExec::new(2, p).expect("runtime builds");
            let b = Duration::from_millis(30);
            for (cross, what) in [(true, "own channel"), (true, "async-channel"), (false, "own channel")] {
                let crossed = if what == "async-channel" {
                    programs::pingpong_placed::<_, AsyncChannel>(&e, cross, b)
                } else {
                    programs::pingpong_placed::<_, RtChannel>(&e, cross, b)
                }
                .crossed;
                let crossed = crossed.expect("schedlab knows its workers");
                if cross {
                    assert!(crossed > 0.95, "{p} {what}: crossed on {crossed}");
                } else {
                    assert!(crossed < 0.05, "{p} {what}: crossed on {crossed}");
                }
            }
            e.shutdown();
        }
    }

    #[test]
    fn bad_policy_is_an_error() {
        assert!(SchedlabExec::new(2, "nope").is_err());
    }
}
