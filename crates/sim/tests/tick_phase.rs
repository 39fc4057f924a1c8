//! `tick_phase`: a machine file can start every CPU's timer with the run (`boot`, as
//! the runtime's workers do) instead of at a phase drawn from the seed (`random`, the
//! default); a value that is neither is named in the error.

use schedlab_core::PolicySpec;
use schedlab_sim::{simulate, Machine, SimConfig, TickPhase};
use schedlab_workloads::parse_workload;

fn machine(phase: Option<&str>) -> Machine {
    let key = phase.map_or(String::new(), |p| format!("tick_phase = \"{p}\"\n"));
    Machine::from_toml(&format!("base = \"smp-2\"\n{key}")).unwrap()
}

/// (virtual ns, switches) of fair on a small hackbench, for seed `seed`.
fn run(m: &Machine, seed: u64) -> (u64, u64) {
    let p = PolicySpec::parse("fair").unwrap();
    let w = parse_workload("hackbench:groups=1,loops=20").unwrap();
    let r = simulate(m, &p, &w, &SimConfig { seed, ..SimConfig::default() }).unwrap();
    (r.virtual_ns, r.context_switches)
}

#[test]
fn parsed_with_random_as_default_and_bad_values_named() {
    assert_eq!(machine(None).tick_phase, TickPhase::Random);
    assert_eq!(machine(Some("random")).tick_phase, TickPhase::Random);
    assert_eq!(machine(Some("boot")).tick_phase, TickPhase::Boot);
    let e = Machine::from_toml("base = \"smp-2\"\ntick_phase = \"sometimes\"\n").unwrap_err();
    assert!(e.0.contains("sometimes") && e.0.contains("boot"), "{}", e.0);
}

/// The preset has no price jitter and hackbench no random operations, so the tick
/// phase is the only draw: with `boot` every seed gives the same run, with `random`
/// the seeds do not.
#[test]
fn boot_takes_the_seed_out_of_the_ticks() {
    let boot = machine(Some("boot"));
    let first = run(&boot, 1);
    for seed in 2..=6 {
        assert_eq!(run(&boot, seed), first, "seed {seed}");
    }
    let random = machine(None);
    let runs: Vec<_> = (1..=6).map(|s| run(&random, s)).collect();
    assert!(runs.iter().any(|r| *r != runs[0]), "{runs:?}");
}
