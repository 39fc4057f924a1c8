//! `schedlab sim`: one simulation, its arguments checked before it runs.

use crate::{outpath, Format};
use clap::Args;
use schedlab_core::PolicySpec;
use schedlab_sim::{simulate, Machine, SimConfig, SimError};
use schedlab_workloads::footprint::parse_size;
use schedlab_workloads::parse_workload_within;
use std::path::PathBuf;
use std::process::ExitCode;

// `schedlab sim`'s flags (their help is clap's, from the comments on the fields).
#[derive(Args)]
pub struct SimArgs {
    /// Machine preset (up, smp-N, smp-8, numa-4x4) or a TOML machine file.
    #[arg(long, short)]
    machine: String,
    /// Scheduling policy spec, name[:key=value,...] (see `schedlab list`).
    #[arg(long, short, long_help = crate::policy_help())]
    policy: String,
    /// Workload spec, e.g. chat:rooms=10,messages=100 | hackbench:groups=4,loops=100 | pingpong:rounds=100000 | trace:FILE[,mhz=700] (a `perf script` or schedlab trace, replayed: docs/traces.md).
    #[arg(long, short)]
    workload: String,
    /// Seed of the simulation's random numbers (same seed, same result).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Give up after this many virtual seconds.
    #[arg(long, default_value_t = 3600.0, allow_negative_numbers = true)]
    max_virtual_s: f64,
    /// Check policy invariants and message conservation after every event (slow).
    #[arg(long)]
    check: bool,
    /// Record every run queue's length over virtual time, at most once per INTERVAL
    /// (e.g. 10ms, 500us, 1s; a bare number is ns; default 10ms = every tick at HZ=100).
    /// Exported as `rq_series` in JSON output.
    #[arg(long, value_name = "INTERVAL", num_args = 0..=1, default_missing_value = "10ms")]
    rq_series: Option<String>,
    /// Draw the run-queue length series (per queue, and the deviation from the mean) as an SVG file (implies --rq-series).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Refuse a workload whose estimated memory (tasks, channels, program operations)
    /// exceeds SIZE (e.g. 512m, 8g), before building it.
    #[arg(long, value_name = "SIZE", default_value = "4g", allow_hyphen_values = true)]
    max_memory: String,
    /// Record a scheduling trace (switches, wake-ups, migrations, forks, exits, lock
    /// holds, IPIs) into FILE in the Chrome JSON trace-event format: open it at
    /// https://ui.perfetto.dev (docs/traces.md). Results are unchanged.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Keep at most this many trace events (about 40 bytes each in memory); later
    /// ones are counted and dropped, with a warning.
    #[arg(long, value_name = "N", default_value_t = schedlab_core::trace::DEFAULT_CAP)]
    trace_cap: usize,
}

pub fn run(args: SimArgs) -> ExitCode {
    let SimArgs {
        machine,
        policy,
        workload,
        seed,
        format,
        max_virtual_s,
        check,
        rq_series,
        plot,
        max_memory,
        trace,
        trace_cap,
    } = args;
    let usage = |msg: String| {
        eprintln!("schedlab sim: {msg}");
        ExitCode::from(2)
    };
    let machine = match Machine::load(&machine) {
        Ok(m) => m,
        Err(e) => return usage(e.to_string()),
    };
    let policy = match PolicySpec::parse(&policy) {
        Ok(p) => p,
        Err(e) => return usage(e.to_string()),
    };
    let max_memory = match parse_size(&max_memory) {
        Ok(n) => n,
        Err(e) => return usage(format!("--max-memory: {e}")),
    };
    let workload = if workload.starts_with("trace:") {
        // A replayed trace: say what the mapping kept and dropped (docs/traces.md).
        match schedlab_workloads::trace_in::load(&workload, max_memory) {
            Ok((w, s)) => {
                eprintln!(
                    "{}: {} tasks; {} wake-ups → send/receive, {} blocks → sleeps; dropped: {} wake-ups of a task not blocked, {} blocks open at the end",
                    w.spec,
                    w.expected_tasks - 1,
                    s.wake_edges,
                    s.sleeps,
                    s.dropped_wakeups,
                    s.open_blocks
                );
                w
            }
            Err(e) => return usage(e.to_string()),
        }
    } else {
        match parse_workload_within(&workload, max_memory) {
            Ok(w) => w,
            Err(e) => return usage(e.to_string()),
        }
    };
    if !(max_virtual_s.is_finite() && max_virtual_s > 0.0) {
        return usage(format!("--max-virtual-s {max_virtual_s}: must be a positive number of seconds"));
    }
    if trace_cap == 0 {
        return usage("--trace-cap 0: must keep at least one event".to_string());
    }
    // Before the simulation, so that a bad path costs no run.
    for (flag, path) in [("--plot", &plot), ("--trace", &trace)] {
        if let Some(Err(e)) = path.as_deref().map(|p| outpath::check(flag, p, outpath::Out::File)) {
            return usage(e);
        }
    }
    let trace_out = match &trace {
        None => None,
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Some((path, f)),
            Err(e) => return usage(format!("--trace {}: {e}", path.display())),
        },
    };
    let rq_series = match (rq_series, &plot) {
        (Some(s), _) => Some(s),
        (None, Some(_)) => Some("10ms".to_string()),
        (None, None) => None,
    };
    let rq_series_interval_ns = match rq_series.as_deref().map(parse_interval_ns) {
        None => None,
        Some(Ok(ns)) => Some(ns),
        Some(Err(e)) => return usage(format!("--rq-series: {e}")),
    };
    let cfg = SimConfig {
        seed,
        max_virtual_ns: (max_virtual_s * 1e9).min(u64::MAX as f64 / 2.0) as u64,
        check_invariants: check,
        rq_series_interval_ns,
        progress: Some(sim_progress()),
    };
    let (result, trace_buf) = match trace_out {
        None => (simulate(&machine, &policy, &workload, &cfg), None),
        Some(_) => match schedlab_sim::simulate_traced(&machine, &policy, &workload, &cfg, trace_cap) {
            Ok((r, t)) => (Ok(r), Some(t)),
            Err(e) => (Err(e), None),
        },
    };
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprint!("\r\x1b[K"); // clear the progress line
    }
    match result {
        Ok(r) => {
            if let (Some((path, file)), Some(t)) = (&trace_out, &trace_buf) {
                match schedlab_core::trace::chrome::write(t, file) {
                    Ok(s) => eprintln!("{}", trace_summary(path, &s, trace_cap)),
                    Err(e) => {
                        eprintln!("schedlab sim: --trace {}: {e}", path.display());
                        return ExitCode::from(1);
                    }
                }
            }
            if let (Some(path), Some(series)) = (&plot, &r.rq_series) {
                let title = format!("{} on {}, policy {}, seed {}", r.workload, r.machine, r.policy, r.seed);
                if let Err(e) = schedlab_lab::plot::rq_series_svg(path, &title, series) {
                    eprintln!("schedlab sim: --plot {}: {e}", path.display());
                    return ExitCode::from(1);
                }
            }
            match format {
                Format::Text => print!("{}", r.to_text()),
                Format::Json => println!("{}", serde_json::to_string_pretty(&r).expect("report serialises")),
            }
            ExitCode::SUCCESS
        }
        Err(e @ SimError::Invariant(_)) => {
            eprintln!("schedlab sim: internal error: {e}");
            ExitCode::from(1)
        }
        Err(e) => usage(e.to_string()),
    }
}

/// The line `--trace` prints on stderr after writing the file.
pub(crate) fn trace_summary(path: &std::path::Path, s: &schedlab_core::trace::chrome::Summary, cap: usize) -> String {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let mut line = format!(
        "trace: {} ({:.1} MB): {} events: {} run slices, {} wake-ups, {} migrations, {} IPIs, {} forks, {} exits, {} lock holds",
        path.display(),
        size as f64 / 1e6,
        s.events,
        s.slices,
        s.wakeups,
        s.migrations,
        s.ipis,
        s.forks,
        s.exits,
        s.lock_holds
    );
    if s.dropped > 0 {
        line += &format!(
            "\nwarning: the trace stops at the cap of {cap} events; {} later events were dropped (raise --trace-cap)",
            s.dropped
        );
    }
    line
}

/// `schedlab sim`'s progress on stderr: virtual time and events/s, on one redrawn line
/// at a terminal, otherwise a plain line every 10 s of wall time. Short runs show none.
fn sim_progress() -> schedlab_sim::ProgressFn {
    use std::io::{IsTerminal, Write};
    let start = std::time::Instant::now();
    let last = std::sync::Mutex::new(std::time::Duration::ZERO);
    let tty = std::io::stderr().is_terminal();
    std::sync::Arc::new(move |p: schedlab_sim::Progress| {
        let wall = start.elapsed();
        let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
        let every = if tty { std::time::Duration::from_millis(200) } else { std::time::Duration::from_secs(10) };
        if wall < std::time::Duration::from_secs(1) || wall - *last < every {
            return;
        }
        *last = wall;
        let line = format!(
            "simulating: {:.3} virtual s, {:.1} M events, {:.1} M events/s",
            p.virtual_ns as f64 / 1e9,
            p.events as f64 / 1e6,
            p.events as f64 / 1e6 / wall.as_secs_f64()
        );
        let mut err = std::io::stderr();
        let _ = if tty { write!(err, "\r{line}\x1b[K") } else { writeln!(err, "{line}") };
    })
}

/// `10ms`, `500us`, `1s`, `2000000ns` or a bare number of ns → ns (positive), read by the
/// one time parser the options use.
fn parse_interval_ns(s: &str) -> Result<u64, String> {
    match schedlab_core::options::parse_time(s, false) {
        Ok(schedlab_core::options::Time::Ns(ns)) if ns >= 1 => Ok(ns),
        _ => Err(format!("'{s}' is not a positive interval (e.g. 10ms, 500us, 1s, or ns)")),
    }
}
