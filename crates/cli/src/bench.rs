//! `schedlab bench`: real-machine benchmarks of schedlab's runtime beside Tokio, Go,
//! kernel threads and the raw atomic limit (see `crates/bench`).

use schedlab_bench::row::{from_json, to_json};
use schedlab_bench::schedlab_exec::SchedlabExec;
use schedlab_bench::{
    atomic, kthreads, names, pick_cost, programs, render_text, runtimes, units, wake_latency, Filter, Row, Scale,
};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// Options of `schedlab bench`.
pub struct BenchOpts {
    pub quick: bool,
    pub json: bool,
    pub only: Option<String>,
}

fn note(msg: &str) {
    eprintln!("schedlab bench: {msg}");
}

pub fn bench(opts: BenchOpts) -> ExitCode {
    let scale = Scale::new(opts.quick);
    let filter = Filter(opts.only.clone());
    let mut rows: Vec<Row> = Vec::new();
    let progress = |what: &str| eprintln!("  {what}");

    // schedlab's runtime, every policy.
    if filter.wants_runtime(runtimes::SCHEDLAB) {
        rows.extend(schedlab_rows(&scale, &filter, opts.quick));
    }
    // Pick-next cost of every runtime policy against run-queue length.
    rows.extend(pick_cost::rows(&pick_cost::PickScale::new(opts.quick), &filter, &mut |w: &str| progress(w)));

    // Converse: queueing overhead on one PE, ping-pong between two pinned PEs.
    let cv = runtimes::CONVERSE;
    if filter.wants(names::CONVERSE_QUEUEING, cv) {
        let n = scale.converse_messages;
        progress(&format!("converse-queueing on converse ({n} messages)"));
        let (queued, direct) = schedlab_converse::bench_queueing_overhead(n);
        rows.push(Row::new(names::CONVERSE_QUEUEING, cv, "via scheduler queue", queued, units::NS_MESSAGE));
        rows.push(Row::new(names::CONVERSE_QUEUEING, cv, "direct handler call", direct, units::NS_MESSAGE));
    }
    if filter.wants(names::CONVERSE_PINGPONG, cv) {
        let n = scale.converse_round_trips;
        for (via_queue, policy) in [(false, "handler replies"), (true, "via scheduler queue")] {
            progress(&format!("converse-pingpong on converse, {policy} ({n} round trips)"));
            let ns = schedlab_converse::bench_pingpong(n, via_queue);
            rows.push(Row::new(
                names::CONVERSE_PINGPONG,
                cv,
                &format!("2 pinned PEs, {policy}"),
                ns,
                units::NS_ROUND_TRIP,
            ));
        }
    }

    // The hardware limit.
    if filter.wants(names::PINGPONG_CROSS, runtimes::ATOMIC) {
        progress("pingpong-cross-worker on atomic (2 pinned threads)");
        match atomic::pingpong(scale.budget) {
            Some(ns) => rows.push(Row::new(
                names::PINGPONG_CROSS,
                runtimes::ATOMIC,
                "2 pinned threads, AtomicU64 spin",
                ns,
                units::NS_ROUND_TRIP,
            )),
            None => note("atomic ping-pong needs 2 CPUs; skipped"),
        }
    }

    // Kernel threads.
    let kt = runtimes::KERNEL_THREADS;
    if filter.wants(names::PINGPONG_CROSS, kt) {
        progress("pingpong-cross-worker on kernel-threads (threads+pipes)");
        let ns = kthreads::pingpong(scale.budget);
        rows.push(Row::new(names::PINGPONG_CROSS, kt, "threads+pipes (unpinned)", ns, units::NS_ROUND_TRIP));
    }
    if filter.wants(names::CHAT, kt) {
        let size = scale.kthreads_chat;
        progress(&format!("chat on kernel-threads (threads+pipes, {})", size.describe()));
        let v = schedlab_bench::median_of(scale.reps, || kthreads::chat(size));
        rows.push(Row::new(names::CHAT, kt, "threads+pipes", v, units::MESSAGES_PER_S));
    }
    if filter.wants(names::HACKBENCH, kt) {
        let size = scale.kthreads_hackbench;
        progress(&format!("hackbench on kernel-threads (threads+pipes, {})", size.describe()));
        let v = schedlab_bench::median_of(scale.reps, || kthreads::hackbench(size));
        rows.push(Row::new(names::HACKBENCH, kt, "threads+pipes", v, units::MESSAGES_PER_S));
        progress(&format!("hackbench on kernel-threads (perf {})", kthreads::perf_args(size).join(" ")));
        let runs: Result<Vec<f64>, String> = (0..scale.reps).map(|_| kthreads::perf_messaging(size)).collect();
        match runs {
            Ok(v) => rows.push(Row::new(
                names::HACKBENCH,
                kt,
                "perf bench sched messaging -t -p",
                schedlab_bench::median(v),
                units::MESSAGES_PER_S,
            )),
            Err(e) => note(&format!("perf bench sched messaging skipped: {e}")),
        }
    }

    // Peers: Tokio (a binary of this workspace), Go (built here with `go build`).
    if filter.wants_runtime(runtimes::TOKIO) {
        match tokio_peer() {
            Some(bin) => rows.extend(run_peer(&bin, "tokio", &opts, "--")),
            None => note(
                "schedlab-peer-tokio not found next to this executable; build it with \
                 `cargo build --release -p schedlab-peer-tokio` (Tokio rows skipped)",
            ),
        }
    }
    if filter.wants_runtime(runtimes::GO) {
        match build_go_peer() {
            Ok(bin) => rows.extend(run_peer(&bin, "go", &opts, "-")),
            Err(e) => note(&format!("Go peer skipped: {e}")),
        }
    }

    if opts.json {
        print!("{}", to_json(&rows));
    } else {
        print!("{}", render_text(&rows));
    }
    ExitCode::SUCCESS
}

/// The async programs on schedlab's runtime (2 pinned workers) for every policy.
fn schedlab_rows(scale: &Scale, filter: &Filter, quick: bool) -> Vec<Row> {
    let mut rows = Vec::new();
    for policy in crate::runtime_policies() {
        match SchedlabExec::new(2, &policy) {
            Ok(e) => {
                rows.extend(programs::suite(&e, scale, filter, &mut |w: &str| eprintln!("  {w}")));
                let ws = wake_latency::WakeScale::new(quick);
                rows.extend(wake_latency::rows(&e, 2, &ws, filter, &mut |w: &str| eprintln!("  {w}")));
                e.shutdown();
            }
            Err(err) => note(&format!("schedlab runtime, policy {policy}: {err}; skipped")),
        }
    }
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

/// Run a peer binary (`--quick`/`--only` spelled with `dash`) and parse its JSON rows;
/// on failure, a note and no rows.
fn run_peer(bin: &Path, what: &str, opts: &BenchOpts, dash: &str) -> Vec<Row> {
    let mut cmd = Command::new(bin);
    if opts.quick {
        cmd.arg(format!("{dash}quick"));
    }
    if let Some(o) = &opts.only {
        cmd.arg(format!("{dash}only")).arg(o);
    }
    eprintln!("  running the {what} peer: {}", bin.display());
    let out = match cmd.stderr(Stdio::inherit()).output() {
        Ok(o) => o,
        Err(e) => {
            note(&format!("{what} peer {}: {e}", bin.display()));
            return Vec::new();
        }
    };
    if !out.status.success() {
        note(&format!("{what} peer failed ({}); its rows are missing", out.status));
        return Vec::new();
    }
    match from_json(&String::from_utf8_lossy(&out.stdout)) {
        Ok(rows) => rows,
        Err(e) => {
            note(&format!("{what} peer: {e}"));
            Vec::new()
        }
    }
}
