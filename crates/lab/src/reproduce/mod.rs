//! `schedlab reproduce`: every experiment of the source documents, run through the
//! same sweep code as `schedlab sweep`, and one report of them in each source's own
//! form (`report.md`, a self-contained `index.html`, `results.json`).
//!
//! * [`catalog`]: the one list of experiments, their sources and the form of their tables;
//! * [`run`]: plans every selected experiment, then runs them one after the other
//!   (each in parallel over `--threads`), with progress;
//! * [`tables`] and [`plots`]: a sweep seen through a catalog view;
//! * [`real`]: the measured section, run on this machine's runtimes after the
//!   simulations (Converse, the runtime beside the simulator on the host-calibrated
//!   machine, the NetBench starvation probe), and [`mpi`]: its Converse-over-MPI part;
//! * `report_md`, `report_html`, `results`: the three outputs. Everything but the
//!   final wall-clock section is a function of the experiment files and the code only.

mod build;
pub mod catalog;
pub mod claims;
pub mod compare;
pub mod doc;
pub mod labels;
pub mod measured;
pub mod mpi;
pub mod plots;
pub mod published;
pub mod real;
mod results;
pub mod run;
pub mod tables;

pub use measured::{Measured, MeasuredPart, MeasuredTable, MEASURED, MEASURED_FIELDS};
pub use run::{run, Options};

use crate::{LabError, Sweep};
use catalog::{Entry, Plot, Value};
use published::PubTable;
use std::path::{Path, PathBuf};
use tables::ViewTables;

/// One view of a section: its tables and one SVG per table (when the view has a plot).
pub struct ViewOut {
    pub tables: ViewTables,
    pub plots: Vec<Option<String>>,
}

/// One finished experiment.
pub struct Section {
    pub entry: &'static Entry,
    pub sweep: Sweep,
    pub views: Vec<ViewOut>,
}

impl Section {
    /// The command that regenerates this section's numbers.
    pub fn command(&self) -> String {
        let quick = if self.sweep.plan.quick { " --quick" } else { "" };
        format!("schedlab sweep{quick} {}", self.entry.file)
    }

    /// The plot file of view `v`, panel `k` (relative to the output directory).
    pub fn plot_path(&self, v: usize, k: usize) -> String {
        format!("plots/{}-{}-{}.svg", self.entry.name, v + 1, k + 1)
    }
}

/// A finished reproduction.
pub struct Reproduction {
    pub quick: bool,
    pub sections: Vec<Section>,
    /// Wall-clock figures: only in the report's last section.
    pub wall_s: f64,
    pub threads: usize,
    /// The real-runtime measurements of this machine (the caller fills them in; None:
    /// not measured in this run). Only in the last section and in `measured.json`.
    pub measured: Option<Measured>,
    /// The sources' published tables, every cell beside its reproduction, and the
    /// sources' claims judged over them.
    pub published: Vec<PubTable>,
    pub comparisons: Vec<compare::Comparison>,
    pub claims: Vec<claims::Judged>,
}

impl Reproduction {
    /// Every run that failed, over all sections.
    pub fn failures(&self) -> usize {
        self.sections.iter().map(|s| s.sweep.failures.len()).sum()
    }
}

/// See a sweep through each view of its catalog entry, and draw the plots.
pub fn section(entry: &'static Entry, sweep: Sweep, published: &[PubTable]) -> Result<Section, LabError> {
    let mut built: Vec<ViewTables> = entry.views.iter().map(|v| tables::build(entry, v, &sweep)).collect();
    {
        let mut pairs: Vec<(&catalog::View, &mut ViewTables)> = entry.views.iter().zip(built.iter_mut()).collect();
        compare::annotate(entry, &sweep, &mut pairs, published);
    }
    let mut views = Vec::new();
    for (v, t) in entry.views.iter().zip(built) {
        let pct = v.value == Value::Pct;
        let mut svgs = Vec::new();
        for p in &t.panels {
            let svg = match v.plot {
                Plot::None => None,
                Plot::Bars { groups_are_cols } => Some(plots::bars(&t, p, pct, groups_are_cols)),
                Plot::Lines { x_label } => Some(plots::lines(&t, p, pct, x_label)),
            };
            svgs.push(svg.transpose().map_err(|e| LabError::Io(format!("{}: plot: {e}", entry.name)))?);
        }
        views.push(ViewOut { tables: t, plots: svgs });
    }
    Ok(Section { entry, sweep, views })
}

/// `docs/fidelity.md` as this binary was built with it: written beside the report,
/// whose "why" links point into it, so they resolve wherever the report is written.
pub const FIDELITY_MD: &str = include_str!("../../../../docs/fidelity.md");

/// The link from a report (or `results.json`) to an entry of [`FIDELITY_MD`].
pub fn fidelity_link(anchor: &str) -> String {
    format!("fidelity.md#{anchor}")
}

/// Write `report.md`, `index.html`, `results.json`, `fidelity.md` and `plots/*.svg`
/// into `dir`.
pub fn write(rep: &Reproduction, dir: &Path) -> Result<Vec<PathBuf>, LabError> {
    let io = |p: &Path, e: std::io::Error| LabError::Io(format!("{}: {e}", p.display()));
    let plots = dir.join("plots");
    std::fs::create_dir_all(&plots).map_err(|e| io(&plots, e))?;
    let mut files = Vec::new();
    for s in &rep.sections {
        for (v, view) in s.views.iter().enumerate() {
            for (k, svg) in view.plots.iter().enumerate() {
                if let Some(svg) = svg {
                    let path = dir.join(s.plot_path(v, k));
                    std::fs::write(&path, svg).map_err(|e| io(&path, e))?;
                    files.push(path);
                }
            }
        }
    }
    for (pi, part) in rep.measured.iter().flat_map(|m| m.parts.iter().enumerate()) {
        for (ti, t) in part.tables.iter().enumerate() {
            if let Some(svg) = &t.plot {
                let path = dir.join(Measured::plot_path(pi, ti));
                std::fs::write(&path, svg).map_err(|e| io(&path, e))?;
                files.push(path);
            }
        }
    }
    let report = build::build(rep);
    let mut outputs = vec![
        ("report.md", doc::markdown(&report)),
        ("index.html", doc::html(&report)),
        ("results.json", results::render(rep)),
        ("fidelity.md", FIDELITY_MD.to_string()),
    ];
    // Not in results.json: that file is deterministic, these numbers are not.
    if let Some(m) = &rep.measured {
        outputs.push(("measured.json", serde_json::to_string_pretty(&m.json).expect("json") + "\n"));
    }
    for (name, text) in outputs {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        files.push(path);
    }
    Ok(files)
}

/// The heading of the last section, wall-clock times and real-runtime measurements:
/// everything from it on is not deterministic.
pub const WALL_HEADING: &str = "Measured on this machine (not deterministic)";
