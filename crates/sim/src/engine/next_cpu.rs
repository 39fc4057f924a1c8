//! Which CPU has the earliest pending event.
//!
//! The engine asks this once per event over every CPU. Each CPU's next time is kept
//! packed with its index in one `u64` (`time << 8 | cpu`), so the question is a plain
//! minimum over an array: no data-dependent branch to mispredict (a compare-and-branch
//! scan mispredicted on most events), and ties go to the lower CPU, the order the
//! results depend on. The packing keeps the order of times below 2^56 ns (833 days of
//! virtual time); a later event reads as "never", so a run that gets that far ends with
//! the time-limit error (`--max-virtual-s` accepts larger limits, but no run of the
//! shipped workloads comes near).

/// Bits of the CPU index ([`schedlab_core::cpu::MAX_CPUS`] is 64).
const CPU_BITS: u32 = 8;
/// The largest time the packing orders exactly; later times all compare equal to it.
pub(super) const LATEST: u64 = (1 << (64 - CPU_BITS)) - 1;

#[derive(Debug)]
pub(super) struct NextCpu {
    keys: Vec<u64>,
}

impl NextCpu {
    /// `cpus` CPUs with nothing pending.
    pub(super) fn new(cpus: usize) -> NextCpu {
        assert!(cpus <= 1 << CPU_BITS);
        NextCpu { keys: (0..cpus as u64).map(|c| LATEST << CPU_BITS | c).collect() }
    }

    /// The earliest time (`u64::MAX` if it is at or past [`LATEST`]) and its CPU (the
    /// lowest-numbered on a tie).
    #[inline]
    pub(super) fn min(&self) -> (u64, usize) {
        // Four independent running minima (no loop-carried chain of one `cmov` per
        // CPU), folded at the end.
        let mut m = [u64::MAX; 4];
        let chunks = self.keys.chunks_exact(4);
        let rest = chunks.remainder();
        for c in chunks {
            for i in 0..4 {
                m[i] = if c[i] < m[i] { c[i] } else { m[i] };
            }
        }
        for (i, &k) in rest.iter().enumerate() {
            m[i] = if k < m[i] { k } else { m[i] };
        }
        let k = m[0].min(m[1]).min(m[2].min(m[3]));
        let t = k >> CPU_BITS;
        (if t >= LATEST { u64::MAX } else { t }, (k & ((1 << CPU_BITS) - 1)) as usize)
    }

    /// Set CPU `cpu`'s next time to `at`.
    #[inline]
    pub(super) fn set(&mut self, cpu: usize, at: u64) {
        self.keys[cpu] = at.min(LATEST) << CPU_BITS | cpu as u64;
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
        for cpus in [1usize, 2, 3, 5, 8, 16, 64] {
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
