//! How long other threads kept the runtime's workers off their CPUs during a run.
//!
//! The real runtime's decisions depend on when its workers run: a worker that the
//! host's scheduler leaves waiting (another process on its vCPU) lets messages pile up,
//! so the tasks it runs next drain batches and block less. On a shared machine that
//! is the difference between two regimes of the same row (MQS on Chat, for one: at
//! 14–25 k switches when the workers wait 5–10 % of the run, 100–170 k when they
//! do not), so `validate` reports it per real run instead of leaving it to guess.
//!
//! Source: `/proc/self/task/<tid>/schedstat`, whose second field is the thread's
//! `run_delay`, the ns it spent runnable but not running (Linux ≥ 2.6.23 with
//! schedstats, always present since 4.x). Only threads named `schedlab-rt-<n>` (the
//! runtime's workers) are summed. Elsewhere (no procfs) the figure is `None`.

use std::collections::BTreeMap;

/// Name prefix of the runtime's worker threads (`crates/rt/src/runtime.rs`).
const WORKER_PREFIX: &str = "schedlab-rt-";

/// `run_delay` (ns) of each worker thread of this process, by thread id; `None` when
/// procfs cannot be read.
pub fn worker_run_delays() -> Option<BTreeMap<u64, u64>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir("/proc/self/task").ok()? {
        let Ok(e) = e else { continue };
        let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u64>().ok()) else { continue };
        let dir = e.path();
        // A thread may exit between the listing and the reads: skip it.
        let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else { continue };
        if !comm.trim_end().starts_with(WORKER_PREFIX) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(dir.join("schedstat")) else { continue };
        if let Some(d) = parse_run_delay(&stat) {
            out.insert(tid, d);
        }
    }
    Some(out)
}

/// The `run_delay` field (the second of three) of a `schedstat` line.
pub fn parse_run_delay(line: &str) -> Option<u64> {
    let mut f = line.split_ascii_whitespace();
    f.next()?.parse::<u64>().ok()?;
    f.next()?.parse().ok()
}

/// The workers' total waiting time between two snapshots, in percent of `wall_s`
/// times `workers` (the CPU time they could have had). Threads present only in
/// `after` count from 0 (a worker started after `before`).
pub fn delay_pct(before: &BTreeMap<u64, u64>, after: &BTreeMap<u64, u64>, wall_s: f64, workers: usize) -> f64 {
    let waited: u64 = after.iter().map(|(tid, &a)| a.saturating_sub(before.get(tid).copied().unwrap_or(0))).sum();
    100.0 * waited as f64 / (wall_s * 1e9 * workers.max(1) as f64).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_second_field() {
        assert_eq!(parse_run_delay("123 456 7\n"), Some(456));
        assert_eq!(parse_run_delay("123"), None);
        assert_eq!(parse_run_delay("x 456 7"), None);
    }

    #[test]
    fn percent_of_the_workers_time() {
        let before = BTreeMap::from([(1, 100), (2, 0)]);
        let after = BTreeMap::from([(1, 100 + 50_000_000), (2, 25_000_000), (3, 25_000_000)]);
        // 100 ms of waiting over 2 workers × 1 s.
        assert!((delay_pct(&before, &after, 1.0, 2) - 5.0).abs() < 1e-9);
    }

    #[test]
    fn sees_this_processs_workers() {
        // A worker that is kept off its CPU by a busy thread pinned to the same one
        // accumulates run_delay; here only check that the workers are found.
        let rt = schedlab_rt::Builder::new().workers(2).policy("dss").build().unwrap();
        if std::path::Path::new("/proc/self/task").exists() {
            // A spawned thread names itself once it starts: on a busy host that can be
            // after `build` returns, so wait for it (bounded).
            let t0 = std::time::Instant::now();
            let mut n = 0;
            while t0.elapsed() < std::time::Duration::from_secs(5) {
                n = worker_run_delays().expect("procfs").len();
                if n >= 2 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            assert!(n >= 2, "both workers listed, found {n}");
        }
        drop(rt);
    }
}
