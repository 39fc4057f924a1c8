//! `trace:FILE[,mhz=N]`: a workload built from a recorded scheduling trace
//! (`docs/traces.md`, "Traces in").
//!
//! Two input formats, told apart by the file's first non-blank byte:
//!
//! * `{` — schedlab's own Chrome JSON trace (`schedlab sim --trace`, the runtime's
//!   `Builder::trace`, `schedlab validate --trace`): [`chrome`];
//! * anything else — `perf script` text of `perf sched record` / `perf record -e
//!   sched:*`: [`perf`].
//!
//! Both parsers produce the same stream of [`Raw`] events, which [`Builder`] turns
//! into one intermediate ([`Replay`]): per task, its ordered run bursts, blocks (and
//! who ended them), wake-ups it did and forks. [`Replay::workload`] then maps that to
//! task programs — the trace's dependency structure, not its timestamps:
//!
//! | in the trace | in the program |
//! |---|---|
//! | a run burst of `ns` | `Compute { cycles: ns · mhz / 1000 }` |
//! | a block ended by a wake-up from traced task W | `Recv` on the channel of edge W → task; W's program `Send`s on it where the wake happened |
//! | a block ended otherwise (timer, I/O, untraced waker, none recorded) | `Sleep` of the observed gap |
//! | a fork | `Spawn` of the child's program |
//! | a task alive at the trace's start, or forked by an untraced parent | spawned by the root |
//!
//! **No deadlock, by construction.** Each `Recv` is paired with exactly one `Send`,
//! and the `Send` is appended to the waker's program no later than the `Recv` to the
//! wakee's (at the wake-up; or, for a wake-up that found the task still running and is
//! followed by its block, at the wake-up and the block respectively). Before anything
//! is appended to a task's program its pending block is closed (as a `Sleep` if no
//! wake-up ended it). So a `Recv` that precedes a `Send` in a program was matched at
//! an earlier point of the trace than that `Send`: a chain of tasks each waiting for
//! the next one's `Send` goes strictly back in trace order, hence cannot close into a
//! cycle, and every `Recv` eventually gets its message under any scheduler.
//! `tests/trace_in.rs` checks it on generated traces with a random-order interpreter.

pub mod chrome;
pub mod perf;

use crate::{in_mm, Footprint, Metric, Op, Program, Workload};
use schedlab_core::options::{self, Options, Param, Value};
use schedlab_core::spec::Spec;
use schedlab_core::SpecError;
use std::collections::BTreeMap;
use std::path::Path;

/// Default clock for the ns → cycles rule: 700 MHz, the `smp-N` presets' CPUs, so on
/// those machines a replayed burst lasts as long as it did in the trace.
pub const DEFAULT_MHZ: u32 = 700;
/// Payload of a replayed wake-up's message: the trace has no sizes; small, so the
/// engines' copy cost stays minor next to the wake-up itself.
pub const SEND_BYTES: u32 = 64;

/// A trace file that cannot be read, naming the file and where.
pub fn err(path: &Path, line: Option<usize>, msg: impl std::fmt::Display) -> SpecError {
    match line {
        Some(l) => SpecError(format!("trace file {} line {l}: {msg}", path.display())),
        None => SpecError(format!("trace file {}: {msg}", path.display())),
    }
}

/// How a task left a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// Preempted or yielded: still runnable (also a slice cut by the trace's end).
    Runnable,
    /// Went to sleep: the next wake-up (or dispatch) ends the block.
    Blocked,
    /// Exited (a zombie in perf's `prev_state`).
    Exited,
}

/// One event of an input trace, tasks named by the trace's own keys (pids, task ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raw {
    /// `task` starts running.
    In { task: u64 },
    /// `task` stops running.
    Out { task: u64, how: Out },
    /// `waker` (`None`: not a task, e.g. a timer or an outside thread) makes `task` runnable.
    Wake { task: u64, waker: Option<u64> },
    /// `parent` (`None`: outside the trace) creates `child`.
    Fork { parent: Option<u64>, child: u64 },
    /// `task` exits.
    Exit { task: u64 },
}

/// What a task did, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Ran on a CPU for `ns` (`0`: a cancelled tentative wake-up, nothing).
    Run { ns: u64 },
    /// Woke task `task` (an index into [`Replay::tasks`]), which was blocked.
    Wake { task: usize },
    /// Created task `child`.
    Fork { child: usize },
    /// Was blocked for `ns`; `waker`: the traced task whose wake-up ended it.
    Block { waker: Option<usize>, ns: u64 },
}

/// One task of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskTrace {
    /// Its key in the input (pid or task id) and name, for roles.
    pub key: u64,
    pub name: String,
    pub steps: Vec<Step>,
}

/// Counts of what the mapping kept and dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Events read from the file that concern traced tasks.
    pub events: u64,
    /// Blocks ended by a traced waker (→ `Recv`/`Send` pairs).
    pub wake_edges: u64,
    /// Blocks ended by no traced waker (→ `Sleep`).
    pub sleeps: u64,
    /// Wake-ups of a task that was not blocked (already runnable or running): dropped.
    pub dropped_wakeups: u64,
    /// Blocks still open at the trace's end: dropped (the task's program ends there).
    pub open_blocks: u64,
    pub forks: u64,
}

/// The intermediate: every traced task's steps, and which ones the root spawns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replay {
    pub tasks: Vec<TaskTrace>,
    /// Tasks spawned by the root, in order of first appearance.
    pub roots: Vec<usize>,
    pub summary: Summary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Running {
        since: u64,
    },
    Runnable,
    /// Forked and not yet run: its first wake-up is the fork's own (perf's
    /// `sched_wakeup_new`, the engines' wake-up of a spawn), neither a block's end nor dropped.
    New,
    Blocked {
        since: u64,
    },
    Exited,
}

/// Folds a time-ordered stream of [`Raw`] events into a [`Replay`].
#[derive(Debug)]
pub struct Builder {
    replay: Replay,
    state: Vec<State>,
    /// Per task: a wake-up that came while it was still running; `Some((waker, index of
    /// the waker's tentative `Wake` step))` for a traced waker. Both engines record a
    /// switch-out after the task has decided to block (the runtime when its worker moves
    /// on; its wake-ups that race with a block have no waker), so a wake-up can land
    /// between the two: if the task's next event is a block, that wake-up ends it at once.
    early: Vec<Option<Option<(usize, usize)>>>,
    /// Current task of each key (a key is reused after an exit or a new fork).
    live: BTreeMap<u64, usize>,
    start: Option<u64>,
    last: u64,
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            replay: Replay::default(),
            state: Vec::new(),
            early: Vec::new(),
            live: BTreeMap::new(),
            start: None,
            last: 0,
        }
    }

    /// Name of task `key` for its role, when the format knows it (first one kept).
    pub fn name(&mut self, key: u64, name: &str) {
        if let Some(&i) = self.live.get(&key) {
            if self.replay.tasks[i].name.is_empty() {
                self.replay.tasks[i].name = name.to_string();
            }
        }
    }

    fn new_task(&mut self, key: u64, state: State) -> usize {
        let i = self.replay.tasks.len();
        self.replay.tasks.push(TaskTrace { key, name: String::new(), steps: Vec::new() });
        self.state.push(state);
        self.early.push(None);
        self.live.insert(key, i);
        i
    }

    /// The task of `key`, created on first sight as alive since the trace's start (in
    /// the state `first` implies) and spawned by the root.
    fn task(&mut self, key: u64, first: State) -> usize {
        if let Some(&i) = self.live.get(&key) {
            return i;
        }
        let i = self.new_task(key, first);
        self.replay.roots.push(i);
        i
    }

    fn push_run(&mut self, i: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        match self.replay.tasks[i].steps.last_mut() {
            Some(Step::Run { ns: n }) => *n += ns,
            _ => self.replay.tasks[i].steps.push(Step::Run { ns }),
        }
    }

    /// Before task `i` acts at `t`: close its run up to `t`, or its block (as a sleep:
    /// no wake-up of it was seen), so its program is in trace order.
    fn act(&mut self, i: usize, t: u64) {
        self.cancel_early(i);
        match self.state[i] {
            State::Running { since } => {
                self.push_run(i, t.saturating_sub(since));
                self.state[i] = State::Running { since: t };
            }
            State::Blocked { since } => {
                self.end_block(i, None, t.saturating_sub(since));
                self.state[i] = State::Running { since: t };
            }
            State::Runnable | State::New => self.state[i] = State::Running { since: t },
            State::Exited => {}
        }
    }

    /// Task `i` did something other than block after an early wake-up: that wake-up
    /// found it running, so it is dropped (its tentative `Wake` becomes a no-op).
    fn cancel_early(&mut self, i: usize) {
        if let Some(waker) = self.early[i].take() {
            if let Some((w, at)) = waker {
                self.replay.tasks[w].steps[at] = Step::Run { ns: 0 };
            }
            self.replay.summary.dropped_wakeups += 1;
        }
    }

    fn end_block(&mut self, i: usize, waker: Option<usize>, ns: u64) {
        match waker {
            Some(_) => self.replay.summary.wake_edges += 1,
            None => self.replay.summary.sleeps += 1,
        }
        self.replay.tasks[i].steps.push(Step::Block { waker, ns });
    }

    /// Feed one event at `t` ns. Events must come in time order.
    pub fn event(&mut self, t: u64, ev: Raw) {
        self.start.get_or_insert(t);
        self.last = self.last.max(t);
        let t0 = self.start.unwrap_or(t);
        self.replay.summary.events += 1;
        match ev {
            Raw::In { task } => {
                let i = self.task(task, State::Runnable);
                self.cancel_early(i);
                match self.state[i] {
                    // Dispatched with no wake-up seen: the block ended untraced.
                    State::Blocked { since } => self.end_block(i, None, t.saturating_sub(since)),
                    State::Running { since } => self.push_run(i, t.saturating_sub(since)),
                    State::Runnable | State::New | State::Exited => {}
                }
                if self.state[i] != State::Exited {
                    self.state[i] = State::Running { since: t };
                }
            }
            Raw::Out { task, how } => {
                let i = self.task(task, State::Running { since: t0 });
                if let State::Running { since } = self.state[i] {
                    self.push_run(i, t.saturating_sub(since));
                }
                if how == Out::Blocked {
                    if let Some(waker) = self.early[i].take() {
                        self.end_block(i, waker.map(|(w, _)| w), 0);
                        self.state[i] = State::Runnable;
                        return;
                    }
                }
                self.cancel_early(i);
                if self.state[i] != State::Exited {
                    self.state[i] = match how {
                        Out::Runnable => State::Runnable,
                        Out::Blocked => State::Blocked { since: t },
                        Out::Exited => State::Exited,
                    };
                }
            }
            Raw::Wake { task, waker } => {
                let i = self.task(task, State::Blocked { since: t0 });
                if self.state[i] == State::New {
                    return;
                }
                let w = waker.map(|k| self.task(k, State::Running { since: t0 })).filter(|&w| w != i);
                let State::Blocked { since } = self.state[i] else {
                    let running = matches!(self.state[i], State::Running { .. }) && self.early[i].is_none();
                    match w {
                        _ if !running => self.replay.summary.dropped_wakeups += 1,
                        Some(w) if self.state[w] != State::Exited => {
                            self.act(w, t);
                            self.early[i] = Some(Some((w, self.replay.tasks[w].steps.len())));
                            self.replay.tasks[w].steps.push(Step::Wake { task: i });
                        }
                        _ => self.early[i] = Some(None),
                    }
                    return;
                };
                match w {
                    Some(w) if self.state[w] != State::Exited => {
                        self.act(w, t);
                        self.replay.tasks[w].steps.push(Step::Wake { task: i });
                        self.end_block(i, Some(w), t.saturating_sub(since));
                    }
                    _ => self.end_block(i, None, t.saturating_sub(since)),
                }
                self.state[i] = State::Runnable;
            }
            Raw::Fork { parent, child } => {
                self.replay.summary.forks += 1;
                let p = parent.map(|k| self.task(k, State::Running { since: t0 }));
                let c = self.new_task(child, State::New);
                match p {
                    Some(p) if self.state[p] != State::Exited => {
                        self.act(p, t);
                        self.replay.tasks[p].steps.push(Step::Fork { child: c });
                    }
                    _ => self.replay.roots.push(c),
                }
            }
            Raw::Exit { task } => {
                let i = self.task(task, State::Running { since: t0 });
                self.act(i, t);
                self.state[i] = State::Exited;
            }
        }
    }

    /// The replay: runs still open end at the last timestamp; open blocks are dropped.
    pub fn finish(mut self) -> Replay {
        for i in 0..self.state.len() {
            self.cancel_early(i);
            match self.state[i] {
                State::Running { since } => self.push_run(i, self.last.saturating_sub(since)),
                State::Blocked { .. } => self.replay.summary.open_blocks += 1,
                _ => {}
            }
        }
        self.replay
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Replay {
    /// The workload: program 0 is the root, program `1 + i` task `i`; one channel per
    /// (waker, wakee) edge, numbered in order of first use; every receive counted
    /// ("wake-ups/s").
    pub fn workload(&self, spec: &str, mhz: u32) -> Workload {
        let mut chans: BTreeMap<(usize, usize), u32> = BTreeMap::new();
        let mut chan = |w: usize, t: usize| {
            let n = chans.len() as u32;
            *chans.entry((w, t)).or_insert(n)
        };
        let mut programs = Vec::with_capacity(1 + self.tasks.len());
        let mut root: Vec<Op> = self.roots.iter().map(|&i| spawn(i)).collect();
        root.push(Op::Exit);
        programs.push(Program { role: "root".into(), ops: root });
        let mut sends = 0u64;
        for (i, task) in self.tasks.iter().enumerate() {
            let mut ops = Vec::with_capacity(task.steps.len() + 1);
            for step in &task.steps {
                match *step {
                    Step::Run { ns } => {
                        let cycles = ns.saturating_mul(mhz as u64) / 1000;
                        if cycles > 0 {
                            ops.push(Op::Compute { cycles });
                        }
                    }
                    Step::Wake { task: t } => {
                        sends += 1;
                        ops.push(Op::Send { chan: chan(i, t), bytes: SEND_BYTES });
                    }
                    Step::Fork { child } => ops.push(spawn(child)),
                    Step::Block { waker: Some(w), .. } => ops.push(Op::Recv { chan: chan(w, i) }),
                    Step::Block { waker: None, ns } => {
                        if ns > 0 {
                            ops.push(Op::Sleep { ns });
                        }
                    }
                }
            }
            ops.push(Op::Exit);
            let role = if task.name.is_empty() { "task".to_string() } else { task.name.clone() };
            programs.push(Program { role, ops });
        }
        let channels = chans.len() as u32;
        Workload {
            spec: spec.to_string(),
            programs,
            channels,
            root: 0,
            root_params: in_mm(1),
            metric: Metric::counting("wake-ups/s", vec![true; channels as usize]),
            expected_messages: sends,
            expected_tasks: 1 + self.tasks.len() as u64,
            bound: Vec::new(),
            working_set: Vec::new(),
            buffers: Vec::new(),
        }
    }
}

/// Task `i` as its parent spawns it: its own address space (a trace does not say
/// which tasks are threads of one process).
fn spawn(i: usize) -> Op {
    Op::Spawn { program: 1 + i as u32, params: in_mm(2 + i as u32) }
}

/// The options after a trace's file name (`trace:FILE[,mhz=N]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceOptions {
    pub mhz: u32,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions { mhz: DEFAULT_MHZ }
    }
}

impl Options for TraceOptions {
    const PARAMS: &'static [Param<TraceOptions>] = &[Param::int(
        "mhz",
        1,
        100_000,
        "the clock the trace's CPU times are turned into cycles at",
        |o: &TraceOptions| Value::Int(o.mhz as i64),
        |o, v| o.mhz = v.int() as u32,
    )
    .unit("MHz")];
}

/// `trace:FILE[,mhz=N]` → (file, MHz). The file name may hold any character, so the
/// options are split off at the last `,mhz=` rather than at the spec syntax's commas.
pub fn parse_spec(spec: &str) -> Result<(String, u32), SpecError> {
    let rest = spec.strip_prefix("trace:").ok_or_else(|| SpecError(format!("'{spec}' is not a trace: spec")))?;
    let (file, opts) = match rest.rsplit_once(",mhz=") {
        Some((f, m)) => (f, format!("mhz={m}")),
        None => (rest, String::new()),
    };
    let mut opts = Spec::parse("workload", &format!("trace:{opts}"))?;
    let TraceOptions { mhz } = options::parse(&mut opts)?;
    opts.finish(&options::keys::<TraceOptions>())?;
    if file.is_empty() {
        return Err(SpecError("workload 'trace': no file given (trace:FILE[,mhz=N])".into()));
    }
    Ok((file.to_string(), mhz))
}

/// Read a trace file (either format) into its intermediate.
pub fn read(path: &Path) -> Result<Replay, SpecError> {
    let text = std::fs::read(path).map_err(|e| err(path, None, e))?;
    let text = String::from_utf8(text).map_err(|e| err(path, None, format!("not UTF-8 text ({e})")))?;
    let replay = match text.trim_start().as_bytes().first() {
        None => return Err(err(path, None, "empty file")),
        Some(b'{') => chrome::parse(path, &text)?,
        Some(_) => perf::parse(path, &text)?,
    };
    if replay.tasks.is_empty() {
        return Err(err(path, None, "no task of the trace ran"));
    }
    Ok(replay)
}

/// Build the `trace:` workload of `spec`, refusing one whose footprint exceeds
/// `max_bytes`; also returns what the mapping kept and dropped.
pub fn load(spec: &str, max_bytes: u64) -> Result<(Workload, Summary), SpecError> {
    let (file, mhz) = parse_spec(spec)?;
    let replay = read(Path::new(&file))?;
    let w = replay.workload(spec, mhz);
    let fp = Footprint {
        tasks: w.expected_tasks,
        channels: w.channels as u64,
        ops: w.programs.iter().map(|p| p.ops.len() as u64).sum(),
    };
    fp.check(spec, max_bytes)?;
    w.validate().map_err(|e| SpecError(format!("workload '{spec}': {e}")))?;
    Ok((w, replay.summary))
}
