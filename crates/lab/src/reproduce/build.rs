//! The report as a [`Doc`]: the claims summary first, then one section per experiment in
//! catalog order (each reproduced cell with the published value beside it, and a tally),
//! then the wall-clock section (the only part that differs between two runs).

use super::claims::{ClaimVerdict, Judged};
use super::compare::{judge, Comparison, Tally, Verdict};
use super::doc::{Block, Doc, TCell, Table, Tone};
use super::published::SOURCES;
use super::tables::{fmt_cell, num, signed, unit_of, unit_scale, Cell, Panel, ViewTables};
use super::{Measured, Reproduction, Section, MEASURED, WALL_HEADING};
use schedlab_sim::Machine;

pub const TITLE: &str = "schedlab reproduce: the 2001–2002 scheduler papers, re-run in the simulator";

/// A reproduced cell with the published value beside it: `here · paper P · Δ D`, with
/// the verdict's words where it does not agree.
fn with_paper(here: &Option<Cell>, paper: Option<f64>, pct: bool, scale: f64) -> TCell {
    let text = fmt_cell(here, pct, scale);
    let (Some(c), Some(p)) = (here, paper) else {
        return TCell { text: baseline_aware(here, text, pct), tone: Tone::Plain };
    };
    let v = judge(p, c.mean);
    let diff = if pct {
        format!("Δ {} pp", signed(c.mean - p))
    } else if p != 0.0 {
        format!("×{}", num(c.mean / p))
    } else {
        "×—".into()
    };
    let paper = if pct { signed(p) } else { num(p / scale) };
    let mark = if v == Verdict::Agrees { String::new() } else { format!(" · **{}**", v.mark()) };
    TCell {
        text: format!("{} · paper {paper} · {diff}{mark}", baseline_aware(here, text, pct)),
        tone: if v == Verdict::Agrees { Tone::Agrees } else { Tone::Differs },
    }
}

/// A % cell whose every seed equals the baseline exactly is the baseline's own run in
/// another name (PMQS with one pool of the whole machine): say so instead of `+0.0`.
fn baseline_aware(c: &Option<Cell>, text: String, pct: bool) -> String {
    match c {
        Some(c) if pct && c.mean == 0.0 && c.min == 0.0 && c.max == 0.0 => {
            "±0 (identical to the baseline in every seed)".into()
        }
        _ => text,
    }
}

fn grid(t: &ViewTables, p: &Panel) -> Table {
    let mut head = vec![format!("{} \\ {}", t.row_name, t.col_name)];
    head.extend(p.cols.iter().cloned());
    let paper = |r: usize, c: usize| p.published.get(r).and_then(|row| row.get(c).copied().flatten());
    let mut rows: Vec<Vec<TCell>> = p
        .rows
        .iter()
        .zip(&p.cells)
        .enumerate()
        .map(|(ri, (r, cells))| {
            std::iter::once(TCell::from(r.clone()))
                .chain(cells.iter().enumerate().map(|(ci, c)| with_paper(c, paper(ri, ci), t.pct, t.scale)))
                .collect()
        })
        .collect();
    if let Some((name, cells)) = &p.summary {
        let sp = |c: usize| p.summary_published.get(c).copied().flatten();
        rows.push(
            std::iter::once(TCell::from(format!("**{name}**")))
                .chain(cells.iter().enumerate().map(|(ci, c)| with_paper(c, sp(ci), t.pct, t.scale)))
                .collect(),
        );
    }
    Table { head, rows }
}

/// The lines under a panel: policies off the grid, and the baseline's absolute value.
fn notes(t: &ViewTables, p: &Panel, tp_unit: &str) -> Vec<String> {
    let mut v: Vec<String> = p
        .others
        .iter()
        .enumerate()
        .map(|(k, (n, c))| {
            let cell = with_paper(c, p.others_published.get(k).copied().flatten(), t.pct, t.scale);
            format!("{n}: {} {}", cell.text, t.unit)
        })
        .collect();
    match (&p.baseline, p.baseline_rows.len() > 1) {
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

/// The distinct cost models of a plan's machines, each with the machines that use it.
fn cost_models(plan: &crate::Plan) -> Vec<(String, String)> {
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

fn throughput_unit(s: &Section) -> String {
    s.sweep.finished().next().map_or_else(String::new, |r| r.report.throughput_unit.clone())
}

/// The heading of a view's panel.
pub fn panel_heading(t: &ViewTables, p: &Panel) -> String {
    let better = if t.lower_is_better { ", lower is better" } else { "" };
    format!("{}, {}{better} — {}", t.label, t.unit, p.title)
}

fn verdict_cell(v: ClaimVerdict) -> TCell {
    TCell {
        text: format!("**{}**", v.word()),
        tone: match v {
            ClaimVerdict::Holds => Tone::Agrees,
            ClaimVerdict::Fails => Tone::Differs,
            ClaimVerdict::CannotCheck => Tone::Plain,
        },
    }
}

/// The section a published table is reproduced in (its first experiment).
fn section_of<'a>(rep: &'a Reproduction, table: &str) -> Option<&'a str> {
    rep.comparisons.iter().find(|c| c.table == table).map(|c| c.experiment.as_str())
}

fn claims_table(rep: &Reproduction, claims: &[&Judged]) -> Table {
    let rows = claims
        .iter()
        .map(|j| {
            let sections: Vec<String> = rep
                .published
                .iter()
                .filter(|t| j.tables.contains(&t.id))
                .filter_map(|t| section_of(rep, &t.id))
                .map(|s| {
                    if rep.sections.iter().any(|x| x.entry.name == s) {
                        format!("[{s}](#{s})")
                    } else {
                        s.to_string()
                    }
                })
                .collect::<Vec<_>>();
            let mut uniq: Vec<String> = Vec::new();
            for s in sections {
                if !uniq.contains(&s) {
                    uniq.push(s);
                }
            }
            vec![
                TCell::from(format!("`{}`", j.id)),
                TCell::from(format!("{} ({})", j.claim, j.quote_ref)),
                verdict_cell(j.verdict),
                TCell::from(j.detail.clone()),
                TCell::from(if uniq.is_empty() { "—".to_string() } else { uniq.join(", ") }),
                TCell::from(format!("[why]({})", j.fidelity)),
            ]
        })
        .collect();
    Table {
        head: vec![
            "claim".into(),
            "the source says".into(),
            "verdict".into(),
            "here".into(),
            "section".into(),
            "fidelity".into(),
        ],
        rows,
    }
}

fn summary(rep: &Reproduction) -> Block {
    let count = |v: ClaimVerdict| rep.claims.iter().filter(|j| j.verdict == v).count();
    let mut blocks = vec![Block::Heading { level: 2, text: "Summary: the sources' claims, judged".into(), id: None }];
    blocks.push(Block::Para(format!(
        "{} claims the sources make in words, each a predicate over the runs of this report (`experiments/published/claims.toml`): **{} hold, {} fail, {} cannot be checked**. A claim that cannot be checked says why (a cell not run at `--quick` sizes, a real-machine figure, a quantity the model does not report). The [why] links lead to the explanation in `fidelity.md` beside this report (the repository's `docs/fidelity.md`).",
        rep.claims.len(),
        count(ClaimVerdict::Holds),
        count(ClaimVerdict::Fails),
        count(ClaimVerdict::CannotCheck)
    )));
    let all: Vec<&Judged> = rep.claims.iter().collect();
    blocks.push(Block::Table(claims_table(rep, &all)));
    blocks.push(Block::Heading {
        level: 3,
        text: "Published cells beside their reproduction, per source table".into(),
        id: None,
    });
    blocks.push(Block::Para(format!(
        "A cell **agrees** when the reproduction has the published value's sign and is within {}× of it (an observation given as a bound: when the bound holds). `experiments/published/` holds every value with its source, table, row, column, unit and sign convention.",
        super::compare::AGREE_FACTOR
    )));
    let rows = rep
        .published
        .iter()
        .map(|t| {
            let cs: Vec<&Comparison> = rep.comparisons.iter().filter(|c| c.table == t.id).collect();
            let tally = Tally::of(cs.iter().copied());
            let secs: Vec<String> = t
                .experiments()
                .iter()
                .map(|e| {
                    if rep.sections.iter().any(|s| s.entry.name == *e) {
                        format!("[{e}](#{e})")
                    } else {
                        e.to_string()
                    }
                })
                .collect();
            vec![
                format!("{} {}", t.source, t.table),
                t.caption.clone(),
                secs.join(", "),
                cs.len().to_string(),
                tally.agrees.to_string(),
                tally.opposite_sign.to_string(),
                tally.outside.to_string(),
                tally.not_run.to_string(),
            ]
        })
        .collect();
    blocks.push(Block::Table(Table::plain(
        vec![
            "table".into(),
            "what".into(),
            "section".into(),
            "cells".into(),
            "agree".into(),
            "opposite sign".into(),
            "outside 1.5×".into(),
            "not run".into(),
        ],
        rows,
    )));
    Block::Section { id: "summary".into(), blocks }
}

/// The comparisons of a section that have no place in its tables (a peak, an
/// observation's bound, a threshold, another field), as a table of their own.
fn off_grid<'a>(rep: &'a Reproduction, s: &Section) -> Vec<&'a Comparison> {
    rep.comparisons
        .iter()
        .filter(|c| c.experiment == s.entry.name)
        .filter(|c| {
            let shown = s.views.iter().any(|v| {
                v.tables.metric == c.metric
                    && ((v.tables.pct && c.compare == "pct") || (!v.tables.pct && c.compare == "value"))
            });
            !shown || c.reproduced.is_none()
        })
        .collect()
}

fn comparison_rows(cs: &[&Comparison]) -> Table {
    let rows = cs
        .iter()
        .map(|c| {
            let paper = match (c.published, c.at_least, c.at_most) {
                (Some(p), _, _) => num(p),
                (None, Some(a), Some(b)) => format!("{}–{}", num(a), num(b)),
                (None, Some(a), None) => format!("≥ {}", num(a)),
                (None, None, Some(b)) => format!("≤ {}", num(b)),
                _ => "?".into(),
            };
            let here = match (c.reproduced, c.reproduced_min, c.reproduced_max) {
                (Some(h), Some(lo), Some(hi)) if num(lo) != num(hi) => format!("{} ({}..{})", num(h), num(lo), num(hi)),
                (Some(h), _, _) => num(h),
                _ => "—".into(),
            };
            let tone = match c.verdict {
                Verdict::Agrees => Tone::Agrees,
                Verdict::NotRun => Tone::Plain,
                _ => Tone::Differs,
            };
            vec![
                TCell::from(format!("{} / {}", c.row, c.col)),
                TCell::from(format!("`{}` ({})", c.metric, c.compare)),
                TCell::from(c.unit.clone()),
                TCell::from(paper),
                TCell::from(here),
                TCell::from(c.ratio.map_or_else(|| "—".into(), |r| format!("×{}", num(r)))),
                TCell { text: format!("**{}**", c.verdict.mark()), tone },
                TCell::from(c.detail.clone()),
            ]
        })
        .collect();
    Table {
        head: vec![
            "cell".into(),
            "field".into(),
            "unit".into(),
            "paper".into(),
            "here".into(),
            "ratio".into(),
            "verdict".into(),
            "how".into(),
        ],
        rows,
    }
}

fn section(rep: &Reproduction, s: &Section, i: usize) -> Block {
    let e = s.entry;
    let plan = &s.sweep.plan;
    let mut b = vec![Block::Heading { level: 2, text: format!("{}. {}: {}", i + 1, e.name, plan.title), id: None }];
    let seeds: Vec<String> = plan.seeds.iter().map(u64::to_string).collect();
    let mut fields = vec![
        ("Source".to_string(), e.source.to_string()),
        ("Form".into(), e.form.to_string()),
        ("Regenerate".into(), format!("`{}`", s.command())),
        (
            "Seeds".into(),
            format!(
                "{} — each cell is the mean over seeds with (min..max) over seeds; one value when a single seed",
                seeds.join(", ")
            ),
        ),
        ("Runs".into(), format!("{} ({} failed)", plan.runs().len(), s.sweep.failures.len())),
        (
            "Fidelity".into(),
            format!(
                "[{0}]({0}): why this section differs from its source, where it does (`docs/fidelity.md`, copied beside this report)",
                super::fidelity_link(e.name)
            ),
        ),
    ];
    for f in &s.sweep.failures {
        fields.push(("Failed".into(), format!("{}: {}", s.sweep.describe(&f.key), f.error)));
    }
    b.push(Block::Fields(fields));
    let mut machines: Vec<String> =
        plan.machine_specs.iter().zip(&plan.machines).map(|(sp, m)| machine_line(sp, m).0).collect();
    machines.insert(0, "**Machines:**".into());
    b.push(Block::List(machines));
    for (who, costs) in cost_models(plan) {
        b.push(Block::Details { summary: format!("cost model of {who}"), body: costs });
    }
    let tp = throughput_unit(s);
    for (v, view) in s.views.iter().enumerate() {
        let t = &view.tables;
        for (k, p) in t.panels.iter().enumerate() {
            b.push(Block::Heading { level: 3, text: panel_heading(t, p), id: None });
            let mut left = vec![Block::Table(grid(t, p))];
            let n = notes(t, p, &tp);
            if !n.is_empty() {
                left.push(Block::List(n));
            }
            let mut row = vec![Block::Group(left)];
            if let Some(svg) = &view.plots[k] {
                let has_paper = p.published.iter().flatten().any(Option::is_some);
                let caption = format!(
                    "{}. Whiskers: min..max over seeds {:?}.{}",
                    panel_heading(t, p),
                    plan.seeds,
                    if has_paper { " Black markers: the source's published values." } else { "" }
                );
                row.push(Block::Figure {
                    svg: svg.clone(),
                    path: s.plot_path(v, k),
                    alt: panel_heading(t, p),
                    caption,
                });
            }
            b.push(Block::Row(row));
        }
    }
    let extra = off_grid(rep, s);
    if !extra.is_empty() {
        b.push(Block::Heading { level: 3, text: "Published cells not in the tables above".into(), id: None });
        b.push(Block::Table(comparison_rows(&extra)));
    }
    let mine: Vec<&Comparison> = rep.comparisons.iter().filter(|c| c.experiment == e.name).collect();
    let claims: Vec<&Judged> = rep
        .claims
        .iter()
        .filter(|j| j.tables.iter().any(|t| rep.comparisons.iter().any(|c| c.table == *t && c.experiment == e.name)))
        .collect();
    if !claims.is_empty() {
        b.push(Block::Heading { level: 3, text: "Claims on this section's tables".into(), id: None });
        b.push(Block::Table(claims_table(rep, &claims)));
    }
    let tally = if mine.is_empty() {
        "the sources publish no values for this section's tables".to_string()
    } else {
        Tally::of(mine.iter().copied()).line()
    };
    b.push(Block::Para(format!("**Against the source:** {tally}.")));
    Block::Section { id: e.name.to_string(), blocks: b }
}

fn sources_para() -> String {
    let tags: Vec<String> = SOURCES.iter().map(|(t, c, url)| format!("**{t}** {c} ({url})")).collect();
    format!(
        "Sources (full citations in the repository's `docs/sources.md`): {}. Each section names its experiment file and the command that regenerates it; `results.json` has every number of every run, every published cell beside its reproduction and every claim's verdict.",
        tags.join("; ")
    )
}

fn wall(rep: &Reproduction) -> Block {
    let mut b = vec![Block::Heading { level: 2, text: WALL_HEADING.into(), id: None }];
    b.push(Block::Para("Everything in this section was measured with a clock on this machine: it differs from run to run and is not in `results.json` (the real-runtime numbers are in `measured.json`).".into()));
    b.push(Block::Heading { level: 3, text: "Wall clock of the simulations".into(), id: None });
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
    b.push(Block::Table(Table::plain(vec!["experiment".into(), "runs".into(), "wall s".into()], rows)));
    b.push(Block::Para(format!("Worker threads: {}.", rep.threads)));
    measured(rep, &mut b);
    Block::Section { id: "wall-clock".into(), blocks: b }
}

fn measured(rep: &Reproduction, b: &mut Vec<Block>) {
    let Some(m) = &rep.measured else {
        b.push(Block::Para(format!(
            "The real-runtime measurements were not run (`--only` without `{MEASURED}`; `schedlab reproduce --only {MEASURED}` runs them alone)."
        )));
        return;
    };
    b.push(Block::Para(format!("Machine: {}. Measurements took {:.1} s.", m.machine, m.wall_s)));
    b.push(Block::Heading {
        level: 3,
        text: "The real-machine figures of the sources beside this run".into(),
        id: None,
    });
    b.push(Block::Para("S7's figures were measured in 2002 on 1 GHz Pentium III nodes over Myrinet; here two PEs of one process on this machine. The verdicts use the report's rule; a gap of this kind is the hardware's, which is why these cells are judged only here, never in the deterministic part.".into()));
    b.push(Block::Table(measured_against_source(rep, m)));
    for (pi, p) in m.parts.iter().enumerate() {
        b.push(Block::Heading { level: 3, text: p.title.clone(), id: None });
        if !p.lines.is_empty() {
            b.push(Block::List(p.lines.clone()));
        }
        if let Some(e) = &p.error {
            b.push(Block::Para(format!("**Failed:** {e}")));
            continue;
        }
        for (ti, t) in p.tables.iter().enumerate() {
            b.push(Block::Para(format!("**{}**", t.caption)));
            if !t.head.is_empty() {
                b.push(Block::Table(Table::plain(t.head.clone(), t.rows.clone())));
            }
            if !t.notes.is_empty() {
                b.push(Block::List(t.notes.clone()));
            }
            if let Some(svg) = &t.plot {
                b.push(Block::Figure {
                    svg: svg.clone(),
                    path: Measured::plot_path(pi, ti),
                    alt: p.title.clone(),
                    caption: t.caption.clone(),
                });
            }
        }
    }
}

/// The published cells of the measured part beside `measured.json`'s `fields`.
fn measured_against_source(rep: &Reproduction, m: &Measured) -> Table {
    let mut rows = Vec::new();
    for t in &rep.published {
        for c in t.cells.iter().filter(|c| c.experiment == super::published::MEASURED_EXPERIMENT) {
            let here = m.json["fields"][&c.metric].as_f64().map(|v| v / c.to_report);
            let (verdict, ratio) = match (here, c.given) {
                (None, _) => (Verdict::NotRun, None),
                (Some(h), super::published::Given::Value(p)) => (judge(p, h), Some(h / p)),
                (Some(h), super::published::Given::Bounds { at_least, at_most }) => (
                    if at_least.is_none_or(|lo| h >= lo) && at_most.is_none_or(|hi| h <= hi) {
                        Verdict::Agrees
                    } else {
                        Verdict::Outside
                    },
                    None,
                ),
            };
            let tone = match verdict {
                Verdict::Agrees => Tone::Agrees,
                Verdict::NotRun => Tone::Plain,
                _ => Tone::Differs,
            };
            rows.push(vec![
                TCell::from(format!("{} {}: {} / {}", t.source, t.table, c.row, c.col)),
                TCell::from(format!("`{}`", c.metric)),
                TCell::from(c.given.show(&c.unit)),
                TCell::from(
                    here.map_or_else(|| "not measured (needs `--mpi`)".into(), |h| format!("{} {}", num(h), c.unit)),
                ),
                TCell::from(ratio.map_or_else(|| "—".into(), |r| format!("×{}", num(r)))),
                TCell { text: format!("**{}**", verdict.mark()), tone },
            ]);
        }
    }
    Table {
        head: vec!["cell".into(), "field".into(), "paper".into(), "here".into(), "ratio".into(), "verdict".into()],
        rows,
    }
}

/// The whole report.
pub fn build(rep: &Reproduction) -> Doc {
    let mode = if rep.quick {
        "**quick** — the experiments' `[quick]` sizes (shorter runs, fewer configurations and seeds, the same structure): checks that every part runs; its numbers are not the papers' configurations, and cells compare with the source only where the quick run has the source's configuration"
    } else {
        "**full** — the experiments' own sizes and seeds"
    };
    let mut blocks = vec![Block::Para(format!("Mode: {mode}.")), Block::Para(sources_para())];
    blocks.push(summary(rep));
    let mut contents: Vec<String> = vec!["[Summary: the sources' claims, judged](#summary)".into()];
    for (i, sec) in rep.sections.iter().enumerate() {
        contents.push(format!("{}. [{}](#{}) — {}", i + 1, sec.entry.name, sec.entry.name, sec.sweep.plan.title));
    }
    contents.push(format!("[{WALL_HEADING}](#wall-clock)"));
    blocks.push(Block::Heading { level: 2, text: "Contents".into(), id: None });
    blocks.push(Block::List(contents));
    for (i, sec) in rep.sections.iter().enumerate() {
        blocks.push(section(rep, sec, i));
    }
    blocks.push(wall(rep));
    Doc { title: TITLE.into(), blocks }
}
