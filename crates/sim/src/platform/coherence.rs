//! A touch of a line: a MESI-like model with one state per line, which CPUs hold a
//! copy and which one (if any) holds it modified. A read that misses is served by
//! the modified copy's cache (cache-to-cache transfer), by the node's shared cache
//! below the L2 (NUMA-Q's remote cache, or a last-level cache) or by memory on the
//! line's home node (node 0 for kernel data: the kernel of the NUMA study kept its
//! data there; a working-set line's first toucher's node); a write to a line others
//! hold invalidates them. Memory traffic is counted as bus transactions
//! ([`BusStats`]). Each access's latency goes to the call's cursor, or into the open
//! overlapped scope or the store buffer (`overlap.rs`).

use super::cache::NO_LRU;
use super::layout::{CLASS_SCHED, CLASS_TASK, CLASS_WORKLOAD};
use super::SimPlatform;
use schedlab_core::{Access, CpuId, Line, TaskId};
use std::cell::Cell;

pub(super) const NO_OWNER: u8 = u8::MAX;

/// One line's coherence state. Each field is its own cell: an access reads and writes
/// only the fields it needs (a hit reads two; an eviction updates two), where copying
/// the whole state in and out was five loads and five stores per miss and eviction.
#[derive(Debug)]
pub(super) struct LineState {
    pub(super) sharers: Cell<u64>,
    pub(super) dirty: Cell<u8>,
    /// Node whose memory holds the line (NO_OWNER: not yet placed, first touch decides).
    pub(super) home: Cell<u8>,
    /// Nodes whose shared cache below the L2 holds a valid copy of this line: the
    /// remote cache (NUMA-Q's IQ-Link; lines of other nodes only) or, on a machine with
    /// a last-level cache, the node's LLC (every line the node fetched).
    pub(super) remote: Cell<u16>,
    /// Offset of the line's L2 set in a CPU's tags (dense set index × ways): kept
    /// here, in the 16 bytes the coherence state needs anyway, so that an access
    /// reads one host cache line for both.
    pub(super) set_base: Cell<u32>,
}

/// Kinds of bus transactions.
pub const KIND_READ_MISS: usize = 0;
pub const KIND_RFO: usize = 1;
pub const KIND_WRITEBACK: usize = 2;
pub const KIND_C2C: usize = 3;

/// Bus transactions, `by[class][kind]`, and the run-queue-walk counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BusStats {
    pub by: [[u64; 4]; 3],
    /// Reads of task lines made while a lock is held, and how many missed in L2.
    pub locked_task_reads: u64,
    pub locked_task_misses: u64,
}

impl SimPlatform {
    #[inline(always)]
    /// A policy's access to `line`: task-line reads counted for the run-queue walk
    /// (`locks.rs`), then the access charged.
    pub(super) fn touch_line(&self, line: Line, access: Access) {
        if matches!(line, Line::Task(_)) && access == Access::Read {
            self.task_reads.set(self.task_reads.get() + 1);
        }
        self.touch_index(self.line_index(line), access, self.class_of_line(line));
    }

    #[inline(always)]
    pub(super) fn touch_index(&self, idx: usize, access: Access, class: usize) {
        let line = &self.lines[idx];
        let sharers = line.sharers.get();
        let cpu = self.cpu.get();
        let me = self.me.get();
        // Fast path: a read of a line this CPU holds, or a write of a line only it
        // holds (modified already, or exclusive and clean: no bus transaction, the line
        // becomes modified here and no remote cache keeps a valid copy).
        let hit = match access {
            Access::Read => sharers & me != 0,
            Access::Write => sharers == me,
        };
        let ns = if hit {
            if access == Access::Write && line.dirty.get() as usize != cpu {
                line.dirty.set(cpu as u8);
                line.remote.set(self.kept_on_write());
            }
            let set_base = line.set_base.get();
            if set_base != NO_LRU {
                self.make_mru(idx, self.cpu_tags.get() + set_base as usize);
            }
            self.cost.l2_hit_ns
        } else {
            match access {
                // One copy of each miss path per line class (a constant at every call
                // site): the host predicts each copy's branches on line state (is the
                // set LRU-tracked, is the line remote) from its own class's history,
                // not from a mix of task, scheduler and workload lines.
                Access::Read => match class {
                    CLASS_TASK => self.read_miss::<CLASS_TASK>(idx, cpu),
                    CLASS_SCHED => self.read_miss::<CLASS_SCHED>(idx, cpu),
                    _ => self.read_miss::<CLASS_WORKLOAD>(idx, cpu),
                },
                Access::Write => match class {
                    CLASS_TASK => self.write_access::<CLASS_TASK>(idx, cpu),
                    CLASS_SCHED => self.write_access::<CLASS_SCHED>(idx, cpu),
                    _ => self.write_access::<CLASS_WORKLOAD>(idx, cpu),
                },
            }
        };
        if self.overlap.open.get() {
            self.overlapped_access(ns);
        } else {
            self.advance(ns);
        }
    }

    /// Latency of `cpu` reading line `idx` in state `st`, which misses in its cache (a
    /// hit is handled inline in `touch_index`), and the new state: the line becomes
    /// shared, a modified copy elsewhere is written back on the way. Out of line and
    /// apart from writes, so that the common miss saves few registers.
    ///
    /// The line is not in this CPU's cache (it is not among the sharers), so it is
    /// filled here too: one call per miss, no second call for the L2 bookkeeping.
    #[inline(never)]
    pub(super) fn read_miss<const CLASS: usize>(&self, idx: usize, cpu: CpuId) -> u64 {
        let class = CLASS;
        let line = self.line_at(idx);
        debug_assert!(line.sharers.get() & (1u64 << cpu) == 0);
        debug_assert_eq!(class, self.class_of(idx));
        self.task_read_misses.set(self.task_read_misses.get() + (class == CLASS_TASK) as u64);
        let ns = self.miss(class, line, KIND_READ_MISS);
        line.sharers.set(line.sharers.get() | 1u64 << cpu);
        line.dirty.set(NO_OWNER);
        let set_base = line.set_base.get();
        if set_base != NO_LRU {
            self.cache_fill(cpu, idx, self.cpu_tags.get() + set_base as usize);
        }
        ns
    }

    /// Latency of `cpu` writing line `idx` in state `st`, which others hold or it does
    /// not hold at all (a write to a line only it holds is handled inline), and the new state: every other copy is
    /// invalidated and this CPU owns the line.
    /// Its L2 bookkeeping is done here too: the line becomes this CPU's most recently
    /// used way (a fill if it did not hold it).
    #[inline(never)]
    pub(super) fn write_access<const CLASS: usize>(&self, idx: usize, cpu: CpuId) -> u64 {
        let class = CLASS;
        debug_assert_eq!(class, self.class_of(idx));
        let line = self.line_at(idx);
        let me = 1u64 << cpu;
        let sharers = line.sharers.get();
        let others = sharers & !me;
        let had = sharers & me != 0;
        debug_assert!(sharers != me, "an exclusive line's write is a hit");
        let ns = if had {
            // Upgrade: invalidate the other sharers; the farthest one sets the latency
            // (on one node every transfer costs the same, and there is another sharer).
            self.count(class, KIND_RFO);
            if self.one_node {
                self.one_node_upgrade_ns
            } else {
                self.upgrade_from[self.node.get()]
                    .iter()
                    .find(|&&(mask, _)| mask & others != 0)
                    .map_or(0, |&(_, ns)| ns)
            }
        } else {
            self.miss(class, line, KIND_RFO)
        };
        // Every other copy is invalidated: it leaves its cache.
        let set_base = line.set_base.get();
        if set_base != NO_LRU {
            self.drop_tags(others, idx, set_base);
        }
        line.sharers.set(me);
        line.dirty.set(cpu as u8);
        // Ownership invalidates every remote-cache copy too (the writer's quad gets the
        // line back from this CPU's cache, not its remote cache); an LLC keeps this
        // node's copy (it is inclusive: a write-back lands there).
        line.remote.set(self.kept_on_write());
        if set_base != NO_LRU {
            let base = self.cpu_tags.get() + set_base as usize;
            if !had {
                self.cache_fill(cpu, idx, base);
            } else {
                self.make_mru(idx, base);
            }
        }
        if self.store_buffers.depth > 0 {
            return self.buffer_store(cpu, ns);
        }
        ns
    }

    /// A miss of a line of class `class` (not in this CPU's cache, not modified here):
    /// served by the modified copy's cache, this quad's remote cache, this node's
    /// last-level cache, or the line's home memory.
    #[inline(always)]
    pub(super) fn miss(&self, class: usize, line: &LineState, kind: usize) -> u64 {
        let node = self.node.get();
        let mut home = line.home.get();
        if home == NO_OWNER {
            // First touch of a working-set line: its page is allocated on this node.
            home = node as u8;
            line.home.set(home);
        }
        let home = home as usize;
        // Whether this node's shared cache below the L2 keeps the line: every line it
        // fetches with an LLC, another node's line with a remote cache.
        // Whether the line is on another node and whether that node's shared cache has
        // it depend on the run: they are computed as masks and selected arithmetically,
        // not branched on (the host CPU mispredicted them on NUMA machines). `keeps` is
        // all ones or zero; the node's bit wraps as `1 << node` did in release builds
        // (more than 16 nodes exist only without a shared cache, with `keeps` zero).
        let keeps = self.keep_always | (self.keep_if_remote & ((home != node) as u16).wrapping_neg());
        let node_bit = 1u16.wrapping_shl(node as u32);
        let remote = line.remote.get();
        let dirty = line.dirty.get();
        let ns = if dirty != NO_OWNER {
            self.count(class, KIND_C2C);
            self.cost.transfer_ns(self.node_of(dirty as usize), node)
        } else {
            // Served below the L2 (memory, remote cache or LLC): counted by kind alike.
            self.count(class, kind);
            let memory = self.cost.memory_ns(home, node);
            let below = (remote & node_bit & keeps != 0) as u64;
            memory ^ ((memory ^ self.below_l2_ns) & below.wrapping_neg())
        };
        // A line from another quad's memory is kept in this quad's remote cache;
        // with an LLC, every line this node fetches is kept in its LLC.
        line.remote.set(remote | (node_bit & keeps));
        ns
    }

    /// What a write by the current CPU leaves in `LineState::remote`: no copy in
    /// another node's shared cache, and with an LLC this node's copy. (Without one the
    /// mask is 0, whatever the shift: a node beyond 16 only exists then.)
    #[inline(always)]
    pub(super) fn kept_on_write(&self) -> u16 {
        1u16.wrapping_shl(self.node.get() as u32) & self.llc_keep
    }

    /// Task `t`, running on the current CPU, works through `lines` lines of its
    /// working set (capped at the platform's lines per task): it reads every line and
    /// writes every fourth (one store per 128 bytes of 32-byte lines: buffers and
    /// stack written, file data and code only read). Returns the latency charged.
    pub fn touch_working_set(&self, t: TaskId, lines: usize) -> u64 {
        let start = self.cursor.get();
        let base = self.ws_base + t as usize * self.ws_lines;
        for j in 0..lines.min(self.ws_lines) {
            let access = if j % 4 == 3 { Access::Write } else { Access::Read };
            self.touch_index(base + j, access, CLASS_WORKLOAD);
        }
        self.cursor.get() - start
    }

    /// Line `idx`'s state, for the out-of-line miss paths and evictions. Unchecked: the
    /// misses are called from `touch_index` with an index it has just read through the
    /// checked `self.lines[idx]`, and an evicted index is a tag minus one, and tags are
    /// only written from such indices (`cache_fill`).
    #[inline(always)]
    pub(super) fn line_at(&self, idx: usize) -> &LineState {
        debug_assert!(idx < self.lines.len(), "line {idx} out of range");
        // SAFETY: in range, as above (checked in debug builds).
        unsafe { self.lines.get_unchecked(idx) }
    }

    #[inline]
    pub(super) fn count(&self, class: usize, kind: usize) {
        let c = &self.bus[class * 4 + kind];
        c.set(c.get() + 1);
    }

    pub fn bus_stats(&self) -> BusStats {
        let mut b = BusStats {
            locked_task_reads: self.walk_reads.get(),
            locked_task_misses: self.walk_misses.get(),
            ..BusStats::default()
        };
        for (i, c) in self.bus.iter().enumerate() {
            b.by[i / 4][i % 4] = c.get();
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{cost_of, plat};
    use super::super::*;
    use crate::machine::Machine;

    /// A queue's tree line is a line of its own: the queue header does not bring it,
    /// and a write on one CPU after the other wrote it is a miss (a transfer), not a hit.
    #[test]
    fn a_queue_tree_line_is_apart_from_its_header_and_moves_between_cpus() {
        let p = plat("smp-2");
        p.begin(0, 1000);
        p.touch(Line::Queue(1), Access::Write);
        let t = p.cursor();
        p.touch(Line::Tree(1), Access::Write);
        assert!(p.cursor() - t > p.cost.l2_hit_ns, "the header did not bring the tree line");
        let t = p.cursor();
        p.touch(Line::Tree(1), Access::Write);
        assert_eq!(p.cursor() - t, p.cost.l2_hit_ns, "then it is held");
        p.begin(1, 10_000);
        p.touch(Line::Tree(1), Access::Write);
        assert!(p.cursor() - 10_000 > p.cost.l2_hit_ns, "CPU 1 takes it from CPU 0");
        p.begin(0, 20_000);
        p.touch(Line::Tree(1), Access::Write);
        assert!(p.cursor() - 20_000 > p.cost.l2_hit_ns, "and CPU 0 back");
    }

    #[test]
    fn coherence_charges_transfers_and_hits() {
        let p = plat("numa-4x4");
        p.begin(0, 0);
        p.touch(Line::Task(3), Access::Write); // memory, local to node 0
        assert_eq!(p.cursor(), 250);
        p.touch(Line::Task(3), Access::Read); // hit
        assert_eq!(p.cursor(), 250 + p.cost.l2_hit_ns);
        p.begin(4, 0); // node 1 reads a line dirty on node 0: remote transfer
        p.touch(Line::Task(3), Access::Read);
        assert_eq!(p.cursor(), 2500);
        p.begin(4, 0); // now shared: hit
        p.touch(Line::Task(3), Access::Read);
        assert_eq!(p.cursor(), p.cost.l2_hit_ns);
        p.begin(0, 0); // upgrade invalidates the node-1 copy
        p.touch(Line::Task(3), Access::Write);
        assert_eq!(p.cursor(), 2500);
    }

    #[test]
    fn a_last_level_cache_serves_lines_the_l2_evicted() {
        // smp-8 with a 20 ns LLC: a line's first fetch comes from memory, a line
        // evicted from the L2 (or written by another CPU and written back) from the LLC.
        let mut m = Machine::preset("smp-8").unwrap();
        m.costs.hw.llc_latency_ns = 20;
        let p = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 1024, m.l2_kb, m.l2_assoc, m.line_bytes, 1);
        let s0 = p.line_set_of(Line::Task(0));
        let same: Vec<u32> = (0..1024u32).filter(|&t| p.line_set_of(Line::Task(t)) == s0).take(8).collect();
        let cost = |cpu, t, a| cost_of(&p, cpu, t, a);
        for &t in &same {
            assert_eq!(cost(0, t, Access::Read), 180, "first fetch: memory");
        }
        assert_eq!(cost(0, same[0], Access::Read), 20, "evicted from the 4-way set: the LLC has it");
        assert_eq!(cost(1, same[0], Access::Read), 20, "another CPU of the node: the LLC too");
        // Written on CPU 2 (invalidating 0 and 1), then evicted there by its set-mates.
        assert_eq!(cost(2, same[0], Access::Write), 20, "a write miss of a clean line: the LLC serves it too");
        for &t in &same[1..] {
            cost(2, t, Access::Read);
        }
        assert_eq!(cost(3, same[0], Access::Read), 20, "written back into the LLC");
        // Without an LLC (every preset) the same evicted line goes to memory.
        let q = plat("smp-8");
        for &t in &same {
            q.begin(0, 0);
            q.touch(Line::Task(t), Access::Read);
        }
        assert_eq!(cost_of(&q, 0, same[0], Access::Read), q.cost.memory_ns(0, 0));
        // A last-level cache and NUMA-Q's remote cache together are refused.
        let mut n = Machine::preset("numa-4x4").unwrap();
        n.costs.hw.llc_latency_ns = 20;
        let e = n.validate().unwrap_err().0;
        assert!(e.contains("llc_latency_ns") && e.contains("remote_cache_ns"), "{e}");
    }

    #[test]
    fn remote_cache_serves_a_quads_second_reader() {
        // numa-4x4: CPUs 4..8 are node 1; kernel lines live on node 0.
        let p = plat("numa-4x4");
        let read = |cpu, t| {
            p.begin(cpu, 0);
            p.touch(Line::Task(t), Access::Read);
            p.cursor()
        };
        assert_eq!(read(4, 7), 2500, "first read from quad 1 goes to quad 0's memory");
        assert_eq!(read(5, 7), p.cost.remote_cache_ns, "the second reader on quad 1 hits its remote cache");
        p.begin(0, 0);
        p.touch(Line::Task(7), Access::Write); // invalidates every copy, remote caches included
        assert_eq!(read(6, 7), 2500, "dirty on node 0: a remote cache-to-cache transfer");
        assert_eq!(read(8, 7), 2500, "quad 2 has no copy yet");
        assert_eq!(read(9, 7), p.cost.remote_cache_ns);
        // Without a remote cache (remote_cache_ns = 0) every remote miss pays the interconnect.
        let mut m = Machine::preset("numa-4x4").unwrap();
        m.costs.hw.remote_cache_ns = 0;
        let q = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 16, m.l2_kb, m.l2_assoc, m.line_bytes, 1);
        for cpu in [4, 5] {
            q.begin(cpu, 0);
            q.touch(Line::Task(1), Access::Read);
            assert_eq!(q.cursor(), 2500);
        }
    }

    #[test]
    fn working_sets_are_workload_lines_placed_by_first_touch() {
        let m = Machine::preset("numa-4x4").unwrap();
        let p = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 4, m.l2_kb, m.l2_assoc, m.line_bytes, 1)
            .with_working_sets(8);
        assert_eq!(p.working_set_addr(1, 3) - p.working_set_addr(1, 0), 3 * 32);
        assert_eq!(p.working_set_addr(2, 0) - p.working_set_addr(1, 0), 4096, "page-aligned per task");
        // A task on quad 1 touches its working set first: its pages live on quad 1.
        p.begin(4, 0);
        let ns = p.touch_working_set(2, 8);
        assert_eq!(ns, 8 * 250, "local memory: eight misses at 250 ns");
        let b = p.bus_stats();
        assert_eq!(b.by[CLASS_WORKLOAD][KIND_READ_MISS] + b.by[CLASS_WORKLOAD][KIND_RFO], 8);
        assert_eq!(b.by[CLASS_TASK].iter().sum::<u64>(), 0);
        // Again: all hits.
        p.begin(4, 0);
        assert_eq!(p.touch_working_set(2, 8), 8 * p.cost.l2_hit_ns);
        // The same task moved to quad 0: remote lines (dirty ones by transfer).
        p.begin(0, 0);
        assert!(p.touch_working_set(2, 8) >= 8 * 2500);
    }
}
