//! hackbench: Rusty Russell's scheduler stress test (chat-like, no TCP).
//!
//! `hackbench:groups=G,loops=L[,fds=20,bytes=100,threads=0,channel=socket,start=barrier]`
//!
//! `G` groups of `fds` senders and `fds` receivers (20 + 20 in the original). Receiver
//! `j` of group `g` owns one channel (its end of a `socketpair`), `g·fds + j`. Every
//! sender of the group writes `loops` messages of `bytes` bytes to every receiver of
//! its group:
//!
//! | task | program |
//! |------|---------|
//! | `sender`   | `Loop L { Send ch[g][0]; …; Send ch[g][fds−1] }` |
//! | `receiver` | `Loop fds·L { Recv ch[g][j] }` — **counted** ("messages/s") |
//!
//! `expected_messages = G·fds²·L + 4·fds·G` (the start's two per child; `G·fds²·L`
//! with `start=fork`);
//! `expected_tasks = 2·fds·G + 1`.
//!
//! **Full sockets.** Each receiver's channel is its end of a Unix stream `socketpair`
//! ([`Buffer::UnixStream`]), which holds only as many messages as the modelled
//! kernel's socket buffer allows (228 of 100 bytes on Linux 2.4, 278 on 6.x;
//! [`crate::buffers`]): with 20 senders writing `loops` messages each to every
//! receiver, senders that run ahead of a receiver block until it drains a quarter of
//! its buffer. `channel=pipe` is the original's `-pipe` (and `perf bench sched
//! messaging -p`): one pipe per receiver ([`Buffer::Pipe`]); `channel=unbounded`
//! lets no send block.
//!
//! **Processes or threads.** With `threads=0` (the default, as the original) every
//! task is a forked process with its own address space (the root has mm 1, the k-th
//! spawned task mm `2 + k`); with `threads=1` all tasks, root included, share mm 1.
//!
//! **Start.** As in the original and in `perf bench sched messaging`, every task
//! exists before the test starts and the clock runs only over the test. Each child,
//! once created, writes one byte to a pipe shared by all children (`ready`) and polls
//! a wake fd; the parent reads one byte per child, reads its start time and writes
//! the wake fd once, which makes every child runnable:
//!
//! | task | program |
//! |------|---------|
//! | root (the parent) | `Spawn` every receiver, then every sender; `Recv ready` once per child; `StartClock`; `Send go[k]` for every child k; `Exit` |
//! | `receiver`, `sender` | `Send ready; Recv go[k];` then its program above |
//!
//! The model's channels have one receiver each, so the single wake-fd write is one
//! `go[k]` per child, sent by a root running SCHED_FIFO so that, as inside the one
//! wake-up call of the original, no child runs on the releasing CPU before all are
//! runnable (Chat's start does the same). The parent's reaping is the end of the
//! run: the elapsed time runs from [`Op::StartClock`] to the last task's exit. As in
//! the original, the parent forks each group's receivers, then its senders, group by
//! group. Channels: receiver `j` of group `g` is `g·fds + j`, `ready` is `G·fds` and
//! `go[k] = G·fds + 1 + k` for the k-th child.
//!
//! `start=fork` leaves the barrier out: each child starts its work as soon as it is
//! forked, the parent (SCHED_OTHER) exits after its last fork, and the clock runs
//! from the parent's first instant, so the measurement holds the start-up transient
//! (forks placed while the first senders already fill sockets). The parent forks
//! every group's receivers, then every group's senders, the closest order to a
//! barrier without one. The engines' agreement checks and the start-up traces use
//! it (docs/traces.md).
//!
//! All user-mode work of hackbench is negligible; its cost is the kernel's, charged
//! by the engines per `Send`/`Recv`.

use crate::spec::WorkloadKind;
use crate::{in_mm, push_loop, Buffer, Footprint, Metric, Op, Program, Workload};
use schedlab_core::int_param;
use schedlab_core::options::{self, Options, Param, Value};
use schedlab_core::{SchedClass, SpecError, TaskParams};

/// Real-time priority of the parent, so that it releases every child before any runs.
pub const START_RT_PRIORITY: u8 = 1;

/// Parameters of a hackbench run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HackbenchParams {
    /// Groups G (1..=1000; the original takes it as its argument, commonly 10).
    pub groups: u32,
    /// Messages per sender per receiver (1..=1,000,000; default 100).
    pub loops: u32,
    /// Senders and receivers per group (1..=1000; default 20).
    pub fds: u32,
    /// Message size (default 100).
    pub bytes: u32,
    /// `true`: threads of one process; `false`: one process per task (default).
    pub threads: bool,
    /// What carries each receiver's messages (default: a Unix stream socket).
    pub channel: Buffer,
    /// `true` (default): every child waits at the original's ready/wake barrier and
    /// the clock starts at the release; `false`: children start when forked.
    pub barrier: bool,
}

impl Default for HackbenchParams {
    fn default() -> Self {
        HackbenchParams {
            groups: 10,
            loops: 100,
            fds: 20,
            bytes: 100,
            threads: false,
            channel: Buffer::UnixStream,
            barrier: true,
        }
    }
}

impl Options for HackbenchParams {
    const PARAMS: &'static [Param<HackbenchParams>] = &[
        int_param!(groups, 1, 1000, "groups G").always(),
        int_param!(loops, 1, 1_000_000, "messages per sender per receiver").always(),
        int_param!(fds, 1, 1000, "senders and receivers per group"),
        int_param!(bytes, 1, 1 << 20, "message size").unit("bytes"),
        Param::int(
            "threads",
            0,
            1,
            "1: the tasks are threads of one process; 0: a process each",
            |p| Value::Int(p.threads as i64),
            |p, v| p.threads = v.int() == 1,
        ),
        Param::choice(
            "channel",
            &["socket", "pipe", "unbounded"],
            "what carries each receiver's messages: a Unix stream socket or a pipe, as full as the modelled kernel lets it get (a full one blocks its senders), or an unbounded channel",
            |p| {
                Value::Word(match p.channel {
                    Buffer::Pipe => "pipe",
                    Buffer::UnixStream => "socket",
                    _ => "unbounded",
                })
            },
            |p, v| {
                p.channel = match v.word() {
                    "pipe" => Buffer::Pipe,
                    "socket" => Buffer::UnixStream,
                    _ => Buffer::Unbounded,
                }
            },
        ),
        Param::choice(
            "start",
            &["barrier", "fork"],
            "barrier: every child waits until all are forked and the clock starts at their release, as the original; fork: each child starts when forked and the clock runs from the parent's first instant",
            |p| Value::Word(if p.barrier { "barrier" } else { "fork" }),
            |p, v| p.barrier = v.word() == "barrier",
        ),
    ];
}

impl WorkloadKind for HackbenchParams {
    const NAME: &'static str = "hackbench";
    const SUMMARY: &'static str = "Rusty Russell's hackbench: groups of senders and receivers over sockets or pipes";
    /// Tasks, channels and program operations of [`HackbenchParams::build`], from the
    /// parameters alone (checked against the built workload by the tests): each
    /// sender holds one send per receiver of its group, so operations grow as
    /// `groups · fds²`.
    fn footprint(&self) -> Footprint {
        let (g, f) = (self.groups as u64, self.fds as u64);
        let n = 2 * g * f;
        // Root: n spawns (with the barrier: n ready receives, the clock, n releases),
        // exit. Children: (ready, go and) a loop header each; a receiver's body is one
        // op, a sender's f.
        let (start_chans, root_start, child_start) = if self.barrier { (1 + n, 2 * n + 1, 2 * n) } else { (0, 0, 0) };
        Footprint {
            tasks: n + 1,
            channels: g * f + start_chans,
            ops: (n + 1 + root_start) + (n + child_start) + g * f * (1 + f),
        }
    }

    /// Build the workload (see the module documentation for its shape).
    fn build(&self) -> Result<Workload, SpecError> {
        WorkloadKind::check(self)?;
        let &HackbenchParams { groups, loops, fds, bytes, threads, channel, barrier } = self;
        let chan = |g: u32, j: u32| g * fds + j;
        let ntasks = 2 * groups * fds;
        let ready = groups * fds;
        let go = |k: u32| ready + 1 + k;
        // Program ids: 0 = root, 1 + k = the k-th child of the original's order
        // (per group, its receivers, then its senders).
        let mut programs = Vec::with_capacity(1 + ntasks as usize);
        let mut root = Vec::with_capacity(3 * ntasks as usize + 2);
        // With the barrier, the original's order; without it every receiver before
        // any sender (the closest order to a barrier without one).
        let order: Vec<u32> = match barrier {
            true => (0..ntasks).collect(),
            false => (0..2)
                .flat_map(|senders| {
                    (0..groups).flat_map(move |g| (0..fds).map(move |j| 2 * fds * g + senders * fds + j))
                })
                .collect(),
        };
        for (k, &child) in order.iter().enumerate() {
            let mm = if threads { 1 } else { 2 + k as u32 };
            root.push(Op::Spawn { program: 1 + child, params: in_mm(mm) });
        }
        if barrier {
            root.extend((0..ntasks).map(|_| Op::Recv { chan: ready }));
            root.push(Op::StartClock);
            root.extend((0..ntasks).map(|k| Op::Send { chan: go(k), bytes: 0 }));
        }
        root.push(Op::Exit);
        programs.push(Program { role: "root".into(), ops: root });

        // With the barrier, child k first tells the parent it is ready and waits for
        // its release (children numbered in the original's order).
        let start = |ops: &mut Vec<Op>, k: u32| {
            if barrier {
                ops.extend([Op::Send { chan: ready, bytes: 1 }, Op::Recv { chan: go(k) }]);
            }
        };
        let mut body = Vec::with_capacity(fds as usize);
        for g in 0..groups {
            let first = 2 * fds * g;
            for j in 0..fds {
                let mut ops = Vec::with_capacity(4);
                start(&mut ops, first + j);
                // fds·loops ≤ 10^9 < 2^32.
                push_loop(&mut ops, fds * loops, &[Op::Recv { chan: chan(g, j) }]);
                programs.push(Program { role: "receiver".into(), ops });
            }
            body.clear();
            body.extend((0..fds).map(|j| Op::Send { chan: chan(g, j), bytes }));
            for i in 0..fds {
                let mut ops = Vec::with_capacity(3 + body.len());
                start(&mut ops, first + fds + i);
                push_loop(&mut ops, loops, &body);
                programs.push(Program { role: "sender".into(), ops });
            }
        }

        let receivers = groups * fds;
        let channels = if barrier { receivers + 1 + ntasks } else { receivers };
        let start_messages = if barrier { 4 * groups as u64 * fds as u64 } else { 0 };
        let root_params = match barrier {
            true => TaskParams { class: SchedClass::Fifo, rt_priority: START_RT_PRIORITY, ..in_mm(1) },
            false => in_mm(1),
        };
        let (g, f, l) = (groups as u64, fds as u64, loops as u64);
        Ok(Workload {
            spec: options::canonical(Self::NAME, self),
            programs,
            channels,
            root: 0,
            root_params,
            metric: Metric::counting("messages/s", (0..channels).map(|c| c < receivers).collect()),
            expected_messages: g * f * f * l + start_messages,
            expected_tasks: 2 * g * f + 1,
            bound: Vec::new(),
            working_set: Vec::new(),
            // The start's pipe and wake fd hold every byte written to them.
            buffers: (0..channels).map(|c| if c < receivers { channel } else { Buffer::Unbounded }).collect(),
        })
    }
}
