//! `schedlab kernelcheck --tbench`: one real workload on three engines.
//!
//! dbench's `tbench` client and its `tbench_srv` server (a process per connection) run
//! under the kernel in a private network namespace, nothing pinned, once alone (MB/s)
//! and once under `perf sched record` (the hidden child `kernelcheck-tbench`:
//! [`child`]). `perf sched script` is read by [`crate::parse`] into the trace
//! vocabulary, keeping the tasks named `tbench` and `tbench_srv`, each wake-up with its
//! waker; that trace is the kernel's row and, written as schedlab's Chrome JSON
//! (`schedlab_core::trace::chrome`), the input of the `trace:` workload, which the
//! simulator replays on the host machine under [`POLICIES`]. The runtime's rows run
//! the tbench server of `crates/bench` on schedlab's runtime under the same policies,
//! driven by the same client, with the runtime's own trace. One analysis
//! (`schedlab_validate::dist::analyze`) reads the three engines' traces.
//!
//! What is compared is said in docs/kernelcheck.md, "tbench on three engines": the
//! replay is the recording's run/sleep/wake skeleton, so the network stack's cost
//! enters it only as the recorded run lengths, and its MB/s is the kernel's scaled by
//! the two durations.

use crate::{perf, Error, Latencies};
use schedlab_bench::netbench;
use schedlab_bench::tbench_client::TbenchResult;
use schedlab_core::trace::{Event, Trace};
use schedlab_core::PolicySpec;
use schedlab_sim::{simulate_traced, Machine, SimConfig};
use schedlab_validate::dist::{self, Dist};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The policies of the simulator's and the runtime's rows: Linux 2.4's, IBM's
/// multi-queue, 2.5's O(1), and the fair class before (CFS) and now (EEVDF).
pub const POLICIES: [&str; 5] = ["dss", "o1", "mqs", "cfs", "eevdf"];

/// The command names of the workload's tasks in the recording.
pub const COMMS: [&str; 2] = ["tbench", "tbench_srv"];

/// Events the runtime's trace of one row may keep (40 bytes each: 160 MB).
pub const RT_TRACE_CAP: usize = 4_000_000;

/// How long and with how many clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// tbench's `-t`, whole seconds (its warm-up of `secs / 5` whole seconds first).
    pub secs: u64,
    pub clients: Vec<usize>,
}

impl Scale {
    /// `--quick`: 4 clients, `-t 2` (tbench measures nothing in `-t 1`); otherwise 4
    /// and 16 clients, `-t 3`.
    pub fn new(quick: bool) -> Scale {
        if quick {
            Scale { secs: 2, clients: vec![4] }
        } else {
            Scale { secs: 3, clients: vec![4, 16] }
        }
    }
}

/// The hidden child's arguments: `CLIENTS SECS`.
pub fn child_args(clients: usize, secs: u64) -> Vec<String> {
    vec![clients.to_string(), secs.to_string()]
}

/// The child `perf sched record` runs (`schedlab kernelcheck-tbench CLIENTS SECS`):
/// `tbench_srv` and `tbench -t SECS CLIENTS` in a private network namespace; prints
/// tbench's result as its `Throughput` line.
pub fn child(args: &[String]) -> Result<(), Error> {
    let usage = Error::Usage;
    let [clients, secs] = args else { return Err(usage("expected CLIENTS SECS".into())) };
    let clients: usize = clients.parse().map_err(|_| usage(format!("CLIENTS {clients:?} is not a number")))?;
    let secs: u64 = secs.parse().map_err(|_| usage(format!("SECS {secs:?} is not a number")))?;
    if !(1..=64).contains(&clients) || !(1..=60).contains(&secs) {
        return Err(usage("CLIENTS must be 1 to 64 and SECS 1 to 60".into()));
    }
    let r = netbench::kernel_run(clients, secs).map_err(|e| Error::Child(e.to_string()))?;
    println!("{}", throughput_line(&r));
    Ok(())
}

/// tbench's own final line, as [`TbenchResult::parse`] reads it.
fn throughput_line(r: &TbenchResult) -> String {
    format!(
        "Throughput {} MB/sec  {} clients  {} procs  max_latency={} ms",
        r.mb_per_s, r.clients, r.clients, r.max_latency_ms
    )
}

/// One engine's figures (rounded as printed).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EngineRow {
    /// `kernel`, `sim` or `runtime`.
    pub engine: String,
    /// The policy (the kernel's: its fair class).
    pub policy: String,
    /// MB/s: tbench's for the kernel and the runtime; for the simulator the traced
    /// kernel run's scaled by the kernel's traced span over the replay's completion
    /// time (the replay moves the recorded run's bytes in its own time).
    pub mb_per_s: f64,
    /// Wake-ups of the engine's tasks in its trace per second of the trace's span.
    pub wakeups_per_s: f64,
    /// Run slices (switches onto a task) per second.
    pub switches_per_s: f64,
    /// Migrations per second.
    pub migrations_per_s: f64,
    #[serde(flatten)]
    pub latencies: Latencies,
    /// The trace's span (the replay's completion time), ms (0.01).
    pub span_ms: f64,
    /// Events past the trace's cap (the figures then cover the run's beginning).
    pub trace_dropped: u64,
    /// Why this engine's row has no figures.
    pub error: Option<String>,
}

impl EngineRow {
    pub(crate) fn new(engine: &str, policy: &str, mb_per_s: f64, span_ns: u64, d: &Dist) -> EngineRow {
        let secs = (span_ns as f64 / 1e9).max(1e-9);
        let per_s = |n: u64| (n as f64 / secs).round();
        EngineRow {
            engine: engine.into(),
            policy: policy.into(),
            mb_per_s: (mb_per_s * 10.0).round() / 10.0,
            wakeups_per_s: per_s(d.wakeups),
            switches_per_s: per_s(d.switches),
            migrations_per_s: per_s(d.migrations),
            latencies: Latencies::of(d),
            span_ms: (span_ns as f64 / 1e4).round() / 100.0,
            trace_dropped: d.dropped,
            error: None,
        }
    }

    fn failed(engine: &str, policy: &str, e: String) -> EngineRow {
        EngineRow {
            engine: engine.into(),
            policy: policy.into(),
            mb_per_s: 0.0,
            wakeups_per_s: 0.0,
            switches_per_s: 0.0,
            migrations_per_s: 0.0,
            latencies: Latencies::default(),
            span_ms: 0.0,
            trace_dropped: 0,
            error: Some(e),
        }
    }
}

/// The recording up to the last event of a client task (`tbench`, not
/// `tbench_srv`): what follows is the server's end (its parent, asleep in `accept`
/// since the start, killed with its group), which no client waits for and which the
/// replay would otherwise keep as a sleep as long as the whole run.
pub fn cut_after_clients(t: &mut Trace) {
    let client: Vec<bool> = t.meta.task_roles.iter().map(|r| r.starts_with("tbench pid ")).collect();
    let is_client = |id: Option<u32>| id.is_some_and(|i| client.get(i as usize).copied().unwrap_or(false));
    let end = t
        .records
        .iter()
        .filter(|r| match r.ev {
            Event::Switch { prev, next, .. } => is_client(prev) || is_client(next),
            Event::Wakeup { task, .. } | Event::Migrate { task, .. } | Event::Exit { task } => is_client(Some(task)),
            Event::Fork { child, .. } => is_client(Some(child)),
            _ => false,
        })
        .map(|r| r.ts_ns)
        .max();
    if let Some(end) = end {
        t.records.retain(|r| r.ts_ns <= end);
    }
}

/// From a trace's first record to its last, ns.
pub fn span_ns(t: &Trace) -> u64 {
    let first = t.records.iter().map(|r| r.ts_ns).min().unwrap_or(0);
    let last = t.records.iter().map(|r| r.ts_ns).max().unwrap_or(0);
    last - first
}

/// What the recording held and what the replay kept of it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Recording {
    /// `tbench_srv` and `tbench` processes seen.
    pub tasks: u64,
    /// Event lines of the whole machine read.
    pub lines: u64,
    /// Wake-ups of a task still on its CPU, dropped (parse.rs).
    pub wakeups_of_running: u64,
    /// The replay's mapping (`trace:`): blocks ended by a traced waker (send/receive
    /// pairs), by none (sleeps), wake-ups dropped, blocks open at the end.
    pub wake_edges: u64,
    pub sleeps: u64,
    pub dropped_wakeups: u64,
    pub open_blocks: u64,
    /// The traced kernel run's MB/s (the recording's own cost is in it).
    pub traced_mb_per_s: f64,
    /// The `trace:` spec the simulator ran, by the file's name (`tbench-cN.json`).
    pub spec: String,
    /// Whether that file is kept (`--trace-out DIR`); otherwise it was a temporary file.
    pub kept: bool,
}

/// One client count on the three engines.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TbenchRow {
    pub clients: usize,
    pub secs: u64,
    pub recording: Recording,
    /// The kernel's row, then the simulator's in [`POLICIES`] order, then the runtime's.
    pub rows: Vec<EngineRow>,
}

/// The whole run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TbenchReport {
    #[serde(flatten)]
    pub header: crate::RunHeader,
    pub results: Vec<TbenchRow>,
}

/// The settings of one run.
pub struct TbenchOptions {
    pub quick: bool,
    /// This program, for the recorded child (`kernelcheck-tbench`).
    pub self_exe: PathBuf,
    pub perf: String,
    pub machine: Machine,
    pub machine_desc: String,
    /// Where the converted traces are kept (`tbench-cN.json`); None: a temporary file,
    /// removed after its replay.
    pub trace_dir: Option<PathBuf>,
    pub progress: fn(&str),
}

/// The recording's trace in schedlab's Chrome JSON, which the `trace:` workload reads.
pub fn write_trace(t: &Trace, path: &Path) -> Result<(), Error> {
    let f = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    schedlab_core::trace::chrome::write(t, f).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// The `trace:` workload of a converted recording, at the machine's clock (a recorded
/// run burst lasts as long on the simulated host), with the mapping's counts.
pub fn replay_workload(
    path: &Path,
    mhz: u32,
) -> Result<(String, schedlab_workloads::Workload, schedlab_workloads::trace_in::Summary), Error> {
    let spec = format!("trace:{},mhz={mhz}", path.display());
    let (w, s) = schedlab_workloads::trace_in::load(&spec, schedlab_workloads::footprint::DEFAULT_MAX_BYTES)
        .map_err(|e| e.to_string())?;
    Ok((spec, w, s))
}

/// Every client count of the scale: the kernel (alone, then recorded), its replay on
/// the simulator under each of [`POLICIES`], then the runtime under each.
pub fn run(o: &TbenchOptions) -> Result<TbenchReport, Error> {
    let scale = Scale::new(o.quick);
    netbench::tbench_tools().map_err(|e| e.to_string())?;
    let header = crate::RunHeader::start(&o.perf, &o.machine_desc, o.machine.cpus, o.quick);
    let release = header.kernel_release.clone();
    let limit = Duration::from_secs(scale.secs + scale.secs / 5 + 1 + 40);
    let mut results = Vec::new();
    for &c in &scale.clients {
        let argv: Vec<String> = [o.self_exe.to_string_lossy().to_string(), "kernelcheck-tbench".into()]
            .into_iter()
            .chain(child_args(c, scale.secs))
            .collect();
        let what = format!("tbench_srv + tbench -t {} {c}", scale.secs);
        (o.progress)(&format!("{what}: kernel"));
        let plain = TbenchResult::parse(&perf::plain(&argv, limit)?).map_err(|e| format!("{what}: {e}"))?;
        (o.progress)(&format!("{what}: kernel under perf sched record"));
        let data = perf::TempFile(perf::temp_data());
        let traced = TbenchResult::parse(&perf::record(&data.0, &argv, limit)?).map_err(|e| format!("{what}: {e}"))?;
        let (mut trace, counts) = perf::script(&data.0, &COMMS, Duration::from_secs(300))?;
        cut_after_clients(&mut trace);
        drop(data);
        if counts.tasks == 0 {
            return Err(Error::Run(format!("{what}: no task named tbench or tbench_srv in the recording")));
        }
        let kspan = span_ns(&trace);
        let kdist = dist::analyze(&trace);
        let kernel_policy = format!("Linux {release}");
        let mut rows = vec![EngineRow::new("kernel", &kernel_policy, plain.mb_per_s, kspan, &kdist)];

        // The recording as a trace file, replayed as `sim --workload trace:FILE` would.
        let name = format!("tbench-c{c}.json");
        let (path, _tmp) = match &o.trace_dir {
            Some(d) => {
                std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
                (d.join(&name), None)
            }
            None => {
                let p = perf::temp_data().with_extension("json");
                (p.clone(), Some(perf::TempFile(p)))
            }
        };
        write_trace(&trace, &path)?;
        drop(trace);
        let (_, w, summary) = replay_workload(&path, o.machine.mhz)?;
        for p in POLICIES {
            (o.progress)(&format!("{what}: simulator, {p} (the recording replayed)"));
            let spec_p = PolicySpec::parse(p).map_err(|e| e.to_string())?;
            let row = match simulate_traced(&o.machine, &spec_p, &w, &SimConfig::default(), crate::SIM_TRACE_CAP) {
                Ok((rep, t)) => {
                    let mb = traced.mb_per_s * kspan as f64 / rep.virtual_ns.max(1) as f64;
                    EngineRow::new("sim", p, mb, rep.virtual_ns, &dist::analyze(&t))
                }
                Err(e) => EngineRow::failed("sim", p, e.to_string()),
            };
            rows.push(row);
        }
        drop(w);
        for p in POLICIES {
            (o.progress)(&format!("{what}: runtime, {p} (tbench server on schedlab's runtime)"));
            let row = match netbench::runtime_traced_run(p, c, scale.secs, RT_TRACE_CAP) {
                Ok(r) => {
                    EngineRow::new("runtime", &r.policy, r.tbench.mb_per_s, span_ns(&r.trace), &dist::analyze(&r.trace))
                }
                Err(e) => EngineRow::failed("runtime", p, e.to_string()),
            };
            rows.push(row);
        }
        results.push(TbenchRow {
            clients: c,
            secs: scale.secs,
            recording: Recording {
                tasks: counts.tasks,
                lines: counts.lines,
                wakeups_of_running: counts.wakeups_of_running,
                wake_edges: summary.wake_edges,
                sleeps: summary.sleeps,
                dropped_wakeups: summary.dropped_wakeups,
                open_blocks: summary.open_blocks,
                traced_mb_per_s: traced.mb_per_s,
                spec: format!("trace:{name},mhz={}", o.machine.mhz),
                kept: o.trace_dir.is_some(),
            },
            rows,
        });
    }
    Ok(TbenchReport { header: header.finish(), results })
}

/// The report as text: per client count, what was recorded and replayed, then one
/// table of the three engines.
pub fn render(rep: &TbenchReport) -> String {
    let r = &rep.header;
    let mut s = String::new();
    s += "schedlab kernelcheck --tbench: one real workload (dbench's tbench), three engines\n";
    s += &format!("kernel: Linux {}; scheduler features: {}\n", r.kernel_release, r.sched_features);
    s += &format!("perf: {}\n", r.perf);
    s += &format!("machine (simulator): {}, {} CPUs\n", r.machine, r.cpus);
    s += &format!("size: {}\n", r.size);
    s += &format!("load average: {} before, {} after\n", r.load_before, r.load_after);
    s += "kernel:  tbench_srv (a process per connection) + tbench, a private network namespace, nothing pinned\n";
    s += "sim:     the kernel's recording replayed (trace:): its run lengths, sleeps and who woke whom\n";
    s += "runtime: the tbench server on schedlab's runtime, 1 worker, nothing pinned, the same tbench client\n";
    s += "MB/s: tbench's; sim: the traced kernel run's x kernel span / replay time. Rates per second of each trace's span.\n";
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    for t in &rep.results {
        let k = &t.recording;
        s += &format!("\ntbench -t {} {} clients\n", t.secs, t.clients);
        s += &format!(
            "  recorded: {} tasks, {} lines; traced kernel run {:.1} MB/s; {} wake-ups of a running task dropped\n",
            k.tasks, k.lines, k.traced_mb_per_s, k.wakeups_of_running
        );
        s += &format!(
            "  replayed: {}{}: {} wake-ups -> send/receive, {} -> sleeps; dropped {} wake-ups, {} blocks open at the end\n",
            k.spec,
            if k.kept { "" } else { " (a temporary file; --trace-out DIR keeps it)" },
            k.wake_edges,
            k.sleeps,
            k.dropped_wakeups,
            k.open_blocks
        );
        s += &format!(
            "  {:<8} {:<16} {:>8} {:>11} {:>11} {:>8} {:>11} {:>11} {:>10} {:>9}\n",
            "engine",
            "policy",
            "MB/s",
            "wakeups/s",
            "switches/s",
            "migr/s",
            "wake_p50_us",
            "wake_p99_us",
            "run_p50_us",
            "span_ms"
        );
        for e in &t.rows {
            if let Some(err) = &e.error {
                s += &format!("  {:<8} {:<16} FAILED: {err}\n", e.engine, e.policy);
                continue;
            }
            s += &format!(
                "  {:<8} {:<16} {:>8.1} {:>11.0} {:>11.0} {:>8.0} {:>11} {:>11} {:>10} {:>9.2}\n",
                e.engine,
                e.policy,
                e.mb_per_s,
                e.wakeups_per_s,
                e.switches_per_s,
                e.migrations_per_s,
                opt(e.latencies.wake_p50_us),
                opt(e.latencies.wake_p99_us),
                opt(e.latencies.run_p50_us),
                e.span_ms
            );
        }
        for e in t.rows.iter().filter(|e| e.trace_dropped > 0) {
            s += &format!(
                "  {} {}: trace capped ({} events dropped): its distributions cover the run's beginning\n",
                e.engine, e.policy, e.trace_dropped
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Builder;

    /// `perf sched script --ns` of `perf sched record` of `tbench_srv` and `tbench -t 2
    /// 4` on a 2-vCPU VM (Linux 6.18, perf 6.1): the clients' start, 108 lines of the
    /// whole machine (other processes included).
    const START: &str = include_str!("../tests/data/perf-sched-script-tbench-c4-start.txt");

    fn recording() -> (Trace, crate::parse::Counts) {
        let mut b = Builder::of(&COMMS);
        b.read(START.as_bytes()).unwrap();
        b.finish("tbench start")
    }

    #[test]
    fn the_recording_keeps_the_client_and_server_with_their_wakers() {
        let (t, c) = recording();
        let pid = |id: u32| t.meta.task_roles[id as usize].rsplit(' ').next().unwrap().parse::<u64>().unwrap();
        assert_eq!(t.meta.task_roles[0], "tbench pid 20571", "the first fork's child first");
        // tbench's parent and its 4 clients, tbench_srv's parent and its 4 children.
        assert_eq!(c.tasks, 10);
        let mut woken = Vec::new();
        let mut fork_wakeups = 0;
        for r in &t.records {
            if let Event::Wakeup { task, waker, .. } = r.ev {
                match waker {
                    Some(w) => woken.push((pid(task), pid(w))),
                    None => fork_wakeups += 1,
                }
            }
        }
        // Every wake-up of a workload task here comes from one (the line's TID), in order.
        assert_eq!(
            woken,
            [
                (20571, 20569),
                (20556, 20571),
                (20571, 20572),
                (20556, 20573),
                (20573, 20576),
                (20574, 20577),
                (20575, 20578)
            ]
        );
        // The forks' own wake-ups (`sched_wakeup_new`) have none.
        assert_eq!(fork_wakeups, 8);
        assert_eq!(c.wakeups_of_running, 0);
        // The excerpt ends with a client (20575) going to sleep: nothing is cut.
        let mut cut = t.clone();
        cut_after_clients(&mut cut);
        assert_eq!(cut.records.len(), t.records.len());
    }

    #[test]
    fn the_recording_ends_with_the_last_client_event() {
        use schedlab_core::trace::{Record, TraceMeta};
        use schedlab_core::PrevState;
        let meta = TraceMeta {
            source: "test".into(),
            cpus: 2,
            task_roles: vec!["tbench pid 10".into(), "tbench_srv pid 11".into()],
            locks: Vec::new(),
            track_names: Vec::new(),
        };
        let switch = |prev, next| Event::Switch { prev, next, prev_state: PrevState::Blocked };
        let rec = |ts_ns, ev| Record { ts_ns, cpu: 0, ev };
        let records = vec![
            rec(10, switch(None, Some(0))),
            rec(20, Event::Wakeup { task: 1, waker: Some(0), target: None }),
            rec(30, Event::Exit { task: 0 }),
            rec(40, switch(None, Some(1))),
            rec(50, Event::Wakeup { task: 1, waker: None, target: None }),
        ];
        let mut t = Trace { meta, records, cap: 5, dropped: 0 };
        cut_after_clients(&mut t);
        assert_eq!(t.records.iter().map(|r| r.ts_ns).collect::<Vec<_>>(), [10, 20, 30]);
        assert_eq!(span_ns(&t), 20);
    }

    #[test]
    fn the_recording_replays_as_a_trace_workload() {
        let (t, _) = recording();
        let path = std::env::temp_dir().join(format!("schedlab-tbench-fixture-{}.json", std::process::id()));
        write_trace(&t, &path).unwrap();
        let replay = replay_workload(&path, 700);
        let _ = std::fs::remove_file(&path);
        let (spec, w, s) = replay.unwrap();
        assert!(spec.starts_with("trace:") && spec.ends_with(",mhz=700"), "{spec}");
        // The 7 wake-ups from a workload task are send/receive pairs, the 8 forks
        // spawns; the excerpt ends with every task asleep (its block open: dropped).
        assert_eq!((s.wake_edges, s.sleeps, s.dropped_wakeups, s.forks, s.open_blocks), (7, 0, 0, 8, 10));
        assert_eq!(w.expected_messages, 7);
        let machine = Machine::load("smp-2").unwrap();
        for p in POLICIES {
            let spec = PolicySpec::parse(p).unwrap();
            let (rep, t) = simulate_traced(&machine, &spec, &w, &SimConfig::default(), 100_000).unwrap();
            assert_eq!((rep.messages_sent, rep.messages_received), (7, 7), "{p}");
            assert!(dist::analyze(&t).switches > 0, "{p}");
        }
    }
}
