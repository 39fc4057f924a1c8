//! Event-to-event spread of the per-event CPU prices (the host machine's
//! `cost_jitter_pct`).
//!
//! The rest of the calibration takes medians of batch means: the price of an event
//! on average. The runtime's events do not all cost that: one dispatch, one channel
//! operation or one policy call takes longer or shorter than the next (cache and
//! branch-predictor state, the other hyperthread, the hypervisor). On this VM both
//! clocks (the OS clock and the time-stamp counter) advance in 10 ns steps, a
//! quarter of a task switch, so one call cannot be timed alone: each timing here is
//! of [`K`] consecutive calls (0.6–1.3 µs) between two fenced reads of the
//! time-stamp counter, many times. If the calls vary independently, the sum's
//! standard deviation is √K times one call's, so one call's coefficient of variation
//! is the sum's times √K. The sum's variance is taken from the batches between the
//! 1st and 99th percentiles (batches an interrupt or another process hit are the
//! outliers), scaled as for a normal distribution (a sum of K calls is close to
//! one), less the clock's quantisation (an interval read with a step `q` adds
//! q² / 6). The same from batches of K / 4 shows whether the calls vary
//! independently (the two estimates agree) or together (the larger batches' is
//! larger); it is printed, not used.

use crate::timing::pin;
use serde::Serialize;
use std::time::Instant;

/// Calls per timed batch.
pub const K: usize = 16;

/// One operation's variation.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct OpSpread {
    pub name: &'static str,
    /// Median time of one call (batch median / K), in ns.
    pub median_ns: f64,
    /// One call's standard deviation over its median, from batches of [`K`].
    pub cv: f64,
    /// The same from batches of K / 4 (a check of independence; not used).
    pub cv_small: f64,
    /// 10th, 50th and 90th percentiles of a batch of K calls, in ns.
    pub batch_ns: [f64; 3],
}

/// The measured spreads.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Spreads {
    /// The clock's step, in ns.
    pub step_ns: f64,
    pub ops: Vec<OpSpread>,
}

impl Spreads {
    /// The host machine's `cost_jitter_pct`: the median of the operations'
    /// coefficients of variation, in whole percent (0 when nothing was measured).
    pub fn jitter_pct(&self) -> u32 {
        let cvs: Vec<f64> = self.ops.iter().map(|o| o.cv).collect();
        if cvs.is_empty() {
            return 0;
        }
        let max = schedlab_sim::CostParams::MAX_JITTER_PCT as f64;
        (crate::timing::median(cvs) * 100.0).round().clamp(0.0, max) as u32
    }
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// One call's median (ns) and coefficient of variation, from the sorted timings of
/// batches of `k` calls read with a clock of step `step_ns`.
fn cv_of(batches: &[f64], k: usize, step_ns: f64) -> (f64, f64) {
    let median = quantile(batches, 0.5);
    let sigma = (trimmed_variance(batches) - step_ns * step_ns / 6.0).max(0.0).sqrt();
    let cv = if median > 0.0 { sigma * (k as f64).sqrt() / median } else { 0.0 };
    (median / k as f64, cv)
}

/// The variance of the sorted values between their 1st and 99th percentiles, scaled
/// back to the whole distribution's as if it were normal (cutting 1 % off each side
/// of a normal leaves 0.8735 of its variance). The percentiles, not a plain
/// variance: a batch an interrupt hit is microseconds long.
fn trimmed_variance(sorted: &[f64]) -> f64 {
    const KEPT_OF_NORMAL: f64 = 0.8735;
    let (lo, hi) = (quantile(sorted, 0.01), quantile(sorted, 0.99));
    let kept: Vec<f64> = sorted.iter().copied().filter(|&x| x >= lo && x <= hi).collect();
    let n = kept.len() as f64;
    let mean = kept.iter().sum::<f64>() / n;
    kept.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n / KEPT_OF_NORMAL
}

/// One operation's spread from its batch timings at `K` and `K / 4` calls.
fn op_spread(name: &'static str, (big, small): &(Vec<f64>, Vec<f64>), step_ns: f64) -> OpSpread {
    let (median_ns, cv) = cv_of(big, K, step_ns);
    let (_, cv_small) = cv_of(small, K / 4, step_ns);
    let batch_ns = [quantile(big, 0.1), quantile(big, 0.5), quantile(big, 0.9)];
    OpSpread { name, median_ns, cv, cv_small, batch_ns }
}

/// A fine clock: the time-stamp counter, fenced so that the read waits for the
/// instructions before it (x86-64); elsewhere the OS clock, in ns.
#[inline(always)]
fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `lfence` and `rdtsc` exist on every x86-64 CPU and touch no memory.
    unsafe {
        std::arch::x86_64::_mm_lfence();
        let t = std::arch::x86_64::_rdtsc();
        std::arch::x86_64::_mm_lfence();
        t
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        use std::sync::OnceLock;
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Nanoseconds per [`ticks`] step, from 20 ms of both clocks.
fn ns_per_tick() -> f64 {
    let (t0, c0) = (Instant::now(), ticks());
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (ns, c) = (t0.elapsed().as_nanos() as f64, ticks() - c0);
    ns / c.max(1) as f64
}

/// The clock's step in ns: the smallest gap of more than 1 ns between distinct
/// sorted timings (every timing is a whole number of steps plus the counter's odd
/// one-tick corrections).
fn clock_step_ns<'a>(timings: impl IntoIterator<Item = &'a Vec<f64>>) -> f64 {
    let mut step = f64::INFINITY;
    for v in timings {
        for w in v.windows(2) {
            let gap = w[1] - w[0];
            if gap > 1.0 && gap < step {
                step = gap;
            }
        }
    }
    if step.is_finite() {
        step
    } else {
        0.0
    }
}

/// `n` timings in ns of `k` consecutive calls of `f`, each between two [`ticks`], sorted.
fn batch_timings(n: usize, k: usize, scale: f64, f: &mut dyn FnMut()) -> Vec<f64> {
    let mut v = Vec::with_capacity(n);
    // Warm the path (first calls fault pages and train predictors).
    for _ in 0..1000 {
        f();
    }
    for _ in 0..n {
        let t = ticks();
        for _ in 0..k {
            f();
        }
        v.push((ticks() - t) as f64 * scale);
    }
    v.sort_by(f64::total_cmp);
    v
}

/// Batch timings of `f` at `K` and `K / 4` calls.
fn both(n: usize, scale: f64, f: &mut dyn FnMut()) -> (Vec<f64>, Vec<f64>) {
    (batch_timings(n, K, scale, f), batch_timings(n, K / 4, scale, f))
}

/// Batch timings of `yield_now` re-dispatches (a task switch) on a one-worker runtime.
fn yields(n: usize, scale: f64) -> Result<(Vec<f64>, Vec<f64>), String> {
    let rt = crate::timing::runtime(1).map_err(|e| e.to_string())?;
    let h = rt.spawn(async move {
        let mut out = Vec::new();
        for k in [K, K / 4] {
            for _ in 0..1000 {
                schedlab_rt::yield_now().await;
            }
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                let t = ticks();
                for _ in 0..k {
                    schedlab_rt::yield_now().await;
                }
                v.push((ticks() - t) as f64 * scale);
            }
            v.sort_by(f64::total_cmp);
            out.push(v);
        }
        out
    });
    let mut v = rt.block_on(h).map_err(|e| format!("yield timing task: {e:?}"))?;
    rt.shutdown();
    let small = v.pop().unwrap_or_default();
    Ok((v.pop().unwrap_or_default(), small))
}

/// Measure the spreads of the operations whose prices the simulator varies: a
/// channel send + receive (`send_cycles`, `recv_cycles`), a task switch (a
/// `yield_now` re-dispatch: `context_switch_cycles`) and one hop's policy calls (DSS
/// `schedule()` + `wake_up` + `schedule()`: `schedule_entry_cycles`,
/// `wakeup_entry_cycles`), each on one pinned thread.
pub fn measure(quick: bool) -> Result<Spreads, crate::ValidateError> {
    measure_spreads(quick).map_err(crate::ValidateError::Runtime)
}

fn measure_spreads(quick: bool) -> Result<Spreads, String> {
    let n = if quick { 2_000 } else { 20_000 };
    let on_cpu0 = |f: Box<dyn FnOnce() -> (Vec<f64>, Vec<f64>) + Send>| {
        std::thread::spawn(move || {
            pin(0);
            f()
        })
        .join()
        .map_err(|_| "a spread timing thread panicked".to_string())
    };
    let scale = ns_per_tick();
    let pair = on_cpu0(Box::new(move || {
        let (tx, rx) = async_channel::unbounded::<()>();
        both(n, scale, &mut || {
            tx.try_send(()).unwrap();
            rx.try_recv().unwrap();
        })
    }))?;
    let hop = on_cpu0(Box::new(move || crate::policycost::dss_hop(|f| both(n, scale, f))))?;
    let switch = yields(n, scale)?;
    let step_ns = clock_step_ns([&pair.0, &pair.1, &hop.0, &hop.1, &switch.0, &switch.1]);
    Ok(Spreads {
        step_ns,
        ops: vec![
            op_spread("send+recv", &pair, step_ns),
            op_spread("switch", &switch, step_ns),
            op_spread("DSS hop", &hop, step_ns),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_spread_is_one_calls_times_root_k_less_the_clock_step() {
        // Batches of 16 calls of 50 ns whose sums are ±40 ns around 800 in equal
        // parts (σ = 40): one call has σ = 10 ns once the normal scaling of the trimmed
        // variance is undone. 100 values: the percentiles keep them all; the median
        // (the 50th of 0..=99, rounded) is 840.
        let mut b: Vec<f64> = (0..100).map(|i| if i < 50 { 760.0 } else { 840.0 }).collect();
        b.sort_by(f64::total_cmp);
        let (one, cv) = cv_of(&b, 16, 0.0);
        assert_eq!(one, 840.0 / 16.0);
        let sigma = (1600.0f64 / 0.8735).sqrt();
        assert!((cv - sigma * 4.0 / 840.0).abs() < 1e-12, "{cv}");
        // A clock step of 10 ns takes 100 / 6 ns² out of the sum's variance.
        let (_, cv) = cv_of(&b, 16, 10.0);
        assert!((cv - (1600.0 / 0.8735 - 100.0 / 6.0f64).sqrt() * 4.0 / 840.0).abs() < 1e-12, "{cv}");
        // Constant batches vary by nothing; a far outlier is cut off.
        let mut c = vec![800.0; 200];
        c[199] = 50_000.0;
        assert_eq!(cv_of(&c, 16, 10.0).1, 0.0);
        assert_eq!(clock_step_ns([&vec![700.0, 700.4, 710.4, 730.4], &vec![]]), 10.0);
        let s = OpSpread { name: "x", median_ns: 50.0, cv: 0.2, cv_small: 0.2, batch_ns: [0.0; 3] };
        let t = OpSpread { cv: 0.07, ..s.clone() };
        let spreads = Spreads { step_ns: 10.0, ops: vec![s.clone(), t, s] };
        assert_eq!(spreads.jitter_pct(), 20);
        assert_eq!(Spreads { step_ns: 10.0, ops: vec![] }.jitter_pct(), 0);
    }
}
