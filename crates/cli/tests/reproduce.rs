//! `schedlab reproduce`: the report is byte-identical across runs and thread counts
//! apart from its wall-clock section, has every section, and bad flags exit 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

const EXPERIMENTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments");

fn reproduce(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).arg("reproduce").args(args).output().expect("run schedlab reproduce")
}

fn run_into(dir: &Path, extra: &[&str]) {
    let out = dir.to_str().unwrap();
    let mut a = vec!["--quick", "--experiments", EXPERIMENTS, "--out", out];
    a.extend_from_slice(extra);
    let o = reproduce(&a);
    assert!(o.status.success(), "reproduce {a:?} failed: {}", String::from_utf8_lossy(&o.stderr));
}

/// A file of the report up to its wall-clock section (the one part allowed to differ).
fn deterministic_part(dir: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    let cut = ["## Measured on this machine (not deterministic)", "<section id=\"wall-clock\">"]
        .iter()
        .filter_map(|m| text.find(m))
        .min()
        .unwrap_or(text.len());
    text[..cut].to_string()
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("schedlab-reproduce-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The tests that read [`full_run`]; the last to finish removes it.
static FULL_RUN_READERS: AtomicUsize = AtomicUsize::new(2);

/// The whole report (every experiment and the measured section), `--threads 2`: made
/// once and read by both tests below (the measured section alone takes most of a
/// run's time).
fn full_run() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tmp("all");
        run_into(&dir, &["--threads", "2"]);
        dir
    })
}

fn done_with_full_run() {
    if FULL_RUN_READERS.fetch_sub(1, Ordering::SeqCst) == 1 {
        let _ = std::fs::remove_dir_all(full_run());
    }
}

/// Every experiment of the catalog, as `--only` names them (the measured part left out).
fn every_experiment() -> String {
    let mut names: Vec<String> = std::fs::read_dir(EXPERIMENTS)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".toml").map(String::from))
        .collect();
    names.sort();
    names.join(",")
}

#[test]
fn byte_identical_across_runs_and_thread_counts() {
    let only = ["--only", "netbench-starvation"];
    let dirs = [tmp("t1a"), tmp("t1b"), tmp("t1all")];
    run_into(&dirs[0], &[&only[..], &["--threads", "1"]].concat());
    run_into(&dirs[1], &[&only[..], &["--threads", "1"]].concat());
    // Every experiment on one thread, against the full run on two, which also measures
    // the real runtime: none of it may leak into the deterministic part.
    run_into(&dirs[2], &["--only", &every_experiment(), "--threads", "1"]);
    let full = full_run();
    for name in ["report.md", "index.html", "results.json"] {
        for (a, b) in [(&dirs[0], &dirs[1]), (&dirs[2], &full.to_path_buf())] {
            let text = deterministic_part(a, name);
            assert!(text.len() > 500, "{name} is nearly empty");
            assert_eq!(text, deterministic_part(b, name), "{name} differs between {} and {}", a.display(), b.display());
        }
    }
    // The wall-clock section is there, last, and only there.
    let md = std::fs::read_to_string(dirs[0].join("report.md")).unwrap();
    let wall = md.find("## Measured on this machine (not deterministic)").expect("wall-clock section");
    assert!(!md[..wall].contains("wall s"), "a wall-clock figure before the wall-clock section");
    for d in [&dirs[0], &full.to_path_buf()] {
        let json = std::fs::read_to_string(d.join("results.json")).unwrap();
        assert!(!json.contains("wall_s") && !json.contains("events_per_sec"), "wall-clock fields in results.json");
        assert!(
            !json.contains("real runtime") && !json.contains("calibration"),
            "real-runtime numbers in results.json"
        );
    }
    // Without `measured` in --only the runtime is not measured, and the report says so.
    assert!(!dirs[0].join("measured.json").exists(), "measured.json without --only measured");
    assert!(md[wall..].contains("were not run"), "report.md does not say the measurements were skipped");
    let md2 = std::fs::read_to_string(full.join("report.md")).unwrap();
    let wall2 = md2.find("## Measured on this machine (not deterministic)").unwrap();
    assert!(md2[wall2..].contains("### Converse ping-pong"), "no Converse part in the measured section");
    assert!(md2[wall2..].contains("| pmqs:pool=1,lb=lbp,period=10 |"), "no PMQS row beside the simulator");
    assert!(full.join("measured.json").is_file(), "no measured.json");
    assert!(!dirs[2].join("measured.json").exists(), "measured.json without measured in --only");
    for d in &dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    done_with_full_run();
}

#[test]
fn every_section_is_present() {
    let dir = full_run();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let names = [
        "chat-numa",
        "chat-smp",
        "mkbench-numa",
        "mkbench-smp",
        "webbench-cpus",
        "colours-threshold",
        "chat-colours",
        "netbench-up",
        "netbench-4way",
        "netbench-starvation",
        "netbench-live",
    ];
    for (i, n) in names.iter().enumerate() {
        assert!(md.contains(&format!("\n## {}. {n}: ", i + 1)), "report.md lacks the section of {n}");
        assert!(
            md.contains(&format!("- **Regenerate:** `schedlab sweep --quick experiments/{n}.toml`")),
            "report.md: no command for {n}"
        );
        assert!(html.contains(&format!("<section id=\"{n}\">")), "index.html lacks the section of {n}");
        assert_eq!(json["sections"][i]["name"], *n, "results.json: section {i}");
    }
    for must in [
        "**Source:**",
        "**Form:**",
        "**Seeds:**",
        "cost model of",
        "## Measured on this machine (not deterministic)",
        "### Converse ping-pong and scheduler overhead",
        "### Chat, ping-pong and hackbench: the real runtime beside the simulator",
        "`hackbench:groups=1,loops=50`",
        "Machine: ",
    ] {
        assert!(md.contains(must), "report.md lacks {must:?}");
    }
    // The claims summary comes first, and results.json carries every verdict and every
    // published cell beside its reproduction.
    let summary = md.find("## Summary: the sources' claims, judged").expect("claims summary");
    assert!(summary < md.find("\n## 1. chat-numa").unwrap(), "the summary is not first");
    let claims = json["claims"].as_array().expect("claims");
    assert!(claims.len() >= 20, "{} claims", claims.len());
    for c in claims {
        for k in ["id", "source", "quote_ref", "verdict", "detail"] {
            assert!(c.get(k).is_some(), "claim without {k}: {c}");
        }
        assert!(["holds", "fails", "cannot-check"].contains(&c["verdict"].as_str().unwrap()), "{c}");
    }
    let cells = json["comparison"].as_array().expect("comparison");
    assert!(cells.len() > 180, "{} published cells", cells.len());
    for k in ["published", "reproduced", "ratio", "verdict"] {
        assert!(cells.iter().all(|c| c.get(k).is_some()), "a cell without {k}");
    }
    // At quick sizes some cells have the papers' configurations: their published value
    // stands beside the reproduced one.
    assert!(cells.iter().any(|c| c["reproduced"].is_number()), "no cell compared at --quick");
    assert!(md.contains(" · paper "), "no published value beside a reproduced cell");
    assert!(md.contains("**Against the source:**"), "no tally under the sections");
    // Self-contained: the plots inline, nothing fetched.
    assert!(html.matches("<svg").count() >= 10, "index.html has too few inline plots");
    // (The SVGs' `xmlns="http://www.w3.org/2000/svg"` is a name, not a fetch.)
    for fetch in ["<script", "<link", "src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!html.contains(fetch), "index.html fetches something: {fetch:?}");
    }
    // Every plot report.md links to exists.
    for line in md.lines().filter(|l| l.starts_with("![")) {
        let path = &line[line.find("](").unwrap() + 2..line.len() - 1];
        assert!(dir.join(path).is_file(), "report.md links to missing {path}");
    }
    done_with_full_run();
}

#[test]
fn bad_flags_exit_2_naming_the_problem() {
    let cases: &[(&[&str], &str)] = &[
        (&["--only", "nosuch"], "--only \"nosuch\": no such experiment (known: chat-numa"),
        (&["--only", ""], "--only"),
        (&["--threads", "0"], "--threads 0"),
        (&["--threads", "-1"], "--threads"),
        (&["--experiments", "/nonexistent/dir"], "/nonexistent/dir"),
        (&["--bogus"], "--bogus"),
    ];
    // Without the `mpi` feature, `--mpi` names the build that has it.
    let no_mpi: &[(&[&str], &str)] = &[(&["--mpi"], "built without MPI")];
    let cases = cases.iter().chain(if cfg!(feature = "mpi") { &[][..] } else { no_mpi });
    for (args, needle) in cases {
        let o = reproduce(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "reproduce {args:?}: exit {:?}, stderr {err}", o.status.code());
        assert!(err.contains(needle), "reproduce {args:?}: stderr does not name {needle:?}: {err}");
        assert!(!err.contains("panicked"), "reproduce {args:?} panicked: {err}");
    }
    // An experiments directory without the catalog's files is named too.
    let empty = tmp("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o =
        reproduce(&["--quick", "--experiments", empty.to_str().unwrap(), "--out", empty.join("o").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("chat-numa.toml"), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&empty);
}
