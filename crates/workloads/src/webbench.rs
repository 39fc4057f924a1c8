//! WebBench: an Apache 1.3 web server whose httpd processes stay runnable, under the
//! 256 client threads of WebBench 3.0 — the workload of the task-structure colouring
//! paper (Yamamura et al., USENIX 2002; S6 in docs/sources.md).
//!
//! `webbench:servers=N[,clients=256,requests=..,depth=..,work=..,ws=..,irq=..,bytes=..,rtt=..,span=..,warmup=..]`
//!
//! | task | process | program |
//! |------|---------|---------|
//! | root | the controller, SCHED_FIFO above the clients | `Spawn httpd_k` for every server k; `Spawn nic_c` for every client c; `Send go_c` to every client (`StartClock` first); with `span`: `Sleep warmup; StartClock; Sleep span; StopClock`; `Exit` |
//! | `httpd` k | mm 2 + k | `Loop requests { Recv req_k; Compute work (over ws bytes of its own memory); Send reply_(k mod clients) bytes }` |
//! | `nic` c | kernel (mm 0), SCHED_FIFO | `Recv go_c`; `Send req_k` × depth for each of its servers; `Loop requests − depth { for each k: Recv reply_c; Sleep rtt; Compute irq; Send req_k }`; drain the last replies — receives **counted** |
//!
//! **Connections.** Server k is served by client `k mod clients`: its own request
//! channel, and the client's reply channel, shared by the client's servers. A client
//! takes replies in whatever order they come and sends each next request to its next
//! server in turn. There are `min(servers, clients)` client tasks.
//!
//! **What the clients are.** As in NetBench, the 28 client PCs cost the server only
//! the interrupt and protocol work their packets cause: a `nic` task stands for a
//! client thread together with the server NIC's interrupt path. It waits out the
//! round trip between a reply leaving the server and the next request arriving
//! (`Sleep rtt`: the wire and the client PC), then does the request's interrupt and
//! protocol work (`Compute irq`, on whichever CPU it runs: the receiving CPU); it is
//! SCHED_FIFO so that it runs ahead of every httpd, like an interrupt.
//!
//! **Why the httpds stay runnable.** The source kept 256–1024 httpd processes
//! runnable on the run queue ("256 httpd always runnable"). The server is the
//! bottleneck: a request waits far longer for a CPU than it spends on the wire, so an
//! httpd that answered has its next request back after `rtt` and is runnable again long
//! before its turn comes round. Two facts of the benchmark make this so, and the model
//! keeps both: the clients are other machines, so a reply's round trip takes wire time
//! during which the httpd sleeps in `read` and the scheduler picks another httpd; and
//! the clients are started by WebBench's controller, not by a process competing for
//! the server's CPUs. Each connection carries `depth` requests at once (HTTP
//! keep-alive under a saturating load keeps the next one queued); `depth=1` is the
//! strictly synchronous client.
//!
//! **What is measured.** WebBench measures while every client keeps making requests,
//! so the source's httpds are runnable for all of it. A fixed request count per client
//! (`requests`, with `span=0`) holds that only until the first clients have made their
//! last requests: from there their httpds leave and the run queue drains, and how soon
//! depends on how evenly a policy serves. With `span` > 0 the clients keep making
//! requests (`requests` is not used: each makes up to [`UNTIL_STOPPED`]) and the
//! controller measures a span of that length after `warmup`, past the start's
//! transient: the simulator ends the run at the span's end (`StopClock`), so every
//! figure of its report covers the benchmark's conditions. The experiments use
//! `span=2s` with the default `warmup=1s`; both are readings (WebBench's own test
//! length is not in the sources), and docs/fidelity.md shows that the results do not
//! depend on them. With `span=0` the clock starts with the clients and the whole run
//! is measured.
//!
//! **Working set.** Each httpd computes over its own `ws` bytes (request and reply
//! buffers, heap, the page's file data: [`Workload::working_set`]), so that on the
//! simulator its lines compete in the L2 with the task structures' hot lines —
//! which is what makes too few colours, or too small a cache, cost bus transactions.
//!
//! **Defaults** (WebBench's page mix and Apache's per-request cost on a 200 MHz
//! Pentium Pro are **[UNKNOWN]**; each is a documented reading and a parameter):
//! * `clients=256` client threads (the source's).
//! * `requests=10` per httpd (a fixed count so that every run completes and conserves
//!   messages; 2,560–10,240 requests per run at 256–1,024 servers).
//! * `depth=2` requests in flight per connection.
//! * `work=400000` cycles per request in the httpd (2 ms at 200 MHz: parsing, a
//!   page-cache lookup, building headers, `writev` of a ~6 KB page).
//! * `ws=16384` bytes of memory the httpd works through per request.
//! * `irq=20000` cycles of interrupt and TCP work per request on the server (100 µs
//!   at 200 MHz: connection set-up, request receive, reply transmit, tear-down).
//! * `bytes=6144` per reply (WebBench 3.0's static mix averages a few KB).
//! * `span=0` (a fixed request count, measured to the end) and `warmup=1s`.
//! * `rtt=512000` ns from a reply leaving to the next request arriving: the wire time
//!   of a default reply and request at the 100 Mbit/s of the source's EtherExpress
//!   Pro/100 NICs and client network, `(6144 + 256) · 8 bit / 100 Mbit/s`; the client
//!   PC's own processing is **[UNKNOWN]** and not added.
//!
//! **Start.** The root is the benchmark's controller: it runs SCHED_FIFO above the
//! clients (the controller is not one of the server's processes, so setting up never
//! waits behind an httpd), spawns every httpd and client, and then starts the clients.
//! Otherwise 2.4's fork, which halves the parent's `counter` at every fork, leaves the
//! root behind the first httpds it starts, and the clients start a few at a time.
//!
//! `expected_tasks = 1 + N + min(N, C)`, `expected_messages = 2·N·requests + min(N, C)`.

use crate::spec::WorkloadKind;
use crate::{in_mm, push_loop, Footprint, Metric, Op, Program, Workload};
use schedlab_core::options::{self, Options, Param};
use schedlab_core::{int_param, time_param};
use schedlab_core::{SchedClass, SpecError, TaskParams};

/// Bytes of an HTTP request on the wire.
pub const REQUEST_BYTES: u32 = 256;
/// Requests per client with a measured span (`span` > 0): far more than a span takes
/// (2^30: at the defaults a client makes one request per millisecond or so).
pub const UNTIL_STOPPED: u32 = 1 << 30;
/// Real-time priority of the `nic` tasks (interrupt stand-ins).
pub const NIC_RT_PRIORITY: u8 = 50;
/// Real-time priority of the root (the benchmark's controller, outside the server).
pub const CONTROLLER_RT_PRIORITY: u8 = NIC_RT_PRIORITY + 1;

/// Parameters of a WebBench run (see the module documentation for the defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WebbenchParams {
    pub servers: u32,
    pub clients: u32,
    pub requests: u32,
    pub depth: u32,
    pub work: u64,
    pub ws: u32,
    pub irq: u64,
    pub bytes: u32,
    pub rtt: u64,
    /// Length of the measured span in ns; 0: each client makes `requests` requests and
    /// the run is measured to its end.
    pub span: u64,
    /// Time from the clients' start to the measured span's, in ns (with `span` > 0).
    pub warmup: u64,
}

impl Default for WebbenchParams {
    fn default() -> Self {
        WebbenchParams {
            servers: 256,
            clients: 256,
            requests: 10,
            depth: 2,
            work: 400_000,
            ws: 16384,
            irq: 20_000,
            bytes: 6144,
            rtt: 512_000,
            span: 0,
            warmup: 1_000_000_000,
        }
    }
}

impl Options for WebbenchParams {
    const PARAMS: &'static [Param<WebbenchParams>] = &[
        int_param!(servers, 1, 4096, "httpd processes").always(),
        int_param!(clients, 1, 4096, "client threads"),
        int_param!(requests, 1, 10_000_000, "requests per client thread"),
        int_param!(depth, 1, 16, "requests in flight per connection"),
        int_param!(work, 0, 100_000_000_000, "Apache's work per request").unit("cycles"),
        int_param!(ws, 0, 1 << 20, "working set touched per request").unit("bytes"),
        int_param!(irq, 0, 100_000_000_000, "interrupt work per request").unit("cycles"),
        int_param!(bytes, 1, 1 << 24, "reply size").unit("bytes"),
        time_param!(
            rtt,
            0,
            10_000_000_000,
            "from a reply leaving to the next request arriving (the wire and the client)"
        )
        .bare_ns(),
        time_param!(
            span,
            0,
            3_600_000_000_000,
            "measured span, during which every client keeps making requests (0: every client makes `requests` requests and the whole run is measured)"
        )
        .bare_ns(),
        time_param!(warmup, 0, 3_600_000_000_000, "from the clients' start to the measured span's (with span > 0)")
            .bare_ns(),
    ];

    fn check_across(&self) -> Result<(), String> {
        match self.depth <= self.requests {
            true => Ok(()),
            false => Err(format!(
                "depth={} must not exceed requests={} (a connection cannot carry more requests than it makes)",
                self.depth, self.requests
            )),
        }
    }
}

impl WorkloadKind for WebbenchParams {
    const NAME: &'static str = "webbench";
    const SUMMARY: &'static str = "Apache httpds kept runnable by WebBench clients";
    /// Tasks, channels and program operations of [`WebbenchParams::build`].
    fn footprint(&self) -> Footprint {
        let (n, c) = (self.servers as u64, self.nics() as u64);
        let span_ops = if self.span > 0 { 2 + (self.warmup > 0) as u64 } else { 0 };
        Footprint {
            tasks: 1 + n + c,
            channels: n + 2 * c,
            // The root: its spawns and gos, StartClock and Exit, and with a measured
            // span the sleeps and the StopClock.
            ops: 2 + n + 2 * c + span_ops + 6 * n + (self.depth as u64 + 5) * n + 5 * c,
        }
    }

    /// Build the workload (see the module documentation for its shape).
    fn build(&self) -> Result<Workload, SpecError> {
        WorkloadKind::check(self)?;
        let p = *self;
        // With a measured span the clients keep making requests until it ends.
        let requests = if p.span > 0 { UNTIL_STOPPED } else { p.requests };
        let (n, nics) = (p.servers, p.nics());
        // Program ids: 0 root, 1 + k httpd k, 1 + n + c nic c.
        let httpd = |k: u32| 1 + k;
        let nic = |c: u32| 1 + n + c;
        // Channels: a request channel per httpd, then a reply and a go channel per client.
        let clients = p.clients;
        let (req, reply, go) = (|k: u32| k, |k: u32| n + k % clients, |c: u32| n + nics + c);
        let nic_params = TaskParams { class: SchedClass::Fifo, rt_priority: NIC_RT_PRIORITY, mm: 0, ..in_mm(0) };

        let mut root = Vec::with_capacity((n + nics) as usize + 1);
        root.extend((0..n).map(|k| Op::Spawn { program: httpd(k), params: in_mm(2 + k) }));
        root.extend((0..nics).map(|c| Op::Spawn { program: nic(c), params: nic_params }));
        // The benchmark starts once every process exists (WebBench starts its clients
        // against a pre-forked server): until then the clients wait for the go.
        if p.span == 0 {
            root.push(Op::StartClock);
        }
        root.extend((0..nics).map(|c| Op::Send { chan: go(c), bytes: 1 }));
        if p.span > 0 {
            // The controller measures a span of fixed length once the start's
            // transient is over, while every client keeps making requests.
            if p.warmup > 0 {
                root.push(Op::Sleep { ns: p.warmup });
            }
            root.push(Op::StartClock);
            root.push(Op::Sleep { ns: p.span });
            root.push(Op::StopClock);
        }
        root.push(Op::Exit);

        let mut programs = Vec::with_capacity(1 + (n + nics) as usize);
        programs.push(Program { role: "root".into(), ops: root });
        let mut working_set = Vec::with_capacity(if p.ws > 0 { n as usize } else { 0 });
        for k in 0..n {
            let mut body = vec![Op::Recv { chan: req(k) }];
            if p.work > 0 {
                body.push(Op::Compute { cycles: p.work });
            }
            body.push(Op::Send { chan: reply(k), bytes: p.bytes });
            let mut ops = Vec::with_capacity(body.len() + 2);
            push_loop(&mut ops, requests, &body);
            ops.push(Op::Exit);
            programs.push(Program { role: "httpd".into(), ops });
            if p.ws > 0 && p.work > 0 {
                working_set.push((httpd(k), p.ws));
            }
        }
        let mut bound = Vec::with_capacity(nics as usize);
        for c in 0..nics {
            let mine: Vec<u32> = (c..n).step_by(p.clients as usize).collect();
            let mut ops = vec![Op::Recv { chan: go(c) }];
            for &k in &mine {
                ops.extend((0..p.depth).map(|_| Op::Send { chan: req(k), bytes: REQUEST_BYTES }));
            }
            if requests > p.depth {
                let mut body = Vec::with_capacity(3 * mine.len());
                for &k in &mine {
                    // Whichever of its httpds answered, the client's next request goes
                    // to the next one in turn: every httpd keeps `depth` requests on
                    // average, and a slow one never holds up the others.
                    body.push(Op::Recv { chan: reply(k) });
                    if p.rtt > 0 {
                        body.push(Op::Sleep { ns: p.rtt });
                    }
                    if p.irq > 0 {
                        body.push(Op::Compute { cycles: p.irq });
                    }
                    body.push(Op::Send { chan: req(k), bytes: REQUEST_BYTES });
                }
                push_loop(&mut ops, requests - p.depth, &body);
            }
            let drain: Vec<Op> = mine.iter().map(|&k| Op::Recv { chan: reply(k) }).collect();
            push_loop(&mut ops, p.depth, &drain);
            ops.push(Op::Exit);
            programs.push(Program { role: "nic".into(), ops });
            bound.push((nic(c), c));
        }

        let counted = (0..n + 2 * nics).map(|ch| (n..n + nics).contains(&ch)).collect();
        Ok(Workload {
            spec: options::canonical(Self::NAME, self),
            programs,
            channels: n + 2 * nics,
            root: 0,
            // The root stands for WebBench's controller, which runs outside the server:
            // real-time above the clients, so that setting up the processes and
            // starting the clients never waits behind an httpd.
            root_params: TaskParams { class: SchedClass::Fifo, rt_priority: CONTROLLER_RT_PRIORITY, ..in_mm(1) },
            metric: Metric::counting("requests/s", counted),
            expected_messages: 2 * n as u64 * requests as u64 + nics as u64,
            expected_tasks: 1 + n as u64 + nics as u64,
            bound,
            working_set,
            buffers: Vec::new(),
        })
    }
}

impl WebbenchParams {
    /// Client tasks: one per client thread that has a server.
    fn nics(&self) -> u32 {
        self.servers.min(self.clients)
    }
}
