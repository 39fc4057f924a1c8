//! `cost_jitter_pct` (docs/cost-model.md, "Price jitter"): 0 charges every price
//! exactly and draws nothing; above 0 the per-event CPU prices vary, and a run is
//! still the same run for the same seed.

use schedlab_core::{Platform, PolicySpec, Work};
use schedlab_sim::platform::SimPlatform;
use schedlab_sim::{simulate, CostModel, Machine, Report, SimConfig};
use schedlab_workloads::parse_workload;

/// The presets' smp-2 at 1000 MHz with `cost_jitter_pct = pct`.
fn machine(pct: u32) -> Machine {
    let mut m = Machine::preset("smp-2").unwrap();
    m.mhz = 1000;
    m.costs.cost_jitter_pct = pct;
    m
}

fn platform(pct: u32, seed: u64) -> SimPlatform {
    let m = machine(pct);
    SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 16, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
        .with_jitter(pct, seed)
}

/// A report without its wall-clock fields, as text.
fn text(r: &Report) -> String {
    let mut v = serde_json::to_value(r).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("wall_s");
    o.remove("events_per_sec");
    v.to_string()
}

fn run(m: &Machine, policy: &str, workload: &str, seed: u64) -> Report {
    let cfg = SimConfig { seed, ..SimConfig::default() };
    simulate(m, &PolicySpec::parse(policy).unwrap(), &parse_workload(workload).unwrap(), &cfg).unwrap()
}

#[test]
fn every_preset_has_no_jitter() {
    for p in ["up", "smp-2", "smp-8", "numa-4x4", "ppro-4", "xeon-4"] {
        assert_eq!(Machine::preset(p).unwrap().costs.cost_jitter_pct, 0, "{p}");
    }
}

#[test]
fn no_jitter_charges_each_price_exactly_and_draws_nothing() {
    let p = platform(0, 1);
    let m = machine(0);
    let cost = CostModel::new(&m);
    p.begin(0, 0);
    for w in [Work::ScheduleEntry, Work::WakeupEntry, Work::Goodness] {
        let before = p.cursor();
        p.charge(w);
        assert_eq!(p.cursor() - before, cost.work(w), "{w:?}");
    }
    assert_eq!(p.jittered(1715), 1715);
    assert_eq!(p.jitter_draws(), 0);
}

#[test]
fn jitter_varies_the_entry_prices_only_and_draws_once_each() {
    let p = platform(20, 1);
    let cost = CostModel::new(&machine(20));
    p.begin(0, 0);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let before = p.cursor();
        p.charge(Work::ScheduleEntry);
        seen.insert(p.cursor() - before);
    }
    assert_eq!(p.jitter_draws(), 200);
    assert!(seen.len() > 10, "the schedule() entry price varies: {seen:?}");
    // A goodness or list operation is priced by count, exactly: no draw.
    let before = p.cursor();
    p.charge(Work::Goodness);
    assert_eq!(p.cursor() - before, cost.work(Work::Goodness));
    assert_eq!(p.jitter_draws(), 200);
}

#[test]
fn a_jittered_run_is_the_same_run_for_the_same_seed() {
    let w = "hackbench:groups=1,loops=20";
    for policy in ["dss", "mqs"] {
        let (a, b) = (run(&machine(10), policy, w, 3), run(&machine(10), policy, w, 3));
        assert_eq!(text(&a), text(&b), "{policy}: jitter 10 %, seed 3 twice");
        // It is a different run from the unjittered one, and from another seed's.
        let exact = run(&machine(0), policy, w, 3);
        assert_ne!(a.virtual_ns, exact.virtual_ns, "{policy}: jitter changes the timings");
        assert_ne!(a.virtual_ns, run(&machine(10), policy, w, 4).virtual_ns, "{policy}: seeds 3 and 4");
        // The prices vary around themselves: the run takes about as long.
        let ratio = a.virtual_ns as f64 / exact.virtual_ns as f64;
        assert!((0.8..1.25).contains(&ratio), "{policy}: {ratio}");
    }
}

#[test]
fn a_bad_jitter_names_the_field() {
    let base = "cpus = 2\nname = \"x\"\n[costs]\n";
    let e = Machine::from_toml(&format!("{base}cost_jitter_pct = 51\n")).unwrap_err().to_string();
    assert!(e.contains("cost_jitter_pct"), "{e}");
    let e = Machine::from_toml(&format!("{base}cost_jitter_pct = -1\n")).unwrap_err().to_string();
    assert!(e.contains("cost_jitter_pct"), "{e}");
    let e = Machine::from_toml(&format!("{base}cost_jitter_pct = 0.05\n")).unwrap_err().to_string();
    assert!(e.contains("cost_jitter_pct"), "{e}");
    assert_eq!(Machine::from_toml(&format!("{base}cost_jitter_pct = 50\n")).unwrap().costs.cost_jitter_pct, 50);
}
