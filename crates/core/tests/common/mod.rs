//! Helpers shared by the policy unit tests: every call on one CPU of a
//! [`NullPlatform`], with the policy's invariants checked afterwards.
#![allow(dead_code)]

use schedlab_core::cpu::CpuId;
use schedlab_core::{NullPlatform, Policy, PrevState, TaskId, TaskParams};

/// Panic with the policy's name if its structural invariants do not hold.
pub fn check<P: Policy<NullPlatform> + ?Sized>(pol: &P) {
    if let Err(e) = pol.check_invariants() {
        panic!("{} invariant violated: {e}", pol.name());
    }
}

/// `schedule()` on `cpu`, with the invariants checked afterwards.
pub fn sched<P: Policy<NullPlatform> + ?Sized>(
    pol: &P,
    p: &mut NullPlatform,
    cpu: CpuId,
    prev: Option<TaskId>,
    state: PrevState,
) -> Option<TaskId> {
    p.cpu = cpu;
    let next = pol.schedule(p, prev, state);
    check(pol);
    next
}

/// Fork `id` on `cpu` with `parent` and wake it (`sync`: the synchronous variant);
/// returns the reschedule requests the wake-up made.
pub fn fork_wake<P: Policy<NullPlatform> + ?Sized>(
    pol: &P,
    p: &mut NullPlatform,
    cpu: CpuId,
    id: TaskId,
    params: &TaskParams,
    parent: Option<TaskId>,
    sync: bool,
) -> Vec<CpuId> {
    p.cpu = cpu;
    p.take_resched();
    pol.task_new(p, id, params, parent);
    pol.wake_up(p, id, sync);
    check(pol);
    p.take_resched()
}

/// Wake the sleeping `id` from `cpu`; returns the reschedule requests.
pub fn wake<P: Policy<NullPlatform> + ?Sized>(pol: &P, p: &mut NullPlatform, cpu: CpuId, id: TaskId) -> Vec<CpuId> {
    p.cpu = cpu;
    p.take_resched();
    pol.wake_up(p, id, false);
    check(pol);
    p.take_resched()
}
