//! `schedlab`: the scheduler laboratory's command-line tool.

use clap::{Parser, Subcommand, ValueEnum};
use schedlab_core::policy::POLICY_NAMES;
use schedlab_core::PolicySpec;
use schedlab_sim::{machine::PRESETS, simulate, Machine, SimConfig, SimError};
use schedlab_workloads::{parse_workload, WORKLOAD_NAMES};
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
        /// Scheduling policy: dss, mqs.
        #[arg(long, short)]
        policy: String,
        /// Workload spec, e.g. chat:rooms=10,messages=100 | hackbench:groups=4,loops=100 | pingpong:rounds=100000.
        #[arg(long, short)]
        workload: String,
        /// Seed of the simulation's random numbers (same seed, same result).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Give up after this many virtual seconds.
        #[arg(long, default_value_t = 3600.0)]
        max_virtual_s: f64,
        /// Check policy invariants and message conservation after every event (slow).
        #[arg(long)]
        check: bool,
    },
    /// List machine presets, policies and workloads.
    List,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::List => {
            println!("machines:  {}  (or a .toml machine file; see docs/machines.md)", PRESETS.join(", "));
            println!("policies:  {}", POLICY_NAMES.join(", "));
            println!("workloads: {}", WORKLOAD_NAMES.join(", "));
            ExitCode::SUCCESS
        }
        Cmd::Sim { machine, policy, workload, seed, format, max_virtual_s, check } => {
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
            let workload = match parse_workload(&workload) {
                Ok(w) => w,
                Err(e) => return usage(e.to_string()),
            };
            if !(max_virtual_s.is_finite() && max_virtual_s > 0.0) {
                return usage(format!("--max-virtual-s {max_virtual_s}: must be a positive number of seconds"));
            }
            let cfg = SimConfig {
                seed,
                max_virtual_ns: (max_virtual_s * 1e9).min(u64::MAX as f64 / 2.0) as u64,
                check_invariants: check,
            };
            match simulate(&machine, &policy, &workload, &cfg) {
                Ok(r) => {
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
