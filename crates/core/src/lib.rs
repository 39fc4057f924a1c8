//! # schedlab-core: scheduling policies written once, run by two engines
//!
//! A *policy* (DSS, MQS, ...) is the run-queue organisation and the decisions of a
//! scheduler: where a woken task goes, which task a CPU runs next, what the timer tick
//! does. It is written once, against the [`Policy`] trait, and is generic over a
//! [`Platform`] that supplies what differs between engines:
//!
//! * **locks** ([`Platform::Lock`]) — the simulator's lock charges virtual time for
//!   waiting and holding and keeps Lockmeter-style statistics; the runtime's is a real
//!   `parking_lot` mutex;
//! * **time** ([`Platform::now`]) — virtual nanoseconds or a monotonic clock;
//! * **cost hooks** ([`Platform::charge`], [`Platform::touch`]) — every goodness
//!   evaluation, list operation and access to a task structure is reported, so the
//!   simulator can charge the modelled cache and CPU for it; the runtime's hooks are empty;
//! * **reschedule requests** ([`Platform::resched`]) — `need_resched` plus an IPI.
//!
//! The interface mirrors Linux's `sched_class` and sched_ext's `sched_ext_ops`:
//!
//! | schedlab            | Linux 2.4 / sched_class          | sched_ext            |
//! |---------------------|----------------------------------|----------------------|
//! | [`Policy::task_new`]| `do_fork` → `wake_up_forked`     | `init_task`/`enable` |
//! | [`Policy::wake_up`] | `wake_up_process`+`reschedule_idle` (`select_task_rq`+`enqueue_task`+`check_preempt`) | `select_cpu`+`enqueue` |
//! | [`Policy::schedule`]| `schedule()` (`put_prev`+`pick_next_task`) | `dispatch`/`running`/`stopping` |
//! | [`Policy::tick`]    | `update_process_times`/`task_tick` | `tick`             |
//! | [`Policy::yield_now`]| `sys_sched_yield`               | `yield`              |
//! | [`Policy::balance`] | `load_balance` (O(1))             | `balance`/`dispatch` |
//!
//! Per-task scheduling state (the scheduler-relevant fields of `task_struct`) lives in
//! the [`TaskTable`]; policies read and write it only between a [`Platform::touch`]
//! of the task so that the cost of every access is visible to the simulator.
//!
//! Files: `policy.rs` (the contract above), `platform.rs` (what a policy may ask of an
//! engine), `policies/` (the registry in `mod.rs` — names, spec parsing, the one
//! constructor [`PolicyKind::build`] — and one file per policy), `common.rs` (what the
//! 2.4-family policies share, including the body of 2.4's `schedule()`), `goodness.rs`
//! (2.4 priority arithmetic), `task.rs`, `runlist.rs`, `cpu.rs`, `spec.rs` (the
//! `name:key=value` syntax), `options.rs` (the option tables of policies and workloads:
//! parsing, canonical specs, help).

pub mod common;
pub mod cpu;
pub mod goodness;
pub mod layout;
pub mod options;
pub mod platform;
pub mod policies;
pub mod policy;
pub mod runlist;
pub mod spec;
pub mod task;
mod task_blocks;
pub mod task_state;
pub mod trace;

pub use cpu::{CpuId, CpuMask, Topology};
pub use layout::{LayoutError, TaskLayout};
pub use platform::{Access, Line, NullPlatform, Platform, SchedLock, Work};
pub use policies::{BuildEnv, Configured, PolicyKind, PolicyOptions, PolicySource, PolicySpec};
pub use policy::{InvariantViolation, Policy, PrevState};
pub use runlist::{PrevLink, RunList};
pub use spec::{Spec, SpecError};
pub use task::{SchedClass, TaskId, TaskParams, TaskSched, TaskTable};
