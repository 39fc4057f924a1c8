//! `schedlab bench`'s run: which rows run, in which order, on which runtimes and
//! peers, and how their repetitions merge. The command line parses the flags, prints
//! what [`run`] reports and maps its outcome to an exit code.
//!
//! Every row is repeated [`Scale::reps`] times in rounds that run every runtime once
//! (A B C A B C …), so a burst of steal time hits all of them alike; the rows measured
//! once (pick-next cost, run-queue walk, the simulator's cache model against
//! cachegrind) follow the rounds.

use crate::row::{aggregate, from_json, label_pin};
use crate::schedlab_exec::SchedlabExec;
use crate::topology::Topology;
use crate::{
    atomic, kthreads, names, pick_cost, programs, rq_walk, runtimes, stalls, units, wake_latency, Filter, Measure, Pin,
    Row, Scale, Stopwatch,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use thiserror::Error;

/// What a run tells its caller while it goes: a step under way (printed indented), or
/// a note about something skipped or failed (printed after the command's name).
#[derive(Clone, Copy, Debug)]
pub enum Say<'a> {
    Progress(&'a str),
    Note(&'a str),
}

/// How `schedlab bench` runs (its flags).
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub quick: bool,
    /// `--only`: a substring of the bench or runtime names.
    pub only: Option<String>,
    /// Whether every runtime's threads are pinned (the rows' `pin`).
    pub pin: Pin,
}

/// What a run measured.
#[derive(Debug)]
pub struct Outcome {
    /// Every row, repetitions merged.
    pub rows: Vec<Row>,
    /// The atomic round trip of this run (the header's hardware limit), when measured.
    pub atomic: Option<Row>,
    /// `fast`'s cross-worker ping-pong ÷ the atomic round trip, round by round (each
    /// round's two measurements paired), when both ran.
    pub fast_cross_ratios: Vec<f64>,
    /// What failed: a peer that could not run, and every row that carries an error.
    pub failures: Vec<String>,
}

/// Run the default set of rows (every runtime in interleaved rounds, then the rows
/// measured once) for `policies` on schedlab's runtime.
pub fn run(opts: &Options, policies: &[String], say: &dyn Fn(Say)) -> Outcome {
    let note = |m: &str| say(Say::Note(m));
    let scale = Scale::new(opts.quick);
    let filter = Filter(opts.only.clone());
    let progress = |what: &str| say(Say::Progress(what));

    // Peers are found (Tokio) or built (Go) once, then run once per round.
    let mut tokio_bin = None;
    if filter.wants_runtime(runtimes::TOKIO) {
        tokio_bin = tokio_peer();
        if tokio_bin.is_none() {
            note(
                "schedlab-peer-tokio not found next to this executable; build it with \
                 `cargo build --release -p schedlab-peer-tokio` (Tokio rows skipped)",
            );
        }
    }
    let mut go_bin = None;
    if filter.wants_runtime(runtimes::GO) {
        match build_go_peer(say) {
            Ok(bin) => go_bin = Some(bin),
            Err(e) => note(&format!("Go peer skipped: {e}")),
        }
    }

    let mut samples: Vec<Row> = Vec::new();
    let mut atomic_rt: Vec<Row> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut fast_cross_ratios: Vec<f64> = Vec::new();
    for round in 0..scale.reps {
        progress(&format!("round {}/{}", round + 1, scale.reps));
        let round_start = samples.len();
        if filter.wants_runtime(runtimes::SCHEDLAB) {
            samples.extend(schedlab_rows(&scale, &filter, opts.quick, opts.pin, policies, say));
        }
        let fast_cross = samples[round_start..]
            .iter()
            .find(|r| {
                r.bench == names::PINGPONG_CROSS
                    && r.runtime == runtimes::SCHEDLAB
                    && r.policy.split_whitespace().next() == Some("fast")
                    && r.error.is_none()
            })
            .map(|r| r.value);
        // Converse PEs and the atomic ping-pong are pinned whatever --pin says.
        samples.extend(converse_rows(&scale, &filter, say));
        // The hardware limit, measured every round for the header even when filtered out.
        match atomic::pingpong_measure(scale.budget) {
            Some(m) => {
                if let Some(f) = fast_cross.filter(|_| m.value > 0.0) {
                    fast_cross_ratios.push(f / m.value);
                }
                let r = Row::measured(
                    names::PINGPONG_CROSS,
                    runtimes::ATOMIC,
                    "2 pinned threads, AtomicU64 spin",
                    units::NS_ROUND_TRIP,
                    "AtomicU64",
                    m,
                );
                if filter.wants(names::PINGPONG_CROSS, runtimes::ATOMIC) {
                    samples.push(r.clone());
                }
                atomic_rt.push(r);
            }
            None if round == 0 => note("atomic ping-pong needs 2 CPUs; skipped"),
            None => {}
        }
        // The machine's own stalls, beside the wake-up tails they bound.
        if [names::MACHINE_STALLS, names::MACHINE_STALL_P50, names::MACHINE_STALL_LOST]
            .iter()
            .any(|b| filter.wants(b, runtimes::MACHINE))
        {
            let st = stalls::measure(scale.budget.max(std::time::Duration::from_millis(200)));
            samples.extend(stalls::rows(&st).into_iter().filter(|r| filter.wants(&r.bench, runtimes::MACHINE)));
        }
        samples.extend(kthread_rows(&scale, &filter, opts.quick, opts.pin, say));
        for (bin, what, dash, process_affinity) in
            [(&mut tokio_bin, "tokio", "--", false), (&mut go_bin, "go", "-", true)]
        {
            if let Some(b) = bin.as_ref() {
                match run_peer(b, what, opts, dash, process_affinity, say) {
                    Ok(rows) => samples.extend(rows),
                    Err(e) => {
                        let e = e.to_string();
                        note(&format!("{e}; its later rounds are skipped"));
                        failures.push(e);
                        *bin = None;
                    }
                }
            }
        }
    }
    label_pin(&mut samples, Pin::All);
    let mut rows = aggregate(samples);
    // Pick-next cost: calibrated per size inside, measured once (not a repetition).
    let mut single = pick_cost::rows(&pick_cost::PickScale::new(opts.quick), &filter, &mut |w: &str| progress(w));
    // Run-queue walk, vanilla vs coloured task blocks: its own interleaved repetitions.
    single.extend(rq_walk::rows(&rq_walk::WalkScale::new(opts.quick), &filter, &mut |w: &str| progress(w)));
    // One pinned worker each, whatever --pin says.
    label_pin(&mut single, Pin::All);
    // The simulator's cache model against cachegrind: deterministic counts, run once,
    // in one unpinned process.
    let mut cache = cache_model_rows(&filter, opts.quick, say);
    label_pin(&mut cache, Pin::None);
    single.extend(cache);
    rows.extend(single);
    failures.extend(row_failures(&rows));
    Outcome { rows, atomic: aggregate(atomic_rt).into_iter().next(), fast_cross_ratios, failures }
}

/// `bench on runtime policy: error` for every row that failed.
pub fn row_failures(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .filter_map(|r| r.error.as_ref().map(|e| format!("{} on {} {}: {e}", r.bench, r.runtime, r.policy)))
        .collect()
}

/// The header of the text table: topology, the atomic limit, what `--pin` did, the
/// repetitions.
pub fn header(topology: &Topology, outcome: &Outcome, opts: &Options) -> String {
    format!(
        "topology: {}\n{}\n{}\n{} repetitions per row{}, runtimes interleaved per round; value = median; \
         cpu = process CPU time per op (same unit; rates: ops per CPU-second)\n",
        topology.line(),
        atomic_line(outcome),
        pin_line(opts.pin),
        Scale::new(opts.quick).reps,
        if opts.quick { " (--quick)" } else { "" },
    )
}

/// The line giving this run's atomic round trip, and `fast`'s cross-worker ping-pong
/// against it round by round (the target of docs/bench.md is ≤ 4×): the atomic
/// reads differ by several per cent from round to round and the VM's regime can change
/// between rounds, so the ratio of two medians taken over different rounds can mislead.
pub fn atomic_line(outcome: &Outcome) -> String {
    let mut line = match &outcome.atomic {
        Some(a) => format!(
            "atomic round trip (2 pinned threads, this run): {:.1} ns [{:.1}..{:.1}] over {} reps",
            a.value, a.min, a.max, a.reps
        ),
        None => "atomic round trip: not measured (needs 2 CPUs)".into(),
    };
    let r = &outcome.fast_cross_ratios;
    if !r.is_empty() {
        let within = r.iter().filter(|&&x| x <= 4.0).count();
        line.push_str(&format!(
            "; fast's pingpong-cross-worker ÷ it, round by round: {}, ≤ 4× in {within} of {}",
            crate::ratio_spread(r),
            r.len()
        ));
    }
    line
}

/// The header line saying what `--pin` did.
pub fn pin_line(pin: Pin) -> String {
    match pin {
        Pin::All => "pin: all (schedlab and tokio workers pinned one per CPU, kernel threads and the go process \
                     on the same 2 CPUs)"
            .into(),
        Pin::None => {
            "pin: none (no runtime sets CPU affinity; atomic, converse, pick-next and rq-walk stay pinned)".into()
        }
    }
}

/// One repetition of the Converse rows: queueing overhead on one PE, ping-pong between
/// two pinned PEs. Their CPU per operation is the call's CPU/wall ratio times the value
/// (setup included; a PE is one pinned thread that spins).
fn converse_rows(scale: &Scale, filter: &Filter, say: &dyn Fn(Say)) -> Vec<Row> {
    let cv = runtimes::CONVERSE;
    let mut rows = Vec::new();
    let scaled = |value: f64, sw: &Stopwatch| {
        let whole = sw.per_op(1);
        Measure { value, cpu_per_op: value * whole.cpu_per_op / whole.value.max(1.0), crossed: None }
    };
    if filter.wants(names::CONVERSE_QUEUEING, cv) {
        let n = scale.converse_messages;
        say(Say::Progress(&format!("converse-queueing on converse ({n} messages)")));
        let sw = Stopwatch::start();
        let (queued, direct) = schedlab_converse::bench_queueing_overhead(n);
        for (policy, v) in [("via scheduler queue", queued), ("direct handler call", direct)] {
            let m = scaled(v, &sw);
            rows.push(Row::measured(names::CONVERSE_QUEUEING, cv, policy, units::NS_MESSAGE, "converse queue", m));
        }
    }
    if filter.wants(names::CONVERSE_PINGPONG, cv) {
        let n = scale.converse_round_trips;
        for (via_queue, policy) in [(false, "handler replies"), (true, "via scheduler queue")] {
            say(Say::Progress(&format!("converse-pingpong on converse, {policy} ({n} round trips)")));
            let sw = Stopwatch::start();
            let m = scaled(schedlab_converse::bench_pingpong(n, via_queue), &sw);
            let policy = format!("2 pinned PEs, {policy}");
            rows.push(Row::measured(names::CONVERSE_PINGPONG, cv, &policy, units::NS_ROUND_TRIP, "converse queue", m));
        }
    }
    rows
}

/// One repetition of the kernel-thread rows: ping-pong on one CPU and across the
/// workers' two, Chat and hackbench with the async programs' sizes on those 2 CPUs,
/// the wake-latency program with threads (its outside-driver rows: the driver is a
/// thread as every task is), and perf's hackbench (when installed).
fn kthread_rows(scale: &Scale, filter: &Filter, quick: bool, pin: Pin, say: &dyn Fn(Say)) -> Vec<Row> {
    let kt = runtimes::KERNEL_THREADS;
    let mut rows = Vec::new();
    let b = scale.budget;
    let ns = units::NS_ROUND_TRIP;
    let rate = units::MESSAGES_PER_S;
    let mut run = |bench: &str, policy: &str, unit: &str, channel: &str, f: &mut dyn FnMut() -> Measure| {
        if filter.wants(bench, kt) {
            say(Say::Progress(&format!("{bench} on {kt} ({policy})")));
            rows.push(programs::measured_row(bench, kt, policy, unit, channel, f));
        }
    };
    let (pinned, on2) = match pin {
        Pin::All => ("threads+pipes (2 pinned)", "threads+pipes (2 CPUs)"),
        Pin::None => ("threads+pipes (unpinned)", "threads+pipes (unpinned)"),
    };
    run(names::PINGPONG_SAME, pinned, ns, "pipe", &mut || kthreads::pingpong_measure(false, b, pin));
    run(names::PINGPONG_CROSS, pinned, ns, "pipe", &mut || kthreads::pingpong_measure(true, b, pin));
    let (cs, hs) = (scale.kthreads_chat, scale.kthreads_hackbench);
    run(names::CHAT, on2, rate, "pipe", &mut || kthreads::chat_measure(cs, pin));
    run(names::HACKBENCH, on2, rate, "pipe", &mut || kthreads::hackbench_measure(hs, pin));
    if filter.wants(names::HACKBENCH, kt) {
        say(Say::Progress(&format!("hackbench on kernel-threads (perf {})", kthreads::perf_args(hs).join(" "))));
        match kthreads::perf_messaging_measure(hs) {
            Ok(m) => rows.push(Row::measured(
                names::HACKBENCH,
                kt,
                "perf bench sched messaging -t -p (100 B, all CPUs)",
                rate,
                "pipe",
                m,
            )),
            Err(e) => say(Say::Note(&format!("perf bench sched messaging skipped: {e}"))),
        }
    }
    if names::WAKE_LATENCY.iter().any(|b| filter.wants(b, kt)) {
        let ws = wake_latency::WakeScale::new(quick);
        let hogs = ws.hogs_per_worker * kthreads::worker_cpus().len().max(1);
        say(Say::Progress(&format!(
            "wake-latency on {kt} ({hogs} hog threads of {:?} chunks and sched_yield, a probe every {:?} for {:?}; \
             driver: a thread on the kernel's timer)",
            ws.chunk, ws.period, ws.duration
        )));
        let r = kthreads::wake_latency(&ws, pin);
        let config = format!("{on2}, {} hogs, {} probes; the kernel preempts", r.hogs, r.ran);
        rows.extend(r.rows(kt, &config, filter));
    }
    // perf sets no affinity: its row is unpinned whatever --pin says.
    for r in rows.iter_mut().filter(|r| r.policy.starts_with("perf ")) {
        r.pin = Pin::None.label().into();
    }
    label_pin(&mut rows, pin);
    rows
}

/// One repetition of the async programs on schedlab's runtime (2 workers, pinned
/// under [`Pin::All`]) for every policy.
fn schedlab_rows(
    scale: &Scale,
    filter: &Filter,
    quick: bool,
    pin: Pin,
    policies: &[String],
    say: &dyn Fn(Say),
) -> Vec<Row> {
    let mut rows = Vec::new();
    for policy in policies {
        match SchedlabExec::with_pin(2, policy, pin) {
            Ok(e) => {
                rows.extend(programs::suite(&e, scale, filter, &mut |w: &str| say(Say::Progress(w))));
                let ws = wake_latency::WakeScale::new(quick);
                rows.extend(wake_latency::rows(&e, 2, &ws, filter, &mut |w: &str| say(Say::Progress(w))));
                e.shutdown();
            }
            Err(err) => say(Say::Note(&format!("schedlab runtime, policy {policy}: {err}; skipped"))),
        }
    }
    label_pin(&mut rows, pin);
    rows
}

/// [`names::CACHE_MODEL`] rows: `schedlab cachecheck`'s comparison (`schedlab_sim::cachecheck`) on the walks whose
/// equation-3 effect the experiments show: the paper's 512 KB L2 at 32-byte lines
/// walked over more runnable tasks than its sets have ways, vanilla and coloured, and
/// a random visiting order on this machine's 64-byte lines. Counts are deterministic,
/// so each runs once; without valgrind the rows are skipped with a note.
fn cache_model_rows(filter: &Filter, quick: bool, say: &dyn Fn(Say)) -> Vec<Row> {
    use schedlab_sim::cachecheck::{compare, CacheCheckError, Order, Walk, TOLERANCE};
    let (bench, rt) = (names::CACHE_MODEL, runtimes::SIM);
    if !filter.wants(bench, rt) {
        return Vec::new();
    }
    let (tasks, reps) = if quick { (300, 2) } else { (1024, 4) };
    let walk = |l2_kb: u64, assoc, line, colours, order| Walk {
        l2_bytes: l2_kb * 1024,
        assoc,
        line,
        tasks,
        colours,
        reps,
        order,
        seed: 1,
    };
    let walks = [
        walk(512, 4, 32, 1, Order::Seq),
        walk(512, 4, 32, 32, Order::Seq),
        walk(512, 8, 64, 1, Order::Random),
        walk(512, 8, 64, 16, Order::Random),
    ];
    let mut rows = Vec::new();
    for w in walks {
        let policy = format!(
            "{} tasks × {} {}, colours={}, L2 {} KB {}-way {} B",
            w.tasks,
            w.reps,
            w.order.name(),
            w.colours,
            w.l2_bytes / 1024,
            w.assoc,
            w.line
        );
        say(Say::Progress(&format!("{bench}: {policy}")));
        let unit = units::MODEL_OVER_CACHEGRIND;
        match compare(&w, None) {
            Ok(c) => {
                let value = if c.cg_misses == 0 { f64::NAN } else { c.model_misses as f64 / c.cg_misses as f64 };
                let policy = format!("{policy}: {} vs {} misses", c.model_misses, c.cg_misses);
                let row = Row::new(bench, rt, &policy, value, unit);
                rows.push(if c.rel_diff() <= TOLERANCE {
                    row
                } else {
                    Row::failed(
                        bench,
                        rt,
                        &policy,
                        unit,
                        crate::row::NO_CHANNEL,
                        format!(
                            "model and cachegrind differ by {:.2} % (> {:.0} %)",
                            c.rel_diff() * 100.0,
                            TOLERANCE * 100.0
                        ),
                    )
                });
            }
            Err(CacheCheckError::BadWalk(msg)) => {
                rows.push(Row::failed(bench, rt, &policy, unit, crate::row::NO_CHANNEL, msg))
            }
            // Valgrind missing or unusable: nothing measured, nothing failed.
            Err(e) => {
                say(Say::Note(&format!("{bench} rows skipped: {e}")));
                return rows;
            }
        }
    }
    rows
}

/// `schedlab-peer-tokio` next to the running executable (same target directory).
pub fn tokio_peer() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let name = format!("schedlab-peer-tokio{}", std::env::consts::EXE_SUFFIX);
    // Test binaries live one level down, in deps/.
    [dir.join(&name), dir.parent()?.join(&name)].into_iter().find(|p| p.is_file())
}

/// Why a peer (Tokio or Go) is missing from a run.
#[derive(Debug, Error)]
pub enum PeerError {
    #[error("peers/go not found (run from the repository root)")]
    NoGoSource,
    #[error("`go` not runnable ({0}); install Go to compare with it")]
    NoGo(std::io::Error),
    #[error("go build failed ({0})")]
    GoBuild(std::process::ExitStatus),
    #[error("{what} peer {bin}: {source}")]
    Spawn { what: String, bin: String, source: std::io::Error },
    #[error("{what} peer failed ({status}); its rows are missing")]
    Failed { what: String, status: std::process::ExitStatus },
    #[error("{what} peer: {msg}")]
    BadRows { what: String, msg: String },
    #[error("{what} peer: row {bench} says pin {got:?}, asked for {asked:?}")]
    WrongPin { what: String, bench: String, got: String, asked: String },
}

/// The repository root: the current directory if it has `peers/go`, else the source
/// tree this crate was built from.
fn repo_root() -> Option<PathBuf> {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    [PathBuf::from("."), built].into_iter().find(|d| d.join("peers/go/main.go").is_file())
}

/// `go build -o target/peers/schedlab-peer-go ./peers/go`, from the repository root.
fn build_go_peer(say: &dyn Fn(Say)) -> Result<PathBuf, PeerError> {
    let root = repo_root().ok_or(PeerError::NoGoSource)?;
    let out = root.join("target/peers/schedlab-peer-go");
    say(Say::Progress("go build -o target/peers/schedlab-peer-go ./peers/go"));
    let status = Command::new("go")
        .args(["build", "-o", "../../target/peers/schedlab-peer-go", "."])
        .current_dir(root.join("peers/go"))
        .stdout(Stdio::null())
        .status()
        .map_err(PeerError::NoGo)?;
    if !status.success() {
        return Err(PeerError::GoBuild(status));
    }
    Ok(out)
}

/// Run a peer binary once (one repetition; `--quick`/`--only`/`--pin` spelled with
/// `dash`) and parse its JSON rows; an error if it could not run, failed, or labelled a
/// row with another `pin` than asked. With `process_affinity` and [`Pin::All`], the
/// peer's whole process is restricted to the workers' 2 CPUs before it starts (Go:
/// its threads cannot be pinned one by one from Go).
fn run_peer(
    bin: &Path,
    what: &str,
    opts: &Options,
    dash: &str,
    process_affinity: bool,
    say: &dyn Fn(Say),
) -> Result<Vec<Row>, PeerError> {
    let mut cmd = Command::new(bin);
    if opts.quick {
        cmd.arg(format!("{dash}quick"));
    }
    if let Some(o) = &opts.only {
        cmd.arg(format!("{dash}only")).arg(o);
    }
    cmd.arg(format!("{dash}pin")).arg(opts.pin.label());
    if process_affinity && opts.pin.pinned() {
        kthreads::restrict_command(&mut cmd, kthreads::worker_cpus());
    }
    say(Say::Progress(&format!("running the {what} peer: {}", bin.display())));
    let out = cmd.stderr(Stdio::inherit()).output().map_err(|source| PeerError::Spawn {
        what: what.into(),
        bin: bin.display().to_string(),
        source,
    })?;
    if !out.status.success() {
        return Err(PeerError::Failed { what: what.into(), status: out.status });
    }
    let rows = from_json(&String::from_utf8_lossy(&out.stdout))
        .map_err(|e| PeerError::BadRows { what: what.into(), msg: e.to_string() })?;
    match rows.iter().find(|r| r.pin != opts.pin.label()) {
        Some(r) => Err(PeerError::WrongPin {
            what: what.into(),
            bench: r.bench.clone(),
            got: r.pin.clone(),
            asked: opts.pin.label().into(),
        }),
        None => Ok(rows),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_atomic_line_pairs_fast_with_the_atomic_round_by_round() {
        let outcome = Outcome { rows: vec![], atomic: None, fast_cross_ratios: vec![3.9, 4.2, 3.7], failures: vec![] };
        let line = atomic_line(&outcome);
        assert!(line.contains("round by round: 3.90× [3.70..4.20], ≤ 4× in 2 of 3"), "{line}");
        let none = Outcome { fast_cross_ratios: vec![], ..outcome };
        assert!(!atomic_line(&none).contains("round by round"));
    }
}
