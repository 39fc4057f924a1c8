//! The sweep journal: every finished run is written to `<out>/runs/` the moment it
//! completes, so an interrupted or failed sweep keeps its finished work, and
//! `schedlab sweep --resume` runs only what is missing.
//!
//! Layout: `runs/plan.json` (the matrix the files belong to: machine, policy and
//! workload specs and seeds, in order) and one `runs/NNNNN.json` per finished run,
//! `NNNNN` its index in [`Plan::runs`] order, holding the run's identity and its full
//! report (wall-clock fields included: `timing.json` is rebuilt from them). Files are
//! written to a temporary name and renamed, so a run file is whole or absent.
//! Reports round-trip through JSON exactly (`serde_json`'s `float_roundtrip`), which
//! makes a resumed sweep's outputs byte-identical to an uninterrupted one's.

use crate::experiment::{Plan, RunKey};
use crate::LabError;
use schedlab_sim::Report;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The journal of one sweep, in `dir` (`<out>/runs`).
pub struct Journal {
    dir: PathBuf,
}

fn io(p: &Path, e: impl std::fmt::Display) -> LabError {
    LabError::Io(format!("{}: {e}", p.display()))
}

/// An output directory that cannot be prepared is bad input (`--out`), found before
/// any run: exit code 2.
fn unusable(p: &Path, e: impl std::fmt::Display) -> LabError {
    LabError::Config(format!("output {}: {e}", p.display()))
}

/// The part of the plan a run file belongs to.
pub(crate) fn fingerprint(plan: &Plan) -> Value {
    json!({
        "machines": plan.machine_specs,
        "policies": plan.policy_specs,
        "workloads": plan.workload_specs,
        "seeds": plan.seeds,
        "max_virtual_ns": plan.max_virtual_ns,
    })
}

fn identity(plan: &Plan, k: &RunKey) -> Value {
    json!({
        "machine": plan.machine_specs[k.machine],
        "policy": plan.policy_specs[k.policy],
        "workload": plan.workload_specs[k.workload],
        "seed": plan.seeds[k.seed],
    })
}

impl Journal {
    /// Open the journal in `dir` for `plan`. Without `resume`, earlier run files are
    /// removed (a fresh sweep). With `resume`, they are kept if they belong to the same
    /// matrix; a journal of another matrix is an error naming the difference.
    pub fn open(dir: &Path, plan: &Plan, resume: bool) -> Result<Journal, LabError> {
        let plan_file = dir.join("plan.json");
        let want = fingerprint(plan);
        if resume && plan_file.exists() {
            let text = std::fs::read_to_string(&plan_file).map_err(|e| io(&plan_file, e))?;
            let have: Value = serde_json::from_str(&text).map_err(|e| io(&plan_file, e))?;
            if have != want {
                let field = ["machines", "policies", "workloads", "seeds", "max_virtual_ns"]
                    .into_iter()
                    .find(|f| have.get(*f) != want.get(*f))
                    .unwrap_or("plan");
                return Err(LabError::Config(format!(
                    "--resume: {} belongs to a sweep with other {field}; the experiment changed since (use another --out, or run without --resume to start over)",
                    dir.display()
                )));
            }
        } else if dir.exists() {
            for entry in std::fs::read_dir(dir).map_err(|e| unusable(dir, e))? {
                let path = entry.map_err(|e| unusable(dir, e))?.path();
                if path.extension().is_some_and(|x| x == "json" || x == "tmp") {
                    std::fs::remove_file(&path).map_err(|e| unusable(&path, e))?;
                }
            }
        }
        std::fs::create_dir_all(dir).map_err(|e| unusable(dir, e))?;
        write_atomic(&plan_file, &(serde_json::to_string_pretty(&want).expect("json") + "\n"))
            .map_err(|e| unusable(dir, e))?;
        Ok(Journal { dir: dir.to_path_buf() })
    }

    fn run_file(&self, index: usize) -> PathBuf {
        self.dir.join(format!("{index:05}.json"))
    }

    /// The finished run `index` of the plan, if its file is there and whole.
    pub fn load(&self, plan: &Plan, index: usize, key: &RunKey) -> Option<Report> {
        let text = std::fs::read_to_string(self.run_file(index)).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        if v.get("run") != Some(&identity(plan, key)) {
            return None;
        }
        serde_json::from_value(v.get("report")?.clone()).ok()
    }

    /// Record the finished run `index`.
    pub fn record(&self, plan: &Plan, index: usize, key: &RunKey, report: &Report) -> Result<(), LabError> {
        let v = json!({ "run": identity(plan, key), "report": report });
        write_atomic(&self.run_file(index), &(serde_json::to_string(&v).expect("json") + "\n"))
    }
}

/// Write `text` to `path` whole or not at all (temporary file, then rename).
fn write_atomic(path: &Path, text: &str) -> Result<(), LabError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}
