//! NetBench: an SMB file server under throttled clients, with a `ps` probe — the
//! workload of the January 2002 O(1) starvation report (S10 in docs/sources.md).
//!
//! `netbench:clients=N[,ops=..,think_ns=..,work=..,irq=..,io_ns=..,bytes=..,timeout_ns=..,probes=..,probe_every_ns=..,ps=..]`
//!
//! | task | process | program |
//! |------|---------|---------|
//! | root | shell (mm 1) | `Spawn smbd_c, nic_c` for every client c; `Spawn probe`; `Exit` |
//! | `smbd` c | mm 2 + c | `Loop ops { Recv req_c; Compute work; [Sleep io]; Send reply_c bytes }` |
//! | `nic` c | kernel (mm 0), SCHED_FIFO | `Loop ops { Sleep think; Compute irq; Send req_c 128; Recv reply_c }` — receives **counted** and **timed** |
//! | `probe` | shell (mm 1) | `Loop probes { Sleep probe_every; Spawn ps }` |
//! | `ps` | mm 2 + N | `Compute ps; Exit` |
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
//! **Probe.** Every `probe_every_ns` the `probe` shell forks a `ps` that computes `ps`
//! cycles and exits: its wait from fork to first run is the report's "starting any new
//! task (e.g. `ps`) could take > 2 minutes". The engines report the wait to run of every
//! role (`ps` among them), so no special probe machinery is needed.
//!
//! **Defaults.** NetBench's operation mix, sizes and throttle are **[UNKNOWN]**
//! (the report does not give them); every default is a documented reading and a parameter:
//! * `ops=4000` operations per client: with the think time below, about 84 s of client
//!   time unloaded, in the range of the report's 3-minute test cases once the server is
//!   saturated (a fixed count, not a time window, so every run completes and conserves
//!   messages; a client that starves delays the end of the run).
//! * `think_ns=20000000` (20 ms) between a reply and the next request: the throttle.
//! * `work=700000` cycles per operation in `smbd` (1 ms at 700 MHz: SMB parsing, a
//!   page-cache read and two copies of a 16 KB block at 2002 memory bandwidth).
//! * `irq=35000` cycles per operation of interrupt and TCP work (50 µs at 700 MHz).
//! * `io_ns=0`: the file set fits the server's 2.5 GB page cache; set it for disk waits.
//! * `bytes=16384` per operation (a 16 KB read or write).
//! * `timeout_ns=45000000000` (45 s): the Windows redirector's default session time-out
//!   (`SessTimeOut`), after which an SMB request fails.
//! * `probes=30`, `probe_every_ns=2000000000` (a `ps` every 2 s for the first minute),
//!   `ps=7000000` cycles (10 ms at 700 MHz: `ps` reading `/proc` for ~100 processes).
//!
//! `expected_tasks = 1 + 2N + (probes > 0) + probes`, `expected_messages = 2·N·ops`.

use crate::{check_range, in_mm, push_loop, Footprint, Metric, Op, Program, Workload};
use schedlab_core::spec::Spec;
use schedlab_core::{SchedClass, SpecError, TaskParams};
use std::ops::RangeInclusive;

/// Keys accepted in a `netbench:` spec, in canonical order.
pub const KEYS: &[&str] =
    &["clients", "ops", "think_ns", "work", "irq", "io_ns", "bytes", "timeout_ns", "probes", "probe_every_ns", "ps"];

/// Bytes of an SMB request on the wire (the reply carries `bytes`).
pub const REQUEST_BYTES: u32 = 128;
/// Real-time priority of the `nic` tasks (interrupt stand-ins): above every
/// time-shared task, the value itself only orders them among real-time tasks.
pub const NIC_RT_PRIORITY: u8 = 50;

const CLIENTS: RangeInclusive<u32> = 1..=4096;
const OPS: RangeInclusive<u32> = 1..=100_000_000;
const NS: RangeInclusive<u64> = 0..=3_600_000_000_000;
const CYCLES: RangeInclusive<u64> = 0..=100_000_000_000;
const BYTES: RangeInclusive<u32> = 1..=1 << 24;
const PROBES: RangeInclusive<u32> = 0..=1_000_000;

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
        }
    }
}

impl NetbenchParams {
    /// Read the parameters from a parsed `netbench:` spec (consumes and finishes it).
    pub fn from_spec(spec: &mut Spec) -> Result<NetbenchParams, SpecError> {
        let d = NetbenchParams::default();
        let p = NetbenchParams {
            clients: spec.get("clients", d.clients, CLIENTS)?,
            ops: spec.get("ops", d.ops, OPS)?,
            think_ns: spec.get("think_ns", d.think_ns, NS)?,
            work: spec.get("work", d.work, CYCLES)?,
            irq: spec.get("irq", d.irq, CYCLES)?,
            io_ns: spec.get("io_ns", d.io_ns, NS)?,
            bytes: spec.get("bytes", d.bytes, BYTES)?,
            timeout_ns: spec.get("timeout_ns", d.timeout_ns, NS)?,
            probes: spec.get("probes", d.probes, PROBES)?,
            probe_every_ns: spec.get("probe_every_ns", d.probe_every_ns, NS)?,
            ps: spec.get("ps", d.ps, CYCLES)?,
        };
        spec.finish(KEYS)?;
        Ok(p)
    }

    /// Check every parameter against its accepted range.
    pub fn check(&self) -> Result<(), SpecError> {
        let w = "netbench";
        check_range(w, "clients", self.clients, &CLIENTS)?;
        check_range(w, "ops", self.ops, &OPS)?;
        check_range(w, "think_ns", self.think_ns, &NS)?;
        check_range(w, "work", self.work, &CYCLES)?;
        check_range(w, "irq", self.irq, &CYCLES)?;
        check_range(w, "io_ns", self.io_ns, &NS)?;
        check_range(w, "bytes", self.bytes, &BYTES)?;
        check_range(w, "timeout_ns", self.timeout_ns, &NS)?;
        check_range(w, "probes", self.probes, &PROBES)?;
        check_range(w, "probe_every_ns", self.probe_every_ns, &NS)?;
        check_range(w, "ps", self.ps, &CYCLES)
    }

    /// Canonical spec: `clients` always, other keys when not default.
    pub fn canonical(&self) -> String {
        let d = NetbenchParams::default();
        let mut s = format!("netbench:clients={}", self.clients);
        for (k, v, dv) in [
            ("ops", self.ops as u64, d.ops as u64),
            ("think_ns", self.think_ns, d.think_ns),
            ("work", self.work, d.work),
            ("irq", self.irq, d.irq),
            ("io_ns", self.io_ns, d.io_ns),
            ("bytes", self.bytes as u64, d.bytes as u64),
            ("timeout_ns", self.timeout_ns, d.timeout_ns),
            ("probes", self.probes as u64, d.probes as u64),
            ("probe_every_ns", self.probe_every_ns, d.probe_every_ns),
            ("ps", self.ps, d.ps),
        ] {
            if v != dv {
                s += &format!(",{k}={v}");
            }
        }
        s
    }

    /// Tasks, channels and program operations of [`NetbenchParams::build`].
    pub fn footprint(&self) -> Footprint {
        let n = self.clients as u64;
        let probe = (self.probes > 0) as u64;
        Footprint { tasks: 1 + 2 * n + probe + self.probes as u64, channels: 2 * n, ops: 14 * n + 8 }
    }

    /// Build the workload (see the module documentation for its shape).
    pub fn build(&self) -> Result<Workload, SpecError> {
        self.check()?;
        let p = *self;
        let n = p.clients;
        // Program ids: 0 root, 1 + 2c smbd c, 2 + 2c nic c, 1 + 2n probe, 2 + 2n ps.
        let smbd = |c: u32| 1 + 2 * c;
        let nic = |c: u32| 2 + 2 * c;
        let (probe, ps) = (1 + 2 * n, 2 + 2 * n);
        let (req, reply) = (|c: u32| 2 * c, |c: u32| 2 * c + 1);
        let nic_params = TaskParams { class: SchedClass::Fifo, rt_priority: NIC_RT_PRIORITY, mm: 0, ..in_mm(0) };

        let mut root = Vec::with_capacity(2 * n as usize + 2);
        for c in 0..n {
            root.push(Op::Spawn { program: smbd(c), params: in_mm(2 + c) });
            root.push(Op::Spawn { program: nic(c), params: nic_params });
        }
        if p.probes > 0 {
            root.push(Op::Spawn { program: probe, params: in_mm(1) });
        }
        root.push(Op::Exit);

        let mut programs = Vec::with_capacity(3 + 2 * n as usize);
        programs.push(Program { role: "root".into(), ops: root });
        let mut bound = Vec::with_capacity(2 * n as usize);
        for c in 0..n {
            let mut body = vec![Op::Recv { chan: req(c) }];
            if p.work > 0 {
                body.push(Op::Compute { cycles: p.work });
            }
            if p.io_ns > 0 {
                body.push(Op::Sleep { ns: p.io_ns });
            }
            body.push(Op::Send { chan: reply(c), bytes: p.bytes });
            let mut ops = Vec::with_capacity(body.len() + 2);
            push_loop(&mut ops, p.ops, &body);
            ops.push(Op::Exit);
            programs.push(Program { role: "smbd".into(), ops });

            let mut body = Vec::with_capacity(4);
            if p.think_ns > 0 {
                body.push(Op::Sleep { ns: p.think_ns });
            }
            if p.irq > 0 {
                body.push(Op::Compute { cycles: p.irq });
            }
            body.push(Op::Send { chan: req(c), bytes: REQUEST_BYTES });
            body.push(Op::Recv { chan: reply(c) });
            let mut ops = Vec::with_capacity(body.len() + 2);
            push_loop(&mut ops, p.ops, &body);
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

        let counted = (0..2 * n).map(|ch| ch % 2 == 1).collect();
        let (n64, probes) = (n as u64, p.probes as u64);
        Ok(Workload {
            spec: self.canonical(),
            programs,
            channels: 2 * n,
            root: 0,
            root_params: in_mm(1),
            metric: Metric {
                unit: "Mbit/s".into(),
                counted,
                per_count: (8 * p.bytes as u64, 1_000_000),
                timeout_ns: Some(p.timeout_ns),
            },
            expected_messages: 2 * n64 * p.ops as u64,
            expected_tasks: 1 + 2 * n64 + (probes > 0) as u64 + probes,
            bound,
            working_set: Vec::new(),
        })
    }
}
