//! `schedlab bench`: real-machine benchmarks of schedlab's runtime beside Tokio, Go,
//! kernel threads and the raw atomic limit (see `crates/bench`).

use schedlab_bench::driver::{self, Say};
use schedlab_bench::row::{label_pin, to_json};
use schedlab_bench::topology::Topology;
use schedlab_bench::{names, render_text, runtimes, units, Filter, Pin, Row};
use std::process::ExitCode;
use std::time::Instant;

/// Options of `schedlab bench`.
pub struct BenchOpts {
    pub quick: bool,
    pub json: bool,
    pub only: Option<String>,
    /// Whether every runtime's threads are pinned (the rows' `pin`).
    pub pin: Pin,
    /// The HTTP server rows instead of the default set (`schedlab_bench::servers`).
    pub servers: bool,
}

fn note(msg: &str) {
    eprintln!("schedlab bench: {msg}");
}

pub fn bench(opts: BenchOpts) -> ExitCode {
    if opts.servers {
        return servers(&opts);
    }
    let filter = Filter(opts.only.clone());
    if opts.only.is_some() && names::HTTP.iter().any(|b| filter.wants(b, "")) {
        note("the http-* (server) rows run only with --servers");
    }
    let began = Instant::now();
    let topology = Topology::detect();
    eprintln!("schedlab bench: topology: {}", topology.line());
    let run_opts = driver::Options { quick: opts.quick, only: opts.only.clone(), pin: opts.pin };
    let mut outcome = driver::run(&run_opts, &crate::runtime_policies(), &say);
    // The simulator's cache model against cachegrind: deterministic counts, run once,
    // in one unpinned process.
    let mut cache = cache_model_rows(&filter, opts.quick, &mut |w: &str| say(Say::Progress(w)));
    label_pin(&mut cache, Pin::None);
    outcome.failures.extend(driver::row_failures(&cache));
    outcome.rows.extend(cache);

    let atomic_line = driver::atomic_line(&outcome);
    eprintln!("schedlab bench: {atomic_line}");
    eprintln!("schedlab bench: {}", driver::pin_line(opts.pin));
    if opts.json {
        print!("{}", to_json(&outcome.rows));
    } else {
        print!("{}\n{}", driver::header(&topology, &outcome, &run_opts), render_text(&outcome.rows));
    }
    eprintln!("schedlab bench: wall time {:.1} s", began.elapsed().as_secs_f64());
    exit(&outcome.failures)
}

/// What the driver says, on stderr: progress indented, notes after the command's name.
fn say(s: Say) {
    match s {
        Say::Progress(w) => eprintln!("  {w}"),
        Say::Note(m) => note(m),
    }
}

/// Success, or every failure listed and exit code 1.
fn exit(failures: &[String]) -> ExitCode {
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        for f in failures {
            note(&format!("FAILED: {f}"));
        }
        ExitCode::FAILURE
    }
}

/// `schedlab bench --servers`: the HTTP server rows, schedlab under every scheduler
/// and the Tokio peer (when found), printed as a table or JSON rows.
fn servers(opts: &BenchOpts) -> ExitCode {
    use schedlab_bench::servers::{rows, CpuPlan, ServerScale};
    let began = Instant::now();
    let topology = Topology::detect();
    eprintln!("schedlab bench: topology: {}", topology.line());
    let filter = Filter(opts.only.clone());
    let scale = ServerScale::new(opts.quick);
    let tokio_bin = if filter.wants_runtime(runtimes::TOKIO) { driver::tokio_peer() } else { None };
    if tokio_bin.is_none() && filter.wants_runtime(runtimes::TOKIO) {
        note(
            "schedlab-peer-tokio not found next to this executable; build it with \
             `cargo build --release -p schedlab-peer-tokio` (Tokio server rows skipped)",
        );
    }
    let plan = CpuPlan::new(opts.pin);
    let rows = rows(&scale, &filter, opts.pin, &crate::runtime_policies(), tokio_bin.as_deref(), &mut |w: &str| {
        eprintln!("  {w}")
    });
    let failures = driver::row_failures(&rows);
    let skipped = if rows.is_empty() && schedlab_bench::wrk::find().is_none() {
        "no server rows: wrk not found on PATH (apt-get install wrk)\n"
    } else {
        ""
    };
    if opts.json {
        print!("{}", to_json(&rows));
    } else {
        print!(
            "topology: {}\nservers: {} (pin: {}); wrk {} s per row\n\n{skipped}{}",
            topology.line(),
            plan.describe(runtimes::SCHEDLAB),
            opts.pin.label(),
            scale.secs,
            render_text(&rows)
        );
    }
    eprintln!("schedlab bench: wall time {:.1} s", began.elapsed().as_secs_f64());
    exit(&failures)
}

/// [`names::CACHE_MODEL`] rows: `schedlab cachecheck`'s comparison on the walks whose
/// equation-3 effect the experiments show: the paper's 512 KB L2 at 32-byte lines
/// walked over more runnable tasks than its sets have ways, vanilla and coloured, and
/// a random visiting order on this machine's 64-byte lines. Counts are deterministic,
/// so each runs once; without valgrind the rows are skipped with a note.
fn cache_model_rows(filter: &Filter, quick: bool, progress: &mut dyn FnMut(&str)) -> Vec<Row> {
    use crate::cachecheck::{compare, Order, Walk, TOLERANCE};
    let (bench, rt) = (names::CACHE_MODEL, runtimes::SIM);
    if !filter.wants(bench, rt) {
        return Vec::new();
    }
    let (tasks, reps) = if quick { (300, 2) } else { (1024, 4) };
    let walk = |l2_kb: u64, assoc, line, colours, order| Walk {
        l2_bytes: l2_kb * 1024,
        assoc,
        line,
        tasks,
        colours,
        reps,
        order,
        seed: 1,
    };
    let walks = [
        walk(512, 4, 32, 1, Order::Seq),
        walk(512, 4, 32, 32, Order::Seq),
        walk(512, 8, 64, 1, Order::Random),
        walk(512, 8, 64, 16, Order::Random),
    ];
    let mut rows = Vec::new();
    for w in walks {
        let policy = format!(
            "{} tasks × {} {}, colours={}, L2 {} KB {}-way {} B",
            w.tasks,
            w.reps,
            w.order.name(),
            w.colours,
            w.l2_bytes / 1024,
            w.assoc,
            w.line
        );
        progress(&format!("{bench}: {policy}"));
        let unit = units::MODEL_OVER_CACHEGRIND;
        match compare(&w, None) {
            Ok(c) => {
                let value = if c.cg_misses == 0 { f64::NAN } else { c.model_misses as f64 / c.cg_misses as f64 };
                let policy = format!("{policy}: {} vs {} misses", c.model_misses, c.cg_misses);
                let row = Row::new(bench, rt, &policy, value, unit);
                rows.push(if c.rel_diff() <= TOLERANCE {
                    row
                } else {
                    Row::failed(
                        bench,
                        rt,
                        &policy,
                        unit,
                        schedlab_bench::row::NO_CHANNEL,
                        format!(
                            "model and cachegrind differ by {:.2} % (> {:.0} %)",
                            c.rel_diff() * 100.0,
                            TOLERANCE * 100.0
                        ),
                    )
                });
            }
            // Valgrind missing or unusable: nothing measured, nothing failed.
            Err((2, msg)) => {
                note(&format!("{bench} rows skipped: {msg}"));
                return rows;
            }
            Err((_, msg)) => rows.push(Row::failed(bench, rt, &policy, unit, schedlab_bench::row::NO_CHANNEL, msg)),
        }
    }
    rows
}
