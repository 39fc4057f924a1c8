//! `schedlab reproduce --mpi`: the Converse thesis's ping-pong and scheduler-overhead
//! experiments across two MPI ranks, as a part of the report's measured section.
//!
//! The report runs in one process; the experiment needs two ranks. So the report
//! launches the running executable (which must be `schedlab`) as `bench --mpi` under
//! the MPI launcher (the command
//! of docs/mpi.md) and reads the files it writes (`rows.json` and the
//! two SVG figures). Wall-clock numbers: they go to the measured section only.

use super::{MeasuredPart, MeasuredTable, MEASURED};
use crate::LabError;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TITLE: &str = "Converse over MPI: ping-pong and scheduler overhead across 2 ranks (S7 Fig. 2.4 and 2.5)";

/// The launcher when `SCHEDLAB_MPIRUN` is not set: OpenMPI's, allowed to run as root
/// (CI containers) and to put 2 ranks on fewer cores.
pub const DEFAULT_LAUNCHER: &str = "mpirun --allow-run-as-root --oversubscribe";

/// `bench --mpi` takes ~45 s (full) or ~5 s (`--quick`); past this the job is hung.
const TIME_LIMIT: Duration = Duration::from_secs(300);

/// The launcher's words: `SCHEDLAB_MPIRUN` (split on whitespace) or [`DEFAULT_LAUNCHER`].
/// An empty one is [`LabError::Config`].
pub fn launcher() -> Result<Vec<String>, LabError> {
    let text = std::env::var("SCHEDLAB_MPIRUN").unwrap_or_else(|_| DEFAULT_LAUNCHER.into());
    let words: Vec<String> = text.split_whitespace().map(String::from).collect();
    if words.is_empty() {
        return Err(LabError::Config("SCHEDLAB_MPIRUN is empty: set it to the MPI launcher, e.g. `mpirun`".into()));
    }
    Ok(words)
}

/// Run `bench --mpi` on 2 ranks into `dir` and lay its rows out; a failure becomes
/// the part's error (the rest of the report is still written).
pub fn part(quick: bool, launcher: &[String], dir: &Path) -> (MeasuredPart, Value) {
    let mut lines = vec![
        "**Source:** the Converse thesis's ping-pong between two processors (MPICH-GM on Myrinet: 35 µs raw MPI against 37.14 µs through Converse for 256 bytes) and the same with every message queued in the scheduler (≈ 1.5–2 µs per message).".into(),
        format!(
            "**Run:** `{} -np 2 schedlab bench --mpi{} --out {}`: raw `MPI_Send`/`MPI_Recv` and Converse in the same run, repetitions in rotating order; both ranks on this machine, so MPI moves the bytes through shared memory.",
            launcher.join(" "),
            if quick { " --quick" } else { "" },
            dir.display()
        ),
        format!("**Regenerate:** `schedlab reproduce{} --only {MEASURED} --mpi`", if quick { " --quick" } else { "" }),
    ];
    match run(quick, launcher, dir).and_then(|rows| layout(&rows, dir)) {
        Ok((tables, rows)) => {
            lines.push(format!("Files: `{}` (rows.json, table.md, the two figures).", dir.display()));
            (MeasuredPart { title: TITLE.into(), lines, tables, error: None }, json!({ "rows": rows }))
        }
        Err(e) => (
            MeasuredPart { title: TITLE.into(), lines, error: Some(e.clone()), ..Default::default() },
            json!({ "error": e }),
        ),
    }
}

/// Launch the job and wait for it, with a time limit; the rows it wrote.
fn run(quick: bool, launcher: &[String], dir: &Path) -> Result<Value, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let _ = std::fs::remove_file(dir.join("rows.json"));
    let mut cmd = Command::new(&launcher[0]);
    cmd.args(&launcher[1..]).args(["-np", "2"]).arg(&exe).args(["bench", "--mpi", "--out"]).arg(dir);
    if quick {
        cmd.arg("--quick");
    }
    // Its table goes nowhere (the report has it); its progress lines show as ours.
    cmd.stdout(Stdio::null()).stderr(Stdio::inherit());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the MPI launcher `{}`: {e} (set SCHEDLAB_MPIRUN)", launcher[0]))?;
    let t = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(s) => break s,
            None if t.elapsed() > TIME_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`bench --mpi` did not finish in {} s; killed", TIME_LIMIT.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    if !status.success() {
        return Err(format!("`{} -np 2 … bench --mpi` failed ({status}); its messages are above", launcher.join(" ")));
    }
    let path = dir.join("rows.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// One table row per size from `bench --mpi`'s rows, and its figures inlined.
fn layout(rows: &Value, dir: &Path) -> Result<(Vec<MeasuredTable>, Value), String> {
    let rows = rows.as_array().ok_or("rows.json: not an array")?;
    let find = |bench: &str, policy: &str, size: u64| {
        rows.iter().find(|r| r["bench"] == bench && r["policy"] == policy && r["size"].as_u64() == Some(size))
    };
    let cell = |r: Option<&Value>, d: usize| match r {
        Some(r) => format!(
            "{:.d$} ({:.d$}..{:.d$})",
            r["value"].as_f64().unwrap_or(f64::NAN),
            r["min"].as_f64().unwrap_or(f64::NAN),
            r["max"].as_f64().unwrap_or(f64::NAN)
        ),
        None => "—".into(),
    };
    let mut sizes: Vec<u64> = rows.iter().filter_map(|r| r["size"].as_u64()).collect();
    sizes.dedup();
    if sizes.is_empty() {
        return Err("rows.json: no sizes".into());
    }
    let mut table = Vec::new();
    for &size in &sizes {
        table.push(vec![
            size.to_string(),
            cell(find("mpi-pingpong", "MPI_Send/MPI_Recv", size), 0),
            cell(find("mpi-pingpong", "direct", size), 0),
            cell(find("mpi-pingpong-ratio", "direct/mpi", size), 2),
            cell(find("mpi-pingpong", "queued", size), 0),
            cell(find("mpi-queueing-overhead", "queued-direct", size), 0),
        ]);
    }
    let figure = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let mut tables = vec![MeasuredTable {
        caption: "Average one-way time, ns: median (min..max) over repetitions".into(),
        head: vec![
            "size (B)".into(),
            "MPI Send/Recv".into(),
            "Converse".into(),
            "Converse ÷ MPI".into(),
            "Converse, queued".into(),
            "queueing ns/message".into(),
        ],
        rows: table,
        notes: vec!["The thesis's goal is Converse within 10 % of raw MPI (ratio ≤ 1.10).".into()],
        plot: figure("fig-2.4-pingpong.svg"),
    }];
    if let Some(svg) = figure("fig-2.5-scheduler-overhead.svg") {
        tables.push(MeasuredTable {
            caption: "Scheduler overhead (Fig. 2.5): the same ping-pong with every message queued".into(),
            plot: Some(svg),
            ..Default::default()
        });
    }
    Ok((tables, Value::Array(rows.clone())))
}
