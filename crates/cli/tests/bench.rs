//! `schedlab bench`: bad arguments exit 2; `--format json` prints an array of rows
//! {bench, runtime, policy, value, unit}; `--only` restricts what runs.

use std::process::{Command, Output};

fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().expect("run schedlab")
}

#[test]
fn bench_bad_arguments_exit_2() {
    for (args, named) in [
        (&["bench", "--format", "xml"][..], "xml"),
        (&["bench", "--only", ""][..], "--only"),
        (&["bench", "--quick=3"][..], "quick"),
        (&["bench", "--fast"][..], "--fast"),
    ] {
        let o = schedlab(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(named), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn bench_json_rows_and_only() {
    let o = schedlab(&["bench", "--quick", "--format", "json", "--only", "atomic"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON array");
    let rows = rows.as_array().expect("array");
    // Needs two CPUs; with one, no row at all.
    if std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2 {
        assert_eq!(rows.len(), 1, "{rows:?}");
    }
    for r in rows {
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(keys.len(), 5, "{r}");
        for k in ["bench", "runtime", "policy", "value", "unit"] {
            assert!(keys.contains(&k), "{r} lacks {k}");
        }
        assert_eq!(r["bench"], "pingpong-cross-worker");
        assert_eq!(r["runtime"], "atomic");
        assert_eq!(r["unit"], "ns/round-trip");
        assert!(r["value"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn bench_text_table_groups_kernel_thread_rows() {
    let o = schedlab(&["bench", "--quick", "--only", "kernel-threads"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("chat (messages/s, higher is better)"), "{out}");
    assert!(out.contains("hackbench (messages/s, higher is better)"), "{out}");
    assert!(out.contains("threads+pipes"), "{out}");
}

#[test]
fn bench_converse_rows() {
    let o = schedlab(&["bench", "--quick", "--format", "json", "--only", "converse-queueing"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).expect("JSON array");
    let policies: Vec<&str> = rows.iter().map(|r| r["policy"].as_str().unwrap()).collect();
    assert_eq!(policies, ["via scheduler queue", "direct handler call"], "{rows:?}");
    for r in &rows {
        assert_eq!((r["bench"].as_str(), r["runtime"].as_str()), (Some("converse-queueing"), Some("converse")));
        assert!(r["value"].as_f64().unwrap() > 0.0);
    }
}

/// `--only pick-next-growth`: one growth row per registry policy, positive.
#[test]
fn bench_pick_next_growth_rows() {
    let o = schedlab(&["bench", "--quick", "--format", "json", "--only", "pick-next-growth"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).expect("JSON array");
    let policies: Vec<String> = schedlab_bench::pick_cost::runtime_policies();
    assert_eq!(rows.len(), policies.len(), "{rows:?}");
    for (r, p) in rows.iter().zip(&policies) {
        assert_eq!((r["bench"].as_str(), r["runtime"].as_str()), (Some("pick-next-growth"), Some("schedlab")));
        assert_eq!(r["policy"].as_str().unwrap(), format!("{p}, 100000 vs 10 runnable"));
        let v = r["value"].as_f64().unwrap();
        assert!(v.is_finite() && v > 0.0, "{r}");
    }
}

#[test]
fn bench_runs_the_schedlab_runtime_under_every_policy() {
    let o = schedlab(&["bench", "--quick", "--format", "json", "--only", "local-dispatch"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).expect("JSON array");
    let schedlab: Vec<&str> =
        rows.iter().filter(|r| r["runtime"] == "schedlab").map(|r| r["policy"].as_str().unwrap()).collect();
    // Every registry entry (runtime-native first): fast, dss, mqs, pmqs:..., o1, ...
    assert_eq!(schedlab, schedlab_bench::pick_cost::runtime_policies(), "{rows:?}");
    assert_eq!(schedlab[..4], ["fast", "dss", "mqs", "pmqs:pool=1,lb=lbp,period=10"], "{rows:?}");
    for r in &rows {
        assert_eq!(r["bench"], "local-dispatch", "{r}");
        assert_eq!(r["unit"], "ns/dispatch", "{r}");
        assert!(r["value"].as_f64().unwrap() > 0.0, "{r}");
    }
}
