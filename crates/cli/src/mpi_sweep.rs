//! `schedlab sweep --mpi`: one sweep spread over the ranks of an MPI job
//! (docs/mpi.md). The splitting and merging are `schedlab_lab::share`'s; this
//! file is only the transport, compiled with the cargo feature `mpi`.
//!
//! Protocol: every rank loads the experiment and runs its share (run i on rank
//! i mod K); every rank but 0 then sends rank 0 exactly one message, its results or the
//! error that stopped it, and rank 0 receives exactly one from each, whatever happened
//! to itself. So no rank is left waiting on another, and only rank 0 prints or writes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The flags of `schedlab sweep` that an MPI sweep uses.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) struct Args {
    pub quick: bool,
    pub out: Option<PathBuf>,
    /// Worker threads per rank; 0 = all cores.
    pub threads: usize,
    pub resume: bool,
    pub max_memory: u64,
}

#[cfg(not(feature = "mpi"))]
pub(crate) fn run(_args: Args, _file: &Path) -> ExitCode {
    eprintln!(
        "schedlab sweep: --mpi: this schedlab was built without the `mpi` cargo feature; rebuild it with \
         `cargo build --release --features mpi` (needs an MPI library such as OpenMPI, and libclang; \
         docs/mpi.md) and launch it with mpirun, or run the sweep locally without --mpi"
    );
    ExitCode::from(2)
}

#[cfg(feature = "mpi")]
pub(crate) fn run(args: Args, file: &Path) -> ExitCode {
    use mpi::traits::{Communicator, Destination, Source};
    use schedlab_lab::{error_part, run_sweep, Experiment, LabError, Share, Sweep, SweepOptions};

    if args.resume {
        // Rank 0's journal would have to be shared with the others' shares; not done.
        eprintln!("schedlab sweep: --resume cannot be combined with --mpi: resume the sweep without --mpi (rank 0's --out holds every finished run)");
        return ExitCode::from(2);
    }
    // Funneled: only this (main) thread calls MPI; the sweep's worker threads do not.
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        eprintln!("schedlab sweep: --mpi: MPI could not be initialised");
        return ExitCode::from(1);
    };
    let world = universe.world();
    let share = Share { rank: world.rank() as usize, ranks: world.size() as usize };
    let plan = Experiment::load(file).and_then(|x| x.plan_within(args.quick, args.max_memory));
    let dir = plan.as_ref().ok().map(|p| args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(&p.name)));
    let opts = SweepOptions {
        threads: args.threads,
        // Only rank 0 shows progress and keeps a journal: the others write nothing,
        // so ranks on one machine never race on one directory.
        progress: share.rank == 0,
        journal: if share.rank == 0 { dir.as_ref().map(|d| d.join("runs")) } else { None },
        share: Some(share),
        ..SweepOptions::default()
    };
    let start = std::time::Instant::now();
    // A panicking run must still send its rank's message, or rank 0 would wait forever.
    let own: Result<Sweep, LabError> = plan.and_then(|plan| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_sweep(plan, &opts)))
            .unwrap_or_else(|p| Err(LabError::Run(format!("a run panicked: {}", panic_message(&*p)))))
    });
    if share.rank != 0 {
        let text = match &own {
            Ok(sweep) => sweep.part_json(share),
            Err(e) => error_part(share.rank, e),
        };
        world.process_at_rank(0).send(text.as_bytes());
        // Rank 0 reports this rank's error and exits with its code; a non-zero exit
        // here could make mpirun kill rank 0 before it has said why.
        return ExitCode::SUCCESS;
    }
    // Receive from every rank before acting on anything, own errors included.
    let parts: Vec<Vec<u8>> =
        (1..share.ranks).map(|r| world.process_at_rank(r as mpi::Rank).receive_vec::<u8>().0).collect();
    let mut sweep = match own {
        Ok(s) => s,
        Err(e) => {
            eprintln!("schedlab sweep: rank 0: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    let dir = dir.expect("a plan was loaded");
    let journal = dir.join("runs");
    let mut failed_on: Vec<(schedlab_lab::RunKey, usize)> = Vec::new();
    let mut code = 0u8;
    for (i, bytes) in parts.iter().enumerate() {
        let rank = i + 1;
        match sweep.merge(rank, share.ranks, &String::from_utf8_lossy(bytes), Some(&journal)) {
            Ok(failures) => failed_on.extend(failures.into_iter().map(|f| (f.key, rank))),
            Err(e) => {
                eprintln!("schedlab sweep: {e}");
                code = code.max(e.exit_code());
            }
        }
    }
    if code != 0 {
        return ExitCode::from(code);
    }
    // The time the whole job took (timing.json), not rank 0's share of it.
    sweep.wall_s = start.elapsed().as_secs_f64();
    let on = format!("{} ranks × {} threads", share.ranks, sweep.threads);
    crate::sweep::finish_sweep(&sweep, &dir, &on, &|f| {
        Some(failed_on.iter().find(|(k, _)| *k == f.key).map_or(0, |&(_, r)| r))
    })
}

#[cfg(feature = "mpi")]
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}
