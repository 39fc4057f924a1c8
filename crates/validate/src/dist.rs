//! Distributions of a scheduling trace, one function for both engines.
//!
//! [`analyze`] reads a [`Trace`] in the shared vocabulary (`docs/traces.md`) — the
//! simulator's or the runtime's, no engine-specific code — and returns counts
//! (run slices, migrations, wake-ups), exact quantiles (wake-to-run latency, run
//! length) and the mean and median time per event of a few event classes
//! ([`CLASSES`]). [`most_different`] then names the class whose **median** differs
//! most between two engines' traces of the same row: the event the simulator
//! misprices. A median, not a mean: on the runtime a few events of a class can last
//! milliseconds (a lock holder's or a waker's thread taken off its vCPU by another
//! process on a shared machine); in a mean such waits (87–98 % of the runtime's total
//! lock wait in a ping-pong) would make `lock wait` the "most different" class of
//! every ping-pong row although its typical wait is a clock read.
//!
//! Quantiles are exact nearest-rank ones over the sorted samples (a validation row has
//! at most a few million events: sorting them is cheap and needs no binning error).

use schedlab_core::trace::{Event, Trace};
use schedlab_core::TaskId;
use serde::Serialize;
use std::collections::BTreeMap;

/// The event classes whose mean time per event [`analyze`] reports, in this order.
///
/// * `run slice`: from a task's switch-in to the next switch on that CPU (the time a
///   task holds the CPU; on the runtime it includes any time the host OS took the
///   worker's thread off its vCPU).
/// * `wake-up`: from a wake-up to that task's next switch-in (wake-to-run latency).
/// * `idle wake-up`: the same, for switch-ins onto an idle CPU (`prev` = idle): on
///   the runtime the cost of waking a spinning or parked worker.
/// * `ipi`: from a reschedule IPI (stamped at the end of the sender's side on both
///   engines) to the target CPU's next switch. Not the IPI's price alone: the interval
///   holds the target's `schedule()` and `schedule_tail` lock holds, and on the runtime
///   the trace's own clock reads and records in them (docs/traces.md, "The `ipi` class is not the price of an IPI").
/// * `lock hold`: from a run-queue lock's acquire to its release.
/// * `lock wait`: the spin before an acquire (`wait_ns`).
pub const CLASSES: [&str; 6] = ["run slice", "wake-up", "idle wake-up", "ipi", "lock hold", "lock wait"];

/// Mean and median time per event of one class.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClassCost {
    pub class: &'static str,
    pub count: u64,
    pub mean_ns: f64,
    /// Nearest-rank median (0 with no events).
    pub p50_ns: u64,
}

/// What one trace shows.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Dist {
    /// Run slices (switches onto a task): the engines' `context_switches`.
    pub switches: u64,
    pub migrations: u64,
    pub wakeups: u64,
    /// Wake-up → that task's next switch-in, ns (nearest rank; None: no sample).
    pub wake_to_run_p50_ns: Option<u64>,
    pub wake_to_run_p99_ns: Option<u64>,
    /// Length of a run slice, ns.
    pub run_len_p50_ns: Option<u64>,
    /// Events past the trace's cap: the figures then cover the run's beginning only.
    pub dropped: u64,
    /// Mean time per event of each of [`CLASSES`], in that order.
    pub classes: Vec<ClassCost>,
}

/// The `p`-quantile (0 < p ≤ 1) of sorted samples by nearest rank: the smallest
/// sample with at least a fraction `p` of the samples at or below it.
pub fn quantile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[derive(Default)]
struct Acc {
    sum: u128,
    samples: Vec<u64>,
}

impl Acc {
    fn add(&mut self, v: u64) {
        self.sum += u128::from(v);
        self.samples.push(v);
    }
    fn cost(&mut self, class: &'static str) -> ClassCost {
        let n = self.samples.len() as u64;
        let mean_ns = if n == 0 { 0.0 } else { self.sum as f64 / n as f64 };
        self.samples.sort_unstable();
        ClassCost { class, count: n, mean_ns, p50_ns: quantile(&self.samples, 0.5).unwrap_or(0) }
    }
}

/// Analyse one trace (either engine's).
pub fn analyze(t: &Trace) -> Dist {
    // The runtime's records come from per-worker buffers: order all by time (stable,
    // so a CPU's same-time events keep their recording order).
    let mut order: Vec<usize> = (0..t.records.len()).collect();
    order.sort_by_key(|&i| t.records[i].ts_ns);

    let mut woke: BTreeMap<TaskId, u64> = BTreeMap::new();
    let mut slice_start: BTreeMap<u32, u64> = BTreeMap::new();
    let mut ipi_at: BTreeMap<u32, u64> = BTreeMap::new();
    let mut held: BTreeMap<u32, u64> = BTreeMap::new();
    let (mut wake_lat, mut run_len) = (Vec::new(), Vec::new());
    let (mut switches, mut migrations, mut wakeups) = (0u64, 0u64, 0u64);
    let [mut slice, mut wake, mut idle_wake, mut ipi, mut hold, mut wait] = std::array::from_fn(|_| Acc::default());

    for &i in &order {
        let r = &t.records[i];
        match r.ev {
            Event::Switch { prev, next, .. } => {
                if let Some(s) = slice_start.remove(&r.cpu) {
                    let len = r.ts_ns.saturating_sub(s);
                    run_len.push(len);
                    slice.add(len);
                }
                if let Some(at) = ipi_at.remove(&r.cpu) {
                    if next.is_some() {
                        ipi.add(r.ts_ns.saturating_sub(at));
                    }
                }
                if let Some(n) = next {
                    switches += 1;
                    slice_start.insert(r.cpu, r.ts_ns);
                    if let Some(w) = woke.remove(&n) {
                        let lat = r.ts_ns.saturating_sub(w);
                        wake_lat.push(lat);
                        wake.add(lat);
                        if prev.is_none() {
                            idle_wake.add(lat);
                        }
                    }
                }
            }
            Event::Wakeup { task, .. } => {
                wakeups += 1;
                // A second wake-up before the task ran is not a new wait.
                woke.entry(task).or_insert(r.ts_ns);
            }
            Event::Migrate { .. } => migrations += 1,
            // The runtime recycles task ids: a fork or an exit ends the old task's wait.
            Event::Fork { child, .. } => {
                woke.remove(&child);
            }
            Event::Exit { task } => {
                woke.remove(&task);
            }
            Event::LockAcquire { lock, wait_ns } => {
                wait.add(wait_ns);
                held.insert(lock, r.ts_ns);
            }
            Event::LockRelease { lock } => {
                if let Some(a) = held.remove(&lock) {
                    hold.add(r.ts_ns.saturating_sub(a));
                }
            }
            Event::Ipi { to } => {
                ipi_at.entry(to).or_insert(r.ts_ns);
            }
        }
    }
    wake_lat.sort_unstable();
    run_len.sort_unstable();
    let accs = [&mut slice, &mut wake, &mut idle_wake, &mut ipi, &mut hold, &mut wait];
    Dist {
        switches,
        migrations,
        wakeups,
        wake_to_run_p50_ns: quantile(&wake_lat, 0.50),
        wake_to_run_p99_ns: quantile(&wake_lat, 0.99),
        run_len_p50_ns: quantile(&run_len, 0.50),
        dropped: t.dropped,
        classes: CLASSES.iter().zip(accs).map(|(c, a)| a.cost(c)).collect(),
    }
}

/// The class whose median time per event differs most between the engines.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Mispriced {
    pub class: &'static str,
    pub sim_p50_ns: u64,
    pub real_p50_ns: u64,
    /// `sim_p50_ns / real_p50_ns`.
    pub ratio: f64,
    /// The means, for reference (not ranked: see the module's note).
    pub sim_mean_ns: f64,
    pub real_mean_ns: f64,
}

/// Fewer events than this in either trace: the class is not compared.
pub const MIN_EVENTS: u64 = 10;

/// Medians both below this are not compared: the runtime's tracing puts its own cost
/// inside the short events (a lock wait is timed by two clock reads, ~50 ns in this VM,
/// where the simulator records a free lock's wait as 0; a traced hold contains a clock
/// read and a record push, ~100–150 ns), so such a pair differs by the measurement,
/// not by a price.
pub const NOISE_FLOOR_NS: u64 = 200;

/// Among the classes with at least [`MIN_EVENTS`] events and a positive median in both
/// traces, not both under [`NOISE_FLOOR_NS`], the one with the largest |ln(sim/real)|
/// of the medians (first in [`CLASSES`] order on a tie).
pub fn most_different(sim: &Dist, real: &Dist) -> Option<Mispriced> {
    let mut best: Option<(f64, Mispriced)> = None;
    for (s, r) in sim.classes.iter().zip(&real.classes) {
        if s.count < MIN_EVENTS || r.count < MIN_EVENTS || s.p50_ns == 0 || r.p50_ns == 0 {
            continue;
        }
        if s.p50_ns.max(r.p50_ns) < NOISE_FLOOR_NS {
            continue;
        }
        let ratio = s.p50_ns as f64 / r.p50_ns as f64;
        let d = ratio.ln().abs();
        if best.as_ref().is_none_or(|(bd, _)| d > *bd) {
            let m = Mispriced {
                class: s.class,
                sim_p50_ns: s.p50_ns,
                real_p50_ns: r.p50_ns,
                ratio,
                sim_mean_ns: s.mean_ns,
                real_mean_ns: r.mean_ns,
            };
            best = Some((d, m));
        }
    }
    best.map(|(_, m)| m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::trace::{TraceBuf, TraceMeta};
    use schedlab_core::PrevState::{Blocked, Runnable};

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile(&v, 0.5), Some(50));
        assert_eq!(quantile(&v, 0.99), Some(99));
        assert_eq!(quantile(&v, 1.0), Some(100));
        assert_eq!(quantile(&[7], 0.99), Some(7));
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[1, 2, 3], 0.5), Some(2));
    }

    /// A hand-built trace on two CPUs, recorded out of time order across CPUs (as the
    /// runtime's per-worker buffers are): task 0 is woken 100 times, with latencies
    /// 1..=100 µs; task 1 runs slices of 10, 20, 30 µs; one IPI is delivered after
    /// 5 µs; a lock is held 2 µs after a 3 µs spin.
    #[test]
    fn known_quantiles_and_class_means() {
        let mut cpu0 = TraceBuf::new(10_000);
        let mut cpu1 = TraceBuf::new(10_000);
        let us = 1000;
        let mut t = 0;
        for k in 1..=100u64 {
            cpu0.push(t, 0, Event::Wakeup { task: 0, waker: None, target: None });
            // A second wake-up of a waiting task does not restart its wait.
            cpu0.push(t + 1, 0, Event::Wakeup { task: 0, waker: None, target: None });
            cpu0.push(t + k * us, 0, Event::Switch { prev: None, next: Some(0), prev_state: Runnable });
            cpu0.push(t + k * us + 500, 0, Event::Switch { prev: Some(0), next: None, prev_state: Blocked });
            t += 1_000_000;
        }
        let mut s = 0;
        for len in [10, 20, 30] {
            cpu1.push(s, 1, Event::Switch { prev: None, next: Some(1), prev_state: Runnable });
            cpu1.push(s + len * us, 1, Event::Switch { prev: Some(1), next: None, prev_state: Blocked });
            s += 100 * us;
        }
        // Past cpu 0's wake-ups, so that the IPI's switch is the last on cpu 0.
        let s = 200_000 * us;
        cpu1.push(s, 1, Event::Ipi { to: 0 });
        cpu1.push(s + 7 * us, 1, Event::LockAcquire { lock: 0, wait_ns: 3 * us });
        cpu1.push(s + 9 * us, 1, Event::LockRelease { lock: 0 });
        cpu1.push(s + 10 * us, 1, Event::Migrate { task: 1, from: 0, to: 1 });
        // The IPI's target switches 5 µs later (task 0 again, with no wake-up).
        cpu0.push(s + 5 * us, 0, Event::Switch { prev: None, next: Some(0), prev_state: Runnable });
        let mut records = cpu1.finish(TraceMeta::default()).records;
        records.extend(cpu0.finish(TraceMeta::default()).records);
        let trace = Trace { meta: TraceMeta { cpus: 2, ..TraceMeta::default() }, records, cap: 10_000, dropped: 0 };

        let d = analyze(&trace);
        assert_eq!(d.wakeups, 200);
        assert_eq!(d.switches, 104);
        assert_eq!(d.migrations, 1);
        assert_eq!(d.wake_to_run_p50_ns, Some(50 * us));
        assert_eq!(d.wake_to_run_p99_ns, Some(99 * us));
        // 100 slices of 0.5 µs, 3 of 10–30 µs (the last slice of cpu 0 is open).
        assert_eq!(d.run_len_p50_ns, Some(500));
        let mean = |c: &str| d.classes.iter().find(|x| x.class == c).map(|x| (x.count, x.mean_ns)).unwrap();
        assert_eq!(mean("wake-up"), (100, 50.5 * us as f64));
        assert_eq!(mean("idle wake-up"), (100, 50.5 * us as f64));
        assert_eq!(mean("run slice"), (103, (100.0 * 500.0 + 60_000.0) / 103.0));
        assert_eq!(mean("ipi"), (1, 5_000.0));
        assert_eq!(mean("lock hold"), (1, 2_000.0));
        assert_eq!(mean("lock wait"), (1, 3_000.0));

        // Against itself nothing differs; a copy with slices 4× as long points at them.
        let p50 = |c: &str| d.classes.iter().find(|x| x.class == c).map(|x| x.p50_ns).unwrap();
        assert_eq!(p50("wake-up"), 50 * us);
        assert_eq!(p50("run slice"), 500);
        let same = most_different(&d, &d).unwrap();
        assert_eq!(same.ratio, 1.0);
        let mut slow = d.clone();
        slow.classes[0].p50_ns *= 4;
        slow.classes[1].p50_ns *= 2;
        let m = most_different(&d, &slow).unwrap();
        assert_eq!((m.class, m.ratio), ("run slice", 0.25));
    }

    fn class(class: &'static str, samples: &[u64]) -> ClassCost {
        let mut a = Acc::default();
        samples.iter().for_each(|&v| a.add(v));
        a.cost(class)
    }

    fn dist(classes: Vec<ClassCost>) -> Dist {
        Dist {
            switches: 0,
            migrations: 0,
            wakeups: 0,
            wake_to_run_p50_ns: None,
            wake_to_run_p99_ns: None,
            run_len_p50_ns: None,
            dropped: 0,
            classes,
        }
    }

    /// The s22 ping-pong pattern: the runtime's lock waits are mostly a clock read
    /// (~50 ns) plus a few multi-millisecond waits (a preempted holder), the
    /// simulator's a few ns; run slices 0.6 µs simulated against 2 µs real. By the
    /// means `lock wait` differed most; by the medians the slices do.
    #[test]
    fn a_few_long_lock_waits_do_not_outrank_a_typical_difference() {
        let mut real_waits = vec![50u64; 1000];
        real_waits.extend([5_000_000u64; 30]);
        let sim = dist(vec![class("run slice", &[600; 1000]), class("lock wait", &[20; 1000])]);
        let real = dist(vec![class("run slice", &[2_000; 1000]), class("lock wait", &real_waits)]);
        // By the means lock wait would differ ~7,000×: a few waits dominate the mean.
        assert!(real.classes[1].mean_ns > 100_000.0);
        let m = most_different(&sim, &real).unwrap();
        assert_eq!(m.class, "run slice");
        assert_eq!((m.sim_p50_ns, m.real_p50_ns), (600, 2_000));
        // A lock wait that is typically long on one side is still named.
        let real = dist(vec![class("run slice", &[2_000; 1000]), class("lock wait", &[100_000; 1000])]);
        assert_eq!(most_different(&sim, &real).unwrap().class, "lock wait");
    }
}
