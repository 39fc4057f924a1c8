//! One file per policy.

pub mod dss;
pub mod mqs;

use crate::percpu::SchedCommon;
use crate::platform::{Platform, SchedLock};
use crate::runlist::RunList;
use crate::task::TaskId;

/// Shared invariant check over a policy's run lists (read without charging):
/// every member's `on_rq` names the list, the walk visits exactly `len` tasks, each
/// task is on at most one list, the published length matches, and no queued task is
/// dead. `lists` yields the lists' locks in queue order.
pub(crate) fn check_lists<'a, P: Platform + 'a>(
    common: &SchedCommon,
    lists: impl Iterator<Item = &'a P::Lock<RunList>>,
) -> Result<(), String> {
    let tasks = &common.tasks;
    let mut seen: Vec<Option<usize>> = vec![None; tasks.high_water() as usize];
    for lock in lists {
        lock.inspect(|rq: &RunList| -> Result<(), String> {
            let q = rq.queue();
            let mut n = 0usize;
            for t in rq.iter(tasks) {
                n += 1;
                if n > rq.len() {
                    return Err(format!("queue {q}: walk is longer than len {} (cycle?)", rq.len()));
                }
                let slot: &mut Option<usize> = &mut seen[t as usize];
                if let Some(other) = *slot {
                    return Err(format!("task {t} is on queues {other} and {q}"));
                }
                *slot = Some(q);
                if tasks.get(t).on_rq() != Some(q) {
                    return Err(format!("task {t} is on queue {q} but on_rq = {:?}", tasks.get(t).on_rq()));
                }
                if !tasks.get(t).live() {
                    return Err(format!("exited task {t} is still on queue {q}"));
                }
            }
            if n != rq.len() {
                return Err(format!("queue {q}: walk found {n} tasks, len says {}", rq.len()));
            }
            if common.queue_len(q) != n {
                return Err(format!("queue {q}: published length {} != {n}", common.queue_len(q)));
            }
            Ok(())
        })?;
    }
    for (t, s) in seen.iter().enumerate() {
        if s.is_none() && tasks.get(t as TaskId).on_rq().is_some() {
            return Err(format!("task {t} claims queue {:?} but is on no list", tasks.get(t as TaskId).on_rq()));
        }
    }
    Ok(())
}
