//! Which CPU has the earliest pending event.
//!
//! The engine asks this once per event over every CPU. Each CPU's next time is kept
//! packed with its index in one `u64` (`time << 8 | cpu`), so the question is a plain
//! minimum (kept in a tournament tree, [`NextCpu`]): no data-dependent branch to
//! mispredict (a compare-and-branch scan mispredicted on most events), and ties go to
//! the lower CPU, the order the results depend on. The packing keeps the order of times below 2^56 ns (833 days of
//! virtual time); a later event reads as "never", so a run that gets that far ends with
//! the time-limit error (`--max-virtual-s` accepts larger limits, but no run of the
//! shipped workloads comes near).

/// Bits of a key below the time: the CPU index (6 bits, [`schedlab_core::cpu::MAX_CPUS`]
/// is 64) above the event slot (2 bits, [`Slot`]).
const CPU_BITS: u32 = 8;
const SLOT_BITS: u32 = 2;
/// The largest time the packing orders exactly; later times all compare equal to it.
pub(super) const LATEST: u64 = (1 << (64 - CPU_BITS)) - 1;

/// A CPU's three event slots, in the order they are taken at one instant on one CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    Ipi = 0,
    Step = 1,
    Tick = 2,
}

/// Leaves of the largest tree ([`schedlab_core::cpu::MAX_CPUS`]); the tree is a fixed
/// array so that an index masked into it needs no bounds check.
const LEAVES: usize = 64;
const MASK: usize = 2 * LEAVES - 1;
/// Machines with at most this many CPUs (every preset) keep 8 or 16 leaves and `min`
/// takes their minimum directly (7 or 15 branch-free compares in 3 or 4 levels): the
/// leaves written by this event are read back once, and nothing else waits on a
/// store. Wall time per event decides here, not instruction counts: the minimum's
/// result is the start of the next event's dependency chain (which CPU's state it
/// loads), and groups of four kept by `set` (fewer compares) put a second store and
/// reload on that chain (`docs/cost-model.md`). The tree pays off for more CPUs.
const FLAT: usize = 16;

/// A tournament tree over the CPUs' packed keys: leaf `n + cpu` holds CPU `cpu`'s key,
/// every inner node the smaller of its two children, the root (index 1) the minimum.
/// [`set`](NextCpu::set) only writes the leaf and marks the CPU; [`min`](NextCpu::min)
/// first recomputes the marked CPUs' paths to the root (`log2 n` branch-free
/// compares each). The engine asks once per event and sets about one CPU's times per
/// event (a step's CPU only when the step re-arms it, or goes idle): one path per
/// event instead of a scan of every CPU (the scan was 10 % of a 16-CPU run's
/// instructions).
///
/// A key is `time << 8 | cpu << 2 | slot`: the minimum also says which of the CPU's
/// slots is due, so the engine classifies the event without loading the CPU's state.
#[derive(Debug)]
pub(super) struct NextCpu {
    tree: Box<[u64; 2 * LEAVES]>,
    /// Leaves in use (a power of two, at least 8; up to [`FLAT`] only `flat` is read);
    /// padding leaves hold `u64::MAX`, which is above every CPU's key.
    n: usize,
    /// CPUs whose leaf changed since the last `min` (`1 << cpu`; tree only).
    dirty: u64,
    /// Up to [`FLAT`] CPUs: their keys (`u64::MAX` past the CPUs in use).
    flat: [u64; FLAT],
}

impl NextCpu {
    /// `cpus` CPUs with nothing pending.
    pub(super) fn new(cpus: usize) -> NextCpu {
        assert!(cpus <= LEAVES);
        let n = if cpus <= FLAT { cpus.next_power_of_two().max(FLAT / 2) } else { cpus.next_power_of_two() };
        let mut t = NextCpu { tree: Box::new([u64::MAX; 2 * LEAVES]), n, dirty: 0, flat: [u64::MAX; FLAT] };
        for c in 0..cpus {
            t.set(c, u64::MAX, u64::MAX, u64::MAX);
        }
        t
    }

    /// The earliest time (`u64::MAX` if it is at or past [`LATEST`]), its CPU (the
    /// lowest-numbered on a tie) and which of that CPU's slots it is (on a tie on one
    /// CPU: the IPI, then the step, then the tick).
    #[inline]
    pub(super) fn min(&mut self) -> (u64, usize, Slot) {
        let k = if self.n <= FLAT {
            // Pairwise, so the compares of one level do not wait on one another.
            let l = &self.flat;
            let m = |a: u64, b: u64| a.min(b);
            let m8 = m(m(m(l[0], l[1]), m(l[2], l[3])), m(m(l[4], l[5]), m(l[6], l[7])));
            if self.n == FLAT / 2 {
                m8
            } else {
                m(m8, m(m(m(l[8], l[9]), m(l[10], l[11])), m(m(l[12], l[13]), m(l[14], l[15]))))
            }
        } else {
            self.tree_min()
        };
        let t = k >> CPU_BITS;
        let slot = match k & ((1 << SLOT_BITS) - 1) {
            0 => Slot::Ipi,
            1 => Slot::Step,
            _ => Slot::Tick,
        };
        (if t >= LATEST { u64::MAX } else { t }, ((k & ((1 << CPU_BITS) - 1)) >> SLOT_BITS) as usize, slot)
    }

    /// The root after recomputing the marked CPUs' paths.
    #[inline(always)]
    fn tree_min(&mut self) -> u64 {
        // Paths of several marked CPUs may share inner nodes: each path is recomputed
        // bottom-up from the children, so a shared node is right after the last path
        // through it.
        let mut d = self.dirty;
        self.dirty = 0;
        while d != 0 {
            let mut i = (self.n + d.trailing_zeros() as usize) & MASK;
            d &= d - 1;
            // The value just written at `i` stays in a register: one load per level.
            let mut v = self.tree[i];
            while i > 1 {
                let s = self.tree[(i ^ 1) & MASK];
                v = if s < v { s } else { v };
                i >>= 1;
                self.tree[i & MASK] = v;
            }
        }
        self.tree[1]
    }

    /// Set CPU `cpu`'s pending IPI, step and tick times.
    #[inline]
    pub(super) fn set(&mut self, cpu: usize, ipi: u64, step: u64, tick: u64) {
        let base = ((cpu as u64) << SLOT_BITS) & ((1 << CPU_BITS) - 1);
        let key = |at: u64, slot: Slot| at.min(LATEST) << CPU_BITS | base | slot as u64;
        let k = key(ipi, Slot::Ipi).min(key(step, Slot::Step)).min(key(tick, Slot::Tick));
        if self.n <= FLAT {
            self.flat[cpu % FLAT] = k;
        } else {
            self.tree[(self.n + cpu) & MASK] = k;
            self.dirty |= 1 << (cpu & (LEAVES - 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Agrees with a compare-and-branch scan (lowest CPU on ties) after random updates.
    #[test]
    fn agrees_with_a_scan() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for cpus in [1usize, 2, 3, 5, 8, 16, 17, 33, 64] {
            let mut t = NextCpu::new(cpus);
            let mut v = vec![[u64::MAX; 3]; cpus];
            for _ in 0..2000 {
                let c = rng.gen_range(0..cpus);
                for at in &mut v[c] {
                    *at = if rng.gen_bool(0.3) { u64::MAX } else { rng.gen_range(0..50) };
                }
                let [ipi, step, tick] = v[c];
                t.set(c, ipi, step, tick);
                // The engine's former order: the lowest CPU of the earliest time, then
                // its IPI, step, tick.
                let best = v.iter().enumerate().fold((u64::MAX, 0), |b, (c, s)| {
                    let x = s.iter().copied().min().unwrap();
                    if x < b.0 {
                        (x, c)
                    } else {
                        b
                    }
                });
                let s = v[best.1];
                let slot = if s[0] == best.0 {
                    Slot::Ipi
                } else if s[1] == best.0 {
                    Slot::Step
                } else {
                    Slot::Tick
                };
                let (at, cpu, got) = t.min();
                assert_eq!((at, cpu), best, "{cpus} cpus: {v:?}");
                if at != u64::MAX {
                    assert_eq!(got, slot, "{cpus} cpus: {v:?}");
                }
            }
        }
    }
}
