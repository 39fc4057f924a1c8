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

use crate::{check_range, in_mm, push_loop, Footprint, Metric, Op, Program, Workload};
use schedlab_core::spec::Spec;
use schedlab_core::SpecError;
use std::ops::RangeInclusive;

/// Keys accepted in a `pingpong:` spec, in canonical order.
pub const KEYS: &[&str] = &["rounds", "bytes", "compute"];

/// Channel ping → pong.
pub const CHAN_A: u32 = 0;
/// Channel pong → ping (counted).
pub const CHAN_B: u32 = 1;

const ROUNDS: RangeInclusive<u32> = 1..=1_000_000_000;
const BYTES: RangeInclusive<u32> = 1..=1 << 20;
const CYCLES: RangeInclusive<u64> = 0..=10_000_000_000;

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

impl PingPongParams {
    /// Read the parameters from a parsed `pingpong:` spec (consumes and finishes it).
    pub fn from_spec(spec: &mut Spec) -> Result<PingPongParams, SpecError> {
        let d = PingPongParams::default();
        let p = PingPongParams {
            rounds: spec.get("rounds", d.rounds, ROUNDS)?,
            bytes: spec.get("bytes", d.bytes, BYTES)?,
            compute: spec.get("compute", d.compute, CYCLES)?,
        };
        spec.finish(KEYS)?;
        Ok(p)
    }

    /// Check every parameter against its accepted range.
    pub fn check(&self) -> Result<(), SpecError> {
        check_range("pingpong", "rounds", self.rounds, &ROUNDS)?;
        check_range("pingpong", "bytes", self.bytes, &BYTES)?;
        check_range("pingpong", "compute", self.compute, &CYCLES)
    }

    /// Canonical spec: `rounds` always, other keys when not default.
    pub fn canonical(&self) -> String {
        let d = PingPongParams::default();
        let mut s = format!("pingpong:rounds={}", self.rounds);
        if self.bytes != d.bytes {
            s += &format!(",bytes={}", self.bytes);
        }
        if self.compute != d.compute {
            s += &format!(",compute={}", self.compute);
        }
        s
    }

    /// Tasks, channels and program operations of [`PingPongParams::build`].
    pub fn footprint(&self) -> Footprint {
        Footprint { tasks: 3, channels: 2, ops: 3 + 2 * 4 }
    }

    /// Build the workload (see the module documentation for its shape).
    pub fn build(&self) -> Result<Workload, SpecError> {
        self.check()?;
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
            spec: self.canonical(),
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
        })
    }
}
