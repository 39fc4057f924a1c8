//! `schedlab reproduce`: the catalog's simulations (`schedlab_lab::reproduce`), then the
//! real-runtime measurements (`schedlab_lab::reproduce::real`), into one report.

use crate::outpath;
use std::path::PathBuf;
use std::process::ExitCode;

/// `schedlab reproduce`.
pub fn run(
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
    let launcher = match mpi.then(schedlab_lab::reproduce::mpi::launcher).transpose() {
        Ok(l) => l,
        Err(e) => return usage(format!("--mpi: {e}")),
    };
    if let Some(Err(e)) = threads.map(|t| crate::check_threads("--threads", t)) {
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
    if let Err(e) = outpath::check("--out", &out, outpath::Out::Dir) {
        return usage(e);
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
        let parts = schedlab_lab::reproduce::real::Parts {
            local: measure,
            mpi: launcher.as_deref().map(|l| (l, mpi_dir.as_path())),
        };
        rep.measured = Some(schedlab_lab::reproduce::real::measure(quick, true, parts));
    }
    match schedlab_lab::reproduce::write(&rep, &out) {
        Ok(_) => {
            println!(
                "{} experiments, {} runs in {:.1} s wall on {} threads{}; report in {}/ (report.md, index.html, results.json, fidelity.md, plots/{})",
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
