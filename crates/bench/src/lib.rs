//! schedlab benchmarks.
//!
//! * [`exec`]: the [`Exec`] trait, a small executor interface that schedlab's runtime and
//!   Tokio both implement, and the async benchmark programs written once over it
//!   ([`programs`]): ping-pong on one worker and across workers, local dispatch
//!   (a task re-scheduling itself with its runtime's `yield_now`), spawn throughput, and
//!   the Chat and hackbench topologies of `crates/workloads`, each with the runtime's
//!   own channel and again with the runtime-agnostic `async-channel`.
//! * [`atomic`]: the hardware limit, a ping-pong through one `AtomicU64` between two
//!   pinned threads.
//! * [`kthreads`]: the same Chat and hackbench topologies (and a ping-pong, and the
//!   wake-latency program) with one kernel thread per task and blocking pipes, plus
//!   `perf bench sched messaging -t -p` when `perf` is installed.
//! * [`pick_cost`]: pick-next cost of every runtime policy against run-queue length.
//! * [`rq_walk`]: the runtime's run-queue walk per task visited, with the task state in
//!   vanilla and coloured kernel task blocks.
//! * [`wake_latency`]: wake-to-run latency of a probe among 10× oversubscribed CPU hogs,
//!   woken by a thread outside the runtime and by a task inside it.
//! * [`http`]: an HTTP/1.1 server of static pages written once on `hyper`, with its glue
//!   to schedlab's runtime; [`servers`]: the server rows (`schedlab bench --servers`),
//!   that server on schedlab under every scheduler and on Tokio, loaded by `wrk`
//!   ([`wrk`]) over loopback.
//! * [`tbench`]: a server of dbench's tbench protocol written once over a small async
//!   stream trait, with its glue to schedlab's runtime; [`netbench`]: its rows (`schedlab
//!   bench --servers`), that server on schedlab under every scheduler and on Tokio and
//!   dbench's `tbench_srv` under the kernel, driven by the real `tbench` client
//!   ([`tbench_client`]) at several client counts.
//! * [`driver`]: `schedlab bench`'s run: the rows in interleaved rounds over every
//!   runtime, the Converse and kernel-thread rows, the Tokio and Go peers, then the rows
//!   measured once.
//! * [`row`]: the result [`Row`] (`bench`, `runtime`, `policy`, `value`, `unit`), the
//!   text table with ratios against Tokio, and the targets (docs/bench.md).
//!
//! Sizes come from a [`Scale`]: [`Scale::quick`] (CI) or [`Scale::full`].

pub mod atomic;
pub mod driver;
pub mod exec;
pub mod http;
pub mod kthreads;
pub mod measure;
pub mod netbench;
pub mod pick_cost;
pub mod programs;
pub mod row;
pub mod rq_walk;
pub mod schedlab_exec;
pub mod servers;
pub mod stalls;
pub mod tbench;
pub mod tbench_client;
pub mod tokio_chan;
pub mod topology;
pub mod wake_latency;
pub mod wrk;
pub mod yielders;

pub use exec::{AsyncChannel, ChanRx, ChanTx, Channels, Exec};
pub use measure::{Measure, Stopwatch};
pub use row::{render_text, target_checks, Row, TargetCheck};
pub use tokio_chan::TokioMpsc;

use std::time::Duration;

/// Why a benchmark did not run: the runtime could not be built, an argument or peer
/// output is wrong, an external tool (`perf`, `wrk`, `tbench`) is missing or failed,
/// the network a server and its client meet on could not be set up, or a measurement
/// could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// schedlab's runtime did not start (bad policy spec, worker count, ...).
    #[error(transparent)]
    Runtime(#[from] schedlab_rt::BuildError),
    /// A bad argument (`--pin`) or malformed JSON rows.
    #[error("{0}")]
    Input(String),
    /// `perf`, `wrk` or `tbench` missing, failing or saying something unexpected.
    #[error("{0}")]
    Tool(String),
    /// A private network namespace, a loopback address or a listening socket that
    /// could not be set up (`tbench_client::Netns`, `tbench_client::Place`).
    #[error("{0}")]
    Net(String),
    /// A measurement that could not be made (a spec the row cannot use, tasks that did
    /// not start or stop, a policy that picked nothing).
    #[error("{0}")]
    Run(String),
}

/// A server row's failure is its cell's text: the message as printed.
impl From<BenchError> for String {
    fn from(e: BenchError) -> String {
        e.to_string()
    }
}

/// Bench names (the `bench` field of a [`Row`]), in table order.
pub mod names {
    /// Two tasks on the same worker bouncing a message: ns per round trip.
    pub const PINGPONG_SAME: &str = "pingpong-same-worker";
    /// Two tasks on different workers bouncing a message: ns per round trip.
    pub const PINGPONG_CROSS: &str = "pingpong-cross-worker";
    /// One task re-scheduling itself (enqueue + pick + run): ns per dispatch.
    pub const LOCAL_DISPATCH: &str = "local-dispatch";
    /// Spawning batches of 1,000 empty tasks and joining each through its own handle, in
    /// spawn order (Rust: a `JoinHandle` per task; Go: a done channel per goroutine,
    /// labelled "join per task"): tasks/s.
    pub const SPAWN: &str = "spawn";
    /// Converse on one PE: a handler re-enqueueing its message to the scheduler queue
    /// (enqueue + later dispatch) vs the same handler called directly: ns per message.
    pub const CONVERSE_QUEUEING: &str = "converse-queueing";
    /// Converse ping-pong between two pinned PEs, handlers replying directly or through
    /// the scheduler queue: ns per round trip.
    pub const CONVERSE_PINGPONG: &str = "converse-pingpong";
    /// Chat topology: messages/s delivered to the clients.
    pub const CHAT: &str = "chat";
    /// hackbench topology: messages/s received.
    pub const HACKBENCH: &str = "hackbench";
    /// [`PINGPONG_SAME`] with `async-channel` instead of the runtime's own channel
    /// (Rust runtimes only; so are the other `/async-channel` benches).
    pub const PINGPONG_SAME_AC: &str = "pingpong-same-worker/async-channel";
    /// [`PINGPONG_CROSS`] with `async-channel`.
    pub const PINGPONG_CROSS_AC: &str = "pingpong-cross-worker/async-channel";
    /// [`CHAT`] with `async-channel`.
    pub const CHAT_AC: &str = "chat/async-channel";
    /// [`HACKBENCH`] with `async-channel`.
    pub const HACKBENCH_AC: &str = "hackbench/async-channel";
    /// Pick-next cost of a policy with N runnable tasks on one CPU: ns per pick
    /// (`crate::pick_cost`; schedlab only).
    pub const PICK_NEXT: &str = "pick-next";
    /// [`PICK_NEXT`] at the largest size ÷ at the smallest, per policy.
    pub const PICK_NEXT_GROWTH: &str = "pick-next-growth";
    /// The runtime's `schedule()` walk over 1,024 runnable tasks on one worker, task
    /// state in vanilla or coloured kernel task blocks: ns per task visited
    /// (`crate::rq_walk`; schedlab only).
    pub const RQ_WALK: &str = "rq-walk";
    /// The simulator's L2 model against cachegrind on one synthetic run-queue walk
    /// (`schedlab cachecheck`): the model's L2 misses ÷ cachegrind's, 1 = agree (the
    /// row fails beyond ±2 %; skipped without valgrind).
    pub const CACHE_MODEL: &str = "cache-model";
    /// Wake-to-run latency of a probe among 10× oversubscribed hogs
    /// (`crate::wake_latency`): median, ns.
    pub const WAKE_LATENCY_P50: &str = "wake-latency-p50";
    /// ... 99th percentile.
    pub const WAKE_LATENCY_P99: &str = "wake-latency-p99";
    /// ... 99.9th percentile.
    pub const WAKE_LATENCY_P999: &str = "wake-latency-p99.9";
    /// ... maximum.
    pub const WAKE_LATENCY_MAX: &str = "wake-latency-max";
    /// The wake-latency benches.
    pub const WAKE_LATENCY: &[&str] = &[WAKE_LATENCY_P50, WAKE_LATENCY_P99, WAKE_LATENCY_P999, WAKE_LATENCY_MAX];
    /// Wake-to-run latency of the same probe woken by a task of the runtime that
    /// sleeps on the runtime's timer (`crate::wake_latency::Driver::Inside`, the Go
    /// peer's program): median, ns.
    pub const WAKE_LATENCY_INSIDE_P50: &str = "wake-latency-inside-p50";
    /// ... 99th percentile.
    pub const WAKE_LATENCY_INSIDE_P99: &str = "wake-latency-inside-p99";
    /// ... 99.9th percentile.
    pub const WAKE_LATENCY_INSIDE_P999: &str = "wake-latency-inside-p99.9";
    /// ... maximum.
    pub const WAKE_LATENCY_INSIDE_MAX: &str = "wake-latency-inside-max";
    /// The wake-latency benches with the driver inside the runtime.
    pub const WAKE_LATENCY_INSIDE: &[&str] =
        &[WAKE_LATENCY_INSIDE_P50, WAKE_LATENCY_INSIDE_P99, WAKE_LATENCY_INSIDE_P999, WAKE_LATENCY_INSIDE_MAX];
    /// Stalls of a thread that never blocks (`crate::stalls`): gaps of at least 10 µs
    /// between two clock reads, per second per CPU.
    pub const MACHINE_STALLS: &str = "machine-stalls";
    /// ... their median length, ns.
    pub const MACHINE_STALL_P50: &str = "machine-stall-p50";
    /// ... the share of the spinning time they took, %.
    pub const MACHINE_STALL_LOST: &str = "machine-stall-lost";
    /// ... and how many of them per second per CPU were the guest kernel preempting
    /// the thread (involuntary context switches).
    pub const MACHINE_PREEMPTIONS: &str = "machine-preemptions";
    /// The benches of the Converse message layer; with the pick-next ones, the benches
    /// that are not async programs (every other bench is one, which the async runtimes
    /// schedlab, Tokio and Go run).
    /// One task awaiting, in a loop, a future that wakes itself (`wake_by_ref`) and
    /// returns `Pending` once: the same future on every Rust runtime, ns per dispatch
    /// (beside each runtime's own `yield_now` in [`LOCAL_DISPATCH`]).
    pub const LOCAL_DISPATCH_SELF_WAKE: &str = "local-dispatch/self-wake";
    /// [`PINGPONG_SAME`] with `tokio::sync::mpsc` (schedlab only: it is Tokio's own
    /// channel, so Tokio's [`PINGPONG_SAME`] row is the reference; so are the other
    /// `/tokio-mpsc` benches).
    pub const PINGPONG_SAME_TM: &str = "pingpong-same-worker/tokio-mpsc";
    /// [`PINGPONG_CROSS`] with `tokio::sync::mpsc`.
    pub const PINGPONG_CROSS_TM: &str = "pingpong-cross-worker/tokio-mpsc";
    /// [`CHAT`] with `tokio::sync::mpsc`.
    pub const CHAT_TM: &str = "chat/tokio-mpsc";
    /// [`HACKBENCH`] with `tokio::sync::mpsc`.
    pub const HACKBENCH_TM: &str = "hackbench/tokio-mpsc";
    /// The benches of the Converse message layer; every other bench is an async
    /// program that the async runtimes (schedlab, Tokio, Go) run.
    pub const CONVERSE: &[&str] = &[CONVERSE_QUEUEING, CONVERSE_PINGPONG];
    /// The HTTP server rows (`schedlab bench --servers`, `crate::servers`): the hyper
    /// server loaded by wrk with 16 open connections, requests/s.
    pub const HTTP_C16: &str = "http-c16";
    /// ... its median latency, ns/request.
    pub const HTTP_C16_P50: &str = "http-c16-p50";
    /// ... its 99th percentile.
    pub const HTTP_C16_P99: &str = "http-c16-p99";
    /// ... its 99.9th percentile.
    pub const HTTP_C16_P999: &str = "http-c16-p99.9";
    /// The same with 256 open connections, requests/s.
    pub const HTTP_C256: &str = "http-c256";
    /// ... its median latency, ns/request.
    pub const HTTP_C256_P50: &str = "http-c256-p50";
    /// ... its 99th percentile.
    pub const HTTP_C256_P99: &str = "http-c256-p99";
    /// ... its 99.9th percentile.
    pub const HTTP_C256_P999: &str = "http-c256-p99.9";
    /// The server benches.
    pub const HTTP: &[&str] =
        &[HTTP_C16, HTTP_C16_P50, HTTP_C16_P99, HTTP_C16_P999, HTTP_C256, HTTP_C256_P50, HTTP_C256_P99, HTTP_C256_P999];
    /// The tbench rows (`schedlab bench --servers`, `crate::netbench`): MB/s with 4 clients.
    pub const TBENCH_C4: &str = "tbench-c4";
    /// ... with 8 clients.
    pub const TBENCH_C8: &str = "tbench-c8";
    /// ... with 16 clients.
    pub const TBENCH_C16: &str = "tbench-c16";
    /// ... with 32 clients.
    pub const TBENCH_C32: &str = "tbench-c32";
    /// ... with 48 clients.
    pub const TBENCH_C48: &str = "tbench-c48";
    /// The tbench benches.
    pub const TBENCH: &[&str] = &[TBENCH_C4, TBENCH_C8, TBENCH_C16, TBENCH_C32, TBENCH_C48];
    /// Whether `bench` is one of the async programs.
    pub fn is_async(bench: &str) -> bool {
        !CONVERSE.contains(&bench)
            && bench != PICK_NEXT
            && bench != PICK_NEXT_GROWTH
            && bench != RQ_WALK
            && bench != CACHE_MODEL
            && bench != MACHINE_STALLS
            && bench != MACHINE_STALL_P50
            && bench != MACHINE_STALL_LOST
            && bench != MACHINE_PREEMPTIONS
    }
    /// Every bench, in table order.
    pub const ALL: &[&str] = &[
        PINGPONG_SAME,
        PINGPONG_CROSS,
        LOCAL_DISPATCH,
        SPAWN,
        CONVERSE_QUEUEING,
        CONVERSE_PINGPONG,
        CHAT,
        HACKBENCH,
        PINGPONG_SAME_AC,
        PINGPONG_CROSS_AC,
        CHAT_AC,
        HACKBENCH_AC,
        PICK_NEXT,
        PICK_NEXT_GROWTH,
        RQ_WALK,
        CACHE_MODEL,
        WAKE_LATENCY_P50,
        WAKE_LATENCY_P99,
        WAKE_LATENCY_P999,
        WAKE_LATENCY_MAX,
        WAKE_LATENCY_INSIDE_P50,
        WAKE_LATENCY_INSIDE_P99,
        WAKE_LATENCY_INSIDE_P999,
        WAKE_LATENCY_INSIDE_MAX,
        MACHINE_STALLS,
        MACHINE_STALL_P50,
        MACHINE_STALL_LOST,
        MACHINE_PREEMPTIONS,
        LOCAL_DISPATCH_SELF_WAKE,
        PINGPONG_SAME_TM,
        PINGPONG_CROSS_TM,
        CHAT_TM,
        HACKBENCH_TM,
        HTTP_C16,
        HTTP_C16_P50,
        HTTP_C16_P99,
        HTTP_C16_P999,
        HTTP_C256,
        HTTP_C256_P50,
        HTTP_C256_P99,
        HTTP_C256_P999,
        TBENCH_C4,
        TBENCH_C8,
        TBENCH_C16,
        TBENCH_C32,
        TBENCH_C48,
    ];
}

/// Runtime names (the `runtime` field of a [`Row`]).
pub mod runtimes {
    /// schedlab's runtime (`crates/rt`).
    pub const SCHEDLAB: &str = "schedlab";
    /// Tokio's multi-thread runtime (`crates/peer-tokio`).
    pub const TOKIO: &str = "tokio";
    /// Go's goroutines and channels (`peers/go`).
    pub const GO: &str = "go";
    /// One kernel thread per task, blocking pipes.
    pub const KERNEL_THREADS: &str = "kernel-threads";
    /// Two pinned threads spinning on one atomic.
    pub const ATOMIC: &str = "atomic";
    /// Two pinned threads spinning on the clock (the machine's own stalls).
    pub const MACHINE: &str = "machine";
    /// schedlab's Converse message layer (`crates/converse`).
    pub const CONVERSE: &str = "converse";
    /// schedlab's simulator (`crates/sim`), for rows that check its models.
    pub const SIM: &str = "sim";
    /// The Linux kernel scheduling a blocking server's processes (dbench's `tbench_srv`).
    pub const LINUX: &str = "linux";
    /// Every runtime, in report order.
    pub const ALL: &[&str] = &[SCHEDLAB, CONVERSE, TOKIO, GO, KERNEL_THREADS, ATOMIC, MACHINE, SIM, LINUX];
}

/// Units (the `unit` field of a [`Row`]).
pub mod units {
    /// Nanoseconds per round trip (lower is better).
    pub const NS_ROUND_TRIP: &str = "ns/round-trip";
    /// Nanoseconds per dispatch (lower is better).
    pub const NS_DISPATCH: &str = "ns/dispatch";
    /// Nanoseconds per message (lower is better).
    pub const NS_MESSAGE: &str = "ns/message";
    /// Tasks per second (higher is better).
    pub const TASKS_PER_S: &str = "tasks/s";
    /// Messages per second (higher is better).
    pub const MESSAGES_PER_S: &str = "messages/s";
    /// Nanoseconds per pick-next (lower is better).
    pub const NS_PICK: &str = "ns/pick";
    /// Nanoseconds per task a run-queue walk visits (lower is better).
    pub const NS_VISIT: &str = "ns/task-visited";
    /// Nanoseconds from a wake-up to the woken task's poll (lower is better).
    pub const NS_WAKE: &str = "ns/wake";
    /// Cost at the largest size ÷ cost at the smallest (1 = flat; lower is better).
    pub const GROWTH: &str = "x (largest/smallest size)";
    /// The simulator's L2 misses ÷ cachegrind's on the same walk (1 = agree).
    pub const MODEL_OVER_CACHEGRIND: &str = "x (model/cachegrind L2 misses)";
    /// HTTP requests per second (higher is better).
    pub const REQUESTS_PER_S: &str = "requests/s";
    /// Nanoseconds from sending a request to its whole response (lower is better).
    pub const NS_REQUEST: &str = "ns/request";
    /// Megabytes (10^6 bytes) per second as tbench counts them (higher is better).
    pub const MB_PER_S: &str = "MB/s";
    /// Stalls per second per CPU (lower is better).
    pub const STALLS_PER_S: &str = "stalls/s per CPU";
    /// Nanoseconds a stall lasts (lower is better).
    pub const NS_STALL: &str = "ns/stall";
    /// Percent of the time lost (lower is better).
    pub const PERCENT_LOST: &str = "% of the time lost";
    /// Whether a smaller value is better for `unit`.
    pub fn lower_is_better(unit: &str) -> bool {
        unit.starts_with("ns/") || unit == GROWTH || unit == STALLS_PER_S || unit == PERCENT_LOST
    }
}

/// Chat topology: `rooms` rooms of `users` users, four tasks per user, every user sends
/// `messages` messages, each broadcast to the other `users − 1` users of its room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChatSize {
    /// Rooms.
    pub rooms: usize,
    /// Users per room (20 in the original).
    pub users: usize,
    /// Messages each user sends.
    pub messages: usize,
}

impl ChatSize {
    /// Messages delivered to the clients (the metric's count): `rooms·users·messages·(users−1)`.
    pub fn deliveries(&self) -> u64 {
        (self.rooms * self.users * self.messages * (self.users - 1)) as u64
    }
    /// Short description, e.g. `rooms=2,users=20,messages=100`.
    pub fn describe(&self) -> String {
        format!("rooms={},users={},messages={}", self.rooms, self.users, self.messages)
    }
}

/// hackbench topology: `groups` groups of `fds` senders and `fds` receivers; every sender
/// sends `loops` messages to every receiver of its group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HackSize {
    /// Groups.
    pub groups: usize,
    /// Senders (and receivers) per group (20 in the original).
    pub fds: usize,
    /// Messages per sender per receiver.
    pub loops: usize,
}

impl HackSize {
    /// Messages received: `groups·fds²·loops`.
    pub fn messages(&self) -> u64 {
        (self.groups * self.fds * self.fds * self.loops) as u64
    }
    /// Short description, e.g. `groups=2,fds=20,loops=100`.
    pub fn describe(&self) -> String {
        format!("groups={},fds={},loops={}", self.groups, self.fds, self.loops)
    }
}

/// How long and how large every benchmark runs.
#[derive(Clone, Debug)]
pub struct Scale {
    /// Measured time of one repetition of each time-bounded micro-benchmark
    /// (ping-pong, dispatch, spawn).
    pub budget: Duration,
    /// Repetitions of every row (the median, min and max are reported); `schedlab
    /// bench` runs them in rounds, every runtime once per round (interleaved).
    pub reps: usize,
    /// Chat size for the async runtimes.
    pub chat: ChatSize,
    /// hackbench size for the async runtimes.
    pub hackbench: HackSize,
    /// Chat size for kernel threads (one thread per task).
    pub kthreads_chat: ChatSize,
    /// hackbench size for kernel threads.
    pub kthreads_hackbench: HackSize,
    /// Round trips of the Converse ping-pong.
    pub converse_round_trips: u64,
    /// Messages of the Converse queueing-overhead measurement.
    pub converse_messages: u64,
}

impl Scale {
    /// CI sizes: `schedlab bench --quick` (5 interleaved repetitions) runs in about 20 s
    /// on 2 vCPUs.
    pub fn quick() -> Scale {
        Scale {
            budget: Duration::from_millis(20),
            reps: 5,
            chat: ChatSize { rooms: 2, users: 20, messages: 50 },
            hackbench: HackSize { groups: 2, fds: 20, loops: 50 },
            kthreads_chat: ChatSize { rooms: 2, users: 20, messages: 50 },
            kthreads_hackbench: HackSize { groups: 2, fds: 20, loops: 50 },
            converse_round_trips: 20_000,
            converse_messages: 400_000,
        }
    }
    /// Full sizes (a few minutes for the whole `schedlab bench`).
    pub fn full() -> Scale {
        Scale {
            budget: Duration::from_millis(200),
            reps: 5,
            chat: ChatSize { rooms: 10, users: 20, messages: 200 },
            hackbench: HackSize { groups: 10, fds: 20, loops: 200 },
            kthreads_chat: ChatSize { rooms: 10, users: 20, messages: 200 },
            kthreads_hackbench: HackSize { groups: 10, fds: 20, loops: 200 },
            converse_round_trips: 200_000,
            converse_messages: 4_000_000,
        }
    }
    /// [`Scale::quick`] if `quick`, else [`Scale::full`].
    pub fn new(quick: bool) -> Scale {
        if quick {
            Scale::quick()
        } else {
            Scale::full()
        }
    }
}

/// Which (bench, runtime) pairs to run: all, or those whose bench or runtime name
/// contains a substring (`--only`).
#[derive(Clone, Debug, Default)]
pub struct Filter(pub Option<String>);

impl Filter {
    /// Whether `bench` on `runtime` runs.
    pub fn wants(&self, bench: &str, runtime: &str) -> bool {
        match &self.0 {
            None => true,
            Some(s) => bench.contains(s.as_str()) || runtime.contains(s.as_str()),
        }
    }
    /// Whether the filter selects anything at all (an `--only` that matches no bench
    /// and no runtime is a mistake to report, not an empty run).
    pub fn selects_anything(&self) -> bool {
        names::ALL.iter().any(|b| runtimes::ALL.iter().any(|r| self.wants(b, r)))
    }
    /// Whether any async program ([`names::is_async`]) runs on `runtime` (used to skip a
    /// runtime or peer entirely).
    pub fn wants_runtime(&self, runtime: &str) -> bool {
        names::ALL.iter().filter(|b| names::is_async(b)).any(|b| self.wants(b, runtime))
    }
}

/// Whether the runtimes' threads are pinned to CPUs during a run (`schedlab bench
/// --pin`): the same condition for every runtime, and every row says which (its `pin`).
///
/// * [`Pin::All`] (the default): schedlab's workers, Tokio's worker threads and its two
///   placed `current_thread` threads are each pinned to one of the first two CPUs this
///   process may use; kernel threads are restricted to those 2 CPUs (ping-pong: one CPU
///   per thread); Go, whose threads cannot be pinned from Go, runs with its process
///   affinity set to those 2 CPUs (`sched_setaffinity` before exec, like `taskset`).
/// * [`Pin::None`]: no runtime sets any affinity; the kernel places every thread.
///
/// The atomic ping-pong, the Converse PEs and the single-worker schedlab micro-benchmarks
/// (pick-next, rq-walk) are pinned whatever the switch (their rows say `all`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pin {
    /// Every runtime's threads pinned (Go: process affinity to the same 2 CPUs).
    #[default]
    All,
    /// No runtime pinned.
    None,
}

impl Pin {
    /// `"all"` or `"none"`: the `pin` of a row and the value of `--pin`.
    pub fn label(self) -> &'static str {
        match self {
            Pin::All => "all",
            Pin::None => "none",
        }
    }
    /// Whether threads are pinned.
    pub fn pinned(self) -> bool {
        self == Pin::All
    }
    /// Parse a `--pin` value.
    pub fn parse(s: &str) -> Result<Pin, BenchError> {
        match s {
            "all" => Ok(Pin::All),
            "none" => Ok(Pin::None),
            _ => Err(BenchError::Input(format!("--pin {s:?}: expected all or none"))),
        }
    }
}

/// Median of a non-empty list (the mean of the middle two for an even length).
pub fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty(), "median of nothing");
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Ratios taken round by round, as the bench prints them: `median× [min..max]`, two
/// decimals (`v` not empty).
pub fn ratio_spread(v: &[f64]) -> String {
    let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    format!("{:.2}× [{lo:.2}..{hi:.2}]", median(v.to_vec()))
}

/// Run `f` `reps` times and return the median.
pub fn median_of(reps: usize, mut f: impl FnMut() -> f64) -> f64 {
    median((0..reps.max(1)).map(|_| f()).collect())
}

/// Pin the calling thread to the `i`-th CPU this process may use (modulo their count);
/// false if the CPUs cannot be listed.
pub fn pin_to_cpu(i: usize) -> bool {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    match cores.get(i % cores.len().max(1)) {
        Some(&c) => core_affinity::set_for_current(c),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_count_like_the_workloads() {
        // chat:rooms=10,messages=100 delivers 38,000 messages per room (crates/workloads/src/chat.rs).
        assert_eq!(ChatSize { rooms: 10, users: 20, messages: 100 }.deliveries(), 380_000);
        assert_eq!(HackSize { groups: 4, fds: 20, loops: 100 }.messages(), 160_000);
    }

    #[test]
    fn median_and_filter() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        let f = Filter(Some("chat".into()));
        assert!(f.wants("chat", "tokio"));
        assert!(!f.wants("hackbench", "tokio"));
        let g = Filter(Some("go".into()));
        assert!(g.wants("hackbench", "go") && g.wants_runtime("go") && !g.wants_runtime("tokio"));
        assert!(Filter(None).wants("spawn", "x"));
        assert!(!Filter(Some("converse".into())).wants_runtime("tokio"));
    }
}
