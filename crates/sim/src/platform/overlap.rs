//! Memory accesses whose misses do not wait for each other: misses a policy marks
//! independent ([`Platform::overlapped`](schedlab_core::Platform::overlapped)) in
//! flight together, up to the machine's `mlp`, and write misses retired into each
//! CPU's store buffer (`store_buffer`), which a locked operation waits for. Both are
//! off on every preset (`mlp` 1, `store_buffer` 0: the serial charging the presets
//! were studied with), where each costs one test of a flag.

use super::SimPlatform;
use crate::cost::CostParams;
use schedlab_core::CpuId;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

/// Each CPU's store buffer, as far as it delays anything: the completion times of its
/// pending write misses and upgrades, oldest first. x86 (TSO) commits stores in program
/// order, so a store completes no earlier than the one before it and the times are
/// ascending: the front is the oldest, the back the time the buffer is empty.
/// A buffer outlives the policy call that filled it (`switch_to` and a call's return
/// do not serialize), so it is kept per CPU.
#[derive(Debug, Default)]
pub(super) struct StoreBuffers {
    /// Entries per CPU (`HardwareCosts::store_buffer`; 0: off, writes charged in place).
    pub(super) depth: usize,
    pub(super) pending: RefCell<Vec<VecDeque<u64>>>,
}

impl StoreBuffers {
    pub(super) fn new(depth: usize, cpus: usize) -> StoreBuffers {
        StoreBuffers {
            depth,
            pending: RefCell::new(vec![VecDeque::with_capacity(depth); if depth > 0 { cpus } else { 0 }]),
        }
    }

    /// A write miss of `ns` by `cpu` at `now`: retired into the buffer. Returns when
    /// the CPU goes on: `now`, or when the oldest pending store completes if the buffer
    /// is full. The store completes `ns` after it retires, and not before the one
    /// ahead of it.
    pub(super) fn retire(&self, cpu: CpuId, now: u64, ns: u64) -> u64 {
        let mut all = self.pending.borrow_mut();
        let q = &mut all[cpu];
        while q.front().is_some_and(|&end| end <= now) {
            q.pop_front();
        }
        let mut goes_on = now;
        if q.len() == self.depth {
            // Full: the CPU stalls until the oldest store commits (and every other
            // store that has completed by then leaves with it).
            goes_on = q.pop_front().expect("a full buffer has an oldest store");
            while q.front().is_some_and(|&end| end <= goes_on) {
                q.pop_front();
            }
        }
        let end = (goes_on + ns).max(q.back().copied().unwrap_or(0));
        q.push_back(end);
        goes_on
    }

    /// When every store `cpu` has pending has completed (`now` if none is), and the
    /// buffer emptied.
    pub(super) fn drain(&self, cpu: CpuId, now: u64) -> u64 {
        let mut all = self.pending.borrow_mut();
        let q = &mut all[cpu];
        let empty_at = q.back().map_or(now, |&end| end.max(now));
        q.clear();
        empty_at
    }

    /// When a plain store `cpu` makes at `now` becomes visible to the other CPUs: after
    /// every store ahead of it in the buffer (TSO). The buffer is left as it is.
    pub(super) fn visible_at(&self, cpu: CpuId, now: u64) -> u64 {
        self.pending.borrow()[cpu].back().map_or(now, |&end| end.max(now))
    }
}

/// Accesses a policy marked independent, in flight together: the cursor is where the
/// next one issues (pure work advances it), each access starts there or when the one
/// `mlp` accesses before it ended, whichever is later (at most `mlp` outstanding),
/// and the scope ends at the latest end.
#[derive(Debug, Default)]
pub(super) struct Overlap {
    pub(super) open: Cell<bool>,
    /// `mlp` > 1 and no scope open: the one test `overlapped` makes.
    pub(super) ready: Cell<bool>,
    /// End of access `i`, at `i % mlp`.
    pub(super) ends: [Cell<u64>; CostParams::MAX_MLP as usize],
    /// Accesses issued in the scope so far.
    pub(super) issued: Cell<usize>,
    /// The latest end so far.
    pub(super) last_end: Cell<u64>,
}

impl SimPlatform {
    /// A write miss of `ns` retired into `cpu`'s store buffer: the line's state has
    /// changed already (the model's order is the order of the calls), only the charge
    /// moves. The cursor goes on at once, or when the oldest pending store completes if
    /// the buffer is full; nothing is left for the caller to charge.
    #[inline(never)]
    pub(super) fn buffer_store(&self, cpu: CpuId, ns: u64) -> u64 {
        self.cursor.set(self.store_buffers.retire(cpu, self.cursor.get(), ns));
        0
    }

    /// A locked instruction (or another serializing one) on the current CPU: it waits
    /// until every store the CPU has pending has completed. Nothing at `store_buffer` 0.
    #[inline]
    pub(crate) fn drain_stores(&self) {
        if self.store_buffers.depth > 0 {
            self.cursor.set(self.store_buffers.drain(self.cpu.get(), self.cursor.get()));
        }
    }

    /// A locked read-modify-write of `ns` (the runtime's task-header CAS): after the
    /// store buffer drains.
    #[inline]
    pub(crate) fn locked_op(&self, ns: u64) {
        self.drain_stores();
        self.advance(ns);
    }

    /// `f` in a scope of its own (out of line: the serial path keeps nothing live
    /// across `f`).
    #[inline(never)]
    pub(super) fn in_overlap<R>(&self, f: impl FnOnce() -> R) -> R {
        self.open_overlap();
        let r = f();
        self.close_overlap();
        r
    }

    #[inline(never)]
    pub(super) fn open_overlap(&self) {
        let o = &self.overlap;
        o.open.set(true);
        o.ready.set(false);
        o.issued.set(0);
        o.last_end.set(self.cursor.get());
        for e in &o.ends[..self.cost.mlp] {
            e.set(0);
        }
    }

    /// The scope ends when its last access does (or its work, if later).
    #[inline(never)]
    pub(super) fn close_overlap(&self) {
        let o = &self.overlap;
        o.open.set(false);
        o.ready.set(true);
        self.cursor.set(self.cursor.get().max(o.last_end.get()));
    }

    /// An access of `ns` in the open scope: it starts at the cursor, or when the
    /// access `mlp` before it ended if that is later; the cursor stays.
    #[inline(never)]
    pub(super) fn overlapped_access(&self, ns: u64) {
        if ns == 0 && self.store_buffers.depth > 0 {
            // A store retired into the store buffer: it holds no miss slot here.
            return;
        }
        let o = &self.overlap;
        let i = o.issued.get();
        o.issued.set(i + 1);
        let slot = &o.ends[i % self.cost.mlp];
        let end = self.cursor.get().max(slot.get()) + ns;
        slot.set(end);
        o.last_end.set(o.last_end.get().max(end));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{plat_mlp, plat_sb};
    use super::super::*;
    use schedlab_core::SchedLock;

    /// Cursor after a cold write at 1000, 100 ns of work, then a lock acquire.
    fn write_work_lock(p: &SimPlatform) -> (u64, u64) {
        let l = p.new_lock("rq", ());
        p.begin(0, 1000);
        p.touch(Line::CpuData(1), Access::Write);
        let after_write = p.cursor();
        p.advance(100);
        l.with(p, |_| ());
        (after_write, p.cursor())
    }

    #[test]
    fn a_store_miss_is_not_charged_until_a_locked_operation() {
        let p = plat_sb(4);
        let (mem, lock) = (180, 180 + p.cost.lock_ns);
        let (after_write, after_lock) = write_work_lock(&p);
        assert_eq!(after_write, 1000, "the store retired into the buffer");
        // The ownership request overlapped the work; the acquire waited for its end.
        assert_eq!(after_lock, 1000 + mem + lock);
        // store_buffer 0: the write charged where it is made, then the work.
        let (after_write, after_lock) = write_work_lock(&plat_sb(0));
        assert_eq!(after_write, 1000 + mem);
        assert_eq!(after_lock, 1000 + mem + 100 + lock);
        // A read of the line it has a store pending on hits (store forwarding).
        let p = plat_sb(4);
        p.begin(0, 1000);
        p.touch(Line::CpuData(1), Access::Write);
        p.touch(Line::CpuData(1), Access::Read);
        assert_eq!(p.cursor(), 1000 + p.cost.l2_hit_ns);
    }

    #[test]
    fn a_full_store_buffer_waits_for_its_oldest_store() {
        let mem = 180;
        let three_writes = |p: &SimPlatform| {
            p.begin(0, 1000);
            for t in [1, 2, 3] {
                p.touch(Line::Task(t), Access::Write);
            }
            p.cursor()
        };
        // Two entries: the third store waits until the first completes (and the
        // second, issued at the same instant, with it).
        let p = plat_sb(2);
        assert_eq!(three_writes(&p), 1000 + mem);
        p.drain_stores();
        assert_eq!(p.cursor(), 1000 + 2 * mem, "the third completes 180 ns after it retired");
        assert_eq!(three_writes(&plat_sb(8)), 1000, "room for all three");
        assert_eq!(three_writes(&plat_sb(0)), 1000 + 3 * mem, "store_buffer 0: serial");
    }

    #[test]
    fn a_release_is_seen_only_after_the_stores_ahead_of_it() {
        let p = plat_sb(4);
        let l = p.new_lock("rq", ());
        p.begin(0, 1000);
        l.with(&p, |_| p.touch(Line::CpuData(1), Access::Write));
        let got = 1000 + 180 + p.cost.lock_ns;
        assert_eq!(p.cursor(), got, "the releasing CPU goes on (a plain store)");
        // CPU 1 asks 5 ns later: the lock is free once the write (180 ns) committed.
        p.begin(1, got + 5);
        l.with(&p, |_| ());
        let s = &p.lock_stats()[0];
        assert_eq!(s.wait_total_ns, got + 180 - (got + 5));
        assert_eq!(s.hold_max_ns, 180);
    }

    /// Virtual time of three cold reads (memory, 180 ns each) and `work` between the
    /// first two, in one overlapped scope.
    fn scope_of_three(p: &SimPlatform, work: Work) -> u64 {
        p.begin(0, 1000);
        p.overlapped(|| {
            p.touch(Line::Task(1), Access::Read);
            p.charge(work);
            p.touch(Line::Task(2), Access::Read);
            p.touch(Line::CpuData(1), Access::Write);
        });
        p.cursor() - 1000
    }

    #[test]
    fn overlapped_misses_cost_the_longest_up_to_mlp_and_the_sum_at_mlp_1() {
        let work = Work::ListOp;
        let (mem, w) = (180, plat_mlp(1).cost.work(work));
        assert!(w > 0 && w < mem);
        assert_eq!(scope_of_three(&plat_mlp(1), work), 3 * mem + w, "mlp 1: one after another");
        // mlp 4: all three in flight; the later two issue after the work.
        assert_eq!(scope_of_three(&plat_mlp(4), work), w + mem, "mlp 4: the longest, not the sum");
        // mlp 2: the third waits for the first to end.
        assert_eq!(scope_of_three(&plat_mlp(2), work), 2 * mem);
        // After the scope, accesses are serial again, and hits cost a hit.
        let p = plat_mlp(4);
        scope_of_three(&p, work);
        let at = p.cursor();
        p.touch(Line::Task(3), Access::Read);
        p.touch(Line::Task(1), Access::Read);
        assert_eq!(p.cursor() - at, mem + p.cost.l2_hit_ns);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "lock acquire inside an overlapped scope")]
    fn a_lock_inside_an_overlapped_scope_is_refused() {
        let p = plat_mlp(4);
        let l = p.new_lock("rq", ());
        p.begin(0, 0);
        p.overlapped(|| l.with(&p, |_| ()));
    }
}
