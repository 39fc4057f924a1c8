//! Chat: the IBM LTC chat-room benchmark (`lbs.sourceforge.net`), VolanoMark without Java.
//!
//! `chat:rooms=R,messages=M[,users=20,bytes=100,think=0,work=300,connection=tcp,window=0]`
//!
//! A client process and a server process talk over loopback TCP. Each room has
//! `users` users (20 in the original); each user is one connection served by **four
//! threads**. The programs follow the benchmark's source, `chat_c.c` and `chat_s.c`
//! (Bill Hartner, IBM, 2000, version 1.0.1):
//!
//! | task | process | program |
//! |------|---------|---------|
//! | `client_send`    | client (mm 1) | `Recv go_send[u]; Loop M { [Compute think]; Send c2s[u] }` |
//! | `server_receive` | server (mm 2) | `Loop M { Recv c2s[u]; Send wake[u] }` — receives **counted** |
//! | `server_send`    | server (mm 2) | `Loop M { Recv wake[u]; [Compute work]; Send s2c[v] for each other user v of the room }` |
//! | `client_receive` | client (mm 1) | `Recv go_receive[u]; Loop M·(users−1) { Recv s2c[u] }` — receives **counted** |
//!
//! So every message a user sends is broadcast to the other `users − 1` users of its
//! room: with the defaults a room delivers 20·M·19 messages (M = 100 → 38,000). As in
//! the source, a user's `server_receive` reads its connection and signals its own
//! `server_send` through a semaphore (`wake[u]`), and that one thread writes the
//! message to the other users' connections. The metric is the client's: messages sent
//! plus messages received, per second ("messages/s"; a sent message is counted when
//! the server reads it). All receives are blocking, so the scheduler runs extremely
//! often.
//!
//! **Channels.** User `u` (global index `room·users + i`) owns five channels:
//! `c2s[u] = 5u` (its TCP connection, client → server), `wake[u] = 5u + 1` (the room
//! semaphore's slot of user u), `s2c[u] = 5u + 2` (the connection, server → client),
//! and the client's start semaphore as seen by its two threads, `go_send[u] = 5u + 3`
//! and `go_receive[u] = 5u + 4`; two more carry the start (below). Every channel has
//! exactly one receiver. `expected_messages = R·users·(M·(users + 1) + 3) + 2`.
//!
//! **Full connections.** A TCP connection holds only so much unread data, so a
//! `server_send` that runs ahead of a slow `client_receive` (or a `client_send` ahead
//! of its `server_receive`) blocks until the reader catches up. Both directions of
//! every connection are [`Buffer::Tcp`]: bounded by the modelled kernel's window and
//! send buffer (on the 2.4 presets 81,919 payload bytes, 819 messages of 100 bytes; see
//! [`crate::buffers`] for the derivation and why it is an upper bound). `window=N`
//! replaces that bound by `N` messages (a sender woken once half are read), to show
//! what other readings give; `connection=unbounded` (without `window`) leaves them
//! unbounded.
//!
//! **Costs.** Almost all of Chat's cost is kernel time — socket sends and blocking
//! receives, wake-ups and context switches — which the engines charge per `Send` and
//! `Recv` themselves. The user-mode compute in the programs is therefore small: `work`
//! cycles (default [`DEFAULT_WORK`]) per message in `server_send` for the broadcast
//! loop's bookkeeping, and an optional client think time `think` (default 0) before
//! each send (the source has none).
//!
//! **Start.** As in the source, every thread exists before the test starts, each
//! program creates its own, and the client times only the test:
//!
//! | task | process | program |
//! |------|---------|---------|
//! | root (`chat_c`'s main) | client (mm 1) | `Spawn server_main; Send accept; for each user u { Send accept; Spawn client_send[u], client_receive[u] }; Recv start; StartClock; for each u { Send go_send[u], go_receive[u] }` |
//! | `server_main` (`chat_s`'s main) | server (mm 2) | `Recv accept; for each user u { Recv accept; Spawn server_receive[u], server_send[u] }; Send start` |
//!
//! `chat_s` is a process of its own, asleep in `accept` when the client starts; the
//! root's first spawn stands for its start from the same shell (a fork from the
//! shell's CPU, placed by the policy's fork path as the root's children are). The
//! client's main thread connects the control connection and sends the start message,
//! then connects each user's connection and creates that user's two threads, each of
//! which waits on the start semaphore; the server's main thread accepts each
//! connection (`accept`, the listening socket, woken once per connection; its backlog
//! of 4,096 never fills) and creates that connection's receive and send threads; when
//! it has them all it sends `CLIENT_START` on the control connection (`start`). The
//! client's main thread then reads its start time ([`Op::StartClock`]: the metric's
//! elapsed time runs from here to the end of the run, as `chat_c`'s `gettimeofday`
//! before the release) and releases its threads. The source releases them with one
//! `semop`, and 2.4 has no kernel preemption, so every client thread is runnable
//! before any of them runs on the releasing CPU; the root runs SCHED_FIFO so that the
//! model's one release per thread is just as uninterrupted. The root then exits, as
//! does the server's main thread once it has sent the start (the real one sleeps until
//! the end): `expected_tasks = 4·users·R + 2` (80R + 2 with the default 20 users).
//! The two start channels are `accept = 5·users·R` and `start = 5·users·R + 1`.
//!
//! `threads=root` is an ablation of the start: the root creates every thread of
//! both programs (the server's in the server's address space, under SCHED_OTHER as
//! its main thread would), no `server_main` runs, and the root reads its clock and
//! releases the clients as soon as the last thread exists (`expected_tasks = 4·users·R
//! + 1`; the two start channels stay unused). It isolates what the server creating
//! its own threads changes: which threads hold the larger 2.4 counters at the release
//! (`docs/fidelity.md`, chat-smp).

use crate::spec::WorkloadKind;
use crate::{in_mm, push_loop, Buffer, Footprint, Metric, Op, Program, Workload};
use schedlab_core::int_param;
use schedlab_core::options::{self, Options, Param, Value};
use schedlab_core::{SchedClass, SpecError, TaskParams};

/// Address space of the client process (client tasks and the root).
pub const CLIENT_MM: u32 = 1;
/// Address space of the server process.
pub const SERVER_MM: u32 = 2;
/// Default user-mode cycles `server_send` spends per message on broadcast bookkeeping.
pub const DEFAULT_WORK: u64 = 300;
/// Real-time priority of the root while it sets the test up and releases the clients.
pub const START_RT_PRIORITY: u8 = 1;

/// Parameters of a Chat run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChatParams {
    /// Chat rooms R (1..=1000).
    pub rooms: u32,
    /// Messages each user sends, M (1..=1,000,000).
    pub messages: u32,
    /// Users per room (2..=1000; 20 in the original).
    pub users: u32,
    /// Message size in bytes (100 in the original).
    pub bytes: u32,
    /// Client think time before each send, in cycles (0 = none).
    pub think: u64,
    /// Server user-mode cycles per received message (broadcast bookkeeping).
    pub work: u64,
    /// `true` (default): connections hold what the modelled kernel's TCP buffers
    /// hold; `false`: unbounded (option `connection=tcp|unbounded`).
    pub bounded: bool,
    /// Unread messages a connection holds before its sender blocks, replacing the
    /// kernel's bound (0: the kernel's).
    pub window: u32,
    /// `true` (default): each program creates its own threads, as `chat_c` and
    /// `chat_s` do; `false`: the root creates every thread of both programs
    /// (option `threads=own|root`).
    pub own_threads: bool,
}

impl Default for ChatParams {
    fn default() -> Self {
        ChatParams {
            rooms: 10,
            messages: 100,
            users: 20,
            bytes: 100,
            think: 0,
            work: DEFAULT_WORK,
            bounded: true,
            window: 0,
            own_threads: true,
        }
    }
}

impl Options for ChatParams {
    const PARAMS: &'static [Param<ChatParams>] = &[
        int_param!(rooms, 1, 1000, "chat rooms R").always(),
        int_param!(messages, 1, 1_000_000, "messages each user sends, M").always(),
        int_param!(users, 2, 1000, "users per room (20 in the original)"),
        int_param!(bytes, 1, 1 << 20, "message size").unit("bytes"),
        int_param!(think, 0, 10_000_000_000, "client think time before each send").unit("cycles"),
        int_param!(work, 0, 10_000_000_000, "server user-mode work per received message (broadcast bookkeeping)")
            .unit("cycles"),
        Param::choice(
            "connection",
            &["tcp", "unbounded"],
            "tcp: a connection holds what the modelled kernel's TCP window and send buffer hold (a full one blocks its sender); unbounded: no send blocks",
            |p| Value::Word(if p.bounded { "tcp" } else { "unbounded" }),
            |p, v| p.bounded = v.word() == "tcp",
        ),
        int_param!(window, 0, 1_000_000, "unread messages a connection holds, replacing the kernel's bound (0: the kernel's)")
            .unit("messages"),
        Param::choice(
            "threads",
            &["own", "root"],
            "own: each program creates its own threads, as chat_c and chat_s do; root: the client's main thread (SCHED_FIFO) creates every thread of both programs and no server main thread runs",
            |p| Value::Word(if p.own_threads { "own" } else { "root" }),
            |p, v| p.own_threads = v.word() == "own",
        ),
    ];
}

impl WorkloadKind for ChatParams {
    const NAME: &'static str = "chat";
    const SUMMARY: &'static str = "IBM LTC Chat (VolanoMark-like): rooms of users, each message broadcast to the room";
    /// Tasks, channels and program operations of [`ChatParams::build`], from the
    /// parameters alone (checked against the built workload by the tests).
    fn footprint(&self) -> Footprint {
        let nu = self.rooms as u64 * self.users as u64;
        // client_send 4, server_receive 3, server_send 3 + users, client_receive 3.
        let per_user = 4 + 3 + (3 + self.users as u64) + 3;
        // Own threads: the root 5·nu + 5 (its Exit explicit), server_main 3·nu + 2.
        // Root's threads: the root 6·nu + 2 and no server_main.
        let (mains, setup_ops) = if self.own_threads { (2, 8 * nu + 7) } else { (1, 6 * nu + 2) };
        Footprint { tasks: 4 * nu + mains, channels: 5 * nu + 2, ops: setup_ops + nu * per_user }
    }

    /// Build the workload (see the module documentation for its shape).
    fn build(&self) -> Result<Workload, SpecError> {
        WorkloadKind::check(self)?;
        let &ChatParams { rooms, messages: m, users, bytes, think, work, bounded, window, own_threads } = self;
        let nusers = rooms * users; // ≤ 10^6
        let c2s = |u: u32| 5 * u;
        let wake = |u: u32| 5 * u + 1;
        let s2c = |u: u32| 5 * u + 2;
        let go_send = |u: u32| 5 * u + 3;
        let go_receive = |u: u32| 5 * u + 4;
        // ≤ 10^6 · 999 < 2^32, guaranteed by the ranges.
        let fanout = m * (users - 1);

        // Program ids: 0 = root, then 1 + 4u + role in role order below, then
        // server_main.
        const CLIENT_SEND: u32 = 0;
        const SERVER_RECEIVE: u32 = 1;
        const SERVER_SEND: u32 = 2;
        const CLIENT_RECEIVE: u32 = 3;
        let prog = |u: u32, role: u32| 1 + 4 * u + role;
        let server_main = 1 + 4 * nusers;
        // The server's listening socket and the control connection's reply.
        let accept = 5 * nusers;
        let start = 5 * nusers + 1;

        let mut programs = Vec::with_capacity(2 + 4 * nusers as usize);
        let mut body = Vec::with_capacity(users as usize + 1);

        // Root, `chat_c`'s main thread: start the server, connect the control
        // connection, then each user's connection with its two threads; wait for the
        // server's start, read the clock, release every client thread. With
        // `threads=root` it creates the server's threads too, and starts at once.
        let mut root = Vec::with_capacity(6 * nusers as usize + 5);
        if own_threads {
            root.push(Op::Spawn { program: server_main, params: in_mm(SERVER_MM) });
            root.push(Op::Send { chan: accept, bytes: 0 });
            for u in 0..nusers {
                root.push(Op::Send { chan: accept, bytes: 0 });
                for role in [CLIENT_SEND, CLIENT_RECEIVE] {
                    root.push(Op::Spawn { program: prog(u, role), params: in_mm(CLIENT_MM) });
                }
            }
            root.push(Op::Recv { chan: start });
        } else {
            for u in 0..nusers {
                for role in [CLIENT_SEND, SERVER_RECEIVE, SERVER_SEND, CLIENT_RECEIVE] {
                    let mm = if matches!(role, CLIENT_SEND | CLIENT_RECEIVE) { CLIENT_MM } else { SERVER_MM };
                    root.push(Op::Spawn { program: prog(u, role), params: in_mm(mm) });
                }
            }
        }
        root.push(Op::StartClock);
        for u in 0..nusers {
            root.push(Op::Send { chan: go_send(u), bytes: 0 });
            root.push(Op::Send { chan: go_receive(u), bytes: 0 });
        }
        root.push(Op::Exit);
        programs.push(Program { role: "root".into(), ops: root });

        for u in 0..nusers {
            let room_first = u / users * users;

            // client_send
            body.clear();
            if think > 0 {
                body.push(Op::Compute { cycles: think });
            }
            body.push(Op::Send { chan: c2s(u), bytes });
            let mut ops = Vec::with_capacity(2 + body.len());
            ops.push(Op::Recv { chan: go_send(u) });
            push_loop(&mut ops, m, &body);
            programs.push(Program { role: "client_send".into(), ops });

            // server_receive: read the connection, signal this user's server_send.
            let mut ops = Vec::with_capacity(3);
            push_loop(&mut ops, m, &[Op::Recv { chan: c2s(u) }, Op::Send { chan: wake(u), bytes: 0 }]);
            programs.push(Program { role: "server_receive".into(), ops });

            // server_send: broadcast to the other users of the room.
            body.clear();
            body.push(Op::Recv { chan: wake(u) });
            if work > 0 {
                body.push(Op::Compute { cycles: work });
            }
            for v in (room_first..room_first + users).filter(|&v| v != u) {
                body.push(Op::Send { chan: s2c(v), bytes });
            }
            let mut ops = Vec::with_capacity(1 + body.len());
            push_loop(&mut ops, m, &body);
            programs.push(Program { role: "server_send".into(), ops });

            // client_receive
            let mut ops = Vec::with_capacity(3);
            ops.push(Op::Recv { chan: go_receive(u) });
            push_loop(&mut ops, fanout, &[Op::Recv { chan: s2c(u) }]);
            programs.push(Program { role: "client_receive".into(), ops });
        }

        // `chat_s`'s main thread: accept the control connection, then each user's
        // connection, creating its receive and send threads; then tell the client.
        if own_threads {
            let mut server = Vec::with_capacity(3 * nusers as usize + 2);
            server.push(Op::Recv { chan: accept });
            for u in 0..nusers {
                server.push(Op::Recv { chan: accept });
                for role in [SERVER_RECEIVE, SERVER_SEND] {
                    server.push(Op::Spawn { program: prog(u, role), params: in_mm(SERVER_MM) });
                }
            }
            server.push(Op::Send { chan: start, bytes: 0 });
            programs.push(Program { role: "server_main".into(), ops: server });
        }

        let channels = 5 * nusers + 2;
        // A user's two connections: counted, and bounded as the connection reading says.
        let connection_chan = |c: u32| c < 5 * nusers && (c.is_multiple_of(5) || c % 5 == 2);
        let counted = (0..channels).map(connection_chan).collect();
        let (nu, m, users) = (nusers as u64, m as u64, users as u64);
        Ok(Workload {
            spec: options::canonical(Self::NAME, self),
            programs,
            channels,
            root: 0,
            root_params: TaskParams { class: SchedClass::Fifo, rt_priority: START_RT_PRIORITY, ..in_mm(CLIENT_MM) },
            metric: Metric::counting("messages/s", counted),
            expected_messages: if own_threads { nu * (m * (users + 1) + 3) + 2 } else { nu * (m * (users + 1) + 2) },
            expected_tasks: if own_threads { 4 * nu + 2 } else { 4 * nu + 1 },
            bound: Vec::new(),
            working_set: Vec::new(),
            buffers: {
                let connection = match (bounded, window) {
                    (_, w) if w > 0 => Buffer::Window { max: w, wake_at: w / 2 },
                    (true, _) => Buffer::Tcp,
                    (false, _) => Buffer::Unbounded,
                };
                (0..channels).map(|c| if connection_chan(c) { connection } else { Buffer::Unbounded }).collect()
            },
        })
    }
}
