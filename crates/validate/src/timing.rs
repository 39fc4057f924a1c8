//! What every measurement of the calibration is made with: a thread pinned to a
//! core, a call timed as the median of batch means, the fast runtime the timings
//! run on, and the median itself.
//!
//! The bottom of the calibration's files: the measurements (`xcpu.rs`,
//! `backoff.rs`, `spread.rs`, ...) import from here, and `calibrate.rs` imports
//! the measurements; nothing here imports either, so the dependency runs one way.

use std::time::Instant;

/// The median (the mean of the two middle values for an even count): of a row's runs
/// and of every calibration's samples.
pub fn median(v: impl AsRef<[f64]>) -> f64 {
    let mut s = v.as_ref().to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => s[n / 2],
        _ => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Operations per timed batch of [`time_per`] and the loops like it.
pub const BATCH: u64 = 100;

/// The median over batches of [`BATCH`] calls of the mean time per call, in ns. Other
/// users' processes share this machine's CPUs: a batch during which one of them took
/// the CPU is an outlier the median ignores, where a plain mean over all `n` calls
/// would charge their time to the operation.
pub fn time_per<F: FnMut()>(n: u64, mut f: F) -> f64 {
    let mut batches = Vec::with_capacity((n / BATCH).max(1) as usize);
    for _ in 0..(n / BATCH).max(1) {
        let t = Instant::now();
        for _ in 0..BATCH {
            f();
        }
        batches.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
    }
    median(batches)
}

/// Pin the calling thread to core `core` (modulo the cores there are; nothing if the
/// host does not say).
pub fn pin(core: usize) {
    if let Some(ids) = core_affinity::get_core_ids() {
        if !ids.is_empty() {
            core_affinity::set_for_current(ids[core % ids.len()]);
        }
    }
}

/// A fast-scheduler runtime of `workers` pinned workers, for the timings that run on one.
pub fn runtime(workers: usize) -> Result<schedlab_rt::Runtime, crate::ValidateError> {
    schedlab_rt::Builder::new()
        .workers(workers)
        .policy("fast")
        .pin(true)
        .build()
        .map_err(|e| crate::ValidateError::Runtime(format!("calibration runtime with {workers} workers: {e}")))
}
