//! `schedlab bench`: real-machine benchmarks of schedlab's runtime beside Tokio, Go,
//! kernel threads and the raw atomic limit (see `crates/bench`).

use schedlab_bench::row::{aggregate, from_json, label_pin, to_json};
use schedlab_bench::schedlab_exec::SchedlabExec;
use schedlab_bench::topology::Topology;
use schedlab_bench::{
    atomic, kthreads, names, pick_cost, programs, render_text, rq_walk, runtimes, units, wake_latency, Filter, Measure,
    Pin, Row, Scale, Stopwatch,
};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// Options of `schedlab bench`.
pub struct BenchOpts {
    pub quick: bool,
    pub json: bool,
    pub only: Option<String>,
    /// Whether every runtime's threads are pinned (the rows' `pin`).
    pub pin: Pin,
    /// The server rows instead of the default set (`schedlab_bench::servers`, HTTP, and
    /// `schedlab_bench::netbench`, tbench).
    pub servers: bool,
}

fn note(msg: &str) {
    eprintln!("schedlab bench: {msg}");
}

pub fn bench(opts: BenchOpts) -> ExitCode {
    if opts.servers {
        return servers(&opts);
    }
    let scale = Scale::new(opts.quick);
    let filter = Filter(opts.only.clone());
    if opts.only.is_some() && names::HTTP.iter().chain(names::TBENCH).any(|b| filter.wants(b, "")) {
        note("the http-* and tbench-* (server) rows run only with --servers");
    }
    let began = Instant::now();
    let topology = Topology::detect();
    eprintln!("schedlab bench: topology: {}", topology.line());
    let progress = |what: &str| eprintln!("  {what}");

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
        match build_go_peer() {
            Ok(bin) => go_bin = Some(bin),
            Err(e) => note(&format!("Go peer skipped: {e}")),
        }
    }

    // Every row is repeated `scale.reps` times, in rounds that run every runtime once
    // (A B C A B C …), so a burst of steal time hits all of them alike.
    let mut samples: Vec<Row> = Vec::new();
    let mut atomic_rt: Vec<Row> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    for round in 0..scale.reps {
        progress(&format!("round {}/{}", round + 1, scale.reps));
        if filter.wants_runtime(runtimes::SCHEDLAB) {
            samples.extend(schedlab_rows(&scale, &filter, opts.quick, opts.pin));
        }
        // Converse PEs and the atomic ping-pong are pinned whatever --pin says.
        samples.extend(converse_rows(&scale, &filter));
        // The hardware limit, measured every round for the header even when filtered out.
        match atomic::pingpong_measure(scale.budget) {
            Some(m) => {
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
        samples.extend(kthread_rows(&scale, &filter, opts.pin));
        for (bin, what, dash, process_affinity) in
            [(&mut tokio_bin, "tokio", "--", false), (&mut go_bin, "go", "-", true)]
        {
            if let Some(b) = bin.as_ref() {
                match run_peer(b, what, &opts, dash, process_affinity) {
                    Ok(rows) => samples.extend(rows),
                    Err(e) => {
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
    let mut cache = cache_model_rows(&filter, opts.quick, &mut |w: &str| progress(w));
    label_pin(&mut cache, Pin::None);
    single.extend(cache);
    rows.extend(single);
    failures.extend(
        rows.iter().filter_map(|r| r.error.as_ref().map(|e| format!("{} on {} {}: {e}", r.bench, r.runtime, r.policy))),
    );

    let atomic_line = match aggregate(atomic_rt).first() {
        Some(a) => format!(
            "atomic round trip (2 pinned threads, this run): {:.1} ns [{:.1}..{:.1}] over {} reps",
            a.value, a.min, a.max, a.reps
        ),
        None => "atomic round trip: not measured (needs 2 CPUs)".into(),
    };
    let header = format!(
        "topology: {}\n{atomic_line}\n{}\n{} repetitions per row{}, runtimes interleaved per round; value = median; \
         cpu = process CPU time per op (same unit; rates: ops per CPU-second)\n",
        topology.line(),
        pin_line(opts.pin),
        scale.reps,
        if opts.quick { " (--quick)" } else { "" },
    );
    eprintln!("schedlab bench: {atomic_line}");
    eprintln!("schedlab bench: {}", pin_line(opts.pin));
    if opts.json {
        print!("{}", to_json(&rows));
    } else {
        print!("{header}\n{}", render_text(&rows));
    }
    eprintln!("schedlab bench: wall time {:.1} s", began.elapsed().as_secs_f64());
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        for f in &failures {
            note(&format!("FAILED: {f}"));
        }
        ExitCode::FAILURE
    }
}

/// `schedlab bench --servers`: the HTTP server rows and the tbench rows, schedlab
/// under every scheduler and the Tokio peer (when found; tbench also dbench's
/// `tbench_srv`), printed as tables or JSON rows.
fn servers(opts: &BenchOpts) -> ExitCode {
    use schedlab_bench::netbench::{self, TbenchScale};
    use schedlab_bench::servers::{rows, CpuPlan, ServerScale};
    let began = Instant::now();
    let topology = Topology::detect();
    eprintln!("schedlab bench: topology: {}", topology.line());
    let filter = Filter(opts.only.clone());
    let scale = ServerScale::new(opts.quick);
    let tokio_bin = if filter.wants_runtime(runtimes::TOKIO) { tokio_peer() } else { None };
    if tokio_bin.is_none() && filter.wants_runtime(runtimes::TOKIO) {
        note(
            "schedlab-peer-tokio not found next to this executable; build it with \
             `cargo build --release -p schedlab-peer-tokio` (Tokio server rows skipped)",
        );
    }
    let plan = CpuPlan::new(opts.pin);
    let policies = crate::runtime_policies();
    let mut rows = rows(&scale, &filter, opts.pin, &policies, tokio_bin.as_deref(), &mut |w: &str| eprintln!("  {w}"));
    let tscale = TbenchScale::new(opts.quick);
    let tbench_began = Instant::now();
    let tbench_rows =
        netbench::rows(&tscale, &filter, opts.pin, &policies, tokio_bin.as_deref(), &mut |w: &str| eprintln!("  {w}"));
    if !tbench_rows.is_empty() {
        eprintln!("schedlab bench: tbench rows {:.1} s", tbench_began.elapsed().as_secs_f64());
    }
    rows.extend(tbench_rows);
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|r| r.error.as_ref().map(|e| format!("{} on {} {}: {e}", r.bench, r.runtime, r.policy)))
        .collect();
    let mut skipped = String::new();
    if !rows.iter().any(|r| schedlab_bench::servers::is_http_bench(&r.bench)) && schedlab_bench::wrk::find().is_none() {
        skipped += "no http server rows: wrk not found on PATH (apt-get install wrk)\n";
    }
    if !rows.iter().any(|r| netbench::is_tbench_bench(&r.bench))
        && schedlab_bench::tbench_client::find("tbench").is_none()
    {
        skipped += "no tbench rows: tbench not found on PATH (apt-get install dbench)\n";
    }
    if opts.json {
        print!("{}", to_json(&rows));
    } else {
        print!(
            "topology: {}\nservers: {} (pin: {}); wrk {} s per row; tbench -t {} per row (clients: {})\n\n{skipped}{}",
            topology.line(),
            plan.describe(runtimes::SCHEDLAB),
            opts.pin.label(),
            scale.secs,
            tscale.secs,
            tscale.clients.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", "),
            render_text(&rows)
        );
    }
    eprintln!("schedlab bench: wall time {:.1} s", began.elapsed().as_secs_f64());
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        for f in &failures {
            note(&format!("FAILED: {f}"));
        }
        ExitCode::FAILURE
    }
}

/// The header line saying what `--pin` did.
fn pin_line(pin: Pin) -> String {
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
fn converse_rows(scale: &Scale, filter: &Filter) -> Vec<Row> {
    let cv = runtimes::CONVERSE;
    let mut rows = Vec::new();
    let scaled = |value: f64, sw: &Stopwatch| {
        let whole = sw.per_op(1);
        Measure { value, cpu_per_op: value * whole.cpu_per_op / whole.value.max(1.0), crossed: None }
    };
    if filter.wants(names::CONVERSE_QUEUEING, cv) {
        let n = scale.converse_messages;
        eprintln!("  converse-queueing on converse ({n} messages)");
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
            eprintln!("  converse-pingpong on converse, {policy} ({n} round trips)");
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
/// and perf's hackbench (when installed).
fn kthread_rows(scale: &Scale, filter: &Filter, pin: Pin) -> Vec<Row> {
    let kt = runtimes::KERNEL_THREADS;
    let mut rows = Vec::new();
    let b = scale.budget;
    let ns = units::NS_ROUND_TRIP;
    let rate = units::MESSAGES_PER_S;
    let mut run = |bench: &str, policy: &str, unit: &str, channel: &str, f: &mut dyn FnMut() -> Measure| {
        if filter.wants(bench, kt) {
            eprintln!("  {bench} on {kt} ({policy})");
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
        eprintln!("  hackbench on kernel-threads (perf {})", kthreads::perf_args(hs).join(" "));
        match kthreads::perf_messaging_measure(hs) {
            Ok(m) => rows.push(Row::measured(
                names::HACKBENCH,
                kt,
                "perf bench sched messaging -t -p (100 B, all CPUs)",
                rate,
                "pipe",
                m,
            )),
            Err(e) => note(&format!("perf bench sched messaging skipped: {e}")),
        }
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
fn schedlab_rows(scale: &Scale, filter: &Filter, quick: bool, pin: Pin) -> Vec<Row> {
    let mut rows = Vec::new();
    for policy in crate::runtime_policies() {
        match SchedlabExec::with_pin(2, &policy, pin) {
            Ok(e) => {
                rows.extend(programs::suite(&e, scale, filter, &mut |w: &str| eprintln!("  {w}")));
                let ws = wake_latency::WakeScale::new(quick);
                rows.extend(wake_latency::rows(&e, 2, &ws, filter, &mut |w: &str| eprintln!("  {w}")));
                e.shutdown();
            }
            Err(err) => note(&format!("schedlab runtime, policy {policy}: {err}; skipped")),
        }
    }
    label_pin(&mut rows, pin);
    rows
}

/// `schedlab-peer-tokio` next to the running executable (same target directory).
fn tokio_peer() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let name = format!("schedlab-peer-tokio{}", std::env::consts::EXE_SUFFIX);
    // Test binaries live one level down, in deps/.
    [dir.join(&name), dir.parent()?.join(&name)].into_iter().find(|p| p.is_file())
}

/// The repository root: the current directory if it has `peers/go`, else the source
/// tree this binary was built from.
fn repo_root() -> Option<PathBuf> {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    [PathBuf::from("."), built].into_iter().find(|d| d.join("peers/go/main.go").is_file())
}

/// `go build -o target/peers/schedlab-peer-go ./peers/go`, from the repository root.
fn build_go_peer() -> Result<PathBuf, String> {
    let root = repo_root().ok_or("peers/go not found (run from the repository root)")?;
    let out = root.join("target/peers/schedlab-peer-go");
    eprintln!("  go build -o target/peers/schedlab-peer-go ./peers/go");
    let status = Command::new("go")
        .args(["build", "-o", "../../target/peers/schedlab-peer-go", "."])
        .current_dir(root.join("peers/go"))
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("`go` not runnable ({e}); install Go to compare with it"))?;
    if !status.success() {
        return Err(format!("go build failed ({status})"));
    }
    Ok(out)
}

/// Run a peer binary once (one repetition; `--quick`/`--only`/`--pin` spelled with
/// `dash`) and parse its JSON rows; an error if it could not run, failed, or labelled a
/// row with another `pin` than asked. With `process_affinity` and [`Pin::All`], the
/// peer's whole process is restricted to the workers' 2 CPUs before it starts (Go:
/// its threads cannot be pinned one by one from Go).
fn run_peer(bin: &Path, what: &str, opts: &BenchOpts, dash: &str, process_affinity: bool) -> Result<Vec<Row>, String> {
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
    eprintln!("  running the {what} peer: {}", bin.display());
    let out = cmd.stderr(Stdio::inherit()).output().map_err(|e| format!("{what} peer {}: {e}", bin.display()))?;
    if !out.status.success() {
        return Err(format!("{what} peer failed ({}); its rows are missing", out.status));
    }
    let rows = from_json(&String::from_utf8_lossy(&out.stdout)).map_err(|e| format!("{what} peer: {e}"))?;
    match rows.iter().find(|r| r.pin != opts.pin.label()) {
        Some(r) => Err(format!("{what} peer: row {} says pin {:?}, asked for {:?}", r.bench, r.pin, opts.pin.label())),
        None => Ok(rows),
    }
}

/// [`names::CACHE_MODEL`] rows: `schedlab cachecheck`'s comparison on the walks whose
/// equation-3 effect the experiments show: the paper's 512 KB L2 at 32-byte lines
/// walked over more runnable tasks than its sets have ways, vanilla and coloured, and
/// a random visiting order on this machine's 64-byte lines. Counts are deterministic,
/// so each runs once; without valgrind the rows are skipped with a note.
fn cache_model_rows(filter: &Filter, quick: bool, progress: &mut dyn FnMut(&str)) -> Vec<Row> {
    use crate::cachecheck::{compare, Order, Walk, TOLERANCE};
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
        progress(&format!("{bench}: {policy}"));
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
                        schedlab_bench::row::NO_CHANNEL,
                        format!(
                            "model and cachegrind differ by {:.2} % (> {:.0} %)",
                            c.rel_diff() * 100.0,
                            TOLERANCE * 100.0
                        ),
                    )
                });
            }
            // Valgrind missing or unusable: nothing measured, nothing failed.
            Err((2, msg)) => {
                note(&format!("{bench} rows skipped: {msg}"));
                return rows;
            }
            Err((_, msg)) => rows.push(Row::failed(bench, rt, &policy, unit, schedlab_bench::row::NO_CHANNEL, msg)),
        }
    }
    rows
}
