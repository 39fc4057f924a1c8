//! # schedlab-validate: the simulator checked against real runs
//!
//! The same workload definitions run on both engines: the simulator
//! (`schedlab_sim::simulate`), on a machine whose costs were measured on this host
//! ([`calibrate`]), and the real runtime with the same policy code
//! (`schedlab_rtrun::run_on_runtime`). [`validate`] prints their throughputs
//! side by side. Agreement is not forced anywhere: the host machine's costs are
//! micro-benchmarks, not fitted to these throughputs.

pub mod backoff;
pub mod calibrate;
pub mod counting;
pub mod dist;
pub mod hostdelay;
pub mod linexfer;
pub mod policycost;
pub mod spread;
pub mod summary;
pub mod tickphase;
pub mod timing;
pub mod workerstart;
pub mod xcpu;

pub use calibrate::{calibrate, Calibration};
pub use dist::{Dist, Mispriced};
pub use summary::{summarize, Summary};
pub use timing::{median, pin};

use schedlab_core::trace::{Trace, DEFAULT_CAP};
use schedlab_core::{PolicySource, PolicySpec};
use schedlab_rtrun::{run_on_runtime, RealRun};
use schedlab_sim::{simulate, simulate_traced, SimConfig};
use schedlab_workloads::parse_workload;
use serde::Serialize;

/// Why a validation did not finish: a spec that does not parse, a row the simulator or
/// the runtime could not run (a calibration included), a trace the sink could not
/// write, or an output of the caller's (the machine file) that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("{0}")]
    Spec(String),
    #[error("{0}")]
    Sim(String),
    #[error("{0}")]
    Runtime(String),
    #[error("{0}")]
    Trace(String),
    #[error("{0}")]
    Output(String),
    #[error("validate: no seeds to run")]
    NoSeeds,
}

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
    /// Every run's simulated throughput, one per seed ([`validate_repeated`]; `sim` is
    /// their median). Empty for a runtime-native scheduler.
    pub sim_runs: Vec<f64>,
    /// Every untraced real run's throughput, one per seed (`real` is their median):
    /// the runtime's own run-to-run spread, against which a ranking is judged
    /// ([`summary`]).
    pub real_runs: Vec<f64>,
    /// `sim / real`.
    pub ratio: Option<f64>,
    pub sim_context_switches: Option<u64>,
    /// Context switches of the real run (a worker polling a different task than last).
    pub real_context_switches: u64,
    /// Wall time of an untraced real run (the mean over the runs).
    pub real_wall_s: f64,
    /// The atomic round trip between the workers' CPUs, probed just before each
    /// untraced real run (ns): where the hypervisor had put the vCPUs for that run.
    pub real_rtt_ns: Vec<f64>,
    /// Runs whose probe differs from their calibration's round trip by more than 2×
    /// ([`moved`]): the vCPUs moved between the calibration and the row, so that run's
    /// simulation priced a placement its real run did not have.
    pub placement_moved: usize,
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
) -> Result<Vec<Row>, ValidateError> {
    let machine = cal.machine();
    let mut rows = Vec::new();
    for ws in workloads {
        let w = parse_workload(ws).map_err(|e| ValidateError::Spec(e.to_string()))?;
        for p in policies {
            let spec = PolicySpec::parse(p).map_err(|e| ValidateError::Spec(e.to_string()))?;
            let native = spec.runtime_native();
            let (mut sim, mut sim_dist) = (None, None);
            if !native {
                let cfg = SimConfig { seed, ..SimConfig::default() };
                let err = |e| ValidateError::Sim(format!("sim {p} {ws}: {e}"));
                if distributions {
                    let (r, t) = simulate_traced(&machine, &spec, &w, &cfg, DEFAULT_CAP).map_err(err)?;
                    sim_dist = Some(dist::analyze(&t));
                    if let Some(sink) = traces.as_mut() {
                        sink(Engine::Sim, ws, p, &t).map_err(ValidateError::Trace)?;
                    }
                    sim = Some(r);
                } else {
                    sim = Some(simulate(&machine, &spec, &w, &cfg).map_err(err)?);
                }
            }
            let probe = calibrate::placement_probe();
            let (real, stats, _, wait) = real_run(cal, &spec, &w, seed, false)
                .map_err(|e| ValidateError::Runtime(format!("runtime {p} {ws}: {e}")))?;
            let (mut real_traced, mut real_dist, mut traced_wait) = (None, None, None);
            if distributions && !native {
                let (r, _, t, tw) = real_run(cal, &spec, &w, seed, true)
                    .map_err(|e| ValidateError::Runtime(format!("runtime {p} {ws} (traced): {e}")))?;
                real_traced = Some(r.throughput);
                traced_wait = tw;
                if let Some(t) = t {
                    real_dist = Some(dist::analyze(&t));
                    if let Some(sink) = traces.as_mut() {
                        sink(Engine::Real, ws, p, &t).map_err(ValidateError::Trace)?;
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
                sim_runs: sim.as_ref().map(|r| r.throughput).into_iter().collect(),
                real_runs: vec![real.throughput],
                real_rtt_ns: vec![probe],
                placement_moved: usize::from(moved(cal.atomic_rtt_ns, probe)),
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

/// [`validate`] once per seed, each run on a calibration of its own taken just
/// before it, and each row's throughputs the medians over the runs.
///
/// One real run of a scheduler is one sample: several rows are bimodal on this host
/// (a first pull that decides between batching and hand-off, docs/traces.md), so a
/// prediction is compared with the median of `seeds.len()` runs on each engine, the
/// simulator with the same seeds (its workloads draw from them). All rows of one seed
/// run before the next seed's, so a slow spell of the host is spread over every policy
/// rather than landing on one. A fresh calibration per run, because the hypervisor
/// moves this VM's two vCPUs between one core's hyperthreads and two cores within
/// minutes (a cache-line transfer of ~23 ns or ~200 ns): each run's simulation then
/// prices the placement its real rows ran on, as far as the calibration saw it.
/// `calibrate(i)` gives run `i`'s. The first run also records the distributions (and
/// the traces); context switches are those of the run nearest each engine's median.
pub fn validate_repeated(
    calibrate: &mut dyn FnMut(usize) -> Result<Calibration, ValidateError>,
    policies: &[String],
    workloads: &[String],
    seeds: &[u64],
    distributions: bool,
    mut traces: Option<TraceSink>,
) -> Result<(Vec<Calibration>, Vec<Row>), ValidateError> {
    let (mut cals, mut runs) = (Vec::new(), Vec::<Vec<Row>>::new());
    for (i, &seed) in seeds.iter().enumerate() {
        let cal = calibrate(i)?;
        let first = i == 0;
        runs.push(validate(
            &cal,
            policies,
            workloads,
            seed,
            first && distributions,
            if first { traces.take() } else { None },
        )?);
        cals.push(cal);
    }
    let mut rows = runs.first().cloned().ok_or(ValidateError::NoSeeds)?;
    for (i, row) in rows.iter_mut().enumerate() {
        let real: Vec<(f64, u64)> = runs.iter().map(|r| (r[i].real, r[i].real_context_switches)).collect();
        let sim: Vec<(f64, u64)> = runs.iter().filter_map(|r| Some((r[i].sim?, r[i].sim_context_switches?))).collect();
        row.real_runs = real.iter().map(|r| r.0).collect();
        row.sim_runs = sim.iter().map(|r| r.0).collect();
        row.real_rtt_ns = runs.iter().flat_map(|r| r[i].real_rtt_ns.iter().copied()).collect();
        row.real = median(&row.real_runs);
        row.real_context_switches = nearest(&real, row.real);
        if !sim.is_empty() {
            let m = median(&row.sim_runs);
            row.sim = Some(m);
            row.sim_context_switches = Some(nearest(&sim, m));
            row.ratio = Some(m / row.real.max(1e-9));
        }
        row.real_wall_s = runs.iter().map(|r| r[i].real_wall_s).sum::<f64>() / runs.len() as f64;
        row.placement_moved =
            runs.iter().zip(&cals).filter(|(r, c)| r[i].real_rtt_ns.iter().any(|&p| moved(c.atomic_rtt_ns, p))).count();
    }
    Ok((cals, rows))
}

/// Whether two atomic round trips between the workers' CPUs differ by more than 2×:
/// the vCPUs were placed differently (one core's hyperthreads ~45 ns, two cores ~400
/// ns on this VM), so a calibration taken on one placement does not price the other.
pub fn moved(calibrated_ns: f64, probe_ns: f64) -> bool {
    let (lo, hi) = if calibrated_ns < probe_ns { (calibrated_ns, probe_ns) } else { (probe_ns, calibrated_ns) };
    hi > 2.0 * lo.max(1.0)
}

/// The smallest and largest of `v` (∞, −∞ when empty).
pub fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// The second field of the run whose first is nearest `m` (the earlier run on a tie).
fn nearest(runs: &[(f64, u64)], m: f64) -> u64 {
    runs.iter().min_by(|a, b| (a.0 - m).abs().total_cmp(&(b.0 - m).abs())).map_or(0, |r| r.1)
}

/// The runtime [`validate`] measures, before its policy is chosen: the calibrated
/// worker count, pinned, and the timer tick at the host machine's HZ. Ticks age 2.4's
/// counters, pace the balancers (PMQS's `period` is in ticks) and end `fair`'s slices;
/// with the runtime at its default 1000 and the machine at 100 the two engines would
/// make different decisions on the same workload: under PMQS, hackbench switches about
/// a hundred times simulated against ~20,000 real (docs/validate.md, "One tick rate").
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
    let rt = b.build().map_err(|e| e.to_string())?;
    let before = hostdelay::worker_run_delays();
    let real = run_on_runtime(&rt, w, 1.0, seed).map_err(|e| e.to_string())?;
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
    /// Every run's calibration (the first is `calibration`, whose machine is `machine`).
    pub calibrations: &'a [Calibration],
    pub rows: &'a [Row],
    pub summary: Summary,
}

impl<'a> Report<'a> {
    /// The report of runs on `cals` (one per run; at least one).
    pub fn new(cals: &'a [Calibration], rows: &'a [Row]) -> Report<'a> {
        Report { machine: cals[0].machine(), calibration: &cals[0], calibrations: cals, rows, summary: summarize(rows) }
    }
}

/// A readable table of [`validate`]'s rows and the calibrations they used (the
/// first in full; at least one).
pub fn render(cals: &[Calibration], rows: &[Row]) -> String {
    use std::fmt::Write;
    let cal = &cals[0];
    let mut s = String::new();
    let _ = writeln!(s, "host machine (measured here, ns): task switch {:.0}, fast-runtime wake {:.0} (not used), send {:.0}, recv {:.0}, spawn {:.0} (+{:.0} onto a never-used task block; fast runtime {:.0}, not used),", cal.dispatch_ns, cal.wake_ns, cal.send_ns, cal.recv_ns, cal.spawn_ns, cal.task_block_fresh_ns, cal.fast_spawn_ns);
    let _ = writeln!(s, "  cache-line transfer {:.0} (atomic round trip / 2), memory {:.0}, last-level cache {:.0} (L2 {} KiB {}-way), lock {:.0}, DSS schedule {:.0} + {:.1}/task, wake-up {:.0}, tick {:.0}, fair tree op {:.0}", cal.atomic_rtt_ns / 2.0, cal.mem_latency_ns, cal.llc_latency_ns, cal.l2.0, cal.l2.1, cal.lock_ns, cal.dss.schedule_base_ns, cal.dss.schedule_per_task_ns, cal.dss.wakeup_ns, cal.dss.tick_ns, cal.tree_op_ns);
    let _ = writeln!(
        s,
        "  parked-worker wake-up {:.0} (unpark to running; after an idle spin of {:.0}); contended lock's waiter ({:?}): pause {:.1}, sched_yield {:.0}, {} spin steps (2^k pauses), {} yields, then {}",
        cal.park_wake_ns, cal.idle_spin_ns, schedlab_rt::POLICY_LOCK_WAITER, cal.lock_backoff.pause_ns, cal.lock_backoff.yield_ns, backoff::runtime_waiter().spin_steps, backoff::runtime_waiter().yields,
        if backoff::runtime_waiter().parks { "parks" } else { "polls on" }
    );
    let m = cal.machine();
    let sp = &cal.spreads;
    let _ = writeln!(
        s,
        "  price jitter {} % (one event's σ over its median, from batches of {}, clock step {:.0} ns: {})",
        m.costs.host.cost_jitter_pct,
        spread::K,
        sp.step_ns,
        sp.ops
            .iter()
            .map(|o| format!("{} {:.0} ns {:.0} %", o.name, o.median_ns, o.cv * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let tp = &cal.tick_phases;
    let _ = writeln!(
        s,
        "  timer ticks start with the run (tick_phase boot): first tick {:.1}-{:.1} us after the root's first run on its CPU, {:.1}-{:.1} on the others (p10-p90 of {} fresh runtimes; gap median {:.1} us), drawn per seed; the root first runs at {:.1}-{:.1} us on the runtime's clock; thread starts {} ns apart",
        tp.first_ns.0 / 1e3,
        tp.first_ns.1 / 1e3,
        tp.other_ns.0 / 1e3,
        tp.other_ns.1 / 1e3,
        tp.rounds,
        tp.gap_median_ns / 1e3,
        tp.clock_ns.0 / 1e3,
        tp.clock_ns.1 / 1e3,
        m.costs.host.tick_stagger_ns
    );
    let _ = writeln!(
        s,
        "  DSS as charged: schedule() entry {}, wake-up entry {}, goodness {} (the calls measured less their lock, goodness calls and L2 hits, which are charged apart)",
        m.costs.kernel.schedule_entry_cycles, m.costs.kernel.wakeup_entry_cycles, m.costs.kernel.goodness_cycles
    );
    let x = &cal.cross;
    let _ = writeln!(
        s,
        "  cross-CPU (crates/validate/src/xcpu.rs): IPI send {:.0}, IPI to a spinning worker {:.0} from the store ({:.0} after the send), lock hand-off {:.0}, header CAS {:.0},",
        x.ipi_send_ns, x.ipi_latency_ns, x.ipi_after_send_ns, x.lock_handoff_ns, x.rmw_transfer_ns
    );
    let _ = writeln!(
        s,
        "  blocking receive +{:.0} (from the other CPU: registration +{:.0}, notification +{:.0}), channel last touched on the other CPU: send +{:.0} (+{:.0} after its send), receive +{:.0} (hot {:.0} / {:.0}), clock read {:.0}",
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
        "  16 lines the other CPU wrote: {:.1} ns a line as a chain, {:.1} as independent loads: misses overlapped (mlp) {}",
        x.line_chain_ns,
        x.line_independent_ns,
        x.mlp()
    );
    let _ = writeln!(
        s,
        "  the same chain with each line written: {:.1} ns a line: store buffer {} (0: each write miss charged where it is made; docs/cost-model.md)",
        x.line_chain_write_ns,
        x.store_buffer()
    );
    let _ = writeln!(
        s,
        "  other processes took {:.1} % of the CPUs during the calibration (not in the model)",
        cal.stolen_pct
    );
    if cals.len() > 1 {
        let each = |f: &dyn Fn(&Calibration) -> f64| {
            cals.iter().map(|c| format!("{:.0}", f(c))).collect::<Vec<_>>().join(" / ")
        };
        let _ = writeln!(
            s,
            "  each run's own calibration: cache-line transfer {} ns, other processes {} % (the figures above are run 1's)",
            each(&|c| c.atomic_rtt_ns / 2.0),
            each(&|c| c.stolen_pct)
        );
    }
    let _ = writeln!(s);
    let n = rows.iter().map(|r| r.real_runs.len()).max().unwrap_or(1);
    if n > 1 {
        let _ = writeln!(s, "throughputs and switches: the median of {n} runs per engine (seeds 1..={n}); spread = (max − min) / median");
    }
    if rows.iter().any(|r| r.placement_moved > 0) {
        let _ = writeln!(s, "†k: in k runs the vCPUs' placement moved between the calibration and the row (an atomic round trip probed before the real run differs from the calibration's by over 2×)");
    }
    let _ = writeln!(
        s,
        "{:<30} {:<30} {:>11} {:>11} {:>9} {:>10} {:>10} {:>9} {:>15}  unit",
        "workload", "policy", "simulated", "real", "sim/real", "switches:", "sim/real", "host wait", "spread sim|real"
    );
    // (max − min) / median of a row's runs: how far one run could have landed.
    let spread = |v: &[f64]| {
        let (lo, hi) = min_max(v);
        if v.len() < 2 {
            "—".to_string()
        } else {
            format!("{:.0} %", 100.0 * (hi - lo) / median(v).max(1e-9))
        }
    };
    for r in rows {
        let sim = r.sim.map_or("—".to_string(), |v| format!("{v:.0}"));
        let moved = if r.placement_moved > 0 { format!("†{}", r.placement_moved) } else { String::new() };
        let ratio = r.ratio.map_or("—".to_string(), |v| format!("{v:.2}×{moved}"));
        let sw = r.sim_context_switches.map_or("—".to_string(), |v| v.to_string());
        let wait = r.real_host_wait_pct.map_or("—".to_string(), |v| format!("{v:.1} %"));
        let _ = writeln!(
            s,
            "{:<30} {:<30} {:>11} {:>11.0} {:>9} {:>10} {:>10} {:>9} {:>15}  {}",
            r.workload,
            r.policy,
            sim,
            r.real,
            ratio,
            sw,
            r.real_context_switches,
            wait,
            format!("{} | {}", spread(&r.sim_runs), spread(&r.real_runs)),
            r.unit
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
