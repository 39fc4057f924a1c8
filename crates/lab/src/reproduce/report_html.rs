//! `index.html`: the report as one self-contained page — inline CSS, the plots as
//! inline SVG, no script, no network — with the wall-clock section last and apart.

use super::report_md::{cost_models, grid, machine_line, notes, panel_heading, throughput_unit};
use super::{Reproduction, Section, MEASURED, WALL_HEADING};
use std::fmt::Write;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Markdown's `**x**` and `` `x` `` in our own generated strings, as HTML.
fn inline(s: &str) -> String {
    let mut out = String::new();
    let (mut code, mut bold) = (false, false);
    let mut rest = esc(s);
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("**") {
            out.push_str(if bold { "</strong>" } else { "<strong>" });
            bold = !bold;
            rest = r.to_string();
        } else if let Some(r) = rest.strip_prefix('`') {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
            rest = r.to_string();
        } else {
            let c = rest.chars().next().expect("non-empty");
            out.push(c);
            rest = rest[c.len_utf8()..].to_string();
        }
    }
    out
}

fn table(head: &[String], rows: &[Vec<String>]) -> String {
    let mut s = String::from("<table>\n<thead><tr>");
    for h in head {
        let _ = write!(s, "<th>{}</th>", inline(h));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        s.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let _ = write!(
                s,
                "{}{}{}",
                if i == 0 { "<th>" } else { "<td>" },
                inline(c),
                if i == 0 { "</th>" } else { "</td>" }
            );
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody>\n</table>\n");
    s
}

/// An SVG for inlining: without its XML declaration.
fn svg_inline(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

fn section(s: &Section, i: usize, out: &mut String) {
    let e = s.entry;
    let plan = &s.sweep.plan;
    let _ = writeln!(out, "<section id=\"{}\">\n<h2>{}. {}: {}</h2>", e.name, i + 1, e.name, esc(&plan.title));
    out.push_str("<dl>\n");
    let _ = writeln!(out, "<dt>Source</dt><dd>{}</dd>", inline(e.source));
    let _ = writeln!(out, "<dt>Form</dt><dd>{}</dd>", inline(e.form));
    let _ = writeln!(out, "<dt>Regenerate</dt><dd><code>{}</code></dd>", esc(&s.command()));
    let seeds: Vec<String> = plan.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        out,
        "<dt>Seeds</dt><dd>{} — each cell is the mean over seeds with (min..max) over seeds</dd>",
        seeds.join(", ")
    );
    let _ = writeln!(out, "<dt>Runs</dt><dd>{} ({} failed)</dd>", plan.runs().len(), s.sweep.failures.len());
    out.push_str("<dt>Machines</dt><dd><ul>\n");
    for (spec, m) in plan.machine_specs.iter().zip(&plan.machines) {
        let _ = writeln!(out, "<li>{}</li>", inline(&machine_line(spec, m).0));
    }
    for (who, costs) in cost_models(plan) {
        let _ = writeln!(
            out,
            "<li><details><summary>cost model of {}</summary><p class=\"costs\">{}</p></details></li>",
            inline(&who),
            esc(&costs)
        );
    }
    out.push_str("</ul></dd>\n");
    for f in &s.sweep.failures {
        let _ = writeln!(out, "<dt>Failed</dt><dd>{}: {}</dd>", esc(&s.sweep.describe(&f.key)), esc(&f.error));
    }
    out.push_str("</dl>\n");
    let tp = throughput_unit(s);
    for view in &s.views {
        let t = &view.tables;
        for (k, p) in t.panels.iter().enumerate() {
            let _ = writeln!(out, "<h3>{}</h3>\n<div class=\"view\">\n<div>", esc(&panel_heading(t, p)));
            let (head, rows) = grid(t, p, t.pct);
            out.push_str(&table(&head, &rows));
            let notes = notes(t, p, t.pct, &tp);
            if !notes.is_empty() {
                out.push_str("<ul class=\"notes\">\n");
                for n in notes {
                    let _ = writeln!(out, "<li>{}</li>", inline(&n));
                }
                out.push_str("</ul>\n");
            }
            out.push_str("</div>\n");
            if let Some(svg) = &view.plots[k] {
                let _ = writeln!(out, "<figure>{}</figure>", svg_inline(svg));
            }
            out.push_str("</div>\n");
        }
    }
    out.push_str("</section>\n");
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1400px;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ccc;padding:.2em .6em}td{text-align:right}thead th{background:#f0f0f0}tbody th{text-align:left;font-weight:normal}
section{border-top:2px solid #888;margin-top:2em}dt{font-weight:bold;float:left;clear:left;width:7em}dd{margin-left:8em}
.view{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}figure{margin:0}
.costs{font-size:80%;color:#555}#wall-clock{border-top:4px double #b00;background:#fff8f0}code{background:#f4f4f4}";

/// The whole of `index.html`.
pub fn render(rep: &Reproduction) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>schedlab reproduce</title>\n",
    );
    let _ = writeln!(s, "<style>\n{STYLE}\n</style>\n</head>\n<body>");
    s.push_str("<h1>schedlab reproduce: the 2001–2002 scheduler papers, re-run in the simulator</h1>\n");
    let mode = if rep.quick {
        "<strong>quick</strong>: the experiments' <code>[quick]</code> sizes (smaller workloads, fewer seeds, same structure); the numbers are not the papers' configurations"
    } else {
        "<strong>full</strong>: the experiments' own sizes and seeds"
    };
    let _ = writeln!(s, "<p>Mode: {mode}. Sources: S1 the PMQS paper (Franke et al., ALS 2001), S6 the cache-colouring paper (Yamamura et al., FREENIX 2002), S10 Theurer's O(1) NetBench report (LKML, Jan 2002). <code>results.json</code> beside this page has every number.</p>");
    s.push_str("<nav><h2>Contents</h2><ol>\n");
    for sec in &rep.sections {
        let _ = writeln!(s, "<li><a href=\"#{0}\">{0}</a> — {1}</li>", sec.entry.name, esc(&sec.sweep.plan.title));
    }
    let _ = writeln!(s, "<li><a href=\"#wall-clock\">{WALL_HEADING}</a></li>\n</ol></nav>");
    for (i, sec) in rep.sections.iter().enumerate() {
        section(sec, i, &mut s);
    }
    let _ = writeln!(s, "<section id=\"wall-clock\">\n<h2>{WALL_HEADING}</h2>");
    s.push_str("<p>Everything in this section was measured with a clock on this machine: it differs from run to run and is not in <code>results.json</code> (the real-runtime numbers are in <code>measured.json</code>).</p>\n");
    s.push_str("<h3>Wall clock of the simulations</h3>\n");
    let mut rows: Vec<Vec<String>> = rep
        .sections
        .iter()
        .map(|x| {
            vec![x.entry.name.to_string(), x.sweep.plan.runs().len().to_string(), format!("{:.2}", x.sweep.wall_s)]
        })
        .collect();
    rows.push(vec![
        "**total**".into(),
        rep.sections.iter().map(|x| x.sweep.plan.runs().len()).sum::<usize>().to_string(),
        format!("{:.2}", rep.wall_s),
    ]);
    s.push_str(&table(&["experiment".into(), "runs".into(), "wall s".into()], &rows));
    let _ = writeln!(s, "<p>Worker threads: {}.</p>", rep.threads);
    measured(rep, &mut s);
    s.push_str("</section>\n</body>\n</html>\n");
    s
}

/// The real-runtime measurements, one sub-section per part (as in report.md).
fn measured(rep: &Reproduction, s: &mut String) {
    let Some(m) = &rep.measured else {
        let _ = writeln!(
            s,
            "<p>The real-runtime measurements were not run (<code>--only</code> without <code>{MEASURED}</code>; <code>schedlab reproduce --only {MEASURED}</code> runs them alone).</p>"
        );
        return;
    };
    let _ = writeln!(s, "<p>Machine: {}. Measurements took {:.1} s.</p>", esc(&m.machine), m.wall_s);
    for p in &m.parts {
        let _ = writeln!(s, "<h3>{}</h3>", esc(&p.title));
        if !p.lines.is_empty() {
            s.push_str("<ul>\n");
            for l in &p.lines {
                let _ = writeln!(s, "<li>{}</li>", inline(l));
            }
            s.push_str("</ul>\n");
        }
        if let Some(e) = &p.error {
            let _ = writeln!(s, "<p><strong>Failed:</strong> {}</p>", esc(e));
            continue;
        }
        for t in &p.tables {
            let _ = writeln!(s, "<p><strong>{}</strong></p>", inline(&t.caption));
            if !t.head.is_empty() {
                s.push_str(&table(&t.head, &t.rows));
            }
            if !t.notes.is_empty() {
                s.push_str("<ul class=\"notes\">\n");
                for n in &t.notes {
                    let _ = writeln!(s, "<li>{}</li>", inline(n));
                }
                s.push_str("</ul>\n");
            }
            if let Some(svg) = &t.plot {
                let _ = writeln!(s, "<figure>{}</figure>", svg_inline(svg));
            }
        }
    }
}
