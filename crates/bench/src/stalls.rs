//! The machine's own stalls: how often, and for how long, a thread that never blocks
//! stops running. Two threads pinned to the first two CPUs spin on the clock and
//! record every gap of at least [`STALL_NS`] between two consecutive reads. Nothing in
//! the thread waits, so a gap is time the CPU was taken from it: an interrupt, the
//! guest kernel running something else, or (on a virtual machine) the host not
//! running the vCPU, which the guest's own accounting does not see.
//!
//! A latency whose window is `w` long is hit by such a stall with probability of about
//! `rate × w`, and then grows by the stall's length, so a wake-up tail percentile
//! cannot be lower than the stall length once `rate × w` exceeds its tail fraction
//! (docs/bench.md, the wake-latency rows).

use crate::{names, runtimes, units, Row};
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// The smallest gap between two clock reads counted as a stall, ns (a read takes
/// tens of ns; an interrupt of the guest alone costs a few µs).
pub const STALL_NS: u64 = 10_000;

/// What the spinning threads saw.
#[derive(Clone, Debug)]
pub struct Stalls {
    /// Threads (one per CPU, pinned where possible).
    pub threads: usize,
    /// Spin time per thread.
    pub spun: Duration,
    /// Stall lengths, ns, over every thread.
    pub hist: Histogram<u64>,
    /// Time lost in stalls, ns, over every thread.
    pub lost_ns: u64,
    /// Involuntary context switches of the threads while they spun (`getrusage`): the
    /// stalls the guest's own scheduler made. The rest are interrupts and, on a
    /// virtual machine, the host.
    pub preempted: u64,
}

impl Stalls {
    /// Stalls per second per CPU.
    pub fn rate(&self) -> f64 {
        self.hist.len() as f64 / (self.spun.as_secs_f64() * self.threads as f64).max(f64::MIN_POSITIVE)
    }
    /// Guest preemptions per second per CPU.
    pub fn preempt_rate(&self) -> f64 {
        self.preempted as f64 / (self.spun.as_secs_f64() * self.threads as f64).max(f64::MIN_POSITIVE)
    }
    /// Share of the spin time lost in stalls, 0..1.
    pub fn lost_share(&self) -> f64 {
        self.lost_ns as f64 / (self.spun.as_nanos() as f64 * self.threads as f64).max(1.0)
    }
}

/// Spin for `budget` on each of the first two CPUs (one thread on a 1-CPU machine).
pub fn measure(budget: Duration) -> Stalls {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let n = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 2);
    let threads: Vec<_> = (0..n)
        .map(|i| {
            let core = cores.get(i).copied();
            std::thread::spawn(move || {
                if let Some(c) = core {
                    core_affinity::set_for_current(c);
                }
                let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds");
                let mut lost = 0u64;
                let switched = involuntary_switches();
                let start = Instant::now();
                let mut prev = start;
                loop {
                    let now = Instant::now();
                    let gap = now.duration_since(prev).as_nanos() as u64;
                    prev = now;
                    if gap >= STALL_NS {
                        hist.saturating_record(gap);
                        lost += gap;
                    }
                    if now.duration_since(start) >= budget {
                        return (hist, lost, now.duration_since(start), involuntary_switches() - switched);
                    }
                }
            })
        })
        .collect();
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds");
    let (mut lost_ns, mut spun, mut preempted) = (0, Duration::ZERO, 0);
    for t in threads {
        let (h, l, s, p) = t.join().expect("stall thread");
        hist.add(&h).expect("same bounds");
        lost_ns += l;
        spun = spun.max(s);
        preempted += p;
    }
    Stalls { threads: n, spun, hist, lost_ns, preempted }
}

/// This thread's involuntary context switches so far.
fn involuntary_switches() -> u64 {
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return 0;
    }
    ru.ru_nivcsw.max(0) as u64
}

/// The [`names::MACHINE_STALLS`], [`names::MACHINE_STALL_P50`],
/// [`names::MACHINE_STALL_LOST`] and [`names::MACHINE_PREEMPTIONS`] rows of one
/// measurement.
pub fn rows(s: &Stalls) -> Vec<Row> {
    let config = format!("{} pinned threads spinning on the clock, gaps ≥ {} µs", s.threads, STALL_NS / 1000);
    let p50 = if s.hist.is_empty() { 0.0 } else { s.hist.value_at_quantile(0.5) as f64 };
    vec![
        Row::new(names::MACHINE_STALLS, runtimes::MACHINE, &config, s.rate(), units::STALLS_PER_S),
        Row::new(names::MACHINE_STALL_P50, runtimes::MACHINE, &config, p50, units::NS_STALL),
        Row::new(names::MACHINE_STALL_LOST, runtimes::MACHINE, &config, 100.0 * s.lost_share(), units::PERCENT_LOST),
        Row::new(names::MACHINE_PREEMPTIONS, runtimes::MACHINE, &config, s.preempt_rate(), units::STALLS_PER_S),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_are_at_least_the_threshold_and_rows_are_finite() {
        let s = measure(Duration::from_millis(30));
        assert!(s.spun >= Duration::from_millis(30));
        assert!(s.lost_share() < 1.0);
        let rows = rows(&s);
        assert_eq!(rows.len(), 4);
        // The guest's preemptions are stalls too (each one a gap of a time slice).
        assert!(s.preempt_rate().is_finite());
        assert!(rows.iter().all(|r| r.value.is_finite() && r.value >= 0.0));
        // Every recorded stall is at least the threshold.
        assert!(s.hist.is_empty() || s.hist.min() >= STALL_NS - STALL_NS / 100);
    }
}
