//! The user-level runtime's own costs (`clock_read_cycles`, `recv_block_cycles`,
//! `chan_transfer_ns`, `lock_handoff_ns`, `wake_transfer_ns`; docs/cost-model.md) are
//! charged at the events documented there, and only there: the cross-CPU ones never
//! on one CPU, the per-operation ones at least once per operation.

use schedlab_core::{CpuMask, PolicySpec};
use schedlab_sim::{simulate, CostParams, Machine, Report, SimConfig};
use schedlab_workloads::{parse_workload, Op, Workload};

const ROUNDS: u64 = 2_000;

/// Sets one runtime cost on a machine's parameters.
type SetCost = fn(&mut CostParams);

fn run(machine: &Machine, policy: &str, w: &Workload) -> Report {
    simulate(machine, &PolicySpec::parse(policy).unwrap(), w, &SimConfig::default()).unwrap()
}

fn pingpong(machine: &Machine, policy: &str) -> Report {
    run(machine, policy, &parse_workload(&format!("pingpong:rounds={ROUNDS}")).unwrap())
}

/// The ping-pong with `pong` bound to CPU 0 and `ping` to CPU 1: every message crosses.
fn split_pingpong(machine: &Machine, policy: &str) -> Report {
    let mut w = parse_workload(&format!("pingpong:rounds={ROUNDS}")).unwrap();
    let mut cpu = 0;
    for op in w.programs[0].ops.iter_mut() {
        if let Op::Spawn { params, .. } = op {
            params.cpus_allowed = CpuMask::single(cpu);
            cpu += 1;
        }
    }
    assert_eq!(cpu, 2, "the root spawns ping and pong");
    run(machine, policy, &w)
}

/// `preset` with one runtime cost set by `f`, at 1000 MHz (one cycle = one ns).
fn with(preset: &str, f: impl Fn(&mut CostParams)) -> Machine {
    let mut m = Machine::preset(preset).unwrap();
    m.mhz = 1000;
    f(&mut m.costs);
    m
}

#[test]
fn the_kernel_presets_charge_no_runtime_cost() {
    for p in ["up", "smp-2", "smp-8", "numa-4x4"] {
        let c = Machine::preset(p).unwrap().costs;
        let runtime =
            [c.clock_read_cycles, c.recv_block_cycles, c.chan_transfer_ns, c.lock_handoff_ns, c.wake_transfer_ns];
        assert_eq!(runtime, [0; 5], "{p}");
    }
}

#[test]
fn cross_cpu_costs_are_never_charged_on_one_cpu() {
    let base = pingpong(&with("up", |_| {}), "dss");
    let sets: [(&str, SetCost); 3] = [
        ("chan_transfer_ns", |c| c.chan_transfer_ns = 5_000),
        ("lock_handoff_ns", |c| c.lock_handoff_ns = 5_000),
        ("wake_transfer_ns", |c| c.wake_transfer_ns = 5_000),
    ];
    for (name, set) in sets {
        let r = pingpong(&with("up", set), "dss");
        assert_eq!(r.virtual_ns, base.virtual_ns, "{name} charged on a uniprocessor");
    }
}

#[test]
fn cross_cpu_costs_are_charged_when_the_pair_spans_two_cpus() {
    let base = split_pingpong(&with("smp-2", |_| {}), "dss");
    assert!(base.migrations == 0 && base.context_switches >= 2 * ROUNDS, "{base:?}");
    let sets: [(&str, SetCost); 3] = [
        ("chan_transfer_ns", |c| c.chan_transfer_ns = 1_000),
        ("lock_handoff_ns", |c| c.lock_handoff_ns = 1_000),
        ("wake_transfer_ns", |c| c.wake_transfer_ns = 1_000),
    ];
    for (name, set) in sets {
        let r = split_pingpong(&with("smp-2", set), "dss");
        // Every hop crosses CPUs: at least one charge per message on the critical path.
        assert!(
            r.virtual_ns >= base.virtual_ns + ROUNDS * 1_000,
            "{name}: {} ns against {} ns without it",
            r.virtual_ns,
            base.virtual_ns
        );
    }
}

#[test]
fn clock_reads_and_blocking_receives_are_charged_per_operation() {
    let base = pingpong(&with("up", |_| {}), "dss");
    // 4 operations per round (two sends, two receives), all on the one CPU.
    let clock = pingpong(&with("up", |c| c.clock_read_cycles = 1_000), "dss");
    let extra = clock.virtual_ns - base.virtual_ns;
    assert!(extra >= 4 * ROUNDS * 1_000, "clock reads: {extra} ns");
    // Plus one per switch: at most 4 + 2 per round, and a tick's worth of slack.
    assert!(extra <= (6 * ROUNDS + 100) * 1_000, "clock reads: {extra} ns");
    // Each round blocks at least once (on one CPU the pair cannot both find a message).
    let block = pingpong(&with("up", |c| c.recv_block_cycles = 1_000), "dss");
    let extra = block.virtual_ns - base.virtual_ns;
    assert!((ROUNDS * 1_000..=(2 * ROUNDS + 100) * 1_000).contains(&extra), "blocking receives: {extra} ns");
}
