//! NetBench: an SMB file server under throttled clients, with a `ps` probe — the
//! workload of the January 2002 O(1) starvation report (S10 in docs/sources.md).
//!
//! `netbench:clients=N[,ops=..,think_ns=..,work=..,irq=..,io_ns=..,bytes=..,timeout_ns=..,probes=..,probe_every_ns=..,ps=..,fork=root|daemon,idle_ns=..,accept_ns=..,mode=fresh|live,case_ns=..,per_case=..,span=..]`
//!
//! | task | process | program |
//! |------|---------|---------|
//! | root | shell (mm 1) | `Spawn smbd_c, nic_c` for every client c; `Spawn probe`; `Exit` |
//! | `smbd` c | mm 2 + c | `Loop ops { Recv req_c; Compute work; [Sleep io]; Send reply_c bytes }` |
//! | `nic` c | kernel (mm 0), SCHED_FIFO | (with `span`: `Recv go_c`;) `Loop ops { Sleep think; Compute irq; Send req_c 128; Recv reply_c }` — receives **counted** and **timed** |
//! | `probe` | shell (mm 1) | `Loop probes { Sleep probe_every; Spawn ps }` |
//! | `ps` | mm 2 + N | `Compute ps; Exit` |
//! | `controller` (with `span`) | kernel (mm 0), SCHED_FIFO | `Recv started; StartClock; Send go_c` for every client c`; Sleep span; StopClock; Exit` |
//!
//! **What the clients are.** The clients are other machines: they cost the server
//! nothing but the network interrupt work their packets cause. A `nic` task stands for
//! client c together with its NIC's interrupt path: it waits out the client's think
//! time and network delay (`Sleep think`), does the interrupt and protocol work of the
//! request and of the reply's transmission on the server (`Compute irq`), hands the
//! request to its `smbd` (which sleeps on that socket's wait queue, like a throttled
//! smbd), and waits for the reply. It is SCHED_FIFO so that, like an interrupt, it runs
//! ahead of every time-shared task on its CPU; the reading costs it a context switch
//! pair a real interrupt does not pay (documented in `docs/policies.md`, NetBench).
//!
//! **IRQ affinity.** Client c's NIC is interrupt line c (`Workload::bound`): on a
//! machine with `irq_affinity = true` the `nic` and `smbd` tasks of client c are bound
//! to CPU `c mod cpus` (the report's "IRQ + process affinity" runs); otherwise the
//! engines leave them free.
//!
//! **Metric.** Each reply a client receives completes one operation of `bytes` bytes:
//! throughput is reported in **Mbit/s** (`per_count = (8·bytes, 10⁶)`). Every operation
//! is timed from the client's request to its reply; those later than `timeout_ns` are
//! the report's **client errors** (failed SMB operations).
//!
//! **A measured case** (`span`). NetBench runs each test case for a fixed time (3
//! minutes) with every client active and reports the throughput over it. With
//! `span` > 0 (`mode=fresh`) the run does the same: every client connects (its smbd
//! and `nic` are forked) and waits for the start; the task that forks them sends
//! `started` after its last fork, and a `controller` (NetBench's controller, a machine
//! of its own: SCHED_FIFO above the `nic`s, so its clock never waits behind the
//! server) starts the clock, starts every client at once, sleeps `span` and stops the
//! clock, which ends the run. Each
//! client does `span / think_ns + 2` operations, more than it can make in the span
//! (`ops` is not used), so every client is active for all of it; an operation still
//! outstanding at the stop that is already older than `timeout_ns` counts as a
//! time-out, as the client would have reported it. With `span=0` (the default) each
//! client does `ops` operations and the whole run is measured, to the last client's
//! end.
//!
//! **Probe.** Every `probe_every_ns` the `probe` shell forks a `ps` that computes `ps`
//! cycles and exits: its wait from fork to first run is the report's "starting any new
//! task (e.g. `ps`) could take > 2 minutes". The engines report the wait to run of every
//! role (`ps` among them), so no special probe machinery is needed.
//!
//! **Defaults.** NetBench's operation mix, sizes and throttle are **[UNKNOWN]**
//! (the report does not give them); every default is a documented reading and a parameter:
//! * `ops=4000` operations per client: with the think time below, about 84 s of client
//!   time unloaded (a fixed count, so every run completes and conserves messages; a
//!   client that starves delays the end of the run). The experiments measure a case
//!   as the report does instead, `span=180s`.
//! * `think_ns=20000000` (20 ms) between a reply and the next request: the throttle.
//! * `work=700000` cycles per operation in `smbd` (1 ms at 700 MHz: SMB parsing, a
//!   page-cache read and two copies of a 16 KB block at 2002 memory bandwidth).
//! * `irq=35000` cycles per operation of interrupt and TCP work (50 µs at 700 MHz).
//! * `io_ns=0`: the file set fits the server's 2.5 GB page cache; set it for disk waits.
//! * `bytes=16384` per operation (a 16 KB read or write).
//! * `timeout_ns=45000000000` (45 s): the Windows redirector's default session time-out
//!   (`SessTimeOut`), after which an SMB request fails.
//! * `span=0`: no measured case (the report's cases are 3 minutes: `span=180s`).
//! * `probes=30`, `probe_every_ns=2000000000` (a `ps` every 2 s for the first minute),
//!   `ps=7000000` cycles (10 ms at 700 MHz: `ps` reading `/proc` for ~100 processes).
//!
//! **Who forks the smbds** (`fork=`). `fork=root` (the default): the root forks
//! every `smbd` and `nic` at time 0 without having slept, so under O(1) every smbd
//! starts with `sleep_avg` 0 (a child inherits its parent's, times `CHILD_PENALTY`).
//! `fork=daemon`: as Samba runs, a `daemon` task (SCHED_OTHER, its own mm) forks them:
//! it first sleeps `idle_ns` (the server idled before the test: 2 s, O(1)'s
//! `MAX_SLEEP_AVG` of 2002), then for each client sleeps `accept_ns` (a blocking
//! `accept()`, 1 ms) and forks `smbd` c and then `nic` c (the client's connection and
//! its interrupt path; the `nic`'s fork halves the daemon's timeslice like any fork,
//! its only effect on the daemon). The root then only forks the daemon and the probe.
//!
//! **Cases** (`mode=`). `mode=fresh` (the default): all N clients start together on a
//! fresh server, `ops` operations each — one NetBench test case per run. `mode=live`:
//! as NetBench runs a test, clients join one live server `per_case` (4) at a time,
//! one batch per case, `case_ns` (3 minutes) apart; each client stays to the end of
//! the last case, doing `case_ns / think_ns` operations for each case it is present
//! in (`ops` when `think_ns = 0`), so a loaded case lasts longer than `case_ns`. The
//! run for N clients plays the cases 4, 8, …, N; the smbds of the last batch have the
//! role `smbd` (the ones a case adds, meeting a run queue of earlier, long-lived
//! smbds), the earlier ones `smbd_early`. A live sweep over N gives per-case figures
//! for the smbds that join in that case; throughput and time-outs are over the run.
//! The batches are timed by the forking task (the daemon, or the root with
//! `fork=root`), which sleeps `case_ns` between them.
//!
//! `expected_tasks = 1 + 2N + (probes > 0) + probes (+ 1 with the daemon, + 1 with
//! a span)`, `expected_messages = 2 · Σ ops per client (+ 1 + N with a span)`.

use crate::spec::WorkloadKind;
use crate::{in_mm, push_loop, Footprint, Metric, Op, Program, Workload};
use schedlab_core::options::{self, Options, Param, Value};
use schedlab_core::{int_param, time_param};
use schedlab_core::{SchedClass, SpecError, TaskParams};

/// Who forks the smbds (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fork {
    Root,
    Daemon,
}

/// One case per run, or clients joining one live server (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Fresh,
    Live,
}

/// Largest number of operations all clients of one run may do together: bounds a
/// run's events and time.
/// Largest number of operations of one client.
pub const MAX_CLIENT_OPS: u32 = 100_000_000;

/// Largest number of operations all clients of one run may do together: bounds a
/// run's events and time.
pub const MAX_TOTAL_OPS: u64 = 500_000_000;

/// Bytes of an SMB request on the wire (the reply carries `bytes`).
pub const REQUEST_BYTES: u32 = 128;
/// Real-time priority of the `nic` tasks (interrupt stand-ins): above every
/// time-shared task, the value itself only orders them among real-time tasks.
pub const NIC_RT_PRIORITY: u8 = 50;
/// Real-time priority of the `controller` (the benchmark's controller, outside the
/// server).
pub const CONTROLLER_RT_PRIORITY: u8 = NIC_RT_PRIORITY + 1;

/// Parameters of a NetBench run (see the module documentation for the defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetbenchParams {
    pub clients: u32,
    pub ops: u32,
    pub think_ns: u64,
    pub work: u64,
    pub irq: u64,
    pub io_ns: u64,
    pub bytes: u32,
    pub timeout_ns: u64,
    pub probes: u32,
    pub probe_every_ns: u64,
    pub ps: u64,
    pub fork: Fork,
    pub idle_ns: u64,
    pub accept_ns: u64,
    pub mode: Mode,
    pub case_ns: u64,
    pub per_case: u32,
    /// Length of the measured case in ns (mode=fresh); 0: every client does `ops`
    /// operations and the whole run is measured.
    pub span: u64,
}

impl Default for NetbenchParams {
    fn default() -> Self {
        NetbenchParams {
            clients: 4,
            ops: 4000,
            think_ns: 20_000_000,
            work: 700_000,
            irq: 35_000,
            io_ns: 0,
            bytes: 16384,
            timeout_ns: 45_000_000_000,
            probes: 30,
            probe_every_ns: 2_000_000_000,
            ps: 7_000_000,
            fork: Fork::Root,
            idle_ns: 2_000_000_000,
            accept_ns: 1_000_000,
            mode: Mode::Fresh,
            case_ns: 180_000_000_000,
            per_case: 4,
            span: 0,
        }
    }
}

impl Options for NetbenchParams {
    const PARAMS: &'static [Param<NetbenchParams>] = &[
        int_param!(clients, 1, 4096, "SMB clients").always(),
        int_param!(
            ops,
            1,
            MAX_CLIENT_OPS as i64,
            "operations per client (mode=fresh; mode=live with think_ns=0: per case)"
        ),
        time_param!(think_ns, 0, 3_600_000_000_000, "think time between a reply and the next request: the throttle")
            .bare_ns(),
        int_param!(work, 0, 100_000_000_000, "the server's work per operation").unit("cycles"),
        int_param!(irq, 0, 100_000_000_000, "interrupt work per packet").unit("cycles"),
        time_param!(io_ns, 0, 3_600_000_000_000, "disk wait per operation (0: the file set is in the page cache)")
            .bare_ns(),
        int_param!(bytes, 1, 1 << 24, "reply size").unit("bytes"),
        time_param!(timeout_ns, 0, 3_600_000_000_000, "an operation later than this is a time-out").bare_ns(),
        int_param!(probes, 0, 1_000_000, "ps probes"),
        time_param!(probe_every_ns, 0, 3_600_000_000_000, "time between probes").bare_ns(),
        int_param!(ps, 0, 100_000_000_000, "a probe's ps work").unit("cycles"),
        Param::choice(
            "fork",
            &["root", "daemon"],
            "who forks the smbds",
            |p| {
                Value::Word(match p.fork {
                    Fork::Root => "root",
                    Fork::Daemon => "daemon",
                })
            },
            |p, v| p.fork = if v.word() == "daemon" { Fork::Daemon } else { Fork::Root },
        ),
        time_param!(idle_ns, 0, 3_600_000_000_000, "the server idles this long before the test").bare_ns(),
        time_param!(accept_ns, 0, 3_600_000_000_000, "the server accepts one client per this").bare_ns(),
        Param::choice(
            "mode",
            &["fresh", "live"],
            "one case per run, or clients joining one live server",
            |p| {
                Value::Word(match p.mode {
                    Mode::Fresh => "fresh",
                    Mode::Live => "live",
                })
            },
            |p, v| p.mode = if v.word() == "live" { Mode::Live } else { Mode::Fresh },
        ),
        time_param!(case_ns, 1, 3_600_000_000_000, "mode=live: time between cases").bare_ns(),
        int_param!(per_case, 1, 4096, "mode=live: clients joining per case"),
        time_param!(
            span,
            0,
            3_600_000_000_000,
            "mode=fresh: the measured case, during which every client keeps making requests (0: every client does `ops` operations and the whole run is measured)"
        )
        .bare_ns(),
    ];

    fn check_across(&self) -> Result<(), String> {
        if self.span > 0 && self.mode == Mode::Live {
            return Err("span applies to mode=fresh (a live run's cases are case_ns apart)".into());
        }
        if self.span > 0 && self.think_ns == 0 {
            return Err("span needs think_ns > 0 (it sets how many operations a client can make in the span)".into());
        }
        let ops = self.client_ops();
        if let Some(c) = ops.iter().position(|&o| !(1..=MAX_CLIENT_OPS).contains(&o)) {
            return Err(format!(
                "client {c} would do {} operations (at most {}): fewer clients or a shorter case_ns",
                ops[c], MAX_CLIENT_OPS
            ));
        }
        let total: u64 = ops.iter().map(|&o| o as u64).sum();
        if total > MAX_TOTAL_OPS {
            return Err(format!(
                "{total} operations in all (at most {MAX_TOTAL_OPS}): fewer clients, fewer ops or a shorter case_ns"
            ));
        }
        Ok(())
    }
}

impl WorkloadKind for NetbenchParams {
    const NAME: &'static str = "netbench";
    const SUMMARY: &'static str = "a throttled SMB file server and a `ps` probe (NetBench)";
    /// Tasks, channels and program operations of [`NetbenchParams::build`].
    fn footprint(&self) -> Footprint {
        let n = self.clients as u64;
        let probe = (self.probes > 0) as u64;
        let daemon = (self.fork == Fork::Daemon) as u64;
        let span = (self.span > 0) as u64;
        let cases = self.cases() as u64;
        Footprint {
            tasks: 1 + 2 * n + probe + self.probes as u64 + daemon + span,
            channels: 2 * n + span * (1 + n),
            // 12 per client (smbd, nic), 6 for probe and ps, and the forks: 2 per
            // client and a sleep between cases, plus the daemon's sleeps; with a
            // span, the controller's 5 and a start per client, its fork, the
            // `started` send and each nic's wait for its start.
            ops: if daemon == 1 { 15 * n + cases + 10 } else { 14 * n + cases + 7 } + span * (7 + 2 * n),
        }
    }

    /// Build the workload (see the module documentation for its shape).
    fn build(&self) -> Result<Workload, SpecError> {
        WorkloadKind::check(self)?;
        let p = *self;
        let n = p.clients;
        // Program ids: 0 root, 1 + 2c smbd c, 2 + 2c nic c, 1 + 2n probe, 2 + 2n ps.
        let smbd = |c: u32| 1 + 2 * c;
        let nic = |c: u32| 2 + 2 * c;
        let (probe, ps) = (1 + 2 * n, 2 + 2 * n);
        let (req, reply) = (|c: u32| 2 * c, |c: u32| 2 * c + 1);
        let nic_params = TaskParams { class: SchedClass::Fifo, rt_priority: NIC_RT_PRIORITY, mm: 0, ..in_mm(0) };

        let daemon = 3 + 2 * n;
        let controller = 3 + 2 * n + (p.fork == Fork::Daemon) as u32;
        let started = 2 * n;
        let go = |c: u32| 2 * n + 1 + c;
        let spanned = p.span > 0;
        let client_ops = p.client_ops();
        // The forks of the smbds and nics, batch by batch (one batch when fresh); the
        // daemon sleeps in accept() before each fork, the root does not sleep.
        let mut forks = Vec::with_capacity(4 * n as usize + 2 * p.cases() as usize + 2);
        let by_daemon = p.fork == Fork::Daemon;
        if by_daemon && p.idle_ns > 0 {
            forks.push(Op::Sleep { ns: p.idle_ns });
        }
        for c in 0..n {
            if c > 0 && p.case_of(c) != p.case_of(c - 1) {
                forks.push(Op::Sleep { ns: p.case_ns });
            }
            if by_daemon && p.accept_ns > 0 {
                forks.push(Op::Sleep { ns: p.accept_ns });
            }
            forks.push(Op::Spawn { program: smbd(c), params: in_mm(2 + c) });
            forks.push(Op::Spawn { program: nic(c), params: nic_params });
        }
        if spanned {
            forks.push(Op::Send { chan: started, bytes: 0 });
        }
        let probe_fork = (p.probes > 0).then_some(Op::Spawn { program: probe, params: in_mm(1) });
        let mut root = Vec::with_capacity(forks.len() + 4);
        if spanned {
            let params = TaskParams { class: SchedClass::Fifo, rt_priority: CONTROLLER_RT_PRIORITY, ..in_mm(0) };
            root.push(Op::Spawn { program: controller, params });
        }
        if by_daemon {
            root.push(Op::Spawn { program: daemon, params: in_mm(3 + n) });
            root.extend(probe_fork);
        } else if p.mode == Mode::Live {
            // The root sleeps between the batches: the probe must start first.
            root.extend(probe_fork);
            root.extend_from_slice(&forks);
        } else {
            root.extend_from_slice(&forks);
            root.extend(probe_fork);
        }
        root.push(Op::Exit);
        forks.push(Op::Exit);

        let mut programs = Vec::with_capacity(4 + 2 * n as usize);
        programs.push(Program { role: "root".into(), ops: root });
        let mut bound = Vec::with_capacity(2 * n as usize);
        let last_case = p.cases() - 1;
        for c in 0..n {
            let ops_c = client_ops[c as usize];
            let mut body = vec![Op::Recv { chan: req(c) }];
            if p.work > 0 {
                body.push(Op::Compute { cycles: p.work });
            }
            if p.io_ns > 0 {
                body.push(Op::Sleep { ns: p.io_ns });
            }
            body.push(Op::Send { chan: reply(c), bytes: p.bytes });
            let mut ops = Vec::with_capacity(body.len() + 2);
            push_loop(&mut ops, ops_c, &body);
            ops.push(Op::Exit);
            let role = if p.case_of(c) == last_case { "smbd" } else { "smbd_early" };
            programs.push(Program { role: role.into(), ops });

            let mut body = Vec::with_capacity(4);
            if p.think_ns > 0 {
                body.push(Op::Sleep { ns: p.think_ns });
            }
            if p.irq > 0 {
                body.push(Op::Compute { cycles: p.irq });
            }
            body.push(Op::Send { chan: req(c), bytes: REQUEST_BYTES });
            body.push(Op::Recv { chan: reply(c) });
            let mut ops = Vec::with_capacity(body.len() + 3);
            if spanned {
                ops.push(Op::Recv { chan: go(c) });
            }
            push_loop(&mut ops, ops_c, &body);
            ops.push(Op::Exit);
            programs.push(Program { role: "nic".into(), ops });
            bound.push((smbd(c), c));
            bound.push((nic(c), c));
        }
        let mut ops = Vec::with_capacity(4);
        if p.probes > 0 {
            let spawn = Op::Spawn { program: ps, params: in_mm(2 + n) };
            if p.probe_every_ns > 0 {
                push_loop(&mut ops, p.probes, &[Op::Sleep { ns: p.probe_every_ns }, spawn]);
            } else {
                push_loop(&mut ops, p.probes, &[spawn]);
            }
        }
        ops.push(Op::Exit);
        programs.push(Program { role: "probe".into(), ops });
        let ps_ops = if p.ps > 0 { vec![Op::Compute { cycles: p.ps }, Op::Exit] } else { vec![Op::Exit] };
        programs.push(Program { role: "ps".into(), ops: ps_ops });
        if by_daemon {
            programs.push(Program { role: "daemon".into(), ops: forks });
        }
        if spanned {
            let mut ops = Vec::with_capacity(n as usize + 5);
            ops.extend([Op::Recv { chan: started }, Op::StartClock]);
            ops.extend((0..n).map(|c| Op::Send { chan: go(c), bytes: 0 }));
            ops.extend([Op::Sleep { ns: p.span }, Op::StopClock, Op::Exit]);
            programs.push(Program { role: "controller".into(), ops });
        }

        let counted = (0..2 * n + spanned as u32 * (1 + n)).map(|ch| ch < 2 * n && ch % 2 == 1).collect();
        let (n64, probes) = (n as u64, p.probes as u64);
        let total_ops: u64 = client_ops.iter().map(|&o| o as u64).sum();
        Ok(Workload {
            spec: options::canonical(Self::NAME, self),
            programs,
            channels: 2 * n + spanned as u32 * (1 + n),
            root: 0,
            root_params: in_mm(1),
            metric: Metric {
                unit: "Mbit/s".into(),
                counted,
                per_count: (8 * p.bytes as u64, 1_000_000),
                timeout_ns: Some(p.timeout_ns),
            },
            expected_messages: 2 * total_ops + spanned as u64 * (1 + n64),
            expected_tasks: 1 + 2 * n64 + (probes > 0) as u64 + probes + by_daemon as u64 + spanned as u64,
            bound,
            working_set: Vec::new(),
            buffers: Vec::new(),
        })
    }
}

impl NetbenchParams {
    /// Number of cases of a live run.
    pub fn cases(&self) -> u32 {
        match self.mode {
            Mode::Fresh => 1,
            Mode::Live => self.clients.div_ceil(self.per_case.max(1)),
        }
    }

    /// The case (0-based) in which client `c` joins.
    pub fn case_of(&self, c: u32) -> u32 {
        match self.mode {
            Mode::Fresh => 0,
            Mode::Live => c / self.per_case.max(1),
        }
    }

    /// Operations of each client: `ops` (fresh), `span / think_ns + 2` (fresh with a
    /// span: more than a client can make in it), or `case_ns / think_ns` per case the
    /// client is present in (live; `ops` per case when `think_ns = 0`).
    pub fn client_ops(&self) -> Vec<u32> {
        if self.span > 0 && self.mode == Mode::Fresh && self.think_ns > 0 {
            let n = (self.span / self.think_ns).saturating_add(2).min(u32::MAX as u64) as u32;
            return vec![n; self.clients as usize];
        }
        let per_case = match self.think_ns {
            0 => self.ops as u64,
            t => (self.case_ns / t).max(1),
        };
        (0..self.clients)
            .map(|c| match self.mode {
                Mode::Fresh => self.ops,
                Mode::Live => {
                    let n = per_case.saturating_mul((self.cases() - self.case_of(c)) as u64);
                    n.min(u32::MAX as u64) as u32
                }
            })
            .collect()
    }
}
