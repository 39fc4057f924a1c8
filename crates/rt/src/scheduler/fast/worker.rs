//! A fast worker: its own state ([`Local`]) and its loop — pick (LIFO slot, local
//! deque, now and then the global queues), poll, and when there is nothing: steal,
//! spin, sleep.

use super::{Fast, GLOBAL_INTERVAL, LIFO_CAP, RUNNEXT_CAP, SPIN_PAUSES, SPIN_STEAL_EVERY};
use crate::context;
use crate::scheduler::{Handle, WorkerLocal};
use crate::task::{lend, Polled, Task, HANDED, SCHEDULED, WATCHED};
use crossbeam_deque::{Steal, Worker};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::mem::ManuallyDrop;
use std::sync::atomic::Ordering::Acquire;
use std::sync::Arc;
use std::time::Instant;

/// Worker-local state. The worker installs a pointer to it in the thread-local context
/// ([`WorkerLocal::Fast`]) so that a wake from a task running here reaches its LIFO slot.
pub(crate) struct Local {
    pub(super) index: usize,
    /// Also pushed to by [`Fast::schedule`] (a wake on this worker).
    pub(super) deque: Worker<Task>,
    pub(super) lifo: Cell<Option<Task>>,
    /// Runnable tasks pinned to this worker that left the LIFO slot (demoted, or
    /// re-queued after a self-wake). Not in the deque: a thief would only hand them
    /// back through the inbox, and a non-empty inbox makes the LIFO cap demote the
    /// running pair, which a thief steals again (a loop seen under callgrind).
    pinned: RefCell<VecDeque<Task>>,
    /// The watch slot: a task pinned here that went idle, in the `WATCHED` state, its
    /// reference kept here (`task/state.rs`; the module documentation).
    watched: Cell<Option<Task>>,
    /// Whether the task being picked was handed here by another thread (mailbox,
    /// home queue, watch slot): only such a task is watched when it goes idle. A task
    /// woken on its own worker goes to the LIFO slot anyway, and watching it would
    /// only add reference-count traffic to a same-worker hand-off.
    picked_remote: Cell<bool>,
    /// The reference a waker handed over with the task just taken from the watch slot
    /// (`HANDED`): the next watch of that task uses it instead of a new count.
    handed: Cell<Option<Task>>,
    lifo_streak: Cell<u32>,
    /// Consecutive picks from the runnext queue by this worker (see [`RUNNEXT_CAP`]).
    runnext_streak: Cell<u32>,
    rng: Cell<u32>,
    /// The task polled last (identity only, for the switch count).
    last_polled: Cell<*const ()>,
}

impl Local {
    /// Queue a runnable task of this worker without telling anyone: a task pinned here
    /// to the private queue, any other to the back of the deque (others may steal it).
    /// Returns whether it went to the deque.
    pub(super) fn queue_local(&self, t: Task) -> bool {
        if t.header().home() == Some(self.index) {
            self.pinned.borrow_mut().push_back(t);
            false
        } else {
            self.deque.push(t);
            true
        }
    }

    /// Whether more than one task waits on this worker (deque, LIFO slot, private
    /// queue): something another worker could run while this one runs the rest. Out
    /// of line: only a task woken during its own poll asks, and the poll loop that
    /// holds the call stays as small as without it.
    #[inline(never)]
    fn more_than_one_waiting(&self) -> bool {
        if self.deque.len() > 1 || !self.pinned.borrow().is_empty() {
            return true;
        }
        let lifo = self.lifo.take();
        let occupied = lifo.is_some();
        self.lifo.set(lifo);
        occupied
    }

    fn pop_pinned(&self) -> Option<Task> {
        self.pinned.borrow_mut().pop_front()
    }

    /// The watched task if a wake has scheduled it (or drop it if it was cancelled).
    #[inline]
    fn take_watched(&self) -> Option<Task> {
        let t = self.watched.take()?;
        match t.header().state.load() {
            SCHEDULED => {
                self.picked_remote.set(true);
                Some(t)
            }
            HANDED => {
                self.picked_remote.set(true);
                // SAFETY: the state is `HANDED`.
                self.handed.set(Some(unsafe { handed_reference(&t) }));
                Some(t)
            }
            WATCHED => {
                self.watched.set(Some(t));
                None
            }
            _ => None,
        }
    }

    /// Whether the watched task is no longer waiting (woken, or cancelled): a load of
    /// its state, for the spinning rounds and the LIFO cap's look.
    #[inline]
    fn watched_changed(&self) -> bool {
        let t = self.watched.take();
        let changed = t.as_ref().is_some_and(|t| t.header().state.load() != WATCHED);
        self.watched.set(t);
        changed
    }

    /// The watched task if it is `id` (a wake of it on this worker). Its state is
    /// already `SCHEDULED`.
    pub(super) fn take_watched_task(&self, id: *const ()) -> Option<Task> {
        let t = self.watched.take()?;
        if Arc::as_ptr(&t) as *const () == id {
            return Some(t);
        }
        self.watched.set(Some(t));
        None
    }

    /// Stop watching (before sleeping): the watched task if a wake came first, to
    /// run now; `None` if there was none or it is idle now (a later wake queues it).
    fn give_up_watched(&self) -> Option<Task> {
        let t = self.watched.take().and_then(unwatch)?;
        self.picked_remote.set(true);
        Some(t)
    }

    /// Watch `t` (its state just became `WATCHED`), giving up the task watched before
    /// (to this worker's private queue if a wake came first).
    fn watch(&self, t: Task) {
        if let Some(woken) = self.watched.replace(Some(t)).and_then(unwatch) {
            self.queue_local(woken);
        }
    }
}

/// Stop watching `t`: `None` if it is idle now (a later wake queues it) or cancelled;
/// the task, runnable and this worker's, if a wake came first (a reference the waker
/// handed over with it is released).
fn unwatch(t: Task) -> Option<Task> {
    match t.header().state.unwatch() {
        Some(SCHEDULED) => Some(t),
        Some(HANDED) => {
            // SAFETY: the state is `HANDED`.
            drop(unsafe { handed_reference(&t) });
            Some(t)
        }
        _ => None,
    }
}

/// The reference a waker handed over with `t` (`TaskState::wake_handing`).
///
/// # Safety
/// `t`'s state must be `HANDED` as seen by the worker that watched it, and each
/// hand-over taken once: the waker left one count on the task beyond the slot's,
/// which this returns as a `Task` of its own.
pub(super) unsafe fn handed_reference(t: &Task) -> Task {
    unsafe { Task::from_raw(Task::as_ptr(t)) }
}

impl Fast {
    /// Run worker `index` until shutdown. Its deque is taken from, and given back to,
    /// [`Fast`] so that shutdown can drain it.
    pub fn run_worker(&self, handle: &Handle, index: usize) {
        let deque = self.deques.lock()[index].take().expect("worker started twice");
        let local = Local {
            index,
            deque,
            lifo: Cell::new(None),
            pinned: RefCell::new(VecDeque::new()),
            watched: Cell::new(None),
            picked_remote: Cell::new(false),
            handed: Cell::new(None),
            lifo_streak: Cell::new(0),
            runnext_streak: Cell::new(0),
            rng: Cell::new(0x9E37_79B9u32.wrapping_mul(index as u32 + 1) | 1),
            last_polled: Cell::new(std::ptr::null()),
        };
        let ctx = context::Ctx { handle, worker: index, local: WorkerLocal::Fast(&local) };
        context::enter(ctx, || self.worker_loop(handle, &local));
        // Give the deque back so shutdown can drain what is left in it.
        if let Some(t) = local.lifo.take() {
            local.deque.push(t);
        }
        // The watched task: given up (a wake from now on goes through `schedule`,
        // which cancels it), or, if woken, queued for the drain.
        if let Some(woken) = local.watched.take().and_then(unwatch) {
            local.deque.push(woken);
        }
        for t in local.pinned.take() {
            local.deque.push(t);
        }
        self.deques.lock()[index] = Some(local.deque);
    }

    fn worker_loop(&self, handle: &Handle, l: &Local) {
        let mut tick: u32 = 0;
        loop {
            if handle.shutdown.load(Acquire) {
                return;
            }
            tick = tick.wrapping_add(1);
            if self.reactor.timer_due_now() {
                // A timer is due: fire it now, into this worker's queues.
                self.reactor_look();
            }
            if let Some(t) = self.next_local(l, tick) {
                self.run_task(l, t);
                continue;
            }
            // Idle: spin, then sleep. (The idle "task" runs: the next poll is a switch.)
            l.last_polled.set(std::ptr::null());
            self.idle.start_spinning(l.index);
            let found = self.spin_rounds(handle, l);
            self.idle.stop_spinning(l.index);
            if let Some(t) = found {
                // Leaving work behind: wake a sleeper unless another worker spins.
                if !l.deque.is_empty() || !self.injector.is_empty() || !self.runnext.is_empty() {
                    self.idle.notify_one();
                }
                self.run_task(l, t);
                continue;
            }
            self.idle.register(l.index);
            if handle.shutdown.load(Acquire) {
                self.idle.unregister(l.index);
                return;
            }
            // A sleeping worker watches nothing: the wakes of a watched task do not
            // wake its worker (they write no line but the task's), so from here on
            // they must queue it. Given up after the look: it may have been woken.
            if let Some(t) = self.find_work(l).or_else(|| l.give_up_watched()) {
                self.idle.unregister(l.index);
                self.run_task(l, t);
                continue;
            }
            self.stats.worker(l.index).parked();
            self.idle.sleep(l.index);
        }
    }

    /// The spinning rounds of an idle worker (registered as spinning by the caller):
    /// the task found, or `None` once `spin` has passed or at shutdown. Out of line:
    /// the idle path stays out of the dispatch loop's code.
    #[inline(never)]
    fn spin_rounds(&self, handle: &Handle, l: &Local) -> Option<Task> {
        // The clock is first read after 64 rounds (about 6 µs): most idle spells of
        // a message hand-off end sooner, and a clock reading costs about as much as
        // a round (docs/runtime.md).
        let mut start: Option<Instant> = None;
        let mut found = None;
        let mut rounds = 0u32;
        loop {
            // A round is loads of the queues' ends (`work_visible`): no fence, no
            // epoch pin, no write to a line a busy worker uses. The queues that
            // hand work to this worker every round; the other workers' deques
            // only every `SPIN_STEAL_EVERY` rounds, so that a spinner does not
            // snatch a task its owner is about to pop (a yield's requeue). The
            // full search (`find_work`) when a look shows work, and first.
            // Every `SPIN_STEAL_EVERY` rounds the reactor too (a system call, about
            // 0.5 µs): a spinner is the first to see a request, on its own thread.
            let look = rounds.is_multiple_of(SPIN_STEAL_EVERY);
            let fired = look && self.reactor.poll_now() > 0;
            if rounds == 0 || fired || self.work_visible(l, look) {
                if let Some(t) = self.find_work(l) {
                    found = Some(t);
                    break;
                }
            }
            if handle.shutdown.load(Acquire) {
                break;
            }
            rounds += 1;
            if rounds.is_multiple_of(64) && start.get_or_insert_with(Instant::now).elapsed() >= self.spin {
                break;
            }
            for _ in 0..SPIN_PAUSES {
                std::hint::spin_loop();
            }
        }
        found
    }

    /// A busy worker's look at the reactor, out of line and cold: the dispatch loop
    /// that calls it (every pick) stays as small as it was without a reactor.
    #[cold]
    #[inline(never)]
    fn reactor_look(&self) {
        self.reactor.poll_now();
    }

    fn next_local(&self, l: &Local, tick: u32) -> Option<Task> {
        if tick.is_multiple_of(GLOBAL_INTERVAL) {
            // A busy worker's look at the reactor (Tokio's `event_interval`): what
            // became ready while every worker was busy lands in this worker's queues.
            self.reactor_look();
            if let Some(t) = self.steal_global(l).or_else(|| l.pop_pinned()) {
                return Some(t);
            }
        }
        if let Some(t) = l.lifo.take() {
            let streak = l.lifo_streak.get();
            if streak < LIFO_CAP {
                l.lifo_streak.set(streak + 1);
                return Some(t);
            }
            // Look for waiting work only once per `LIFO_CAP + 1` picks (five queues,
            // about 35 instructions): nothing waits, so start a new streak.
            if l.deque.is_empty()
                && l.pinned.borrow().is_empty()
                && self.inboxes[l.index].is_empty()
                && self.homes[l.index].is_empty()
                && !self.mailboxes[l.index].is_full()
                && !l.watched_changed()
                && self.runnext.is_empty()
                && self.injector.is_empty()
            {
                l.lifo_streak.set(0);
                return Some(t);
            }
            l.queue_local(t);
        }
        l.lifo_streak.set(0);
        if let Some(t) = self.take_runnext(l) {
            return Some(t);
        }
        // Alternate between the two queues so that neither starves the other.
        if tick & 1 == 0 {
            l.deque.pop().or_else(|| l.pop_pinned())
        } else {
            l.pop_pinned().or_else(|| l.deque.pop())
        }
    }

    /// The next task of the runnext queue, unless it is empty or this worker has taken
    /// [`RUNNEXT_CAP`] from it in a row (then one ordinary pick comes first, so that a
    /// stream of outside wakes cannot starve the worker's queues).
    #[inline]
    fn take_runnext(&self, l: &Local) -> Option<Task> {
        let q = &self.runnext;
        if q.is_empty() {
            // The row of runnext picks has ended: the next wake starts a new one (a
            // probe woken now and then is never made to wait for an ordinary pick).
            l.runnext_streak.set(0);
            return None;
        }
        let streak = l.runnext_streak.get();
        if streak >= RUNNEXT_CAP {
            l.runnext_streak.set(0);
            return None;
        }
        let t = steal_one(q)?;
        l.runnext_streak.set(streak + 1);
        Some(t)
    }

    /// The task in this worker's mailbox, if any.
    #[inline]
    fn take_mailbox(&self, l: &Local) -> Option<Task> {
        // SAFETY: a worker's mailbox is taken from only by that worker while it runs
        // (here) and by `Fast::drain` after every worker has stopped.
        let t = unsafe { self.mailboxes[l.index].take() };
        l.picked_remote.set(t.is_some());
        t
    }

    fn steal_global(&self, l: &Local) -> Option<Task> {
        // Pinned arrivals one at a time: a batch would land in the stealable deque.
        // (`is_empty` first: a steal from an empty injector still costs a fence.)
        if let Some(t) = self.take_mailbox(l).or_else(|| l.take_watched()) {
            return Some(t);
        }
        let home = &self.homes[l.index];
        while !home.is_empty() {
            match home.steal() {
                Steal::Success(t) => {
                    l.picked_remote.set(true);
                    return Some(t);
                }
                Steal::Retry => continue,
                Steal::Empty => break,
            }
        }
        for q in [&self.inboxes[l.index], &self.injector] {
            while !q.is_empty() {
                match q.steal_batch_and_pop(&l.deque) {
                    Steal::Success(t) => return Some(t),
                    Steal::Retry => continue,
                    Steal::Empty => break,
                }
            }
        }
        None
    }

    /// Whether a queue this worker would search (`find_work`) shows work: a load of
    /// each queue's ends, for the spinning rounds. The queues of work handed to this
    /// worker or to anyone (runnext, home, inbox, injector) always; the other workers'
    /// deques and inboxes if `steal`. A push a look misses (not yet visible) is seen by
    /// a later round or by the search after registering as a sleeper (the protocol of
    /// `idle.rs`; loom: `idle_no_lost_wakeup_when_spinning_rounds_only_load`).
    fn work_visible(&self, l: &Local, steal: bool) -> bool {
        !self.runnext.is_empty()
            || self.mailboxes[l.index].is_full()
            || l.watched_changed()
            || !self.homes[l.index].is_empty()
            || !self.inboxes[l.index].is_empty()
            || !self.injector.is_empty()
            || (steal
                && (0..self.stealers.len())
                    .filter(|&v| v != l.index)
                    .any(|v| !self.stealers[v].is_empty() || !self.inboxes[v].is_empty()))
    }

    /// Look everywhere: own queues, the global queues, then steal from the others.
    fn find_work(&self, l: &Local) -> Option<Task> {
        if let Some(t) = l.lifo.take().or_else(|| self.take_mailbox(l)).or_else(|| l.take_watched()) {
            return Some(t);
        }
        // The runnext queue regardless of the streak: a worker about to sleep must see
        // every queue it is woken for.
        let runnext = || steal_one(&self.runnext);
        if let Some(t) = runnext().or_else(|| l.deque.pop()).or_else(|| l.pop_pinned()) {
            l.runnext_streak.set(0);
            return Some(t);
        }
        if let Some(t) = self.steal_global(l) {
            return Some(t);
        }
        let n = self.stealers.len();
        if n <= 1 {
            return None;
        }
        let mut x = l.rng.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        l.rng.set(x);
        let start = x as usize % n;
        loop {
            let mut retry = false;
            for k in 0..n {
                let v = (start + k) % n;
                if v == l.index {
                    continue;
                }
                // One victim queue at a time: a steal that succeeds must be returned.
                for s in 0..2 {
                    let r = match s {
                        0 => self.stealers[v].steal_batch_and_pop(&l.deque),
                        _ => self.inboxes[v].steal_batch_and_pop(&l.deque),
                    };
                    match r {
                        Steal::Success(t) => return Some(t),
                        Steal::Retry => retry = true,
                        Steal::Empty => {}
                    }
                }
            }
            if !retry {
                return None;
            }
        }
    }

    #[inline]
    fn run_task(&self, l: &Local, t: Task) {
        match l.picked_remote.get() {
            true => self.run_handed_over(l, t),
            false => self.run_picked::<false>(l, t, None),
        }
    }

    /// [`Fast::run_task`] of a task handed here from another thread (mailbox, home
    /// queue, watch slot): out of line, so that the dispatch of tasks woken on this
    /// worker compiles as it would without the watch slot.
    #[inline(never)]
    fn run_handed_over(&self, l: &Local, t: Task) {
        l.picked_remote.set(false);
        // A reference handed over with `t` (taken from the watch slot); released at
        // the end of the run unless the task is watched again.
        let handed = l.handed.take();
        self.run_picked::<true>(l, t, handed)
    }

    /// Poll `t` once and put it where it goes next. `REMOTE`: it was handed here from
    /// another thread, and if pinned and waiting again it is watched.
    #[inline(always)]
    fn run_picked<const REMOTE: bool>(&self, l: &Local, t: Task, handed: Option<Task>) {
        let h = t.header();
        // A pinned task taken by another worker (stolen with a batch): hand it back.
        if let Some(home) = h.home() {
            if home != l.index {
                return self.schedule_on(t, home);
            }
        }
        let started = match handed {
            Some(_) => h.state.start_poll_handed(),
            None => h.state.start_poll(),
        };
        if !started {
            return;
        }
        // No `context::set_yielded` here: the flag tells a policy worker a yield from
        // a self-wake; this worker queues both at the back of its deque and never
        // reads it (a thread-local write per poll saved).
        let id = Arc::as_ptr(&t) as *const ();
        // Lend the queue's reference to the poll's first waker clone (`task::lend`):
        // `t` stays alive through the registry (`owned`) until `unregister` below.
        lend::begin(id);
        let r = t.poll();
        let lent = lend::end();
        // From here on, if `lent`, `t` is a borrowed reference that must be forgotten.
        let t = ManuallyDrop::new(t);
        self.stats.worker(l.index).polled(1, l.last_polled.replace(id) != id);
        if r == Polled::Ready {
            self.owned.unregister(&t);
        } else if REMOTE && t.header().home().is_some() {
            // Pinned (here: `run_task` hands others back) and handed here from
            // elsewhere: watched, unless woken during its own poll (then the private
            // queue; only this worker runs it).
            let mine = match (lent, handed) {
                (true, Some(h)) => h,
                (true, None) => Task::clone(&t),
                (false, _) => ManuallyDrop::into_inner(t),
            };
            if mine.header().state.finish_pending_watched() {
                l.queue_local(mine);
            } else {
                l.watch(mine);
            }
            return;
        } else if t.header().state.finish_pending() {
            // Woken during its own poll (self-wake or yield_now): back of the queue.
            // An idle worker is told only if other work waits here too: alone, the
            // task is this worker's next pick, and a worker woken for it could only
            // take it away, moving it between the cores at every few self-wakes.
            let again = if lent { Task::clone(&t) } else { ManuallyDrop::into_inner(t) };
            if l.queue_local(again) && l.more_than_one_waiting() {
                self.idle.notify_one();
            }
            return;
        }
        if !lent {
            drop(ManuallyDrop::into_inner(t));
        }
    }
}

/// One task from `q`, if any (retrying a contended steal).
fn steal_one(q: &crossbeam_deque::Injector<Task>) -> Option<Task> {
    loop {
        match q.steal() {
            Steal::Success(t) => return Some(t),
            Steal::Retry => continue,
            Steal::Empty => return None,
        }
    }
}
