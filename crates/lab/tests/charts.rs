//! A sweep's charts show what its table shows: % vs the baseline with whiskers, in the
//! source's grouping for an experiment the report knows, with readable tick labels
//! and the legend beside the data.

use schedlab_lab::{run_sweep, write_outputs, Experiment, SweepOptions};

fn chart_of(toml: &str, quick: bool, file: &str) -> String {
    let exp = Experiment::from_toml(toml).unwrap();
    let sweep = run_sweep(exp.plan(quick).unwrap(), &SweepOptions { threads: 2, ..Default::default() }).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_outputs(&sweep, dir.path()).unwrap();
    std::fs::read_to_string(dir.path().join(file)).unwrap()
}

/// The `<text>` contents of an SVG, in order.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().to_string()))
        .collect()
}

#[test]
fn a_catalog_experiment_is_charted_in_the_sources_grouping() {
    let toml =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/chat-numa.toml")).unwrap();
    let svg = chart_of(&toml, true, "chart.svg");
    let t = texts(&svg);
    // Pool-size groups with a bar per balancer, % vs MQS, DSS beside the grid.
    for want in ["pool 4", "LBOFF", "LBP-45", "DSS", "% vs MQS"] {
        assert!(t.iter().any(|x| x.contains(want)), "no {want:?} in {t:?}");
    }
    // MQS is the baseline: named with its absolute throughput in the heading, not a bar.
    assert!(t.iter().any(|x| x.contains("(MQS = ") && x.contains("messages/s")), "{t:?}");
    assert!(!t.iter().any(|x| x == "MQS" || x == "mqs"), "the baseline is not a bar: {t:?}");
    // No "600000.0"-style ticks: every numeric label is a signed integer or has one decimal.
    for x in t.iter().filter(|x| x.parse::<f64>().is_ok()) {
        assert!(!x.ends_with(".0") && x.len() <= 5, "tick {x:?}");
    }
}

#[test]
fn any_other_experiment_is_charted_as_pct_vs_its_baseline_per_workload() {
    let toml = r#"
name = "mine"
machines = ["smp-2"]
policies = ["dss", "mqs", "pmqs:pool=1,lb=lbp,period=10"]
workloads = ["pingpong:rounds=200", "chat:rooms=1,messages=10"]
seeds = [1, 2]
baseline = "dss"
also = ["locks.runqueue_lock.hold_mean_ns"]
"#;
    let svg = chart_of(toml, false, "chart.svg");
    let t = texts(&svg);
    for want in ["% vs DSS", "MQS", "pingpong", "Chat (1,10)"] {
        assert!(t.iter().any(|x| x.contains(want)), "no {want:?} in {t:?}");
    }
    // One panel holds several workloads, whose baselines differ: none is named as the scale.
    assert!(!t.iter().any(|x| x.contains("(DSS = ")), "{t:?}");
    // The further field is drawn in its own unit, not as a percentage.
    let also = texts(&chart_of(toml, false, "chart-locks-runqueue_lock-hold_mean_ns.svg"));
    assert!(also.iter().any(|x| x.contains("µs") || x.contains("ns")), "{also:?}");
    assert!(!also.iter().any(|x| x.contains("% vs")), "{also:?}");
}

/// Rows that are machines or workloads each have their own baseline run (WebBench per
/// CPU count): the panel lists every row's, not the first row's as the panel's.
#[test]
fn a_pct_table_over_machines_lists_each_rows_baseline() {
    use schedlab_lab::reproduce::{catalog, tables};
    let toml =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/webbench-cpus.toml")).unwrap();
    let exp = Experiment::from_toml(&toml).unwrap();
    let sweep = run_sweep(exp.plan(true).unwrap(), &SweepOptions { threads: 2, ..Default::default() }).unwrap();
    let entry = catalog::find("webbench-cpus").unwrap();
    let t = tables::build(entry, &entry.views[0], &sweep);
    let p = &t.panels[0];
    assert!(p.rows.len() >= 2, "{:?}", p.rows);
    let labels: Vec<&str> = p.baseline_rows.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(labels, p.rows.iter().map(String::as_str).collect::<Vec<_>>());
    // More CPUs serve more requests: the baselines really differ per row.
    assert!(p.baseline_rows[1].1.mean > p.baseline_rows[0].1.mean * 1.5, "{:?}", p.baseline_rows);
}
