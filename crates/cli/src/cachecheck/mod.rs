//! `schedlab cachecheck`: the simulator's L2 model against cachegrind on one
//! synthetic run-queue walk.
//!
//! The MODEL side runs the walk through the real [`SimPlatform`] (one CPU, a lock
//! held, `touch(Line::Task(i), Read)` per visit) and takes its walk counters. The
//! REPLAY side is this binary's hidden `cachecheck-replay` subcommand run under
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

pub use replay::replay_main;
pub use walk::{Order, Walk};

use schedlab_core::{Access, Line, Platform, SchedLock};
use schedlab_sim::platform::SimPlatform;
use schedlab_sim::{CostModel, Machine};
use std::process::ExitCode;

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

/// The replay side: cachegrind's counts of the walk function. `Err` carries an exit
/// code (2: valgrind missing or unusable) and a message.
pub fn replay(w: &Walk, ll_assoc: Option<u32>) -> Result<(u64, u64), (u8, String)> {
    let exe = std::env::current_exe().map_err(|e| (2, format!("cannot find this executable: {e}")))?;
    let dir = std::env::temp_dir().join(format!("schedlab-cachecheck-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| (2, format!("cannot create {}: {e}", dir.display())))?;
    let out = dir.join("cachegrind.out");
    let res = cachegrind::run(&exe, w, ll_assoc, &out);
    let _ = std::fs::remove_dir_all(&dir);
    res
}

pub fn compare(w: &Walk, ll_assoc: Option<u32>) -> Result<Comparison, (u8, String)> {
    let (cg_reads, cg_misses) = replay(w, ll_assoc)?;
    let (model_reads, model_misses) = model(w);
    Ok(Comparison { model_reads, model_misses, cg_reads, cg_misses })
}

/// `schedlab cachecheck`: print the comparison; exit 1 beyond [`TOLERANCE`].
/// `ll_assoc` gives cachegrind's LL other ways than the model's L2 (hidden option
/// `--cachegrind-assoc`: a mismatch the check must catch).
pub fn run(w: Walk, ll_assoc: Option<u32>, json: bool) -> ExitCode {
    if let Err(e) = w.validate() {
        eprintln!("schedlab cachecheck: {e}");
        return ExitCode::from(2);
    }
    if let Some(a) = ll_assoc {
        let mut other = w;
        other.assoc = a;
        if let Err(e) = other.validate() {
            eprintln!("schedlab cachecheck: --cachegrind-assoc: {e}");
            return ExitCode::from(2);
        }
    }
    let c = match compare(&w, ll_assoc) {
        Ok(c) => c,
        Err((code, msg)) => {
            eprintln!("schedlab cachecheck: {msg}");
            return ExitCode::from(code);
        }
    };
    let rel = c.rel_diff();
    let ok = rel <= TOLERANCE;
    if json {
        let v = serde_json::json!({
            "l2_bytes": w.l2_bytes, "assoc": w.assoc, "line": w.line, "tasks": w.tasks,
            "colours": w.colours, "reps": w.reps, "order": w.order.name(), "seed": w.seed,
            "model_reads": c.model_reads, "model_misses": c.model_misses,
            "cachegrind_reads": c.cg_reads, "cachegrind_misses": c.cg_misses,
            "rel_diff": if rel.is_finite() { serde_json::json!(rel) } else { serde_json::Value::Null },
            "tolerance": TOLERANCE, "agree": ok,
        });
        println!("{}", serde_json::to_string_pretty(&v).expect("plain JSON"));
    } else {
        println!(
            "walk: {} tasks, {} colour(s), {} reps, {} order (seed {}); L2 {} KB {}-way, {}-byte lines",
            w.tasks,
            w.colours,
            w.reps,
            w.order.name(),
            w.seed,
            w.l2_bytes / 1024,
            w.assoc,
            w.line
        );
        println!("{:<12} {:>10} {:>10}", "", "reads", "misses");
        println!("{:<12} {:>10} {:>10}", "model", c.model_reads, c.model_misses);
        println!("{:<12} {:>10} {:>10}", "cachegrind", c.cg_reads, c.cg_misses);
        println!(
            "relative difference {:.3} % (tolerance {:.0} %): {}",
            rel * 100.0,
            TOLERANCE * 100.0,
            if ok { "agree" } else { "DISAGREE" }
        );
    }
    if c.cg_reads != c.model_reads {
        // Cachegrind saw other reads in the walk function than the walk's own: its
        // misses are then not the walk's alone.
        eprintln!(
            "schedlab cachecheck: warning: cachegrind counted {} reads in the walk, the model {}",
            c.cg_reads, c.model_reads
        );
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
