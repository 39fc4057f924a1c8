//! The fair classes' migration counters (`linux_balance::BalanceStats`, reported in
//! `policy_stats`) against the engine's own count: every dispatch of a task on another
//! CPU than it last ran on is one migration, and the counters split exactly those by
//! what last moved the task.

use schedlab_core::PolicySpec;
use schedlab_sim::{simulate, Machine, Report, SimConfig};
use schedlab_workloads::parse_workload;

fn run(machine: &str, policy: &str, workload: &str) -> Report {
    let m = Machine::preset(machine).unwrap();
    let w = parse_workload(workload).unwrap();
    let cfg = SimConfig { seed: 1, check_invariants: true, ..SimConfig::default() };
    simulate(&m, &PolicySpec::parse(policy).unwrap(), &w, &cfg)
        .unwrap_or_else(|e| panic!("{machine} {policy} {workload}: {e}"))
}

fn stat(r: &Report, key: &str) -> u64 {
    r.policy_stats.iter().find(|(k, _)| k == key).map(|(_, v)| *v).unwrap_or_else(|| panic!("no {key}"))
}

#[test]
fn migration_causes_sum_to_the_reported_migrations() {
    for machine in ["smp-2", "smp-4", "numa-4x4"] {
        for policy in ["cfs", "eevdf"] {
            for workload in ["hackbench:groups=2,loops=20", "chat:rooms=2,messages=10", "pingpong:rounds=500"] {
                let r = run(machine, policy, workload);
                let by = |k: &str| stat(&r, &format!("migrations_by_{k}"));
                let at = format!("{machine} {policy} {workload}");
                assert_eq!(by("other"), 0, "{at}: a migration no recorded path explains");
                let sum = by("wake") + by("newidle") + by("idle_balance") + by("busy_balance");
                assert_eq!(sum, r.migrations, "{at}: {:?}", r.policy_stats);
                // Every balancing migration is a task a balance pulled.
                assert!(by("newidle") + by("idle_balance") + by("busy_balance") <= stat(&r, "pulled"), "{at}");
                assert_eq!(stat(&r, "pulled"), stat(&r, "newidle_pulled") + stat(&r, "periodic_pulled"), "{at}");
                // A wake-up migration was first a wake-up placed elsewhere.
                assert!(by("wake") <= stat(&r, "wake_moved_to_idle") + stat(&r, "wake_moved_to_busy"), "{at}");
                // The placement's funnel: from another CPU, then `wake_affine`, then
                // the waking CPU by weight.
                assert!(stat(&r, "wake_affine") <= stat(&r, "wake_from_other_cpu"), "{at}");
                assert!(stat(&r, "wake_from_other_cpu") <= stat(&r, "wake_placed"), "{at}");
                assert!(stat(&r, "wake_affine_weight_to_waker") <= stat(&r, "wake_affine"), "{at}");
                assert!(stat(&r, "wake_wide") <= stat(&r, "wake_placed"), "{at}");
                let newidle = stat(&r, "newidle");
                let ended =
                    stat(&r, "newidle_no_overload") + stat(&r, "newidle_short_idle") + stat(&r, "newidle_pulled");
                assert!(ended <= newidle, "{at}: {:?}", r.policy_stats);
            }
        }
    }
}
