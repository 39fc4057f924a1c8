//! The `schedlab` binary: bad input is named and exits with code 2, never a panic;
//! good input produces the documented JSON fields, deterministically.

use std::process::{Command, Output};

fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().expect("run schedlab")
}

fn sim(machine: &str, policy: &str, workload: &str, extra: &[&str]) -> Output {
    let mut a = vec!["sim", "--machine", machine, "--policy", policy, "--workload", workload];
    a.extend_from_slice(extra);
    schedlab(&a)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_arguments_are_named_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("schedlab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad_machine = dir.join("bad.toml");
    std::fs::write(&bad_machine, "cpus = 4\nnodes = 2\ndistance = [[10, 30], [20, 10]]\n").unwrap();
    let bad_machine = bad_machine.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["sim", "--machine", "vax-11", "--policy", "dss", "--workload", "pingpong"], "unknown machine 'vax-11'"),
        (&["sim", "--machine", "smp-0", "--policy", "dss", "--workload", "pingpong"], "CPU count"),
        (&["sim", "--machine", "smp-2", "--policy", "bfs", "--workload", "pingpong"], "unknown policy 'bfs'"),
        (&["sim", "--machine", "smp-2", "--policy", "dss:x=1", "--workload", "pingpong"], "unknown key 'x'"),
        (&["sim", "--machine", "smp-2", "--policy", "fast", "--workload", "pingpong"], "no simulator model"),
        (&["sim", "--machine", "smp-6", "--policy", "pmqs:pool=4", "--workload", "pingpong"], "does not divide"),
        (&["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "chat:rooms=zero"], "rooms='zero'"),
        (&["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "chat:romos=3"], "romos"),
        (&["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "tpcc"], "unknown workload"),
        (&["sim", "--machine", bad_machine, "--policy", "dss", "--workload", "pingpong"], "asymmetric"),
        (&["sim", "--machine", "/nonexistent/m.toml", "--policy", "dss", "--workload", "pingpong"], "m.toml"),
        (&["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "pingpong", "--seed=-3"], "--seed"),
        (
            &["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "pingpong", "--seed", "-1"],
            "'-1' for '--seed",
        ),
        (
            &["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "pingpong", "--max-virtual-s", "-1"],
            "must be a positive",
        ),
        (&["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "chat:rooms=99999999999"], "out of range"),
        (&["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "pingpong", "--format", "xml"], "xml"),
        (
            &["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "pingpong", "--max-virtual-s", "0"],
            "max-virtual-s",
        ),
        (&["sim", "--policy", "dss", "--workload", "pingpong"], "--machine"),
        (&["sweep", "--threads", "100000", "experiments/chat-smp.toml"], "--threads 100000"),
        (&["validate", "--workers", "100000"], "--workers 100000"),
        // A trace prefix that cannot be written (not even as root: /proc takes no new
        // directories), or that names a directory, fails before the calibration.
        (&["validate", "--quick", "--trace", "/proc/schedlab-none/t"], "--trace /proc/schedlab-none/t"),
        (&["validate", "--quick", "--trace", "out/"], "not a directory"),
        (&["validate", "--quick", "--format", "xml"], "xml"),
        (&["validate", "--quick", "--runs", "0"], "--runs 0"),
        (&["validate", "--quick", "--runs", "16"], "--runs 16"),
        (&["validate", "--quick", "--runs", "many"], "--runs"),
        (
            &["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "hackbench:groups=1000,fds=1000"],
            "would need about",
        ),
        (
            &["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "pingpong", "--max-memory", "lots"],
            "--max-memory",
        ),
        (
            &["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "pingpong", "--plot", "/nonexistent/x.svg"],
            "does not exist",
        ),
        (
            &[
                "sim",
                "--machine",
                "smp-2",
                "--policy",
                "dss",
                "--workload",
                "pingpong",
                "--trace",
                "/nonexistent-dir/x.json",
            ],
            "--trace /nonexistent-dir/x.json",
        ),
        (
            &[
                "sim",
                "--machine",
                "smp-2",
                "--policy",
                "dss",
                "--workload",
                "pingpong",
                "--trace",
                "t.json",
                "--trace-cap",
                "0",
            ],
            "--trace-cap 0",
        ),
        (&["frobnicate"], "frobnicate"),
    ];
    for (args, want) in cases {
        let o = schedlab(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: exit {:?}, stderr {err}", o.status.code());
        assert!(err.contains(want), "{args:?}: stderr {err:?} should mention {want:?}");
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    }
}

/// `validate --quick --format json`: one object with the machine, the calibration,
/// rows carrying both engines' figures, and a summary whose counts match the rows.
#[test]
fn validate_json_has_rows_and_a_consistent_summary() {
    let o = schedlab(&["validate", "--quick", "--format", "json", "--runs", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    for k in ["machine", "calibration", "rows", "summary"] {
        assert!(keys.contains(&k), "missing {k} in {keys:?}");
    }
    assert!(v["machine"]["costs"]["park_wake_ns"].is_u64(), "{}", v["machine"]);
    let rows = v["rows"].as_array().unwrap();
    let compared: Vec<_> = rows.iter().filter(|r| r["sim"].is_number()).collect();
    assert!(!compared.is_empty());
    for r in &compared {
        for k in ["workload", "policy", "real", "sim_dist", "real_dist"] {
            assert!(!r[k].is_null(), "{k} missing in {r}");
        }
        // Two runs per engine, and each throughput is their median (the mean of two).
        for (m, runs) in [("sim", "sim_runs"), ("real", "real_runs")] {
            let v: Vec<f64> = r[runs].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
            assert_eq!(v.len(), 2, "{r}");
            assert!((r[m].as_f64().unwrap() - (v[0] + v[1]) / 2.0).abs() <= 1e-6 * v[0].max(v[1]), "{r}");
        }
        for d in [&r["sim_dist"], &r["real_dist"]] {
            assert!(d["switches"].as_u64().unwrap() > 0, "{r}");
            assert!(d["wake_to_run_p50_ns"].as_u64() <= d["wake_to_run_p99_ns"].as_u64(), "{r}");
        }
    }
    let s = &v["summary"];
    let (n, k) = (s["rows"].as_u64().unwrap(), s["within_25pct"].as_u64().unwrap());
    assert_eq!(n as usize, compared.len());
    assert!(k <= n);
    let within = compared
        .iter()
        .filter(|r| {
            let ratio = r["sim"].as_f64().unwrap() / r["real"].as_f64().unwrap();
            (0.75..=1.25).contains(&ratio)
        })
        .count();
    assert_eq!(k as usize, within);
    let mut workloads: Vec<&str> = compared.iter().map(|r| r["workload"].as_str().unwrap()).collect();
    workloads.dedup();
    let agrees = s["ranking_agrees"].as_object().unwrap();
    assert_eq!(agrees.keys().map(|k| k.as_str()).collect::<Vec<_>>(), workloads);
    assert!(agrees.values().all(|b| b.is_boolean()));
    // Each verdict comes with the two orders it compared; the verdict on the pairs the
    // real runs order is false exactly when a decided pair is swapped, and a strict
    // agreement implies it.
    let decides = s["ranking_agrees_where_real_decides"].as_object().unwrap();
    for (w, ok) in agrees {
        let r = &s["rankings"][w];
        assert_eq!(r["sim"].as_array().unwrap().len(), r["real"].as_array().unwrap().len(), "{w}");
        assert_eq!(ok.as_bool().unwrap(), r["sim"] == r["real"], "{w}");
        assert_eq!(decides[w].as_bool().unwrap(), r["swapped"].as_array().unwrap().is_empty(), "{w}");
        assert!(!ok.as_bool().unwrap() || decides[w].as_bool().unwrap(), "{w}");
    }
}

#[test]
fn a_bad_mlp_is_named_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    for (value, want) in [("0", "mlp = 0"), ("17", "mlp = 17"), ("\"many\"", "mlp")] {
        let m = dir.path().join("m.toml");
        std::fs::write(&m, format!("cpus = 2\n[costs]\nmlp = {value}\n")).unwrap();
        let o = sim(m.to_str().unwrap(), "dss", "pingpong:rounds=10", &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "mlp = {value}: {err}");
        assert!(err.contains(want) && !err.contains("panicked"), "mlp = {value}: {err}");
    }
}

#[test]
fn a_bad_lock_waiter_cost_is_named_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    for (kv, want) in [
        ("lock_spin_steps = 21", "lock_spin_steps = 21"),
        ("lock_yields = 1001", "lock_yields = 1001"),
        ("lock_pause_ns = -1", "lock_pause_ns = -1"),
        ("lock_yield_ns = 2.5", "lock_yield_ns = 2.5"),
        ("lock_unpark_ns = \"long\"", "lock_unpark_ns"),
        ("store_buffer = 129", "store_buffer = 129"),
        ("store_buffer = -4", "store_buffer = -4"),
        ("store_buffer = \"deep\"", "store_buffer"),
    ] {
        let m = dir.path().join("m.toml");
        std::fs::write(&m, format!("cpus = 2\n[costs]\n{kv}\n")).unwrap();
        let o = sim(m.to_str().unwrap(), "dss", "pingpong:rounds=10", &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{kv}: {err}");
        assert!(err.contains(want) && !err.contains("panicked"), "{kv}: {err}");
    }
}

#[test]
fn an_impossible_workload_is_reported_not_hung() {
    // A virtual-time limit shorter than the work: a clear message and exit code 2.
    let o = sim("up", "dss", "pingpong:rounds=100000", &["--max-virtual-s", "0.001"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("virtual-time limit"), "{}", stderr(&o));
}

#[test]
fn json_has_the_documented_fields_and_is_deterministic() {
    let run = || sim("numa-4x4", "mqs", "chat:rooms=1,messages=5", &["--format", "json", "--seed", "9"]);
    let (a, b) = (run(), run());
    assert!(a.status.success(), "{}", stderr(&a));
    let va: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let mut vb: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
    for k in [
        "throughput",
        "virtual_ns",
        "sim_events",
        "wall_s",
        "events_per_sec",
        "context_switches",
        "migrations",
        "wakeup_latency_ns",
        "runqueue_len",
        "locks",
        "machine",
        "policy",
        "workload",
        "seed",
    ] {
        assert!(va.get(k).is_some(), "missing field {k}");
    }
    for k in ["p50", "p99", "max"] {
        assert!(va["wakeup_latency_ns"].get(k).is_some(), "missing wakeup_latency_ns.{k}");
    }
    for k in ["name", "acquisitions", "contention_pct", "hold_mean_ns", "hold_max_ns", "wait_mean_ns"] {
        assert!(va["locks"][0].get(k).is_some(), "missing locks[].{k}");
    }
    assert_eq!(va["seed"], 9);
    assert_eq!(va["policy"], "mqs");
    let mut va = va;
    for v in [&mut va, &mut vb] {
        let o = v.as_object_mut().unwrap();
        o.remove("wall_s");
        o.remove("events_per_sec");
    }
    assert_eq!(va, vb);
}

#[test]
fn help_and_list_work() {
    let o = schedlab(&["sim", "--help"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("--workload"));
    let o = schedlab(&["list"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("numa-4x4") && out.contains("mqs") && out.contains("hackbench"));
    // The policies come from the registry, with their options.
    for name in schedlab_core::policies::names() {
        assert!(out.contains(&format!("  {name} ")), "{name} missing from {out}");
    }
    // Every option with its range and real default, from the tables the parsers read.
    for want in [
        "pool=N  CPUs per pool, a divisor of the machine's; 1..=64; default: whole machine (one pool)",
        "period=N  LBP's x",
        "1..=1000000; default: 45",
        "max_timeslice=TICKS|TIME  MAX_TIMESLICE; 1..=100000000 ticks or 1ns..=86400s; default: per era (j7: 300ms, 2.5: 300ms, 2.6: 200ms)",
        "min_timeslice=TICKS|TIME  MIN_TIMESLICE; 1..=100000000 ticks or 1ns..=86400s; default: 10ms",
        "rooms=N  chat rooms R; 1..=1000; default: 10",
        "unit_min=",
        "think_ns=TIME",
    ] {
        assert!(out.contains(want), "{want} missing from {out}");
    }
}

/// A sweep killed in the middle keeps the runs it finished; `--resume` runs only the
/// rest and writes files byte-identical to an uninterrupted sweep's.
#[test]
fn a_killed_sweep_resumes_to_the_same_files() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("k.toml");
    std::fs::write(
        &exp,
        "name = \"k\"\nmachines = [\"smp-4\"]\npolicies = [\"dss\", \"mqs\"]\n\
         workloads = [\"chat:rooms=2,messages=150\", \"hackbench:groups=2,loops=150\"]\n\
         seeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nbaseline = \"mqs\"\n",
    )
    .unwrap();
    let (whole, part) = (tmp.path().join("whole"), tmp.path().join("part"));
    let sweep = |out: &std::path::Path, extra: &[&str]| {
        let mut a = vec!["sweep", "--threads", "1", "--out", out.to_str().unwrap(), exp.to_str().unwrap()];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let o = schedlab(&sweep(&whole, &[]).iter().map(|s| s.as_str()).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(sweep(&part, &[]))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let runs = part.join("runs");
    // Finished runs: whole `NNNNN.json` files (not plan.json, not a `.tmp` being written).
    let count = || {
        std::fs::read_dir(&runs).map_or(0, |d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().trim_end_matches(".json").parse::<u32>().is_ok())
                .count()
        })
    };
    let start = std::time::Instant::now();
    while count() < 6 && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = count();
    assert!(kept >= 6, "no progress before the kill");
    // ~2 s of runs, killed after about 6 of 40.
    assert!(kept < 40 && !part.join("results.json").exists(), "the sweep finished before the kill");
    let o = schedlab(&sweep(&part, &["--resume"]).iter().map(|s| s.as_str()).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("({kept} kept from the earlier sweep)")), "{out}");
    for f in ["results.json", "results.csv", "table.md", "chart.svg"] {
        assert!(std::fs::read(whole.join(f)).unwrap() == std::fs::read(part.join(f)).unwrap(), "{f} differs");
    }
}

/// The malformed-input corpus (`tests/corpus/cases.txt`): every case exits with its
/// code, names its problem on stderr, never panics, and writes nothing.
#[test]
fn the_bad_input_corpus_fails_early_with_named_fields() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let out = tempfile::tempdir().unwrap();
    let cases = std::fs::read_to_string(dir.join("cases.txt")).unwrap();
    let mut n = 0;
    for line in cases.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let parts: Vec<&str> = line.splitn(3, " | ").collect();
        let (code, want, args) = (parts[0].trim().parse::<i32>().unwrap(), parts[1], parts[2]);
        let args: Vec<String> = args.split_whitespace().map(|a| a.replace("{dir}", dir.to_str().unwrap())).collect();
        let o = Command::new(env!("CARGO_BIN_EXE_schedlab")).args(&args).current_dir(out.path()).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{line}: exit {:?}, stderr {err}", o.status.code());
        assert!(err.contains(want), "{line}: stderr {err:?} should mention {want:?}");
        assert!(!err.contains("panicked"), "{line} panicked: {err}");
        n += 1;
    }
    assert!(n >= 40, "corpus has {n} cases");
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0, "a failing command wrote files");
}

/// Ctrl-C (SIGINT) stops a sweep cleanly: a line says what was kept, exit 130, and
/// `--resume` finishes it.
#[test]
fn ctrl_c_ends_a_sweep_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("c.toml");
    std::fs::write(
        &exp,
        "name = \"c\"\nmachines = [\"smp-4\"]\npolicies = [\"dss\", \"mqs\"]\n\
         workloads = [\"chat:rooms=2,messages=150\"]\nseeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]\nbaseline = \"mqs\"\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let args = ["sweep", "--threads", "1", "--out", out.to_str().unwrap(), exp.to_str().unwrap()];
    let child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let runs = out.join("runs");
    let start = std::time::Instant::now();
    while std::fs::read_dir(&runs).map_or(0, |d| d.count()) < 4 && start.elapsed() < std::time::Duration::from_secs(60)
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let ok = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(ok.success());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted:") && err.contains("--resume"), "{err}");
    assert!(!out.join("results.json").exists());
    let mut a: Vec<&str> = args.to_vec();
    a.push("--resume");
    let o = schedlab(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("kept from the earlier sweep"));
}

#[test]
fn sim_trace_writes_a_perfetto_file_and_changes_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    let args = ["--format", "json", "--seed", "4"];
    let plain = sim("smp-4", "mqs", "chat:rooms=2,messages=5", &args);
    let mut with = args.to_vec();
    with.extend(["--trace", path.to_str().unwrap()]);
    let traced = sim("smp-4", "mqs", "chat:rooms=2,messages=5", &with);
    assert!(plain.status.success() && traced.status.success(), "{}", stderr(&traced));
    // Byte for byte, but for the two wall-clock lines.
    let results = |o: &Output| -> String {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.contains("\"wall_s\"") && !l.contains("\"events_per_sec\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(results(&plain), results(&traced));
    let report: serde_json::Value = serde_json::from_slice(&traced.stdout).unwrap();
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let slices = trace["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X" && e["pid"] == 1).count();
    assert_eq!(slices as u64, report["context_switches"].as_u64().unwrap());
    let err = stderr(&traced);
    assert!(err.contains("trace: ") && err.contains(&format!("{slices} run slices")), "{err}");
    // A cap below the run's events: the file is still complete JSON, and the user is told.
    let mut capped = with.clone();
    capped.extend(["--trace-cap", "50"]);
    let o = sim("smp-4", "mqs", "chat:rooms=2,messages=5", &capped);
    assert!(o.status.success());
    assert!(stderr(&o).contains("warning: the trace stops at the cap of 50 events"), "{}", stderr(&o));
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(trace["otherData"]["dropped"].as_u64().unwrap() > 0);
}

/// Without the `mpi` feature, `sweep --mpi` says which feature is missing and how to
/// get it, and runs nothing.
#[cfg(not(feature = "mpi"))]
#[test]
fn sweep_mpi_without_the_feature_names_it() {
    let out = tempfile::tempdir().unwrap();
    let o = schedlab(&[
        "sweep",
        "--mpi",
        "--quick",
        "--out",
        out.path().to_str().unwrap(),
        "../../experiments/chat-smp.toml",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("--mpi") && e.contains("`mpi` cargo feature") && e.contains("--features mpi"), "{e}");
    assert!(!out.path().join("results.json").exists());
}

/// Regression: `schedlab sim ... | head` panicked ("failed printing to stdout: Broken
/// pipe") once the reader had gone. Here the reader closes the pipe before schedlab
/// writes a byte; schedlab must end without a panic message.
#[cfg(unix)]
#[test]
fn a_reader_that_closes_the_pipe_early_ends_schedlab_quietly() {
    use std::process::Stdio;
    // The read end is closed before schedlab starts: whatever it writes finds no reader
    // (a piped stdout closed after the spawn raced with a fast run filling the pipe's
    // buffer, and the run then exited 0).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["sim", "--machine", "smp-8", "--policy", "dss", "--workload", "chat:rooms=2,messages=20"])
        .args(["--format", "json"])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");
    // Killed by SIGPIPE, as `cat` would be; not a success (its output was lost).
    use std::os::unix::process::ExitStatusExt;
    const SIGPIPE: i32 = 13; // Linux and the BSDs
    assert_eq!(o.status.signal(), Some(SIGPIPE), "{:?}", o.status);
}

/// `eevdf` on the simulator: the three message-passing benchmarks run to completion
/// with the policy's invariants checked, and the same twice; `schedlab list` shows its
/// options with their defaults; a bad option exits with 2, naming it.
#[test]
fn eevdf_runs_deterministically_and_lists_its_defaults() {
    for w in ["chat:rooms=2,messages=20", "hackbench:groups=2,loops=20", "pingpong:rounds=500"] {
        let run = || sim("smp-8", "eevdf", w, &["--format", "json", "--check"]);
        let (a, b) = (run(), run());
        assert!(a.status.success(), "{w}: {}", stderr(&a));
        let mut va: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
        let mut vb: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
        assert_eq!(va["policy"], "eevdf");
        for v in [&mut va, &mut vb] {
            let o = v.as_object_mut().unwrap();
            o.remove("wall_s");
            o.remove("events_per_sec");
        }
        assert_eq!(va, vb, "{w}");
    }
    let o = schedlab(&["list"]);
    let out = String::from_utf8_lossy(&o.stdout);
    for key in ["base_slice=TIME", "; default: 750us", "scaling=log|none|linear", "delay_dequeue=on|off"] {
        assert!(out.contains(key), "{key} missing from {out}");
    }
    let o = sim("smp-2", "eevdf:run_to_parity=maybe", "pingpong", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("run_to_parity='maybe'"), "{}", stderr(&o));
}
