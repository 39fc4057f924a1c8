//! Result rows, their aggregation over repetitions, the text table and the targets
//! (docs/bench.md).

use crate::measure::Measure;
use crate::{median, names, runtimes, units};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The `channel` of rows whose program uses no channel (dispatch, spawn, atomic).
pub const NO_CHANNEL: &str = "none";

fn no_channel() -> String {
    NO_CHANNEL.into()
}

fn one() -> usize {
    1
}

/// One measurement: `value` `unit` of `bench` on `runtime` with `policy`, the median of
/// `reps` repetitions (`min`..`max`), with the process CPU time per operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Benchmark, one of [`names::ALL`].
    pub bench: String,
    /// `schedlab`, `tokio`, `go`, `kernel-threads`, `atomic` or `converse`.
    pub runtime: String,
    /// Policy or configuration (e.g. `mqs`, `multi_thread(2)`, `threads+pipes`).
    pub policy: String,
    /// The measurement: the median over the repetitions.
    pub value: f64,
    /// `ns/round-trip`, `ns/dispatch`, `ns/message`, `tasks/s` or `messages/s`.
    pub unit: String,
    /// Ping-pong rows: the fraction of round trips whose two tasks ran on different
    /// workers (absent where the runtime cannot tell, and on other rows; over
    /// repetitions, the smallest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossed: Option<f64>,
    /// The channel the program used: `schedlab_rt::channel`, `async-channel`,
    /// `tokio::sync::mpsc`, `go chan`, `pipe`, … or [`NO_CHANNEL`].
    #[serde(default = "no_channel")]
    pub channel: String,
    /// Repetitions behind `value` (the runtimes were interleaved between them).
    #[serde(default = "one")]
    pub reps: usize,
    /// Smallest repetition.
    #[serde(default)]
    pub min: f64,
    /// Largest repetition.
    #[serde(default)]
    pub max: f64,
    /// Every repetition's value, in the order of the rounds (a row of one repetition
    /// has none: its `value`). The runtimes are interleaved within each round, so the
    /// k-th values of two rows were measured seconds apart, usually under the same
    /// state of the machine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
    /// Process CPU time per operation in `unit` (median over the repetitions): CPU ns
    /// per operation for ns units, operations per CPU-second for rates; `null` where
    /// it was not measured.
    #[serde(default)]
    pub cpu_per_op: Option<f64>,
    /// Whether the runtime's threads were pinned to CPUs in this run: `"all"` or
    /// `"none"` ([`crate::Pin`]; empty until labelled with [`label_pin`]).
    #[serde(default)]
    pub pin: String,
    /// Server rows: how the CPUs were shared between server and load generator, e.g.
    /// `server 1 worker thread (the reactor inside) on CPU 0; wrk 1 thread on CPU 1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// Set when the program's result check failed (or it panicked): the row has no
    /// value and the run fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Row {
    /// A row of one repetition without CPU time or channel.
    pub fn new(bench: &str, runtime: &str, policy: &str, value: f64, unit: &str) -> Row {
        Row {
            bench: bench.into(),
            runtime: runtime.into(),
            policy: policy.into(),
            value,
            unit: unit.into(),
            crossed: None,
            channel: no_channel(),
            reps: 1,
            min: value,
            max: value,
            samples: Vec::new(),
            cpu_per_op: None,
            pin: String::new(),
            cpus: None,
            error: None,
        }
    }
    /// A row of one repetition's [`Measure`] of a program that used `channel`.
    pub fn measured(bench: &str, runtime: &str, policy: &str, unit: &str, channel: &str, m: Measure) -> Row {
        Row {
            crossed: m.crossed,
            channel: channel.into(),
            cpu_per_op: Some(m.cpu_per_op),
            ..Row::new(bench, runtime, policy, m.value, unit)
        }
    }
    /// A row whose program failed its result check (or panicked) with `error`.
    pub fn failed(bench: &str, runtime: &str, policy: &str, unit: &str, channel: &str, error: String) -> Row {
        Row { channel: channel.into(), reps: 0, error: Some(error), ..Row::new(bench, runtime, policy, 0.0, unit) }
    }
    /// With `channel`.
    pub fn with_channel(mut self, channel: &str) -> Row {
        self.channel = channel.into();
        self
    }
    /// The bench without its variant suffix: `chat/async-channel` → `chat`.
    pub fn base(&self) -> &str {
        base(&self.bench)
    }
}

/// Label the rows not labelled yet with `pin` (the condition they ran under).
pub fn label_pin(rows: &mut [Row], pin: crate::Pin) {
    for r in rows.iter_mut().filter(|r| r.pin.is_empty()) {
        r.pin = pin.label().into();
    }
}

impl Row {
    /// Every repetition's value, in round order (a row of one repetition: its value).
    pub fn repetitions(&self) -> Vec<f64> {
        if self.samples.is_empty() {
            vec![self.value]
        } else {
            self.samples.clone()
        }
    }
    /// This row over `other`, round by round: the k-th repetitions of two rows of one
    /// interleaved run were measured next to each other, under the same state of the
    /// machine, so their ratio is the comparison; empty when the rows have different
    /// numbers of repetitions (then no round pairs with another).
    pub fn paired_ratios(&self, other: &Row) -> Vec<f64> {
        let (a, b) = (self.repetitions(), other.repetitions());
        if a.len() != b.len() {
            return Vec::new();
        }
        a.iter().zip(&b).filter(|(_, &y)| y > 0.0).map(|(x, y)| x / y).collect()
    }
}

/// A bench name without its variant suffix (`/async-channel`, `/tokio-mpsc`, `/self-wake`).
pub fn base(bench: &str) -> &str {
    bench.split('/').next().unwrap_or(bench)
}

/// Rows of single repetitions (in any order, e.g. interleaved rounds) merged per
/// (bench, runtime, policy), in order of first appearance: `value` the median of the
/// repetitions, `min`/`max` their extremes, `samples` each in order, `cpu_per_op` the
/// median, `crossed` the smallest, `reps` their count. Any failed repetition makes the
/// row failed.
pub fn aggregate(samples: Vec<Row>) -> Vec<Row> {
    let mut groups: Vec<Vec<Row>> = Vec::new();
    for s in samples {
        match groups.iter_mut().find(|g| {
            g[0].bench == s.bench && g[0].runtime == s.runtime && g[0].policy == s.policy && g[0].pin == s.pin
        }) {
            Some(g) => g.push(s),
            None => groups.push(vec![s]),
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let first = g[0].clone();
            if let Some(e) = g.iter().find_map(|r| r.error.clone()) {
                let f = Row::failed(&first.bench, &first.runtime, &first.policy, &first.unit, &first.channel, e);
                return Row { pin: first.pin, ..f };
            }
            let cpu: Vec<f64> = g.iter().filter_map(|r| r.cpu_per_op).collect();
            let samples: Vec<f64> =
                g.iter().flat_map(|r| if r.samples.is_empty() { vec![r.value] } else { r.samples.clone() }).collect();
            Row {
                value: median(g.iter().map(|r| r.value).collect()),
                min: g.iter().map(|r| r.min).fold(f64::INFINITY, f64::min),
                max: g.iter().map(|r| r.max).fold(f64::NEG_INFINITY, f64::max),
                reps: g.iter().map(|r| r.reps).sum(),
                // One repetition has no samples beyond its value.
                samples: if samples.len() > 1 { samples } else { Vec::new() },
                cpu_per_op: (!cpu.is_empty()).then(|| median(cpu)),
                crossed: g.iter().filter_map(|r| r.crossed).reduce(f64::min),
                ..first
            }
        })
        .collect()
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
pub fn from_json(s: &str) -> Result<Vec<Row>, crate::BenchError> {
    serde_json::from_str(s).map_err(|e| crate::BenchError::Input(format!("bad JSON rows: {e}")))
}

/// How a bench compares runtimes: each with its own channel (or primitive), or all
/// with the same channel (or the same future).
pub fn comparison(bench: &str, channel: &str) -> &'static str {
    match (bench.contains('/'), channel == NO_CHANNEL) {
        (false, false) => "own channel",
        (false, true) => "own primitive",
        (true, false) => "same channel",
        (true, true) => "same future",
    }
}

/// The row of `against` that `r` is compared with: `against`'s row of the same bench;
/// for a variant bench (`chat/tokio-mpsc`) that `against` does not run, its row of the
/// base bench with the same channel (Tokio's own `chat` uses `tokio::sync::mpsc`). For
/// rates the best such row, for times the first.
pub fn reference_for<'a>(rows: &'a [Row], r: &Row, against: &str) -> Option<&'a Row> {
    let ok = |x: &&Row| x.runtime == against && x.value > 0.0 && x.error.is_none();
    let pick = |v: Vec<&'a Row>| {
        if units::lower_is_better(&r.unit) {
            v.into_iter().next()
        } else {
            v.into_iter().max_by(|a, b| a.value.total_cmp(&b.value))
        }
    };
    let exact: Vec<&Row> = rows.iter().filter(ok).filter(|x| x.bench == r.bench).collect();
    if !exact.is_empty() || !r.bench.contains('/') {
        return pick(exact);
    }
    pick(rows.iter().filter(ok).filter(|x| x.base() == r.base() && x.channel == r.channel).collect())
}

fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v >= 1e6 {
        format!("{:.3}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// A text table grouped by bench (in [`names::ALL`] order), each group saying whether
/// its runtimes use their own channel or the same one: runtime, policy, median,
/// min..max over the repetitions, CPU per operation (same unit), the ratio to Tokio's
/// row ([`reference_for`]; for ns units below 1 is faster, for rates above 1 is
/// faster) and `crossed`; then the [`target_checks`], own-channel and same-channel.
pub fn render_text(rows: &[Row]) -> String {
    // The server rows have tables of their own (`crate::servers::render` and
    // `crate::netbench::render`), at the end.
    let (server_rows, rows): (Vec<Row>, Vec<Row>) =
        rows.iter().cloned().partition(|r| crate::servers::is_server_bench(&r.bench));
    let rows = rows.as_slice();
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
        let lower = units::lower_is_better(unit);
        let better = if unit == units::MODEL_OVER_CACHEGRIND {
            "1 = agree"
        } else if lower {
            "lower is better"
        } else {
            "higher is better"
        };
        let cpu = if lower { "CPU ns/op" } else { "per CPU-second" };
        let kinds: Vec<&str> = group.iter().map(|r| comparison(b, &r.channel)).collect();
        let kind = if kinds.iter().all(|k| *k == kinds[0]) { kinds[0] } else { "mixed" };
        let chans: Vec<&str> = group.iter().fold(Vec::new(), |mut v, r| {
            if r.channel != NO_CHANNEL && !v.contains(&r.channel.as_str()) {
                v.push(&r.channel);
            }
            v
        });
        let chans = if chans.is_empty() { String::new() } else { format!(": {}", chans.join(", ")) };
        let _ = writeln!(out, "{b} ({unit}, {better}; median [min..max], cpu = {cpu}) [{kind}{chans}]");
        for r in group {
            let w = wp + r.policy.len() - r.policy.chars().count();
            if let Some(e) = &r.error {
                let _ = writeln!(out, "  {:<wr$}  {:<w$}  FAILED: {e}", r.runtime, r.policy);
                continue;
            }
            let ratio = match reference_for(rows, r, runtimes::TOKIO) {
                Some(t) if r.runtime != runtimes::TOKIO => format!("{:.2}× tokio", r.value / t.value),
                _ => String::new(),
            };
            let crossed = r.crossed.map_or(String::new(), |c| format!("  crossed {:.0}%", c * 100.0));
            let spread = format!("[{}..{}]", fmt_value(r.min), fmt_value(r.max));
            let cpu = r.cpu_per_op.map_or("cpu -".to_string(), |c| format!("cpu {}", fmt_value(c)));
            let _ = writeln!(
                out,
                "  {:<wr$}  {:<w$}  {:>9} {:<19} ×{:<2} {:<11} {:<13}{}",
                r.runtime,
                r.policy,
                fmt_value(r.value),
                spread,
                r.reps,
                cpu,
                ratio,
                crossed,
            );
        }
        if b == names::RQ_WALK {
            for (policy, ratio) in crate::rq_walk::colour_ratios(rows) {
                let _ = writeln!(out, "  vanilla/coloured: {ratio:.2}× for {policy}");
            }
        }
        out += "\n";
    }
    out += &crate::servers::render(&server_rows);
    out += &crate::netbench::render(&server_rows);
    let checks = target_checks(rows);
    if !checks.is_empty() {
        out += "targets (schedlab / reference, this machine, this run; own channel: each runtime's own channel;\n";
        out += "         same channel: both runtimes on the row's channel; same future: one future on both)\n";
        let mut i = 0;
        while i < checks.len() {
            let c = &checks[i];
            let same = checks[i..].iter().take_while(|d| d.bench == c.bench && d.against == c.against).count();
            let op = if c.upper_bound() { '≤' } else { '≥' };
            let _ = write!(out, "  [{}] {} {op} {}× {}:", c.kind, c.bench, c.target, c.against);
            for d in &checks[i..i + same] {
                let _ = write!(out, " {} {:.2}× {}", d.policy, d.ratio, if d.met { "met" } else { "MISSED" });
                out += if std::ptr::eq(d, &checks[i + same - 1]) { "\n" } else { "," };
            }
            i += same;
        }
    }
    let failed = rows.iter().chain(&server_rows).filter(|r| r.error.is_some()).count();
    if failed > 0 {
        let _ = writeln!(out, "{failed} row(s) FAILED their result check (see above)");
    }
    out
}

/// One of the targets (docs/bench.md) checked against a run.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetCheck {
    /// The schedlab row's bench (e.g. `chat` or `chat/async-channel`).
    pub bench: String,
    /// The schedlab row's policy.
    pub policy: String,
    /// What it is compared with, e.g. `tokio`.
    pub against: String,
    /// `own channel`, `same channel`, `own primitive` or `same future` ([`comparison`]).
    pub kind: String,
    /// schedlab / reference.
    pub ratio: f64,
    /// Target ratio: at most (ns units) or at least (rates).
    pub target: f64,
    /// Whether smaller is better (ns units): the target is an upper bound.
    pub lower: bool,
    /// Whether `ratio ≤ target` (ns) or `ratio ≥ target` (rates).
    pub met: bool,
}

impl TargetCheck {
    /// `[own channel] chat schedlab/mqs: 2.31× tokio (target ≥ 2×) met`.
    pub fn line(&self) -> String {
        let op = if self.upper_bound() { '≤' } else { '≥' };
        format!(
            "[{}] {} schedlab/{}: {:.2}× {} (target {op} {}×) {}",
            self.kind,
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
        self.lower
    }
}

/// The targets (docs/bench.md), for every schedlab row (own-channel and same-channel variants)
/// that has its reference row ([`reference_for`]) in `rows`: ping-pong round trips ≤
/// 0.5× Tokio's; local dispatch ≤ 0.6× Tokio's (its `yield_now`, and the self-waking
/// future); Chat and hackbench ≥ 2× Tokio, ≥ 1.5× Go and ≥ 10× kernel threads (their
/// best row).
pub fn target_checks(rows: &[Row]) -> Vec<TargetCheck> {
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
    let mut benches: Vec<&str> = names::ALL.to_vec();
    for r in rows {
        if !benches.contains(&r.bench.as_str()) {
            benches.push(&r.bench);
        }
    }
    let mut out = Vec::new();
    // Own-channel rows first, then the same-channel variants, each in table order.
    for variants in [false, true] {
        for &(base_bench, against, target) in targets {
            for &bench in benches.iter().filter(|b| base(b) == base_bench && b.contains('/') == variants) {
                for r in rows.iter().filter(|r| r.bench == bench && r.runtime == runtimes::SCHEDLAB) {
                    if r.error.is_some() {
                        continue;
                    }
                    let Some(reference) = reference_for(rows, r, against) else { continue };
                    let ratio = r.value / reference.value;
                    let lower = units::lower_is_better(&r.unit);
                    out.push(TargetCheck {
                        bench: bench.into(),
                        policy: r.policy.clone(),
                        against: against.into(),
                        kind: comparison(bench, &r.channel).into(),
                        ratio,
                        target,
                        lower,
                        met: if lower { ratio <= target } else { ratio >= target },
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(value: f64) -> Measure {
        Measure { value, cpu_per_op: value, crossed: None }
    }

    fn rows() -> Vec<Row> {
        let (ns, rate) = (units::NS_ROUND_TRIP, units::MESSAGES_PER_S);
        vec![
            Row::measured(names::PINGPONG_SAME, runtimes::SCHEDLAB, "fast", ns, "schedlab_rt::channel", m(100.0)),
            Row::measured(names::PINGPONG_SAME, runtimes::TOKIO, "multi_thread(2)", ns, "tokio::sync::mpsc", m(400.0)),
            Row::measured(names::CHAT, runtimes::SCHEDLAB, "mqs", rate, "schedlab_rt::channel", m(3e6)),
            Row::measured(names::CHAT, runtimes::TOKIO, "multi_thread(2)", rate, "tokio::sync::mpsc", m(2e6)),
            Row::measured(names::CHAT, runtimes::KERNEL_THREADS, "threads+pipes", rate, "pipe", m(1e5)),
            Row::measured(names::CHAT, runtimes::KERNEL_THREADS, "other", rate, "pipe", m(2e5)),
            Row::measured(names::CHAT_TM, runtimes::SCHEDLAB, "mqs", rate, "tokio::sync::mpsc", m(5e6)),
        ]
    }

    #[test]
    fn json_round_trip() {
        let mut r = rows();
        label_pin(&mut r[1..], crate::Pin::None);
        label_pin(&mut r, crate::Pin::All);
        assert_eq!((r[0].pin.as_str(), r[1].pin.as_str()), ("all", "none"), "label_pin fills only unlabelled rows");
        let s = to_json(&r);
        assert!(s.starts_with("[\n  {\"bench\":\"pingpong-same-worker\",\"runtime\":\"schedlab\""));
        assert!(
            s.contains(
                "\"channel\":\"schedlab_rt::channel\",\"reps\":1,\"min\":100.0,\"max\":100.0,\"cpu_per_op\":100.0,\"pin\":\"all\"}"
            ),
            "{s}"
        );
        assert_eq!(from_json(&s).unwrap(), r);
        assert_eq!(from_json("[]\n").unwrap(), vec![]);
        assert!(from_json("[{\"bench\":1}]").is_err());
        // Rows from an older peer (no new fields) still parse.
        let old =
            from_json("[{\"bench\":\"spawn\",\"runtime\":\"go\",\"policy\":\"p\",\"value\":2.0,\"unit\":\"tasks/s\"}]");
        assert_eq!(old.unwrap()[0].channel, NO_CHANNEL);
    }

    #[test]
    fn repetitions_aggregate() {
        let ns = units::NS_ROUND_TRIP;
        let s = |v: f64| {
            Row::measured(
                names::PINGPONG_SAME,
                "x",
                "p",
                ns,
                "c",
                Measure { value: v, cpu_per_op: 2.0 * v, crossed: Some(v / 10.0) },
            )
        };
        let other = Row::new(names::SPAWN, "x", "p", 7.0, units::TASKS_PER_S);
        let a = aggregate(vec![s(3.0), other.clone(), s(1.0), s(2.0), s(9.0), s(4.0)]);
        assert_eq!(a.len(), 2);
        assert_eq!((a[0].value, a[0].min, a[0].max, a[0].reps, a[0].cpu_per_op), (3.0, 1.0, 9.0, 5, Some(6.0)));
        assert_eq!(a[0].crossed, Some(0.1));
        assert_eq!(a[0].samples, [3.0, 1.0, 2.0, 9.0, 4.0], "each repetition, in order");
        assert_eq!(a[1], other, "one repetition: its value, no samples");
        // Rows already aggregated (a peer's) keep their samples in order.
        let b = aggregate(vec![a[0].clone(), s(5.0)]);
        assert_eq!(b[0].samples, [3.0, 1.0, 2.0, 9.0, 4.0, 5.0]);
        assert!(to_json(&b).contains("\"samples\":[3.0,1.0,2.0,9.0,4.0,5.0]"));
        let bad = Row::failed(names::PINGPONG_SAME, "x", "p", ns, "c", "lost a message".into());
        let a = aggregate(vec![s(3.0), bad]);
        assert_eq!(a[0].error.as_deref(), Some("lost a message"));
        assert!(render_text(&a).contains("FAILED: lost a message"));
    }

    #[test]
    fn targets_compare_with_the_right_reference() {
        let c = target_checks(&rows());
        assert_eq!(c.len(), 4, "{c:?}");
        assert_eq!((c[0].ratio, c[0].met, c[0].kind.as_str()), (0.25, true, "own channel"));
        assert_eq!((c[1].against.as_str(), c[1].ratio, c[1].met), ("tokio", 1.5, false));
        // Against the best kernel-threads row.
        assert_eq!((c[2].against.as_str(), c[2].ratio, c[2].met), ("kernel-threads", 15.0, true));
        assert_eq!(c[1].line(), "[own channel] chat schedlab/mqs: 1.50× tokio (target ≥ 2×) MISSED");
        // Same channel: schedlab with tokio's mpsc against Tokio's own (mpsc) row.
        assert_eq!((c[3].bench.as_str(), c[3].kind.as_str(), c[3].ratio), (names::CHAT_TM, "same channel", 2.5));
    }

    #[test]
    fn table_groups_by_bench_with_ratios() {
        let t = render_text(&rows());
        let ping = t.find("pingpong-same-worker (ns/round-trip, lower is better").unwrap();
        let chat = t.find("chat (messages/s, higher is better").unwrap();
        assert!(ping < chat);
        assert!(t.contains("[own channel: schedlab_rt::channel, tokio::sync::mpsc]"), "{t}");
        assert!(t.contains("chat/tokio-mpsc (messages/s"), "{t}");
        assert!(t.contains("[same channel: tokio::sync::mpsc]"), "{t}");
        assert!(t.contains("0.25× tokio"), "{t}");
        assert!(t.contains("2.50× tokio"), "{t}");
        assert!(t.contains("3.000M"), "{t}");
        assert!(t.contains("  [own channel] pingpong-same-worker ≤ 0.5× tokio: fast 0.25× met\n"), "{t}");
        assert!(t.contains("  [own channel] chat ≥ 2× tokio: mqs 1.50× MISSED\n"), "{t}");
        assert!(t.contains("  [same channel] chat/tokio-mpsc ≥ 2× tokio: mqs 2.50× met\n"), "{t}");
    }
}
