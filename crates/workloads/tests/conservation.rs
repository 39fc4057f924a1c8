//! Message conservation and task counts, checked by executing the programs with the
//! reference interpreters of `common` (static loop expansion and a dynamic
//! one-instruction-at-a-time run).

mod common;

use common::{run, static_totals};
use proptest::prelude::*;
use schedlab_workloads::{parse_workload, Op, Workload};

/// Static checks every workload must pass.
fn check_static(w: &Workload) -> common::Totals {
    w.validate().unwrap_or_else(|e| panic!("{}: {e}", w.spec));
    let t = static_totals(w);
    assert_eq!(t.tasks, w.expected_tasks, "{}: tasks", w.spec);
    let sent: u64 = t.sends.values().sum();
    let received: u64 = t.recvs.values().sum();
    assert_eq!(sent, w.expected_messages, "{}: sends", w.spec);
    assert_eq!(received, w.expected_messages, "{}: receives", w.spec);
    for c in 0..w.channels {
        let s = t.sends.get(&c).copied().unwrap_or(0);
        let r = t.recvs.get(&c).copied().unwrap_or(0);
        assert_eq!(s, r, "{}: channel {c}: {s} sends, {r} receives", w.spec);
    }
    t
}

/// The roles of the programs that `ops` spawns, in order.
fn spawned_roles<'w>(w: &'w Workload, ops: &[Op]) -> Vec<&'w str> {
    ops.iter()
        .filter_map(|op| match op {
            Op::Spawn { program, .. } => Some(w.programs[*program as usize].role.as_str()),
            _ => None,
        })
        .collect()
}

fn check_dynamic(w: &Workload, seeds: u64) {
    let t = static_totals(w);
    for seed in 1..=seeds {
        let r = run(w, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), 100_000_000);
        assert_eq!(r.tasks, w.expected_tasks, "{} seed {seed}", w.spec);
        assert_eq!(r.sends, t.sends, "{} seed {seed}", w.spec);
        assert_eq!(r.recvs, t.recvs, "{} seed {seed}", w.spec);
        assert_eq!(r.counted, t.counted, "{} seed {seed}", w.spec);
    }
}

#[test]
fn chat_counts() {
    for (r, m) in [(10, 100), (20, 200), (30, 300), (1, 1)] {
        let w = parse_workload(&format!("chat:rooms={r},messages={m}")).unwrap();
        let t = check_static(&w);
        let (r, m) = (r as u64, m as u64);
        // 80 threads per room and the two programs' main threads.
        assert_eq!(w.expected_tasks, 80 * r + 2);
        // The client's count: 20 users · M messages sent, and 19 deliveries of each.
        assert_eq!(t.counted, r * 20 * m + r * 20 * m * 19);
        // Client sends, semaphore signals, server→client sends, two start releases per
        // user; one accepted connection per user, the control connection, the start.
        assert_eq!(w.expected_messages, 2 * r * 20 * m + r * 20 * m * 19 + 3 * r * 20 + 2);
        assert_eq!(w.metric.unit, "messages/s");
        assert_eq!(w.channels as u64, 100 * r + 2);
        // Client tasks in mm 1, server tasks in mm 2; each program creates its own.
        let mut spawned = 0;
        for prog in &w.programs {
            for op in &prog.ops {
                if let Op::Spawn { program, params } = op {
                    let role = &w.programs[*program as usize].role;
                    let mm = if role.starts_with("client") { 1 } else { 2 };
                    assert_eq!(params.mm, mm, "{role}");
                    let parent_mm = if prog.role == "root" { 1 } else { 2 };
                    assert!(role == "server_main" || parent_mm == mm, "{} spawns {role}", prog.role);
                    spawned += 1;
                }
            }
        }
        assert_eq!(spawned + 1, w.expected_tasks);
        // The clock starts once, after the server's start message and before the release.
        let root = &w.programs[w.root as usize].ops;
        let clock = root.iter().position(|op| *op == Op::StartClock).expect("chat starts its clock");
        assert!(matches!(root[clock - 1], Op::Recv { .. }));
        assert!(root[clock + 1..].iter().all(|op| matches!(op, Op::Send { .. } | Op::Exit)));
    }
    // The configurations of the seed paper: messages sent plus deliveries, as the client counts.
    let d = |s: &str| static_totals(&parse_workload(s).unwrap()).counted;
    assert_eq!(d("chat:rooms=10,messages=100"), 20_000 + 380_000);
    assert_eq!(d("chat:rooms=20,messages=200"), 80_000 + 1_520_000);
    assert_eq!(d("chat:rooms=30,messages=300"), 180_000 + 3_420_000);
}

#[test]
fn chat_starts_every_thread_before_releasing_the_clients() {
    let w = parse_workload("chat:rooms=2,messages=3,users=3").unwrap();
    let root = &w.programs[w.root as usize];
    let server = w.programs.iter().find(|p| p.role == "server_main").expect("chat_s's main thread");
    // The client's main thread starts the server, then creates the client threads; the
    // server's creates the server threads, one receive and one send thread per
    // connection it accepts.
    let roles = spawned_roles(&w, &root.ops);
    assert_eq!(roles[0], "server_main");
    assert_eq!(roles.len(), 13);
    assert!(roles[1..].iter().all(|r| r.starts_with("client")), "{roles:?}");
    let server_roles = spawned_roles(&w, &server.ops);
    assert_eq!(server_roles.len(), 12);
    assert!(server_roles.iter().all(|r| r.starts_with("server_")), "{server_roles:?}");
    let accept = match server.ops[0] {
        Op::Recv { chan } => chan,
        ref op => panic!("server_main starts with {op:?}"),
    };
    let accepts = server.ops.iter().filter(|op| **op == Op::Recv { chan: accept }).count();
    let connects = root.ops.iter().filter(|op| matches!(op, Op::Send { chan, .. } if *chan == accept)).count();
    assert_eq!((accepts, connects), (7, 7), "six users' connections and the control connection");
    // The server tells the client when it has every thread; only then does the client
    // start its clock and release its threads, after its last spawn.
    let Some(&Op::Send { chan: start, .. }) = server.ops.last() else {
        panic!("server_main ends with its start message")
    };
    let waits = root.ops.iter().position(|op| *op == Op::Recv { chan: start }).expect("the client waits for the start");
    assert_eq!(root.ops[waits + 1], Op::StartClock);
    assert!(root.ops[..waits].iter().filter(|op| matches!(op, Op::Spawn { .. })).count() == 13);
    let releases = &root.ops[waits + 2..];
    assert_eq!(releases.iter().filter(|op| matches!(op, Op::Send { .. })).count(), 12);
    assert!(releases.iter().all(|op| matches!(op, Op::Send { .. } | Op::Exit)));
    for p in w.programs.iter().filter(|p| p.role.starts_with("client")) {
        assert!(matches!(p.ops[0], Op::Recv { .. }), "{}: {:?}", p.role, p.ops[0]);
    }
    assert_eq!(w.root_params.class, schedlab_core::SchedClass::Fifo);
    assert_eq!(root.ops.last(), Some(&Op::Exit));
}

#[test]
fn chat_with_the_root_creating_every_thread() {
    let w = parse_workload("chat:rooms=2,messages=3,users=3,threads=root").unwrap();
    let t = check_static(&w);
    assert_eq!(w.expected_tasks, 4 * 6 + 1);
    assert!(w.programs.iter().all(|p| p.role != "server_main"));
    // The root creates all four threads of each user, each in its own program's
    // address space, then reads its clock and releases the client threads.
    let root = &w.programs[w.root as usize].ops;
    let roles = spawned_roles(&w, root);
    assert_eq!(roles.len(), 24);
    for role in ["client_send", "server_receive", "server_send", "client_receive"] {
        assert_eq!(roles.iter().filter(|r| **r == role).count(), 6, "{role}");
    }
    for op in root {
        if let Op::Spawn { program, params } = op {
            let role = &w.programs[*program as usize].role;
            assert_eq!(params.mm, if role.starts_with("client") { 1 } else { 2 }, "{role}");
        }
    }
    let clock = root.iter().position(|op| *op == Op::StartClock).expect("chat starts its clock");
    assert!(root[..clock].iter().all(|op| matches!(op, Op::Spawn { .. })));
    assert_eq!(root[clock + 1..].iter().filter(|op| matches!(op, Op::Send { .. })).count(), 12);
    // The same messages are counted as when each program creates its own threads.
    let own = static_totals(&parse_workload("chat:rooms=2,messages=3,users=3").unwrap());
    assert_eq!(t.counted, own.counted);
}

#[test]
fn chat_compute_options() {
    let w = parse_workload("chat:rooms=1,messages=2,users=2,think=500,work=0").unwrap();
    check_static(&w);
    let has = |role: &str, op: Op| w.programs.iter().filter(|p| p.role == role).all(|p| p.ops.contains(&op));
    assert!(has("client_send", Op::Compute { cycles: 500 }));
    assert!(w
        .programs
        .iter()
        .all(|p| p.role == "client_send" || !p.ops.iter().any(|op| matches!(op, Op::Compute { .. }))));
    let w = parse_workload("chat:rooms=1,messages=2").unwrap();
    assert!(w
        .programs
        .iter()
        .filter(|p| p.role == "server_send")
        .all(|p| p.ops.contains(&Op::Compute { cycles: 300 })));
}

#[test]
fn hackbench_counts() {
    for (g, l) in [(10, 100), (1, 1), (25, 1000)] {
        for threads in [0, 1] {
            let w = parse_workload(&format!("hackbench:groups={g},loops={l},threads={threads}")).unwrap();
            let t = check_static(&w);
            let (g, l) = (g as u64, l as u64);
            assert_eq!(w.expected_tasks, 40 * g + 1);
            assert_eq!(t.counted, g * 20 * 20 * l);
            // The test's messages, and each child's ready byte and release.
            assert_eq!(w.expected_messages, g * 400 * l + 2 * 40 * g);
            // Each receiver reads 20·loops messages, the parent one ready byte per child.
            let receivers = (g * 20) as u32;
            assert!((0..receivers).all(|c| t.recvs[&c] == 20 * l));
            assert_eq!(t.recvs[&receivers], 40 * g);
            let mms: Vec<u32> = w.programs[w.root as usize]
                .ops
                .iter()
                .filter_map(|op| match op {
                    Op::Spawn { params, .. } => Some(params.mm),
                    _ => None,
                })
                .collect();
            let mut distinct = mms.clone();
            distinct.sort();
            distinct.dedup();
            if threads == 1 {
                assert_eq!(distinct, vec![w.root_params.mm]);
            } else {
                assert_eq!(distinct.len(), mms.len());
                assert!(!distinct.contains(&w.root_params.mm));
            }
        }
    }
}

#[test]
fn hackbench_forks_each_group_receivers_first_and_releases_after_every_ready() {
    let w = parse_workload("hackbench:groups=3,loops=2,fds=4").unwrap();
    let root = &w.programs[w.root as usize];
    let roles = spawned_roles(&w, &root.ops);
    assert_eq!(roles.len(), 24);
    for group in roles.chunks(8) {
        assert_eq!(group, ["receiver"; 4].iter().chain(&["sender"; 4]).copied().collect::<Vec<_>>());
    }
    // Every child says it is ready and waits for its own release before any message.
    let mut releases = Vec::new();
    let mut ready = None;
    for p in &w.programs[1..] {
        let (Op::Send { chan: r, .. }, Op::Recv { chan: go }) = (&p.ops[0], &p.ops[1]) else {
            panic!("{} starts with {:?}", p.role, &p.ops[..2]);
        };
        assert_eq!(*ready.get_or_insert(*r), *r, "one ready pipe for all");
        releases.push(*go);
    }
    // The parent reads every ready byte, then starts the clock, then releases each
    // child once, without a spawn or a wait in between.
    let clock = root.ops.iter().position(|op| *op == Op::StartClock).expect("the parent starts the clock");
    let readies = root.ops[..clock].iter().filter(|op| **op == Op::Recv { chan: ready.unwrap() }).count();
    assert_eq!(readies, 24);
    let sent: Vec<u32> = root.ops[clock + 1..]
        .iter()
        .filter_map(|op| match op {
            Op::Send { chan, .. } => Some(*chan),
            Op::Exit => None,
            op => panic!("the release holds {op:?}"),
        })
        .collect();
    assert_eq!(sent, releases);
    assert_eq!(w.root_params.class, schedlab_core::SchedClass::Fifo);
}

#[test]
fn hackbench_without_the_barrier_forks_every_receiver_first_and_starts_at_once() {
    let w = parse_workload("hackbench:groups=3,loops=2,fds=4,start=fork").unwrap();
    let t = check_static(&w);
    assert_eq!((w.channels, t.counted, w.expected_messages), (12, 3 * 16 * 2, 3 * 16 * 2));
    let root = &w.programs[w.root as usize];
    let roles = spawned_roles(&w, &root.ops);
    assert_eq!(roles, [["receiver"; 12], ["sender"; 12]].concat());
    assert_eq!(root.ops.last(), Some(&Op::Exit));
    assert!(!root.ops.contains(&Op::StartClock));
    assert!(w.programs[1..].iter().all(|p| matches!(p.ops[0], Op::Loop { .. })));
    assert_eq!(w.root_params.class, schedlab_core::SchedClass::Other);
}

#[test]
fn pingpong_counts() {
    let w = parse_workload("pingpong:rounds=1000,compute=50").unwrap();
    let t = check_static(&w);
    assert_eq!(w.expected_tasks, 3);
    assert_eq!(w.expected_messages, 2000);
    assert_eq!(t.counted, 1000);
    assert_eq!(w.metric.unit, "round trips/s");
    // Strict alternation: never more than one message in flight.
    let r = run(&w, 7, 1_000_000);
    assert_eq!(r.max_queue, 1);
    assert_eq!(r.counted, 1000);
}

#[test]
fn dynamic_runs_complete_without_deadlock() {
    for s in [
        "chat:rooms=2,messages=5,users=4",
        "chat:rooms=1,messages=3,users=2,think=10",
        "chat:rooms=3,messages=10",
        "hackbench:groups=2,loops=5,fds=4",
        "hackbench:groups=1,loops=3,threads=1",
        "pingpong:rounds=50",
        "mkbench:builds=2,jobs=3,units=10",
        "mkbench:builds=3,jobs=8,units=5,io_ns=0,link=0",
        "mkbench:builds=1,jobs=1,units=4",
        "netbench:clients=3,ops=20,probes=4",
        "netbench:clients=1,ops=5,probes=0,io_ns=1000,think_ns=0,irq=0,work=0",
        "webbench:servers=8,clients=3,requests=4",
        "webbench:servers=2,clients=5,requests=3,depth=3,ws=0,irq=0",
        "webbench:servers=5,clients=5,requests=1,depth=1,work=0",
    ] {
        let w = parse_workload(s).unwrap();
        check_static(&w);
        check_dynamic(&w, 5);
    }
}

#[test]
fn mkbench_counts_and_shape() {
    for (b, j, u) in [(2, 8, 64), (1, 4, 4), (3, 16, 5), (4, 1, 9)] {
        let w = parse_workload(&format!("mkbench:builds={b},jobs={j},units={u}")).unwrap();
        let t = check_static(&w);
        let (b64, u64_) = (b as u64, u as u64);
        assert_eq!(w.expected_tasks, 1 + b64 * (1 + u64_));
        assert_eq!(w.expected_messages, b64 * u64_);
        // Throughput counts job completions: one per compile unit.
        assert_eq!(t.counted, b64 * u64_);
        assert_eq!(w.metric.unit, "jobs/s");
        assert_eq!(w.channels, b);
        // Programs: root + make and job per build, independent of units.
        assert_eq!(w.programs.len(), 1 + 2 * b as usize);
        for p in w.programs.iter().filter(|p| p.role == "job") {
            assert!(p.ops.iter().any(|op| matches!(op, Op::ComputeUniform { .. })));
            assert_eq!(p.ops.iter().filter(|op| matches!(op, Op::Sleep { .. })).count(), 2);
        }
        // make spawns min(J, U) jobs before its first receive: the pre-filled slots.
        let make = w.programs.iter().find(|p| p.role == "make").unwrap();
        let Op::Loop { count, .. } = make.ops[0] else { panic!("make starts with a loop") };
        assert_eq!(count, j.min(u));
        assert!(matches!(make.ops[1], Op::Spawn { .. }));
        assert!(matches!(make.ops[make.ops.len() - 2], Op::Compute { .. }), "link step");
    }
    // The job-slot semaphore never deadlocks and conserves messages in every
    // interleaving the dynamic interpreter tries.
    let w = parse_workload("mkbench:builds=1,jobs=3,units=12").unwrap();
    check_dynamic(&w, 10);
    assert!(parse_workload("mkbench:unit_min=5,unit_max=4").unwrap_err().0.contains("unit_min=5"));
    assert!(parse_workload("mkbench:jobs=0").is_err());
}

#[test]
fn programs_are_compact() {
    // Program size grows with tasks, not with messages.
    let small = parse_workload("chat:rooms=30,messages=1").unwrap();
    let big = parse_workload("chat:rooms=30,messages=300").unwrap();
    let size = |w: &Workload| w.programs.iter().map(|p| p.ops.len()).sum::<usize>();
    assert_eq!(size(&small), size(&big));
    assert_eq!(big.expected_tasks, 2402);
    assert_eq!(big.programs.len(), 2402);
    // Longest program besides the two main threads: server_send, Loop + Recv + Compute
    // + 19 Sends.
    let longest =
        big.programs.iter().filter(|p| !["root", "server_main"].contains(&p.role.as_str())).map(|p| p.ops.len()).max();
    assert_eq!(longest, Some(22));
}

#[test]
fn chat_30_300_builds_fast() {
    // Warm up, then take the best of a few builds.
    let mut best = std::time::Duration::MAX;
    for _ in 0..5 {
        let t0 = std::time::Instant::now();
        let w = parse_workload("chat:rooms=30,messages=300").unwrap();
        best = best.min(t0.elapsed());
        assert_eq!(w.expected_tasks, 2402);
    }
    // Unoptimised test builds are several times slower than release.
    let limit_ms = if cfg!(debug_assertions) { 50 } else { 10 };
    assert!(best.as_millis() < limit_ms, "chat(30,300) took {best:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn chat_conserves(r in 1u32..4, m in 1u32..20, u in 2u32..8, think in 0u64..3, work in 0u64..3) {
        let w = parse_workload(&format!(
            "chat:rooms={r},messages={m},users={u},think={think},work={work}"
        )).unwrap();
        let t = check_static(&w);
        prop_assert_eq!(t.counted, (r * u * m * u) as u64);
        prop_assert_eq!(w.expected_tasks, 4 * (r * u) as u64 + 2);
        check_dynamic(&w, 1);
    }

    #[test]
    fn hackbench_conserves(g in 1u32..4, l in 1u32..10, f in 1u32..8, threads in 0u32..2) {
        let w = parse_workload(&format!(
            "hackbench:groups={g},loops={l},fds={f},threads={threads}"
        )).unwrap();
        let t = check_static(&w);
        prop_assert_eq!(t.counted, (g * f * f * l) as u64);
        prop_assert_eq!(w.expected_tasks, 2 * (g * f) as u64 + 1);
        check_dynamic(&w, 1);
    }

    #[test]
    fn mkbench_conserves(b in 1u32..4, j in 1u32..10, u in 1u32..30, io in 0u64..2, link in 0u64..2) {
        let w = parse_workload(&format!("mkbench:builds={b},jobs={j},units={u},io_ns={io},link={link}")).unwrap();
        let t = check_static(&w);
        prop_assert_eq!(t.counted, (b * u) as u64);
        check_dynamic(&w, 1);
    }

    #[test]
    fn netbench_conserves(n in 1u32..6, ops in 1u32..30, probes in 0u32..5, io in 0u64..2, think in 0u64..2) {
        let w = parse_workload(&format!("netbench:clients={n},ops={ops},probes={probes},io_ns={io},think_ns={think}")).unwrap();
        let t = check_static(&w);
        // One counted reply per operation; every nic and smbd is bound to its client's line.
        prop_assert_eq!(t.counted, (n * ops) as u64);
        prop_assert_eq!(w.bound.len() as u32, 2 * n);
        prop_assert!(w.bound.iter().all(|&(p, line)| line < n && w.programs[p as usize].role != "ps"));
        check_dynamic(&w, 1);
    }

    #[test]
    fn webbench_conserves(n in 1u32..12, c in 1u32..6, r in 1u32..8, d in 1u32..4, ws in 0u32..2) {
        let d = d.min(r);
        let w = parse_workload(&format!("webbench:servers={n},clients={c},requests={r},depth={d},ws={}", ws * 4096)).unwrap();
        let t = check_static(&w);
        // One counted reply per request; one client task per client that has a server.
        prop_assert_eq!(t.counted, (n * r) as u64);
        prop_assert_eq!(w.expected_tasks, 1 + n as u64 + n.min(c) as u64);
        prop_assert_eq!(w.working_set.len() as u32, if ws > 0 { n } else { 0 });
        prop_assert!(w.working_set.iter().all(|&(p, _)| w.programs[p as usize].role == "httpd"));
        check_dynamic(&w, 1);
    }

    #[test]
    fn pingpong_conserves(n in 1u32..200, c in 0u64..3) {
        let w = parse_workload(&format!("pingpong:rounds={n},compute={c}")).unwrap();
        let t = check_static(&w);
        prop_assert_eq!(t.counted, n as u64);
        check_dynamic(&w, 1);
    }
}
