//! The replay side, run under cachegrind as `schedlab cachecheck-replay ...` (a
//! hidden subcommand, [`super::REPLAY_SUBCOMMAND`]): the walk's reads at the
//! simulator's addresses, and nothing else inside the walk functions.

use super::walk::{Order, Walk};
use super::CacheCheckError;
use schedlab_core::layout::{sim_hot_offset, TASK_BLOCK};
use std::alloc::{alloc, Layout};
use std::convert::Infallible;
#[cfg(not(target_arch = "x86_64"))]
use std::mem::MaybeUninit;

/// Names of the walk functions in cachegrind's output: only their counts are taken.
pub const WALK_FN_PREFIX: &str = "schedlab_cachecheck_walk";

/// Alignment of the task buffer: a whole set span (`l2 / assoc`), so that a buffer
/// offset falls into the same set as the model's address with that offset. Each
/// read adds the model's own hot-line offset of that task (`sim_hot_offset`: the
/// colour of the model's block address, not of the buffer's).
pub fn buffer_align(w: &Walk) -> u64 {
    (w.l2_bytes / w.assoc as u64).max(TASK_BLOCK)
}

/// One read of the byte at `addr`, added into `acc`. The byte is read by an `asm!`
/// load because the buffer is deliberately left unwritten (zeroing it would fill the
/// caches before the walk) and Rust may not read uninitialised bytes as `u8`; the
/// sum keeps every load live, since valgrind's translator drops loads whose result
/// is never used (a `read_volatile` whose value is discarded vanished from
/// cachegrind's counts).
#[inline(always)]
fn read(acc: &mut u64, addr: u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `addr` is inside the live buffer (the hot line of block i < tasks stays
    // in its block, checked by `Walk::validate`); the asm only reads that byte.
    unsafe {
        std::arch::asm!(
            "movzx {t:e}, byte ptr [{a}]",
            "add {acc}, {t}",
            a = in(reg) addr,
            t = out(reg) _,
            acc = inout(reg) *acc,
            options(nostack, readonly),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above; a `MaybeUninit` may hold uninitialised bytes. Elsewhere than
    // x86_64 the value is not summed, so check the printed read counts agree.
    unsafe {
        std::ptr::read_volatile(addr as *const MaybeUninit<u8>);
        *acc += 1;
    }
}

/// Ends the replay from inside a walk function: a walk never returns, because a
/// `ret` reads its return address from the stack, a data read cachegrind would count
/// in the walk. This function's own reads are counted under its own name.
#[inline(never)]
#[cold]
fn finish(acc: u64) -> ! {
    // The sum is printed so that it is used.
    println!("walk checksum {acc}");
    std::process::exit(0)
}

// The two walks take only scalars (in registers under the C ABI) and build the
// `Walk` locally, so the compiler keeps it in registers: the data reads cachegrind
// counts in these functions are the task reads alone (checked against the model's
// read count by `schedlab cachecheck`).

#[no_mangle]
#[inline(never)]
pub extern "C" fn schedlab_cachecheck_walk_seq(base: u64, tasks: u64, colours: u32, line: u32, reps: u64) -> ! {
    let w = Walk { l2_bytes: 0, assoc: 0, line, tasks, colours, reps, order: Order::Seq, seed: 0 };
    let mut acc = 0;
    w.for_each_visit(|i| read(&mut acc, base + i * TASK_BLOCK + sim_hot_offset(i, colours, line)));
    finish(acc)
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn schedlab_cachecheck_walk_random(
    base: u64,
    tasks: u64,
    colours: u32,
    line: u32,
    reps: u64,
    seed: u64,
) -> ! {
    let w = Walk { l2_bytes: 0, assoc: 0, line, tasks, colours, reps, order: Order::Random, seed };
    let mut acc = 0;
    w.for_each_visit(|i| read(&mut acc, base + i * TASK_BLOCK + sim_hot_offset(i, colours, line)));
    finish(acc)
}

/// The hidden subcommand's body: the walk in this process, which ends it (exit code 0)
/// from inside the walk function; it returns only if the walk cannot start.
pub fn run_replay(w: &Walk) -> Result<Infallible, CacheCheckError> {
    w.validate()?;
    let layout = Layout::from_size_align((w.tasks * TASK_BLOCK) as usize, buffer_align(w) as usize)
        .map_err(CacheCheckError::Layout)?;
    // SAFETY: the layout has a non-zero size (tasks ≥ 1).
    let buf = unsafe { alloc(layout) };
    if buf.is_null() {
        return Err(CacheCheckError::Alloc(layout.size()));
    }
    // The buffer is never freed: the walk ends the process (see `finish`).
    let base = buf as u64;
    match w.order {
        Order::Seq => schedlab_cachecheck_walk_seq(base, w.tasks, w.colours, w.line, w.reps),
        Order::Random => schedlab_cachecheck_walk_random(base, w.tasks, w.colours, w.line, w.reps, w.seed),
    }
}
