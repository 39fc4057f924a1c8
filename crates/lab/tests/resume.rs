//! Nothing finished is lost: every run is journalled as it completes; a failed run does
//! not take the others down; an interrupted sweep resumed with `resume` gives files
//! byte-identical to an uninterrupted one; the whole matrix is checked before any run.

use schedlab_lab::{run_sweep, write_outputs, Experiment, SweepOptions};
use std::path::Path;

mod common;
use common::OUTPUTS;

fn matrix() -> String {
    common::matrix("resume")
}

fn sweep_into(exp: &str, out: &Path, resume: bool) -> schedlab_lab::Sweep {
    let plan = Experiment::from_toml(exp).unwrap().plan(false).unwrap();
    let opts = SweepOptions { threads: 2, journal: Some(out.join("runs")), resume, ..Default::default() };
    let sweep = run_sweep(plan, &opts).unwrap();
    write_outputs(&sweep, out).unwrap();
    sweep
}

fn read(dir: &Path, f: &str) -> Vec<u8> {
    std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display()))
}

#[test]
fn an_interrupted_sweep_resumes_to_identical_files() {
    let tmp = tempfile::tempdir().unwrap();
    let (whole, part) = (tmp.path().join("whole"), tmp.path().join("part"));
    let full = sweep_into(&matrix(), &whole, false);
    assert_eq!((full.runs.len(), full.resumed, full.failures.len()), (24, 0, 0));
    // An interrupted sweep: some runs finished (their files), one was being written.
    sweep_into(&matrix(), &part, false);
    let runs = part.join("runs");
    for i in [0, 3, 4, 10, 17, 23] {
        std::fs::remove_file(runs.join(format!("{i:05}.json"))).unwrap();
    }
    std::fs::write(runs.join("00005.json"), b"{\"run\": {\"mach").unwrap(); // torn write
    for f in OUTPUTS {
        std::fs::remove_file(part.join(f)).unwrap();
    }
    let resumed = sweep_into(&matrix(), &part, true);
    assert_eq!(resumed.resumed, 24 - 7, "kept every whole run file");
    for f in OUTPUTS {
        assert!(read(&whole, f) == read(&part, f), "{f} differs after resume");
    }
    // Without --resume the journal starts over.
    let fresh = sweep_into(&matrix(), &part, false);
    assert_eq!(fresh.resumed, 0);
}

#[test]
fn resume_refuses_the_journal_of_another_matrix() {
    let tmp = tempfile::tempdir().unwrap();
    sweep_into(&matrix(), tmp.path(), false);
    let changed = matrix().replace("seeds = [1, 2]", "seeds = [1, 3]");
    let plan = Experiment::from_toml(&changed).unwrap().plan(false).unwrap();
    let opts = SweepOptions { journal: Some(tmp.path().join("runs")), resume: true, ..Default::default() };
    let e = run_sweep(plan, &opts).err().expect("must refuse");
    assert_eq!(e.exit_code(), 2);
    assert!(e.message().contains("seeds"), "{e}");
}

#[test]
fn a_failed_run_keeps_the_others() {
    // 2 ms of virtual time: the short ping-pong finishes, the long one cannot.
    let exp = matrix().replace("\"pingpong:rounds=300\"", "\"pingpong:rounds=300\", \"pingpong:rounds=200000\"")
        + "max_virtual_s = 0.002\n";
    let tmp = tempfile::tempdir().unwrap();
    let s = sweep_into(&exp, tmp.path(), false);
    assert!(!s.failures.is_empty());
    assert!(s.failures.iter().all(|f| f.error.contains("virtual-time limit")), "{:?}", s.failures);
    let finished = s.runs.iter().flatten().count();
    assert_eq!(finished + s.failures.len(), 36);
    let json: serde_json::Value = serde_json::from_slice(&read(tmp.path(), "results.json")).unwrap();
    assert_eq!(json["runs"].as_array().unwrap().len(), finished);
    assert_eq!(json["failures"].as_array().unwrap().len(), s.failures.len());
    assert_eq!(std::fs::read_dir(tmp.path().join("runs")).unwrap().count(), finished + 1, "plan.json + runs");
    let table = String::from_utf8(read(tmp.path(), "table.md")).unwrap();
    assert!(table.contains("n/a") && !table.contains("NaN"), "{table}");
}

#[test]
fn the_whole_matrix_is_checked_before_any_run() {
    let exp = matrix()
        .replace("machines = [\"smp-2\", \"smp-4\"]", "machines = [\"smp-2\", \"smp-6\", \"smp-8\"]")
        .replace("\"pmqs:pool=2,lb=lbp,period=10\"", "\"pmqs:pool=4\", \"pmqs:pool=3\"");
    let e = Experiment::from_toml(&exp).unwrap().plan(false).err().expect("misfits");
    assert_eq!(e.exit_code(), 2);
    let m = e.message();
    // pool=4 fits smp-8 only; pool=3 fits smp-6 only: four misfits, all named.
    for want in [
        "policies[2] = \"pmqs:pool=4\" on machines[0] = \"smp-2\"",
        "policies[2] = \"pmqs:pool=4\" on machines[1] = \"smp-6\"",
        "policies[3] = \"pmqs:pool=3\" on machines[0] = \"smp-2\"",
        "policies[3] = \"pmqs:pool=3\" on machines[2] = \"smp-8\"",
    ] {
        assert!(m.contains(want), "{want:?} missing from {m}");
    }
    assert!(m.contains("(4)"), "{m}");
    let e = Experiment::from_toml(&matrix().replace("name = \"resume\"", "name = \"..\"")).unwrap().plan(false).err();
    assert!(e.expect("'..' is not a name").message().contains("name"));
}
