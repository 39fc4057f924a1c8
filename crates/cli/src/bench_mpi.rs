//! `schedlab bench --mpi`: the Converse thesis's ping-pong (Fig. 2.4) and
//! scheduler-overhead (Fig. 2.5) experiments between two MPI ranks, beside raw
//! MPI in the same run. Launch with `mpirun -np 2 schedlab bench --mpi`.

use schedlab_converse::machine::mpi::MpiJob;
use schedlab_converse::machine::mpi_bench::{self, Fault, Point, Settings, Stat};
use serde_json::json;
use std::fmt::Write;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The thesis's goal: Converse within 10 % of the raw MPI one-way time.
const GOAL: f64 = 1.1;

pub fn run(quick: bool, json_out: bool, out: Option<PathBuf>, fault: Option<&str>) -> ExitCode {
    let fault = match fault {
        None => None,
        Some("handler-panic") => Some(Fault::HandlerPanic),
        Some("send-to-missing-pe") => Some(Fault::SendToMissingPe),
        Some(f) => {
            eprintln!("schedlab bench --mpi: --fault {f}: expected handler-panic or send-to-missing-pe");
            return ExitCode::from(2);
        }
    };
    let job = match MpiJob::init() {
        Ok(j) => j,
        Err(e) => {
            eprintln!("schedlab bench --mpi: {e}");
            return ExitCode::from(2);
        }
    };
    let (rank, size) = (job.rank(), job.size());
    if size != 2 {
        if rank == 0 {
            eprintln!(
                "schedlab bench --mpi: needs exactly 2 MPI ranks, got {size}; launch with `mpirun -np 2 schedlab bench --mpi`"
            );
        }
        return ExitCode::from(2);
    }
    // What runs where (and the pid a test may kill).
    let line =
        format!("schedlab bench --mpi: rank {rank} on {} (pid {}) holds PE {rank}\n", job.host(), std::process::id());
    // One write, so the ranks' lines do not interleave.
    let _ = std::io::stderr().write_all(line.as_bytes());
    job.notice_launcher_kill(1);
    let settings = if quick {
        Settings {
            sizes: mpi_bench::paper_sizes().into_iter().take(5).collect(),
            reps: 3,
            target: Duration::from_millis(5),
            min_round_trips: 20,
            max_round_trips: 5_000,
            fault,
        }
    } else {
        Settings {
            sizes: mpi_bench::paper_sizes(),
            reps: 5,
            target: Duration::from_millis(25),
            min_round_trips: 20,
            max_round_trips: 20_000,
            fault,
        }
    };
    let points = mpi_bench::run(&job, &settings, |p| {
        eprintln!(
            "  {:>8} B: MPI {:.0} ns, Converse {:.0} ns ({:.2}x), queued {:.0} ns ({} round trips x {} reps)",
            p.size,
            p.raw.median,
            p.direct.median,
            p.direct.median / p.raw.median,
            p.queued.median,
            p.round_trips,
            p.raw.reps
        )
    });
    let Some(points) = points else { return ExitCode::SUCCESS };
    let rows = rows(&points);
    if json_out {
        println!("{}", serde_json::to_string_pretty(&rows).expect("rows serialise"));
    } else {
        print!("{}", table(&points));
    }
    if let Some(dir) = out {
        if let Err(e) = write_out(&dir, &rows, &points) {
            eprintln!("schedlab bench --mpi: --out {}: {e}", dir.display());
            return ExitCode::from(2);
        }
        eprintln!("schedlab bench --mpi: wrote rows.json, table.md and two SVG figures to {}", dir.display());
    }
    ExitCode::SUCCESS
}

fn row(bench: &str, runtime: &str, policy: &str, unit: &str, p: &Point, s: Stat) -> serde_json::Value {
    json!({
        "bench": bench, "runtime": runtime, "policy": policy, "value": s.median, "unit": unit,
        "size": p.size, "reps": s.reps, "min": s.min, "max": s.max, "round_trips": p.round_trips,
        "channel": "mpi", "pin": "none",
    })
}

/// Bench rows: one-way times per size for raw MPI, Converse direct and
/// Converse queued; the ratio Converse ÷ MPI; the queueing overhead.
fn rows(points: &[Point]) -> Vec<serde_json::Value> {
    let mut v = Vec::new();
    for p in points {
        v.push(row("mpi-pingpong", "mpi", "MPI_Send/MPI_Recv", "ns/one-way", p, p.raw));
        v.push(row("mpi-pingpong", "converse", "direct", "ns/one-way", p, p.direct));
        v.push(row("mpi-pingpong", "converse", "queued", "ns/one-way", p, p.queued));
        let ratio = Stat { median: p.direct.median / p.raw.median, min: f64::NAN, max: f64::NAN, reps: p.raw.reps };
        let mut r = row("mpi-pingpong-ratio", "converse", "direct/mpi", "x", p, ratio);
        r["min"] = serde_json::Value::Null;
        r["max"] = serde_json::Value::Null;
        v.push(r);
        let over = Stat { median: p.queued.median - p.direct.median, min: f64::NAN, max: f64::NAN, reps: p.raw.reps };
        let mut r = row("mpi-queueing-overhead", "converse", "queued-direct", "ns/message", p, over);
        r["min"] = serde_json::Value::Null;
        r["max"] = serde_json::Value::Null;
        v.push(r);
    }
    v
}

/// The Markdown table: one line per size.
fn table(points: &[Point]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Ping-pong between 2 MPI ranks: average one-way time (median of repetitions)\n");
    let _ = writeln!(
        s,
        "| size (B) | MPI Send/Recv (ns) | Converse (ns) | Converse ÷ MPI | Converse queued (ns) | queueing overhead (ns/msg) |"
    );
    let _ = writeln!(s, "|---:|---:|---:|---:|---:|---:|");
    for p in points {
        let _ = writeln!(
            s,
            "| {} | {:.0} | {:.0} | {:.3} | {:.0} | {:.0} |",
            p.size,
            p.raw.median,
            p.direct.median,
            p.direct.median / p.raw.median,
            p.queued.median,
            p.queued.median - p.direct.median
        );
    }
    let met = points.iter().filter(|p| p.direct.median <= GOAL * p.raw.median).count();
    let _ = writeln!(s, "\nGoal Converse ≤ {GOAL}× MPI: met at {met} of {} sizes.", points.len());
    s
}

fn write_out(dir: &std::path::Path, rows: &[serde_json::Value], points: &[Point]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let w = |name: &str, text: String| std::fs::write(dir.join(name), text).map_err(|e| format!("{name}: {e}"));
    w("rows.json", serde_json::to_string_pretty(rows).expect("rows serialise") + "\n")?;
    w("table.md", table(points))?;
    let us = |f: fn(&Point) -> f64| points.iter().map(|p| (p.size as f64, f(p) / 1e3)).collect::<Vec<_>>();
    schedlab_lab::plot::loglog_lines_svg(
        &dir.join("fig-2.4-pingpong.svg"),
        "Ping-pong between 2 MPI ranks (cf. Converse thesis Fig. 2.4)",
        "message size (bytes)",
        "average one-way time (µs)",
        &[("MPI Send/Recv".into(), us(|p| p.raw.median)), ("Converse over MPI".into(), us(|p| p.direct.median))],
    )?;
    schedlab_lab::plot::loglog_lines_svg(
        &dir.join("fig-2.5-scheduler-overhead.svg"),
        "Scheduler overhead (cf. Converse thesis Fig. 2.5)",
        "message size (bytes)",
        "average one-way time (µs)",
        &[
            ("Converse, handler replies".into(), us(|p| p.direct.median)),
            ("Converse, through the scheduler queue".into(), us(|p| p.queued.median)),
        ],
    )
}
