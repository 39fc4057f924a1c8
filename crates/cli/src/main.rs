//! `schedlab`: the scheduler laboratory's command-line tool.

mod bench;
#[cfg(feature = "mpi")]
mod bench_mpi;
mod cachecheck;
mod kernelcheck;
mod mpi_sweep;
mod outpath;
mod reproduce;
mod sim;
mod sweep;
mod validate;

use clap::{Args, Parser, Subcommand, ValueEnum};
use schedlab_core::{options, policies};
use schedlab_sim::machine::PRESETS;
use schedlab_workloads::footprint::parse_size;
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
    Sim(sim::SimArgs),
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
        /// Instead of the default set: the server rows. HTTP: a hyper server of static pages on
        /// schedlab under every scheduler and on Tokio, loaded by wrk over loopback at 16 and
        /// 256 connections (skipped with a note without wrk). tbench: a server of dbench's
        /// tbench protocol on the same runtimes and dbench's tbench_srv under the kernel,
        /// driven by the real tbench client at 4 to 48 clients (`--quick`: 4 and 16; skipped
        /// with a note without tbench). docs/bench.md.
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
  schedlab validate --quick --machine-out host.toml")]
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
    /// The simulator against this machine's Linux kernel: perf bench and kernel-thread
    /// workloads recorded with `perf sched record`, beside the simulator under eevdf and cfs.
    #[command(
        after_help = "Runs `perf bench sched messaging` (threads and processes x pipes and sockets), `perf bench
sched pipe` and schedlab's kernel-thread Chat and hackbench under the kernel, each once alone
(throughput) and once under `perf sched record` (context switches, migrations, wake-to-run
latency, run length, read back with `perf sched script`), then the equivalent workloads on the
simulator under eevdf and cfs, and prints the three side by side with the ratios sim/kernel.
Needs perf and permission to record the sched tracepoints (root): exits 2 otherwise.
With --tbench: dbench's tbench client and tbench_srv recorded under the kernel, the recording
replayed by the simulator (trace:) under dss, o1, mqs, cfs and eevdf, and the tbench server on
schedlab's runtime under the same policies, in one table (docs/kernelcheck.md, \"tbench on three
engines\"); needs tbench and tbench_srv (apt-get install dbench) too.
docs/kernelcheck.md. Examples:
  schedlab kernelcheck --quick
  schedlab kernelcheck --machine host.toml --format json
  schedlab kernelcheck --tbench --trace-out tbench-traces"
    )]
    Kernelcheck {
        /// Small sizes (CI; well under a minute).
        #[arg(long)]
        quick: bool,
        /// One real workload on three engines: tbench under the kernel (recorded), its
        /// recording replayed on the simulator, and the tbench server on the runtime.
        #[arg(long)]
        tbench: bool,
        /// With --tbench: keep the converted recordings here (`tbench-cN.json`, for
        /// `schedlab sim --workload trace:FILE`) [default: temporary files, removed].
        #[arg(long, value_name = "DIR", requires = "tbench")]
        trace_out: Option<std::path::PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// The simulated host: a machine file (`schedlab validate --machine-out FILE`) or a
        /// preset [default: a quick calibration of this machine, as `validate --quick`'s].
        #[arg(long, value_name = "FILE")]
        machine: Option<String>,
    },
    /// The kernel-thread program `kernelcheck` records (run by it under perf).
    #[command(hide = true, name = "kernelcheck-kthread")]
    KernelcheckKthread {
        /// `chat ROOMS USERS MESSAGES` or `hackbench GROUPS FDS LOOPS`.
        args: Vec<String>,
    },
    /// The tbench run `kernelcheck --tbench` records (run by it under perf).
    #[command(hide = true, name = "kernelcheck-tbench")]
    KernelcheckTbench {
        /// `CLIENTS SECS`.
        args: Vec<String>,
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
            println!("policies (any also takes {}):", options::help::<policies::KernelOptions>()[0]);
            for e in policies::entries() {
                println!("  {:<9} {}", e.name, e.summary);
                for p in &e.params {
                    println!("  {:<9}   {p}", "");
                }
            }
            println!("workloads:");
            for e in schedlab_workloads::REGISTRY {
                println!("  {:<9} {}", e.name, e.summary);
                for p in (e.params)() {
                    println!("  {:<9}   {p}", "");
                }
            }
            println!("  {:<9} trace:FILE[,mhz=N]: a recorded trace's wake-up dependencies (docs/traces.md)", "trace");
            for p in options::help::<schedlab_workloads::trace_in::TraceOptions>() {
                println!("  {:<9}   {p}", "");
            }
            println!("TIME: Nns, Nus, Nms or Ns (a bare number is ns; TICKS|TIME: a bare number is timer ticks)");
            ExitCode::SUCCESS
        }
        Cmd::Sweep { quick, out, threads, resume, max_memory, mpi, experiment } => {
            sweep::run(sweep::SweepArgs { quick, out, threads, resume, max_memory, mpi }, &experiment)
        }
        Cmd::Reproduce { quick, out, only, threads, experiments, mpi } => {
            reproduce::run(quick, out, only, threads, experiments, mpi)
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
        Cmd::Kernelcheck { quick, tbench, trace_out, format, machine } => {
            let json = matches!(format, Format::Json);
            if tbench {
                kernelcheck::run_tbench(quick, json, machine, trace_out)
            } else {
                kernelcheck::run(quick, json, machine)
            }
        }
        Cmd::KernelcheckKthread { args } => kernelcheck::kthread(&args),
        Cmd::KernelcheckTbench { args } => kernelcheck::tbench_child(&args),
        Cmd::Bench { mpi: true, check_order: true, .. } => bench_mpi_order(),
        Cmd::Bench { mpi: true, quick, format, out, fault, .. } => {
            // Every rank sees the same arguments, so the check fails alike on all.
            if let Some(Err(e)) = out.as_deref().map(|d| outpath::check("--out", d, outpath::Out::Dir)) {
                eprintln!("schedlab bench --mpi: {e}");
                return ExitCode::from(2);
            }
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
        Cmd::Sim(args) => sim::run(args),
    }
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
