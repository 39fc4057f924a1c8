//! The opt-in run-queue length time series.

use schedlab_core::PolicySpec;
use schedlab_sim::{simulate, Machine, Report, SimConfig};
use schedlab_workloads::parse_workload;

fn run(machine: &str, policy: &str, interval: Option<u64>) -> Report {
    let cfg = SimConfig { seed: 3, rq_series_interval_ns: interval, ..SimConfig::default() };
    let w = parse_workload("chat:rooms=2,messages=20").unwrap();
    simulate(&Machine::preset(machine).unwrap(), &PolicySpec::parse(policy).unwrap(), &w, &cfg).unwrap()
}

#[test]
fn series_absent_by_default_and_skipped_in_json() {
    let r = run("smp-4", "mqs", None);
    assert!(r.rq_series.is_none());
    let v = serde_json::to_value(&r).unwrap();
    assert!(v.get("rq_series").is_none());
}

#[test]
fn series_does_not_change_the_simulation() {
    let mut a = run("smp-4", "mqs", None);
    let mut b = run("smp-4", "mqs", Some(10_000_000));
    b.rq_series = None;
    for r in [&mut a, &mut b] {
        r.wall_s = 0.0;
        r.events_per_sec = 0.0;
    }
    assert_eq!(a, b);
}

#[test]
fn series_has_one_row_per_queue_and_respects_the_interval() {
    for (policy, queues) in [("dss", 1), ("mqs", 4)] {
        let interval = 25_000_000;
        let r = run("smp-4", policy, Some(interval));
        let s = r.rq_series.as_ref().unwrap();
        assert_eq!(s.queues, queues, "{policy}");
        assert_eq!(s.len.len(), queues);
        assert!(!s.t_ns.is_empty());
        for q in &s.len {
            assert_eq!(q.len(), s.t_ns.len());
        }
        assert_eq!(s.deviation.len(), s.t_ns.len());
        assert_eq!(s.mean.len(), s.t_ns.len());
        for w in s.t_ns.windows(2) {
            assert!(w[1] / interval > w[0] / interval, "two samples in one interval: {w:?}");
        }
        assert!(s.t_ns.len() as u64 <= r.virtual_ns / interval + 1);
        if queues == 1 {
            assert!(s.deviation.iter().all(|&d| d == 0.0));
        }
        for (i, &d) in s.deviation.iter().enumerate() {
            let mean = s.mean[i];
            let var: f64 = s.len.iter().map(|q| (q[i] as f64 - mean).powi(2)).sum::<f64>() / queues as f64;
            assert!((var.sqrt() - d).abs() < 0.01, "sample {i}: {d} vs {}", var.sqrt());
        }
        let v = serde_json::to_value(&r).unwrap();
        assert!(v["rq_series"]["deviation"].is_array());
    }
}
