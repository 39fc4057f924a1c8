//! `tick_phase`: a machine file can start every CPU's timer with the run (`boot`, as
//! the runtime's workers do) instead of at a phase drawn from the seed (`random`, the
//! default); a value that is neither is named in the error.

use schedlab_core::PolicySpec;
use schedlab_sim::cost::CostModel;
use schedlab_sim::{simulate, Machine, SimConfig, TickPhase};
use schedlab_workloads::parse_workload;

fn machine(phase: Option<&str>) -> Machine {
    let key = phase.map_or(String::new(), |p| format!("tick_phase = \"{p}\"\n"));
    Machine::from_toml(&format!("base = \"smp-2\"\n{key}")).unwrap()
}

/// (virtual ns, switches) of cfs on a small hackbench, for seed `seed`.
fn run(m: &Machine, seed: u64) -> (u64, u64) {
    let p = PolicySpec::parse("cfs").unwrap();
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

fn with_stagger(phase: &str, stagger: u64) -> Machine {
    Machine::from_toml(&format!("base = \"smp-2\"\ntick_phase = \"{phase}\"\n[costs]\ntick_stagger_ns = {stagger}\n"))
        .unwrap()
}

/// `tick_stagger_ns` moves only a `boot` machine's later CPUs' first ticks: a `random`
/// machine ignores it (the same run), and a value past a second is named.
#[test]
fn the_stagger_applies_to_boot_only_and_bad_values_are_named() {
    assert_eq!(with_stagger("random", 0).costs.host.tick_stagger_ns, 0);
    for seed in 1..=3 {
        assert_eq!(run(&with_stagger("random", 0), seed), run(&with_stagger("random", 400_000), seed), "seed {seed}");
    }
    let runs: Vec<_> =
        [0, 100_000, 300_000, 500_000, 700_000].iter().map(|&s| run(&with_stagger("boot", s), 1)).collect();
    assert!(runs.iter().any(|r| *r != runs[0]), "no stagger moved a boot run: {runs:?}");
    let e = Machine::from_toml("base = \"smp-2\"\n[costs]\ntick_stagger_ns = 2000000000\n").unwrap_err();
    assert!(e.0.contains("tick_stagger_ns"), "{}", e.0);
}

fn with_ranges(first: (u32, u32), other: (u32, u32)) -> Machine {
    Machine::from_toml(&format!(
        "base = \"smp-2\"\ntick_phase = \"boot\"\nhz = 1000\n[costs]\ntick_first_min_ns = {}\ntick_first_max_ns = {}\ntick_other_min_ns = {}\ntick_other_max_ns = {}\n",
        first.0, first.1, other.0, other.1
    ))
    .unwrap()
}

/// Measured ranges (one 2-vCPU VM: the root's CPU 928–999 µs, the other 928–1,356 µs): every draw of `0..tick` lands inside its CPU's range, the lowest and
/// highest draws on its ends, and a larger draw never gives an earlier tick; a `(0, 0)`
/// range keeps the fixed grid.
#[test]
fn the_first_tick_draw_covers_the_measured_range() {
    let cost = CostModel::new(&with_ranges((928_100, 998_800), (928_400, 1_356_400)));
    let tick = cost.tick_ns;
    assert_eq!(tick, 1_000_000);
    for (cpu, (lo, hi)) in [(0, (928_100, 998_800)), (1, (928_400, 1_356_400))] {
        assert_eq!(cost.boot_first_tick(cpu, 0, 0), lo);
        assert_eq!(cost.boot_first_tick(cpu, tick - 1, 0), hi);
        let mut last = 0;
        for draw in (0..tick).step_by(997) {
            let t = cost.boot_first_tick(cpu, draw, 0);
            assert!((lo..=hi).contains(&t) && t >= last, "cpu {cpu} draw {draw}: {t}");
            last = t;
        }
    }
    let fixed = CostModel::new(&with_stagger("boot", 7_000));
    assert_eq!(fixed.boot_first_tick(0, 123, 0), fixed.tick_ns);
    assert_eq!(fixed.boot_first_tick(1, 123, 5_000), 12_000);
}

/// With ranges, the seed decides the phases again, and only the seed: the same seed
/// gives the same run, and the seeds do not all give one run.
#[test]
fn drawn_phases_are_deterministic_per_seed() {
    let m = with_ranges((900_000, 1_000_000), (100_000, 1_900_000));
    let runs: Vec<_> = (1..=6).map(|s| run(&m, s)).collect();
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(run(&m, i as u64 + 1), *r, "seed {}", i + 1);
    }
    assert!(runs.iter().any(|r| *r != runs[0]), "{runs:?}");
}

#[test]
fn a_reversed_or_huge_range_is_named() {
    for (first, other) in [((2, 1), (0, 0)), ((0, 0), (5, 4)), ((0, 2_000_000_000), (0, 0))] {
        let text = format!(
            "base = \"smp-2\"\n[costs]\ntick_first_min_ns = {}\ntick_first_max_ns = {}\ntick_other_min_ns = {}\ntick_other_max_ns = {}\n",
            first.0, first.1, other.0, other.1
        );
        let e = Machine::from_toml(&text).unwrap_err();
        assert!(e.0.contains("tick_first") || e.0.contains("tick_other"), "{}", e.0);
    }
}

/// A 2-vCPU host's calibration (`data/host-2vcpu.toml`) with CPU 0's first tick at 990 µs, CPU 1's
/// at 960 µs (before O(1) hackbench's first drain ends on CPU 0) and the policy's clock
/// reading `origin` ns at the root's fork.
fn host_with_origin(origin: u32) -> Machine {
    let text = format!(
        "{}tick_first_min_ns = 990000\ntick_first_max_ns = 990000\ntick_other_min_ns = 960000\ntick_other_max_ns = 960000\nclock_origin_min_ns = {origin}\nclock_origin_max_ns = {origin}\n",
        include_str!("data/host-2vcpu.toml")
    );
    Machine::from_toml(&text).unwrap()
}

/// The first migration of O(1) hackbench: (when, ns; which task).
fn first_migration(m: &Machine) -> (u64, u32) {
    use schedlab_core::trace::Event;
    let p = PolicySpec::parse("o1").unwrap();
    let w = parse_workload("hackbench:groups=1,loops=100,start=fork").unwrap();
    let (_, t) = schedlab_sim::simulate_traced(m, &p, &w, &SimConfig::default(), 1 << 20).unwrap();
    t.records
        .iter()
        .find_map(|r| match r.ev {
            Event::Migrate { task, .. } => Some((r.ts_ns, task)),
            _ => None,
        })
        .expect("a migration")
}

/// O(1)'s jiffies are the policy's clock over the tick (`now / tick`). The runtime's
/// clock starts before its root runs (1.5–1.7 ms under O(1) on a 2-vCPU VM); with that
/// origin a jiffy boundary falls between the root's last run (~43 µs) and CPU 1's first
/// idle balance, which finds the root cache-cold and pulls it, as the runtime does.
/// With the clock starting at the root's fork the whole first millisecond is jiffy 0:
/// every task is hot and the first pull waits for CPU 1's second tick.
#[test]
fn the_clock_origin_moves_o1s_jiffy_grid() {
    let (at, task) = first_migration(&host_with_origin(500_000));
    assert_eq!(task, 0, "the root is pulled");
    assert!((960_000..1_000_000).contains(&at), "at CPU 1's first tick: {at} ns");
    let (at, _) = first_migration(&host_with_origin(0));
    assert!(at > 1_900_000, "no pull before CPU 1's second tick: {at} ns");
}

/// The origin is drawn per seed in its range (its ends from the lowest and highest
/// draws), and a machine without a range makes no draw.
#[test]
fn the_clock_origin_draw_covers_its_range() {
    let text = "base = \"smp-2\"\nhz = 1000\n[costs]\nclock_origin_min_ns = 1500000\nclock_origin_max_ns = 1700000\n";
    let cost = CostModel::new(&Machine::from_toml(text).unwrap());
    assert_eq!(cost.clock_origin(|_| 0), Some(1_500_000));
    assert_eq!(cost.clock_origin(|tick| tick - 1), Some(1_700_000));
    assert_eq!(cost.clock_origin(|tick| tick / 2), Some(1_600_000));
    let none = CostModel::new(&machine(Some("boot")));
    assert_eq!(none.clock_origin(|_| panic!("no range, no draw")), None);
    let e = Machine::from_toml("base = \"smp-2\"\n[costs]\nclock_origin_min_ns = 5\nclock_origin_max_ns = 4\n")
        .unwrap_err();
    assert!(e.0.contains("clock_origin"), "{}", e.0);
}
