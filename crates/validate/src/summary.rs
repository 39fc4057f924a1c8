//! How far the simulator agrees with the runtime: rows within ±25 % and, per
//! workload, whether the two engines rank the policies alike; and the distribution
//! table of [`crate::validate`]'s rows.

use crate::{Dist, Row};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The agreement of a set of rows.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    /// Rows compared: those with a simulated throughput (a runtime-native scheduler
    /// such as `fast` has none and is left out).
    pub rows: usize,
    /// Compared rows whose simulated throughput is within ±25 % of the real one
    /// (0.75 ≤ sim/real ≤ 1.25).
    pub within_25pct: usize,
    /// Per workload (sorted by spec): whether ordering its compared policies by
    /// (median) throughput gives the same order on both engines.
    pub ranking_agrees: BTreeMap<String, bool>,
    /// Per workload: whether the simulator orders alike every pair of policies that
    /// the runtime's runs order consistently (every run of one faster than every run
    /// of the other). A pair whose real runs interleave has no order to predict:
    /// it is in [`Rankings::real_undecided`]. With one run per row this is
    /// `ranking_agrees`.
    pub ranking_agrees_where_real_decides: BTreeMap<String, bool>,
    /// Per workload, the two orders compared (fastest first): what a reader needs to
    /// see *which* pair a differing ranking swaps.
    pub rankings: BTreeMap<String, Rankings>,
}

/// One workload's policies by decreasing throughput on each engine.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Rankings {
    pub sim: Vec<String>,
    pub real: Vec<String>,
    /// Pairs of policies whose real runs' throughput ranges overlap (`[a, b]` with `a`
    /// the faster by median): the runtime itself does not order them.
    pub real_undecided: Vec<[String; 2]>,
    /// Pairs the runtime orders consistently and the simulator the other way
    /// (`[faster in real runs, slower]`).
    pub swapped: Vec<[String; 2]>,
}

/// Within ±25 %: the bound of the agreement summary.
pub fn within_25pct(ratio: f64) -> bool {
    (0.75..=1.25).contains(&ratio)
}

/// Policies of `rows` ordered by decreasing throughput (`sim` or `real`), ties by name.
fn ranking<'a>(rows: &[&'a Row], sim: bool) -> Vec<&'a str> {
    let mut v: Vec<(&str, f64)> =
        rows.iter().map(|r| (r.policy.as_str(), if sim { r.sim.unwrap_or(0.0) } else { r.real })).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    v.into_iter().map(|(p, _)| p).collect()
}

pub fn summarize(rows: &[Row]) -> Summary {
    let compared: Vec<&Row> = rows.iter().filter(|r| r.sim.is_some()).collect();
    let within = compared.iter().filter(|r| r.ratio.is_some_and(within_25pct)).count();
    let mut by_workload: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for r in &compared {
        by_workload.entry(r.workload.clone()).or_default().push(r);
    }
    let owned = |v: Vec<&str>| v.into_iter().map(String::from).collect();
    let rankings: BTreeMap<String, Rankings> = by_workload
        .into_iter()
        .map(|(w, rs)| {
            let (real_undecided, swapped) = pairs(&rs);
            (w, Rankings { sim: owned(ranking(&rs, true)), real: owned(ranking(&rs, false)), real_undecided, swapped })
        })
        .collect();
    let ranking_agrees = rankings.iter().map(|(w, r)| (w.clone(), r.sim == r.real)).collect();
    let ranking_agrees_where_real_decides = rankings.iter().map(|(w, r)| (w.clone(), r.swapped.is_empty())).collect();
    Summary { rows: compared.len(), within_25pct: within, ranking_agrees, ranking_agrees_where_real_decides, rankings }
}

/// A row's real runs (its `real` alone when it has no list of runs).
fn real_range(r: &Row) -> (f64, f64) {
    let runs: &[f64] = if r.real_runs.is_empty() { std::slice::from_ref(&r.real) } else { &r.real_runs };
    crate::min_max(runs)
}

/// The pairs of `rows` (one workload) the runtime leaves undecided, and those it
/// decides that the simulator's medians order the other way; each pair faster-first by
/// real median, in the real ranking's order.
fn pairs(rows: &[&Row]) -> (Vec<[String; 2]>, Vec<[String; 2]>) {
    let mut by_real: Vec<&Row> = rows.to_vec();
    by_real.sort_by(|a, b| b.real.total_cmp(&a.real).then(a.policy.cmp(&b.policy)));
    let (mut undecided, mut swapped) = (Vec::new(), Vec::new());
    for (i, a) in by_real.iter().enumerate() {
        for b in &by_real[i + 1..] {
            let ((a_lo, _), (_, b_hi)) = (real_range(a), real_range(b));
            let pair = [a.policy.clone(), b.policy.clone()];
            if a_lo <= b_hi {
                undecided.push(pair);
            } else if a.sim.unwrap_or(0.0) < b.sim.unwrap_or(0.0) {
                swapped.push(pair);
            }
        }
    }
    (undecided, swapped)
}

fn us(ns: Option<u64>) -> String {
    ns.map_or("—".into(), |v| format!("{:.1}", v as f64 / 1000.0))
}

/// The distribution table: per row, both engines' switches, migrations, wake-to-run
/// p50/p99 and run-length p50 (µs), and the event class whose median time differs most.
pub fn render_distributions(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "distributions (sim | real; latencies µs; traced runs){}",
        if rows.iter().any(|r| r.sim_dist.iter().chain(&r.real_dist).any(|d| d.dropped > 0)) {
            " — a trace marked * hit its cap: its figures cover the run's beginning"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "{:<28} {:<14} {:>15} {:>13} {:>15} {:>17} {:>13} {:>9}  most different (sim/real median per event)",
        "workload", "policy", "switches", "migrations", "wake→run p50", "wake→run p99", "run p50", "host wait"
    );
    let pair = |a: String, b: String| format!("{a} | {b}");
    for r in rows {
        let (Some(sd), Some(rd)) = (&r.sim_dist, &r.real_dist) else { continue };
        let mark = |d: &Dist, v: String| if d.dropped > 0 { format!("{v}*") } else { v };
        let m = r.mispriced.as_ref().map_or("—".to_string(), |m| {
            let (s, r) = (m.sim_p50_ns as f64 / 1e3, m.real_p50_ns as f64 / 1e3);
            format!("{}: {:.2}× ({s:.2} µs vs {r:.2} µs)", m.class, m.ratio)
        });
        let policy: String = r.policy.chars().take(14).collect();
        let wait = r.real_traced_host_wait_pct.map_or("—".to_string(), |v| format!("{v:.1} %"));
        let _ = writeln!(
            s,
            "{:<28} {:<14} {:>15} {:>13} {:>15} {:>17} {:>13} {:>9}  {}",
            r.workload,
            policy,
            pair(mark(sd, sd.switches.to_string()), mark(rd, rd.switches.to_string())),
            pair(sd.migrations.to_string(), rd.migrations.to_string()),
            pair(us(sd.wake_to_run_p50_ns), us(rd.wake_to_run_p50_ns)),
            pair(us(sd.wake_to_run_p99_ns), us(rd.wake_to_run_p99_ns)),
            pair(us(sd.run_len_p50_ns), us(rd.run_len_p50_ns)),
            wait,
            m
        );
    }
    s
}

/// The agreement summary as text.
pub fn render_summary(sum: &Summary) -> String {
    let mut s = format!("agreement: {} of {} rows within ±25 % (sim vs real throughput)\n", sum.within_25pct, sum.rows);
    let join =
        |v: &[[String; 2]], sep: &str| v.iter().map(|[a, b]| format!("{a}{sep}{b}")).collect::<Vec<_>>().join(", ");
    for (w, ok) in &sum.ranking_agrees {
        let _ = write!(s, "  ranking of the policies on {w}: {}", if *ok { "agrees" } else { "differs" });
        let Some(r) = sum.rankings.get(w).filter(|_| !ok) else {
            s.push('\n');
            continue;
        };
        let _ = write!(s, " (sim: {}; real: {})", r.sim.join(" > "), r.real.join(" > "));
        if r.swapped.is_empty() {
            let _ = writeln!(
                s,
                "; agrees on every pair the real runs order (undecided: {})",
                join(&r.real_undecided, " ~ ")
            );
        } else {
            let _ = writeln!(s, "; swaps {} that the real runs order", join(&r.swapped, " > "));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(w: &str, p: &str, sim: Option<f64>, real: f64) -> Row {
        Row {
            workload: w.into(),
            policy: p.into(),
            unit: "x/s".into(),
            sim,
            real,
            sim_runs: sim.into_iter().collect(),
            real_runs: vec![real],
            real_rtt_ns: vec![],
            placement_moved: 0,
            ratio: sim.map(|s| s / real),
            sim_context_switches: None,
            real_context_switches: 0,
            real_wall_s: 1.0,
            real_traced: None,
            sim_dist: None,
            real_dist: None,
            mispriced: None,
            real_host_wait_pct: None,
            real_traced_host_wait_pct: None,
        }
    }

    #[test]
    fn counts_rows_within_25pct_and_compares_rankings() {
        let rows = [
            row("a", "fast", None, 9.0),
            row("a", "dss", Some(10.0), 8.1),  // 1.23: within
            row("a", "mqs", Some(5.0), 3.9),   // 1.28: not
            row("b", "dss", Some(10.0), 20.0), // 0.5
            row("b", "mqs", Some(20.0), 10.0), // 2.0, and the order flips
        ];
        let s = summarize(&rows);
        assert_eq!(s.rows, 4);
        assert_eq!(s.within_25pct, 1);
        assert_eq!(s.ranking_agrees.clone().into_iter().collect::<Vec<_>>(), [("a".into(), true), ("b".into(), false)]);
        assert!(within_25pct(0.75) && within_25pct(1.25) && !within_25pct(0.7499));
        // A differing ranking shows both orders (fastest first); an agreeing one does not.
        assert_eq!(
            s.rankings["b"],
            Rankings {
                sim: vec!["mqs".into(), "dss".into()],
                real: vec!["dss".into(), "mqs".into()],
                real_undecided: vec![],
                swapped: vec![["dss".into(), "mqs".into()]],
            }
        );
        // One run per row: every pair is decided, so the two verdicts coincide.
        assert_eq!(s.ranking_agrees, s.ranking_agrees_where_real_decides);
        let text = render_summary(&s);
        assert!(text.contains("on a: agrees\n"), "{text}");
        assert!(
            text.contains(
                "on b: differs (sim: mqs > dss; real: dss > mqs); swaps dss > mqs that the real runs order\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_pair_the_real_runs_do_not_order_is_not_held_against_the_simulator() {
        let with_runs = |p: &str, sim: f64, real_runs: &[f64]| Row {
            real: crate::median(real_runs),
            real_runs: real_runs.to_vec(),
            ..row("w", p, Some(sim), 0.0)
        };
        // dss and mqs interleave in the real runs (the runtime does not order them);
        // o1 is faster than both in every run, and the simulator says so too.
        let rows = [
            with_runs("dss", 5.0, &[10.0, 12.0, 14.0]),
            with_runs("mqs", 6.0, &[9.0, 11.0, 13.0]),
            with_runs("o1", 9.0, &[20.0, 21.0, 22.0]),
        ];
        let s = summarize(&rows);
        assert!(!s.ranking_agrees["w"], "the medians' orders differ: sim mqs > dss, real dss > mqs");
        assert!(s.ranking_agrees_where_real_decides["w"]);
        assert_eq!(s.rankings["w"].real_undecided, vec![["dss".to_string(), "mqs".to_string()]]);
        let text = render_summary(&s);
        assert!(text.contains("agrees on every pair the real runs order (undecided: dss ~ mqs)"), "{text}");
        // A decided pair the simulator swaps is reported, and the verdict is false.
        let rows = [with_runs("dss", 5.0, &[10.0, 12.0, 14.0]), with_runs("o1", 4.0, &[20.0, 21.0, 22.0])];
        let s = summarize(&rows);
        assert!(!s.ranking_agrees_where_real_decides["w"]);
        assert_eq!(s.rankings["w"].swapped, vec![["o1".to_string(), "dss".to_string()]]);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(crate::median([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(crate::median([4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(crate::median([0.0f64; 0]).is_nan());
    }
}
