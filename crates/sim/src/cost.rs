//! The cost model: what every simulated operation costs on the modelled machine.
//!
//! All numbers live here and in `docs/cost-model.md`, which gives the reasoning for
//! each. CPU work is in cycles of the modelled CPU (so a 450 MHz quad CPU is slower
//! than a 700 MHz one for the same work); memory-system latencies are in nanoseconds
//! (bus and interconnect speeds do not scale with the core clock). Nothing here is
//! fitted to a published result: every value is an estimate from the hardware and the
//! code path it prices, and every value can be overridden in a machine file's
//! `[costs]` table.

use crate::machine::{Machine, MachineError};
use schedlab_core::Work;
use serde::{Deserialize, Serialize};

/// Cost parameters of a machine. See `docs/cost-model.md`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostParams {
    // --- CPU work, in cycles of the modelled CPU ---
    /// `schedule()` fixed path: irq off/on, prev-state handling, bookkeeping.
    pub schedule_entry_cycles: u32,
    /// `wake_up_process()` fixed path.
    pub wakeup_entry_cycles: u32,
    /// One `goodness()`: ~10 integer instructions and a compare (memory access separate).
    pub goodness_cycles: u32,
    /// `list_add`/`list_del`: four pointer stores (memory access separate).
    pub list_op_cycles: u32,
    /// One task's counter recalculation.
    pub recalc_cycles: u32,
    /// Timer interrupt entry/exit plus `update_process_times`.
    pub tick_cycles: u32,
    /// Examining one CPU in a placement or balancing loop.
    pub examine_cycles: u32,
    /// A locked read-modify-write (spin_lock/trylock) on a line this CPU already owns.
    pub lock_cycles: u32,
    /// L2 hit latency (the scheduler's task lines usually live in L2).
    pub l2_hit_cycles: u32,
    /// `switch_to`: register and kernel-stack switch, return path to the new task.
    pub context_switch_cycles: u32,
    /// Extra when the address space changes: `%cr3` reload and TLB refill.
    pub mm_switch_cycles: u32,
    /// System call entry and exit (`int 0x80`).
    pub syscall_cycles: u32,
    /// Protocol path of sending one small message on a local socket (excluding copy).
    pub send_cycles: u32,
    /// Protocol path of receiving one message (excluding copy).
    pub recv_cycles: u32,
    /// Copying message payload to/from user space, per KiB.
    pub copy_cycles_per_kb: u32,
    /// `clone()` of a thread: task structure, stack, copying/sharing of the parent's state.
    pub fork_cycles: u32,
    /// `exit()`: tearing the task down, reparenting, notifying.
    pub exit_cycles: u32,
    /// Writing the local APIC's interrupt command register.
    pub ipi_send_cycles: u32,
    // --- memory system and interconnect, in ns ---
    /// Read miss served by local memory.
    pub mem_latency_ns: u32,
    /// Read miss served by another CPU's cache on the same bus (HITM + implicit write-back).
    pub c2c_latency_ns: u32,
    /// From the ICR write to the target CPU entering its reschedule-interrupt handler.
    pub ipi_latency_ns: u32,
}

impl CostParams {
    /// Pentium III on a shared 100/133 MHz front-side bus (the PMQS SMP box, `up`, `smp-N`).
    pub fn p3_smp() -> CostParams {
        CostParams {
            schedule_entry_cycles: 150,
            wakeup_entry_cycles: 80,
            goodness_cycles: 12,
            list_op_cycles: 8,
            recalc_cycles: 10,
            tick_cycles: 500,
            examine_cycles: 6,
            lock_cycles: 25,
            l2_hit_cycles: 10,
            context_switch_cycles: 1200,
            mm_switch_cycles: 600,
            syscall_cycles: 300,
            send_cycles: 3000,
            recv_cycles: 1500,
            copy_cycles_per_kb: 1000,
            fork_cycles: 30_000,
            exit_cycles: 20_000,
            ipi_send_cycles: 100,
            mem_latency_ns: 180,
            c2c_latency_ns: 220,
            ipi_latency_ns: 1500,
        }
    }

    /// IBM NUMA-Q quads: P6 CPUs on a 100 MHz quad bus; remote traffic through the
    /// IQ-Link, priced by the machine's distance matrix.
    pub fn numa_q() -> CostParams {
        CostParams { mem_latency_ns: 250, c2c_latency_ns: 250, ..CostParams::p3_smp() }
    }

    /// Overlay a `[costs]` table from a machine file; unknown keys are errors.
    pub fn with_overrides(&self, overrides: toml::Table) -> Result<CostParams, MachineError> {
        let mut base = toml::Table::try_from(self).map_err(|e| MachineError(format!("costs: {e}")))?;
        for (k, v) in overrides {
            if !base.contains_key(&k) {
                return Err(MachineError(format!(
                    "costs: unknown key '{k}' (known: {})",
                    base.keys().cloned().collect::<Vec<_>>().join(", ")
                )));
            }
            base.insert(k, v);
        }
        base.try_into().map_err(|e: toml::de::Error| MachineError(format!("costs: {}", e.message())))
    }

    pub fn validate(&self) -> Result<(), MachineError> {
        let positive = [
            ("context_switch_cycles", self.context_switch_cycles),
            ("tick_cycles", self.tick_cycles),
            ("mem_latency_ns", self.mem_latency_ns),
            ("c2c_latency_ns", self.c2c_latency_ns),
            ("ipi_latency_ns", self.ipi_latency_ns),
        ];
        for (k, v) in positive {
            if v == 0 {
                return Err(MachineError(format!("costs: {k} = 0 must be positive")));
            }
        }
        Ok(())
    }
}

/// Costs resolved to nanoseconds for one machine, ready for the event loop.
#[derive(Clone, Debug)]
pub struct CostModel {
    /// Femtoseconds per cycle: cycle counts convert with a multiply, not a divide.
    fs_per_cycle: u64,
    work_ns: [u64; 7],
    pub lock_ns: u64,
    pub l2_hit_ns: u64,
    pub context_switch_ns: u64,
    pub mm_switch_ns: u64,
    pub syscall_ns: u64,
    send_ns: u64,
    recv_ns: u64,
    /// Femtoseconds to copy one byte.
    copy_fs_per_byte: u64,
    pub fork_ns: u64,
    pub exit_ns: u64,
    pub ipi_send_ns: u64,
    pub tick_ns: u64,
    nodes: usize,
    /// `[from * nodes + to]`: a dirty line in a cache on node `from` read by node `to`.
    transfer: Vec<u64>,
    /// `[home * nodes + to]`: a line read from node `home`'s memory by node `to`.
    memory: Vec<u64>,
    /// `[from * nodes + to]`: IPI from a CPU on `from` to a CPU on `to`.
    ipi: Vec<u64>,
}

fn work_index(w: Work) -> usize {
    match w {
        Work::ScheduleEntry => 0,
        Work::WakeupEntry => 1,
        Work::Goodness => 2,
        Work::ListOp => 3,
        Work::Recalc => 4,
        Work::Tick => 5,
        Work::Examine => 6,
    }
}

impl CostModel {
    pub fn new(m: &Machine) -> CostModel {
        let c = &m.costs;
        let mhz = m.mhz as u64;
        let cy = |cycles: u32| (cycles as u64 * 1000).div_ceil(mhz);
        let n = m.nodes;
        let scale = |ns: u32, a: usize, b: usize| (ns as u64 * m.distance[a][b] as u64).div_ceil(10);
        let grid = |f: &dyn Fn(usize, usize) -> u64| (0..n * n).map(|i| f(i / n, i % n)).collect::<Vec<_>>();
        let mut work_ns = [0; 7];
        for (w, cycles) in [
            (Work::ScheduleEntry, c.schedule_entry_cycles),
            (Work::WakeupEntry, c.wakeup_entry_cycles),
            (Work::Goodness, c.goodness_cycles),
            (Work::ListOp, c.list_op_cycles),
            (Work::Recalc, c.recalc_cycles),
            (Work::Tick, c.tick_cycles),
            (Work::Examine, c.examine_cycles),
        ] {
            work_ns[work_index(w)] = cy(cycles);
        }
        let local_transfer = c.c2c_latency_ns as u64;
        let fs_per_cycle = 1_000_000_000 / mhz;
        CostModel {
            fs_per_cycle,
            work_ns,
            lock_ns: cy(c.lock_cycles),
            l2_hit_ns: cy(c.l2_hit_cycles),
            context_switch_ns: cy(c.context_switch_cycles),
            mm_switch_ns: cy(c.mm_switch_cycles),
            syscall_ns: cy(c.syscall_cycles),
            send_ns: cy(c.send_cycles),
            recv_ns: cy(c.recv_cycles),
            copy_fs_per_byte: c.copy_cycles_per_kb as u64 * fs_per_cycle / 1024,
            fork_ns: cy(c.fork_cycles),
            exit_ns: cy(c.exit_cycles),
            ipi_send_ns: cy(c.ipi_send_cycles),
            tick_ns: 1_000_000_000 / m.hz as u64,
            nodes: n,
            transfer: grid(&|a, b| scale(c.c2c_latency_ns, a, b)),
            memory: grid(&|a, b| scale(c.mem_latency_ns, a, b)),
            // An IPI crossing nodes pays the interconnect's extra latency once.
            ipi: grid(&|a, b| c.ipi_latency_ns as u64 + scale(c.c2c_latency_ns, a, b) - local_transfer),
        }
    }

    #[inline]
    pub fn work(&self, w: Work) -> u64 {
        self.work_ns[work_index(w)]
    }
    /// User-mode computation of `cycles` cycles.
    #[inline]
    pub fn compute_ns(&self, cycles: u64) -> u64 {
        (cycles as u128 * self.fs_per_cycle as u128).div_ceil(1_000_000) as u64
    }
    #[inline]
    fn copy_ns(&self, bytes: u32) -> u64 {
        (bytes as u64 * self.copy_fs_per_byte).div_ceil(1_000_000)
    }
    /// `send()` of a `bytes`-byte message: syscall + protocol + copy.
    #[inline]
    pub fn send_ns(&self, bytes: u32) -> u64 {
        self.syscall_ns + self.send_ns + self.copy_ns(bytes)
    }
    /// Successful `recv()` of a `bytes`-byte message (the syscall is charged separately,
    /// since a receive that blocks pays it too).
    #[inline]
    pub fn recv_ns(&self, bytes: u32) -> u64 {
        self.recv_ns + self.copy_ns(bytes)
    }
    #[inline]
    pub fn transfer_ns(&self, from_node: usize, to_node: usize) -> u64 {
        self.transfer[from_node * self.nodes + to_node]
    }
    #[inline]
    pub fn memory_ns(&self, home_node: usize, to_node: usize) -> u64 {
        self.memory[home_node * self.nodes + to_node]
    }
    #[inline]
    pub fn ipi_ns(&self, from_node: usize, to_node: usize) -> u64 {
        self.ipi[from_node * self.nodes + to_node]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_scale_with_clock_and_latency_with_distance() {
        let smp = CostModel::new(&Machine::preset("smp-8").unwrap());
        let numa = CostModel::new(&Machine::preset("numa-4x4").unwrap());
        // 1200 cycles: 1.72 µs at 700 MHz, 2.67 µs at 450 MHz.
        assert_eq!(smp.context_switch_ns, 1715);
        assert_eq!(numa.context_switch_ns, 2667);
        assert_eq!(numa.transfer_ns(0, 0), 250);
        assert_eq!(numa.transfer_ns(0, 3), 2500);
        assert_eq!(numa.memory_ns(0, 2), 2500);
        assert!(numa.ipi_ns(0, 1) > numa.ipi_ns(1, 1));
        assert_eq!(smp.send_ns(100), (300 * 1000u64).div_ceil(700) + (3000 * 1000u64).div_ceil(700) + 140);
    }
}
