//! `cost_jitter_pct` (docs/cost-model.md, "Price jitter"): 0 charges every price
//! exactly and draws nothing; above 0 the per-event CPU prices vary, and a run is
//! still the same run for the same seed.

use schedlab_core::PolicySpec;
use schedlab_sim::jitter::Jitter;
use schedlab_sim::{simulate, CostModel, Machine, Report, SimConfig};
use schedlab_workloads::parse_workload;

/// The presets' smp-2 at 1000 MHz with `cost_jitter_pct = pct`.
fn machine(pct: u32) -> Machine {
    let mut m = Machine::preset("smp-2").unwrap();
    m.mhz = 1000;
    m.costs.host.cost_jitter_pct = pct;
    m
}

/// A report without its wall-clock fields, as text.
fn text_of(r: &Report) -> String {
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
        assert_eq!(Machine::preset(p).unwrap().costs.host.cost_jitter_pct, 0, "{p}");
    }
}

#[test]
fn no_jitter_is_no_jitter_object_and_so_no_draw() {
    // The engine draws only through a `Jitter`, and 0 makes none.
    let m = machine(0);
    assert!(Jitter::new(0, 1, &CostModel::new(&m)).is_none());
    assert!(Jitter::new(1, 1, &CostModel::new(&m)).is_some());
}

#[test]
fn no_jitter_is_the_model_without_it() {
    // A machine file that says `cost_jitter_pct = 0` runs as one without the key (the
    // byte-identity with the simulator before the key existed: scripts/sim-same.sh).
    let text = "cpus = 2\nname = \"x\"\nmhz = 1000\n[costs]\n";
    let a = Machine::from_toml(text).unwrap();
    let b = Machine::from_toml(&format!("{text}cost_jitter_pct = 0\n")).unwrap();
    let w = "hackbench:groups=1,loops=20";
    assert_eq!(text_of(&run(&a, "mqs", w, 2)), text_of(&run(&b, "mqs", w, 2)));
}

#[test]
fn a_jittered_run_is_the_same_run_for_the_same_seed() {
    let w = "hackbench:groups=1,loops=20";
    for policy in ["dss", "mqs"] {
        let (a, b) = (run(&machine(10), policy, w, 3), run(&machine(10), policy, w, 3));
        assert_eq!(text_of(&a), text_of(&b), "{policy}: jitter 10 %, seed 3 twice");
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
    assert_eq!(Machine::from_toml(&format!("{base}cost_jitter_pct = 50\n")).unwrap().costs.host.cost_jitter_pct, 50);
}
