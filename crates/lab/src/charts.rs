//! The charts `schedlab sweep` writes beside its table: each field drawn as the report
//! draws it (`reproduce::tables` and `reproduce::plots`), so that a sweep's `chart.svg`
//! and the report's plot of the same experiment are the same picture.
//!
//! * An experiment in the reproduce catalog is seen through the catalog's view of that
//!   field (PMQS Chat: % vs MQS, pool-size groups with a bar per balancer).
//! * Any other experiment gets a generic view: % vs its baseline for the main metric,
//!   the value itself for each `also` field, one group per workload, a bar per policy,
//!   one panel per machine.
//!
//! Each panel is one chart titled by its heading; the panels of a field are stacked
//! in one SVG under the sweep's title.

use crate::reproduce::catalog::{self, Dim, Entry, Plot, Summary, Unit, Value, View};
use crate::reproduce::tables::unit_of;
use crate::reproduce::{plots, tables};
use crate::LabError;
use crate::Sweep;
use std::fmt::Write;

/// An experiment outside the catalog: no source, no aliases, no views of its own.
const GENERIC: Entry = Entry { name: "", file: "", source: "", form: "", aliases: &[], views: &[] };

/// The view `metric` is drawn through: the catalog's, else a generic one.
fn view_of(entry: Option<&'static Entry>, metric: &str, is_main: bool) -> View {
    if let Some(v) = entry.and_then(|e| e.views.iter().find(|v| v.metric == metric)) {
        // A catalog view without a plot (an absolute table) is still charted here.
        let plot = match v.plot {
            Plot::None => Plot::Bars { groups_are_cols: false },
            p => p,
        };
        return View { plot, ..*v };
    }
    View {
        metric: "",
        label: "",
        value: if is_main { Value::Pct } else { Value::Abs(unit_of(metric)) },
        panel: Dim::Machine,
        row: Dim::Workload,
        col: Dim::Policy,
        summary: Summary::None,
        plot: Plot::Bars { groups_are_cols: false },
        lower_is_better: false,
    }
}

/// The chart of one field (`metric`: the sweep's main metric or one of its `also`
/// fields) as one SVG document, panels stacked, each titled by its heading.
pub fn chart(sweep: &Sweep, metric: &str) -> Result<String, LabError> {
    let plan = &sweep.plan;
    let entry = catalog::find(&plan.name);
    let is_main = metric == plan.metric;
    let view = view_of(entry, metric, is_main);
    // A generic view names the field at run time (`metric: ""` in the view).
    let t = if view.metric.is_empty() {
        tables::build_field(&GENERIC, &view, sweep, metric, metric)
    } else {
        tables::build(entry.unwrap_or(&GENERIC), &view, sweep)
    };
    let tp_unit = sweep.finished().next().map_or_else(|| "per s".to_string(), |r| r.report.throughput_unit.clone());
    let base_unit = match view.value {
        Value::Abs(u) => u,
        Value::Pct => unit_of(metric),
    };
    let mut parts = Vec::new();
    for p in &t.panels {
        // The panel's heading is its plot's title.
        let heading = panel_heading(&t, p, base_unit, &tp_unit);
        let svg = match view.plot {
            Plot::Lines { x_label } => plots::lines_titled(&t, p, t.pct, x_label, &heading)?,
            Plot::Bars { groups_are_cols } => plots::bars_titled(&t, p, t.pct, groups_are_cols, &heading)?,
            Plot::None => unreachable!("view_of gives every view a plot"),
        };
        parts.push(svg);
    }
    Ok(stack(&plan.title, &parts))
}

/// The panel's heading: what the chart shows, and for a % chart the baseline's own
/// value, so that the reader has the scale.
fn panel_heading(t: &tables::ViewTables, p: &tables::Panel, base_unit: Unit, tp_unit: &str) -> String {
    let better = if t.lower_is_better { ", lower is better" } else { "" };
    // The baseline's own value gives the scale, when the panel has one baseline (rows
    // of several machines or workloads each have their own: the table lists them).
    let base = match &p.baseline {
        Some((name, c)) if p.baseline_rows.len() <= 1 => {
            let (unit, scale) = tables::unit_scale(base_unit, c.mean.abs(), tp_unit);
            format!(" ({name} = {} {unit})", tables::num(c.mean / scale))
        }
        _ => String::new(),
    };
    format!("{}, {}{better} — {}{base}", t.label, t.unit, p.title)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Nest each panel's `<svg>` (which carries its heading as its title), one below the
/// other, in one document under the sweep's title.
fn stack(title: &str, parts: &[String]) -> String {
    let width = plots::W;
    let title_h = 34;
    let height = title_h + parts.len() as u32 * plots::H;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(out, "<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#FFFFFF\"/>");
    let _ = writeln!(
        out,
        "<text x=\"10\" y=\"24\" font-family=\"sans-serif\" font-size=\"17\" font-weight=\"bold\">{}</text>",
        escape(title)
    );
    let mut y = title_h;
    for svg in parts {
        // The panel's own document, placed by its x/y (nested <svg> is plain SVG 1.1).
        let body = svg.trim_start().strip_prefix("<svg").unwrap_or(svg);
        let _ = writeln!(out, "<svg x=\"0\" y=\"{y}\"{body}");
        y += plots::H;
    }
    out.push_str("</svg>\n");
    out
}
