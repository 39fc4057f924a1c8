//! The result of one simulation, as JSON (stable field names) or readable text.
//!
//! Everything except `wall_s` and `events_per_sec` is a pure function of
//! (machine, policy, workload, seed): those two are wall-clock figures, kept apart so
//! that determinism can be checked by comparing the rest byte for byte.

use crate::platform::LockStats;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    pub mean: f64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// How long the tasks of one role (program role: `smbd`, `ps`, `sender`, ...) waited
/// to run: from becoming runnable (woken, forked, or preempted while runnable) to
/// being dispatched. Starvation shows here, not in the wake-up latency: a task
/// preempted into O(1)'s expired array was not woken.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleWait {
    pub role: String,
    /// Tasks of this role that existed.
    pub tasks: u64,
    /// Dispatches after a wait (the samples).
    pub waits: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// The task that waited `max_ns`.
    pub max_task: u32,
}

/// Request–response times of a workload with a client time-out (NetBench): each
/// counted receive timed from the receiving task's latest send.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Responses {
    pub count: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    pub timeout_ns: u64,
    /// Responses later than `timeout_ns` (the benchmark's client errors), and the
    /// requests still unanswered at the benchmark's stop (`StopClock`) that are
    /// already older than it.
    pub timed_out: u64,
}

/// One of the policy's per-task figures ([`schedlab_core::Policy::task_stats`]) over
/// the tasks of one role, taken at the end of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatSummary {
    pub name: String,
    pub min: u64,
    pub mean: f64,
    pub max: u64,
}

/// The policy's per-task figures summarised per role (`role_stats.smbd.stats.
/// sleep_avg_ticks.mean`), in the order roles first appear.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleStats {
    pub role: String,
    pub tasks: u64,
    pub stats: Vec<StatSummary>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueLen {
    /// Mean over timer-tick samples of the mean length of the policy's run queues
    /// (tasks linked on a queue, including a running task the policy keeps linked).
    pub mean: f64,
    pub max: u64,
    /// Mean over samples of the standard deviation of the per-queue lengths
    /// (the PMQS authors' measure of imbalance; 0 for one queue).
    pub stddev_mean: f64,
    pub samples: u64,
}

/// The length of the queue a `schedule()` picks from (tasks linked on it, a running
/// task the policy keeps linked included), taken as each call begins: over calls, not
/// over time, so it is the length the calls' walks start from. Percentiles are exact
/// (nearest rank over every call); 0 throughout when no call was made.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AtSchedule {
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

impl AtSchedule {
    /// From `counts[len]`, the calls that began on a queue of `len` tasks.
    pub fn from_counts(counts: &[u64]) -> AtSchedule {
        let n: u64 = counts.iter().sum();
        if n == 0 {
            return AtSchedule::default();
        }
        let total: u64 = counts.iter().enumerate().map(|(len, &c)| len as u64 * c).sum();
        // The smallest length at or below which at least pct % of the calls began
        // (rank ⌈pct·n/100⌉, integer arithmetic: no rounding at the bucket edges).
        let at = |pct: u64| {
            let rank = (pct * n).div_ceil(100).max(1);
            let mut seen = 0;
            counts
                .iter()
                .position(|&c| {
                    seen += c;
                    seen >= rank
                })
                .unwrap_or(0) as u64
        };
        AtSchedule {
            mean: round3(total as f64 / n as f64),
            p50: at(50),
            p90: at(90),
            p99: at(99),
            max: counts.iter().rposition(|&c| c > 0).unwrap_or(0) as u64,
        }
    }
}

/// Lockmeter-style report of one lock (instances with one name are aggregated).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LockReport {
    pub name: String,
    pub instances: u32,
    pub acquisitions: u64,
    /// Acquisitions that had to spin, in percent.
    pub contention_pct: f64,
    pub trylock_failures: u64,
    pub hold_mean_ns: f64,
    pub hold_max_ns: u64,
    pub wait_mean_ns: f64,
    pub wait_max_ns: u64,
    /// Fraction of virtual time the lock was held (mean over instances), in percent.
    pub utilisation_pct: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub machine: String,
    pub cpus: usize,
    pub policy: String,
    pub workload: String,
    pub seed: u64,
    /// The workload's metric per virtual second of the measured span: the units
    /// completed from the benchmark's clock start (`clock_start_ns`) to the end of the
    /// run, over that time.
    pub throughput: f64,
    pub throughput_unit: String,
    /// Counted units (messages, round trips) completed in the whole run, before the
    /// clock start too.
    pub completed: u64,
    pub messages_sent: u64,
    pub messages_received: u64,
    /// Sends that found their channel full and blocked until a receive freed it
    /// (bounded channels only; absent from JSON when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub send_blocks: u64,
    pub tasks: u64,
    pub virtual_ns: u64,
    /// Virtual time at which the workload's benchmark read its start time (its
    /// `StartClock`, after its set-up); absent from JSON when 0 (timed from the start).
    /// Every figure but `throughput` covers the whole run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clock_start_ns: u64,
    pub sim_events: u64,
    pub wall_s: f64,
    pub events_per_sec: f64,
    pub context_switches: u64,
    pub migrations: u64,
    pub ipis: u64,
    pub schedule_calls: u64,
    /// `context_switches` / `messages_received` (null without messages).
    pub switches_per_message: Option<f64>,
    /// `migrations` / `messages_received` (null without messages).
    pub migrations_per_message: Option<f64>,
    /// Task structures a `schedule()` reads under a run-queue lock before its pick,
    /// mean over calls and the longest walk: DSS's goodness loop over its whole list,
    /// MQS's local scan, an idle pull's look at another queue's tasks; 0 for O(1)'s
    /// bitmap pick. The reads `rq_traversal_miss_ratio` is taken over, less those
    /// `schedule_tail` makes to place a preempted task.
    /// Required when a report is read back (as is `rq_at_schedule`): a sweep journal
    /// written before them is run again rather than read as walks of 0.
    pub walk_len_mean: f64,
    pub walk_len_max: u64,
    /// Non-idle CPU time (user + kernel + spinning) over CPUs × virtual time, in percent.
    pub cpu_busy_pct: f64,
    /// Time CPUs spent spinning on locks, summed over CPUs.
    pub lock_spin_ns: u64,
    pub wakeup_latency_ns: Latency,
    /// Wait to run per role, in the order roles first appear in the workload.
    #[serde(default)]
    pub waits: Vec<RoleWait>,
    /// Only for workloads with a client time-out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses: Option<Responses>,
    pub runqueue_len: QueueLen,
    /// The length of the queue each `schedule()` picks from, as the call begins.
    pub rq_at_schedule: AtSchedule,
    pub locks: Vec<LockReport>,
    /// The policy's own counters ([`schedlab_core::Policy::stats`]), when it has any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy_stats: Vec<(String, u64)>,
    /// The policy's per-task figures per role, when it has any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub role_stats: Vec<RoleStats>,
    /// L2 misses over L2 reads of task-structure hot lines made while a lock is held
    /// (the policy walking or editing a run queue under its lock): the paper's
    /// equation 1. 0 when no such read happened.
    #[serde(default)]
    pub rq_traversal_miss_ratio: f64,
    /// Memory traffic: bus transactions by line class and by kind.
    #[serde(default)]
    pub bus_transactions: BusReport,
    /// Run-queue lengths over virtual time (only when asked for:
    /// [`crate::SimConfig::rq_series_interval_ns`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rq_series: Option<RqSeries>,
}

/// Bus transactions of a run (see `docs/cost-model.md`): read misses served by
/// memory, read-for-ownership (write misses and upgrades), write-backs of dirty
/// evicted lines, and cache-to-cache transfers of modified lines.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BusReport {
    pub total: u64,
    /// By line class: task-structure hot lines, other scheduler data, workload data.
    pub task: u64,
    pub sched: u64,
    pub workload: u64,
    /// By kind.
    pub read_miss: u64,
    pub rfo: u64,
    pub writeback: u64,
    pub c2c: u64,
}

impl BusReport {
    pub(crate) fn from_stats(b: &crate::platform::BusStats) -> BusReport {
        let class = |c: usize| b.by[c].iter().sum::<u64>();
        let kind = |k: usize| b.by.iter().map(|r| r[k]).sum::<u64>();
        BusReport {
            total: (0..3).map(class).sum(),
            task: class(0),
            sched: class(1),
            workload: class(2),
            read_miss: kind(0),
            rfo: kind(1),
            writeback: kind(2),
            c2c: kind(3),
        }
    }
}

/// Every run queue's length sampled over virtual time, at CPU 0's timer ticks at most
/// once per `interval_ns`, with the per-sample deviation of the queue lengths from
/// their mean (standard deviation: the PMQS authors' measure of balancer efficacy).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RqSeries {
    pub interval_ns: u64,
    pub queues: usize,
    /// Virtual time of each sample.
    pub t_ns: Vec<u64>,
    /// `len[q][i]`: length of queue `q` at sample `i`.
    pub len: Vec<Vec<u32>>,
    /// Mean queue length at each sample.
    pub mean: Vec<f64>,
    /// Standard deviation of the queue lengths from their mean at each sample.
    pub deviation: Vec<f64>,
}

impl RqSeries {
    /// Build from row-major samples (`rows[i * queues + q]`).
    pub fn from_rows(interval_ns: u64, queues: usize, t_ns: Vec<u64>, rows: &[u32], deviation: &[f64]) -> RqSeries {
        let n = t_ns.len();
        let mut len = vec![Vec::with_capacity(n); queues];
        let mut mean = Vec::with_capacity(n);
        for row in rows.chunks(queues.max(1)).take(n) {
            let mut sum = 0u64;
            for (q, &l) in row.iter().enumerate() {
                len[q].push(l);
                sum += l as u64;
            }
            mean.push(round3(sum as f64 / queues.max(1) as f64));
        }
        RqSeries { interval_ns, queues, t_ns, len, mean, deviation: deviation.iter().map(|&d| round3(d)).collect() }
    }
}

impl Report {
    /// Aggregate per-instance statistics by lock name; per-CPU instances named
    /// `name[i]` are reported together as `name` with `instances` = their number.
    pub fn lock_reports(stats: &[LockStats], virtual_ns: u64) -> Vec<LockReport> {
        let mut out: Vec<LockReport> = Vec::new();
        let mut hold_total: Vec<u64> = Vec::new();
        let mut wait_total: Vec<u64> = Vec::new();
        let mut contended: Vec<u64> = Vec::new();
        for s in stats {
            let base = s.name.split('[').next().unwrap_or(&s.name);
            let i = match out.iter().position(|r| r.name == base) {
                Some(i) => i,
                None => {
                    out.push(LockReport {
                        name: base.to_string(),
                        instances: 0,
                        acquisitions: 0,
                        contention_pct: 0.0,
                        trylock_failures: 0,
                        hold_mean_ns: 0.0,
                        hold_max_ns: 0,
                        wait_mean_ns: 0.0,
                        wait_max_ns: 0,
                        utilisation_pct: 0.0,
                    });
                    hold_total.push(0);
                    wait_total.push(0);
                    contended.push(0);
                    out.len() - 1
                }
            };
            let r = &mut out[i];
            r.instances += 1;
            r.acquisitions += s.acquisitions;
            r.trylock_failures += s.trylock_failures;
            r.hold_max_ns = r.hold_max_ns.max(s.hold_max_ns);
            r.wait_max_ns = r.wait_max_ns.max(s.wait_max_ns);
            hold_total[i] += s.hold_total_ns;
            wait_total[i] += s.wait_total_ns;
            contended[i] += s.contended;
        }
        for (i, r) in out.iter_mut().enumerate() {
            let n = r.acquisitions.max(1) as f64;
            r.contention_pct = round3(100.0 * contended[i] as f64 / n);
            r.hold_mean_ns = round3(hold_total[i] as f64 / n);
            r.wait_mean_ns = round3(wait_total[i] as f64 / n);
            r.utilisation_pct = round3(100.0 * hold_total[i] as f64 / (virtual_ns.max(1) as f64 * r.instances as f64));
        }
        out
    }

    /// A readable summary.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "schedlab sim — {} on {} ({} CPUs), policy {}, seed {}",
            self.workload, self.machine, self.cpus, self.policy, self.seed
        );
        let _ = writeln!(s, "  throughput        {:.1} {}", self.throughput, self.throughput_unit);
        let _ = writeln!(
            s,
            "  completed         {} {} in {:.6} virtual s",
            self.completed,
            self.throughput_unit.trim_end_matches("/s"),
            self.virtual_ns as f64 / 1e9
        );
        if self.clock_start_ns > 0 {
            let _ = writeln!(
                s,
                "  measured          from {:.6} virtual s (the benchmark's start time, after its set-up)",
                self.clock_start_ns as f64 / 1e9
            );
        }
        let _ = writeln!(
            s,
            "  messages          {} sent, {} received; {} tasks",
            self.messages_sent, self.messages_received, self.tasks
        );
        if self.send_blocks > 0 {
            let _ = writeln!(s, "  blocked sends     {} (a channel was full)", self.send_blocks);
        }
        let _ = writeln!(
            s,
            "  context switches  {}   migrations {}   IPIs {}   schedule() calls {}",
            self.context_switches, self.migrations, self.ipis, self.schedule_calls
        );
        match (self.switches_per_message, self.migrations_per_message) {
            (Some(sw), Some(mg)) => {
                let _ = writeln!(s, "  per message       {sw:.3} context switches   {mg:.3} migrations");
            }
            _ => {
                let _ = writeln!(s, "  per message       - (no messages)");
            }
        }
        let _ = writeln!(
            s,
            "  CPU busy          {:.1} %   lock spinning {:.3} ms (all CPUs)",
            self.cpu_busy_pct,
            self.lock_spin_ns as f64 / 1e6
        );
        let b = &self.bus_transactions;
        let _ = writeln!(
            s,
            "  rq-walk L2 miss   {:.3}   bus transactions {} (task {}, sched {}, workload {}; \
             read {}, rfo {}, write-back {}, c2c {})",
            self.rq_traversal_miss_ratio, b.total, b.task, b.sched, b.workload, b.read_miss, b.rfo, b.writeback, b.c2c
        );
        let _ = writeln!(
            s,
            "  rq walk length    mean {:.2}  max {}  (tasks read per schedule() before its pick)",
            self.walk_len_mean, self.walk_len_max
        );
        let l = &self.wakeup_latency_ns;
        let _ = writeln!(
            s,
            "  wake-up latency   p50 {}  p99 {}  max {}  ({} wake-ups)",
            human_ns(l.p50),
            human_ns(l.p99),
            human_ns(l.max),
            l.count
        );
        if let Some(r) = &self.responses {
            let _ = writeln!(
                s,
                "  responses         p50 {}  p99 {}  max {}  ({} timed, {} over the {} s time-out)",
                human_ns(r.p50_ns),
                human_ns(r.p99_ns),
                human_ns(r.max_ns),
                r.count,
                r.timed_out,
                r.timeout_ns as f64 / 1e9
            );
        }
        // The role column as wide as the longest role, so that the figures line up.
        let w = self.waits.iter().map(|r| r.role.chars().count()).max().unwrap_or(0).max(12);
        let _ = writeln!(
            s,
            "  wait to run       {:<w$} {:>6} {:>9} {:>12} {:>12} {:>14}  (runnable → dispatched)",
            "role", "tasks", "waits", "p50", "p99", "max (task)"
        );
        for r in &self.waits {
            let _ = writeln!(
                s,
                "                    {:<w$} {:>6} {:>9} {:>12} {:>12} {:>14}",
                r.role,
                r.tasks,
                r.waits,
                human_ns(r.p50_ns),
                human_ns(r.p99_ns),
                format!("{} ({})", human_ns(r.max_ns), r.max_task)
            );
        }
        if !self.policy_stats.is_empty() {
            let stats: Vec<String> = self.policy_stats.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let _ = writeln!(s, "  policy counters   {}", stats.join("   "));
        }
        for r in &self.role_stats {
            let stats: Vec<String> =
                r.stats.iter().map(|x| format!("{} {}/{:.1}/{}", x.name, x.min, x.mean, x.max)).collect();
            let _ = writeln!(s, "  {:<17} {} (min/mean/max over {} tasks)", r.role, stats.join("   "), r.tasks);
        }
        let q = &self.runqueue_len;
        let _ =
            writeln!(s, "  run-queue length  mean {:.2}  max {}  per-queue stddev {:.2}", q.mean, q.max, q.stddev_mean);
        let a = &self.rq_at_schedule;
        let _ = writeln!(
            s,
            "  at schedule()     mean {:.2}  p50 {}  p90 {}  p99 {}  max {}  (length of the queue it picks from)",
            a.mean, a.p50, a.p90, a.p99, a.max
        );
        let _ = writeln!(
            s,
            "  locks             {:<16} {:>5} {:>12} {:>9} {:>10} {:>10} {:>10} {:>7}",
            "name", "inst", "acquisitions", "contend%", "hold mean", "hold max", "wait mean", "util%"
        );
        for r in &self.locks {
            let _ = writeln!(
                s,
                "                    {:<16} {:>5} {:>12} {:>9.2} {:>8.0}ns {:>8}ns {:>8.0}ns {:>7.2}",
                r.name,
                r.instances,
                r.acquisitions,
                r.contention_pct,
                r.hold_mean_ns,
                r.hold_max_ns,
                r.wait_mean_ns,
                r.utilisation_pct
            );
        }
        let _ = writeln!(
            s,
            "  simulator         {} events in {:.3} s wall = {:.2} M events/s",
            self.sim_events,
            self.wall_s,
            self.events_per_sec / 1e6
        );
        s
    }
}

/// A duration for people: `850 ns`, `12.3 µs`, `4.56 ms`, `78.9 s`.
pub fn human_ns(ns: u64) -> String {
    let x = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", x / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", x / 1e6)
    } else {
        format!("{:.1} s", x / 1e9)
    }
}

/// Round to 3 decimals so JSON stays readable (deterministic: same input, same bits).
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
