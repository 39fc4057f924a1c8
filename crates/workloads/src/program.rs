//! Task programs: the engine-neutral description of what a task does.
//!
//! A workload is a set of programs over a tiny instruction set — compute, send,
//! blocking receive, sleep, yield, spawn, start and stop the benchmark's clock, exit —
//! plus counted loops. The simulator
//! interprets them in virtual time; the runtime runs them as real futures (compute
//! spins, send/receive are real channel operations). Defining a workload once keeps
//! the two engines comparable.

use crate::buffers::Buffer;
use schedlab_core::TaskParams;

/// A message channel (a socket or pipe in the original benchmarks): FIFO, any number
/// of senders, normally one receiver; unbounded unless the workload's
/// [`Workload::buffers`] says what bounds it.
pub type ChanId = u32;
/// Index into [`Workload::programs`].
pub type ProgId = u32;

/// One instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Run in user mode for `cycles` CPU cycles of the modelled CPU.
    Compute { cycles: u64 },
    /// Like `Compute`, with a duration drawn uniformly from `min..=max` cycles by the
    /// engine's seeded RNG (compile units, think times).
    ComputeUniform { min: u64, max: u64 },
    /// Send one `bytes`-byte message on `chan` (a `write`/`send` syscall). Blocks while
    /// the channel holds its bound of unread messages (never, on an unbounded one).
    Send { chan: ChanId, bytes: u32 },
    /// Receive one message from `chan`; blocks while it is empty (a blocking `read`).
    Recv { chan: ChanId },
    /// Sleep (blocking I/O wait, timer) for `ns` nanoseconds.
    Sleep { ns: u64 },
    /// `sched_yield()`.
    Yield,
    /// Fork/clone a new task running `program` with `params`; it is woken at once.
    Spawn { program: ProgId, params: TaskParams },
    /// Read the clock that times the benchmark (a `gettimeofday`): the metric's
    /// elapsed time runs from the first `StartClock` executed to the end of the run,
    /// so set-up that the original benchmark does before taking its start time is not
    /// counted. A workload without one is timed from its first instant.
    StartClock,
    /// Read the clock that ends the benchmark's measurement: the run ends at the first
    /// `StopClock` executed, and every figure covers the run up to it (tasks still
    /// live are abandoned: the simulator processes no further event, the runtime
    /// closes every channel and each task leaves at its next operation). A workload
    /// without one runs until every task has exited.
    StopClock,
    /// Execute the next `body` instructions `count` times (`count` ≥ 1, loops nest).
    Loop { count: u32, body: u32 },
    /// Terminate. Implicit at the end of a program.
    Exit,
}

/// A task program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// Role name for reports ("client_send", "sender", ...).
    pub role: String,
    pub ops: Vec<Op>,
}

/// What the throughput metric counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metric {
    /// Unit of `throughput`, e.g. `"messages/s"`, `"round trips/s"`.
    pub unit: String,
    /// A successful `Recv` on channel `c` counts one unit iff `counted[c]`.
    pub counted: Vec<bool>,
    /// Units per counted receive as `(numerator, denominator)`: `(1, 1)` for
    /// messages or round trips; NetBench's 16 KB replies in Mbit/s are
    /// `(16384 · 8, 1_000_000)`.
    pub per_count: (u64, u64),
    /// Client time-out. When set, every counted receive is the response to the
    /// receiving task's latest send: the engines time it from that send and count the
    /// responses that arrived later than this (NetBench's client errors).
    pub timeout_ns: Option<u64>,
}

impl Metric {
    /// One unit per counted receive, no response timing.
    pub fn counting(unit: &str, counted: Vec<bool>) -> Metric {
        Metric { unit: unit.into(), counted, per_count: (1, 1), timeout_ns: None }
    }

    /// The metric's units for `counts` counted receives.
    pub fn units(&self, counts: u64) -> f64 {
        counts as f64 * self.per_count.0 as f64 / self.per_count.1.max(1) as f64
    }
}

/// A complete workload: programs, channels and the one root task that starts it all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Canonical spec, e.g. `chat:rooms=10,messages=100` (echoed in reports).
    pub spec: String,
    pub programs: Vec<Program>,
    /// Number of channels, ids `0..channels`.
    pub channels: u32,
    /// Program of the root task, started runnable at time 0 (it spawns the others).
    pub root: ProgId,
    pub root_params: TaskParams,
    pub metric: Metric,
    /// Messages that will have been sent and received when the workload completes
    /// (for conservation checks).
    pub expected_messages: u64,
    /// Tasks that will have existed, including the root.
    pub expected_tasks: u64,
    /// Programs whose tasks serve interrupt line `k` (a NIC): on a machine with
    /// `irq_affinity` on, the engines bind each such task to CPU `k mod cpus`, where
    /// that line's interrupts are delivered; otherwise the tasks may run anywhere.
    pub bound: Vec<(ProgId, u32)>,
    /// Bytes of memory of each listed program's tasks (their own working set: request
    /// buffers, heap, file data): a task works through it at the start of every
    /// `Compute`, so the simulator's caches see it (unlisted programs: none).
    pub working_set: Vec<(ProgId, u32)>,
    /// What carries each channel ([`Buffer`], indexed by channel), which bounds how many
    /// messages it holds unread; empty: every channel is unbounded.
    pub buffers: Vec<Buffer>,
}

impl Workload {
    /// What carries channel `c`.
    pub fn buffer(&self, c: ChanId) -> Buffer {
        self.buffers.get(c as usize).copied().unwrap_or(Buffer::Unbounded)
    }

    /// The distinct program roles in order of first appearance, and each program's
    /// index among them: how the engines group what they measure per role
    /// (deterministic, no hashing order).
    pub fn roles(&self) -> (Vec<String>, Vec<u32>) {
        let mut roles: Vec<String> = Vec::new();
        let role_of = self
            .programs
            .iter()
            .map(|p| match roles.iter().position(|r| *r == p.role) {
                Some(i) => i as u32,
                None => {
                    roles.push(p.role.clone());
                    roles.len() as u32 - 1
                }
            })
            .collect();
        (roles, role_of)
    }
}
