//! Where a kernel of 2001 put a task's scheduler-hot fields, and where colouring
//! moves them. Both engines make task addresses from this one definition: the
//! simulator to price cache lines ([`task_hot_addr`] of each task), the runtime to
//! place the per-task scheduling state in memory laid out the same way.

/// Virtual address of the first task block in the simulator's layout (the 2.4 kernel
/// maps physical memory at 0xC0000000; blocks follow the kernel image). 16 MB-aligned,
/// so an offset from it falls into the same cache set as the same offset from any
/// buffer aligned to a cache's set span.
pub const TASK_BASE: u64 = 0xC100_0000;

/// Task structure + kernel stack block: 8 KB, 8 KB-aligned (2.4 on i386 allocates
/// both with one `__get_free_pages(GFP_KERNEL, 1)`).
pub const TASK_BLOCK: u64 = 8192;

/// Offset of the scheduler-hot fields inside `struct task_struct` of 2.4 on i386: 32
/// bytes, after `state`, `flags`, `sigpending`, `addr_limit`, `exec_domain`,
/// `need_resched`, `ptrace` and `lock_depth` (eight 4-byte fields). 2.4's
/// `include/linux/sched.h` marks the spot: "offset 32 begins here on 32-bit platforms.
/// We keep all fields in a single cacheline that are needed for the goodness() loop in
/// schedule()" — `counter`, `nice`, `policy`, `mm`, `processor`, the CPU masks and
/// `run_list.next`, 32 bytes, one line of the P6's 32-byte lines and inside the first
/// of a 64-byte line. The colouring paper measured the goodness loop's misses on this
/// line.
pub const TASK_HOT_OFFSET: u64 = 0x20;

/// Offset of `run_list.prev` in 2.4's `struct task_struct` on i386: the hot block
/// from [`TASK_HOT_OFFSET`] is 32 bytes and ends with `run_list.next` at offset 60
/// ("only the 'next' pointer fits into the cacheline, but that's just fine",
/// `include/linux/sched.h`, 2.4.0 to 2.4.17), so `prev` starts the next 32 bytes.
pub const TASK_PREV_LINK_OFFSET: u64 = 0x40;

/// Offset of the words before the hot block in 2.4's `struct task_struct` on i386
/// (and in the O(1) patches for 2.4, which keep them): `state`, `flags`,
/// `sigpending`, `addr_limit`, `exec_domain`, `need_resched`, `ptrace`,
/// `lock_depth`, offsets 0 to 31. A wake-up stores `state`, a reschedule request
/// `need_resched`; on the P6's 32-byte lines they are a line apart from the hot block.
pub const TASK_STATE_OFFSET: u64 = 0;

/// Colour of the task block at `block` (8 KB-aligned) under `colours` colours (a power
/// of two; 1 = vanilla): a pure function of the block address, as `get_current()`
/// needs (the colouring paper, S6 in docs/sources.md) — the block number's bits folded together with XOR, `log2(colours)`
/// bits at a time.
///
/// **Reading.** The spec's reconstruction `(block >> 13) & (colours − 1)` takes the
/// bits just above the block size. Those bits are already part of the L2 set index
/// whenever `colours × 8 KB` fits in one cache way (128 KB on the 512 KB 4-way
/// Pentium Pro), so blocks that collide — a way apart — get the *same* colour and
/// colouring changes nothing (measured: `dss:colours=4` gave the vanilla miss count
/// exactly). It also contradicts the paper's own Figure 5, where blocks at 8, 40, 72
/// and 104 KB (32 KB apart) get four different colours. Folding the higher bits in
/// gives blocks a way apart different colours on every cache geometry, which is what
/// equation (3) (`c · s / 8 KB` hot lines fit) assumes, in a few bit operations.
#[inline]
pub fn colour_of(block: u64, colours: u32) -> u64 {
    let bits = colours.max(1).trailing_zeros();
    if bits == 0 {
        return 0;
    }
    let mask = (1u64 << bits) - 1;
    let (mut n, mut c) = (block / TASK_BLOCK, 0);
    while n != 0 {
        c ^= n & mask;
        n >>= bits;
    }
    c
}

/// Address of the hot line of the task whose block starts at `block`: the task
/// structure moves by `colour × line_bytes` inside its block.
#[inline]
pub fn task_hot_addr(block: u64, colours: u32, line_bytes: u32) -> u64 {
    block + TASK_HOT_OFFSET + colour_of(block, colours) * line_bytes as u64
}

/// Start of the cache line (of `line_bytes`) that holds the hot fields of the task whose
/// block starts at `block`: the one line the `goodness()` loop reads per task.
#[inline]
pub fn task_hot_line(block: u64, colours: u32, line_bytes: u32) -> u64 {
    task_hot_addr(block, colours, line_bytes) & !(line_bytes as u64 - 1)
}

/// Address of `run_list.prev` of the 2.4 task whose block starts at `block`
/// ([`TASK_PREV_LINK_OFFSET`], moved by colouring as the whole structure is).
#[inline]
pub fn task_link_addr(block: u64, colours: u32, line_bytes: u32) -> u64 {
    block + TASK_PREV_LINK_OFFSET + colour_of(block, colours) * line_bytes as u64
}

/// Address of `state` (offset 0) of the task whose block starts at `block`, moved by
/// colouring as the whole structure is.
#[inline]
pub fn task_state_addr(block: u64, colours: u32, line_bytes: u32) -> u64 {
    block + TASK_STATE_OFFSET + colour_of(block, colours) * line_bytes as u64
}

/// Whether the words at [`TASK_STATE_OFFSET`] share the hot line on a cache of
/// `line_bytes` lines (from 64 bytes on).
#[inline]
pub fn state_on_hot_line(line_bytes: u32) -> bool {
    let lb = line_bytes.max(1) as u64;
    TASK_HOT_OFFSET / lb == TASK_STATE_OFFSET / lb
}

/// Block of CPU `cpu`'s idle task: the blocks just below the first task's, as the
/// idle tasks are the first tasks a booting kernel makes.
#[inline]
pub fn idle_block(cpu: usize) -> u64 {
    TASK_BASE - (cpu as u64 + 1) * TASK_BLOCK
}

/// Whether 2.4's `run_list.prev` shares the hot line on a cache of `line_bytes` lines
/// (from 128 bytes on). Colouring moves both by whole lines, so it does not matter.
#[inline]
pub fn prev_link_on_hot_line(line_bytes: u32) -> bool {
    let lb = line_bytes.max(1) as u64;
    TASK_HOT_OFFSET / lb == TASK_PREV_LINK_OFFSET / lb
}

/// Offset inside its block of the hot line of task `i` in the simulator's layout
/// (block `TASK_BASE + i · 8 KB`): what a replay of a simulated walk adds to its own
/// blocks to read the lines the model priced.
#[inline]
pub fn sim_hot_offset(i: u64, colours: u32, line_bytes: u32) -> u64 {
    let block = TASK_BASE + i * TASK_BLOCK;
    task_hot_addr(block, colours, line_bytes) - block
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
    /// One 8 KB-aligned [`TASK_BLOCK`] per task, the state filling the host line
    /// that holds the hot fields, `task_hot_line(block, colours, HOST_LINE) - block`
    /// inside it: the kernel's layout, on the host, one line per task as in the
    /// kernel. The runtime uses it, so that `colours=N` moves real
    /// addresses as it moves the simulator's modelled ones.
    KernelBlocks { colours: u32 },
}

impl TaskLayout {
    /// Whether a table of `capacity` tasks can be laid out this way: kernel blocks need
    /// `capacity × 8 KB` of address space, at most [`MAX_BLOCK_BYTES`], and a power-of-two
    /// `colours` of at most [`MAX_LAYOUT_COLOURS`].
    pub fn check(self, capacity: usize) -> Result<(), LayoutError> {
        match self {
            TaskLayout::Dense => Ok(()),
            TaskLayout::KernelBlocks { colours } => {
                if !colours.is_power_of_two() || colours > MAX_LAYOUT_COLOURS {
                    return Err(LayoutError::Colours(colours));
                }
                let max = (MAX_BLOCK_BYTES / TASK_BLOCK) as usize;
                if capacity > max {
                    return Err(LayoutError::TooManyTasks { capacity, max });
                }
                Ok(())
            }
        }
    }
}

/// Why a task table cannot be laid out or allocated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// Kernel task blocks coloured by a number that is not a power of two up to the cap.
    #[error("colours={0}: kernel task blocks need a power of two up to {MAX_LAYOUT_COLOURS}")]
    Colours(u32),
    /// More tasks than the kernel layout's address-space cap holds.
    #[error(
        "{capacity} tasks × {} KB task blocks exceed the {} MiB cap on the task table's address space (at most {max} tasks)",
        TASK_BLOCK / 1024,
        MAX_BLOCK_BYTES >> 20
    )]
    TooManyTasks { capacity: usize, max: usize },
    /// A dense table whose offsets would pass 4 GiB.
    #[error("task table: {0} tasks exceed 4 GiB of task state")]
    DenseTooLarge(usize),
    /// The allocator refused the table (`MiB` asked).
    #[error("task table: cannot allocate {0} MiB")]
    Alloc(usize),
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
        // The paper's Figure 5: blocks 32 KB apart (one way of a 32 KB cache) take
        // all four colours.
        let fig5: std::collections::BTreeSet<u64> =
            [8u64, 40, 72, 104].iter().map(|k| colour_of(k * 1024, 4)).collect();
        assert_eq!(fig5.len(), 4);
    }

    #[test]
    fn blocks_a_way_apart_spread_over_all_colours() {
        // 512 KB 4-way: a way is 128 KB = 16 blocks. The blocks sharing a set group
        // (16 apart) take every colour equally often.
        for colours in [2u32, 4, 8, 16, 32] {
            let mut n = vec![0u32; colours as usize];
            for k in 0..(colours as u64 * 8) {
                n[colour_of(0xC100_0000 + (3 + 16 * k) * TASK_BLOCK, colours) as usize] += 1;
            }
            assert!(n.iter().all(|&x| x == 8), "colours={colours}: {n:?}");
        }
    }

    #[test]
    fn layout_check_caps_the_address_space_and_the_colours() {
        let kb = |colours| TaskLayout::KernelBlocks { colours };
        assert!(kb(32).check(131_072).is_ok());
        let e = kb(32).check(131_073).unwrap_err();
        assert_eq!(e, LayoutError::TooManyTasks { capacity: 131_073, max: 131_072 });
        let e = e.to_string();
        assert!(e.contains("131073 tasks") && e.contains("1024 MiB"), "{e}");
        assert_eq!(kb(3).check(1).unwrap_err(), LayoutError::Colours(3));
        assert!(kb(3).check(1).unwrap_err().to_string().contains("colours=3"));
        assert!(kb(128).check(1).is_err());
        assert!(TaskLayout::Dense.check(usize::MAX).is_ok());
    }
}
