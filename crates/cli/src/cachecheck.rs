//! `schedlab cachecheck`: the simulator's L2 model against cachegrind on one
//! synthetic run-queue walk (`schedlab_sim::cachecheck`), printed as a table or JSON;
//! and its hidden replay subcommand.

use schedlab_sim::cachecheck::{compare, run_replay, CacheCheckError, TOLERANCE};
pub use schedlab_sim::cachecheck::{Order, Walk};
use std::process::ExitCode;

/// Every error of the check is the caller's to fix (a walk out of range, valgrind
/// missing or unusable): exit code 2.
fn exit_code(_: &CacheCheckError) -> u8 {
    2
}

/// `schedlab cachecheck-replay`: the walk under cachegrind; returns only on an error.
pub fn replay_main(w: Walk) -> ExitCode {
    match run_replay(&w) {
        Ok(never) => match never {},
        Err(e) => {
            eprintln!("schedlab cachecheck-replay: {e}");
            ExitCode::from(exit_code(&e))
        }
    }
}

/// `schedlab cachecheck`: print the comparison; exit 1 beyond [`TOLERANCE`].
/// `ll_assoc` gives cachegrind's LL other ways than the model's L2 (hidden option
/// `--cachegrind-assoc`: a mismatch the check must catch).
pub fn run(w: Walk, ll_assoc: Option<u32>, json: bool) -> ExitCode {
    let c = match compare(&w, ll_assoc) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("schedlab cachecheck: {e}");
            return ExitCode::from(exit_code(&e));
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
