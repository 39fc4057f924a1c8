//! # schedlab-validate: the simulator checked against real runs
//!
//! The same workload definitions run on both engines: the simulator, on a machine
//! whose costs were measured on this host ([`calibrate`]), and the real runtime
//! (`schedlab-rt`) with the same policy code. [`validate`] prints their throughputs
//! side by side. Agreement is not forced anywhere: the host machine's costs are
//! micro-benchmarks, not fitted to these throughputs.

pub mod calibrate;
pub mod dist;
pub mod hostdelay;
pub mod interp;
pub mod summary;
pub mod timer;
pub mod xcpu;

pub use calibrate::{calibrate, Calibration};
pub use dist::{Dist, Mispriced};
pub use interp::{run_on_runtime, RealRun};
pub use summary::{summarize, Summary};

use schedlab_core::trace::{Trace, DEFAULT_CAP};
use schedlab_core::{PolicySource, PolicySpec};
use schedlab_sim::{simulate, simulate_traced, SimConfig};
use schedlab_workloads::parse_workload;
use serde::Serialize;

/// One policy × workload comparison.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Row {
    pub workload: String,
    pub policy: String,
    pub unit: String,
    /// Simulated throughput on the calibrated host machine (None for a runtime-native
    /// scheduler such as `fast`, which has no simulator model).
    pub sim: Option<f64>,
    /// Measured throughput of the real runtime, untraced.
    pub real: f64,
    /// `sim / real`.
    pub ratio: Option<f64>,
    pub sim_context_switches: Option<u64>,
    /// Context switches of the real run (a worker polling a different task than last).
    pub real_context_switches: u64,
    pub real_wall_s: f64,
    /// With distributions: the throughput of the second, traced, real run (the one
    /// `real_dist` comes from); its difference from `real` is tracing's cost plus
    /// run-to-run noise.
    pub real_traced: Option<f64>,
    /// What each engine's trace of the row shows (with distributions; None for a
    /// runtime-native scheduler, which records no trace).
    pub sim_dist: Option<Dist>,
    pub real_dist: Option<Dist>,
    /// The event class whose median time differs most between the two traces.
    pub mispriced: Option<Mispriced>,
    /// Percent of the workers' time (wall × workers) they spent runnable but kept off
    /// their CPUs by other threads of the host during the untraced / traced real run
    /// ([`hostdelay`]; None without procfs). The runtime's decisions change with it.
    pub real_host_wait_pct: Option<f64>,
    pub real_traced_host_wait_pct: Option<f64>,
}

/// Which engine a trace comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Sim,
    Real,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sim => "sim",
            Engine::Real => "real",
        }
    }
}

/// Where [`validate`] hands each row's traces: (engine, workload spec, policy spec, trace).
pub type TraceSink<'a> = &'a mut dyn FnMut(Engine, &str, &str, &Trace) -> Result<(), String>;

/// Run every workload under every policy on both engines (a runtime-native scheduler,
/// such as `fast`, on the runtime only).
///
/// With `distributions`, both engines also record a scheduling trace of each row (the
/// simulator up to its default cap, the runtime with the same total budget split over
/// its workers), [`dist::analyze`] reads both, and the traces go to `traces` if given.
/// The runtime then runs each row twice: untraced for the throughput compared with the
/// simulator's (`real`: the number the simulator predicts is that of the runtime as
/// users run it), then traced for the distributions (`real_traced` is that run's
/// throughput). The simulator's results do not depend on tracing.
pub fn validate(
    cal: &Calibration,
    policies: &[String],
    workloads: &[String],
    seed: u64,
    distributions: bool,
    mut traces: Option<TraceSink>,
) -> Result<Vec<Row>, String> {
    let machine = cal.machine();
    let mut rows = Vec::new();
    for ws in workloads {
        let w = parse_workload(ws).map_err(|e| e.to_string())?;
        for p in policies {
            let spec = PolicySpec::parse(p).map_err(|e| e.to_string())?;
            let native = spec.runtime_native();
            let (mut sim, mut sim_dist) = (None, None);
            if !native {
                let cfg = SimConfig { seed, ..SimConfig::default() };
                let err = |e| format!("sim {p} {ws}: {e}");
                if distributions {
                    let (r, t) = simulate_traced(&machine, &spec, &w, &cfg, DEFAULT_CAP).map_err(err)?;
                    sim_dist = Some(dist::analyze(&t));
                    if let Some(sink) = traces.as_mut() {
                        sink(Engine::Sim, ws, p, &t)?;
                    }
                    sim = Some(r);
                } else {
                    sim = Some(simulate(&machine, &spec, &w, &cfg).map_err(err)?);
                }
            }
            let (real, stats, _, wait) =
                real_run(cal, &spec, &w, seed, false).map_err(|e| format!("runtime {p} {ws}: {e}"))?;
            let (mut real_traced, mut real_dist, mut traced_wait) = (None, None, None);
            if distributions && !native {
                let (r, _, t, tw) =
                    real_run(cal, &spec, &w, seed, true).map_err(|e| format!("runtime {p} {ws} (traced): {e}"))?;
                real_traced = Some(r.throughput);
                traced_wait = tw;
                if let Some(t) = t {
                    real_dist = Some(dist::analyze(&t));
                    if let Some(sink) = traces.as_mut() {
                        sink(Engine::Real, ws, p, &t)?;
                    }
                }
            }
            let mispriced = match (&sim_dist, &real_dist) {
                (Some(s), Some(r)) => dist::most_different(s, r),
                _ => None,
            };
            rows.push(Row {
                workload: ws.clone(),
                policy: p.clone(),
                unit: w.metric.unit.clone(),
                sim: sim.as_ref().map(|r| r.throughput),
                real: real.throughput,
                ratio: sim.as_ref().map(|r| r.throughput / real.throughput.max(1e-9)),
                sim_context_switches: sim.as_ref().map(|r| r.context_switches),
                real_context_switches: stats.switches,
                real_wall_s: real.wall_s,
                real_traced,
                sim_dist,
                real_dist,
                mispriced,
                real_host_wait_pct: wait,
                real_traced_host_wait_pct: traced_wait,
            });
        }
    }
    Ok(rows)
}

/// The runtime [`validate`] measures, before its policy is chosen: the calibrated
/// worker count, pinned, and the timer tick at the host machine's HZ. Ticks age 2.4's
/// counters, pace the balancers (PMQS's `period` is in ticks) and end `fair`'s slices;
/// with the runtime at its default 1000 and the machine at 100 (until session 22) the
/// two engines made different decisions on the same workload: under PMQS, hackbench
/// had 101 switches simulated against ~20,000 real (docs/traces.md, "Decisions").
pub fn runtime_builder(cal: &Calibration) -> schedlab_rt::Builder {
    schedlab_rt::Builder::new().workers(cal.workers).pin(true).hz(cal.machine().hz)
}

/// One run of `w` on a fresh runtime, traced or not, checked for lost messages; with
/// the percent of the run its workers waited for their CPUs ([`hostdelay`]).
fn real_run(
    cal: &Calibration,
    spec: &PolicySpec,
    w: &schedlab_workloads::Workload,
    seed: u64,
    traced: bool,
) -> Result<(RealRun, schedlab_rt::Stats, Option<Trace>, Option<f64>), String> {
    let mut b = runtime_builder(cal).policy_source(spec.clone());
    if traced {
        b = b.trace(DEFAULT_CAP / cal.workers.max(1));
    }
    let rt = b.build()?;
    let before = hostdelay::worker_run_delays();
    let real = run_on_runtime(&rt, w, 1.0, seed)?;
    let wait = match (before, hostdelay::worker_run_delays()) {
        (Some(b), Some(a)) if !a.is_empty() => Some(hostdelay::delay_pct(&b, &a, real.wall_s, cal.workers)),
        _ => None,
    };
    let (stats, trace) = rt.shutdown_traced();
    if real.sent != w.expected_messages || real.received != w.expected_messages {
        return Err(format!("{} sent / {} received, expected {}", real.sent, real.received, w.expected_messages));
    }
    Ok((real, stats, trace, wait))
}

/// What `schedlab validate --format json` prints: a struct, so that the keys come in
/// this order on every run.
#[derive(Serialize)]
pub struct Report<'a> {
    /// The simulator machine the calibration gives (`host-N`).
    pub machine: schedlab_sim::Machine,
    pub calibration: &'a Calibration,
    pub rows: &'a [Row],
    pub summary: Summary,
}

impl<'a> Report<'a> {
    pub fn new(cal: &'a Calibration, rows: &'a [Row]) -> Report<'a> {
        Report { machine: cal.machine(), calibration: cal, rows, summary: summarize(rows) }
    }
}

/// A readable table of [`validate`]'s rows and the calibration they used.
pub fn render(cal: &Calibration, rows: &[Row]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "host machine (measured here, ns): task switch {:.0}, fast-runtime wake {:.0} (not used), send {:.0}, recv {:.0}, spawn {:.0} (+{:.0} onto a never-used task block; fast runtime {:.0}, not used),", cal.dispatch_ns, cal.wake_ns, cal.send_ns, cal.recv_ns, cal.spawn_ns, cal.task_block_fresh_ns, cal.fast_spawn_ns);
    let _ = writeln!(s, "  cache-line transfer {:.0} (atomic round trip / 2), memory {:.0}, last-level cache {:.0} (L2 {} KiB {}-way), lock {:.0}, DSS schedule {:.0} + {:.1}/task, wake-up {:.0}, tick {:.0}, fair tree op {:.0}", cal.atomic_rtt_ns / 2.0, cal.mem_latency_ns, cal.llc_latency_ns, cal.l2.0, cal.l2.1, cal.lock_ns, cal.schedule_base_ns, cal.schedule_per_task_ns, cal.wakeup_ns, cal.tick_ns, cal.tree_op_ns);
    let _ = writeln!(
        s,
        "  parked-worker wake-up {:.0} (unpark to running; after an idle spin of {:.0})",
        cal.park_wake_ns, cal.idle_spin_ns
    );
    let x = &cal.cross;
    let _ = writeln!(
        s,
        "  cross-CPU (crates/validate/src/xcpu.rs): IPI send {:.0}, IPI to a spinning worker {:.0} from the store ({:.0} after the send), lock hand-off {:.0}, header CAS {:.0},",
        x.ipi_send_ns, x.ipi_latency_ns, x.ipi_after_send_ns, x.lock_handoff_ns, x.rmw_transfer_ns
    );
    let _ = writeln!(
        s,
        "  blocking receive +{:.0} (from the other CPU, measured, not charged: registration +{:.0}, notification +{:.0}), channel last touched on the other CPU: send +{:.0} (+{:.0} after its send), receive +{:.0} (hot {:.0} / {:.0}), clock read {:.0}",
        x.recv_block_ns,
        x.recv_register_xcpu_ns,
        x.notify_xcpu_ns,
        x.chan_send_xcpu_ns,
        x.chan_send_after_send_ns,
        x.chan_recv_xcpu_ns,
        x.chan_send_hot_ns,
        x.chan_recv_hot_ns,
        x.clock_read_ns
    );
    let _ = writeln!(
        s,
        "  other processes took {:.1} % of the CPUs during the calibration (not in the model)",
        cal.stolen_pct
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<30} {:<30} {:>11} {:>11} {:>9} {:>10} {:>10} {:>9}  unit",
        "workload", "policy", "simulated", "real", "sim/real", "switches:", "sim/real", "host wait"
    );
    for r in rows {
        let sim = r.sim.map_or("—".to_string(), |v| format!("{v:.0}"));
        let ratio = r.ratio.map_or("—".to_string(), |v| format!("{v:.2}×"));
        let sw = r.sim_context_switches.map_or("—".to_string(), |v| v.to_string());
        let wait = r.real_host_wait_pct.map_or("—".to_string(), |v| format!("{v:.1} %"));
        let _ = writeln!(
            s,
            "{:<30} {:<30} {:>11} {:>11.0} {:>9} {:>10} {:>10} {:>9}  {}",
            r.workload, r.policy, sim, r.real, ratio, sw, r.real_context_switches, wait, r.unit
        );
    }
    if rows.iter().any(|r| r.sim_dist.is_some()) {
        let _ = writeln!(s);
        s.push_str(&summary::render_distributions(rows));
    }
    let _ = writeln!(s);
    s.push_str(&summary::render_summary(&summarize(rows)));
    s
}
