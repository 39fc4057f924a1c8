//! # schedlab-lab: experiment sweeps
//!
//! An experiment file names machines, policies, workloads and seeds; [`run_sweep`]
//! runs the whole matrix in parallel (rayon) and [`write_outputs`] writes
//! `results.json` (every report minus wall-clock fields), `results.csv` (one row per
//! run), `table.md` (percentage differences from the baseline policy), `chart.svg`
//! and `timing.json` (the only wall-clock output). Results are collected by matrix
//! position, so every deterministic output is identical whatever the thread count.

pub mod charts;
pub mod experiment;
pub mod journal;
pub mod plot;
pub mod reproduce;
pub mod share;
pub mod table;

pub use experiment::{metric_value, Experiment, Plan, Quick, RunKey, WALL_FIELDS};
pub use share::{error_part, Share};
pub use table::{pct_diff, PctCell, Table};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use schedlab_sim::{simulate, Report, SimConfig, SimError};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What went wrong: a bad experiment (exit code 2), a failed run or output (1).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LabError {
    /// The experiment file or a spec in it is wrong: nothing ran.
    #[error("{0}")]
    Config(String),
    /// A run failed.
    #[error("{0}")]
    Run(String),
    /// An output could not be written.
    #[error("{0}")]
    Io(String),
    /// A chart could not be drawn (the plotting library's message).
    #[error("{0}")]
    Plot(String),
}

impl LabError {
    pub fn message(&self) -> &str {
        match self {
            LabError::Config(s) | LabError::Run(s) | LabError::Io(s) | LabError::Plot(s) => s,
        }
    }
    /// Process exit code: 2 for a bad experiment or spec, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            LabError::Config(_) => 2,
            _ => 1,
        }
    }
}

/// How to run a sweep.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// Worker threads; 0 = all cores.
    pub threads: usize,
    /// Show a progress bar on stderr (only drawn when stderr is a terminal).
    pub progress: bool,
    /// Record every finished run in this directory as it completes ([`journal`]).
    pub journal: Option<PathBuf>,
    /// With a journal: keep the runs an earlier, interrupted sweep of the same matrix
    /// finished, and run only the others.
    pub resume: bool,
    /// Set (e.g. by Ctrl-C) to stop starting runs; the runs under way finish and are
    /// journalled, and the sweep returns [`Sweep::interrupted`].
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Run only this process's share of the matrix (one rank of an MPI job, [`share`]);
    /// the other runs stay `None` until [`Sweep::merge`] brings them in.
    pub share: Option<Share>,
    /// Draw this sweep's bar inside a caller's multi-bar display (`schedlab reproduce`:
    /// one bar per experiment under an overall bar) instead of on its own.
    pub multi: Option<MultiProgress>,
    /// A further bar advanced once per finished run (the overall bar of `reproduce`).
    pub overall: Option<ProgressBar>,
}

/// One finished run.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub key: RunKey,
    pub report: Report,
}

/// A run that failed, and why.
#[derive(Clone, Debug)]
pub struct Failure {
    pub key: RunKey,
    pub error: String,
}

/// A finished sweep.
pub struct Sweep {
    pub plan: Plan,
    /// In matrix order ([`Plan::runs`]); `None` for a run that failed.
    pub runs: Vec<Option<RunResult>>,
    /// The failed runs, in matrix order (their cells are missing from the tables).
    pub failures: Vec<Failure>,
    /// Runs taken from the journal of an earlier sweep (`--resume`).
    pub resumed: usize,
    /// Cancelled before every run had started: some runs are neither finished nor failed.
    pub interrupted: bool,
    pub wall_s: f64,
    pub threads: usize,
}

/// Run every cell of the plan's matrix. A run that fails does not stop the others: it
/// is listed in [`Sweep::failures`].
pub fn run_sweep(plan: Plan, opts: &SweepOptions) -> Result<Sweep, LabError> {
    let keys = plan.runs();
    let journal = match &opts.journal {
        Some(dir) => Some(journal::Journal::open(dir, &plan, opts.resume)?),
        None => None,
    };
    let mut runs: Vec<Option<RunResult>> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| journal.as_ref().and_then(|j| j.load(&plan, i, k)).map(|report| RunResult { key: *k, report }))
        .collect();
    let resumed = runs.iter().filter(|r| r.is_some()).count();
    let mine = |i: usize| opts.share.is_none_or(|s| s.owns(i));
    let todo: Vec<usize> = (0..keys.len()).filter(|&i| runs[i].is_none() && mine(i)).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| LabError::Run(format!("thread pool: {e}")))?;
    let threads = pool.current_num_threads();
    let pb = if opts.progress && std::io::stderr().is_terminal() {
        match &opts.multi {
            Some(m) => m.add(ProgressBar::new(todo.len() as u64)),
            None => ProgressBar::with_draw_target(Some(todo.len() as u64), ProgressDrawTarget::stderr()),
        }
    } else {
        ProgressBar::hidden()
    };
    pb.set_style(
        ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} runs, {elapsed} ({eta} left) {msg}")
            .expect("progress template")
            .progress_chars("=> "),
    );
    pb.set_prefix(plan.name.clone());
    let start = Instant::now();
    let cancelled = || opts.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed));
    // Without a terminal, a plain line at every quarter of the runs.
    let plain = opts.progress && !std::io::stderr().is_terminal();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<(usize, Option<Result<Report, String>>)> = pool.install(|| {
        todo.par_iter()
            .map(|&i| {
                if cancelled() {
                    return (i, None);
                }
                let k = &keys[i];
                let cfg =
                    SimConfig { seed: plan.seeds[k.seed], max_virtual_ns: plan.max_virtual_ns, ..SimConfig::default() };
                let r =
                    simulate(&plan.machines[k.machine], &plan.policies[k.policy], &plan.workloads[k.workload], &cfg)
                        .map_err(|e: SimError| e.to_string())
                        .and_then(|report| match &journal {
                            Some(j) => j.record(&plan, i, k, &report).map(|()| report).map_err(|e| e.to_string()),
                            None => Ok(report),
                        });
                pb.inc(1);
                if let Some(o) = &opts.overall {
                    o.inc(1);
                }
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if plain && (n * 4 / todo.len() > (n - 1) * 4 / todo.len()) {
                    eprintln!("{}: {n}/{} runs, {:.1} s", plan.name, todo.len(), start.elapsed().as_secs_f64());
                }
                (i, Some(r))
            })
            .collect()
    });
    pb.finish_and_clear();
    let wall_s = start.elapsed().as_secs_f64();
    let mut failures = Vec::new();
    let mut interrupted = false;
    for (i, r) in results {
        match r {
            Some(Ok(report)) => runs[i] = Some(RunResult { key: keys[i], report }),
            Some(Err(error)) => failures.push(Failure { key: keys[i], error }),
            None => interrupted = true,
        }
    }
    Ok(Sweep { plan, runs, failures, resumed, interrupted, wall_s, threads })
}

/// A report as JSON without its wall-clock fields.
pub fn deterministic_report(r: &Report) -> Value {
    let mut v = serde_json::to_value(r).expect("report serialises");
    if let Some(o) = v.as_object_mut() {
        for f in WALL_FIELDS {
            o.remove(*f);
        }
    }
    v
}

impl Sweep {
    fn metric_of(&self, r: &RunResult) -> f64 {
        self.value_of(r, &self.plan.metric)
    }
    fn value_of(&self, r: &RunResult, metric: &str) -> f64 {
        metric_value(&deterministic_report(&r.report), metric).unwrap_or(f64::NAN)
    }

    /// The finished runs, in matrix order.
    pub fn finished(&self) -> impl Iterator<Item = &RunResult> {
        self.runs.iter().flatten()
    }

    /// "machine M policy P workload W seed S": a run's identity for messages.
    pub fn describe(&self, k: &RunKey) -> String {
        let p = &self.plan;
        format!(
            "machine {} policy {} workload {} seed {}",
            p.machine_specs[k.machine], p.policy_specs[k.policy], p.workload_specs[k.workload], p.seeds[k.seed]
        )
    }

    fn run_index(&self, machine: usize, policy: usize, workload: usize, seed: usize) -> usize {
        let p = &self.plan;
        ((machine * p.policies.len() + policy) * p.workloads.len() + workload) * p.seeds.len() + seed
    }

    /// Metric values over seeds for one (machine, policy, workload).
    pub fn values(&self, machine: usize, policy: usize, workload: usize) -> Vec<f64> {
        self.values_of(&self.plan.metric, machine, policy, workload)
    }
    /// Any report field's values over seeds for one (machine, policy, workload); NaN
    /// for a run that failed.
    pub fn values_of(&self, metric: &str, machine: usize, policy: usize, workload: usize) -> Vec<f64> {
        (0..self.plan.seeds.len())
            .map(|s| {
                self.runs[self.run_index(machine, policy, workload, s)]
                    .as_ref()
                    .map_or(f64::NAN, |r| self.value_of(r, metric))
            })
            .collect()
    }

    /// The comparison table (rows: workload × machine; columns: policies vs baseline).
    pub fn table(&self) -> Table {
        self.table_of(&self.plan.metric)
    }

    /// The comparison table of any report field over the same runs.
    pub fn table_of(&self, metric: &str) -> Table {
        let p = &self.plan;
        let b = p.policy_specs.iter().position(|x| *x == p.baseline).expect("baseline validated");
        let compared: Vec<usize> = (0..p.policies.len()).filter(|&i| i != b).collect();
        let mut rows = Vec::new();
        for w in 0..p.workloads.len() {
            for m in 0..p.machines.len() {
                let base = self.values_of(metric, m, b, w);
                let (bm, bsd) = table::mean_sd(&base);
                let means = (0..p.policies.len()).map(|i| table::mean_sd(&self.values_of(metric, m, i, w)).0).collect();
                let cells = compared.iter().map(|&i| pct_diff(&self.values_of(metric, m, i, w), &base)).collect();
                rows.push(table::Row {
                    workload: p.workload_specs[w].clone(),
                    machine: p.machine_specs[m].clone(),
                    baseline_mean: bm,
                    baseline_sd: bsd,
                    means,
                    cells,
                });
            }
        }
        Table {
            // The further fields' tables say which field they show.
            title: if metric == p.metric { p.title.clone() } else { format!("{}: `{metric}`", p.name) },
            metric: metric.to_string(),
            baseline: p.baseline.clone(),
            compared: compared.iter().map(|&i| p.policy_specs[i].clone()).collect(),
            rows,
        }
    }

    /// `results.json`: the plan and every report minus wall-clock fields.
    pub fn results_json(&self) -> String {
        let p = &self.plan;
        let runs: Vec<Value> = self
            .finished()
            .map(|r| {
                self.run_json(&r.key, json!({ "metric": self.metric_of(r), "report": deterministic_report(&r.report) }))
            })
            .collect();
        let v = json!({
            "name": p.name,
            "title": p.title,
            "quick": p.quick,
            "metric": p.metric,
            "baseline": p.baseline,
            "machines": p.machine_specs,
            "policies": p.policy_specs,
            "workloads": p.workload_specs,
            "seeds": p.seeds,
            "runs": runs,
        });
        let mut v = v;
        if !self.failures.is_empty() {
            let failures: Vec<Value> =
                self.failures.iter().map(|f| self.run_json(&f.key, json!({ "error": f.error }))).collect();
            v["failures"] = Value::Array(failures);
        }
        serde_json::to_string_pretty(&v).expect("json") + "\n"
    }

    /// `results.csv`: one row per run.
    pub fn results_csv(&self) -> String {
        let p = &self.plan;
        let mut s = String::from(
            "machine,policy,workload,seed,metric,value,throughput,throughput_unit,completed,virtual_ns,sim_events,context_switches,migrations,ipis,schedule_calls,cpu_busy_pct,lock_spin_ns,wakeup_p50_ns,wakeup_p99_ns,rq_len_mean,rq_len_max,rq_stddev_mean\n",
        );
        for r in self.finished() {
            let x = &r.report;
            let fields = [
                csv_field(&p.machine_specs[r.key.machine]),
                csv_field(&p.policy_specs[r.key.policy]),
                csv_field(&p.workload_specs[r.key.workload]),
                p.seeds[r.key.seed].to_string(),
                csv_field(&p.metric),
                self.metric_of(r).to_string(),
                x.throughput.to_string(),
                csv_field(&x.throughput_unit),
                x.completed.to_string(),
                x.virtual_ns.to_string(),
                x.sim_events.to_string(),
                x.context_switches.to_string(),
                x.migrations.to_string(),
                x.ipis.to_string(),
                x.schedule_calls.to_string(),
                x.cpu_busy_pct.to_string(),
                x.lock_spin_ns.to_string(),
                x.wakeup_latency_ns.p50.to_string(),
                x.wakeup_latency_ns.p99.to_string(),
                x.runqueue_len.mean.to_string(),
                x.runqueue_len.max.to_string(),
                x.runqueue_len.stddev_mean.to_string(),
            ];
            s.push_str(&fields.join(","));
            s.push('\n');
        }
        s
    }

    /// A run's identity (machine, policy, workload, seed) followed by `extra`'s fields.
    fn run_json(&self, k: &RunKey, extra: Value) -> Value {
        let p = &self.plan;
        let mut v = json!({
            "machine": p.machine_specs[k.machine],
            "policy": p.policy_specs[k.policy],
            "workload": p.workload_specs[k.workload],
            "seed": p.seeds[k.seed],
        });
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            o.extend(e);
        }
        v
    }

    /// `timing.json`: the wall-clock figures kept out of the deterministic outputs.
    pub fn timing_json(&self) -> String {
        let runs: Vec<Value> = self
            .finished()
            .map(|r| {
                self.run_json(&r.key, json!({ "wall_s": r.report.wall_s, "events_per_sec": r.report.events_per_sec }))
            })
            .collect();
        let v = json!({ "wall_s": self.wall_s, "threads": self.threads, "runs": runs });
        serde_json::to_string_pretty(&v).expect("json") + "\n"
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Paths of the files [`write_outputs`] wrote.
#[derive(Clone, Debug)]
pub struct Outputs {
    pub dir: PathBuf,
    pub files: Vec<PathBuf>,
}

/// Write results.json, results.csv, table.md, chart.svg and timing.json into `dir`.
pub fn write_outputs(sweep: &Sweep, dir: &Path) -> Result<Outputs, LabError> {
    let io = |p: &Path, e: std::io::Error| LabError::Io(format!("{}: {e}", p.display()));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let table = sweep.table();
    let mut files = Vec::new();
    let mut tables = table.to_markdown();
    for m in &sweep.plan.also {
        tables.push('\n');
        tables.push_str(&sweep.table_of(m).to_markdown());
    }
    for (name, text) in [
        ("results.json", sweep.results_json()),
        ("results.csv", sweep.results_csv()),
        ("table.md", tables),
        ("timing.json", sweep.timing_json()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        files.push(path);
    }
    // chart.svg: the main metric; chart-<field>.svg per further field (dots and other
    // punctuation → `-`). Drawn as the report draws them (`charts`).
    let p = &sweep.plan;
    let mut charts = vec![("chart.svg".to_string(), p.metric.clone())];
    for m in &p.also {
        let slug: String = m.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' }).collect();
        charts.push((format!("chart-{slug}.svg"), m.clone()));
    }
    for (name, metric) in charts {
        let path = dir.join(name);
        let svg = charts::chart(sweep, &metric).map_err(|e| LabError::Io(format!("{}: {e}", path.display())))?;
        std::fs::write(&path, svg).map_err(|e| io(&path, e))?;
        files.push(path);
    }
    Ok(Outputs { dir: dir.to_path_buf(), files })
}
