//! The real-runtime part of the report: numbers measured on this machine (Converse's
//! ping-pong, Chat / ping-pong / hackbench on the runtime beside the simulator on the
//! host-calibrated machine), measured by [`super::real`] and laid out here. They are
//! wall-clock numbers, so they live only in the report's last section and in
//! `measured.json`, never in the deterministic part.

use serde_json::Value;

/// The `--only` name of the measured part.
pub const MEASURED: &str = "measured";

/// The quantities the measured part reports that published cells (experiment
/// `measured`) can name: `measured.json` has them under `fields`.
pub const MEASURED_FIELDS: &[&str] =
    &["mpi.one_way_us.256", "converse.one_way_us.256", "converse.queueing_overhead_us"];

/// One table of a measured part, already formatted.
#[derive(Clone, Debug, Default)]
pub struct MeasuredTable {
    /// Shown above the table.
    pub caption: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Lines under the table.
    pub notes: Vec<String>,
    /// A plot of the table (SVG text): inlined in `index.html`, written to
    /// [`Measured::plot_path`] and linked from `report.md`.
    pub plot: Option<String>,
}

/// One sub-section of the measured part.
#[derive(Clone, Debug, Default)]
pub struct MeasuredPart {
    pub title: String,
    /// Lines above the tables: the source, what was run and how, how to regenerate.
    pub lines: Vec<String>,
    pub tables: Vec<MeasuredTable>,
    /// Set when the measurement failed: the part shows the message instead.
    pub error: Option<String>,
}

/// Everything measured on this machine.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// CPU model and count (and which CPUs this process may use).
    pub machine: String,
    pub parts: Vec<MeasuredPart>,
    /// Every number, for `measured.json`.
    pub json: Value,
    /// Wall time of all the measurements.
    pub wall_s: f64,
}

impl Measured {
    /// The plot file of part `p`, table `t` (relative to the output directory).
    pub fn plot_path(p: usize, t: usize) -> String {
        format!("plots/{MEASURED}-{}-{}.svg", p + 1, t + 1)
    }

    /// Parts that failed.
    pub fn failures(&self) -> usize {
        self.parts.iter().filter(|p| p.error.is_some()).count()
    }
}
