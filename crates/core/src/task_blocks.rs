//! Where a [`TaskTable`](crate::task::TaskTable) keeps its tasks' [`TaskSched`]: one
//! zeroed allocation holding `capacity` slots laid out as its [`TaskLayout`], and the
//! byte offset of every task's state in it. The only unsafe code of the task table.
//!
//! - [`TaskLayout::Dense`]: the states back to back, like a `Box<[TaskSched]>`.
//! - [`TaskLayout::KernelBlocks`]: one 8 KB-aligned [`TASK_BLOCK`] per task, its state
//!   filling the host line that holds the hot fields (`layout.rs`), moved by the
//!   block's colour.
//!
//! Why an offset table: `get` is on every policy's hottest path (a run-queue walk calls
//! it several times per task visited). A table lookup is the same few instructions for
//! both layouts, with no branch on the layout and no colour computed per call (the
//! colour is a function of the block's real address, as in the colouring paper (S6), fixed once allocated).
//! It costs 4 bytes per task.
//!
//! Memory of the kernel layout: `capacity × 8 KB` of address space (plus one block for
//! alignment), from `alloc_zeroed` with the allocator's natural alignment, aligned by
//! hand. Why not an 8 KB-aligned `Layout`: the system allocator serves over-aligned
//! zeroed requests with `alloc` + a memset of the whole region, touching every page
//! (512 MiB for the runtime's default 65,536 tasks), while a plain large `calloc` maps
//! zero pages lazily. No slot is written here: all-zero bytes are a valid `TaskSched`
//! equal to its `Default` (every field is an integer or bool atomic), so a block's page
//! is touched first when its task is forked (`TaskTable::init`).

use crate::layout::{task_hot_line, LayoutError, TaskLayout, HOST_LINE, TASK_BLOCK, TASK_HOT_OFFSET};
use crate::task::TaskSched;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

const BLOCK: usize = TASK_BLOCK as usize;
const SLOT: usize = std::mem::size_of::<TaskSched>();

// The state fills at most one host line (the kernel keeps every field the goodness
// loop reads in one line), fits its block at the largest colour, and is aligned
// wherever it lands (line starts).
const _: () = {
    assert!(SLOT <= HOST_LINE as usize);
    let hot_line = TASK_HOT_OFFSET as usize / HOST_LINE as usize * HOST_LINE as usize;
    let last = hot_line + (crate::layout::MAX_LAYOUT_COLOURS as usize - 1) * HOST_LINE as usize + SLOT;
    assert!(last <= BLOCK);
    assert!((HOST_LINE as usize).is_multiple_of(std::mem::align_of::<TaskSched>()));
};

/// `capacity` task states. Owns its allocation, like a `Box<[TaskSched]>`.
pub(crate) struct Slots {
    /// What `alloc_zeroed` returned (freed with `alloc` in `Drop`).
    raw: NonNull<u8>,
    alloc: Layout,
    /// Byte offset of task `i`'s state from `raw`: its length is the capacity.
    offsets: Box<[u32]>,
    layout: TaskLayout,
}

// SAFETY: `Slots` owns its memory exclusively (no other pointer to it exists outside
// the references `get` hands out, which borrow `self`), and `TaskSched` is `Sync`
// (atomics only): sharing or sending it is what sharing or sending a `Box<[TaskSched]>` is.
unsafe impl Send for Slots {}
unsafe impl Sync for Slots {}

impl Slots {
    /// `capacity` zeroed task states laid out as `layout`; fails beyond the kernel
    /// layout's address-space cap ([`TaskLayout::check`]) or when the allocator refuses.
    pub fn new(capacity: usize, layout: TaskLayout) -> Result<Slots, LayoutError> {
        layout.check(capacity)?;
        let size = match layout {
            TaskLayout::Dense => capacity.max(1) * SLOT,
            // One extra block so that an aligned run of `capacity` blocks fits
            // wherever the allocation starts.
            TaskLayout::KernelBlocks { .. } => (capacity + 1) * BLOCK,
        };
        let alloc = Layout::from_size_align(size, std::mem::align_of::<TaskSched>().max(16))
            .map_err(|_| LayoutError::Alloc(size >> 20))?;
        // SAFETY: `alloc` has a non-zero size (at least one slot).
        let raw = NonNull::new(unsafe { alloc_zeroed(alloc) }).ok_or(LayoutError::Alloc(size >> 20))?;
        let base = raw.as_ptr() as usize;
        let offset = |i: usize| -> usize {
            match layout {
                TaskLayout::Dense => i * SLOT,
                TaskLayout::KernelBlocks { colours } => {
                    let block = base.next_multiple_of(BLOCK) + i * BLOCK;
                    task_hot_line(block as u64, colours, HOST_LINE) as usize - base
                }
            }
        };
        // The kernel layout's cap (1 GiB) keeps every offset below 2^32; a dense table
        // that large (tens of millions of tasks) is refused.
        let offsets = (0..capacity).map(|i| u32::try_from(offset(i)).ok()).collect::<Option<Box<[u32]>>>();
        let slots = Slots { raw, alloc, offsets: offsets.unwrap_or_default(), layout };
        if slots.offsets.len() != capacity {
            return Err(LayoutError::DenseTooLarge(capacity));
        }
        Ok(slots)
    }

    pub fn capacity(&self) -> usize {
        self.offsets.len()
    }
    pub fn layout(&self) -> TaskLayout {
        self.layout
    }

    /// Task `i`'s state. Panics if `i >= capacity` (as slice indexing does).
    #[inline]
    pub fn get(&self, i: usize) -> &TaskSched {
        let off = self.offsets[i] as usize;
        // SAFETY: `offsets[i]` was computed in `new` to lie inside the allocation with
        // room for a `TaskSched` (dense: slot `i < capacity`; blocks: inside block `i`,
        // `first + (i + 1) × BLOCK <= (capacity + 1) × BLOCK`, the const assertion
        // above), at an offset aligned for it (the allocation's alignment, slot sizes,
        // 8 KB block starts and hot offsets are multiples of it). The bytes are
        // initialised: zero from `alloc_zeroed`, a valid `TaskSched`, and written since
        // only through the atomics of a `&TaskSched`. The reference borrows `self`, so
        // the memory outlives it.
        unsafe { &*self.raw.as_ptr().add(off).cast::<TaskSched>() }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        // `TaskSched` has no drop glue (atomics), so there is nothing to drop in place.
        // SAFETY: `raw` came from `alloc_zeroed(self.alloc)` and is freed once.
        unsafe { dealloc(self.raw.as_ptr(), self.alloc) }
    }
}

impl std::fmt::Debug for Slots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slots").field("capacity", &self.capacity()).field("layout", &self.layout).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::colour_of;
    use crate::task::{TaskParams, TaskTable};
    use std::collections::BTreeSet;

    #[test]
    fn each_state_sits_at_its_blocks_coloured_hot_offset() {
        for colours in [1u32, 32] {
            let b = Slots::new(256, TaskLayout::KernelBlocks { colours }).unwrap();
            let mut offsets = BTreeSet::new();
            let mut blocks = BTreeSet::new();
            for i in 0..256 {
                let a = b.get(i) as *const TaskSched as u64;
                let block = a - a % TASK_BLOCK;
                assert!(blocks.insert(block), "task {i} shares a block");
                // The hot fields (offset 32) lie in the block's first host line, which
                // the colour moves by whole lines.
                assert_eq!(a - block, colour_of(block, colours) * HOST_LINE as u64);
                let hot = TASK_HOT_OFFSET + colour_of(block, colours) * HOST_LINE as u64;
                assert!((a - block..a - block + HOST_LINE as u64).contains(&hot));
                offsets.insert(a - block);
                // A fresh block holds the default state.
                assert_eq!(format!("{:?}", b.get(i)), format!("{:?}", TaskSched::default()));
            }
            assert_eq!(offsets.len(), colours as usize);
            // Consecutive tasks, consecutive blocks.
            let (lo, hi) = (blocks.first().unwrap(), blocks.last().unwrap());
            assert_eq!(hi - lo, 255 * TASK_BLOCK);
        }
    }

    #[test]
    fn a_block_table_reads_back_what_it_was_given() {
        let t = TaskTable::with_layout(64, TaskLayout::KernelBlocks { colours: 32 }).unwrap();
        for id in 0..64 {
            t.init(id, &TaskParams { nice: (id % 20) as i8, ..TaskParams::default() }, 0, id as i32);
        }
        for id in 0..64 {
            assert_eq!((t.get(id).counter(), t.get(id).nice()), (id as i32, (id % 20) as i8));
        }
        assert_eq!(t.live_ids().count(), 64);
        drop(t);
    }

    #[test]
    fn too_many_blocks_is_an_error() {
        let e = Slots::new(200_000, TaskLayout::KernelBlocks { colours: 32 }).unwrap_err().to_string();
        assert!(e.contains("200000 tasks"), "{e}");
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn out_of_range_panics_like_a_slice() {
        Slots::new(4, TaskLayout::KernelBlocks { colours: 1 }).unwrap().get(4);
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn dense_out_of_range_panics_like_a_slice() {
        Slots::new(4, TaskLayout::Dense).unwrap().get(4);
    }

    #[test]
    fn dense_states_sit_back_to_back_and_start_default() {
        let s = Slots::new(100, TaskLayout::Dense).unwrap();
        let first = s.get(0) as *const TaskSched as usize;
        for i in 0..100 {
            assert_eq!(s.get(i) as *const TaskSched as usize, first + i * SLOT);
            assert_eq!(format!("{:?}", s.get(i)), format!("{:?}", TaskSched::default()));
        }
        assert_eq!(Slots::new(0, TaskLayout::Dense).unwrap().capacity(), 0);
    }
}
