//! `eevdf` on the free `NullPlatform` with a hand-set clock: the slice and its CPU
//! scaling, deadlines, the pick (eligible, earliest deadline), `V`, lag across sleep,
//! delayed dequeue, run-to-parity and wake-up preemption, and a wait bound among CPU
//! hogs.

mod common;
use common::{check, sched, wake};
use proptest::prelude::*;
use schedlab_core::cpu::CpuId;
use schedlab_core::policies::cfs::{calc_delta_fair, nice_to_weight};
use schedlab_core::policies::eevdf::{self, Eevdf, EevdfConfig, EntityView, Scaling};
use schedlab_core::{BuildEnv, NullPlatform, Policy, PolicySpec, PrevState, TaskId, TaskParams, Topology};

const HZ: u32 = 1000;
const MS: u64 = 1_000_000;
const CAP: usize = 32;

fn build(ncpus: usize, spec: &str) -> (NullPlatform, Eevdf<NullPlatform>) {
    let cfg = *PolicySpec::parse(spec).unwrap().config::<eevdf::Kind>().unwrap();
    let p = NullPlatform::new(0);
    let pol = Eevdf::new(&p, &BuildEnv { topo: &Topology::smp(ncpus), capacity: CAP, hz: HZ }, &cfg).unwrap();
    (p, pol)
}

fn nice(n: i8) -> TaskParams {
    TaskParams { nice: n, ..TaskParams::default() }
}

fn now(p: &NullPlatform) -> u64 {
    p.clock.load(std::sync::atomic::Ordering::Relaxed)
}

fn advance(p: &NullPlatform, ns: u64) {
    p.set_now(now(p) + ns);
}

fn fork(pol: &Eevdf<NullPlatform>, p: &mut NullPlatform, cpu: CpuId, id: TaskId, params: &TaskParams) -> Vec<CpuId> {
    common::fork_wake(pol, p, cpu, id, params, None, false)
}

/// Is `e` eligible on a queue whose fair entities (the running one included) sum to
/// `sum` = Σ vᵢ·wᵢ over `load` = Σ wᵢ? Recomputed here from the definition.
fn eligible(sum: u128, load: u64, e: &EntityView) -> bool {
    load == 0 || sum >= e.vruntime as u128 * load as u128
}

/// The running task of `cpu` right after a pick: eligible, and (`earliest`) with a
/// deadline no later than any eligible waiting entity's.
fn check_pick(pol: &Eevdf<NullPlatform>, cpu: CpuId, earliest: bool) -> Result<(), String> {
    let rq = pol.rq_view(cpu);
    let Some(c) = rq.curr else { return Ok(()) };
    let ce = pol.entity_view(c);
    if !eligible(rq.avg_sum, rq.avg_load, &ce) {
        return Err(format!("cpu {cpu} picked {c} (v {}), not eligible: V {}", ce.vruntime, rq.avg_vruntime));
    }
    if earliest {
        for &t in &rq.order {
            let e = pol.entity_view(t);
            if eligible(rq.avg_sum, rq.avg_load, &e) && e.deadline < ce.deadline {
                return Err(format!(
                    "cpu {cpu} picked {c} (deadline {}) over eligible {t} (deadline {})",
                    ce.deadline, e.deadline
                ));
            }
        }
    }
    Ok(())
}

/// `V` lies within the queue's vruntimes (weighted average), and is what the sums say.
fn check_avg(pol: &Eevdf<NullPlatform>, cpu: CpuId) -> Result<(), String> {
    let rq = pol.rq_view(cpu);
    let mut vs: Vec<u64> = rq.order.iter().map(|&t| pol.entity_view(t).vruntime).collect();
    let (mut sum, mut load) = (0u128, 0u64);
    for &t in rq.order.iter().chain(rq.curr.iter()) {
        let e = pol.entity_view(t);
        sum += e.vruntime as u128 * e.weight as u128;
        load += e.weight;
    }
    if let Some(c) = rq.curr {
        vs.push(pol.entity_view(c).vruntime);
    }
    if (sum, load) != (rq.avg_sum, rq.avg_load) {
        return Err(format!("cpu {cpu}: sums {sum}/{load} but the queue keeps {}/{}", rq.avg_sum, rq.avg_load));
    }
    if load > 0 {
        let (lo, hi) = (*vs.iter().min().unwrap(), *vs.iter().max().unwrap());
        if rq.avg_vruntime != (sum / load as u128) as u64 || rq.avg_vruntime < lo || rq.avg_vruntime > hi {
            return Err(format!(
                "cpu {cpu}: V {} outside [{lo}, {hi}] or not the floor of the average",
                rq.avg_vruntime
            ));
        }
    }
    Ok(())
}

#[test]
fn slice_scales_with_the_cpu_count_as_the_kernel() {
    // 1 + ilog2(min(ncpus, 8)) × 0.75 ms.
    for (n, f) in [(1, 1), (2, 2), (3, 2), (4, 3), (7, 3), (8, 4), (16, 4)] {
        let (_, pol) = build(n, "eevdf");
        assert_eq!(pol.slice(), 750_000 * f, "{n} CPUs");
        assert_eq!(Scaling::Log.factor(n), f);
    }
    assert_eq!(build(8, "eevdf:scaling=none").1.slice(), 750_000);
    assert_eq!(build(8, "eevdf:scaling=linear,base_slice=700us").1.slice(), 8 * 700_000);
    assert_eq!(build(32, "eevdf:scaling=linear").1.slice(), 8 * 750_000);
    assert_eq!(*build(1, "eevdf").1.config(), EevdfConfig::default());
}

#[test]
fn new_tasks_start_at_v_with_half_a_slice_and_deadlines_follow_vruntime() {
    let (mut p, pol) = build(1, "eevdf");
    fork(&pol, &mut p, 0, 0, &nice(0));
    let a = sched(&pol, &mut p, 0, None, PrevState::Runnable);
    assert_eq!(a, Some(0));
    let e0 = pol.entity_view(0);
    assert_eq!(e0.deadline - e0.vruntime, pol.slice() / 2, "PLACE_DEADLINE_INITIAL");
    advance(&p, 2 * MS);
    fork(&pol, &mut p, 0, 1, &nice(5));
    // Task 1 joins at V, which is task 0's vruntime (the only entity).
    let (e0, e1) = (pol.entity_view(0), pol.entity_view(1));
    assert_eq!(e1.vruntime, e0.vruntime);
    assert_eq!(e1.deadline - e1.vruntime, calc_delta_fair(pol.slice(), nice_to_weight(5)) / 2);
    // Task 0 ran 2 ms past its half-slice deadline, accounted at once: the deadline
    // is renewed once, a slice on from where its vruntime is (update_deadline).
    assert_eq!(e0.deadline - e0.vruntime, pol.slice());

    let (mut p, pol) = build(1, "eevdf:place_deadline_initial=off");
    fork(&pol, &mut p, 0, 0, &nice(-3));
    let e = pol.entity_view(0);
    assert_eq!(e.deadline - e.vruntime, calc_delta_fair(pol.slice(), nice_to_weight(-3)));
}

#[test]
fn a_blocking_task_behind_v_stays_queued_until_picked() {
    let (mut p, pol) = build(1, "eevdf");
    for t in 0..3 {
        fork(&pol, &mut p, 0, t, &nice(0));
    }
    let curr = sched(&pol, &mut p, 0, None, PrevState::Runnable);
    let first = curr.unwrap();
    // It runs 3 ms: ahead of V, so not eligible when it blocks.
    for _ in 0..3 {
        advance(&p, MS);
        if pol.tick(&p, curr) {
            break;
        }
    }
    let next = sched(&pol, &mut p, 0, curr, PrevState::Blocked);
    let e = pol.entity_view(first);
    assert!(e.delayed, "not eligible at block: delayed");
    assert_eq!(e.queued, None, "blocked to the engines");
    assert_eq!(pol.rq_view(0).nr_delayed, 1);
    assert_eq!(pol.rq_view(0).nr_running, 1 + next.is_some() as usize);
    assert_eq!(pol.delayed_dequeues(), 1);
    // Woken while delayed: requeued where it waits, lag kept (negative).
    let r = wake(&pol, &mut p, 0, first);
    assert!(r.is_empty(), "behind V: no preemption");
    let e = pol.entity_view(first);
    assert!(!e.delayed && e.queued == Some(0) && e.vlag <= 0, "{e:?}");
    check(&pol);
    assert!(next.is_some());

    // Off: the same block dequeues at once and keeps the lag.
    let (mut p, pol) = build(1, "eevdf:delay_dequeue=off");
    for t in 0..3 {
        fork(&pol, &mut p, 0, t, &nice(0));
    }
    let c = sched(&pol, &mut p, 0, None, PrevState::Runnable);
    advance(&p, 3 * MS);
    pol.tick(&p, c);
    sched(&pol, &mut p, 0, c, PrevState::Blocked);
    let e = pol.entity_view(c.unwrap());
    assert!(!e.delayed && e.queued.is_none() && e.vlag < 0, "{e:?}");
}

#[test]
fn delayed_entities_leave_when_nothing_else_runs() {
    let (mut p, pol) = build(1, "eevdf");
    fork(&pol, &mut p, 0, 0, &nice(0));
    fork(&pol, &mut p, 0, 1, &nice(0));
    let curr = sched(&pol, &mut p, 0, None, PrevState::Runnable);
    assert_eq!(curr, Some(0), "equal deadlines: the lower id");
    advance(&p, 2 * MS);
    // 0 blocks 2 ms ahead of 1: delayed; 1 runs and blocks at once, behind V.
    let next = sched(&pol, &mut p, 0, curr, PrevState::Blocked);
    assert_eq!(next, Some(1));
    assert!(pol.entity_view(0).delayed);
    let last = sched(&pol, &mut p, 0, next, PrevState::Blocked);
    assert_eq!(last, None);
    let rq = pol.rq_view(0);
    assert_eq!((rq.nr_running, rq.nr_delayed, rq.order.len()), (0, 0, 0), "{rq:?}");
    let (e0, e1) = (pol.entity_view(0), pol.entity_view(1));
    assert!(!e0.delayed && e0.vlag == 0, "alone at the end, it left at V: {e0:?}");
    assert_eq!(e1.vlag, MS as i64, "1 left 1 ms behind V (0 was still queued)");
}

#[test]
fn run_to_parity_holds_off_a_wakeup_until_the_slice_is_used() {
    for (spec, preempts) in [("eevdf", false), ("eevdf:run_to_parity=off", true)] {
        let (mut p, pol) = build(1, spec);
        fork(&pol, &mut p, 0, 0, &nice(0));
        fork(&pol, &mut p, 0, 1, &nice(0));
        let mut curr = sched(&pol, &mut p, 0, None, PrevState::Runnable);
        assert_eq!(curr, Some(0));
        advance(&p, MS);
        curr = sched(&pol, &mut p, 0, curr, PrevState::Runnable);
        assert_eq!(curr, Some(1), "0 is ahead of V");
        advance(&p, 2 * MS);
        curr = sched(&pol, &mut p, 0, curr, PrevState::Runnable);
        assert_eq!(curr, Some(0), "1 is further ahead: 0 is eligible again and picked");
        advance(&p, 100_000);
        // A heavy task joins at V with a deadline a few microseconds on: earlier than
        // 0's, both eligible. 0 is protected until its deadline moves.
        let r = fork(&pol, &mut p, 0, 2, &nice(-20));
        let rq = pol.rq_view(0);
        let (e0, e2) = (pol.entity_view(0), pol.entity_view(2));
        assert!(eligible(rq.avg_sum, rq.avg_load, &e0) && eligible(rq.avg_sum, rq.avg_load, &e2), "{spec}");
        assert!(e2.deadline < e0.deadline, "{spec}: {e2:?} {e0:?}");
        assert_eq!(r, if preempts { vec![0] } else { vec![] }, "{spec}");
        assert_eq!(pol.wakeup_preemptions(), preempts as u64);
    }
}

#[derive(Clone, Debug)]
enum Op {
    New { nice: i8, cpu: usize },
    Block { cpu: usize },
    Wake { pick: usize, cpu: usize },
    Tick { cpu: usize },
    Yield { cpu: usize },
    Advance { ns: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (-20i8..20, 0usize..4).prop_map(|(nice, cpu)| Op::New { nice, cpu }),
        3 => (0usize..4).prop_map(|cpu| Op::Block { cpu }),
        3 => (any::<usize>(), 0usize..4).prop_map(|(pick, cpu)| Op::Wake { pick, cpu }),
        5 => (0usize..4).prop_map(|cpu| Op::Tick { cpu }),
        1 => (0usize..4).prop_map(|cpu| Op::Yield { cpu }),
        4 => (1u64..3_000_000).prop_map(|ns| Op::Advance { ns }),
    ]
}

/// `schedule()` on `cpu` and every check of a pick.
fn resched(
    pol: &Eevdf<NullPlatform>,
    p: &mut NullPlatform,
    curr: &mut [Option<TaskId>],
    cpu: CpuId,
    state: PrevState,
    earliest: bool,
) -> Result<(), String> {
    p.cpu = cpu;
    curr[cpu] = pol.schedule(p, curr[cpu], state);
    pol.check_invariants().map_err(|e| e.0)?;
    check_pick(pol, cpu, earliest)?;
    check_avg(pol, cpu)
}

/// Drive `spec` on `ncpus` CPUs through `ops`, rescheduling every CPU that asks, and
/// check after every pick that it is eligible (and, `earliest`, has the earliest
/// deadline among the eligible), and that `V` is the average of the queue.
fn drive(spec: &str, ncpus: usize, ops: &[Op], earliest: bool) -> Result<(), String> {
    let (mut p, pol) = build(ncpus, spec);
    let mut curr: Vec<Option<TaskId>> = vec![None; ncpus];
    let mut sleeping: Vec<TaskId> = Vec::new();
    let mut n = 0;
    for op in ops {
        let mut pending = Vec::new();
        match *op {
            Op::New { nice: nv, cpu } => {
                if n < CAP as TaskId {
                    pending = fork(&pol, &mut p, cpu % ncpus, n, &nice(nv));
                    n += 1;
                }
            }
            Op::Block { cpu } => {
                let cpu = cpu % ncpus;
                if let Some(t) = curr[cpu] {
                    resched(&pol, &mut p, &mut curr, cpu, PrevState::Blocked, earliest)?;
                    sleeping.push(t);
                }
            }
            Op::Wake { pick, cpu } => {
                if !sleeping.is_empty() {
                    let t = sleeping.remove(pick % sleeping.len());
                    pending = wake(&pol, &mut p, cpu % ncpus, t);
                }
            }
            Op::Tick { cpu } => {
                let cpu = cpu % ncpus;
                p.cpu = cpu;
                if pol.tick(&p, curr[cpu]) {
                    pending.push(cpu);
                }
                pol.balance(&p);
                pending.extend(p.take_resched());
            }
            Op::Yield { cpu } => {
                let cpu = cpu % ncpus;
                if let Some(t) = curr[cpu] {
                    p.cpu = cpu;
                    pol.yield_now(&p, t);
                    pending.extend(p.take_resched());
                }
            }
            Op::Advance { ns } => advance(&p, ns),
        }
        pending.sort_unstable();
        pending.dedup();
        for cpu in pending {
            resched(&pol, &mut p, &mut curr, cpu, PrevState::Runnable, earliest)?;
        }
        // Every reschedule asked for was delivered: an idle CPU with a runnable task
        // linked was never told of it (a lost wake-up).
        for (cpu, c) in curr.iter().enumerate() {
            if c.is_none() && pol.rq_view(cpu).nr_running > 0 {
                return Err(format!("cpu {cpu} is idle with {:?} queued", pol.rq_view(cpu)));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Without run-to-parity every pick is the eligible entity with the earliest
    /// deadline; with it (the default) every pick is still eligible.
    #[test]
    fn the_pick_is_eligible_with_the_earliest_deadline(
        ncpus in 1usize..=3,
        variant in 0usize..4,
        ops in proptest::collection::vec(op(), 1..200),
    ) {
        let (spec, earliest) = [
            ("eevdf:run_to_parity=off", true),
            ("eevdf:run_to_parity=off,delay_dequeue=off,place_lag=off", true),
            ("eevdf", false),
            ("eevdf:base_slice=3ms,scaling=none", false),
        ][variant];
        drive(spec, ncpus, &ops, earliest).map_err(TestCaseError::fail)?;
    }

    /// PLACE_LAG: a task that sleeps keeps its lag (as clamped when it left) across
    /// its sleep; the kernel's inflation by (W + w)/W makes its lag after it rejoins
    /// the one it left with, up to integer rounding (the floors of V before and after,
    /// the truncated inflation: at most 3 ns).
    #[test]
    fn lag_is_conserved_across_a_sleep(
        nices in proptest::collection::vec(-10i8..10, 2..6),
        before in 1u32..40,
        asleep in 0u32..40,
        step in 100_000u64..1_500_000,
    ) {
        let (mut p, pol) = build(1, "eevdf:delay_dequeue=off");
        for (t, &nv) in nices.iter().enumerate() {
            fork(&pol, &mut p, 0, t as TaskId, &nice(nv));
        }
        let mut curr = sched(&pol, &mut p, 0, None, PrevState::Runnable);
        let run = |p: &mut NullPlatform, curr: &mut Option<TaskId>, k: u32| {
            for _ in 0..k {
                advance(p, step);
                if pol.tick(p, *curr) {
                    *curr = sched(&pol, p, 0, *curr, PrevState::Runnable);
                }
            }
        };
        run(&mut p, &mut curr, before);
        let x = curr.unwrap();
        let rq = pol.rq_view(0);
        let ex = pol.entity_view(x);
        let v_before = (rq.avg_sum / rq.avg_load as u128) as i128;
        curr = sched(&pol, &mut p, 0, curr, PrevState::Blocked);
        let left = pol.entity_view(x).vlag;
        let limit = calc_delta_fair((2 * pol.slice()).max(MS), ex.weight) as i128;
        prop_assert_eq!(left as i128, (v_before - ex.vruntime as i128).clamp(-limit, limit));
        run(&mut p, &mut curr, asleep);
        wake(&pol, &mut p, 0, x);
        let rq = pol.rq_view(0);
        let after = (rq.avg_sum / rq.avg_load as u128) as i128 - pol.entity_view(x).vruntime as i128;
        prop_assert!((after - left as i128).abs() <= 3, "left with lag {left}, rejoined with {after}");
    }

    /// Among `n` nice-0 CPU hogs on one CPU, ticking every millisecond, no task waits
    /// longer than (n − 1) turns plus one: a turn is the slice rounded up to the tick
    /// (a running task is only rescheduled at a tick once its deadline has passed),
    /// and the extra turn covers the newcomers' half-slice deadlines and run-to-parity.
    #[test]
    fn no_hog_waits_longer_than_n_minus_one_turns(n in 2usize..9, ms in 50u64..400, slice_us in 100u64..3000) {
        let (mut p, pol) = build(1, &format!("eevdf:base_slice={slice_us}us"));
        for t in 0..n {
            fork(&pol, &mut p, 0, t as TaskId, &nice(0));
        }
        let mut curr = sched(&pol, &mut p, 0, None, PrevState::Runnable);
        let turn = pol.slice().div_ceil(MS) * MS;
        let mut waiting_since = vec![0u64; n];
        let mut max_wait = 0;
        for _ in 0..ms {
            advance(&p, MS);
            if pol.tick(&p, curr) {
                let prev = curr.unwrap();
                curr = sched(&pol, &mut p, 0, curr, PrevState::Runnable);
                let next = curr.unwrap();
                if next != prev {
                    waiting_since[prev as usize] = now(&p);
                    max_wait = max_wait.max(now(&p) - waiting_since[next as usize]);
                }
            }
        }
        let t = now(&p);
        for (i, &since) in waiting_since.iter().enumerate() {
            if Some(i as TaskId) != curr {
                max_wait = max_wait.max(t - since);
            }
        }
        prop_assert!(max_wait <= n as u64 * turn, "max wait {max_wait} ns, bound {} ns", n as u64 * turn);
        // Every hog ran once the bound had passed: none is met by being starved.
        if ms * MS > n as u64 * turn {
            for i in 0..n {
                prop_assert!(pol.entity_view(i as TaskId).sum_exec > 0, "hog {i} never ran");
            }
        }
    }
}
