//! Task scheduling state in kernel task blocks ([`TaskLayout::KernelBlocks`]): one
//! 8 KB-aligned [`TASK_BLOCK`] per task, its [`TaskSched`] at the hot-field offset of
//! `layout.rs`, moved by the block's colour. The only unsafe code of the task table.
//!
//! Memory: `capacity × 8 KB` of address space (plus one block for alignment), from
//! `alloc_zeroed` with the allocator's natural alignment, aligned by hand. Why not an
//! 8 KB-aligned `Layout`: the system allocator serves over-aligned zeroed requests with
//! `alloc` + a memset of the whole region, touching every page (512 MiB for the
//! runtime's default 65,536 tasks), while a plain large `calloc` maps zero pages lazily.
//! No block is written here: all-zero bytes are a valid `TaskSched` equal to its
//! `Default` (every field is an integer or bool atomic), so a block's page is touched
//! first when its task is forked (`TaskTable::init`).
//!
//! [`TaskLayout::KernelBlocks`]: crate::layout::TaskLayout::KernelBlocks

use crate::layout::{task_hot_addr, TaskLayout, HOST_LINE, TASK_BLOCK, TASK_HOT_OFFSET};
use crate::task::TaskSched;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

const BLOCK: usize = TASK_BLOCK as usize;

// The state fits its block at the largest colour and is aligned wherever it lands.
const _: () = {
    let last = TASK_HOT_OFFSET as usize
        + (crate::layout::MAX_LAYOUT_COLOURS as usize - 1) * HOST_LINE as usize
        + std::mem::size_of::<TaskSched>();
    assert!(last <= BLOCK);
    assert!((TASK_HOT_OFFSET as usize).is_multiple_of(std::mem::align_of::<TaskSched>()));
    assert!((HOST_LINE as usize).is_multiple_of(std::mem::align_of::<TaskSched>()));
};

/// `capacity` task blocks. Owns its allocation, like a `Box<[TaskSched]>`.
pub(crate) struct Blocks {
    /// What `alloc_zeroed` returned (freed with `alloc` in `Drop`).
    raw: NonNull<u8>,
    alloc: Layout,
    /// Offset of the first 8 KB-aligned address from `raw`.
    first: usize,
    capacity: usize,
    colours: u32,
}

// SAFETY: `Blocks` owns its memory exclusively (no other pointer to it exists outside
// the references `get` hands out, which borrow `self`), and `TaskSched` is `Sync`
// (atomics only): sharing or sending it is what sharing or sending a `Box<[TaskSched]>` is.
unsafe impl Send for Blocks {}
unsafe impl Sync for Blocks {}

impl Blocks {
    /// `capacity` zeroed task blocks coloured with `colours`; fails beyond the address
    /// space cap ([`TaskLayout::check`]) or when the allocator refuses.
    pub fn new(capacity: usize, colours: u32) -> Result<Blocks, String> {
        TaskLayout::KernelBlocks { colours }.check(capacity)?;
        // One extra block so that an aligned run of `capacity` blocks fits wherever
        // the allocation starts.
        let size = (capacity + 1) * BLOCK;
        let alloc = Layout::from_size_align(size, std::mem::align_of::<TaskSched>().max(16))
            .map_err(|e| format!("task blocks: {e}"))?;
        // SAFETY: `alloc` has a non-zero size (at least one block).
        let raw = NonNull::new(unsafe { alloc_zeroed(alloc) })
            .ok_or_else(|| format!("task blocks: cannot allocate {} MiB", size >> 20))?;
        let first = (raw.as_ptr() as usize).next_multiple_of(BLOCK) - raw.as_ptr() as usize;
        Ok(Blocks { raw, alloc, first, capacity, colours })
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }
    pub fn colours(&self) -> u32 {
        self.colours
    }

    /// Offset of task `i`'s state from the start of the allocation.
    #[inline]
    fn offset(&self, i: usize) -> usize {
        let block = self.raw.as_ptr() as usize + self.first + i * BLOCK;
        // The colour is a function of the block's real address (spec §3.2).
        let hot = task_hot_addr(block as u64, self.colours, HOST_LINE) as usize - block;
        self.first + i * BLOCK + hot
    }

    /// Task `i`'s state. Panics if `i >= capacity` (as slice indexing does).
    #[inline]
    pub fn get(&self, i: usize) -> &TaskSched {
        assert!(i < self.capacity, "task {i} outside a table of {}", self.capacity);
        // SAFETY: `offset(i)` lies inside block `i`, which lies inside the allocation
        // (`first + (i + 1) × BLOCK <= (capacity + 1) × BLOCK`), with room for a
        // `TaskSched` (the const assertion above) at an offset aligned for it (block
        // starts are 8 KB-aligned, hot offsets multiples of its alignment). The bytes
        // are initialised: zero from `alloc_zeroed`, a valid `TaskSched`, and written
        // since only through the atomics of a `&TaskSched`. The reference borrows
        // `self`, so the memory outlives it.
        unsafe { &*self.raw.as_ptr().add(self.offset(i)).cast::<TaskSched>() }
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        // `TaskSched` has no drop glue (atomics), so there is nothing to drop in place.
        // SAFETY: `raw` came from `alloc_zeroed(self.alloc)` and is freed once.
        unsafe { dealloc(self.raw.as_ptr(), self.alloc) }
    }
}

impl std::fmt::Debug for Blocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blocks").field("capacity", &self.capacity).field("colours", &self.colours).finish()
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
            let b = Blocks::new(256, colours).unwrap();
            let mut offsets = BTreeSet::new();
            let mut blocks = BTreeSet::new();
            for i in 0..256 {
                let a = b.get(i) as *const TaskSched as u64;
                let block = a - a % TASK_BLOCK;
                assert!(blocks.insert(block), "task {i} shares a block");
                assert_eq!(a - block, TASK_HOT_OFFSET + colour_of(block, colours) * HOST_LINE as u64);
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
        let e = Blocks::new(200_000, 32).unwrap_err();
        assert!(e.contains("200000 tasks"), "{e}");
    }

    #[test]
    #[should_panic(expected = "outside a table")]
    fn out_of_range_panics_like_a_slice() {
        Blocks::new(4, 1).unwrap().get(4);
    }
}
