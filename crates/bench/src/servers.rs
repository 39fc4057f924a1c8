//! The HTTP server rows (`schedlab bench --servers`; docs/bench.md): the hyper server
//! of [`crate::http`] on schedlab's runtime under every scheduler and on Tokio (the
//! peer binary's `--http-server`), loaded by `wrk` over loopback at each concurrency of
//! [`ServerScale::connections`], runs of [`ServerScale::secs`] in
//! [`ServerScale::rounds`] rounds, every runtime once per round: a row is the median
//! of its rounds, and its ratio to Tokio is taken round by round.
//!
//! The machine's 2 CPUs are split between server and client ([`CpuPlan`]): under
//! [`Pin::All`] the server (one worker thread, which drives its runtime's reactor, on
//! schedlab as on Tokio) on the first CPU, wrk (one thread) on the second; under [`Pin::None`] nothing is pinned. Every row says which (`cpus`).

use crate::http::{self, ServerStats, Site};
use crate::row::Row;
use crate::wrk::{self, WrkResult, WrkRun};
use crate::{kthreads, measure, runtimes, units, Filter, Pin};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

/// The `channel` of the server rows: what carries the requests.
pub const CHANNEL: &str = "hyper http1, loopback TCP";

/// How long and at which concurrencies the server rows run.
#[derive(Clone, Debug)]
pub struct ServerScale {
    /// wrk's duration per row, whole seconds.
    pub secs: u64,
    /// wrk's open connections, one row per value and server.
    pub connections: Vec<usize>,
    /// Rounds: every row is run once per round, the runtimes alternated within it.
    pub rounds: usize,
}

impl ServerScale {
    /// `--quick`: 1 s per row, 3 rounds; otherwise 3 s, 5 rounds. Concurrencies 16 and
    /// 256. One run per row is not enough on a VM whose speed changes by a fifth
    /// between runs seconds apart (docs/bench.md): a ratio of two single runs can land
    /// on either side of such a change.
    pub fn new(quick: bool) -> ServerScale {
        let (secs, rounds) = if quick { (1, 3) } else { (3, 5) };
        ServerScale { secs, connections: vec![16, 256], rounds }
    }
}

/// Where the server and wrk run, and the row's description of it.
#[derive(Clone, Debug)]
pub struct CpuPlan {
    /// CPUs of the server (empty: anywhere).
    pub server: Vec<usize>,
    /// CPUs of wrk (empty: anywhere).
    pub client: Vec<usize>,
}

impl CpuPlan {
    /// Under [`Pin::All`] the first of this process's CPUs for the server, the second
    /// for wrk (one CPU: both on it); under [`Pin::None`] no affinity.
    pub fn new(pin: Pin) -> CpuPlan {
        let cpus = kthreads::worker_cpus();
        match (pin, cpus.as_slice()) {
            (Pin::All, [s, c, ..]) => CpuPlan { server: vec![*s], client: vec![*c] },
            (Pin::All, [s]) => CpuPlan { server: vec![*s], client: vec![*s] },
            _ => CpuPlan { server: Vec::new(), client: Vec::new() },
        }
    }
    /// The row's `cpus`: who ran where, e.g. `server 1 worker thread (the reactor
    /// inside) on CPU 0; wrk 1 thread on CPU 1`.
    pub fn describe(&self) -> String {
        self.describe_as(SERVER_THREADS, "wrk 1 thread")
    }
    /// The row's `cpus` for any server and client: `{server} on CPU 0; {client} on CPU 1`.
    pub fn describe_as(&self, server: &str, client: &str) -> String {
        let on = |c: &[usize]| match c {
            [] => "unpinned".to_string(),
            [x] => format!("on CPU {x}"),
            v => format!("on CPUs {v:?}"),
        };
        format!("{server} {}; {client} {}", on(&self.server), on(&self.client))
    }
}

/// A server's threads, as the rows' `cpus` name them: on schedlab as on Tokio, one
/// worker that also drives the reactor.
pub const SERVER_THREADS: &str = "server 1 worker thread (the reactor inside)";

/// The bench names of one concurrency: requests/s, then p50, p99, p99.9.
pub fn benches(connections: usize) -> [String; 4] {
    let b = format!("http-c{connections}");
    [b.clone(), format!("{b}-p50"), format!("{b}-p99"), format!("{b}-p99.9")]
}

/// Whether `bench` is a server row: an HTTP row of this module or a tbench row of
/// [`crate::netbench`].
pub fn is_server_bench(bench: &str) -> bool {
    is_http_bench(bench) || crate::netbench::is_tbench_bench(bench)
}

/// Whether `bench` is an HTTP server row.
pub fn is_http_bench(bench: &str) -> bool {
    bench.starts_with("http-c")
}

/// What a server reports after a run: requests answered (404s among them) and its
/// process CPU time during wrk's run.
#[derive(Clone, Copy, Debug, Default)]
struct Served {
    requests: u64,
    not_found: u64,
    cpu_ns: u64,
}

/// The four rows of one run, or one failed row.
fn run_rows(
    runtime: &str,
    policy: &str,
    connections: usize,
    cpus: &str,
    run: Result<(WrkResult, Served), String>,
) -> Vec<Row> {
    let [rps, p50, p99, p999] = benches(connections);
    let fail = |e: String| {
        let mut r = Row::failed(&rps, runtime, policy, units::REQUESTS_PER_S, CHANNEL, e);
        r.cpus = Some(cpus.into());
        vec![r]
    };
    let (w, s) = match run {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    if w.requests == 0 {
        return fail("wrk completed no request".into());
    }
    if w.errors() > 0 {
        return fail(format!("wrk counted errors: {}", w.describe_errors()));
    }
    if s.not_found > 0 {
        return fail(format!("the server answered {} requests 404", s.not_found));
    }
    if s.requests < w.requests {
        return fail(format!("wrk completed {} requests, the server answered {}", w.requests, s.requests));
    }
    let mut rows = Vec::new();
    let mut r = Row::new(&rps, runtime, policy, w.rate(), units::REQUESTS_PER_S).with_channel(CHANNEL);
    r.cpu_per_op = (s.cpu_ns > 0).then(|| w.requests as f64 / (s.cpu_ns as f64 / 1e9));
    rows.push(r);
    for (bench, us) in [(p50, w.p50_us), (p99, w.p99_us), (p999, w.p999_us)] {
        rows.push(Row::new(&bench, runtime, policy, us as f64 * 1e3, units::NS_REQUEST).with_channel(CHANNEL));
    }
    for r in &mut rows {
        r.cpus = Some(cpus.into());
    }
    rows
}

/// One run of a server row set: schedlab under a scheduler, or the peer (Tokio).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn<'a> {
    Scheduler(&'a str),
    Peer,
}

/// The order a server row set *measures* its runtimes in: the peer right after the
/// first scheduler (`fast`, the default), then the other schedulers; the peer alone
/// when there is no scheduler to run. This VM's speed drifts over seconds (the same
/// 1 s row moves by up to a third from one run to the next, docs/bench.md), so the row
/// the `vs tokio` ratio matters most for is measured next to the one it is divided by.
/// The rows are printed in their own order (every scheduler, then the peer).
pub fn measuring_order(schedulers: &[String], peer: bool) -> Vec<Turn<'_>> {
    let mut turns: Vec<Turn<'_>> = schedulers.iter().map(|s| Turn::Scheduler(s)).collect();
    if peer {
        turns.insert(turns.len().min(1), Turn::Peer);
    }
    turns
}

/// The server rows: for each concurrency, schedlab under every scheduler of
/// `policies`, then Tokio (when `tokio_peer` is given), measured in
/// [`measuring_order`], [`ServerScale::rounds`] times over (a round runs every
/// concurrency), merged per row ([`crate::row::aggregate`]: the median, the extremes
/// and every round's value in order). Without `wrk` on `PATH`, no rows and a note.
pub fn rows(
    scale: &ServerScale,
    filter: &Filter,
    pin: Pin,
    policies: &[String],
    tokio_peer: Option<&Path>,
    note: &mut dyn FnMut(&str),
) -> Vec<Row> {
    let mut rows = Vec::new();
    let wanted = |c: usize, rt: &str| benches(c).iter().any(|b| filter.wants(b, rt));
    if !scale.connections.iter().any(|&c| wanted(c, runtimes::SCHEDLAB) || wanted(c, runtimes::TOKIO)) {
        return rows;
    }
    let Some(wrk_bin) = wrk::find() else {
        note("wrk not found on PATH: the HTTP server rows are skipped (install it: apt-get install wrk)");
        return rows;
    };
    let script = match wrk::write_script() {
        Ok(s) => s,
        Err(e) => {
            note(&format!("HTTP server rows skipped: {e}"));
            return rows;
        }
    };
    let plan = CpuPlan::new(pin);
    let rounds = scale.rounds.max(1);
    for round in 1..=rounds {
        for &c in &scale.connections {
            let how = WrkRun { connections: c, threads: 1, secs: scale.secs, cpus: plan.client.clone() };
            let schedulers: &[String] = if wanted(c, runtimes::SCHEDLAB) { policies } else { &[] };
            let peer = tokio_peer.filter(|_| wanted(c, runtimes::TOKIO));
            let mut tokio_rows = Vec::new();
            for turn in measuring_order(schedulers, peer.is_some()) {
                let cpus = plan.describe();
                let wrk = format!("round {round}/{rounds}: wrk -c{c} -t1 -d{}s", scale.secs);
                match (turn, peer) {
                    (Turn::Scheduler(policy), _) => {
                        note(&format!("http-c{c} on schedlab {policy}, {wrk}"));
                        let (name, run) = schedlab_run(policy, pin, &wrk_bin, &script, &how);
                        rows.extend(run_rows(runtimes::SCHEDLAB, &name, c, &cpus, run));
                    }
                    (Turn::Peer, Some(peer)) => {
                        note(&format!("http-c{c} on tokio, {wrk}"));
                        let run = tokio_run(peer, pin, &plan, &wrk_bin, &script, &how);
                        tokio_rows.extend(run_rows(runtimes::TOKIO, "multi_thread(1)", c, &cpus, run));
                    }
                    (Turn::Peer, None) => {}
                }
            }
            rows.append(&mut tokio_rows);
        }
    }
    let _ = std::fs::remove_file(&script);
    crate::row::label_pin(&mut rows, pin);
    crate::row::aggregate(rows)
}

/// One run on schedlab's runtime: 1 worker under `policy`, the server in this
/// process; the policy's name as the runtime reports it.
fn schedlab_run(
    policy: &str,
    pin: Pin,
    wrk_bin: &Path,
    script: &Path,
    how: &WrkRun,
) -> (String, Result<(WrkResult, Served), String>) {
    on_runtime(policy, pin, |rt| {
        let listener = schedlab_rt::net::TcpListener::bind(([127, 0, 0, 1], 0)).map_err(|e| format!("bind: {e}"))?;
        let addr = listener.get_ref().local_addr().map_err(|e| format!("local_addr: {e}"))?;
        let stats = Arc::new(ServerStats::default());
        let server =
            http::serve(listener, http::rt::RtExecutor, http::rt::RtTimer, Arc::new(Site::new()), stats.clone());
        drop(rt.spawn(server));
        let cpu0 = measure::process_cpu_ns();
        let w = wrk::run(wrk_bin, script, &format!("http://{addr}/"), how).map_err(|e| e.to_string())?;
        let cpu_ns = measure::process_cpu_ns().saturating_sub(cpu0);
        let s = stats.pages.load(std::sync::atomic::Ordering::Relaxed);
        let not_found = stats.not_found.load(std::sync::atomic::Ordering::Relaxed);
        Ok((w, Served { requests: s + not_found, not_found, cpu_ns }))
    })
}

/// Run `serve` on a fresh one-worker runtime under `policy` and shut the runtime down
/// after it: a server row's run on schedlab. Returns the policy's name as the runtime
/// reports it (the spec as given when the runtime does not start) and the run's result.
pub(crate) fn on_runtime<T>(
    policy: &str,
    pin: Pin,
    serve: impl FnOnce(&schedlab_rt::Runtime) -> Result<T, String>,
) -> (String, Result<T, String>) {
    let rt = match schedlab_rt::Builder::new().workers(1).policy(policy).pin(pin.pinned()).build() {
        Ok(rt) => rt,
        Err(e) => return (policy.to_string(), Err(format!("runtime: {e}"))),
    };
    let name = rt.policy_name();
    let run = serve(&rt);
    rt.shutdown();
    (name, run)
}

/// One run on Tokio: `schedlab-peer-tokio --http-server` (its whole process on the
/// server's CPUs), which prints `listening ADDR`, starts counting at `go` and reports
/// `served requests=N not_found=M cpu_ns=C` when its stdin closes.
fn tokio_run(
    peer: &Path,
    pin: Pin,
    plan: &CpuPlan,
    wrk_bin: &Path,
    script: &Path,
    how: &WrkRun,
) -> Result<(WrkResult, Served), String> {
    let mut cmd = Command::new(peer);
    cmd.arg("--http-server")
        .arg("--pin")
        .arg(pin.label())
        .arg("--max-secs")
        .arg((how.secs + 60).to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if !plan.server.is_empty() {
        kthreads::restrict_command(&mut cmd, plan.server.clone());
    }
    let mut child = cmd.spawn().map_err(|e| format!("tokio peer {}: {e}", peer.display()))?;
    let result = (|| {
        let mut out = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut line = String::new();
        out.read_line(&mut line).map_err(|e| format!("tokio peer: {e}"))?;
        let addr =
            line.trim().strip_prefix("listening ").ok_or_else(|| format!("tokio peer said {line:?}"))?.to_string();
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        stdin.write_all(b"go\n").and_then(|_| stdin.flush()).map_err(|e| format!("tokio peer: {e}"))?;
        let w = wrk::run(wrk_bin, script, &format!("http://{addr}/"), how);
        drop(stdin);
        line.clear();
        out.read_line(&mut line).map_err(|e| format!("tokio peer: {e}"))?;
        let w = w.map_err(|e| e.to_string())?;
        let mut s = Served::default();
        let rest = line.trim().strip_prefix("served ").ok_or_else(|| format!("tokio peer said {line:?}"))?;
        for kv in rest.split_whitespace() {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("tokio peer said {line:?}"))?;
            let v: u64 = v.parse().map_err(|_| format!("tokio peer said {line:?}"))?;
            match k {
                "requests" => s.requests = v,
                "not_found" => s.not_found = v,
                "cpu_ns" => s.cpu_ns = v,
                _ => {}
            }
        }
        Ok((w, s))
    })();
    if result.is_err() {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| format!("tokio peer: {e}"))?;
    match result {
        Ok(r) if status.success() => Ok(r),
        Ok(_) => Err(format!("tokio peer failed ({status})")),
        Err(e) => Err(e),
    }
}

fn fmt_latency(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.0} µs", ns / 1e3)
    }
}

/// The `vs tokio` cell of round-by-round ratios: `0.99×` for one round, `0.99×
/// [0.97..1.02]` for several; empty when no round pairs.
fn ratio_cell(ratios: &[f64]) -> String {
    match ratios {
        [] => String::new(),
        [x] => format!("{x:.2}×"),
        v => crate::ratio_spread(v),
    }
}

/// The server rows as one table: per concurrency and server, requests/s (and per
/// CPU-second of the server, and against Tokio's at that concurrency), p50, p99,
/// p99.9, and how the CPUs were shared (a key, spelled out below the table).
pub fn render(rows: &[Row]) -> String {
    let mut out = String::new();
    let main: Vec<&Row> = rows.iter().filter(|r| is_http_bench(&r.bench) && r.unit == units::REQUESTS_PER_S).collect();
    if main.is_empty() {
        return out;
    }
    let reps = main.iter().map(|r| r.reps).max().unwrap_or(1);
    let runs = if reps > 1 {
        format!("the median of {reps} rounds per row, the runtimes alternated within each round")
    } else {
        "one run per row".to_string()
    };
    let _ = writeln!(
        out,
        "http servers (hyper HTTP/1.1 keep-alive, static pages from memory; wrk over loopback; {runs};\n              \
         requests/s higher is better, latency lower is better; cpu = requests per server CPU-second;\n              \
         vs tokio = requests/s over Tokio's round by round: median [min..max])"
    );
    let wr = main.iter().map(|r| r.runtime.len()).max().unwrap_or(0).max(7);
    let wp = main.iter().map(|r| r.policy.chars().count()).max().unwrap_or(0).max(6);
    let _ = writeln!(
        out,
        "  {:>5}  {:<wr$}  {:<wp$}  {:>10} {:>7}  {:<20} {:>9} {:>9} {:>9}  cpus",
        "conns", "runtime", "policy", "requests/s", "cpu", "vs tokio", "p50", "p99", "p99.9"
    );
    let mut keys: Vec<&str> = Vec::new();
    for r in &main {
        let conns = r.bench.strip_prefix("http-c").unwrap_or("?");
        let w = wp + r.policy.len() - r.policy.chars().count();
        let cpus = r.cpus.as_deref().unwrap_or("-");
        let key = match keys.iter().position(|k| *k == cpus) {
            Some(i) => i,
            None => {
                keys.push(cpus);
                keys.len() - 1
            }
        };
        let key = char::from(b'A' + (key % 26) as u8);
        if let Some(e) = &r.error {
            let _ = writeln!(out, "  {conns:>5}  {:<wr$}  {:<w$}  FAILED: {e}  [{key}]", r.runtime, r.policy);
            continue;
        }
        let lat = |suffix: &str| {
            let b = format!("{}-{suffix}", r.bench);
            rows.iter()
                .find(|x| x.bench == b && x.runtime == r.runtime && x.policy == r.policy && x.pin == r.pin)
                .map_or("-".to_string(), |x| fmt_latency(x.value))
        };
        let tokio = rows
            .iter()
            .find(|x| x.bench == r.bench && x.runtime == runtimes::TOKIO && x.error.is_none() && x.value > 0.0);
        let ratio = match tokio {
            Some(t) if r.runtime != runtimes::TOKIO => ratio_cell(&r.paired_ratios(t)),
            _ => String::new(),
        };
        let cpu = r.cpu_per_op.map_or("-".to_string(), |c| format!("{:.1}k", c / 1e3));
        let _ = writeln!(
            out,
            "  {conns:>5}  {:<wr$}  {:<w$}  {:>9.1}k {:>7}  {:<20} {:>9} {:>9} {:>9}  [{key}]",
            r.runtime,
            r.policy,
            r.value / 1e3,
            cpu,
            ratio,
            lat("p50"),
            lat("p99"),
            lat("p99.9"),
        );
    }
    for (i, k) in keys.iter().enumerate() {
        let _ = writeln!(out, "  [{}] {k}", char::from(b'A' + (i % 26) as u8));
    }
    out += "\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok_run(requests: u64) -> Result<(WrkResult, Served), String> {
        let w = WrkResult {
            requests,
            duration_us: 1_000_000,
            p50_us: 100,
            p99_us: 900,
            p999_us: 1500,
            max_us: 2000,
            ..WrkResult::default()
        };
        Ok((w, Served { requests, not_found: 0, cpu_ns: 500_000_000 }))
    }

    #[test]
    fn rows_of_a_run_and_their_table() {
        let cpus = CpuPlan { server: vec![0], client: vec![1] }.describe();
        assert_eq!(cpus, "server 1 worker thread (the reactor inside) on CPU 0; wrk 1 thread on CPU 1");
        let mut rows = run_rows(runtimes::SCHEDLAB, "fast", 16, &cpus, ok_run(20_000));
        rows.extend(run_rows(runtimes::TOKIO, "multi_thread(1)", 16, "t", ok_run(10_000)));
        assert_eq!(rows.len(), 8);
        assert_eq!((rows[0].bench.as_str(), rows[0].value, rows[0].cpu_per_op), ("http-c16", 20_000.0, Some(40_000.0)));
        assert_eq!(
            (rows[3].bench.as_str(), rows[3].value, rows[3].unit.as_str()),
            ("http-c16-p99.9", 1.5e6, "ns/request")
        );
        assert!(rows.iter().all(|r| is_server_bench(&r.bench) && r.cpus.is_some()));
        let t = crate::render_text(&rows);
        assert!(t.contains("http servers"), "{t}");
        assert!(t.contains("2.00×"), "{t}");
        assert!(t.contains("1.50 ms"), "{t}");
        assert!(
            t.contains("  [A] server 1 worker thread (the reactor inside) on CPU 0; wrk 1 thread on CPU 1\n"),
            "{t}"
        );
        assert!(t.contains("  [B] t\n"), "{t}");
        assert!(!t.contains("http-c16-p50 ("), "latency rows are in the server table only: {t}");
    }

    #[test]
    fn the_ratio_to_tokio_is_taken_round_by_round() {
        // Round 1: 20k against 10k; round 2: 18k against 12k. The medians' ratio
        // (19k / 11k = 1.73) is no round's; the cell gives the rounds' 2.00 and 1.50.
        let mut rounds = Vec::new();
        for (fast, tokio) in [(20_000, 10_000), (18_000, 12_000)] {
            rounds.extend(run_rows(runtimes::SCHEDLAB, "fast", 16, "c", ok_run(fast)));
            rounds.extend(run_rows(runtimes::TOKIO, "multi_thread(1)", 16, "c", ok_run(tokio)));
        }
        let rows = crate::row::aggregate(rounds);
        assert_eq!(rows.len(), 8);
        assert_eq!((rows[0].reps, rows[0].samples.as_slice()), (2, [20_000.0, 18_000.0].as_slice()));
        assert_eq!(rows[0].paired_ratios(&rows[4]), [2.0, 1.5]);
        let t = crate::render_text(&rows);
        assert!(t.contains("the median of 2 rounds per row"), "{t}");
        assert!(t.contains("1.75× [1.50..2.00]"), "{t}");
        assert_eq!(ratio_cell(&[]), "");
        assert_eq!(ratio_cell(&[0.987]), "0.99×");
    }

    #[test]
    fn a_run_with_errors_fails() {
        let mut bad = ok_run(100).unwrap();
        bad.0.timeout = 2;
        let r = run_rows(runtimes::SCHEDLAB, "mqs", 256, "x", Ok(bad));
        assert_eq!(r.len(), 1);
        assert!(r[0].error.as_deref().unwrap().contains("timeout 2"), "{r:?}");
        let mut lost = ok_run(100).unwrap();
        lost.1.requests = 99;
        assert!(run_rows(runtimes::SCHEDLAB, "mqs", 16, "x", Ok(lost))[0].error.is_some());
        assert!(run_rows(runtimes::SCHEDLAB, "mqs", 16, "x", ok_run(0))[0].error.is_some());
    }

    #[test]
    fn the_peer_is_measured_right_after_the_first_scheduler() {
        let s: Vec<String> = ["fast", "dss", "mqs"].iter().map(|x| x.to_string()).collect();
        use Turn::{Peer, Scheduler};
        assert_eq!(measuring_order(&s, true), vec![Scheduler("fast"), Peer, Scheduler("dss"), Scheduler("mqs")]);
        assert_eq!(measuring_order(&s, false), vec![Scheduler("fast"), Scheduler("dss"), Scheduler("mqs")]);
        assert_eq!(measuring_order(&[], true), vec![Peer]);
        assert_eq!(measuring_order(&s[..1], true), vec![Scheduler("fast"), Peer]);
    }
}
