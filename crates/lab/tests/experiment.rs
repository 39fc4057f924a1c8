//! Experiment files: parsing errors name the field; validation names the entry.

use schedlab_lab::{Experiment, LabError};

const GOOD: &str = r#"
name = "tiny"
title = "Tiny"
machines = ["smp-2"]
policies = ["dss", "mqs"]
workloads = ["pingpong:rounds=50"]
seeds = [1, 2]
baseline = "mqs"
metric = "throughput"
[quick]
seeds = [1]
"#;

fn config_err(text: &str, quick: bool) -> String {
    match Experiment::from_toml(text).and_then(|e| e.plan(quick).map(|_| ())) {
        Err(LabError::Config(s)) => s,
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn good_file_parses_and_plans_the_matrix() {
    let e = Experiment::from_toml(GOOD).unwrap();
    let p = e.plan(false).unwrap();
    assert_eq!(p.runs().len(), 4);
    assert_eq!(p.title, "Tiny");
    let q = e.plan(true).unwrap();
    assert_eq!(q.runs().len(), 2);
    assert!(q.quick);
}

#[test]
fn missing_field_is_named() {
    let text = GOOD.replace("seeds = [1, 2]\n", "");
    assert!(config_err(&text, false).contains("seeds"), "{}", config_err(&text, false));
}

#[test]
fn wrong_type_is_named() {
    let text = GOOD.replace("seeds = [1, 2]", "seeds = \"one\"");
    let e = config_err(&text, false);
    assert!(e.contains("seeds"), "{e}");
}

#[test]
fn unknown_keys_are_rejected() {
    let e = config_err(&format!("polices = [\"dss\"]\n{GOOD}"), false);
    assert!(e.contains("polices"), "{e}");
    let e = config_err(&GOOD.replace("seeds = [1]", "seeds = [1]\nworkload = []"), true);
    assert!(e.contains("workload"), "{e}");
}

#[test]
fn bad_entries_are_named() {
    let e = config_err(&GOOD.replace("\"smp-2\"", "\"smp-2\", \"nosuch\""), false);
    assert!(e.contains("machines[1]") && e.contains("nosuch"), "{e}");
    let e = config_err(&GOOD.replace("\"dss\", \"mqs\"", "\"dss\", \"mqs\", \"fifo\""), false);
    assert!(e.contains("policies[2]") && e.contains("fifo"), "{e}");
    let e = config_err(&GOOD.replace("\"dss\", \"mqs\"", "\"dss\", \"mqs\", \"fast\""), false);
    assert!(e.contains("policies[2]") && e.contains("runtime-only"), "{e}");
    let e = config_err(&GOOD.replace("pingpong:rounds=50", "pingpong:rouns=50"), false);
    assert!(e.contains("workloads[0]") && e.contains("rouns"), "{e}");
    let e = config_err(&GOOD.replace("seeds = [1]", "seeds = [1]\nworkloads = [\"chat:rooms=x\"]"), true);
    assert!(e.contains("quick.workloads[0]"), "{e}");
}

#[test]
fn baseline_and_metric_are_checked() {
    let e = config_err(&GOOD.replace("baseline = \"mqs\"", "baseline = \"dss-x\""), false);
    assert!(e.contains("baseline") && e.contains("dss-x"), "{e}");
    let e = config_err(&GOOD.replace("metric = \"throughput\"", "metric = \"thruput\""), false);
    assert!(e.contains("metric") && e.contains("thruput") && e.contains("virtual_ns"), "{e}");
    let e = config_err(&GOOD.replace("metric = \"throughput\"", "metric = \"wall_s\""), false);
    assert!(e.contains("wall-clock"), "{e}");
    let ok = GOOD.replace("metric = \"throughput\"", "metric = \"wakeup_latency_ns.p99\"");
    Experiment::from_toml(&ok).unwrap().plan(false).unwrap();
    let e = config_err(&GOOD.replace("seeds = [1, 2]", "seeds = []"), false);
    assert!(e.contains("seeds") && e.contains("empty"), "{e}");
}

#[test]
fn shipped_experiments_are_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let e = Experiment::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            e.plan(false).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            e.plan(true).unwrap_or_else(|e| panic!("{} --quick: {e}", path.display()));
            n += 1;
        }
    }
    assert!(n >= 2);
}
