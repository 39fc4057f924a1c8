//! schedlab's runtime (`schedlab-rt`) as an [`Exec`].

use crate::{runtimes, Exec};
use std::future::Future;

/// A `schedlab_rt::Runtime` with `workers` pinned workers under one policy.
pub struct SchedlabExec {
    rt: schedlab_rt::Runtime,
    policy: String,
}

impl SchedlabExec {
    /// `Builder::new().workers(workers).policy(policy).pin(true).build()`.
    pub fn new(workers: usize, policy: &str) -> Result<SchedlabExec, String> {
        let rt = schedlab_rt::Builder::new().workers(workers).policy(policy).pin(true).build()?;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{programs, ChatSize, HackSize};
    use std::time::Duration;

    #[test]
    fn programs_run_on_every_policy() {
        for p in ["fast", "dss", "mqs", "pmqs:pool=1,lb=lbp,period=10"] {
            let e = SchedlabExec::new(2, p).expect("runtime builds");
            let b = Duration::from_millis(5);
            for cross in [false, true] {
                assert!(programs::pingpong(&e, cross, b) > 0.0, "{p}");
            }
            assert!(programs::local_dispatch(&e, b) > 0.0, "{p}");
            assert!(programs::spawn_throughput(&e, b) > 0.0, "{p}");
            assert!(programs::chat(&e, ChatSize { rooms: 2, users: 5, messages: 7 }) > 0.0, "{p}");
            assert!(programs::hackbench(&e, HackSize { groups: 2, fds: 4, loops: 5 }) > 0.0, "{p}");
            e.shutdown();
        }
    }

    #[test]
    fn bad_policy_is_an_error() {
        assert!(SchedlabExec::new(2, "nope").is_err());
    }
}
