//! The default scheduler ("fast"): work stealing with a LIFO slot.
//!
//! * Each worker owns a FIFO `crossbeam_deque::Worker` (others steal half of it
//!   from the front) and a **LIFO slot**: a task woken *by a task running on this
//!   worker* goes there and runs next, so a message hand-off (A sends to B, A waits)
//!   stays on one core with hot caches and no cross-core wake-up.
//! * **Starvation cap**: after [`LIFO_CAP`] consecutive LIFO picks the worker looks
//!   whether something else is waiting (local deque or private queue, inbox, home
//!   queue, runnext or injector non-empty) and if so demotes the LIFO task; if not, it starts
//!   a new streak (one look per `LIFO_CAP + 1` picks, not one per pick), so work that
//!   arrives waits at most `LIFO_CAP` more LIFO picks. Tokio
//!   always demotes the LIFO task after 3 picks, which pushes a ping-pong pair onto
//!   the stealable queue and bounces it between cores; here the cap only bites when
//!   another task would otherwise starve.
//! * **runnext**: a task woken from outside the runtime's workers (the reactor's
//!   thread firing a timer or a socket, a `block_on` caller, a plain thread) goes to
//!   the shared `runnext` queue, which every worker takes from before its deque at
//!   every pick: it runs at the next scheduling point of whichever worker reaches one
//!   first, not behind every runnable yielder, and not behind one chosen worker's
//!   current poll (that worker may be in a long poll, or off its CPU). Go's `runnext`
//!   holds the goroutine readied by a P's timers and network poller; here no worker
//!   owns the outside wake, so the first free one takes it. Bounded: at most
//!   [`RUNNEXT_CAP`] runnext picks in a row while other work waits, then one ordinary
//!   pick. A wake from a worker has its runnext already: the LIFO slot.
//! * A global **injector** for spawns from outside the runtime, and a per-worker
//!   **inbox** for placement hints (`spawn_on`); both are stealable.
//! * Tasks **pinned** to a worker are never where a thief looks: woken or spawned
//!   elsewhere they go to that worker's **mailbox** (one slot, one cache line:
//!   `mailbox.rs`) if it is free and the worker's **home** queue is empty, else to the
//!   home queue; on their worker they leave the LIFO slot for a private queue
//!   (`Local::pinned`), not the deque.
//! * **Watch slot**: the pinned task that last went idle on its worker stays in that
//!   worker's watch slot in the `WATCHED` state (`task/state.rs`). A wake from
//!   another thread only flips its state to `SCHEDULED` and queues nothing; the
//!   worker sees the state where it would look at its mailbox. A cross-worker
//!   message hand-off so moves the task's line and the message's, and no queue's.
//! * Every [`GLOBAL_INTERVAL`] picks the worker looks at its inbox and the injector
//!   first, so a busy local queue cannot starve placement hints and outside spawns.
//! * Stealing starts at a random victim (xorshift per worker).
//! * Idle: spin for `spin` (default 50 µs: a futex wake of an idle vCPU costs tens of
//!   µs here), then register as a sleeper, re-check, park ([`Idle`]). A spinning
//!   round only loads the ends of queues (no fence, no write to a line a busy worker
//!   uses) and searches for real when one shows work: every round the queues that
//!   hand work to this worker or to anyone (runnext, mailbox, home, inbox, injector), every
//!   [`SPIN_STEAL_EVERY`] rounds the other workers' deques. Between rounds
//!   [`SPIN_PAUSES`] `spin_loop` hints, so a task handed to a spinning worker runs
//!   within about 0.1 µs. Producers skip the wake-up while anyone spins; a spinner
//!   that finds work and leaves more behind wakes the next sleeper.
//! * Self-woken and yielding tasks go to the back of the local deque (never the LIFO
//!   slot), so `yield_now` lets every other queued task run first. They wake an idle
//!   worker only if another task waits on this worker too: alone, the task is this
//!   worker's next pick, and a worker woken for it could only steal it and move it
//!   to its own core (`tests/idle.rs`).
//!
//! Files: this one holds the state all workers share and the ways work enters it
//! (wake, spawn, placement hint, shutdown drain); `worker.rs` the per-worker state
//! ([`Local`]) and the worker loop (pick, steal, idle, poll); `idle.rs` the
//! spinning/sleeping registry; `mailbox.rs` the one-task hand-off slot; `owned.rs`
//! the registry of live tasks for shutdown.

pub(crate) mod idle;
pub(crate) mod mailbox;
mod owned;
mod worker;

pub(crate) use worker::Local;

use crate::stats::StatsTable;
use crate::task::Task;
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use crossbeam_utils::CachePadded;
use idle::Idle;
use mailbox::Mailbox;
use owned::OwnedTasks;
use std::time::Duration;

/// Consecutive LIFO-slot picks allowed while other work waits.
pub const LIFO_CAP: u32 = 3;
/// Every this many picks, check the inbox and the injector first.
pub const GLOBAL_INTERVAL: u32 = 61;
/// Consecutive runnext picks allowed while other work waits.
pub const RUNNEXT_CAP: u32 = 3;
/// `spin_loop` hints between two looks of a spinning worker at the queues. One: a
/// hint (x86 `pause`) takes about 40 ns on the machines measured (docs/runtime.md),
/// so a round stays near 0.1 µs and a spinner sees a hand-off within about that.
pub const SPIN_PAUSES: u32 = 1;
/// A spinning worker looks at the other workers' deques once per this many rounds
/// (about 2 µs, near the cadence of a spinner that searches every queue and then
/// waits 32 hints): often enough to steal, rarely enough not to take the task a busy
/// worker requeued and is about to pop (which bounces a yielding task between
/// workers). Looking twice as often slows `local-dispatch/self-wake` and `chat` by
/// about a fifth (docs/runtime.md).
pub const SPIN_STEAL_EVERY: u32 = 32;

/// The state all workers of a fast scheduler share.
pub(crate) struct Fast {
    injector: Injector<Task>,
    inboxes: Box<[Injector<Task>]>,
    /// Tasks woken from outside the workers, to run next on the first worker that
    /// picks (`worker.rs`, `Fast::take_runnext`).
    runnext: Injector<Task>,
    /// Per worker: tasks pinned to it, woken or spawned elsewhere. Only that worker
    /// takes from it (a thief could only hand them back).
    homes: Box<[Injector<Task>]>,
    /// Per worker: the one-task fast lane in front of its home queue (`mailbox.rs`),
    /// used while the home queue is empty.
    mailboxes: Box<[CachePadded<Mailbox<Task>>]>,
    stealers: Box<[Stealer<Task>]>,
    idle: Idle,
    /// The reactor, for the workers' looks between picks and while they spin.
    reactor: crate::reactor::ReactorRef,
    /// The workers' deques, taken by their threads at start.
    deques: parking_lot::Mutex<Vec<Option<Worker<Task>>>>,
    spin: Duration,
    /// Every live task, so that shutdown can cancel idle ones.
    owned: OwnedTasks,
    stats: StatsTable,
}

impl Fast {
    pub fn new(n: usize, spin: Duration) -> Fast {
        let deques: Vec<Worker<Task>> = (0..n).map(|_| Worker::new_fifo()).collect();
        Fast {
            injector: Injector::new(),
            inboxes: (0..n).map(|_| Injector::new()).collect(),
            runnext: Injector::new(),
            homes: (0..n).map(|_| Injector::new()).collect(),
            mailboxes: (0..n).map(|_| CachePadded::new(Mailbox::new())).collect(),
            stealers: deques.iter().map(|d| d.stealer()).collect(),
            idle: Idle::new(n),
            reactor: crate::reactor::ReactorRef::get(),
            deques: parking_lot::Mutex::new(deques.into_iter().map(Some).collect()),
            spin,
            owned: OwnedTasks::new(n),
            stats: StatsTable::new(n),
        }
    }

    /// Record a new task in the registry (shard of the spawning worker, if any).
    pub fn register(&self, task: &Task, worker: Option<usize>) {
        self.owned.register(task, worker);
    }

    /// A woken or new task. `local` is this thread's worker state if the thread is a
    /// worker of this runtime.
    ///
    /// The common case (a wake on a worker the task may run on: into its LIFO slot) is
    /// inlined into the waker; the rest is out of line so that it stays small.
    #[inline]
    pub fn schedule(&self, task: Task, local: Option<&Local>) {
        if let Some(l) = local {
            if task.header().home().is_none_or(|home| home == l.index) {
                if let Some(prev) = l.lifo.replace(Some(task)) {
                    self.lifo_displaced(l, prev);
                }
                return;
            }
        }
        self.schedule_elsewhere(task)
    }

    /// The LIFO slot's previous occupant goes to the deque, where others may steal it
    /// (or, if pinned here, to the worker's private queue).
    #[inline(never)]
    fn lifo_displaced(&self, l: &Local, prev: Task) {
        if l.queue_local(prev) {
            self.idle.notify_one();
        }
    }

    /// [`Fast::schedule`] from a thread that is not a worker (the runnext queue), or of a pinned task away from its home worker (that worker's home queue).
    #[inline(never)]
    fn schedule_elsewhere(&self, task: Task) {
        match task.header().home() {
            Some(home) => self.schedule_on(task, home),
            None => {
                // Every busy worker looks at it at its next pick; an idle one is
                // woken unless one spins (it looks there first).
                self.runnext.push(task);
                self.idle.notify_one();
            }
        }
    }

    /// A task spawned from outside the workers: the injector (a worker takes a batch
    /// at a time into its deque), not the runnext queue, so that a loop spawning many
    /// tasks from `block_on` is not run one steal per task ahead of everything else.
    pub fn inject(&self, task: Task) {
        if task.header().home().is_some() {
            return self.schedule_elsewhere(task);
        }
        self.injector.push(task);
        self.idle.notify_one();
    }

    /// A waker on worker `l` moved the watched task `id` to `SCHEDULED` (`HANDED` if
    /// `handed`). If `l` watches it, it runs from the LIFO slot like any task woken
    /// on its worker. Otherwise its worker sees the state by itself: it is awake,
    /// since a worker gives up its watched task before it sleeps (`worker.rs`), so
    /// the wake writes no line but the task's.
    pub fn watched_woken(&self, id: *const (), l: &Local, handed: bool) {
        if let Some(t) = l.take_watched_task(id) {
            if handed {
                // SAFETY: this waker's own hand-over, taken here only.
                drop(unsafe { worker::handed_reference(&t) });
            }
            self.schedule(t, Some(l));
        }
    }

    /// Placement hint: `task` should start on worker `w`.
    pub fn schedule_on(&self, task: Task, w: usize) {
        let w = w % self.inboxes.len();
        if task.header().home() == Some(w) {
            // Only `w` can run it: its mailbox if free and nothing older waits in the
            // home queue, else the home queue. Wake `w` if it sleeps (it re-checks
            // both after registering as a sleeper, so the wake cannot be lost),
            // nobody else.
            let home = &self.homes[w];
            let task = match home.is_empty() {
                true => self.mailboxes[w].offer(task).err(),
                false => Some(task),
            };
            if let Some(task) = task {
                home.push(task);
            }
            self.idle.wake_worker(w);
            return;
        }
        self.inboxes[w].push(task);
        if !self.idle.wake_worker(w) {
            self.idle.notify_one();
        }
    }

    /// Shutdown: wake every sleeping worker so that it sees the flag.
    pub fn unpark_all(&self) {
        self.idle.wake_all();
    }

    pub fn stats(&self) -> crate::Stats {
        self.stats.sum()
    }

    pub fn debug_state(&self) -> String {
        format!(
            "live={:?} injector={} inboxes={:?} runnext={} homes={:?} mailboxes={:?} stealers={:?} spinning={} idle={:?}",
            self.owned.states(),
            self.injector.len(),
            self.inboxes.iter().map(|q| q.len()).collect::<Vec<_>>(),
            self.runnext.len(),
            self.homes.iter().map(|q| q.len()).collect::<Vec<_>>(),
            self.mailboxes.iter().map(|m| m.is_full()).collect::<Vec<_>>(),
            self.stealers.iter().map(|q| q.len()).collect::<Vec<_>>(),
            self.idle.num_spinning(),
            self.idle
        )
    }

    /// Drop every queued task (shutdown, after the workers have stopped).
    pub fn drain(&self) {
        self.owned.cancel_all();
        let mut deques = self.deques.lock();
        for d in deques.iter_mut().flatten() {
            while let Some(t) = d.pop() {
                t.cancel();
            }
        }
        for m in self.mailboxes.iter() {
            // SAFETY: the workers have stopped; this is the only taker.
            if let Some(t) = unsafe { m.take() } {
                t.cancel();
            }
        }
        let queues = [&self.injector, &self.runnext].into_iter().chain(self.inboxes.iter());
        for q in queues.chain(self.homes.iter()) {
            loop {
                match q.steal() {
                    Steal::Success(t) => t.cancel(),
                    Steal::Retry => continue,
                    Steal::Empty => break,
                }
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::scheduler::Handle;
    use crate::{channel, Builder};
    use std::sync::Arc;

    /// The watch slot's reference counting (a reference handed over by a waker, the
    /// slot's own, the one lent to a waker clone): after cross-worker hand-offs over
    /// channels whose senders wake by value (the runtime's, async-channel's, Tokio's),
    /// a task fed by a plain thread while its worker now and then parks (giving the
    /// watched task up), and tasks left watched at shutdown, nothing keeps a task cell,
    /// and so the runtime's handle, alive.
    #[test]
    fn watched_hand_offs_leak_no_reference() {
        let rt = Builder::new().workers(2).policy("fast").build().unwrap();
        let weak = rt.block_on(async { Arc::downgrade(&Handle::current().expect("inside the runtime")) });
        const N: u64 = 3_000;
        let (to_b, mut b_rx) = channel::unbounded::<u64>();
        let (to_a, mut a_rx) = channel::unbounded::<u64>();
        let b = rt.spawn_pinned(1, async move {
            while let Some(x) = b_rx.recv().await {
                to_a.send(x).unwrap();
            }
        });
        let a = rt.spawn_pinned(0, async move {
            for i in 0..N {
                to_b.send(i).unwrap();
                assert_eq!(a_rx.recv().await, Some(i));
            }
        });
        let (ac_to_b, ac_b_rx) = async_channel::bounded::<u64>(1);
        let (ac_to_a, ac_a_rx) = async_channel::bounded::<u64>(1);
        let c = rt.spawn_pinned(1, async move {
            while let Ok(x) = ac_b_rx.recv().await {
                ac_to_a.send(x).await.unwrap();
            }
        });
        let d = rt.spawn_pinned(0, async move {
            for i in 0..N {
                ac_to_b.send(i).await.unwrap();
                assert_eq!(ac_a_rx.recv().await, Ok(i));
            }
        });
        let (tk_to_b, mut tk_b_rx) = tokio::sync::mpsc::unbounded_channel::<u64>();
        let (tk_to_a, mut tk_a_rx) = tokio::sync::mpsc::unbounded_channel::<u64>();
        let e = rt.spawn_pinned(1, async move {
            while let Some(x) = tk_b_rx.recv().await {
                tk_to_a.send(x).unwrap();
            }
        });
        let f = rt.spawn_pinned(0, async move {
            for i in 0..N {
                tk_to_b.send(i).unwrap();
                assert_eq!(tk_a_rx.recv().await, Some(i));
            }
        });
        // Fed by a plain thread (its wakes by value hand over too), pausing now and
        // then so that the workers park and give up the watched task.
        let (feed, mut fed_rx) = channel::unbounded::<u64>();
        let g = rt.spawn_pinned(1, async move {
            let mut n = 0;
            while let Some(x) = fed_rx.recv().await {
                assert_eq!(x, n);
                n += 1;
            }
            n
        });
        let feeder = std::thread::spawn(move || {
            for i in 0..N {
                feed.send(i).unwrap();
                if i % 500 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        });
        feeder.join().unwrap();
        rt.block_on(async move {
            for j in [a, b, d, c, f, e] {
                j.await.unwrap();
            }
            assert_eq!(g.await.unwrap(), N);
        });
        // Left waiting (watched, or displaced from the slot) when the runtime goes.
        let mut keep = Vec::new();
        for w in 0..4 {
            let (tx, mut rx) = channel::unbounded::<()>();
            let (ping, mut pong) = channel::unbounded::<()>();
            rt.spawn_pinned(w % 2, async move {
                ping.send(()).unwrap();
                rx.recv().await;
            });
            rt.block_on(async move { pong.recv().await });
            keep.push(tx);
        }
        drop(rt);
        drop(keep);
        assert!(weak.upgrade().is_none(), "a task cell (or the runtime's handle) leaked");
    }
}
