//! The comparison table: per (workload, machine) row, each policy's mean percentage
//! difference of the metric from the baseline's, `100·(X−B)/B`, paired by seed.

use std::fmt::Write;

/// Mean, spread and standard deviation of per-seed percentage differences.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PctCell {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub stddev: f64,
}

/// Mean and standard deviation (population) of `xs`; `(NaN, NaN)` when empty.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// `100·(x[i]−b[i])/b[i]` for each seed `i`, summarised. `None` when the lists are
/// empty, of different lengths, a baseline value is 0 (undefined percentage), or a
/// value is missing (NaN: its run failed).
pub fn pct_diff(x: &[f64], b: &[f64]) -> Option<PctCell> {
    if x.is_empty()
        || x.len() != b.len()
        || b.iter().any(|&v| v == 0.0 || !v.is_finite())
        || x.iter().any(|v| !v.is_finite())
    {
        return None;
    }
    let d: Vec<f64> = x.iter().zip(b).map(|(&x, &b)| 100.0 * (x - b) / b).collect();
    let (mean, stddev) = mean_sd(&d);
    let min = d.iter().copied().fold(f64::INFINITY, f64::min);
    let max = d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(PctCell { mean, min, max, stddev })
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub workload: String,
    pub machine: String,
    /// The baseline's absolute mean and standard deviation over seeds.
    pub baseline_mean: f64,
    pub baseline_sd: f64,
    /// Mean of the metric per policy (all policies, in the experiment's order).
    pub means: Vec<f64>,
    /// Percentage difference per non-baseline policy (same order as [`Table::compared`]).
    pub cells: Vec<Option<PctCell>>,
}

/// The whole table.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub title: String,
    pub metric: String,
    pub baseline: String,
    /// Non-baseline policies, in the experiment's order: the percentage columns.
    pub compared: Vec<String>,
    pub rows: Vec<Row>,
}

/// Format a percentage cell: `+12.3 % (+10.1..+14.0)`.
pub fn fmt_cell(c: &Option<PctCell>) -> String {
    match c {
        Some(c) => format!("{} % ({}..{})", fmt_pct(c.mean), fmt_pct(c.min), fmt_pct(c.max)),
        None => "n/a".into(),
    }
}

/// `+12.3`, `-0.4`, and `+0.0` for anything that rounds to zero (never `-0.0`).
fn fmt_pct(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    format!("{:+.1}", if r == 0.0 { 0.0 } else { r })
}

/// Format an absolute value with 4 significant-ish digits.
pub fn fmt_abs(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    let a = x.abs();
    if a >= 1e6 {
        format!("{x:.4e}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

impl Table {
    /// A Markdown table: one row per policy (the baseline first, in absolute terms),
    /// one column per workload × machine. Policies are many (a PMQS matrix has 20+),
    /// workloads few, so this orientation stays readable on a screen and in a paper.
    pub fn to_markdown(&self) -> String {
        let multi_machine = self.rows.iter().any(|r| r.machine != self.rows[0].machine);
        let mut head = vec!["policy".to_string()];
        head.extend(self.rows.iter().map(|r| {
            if multi_machine {
                format!("{} @ {}", r.workload, r.machine)
            } else {
                r.workload.clone()
            }
        }));
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut base = vec![format!("{} ({}, absolute)", self.baseline, self.metric)];
        base.extend(self.rows.iter().map(|r| format!("{} ± {}", fmt_abs(r.baseline_mean), fmt_abs(r.baseline_sd))));
        rows.push(base);
        for (j, p) in self.compared.iter().enumerate() {
            let mut cells = vec![format!("{p} vs {}", self.baseline)];
            cells.extend(self.rows.iter().map(|r| fmt_cell(&r.cells[j])));
            rows.push(cells);
        }
        let machine_note = match (multi_machine, self.rows.first()) {
            (false, Some(r)) => format!(" Machine: {}.", r.machine),
            _ => String::new(),
        };
        let mut s = format!("## {}\n\n", self.title);
        let _ = writeln!(
            s,
            "Cells: mean over seeds of 100·(X−B)/B for metric `{}`, baseline B = `{}` (same seed), with min..max over seeds; first row: the baseline's absolute mean ± stddev.{}\n",
            self.metric,
            self.baseline,
            machine_note
        );
        s.push_str(&md_table(&head, &rows));
        s
    }
}

/// A Markdown table, first column left-aligned, the others right-aligned.
pub fn md_table(head: &[String], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..head.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([head[i].chars().count()]).max().unwrap_or(0))
        .collect();
    let line = |cells: &[String]| {
        let mut s = String::from("|");
        for (i, c) in cells.iter().enumerate() {
            let pad = " ".repeat(widths[i] - c.chars().count());
            if i == 0 {
                let _ = write!(s, " {c}{pad} |");
            } else {
                let _ = write!(s, " {pad}{c} |");
            }
        }
        s + "\n"
    };
    let mut s = line(head);
    s.push('|');
    for (i, w) in widths.iter().enumerate() {
        let _ = write!(s, "{}{}|", "-".repeat(w + 1), if i == 0 { "-" } else { ":" });
    }
    s.push('\n');
    for r in rows {
        s.push_str(&line(r));
    }
    s
}
