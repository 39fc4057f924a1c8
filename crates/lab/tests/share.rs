//! A sweep split over ranks (`schedlab sweep --mpi`) without MPI: each "rank" runs its
//! share in this process, the parts travel as the text they would be sent as, and rank
//! 0's merged files must be byte-identical to a sweep run whole.

use schedlab_lab::{error_part, run_sweep, write_outputs, Experiment, LabError, Share, Sweep, SweepOptions};
use std::path::Path;

mod common;
use common::OUTPUTS;

fn matrix() -> String {
    common::matrix("share")
}

fn run(exp: &str, share: Option<Share>, journal: Option<&Path>) -> Sweep {
    let plan = Experiment::from_toml(exp).unwrap().plan(false).unwrap();
    let opts = SweepOptions { threads: 2, share, journal: journal.map(Path::to_path_buf), ..Default::default() };
    run_sweep(plan, &opts).unwrap()
}

/// Rank 0's sweep after merging the parts of ranks 1..ranks, and every failure
/// reported with the rank it came from.
fn split(exp: &str, ranks: usize, journal: Option<&Path>) -> (Sweep, Vec<(usize, String)>) {
    let mut root = run(exp, Some(Share { rank: 0, ranks }), journal);
    let mut named = Vec::new();
    for r in 1..ranks {
        let part = run(exp, Some(Share { rank: r, ranks }), None).part_json(Share { rank: r, ranks });
        for f in root.merge(r, ranks, &part, journal).unwrap() {
            named.push((r, f.error));
        }
    }
    (root, named)
}

fn read(dir: &Path, f: &str) -> Vec<u8> {
    std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display()))
}

#[test]
fn shares_cover_the_matrix_once() {
    for ranks in 1..6 {
        for i in 0..50 {
            let owners = (0..ranks).filter(|&r| Share { rank: r, ranks }.owns(i)).count();
            assert_eq!(owners, 1, "run {i} of {ranks} ranks");
        }
    }
}

#[test]
fn merged_ranks_write_the_files_of_a_whole_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    write_outputs(&run(&matrix(), None, Some(&whole.join("runs"))), &whole).unwrap();
    // 3 ranks: 24 runs do not divide evenly, and rank 0 runs only a third of them.
    for ranks in [2, 3] {
        let dir = tmp.path().join(format!("ranks{ranks}"));
        let (sweep, failed) = split(&matrix(), ranks, Some(&dir.join("runs")));
        assert!(failed.is_empty());
        assert_eq!(sweep.runs.iter().flatten().count(), 24);
        write_outputs(&sweep, &dir).unwrap();
        for f in OUTPUTS {
            assert!(read(&whole, f) == read(&dir, f), "{f} differs with {ranks} ranks");
        }
        // Rank 0's journal holds every run, as after a local sweep (so --resume works on it).
        let journalled = std::fs::read_dir(dir.join("runs")).unwrap().count();
        assert_eq!(journalled, 24 + 1, "plan.json + every run");
    }
}

#[test]
fn a_failed_run_on_another_rank_is_reported_with_its_rank_and_listed_as_locally() {
    // 2 ms of virtual time: the long ping-pong cannot finish (runs 2, 3, 8, 9, ... of 36:
    // both ranks have failures).
    let exp = matrix().replace("\"pingpong:rounds=300\"", "\"pingpong:rounds=300\", \"pingpong:rounds=200000\"")
        + "max_virtual_s = 0.002\n";
    let tmp = tempfile::tempdir().unwrap();
    let local = run(&exp, None, None);
    write_outputs(&local, &tmp.path().join("local")).unwrap();
    let (sweep, failed) = split(&exp, 2, None);
    assert!(
        !failed.is_empty() && failed.iter().all(|(r, e)| *r == 1 && e.contains("virtual-time limit")),
        "{failed:?}"
    );
    assert!(failed.len() < local.failures.len(), "rank 0 had failures of its own");
    assert_eq!(sweep.failures.len(), local.failures.len(), "rank 0's own failures and rank 1's");
    write_outputs(&sweep, &tmp.path().join("split")).unwrap();
    for f in OUTPUTS {
        assert!(read(&tmp.path().join("local"), f) == read(&tmp.path().join("split"), f), "{f} differs");
    }
}

#[test]
fn a_rank_that_could_not_run_is_named() {
    let mut root = run(&matrix(), Some(Share { rank: 0, ranks: 2 }), None);
    let part = error_part(1, &LabError::Config("experiments/x.toml: No such file or directory".into()));
    let e = root.merge(1, 2, &part, None).expect_err("an error part");
    assert_eq!(e.exit_code(), 2);
    assert!(e.message().starts_with("rank 1: experiments/x.toml"), "{e}");
}

#[test]
fn a_rank_with_another_matrix_or_missing_runs_is_refused() {
    let mut root = run(&matrix(), Some(Share { rank: 0, ranks: 2 }), None);
    let other = matrix().replace("seeds = [1, 2]", "seeds = [1, 3]");
    let part = run(&other, Some(Share { rank: 1, ranks: 2 }), None).part_json(Share { rank: 1, ranks: 2 });
    let e = root.merge(1, 2, &part, None).expect_err("another matrix");
    assert!(e.message().contains("rank 1 ran another matrix"), "{e}");
    // Rank 1 of 3 sent as rank 1 of 2: the runs it holds are not rank 1's of 2.
    let part = run(&matrix(), Some(Share { rank: 1, ranks: 3 }), None).part_json(Share { rank: 1, ranks: 3 });
    assert!(root.merge(1, 2, &part, None).is_err());
    // A part cut short (a run dropped) names the missing run.
    let mut v: serde_json::Value = serde_json::from_str(
        &run(&matrix(), Some(Share { rank: 1, ranks: 2 }), None).part_json(Share { rank: 1, ranks: 2 }),
    )
    .unwrap();
    v["runs"].as_array_mut().unwrap().pop();
    let e = root.merge(1, 2, &v.to_string(), None).expect_err("a missing run");
    assert!(e.message().contains("rank 1 sent no result for its run machine"), "{e}");
    assert!(root.merge(1, 2, "{\"rank\": 1, \"runs\": [", None).err().unwrap().message().contains("rank 1: malformed"));
}
