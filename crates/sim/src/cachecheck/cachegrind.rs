//! Running the replay under cachegrind and reading the walk functions' counts from
//! its output file.

use super::replay::WALK_FN_PREFIX;
use super::walk::Walk;
use super::{CacheCheckError, REPLAY_SUBCOMMAND};
use std::path::Path;
use std::process::Command;

/// The cachegrind options for `w`'s geometry. D1 is the smallest cachegrind accepts
/// (it refuses a single line): one set of two `line`-byte ways, so that nearly every
/// walk read reaches the LL. I1 is a normal 32 KB one: the walk's code then stays in
/// I1 and is fetched from the LL only once, before the walk's first read.
/// `ll_assoc` overrides the LL's ways (a deliberate mismatch, to test the checker).
pub(crate) fn cache_args(w: &Walk, ll_assoc: Option<u32>) -> Vec<String> {
    let l = w.line;
    vec![
        "--tool=cachegrind".into(),
        "--cache-sim=yes".into(),
        format!("--I1=32768,8,{l}"),
        format!("--D1={},2,{l}", 2 * l),
        format!("--LL={},{},{l}", w.l2_bytes, ll_assoc.unwrap_or(w.assoc)),
    ]
}

/// Run the replay of `w` under cachegrind, writing its output to `out`; return the
/// walk functions' (data reads, LL data read misses).
pub(crate) fn run(exe: &Path, w: &Walk, ll_assoc: Option<u32>, out: &Path) -> Result<(u64, u64), CacheCheckError> {
    let mut cmd = Command::new("valgrind");
    cmd.args(cache_args(w, ll_assoc)).arg(format!("--cachegrind-out-file={}", out.display())).arg(exe).args([
        REPLAY_SUBCOMMAND.to_string(),
        format!("--l2={}", w.l2_bytes),
        format!("--assoc={}", w.assoc),
        format!("--line={}", w.line),
        format!("--tasks={}", w.tasks),
        format!("--colours={}", w.colours),
        format!("--reps={}", w.reps),
        format!("--order={}", w.order.name()),
        format!("--seed={}", w.seed),
    ]);
    let o = match cmd.output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(CacheCheckError::NoValgrind),
        Err(e) => return Err(CacheCheckError::Valgrind(e)),
    };
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let tail: Vec<&str> = err.lines().rev().take(8).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(CacheCheckError::ValgrindFailed { status: o.status, tail: tail.join("\n") });
    }
    let path = || out.display().to_string();
    let text = std::fs::read_to_string(out).map_err(|source| CacheCheckError::ReadOutput { path: path(), source })?;
    walk_counts(&text).map_err(|msg| CacheCheckError::BadOutput { path: path(), msg })
}

/// Sum of the `Dr` and `DLmr` columns over the cost lines of the walk functions in a
/// cachegrind output file (`events:` names the columns; `fn=` starts a function's
/// lines; a cost line is a line number then counts, trailing zeros omissible).
pub(crate) fn walk_counts(text: &str) -> Result<(u64, u64), String> {
    let mut cols: Option<(usize, usize)> = None;
    let mut in_walk = false;
    let mut seen = false;
    let (mut dr, mut dlmr) = (0u64, 0u64);
    for line in text.lines() {
        if let Some(ev) = line.strip_prefix("events:") {
            let names: Vec<&str> = ev.split_whitespace().collect();
            let at = |n: &str| names.iter().position(|&x| x == n);
            match (at("Dr"), at("DLmr")) {
                (Some(a), Some(b)) => cols = Some((a, b)),
                _ => return Err(format!("no Dr/DLmr events (was --cache-sim=yes given?): {ev}")),
            }
        } else if let Some(f) = line.strip_prefix("fn=") {
            in_walk = f.starts_with(WALK_FN_PREFIX);
            seen |= in_walk;
        } else if in_walk && line.starts_with(|c: char| c.is_ascii_digit()) {
            let (a, b) = cols.ok_or("cost line before the events: line")?;
            let nums: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .map(|t| t.parse().map_err(|_| format!("bad cost line '{line}'")))
                .collect::<Result<_, _>>()?;
            dr += nums.get(a).copied().unwrap_or(0);
            dlmr += nums.get(b).copied().unwrap_or(0);
        }
    }
    if !seen {
        return Err(format!("no {WALK_FN_PREFIX}* function in the output (symbols stripped?)"));
    }
    Ok((dr, dlmr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_only_the_walk_functions() {
        let text = "desc: x\ncmd: y\nevents: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n\
                    fl=a.rs\nfn=main\n10 5 0 0 3 3 3\n\
                    fl=b.rs\nfn=schedlab_cachecheck_walk_seq\n20 9 1 1 4 4 2 0 0 0\n21 2 0 0 6 6 5\n22 1\n\
                    fn=other\n30 1 0 0 100 100 100\nsummary: 1 2 3\n";
        assert_eq!(walk_counts(text), Ok((10, 7)));
        assert!(walk_counts("events: Ir\nfn=schedlab_cachecheck_walk_seq\n").unwrap_err().contains("Dr"));
        assert!(walk_counts("events: Ir Dr DLmr\nfn=main\n1 1 1 1\n").unwrap_err().contains("stripped"));
    }
}
