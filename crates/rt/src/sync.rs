//! The synchronisation shim: `loom`'s model-checked primitives under `--cfg loom`,
//! `std`'s otherwise. Only the parts that the loom tests check go through here: the
//! park/unpark protocol ([`crate::park`], [`crate::resched`]), the task state machine
//! ([`crate::task::TaskState`]), the channel ([`crate::channel`]) and the fast
//! scheduler's mailbox ([`crate::park::Mailbox`]).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU8, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU8, AtomicUsize};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex};

/// Lock a shim mutex; a poisoned lock (a panic while holding it, which the runtime
/// never does) is taken over.
pub(crate) fn lock<T>(m: &Mutex<T>) -> crate::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

#[cfg(loom)]
pub(crate) use loom::sync::MutexGuard;
#[cfg(not(loom))]
pub(crate) use std::sync::MutexGuard;

/// The channel's lock: a spin lock normally, loom's under loom. Its critical sections
/// are a few instructions, and a spin lock's unlock is a plain release store, where
/// `parking_lot`'s is a locked `cmpxchg` that must wait for the message store before it
/// (often a miss on a buffer line the receiver's core last touched).
#[cfg(not(loom))]
pub(crate) type ChanMutex<T> = spin::Mutex<T>;
#[cfg(loom)]
pub(crate) type ChanMutex<T> = loom::sync::Mutex<T>;

#[cfg(not(loom))]
pub(crate) fn chan_lock<T>(m: &ChanMutex<T>) -> spin::MutexGuard<'_, T> {
    m.lock()
}
#[cfg(loom)]
pub(crate) fn chan_lock<T>(m: &ChanMutex<T>) -> loom::sync::MutexGuard<'_, T> {
    m.lock().expect("the channel never panics holding its lock")
}

#[cfg(loom)]
pub(crate) use loom::sync::Arc;
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;

/// A cell whose accesses loom checks for data races (`loom::cell::UnsafeCell`), with
/// the same `with_mut` under `std`.
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

#[cfg(not(loom))]
#[derive(Debug, Default)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(v: T) -> UnsafeCell<T> {
        UnsafeCell(std::cell::UnsafeCell::new(v))
    }
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
