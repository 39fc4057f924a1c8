//! Experiment files: what to run (machines × policies × workloads × seeds), the
//! baseline policy and the metric to compare, with `[quick]` overrides for CI.

use crate::LabError;
use schedlab_core::{BuildEnv, NullPlatform, PolicySource, PolicySpec, Topology};
use schedlab_sim::{simulate, Machine, SimConfig};
use schedlab_workloads::{parse_workload, parse_workload_within, Workload};
use serde::Deserialize;
use std::path::Path;

/// An experiment file, as written (see `experiments/*.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// Short name: the default output directory is `out/<name>`.
    pub name: String,
    /// Title for tables and charts (default: the name).
    #[serde(default)]
    pub title: Option<String>,
    pub machines: Vec<String>,
    pub policies: Vec<String>,
    pub workloads: Vec<String>,
    pub seeds: Vec<u64>,
    /// The policy every other policy is compared against.
    pub baseline: String,
    /// A numeric field of the JSON report (dotted path for nested ones, e.g.
    /// `wakeup_latency_ns.p99`); default `throughput`.
    #[serde(default = "default_metric")]
    pub metric: String,
    /// Further report fields to tabulate and chart from the same runs (absolute
    /// means per policy), e.g. `rq_traversal_miss_ratio`,
    /// `locks.runqueue_lock.contention_pct`.
    #[serde(default)]
    pub also: Vec<String>,
    /// Give up a run after this many virtual seconds (default 3600).
    #[serde(default)]
    pub max_virtual_s: Option<f64>,
    /// Overrides applied with `--quick`.
    #[serde(default)]
    pub quick: Option<Quick>,
    /// Directory of the file this was loaded from: relative machine-file paths in
    /// `machines` are resolved against it, so an experiment runs from any directory.
    #[serde(skip)]
    pub dir: Option<std::path::PathBuf>,
}

/// `[quick]`: replacements for any of the matrix lists.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Quick {
    pub machines: Option<Vec<String>>,
    pub policies: Option<Vec<String>>,
    pub workloads: Option<Vec<String>>,
    pub seeds: Option<Vec<u64>>,
}

fn default_metric() -> String {
    "throughput".into()
}

/// Report fields that are wall-clock measurements, not functions of the inputs.
pub const WALL_FIELDS: &[&str] = &["wall_s", "events_per_sec"];

/// A validated, ready-to-run experiment: every spec parsed, the matrix fixed.
pub struct Plan {
    pub name: String,
    pub title: String,
    pub quick: bool,
    pub metric: String,
    pub also: Vec<String>,
    pub baseline: String,
    pub machine_specs: Vec<String>,
    pub policy_specs: Vec<String>,
    pub workload_specs: Vec<String>,
    pub seeds: Vec<u64>,
    pub machines: Vec<Machine>,
    pub policies: Vec<PolicySpec>,
    pub workloads: Vec<Workload>,
    pub max_virtual_ns: u64,
}

/// One run of the matrix, by index into the plan's lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunKey {
    pub machine: usize,
    pub policy: usize,
    pub workload: usize,
    pub seed: usize,
}

impl Experiment {
    /// Parse an experiment from TOML text; errors name the offending field.
    pub fn from_toml(text: &str) -> Result<Experiment, LabError> {
        toml::from_str(text).map_err(|e| LabError::Config(format!("invalid experiment file: {}", e.to_string().trim())))
    }

    /// Read and parse an experiment file.
    pub fn load(path: &Path) -> Result<Experiment, LabError> {
        let text = std::fs::read_to_string(path).map_err(|e| LabError::Config(format!("{}: {e}", path.display())))?;
        let mut e = Experiment::from_toml(&text)
            .map_err(|e| LabError::Config(format!("{}: {}", path.display(), e.message())))?;
        e.dir = path.parent().map(Path::to_path_buf);
        Ok(e)
    }

    /// Check every entry (machines load, policies and workloads parse, the baseline is
    /// one of the policies, the metric is a numeric report field) and fix the matrix.
    pub fn plan(&self, quick: bool) -> Result<Plan, LabError> {
        self.plan_within(quick, schedlab_workloads::footprint::DEFAULT_MAX_BYTES)
    }

    /// [`Experiment::plan`], refusing any workload whose estimated memory exceeds
    /// `max_bytes` (see `schedlab_workloads::footprint`).
    pub fn plan_within(&self, quick: bool, max_bytes: u64) -> Result<Plan, LabError> {
        let bad = |msg: String| Err(LabError::Config(msg));
        if self.name.is_empty()
            || self.name.starts_with('.')
            || !self.name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return bad(format!(
                "name = {:?}: use letters, digits, '-', '_' or '.', not starting with '.' (it names the output directory)",
                self.name
            ));
        }
        let q = if quick { self.quick.clone().unwrap_or_default() } else { Quick::default() };
        let pick = |field: &str, base: &Vec<String>, over: Option<Vec<String>>| -> (String, Vec<String>) {
            match over {
                Some(v) => (format!("quick.{field}"), v),
                None => (field.to_string(), base.clone()),
            }
        };
        let (mf, machine_specs) = pick("machines", &self.machines, q.machines);
        let (pf, policy_specs) = pick("policies", &self.policies, q.policies);
        let (wf, workload_specs) = pick("workloads", &self.workloads, q.workloads);
        let (sf, seeds) = match q.seeds {
            Some(s) => ("quick.seeds".to_string(), s),
            None => ("seeds".to_string(), self.seeds.clone()),
        };
        for (field, len) in
            [(&mf, machine_specs.len()), (&pf, policy_specs.len()), (&wf, workload_specs.len()), (&sf, seeds.len())]
        {
            if len == 0 {
                return bad(format!("{field}: must not be empty"));
            }
        }
        let dup = |field: &str, v: &[String]| -> Result<(), LabError> {
            for (i, s) in v.iter().enumerate() {
                if v[..i].contains(s) {
                    return Err(LabError::Config(format!("{field}[{i}] = {s:?}: listed twice")));
                }
            }
            Ok(())
        };
        dup(&mf, &machine_specs)?;
        dup(&pf, &policy_specs)?;
        dup(&wf, &workload_specs)?;
        let seed_strs: Vec<String> = seeds.iter().map(|s| s.to_string()).collect();
        dup(&sf, &seed_strs)?;
        let mut machines = Vec::new();
        for (i, s) in machine_specs.iter().enumerate() {
            // A machine file (not a preset name) given relative: relative to this file.
            let file_like = s.ends_with(".toml") || s.contains('/');
            let path = match &self.dir {
                Some(d) if file_like && Path::new(s).is_relative() => d.join(s).to_string_lossy().into_owned(),
                _ => s.clone(),
            };
            machines.push(Machine::load(&path).map_err(|e| LabError::Config(format!("{mf}[{i}] = {s:?}: {e}")))?);
        }
        let mut policies = Vec::new();
        for (i, s) in policy_specs.iter().enumerate() {
            let spec = PolicySpec::parse(s).map_err(|e| LabError::Config(format!("{pf}[{i}] = {s:?}: {e}")))?;
            if spec.runtime_native() {
                return bad(format!("{pf}[{i}] = {s:?}: a runtime-only scheduler, the simulator cannot run it"));
            }
            policies.push(spec);
        }
        let mut workloads = Vec::new();
        for (i, s) in workload_specs.iter().enumerate() {
            workloads.push(
                parse_workload_within(s, max_bytes).map_err(|e| LabError::Config(format!("{wf}[{i}] = {s:?}: {e}")))?,
            );
        }
        if !policy_specs.contains(&self.baseline) {
            return bad(format!(
                "baseline = {:?}: not one of {pf} ({})",
                self.baseline,
                policy_specs.iter().map(|p| format!("{p:?}")).collect::<Vec<_>>().join(", ")
            ));
        }
        check_metric(&self.metric)?;
        for m in &self.also {
            check_metric(m).map_err(|e| LabError::Config(e.message().replacen("metric =", "also:", 1)))?;
        }
        check_matrix(&pf, &policy_specs, &policies, &mf, &machine_specs, &machines)?;
        let max_virtual_ns = match self.max_virtual_s {
            None => SimConfig::default().max_virtual_ns,
            Some(s) if s.is_finite() && s > 0.0 => (s * 1e9).min(u64::MAX as f64 / 2.0) as u64,
            Some(s) => return bad(format!("max_virtual_s = {s}: must be a positive number of seconds")),
        };
        Ok(Plan {
            name: self.name.clone(),
            title: self.title.clone().unwrap_or_else(|| self.name.clone()),
            quick,
            metric: self.metric.clone(),
            also: self.also.clone(),
            baseline: self.baseline.clone(),
            machine_specs,
            policy_specs,
            workload_specs,
            seeds,
            machines,
            policies,
            workloads,
            max_virtual_ns,
        })
    }
}

impl Plan {
    /// The matrix machines × policies × workloads × seeds, in this (fixed) order.
    pub fn runs(&self) -> Vec<RunKey> {
        let mut v = Vec::new();
        for machine in 0..self.machines.len() {
            for policy in 0..self.policies.len() {
                for workload in 0..self.workloads.len() {
                    for seed in 0..self.seeds.len() {
                        v.push(RunKey { machine, policy, workload, seed });
                    }
                }
            }
        }
        v
    }
}

/// Every policy must fit every machine (a PMQS pool size must divide each machine's
/// CPU count, ...): checked by building each policy for each machine before any run
/// starts, and every misfit reported at once.
fn check_matrix(
    pf: &str,
    policy_specs: &[String],
    policies: &[PolicySpec],
    mf: &str,
    machine_specs: &[String],
    machines: &[Machine],
) -> Result<(), LabError> {
    let platform = NullPlatform::new(0);
    let mut problems = Vec::new();
    for (mi, m) in machines.iter().enumerate() {
        let topo = Topology { node_of: m.node_of.clone(), distance: m.distance.clone() };
        let env = BuildEnv { topo: &topo, capacity: 1, hz: m.hz };
        for (pi, p) in policies.iter().enumerate() {
            if let Err(e) = p.build(&platform, &env) {
                problems
                    .push(format!("{pf}[{pi}] = {:?} on {mf}[{mi}] = {:?}: {e}", policy_specs[pi], machine_specs[mi]));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(LabError::Config(format!(
            "policy × machine combinations that cannot run ({}):\n  {}",
            problems.len(),
            problems.join("\n  ")
        )))
    }
}

/// Look up a (dotted) numeric field in a JSON report. A list is indexed by the
/// `role` or `name` of its entries (`waits.ps.max_ns`,
/// `locks.runqueue_lock.contention_pct`) or by position (`locks.0.wait_max_ns`).
pub fn metric_value(report: &serde_json::Value, metric: &str) -> Option<f64> {
    let mut v = report;
    for part in metric.split('.') {
        v = match v.as_array() {
            Some(items) => match part.parse::<usize>() {
                Ok(i) => items.get(i)?,
                Err(_) => items
                    .iter()
                    .find(|x| ["role", "name"].iter().any(|k| x.get(*k).and_then(|r| r.as_str()) == Some(part)))?,
            },
            None => v.get(part)?,
        };
    }
    v.as_f64()
}

/// The metric must name a deterministic numeric report field: checked on the report
/// of a tiny simulation, so that the check follows the report's fields.
fn check_metric(metric: &str) -> Result<(), LabError> {
    let top = metric.split('.').next().unwrap_or("");
    if WALL_FIELDS.contains(&top) {
        return Err(LabError::Config(format!(
            "metric = {metric:?}: a wall-clock figure, not a deterministic result; use e.g. \"throughput\" or \"virtual_ns\""
        )));
    }
    // NetBench's probe report has every optional field (responses, the roles below).
    let w = parse_workload("netbench:clients=1,ops=1,think_ns=0,probes=1,probe_every_ns=0").expect("probe workload");
    let m = Machine::preset("up").expect("probe machine");
    let r = simulate(&m, &PolicySpec::parse("dss").expect("probe policy"), &w, &SimConfig::default())
        .expect("probe simulation");
    let v = serde_json::to_value(&r).expect("report serialises");
    if metric_value(&v, metric).is_none() {
        let mut numeric: Vec<String> = Vec::new();
        if let Some(o) = v.as_object() {
            for (k, x) in o {
                if WALL_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if x.is_number() {
                    numeric.push(k.clone());
                } else if x.is_array() && k == "waits" {
                    numeric.push("waits.<role>.{p50_ns,p99_ns,max_ns}".into());
                } else if let Some(inner) = x.as_object() {
                    numeric.extend(inner.iter().filter(|(_, y)| y.is_number()).map(|(k2, _)| format!("{k}.{k2}")));
                }
            }
        }
        return Err(LabError::Config(format!(
            "metric = {metric:?}: not a numeric report field (known: {})",
            numeric.join(", ")
        )));
    }
    Ok(())
}
