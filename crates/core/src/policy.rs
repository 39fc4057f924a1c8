//! The policy interface (one screen) and the policy registry.

use crate::cpu::Topology;
use crate::platform::Platform;
pub use crate::spec::{Spec, SpecError};
use crate::task::{TaskId, TaskParams, TaskTable};

/// What happened to the task that was running when `schedule()` is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable: preempted (`need_resched`) or yielding (SCHED_YIELD set).
    Runnable,
    /// Went to sleep (blocking receive, sleep): leaves the run queue.
    Blocked,
    /// Exited: leaves the run queue and the task table.
    Exited,
}

/// A run-queue organisation and its decisions, modelled on Linux's `sched_class` and
/// sched_ext's `sched_ext_ops`. Every method runs "on" `p.this_cpu()`, takes the
/// policy's own locks through the platform, and reports its work through the
/// platform's cost hooks. The engine owns `need_resched`, IPIs and context switches;
/// the policy asks for them with [`Platform::resched`].
pub trait Policy<P: Platform> {
    /// Name as given in specs, e.g. `"dss"`, `"mqs"`.
    fn name(&self) -> &str;
    /// The per-task scheduling state.
    fn tasks(&self) -> &TaskTable;

    /// Fork: set up the new task `id` (not yet runnable). `parent` donates half its
    /// counter, as in 2.4 `do_fork`. The engine then calls [`Policy::wake_up`].
    fn task_new(&self, p: &P, id: TaskId, params: &TaskParams, parent: Option<TaskId>);
    /// `wake_up_process`: make `id` runnable, choose its run queue and, through
    /// `reschedule_idle`, an idle CPU to kick or a running task to preempt.
    /// `sync` is the `_synchronous` variant (enqueue only, no placement).
    fn wake_up(&self, p: &P, id: TaskId, sync: bool);
    /// `schedule()` on this CPU. `prev` was running (None = idle) and is now in
    /// `prev_state`. Returns the task to run next (None = idle).
    fn schedule(&self, p: &P, prev: Option<TaskId>, prev_state: PrevState) -> Option<TaskId>;
    /// Timer tick on this CPU with `curr` running; returns whether `need_resched` is set.
    fn tick(&self, p: &P, curr: Option<TaskId>) -> bool;
    /// `sched_yield()` by `curr`; the engine calls [`Policy::schedule`] next with
    /// [`PrevState::Runnable`].
    fn yield_now(&self, p: &P, curr: TaskId);
    /// Periodic or idle balancing hook (PMQS balancers, O(1) `load_balance`).
    fn balance(&self, _p: &P) {}

    /// Observation (free, uncharged): number of run queues and their lengths
    /// (tasks linked on the queue, including a running task the policy keeps linked).
    fn nr_queues(&self) -> usize;
    fn queue_len(&self, q: usize) -> usize;
    /// Check the policy's structural invariants (each live task on at most one queue,
    /// list lengths consistent, ...). For tests and `--check` runs; may be slow.
    fn check_invariants(&self) -> Result<(), String>;
}

/// A PMQS load balancer (spec §1.4; the definitions are [UNKNOWN] in the sources,
/// these are the acronym readings, see `docs/policies.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Balancer {
    /// LBOFF: pools, no balancing.
    Off,
    /// IP: initial placement of new tasks on the least-loaded pool, then CPU.
    Ip,
    /// LBP-x: periodic balancer (x = `period`).
    Lbp,
    /// LBC: continuous, event-driven balancer.
    Lbc,
}

impl Balancer {
    pub fn name(self) -> &'static str {
        match self {
            Balancer::Off => "off",
            Balancer::Ip => "ip",
            Balancer::Lbp => "lbp",
            Balancer::Lbc => "lbc",
        }
    }
}

/// What LBP's number x (`period=`) means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbReading {
    /// x is the balancing period in milliseconds (default).
    Period,
    /// x is an imbalance threshold in percent; the balancer runs every tick.
    Threshold,
}

impl LbReading {
    pub fn name(self) -> &'static str {
        match self {
            LbReading::Period => "period",
            LbReading::Threshold => "threshold",
        }
    }
}

/// A policy selection, parsed from `name[:key=value,...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicySpec {
    /// Linux 2.4 default scheduler: one global list and lock.
    Dss,
    /// IBM multi-queue scheduler (2.5.0 RFC).
    Mqs,
    /// Pooled MQS: `pmqs[:pool=P,lb=off|ip|lbp|lbc,period=X,reading=period|threshold]`.
    /// `pool` = CPUs per pool (`None` = the whole machine); it must divide the CPU
    /// count, which [`build_policy`] checks.
    Pmqs { pool: Option<usize>, lb: Balancer, period: u32, reading: LbReading },
}

/// Policy names `schedlab` knows, for `--help` and error messages.
pub const POLICY_NAMES: &[&str] = &["dss", "mqs", "pmqs"];

/// Default of PMQS's `period` (LBP-45).
pub const DEFAULT_LB_PERIOD: u32 = 45;

impl PolicySpec {
    pub fn parse(s: &str) -> Result<PolicySpec, SpecError> {
        let mut spec = Spec::parse("policy", s)?;
        let (out, known): (_, &[&str]) = match spec.name.as_str() {
            "dss" => (PolicySpec::Dss, &[]),
            "mqs" => (PolicySpec::Mqs, &[]),
            "pmqs" => {
                let pool = match spec.get("pool", 0usize, 1..=crate::cpu::MAX_CPUS)? {
                    0 => None,
                    n => Some(n),
                };
                let lb = match spec.get_str("lb", "off").as_str() {
                    "off" | "lboff" => Balancer::Off,
                    "ip" => Balancer::Ip,
                    "lbp" => Balancer::Lbp,
                    "lbc" => Balancer::Lbc,
                    other => {
                        return Err(SpecError(format!(
                            "policy 'pmqs': lb='{other}' is not a balancer (accepted: off, ip, lbp, lbc)"
                        )))
                    }
                };
                let period = spec.get("period", DEFAULT_LB_PERIOD, 1..=1_000_000)?;
                let reading = match spec.get_str("reading", "period").as_str() {
                    "period" => LbReading::Period,
                    "threshold" => LbReading::Threshold,
                    other => {
                        return Err(SpecError(format!(
                            "policy 'pmqs': reading='{other}' is not known (accepted: period, threshold)"
                        )))
                    }
                };
                (PolicySpec::Pmqs { pool, lb, period, reading }, &["pool", "lb", "period", "reading"])
            }
            other => return Err(SpecError(format!("unknown policy '{other}' (known: {})", POLICY_NAMES.join(", ")))),
        };
        spec.finish(known)?;
        Ok(out)
    }
    /// Canonical spec string (round-trips through [`PolicySpec::parse`]).
    pub fn canonical(&self) -> String {
        match self {
            PolicySpec::Dss => "dss".into(),
            PolicySpec::Mqs => "mqs".into(),
            PolicySpec::Pmqs { pool, lb, period, reading } => {
                let mut s = "pmqs:".to_string();
                if let Some(n) = pool {
                    s += &format!("pool={n},");
                }
                s += &format!("lb={},period={period}", lb.name());
                if *reading != LbReading::Period {
                    s += &format!(",reading={}", reading.name());
                }
                s
            }
        }
    }
}

/// Instantiate a policy for a machine. `capacity` bounds task ids; `hz` is the tick
/// rate. Fails with a [`SpecError`] when the spec does not fit the machine (a PMQS
/// pool size that does not divide the CPU count).
pub fn build_policy<P: Platform + 'static>(
    spec: &PolicySpec,
    p: &P,
    topo: &Topology,
    capacity: usize,
    hz: u32,
) -> Result<Box<dyn Policy<P>>, SpecError> {
    Ok(match spec {
        PolicySpec::Dss => Box::new(crate::policies::dss::Dss::new(p, topo, capacity, hz)),
        PolicySpec::Mqs => Box::new(crate::policies::mqs::Mqs::new(p, topo, capacity, hz)),
        PolicySpec::Pmqs { pool, lb, period, reading } => Box::new(crate::policies::pmqs::Pmqs::new(
            p,
            topo,
            capacity,
            hz,
            crate::policies::pmqs::PmqsConfig { pool: *pool, lb: *lb, period: *period, reading: *reading },
        )?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pmqs_specs_round_trip() {
        for s in [
            "dss",
            "mqs",
            "pmqs:lb=off,period=45",
            "pmqs:pool=4,lb=lbp,period=10",
            "pmqs:pool=2,lb=lbc,period=45,reading=threshold",
            "pmqs:pool=1,lb=ip,period=7",
        ] {
            let p = PolicySpec::parse(s).unwrap();
            assert_eq!(p.canonical(), s);
            assert_eq!(PolicySpec::parse(&p.canonical()).unwrap(), p);
        }
        let p = PolicySpec::parse("pmqs:pool=4,lb=lbp,period=45").unwrap();
        assert_eq!(p, PolicySpec::Pmqs { pool: Some(4), lb: Balancer::Lbp, period: 45, reading: LbReading::Period });
        assert_eq!(PolicySpec::parse("pmqs").unwrap().canonical(), "pmqs:lb=off,period=45");
        assert!(PolicySpec::parse("pmqs:lb=xx").unwrap_err().0.contains("lb='xx'"));
        assert!(PolicySpec::parse("pmqs:pool=0").is_err());
        assert!(PolicySpec::parse("pmqs:reading=foo").is_err());
        assert!(PolicySpec::parse("pmqs:pol=4").unwrap_err().0.contains("unknown key 'pol'"));
        assert!(PolicySpec::parse("mqs:pool=4").is_err());
    }
}
