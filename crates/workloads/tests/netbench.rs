//! NetBench's structure: who forks the smbds (`fork=root|daemon`) and the live server
//! that clients join case by case (`mode=live`).

use schedlab_workloads::{parse_workload, NetbenchParams, Op, Workload, WorkloadSpec};

fn program<'a>(w: &'a Workload, role: &str) -> Vec<&'a [Op]> {
    w.programs.iter().filter(|p| p.role == role).map(|p| p.ops.as_slice()).collect()
}

fn spawned(ops: &[Op]) -> Vec<u32> {
    ops.iter().filter_map(|o| if let Op::Spawn { program, .. } = o { Some(*program) } else { None }).collect()
}

#[test]
fn the_daemon_sleeps_before_it_forks_each_smbd() {
    let w = parse_workload("netbench:clients=3,ops=5,fork=daemon,idle_ns=7,accept_ns=3").unwrap();
    assert_eq!(w.spec, "netbench:clients=3,ops=5,fork=daemon,idle_ns=7,accept_ns=3");
    let smbd = |c: u32| 1 + 2 * c;
    let nic = |c: u32| 2 + 2 * c;
    let daemon = program(&w, "daemon");
    assert_eq!(daemon.len(), 1);
    let mut expect = vec![Op::Sleep { ns: 7 }];
    for c in 0..3 {
        expect.push(Op::Sleep { ns: 3 });
        let ops = &daemon[0][expect.len()..expect.len() + 2];
        assert!(matches!(ops[0], Op::Spawn { program, .. } if program == smbd(c)), "{ops:?}");
        assert!(matches!(ops[1], Op::Spawn { program, .. } if program == nic(c)), "{ops:?}");
        expect.extend_from_slice(ops);
    }
    expect.push(Op::Exit);
    assert_eq!(daemon[0], expect.as_slice());
    // The root forks only the daemon and the probe; one task more than with fork=root.
    assert_eq!(spawned(&w.programs[0].ops), [9, 7]);
    let old = parse_workload("netbench:clients=3,ops=5").unwrap();
    assert_eq!(w.expected_tasks, old.expected_tasks + 1);
    assert_eq!(w.expected_messages, old.expected_messages);
    assert!(program(&old, "daemon").is_empty(), "fork=root has no daemon");
    assert_eq!(spawned(&old.programs[0].ops), [1, 2, 3, 4, 5, 6, 7], "the root forks all, then the probe");
}

#[test]
fn live_clients_join_per_case_and_stay_to_the_end() {
    // 10 clients, 4 per case: cases of 4, 4, 2; 1 s cases at 20 ms think: 50 ops per
    // case present.
    let s = "netbench:clients=10,fork=daemon,mode=live,case_ns=1000000000";
    let w = parse_workload(s).unwrap();
    assert_eq!(w.spec, s);
    let spec = WorkloadSpec::parse(s).unwrap();
    let p = spec.params::<NetbenchParams>().unwrap();
    assert_eq!(p.cases(), 3);
    let ops = p.client_ops();
    assert_eq!(ops, [150, 150, 150, 150, 100, 100, 100, 100, 50, 50]);
    assert_eq!(w.expected_messages, 2 * ops.iter().map(|&o| o as u64).sum::<u64>());
    // The last batch are the `smbd`s, the earlier ones `smbd_early`.
    assert_eq!((program(&w, "smbd").len(), program(&w, "smbd_early").len()), (2, 8));
    // The daemon sleeps a case between the batches.
    let daemon = program(&w, "daemon")[0];
    let case_sleeps = daemon.iter().filter(|o| **o == Op::Sleep { ns: 1_000_000_000 }).count();
    assert_eq!(case_sleeps, 2);
    // The loop counts are the client's operations.
    let first = program(&w, "smbd_early")[0];
    assert_eq!(first[0], Op::Loop { count: 150, body: 3 });
    // Fresh: every smbd is an `smbd`.
    let fresh = parse_workload("netbench:clients=10,ops=7").unwrap();
    assert_eq!((program(&fresh, "smbd").len(), program(&fresh, "smbd_early").len()), (10, 0));
}

#[test]
fn bad_netbench_structure_options_are_named() {
    for (spec, word) in [
        ("netbench:clients=4,fork=parent", "fork"),
        ("netbench:clients=4,mode=sometimes", "mode"),
        ("netbench:clients=4,case_ns=0", "case_ns"),
        ("netbench:clients=4,per_case=0", "per_case"),
        // 4096 clients joining 1 at a time for an hour each: far too many operations.
        ("netbench:clients=4096,per_case=1,mode=live,case_ns=3600000000000", "operations"),
    ] {
        let e = parse_workload(spec).err().unwrap_or_else(|| panic!("{spec} accepted")).0;
        assert!(e.contains(word), "{spec}: {e}");
    }
}

#[test]
fn a_measured_case_is_clocked_by_the_controller_after_the_last_fork() {
    let s = "netbench:clients=3,fork=daemon,span=1s";
    let w = parse_workload(s).unwrap();
    let spec = WorkloadSpec::parse(s).unwrap();
    let p = spec.params::<NetbenchParams>().unwrap();
    // 1 s at 20 ms think: at most 50 operations fit in the span; each client has 52.
    assert_eq!(p.client_ops(), [52, 52, 52]);
    let controller = program(&w, "controller");
    assert_eq!(controller.len(), 1);
    let started = 6;
    // It starts the clock and every client (`go` channels 7, 8, 9), then measures.
    assert_eq!(
        controller[0],
        [
            Op::Recv { chan: started },
            Op::StartClock,
            Op::Send { chan: 7, bytes: 0 },
            Op::Send { chan: 8, bytes: 0 },
            Op::Send { chan: 9, bytes: 0 },
            Op::Sleep { ns: 1_000_000_000 },
            Op::StopClock,
            Op::Exit
        ]
    );
    for (c, nic) in program(&w, "nic").iter().enumerate() {
        assert_eq!(nic[0], Op::Recv { chan: 7 + c as u32 }, "client {c} waits for its start");
    }
    // The daemon says `started` after its last fork, and nothing else does.
    let daemon = program(&w, "daemon")[0];
    assert_eq!(&daemon[daemon.len() - 2..], [Op::Send { chan: started, bytes: 0 }, Op::Exit]);
    let senders = w
        .programs
        .iter()
        .filter(|p| p.ops.iter().any(|o| matches!(o, Op::Send { chan, .. } if *chan == started)))
        .count();
    assert_eq!(senders, 1);
    // The controller is forked first, as a real-time task outside every process.
    let root = &w.programs[w.root as usize].ops;
    let Op::Spawn { program: first, params } = root[0] else { panic!("the root starts with {:?}", root[0]) };
    assert_eq!(w.programs[first as usize].role, "controller");
    assert_eq!((params.class, params.mm), (schedlab_core::SchedClass::Fifo, 0));
    // The started channel is not counted: the metric is the clients' replies.
    assert_eq!(w.channels, 10);
    assert!(!w.metric.counted[started as usize]);
    let plain = parse_workload("netbench:clients=3,fork=daemon,ops=52").unwrap();
    assert_eq!(w.expected_tasks, plain.expected_tasks + 1);
    assert_eq!(w.expected_messages, plain.expected_messages + 1 + 3);
    // With fork=root the root sends it after its own last fork.
    let w = parse_workload("netbench:clients=2,span=1s").unwrap();
    let root = &w.programs[w.root as usize].ops;
    let at = root.iter().position(|o| *o == Op::Send { chan: 4, bytes: 0 }).expect("the root says started");
    assert!(root[..at].iter().filter(|o| matches!(o, Op::Spawn { .. })).count() == 5, "{root:?}");
}

#[test]
fn a_span_needs_a_fresh_server_and_a_throttle() {
    for (s, what) in [
        ("netbench:clients=4,span=1s,mode=live", "mode=fresh"),
        ("netbench:clients=4,span=1s,think_ns=0", "think_ns > 0"),
    ] {
        let e = parse_workload(s).unwrap_err().to_string();
        assert!(e.contains(what), "{s}: {e}");
    }
}
