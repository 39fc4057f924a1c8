//! The placement `cfs` and `eevdf` share (`policies::linux_balance`).
//!
//! * Fork placement ([`find_idlest_cpu`]), over random machines, CPU occupancies and
//!   affinity masks: an allowed CPU; with nodes beyond `RECLAIM_DISTANCE`, one of the
//!   forking CPU's node: the forking CPU if it is idle, else an idle one if any.
//! * Wake-up placement ([`select_task_rq`], Linux v6.6 `select_task_rq_fair`): an idle
//!   CPU of the target's LLC (node) before any other node's, `wake_affine`'s idle,
//!   `sync` and weight rules, `wake_wide`, `recent_used_cpu`, and over random states:
//!   the result is allowed, in the LLC of the waking or the previous CPU, and idle
//!   unless it is one of those two.
//! * The CPU-count factor of the fair tunables ([`Scaling`]).

use proptest::prelude::*;
use schedlab_core::common::SchedCommon;
use schedlab_core::cpu::{CpuId, CpuMask};
use schedlab_core::policies::cfs::{self, Cfs, Sysctl};
use schedlab_core::policies::linux_balance::{find_idlest_cpu, select_task_rq, Domains, Scaling, Wake, Wakeups};
use schedlab_core::{BuildEnv, NullPlatform, PolicySpec, TaskId, TaskParams, Topology};

const NICE0: u64 = 1024;

/// A machine of `nodes` × `per_node` CPUs where `busy[c]` tasks run or wait on CPU
/// `c` (the first one running, task id 100 + c), and task 0, whose previous CPU is
/// `prev`, sleeps.
fn machine(nodes: usize, per_node: usize, busy: &[usize], prev: CpuId) -> (Topology, SchedCommon, Wakeups) {
    let n = nodes * per_node;
    let topo = Topology::nodes((0..n).map(|c| c / per_node).collect());
    let p = NullPlatform::new(0);
    let common = SchedCommon::new(&p, &topo, n, 200, 100);
    for (c, &k) in busy.iter().enumerate() {
        common.cpu(c).set_curr((k > 0).then_some(100 + c as TaskId));
        common.publish_len(c, k);
    }
    common.tasks.init(0, &TaskParams::default(), prev, 0);
    let wakeups = Wakeups::new(&topo, 200);
    (topo, common, wakeups)
}

/// Wake task 0 from `this` (`sync` or not); loads are `NICE0` per task linked.
fn wake_from(common: &SchedCommon, wakeups: &Wakeups, this: CpuId, sync: bool) -> CpuId {
    let p = NullPlatform::new(this);
    let w = Wake { wakeups, load: |c| common.queue_len(c) as u64 * NICE0, weight: |_| NICE0 };
    let prev = common.tasks.get(0).processor();
    select_task_rq(common, &p, &w, 0, prev, sync)
}

proptest! {
    #[test]
    fn fork_placement_finds_the_idlest_cpu_within_the_fork_domains(
        ncpus in 1usize..=8,
        node_size in 1usize..=4,
        remote in prop_oneof![Just(20u32), Just(100u32)],
        busy in proptest::collection::vec((any::<bool>(), 0usize..3), 8),
        mask in any::<u64>(),
        prev in 0usize..8,
    ) {
        let prev = prev % ncpus;
        let node_of: Vec<usize> = (0..ncpus).map(|c| c / node_size).collect();
        let nodes = node_of[ncpus - 1] + 1;
        let distance = (0..nodes).map(|a| (0..nodes).map(|b| if a == b { 10 } else { remote }).collect()).collect();
        let topo = Topology { node_of, distance };
        let p = NullPlatform::new(0);
        let common = SchedCommon::new(&p, &topo, ncpus, 4, 100);
        let idle: Vec<bool> = (0..ncpus)
            .map(|c| {
                let (running, queued) = busy[c];
                common.cpu(c).set_curr(running.then_some(1));
                common.publish_len(c, queued + running as usize);
                !running && queued == 0
            })
            .collect();
        let allowed = CpuMask(mask & CpuMask::first(ncpus).0);
        let params = TaskParams { cpus_allowed: allowed, ..Default::default() };
        common.tasks.init(0, &params, prev, 0);
        let domains = Domains::new(&topo, 100, 117);

        let got = find_idlest_cpu(&common, &domains, &p, 0, prev, |c| common.queue_len(c) as u64 * NICE0);
        if !allowed.is_empty() {
            prop_assert!(allowed.contains(got), "placed on {} outside {:#x}", got, allowed.0);
        }
        let node = topo.node_of[prev];
        let ok = |c: CpuId| allowed.contains(c) && idle[c];
        let several = allowed.0.count_ones() > 1;
        if remote > 30 && several && allowed.contains(prev) {
            // Beyond RECLAIM_DISTANCE the NUMA level does not balance forks: the task
            // stays on the forking CPU's node; there, on the forking CPU if it is idle,
            // else on an idle CPU if the node has one.
            prop_assert_eq!(topo.node_of[got], node);
            if ok(prev) {
                prop_assert_eq!(got, prev);
            } else if (0..ncpus).any(|c| ok(c) && topo.node_of[c] == node) {
                prop_assert!(ok(got), "{} is not idle: {:?}", got, idle);
            }
        }
    }
}

proptest! {
    #[test]
    fn wake_up_placement_stays_allowed_and_within_the_two_llcs(
        nodes in 1usize..=3,
        per_node in 1usize..=4,
        busy in proptest::collection::vec(0usize..3, 12),
        mask in any::<u64>(),
        prev in 0usize..12,
        this in 0usize..12,
        sync in any::<bool>(),
    ) {
        let n = nodes * per_node;
        let (prev, this) = (prev % n, this % n);
        let (topo, common, wakeups) = machine(nodes, per_node, &busy[..n], prev);
        let allowed = CpuMask(mask & CpuMask::first(n).0);
        let params = TaskParams { cpus_allowed: allowed, ..Default::default() };
        common.tasks.init(0, &params, prev, 0);
        let got = wake_from(&common, &wakeups, this, sync);
        let idle = |c: CpuId| busy[c] == 0;
        if !allowed.is_empty() {
            prop_assert!(allowed.contains(got), "placed on {} outside {:#x}", got, allowed.0);
        }
        let nr_allowed = allowed.0.count_ones();
        if nr_allowed > 1 && allowed.contains(prev) {
            let node = topo.node_of[got];
            prop_assert!(node == topo.node_of[prev] || node == topo.node_of[this], "{got} in neither LLC");
            prop_assert!(got == prev || got == this || idle(got), "{got} is busy");
        }
    }
}

#[test]
fn an_idle_cpu_of_the_llc_comes_before_other_nodes() {
    // 2 nodes × 4 CPUs; task 0 last ran on CPU 1; its node's CPU 3 is idle, the other
    // node entirely. A timer wake-up on CPU 1 (the waker is the previous CPU) takes
    // CPU 3, the idle sibling, not CPU 4.
    let (_, common, wakeups) = machine(2, 4, &[1, 1, 1, 0, 0, 0, 0, 0], 1);
    assert_eq!(wake_from(&common, &wakeups, 1, false), 3);
    // With no idle CPU in its LLC, it stays on its previous CPU: select_idle_sibling
    // never leaves the target's LLC, however idle the other node.
    let (_, common, wakeups) = machine(2, 4, &[1, 1, 1, 1, 0, 0, 0, 0], 1);
    assert_eq!(wake_from(&common, &wakeups, 1, false), 1);
    // The previous CPU idle comes first.
    let (_, common, wakeups) = machine(2, 4, &[1, 0, 1, 0, 0, 0, 0, 0], 1);
    assert_eq!(wake_from(&common, &wakeups, 1, false), 1);
}

#[test]
fn wake_affine_weight_pulls_to_the_waker_only_when_its_cpu_is_lighter() {
    // The waker runs alone on CPU 5 (node 1); task 0's previous CPU 1 (node 0) has two
    // tasks: (1024 + 1024) × 100 < 2048 × 108, so the target is the waker's CPU and the
    // wakee lands on the idle CPU 6 of its LLC rather than the idle CPU 2 of node 0.
    let busy = [1, 2, 0, 1, 1, 1, 0, 1];
    let (_, common, wakeups) = machine(2, 4, &busy, 1);
    assert_eq!(wake_from(&common, &wakeups, 5, false), 6);
    // One task on CPU 1: (1024 + 1024) × 100 ≥ 1024 × 108, the target stays the
    // previous CPU, whose LLC has CPU 2 idle.
    let busy = [1, 1, 0, 1, 1, 1, 0, 1];
    let (_, common, wakeups) = machine(2, 4, &busy, 1);
    assert_eq!(wake_from(&common, &wakeups, 5, false), 2);
}

#[test]
fn a_sync_wakee_joins_a_waker_alone_on_its_cpu() {
    // Every CPU busy; the waker runs alone on CPU 4, task 0 last ran on CPU 0 (one
    // task). A sync wake-up (the waker is about to sleep) takes the waker's CPU
    // (wake_affine_idle); the same wake-up without sync stays on CPU 0
    // (wake_affine_weight: 2048 × 100 ≥ 1024 × 108).
    let busy = [1, 1, 1, 1, 1, 1, 1, 1];
    let (_, common, wakeups) = machine(2, 4, &busy, 0);
    assert_eq!(wake_from(&common, &wakeups, 4, true), 4);
    let (_, common, wakeups) = machine(2, 4, &busy, 0);
    assert_eq!(wake_from(&common, &wakeups, 4, false), 0);
    // With a second task queued behind the waker, sync no longer pulls by the idle
    // rule, and by weight (2048 − 1024 + 1024) × 100 ≥ 1024 × 108 + 1: CPU 0.
    let busy = [1, 1, 1, 1, 2, 1, 1, 1];
    let (_, common, wakeups) = machine(2, 4, &busy, 0);
    assert_eq!(wake_from(&common, &wakeups, 4, true), 0);
    // An idle previous CPU wins over the sync rule only if the waking CPU is idle
    // and cache-affine; here the waker runs, so sync takes CPU 4 ...
    let busy = [0, 1, 1, 1, 1, 1, 1, 1];
    let (_, common, wakeups) = machine(2, 4, &busy, 0);
    assert_eq!(wake_from(&common, &wakeups, 4, true), 4);
    // ... and without sync the idle previous CPU keeps the task.
    let (_, common, wakeups) = machine(2, 4, &busy, 0);
    assert_eq!(wake_from(&common, &wakeups, 4, false), 0);
}

#[test]
fn a_waker_of_many_wakes_wide_and_leaves_its_wakees_on_their_llc() {
    // Node 0 has CPUs 0..4, node 1 CPUs 4..8; the waker (task 105 on CPU 5) wakes
    // task 0 (previous CPU 1) with a lighter CPU than CPU 1's, so wake_affine would
    // pull it to node 1 (CPU 6 idle)...
    let busy = [1, 2, 0, 1, 1, 1, 0, 1];
    let (_, common, wakeups) = machine(2, 4, &busy, 1);
    assert_eq!(wake_from(&common, &wakeups, 5, false), 6);
    // ... unless both look many-to-many: the waker has woken 16 different tasks and
    // the wakee 4 (>= the LLC size 4, and 16 >= 4 × 4): wake_wide, no affine wake-up,
    // and the wakee stays in its own LLC (CPU 2).
    let (_, common, wakeups) = machine(2, 4, &busy, 1);
    // Build the flips through wake-ups: task 105 on CPU 5 wakes tasks 10..26 in turn,
    // task 0 (running on CPU 3 meanwhile) wakes tasks 30..34.
    for t in 10..26 {
        common.tasks.init(t, &TaskParams::default(), 7, 0);
        wake_task_from(&common, &wakeups, 5, t);
    }
    common.cpu(3).set_curr(Some(0));
    for t in 30..34 {
        common.tasks.init(t, &TaskParams::default(), 7, 0);
        wake_task_from(&common, &wakeups, 3, t);
    }
    common.cpu(3).set_curr(Some(103));
    assert_eq!((wakeups.wakee_flips(105), wakeups.wakee_flips(0)), (16, 4));
    assert_eq!(wake_from(&common, &wakeups, 5, false), 2);
}

/// Wake task `t` from `this` (its placement is not checked).
fn wake_task_from(common: &SchedCommon, wakeups: &Wakeups, this: CpuId, t: TaskId) {
    let p = NullPlatform::new(this);
    let w = Wake { wakeups, load: |c| common.queue_len(c) as u64 * NICE0, weight: |_| NICE0 };
    select_task_rq(common, &p, &w, t, common.tasks.get(t).processor(), false);
}

#[test]
fn the_recently_used_cpu_is_tried_before_the_llc_scan() {
    // Task 0's wake-up on its previous CPU 1 records 1 as its recent CPU; it then
    // last ran on CPU 3, and CPUs 0 and 1 went idle. Its next wake-up on CPU 3 tries
    // the recent CPU 1 before the LLC scan, which would take CPU 0 first (3 → 0 → 1).
    let (_, common, wakeups) = machine(1, 4, &[1, 1, 1, 1], 1);
    wake_from(&common, &wakeups, 1, false); // records recent_used_cpu = 1
    common.tasks.init(0, &TaskParams::default(), 3, 0);
    common.cpu(1).set_curr(None);
    common.publish_len(1, 0);
    common.cpu(0).set_curr(None);
    common.publish_len(0, 0);
    assert_eq!(wake_from(&common, &wakeups, 3, false), 1);
}

#[test]
fn tunables_scale_with_the_cpu_count_as_the_kernel() {
    // get_update_sysctl_factor: 1 + ilog2(min(ncpus, 8)).
    for (n, f) in [(1, 1), (2, 2), (4, 3), (8, 4), (16, 4)] {
        assert_eq!(Scaling::Log.factor(n), f, "{n} CPUs");
        assert_eq!(Scaling::Linear.factor(n), n.min(8) as u64);
        assert_eq!(Scaling::None.factor(n), 1);
        let cfg = *PolicySpec::parse("cfs").unwrap().config::<cfs::Kind>().unwrap();
        let p = NullPlatform::new(0);
        let pol = Cfs::new(&p, &BuildEnv { topo: &Topology::smp(n), capacity: 4, hz: 100 }, &cfg).unwrap();
        assert_eq!(
            pol.sysctl(),
            Sysctl { latency: 6_000_000 * f, min_granularity: 750_000 * f, wakeup_granularity: 1_000_000 * f }
        );
    }
    let cfg = *PolicySpec::parse("cfs:scaling=none,latency=10ms").unwrap().config::<cfs::Kind>().unwrap();
    assert_eq!(Sysctl::new(&cfg, 16).latency, 10_000_000);
    let cfg = *PolicySpec::parse("cfs:scaling=linear").unwrap().config::<cfs::Kind>().unwrap();
    assert_eq!(Sysctl::new(&cfg, 4).wakeup_granularity, 4_000_000);
}

/// Across nodes farther apart than `RECLAIM_DISTANCE` the NUMA level has no
/// `SD_WAKE_AFFINE`: a wake-up from an idle CPU of another node is not pulled there
/// but placed from the previous CPU, in its node.
#[test]
fn wake_affine_stops_at_reclaim_distance() {
    for (remote, want_node) in [(20u32, 1usize), (100, 0)] {
        let topo = Topology { node_of: vec![0, 0, 1, 1], distance: vec![vec![10, remote], vec![remote, 10]] };
        let p = NullPlatform::new(0);
        let common = SchedCommon::new(&p, &topo, 4, 200, 100);
        // CPU 0 (the wakee's previous CPU) and CPU 1 busy; the waker's CPU 2 busy
        // with the waker only, CPU 3 idle.
        for (c, k) in [(0, 2), (1, 1), (2, 1), (3, 0)] {
            common.cpu(c).set_curr((k > 0).then_some(100 + c as TaskId));
            common.publish_len(c, k);
        }
        common.tasks.init(0, &TaskParams::default(), 0, 0);
        let wakeups = Wakeups::new(&topo, 200);
        let got = wake_from(&common, &wakeups, 2, true);
        assert_eq!(topo.node_of[got], want_node, "remote distance {remote}: placed on {got}");
    }
}
