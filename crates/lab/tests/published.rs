//! The published tables of `experiments/published/` against the experiments and the
//! claims: every cell is produced by its experiment's full matrix, every claim has a
//! predicate (and every predicate a claim), and every predicate holds on the sources'
//! own numbers.

use schedlab_lab::reproduce::claims::{self, Cells, ClaimVerdict};
use schedlab_lab::reproduce::compare::produced_by;
use schedlab_lab::reproduce::published::{self, MEASURED_EXPERIMENT};
use schedlab_lab::reproduce::{catalog, MEASURED_FIELDS};
use schedlab_lab::Experiment;
use std::path::{Path, PathBuf};

fn experiments() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}

#[test]
fn every_published_cell_is_produced_by_its_experiment() {
    let tables = published::load_dir(&experiments().join("published")).unwrap();
    let mut missing = Vec::new();
    let mut n = 0;
    for t in &tables {
        for c in &t.cells {
            n += 1;
            if c.experiment == MEASURED_EXPERIMENT {
                if !MEASURED_FIELDS.contains(&c.metric.as_str()) {
                    missing.push(format!("{} {} / {}: the measured part has no `{}`", t.id, c.row, c.col, c.metric));
                }
                continue;
            }
            let entry = catalog::find(&c.experiment).expect("checked at load");
            let plan = Experiment::load(&experiments().join("..").join(entry.file)).unwrap().plan(false).unwrap();
            if let Err(e) = produced_by(c, &plan) {
                missing.push(format!("{} {} / {} ({}): {e}", t.id, c.row, c.col, c.experiment));
            }
        }
    }
    assert!(n > 180, "only {n} published cells");
    assert!(missing.is_empty(), "published cells no experiment produces:\n{}", missing.join("\n"));
}

#[test]
fn every_claim_has_a_predicate_that_holds_on_the_sources_numbers() {
    let dir = experiments().join("published");
    let tables = published::load_dir(&dir).unwrap();
    let list = claims::load(&dir, &tables).unwrap();
    assert_eq!(list.len(), claims::PREDICATES.len());
    let paper = Cells::paper(&tables);
    let mut bad = Vec::new();
    for c in &list {
        let j = claims::judge(c, &paper);
        match j.verdict {
            ClaimVerdict::Holds => {}
            // Checkable claims must hold on the source's own cells; a claim may be
            // uncheckable only for a reason other than missing cells.
            ClaimVerdict::CannotCheck
                if !j.detail.starts_with("cells not run") && c.tables.iter().all(|t| t == "s7-converse")
                    || c.tables.is_empty() => {}
            _ => bad.push(format!("{}: {} — {}", c.id, j.verdict.word(), j.detail)),
        }
    }
    assert!(bad.is_empty(), "predicates that do not hold on the sources' numbers:\n{}", bad.join("\n"));
}

#[test]
fn a_claim_without_a_predicate_is_refused() {
    let dir = experiments().join("published");
    let tables = published::load_dir(&dir).unwrap();
    let text = std::fs::read_to_string(dir.join("claims.toml")).unwrap();
    let extra =
        format!("{text}\n[[claim]]\nid = \"s1-new\"\nsource = \"S1\"\nquote_ref = \"q\"\nclaim = \"c\"\ntables = []\n");
    let e = claims::parse(&extra, &tables).unwrap_err().to_string();
    assert!(e.contains("\"s1-new\" has no predicate"), "{e}");
    let fewer = text.replacen("id = \"s1-numa-mqs-beats-dss\"", "id = \"s1-numa-mqs-beats-dss-typo\"", 1);
    assert!(claims::parse(&fewer, &tables).unwrap_err().to_string().contains("no predicate"));
    let bad_table = text.replacen("tables = [\"s1-table6\"]", "tables = [\"s1-table66\"]", 1);
    assert!(claims::parse(&bad_table, &tables).unwrap_err().to_string().contains("no published table \"s1-table66\""));
}

#[test]
fn a_cell_of_an_unknown_experiment_stops_the_report_before_any_run() {
    let tmp = tempfile::tempdir().unwrap();
    let src = experiments();
    std::fs::create_dir_all(tmp.path().join("published")).unwrap();
    for e in std::fs::read_dir(src.join("published")).unwrap() {
        let p = e.unwrap().path();
        let text =
            std::fs::read_to_string(&p).unwrap().replace("experiment = \"chat-numa\"", "experiment = \"chat-numaa\"");
        std::fs::write(tmp.path().join("published").join(p.file_name().unwrap()), text).unwrap();
    }
    let e = schedlab_lab::reproduce::run::load_published(tmp.path()).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.message().contains("s1-table6.toml") && e.message().contains("chat-numaa"), "{e}");
}

#[test]
fn the_balancer_claim_reads_the_runs_counters() {
    let dir = experiments().join("published");
    let tables = published::load_dir(&dir).unwrap();
    let list = claims::load(&dir, &tables).unwrap();
    let claim = list.iter().find(|c| c.id == "s1-chat-balancing-moves-tasks-early").unwrap();
    let judge = |moves, again| {
        let o = claims::Observed {
            chat_balancer_runs: 3,
            chat_balancer_moves: moves,
            chat_moved_again: again,
            chat_moved_then_ran: moves - again,
        };
        claims::judge(claim, &Cells::reproduced(&tables, &[], o))
    };
    let j = judge(100, 30);
    assert_eq!(j.verdict, ClaimVerdict::Holds, "{}", j.detail);
    assert!(j.detail.starts_with("30 % of 100 balancer moves over 3 PMQS Chat runs"), "{}", j.detail);
    assert_eq!(judge(100, 10).verdict, ClaimVerdict::Fails);
    assert_eq!(judge(0, 0).verdict, ClaimVerdict::CannotCheck);
}
