//! `schedlab validate`: the simulator against the real runtime, side by side.

use crate::outpath::{self, Out};
use schedlab_core::trace::{chrome, Trace};
use schedlab_validate::{Engine, ValidateError};
use std::path::PathBuf;
use std::process::ExitCode;

/// Most runs of each row `--runs` takes: a full validate is ~5 s per run.
const MAX_RUNS: u64 = 15;

pub fn run(
    quick: bool,
    json: bool,
    workers: usize,
    machine_out: Option<String>,
    trace: Option<String>,
    runs: Option<u64>,
) -> ExitCode {
    if let Err(e) = crate::check_threads("--workers", workers) {
        eprintln!("schedlab validate: {e}");
        return ExitCode::from(2);
    }
    let runs = runs.unwrap_or(if quick { 1 } else { 3 });
    if !(1..=MAX_RUNS).contains(&runs) {
        eprintln!("schedlab validate: --runs {runs}: must be 1 to {MAX_RUNS}");
        return ExitCode::from(2);
    }
    // Before minutes of measuring: the trace files and the machine file can be written.
    for (flag, path, kind) in [("--trace", &trace, Out::Prefix), ("--machine-out", &machine_out, Out::File)] {
        if let Some(Err(e)) = path.as_deref().map(|p| outpath::check(flag, std::path::Path::new(p), kind)) {
            eprintln!("schedlab validate: {e}");
            return ExitCode::from(2);
        }
    }
    let workloads: Vec<String> = if quick {
        vec!["chat:rooms=1,messages=40".into(), "pingpong:rounds=5000".into()]
    } else {
        vec![
            "chat:rooms=2,messages=100".into(),
            "chat:rooms=4,messages=100".into(),
            // Without the start barrier: the children's forks overlap the first
            // messages, so the fork path of both engines and its placement are under
            // test too (docs/traces.md).
            "hackbench:groups=1,loops=100,start=fork".into(),
            "pingpong:rounds=50000".into(),
        ]
    };
    let policies = crate::runtime_policies();
    let mut write_trace = |engine: Engine, workload: &str, policy: &str, t: &Trace| -> Result<(), String> {
        let prefix = trace.as_deref().expect("only called with --trace");
        let path = trace_path(prefix, engine, workload, policy);
        let file =
            std::fs::File::create(&path).map_err(|e| format!("--trace: cannot write {}: {e}", path.display()))?;
        let s = chrome::write(t, file).map_err(|e| format!("--trace: cannot write {}: {e}", path.display()))?;
        eprintln!("{}", crate::sim::trace_summary(&path, &s, t.cap));
        Ok(())
    };
    let sink: Option<schedlab_validate::TraceSink> = match trace {
        Some(_) => Some(&mut write_trace),
        None => None,
    };
    let seeds: Vec<u64> = (1..=runs).collect();
    if runs > 1 {
        eprintln!("running every row {runs} times on each engine (seeds 1..={runs}), each run on its own calibration; comparing medians...");
    }
    // A machine file that cannot be written is bad output (exit 2), a calibration
    // that cannot run is a failure (exit 1).
    let mut calibrate = |run: usize| {
        eprintln!("calibrating this machine ({workers} workers; run {} of {runs})...", run + 1);
        let cal = schedlab_validate::calibrate(workers, quick)?;
        if let (0, Some(path)) = (run, &machine_out) {
            let text = format!(
                "# Measured on this machine by `schedlab validate` ({} workers). All costs in ns (mhz = 1000).\n{}",
                workers,
                machine_toml(&cal.machine())
            );
            if let Err(e) = std::fs::write(path, text) {
                return Err(ValidateError::Output(format!("cannot write {path}: {e}")));
            }
            eprintln!("host machine written to {path}");
        }
        Ok(cal)
    };
    let result = schedlab_validate::validate_repeated(&mut calibrate, &policies, &workloads, &seeds, true, sink);
    match result {
        Ok((cals, rows)) => {
            if json {
                let out = schedlab_validate::Report::new(&cals, &rows);
                println!("{}", serde_json::to_string_pretty(&out).expect("serialise"));
            } else {
                print!("{}", schedlab_validate::render(&cals, &rows));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("schedlab validate: {e}");
            ExitCode::from(if matches!(e, ValidateError::Output(_)) { 2 } else { 1 })
        }
    }
}

/// `PREFIX-<sim|real>-<workload>-<policy>.json`, the specs' `:`, `,` and `=` (and any
/// other character unusual in a file name) written as `_`:
/// `out/t-real-chat_rooms_2_messages_100-pmqs_pool_1.json`.
pub fn trace_path(prefix: &str, engine: Engine, workload: &str, policy: &str) -> PathBuf {
    let slug = |s: &str| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect()
    };
    PathBuf::from(format!("{prefix}-{}-{}-{}.json", engine.name(), slug(workload), slug(policy)))
}

fn machine_toml(m: &schedlab_sim::Machine) -> String {
    let costs = toml::Table::try_from(&m.costs).expect("costs serialise");
    format!(
        "name = \"{}\"\ncpus = {}\nnodes = 1\nmhz = {}\nl2_kb = {}\nl2_assoc = {}\nline_bytes = {}\nhz = {}\ntick_phase = \"{}\"\nsocket_buffers = \"{}\"\ntask_struct = \"{}\"\n\n[costs]\n{}",
        m.name,
        m.cpus,
        m.mhz,
        m.l2_kb,
        m.l2_assoc,
        m.line_bytes,
        m.hz,
        m.tick_phase.name(),
        m.socket_buffers.name,
        m.task_struct.name(),
        costs
    )
}
