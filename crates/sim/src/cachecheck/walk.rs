//! The synthetic run-queue walk both sides perform: its parameters, their checks,
//! and the visiting order, generated in registers (no tables in memory, so the
//! replay's walk puts nothing but the task lines through the data cache).

use super::CacheCheckError;
use schedlab_core::layout::{TASK_BLOCK, TASK_HOT_OFFSET};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Tasks 0..N in order, `reps` times (the goodness loop over a run queue).
    Seq,
    /// `reps × N` visits, each to a task drawn by a seeded xorshift64*.
    Random,
}

impl Order {
    pub fn name(self) -> &'static str {
        match self {
            Order::Seq => "seq",
            Order::Random => "random",
        }
    }
}

/// One walk and the L2 geometry it is checked on.
#[derive(Clone, Copy, Debug)]
pub struct Walk {
    pub l2_bytes: u64,
    pub assoc: u32,
    pub line: u32,
    pub tasks: u64,
    pub colours: u32,
    pub reps: u64,
    pub order: Order,
    pub seed: u64,
}

/// Bounds that keep a replay under valgrind to seconds and its buffer to 128 MB.
pub const MAX_TASKS: u64 = 16384;
pub const MAX_VISITS: u64 = 20_000_000;
/// The model places task blocks at `TASK_BASE` (16 MB-aligned): a set span beyond
/// that would make its set index depend on `TASK_BASE` and not on the offsets alone.
pub const MAX_SET_SPAN: u64 = 16 << 20;

impl Walk {
    /// Everything both sides need to agree on, named when wrong.
    pub fn validate(&self) -> Result<(), CacheCheckError> {
        self.check().map_err(CacheCheckError::BadWalk)
    }

    fn check(&self) -> Result<(), String> {
        let pow2 = |x: u64| x != 0 && x.is_power_of_two();
        if !pow2(self.line as u64) || !(16..=256).contains(&self.line) {
            return Err(format!("--line {}: must be a power of two from 16 to 256 bytes", self.line));
        }
        if self.assoc == 0 || self.assoc > 64 {
            return Err(format!("--assoc {}: must be 1 to 64 ways", self.assoc));
        }
        if !self.l2_bytes.is_multiple_of(1024) || self.l2_bytes > (1 << 30) {
            return Err(format!("--l2 {}: must be a whole number of KB, at most 1g", self.l2_bytes));
        }
        let way = self.assoc as u64 * self.line as u64;
        let sets = self.l2_bytes / way;
        if !self.l2_bytes.is_multiple_of(way) || !pow2(sets) {
            return Err(format!(
                "--l2 {} with {} ways of {}-byte lines: the number of sets must be a power of two (cachegrind's rule)",
                self.l2_bytes, self.assoc, self.line
            ));
        }
        if sets * self.line as u64 > MAX_SET_SPAN {
            return Err(format!("--l2 / --assoc = {} bytes: at most {MAX_SET_SPAN} (16m)", sets * self.line as u64));
        }
        if self.tasks == 0 || self.tasks > MAX_TASKS {
            return Err(format!("--tasks {}: must be 1 to {MAX_TASKS}", self.tasks));
        }
        if !pow2(self.colours as u64) {
            return Err(format!("--colours {}: must be a power of two (1 = no colouring)", self.colours));
        }
        // The read address of the last colour must stay inside its task block.
        if TASK_HOT_OFFSET + (self.colours as u64 - 1) * self.line as u64 >= TASK_BLOCK {
            return Err(format!(
                "--colours {} × {}-byte lines: the last colour's hot address would leave its {TASK_BLOCK}-byte task block",
                self.colours, self.line
            ));
        }
        if self.reps == 0 || self.tasks * self.reps > MAX_VISITS {
            return Err(format!("--reps {}: must be at least 1, and tasks × reps at most {MAX_VISITS}", self.reps));
        }
        Ok(())
    }

    /// Call `f(task)` for every visit in order. Inlined into both sides so that the
    /// replay's loop keeps the generator in registers.
    #[inline(always)]
    pub fn for_each_visit(&self, mut f: impl FnMut(u64)) {
        match self.order {
            Order::Seq => {
                // One loop whose trip count LLVM does not compute (it would unroll a
                // counted loop and then need a callee-saved register, whose stack save
                // and restore cachegrind would count inside the walk).
                let (mut i, mut left) = (0, self.reps);
                while left != 0 {
                    f(i);
                    i += 1;
                    if i == self.tasks {
                        i = 0;
                        left -= 1;
                    }
                }
            }
            Order::Random => {
                // xorshift64* (Vigna); a zero state would stay zero.
                let mut x = self.seed ^ 0x9E37_79B9_7F4A_7C15;
                if x == 0 {
                    x = 1;
                }
                for _ in 0..self.reps * self.tasks {
                    x ^= x >> 12;
                    x ^= x << 25;
                    x ^= x >> 27;
                    let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32;
                    // Multiply-shift maps the top 32 bits onto 0..tasks without a division.
                    f((r * self.tasks) >> 32);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(order: Order) -> Walk {
        Walk { l2_bytes: 512 << 10, assoc: 8, line: 64, tasks: 100, colours: 1, reps: 3, order, seed: 7 }
    }

    #[test]
    fn orders_visit_tasks_in_range_reproducibly() {
        let seq = |w: &Walk| {
            let mut v = Vec::new();
            w.for_each_visit(|i| v.push(i));
            v
        };
        let s = seq(&walk(Order::Seq));
        assert_eq!(s.len(), 300);
        assert_eq!(&s[..3], &[0, 1, 2]);
        assert_eq!(s[100], 0);
        let r = seq(&walk(Order::Random));
        assert_eq!(r, seq(&walk(Order::Random)));
        assert!(r.iter().all(|&i| i < 100));
        let distinct: std::collections::BTreeSet<_> = r.iter().collect();
        assert!(distinct.len() > 80, "300 draws from 100 tasks cover most of them: {}", distinct.len());
        assert_ne!(r, seq(&Walk { seed: 8, ..walk(Order::Random) }));
    }

    #[test]
    fn bad_geometry_is_named() {
        let ok = walk(Order::Seq);
        assert!(ok.validate().is_ok());
        let bad = [
            (Walk { line: 48, ..ok }, "--line"),
            (Walk { assoc: 0, ..ok }, "--assoc"),
            (Walk { l2_bytes: 3 << 19, ..ok }, "power of two"),
            (Walk { colours: 3, ..ok }, "--colours"),
            (Walk { colours: 256, ..ok }, "task block"),
            (Walk { tasks: 0, ..ok }, "--tasks"),
            (Walk { reps: 0, ..ok }, "--reps"),
        ];
        for (w, what) in bad {
            let e = w.validate().unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        }
    }
}
