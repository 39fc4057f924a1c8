//! The pick-next and wake-latency rows exist for every runtime policy of the registry
//! (so a policy added to the registry gets them without a change here) and hold
//! positive, finite values. No timing thresholds: the machine may be loaded.

use schedlab_bench::pick_cost::{self, PickScale};
use schedlab_bench::schedlab_exec::SchedlabExec;
use schedlab_bench::wake_latency::{self, Driver, WakeScale};
use schedlab_bench::{names, runtimes, units, Filter, Row};
use std::time::Duration;

/// Every registry entry's example configuration: what the rows must cover.
fn registry() -> Vec<String> {
    schedlab_core::policies::entries().into_iter().map(|e| e.example.to_string()).collect()
}

fn positive(r: &Row) {
    assert!(r.value.is_finite() && r.value > 0.0, "{r:?}");
}

#[test]
fn runtime_policies_are_the_registry() {
    let mut got = pick_cost::runtime_policies();
    let mut want = registry();
    assert_eq!(got[0], "fast", "runtime-native first");
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn pick_next_rows_for_every_policy_and_size() {
    let scale = PickScale { sizes: vec![10, 100, 1_000], target: Duration::from_millis(1) };
    let rows = pick_cost::rows(&scale, &Filter(None), &mut |_| {});
    for policy in registry() {
        for n in &scale.sizes {
            let want = format!("{policy}, {n} runnable");
            let r = rows
                .iter()
                .find(|r| r.bench == names::PICK_NEXT && r.policy.starts_with(&want))
                .unwrap_or_else(|| panic!("no {} row for {want}: {rows:?}", names::PICK_NEXT));
            assert_eq!((r.runtime.as_str(), r.unit.as_str()), (runtimes::SCHEDLAB, units::NS_PICK));
            positive(r);
        }
        let g = rows
            .iter()
            .find(|r| r.bench == names::PICK_NEXT_GROWTH && r.policy == format!("{policy}, 1000 vs 10 runnable"))
            .unwrap_or_else(|| panic!("no growth row for {policy}: {rows:?}"));
        assert_eq!(g.unit, units::GROWTH);
        positive(g);
    }
    assert_eq!(rows.len(), registry().len() * (scale.sizes.len() + 1));
    // The filter applies: growth rows only.
    let only = pick_cost::rows(&scale, &Filter(Some("growth".into())), &mut |_| {});
    assert!(only.iter().all(|r| r.bench == names::PICK_NEXT_GROWTH) && only.len() == registry().len());
    assert!(pick_cost::rows(&scale, &Filter(Some("tokio".into())), &mut |_| {}).is_empty());
}

#[test]
fn pick_next_measures_every_policy_at_100k() {
    for policy in registry() {
        let c = pick_cost::measure(&policy, 100_000, Duration::from_millis(1)).expect("measured");
        assert!(c.ns.is_finite() && c.ns > 0.0 && c.picks > 0, "{policy}: {c:?}");
    }
}

#[test]
fn wake_latency_rows_for_every_policy() {
    let ws = WakeScale { duration: Duration::from_millis(40), hogs_per_worker: 3, ..WakeScale::quick() };
    for policy in registry() {
        let e = SchedlabExec::new(2, &policy).expect("runtime builds");
        for driver in Driver::ALL {
            let r = wake_latency::wake_latency(&e, 2, &ws, driver);
            assert!(r.sent > 0 && r.ran == r.sent, "{policy} {driver:?}: {} sent, {} ran", r.sent, r.ran);
            assert!(r.chunks > 0, "{policy} {driver:?}: the hogs ran");
        }
        let rows = wake_latency::rows(&e, 2, &ws, &Filter(None), &mut |_| {});
        e.shutdown();
        let benches: Vec<&str> = rows.iter().map(|r| r.bench.as_str()).collect();
        let want: Vec<&str> = names::WAKE_LATENCY.iter().chain(names::WAKE_LATENCY_INSIDE).copied().collect();
        assert_eq!(benches, want, "{policy}");
        for r in &rows {
            assert_eq!((r.runtime.as_str(), r.unit.as_str()), (runtimes::SCHEDLAB, units::NS_WAKE));
            assert!(r.policy.starts_with(&format!("{policy}, 2 workers, 6 hogs, ")), "{r:?}");
            positive(r);
        }
        for driver in rows.chunks(4) {
            let v: Vec<f64> = driver.iter().map(|r| r.value).collect();
            assert!(v.windows(2).all(|w| w[0] <= w[1]), "{policy}: quantiles ascend: {v:?}");
        }
    }
}

/// The same program with one kernel thread per task: every probe ran, the hog threads
/// ran, and its rows are the outside-driver benches in order, ascending.
#[test]
fn wake_latency_rows_on_kernel_threads() {
    let ws = WakeScale { duration: Duration::from_millis(40), hogs_per_worker: 3, ..WakeScale::quick() };
    let r = schedlab_bench::kthreads::wake_latency(&ws, schedlab_bench::Pin::All);
    assert!(r.sent > 0 && r.ran == r.sent, "{} sent, {} ran", r.sent, r.ran);
    assert!(r.chunks > 0, "the hog threads ran");
    assert_eq!(r.hogs, 3 * r.workers);
    let rows = r.rows(runtimes::KERNEL_THREADS, "threads", &Filter(None));
    let benches: Vec<&str> = rows.iter().map(|r| r.bench.as_str()).collect();
    assert_eq!(benches, names::WAKE_LATENCY);
    rows.iter().for_each(positive);
    assert!(rows.windows(2).all(|w| w[0].value <= w[1].value), "quantiles ascend: {rows:?}");
}

#[test]
fn new_benches_are_named_and_filtered() {
    let wake = names::WAKE_LATENCY.iter().chain(names::WAKE_LATENCY_INSIDE);
    for b in [names::PICK_NEXT, names::PICK_NEXT_GROWTH].iter().chain(wake.clone()) {
        assert!(names::ALL.contains(b), "{b}");
    }
    assert!(!names::is_async(names::PICK_NEXT) && !names::is_async(names::PICK_NEXT_GROWTH));
    assert!(wake.clone().all(|b| names::is_async(b)));
    assert!(units::lower_is_better(units::GROWTH) && units::lower_is_better(units::NS_WAKE));
    let f = Filter(Some("pick".into()));
    assert!(f.selects_anything() && !f.wants_runtime(runtimes::TOKIO));
    assert!(Filter(Some("wake".into())).wants_runtime(runtimes::GO));
}

/// The Go peer's wake-latency rows (`peers/go`, the same program with goroutines, its
/// driver a goroutine): the four inside benches, in `names::WAKE_LATENCY_INSIDE` order, parsed by the same `from_json` as
/// `schedlab bench`, every probe accounted for in the policy column. Needs `go` on
/// PATH; without it the test says so and checks nothing.
#[test]
fn go_peer_wake_latency_rows() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../peers/go");
    let bin = std::env::temp_dir().join(format!("schedlab-peer-go-test-{}", std::process::id()));
    let built =
        match std::process::Command::new("go").arg("build").arg("-o").arg(&bin).arg(".").current_dir(&src).status() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("skipped: `go` not runnable ({e})");
                return;
            }
        };
    assert!(built.success(), "go build: {built}");
    let out =
        std::process::Command::new(&bin).args(["-quick", "-only", "wake"]).env("GOMAXPROCS", "2").output().unwrap();
    let _ = std::fs::remove_file(&bin);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows = schedlab_bench::row::from_json(&String::from_utf8_lossy(&out.stdout)).unwrap();
    let benches: Vec<&str> = rows.iter().map(|r| r.bench.as_str()).collect();
    assert_eq!(benches, names::WAKE_LATENCY_INSIDE);
    // 0.3 s of probes every 5 ms (WakeScale::quick) among 10 hogs per P.
    let s = WakeScale::quick();
    let probes = s.duration.as_nanos() / s.period.as_nanos();
    for r in &rows {
        assert_eq!((r.runtime.as_str(), r.unit.as_str(), r.reps), (runtimes::GO, units::NS_WAKE, 1));
        assert_eq!(r.policy, format!("GOMAXPROCS=2, 2 workers, 20 hogs, {probes} probes"), "{r:?}");
        assert!(r.cpu_per_op.is_none() && r.error.is_none(), "{r:?}");
        positive(r);
    }
    let v: Vec<f64> = rows.iter().map(|r| r.value).collect();
    assert!(v.windows(2).all(|w| w[0] <= w[1]), "quantiles ascend: {v:?}");
}
