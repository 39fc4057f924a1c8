//! The cost model at run time: a machine's [`CostParams`] resolved once to the
//! nanosecond costs the event loop charges ([`CostModel`]).
//!
//! CPU work is given in cycles of the modelled CPU (so a 450 MHz quad CPU is slower
//! than a 700 MHz one for the same work) and converted here with a fixed-point
//! multiply; memory-system latencies are in nanoseconds (bus and interconnect speeds
//! do not scale with the core clock) and scaled by the machine's node distances.

use crate::lockwait::Backoff;
use crate::machine::Machine;
use schedlab_core::cpu::MAX_CPUS;
use schedlab_core::Work;

/// Re-exported from its home beside [`Machine`], for paths written as `cost::CostParams`.
pub use crate::machine::CostParams;

/// Costs resolved to nanoseconds for one machine, ready for the event loop.
#[derive(Clone, Debug)]
pub struct CostModel {
    /// Femtoseconds per cycle: cycle counts convert with a multiply, not a divide.
    fs_per_cycle: u64,
    pub(crate) work_ns: [u64; Work::COUNT],
    pub lock_ns: u64,
    pub l2_hit_ns: u64,
    pub context_switch_ns: u64,
    pub mm_switch_ns: u64,
    pub syscall_ns: u64,
    pub(crate) send_ns: u64,
    pub(crate) recv_ns: u64,
    /// Femtoseconds to copy one byte.
    copy_fs_per_byte: u64,
    /// `copy_ns` of messages below [`COPY_TABLE`] bytes, looked up: every send and
    /// receive copies, and the rounding division is most of that charge's instructions.
    copy_small: Box<[u64; COPY_TABLE]>,
    pub fork_ns: u64,
    pub exit_ns: u64,
    /// A fork onto a task block no task used before (see `HostKnobs::task_block_fresh_ns`).
    pub task_block_fresh_ns: u64,
    pub ipi_send_ns: u64,
    pub tick_ns: u64,
    /// CPU c's first tick is `c ×` this after CPU 0's (`tick_phase = "boot"` only).
    pub tick_stagger_ns: u64,
    /// CPU 0's and the other CPUs' first-tick ranges (`tick_phase = "boot"`; a
    /// `(0, 0)` range is not drawn: see [`CostModel::boot_first_tick`]).
    pub tick_first_ns: (u64, u64),
    pub tick_other_ns: (u64, u64),
    /// The policy's clock at time 0 is drawn in this range (a `(0, 0)` range is not
    /// drawn: see [`CostModel::clock_origin`]).
    pub clock_origin_ns: (u64, u64),
    /// A read served by the reading node's remote cache (0: the machine has none).
    pub remote_cache_ns: u64,
    /// A read served by the node's last-level cache (0: the machine has none).
    pub llc_ns: u64,
    /// Extra IPI latency to a CPU idle for at least `idle_spin_ns` (0: none).
    pub park_wake_ns: u64,
    pub idle_spin_ns: u64,
    /// A user-level runtime's own costs (0 on the kernel presets).
    pub clock_read_ns: u64,
    pub recv_block_ns: u64,
    pub chan_send_xcpu_ns: u64,
    pub chan_recv_xcpu_ns: u64,
    pub recv_register_xcpu_ns: u64,
    pub notify_xcpu_ns: u64,
    pub lock_handoff_ns: u64,
    /// See `HostKnobs::lock_remote_ns` (0: transfer + `lock_handoff_ns`).
    pub lock_remote_ns: u64,
    /// A contended lock's waiter (`HostKnobs::lock_pause_ns` and the fields after it;
    /// all 0: it polls continuously).
    pub lock_backoff: Backoff,
    pub wake_transfer_ns: u64,
    /// Misses outstanding at once in an overlapped scope (1: serial; see `HardwareCosts::mlp`).
    pub mlp: usize,
    /// Store-buffer entries per CPU for write misses (0: charged in place; see
    /// `HardwareCosts::store_buffer`).
    pub store_buffer: usize,
    nodes: usize,
    /// `[from * nodes + to]`: a dirty line in a cache on node `from` read by node `to`.
    /// The three tables have the largest machine's size, so that an index masked into
    /// them needs no bounds check (every miss reads one).
    transfer: Box<Grid>,
    /// `[home * nodes + to]`: a line read from node `home`'s memory by node `to`.
    memory: Box<Grid>,
    /// `[from * nodes + to]`: IPI from a CPU on `from` to a CPU on `to`.
    ipi: Box<Grid>,
}

/// Node pairs of the largest machine (a node per CPU at most).
const GRID: usize = MAX_CPUS * MAX_CPUS;
// The lookups mask their index with `GRID - 1` (a bound the compiler can see, so no
// bounds check); that is only an identity on in-range indices if GRID is a power of two.
const _: () = assert!(GRID.is_power_of_two());
type Grid = [u64; GRID];

/// Message sizes whose copy cost is precomputed (the Chat and hackbench messages are
/// 100 bytes; larger ones are computed at each send).
const COPY_TABLE: usize = 1024;

impl CostModel {
    pub fn new(m: &Machine) -> CostModel {
        let c = &m.costs;
        let mhz = m.mhz as u64;
        let cy = |cycles: u32| (cycles as u64 * 1000).div_ceil(mhz);
        let n = m.nodes;
        let scale = |ns: u32, a: usize, b: usize| (ns as u64 * m.distance[a][b] as u64).div_ceil(10);
        assert!(n <= MAX_CPUS, "{n} nodes: at most {MAX_CPUS}");
        let grid = |f: &dyn Fn(usize, usize) -> u64| {
            let mut g = Box::new([0; GRID]);
            for (i, v) in g[..n * n].iter_mut().enumerate() {
                *v = f(i / n, i % n);
            }
            g
        };
        let mut work_ns = [0; Work::COUNT];
        for (w, cycles) in [
            (Work::ScheduleEntry, c.kernel.schedule_entry_cycles),
            (Work::WakeupEntry, c.kernel.wakeup_entry_cycles),
            (Work::Goodness, c.kernel.goodness_cycles),
            (Work::ListOp, c.kernel.list_op_cycles),
            (Work::Recalc, c.kernel.recalc_cycles),
            (Work::Tick, c.kernel.tick_cycles),
            (Work::Examine, c.kernel.examine_cycles),
            (Work::TreeOp, c.kernel.tree_op_cycles),
        ] {
            work_ns[w.index()] = cy(cycles);
        }
        let local_transfer = c.hw.c2c_latency_ns as u64;
        let fs_per_cycle = 1_000_000_000 / mhz;
        let copy_fs_per_byte = c.kernel.copy_cycles_per_kb as u64 * fs_per_cycle / 1024;
        let mut copy_small = Box::new([0; COPY_TABLE]);
        for (bytes, ns) in copy_small.iter_mut().enumerate() {
            *ns = copy_ns_of(bytes as u32, copy_fs_per_byte);
        }
        CostModel {
            fs_per_cycle,
            work_ns,
            lock_ns: cy(c.hw.lock_cycles),
            l2_hit_ns: cy(c.hw.l2_hit_cycles),
            context_switch_ns: cy(c.kernel.context_switch_cycles),
            mm_switch_ns: cy(c.kernel.mm_switch_cycles),
            syscall_ns: cy(c.kernel.syscall_cycles),
            send_ns: cy(c.kernel.send_cycles),
            recv_ns: cy(c.kernel.recv_cycles),
            copy_fs_per_byte,
            copy_small,
            fork_ns: cy(c.kernel.fork_cycles),
            exit_ns: cy(c.kernel.exit_cycles),
            task_block_fresh_ns: c.host.task_block_fresh_ns as u64,
            ipi_send_ns: cy(c.hw.ipi_send_cycles),
            tick_ns: 1_000_000_000 / m.hz as u64,
            tick_stagger_ns: c.host.tick_stagger_ns as u64,
            tick_first_ns: (c.host.tick_first_min_ns as u64, c.host.tick_first_max_ns as u64),
            tick_other_ns: (c.host.tick_other_min_ns as u64, c.host.tick_other_max_ns as u64),
            clock_origin_ns: (c.host.clock_origin_min_ns as u64, c.host.clock_origin_max_ns as u64),
            remote_cache_ns: if n > 1 { c.hw.remote_cache_ns as u64 } else { 0 },
            llc_ns: c.hw.llc_latency_ns as u64,
            park_wake_ns: c.host.park_wake_ns as u64,
            idle_spin_ns: c.host.idle_spin_ns as u64,
            clock_read_ns: cy(c.host.clock_read_cycles),
            recv_block_ns: cy(c.host.recv_block_cycles),
            chan_send_xcpu_ns: c.host.chan_send_xcpu_ns as u64,
            chan_recv_xcpu_ns: c.host.chan_recv_xcpu_ns as u64,
            recv_register_xcpu_ns: c.host.recv_register_xcpu_ns as u64,
            notify_xcpu_ns: c.host.notify_xcpu_ns as u64,
            lock_handoff_ns: c.host.lock_handoff_ns as u64,
            lock_remote_ns: c.host.lock_remote_ns as u64,
            lock_backoff: Backoff::of(&c.host),
            wake_transfer_ns: c.host.wake_transfer_ns as u64,
            mlp: c.hw.mlp as usize,
            store_buffer: c.hw.store_buffer as usize,
            nodes: n,
            transfer: grid(&|a, b| scale(c.hw.c2c_latency_ns, a, b)),
            memory: grid(&|a, b| scale(c.hw.mem_latency_ns, a, b)),
            // An IPI crossing nodes pays the interconnect's extra latency once.
            ipi: grid(&|a, b| c.hw.ipi_latency_ns as u64 + scale(c.hw.c2c_latency_ns, a, b) - local_transfer),
        }
    }

    #[inline]
    pub fn work(&self, w: Work) -> u64 {
        self.work_ns[w.index()]
    }
    /// User-mode computation of `cycles` cycles.
    #[inline]
    pub fn compute_ns(&self, cycles: u64) -> u64 {
        (cycles as u128 * self.fs_per_cycle as u128).div_ceil(1_000_000) as u64
    }
    #[inline]
    fn copy_ns(&self, bytes: u32) -> u64 {
        match self.copy_small.get(bytes as usize) {
            Some(&ns) => ns,
            None => copy_ns_of(bytes, self.copy_fs_per_byte),
        }
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
        self.transfer[(from_node * self.nodes + to_node) & (GRID - 1)]
    }
    #[inline]
    pub fn memory_ns(&self, home_node: usize, to_node: usize) -> u64 {
        self.memory[(home_node * self.nodes + to_node) & (GRID - 1)]
    }
    #[inline]
    pub fn ipi_ns(&self, from_node: usize, to_node: usize) -> u64 {
        self.ipi[(from_node * self.nodes + to_node) & (GRID - 1)]
    }

    /// With `tick_phase = "boot"`: CPU `cpu`'s first tick, ns after the start, from
    /// `draw` (uniform in `0..tick_ns`, the run's seed's draw for this CPU) and CPU 0's
    /// (`first0`). A CPU whose range is `(0, 0)` takes the fixed grid: CPU 0 one
    /// period in, CPU c `c × tick_stagger_ns` after CPU 0.
    pub fn boot_first_tick(&self, cpu: usize, draw: u64, first0: u64) -> u64 {
        let (range, fixed) = match cpu {
            0 => (self.tick_first_ns, self.tick_ns),
            c => (self.tick_other_ns, first0 + c as u64 * self.tick_stagger_ns),
        };
        match range {
            (_, 0) => fixed,
            (lo, hi) => (lo + uniform_below(draw, self.tick_ns, hi - lo + 1)).max(1),
        }
    }

    /// The policy's clock at the root's fork from a `draw` uniform in `0..tick_ns`:
    /// uniform in the machine's `clock_origin` range; `None` without one (the clock
    /// starts with the run, and no draw is made, so that no later draw moves).
    pub fn clock_origin(&self, draw: impl FnOnce(u64) -> u64) -> Option<u64> {
        match self.clock_origin_ns {
            (_, 0) => None,
            (lo, hi) => Some(lo + uniform_below(draw(self.tick_ns), self.tick_ns, hi - lo + 1)),
        }
    }
}

/// `draw`, uniform in `0..of`, scaled onto `0..n`.
fn uniform_below(draw: u64, of: u64, n: u64) -> u64 {
    (draw.min(of.saturating_sub(1)) as u128 * n as u128 / of.max(1) as u128) as u64
}

/// Copying `bytes` bytes at `fs_per_byte` femtoseconds each, rounded up to whole ns.
fn copy_ns_of(bytes: u32, fs_per_byte: u64) -> u64 {
    (bytes as u64 * fs_per_byte).div_ceil(1_000_000)
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
        // The looked-up sizes and the computed ones round alike at the table's edge.
        for bytes in [0, 1, 999, COPY_TABLE as u32 - 1, COPY_TABLE as u32, 16 << 10] {
            assert_eq!(smp.recv_ns(bytes) - smp.recv_ns, copy_ns_of(bytes, smp.copy_fs_per_byte), "{bytes} bytes");
        }
        // 1 KiB is 1000 cycles at 700 MHz: 1428.6 ns, rounded up (just past the table).
        assert_eq!(smp.recv_ns(1024) - smp.recv_ns, 1429);
        assert_eq!(smp.recv_ns(100) - smp.recv_ns, 140);
    }
}
