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

use crate::timing::{pin, time_per};
use serde::Serialize;

/// `SpinWait::spin`'s steps that spin (`counter <= 3`): 2, 4 and 8 pauses.
pub const PARKING_LOT_SPIN_STEPS: u32 = 3;
/// `SpinWait::spin`'s steps that yield (`counter` 4..=10) before it gives up and the
/// waiter parks.
pub const PARKING_LOT_YIELDS: u32 = 7;

/// The shape of the runtime's policy-lock waiter in this build
/// (`schedlab_rt::POLICY_LOCK_WAITER`), as the host machine describes it: the library's
/// step counts, not measurements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaiterShape {
    /// `lock_spin_steps`: steps of 2^k `pause`s, each followed by a poll.
    pub spin_steps: u32,
    /// `lock_yields`: `sched_yield`s, each followed by a poll.
    pub yields: u32,
    /// Whether a waiter past its last poll parks (its wake-up is then a price).
    pub parks: bool,
}

/// `parking_lot`'s back-off ([`PARKING_LOT_SPIN_STEPS`], [`PARKING_LOT_YIELDS`], parks);
/// or, with the runtime's `spin-lock` feature, a waiter that looks at the word one
/// `pause` apart: the simulator's continuous polling (0 steps, 0 yields), which sees
/// the release at once. Its real looks are one `pause` (~23 ns here) apart, so it sees
/// a release up to that late, which is not charged; it yields only past
/// `schedlab_rt::LockWaiter::Polls`'s `polls` looks (µs), which no simulated wait reaches unless the
/// lock's holder is descheduled, which simulated holders never are.
pub fn runtime_waiter() -> WaiterShape {
    match schedlab_rt::POLICY_LOCK_WAITER {
        schedlab_rt::LockWaiter::BackOff => {
            WaiterShape { spin_steps: PARKING_LOT_SPIN_STEPS, yields: PARKING_LOT_YIELDS, parks: true }
        }
        schedlab_rt::LockWaiter::Polls { .. } => WaiterShape { spin_steps: 0, yields: 0, parks: false },
    }
}

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
