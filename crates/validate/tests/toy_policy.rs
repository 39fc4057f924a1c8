//! A policy written here, outside the registry, runs on both engines through the same
//! constructor the registry uses ([`PolicyKind::build`], reached with [`Configured`]):
//! nothing else in schedlab knows about it.

use schedlab_core::options::{Options, Param, Value};
use schedlab_core::platform::{Access, Line, Platform, SchedLock, Work};
use schedlab_core::{
    BuildEnv, Configured, CpuId, Policy, PolicyKind, PolicySource, PrevState, SpecError, TaskId, TaskParams, TaskTable,
};
use schedlab_rtrun::run_on_runtime;
use schedlab_sim::{simulate, Machine, SimConfig};
use schedlab_workloads::parse_workload;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};

/// Round robin over one global FIFO: woken tasks join the back, the running task is
/// preempted every `quantum` ticks, an idle CPU is kicked on a wake-up.
struct ToyRr<P: Platform> {
    tasks: TaskTable,
    queue: P::Lock<VecDeque<TaskId>>,
    busy: Box<[AtomicBool]>,
    ticks: Box<[AtomicU32]>,
    quantum: u32,
}

struct Toy;

/// Ticks per quantum.
#[derive(Clone, Copy, Debug)]
struct Quantum(u32);

impl Default for Quantum {
    fn default() -> Self {
        Quantum(2)
    }
}

impl Options for Quantum {
    const PARAMS: &'static [Param<Quantum>] = &[Param::int(
        "quantum",
        1,
        100,
        "ticks per quantum",
        |q: &Quantum| Value::Int(q.0 as i64),
        |q, v| q.0 = v.int() as u32,
    )
    .always()];
}

impl PolicyKind for Toy {
    const NAME: &'static str = "toy-rr";
    const SUMMARY: &'static str = "round robin over one FIFO (a test policy)";
    type Config = Quantum;

    fn build<P: Platform>(q: &Quantum, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError> {
        let n = env.topo.ncpus();
        Ok(Box::new(ToyRr {
            tasks: TaskTable::new(env.capacity),
            queue: p.new_lock("toy_queue", VecDeque::new()),
            busy: (0..n).map(|_| AtomicBool::new(false)).collect(),
            ticks: (0..n).map(|_| AtomicU32::new(0)).collect(),
            quantum: q.0,
        }))
    }
}

impl<P: Platform> ToyRr<P> {
    fn enqueue(&self, p: &P, q: &mut VecDeque<TaskId>, t: TaskId) {
        p.charge(Work::ListOp);
        p.touch(Line::Task(t), Access::Write);
        q.push_back(t);
        self.tasks.get(t).set_processor(p.this_cpu());
    }
}

impl<P: Platform> Policy<P> for ToyRr<P> {
    fn name(&self) -> &str {
        Toy::NAME
    }
    fn tasks(&self) -> &TaskTable {
        &self.tasks
    }
    fn task_new(&self, p: &P, id: TaskId, params: &TaskParams, _parent: Option<TaskId>) {
        self.tasks.init(id, params, p.this_cpu(), 1);
    }
    fn wake_up(&self, p: &P, id: TaskId, _sync: bool) {
        p.charge(Work::WakeupEntry);
        self.queue.with(p, |q| self.enqueue(p, q, id));
        let idle = (0..self.busy.len()).find(|&c| !self.busy[c].load(Relaxed));
        if let Some(cpu) = idle {
            p.resched(cpu);
        }
    }
    fn schedule(&self, p: &P, prev: Option<TaskId>, prev_state: PrevState) -> Option<TaskId> {
        p.charge(Work::ScheduleEntry);
        let cpu: CpuId = p.this_cpu();
        let next = self.queue.with(p, |q| {
            match (prev, prev_state) {
                (Some(t), PrevState::Runnable) => self.enqueue(p, q, t),
                (Some(t), PrevState::Exited) => self.tasks.get(t).set_live(false),
                _ => {}
            }
            q.pop_front()
        });
        self.busy[cpu].store(next.is_some(), Relaxed);
        self.ticks[cpu].store(0, Relaxed);
        next
    }
    fn tick(&self, p: &P, curr: Option<TaskId>) -> bool {
        p.charge(Work::Tick);
        let cpu = p.this_cpu();
        curr.is_some() && self.ticks[cpu].fetch_add(1, Relaxed) + 1 >= self.quantum
    }
    fn yield_now(&self, _p: &P, _curr: TaskId) {}
    fn nr_queues(&self) -> usize {
        1
    }
    fn queue_len(&self, _q: usize) -> usize {
        self.queue.inspect(|q| q.len())
    }
    fn check_invariants(&self) -> Result<(), schedlab_core::InvariantViolation> {
        self.queue.inspect(|q| {
            let mut seen = std::collections::BTreeSet::new();
            match q.iter().find(|&&t| !seen.insert(t)) {
                Some(t) => Err(format!("task {t} is queued twice").into()),
                None => Ok(()),
            }
        })
    }
}

const WORKLOADS: &[&str] = &["chat:rooms=1,messages=20", "hackbench:groups=1,loops=10", "pingpong:rounds=2000"];

#[test]
fn a_toy_policy_runs_on_the_simulator() {
    let toy = Configured::<Toy>(Quantum(3));
    assert_eq!(toy.canonical(), "toy-rr:quantum=3");
    for m in ["up", "smp-4", "numa-4x4"] {
        let machine = Machine::preset(m).unwrap();
        for ws in WORKLOADS {
            let w = parse_workload(ws).unwrap();
            let cfg = SimConfig { check_invariants: true, ..SimConfig::default() };
            let r = simulate(&machine, &toy, &w, &cfg).unwrap_or_else(|e| panic!("{m} {ws}: {e}"));
            assert_eq!(r.policy, "toy-rr:quantum=3");
            assert_eq!((r.messages_sent, r.messages_received), (w.expected_messages, w.expected_messages), "{m} {ws}");
            assert_eq!(r.tasks, w.expected_tasks, "{m} {ws}");
            assert!(r.context_switches > 0 && r.locks.iter().any(|l| l.name == "toy_queue"), "{m} {ws}");
        }
    }
}

#[test]
fn a_toy_policy_runs_on_the_runtime() {
    let rt = schedlab_rt::Builder::new().workers(2).policy_source(Configured::<Toy>(Quantum(3))).build().unwrap();
    assert_eq!(rt.policy_name(), "toy-rr:quantum=3");
    for ws in WORKLOADS {
        let w = parse_workload(ws).unwrap();
        let r = run_on_runtime(&rt, &w, 1.0, 1).unwrap_or_else(|e| panic!("{ws}: {e}"));
        assert_eq!((r.sent, r.received, r.tasks), (w.expected_messages, w.expected_messages, w.expected_tasks), "{ws}");
    }
    assert_eq!(rt.stats().bad_picks, 0);
    rt.shutdown();
}
