//! Where every line the platform models lives: the line indices of a policy's
//! [`Line`]s and the tasks' working sets, each line's address in the kernel's layout
//! (a task's scheduler-hot line at offset [`TASK_HOT_OFFSET`] of its 8 KB-aligned
//! block, run queues and per-CPU data in kernel data at [`KDATA_BASE`], a 2.4 task's
//! `run_list.prev` line at [`TASK_PREV_LINK_OFFSET`] of its block and its state line
//! at [`TASK_STATE_OFFSET`], working sets in user memory at [`USER_BASE`]), and its class for the bus counts. The address
//! decides the L2 set (`cache.rs`); the class, which copy of the miss path runs
//! (`coherence.rs`).

use super::SimPlatform;
use schedlab_core::layout::idle_block;
#[cfg(doc)]
use schedlab_core::layout::{TASK_PREV_LINK_OFFSET, TASK_STATE_OFFSET};
use schedlab_core::{Line, TaskId};

pub use schedlab_core::layout::{TASK_BASE, TASK_BLOCK, TASK_HOT_OFFSET};
/// Kernel static data (run queues then per-CPU data): each object on its own 128-byte
/// slot (`____cacheline_aligned` for the largest line of the modelled machines).
pub const KDATA_BASE: u64 = 0xC030_0000;
/// Slot of one kernel-data object.
pub const KDATA_SLOT: u64 = 128;
/// Physical base of the tasks' own working sets (user memory, above the kernel image
/// and task blocks of a 640 MB-era machine). Each task's working set is contiguous and
/// page-aligned, [`ws_stride`](SimPlatform::with_working_sets) bytes apart.
pub const USER_BASE: u64 = 0x1000_0000;
/// Line classes of [`BusStats`](super::BusStats).
pub const CLASS_TASK: usize = 0;
pub const CLASS_SCHED: usize = 1;
pub const CLASS_WORKLOAD: usize = 2;

/// Where every line lives: the address map of [`SimPlatform`]'s line indices.
#[derive(Clone, Copy)]
pub(super) struct Geometry {
    pub(super) task_lines: usize,
    pub(super) link_base: usize,
    pub(super) state_base: usize,
    pub(super) state_task_lines: usize,
    pub(super) ws_base: usize,
    pub(super) ws_lines: usize,
    pub(super) colours: u32,
    pub(super) line_bytes: u32,
}

impl Geometry {
    /// Address of line `i` in the kernel's layout: task lines at [`TASK_HOT_OFFSET`]
    /// of their 8 KB block, shifted by `colour × line_bytes` with
    /// `colour` of [`colour_of`](schedlab_core::layout::colour_of) (the colouring paper, S6 in
    /// docs/sources.md); then run queues and per-CPU data, one [`KDATA_SLOT`] each, in
    /// kernel data; then the tasks' `run_list.prev` lines, at
    /// [`TASK_PREV_LINK_OFFSET`] of the same blocks and shifted alike; then the tasks'
    /// state lines at [`TASK_STATE_OFFSET`] of the same blocks, then the idle tasks'
    /// at the same offset of theirs ([`idle_block`]); then each task's working set,
    /// contiguous from a page boundary at [`USER_BASE`].
    pub(super) fn addr_of(&self, i: usize) -> u64 {
        if i < self.task_lines {
            schedlab_core::layout::task_hot_addr(TASK_BASE + i as u64 * TASK_BLOCK, self.colours, self.line_bytes)
        } else if i < self.link_base {
            KDATA_BASE + (i - self.task_lines) as u64 * KDATA_SLOT
        } else if i < self.state_base {
            let block = TASK_BASE + (i - self.link_base) as u64 * TASK_BLOCK;
            schedlab_core::layout::task_link_addr(block, self.colours, self.line_bytes)
        } else if i < self.ws_base {
            let j = i - self.state_base;
            let block = if j < self.state_task_lines {
                TASK_BASE + j as u64 * TASK_BLOCK
            } else {
                idle_block(j - self.state_task_lines)
            };
            schedlab_core::layout::task_state_addr(block, self.colours, self.line_bytes)
        } else {
            let (t, j) = ((i - self.ws_base) / self.ws_lines, (i - self.ws_base) % self.ws_lines);
            let stride = (self.ws_lines as u64 * self.line_bytes as u64).next_multiple_of(4096);
            USER_BASE + t as u64 * stride + j as u64 * self.line_bytes as u64
        }
    }
}

impl SimPlatform {
    pub(super) fn geometry(&self) -> Geometry {
        Geometry {
            task_lines: self.task_lines,
            link_base: self.link_base,
            state_base: self.state_base,
            state_task_lines: self.state_task_lines,
            ws_base: self.ws_base,
            ws_lines: self.ws_lines,
            colours: self.colours,
            line_bytes: self.line_bytes,
        }
    }

    /// Address of a line in the kernel's layout.
    pub fn line_addr(&self, line: Line) -> u64 {
        self.geometry().addr_of(self.line_index(line))
    }

    /// Address of line `j` of task `t`'s working set.
    pub fn working_set_addr(&self, t: TaskId, j: usize) -> u64 {
        self.geometry().addr_of(self.ws_base + t as usize * self.ws_lines + j)
    }

    /// L2 set a line maps to.
    pub fn line_set_of(&self, line: Line) -> u64 {
        (self.line_addr(line) >> self.line_shift) & self.set_mask
    }

    #[inline]
    pub(super) fn class_of(&self, idx: usize) -> usize {
        if idx < self.task_lines || (self.link_base..self.ws_base).contains(&idx) {
            CLASS_TASK
        } else if idx < self.ws_base {
            CLASS_SCHED
        } else {
            CLASS_WORKLOAD
        }
    }

    #[inline]
    pub(super) fn line_index(&self, line: Line) -> usize {
        match line {
            Line::Task(t) => t as usize,
            Line::TaskLink(t) if self.link_lines == 0 => t as usize,
            Line::TaskLink(t) => self.link_base + t as usize,
            Line::TaskState(t) if self.state_task_lines == 0 => t as usize,
            Line::TaskState(t) => self.state_base + t as usize,
            // Only charged in the kernel's layout, which has a line per idle task.
            Line::IdleState(c) => {
                debug_assert!(self.kernel_layout, "idle state line outside the kernel's layout");
                self.state_base + self.state_task_lines + c
            }
            Line::Queue(q) => self.task_lines + q.min(self.queue_lines - 1),
            Line::CpuData(c) => self.task_lines + self.queue_lines + c,
            Line::Tree(q) => self.link_base - 1 - self.queue_lines + q.min(self.queue_lines - 1),
            Line::IdleMap => self.link_base - 1,
        }
    }

    /// [`class_of`](Self::class_of) a policy's line, from its kind: a constant where
    /// the kind is (every `touch` call site names it), so the miss paths need not compare
    /// the index with the line ranges. A task's line is below `task_lines` and its link
    /// line below `ws_base` (the policy's task table has the platform's capacity and
    /// panics beyond it), a CPU's data line below `link_base` (the policy's topology
    /// has the machine's CPUs).
    #[inline(always)]
    pub(super) fn class_of_line(&self, line: Line) -> usize {
        let class = match line {
            Line::Task(_) | Line::TaskLink(_) | Line::TaskState(_) | Line::IdleState(_) => CLASS_TASK,
            Line::Queue(_) | Line::CpuData(_) | Line::Tree(_) | Line::IdleMap => CLASS_SCHED,
        };
        debug_assert_eq!(class, self.class_of(self.line_index(line)), "{line:?}");
        class
    }

    /// Record the task-structure address of a new task: 8 KB blocks handed out in
    /// order, as the buddy allocator does on a freshly booted machine.
    pub fn alloc_task_struct(&self, id: TaskId) -> u64 {
        let mut a = self.task_addr.borrow_mut();
        debug_assert_eq!(a.len(), id as usize);
        let addr = TASK_BASE + id as u64 * TASK_BLOCK;
        a.push(addr);
        addr
    }

    pub fn task_struct_addr(&self, id: TaskId) -> u64 {
        self.task_addr.borrow()[id as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::plat;
    use super::*;
    use crate::cost::CostModel;
    use crate::machine::Machine;

    /// 2.4's `run_list.prev` is on the line after the hot one on 32- and 64-byte lines,
    /// coloured with it; on 128-byte lines, and in the runtime's layout, it is the hot
    /// line itself.
    #[test]
    fn the_prev_link_line_follows_the_kernel_layout() {
        for colours in [1, 32] {
            let m = Machine::preset("xeon-8").unwrap();
            let p = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 64, m.l2_kb, m.l2_assoc, 32, colours);
            for t in [0, 5, 63] {
                let hot = p.line_addr(Line::Task(t));
                assert_eq!(p.line_addr(Line::TaskLink(t)), hot + 32, "colours {colours}, task {t}");
                assert_ne!(p.line_index(Line::TaskLink(t)), p.line_index(Line::Task(t)));
                assert_eq!(p.class_of(p.line_index(Line::TaskLink(t))), CLASS_TASK);
            }
            let one = p.with_one_line_tasks();
            assert_eq!(one.line_index(Line::TaskLink(5)), one.line_index(Line::Task(5)));
        }
        let p = plat("smp-2");
        assert_eq!(p.line_addr(Line::TaskLink(3)), TASK_BASE + 3 * TASK_BLOCK + 64);
        let m = Machine::preset("smp-2").unwrap();
        let wide = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 64, m.l2_kb, m.l2_assoc, 128, 1);
        assert_eq!(wide.line_index(Line::TaskLink(3)), wide.line_index(Line::Task(3)));
        // The kernel data and working sets keep their places after the link lines.
        assert_eq!(p.class_of(p.line_index(Line::IdleMap)), CLASS_SCHED);
        assert_eq!(p.line_addr(Line::Queue(0)), KDATA_BASE);
    }

    /// The words before 2.4's hot block (`state`, `need_resched`) are a line of their
    /// own on 32-byte lines, at offset 0 of the task's block and coloured with it; on
    /// 64-byte lines they are the hot line; each CPU's idle task has one below the first
    /// task's block. Outside the kernel's layout they are not priced.
    #[test]
    fn the_state_line_follows_the_kernel_layout() {
        use schedlab_core::layout::idle_block;
        for colours in [1, 32] {
            let m = Machine::preset("xeon-8").unwrap();
            let p = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 64, m.l2_kb, m.l2_assoc, 32, colours);
            assert!(schedlab_core::Platform::task_state_priced(&p));
            for t in [0, 5, 63] {
                let hot = p.line_addr(Line::Task(t));
                assert_eq!(p.line_addr(Line::TaskState(t)), hot - 32, "colours {colours}, task {t}");
                assert_eq!(p.class_of(p.line_index(Line::TaskState(t))), CLASS_TASK);
            }
            for c in [0, 7] {
                let i = p.line_index(Line::IdleState(c));
                assert!(i < p.ws_base && !(p.link_base..p.state_base).contains(&i));
                let shift = schedlab_core::layout::colour_of(idle_block(c), colours) * 32;
                assert_eq!(p.line_addr(Line::IdleState(c)), idle_block(c) + shift);
            }
            assert_ne!(p.line_index(Line::IdleState(0)), p.line_index(Line::IdleState(1)));
            let one = p.with_one_line_tasks();
            assert!(!schedlab_core::Platform::task_state_priced(&one));
        }
        let m = Machine::preset("smp-2").unwrap();
        let wide = SimPlatform::new(CostModel::new(&m), m.node_of.clone(), 64, m.l2_kb, m.l2_assoc, 64, 1);
        assert_eq!(wide.line_index(Line::TaskState(3)), wide.line_index(Line::Task(3)));
        assert_eq!(wide.line_addr(Line::IdleState(1)), idle_block(1));
    }

    /// A wake-up stores the woken task's `state` and, to kick its idle CPU, the idle
    /// task's `need_resched`: both lines end dirty in the waker's cache; the idle CPU's
    /// `schedule()` then takes its idle task's line back.
    #[test]
    fn a_wake_up_writes_the_state_lines_of_the_task_and_the_kicked_idle_task() {
        use super::super::coherence::NO_OWNER;
        use schedlab_core::policies::dss::Dss;
        use schedlab_core::{Policy, PrevState, TaskParams, Topology};
        let p = plat("smp-2");
        let dss = Dss::new(&p, &Topology::smp(2), 8, 100);
        let owner = |line: Line| p.lines[p.line_index(line)].dirty.get();
        p.begin(0, 0);
        dss.task_new(&p, 0, &TaskParams::default(), None);
        p.begin(1, 1_000);
        dss.wake_up(&p, 0, false);
        assert_eq!(p.resched_pending().borrow().iter().map(|r| r.0).collect::<Vec<_>>(), [0]);
        assert_eq!(owner(Line::TaskState(0)), 1);
        assert_eq!(owner(Line::IdleState(0)), 1);
        p.begin(0, 2_000);
        assert_eq!(dss.schedule(&p, None, PrevState::Runnable), Some(0));
        assert_eq!(owner(Line::IdleState(0)), 0);
        assert_eq!(owner(Line::IdleState(1)), NO_OWNER);
    }
}
