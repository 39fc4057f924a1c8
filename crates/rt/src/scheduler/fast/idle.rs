//! The fast scheduler's idle workers: spinning ones (counted) and sleeping ones (a
//! stack of worker ids, each parked on its own [`Parker`]).
//!
//! The protocol (Dekker-style, with a `SeqCst` fence on both sides), model-checked
//! with loom (`tests/loom_park.rs`, through `schedlab_rt::park::Idle`):
//!
//! ```text
//! producer (new work)                 worker going idle
//! push work                           spinning -= 1; sleepers += 1 (under lock)
//! fence(SeqCst)                       fence(SeqCst)
//! if spinning > 0: done               re-check every queue → found? unregister, run
//! if sleepers > 0: pop one, unpark    park()
//! ```
//!
//! Either the producer sees the worker registered (and unparks it, leaving a token if
//! it has not slept yet) or the worker's re-check sees the work. A spinning worker will
//! find the work itself, so producers do not pay for a futex wake (tens of µs on this
//! VM) while someone spins; a spinner that finds work and leaves more behind wakes the
//! next worker (see `worker.rs`), as Tokio's "last searcher" rule.

use crate::park::Parker;
use crate::sync::{fence, lock, AtomicUsize, Mutex};
use std::sync::atomic::Ordering::{Relaxed, SeqCst};

/// Who is idle in the fast scheduler: spinning workers (counted) and sleeping ones
/// (a stack of worker ids).
#[derive(Debug)]
pub struct Idle {
    spinning: AtomicUsize,
    nsleepers: AtomicUsize,
    sleepers: Mutex<Vec<usize>>,
    parkers: Box<[Parker]>,
}

impl Idle {
    pub fn new(nworkers: usize) -> Idle {
        Idle {
            spinning: AtomicUsize::new(0),
            nsleepers: AtomicUsize::new(0),
            sleepers: Mutex::new(Vec::with_capacity(nworkers)),
            parkers: (0..nworkers).map(|_| Parker::new()).collect(),
        }
    }

    pub fn parker(&self, w: usize) -> &Parker {
        &self.parkers[w]
    }

    /// A worker starts spinning for work.
    pub fn start_spinning(&self) {
        self.spinning.fetch_add(1, SeqCst);
    }
    /// A spinning worker stops (found work, or is about to sleep). Returns whether it
    /// was the last spinner.
    pub fn stop_spinning(&self) -> bool {
        self.spinning.fetch_sub(1, SeqCst) == 1
    }
    pub fn num_spinning(&self) -> usize {
        self.spinning.load(Relaxed)
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
        if self.spinning.load(SeqCst) > 0 {
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
