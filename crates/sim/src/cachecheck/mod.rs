//! The simulator's L2 model checked against cachegrind on one synthetic run-queue
//! walk (`schedlab cachecheck`, and `schedlab bench`'s `cache-model` rows).
//!
//! The MODEL side runs the walk through the real [`SimPlatform`] (one CPU, a lock
//! held, `touch(Line::Task(i), Read)` per visit) and takes its walk counters. The
//! REPLAY side is [`run_replay`], which the running executable must reach as its
//! subcommand [`REPLAY_SUBCOMMAND`] (the flags of `schedlab cachecheck`), run under
//! `valgrind --tool=cachegrind`: it reads one byte at every visited task's hot
//! address ([`schedlab_core::layout::task_hot_addr`], the simulator's own address
//! function) in a buffer aligned so that those addresses fall into the same cache
//! sets as the model's. Only the walk function's counts are taken from cachegrind's
//! output file.
//!
//! Cachegrind's LL only sees D1 misses, so D1 is the smallest cachegrind accepts:
//! one set of two ways with the LL's line size. It can only hide a re-read of one of
//! the two lines read just before, which the LL would hit anyway (see
//! docs/cost-model.md, "Checked against cachegrind").

mod cachegrind;
mod replay;
mod walk;

pub use replay::run_replay;
pub use walk::{Order, Walk, MAX_SET_SPAN, MAX_TASKS, MAX_VISITS};

use crate::platform::SimPlatform;
use crate::{CostModel, Machine};
use schedlab_core::{Access, Line, Platform, SchedLock};
use thiserror::Error;

/// The hidden subcommand through which [`cachegrind`] runs the replay in this
/// executable under valgrind, with the walk's flags (`--l2=BYTES`, `--assoc`, `--line`,
/// `--tasks`, `--colours`, `--reps`, `--order`, `--seed`); it must call [`run_replay`].
pub const REPLAY_SUBCOMMAND: &str = "cachecheck-replay";

/// Why a comparison could not be made: a walk the two sides cannot agree on, or
/// cachegrind missing or unusable.
#[derive(Debug, Error)]
pub enum CacheCheckError {
    /// A walk parameter out of range (the message names the flag).
    #[error("{0}")]
    BadWalk(String),
    #[error("valgrind is not installed (the cachegrind side needs it: apt-get install valgrind)")]
    NoValgrind,
    #[error("cannot run valgrind: {0}")]
    Valgrind(std::io::Error),
    /// Valgrind exited with an error; the last lines of its output.
    #[error("valgrind failed ({status}):\n{tail}")]
    ValgrindFailed { status: std::process::ExitStatus, tail: String },
    #[error("cannot find this executable: {0}")]
    NoExe(std::io::Error),
    #[error("cannot create {path}: {source}")]
    TempDir { path: String, source: std::io::Error },
    #[error("cannot read {path}: {source}")]
    ReadOutput { path: String, source: std::io::Error },
    /// Cachegrind's output file does not hold the walk's counts.
    #[error("{path}: {msg}")]
    BadOutput { path: String, msg: String },
    #[error("buffer layout: {0}")]
    Layout(std::alloc::LayoutError),
    #[error("cannot allocate {0} bytes")]
    Alloc(usize),
}

/// Largest relative difference (model vs cachegrind misses) that passes.
pub const TOLERANCE: f64 = 0.02;

/// The model's and cachegrind's counts for one walk.
#[derive(Debug)]
pub struct Comparison {
    pub model_reads: u64,
    pub model_misses: u64,
    pub cg_reads: u64,
    pub cg_misses: u64,
}

impl Comparison {
    /// |model − cachegrind| / cachegrind (0 when both are 0).
    pub fn rel_diff(&self) -> f64 {
        let (m, c) = (self.model_misses as f64, self.cg_misses as f64);
        if m == c {
            0.0
        } else if c == 0.0 {
            f64::INFINITY
        } else {
            (m - c).abs() / c
        }
    }
}

/// The model side: the walk through the simulator's platform on CPU 0, under a lock
/// so that the platform's walk counters (`locked_task_reads/misses`) count it.
/// Returns (reads, misses).
pub fn model(w: &Walk) -> (u64, u64) {
    // Only the L2 geometry matters here; latencies come from any preset.
    let m = Machine::preset("up").expect("the 'up' preset exists");
    let kb = (w.l2_bytes / 1024) as u32;
    let p = SimPlatform::new(CostModel::new(&m), vec![0], w.tasks as usize, kb, w.assoc, w.line, w.colours);
    let lock = p.new_lock("walk", ());
    p.begin(0, 0);
    lock.with(&p, |_| w.for_each_visit(|i| p.touch(Line::Task(i as u32), Access::Read)));
    let b = p.bus_stats();
    (b.locked_task_reads, b.locked_task_misses)
}

/// The replay side: cachegrind's counts of the walk function, from this executable
/// run under valgrind as [`REPLAY_SUBCOMMAND`]. `ll_assoc` gives cachegrind's LL other
/// ways than the model's L2 (a mismatch the check must catch).
pub fn cachegrind(w: &Walk, ll_assoc: Option<u32>) -> Result<(u64, u64), CacheCheckError> {
    let exe = std::env::current_exe().map_err(CacheCheckError::NoExe)?;
    let dir = std::env::temp_dir().join(format!("schedlab-cachecheck-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|source| CacheCheckError::TempDir { path: dir.display().to_string(), source })?;
    let out = dir.join("cachegrind.out");
    let res = cachegrind::run(&exe, w, ll_assoc, &out);
    let _ = std::fs::remove_dir_all(&dir);
    res
}

/// Both sides of `w`, after checking it (and, with `ll_assoc`, the LL geometry given to
/// cachegrind).
pub fn compare(w: &Walk, ll_assoc: Option<u32>) -> Result<Comparison, CacheCheckError> {
    w.validate()?;
    if let Some(a) = ll_assoc {
        Walk { assoc: a, ..*w }.validate().map_err(|e| CacheCheckError::BadWalk(format!("--cachegrind-assoc: {e}")))?;
    }
    let (cg_reads, cg_misses) = cachegrind(w, ll_assoc)?;
    let (model_reads, model_misses) = model(w);
    Ok(Comparison { model_reads, model_misses, cg_reads, cg_misses })
}
