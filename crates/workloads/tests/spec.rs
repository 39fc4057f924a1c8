//! Spec parsing: errors name the bad part; canonical specs round-trip.

use proptest::prelude::*;
use schedlab_workloads::{
    parse_workload, workload_names, ChatParams, HackbenchParams, PingPongParams, WorkloadKind, WorkloadSpec,
};

fn err(s: &str) -> String {
    parse_workload(s).unwrap_err().0
}

#[test]
fn unknown_workload_lists_known_ones() {
    let e = err("volano:rooms=3");
    assert!(e.contains("unknown workload 'volano'"), "{e}");
    for n in workload_names() {
        assert!(e.contains(n), "{e}");
    }
    assert!(err("").contains("empty workload name"));
}

#[test]
fn bad_values_name_key_and_value() {
    for (s, needle) in [
        ("chat:rooms=x", "rooms='x'"),
        ("chat:rooms=0", "rooms=0 is out of range"),
        ("chat:messages=-3", "messages=-3 is out of range 1..="),
        ("chat:users=1", "users=1 is out of range 2..="),
        ("chat:bytes=0", "bytes=0"),
        ("chat:think=1.5", "think='1.5'"),
        ("hackbench:groups=0", "groups=0"),
        ("hackbench:loops=", "loops=''"),
        ("hackbench:threads=2", "threads=2 is out of range 0..=1"),
        ("hackbench:fds=1001", "fds=1001"),
        ("pingpong:rounds=0", "rounds=0"),
        ("pingpong:compute=lots", "compute='lots'"),
        ("webbench:servers=0", "servers=0 is out of range"),
        ("webbench:depth=5,requests=4", "depth=5 must not exceed requests=4"),
        ("webbench:ws=abc", "ws='abc'"),
    ] {
        let e = err(s);
        assert!(e.contains(needle), "{s}: {e}");
        assert!(e.starts_with("workload '"), "{s}: {e}");
    }
}

#[test]
fn unknown_keys_are_rejected_with_accepted_list() {
    let e = err("chat:rooms=3,romos=4");
    assert!(e.contains("unknown key 'romos'"), "{e}");
    assert!(e.contains("rooms, messages, users, bytes, think, work"), "{e}");
    let e = err("hackbench:groups=1,rounds=3");
    assert!(e.contains("unknown key 'rounds'"), "{e}");
    assert!(e.contains("groups, loops, fds, bytes, threads"), "{e}");
    let e = err("pingpong:loops=3");
    assert!(e.contains("unknown key 'loops'") && e.contains("rounds, bytes, compute"), "{e}");
    assert!(err("chat:rooms").contains("'rooms' is not key=value"));
    assert!(err("chat:rooms=1,rooms=2").contains("given twice"));
}

#[test]
fn defaults_and_canonical_forms() {
    let w = parse_workload("chat").unwrap();
    assert_eq!(w.spec, "chat:rooms=10,messages=100");
    assert_eq!(w.expected_tasks, 802);
    let w = parse_workload(" Chat : messages=300 , rooms=30 ").unwrap();
    assert_eq!(w.spec, "chat:rooms=30,messages=300");
    let w = parse_workload("chat:rooms=2,messages=3,work=300,users=20,think=7").unwrap();
    assert_eq!(w.spec, "chat:rooms=2,messages=3,think=7");
    assert_eq!(parse_workload("hackbench").unwrap().spec, "hackbench:groups=10,loops=100");
    assert_eq!(
        parse_workload("hackbench:threads=1,fds=5,groups=2").unwrap().spec,
        "hackbench:groups=2,loops=100,fds=5,threads=1"
    );
    assert_eq!(parse_workload("pingpong").unwrap().spec, "pingpong:rounds=10000");
    assert_eq!(
        parse_workload("pingpong:compute=9,bytes=8,rounds=5").unwrap().spec,
        "pingpong:rounds=5,bytes=8,compute=9"
    );
}

#[test]
fn param_structs_check_ranges_when_built_directly() {
    let e = ChatParams { users: 1, ..ChatParams::default() }.build().unwrap_err();
    assert!(e.0.contains("users=1"), "{e}");
    let e = HackbenchParams { loops: 0, ..HackbenchParams::default() }.build().unwrap_err();
    assert!(e.0.contains("loops=0"), "{e}");
    let e = PingPongParams { bytes: 0, ..PingPongParams::default() }.build().unwrap_err();
    assert!(e.0.contains("bytes=0"), "{e}");
}

fn roundtrip(s: &str) {
    let w = parse_workload(s).unwrap();
    let again = parse_workload(&w.spec).unwrap();
    assert_eq!(again, w, "{s} -> {}", w.spec);
    assert_eq!(again.spec, w.spec);
    let ws = WorkloadSpec::parse(s).unwrap();
    assert_eq!(ws.canonical(), w.spec);
    assert_eq!(WorkloadSpec::parse(&ws.canonical()).unwrap(), ws);
}

#[test]
fn canonical_specs_round_trip() {
    for s in [
        "chat",
        "chat:rooms=30,messages=300",
        "chat:rooms=1,messages=1,users=2,bytes=1,think=5,work=0",
        "hackbench",
        "hackbench:groups=3,loops=7,fds=2,bytes=4096,threads=1",
        "hackbench:threads=0",
        "pingpong",
        "pingpong:rounds=1,bytes=1,compute=100",
        "mkbench",
        "mkbench:builds=2,jobs=8,units=64",
        "netbench",
        "netbench:clients=40",
        "netbench:clients=2,ops=7,think_ns=0,work=1,irq=2,io_ns=3,bytes=4,timeout_ns=5,probes=0,probe_every_ns=6,ps=7",
        "mkbench:builds=1,jobs=32,units=500,unit_min=1,unit_max=2,io_ns=0,link=0",
        "webbench",
        "webbench:servers=1024",
        "webbench:servers=3,clients=2,requests=9,depth=3,work=1,ws=0,irq=2,bytes=5",
    ] {
        roundtrip(s);
    }
}

proptest! {
    #[test]
    fn chat_round_trips(r in 1u32..5, m in 1u32..1000, u in 2u32..30,
                        b in 1u32..2000, think in 0u64..1000, work in 0u64..1000) {
        roundtrip(&format!("chat:users={u},bytes={b},think={think},work={work},rooms={r},messages={m}"));
    }

    #[test]
    fn hackbench_round_trips(g in 1u32..5, l in 1u32..1000, f in 1u32..30,
                             b in 1u32..2000, t in 0u32..2) {
        roundtrip(&format!("hackbench:threads={t},fds={f},bytes={b},loops={l},groups={g}"));
    }

    #[test]
    fn mkbench_round_trips(b in 1u32..5, j in 1u32..64, u in 1u32..500, lo in 0u64..1000, d in 0u64..1000,
                           io in 0u64..10_000, link in 0u64..1000) {
        roundtrip(&format!("mkbench:link={link},io_ns={io},unit_max={},unit_min={lo},units={u},jobs={j},builds={b}", lo + d));
    }

    #[test]
    fn pingpong_round_trips(n in 1u32..1_000_000, b in 1u32..2000, c in 0u64..1000) {
        roundtrip(&format!("pingpong:compute={c},bytes={b},rounds={n}"));
    }
}
