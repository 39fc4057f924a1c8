//! NetBench under the O(1) eras: runs are deterministic, the daemon and live forms
//! conserve their messages, and the per-role figures the starvation study reads
//! (`role_stats`) are there for O(1) only.

use schedlab_core::PolicySpec;
use schedlab_sim::{simulate, Machine, Report, SimConfig};
use schedlab_workloads::parse_workload;

fn run(policy: &str, workload: &str, seed: u64) -> Report {
    let w = parse_workload(workload).unwrap();
    let cfg = SimConfig { seed, check_invariants: true, ..SimConfig::default() };
    let r = simulate(&Machine::preset("up").unwrap(), &PolicySpec::parse(policy).unwrap(), &w, &cfg).unwrap();
    assert_eq!(r.messages_received, w.expected_messages, "{policy} {workload}");
    assert_eq!(r.tasks, w.expected_tasks, "{policy} {workload}");
    r
}

/// The report without its wall-clock figures, as JSON.
fn deterministic(mut r: Report) -> String {
    r.wall_s = 0.0;
    r.events_per_sec = 0.0;
    serde_json::to_string(&r).unwrap()
}

fn stat(r: &Report, role: &str, name: &str) -> (u64, f64, u64) {
    let rs = r.role_stats.iter().find(|x| x.role == role).unwrap_or_else(|| panic!("no role {role}"));
    let s = rs.stats.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no {name}"));
    (s.min, s.mean, s.max)
}

#[test]
fn a_netbench_run_is_deterministic_in_every_era_and_form() {
    for policy in ["o1:era=j7", "o1", "o1:era=2.6"] {
        for w in [
            "netbench:clients=12,ops=60,probes=3,probe_every_ns=100000000,fork=daemon",
            "netbench:clients=9,probes=2,fork=daemon,mode=live,case_ns=400000000",
        ] {
            let a = deterministic(run(policy, w, 3));
            assert_eq!(a, deterministic(run(policy, w, 3)), "{policy} {w}");
        }
    }
}

#[test]
fn smbds_forked_by_the_daemon_start_with_its_sleep_avg() {
    // A single smbd that never runs before the check: its sleep_avg is what it
    // inherited minus what it ran. With fork=root it inherits nothing.
    let w = |fork: &str| format!("netbench:clients=1,ops=1,think_ns=0,work=0,probes=0,fork={fork}");
    let root = run("o1:era=j7", &w("root"), 1);
    let daemon = run("o1:era=j7", &w("daemon"), 1);
    assert_eq!(stat(&root, "smbd", "sleep_avg_ticks").2, 0);
    // The daemon slept 2 s (200 ticks) and 1 ms: the child gets 95 % of 200.
    assert_eq!(stat(&daemon, "smbd", "sleep_avg_ticks").0, 190);
    // The figures are O(1)'s: the 2.4 family reports its fork counters instead.
    let dss = run("dss", &w("daemon"), 1);
    assert!(dss.role_stats.iter().all(|r| r.stats.iter().all(|s| s.name.ends_with("counter_ticks")
        || s.name.starts_with("fork_ahead")
        || s.name == "fork_level_tasks")));
    assert!(run("cfs", &w("daemon"), 1).role_stats.is_empty());
    // Every ps waited for its first run, and first_wait ≤ max_wait.
    let r = run("o1:era=j7", "netbench:clients=8,ops=50,probes=3,probe_every_ns=100000000,fork=daemon", 1);
    let (first, wait) = (stat(&r, "ps", "first_wait_ns"), stat(&r, "ps", "max_wait_ns"));
    assert!(first.2 > 0 && first.2 <= wait.2, "{first:?} {wait:?}");
    assert_eq!(r.role_stats.iter().find(|x| x.role == "ps").unwrap().tasks, 3);
}
