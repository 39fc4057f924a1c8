//! The runtime's lock waiter, measured: what one step of `parking_lot`'s back-off takes
//! on this machine (the host machine's `lock_pause_ns` and `lock_yield_ns`), and the
//! shape of that back-off, which is the library's code, not a measurement.
//!
//! `parking_lot` 0.12's `RawMutex::lock_slow` polls the lock word between the steps of
//! parking_lot_core 0.9's `SpinWait::spin`: its counter goes 1..=10; steps 1..=3 spin
//! `1 << counter` spin-loop hints (2, 4, 8 `pause`s), steps 4..=10 call
//! `thread::yield_now` (7 `sched_yield`s); when `spin` returns false the waiter sets
//! the parked bit and parks in a futex until the releaser unparks it. The runtime's
//! run-queue lock (`RtLock`) is that mutex. Micro-benchmarks only: nothing here looks
//! at a workload.

use crate::calibrate::{pin, time_per};
use serde::Serialize;

/// `SpinWait::spin`'s steps that spin (`counter <= 3`): 2, 4 and 8 pauses.
pub const PARKING_LOT_SPIN_STEPS: u32 = 3;
/// `SpinWait::spin`'s steps that yield (`counter` 4..=10) before it gives up and the
/// waiter parks.
pub const PARKING_LOT_YIELDS: u32 = 7;

/// Pauses per timed call: one pause is a few to ~150 cycles, under a clock read.
const PAUSES_PER_CALL: u32 = 64;

/// The waiter's steps, in ns.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LockBackoff {
    /// One `std::hint::spin_loop()` (x86 `pause`), on a pinned thread.
    pub pause_ns: f64,
    /// One `std::thread::yield_now()` (`sched_yield`) returning to the caller, on a
    /// pinned thread with nothing else of ours on its CPU (other users' threads may be:
    /// the median of batches leaves out those that ran one).
    pub yield_ns: f64,
}

/// Time a pause and a yield on CPU 1, on a thread of its own (pinning the caller would
/// confine every runtime it builds later; `calibrate::atomic_rtt`'s note).
pub fn measure(quick: bool) -> LockBackoff {
    let n = if quick { 2_000 } else { 20_000 };
    std::thread::spawn(move || {
        pin(1);
        let pause_ns = time_per(n, || {
            for _ in 0..PAUSES_PER_CALL {
                std::hint::spin_loop();
            }
        }) / PAUSES_PER_CALL as f64;
        let yield_ns = time_per(n, std::thread::yield_now);
        LockBackoff { pause_ns, yield_ns }
    })
    .join()
    .expect("lock back-off thread")
}
