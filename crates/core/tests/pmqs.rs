//! PMQS (docs/policies.md, "pmqs"): the balancers' decisions on hand-built imbalances, the pool
//! restriction of MQS's loops, and pool = NCPUS degenerating to MQS.

use schedlab_core::cpu::CpuId;
use schedlab_core::policies::mqs::Mqs;
use schedlab_core::policies::pmqs::{self, Balancer, LbReading, Pmqs, PmqsConfig};
use schedlab_core::{
    BuildEnv, CpuMask, NullPlatform, Policy, PolicySource, PolicySpec, PrevState, TaskId, TaskParams, Topology,
};

const HZ: u32 = 100;
const CAP: usize = 64;
const MS: u64 = 1_000_000;

fn pmqs(n: usize, pool: usize, lb: Balancer, period: u32, reading: LbReading) -> (NullPlatform, Pmqs<NullPlatform>) {
    let p = NullPlatform::new(0);
    let cfg = PmqsConfig { pool: Some(pool), lb, period, reading, ..Default::default() };
    let pol = Pmqs::new(&p, &Topology::smp(n), CAP, HZ, cfg).expect("valid pool");
    (p, pol)
}

fn env(topo: &Topology) -> BuildEnv<'_> {
    BuildEnv { topo, capacity: CAP, hz: HZ }
}

fn check<P: Policy<NullPlatform> + ?Sized>(pol: &P) {
    if let Err(e) = pol.check_invariants() {
        panic!("{} invariant violated: {e}", pol.name());
    }
}

/// Fork `id` on `cpu` and wake it synchronously (enqueue on its own queue, no
/// placement): the way to pile tasks onto one queue.
fn pile(pol: &dyn Policy<NullPlatform>, p: &mut NullPlatform, cpu: CpuId, id: TaskId, params: &TaskParams) {
    p.cpu = cpu;
    pol.task_new(p, id, params, None);
    pol.wake_up(p, id, true);
    check(pol);
}

fn lens(pol: &dyn Policy<NullPlatform>) -> Vec<usize> {
    (0..pol.nr_queues()).map(|q| pol.queue_len(q)).collect()
}

fn pool_sum(l: &[usize], pool: std::ops::Range<usize>) -> usize {
    l[pool].iter().sum()
}

#[test]
fn bad_pool_sizes_are_spec_errors() {
    let p = NullPlatform::new(0);
    for pool in [3, 5, 16] {
        let spec = PolicySpec::parse(&format!("pmqs:pool={pool},lb=off")).unwrap();
        let e = spec.build(&p, &env(&Topology::smp(8))).err().expect("must fail");
        assert!(e.0.contains(&format!("pool={pool}")) && e.0.contains("8 CPUs"), "{e}");
    }
    for pool in [1, 2, 4, 8] {
        let spec = PolicySpec::parse(&format!("pmqs:pool={pool},lb=lbp")).unwrap();
        assert!(spec.build(&p, &env(&Topology::smp(8))).is_ok());
    }
}

#[test]
fn lboff_never_moves_anything() {
    let (mut p, pol) = pmqs(8, 4, Balancer::Off, 45, LbReading::Period);
    for t in 0..8 {
        pile(&pol, &mut p, 0, t, &TaskParams::default());
    }
    assert_eq!(lens(&pol)[0], 8);
    for now in [0, 45 * MS, 1000 * MS] {
        p.set_now(now);
        for cpu in 0..8 {
            p.cpu = cpu;
            pol.balance(&p);
        }
    }
    // Pool 1 CPUs find nothing: no task crosses the pool boundary.
    for cpu in 4..8 {
        assert_eq!(pol.schedule(p.on(cpu), None, PrevState::Runnable), None, "cpu {cpu}");
    }
    assert_eq!(lens(&pol)[0], 8);
    assert_eq!(pol.moved_count(), 0);
    assert_eq!(pol.pass_count(), 0);
    check(&pol);
}

#[test]
fn ip_places_new_tasks_on_the_least_loaded_pool_then_cpu() {
    let (mut p, pol) = pmqs(8, 4, Balancer::Ip, 45, LbReading::Period);
    // Four tasks pinned to CPU 0: IP must respect cpus_allowed.
    let pinned = TaskParams { cpus_allowed: CpuMask::single(0), ..TaskParams::default() };
    for t in 0..4 {
        pile(&pol, &mut p, 0, t, &pinned);
        assert_eq!(pol.tasks().get(t).processor(), 0);
    }
    // New unpinned tasks forked on CPU 0 go to the idle pool 1, least-loaded CPU first.
    for (i, t) in (4..8).enumerate() {
        p.cpu = 0;
        pol.task_new(&p, t, &TaskParams::default(), None);
        assert_eq!(pol.tasks().get(t).processor(), 4 + i, "task {t}");
        pol.wake_up(&p, t, false);
        check(&pol);
        assert_eq!(pol.tasks().get(t).on_rq(), Some(4 + i));
    }
    // Pool loads are now 4 and 4: ties keep the forking CPU's pool, least-loaded CPU.
    p.cpu = 0;
    pol.task_new(&p, 8, &TaskParams::default(), None);
    assert_eq!(pol.tasks().get(8).processor(), 1);
    // Never a migration afterwards.
    p.set_now(10_000 * MS);
    pol.balance(&p);
    assert_eq!(pol.moved_count(), 0);

    // Without IP the same fork stays on the forking CPU.
    let (mut p, off) = pmqs(8, 4, Balancer::Off, 45, LbReading::Period);
    for t in 0..4 {
        pile(&off, &mut p, 0, t, &pinned);
    }
    p.cpu = 0;
    off.task_new(&p, 4, &TaskParams::default(), None);
    assert_eq!(off.tasks().get(4).processor(), 0);
}

#[test]
fn lbp_moves_tasks_after_the_period_and_not_before() {
    let (mut p, pol) = pmqs(8, 4, Balancer::Lbp, 45, LbReading::Period);
    for t in 0..8 {
        pile(&pol, &mut p, 0, t, &TaskParams::default());
    }
    // CPU 0 runs one of them: a running task is never moved.
    let running = pol.schedule(p.on(0), None, PrevState::Runnable).expect("work");
    check(&pol);
    p.take_resched();
    for now in [0, 10 * MS, 44 * MS] {
        p.set_now(now);
        for cpu in 0..8 {
            p.cpu = cpu;
            pol.balance(&p);
        }
        assert_eq!(lens(&pol)[0], 8, "moved before the period (t = {now})");
    }
    p.set_now(45 * MS);
    for cpu in 0..8 {
        p.cpu = cpu;
        pol.balance(&p);
    }
    check(&pol);
    assert_eq!(pol.pass_count(), 1, "one CPU claims the period");
    let l = lens(&pol);
    assert!(pool_sum(&l, 4..8) >= 3, "pool 1 got work: {l:?}");
    assert!(pol.moved_count() > 0);
    assert_eq!(pol.tasks().get(running).on_rq(), Some(0), "the running task stayed");
    assert!(l.iter().max().unwrap() - l.iter().min().unwrap() <= 2, "toward the average: {l:?}");
    // Idle CPUs that received tasks were kicked.
    let kicked = p.take_resched();
    assert!(kicked.iter().any(|&c| c >= 4), "{kicked:?}");
    // The next period starts from the last pass.
    let before = pol.pass_count();
    p.set_now(89 * MS);
    pol.balance(&p);
    assert_eq!(pol.pass_count(), before);
    p.set_now(90 * MS);
    pol.balance(&p);
    assert_eq!(pol.pass_count(), before + 1);
}

#[test]
fn lbp_threshold_reading_moves_only_above_the_threshold() {
    // x = 45 %: runs every tick (10 ms), moves only while the longest queue exceeds the
    // average by more than 45 %.
    let (mut p, pol) = pmqs(4, 2, Balancer::Lbp, 45, LbReading::Threshold);
    // Lengths [3, 0, 2, 2]: avg 1.75, 3 > 1.75 · 1.45 = 2.54 → move 1 from q0 to q2?
    // q2/q3 are in the other pool with length 2: difference 1 < 2, nothing to do.
    for t in 0..3 {
        pile(&pol, &mut p, 0, t, &TaskParams::default());
    }
    for t in 3..5 {
        pile(&pol, &mut p, 2, t, &TaskParams::default());
    }
    for t in 5..7 {
        pile(&pol, &mut p, 3, t, &TaskParams::default());
    }
    p.set_now(10 * MS);
    pol.balance(&p);
    assert_eq!(pol.moved_count(), 0, "{:?}", lens(&pol));
    // Now [6, 0, 0, 0] style imbalance in pool 0 vs an empty pool 1.
    let (mut p, pol) = pmqs(4, 2, Balancer::Lbp, 45, LbReading::Threshold);
    for t in 0..6 {
        pile(&pol, &mut p, 0, t, &TaskParams::default());
    }
    p.set_now(9 * MS);
    pol.balance(&p);
    assert_eq!(pol.moved_count(), 0, "not before one tick");
    p.set_now(10 * MS);
    pol.balance(&p);
    let l = lens(&pol);
    assert!(pool_sum(&l, 2..4) >= 2, "{l:?}");
    check(&pol);
    // With a huge threshold nothing moves.
    let (mut p, pol) = pmqs(4, 2, Balancer::Lbp, 1000, LbReading::Threshold);
    for t in 0..6 {
        pile(&pol, &mut p, 0, t, &TaskParams::default());
    }
    p.set_now(100 * MS);
    pol.balance(&p);
    assert_eq!(pol.moved_count(), 0);
}

#[test]
fn lbc_reacts_to_queue_length_changes() {
    let (mut p, pol) = pmqs(8, 4, Balancer::Lbc, 45, LbReading::Period);
    pile(&pol, &mut p, 0, 0, &TaskParams::default());
    assert_eq!(pol.pass_count(), 0, "a queue of length 1 triggers nothing");
    pile(&pol, &mut p, 0, 1, &TaskParams::default());
    assert_eq!(pol.pass_count(), 1, "the enqueue making queue 0 length 2 triggers a pass");
    let l = lens(&pol);
    assert_eq!(pool_sum(&l, 4..8), 1, "{l:?}");
    for t in 2..8 {
        pile(&pol, &mut p, 0, t, &TaskParams::default());
        let l = lens(&pol);
        // After an enqueue no queue is 2 or more longer than the shortest queue of the
        // other pool (imbalance inside a pool is left to MQS's stealing).
        for a in 0..8 {
            let other = if a < 4 { 4..8 } else { 0..4 };
            let min_other = l[other].iter().copied().min().unwrap();
            assert!(l[a] <= min_other + 1, "after task {t}: {l:?}");
        }
    }
    // No periodic component.
    let passes = pol.pass_count();
    p.set_now(1000 * MS);
    pol.balance(&p);
    assert_eq!(pol.pass_count(), passes);
    // Going idle pulls. Tasks allowed on CPUs 1 and 3 only pile up on CPU 1: the
    // enqueue trigger picks CPU 2 (shortest queue of pool 1) as destination, where they
    // may not run, so it moves nothing.
    let (mut p, pol) = pmqs(4, 2, Balancer::Lbc, 45, LbReading::Period);
    let on13 = TaskParams { cpus_allowed: CpuMask(0b1010), ..TaskParams::default() };
    for t in 0..3 {
        pile(&pol, &mut p, 1, t, &on13);
    }
    assert_eq!(lens(&pol), vec![0, 3, 0, 0]);
    assert_eq!(pol.moved_count(), 0);
    // Idle CPU 3 finds nothing in its pool, pulls from queue 1 and runs what it pulled.
    let got = pol.schedule(p.on(3), None, PrevState::Runnable).expect("pulled a task");
    check(&pol);
    assert_eq!(pol.moved_count(), 1);
    assert_eq!(pol.tasks().get(got).on_rq(), Some(3));
    assert_eq!(lens(&pol), vec![0, 2, 0, 1]);
    // LBOFF would have left it idle.
    let (mut p, off) = pmqs(4, 2, Balancer::Off, 45, LbReading::Period);
    for t in 0..3 {
        pile(&off, &mut p, 1, t, &on13);
    }
    assert_eq!(off.schedule(p.on(3), None, PrevState::Runnable), None);
}

/// `scope=queues` evens out every pair of run queues, in the pool or not: with one pool
/// of the whole machine LBC then still balances, where the default `scope=pools` leaves
/// the pile to MQS.
#[test]
fn lbc_scope_queues_balances_inside_one_pool() {
    let build = |scope| {
        let p = NullPlatform::new(0);
        let cfg = PmqsConfig { pool: Some(4), lb: Balancer::Lbc, scope, ..Default::default() };
        let pol = Pmqs::new(&p, &Topology::smp(4), CAP, HZ, cfg).expect("valid pool");
        (p, pol)
    };
    let (mut p, pools) = build(pmqs::LbScope::Pools);
    for t in 0..8 {
        pile(&pools, &mut p, 0, t, &TaskParams::default());
    }
    assert_eq!(lens(&pools), vec![8, 0, 0, 0]);
    assert_eq!(pools.pass_count(), 0, "one pool: no pass");
    let (mut p, queues) = build(pmqs::LbScope::Queues);
    for t in 0..8 {
        pile(&queues, &mut p, 0, t, &TaskParams::default());
    }
    let l = lens(&queues);
    assert_eq!(l.iter().sum::<usize>(), 8);
    assert!(l.iter().max().unwrap() - l.iter().min().unwrap() <= 1, "{l:?}");
    assert!(queues.moved_count() > 0);
    assert_eq!(
        PolicySpec::parse("pmqs:lb=lbc,scope=queues").unwrap().canonical(),
        "pmqs:lb=lbc,period=45,scope=queues"
    );
}

/// `locks=all` (a pass holds every queue's lock) makes the same moves as the default
/// `locks=pair`; only what the pass pays differs.
#[test]
fn lbc_locks_all_makes_the_same_moves() {
    let run = |locks| {
        let mut p = NullPlatform::new(0);
        let cfg = PmqsConfig { pool: Some(2), lb: Balancer::Lbc, locks, ..Default::default() };
        let pol = Pmqs::new(&p, &Topology::smp(4), CAP, HZ, cfg).expect("valid pool");
        for t in 0..9 {
            pile(&pol, &mut p, (t % 2) as CpuId, t, &TaskParams::default());
        }
        let taken = p.locks_taken();
        (lens(&pol), pol.moved_count(), pol.pass_count(), taken)
    };
    let pair = run(pmqs::LbLocks::Pair);
    let all = run(pmqs::LbLocks::All);
    assert_eq!((&pair.0, pair.1, pair.2), (&all.0, all.1, all.2));
    assert!(pair.1 > 0, "{pair:?}");
    assert!(all.3 > pair.3, "every pass takes every lock: {} against {}", all.3, pair.3);
    assert_eq!(PolicySpec::parse("pmqs:lb=lbc,locks=all").unwrap().canonical(), "pmqs:lb=lbc,period=45,locks=all");
}

// ------------------------------------------------------------ random op runs -------

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum St {
    Sleeping,
    Runnable,
    Exited,
}

/// Drive `pol` through a seeded random sequence of forks, wakeups, schedules, ticks
/// (with balance) and clock advances; `observe` sees the policy after every step.
/// Returns every `schedule()` result, in order.
fn random_run(
    pol: &dyn Policy<NullPlatform>,
    ncpus: usize,
    seed: u64,
    steps: usize,
    mut observe: impl FnMut(&dyn Policy<NullPlatform>, &[St]),
) -> Vec<Option<TaskId>> {
    let mut rng = Rng(seed | 1);
    let mut p = NullPlatform::new(0);
    let mut curr: Vec<Option<TaskId>> = vec![None; ncpus];
    let mut st: Vec<St> = Vec::new();
    let mut picks = Vec::new();
    let mut now = 0;
    let sched = |pol: &dyn Policy<NullPlatform>,
                 p: &mut NullPlatform,
                 curr: &mut Vec<Option<TaskId>>,
                 st: &mut Vec<St>,
                 cpu: usize,
                 state: PrevState,
                 picks: &mut Vec<Option<TaskId>>| {
        let prev = curr[cpu];
        let state = if prev.is_none() { PrevState::Runnable } else { state };
        let next = pol.schedule(p.on(cpu), prev, state);
        if let Some(t) = prev {
            match state {
                PrevState::Blocked => st[t as usize] = St::Sleeping,
                PrevState::Exited => st[t as usize] = St::Exited,
                PrevState::Runnable => {}
            }
        }
        curr[cpu] = next;
        picks.push(next);
    };
    for _ in 0..steps {
        let cpu = rng.below(ncpus);
        match rng.below(10) {
            0 | 1 if st.len() < CAP => {
                let id = st.len() as TaskId;
                let params =
                    TaskParams { nice: rng.below(10) as i8 - 5, mm: rng.below(3) as u32, ..Default::default() };
                p.cpu = cpu;
                pol.task_new(&p, id, &params, curr[cpu]);
                st.push(St::Runnable);
                pol.wake_up(&p, id, rng.below(2) == 0);
            }
            2 | 3 => {
                let sleeping: Vec<usize> = (0..st.len()).filter(|&t| st[t] == St::Sleeping).collect();
                if !sleeping.is_empty() {
                    let t = sleeping[rng.below(sleeping.len())];
                    p.cpu = cpu;
                    pol.wake_up(&p, t as TaskId, rng.below(3) == 0);
                    st[t] = St::Runnable;
                }
            }
            4 | 5 => {
                let state =
                    [PrevState::Runnable, PrevState::Blocked, PrevState::Blocked, PrevState::Exited][rng.below(4)];
                sched(pol, &mut p, &mut curr, &mut st, cpu, state, &mut picks);
            }
            6 | 7 => {
                p.cpu = cpu;
                let r = pol.tick(&p, curr[cpu]);
                pol.balance(&p);
                if r {
                    sched(pol, &mut p, &mut curr, &mut st, cpu, PrevState::Runnable, &mut picks);
                }
            }
            8 => {
                let mut targets = p.take_resched();
                targets.sort_unstable();
                targets.dedup();
                for c in targets {
                    sched(pol, &mut p, &mut curr, &mut st, c, PrevState::Runnable, &mut picks);
                }
            }
            _ => {
                now += rng.below(20) as u64 * MS;
                p.set_now(now);
            }
        }
        check(pol);
        observe(pol, &st);
    }
    picks
}

#[test]
fn without_a_balancer_no_task_leaves_its_pool() {
    for (n, pool) in [(8, 4), (8, 2), (4, 2), (6, 3), (8, 1)] {
        for seed in 1..=20u64 {
            let (_, pol) = pmqs(n, pool, Balancer::Off, 45, LbReading::Period);
            let mut home: Vec<Option<usize>> = vec![None; CAP];
            random_run(&pol, n, seed * 7919, 600, |pol, st| {
                for (t, _) in st.iter().enumerate().filter(|(_, s)| **s != St::Exited) {
                    let Some(q) = pol.tasks().get(t as TaskId).on_rq() else { continue };
                    let h = *home[t].get_or_insert(q / pool);
                    assert_eq!(q / pool, h, "n={n} pool={pool} seed={seed}: task {t} left pool {h} for queue {q}");
                }
            });
        }
    }
}

#[test]
fn balancers_do_move_tasks_across_pools_in_random_runs() {
    for lb in [Balancer::Lbp, Balancer::Lbc] {
        let mut moved = 0;
        for seed in 1..=20u64 {
            let (_, pol) = pmqs(8, 4, lb, 10, LbReading::Period);
            random_run(&pol, 8, seed * 104_729, 600, |_, _| {});
            moved += pol.moved_count();
        }
        assert!(moved > 0, "{lb:?} never moved a task");
    }
}

#[test]
fn pool_of_ncpus_behaves_like_mqs() {
    for n in [1, 2, 4, 8] {
        for seed in 1..=20u64 {
            let p = NullPlatform::new(0);
            let mqs = Mqs::new(&p, &Topology::smp(n), CAP, HZ);
            let mut mqs_lens = Vec::new();
            let a = random_run(&mqs, n, seed * 31, 500, |pol, _| mqs_lens.push(lens(pol)));
            for lb in [Balancer::Off, Balancer::Lbp, Balancer::Lbc] {
                let spec = PolicySpec::of::<pmqs::Kind>(PmqsConfig {
                    pool: None,
                    lb,
                    period: 10,
                    reading: LbReading::Period,
                    ..Default::default()
                });
                let pm = spec.build(&p, &env(&Topology::smp(n))).unwrap();
                let mut pm_lens = Vec::new();
                let b = random_run(pm.as_ref(), n, seed * 31, 500, |pol, _| pm_lens.push(lens(pol)));
                assert_eq!(a, b, "n={n} seed={seed} {lb:?}: schedule() picks differ");
                assert_eq!(mqs_lens, pm_lens, "n={n} seed={seed} {lb:?}: queue lengths differ");
            }
        }
    }
}
