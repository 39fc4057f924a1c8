//! Property and stress tests run against every policy (the 2.4 family, O(1), cfs and eevdf): random sequences of
//! fork / wakeup / schedule / tick / yield on random small machines must keep each
//! policy's structural invariants, never run one task on two CPUs, and never lose or
//! duplicate a runnable task.

use proptest::prelude::*;
use schedlab_core::cpu::{CpuId, CpuMask};
use schedlab_core::policies::dss;
use schedlab_core::policies::pmqs::{self, Balancer, LbReading, PmqsConfig};
use schedlab_core::{
    BuildEnv, NullPlatform, Policy, PolicySource, PolicySpec, PrevState, SchedClass, TaskId, TaskParams, Topology,
};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

const CAP: usize = 40;

fn pmqs_spec(pool: usize, lb: Balancer, period: u32, reading: LbReading) -> PolicySpec {
    PolicySpec::of::<pmqs::Kind>(PmqsConfig { pool: Some(pool), lb, period, reading, ..Default::default() })
}

/// [`pmqs_spec`] with the balancer's scope and lock readings (`scope=queues`, `locks=all`).
fn pmqs_readings(
    pool: usize,
    lb: Balancer,
    period: u32,
    reading: LbReading,
    queues: bool,
    all_locks: bool,
) -> PolicySpec {
    PolicySpec::of::<pmqs::Kind>(PmqsConfig {
        pool: Some(pool),
        lb,
        period,
        reading,
        scope: if queues { pmqs::LbScope::Queues } else { pmqs::LbScope::Pools },
        locks: if all_locks { pmqs::LbLocks::All } else { pmqs::LbLocks::Pair },
        ..Default::default()
    })
}
const HZ: u32 = 100;

#[derive(Clone, Debug)]
enum Op {
    /// Fork a task on `cpu` (child of that CPU's current task if `fork`) and wake it.
    New { cpu: usize, nice: i8, mm: u32, mask: u64, class: u8, fork: bool, sync: bool },
    /// Wake the `pick`-th sleeping task from `cpu`.
    Wake { pick: usize, cpu: usize, sync: bool },
    /// `schedule()` on `cpu`; its current task is preempted (0, 1), blocks (2) or exits (3).
    Schedule { cpu: usize, state: u8 },
    /// Timer tick on `cpu`; reschedule if the quantum ran out.
    Tick { cpu: usize },
    /// `sched_yield()` by `cpu`'s current task, then `schedule()`.
    Yield { cpu: usize },
    /// Deliver every pending reschedule request.
    Resched,
    /// Advance the clock.
    Advance { ns: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..8, -20i8..20, 0u32..4, any::<u64>(), 0u8..10, any::<bool>(), any::<bool>())
            .prop_map(|(cpu, nice, mm, mask, class, fork, sync)| Op::New {
                cpu, nice, mm, mask, class, fork, sync
            }),
        3 => (any::<usize>(), 0usize..8, any::<bool>())
            .prop_map(|(pick, cpu, sync)| Op::Wake { pick, cpu, sync }),
        4 => (0usize..8, 0u8..4).prop_map(|(cpu, state)| Op::Schedule { cpu, state }),
        4 => (0usize..8).prop_map(|cpu| Op::Tick { cpu }),
        1 => (0usize..8).prop_map(|cpu| Op::Yield { cpu }),
        2 => Just(Op::Resched),
        1 => (1u64..50_000_000).prop_map(|ns| Op::Advance { ns }),
    ]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Sleeping,
    Runnable,
    Exited,
}

/// The engine's view: what each CPU runs and what state each task is in.
struct Harness {
    spec: PolicySpec,
    ncpus: usize,
    p: NullPlatform,
    pol: Box<dyn Policy<NullPlatform>>,
    curr: Vec<Option<TaskId>>,
    state: Vec<St>,
    pending_resched: Vec<CpuId>,
    now: u64,
}

impl Harness {
    fn new(spec: PolicySpec, ncpus: usize) -> Harness {
        let p = NullPlatform::new(0);
        let pol = spec.build(&p, &BuildEnv { topo: &Topology::smp(ncpus), capacity: CAP, hz: HZ }).expect("valid spec");
        Harness { spec, ncpus, p, pol, curr: vec![None; ncpus], state: Vec::new(), pending_resched: Vec::new(), now: 0 }
    }

    fn collect_resched(&mut self) -> Result<(), String> {
        for cpu in self.p.take_resched() {
            if cpu >= self.ncpus {
                return Err(format!("reschedule request for cpu {cpu}"));
            }
            self.pending_resched.push(cpu);
        }
        Ok(())
    }

    fn schedule(&mut self, cpu: CpuId, state: PrevState) -> Result<(), String> {
        let prev = self.curr[cpu];
        let state = if prev.is_none() { PrevState::Runnable } else { state };
        self.p.cpu = cpu;
        let next = self.pol.schedule(&self.p, prev, state);
        if let Some(t) = prev {
            match state {
                PrevState::Runnable => {}
                PrevState::Blocked => self.state[t as usize] = St::Sleeping,
                PrevState::Exited => self.state[t as usize] = St::Exited,
            }
        }
        self.curr[cpu] = None;
        if let Some(n) = next {
            if self.state.get(n as usize) != Some(&St::Runnable) {
                return Err(format!("cpu {cpu} picked task {n} which is not runnable"));
            }
            if let Some(other) = self.curr.iter().position(|&c| c == Some(n)) {
                return Err(format!("cpu {cpu} picked task {n}, running on cpu {other}"));
            }
            if !self.pol.tasks().get(n).cpus_allowed().contains(cpu) {
                return Err(format!("cpu {cpu} picked task {n}, not allowed there"));
            }
        } else {
            self.check_idle_is_justified(cpu)?;
        }
        self.curr[cpu] = next;
        Ok(())
    }

    /// A CPU may go idle only if nothing it could run was visible to it: DSS sees the
    /// whole list; MQS at least its own queue (remote tasks may hide behind a stale
    /// max_na, as in the patch).
    fn check_idle_is_justified(&self, cpu: CpuId) -> Result<(), String> {
        let tasks = self.pol.tasks();
        for (t, &s) in self.state.iter().enumerate() {
            let ts = tasks.get(t as TaskId);
            let visible = self.spec.config::<dss::Kind>().is_some() || ts.on_rq() == Some(cpu);
            if s == St::Runnable
                && visible
                && ts.cpus_allowed().contains(cpu)
                && !self.curr.contains(&Some(t as TaskId))
            {
                return Err(format!("cpu {cpu} went idle although task {t} could run"));
            }
        }
        Ok(())
    }

    fn step(&mut self, op: &Op) -> Result<(), String> {
        let n = self.ncpus;
        match *op {
            Op::New { cpu, nice, mm, mask, class, fork, sync } => {
                let id = self.state.len() as TaskId;
                if id as usize >= CAP {
                    return Ok(());
                }
                let cpu = cpu % n;
                let mut allowed = CpuMask(mask & CpuMask::first(n).0);
                if allowed.is_empty() || mask % 3 != 0 {
                    // Mostly unrestricted, sometimes pinned or partially restricted.
                    allowed = CpuMask::all();
                }
                let (class, rt_priority) = match class {
                    0 => (SchedClass::Rr, 1 + (mask % 99) as u8),
                    1 => (SchedClass::Fifo, 1 + (mask % 99) as u8),
                    _ => (SchedClass::Other, 0),
                };
                let params = TaskParams { nice, class, rt_priority, mm, cpus_allowed: allowed };
                let parent = if fork { self.curr[cpu] } else { None };
                self.p.cpu = cpu;
                self.pol.task_new(&self.p, id, &params, parent);
                self.state.push(St::Sleeping);
                self.pol.wake_up(&self.p, id, sync);
                self.state[id as usize] = St::Runnable;
            }
            Op::Wake { pick, cpu, sync } => {
                let sleeping: Vec<usize> = (0..self.state.len()).filter(|&t| self.state[t] == St::Sleeping).collect();
                if !sleeping.is_empty() {
                    let t = sleeping[pick % sleeping.len()];
                    self.p.cpu = cpu % n;
                    self.pol.wake_up(&self.p, t as TaskId, sync);
                    self.state[t] = St::Runnable;
                }
            }
            Op::Schedule { cpu, state } => {
                let state = match state {
                    2 => PrevState::Blocked,
                    3 => PrevState::Exited,
                    _ => PrevState::Runnable,
                };
                self.schedule(cpu % n, state)?;
            }
            Op::Tick { cpu } => {
                let cpu = cpu % n;
                self.p.cpu = cpu;
                let resched = self.pol.tick(&self.p, self.curr[cpu]);
                self.pol.balance(&self.p);
                if resched {
                    self.schedule(cpu, PrevState::Runnable)?;
                }
            }
            Op::Yield { cpu } => {
                let cpu = cpu % n;
                if let Some(t) = self.curr[cpu] {
                    self.p.cpu = cpu;
                    self.pol.yield_now(&self.p, t);
                    self.schedule(cpu, PrevState::Runnable)?;
                }
            }
            Op::Resched => {
                self.collect_resched()?;
                let mut targets = std::mem::take(&mut self.pending_resched);
                targets.sort_unstable();
                targets.dedup();
                for cpu in targets {
                    self.schedule(cpu, PrevState::Runnable)?;
                }
            }
            Op::Advance { ns } => {
                self.now += ns;
                self.p.set_now(self.now);
            }
        }
        self.collect_resched()?;
        self.check()
    }

    fn check(&self) -> Result<(), String> {
        self.pol.check_invariants().map_err(|e| e.0)?;
        let tasks = self.pol.tasks();
        for (t, &s) in self.state.iter().enumerate() {
            let ts = tasks.get(t as TaskId);
            let running = self.curr.iter().filter(|&&c| c == Some(t as TaskId)).count();
            if running > 1 {
                return Err(format!("task {t} is curr of {running} cpus"));
            }
            if ts.has_cpu() != (running == 1) {
                return Err(format!("task {t}: has_cpu {} but running on {running}", ts.has_cpu()));
            }
            // Runnable tasks (running ones included) are on exactly one queue; others on none.
            if (s == St::Runnable) != ts.on_rq().is_some() {
                return Err(format!("task {t} is {s:?} but on_rq = {:?}", ts.on_rq()));
            }
            if ts.live() != (s != St::Exited) {
                return Err(format!("task {t} is {s:?} but live = {}", ts.live()));
            }
        }
        Ok(())
    }
}

fn run(spec: PolicySpec, ncpus: usize, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut h = Harness::new(spec.clone(), ncpus);
    for (i, op) in ops.iter().enumerate() {
        h.step(op).map_err(|e| TestCaseError::fail(format!("{spec:?}, step {i} {op:?}: {e}")))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn dss_keeps_invariants_under_random_operations(
        ncpus in 1usize..=8,
        ops in proptest::collection::vec(op(), 1..250),
    ) {
        run(PolicySpec::parse("dss").unwrap(), ncpus, &ops)?;
    }

    #[test]
    fn mqs_keeps_invariants_under_random_operations(
        ncpus in 1usize..=8,
        ops in proptest::collection::vec(op(), 1..250),
    ) {
        run(PolicySpec::parse("mqs").unwrap(), ncpus, &ops)?;
    }

    /// O(1) with its default (2002) options and with short deadlines, no cache-hot
    /// protection and the fix options, so that starvation switches, swaps and pulls
    /// happen within a few hundred operations.
    #[test]
    fn o1_keeps_invariants_under_random_operations(
        ncpus in 1usize..=8,
        variant in 0usize..4,
        ops in proptest::collection::vec(op(), 1..250),
    ) {
        let spec = [
            "o1",
            "o1:starvation_limit=1,min_timeslice=1,max_timeslice=3,busy_rebalance=2",
            "o1:starvation_limit=0,max_sleep_avg=5,expired_prio_guard=on,scale=off,idle_rebalance=3",
            "o1:cache_decay=0,busy_rebalance=1,max_timeslice=20ms,prio_bonus_ratio=70,interactive_delta=3",
        ][variant];
        run(PolicySpec::parse(spec).unwrap(), ncpus, &ops)?;
    }

    /// eevdf with its defaults, with every placement feature off, and with a long
    /// unscaled slice and eager balancing.
    #[test]
    fn eevdf_keeps_invariants_under_random_operations(
        ncpus in 1usize..=8,
        variant in 0usize..3,
        ops in proptest::collection::vec(op(), 1..250),
    ) {
        let spec = [
            "eevdf",
            "eevdf:place_lag=off,place_deadline_initial=off,run_to_parity=off,delay_dequeue=off",
            "eevdf:base_slice=20ms,scaling=none,imbalance_pct=100",
        ][variant];
        run(PolicySpec::parse(spec).unwrap(), ncpus, &ops)?;
    }

    /// cfs with its defaults, with compat yield, with short slices, no wake-up
    /// granularity and eager balancing, and with long slices and reluctant balancing.
    #[test]
    fn fair_keeps_invariants_under_random_operations(
        ncpus in 1usize..=8,
        variant in 0usize..4,
        ops in proptest::collection::vec(op(), 1..250),
    ) {
        let spec = [
            "cfs",
            "cfs:yield=tail,imbalance_pct=110",
            "cfs:latency=1ms,min_granularity=100us,wakeup_granularity=0,imbalance_pct=100",
            "cfs:latency=100ms,min_granularity=20ms,wakeup_granularity=10ms,imbalance_pct=300",
        ][variant];
        run(PolicySpec::parse(spec).unwrap(), ncpus, &ops)?;
    }

    /// PMQS with every balancer and a pool size dividing the CPU count.
    #[test]
    fn pmqs_keeps_invariants_under_random_operations(
        ncpus in prop_oneof![Just(1usize), Just(2), Just(4), Just(6), Just(8)],
        pool_pick in 0usize..4,
        lb in prop_oneof![Just(Balancer::Off), Just(Balancer::Ip), Just(Balancer::Lbp), Just(Balancer::Lbc)],
        threshold in any::<bool>(),
        queues in any::<bool>(),
        all_locks in any::<bool>(),
        ops in proptest::collection::vec(op(), 1..250),
    ) {
        let divisors: Vec<usize> = (1..=ncpus).filter(|d| ncpus % d == 0).collect();
        let pool = divisors[pool_pick % divisors.len()];
        let reading = if threshold { LbReading::Threshold } else { LbReading::Period };
        run(pmqs_readings(pool, lb, 10, reading, queues, all_locks), ncpus, &ops)?;
    }
}

// ------------------------------------------------------ concurrent stress ---------

/// Real threads, one per CPU, on `NullPlatform`'s real locks. Each thread schedules,
/// ticks, yields, blocks its task and wakes sleeping tasks. A task's `owner` slot is
/// claimed when a CPU starts running it and released before that CPU calls
/// `schedule()` again, so a failed claim means two CPUs picked the same task.
fn stress(spec: PolicySpec, ncpus: usize, ntasks: usize, iters: u32) {
    stress_with_clock(spec, ncpus, ntasks, iters, 1000)
}

/// [`stress`] with each CPU's clock advancing `step_ns` per iteration (O(1) needs
/// whole jiffies to pass before a task is cold enough to be pulled).
fn stress_with_clock(spec: PolicySpec, ncpus: usize, ntasks: usize, iters: u32, step_ns: u64) {
    const NONE: usize = usize::MAX;
    let p0 = NullPlatform::new(0);
    let pol: Arc<dyn Policy<NullPlatform>> = spec
        .build(&p0, &BuildEnv { topo: &Topology::smp(ncpus), capacity: ntasks, hz: HZ })
        .expect("valid spec")
        .into();
    for t in 0..ntasks as TaskId {
        let params = TaskParams { nice: (t % 7) as i8 - 3, mm: t % 3, ..TaskParams::default() };
        let mut p = NullPlatform::new(t as usize % ncpus);
        p.on(t as usize % ncpus);
        pol.task_new(&p, t, &params, None);
        pol.wake_up(&p, t, false);
    }
    let owner: Arc<Vec<AtomicUsize>> = Arc::new((0..ntasks).map(|_| AtomicUsize::new(NONE)).collect());
    let sleeping = Arc::new(parking_lot::Mutex::new(Vec::<TaskId>::new()));
    let need_resched: Arc<Vec<AtomicBool>> = Arc::new((0..ncpus).map(|_| AtomicBool::new(true)).collect());
    let threads: Vec<_> = (0..ncpus)
        .map(|cpu| {
            let (pol, owner, sleeping, need_resched) =
                (pol.clone(), owner.clone(), sleeping.clone(), need_resched.clone());
            std::thread::spawn(move || {
                let p = NullPlatform::new(cpu);
                let mut curr: Option<TaskId> = None;
                let mut rng = 0x9e3779b97f4a7c15u64 ^ (cpu as u64 + 1);
                let mut rand = move || {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng
                };
                for i in 0..iters {
                    p.set_now(i as u64 * step_ns);
                    let r = rand() % 100;
                    let mut state = None;
                    if r < 40 {
                        if pol.tick(&p, curr) {
                            state = Some(PrevState::Runnable);
                        }
                        pol.balance(&p);
                    } else if r < 55 {
                        if let Some(t) = curr {
                            pol.yield_now(&p, t);
                            state = Some(PrevState::Runnable);
                        }
                    } else if r < 70 {
                        if curr.is_some() {
                            state = Some(PrevState::Blocked);
                        }
                    } else if r < 85 {
                        let t = sleeping.lock().pop();
                        if let Some(t) = t {
                            pol.wake_up(&p, t, rand() % 4 == 0);
                        }
                    } else {
                        state = Some(PrevState::Runnable);
                    }
                    if need_resched[cpu].swap(false, Ordering::Relaxed) && state.is_none() {
                        state = Some(PrevState::Runnable);
                    }
                    if let Some(state) = state {
                        if let Some(t) = curr {
                            owner[t as usize].store(NONE, Ordering::SeqCst);
                        }
                        let next = pol.schedule(&p, curr, state);
                        if state == PrevState::Blocked {
                            sleeping.lock().push(curr.unwrap());
                        }
                        if let Some(n) = next {
                            if let Err(other) =
                                owner[n as usize].compare_exchange(NONE, cpu, Ordering::SeqCst, Ordering::SeqCst)
                            {
                                panic!("task {n} picked by cpu {cpu} while running on cpu {other}");
                            }
                        }
                        curr = next;
                    }
                    for target in p.take_resched() {
                        need_resched[target].store(true, Ordering::Relaxed);
                    }
                }
                curr
            })
        })
        .collect();
    for t in threads {
        t.join().expect("cpu thread panicked");
    }
    pol.check_invariants().expect("invariants after the stress run");
}

#[test]
fn pmqs_concurrent_stress_never_runs_a_task_twice() {
    for lb in [Balancer::Lbp, Balancer::Lbc, Balancer::Ip] {
        let spec = |pool| pmqs_spec(pool, lb, 1, LbReading::Period);
        stress(spec(2), 4, 12, 10_000);
        stress(spec(4), 8, 24, 5_000);
    }
    // A pass that holds every queue's lock, balancing inside pools too, on real threads.
    for lb in [Balancer::Lbp, Balancer::Lbc] {
        stress(pmqs_readings(2, lb, 1, LbReading::Period, true, true), 4, 12, 10_000);
        stress(pmqs_readings(4, lb, 1, LbReading::Period, true, true), 8, 24, 5_000);
    }
}

#[test]
fn mqs_concurrent_stress_never_runs_a_task_twice() {
    for _ in 0..4 {
        stress(PolicySpec::parse("mqs").unwrap(), 4, 12, 20_000);
        stress(PolicySpec::parse("mqs").unwrap(), 8, 24, 10_000);
    }
}

#[test]
fn o1_concurrent_stress_never_runs_a_task_twice() {
    // 1 ms per iteration: ticks expire slices, jiffies pass, idle and busy CPUs pull.
    for spec in ["o1", "o1:busy_rebalance=1,starvation_limit=1,max_timeslice=3"] {
        for _ in 0..2 {
            stress_with_clock(PolicySpec::parse(spec).unwrap(), 4, 12, 20_000, 1_000_000);
            stress_with_clock(PolicySpec::parse(spec).unwrap(), 8, 24, 10_000, 1_000_000);
        }
    }
}

#[test]
fn fair_concurrent_stress_never_runs_a_task_twice() {
    // 1 ms per iteration: slices run out, loads shift, idle and busy CPUs pull.
    for spec in ["cfs", "cfs:latency=1ms,min_granularity=100us,wakeup_granularity=0,imbalance_pct=100,yield=tail"] {
        for _ in 0..2 {
            stress_with_clock(PolicySpec::parse(spec).unwrap(), 4, 12, 20_000, 1_000_000);
            stress_with_clock(PolicySpec::parse(spec).unwrap(), 8, 24, 10_000, 1_000_000);
        }
    }
}

#[test]
fn eevdf_concurrent_stress_never_runs_a_task_twice() {
    // 1 ms per iteration: slices run out, blocked tasks stay delayed, CPUs pull.
    for spec in ["eevdf", "eevdf:base_slice=100us,run_to_parity=off,delay_dequeue=off,imbalance_pct=100"] {
        for _ in 0..2 {
            stress_with_clock(PolicySpec::parse(spec).unwrap(), 4, 12, 20_000, 1_000_000);
            stress_with_clock(PolicySpec::parse(spec).unwrap(), 8, 24, 10_000, 1_000_000);
        }
    }
}

/// DSS sets `has_cpu(next)` only in `SchedCommon::switch_to`, after dropping the run
/// queue lock, so with real concurrency two CPUs can pick the same task (2.4 does
/// `task_set_cpu(next)` under `runqueue_lock`). Ignored until that is fixed.
#[test]
fn dss_concurrent_stress_never_runs_a_task_twice() {
    for _ in 0..4 {
        stress(PolicySpec::parse("dss").unwrap(), 4, 12, 20_000);
    }
}
