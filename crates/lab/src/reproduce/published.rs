//! The source documents' published numbers as data: one TOML file per source table in
//! `experiments/published/`, each value with its source, table, row and column, the unit
//! and sign convention, and the coordinates (experiment, machine, policy, workload,
//! report field) of the reproduction that answers it. Loaded and checked before any run:
//! a typo is a configuration error (exit code 2) naming the file and the field.
//!
//! A file gives its cells either as a grid (`[[columns]]` × `[[rows]]`, each row with one
//! value per column, `nan` where the source has none) or as a list (`[[cells]]`), or both.
//! File-level keys are defaults that rows, columns and cells refine; a coordinate given
//! twice with different values is an error.

use crate::LabError;
use serde::Deserialize;
use std::path::Path;

/// How a reproduced value is derived from the runs to be set beside a published one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compare {
    /// `100·(X − B)/B` against the experiment's baseline policy, paired by seed, mean.
    Pct,
    /// The report field itself, mean over seeds.
    Value,
    /// The highest mean over every workload that matches (a client sweep's peak).
    Peak,
    /// The fewest colours (over the `dss:colours=N` policies of the run) whose field is at
    /// most half of the baseline's: the colouring paper's equation (3) threshold.
    ColourThreshold,
}

impl Compare {
    pub fn name(self) -> &'static str {
        match self {
            Compare::Pct => "pct",
            Compare::Value => "value",
            Compare::Peak => "peak",
            Compare::ColourThreshold => "colour-threshold",
        }
    }
}

/// Where a cell's reproduction is, and how to read it; every part optional so that a
/// file, a row, a column and a cell can each give some.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Coords {
    experiment: Option<String>,
    machine: Option<String>,
    policy: Option<String>,
    workload: Option<String>,
    metric: Option<String>,
    compare: Option<Compare>,
    unit: Option<String>,
    to_report: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Column {
    label: String,
    #[serde(flatten)]
    at: Coords,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    label: String,
    values: Vec<f64>,
    #[serde(flatten)]
    at: Coords,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CellDecl {
    row: String,
    col: String,
    value: Option<f64>,
    at_least: Option<f64>,
    at_most: Option<f64>,
    #[serde(flatten)]
    at: Coords,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    source: String,
    table: String,
    caption: String,
    convention: String,
    baseline: Option<String>,
    #[serde(default)]
    columns: Vec<Column>,
    #[serde(default)]
    rows: Vec<Row>,
    #[serde(default)]
    cells: Vec<CellDecl>,
    #[serde(flatten)]
    at: Coords,
}

/// What the source gives for a cell: a measured value, or bounds an observation puts on
/// it ("more than 2 minutes", "within 1 second").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Given {
    Value(f64),
    Bounds { at_least: Option<f64>, at_most: Option<f64> },
}

impl Given {
    /// The value, or a bound, in the source's unit (for display).
    pub fn show(&self, unit: &str) -> String {
        let n = super::tables::num;
        match *self {
            Given::Value(v) => format!("{} {unit}", n(v)),
            Given::Bounds { at_least: Some(a), at_most: Some(b) } => format!("{}–{} {unit}", n(a), n(b)),
            Given::Bounds { at_least: Some(a), at_most: None } => format!("≥ {} {unit}", n(a)),
            Given::Bounds { at_least: None, at_most: Some(b) } => format!("≤ {} {unit}", n(b)),
            Given::Bounds { .. } => "?".into(),
        }
    }
}

/// One published number with everything needed to find and judge its reproduction.
#[derive(Clone, Debug)]
pub struct PubCell {
    /// Row and column as the source labels them.
    pub row: String,
    pub col: String,
    pub given: Given,
    /// Unit as the source prints it.
    pub unit: String,
    /// Multiply a published value by this to get the report field's raw unit.
    pub to_report: f64,
    pub experiment: String,
    /// Exact machine spec of the experiment file (`None`: any).
    pub machine: Option<String>,
    /// Exact policy spec (`None`: any; the colour threshold reads every `dss:colours=N`).
    pub policy: Option<String>,
    /// A partial workload spec: the kind and the source's parameters
    /// (`webbench:servers=256`); a run matches when its spec has them all.
    pub workload: Option<String>,
    pub metric: String,
    pub compare: Compare,
}

impl PubCell {
    /// The published value in the report field's raw unit (the middle of a range).
    pub fn report_value(&self) -> Option<f64> {
        match self.given {
            Given::Value(v) => Some(v * self.to_report),
            Given::Bounds { .. } => None,
        }
    }
}

/// One source table.
#[derive(Clone, Debug)]
pub struct PubTable {
    /// The file's stem: `s1-table6`.
    pub id: String,
    /// `S1`, `S6`, `S7`, `S10`.
    pub source: String,
    /// `Table 6`, `Equation 3`.
    pub table: String,
    pub caption: String,
    pub convention: String,
    pub baseline: Option<String>,
    pub cells: Vec<PubCell>,
}

impl PubTable {
    /// The cells of row `row` (source label), in column order.
    pub fn cell(&self, row: &str, col: &str) -> Option<&PubCell> {
        self.cells.iter().find(|c| c.row == row && c.col == col)
    }
    /// The experiments this table's cells are reproduced by, in order of first use.
    pub fn experiments(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for c in &self.cells {
            if !v.contains(&c.experiment.as_str()) {
                v.push(&c.experiment);
            }
        }
        v
    }
}

/// The source tags of the report, each with its citation and where it is published
/// (docs/sources.md has every source of the project).
pub const SOURCES: &[(&str, &str, &str)] = &[
    (
        "S1",
        "H. Franke, S. Nagar, M. Kravetz, R. Ravindran, \"PMQS: Scalable Linux Scheduling for High End Servers\", 5th Annual Linux Showcase & Conference (ALS), Oakland, 2001",
        "https://www.usenix.org/legacy/publications/library/proceedings/als01/franke.html",
    ),
    (
        "S6",
        "S. Yamamura, A. Hirai, M. Sato, M. Yamamoto, A. Naruse, K. Kumon, \"Speeding Up Kernel Scheduler by Reducing Cache Misses\", USENIX 2002 Annual Technical Conference, FREENIX track",
        "https://www.usenix.org/legacy/publications/library/proceedings/usenix02/tech/freenix/yamamura.html",
    ),
    (
        "S7",
        "M. Bhandarkar, PhD thesis, University of Illinois at Urbana-Champaign, 2002, chapter \"Converse: A Message-Driven Runtime\"",
        "http://charm.cs.uiuc.edu/papers/MilindThesis.www/",
    ),
    (
        "S10",
        "A. Theurer, \"(O)1 Netbench results and some problems\", linux-kernel mailing list, 31 January 2002",
        "http://lse.sourceforge.net/benchmarks/netbench/results/february_2002/sched/",
    ),
];

/// The experiment name of the real-runtime part (not a simulator experiment).
pub const MEASURED_EXPERIMENT: &str = "measured";

/// Merge `b` over `a`; the same coordinate given twice with different values is an error.
fn merge(a: &Coords, b: &Coords, what: &str) -> Result<Coords, String> {
    fn one<T: Clone + PartialEq + std::fmt::Debug>(
        x: &Option<T>,
        y: &Option<T>,
        key: &str,
        what: &str,
    ) -> Result<Option<T>, String> {
        match (x, y) {
            (Some(p), Some(q)) if p != q => Err(format!("{what}: `{key}` given twice ({p:?} and {q:?})")),
            (_, Some(q)) => Ok(Some(q.clone())),
            (p, None) => Ok(p.clone()),
        }
    }
    // `unit`, `metric`, `compare` and `to_report` are refinements: a row may override the
    // file's (a lock table has % and µs rows), so only the place coordinates must agree.
    Ok(Coords {
        experiment: one(&a.experiment, &b.experiment, "experiment", what)?,
        machine: one(&a.machine, &b.machine, "machine", what)?,
        policy: one(&a.policy, &b.policy, "policy", what)?,
        workload: one(&a.workload, &b.workload, "workload", what)?,
        metric: b.metric.clone().or_else(|| a.metric.clone()),
        compare: b.compare.or(a.compare),
        unit: b.unit.clone().or_else(|| a.unit.clone()),
        to_report: b.to_report.or(a.to_report),
    })
}

fn cell_of(row: &str, col: &str, given: Given, at: Coords, what: &str) -> Result<PubCell, String> {
    let need = |v: Option<String>, key: &str| v.ok_or_else(|| format!("{what}: no `{key}`"));
    let to_report = at.to_report.unwrap_or(1.0);
    if !to_report.is_finite() || to_report <= 0.0 {
        return Err(format!("{what}: `to_report` must be a positive number"));
    }
    match given {
        Given::Value(v) if !v.is_finite() => return Err(format!("{what}: value is not a number")),
        Given::Bounds { at_least: None, at_most: None } => {
            return Err(format!("{what}: needs `value`, `at_least` or `at_most`"))
        }
        Given::Bounds { at_least: Some(a), at_most: Some(b) } if a > b => {
            return Err(format!("{what}: at_least {a} > at_most {b}"))
        }
        _ => {}
    }
    if let Some(w) = &at.workload {
        if w.is_empty() || w.split(':').next().is_some_and(str::is_empty) {
            return Err(format!("{what}: empty workload"));
        }
    }
    Ok(PubCell {
        row: row.to_string(),
        col: col.to_string(),
        given,
        unit: need(at.unit, "unit")?,
        to_report,
        experiment: need(at.experiment, "experiment")?,
        machine: at.machine,
        policy: at.policy,
        workload: at.workload,
        metric: need(at.metric, "metric")?,
        compare: at.compare.ok_or_else(|| format!("{what}: no `compare`"))?,
    })
}

/// Parse one published table; `id` is its file stem. A mistake in it is
/// [`LabError::Config`].
pub fn parse(id: &str, text: &str) -> Result<PubTable, LabError> {
    parse_table(id, text).map_err(LabError::Config)
}

fn parse_table(id: &str, text: &str) -> Result<PubTable, String> {
    let f: File = toml::from_str(text).map_err(|e| e.to_string().trim().to_string())?;
    if !SOURCES.iter().any(|(s, _, _)| *s == f.source) {
        let known: Vec<&str> = SOURCES.iter().map(|(s, _, _)| *s).collect();
        return Err(format!("source {:?}: not one of {}", f.source, known.join(", ")));
    }
    let mut cells = Vec::new();
    for r in &f.rows {
        if r.values.len() != f.columns.len() {
            return Err(format!("row {:?}: {} values for {} columns", r.label, r.values.len(), f.columns.len()));
        }
        for (c, v) in f.columns.iter().zip(&r.values) {
            if v.is_nan() {
                continue; // the source has no value here
            }
            let what = format!("row {:?}, column {:?}", r.label, c.label);
            let at = merge(&merge(&f.at, &r.at, &what)?, &c.at, &what)?;
            cells.push(cell_of(&r.label, &c.label, Given::Value(*v), at, &what)?);
        }
    }
    for c in &f.cells {
        let what = format!("cell {:?} / {:?}", c.row, c.col);
        let given = match c.value {
            Some(v) if c.at_least.is_none() && c.at_most.is_none() => Given::Value(v),
            Some(_) => return Err(format!("{what}: `value` and a bound both given")),
            None => Given::Bounds { at_least: c.at_least, at_most: c.at_most },
        };
        cells.push(cell_of(&c.row, &c.col, given, merge(&f.at, &c.at, &what)?, &what)?);
    }
    if cells.is_empty() {
        return Err("no cells".into());
    }
    for (i, a) in cells.iter().enumerate() {
        if cells[..i].iter().any(|b| b.row == a.row && b.col == a.col) {
            return Err(format!("cell {:?} / {:?} given twice", a.row, a.col));
        }
        if matches!(a.compare, Compare::Pct | Compare::ColourThreshold) && f.baseline.is_none() {
            return Err(format!("cell {:?} / {:?}: compare = {:?} needs `baseline`", a.row, a.col, a.compare.name()));
        }
    }
    Ok(PubTable {
        id: id.to_string(),
        source: f.source,
        table: f.table,
        caption: f.caption,
        convention: f.convention,
        baseline: f.baseline,
        cells,
    })
}

/// Every `*.toml` of `dir` (the claims file aside), sorted by name; errors name the file.
pub fn load_dir(dir: &Path) -> Result<Vec<PubTable>, LabError> {
    let err = |p: &Path, e: String| LabError::Config(format!("{}: {e}", p.display()));
    let rd = std::fs::read_dir(dir).map_err(|e| err(dir, format!("published tables: {e}")))?;
    let mut paths: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.file_stem().is_some_and(|s| s != "claims"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let id = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        let text = std::fs::read_to_string(&p).map_err(|e| err(&p, e.to_string()))?;
        out.push(parse(&id, &text).map_err(|e| err(&p, e.to_string()))?);
    }
    if out.is_empty() {
        return Err(err(dir, "no published tables (*.toml)".into()));
    }
    Ok(out)
}

/// `key=value` pairs of a spec's options.
fn opts(spec: &str) -> Vec<(&str, &str)> {
    spec.split_once(':').map(|(_, o)| o.split(',').filter_map(|kv| kv.split_once('=')).collect()).unwrap_or_default()
}

/// Does the run's workload spec have the published workload's kind and parameters?
pub fn workload_matches(published: &str, run: &str) -> bool {
    let kind = |s: &str| s.split(':').next().unwrap_or(s).to_string();
    if kind(published) != kind(run) {
        return false;
    }
    let have = opts(run);
    opts(published).iter().all(|kv| have.contains(kv))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
source = "S1"
table = "Table 6"
caption = "c"
convention = "v"
experiment = "chat-numa"
metric = "throughput"
compare = "pct"
baseline = "mqs"
unit = "%"
machine = "numa-4x4"
[[columns]]
label = "(10,100)"
workload = "chat:rooms=10,messages=100"
[[columns]]
label = "(20,200)"
workload = "chat:rooms=20,messages=200"
[[rows]]
label = "DSS"
policy = "dss"
values = [-63.92, nan]
"#;

    #[test]
    fn a_grid_becomes_cells_with_every_coordinate() {
        let t = parse("s1-table6", OK).unwrap();
        assert_eq!(t.cells.len(), 1, "nan is no cell");
        let c = &t.cells[0];
        assert_eq!((c.row.as_str(), c.col.as_str()), ("DSS", "(10,100)"));
        assert_eq!(c.given, Given::Value(-63.92));
        assert_eq!(c.policy.as_deref(), Some("dss"));
        assert_eq!(c.machine.as_deref(), Some("numa-4x4"));
        assert_eq!(c.workload.as_deref(), Some("chat:rooms=10,messages=100"));
        assert_eq!(c.compare, Compare::Pct);
    }

    #[test]
    fn typos_and_gaps_are_errors_naming_the_place() {
        let cases = [
            (OK.replace("values = [-63.92, nan]", "valeus = [-63.92, nan]"), "missing field `values`"),
            (OK.replace("policy = \"dss\"", "polcy = \"dss\""), "polcy"),
            (OK.replace("caption = \"c\"", "caption = \"c\"\ncolour = 1"), "colour"),
            (OK.replace("[-63.92, nan]", "[-63.92]"), "1 values for 2 columns"),
            (OK.replace("source = \"S1\"", "source = \"S5\""), "not one of"),
            (OK.replace("compare = \"pct\"", "compare = \"percent\""), "percent"),
            (OK.replace("policy = \"dss\"", "policy = \"dss\"\nmachine = \"smp-8\""), "`machine` given twice"),
            (OK.replace("unit = \"%\"\n", ""), "no `unit`"),
            (OK.replace("baseline = \"mqs\"\n", ""), "needs `baseline`"),
        ];
        for (text, want) in cases {
            let e = parse("x", &text).unwrap_err().to_string();
            assert!(e.contains(want), "{want:?} not in {e:?}");
        }
    }

    #[test]
    fn bounds() {
        let text = OK.replace(
            "[[rows]]\nlabel = \"DSS\"\npolicy = \"dss\"\nvalues = [-63.92, nan]\n",
            "[[cells]]\nrow = \"ps\"\ncol = \"worst\"\nat_least = 120.0\n",
        );
        let t = parse("x", &text).unwrap();
        assert_eq!(t.cells[0].given, Given::Bounds { at_least: Some(120.0), at_most: None });
        let bad = text.replace("at_least = 120.0", "");
        assert!(parse("x", &bad).unwrap_err().to_string().contains("needs `value`"));
        let both = text.replace("at_least = 120.0", "at_least = 3.0\nat_most = 2.0");
        assert!(parse("x", &both).unwrap_err().to_string().contains("at_least 3 > at_most 2"));
    }

    #[test]
    fn partial_workload_specs_match_by_kind_and_parameters() {
        assert!(workload_matches("webbench:servers=256", "webbench:servers=256,requests=20"));
        assert!(!workload_matches("webbench:servers=256", "webbench:servers=512,requests=20"));
        assert!(workload_matches("netbench", "netbench:clients=4"));
        assert!(!workload_matches("netbench", "chat:rooms=1"));
        assert!(workload_matches("chat:rooms=10,messages=100", "chat:rooms=10,messages=100"));
        assert!(!workload_matches("chat:rooms=10,messages=100", "chat:rooms=10,messages=20"));
    }
}
