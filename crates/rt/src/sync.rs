//! The synchronisation shim: `loom`'s model-checked primitives under `--cfg loom`,
//! `std`'s otherwise. Only the parts that the loom tests check go through here: the
//! park/unpark protocol ([`crate::park`]) and the task state machine
//! ([`crate::task::TaskState`]).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU8, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU8, AtomicUsize};
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
