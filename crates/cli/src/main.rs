//! `schedlab`: the scheduler laboratory's command-line tool.

mod bench;
#[cfg(feature = "mpi")]
mod bench_mpi;
mod cachecheck;
mod mpi_sweep;
mod reproduce_mpi;
mod reproduce_real;
mod validate;

use clap::{Args, Parser, Subcommand, ValueEnum};
use schedlab_core::{policies, PolicySpec};
use schedlab_sim::{machine::PRESETS, simulate, Machine, SimConfig, SimError};
use schedlab_workloads::footprint::parse_size;
use schedlab_workloads::{parse_workload_within, WORKLOAD_NAMES};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "schedlab",
    version,
    about = "A scheduler laboratory: Linux 2.4-era SMP schedulers (DSS, MQS, ...) on simulated SMP/NUMA machines"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// `schedlab bench --pin`: see `schedlab_bench::Pin`.
#[derive(Clone, Copy, ValueEnum)]
enum PinArg {
    All,
    None,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate a workload under a scheduling policy on a modelled machine.
    #[command(
        after_help = "Examples:\n  schedlab sim --machine smp-8 --policy mqs --workload chat:rooms=10,messages=100\n  schedlab sim --machine numa-4x4 --policy dss --workload hackbench:groups=4,loops=100 --format json\n  schedlab sim --machine my-box.toml --policy dss --workload pingpong:rounds=100000"
    )]
    Sim {
        /// Machine preset (up, smp-N, smp-8, numa-4x4) or a TOML machine file.
        #[arg(long, short)]
        machine: String,
        /// Scheduling policy spec, name[:key=value,...] (see `schedlab list`).
        #[arg(long, short, long_help = policy_help())]
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
    },
    /// Run an experiment file's matrix (machines × policies × workloads × seeds) in parallel.
    #[command(
        after_help = "Writes results.json, results.csv, table.md, chart.svg and timing.json (wall-clock figures) to --out\n(default out/<name>) and prints the table. Example:\n  schedlab sweep --quick experiments/chat-smp.toml\nAcross the ranks of an MPI job (a schedlab built with `--features mpi`; docs/mpi.md):\n  mpirun -np 4 target/release/schedlab sweep --mpi experiments/chat-smp.toml"
    )]
    Sweep {
        /// Use the experiment's [quick] overrides (small workloads and seeds, for CI).
        #[arg(long)]
        quick: bool,
        /// Output directory (default out/<name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads (default: all cores; at most 4 per core). Results do not depend on it.
        #[arg(long, allow_negative_numbers = true)]
        threads: Option<usize>,
        /// Keep the runs an interrupted or failed sweep of the same experiment already
        /// finished (recorded in OUT/runs/ as each completes) and run only the rest.
        #[arg(long)]
        resume: bool,
        /// Refuse any workload whose estimated memory exceeds SIZE (e.g. 512m, 8g).
        #[arg(long, value_name = "SIZE", default_value = "4g", allow_hyphen_values = true)]
        max_memory: String,
        /// Run under `mpirun -np K`: run i of the matrix goes to rank i mod K, rank 0
        /// gathers every result and writes the files (identical to a local sweep's;
        /// the other ranks write nothing). Needs a schedlab built with `--features mpi`.
        #[arg(long)]
        mpi: bool,
        /// The experiment file (TOML).
        experiment: PathBuf,
    },
    /// Re-run every experiment of the source papers and write one report of them.
    #[command(
        after_help = "Runs each experiment file of the reproduction catalog (PMQS Chat and Mkbench on the NUMA-Q and
the 8-way; the colouring paper's WebBench CPU study, colours × httpds × L2 and Chat; the O(1)
NetBench uniprocessor, 4-way and starvation runs) through the same code as `schedlab sweep`,
then writes to --out:
  report.md      one section per experiment in the source's own table form: the command that
                 regenerates it, machine and cost-model parameters, seeds, min..max over seeds
  index.html     the same, self-contained (inline SVG plots, no script, no network)
  results.json   every table and every run's report
  plots/*.svg    the plots of report.md
  measured.json  the real-runtime measurements (Converse ping-pong; Chat, ping-pong, hackbench
                 on the runtime beside the simulator on the host-calibrated machine)
Everything is byte-identical between runs and thread counts except the final
\"Measured on this machine\" section of report.md and index.html (wall clock and
real-runtime numbers; `--only measured` runs those alone, `--only` without it skips them). docs/reproduce.md describes the report.
Examples:
  schedlab reproduce --quick
  schedlab reproduce --only chat-smp,webbench-cpus --out out/some"
    )]
    Reproduce {
        /// Use every experiment's [quick] sizes (smaller workloads, fewer seeds, same structure).
        #[arg(long)]
        quick: bool,
        /// Output directory.
        #[arg(long, default_value = "out/reproduce")]
        out: PathBuf,
        /// Run only these experiments (comma-separated catalog names, e.g. chat-smp,netbench-up).
        #[arg(long, value_name = "NAME[,NAME...]", value_delimiter = ',')]
        only: Vec<String>,
        /// Worker threads (default: all cores; at most 4 per core). Results do not depend on it.
        #[arg(long, allow_negative_numbers = true)]
        threads: Option<usize>,
        /// The directory of the experiment files (default: ./experiments, else the one of
        /// the source tree this binary was built from).
        #[arg(long, value_name = "DIR")]
        experiments: Option<PathBuf>,
        /// Also run the Converse-over-MPI ping-pong across 2 ranks (launches this binary as
        /// `bench --mpi` under `$SCHEDLAB_MPIRUN`, default `mpirun --allow-run-as-root
        /// --oversubscribe`; needs a build with `--features mpi`).
        #[arg(long)]
        mpi: bool,
    },
    /// Real-machine benchmarks: schedlab's runtime (every policy) beside Tokio, Go, kernel threads and the atomic limit.
    #[command(
        after_help = "Runs ping-pong (same and cross worker), local dispatch, spawn, Converse, Chat, hackbench and\nwake-to-run latency on schedlab's runtime for every policy, each policy's pick-next cost,\nthen the peers: schedlab-peer-tokio (next to this binary; build it with\n`cargo build --release -p schedlab-peer-tokio`), the Go peer (built with `go build -o target/peers/schedlab-peer-go ./peers/go`\nwhen `go` is on PATH), kernel threads (threads + pipes, and `perf bench sched messaging -t -p` when perf is installed)\nand two pinned threads spinning on an atomic. Progress on stderr. Examples:\n  schedlab bench --quick --only chat\n  schedlab bench --quick --pin none"
    )]
    Bench {
        /// CI sizes (the whole run takes well under a minute on 2 vCPUs).
        #[arg(long)]
        quick: bool,
        /// Output format: a table grouped by bench with ratios vs Tokio, or a JSON array of rows.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Run only the benches whose name, or whose runtime's name, contains this (e.g. chat, tokio).
        #[arg(long, value_name = "SUBSTR")]
        only: Option<String>,
        /// Pin every runtime's threads to CPUs (all: schedlab's and Tokio's workers one per CPU,
        /// kernel threads and Go's process on the same 2 CPUs) or none (no affinity anywhere).
        /// Every row says which in its `pin`; the atomic, Converse, pick-next and rq-walk rows
        /// are always pinned.
        #[arg(long, value_enum, default_value_t = PinArg::All)]
        pin: PinArg,
        /// Instead of the default set: the HTTP server rows (a hyper server of static pages on
        /// schedlab under every scheduler and on Tokio, loaded by wrk over loopback at 16 and
        /// 256 connections; skipped with a note without wrk). docs/bench.md.
        #[arg(long, conflicts_with = "mpi")]
        servers: bool,
        /// Instead: the Converse ping-pong and scheduler-overhead experiments between two MPI
        /// ranks beside raw MPI (`mpirun -np 2 schedlab bench --mpi`; needs a build with
        /// `--features mpi`).
        #[arg(long, conflicts_with = "only")]
        mpi: bool,
        /// With --mpi: write rows.json, table.md and the two SVG figures to this directory.
        #[arg(long, value_name = "DIR", requires = "mpi")]
        out: Option<PathBuf>,
        /// With --mpi, for the failure tests: make PE 1's handler fail (handler-panic |
        /// send-to-missing-pe).
        #[arg(long, value_name = "FAULT", requires = "mpi", hide = true)]
        fault: Option<String>,
        /// With --mpi, for the tests: instead of timing, check that small and large messages
        /// between PEs on the two ranks arrive in send order.
        #[arg(long, requires = "mpi", conflicts_with = "fault", hide = true)]
        check_order: bool,
    },
    /// The simulator against the real runtime: calibrate this machine, then run Chat and
    /// ping-pong on both engines for every policy and print the throughputs side by side.
    #[command(after_help = "The simulated machine (host-N) takes every cost from a micro-benchmark run here first:
task switch, channel send/receive, spawn, cache-line transfer, memory latency, lock, the
policy's own schedule()/wake_up()/tick cost, and what a hop between workers adds (IPI send and
latency, lock hand-off, task-header transfer, blocking receive, channel lines, clock reads;
crates/validate/src/xcpu.rs). Nothing is fitted to the
throughputs being compared. Example:
  schedlab validate --quick --machine-out out/host.toml")]
    Validate {
        /// Small workloads and short calibration (CI).
        #[arg(long)]
        quick: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Workers of the real runtime (and CPUs of the simulated host machine).
        #[arg(long, default_value_t = 2)]
        workers: usize,
        /// Also write the calibrated machine as a TOML machine file usable with `schedlab sim --machine`.
        #[arg(long, value_name = "FILE")]
        machine_out: Option<String>,
        /// Record a scheduling trace of every run, both engines, into
        /// PREFIX-<sim|real>-<workload>-<policy>.json (docs/traces.md; `fast` records none).
        /// The runtime's throughputs are then measured with tracing on.
        #[arg(long, value_name = "PREFIX")]
        trace: Option<String>,
        /// Runs of every row on each engine, with seeds 1..=N; each row compares the
        /// two engines' medians, and a ranking is judged against the pairs the real
        /// runs order consistently [default: 3, 1 with --quick; at most 15].
        #[arg(long, value_name = "N")]
        runs: Option<u64>,
    },
    /// Check the simulator's L2 model against cachegrind on a synthetic run-queue walk.
    #[command(
        after_help = "The same walk (TASKS task hot lines at the simulator's addresses, visited REPS times in order or
in a seeded random order) runs through the simulator's platform and, as a hidden replay
subcommand of this binary, under `valgrind --tool=cachegrind` with the same L2 as the LL and a
two-line D1 (so nearly every read reaches the LL). Prints both miss counts and their relative
difference; exits 1 when it exceeds 2 %, 2 on bad input or when valgrind is not installed.
Examples:
  schedlab cachecheck                                   # 1024 tasks, 512 KB 8-way, 64-byte lines
  schedlab cachecheck --l2 256k --assoc 4 --line 32 --colours 32 --order random --format json"
    )]
    Cachecheck {
        #[command(flatten)]
        walk: WalkArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Give cachegrind's LL these ways instead of --assoc (a mismatch the check must catch).
        #[arg(long, hide = true)]
        cachegrind_assoc: Option<u32>,
    },
    /// The cachegrind side of `cachecheck` (run under valgrind by it).
    #[command(hide = true, name = "cachecheck-replay")]
    CachecheckReplay {
        #[command(flatten)]
        walk: WalkArgs,
    },
    /// List machine presets, policies and workloads.
    List,
}

#[derive(Clone, Copy, ValueEnum)]
enum WalkOrder {
    Seq,
    Random,
}

/// The walk and geometry of `schedlab cachecheck`.
#[derive(Args)]
struct WalkArgs {
    /// L2 (cachegrind: LL) size, e.g. 512k, 2m.
    #[arg(long, default_value = "512k", allow_hyphen_values = true)]
    l2: String,
    /// L2 ways.
    #[arg(long, default_value_t = 8)]
    assoc: u32,
    /// Cache line size in bytes.
    #[arg(long, default_value_t = 64)]
    line: u32,
    /// Tasks on the walked run queue (one 8 KB task block each).
    #[arg(long, default_value_t = 1024)]
    tasks: u64,
    /// Task-structure colours (power of two; 1 = vanilla layout).
    #[arg(long, default_value_t = 1)]
    colours: u32,
    /// Passes over the queue (random order: REPS × TASKS visits).
    #[arg(long, default_value_t = 4)]
    reps: u64,
    /// Visiting order: the queue in order, or seeded pseudo-random tasks.
    #[arg(long, value_enum, default_value_t = WalkOrder::Seq)]
    order: WalkOrder,
    /// Seed of the random order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl WalkArgs {
    fn walk(&self) -> Result<cachecheck::Walk, String> {
        let l2_bytes = parse_size(&self.l2).map_err(|e| format!("--l2: {e}"))?;
        let order = match self.order {
            WalkOrder::Seq => cachecheck::Order::Seq,
            WalkOrder::Random => cachecheck::Order::Random,
        };
        Ok(cachecheck::Walk {
            l2_bytes,
            assoc: self.assoc,
            line: self.line,
            tasks: self.tasks,
            colours: self.colours,
            reps: self.reps,
            order,
            seed: self.seed,
        })
    }
}

/// A reader that stops early (`schedlab sim ... --format json | head`) closes the pipe;
/// Rust ignores SIGPIPE, so the next `println!` panicked ("failed printing to stdout:
/// Broken pipe"). The default action ends schedlab quietly, as it does `cat`. Not under
/// MPI: its ranks talk over sockets, and a rank that dies must be reported by its peers
/// (the failure tests), not take them down with a signal.
fn end_quietly_on_a_closed_pipe(cmd: &Cmd) {
    let mpi = match cmd {
        Cmd::Sweep { mpi, .. } | Cmd::Reproduce { mpi, .. } | Cmd::Bench { mpi, .. } => *mpi,
        _ => false,
    };
    #[cfg(unix)]
    if !mpi {
        // SAFETY: at the start of main, before any thread is spawned; SIG_DFL is a valid
        // disposition for SIGPIPE.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    end_quietly_on_a_closed_pipe(&cli.cmd);
    match cli.cmd {
        Cmd::List => {
            println!("machines:  {}  (or a .toml machine file; see docs/machines.md)", PRESETS.join(", "));
            println!("policies:");
            for e in policies::entries() {
                println!("  {:<9} {}", e.name, e.summary);
                if !e.options.is_empty() {
                    println!("  {:<9} options: {}", "", e.options);
                    println!("  {:<9} keys: {}", "", e.keys.join(", "));
                }
            }
            println!("workloads:");
            for name in WORKLOAD_NAMES {
                let keys = schedlab_workloads::WorkloadSpec::keys(name).map(|k| k.join(", "));
                println!("  {:<9} {}", name, keys.unwrap_or_else(|e| e.0));
            }
            ExitCode::SUCCESS
        }
        Cmd::Sweep { quick, out, threads, resume, max_memory, mpi, experiment } => {
            sweep(SweepArgs { quick, out, threads, resume, max_memory, mpi }, &experiment)
        }
        Cmd::Reproduce { quick, out, only, threads, experiments, mpi } => {
            reproduce(quick, out, only, threads, experiments, mpi)
        }
        Cmd::Cachecheck { walk, format, cachegrind_assoc } => match walk.walk() {
            Ok(w) => cachecheck::run(w, cachegrind_assoc, matches!(format, Format::Json)),
            Err(e) => {
                eprintln!("schedlab cachecheck: {e}");
                ExitCode::from(2)
            }
        },
        Cmd::CachecheckReplay { walk } => match walk.walk() {
            Ok(w) => cachecheck::replay_main(w),
            Err(e) => {
                eprintln!("schedlab cachecheck-replay: {e}");
                ExitCode::from(2)
            }
        },
        Cmd::Validate { quick, format, workers, machine_out, trace, runs } => {
            validate::run(quick, matches!(format, Format::Json), workers, machine_out, trace, runs)
        }
        Cmd::Bench { mpi: true, check_order: true, .. } => bench_mpi_order(),
        Cmd::Bench { mpi: true, quick, format, out, fault, .. } => {
            bench_mpi(quick, matches!(format, Format::Json), out, fault.as_deref())
        }
        Cmd::Bench { quick, format, only, pin, servers, .. } => {
            if only.as_deref() == Some("") {
                eprintln!("schedlab bench: --only: empty substring");
                return ExitCode::from(2);
            }
            if !schedlab_bench::Filter(only.clone()).selects_anything() {
                eprintln!(
                    "schedlab bench: --only {}: matches no bench ({}) and no runtime ({})",
                    only.as_deref().unwrap_or(""),
                    schedlab_bench::names::ALL.join(", "),
                    schedlab_bench::runtimes::ALL.join(", ")
                );
                return ExitCode::from(2);
            }
            let pin = match pin {
                PinArg::All => schedlab_bench::Pin::All,
                PinArg::None => schedlab_bench::Pin::None,
            };
            bench::bench(bench::BenchOpts { quick, json: matches!(format, Format::Json), only, pin, servers })
        }
        Cmd::Sim {
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
        } => {
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
            // Before the simulation, not after it: the plot's directory must exist.
            if let Some(path) = &plot {
                let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
                if !dir.is_dir() {
                    return usage(format!("--plot {}: directory {} does not exist", path.display(), dir.display()));
                }
            }
            if trace_cap == 0 {
                return usage("--trace-cap 0: must keep at least one event".to_string());
            }
            // Created before the simulation, so that a bad path costs no run.
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

/// `--policy`'s long help, from the registry.
fn policy_help() -> String {
    let mut s = "Scheduling policy spec, name[:key=value,...]:".to_string();
    for e in policies::entries() {
        let opts = if e.options.is_empty() { String::new() } else { format!("[:{}]", e.options) };
        s += &format!("\n  {}{opts}: {}", e.name, e.summary);
    }
    s
}

/// The schedulers `bench` and `validate` run on the real runtime: every registry entry
/// in its example configuration, runtime-native ones (the default, `fast`) first.
pub(crate) fn runtime_policies() -> Vec<String> {
    schedlab_bench::pick_cost::runtime_policies()
}

/// `10ms`, `500us`, `1s`, `2000000ns` or a bare number of ns → ns (positive).
fn parse_interval_ns(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x * mult >= 1.0 && x * mult < 1e18 => Ok((x * mult).round() as u64),
        _ => Err(format!("'{s}' is not a positive interval (e.g. 10ms, 500us, 1s, or ns)")),
    }
}

/// Thread and worker counts above this many per CPU are refused: more only costs
/// memory and scheduling, and 100,000 threads take this kind of machine down.
const MAX_THREADS_PER_CPU: usize = 4;

/// `--threads N` / `--workers N` within 1..=MAX_THREADS_PER_CPU × CPUs, or the message.
pub(crate) fn check_threads(flag: &str, n: usize) -> Result<(), String> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max = MAX_THREADS_PER_CPU * cpus;
    if n == 0 || n > max {
        return Err(format!(
            "{flag} {n}: must be 1..={max} ({MAX_THREADS_PER_CPU} per CPU on this {cpus}-CPU machine)"
        ));
    }
    Ok(())
}

/// `schedlab reproduce`.
fn reproduce(
    quick: bool,
    out: PathBuf,
    only: Vec<String>,
    threads: Option<usize>,
    experiments: Option<PathBuf>,
    mpi: bool,
) -> ExitCode {
    let usage = |msg: String| {
        eprintln!("schedlab reproduce: {msg}");
        ExitCode::from(2)
    };
    if mpi && !cfg!(feature = "mpi") {
        return usage(
            "--mpi: this schedlab was built without MPI; build it with \
             `cargo build --release -p schedlab --features mpi` (docs/mpi.md)"
                .into(),
        );
    }
    let launcher = match mpi.then(reproduce_mpi::launcher).transpose() {
        Ok(l) => l,
        Err(e) => return usage(format!("--mpi: {e}")),
    };
    if let Some(Err(e)) = threads.map(|t| check_threads("--threads", t)) {
        return usage(e);
    }
    if only.iter().any(String::is_empty) {
        return usage("--only: empty experiment name".into());
    }
    // The checked-in experiments: ./experiments from the repository root, else the
    // source tree this binary was built from (so the command works from any directory).
    let experiments = experiments.unwrap_or_else(|| {
        let here = PathBuf::from("experiments");
        if here.is_dir() {
            here
        } else {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments"))
        }
    });
    if !experiments.is_dir() {
        return usage(format!("--experiments {}: not a directory", experiments.display()));
    }
    // The real-runtime part runs with every experiment, or when `--only` names it.
    let measure = only.is_empty() || only.iter().any(|n| n == schedlab_lab::reproduce::MEASURED);
    let opts =
        schedlab_lab::reproduce::Options { quick, only, threads: threads.unwrap_or(0), experiments, progress: true };
    let mut rep = match schedlab_lab::reproduce::run(&opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("schedlab reproduce: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    // After the simulations, alone: no simulator thread competes with the runtimes.
    let mpi_dir = out.join("mpi");
    if measure || mpi {
        if mpi {
            if let Err(e) = std::fs::create_dir_all(&mpi_dir) {
                return usage(format!("--out {}: {e}", mpi_dir.display()));
            }
        }
        let parts = reproduce_real::Parts { local: measure, mpi: launcher.as_deref().map(|l| (l, mpi_dir.as_path())) };
        rep.measured = Some(reproduce_real::measure(quick, true, parts));
    }
    match schedlab_lab::reproduce::write(&rep, &out) {
        Ok(_) => {
            println!(
                "{} experiments, {} runs in {:.1} s wall on {} threads{}; report in {}/ (report.md, index.html, results.json, plots/{})",
                rep.sections.len(),
                rep.sections.iter().map(|s| s.sweep.plan.runs().len()).sum::<usize>(),
                rep.wall_s,
                rep.threads,
                rep.measured.as_ref().map_or(String::new(), |m| format!(", real-runtime measurements {:.1} s", m.wall_s)),
                out.display(),
                if rep.measured.is_some() { ", measured.json" } else { "" }
            );
            let failed = rep.failures();
            let failed_parts = rep.measured.as_ref().map_or(0, |m| m.failures());
            if failed == 0 && failed_parts == 0 {
                ExitCode::SUCCESS
            } else {
                if failed > 0 {
                    eprintln!(
                        "schedlab reproduce: {failed} runs failed (listed in their sections); the others are in the report"
                    );
                }
                if failed_parts > 0 {
                    eprintln!("schedlab reproduce: {failed_parts} real-runtime measurements failed (listed in the last section)");
                }
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("schedlab reproduce: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// `schedlab sweep`'s flags.
pub(crate) struct SweepArgs {
    quick: bool,
    out: Option<PathBuf>,
    threads: Option<usize>,
    resume: bool,
    max_memory: String,
    mpi: bool,
}

fn sweep(args: SweepArgs, file: &std::path::Path) -> ExitCode {
    let SweepArgs { quick, out, threads, resume, max_memory, mpi } = args;
    let fail = |e: schedlab_lab::LabError| {
        eprintln!("schedlab sweep: {e}");
        ExitCode::from(e.exit_code())
    };
    if let Some(Err(e)) = threads.map(|t| check_threads("--threads", t)) {
        eprintln!("schedlab sweep: {e}");
        return ExitCode::from(2);
    }
    let max_memory = match parse_size(&max_memory) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("schedlab sweep: --max-memory: {e}");
            return ExitCode::from(2);
        }
    };
    if mpi {
        // Every rank sees the same arguments, so the checks above failed alike on all.
        return mpi_sweep::run(mpi_sweep::Args { quick, out, threads: threads.unwrap_or(0), resume, max_memory }, file);
    }
    let plan = match schedlab_lab::Experiment::load(file).and_then(|x| x.plan_within(quick, max_memory)) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let dir = out.unwrap_or_else(|| PathBuf::from("out").join(&plan.name));
    // Ctrl-C: start no new run; the runs under way finish and are kept.
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = cancel.clone();
    let _ = ctrlc::set_handler(move || flag.store(true, std::sync::atomic::Ordering::Relaxed));
    let opts = schedlab_lab::SweepOptions {
        threads: threads.unwrap_or(0),
        progress: true,
        journal: Some(dir.join("runs")),
        resume,
        cancel: Some(cancel),
        ..Default::default()
    };
    let sweep = match schedlab_lab::run_sweep(plan, &opts) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    if sweep.interrupted {
        let kept = sweep.runs.iter().flatten().count();
        eprintln!(
            "schedlab sweep: interrupted: {kept} of {} runs finished and kept in {}/; finish with the same command and --resume",
            sweep.runs.len(),
            dir.join("runs").display()
        );
        return ExitCode::from(130);
    }
    let on = format!("{} threads", sweep.threads);
    finish_sweep(&sweep, &dir, &on, &|_| None)
}

/// Print the table, write the files and say what happened; `rank_of` names the MPI
/// rank a failed run ran on (`None` for this process).
pub(crate) fn finish_sweep(
    sweep: &schedlab_lab::Sweep,
    dir: &std::path::Path,
    on: &str,
    rank_of: &dyn Fn(&schedlab_lab::Failure) -> Option<usize>,
) -> ExitCode {
    let n = sweep.runs.len();
    print!("{}", sweep.table().to_markdown());
    let written = schedlab_lab::write_outputs(sweep, dir);
    for f in &sweep.failures {
        let rank = rank_of(f).map_or(String::new(), |r| format!(" on rank {r}"));
        eprintln!("schedlab sweep: failed{rank}: {}: {}", sweep.describe(&f.key), f.error);
    }
    match written {
        Ok(o) => {
            println!();
            let resumed = if sweep.resumed > 0 {
                format!(" ({} kept from the earlier sweep)", sweep.resumed)
            } else {
                String::new()
            };
            println!(
                "{} of {n} runs finished{resumed} in {:.2} s wall on {on}; results in {}/ (results.json, results.csv, table.md, chart.svg, timing.json; every run in runs/)",
                n - sweep.failures.len(),
                sweep.wall_s,
                o.dir.display()
            );
            if sweep.failures.is_empty() {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "schedlab sweep: {} of {n} runs failed (listed under \"failures\" in results.json); the others are in the tables",
                    sweep.failures.len()
                );
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("schedlab sweep: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

#[cfg(feature = "mpi")]
fn bench_mpi(quick: bool, json: bool, out: Option<PathBuf>, fault: Option<&str>) -> ExitCode {
    bench_mpi::run(quick, json, out, fault)
}

#[cfg(feature = "mpi")]
fn bench_mpi_order() -> ExitCode {
    bench_mpi::check_order()
}

#[cfg(not(feature = "mpi"))]
fn bench_mpi_order() -> ExitCode {
    bench_mpi(false, false, None, None)
}

#[cfg(not(feature = "mpi"))]
fn bench_mpi(_quick: bool, _json: bool, _out: Option<PathBuf>, _fault: Option<&str>) -> ExitCode {
    eprintln!(
        "schedlab bench --mpi: this schedlab was built without MPI; rebuild with \
         `cargo build --release -p schedlab --features mpi` (needs an MPI library and libclang)"
    );
    ExitCode::from(2)
}
