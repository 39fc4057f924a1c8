//! The discrete-event engine: CPUs, tasks running their programs, channels, the timer
//! tick and reschedule IPIs, in integer-nanosecond virtual time.
//!
//! A CPU is idle, in the kernel (between operations; its next step is scheduled at the
//! time the current operation's cost runs out) or in user mode (a compute segment
//! whose end is an event). Interrupts — the timer tick and reschedule IPIs — preempt
//! user mode at once; in the kernel they take effect at the next operation boundary
//! (2.4's kernel is not preemptive; `need_resched` is checked on return to user).
//! Every scheduling decision is the policy's: the engine only calls it and executes
//! the outcome (context switch, IPI delivery).

use crate::cost::CostModel;
use crate::events::{EventQueue, Kind};
use crate::machine::Machine;
use crate::platform::SimPlatform;
use crate::report::{round3, Latency, QueueLen, Report, RqSeries};
use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_core::{BuildEnv, CpuId, Policy, PolicySource, PrevState, TaskId, Topology};
use schedlab_workloads::{Op, Workload};
use std::collections::VecDeque;
use std::fmt;

/// Simulation options.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    /// Give up (error) when virtual time passes this.
    pub max_virtual_ns: u64,
    /// Check the policy's invariants and the engine's conservation laws after every event (slow).
    pub check_invariants: bool,
    /// Record every run queue's length at most once per this many virtual ns (sampled
    /// at CPU 0's timer ticks) into [`Report::rq_series`]; `None` = off.
    pub rq_series_interval_ns: Option<u64>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            max_virtual_ns: 3_600 * 1_000_000_000,
            check_invariants: false,
            rq_series_interval_ns: None,
        }
    }
}

/// Run-queue length samples being collected (flat, row-major: one row of
/// `queues` lengths per sample; only amortised pushes in the event loop).
#[derive(Debug)]
struct SeriesBuf {
    interval: u64,
    next_at: u64,
    t_ns: Vec<u64>,
    lens: Vec<u32>,
    stddev: Vec<f64>,
}

/// Why a simulation could not complete.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    /// The workload description is malformed.
    Workload(String),
    /// The policy spec does not fit the machine (e.g. a PMQS pool size that does not
    /// divide the CPU count).
    Policy(String),
    /// Live tasks remain but nothing can ever make progress.
    Deadlock(String),
    /// Virtual-time limit reached.
    TimeLimit(u64),
    /// A policy or engine invariant broke (a bug).
    Invariant(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Workload(s) => write!(f, "invalid workload: {s}"),
            SimError::Policy(s) => write!(f, "invalid policy: {s}"),
            SimError::Deadlock(s) => write!(f, "simulation cannot progress: {s}"),
            SimError::TimeLimit(ns) => {
                write!(f, "virtual-time limit of {:.3} s reached before the workload finished", *ns as f64 / 1e9)
            }
            SimError::Invariant(s) => write!(f, "invariant violated: {s}"),
        }
    }
}
impl std::error::Error for SimError {}

const NONE: u32 = u32::MAX;
/// "No event pending" in a CPU's event slots.
const NEVER: u64 = u64::MAX;
/// Deepest loop nesting a program may use (checked before the run).
const MAX_LOOP_DEPTH: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TState {
    Runnable,
    Running,
    Blocked,
    Sleeping,
    Exited,
}

#[derive(Clone, Copy, Debug, Default)]
struct LoopFrame {
    start: u32,
    end: u32,
    left: u32,
}

#[derive(Clone, Debug)]
struct TaskRt {
    /// Absolute index into the engine's flattened op array, and the program's end.
    pc: u32,
    end: u32,
    loops: [LoopFrame; MAX_LOOP_DEPTH],
    depth: u8,
    state: TState,
    /// Remaining ns of the current compute op (0 = not started).
    compute_left: u64,
    /// Woken but not yet dispatched since this time (NONE-like: u64::MAX).
    woke_at: u64,
    last_cpu: u32,
    mm: u32,
    /// Blocked inside a receive: resumes without re-entering the syscall.
    in_recv: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Idle,
    Kernel,
    User,
}

#[derive(Clone, Debug)]
struct CpuRt {
    curr: Option<TaskId>,
    mode: Mode,
    need_resched: bool,
    ipi_pending: bool,
    tick_pending: bool,
    /// Time of the pending step (end of a compute segment in user mode); NEVER if none.
    step_at: u64,
    tick_at: u64,
    ipi_at: u64,
    loaded_mm: u32,
    idle_since: u64,
    idle_ns: u64,
}

#[derive(Clone, Debug, Default)]
struct Chan {
    pending: u64,
    bytes: u32,
    waiters: VecDeque<TaskId>,
}

struct Engine<'w> {
    w: &'w Workload,
    plat: SimPlatform,
    policy: Box<dyn Policy<SimPlatform>>,
    cpus: Vec<CpuRt>,
    node_of: Vec<usize>,
    tasks: Vec<TaskRt>,
    chans: Vec<Chan>,
    /// Every program's ops, concatenated (one contiguous array: the event loop reads
    /// a different task's program at nearly every event), and each program's start.
    ops: Vec<Op>,
    prog_start: Vec<u32>,
    /// Earliest pending event of each CPU: min(step_at, tick_at, ipi_at).
    next_at: Vec<u64>,
    /// Sleep timers (the only events not tied to a CPU slot).
    q: EventQueue,
    rng: ChaCha8Rng,
    resched_buf: Vec<CpuId>,
    check: bool,
    // accounting
    live: u64,
    runnable_or_running: u64,
    sleeping: u64,
    end_time: u64,
    events: u64,
    sent: u64,
    received: u64,
    completed: u64,
    ctx_switches: u64,
    migrations: u64,
    ipis: u64,
    schedule_calls: u64,
    wake_lat: Histogram<u64>,
    rq_sum: f64,
    rq_sd_sum: f64,
    rq_max: u64,
    rq_samples: u64,
    rq_series: Option<SeriesBuf>,
}

/// Run `workload` under `policy` on `machine`.
pub fn simulate(
    machine: &Machine,
    policy: &impl PolicySource,
    workload: &Workload,
    cfg: &SimConfig,
) -> Result<Report, SimError> {
    machine.validate().map_err(|e| SimError::Workload(format!("machine: {e}")))?;
    workload.validate().map_err(SimError::Workload)?;
    let wall = std::time::Instant::now();
    let mut e = Engine::new(machine, policy, workload, cfg)?;
    e.run(cfg.max_virtual_ns)?;
    let wall_s = wall.elapsed().as_secs_f64();
    Ok(e.report(machine, policy, cfg.seed, wall_s))
}

impl<'w> Engine<'w> {
    fn new(m: &Machine, spec: &impl PolicySource, w: &'w Workload, cfg: &SimConfig) -> Result<Engine<'w>, SimError> {
        let mut ops = Vec::with_capacity(w.programs.iter().map(|p| p.ops.len()).sum());
        let mut prog_start = Vec::with_capacity(w.programs.len() + 1);
        for (i, p) in w.programs.iter().enumerate() {
            let depth = loop_depth(&p.ops);
            if depth > MAX_LOOP_DEPTH {
                return Err(SimError::Workload(format!(
                    "program {i} ({}) nests loops {depth} deep; the simulator supports {MAX_LOOP_DEPTH}",
                    p.role
                )));
            }
            prog_start.push(ops.len() as u32);
            ops.extend_from_slice(&p.ops);
        }
        prog_start.push(ops.len() as u32);
        let capacity = w.expected_tasks.max(1) as usize;
        let plat = SimPlatform::new(CostModel::new(m), m.node_of.clone(), capacity);
        let topo = Topology { node_of: m.node_of.clone() };
        let env = BuildEnv { topo: &topo, capacity, hz: m.hz };
        let policy = spec.build(&plat, &env).map_err(|e| SimError::Policy(e.0))?;
        let cpus = (0..m.cpus)
            .map(|_| CpuRt {
                curr: None,
                mode: Mode::Idle,
                need_resched: false,
                ipi_pending: false,
                tick_pending: false,
                step_at: NEVER,
                tick_at: NEVER,
                ipi_at: NEVER,
                loaded_mm: 0,
                idle_since: 0,
                idle_ns: 0,
            })
            .collect();
        Ok(Engine {
            w,
            ops,
            prog_start,
            plat,
            policy,
            cpus,
            node_of: m.node_of.clone(),
            tasks: Vec::with_capacity(capacity),
            chans: vec![Chan::default(); w.channels as usize],
            next_at: vec![NEVER; m.cpus],
            q: EventQueue::with_capacity(64),
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            resched_buf: Vec::with_capacity(64),
            check: cfg.check_invariants,
            live: 0,
            runnable_or_running: 0,
            sleeping: 0,
            end_time: 0,
            events: 0,
            sent: 0,
            received: 0,
            completed: 0,
            ctx_switches: 0,
            migrations: 0,
            ipis: 0,
            schedule_calls: 0,
            wake_lat: Histogram::new(3).expect("histogram"),
            rq_sum: 0.0,
            rq_sd_sum: 0.0,
            rq_max: 0,
            rq_samples: 0,
            rq_series: cfg.rq_series_interval_ns.map(|i| SeriesBuf {
                interval: i.max(1),
                next_at: 0,
                t_ns: Vec::with_capacity(1024),
                lens: Vec::with_capacity(1024 * m.cpus),
                stddev: Vec::with_capacity(1024),
            }),
        })
    }

    fn run(&mut self, max_ns: u64) -> Result<(), SimError> {
        // Boot: the root task is forked on CPU 0 at time 0; ticks start on every CPU.
        self.plat.begin(0, 0);
        self.spawn(self.w.root, self.w.root_params, None);
        self.handle_resched(0);
        // Each CPU's local timer has an arbitrary phase on real hardware; draw it from
        // the seed. This is the simulation's source of run-to-run variation for
        // workloads without random operations (Chat, hackbench, ping-pong).
        let tick = self.plat.cost.tick_ns;
        for c in 0..self.cpus.len() {
            self.cpus[c].tick_at = tick + self.rng.gen_range(0..tick);
            self.refresh(c);
        }
        while self.live > 0 {
            let (t, ev) = self.next_event();
            if t > max_ns {
                return Err(SimError::TimeLimit(max_ns));
            }
            self.events += 1;
            match ev {
                Kind::Step { cpu } => {
                    let c = cpu as usize;
                    self.cpus[c].step_at = NEVER;
                    self.refresh(c);
                    self.step(c, t);
                }
                Kind::Tick { cpu } => {
                    let c = cpu as usize;
                    self.cpus[c].tick_at = t + tick;
                    self.refresh(c);
                    self.tick(c, t)?;
                }
                Kind::Ipi { cpu } => {
                    let c = cpu as usize;
                    self.cpus[c].ipi_at = NEVER;
                    self.cpus[c].ipi_pending = false;
                    self.refresh(c);
                    self.interrupt(c, t);
                }
                Kind::Wake { task } => {
                    self.q.pop();
                    self.sleeping -= 1;
                    let cpu = self.tasks[task as usize].last_cpu as usize;
                    self.plat.begin(cpu, t);
                    self.wake(task);
                    self.handle_resched(cpu);
                }
            }
            if self.check {
                self.check_invariants()?;
            }
        }
        Ok(())
    }

    /// The earliest pending event. Ties: lower CPU first, and on one CPU the IPI,
    /// then the step, then the tick; sleep timers after CPU events of the same instant.
    #[inline]
    fn next_event(&self) -> (u64, Kind) {
        let (mut best, mut cpu) = (NEVER, usize::MAX);
        for (c, &t) in self.next_at.iter().enumerate() {
            if t < best {
                best = t;
                cpu = c;
            }
        }
        if let Some((wt, wake)) = self.q.peek() {
            if wt < best {
                return (wt, wake);
            }
        }
        let c = &self.cpus[cpu];
        let kind = if c.ipi_at == best {
            Kind::Ipi { cpu: cpu as u32 }
        } else if c.step_at == best {
            Kind::Step { cpu: cpu as u32 }
        } else {
            Kind::Tick { cpu: cpu as u32 }
        };
        (best, kind)
    }

    #[inline]
    fn refresh(&mut self, cpu: CpuId) {
        let c = &self.cpus[cpu];
        self.next_at[cpu] = c.step_at.min(c.tick_at).min(c.ipi_at);
    }

    // ----- CPU steps -------------------------------------------------------------

    /// Schedule the CPU's next step at `at`, superseding any pending one.
    #[inline]
    fn arm(&mut self, cpu: CpuId, at: u64) {
        self.cpus[cpu].step_at = at;
        self.refresh(cpu);
    }

    /// An interrupt (IPI, or a wake-up handled on this CPU) arrives at `t`.
    fn interrupt(&mut self, cpu: CpuId, t: u64) {
        match self.cpus[cpu].mode {
            Mode::User => {
                let left = self.cpus[cpu].step_at.saturating_sub(t);
                let task = self.cpus[cpu].curr.expect("user mode without a task");
                self.tasks[task as usize].compute_left = left.max(1);
                self.cpus[cpu].mode = Mode::Kernel;
                self.arm(cpu, t);
            }
            Mode::Idle => {
                if self.cpus[cpu].need_resched {
                    self.arm(cpu, t);
                }
            }
            Mode::Kernel => {}
        }
    }

    fn step(&mut self, cpu: CpuId, t: u64) {
        self.plat.begin(cpu, t);
        if self.cpus[cpu].tick_pending {
            self.cpus[cpu].tick_pending = false;
            self.tick_work(cpu);
        }
        match self.cpus[cpu].mode {
            Mode::Idle => {
                self.cpus[cpu].mode = Mode::Kernel;
                self.schedule(cpu, PrevState::Runnable);
                return;
            }
            Mode::User => {
                // The compute segment ran to its end.
                let task = self.cpus[cpu].curr.expect("user mode without a task");
                self.tasks[task as usize].compute_left = 0;
                self.advance_pc(task);
                self.cpus[cpu].mode = Mode::Kernel;
            }
            Mode::Kernel => {}
        }
        if self.cpus[cpu].need_resched || self.cpus[cpu].curr.is_none() {
            self.schedule(cpu, PrevState::Runnable);
        } else {
            self.exec(cpu);
        }
    }

    /// Call the policy's `schedule()` on `cpu` and carry out its choice.
    fn schedule(&mut self, cpu: CpuId, prev_state: PrevState) {
        self.schedule_calls += 1;
        self.cpus[cpu].need_resched = false;
        let prev = self.cpus[cpu].curr;
        let next = self.policy.schedule(&self.plat, prev, prev_state);
        if let Some(p) = prev {
            if prev_state == PrevState::Runnable && next != Some(p) {
                self.tasks[p as usize].state = TState::Runnable;
            }
        }
        self.handle_resched(cpu);
        match next {
            Some(n) => {
                let nt = &self.tasks[n as usize];
                debug_assert!(
                    matches!(nt.state, TState::Runnable | TState::Running),
                    "picked task {n} in state {:?}",
                    nt.state
                );
                if next != prev {
                    let mut cost = self.plat.cost.context_switch_ns;
                    if nt.mm != 0 && nt.mm != self.cpus[cpu].loaded_mm {
                        cost += self.plat.cost.mm_switch_ns;
                        self.cpus[cpu].loaded_mm = nt.mm;
                    }
                    self.plat.advance(cost);
                    self.ctx_switches += 1;
                    if nt.last_cpu != NONE && nt.last_cpu as usize != cpu {
                        self.migrations += 1;
                    }
                }
                let now = self.plat.cursor();
                let nt = &mut self.tasks[n as usize];
                nt.state = TState::Running;
                nt.last_cpu = cpu as u32;
                if nt.woke_at != u64::MAX {
                    let lat = now - nt.woke_at;
                    nt.woke_at = u64::MAX;
                    let _ = self.wake_lat.record(lat.max(1));
                }
                if self.cpus[cpu].curr.is_none() {
                    let c = &mut self.cpus[cpu];
                    c.idle_ns += now.saturating_sub(c.idle_since);
                }
                self.cpus[cpu].curr = Some(n);
                self.cpus[cpu].mode = Mode::Kernel;
                self.arm(cpu, now);
            }
            None => {
                let now = self.plat.cursor();
                let c = &mut self.cpus[cpu];
                if c.curr.is_some() || c.mode != Mode::Idle {
                    c.idle_since = now;
                }
                c.curr = None;
                c.mode = Mode::Idle;
                // The policy may have asked this CPU to look again (e.g. after a failed trylock).
                if c.need_resched {
                    self.arm(cpu, now);
                } else {
                    c.step_at = NEVER;
                    self.refresh(cpu);
                }
            }
        }
    }

    /// Deliver the policy's reschedule requests made during the current call on `cpu`.
    fn handle_resched(&mut self, cpu: CpuId) {
        let mut buf = std::mem::take(&mut self.resched_buf);
        self.plat.drain_resched(&mut buf);
        for &target in &buf {
            if target == cpu {
                self.cpus[cpu].need_resched = true;
                let now = self.plat.cursor();
                self.interrupt(cpu, now);
                continue;
            }
            self.plat.advance(self.plat.cost.ipi_send_ns);
            let t = &mut self.cpus[target];
            t.need_resched = true;
            if !t.ipi_pending {
                t.ipi_pending = true;
                t.ipi_at = self.plat.cursor() + self.plat.cost.ipi_ns(self.node_of[cpu], self.node_of[target]);
                self.ipis += 1;
                self.refresh(target);
            }
        }
        self.resched_buf = buf;
    }

    // ----- the timer -------------------------------------------------------------

    fn tick(&mut self, cpu: CpuId, t: u64) -> Result<(), SimError> {
        if cpu == 0 {
            self.sample_queues(t);
            self.check_progress()?;
        }
        match self.cpus[cpu].mode {
            Mode::Kernel => self.cpus[cpu].tick_pending = true,
            Mode::Idle => {
                self.plat.begin(cpu, t);
                self.tick_work(cpu);
            }
            Mode::User => {
                let left = self.cpus[cpu].step_at.saturating_sub(t);
                self.plat.begin(cpu, t);
                self.tick_work(cpu);
                let now = self.plat.cursor();
                let task = self.cpus[cpu].curr.expect("user mode without a task");
                if self.cpus[cpu].need_resched {
                    self.tasks[task as usize].compute_left = left.max(1);
                    self.cpus[cpu].mode = Mode::Kernel;
                    self.arm(cpu, now);
                } else {
                    self.arm(cpu, now + left);
                }
            }
        }
        Ok(())
    }

    /// The policy's part of the timer interrupt, at the platform cursor.
    fn tick_work(&mut self, cpu: CpuId) {
        let curr = self.cpus[cpu].curr;
        if self.policy.tick(&self.plat, curr) {
            self.cpus[cpu].need_resched = true;
        }
        self.policy.balance(&self.plat);
        self.handle_resched(cpu);
    }

    fn sample_queues(&mut self, t: u64) {
        let n = self.policy.nr_queues();
        let record = match &self.rq_series {
            Some(s) => t >= s.next_at,
            None => false,
        };
        let (mut sum, mut sq, mut max) = (0u64, 0u64, 0u64);
        for q in 0..n {
            let l = self.policy.queue_len(q) as u64;
            sum += l;
            sq += l * l;
            max = max.max(l);
            if record {
                if let Some(s) = self.rq_series.as_mut() {
                    s.lens.push(l as u32);
                }
            }
        }
        let mean = sum as f64 / n as f64;
        let sd = (sq as f64 / n as f64 - mean * mean).max(0.0).sqrt();
        self.rq_sum += mean;
        self.rq_sd_sum += sd;
        self.rq_max = self.rq_max.max(max);
        self.rq_samples += 1;
        if record {
            if let Some(s) = self.rq_series.as_mut() {
                s.t_ns.push(t);
                s.stddev.push(sd);
                s.next_at = (t / s.interval + 1) * s.interval;
            }
        }
    }

    /// Detect a workload that can never finish, or a policy that lost a task.
    fn check_progress(&self) -> Result<(), SimError> {
        if self.runnable_or_running == 0 && self.sleeping == 0 && self.live > 0 {
            return Err(SimError::Deadlock(format!(
                "all {} live tasks are blocked in receives that no task will satisfy (workload deadlock)",
                self.live
            )));
        }
        let all_idle = self.cpus.iter().all(|c| c.mode == Mode::Idle && !c.need_resched && !c.ipi_pending);
        if all_idle && self.runnable_or_running > 0 {
            return Err(SimError::Deadlock(format!(
                "{} tasks are runnable but every CPU is idle and none was asked to reschedule (lost wake-up in policy {})",
                self.runnable_or_running,
                self.policy.name()
            )));
        }
        Ok(())
    }

    // ----- task programs ---------------------------------------------------------

    fn spawn(&mut self, prog: u32, params: schedlab_core::TaskParams, parent: Option<TaskId>) -> TaskId {
        let id = self.tasks.len() as TaskId;
        self.plat.alloc_task_struct(id);
        self.tasks.push(TaskRt {
            pc: self.prog_start[prog as usize],
            end: self.prog_start[prog as usize + 1],
            loops: [LoopFrame::default(); MAX_LOOP_DEPTH],
            depth: 0,
            state: TState::Blocked,
            compute_left: 0,
            woke_at: u64::MAX,
            last_cpu: NONE,
            mm: params.mm,
            in_recv: false,
        });
        self.live += 1;
        self.policy.task_new(&self.plat, id, &params, parent);
        self.wake(id);
        id
    }

    /// Make a blocked or new task runnable through the policy.
    fn wake(&mut self, task: TaskId) {
        let t = &mut self.tasks[task as usize];
        debug_assert!(matches!(t.state, TState::Blocked | TState::Sleeping));
        t.state = TState::Runnable;
        t.woke_at = self.plat.cursor();
        self.runnable_or_running += 1;
        self.policy.wake_up(&self.plat, task, false);
    }

    /// The instruction at the task's pc, after resolving loop control.
    fn fetch(&mut self, task: TaskId) -> Op {
        let t = &mut self.tasks[task as usize];
        let ops = &self.ops;
        loop {
            if t.depth > 0 {
                let f = &mut t.loops[t.depth as usize - 1];
                if t.pc == f.end {
                    f.left -= 1;
                    if f.left > 0 {
                        t.pc = f.start;
                    } else {
                        t.depth -= 1;
                    }
                    continue;
                }
            }
            if t.pc >= t.end {
                return Op::Exit;
            }
            match ops.get(t.pc as usize) {
                None => return Op::Exit,
                Some(&Op::Loop { count, body }) => {
                    if body == 0 {
                        t.pc += 1;
                        continue;
                    }
                    assert!((t.depth as usize) < MAX_LOOP_DEPTH, "loops nest deeper than {MAX_LOOP_DEPTH}");
                    t.loops[t.depth as usize] = LoopFrame { start: t.pc + 1, end: t.pc + 1 + body, left: count };
                    t.depth += 1;
                    t.pc += 1;
                }
                Some(&op) => return op,
            }
        }
    }

    fn advance_pc(&mut self, task: TaskId) {
        self.tasks[task as usize].pc += 1;
    }

    /// Execute the running task's next operation.
    fn exec(&mut self, cpu: CpuId) {
        let task = self.cpus[cpu].curr.expect("exec on an idle CPU");
        let op = self.fetch(task);
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
                    cost.compute_ns(cycles).max(1)
                };
                self.tasks[task as usize].compute_left = ns;
                self.cpus[cpu].mode = Mode::User;
                let at = self.plat.cursor() + ns;
                self.arm(cpu, at);
            }
            Op::Send { chan, bytes } => {
                self.plat.advance(cost.send_ns(bytes));
                self.sent += 1;
                let ch = &mut self.chans[chan as usize];
                ch.pending += 1;
                ch.bytes = bytes;
                if let Some(waiter) = ch.waiters.pop_front() {
                    self.wake(waiter);
                    self.handle_resched(cpu);
                }
                self.advance_pc(task);
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
                    self.tasks[task as usize].in_recv = false;
                    self.plat.advance(self.plat.cost.recv_ns(bytes));
                    self.received += 1;
                    if self.w.metric.counted[chan as usize] {
                        self.completed += 1;
                    }
                    self.advance_pc(task);
                    let at = self.plat.cursor();
                    self.arm(cpu, at);
                } else {
                    ch.waiters.push_back(task);
                    let t = &mut self.tasks[task as usize];
                    t.in_recv = true;
                    t.state = TState::Blocked;
                    self.runnable_or_running -= 1;
                    self.schedule(cpu, PrevState::Blocked);
                }
            }
            Op::Sleep { ns } => {
                self.plat.advance(cost.syscall_ns);
                self.advance_pc(task);
                self.tasks[task as usize].state = TState::Sleeping;
                self.runnable_or_running -= 1;
                self.sleeping += 1;
                self.q.push(self.plat.cursor() + ns, Kind::Wake { task });
                self.schedule(cpu, PrevState::Blocked);
            }
            Op::Yield => {
                self.plat.advance(cost.syscall_ns);
                self.policy.yield_now(&self.plat, task);
                self.handle_resched(cpu);
                self.advance_pc(task);
                self.schedule(cpu, PrevState::Runnable);
            }
            Op::Spawn { program, params } => {
                self.plat.advance(cost.fork_ns);
                self.advance_pc(task);
                self.spawn(program, params, Some(task));
                self.handle_resched(cpu);
                let at = self.plat.cursor();
                self.arm(cpu, at);
            }
            Op::Exit => {
                self.plat.advance(cost.exit_ns);
                self.tasks[task as usize].state = TState::Exited;
                self.runnable_or_running -= 1;
                self.live -= 1;
                self.end_time = self.plat.cursor();
                self.schedule(cpu, PrevState::Exited);
            }
            Op::Loop { .. } => unreachable!("fetch resolves loops"),
        }
    }

    // ----- checks and report -----------------------------------------------------

    fn check_invariants(&self) -> Result<(), SimError> {
        self.policy.check_invariants().map_err(SimError::Invariant)?;
        let mut on_cpu = vec![None; self.tasks.len()];
        for (c, cpu) in self.cpus.iter().enumerate() {
            if let Some(t) = cpu.curr {
                if let Some(other) = on_cpu[t as usize] {
                    return Err(SimError::Invariant(format!("task {t} is running on CPUs {other} and {c}")));
                }
                on_cpu[t as usize] = Some(c);
                if self.tasks[t as usize].state != TState::Running {
                    return Err(SimError::Invariant(format!(
                        "CPU {c} runs task {t} in state {:?}",
                        self.tasks[t as usize].state
                    )));
                }
            }
        }
        for (i, t) in self.tasks.iter().enumerate() {
            if t.state == TState::Running && on_cpu[i].is_none() {
                return Err(SimError::Invariant(format!("task {i} is Running but on no CPU")));
            }
        }
        let in_flight: u64 = self.chans.iter().map(|c| c.pending).sum();
        if self.sent != self.received + in_flight {
            return Err(SimError::Invariant(format!(
                "{} sent != {} received + {in_flight} queued",
                self.sent, self.received
            )));
        }
        Ok(())
    }

    fn report(mut self, m: &Machine, spec: &impl PolicySource, seed: u64, wall_s: f64) -> Report {
        let virtual_ns = self.end_time.max(1);
        for c in self.cpus.iter_mut() {
            if c.curr.is_none() {
                c.idle_ns += virtual_ns.saturating_sub(c.idle_since);
            }
        }
        let idle: u64 = self.cpus.iter().map(|c| c.idle_ns).sum();
        let total = virtual_ns as f64 * self.cpus.len() as f64;
        let stats = self.plat.lock_stats();
        let spin: u64 = stats.iter().map(|s| s.wait_total_ns).sum();
        let h = &self.wake_lat;
        let samples = self.rq_samples.max(1) as f64;
        Report {
            machine: m.name.clone(),
            cpus: m.cpus,
            policy: spec.canonical(),
            workload: self.w.spec.clone(),
            seed,
            throughput: round3(self.completed as f64 * 1e9 / virtual_ns as f64),
            throughput_unit: self.w.metric.unit.clone(),
            completed: self.completed,
            messages_sent: self.sent,
            messages_received: self.received,
            tasks: self.tasks.len() as u64,
            virtual_ns,
            sim_events: self.events,
            wall_s,
            events_per_sec: self.events as f64 / wall_s.max(1e-9),
            context_switches: self.ctx_switches,
            migrations: self.migrations,
            ipis: self.ipis,
            schedule_calls: self.schedule_calls,
            cpu_busy_pct: round3(100.0 * (1.0 - idle as f64 / total)),
            lock_spin_ns: spin,
            wakeup_latency_ns: Latency {
                count: h.len(),
                mean: round3(if h.is_empty() { 0.0 } else { h.mean() }),
                p50: h.value_at_quantile(0.5),
                p99: h.value_at_quantile(0.99),
                max: h.max(),
            },
            runqueue_len: QueueLen {
                mean: round3(self.rq_sum / samples),
                max: self.rq_max,
                stddev_mean: round3(self.rq_sd_sum / samples),
                samples: self.rq_samples,
            },
            locks: Report::lock_reports(&stats, virtual_ns),
            rq_series: self.rq_series.take().map(|s| {
                let queues = self.policy.nr_queues();
                RqSeries::from_rows(s.interval, queues, s.t_ns, &s.lens, &s.stddev)
            }),
        }
    }
}

/// Deepest loop nesting in a program.
fn loop_depth(ops: &[Op]) -> usize {
    let mut ends: Vec<usize> = Vec::new();
    let mut max = 0;
    for (i, op) in ops.iter().enumerate() {
        ends.retain(|&e| e > i);
        if let Op::Loop { body, .. } = op {
            ends.push(i + 1 + *body as usize);
            max = max.max(ends.len());
        }
    }
    max
}
