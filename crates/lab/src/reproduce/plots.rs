//! The report's plots, as SVG text (plotters' SVG backend), drawn from the same
//! [`Panel`] as the table beside them: what the table shows (% vs the baseline, or the
//! value in the table's unit), min..max whiskers over seeds, the source's published
//! values as black-outlined diamonds, the legend in its own column right of the data,
//! and axis labels in the table's unit (`+20 %`, `600`, with the `k`/`M` in the axis
//! title). Every plot carries its title (a `<title>` element and a visible line) and a
//! caption line saying what the marks are.
//!
//! A scheduler has one colour and one marker in every plot of the report ([`style_of`]:
//! by its label, not by its position), so that vanilla, c32, MQ, O(1) and the PMQS
//! balancers read the same from one figure to the next.

use super::labels::number_in;
use super::tables::{Cell, Panel, ViewTables};
use crate::LabError;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of a plot.
pub const W: u32 = 860;
/// Height of a plot, title and caption lines included.
pub const H: u32 = 384;
const LEGEND_W: u32 = 215;
/// The title line above the chart.
const TITLE_H: u32 = 28;
/// The caption line under the chart.
const CAPTION_H: u32 = 22;

/// A series' point marker (line plots and legends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Up,
    Down,
}

/// How one series is drawn wherever it appears.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    pub colour: RGBColor,
    pub marker: Marker,
    /// Variants of a scheduler (O(1) with an option) are dashed beside the solid original.
    pub dashed: bool,
}

const fn st(r: u8, g: u8, b: u8, marker: Marker, dashed: bool) -> Style {
    Style { colour: RGBColor(r, g, b), marker, dashed }
}

// Okabe–Ito for the schedulers that meet in most plots (distinguishable for the common
// colour-vision deficiencies), Paul Tol's "muted" for the rest.
const DSS: Style = st(0, 114, 178, Marker::Circle, false);
const MQ: Style = st(0, 158, 115, Marker::Up, false);
const O1: Style = st(213, 94, 0, Marker::Circle, false);
const O1_SCALE_OFF: Style = st(204, 121, 167, Marker::Up, true);
const O1_GUARD: Style = st(51, 34, 136, Marker::Square, true);
const O1_OTHER: Style = st(68, 170, 153, Marker::Down, true);
const CFS: Style = st(86, 180, 233, Marker::Down, false);
const EEVDF: Style = st(0, 0, 0, Marker::Square, false);
const C4: Style = st(221, 204, 119, Marker::Circle, false);
const C8: Style = st(153, 153, 51, Marker::Down, false);
const C16: Style = st(136, 34, 85, Marker::Up, false);
const C32: Style = st(230, 159, 0, Marker::Square, false);
const LBOFF: Style = st(204, 102, 119, Marker::Square, false);
const IP: Style = st(68, 170, 153, Marker::Circle, false);
const LBP45: Style = st(170, 68, 153, Marker::Up, false);
const LBP10: Style = st(140, 81, 10, Marker::Down, false);
const LBP_OTHER: Style = st(153, 153, 51, Marker::Down, true);
const LBC: Style = st(68, 68, 68, Marker::Circle, false);
/// Labels no rule knows: picked by a hash of the label, so still fixed per label.
const FALLBACK: [Style; 6] = [
    st(17, 119, 51, Marker::Square, false),
    st(136, 204, 238, Marker::Up, false),
    st(117, 112, 179, Marker::Down, false),
    st(166, 118, 29, Marker::Circle, false),
    st(102, 102, 102, Marker::Square, true),
    st(231, 41, 138, Marker::Up, true),
];

/// The published value's marker: a black-outlined white diamond.
const PAPER: RGBColor = RGBColor(0, 0, 0);
/// Reference lines and cut marks.
const GREY: RGBColor = RGBColor(110, 110, 110);
/// Grid lines at the ticks.
const GRID: RGBColor = RGBColor(225, 225, 225);

/// The colour count of a DSS-with-colours label (`c32`, `32 colours`).
fn colours_in(l: &str) -> Option<u32> {
    if let Some(n) = l.strip_prefix('c').and_then(|n| n.parse().ok()) {
        return Some(n);
    }
    let (n, rest) = l.split_once(' ')?;
    rest.starts_with("colour").then(|| n.parse().ok()).flatten()
}

/// The one style of a series label, in every plot: the same scheduler under any of its
/// labels (`vanilla`, `2.4 (DSS)`, `DSS`; `MQ`, `MQS`) gets the same colour and marker.
pub fn style_of(label: &str) -> Style {
    let l = label.trim().to_ascii_lowercase();
    let words: Vec<&str> = l.split_whitespace().collect();
    if l.contains("lboff") {
        return LBOFF;
    }
    if let Some(i) = l.find("lbp-") {
        return match &l[i + 4..] {
            p if p.starts_with("45") => LBP45,
            p if p.starts_with("10") => LBP10,
            _ => LBP_OTHER,
        };
    }
    if words.contains(&"lbc") {
        return LBC;
    }
    if words.contains(&"ip") {
        return IP;
    }
    if l.starts_with("o(1)") || l.starts_with("o1") {
        return if l.contains("guard") {
            O1_GUARD
        } else if l.contains("scale=off") {
            O1_SCALE_OFF
        } else if l.contains("era=j7") && !l.contains(',') {
            // The report's kernel: the O(1) of its sections.
            O1
        } else if words.len() > 1 || l.contains(':') {
            O1_OTHER
        } else {
            O1
        };
    }
    if l.starts_with("cfs") {
        return CFS;
    }
    if l.starts_with("eevdf") {
        return EEVDF;
    }
    if let Some(n) = colours_in(&l) {
        return match n {
            4 => C4,
            8 => C8,
            16 => C16,
            32 => C32,
            _ => fallback(&l),
        };
    }
    if l == "vanilla" || l.starts_with("2.4") || l == "dss" || l.starts_with("dss ") {
        return DSS;
    }
    if l == "mq" || l == "mqs" {
        return MQ;
    }
    fallback(&l)
}

fn fallback(l: &str) -> Style {
    // FNV-1a: stable across runs and platforms (no std hasher, whose seed may change).
    let h = l.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    FALLBACK[(h % FALLBACK.len() as u64) as usize]
}

fn e<E: std::fmt::Display>(x: E) -> String {
    x.to_string()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// `svg` with a `<title>` element as the first child of its root (what a viewer or a
/// screen reader names the picture by).
pub fn with_title(svg: &str, title: &str) -> String {
    match svg.find("<svg").and_then(|i| svg[i..].find('>').map(|j| i + j + 1)) {
        Some(end) => format!("{}\n<title>{}</title>{}", &svg[..end], escape(title), &svg[end..]),
        None => svg.to_string(),
    }
}

/// A number as short as it can be written to 4 significant digits (`0.001`, `1.2`, `250`):
/// log-axis ticks, which span decades, each written in its own precision.
fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let k = 3 - v.abs().log10().floor() as i32;
    let r = if k > 0 {
        let f = 10f64.powi(k);
        (v * f).round() / f
    } else {
        v.round()
    };
    let s = format!("{r}");
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// Ticks of a linear axis over `lo..hi`: multiples of a 1-2-5 step, about `n` of them,
/// with the decimals the step needs (so no two ticks read the same).
fn linear_ticks(lo: f64, hi: f64, n: usize) -> (Vec<f64>, usize) {
    let span = (hi - lo).max(1e-12);
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    let ticks = (first..=last).map(|i| i as f64 * step).collect();
    (ticks, decimals)
}

/// A linear tick in at most `decimals` places (`2`, `2.5`: no trailing zeros), `+` on
/// positive percentages, never `-0`.
fn tick(v: f64, decimals: usize, pct: bool) -> String {
    let r = format!("{v:.decimals$}");
    let r = if r.contains('.') { r.trim_end_matches('0').trim_end_matches('.').to_string() } else { r };
    let r = if r.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') { r.replace('-', "") } else { r };
    if pct && v > 0.0 && r.chars().any(|c| c.is_ascii_digit() && c != '0') {
        format!("+{r}")
    } else {
        r
    }
}

/// Ticks for a log axis over `lo..hi`: powers of ten over many decades, 1-2-5 per
/// decade over a few, finer steps when that gives fewer than three (a flat curve over a
/// narrow range still gets labels).
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let within = |steps: &[f64]| -> Vec<f64> {
        let mut v = Vec::new();
        let mut decade = 10f64.powf(lo.log10().floor());
        while decade <= hi {
            for s in steps {
                let t = s * decade;
                if t >= lo && t <= hi {
                    v.push(t);
                }
            }
            decade *= 10.0;
        }
        v
    };
    let tens = within(&[1.0]);
    if tens.len() >= 5 {
        return tens;
    }
    let coarse = within(&[1.0, 2.0, 5.0]);
    if coarse.len() >= 3 {
        coarse
    } else {
        within(&[1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0])
    }
}

/// The y range over `values` (display units): always including 0 for a linear axis
/// (bars start there), and never narrower than ±1 % for percentages or 10 % of the
/// largest value otherwise, so that noise of 0.001 % does not fill the plot.
fn y_range(values: &[f64], pct: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (0f64, 0f64);
    for &v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let min_span = if pct { 2.0 } else { (hi.abs().max(lo.abs()) * 0.1).max(1e-9) };
    if hi - lo < min_span {
        if pct {
            lo = lo.min(-1.0);
            hi = hi.max(1.0);
        } else if hi > 0.0 {
            hi = lo + min_span;
        } else {
            lo = hi - min_span;
        }
    }
    let pad = (hi - lo) * 0.08;
    (if lo < 0.0 { lo - pad } else { lo }, if hi > 0.0 { hi + pad } else { hi })
}

/// Where to cut the y axis so that no one series flattens the rest: when the largest
/// magnitude of one series is more than 5× the largest of all the others (or, with one
/// series, of its other cells), the axis ends at 1.6× that of the others. `extents`:
/// (series, |value|) in display units. `None`: no cut.
fn clip_at(extents: &[(usize, f64)]) -> Option<f64> {
    let (top_series, top) = extents.iter().copied().fold((usize::MAX, 0f64), |a, b| if b.1 > a.1 { b } else { a });
    if top_series == usize::MAX {
        return None;
    }
    let others = extents.iter().filter(|(s, _)| *s != top_series).map(|(_, v)| *v).fold(0f64, f64::max);
    let rest = if extents.iter().any(|(s, _)| *s != top_series) {
        others
    } else {
        // One series: its cells other than the largest one.
        let mut v: Vec<f64> = extents.iter().map(|(_, v)| *v).collect();
        v.sort_by(f64::total_cmp);
        v.iter().rev().nth(1).copied().unwrap_or(0.0)
    };
    (rest > 0.0 && top > 5.0 * rest).then_some(rest * 1.6)
}

/// A marker at pixel `(x, y)`.
fn marker(
    area: &DrawingArea<SVGBackend, Shift>,
    m: Marker,
    (x, y): (i32, i32),
    r: i32,
    fill: RGBColor,
) -> Result<(), String> {
    let edge = WHITE.stroke_width(1);
    match m {
        Marker::Circle => {
            area.draw(&Circle::new((x, y), r, fill.filled())).map_err(e)?;
            area.draw(&Circle::new((x, y), r, edge)).map_err(e)?;
        }
        Marker::Square => {
            let q = r - 1;
            area.draw(&Rectangle::new([(x - q, y - q), (x + q, y + q)], fill.filled())).map_err(e)?;
            area.draw(&Rectangle::new([(x - q, y - q), (x + q, y + q)], edge)).map_err(e)?;
        }
        Marker::Up | Marker::Down => {
            let s = if m == Marker::Up { 1 } else { -1 };
            let pts = vec![(x, y - s * (r + 1)), (x - r - 1, y + s * r), (x + r + 1, y + s * r)];
            area.draw(&Polygon::new(pts.clone(), fill.filled())).map_err(e)?;
            let mut closed = pts.clone();
            closed.push(pts[0]);
            area.draw(&PathElement::new(closed, edge)).map_err(e)?;
        }
    }
    Ok(())
}

/// The published value's mark at pixel `(x, y)`: a white diamond outlined in black,
/// with a black centre, visible on a bar of any colour and beside any series marker.
fn paper_mark(area: &DrawingArea<SVGBackend, Shift>, (x, y): (i32, i32)) -> Result<(), String> {
    let r = 7;
    let pts = vec![(x, y - r), (x + r, y), (x, y + r), (x - r, y)];
    area.draw(&Polygon::new(pts.clone(), WHITE.filled())).map_err(e)?;
    let mut closed = pts.clone();
    closed.push(pts[0]);
    area.draw(&PathElement::new(closed, PAPER.stroke_width(2))).map_err(e)?;
    area.draw(&Circle::new((x, y), 2, PAPER.filled())).map_err(e)?;
    Ok(())
}

/// One legend entry's sample.
#[derive(Clone, Copy)]
enum Sample {
    /// A bar's colour.
    Swatch(RGBColor),
    /// A line with its marker.
    Line(Style),
    Paper,
    Reference,
}

/// The legend in its own area, right of the chart.
fn legend(area: &DrawingArea<SVGBackend, Shift>, items: &[(String, Sample)]) -> Result<(), String> {
    let style = TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (name, sample)) in items.iter().enumerate() {
        let y = 30 + 22 * i as i32;
        match *sample {
            Sample::Swatch(c) => area.draw(&Rectangle::new([(8, y - 6), (24, y + 6)], c.filled())).map_err(e)?,
            Sample::Line(s) => {
                line_sample(area, s, y)?;
                marker(area, s.marker, (16, y), 4, s.colour)?;
            }
            Sample::Paper => paper_mark(area, (16, y))?,
            Sample::Reference => {
                area.draw(&DashedPathElement::new(vec![(4, y), (28, y)], 4, 3, GREY.stroke_width(1))).map_err(e)?
            }
        }
        area.draw(&Text::new(name.clone(), (34, y), style.clone())).map_err(e)?;
    }
    Ok(())
}

fn line_sample(area: &DrawingArea<SVGBackend, Shift>, s: Style, y: i32) -> Result<(), String> {
    if s.dashed {
        area.draw(&DashedPathElement::new(vec![(2, y), (30, y)], 5, 3, s.colour.stroke_width(2))).map_err(e)?;
    } else {
        area.draw(&PathElement::new(vec![(2, y), (30, y)], s.colour.stroke_width(2))).map_err(e)?;
    }
    Ok(())
}

/// Light grid lines, tick marks and labels at `ticks` on the y axis (drawn here, not by
/// plotters' mesh, so that the ticks are exactly the ones chosen and no two read alike).
fn y_ticks(
    root: &DrawingArea<SVGBackend, Shift>,
    px: &dyn Fn((f64, f64)) -> (i32, i32),
    (xa, xb): (f64, f64),
    ticks: &[(f64, String)],
) -> Result<(), String> {
    let style = TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    for (v, label) in ticks {
        let (pa, py) = px((xa, *v));
        let (pb, _) = px((xb, *v));
        root.draw(&PathElement::new(vec![(pa, py), (pb, py)], GRID.stroke_width(1))).map_err(e)?;
        root.draw(&PathElement::new(vec![(pa - 5, py), (pa, py)], BLACK.stroke_width(1))).map_err(e)?;
        root.draw(&Text::new(label.clone(), (pa - 8, py), style.clone())).map_err(e)?;
    }
    Ok(())
}

/// [`y_ticks`] for the x axis.
fn x_ticks(
    root: &DrawingArea<SVGBackend, Shift>,
    to_px: &dyn Fn((f64, f64)) -> (i32, i32),
    (ya, yb): (f64, f64),
    ticks: &[(f64, String)],
) -> Result<(), String> {
    let style = TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (v, label) in ticks {
        let (px, pa) = to_px((*v, ya));
        let (_, pb) = to_px((*v, yb));
        root.draw(&PathElement::new(vec![(px, pa), (px, pb)], GRID.stroke_width(1))).map_err(e)?;
        root.draw(&PathElement::new(vec![(px, pa), (px, pa + 5)], BLACK.stroke_width(1))).map_err(e)?;
        root.draw(&Text::new(label.clone(), (px, pa + 8), style.clone())).map_err(e)?;
    }
    Ok(())
}

fn whisker<DB: DrawingBackend, CT: plotters::coord::CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    x: f64,
    half: f64,
    lo: f64,
    hi: f64,
) -> Result<(), String> {
    if (hi - lo).abs() < 1e-12 {
        return Ok(());
    }
    let s = BLACK.stroke_width(1);
    chart
        .draw_series([
            PathElement::new(vec![(x, lo), (x, hi)], s),
            PathElement::new(vec![(x - half, lo), (x + half, lo)], s),
            PathElement::new(vec![(x - half, hi), (x + half, hi)], s),
        ])
        .map_err(e)?;
    Ok(())
}

/// The plot's title: what the table heading says (field, unit, panel).
pub fn panel_title(t: &ViewTables, p: &Panel) -> String {
    let better = if t.lower_is_better { ", lower is better" } else { "" };
    if p.title.is_empty() {
        format!("{}, {}{better}", t.label, t.unit)
    } else {
        format!("{}, {}{better} — {}", t.label, t.unit, p.title)
    }
}

/// The source's published value of cell `[row][col]`, if any.
fn published(p: &Panel, row: usize, col: usize) -> Option<f64> {
    p.published.get(row).and_then(|r| r.get(col)).copied().flatten().filter(|v| v.is_finite())
}

/// A drawing area of a plot.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Split the whole plot into title line, chart area, legend column and caption line;
/// draw the title and the caption.
fn frame<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
    caption: &str,
) -> Result<(Area<'a>, Area<'a>), String> {
    root.fill(&WHITE).map_err(e)?;
    let (top, rest) = root.split_vertically(TITLE_H);
    let (body, bottom) = rest.split_vertically(H - TITLE_H - CAPTION_H);
    let ts = TextStyle::from(("sans-serif", 15).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    top.draw(&Text::new(title.to_string(), (10, TITLE_H as i32 / 2 + 2), ts)).map_err(e)?;
    let cs = TextStyle::from(("sans-serif", 12).into_font())
        .color(&RGBColor(60, 60, 60))
        .pos(Pos::new(HPos::Left, VPos::Center));
    bottom.draw(&Text::new(caption.to_string(), (10, CAPTION_H as i32 / 2), cs)).map_err(e)?;
    Ok(body.split_horizontally(W - LEGEND_W))
}

/// Grouped bars with whiskers; `groups_are_cols` picks which table axis makes groups.
/// Policies off the grid (DSS beside a balancer × pool grid) get a group of their own.
/// An absolute view draws the same way (colours-threshold's miss ratio: groups of
/// httpds, a bar per colour count, one plot per L2 size).
pub fn bars(t: &ViewTables, p: &Panel, pct: bool, groups_are_cols: bool) -> Result<String, LabError> {
    bars_titled(t, p, pct, groups_are_cols, &panel_title(t, p))
}

/// [`bars`] under a title of the caller's.
pub fn bars_titled(
    t: &ViewTables,
    p: &Panel,
    pct: bool,
    groups_are_cols: bool,
    title: &str,
) -> Result<String, LabError> {
    draw_bars(t, p, pct, groups_are_cols, title).map_err(LabError::Plot)
}

fn draw_bars(t: &ViewTables, p: &Panel, pct: bool, groups_are_cols: bool, title: &str) -> Result<String, String> {
    let (groups, series) = if groups_are_cols { (&p.cols, &p.rows) } else { (&p.rows, &p.cols) };
    // (row, col) of group g, series s.
    let rc = |g: usize, s: usize| if groups_are_cols { (s, g) } else { (g, s) };
    let at = |g: usize, s: usize| {
        let (r, c) = rc(g, s);
        p.cells.get(r).and_then(|row| row.get(c)).copied().flatten()
    };
    let pub_at = |g: usize, s: usize| {
        let (r, c) = rc(g, s);
        published(p, r, c).map(|v| v / t.scale)
    };
    let n_groups = groups.len() + usize::from(!p.others.is_empty());
    let sc = t.scale;
    // The published value of an off-grid policy (DSS beside a PMQS grid).
    let other_pub = |i: usize| p.others_published.get(i).copied().flatten().filter(|v| v.is_finite()).map(|v| v / sc);
    // Magnitudes per series (the off-grid policies each their own series).
    let mut extents: Vec<(usize, f64)> = Vec::new();
    for s in 0..series.len() {
        for g in 0..groups.len() {
            if let Some(c) = at(g, s) {
                extents.push((s, (c.min / sc).abs().max((c.max / sc).abs())));
            }
            if let Some(v) = pub_at(g, s) {
                extents.push((s, v.abs()));
            }
        }
    }
    for (i, (_, c)) in p.others.iter().enumerate() {
        if let Some(c) = c {
            extents.push((series.len() + i, (c.min / sc).abs().max((c.max / sc).abs())));
        }
        if let Some(v) = other_pub(i) {
            extents.push((series.len() + i, v.abs()));
        }
    }
    // Only a percentage is cut: there one balancer's +660 % is the outlier of a
    // comparison, while an absolute view's 20× (vanilla's miss ratio against 4 colours)
    // is the finding itself, and is drawn whole.
    // A published value is never cut: the axis reaches every one.
    let top = extents.iter().map(|(_, v)| *v).fold(0f64, f64::max);
    let pub_max = (0..series.len())
        .flat_map(|s| (0..groups.len()).filter_map(move |g| pub_at(g, s)))
        .chain((0..p.others.len()).filter_map(other_pub))
        .map(f64::abs)
        .fold(0f64, f64::max);
    let cut = if pct { clip_at(&extents).map(|c| c.max(pub_max * 1.05)).filter(|c| *c < top) } else { None };
    let clamp = |v: f64| cut.map_or(v, |c| v.clamp(-c, c));
    // The range from the signed values (the extents are magnitudes).
    let mut vals: Vec<f64> = Vec::new();
    for c in p.cells.iter().flatten().flatten().chain(p.others.iter().filter_map(|(_, c)| c.as_ref())) {
        vals.push(clamp(c.min / sc));
        vals.push(clamp(c.max / sc));
        vals.push(clamp(c.mean / sc));
    }
    let mut any_paper = false;
    for s in 0..series.len() {
        for g in 0..groups.len() {
            if let Some(v) = pub_at(g, s) {
                vals.push(clamp(v));
                any_paper = true;
            }
        }
    }
    for v in (0..p.others.len()).filter_map(other_pub) {
        vals.push(clamp(v));
        any_paper = true;
    }
    let (lo, hi) = y_range(&vals, pct);
    let (yt, dec) = linear_ticks(lo, hi, 8);
    let mut caption = String::from("Bars: mean over seeds; whiskers: min..max over seeds");
    if any_paper {
        caption.push_str("; ◇ the source's published value");
    }
    if let Some(c) = cut {
        caption.push_str(&format!("; axis cut at ±{} — a cut bar carries its value", tick(c, dec, false)));
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        let (left, right) = frame(&root, title, &caption)?;
        let mut chart = ChartBuilder::on(&left)
            .margin(10)
            .margin_bottom(4)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..n_groups.max(1) as f64, lo..hi)
            .map_err(e)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .axis_desc_style(("sans-serif", 14))
            .x_labels(0)
            .y_labels(0)
            .y_desc(if pct { t.unit.clone() } else { format!("{} ({})", t.label, t.unit) })
            .draw()
            .map_err(e)?;
        let labels: Vec<(f64, String)> = yt.iter().map(|v| (*v, tick(*v, dec, pct))).collect();
        y_ticks(&root, &|c| chart.backend_coord(&c), (0.0, n_groups.max(1) as f64), &labels)?;
        chart
            .draw_series([PathElement::new(vec![(0.0, 0.0), (n_groups as f64, 0.0)], BLACK.stroke_width(1))])
            .map_err(e)?;
        let value_style = TextStyle::from(("sans-serif", 11).into_font().style(FontStyle::Bold));
        // One bar: its rectangle, whisker and, when cut, a break mark and its value.
        let mut bar = |x0: f64, w: f64, c: Cell, colour: RGBColor| -> Result<(), String> {
            let v = c.mean / sc;
            chart.draw_series([Rectangle::new([(x0, 0.0), (x0 + w * 0.85, clamp(v))], colour.filled())]).map_err(e)?;
            whisker(&mut chart, x0 + w * 0.425, w * 0.2, clamp(c.min / sc), clamp(c.max / sc))?;
            if let Some(cv) = cut {
                if v.abs() > cv {
                    let edge = cv.copysign(v);
                    let (px0, py) = chart.backend_coord(&(x0, edge));
                    let (px1, _) = chart.backend_coord(&(x0 + w * 0.85, edge));
                    let dy = if v > 0.0 { 6 } else { -6 };
                    // A white zig-zag across the bar just inside the edge: the bar goes on.
                    let zig = vec![(px0, py + dy), ((px0 + px1) / 2, py + dy + 4), (px1, py + dy)];
                    root.draw(&PathElement::new(zig, WHITE.stroke_width(3))).map_err(e)?;
                    let label =
                        if pct { format!("{}{:.0}", if v > 0.0 { "+" } else { "" }, v) } else { tick(v, dec, false) };
                    let anchor = if v > 0.0 { VPos::Bottom } else { VPos::Top };
                    let at = (((px0 + px1) / 2), if v > 0.0 { py - 2 } else { py + 2 });
                    root.draw(&Text::new(label, at, value_style.clone().pos(Pos::new(HPos::Center, anchor))))
                        .map_err(e)?;
                }
            }
            Ok(())
        };
        let ns = series.len().max(1);
        // Bars no wider than a fifth of a group, centred in it.
        let w = (0.8 / ns as f64).min(0.2);
        let off = 0.5 - w * ns as f64 / 2.0;
        for (s, name) in series.iter().enumerate() {
            let colour = style_of(name).colour;
            for g in 0..groups.len() {
                let Some(c) = at(g, s) else { continue };
                bar(g as f64 + off + s as f64 * w, w, c, colour)?;
            }
        }
        if !p.others.is_empty() {
            let g = groups.len();
            let w = (0.8 / p.others.len() as f64).min(0.2);
            let off = 0.5 - w * p.others.len() as f64 / 2.0;
            for (i, (name, c)) in p.others.iter().enumerate() {
                let Some(c) = c else { continue };
                bar(g as f64 + off + i as f64 * w, w, *c, style_of(name).colour)?;
            }
            for i in 0..p.others.len() {
                if let Some(v) = other_pub(i) {
                    let x = g as f64 + off + i as f64 * w + w * 0.425;
                    paper_mark(&root, chart.backend_coord(&(x, clamp(v))))?;
                }
            }
        }
        // The published values over the bars, so that a bar never hides one.
        for s in 0..series.len() {
            for g in 0..groups.len() {
                if let Some(v) = pub_at(g, s) {
                    let x = g as f64 + off + s as f64 * w + w * 0.425;
                    paper_mark(&root, chart.backend_coord(&(x, clamp(v))))?;
                }
            }
        }
        let style = TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        let other_label = p.others.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ");
        for (g, name) in groups.iter().chain(std::iter::once(&other_label)).enumerate().take(n_groups) {
            let (px, py) = chart.backend_coord(&(g as f64 + 0.5, lo));
            root.draw(&Text::new(name.clone(), (px, py + 8), style.clone())).map_err(e)?;
        }
        let mut items: Vec<(String, Sample)> =
            series.iter().map(|s| (s.clone(), Sample::Swatch(style_of(s).colour))).collect();
        items.extend(p.others.iter().map(|(n, _)| (n.clone(), Sample::Swatch(style_of(n).colour))));
        if any_paper {
            items.push(("paper".into(), Sample::Paper));
        }
        legend(&right, &items)?;
        root.present().map_err(e)?;
    }
    Ok(with_title(&svg, title))
}

/// Horizontal reference lines of a view, in its raw unit: the starvation report's
/// "within 1 second" and "more than 2 minutes" for a wait, and the source's published
/// summary of a column (a peak over the sweep, which has no place on the x axis).
fn references(t: &ViewTables, p: &Panel) -> Vec<(f64, String)> {
    let mut v = if t.metric.starts_with("waits.") && t.metric.ends_with("_ns") && !t.pct {
        vec![
            (1e9, "1 s: 2.4 \u{201c}within 1 second\u{201d}".to_string()),
            (120e9, "2 min: O(1) \u{201c}more than 2 minutes\u{201d}".to_string()),
        ]
    } else {
        Vec::new()
    };
    let name = p.summary.as_ref().map_or("summary", |(n, _)| n.as_str());
    for (c, col) in p.cols.iter().enumerate() {
        if let Some(x) = p.summary_published.get(c).copied().flatten().filter(|x| x.is_finite()) {
            v.push((x, format!("◇ paper {name}, {col}")));
        }
    }
    v
}

/// One line per column over the rows as a numeric x axis, with whiskers. A wait is
/// drawn on a log axis with the source's reference times; any other set of positive
/// values spanning more than 30× is too. Series are offset a little along x, dashed
/// or marked differently, so that two schedulers with the same numbers both show.
pub fn lines(t: &ViewTables, p: &Panel, pct: bool, x_label: &str) -> Result<String, LabError> {
    lines_titled(t, p, pct, x_label, &panel_title(t, p))
}

/// [`lines`] under a title of the caller's.
pub fn lines_titled(t: &ViewTables, p: &Panel, pct: bool, x_label: &str, title: &str) -> Result<String, LabError> {
    draw_lines(t, p, pct, x_label, title).map_err(LabError::Plot)
}

fn draw_lines(t: &ViewTables, p: &Panel, pct: bool, x_label: &str, title: &str) -> Result<String, String> {
    let xs: Vec<f64> = match p.rows.iter().map(|r| number_in(r)).collect::<Option<Vec<f64>>>() {
        Some(v) => v,
        None => (0..p.rows.len()).map(|i| i as f64).collect(),
    };
    let (x0, x1) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    // One x alone sits in the middle of the axis.
    let (x0, x1) = match (x0.is_finite(), x1 > x0) {
        (false, _) => (0.0, 1.0),
        (true, true) => (x0, x1),
        (true, false) => (x0 - 1.0, x0 + 1.0),
    };
    let pad = (x1 - x0) * 0.05;
    let sc = t.scale;
    let refs: Vec<(f64, String)> = references(t, p).into_iter().map(|(v, l)| (v / sc, l)).collect();
    let mut raw: Vec<f64> = Vec::new();
    for c in p.cells.iter().flatten().flatten() {
        raw.extend([c.min / sc, c.max / sc, c.mean / sc]);
    }
    let mut any_paper = p.summary_published.iter().flatten().any(|x| x.is_finite());
    for r in 0..p.rows.len() {
        for c in 0..p.cols.len() {
            if let Some(v) = published(p, r, c) {
                raw.push(v / sc);
                any_paper = true;
            }
        }
    }
    // The y range reaches a published summary line too.
    raw.extend(p.summary_published.iter().flatten().filter(|x| x.is_finite()).map(|x| x / sc));
    let positive = !raw.is_empty() && raw.iter().all(|v| *v > 0.0);
    let (rmin, rmax) = raw.iter().fold((f64::MAX, 0f64), |(a, b), &v| (a.min(v), b.max(v)));
    // A wait is drawn on a log axis (its reference times span minutes); a published peak line
    // alone does not make one.
    let wait = t.metric.starts_with("waits.") && t.metric.ends_with("_ns");
    let log = !pct && positive && (wait || rmax / rmin > 30.0);
    // On a log axis the chart's own coordinate is log10 of the value.
    let fy = |v: f64| if log { v.max(1e-300).log10() } else { v };
    let (lo, hi, yt, dec) = if log {
        let all = raw.iter().copied().chain(refs.iter().map(|r| r.0));
        let (a, b) = all.fold((f64::MAX, 0f64), |(a, b), v| (a.min(v), b.max(v)));
        let (a, b) = (a / 1.5, b * 1.5);
        let ticks: Vec<f64> = log_ticks(a, b).into_iter().map(f64::log10).collect();
        (a.log10(), b.log10(), ticks, 0)
    } else {
        let (lo, hi) = y_range(&raw, pct);
        let (ticks, dec) = linear_ticks(lo, hi, 8);
        (lo, hi, ticks, dec)
    };
    let ylabel = |v: f64| if log { short(10f64.powf(v)) } else { tick(v, dec, pct) };
    let mut xt: Vec<f64> = xs.clone();
    xt.sort_by(f64::total_cmp);
    xt.dedup();
    let xdec = if xt.iter().all(|x| x.fract() == 0.0) { 0 } else { 1 };
    let xt = if xt.len() <= 13 { xt } else { linear_ticks(x0, x1, 10).0 };
    let n = p.cols.len();
    // Offsets of 1.2 % of the x span per series: marks of equal values sit side by side.
    let dx = |c: usize| (x1 - x0) * 0.012 * (c as f64 - (n.max(1) - 1) as f64 / 2.0);
    let mut caption = String::from("Points: mean over seeds; whiskers: min..max over seeds");
    if any_paper {
        caption.push_str("; ◇ the source's published value");
    }
    if n > 1 {
        caption.push_str("; series offset slightly along x so that equal values all show");
    }
    if log {
        caption.push_str("; log scale");
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        let (left, right) = frame(&root, title, &caption)?;
        let mut chart = ChartBuilder::on(&left)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d((x0 - pad)..(x1 + pad), lo..hi)
            .map_err(e)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .axis_desc_style(("sans-serif", 14))
            .x_labels(0)
            .y_labels(0)
            .x_desc(x_label)
            .y_desc(if pct { t.unit.clone() } else { format!("{} ({})", t.label, t.unit) })
            .draw()
            .map_err(e)?;
        let labels: Vec<(f64, String)> = yt.iter().map(|v| (*v, ylabel(*v))).collect();
        y_ticks(&root, &|c| chart.backend_coord(&c), (x0 - pad, x1 + pad), &labels)?;
        let labels: Vec<(f64, String)> = xt.iter().map(|v| (*v, format!("{v:.xdec$}"))).collect();
        x_ticks(&root, &|c| chart.backend_coord(&c), (lo, hi), &labels)?;
        if pct {
            chart
                .draw_series([PathElement::new(vec![(x0 - pad, 0.0), (x1 + pad, 0.0)], BLACK.stroke_width(1))])
                .map_err(e)?;
        }
        let rs = TextStyle::from(("sans-serif", 12).into_font()).color(&GREY).pos(Pos::new(HPos::Left, VPos::Bottom));
        for (v, label) in &refs {
            let y = fy(*v);
            chart
                .draw_series([DashedPathElement::new(vec![(x0 - pad, y), (x1 + pad, y)], 6, 4, GREY.stroke_width(1))])
                .map_err(e)?;
            // At the left, where the fewest clients wait least.
            let (px, py) = chart.backend_coord(&(x0 - pad, y));
            root.draw(&Text::new(label.to_string(), (px + 6, py - 3), rs.clone())).map_err(e)?;
        }
        let half = (x1 - x0).max(1.0) * 0.006;
        let mut points = Vec::new();
        for (c, name) in p.cols.iter().enumerate() {
            let s = style_of(name);
            let pts: Vec<(f64, Cell)> = p
                .cells
                .iter()
                .zip(&xs)
                .filter_map(|(row, &x)| row.get(c).copied().flatten().map(|cell| (x + dx(c), cell)))
                .collect();
            let line: Vec<(f64, f64)> = pts.iter().map(|(x, v)| (*x, fy(v.mean / sc))).collect();
            if s.dashed {
                chart.draw_series(DashedLineSeries::new(line, 7, 4, s.colour.stroke_width(2))).map_err(e)?;
            } else {
                chart.draw_series(LineSeries::new(line, s.colour.stroke_width(2))).map_err(e)?;
            }
            for (x, v) in &pts {
                whisker(&mut chart, *x, half, fy(v.min / sc), fy(v.max / sc))?;
                points.push((chart.backend_coord(&(*x, fy(v.mean / sc))), s));
            }
        }
        // Markers over every line, so that no line hides another's points.
        for (at, s) in points {
            marker(&root, s.marker, at, 4, s.colour)?;
        }
        for (r, &x) in xs.iter().enumerate() {
            for c in 0..n {
                if let Some(v) = published(p, r, c) {
                    paper_mark(&root, chart.backend_coord(&(x + dx(c), fy(v / sc))))?;
                }
            }
        }
        let mut items: Vec<(String, Sample)> = p.cols.iter().map(|s| (s.clone(), Sample::Line(style_of(s)))).collect();
        if any_paper {
            items.push(("paper".into(), Sample::Paper));
        }
        if !refs.is_empty() {
            items.push((if wait { "the source's times" } else { "the source's peaks" }.into(), Sample::Reference));
        }
        legend(&right, &items)?;
        root.present().map_err(e)?;
    }
    Ok(with_title(&svg, title))
}

/// A byte count as the thesis labels message sizes: `16 B`, `4 KiB`, `1 MiB`.
pub fn size_label(b: f64) -> String {
    let b = b.round() as u64;
    match b {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// Lines over message size on log–log axes (the Converse thesis's Fig. 2.4/2.5:
/// one-way time against size): the x ticks are the measured sizes, labelled in bytes,
/// the legend beside the data. Non-positive values are left out (a log axis cannot
/// show them).
pub fn size_lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<String, LabError> {
    size_lines_captioned(title, x_desc, y_desc, series, "Points: mean over the repetitions; log–log scale")
}

/// [`size_lines`] with a caption line of the caller's under the chart.
pub fn size_lines_captioned(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
    caption: &str,
) -> Result<String, LabError> {
    draw_size_lines(title, x_desc, y_desc, series, caption).map_err(LabError::Plot)
}

fn draw_size_lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
    caption: &str,
) -> Result<String, String> {
    let pts = || series.iter().flat_map(|(_, p)| p.iter().copied()).filter(|&(x, y)| x > 0.0 && y > 0.0);
    let (x0, x1) = pts().fold((f64::MAX, f64::MIN), |(a, b), (x, _)| (a.min(x), b.max(x)));
    let (y0, y1) = pts().fold((f64::MAX, f64::MIN), |(a, b), (_, y)| (a.min(y), b.max(y)));
    if x0 > x1 {
        return Err(format!("{title}: no positive points to plot"));
    }
    let mut sizes: Vec<f64> = pts().map(|(x, _)| x).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    // Never narrower than a factor of 3 in y, so that a flat curve is not a zoom into noise.
    let (y0, y1) = if y1 / y0 < 3.0 {
        let mid = (y0 * y1).sqrt();
        (mid / 3f64.sqrt(), mid * 3f64.sqrt())
    } else {
        (y0, y1)
    };
    let (ylo, yhi) = (y0 / 1.2, y1 * 1.2);
    // Ticks that would read the same once written (1.2 and 1.25 as "1.2") are kept once.
    let mut yt: Vec<f64> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for v in log_ticks(ylo, yhi) {
        let s = short(v);
        if !seen.contains(&s) {
            seen.push(s);
            yt.push(v);
        }
    }
    let shown_title = if title.is_empty() { y_desc } else { title };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        let (left, right) = frame(&root, shown_title, caption)?;
        let mut chart = ChartBuilder::on(&left)
            .margin(10)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(
                (x0 / 1.6..x1 * 1.6).log_scale().with_key_points(sizes),
                (ylo..yhi).log_scale().with_key_points(yt),
            )
            .map_err(e)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .x_label_formatter(&|v| size_label(*v))
            .y_label_formatter(&|v| short(*v))
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()
            .map_err(e)?;
        let mut marks = Vec::new();
        for (name, p) in series {
            let s = style_of(name);
            let p: Vec<(f64, f64)> = p.iter().copied().filter(|&(x, y)| x > 0.0 && y > 0.0).collect();
            chart.draw_series(LineSeries::new(p.clone(), s.colour.stroke_width(2))).map_err(e)?;
            marks.extend(p.into_iter().map(|xy| (chart.backend_coord(&xy), s)));
        }
        for (at, s) in marks {
            marker(&root, s.marker, at, 4, s.colour)?;
        }
        let items: Vec<(String, Sample)> = series.iter().map(|(n, _)| (n.clone(), Sample::Line(style_of(n)))).collect();
        legend(&right, &items)?;
        root.present().map_err(e)?;
    }
    Ok(with_title(&svg, shown_title))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(v: f64) -> Option<Cell> {
        Some(Cell { mean: v, min: v - 1.0, max: v + 1.0 })
    }

    fn view(pct: bool, metric: &str, panel: Panel) -> ViewTables {
        ViewTables {
            metric: metric.into(),
            label: "Chat throughput".into(),
            unit: if pct { "% vs MQS".into() } else { "s".into() },
            row_name: "balancer".into(),
            col_name: "pool size".into(),
            lower_is_better: false,
            panels: vec![panel],
            scale: if pct { 1.0 } else { 1e9 },
            pct,
        }
    }

    fn panel(rows: &[&str], cols: &[&str], cells: Vec<Vec<Option<Cell>>>) -> Panel {
        Panel {
            title: "Chat (10,100)".into(),
            rows: rows.iter().map(|s| s.to_string()).collect(),
            cols: cols.iter().map(|s| s.to_string()).collect(),
            cells,
            others: vec![("DSS".into(), cell(-3.0))],
            summary: None,
            baseline: None,
            baseline_rows: vec![],
            published: vec![],
            others_published: vec![],
            summary_published: vec![],
        }
    }

    /// The `<text>` contents of an SVG, in order.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().to_string()))
            .collect()
    }

    /// The published values' marks: white-filled polygons (nothing else in a plot is
    /// one), less the legend's sample.
    fn diamonds(svg: &str) -> usize {
        let white = svg
            .split("<polygon")
            .skip(1)
            .filter(|p| p.split_once("/>").is_some_and(|(a, _)| a.contains("fill=\"#FFFFFF\"")))
            .count();
        white.saturating_sub(usize::from(texts(svg).iter().any(|x| x == "paper")))
    }

    #[test]
    fn published_values_are_drawn_as_diamonds_in_bars_and_lines() {
        let mut p = panel(
            &["LBOFF", "LBP-45"],
            &["pool 2", "pool 4"],
            vec![vec![cell(5.0), cell(8.0)], vec![cell(2.0), cell(3.0)]],
        );
        let t = view(true, "throughput", p.clone());
        let without = bars(&t, &p, true, true).unwrap();
        assert_eq!(diamonds(&without), 0);
        assert!(!texts(&without).contains(&"paper".to_string()));
        // One published value far above every cell: it must be in the y range.
        p.published = vec![vec![Some(40.0), None], vec![None, Some(-12.0)]];
        let t = view(true, "throughput", p.clone());
        let with = bars(&t, &p, true, true).unwrap();
        assert_eq!(diamonds(&with), 2, "{with}");
        let tx = texts(&with);
        assert!(tx.contains(&"paper".to_string()), "{tx:?}");
        let ticks: Vec<f64> = tx.iter().filter_map(|x| x.trim_start_matches('+').parse().ok()).collect();
        let top = ticks.iter().copied().fold(f64::MIN, f64::max);
        let bottom = ticks.iter().copied().fold(f64::MAX, f64::min);
        assert!(top >= 40.0 && bottom <= -10.0, "the published values are on the axes: {ticks:?}");
        // Lines: the same marks, one per published value.
        let l = lines(&t, &p, true, "pool").unwrap();
        assert_eq!(diamonds(&l), 2);
        assert!(texts(&l).contains(&"paper".to_string()));
    }

    #[test]
    fn a_scheduler_keeps_its_colour_whatever_its_label_or_position() {
        assert_eq!(style_of("vanilla"), style_of("2.4 (DSS)"));
        assert_eq!(style_of("DSS"), style_of("vanilla"));
        assert_eq!(style_of("MQ"), style_of("MQS"));
        assert_eq!(style_of("c32"), style_of("32 colours"));
        assert_eq!(style_of("LBP-45"), style_of("PMQS pool 4 LBP-45"));
        let distinct = ["vanilla", "MQ", "c32", "O(1)", "O(1) scale=off", "O(1) expired_prio_guard=on", "cfs", "eevdf"];
        for (i, a) in distinct.iter().enumerate() {
            for b in &distinct[i + 1..] {
                assert_ne!(style_of(a).colour, style_of(b).colour, "{a} and {b}");
            }
        }
        let balancers = ["LBOFF", "IP", "LBP-45", "LBP-10", "LBC", "DSS"];
        for (i, a) in balancers.iter().enumerate() {
            for b in &balancers[i + 1..] {
                assert_ne!(style_of(a).colour, style_of(b).colour, "{a} and {b}");
            }
        }
        // The same colour for LBP-45 whether it is the first or the second series.
        let fill = |svg: &str| {
            let c = style_of("LBP-45").colour;
            svg.contains(&format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2))
        };
        let a = panel(&["LBP-45", "LBOFF"], &["pool 2"], vec![vec![cell(2.0)], vec![cell(3.0)]]);
        let b = panel(&["LBOFF", "LBP-45"], &["pool 2"], vec![vec![cell(3.0)], vec![cell(2.0)]]);
        assert!(fill(&bars(&view(true, "throughput", a.clone()), &a, true, true).unwrap()));
        assert!(fill(&bars(&view(true, "throughput", b.clone()), &b, true, true).unwrap()));
    }

    #[test]
    fn one_series_far_above_the_rest_is_cut_and_labelled() {
        let p = panel(
            &["LBOFF", "LBP-45"],
            &["pool 2", "pool 4"],
            vec![vec![cell(660.0), cell(4.0)], vec![cell(10.0), cell(-6.0)]],
        );
        let t = view(true, "virtual_ns", p.clone());
        let svg = bars(&t, &p, true, true).unwrap();
        let tx = texts(&svg);
        assert!(tx.iter().any(|x| x == "+660"), "the cut bar carries its value: {tx:?}");
        let ticks: Vec<f64> = tx.iter().filter_map(|x| x.trim_start_matches('+').parse().ok()).collect();
        let top = ticks.iter().copied().filter(|v| *v != 660.0).fold(f64::MIN, f64::max);
        assert!(top < 100.0, "the axis is cut near the other bars: {ticks:?}");
        assert!(tx.iter().any(|x| x.contains("axis cut")), "{tx:?}");
        // Without an outlier, no cut.
        let q = panel(&["LBOFF", "LBP-45"], &["pool 2"], vec![vec![cell(30.0)], vec![cell(10.0)]]);
        let plain = bars(&view(true, "virtual_ns", q.clone()), &q, true, true).unwrap();
        assert!(!texts(&plain).iter().any(|x| x.contains("axis cut")));
    }

    #[test]
    fn a_wait_is_drawn_on_a_log_axis_with_the_sources_times() {
        let ms = |v: f64| Some(Cell { mean: v * 1e6, min: v * 0.9e6, max: v * 1.1e6 });
        let mut p = panel(
            &["4 clients", "24 clients"],
            &["2.4 (DSS)", "O(1)", "O(1) expired_prio_guard=on"],
            vec![vec![ms(3.0), ms(40.0), ms(40.0)], vec![ms(380.0), ms(1600.0), ms(1600.0)]],
        );
        p.others.clear();
        let mut t = view(false, "waits.smbd.max_ns", p.clone());
        t.label = "longest smbd wait to run".into();
        let svg = lines(&t, &p, false, "clients").unwrap();
        let tx = texts(&svg);
        assert!(tx.iter().any(|x| x.contains("within 1 second")), "{tx:?}");
        assert!(tx.iter().any(|x| x.contains("more than 2 minutes")), "{tx:?}");
        // Decades as ticks: 0.01, 0.1, 1, 10, 100 s.
        for want in ["0.01", "0.1", "1", "10", "100"] {
            assert!(tx.iter().any(|x| x == want), "no tick {want}: {tx:?}");
        }
        // O(1) and its guard variant have equal values and both show: different markers
        // at different x.
        assert_ne!(style_of("O(1)").marker, style_of("O(1) expired_prio_guard=on").marker);
        assert!(style_of("O(1) expired_prio_guard=on").dashed);
    }

    #[test]
    fn every_plot_has_a_title_and_says_what_the_whiskers_are() {
        let p = panel(&["LBOFF"], &["pool 2"], vec![vec![cell(5.0)]]);
        let t = view(true, "throughput", p.clone());
        for svg in [bars(&t, &p, true, true).unwrap(), lines(&t, &p, true, "pool").unwrap()] {
            assert!(svg.contains("<title>Chat throughput, % vs MQS — Chat (10,100)</title>"), "{svg}");
            let tx = texts(&svg);
            assert!(tx.iter().any(|x| x == "Chat throughput, % vs MQS — Chat (10,100)"), "{tx:?}");
            assert!(tx.iter().any(|x| x.contains("whiskers: min..max over seeds")), "{tx:?}");
        }
        let s = size_lines("Converse", "size", "µs", &[("direct".into(), vec![(16.0, 1.0), (64.0, 2.0)])]).unwrap();
        assert!(s.contains("<title>Converse</title>"));
    }

    #[test]
    fn log_ticks_never_repeat_a_label() {
        // Narrow ranges get the fine steps; none may read the same as another.
        for (lo, hi) in [(0.11, 0.16), (1.1, 1.9), (2.1, 3.3), (11.0, 19.0), (0.9, 3.0), (1e-3, 120.0)] {
            let s = size_lines("t", "x", "y", &[("a".into(), vec![(16.0, lo), (1024.0, hi)])]).unwrap();
            let tx = texts(&s);
            let nums: Vec<&String> = tx.iter().filter(|x| x.parse::<f64>().is_ok()).collect();
            let mut d = nums.clone();
            d.sort();
            d.dedup();
            assert_eq!(d.len(), nums.len(), "repeated tick labels over {lo}..{hi}: {nums:?}");
            assert!(nums.len() >= 3, "{lo}..{hi}: {nums:?}");
        }
        for (lo, hi) in [(0.0, 0.05), (-3.0, 2.0), (0.0, 660.0), (0.0, 1.3e-3)] {
            let (ticks, dec) = linear_ticks(lo, hi, 8);
            let labels: Vec<String> = ticks.iter().map(|v| tick(*v, dec, true)).collect();
            let mut d = labels.clone();
            d.dedup();
            assert_eq!(d, labels, "{lo}..{hi}");
        }
    }

    #[test]
    fn the_same_data_gives_the_same_bytes() {
        let p = panel(
            &["LBOFF", "IP"],
            &["pool 2", "pool 4"],
            vec![vec![cell(5.0), cell(8.0)], vec![cell(2.0), cell(3.0)]],
        );
        let t = view(true, "throughput", p.clone());
        assert_eq!(bars(&t, &p, true, true).unwrap(), bars(&t, &p, true, true).unwrap());
        assert_eq!(lines(&t, &p, true, "x").unwrap(), lines(&t, &p, true, "x").unwrap());
    }
}
