//! The discrete-event engine: the event loop and the CPU state machine (steps, the
//! timer tick, reschedule IPIs, calls to the policy), in integer-nanosecond virtual
//! time. Tasks executing their programs are in `engine/exec.rs`, the consistency
//! checks in `engine/checks.rs`, and what a run measures in `recorder.rs`.
//!
//! A CPU is idle, in the kernel (between operations; its next step is scheduled at the
//! time the current operation's cost runs out) or in user mode (a compute segment
//! whose end is an event). Interrupts — the timer tick and reschedule IPIs — preempt
//! user mode at once; in the kernel they take effect at the next operation boundary
//! (2.4's kernel is not preemptive; `need_resched` is checked on return to user).
//! Every scheduling decision is the policy's: the engine only calls it and executes
//! the outcome (context switch, IPI delivery).

mod checks;
mod cpu_table;
mod exec;
mod next_cpu;

use crate::cost::CostModel;
use crate::events::{EventQueue, Kind};
use crate::jitter::Jitter;
use crate::machine::{Machine, TaskStruct, TickPhase};
use crate::platform::SimPlatform;
use crate::recorder::{Recorder, RunEnd};
use crate::report::Report;
use cpu_table::CpuTable;
use exec::{Chan, TState, TaskRt, NONE};
use next_cpu::{NextCpu, Slot};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_core::platform::Work;
use schedlab_core::trace::{Event, Trace, TraceMeta};
use schedlab_core::{BuildEnv, CpuId, Policy, PolicySource, PrevState, TaskId, Topology};
use schedlab_workloads::Cursor;
use schedlab_workloads::{Op, Workload};

/// Re-exported from [`crate::config`], for paths written as `engine::SimConfig`.
pub use crate::config::{SimConfig, SimError};

/// "No event pending" in a CPU's event slots.
const NEVER: u64 = u64::MAX;

/// What a CPU is doing (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Idle,
    Kernel,
    User,
}

/// One CPU: what it runs, its pending interrupts, and its three event slots.
#[derive(Clone, Debug)]
struct CpuRt {
    curr: Option<TaskId>,
    mode: Mode,
    need_resched: bool,
    tick_pending: bool,
    /// The running task has registered a blocking receive; the next step blocks it
    /// (`Engine::finish_block`).
    blocking: bool,
    /// Time of the pending step (end of a compute segment in user mode); NEVER if none.
    step_at: u64,
    tick_at: u64,
    ipi_at: u64,
    loaded_mm: u32,
    /// When the idle loop last started (its spin before the CPU sleeps restarts at every
    /// `schedule()` that finds nothing).
    idle_since: u64,
    /// When the CPU last stopped running a task: the start of its current idle period,
    /// which an idle `schedule()` that finds nothing does not end.
    idle_from: u64,
    idle_ns: u64,
    /// The running task's program cursor, moved here from its `TaskRt` when it is
    /// dispatched and back when it is switched out: the event loop fetches an op at
    /// nearly every event, and the CPU's entry is already loaded, where the task's
    /// entry (one of hundreds) is a further dependent load, often a host cache miss.
    /// Meaningless while `curr` is `None`.
    cursor: Cursor,
}

/// One simulation run.
struct Engine<'w> {
    w: &'w Workload,
    plat: SimPlatform,
    policy: Box<dyn Policy<SimPlatform>>,
    cpus: CpuTable,
    node_of: Vec<usize>,
    tasks: Vec<TaskRt>,
    chans: Vec<Chan>,
    /// Every program's ops, concatenated (one contiguous array: the event loop reads
    /// a different task's program at nearly every event), and each program's start.
    ops: Vec<Op>,
    prog_start: Vec<u32>,
    /// Each program's role (index into the recorder's roles) and, on a machine with
    /// IRQ affinity, the CPU its tasks are bound to (NONE: free).
    role_of: Vec<u32>,
    bind_cpu: Vec<u32>,
    /// Cache lines of each program's working set (0: none).
    ws_lines_of: Vec<u32>,
    /// Cache lines of each task's working set, touched at the start of each compute.
    task_ws: Vec<u32>,
    /// Earliest pending event of each CPU, min(step_at, tick_at, ipi_at), and which
    /// CPU's is earliest.
    next_at: NextCpu,
    /// The lock's waiter backs off (a host machine): a `schedule()` that would wait is
    /// deferred to its poll ([`Engine::defer_schedule`]).
    defer_waits: bool,
    /// Per CPU (kept out of `CpuRt`, which the presets' hot path walks): the lock its
    /// last `schedule()` took first (`NONE`: none yet), and when a deferred
    /// `schedule()`'s waiter began to ask for it (`NEVER`: not deferred).
    sched_lock: Vec<u32>,
    lock_asked: Vec<u64>,
    /// Sleep timers (the only events not tied to a CPU slot).
    q: EventQueue,
    rng: ChaCha8Rng,
    /// Where each CPU's first tick falls (`Machine::tick_phase`).
    tick_phase: TickPhase,
    /// Variation of the per-event CPU prices, redrawn before each event (None: the
    /// machine's `cost_jitter_pct` is 0, every price exact, nothing drawn).
    jitter: Option<Box<Jitter>>,
    resched_buf: Vec<(CpuId, Option<u64>)>,
    check: bool,
    progress: Option<crate::config::ProgressFn>,
    /// Tasks not yet exited, and how many of them are runnable or running, or asleep
    /// (the rest are blocked in receives).
    live: u64,
    /// The most tasks ever live at once: as many task blocks have been used, and a
    /// spawn while all of them are live needs a fresh one (`task_block_fresh_ns`).
    peak_live: u64,
    runnable_or_running: u64,
    sleeping: u64,
    /// When the latest task exited: the run's virtual duration once all have.
    end_time: u64,
    /// When the workload's benchmark started its clock (its first `StartClock`).
    clock_start: Option<u64>,
    /// The workload's benchmark stopped its clock (its first `StopClock`): the run ends
    /// at `end_time`.
    stopped: bool,
    rec: Recorder,
    /// The policy's number of run queues: one shared by every CPU, or one per CPU
    /// (queue `q` is CPU `q`'s), so a `schedule()` on CPU `c` picks from queue
    /// `c % queues`.
    queues: usize,
    /// Role names, by the engine's numbering (labels of a trace's tasks).
    roles: Vec<String>,
}

/// Run `workload` under `policy` on `machine`.
pub fn simulate(
    machine: &Machine,
    policy: &impl PolicySource,
    workload: &Workload,
    cfg: &SimConfig,
) -> Result<Report, SimError> {
    run(machine, policy, workload, cfg, None).map(|(r, _)| r)
}

/// [`simulate`], recording a scheduling trace of at most `cap` events
/// ([`schedlab_core::trace`]; `docs/traces.md`). The report is the one `simulate`
/// gives: recording only observes.
pub fn simulate_traced(
    machine: &Machine,
    policy: &impl PolicySource,
    workload: &Workload,
    cfg: &SimConfig,
    cap: usize,
) -> Result<(Report, Trace), SimError> {
    run(machine, policy, workload, cfg, Some(cap)).map(|(r, t)| (r, t.expect("tracing was on")))
}

fn run(
    machine: &Machine,
    policy: &impl PolicySource,
    workload: &Workload,
    cfg: &SimConfig,
    trace_cap: Option<usize>,
) -> Result<(Report, Option<Trace>), SimError> {
    machine.validate().map_err(|e| SimError::Workload(format!("machine: {e}")))?;
    workload.validate().map_err(|e| SimError::Workload(e.0))?;
    let wall = std::time::Instant::now();
    let mut e = Engine::new(machine, policy, workload, cfg, trace_cap)?;
    e.run(cfg.max_virtual_ns)?;
    let wall_s = wall.elapsed().as_secs_f64();
    let trace = e.take_trace(machine, policy, cfg.seed);
    Ok((e.report(machine, policy, cfg.seed, wall_s), trace))
}

/// Bound on the working-set lines a simulation models (about 256 MB of line state).
const MAX_WS_LINES: usize = 16 << 20;

impl<'w> Engine<'w> {
    fn new(
        m: &Machine,
        spec: &impl PolicySource,
        w: &'w Workload,
        cfg: &SimConfig,
        trace_cap: Option<usize>,
    ) -> Result<Engine<'w>, SimError> {
        let mut ops = Vec::with_capacity(w.programs.iter().map(|p| p.ops.len()).sum());
        let mut prog_start = Vec::with_capacity(w.programs.len() + 1);
        for p in &w.programs {
            prog_start.push(ops.len() as u32);
            ops.extend_from_slice(&p.ops);
        }
        prog_start.push(ops.len() as u32);
        let (roles, role_of) = w.roles();
        let mut bind_cpu = vec![NONE; w.programs.len()];
        if m.irq_affinity {
            for &(prog, line) in &w.bound {
                bind_cpu[prog as usize] = line % m.cpus as u32;
            }
        }
        let capacity = w.expected_tasks.max(1) as usize;
        let mut ws_lines_of = vec![0u32; w.programs.len()];
        for &(prog, bytes) in &w.working_set {
            let slot = ws_lines_of
                .get_mut(prog as usize)
                .ok_or_else(|| SimError::Workload(format!("working_set names program {prog}, which does not exist")))?;
            *slot = bytes.div_ceil(m.line_bytes);
        }
        let ws_lines = ws_lines_of.iter().copied().max().unwrap_or(0) as usize;
        // Every task gets the largest working set's lines (16 bytes of state each).
        if capacity.saturating_mul(ws_lines) > MAX_WS_LINES {
            return Err(SimError::Workload(format!(
                "working sets of {ws_lines} lines × {capacity} tasks exceed the simulator's {MAX_WS_LINES} modelled lines: use smaller working sets or fewer tasks"
            )));
        }
        let plat = SimPlatform::new(
            CostModel::new(m),
            m.node_of.clone(),
            capacity,
            m.l2_kb,
            m.l2_assoc,
            m.line_bytes,
            spec.colours(),
        )
        .with_working_sets(ws_lines);
        let plat = match m.task_struct {
            TaskStruct::Kernel => plat,
            TaskStruct::Runtime => plat.with_one_line_tasks(),
        };
        let plat = match trace_cap {
            Some(cap) => plat.with_trace(cap),
            None => plat,
        };
        // The runtime's clock starts before its root runs (`PolicySched::new`); a
        // machine that measured by how much draws it here, before the policy is built
        // (its first clock read is the root's fork), from a stream of its own, so that
        // the seed's other draws (the tick phases, the workload's) stay where they were.
        let mut origin_rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        origin_rng.set_stream(1);
        let plat = match plat.cost.clock_origin(|tick| origin_rng.gen_range(0..tick)) {
            Some(origin) => plat.with_clock_origin(origin),
            None => plat,
        };
        let jitter = Jitter::new(m.costs.host.cost_jitter_pct, cfg.seed, &plat.cost);
        let defer_waits = !plat.cost.lock_backoff.is_continuous();
        let topo = Topology { node_of: m.node_of.clone(), distance: m.distance.clone() };
        let env = BuildEnv { topo: &topo, capacity, hz: m.hz };
        let policy = spec.build(&plat, &env).map_err(|e| SimError::Policy(e.0))?;
        let queues = policy.nr_queues().max(1);
        let cpus = CpuTable::new(
            m.cpus,
            CpuRt {
                curr: None,
                mode: Mode::Idle,
                need_resched: false,
                tick_pending: false,
                blocking: false,
                step_at: NEVER,
                tick_at: NEVER,
                ipi_at: NEVER,
                loaded_mm: 0,
                idle_since: 0,
                idle_from: 0,
                idle_ns: 0,
                cursor: Cursor::at(0, 0),
            },
        );
        Ok(Engine {
            w,
            ops,
            prog_start,
            role_of,
            bind_cpu,
            ws_lines_of,
            task_ws: Vec::with_capacity(capacity),
            plat,
            policy,
            cpus,
            node_of: m.node_of.clone(),
            tasks: Vec::with_capacity(capacity),
            chans: schedlab_workloads::buffers::limits(w, &m.socket_buffers).into_iter().map(Chan::new).collect(),
            next_at: NextCpu::new(m.cpus),
            defer_waits,
            sched_lock: vec![NONE; m.cpus],
            lock_asked: vec![NEVER; m.cpus],
            q: EventQueue::with_capacity(64),
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            tick_phase: m.tick_phase,
            jitter,
            resched_buf: Vec::with_capacity(64),
            check: cfg.check_invariants,
            progress: cfg.progress.clone(),
            live: 0,
            peak_live: 0,
            runnable_or_running: 0,
            sleeping: 0,
            end_time: 0,
            clock_start: None,
            stopped: false,
            rec: Recorder::new(cfg, m.cpus, &roles, w),
            queues,
            roles,
        })
    }

    fn run(&mut self, max_ns: u64) -> Result<(), SimError> {
        // Boot: the root task is forked on CPU 0 at time 0; ticks start on every CPU.
        self.plat.begin(0, 0);
        self.spawn(self.w.root, self.w.root_params, None);
        self.handle_resched(0);
        // Each CPU's local timer has an arbitrary phase on real hardware; draw it from
        // the seed. This is the simulation's source of run-to-run variation for
        // workloads without random operations (Chat, hackbench, ping-pong), besides
        // price jitter. The runtime's timers start with the run (`TickPhase::Boot`);
        // the draw is made there too, so that every later draw is the same.
        // With `boot`, this CPU's draw places its first tick in the machine's measured
        // range, if it has one.
        let tick = self.plat.cost.tick_ns;
        let mut first0 = tick;
        for c in 0..self.cpus.len() {
            let draw = self.rng.gen_range(0..tick);
            self.cpus[c].tick_at = match self.tick_phase {
                TickPhase::Random => tick + draw,
                TickPhase::Boot => self.plat.cost.boot_first_tick(c, draw, first0),
            };
            if c == 0 {
                first0 = self.cpus[0].tick_at;
            }
            self.refresh(c);
        }
        while self.live > 0 && !self.stopped {
            let (t, ev) = self.next_event();
            if t > max_ns {
                return Err(SimError::TimeLimit(max_ns));
            }
            self.rec.events += 1;
            if let Some(j) = &self.jitter {
                j.redraw(&mut self.plat.cost);
            }
            if self.rec.events.is_multiple_of(crate::config::PROGRESS_EVERY) {
                if let Some(p) = &self.progress {
                    p(crate::config::Progress { virtual_ns: t, events: self.rec.events });
                }
            }
            match ev {
                Kind::Step { cpu } => {
                    let c = cpu as usize;
                    // Most steps arm the CPU's next step (`arm` writes its key): the
                    // key is rewritten here only if none did. Nothing reads `next_at`
                    // during the step, and every other change of a CPU's slots
                    // rewrites its key at once, from `step_at` as it is then.
                    self.cpus[c].step_at = NEVER;
                    self.step(c, t);
                    if self.cpus[c].step_at == NEVER {
                        self.refresh(c);
                    }
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
                    self.plat.ipi_arrived(c);
                    self.refresh(c);
                    self.interrupt(c, t);
                }
                Kind::Wake { task } => {
                    self.q.pop();
                    self.sleeping -= 1;
                    let cpu = self.tasks[task as usize].last_cpu as usize;
                    self.plat.begin(cpu, t);
                    self.wake(task, None);
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
    fn next_event(&mut self) -> (u64, Kind) {
        let (best, cpu, slot) = self.next_at.min();
        if let Some((wt, wake)) = self.q.peek() {
            if wt < best {
                return (wt, wake);
            }
        }
        let cpu = cpu as u32;
        let kind = match slot {
            Slot::Ipi => Kind::Ipi { cpu },
            Slot::Step => Kind::Step { cpu },
            Slot::Tick => Kind::Tick { cpu },
        };
        (best, kind)
    }

    /// CPU `cpu`'s event slots changed: its key in `next_at` is rewritten now. (A mask
    /// of changed CPUs written once per event, as before, cost less work but a loop whose
    /// exit mispredicts on the busy Chat runs: 1 or 2 CPUs change per event.)
    #[inline]
    fn refresh(&mut self, cpu: CpuId) {
        let c = &self.cpus[cpu];
        self.next_at.set(cpu, c.ipi_at, c.step_at, c.tick_at);
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
        // Most steps are an operation boundary in the kernel with nothing pending:
        // they read the CPU's flags once and go straight to the next operation (one
        // call site, so `exec` stays inline in the event loop).
        let c = &self.cpus[cpu];
        let plain = c.mode == Mode::Kernel && !(c.tick_pending | c.blocking | c.need_resched) && c.curr.is_some();
        if plain || self.step_before_exec(cpu) {
            self.exec(cpu);
        }
    }

    /// The rest of a step: pending tick work, the end of a compute segment, an idle
    /// CPU's or a blocking receive's `schedule()`. Whether the running task's next
    /// operation follows.
    #[inline(never)]
    fn step_before_exec(&mut self, cpu: CpuId) -> bool {
        if self.cpus[cpu].tick_pending {
            self.cpus[cpu].tick_pending = false;
            self.tick_work(cpu);
        }
        match self.cpus[cpu].mode {
            Mode::Idle => {
                if self.defer_waits && self.defer_schedule(cpu) {
                    return false;
                }
                self.cpus[cpu].mode = Mode::Kernel;
                self.schedule(cpu, PrevState::Runnable);
                return false;
            }
            Mode::User => {
                // The compute segment ran to its end.
                let task = self.cpus[cpu].curr.expect("user mode without a task");
                self.tasks[task as usize].compute_left = 0;
                self.advance_pc(cpu);
                self.op_done();
                self.cpus[cpu].mode = Mode::Kernel;
            }
            Mode::Kernel => {
                if self.cpus[cpu].blocking {
                    if self.defer_waits && self.defer_schedule(cpu) {
                        return false;
                    }
                    self.finish_block(cpu);
                    return false;
                }
            }
        }
        if self.cpus[cpu].need_resched || self.cpus[cpu].curr.is_none() {
            if self.defer_waits && self.defer_schedule(cpu) {
                return false;
            }
            self.schedule(cpu, PrevState::Runnable);
            false
        } else {
            true
        }
    }

    /// A `schedule()` step whose first lock (the one this CPU's last `schedule()` took
    /// first) is held is not run now but when its backing-off waiter would see the
    /// lock free. A policy call is simulated whole when its step is processed, so a
    /// call run now would hold the lock from that poll on, ahead of another CPU that
    /// asks in between, while the lock is free, but whose step comes later: on the
    /// real machine that CPU takes the lock (nothing queues a waiter that is pausing
    /// or yielding), as it does here once this one is deferred. Whether the step is
    /// deferred (the CPU's state is left as it is and the step re-armed).
    /// docs/cost-model.md, "The lock waiter's back-off".
    #[inline(never)]
    fn defer_schedule(&mut self, cpu: CpuId) -> bool {
        let lock = self.sched_lock[cpu];
        if lock == NONE {
            return false;
        }
        let now = self.plat.cursor();
        let at = now + self.plat.cost.work(Work::ScheduleEntry);
        let asked = self.lock_asked[cpu].min(at);
        match self.plat.lock_seen_free_at(lock as usize, asked, at) {
            Some(seen) if seen > at => {
                self.lock_asked[cpu] = asked;
                self.arm(cpu, seen - (at - now));
                true
            }
            _ => false,
        }
    }

    /// Call the policy's `schedule()` on `cpu` and carry out its choice.
    fn schedule(&mut self, cpu: CpuId, prev_state: PrevState) {
        self.rec.schedule_calls += 1;
        self.cpus[cpu].need_resched = false;
        let prev = self.cpus[cpu].curr;
        if self.defer_waits {
            self.plat.begin_schedule(std::mem::replace(&mut self.lock_asked[cpu], NEVER));
        }
        self.rec.schedule_on(self.policy.queue_len(cpu % self.queues));
        let walk = self.plat.walk_start();
        let next = self.policy.schedule(&self.plat, prev, prev_state);
        self.rec.walked(self.plat.walked_since(walk));
        if self.defer_waits {
            if let Some(id) = self.plat.schedule_lock() {
                self.sched_lock[cpu] = id as u32;
            }
        }
        if let Some(p) = prev {
            if prev_state == PrevState::Runnable && next != Some(p) {
                let t = &mut self.tasks[p as usize];
                t.state = TState::Runnable;
                t.ready_at = self.plat.cursor();
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
                    // A runtime's worker reads the clock after every poll of a task.
                    let mut cost = self.plat.cost.context_switch_ns + self.plat.cost.clock_read_ns;
                    // Dispatching a task another CPU woke pulls its header line.
                    if nt.woke_on != NONE && nt.woke_on as usize != cpu {
                        // The runtime's dispatcher CAS on the header: a locked
                        // instruction, so this CPU's pending stores complete first.
                        self.plat.drain_stores();
                        cost += self.plat.cost.wake_transfer_ns;
                    }
                    if nt.mm != 0 && nt.mm != self.cpus[cpu].loaded_mm {
                        cost += self.plat.cost.mm_switch_ns;
                        self.cpus[cpu].loaded_mm = nt.mm;
                    }
                    self.plat.advance(cost);
                    self.rec.ctx_switches += 1;
                    let from = nt.last_cpu;
                    if from != NONE && from as usize != cpu {
                        self.rec.migrations += 1;
                        self.plat.trace(|| Event::Migrate { task: n, from, to: cpu as u32 });
                    }
                    self.plat.trace(|| Event::Switch { prev, next, prev_state });
                }
                if next != prev {
                    if let Some(p) = prev {
                        self.tasks[p as usize].cursor = self.cpus[cpu].cursor.clone();
                    }
                    self.cpus[cpu].cursor = self.tasks[n as usize].cursor.clone();
                }
                let now = self.plat.cursor();
                let nt = &mut self.tasks[n as usize];
                nt.state = TState::Running;
                nt.last_cpu = cpu as u32;
                nt.woke_on = NONE;
                if nt.woke_at != u64::MAX {
                    let lat = now - nt.woke_at;
                    nt.woke_at = u64::MAX;
                    self.rec.wake_latency(lat);
                }
                if nt.ready_at != u64::MAX {
                    let (wait, role) = (now - nt.ready_at, nt.role);
                    nt.ready_at = u64::MAX;
                    self.rec.ready_wait(role as usize, n, wait);
                }
                if self.cpus[cpu].curr.is_none() {
                    let c = &mut self.cpus[cpu];
                    c.idle_ns += now.saturating_sub(c.idle_from);
                }
                self.cpus[cpu].curr = Some(n);
                self.cpus[cpu].mode = Mode::Kernel;
                self.arm(cpu, now);
            }
            None => {
                if let Some(p) = prev {
                    self.tasks[p as usize].cursor = self.cpus[cpu].cursor.clone();
                    self.plat.trace(|| Event::Switch { prev, next: None, prev_state });
                }
                let now = self.plat.cursor();
                let c = &mut self.cpus[cpu];
                if c.curr.is_some() {
                    c.idle_from = now;
                }
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
        // Most policy calls ask for none: one length test instead of the buffer swap.
        if self.plat.resched_pending().borrow().is_empty() {
            return;
        }
        let mut buf = std::mem::take(&mut self.resched_buf);
        self.plat.drain_resched(&mut buf);
        for &(target, sent_at) in &buf {
            if target == cpu {
                self.cpus[cpu].need_resched = true;
                let now = self.plat.cursor();
                self.interrupt(cpu, now);
                continue;
            }
            // The platform charged the send when the policy asked; a request for a
            // target with an IPI already on its way carries no send and sends none.
            let t = &mut self.cpus[target];
            t.need_resched = true;
            if let Some(now) = sent_at {
                // A CPU idle past its spin has gone to sleep: it wakes later.
                let cost = &self.plat.cost;
                let asleep = cost.park_wake_ns > 0
                    && t.mode == Mode::Idle
                    && t.curr.is_none()
                    && now.saturating_sub(t.idle_since) >= cost.idle_spin_ns;
                t.ipi_at = now
                    + cost.ipi_ns(self.node_of[cpu], self.node_of[target])
                    + if asleep { cost.park_wake_ns } else { 0 };
                self.rec.ipis += 1;
                self.plat.trace(|| Event::Ipi { to: target as u32 });
                self.refresh(target);
            }
        }
        self.resched_buf = buf;
    }

    // ----- the timer -------------------------------------------------------------

    fn tick(&mut self, cpu: CpuId, t: u64) -> Result<(), SimError> {
        if cpu == 0 {
            self.rec.sample_queues(&*self.policy, t);
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

    /// The recorded trace of a finished run, labelled (`None` when not tracing).
    fn take_trace(&mut self, m: &Machine, spec: &impl PolicySource, seed: u64) -> Option<Trace> {
        let buf = self.plat.take_trace()?;
        let meta = TraceMeta {
            source: format!("schedlab sim: {} under {} on {}, seed {seed}", self.w.spec, spec.canonical(), m.name),
            cpus: self.cpus.len(),
            task_roles: self.tasks.iter().map(|t| self.roles[t.role as usize].clone()).collect(),
            locks: self.plat.lock_stats().into_iter().map(|l| l.name).collect(),
            track_names: Vec::new(),
        };
        Some(buf.finish(meta))
    }

    /// The policy's per-task figures, summarised per role (min, mean, max over the
    /// role's tasks, names in the policy's order).
    fn role_stats(&self) -> Vec<crate::report::RoleStats> {
        use crate::report::{RoleStats, StatSummary};
        let mut out = Vec::new();
        for (r, role) in self.roles.iter().enumerate() {
            let mut names: Vec<&'static str> = Vec::new();
            let mut acc: Vec<(u64, u64, u128)> = Vec::new();
            let mut tasks = 0u64;
            for (id, t) in self.tasks.iter().enumerate() {
                if t.role as usize != r {
                    continue;
                }
                let stats = self.policy.task_stats(id as schedlab_core::TaskId);
                if stats.is_empty() {
                    continue;
                }
                tasks += 1;
                for (k, v) in stats {
                    let i = names.iter().position(|n| *n == k).unwrap_or_else(|| {
                        names.push(k);
                        acc.push((u64::MAX, 0, 0));
                        names.len() - 1
                    });
                    let a = &mut acc[i];
                    *a = (a.0.min(v), a.1.max(v), a.2 + v as u128);
                }
            }
            if tasks == 0 {
                continue;
            }
            let stats = names
                .iter()
                .zip(&acc)
                .map(|(n, &(min, max, sum))| StatSummary {
                    name: n.to_string(),
                    min,
                    mean: (sum as f64 / tasks as f64 * 1000.0).round() / 1000.0,
                    max,
                })
                .collect();
            out.push(RoleStats { role: role.clone(), tasks, stats });
        }
        out
    }

    /// The report of a finished run.
    fn report(self, m: &Machine, spec: &impl PolicySource, seed: u64, wall_s: f64) -> Report {
        let virtual_ns = self.end_time.max(1);
        // A CPU idle at the end has been idle since `idle_from`.
        let idle_ns = self
            .cpus
            .iter()
            .map(|c| c.idle_ns + if c.curr.is_none() { virtual_ns.saturating_sub(c.idle_from) } else { 0 })
            .sum();
        let run = RunEnd {
            machine: m,
            policy: spec.canonical(),
            workload: self.w,
            seed,
            wall_s,
            virtual_ns,
            clock_start_ns: self.clock_start.unwrap_or(0).min(virtual_ns - 1),
            idle_ns,
            tasks: self.tasks.len() as u64,
            locks: self.plat.lock_stats(),
            bus: self.plat.bus_stats(),
            queues: self.policy.nr_queues(),
            policy_stats: self.policy.stats(),
            role_stats: self.role_stats(),
        };
        self.rec.report(run)
    }
}
