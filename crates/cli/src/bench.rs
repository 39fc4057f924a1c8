//! `schedlab bench`: real-machine benchmarks of schedlab's runtime beside Tokio, Go,
//! kernel threads and the raw atomic limit (see `crates/bench`).

use schedlab_bench::driver::{self, Say};
use schedlab_bench::row::to_json;
use schedlab_bench::topology::Topology;
use schedlab_bench::{names, render_text, runtimes, Filter, Pin};
use std::process::ExitCode;
use std::time::Instant;

/// Options of `schedlab bench`.
pub struct BenchOpts {
    pub quick: bool,
    pub json: bool,
    pub only: Option<String>,
    /// Whether every runtime's threads are pinned (the rows' `pin`).
    pub pin: Pin,
    /// The server rows instead of the default set (`schedlab_bench::servers`, HTTP, and
    /// `schedlab_bench::netbench`, tbench).
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
    if opts.only.is_some() && names::HTTP.iter().chain(names::TBENCH).any(|b| filter.wants(b, "")) {
        note("the http-* and tbench-* (server) rows run only with --servers");
    }
    let began = Instant::now();
    let topology = Topology::detect();
    eprintln!("schedlab bench: topology: {}", topology.line());
    let run_opts = driver::Options { quick: opts.quick, only: opts.only.clone(), pin: opts.pin };
    let outcome = driver::run(&run_opts, &crate::runtime_policies(), &say);

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

/// `schedlab bench --servers`: the HTTP server rows and the tbench rows, schedlab
/// under every scheduler and the Tokio peer (when found; tbench also dbench's
/// `tbench_srv`), printed as tables or JSON rows.
fn servers(opts: &BenchOpts) -> ExitCode {
    use schedlab_bench::netbench::{self, TbenchScale};
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
    let policies = crate::runtime_policies();
    let mut rows = rows(&scale, &filter, opts.pin, &policies, tokio_bin.as_deref(), &mut |w: &str| eprintln!("  {w}"));
    let tscale = TbenchScale::new(opts.quick);
    let tbench_began = Instant::now();
    let tbench_rows =
        netbench::rows(&tscale, &filter, opts.pin, &policies, tokio_bin.as_deref(), &mut |w: &str| eprintln!("  {w}"));
    if !tbench_rows.is_empty() {
        eprintln!("schedlab bench: tbench rows {:.1} s", tbench_began.elapsed().as_secs_f64());
    }
    rows.extend(tbench_rows);
    let failures = driver::row_failures(&rows);
    let mut skipped = String::new();
    if !rows.iter().any(|r| schedlab_bench::servers::is_http_bench(&r.bench)) && schedlab_bench::wrk::find().is_none() {
        skipped += "no http server rows: wrk not found on PATH (apt-get install wrk)\n";
    }
    if !rows.iter().any(|r| netbench::is_tbench_bench(&r.bench))
        && schedlab_bench::tbench_client::find("tbench").is_none()
    {
        skipped += "no tbench rows: tbench not found on PATH (apt-get install dbench)\n";
    }
    if opts.json {
        print!("{}", to_json(&rows));
    } else {
        print!(
            "topology: {}\nservers: {} (pin: {}); wrk {} s per row, {} rounds; tbench -t {} per row (clients: {})\n\n{skipped}{}",
            topology.line(),
            plan.describe(),
            opts.pin.label(),
            scale.secs,
            scale.rounds,
            tscale.secs,
            tscale.clients.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", "),
            render_text(&rows)
        );
    }
    eprintln!("schedlab bench: wall time {:.1} s", began.elapsed().as_secs_f64());
    exit(&failures)
}
