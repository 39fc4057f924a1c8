//! The report's plots, as SVG text (plotters' SVG backend), drawn from the same
//! [`Panel`] as the table beside them: what the table shows (% vs the baseline, or the
//! value in the table's unit), min..max whiskers over seeds, a colour-blind-safe
//! palette of few colours, the legend in its own column right of the data, and axis
//! labels in the table's unit (`+20 %`, `600`, with the `k`/`M` in the axis title).

use super::labels::number_in;
use super::tables::{Cell, Panel, ViewTables};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub const W: u32 = 860;
pub const H: u32 = 340;
const LEGEND_W: u32 = 190;

/// Okabe–Ito: distinguishable for the common colour-vision deficiencies.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];
const OTHER: RGBColor = RGBColor(150, 150, 150);

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

fn e<E: std::fmt::Display>(x: E) -> String {
    x.to_string()
}

/// A y-axis tick: integers where the range allows, never `600000.0`.
fn tick(v: f64, pct: bool) -> String {
    let r = if v.abs() >= 10.0 || (v - v.round()).abs() < 1e-9 { format!("{v:.0}") } else { format!("{v:.1}") };
    let r = if r == "-0" || r == "-0.0" { r[1..].to_string() } else { r };
    if pct && v > 0.0 {
        format!("+{r}")
    } else {
        r
    }
}

/// The y range: always including 0 (bars start there), and never narrower than ±1 %
/// for percentages or 10 % of the largest value otherwise, so that noise of 0.001 %
/// does not fill the plot.
fn y_range(values: impl Iterator<Item = Cell>, scale: f64, pct: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (0f64, 0f64);
    for c in values {
        lo = lo.min(c.min / scale);
        hi = hi.max(c.max / scale);
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

/// The legend in its own area, right of the chart.
fn legend(area: &DrawingArea<SVGBackend, plotters::coord::Shift>, items: &[(String, RGBColor)]) -> Result<(), String> {
    let style = TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (name, c)) in items.iter().enumerate() {
        let y = 40 + 22 * i as i32;
        area.draw(&Rectangle::new([(8, y - 6), (22, y + 6)], c.filled())).map_err(e)?;
        area.draw(&Text::new(name.clone(), (28, y), style.clone())).map_err(e)?;
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

/// Grouped bars with whiskers; `groups_are_cols` picks which table axis makes groups.
/// Policies off the grid (DSS beside a balancer × pool grid) get a grey group of their own.
pub fn bars(t: &ViewTables, p: &Panel, pct: bool, groups_are_cols: bool) -> Result<String, String> {
    let (groups, series) = if groups_are_cols { (&p.cols, &p.rows) } else { (&p.rows, &p.cols) };
    let at = |g: usize, s: usize| if groups_are_cols { p.cells[s][g] } else { p.cells[g][s] };
    let n_groups = groups.len() + usize::from(!p.others.is_empty());
    let all = p.cells.iter().flatten().flatten().chain(p.others.iter().filter_map(|(_, c)| c.as_ref())).copied();
    let (lo, hi) = y_range(all, t.scale, pct);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let (left, right) = root.split_horizontally(W - LEGEND_W);
        let mut chart = ChartBuilder::on(&left)
            .margin(10)
            .margin_bottom(4)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..n_groups.max(1) as f64, lo..hi)
            .map_err(e)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .x_labels(0)
            .y_labels(8)
            .y_label_formatter(&|v| tick(*v, pct))
            .y_desc(if pct { t.unit.clone() } else { format!("{} ({})", t.label, t.unit) })
            .draw()
            .map_err(e)?;
        chart
            .draw_series([PathElement::new(vec![(0.0, 0.0), (n_groups as f64, 0.0)], BLACK.stroke_width(1))])
            .map_err(e)?;
        let ns = series.len().max(1);
        // Bars no wider than a fifth of a group, centred in it.
        let w = (0.8 / ns as f64).min(0.2);
        let off = 0.5 - w * ns as f64 / 2.0;
        for s in 0..series.len() {
            for g in 0..groups.len() {
                let Some(c) = at(g, s) else { continue };
                let x0 = g as f64 + off + s as f64 * w;
                let v = c.mean / t.scale;
                chart.draw_series([Rectangle::new([(x0, 0.0), (x0 + w * 0.85, v)], colour(s).filled())]).map_err(e)?;
                whisker(&mut chart, x0 + w * 0.425, w * 0.2, c.min / t.scale, c.max / t.scale)?;
            }
        }
        if !p.others.is_empty() {
            let g = groups.len();
            let w = (0.8 / p.others.len() as f64).min(0.2);
            let off = 0.5 - w * p.others.len() as f64 / 2.0;
            for (i, (_, c)) in p.others.iter().enumerate() {
                let Some(c) = c else { continue };
                let x0 = g as f64 + off + i as f64 * w;
                chart
                    .draw_series([Rectangle::new([(x0, 0.0), (x0 + w * 0.85, c.mean / t.scale)], OTHER.filled())])
                    .map_err(e)?;
                whisker(&mut chart, x0 + w * 0.425, w * 0.2, c.min / t.scale, c.max / t.scale)?;
            }
        }
        let style = TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        let other_label = p.others.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ");
        for (g, name) in groups.iter().chain(std::iter::once(&other_label)).enumerate().take(n_groups) {
            let (px, py) = chart.backend_coord(&(g as f64 + 0.5, lo));
            left.draw(&Text::new(name.clone(), (px, py + 8), style.clone())).map_err(e)?;
        }
        let mut items: Vec<(String, RGBColor)> =
            series.iter().enumerate().map(|(i, s)| (s.clone(), colour(i))).collect();
        if !p.others.is_empty() {
            items.push((other_label, OTHER));
        }
        legend(&right, &items)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// One line per column over the rows as a numeric x axis, with whiskers.
pub fn lines(t: &ViewTables, p: &Panel, pct: bool, x_label: &str) -> Result<String, String> {
    let xs: Vec<f64> = match p.rows.iter().map(|r| number_in(r)).collect::<Option<Vec<f64>>>() {
        Some(v) => v,
        None => (0..p.rows.len()).map(|i| i as f64).collect(),
    };
    let (x0, x1) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let (x0, x1) = if x0.is_finite() { (x0, x1.max(x0 + 1.0)) } else { (0.0, 1.0) };
    let pad = (x1 - x0) * 0.04;
    let (lo, hi) = y_range(p.cells.iter().flatten().flatten().copied(), t.scale, pct);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let (left, right) = root.split_horizontally(W - LEGEND_W);
        let mut chart = ChartBuilder::on(&left)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d((x0 - pad)..(x1 + pad), lo..hi)
            .map_err(e)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .x_labels(((x1 - x0) as usize + 1).clamp(2, 13))
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_labels(8)
            .y_label_formatter(&|v| tick(*v, pct))
            .x_desc(x_label)
            .y_desc(if pct { t.unit.clone() } else { format!("{} ({})", t.label, t.unit) })
            .draw()
            .map_err(e)?;
        if pct {
            chart
                .draw_series([PathElement::new(vec![(x0 - pad, 0.0), (x1 + pad, 0.0)], BLACK.stroke_width(1))])
                .map_err(e)?;
        }
        let half = (x1 - x0).max(1.0) * 0.008;
        for (c, _) in p.cols.iter().enumerate() {
            let pts: Vec<(f64, Cell)> =
                p.cells.iter().zip(&xs).filter_map(|(row, &x)| row[c].map(|cell| (x, cell))).collect();
            let col = colour(c);
            // Earlier series wider and with bigger dots, drawn first: where schedulers
            // give the same numbers, their lines show as nested bands, not one colour.
            let rank = (p.cols.len() - 1 - c) as u32;
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|(x, v)| (*x, v.mean / t.scale)),
                    col.stroke_width(2 + rank),
                ))
                .map_err(e)?;
            chart
                .draw_series(pts.iter().map(|(x, v)| Circle::new((*x, v.mean / t.scale), 3 + rank, col.filled())))
                .map_err(e)?;
            for (x, v) in &pts {
                whisker(&mut chart, *x, half, v.min / t.scale, v.max / t.scale)?;
            }
        }
        let items: Vec<(String, RGBColor)> = p.cols.iter().enumerate().map(|(i, s)| (s.clone(), colour(i))).collect();
        legend(&right, &items)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
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

/// Ticks for a log axis over `lo..hi`: 1-2-5 per decade, or finer steps when that
/// gives fewer than three (a flat curve over a narrow range still gets labels).
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
    let coarse = within(&[1.0, 2.0, 5.0]);
    if coarse.len() >= 3 {
        coarse
    } else {
        within(&[1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0])
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
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let (left, right) = root.split_horizontally(W - LEGEND_W);
        let mut b = ChartBuilder::on(&left);
        if !title.is_empty() {
            b.caption(title, ("sans-serif", 15));
        }
        let mut chart = b
            .margin(10)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(
                (x0 / 1.6..x1 * 1.6).log_scale().with_key_points(sizes),
                (y0 / 1.2..y1 * 1.2).log_scale().with_key_points(log_ticks(y0 / 1.2, y1 * 1.2)),
            )
            .map_err(e)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .x_label_formatter(&|v| size_label(*v))
            .y_label_formatter(&|v| tick(*v, false))
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()
            .map_err(e)?;
        for (i, (_, p)) in series.iter().enumerate() {
            let p: Vec<(f64, f64)> = p.iter().copied().filter(|&(x, y)| x > 0.0 && y > 0.0).collect();
            chart.draw_series(LineSeries::new(p.clone(), colour(i).stroke_width(2))).map_err(e)?;
            chart.draw_series(p.into_iter().map(|xy| Circle::new(xy, 3, colour(i).filled()))).map_err(e)?;
        }
        let items: Vec<(String, RGBColor)> =
            series.iter().enumerate().map(|(i, (n, _))| (n.clone(), colour(i))).collect();
        legend(&right, &items)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}
