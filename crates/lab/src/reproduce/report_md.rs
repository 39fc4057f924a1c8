//! `report.md`: one section per experiment in catalog order, then the wall-clock
//! section (the only part that differs between two runs).

use super::tables::{fmt_cell, unit_of, unit_scale, Cell, Panel, ViewTables};
use super::{Measured, Reproduction, Section, MEASURED, WALL_HEADING};
use schedlab_sim::Machine;
use std::fmt::Write;

pub use crate::table::md_table;

/// The grid of one panel as header and rows of text (shared with the HTML report).
pub fn grid(t: &ViewTables, p: &Panel, pct: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head = vec![format!("{} \\ {}", t.row_name, t.col_name)];
    head.extend(p.cols.iter().cloned());
    let mut rows: Vec<Vec<String>> = p
        .rows
        .iter()
        .zip(&p.cells)
        .map(|(r, cells)| std::iter::once(r.clone()).chain(cells.iter().map(|c| fmt_cell(c, pct, t.scale))).collect())
        .collect();
    if let Some((name, cells)) = &p.summary {
        rows.push(
            std::iter::once(format!("**{name}**")).chain(cells.iter().map(|c| fmt_cell(c, pct, t.scale))).collect(),
        );
    }
    (head, rows)
}

/// The lines under a panel: policies off the grid, and the baseline's absolute value.
pub fn notes(t: &ViewTables, p: &Panel, pct: bool, tp_unit: &str) -> Vec<String> {
    let mut v: Vec<String> =
        p.others.iter().map(|(n, c)| format!("{n}: {} {}", fmt_cell(c, pct, t.scale), t.unit)).collect();
    match (&p.baseline, p.baseline_rows.len() > 1) {
        // One baseline run per row (CPU counts, Chat sizes): each row's own.
        (Some((name, _)), true) => {
            let per_row: Vec<String> =
                p.baseline_rows.iter().map(|(r, c)| format!("{r}: {}", abs(&t.metric, c, tp_unit))).collect();
            v.push(format!("{name} (the baseline), absolute `{}`: {}", t.metric, per_row.join("; ")));
        }
        (Some((name, c)), false) => {
            v.push(format!("{name} (the baseline), absolute `{}`: {}", t.metric, abs(&t.metric, c, tp_unit)));
        }
        (None, _) => {}
    }
    v
}

/// An absolute value with its unit chosen from the field's name.
fn abs(metric: &str, c: &Cell, tp_unit: &str) -> String {
    let (unit, scale) = unit_scale(unit_of(metric), c.max.abs(), tp_unit);
    fmt_cell(&Some(*c), false, scale) + " " + &unit
}

/// A machine and every cost-model parameter it was run with.
pub fn machine_line(spec: &str, m: &Machine) -> (String, String) {
    let head = format!(
        "`{spec}`: {}, {} CPUs in {} node(s) at {} MHz, L2 {} KB {}-way, {}-byte lines, HZ {}, IRQ affinity {}",
        m.name,
        m.cpus,
        m.nodes,
        m.mhz,
        m.l2_kb,
        m.l2_assoc,
        m.line_bytes,
        m.hz,
        if m.irq_affinity { "on" } else { "off" }
    );
    let costs = serde_json::to_value(&m.costs).expect("cost params serialise");
    let list = match costs.as_object() {
        Some(o) => o.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", "),
        None => String::new(),
    };
    (head, list)
}

/// The distinct cost models of a plan's machines, each with the machines that use it
/// (most experiments share one across all their machines: printed once).
pub fn cost_models(plan: &crate::Plan) -> Vec<(String, String)> {
    let mut out: Vec<(Vec<String>, String)> = Vec::new();
    for (spec, m) in plan.machine_specs.iter().zip(&plan.machines) {
        let costs = machine_line(spec, m).1;
        match out.iter_mut().find(|(_, c)| *c == costs) {
            Some((who, _)) => who.push(format!("`{spec}`")),
            None => out.push((vec![format!("`{spec}`")], costs)),
        }
    }
    let n = plan.machines.len();
    out.into_iter()
        .map(|(who, c)| (if who.len() == n && n > 1 { "every machine above".to_string() } else { who.join(", ") }, c))
        .collect()
}

pub fn throughput_unit(s: &Section) -> String {
    s.sweep.finished().next().map_or_else(String::new, |r| r.report.throughput_unit.clone())
}

/// The heading of a view's panel.
pub fn panel_heading(t: &ViewTables, p: &Panel) -> String {
    let better = if t.lower_is_better { ", lower is better" } else { "" };
    format!("{}, {}{better} — {}", t.label, t.unit, p.title)
}

fn section(s: &Section, i: usize, out: &mut String) {
    let e = s.entry;
    let plan = &s.sweep.plan;
    let _ = writeln!(out, "<a id=\"{}\"></a>\n\n## {}. {}: {}\n", e.name, i + 1, e.name, plan.title);
    let _ = writeln!(out, "- **Source:** {}", e.source);
    let _ = writeln!(out, "- **Form:** {}", e.form);
    let _ = writeln!(out, "- **Regenerate:** `{}`", s.command());
    let seeds: Vec<String> = plan.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        out,
        "- **Seeds:** {} — each cell is the mean over seeds with (min..max) over seeds; one value when a single seed",
        seeds.join(", ")
    );
    let _ = writeln!(out, "- **Runs:** {} ({} failed)", plan.runs().len(), s.sweep.failures.len());
    let _ = writeln!(out, "- **Machines and cost-model parameters:**");
    for (spec, m) in plan.machine_specs.iter().zip(&plan.machines) {
        let _ = writeln!(out, "  - {}", machine_line(spec, m).0);
    }
    for (who, costs) in cost_models(plan) {
        let _ = writeln!(out, "  - cost model of {who}: {costs}");
    }
    for f in &s.sweep.failures {
        let _ = writeln!(out, "- **Failed:** {}: {}", s.sweep.describe(&f.key), f.error);
    }
    out.push('\n');
    let tp = throughput_unit(s);
    for (v, view) in s.views.iter().enumerate() {
        let t = &view.tables;
        let pct = t.pct;
        for (k, p) in t.panels.iter().enumerate() {
            let _ = writeln!(out, "### {}\n", panel_heading(t, p));
            let (head, rows) = grid(t, p, pct);
            out.push_str(&md_table(&head, &rows));
            let notes = notes(t, p, pct, &tp);
            if !notes.is_empty() {
                out.push('\n');
                for n in notes {
                    let _ = writeln!(out, "- {n}");
                }
            }
            if view.plots[k].is_some() {
                let _ = writeln!(out, "\n![{}]({})", panel_heading(t, p), s.plot_path(v, k));
            }
            out.push('\n');
        }
    }
}

/// The whole of `report.md`.
pub fn render(rep: &Reproduction) -> String {
    let mut s = String::from("# schedlab reproduce: the 2001–2002 scheduler papers, re-run in the simulator\n\n");
    let mode = if rep.quick {
        "**quick** — the experiments' `[quick]` sizes (smaller workloads, fewer seeds, same structure): checks that every part runs; the numbers are not the papers' configurations"
    } else {
        "**full** — the experiments' own sizes and seeds"
    };
    let _ = writeln!(s, "Mode: {mode}.\n");
    s.push_str("Sources are numbered as in the project's spec (`seed-systems.md` §0): S1 the PMQS paper (Franke et al., ALS 2001), S6 the cache-colouring paper (Yamamura et al., FREENIX 2002), S10 Theurer's O(1) NetBench report (LKML, Jan 2002). Each section names its experiment file and the command that regenerates it; `results.json` has every number of every run.\n\n");
    s.push_str("## Contents\n\n");
    for (i, sec) in rep.sections.iter().enumerate() {
        let _ = writeln!(s, "{}. [{}](#{}) — {}", i + 1, sec.entry.name, sec.entry.name, sec.sweep.plan.title);
    }
    let _ = writeln!(s, "{}. [{WALL_HEADING}](#wall-clock)\n", rep.sections.len() + 1);
    for (i, sec) in rep.sections.iter().enumerate() {
        section(sec, i, &mut s);
    }
    let _ = writeln!(s, "<a id=\"wall-clock\"></a>\n\n## {WALL_HEADING}\n");
    s.push_str("Everything in this section was measured with a clock on this machine: it differs from run to run and is not in `results.json` (the real-runtime numbers are in `measured.json`).\n\n");
    s.push_str("### Wall clock of the simulations\n\n");
    let mut rows: Vec<Vec<String>> = rep
        .sections
        .iter()
        .map(|sec| {
            vec![
                sec.entry.name.to_string(),
                sec.sweep.plan.runs().len().to_string(),
                format!("{:.2}", sec.sweep.wall_s),
            ]
        })
        .collect();
    rows.push(vec![
        "**total**".into(),
        rep.sections.iter().map(|x| x.sweep.plan.runs().len()).sum::<usize>().to_string(),
        format!("{:.2}", rep.wall_s),
    ]);
    s.push_str(&md_table(&["experiment".into(), "runs".into(), "wall s".into()], &rows));
    let _ = writeln!(s, "\nWorker threads: {}.\n", rep.threads);
    measured(rep, &mut s);
    s
}

/// The real-runtime measurements, one sub-section per part.
fn measured(rep: &Reproduction, s: &mut String) {
    let Some(m) = &rep.measured else {
        let _ = writeln!(
            s,
            "The real-runtime measurements were not run (`--only` without `{MEASURED}`; `schedlab reproduce --only {MEASURED}` runs them alone).\n"
        );
        return;
    };
    let _ = writeln!(s, "Machine: {}. Measurements took {:.1} s.\n", m.machine, m.wall_s);
    for (pi, p) in m.parts.iter().enumerate() {
        let _ = writeln!(s, "### {}\n", p.title);
        for l in &p.lines {
            let _ = writeln!(s, "- {l}");
        }
        s.push('\n');
        if let Some(e) = &p.error {
            let _ = writeln!(s, "**Failed:** {e}\n");
            continue;
        }
        for (ti, t) in p.tables.iter().enumerate() {
            let _ = writeln!(s, "**{}**\n", t.caption);
            if !t.head.is_empty() {
                s.push_str(&md_table(&t.head, &t.rows));
            }
            if !t.notes.is_empty() {
                s.push('\n');
                for n in &t.notes {
                    let _ = writeln!(s, "- {n}");
                }
            }
            if t.plot.is_some() {
                let _ = writeln!(s, "\n![{}]({})", p.title, Measured::plot_path(pi, ti));
            }
            s.push('\n');
        }
    }
}
