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

/// The host's cache line, by which the runtime colours (the simulator colours by the
/// modelled machine's line).
pub const HOST_LINE: u32 = 64;

/// Largest task table laid out in kernel blocks: 1 GiB of address space (131,072 tasks).
pub const MAX_BLOCK_BYTES: u64 = 1 << 30;

/// Largest `colours` of a [`TaskLayout::KernelBlocks`] table: the same bound as the
/// `colours=N` option (`policies::MAX_COLOURS`).
pub const MAX_LAYOUT_COLOURS: u32 = 64;

/// How a task table places each task's scheduling state (`TaskSched`) in memory.
/// Chosen when the table is built, by the platform the policy runs on
/// (`Platform::task_layout`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskLayout {
    /// One dense array (a `TaskSched` every few dozen bytes). The simulator and the
    /// free test platform use it: the simulator's *modelled* addresses come from
    /// [`task_hot_addr`] whatever the host layout, so it keeps the compact one.
    #[default]
    Dense,
    /// One 8 KB-aligned [`TASK_BLOCK`] per task, the state at
    /// `task_hot_addr(block, colours, HOST_LINE) - block` inside it: the kernel's
    /// layout, on the host. The runtime uses it, so that `colours=N` moves real
    /// addresses as it moves the simulator's modelled ones.
    KernelBlocks { colours: u32 },
}

impl TaskLayout {
    /// Whether a table of `capacity` tasks can be laid out this way: kernel blocks need
    /// `capacity × 8 KB` of address space, at most [`MAX_BLOCK_BYTES`], and a power-of-two
    /// `colours` of at most [`MAX_LAYOUT_COLOURS`].
    pub fn check(self, capacity: usize) -> Result<(), String> {
        match self {
            TaskLayout::Dense => Ok(()),
            TaskLayout::KernelBlocks { colours } => {
                if !colours.is_power_of_two() || colours > MAX_LAYOUT_COLOURS {
                    return Err(format!(
                        "colours={colours}: kernel task blocks need a power of two up to {MAX_LAYOUT_COLOURS}"
                    ));
                }
                let max = (MAX_BLOCK_BYTES / TASK_BLOCK) as usize;
                if capacity > max {
                    return Err(format!(
                        "{capacity} tasks × {} KB task blocks exceed the {} MiB cap on the task table's address space (at most {max} tasks)",
                        TASK_BLOCK / 1024,
                        MAX_BLOCK_BYTES >> 20
                    ));
                }
                Ok(())
            }
        }
    }
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

    #[test]
    fn layout_check_caps_the_address_space_and_the_colours() {
        let kb = |colours| TaskLayout::KernelBlocks { colours };
        assert!(kb(32).check(131_072).is_ok());
        let e = kb(32).check(131_073).unwrap_err();
        assert!(e.contains("131073 tasks") && e.contains("1024 MiB"), "{e}");
        assert!(kb(3).check(1).unwrap_err().contains("colours=3"));
        assert!(kb(128).check(1).is_err());
        assert!(TaskLayout::Dense.check(usize::MAX).is_ok());
    }
}
