//! SVG charts (plotters' SVG backend; text is emitted as SVG `<text>`, no fonts needed).

use plotters::prelude::*;
use plotters::style::text_anchor;
use schedlab_sim::RqSeries;
use std::path::Path;

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Grouped bar chart: one group per `(workload, machine)`, one bar per series
/// (policy); `values[group][series]` (NaN = no bar).
pub fn bar_chart_svg(
    path: &Path,
    title: &str,
    metric: &str,
    groups: &[(String, String)],
    series: &[String],
    values: &[Vec<f64>],
) -> Result<(), String> {
    let ng = groups.len().max(1);
    let ns = series.len().max(1);
    let width = (160 + ng * (60 + 36 * ns)).max(640) as u32;
    let root = SVGBackend::new(path, (width, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let finite = || values.iter().flatten().copied().filter(|v| v.is_finite());
    let hi = finite().fold(0.0, f64::max);
    let lo = finite().fold(0.0, f64::min);
    let top = if hi > 0.0 { hi * 1.15 } else { 1.0 };
    let bottom = lo * 1.15;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(0f64..ng as f64, bottom..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(ng + 1)
        .x_label_formatter(&|_| String::new())
        .y_desc(format!("mean {metric}"))
        .draw()
        .map_err(err)?;
    let w = 0.8 / ns as f64;
    for (s, name) in series.iter().enumerate() {
        let bars = values.iter().enumerate().filter_map(move |(g, vals)| {
            let v = *vals.get(s)?;
            if !v.is_finite() {
                return None;
            }
            let x0 = g as f64 + 0.1 + s as f64 * w;
            Some(Rectangle::new([(x0, 0.0), (x0 + w * 0.9, v)], Palette99::pick(s).filled()))
        });
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], Palette99::pick(s).filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    let style = TextStyle::from(("sans-serif", 12).into_font())
        .pos(text_anchor::Pos::new(text_anchor::HPos::Center, text_anchor::VPos::Top));
    for (g, (workload, machine)) in groups.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(g as f64 + 0.5, bottom));
        root.draw(&Text::new(workload.clone(), (px, py + 6), style.clone())).map_err(err)?;
        root.draw(&Text::new(machine.clone(), (px, py + 22), style.clone())).map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

/// Run-queue lengths over virtual time (one line per queue, the mean in black) and,
/// below, the per-sample deviation of the queue lengths from their mean.
pub fn rq_series_svg(path: &Path, title: &str, s: &RqSeries) -> Result<(), String> {
    let root = SVGBackend::new(path, (1000, 720)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (upper, lower) = root.split_vertically(460);
    let t_ms: Vec<f64> = s.t_ns.iter().map(|&t| t as f64 / 1e6).collect();
    let tmax = t_ms.last().copied().unwrap_or(0.0).max(1e-3);
    let lmax = s.len.iter().flatten().copied().max().unwrap_or(0).max(1) as f64;
    let mut c = ChartBuilder::on(&upper)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..tmax, 0f64..lmax * 1.1)
        .map_err(err)?;
    c.configure_mesh().x_desc("virtual time (ms)").y_desc("run-queue length").draw().map_err(err)?;
    for (q, lens) in s.len.iter().enumerate() {
        let line =
            LineSeries::new(t_ms.iter().zip(lens).map(|(&t, &l)| (t, l as f64)), Palette99::pick(q).stroke_width(1));
        let drawn = c.draw_series(line).map_err(err)?;
        if s.len.len() <= 16 {
            drawn
                .label(format!("queue {q}"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], Palette99::pick(q).stroke_width(2)));
        }
    }
    c.draw_series(LineSeries::new(t_ms.iter().zip(&s.mean).map(|(&t, &m)| (t, m)), BLACK.stroke_width(2)))
        .map_err(err)?
        .label("mean")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK.stroke_width(2)));
    c.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw().map_err(err)?;
    let dmax = s.deviation.iter().copied().fold(0.0, f64::max).max(0.1);
    let mut d = ChartBuilder::on(&lower)
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..tmax, 0f64..dmax * 1.1)
        .map_err(err)?;
    d.configure_mesh().x_desc("virtual time (ms)").y_desc("deviation from mean (stddev)").draw().map_err(err)?;
    d.draw_series(LineSeries::new(t_ms.iter().zip(&s.deviation).map(|(&t, &v)| (t, v)), RED.stroke_width(1)))
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// Lines of `(x, y)` points on log–log axes with markers (the form of the Converse
/// thesis's Fig. 2.4/2.5: one-way time against message size). Non-positive values
/// are left out (a log axis cannot show them).
pub fn loglog_lines_svg(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), String> {
    let svg = loglog_lines_svg_text(title, x_desc, y_desc, series)?;
    std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))
}

/// [`loglog_lines_svg`] as SVG text (for a report that inlines its plots).
pub fn loglog_lines_svg_text(
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
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 600)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((x0 / 1.5..x1 * 1.5).log_scale(), (y0 / 1.5..y1 * 1.5).log_scale())
            .map_err(err)?;
        c.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw().map_err(err)?;
        for (i, (name, p)) in series.iter().enumerate() {
            let colour = Palette99::pick(i);
            let p: Vec<(f64, f64)> = p.iter().copied().filter(|&(x, y)| x > 0.0 && y > 0.0).collect();
            c.draw_series(LineSeries::new(p.clone(), colour.stroke_width(2)))
                .map_err(err)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], Palette99::pick(i).stroke_width(2)));
            c.draw_series(p.into_iter().map(|xy| Circle::new(xy, 3, colour.filled()))).map_err(err)?;
        }
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}
