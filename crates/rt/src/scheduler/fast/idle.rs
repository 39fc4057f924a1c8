//! The fast scheduler's idle workers: spinning ones (counted) and sleeping ones (a
//! stack of worker ids, each parked on its own [`Parker`]).
//!
//! The protocol (Dekker-style, with a `SeqCst` fence on both sides), model-checked
//! with loom (`tests/loom_park.rs`, through `schedlab_rt::park::Idle`):
//!
//! ```text
//! producer (new work)                 worker going idle
//! push work                           spinning[w] = false; sleepers += 1 (under lock)
//! fence(SeqCst)                       fence(SeqCst)
//! if any spinning: done               re-check every queue → found? unregister, run
//! if sleepers > 0: pop one, unpark    park()
//! ```
//!
//! Each worker's spinning flag is its own cache line, written with plain stores by
//! that worker only: a worker that goes idle and finds work a moment later (a
//! message hand-off between two workers) writes no line another worker writes. A
//! shared counter took two read-modify-writes per idle spell, each a line transfer
//! when two workers take turns. A stale `true` seen by a producer is safe: the worker
//! stores `false` before it registers and re-checks behind the fence.
//!
//! Either the producer sees the worker registered (and unparks it, leaving a token if
//! it has not slept yet) or the worker's re-check sees the work. A spinning worker will
//! find the work itself, so producers do not pay for a futex wake (tens of µs on this
//! VM) while someone spins; a spinner that finds work and leaves more behind wakes the
//! next worker (see `worker.rs`), as Tokio's "last searcher" rule.

use crate::park::Parker;
use crate::sync::{fence, lock, AtomicBool, AtomicUsize, Mutex};
use crossbeam_utils::CachePadded;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};

/// Who is idle in the fast scheduler: spinning workers (counted) and sleeping ones
/// (a stack of worker ids).
#[derive(Debug)]
pub struct Idle {
    /// Per worker: whether it is spinning (written by that worker only).
    spinning: Box<[CachePadded<AtomicBool>]>,
    nsleepers: AtomicUsize,
    sleepers: Mutex<Vec<usize>>,
    parkers: Box<[Parker]>,
}

impl Idle {
    pub fn new(nworkers: usize) -> Idle {
        Idle {
            spinning: (0..nworkers).map(|_| CachePadded::new(AtomicBool::new(false))).collect(),
            nsleepers: AtomicUsize::new(0),
            sleepers: Mutex::new(Vec::with_capacity(nworkers)),
            parkers: (0..nworkers).map(|_| Parker::new()).collect(),
        }
    }

    pub fn parker(&self, w: usize) -> &Parker {
        &self.parkers[w]
    }

    /// Worker `w` starts spinning for work.
    pub fn start_spinning(&self, w: usize) {
        self.spinning[w].store(true, Relaxed);
    }
    /// Worker `w` stops spinning (found work, or is about to sleep: then
    /// [`Idle::register`]'s fence orders this store before its re-check).
    pub fn stop_spinning(&self, w: usize) {
        self.spinning[w].store(false, Relaxed);
    }
    /// Whether any worker spins (loads of every worker's flag).
    fn any_spinning(&self) -> bool {
        self.spinning.iter().any(|s| s.load(SeqCst))
    }
    pub fn num_spinning(&self) -> usize {
        self.spinning.iter().filter(|s| s.load(Relaxed)).count()
    }

    /// Register `w` as sleeping. The caller must re-check for work afterwards and
    /// either [`Idle::unregister`] (work found) or [`Idle::sleep`].
    pub fn register(&self, w: usize) {
        let mut s = lock(&self.sleepers);
        if !s.contains(&w) {
            s.push(w);
            self.nsleepers.fetch_add(1, SeqCst);
        }
        drop(s);
        fence(SeqCst);
    }

    /// Take `w` off the sleeper list if it is still there.
    pub fn unregister(&self, w: usize) {
        if self.nsleepers.load(SeqCst) == 0 {
            return;
        }
        let mut s = lock(&self.sleepers);
        if let Some(i) = s.iter().position(|&x| x == w) {
            s.swap_remove(i);
            self.nsleepers.fetch_sub(1, SeqCst);
        }
    }

    /// Park `w` (registered before) until notified, or until the reactor's turn it
    /// drove meanwhile has fired something; leaves it unregistered.
    pub fn sleep(&self, w: usize) {
        self.parkers[w].park_driving(None, &mut || self.unregister(w));
        self.unregister(w);
    }

    /// New work was published: wake one sleeper unless a worker is spinning (it will
    /// find the work). Cheap when nobody sleeps: one fence and two loads.
    pub fn notify_one(&self) {
        fence(SeqCst);
        if self.any_spinning() {
            return;
        }
        self.wake_one();
    }

    /// Wake one sleeper regardless of spinners. Returns whether one was woken.
    pub fn wake_one(&self) -> bool {
        fence(SeqCst);
        if self.nsleepers.load(SeqCst) == 0 {
            return false;
        }
        let w = {
            let mut s = lock(&self.sleepers);
            let w = s.pop();
            if w.is_some() {
                self.nsleepers.fetch_sub(1, SeqCst);
            }
            w
        };
        match w {
            Some(w) => {
                self.parkers[w].unpark();
                true
            }
            None => false,
        }
    }

    /// Wake `w` if it sleeps (placement hint). Returns whether it was asleep.
    pub fn wake_worker(&self, w: usize) -> bool {
        fence(SeqCst);
        if self.nsleepers.load(SeqCst) == 0 {
            return false;
        }
        let found = {
            let mut s = lock(&self.sleepers);
            match s.iter().position(|&x| x == w) {
                Some(i) => {
                    s.swap_remove(i);
                    self.nsleepers.fetch_sub(1, SeqCst);
                    true
                }
                None => false,
            }
        };
        if found {
            self.parkers[w].unpark();
        }
        found
    }

    /// Shutdown: wake everyone.
    pub fn wake_all(&self) {
        lock(&self.sleepers).clear();
        self.nsleepers.store(0, SeqCst);
        for p in self.parkers.iter() {
            p.unpark();
        }
    }
}
