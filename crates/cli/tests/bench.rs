//! `schedlab bench`: bad arguments exit 2; `--format json` prints an array of rows
//! {bench, runtime, policy, value, unit, channel, reps, min, max, cpu_per_op, pin} (and
//! `crossed` on placed ping-pong rows); `--only` restricts what runs. No timing
//! thresholds here: the machine is shared and noisy.

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
        (&["bench", "--pin", "some"][..], "some"),
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
        assert_eq!(keys.len(), 12, "{r}");
        check_row(r);
        assert_eq!(r["bench"], "pingpong-cross-worker");
        assert_eq!(r["runtime"], "atomic");
        assert_eq!(r["unit"], "ns/round-trip");
        assert_eq!(r["channel"], "AtomicU64");
        assert_eq!(r["pin"], "all", "the atomic ping-pong is always pinned");
    }
}

/// Every row: the fields, at least 3 repetitions, min ≤ value ≤ max, CPU time > 0, a
/// pinning label, no failed result check.
fn check_row(r: &serde_json::Value) {
    for k in
        ["bench", "runtime", "policy", "value", "unit", "channel", "reps", "min", "max", "samples", "cpu_per_op", "pin"]
    {
        assert!(r.get(k).is_some(), "{r} lacks {k}");
    }
    assert!(r.get("error").is_none(), "{r}");
    let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{r}: {k} not a number"));
    assert!(r["reps"].as_u64().unwrap() >= 3, "{r}");
    assert!(f("value") > 0.0 && f("min") <= f("value") && f("value") <= f("max"), "{r}");
    // Every repetition, in round order, between the extremes.
    let samples: Vec<f64> = r["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(samples.len() as u64, r["reps"].as_u64().unwrap(), "{r}");
    assert!(samples.iter().all(|&v| f("min") <= v && v <= f("max")), "{r}");
    assert!(f("cpu_per_op") > 0.0, "{r}");
    assert!(!r["channel"].as_str().unwrap().is_empty(), "{r}");
    assert!(["all", "none"].contains(&r["pin"].as_str().unwrap()), "{r}");
}

/// The ping-pong rows under the default `--pin all`: every row's spread, CPU time and
/// channel, and the same-worker rows' channels; the same run serves
/// [`cross_worker_pingpong_crosses`] for `--pin all`.
#[test]
fn bench_rows_report_spread_cpu_and_channel() {
    let o = cross_worker_pingpong_crosses("all");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("topology: ") && err.contains("atomic round trip"), "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).expect("JSON array");
    for r in &rows {
        check_row(r);
        // Placed same-worker ping-pong rows of the Rust runtimes say how often they
        // crossed workers.
        let placed = ["schedlab", "tokio"].contains(&r["runtime"].as_str().unwrap());
        if placed && r["bench"].as_str().unwrap().starts_with("pingpong-same-worker") {
            assert!(r["crossed"].as_f64().unwrap() < 0.05, "{r}");
        }
    }
    let channels = |bench: &str, runtime: &str| -> Vec<&str> {
        rows.iter()
            .filter(|r| r["bench"] == bench && r["runtime"] == runtime)
            .map(|r| r["channel"].as_str().unwrap())
            .collect()
    };
    let fast = |bench: &str| channels(bench, "schedlab").first().copied();
    assert_eq!(fast("pingpong-same-worker"), Some("schedlab_rt::channel"));
    assert_eq!(fast("pingpong-same-worker/async-channel"), Some("async-channel"));
    assert_eq!(fast("pingpong-same-worker/tokio-mpsc"), Some("tokio::sync::mpsc"));
    assert_eq!(channels("pingpong-same-worker", "kernel-threads"), ["pipe"]);
    if rows.iter().any(|r| r["runtime"] == "tokio") {
        assert_eq!(channels("pingpong-same-worker", "tokio"), ["tokio::sync::mpsc"]);
    }
    if rows.iter().any(|r| r["runtime"] == "go") {
        assert_eq!(channels("pingpong-same-worker", "go"), ["go chan"]);
    }
}

#[test]
fn bench_text_says_own_and_same_channel() {
    let o = schedlab(&["bench", "--quick", "--only", "hackbench"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("topology: "), "{out}");
    assert!(out.contains("atomic round trip (2 pinned threads, this run): "), "{out}");
    assert!(out.contains("repetitions per row (--quick), runtimes interleaved"), "{out}");
    assert!(out.contains("\npin: all (schedlab and tokio workers pinned"), "the default, said in the header: {out}");
    assert!(out.contains("hackbench (messages/s, higher is better; median [min..max], cpu = per CPU-second) [own channel: schedlab_rt::channel"), "{out}");
    assert!(
        out.contains("hackbench/async-channel (messages/s") && out.contains("[same channel: async-channel]"),
        "{out}"
    );
    assert!(
        out.contains("hackbench/tokio-mpsc (messages/s") && out.contains("[same channel: tokio::sync::mpsc]"),
        "{out}"
    );
    assert!(!out.contains("FAILED"), "{out}");
    if out.contains("  tokio ") {
        assert!(out.contains("  [own channel] hackbench ≥ 2× tokio: fast "), "{out}");
        assert!(out.contains("  [same channel] hackbench/async-channel ≥ 2× tokio: fast "), "{out}");
        assert!(out.contains("  [same channel] hackbench/tokio-mpsc ≥ 2× tokio: fast "), "{out}");
    }
}

#[test]
fn bench_text_table_groups_kernel_thread_rows() {
    let o = schedlab(&["bench", "--quick", "--only", "kernel-threads"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("chat (messages/s, higher is better;"), "{out}");
    assert!(out.contains("hackbench (messages/s, higher is better;"), "{out}");
    assert!(out.contains("threads+pipes"), "{out}");
    assert!(out.contains("wake-latency-p99.9 (ns/wake, lower is better;"), "{out}");
    assert!(out.contains("hogs, 60 probes; the kernel preempts"), "{out}");
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
        check_row(r);
    }
}

#[test]
fn bench_runs_the_schedlab_runtime_under_every_policy() {
    let o = schedlab(&["bench", "--quick", "--format", "json", "--only", "local-dispatch"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).expect("JSON array");
    let schedlab: Vec<&str> = rows
        .iter()
        .filter(|r| r["runtime"] == "schedlab" && r["bench"] == "local-dispatch")
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    // Every registry entry in its example configuration, runtime-native ones first.
    let mut entries = schedlab_core::policies::entries();
    entries.sort_by_key(|e| !e.runtime_native);
    let expected: Vec<&str> = entries.iter().map(|e| e.example).collect();
    assert_eq!(schedlab, expected, "{rows:?}");
    assert!(expected.len() >= 5 && expected[0] == "fast", "{expected:?}");
    for r in &rows {
        assert!(r["bench"] == "local-dispatch" || r["bench"] == "local-dispatch/self-wake", "{r}");
        assert_eq!(r["unit"], "ns/dispatch", "{r}");
        assert_eq!(r["channel"], "none", "{r}");
        check_row(r);
    }
    // The same self-waking future on every Rust runtime, beside each one's own yield.
    let self_wake = rows.iter().filter(|r| r["bench"] == "local-dispatch/self-wake" && r["runtime"] == "schedlab");
    assert_eq!(self_wake.count(), expected.len(), "{rows:?}");
}

/// The cache-model rows: the simulator's L2 misses against cachegrind's on the same
/// walks, within 2 % (a row fails otherwise). Skipped where valgrind is missing (CI
/// installs it).
#[test]
fn bench_cache_model_rows_agree_with_cachegrind() {
    if Command::new("valgrind").arg("--version").output().map_or(true, |o| !o.status.success()) {
        eprintln!("valgrind not installed: skipped");
        return;
    }
    let o = schedlab(&["bench", "--quick", "--format", "json", "--only", "cache-model"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON array");
    let rows = rows.as_array().expect("array");
    assert_eq!(rows.len(), 4, "{rows:?}");
    let mut misses = Vec::new();
    for r in rows {
        assert_eq!((r["bench"].as_str(), r["runtime"].as_str()), (Some("cache-model"), Some("sim")), "{r}");
        assert!(r.get("error").is_none(), "{r}");
        let v = r["value"].as_f64().expect("a ratio");
        assert!((0.98..=1.02).contains(&v), "{r}");
        // "...: M vs C misses" — the counts behind the ratio.
        let p = r["policy"].as_str().unwrap();
        let counts = p.rsplit(": ").next().unwrap();
        let m: u64 = counts.split(' ').next().unwrap().parse().unwrap_or_else(|_| panic!("{p}"));
        misses.push(m);
    }
    // Colouring removes conflict misses on both walks (vanilla first, then coloured).
    assert!(misses[1] < misses[0] && misses[3] < misses[2], "{misses:?}");
}

/// Through the CLI, every cross-worker ping-pong row of the
/// runtimes that place tasks (schedlab under every policy, Tokio's pinned
/// `current_thread` runtimes) crossed workers on > 95 % of its round trips (the smallest
/// over the repetitions), with each channel; the same-worker rows report theirs too
/// (≈ 0). Go cannot place goroutines: its rows say so and carry no `crossed`.
///
/// `--pin none` here; `--pin all` in [`bench_rows_report_spread_cpu_and_channel`].
#[test]
fn bench_cross_worker_pingpong_crosses() {
    cross_worker_pingpong_crosses("none");
}

/// [`bench_cross_worker_pingpong_crosses`] with `--pin pin`; every row of a runtime that
/// obeys `--pin` carries it (the atomic ping-pong is pinned whatever it says). Returns
/// the run's output.
fn cross_worker_pingpong_crosses(pin: &str) -> Output {
    let o = schedlab(&["bench", "--quick", "--format", "json", "--only", "pingpong-", "--pin", pin]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("schedlab bench: pin: {pin} (")), "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).expect("JSON array");
    let placed = |r: &serde_json::Value| ["schedlab", "tokio"].contains(&r["runtime"].as_str().unwrap());
    let mut cross_channels = Vec::new();
    for r in &rows {
        let want = if r["runtime"] == "atomic" { "all" } else { pin };
        assert_eq!(r["pin"], want, "{r}");
    }
    for r in rows.iter().filter(|r| placed(r)) {
        check_row(r);
        let bench = r["bench"].as_str().unwrap();
        let crossed = r["crossed"].as_f64().unwrap_or_else(|| panic!("placed ping-pong row without crossed: {r}"));
        if bench.starts_with("pingpong-cross-worker") {
            assert!(crossed > 0.95, "--pin {pin}: cross-worker row crossed on {crossed} of round trips: {r}");
            cross_channels.push(r["channel"].as_str().unwrap().to_string());
        } else {
            assert!(bench.starts_with("pingpong-same-worker"), "{r}");
            assert!(crossed < 0.05, "--pin {pin}: same-worker row crossed on {crossed} of round trips: {r}");
        }
    }
    // schedlab runs every policy with its own channel, async-channel and tokio's mpsc.
    for ch in ["schedlab_rt::channel", "async-channel", "tokio::sync::mpsc"] {
        assert!(cross_channels.iter().filter(|c| *c == ch).count() >= 5, "{ch}: {cross_channels:?}");
    }
    for r in rows.iter().filter(|r| r["runtime"] == "go") {
        assert!(r["policy"].as_str().unwrap().contains("no placement") && r.get("crossed").is_none(), "{r}");
    }
    o
}

/// `--servers`: the HTTP server rows only (schedlab under every scheduler, and Tokio
/// when its peer is built), each saying how the CPUs were shared; without wrk, none and
/// a note.
#[test]
fn bench_servers_json_rows() {
    let o = schedlab(&["bench", "--servers", "--quick", "--format", "json", "--only", "http-c16"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON array");
    let rows = rows.as_array().expect("array");
    if !err.contains("wrk not found") {
        assert!(rows.len() >= 4 * 6, "every scheduler's four rows: {rows:?}");
    } else {
        assert!(rows.is_empty(), "{rows:?}");
    }
    for r in rows {
        let bench = r["bench"].as_str().unwrap();
        assert!(bench.starts_with("http-c16"), "{r}");
        assert!(r.get("error").is_none(), "{r}");
        assert!(r["value"].as_f64().unwrap() > 0.0, "{r}");
        let unit = if bench == "http-c16" { "requests/s" } else { "ns/request" };
        assert_eq!(r["unit"], unit, "{r}");
        assert_eq!(r["pin"], "all", "{r}");
        assert!(r["cpus"].as_str().is_some_and(|c| c.contains("wrk 1 thread")), "{r}");
    }
}

/// `--servers --only linux`: the tbench anchor rows alone (dbench's `tbench_srv` under
/// the real `tbench` client, 4 and 16 clients), each with MB/s and how the CPUs were
/// shared; without tbench, or where no private network namespace can be made, none and
/// a note.
#[test]
fn bench_servers_tbench_anchor_json_rows() {
    let o = schedlab(&["bench", "--servers", "--quick", "--format", "json", "--only", "linux"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON array");
    let rows = rows.as_array().expect("array");
    if rows.is_empty() {
        assert!(err.contains("tbench") && err.contains("skipped"), "a note says why: {err}");
        eprintln!("tbench anchor rows skipped: {err}");
        return;
    }
    let benches: Vec<&str> = rows.iter().map(|r| r["bench"].as_str().unwrap()).collect();
    assert_eq!(benches, ["tbench-c4", "tbench-c16"], "{rows:?}");
    for r in rows {
        assert_eq!((r["runtime"].as_str(), r["unit"].as_str()), (Some("linux"), Some("MB/s")), "{r}");
        assert!(r.get("error").is_none() && r["value"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["cpus"].as_str().is_some_and(|c| c.contains("tbench client processes")), "{r}");
    }
}
