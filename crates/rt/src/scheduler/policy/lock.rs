//! The mutex under a policy lock ([`super::platform::RtLock`]), chosen at build time.
//!
//! * default: `parking_lot::Mutex`. Its waiter backs off (2, 4, 8 `pause`s, then up to
//!   seven `sched_yield`s, then parks in a futex), so it sees a release late: 40–370 ns
//!   after a plain hand-off (`crates/validate/examples/lockwait.rs`).
//! * feature `spin-lock`: `spin`'s test-and-test-and-set mutex, whose waiter polls the
//!   word with one `pause` between looks, as 2.4's `spin_lock` does, for up to
//!   [`SPIN_POLLS`] looks; past that it calls `sched_yield` before each look.
//!
//! Why the bound. A user thread, unlike a kernel spinlock holder, can lose its CPU while
//! it holds the lock: the guest preempts it for another process (other jobs share this
//! 2-vCPU VM), or the hypervisor deschedules its vCPU. A pure spin then burns the
//! waiter's CPU for the holder's whole time off (a guest time slice: milliseconds), and
//! if the holder is on the waiter's own CPU (a `block_on` caller that is not a pinned
//! worker) it is priority inversion: the holder cannot run until the spinner's slice
//! ends. A hold is ~100 ns and a contended wait ~200–300 ns (docs/traces.md, "DSS
//! against MQS"); [`SPIN_POLLS`] looks (≈ 6 µs of `pause`s here) cover every wait made while the
//! holder runs, so the yield is reached only when it does not, and then costs one
//! system call per look instead of a CPU. It does not park: parking needs the unlock
//! to know about sleepers (a second word and a wake-up), which is `parking_lot`.
//!
//! The lock's atomics are `spin`'s (`try_lock`'s compare-exchange, the guard's release
//! store); the wait below only decides when to look again, so it affects how soon a
//! waiter gets the lock, never whether two hold it.

/// How a waiter on the policy lock looks at a held lock: what the calibration's host
/// machine describes (`lock_spin_steps` …) and `lockwait` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockWaiter {
    /// `parking_lot`'s back-off: 2, 4, 8 `pause`s, 7 `sched_yield`s, then it parks.
    BackOff,
    /// Looks at the word continuously, one `pause` apart, `polls` times; then one
    /// `sched_yield` apart.
    Polls { polls: u32 },
}

/// This build's policy-lock waiter.
#[cfg(not(feature = "spin-lock"))]
pub const POLICY_LOCK_WAITER: LockWaiter = LockWaiter::BackOff;
#[cfg(feature = "spin-lock")]
pub const POLICY_LOCK_WAITER: LockWaiter = LockWaiter::Polls { polls: SPIN_POLLS };

/// Looks at a held word, one `pause` apart, before the waiter starts yielding.
#[cfg(feature = "spin-lock")]
pub const SPIN_POLLS: u32 = 256;

#[cfg(not(feature = "spin-lock"))]
pub type PolicyMutex<T> = parking_lot::Mutex<T>;
#[cfg(not(feature = "spin-lock"))]
pub type PolicyGuard<'a, T> = parking_lot::MutexGuard<'a, T>;

#[cfg(feature = "spin-lock")]
pub type PolicyMutex<T> = spin::mutex::SpinMutex<T>;
#[cfg(feature = "spin-lock")]
pub type PolicyGuard<'a, T> = spin::mutex::SpinMutexGuard<'a, T>;

/// Take `m`, waiting as the chosen lock's waiter does.
#[cfg(not(feature = "spin-lock"))]
#[inline(always)]
pub fn lock<T>(m: &PolicyMutex<T>) -> PolicyGuard<'_, T> {
    m.lock()
}

/// Take `m`: a compare-exchange, and while that fails, look at the word until it is
/// free (a plain load, so the line stays shared while the holder works), one `pause`
/// apart for [`SPIN_POLLS`] looks and then one `sched_yield` apart.
#[cfg(feature = "spin-lock")]
#[inline(always)]
pub fn lock<T>(m: &PolicyMutex<T>) -> PolicyGuard<'_, T> {
    match m.try_lock() {
        Some(g) => g,
        None => lock_contended(m),
    }
}

#[cfg(feature = "spin-lock")]
#[cold]
#[inline(never)]
fn lock_contended<T>(m: &PolicyMutex<T>) -> PolicyGuard<'_, T> {
    let mut looks = 0u32;
    loop {
        while m.is_locked() {
            if looks < SPIN_POLLS {
                looks += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        if let Some(g) = m.try_lock() {
            return g;
        }
    }
}

/// Take `m` if it is free.
#[inline(always)]
pub fn try_lock<T>(m: &PolicyMutex<T>) -> Option<PolicyGuard<'_, T>> {
    m.try_lock()
}

#[cfg(all(test, feature = "spin-lock"))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_waiter_past_its_spin_budget_still_gets_the_lock_and_the_holders_writes() {
        let m = Arc::new(PolicyMutex::new(0u64));
        let g = lock(&m);
        let asked = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (m, asked) = (m.clone(), asked.clone());
            std::thread::spawn(move || {
                asked.store(true, Ordering::SeqCst);
                *lock(&m)
            })
        };
        while !asked.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        // Far past SPIN_POLLS pauses (≈ 6 µs): the waiter is in its yield phase.
        std::thread::sleep(Duration::from_millis(5));
        let mut g = g;
        *g = 7;
        drop(g);
        assert_eq!(waiter.join().unwrap(), 7);
    }

    #[test]
    fn two_threads_incrementing_under_the_lock_lose_no_increment() {
        let m = Arc::new(PolicyMutex::new(0u64));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..200_000 {
                        *lock(&m) += 1;
                    }
                })
            })
            .collect();
        hs.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(*lock(&m), 400_000);
    }
}
