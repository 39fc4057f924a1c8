//! The first line of a kernel `task_struct`: `state` and `need_resched` (offsets 0 to
//! 31 of 2.4's structure and of the O(1) patches for 2.4, [`crate::layout::TASK_STATE_OFFSET`]).
//! Written once here for the policies that model those kernels (DSS, MQS, PMQS, O(1)):
//!
//! * `try_to_wake_up` stores `p->state = TASK_RUNNING` under the run-queue lock;
//! * a reschedule request (`reschedule_idle`, `resched_task`) stores
//!   `need_resched = 1` into the task the target CPU runs, its idle task when it idles,
//!   before the IPI;
//! * `schedule()` reads `prev`'s line before it takes the lock (`release_kernel_lock`
//!   reads `lock_depth`, the interrupt return path `need_resched`) and, under the lock,
//!   switches on `prev->state` and clears `prev->need_resched`;
//! * the tick that ends a quantum stores `need_resched = 1` into the running task.
//!
//! The accesses are charged only where the platform prices the kernel's layout
//! ([`Platform::task_state_priced`]).

use crate::cpu::CpuId;
use crate::platform::{Access, Line, Platform};
use crate::task::TaskId;

/// The state line of `task`, or of `cpu`'s idle task when `task` is none.
#[inline]
pub fn state_line(task: Option<TaskId>, cpu: CpuId) -> Line {
    task.map_or(Line::IdleState(cpu), Line::TaskState)
}

/// A load or store of the state words of `task` (`cpu`'s idle task when none).
#[inline]
pub fn touch_state<P: Platform>(p: &P, task: Option<TaskId>, cpu: CpuId, access: Access) {
    if p.task_state_priced() {
        p.touch(state_line(task, cpu), access);
    }
}

/// `schedule()` on `cpu` before it takes the run-queue lock: `release_kernel_lock(prev)`
/// reads `prev->lock_depth` (`prev` none: the idle task).
#[inline]
pub fn schedule_before_lock<P: Platform>(p: &P, prev: Option<TaskId>, cpu: CpuId) {
    touch_state(p, prev, cpu, Access::Read);
}

/// `schedule()` on `cpu` under the lock, once per call: the switch on `prev->state` and
/// `prev->need_resched = 0` (`clear_tsk_need_resched` in the O(1) patches).
#[inline]
pub fn schedule_under_lock<P: Platform>(p: &P, prev: Option<TaskId>, cpu: CpuId) {
    touch_state(p, prev, cpu, Access::Write);
}

/// Ask `cpu`, which runs `curr` (its idle task when none), to reschedule: store
/// `curr->need_resched = 1`, then [`Platform::resched`] (the IPI to another CPU).
#[inline]
pub fn resched_task<P: Platform>(p: &P, cpu: CpuId, curr: Option<TaskId>) {
    touch_state(p, curr, cpu, Access::Write);
    p.resched(cpu);
}
