//! Every published cell beside its reproduction: find the runs a cell names, derive the
//! reproduced value the way the source derived its own (a % against the baseline, a
//! value, a peak over a sweep, a colour threshold), and judge the pair.
//!
//! The judgement is one rule for every table: a cell **agrees** when both values have
//! the same sign and are within a factor of 1.5 of each other, has the **opposite sign**,
//! or is **outside** 1.5×; an observation given as bounds agrees when the bounds hold.

use super::catalog::{Entry, Value as ViewValue};
use super::labels;
use super::published::{workload_matches, Compare, Given, PubCell, PubTable, MEASURED_EXPERIMENT};
use super::tables::{spread, Cell, ViewTables};
use super::Section;
use crate::table::pct_diff;
use crate::LabError;
use crate::Sweep;
use serde::Serialize;

/// The factor within which a reproduced value agrees with the published one.
pub const AGREE_FACTOR: f64 = 1.5;

/// How a reproduced cell stands against the published one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Same sign and within 1.5× (or the observation's bounds hold).
    Agrees,
    OppositeSign,
    /// Same sign, more than 1.5× apart (or a bound does not hold).
    Outside,
    /// No run of this report answers the cell (`--only`, `--quick` sizes, a failed run).
    NotRun,
}

impl Verdict {
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::OppositeSign => "OPPOSITE SIGN",
            Verdict::Outside => "OUTSIDE 1.5×",
            Verdict::NotRun => "not run",
        }
    }
}

/// Judge a reproduced value against a published one, both in one unit.
pub fn judge(published: f64, reproduced: f64) -> Verdict {
    if published * reproduced < 0.0 {
        return Verdict::OppositeSign;
    }
    if published == 0.0 || reproduced == 0.0 {
        return if published == reproduced { Verdict::Agrees } else { Verdict::Outside };
    }
    let r = reproduced / published;
    if (1.0 / AGREE_FACTOR..=AGREE_FACTOR).contains(&r) {
        Verdict::Agrees
    } else {
        Verdict::Outside
    }
}

/// One published cell and its reproduction.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The published table's id (`s1-table6`), source tag and name.
    pub table: String,
    pub source: String,
    pub source_table: String,
    pub row: String,
    pub col: String,
    pub experiment: String,
    pub metric: String,
    pub compare: &'static str,
    /// The source's unit.
    pub unit: String,
    /// The published value in the source's unit (`None` for an observation's bounds).
    pub published: Option<f64>,
    pub at_least: Option<f64>,
    pub at_most: Option<f64>,
    /// The reproduction, in the source's unit: mean over seeds, and its min..max.
    pub reproduced: Option<f64>,
    pub reproduced_min: Option<f64>,
    pub reproduced_max: Option<f64>,
    /// reproduced / published (where both are values).
    pub ratio: Option<f64>,
    pub verdict: Verdict,
    /// Why a cell was not compared, or how its value was found.
    pub detail: String,
}

/// Verdict counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub agrees: usize,
    pub opposite_sign: usize,
    pub outside: usize,
    pub not_run: usize,
}

impl Tally {
    pub fn of<'a>(cs: impl IntoIterator<Item = &'a Comparison>) -> Tally {
        let mut t = Tally::default();
        for c in cs {
            match c.verdict {
                Verdict::Agrees => t.agrees += 1,
                Verdict::OppositeSign => t.opposite_sign += 1,
                Verdict::Outside => t.outside += 1,
                Verdict::NotRun => t.not_run += 1,
            }
        }
        t
    }
    pub fn compared(&self) -> usize {
        self.agrees + self.opposite_sign + self.outside
    }
    /// One line: `12 of 36 cells within 1.5× and of the same sign, 14 opposite sign, 10 outside 1.5×`.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{} of {} published cells within 1.5× and of the same sign, {} of the opposite sign, {} outside 1.5×",
            self.agrees,
            self.compared(),
            self.opposite_sign,
            self.outside
        );
        if self.not_run > 0 {
            s += &format!("; {} not run in this report", self.not_run);
        }
        s
    }
}

/// Indices of the plan's machines, policies and workloads a cell names.
struct Matches {
    machines: Vec<usize>,
    policies: Vec<usize>,
    workloads: Vec<usize>,
}

fn matches(c: &PubCell, p: &crate::Plan) -> Matches {
    let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
    Matches {
        machines: (0..p.machines.len()).filter(|&i| eq(&c.machine, &p.machine_specs[i])).collect(),
        policies: (0..p.policies.len()).filter(|&i| eq(&c.policy, &p.policy_specs[i])).collect(),
        workloads: (0..p.workloads.len())
            .filter(|&i| c.workload.as_deref().is_none_or(|w| workload_matches(w, &p.workload_specs[i])))
            .collect(),
    }
}

/// The colours of a `dss:colours=N` spec.
fn colours_of(spec: &str) -> Option<u32> {
    let (kind, opts) = spec.split_once(':')?;
    (kind == "dss").then_some(())?;
    opts.split(',').find_map(|kv| kv.strip_prefix("colours=")).and_then(|v| v.parse().ok())
}

/// Does `plan` have the runs cell `c` needs? `Err` ([`LabError::Config`]: the
/// catalog and the experiment disagree) names what is missing.
pub fn produced_by(c: &PubCell, plan: &crate::Plan) -> Result<(), LabError> {
    let m = matches(c, plan);
    let missing = |what: &str, want: &Option<String>| Err(LabError::Config(format!("no {what} {want:?}")));
    if m.machines.is_empty() {
        return missing("machine", &c.machine);
    }
    if m.workloads.is_empty() {
        return missing("workload", &c.workload);
    }
    match c.compare {
        Compare::ColourThreshold if !plan.policy_specs.iter().any(|p| colours_of(p).is_some()) => {
            return Err(LabError::Config("no dss:colours=N policy".into()));
        }
        Compare::ColourThreshold => {}
        _ if m.policies.is_empty() => return missing("policy", &c.policy),
        _ => {}
    }
    if matches!(c.compare, Compare::Pct | Compare::ColourThreshold) && !plan.policy_specs.contains(&plan.baseline) {
        return Err(LabError::Config("no baseline run".into()));
    }
    Ok(())
}

/// The reproduced value of `c` in the report field's raw unit (with its spread), and a
/// note on how it was found; `Err` says why there is none.
fn reproduce(c: &PubCell, sweep: &Sweep) -> Result<(Cell, String, Option<f64>), String> {
    let m = matches(c, &sweep.plan);
    let p = &sweep.plan;
    let none = |what: &str, want: &Option<String>| {
        format!("no {what} `{}` in this run of the experiment", want.as_deref().unwrap_or("(any)"))
    };
    if m.machines.is_empty() {
        return Err(none("machine", &c.machine));
    }
    if m.workloads.is_empty() {
        return Err(none("workload", &c.workload));
    }
    let mi = m.machines[0];
    let base = p.policy_specs.iter().position(|x| *x == p.baseline);
    match c.compare {
        Compare::Value | Compare::Pct => {
            let Some(&pi) = m.policies.first() else { return Err(none("policy", &c.policy)) };
            let wi = m.workloads[0];
            let vals = sweep.values_of(&c.metric, mi, pi, wi);
            let cell = if c.compare == Compare::Pct {
                let b = base.ok_or("the experiment has no baseline run")?;
                pct_diff(&vals, &sweep.values_of(&c.metric, mi, b, wi)).map(|d| Cell {
                    mean: d.mean,
                    min: d.min,
                    max: d.max,
                })
            } else {
                spread(&vals)
            };
            let cell = cell.ok_or("a run failed or the field is missing")?;
            Ok((cell, format!("`{}` on `{}`", p.workload_specs[wi], p.machine_specs[mi]), None))
        }
        Compare::Peak => {
            let Some(&pi) = m.policies.first() else { return Err(none("policy", &c.policy)) };
            let mut best: Option<(Cell, usize)> = None;
            for &wi in &m.workloads {
                let cell = spread(&sweep.values_of(&c.metric, mi, pi, wi)).ok_or("a run failed")?;
                if best.is_none_or(|(b, _)| cell.mean > b.mean) {
                    best = Some((cell, wi));
                }
            }
            let (cell, wi) = best.expect("workloads not empty");
            let note = format!("highest of {} runs, at `{}`", m.workloads.len(), p.workload_specs[wi]);
            Ok((cell, note, None))
        }
        Compare::ColourThreshold => {
            let b = base.ok_or("the experiment has no baseline run")?;
            let wi = m.workloads[0];
            let vanilla = spread(&sweep.values_of(&c.metric, mi, b, wi)).ok_or("the baseline run failed")?;
            let mut tested: Vec<(u32, usize)> =
                (0..p.policies.len()).filter_map(|i| colours_of(&p.policy_specs[i]).map(|n| (n, i))).collect();
            tested.sort_unstable();
            if tested.is_empty() {
                return Err("no coloured policy in this run".into());
            }
            let want = c.report_value().unwrap_or(0.0);
            // The equation's c rounded up to a colour count the experiment tests.
            let published = tested.iter().map(|(n, _)| f64::from(*n)).find(|n| *n >= want);
            for &(n, pi) in &tested {
                let x = spread(&sweep.values_of(&c.metric, mi, pi, wi)).ok_or("a run failed")?;
                if x.mean <= 0.5 * vanilla.mean {
                    let v = f64::from(n);
                    let note = format!(
                        "c{n}: {:.0} vs vanilla {:.0} `{}`; tested colours {:?}",
                        x.mean,
                        vanilla.mean,
                        c.metric,
                        tested.iter().map(|t| t.0).collect::<Vec<_>>()
                    );
                    return Ok((Cell { mean: v, min: v, max: v }, note, published));
                }
            }
            Err(format!(
                "no tested colour count ({:?}) halves `{}` from vanilla's {:.0}",
                tested.iter().map(|t| t.0).collect::<Vec<_>>(),
                c.metric,
                vanilla.mean
            ))
        }
    }
}

/// Compare every cell of `tables` with the sections that were run. Cells of the
/// real-runtime part are left to the measured section (not deterministic).
pub fn compare(tables: &[PubTable], sections: &[Section]) -> Vec<Comparison> {
    let mut out = Vec::new();
    for t in tables {
        for c in &t.cells {
            let (published, at_least, at_most) = match c.given {
                Given::Value(v) => (Some(v), None, None),
                Given::Bounds { at_least, at_most } => (None, at_least, at_most),
            };
            let mut cmp = Comparison {
                table: t.id.clone(),
                source: t.source.clone(),
                source_table: t.table.clone(),
                row: c.row.clone(),
                col: c.col.clone(),
                experiment: c.experiment.clone(),
                metric: c.metric.clone(),
                compare: c.compare.name(),
                unit: c.unit.clone(),
                published,
                at_least,
                at_most,
                reproduced: None,
                reproduced_min: None,
                reproduced_max: None,
                ratio: None,
                verdict: Verdict::NotRun,
                detail: String::new(),
            };
            if c.experiment == MEASURED_EXPERIMENT {
                cmp.detail = "a real-machine measurement: compared in the measured section, not here".into();
                out.push(cmp);
                continue;
            }
            let Some(s) = sections.iter().find(|s| s.entry.name == c.experiment) else {
                cmp.detail = format!("experiment `{}` not run in this report", c.experiment);
                out.push(cmp);
                continue;
            };
            match reproduce(c, &s.sweep) {
                Err(why) => cmp.detail = why,
                Ok((cell, note, rounded)) => {
                    let k = c.to_report;
                    let here = cell.mean / k;
                    cmp.reproduced = Some(here);
                    cmp.reproduced_min = Some(cell.min / k);
                    cmp.reproduced_max = Some(cell.max / k);
                    cmp.detail = note;
                    if let Some(r) = rounded {
                        cmp.published = Some(r);
                    }
                    cmp.verdict = match (cmp.published, at_least, at_most) {
                        (Some(p), _, _) => {
                            cmp.ratio = (p != 0.0).then(|| here / p);
                            judge(p, here)
                        }
                        (None, lo, hi) => {
                            if lo.is_none_or(|lo| here >= lo) && hi.is_none_or(|hi| here <= hi) {
                                Verdict::Agrees
                            } else {
                                Verdict::Outside
                            }
                        }
                    };
                }
            }
            out.push(cmp);
        }
    }
    out
}

/// The (panel, row, column) labels of one run coordinate in a view's tables.
fn place(
    entry: &Entry,
    view: &super::catalog::View,
    sweep: &Sweep,
    (m, pi, w): (usize, usize, usize),
) -> (Option<String>, Option<String>, Option<String>) {
    let p = &sweep.plan;
    let l = |d| {
        labels::along(d, &p.machine_specs[m], &p.machines[m], &p.policy_specs[pi], &p.workload_specs[w], entry.aliases)
    };
    (l(view.panel), l(view.row), l(view.col))
}

/// Put the published values of `tables` beside the reproduced cells of a section's
/// views: on the grid, on the policies listed under it, and on the summary row.
pub fn annotate(
    entry: &Entry,
    sweep: &Sweep,
    views: &mut [(&super::catalog::View, &mut ViewTables)],
    tables: &[PubTable],
) {
    for t in tables {
        for c in t.cells.iter().filter(|c| c.experiment == entry.name) {
            let Some(v) = c.report_value() else { continue };
            for (view, vt) in views.iter_mut() {
                if vt.metric != c.metric {
                    continue;
                }
                let kind_fits = matches!(
                    (view.value, c.compare),
                    (ViewValue::Pct, Compare::Pct) | (ViewValue::Abs(_), Compare::Value | Compare::Peak)
                );
                if !kind_fits {
                    continue;
                }
                let m = matches(c, &sweep.plan);
                let (Some(&mi), Some(&pi), Some(&wi)) = (m.machines.first(), m.policies.first(), m.workloads.first())
                else {
                    continue;
                };
                let (pn, rn, cn) = place(entry, view, sweep, (mi, pi, wi));
                let Some(panel) = vt.panels.iter_mut().find(|p| Some(&p.title) == pn.as_ref() || pn.is_none()) else {
                    continue;
                };
                if c.compare == Compare::Peak {
                    if let Some(ci) = cn.as_ref().and_then(|cn| panel.cols.iter().position(|x| x == cn)) {
                        panel.summary_published.resize(panel.cols.len(), None);
                        panel.summary_published[ci] = Some(v);
                    }
                    continue;
                }
                match (rn, cn) {
                    (Some(rn), Some(cn)) => {
                        let (Some(ri), Some(ci)) =
                            (panel.rows.iter().position(|x| *x == rn), panel.cols.iter().position(|x| *x == cn))
                        else {
                            continue;
                        };
                        if panel.published.is_empty() {
                            panel.published = vec![vec![None; panel.cols.len()]; panel.rows.len()];
                        }
                        panel.published[ri][ci] = Some(v);
                    }
                    _ => {
                        let name = labels::policy(&sweep.plan.policy_specs[pi], entry.aliases);
                        if let Some(k) = panel.others.iter().position(|(n, _)| *n == name) {
                            panel.others_published.resize(panel.others.len(), None);
                            panel.others_published[k] = Some(v);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule() {
        assert_eq!(judge(-27.59, -20.0), Verdict::Agrees);
        assert_eq!(judge(-27.59, -18.0), Verdict::Outside);
        assert_eq!(judge(0.65, 9.5), Verdict::Outside);
        assert_eq!(judge(-15.26, 9.5), Verdict::OppositeSign);
        assert_eq!(judge(10.0, 15.0), Verdict::Agrees);
        assert_eq!(judge(10.0, 15.1), Verdict::Outside);
        assert_eq!(judge(0.0, 0.0), Verdict::Agrees);
        assert_eq!(judge(0.0, 1.0), Verdict::Outside);
    }

    #[test]
    fn colours() {
        assert_eq!(colours_of("dss:colours=32"), Some(32));
        assert_eq!(colours_of("dss"), None);
        assert_eq!(colours_of("mqs:colours=8"), None);
    }
}
