//! Event-to-event variation of the per-event CPU prices (`CostParams::cost_jitter_pct`).
//!
//! Without it every task switch, send, receive, `schedule()` entry and wake-up entry
//! costs exactly its price, so a workload whose events repeat (hackbench) runs in
//! lockstep: a race between two CPUs is decided the same way every time
//! (docs/traces.md, "Session 27: where woken tasks run"). A real machine's events do
//! not cost the same twice. With a coefficient of variation `c` (one event's price's
//! standard deviation over its median, measured by `schedlab validate`'s calibration:
//! `schedlab_validate::spread`), each such charge is multiplied by a factor drawn
//! uniformly from `1 ± h`, `h = √3 c` (a uniform's standard deviation is `h / √3`).
//! Uniform because the calibration measures only the spread's size: the clock of the
//! machine it was built on steps by 10 ns, a quarter of a switch, so one event's
//! distribution has no measurable shape, only a variance (from sums of 16 events); a
//! uniform factor has that variance, no tail the measurement did not see, and never
//! makes a price negative. Its mean and median are 1, so the calibrated median prices
//! stay the prices charged on average: the variation moves the events' phases, not
//! the machine's speed. The fraction of a nanosecond left over is rounded up or down
//! at random in proportion (the prices are a few tens of ns; rounding to nearest
//! would bias the small ones).
//!
//! One ChaCha stream per run, seeded from the run's seed on a stream of its own, so
//! the workload's own draws (`ComputeUniform`, tick phases) are the same with jitter
//! on or off, and a jittered run is byte-identical per seed. With a spread of 0 there
//! is no [`Jitter`] at all: nothing is drawn and every charge is the price.

use rand::RngCore;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cell::{Cell, RefCell};

/// The stream of the run's seed the jitter draws from (the engine's own RNG uses 0).
const JITTER_STREAM: u64 = 1;
/// Factors are in millionths.
const PPM: u64 = 1_000_000;

/// A source of price factors (present only when the spread is positive).
#[derive(Debug)]
pub struct Jitter {
    /// Half-width of the uniform factor, in millionths.
    half_ppm: u64,
    rng: RefCell<ChaCha8Rng>,
    /// Factors drawn so far (what the tests read).
    draws: Cell<u64>,
}

impl Jitter {
    /// The jitter of a coefficient of variation of `cv_pct` percent, for the run of
    /// seed `seed`; None for 0 (no variation, nothing to draw).
    pub fn new(cv_pct: u32, seed: u64) -> Option<Jitter> {
        if cv_pct == 0 {
            return None;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(JITTER_STREAM);
        // h = √3 c = √3 × pct × 10⁴ ppm.
        let half_ppm = (cv_pct as f64 * 10_000.0 * 3f64.sqrt()).round() as u64;
        debug_assert!(half_ppm < PPM, "cost_jitter_pct {cv_pct} is validated to keep factors positive");
        Some(Jitter { half_ppm, rng: RefCell::new(rng), draws: Cell::new(0) })
    }

    /// `ns` times one drawn factor, rounded up or down at random in proportion to the
    /// fraction. A zero price stays zero and draws nothing.
    #[inline]
    pub fn apply(&self, ns: u64) -> u64 {
        if ns == 0 {
            return 0;
        }
        let r = self.rng.borrow_mut().next_u64();
        self.draws.set(self.draws.get() + 1);
        // The high half picks the factor in [1 - h, 1 + h), the low half the rounding.
        let factor_ppm = PPM - self.half_ppm + ((2 * self.half_ppm * (r >> 32)) >> 32);
        let scaled = ns * factor_ppm;
        let (whole, frac) = (scaled / PPM, scaled % PPM);
        let up = ((r & 0xffff_ffff) * PPM) >> 32 < frac;
        whole + up as u64
    }

    /// Factors drawn so far.
    pub fn draws(&self) -> u64 {
        self.draws.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_spread_no_jitter() {
        assert!(Jitter::new(0, 1).is_none());
    }

    #[test]
    fn factors_are_uniform_around_one_with_the_asked_standard_deviation() {
        let j = Jitter::new(10, 7).unwrap();
        let n = 100_000;
        let mut v: Vec<u64> = (0..n).map(|_| j.apply(1000)).collect();
        let mean = v.iter().sum::<u64>() as f64 / n as f64;
        let sd = (v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!((mean - 1000.0).abs() < 1.0, "mean {mean}");
        assert!((sd - 100.0).abs() < 1.5, "sd {sd}");
        v.sort_unstable();
        assert!((v[n / 2] as f64 - 1000.0).abs() < 3.0, "median {}", v[n / 2]);
        // h = √3 × 0.1 = 0.1732: nothing outside 826..=1174, and the ends are reached.
        assert!(v[0] >= 826 && v[n - 1] <= 1174, "{}..{}", v[0], v[n - 1]);
        assert!(v[0] <= 830 && v[n - 1] >= 1170, "{}..{}", v[0], v[n - 1]);
    }

    #[test]
    fn small_prices_keep_their_mean_and_zero_stays_zero() {
        let j = Jitter::new(30, 3).unwrap();
        let n = 200_000;
        let mean = (0..n).map(|_| j.apply(2)).sum::<u64>() as f64 / n as f64;
        assert!((mean - 2.0).abs() < 0.01, "mean {mean}");
        assert_eq!(j.apply(0), 0);
    }

    #[test]
    fn a_seed_gives_one_sequence() {
        let draw = |seed| {
            let j = Jitter::new(25, seed).unwrap();
            (0..64).map(|_| j.apply(39)).collect::<Vec<_>>()
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
    }
}
