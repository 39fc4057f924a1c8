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

/// Bits of the CPU index ([`schedlab_core::cpu::MAX_CPUS`] is 64).
const CPU_BITS: u32 = 8;
/// The largest time the packing orders exactly; later times all compare equal to it.
pub(super) const LATEST: u64 = (1 << (64 - CPU_BITS)) - 1;

/// Leaves of the largest tree ([`schedlab_core::cpu::MAX_CPUS`]); the tree is a fixed
/// array so that an index masked into it needs no bounds check.
const LEAVES: usize = 64;
const MASK: usize = 2 * LEAVES - 1;
/// Machines with at most this many CPUs (every preset) use 8 or 16 leaves in groups of
/// four: `set` recomputes its group's minimum (3 branch-free compares) and `min` takes
/// the minimum of the four groups (3 more) instead of 7 or 15 compares over every
/// leaf; the engine sets about one CPU per event (`Engine::refresh` defers the writes).
/// Either is fewer instructions per event than recomputing a root-ward path
/// (`docs/cost-model.md` has the counts); the tree pays off for more CPUs.
const FLAT: usize = 16;
/// Leaves per group with 16 leaves.
const GROUP: usize = 4;

/// A tournament tree over the CPUs' packed keys: leaf `n + cpu` holds CPU `cpu`'s key,
/// every inner node the smaller of its two children, the root (index 1) the minimum.
/// [`set`](NextCpu::set) only writes the leaf and marks the CPU; [`min`](NextCpu::min)
/// first recomputes the marked CPUs' paths to the root (`log2 n` branch-free
/// compares each). The engine asks once per event and sets one CPU's time about twice
/// per event (cleared when its event is taken, armed again by the event's work): one
/// path per event instead of a scan of every CPU (the scan was 10 % of a 16-CPU run's
/// instructions).
#[derive(Debug)]
pub(super) struct NextCpu {
    tree: Box<[u64; 2 * LEAVES]>,
    /// Leaves in use (a power of two, at least 8; up to [`FLAT`] only the leaves and
    /// `groups` are read); padding leaves hold `u64::MAX`,
    /// which is above every CPU's key.
    n: usize,
    /// CPUs whose leaf changed since the last `min` (`1 << cpu`; tree only).
    dirty: u64,
    /// Up to [`FLAT`] leaves: the minimum of each group of [`GROUP`] leaves, kept by
    /// `set` (`u64::MAX` for groups past the leaves in use).
    groups: [u64; FLAT / GROUP],
}

impl NextCpu {
    /// `cpus` CPUs with nothing pending.
    pub(super) fn new(cpus: usize) -> NextCpu {
        assert!(cpus <= LEAVES);
        let n = if cpus <= FLAT { cpus.next_power_of_two().max(FLAT / 2) } else { cpus.next_power_of_two() };
        let mut t = NextCpu { tree: Box::new([u64::MAX; 2 * LEAVES]), n, dirty: 0, groups: [u64::MAX; FLAT / GROUP] };
        for c in 0..cpus {
            t.set(c, u64::MAX);
        }
        t
    }

    /// The earliest time (`u64::MAX` if it is at or past [`LATEST`]) and its CPU (the
    /// lowest-numbered on a tie).
    #[inline]
    pub(super) fn min(&mut self) -> (u64, usize) {
        let k = if self.n <= FLAT {
            // With 8 leaves the last two groups stay at u64::MAX.
            let [a, b, c, d] = self.groups;
            a.min(b).min(c.min(d))
        } else {
            self.tree_min()
        };
        let t = k >> CPU_BITS;
        (if t >= LATEST { u64::MAX } else { t }, (k & ((1 << CPU_BITS) - 1)) as usize)
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

    /// Set CPU `cpu`'s next time to `at`.
    #[inline]
    pub(super) fn set(&mut self, cpu: usize, at: u64) {
        self.tree[(self.n + cpu) & MASK] = at.min(LATEST) << CPU_BITS | cpu as u64;
        if self.n <= FLAT {
            // The group's leaves `n + 4g ..`, below 32: masked into the tree, no bounds
            // check; reduced pairwise so the compares do not wait on one another.
            let g = (cpu / GROUP) % (FLAT / GROUP);
            let first = self.n + g * GROUP;
            let l = |k: usize| self.tree[(first + k) & MASK];
            self.groups[g] = l(0).min(l(1)).min(l(2).min(l(3)));
        } else {
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
            let mut v = vec![u64::MAX; cpus];
            for _ in 0..2000 {
                let c = rng.gen_range(0..cpus);
                let at = if rng.gen_bool(0.1) { u64::MAX } else { rng.gen_range(0..50) };
                t.set(c, at);
                v[c] = at;
                let scan = v.iter().enumerate().fold((u64::MAX, 0), |b, (c, &x)| if x < b.0 { (x, c) } else { b });
                assert_eq!(t.min(), scan, "{cpus} cpus: {v:?}");
            }
        }
    }
}
