//! One file per policy.

pub mod dss;
pub mod mqs;
pub mod pmqs;

use crate::percpu::SchedCommon;
use crate::runlist::RunList;
use crate::task::TaskId;

/// Shared run-list invariant checks (reads without charging): every member's `on_rq`
/// names the list, the walk visits exactly `len` tasks (no cycle), each task is on at
/// most one list, and no queued task has exited. Policies add their own checks.
pub(crate) struct ListChecker {
    seen: Vec<Option<usize>>,
}

impl ListChecker {
    pub(crate) fn new(common: &SchedCommon) -> ListChecker {
        ListChecker { seen: vec![None; common.tasks.high_water() as usize] }
    }

    /// Walk one list; returns its length.
    pub(crate) fn list(&mut self, common: &SchedCommon, rq: &RunList) -> Result<usize, String> {
        let tasks = &common.tasks;
        let q = rq.queue();
        let mut n = 0usize;
        for t in rq.iter(tasks) {
            n += 1;
            if n > rq.len() {
                return Err(format!("queue {q}: walk is longer than len {} (cycle?)", rq.len()));
            }
            if let Some(other) = self.seen[t as usize].replace(q) {
                return Err(format!("task {t} is on queues {other} and {q}"));
            }
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
        Ok(n)
    }

    /// After all lists: no task claims a queue it is not linked on.
    pub(crate) fn finish(&self, common: &SchedCommon) -> Result<(), String> {
        for (t, s) in self.seen.iter().enumerate() {
            let claimed = common.tasks.get(t as TaskId).on_rq();
            if s.is_none() && claimed.is_some() {
                return Err(format!("task {t} claims queue {claimed:?} but is on no list"));
            }
        }
        Ok(())
    }
}
