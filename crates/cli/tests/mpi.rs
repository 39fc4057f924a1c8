//! `schedlab bench --mpi` under `mpirun -np 2` (feature `mpi`; CI runs
//! `cargo test --release -p schedlab --features mpi --test mpi`): the rows, and
//! failures that end the job with a message naming the rank and PE, never a hang.
#![cfg(feature = "mpi")]

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `mpirun -np 2 schedlab <args>` under `timeout` (a hang fails the test).
fn mpirun(args: &[&str]) -> Command {
    let mut c = Command::new("timeout");
    c.args(["-k", "5", "90", "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2"])
        .arg(env!("CARGO_BIN_EXE_schedlab"))
        .args(args);
    c
}

fn run(args: &[&str]) -> (Output, String) {
    let out = mpirun(args).output().expect("run mpirun (is OpenMPI installed?)");
    let err = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    (out, err)
}

#[test]
fn quick_pingpong_prints_every_row() {
    let (out, err) = run(&["bench", "--mpi", "--quick", "--format", "json"]);
    assert!(out.status.success(), "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("JSON rows");
    let sizes = [16u64, 64, 256, 1024, 4096];
    for (bench, runtime, policy) in [
        ("mpi-pingpong", "mpi", "MPI_Send/MPI_Recv"),
        ("mpi-pingpong", "converse", "direct"),
        ("mpi-pingpong", "converse", "queued"),
        ("mpi-pingpong-ratio", "converse", "direct/mpi"),
        ("mpi-queueing-overhead", "converse", "queued-direct"),
    ] {
        let got: Vec<u64> = rows
            .iter()
            .filter(|r| r["bench"] == bench && r["runtime"] == runtime && r["policy"] == policy)
            .map(|r| r["size"].as_u64().unwrap())
            .collect();
        assert_eq!(got, sizes, "{bench} {runtime} {policy}");
    }
    for r in rows.iter().filter(|r| r["bench"] == "mpi-pingpong") {
        let v = r["value"].as_f64().unwrap();
        assert!(v > 0.0 && v < 1e9, "one-way time {v} ns: {r}");
    }
    assert!(err.contains("rank 0 on") && err.contains("rank 1 on"), "{err}");
}

#[test]
fn small_and_large_messages_between_ranks_arrive_in_send_order() {
    let (out, err) = run(&["bench", "--mpi", "--check-order"]);
    assert!(out.status.success(), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    // 2 PEs per rank: PE p and PE p + 2 exchange 240 messages each way.
    for (pe, from) in [(0, 2), (1, 3), (2, 0), (3, 1)] {
        let prefix = format!("PE {pe} received 240 messages from PE {from} in send order (");
        let line = text.lines().find(|l| l.contains(&prefix)).unwrap_or_else(|| panic!("no line for PE {pe}: {err}"));
        let counts: Vec<u64> = line
            .split(&prefix)
            .nth(1)
            .unwrap()
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        // Both routes were taken, many times each.
        assert!(counts[0] >= 40 && counts[1] >= 40, "small and large both used: {line}");
    }
}

#[test]
fn a_killed_rank_ends_the_job_naming_rank_and_pes() {
    let start = Instant::now();
    let mut child = mpirun(&["bench", "--mpi"]).stderr(Stdio::piped()).stdout(Stdio::null()).spawn().expect("mpirun");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut log = Vec::new();
    let mut victim = None;
    // Kill rank 1 once the first size has been measured (mid-run).
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) {
        if let Some(p) = line.strip_prefix("schedlab bench --mpi: rank 1 on ") {
            let pid = p.split("(pid ").nth(1).and_then(|s| s.split(')').next()).expect("pid in the rank line");
            victim = Some(pid.to_string());
        }
        let measured = line.trim_start().starts_with("16 B:");
        log.push(line);
        if measured {
            break;
        }
    }
    let pid = victim.unwrap_or_else(|| panic!("no rank 1 line: {log:?}"));
    let killed = Command::new("kill").args(["-9", &pid]).status().unwrap().success();
    assert!(killed, "kill -9 {pid}: rank 1 was already gone: {log:?}");
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) {
        log.push(line);
    }
    let status = child.wait().unwrap();
    let log = log.join("\n");
    assert!(!status.success(), "{log}");
    assert_ne!(status.code(), Some(124), "timed out (a hang): {log}");
    assert!(start.elapsed() < Duration::from_secs(80), "{log}");
    assert!(log.contains("process rank 1") && log.contains("signal 9"), "the launcher names the dead rank: {log}");
    assert!(log.contains("rank 0 (PEs 0..1) stopped by the MPI launcher"), "the survivor names its PEs: {log}");
}

#[test]
fn a_panicking_remote_handler_aborts_the_job_naming_rank_and_pe() {
    let (out, err) = run(&["bench", "--mpi", "--quick", "--fault", "handler-panic"]);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("handler #1 failed on PE 1 (rank 1): injected fault"), "{err}");
}

#[test]
fn a_send_to_a_missing_pe_is_an_error_at_the_sender() {
    let (out, err) = run(&["bench", "--mpi", "--quick", "--fault", "send-to-missing-pe"]);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("on PE 1 (rank 1): PE 1: send to PE 7, but the machine has PEs 0..2"), "{err}");
}

#[test]
fn one_rank_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab")).args(["bench", "--mpi", "--quick"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs exactly 2 MPI ranks, got 1"));
}

/// `schedlab reproduce --mpi` launches the 2-rank ping-pong itself and puts it in the
/// report's measured section, table and both figures; a launcher that does not exist
/// fails that part only, naming the launcher.
#[test]
fn reproduce_mpi_puts_the_ranks_ping_pong_in_the_report() {
    let dir = std::env::temp_dir().join(format!("schedlab-reproduce-mpi-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let reproduce = |launcher: Option<&str>| {
        let mut c = Command::new("timeout");
        c.args([
            "-k",
            "5",
            "300",
            env!("CARGO_BIN_EXE_schedlab"),
            "reproduce",
            "--quick",
            "--only",
            "chat-smp",
            "--mpi",
            "--out",
        ])
        .arg(&dir);
        if let Some(l) = launcher {
            c.env("SCHEDLAB_MPIRUN", l);
        }
        c.output().expect("run schedlab reproduce")
    };
    let out = reproduce(None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let part = &md[md.find("### Converse over MPI").expect("MPI part in report.md")..];
    for size in ["| 16 ", "| 64 ", "| 256 ", "| 1024 ", "| 4096 "] {
        assert!(part.contains(size), "no row for size {size} in {part}");
    }
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("Converse over MPI") && html.matches("<svg").count() >= 3, "figures inline in index.html");
    let measured: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("measured.json")).unwrap()).unwrap();
    assert_eq!(measured["mpi"]["rows"].as_array().map(Vec::len), Some(5 * 5), "{}", measured["mpi"]);

    let out = reproduce(Some("/nonexistent/mpirun"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("1 real-runtime measurements failed"), "{err}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("cannot start the MPI launcher `/nonexistent/mpirun`"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}
