//! `cfs`, the virtual-runtime fair scheduler, on the free `NullPlatform` with a
//! hand-set clock: weights and shares, vruntime arithmetic and ordering, placement,
//! wake-up and tick preemption, yield, sleeper credit, idle and periodic balancing,
//! `cpus_allowed`.

mod common;
use common::{check, sched, wake};
use schedlab_core::cpu::CpuId;
use schedlab_core::policies::cfs::{self, calc_delta_fair, nice_to_weight, Cfs, CfsConfig, FAIR_EPOCH};
use schedlab_core::{BuildEnv, CpuMask, NullPlatform, Policy, PolicySpec, PrevState, TaskId, TaskParams, Topology};

const HZ: u32 = 1000;
const MS: u64 = 1_000_000;
const CAP: usize = 32;

fn build(ncpus: usize, spec: &str) -> (NullPlatform, Cfs<NullPlatform>) {
    let cfg = *PolicySpec::parse(spec).unwrap().config::<cfs::Kind>().unwrap();
    let p = NullPlatform::new(0);
    let pol = Cfs::new(&p, &BuildEnv { topo: &Topology::smp(ncpus), capacity: CAP, hz: HZ }, &cfg).unwrap();
    (p, pol)
}

fn nice(n: i8) -> TaskParams {
    TaskParams { nice: n, ..TaskParams::default() }
}

/// Fork `id` on `cpu` and wake it (`sync`: on the forking CPU, no placement);
/// returns the reschedule requests.
fn fork(
    pol: &Cfs<NullPlatform>,
    p: &mut NullPlatform,
    cpu: CpuId,
    id: TaskId,
    params: &TaskParams,
    sync: bool,
) -> Vec<CpuId> {
    common::fork_wake(pol, p, cpu, id, params, None, sync)
}

fn now(p: &NullPlatform) -> u64 {
    p.clock.load(std::sync::atomic::Ordering::Relaxed)
}

fn advance(p: &NullPlatform, ns: u64) {
    p.set_now(now(p) + ns);
}

/// Run CPU 0 for `total` ns in 1 ms ticks, rescheduling when a tick asks; returns the
/// task running at the end.
fn run(pol: &Cfs<NullPlatform>, p: &mut NullPlatform, mut curr: Option<TaskId>, total: u64) -> Option<TaskId> {
    p.cpu = 0;
    for _ in 0..total / MS {
        advance(p, MS);
        if pol.tick(p, curr) {
            curr = sched(pol, p, 0, curr, PrevState::Runnable);
        }
    }
    curr
}

#[test]
fn weight_table_and_arithmetic() {
    assert_eq!(nice_to_weight(0), 1024);
    assert_eq!(nice_to_weight(-20), 88761);
    assert_eq!(nice_to_weight(19), 15);
    assert_eq!(nice_to_weight(5), 335);
    assert_eq!(nice_to_weight(100), 15, "clamped");
    // Each nice step is ~1.25×.
    for n in -20..19i8 {
        let r = nice_to_weight(n) as f64 / nice_to_weight(n + 1) as f64;
        assert!((1.15..1.35).contains(&r), "nice {n}: ratio {r}");
    }
    assert_eq!(calc_delta_fair(MS, 1024), MS);
    assert_eq!(calc_delta_fair(335 * 1000, 335), 1024 * 1000);
    assert_eq!(calc_delta_fair(MS, 2048), MS / 2);

    let (_, pol) = build(1, "cfs");
    assert_eq!(*pol.config(), CfsConfig::default());
    assert_eq!(pol.slice(1024, 1024), 6 * MS, "alone: the whole latency");
    assert_eq!(pol.slice(1024, 2048), 3 * MS);
    assert_eq!(pol.slice(1024, 10 * 1024), 750_000, "floored at min_granularity");
    assert_eq!(pol.slice(1024, 1024 + 335), 6 * MS * 1024 / 1359);
}

#[test]
fn weights_give_proportional_cpu_share() {
    for (a, b) in [(0i8, 5i8), (0, 0), (-5, 0), (0, 19)] {
        let (mut p, pol) = build(1, "cfs");
        fork(&pol, &mut p, 0, 0, &nice(a), false);
        fork(&pol, &mut p, 0, 1, &nice(b), false);
        let curr = sched(&pol, &mut p, 0, None, PrevState::Runnable);
        run(&pol, &mut p, curr, 20_000 * MS);
        let (ea, eb) = (pol.task_view(0).sum_exec as f64, pol.task_view(1).sum_exec as f64);
        let want = nice_to_weight(a) as f64 / nice_to_weight(b) as f64;
        let got = ea / eb;
        assert!((got / want - 1.0).abs() < 0.05, "nice {a} vs {b}: share {got:.3}, weights {want:.3}");
        assert_eq!(ea + eb, 20_000.0 * MS as f64, "the CPU was never idle");
        // Fair in virtual time: the two vruntimes stay within a slice or so.
        let (va, vb) = (pol.task_view(0).vruntime, pol.task_view(1).vruntime);
        assert!(va.abs_diff(vb) < 20 * MS, "vruntimes {va} {vb}");
    }
}

/// Run time is the task clock of the queue's CPU (`Platform::task_clock`): time the host
/// stole from that CPU is not charged, even when the charge is made from another CPU
/// (a wake-up onto the queue); a stall noticed late is taken from the next charge.
#[test]
fn run_time_is_the_task_clock_without_steal() {
    use std::sync::atomic::Ordering::Relaxed;
    let (mut p, pol) = build(2, "cfs");
    fork(&pol, &mut p, 0, 0, &nice(0), true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    // 5 ms pass, 3 of them stolen from CPU 0: a tick there charges 2 ms.
    advance(&p, 5 * MS);
    p.steal0.store(3 * MS, Relaxed);
    assert!(!pol.tick(&p, Some(0)));
    assert_eq!(pol.task_view(0).sum_exec, 2 * MS);
    // CPU 1 wakes a task onto CPU 0's queue (sync: no placement) 1 ms later, nothing
    // stolen meanwhile: CPU 0's task clock, not CPU 1's, charges 1 ms.
    advance(&p, MS);
    p.cpu = 1;
    let t1 = TaskParams { cpus_allowed: CpuMask::single(0), ..nice(0) };
    fork(&pol, &mut p, 1, 1, &t1, true);
    assert_eq!(pol.task_view(1).queued, Some(0));
    assert_eq!(pol.task_view(0).sum_exec, 3 * MS);
    // A 2 ms stall counted only after a charge had seen it as run time: the queue clock
    // does not run backwards, and the next 2 ms are not charged.
    advance(&p, 2 * MS);
    p.cpu = 0;
    assert!(!pol.tick(&p, Some(0)));
    assert_eq!(pol.task_view(0).sum_exec, 5 * MS);
    p.steal0.store(5 * MS, Relaxed);
    advance(&p, MS);
    pol.tick(&p, Some(0));
    assert_eq!(pol.task_view(0).sum_exec, 5 * MS, "the late stall is taken back first");
    advance(&p, 2 * MS);
    pol.tick(&p, Some(0));
    assert_eq!(pol.task_view(0).sum_exec, 6 * MS);
}

#[test]
fn vruntime_advances_by_weight_and_orders_the_queue() {
    let (mut p, pol) = build(1, "cfs");
    fork(&pol, &mut p, 0, 0, &nice(5), false);
    // START_DEBIT: alone, the new task starts one slice (6 ms virtual at nice 0 weight
    // scaling) after the queue's initial min_vruntime (FAIR_EPOCH).
    assert_eq!(pol.task_view(0).vruntime, FAIR_EPOCH + calc_delta_fair(6 * MS, 335));
    let v0 = pol.task_view(0).vruntime;
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    advance(&p, 335_000);
    assert!(!pol.tick(&p, Some(0)));
    assert_eq!(pol.task_view(0).vruntime, v0 + 1_024_000, "335 µs at weight 335 is 1024 µs virtual");
    assert_eq!(pol.task_view(0).sum_exec, 335_000);
    assert_eq!(pol.rq_view(0).min_vruntime, v0 + 1_024_000);
    // Three more tasks; the queue is ordered by vruntime, ties by id.
    for id in 1..4 {
        fork(&pol, &mut p, 0, id, &nice(0), true);
    }
    let rq = pol.rq_view(0);
    let vs: Vec<u64> = rq.order.iter().map(|&t| pol.task_view(t).vruntime).collect();
    assert!(vs.windows(2).all(|w| w[0] <= w[1]), "{rq:?} {vs:?}");
    assert_eq!(rq.nr_running, 4);
    assert_eq!(rq.load, 335 + 3 * 1024);
    // Picks follow the order: each pick is the leftmost.
    let mut prev = Some(0);
    for _ in 0..6 {
        let left = pol.rq_view(0).order.clone();
        let next = sched(&pol, &mut p, 0, prev, PrevState::Runnable);
        let leftmost = {
            // prev went back in before the pick.
            let mut all: Vec<(u64, TaskId)> = left.iter().map(|&t| (pol.task_view(t).vruntime, t)).collect();
            if let Some(t) = prev {
                all.push((pol.task_view(t).vruntime, t));
            }
            all.into_iter().min().map(|(_, t)| t)
        };
        assert_eq!(next, leftmost);
        advance(&p, 2 * MS);
        prev = next;
    }
    // min_vruntime never decreases.
    let m = pol.rq_view(0).min_vruntime;
    sched(&pol, &mut p, 0, prev, PrevState::Blocked);
    assert!(pol.rq_view(0).min_vruntime >= m);
}

/// A long sleeper comes back at `min_vruntime − latency/2` (never further left); a
/// short one keeps its own vruntime.
#[test]
fn sleeper_credit_is_bounded() {
    let (mut p, pol) = build(1, "cfs");
    fork(&pol, &mut p, 0, 0, &nice(0), false);
    fork(&pol, &mut p, 0, 1, &nice(0), false);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    // 0 blocks, 1 runs and blocks, 0 comes back and runs alone for a second.
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Blocked), Some(1));
    advance(&p, MS);
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Blocked), None);
    let v1 = pol.task_view(1).vruntime;
    wake(&pol, &mut p, 0, 0);
    let curr = sched(&pol, &mut p, 0, None, PrevState::Runnable);
    assert_eq!(curr, Some(0));
    let curr = run(&pol, &mut p, curr, 1000 * MS);
    assert_eq!(curr, Some(0));
    assert_eq!(pol.task_view(1).vruntime, v1, "a sleeper's vruntime stands still");
    let rs = wake(&pol, &mut p, 0, 1);
    let m = pol.rq_view(0).min_vruntime;
    assert_eq!(pol.task_view(1).vruntime, m - 3 * MS, "credit: half the 6 ms latency");
    assert_eq!(rs, vec![0], "3 ms behind the runner: wake-up preemption");
    assert_eq!(sched(&pol, &mut p, 0, curr, PrevState::Runnable), Some(1));
    // 1 runs 2 ms, sleeps 1 ms and comes back with its own (larger) vruntime.
    advance(&p, 2 * MS);
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Blocked), Some(0));
    let v1 = pol.task_view(1).vruntime;
    advance(&p, MS);
    wake(&pol, &mut p, 0, 1);
    assert_eq!(pol.task_view(1).vruntime, v1);
    assert!(v1 > pol.rq_view(0).min_vruntime - 3 * MS);
}

/// The woken task preempts only if the runner is more than `wakeup_granularity`
/// ahead: the sleeper credit (latency/2) sets the gap exactly.
#[test]
fn wakeup_preemption_threshold() {
    for (spec, preempts) in [
        ("cfs:latency=2ms,wakeup_granularity=1ms", false),
        ("cfs:latency=2000002ns,wakeup_granularity=1ms", true),
        ("cfs:latency=10ms,wakeup_granularity=4999999ns", true),
        ("cfs:latency=10ms,wakeup_granularity=5ms", false),
    ] {
        let (mut p, pol) = build(1, spec);
        fork(&pol, &mut p, 0, 0, &nice(0), false);
        fork(&pol, &mut p, 0, 1, &nice(0), false);
        assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
        assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Blocked), Some(1));
        assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Blocked), None);
        wake(&pol, &mut p, 0, 0);
        let curr = sched(&pol, &mut p, 0, None, PrevState::Runnable);
        let curr = run(&pol, &mut p, curr, 500 * MS);
        assert_eq!(curr, Some(0));
        let before = pol.wakeup_preemptions();
        let rs = wake(&pol, &mut p, 0, 1);
        let gap = pol.task_view(0).vruntime - pol.task_view(1).vruntime;
        assert_eq!(gap, pol.config().latency / 2, "{spec}");
        assert_eq!(rs == vec![0], preempts, "{spec}: gap {gap}, requests {rs:?}");
        assert_eq!(pol.wakeup_preemptions() - before, preempts as u64);
    }
    // A task woken onto an idle CPU kicks it.
    let (mut p, pol) = build(2, "cfs");
    assert_eq!(fork(&pol, &mut p, 1, 0, &nice(0), false), vec![1]);
}

#[test]
fn tick_preempts_after_the_slice_when_another_is_further_left() {
    let (mut p, pol) = build(1, "cfs");
    fork(&pol, &mut p, 0, 0, &nice(0), false);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    // Alone: never preempted.
    for _ in 0..50 {
        advance(&p, MS);
        assert!(!pol.tick(&p, Some(0)));
    }
    // A second task (START_DEBIT places it one 3 ms slice right of min_vruntime): the
    // runner keeps the CPU until it has run its slice (3 ms) and passed the newcomer.
    fork(&pol, &mut p, 0, 1, &nice(0), false);
    let start = now(&p);
    let mut ticks = 0;
    loop {
        advance(&p, MS);
        ticks += 1;
        if pol.tick(&p, Some(0)) {
            break;
        }
        assert!(ticks < 100);
    }
    let ran = now(&p) - start;
    assert!(ran >= 3 * MS, "preempted after {ran} ns, before its slice");
    assert!(pol.task_view(0).vruntime > pol.task_view(1).vruntime);
    assert!(ran <= 5 * MS, "ran {ran} ns");
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
}

#[test]
fn yield_skips_the_yielder_once() {
    let (mut p, pol) = build(1, "cfs");
    fork(&pol, &mut p, 0, 0, &nice(0), false);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    // Alone: yield is a no-op, no reschedule.
    p.take_resched();
    pol.yield_now(&p, 0);
    assert!(p.take_resched().is_empty());
    assert_eq!(pol.rq_view(0).skip, None);
    fork(&pol, &mut p, 0, 1, &nice(0), false);
    advance(&p, MS);
    assert!(pol.task_view(0).vruntime < pol.task_view(1).vruntime, "0 is still leftmost");
    pol.yield_now(&p, 0);
    assert_eq!(p.take_resched(), vec![0], "yield asks for schedule() on its own CPU");
    let v0 = pol.task_view(0).vruntime;
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1), "the yielder is skipped");
    assert_eq!(pol.task_view(0).vruntime, v0 + MS, "yield leaves vruntime alone (the 1 ms it ran is charged)");
    assert_eq!(pol.rq_view(0).skip, None, "once");
    assert_eq!(sched(&pol, &mut p, 0, Some(1), PrevState::Runnable), Some(0), "then the leftmost again");
}

/// `yield=tail` (2.6.23's compat_yield): the yielder goes behind the rightmost, so
/// yielding tasks take turns in vruntime order however far apart they started.
#[test]
fn yield_tail_goes_behind_the_rightmost() {
    let (mut p, pol) = build(1, "cfs:yield=tail");
    for id in 0..4 {
        fork(&pol, &mut p, 0, id, &nice(0), false);
    }
    let mut curr = sched(&pol, &mut p, 0, None, PrevState::Runnable);
    let mut seen = Vec::new();
    for _ in 0..8 {
        let t = curr.unwrap();
        seen.push(t);
        advance(&p, 1_000);
        pol.yield_now(&p, t);
        assert_eq!(p.take_resched(), vec![0]);
        let right = pol.rq_view(0).order.last().copied().unwrap();
        curr = sched(&pol, &mut p, 0, curr, PrevState::Runnable);
        assert_eq!(pol.rq_view(0).order.last().copied(), Some(t), "the yielder is rightmost, behind {right}");
    }
    // START_DEBIT with a growing load places later children further left: 0, 3, 2, 1.
    assert_eq!(seen, [0, 3, 2, 1, 0, 3, 2, 1]);
    // The skip buddy (default) only lets the next one run: with two tasks far left of
    // the others, they take turns between themselves.
    let (mut p, pol) = build(1, "cfs");
    for id in 0..4 {
        fork(&pol, &mut p, 0, id, &nice(0), false);
    }
    let mut curr = sched(&pol, &mut p, 0, None, PrevState::Runnable);
    let mut seen = Vec::new();
    for _ in 0..8 {
        let t = curr.unwrap();
        seen.push(t);
        advance(&p, 1_000);
        pol.yield_now(&p, t);
        curr = sched(&pol, &mut p, 0, curr, PrevState::Runnable);
    }
    assert_eq!(seen, [0, 3, 0, 3, 0, 3, 0, 3]);
}

#[test]
fn wake_placement_prefers_prev_then_idle_then_prev() {
    let (mut p, pol) = build(4, "cfs");
    // Forked on CPU 2 (idle): stays there.
    fork(&pol, &mut p, 2, 0, &nice(0), false);
    assert_eq!(pol.task_view(0).queued, Some(2));
    // CPU 2 is busy now: the next fork goes to the next idle CPU after 2.
    fork(&pol, &mut p, 2, 1, &nice(0), false);
    assert_eq!(pol.task_view(1).queued, Some(3));
    fork(&pol, &mut p, 2, 2, &nice(0), false);
    assert_eq!(pol.task_view(2).queued, Some(0));
    fork(&pol, &mut p, 2, 3, &nice(0), false);
    assert_eq!(pol.task_view(3).queued, Some(1));
    // No idle CPU: the previous one.
    fork(&pol, &mut p, 2, 4, &nice(0), false);
    assert_eq!(pol.task_view(4).queued, Some(2));
    // sync: no placement.
    fork(&pol, &mut p, 1, 5, &nice(0), true);
    assert_eq!(pol.task_view(5).queued, Some(1));
    // A task allowed only on CPU 3 goes there, whatever the forking CPU.
    let pinned = TaskParams { cpus_allowed: CpuMask::single(3), ..TaskParams::default() };
    fork(&pol, &mut p, 0, 6, &pinned, false);
    assert_eq!(pol.task_view(6).queued, Some(3));
    fork(&pol, &mut p, 0, 7, &pinned, true);
    assert_eq!(pol.task_view(7).queued, Some(3));
}

/// A woken task moving to another CPU keeps its lag relative to `min_vruntime`.
#[test]
fn idle_pull_moves_one_task_and_renormalises_its_vruntime() {
    let (mut p, pol) = build(2, "cfs");
    for id in 0..3 {
        fork(&pol, &mut p, 0, id, &nice(0), true);
    }
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    let curr = run(&pol, &mut p, Some(0), 200 * MS);
    let src_min = pol.rq_view(0).min_vruntime;
    let left = pol.rq_view(0).order[0];
    let v = pol.task_view(left).vruntime;
    let dst_min = pol.rq_view(1).min_vruntime;
    assert_eq!(dst_min, FAIR_EPOCH);
    // CPU 1's queue is empty: schedule() pulls the leftmost waiting task.
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(left));
    assert_eq!(pol.pulled(), 1);
    assert_eq!(pol.task_view(left).vruntime, v - src_min + dst_min);
    assert_eq!(pol.rq_view(0).nr_running, 2);
    assert_eq!(pol.rq_view(1).nr_running, 1);
    // CPU 0 has one running, one waiting: the waiting one can be pulled; then, with
    // only the running one left, nothing.
    let other = pol.rq_view(0).order[0];
    assert_ne!(Some(other), curr);
    assert_eq!(sched(&pol, &mut p, 1, Some(left), PrevState::Blocked), Some(other));
    assert_eq!(sched(&pol, &mut p, 1, Some(other), PrevState::Blocked), None);
}

#[test]
fn periodic_balance_evens_the_weighted_load() {
    let (mut p, pol) = build(2, "cfs");
    for id in 0..4 {
        fork(&pol, &mut p, 0, id, &nice(0), true);
    }
    sched(&pol, &mut p, 0, None, PrevState::Runnable);
    assert_eq!(pol.rq_view(0).load, 4096);
    // CPU 1's tick, once its domain's interval (and the tasks' cache-hot time) has
    // passed: an idle CPU against four tasks → pull half the difference in tasks.
    p.cpu = 1;
    p.take_resched();
    pol.balance(&p);
    assert_eq!(pol.pulled(), 0, "the first balance waits for the interval");
    advance(&p, 20 * MS);
    pol.balance(&p);
    check(&pol);
    assert_eq!((pol.rq_view(0).load, pol.rq_view(1).load), (2048, 2048));
    assert_eq!(pol.pulled(), 2);
    let mut kicked = p.take_resched();
    kicked.dedup();
    assert_eq!(kicked, vec![1], "the idle puller is kicked");
    // Balanced: later passes move nothing, from either side.
    for _ in 0..4 {
        advance(&p, 100 * MS);
        p.cpu = 1;
        pol.balance(&p);
        p.cpu = 0;
        pol.balance(&p);
    }
    assert_eq!(pol.pulled(), 2);
    // Weighted, not counted: one nice −5 task (3121) against three nice 0 ones.
    let (mut p, pol) = build(2, "cfs");
    fork(&pol, &mut p, 0, 0, &nice(-5), true);
    for id in 1..4 {
        fork(&pol, &mut p, 0, id, &nice(0), true);
    }
    p.cpu = 1;
    advance(&p, 20 * MS);
    pol.balance(&p);
    check(&pol);
    let (l0, l1) = (pol.rq_view(0).load, pol.rq_view(1).load);
    assert_eq!(l0 + l1, 3121 + 3072);
    assert!(l0.abs_diff(l1) <= 3121, "{l0} {l1}");
    // imbalance_pct: 3 against 2 tasks is within 150 %, so nothing moves.
    let (mut p, pol) = build(2, "cfs:imbalance_pct=150");
    for id in 0..3 {
        fork(&pol, &mut p, 0, id, &nice(0), true);
    }
    for id in 3..5 {
        fork(&pol, &mut p, 1, id, &nice(0), true);
    }
    p.cpu = 1;
    advance(&p, 20 * MS);
    pol.balance(&p);
    assert_eq!(pol.pulled(), 0);
}

#[test]
fn balancing_respects_cpus_allowed() {
    let (mut p, pol) = build(2, "cfs");
    let pinned = TaskParams { cpus_allowed: CpuMask::single(0), ..TaskParams::default() };
    for id in 0..4 {
        fork(&pol, &mut p, 0, id, &pinned, false);
    }
    assert_eq!(pol.rq_view(0).nr_running, 4, "no idle CPU they may use but their own");
    // Neither newidle nor the periodic balance moves them.
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), None);
    p.cpu = 1;
    advance(&p, 20 * MS);
    pol.balance(&p);
    check(&pol);
    assert_eq!(pol.pulled(), 0);
    // An unpinned task among them is the one that moves (once it is not cache hot).
    fork(&pol, &mut p, 0, 4, &nice(0), true);
    advance(&p, MS);
    assert_eq!(sched(&pol, &mut p, 1, None, PrevState::Runnable), Some(4));
    assert_eq!(pol.pulled(), 1);
}

#[test]
fn running_on_every_cpu_once_under_the_registry_spec() {
    // Built through the registry like the engines do.
    let p = NullPlatform::new(0);
    let spec = PolicySpec::parse("cfs:latency=4ms").unwrap();
    let pol =
        schedlab_core::PolicySource::build(&spec, &p, &BuildEnv { topo: &Topology::smp(3), capacity: CAP, hz: HZ })
            .unwrap();
    assert_eq!(pol.name(), "cfs");
    assert_eq!(pol.nr_queues(), 3);
    let mut p = NullPlatform::new(0);
    for id in 0..6 {
        p.cpu = 0;
        pol.task_new(&p, id, &TaskParams::default(), None);
        pol.wake_up(&p, id, false);
    }
    let mut running = Vec::new();
    for cpu in 0..3 {
        p.on(cpu);
        running.push(pol.schedule(&p, None, PrevState::Runnable).unwrap());
    }
    running.sort_unstable();
    running.dedup();
    assert_eq!(running.len(), 3);
    assert_eq!((0..3).map(|q| pol.queue_len(q)).sum::<usize>(), 6);
    pol.check_invariants().unwrap();
}

/// Real-time tasks run ahead of every fair task (the `sched_rt` class above
/// `sched_fair`): a woken one preempts a fair task at once, a fair one never preempts
/// it, ticks do not slice it, and fair virtual time is not dragged by it.
#[test]
fn real_time_tasks_run_ahead_of_fair_ones() {
    use schedlab_core::SchedClass;
    let fifo = TaskParams { class: SchedClass::Fifo, rt_priority: 50, ..TaskParams::default() };
    let (mut p, pol) = build(1, "cfs");
    fork(&pol, &mut p, 0, 0, &nice(-20), true);
    assert_eq!(sched(&pol, &mut p, 0, None, PrevState::Runnable), Some(0));
    let curr = run(&pol, &mut p, Some(0), 5 * MS);
    assert_eq!(curr, Some(0));
    let min_before = pol.rq_view(0).min_vruntime;
    // The real-time task is woken on the busy CPU: it asks for the CPU at once, even
    // against a nice −20 task that has barely run.
    assert_eq!(fork(&pol, &mut p, 0, 1, &fifo, true), vec![0]);
    assert_eq!(sched(&pol, &mut p, 0, Some(0), PrevState::Runnable), Some(1));
    // Ticks do not slice it; a fair wake-up does not preempt it.
    let curr = run(&pol, &mut p, Some(1), 50 * MS);
    assert_eq!(curr, Some(1));
    assert!(fork(&pol, &mut p, 0, 2, &nice(-20), true).is_empty());
    assert!(pol.rq_view(0).min_vruntime >= min_before, "min_vruntime never goes back");
    // When it blocks, the fair tasks run again.
    let next = sched(&pol, &mut p, 0, Some(1), PrevState::Blocked);
    assert!(matches!(next, Some(0) | Some(2)), "{next:?}");
}
