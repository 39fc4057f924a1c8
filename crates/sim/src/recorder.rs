//! What a run measures, and the [`Report`] built from it.
//!
//! The engine bumps the counters and records wake-up latencies as events happen; the
//! run-queue lengths are sampled at CPU 0's timer ticks, and the length of the queue a
//! `schedule()` picks from and its walk at every call. Nothing here feeds back into
//! the simulation: it only observes.

use crate::config::SimConfig;
use crate::machine::Machine;
use crate::platform::{LockStats, SimPlatform};
use crate::report::{round3, AtSchedule, BusReport, Latency, QueueLen, Report, Responses, RoleWait, RqSeries};
use hdrhistogram::Histogram;
use schedlab_core::Policy;
use schedlab_workloads::Workload;

/// Counters and samples of one run.
#[derive(Debug)]
pub(crate) struct Recorder {
    pub events: u64,
    pub sent: u64,
    pub received: u64,
    /// Sends that found their channel full and blocked.
    pub send_blocks: u64,
    /// Units of the workload's metric (receives on counted channels).
    pub completed: u64,
    /// `completed` when the benchmark started its clock: the units before it (a
    /// warm-up, a set-up) are not the measured span's.
    pub completed_at_start: u64,
    pub ctx_switches: u64,
    pub migrations: u64,
    pub ipis: u64,
    pub schedule_calls: u64,
    /// Task structures walked by `schedule()` calls, summed, and the longest walk.
    walk_sum: u64,
    walk_max: u64,
    /// `schedule()` calls by the length of the queue they pick from (index: length):
    /// exact counts, lengths being small, for exact percentiles.
    at_schedule: Vec<u64>,
    /// From wake-up to being dispatched, in ns.
    wake_lat: Histogram<u64>,
    /// Wait to run per role (index: the engine's role numbering).
    roles: Vec<RoleStats>,
    /// Request–response times (workloads with a client time-out).
    responses: Option<(Histogram<u64>, u64)>,
    /// Sums over samples of the mean and standard deviation of the queue lengths.
    rq_sum: f64,
    rq_sd_sum: f64,
    rq_max: u64,
    rq_samples: u64,
    rq_series: Option<SeriesBuf>,
}

/// Wait-to-run samples of one role.
#[derive(Debug)]
struct RoleStats {
    name: String,
    tasks: u64,
    hist: Histogram<u64>,
    max: u64,
    max_task: u32,
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

/// What the engine knows at the end of a run that the recorder does not count itself.
pub(crate) struct RunEnd<'a> {
    pub machine: &'a Machine,
    /// The policy's canonical spec.
    pub policy: String,
    pub workload: &'a Workload,
    pub seed: u64,
    pub wall_s: f64,
    /// Time the last task exited (≥ 1).
    pub virtual_ns: u64,
    /// Time the workload started its benchmark's clock (< `virtual_ns`; 0 without a
    /// `StartClock`): the throughput is over `virtual_ns − clock_start_ns`.
    pub clock_start_ns: u64,
    /// Idle time summed over CPUs, up to `virtual_ns`.
    pub idle_ns: u64,
    pub tasks: u64,
    pub locks: Vec<LockStats>,
    pub bus: crate::platform::BusStats,
    /// The policy's number of run queues (columns of the run-queue series).
    pub queues: usize,
    pub policy_stats: Vec<(&'static str, u64)>,
    pub role_stats: Vec<crate::report::RoleStats>,
}

impl Recorder {
    /// `roles`: the names of the workload's roles, in the engine's numbering.
    pub fn new(cfg: &SimConfig, cpus: usize, roles: &[String], w: &Workload) -> Recorder {
        Recorder {
            events: 0,
            sent: 0,
            received: 0,
            send_blocks: 0,
            completed: 0,
            completed_at_start: 0,
            ctx_switches: 0,
            migrations: 0,
            ipis: 0,
            schedule_calls: 0,
            walk_sum: 0,
            walk_max: 0,
            at_schedule: Vec::with_capacity(64),
            wake_lat: Histogram::new(3).expect("histogram"),
            roles: roles
                .iter()
                .map(|r| RoleStats {
                    name: r.clone(),
                    tasks: 0,
                    hist: Histogram::new(3).expect("histogram"),
                    max: 0,
                    max_task: 0,
                })
                .collect(),
            responses: w.metric.timeout_ns.map(|_| (Histogram::new(3).expect("histogram"), 0)),
            rq_sum: 0.0,
            rq_sd_sum: 0.0,
            rq_max: 0,
            rq_samples: 0,
            rq_series: cfg.rq_series_interval_ns.map(|i| SeriesBuf {
                interval: i.max(1),
                next_at: 0,
                t_ns: Vec::with_capacity(1024),
                lens: Vec::with_capacity(1024 * cpus),
                stddev: Vec::with_capacity(1024),
            }),
        }
    }

    /// A woken task was dispatched `ns` after its wake-up.
    #[inline]
    pub fn wake_latency(&mut self, ns: u64) {
        let _ = self.wake_lat.record(ns.max(1));
    }

    /// A task of `role` was created.
    #[inline]
    pub fn task_of_role(&mut self, role: usize) {
        self.roles[role].tasks += 1;
    }

    /// Task `task` of `role` was dispatched `ns` after it became runnable.
    #[inline]
    pub fn ready_wait(&mut self, role: usize, task: u32, ns: u64) {
        let r = &mut self.roles[role];
        let _ = r.hist.record(ns.max(1));
        if ns > r.max {
            r.max = ns;
            r.max_task = task;
        }
    }

    /// A response arrived `ns` after its request (`timeout_ns`: the workload's).
    #[inline]
    pub fn response(&mut self, ns: u64, timeout_ns: u64) {
        if let Some((h, late)) = self.responses.as_mut() {
            let _ = h.record(ns.max(1));
            *late += (ns > timeout_ns) as u64;
        }
    }

    /// A request still unanswered `ns` after it was made when the benchmark stops its
    /// clock: a time-out if it is already late (its client has reported the error);
    /// it has no response time to record.
    pub fn outstanding(&mut self, ns: u64, timeout_ns: u64) {
        if let Some((_, late)) = self.responses.as_mut() {
            *late += (ns > timeout_ns) as u64;
        }
    }

    /// A `schedule()` call begins on a queue of `len` tasks.
    #[inline]
    pub fn schedule_on(&mut self, len: usize) {
        if len >= self.at_schedule.len() {
            self.at_schedule.resize(len + 1, 0);
        }
        self.at_schedule[len] += 1;
    }

    /// The `schedule()` call walked `tasks` task structures.
    #[inline]
    pub fn walked(&mut self, tasks: u64) {
        self.walk_sum += tasks;
        self.walk_max = self.walk_max.max(tasks);
    }

    /// Sample every run queue's length at time `t` (and record a row of the series when
    /// one is due).
    pub fn sample_queues(&mut self, policy: &dyn Policy<SimPlatform>, t: u64) {
        let n = policy.nr_queues();
        let record = match &self.rq_series {
            Some(s) => t >= s.next_at,
            None => false,
        };
        let (mut sum, mut sq, mut max) = (0u64, 0u64, 0u64);
        for q in 0..n {
            let l = policy.queue_len(q) as u64;
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

    pub fn report(self, run: RunEnd<'_>) -> Report {
        let virtual_ns = run.virtual_ns;
        let total = virtual_ns as f64 * run.machine.cpus as f64;
        let spin: u64 = run.locks.iter().map(|s| s.wait_total_ns).sum();
        let h = &self.wake_lat;
        let samples = self.rq_samples.max(1) as f64;
        let calls = self.schedule_calls.max(1) as f64;
        let per_message = |n: u64| (self.received > 0).then(|| round3(n as f64 / self.received as f64));
        Report {
            machine: run.machine.name.clone(),
            cpus: run.machine.cpus,
            policy: run.policy,
            workload: run.workload.spec.clone(),
            seed: run.seed,
            throughput: round3(
                run.workload.metric.units(self.completed - self.completed_at_start) * 1e9
                    / (virtual_ns - run.clock_start_ns) as f64,
            ),
            throughput_unit: run.workload.metric.unit.clone(),
            completed: self.completed,
            messages_sent: self.sent,
            messages_received: self.received,
            send_blocks: self.send_blocks,
            tasks: run.tasks,
            virtual_ns,
            clock_start_ns: run.clock_start_ns,
            sim_events: self.events,
            wall_s: run.wall_s,
            events_per_sec: self.events as f64 / run.wall_s.max(1e-9),
            context_switches: self.ctx_switches,
            migrations: self.migrations,
            ipis: self.ipis,
            schedule_calls: self.schedule_calls,
            switches_per_message: per_message(self.ctx_switches),
            migrations_per_message: per_message(self.migrations),
            walk_len_mean: round3(self.walk_sum as f64 / calls),
            walk_len_max: self.walk_max,
            cpu_busy_pct: round3(100.0 * (1.0 - run.idle_ns as f64 / total)),
            lock_spin_ns: spin,
            wakeup_latency_ns: Latency {
                count: h.len(),
                mean: round3(if h.is_empty() { 0.0 } else { h.mean() }),
                p50: h.value_at_quantile(0.5),
                p99: h.value_at_quantile(0.99),
                max: h.max(),
            },
            waits: self
                .roles
                .iter()
                .map(|r| RoleWait {
                    role: r.name.clone(),
                    tasks: r.tasks,
                    waits: r.hist.len(),
                    p50_ns: quantile(&r.hist, 0.5).min(r.max),
                    p99_ns: quantile(&r.hist, 0.99).min(r.max),
                    max_ns: r.max,
                    max_task: r.max_task,
                })
                .collect(),
            responses: self.responses.as_ref().map(|(h, late)| Responses {
                count: h.len(),
                p50_ns: quantile(h, 0.5).min(h.max()),
                p99_ns: quantile(h, 0.99).min(h.max()),
                max_ns: h.max(),
                timeout_ns: run.workload.metric.timeout_ns.unwrap_or(0),
                timed_out: *late,
            }),
            runqueue_len: QueueLen {
                mean: round3(self.rq_sum / samples),
                max: self.rq_max,
                stddev_mean: round3(self.rq_sd_sum / samples),
                samples: self.rq_samples,
            },
            rq_at_schedule: AtSchedule::from_counts(&self.at_schedule),
            locks: Report::lock_reports(&run.locks, virtual_ns),
            policy_stats: run.policy_stats.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            role_stats: run.role_stats,
            rq_traversal_miss_ratio: round3(
                run.bus.locked_task_misses as f64 / run.bus.locked_task_reads.max(1) as f64,
            ),
            bus_transactions: BusReport::from_stats(&run.bus),
            rq_series: self.rq_series.map(|s| RqSeries::from_rows(s.interval, run.queues, s.t_ns, &s.lens, &s.stddev)),
        }
    }
}

/// A quantile of `h` (0 when empty). hdrhistogram reports the highest value
/// equivalent to the bucket, which can exceed the exact maximum: callers clamp.
fn quantile(h: &Histogram<u64>, q: f64) -> u64 {
    if h.is_empty() {
        0
    } else {
        h.value_at_quantile(q)
    }
}
