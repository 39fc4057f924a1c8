//! # schedlab-rtrun: a workload run on the real runtime
//!
//! The runtime's engine, as `schedlab_sim::simulate` is the simulator's: the same
//! [`Workload`] the simulator interprets in virtual time runs here as real futures on
//! a [`Runtime`] built by the caller (its workers, pinning, tick rate and policy).
//! `Compute` spins for its cycles at the host rate (preemptible, see [`compute`]),
//! `Send`/`Recv` are real `async-channel` operations, `Sleep` is a timer ([`timer`]), `Yield` is [`schedlab_rt::yield_now`],
//! `Spawn` spawns a runtime task. Between operations the interpreter offers a
//! [`schedlab_rt::preemption_point`], where the simulated kernel would act on
//! `need_resched`. A spawned task gets its program's nice value and real-time
//! priority (a SCHED_FIFO task is an rt task of the policy schedulers); `cpus_allowed`
//! and IRQ lines are not applied (the runtime has no machine description). What the
//! simulator measures per role is measured here as far as a runtime can see it: each
//! role's wait from spawn to first run, and, for workloads with a client time-out,
//! request–response times.
//!
//! **Bounded channels.** A channel the workload carries on a socket holds as many
//! messages as it would in the simulator on the calibrated host machine, whose kernel
//! is this host's (Linux 6: [`SocketBuffers::LINUX_6`]); a send to a full one waits
//! for room. `async-channel` wakes one waiting sender per message received, where the
//! kernel (and the simulator) wakes all of them once a quarter of the buffer is left:
//! the bound is the same, the hand-over less bursty.
//!
//! `schedlab-validate` compares these runs with the simulator's on a calibrated host
//! machine; `schedlab reproduce` runs NetBench's starvation probe through
//! [`run_on_runtime`] directly.

pub mod timer;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_core::TaskParams;
use schedlab_rt::{Runtime, TaskOpts};
use schedlab_workloads::{buffers, Cursor, Op, ProgId, SocketBuffers, Workload};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use timer::sleep;

/// Why a workload did not run to its end on the runtime.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The workload's programs do not hold together (a channel or program index out of
    /// range, no programs): checked before any task starts.
    #[error("invalid workload: {0}")]
    Invalid(#[from] schedlab_workloads::InvalidWorkload),
    /// The root task panicked or was cancelled; the runtime itself stays up.
    #[error("root task failed: {0}")]
    RootFailed(schedlab_rt::JoinError),
}

/// What a real run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct RealRun {
    pub wall_s: f64,
    /// The measured span: from the benchmark's clock start (the workload's first
    /// `StartClock`, after its set-up; the run's start without one) to its stop (the
    /// first `StopClock`, where the run ends; the last task's exit without one).
    pub measured_s: f64,
    pub completed: u64,
    pub sent: u64,
    pub received: u64,
    pub tasks: u64,
    /// What was completed within the measured span, per second of it, in the
    /// workload's unit (`completed` counts the whole run).
    pub throughput: f64,
    /// Per role (order of first appearance): tasks spawned and their longest wait from
    /// spawn to first poll.
    pub first_run: Vec<RoleFirstRun>,
    /// Workloads with a client time-out: responses timed, the longest, and how many
    /// came later than the time-out (with the requests still unanswered at the
    /// benchmark's stop that were already older than it).
    pub responses: u64,
    pub response_max_ns: u64,
    pub timed_out: u64,
}

/// One role's spawn-to-first-run waits on the runtime.
#[derive(Clone, Debug, PartialEq)]
pub struct RoleFirstRun {
    pub role: String,
    pub tasks: u64,
    pub max_ns: u64,
}

struct Ctx {
    w: Workload,
    tx: Vec<async_channel::Sender<()>>,
    rx: Vec<async_channel::Receiver<()>>,
    ns_per_cycle: f64,
    seed: u64,
    sent: AtomicU64,
    received: AtomicU64,
    completed: AtomicU64,
    spawned: AtomicU64,
    live: AtomicU64,
    done: async_channel::Sender<()>,
    /// Role index of each program, and per role: tasks, longest spawn → first poll.
    role_of: Vec<u32>,
    roles: Vec<String>,
    role_tasks: Vec<AtomicU64>,
    role_max_ns: Vec<AtomicU64>,
    responses: AtomicU64,
    response_max_ns: AtomicU64,
    timed_out: AtomicU64,
    /// When the workload's benchmark started its clock (its first `StartClock`).
    clock_start: std::sync::OnceLock<Instant>,
    /// Counted receives before the clock started (a warm-up, a set-up): not the
    /// measured span's.
    before_start: AtomicU64,
    /// The workload has a `StopClock`: counted receives go to `completed` at once, so
    /// that the count at the stop is known.
    counts_live: bool,
    /// When the benchmark stopped its clock (its first `StopClock`), and the count then.
    clock_stop: std::sync::OnceLock<(Instant, u64)>,
}

/// Spin for `ns` nanoseconds of real CPU time (user-mode compute). Like user mode
/// under the simulated kernel, the computation is preemptible at once: when the
/// policy wants the worker ([`schedlab_rt::should_yield`]) the task is switched out
/// at a preemption point and the rest of the computation continues when it runs
/// again (the time it spent switched out does not count as compute).
async fn compute(ns: u64) {
    let mut left = Duration::from_nanos(ns);
    while !left.is_zero() {
        let start = Instant::now();
        let mut ran = Duration::ZERO;
        while ran < left && !schedlab_rt::should_yield() {
            std::hint::spin_loop();
            ran = start.elapsed();
        }
        left = left.saturating_sub(ran);
        schedlab_rt::preemption_point().await;
    }
}

/// Run `w` on `rt` until every task has exited. `ns_per_cycle` converts `Compute`
/// cycles to host time (the calibrated host machine uses 1.0: 1000 "MHz").
pub fn run_on_runtime(rt: &Runtime, w: &Workload, ns_per_cycle: f64, seed: u64) -> Result<RealRun, RunError> {
    w.validate()?;
    let (tx, rx): (Vec<_>, Vec<_>) = buffers::limits(w, &SocketBuffers::LINUX_6)
        .into_iter()
        .map(|limit| match limit {
            Some(l) => async_channel::bounded::<()>(l.max as usize),
            None => async_channel::unbounded::<()>(),
        })
        .unzip();
    let (done_tx, done_rx) = async_channel::bounded(1);
    let (roles, role_of) = w.roles();
    let ctx = Arc::new(Ctx {
        w: w.clone(),
        tx,
        rx,
        ns_per_cycle,
        seed,
        sent: AtomicU64::new(0),
        received: AtomicU64::new(0),
        completed: AtomicU64::new(0),
        spawned: AtomicU64::new(1),
        live: AtomicU64::new(1),
        done: done_tx,
        role_of,
        role_tasks: roles.iter().map(|_| AtomicU64::new(0)).collect(),
        role_max_ns: roles.iter().map(|_| AtomicU64::new(0)).collect(),
        roles,
        responses: AtomicU64::new(0),
        response_max_ns: AtomicU64::new(0),
        timed_out: AtomicU64::new(0),
        clock_start: std::sync::OnceLock::new(),
        before_start: AtomicU64::new(0),
        counts_live: w.programs.iter().any(|p| p.ops.contains(&Op::StopClock)),
        clock_stop: std::sync::OnceLock::new(),
    });
    let start = Instant::now();
    let root = rt.spawn_with(task_opts(&w.root_params), interpret(ctx.clone(), w.root, 0, start));
    rt.block_on(async {
        let _ = done_rx.recv().await;
    });
    let end = Instant::now();
    let wall_s = end.duration_since(start).as_secs_f64();
    let (measured_end, measured_completed) = match ctx.clock_stop.get() {
        Some(&(at, count)) => (at, count),
        None => (end, ctx.completed.load(Relaxed)),
    };
    let measured_s = measured_end.saturating_duration_since(*ctx.clock_start.get().unwrap_or(&start)).as_secs_f64();
    rt.block_on(root).map_err(RunError::RootFailed)?;
    let completed = ctx.completed.load(Relaxed);
    Ok(RealRun {
        wall_s,
        completed,
        sent: ctx.sent.load(Relaxed),
        received: ctx.received.load(Relaxed),
        tasks: ctx.spawned.load(Relaxed),
        measured_s,
        throughput: w.metric.units(measured_completed.saturating_sub(ctx.before_start.load(Relaxed)))
            / measured_s.max(1e-9),
        first_run: ctx
            .roles
            .iter()
            .enumerate()
            .map(|(i, r)| RoleFirstRun {
                role: r.clone(),
                tasks: ctx.role_tasks[i].load(Relaxed),
                max_ns: ctx.role_max_ns[i].load(Relaxed),
            })
            .collect(),
        responses: ctx.responses.load(Relaxed),
        response_max_ns: ctx.response_max_ns.load(Relaxed),
        timed_out: ctx.timed_out.load(Relaxed),
    })
}

/// A program's task parameters as runtime task options (nice, real-time priority).
fn task_opts(p: &TaskParams) -> TaskOpts {
    let rt_priority = if p.class.is_rt() { p.rt_priority.max(1) } else { 0 };
    // The address space too: goodness's same-`mm` bonus is a decision input, and
    // without it every runtime task would share one `mm` (Chat's client and server,
    // hackbench's groups), unlike the simulator's.
    TaskOpts { nice: p.nice, rt_priority, mm: Some(p.mm), ..TaskOpts::default() }
}

/// One task running its program (boxed so that `Spawn` can recurse).
fn interpret(
    ctx: Arc<Ctx>,
    prog: ProgId,
    index: u64,
    spawned_at: Instant,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    Box::pin(async move {
        let role = ctx.role_of[prog as usize] as usize;
        ctx.role_tasks[role].fetch_add(1, Relaxed);
        ctx.role_max_ns[role].fetch_max(spawned_at.elapsed().as_nanos() as u64, Relaxed);
        let mut last_send = Instant::now();
        let mut rng = ChaCha8Rng::seed_from_u64(ctx.seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let ops = &ctx.w.programs[prog as usize].ops[..];
        // The simulator's cursor: loops mean the same on both engines.
        let mut cursor = Cursor::new(ops);
        // Counted here and added to the shared totals once, at the task's exit: a
        // shared counter bumped per message is a line both CPUs write at every send
        // and receive (a cross-CPU read-modify-write, 70–90 ns here), a cost of the
        // harness, not of the workload, which the simulator does not price.
        let (mut sent, mut received, mut completed, mut before_start) = (0u64, 0u64, 0u64, 0u64);
        loop {
            // After the benchmark's stop, every task leaves at its next operation.
            if ctx.counts_live && ctx.clock_stop.get().is_some() {
                break;
            }
            match cursor.fetch(ops) {
                Op::Compute { cycles } => compute((cycles as f64 * ctx.ns_per_cycle) as u64).await,
                Op::ComputeUniform { min, max } => {
                    let c = rng.gen_range(min..=max.max(min));
                    compute((c as f64 * ctx.ns_per_cycle) as u64).await
                }
                Op::Send { chan, .. } => {
                    let tx = &ctx.tx[chan as usize];
                    // A channel is closed only by the benchmark's stop.
                    let sent_ok = match tx.try_send(()) {
                        Ok(()) => true,
                        Err(async_channel::TrySendError::Full(())) => tx.send(()).await.is_ok(),
                        Err(async_channel::TrySendError::Closed(())) => false,
                    };
                    if !sent_ok {
                        break;
                    }
                    sent += 1;
                    // Only a response-time metric reads it: a clock read (~20 ns here)
                    // per send is the harness's cost, which the simulator does not price.
                    if ctx.w.metric.timeout_ns.is_some() {
                        last_send = Instant::now();
                    }
                }
                Op::Recv { chan } => {
                    if ctx.rx[chan as usize].recv().await.is_err() {
                        // Closed by the benchmark's stop. A request still unanswered
                        // then and already older than the time-out is one its client
                        // has reported as an error (as the simulator counts it).
                        if let (Some(timeout), Some(&(stop, _))) = (ctx.w.metric.timeout_ns, ctx.clock_stop.get()) {
                            if ctx.w.metric.counted[chan as usize] {
                                let ns = stop.saturating_duration_since(last_send).as_nanos() as u64;
                                ctx.timed_out.fetch_add((ns > timeout) as u64, Relaxed);
                            }
                        }
                        break;
                    }
                    received += 1;
                    if ctx.w.metric.counted[chan as usize] {
                        if ctx.counts_live {
                            ctx.completed.fetch_add(1, Relaxed);
                        } else {
                            completed += 1;
                        }
                        // A read of a line written once: no cross-CPU traffic per message.
                        if ctx.clock_start.get().is_none() {
                            before_start += 1;
                        }
                        if let Some(timeout) = ctx.w.metric.timeout_ns {
                            let ns = last_send.elapsed().as_nanos() as u64;
                            ctx.responses.fetch_add(1, Relaxed);
                            ctx.response_max_ns.fetch_max(ns, Relaxed);
                            ctx.timed_out.fetch_add((ns > timeout) as u64, Relaxed);
                        }
                    }
                }
                Op::Sleep { ns } => sleep(Duration::from_nanos(ns)).await,
                Op::Yield => schedlab_rt::yield_now().await,
                Op::Spawn { program, params } => {
                    let i = ctx.spawned.fetch_add(1, Relaxed);
                    ctx.live.fetch_add(1, Relaxed);
                    let task = interpret(ctx.clone(), program, i, Instant::now());
                    drop(schedlab_rt::spawn_with(task_opts(&params), task));
                }
                Op::StartClock => {
                    let _ = ctx.clock_start.set(Instant::now());
                }
                Op::StopClock => {
                    if ctx.clock_stop.set((Instant::now(), ctx.completed.load(Relaxed))).is_ok() {
                        // Wake every task blocked on a channel; each leaves at its
                        // next operation.
                        for tx in &ctx.tx {
                            tx.close();
                        }
                    }
                }
                Op::Exit => break,
                Op::Loop { .. } => unreachable!("Cursor::fetch enters loops"),
            }
            cursor.advance();
            // The simulated kernel acts on a pending reschedule at every operation
            // boundary (return to user mode); so does the interpreter.
            schedlab_rt::preemption_point().await;
        }
        ctx.sent.fetch_add(sent, Relaxed);
        ctx.received.fetch_add(received, Relaxed);
        ctx.completed.fetch_add(completed, Relaxed);
        ctx.before_start.fetch_add(before_start, Relaxed);
        // AcqRel: the last task's decrement sees every other task's totals.
        if ctx.live.fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
            let _ = ctx.done.try_send(());
        }
    })
}
