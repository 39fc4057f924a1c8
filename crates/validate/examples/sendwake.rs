//! Probe: what a *send that wakes a blocked receiver*
//! costs the sender on the runtime under a policy scheduler, against what the simulator
//! charges for the same step. Chat's receivers drain more messages per slice in the
//! simulator than on the runtime, and that count follows the ratio of the waking
//! sender's price to the receiver's cycle (docs/traces.md, "Chat under DSS and MQS"), so this
//! prices the whole waking send untraced: the channel, the waker, the task header's
//! CAS, the policy's `wake_up` under its run-queue lock, `reschedule_idle` and the IPI
//! decision.
//!
//! Runtime (2 pinned workers, the policy given, 1000 Hz): a sender task S and a
//! receiver R in different address spaces (as Chat's roles are). R announces that it
//! is about to receive (`ready`), S waits for that, lets R settle for `SETTLE_NS`, then
//! times one `try_send` (as `schedlab_rtrun` sends) between two clock reads. Modes:
//! * `wake-idle`: R blocks in `recv()`; its worker has nothing else to run (idle spin).
//! * `wake-busy`: as `wake-idle`, but a third task T computes on R's worker, so the
//!   wake-up finds that CPU busy (Chat's usual case: a waking send's target CPU runs
//!   another task).
//! * `no-wake`: R does not block: it spins (running) until S has sent, then
//!   `try_recv`s, so every send finds the channel's lines last written by R's CPU, as
//!   the simulator's `chan_send_xcpu_ns` case.
//!
//! A sample counts as cross-CPU when S's worker differs from the worker R last
//! received on. Printed: the median of the cross-CPU samples minus a clock read.
//!
//! Simulator (the machine file given, e.g. one `validate --machine-out` wrote): S = `Loop N { Compute
//! GAP; Send }`, R = `Loop N { Recv }` (R blocks before every send), traced; the median
//! interval between consecutive wake-ups of R by S less the gap and the two clock reads
//! after S's operations is the simulator's charge for the waking send (the send,
//! `chan_send_xcpu_ns`, `notify_xcpu_ns`, the header's transfer and the policy's
//! `wake_up` with its lock and IPI, all on the sender; the clock read after the
//! operation is left out, as the runtime's timing leaves its preemption point out).
//! `wake-busy` adds a task computing throughout, spawned first. `no-wake` is read off
//! the cost model (`send_ns + chan_send_xcpu_ns`, as `engine/exec.rs` charges it).
//! `target/release/examples/sendwake MACHINE.toml|calibrate [POLICIES] [ROUNDS]`

use schedlab_core::trace::Event;
use schedlab_core::{PolicySpec, TaskParams};
use schedlab_rt::TaskOpts;
use schedlab_sim::{Machine, SimConfig};
use schedlab_validate::median;
use schedlab_workloads::program::{Metric, Program};
use schedlab_workloads::{Op, Workload};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long S waits after R said it is about to receive: R's `recv()` registers, its
/// worker runs `schedule()` and (idle) spins well within this.
const SETTLE_NS: u64 = 8_000;
/// The simulator's gap between two sends (cycles at the machine's clock: ns on host).
const SIM_GAP_NS: u64 = 20_000;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    WakeIdle,
    WakeBusy,
    NoWake,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::WakeIdle => "wake-idle",
            Mode::WakeBusy => "wake-busy",
            Mode::NoWake => "no-wake",
        }
    }
}

fn spin_ns(ns: u64) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_nanos(ns) {
        std::hint::spin_loop();
    }
}

fn clock_read() -> f64 {
    median(
        (0..100_000)
            .map(|_| {
                let t = Instant::now();
                t.elapsed().as_nanos() as f64
            })
            .collect::<Vec<_>>(),
    )
}

struct Shared {
    /// Messages R has taken, stored just before it receives again.
    ready: AtomicU64,
    /// Messages S has sent (`no-wake`: R spins on it instead of blocking).
    sent: AtomicU64,
    /// The worker R took its latest message on.
    r_worker: AtomicUsize,
    stop: AtomicU64,
}

/// `pinned`: only where R never blocks (`no-wake`), so that no wake-up path changes;
/// there a policy may otherwise start R on S's worker.
fn opts(worker: usize, mm: u32, pinned: bool) -> TaskOpts {
    TaskOpts { worker: Some(worker), mm: Some(mm), pinned, ..TaskOpts::default() }
}

/// The runtime's send, `rounds` times: (cross-CPU samples in ns incl. one clock read,
/// how many of the rounds were cross-CPU, and in `no-wake` R's receive of each message
/// with its preemption point, incl. one clock read).
fn real(policy: &str, mode: Mode, rounds: u64) -> (Vec<f64>, u64, Vec<f64>) {
    let rt = schedlab_rt::Builder::new().workers(2).pin(true).hz(1000).policy(policy).build().expect("runtime");
    let sh = Arc::new(Shared {
        ready: AtomicU64::new(u64::MAX),
        sent: AtomicU64::new(0),
        r_worker: AtomicUsize::new(usize::MAX),
        stop: AtomicU64::new(0),
    });
    let (tx, rx) = async_channel::unbounded::<()>();
    if mode == Mode::WakeBusy {
        let sh = sh.clone();
        drop(rt.spawn_with(opts(1, 4, false), async move {
            while sh.stop.load(Relaxed) == 0 {
                spin_ns(2_000);
                schedlab_rt::preemption_point().await;
            }
        }));
    }
    let receiver = {
        let sh = sh.clone();
        rt.spawn_with(opts(1, 3, mode == Mode::NoWake), async move {
            let mut recv_ns = Vec::new();
            for i in 0..rounds {
                sh.ready.store(i, Release);
                if mode == Mode::NoWake {
                    let mut waited = Instant::now();
                    while sh.sent.load(Acquire) <= i {
                        std::hint::spin_loop();
                        // S may have been put on this worker: let it run.
                        if waited.elapsed() > Duration::from_micros(200) {
                            schedlab_rt::yield_now().await;
                            waited = Instant::now();
                        }
                    }
                    // The interpreter's `Recv` of a queued message and its
                    // preemption point, timed as one.
                    let t = Instant::now();
                    rx.recv().await.expect("sent");
                    schedlab_rt::preemption_point().await;
                    recv_ns.push(t.elapsed().as_nanos() as f64);
                } else {
                    rx.recv().await.expect("open");
                }
                sh.r_worker.store(schedlab_rt::current_worker().unwrap_or(usize::MAX), Relaxed);
            }
            recv_ns
        })
    };
    let sender = {
        let sh = sh.clone();
        rt.spawn_with(opts(0, 2, mode == Mode::NoWake), async move {
            let (mut cross, mut samples) = (0, Vec::with_capacity(rounds as usize));
            for i in 0..rounds {
                let mut waited = Instant::now();
                while sh.ready.load(Acquire) != i {
                    std::hint::spin_loop();
                    // R may have been put on this worker: let it run.
                    if waited.elapsed() > Duration::from_micros(200) {
                        schedlab_rt::yield_now().await;
                        waited = Instant::now();
                    }
                }
                spin_ns(SETTLE_NS);
                let other = sh.r_worker.load(Relaxed) != schedlab_rt::current_worker().unwrap_or(usize::MAX);
                let t = Instant::now();
                tx.try_send(()).expect("unbounded");
                let ns = t.elapsed().as_nanos() as f64;
                sh.sent.store(i + 1, Release);
                // The first round's receiver has no last worker yet.
                if other && i > 0 {
                    cross += 1;
                    samples.push(ns);
                }
            }
            sh.stop.store(1, Relaxed);
            (samples, cross)
        })
    };
    let out = rt.block_on(async {
        let recv_ns = receiver.await.expect("receiver");
        let (samples, cross) = sender.await.expect("sender");
        (samples, cross, recv_ns)
    });
    rt.shutdown();
    out
}

/// The mean of the middle 90 % of `v` less the clock read: the clock ticks in 10 ns
/// steps here, and the mean resolves finer than the median.
fn tmean(v: &[f64], clock: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = &v[v.len() / 20..v.len() - v.len() / 20];
    mid.iter().sum::<f64>() / mid.len().max(1) as f64 - clock
}

fn prog(role: &str, ops: Vec<Op>) -> Program {
    Program { role: role.into(), ops }
}

fn mm(mm: u32) -> TaskParams {
    TaskParams { mm, ..TaskParams::default() }
}

/// The simulator's charge for S's waking send: S = `Loop N { Compute GAP; Send }`, R =
/// `Loop N { Recv }`, with (`busy`) a task computing throughout, spawned first so that it
/// holds a CPU. From the trace: the median interval between two consecutive wake-ups of
/// R by S, both while R's last CPU was not S's, less the gap and the two clock reads
/// after S's operations; and how many wake-ups were such.
fn sim_charge(m: &Machine, name: &str, policy: &PolicySpec, rounds: u32, busy: bool) -> (f64, usize) {
    let send =
        vec![Op::Loop { count: rounds, body: 2 }, Op::Compute { cycles: SIM_GAP_NS }, Op::Send { chan: 0, bytes: 1 }];
    let recv = vec![Op::Loop { count: rounds, body: 1 }, Op::Recv { chan: 0 }];
    let hog = vec![Op::Compute { cycles: SIM_GAP_NS * (rounds as u64 + 10) }];
    let mut root = Vec::new();
    if busy {
        root.push(Op::Spawn { program: 3, params: mm(4) });
    }
    root.extend([Op::Spawn { program: 2, params: mm(3) }, Op::Spawn { program: 1, params: mm(2) }, Op::Exit]);
    let w = Workload {
        spec: "sendwake".into(),
        programs: vec![prog("root", root), prog("sender", send), prog("receiver", recv), prog("hog", hog)],
        channels: 1,
        root: 0,
        root_params: mm(1),
        metric: Metric::counting("messages/s", vec![true]),
        expected_messages: 2 * rounds as u64,
        expected_tasks: 3 + busy as u64,
        bound: Vec::new(),
        working_set: Vec::new(),
        buffers: Vec::new(),
    };
    let (_, trace) = schedlab_sim::simulate_traced(m, policy, &w, &SimConfig::default(), 4_000_000).expect("simulate");
    // Task ids in spawn order: root 0, then the root's children.
    let (r_id, s_id) = if busy { (2, 3) } else { (1, 2) };
    let mut last_cpu = [u32::MAX; 4];
    let (mut prev, mut gaps, mut cross) = (None, Vec::new(), 0);
    // Where the sender's time goes after the wake-up's stamp (which follows the send,
    // `chan_send_xcpu_ns` and `notify_xcpu_ns`): its first lock acquire, IPI and
    // lock release, on the sender's CPU, before the next wake-up.
    let (mut acq, mut ipi, mut rel) = (Vec::new(), Vec::new(), Vec::new());
    let mut open: Option<(u64, u32, [bool; 3])> = None;
    let (mut acq_d, mut rel_d) = (None, None);
    for (i, rec) in trace.records.iter().enumerate() {
        if let Some((at, _, seen)) = open.as_mut().filter(|o| o.1 == rec.cpu) {
            let d = (rec.ts_ns - *at) as f64;
            let (k, v) = match rec.ev {
                Event::LockAcquire { .. } => (0, &mut acq),
                Event::Ipi { .. } => (1, &mut ipi),
                Event::LockRelease { .. } => (2, &mut rel),
                _ => (3, &mut acq),
            };
            if k < 3 && !seen[k] {
                seen[k] = true;
                v.push(d);
            }
        }
        match rec.ev {
            Event::Switch { next: Some(t), .. } => last_cpu[t as usize] = rec.cpu,
            Event::Wakeup { task, waker: Some(wk), .. } if task == r_id && wk == s_id => {
                let other = last_cpu[r_id as usize] != rec.cpu;
                cross += other as usize;
                if let (true, Some(p)) = (other, prev) {
                    gaps.push((rec.ts_ns - p) as f64);
                }
                prev = other.then_some(rec.ts_ns);
                open = other.then_some((rec.ts_ns, rec.cpu, [false; 3]));
                // The policy's lock events inside the wake-up are recorded before the
                // wake-up itself (stamped at its start): take them from just before.
                if let Some((at, cpu, seen)) = open.as_mut() {
                    for r in trace.records[i.saturating_sub(8)..i].iter().filter(|r| r.cpu == *cpu && r.ts_ns >= *at) {
                        let d = (r.ts_ns - *at) as f64;
                        match r.ev {
                            Event::LockAcquire { .. } if !seen[0] => (seen[0], acq_d) = (true, Some(d)),
                            Event::LockRelease { .. } if !seen[2] => (seen[2], rel_d) = (true, Some(d)),
                            _ => {}
                        }
                    }
                    acq.extend(acq_d.take());
                    rel.extend(rel_d.take());
                }
            }
            _ => {}
        }
    }
    let cost = schedlab_sim::CostModel::new(m);
    let charge = median(gaps) - SIM_GAP_NS as f64 - 2.0 * cost.clock_read_ns as f64;
    let pre = cost.send_ns(1) + cost.chan_send_xcpu_ns + cost.notify_xcpu_ns;
    eprintln!(
        "  sim {name}{}: charge {charge:.0} = send+xcpu+notify {pre}, then from the wake-up: lock acquired +{:.0} ({} samples), IPI +{:.0} ({}), lock released +{:.0}",
        if busy { " busy" } else { "" },
        median(&acq),
        acq.len(),
        median(&ipi),
        ipi.len(),
        median(&rel)
    );
    (charge, cross)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(machine) = args.first() else {
        eprintln!("usage: sendwake MACHINE.toml [POLICIES (dss;mqs)] [ROUNDS]");
        std::process::exit(2);
    };
    // `calibrate`: the host machine measured now (quick), as `validate` does: the
    // runtime's figures below depend on where the vCPUs sit at the time (a line
    // transfer of 23 ns or of 125 ns on this VM), so compare like with like.
    let m = if machine == "calibrate" {
        let cal = schedlab_validate::calibrate(2, true).unwrap_or_else(|e| {
            eprintln!("sendwake: calibration: {e}");
            std::process::exit(2)
        });
        let cpu = cal.cross;
        println!(
            "calibrated now: line chain {:.0} ns, chan send xcpu {:.0}, recv xcpu {:.0}",
            cpu.line_chain_ns, cpu.chan_send_xcpu_ns, cpu.chan_recv_xcpu_ns
        );
        cal.machine()
    } else {
        Machine::load(machine).unwrap_or_else(|e| {
            eprintln!("sendwake: {machine}: {e}");
            std::process::exit(2)
        })
    };
    let policies: Vec<String> = args.get(1).map_or("dss;mqs", |s| s.as_str()).split(';').map(String::from).collect();
    let rounds: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let clock = clock_read();
    let c = &m.costs;
    println!(
        "machine {machine}: send {} chan_send_xcpu {} notify_xcpu {} wake_transfer {} ipi_send {} lock {} wakeup_entry {} (cycles/ns); clock read here {clock:.0} ns",
        c.kernel.send_cycles, c.host.chan_send_xcpu_ns, c.host.notify_xcpu_ns, c.host.wake_transfer_ns, c.hw.ipi_send_cycles, c.hw.lock_cycles, c.kernel.wakeup_entry_cycles
    );
    println!("policy | mode | real: median [p25 p75] and mean of the middle 90 %, ns (cross-CPU rounds) | sim charge ns (rounds it comes from)");
    let cost = schedlab_sim::CostModel::new(&m);
    for p in &policies {
        let spec = PolicySpec::parse(p).unwrap_or_else(|e| {
            eprintln!("sendwake: policy {p}: {e}");
            std::process::exit(2)
        });
        let n = rounds.min(20_000) as u32;
        for mode in [Mode::NoWake, Mode::WakeIdle, Mode::WakeBusy] {
            let (mut s, cross, recv_ns) = real(p, mode, rounds);
            if mode == Mode::NoWake {
                println!(
                    "{p:<6} | receive   | {:>6.1} (a queued message from the other CPU, with the preemption point) | {:>6} (recv + chan_recv_xcpu + clock read)",
                    tmean(&recv_ns, clock),
                    cost.recv_ns(1) + cost.chan_recv_xcpu_ns + cost.clock_read_ns
                );
            }
            s.sort_by(f64::total_cmp);
            let q = |f: f64| s.get(((s.len() as f64 - 1.0) * f) as usize).copied().unwrap_or(f64::NAN) - clock;

            let (sim, sim_cross) = match mode {
                // By construction (`engine/exec.rs`): the send and the cross-CPU lines.
                Mode::NoWake => ((cost.send_ns(1) + cost.chan_send_xcpu_ns) as f64, 0),
                Mode::WakeIdle => sim_charge(&m, p, &spec, n, false),
                Mode::WakeBusy => sim_charge(&m, p, &spec, n, true),
            };
            println!(
                "{p:<6} | {:<9} | {:>6.0} [{:>5.0} {:>5.0}] mean {:>6.1} ({cross:>5} of {rounds}) | {sim:>6.0} ({sim_cross} of {n})",
                mode.name(),
                q(0.5),
                q(0.25),
                q(0.75),
                tmean(&s, clock)
            );
        }
    }
}
