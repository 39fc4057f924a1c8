//! A [`View`] of a finished sweep as tables: one [`Panel`] per value of the view's
//! panel dimension, rows × columns in the order they first appear in the experiment's
//! matrix (so the file's order is the table's order), each cell the mean and the
//! min..max over seeds.

use super::catalog::{Dim, Entry, Summary, Unit, Value, View};
use super::labels;
use crate::table::pct_diff;
use crate::Sweep;
use serde::Serialize;

/// Mean and spread over seeds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cell {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

/// One table.
#[derive(Clone, Debug, Serialize)]
pub struct Panel {
    pub title: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    /// `cells[row][col]`; `None` where the matrix has no such run or a run failed.
    pub cells: Vec<Vec<Option<Cell>>>,
    /// Policies that have no place on the grid (DSS in a balancer × pool table), by label.
    pub others: Vec<(String, Option<Cell>)>,
    /// The headline row (peak / worst per column), with its name.
    pub summary: Option<(String, Vec<Option<Cell>>)>,
    /// Absolute baseline per panel for a percentage table, so the reader has the scale.
    pub baseline: Option<(String, Cell)>,
    /// The baseline per row, when the rows are machines or workloads (each row has its
    /// own baseline run: WebBench per CPU count, Chat per configuration); empty otherwise.
    pub baseline_rows: Vec<(String, Cell)>,
    /// The source's published value of each cell, in the cells' own raw unit (a % for a
    /// percentage table, ns for a time, 0..1 for a ratio: divide by the table's `scale`
    /// as for a cell), `published[row][col]`; empty when the source publishes none.
    pub published: Vec<Vec<Option<f64>>>,
    /// The published value of each of `others` (same order; empty when none).
    pub others_published: Vec<Option<f64>>,
    /// The published value of each column's summary (a peak; empty when none).
    pub summary_published: Vec<Option<f64>>,
}

/// A view's tables and how to read them.
#[derive(Clone, Debug, Serialize)]
pub struct ViewTables {
    pub metric: String,
    pub label: String,
    /// `% vs MQS`, `k msg/s`, `µs`, ...
    pub unit: String,
    pub row_name: String,
    pub col_name: String,
    pub lower_is_better: bool,
    pub panels: Vec<Panel>,
    /// Divide raw values by this to get `unit` (1 for percentages).
    pub scale: f64,
    /// Cells are % differences from the baseline (signed), not absolute values.
    pub pct: bool,
}

/// Mean and min..max of `xs`; `None` when empty or a value is not finite (a failed run).
pub(crate) fn spread(xs: &[f64]) -> Option<Cell> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(Cell { mean, min, max })
}

fn push_unique(v: &mut Vec<String>, s: &str) -> usize {
    match v.iter().position(|x| x == s) {
        Some(i) => i,
        None => {
            v.push(s.to_string());
            v.len() - 1
        }
    }
}

/// The tables of `view` over `sweep`.
pub fn build(entry: &Entry, view: &View, sweep: &Sweep) -> ViewTables {
    build_field(entry, view, sweep, view.metric, view.label)
}

/// [`build`] for a field named at run time (a sweep's own `metric` or `also` field,
/// which no catalog view describes): `view` gives the form, `metric` the report field.
pub fn build_field(entry: &Entry, view: &View, sweep: &Sweep, metric: &str, field_label: &str) -> ViewTables {
    let p = &sweep.plan;
    let base = p.policy_specs.iter().position(|x| *x == p.baseline).unwrap_or(0);
    let base_label = labels::policy(&p.baseline, entry.aliases);
    let label = |dim, m: usize, pi: usize, w: usize| {
        labels::along(
            dim,
            &p.machine_specs[m],
            &p.machines[m],
            &p.policy_specs[pi],
            &p.workload_specs[w],
            entry.aliases,
        )
    };
    let mut panels: Vec<Panel> = Vec::new();
    let mut panel_names: Vec<String> = Vec::new();
    for m in 0..p.machines.len() {
        for pi in 0..p.policies.len() {
            if view.value == Value::Pct && pi == base {
                continue; // 0 % by definition: the baseline is shown in absolute terms
            }
            for w in 0..p.workloads.len() {
                let vals = sweep.values_of(metric, m, pi, w);
                let cell = match view.value {
                    Value::Pct => pct_diff(&vals, &sweep.values_of(metric, m, base, w)).map(|c| Cell {
                        mean: c.mean,
                        min: c.min,
                        max: c.max,
                    }),
                    Value::Abs(_) => spread(&vals),
                };
                let pname = label(view.panel, m, pi, w).unwrap_or_default();
                let k = push_unique(&mut panel_names, &pname);
                if k == panels.len() {
                    let baseline = match view.value {
                        Value::Pct => spread(&sweep.values_of(metric, m, base, w)).map(|c| (base_label.clone(), c)),
                        Value::Abs(_) => None,
                    };
                    panels.push(Panel {
                        title: pname,
                        rows: vec![],
                        cols: vec![],
                        cells: vec![],
                        others: vec![],
                        summary: None,
                        baseline,
                        baseline_rows: vec![],
                        published: vec![],
                        others_published: vec![],
                        summary_published: vec![],
                    });
                }
                let panel = &mut panels[k];
                match (label(view.row, m, pi, w), label(view.col, m, pi, w)) {
                    (Some(r), Some(c)) => {
                        let new_row = !panel.rows.contains(&r);
                        if new_row && view.value == Value::Pct && matches!(view.row, Dim::Machine | Dim::Workload) {
                            if let Some(b) = spread(&sweep.values_of(metric, m, base, w)) {
                                panel.baseline_rows.push((r.clone(), b));
                            }
                        }
                        let ri = push_unique(&mut panel.rows, &r);
                        let ci = push_unique(&mut panel.cols, &c);
                        if panel.cells.len() <= ri {
                            panel.cells.resize(ri + 1, vec![]);
                        }
                        let row = &mut panel.cells[ri];
                        if row.len() <= ci {
                            row.resize(ci + 1, None);
                        }
                        row[ci] = cell;
                    }
                    _ => panel.others.push((labels::policy(&p.policy_specs[pi], entry.aliases), cell)),
                }
            }
        }
    }
    for panel in &mut panels {
        let nc = panel.cols.len();
        for row in &mut panel.cells {
            row.resize(nc, None);
        }
        let name = match view.summary {
            Summary::None => continue,
            Summary::Peak => "peak",
            Summary::Worst => "worst",
        };
        let best = (0..nc)
            .map(|c| {
                panel.cells.iter().filter_map(|r| r[c]).fold(None, |acc: Option<Cell>, x| match acc {
                    Some(a) if a.mean >= x.mean => Some(a),
                    _ => Some(x),
                })
            })
            .collect();
        panel.summary = Some((name.to_string(), best));
    }
    let (unit, scale) = match view.value {
        Value::Pct => (format!("% vs {base_label}"), 1.0),
        Value::Abs(u) => {
            let max =
                panels.iter().flat_map(|p| p.cells.iter().flatten().flatten().map(|c| c.max.abs())).fold(0.0, f64::max);
            let tp_unit =
                sweep.finished().next().map_or_else(|| "per s".to_string(), |r| r.report.throughput_unit.clone());
            unit_scale(u, max, &tp_unit)
        }
    };
    ViewTables {
        metric: metric.to_string(),
        label: field_label.to_string(),
        unit,
        row_name: labels::dim_name(view.row).to_string(),
        col_name: labels::dim_name(view.col).to_string(),
        lower_is_better: view.lower_is_better,
        panels,
        scale,
        pct: view.value == Value::Pct,
    }
}

/// The unit of a report field, read from its name (`throughput`, `*_ns`, `*ratio`,
/// `*pct`, else a count): for fields no catalog view describes.
pub fn unit_of(metric: &str) -> Unit {
    if metric == "throughput" {
        Unit::Throughput
    } else if metric.ends_with("_ns") {
        Unit::Time
    } else if metric.ends_with("ratio") {
        Unit::Ratio
    } else if metric.ends_with("pct") {
        Unit::Percent
    } else {
        Unit::Count
    }
}

/// The display unit and divisor for a table whose largest value is `max`.
pub fn unit_scale(u: Unit, max: f64, throughput_unit: &str) -> (String, f64) {
    let si = |base: &str| -> (String, f64) {
        if max >= 1e6 {
            (format!("M{base}"), 1e6)
        } else if max >= 1e4 {
            (format!("k{base}"), 1e3)
        } else {
            (base.to_string(), 1.0)
        }
    };
    match u {
        Unit::Throughput => {
            let (prefix, scale) = si("");
            (format!("{prefix} {throughput_unit}").trim().to_string(), scale)
        }
        Unit::Count => {
            let (prefix, scale) = si("");
            if prefix.is_empty() {
                ("count".into(), 1.0)
            } else {
                (format!("{prefix} (count)"), scale)
            }
        }
        Unit::Time => {
            if max >= 1e9 {
                ("s".into(), 1e9)
            } else if max >= 1e6 {
                ("ms".into(), 1e6)
            } else if max >= 1e3 {
                ("µs".into(), 1e3)
            } else {
                ("ns".into(), 1.0)
            }
        }
        Unit::Ratio => ("%".into(), 0.01),
        Unit::Percent => ("%".into(), 1.0),
    }
}

/// A number in a table: 3–4 significant digits, never `-0.0`.
pub fn num(x: f64) -> String {
    let a = x.abs();
    let s = if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    if s.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

/// A signed percentage: `+12.3`, `-0.4`, `+0.0`.
pub fn signed(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    format!("{:+.1}", if r == 0.0 { 0.0 } else { r })
}

/// A cell: `mean (min..max)`, or just the mean with one seed.
pub fn fmt_cell(c: &Option<Cell>, pct: bool, scale: f64) -> String {
    let Some(c) = c else { return "n/a".into() };
    let f = |x: f64| if pct { signed(x) } else { num(x / scale) };
    // The spread is shown only where it shows at this precision.
    if f(c.min) == f(c.max) {
        f(c.mean)
    } else {
        format!("{} ({}..{})", f(c.mean), f(c.min), f(c.max))
    }
}
