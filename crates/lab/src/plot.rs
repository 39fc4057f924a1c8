//! SVG charts (plotters' SVG backend; text is emitted as SVG `<text>`, no fonts needed).

use plotters::prelude::*;
use schedlab_sim::RqSeries;
use std::path::Path;

use crate::LabError;

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Run-queue lengths over virtual time (one line per queue, the mean in black) and,
/// below, the per-sample deviation of the queue lengths from their mean.
pub fn rq_series_svg(path: &Path, title: &str, s: &RqSeries) -> Result<(), LabError> {
    let svg = rq_series_svg_text(title, s)?;
    std::fs::write(path, svg).map_err(|e| LabError::Io(format!("{}: {e}", path.display())))
}

/// [`rq_series_svg`] as SVG text, with its `<title>`.
pub fn rq_series_svg_text(title: &str, s: &RqSeries) -> Result<String, LabError> {
    let mut svg = String::new();
    rq_series_draw(&mut svg, title, s).map_err(LabError::Plot)?;
    Ok(crate::reproduce::plots::with_title(&svg, title))
}

fn rq_series_draw(out: &mut String, title: &str, s: &RqSeries) -> Result<(), String> {
    let root = SVGBackend::with_string(out, (1000, 720)).into_drawing_area();
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
) -> Result<(), LabError> {
    let svg = loglog_lines_svg_text(title, x_desc, y_desc, series)?;
    std::fs::write(path, svg).map_err(|e| LabError::Io(format!("{}: {e}", path.display())))
}

/// [`loglog_lines_svg`] as SVG text (for a report that inlines its plots): drawn as
/// the report's plots are (`reproduce::plots::size_lines`).
pub fn loglog_lines_svg_text(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<String, LabError> {
    crate::reproduce::plots::size_lines(title, x_desc, y_desc, series)
}
