//! `schedlab bench --mpi`: the Converse thesis's ping-pong (Fig. 2.4) and
//! scheduler-overhead (Fig. 2.5) experiments between two MPI ranks, beside raw
//! MPI in the same run. Launch with `mpirun -np 2 schedlab bench --mpi`.

use schedlab_converse::machine::mpi::MpiJob;
use schedlab_converse::machine::mpi_bench::{self, Fault, Point, Report, Settings, Stat};
use schedlab_converse::machine::mpi_order;
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
    // Time boxes: --quick ~5 s (5 sizes × 0.6 s), the full run ~45 s (9 sizes × 4 s
    // plus setup), so the whole `bench --mpi` stays under a minute.
    let settings = if quick {
        Settings {
            sizes: mpi_bench::paper_sizes().into_iter().take(5).collect(),
            rep_target: Duration::from_millis(1),
            size_budget: Duration::from_millis(600),
            min_reps: 5,
            max_reps: 31,
            min_round_trips: 20,
            max_round_trips: 5_000,
            fault,
        }
    } else {
        Settings {
            sizes: mpi_bench::paper_sizes(),
            rep_target: Duration::from_millis(1),
            size_budget: Duration::from_secs(4),
            min_reps: 9,
            max_reps: 201,
            min_round_trips: 20,
            max_round_trips: 20_000,
            fault,
        }
    };
    let report = mpi_bench::run(&job, &settings, |p| {
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
    let Some(report) = report else { return ExitCode::SUCCESS };
    let rows = rows(&report);
    if json_out {
        println!("{}", serde_json::to_string_pretty(&rows).expect("rows serialise"));
    } else {
        print!("{}", table(&report));
    }
    if let Some(dir) = out {
        if let Err(e) = write_out(&dir, &rows, &report) {
            eprintln!("schedlab bench --mpi: --out {}: {e}", dir.display());
            return ExitCode::from(2);
        }
        eprintln!("schedlab bench --mpi: wrote rows.json, table.md and two SVG figures to {}", dir.display());
    }
    ExitCode::SUCCESS
}

/// `bench --mpi --check-order` (hidden, for `tests/mpi.rs`): small and large
/// messages between PEs on two ranks, 2 PEs per rank, arrive in send order.
/// A message out of place ends the job (exit code 3) naming it; otherwise
/// each rank prints what each of its PEs received.
pub fn check_order() -> ExitCode {
    let job = match MpiJob::init() {
        Ok(j) => j,
        Err(e) => {
            eprintln!("schedlab bench --mpi --check-order: {e}");
            return ExitCode::from(2);
        }
    };
    if job.size() != 2 {
        if job.rank() == 0 {
            eprintln!("schedlab bench --mpi --check-order: needs exactly 2 MPI ranks, got {}", job.size());
        }
        return ExitCode::from(2);
    }
    job.notice_launcher_kill(2);
    let mut text = String::new();
    for r in mpi_order::run(&job, 2, 240, 0x5eed) {
        let _ = writeln!(
            text,
            "schedlab bench --mpi --check-order: PE {} received {} messages from PE {} in send order ({} small, {} large, {} bytes)",
            r.pe,
            r.small + r.large,
            r.from,
            r.small,
            r.large,
            r.bytes
        );
    }
    // One write, so the ranks' lines do not interleave.
    let _ = std::io::stdout().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

fn row(bench: &str, runtime: &str, policy: &str, unit: &str, p: &Point, s: Stat, pin: &str) -> serde_json::Value {
    json!({
        "bench": bench, "runtime": runtime, "policy": policy, "value": s.median, "unit": unit,
        "size": p.size, "reps": s.reps, "min": s.min, "max": s.max, "round_trips": p.round_trips,
        "channel": "mpi", "pin": pin,
    })
}

/// Bench rows: one-way times per size for raw MPI, Converse direct and
/// Converse queued; the ratio Converse ÷ MPI (median of the medians, with
/// the spread of the per-repetition ratios); the queueing overhead (likewise).
fn rows(report: &Report) -> Vec<serde_json::Value> {
    let pin = format!("launcher binding, both variants: {}", report.binding);
    let mut v = Vec::new();
    for p in &report.points {
        v.push(row("mpi-pingpong", "mpi", "MPI_Send/MPI_Recv", "ns/one-way", p, p.raw, &pin));
        v.push(row("mpi-pingpong", "converse", "direct", "ns/one-way", p, p.direct, &pin));
        v.push(row("mpi-pingpong", "converse", "queued", "ns/one-way", p, p.queued, &pin));
        let ratio = Stat { median: p.direct.median / p.raw.median, ..p.ratio };
        v.push(row("mpi-pingpong-ratio", "converse", "direct/mpi", "x", p, ratio, &pin));
        let over = Stat { median: p.queued.median - p.direct.median, ..p.overhead };
        v.push(row("mpi-queueing-overhead", "converse", "queued-direct", "ns/message", p, over, &pin));
    }
    v
}

/// The Markdown table: one line per size.
fn table(report: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Ping-pong between 2 MPI ranks: average one-way time, median [min–max] of repetitions");
    let _ =
        writeln!(s, "(binding: {}; ratio and overhead: of the medians, spread over the repetitions)\n", report.binding);
    let _ = writeln!(
        s,
        "| size (B) | reps | MPI Send/Recv (ns) | Converse (ns) | Converse ÷ MPI | Converse queued (ns) | queueing overhead (ns/msg) |"
    );
    let _ = writeln!(s, "|---:|---:|---:|---:|---:|---:|---:|");
    let spread = |st: Stat| format!("{:.0} [{:.0}–{:.0}]", st.median, st.min, st.max);
    for p in &report.points {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.3} [{:.2}–{:.2}] | {} | {:.0} [{:.0}–{:.0}] |",
            p.size,
            p.raw.reps,
            spread(p.raw),
            spread(p.direct),
            p.direct.median / p.raw.median,
            p.ratio.min,
            p.ratio.max,
            spread(p.queued),
            p.queued.median - p.direct.median,
            p.overhead.min,
            p.overhead.max
        );
    }
    let points = &report.points;
    let met = points.iter().filter(|p| p.direct.median <= GOAL * p.raw.median).count();
    let _ = writeln!(s, "\nGoal Converse ≤ {GOAL}× MPI (medians): met at {met} of {} sizes.", points.len());
    s
}

fn write_out(dir: &std::path::Path, rows: &[serde_json::Value], report: &Report) -> Result<(), String> {
    let points = &report.points;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let w = |name: &str, text: String| std::fs::write(dir.join(name), text).map_err(|e| format!("{name}: {e}"));
    w("rows.json", serde_json::to_string_pretty(rows).expect("rows serialise") + "\n")?;
    w("table.md", table(report))?;
    let us = |f: fn(&Point) -> f64| points.iter().map(|p| (p.size as f64, f(p) / 1e3)).collect::<Vec<_>>();
    schedlab_lab::plot::loglog_lines_svg(
        &dir.join("fig-2.4-pingpong.svg"),
        "Ping-pong between 2 MPI ranks (cf. Converse thesis Fig. 2.4)",
        "message size",
        "average one-way time (µs)",
        &[("MPI Send/Recv".into(), us(|p| p.raw.median)), ("Converse over MPI".into(), us(|p| p.direct.median))],
    )
    .map_err(|e| e.to_string())?;
    schedlab_lab::plot::loglog_lines_svg(
        &dir.join("fig-2.5-scheduler-overhead.svg"),
        "Scheduler overhead (cf. Converse thesis Fig. 2.5)",
        "message size",
        "average one-way time (µs)",
        &[
            ("Converse, handler replies".into(), us(|p| p.direct.median)),
            ("Converse, via the queue".into(), us(|p| p.queued.median)),
        ],
    )
    .map_err(|e| e.to_string())
}
