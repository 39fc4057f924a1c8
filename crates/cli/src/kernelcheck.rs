//! `schedlab kernelcheck`: the simulator against this machine's kernel (docs/kernelcheck.md).

use crate::outpath::{self, Out};
use schedlab_kernelcheck::{self as kc, MachineChoice};
use std::path::PathBuf;
use std::process::ExitCode;

pub fn run(quick: bool, json: bool, machine: Option<String>) -> ExitCode {
    let (choice, perf, self_exe) = match prepare(machine) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let (machine, machine_desc) = match host(&choice) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let opts =
        kc::Options { quick, self_exe, perf, machine, machine_desc, progress: |s| eprintln!("kernelcheck: {s}") };
    match kc::run(&opts) {
        Ok(r) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&r).expect("serialise"));
            } else {
                print!("{}", kc::render(&r));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("schedlab kernelcheck: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `schedlab kernelcheck --tbench`: tbench on the kernel, the simulator and the runtime.
pub fn run_tbench(quick: bool, json: bool, machine: Option<String>, trace_out: Option<PathBuf>) -> ExitCode {
    if let Some(d) = &trace_out {
        if let Err(e) = outpath::check("--trace-out", d, Out::Dir) {
            return refuse(&e);
        }
    }
    let (choice, perf, self_exe) = match prepare(machine) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if let Err(e) = schedlab_bench::netbench::tbench_tools() {
        return refuse(&e.to_string());
    }
    let (machine, machine_desc) = match host(&choice) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let opts = kc::tbench::TbenchOptions {
        quick,
        self_exe,
        perf,
        machine,
        machine_desc,
        trace_dir: trace_out,
        progress: |s| eprintln!("kernelcheck: {s}"),
    };
    match kc::tbench::run(&opts) {
        Ok(r) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&r).expect("serialise"));
            } else {
                print!("{}", kc::tbench::render(&r));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("schedlab kernelcheck: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What both modes refuse before any work: the machine, then perf, then this
/// program's path (for the recorded children).
fn prepare(machine: Option<String>) -> Result<(MachineChoice, String, PathBuf), ExitCode> {
    let choice = match machine {
        Some(m) => match kc::load_machine(&m) {
            Ok(_) => MachineChoice::Given(m),
            Err(e) => return Err(refuse(&e.to_string())),
        },
        None => MachineChoice::Calibrate,
    };
    let perf = kc::perf::check().map_err(|e| refuse(&e.to_string()))?;
    let self_exe = std::env::current_exe()
        .map_err(|e| refuse(&format!("cannot find this program's path for the recorded children: {e}")))?;
    Ok((choice, perf, self_exe))
}

/// The host machine (a quick calibration unless one is given).
fn host(choice: &MachineChoice) -> Result<(schedlab_sim::Machine, String), ExitCode> {
    if matches!(choice, MachineChoice::Calibrate) {
        eprintln!("kernelcheck: calibrating this machine (quick)...");
    }
    kc::host_machine(choice).map_err(|e| refuse(&e.to_string()))
}

fn refuse(e: &str) -> ExitCode {
    eprintln!("schedlab kernelcheck: {e}");
    ExitCode::from(2)
}

/// The kernel-thread child `kernelcheck` records (`kernelcheck-kthread chat 2 20 50`).
pub fn kthread(args: &[String]) -> ExitCode {
    child("kernelcheck-kthread", kc::kthread::main(args))
}

/// The tbench run `kernelcheck --tbench` records (`kernelcheck-tbench CLIENTS SECS`).
pub fn tbench_child(args: &[String]) -> ExitCode {
    child("kernelcheck-tbench", kc::tbench::child(args))
}

/// A hidden child's exit: success, or its error and exit code 2.
fn child(name: &str, done: Result<(), kc::Error>) -> ExitCode {
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("schedlab {name}: {e}");
            ExitCode::from(2)
        }
    }
}
