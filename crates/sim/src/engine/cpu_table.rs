//! The engine's per-CPU state, indexed without a bounds check.
//!
//! The event loop indexes the CPUs a dozen times per event (the event's CPU, the
//! reschedule targets, the arming of the next step). A `Vec` compares every index with
//! its length and branches; this table has the fixed size of the largest machine
//! ([`MAX_CPUS`] = 64), so an index masked into it is always in range — one `and`.
//! The CPU indices the engine uses are below the machine's CPU count by construction
//! (events are armed for existing CPUs; reschedule targets come from the policy's
//! topology, which has the machine's CPUs): debug builds check that.

use super::CpuRt;
use schedlab_core::cpu::MAX_CPUS;
use std::ops::{Deref, Index, IndexMut};

pub(super) struct CpuTable {
    all: Box<[CpuRt; MAX_CPUS]>,
    /// CPUs of the machine; the rest of `all` is padding no index reaches.
    n: usize,
}

impl CpuTable {
    /// `n` CPUs (at most [`MAX_CPUS`], which machine validation enforces), each `init`.
    pub(super) fn new(n: usize, init: CpuRt) -> CpuTable {
        assert!(n <= MAX_CPUS, "{n} CPUs: at most {MAX_CPUS}");
        let all: Box<[CpuRt; MAX_CPUS]> =
            vec![init; MAX_CPUS].into_boxed_slice().try_into().unwrap_or_else(|_| unreachable!());
        CpuTable { all, n }
    }
}

impl Index<usize> for CpuTable {
    type Output = CpuRt;
    #[inline(always)]
    fn index(&self, c: usize) -> &CpuRt {
        debug_assert!(c < self.n, "CPU {c} of {}", self.n);
        &self.all[c & (MAX_CPUS - 1)]
    }
}

impl IndexMut<usize> for CpuTable {
    #[inline(always)]
    fn index_mut(&mut self, c: usize) -> &mut CpuRt {
        debug_assert!(c < self.n, "CPU {c} of {}", self.n);
        &mut self.all[c & (MAX_CPUS - 1)]
    }
}

/// The machine's CPUs as a slice (`len`, `iter`).
impl Deref for CpuTable {
    type Target = [CpuRt];
    fn deref(&self) -> &[CpuRt] {
        &self.all[..self.n]
    }
}
