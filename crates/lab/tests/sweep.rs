//! Sweeps: deterministic whatever the thread count; output files; the % table.

use schedlab_lab::table::{mean_sd, pct_diff, Row, Table};
use schedlab_lab::{run_sweep, write_outputs, Experiment, SweepOptions};

const TINY: &str = r#"
name = "tiny"
machines = ["smp-2"]
policies = ["dss", "mqs"]
workloads = ["pingpong:rounds=200"]
seeds = [1, 2]
baseline = "mqs"
"#;

#[test]
fn results_are_identical_with_one_and_two_threads() {
    let exp = Experiment::from_toml(TINY).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut outs = Vec::new();
    for threads in [1, 2] {
        let sweep = run_sweep(exp.plan(false).unwrap(), &SweepOptions { threads, ..Default::default() }).unwrap();
        assert_eq!(sweep.threads, threads);
        let d = dir.path().join(format!("t{threads}"));
        write_outputs(&sweep, &d).unwrap();
        let read = |f: &str| std::fs::read(d.join(f)).unwrap();
        outs.push((read("results.json"), read("results.csv"), read("table.md"), read("chart.svg")));
        assert!(std::fs::read_to_string(d.join("timing.json")).unwrap().contains("wall_s"));
    }
    assert!(outs[0].0 == outs[1].0, "results.json differs between 1 and 2 threads");
    assert!(outs[0].1 == outs[1].1, "results.csv differs");
    assert!(outs[0].2 == outs[1].2, "table.md differs");
    assert!(outs[0].3 == outs[1].3, "chart.svg differs");
    let json = String::from_utf8(outs[0].0.clone()).unwrap();
    assert!(!json.contains("wall_s") && !json.contains("events_per_sec"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    // Matrix order: machines × policies × workloads × seeds.
    let order: Vec<(String, u64)> =
        runs.iter().map(|r| (r["policy"].as_str().unwrap().to_string(), r["seed"].as_u64().unwrap())).collect();
    assert_eq!(order, [("dss".into(), 1), ("dss".into(), 2), ("mqs".into(), 1), ("mqs".into(), 2)]);
    let csv = String::from_utf8(outs[0].1.clone()).unwrap();
    assert_eq!(csv.lines().count(), 5);
    let svg = String::from_utf8(outs[0].3.clone()).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<rect"));
}

#[test]
fn table_uses_per_seed_percentages() {
    let exp = Experiment::from_toml(TINY).unwrap();
    let sweep = run_sweep(exp.plan(false).unwrap(), &SweepOptions { threads: 1, ..Default::default() }).unwrap();
    let t = sweep.table();
    assert_eq!(t.compared, ["dss"]);
    assert_eq!(t.rows.len(), 1);
    let dss = sweep.values(0, 0, 0);
    let mqs = sweep.values(0, 1, 0);
    let c = t.rows[0].cells[0].unwrap();
    let expect = (100.0 * (dss[0] - mqs[0]) / mqs[0] + 100.0 * (dss[1] - mqs[1]) / mqs[1]) / 2.0;
    assert!((c.mean - expect).abs() < 1e-9);
    assert!((t.rows[0].baseline_mean - (mqs[0] + mqs[1]) / 2.0).abs() < 1e-9);
}

#[test]
fn pct_arithmetic_on_hand_made_numbers() {
    // Baseline 100, 200, 400; X 110, 180, 400 → +10 %, −10 %, 0 %.
    let c = pct_diff(&[110.0, 180.0, 400.0], &[100.0, 200.0, 400.0]).unwrap();
    assert!((c.mean - 0.0).abs() < 1e-12);
    assert!((c.min + 10.0).abs() < 1e-12);
    assert!((c.max - 10.0).abs() < 1e-12);
    assert!((c.stddev - (200.0f64 / 3.0).sqrt()).abs() < 1e-12);
    let c = pct_diff(&[150.0], &[100.0]).unwrap();
    assert_eq!((c.mean, c.min, c.max, c.stddev), (50.0, 50.0, 50.0, 0.0));
    let c = pct_diff(&[50.0, 75.0], &[100.0, 100.0]).unwrap();
    assert_eq!((c.mean, c.min, c.max), (-37.5, -50.0, -25.0));
    assert!(pct_diff(&[1.0], &[0.0]).is_none());
    assert!(pct_diff(&[1.0, 2.0], &[1.0]).is_none());
    assert!(pct_diff(&[], &[]).is_none());
    assert_eq!(mean_sd(&[2.0, 4.0]), (3.0, 1.0));

    let table = Table {
        title: "T".into(),
        metric: "throughput".into(),
        baseline: "mqs".into(),
        compared: vec!["dss".into()],
        rows: vec![Row {
            workload: "chat:rooms=1,messages=1".into(),
            machine: "smp-2".into(),
            baseline_mean: 1000.0,
            baseline_sd: 10.0,
            means: vec![875.0, 1000.0],
            cells: vec![pct_diff(&[850.0, 900.0], &[1000.0, 1000.0])],
        }],
    };
    let md = table.to_markdown();
    assert!(md.contains("-12.5 % (-15.0..-10.0)"), "{md}");
    assert!(md.contains("1000.0 ± 10.000"), "{md}");
    assert!(md.contains("dss vs mqs"), "{md}");
}

#[test]
fn further_fields_get_their_own_tables_and_charts() {
    let text = format!("{TINY}also = [\"locks.runqueue_lock.hold_mean_ns\", \"rq_traversal_miss_ratio\"]\n");
    let exp = Experiment::from_toml(&text).unwrap();
    let sweep = run_sweep(exp.plan(false).unwrap(), &SweepOptions { threads: 1, ..Default::default() }).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_outputs(&sweep, dir.path()).unwrap();
    let md = std::fs::read_to_string(dir.path().join("table.md")).unwrap();
    assert!(md.contains("## tiny: `locks.runqueue_lock.hold_mean_ns`"), "{md}");
    assert!(md.contains("## tiny: `rq_traversal_miss_ratio`"), "{md}");
    // A list is indexed by its entries' names: the lock table has numbers, not n/a.
    let t = sweep.table_of("locks.runqueue_lock.hold_mean_ns");
    assert!(t.rows.iter().all(|r| r.baseline_mean > 0.0), "{md}");
    for f in ["chart-locks-runqueue_lock-hold_mean_ns.svg", "chart-rq_traversal_miss_ratio.svg"] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    // A field that is not in the report is a config error naming it.
    let bad = format!("{TINY}also = [\"no_such_field\"]\n");
    let e = Experiment::from_toml(&bad).unwrap().plan(false).err().expect("bad also").message().to_string();
    assert!(e.contains("no_such_field") && e.contains("also"), "{e}");
}
