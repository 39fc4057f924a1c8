//! A sweep split over the processes of a job (the ranks of an MPI job:
//! `schedlab sweep --mpi`), with no MPI in this crate: the transport is the caller's.
//!
//! Each of `ranks` processes runs the runs it owns ([`Share::owns`]: run `i` of
//! [`Plan::runs`](crate::Plan::runs) belongs to rank `i mod ranks`, a fixed assignment
//! that needs no coordination), then every rank but 0 sends rank 0 one text,
//! [`Sweep::part_json`] (or [`error_part`] if it could not run at all), and rank 0
//! [`Sweep::merge`]s them into its own sweep. Reports travel as JSON and round-trip
//! exactly (`serde_json`'s `float_roundtrip`, as in the [`journal`](crate::journal)),
//! so rank 0's output files are byte-identical to those of a sweep run in one process.
//!
//! A part names the matrix it was run for (the journal's fingerprint), and rank 0
//! checks it against its own: ranks that read different experiment files (another
//! checkout on another node) are an error, not a silently mixed table.

use crate::{journal, Failure, LabError, RunResult, Sweep};
use schedlab_sim::Report;
use serde_json::{json, Value};
use std::path::Path;

/// This process's place in the job: rank `rank` of `ranks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub rank: usize,
    pub ranks: usize,
}

impl Share {
    /// Whether run `index` (in matrix order) is this rank's to run. Round-robin, so
    /// the ranks get neighbouring runs (whose costs are alike) in turn and their loads
    /// stay even without measuring anything.
    pub fn owns(&self, index: usize) -> bool {
        index % self.ranks.max(1) == self.rank
    }
}

/// The part of a rank that could not run its share (e.g. the experiment file is not
/// readable on its node): rank 0 reports `rank R: <message>` with the error's exit code.
pub fn error_part(rank: usize, e: &LabError) -> String {
    let kind = match e {
        LabError::Config(_) => "config",
        LabError::Run(_) => "run",
        LabError::Io(_) => "io",
        LabError::Plot(_) => "plot",
    };
    json!({ "rank": rank, "error": e.message(), "kind": kind }).to_string()
}

fn bad(rank: usize, what: impl std::fmt::Display) -> LabError {
    LabError::Run(format!("rank {rank}: malformed result message: {what}"))
}

impl Sweep {
    /// What this rank sends rank 0: the runs of `share` it finished and those that
    /// failed, each by matrix index, with full reports (wall-clock fields included:
    /// rank 0's `timing.json` is built from them).
    pub fn part_json(&self, share: Share) -> String {
        let keys = self.plan.runs();
        let runs: Vec<Value> = (0..keys.len())
            .filter(|&i| share.owns(i))
            .filter_map(|i| self.runs[i].as_ref().map(|r| json!({ "index": i, "report": r.report })))
            .collect();
        let failures: Vec<Value> =
            self.failures.iter().map(|f| json!({ "index": self.index_of(f), "error": f.error })).collect();
        json!({
            "rank": share.rank,
            "ranks": share.ranks,
            "plan": journal::fingerprint(&self.plan),
            "runs": runs,
            "failures": failures,
        })
        .to_string()
    }

    fn index_of(&self, f: &Failure) -> usize {
        let k = &f.key;
        self.run_index(k.machine, k.policy, k.workload, k.seed)
    }

    /// Bring a part sent by rank `from` into this (rank 0's) sweep, run with `ranks`
    /// ranks. Every run that rank owns must be in it, finished or failed; with a
    /// journal directory, its finished runs are recorded there as if run here. Returns
    /// the failures it carried (to report them naming the rank). A part that is an
    /// [`error_part`] comes back as that error, prefixed with the rank.
    pub fn merge(
        &mut self,
        from: usize,
        ranks: usize,
        text: &str,
        journal: Option<&Path>,
    ) -> Result<Vec<Failure>, LabError> {
        let v: Value = serde_json::from_str(text).map_err(|e| bad(from, e))?;
        if v.get("rank").and_then(Value::as_u64) != Some(from as u64) {
            return Err(bad(from, "it does not name the rank that sent it"));
        }
        if let Some(msg) = v.get("error").and_then(Value::as_str) {
            let msg = format!("rank {from}: {msg}");
            return Err(match v.get("kind").and_then(Value::as_str) {
                Some("config") => LabError::Config(msg),
                Some("io") => LabError::Io(msg),
                Some("plot") => LabError::Plot(msg),
                _ => LabError::Run(msg),
            });
        }
        if v.get("ranks").and_then(Value::as_u64) != Some(ranks as u64) {
            return Err(bad(from, format!("it was run for another number of ranks than {ranks}")));
        }
        if v.get("plan") != Some(&journal::fingerprint(&self.plan)) {
            return Err(LabError::Config(format!(
                "rank {from} ran another matrix than rank 0 (machines, policies, workloads, seeds or max_virtual_s differ): every rank must read the same experiment file"
            )));
        }
        let share = Share { rank: from, ranks };
        let keys = self.plan.runs();
        let mut seen = vec![false; keys.len()];
        let mut index = |item: &Value| -> Result<usize, LabError> {
            let i =
                item.get("index").and_then(Value::as_u64).ok_or_else(|| bad(from, "a run without an index"))? as usize;
            if i >= keys.len() || !share.owns(i) || seen[i] {
                return Err(bad(from, format!("run {i} is not one of its own, or came twice")));
            }
            seen[i] = true;
            Ok(i)
        };
        let list =
            |name: &str| v.get(name).and_then(Value::as_array).ok_or_else(|| bad(from, format!("no {name} list")));
        let mut finished = Vec::new();
        for item in list("runs")? {
            let i = index(item)?;
            let report: Report = item
                .get("report")
                .cloned()
                .ok_or_else(|| bad(from, format!("run {i} has no report")))
                .and_then(|r| serde_json::from_value(r).map_err(|e| bad(from, format!("run {i}: {e}"))))?;
            finished.push((i, report));
        }
        let mut failed = Vec::new();
        for item in list("failures")? {
            let i = index(item)?;
            let error = item.get("error").and_then(Value::as_str).unwrap_or("(no message)").to_string();
            failed.push(Failure { key: keys[i], error });
        }
        if let Some(missing) = (0..keys.len()).find(|&i| share.owns(i) && !seen[i]) {
            return Err(LabError::Run(format!(
                "rank {from} sent no result for its run {}",
                self.describe(&keys[missing])
            )));
        }
        if let Some(dir) = journal {
            let j = journal::Journal::open(dir, &self.plan, true)?;
            for (i, report) in &finished {
                j.record(&self.plan, *i, &keys[*i], report)?;
            }
        }
        for (i, report) in finished {
            self.runs[i] = Some(RunResult { key: keys[i], report });
        }
        // Matrix order, as a sweep run in one process lists them.
        self.failures.extend(failed.iter().cloned());
        let mut failures = std::mem::take(&mut self.failures);
        failures.sort_by_key(|f| self.index_of(f));
        self.failures = failures;
        Ok(failed)
    }
}
