//! Every option that writes a file or a directory refuses a path it cannot write with
//! exit code 2 and the path named, before any simulation or measurement runs
//! (docs/cli.md, "Output paths").

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Far below a calibration, a simulation of a sweep or a bench round: the check comes
/// before any of them.
const BEFORE_ANY_WORK: Duration = Duration::from_secs(10);

fn schedlab_in(dir: &Path, args: &[&str]) -> (Output, Duration) {
    let start = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_schedlab")).current_dir(dir).args(args).output().expect("run schedlab");
    (o, start.elapsed())
}

/// A folder to run in, holding a regular file `plain` (no path under it can be
/// created, not even by root) and a one-run experiment file `e.toml`.
fn workspace() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("plain"), "not a folder").unwrap();
    std::fs::write(
        tmp.path().join("e.toml"),
        "name = \"e\"\nmachines = [\"smp-2\"]\npolicies = [\"dss\"]\nworkloads = [\"pingpong:rounds=100\"]\nseeds = [1]\nbaseline = \"dss\"\n",
    )
    .unwrap();
    tmp
}

/// `args` with `{}` replaced by `path` fails with exit 2 naming `flag path`, fast.
fn refused(dir: &Path, args: &[&str], flag: &str, path: &str) {
    let args: Vec<String> = args.iter().map(|a| a.replace("{}", path)).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (o, took) = schedlab_in(dir, &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: exit {:?}, stderr {err}", o.status.code());
    assert!(err.contains(&format!("{flag} {path}")), "{args:?}: stderr {err:?} should name {flag} {path}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(took < BEFORE_ANY_WORK, "{args:?}: took {took:?}, so it did work before the check");
}

const SIM: &[&str] = &["sim", "--machine", "smp-2", "--policy", "dss", "--workload", "pingpong:rounds=100"];

/// Each output option, as `(arguments with {} for the path, flag)`.
fn options() -> Vec<(Vec<&'static str>, &'static str)> {
    let with = |base: &[&'static str], tail: &[&'static str]| base.iter().chain(tail).copied().collect::<Vec<_>>();
    vec![
        (with(SIM, &["--plot", "{}"]), "--plot"),
        (with(SIM, &["--trace", "{}"]), "--trace"),
        (vec!["sweep", "--quick", "--out", "{}", "e.toml"], "--out"),
        (vec!["reproduce", "--quick", "--out", "{}"], "--out"),
        (vec!["bench", "--mpi", "--quick", "--out", "{}"], "--out"),
        (vec!["validate", "--quick", "--machine-out", "{}"], "--machine-out"),
        (vec!["validate", "--quick", "--trace", "{}"], "--trace"),
    ]
}

#[test]
fn a_path_under_a_regular_file_is_refused_before_any_work() {
    let ws = workspace();
    for (args, flag) in options() {
        refused(ws.path(), &args, flag, "plain/x");
    }
}

#[test]
fn a_path_no_one_can_create_is_refused_before_any_work() {
    // /proc takes no new entries, not even from root.
    let ws = workspace();
    for (args, flag) in options() {
        refused(ws.path(), &args, flag, "/proc/schedlab-none/x");
    }
}

/// A file goes into a folder that exists: a missing folder is not created for it.
#[test]
fn a_file_in_a_missing_folder_is_refused_and_no_folder_is_made() {
    let ws = workspace();
    for (args, flag) in options().into_iter().filter(|(a, _)| !a.contains(&"--out")) {
        refused(ws.path(), &args, flag, "missing/x");
        assert!(!ws.path().join("missing").exists(), "{args:?} made a folder");
    }
}

/// `sweep`'s default directory, `out/<name>`, is checked as an explicit one is.
#[test]
fn the_default_sweep_directory_is_checked_too() {
    let ws = workspace();
    std::fs::write(ws.path().join("out"), "a file where the default folder goes").unwrap();
    let (o, took) = schedlab_in(ws.path(), &["sweep", "--quick", "e.toml"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr {err}");
    assert!(err.contains("--out out/e"), "{err}");
    assert!(took < BEFORE_ANY_WORK);
    // Under MPI too (checked before MPI starts, so a build without the feature says so
    // only for a good path).
    let (o, took) = schedlab_in(ws.path(), &["sweep", "--mpi", "--quick", "e.toml"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr {err}");
    assert!(err.contains("--out out/e"), "{err}");
    assert!(took < BEFORE_ANY_WORK);
}

/// An output directory is created with its missing parents, and the sweep writes there.
#[test]
fn an_output_directory_is_created_with_its_parents() {
    let ws = workspace();
    let (o, _) = schedlab_in(ws.path(), &["sweep", "--quick", "--out", "a/b/c", "e.toml"]);
    assert_eq!(o.status.code(), Some(0), "stderr {}", String::from_utf8_lossy(&o.stderr));
    assert!(ws.path().join("a/b/c/results.json").is_file());
}
