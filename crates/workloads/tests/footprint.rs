//! The footprint estimated from a workload's parameters matches what its builder
//! builds (tasks and channels exactly, operations as a tight upper bound), so the memory
//! check refuses exactly the workloads that would be too large.

use schedlab_workloads::footprint::{parse_size, DEFAULT_MAX_BYTES};
use schedlab_workloads::{parse_workload, parse_workload_within, WorkloadSpec};

#[test]
fn the_estimate_matches_the_built_workload() {
    let mut specs = Vec::new();
    for (r, u, t, w) in [(1, 2, 0, 0), (3, 5, 10, 0), (2, 20, 0, 300), (4, 7, 5, 5)] {
        specs.push(format!("chat:rooms={r},users={u},messages=3,think={t},work={w}"));
        specs.push(format!("chat:rooms={r},users={u},messages=3,think={t},work={w},threads=root"));
    }
    for (g, f) in [(1, 1), (2, 3), (3, 20), (1, 40)] {
        specs.push(format!("hackbench:groups={g},fds={f},loops=2"));
    }
    for c in [0, 50] {
        specs.push(format!("pingpong:rounds=10,compute={c}"));
    }
    for (b, j, u, io, l) in [(1, 1, 1, 0, 0), (2, 4, 20, 1000, 500), (3, 8, 3, 0, 10)] {
        specs.push(format!("mkbench:builds={b},jobs={j},units={u},io_ns={io},link={l}"));
    }
    for (n, probes, io) in [(1, 0, 0), (4, 30, 0), (7, 3, 500)] {
        specs.push(format!("netbench:clients={n},ops=3,probes={probes},io_ns={io}"));
    }
    for extra in [
        "fork=daemon",
        "mode=live,case_ns=100000000",
        "fork=daemon,mode=live,case_ns=100000000,per_case=3",
        "span=100000000",
        "fork=daemon,span=100000000",
    ] {
        specs.push(format!("netbench:clients=7,ops=3,probes=2,{extra}"));
    }
    for (n, c, d) in [(1, 1, 1), (256, 256, 2), (10, 3, 4)] {
        specs.push(format!("webbench:servers={n},clients={c},requests=5,depth={d}"));
    }
    for extra in ["span=2s", "span=1s,warmup=0"] {
        specs.push(format!("webbench:servers=10,clients=3,{extra}"));
    }
    for s in specs {
        let fp = WorkloadSpec::parse(&s).unwrap().footprint();
        let w = parse_workload(&s).unwrap();
        let ops: u64 = w.programs.iter().map(|p| p.ops.len() as u64).sum();
        assert_eq!(fp.tasks, w.expected_tasks, "{s}");
        assert_eq!(fp.channels, w.channels as u64, "{s}");
        assert!(fp.ops >= ops && fp.ops <= ops + 4 * w.programs.len() as u64, "{s}: {} vs {ops}", fp.ops);
    }
}

/// The refusal's message (a workload that was accepted is named, not printed whole).
fn refused(r: Result<schedlab_workloads::Workload, schedlab_core::SpecError>) -> String {
    match r {
        Ok(w) => panic!("{} was accepted", w.spec),
        Err(e) => e.0,
    }
}

#[test]
fn workloads_too_large_are_refused_before_they_are_built() {
    // 1000 groups × 1000 fds: a billion send operations in the senders' programs.
    let e = refused(parse_workload("hackbench:groups=1000,fds=1000,loops=1"));
    assert!(e.contains("would need about") && e.contains("GiB") && e.contains("--max-memory"), "{e}");
    let fp = WorkloadSpec::parse("hackbench:groups=1000,fds=1000,loops=1").unwrap().footprint();
    assert!(fp.bytes() > DEFAULT_MAX_BYTES);
    assert!(fp.check("hackbench", fp.bytes()).is_ok(), "a raised limit admits it");
    let e = refused(parse_workload_within("chat:rooms=100,messages=1", 4 << 20));
    assert!(e.contains("8002 tasks") && e.contains("limit of 4.0 MiB"), "{e}");
    assert!(refused(parse_workload_within("pingpong:rounds=5", 1024)).contains("limit of 1 KiB"));
}

#[test]
fn memory_sizes_parse() {
    assert_eq!(parse_size("512m"), Ok(512 << 20));
    assert_eq!(parse_size("4g"), Ok(4 << 30));
    assert_eq!(parse_size("8GiB"), Ok(8 << 30));
    assert_eq!(parse_size("1.5G"), Ok(3 << 29));
    assert_eq!(parse_size("100000"), Ok(100000));
    for bad in ["", "-1g", "abc", "0", "1e30"] {
        assert!(parse_size(bad).is_err(), "{bad}");
    }
}
