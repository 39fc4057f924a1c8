//! A policy worker: the loop that calls the policy's `schedule()`, polls the task it
//! picks (again, while the task keeps waking itself, up to a budget), runs the timer
//! tick, and idles when the policy has nothing.
//!
//! **No lost wake-up across `schedule(prev, Blocked)`**: DSS/MQS keep the running task
//! linked, so a waker must not call `wake_up` while the task is still `RUNNING` (the
//! policy would see it on the queue and do nothing, then `schedule` would unlink it).
//! The worker therefore calls `schedule(prev, Blocked)` while the task is still
//! `RUNNING` (wakes only mark it `NOTIFIED`), and only then tries `RUNNING → IDLE`; if
//! a wake came in meanwhile it calls `wake_up(prev)` itself.

use super::platform::{clear_clock_stamp, set_clock_stamp};
use super::table::TaskTable;
use super::{PolicySched, RtPlatform};
use crate::context;
use crate::scheduler::{Handle, WorkerLocal};
use crate::task::{Polled, Task, COMPLETE};
use schedlab_core::trace::Event;
use schedlab_core::{Platform, PrevState, TaskId};
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `pause` instructions between two looks at `need_resched` in the idle spin.
const IDLE_PAUSES: u32 = 4;

/// Consecutive polls of a self-waking task before the worker calls `schedule()`.
pub const POLL_BUDGET: u32 = 64;

const NO_TASK: TaskId = TaskId::MAX;

/// The timer tick at `now`, if one is due (`now ≥ next`): one tick, however many
/// periods have passed, and the next one on the tick grid after `now`; with the
/// number of periods that got no tick.
///
/// A worker sees time pass only while its thread runs. When the host keeps it off
/// its CPU (another process on the vCPU) or a poll runs past a tick, several periods
/// may be due at once. Delivering them all would charge the running
/// task a tick of its time slice for each, all at the same instant, for time in
/// which it did not run: 2.4's and O(1)'s quanta would run out after a stall, and the
/// runtime's decisions would depend on how loaded the host was, which the simulator's
/// machine does not model. Linux does the same as here: after a stalled vCPU the
/// tick handler catches `jiffies` up but calls `update_process_times` once.
pub(super) fn due_tick(now: u64, next: u64, tick_ns: u64) -> Option<(u64, u64)> {
    if now < next {
        return None;
    }
    let tick_ns = tick_ns.max(1);
    let periods = (now - next) / tick_ns + 1;
    Some((next + periods * tick_ns, periods - 1))
}

/// This thread's CPU time in ns (`CLOCK_THREAD_CPUTIME_ID`; a system call, read once
/// per tick, i.e. at most HZ times a second).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Of `periods` tick periods due at once, how many the running task earned: the
/// periods its worker thread was really on a CPU (`cpu_ns` of thread CPU time since the
/// last tick), at least the one tick that is due, at most `periods`.
///
/// A poll that computes for 30 ms is charged 30 ticks, as the kernel's timer interrupt
/// would have charged them; a worker that the host kept off its CPU for 30 ms (a
/// stolen vCPU, or a poll blocked in a system call) gets one, as Linux's tick after a
/// stolen vCPU calls `update_process_times` once.
pub(super) fn ticks_earned(cpu_ns: u64, periods: u64, tick_ns: u64) -> u64 {
    ((cpu_ns + tick_ns / 2) / tick_ns.max(1)).clamp(1, periods.max(1))
}

/// Steal time in a tick interval: of `wall_ns` that passed since the last tick, the
/// time the worker thread was neither on a CPU (`cpu_ns` of thread CPU time) nor parked
/// by its own choice (`parked_ns`, idle): the host kept it off its CPU (another process
/// on the vCPU), or a poll blocked in a system call.
///
/// Linux, as a guest, leaves such time (`steal`) out of `rq_clock_task`, the clock that
/// charges the running task (CFS's vruntime); the runtime's task clock does the same
/// ([`schedlab_core::Platform::task_clock`]), so that a stall of the worker's thread
/// is not run time of the task it was polling. Counted as run time, a 4 ms stall would
/// give that task 4 ms of vruntime, four times cfs's wake-up granularity, and every
/// wake-up on its CPU would then preempt it, on the runtime only.
pub(super) fn steal_in(wall_ns: u64, cpu_ns: u64, parked_ns: u64) -> u64 {
    wall_ns.saturating_sub(cpu_ns).saturating_sub(parked_ns)
}

thread_local! {
    /// This worker thread's CPU time at its last tick (see [`ticks_earned`]).
    static TICK_CPU: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// The clock at this worker's last tick (see [`steal_in`]).
    static TICK_WALL: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Time this worker spent parked since its last tick (see [`steal_in`]).
    static PARKED_NS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// The policy id of the task this worker is polling: the parent of what it spawns.
    static CURRENT_TASK: std::cell::Cell<TaskId> = const { std::cell::Cell::new(NO_TASK) };
}

fn set_current_task(id: TaskId) {
    CURRENT_TASK.with(|c| c.set(id))
}

/// The task the calling worker is polling, if any.
pub(super) fn current_task() -> Option<TaskId> {
    Some(CURRENT_TASK.with(|c| c.get())).filter(|&t| t != NO_TASK)
}

impl PolicySched {
    /// Run worker `me` until shutdown.
    pub fn run_worker(&self, handle: &Handle, me: usize) {
        let ctx = context::Ctx { handle, worker: me, local: WorkerLocal::Policy(Arc::as_ptr(&self.signals)) };
        context::enter(ctx, || self.worker_loop(handle, me));
    }

    fn worker_loop(&self, handle: &Handle, me: usize) {
        let p = &self.plats[me];
        let policy = self.policy();
        let need_resched = &self.signals.resched[me];
        let mut idle_since: Option<Instant> = None;
        clear_clock_stamp();
        let mut next_tick = p.now() + self.tick_ns;
        TICK_CPU.set(thread_cpu_ns());
        TICK_WALL.set(p.now());
        PARKED_NS.set(0);
        self.signals.next_tick[me].store(next_tick, Relaxed);
        self.signals.first_tick[me].store(next_tick, Relaxed);
        let mut prev: Option<TaskId> = None;
        let mut prev_state = PrevState::Runnable;
        let stats = self.signals.stats.worker(me);
        let mut last_polled: Option<TaskId> = None;
        // How `last_polled` left the worker (the `prev_state` of the next switch).
        let mut last_state = PrevState::Runnable;
        // The task whose `schedule(.., Blocked)` still has to be finished (its place in
        // `recent`, which keeps it until the next `Recent::get`).
        let mut blocked: Option<usize> = None;
        let mut recent = Recent::default();
        // Tracing: every recording point below tests this once (`crate::trace`).
        let tr = self.signals.trace.as_deref();
        let here = Some(me);
        loop {
            if handle.shutdown.load(Acquire) {
                // Leave the policy consistent: the last task leaves this CPU.
                if prev.is_some() {
                    policy.schedule(p, prev, prev_state);
                }
                if let (Some(tr), Some(_)) = (tr, last_polled) {
                    tr.push(here, tr.now(), Event::Switch { prev: last_polled, next: None, prev_state: last_state });
                }
                if let Some(i) = blocked.take() {
                    recent.task(i).header().state.finish_pending();
                }
                clear_clock_stamp();
                return;
            }
            // The request is taken before `schedule()` (a request after this stays set
            // for the next pass).
            need_resched.clear();
            let called_with = (prev, prev_state);
            let next = policy.schedule(p, prev, prev_state);
            stats.scheduled();
            if let Some(i) = blocked.take() {
                let t = recent.task(i);
                if t.header().state.finish_pending() {
                    // Woken while we were unlinking it: it is off every queue now.
                    // (Its waker is not known here: the wake only marked it.)
                    let id = t.header().id.load(Relaxed);
                    stats.woke();
                    match tr {
                        None => policy.wake_up(p, id, false),
                        Some(tr) => self.traced_wake(tr, p, here, id, None),
                    }
                }
            }
            recent.sweep_one();
            if let (Some(id), PrevState::Exited) = (prev, prev_state) {
                recent.forget(id);
                self.release(id, me);
            }
            prev = None;
            prev_state = PrevState::Runnable;
            // The policy calls of this pass are done: polls and idling read the clock.
            clear_clock_stamp();
            let Some(id) = next else {
                if let (Some(tr), Some(_)) = (tr, last_polled) {
                    tr.push(here, tr.now(), Event::Switch { prev: last_polled, next: None, prev_state: last_state });
                }
                last_polled = None;
                // Nothing to run: hold no task alive meanwhile.
                recent.clear();
                self.idle(p, me, &mut next_tick, &mut idle_since, handle);
                continue;
            };
            idle_since = None;
            let slot = recent.get(&self.table, id);
            let task = recent.task(slot);
            let h = task.header();
            if !h.state.start_poll() {
                prev = Some(id);
                if h.state.load() == COMPLETE {
                    // Cancelled (shutdown race): treat as exited.
                    prev_state = PrevState::Exited;
                } else {
                    // The policy returned a task that is not runnable: a policy bug
                    // (one was found this way in MQS's schedule_tail). Unlink it as
                    // blocked so that it stays alive and a later wake finds it; count it.
                    debug_assert!(
                        false,
                        "worker {me}: policy picked task {id} in state {} (schedule called with {:?})",
                        h.state.load(),
                        called_with
                    );
                    stats.bad_pick();
                    prev_state = PrevState::Blocked;
                }
                continue;
            }
            if let Some(tr) = tr {
                if last_polled != Some(id) {
                    let now = tr.now();
                    tr.push(here, now, Event::Switch { prev: last_polled, next: Some(id), prev_state: last_state });
                    if let Some(from) = tr.dispatched(id, me) {
                        tr.push(here, now, Event::Migrate { task: id, from, to: me as u32 });
                    }
                }
            }
            set_current_task(id);
            let mut polls = 0u32;
            prev = Some(id);
            loop {
                context::set_yielded(false);
                let r = task.poll();
                polls += 1;
                // A fresh reading: a self-woken task's next poll must not see the stamp.
                let now = p.read_clock();
                set_clock_stamp(now);
                if let Some((next, skipped)) = due_tick(now, next_tick, self.tick_ns) {
                    let cpu = thread_cpu_ns();
                    let ran = cpu.saturating_sub(TICK_CPU.replace(cpu));
                    // Before the tick's accounting: its task clock leaves the stall out.
                    let wall = now.saturating_sub(TICK_WALL.replace(now));
                    let stolen = steal_in(wall, ran, PARKED_NS.replace(0));
                    if stolen > 0 {
                        self.signals.steal[me].fetch_add(stolen, Relaxed);
                        stats.stolen(stolen);
                    }
                    let earned = ticks_earned(ran, skipped + 1, self.tick_ns);
                    for _ in 0..earned {
                        if policy.tick(p, Some(id)) {
                            need_resched.request_own();
                        }
                    }
                    policy.balance(p);
                    stats.ticked(earned, skipped + 1 - earned);
                    next_tick = next;
                    self.signals.next_tick[me].store(next_tick, Relaxed);
                    // A busy worker's look at the reactor, once per tick.
                    self.reactor.poll_now();
                } else if self.reactor.timer_due(self.signals.start, now) {
                    // A timer is due: fire it now, not at the next tick.
                    self.reactor.poll_now();
                }
                if r == Polled::Ready {
                    prev_state = PrevState::Exited;
                    if let Some(tr) = tr {
                        tr.push(here, tr.now(), Event::Exit { task: id });
                    }
                    break;
                }
                // `sched_yield`: the policy sets this worker's `need_resched` if other
                // tasks are pending; otherwise the task runs on like a self-wake.
                if context::take_yielded() && h.state.is_notified() {
                    policy.yield_now(p, id);
                }
                if h.state.is_notified() {
                    h.state.requeue();
                    if polls < POLL_BUDGET && !need_resched.is_set() && !handle.shutdown.load(Relaxed) {
                        let ok = h.state.start_poll();
                        debug_assert!(ok);
                        continue;
                    }
                    break;
                }
                prev_state = PrevState::Blocked;
                // The worker is done with it until `schedule` has unlinked it.
                blocked = Some(slot);
                break;
            }
            set_current_task(NO_TASK);
            stats.polled(u64::from(polls), last_polled != Some(id));
            last_polled = Some(id);
            last_state = prev_state;
        }
    }

    /// Nothing to run: wait for `need_resched`, as 2.4's idle loop does (`while
    /// (!need_resched) idle();` then `schedule()`): spin on the flag for `spin` since
    /// the worker went idle, then park until the next tick or an unpark. Ticks of an
    /// idle CPU run here (`tick(None)` + `balance`). Returns when the flag is set (or at
    /// shutdown), never merely because time passed: an idle worker does not call
    /// `schedule()` on its own, so it takes no run-queue lock while it waits (an idle
    /// worker that called `schedule()` every 2,048 `pause`s of its spin and after every
    /// park would hold the lock against the busy worker's wake-ups and switches: 0.5–1.8 µs
    /// of lock wait per acquisition in a cross-worker ping-pong, where the simulator's
    /// idle CPU sleeps until its IPI). A policy that wants an idle CPU to look again
    /// (a wake-up placed there, a failed trylock, a balancer's pull) `resched`s it, on
    /// both engines.
    fn idle(&self, p: &RtPlatform, me: usize, next_tick: &mut u64, idle_since: &mut Option<Instant>, handle: &Handle) {
        let policy = self.policy();
        let need_resched = &self.signals.resched[me];
        let since = *idle_since.get_or_insert_with(Instant::now);
        let wanted = || need_resched.is_set_acquire() || handle.shutdown.load(Acquire);
        loop {
            let now = p.now();
            if let Some((next, skipped)) = due_tick(now, *next_tick, self.tick_ns) {
                // As the simulator's idle tick: a `true` from `tick` asks for `schedule`.
                if policy.tick(p, None) {
                    need_resched.request_own();
                }
                policy.balance(p);
                // Idle: one tick (an idle CPU's ticks charge nobody); the CPU time
                // and steal baselines move on so that the next task is charged its own
                // time only (steal while idle is nobody's run time).
                TICK_CPU.set(thread_cpu_ns());
                TICK_WALL.set(now);
                PARKED_NS.set(0);
                self.signals.stats.worker(me).ticked(1, skipped);
                *next_tick = next;
                self.signals.next_tick[me].store(*next_tick, Relaxed);
            }
            if wanted() {
                return;
            }
            if since.elapsed() < self.spin {
                // Poll the flag often (a `pause` is ~65 cycles on Zen, ~140 on Skylake):
                // every spin between checks adds to the wake-up latency of this CPU.
                for i in 0..512 {
                    // Every 64 looks (~10 µs) the reactor too: what it fires is woken
                    // here (a `wake_up` on this CPU), which may set this worker's flag.
                    if i % 64 == 0 {
                        self.reactor.poll_now();
                    }
                    if wanted() {
                        return;
                    }
                    for _ in 0..IDLE_PAUSES {
                        std::hint::spin_loop();
                    }
                }
                continue;
            }
            let now = p.now();
            if now < *next_tick
                && !handle.shutdown.load(Acquire)
                && need_resched.sleep_unless_requested(Some(Duration::from_nanos(*next_tick - now)))
            {
                self.signals.stats.worker(me).parked();
                // Parked by choice: not steal (read once per park, after ≥ 50 µs of spin).
                PARKED_NS.set(PARKED_NS.get() + p.now().saturating_sub(now));
            }
        }
    }
}

/// How many tasks a worker keeps references to ([`Recent`]): the two of a hand-off.
/// (4 measures 15–19 % slower on MQS hackbench, `bench --only hackbench`:
/// many tasks, so the extra entries only hold references longer, never hit.)
const RECENT: usize = 2;

/// The tasks this worker polled last, with the table generation they were read at:
/// picking one of them again costs one atomic load (the slot's generation) instead of
/// the table's lock, a reference-count increment, the unlock and the decrement after
/// the poll (four locked operations per poll: a message hand-off between two tasks
/// picks the same two over and over).
///
/// A reference here keeps a task's cell (and an output nobody awaits) alive, so
/// finished tasks leave promptly: forgotten at release by this worker, swept (one
/// entry per pass) once complete when they finished on another worker, and all
/// dropped when the worker goes idle. (`tests/wakers.rs` checks the output is freed.)
#[derive(Default)]
struct Recent {
    slots: [Option<(TaskId, u64, Task)>; RECENT],
    next: usize,
    sweep: usize,
}

impl Recent {
    /// The place of task `id` in the cache, reading it from `table` if it is not there
    /// or its slot has been given to another task since.
    #[inline]
    fn get(&mut self, table: &TaskTable, id: TaskId) -> usize {
        let gen = table.generation(id);
        for (i, s) in self.slots.iter().enumerate() {
            if matches!(s, Some((t, g, _)) if *t == id && *g == gen) {
                return i;
            }
        }
        self.fill(table, id)
    }

    #[inline(never)]
    fn fill(&mut self, table: &TaskTable, id: TaskId) -> usize {
        let (task, gen) = table.get(id);
        // A stale entry for this id goes first; else round robin.
        let i = self.slots.iter().position(|s| matches!(s, Some((t, _, _)) if *t == id)).unwrap_or_else(|| {
            let i = self.next;
            self.next = (i + 1) % RECENT;
            i
        });
        // The evicted reference may be the last one: dropped here, outside the table.
        self.slots[i] = Some((id, gen, task));
        i
    }

    #[inline]
    fn task(&self, i: usize) -> &Task {
        &self.slots[i].as_ref().expect("a filled place").2
    }

    /// Drop one entry, in turn, if its task has finished (elsewhere).
    #[inline]
    fn sweep_one(&mut self) {
        let i = self.sweep;
        self.sweep = (i + 1) % RECENT;
        if matches!(&self.slots[i], Some((_, _, t)) if t.header().state.load() == COMPLETE) {
            self.slots[i] = None;
        }
    }

    fn clear(&mut self) {
        if self.slots.iter().any(Option::is_some) {
            self.slots = Default::default();
        }
    }

    /// Task `id` exited: drop the reference now rather than at eviction.
    fn forget(&mut self, id: TaskId) {
        for s in self.slots.iter_mut() {
            if matches!(s, Some((t, _, _)) if *t == id) {
                *s = None;
            }
        }
    }
}

#[cfg(test)]
mod tick_tests {
    use super::due_tick;

    #[test]
    fn one_tick_per_stall_on_the_grid() {
        assert_eq!(due_tick(9, 10, 10), None);
        // On time: the next period, nothing skipped.
        assert_eq!(due_tick(10, 10, 10), Some((20, 0)));
        assert_eq!(due_tick(19, 10, 10), Some((20, 0)));
        // Three periods late: one tick, two skipped, and the grid is kept.
        assert_eq!(due_tick(35, 10, 10), Some((40, 2)));
        assert_eq!(due_tick(40, 10, 10), Some((50, 3)));
    }

    #[test]
    fn steal_is_the_time_neither_running_nor_parked() {
        use super::steal_in;
        // On a CPU throughout: no steal.
        assert_eq!(steal_in(1_000_000, 1_000_000, 0), 0);
        // Thread CPU time a little ahead of the clock readings: none either.
        assert_eq!(steal_in(1_000_000, 1_000_100, 0), 0);
        // 4 ms off the CPU in a 5 ms interval, 0.5 ms of it parked.
        assert_eq!(steal_in(5_000_000, 1_000_000, 500_000), 3_500_000);
        // Parked the whole interval: not steal.
        assert_eq!(steal_in(5_000_000, 10_000, 4_990_000), 0);
    }

    #[test]
    fn a_late_tick_charges_the_periods_the_thread_ran() {
        use super::ticks_earned;
        // Off the CPU the whole time: one tick.
        assert_eq!(ticks_earned(0, 30, 1_000_000), 1);
        // Computed through all 30 periods: 30 ticks, never more than are due.
        assert_eq!(ticks_earned(30_000_000, 30, 1_000_000), 30);
        assert_eq!(ticks_earned(90_000_000, 30, 1_000_000), 30);
        // Ran for 12.4 of them.
        assert_eq!(ticks_earned(12_400_000, 30, 1_000_000), 12);
    }
}
