//! `simulate_traced`: recording changes no result, and the written file, read back
//! with a generic JSON parser (`serde_json::Value`, none of schedlab's trace types),
//! holds every switch, wake-up, migration and IPI the engine counted, each CPU track
//! in time order, with no two run slices of one CPU (or holds of one lock) overlapping.

use schedlab_core::trace::{chrome, DEFAULT_CAP};
use schedlab_core::PolicySpec;
use schedlab_sim::{simulate, simulate_traced, Machine, Report, SimConfig};
use schedlab_workloads::parse_workload;
use serde_json::Value;
use std::collections::BTreeMap;

/// The cases: every simulated policy family, SMP and NUMA, blocking and sleeping workloads.
const CASES: &[(&str, &str, &str)] = &[
    ("smp-8", "dss", "chat:rooms=2,messages=20"),
    ("smp-4", "mqs", "hackbench:groups=2,loops=20"),
    ("numa-4x4", "pmqs:pool=4", "chat:rooms=3,messages=10"),
    ("smp-2", "o1", "pingpong:rounds=500"),
    ("smp-4", "cfs", "chat:rooms=2,messages=10"),
];

fn run(machine: &str, policy: &str, workload: &str, cap: Option<usize>) -> (Report, Option<Vec<u8>>) {
    let m = Machine::preset(machine).unwrap();
    let p = PolicySpec::parse(policy).unwrap();
    let w = parse_workload(workload).unwrap();
    let cfg = SimConfig { seed: 7, ..SimConfig::default() };
    match cap {
        None => (simulate(&m, &p, &w, &cfg).unwrap(), None),
        Some(cap) => {
            let (r, t) = simulate_traced(&m, &p, &w, &cfg, cap).unwrap();
            let mut out = Vec::new();
            chrome::write(&t, &mut out).unwrap();
            (r, Some(out))
        }
    }
}

/// The report as JSON text without its wall-clock fields (the only ones that vary).
fn results_json(r: &Report) -> String {
    let mut r = r.clone();
    r.wall_s = 0.0;
    r.events_per_sec = 0.0;
    serde_json::to_string_pretty(&r).unwrap()
}

/// µs with 3 decimals, as written, back to integer ns.
fn ns(v: &Value) -> u64 {
    let us = v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"));
    (us * 1000.0).round() as u64
}

#[test]
fn tracing_changes_no_result() {
    for &(m, p, w) in CASES {
        let (a, _) = run(m, p, w, None);
        let (b, _) = run(m, p, w, Some(DEFAULT_CAP));
        assert_eq!(results_json(&a), results_json(&b), "{m} {p} {w}");
    }
}

#[test]
fn trace_read_back_holds_every_counted_event_in_order() {
    for &(m, p, w) in CASES {
        let (r, out) = run(m, p, w, Some(DEFAULT_CAP));
        let v: Value = serde_json::from_slice(&out.unwrap()).expect("the file is JSON");
        assert_eq!(v["displayTimeUnit"], "ns");
        let evs = v["traceEvents"].as_array().expect("traceEvents array");
        let ctx = format!("{m} {p} {w}");

        // Tracks by (pid, tid), events in file order; names of the processes.
        let mut tracks: BTreeMap<(u64, u64), Vec<&Value>> = BTreeMap::new();
        let mut process_names = BTreeMap::new();
        for e in evs {
            let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            if e["ph"] == "M" {
                if e["name"] == "process_name" {
                    process_names.insert(pid, e["args"]["name"].as_str().unwrap().to_string());
                }
                continue;
            }
            tracks.entry((pid, tid)).or_default().push(e);
        }
        let cpus_pid = *process_names.iter().find(|(_, n)| n.as_str() == "CPUs").expect("a CPUs process").0;

        let count = |ph: &str, name: Option<&str>| {
            evs.iter().filter(|e| e["pid"] == cpus_pid && e["ph"] == ph && name.is_none_or(|n| e["name"] == n)).count()
                as u64
        };
        assert_eq!(count("X", None), r.context_switches, "{ctx}: one run slice per counted switch");
        assert_eq!(count("i", Some("wakeup")), r.wakeup_latency_ns.count, "{ctx}: wake-ups");
        assert_eq!(count("i", Some("migrate")), r.migrations, "{ctx}: migrations");
        assert_eq!(count("i", Some("ipi")), r.ipis, "{ctx}: IPIs");
        assert_eq!(count("i", Some("fork")), r.tasks, "{ctx}: forks");
        assert_eq!(count("i", Some("exit")), r.tasks, "{ctx}: exits");
        assert!(r.context_switches > 0 && r.wakeup_latency_ns.count > 0, "{ctx}: a run that schedules");

        for ((pid, tid), es) in &tracks {
            let mut last_ts = 0;
            let mut last_end = 0;
            for e in es {
                let ts = ns(&e["ts"]);
                assert!(ts >= last_ts, "{ctx}: track {pid}/{tid} goes back in time at {e}");
                last_ts = ts;
                if e["ph"] == "X" {
                    // Run slices of one CPU, and holds of one lock, never overlap.
                    assert!(ts >= last_end, "{ctx}: track {pid}/{tid}: {e} starts before the previous slice ends");
                    last_end = ts + ns(&e["dur"]);
                }
            }
        }

        // Per task: every run after the first follows a wake-up (after blocking) or
        // a preemption, and starts no earlier than that wake-up.
        let mut per_task: BTreeMap<u64, Vec<(u64, &str, &Value)>> = BTreeMap::new();
        for e in evs.iter().filter(|e| e["pid"] == cpus_pid) {
            let kind = match (e["ph"].as_str().unwrap(), e["name"].as_str().unwrap_or("")) {
                ("X", _) => "run",
                ("i", "wakeup") => "wakeup",
                _ => continue,
            };
            per_task.entry(e["args"]["task"].as_u64().unwrap()).or_default().push((ns(&e["ts"]), kind, e));
        }
        for (task, mut es) in per_task {
            // A wake-up and the dispatch it leads to may share a timestamp: the wake-up first.
            es.sort_by_key(|&(ts, kind, _)| (ts, kind != "wakeup"));
            let mut woken = false;
            let mut last: Option<&Value> = None;
            for (_, kind, e) in es {
                if kind == "wakeup" {
                    assert!(!woken, "{ctx}: task {task} woken twice without running: {e}");
                    woken = true;
                    continue;
                }
                let ran_on = last.map(|l| l["args"]["end_state"].as_str().unwrap());
                match ran_on {
                    None | Some("blocked") => assert!(woken, "{ctx}: task {task} runs without a wake-up: {e}"),
                    Some("runnable") => assert!(!woken, "{ctx}: a runnable task {task} was woken: {e}"),
                    Some(s) => panic!("{ctx}: task {task} runs after ending {s}: {e}"),
                }
                woken = false;
                last = Some(e);
            }
            assert_eq!(last.map(|l| l["args"]["end_state"].clone()), Some(Value::from("exited")), "{ctx}: task {task}");
        }
    }
}

#[test]
fn the_cap_truncates_and_says_so() {
    let (_, full) = run("smp-4", "dss", "chat:rooms=2,messages=10", Some(DEFAULT_CAP));
    let (_, capped) = run("smp-4", "dss", "chat:rooms=2,messages=10", Some(1000));
    let full: Value = serde_json::from_slice(&full.unwrap()).unwrap();
    let capped: Value = serde_json::from_slice(&capped.unwrap()).unwrap();
    assert_eq!(full["otherData"]["dropped"], 0);
    assert!(capped["otherData"]["dropped"].as_u64().unwrap() > 0);
    assert!(capped["traceEvents"].as_array().unwrap().len() < full["traceEvents"].as_array().unwrap().len());
}
