//! `schedlab kernelcheck`: the simulator against this machine's kernel. The run needs
//! perf and the right to record the sched tracepoints; without them the command exits 2
//! before any work and the test says "skipped: perf unavailable".

use std::process::{Command, Output};

fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().expect("run schedlab")
}

const ROWS: [&str; 7] = [
    "messaging threads pipes",
    "messaging threads sockets",
    "messaging processes pipes",
    "messaging processes sockets",
    "pipe",
    "kthreads chat",
    "kthreads hackbench",
];
const COLUMNS: [&str; 7] =
    ["throughput", "elapsed_ms", "switches", "migrations", "wake_p50_us", "wake_p99_us", "run_p50_us"];

/// The last seven fields of a table line (the engine's name may hold spaces).
fn figures(line: &str) -> Vec<Option<f64>> {
    let f: Vec<&str> = line.split_whitespace().collect();
    assert!(f.len() >= 8, "a table line of 7 figures: {line}");
    f[f.len() - 7..].iter().map(|v| if *v == "-" { None } else { Some(v.parse().expect(line)) }).collect()
}

#[test]
fn bad_flags_exit_2() {
    for args in [&["kernelcheck", "--no-such-flag"][..], &["kernelcheck", "--format", "xml"], &["kernelcheck", "extra"]]
    {
        let o = schedlab(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    let o = schedlab(&["kernelcheck", "--machine", "no-such-machine.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--machine"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = schedlab(&["kernelcheck-kthread", "chat", "0", "20", "5"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `--tbench`'s flags and its child refuse bad input with exit 2 before any work (the
/// run itself is CI's `kernelcheck --tbench --quick` step).
#[test]
fn tbench_bad_input_exits_2() {
    let o = schedlab(&["kernelcheck", "--trace-out", "x"]);
    assert_eq!(o.status.code(), Some(2), "--trace-out needs --tbench");
    // A folder under a file (the crate's Cargo.toml): refused before perf is asked.
    let o = schedlab(&["kernelcheck", "--tbench", "--trace-out", "Cargo.toml/traces"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--trace-out"), "{}", String::from_utf8_lossy(&o.stderr));
    for args in [&["kernelcheck-tbench", "4"][..], &["kernelcheck-tbench", "0", "2"], &["kernelcheck-tbench", "4", "x"]]
    {
        let o = schedlab(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("kernelcheck-tbench"), "{args:?}");
    }
}

#[test]
fn quick_run_prints_every_row_and_its_ratios() {
    let o = schedlab(&["kernelcheck", "--quick", "--machine", "smp-2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(2) && err.contains("perf") {
        println!("skipped: perf unavailable ({})", err.trim());
        return;
    }
    assert!(o.status.success(), "{err}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("kernel: Linux "), "{text}");
    assert!(text.contains("scheduler features: "), "{text}");
    assert!(text.contains("machine: smp-2 (given with --machine)"), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    for name in ROWS {
        let at = lines
            .iter()
            .position(|l| l.starts_with(&format!("{name} [")))
            .unwrap_or_else(|| panic!("row {name}: {text}"));
        let block = &lines[at..];
        let head = block.iter().find(|l| l.trim_start().starts_with("engine")).expect("header");
        for c in COLUMNS {
            assert!(head.contains(c), "{name}: column {c}: {head}");
        }
        let row = |engine: &str| {
            let l =
                block.iter().find(|l| l.trim_start().starts_with(engine)).unwrap_or_else(|| panic!("{name}: {engine}"));
            figures(l)
        };
        let kernel = row("kernel ");
        assert!(kernel[0].is_some_and(|t| t > 0.0), "{name}: kernel throughput");
        assert!(kernel[2].is_some_and(|t| t > 0.0), "{name}: kernel switches");
        for p in ["eevdf", "cfs"] {
            let sim = row(&format!("sim {p}"));
            let ratios = row(&format!("{p}/kernel"));
            for (i, c) in COLUMNS.iter().enumerate() {
                match (sim[i], kernel[i], ratios[i]) {
                    (Some(s), Some(k), Some(r)) => {
                        assert!((r - s / k).abs() <= 0.006 + 1e-9 * r.abs(), "{name} {p} {c}: {r} vs {s}/{k}")
                    }
                    (s, k, None) => assert!(s.is_none() || k.is_none_or(|k| k == 0.0), "{name} {p} {c}: no ratio"),
                    (s, k, Some(r)) => panic!("{name} {p} {c}: ratio {r} of {s:?}/{k:?}"),
                }
            }
        }
    }
}
