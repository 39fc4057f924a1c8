//! NetBench on the real runtime: the same programs the simulator runs (SCHED_FIFO NIC
//! stand-ins, smbds, the `ps` probe), under every policy.

use schedlab_rtrun::run_on_runtime;
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

/// A measured case on the runtime ends at its span, and the requests still
/// unanswered then and already older than the time-out count as time-outs, as on the
/// simulator: two operations of 0.5 s of compute against a 100 ms span and a 20 ms
/// time-out.
#[test]
fn a_measured_case_counts_the_requests_it_leaves_late() {
    let w =
        parse_workload("netbench:clients=2,span=100ms,think_ns=1ms,probes=0,work=500000000,timeout_ns=20ms").unwrap();
    for policy in ["dss", "cfs"] {
        let rt = schedlab_rt::Builder::new().workers(1).policy(policy).build().unwrap();
        let r = run_on_runtime(&rt, &w, 1.0, 1).unwrap_or_else(|e| panic!("{policy}: {e}"));
        assert_eq!((r.responses, r.timed_out), (0, 2), "{policy}");
        rt.shutdown();
    }
}

/// One real worker, saturated (24 clients of 1 ms operations every 20 ms, 100 operations
/// each, about 5 s per policy): `o1` leaves smbds unserved for seconds where `fair`
/// answers within a fraction of a second — the model's starvation (docs/policies.md,
/// "The NetBench starvation": smbds that lost their `sleep_avg` bonus wait in the active
/// array behind those that kept it; `fair` has no bonus to lose).
///
/// Measured on the shared 2-vCPU VM (longest response, five runs): `o1` 3.37 / 2.71 /
/// 2.04 / 1.38 / 1.82 s, `fair` 0.18 / 0.20 / 0.20 / 0.19 / 0.20 s (ratio 7–19×; the
/// 1.38 s run shared the CPUs with the test above). Not asserted, from the first three
/// runs: `dss` 1.07 / 1.00 / 1.03 s, `o1:scale=off` 1.26 / 1.55 / 1.12 s,
/// `o1:expired_prio_guard=on` 2.20 / 1.17 / 0.94 s; and at 32 clients × 60 operations
/// `dss`'s longest response (2.43 s) exceeded `o1`'s (1.22 s). So neither `o1` against
/// `dss` nor against the fix options separates reliably at a size this short. Bounds,
/// with margin for a noisy VM: `o1` at least 0.2 s and at least 4× `fair` (a quiet
/// machine measured `o1` 0.35 s, `fair` 0.047 s).
///
/// What this does NOT show is the NetBench report's `ps` claim (S10): the probe is not starved under
/// `o1` on the runtime (longest wait to first run 0.000 s in the three runs above,
/// 0.046 s at the ignored test's full size, against `dss` 0.14–0.61 s and 0.30 s), as in
/// the model (≤ 3.3 s under every policy): a forked `ps` inherits 95 % of its shell's
/// `sleep_avg` (`child_penalty`), the shell mostly sleeps, so `ps` enters the active
/// array at the best dynamic priority, ahead of every smbd.
#[test]
fn netbench_o1_starves_smbds_where_fair_does_not() {
    let ws = "netbench:clients=24,ops=100,probes=4,probe_every_ns=500000000";
    let w = parse_workload(ws).unwrap();
    // A second round only when the first does not separate the policies: a build on the
    // other CPU can stretch `cfs`'s longest response several-fold for one run, and the
    // claim is about the policies, not one run's neighbours. A runtime where `o1` does
    // not starve fails both rounds.
    let mut rounds = Vec::new();
    for _ in 0..2 {
        let mut longest = Vec::new();
        for policy in ["o1", "cfs"] {
            let rt = schedlab_rt::Builder::new().workers(1).policy(policy).build().unwrap();
            let r = run_on_runtime(&rt, &w, 1.43, 1).unwrap_or_else(|e| panic!("{policy}: {e}"));
            rt.shutdown();
            assert_eq!((r.responses, r.timed_out), (24 * 100, 0), "{policy}: every operation answered in time");
            let s = r.response_max_ns as f64 / 1e9;
            eprintln!("{policy}: longest response {s:.3} s, {:.1} Mbit/s in {:.1} s", r.throughput, r.wall_s);
            longest.push(s);
        }
        let (o1, cfs) = (longest[0], longest[1]);
        // The absolute floor is low because on a quiet machine the starvation is shorter
        // (o1 0.35 s against cfs 0.047 s in one CI run); the ratio is the claim.
        if o1 >= 0.2 && o1 >= 4.0 * cfs {
            return;
        }
        rounds.push(format!("o1 {o1:.3} s, cfs {cfs:.3} s"));
    }
    panic!("o1's longest response is not at least 0.2 s and 4x cfs's in either round: {}", rounds.join("; "));
}

/// The starvation experiment on one real worker (about 20 s per policy on the shared
/// VM; run with `cargo test --release -p schedlab-validate --test netbench_rt -- --ignored --nocapture`).
#[test]
#[ignore]
fn netbench_starvation_on_one_worker() {
    let ws = std::env::var("NETBENCH").unwrap_or_else(|_| "netbench:clients=24,ops=400,probes=4".into());
    let w = parse_workload(&ws).unwrap();
    for policy in ["dss", "o1", "o1:scale=off", "o1:expired_prio_guard=on", "cfs"] {
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
