//! Property-based fuzzing of every input parser: policy, workload and machine specs,
//! machine files and experiment files. Inputs are generated from the parsers' own
//! vocabulary (names, keys, preset names) mixed with hostile values (huge, negative,
//! fractional, empty, junk), so that most inputs get past the first check. Whatever the
//! input: no panic, and a rejection is an error value naming something (the CLI turns
//! it into exit code 2).
//!
//! CI runs `FUZZ_CASES` (default 2,000) cases per parser; the full run is
//! `FUZZ_CASES=100000 cargo test --release -p schedlab-lab --test fuzz_parsers`.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use schedlab_core::PolicySpec;
use schedlab_lab::Experiment;
use schedlab_sim::Machine;
use schedlab_workloads::parse_workload_within;

fn cases() -> u32 {
    std::env::var("FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(2000)
}

/// Run `test` on `cases()` inputs; `test` says whether the input was accepted. Prints
/// the counts (`--nocapture`) for the record.
fn run<S: Strategy>(what: &str, strategy: S, test: impl Fn(S::Value) -> Result<bool, TestCaseError>) {
    let accepted = std::sync::atomic::AtomicU64::new(0);
    let total = std::sync::atomic::AtomicU64::new(0);
    let mut runner = TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    runner
        .run(&strategy, |v| {
            total.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if test(v)? {
                accepted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(())
        })
        .unwrap();
    let (a, t) = (accepted.into_inner(), total.into_inner());
    eprintln!("{what}: {t} inputs, {a} accepted, {} rejected with a message", t - a);
}

/// A hostile or plausible value.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..70).prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("99999999999999999999999".to_string()),
        Just(String::new()),
        Just("-0".to_string()),
        (0.0f64..1e3).prop_map(|x| format!("{x}")),
        prop_oneof![Just("off"), Just("ip"), Just("lbp"), Just("lbc"), Just("period"), Just("threshold")]
            .prop_map(String::from),
        "[ -~]{0,6}",
    ]
}

fn spec(names: &'static [&'static str], keys: &'static [&'static str]) -> impl Strategy<Value = String> {
    let name = prop_oneof![prop::sample::select(names).prop_map(String::from), "[a-z]{0,5}"];
    let kv = (prop_oneof![prop::sample::select(keys).prop_map(String::from), "[a-z_]{0,6}"], value())
        .prop_map(|(k, v)| format!("{k}={v}"));
    let junk = "[ -~]{0,4}";
    (name, prop::collection::vec(prop_oneof![4 => kv, 1 => junk], 0..6), any::<bool>()).prop_map(|(n, kvs, colon)| {
        if kvs.is_empty() && !colon {
            n
        } else {
            format!("{n}:{}", kvs.join(","))
        }
    })
}

fn is_named(e: &str) -> Result<(), TestCaseError> {
    prop_assert!(!e.trim().is_empty(), "empty error message");
    Ok(())
}

#[test]
fn policy_specs_never_panic() {
    run("policy specs", spec(&["dss", "mqs", "pmqs", "fast"], &["pool", "lb", "period", "reading"]), |s| {
        match PolicySpec::parse(&s) {
            Ok(p) => {
                prop_assert_eq!(PolicySpec::parse(&p.canonical()).ok(), Some(p), "canonical round trip");
                Ok(true)
            }
            Err(e) => is_named(&e.0).map(|()| false),
        }
    });
}

#[test]
fn workload_specs_never_panic() {
    let keys = &[
        "rooms", "messages", "users", "bytes", "think", "work", "groups", "loops", "fds", "threads", "rounds",
        "compute", "builds", "jobs", "units", "unit_min", "unit_max", "io_ns", "link",
    ];
    // A 16 MiB limit keeps every accepted workload cheap to build.
    run("workload specs", spec(&["chat", "hackbench", "pingpong", "mkbench"], keys), |s| {
        match parse_workload_within(&s, 16 << 20) {
            Ok(w) => {
                prop_assert!(w.validate().is_ok(), "built an invalid workload from {s}");
                Ok(true)
            }
            Err(e) => is_named(&e.0).map(|()| false),
        }
    });
}

#[test]
fn machine_specs_and_files_never_panic() {
    let preset = prop_oneof![
        prop::sample::select(&["up", "smp-8", "numa-4x4", "smp-0", "smp-65", "smp-", "smp-x"][..])
            .prop_map(String::from),
        (0u64..200).prop_map(|n| format!("smp-{n}")),
        "[ -~]{0,8}",
    ];
    run("machine presets", preset, |s| match Machine::preset(&s) {
        Ok(_) => Ok(true),
        Err(e) => is_named(&e.0).map(|()| false),
    });
    let keys = &["base", "name", "cpus", "nodes", "mhz", "l2_kb", "l2_assoc", "line_bytes", "hz", "remote_distance"];
    let num = prop_oneof![3 => (1u64..70).prop_map(|n| n.to_string()), 1 => value()];
    let line = (prop::sample::select(&keys[..]), num, prop::bool::weighted(0.1)).prop_map(|(k, v, quote)| {
        if quote || k == "base" || k == "name" {
            let v = if k == "base" { ["smp-8", "up", "numa-4x4", "nosuch"][v.len() % 4].to_string() } else { v };
            format!("{k} = {v:?}")
        } else {
            format!("{k} = {}", if v.is_empty() { "\"\"".into() } else { v })
        }
    });
    let distance = (1usize..5, 0u32..40).prop_map(|(n, d)| {
        format!("distance = [{}]", vec![format!("[{}]", vec![d.to_string(); n].join(", ")); n].join(", "))
    });
    let costs = (prop::sample::select(&["lock_cycles", "mem_latency_ns", "nosuch", "goodness_cycles"][..]), value())
        .prop_map(|(k, v)| format!("[costs]\n{k} = {}", if v.is_empty() { "1".into() } else { v }));
    let file = (prop::collection::vec(line, 0..6), prop::option::of(distance), prop::option::of(costs))
        .prop_map(|(lines, d, c)| lines.into_iter().chain(d).chain(c).collect::<Vec<_>>().join("\n"));
    run("machine files", file, |text| match Machine::from_toml(&text) {
        Ok(_) => Ok(true),
        Err(e) => is_named(&e.0).map(|()| false),
    });
}

#[test]
fn experiment_files_never_panic() {
    let list = |xs: &'static [&'static str]| {
        prop::collection::vec(
            prop_oneof![9 => prop::sample::select(xs).prop_map(String::from), 1 => "[ -~]{0,6}"],
            0..4,
        )
        .prop_map(|v| format!("[{}]", v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")))
    };
    let file = (
        prop_oneof![8 => Just("x".to_string()), 1 => Just("..".to_string()), 1 => "[ -~]{0,6}"],
        list(&["smp-2", "smp-4", "up", "smp-6"]),
        list(&["dss", "mqs", "pmqs:pool=2", "pmqs:pool=3", "fast"]),
        list(&["pingpong:rounds=20", "chat:rooms=1,messages=2", "hackbench:groups=1,loops=1"]),
        prop::collection::vec(prop_oneof![9 => 0i64..5, 1 => any::<i64>()], 0..3),
        prop_oneof![4 => Just("mqs"), 4 => Just("dss"), 1 => Just("nosuch")],
        prop_oneof![6 => Just("throughput"), 1 => Just("wall_s"), 2 => Just("virtual_ns"), 1 => Just("nope.x")],
        prop::option::of(-1.0f64..10.0),
    )
        .prop_map(|(name, m, p, w, seeds, baseline, metric, max_s)| {
            let mut t = format!(
                "name = {name:?}\nmachines = {m}\npolicies = {p}\nworkloads = {w}\nseeds = {seeds:?}\nbaseline = {baseline:?}\nmetric = {metric:?}\n"
            );
            if let Some(s) = max_s {
                t += &format!("max_virtual_s = {s}\n");
            }
            t
        });
    run("experiment files", file, |text| match Experiment::from_toml(&text).and_then(|x| x.plan(false)) {
        Ok(plan) => {
            prop_assert!(!plan.runs().is_empty());
            Ok(true)
        }
        Err(e) => {
            prop_assert_eq!(e.exit_code(), 2, "a bad experiment is exit 2: {}", e);
            is_named(e.message()).map(|()| false)
        }
    });
}
