//! Each CPU's private set-associative L2 (size, ways and line size from the
//! machine), on top of coherence: a line is in a CPU's cache only while that CPU is
//! among its sharers (`coherence.rs`). Each set keeps its ways in recency order (true
//! LRU); filling a full set evicts its least recently used way, which removes the CPU
//! from that line's sharers (and, if it held the line modified, is a write-back). So
//! a line can miss because another CPU took it (coherence) or because it was evicted
//! (capacity or set conflict).

use super::coherence::{KIND_WRITEBACK, NO_OWNER};
use super::SimPlatform;
use schedlab_core::CpuId;
use std::cell::Cell;

/// `LineState::set_base` of a line whose set can never overflow: no LRU state.
pub(super) const NO_LRU: u32 = u32::MAX;

impl SimPlatform {
    /// Line `idx`, which the current CPU holds (it is among the line's sharers, so its
    /// tag is in the set at `base`), becomes the most recently used way (move-to-front:
    /// each set's ways are kept in recency order).
    #[inline(always)]
    pub(super) fn make_mru(&self, idx: usize, base: usize) {
        let tag = idx as u32 + 1;
        if self.quad {
            let cell = self.quad_at(base);
            let [a, b, c, d] = cell.get();
            debug_assert!(a == tag || b == tag || c == tag || d == tag, "line {idx}: a sharer's tag is not in its set");
            // The ways more recent than the tag's move down one; with the tag in way 0
            // the set stays as it is. Selects and one store, no branch: whether a hit
            // is on way 0 depends on the run, and the host CPU mispredicted it often
            // enough to cost more than the store.
            let (in_a, in_b) = (a == tag, b == tag);
            cell.set([tag, if in_a { b } else { a }, if in_a | in_b { c } else { b }, if d == tag { c } else { d }]);
        } else if self.tags[base].get() != tag {
            self.cache_promote(idx, base);
        }
    }

    /// [`make_mru`](Self::make_mru) of a set that is not 4-way, whose tag is not in
    /// way 0.
    #[inline(never)]
    pub(super) fn cache_promote(&self, idx: usize, base: usize) {
        let tag = idx as u32 + 1;
        let set = &self.tags[base..base + self.ways];
        // The tag is there (a sharer's line is in its cache), and not in way 0 (the
        // caller checked): shift the more recent ways down until it is found.
        let mut carry = set[0].get();
        for way in &set[1..] {
            carry = way.replace(carry);
            if carry == tag {
                set[0].set(tag);
                return;
            }
        }
        unreachable!("line {idx}: a sharer's tag is not in its set");
    }

    /// Line `idx`, which `cpu` does not hold, is filled into the set at `base` as its
    /// most recently used way. Ways are compact (the lines in recency order, then the
    /// empty ways: a line that loses this CPU as a sharer leaves its way at once,
    /// `drop_tag`), so the set is full exactly when its last way is taken; then the
    /// last (least recently used) way's line leaves this cache, which drops this CPU
    /// from its sharers (a write-back if it held it modified).
    #[inline(always)]
    pub(super) fn cache_fill(&self, cpu: CpuId, idx: usize, base: usize) {
        if self.quad {
            let cell = self.quad_at(base);
            let [a, b, c, d] = cell.get();
            if d != 0 {
                self.evict(cpu, d as usize - 1);
            }
            // Compact ways: shifting every way down one drops the last (evicted or empty).
            cell.set([idx as u32 + 1, a, b, c]);
            return;
        }
        let set = &self.tags[base..base + self.ways];
        let last = set[self.ways - 1].get();
        let pos = if last != 0 {
            self.evict(cpu, last as usize - 1);
            self.ways - 1
        } else {
            set.iter().position(|t| t.get() == 0).unwrap_or(self.ways - 1)
        };
        for w in (1..=pos).rev() {
            set[w].set(set[w - 1].get());
        }
        set[0].set(idx as u32 + 1);
    }

    /// Line `oi`, the least recently used of a full set of `cpu`'s cache, leaves it:
    /// `cpu` is no longer a sharer, and a modified copy is written back.
    #[inline(always)]
    pub(super) fn evict(&self, cpu: CpuId, oi: usize) {
        let line = self.line_at(oi);
        line.sharers.set(line.sharers.get() & !(1u64 << cpu));
        if line.dirty.get() as usize == cpu {
            line.dirty.set(NO_OWNER);
            self.count(self.class_of(oi), KIND_WRITEBACK);
        }
    }

    /// Line `idx` leaves the caches of the CPUs in `cpus` (invalidated by another CPU's
    /// write): in each, its way is freed and the ways behind it move up, keeping the set
    /// compact. One call for all of them, so the layout test and the tag are not
    /// repeated per CPU (a write to a shared line invalidates five copies on average).
    #[inline(always)]
    pub(super) fn drop_tags(&self, mut cpus: u64, idx: usize, set_base: u32) {
        let tag = idx as u32 + 1;
        if self.quad {
            while cpus != 0 {
                let cpu = cpus.trailing_zeros() as usize;
                cpus &= cpus - 1;
                let cell = self.quad_at(cpu * self.cpu_stride + set_base as usize);
                let [a, b, c, d] = cell.get();
                // The ways behind the dropped one move up; the last becomes empty.
                // Selects, not a compare-and-branch chain: which way holds a shared
                // line is data the host CPU cannot predict.
                let (in_a, in_b, in_c, in_d) = (a == tag, b == tag, c == tag, d == tag);
                let by_b = in_a | in_b;
                let by_c = by_b | in_c;
                cell.set([
                    if in_a { b } else { a },
                    if by_b { c } else { b },
                    if by_c { d } else { c },
                    if by_c | in_d { 0 } else { d },
                ]);
            }
            return;
        }
        while cpus != 0 {
            let cpu = cpus.trailing_zeros() as usize;
            cpus &= cpus - 1;
            let base = cpu * self.cpu_stride + set_base as usize;
            let set = &self.tags[base..base + self.ways];
            if let Some(p) = set.iter().position(|t| t.get() == tag) {
                for w in p..self.ways - 1 {
                    set[w].set(set[w + 1].get());
                }
                set[self.ways - 1].set(0);
            }
        }
    }

    /// The 4-way set at tag offset `base`. Unchecked: every `base` is a CPU's tag offset
    /// (`cpu × cpu_stride`, `cpu` below the CPU count: `begin` indexes `node_of` with it,
    /// and a line's sharers are CPUs that ran `begin`) plus a line's `set_base` (below
    /// `cpu_stride`), and `quads` holds CPUs × `cpu_stride / 4` sets. The bounds check
    /// was a compare and branch on every access that reaches the LRU state.
    #[inline(always)]
    pub(super) fn quad_at(&self, base: usize) -> &Cell<[u32; 4]> {
        debug_assert!(base >> 2 < self.quads.len(), "set offset {base} out of range");
        // SAFETY: in range, as above (checked in debug builds).
        unsafe { self.quads.get_unchecked(base >> 2) }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::plat;
    use super::super::*;
    use crate::machine::Machine;
    use schedlab_core::SchedLock;

    #[test]
    fn set_conflicts_evict_and_write_back() {
        // smp-8: 2 MB, 4-way, 32-byte lines = 16384 sets spanning 512 KB: the hot lines of
        // 8 KB-aligned blocks fall into only 64 sets, so every 64th task shares one.
        let p = plat("smp-8");
        let s0 = p.line_set_of(Line::Task(0));
        let same: Vec<u32> = (0..1024u32).filter(|&t| p.line_set_of(Line::Task(t)) == s0).take(8).collect();
        assert_eq!(same, [0, 64, 128, 192, 256, 320, 384, 448]);
        let l = p.new_lock("rq", ());
        p.begin(0, 0);
        // Dirty them all, then walk twice under the lock: more lines than ways in one
        // set, so LRU misses on every read of the walk.
        for &t in &same {
            p.touch(Line::Task(t), Access::Write);
        }
        let wb = p.bus_stats().by[CLASS_TASK][KIND_WRITEBACK];
        assert_eq!(wb as usize, same.len() - 4, "each dirty eviction is a write-back");
        l.with(&p, |_| {
            for _ in 0..2 {
                for &t in &same {
                    p.touch(Line::Task(t), Access::Read);
                }
            }
        });
        let b = p.bus_stats();
        assert_eq!(b.locked_task_reads, 2 * same.len() as u64);
        assert_eq!(b.locked_task_misses, b.locked_task_reads);
        // Four of them fit: those hit.
        p.begin(1, 0);
        let l2 = p.new_lock("rq2", ());
        l2.with(&p, |_| {
            for _ in 0..3 {
                for &t in &same[..4] {
                    p.touch(Line::Task(t), Access::Read);
                }
            }
        });
        let b2 = p.bus_stats();
        assert_eq!(b2.locked_task_misses - b.locked_task_misses, 4, "only the first walk misses");
    }

    #[test]
    fn eviction_removes_sharer() {
        let p = plat("smp-8");
        let s0 = p.line_set_of(Line::Task(0));
        let same: Vec<u32> = (0..1024u32).filter(|&t| p.line_set_of(Line::Task(t)) == s0).take(8).collect();
        p.begin(0, 0);
        for &t in &same {
            p.touch(Line::Task(t), Access::Read);
        }
        // The first was evicted: reading it again goes to memory.
        let before = p.cursor();
        p.touch(Line::Task(same[0]), Access::Read);
        assert_eq!(p.cursor() - before, p.cost.memory_ns(0, 0));
    }

    #[test]
    fn colours_spread_conflicting_hot_lines() {
        // numa-4x4: 512 KB 4-way, 32-byte lines: sets span 128 KB, so every 16th block
        // shares a set. The colour (address bits 13..17) differs in bit 17 between
        // task k·16 and (k+1)·16: two sets of four, which fit.
        let m = Machine::preset("numa-4x4").unwrap();
        let mk =
            |c| SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 1024, m.l2_kb, m.l2_assoc, m.line_bytes, c);
        let walk: Vec<u32> = (0..8).map(|k| k * 16).collect();
        let vanilla = mk(1);
        assert!(walk.iter().all(|&t| vanilla.line_set_of(Line::Task(t)) == vanilla.line_set_of(Line::Task(0))));
        let p = mk(32);
        let l = p.new_lock("rq", ());
        p.begin(0, 0);
        l.with(&p, |_| {
            for _ in 0..3 {
                for &t in &walk {
                    p.touch(Line::Task(t), Access::Read);
                }
            }
        });
        let b = p.bus_stats();
        assert_eq!((b.locked_task_reads, b.locked_task_misses), (24, 8), "only the cold walk misses");
    }
}
