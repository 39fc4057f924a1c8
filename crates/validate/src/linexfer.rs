//! What reading K cache lines the other CPU wrote last costs per line, as a dependent
//! chain (each line holds the next one's index: no overlap) and as independent loads
//! (every address known up front: an out-of-order core overlaps the misses). CPU 1
//! writes every line and hands the turn over; CPU 0 times a cold pass, then a hot one;
//! the difference over K is the price of a line. The ratio of the two is how many
//! misses this machine overlaps: the host machine's `mlp` (`examples/linexfer`
//! prints the table for several K).

use crate::timing::median;
use crate::timing::pin;
use std::sync::atomic::{AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::Instant;

/// One line of its own.
#[repr(align(64))]
struct Line(AtomicU64);

/// How CPU 0 reads the lines.
#[derive(Clone, Copy, Debug)]
pub enum Pass {
    /// Each load's address comes from the previous load.
    Chain,
    /// Each line read, then written (a read-for-ownership on a line read already).
    ChainWrite,
    /// Every address known up front.
    Independent,
}

/// One timed pass over the lines, in ns.
fn pass(lines: &[Line], order: &[usize], how: Pass) -> f64 {
    let t = Instant::now();
    let mut at = order[0];
    match how {
        Pass::Independent => at = order.iter().fold(0u64, |s, &j| s.wrapping_add(lines[j].0.load(Relaxed))) as usize,
        Pass::Chain | Pass::ChainWrite => {
            for _ in 0..order.len() {
                let next = lines[at].0.load(Relaxed);
                if matches!(how, Pass::ChainWrite) {
                    lines[at].0.store(next, Relaxed);
                }
                at = next as usize;
            }
        }
    }
    std::hint::black_box(at);
    t.elapsed().as_nanos() as f64
}

/// The median cold and hot pass over `k` lines (`k` ≥ 1) that CPU 1 wrote, `rounds`
/// turns, in ns.
pub fn cold_hot(k: usize, rounds: u64, how: Pass) -> (f64, f64) {
    let lines: Arc<Vec<Line>> = Arc::new((0..k).map(|_| Line(AtomicU64::new(0))).collect());
    // A stride through the lines, so that the prefetcher cannot follow the chain.
    let order: Arc<Vec<usize>> = Arc::new((0..k).map(|i| (i * 7 + 3) % k).collect());
    let turn = Arc::new(AtomicU64::new(0));
    let side = |me: u64| {
        let (lines, turn, order) = (lines.clone(), turn.clone(), order.clone());
        std::thread::spawn(move || {
            pin(me as usize);
            let mut samples = Vec::new();
            for i in 0..rounds {
                while turn.load(Acquire) != 2 * i + me {
                    std::hint::spin_loop();
                }
                if me == 1 {
                    // The writer: each line gets the index of the next in the chain.
                    for j in 0..k {
                        lines[order[j]].0.store(order[(j + 1) % k] as u64, Relaxed);
                    }
                } else {
                    let cold = pass(&lines, &order, how);
                    samples.push((cold, pass(&lines, &order, how)));
                }
                turn.store(2 * i + me + 1, Release);
            }
            samples
        })
    };
    let (reader, writer) = (side(0), side(1));
    writer.join().expect("writer");
    let s = reader.join().expect("reader");
    (median(s.iter().map(|x| x.0).collect::<Vec<_>>()), median(s.iter().map(|x| x.1).collect::<Vec<_>>()))
}

/// Price of one line of `k` read as `how`: (cold − hot) / k, in ns, never below 0.
pub fn per_line(k: usize, rounds: u64, how: Pass) -> f64 {
    let (cold, hot) = cold_hot(k, rounds, how);
    ((cold - hot) / k as f64).max(0.0)
}

/// Lines per pass of the calibration's measurement.
pub const K: usize = 16;

/// Per-line price of `K` lines as a chain and as independent loads, in ns.
pub fn measure(rounds: u64) -> (f64, f64) {
    (per_line(K, rounds, Pass::Chain), per_line(K, rounds, Pass::Independent))
}

/// Per-line price of `K` lines read and then written as a chain: against the chain
/// alone, what a store's ownership request adds to the critical path.
pub fn measure_chain_write(rounds: u64) -> f64 {
    per_line(K, rounds, Pass::ChainWrite)
}

/// Store-buffer entries the host machine gets when its stores are seen off the
/// critical path. Not measured (the depth hides behind the few write misses a policy
/// call makes): the smallest store queue among current x86 server cores, AMD Zen 2's
/// 48 entries (Zen 4: 64, Zen 5: 104; Intel Skylake: 56, Golden Cove: 114). Any depth
/// above the write misses one CPU has pending at once gives the same schedule.
pub const HOST_STORE_BUFFER: u32 = 48;

/// The host machine's `store_buffer`: [`HOST_STORE_BUFFER`] when a chain whose every
/// line is also written costs less than half a line more per line than the chain
/// (the ownership request retires into the store buffer and completes behind the
/// next load), else 0 (each write miss charged where it is made). 0 when the chain
/// cost nothing measurable.
pub fn store_buffer_of(chain_ns: f64, chain_write_ns: f64) -> u32 {
    if !(chain_ns > 0.0 && chain_ns.is_finite() && chain_write_ns.is_finite()) {
        0
    } else if chain_write_ns - chain_ns < chain_ns / 2.0 {
        HOST_STORE_BUFFER
    } else {
        0
    }
}

/// Misses overlapped: chain ÷ independent, rounded, 1..=16. A chain that cost
/// nothing measurable is 1 (no overlap seen); independent loads that cost nothing
/// beyond the hot pass while the chain did are the bound, 16.
pub fn mlp_of(chain_ns: f64, independent_ns: f64) -> u32 {
    if !(chain_ns > 0.0 && chain_ns.is_finite()) || independent_ns.is_nan() {
        1
    } else if independent_ns <= 0.0 {
        16
    } else {
        (chain_ns / independent_ns).round().clamp(1.0, 16.0) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::{mlp_of, store_buffer_of, HOST_STORE_BUFFER};

    #[test]
    fn a_write_that_adds_less_than_half_a_line_means_a_store_buffer() {
        // A measurement with the vCPUs on different cores: 122.1 ns a line as a chain, 122.7 with writes.
        assert_eq!(store_buffer_of(122.1, 122.7), HOST_STORE_BUFFER);
        assert_eq!(store_buffer_of(21.0, 42.0), 0, "each write paid a transfer of its own");
        assert_eq!(store_buffer_of(0.0, 5.0), 0, "nothing measured");
        assert_eq!(store_buffer_of(f64::NAN, 5.0), 0);
        assert_eq!(store_buffer_of(20.0, f64::NAN), 0);
    }

    #[test]
    fn mlp_is_the_rounded_ratio_clamped_to_1_16() {
        assert_eq!(mlp_of(122.1, 8.2), 15);
        assert_eq!(mlp_of(122.7, 8.8), 14);
        assert_eq!(mlp_of(21.0, 30.0), 1, "independent dearer than a chain: no overlap");
        assert_eq!(mlp_of(120.0, 0.0), 16, "nothing measurable per line: the bound");
        assert_eq!(mlp_of(0.0, 0.0), 1);
        assert_eq!(mlp_of(f64::NAN, 3.0), 1);
    }
}
