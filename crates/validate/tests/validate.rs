//! The workload interpreter on the real runtime conserves messages and tasks for
//! every policy, and the calibrated host machine is a valid simulator machine.

use schedlab_validate::{calibrate, run_on_runtime};
use schedlab_workloads::parse_workload;

#[test]
fn workloads_run_on_the_runtime_for_every_policy() {
    for policy in ["fast", "dss", "mqs", "pmqs:pool=1,lb=lbp,period=10"] {
        let rt = schedlab_rt::Builder::new().workers(2).policy(policy).build().unwrap();
        for ws in [
            "chat:rooms=1,messages=20",
            "hackbench:groups=1,loops=10",
            "pingpong:rounds=2000",
            "mkbench:builds=1,jobs=2,units=4,unit_min=1000,unit_max=2000,io_ns=10000,link=1000",
        ] {
            let w = parse_workload(ws).unwrap();
            let r = run_on_runtime(&rt, &w, 1.0, 1).unwrap_or_else(|e| panic!("{policy} {ws}: {e}"));
            assert_eq!(r.sent, w.expected_messages, "{policy} {ws}");
            assert_eq!(r.received, w.expected_messages, "{policy} {ws}");
            assert_eq!(r.tasks, w.expected_tasks, "{policy} {ws}");
            assert!(r.completed > 0);
        }
        rt.shutdown();
    }
}

#[test]
fn calibration_gives_a_valid_host_machine() {
    let cal = calibrate(2, true);
    for (name, v) in [
        ("atomic", cal.atomic_rtt_ns),
        ("dispatch", cal.dispatch_ns),
        ("send", cal.send_ns),
        ("memory", cal.mem_latency_ns),
    ] {
        assert!(v.is_finite() && v > 0.0, "{name} = {v}");
    }
    let m = cal.machine();
    m.validate().unwrap();
    assert_eq!(m.cpus, 2);
    assert_eq!(m.costs.context_switch_cycles as f64, cal.dispatch_ns.round().max(1.0));
}
