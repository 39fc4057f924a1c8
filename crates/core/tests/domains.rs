//! The scheduling domains `cfs` and `eevdf` balance over (`policies::linux_balance`,
//! Linux v6.6 `build_sched_domains`/`sd_init` and `rebalance_domains`/`load_balance`):
//! which levels a machine gets, their flags and intervals, and the periodic balance
//! on `cfs` (the same code serves `eevdf`) moving tasks toward balance, doubling its
//! interval when balanced, and never moving a pinned task.

mod common;
use common::{check, sched};
use schedlab_core::cpu::CpuId;
use schedlab_core::policies::cfs::{self, Cfs};
use schedlab_core::policies::linux_balance::{sd, Domains, MAX_PINNED_INTERVAL};
use schedlab_core::{BuildEnv, CpuMask, NullPlatform, Policy, PolicySpec, PrevState, TaskId, TaskParams, Topology};

const MS: u64 = 1_000_000;

fn mask(cpus: impl IntoIterator<Item = CpuId>) -> CpuMask {
    CpuMask(cpus.into_iter().fold(0, |m, c| m | 1 << c))
}

/// `nodes` nodes of `per_node` CPUs, every remote distance `remote`.
fn numa(nodes: usize, per_node: usize, remote: u32) -> Topology {
    let distance = (0..nodes).map(|a| (0..nodes).map(|b| if a == b { 10 } else { remote }).collect()).collect();
    Topology { node_of: (0..nodes * per_node).map(|c| c / per_node).collect(), distance }
}

#[test]
fn one_cpu_has_no_domain() {
    let d = Domains::new(&Topology::smp(1), 100, 117);
    assert!(d.levels(0).is_empty());
}

#[test]
fn an_smp_has_one_llc_level_of_single_cpu_groups() {
    for n in [2, 8] {
        let d = Domains::new(&Topology::smp(n), 100, 117);
        for c in 0..n {
            let l = d.levels(c);
            assert_eq!(l.len(), 1, "{n} CPUs");
            let mc = &l[0];
            assert_eq!((mc.name, mc.span, mc.weight()), ("MC", CpuMask::first(n), n));
            // The local group first, then from this CPU on, wrapping.
            let groups: Vec<CpuMask> = (0..n).map(|k| CpuMask::single((c + k) % n)).collect();
            assert_eq!(mc.groups, groups);
            assert_eq!((mc.min_interval, mc.max_interval), (n as u64, 2 * n as u64));
            assert_eq!((mc.imbalance_pct, mc.cache_nice_tries), (117, 1));
            for f in
                [sd::BALANCE_NEWIDLE, sd::BALANCE_FORK, sd::WAKE_AFFINE, sd::SHARE_PKG_RESOURCES, sd::PREFER_SIBLING]
            {
                assert!(mc.has(f), "{f}");
            }
            assert!(!mc.has(sd::NUMA) && !mc.has(sd::SERIALIZE));
            assert_eq!(d.balance_interval(c, 0), n as u64);
        }
    }
}

#[test]
fn numa_presets_get_an_llc_level_per_node_and_one_numa_level() {
    // numa-4x4: remote:local 10:1, beyond RECLAIM_DISTANCE.
    let d = Domains::new(&numa(4, 4, 100), 100, 117);
    for c in 0..16 {
        let l = d.levels(c);
        assert_eq!(l.len(), 2);
        let node = c / 4;
        assert_eq!(l[0].span, mask(node * 4..node * 4 + 4));
        assert_eq!(l[0].groups.len(), 4);
        assert_eq!(l[0].groups[0], CpuMask::single(c));
        let n = &l[1];
        assert_eq!((n.name, n.span), ("NUMA", CpuMask::first(16)));
        let groups: Vec<CpuMask> = (0..4).map(|k| mask(((node + k) % 4) * 4..((node + k) % 4) * 4 + 4)).collect();
        assert_eq!(n.groups, groups);
        assert!(n.has(sd::NUMA) && n.has(sd::SERIALIZE) && n.has(sd::BALANCE_NEWIDLE));
        assert!(!n.has(sd::WAKE_AFFINE) && !n.has(sd::BALANCE_FORK) && !n.has(sd::PREFER_SIBLING));
        assert!(n.groups_prefer_sibling, "its groups are nodes, which prefer siblings");
        assert_eq!((n.cache_nice_tries, n.min_interval, n.max_interval, n.imb_numa_nr), (2, 16, 32, 1));
    }
    // Within RECLAIM_DISTANCE the NUMA level keeps wake-affine and fork balancing.
    let d = Domains::new(&numa(2, 4, 20), 100, 117);
    let n = &d.levels(5)[1];
    assert!(n.has(sd::WAKE_AFFINE) && n.has(sd::BALANCE_FORK));
    assert_eq!(n.groups, vec![mask(4..8), mask(0..4)]);
    // Nodes of one CPU: the LLC level is degenerate and goes; NUMA's groups are CPUs.
    let d = Domains::new(&numa(4, 1, 20), 100, 117);
    let l = d.levels(2);
    assert_eq!(l.len(), 1);
    assert_eq!((l[0].name, l[0].span), ("NUMA", CpuMask::first(4)));
    assert_eq!(l[0].groups, vec![CpuMask::single(2), CpuMask::single(3), CpuMask::single(0), CpuMask::single(1)]);
    // One node: no NUMA level.
    assert_eq!(Domains::new(&numa(1, 4, 20), 100, 117).levels(0).len(), 1);
    // Two distances: a NUMA level for each.
    let t = Topology {
        node_of: vec![0, 1, 2, 3],
        distance: vec![vec![10, 20, 40, 40], vec![20, 10, 40, 40], vec![40, 40, 10, 20], vec![40, 40, 20, 10]],
    };
    let d = Domains::new(&t, 100, 117);
    let spans: Vec<CpuMask> = d.levels(0).iter().map(|l| l.span).collect();
    assert_eq!(spans, vec![mask([0, 1]), CpuMask::first(4)]);
    assert!(d.levels(0)[0].has(sd::WAKE_AFFINE) && !d.levels(0)[1].has(sd::WAKE_AFFINE));
    assert_eq!(d.levels(0)[1].groups, vec![mask([0, 1]), mask([2, 3])]);
}

#[test]
fn balance_intervals_are_the_kernels() {
    // 2 CPUs at HZ=100: 2 ms idle → 1 jiffy (rounded up), ×16 busy = 32 ms → 4 jiffies.
    let d = Domains::new(&Topology::smp(2), 100, 117);
    assert_eq!((d.interval_jiffies(0, 0, false), d.interval_jiffies(0, 0, true)), (1, 4));
    // 16 CPUs: the NUMA level's 16 ms → 2 jiffies, 256 ms busy → 26 jiffies; at
    // HZ=1000, 256 (below the cap, HZ × CPUs / 10 jiffies).
    let d = Domains::new(&numa(4, 4, 100), 100, 117);
    assert_eq!((d.interval_jiffies(0, 1, false), d.interval_jiffies(0, 1, true)), (2, 26));
    let d = Domains::new(&numa(4, 4, 100), 1000, 117);
    assert_eq!(d.interval_jiffies(0, 1, true), 256);
    let d = Domains::new(&Topology::smp(2), 1000, 117);
    assert_eq!(d.interval_jiffies(0, 0, true), 32);
    let d = Domains::new(&Topology::smp(64), 10, 117);
    assert_eq!(d.interval_jiffies(0, 0, true), 11, "64 ms × 16 at HZ=10, rounded up");
}

const HZ: u32 = 1000;

fn build(topo: &Topology) -> (NullPlatform, Cfs<NullPlatform>) {
    let cfg = *PolicySpec::parse("cfs").unwrap().config::<cfs::Kind>().unwrap();
    let p = NullPlatform::new(0);
    let pol = Cfs::new(&p, &BuildEnv { topo, capacity: 64, hz: HZ }, &cfg).unwrap();
    (p, pol)
}

fn advance(p: &NullPlatform, ns: u64) {
    p.set_now(p.clock.load(std::sync::atomic::Ordering::Relaxed) + ns);
}

/// Every CPU's periodic balance, then every idle CPU picks, `rounds` times, 1 ms apart.
fn tick_all(pol: &Cfs<NullPlatform>, p: &mut NullPlatform, curr: &mut [Option<TaskId>], rounds: usize) {
    for _ in 0..rounds {
        advance(p, MS);
        for c in 0..curr.len() {
            p.cpu = c;
            pol.balance(p);
        }
        for (c, running) in curr.iter_mut().enumerate() {
            if running.is_none() {
                *running = sched(pol, p, c, None, PrevState::Runnable);
            }
        }
        check(pol);
    }
}

#[test]
fn periodic_balance_spreads_tasks_over_an_smp() {
    for (n, tasks) in [(2usize, 6u32), (8, 16)] {
        let (mut p, pol) = build(&Topology::smp(n));
        for id in 0..tasks {
            common::fork_wake(&pol, &mut p, 0, id, &TaskParams::default(), None, true);
        }
        let mut curr = vec![None; n];
        curr[0] = sched(&pol, &mut p, 0, None, PrevState::Runnable);
        advance(&p, 10 * MS);
        tick_all(&pol, &mut p, &mut curr, 200);
        let nr: Vec<usize> = (0..n).map(|c| pol.rq_view(c).nr_running).collect();
        assert_eq!(nr.iter().sum::<usize>(), tasks as usize);
        assert!(nr.iter().all(|&k| k == tasks as usize / n), "{n} CPUs: {nr:?}");
    }
}

#[test]
fn periodic_balance_fills_every_node() {
    let (mut p, pol) = build(&numa(4, 4, 100));
    for id in 0..32 {
        common::fork_wake(&pol, &mut p, 0, id, &TaskParams::default(), None, true);
    }
    let mut curr = vec![None; 16];
    curr[0] = sched(&pol, &mut p, 0, None, PrevState::Runnable);
    advance(&p, 10 * MS);
    tick_all(&pol, &mut p, &mut curr, 2000);
    let nr: Vec<usize> = (0..16).map(|c| pol.rq_view(c).nr_running).collect();
    assert_eq!(nr.iter().sum::<usize>(), 32);
    assert!(nr.iter().all(|&k| k >= 1), "no CPU idle while another has tasks waiting: {nr:?}");
    let per_node: Vec<usize> = (0..4).map(|n| nr[n * 4..n * 4 + 4].iter().sum()).collect();
    assert!(per_node.iter().all(|&k| k == 8), "{per_node:?}");
}

#[test]
fn a_balanced_pass_doubles_the_interval_up_to_its_maximum() {
    let (mut p, pol) = build(&Topology::smp(2));
    for (cpu, id) in [(0, 0), (1, 1)] {
        common::fork_wake(&pol, &mut p, cpu, id, &TaskParams::default(), None, true);
        sched(&pol, &mut p, cpu, None, PrevState::Runnable);
    }
    p.cpu = 1;
    let mut seen = Vec::new();
    for _ in 0..8 {
        advance(&p, 100 * MS);
        pol.balance(&p);
        seen.push(pol.domains().balance_interval(1, 0));
    }
    assert_eq!(seen, [4, 4, 4, 4, 4, 4, 4, 4], "2 ms doubles once to max_interval 4 ms");
    assert_eq!(pol.pulled(), 0);
}

#[test]
fn a_pinned_task_is_never_balanced() {
    let (mut p, pol) = build(&numa(2, 2, 100));
    let pinned = TaskParams { cpus_allowed: CpuMask::single(0), ..TaskParams::default() };
    for id in 0..5 {
        common::fork_wake(&pol, &mut p, 0, id, &pinned, None, true);
    }
    let mut curr = vec![None; 4];
    curr[0] = sched(&pol, &mut p, 0, None, PrevState::Runnable);
    tick_all(&pol, &mut p, &mut curr, 500);
    assert_eq!(pol.pulled(), 0);
    assert_eq!(pol.rq_view(0).nr_running, 5);
    // Every pass found only pinned tasks: the interval grows past max_interval, to
    // MAX_PINNED_INTERVAL.
    assert!(pol.domains().balance_interval(1, 0) > 4, "{}", pol.domains().balance_interval(1, 0));
    assert!(pol.domains().balance_interval(1, 0) <= 2 * MAX_PINNED_INTERVAL);
    // An unpinned task among them moves.
    common::fork_wake(&pol, &mut p, 0, 5, &TaskParams::default(), None, true);
    tick_all(&pol, &mut p, &mut curr, 3000);
    assert_eq!(pol.pulled(), 1);
    assert_eq!(pol.rq_view(0).nr_running, 5);
}
