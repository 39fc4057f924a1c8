//! End-to-end properties of the simulator: conservation, determinism, invariants,
//! deadlock detection, and physically necessary trends.

use proptest::prelude::*;
use schedlab_core::{PolicySpec, TaskParams};
use schedlab_sim::{simulate, Machine, Report, SimConfig, SimError};
use schedlab_workloads::{parse_workload, Buffer, Metric, Op, Program, Workload};

const POLICIES: &[&str] = &["dss", "mqs"];
/// PMQS with each balancer; pool=1 divides every CPU count.
/// Per-CPU policies with their own invariants (O(1)'s bitmaps match its lists, every
/// queued task is in exactly one array), in the random-workload property below.
const PER_CPU: &[&str] = &[
    "o1",
    "o1:scale=off,expired_prio_guard=on,starvation_limit=3",
    "cfs",
    "cfs:yield=tail",
    "eevdf",
    "eevdf:run_to_parity=off,delay_dequeue=off,place_lag=off",
];
const PMQS: &[&str] =
    &["pmqs:pool=1,lb=off", "pmqs:pool=1,lb=ip", "pmqs:pool=1,lb=lbp,period=10", "pmqs:pool=1,lb=lbc"];

fn run(machine: &Machine, policy: &str, workload: &Workload, seed: u64, check: bool) -> Result<Report, SimError> {
    let cfg = SimConfig { seed, check_invariants: check, ..SimConfig::default() };
    simulate(machine, &PolicySpec::parse(policy).unwrap(), workload, &cfg)
}

fn deterministic_json(r: &Report) -> String {
    let mut v = serde_json::to_value(r).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("wall_s");
    o.remove("events_per_sec");
    serde_json::to_string(&v).unwrap()
}

fn assert_conserved(r: &Report, w: &Workload) {
    assert_eq!(r.messages_sent, w.expected_messages, "{} {}: sent", r.policy, r.workload);
    assert_eq!(r.messages_received, w.expected_messages, "{} {}: received", r.policy, r.workload);
    assert_eq!(r.tasks, w.expected_tasks, "{} {}: tasks", r.policy, r.workload);
    assert!(r.virtual_ns > 0 && r.throughput > 0.0);
}

#[test]
fn every_policy_machine_and_workload_conserves_messages_and_tasks() {
    let workloads = [
        "chat:rooms=2,messages=10",
        "hackbench:groups=1,loops=10",
        "pingpong:rounds=500",
        "mkbench:builds=1,jobs=3,units=6",
    ];
    let numa_pools = ["pmqs:pool=4,lb=off", "pmqs:pool=4,lb=ip", "pmqs:pool=8,lb=lbp,period=45", "pmqs:pool=4,lb=lbc"];
    for m in ["up", "smp-2", "smp-8", "numa-4x4"] {
        let machine = Machine::preset(m).unwrap();
        let extra: &[&str] = if m == "numa-4x4" { &numa_pools } else { PMQS };
        for p in POLICIES.iter().chain(extra) {
            for ws in workloads {
                let w = parse_workload(ws).unwrap();
                let r = run(&machine, p, &w, 7, true).unwrap_or_else(|e| panic!("{m} {p} {ws}: {e}"));
                assert_conserved(&r, &w);
                // Every counted unit of these workloads is one received message on a counted channel.
                assert!(r.completed > 0 && r.completed <= r.messages_received);
            }
        }
    }
}

#[test]
fn same_seed_same_bytes_and_seed_is_echoed() {
    let machine = Machine::preset("numa-4x4").unwrap();
    let w = parse_workload("chat:rooms=3,messages=10,think=2000").unwrap();
    for p in POLICIES {
        let a = run(&machine, p, &w, 42, false).unwrap();
        let b = run(&machine, p, &w, 42, false).unwrap();
        assert_eq!(deterministic_json(&a), deterministic_json(&b), "{p}");
        assert_eq!(a.seed, 42);
    }
}

#[test]
fn runs_are_deterministic_across_threads() {
    // Parallel sweeps run simulations on several threads: results must not depend on it.
    let machine = Machine::preset("smp-8").unwrap();
    let w = parse_workload("hackbench:groups=2,loops=10").unwrap();
    let serial: Vec<String> =
        POLICIES.iter().map(|p| deterministic_json(&run(&machine, p, &w, 3, false).unwrap())).collect();
    let handles: Vec<_> = POLICIES
        .iter()
        .map(|p| {
            let (m, w) = (machine.clone(), w.clone());
            std::thread::spawn(move || deterministic_json(&run(&m, p, &w, 3, false).unwrap()))
        })
        .collect();
    let parallel: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(serial, parallel);
}

fn one_task_workload(ops: Vec<Op>, channels: u32) -> Workload {
    let params = TaskParams::default();
    Workload {
        spec: "custom".into(),
        programs: vec![
            Program { role: "root".into(), ops: vec![Op::Spawn { program: 1, params }] },
            Program { role: "worker".into(), ops },
        ],
        channels,
        root: 0,
        root_params: params,
        metric: Metric::counting("messages/s", vec![true; channels as usize]),
        expected_messages: 0,
        expected_tasks: 2,
        bound: Vec::new(),
        working_set: Vec::new(),
        buffers: Vec::new(),
    }
}

/// A producer sending `n` messages on channel 0, carried by `buffer`, and a consumer
/// receiving them.
fn producer_consumer(n: u32, buffer: Buffer) -> Workload {
    let params = TaskParams::default();
    let mut w = one_task_workload(vec![Op::Loop { count: n, body: 1 }, Op::Send { chan: 0, bytes: 100 }], 1);
    w.programs[0].ops.push(Op::Spawn { program: 2, params });
    w.programs
        .push(Program { role: "consumer".into(), ops: vec![Op::Loop { count: n, body: 1 }, Op::Recv { chan: 0 }] });
    w.expected_messages = n as u64;
    w.expected_tasks = 3;
    w.buffers = vec![buffer];
    w
}

#[test]
fn a_full_channel_blocks_its_sender_until_a_receive_frees_it() {
    let window = Buffer::Window { max: 4, wake_at: 1 };
    for m in ["up", "smp-2"] {
        let machine = Machine::preset(m).unwrap();
        for p in POLICIES.iter().chain(PER_CPU) {
            let bounded = run(&machine, p, &producer_consumer(100, window), 1, true).unwrap();
            assert_conserved(&bounded, &producer_consumer(100, window));
            // A producer that runs ahead blocks at most once per send. On one CPU
            // under 2.4's policies a wake-up does not preempt the running task, so the
            // producer fills the channel, the consumer drains it, and the producer
            // fills it again: a block per 4 sends, the last 4 excepted. (cfs and eevdf
            // let the woken consumer preempt, and the two may alternate without ever
            // filling it.)
            assert!(bounded.send_blocks <= 100, "{m} {p}: {}", bounded.send_blocks);
            if m == "up" && POLICIES.contains(p) {
                assert!(bounded.send_blocks >= 100 / 4 - 1, "{m} {p}: {}", bounded.send_blocks);
            }
            let free = run(&machine, p, &producer_consumer(100, Buffer::Unbounded), 1, true).unwrap();
            assert_eq!(free.send_blocks, 0, "{m} {p}");
        }
    }
}

#[test]
fn hackbench_senders_block_on_a_full_unix_socket() {
    // One sender, one receiver, 1,000 messages of 100 bytes: a 2.4 socket holds 228.
    let machine = Machine::preset("up").unwrap();
    let r = run(&machine, "dss", &parse_workload("hackbench:groups=1,fds=1,loops=1000").unwrap(), 1, true).unwrap();
    assert!(r.send_blocks > 0, "the sender never found the socket full");
    let r = run(
        &machine,
        "dss",
        &parse_workload("hackbench:groups=1,fds=1,loops=1000,channel=unbounded").unwrap(),
        1,
        true,
    )
    .unwrap();
    assert_eq!(r.send_blocks, 0);
}

#[test]
fn a_send_to_a_full_channel_nobody_reads_is_reported_as_deadlock() {
    let mut w = one_task_workload(vec![Op::Send { chan: 0, bytes: 100 }, Op::Send { chan: 0, bytes: 100 }], 1);
    w.buffers = vec![Buffer::Window { max: 1, wake_at: 0 }];
    let machine = Machine::preset("smp-2").unwrap();
    for p in POLICIES {
        match run(&machine, p, &w, 1, false) {
            Err(SimError::Deadlock(msg)) => assert!(msg.contains("blocked"), "{msg}"),
            other => panic!("{p}: expected a deadlock, got {other:?}"),
        }
    }
}

#[test]
fn a_receive_nobody_answers_is_reported_as_deadlock() {
    let w = one_task_workload(vec![Op::Recv { chan: 0 }], 1);
    let machine = Machine::preset("smp-2").unwrap();
    for p in POLICIES {
        match run(&machine, p, &w, 1, false) {
            Err(SimError::Deadlock(msg)) => assert!(msg.contains("blocked"), "{msg}"),
            other => panic!("{p}: expected a deadlock, got {other:?}"),
        }
    }
}

#[test]
fn sleep_and_yield_and_compute_take_the_time_they_should() {
    // One task: compute 7000 cycles (10 µs at 700 MHz), sleep 1 ms, yield, exit.
    let w = one_task_workload(vec![Op::Compute { cycles: 7000 }, Op::Sleep { ns: 1_000_000 }, Op::Yield], 0);
    let machine = Machine::preset("up").unwrap();
    for p in POLICIES {
        let r = run(&machine, p, &w, 1, true).unwrap();
        assert!(r.virtual_ns > 1_010_000, "{p}: {} ns is shorter than the work", r.virtual_ns);
        assert!(r.virtual_ns < 1_200_000, "{p}: {} ns is far longer than the work", r.virtual_ns);
    }
}

#[test]
fn dss_lock_contention_grows_with_cpus() {
    // One global lock taken by every schedule() and wake-up: more CPUs, more contention.
    let w = parse_workload("chat:rooms=2,messages=20").unwrap();
    let pct = |m: &str| run(&Machine::preset(m).unwrap(), "dss", &w, 1, false).unwrap().locks[0].contention_pct;
    let (two, eight) = (pct("smp-2"), pct("smp-8"));
    assert!(eight > two, "contention smp-8 {eight}% should exceed smp-2 {two}%");
}

#[test]
fn mqs_has_a_lock_per_cpu_and_less_contention_than_dss_on_numa() {
    let w = parse_workload("chat:rooms=4,messages=20").unwrap();
    let m = Machine::preset("numa-4x4").unwrap();
    let dss = run(&m, "dss", &w, 1, false).unwrap();
    let mqs = run(&m, "mqs", &w, 1, false).unwrap();
    assert_eq!(dss.locks.iter().map(|l| l.instances).sum::<u32>(), 1);
    assert_eq!(mqs.locks.iter().map(|l| l.instances).sum::<u32>(), 16);
    let wait = |r: &Report| r.locks.iter().map(|l| l.wait_mean_ns * l.acquisitions as f64).sum::<f64>();
    assert!(wait(&mqs) < wait(&dss), "MQS total lock wait {} should be below DSS {}", wait(&mqs), wait(&dss));
}

#[test]
fn pmqs_of_the_whole_machine_pays_for_its_shared_idle_bitmap() {
    // Same decisions as MQS in the policy, but every idle transition writes one
    // machine-wide word. Compared on one script of policy calls (each CPU in turn wakes
    // its own task, runs it and idles again), so that both policies make exactly the
    // same calls: an engine run's timing differs with the costs, and its switch counts
    // with it.
    use schedlab_core::{BuildEnv, Platform, Policy, PolicySource, PolicySpec, PrevState, TaskParams, Topology};
    use schedlab_sim::cost::CostModel;
    use schedlab_sim::platform::SimPlatform;
    let m = Machine::preset("smp-8").unwrap();
    let script = |spec: &str| {
        let p = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 16, m.l2_kb, m.l2_assoc, m.line_bytes, 1);
        let env = BuildEnv { topo: &Topology::smp(8), capacity: 16, hz: 100 };
        let pol: Box<dyn Policy<SimPlatform>> = PolicySpec::parse(spec).unwrap().build(&p, &env).unwrap();
        let mut now = 0;
        for cpu in 0..8 {
            p.begin(cpu, now);
            let params = TaskParams { cpus_allowed: schedlab_core::CpuMask::single(cpu), ..TaskParams::default() };
            pol.task_new(&p, cpu as u32, &params, None);
        }
        let mut ran = Vec::new();
        for _round in 0..20 {
            for cpu in 0..8 {
                now += 10_000;
                p.begin(cpu, now);
                pol.wake_up(&p, cpu as u32, false);
                ran.push(pol.schedule(&p, None, PrevState::Runnable));
                now += 10_000;
                p.begin(cpu, now);
                ran.push(pol.schedule(&p, Some(cpu as u32), PrevState::Blocked));
            }
        }
        assert!(p.this_cpu() < 8);
        (ran, p.bus_stats().by[1].iter().sum::<u64>())
    };
    let (mqs_ran, mqs_sched) = script("mqs");
    let (pmqs_ran, pmqs_sched) = script("pmqs:pool=8,lb=off");
    assert_eq!(pmqs_ran, mqs_ran, "the same decisions");
    assert!(mqs_ran.iter().step_by(2).all(|r| r.is_some()) && mqs_ran.iter().skip(1).step_by(2).all(|r| r.is_none()));
    // 160 wake-run-idle cycles, each starting with a store into the one word the CPU
    // before wrote last (the cycle's second store finds the word still here).
    assert!(
        pmqs_sched >= mqs_sched + 160,
        "PMQS sched-line transactions {pmqs_sched} should exceed MQS's {mqs_sched} by one per cycle"
    );
}

fn machine_strategy() -> impl Strategy<Value = Machine> {
    (1usize..=8, 0usize..3, prop::sample::select(vec![100u32, 250, 1000]), 10u32..=120).prop_map(
        |(cpus, nodes_pow, hz, remote)| {
            let nodes = (1usize << nodes_pow).min(cpus);
            let nodes = if cpus % nodes == 0 { nodes } else { 1 };
            let text = format!("cpus = {cpus}\nnodes = {nodes}\nhz = {hz}\nremote_distance = {remote}\n");
            Machine::from_toml(&text).unwrap()
        },
    )
}

fn workload_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..=2, 1u32..=6, 2u32..=5, 0u64..3000)
            .prop_map(|(r, m, u, t)| format!("chat:rooms={r},messages={m},users={u},think={t}")),
        (1u32..=2, 1u32..=6, 2u32..=5, 1u32..=3)
            .prop_map(|(r, m, u, w)| format!("chat:rooms={r},messages={m},users={u},window={w}")),
        (1u32..=2, 1u32..=6, 1u32..=5).prop_map(|(g, l, f)| format!("hackbench:groups={g},loops={l},fds={f}")),
        (1u32..=200, 0u64..5000).prop_map(|(n, c)| format!("pingpong:rounds={n},compute={c}")),
        (1u32..=6, 1u32..=30, 0u32..=3, 0u64..3_000_000, 0u64..2_000_000).prop_map(|(c, o, p, t, w)| format!(
            "netbench:clients={c},ops={o},probes={p},think_ns={t},work={w},probe_every_ns=1000000"
        )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_machines_and_workloads_conserve_and_keep_invariants(
        machine in machine_strategy(),
        ws in workload_strategy(),
        policy in prop::sample::select([POLICIES, PMQS, PER_CPU].concat()),
        seed in 0u64..1000,
    ) {
        let w = parse_workload(&ws).unwrap();
        let r = run(&machine, policy, &w, seed, true);
        prop_assert!(r.is_ok(), "{} cpus / {} nodes, {policy}, {ws}: {:?}", machine.cpus, machine.nodes, r.err());
        let r = r.unwrap();
        prop_assert_eq!(r.messages_sent, w.expected_messages);
        prop_assert_eq!(r.messages_received, w.expected_messages);
        prop_assert_eq!(r.tasks, w.expected_tasks);
    }
}

/// A progress observer sees the run advance and does not change it.
#[test]
fn progress_is_reported_and_changes_nothing() {
    use std::sync::{Arc, Mutex};
    let machine = Machine::preset("smp-8").unwrap();
    // A few million events: several progress reports.
    let w = schedlab_workloads::parse_workload("chat:rooms=10,messages=300").unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let cfg = SimConfig {
        progress: Some(Arc::new(move |p: schedlab_sim::Progress| s.lock().unwrap().push(p))),
        ..SimConfig::default()
    };
    let spec = PolicySpec::parse("dss").unwrap();
    let with = simulate(&machine, &spec, &w, &cfg).unwrap();
    let without = simulate(&machine, &spec, &w, &SimConfig::default()).unwrap();
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty(), "{} events, no progress", with.sim_events);
    assert_eq!(seen.len() as u64, with.sim_events / schedlab_sim::config::PROGRESS_EVERY);
    assert!(seen.windows(2).all(|p| p[0].events < p[1].events && p[0].virtual_ns <= p[1].virtual_ns));
    assert_eq!((with.throughput, with.sim_events), (without.throughput, without.sim_events));
}
