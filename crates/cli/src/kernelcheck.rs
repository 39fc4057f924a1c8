//! `schedlab kernelcheck`: the simulator against this machine's kernel (docs/kernelcheck.md).

use schedlab_kernelcheck::{self as kc, MachineChoice};
use std::process::ExitCode;

pub fn run(quick: bool, json: bool, machine: Option<String>) -> ExitCode {
    // Everything that can be refused is refused before any work: the machine, then perf.
    let choice = match machine {
        Some(m) => match kc::load_machine(&m) {
            Ok(_) => MachineChoice::Given(m),
            Err(e) => return refuse(&e),
        },
        None => MachineChoice::Calibrate,
    };
    let perf = match kc::perf::check() {
        Ok(v) => v,
        Err(e) => return refuse(&e),
    };
    let self_exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return refuse(&format!("cannot find this program's path for the kernel-thread rows: {e}")),
    };
    if matches!(choice, MachineChoice::Calibrate) {
        eprintln!("kernelcheck: calibrating this machine (quick)...");
    }
    let (machine, machine_desc) = match kc::host_machine(&choice) {
        Ok(m) => m,
        Err(e) => return refuse(&e),
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

fn refuse(e: &str) -> ExitCode {
    eprintln!("schedlab kernelcheck: {e}");
    ExitCode::from(2)
}

/// The kernel-thread child `kernelcheck` records (`kernelcheck-kthread chat 2 20 50`).
pub fn kthread(args: &[String]) -> ExitCode {
    match kc::kthread::main(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("schedlab kernelcheck-kthread: {e}");
            ExitCode::from(2)
        }
    }
}
