//! The Linux 2.4 priority arithmetic shared by DSS, MQS and PMQS
//! (`kernel/sched.c`, i386; S3 and S5 in docs/sources.md).

use crate::cpu::CpuId;
use crate::task::{SchedClass, TaskSched};

/// Bonus for staying on the CPU the task last ran on (i386 value).
pub const PROC_CHANGE_PENALTY: i32 = 15;
/// Goodness of the idle task / "nothing runnable".
pub const MIN_GOODNESS: i32 = -1000;
/// Real-time tasks: `1000 + rt_priority`.
pub const RT_GOODNESS_BASE: i32 = 1000;
/// Goodness of a task with SCHED_YIELD set.
pub const YIELD_GOODNESS: i32 = -1;
/// Default of the 2.4 family's `preempt_threshold` option ([`crate::common::Opts24`]): a
/// woken task preempts a running one when `preemption_goodness > threshold`. 2.4.7's
/// `reschedule_idle` (the kernels of the PMQS experiments, and the 2.4.7 multi-queue
/// patch they ran) uses `> 1`; the 2.5.0 multi-queue RFC used `> 0`. One default for
/// DSS, MQS and PMQS, so that they differ only in their run-queue organisation.
pub const PREEMPTION_THRESHOLD: i32 = 1;

/// `TICK_SCALE(x)`: converts the nice range to ticks for a given HZ.
pub fn tick_scale(x: i32, hz: u32) -> i32 {
    match hz {
        0..=199 => x >> 2,
        200..=399 => x >> 1,
        400..=799 => x,
        800..=1599 => x << 1,
        _ => x << 2,
    }
}

/// `NICE_TO_TICKS(nice) = TICK_SCALE(20 − nice) + 1`: the quantum in ticks.
/// At HZ = 100: nice 0 → 6, nice −20 → 11, nice 19 → 1.
pub fn nice_to_ticks(nice: i8, hz: u32) -> i32 {
    tick_scale(20 - nice as i32, hz) + 1
}

/// Counter recalculation applied to every task when all runnable counters are 0:
/// `counter = (counter >> 1) + NICE_TO_TICKS(nice)`.
pub fn recalc_counter(counter: i32, nice: i8, hz: u32) -> i32 {
    (counter >> 1) + nice_to_ticks(nice, hz)
}

/// DSS `goodness(p, this_cpu, this_mm)`:
/// yield → −1; RT → 1000 + rt_priority; SCHED_OTHER with counter 0 → 0; else
/// `counter + 15·[p last ran here] + 1·[same mm or kernel thread] + (20 − nice)`.
#[inline]
pub fn goodness(t: &TaskSched, this_cpu: CpuId, this_mm: u32) -> i32 {
    if t.yielded() {
        return YIELD_GOODNESS;
    }
    if t.class() != SchedClass::Other {
        return RT_GOODNESS_BASE + t.rt_priority() as i32;
    }
    let mut w = t.counter();
    if w == 0 {
        return 0;
    }
    if t.processor() == this_cpu {
        w += PROC_CHANGE_PENALTY;
    }
    // The mm bonus by arithmetic, not a branch: across a run-queue walk whether a task
    // shares the mm is data the host CPU cannot predict (the simulator's walks
    // mispredicted it on a fifth of the tasks). `mm` is read once (fixed at fork).
    let mm = t.mm();
    w += ((mm == this_mm) | (mm == 0)) as i32;
    w + 20 - t.nice() as i32
}

/// MQS `base_goodness`: −1 if yielding; else `counter`, plus `20 − nice` if counter > 0.
#[inline]
pub fn base_goodness(t: &TaskSched) -> i32 {
    if t.yielded() {
        return YIELD_GOODNESS;
    }
    let c = t.counter();
    if c > 0 {
        c + 20 - t.nice() as i32
    } else {
        c
    }
}

/// MQS `na_goodness` ("non-affinity"): base goodness for SCHED_OTHER, `1000 +
/// rt_priority` for real-time tasks. No CPU or mm term.
#[inline]
pub fn na_goodness(t: &TaskSched) -> i32 {
    if t.class() != SchedClass::Other {
        RT_GOODNESS_BASE + t.rt_priority() as i32
    } else {
        base_goodness(t)
    }
}

/// MQS `local_goodness(t, mm)`: na_goodness plus 1 if `t.mm == mm` (2.5.0 MQ uses
/// `==` only; DSS also rewards `mm == NULL`). Positive-goodness tasks only.
#[inline]
pub fn local_goodness(t: &TaskSched, this_mm: u32) -> i32 {
    let g = na_goodness(t);
    if g > 0 && t.class() == SchedClass::Other && t.mm() == this_mm {
        g + 1
    } else {
        g
    }
}

/// `preemption_goodness(curr, p, cpu) = goodness(p, cpu, curr.mm) − goodness(curr, cpu, curr.mm)`.
#[inline]
pub fn preemption_goodness(curr: &TaskSched, p: &TaskSched, cpu: CpuId) -> i32 {
    let mm = curr.mm();
    goodness(p, cpu, mm) - goodness(curr, cpu, mm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{TaskParams, TaskTable};
    use crate::CpuMask;

    fn task(tab: &TaskTable, id: u32, nice: i8, mm: u32, cpu: CpuId, counter: i32) -> &TaskSched {
        let p = TaskParams { nice, mm, cpus_allowed: CpuMask::all(), ..TaskParams::default() };
        tab.init(id, &p, cpu, counter);
        tab.get(id)
    }

    #[test]
    fn nice_to_ticks_at_hz100_matches_2_4() {
        assert_eq!(nice_to_ticks(0, 100), 6);
        assert_eq!(nice_to_ticks(-20, 100), 11);
        assert_eq!(nice_to_ticks(19, 100), 1);
        // HZ = 1000 (later kernels): x << 1.
        assert_eq!(nice_to_ticks(0, 1000), 41);
    }

    #[test]
    fn recalculation_halves_and_adds_the_quantum() {
        assert_eq!(recalc_counter(0, 0, 100), 6);
        assert_eq!(recalc_counter(6, 0, 100), 9);
        // A sleeper converges to 2·NICE_TO_TICKS − 1 = 11 (the I/O-bound boost).
        let mut c = 0;
        for _ in 0..20 {
            c = recalc_counter(c, 0, 100);
        }
        assert_eq!(c, 11);
    }

    #[test]
    fn goodness_adds_affinity_mm_and_nice_terms() {
        let tab = TaskTable::new(4);
        let t = task(&tab, 0, 0, 7, 2, 6);
        assert_eq!(goodness(t, 2, 7), 6 + 15 + 1 + 20);
        assert_eq!(goodness(t, 1, 7), 6 + 1 + 20);
        assert_eq!(goodness(t, 1, 8), 6 + 20);
        let k = task(&tab, 1, -5, 0, 0, 3); // kernel thread: mm == NULL bonus
        assert_eq!(goodness(k, 1, 8), 3 + 1 + 25);
        t.set_counter(0);
        assert_eq!(goodness(t, 2, 7), 0, "exhausted quantum");
        t.set_yielded(true);
        assert_eq!(goodness(t, 2, 7), -1);
        let rt = task(&tab, 2, 0, 7, 0, 0);
        rt.set_class(SchedClass::Fifo);
        rt.set_rt_priority(50);
        assert_eq!(goodness(rt, 3, 1), 1050);
    }

    #[test]
    fn mqs_goodness_variants() {
        let tab = TaskTable::new(4);
        let t = task(&tab, 0, 5, 7, 2, 4);
        assert_eq!(base_goodness(t), 4 + 15);
        assert_eq!(na_goodness(t), 19);
        assert_eq!(local_goodness(t, 7), 20);
        assert_eq!(local_goodness(t, 0), 19, "2.5.0 MQ: no mm==NULL bonus");
        t.set_counter(0);
        assert_eq!(base_goodness(t), 0);
    }

    #[test]
    fn preemption_needs_more_than_affinity() {
        let tab = TaskTable::new(4);
        let curr = task(&tab, 0, 0, 1, 0, 2); // running on cpu 0
        let woken = task(&tab, 1, 0, 2, 1, 6); // last ran on cpu 1
                                               // On cpu 0: curr = 2+15+1+20 = 38, woken = 6+20 = 26 → no preemption.
        assert_eq!(preemption_goodness(curr, woken, 0), 26 - 38);
    }
}
