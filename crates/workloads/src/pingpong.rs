//! pingpong: two tasks bouncing one message — the minimal wake-up/context-switch latency test.
//!
//! `pingpong:rounds=N[,bytes=100,compute=0]`
//!
//! | task | process | program |
//! |------|---------|---------|
//! | `ping` | mm 2 | `Loop N { [Compute c]; Send a; Recv b }` — receives on `b` **counted** ("round trips/s") |
//! | `pong` | mm 3 | `Loop N { Recv a; [Compute c]; Send b }` |
//!
//! Channel `a` = 0 (ping → pong), `b` = 1 (pong → ping). `compute` adds `c` user-mode
//! cycles per round to each side (default 0). The root (mm 1) spawns `pong`, then
//! `ping`, and exits: `expected_tasks = 3`, `expected_messages = 2N`.

use crate::spec::WorkloadKind;
use crate::{in_mm, push_loop, Footprint, Metric, Op, Program, Workload};
use schedlab_core::int_param;
use schedlab_core::options::{self, Options, Param};
use schedlab_core::SpecError;

/// Channel ping → pong.
pub const CHAN_A: u32 = 0;
/// Channel pong → ping (counted).
pub const CHAN_B: u32 = 1;

/// Parameters of a pingpong run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingPongParams {
    /// Round trips N (default 10,000).
    pub rounds: u32,
    /// Message size (default 100).
    pub bytes: u32,
    /// User-mode cycles per round on each side (default 0).
    pub compute: u64,
}

impl Default for PingPongParams {
    fn default() -> Self {
        PingPongParams { rounds: 10_000, bytes: 100, compute: 0 }
    }
}

impl Options for PingPongParams {
    const PARAMS: &'static [Param<PingPongParams>] = &[
        int_param!(rounds, 1, 1_000_000_000, "round trips N").always(),
        int_param!(bytes, 1, 1 << 20, "message size").unit("bytes"),
        int_param!(compute, 0, 10_000_000_000, "user-mode work per round on each side").unit("cycles"),
    ];
}

impl WorkloadKind for PingPongParams {
    const NAME: &'static str = "pingpong";
    const SUMMARY: &'static str = "two tasks bouncing one message";
    /// Tasks, channels and program operations of [`PingPongParams::build`].
    fn footprint(&self) -> Footprint {
        Footprint { tasks: 3, channels: 2, ops: 3 + 2 * 4 }
    }

    /// Build the workload (see the module documentation for its shape).
    fn build(&self) -> Result<Workload, SpecError> {
        WorkloadKind::check(self)?;
        let &PingPongParams { rounds, bytes, compute } = self;
        let work = (compute > 0).then_some(Op::Compute { cycles: compute });
        let send = |chan| Op::Send { chan, bytes };
        let recv = |chan| Op::Recv { chan };

        let ping_body: Vec<Op> = work.into_iter().chain([send(CHAN_A), recv(CHAN_B)]).collect();
        let pong_body: Vec<Op> = [recv(CHAN_A)].into_iter().chain(work).chain([send(CHAN_B)]).collect();
        let mut ping = Vec::new();
        push_loop(&mut ping, rounds, &ping_body);
        let mut pong = Vec::new();
        push_loop(&mut pong, rounds, &pong_body);

        let root =
            vec![Op::Spawn { program: 2, params: in_mm(3) }, Op::Spawn { program: 1, params: in_mm(2) }, Op::Exit];
        Ok(Workload {
            spec: options::canonical(Self::NAME, self),
            programs: vec![
                Program { role: "root".into(), ops: root },
                Program { role: "ping".into(), ops: ping },
                Program { role: "pong".into(), ops: pong },
            ],
            channels: 2,
            root: 0,
            root_params: in_mm(1),
            metric: Metric::counting("round trips/s", vec![false, true]),
            expected_messages: 2 * rounds as u64,
            expected_tasks: 3,
            bound: Vec::new(),
            working_set: Vec::new(),
            buffers: Vec::new(),
        })
    }
}
