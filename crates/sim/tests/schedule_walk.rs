//! What a `schedule()` call walks and the queue it starts from, against a run worked
//! out by hand; and the per-message ratios.

use schedlab_core::{PolicySpec, SchedClass, TaskParams};
use schedlab_sim::{simulate, Machine, Report, SimConfig};
use schedlab_workloads::{parse_workload, Metric, Op, Program, Workload};

/// On one CPU, a SCHED_RR root forks `n` SCHED_RR workers of its own priority and
/// exits; each worker yields `yields` times in a row, then exits.
fn yielders(n: u32, yields: u32) -> Workload {
    let rr = TaskParams { class: SchedClass::Rr, rt_priority: 1, ..TaskParams::default() };
    let mut root = vec![Op::Spawn { program: 1, params: rr }; n as usize];
    root.push(Op::Exit);
    Workload {
        spec: "yielders".into(),
        programs: vec![
            Program { role: "root".into(), ops: root },
            Program { role: "worker".into(), ops: vec![Op::Loop { count: yields, body: 1 }, Op::Yield] },
        ],
        channels: 0,
        root: 0,
        root_params: rr,
        metric: Metric::counting("messages/s", Vec::new()),
        expected_messages: 0,
        expected_tasks: n as u64 + 1,
        bound: Vec::new(),
        working_set: Vec::new(),
        buffers: Vec::new(),
    }
}

fn run(machine: &str, policy: &str, w: &Workload) -> Report {
    let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
    simulate(&Machine::preset(machine).unwrap(), &PolicySpec::parse(policy).unwrap(), w, &cfg).unwrap()
}

/// DSS keeps every runnable task on its one list, the running one included, and
/// `schedule()` reads each of them: with `m` tasks linked, a call walks `m`, or `m − 1`
/// when the caller exits and leaves the list first. The workers are SCHED_RR of equal
/// priority, so nothing preempts, no counter is recalculated (their goodness does not
/// depend on it), and a yielding worker keeps its CPU (`schedule()` only replaces it
/// with a strictly better task): each worker yields all its yields, then exits.
///
/// With 4 workers and 10 yields each, the calls are:
/// * the first, which picks the root: 1 linked, walks 1;
/// * the root's exit: 5 linked, walks 4;
/// * while `m` = 4, 3, 2 workers remain: 10 yields on `m` linked, walking `m` each,
///   and the exit on `m` linked, walking `m − 1`;
/// * the last worker's yields find nothing else to run and call no `schedule()`; its
///   exit: 1 linked, walks 0.
///
/// 36 calls; walks 1 + 4 + (11·4 − 1) + (11·3 − 1) + (11·2 − 1) + 0 = 101, the
/// longest 4; lengths 1 + 5 + 11·(4 + 3 + 2) + 1 = 106.
#[test]
fn dss_walks_every_linked_task_and_o1_walks_none() {
    let w = yielders(4, 10);
    let dss = run("up", "dss", &w);
    assert_eq!(dss.schedule_calls, 36, "the calls worked out by hand");
    assert_eq!(dss.policy_stats.iter().find(|(k, _)| k == "recalculations").map(|s| s.1), Some(0));
    assert_eq!(dss.walk_len_mean, (101.0f64 / 36.0 * 1000.0).round() / 1000.0);
    assert_eq!(dss.walk_len_max, 4);
    let a = &dss.rq_at_schedule;
    assert_eq!(a.mean, (106.0f64 / 36.0 * 1000.0).round() / 1000.0);
    // Sorted lengths: 1, 1, 2 ×11, 3 ×11, 4 ×11, 5.
    assert_eq!((a.p50, a.p90, a.p99, a.max), (3, 4, 5, 5));

    // O(1) picks from its priority bitmap and, on one CPU, never balances: no walk,
    // on the same calls' queue lengths (it counts the running task too).
    let o1 = run("up", "o1", &w);
    assert!(o1.schedule_calls > 0);
    assert_eq!((o1.walk_len_mean, o1.walk_len_max), (0.0, 0));
    assert!(o1.rq_at_schedule.max >= 2, "{:?}", o1.rq_at_schedule);
}

/// The engine's measure on a script of policy calls: DSS with `N` runnable tasks on
/// one CPU reads all `N` in each `schedule()`, and a call that switches away from a
/// preempted task then places it (`reschedule_idle` reads it and the task running
/// here), reads that `schedule_tail` makes under the lock, which the walk leaves out
/// and the miss ratio's count of locked reads keeps. O(1) reads none.
#[test]
fn a_walk_is_the_pick_not_the_placement_after_it() {
    use schedlab_core::{BuildEnv, Platform, Policy, PolicySource, PrevState, Topology};
    use schedlab_sim::cost::CostModel;
    use schedlab_sim::platform::SimPlatform;
    const N: u32 = 5;
    let m = Machine::preset("up").unwrap();
    let script = |spec: &str| {
        let p = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 16, m.l2_kb, m.l2_assoc, m.line_bytes, 1);
        let env = BuildEnv { topo: &Topology::smp(1), capacity: 16, hz: 100 };
        let pol: Box<dyn Policy<SimPlatform>> = PolicySpec::parse(spec).unwrap().build(&p, &env).unwrap();
        let mut now = 0;
        p.begin(0, now);
        for t in 0..N {
            pol.task_new(&p, t, &TaskParams::default(), None);
            pol.wake_up(&p, t, false);
        }
        let (mut walks, mut placed) = (Vec::new(), Vec::new());
        let mut curr = None;
        for _ in 0..8 {
            now += 10_000;
            p.begin(0, now);
            // A tick takes one from the running task's counter: when another task is
            // better now, the switch places the preempted one.
            pol.tick(&p, curr);
            let (mark, reads) = (p.walk_start(), p.bus_stats().locked_task_reads);
            let next = pol.schedule(&p, curr, PrevState::Runnable);
            let walk = p.walked_since(mark);
            walks.push(walk);
            // Locked reads beyond the walk, and whether the call switched away.
            placed.push((p.bus_stats().locked_task_reads - reads - walk, curr.is_some() && next != curr));
            assert!(next.is_some());
            curr = next;
        }
        assert_eq!(p.this_cpu(), 0);
        (walks, placed)
    };
    let (walks, placed) = script("dss");
    assert_eq!(walks, vec![N as u64; 8], "every call reads the {N} linked tasks");
    // A call that switched away from the preempted task places it: its line and the
    // new running task's, read under the lock after the pick.
    assert!(placed.iter().filter(|p| p.1).count() >= 4, "{placed:?}");
    assert!(placed.iter().all(|&(extra, switched)| extra == if switched { 2 } else { 0 }), "{placed:?}");
    let (walks, _) = script("o1");
    assert_eq!(walks, vec![0; 8]);
}

/// The walk grows with the list DSS keeps: twice the workers, a longer walk.
#[test]
fn dss_walk_follows_the_number_of_linked_tasks() {
    let small = run("up", "dss", &yielders(4, 10));
    let large = run("up", "dss", &yielders(8, 10));
    assert_eq!(large.walk_len_max, 8);
    assert!(large.walk_len_mean > small.walk_len_mean);
}

#[test]
fn per_message_ratios_divide_by_received_messages_and_are_null_without() {
    let r = run("smp-2", "dss", &parse_workload("chat:rooms=1,messages=5").unwrap());
    assert!(r.messages_received > 0);
    let per = |n: u64| Some((n as f64 / r.messages_received as f64 * 1000.0).round() / 1000.0);
    assert_eq!(r.switches_per_message, per(r.context_switches));
    assert_eq!(r.migrations_per_message, per(r.migrations));
    let none = run("up", "dss", &yielders(2, 1));
    assert_eq!((none.switches_per_message, none.migrations_per_message), (None, None));
    let json = serde_json::to_value(&none).unwrap();
    assert!(json["switches_per_message"].is_null() && json["migrations_per_message"].is_null());
    assert!(none.to_text().contains("per message       - (no messages)"));
}
