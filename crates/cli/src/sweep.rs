//! `schedlab sweep`: an experiment file's matrix run by `schedlab_lab` (`--mpi`:
//! `mpi_sweep.rs`), its tables printed and its files written.

use crate::outpath;
use schedlab_workloads::footprint::parse_size;
use std::path::PathBuf;
use std::process::ExitCode;

/// `schedlab sweep`'s flags.
pub(crate) struct SweepArgs {
    pub quick: bool,
    pub out: Option<PathBuf>,
    pub threads: Option<usize>,
    pub resume: bool,
    pub max_memory: String,
    pub mpi: bool,
}

pub fn run(args: SweepArgs, file: &std::path::Path) -> ExitCode {
    let SweepArgs { quick, out, threads, resume, max_memory, mpi } = args;
    let fail = |e: schedlab_lab::LabError| {
        eprintln!("schedlab sweep: {e}");
        ExitCode::from(e.exit_code())
    };
    if let Some(Err(e)) = threads.map(|t| crate::check_threads("--threads", t)) {
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
    // Every rank sees the same arguments and files, so the checks above and this one
    // fail alike on all. The default directory, `out/<name>`, is named by the
    // experiment: a local sweep checks it once the plan is made; an MPI sweep here, from
    // the file's name (a file that does not load is reported by the sweep, as ever).
    let to_check = match (&out, mpi) {
        (Some(d), _) => Some(d.clone()),
        (None, true) => schedlab_lab::Experiment::load(file).ok().map(|x| PathBuf::from("out").join(x.name)),
        (None, false) => None,
    };
    if let Some(Err(e)) = to_check.as_deref().map(|d| outpath::check("--out", d, outpath::Out::Dir)) {
        let default = if out.is_none() { " (the default of --out)" } else { "" };
        eprintln!("schedlab sweep: {e}{default}");
        return ExitCode::from(2);
    }
    if mpi {
        return crate::mpi_sweep::run(
            crate::mpi_sweep::Args { quick, out, threads: threads.unwrap_or(0), resume, max_memory },
            file,
        );
    }
    let plan = match schedlab_lab::Experiment::load(file).and_then(|x| x.plan_within(quick, max_memory)) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let dir = match out {
        Some(dir) => dir,
        None => {
            let dir = PathBuf::from("out").join(&plan.name);
            if let Err(e) = outpath::check("--out", &dir, outpath::Out::Dir) {
                eprintln!("schedlab sweep: {e} (the default of --out)");
                return ExitCode::from(2);
            }
            dir
        }
    };
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
