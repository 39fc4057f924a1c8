//! hackbench: Rusty Russell's scheduler stress test (chat-like, no TCP).
//!
//! `hackbench:groups=G,loops=L[,fds=20,bytes=100,threads=0,channel=socket]`
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
//! `expected_messages = G·fds²·L`; `expected_tasks = 2·fds·G + 1`.
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
//! **Start-up.** The root spawns the receivers of all groups, then the senders of all
//! groups, then exits. The original forks receivers before senders per group and holds
//! everyone at a ready/wake-fd barrier until all are created; there is no barrier here
//! (it would need a multi-receiver channel), so spawning every consumer before any
//! producer is the closest order. All user-mode work of hackbench is negligible; its
//! cost is the kernel's, charged by the engines per `Send`/`Recv`.

use crate::spec::WorkloadKind;
use crate::{in_mm, push_loop, Buffer, Footprint, Metric, Op, Program, Workload};
use schedlab_core::int_param;
use schedlab_core::options::{self, Options, Param, Value};
use schedlab_core::SpecError;

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
}

impl Default for HackbenchParams {
    fn default() -> Self {
        HackbenchParams { groups: 10, loops: 100, fds: 20, bytes: 100, threads: false, channel: Buffer::UnixStream }
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
        Footprint { tasks: 2 * g * f + 1, channels: g * f, ops: (2 * g * f + 1) + 2 * g * f + g * f * (1 + f) }
    }

    /// Build the workload (see the module documentation for its shape).
    fn build(&self) -> Result<Workload, SpecError> {
        WorkloadKind::check(self)?;
        let &HackbenchParams { groups, loops, fds, bytes, threads, channel } = self;
        let chan = |g: u32, j: u32| g * fds + j;
        let ntasks = 2 * groups * fds;
        // Program ids: 0 = root, 1 + k = the k-th spawned task (receivers, then senders).
        let mut programs = Vec::with_capacity(1 + ntasks as usize);
        let mut root = Vec::with_capacity(ntasks as usize + 1);
        for k in 0..ntasks {
            let mm = if threads { 1 } else { 2 + k };
            root.push(Op::Spawn { program: 1 + k, params: in_mm(mm) });
        }
        root.push(Op::Exit);
        programs.push(Program { role: "root".into(), ops: root });

        for g in 0..groups {
            for j in 0..fds {
                let mut ops = Vec::with_capacity(2);
                // fds·loops ≤ 10^9 < 2^32.
                push_loop(&mut ops, fds * loops, &[Op::Recv { chan: chan(g, j) }]);
                programs.push(Program { role: "receiver".into(), ops });
            }
        }
        let mut body = Vec::with_capacity(fds as usize);
        for g in 0..groups {
            body.clear();
            body.extend((0..fds).map(|j| Op::Send { chan: chan(g, j), bytes }));
            for _ in 0..fds {
                let mut ops = Vec::with_capacity(1 + body.len());
                push_loop(&mut ops, loops, &body);
                programs.push(Program { role: "sender".into(), ops });
            }
        }

        let channels = groups * fds;
        let (g, f, l) = (groups as u64, fds as u64, loops as u64);
        Ok(Workload {
            spec: options::canonical(Self::NAME, self),
            programs,
            channels,
            root: 0,
            root_params: in_mm(1),
            metric: Metric::counting("messages/s", vec![true; channels as usize]),
            expected_messages: g * f * f * l,
            expected_tasks: 2 * g * f + 1,
            bound: Vec::new(),
            working_set: Vec::new(),
            buffers: vec![channel; channels as usize],
        })
    }
}
