//! The user-level runtime's own costs (`clock_read_cycles`, `recv_block_cycles`,
//! `chan_send_xcpu_ns`, `chan_recv_xcpu_ns`, `recv_register_xcpu_ns`, `notify_xcpu_ns`,
//! `lock_handoff_ns`, `lock_remote_ns`, `wake_transfer_ns`, `task_block_fresh_ns`, the lock waiter's
//! back-off `lock_pause_ns` … `lock_unpark_ns`; docs/cost-model.md) are
//! charged at the events documented there, and only there: the cross-CPU ones never
//! on one CPU, the per-operation ones at least once per operation.

use schedlab_core::{CpuMask, PolicySpec};
use schedlab_sim::{simulate, CostParams, Machine, Report, SimConfig, TaskStruct};
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
    // The runtime's costs, so the runtime's task layout too (as a calibrated host).
    m.task_struct = TaskStruct::Runtime;
    f(&mut m.costs);
    m
}

#[test]
fn the_kernel_presets_charge_no_runtime_cost() {
    for p in ["up", "smp-2", "smp-8", "numa-4x4"] {
        let c = Machine::preset(p).unwrap().costs;
        let runtime = [
            c.host.clock_read_cycles,
            c.host.recv_block_cycles,
            c.host.chan_send_xcpu_ns,
            c.host.chan_recv_xcpu_ns,
            c.host.recv_register_xcpu_ns,
            c.host.notify_xcpu_ns,
            c.host.lock_handoff_ns,
            c.host.lock_remote_ns,
            c.host.wake_transfer_ns,
            c.host.task_block_fresh_ns,
            c.host.lock_pause_ns,
            c.host.lock_spin_steps,
            c.host.lock_yield_ns,
            c.host.lock_yields,
            c.host.lock_unpark_ns,
            c.hw.store_buffer,
        ];
        assert_eq!(runtime, [0; 16], "{p}");
    }
}

#[test]
fn cross_cpu_costs_are_never_charged_on_one_cpu() {
    let base = pingpong(&with("up", |_| {}), "dss");
    let sets: [(&str, SetCost); 7] = [
        ("chan_send_xcpu_ns", |c| c.host.chan_send_xcpu_ns = 5_000),
        ("chan_recv_xcpu_ns", |c| c.host.chan_recv_xcpu_ns = 5_000),
        ("recv_register_xcpu_ns", |c| c.host.recv_register_xcpu_ns = 5_000),
        ("notify_xcpu_ns", |c| c.host.notify_xcpu_ns = 5_000),
        ("lock_handoff_ns", |c| c.host.lock_handoff_ns = 5_000),
        ("lock_remote_ns", |c| c.host.lock_remote_ns = 5_000),
        ("wake_transfer_ns", |c| c.host.wake_transfer_ns = 5_000),
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
    let sets: [(&str, SetCost); 6] = [
        ("chan_send_xcpu_ns", |c| c.host.chan_send_xcpu_ns = 1_000),
        ("chan_recv_xcpu_ns", |c| c.host.chan_recv_xcpu_ns = 1_000),
        ("notify_xcpu_ns", |c| c.host.notify_xcpu_ns = 1_000),
        ("lock_handoff_ns", |c| c.host.lock_handoff_ns = 1_000),
        ("lock_remote_ns", |c| c.host.lock_remote_ns = 1_000),
        ("wake_transfer_ns", |c| c.host.wake_transfer_ns = 1_000),
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

/// The channel's cross-CPU costs are charged once per message that crosses, at the
/// send (the channel was last touched on the other CPU: its receiver is there) and at
/// the receive (the message was sent there), and at nothing else: on the split
/// ping-pong every one of the 2 × ROUNDS messages crosses, all on the critical path,
/// so each cost adds 2 × ROUNDS charges of it (but the very first send, into a channel
/// nobody touched yet; a tick's worth of slack for the longer run).
#[test]
fn channel_costs_are_charged_once_per_crossing_message() {
    let host = |c: &mut CostParams| {
        // A host-like runtime machine: no syscalls, a registration cost per block.
        c.kernel.syscall_cycles = 0;
        c.host.recv_block_cycles = 300;
        c.host.clock_read_cycles = 20;
    };
    let base = split_pingpong(&with("smp-2", host), "dss");
    assert_eq!(base.messages_received, 2 * ROUNDS);
    let sets: [(&str, SetCost); 3] = [
        ("chan_send_xcpu_ns", |c| c.host.chan_send_xcpu_ns = 1_000),
        ("chan_recv_xcpu_ns", |c| c.host.chan_recv_xcpu_ns = 1_000),
        ("notify_xcpu_ns", |c| c.host.notify_xcpu_ns = 1_000),
    ];
    for (name, set) in sets {
        let r = split_pingpong(
            &with("smp-2", |c| {
                host(c);
                set(c)
            }),
            "dss",
        );
        let extra = r.virtual_ns - base.virtual_ns;
        let want = (2 * ROUNDS - 1) * 1_000;
        assert!((want..=want + 21_000).contains(&extra), "{name}: {extra} ns extra, {want} ns of charges expected");
    }
}

/// A blocking receive's registration from the other CPU is charged once per blocking
/// receive of a message sent there (all but each channel's first), on the receiver's
/// CPU. In a ping-pong it overlaps the partner's wake-up, so it shows in the CPUs' busy
/// time rather than on the round trip.
#[test]
fn a_cross_cpu_registration_is_charged_per_blocking_receive() {
    let host = |c: &mut CostParams| {
        c.kernel.syscall_cycles = 0;
        c.host.recv_block_cycles = 300;
    };
    let busy_ns = |r: &Report| r.cpu_busy_pct / 100.0 * r.virtual_ns as f64 * r.cpus as f64;
    let base = split_pingpong(&with("smp-2", host), "dss");
    let r = split_pingpong(
        &with("smp-2", |c| {
            host(c);
            c.host.recv_register_xcpu_ns = 1_000;
        }),
        "dss",
    );
    let extra = busy_ns(&r) - busy_ns(&base);
    let want = (2 * ROUNDS - 2) as f64 * 1_000.0;
    assert!((extra - want).abs() < 0.01 * want, "{extra} ns more busy, {want} ns of charges expected");
    // Not charged when both ends share a CPU.
    let one = pingpong(&with("up", |c| c.host.recv_register_xcpu_ns = 5_000), "dss");
    assert_eq!(one.virtual_ns, pingpong(&with("up", |_| {}), "dss").virtual_ns);
}

#[test]
fn clock_reads_and_blocking_receives_are_charged_per_operation() {
    let base = pingpong(&with("up", |_| {}), "dss");
    // 4 operations per round (two sends, two receives), all on the one CPU.
    let clock = pingpong(&with("up", |c| c.host.clock_read_cycles = 1_000), "dss");
    let extra = clock.virtual_ns - base.virtual_ns;
    assert!(extra >= 4 * ROUNDS * 1_000, "clock reads: {extra} ns");
    // Plus one per switch: at most 4 + 2 per round, and a tick's worth of slack.
    assert!(extra <= (6 * ROUNDS + 100) * 1_000, "clock reads: {extra} ns");
    // Each round blocks at least once (on one CPU the pair cannot both find a message).
    let block = pingpong(&with("up", |c| c.host.recv_block_cycles = 1_000), "dss");
    let extra = block.virtual_ns - base.virtual_ns;
    assert!((ROUNDS * 1_000..=(2 * ROUNDS + 100) * 1_000).contains(&extra), "blocking receives: {extra} ns");
}

/// Of the wake-ups that asked another CPU than the waker's to reschedule, the share
/// whose task next ran on that CPU (the IPI'd CPU won the race to `schedule()`).
fn ipi_wins(m: &Machine, policy: &str) -> (usize, usize) {
    use schedlab_core::trace::Event;
    let w = parse_workload(&format!("pingpong:rounds={ROUNDS}")).unwrap();
    let (_, t) =
        schedlab_sim::simulate_traced(m, &PolicySpec::parse(policy).unwrap(), &w, &SimConfig::default(), 1 << 20)
            .unwrap();
    let mut pending: Vec<Option<u32>> = Vec::new();
    let (mut asked, mut won) = (0, 0);
    for r in &t.records {
        match r.ev {
            Event::Wakeup { task, target: Some(to), .. } if to != r.cpu => {
                let i = task as usize;
                pending.resize(pending.len().max(i + 1), None);
                pending[i] = Some(to);
            }
            Event::Switch { next: Some(n), .. } => {
                if let Some(to) = pending.get_mut(n as usize).and_then(Option::take) {
                    asked += 1;
                    won += (to == r.cpu) as usize;
                }
            }
            _ => {}
        }
    }
    (asked, won)
}

/// A blocking receive registers its listener in a step of its own (`recv_block`), so
/// the waker's `schedule()` after it takes the shared run-queue lock at its own
/// instant: an IPI'd CPU whose `schedule()` comes earlier in virtual time gets the
/// lock, and the woken task, first. With the block and `schedule()` as one step,
/// processed at the step's start, the waker would take the lock "from the future"
/// ahead of the IPI'd CPU: under DSS every ping-pong hop would stay on the waker's
/// CPU, while the runtime's IPI'd worker wins 92–95 % of these races.
#[test]
fn an_ipid_cpu_that_reaches_schedule_first_wins_the_woken_task() {
    let m = with("smp-2", |c| {
        c.host.recv_block_cycles = 2_000;
        c.hw.ipi_latency_ns = 100;
        c.hw.ipi_send_cycles = 0;
    });
    for policy in ["dss", "mqs"] {
        let (asked, won) = ipi_wins(&m, policy);
        assert!(asked as u64 >= ROUNDS, "{policy}: {asked} wake-ups asked another CPU");
        assert!(won * 10 >= asked * 9, "{policy}: the IPI'd CPU ran the woken task {won} times of {asked}");
    }
    // With no registration time the waker's `schedule()` comes right after its send,
    // before the IPI lands: it runs the woken task itself, and the hop stays local.
    let quick = with("smp-2", |c| c.hw.ipi_latency_ns = 100);
    let (asked, won) = ipi_wins(&quick, "dss");
    assert!(asked as u64 >= ROUNDS && won * 10 <= asked, "no registration time: {won} of {asked}");
}

/// A send that lands between a receive's registration and the `schedule()` that
/// blocks it only marks the receiver; after that `schedule()` its own CPU wakes it (the
/// runtime's NOTIFIED path). Nothing is lost: every message arrives, and the
/// engine's invariants hold after every event.
#[test]
fn a_send_during_a_receives_registration_wakes_it_after_its_schedule() {
    use schedlab_core::trace::Event;
    let m = with("smp-2", |c| {
        c.host.recv_block_cycles = 5_000;
        c.hw.ipi_latency_ns = 100;
    });
    let w = parse_workload(&format!("pingpong:rounds={ROUNDS}")).unwrap();
    let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
    for policy in ["dss", "mqs", "pmqs:pool=1,lb=lbp,period=10", "o1", "cfs"] {
        let (r, t) = schedlab_sim::simulate_traced(&m, &PolicySpec::parse(policy).unwrap(), &w, &cfg, 1 << 20).unwrap();
        assert_eq!(r.messages_received, 2 * ROUNDS, "{policy}");
        if policy == "o1" || policy == "cfs" {
            continue; // these keep the pair on one CPU: no hop races
        }
        // The receiver's own CPU wakes it (no waker task): once per hop that raced.
        let late = t.records.iter().filter(|r| matches!(r.ev, Event::Wakeup { waker: None, .. })).count();
        assert!(late as u64 >= ROUNDS / 2, "{policy}: {late} wake-ups after a raced block");
    }
}

/// `cfs`'s run queue is a tree: each insert or removal is charged `tree_op_cycles`,
/// once per operation, and never `list_op_cycles` (a list link is four pointer stores;
/// a tree walk and its rebalancing are not). DSS, whose queue is a list, never pays it.
#[test]
fn fair_charges_a_tree_op_per_insert_and_removal() {
    let base = pingpong(&with("up", |_| {}), "cfs");
    // Per round, two hops; a hop is a wake-up (one insert) and the pick (one removal).
    let tree = pingpong(&with("up", |c| c.kernel.tree_op_cycles += 1_000), "cfs");
    let extra = tree.virtual_ns - base.virtual_ns;
    assert!((4 * ROUNDS * 1_000..=(4 * ROUNDS + 100) * 1_000).contains(&extra), "tree ops: {extra} ns");
    let list = pingpong(&with("up", |c| c.kernel.list_op_cycles += 1_000), "cfs");
    assert_eq!(list.virtual_ns, base.virtual_ns, "cfs charged a list link");
    let dss = pingpong(&with("up", |_| {}), "dss");
    let dss_tree = pingpong(&with("up", |c| c.kernel.tree_op_cycles += 1_000), "dss");
    assert_eq!(dss.virtual_ns, dss_tree.virtual_ns, "DSS charged a tree op");
}

/// A policy that asks for the time inside a running task's operation (cfs's
/// `update_curr` at a send's wake-up) pays a clock read there: the runtime's worker
/// stamps the clock only for the calls it makes between polls. DSS never asks for it in
/// a wake-up; cfs does once per wake-up (two per round), and nowhere else in a task's
/// operation here.
#[test]
fn a_policys_clock_read_inside_a_task_operation_is_charged() {
    let extra = |policy: &str| {
        let base = pingpong(&with("up", |_| {}), policy);
        let clock = pingpong(&with("up", |c| c.host.clock_read_cycles = 1_000), policy);
        assert_eq!(base.context_switches, clock.context_switches, "{policy}: the same schedule");
        clock.virtual_ns as i64 - base.virtual_ns as i64
    };
    let (cfs, dss) = (extra("cfs"), extra("dss"));
    let wakes = cfs - dss;
    // Within one read of two per round: how the last round meets the run's end differs.
    let per_round = 2 * ROUNDS as i64;
    assert!(((per_round - 1) * 1_000..=(per_round + 100) * 1_000).contains(&wakes), "cfs's extra reads: {wakes} ns");
}

/// A root that spawns a child (`Sleep` `child_ns`, then exit) twice, `gap_ns` apart.
fn two_spawns(child_ns: u64, gap_ns: u64) -> Workload {
    let mut w = parse_workload("pingpong:rounds=1").unwrap();
    let child = w.programs.len() as schedlab_workloads::ProgId;
    w.programs
        .push(schedlab_workloads::Program { role: "child".into(), ops: vec![Op::Sleep { ns: child_ns }, Op::Exit] });
    let spawn = Op::Spawn { program: child, params: Default::default() };
    w.programs[w.root as usize].ops = vec![spawn, Op::Sleep { ns: gap_ns }, spawn, Op::Exit];
    w.expected_tasks = 3;
    w.expected_messages = 0;
    w
}

#[test]
fn a_fresh_task_block_is_charged_only_while_every_block_is_in_use() {
    let fresh = 100_000;
    let extra = |w: &Workload| {
        let charged = run(&with("up", |c| c.host.task_block_fresh_ns = fresh), "dss", w).virtual_ns;
        charged - run(&with("up", |_| {}), "dss", w).virtual_ns
    };
    // The first child lives on while the second is spawned: two blocks, both new.
    assert_eq!(extra(&two_spawns(10_000_000, 1_000_000)), 2 * u64::from(fresh));
    // The first child has exited: the second takes its block.
    assert_eq!(extra(&two_spawns(1_000_000, 10_000_000)), u64::from(fresh));
}

#[test]
fn every_preset_keeps_serial_misses() {
    for p in schedlab_sim::machine::PRESETS.iter().map(|p| p.replace("smp-N", "smp-4")) {
        assert_eq!(Machine::preset(&p).unwrap().costs.hw.mlp, 1, "{p}");
    }
}

#[test]
fn overlapped_misses_shorten_a_cross_cpu_hop_under_each_marking_policy() {
    // Every hop crosses CPUs, so some marked group holds more than one miss (MQS's and
    // O(1)'s wake-up: the queue header and the task line; `switch_to`'s lines): with
    // misses overlapped the run is shorter, on the same schedule. (On this split run
    // DSS's wake-up finds the global header in its cache: its CPU's own `schedule()`
    // wrote it last.)
    for policy in ["dss", "mqs", "o1"] {
        let serial = split_pingpong(&with("smp-2", |_| {}), policy);
        let overlapped = split_pingpong(&with("smp-2", |c| c.hw.mlp = 4), policy);
        assert_eq!(serial.context_switches, overlapped.context_switches, "{policy}");
        assert!(
            overlapped.virtual_ns < serial.virtual_ns,
            "{policy}: {} ns overlapped vs {} ns serial",
            overlapped.virtual_ns,
            serial.virtual_ns
        );
    }
}
