//! The tbench rows of `schedlab bench --servers` (docs/bench.md), after NetBench's
//! throughput-against-clients table: the tbench server of [`crate::tbench`] on
//! schedlab's runtime under every scheduler and on Tokio (the peer binary's
//! `--tbench-server`), and dbench's own `tbench_srv` (a process per connection, the
//! Linux kernel scheduling them) as the anchor, each driven by the real `tbench` client
//! ([`crate::tbench_client`]) at each client count of [`TbenchScale::clients`].
//!
//! The 2 CPUs are shared as in the HTTP rows ([`CpuPlan`]): under [`Pin::All`] the
//! server on the first CPU, every client process on the second; under [`Pin::None`]
//! nothing is pinned. Every row says which (`cpus`).

use crate::row::Row;
use crate::servers::{measuring_order, CpuPlan, Turn, SERVER_THREADS};
use crate::tbench::{self, ServerStats};
use crate::tbench_client::{self as client, Group, Place, TbenchResult, TbenchRun};
use crate::{measure, runtimes, units, BenchError, Filter, Pin};
use schedlab_core::trace::Trace;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The `channel` of the tbench rows.
pub const CHANNEL: &str = "tbench protocol, loopback TCP";

/// The anchor's policy: `tbench_srv` forks a process per connection.
pub const ANCHOR: &str = "tbench_srv (a process per connection)";

/// The `cpus` name of the tbench client.
const CLIENT: &str = "tbench client processes";

/// How long and with how many clients the tbench rows run.
#[derive(Clone, Debug)]
pub struct TbenchScale {
    /// tbench's `-t` per row, whole seconds (its warm-up, `secs / 5` whole seconds,
    /// comes before).
    pub secs: u64,
    /// Client counts, one row per value and server.
    pub clients: Vec<usize>,
}

impl TbenchScale {
    /// `--quick`: `-t 2` (no warm-up, one measured second) with 4 and 16 clients;
    /// otherwise `-t 5` (1 s warm-up) with 4, 8, 16, 32 and 48.
    pub fn new(quick: bool) -> TbenchScale {
        if quick {
            TbenchScale { secs: 2, clients: vec![4, 16] }
        } else {
            TbenchScale { secs: 5, clients: vec![4, 8, 16, 32, 48] }
        }
    }
}

/// The bench name of a client count, e.g. `tbench-c16`.
pub fn bench(clients: usize) -> String {
    format!("tbench-c{clients}")
}

/// Whether `bench` is a tbench row.
pub fn is_tbench_bench(bench: &str) -> bool {
    bench.starts_with("tbench-c")
}

/// The row of one run: tbench's MB/s, checked against the server's counts.
fn run_row(
    runtime: &str,
    policy: &str,
    clients: usize,
    cpus: &str,
    run: Result<(TbenchResult, Option<Served>), String>,
) -> Row {
    let b = bench(clients);
    let checked = run.and_then(|(t, s)| match s {
        Some(s) if s.protocol_errors > 0 => {
            Err(format!("the server refused {} requests outside the protocol", s.protocol_errors))
        }
        Some(s) if s.requests == 0 => Err("the server answered no request".into()),
        Some(s) if s.connections < clients as u64 => {
            Err(format!("{clients} clients, the server accepted {} connections", s.connections))
        }
        Some(s) => Ok((t, s.busy())),
        None => Ok((t, None)),
    });
    let mut r = match checked {
        Ok((t, busy)) => {
            let mut r = Row::new(&b, runtime, policy, t.mb_per_s, units::MB_PER_S).with_channel(CHANNEL);
            // MB per server CPU-second: the rate over the fraction of a CPU it took.
            r.cpu_per_op = busy.filter(|&b| b > 0.0).map(|b| t.mb_per_s / b);
            r
        }
        Err(e) => Row::failed(&b, runtime, policy, units::MB_PER_S, CHANNEL, e),
    };
    r.cpus = Some(cpus.into());
    r
}

/// What a server of ours counted during a run, and its process CPU time over the
/// client's whole run (start, warm-up and end included) with that run's wall time.
#[derive(Clone, Copy, Debug, Default)]
struct Served {
    connections: u64,
    requests: u64,
    protocol_errors: u64,
    cpu_ns: u64,
    wall_ns: u64,
}

impl Served {
    fn of(s: &ServerStats, cpu_ns: u64, wall_ns: u64) -> Served {
        Served {
            connections: s.connections.load(Ordering::Relaxed),
            requests: s.requests.load(Ordering::Relaxed),
            protocol_errors: s.protocol_errors.load(Ordering::Relaxed),
            cpu_ns,
            wall_ns,
        }
    }
    /// The server's CPU time ÷ the run's wall time (1 = one CPU busy throughout).
    fn busy(&self) -> Option<f64> {
        (self.cpu_ns > 0 && self.wall_ns > 0).then(|| self.cpu_ns as f64 / self.wall_ns as f64)
    }
}

/// The tbench rows: for each client count, `tbench_srv`, schedlab under every
/// scheduler of `policies`, then Tokio (when `tokio_peer` is given). Without `tbench`
/// on `PATH`, no rows and a note; without `tbench_srv`, or where no private network
/// namespace can be made (it listens on every interface), no anchor rows and a note.
/// The anchor is measured first, then the others in [`measuring_order`] (Tokio right
/// after `fast`); the rows keep their order.
pub fn rows(
    scale: &TbenchScale,
    filter: &Filter,
    pin: Pin,
    policies: &[String],
    tokio_peer: Option<&Path>,
    note: &mut dyn FnMut(&str),
) -> Vec<Row> {
    let mut rows = Vec::new();
    let wanted = |c: usize, rt: &str| filter.wants(&bench(c), rt);
    let any = |rt: &str| scale.clients.iter().any(|&c| wanted(c, rt));
    if ![runtimes::LINUX, runtimes::SCHEDLAB, runtimes::TOKIO].iter().any(|rt| any(rt)) {
        return rows;
    }
    let Some(tbench_bin) = client::find("tbench") else {
        note("tbench not found on PATH: the tbench server rows are skipped (install it: apt-get install dbench)");
        return rows;
    };
    let mut anchor = client::find("tbench_srv");
    if anchor.is_none() && any(runtimes::LINUX) {
        note(
            "tbench_srv not found on PATH: its anchor rows are skipped (it comes with tbench: apt-get install dbench)",
        );
    }
    if anchor.is_some() && any(runtimes::LINUX) {
        if let Err(e) = client::Netns::new() {
            note(&format!(
                "no private network namespace ({e}): the tbench_srv rows are skipped (it listens on every \
                 interface, on tbench's fixed port {}); the other servers listen on a loopback address of their own",
                tbench::PORT
            ));
            anchor = None;
        }
    }
    let plan = CpuPlan::new(pin);
    let mut salt = 0u32;
    let mut place = || {
        salt += 1;
        Place::new(salt).map_err(String::from)
    };
    for &c in &scale.clients {
        let how = TbenchRun { clients: c, secs: scale.secs, cpus: plan.client.clone() };
        let head = |what: &str| format!("tbench-c{c} on {what}: tbench -t {} {c}", scale.secs);
        if let Some(srv) = anchor.as_deref().filter(|_| wanted(c, runtimes::LINUX)) {
            note(&head("linux tbench_srv"));
            let cpus = plan.describe_as("tbench_srv processes", CLIENT);
            let run = place().and_then(|p| anchor_run(srv, &p, &plan, &tbench_bin, &how).map_err(String::from));
            rows.push(run_row(runtimes::LINUX, ANCHOR, c, &cpus, run.map(|t| (t, None))));
        }
        let schedulers: &[String] = if wanted(c, runtimes::SCHEDLAB) { policies } else { &[] };
        let peer = tokio_peer.filter(|_| wanted(c, runtimes::TOKIO));
        let mut tokio_row = None;
        for turn in measuring_order(schedulers, peer.is_some()) {
            let cpus = plan.describe_as(SERVER_THREADS, CLIENT);
            match (turn, peer) {
                (Turn::Scheduler(policy), _) => {
                    note(&head(&format!("schedlab {policy}")));
                    let (name, run) = match place() {
                        Ok(p) => schedlab_run(policy, pin, &p, &tbench_bin, &how),
                        Err(e) => (policy.to_string(), Err(e)),
                    };
                    rows.push(run_row(runtimes::SCHEDLAB, &name, c, &cpus, run.map(|(t, s)| (t, Some(s)))));
                }
                (Turn::Peer, Some(peer)) => {
                    note(&head("tokio"));
                    let run = place().and_then(|p| tokio_run(peer, &p, &plan, &tbench_bin, &how));
                    tokio_row =
                        Some(run_row(runtimes::TOKIO, "multi_thread(1)", c, &cpus, run.map(|(t, s)| (t, Some(s)))));
                }
                (Turn::Peer, None) => {}
            }
        }
        rows.extend(tokio_row);
    }
    crate::row::label_pin(&mut rows, pin);
    rows
}

/// One run of the anchor: `tbench_srv` (every process of it on the server's CPUs) in
/// `place`, which is a private network namespace.
fn anchor_run(
    srv: &Path,
    place: &Place,
    plan: &CpuPlan,
    bin: &Path,
    how: &TbenchRun,
) -> Result<TbenchResult, BenchError> {
    if !place.private() {
        return Err(BenchError::Net("tbench_srv runs only in a private network namespace".into()));
    }
    let mut cmd = Command::new(srv);
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    place.prepare(&mut cmd, &plan.server);
    let _server = Group::spawn(&mut cmd).map_err(|e| BenchError::Tool(format!("tbench_srv {}: {e}", srv.display())))?;
    place.wait_listening(Duration::from_secs(5))?;
    client::run(bin, place, how)
}

/// `tbench` and `tbench_srv` on `PATH`, or which is missing.
pub fn tbench_tools() -> Result<(std::path::PathBuf, std::path::PathBuf), BenchError> {
    let find = |name: &str| {
        client::find(name).ok_or_else(|| {
            BenchError::Tool(format!("{name} not found on PATH (it comes with dbench: apt-get install dbench)"))
        })
    };
    Ok((find("tbench")?, find("tbench_srv")?))
}

/// One run of dbench's `tbench_srv` and `tbench` alone under the kernel, nothing
/// pinned, in a private network namespace of its own (the anchor row's run, every
/// process unpinned): what `schedlab kernelcheck --tbench` records.
pub fn kernel_run(clients: usize, secs: u64) -> Result<TbenchResult, BenchError> {
    let (bin, srv) = tbench_tools()?;
    let place = Place::Netns(client::Netns::new()?);
    let plan = CpuPlan { server: Vec::new(), client: Vec::new() };
    anchor_run(&srv, &place, &plan, &bin, &TbenchRun { clients, secs, cpus: Vec::new() })
}

/// A run of the tbench server on schedlab's runtime with its scheduling trace.
#[derive(Debug)]
pub struct TracedRun {
    /// The policy's name as the runtime reports it.
    pub policy: String,
    pub tbench: TbenchResult,
    /// The runtime's trace from its start to its shutdown (`Builder::trace`).
    pub trace: Trace,
}

/// One run of the tbench server on schedlab's runtime, as a tbench row's (1 worker
/// under `policy`, the server in this process), nothing pinned and the runtime
/// recording its trace (at most `cap` events), driven by `tbench -t secs clients`;
/// an error, as in the rows, if the server refused a request or saw fewer connections
/// than clients.
pub fn runtime_traced_run(policy: &str, clients: usize, secs: u64, cap: usize) -> Result<TracedRun, BenchError> {
    let (bin, _) = tbench_tools()?;
    let place = Place::new(1)?;
    let rt = schedlab_rt::Builder::new().workers(1).policy(policy).pin(false).trace(cap).build()?;
    let name = rt.policy_name();
    let how = TbenchRun { clients, secs, cpus: Vec::new() };
    let stats = Arc::new(ServerStats::default());
    let run = (|| {
        let listener = place.bind()?;
        let listener =
            schedlab_rt::net::TcpListener::new(listener).map_err(|e| BenchError::Net(format!("listener: {e}")))?;
        drop(rt.spawn(tbench::serve(listener, crate::http::rt::RtExecutor, stats.clone())));
        client::run(&bin, &place, &how)
    })();
    let (_, trace) = rt.shutdown_traced();
    let tbench = run?;
    let served = Served::of(&stats, 0, 0);
    if served.protocol_errors > 0 {
        return Err(BenchError::Run(format!(
            "the server refused {} requests outside the protocol",
            served.protocol_errors
        )));
    }
    if served.connections < clients as u64 {
        return Err(BenchError::Run(format!(
            "{clients} clients, the server accepted {} connections",
            served.connections
        )));
    }
    let trace = trace.ok_or_else(|| BenchError::Run("the runtime recorded no trace".into()))?;
    Ok(TracedRun { policy: name, tbench, trace })
}

/// One run on schedlab's runtime: 1 worker under `policy`, the server in this
/// process, its listener in `place`; the policy's name as the runtime reports it.
fn schedlab_run(
    policy: &str,
    pin: Pin,
    place: &Place,
    bin: &Path,
    how: &TbenchRun,
) -> (String, Result<(TbenchResult, Served), String>) {
    crate::servers::on_runtime(policy, pin, |rt| {
        let listener = place.bind()?;
        let listener = schedlab_rt::net::TcpListener::new(listener).map_err(|e| format!("listener: {e}"))?;
        let stats = Arc::new(ServerStats::default());
        drop(rt.spawn(tbench::serve(listener, crate::http::rt::RtExecutor, stats.clone())));
        let (cpu0, t0) = (measure::process_cpu_ns(), Instant::now());
        let t = client::run(bin, place, how)?;
        let wall_ns = t0.elapsed().as_nanos() as u64;
        Ok((t, Served::of(&stats, measure::process_cpu_ns().saturating_sub(cpu0), wall_ns)))
    })
}

/// One run on Tokio: `schedlab-peer-tokio --tbench-server --bind ADDR` started in
/// `place` on the server's CPUs. It prints `listening ADDR`, and when its stdin closes
/// `served connections=C requests=R protocol_errors=P ... cpu_ns=N` (its process CPU
/// time since it listened) and exits.
fn tokio_run(
    peer: &Path,
    place: &Place,
    plan: &CpuPlan,
    bin: &Path,
    how: &TbenchRun,
) -> Result<(TbenchResult, Served), String> {
    let mut cmd = Command::new(peer);
    cmd.arg("--tbench-server")
        .arg("--bind")
        .arg(place.addr().to_string())
        .arg("--max-secs")
        .arg((how.limit().as_secs() + 30).to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    place.prepare(&mut cmd, &plan.server);
    let mut g = Group::spawn(&mut cmd).map_err(|e| format!("tokio peer {}: {e}", peer.display()))?;
    // Its lines arrive through a thread, so every wait for one has a deadline.
    let (tx, lines) = mpsc::channel::<String>();
    let out = BufReader::new(g.child.stdout.take().ok_or("tokio peer: no stdout")?);
    std::thread::spawn(move || {
        for l in out.lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let line = |within: Duration| lines.recv_timeout(within).map_err(|_| "tokio peer said nothing in time".to_string());
    let first = line(Duration::from_secs(10))?;
    if first.strip_prefix("listening ").is_none() {
        return Err(format!("tokio peer said {first:?}"));
    }
    let t0 = Instant::now();
    let t = client::run(bin, place, how);
    let wall_ns = t0.elapsed().as_nanos() as u64;
    drop(g.child.stdin.take());
    let last = line(Duration::from_secs(10))?;
    let t = t?;
    let rest = last.strip_prefix("served ").ok_or_else(|| format!("tokio peer said {last:?}"))?;
    let mut s = Served { wall_ns, ..Served::default() };
    for kv in rest.split_whitespace() {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("tokio peer said {last:?}"))?;
        let v: u64 = v.parse().map_err(|_| format!("tokio peer said {last:?}"))?;
        match k {
            "connections" => s.connections = v,
            "requests" => s.requests = v,
            "protocol_errors" => s.protocol_errors = v,
            "cpu_ns" => s.cpu_ns = v,
            _ => {}
        }
    }
    match g.wait_for(Duration::from_secs(5)) {
        Ok(Some(status)) if status.success() => Ok((t, s)),
        Ok(Some(status)) => Err(format!("tokio peer failed ({status})")),
        _ => Err("tokio peer did not exit; killed".into()),
    }
}

/// The tbench rows as one table, throughput against clients as NetBench tabulates it:
/// a line per server, MB/s per client count, the peak (and, for schedlab, its ratio to
/// Tokio's peak), and how the CPUs were shared (a key, spelled out below).
pub fn render(rows: &[Row]) -> String {
    let mut out = String::new();
    let main: Vec<&Row> = rows.iter().filter(|r| is_tbench_bench(&r.bench)).collect();
    if main.is_empty() {
        return out;
    }
    let mut counts: Vec<usize> =
        main.iter().filter_map(|r| r.bench.strip_prefix("tbench-c").and_then(|c| c.parse().ok())).collect();
    counts.sort_unstable();
    counts.dedup();
    // Servers in first-seen order: (runtime, policy, pin).
    let mut servers: Vec<(&str, &str, &str)> = Vec::new();
    for r in &main {
        let k = (r.runtime.as_str(), r.policy.as_str(), r.pin.as_str());
        if !servers.contains(&k) {
            servers.push(k);
        }
    }
    let cell = |s: &(&str, &str, &str), c: usize| {
        main.iter().find(|r| (r.runtime.as_str(), r.policy.as_str(), r.pin.as_str()) == *s && r.bench == bench(c))
    };
    let peak = |s: &(&str, &str, &str)| {
        counts.iter().filter_map(|&c| cell(s, c)).filter(|r| r.error.is_none()).map(|r| r.value).fold(None, |m, v| {
            Some(match m {
                Some(m) if m >= v => m,
                _ => v,
            })
        })
    };
    let tokio_peak = servers.iter().find(|s| s.0 == runtimes::TOKIO).and_then(&peak);
    out += "tbench servers (dbench's tbench client: one process and TCP connection per client, over loopback;\n";
    out += "                MB/s as tbench reports it, higher is better; one run per cell; peak = best over the client counts;\n";
    out += "                busy = server process CPU time / the run's wall time, start and warm-up included)\n";
    let wr = servers.iter().map(|s| s.0.len()).max().unwrap_or(0).max(7);
    let wp = servers.iter().map(|s| s.1.chars().count()).max().unwrap_or(0).max(6);
    let _ = write!(out, "  {:<wr$}  {:<wp$}", "runtime", "policy");
    for c in &counts {
        let _ = write!(out, " {:>13}", format!("{c} cl  busy"));
    }
    let _ = writeln!(out, " {:>8}  {:<9} cpus", "peak", "vs tokio");
    let mut keys: Vec<&str> = Vec::new();
    let mut failures = Vec::new();
    for s in &servers {
        let w = wp + s.1.len() - s.1.chars().count();
        let _ = write!(out, "  {:<wr$}  {:<w$}", s.0, s.1);
        let mut cpus = "-";
        for &c in &counts {
            match cell(s, c) {
                Some(r) => {
                    cpus = r.cpus.as_deref().unwrap_or("-");
                    match &r.error {
                        Some(e) => {
                            let _ = write!(out, " {:>13}", "FAILED");
                            failures.push(format!("{} {} with {c} clients: {e}", s.0, s.1));
                        }
                        None => {
                            let busy = match r.cpu_per_op {
                                Some(c) if c > 0.0 => format!("{:.0}%", 100.0 * r.value / c),
                                _ => "-".into(),
                            };
                            let _ = write!(out, " {:>8.1} {busy:>4}", r.value);
                        }
                    }
                }
                None => {
                    let _ = write!(out, " {:>13}", "-");
                }
            }
        }
        let key = match keys.iter().position(|k| *k == cpus) {
            Some(i) => i,
            None => {
                keys.push(cpus);
                keys.len() - 1
            }
        };
        let key = char::from(b'A' + (key % 26) as u8);
        let p = peak(s);
        let ratio = match (p, tokio_peak) {
            (Some(p), Some(t)) if s.0 != runtimes::TOKIO && t > 0.0 => format!("{:.2}×", p / t),
            _ => String::new(),
        };
        let p = p.map_or("-".to_string(), |p| format!("{p:.1}"));
        let _ = writeln!(out, " {p:>8}  {ratio:<9} [{key}]");
    }
    for (i, k) in keys.iter().enumerate() {
        let _ = writeln!(out, "  [{}] {k}", char::from(b'A' + (i % 26) as u8));
    }
    for f in failures {
        let _ = writeln!(out, "  FAILED: {f}");
    }
    out += "\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(mb: f64, clients: usize) -> Result<(TbenchResult, Option<Served>), String> {
        let s = Served { connections: clients as u64, requests: 1000, protocol_errors: 0, cpu_ns: 1, wall_ns: 2 };
        Ok((TbenchResult { mb_per_s: mb, clients, max_latency_ms: 1.0 }, Some(s)))
    }

    #[test]
    fn rows_of_runs_and_their_table() {
        let plan = CpuPlan { server: vec![0], client: vec![1] };
        let cpus = plan.describe_as(SERVER_THREADS, CLIENT);
        assert_eq!(cpus, "server 1 worker thread (the reactor inside) on CPU 0; tbench client processes on CPU 1");
        let mut rows = Vec::new();
        for (c, mb) in [(4, 100.0), (16, 300.0)] {
            rows.push(run_row(runtimes::LINUX, ANCHOR, c, "k", ok(mb * 2.0, c).map(|(t, _)| (t, None))));
            rows.push(run_row(runtimes::SCHEDLAB, "fast", c, &cpus, ok(mb, c)));
            rows.push(run_row(runtimes::TOKIO, "multi_thread(1)", c, "t", ok(mb / 2.0, c)));
        }
        let mut bad = ok(1.0, 16).unwrap();
        bad.1.as_mut().unwrap().protocol_errors = 2;
        rows.push(run_row(runtimes::SCHEDLAB, "o1", 16, &cpus, Ok(bad)));
        assert!(rows.iter().all(|r| is_tbench_bench(&r.bench) && r.cpus.is_some() && r.unit == "MB/s"));
        assert!(rows[6].error.as_deref().unwrap().contains("refused 2"), "{:?}", rows[6]);
        let t = crate::render_text(&rows);
        assert!(t.contains("tbench servers"), "{t}");
        // fast: 100 and 300 MB/s, peak 300, twice Tokio's peak of 150.
        assert!(t.contains("fast") && t.contains("   100.0  50%    300.0  50%    300.0  2.00×"), "{t}");
        assert!(t.contains("   200.0    -    600.0    -    600.0  4.00×"), "the anchor has no busy figure: {t}");
        assert_eq!(rows[1].cpu_per_op, Some(200.0), "MB per server CPU-second");
        assert!(t.contains("FAILED: schedlab o1 with 16 clients"), "{t}");
        assert!(
            t.contains("[B] server 1 worker thread (the reactor inside) on CPU 0; tbench client processes on CPU 1"),
            "{t}"
        );
        assert!(t.contains("1 row(s) FAILED"), "{t}");
    }

    #[test]
    fn a_server_that_saw_fewer_connections_fails() {
        let mut r = ok(5.0, 8).unwrap();
        r.1.as_mut().unwrap().connections = 3;
        assert!(run_row(runtimes::TOKIO, "multi_thread(1)", 8, "x", Ok(r)).error.unwrap().contains("accepted 3"));
        assert!(run_row(runtimes::TOKIO, "x", 8, "x", Err("boom".into())).error.is_some());
    }
}
