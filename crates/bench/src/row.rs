//! Result rows, the text table and the targets.

use crate::{names, runtimes, units};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// One measurement: `value` `unit` of `bench` on `runtime` with `policy`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Benchmark, one of [`names::ALL`].
    pub bench: String,
    /// `schedlab`, `tokio`, `go`, `kernel-threads`, `atomic` or `converse`.
    pub runtime: String,
    /// Policy or configuration (e.g. `mqs`, `multi_thread(2)`, `threads+pipes`).
    pub policy: String,
    /// The measurement.
    pub value: f64,
    /// `ns/round-trip`, `ns/dispatch`, `ns/message`, `tasks/s` or `messages/s`.
    pub unit: String,
    /// Ping-pong rows: the fraction of round trips whose two tasks ran on different
    /// workers (absent where the runtime cannot tell, and on other rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossed: Option<f64>,
}

impl Row {
    /// A row.
    pub fn new(bench: &str, runtime: &str, policy: &str, value: f64, unit: &str) -> Row {
        Row {
            bench: bench.into(),
            runtime: runtime.into(),
            policy: policy.into(),
            value,
            unit: unit.into(),
            crossed: None,
        }
    }
}

/// Rows as a JSON array (one row per line).
pub fn to_json(rows: &[Row]) -> String {
    let mut s = String::from("[\n");
    for (i, r) in rows.iter().enumerate() {
        s += "  ";
        s += &serde_json::to_string(r).expect("row serialises");
        s += if i + 1 < rows.len() { ",\n" } else { "\n" };
    }
    s + "]\n"
}

/// Parse rows printed by a peer: a JSON array of rows.
pub fn from_json(s: &str) -> Result<Vec<Row>, String> {
    serde_json::from_str(s).map_err(|e| format!("bad JSON rows: {e}"))
}

/// The reference value of `runtime` for `bench`: its first row.
fn reference<'a>(rows: &'a [Row], bench: &str, runtime: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.bench == bench && r.runtime == runtime && r.value > 0.0)
}

fn fmt_value(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// A text table grouped by bench (in [`names::ALL`] order): runtime, policy, value, and
/// the ratio to Tokio's row of the same bench ("× tokio"; for ns units below 1 is
/// faster, for rates above 1 is faster), followed by the [`target_checks`].
pub fn render_text(rows: &[Row]) -> String {
    let mut benches: Vec<&str> = names::ALL.iter().copied().filter(|b| rows.iter().any(|r| r.bench == *b)).collect();
    for r in rows {
        if !benches.contains(&r.bench.as_str()) {
            benches.push(&r.bench);
        }
    }
    let wr = rows.iter().map(|r| r.runtime.len()).max().unwrap_or(0).max(7);
    let wp = rows.iter().map(|r| r.policy.chars().count()).max().unwrap_or(0).max(6);
    let mut out = String::new();
    for b in benches {
        let group: Vec<&Row> = rows.iter().filter(|r| r.bench == b).collect();
        let unit = &group[0].unit;
        let better = if units::lower_is_better(unit) { "lower is better" } else { "higher is better" };
        let _ = writeln!(out, "{b} ({unit}, {better})");
        let tokio = reference(rows, b, runtimes::TOKIO);
        for r in group {
            let ratio = match tokio {
                Some(t) if r.runtime != runtimes::TOKIO => format!("{:.2}× tokio", r.value / t.value),
                _ => String::new(),
            };
            let crossed = r.crossed.map_or(String::new(), |c| format!("  crossed {:.0}%", c * 100.0));
            let _ = writeln!(
                out,
                "  {:<wr$}  {:<wp$}  {:>10} {:<14} {:<13}{}",
                r.runtime,
                r.policy,
                fmt_value(r.value),
                r.unit,
                ratio,
                crossed,
                wp = wp + r.policy.len() - r.policy.chars().count()
            );
        }
        out += "\n";
    }
    let checks = target_checks(rows);
    if !checks.is_empty() {
        out += "targets (schedlab / reference, this machine, this run)\n";
        let mut i = 0;
        while i < checks.len() {
            let c = &checks[i];
            let same = checks[i..].iter().take_while(|d| d.bench == c.bench && d.against == c.against).count();
            let _ =
                write!(out, "  {} {} {}× {}:", c.bench, if c.upper_bound() { '≤' } else { '≥' }, c.target, c.against);
            for d in &checks[i..i + same] {
                let _ = write!(out, " {} {:.2}× {}", d.policy, d.ratio, if d.met { "met" } else { "MISSED" });
                out += if std::ptr::eq(d, &checks[i + same - 1]) { "\n" } else { "," };
            }
            i += same;
        }
    }
    out
}

/// One of the targets checked against a run.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetCheck {
    /// The bench.
    pub bench: String,
    /// The schedlab row's policy.
    pub policy: String,
    /// What it is compared with, e.g. `tokio`.
    pub against: String,
    /// schedlab / reference.
    pub ratio: f64,
    /// Target ratio: at most (ns units) or at least (rates).
    pub target: f64,
    /// Whether `ratio ≤ target` (ns) or `ratio ≥ target` (rates).
    pub met: bool,
}

impl TargetCheck {
    /// `chat schedlab/mqs: 2.31× tokio (target ≥ 2×) met`.
    pub fn line(&self) -> String {
        let op = if self.upper_bound() { '≤' } else { '≥' };
        format!(
            "{} schedlab/{}: {:.2}× {} (target {op} {}×) {}",
            self.bench,
            self.policy,
            self.ratio,
            self.against,
            self.target,
            if self.met { "met" } else { "MISSED" }
        )
    }
    /// Whether the target is an upper bound (times) rather than a lower one (rates).
    pub fn upper_bound(&self) -> bool {
        !matches!(self.bench.as_str(), names::CHAT | names::HACKBENCH | names::SPAWN)
    }
}

/// The targets, for every schedlab row that has its reference row in `rows`:
/// ping-pong round trips ≤ 0.5× Tokio's; local dispatch ≤ 0.6× Tokio's `yield_now`;
/// Chat and hackbench ≥ 2× Tokio, ≥ 1.5× Go and ≥ 10× kernel threads (their best row).
pub fn target_checks(rows: &[Row]) -> Vec<TargetCheck> {
    let best = |bench: &str, runtime: &str| {
        rows.iter()
            .filter(|r| r.bench == bench && r.runtime == runtime && r.value > 0.0)
            .map(|r| r.value)
            .reduce(f64::max)
    };
    let targets: &[(&str, &str, f64)] = &[
        (names::PINGPONG_SAME, runtimes::TOKIO, 0.5),
        (names::PINGPONG_CROSS, runtimes::TOKIO, 0.5),
        (names::LOCAL_DISPATCH, runtimes::TOKIO, 0.6),
        (names::CHAT, runtimes::TOKIO, 2.0),
        (names::CHAT, runtimes::GO, 1.5),
        (names::CHAT, runtimes::KERNEL_THREADS, 10.0),
        (names::HACKBENCH, runtimes::TOKIO, 2.0),
        (names::HACKBENCH, runtimes::GO, 1.5),
        (names::HACKBENCH, runtimes::KERNEL_THREADS, 10.0),
    ];
    let mut out = Vec::new();
    for &(bench, against, target) in targets {
        let reference = if units::lower_is_better(rows.iter().find(|r| r.bench == bench).map_or("", |r| &r.unit)) {
            reference(rows, bench, against).map(|r| r.value)
        } else {
            best(bench, against)
        };
        let Some(reference) = reference else { continue };
        for r in rows.iter().filter(|r| r.bench == bench && r.runtime == runtimes::SCHEDLAB) {
            let ratio = r.value / reference;
            let lower = units::lower_is_better(&r.unit);
            let met = if lower { ratio <= target } else { ratio >= target };
            out.push(TargetCheck {
                bench: bench.into(),
                policy: r.policy.clone(),
                against: against.into(),
                ratio,
                target,
                met,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Row> {
        vec![
            Row::new(names::PINGPONG_SAME, runtimes::SCHEDLAB, "fast", 100.0, units::NS_ROUND_TRIP),
            Row::new(names::PINGPONG_SAME, runtimes::TOKIO, "multi_thread(2)", 400.0, units::NS_ROUND_TRIP),
            Row::new(names::CHAT, runtimes::SCHEDLAB, "mqs", 3e6, units::MESSAGES_PER_S),
            Row::new(names::CHAT, runtimes::TOKIO, "multi_thread(2)", 2e6, units::MESSAGES_PER_S),
            Row::new(names::CHAT, runtimes::KERNEL_THREADS, "threads+pipes", 1e5, units::MESSAGES_PER_S),
            Row::new(names::CHAT, runtimes::KERNEL_THREADS, "other", 2e5, units::MESSAGES_PER_S),
        ]
    }

    #[test]
    fn json_round_trip() {
        let r = rows();
        let s = to_json(&r);
        assert!(s.starts_with("[\n  {\"bench\":\"pingpong-same-worker\",\"runtime\":\"schedlab\""));
        assert_eq!(from_json(&s).unwrap(), r);
        assert_eq!(from_json("[]\n").unwrap(), vec![]);
        assert!(from_json("[{\"bench\":1}]").is_err());
    }

    #[test]
    fn targets_compare_with_the_right_reference() {
        let c = target_checks(&rows());
        assert_eq!(c.len(), 3);
        assert_eq!((c[0].ratio, c[0].met), (0.25, true));
        assert_eq!((c[1].against.as_str(), c[1].ratio, c[1].met), ("tokio", 1.5, false));
        // Against the best kernel-threads row.
        assert_eq!((c[2].against.as_str(), c[2].ratio, c[2].met), ("kernel-threads", 15.0, true));
        assert_eq!(c[1].line(), "chat schedlab/mqs: 1.50× tokio (target ≥ 2×) MISSED");
    }

    #[test]
    fn table_groups_by_bench_with_ratios() {
        let t = render_text(&rows());
        let ping = t.find("pingpong-same-worker (ns/round-trip, lower is better)").unwrap();
        let chat = t.find("chat (messages/s, higher is better)").unwrap();
        assert!(ping < chat);
        assert!(t.contains("0.25× tokio"), "{t}");
        assert!(t.contains("3.000M"), "{t}");
        assert!(t.contains("  pingpong-same-worker ≤ 0.5× tokio: fast 0.25× met\n"), "{t}");
        assert!(t.contains("  chat ≥ 2× tokio: mqs 1.50× MISSED\n"), "{t}");
    }
}
