//! What one repetition of a program measured: wall time and the process's CPU time
//! (`getrusage(RUSAGE_SELF)`: every thread of the process, so spinning idle workers
//! and helper threads count) around the timed region, turned into a [`Measure`].

use std::time::{Duration, Instant};

/// One repetition's result, in the row's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measure {
    /// The row's value: ns per operation, or operations per (wall-clock) second.
    pub value: f64,
    /// CPU time in the same unit: CPU ns per operation for ns units; operations per
    /// CPU-second for rates (a program that keeps two CPUs busy shows half its rate).
    pub cpu_per_op: f64,
    /// Ping-pong rows: fraction of round trips that crossed workers (if known).
    pub crossed: Option<f64>,
}

impl Measure {
    /// `n` operations took `wall` and `cpu_ns` of process CPU time: ns per operation.
    pub fn per_op(n: u64, wall: Duration, cpu_ns: u64) -> Measure {
        let n = n.max(1) as f64;
        Measure { value: wall.as_nanos() as f64 / n, cpu_per_op: cpu_ns.max(1) as f64 / n, crossed: None }
    }
    /// `n` operations took `wall` and `cpu_ns` of process CPU time: operations per second
    /// (and per CPU-second).
    pub fn rate(n: u64, wall: Duration, cpu_ns: u64) -> Measure {
        let n = n as f64;
        Measure { value: n / wall.as_secs_f64().max(1e-9), cpu_per_op: n / (cpu_ns.max(1) as f64 / 1e9), crossed: None }
    }
}

fn rusage_ns(who: libc::c_int) -> u64 {
    // SAFETY: getrusage only writes the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return 0;
    }
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// CPU time (user + system) of every thread of this process so far, ns
/// (`getrusage(RUSAGE_SELF)`, µs resolution).
pub fn process_cpu_ns() -> u64 {
    rusage_ns(libc::RUSAGE_SELF)
}

/// CPU time of this process's terminated and waited-for children, ns
/// (`getrusage(RUSAGE_CHILDREN)`).
pub fn children_cpu_ns() -> u64 {
    rusage_ns(libc::RUSAGE_CHILDREN)
}

/// Wall clock and process CPU time from one point.
#[derive(Clone, Copy, Debug)]
pub struct Stopwatch {
    start: Instant,
    cpu: u64,
}

impl Stopwatch {
    /// Start now.
    pub fn start() -> Stopwatch {
        let cpu = process_cpu_ns();
        Stopwatch { start: Instant::now(), cpu }
    }
    /// Wall time since the start.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
    /// `n` operations since the start, in ns per operation.
    pub fn per_op(&self, n: u64) -> Measure {
        let wall = self.start.elapsed();
        Measure::per_op(n, wall, process_cpu_ns().saturating_sub(self.cpu))
    }
    /// `n` operations since the start, per second.
    pub fn rate(&self, n: u64) -> Measure {
        let wall = self.start.elapsed();
        Measure::rate(n, wall, process_cpu_ns().saturating_sub(self.cpu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_advances_and_measures_convert() {
        let w = Stopwatch::start();
        let mut x = 0u64;
        while w.elapsed() < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let m = w.per_op(1000);
        assert!(m.value > 0.0 && m.cpu_per_op > 0.0, "{m:?}");
        // A busy loop on one thread: CPU time close to wall time.
        assert!(m.cpu_per_op > m.value * 0.3, "{m:?}");
        let r = Measure::rate(1000, Duration::from_millis(10), 20_000_000);
        assert_eq!((r.value.round(), r.cpu_per_op.round()), (100_000.0, 50_000.0));
    }
}
