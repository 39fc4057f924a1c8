//! One scheduling-trace vocabulary for both engines (`docs/traces.md`).
//!
//! An engine records [`Record`]s — a timestamp in ns, the CPU the event happened on,
//! and an [`Event`] — into a [`TraceBuf`] when asked to; at the end it hands a
//! [`Trace`] (the records plus the labels of tasks, CPUs and locks) to a writer
//! ([`chrome::write`], the Chrome JSON trace-event format Perfetto opens directly).
//!
//! The vocabulary follows Linux's `sched:*` tracepoints (`sched_switch`,
//! `sched_wakeup`, `sched_migrate_task`, `sched_process_fork`/`exit`, `ipi:*`) so a
//! schedlab trace and a `perf sched` trace can be read side by side. Recording is off
//! by default; an engine holds an `Option<TraceBuf>` and pays one branch per event
//! when it is `None`.

pub mod chrome;

use crate::{CpuId, PrevState, TaskId};

/// A CPU index inside an event (kept at 32 bits so a record stays 40 bytes).
pub type Cpu = u32;

/// Default cap on recorded events: 2 M records (40 bytes each: about 80 MB).
/// Events past the cap are counted, not kept; the writer warns.
pub const DEFAULT_CAP: usize = 2_000_000;

/// One scheduling event. Task ids are the engine's (dense, from 0); CPUs are indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The CPU switched from `prev` to `next` (`None`: idle). `prev_state` says why
    /// `prev` left: preempted or yielding (runnable), blocked, or exited.
    Switch { prev: Option<TaskId>, next: Option<TaskId>, prev_state: PrevState },
    /// `task` became runnable. `waker`: the task whose action woke it (a send, a fork),
    /// `None` for a timer or an outside thread. `target`: the CPU the policy asked to
    /// reschedule for it, when it asked one.
    Wakeup { task: TaskId, waker: Option<TaskId>, target: Option<Cpu> },
    /// `task` is dispatched on `to`, having last run on `from`.
    Migrate { task: TaskId, from: Cpu, to: Cpu },
    /// `child` was created by `parent` (`None`: the root task).
    Fork { parent: Option<TaskId>, child: TaskId },
    /// `task` exited.
    Exit { task: TaskId },
    /// The policy holds run-queue lock `lock` (index into [`Trace::locks`]) from now,
    /// having spun `wait_ns` for it.
    LockAcquire { lock: u32, wait_ns: u64 },
    /// The policy released `lock`.
    LockRelease { lock: u32 },
    /// A reschedule IPI sent from the record's CPU to `to`.
    Ipi { to: Cpu },
}

/// An event, when (ns of the engine's clock) and on which CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub ts_ns: u64,
    pub cpu: u32,
    pub ev: Event,
}

/// Events being recorded, up to a cap (then only counted).
#[derive(Clone, Debug)]
pub struct TraceBuf {
    records: Vec<Record>,
    cap: usize,
    dropped: u64,
}

impl TraceBuf {
    /// A buffer keeping at most `cap` records (memory grows as they arrive).
    pub fn new(cap: usize) -> TraceBuf {
        TraceBuf { records: Vec::with_capacity(cap.min(1 << 16)), cap, dropped: 0 }
    }

    #[inline]
    pub fn push(&mut self, ts_ns: u64, cpu: CpuId, ev: Event) {
        if self.records.len() < self.cap {
            self.records.push(Record { ts_ns, cpu: cpu as u32, ev });
        } else {
            self.dropped += 1;
        }
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
    /// Events not kept because the cap was reached.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The finished trace, with its labels.
    pub fn finish(self, meta: TraceMeta) -> Trace {
        Trace { meta, records: self.records, cap: self.cap, dropped: self.dropped }
    }
}

/// What the records' numbers mean: who recorded them and the labels of their ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceMeta {
    /// The engine and run, e.g. `schedlab sim: chat:rooms=2 under dss on smp-8`.
    pub source: String,
    /// CPUs (workers) of the run: one track each.
    pub cpus: usize,
    /// Role of each task, by task id (a run slice is labelled `t<id> <role>`).
    pub task_roles: Vec<String>,
    /// Name of each lock, by lock index.
    pub locks: Vec<String>,
    /// Names of the CPU tracks by index where they are not `CPU <n>` (the runtime's
    /// `worker <n>` and its track for threads that are not workers); empty: all `CPU <n>`.
    pub track_names: Vec<String>,
}

/// A recorded run: its labels and its events in recording order.
#[derive(Clone, Debug)]
pub struct Trace {
    pub meta: TraceMeta,
    pub records: Vec<Record>,
    /// The cap the records were taken under, and the events past it.
    pub cap: usize,
    pub dropped: u64,
}

impl Trace {
    /// A run slice's label: task id and role.
    pub fn task_label(&self, t: TaskId) -> String {
        match self.meta.task_roles.get(t as usize) {
            Some(r) if !r.is_empty() => format!("t{t} {r}"),
            _ => format!("t{t}"),
        }
    }
}

/// `prev_state` as the trace files spell it.
pub fn state_name(s: PrevState) -> &'static str {
    match s {
        PrevState::Runnable => "runnable",
        PrevState::Blocked => "blocked",
        PrevState::Exited => "exited",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/traces.md and the cap's memory figure assume 40-byte records.
    #[test]
    fn a_record_is_40_bytes() {
        assert_eq!(std::mem::size_of::<Record>(), 40);
    }
}
