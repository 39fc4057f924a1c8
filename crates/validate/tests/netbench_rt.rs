//! NetBench on the real runtime: the same programs the simulator runs (SCHED_FIFO NIC
//! stand-ins, smbds, the `ps` probe), under every policy.

use schedlab_validate::run_on_runtime;
use schedlab_workloads::parse_workload;

#[test]
fn netbench_runs_on_the_runtime_under_every_policy() {
    let ws = "netbench:clients=4,ops=20,think_ns=200000,work=50000,irq=5000,probes=3,probe_every_ns=1000000,ps=200000";
    let w = parse_workload(ws).unwrap();
    for policy in schedlab_core::policies::runtime_examples() {
        let rt = schedlab_rt::Builder::new().workers(1).policy(policy).build().unwrap();
        let r = run_on_runtime(&rt, &w, 1.0, 1).unwrap_or_else(|e| panic!("{policy}: {e}"));
        assert_eq!(
            (r.sent, r.received, r.tasks),
            (w.expected_messages, w.expected_messages, w.expected_tasks),
            "{policy}"
        );
        assert_eq!(r.responses, 4 * 20, "{policy}: one timed response per operation");
        assert_eq!(r.timed_out, 0, "{policy}: 45 s time-out");
        let roles: Vec<(&str, u64)> = r.first_run.iter().map(|x| (x.role.as_str(), x.tasks)).collect();
        assert_eq!(roles, [("root", 1), ("smbd", 4), ("nic", 4), ("probe", 1), ("ps", 3)], "{policy}");
        assert_eq!(rt.stats().bad_picks, 0, "{policy}");
        rt.shutdown();
    }
}

/// The starvation experiment on one real worker (about 10 s per policy; run with
/// `cargo test --release -p schedlab-validate --test netbench_rt -- --ignored --nocapture`).
#[test]
#[ignore]
fn netbench_starvation_on_one_worker() {
    let ws = std::env::var("NETBENCH").unwrap_or_else(|_| "netbench:clients=24,ops=400,probes=4".into());
    let w = parse_workload(&ws).unwrap();
    for policy in ["dss", "o1", "o1:scale=off", "fair"] {
        let Ok(rt) = schedlab_rt::Builder::new().workers(1).policy(policy).build() else { continue };
        let r = run_on_runtime(&rt, &w, 1.43, 1).unwrap();
        let waits: Vec<String> =
            r.first_run.iter().map(|x| format!("{} {:.3}s", x.role, x.max_ns as f64 / 1e9)).collect();
        println!(
            "{policy:14} {:.1} Mbit/s in {:.1} s; responses max {:.2} s, {} timed out; first run: {}",
            r.throughput,
            r.wall_s,
            r.response_max_ns as f64 / 1e9,
            r.timed_out,
            waits.join(", ")
        );
        rt.shutdown();
    }
}
