//! # schedlab-validate: the simulator checked against real runs
//!
//! The same workload definitions run on both engines: the simulator, on a machine
//! whose costs were measured on this host ([`calibrate`]), and the real runtime
//! (`schedlab-rt`) with the same policy code. [`validate`] prints their throughputs
//! side by side. Agreement is not forced anywhere: the host machine's costs are
//! micro-benchmarks, not fitted to these throughputs.

pub mod calibrate;
pub mod interp;
pub mod timer;

pub use calibrate::{calibrate, Calibration};
pub use interp::{run_on_runtime, RealRun};

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
    /// Measured throughput of the real runtime.
    pub real: f64,
    /// `sim / real`.
    pub ratio: Option<f64>,
    pub sim_context_switches: Option<u64>,
    /// Context switches of the real run (a worker polling a different task than last).
    pub real_context_switches: u64,
    pub real_wall_s: f64,
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
pub type TraceSink<'a> = &'a mut dyn FnMut(Engine, &str, &str, Trace) -> Result<(), String>;

/// Run every workload under every policy on both engines (a runtime-native scheduler,
/// such as `fast`, on the runtime only). With `traces`, both engines also record a
/// scheduling trace of the run, handed to the sink after each run: the simulator up
/// to its default cap, the runtime with the same total budget split over its workers
/// (a runtime-native scheduler records none). The runtime's throughput is then
/// measured with tracing on (`docs/traces.md` has its cost).
pub fn validate(
    cal: &Calibration,
    policies: &[String],
    workloads: &[String],
    seed: u64,
    mut traces: Option<TraceSink>,
) -> Result<Vec<Row>, String> {
    let machine = cal.machine();
    let mut rows = Vec::new();
    for ws in workloads {
        let w = parse_workload(ws).map_err(|e| e.to_string())?;
        for p in policies {
            let spec = PolicySpec::parse(p).map_err(|e| e.to_string())?;
            let native = spec.runtime_native();
            let sim = if native {
                None
            } else {
                let cfg = SimConfig { seed, ..SimConfig::default() };
                let err = |e| format!("sim {p} {ws}: {e}");
                match traces.as_mut() {
                    None => Some(simulate(&machine, &spec, &w, &cfg).map_err(err)?),
                    Some(sink) => {
                        let (r, t) = simulate_traced(&machine, &spec, &w, &cfg, DEFAULT_CAP).map_err(err)?;
                        sink(Engine::Sim, ws, p, t)?;
                        Some(r)
                    }
                }
            };
            let mut b = schedlab_rt::Builder::new().workers(cal.workers).policy_source(spec).pin(true);
            if traces.is_some() && !native {
                b = b.trace(DEFAULT_CAP / cal.workers.max(1));
            }
            let rt = b.build()?;
            let real = run_on_runtime(&rt, &w, 1.0, seed)?;
            let (stats, trace) = rt.shutdown_traced();
            let real_switches = stats.switches;
            if let (Some(sink), Some(t)) = (traces.as_mut(), trace) {
                sink(Engine::Real, ws, p, t)?;
            }
            if real.sent != w.expected_messages || real.received != w.expected_messages {
                return Err(format!(
                    "runtime {p} {ws}: {} sent / {} received, expected {}",
                    real.sent, real.received, w.expected_messages
                ));
            }
            rows.push(Row {
                workload: ws.clone(),
                policy: p.clone(),
                unit: w.metric.unit.clone(),
                sim: sim.as_ref().map(|r| r.throughput),
                real: real.throughput,
                ratio: sim.as_ref().map(|r| r.throughput / real.throughput.max(1e-9)),
                sim_context_switches: sim.as_ref().map(|r| r.context_switches),
                real_context_switches: real_switches,
                real_wall_s: real.wall_s,
            });
        }
    }
    Ok(rows)
}

/// A readable table of [`validate`]'s rows and the calibration they used.
pub fn render(cal: &Calibration, rows: &[Row]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "host machine (measured here, ns): task switch {:.0}, cross-worker wake {:.0}, send {:.0}, recv {:.0}, spawn {:.0},", cal.dispatch_ns, cal.wake_ns, cal.send_ns, cal.recv_ns, cal.spawn_ns);
    let _ = writeln!(s, "  cache-line transfer {:.0} (atomic round trip / 2), memory {:.0}, lock {:.0}, DSS schedule {:.0} + {:.1}/task, wake-up {:.0}, tick {:.0}", cal.atomic_rtt_ns / 2.0, cal.mem_latency_ns, cal.lock_ns, cal.schedule_base_ns, cal.schedule_per_task_ns, cal.wakeup_ns, cal.tick_ns);
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<30} {:<30} {:>11} {:>11} {:>9} {:>10} {:>10}  unit",
        "workload", "policy", "simulated", "real", "sim/real", "switches:", "sim/real"
    );
    for r in rows {
        let sim = r.sim.map_or("—".to_string(), |v| format!("{v:.0}"));
        let ratio = r.ratio.map_or("—".to_string(), |v| format!("{v:.2}×"));
        let sw = r.sim_context_switches.map_or("—".to_string(), |v| v.to_string());
        let _ = writeln!(
            s,
            "{:<30} {:<30} {:>11} {:>11.0} {:>9} {:>10} {:>10}  {}",
            r.workload, r.policy, sim, r.real, ratio, sw, r.real_context_switches, r.unit
        );
    }
    s
}
