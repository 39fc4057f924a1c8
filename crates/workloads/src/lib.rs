//! # schedlab-workloads: the benchmarks as engine-neutral task programs
//!
//! A [`Workload`] is a set of [`Program`]s over the small instruction set of
//! [`program`] (compute, send, blocking receive, sleep, yield, spawn, exit, counted
//! loops), plus the channels they talk over and the root task that spawns everything.
//! The simulator interprets the programs in virtual time; the runtime runs them as
//! real futures. Both therefore execute exactly the same benchmark, and both step
//! through a program with the same [`Cursor`] (loop control lives in one place).
//!
//! Workloads are built from `name:key=value,...` specs ([`parse_workload`]), read
//! against the registry ([`REGISTRY`]: one line per workload file); each key's type,
//! range, default and doc is one row of the workload's options table, which
//! `schedlab list` prints:
//!
//! | spec | what it models |
//! |------|----------------|
//! | `chat:rooms=R,messages=M[,users=20,bytes=100,think=0,work=300]` | IBM LTC Chat (VolanoMark-like), [`chat`] |
//! | `hackbench:groups=G,loops=L[,fds=20,bytes=100,threads=0,channel=socket]` | Rusty Russell's hackbench, [`hackbench`] |
//! | `pingpong:rounds=N[,bytes=100,compute=0]` | two tasks bouncing one message, [`pingpong`] |
//! | `mkbench:builds=B,jobs=J,units=U[,unit_min=..,unit_max=..,io_ns=..,link=..]` | B concurrent `make -j J` builds, [`mkbench`] |
//! | `netbench:clients=N[,ops=..,think_ns=..,work=..,irq=..,timeout_ns=..,probes=..]` | a throttled SMB file server and a `ps` probe, [`netbench`] |
//! | `webbench:servers=N[,clients=256,requests=..,depth=..,work=..,ws=..,irq=..,bytes=..]` | Apache httpds kept runnable by WebBench clients, [`webbench`] |
//! | `trace:FILE[,mhz=700]` | the dependency structure of a recorded trace (`perf script`, or schedlab's own JSON), [`trace_in`] |
//!
//! Every builder produces a workload that passes [`Workload::validate`], whose
//! `expected_messages`/`expected_tasks` agree with a static execution of its programs
//! (checked by the integration tests), and whose `spec` is canonical: it round-trips
//! through [`parse_workload`] to an identical workload.
//!
//! Programs are kept compact with [`Op::Loop`]: the size of a workload grows with the
//! number of tasks, never with the number of messages.

pub mod buffers;
pub mod chat;
pub mod cursor;
pub mod footprint;
pub mod hackbench;
pub mod mkbench;
pub mod netbench;
pub mod pingpong;
pub mod program;
pub mod spec;
pub mod trace_in;
mod validate;
pub mod webbench;

pub use buffers::{Buffer, Limit, SocketBuffers};
pub use chat::ChatParams;
pub use cursor::{Cursor, MAX_LOOP_DEPTH};
pub use footprint::Footprint;
pub use hackbench::HackbenchParams;
pub use mkbench::MkbenchParams;
pub use netbench::NetbenchParams;
pub use pingpong::PingPongParams;
pub use program::{ChanId, Metric, Op, ProgId, Program, Workload};
pub use spec::{parse_workload, parse_workload_within, workload_names, WorkloadKind, WorkloadSpec, REGISTRY};
pub use validate::InvalidWorkload;
pub use webbench::WebbenchParams;

use schedlab_core::TaskParams;

/// Default task parameters in address space `mm`.
pub(crate) fn in_mm(mm: u32) -> TaskParams {
    TaskParams { mm, ..TaskParams::default() }
}

/// Builder helper: append `Loop { count, body }` followed by the body ops.
pub(crate) fn push_loop(ops: &mut Vec<Op>, count: u32, body: &[Op]) {
    debug_assert!(count >= 1 && !body.is_empty());
    ops.push(Op::Loop { count, body: body.len() as u32 });
    ops.extend_from_slice(body);
}
