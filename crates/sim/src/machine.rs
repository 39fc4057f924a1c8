//! Machine descriptions: presets of the original experiments and TOML machine files.
//!
//! A machine is CPUs grouped into NUMA nodes (contiguous CPU ids), a clock, an L2
//! geometry, a tick rate, a SLIT-style node distance matrix (10 = local) and the cost
//! parameters of [`CostParams`] (their presets are in `machine/costs.rs`; see
//! `docs/cost-model.md` for where each comes from).

mod costs;

pub use costs::{CostParams, HardwareCosts, HostKnobs, KernelCosts};
use schedlab_core::cpu::MAX_CPUS;
use schedlab_workloads::SocketBuffers;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A modelled machine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Machine {
    pub name: String,
    pub cpus: usize,
    pub nodes: usize,
    /// Node of each CPU (`cpus / nodes` contiguous CPUs per node).
    pub node_of: Vec<usize>,
    pub mhz: u32,
    pub l2_kb: u32,
    pub l2_assoc: u32,
    pub line_bytes: u32,
    pub hz: u32,
    /// `distance[a][b]`: relative cost of node `a` reaching node `b`'s memory or
    /// caches; 10 = local (ACPI SLIT convention). Latencies scale by `distance / 10`.
    pub distance: Vec<Vec<u32>>,
    pub costs: CostParams,
    /// Interrupt lines bound to CPUs, with the processes that serve them: a task of a
    /// workload program bound to line `k` (`Workload::bound`) may run only on CPU
    /// `k mod cpus` (the NetBench report's "IRQ + process affinity"). Off: free.
    pub irq_affinity: bool,
    /// Where each CPU's timer tick falls relative to the start of the run.
    pub tick_phase: TickPhase,
    /// The kernel's socket-buffer accounting, which bounds the channels a workload
    /// carries on sockets (machine file key `socket_buffers`, by name; the presets
    /// run Linux 2.4, a calibrated host Linux 6). See `schedlab_workloads::buffers`.
    #[serde(serialize_with = "socket_buffers_name")]
    pub socket_buffers: SocketBuffers,
    /// Whose layout of a task's scheduling state the cache model prices (machine file
    /// key `task_struct`; the presets the kernel's, a calibrated host the runtime's).
    pub task_struct: TaskStruct,
}

/// Whose layout of a task's scheduling state the cache model prices (machine file key
/// `task_struct`). It decides only where a 2.4 policy's `run_list.prev` lies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStruct {
    /// The modelled kernel's `struct task_struct`: 2.4's `run_list.prev` on the line
    /// after the hot line (`schedlab_core::layout::TASK_PREV_LINK_OFFSET`), where lines
    /// are shorter than 128 bytes. The presets.
    #[default]
    Kernel,
    /// schedlab's runtime: all of a task's scheduling state, both list links
    /// included, in the one host line that holds the hot fields (`TaskSched`). What
    /// `schedlab validate --machine-out` writes for the host it measured.
    Runtime,
}

impl TaskStruct {
    /// The machine file's spelling (`task_struct = "runtime"`).
    pub fn name(self) -> &'static str {
        match self {
            TaskStruct::Kernel => "kernel",
            TaskStruct::Runtime => "runtime",
        }
    }
}

fn socket_buffers_name<S: serde::Serializer>(b: &SocketBuffers, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(b.name)
}

/// Where each CPU's first timer tick falls (machine file key `tick_phase`).
///
/// For a `cfs` or O(1) run the first ticks matter beyond their period: under O(1) the
/// first idle balance decides where hackbench's root runs (docs/traces.md, "O(1)
/// hackbench: the first idle balance"); under `cfs` the phases, with the price jitter,
/// spread hackbench's switches between seeds (docs/traces.md, "`fair` hackbench: the
/// start-up and the spread between runs").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TickPhase {
    /// A kernel's timer ran long before the workload started: each CPU's first tick
    /// is drawn from the seed, one to two periods after the start (the presets).
    #[default]
    Random,
    /// The timer starts with the run: every CPU's first tick is one period after the
    /// start, as in schedlab's runtime (each worker's tick grid starts when the
    /// worker starts, `worker_loop`, and `validate` builds a fresh runtime right
    /// before each run). Not the calibration's default: here all CPUs tick at the
    /// same instant, which the runtime's workers (started tens of µs apart) never
    /// do, and that alone moves O(1) ping-pong (docs/traces.md, "O(1) hackbench: the first idle balance").
    Boot,
}

impl TickPhase {
    /// The machine file's spelling (`tick_phase = "boot"`).
    pub fn name(self) -> &'static str {
        match self {
            TickPhase::Random => "random",
            TickPhase::Boot => "boot",
        }
    }
}

/// A machine description that cannot be used, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineError(pub String);

impl fmt::Display for MachineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for MachineError {}

/// Preset names for help texts (`smp-N` takes any N in 1..=64).
pub const PRESETS: &[&str] = &["up", "smp-N", "smp-8", "xeon-4", "numa-4x4", "ppro-4", "xeon-8"];

/// The machine file format. Every key is optional when `base` names a preset.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineFile {
    base: Option<String>,
    name: Option<String>,
    cpus: Option<usize>,
    nodes: Option<usize>,
    mhz: Option<u32>,
    l2_kb: Option<u32>,
    l2_assoc: Option<u32>,
    line_bytes: Option<u32>,
    hz: Option<u32>,
    distance: Option<Vec<Vec<u32>>>,
    /// Remote distance used to fill a default matrix when `distance` is absent.
    remote_distance: Option<u32>,
    irq_affinity: Option<bool>,
    tick_phase: Option<TickPhase>,
    socket_buffers: Option<String>,
    task_struct: Option<TaskStruct>,
    costs: Option<toml::Table>,
}

/// `512k`, `1m`, `2048` (KB) → KB.
fn parse_kb(v: &str) -> Result<u32, String> {
    let v = v.trim().to_ascii_lowercase();
    let (num, mul) = match v.strip_suffix('m') {
        Some(n) => (n, 1024),
        None => (v.strip_suffix('k').unwrap_or(&v), 1),
    };
    let n: u32 = num.parse().map_err(|_| format!("'{v}' is not a size (e.g. 512k, 1m)"))?;
    let kb = n.checked_mul(mul).ok_or_else(|| format!("'{v}' is too large"))?;
    if kb == 0 || kb > 1 << 20 {
        return Err(format!("'{v}' must be 1k..=1024m"));
    }
    Ok(kb)
}

impl Machine {
    /// A machine of `cpus` Pentium III-class CPUs in `nodes` nodes.
    fn p3(name: &str, cpus: usize, nodes: usize, mhz: u32, l2_kb: u32, costs: CostParams, remote: u32) -> Machine {
        let mut m = Machine {
            name: name.to_string(),
            cpus,
            nodes,
            node_of: Vec::new(),
            mhz,
            l2_kb,
            l2_assoc: 4,
            line_bytes: 32,
            hz: 100,
            distance: default_distance(nodes, remote),
            costs,
            irq_affinity: false,
            tick_phase: TickPhase::Random,
            socket_buffers: SocketBuffers::LINUX_2_4,
            task_struct: TaskStruct::Kernel,
        };
        m.fill_nodes();
        m
    }

    fn fill_nodes(&mut self) {
        let per = (self.cpus / self.nodes.max(1)).max(1);
        self.node_of = (0..self.cpus).map(|c| (c / per).min(self.nodes.saturating_sub(1))).collect();
    }

    /// The machine a calibration measured on this host (`host-N`): `cpus` CPUs on one
    /// node, a nominal 1000 MHz clock (one cycle is one ns of the host), the host's L2
    /// as `(KiB, ways, line bytes)`, the runtime's timer rate `hz`, its costs, and
    /// ticks that start with the run (`tick_phase = "boot"`: a fresh runtime's
    /// workers start their tick grids with their loops) and the runtime's task layout
    /// (`task_struct = "runtime"`). Built as a value; the caller
    /// validates it ([`Machine::validate`], as `simulate` does).
    pub fn host(cpus: usize, (l2_kb, l2_assoc, line_bytes): (u32, u32, u32), hz: u32, costs: CostParams) -> Machine {
        let mut m = Machine {
            name: format!("host-{cpus}"),
            cpus,
            nodes: 1,
            node_of: Vec::new(),
            mhz: 1000,
            l2_kb,
            l2_assoc,
            line_bytes,
            hz,
            distance: default_distance(1, 10),
            costs,
            irq_affinity: false,
            tick_phase: TickPhase::Boot,
            socket_buffers: SocketBuffers::LINUX_6,
            task_struct: TaskStruct::Runtime,
        };
        m.fill_nodes();
        m
    }

    /// `up`, `smp-N`, `smp-8`, `xeon-4`, `numa-4x4`.
    pub fn preset(name: &str) -> Result<Machine, MachineError> {
        // Modifiers after the preset: `smp-8:l2=512k`.
        if let Some((base, mods)) = name.split_once(':') {
            let mut m = Machine::preset(base)?;
            for part in mods.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                match part.split_once('=') {
                    Some(("l2", v)) => {
                        m.l2_kb = parse_kb(v).map_err(|e| MachineError(format!("machine '{name}': l2={v}: {e}")))?
                    }
                    // Fewer (or more) CPUs of the same kind: the CPU-count axis of a
                    // scalability study (`xeon-8:cpus=2`). One bus, so one node only.
                    Some(("cpus", v)) => {
                        let n: usize = v.parse().ok().filter(|n| (1..=MAX_CPUS).contains(n)).ok_or_else(|| {
                            MachineError(format!("machine '{name}': cpus={v}: must be a CPU count in 1..={MAX_CPUS}"))
                        })?;
                        if m.nodes != 1 {
                            return Err(MachineError(format!(
                                "machine '{name}': cpus= works on single-node presets; '{base}' has {} nodes (write a machine file with cpus, nodes and remote_distance)",
                                m.nodes
                            )));
                        }
                        m.cpus = n;
                        m.fill_nodes();
                    }
                    _ => {
                        return Err(MachineError(format!(
                            "machine '{name}': unknown modifier '{part}' (accepted: l2=SIZE, cpus=N)"
                        )));
                    }
                }
            }
            m.name = name.to_string();
            m.validate().map_err(|e| MachineError(format!("machine '{name}': l2: {}", e.0)))?;
            return Ok(m);
        }
        let smp = |n: usize, name: &str| Machine::p3(name, n, 1, 700, 2048, CostParams::p3_smp(), 10);
        match name {
            // The O(1) NetBench box booted UP: one 700 MHz Pentium III Xeon, 1 MB L2.
            "up" => {
                let mut m = Machine::p3("up", 1, 1, 700, 1024, CostParams::p3_smp(), 10);
                m.costs.hw.mem_latency_ns = 170; // one CPU on the bus: no snoop arbitration
                Ok(m)
            }
            // The O(1) NetBench server: 4 × 700 MHz Pentium III Xeon, 1 MB L2 each
            // (the NetBench report, S10 in docs/sources.md). Its affinity runs: a machine file with irq_affinity = true.
            "xeon-4" => Ok(Machine::p3("xeon-4", 4, 1, 700, 1024, CostParams::p3_smp(), 10)),
            // PMQS SMP study: 8 × 700 MHz Pentium III, 2 MB L2 per CPU.
            "smp-8" => Ok(smp(8, "smp-8")),
            // PMQS NUMA study: 4 quads × 4 × 450 MHz Pentium III, 512 KB L2, IBM NUMA-Q.
            "numa-4x4" => Ok(Machine::p3("numa-4x4", 16, 4, 450, 512, CostParams::numa_q(), 100)),
            // Task-colouring study: 4 × Pentium Pro 200 MHz, 4-way L2 of 256 KB (the
            // default; 512k and 1m via `l2=`), 32-byte lines. Bus costs: the P-III SMP
            // parameters (no Pentium Pro fit was recovered; docs/machines.md).
            "ppro-4" => Ok(Machine::p3("ppro-4", 4, 1, 200, 256, CostParams::p3_smp(), 10)),
            // 8 × Pentium III Xeon 550 MHz; its L2 size was not recovered: 1 MB by default
            // (the middle of the 512 KB/1 MB/2 MB parts Intel sold), `l2=` to change it.
            "xeon-8" => Ok(Machine::p3("xeon-8", 8, 1, 550, 1024, CostParams::p3_smp(), 10)),
            _ => {
                if let Some(n) = name.strip_prefix("smp-") {
                    let n: usize = n.parse().map_err(|_| {
                        MachineError(format!("machine '{name}': '{n}' is not a CPU count (smp-N, N in 1..={MAX_CPUS})"))
                    })?;
                    if n == 0 || n > MAX_CPUS {
                        return Err(MachineError(format!("machine '{name}': CPU count must be 1..={MAX_CPUS}")));
                    }
                    return Ok(smp(n, name));
                }
                Err(MachineError(format!(
                    "unknown machine '{name}' (presets: {}; or a path to a .toml machine file)",
                    PRESETS.join(", ")
                )))
            }
        }
    }

    /// A preset name or a path to a TOML machine file.
    pub fn load(arg: &str) -> Result<Machine, MachineError> {
        let path = std::path::Path::new(arg);
        if path.exists() && !path.is_file() {
            return Err(MachineError(format!(
                "machine '{arg}': not a regular file (give a preset name or a .toml machine file)"
            )));
        }
        if arg.ends_with(".toml") || arg.contains('/') || path.is_file() {
            let text = std::fs::read_to_string(arg).map_err(|e| MachineError(format!("machine file '{arg}': {e}")))?;
            Machine::from_toml(&text).map_err(|e| MachineError(format!("machine file '{arg}': {e}")))
        } else {
            Machine::preset(arg)
        }
    }

    /// Parse and validate a TOML machine description.
    pub fn from_toml(text: &str) -> Result<Machine, MachineError> {
        let f: MachineFile =
            toml::from_str(text).map_err(|e| MachineError(e.message().to_string() + &span_hint(text, e.span())))?;
        let mut m = match &f.base {
            Some(b) => Machine::preset(b)?,
            None => {
                let cpus =
                    f.cpus.ok_or_else(|| MachineError("missing key 'cpus' (or give 'base' = a preset)".into()))?;
                // Clamped: the real count is checked just below, before anything is
                // sized by it (found by fuzzing: cpus = 2^60 tried to allocate 9 EB).
                Machine::p3("custom", cpus.clamp(1, MAX_CPUS), 1, 700, 2048, CostParams::p3_smp(), 10)
            }
        };
        if let Some(v) = f.name {
            m.name = v;
        }
        let topo_changed = f.cpus.is_some() || f.nodes.is_some();
        if let Some(v) = f.cpus {
            m.cpus = v;
        }
        if let Some(v) = f.nodes {
            m.nodes = v;
        }
        macro_rules! set {
            ($($k:ident),*) => { $( if let Some(v) = f.$k { m.$k = v; } )* };
        }
        set!(mhz, l2_kb, l2_assoc, line_bytes, hz, irq_affinity, tick_phase, task_struct);
        if let Some(name) = &f.socket_buffers {
            m.socket_buffers = SocketBuffers::by_name(name).ok_or_else(|| {
                let names: Vec<&str> = SocketBuffers::ALL.iter().map(|b| b.name).collect();
                MachineError(format!("socket_buffers = \"{name}\": not a known kernel (known: {})", names.join(", ")))
            })?;
        }
        if m.cpus == 0 {
            return Err(MachineError("cpus = 0: a machine needs at least one CPU".into()));
        }
        if m.cpus > MAX_CPUS {
            return Err(MachineError(format!("cpus = {}: at most {MAX_CPUS} CPUs are supported", m.cpus)));
        }
        if m.nodes == 0 || !m.cpus.is_multiple_of(m.nodes) {
            return Err(MachineError(format!(
                "nodes = {}: must be ≥ 1 and divide cpus = {} (nodes hold contiguous, equal groups of CPUs)",
                m.nodes, m.cpus
            )));
        }
        // A base's NUMA distances do not carry over to another topology, and a default
        // would silently replace them: ask for them.
        if let Some(b) = &f.base {
            let base_remote = m.distance.first().and_then(|row| row.get(1)).copied();
            if topo_changed && f.distance.is_none() && f.remote_distance.is_none() && base_remote.is_some() {
                return Err(MachineError(format!(
                    "cpus/nodes change the topology of base '{b}', whose node distances cannot carry over: give remote_distance (the base's is {}) or a distance matrix",
                    base_remote.unwrap_or(0)
                )));
            }
        }
        m.fill_nodes();
        match f.distance {
            Some(d) => m.distance = d,
            None if topo_changed || f.remote_distance.is_some() => {
                m.distance = default_distance(m.nodes, f.remote_distance.unwrap_or(if m.nodes > 1 { 20 } else { 10 }))
            }
            None => {}
        }
        if let Some(t) = f.costs {
            m.costs = m.costs.with_overrides(t)?;
        }
        m.validate()?;
        Ok(m)
    }

    /// Reject machines the simulator cannot model faithfully.
    pub fn validate(&self) -> Result<(), MachineError> {
        let err = |s: String| Err(MachineError(s));
        if self.cpus == 0 || self.cpus > MAX_CPUS {
            return err(format!("cpus = {}: must be 1..={MAX_CPUS}", self.cpus));
        }
        if self.mhz == 0 || self.mhz > 100_000 {
            return err(format!("mhz = {}: must be 1..=100000", self.mhz));
        }
        if !(1..=10_000).contains(&self.hz) {
            return err(format!("hz = {}: must be 1..=10000", self.hz));
        }
        if !self.line_bytes.is_power_of_two() || !(16..=512).contains(&self.line_bytes) {
            return err(format!("line_bytes = {}: must be a power of two in 16..=512", self.line_bytes));
        }
        let way = self.l2_assoc as u64 * self.line_bytes as u64;
        let bytes = self.l2_kb as u64 * 1024;
        if self.l2_assoc == 0 || self.l2_kb == 0 || !bytes.is_multiple_of(way) || !(bytes / way).is_power_of_two() {
            return err(format!(
                "l2_kb = {}, l2_assoc = {}: the cache must hold a power-of-two number of sets of {}-byte lines",
                self.l2_kb, self.l2_assoc, self.line_bytes
            ));
        }
        if self.distance.len() != self.nodes {
            return err(format!(
                "distance: {} rows for {} nodes (must be nodes × nodes)",
                self.distance.len(),
                self.nodes
            ));
        }
        for (a, row) in self.distance.iter().enumerate() {
            if row.len() != self.nodes {
                return err(format!("distance row {a}: {} entries for {} nodes", row.len(), self.nodes));
            }
            if row[a] != 10 {
                return err(format!("distance[{a}][{a}] = {}: a node's distance to itself must be 10", row[a]));
            }
            for (b, &d) in row.iter().enumerate() {
                if d != self.distance[b][a] {
                    return err(format!(
                        "distance is asymmetric: [{a}][{b}] = {d} but [{b}][{a}] = {}",
                        self.distance[b][a]
                    ));
                }
                if a != b && !(10..=255).contains(&d) {
                    return err(format!("distance[{a}][{b}] = {d}: remote distances must be 10..=255"));
                }
            }
        }
        if self.nodes > 1 && self.costs.hw.remote_cache_ns > 0 && self.costs.hw.llc_latency_ns > 0 {
            // One state bit per node records which shared cache holds a line.
            return err(format!(
                "costs: llc_latency_ns = {} and remote_cache_ns = {} on {} nodes: a last-level cache and a remote cache together are not modelled (set one to 0)",
                self.costs.hw.llc_latency_ns, self.costs.hw.remote_cache_ns, self.nodes
            ));
        }
        self.costs.validate()
    }
}

fn default_distance(nodes: usize, remote: u32) -> Vec<Vec<u32>> {
    (0..nodes).map(|a| (0..nodes).map(|b| if a == b { 10 } else { remote }).collect()).collect()
}

fn span_hint(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(s) => {
            let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
            format!(" (line {line})")
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid() {
        for n in ["up", "smp-1", "smp-2", "smp-8", "smp-64", "xeon-4", "numa-4x4"] {
            let m = Machine::preset(n).unwrap();
            m.validate().unwrap();
        }
        let m = Machine::preset("numa-4x4").unwrap();
        assert_eq!((m.cpus, m.nodes, m.mhz, m.l2_kb), (16, 4, 450, 512));
        assert_eq!(m.node_of[5], 1);
        assert_eq!(m.node_of[15], 3);
    }

    #[test]
    fn bad_presets_are_named() {
        assert!(Machine::preset("smp-0").unwrap_err().0.contains("1..=64"));
        assert!(Machine::preset("smp-x").unwrap_err().0.contains("'x'"));
        assert!(Machine::preset("vax").unwrap_err().0.contains("unknown machine 'vax'"));
        let m = Machine::preset("xeon-8:cpus=3,l2=512k").unwrap();
        assert_eq!((m.cpus, m.node_of.len(), m.l2_kb), (3, 3, 512));
        for bad in ["xeon-8:cpus=0", "xeon-8:cpus=x", "numa-4x4:cpus=8", "smp-2:cpus=65"] {
            assert!(Machine::preset(bad).unwrap_err().0.contains("cpus"), "{bad}");
        }
        for bad in ["smp-8:l2=0", "smp-8:l2=abc", "smp-8:l2=3k", "numa-4x4:l2=100k"] {
            assert!(Machine::preset(bad).unwrap_err().0.contains("l2"), "{bad}");
        }
        assert!(Machine::preset("smp-8:cache=1").unwrap_err().0.contains("cache=1"));
        let m = Machine::preset("smp-8:l2=512k").unwrap();
        assert_eq!((m.l2_kb, m.cpus), (512, 8));
        assert_eq!(Machine::preset("numa-4x4:l2=1m").unwrap().l2_kb, 1024);
        for (n, kb) in [("ppro-4", 256), ("ppro-4:l2=512k", 512), ("ppro-4:l2=1m", 1024), ("xeon-8", 1024)] {
            let m = Machine::preset(n).unwrap();
            assert_eq!((m.l2_kb, m.l2_assoc, m.line_bytes), (kb, 4, 32), "{n}");
        }
    }

    /// The host machine built as a value is the one its machine file describes.
    #[test]
    fn the_host_machine_is_its_machine_file() {
        let mut costs = CostParams::p3_smp();
        costs.host.cost_jitter_pct = 10;
        costs.hw.mlp = 4;
        let m = Machine::host(2, (2048, 16, 64), 1000, costs.clone());
        m.validate().unwrap();
        let text = "cpus = 2\nname = \"host-2\"\nmhz = 1000\nl2_kb = 2048\nl2_assoc = 16\nline_bytes = 64\nhz = 1000\ntick_phase = \"boot\"\nsocket_buffers = \"linux-6\"\ntask_struct = \"runtime\"\n[costs]\ncost_jitter_pct = 10\nmlp = 4\n";
        assert_eq!(m, Machine::from_toml(text).unwrap());
        assert_eq!(Machine::preset("xeon-8").unwrap().task_struct, TaskStruct::Kernel);
    }

    #[test]
    fn toml_machines_are_validated() {
        let m = Machine::from_toml("base = \"numa-4x4\"\nmhz = 500\n[costs]\nipi_latency_ns = 3000\n").unwrap();
        assert_eq!(m.mhz, 500);
        assert_eq!(m.costs.hw.ipi_latency_ns, 3000);
        let m = Machine::from_toml("cpus = 4\nnodes = 2\ndistance = [[10, 30], [30, 10]]\n").unwrap();
        assert_eq!(m.node_of, vec![0, 0, 1, 1]);
        let cases = [
            ("cpus = 0", "cpus = 0"),
            ("cpus = 6\nnodes = 4", "divide"),
            ("cpus = 4\nnodes = 2\ndistance = [[10, 30], [20, 10]]", "asymmetric"),
            ("cpus = 4\nnodes = 2\ndistance = [[10, 30, 30], [30, 10]]", "row 0"),
            ("cpus = 4\nnodes = 2\ndistance = [[10, 30]]", "1 rows for 2 nodes"),
            ("cpus = 4\nnodes = 2\ndistance = [[12, 30], [30, 10]]", "itself must be 10"),
            ("cpus = 4\nspeed = 3", "unknown field `speed`"),
            ("base = \"smp-8\"\n[costs]\nwarp = 1", "warp"),
            ("cpus = \"four\"", "invalid type"),
            ("mhz = 700", "missing key 'cpus'"),
            ("base = \"smp-8\"\nl2_kb = 3", "power-of-two number of sets"),
            ("base = \"smp-8\"\ntask_struct = \"linux\"", "unknown variant `linux`"),
        ];
        for (text, want) in cases {
            let e = Machine::from_toml(text).unwrap_err().0;
            assert!(e.contains(want), "{text:?}: got {e:?}, want {want:?}");
        }
    }
}
