//! Behavioural tests of DSS and MQS against the 2.4 / 2.5.0-MQ semantics
//! (docs/policies.md, "dss" and "mqs"), driven through the `Policy` interface on the zero-cost `NullPlatform`.

mod common;
use common::{check, sched};
use schedlab_core::common::Hooks24;
use schedlab_core::cpu::CpuId;
use schedlab_core::goodness::{nice_to_ticks, MIN_GOODNESS};
use schedlab_core::policies::dss::Dss;
use schedlab_core::policies::mqs::{Mqs, PREMATURE_IDLE_RESCANS};
use schedlab_core::{
    BuildEnv, CpuMask, NullPlatform, Platform, Policy, PolicySource, PolicySpec, PrevState, SchedClass, SchedLock,
    TaskId, TaskParams, Topology, Work,
};
use std::cell::Cell;

const HZ: u32 = 100;
const CAP: usize = 32;

fn dss(n: usize) -> (NullPlatform, Dss<NullPlatform>) {
    let p = NullPlatform::new(0);
    let pol = Dss::new(&p, &Topology::smp(n), CAP, HZ);
    (p, pol)
}

fn mqs(n: usize) -> (NullPlatform, Mqs<NullPlatform>) {
    let p = NullPlatform::new(0);
    let pol = Mqs::new(&p, &Topology::smp(n), CAP, HZ);
    (p, pol)
}

/// Any registry spec on `n` CPUs, built as the engines build it.
fn from_spec(spec: &str, n: usize) -> (NullPlatform, Box<dyn Policy<NullPlatform>>) {
    let p = NullPlatform::new(0);
    let spec = PolicySpec::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let pol = spec.build(&p, &BuildEnv { topo: &Topology::smp(n), capacity: CAP, hz: HZ }).expect("builds");
    (p, pol)
}

fn params(nice: i8, mm: u32) -> TaskParams {
    TaskParams { nice, mm, ..TaskParams::default() }
}

fn rt(class: SchedClass, prio: u8) -> TaskParams {
    TaskParams { class, rt_priority: prio, ..TaskParams::default() }
}

/// Fork task `id` on `cpu` (no parent), optionally force its counter, and wake it
/// from `cpu`. Returns the reschedule requests the wakeup made.
fn spawn<P: Policy<NullPlatform> + ?Sized>(
    pol: &P,
    p: &mut NullPlatform,
    cpu: CpuId,
    id: TaskId,
    params: &TaskParams,
    counter: Option<i32>,
    sync: bool,
) -> Vec<CpuId> {
    p.cpu = cpu;
    pol.task_new(p, id, params, None);
    if let Some(c) = counter {
        pol.tasks().get(id).set_counter(c);
    }
    p.take_resched();
    pol.wake_up(p, id, sync);
    check(pol);
    p.take_resched()
}

// ---------------------------------------------------------------- DSS ------------

/// The 2.4 family reports the counter `do_fork` gave each task (half its parent's,
/// rounded up; a full quantum without a parent), its counter now, and where that
/// counter stood among the others' at the fork.
#[test]
fn the_2_4_family_reports_each_tasks_fork_counter() {
    for spec in ["dss", "mqs", "pmqs:pool=1,lb=lbc"] {
        let (mut p, pol) = from_spec(spec, 2);
        spawn(&*pol, &mut p, 0, 0, &params(0, 1), Some(7), false);
        p.cpu = 0;
        pol.task_new(&p, 1, &params(0, 1), Some(0));
        let get = |t: TaskId, k: &str| pol.task_stats(t).into_iter().find(|(n, _)| *n == k).unwrap().1;
        assert_eq!((get(1, "fork_counter_ticks"), get(1, "counter_ticks")), (4, 4), "{spec}");
        assert_eq!(
            (get(0, "fork_counter_ticks"), get(0, "counter_ticks")),
            (6, 3),
            "{spec}: HZ 100, nice 0: 6 ticks, then halved by the fork"
        );
        assert_eq!(
            [get(1, "fork_ahead_tasks"), get(1, "fork_ahead_ticks"), get(1, "fork_level_tasks")],
            [0, 0, 0],
            "{spec}: the parent is not counted"
        );
        // Task 0 has 3 ticks; add task 2, queued with 6, and task 3, asleep with 4.
        // A child of task 1 (4 ticks: the child gets 2) has tasks 0, 2 and 3 ahead, by
        // 1 + 4 + 2 ticks. A child of task 2 (then 3 ticks: the child gets 2, task 2
        // keeps 1) has tasks 0 and 3 ahead, by 1 + 2, and tasks 1 and 4 level.
        spawn(&*pol, &mut p, 0, 2, &params(0, 1), Some(6), false);
        pol.task_new(&p, 3, &params(0, 1), None);
        pol.tasks().get(3).set_counter(4);
        pol.task_new(&p, 4, &params(0, 1), Some(1));
        assert_eq!([get(4, "fork_ahead_tasks"), get(4, "fork_ahead_ticks"), get(4, "fork_level_tasks")], [3, 7, 0]);
        pol.tasks().get(2).set_counter(3);
        pol.task_new(&p, 5, &params(0, 1), Some(2));
        assert_eq!(get(5, "fork_counter_ticks"), 2);
        assert_eq!(
            [get(5, "fork_ahead_tasks"), get(5, "fork_ahead_ticks"), get(5, "fork_level_tasks")],
            [2, 3, 2],
            "{spec}"
        );
    }
}

#[test]
fn dss_schedule_picks_max_goodness() {
    let (mut p, pol) = dss(1);
    spawn(&pol, &mut p, 0, 0, &params(0, 1), None, true); // 6 + 15 + 20 = 41
    spawn(&pol, &mut p, 0, 1, &params(-10, 1), None, true); // 8 + 15 + 30 = 53
    spawn(&pol, &mut p, 0, 2, &params(5, 1), None, true); // 4 + 15 + 15 = 34
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(1));
    // A real-time task beats every SCHED_OTHER task.
    spawn(&pol, &mut p, 0, 3, &rt(SchedClass::Fifo, 1), None, true);
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Runnable), Some(3));
}

#[test]
fn dss_ties_keep_prev_then_front_of_list() {
    let (mut p, pol) = dss(1);
    spawn(&pol, &mut p, 0, 0, &params(0, 1), None, true);
    spawn(&pol, &mut p, 0, 1, &params(0, 1), None, true);
    // Equal goodness: the front of the list (the most recently woken) wins.
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(1));
    // A newer, equally good task does not displace a runnable prev.
    spawn(&pol, &mut p, 0, 2, &params(0, 1), None, true);
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Runnable), Some(1));
    // prev blocks: list is [2, 0]; the front one wins the tie.
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Blocked), Some(2));
}

/// Two candidates on CPU 0 after `prev` (mm 1, running on CPU 0) blocks: `x` woken
/// first, `y` second (so `y` is at the front).
fn dss_pair(x: (CpuId, u32, i32), y: (CpuId, u32, i32)) -> TaskId {
    let (mut p, pol) = dss(2);
    spawn(&pol, &mut p, 0, 0, &params(0, 1), None, true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    spawn(&pol, &mut p, x.0, 1, &params(0, x.1), Some(x.2), true);
    spawn(&pol, &mut p, y.0, 2, &params(0, y.1), Some(y.2), true);
    sched(&pol, &mut p, 0, Some(0), PrevState::Blocked).unwrap()
}

#[test]
fn dss_affinity_and_mm_terms_decide() {
    // +15 for the CPU the task last ran on: 5+15+1+20 = 41 against y's counter+1+20.
    assert_eq!(dss_pair((0, 1, 5), (1, 1, 19)), 1, "41 > 40");
    assert_eq!(dss_pair((0, 1, 5), (1, 1, 20)), 2, "41 = 41: tie, front of list");
    assert_eq!(dss_pair((0, 1, 5), (1, 1, 21)), 2, "42 > 41");
    // +1 for the same mm (this_mm = prev's mm = 1).
    assert_eq!(dss_pair((0, 1, 5), (0, 2, 5)), 1, "41 > 40");
    assert_eq!(dss_pair((0, 1, 5), (0, 2, 6)), 2, "tie: front of list");
    // A kernel thread (mm == NULL) gets the +1 as well in DSS.
    assert_eq!(dss_pair((0, 1, 5), (0, 0, 5)), 2, "tie: front of list");
}

#[test]
fn dss_recalculates_exactly_when_all_runnable_counters_are_zero() {
    let (mut p, pol) = dss(1);
    let t = |id| pol.tasks().get(id).counter();
    spawn(&pol, &mut p, 0, 0, &params(0, 1), Some(0), true);
    spawn(&pol, &mut p, 0, 1, &params(0, 1), Some(0), true);
    spawn(&pol, &mut p, 0, 2, &params(0, 1), Some(1), true);
    // A sleeper (never woken) with some quantum left.
    p.cpu = 0;
    pol.task_new(&p, 3, &params(0, 1), None);
    pol.tasks().get(3).set_counter(4);
    // One runnable counter is positive: no recalculation.
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(2));
    assert_eq!((t(0), t(1), t(3)), (0, 0, 4));
    // Task 2 uses up its quantum and blocks: every runnable counter is 0.
    assert!(pol.tick(&p, Some(2)));
    assert_eq!(t(2), 0);
    let next = sched(&pol, &mut p, 0, Some(2), PrevState::Blocked);
    assert!(next == Some(0) || next == Some(1));
    // Exactly one recalculation, applied to sleepers too: c/2 + NICE_TO_TICKS.
    let q = nice_to_ticks(0, HZ);
    assert_eq!((t(0), t(1), t(2), t(3)), (q, q, q, 4 / 2 + q));
}

#[test]
fn dss_yielding_task_does_not_trigger_recalculation() {
    let (mut p, pol) = dss(1);
    spawn(&pol, &mut p, 0, 0, &params(0, 1), Some(3), true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    spawn(&pol, &mut p, 0, 1, &params(0, 1), Some(0), true);
    pol.yield_now(&p, 0);
    // Goodness: yielding prev -1, exhausted task 0 → the exhausted task runs, c = 0,
    // so the counters are recalculated (the yield does not prevent it)...
    let next = sched(&pol, &mut p, 0, Some(0), PrevState::Runnable);
    assert_eq!(next, Some(1));
    assert_eq!(pol.tasks().get(1).counter(), nice_to_ticks(0, HZ));
    // ...but a yielding task (goodness -1) alone with nothing schedulable here does
    // not: the exhausted task may only run on CPU 1.
    let (mut p, pol) = dss(2);
    spawn(&pol, &mut p, 0, 0, &params(0, 1), Some(3), true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    let only1 = TaskParams { cpus_allowed: CpuMask::single(1), ..params(0, 1) };
    spawn(&pol, &mut p, 1, 1, &only1, Some(0), true);
    pol.yield_now(&p, 0);
    assert!(pol.tasks().get(0).yielded());
    p.cpu = 0;
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(0));
    assert_eq!(pol.tasks().get(0).counter(), 3);
    assert_eq!(pol.tasks().get(1).counter(), 0);
}

#[test]
fn dss_reschedule_idle_prefers_last_cpu_when_idle() {
    let (mut p, pol) = dss(3);
    // Task forked on CPU 2, woken from CPU 0: CPU 2 is idle → kick CPU 2.
    p.cpu = 2;
    pol.task_new(&p, 0, &params(0, 1), None);
    p.cpu = 0;
    pol.wake_up(&p, 0, false);
    assert_eq!(p.take_resched(), vec![2]);
}

/// CPUs 0..n each run their own task; then the tasks of CPU 2 and CPU 1 exit at
/// t = 50 and t = 100 (their CPUs go idle then), and CPU 2 re-idles at t = 150 (a
/// useless IPI: idle → idle, which 2.4 does not stamp).
fn idle_at_50_and_100<P: Policy<NullPlatform>>(pol: &P, p: &mut NullPlatform) {
    for cpu in 0..3 {
        spawn(pol, p, cpu, cpu as TaskId, &params(0, 1), None, true);
        assert_eq!(sched(pol, p, cpu, None, PrevState::Runnable), Some(cpu as TaskId));
    }
    p.set_now(50);
    assert_eq!(sched(pol, p, 2, Some(2), PrevState::Exited), None);
    p.set_now(100);
    assert_eq!(sched(pol, p, 1, Some(1), PrevState::Exited), None);
    p.set_now(150);
    assert_eq!(sched(pol, p, 2, None, PrevState::Runnable), None);
    p.set_now(200);
}

#[test]
fn dss_reschedule_idle_picks_least_recently_active_idle_cpu() {
    let (mut p, pol) = dss(3);
    idle_at_50_and_100(&pol, &mut p);
    // Last CPU (0) is busy → the idle CPU that switched to idle first (2), although it
    // re-idled later.
    assert_eq!(spawn(&pol, &mut p, 0, 3, &params(0, 1), None, false), vec![2]);
}

/// `prev == next` with a task running: 2.4 jumps to `same_process` and leaves
/// `last_schedule` alone; only a real switch stamps it.
#[test]
fn last_schedule_is_stamped_only_on_a_switch() {
    fn run<P: Policy<NullPlatform> + Hooks24<NullPlatform>>(pol: &P, p: &mut NullPlatform) {
        p.set_now(10);
        spawn(pol, p, 0, 0, &params(0, 1), None, true);
        assert_eq!(sched(pol, p, 0, None, PrevState::Runnable), Some(0));
        let stamp = || pol.common().cpu(0).last_schedule.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(stamp(), 10, "{}: idle → task stamps", pol.name());
        p.set_now(20);
        assert_eq!(sched(pol, p, 0, Some(0), PrevState::Runnable), Some(0));
        assert_eq!(stamp(), 10, "{}: task → same task does not stamp", pol.name());
        p.set_now(30);
        assert_eq!(sched(pol, p, 0, Some(0), PrevState::Blocked), None);
        assert_eq!(stamp(), 30, "{}: task → idle stamps", pol.name());
        p.set_now(40);
        assert_eq!(sched(pol, p, 0, None, PrevState::Runnable), None);
        assert_eq!(stamp(), 30, "{}: idle → idle does not stamp", pol.name());
    }
    let (mut p, pol) = dss(1);
    run(&pol, &mut p);
    let (mut p, pol) = mqs(1);
    run(&pol, &mut p);
}

/// One CPU running a task with counter `k`; wake a task with counter `m` (same CPU,
/// same mm). DSS preempts iff preemption_goodness = m - k > 1.
fn dss_preempts(k: i32, m: i32) -> bool {
    let (mut p, pol) = dss(1);
    spawn(&pol, &mut p, 0, 0, &params(0, 1), Some(k), true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    !spawn(&pol, &mut p, 0, 1, &params(0, 1), Some(m), false).is_empty()
}

#[test]
fn dss_reschedule_idle_preempts_only_when_preemption_goodness_exceeds_one() {
    assert!(!dss_preempts(3, 4), "difference 1: no preemption");
    assert!(dss_preempts(3, 5), "difference 2: preempt");
}

#[test]
fn dss_reschedule_idle_preempts_the_cpu_with_the_best_preemption_goodness() {
    let (mut p, pol) = dss(2);
    spawn(&pol, &mut p, 0, 0, &params(0, 1), Some(3), true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    spawn(&pol, &mut p, 1, 1, &params(0, 1), Some(1), true);
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(1));
    // Woken task last ran on CPU 1. On CPU 1: (8+15+1+20) - (1+15+1+20) = 7;
    // on CPU 0: (8+1+20) - (3+15+1+20) = -10.
    assert_eq!(spawn(&pol, &mut p, 1, 2, &params(0, 1), Some(8), false), vec![1]);
}

#[test]
fn dss_yield_puts_the_task_behind_others() {
    let (mut p, pol) = dss(1);
    spawn(&pol, &mut p, 0, 0, &params(-20, 1), None, true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    // Alone: yielding is a no-op, the task keeps the CPU.
    pol.yield_now(&p, 0);
    assert!(!pol.tasks().get(0).yielded());
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(0));
    // With a (much worse) task waiting, the yielder goes behind it.
    spawn(&pol, &mut p, 0, 1, &params(19, 1), None, true);
    pol.yield_now(&p, 0);
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    assert!(!pol.tasks().get(0).yielded(), "SCHED_YIELD cleared on switch");
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Blocked), Some(0));
}

#[test]
fn dss_rr_quantum_is_refilled() {
    let (mut p, pol) = dss(1);
    spawn(&pol, &mut p, 0, 0, &rt(SchedClass::Rr, 10), None, true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    let q = nice_to_ticks(0, HZ);
    for i in 1..=q {
        assert_eq!(pol.tick(&p, Some(0)), i == q);
    }
    assert_eq!(pol.tasks().get(0).counter(), 0);
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(0));
    assert_eq!(pol.tasks().get(0).counter(), q);
    // SCHED_FIFO is not refilled (and, at 1000 + rt_priority, needs no counter).
    spawn(&pol, &mut p, 0, 1, &rt(SchedClass::Fifo, 20), Some(0), true);
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Runnable), Some(1));
    assert_eq!(pol.tasks().get(1).counter(), 0);
}

// ---------------------------------------------------------------- MQS ------------

/// MQS's steal scenario (a remote task must beat the local best by
/// `PROC_CHANGE_PENALTY`), on either policy. CPU 0 runs A (mm 1, counter
/// `k`), CPU 1 runs B (nice −20); R (mm 2, counter `m`) is queued on CPU 1 by a
/// synchronous wakeup. CPU 0 then reschedules with A still runnable.
fn steal_scenario<P: Policy<NullPlatform>>(pol: &P, p: &mut NullPlatform, k: i32, m: i32) -> TaskId {
    const A: TaskId = 0;
    const B: TaskId = 1;
    const R: TaskId = 2;
    spawn(pol, p, 0, A, &params(0, 1), Some(k), true);
    assert_eq!(sched(pol, p, 0, None, PrevState::Runnable), Some(A));
    spawn(pol, p, 1, B, &params(-20, 3), None, true);
    assert_eq!(sched(pol, p, 1, None, PrevState::Runnable), Some(B));
    spawn(pol, p, 1, R, &params(0, 2), Some(m), true);
    sched(pol, p, 0, Some(A), PrevState::Runnable).unwrap()
}

#[test]
fn mqs_steals_only_above_local_best_plus_proc_change_penalty() {
    // A: local_goodness 1+20+1 = 22, boosted to 37. R: na_goodness m+20.
    let (mut p, pol) = mqs(2);
    assert_eq!(steal_scenario(&pol, &mut p, 1, 17), 0, "37 is not > 37");
    assert_eq!(pol.max_na(1), (37, Some(2)), "R stays stealable");
    assert_eq!(pol.tasks().get(2).on_rq(), Some(1));

    let (mut p, pol) = mqs(2);
    assert_eq!(steal_scenario(&pol, &mut p, 1, 18), 2, "38 > 37: steal");
    let r = pol.tasks().get(2);
    assert_eq!((r.processor(), r.on_rq(), r.has_cpu()), (0, Some(0), true));
    assert_eq!(pol.max_na(1), (MIN_GOODNESS, None), "only B (running) left");
    assert_eq!(pol.tasks().get(0).on_rq(), Some(0), "A stays queued on CPU 0");
    check(&pol);
}

#[test]
fn mqs_steal_threshold_matches_dss() {
    // "Functional equivalence": DSS makes the same choice at the same threshold
    // (goodness(A) = 1+15+1+20 = 37 against R's m+20 on a foreign CPU).
    for m in [15, 16, 17, 18, 19] {
        let (mut pd, d) = dss(2);
        let (mut pm, q) = mqs(2);
        assert_eq!(steal_scenario(&d, &mut pd, 1, m), steal_scenario(&q, &mut pm, 1, m), "m = {m}");
    }
}

#[test]
fn mqs_max_na_bookkeeping() {
    let (mut p, pol) = mqs(2);
    const B: TaskId = 0;
    spawn(&pol, &mut p, 1, B, &params(-20, 3), None, true);
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(B));
    assert_eq!(pol.max_na(1), (MIN_GOODNESS, None), "running task is not stealable");
    // add_to_runqueue raises max_na only for a task that beats it.
    spawn(&pol, &mut p, 1, 1, &params(0, 2), Some(3), true); // X: 23
    assert_eq!(pol.max_na(1), (23, Some(1)));
    spawn(&pol, &mut p, 1, 2, &params(0, 2), Some(5), true); // Y: 25
    assert_eq!(pol.max_na(1), (25, Some(2)));
    spawn(&pol, &mut p, 1, 3, &params(0, 2), Some(2), true); // Z: 22
    assert_eq!(pol.max_na(1), (25, Some(2)));
    // Idle CPU 0 steals Y; CPU 1's max_na is rescanned and takes the FIRST
    // schedulable task with positive na_goodness (Z, at the front), not the best (X).
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(2));
    assert_eq!(pol.max_na(1), (22, Some(3)));
    // CPU 0 had nothing to publish when it stole.
    assert_eq!(pol.max_na(0), (MIN_GOODNESS, None));
    // CPU 1's own scan recomputes max_na exactly: the best non-running task.
    assert_eq!(sched(&pol, &mut p, 1, Some(B), PrevState::Runnable), Some(B));
    assert_eq!(pol.max_na(1), (23, Some(1)));
    // Phase 1 records the runner-up even if worse than the local winner.
    assert_eq!(sched(&pol, &mut p, 1, Some(B), PrevState::Blocked), Some(1));
    assert_eq!(pol.max_na(1), (22, Some(3)));
    // A deletion rescan skips tasks with an exhausted counter (na_goodness 0): W is
    // at the front, Z is stolen, X runs → no stealable task left.
    spawn(&pol, &mut p, 1, 4, &params(0, 2), Some(0), true); // W: 0
    assert_eq!(pol.max_na(1), (22, Some(3)));
    assert_eq!(sched(&pol, &mut p, 0, Some(2), PrevState::Blocked), Some(3));
    assert_eq!(pol.max_na(1), (MIN_GOODNESS, None));
    assert_eq!(pol.tasks().get(4).on_rq(), Some(1));
}

#[test]
fn mqs_local_winner_is_published_when_a_better_remote_task_is_stolen() {
    let (mut p, pol) = mqs(2);
    spawn(&pol, &mut p, 1, 0, &params(-20, 3), None, true);
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(0));
    spawn(&pol, &mut p, 1, 1, &params(-20, 2), Some(11), true); // na 51
                                                                // CPU 0 is idle with a weak local task (2+20 = 22, boosted 37 < 51).
    spawn(&pol, &mut p, 0, 2, &params(0, 2), Some(2), true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(1));
    assert_eq!(pol.max_na(0), (22, Some(2)), "displaced local best is stealable");
}

#[test]
fn mqs_reschedule_idle_moves_woken_task_to_an_idle_cpu() {
    let (mut p, pol) = mqs(2);
    spawn(&pol, &mut p, 0, 0, &params(-20, 1), None, false);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    // W last ran on CPU 0, which runs something better; CPU 1 is idle.
    assert_eq!(spawn(&pol, &mut p, 0, 1, &params(0, 1), None, false), vec![1]);
    let w = pol.tasks().get(1);
    assert_eq!((w.processor(), w.on_rq()), (1, Some(1)));
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(1));
}

#[test]
fn mqs_reschedule_idle_prefers_the_longest_idle_cpu() {
    let (mut p, pol) = mqs(3);
    idle_at_50_and_100(&pol, &mut p);
    // The new task's own CPU (0) is busy; CPU 2 has been idle longest.
    assert_eq!(spawn(&pol, &mut p, 0, 3, &params(0, 1), None, false), vec![2]);
    assert_eq!(pol.tasks().get(3).on_rq(), Some(2));
}

#[test]
fn mqs_reschedule_idle_prefers_the_last_cpu_when_idle() {
    let (mut p, pol) = mqs(3);
    p.cpu = 2;
    pol.task_new(&p, 0, &params(0, 1), None);
    p.cpu = 0;
    pol.wake_up(&p, 0, false);
    assert_eq!(p.take_resched(), vec![2]);
    assert_eq!(pol.tasks().get(0).on_rq(), Some(2));
}

/// One CPU running a task with counter `k`; wake a task with counter `m` (same mm).
/// MQS preempts its own CPU iff preemption_goodness = m - k > 1, as DSS does
/// (`PREEMPTION_THRESHOLD`, 2.4.7's value; the 2.5.0 RFC used > 0).
fn mqs_preempts(k: i32, m: i32) -> bool {
    let (mut p, pol) = mqs(1);
    spawn(&pol, &mut p, 0, 0, &params(0, 1), Some(k), true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    !spawn(&pol, &mut p, 0, 1, &params(0, 1), Some(m), false).is_empty()
}

#[test]
fn mqs_reschedule_idle_preempts_own_cpu_above_the_shared_threshold() {
    assert!(!mqs_preempts(3, 3));
    assert!(!mqs_preempts(3, 4));
    assert!(mqs_preempts(3, 5));
    for (k, m) in [(2, 3), (2, 4), (5, 6), (5, 7), (5, 9)] {
        assert_eq!(mqs_preempts(k, m), dss_preempts(k, m), "k={k} m={m}");
    }
}

/// `preempt_threshold` is one option of dss, mqs and pmqs: with the 2.4.7 default (1)
/// a woken task whose goodness is exactly 1 better than the running one's does not
/// preempt it; with `preempt_threshold=0` (the 2.5.0 RFC's `> 0`) it does. Difference
/// 0 never preempts.
#[test]
fn preempt_threshold_is_one_shared_option() {
    let preempts = |spec: &str, diff: i32| {
        let (mut p, pol) = from_spec(spec, 1);
        spawn(&*pol, &mut p, 0, 0, &params(0, 1), Some(3), true);
        assert_eq!(sched(&*pol, &mut p, 0, None, PrevState::Runnable), Some(0));
        !spawn(&*pol, &mut p, 0, 1, &params(0, 1), Some(3 + diff), false).is_empty()
    };
    for name in ["dss", "mqs", "pmqs"] {
        assert!(!preempts(name, 1), "{name}: difference 1, default threshold 1");
        assert!(preempts(name, 2), "{name}: difference 2, default threshold 1");
        let zero = format!("{name}:preempt_threshold=0");
        assert!(preempts(&zero, 1), "{zero}: difference 1");
        assert!(!preempts(&zero, 0), "{zero}: difference 0");
        let three = format!("{name}:preempt_threshold=3");
        assert!(!preempts(&three, 3), "{three}: difference 3");
        assert!(preempts(&three, 4), "{three}: difference 4");
    }
}

/// The threshold applies to MQS's remote placement too: with CPU 1's task at candidate
/// value 36, a woken task with na 37 has preemption_goodness 1 there.
#[test]
fn mqs_remote_placement_uses_the_same_threshold() {
    for (spec, moved) in [("mqs", false), ("mqs:preempt_threshold=0", true)] {
        let (mut p, pol) = from_spec(spec, 2);
        spawn(&*pol, &mut p, 0, 0, &params(-20, 1), None, true);
        assert_eq!(sched(&*pol, &mut p, 0, None, PrevState::Runnable), Some(0));
        spawn(&*pol, &mut p, 1, 1, &params(0, 1), Some(1), true);
        assert_eq!(sched(&*pol, &mut p, 1, None, PrevState::Runnable), Some(1));
        let r = spawn(&*pol, &mut p, 0, 2, &params(0, 1), Some(17), false);
        let expect = if moved { (vec![1], Some(1)) } else { (vec![], Some(0)) };
        assert_eq!((r, pol.tasks().get(2).on_rq()), expect, "{spec}");
    }
}

#[test]
fn mqs_reschedule_idle_preempts_a_remote_cpu_only_above_its_penalty() {
    // CPU 1 runs C (counter 1, na 21, candidate value 21+15 = 36 for a task of CPU 0).
    let run = |m: i32| {
        let (mut p, pol) = mqs(2);
        spawn(&pol, &mut p, 0, 0, &params(-20, 1), None, true);
        assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
        spawn(&pol, &mut p, 1, 1, &params(0, 1), Some(1), true);
        assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(1));
        let r = spawn(&pol, &mut p, 0, 2, &params(0, 1), Some(m), false);
        (r, pol.tasks().get(2).on_rq())
    };
    // na 36: not below 36 → stays on CPU 0's queue, nobody kicked.
    assert_eq!(run(16), (vec![], Some(0)));
    // na 37 > 36 but preemption_goodness on CPU 1 = (17+1+20) - (1+15+1+20) = 1, not
    // above the threshold: stays.
    assert_eq!(run(17), (vec![], Some(0)));
    // na 38: preemption_goodness 2 > 1: moved to CPU 1, which is kicked.
    assert_eq!(run(18), (vec![1], Some(1)));
}

#[test]
fn mqs_respects_cpus_allowed() {
    // Forked on a CPU it may not use: starts on the first allowed one.
    let (mut p, pol) = mqs(2);
    let only1 = TaskParams { cpus_allowed: CpuMask::single(1), ..params(0, 2) };
    p.cpu = 0;
    pol.task_new(&p, 0, &only1, None);
    assert_eq!(pol.tasks().get(0).processor(), 1);

    // Not stolen by a CPU outside its mask, even an idle one.
    let (mut p, pol) = mqs(2);
    spawn(&pol, &mut p, 1, 0, &params(-20, 3), None, true);
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(0));
    spawn(&pol, &mut p, 1, 1, &only1, None, true);
    assert_eq!(pol.max_na(1).1, Some(1));
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), None);
    assert_eq!(pol.tasks().get(1).on_rq(), Some(1));

    // Not placed on an idle CPU outside its mask.
    assert_eq!(spawn(&pol, &mut p, 1, 2, &only1, None, false), vec![]);
    assert_eq!(pol.tasks().get(2).on_rq(), Some(1));
}

#[test]
fn mqs_prev_no_longer_allowed_here_is_moved_away() {
    let (mut p, pol) = mqs(2);
    spawn(&pol, &mut p, 0, 0, &params(0, 1), None, false);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    pol.tasks().get(0).set_cpus_allowed(CpuMask::single(1));
    p.take_resched();
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), None);
    assert_eq!(p.take_resched(), vec![1]);
    assert_eq!(pol.tasks().get(0).on_rq(), Some(1));
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(0));
}

#[test]
fn mqs_rr_tasks_rotate() {
    let (mut p, pol) = mqs(1);
    spawn(&pol, &mut p, 0, 1, &rt(SchedClass::Rr, 10), None, true);
    spawn(&pol, &mut p, 0, 0, &rt(SchedClass::Rr, 10), None, true);
    // List [0, 1]: equal goodness, the front wins.
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    pol.tasks().get(0).set_counter(0);
    // Refilled and moved behind task 1, which now wins the tie.
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    assert_eq!(pol.tasks().get(0).counter(), nice_to_ticks(0, HZ));
}

#[test]
fn mqs_recalculates_when_every_counter_is_exhausted() {
    let (mut p, pol) = mqs(2);
    spawn(&pol, &mut p, 0, 0, &params(0, 1), Some(0), true);
    spawn(&pol, &mut p, 1, 1, &params(0, 1), Some(0), true);
    p.cpu = 1;
    pol.task_new(&p, 2, &params(0, 1), None);
    pol.tasks().get(2).set_counter(4);
    let q = nice_to_ticks(0, HZ);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    let c = |id| pol.tasks().get(id).counter();
    assert_eq!((c(0), c(1), c(2)), (q, q, 2 + q));
}

#[test]
fn mqs_yield_puts_the_task_behind_others() {
    let (mut p, pol) = mqs(1);
    spawn(&pol, &mut p, 0, 0, &params(-20, 1), None, true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    pol.yield_now(&p, 0);
    assert!(!pol.tasks().get(0).yielded(), "nothing else pending: no-op");
    spawn(&pol, &mut p, 0, 1, &params(19, 1), None, true);
    pol.yield_now(&p, 0);
    assert!(pol.tasks().get(0).yielded());
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Exited), Some(0));
    assert!(!pol.tasks().get(1).live());
}

// ------------------------------------------ MQS with contended remote locks -------

/// A platform whose `try_with` can be made to fail, as if another CPU held the lock.
struct BusyPlatform {
    cpu: CpuId,
    busy: Cell<bool>,
    resched: std::cell::RefCell<Vec<CpuId>>,
}

struct BusyLock<T>(parking_lot::Mutex<T>);

impl<T> SchedLock<T, BusyPlatform> for BusyLock<T> {
    fn with<R>(&self, _: &BusyPlatform, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.0.lock())
    }
    fn try_with<R>(&self, p: &BusyPlatform, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        if p.busy.get() {
            return None;
        }
        self.0.try_lock().map(|mut g| f(&mut g))
    }
    fn peek<R>(&self, _: &BusyPlatform, f: impl FnOnce(&T) -> R) -> R {
        f(&self.0.lock())
    }
    fn inspect<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.0.lock())
    }
}

impl Platform for BusyPlatform {
    type Lock<T: Send> = BusyLock<T>;
    fn new_lock<T: Send>(&self, _: &str, value: T) -> BusyLock<T> {
        BusyLock(parking_lot::Mutex::new(value))
    }
    fn this_cpu(&self) -> CpuId {
        self.cpu
    }
    fn now(&self) -> u64 {
        0
    }
    fn charge(&self, _: Work) {}
    fn touch(&self, _: schedlab_core::Line, _: schedlab_core::Access) {}
    fn resched(&self, cpu: CpuId) {
        self.resched.borrow_mut().push(cpu);
    }
}

#[test]
fn mqs_failed_trylocks_count_as_premature_idle_and_rescan_boundedly() {
    let mut p = BusyPlatform { cpu: 1, busy: Cell::new(false), resched: Default::default() };
    let pol = Mqs::new(&p, &Topology::smp(2), CAP, HZ);
    pol.task_new(&p, 0, &params(-20, 3), None);
    pol.wake_up(&p, 0, true);
    assert_eq!(pol.schedule(&p, None, PrevState::Runnable), Some(0));
    pol.task_new(&p, 1, &params(0, 2), None);
    pol.wake_up(&p, 1, true);
    assert_eq!(pol.max_na(1).1, Some(1));

    // CPU 0 is idle; CPU 1's lock is "held" the whole time: it goes idle after the
    // first scan and PREMATURE_IDLE_RESCANS rescans, each failing one trylock.
    p.cpu = 0;
    p.busy.set(true);
    assert_eq!(pol.schedule(&p, None, PrevState::Runnable), None);
    assert_eq!(pol.premature_idle_count(), 1 + PREMATURE_IDLE_RESCANS as u64);
    pol.check_invariants().unwrap();

    // A wakeup cannot move a task to a CPU whose lock it cannot get: it stays put.
    p.cpu = 1;
    pol.task_new(&p, 2, &params(0, 2), None);
    pol.wake_up(&p, 2, false);
    assert_eq!(pol.tasks().get(2).on_rq(), Some(1));
    assert!(p.resched.borrow().is_empty());

    // Lock released: the steal succeeds.
    p.busy.set(false);
    p.cpu = 0;
    let stolen = pol.schedule(&p, None, PrevState::Runnable);
    assert!(stolen == Some(1) || stolen == Some(2));
    pol.check_invariants().unwrap();
}

// ------------------------------------------ sched_yield (both policies) -------------

/// 2.4's `sys_sched_yield`: with nothing else runnable it returns at once (no
/// SCHED_YIELD, no `need_resched`, no lock); otherwise it asks this CPU to reschedule.
fn yield_requests<P: Policy<NullPlatform> + ?Sized>(pol: &P, p: &mut NullPlatform) {
    spawn(pol, p, 0, 0, &params(0, 1), None, true);
    assert_eq!(sched(pol, p, 0, None, PrevState::Runnable), Some(0));
    p.take_resched();
    let locks = p.locks_taken();
    pol.yield_now(p, 0);
    assert_eq!(p.take_resched(), Vec::<CpuId>::new(), "{}: alone, yield is a no-op", pol.name());
    assert_eq!(p.locks_taken(), locks, "{}: alone, yield takes no lock", pol.name());
    assert!(!pol.tasks().get(0).yielded());
    spawn(pol, p, 0, 1, &params(0, 1), None, true);
    let locks = p.locks_taken();
    pol.yield_now(p, 0);
    assert_eq!(p.take_resched(), vec![0], "{}: another task pending: need_resched here", pol.name());
    assert_eq!(p.locks_taken(), locks + 1, "{}: one lock to move the yielder back", pol.name());
    assert!(pol.tasks().get(0).yielded());
    assert_eq!(sched(pol, p, 0, Some(0), PrevState::Runnable), Some(1));
}

#[test]
fn sched_yield_gives_way_only_to_pending_tasks() {
    let (mut p, pol) = dss(1);
    yield_requests(&pol, &mut p);
    let (mut p, pol) = mqs(1);
    yield_requests(&pol, &mut p);
    let (mut p, pol) = from_spec("pmqs", 1);
    yield_requests(&*pol, &mut p);
    let (mut p, pol) = from_spec("pmqs:pool=1,lb=lbp,period=10", 2);
    yield_requests(&*pol, &mut p);
}

/// A task running on another CPU is not pending: a yield with every runnable task
/// already on a CPU is a no-op too (2.4 subtracts the CPUs running a task).
#[test]
fn sched_yield_ignores_tasks_running_elsewhere() {
    for spec in ["dss", "mqs", "pmqs:pool=1,lb=off"] {
        let (mut p, pol) = from_spec(spec, 2);
        for cpu in 0..2 {
            spawn(&*pol, &mut p, cpu, cpu as TaskId, &params(0, 1), None, true);
            assert_eq!(sched(&*pol, &mut p, cpu, None, PrevState::Runnable), Some(cpu as TaskId), "{spec}");
        }
        p.cpu = 0;
        p.take_resched();
        let locks = p.locks_taken();
        pol.yield_now(&p, 0);
        assert_eq!(p.take_resched(), Vec::<CpuId>::new(), "{spec}");
        assert_eq!(p.locks_taken(), locks, "{spec}: no lock");
        assert!(!pol.tasks().get(0).yielded(), "{spec}");
    }
}
