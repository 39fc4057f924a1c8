//! # schedlab-kernelcheck: the simulator checked against this machine's kernel
//!
//! Real workloads run under the Linux kernel's own scheduler, recorded with
//! `perf sched record` and read back with `perf sched script` ([`perf`], [`parse`]):
//! `perf bench sched messaging` (threads or processes, pipes or sockets), `perf bench
//! sched pipe`, and schedlab's kernel-thread Chat and hackbench (`schedlab_bench::kthreads`,
//! run as a child process: [`kthread`]). The same workloads then run on the simulator
//! under `eevdf` and `cfs` on the host machine, and one analysis
//! (`schedlab_validate::dist::analyze`) reads both sides' traces: context switches,
//! migrations, wake-to-run latency and run length. Nothing is fitted to make them
//! agree. `docs/kernelcheck.md` says how each quantity is computed on each side.

mod error;
pub mod kthread;
pub mod parse;
pub mod perf;
pub mod tbench;

pub use error::Error;

use schedlab_core::PolicySpec;
use schedlab_sim::{simulate_traced, Machine, SimConfig};
use schedlab_validate::dist::{self, Dist};
use schedlab_workloads::parse_workload;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// The simulator's policies compared with the kernel: its fair class now (EEVDF, 6.6
/// on) and before (CFS).
pub const POLICIES: [&str; 2] = ["eevdf", "cfs"];

/// Records the simulator's trace of one row may keep (40 bytes each: at most 320 MB):
/// cfs's full-size messaging row records about 2 M, its ping-pong 2.4 M.
pub const SIM_TRACE_CAP: usize = 8_000_000;

/// Senders and receivers per group of `perf bench sched messaging` (fixed there).
pub const MESSAGING_FDS: u32 = 20;

/// One workload: the kernel's command, the name its tasks carry, and the simulator's
/// equivalent.
#[derive(Clone, Debug)]
pub struct RowDef {
    /// Short name, e.g. `messaging threads pipes`.
    pub name: String,
    /// The command, run once alone and once under `perf sched record`.
    pub argv: Vec<String>,
    /// The workload's tasks in the trace: those with this command name.
    pub comm: String,
    /// Units of work (messages, round trips) the throughput counts.
    pub units: u64,
    pub unit: String,
    /// The simulator's workload spec.
    pub sim_workload: String,
    /// How the two sides differ, where they do.
    pub notes: Vec<String>,
}

/// The rows of a run: `quick` for CI, else the documented size.
pub fn rows(quick: bool, self_exe: &std::path::Path) -> Vec<RowDef> {
    let (groups, loops, pipe_loops) = if quick { (2u32, 100u32, 10_000u32) } else { (10, 100, 100_000) };
    // Chat and hackbench at `schedlab bench --quick`'s kernel-thread sizes for the full
    // run, smaller for the quick one: their traces are read whole.
    let (chat, hack) =
        if quick { ((1usize, 20usize, 20usize), (1usize, 20usize, 50usize)) } else { ((2, 20, 50), (2, 20, 50)) };
    let mut v = Vec::new();
    for (threads, pipes) in [(true, true), (true, false), (false, true), (false, false)] {
        let mut argv: Vec<String> = ["perf", "bench", "sched", "messaging"].map(String::from).to_vec();
        if threads {
            argv.push("-t".into());
        }
        if pipes {
            argv.push("-p".into());
        }
        argv.extend(["-g".into(), groups.to_string(), "-l".into(), loops.to_string()]);
        v.push(RowDef {
            name: format!(
                "messaging {} {}",
                if threads { "threads" } else { "processes" },
                if pipes { "pipes" } else { "sockets" }
            ),
            argv,
            comm: "sched-messaging".into(),
            units: u64::from(groups * MESSAGING_FDS * MESSAGING_FDS * loops),
            unit: "messages/s".into(),
            sim_workload: format!(
                "hackbench:groups={groups},loops={loops},threads={}{}",
                u32::from(threads),
                if pipes { ",channel=pipe" } else { "" }
            ),
            notes: vec![
                "both hold every task at a start barrier; perf releases them with one write to a wake fd, the simulator's parent (SCHED_FIFO) with one message each"
                    .into(),
            ],
        });
    }
    v.push(RowDef {
        name: "pipe".into(),
        argv: ["perf", "bench", "sched", "pipe", "-l"]
            .map(String::from)
            .into_iter()
            .chain([pipe_loops.to_string()])
            .collect(),
        comm: "sched-pipe".into(),
        units: u64::from(pipe_loops),
        unit: "round trips/s".into(),
        sim_workload: format!("pingpong:rounds={pipe_loops},bytes=4"),
        notes: vec!["the same shape: two processes, one 4-byte int each way through two pipes, blocking reads".into()],
    });
    let exe = self_exe.to_string_lossy().to_string();
    let child = |program: &str, (a, b, c): (usize, usize, usize)| {
        [exe.clone(), "kernelcheck-kthread".into()].into_iter().chain(kthread::args(program, a, b, c)).collect()
    };
    v.push(RowDef {
        name: "kthreads chat".into(),
        argv: child("chat", chat),
        comm: kthread::comm("chat"),
        units: (chat.0 * chat.1 * chat.2 * (chat.1 - 1)) as u64,
        unit: "deliveries/s".into(),
        sim_workload: format!("chat:rooms={},users={},messages={},bytes=8", chat.0, chat.1, chat.2),
        notes: vec![
            "kernel: one process of threads and pipes; simulator: Chat's client and server processes".into(),
            "simulator: server_send computes Chat's default 300 cycles per message".into(),
            "simulator: Chat's connections are loopback TCP, which on Linux 6 hold far more than the kernel threads' pipes (8,192 messages of 8 bytes)".into(),
        ],
    });
    v.push(RowDef {
        name: "kthreads hackbench".into(),
        argv: child("hackbench", hack),
        comm: kthread::comm("hackbench"),
        units: (hack.0 * hack.1 * hack.1 * hack.2) as u64,
        unit: "messages/s".into(),
        sim_workload: format!(
            "hackbench:groups={},loops={},fds={},bytes=8,threads=1,channel=pipe",
            hack.0, hack.2, hack.1
        ),
        notes: vec!["the same shape: threads of one process, one pipe per receiver, 8-byte messages".into()],
    });
    v
}

/// How the host machine is chosen.
#[derive(Clone, Debug)]
pub enum MachineChoice {
    /// A machine file or preset (`schedlab validate --machine-out FILE`).
    Given(String),
    /// `schedlab validate --quick`'s calibration of this machine, or `smp-N` if it fails.
    Calibrate,
}

/// The machine, loaded (a file or preset) before any work.
pub fn load_machine(arg: &str) -> Result<Machine, Error> {
    Machine::load(arg).map_err(|e| Error::Machine(format!("--machine {arg}: {}", e.0)))
}

/// The host machine and a sentence saying which it is.
pub fn host_machine(choice: &MachineChoice) -> Result<(Machine, String), Error> {
    match choice {
        MachineChoice::Given(arg) => Ok((load_machine(arg)?, format!("{arg} (given with --machine)"))),
        MachineChoice::Calibrate => {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            match schedlab_validate::calibrate(cpus, true) {
                Ok(cal) => {
                    let m = cal.machine();
                    let d = format!("{} (quick calibration of this machine, as `schedlab validate --quick`)", m.name);
                    Ok((m, d))
                }
                Err(e) => {
                    let name = format!("smp-{cpus}");
                    let m = load_machine(&name)?;
                    Ok((m, format!("{name} preset (the quick calibration failed: {e})")))
                }
            }
        }
    }
}

/// The wake-up and run-length quantiles of one engine's trace, µs (0.1); None
/// without a sample. Flattened into the rows of both reports ([`Side`],
/// [`tbench::EngineRow`]): their JSON has the three fields in place.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Latencies {
    pub wake_p50_us: Option<f64>,
    pub wake_p99_us: Option<f64>,
    pub run_p50_us: Option<f64>,
}

impl Latencies {
    /// `d`'s wake-to-run p50 and p99 and run-length p50, ns to µs (0.1).
    pub fn of(d: &Dist) -> Latencies {
        let us = |ns: Option<u64>| ns.map(|v| (v as f64 / 100.0).round() / 10.0);
        Latencies {
            wake_p50_us: us(d.wake_to_run_p50_ns),
            wake_p99_us: us(d.wake_to_run_p99_ns),
            run_p50_us: us(d.run_len_p50_ns),
        }
    }
}

/// One engine's figures for one row, rounded as printed (ratios are taken of these).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Side {
    /// `kernel`, `sim eevdf`, `sim cfs`.
    pub engine: String,
    /// Units per second, rounded to a whole unit.
    pub throughput: f64,
    /// The units' time, ms (0.01).
    pub elapsed_ms: f64,
    pub context_switches: u64,
    pub migrations: u64,
    #[serde(flatten)]
    pub latencies: Latencies,
    /// Simulator events past [`SIM_TRACE_CAP`]: the distributions then cover the
    /// run's beginning only (0 for the kernel, whose recording is read whole).
    pub trace_dropped: u64,
}

impl Side {
    fn new(engine: &str, units: u64, elapsed_s: f64, d: &Dist) -> Side {
        Side {
            engine: engine.to_string(),
            throughput: (units as f64 / elapsed_s.max(1e-12)).round(),
            elapsed_ms: (elapsed_s * 1e5).round() / 100.0,
            context_switches: d.switches,
            migrations: d.migrations,
            latencies: Latencies::of(d),
            trace_dropped: d.dropped,
        }
    }
}

/// A simulated side over the kernel's, column by column (None where the kernel's is 0
/// or either is missing), to 0.001.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Ratios {
    pub engine: String,
    pub throughput: Option<f64>,
    pub elapsed_ms: Option<f64>,
    pub context_switches: Option<f64>,
    pub migrations: Option<f64>,
    pub wake_p50_us: Option<f64>,
    pub wake_p99_us: Option<f64>,
    pub run_p50_us: Option<f64>,
}

fn ratio(s: Option<f64>, k: Option<f64>) -> Option<f64> {
    match (s, k) {
        (Some(s), Some(k)) if k > 0.0 => Some((s / k * 1000.0).round() / 1000.0),
        _ => None,
    }
}

impl Ratios {
    fn new(s: &Side, k: &Side) -> Ratios {
        let c = |v: u64| Some(v as f64);
        Ratios {
            engine: format!("{}/kernel", s.engine.trim_start_matches("sim ")),
            throughput: ratio(Some(s.throughput), Some(k.throughput)),
            elapsed_ms: ratio(Some(s.elapsed_ms), Some(k.elapsed_ms)),
            context_switches: ratio(c(s.context_switches), c(k.context_switches)),
            migrations: ratio(c(s.migrations), c(k.migrations)),
            wake_p50_us: ratio(s.latencies.wake_p50_us, k.latencies.wake_p50_us),
            wake_p99_us: ratio(s.latencies.wake_p99_us, k.latencies.wake_p99_us),
            run_p50_us: ratio(s.latencies.run_p50_us, k.latencies.run_p50_us),
        }
    }
}

/// One workload on the kernel and on the simulator.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RowResult {
    pub workload: String,
    pub kernel_command: String,
    pub sim_workload: String,
    pub unit: String,
    pub units: u64,
    /// The kernel's side: throughput of the untraced run, the rest from the traced one.
    pub kernel: Side,
    /// Throughput of the traced run (the recording's own cost is in it).
    pub kernel_traced_throughput: f64,
    /// Tasks of the workload in the recording.
    pub kernel_tasks: u64,
    /// The simulator's sides, in [`POLICIES`] order.
    pub sim: Vec<Side>,
    pub ratios: Vec<Ratios>,
    pub notes: Vec<String>,
}

/// What a run ran on, for both reports (`kernelcheck` and `--tbench`): their JSON has
/// these fields first, in this order.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunHeader {
    pub kernel_release: String,
    pub sched_features: String,
    pub perf: String,
    /// `/proc/loadavg`'s 1, 5 and 15 minute figures before and after the run: other
    /// processes on these CPUs are in the kernel's figures.
    pub load_before: String,
    pub load_after: String,
    /// The simulated machine.
    pub machine: String,
    pub cpus: usize,
    /// `quick` or `full`.
    pub size: String,
}

impl RunHeader {
    /// At the run's start: the kernel, its features and the load now.
    pub fn start(perf: &str, machine: &str, cpus: usize, quick: bool) -> RunHeader {
        let release = kernel_release();
        RunHeader {
            sched_features: sched_features(&release),
            kernel_release: release,
            perf: perf.to_string(),
            load_before: load_average(),
            load_after: String::new(),
            machine: machine.to_string(),
            cpus,
            size: if quick { "quick" } else { "full" }.into(),
        }
    }

    /// At the run's end: the load then.
    pub fn finish(mut self) -> RunHeader {
        self.load_after = load_average();
        self
    }
}

/// The whole check.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    #[serde(flatten)]
    pub header: RunHeader,
    pub rows: Vec<RowResult>,
}

/// `uname -r`.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map_or_else(|_| "unknown".into(), |s| s.trim().to_string())
}

/// The fair class's features when debugfs lets us read them, else what is assumed.
pub fn sched_features(release: &str) -> String {
    match std::fs::read_to_string("/sys/kernel/debug/sched/features") {
        Ok(s) if !s.trim().is_empty() => s.trim().to_string(),
        _ => {
            let version: Vec<&str> = release.split(|c: char| !c.is_ascii_digit()).take(2).collect();
            format!("{} defaults assumed (sched/features not readable)", version.join("."))
        }
    }
}

/// `/proc/loadavg`'s three load averages.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map_or_else(|_| "unknown".into(), |s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// The settings of one run.
pub struct Options {
    pub quick: bool,
    /// This program, for the kernel-thread child (`kernelcheck-kthread`).
    pub self_exe: PathBuf,
    /// `perf --version`, from [`perf::check`].
    pub perf: String,
    pub machine: Machine,
    pub machine_desc: String,
    /// Progress lines go here (stderr).
    pub progress: fn(&str),
}

fn total_secs(stdout: &str, what: &str) -> Result<f64, String> {
    schedlab_bench::kthreads::parse_perf_total(stdout).ok_or_else(|| format!("{what}: no 'Total time' in its output"))
}

/// Run every row on the kernel, then on the simulator under each of [`POLICIES`].
pub fn run(o: &Options) -> Result<Report, Error> {
    let limit = Duration::from_secs(if o.quick { 60 } else { 180 });
    let header = RunHeader::start(&o.perf, &o.machine_desc, o.machine.cpus, o.quick);
    let mut out = Vec::new();
    for r in rows(o.quick, &o.self_exe) {
        // The command as printed: the program by its file name (no local paths).
        let program =
            std::path::Path::new(&r.argv[0]).file_name().map_or(r.argv[0].clone(), |f| f.to_string_lossy().into());
        let cmd = std::iter::once(program).chain(r.argv[1..].iter().cloned()).collect::<Vec<_>>().join(" ");
        (o.progress)(&format!("{}: kernel ({cmd})", r.name));
        let plain = perf::plain(&r.argv, limit)?;
        let secs = total_secs(&plain, &cmd)?;
        let data = perf::TempFile(perf::temp_data());
        let traced = perf::record(&data.0, &r.argv, limit)?;
        let traced_secs = total_secs(&traced, &cmd)?;
        let (trace, counts) = perf::script(&data.0, &[r.comm.as_str()], limit)?;
        drop(data);
        if counts.tasks == 0 {
            return Err(Error::Run(format!("{}: no task named {} in the recording", r.name, r.comm)));
        }
        let kdist = dist::analyze(&trace);
        let kernel = Side::new("kernel", r.units, secs, &kdist);
        let w = parse_workload(&r.sim_workload).map_err(|e| format!("{}: {e}", r.sim_workload))?;
        let mut sim = Vec::new();
        for p in POLICIES {
            (o.progress)(&format!("{}: simulator, {p} ({})", r.name, r.sim_workload));
            let spec = PolicySpec::parse(p).map_err(|e| e.to_string())?;
            let cfg = SimConfig::default();
            let (rep, t) = simulate_traced(&o.machine, &spec, &w, &cfg, SIM_TRACE_CAP)
                .map_err(|e| format!("sim {p} {}: {e}", r.sim_workload))?;
            let d = dist::analyze(&t);
            // Timed as the kernel's side is: from the release of the start barrier
            // (perf's and the kernel threads' clocks start there), not from the fork.
            let measured_ns = rep.virtual_ns - rep.clock_start_ns;
            sim.push(Side::new(&format!("sim {p}"), r.units, measured_ns as f64 / 1e9, &d));
        }
        let ratios = sim.iter().map(|s| Ratios::new(s, &kernel)).collect();
        out.push(RowResult {
            workload: r.name,
            kernel_command: cmd,
            sim_workload: r.sim_workload,
            unit: r.unit,
            units: r.units,
            kernel,
            kernel_traced_throughput: (r.units as f64 / traced_secs).round(),
            kernel_tasks: counts.tasks,
            sim,
            ratios,
            notes: r.notes,
        });
    }
    Ok(Report { header: header.finish(), rows: out })
}

/// The column headers of [`render`]'s tables, in order.
pub const COLUMNS: [&str; 8] =
    ["throughput", "elapsed_ms", "switches", "migrations", "wake_p50_us", "wake_p99_us", "run_p50_us", ""];

/// The report as text: per workload, the kernel's line, each policy's, and their
/// ratios to the kernel's.
pub fn render(rep: &Report) -> String {
    let r = &rep.header;
    let mut s = String::new();
    s += "schedlab kernelcheck: the simulator against this machine's kernel\n";
    s += &format!("kernel: Linux {}; scheduler features: {}\n", r.kernel_release, r.sched_features);
    s += &format!("perf: {}\n", r.perf);
    s += &format!("machine: {}, {} CPUs\n", r.machine, r.cpus);
    s += &format!("size: {}\n", r.size);
    s += &format!(
        "load average: {} before, {} after (other processes' time is in the kernel's figures)\n",
        r.load_before, r.load_after
    );
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |v| format!("{v:.p$}"));
    for row in &rep.rows {
        s += &format!("\n{} [{}]\n", row.workload, row.unit);
        s += &format!("  kernel: {}  ({} tasks traced)\n", row.kernel_command, row.kernel_tasks);
        s += &format!("  sim:    {}\n", row.sim_workload);
        for n in &row.notes {
            s += &format!("  note:   {n}\n");
        }
        s += &format!(
            "  {:<16} {:>12} {:>11} {:>9} {:>10} {:>11} {:>11} {:>10}\n",
            "engine", COLUMNS[0], COLUMNS[1], COLUMNS[2], COLUMNS[3], COLUMNS[4], COLUMNS[5], COLUMNS[6]
        );
        for side in std::iter::once(&row.kernel).chain(&row.sim) {
            s += &format!(
                "  {:<16} {:>12.0} {:>11.2} {:>9} {:>10} {:>11} {:>11} {:>10}\n",
                side.engine,
                side.throughput,
                side.elapsed_ms,
                side.context_switches,
                side.migrations,
                opt(side.latencies.wake_p50_us, 1),
                opt(side.latencies.wake_p99_us, 1),
                opt(side.latencies.run_p50_us, 1)
            );
        }
        for q in &row.ratios {
            s += &format!(
                "  {:<16} {:>12} {:>11} {:>9} {:>10} {:>11} {:>11} {:>10}\n",
                q.engine,
                opt(q.throughput, 2),
                opt(q.elapsed_ms, 2),
                opt(q.context_switches, 2),
                opt(q.migrations, 2),
                opt(q.wake_p50_us, 2),
                opt(q.wake_p99_us, 2),
                opt(q.run_p50_us, 2)
            );
        }
        s += &format!("  kernel throughput while traced: {:.0}\n", row.kernel_traced_throughput);
        for side in row.sim.iter().filter(|s| s.trace_dropped > 0) {
            s += &format!(
                "  {}: trace capped ({} events dropped): its distributions cover the run's beginning\n",
                side.engine, side.trace_dropped
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_map_perf_bench_to_workloads() {
        let rows = rows(true, std::path::Path::new("/bin/schedlab"));
        assert_eq!(rows.len(), 7);
        for r in &rows {
            parse_workload(&r.sim_workload).unwrap_or_else(|e| panic!("{}: {e}", r.sim_workload));
            let w = parse_workload(&r.sim_workload).unwrap();
            // The simulator's counted units are the kernel's, except Chat's (sent +
            // received, where the kernel threads count deliveries).
            // A hackbench child's ready byte and release are not counted.
            let start = if r.sim_workload.starts_with("hackbench") { 2 * (w.expected_tasks - 1) } else { 0 };
            if !r.name.contains("chat") {
                assert_eq!((w.expected_messages - start) / if r.name == "pipe" { 2 } else { 1 }, r.units, "{}", r.name);
            }
        }
        assert_eq!(rows[0].argv.join(" "), "perf bench sched messaging -t -p -g 2 -l 100");
        assert_eq!(rows[0].sim_workload, "hackbench:groups=2,loops=100,threads=1,channel=pipe");
        assert_eq!(rows[3].sim_workload, "hackbench:groups=2,loops=100,threads=0");
        assert_eq!(rows[4].argv.join(" "), "perf bench sched pipe -l 10000");
        assert_eq!(rows[5].argv[..3].join(" "), "/bin/schedlab kernelcheck-kthread chat");
    }

    #[test]
    fn ratios_are_of_the_rounded_figures() {
        let d = Dist {
            switches: 10,
            migrations: 0,
            wakeups: 5,
            wake_to_run_p50_ns: Some(1_234),
            wake_to_run_p99_ns: None,
            run_len_p50_ns: Some(5_000),
            dropped: 0,
            classes: Vec::new(),
        };
        let k = Side::new("kernel", 1000, 0.5, &d);
        assert_eq!((k.throughput, k.elapsed_ms, k.latencies.wake_p50_us), (2000.0, 500.0, Some(1.2)));
        let s = Side::new("sim eevdf", 1000, 0.25, &Dist { migrations: 3, ..d });
        let q = Ratios::new(&s, &k);
        assert_eq!(q.engine, "eevdf/kernel");
        assert_eq!((q.throughput, q.migrations, q.wake_p99_us, q.run_p50_us), (Some(2.0), None, None, Some(1.0)));
    }

    /// The flattened [`Latencies`] keep the rows' JSON fields where they are printed.
    #[test]
    fn row_json_keeps_the_latencies_in_place() {
        let d = Dist {
            switches: 10,
            migrations: 2,
            wakeups: 5,
            wake_to_run_p50_ns: Some(1_234),
            wake_to_run_p99_ns: None,
            run_len_p50_ns: Some(56_789),
            dropped: 7,
            classes: Vec::new(),
        };
        let side = serde_json::to_string(&Side::new("kernel", 1000, 0.5, &d)).unwrap();
        assert_eq!(
            side,
            r#"{"engine":"kernel","throughput":2000.0,"elapsed_ms":500.0,"context_switches":10,"migrations":2,"wake_p50_us":1.2,"wake_p99_us":null,"run_p50_us":56.8,"trace_dropped":7}"#
        );
        let row =
            serde_json::to_string(&tbench::EngineRow::new("kernel", "Linux x", 123.456, 987_654_321, &d)).unwrap();
        assert_eq!(
            row,
            r#"{"engine":"kernel","policy":"Linux x","mb_per_s":123.5,"wakeups_per_s":5.0,"switches_per_s":10.0,"migrations_per_s":2.0,"wake_p50_us":1.2,"wake_p99_us":null,"run_p50_us":56.8,"span_ms":987.65,"trace_dropped":7,"error":null}"#
        );
    }

    #[test]
    fn features_are_assumed_when_unreadable() {
        if std::fs::read_to_string("/sys/kernel/debug/sched/features").is_err() {
            assert_eq!(sched_features("6.18.44-fc-v657"), "6.18 defaults assumed (sched/features not readable)");
        }
    }
}
