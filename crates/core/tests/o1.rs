//! The O(1) scheduler (early 2002; docs/policies.md, "o1") on the free `NullPlatform`: its
//! arithmetic against the 2002 tables, and each mechanism driven through the `Policy`
//! interface with a hand-set clock (HZ = 100: one jiffy is 10 ms).

mod common;
use common::{check, sched};
use schedlab_core::cpu::CpuId;
use schedlab_core::policies::o1::{self, nice_to_prio, rt_prio, ArrayKind, O1Config, Span, Tunables, O1};
use schedlab_core::{
    BuildEnv, CpuMask, NullPlatform, Policy, PolicySpec, PrevState, SchedClass, TaskId, TaskParams, Topology,
};

const HZ: u32 = 100;
const JIFFY: u64 = 10_000_000;
const CAP: usize = 32;

fn build(ncpus: usize, spec: &str) -> (NullPlatform, O1<NullPlatform>) {
    let cfg = *PolicySpec::parse(spec).unwrap().config::<o1::Kind>().unwrap();
    let p = NullPlatform::new(0);
    let pol = O1::new(&p, &BuildEnv { topo: &Topology::smp(ncpus), capacity: CAP, hz: HZ }, &cfg).unwrap();
    (p, pol)
}

fn nice(n: i8) -> TaskParams {
    TaskParams { nice: n, ..TaskParams::default() }
}

/// Fork `id` on `cpu` (child of `parent`) and wake it; returns the reschedule requests.
fn fork(
    pol: &O1<NullPlatform>,
    p: &mut NullPlatform,
    cpu: CpuId,
    id: TaskId,
    params: &TaskParams,
    parent: Option<TaskId>,
) -> Vec<CpuId> {
    common::fork_wake(pol, p, cpu, id, params, parent, false)
}

/// Advance the clock one jiffy and tick `cpu` running `curr`; returns need_resched.
fn tick(pol: &O1<NullPlatform>, p: &mut NullPlatform, cpu: CpuId, curr: Option<TaskId>) -> bool {
    p.set_now(p.clock.load(std::sync::atomic::Ordering::Relaxed) + JIFFY);
    p.cpu = cpu;
    let r = pol.tick(p, curr);
    check(pol);
    r
}

/// Tick until the slice of `curr` runs out; returns the number of ticks.
fn run_slice(pol: &O1<NullPlatform>, p: &mut NullPlatform, cpu: CpuId, curr: TaskId) -> u64 {
    let mut n = 1;
    while !tick(pol, p, cpu, Some(curr)) {
        n += 1;
        assert!(n < 1000, "slice never ends");
    }
    n
}

fn queued(pol: &O1<NullPlatform>, t: TaskId) -> Option<(CpuId, ArrayKind)> {
    pol.task_view(t).queued
}

// ------------------------------------------------------------ arithmetic ---------

#[test]
fn timeslices_by_static_priority_are_the_2002_values() {
    let t = Tunables::new(&O1Config::default(), HZ).unwrap();
    assert_eq!((t.min_timeslice, t.max_timeslice, t.max_sleep_avg, t.starvation_limit), (1, 30, 200, 200));
    assert_eq!((t.busy_rebalance, t.idle_rebalance, t.cache_decay), (25, 1, 0));
    // nice −20: 300 ms, nice 0: 150 ms, nice 19: 10 ms (2.5.x `kernel/sched.c`), in ticks.
    assert_eq!(t.timeslice(nice_to_prio(-20)), 30);
    assert_eq!(t.timeslice(nice_to_prio(0)), 15);
    assert_eq!(t.timeslice(nice_to_prio(19)), 1);
    for n in -20..=19i8 {
        let sp = nice_to_prio(n);
        assert_eq!(sp as i32, 120 + n as i32);
        assert_eq!(t.timeslice(sp), 1 + 29 * (139 - sp as u64) / 39, "nice {n}");
    }
    // At HZ = 1000 (the runtime's default) the same milliseconds.
    let k = Tunables::new(&O1Config::default(), 1000).unwrap();
    assert_eq!((k.timeslice(100), k.timeslice(120), k.timeslice(139)), (300, 151, 10));
    assert_eq!((k.busy_rebalance, k.idle_rebalance, k.max_sleep_avg), (250, 1, 2000));
    assert_eq!((rt_prio(1), rt_prio(99), rt_prio(200)), (98, 0, 0));
}

#[test]
fn effective_prio_maps_sleep_avg_to_a_bonus_of_plus_minus_five() {
    let t = Tunables::new(&O1Config::default(), HZ).unwrap();
    // bonus = 40·25·s/200/100 − 5 = ⌊s/20⌋ − 5.
    for s in 0..=200u64 {
        assert_eq!(t.bonus(s), (s / 20) as i64 - 5, "sleep_avg {s}");
        assert_eq!(t.effective_prio(120, s) as i64, 120 - ((s / 20) as i64 - 5));
    }
    assert_eq!((t.effective_prio(120, 0), t.effective_prio(120, 200)), (125, 115));
    // Clamped to 100..=139.
    assert_eq!((t.effective_prio(100, 200), t.effective_prio(139, 0)), (100, 139));
    assert_eq!(t.bonus(10_000), 5, "sleep_avg beyond the maximum counts as the maximum");
}

#[test]
fn task_interactive_by_nice_follows_the_2002_delta() {
    let t = Tunables::new(&O1Config::default(), HZ).unwrap();
    // Interactive offsets prio − static_prio over −5..=+5 (the kernel comment's table).
    let row = |n: i8| -> Vec<bool> {
        let sp = nice_to_prio(n);
        (-5..=5).map(|off| t.interactive((sp as i32 + off) as u8, sp)).collect()
    };
    let ones = |k: usize| -> Vec<bool> { (0..11).map(|i| i < k).collect() };
    assert_eq!(row(-20), ones(9));
    assert_eq!(row(0), ones(4), "nice 0: interactive iff bonus ≥ 2, i.e. sleep_avg ≥ 140");
    assert_eq!(row(10), ones(2));
    assert_eq!(row(19), ones(0), "nice 19 is never interactive");
    // nice −10: DELTA = −100/40 + 2 = 0 with C's truncating division, so 6 ones (the
    // kernel comment's table shows 7, as if the division rounded down).
    assert_eq!(row(-10), ones(6));
    assert!(t.interactive(t.effective_prio(120, 140), 120) && !t.interactive(t.effective_prio(120, 139), 120));
}

#[test]
fn options_convert_to_ticks_and_reject_bad_values() {
    let cfg = *PolicySpec::parse("o1:starvation_limit=10s,cache_decay=2,min_timeslice=25ms")
        .unwrap()
        .config::<o1::Kind>()
        .unwrap();
    assert_eq!(
        (cfg.starvation_limit, cfg.cache_decay, cfg.min_timeslice),
        (Span::ms(10_000), Span::Ticks(2), Span::ms(25))
    );
    let t = Tunables::new(&cfg, HZ).unwrap();
    assert_eq!((t.starvation_limit, t.cache_decay, t.min_timeslice), (1000, 2, 2));
    // A minimum above the maximum fails at build time, naming both keys.
    let cfg = *PolicySpec::parse("o1:min_timeslice=400ms").unwrap().config::<o1::Kind>().unwrap();
    let e = Tunables::new(&cfg, HZ).unwrap_err().0;
    assert!(e.contains("min_timeslice=400ms") && e.contains("max_timeslice=300ms"), "{e}");
    let spec = PolicySpec::parse("o1:min_timeslice=400ms").unwrap();
    let p = NullPlatform::new(0);
    let env = BuildEnv { topo: &Topology::smp(2), capacity: 4, hz: HZ };
    assert!(schedlab_core::PolicySource::build(&spec, &p, &env).is_err());
    // Sub-tick times round up to one tick (the kernel's `?: 1`).
    let cfg = *PolicySpec::parse("o1:min_timeslice=1ms,max_timeslice=3ms").unwrap().config::<o1::Kind>().unwrap();
    let t = Tunables::new(&cfg, HZ).unwrap();
    assert_eq!((t.min_timeslice, t.max_timeslice), (1, 1));
}

// ------------------------------------------------------------- mechanisms ---------

#[test]
fn spent_slice_goes_to_expired_and_the_arrays_swap_when_active_empties() {
    let (mut p, pol) = build(1, "o1");
    fork(&pol, &mut p, 0, 0, &nice(0), None);
    fork(&pol, &mut p, 0, 1, &nice(0), None);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    // A CPU hog (sleep_avg 0, prio 125) is not interactive: 15 ticks, then expired.
    assert_eq!(pol.task_view(0).prio, 125);
    assert_eq!(run_slice(&pol, &mut p, 0, 0), 15);
    assert_eq!(queued(&pol, 0), Some((0, ArrayKind::Expired)));
    assert!(pol.rq_view(0).expired_timestamp.is_some());
    assert_eq!(pol.task_view(0).time_slice, 15, "refilled");
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    assert_eq!(run_slice(&pol, &mut p, 0, 1), 15);
    assert_eq!(pol.swaps(), 0);
    // Active is empty now: swap, and task 0 (expired first) runs first.
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Runnable), Some(0));
    assert_eq!(pol.swaps(), 1);
    assert_eq!(queued(&pol, 1), Some((0, ArrayKind::Active)));
    assert_eq!(pol.rq_view(0).expired_timestamp, None);
}

#[test]
fn the_best_priority_runs_first_and_fifo_within_a_priority() {
    let (mut p, pol) = build(1, "o1");
    fork(&pol, &mut p, 0, 0, &nice(5), None);
    fork(&pol, &mut p, 0, 1, &nice(-5), None);
    fork(&pol, &mut p, 0, 2, &nice(-5), None);
    fork(&pol, &mut p, 0, 3, &TaskParams { class: SchedClass::Rr, rt_priority: 10, ..TaskParams::default() }, None);
    assert_eq!(pol.task_view(3).prio, 89);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(3));
    assert_eq!(sched(&pol, &mut p, 0, Some(3), PrevState::Blocked), Some(1));
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Blocked), Some(2));
    assert_eq!(sched(&pol, &mut p, 0, Some(2), PrevState::Exited), Some(0));
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Blocked), None);
}

/// Task 0 sleeps 2 s and wakes with the full sleep_avg: prio 115, interactive.
fn interactive_and_hog(spec: &str) -> (NullPlatform, O1<NullPlatform>) {
    let (mut p, pol) = build(1, spec);
    fork(&pol, &mut p, 0, 0, &nice(0), None);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Blocked), None);
    p.set_now(200 * JIFFY);
    assert_eq!(fork(&pol, &mut p, 0, 1, &nice(0), None), vec![0]);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(1));
    p.cpu = 0;
    pol.wake_up(&p, 0, false);
    assert_eq!(p.take_resched(), vec![0], "prio 115 beats the running hog's 125");
    assert_eq!((pol.task_view(0).sleep_avg, pol.task_view(0).prio), (200, 115));
    (p, pol)
}

#[test]
fn an_interactive_task_goes_back_to_the_active_array() {
    let (mut p, pol) = interactive_and_hog("o1");
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Runnable), Some(0));
    assert_eq!(run_slice(&pol, &mut p, 0, 0), 15);
    // sleep_avg 185: bonus 4, prio 116 ≤ 118: still interactive → active again.
    let v = pol.task_view(0);
    assert_eq!((v.sleep_avg, v.prio, v.queued), (185, 116, Some((0, ArrayKind::Active))));
    // It round-robins with nothing better: it runs again, the hog (125) waits.
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(0));
    // A hog's slice ends in the expired array.
    assert_eq!(pol.rq_view(0).expired, 0);
}

/// Task 0 slept 20 s (full `sleep_avg` with `max_sleep_avg=20s`: prio 115, interactive
/// for 600 ticks of running); a CPU hog (task 1, `hog_nice`) runs and, while task 0 is
/// woken during its last tick, expires behind it. Returns the jiffy it expired at.
fn hog_expires_behind_interactive(spec: &str, hog_nice: i8) -> (NullPlatform, O1<NullPlatform>, u64) {
    let (mut p, pol) = build(1, spec);
    fork(&pol, &mut p, 0, 0, &nice(0), None);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Blocked), None);
    p.set_now(2000 * JIFFY);
    fork(&pol, &mut p, 0, 1, &nice(hog_nice), None);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(1));
    while pol.task_view(1).time_slice > 1 {
        assert!(!tick(&pol, &mut p, 0, Some(1)));
    }
    pol.wake_up(&p, 0, false);
    assert_eq!((pol.task_view(0).prio, p.take_resched()), (115, vec![0]));
    assert!(tick(&pol, &mut p, 0, Some(1)));
    assert_eq!(queued(&pol, 1), Some((0, ArrayKind::Expired)));
    let expired_at = pol.rq_view(0).expired_timestamp.expect("the hog expired");
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Runnable), Some(0));
    (p, pol, expired_at)
}

/// The interactive task keeps re-inserting itself into the active array until
/// `EXPIRED_STARVING` (`jiffies − E ≥ STARVATION_LIMIT · nr_running + 1`, checked at
/// its slice ends, every 15 ticks); then it is expired, the arrays swap and the hog is
/// back in the active array. Returns the jiffies the hog spent in the expired array.
fn starvation_wait(spec: &str) -> u64 {
    let (mut p, pol, expired_at) = hog_expires_behind_interactive(spec, 0);
    loop {
        run_slice(&pol, &mut p, 0, 0);
        assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(0), "the better task runs");
        let now = p.clock.load(std::sync::atomic::Ordering::Relaxed) / JIFFY;
        if queued(&pol, 1) == Some((0, ArrayKind::Active)) {
            return now - expired_at;
        }
        assert_eq!(queued(&pol, 0), Some((0, ArrayKind::Active)), "re-inserted at {now}");
        assert!(pol.tunables().interactive(pol.task_view(0).prio, 120), "still interactive at {now}");
    }
}

#[test]
fn expired_starving_ends_interactive_reinsertion_after_a_deadline_scaled_by_nr_running() {
    // Limit 10 ticks, 2 runnable: the deadline is 21 ticks, met at the 2nd slice end.
    assert_eq!(starvation_wait("o1:starvation_limit=10,max_sleep_avg=20s"), 30);
    // scale=off: 11 ticks whatever nr_running: the 1st slice end.
    assert_eq!(starvation_wait("o1:starvation_limit=10,max_sleep_avg=20s,scale=off"), 15);
    // The 2002 default, 2 s × 2 runnable = 401 ticks: the 27th slice end.
    assert_eq!(starvation_wait("o1:max_sleep_avg=20s"), 405);
}

#[test]
fn expired_prio_guard_expires_a_task_worse_than_the_best_expired() {
    // A nice −5 hog (static 115) expires; the interactive nice 0 task (static 120) is
    // re-inserted in 2002, expired at once with the 2.6 guard.
    let (mut p, pol, _) = hog_expires_behind_interactive("o1:max_sleep_avg=20s", -5);
    run_slice(&pol, &mut p, 0, 0);
    assert_eq!(queued(&pol, 0), Some((0, ArrayKind::Active)));
    let (mut p, pol, _) = hog_expires_behind_interactive("o1:max_sleep_avg=20s,expired_prio_guard=on", -5);
    run_slice(&pol, &mut p, 0, 0);
    assert_eq!(queued(&pol, 0), Some((0, ArrayKind::Expired)));
    // The arrays swap at the next schedule(): both are active again, and task 0's
    // dynamic priority (115) still beats the hog's (120).
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(0));
    assert_eq!(queued(&pol, 1), Some((0, ArrayKind::Active)));
}

#[test]
fn fork_splits_the_slice_and_penalises_the_childs_sleep_avg() {
    let (mut p, pol) = interactive_and_hog("o1");
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Runnable), Some(0));
    // Parent: 15 ticks, sleep_avg 200. Two ticks run: 13 left, sleep_avg 198.
    tick(&pol, &mut p, 0, Some(0));
    tick(&pol, &mut p, 0, Some(0));
    assert_eq!(fork(&pol, &mut p, 0, 2, &nice(0), Some(0)), Vec::<CpuId>::new(), "a child never preempts");
    let (par, child) = (pol.task_view(0), pol.task_view(2));
    assert_eq!((par.time_slice, child.time_slice), (6, 7));
    assert_eq!((par.sleep_avg, child.sleep_avg), (198, 198 * 95 / 100));
    assert_eq!(child.prio, 120 - (188 / 20 - 5));
    assert_eq!(child.queued, Some((0, ArrayKind::Active)));
    // A parent with one tick left gives it to the child and expires at once.
    while pol.task_view(0).time_slice > 1 {
        tick(&pol, &mut p, 0, Some(0));
    }
    assert_eq!(fork(&pol, &mut p, 0, 3, &nice(0), Some(0)), vec![0], "the parent's scheduler_tick resched");
    assert_eq!(pol.task_view(3).time_slice, 1);
    assert_eq!(pol.task_view(0).time_slice, 15, "expired and refilled");
}

#[test]
fn wake_up_goes_to_the_tasks_own_cpu_and_preempts_only_a_worse_task() {
    let (mut p, pol) = build(2, "o1");
    fork(&pol, &mut p, 1, 0, &nice(0), None);
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(0));
    fork(&pol, &mut p, 1, 1, &nice(0), None);
    fork(&pol, &mut p, 1, 2, &nice(-10), None);
    assert_eq!(sched(&pol, &mut p, 1, Some(0), PrevState::Blocked), Some(2));
    assert_eq!(sched(&pol, &mut p, 1, Some(2), PrevState::Blocked), Some(1));
    // Woken from CPU 0, task 2 (prio 115) goes to CPU 1 and preempts task 1 (125).
    p.cpu = 0;
    pol.wake_up(&p, 2, false);
    assert_eq!(p.take_resched(), vec![1]);
    assert_eq!(queued(&pol, 2).map(|q| q.0), Some(1));
    // Task 0 (prio 125, no sleep credited within the same jiffy) does not preempt.
    pol.wake_up(&p, 0, false);
    assert_eq!(p.take_resched(), Vec::<CpuId>::new());
    assert_eq!(queued(&pol, 0).map(|q| q.0), Some(1));
    // Waking a runnable task is a no-op.
    pol.wake_up(&p, 0, true);
    check(&pol);
    assert_eq!(pol.rq_view(1).nr_running, 3);
}

#[test]
fn sched_yield_drops_one_priority_level_until_139() {
    let (mut p, pol) = build(1, "o1");
    fork(&pol, &mut p, 0, 0, &nice(0), None);
    fork(&pol, &mut p, 0, 1, &nice(0), None);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    pol.yield_now(&p, 0);
    assert_eq!(pol.task_view(0).prio, 126);
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    // At 139 it only round-robins.
    let (mut p, pol) = build(1, "o1");
    fork(&pol, &mut p, 0, 0, &nice(19), None);
    fork(&pol, &mut p, 0, 1, &nice(19), None);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    pol.yield_now(&p, 0);
    assert_eq!(pol.task_view(0).prio, 139);
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    // A real-time task keeps its priority.
    let (mut p, pol) = build(1, "o1");
    fork(&pol, &mut p, 0, 0, &TaskParams { class: SchedClass::Fifo, rt_priority: 5, ..TaskParams::default() }, None);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    pol.yield_now(&p, 0);
    assert_eq!(pol.task_view(0).prio, 94);
    check(&pol);
}

/// CPU 0 runs task 0 with tasks 1..n queued behind it; CPU 1 is idle.
fn long_and_idle(n: TaskId) -> (NullPlatform, O1<NullPlatform>) {
    let (mut p, pol) = build(2, "o1");
    for t in 0..n {
        fork(&pol, &mut p, 0, t, &nice(0), None);
    }
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    (p, pol)
}

#[test]
fn an_idle_cpu_pulls_one_cold_task_from_the_longest_queue() {
    let (mut p, pol) = long_and_idle(4);
    // Same jiffy as the tasks' last schedule (fork): cache-hot, nothing moves.
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), None);
    p.set_now(JIFFY);
    // schedule() on the empty CPU runs load_balance(idle): one task, from the tail of
    // the best list (the last queued), never the running one.
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(3));
    assert_eq!((pol.rq_view(0).nr_running, pol.rq_view(1).nr_running), (3, 1));
    assert_eq!(pol.pulled(), 1);
    assert_eq!(pol.tasks().get(3).processor(), 1);
    // A task that may not run on CPU 1 stays.
    let (mut p, pol) = build(2, "o1");
    fork(&pol, &mut p, 0, 0, &nice(0), None);
    fork(&pol, &mut p, 0, 1, &TaskParams { cpus_allowed: CpuMask::single(0), ..nice(0) }, None);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    p.set_now(JIFFY);
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), None);
}

#[test]
fn the_idle_tick_pulls_and_kicks_the_idle_cpu() {
    let (mut p, pol) = long_and_idle(3);
    p.set_now(JIFFY);
    p.cpu = 1;
    p.take_resched();
    pol.balance(&p);
    assert_eq!(p.take_resched(), vec![1]);
    assert_eq!(pol.rq_view(1).nr_running, 1);
    check(&pol);
}

#[test]
fn a_busy_cpu_pulls_the_imbalance_expired_tasks_first_every_busy_rebalance_tick() {
    let (mut p, pol) = long_and_idle(7);
    // CPU 0: task 0 runs its slice out into the expired array; task 1 runs.
    run_slice(&pol, &mut p, 0, 0);
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    // CPU 1 runs a task of its own.
    fork(&pol, &mut p, 1, 7, &nice(0), None);
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(7));
    p.cpu = 1;
    let at = |jiffy: u64, p: &mut NullPlatform| {
        p.set_now(jiffy * JIFFY);
        pol.balance(p);
        check(&pol);
        pol.rq_view(1).nr_running
    };
    // Not a multiple of 25: nothing. The first busy tick only records the lengths
    // (the smoothed remote load is the smaller of now and the previous snapshot, 0).
    assert_eq!(at(30, &mut p), 1);
    assert_eq!(at(50, &mut p), 1);
    // Next one: loads 7 vs 1, imbalance (7−1)/2 = 3 ≥ (7+3)/4 = 2: three tasks,
    // the expired task 0 first.
    assert_eq!(at(75, &mut p), 4);
    assert_eq!(queued(&pol, 0), Some((1, ArrayKind::Active)));
    assert_eq!(pol.pulled(), 3);
    // Now 4 vs 4: balanced.
    assert_eq!(at(100, &mut p), 4);
}

#[test]
fn runqueue_lengths_are_published_per_cpu() {
    let (mut p, pol) = long_and_idle(3);
    assert_eq!(pol.nr_queues(), 2);
    assert_eq!((pol.queue_len(0), pol.queue_len(1)), (3, 0));
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Exited), Some(1));
    assert_eq!(pol.queue_len(0), 2);
    assert!(!pol.tasks().get(0).live());
}

// ------------------------------------------------------------------- eras --------

#[test]
fn each_era_sets_its_kernels_constants_and_options_override_them() {
    let tun = |spec: &str| *build(1, spec).1.tunables();
    let j7 = tun("o1:era=j7");
    // -J7 (sched.h of 25 Jan 2002): 10/300 ms, 2 s, 2 s, ratio 70, delta 3, the
    // PRIO_INTERACTIVE/PRIO_CPU_HOG rule at 20/60 %, the tail-only balance.
    assert_eq!((j7.min_timeslice, j7.max_timeslice, j7.max_sleep_avg, j7.starvation_limit), (1, 30, 200, 200));
    assert_eq!((j7.prio_bonus_ratio, j7.interactive_delta), (70, 3));
    assert_eq!(
        (j7.interactive_rule, j7.prio_interactive_ratio, j7.prio_cpu_hog_ratio),
        (o1::InteractiveRule::J7, 20, 60)
    );
    assert_eq!(
        (j7.balance, j7.busy_rebalance, j7.child_penalty, j7.parent_penalty),
        (o1::BalanceScan::Tail, 25, 95, 100)
    );
    assert!(!j7.expired_prio_guard && !j7.stamp_any && !j7.charge_run && j7.runqueue_credit == 0 && j7.scale);
    // 2.5 (mid 2002) is the default: ratio 25, delta 2, DELTA(p), the list walk.
    let v25 = tun("o1:era=2.5");
    assert_eq!(v25, tun("o1"));
    assert_eq!((v25.prio_bonus_ratio, v25.interactive_delta, v25.max_timeslice), (25, 2, 30));
    assert_eq!((v25.interactive_rule, v25.balance), (o1::InteractiveRule::Delta, o1::BalanceScan::Walk));
    assert!(!v25.expired_prio_guard && !v25.stamp_any && !v25.charge_run && v25.runqueue_credit == 0);
    // 2.6: 200 ms, MAX_SLEEP_AVG = STARVATION_LIMIT = 1 s, HZ/5, and every starvation
    // change on.
    let v26 = tun("o1:era=2.6");
    assert_eq!((v26.max_timeslice, v26.max_sleep_avg, v26.starvation_limit, v26.busy_rebalance), (20, 100, 100, 20));
    assert_eq!((v26.prio_bonus_ratio, v26.interactive_delta), (25, 2));
    assert!(v26.expired_prio_guard && v26.stamp_any && v26.charge_run && v26.runqueue_credit == 30);
    // An option overrides its era's value; the canonical spec names the era and only
    // the options that differ from it.
    let j = tun("o1:era=j7,prio_bonus_ratio=25,balance=walk");
    assert_eq!((j.prio_bonus_ratio, j.interactive_delta, j.balance), (25, 3, o1::BalanceScan::Walk));
    let canon = |s: &str| PolicySpec::parse(s).unwrap().canonical();
    assert_eq!(canon("o1:era=2.5"), "o1");
    assert_eq!(canon("o1:era=j7,prio_bonus_ratio=70,interactive_delta=3"), "o1:era=j7");
    assert_eq!(canon("o1:era=j7,prio_bonus_ratio=25"), "o1:era=j7,prio_bonus_ratio=25");
    assert_eq!(canon("o1:era=2.6,expired_prio_guard=off"), "o1:era=2.6,expired_prio_guard=off");
    assert_eq!(
        canon("o1:prio_bonus_ratio=70,interactive=j7,balance=tail"),
        "o1:prio_bonus_ratio=70,interactive=j7,balance=tail"
    );
    for s in ["o1:era=j7,prio_bonus_ratio=25", "o1:era=2.6,runqueue_credit=0,charge_run=off", "o1:balance=tail"] {
        assert_eq!(canon(&canon(s)), canon(s), "{s}: the canonical spec parses back to itself");
    }
    for bad in ["o1:era=2.4", "o1:balance=head", "o1:interactive=yes", "o1:runqueue_credit=101"] {
        let e = PolicySpec::parse(bad).err().unwrap_or_else(|| panic!("{bad} accepted"));
        let key = bad.split(':').nth(1).unwrap().split('=').next().unwrap();
        assert!(e.to_string().contains(key), "{bad}: {e}");
    }
}

#[test]
fn j7_task_interactive_uses_prio_interactive_and_prio_cpu_hog() {
    let t = *build(1, "o1:era=j7").1.tunables();
    // Bonus 28·sleep_avg/200 − 14: ±14.
    assert_eq!((t.bonus(0), t.bonus(100), t.bonus(200)), (-14, 0, 14));
    let rated = |nice: i8, avg: u64| {
        let sp = nice_to_prio(nice);
        t.interactive(t.effective_prio(sp, avg), sp)
    };
    // nice 0: prio ≤ 117 (bonus ≥ 3, sleep_avg ≥ 122) and < 124.
    assert!(!rated(0, 121) && rated(0, 122));
    // nice −20: prio ≤ PRIO_INTERACTIVE = 108 from bonus −8 (sleep_avg ≥ 43).
    assert!(!rated(-20, 42) && rated(-20, 43));
    // nice 19 never: prio ≥ 125 is not below PRIO_CPU_HOG = 124.
    assert!((0..=200).all(|s| !rated(19, s)));
    // nice 10 (static 130): the delta clause alone would take prio ≤ 127, but
    // PRIO_CPU_HOG wants prio < 124: bonus ≥ 7, sleep_avg ≥ 150.
    assert!(!rated(10, 149) && rated(10, 150));
    // The mid-2002 rule on the same constants differs: nice 10 needs prio ≤ 130 −
    // (10·28/40 + 3) = 120, sleep_avg ≥ 172.
    let d = *build(1, "o1:era=j7,interactive=delta").1.tunables();
    let sp = nice_to_prio(10);
    assert!(!d.interactive(d.effective_prio(sp, 171), sp) && d.interactive(d.effective_prio(sp, 172), sp));
}

#[test]
fn a_forked_child_inherits_the_parents_sleep_avg_share() {
    for era in ["o1:era=j7", "o1", "o1:era=2.6"] {
        let (mut p, pol) = build(1, era);
        let max = pol.tunables().max_sleep_avg;
        // A root that never slept (NetBench's fork=root) passes on nothing.
        fork(&pol, &mut p, 0, 0, &nice(0), None);
        assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
        fork(&pol, &mut p, 0, 1, &nice(0), Some(0));
        assert_eq!(pol.task_view(1).sleep_avg, 0, "{era}");
        // A daemon that slept in accept() for MAX_SLEEP_AVG passes on 95 % of it.
        assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Blocked), Some(1));
        p.set_now(p.clock.load(std::sync::atomic::Ordering::Relaxed) + max * JIFFY);
        assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Blocked), None);
        common::wake(&pol, &mut p, 0, 0);
        assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
        assert_eq!(pol.task_view(0).sleep_avg, max, "{era}");
        fork(&pol, &mut p, 0, 2, &nice(0), Some(0));
        let child = pol.task_view(2);
        assert_eq!(child.sleep_avg, max * 95 / 100, "{era}");
        let t = pol.tunables();
        assert_eq!(child.prio, t.effective_prio(120, max * 95 / 100), "{era}");
        assert!(t.interactive(child.prio, 120), "{era}: the child starts interactive");
        check(&pol);
    }
}

/// CPU 0 runs task 1 with task 0 in its expired array and 2..7 queued in one active
/// list (task 6 at its tail, bound to CPU 0 when `bind_tail`); CPU 1 runs task 7.
/// Returns which tasks CPU 1's busy rebalance tick pulled.
fn busy_pull(spec: &str, bind_tail: bool) -> Vec<TaskId> {
    let (mut p, pol) = build(2, spec);
    for t in 0..7 {
        let params =
            if bind_tail && t == 6 { TaskParams { cpus_allowed: CpuMask::single(0), ..nice(0) } } else { nice(0) };
        fork(&pol, &mut p, 0, t, &params, None);
    }
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    run_slice(&pol, &mut p, 0, 0);
    assert_eq!(queued(&pol, 0), Some((0, ArrayKind::Expired)), "{spec}: a hog without sleep_avg expires");
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    fork(&pol, &mut p, 1, 7, &nice(0), None);
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(7));
    p.cpu = 1;
    let busy = pol.tunables().busy_rebalance;
    for k in [2, 3] {
        p.set_now(k * busy * JIFFY);
        pol.balance(&p);
        check(&pol);
    }
    (0..7).filter(|&t| pol.tasks().get(t).processor() == 1).collect()
}

/// The policy counts the tasks `load_balance` pulled that have run since, and the mean
/// wait from the pull to that run.
#[test]
fn pulled_tasks_report_how_soon_they_run() {
    let (mut p, pol) = build(2, "o1:era=j7");
    for t in 0..4 {
        fork(&pol, &mut p, 0, t, &nice(0), None);
    }
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    p.cpu = 1;
    let stat = |k: &str| pol.stats().into_iter().find(|(n, _)| *n == k).unwrap().1;
    // CPU 1 is idle: its rebalance pulls from CPU 0's queue of three waiting tasks.
    p.set_now(pol.tunables().idle_rebalance.max(1) * JIFFY);
    pol.balance(&p);
    check(&pol);
    let pulled: Vec<TaskId> = (1..4).filter(|&t| pol.tasks().get(t).processor() == 1).collect();
    assert!(!pulled.is_empty() && stat("pulled") == pulled.len() as u64, "{pulled:?}");
    assert_eq!((stat("pulled_then_ran"), stat("pull_to_run_mean_ns")), (0, 0));
    // The first of them runs on CPU 1 two ticks after the pull.
    let pulled_at = p.clock.load(std::sync::atomic::Ordering::Relaxed);
    p.set_now(pulled_at / JIFFY * JIFFY + 2 * JIFFY);
    let ran = sched(&pol, &mut p, 1, None, PrevState::Runnable).expect("CPU 1 runs a pulled task");
    assert!(pulled.contains(&ran));
    let now = p.clock.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!((stat("pulled_then_ran"), stat("pull_to_run_mean_ns")), (1, now - pulled_at));
}

#[test]
fn the_early_2002_load_balance_pulls_one_task_per_array_from_list_tails() {
    // Loads 7 vs 1: imbalance 3. The July 2002 walk pulls three: the expired task,
    // then the active list from its tail.
    assert_eq!(busy_pull("o1", false), [0, 5, 6]);
    // Before, only each list's tail is looked at and one task per array is taken.
    assert_eq!(busy_pull("o1:era=j7", false), [0, 6]);
    assert_eq!(busy_pull("o1:balance=tail", false), [0, 6]);
    // A tail that may not move hides the rest of its list from the early scan.
    assert_eq!(busy_pull("o1:era=j7", true), [0]);
    assert_eq!(busy_pull("o1", true), [0, 4, 5]);
}

#[test]
fn task_stats_report_sleep_avg_and_the_longest_wait_with_its_array() {
    let (mut p, pol) = build(1, "o1");
    fork(&pol, &mut p, 0, 0, &nice(0), None);
    fork(&pol, &mut p, 0, 1, &nice(0), None);
    p.set_now(3 * JIFFY);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    let get = |t: TaskId, k: &str| pol.task_stats(t).into_iter().find(|(n, _)| *n == k).unwrap().1;
    assert_eq!(get(0, "first_wait_ns"), 3 * JIFFY);
    // Task 0 runs its slice out into the expired array and waits there while task 1
    // runs its slice (then task 0 runs again after the swap).
    let n = run_slice(&pol, &mut p, 0, 0);
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    assert_eq!(get(1, "first_wait_ns"), (3 + n) * JIFFY);
    let m = run_slice(&pol, &mut p, 0, 1);
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Runnable), Some(0));
    assert_eq!((get(0, "max_wait_ns"), get(0, "max_wait_expired")), (m * JIFFY, 1));
    assert_eq!((get(1, "max_wait_ns"), get(1, "max_wait_expired")), ((3 + n) * JIFFY, 0));
    assert_eq!(get(0, "sleep_avg_ticks"), pol.task_view(0).sleep_avg);
    // The time waited in all, by the array each wait began in: task 0's fork wait and
    // its wait in the expired array; task 1's one wait, in the active array.
    assert_eq!((get(0, "wait_active_ns"), get(0, "wait_expired_ns")), (3 * JIFFY, m * JIFFY));
    assert_eq!((get(1, "wait_active_ns"), get(1, "wait_expired_ns")), ((3 + n) * JIFFY, 0));
    // The sleep_avg each brought to its first run: forked by no one who slept, none.
    assert_eq!((get(0, "first_sleep_avg_ticks"), get(1, "first_sleep_avg_ticks")), (0, 0));
}

#[test]
fn era_2_6_charges_run_time_and_credits_run_queue_waiting() {
    let (mut p, pol) = build(1, "o1:era=2.6");
    let now = |p: &NullPlatform| p.clock.load(std::sync::atomic::Ordering::Relaxed);
    fork(&pol, &mut p, 0, 0, &nice(0), None);
    fork(&pol, &mut p, 0, 1, &nice(0), None);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    // Task 0 sleeps 50 ticks: sleep_avg 50.
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Blocked), Some(1));
    p.set_now(50 * JIFFY);
    common::wake(&pol, &mut p, 0, 0);
    assert_eq!(pol.task_view(0).sleep_avg, 50);
    // It waits 10 ticks behind task 1; when picked, ON_RUNQUEUE_WEIGHT's 38/128 of
    // the wait (29.7 ms) counts as sleep: 2 ticks, the remainder is kept.
    p.set_now(60 * JIFFY);
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Blocked), Some(0));
    assert_eq!(pol.task_view(0).sleep_avg, 52);
    // It runs 5 ticks: no per-tick decrement; the run time is charged at switch-out.
    for _ in 0..5 {
        tick(&pol, &mut p, 0, Some(0));
    }
    assert_eq!(pol.task_view(0).sleep_avg, 52);
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Blocked), None);
    assert_eq!(pol.task_view(0).sleep_avg, 47);
    // Woken at once, it waits 20 ticks behind task 1: 59.4 ms + the 9.7 ms kept.
    common::wake(&pol, &mut p, 0, 1);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(1));
    common::wake(&pol, &mut p, 0, 0);
    p.set_now(now(&p) + 20 * JIFFY);
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Blocked), Some(0));
    assert_eq!(pol.task_view(0).sleep_avg, 53);
    // 2002 eras: no credit, one tick of sleep_avg per tick run.
    let (mut p, pol) = build(1, "o1");
    fork(&pol, &mut p, 0, 0, &nice(0), None);
    p.set_now(50 * JIFFY);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Blocked), None);
    p.set_now(100 * JIFFY);
    common::wake(&pol, &mut p, 0, 0);
    p.set_now(110 * JIFFY);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    assert_eq!(pol.task_view(0).sleep_avg, 50);
    tick(&pol, &mut p, 0, Some(0));
    assert_eq!(pol.task_view(0).sleep_avg, 49);
    check(&pol);
}
