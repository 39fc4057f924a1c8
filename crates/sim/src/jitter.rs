//! Event-to-event variation of the per-event CPU prices (`HostKnobs::cost_jitter_pct`).
//!
//! Without it every task switch, send, receive, `schedule()` entry and wake-up entry
//! costs exactly its price, so a workload whose events repeat (hackbench) runs in
//! lockstep: a race between two CPUs is decided the same way every time
//! (docs/traces.md, "DSS against MQS"). A real machine's events do
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
//! The draws are made once per simulated event, before it runs: the engine sets this
//! event's prices in its [`CostModel`] ([`Jitter::redraw`]), so every charge keeps its
//! plain, unchecked path (the unjittered run executes the same instructions as before
//! but one test per event), and an event that pays a price twice pays one factor.
//!
//! One ChaCha stream per run, seeded from the run's seed on a stream of its own, so
//! the workload's own draws (`ComputeUniform`, tick phases) are the same with jitter
//! on or off, and a jittered run is byte-identical per seed. With a spread of 0 there
//! is no [`Jitter`] at all: nothing is drawn and every charge is the price.

use crate::cost::CostModel;
use rand::RngCore;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use schedlab_core::Work;
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
    /// The machine's exact prices, which each event's are drawn around.
    base: Prices,
    rng: RefCell<ChaCha8Rng>,
    /// Factors drawn so far (what the tests read).
    draws: Cell<u64>,
}

impl Jitter {
    /// The jitter of a coefficient of variation of `cv_pct` percent around `cost`'s
    /// prices, for the run of seed `seed`; None for 0 (no variation, nothing to draw).
    /// Boxed: the engine holds it as one pointer it tests at every event.
    pub fn new(cv_pct: u32, seed: u64, cost: &CostModel) -> Option<Box<Jitter>> {
        if cv_pct == 0 {
            return None;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(JITTER_STREAM);
        // h = √3 c = √3 × pct × 10⁴ ppm.
        let half_ppm = (cv_pct as f64 * 10_000.0 * 3f64.sqrt()).round() as u64;
        debug_assert!(half_ppm < PPM, "cost_jitter_pct {cv_pct} is validated to keep factors positive");
        Some(Box::new(Jitter { half_ppm, base: Prices::of(cost), rng: RefCell::new(rng), draws: Cell::new(0) }))
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

    /// Set `cost`'s varied prices to this event's: each exact price times its own
    /// factor (a zero price stays zero and draws nothing). Out of line: the event
    /// loop's unjittered path stays as small as it was.
    #[cold]
    #[inline(never)]
    pub fn redraw(&self, cost: &mut CostModel) {
        let b = &self.base;
        cost.context_switch_ns = self.apply(b.context_switch_ns);
        cost.send_ns = self.apply(b.send_ns);
        cost.recv_ns = self.apply(b.recv_ns);
        cost.recv_block_ns = self.apply(b.recv_block_ns);
        cost.work_ns[Work::ScheduleEntry.index()] = self.apply(b.schedule_entry_ns);
        cost.work_ns[Work::WakeupEntry.index()] = self.apply(b.wakeup_entry_ns);
    }
}

/// The per-event CPU prices that vary: a task switch, a send's and a receive's
/// protocol paths, a blocking receive's registration, the `schedule()` and wake-up
/// entries. The goodness, list, tree and examine charges are a few ns each, priced by
/// count; line transfers, memory, locks and IPIs do not vary (docs/cost-model.md,
/// "Price jitter").
#[derive(Clone, Debug)]
struct Prices {
    context_switch_ns: u64,
    send_ns: u64,
    recv_ns: u64,
    recv_block_ns: u64,
    schedule_entry_ns: u64,
    wakeup_entry_ns: u64,
}

impl Prices {
    fn of(c: &CostModel) -> Prices {
        Prices {
            context_switch_ns: c.context_switch_ns,
            send_ns: c.send_ns,
            recv_ns: c.recv_ns,
            recv_block_ns: c.recv_block_ns,
            schedule_entry_ns: c.work(Work::ScheduleEntry),
            wakeup_entry_ns: c.work(Work::WakeupEntry),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;

    fn host(pct: u32, seed: u64) -> Option<Box<Jitter>> {
        Jitter::new(pct, seed, &CostModel::new(&Machine::preset("smp-2").unwrap()))
    }

    #[test]
    fn no_spread_no_jitter() {
        assert!(host(0, 1).is_none());
    }

    #[test]
    fn factors_are_uniform_around_one_with_the_asked_standard_deviation() {
        let j = host(10, 7).unwrap();
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
        let j = host(30, 3).unwrap();
        let n = 200_000;
        let mean = (0..n).map(|_| j.apply(2)).sum::<u64>() as f64 / n as f64;
        assert!((mean - 2.0).abs() < 0.01, "mean {mean}");
        assert_eq!(j.apply(0), 0);
    }

    #[test]
    fn a_seed_gives_one_sequence() {
        let draw = |seed| {
            let j = host(25, seed).unwrap();
            (0..64).map(|_| j.apply(39)).collect::<Vec<_>>()
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
    }

    #[test]
    fn a_redraw_varies_the_six_prices_and_only_those() {
        let m = Machine::preset("smp-2").unwrap();
        let exact = CostModel::new(&m);
        let j = host(20, 1).unwrap();
        let mut c = exact.clone();
        let mut differs = [false; 6];
        for _ in 0..50 {
            j.redraw(&mut c);
            let pairs = [
                (c.context_switch_ns, exact.context_switch_ns),
                (c.send_ns, exact.send_ns),
                (c.recv_ns, exact.recv_ns),
                (c.recv_block_ns, exact.recv_block_ns),
                (c.work(Work::ScheduleEntry), exact.work(Work::ScheduleEntry)),
                (c.work(Work::WakeupEntry), exact.work(Work::WakeupEntry)),
            ];
            for (i, (now, base)) in pairs.into_iter().enumerate() {
                differs[i] |= now != base;
                // h = √3 × 0.2: within 1 ± 0.35 (and a ns of rounding).
                assert!(now as f64 <= base as f64 * 1.35 + 1.0 && now as f64 >= base as f64 * 0.65 - 1.0);
            }
            assert_eq!(c.work(Work::Goodness), exact.work(Work::Goodness));
            assert_eq!(c.lock_ns, exact.lock_ns);
            assert_eq!(c.transfer_ns(0, 1), exact.transfer_ns(0, 1));
        }
        // smp-2 has no blocking-receive price (0: never varied, never drawn).
        assert_eq!(differs, [true, true, true, false, true, true]);
        assert_eq!(j.draws(), 50 * 5);
    }
}
