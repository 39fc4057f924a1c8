//! Where a kernel of 2001 put a task's scheduler-hot fields, and where colouring
//! moves them. Both engines make task addresses from this one definition: the
//! simulator to price cache lines ([`task_hot_addr`] of each task), the runtime to
//! place the per-task scheduling state in memory laid out the same way.

/// Task structure + kernel stack block: 8 KB, 8 KB-aligned (2.4 on i386 allocates
/// both with one `__get_free_pages(GFP_KERNEL, 1)`).
pub const TASK_BLOCK: u64 = 8192;

/// Offset of the scheduler-hot fields (state, counter, priority, run-list links,
/// has_cpu, processor) inside `struct task_struct` of 2.4 on i386: the line at 0x30
/// (after `state`, `flags`, `sigpending`, `addr_limit`, `exec_domain`, `need_resched`,
/// `ptrace`, `lock_depth`; the run-list and `counter`/`nice` fields follow). The
/// colouring paper measured the goodness loop's misses on this line.
pub const TASK_HOT_OFFSET: u64 = 0x30;

/// Colour of the task block at `block` (8 KB-aligned) under `colours` colours (a power
/// of two; 1 = vanilla): the block-address bits just above the block size (spec §3.2),
/// a pure function of the address.
#[inline]
pub fn colour_of(block: u64, colours: u32) -> u64 {
    (block / TASK_BLOCK) & (colours.max(1) as u64 - 1)
}

/// Address of the hot line of the task whose block starts at `block`: the task
/// structure moves by `colour × line_bytes` inside its block.
#[inline]
pub fn task_hot_addr(block: u64, colours: u32, line_bytes: u32) -> u64 {
    block + TASK_HOT_OFFSET + colour_of(block, colours) * line_bytes as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vanilla_blocks_share_their_offset_and_colours_spread_them() {
        let b = |i: u64| 0xC100_0000 + i * TASK_BLOCK;
        assert!((0..64).all(|i| task_hot_addr(b(i), 1, 32) % TASK_BLOCK == TASK_HOT_OFFSET));
        let offs: std::collections::BTreeSet<u64> = (0..64).map(|i| task_hot_addr(b(i), 32, 32) % TASK_BLOCK).collect();
        assert_eq!(offs.len(), 32);
        assert_eq!(colour_of(b(33), 32), colour_of(b(1), 32));
    }
}
