//! `schedlab sim --workload trace:FILE` on the checked-in captures
//! (`crates/workloads/tests/data/`): every file runs to completion under DSS, MQS and
//! O(1), and bad files exit 2 naming the file (and line).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads/tests/data").join(name)
}

fn sim(machine: &str, policy: &str, workload: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["sim", "--machine", machine, "--policy", policy, "--workload", workload, "--format", "json", "--check"])
        .output()
        .expect("run schedlab")
}

#[test]
fn captures_replay_to_completion_under_dss_mqs_o1() {
    for file in ["perf-messaging-g1-l10.txt", "rt-chat-rooms1-messages40-o1.json"] {
        let spec = format!("trace:{}", data(file).display());
        for machine in ["smp-2", "smp-8"] {
            for policy in ["dss", "mqs", "o1"] {
                let o = sim(machine, policy, &spec);
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(o.status.success(), "{file} {machine} {policy}: {err}");
                // The mapping summary is printed on stderr.
                assert!(err.contains("wake-ups → send/receive"), "{err}");
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                let sent = v["messages_sent"].as_u64().unwrap();
                assert!(sent > 100, "{file}: {sent} sends");
                assert_eq!(v["messages_received"].as_u64(), Some(sent), "{file} {machine} {policy}");
                assert_eq!(v["completed"].as_u64(), Some(sent));
                assert!(v["tasks"].as_u64().unwrap() > 41);
                assert_eq!(v["throughput_unit"], "wake-ups/s");
            }
        }
    }
}

#[test]
fn bad_trace_files_exit_2_naming_file_and_line() {
    let dir = std::env::temp_dir().join(format!("schedlab-cli-trace-in-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let perf = std::fs::read_to_string(data("perf-messaging-g1-l10.txt")).unwrap();
    let mut cut: String = perf.lines().take(12).collect::<Vec<_>>().join("\n");
    cut.truncate(cut.len() - 30);
    let cases = [
        ("empty.txt", String::new(), "empty file"),
        ("garbage.txt", "\u{1}\u{2} garbage\n".to_string(), "line 1:"),
        ("truncated.txt", cut, "line 12:"),
        ("truncated.json", "{\"traceEvents\":[\n{\"ph\":\"X\",".to_string(), "line 2"),
    ];
    for (name, text, want) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let o = sim("smp-2", "dss", &format!("trace:{}", path.display()));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(&path.display().to_string()) && err.contains(want), "{name}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let o = sim("smp-2", "dss", "trace:/nonexistent/p.txt");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/p.txt"));
    let o = sim("smp-2", "dss", &format!("trace:{},mhz=0", data("perf-messaging-g1-l10.txt").display()));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("mhz=0"));
    std::fs::remove_dir_all(&dir).unwrap();
}
