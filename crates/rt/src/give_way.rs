//! Giving the worker away: [`yield_now`] (the task asks to go to the back, the
//! kernel's `sched_yield`) and [`preemption_point`] (the scheduler may take the worker
//! back, the kernel's preemption on return to user mode), built on one future,
//! `GiveWay`; and [`should_yield`], the test a preemption point makes.

use crate::context;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Whether the running task should give up its worker now: under a policy scheduler,
/// the policy has asked for a reschedule (a woken task with better goodness, or the
/// tick ended this task's time slice) or a timer tick is due. Always `false` under
/// `fast` and outside a worker. Cheap: a flag and a clock read.
pub fn should_yield() -> bool {
    match context::get() {
        Some(c) if c.worker != context::NO_WORKER => c.local.should_yield(c.worker),
        _ => false,
    }
}

/// A preemption point: if [`should_yield`], return `Pending` once with the task still
/// runnable, so that the worker ticks and calls `schedule(prev, Runnable)`: the
/// policy, not the task, decides whether it keeps running (unlike [`yield_now`], which
/// is `sched_yield`). This is how a cooperative runtime gives long-running tasks the
/// kernel's preemption on return to user mode; the workload interpreter (`schedlab-rtrun`) calls it
/// between workload operations and inside long computations.
pub async fn preemption_point() {
    if should_yield() {
        GiveWay { polled: false, sched_yield: false }.await
    }
}

/// Yield to the scheduler: the task goes to the back of the run queue (fast), or
/// `sched_yield` + `schedule()` (policies), and is polled again later.
pub async fn yield_now() {
    GiveWay { polled: false, sched_yield: true }.await
}

/// Pending once, self-woken, so that the worker takes the task off the CPU still
/// runnable; `sched_yield` marks it as yielding (the worker then calls the policy's
/// `yield_now`) rather than preempted.
struct GiveWay {
    polled: bool,
    sched_yield: bool,
}

impl Future for GiveWay {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.polled {
            return Poll::Ready(());
        }
        self.polled = true;
        if self.sched_yield {
            context::set_yielded(true);
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
