//! Fixtures shared by the rows that measure one worker's scheduling loop, all with `n`
//! tasks runnable all the time: a runtime with one pinned worker and `n` tasks looping
//! on `yield_now().await` ([`with_yielders`]), and the core policy code alone on one
//! detached worker with `n` tasks woken on it ([`with_full_queue`]).

use schedlab_core::{BuildEnv, Policy, PolicySource, PolicySpec, PrevState, TaskId, TaskLayout, TaskParams, Topology};
use schedlab_rt::{RtPlatform, Runtime};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Start `n` yielding tasks on a one-worker runtime under `spec`, wait until every one
/// has run, call `body` on the runtime, then stop the tasks, wait for them to exit and
/// shut the runtime down (also when `body` fails). A task that does not start or exit
/// within 30 s is an error naming `spec`.
pub(crate) fn with_yielders<T>(
    spec: &str,
    n: usize,
    body: impl FnOnce(&Runtime) -> Result<T, String>,
) -> Result<T, String> {
    let rt = schedlab_rt::Builder::new()
        .workers(1)
        .policy(spec)
        .pin(true)
        .max_tasks(n + 16)
        .build()
        .map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    let (started, exited) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    for _ in 0..n {
        let (stop, started, exited) = (stop.clone(), started.clone(), exited.clone());
        drop(rt.spawn(async move {
            started.fetch_add(1, Relaxed);
            while !stop.load(Relaxed) {
                schedlab_rt::yield_now().await;
            }
            exited.fetch_add(1, Relaxed);
        }));
    }
    let wait_for = |c: &AtomicUsize, what: &str| -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while c.load(Relaxed) < n {
            if Instant::now() > deadline {
                return Err(format!("{spec}: only {} of {n} tasks {what} within 30 s", c.load(Relaxed)));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        Ok(())
    };
    let result = wait_for(&started, "started").and_then(|()| body(&rt));
    stop.store(true, Relaxed);
    let done = wait_for(&exited, "exited");
    rt.shutdown();
    let r = result?;
    done?;
    Ok(r)
}

/// Build the core policy `spec` on one detached worker (no runtime threads) whose task
/// table is laid out as `layout`, create and wake tasks `0..n` on it, check that all `n`
/// are queued, pick the first, and call `body` with the platform, the policy and the
/// task picked. Errors name the policy.
pub fn with_full_queue<T>(
    spec: &PolicySpec,
    layout: TaskLayout,
    n: usize,
    body: impl FnOnce(&RtPlatform, &dyn Policy<RtPlatform>, TaskId) -> Result<T, String>,
) -> Result<T, String> {
    let plats = RtPlatform::detached_with(1, layout);
    let p = &plats[0];
    let topo = Topology::smp(1);
    let policy = spec.build(p, &BuildEnv { topo: &topo, capacity: n, hz: 1000 }).map_err(|e| e.0)?;
    for id in 0..n as TaskId {
        policy.task_new(p, id, &TaskParams::default(), None);
        policy.wake_up(p, id, false);
    }
    let queued: usize = (0..policy.nr_queues()).map(|q| policy.queue_len(q)).sum();
    if queued != n {
        return Err(format!("{}: {queued} tasks queued after waking {n}", spec.canonical()));
    }
    let first = policy.schedule(p, None, PrevState::Runnable).ok_or("nothing picked from a full run queue")?;
    body(p, &*policy, first)
}
