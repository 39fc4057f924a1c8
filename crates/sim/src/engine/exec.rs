//! Tasks executing their programs: the per-task state, spawning and waking, and the
//! execution of one operation at a time, including the channels messages travel on.
//!
//! A task steps through its program with the [`Cursor`] the real-runtime interpreter
//! uses too. An operation is fetched when the CPU gets to it and the cursor advances
//! only when the operation completes: a compute segment cut short by an interrupt
//! resumes with its remaining time, and a receive that blocked is fetched again (and
//! does not pay the syscall again) when its task runs after the wake-up.

use super::{Engine, Mode};
use crate::events::Kind;
use rand::Rng;
use schedlab_core::trace::Event;
use schedlab_core::{CpuId, CpuMask, Platform, PrevState, TaskId, TaskParams};
use schedlab_workloads::{ChanId, Cursor, Op, ProgId};
use std::collections::VecDeque;

/// "No CPU yet" in [`TaskRt::last_cpu`].
pub(super) const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TState {
    Runnable,
    Running,
    Blocked,
    Sleeping,
    Exited,
}

#[derive(Clone, Debug)]
pub(super) struct TaskRt {
    /// Position in the engine's flattened op array, within this task's program. Stale
    /// while the task runs: its CPU's entry holds the cursor then (`CpuRt::cursor`).
    pub(super) cursor: Cursor,
    pub(super) state: TState,
    /// Remaining ns of the current compute op (0 = not started).
    pub(super) compute_left: u64,
    /// Woken but not yet dispatched since this time (NONE-like: u64::MAX).
    pub(super) woke_at: u64,
    /// Runnable but not running since this time (woken, forked or preempted; u64::MAX
    /// while running or blocked).
    pub(super) ready_at: u64,
    /// Time of the task's latest send (a request, for response times).
    pub(super) last_send: u64,
    /// The task's role, in the engine's numbering ([`Engine::role_of`]).
    pub(super) role: u32,
    pub(super) last_cpu: u32,
    pub(super) mm: u32,
    /// Blocked inside a receive: resumes without re-entering the syscall.
    pub(super) in_recv: bool,
    /// Woken by a send between its receive's registration and the `schedule()` that
    /// blocks it (`finish_block` wakes it).
    pub(super) notified: bool,
    /// The CPU whose wake-up made the task runnable, until it is dispatched (NONE
    /// otherwise): a dispatch elsewhere pulls the task's header line from there.
    pub(super) woke_on: u32,
}

/// A message channel. Messages carry no data, so a count of the queued ones is enough
/// (with the size of the latest sent, which a receive is charged for).
#[derive(Clone, Debug, Default)]
pub(super) struct Chan {
    pub(super) pending: u64,
    bytes: u32,
    /// Tasks blocked in a receive on this channel, woken in arrival order.
    waiters: VecDeque<TaskId>,
    /// The CPU of the latest send: a receive elsewhere pulls the message's lines.
    sent_on: Option<CpuId>,
    /// The CPU of the latest send or receive: a send elsewhere pulls the channel's
    /// lines back (`chan_send_xcpu_ns`).
    touched_on: Option<CpuId>,
    /// A send blocks while this many messages wait unread (`u64::MAX`: unbounded;
    /// `schedlab_workloads::buffers`).
    pub(super) max: u64,
    /// A receive that leaves at most this many wakes every blocked sender.
    pub(super) wake_at: u64,
    /// Tasks blocked in a send on this channel (all woken at once, as the kernel's
    /// non-exclusive wait on socket write space wakes them).
    senders: Vec<TaskId>,
}

impl Chan {
    /// A channel bounded by `limit` (`None`: unbounded).
    pub(super) fn new(limit: Option<schedlab_workloads::Limit>) -> Chan {
        let (max, wake_at) = limit.map_or((u64::MAX, 0), |l| (l.max as u64, l.wake_at as u64));
        Chan { max, wake_at, ..Chan::default() }
    }
}

impl Engine<'_> {
    /// Create a task running program `prog` and wake it.
    pub(super) fn spawn(&mut self, prog: ProgId, mut params: TaskParams, parent: Option<TaskId>) -> TaskId {
        let id = self.tasks.len() as TaskId;
        let bind = self.bind_cpu[prog as usize];
        if bind != NONE {
            params.cpus_allowed = CpuMask::single(bind as CpuId);
        }
        let role = self.role_of[prog as usize];
        self.rec.task_of_role(role as usize);
        self.plat.alloc_task_struct(id);
        self.tasks.push(TaskRt {
            cursor: Cursor::at(self.prog_start[prog as usize], self.prog_start[prog as usize + 1]),
            state: TState::Blocked,
            compute_left: 0,
            woke_at: u64::MAX,
            ready_at: u64::MAX,
            last_send: 0,
            role,
            last_cpu: NONE,
            mm: params.mm,
            in_recv: false,
            notified: false,
            woke_on: NONE,
        });
        // Kept apart from TaskRt: read once per compute, and TaskRt stays one host line.
        self.task_ws.push(self.ws_lines_of[prog as usize]);
        self.live += 1;
        self.peak_live = self.peak_live.max(self.live);
        self.plat.trace(|| Event::Fork { parent, child: id });
        self.policy.task_new(&self.plat, id, &params, parent);
        self.wake(id, parent);
        id
    }

    /// Make a blocked or new task runnable through the policy (`waker`: the task
    /// whose action woke it, for the trace).
    pub(super) fn wake(&mut self, task: TaskId, waker: Option<TaskId>) {
        let t = &mut self.tasks[task as usize];
        if t.state == TState::Running {
            // Between a receive's registration and its `schedule()` (`finish_block`).
            t.notified = true;
            return;
        }
        debug_assert!(matches!(t.state, TState::Blocked | TState::Sleeping));
        t.state = TState::Runnable;
        t.woke_at = self.plat.cursor();
        t.ready_at = t.woke_at;
        let (at, cpu) = (t.woke_at, self.plat.this_cpu());
        // The waker's write of the task's run state: a line the task's last CPU holds.
        let remote = t.last_cpu != NONE && t.last_cpu as usize != cpu;
        t.woke_on = cpu as u32;
        if remote {
            // The runtime's wake-up is a CAS on that header: a locked instruction.
            self.plat.locked_op(self.plat.cost.wake_transfer_ns);
        }
        self.runnable_or_running += 1;
        if !self.plat.tracing() {
            self.policy.wake_up(&self.plat, task, false);
            return;
        }
        let before = self.plat.resched_pending().borrow().len();
        self.policy.wake_up(&self.plat, task, false);
        let target = self.plat.resched_pending().borrow()[before..].last().map(|&(c, _)| c as u32);
        self.plat.trace_at(at, cpu, || Event::Wakeup { task, waker, target });
    }

    /// What the benchmark's stop leaves unfinished. A task still waiting to run has
    /// waited at least this long: its wait counts with its length so far (a task
    /// starved to the end of the measurement is the longest wait of all, not none).
    /// Every request still unanswered (its client blocked in the receive of a timed,
    /// counted channel) that is already older than the workload's time-out is one its
    /// client has reported as an error.
    fn close_at_stop(&mut self, now: u64) {
        for (id, t) in self.tasks.iter().enumerate() {
            if t.ready_at != u64::MAX {
                self.rec.ready_wait(t.role as usize, id as TaskId, now - t.ready_at);
            }
        }
        let Some(timeout) = self.w.metric.timeout_ns else { return };
        for (c, ch) in self.chans.iter().enumerate() {
            if self.w.metric.counted[c] {
                for &t in &ch.waiters {
                    self.rec.outstanding(now - self.tasks[t as usize].last_send, timeout);
                }
            }
        }
    }

    /// The running `task` blocks in a receive (it is on its channel's waiters):
    /// `schedule()` it out.
    pub(super) fn block(&mut self, cpu: CpuId, task: TaskId) {
        self.tasks[task as usize].state = TState::Blocked;
        self.runnable_or_running -= 1;
        self.schedule(cpu, PrevState::Blocked);
    }

    /// The deferred half of a blocking receive (see `exec`'s `Recv`): `schedule()` the
    /// task out, then, if a send found it meanwhile, wake it from here (the runtime's
    /// worker calls `wake_up(prev)` itself after a wake raced with the block).
    pub(super) fn finish_block(&mut self, cpu: CpuId) {
        self.cpus[cpu].blocking = false;
        let task = self.cpus[cpu].curr.expect("a blocking receive on an idle CPU");
        self.block(cpu, task);
        if std::mem::take(&mut self.tasks[task as usize].notified) {
            self.wake(task, None);
            self.handle_resched(cpu);
        }
    }

    /// Move `cpu`'s running task past its current operation, which has completed.
    #[inline]
    pub(super) fn advance_pc(&mut self, cpu: CpuId) {
        self.cpus[cpu].cursor.advance();
    }

    /// An operation completed: a runtime reads the clock at its preemption point
    /// there (`clock_read_ns`, 0 on the kernel presets).
    #[inline]
    pub(super) fn op_done(&mut self) {
        self.plat.advance(self.plat.cost.clock_read_ns);
    }

    /// A receive by `reader` freed enough of `chan`: wake every sender blocked on it
    /// (each executes its send again, and blocks again if others refilled it first).
    fn wake_senders(&mut self, chan: ChanId, reader: TaskId) {
        let senders = std::mem::take(&mut self.chans[chan as usize].senders);
        let cpu = self.plat.this_cpu();
        for &s in &senders {
            if self.tasks[s as usize].last_cpu as usize != cpu {
                self.plat.advance(self.plat.cost.notify_xcpu_ns);
            }
            self.plat.set_in_task_op(true);
            self.wake(s, Some(reader));
            self.plat.set_in_task_op(false);
        }
        // The list's storage is kept for the next time this channel fills.
        let mut senders = senders;
        senders.clear();
        self.chans[chan as usize].senders = senders;
        self.handle_resched(cpu);
    }

    /// Execute the running task's next operation.
    pub(super) fn exec(&mut self, cpu: CpuId) {
        let task = self.cpus[cpu].curr.expect("exec on an idle CPU");
        // The running task's cursor is its CPU's while it runs (`CpuRt::cursor`).
        let op = self.cpus[cpu].cursor.fetch(&self.ops);
        let cost = &self.plat.cost;
        match op {
            Op::Compute { .. } | Op::ComputeUniform { .. } => {
                let t = &self.tasks[task as usize];
                let ns = if t.compute_left > 0 {
                    t.compute_left
                } else {
                    let cycles = match op {
                        Op::Compute { cycles } => cycles,
                        Op::ComputeUniform { min, max } => self.rng.gen_range(min..=max.max(min)),
                        _ => unreachable!(),
                    };
                    // The task works through its memory first: misses add to the burst.
                    let ws = self.task_ws[task as usize];
                    let touched = if ws > 0 { self.plat.touch_working_set(task, ws as usize) } else { 0 };
                    self.plat.cost.compute_ns(cycles).max(1) + touched
                };
                self.tasks[task as usize].compute_left = ns;
                self.cpus[cpu].mode = Mode::User;
                let at = self.plat.cursor() + ns;
                self.arm(cpu, at);
            }
            Op::Send { chan, bytes } => {
                let ch = &mut self.chans[chan as usize];
                if ch.pending >= ch.max {
                    // Full: the writer sleeps in the syscall until a receive frees
                    // enough (`sock_alloc_send_pskb`'s wait for write space), then
                    // executes the send again.
                    self.plat.advance(cost.syscall_ns + cost.recv_block_ns);
                    ch.senders.push(task);
                    self.rec.send_blocks += 1;
                    self.block(cpu, task);
                    return;
                }
                let remote = ch.touched_on.is_some_and(|c| c != cpu);
                let ns = cost.send_ns(bytes) + if remote { cost.chan_send_xcpu_ns } else { 0 };
                self.plat.advance(ns);
                self.rec.sent += 1;
                self.tasks[task as usize].last_send = self.plat.cursor();
                // `ch` is still the channel indexed above: one bounds check per send.
                ch.pending += 1;
                ch.bytes = bytes;
                ch.sent_on = Some(cpu);
                ch.touched_on = Some(cpu);
                if let Some(waiter) = ch.waiters.pop_front() {
                    // The receiver's listener lives on the CPU it blocked on.
                    if self.tasks[waiter as usize].last_cpu as usize != cpu {
                        self.plat.advance(self.plat.cost.notify_xcpu_ns);
                    }
                    self.plat.set_in_task_op(true);
                    self.wake(waiter, Some(task));
                    self.plat.set_in_task_op(false);
                    self.handle_resched(cpu);
                }
                self.advance_pc(cpu);
                self.op_done();
                let at = self.plat.cursor();
                self.arm(cpu, at);
            }
            Op::Recv { chan } => {
                let t = &mut self.tasks[task as usize];
                if !t.in_recv {
                    self.plat.advance(cost.syscall_ns);
                }
                let ch = &mut self.chans[chan as usize];
                if ch.pending > 0 {
                    ch.pending -= 1;
                    let bytes = ch.bytes;
                    let remote = ch.sent_on.is_some_and(|c| c != cpu);
                    ch.touched_on = Some(cpu);
                    // `t` and `ch` stay borrowed (disjoint fields): one bounds check each
                    // per receive.
                    t.in_recv = false;
                    self.plat.advance(self.plat.cost.recv_ns(bytes));
                    if remote {
                        self.plat.advance(self.plat.cost.chan_recv_xcpu_ns);
                    }
                    self.rec.received += 1;
                    if !ch.senders.is_empty() && ch.pending <= ch.wake_at {
                        self.wake_senders(chan, task);
                    }
                    let t = &mut self.tasks[task as usize];
                    if self.w.metric.counted[chan as usize] {
                        self.rec.completed += 1;
                        if let Some(timeout) = self.w.metric.timeout_ns {
                            let ns = self.plat.cursor() - t.last_send;
                            self.rec.response(ns, timeout);
                        }
                    }
                    self.advance_pc(cpu);
                    self.op_done();
                    let at = self.plat.cursor();
                    self.arm(cpu, at);
                } else {
                    let remote = ch.sent_on.is_some_and(|c| c != cpu);
                    self.plat.advance(self.plat.cost.recv_block_ns);
                    if remote {
                        self.plat.advance(self.plat.cost.recv_register_xcpu_ns);
                    }
                    ch.waiters.push_back(task);
                    t.in_recv = true;
                    if self.plat.cost.recv_block_ns > 0 {
                        // A runtime's receive registers its listener (`recv_block_ns`),
                        // then its worker calls `schedule()`: a step of its own, so
                        // that this `schedule()` takes its run-queue lock at its own
                        // instant, after other CPUs' events that come earlier (an
                        // IPI'd CPU's `schedule()`), not ahead of them. Until then the
                        // task is still running; a send meanwhile only marks it
                        // (`wake`), as the runtime's NOTIFIED state does, and `step`
                        // wakes it after the `schedule()`. (0 on the kernel presets:
                        // there the block and `schedule()` stay one step.)
                        self.cpus[cpu].blocking = true;
                        let at = self.plat.cursor();
                        self.arm(cpu, at);
                    } else {
                        self.block(cpu, task);
                    }
                }
            }
            Op::Sleep { ns } => {
                self.plat.advance(cost.syscall_ns);
                self.advance_pc(cpu);
                self.tasks[task as usize].state = TState::Sleeping;
                self.runnable_or_running -= 1;
                self.sleeping += 1;
                self.q.push(self.plat.cursor() + ns, Kind::Wake { task });
                self.schedule(cpu, PrevState::Blocked);
            }
            Op::Yield => {
                // `schedule()` follows only if the policy set `need_resched` (it does
                // when other tasks are pending), at the return to user mode.
                self.plat.advance(cost.syscall_ns);
                self.plat.set_in_task_op(true);
                self.policy.yield_now(&self.plat, task);
                self.plat.set_in_task_op(false);
                self.handle_resched(cpu);
                self.advance_pc(cpu);
                self.op_done();
                let at = self.plat.cursor();
                self.arm(cpu, at);
            }
            Op::Spawn { program, params } => {
                self.plat.advance(cost.fork_ns);
                // Every block in use: the new task's is one no task touched before.
                if self.live == self.peak_live && cost.task_block_fresh_ns > 0 {
                    self.plat.advance(cost.task_block_fresh_ns);
                }
                self.advance_pc(cpu);
                self.plat.set_in_task_op(true);
                self.spawn(program, params, Some(task));
                self.plat.set_in_task_op(false);
                self.handle_resched(cpu);
                self.op_done();
                let at = self.plat.cursor();
                self.arm(cpu, at);
            }
            Op::StartClock | Op::StopClock => {
                // The benchmark reads its clock, `gettimeofday`: a system call (2.4
                // reads the TSC in the kernel). The first start time is kept; the first
                // end time ends the run (`run` processes no event after it).
                self.plat.advance(cost.syscall_ns);
                self.advance_pc(cpu);
                let now = self.plat.cursor();
                if op == Op::StartClock {
                    if self.clock_start.is_none() {
                        self.clock_start = Some(now);
                        self.rec.completed_at_start = self.rec.completed;
                    }
                } else if !self.stopped {
                    self.stopped = true;
                    self.end_time = now;
                    self.close_at_stop(now);
                }
                self.op_done();
                let at = self.plat.cursor();
                self.arm(cpu, at);
            }
            Op::Exit => {
                self.plat.advance(cost.exit_ns);
                self.tasks[task as usize].state = TState::Exited;
                self.runnable_or_running -= 1;
                self.live -= 1;
                self.end_time = self.plat.cursor();
                self.plat.trace(|| Event::Exit { task });
                self.schedule(cpu, PrevState::Exited);
            }
            Op::Loop { .. } => unreachable!("Cursor::fetch enters loops"),
        }
    }
}
