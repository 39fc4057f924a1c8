//! The options in ticks at one HZ, and the 2002 arithmetic on them ([`Tunables`]).

use super::*;

/// The options in ticks at one HZ, and the 2002 arithmetic on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunables {
    pub hz: u32,
    pub min_timeslice: u64,
    pub max_timeslice: u64,
    pub max_sleep_avg: u64,
    pub starvation_limit: u64,
    pub busy_rebalance: u64,
    pub idle_rebalance: u64,
    pub cache_decay: u64,
    pub prio_bonus_ratio: i64,
    pub interactive_delta: i64,
    pub child_penalty: u64,
    pub parent_penalty: u64,
    pub expired_prio_guard: bool,
    pub scale: bool,
    pub interactive_rule: InteractiveRule,
    pub prio_interactive_ratio: i64,
    pub prio_cpu_hog_ratio: i64,
    pub balance: BalanceScan,
    pub stamp_any: bool,
    pub runqueue_credit: u64,
    pub charge_run: bool,
}

impl Tunables {
    /// Convert `cfg` at `hz`. Timeslices, `max_sleep_avg` and the rebalance intervals
    /// are at least one tick (the kernel's `HZ/1000 ?: 1`); a minimum timeslice above
    /// the maximum is an error naming both keys.
    pub fn new(cfg: &O1Config, hz: u32) -> Result<Tunables, SpecError> {
        let hz = hz.max(1);
        let t = |s: Span| s.ticks(hz);
        let tun = Tunables {
            hz,
            min_timeslice: t(cfg.min_timeslice).max(1),
            max_timeslice: t(cfg.max_timeslice).max(1),
            max_sleep_avg: t(cfg.max_sleep_avg).max(1),
            starvation_limit: t(cfg.starvation_limit),
            busy_rebalance: t(cfg.busy_rebalance).max(1),
            idle_rebalance: t(cfg.idle_rebalance).max(1),
            cache_decay: t(cfg.cache_decay),
            prio_bonus_ratio: cfg.prio_bonus_ratio as i64,
            interactive_delta: cfg.interactive_delta as i64,
            child_penalty: cfg.child_penalty as u64,
            parent_penalty: cfg.parent_penalty as u64,
            expired_prio_guard: cfg.expired_prio_guard,
            scale: cfg.scale,
            interactive_rule: cfg.interactive,
            prio_interactive_ratio: cfg.prio_interactive_ratio as i64,
            prio_cpu_hog_ratio: cfg.prio_cpu_hog_ratio as i64,
            balance: cfg.balance,
            stamp_any: cfg.stamp_any,
            runqueue_credit: cfg.runqueue_credit as u64,
            charge_run: cfg.charge_run,
        };
        if tun.min_timeslice > tun.max_timeslice {
            return Err(SpecError(format!(
                "policy 'o1': min_timeslice={} ({} ticks) exceeds max_timeslice={} ({} ticks) at HZ={hz}",
                show_span(cfg.min_timeslice),
                tun.min_timeslice,
                show_span(cfg.max_timeslice),
                tun.max_timeslice
            )));
        }
        Ok(tun)
    }

    /// The longest a task can wait in one CPU's expired array (ticks from the first
    /// expiry to the array swap, the `max_swap_wait_ticks` statistic) on a CPU that
    /// runs at most `tasks` SCHED_OTHER tasks over the wait, none with a static priority
    /// better than `best_static_prio`, and no real-time work, with no task migrating in
    /// (a uniprocessor):
    ///
    /// * the expired tasks start to starve once the first has waited the deadline,
    ///   `STARVATION_LIMIT × nr_running` (2002) or `STARVATION_LIMIT` (`scale=off`),
    ///   plus the one tick of the `>` in `EXPIRED_STARVING`;
    /// * from then on every task whose slice runs out goes to the expired array, and
    ///   nothing else refills a slice: a wake-up keeps the slice the task slept with,
    ///   and a fork splits the parent's between parent and child (one tick more at
    ///   most, from the rounding). So each task spends at most `slice + 1` more ticks
    ///   in the active array (`slice` the timeslice of `best_static_prio`, 15 ticks for
    ///   nice 0 at the defaults), which then empties and the arrays swap;
    /// * plus one tick for the swap itself, which happens at the next `schedule()`.
    ///
    /// With `scale` the 2002 term grows with `nr_running` (≤ `tasks`): 40 tasks at the
    /// default 2 s allow 80 s. With `scale=off` it is `STARVATION_LIMIT + 2 + tasks ×
    /// (slice + 1)` ticks. The bound covers the expired array only: a task can also
    /// wait in the *active* array behind better dynamic priorities, which no option of
    /// O(1) bounds (`docs/policies.md`, "The NetBench starvation").
    pub fn expired_wait_bound(&self, tasks: u64, best_static_prio: u8) -> u64 {
        let deadline = if self.scale { self.starvation_limit.saturating_mul(tasks) } else { self.starvation_limit };
        let slice = self.timeslice(best_static_prio);
        deadline.saturating_add(2).saturating_add(tasks.saturating_mul(slice + 1))
    }

    /// `TASK_TIMESLICE(p)` in ticks: `MIN + (MAX − MIN) · (139 − static_prio) / 39`.
    pub fn timeslice(&self, static_prio: u8) -> u64 {
        let steps = (MAX_PRIO as u64 - 1).saturating_sub(static_prio as u64).min(39);
        self.min_timeslice + (self.max_timeslice - self.min_timeslice) * steps / 39
    }

    /// The `sleep_avg` bonus, `MAX_USER_PRIO·RATIO·sleep_avg/MAX_SLEEP_AVG/100 −
    /// MAX_USER_PRIO·RATIO/100/2`: −5..=+5 with the 2002 ratio of 25 %.
    pub fn bonus(&self, sleep_avg: u64) -> i64 {
        let r = self.prio_bonus_ratio;
        let s = sleep_avg.min(self.max_sleep_avg) as i64;
        MAX_USER_PRIO * r * s / self.max_sleep_avg as i64 / 100 - MAX_USER_PRIO * r / 100 / 2
    }

    /// `effective_prio(p)` of a SCHED_OTHER task: the static priority minus the bonus,
    /// kept within 100..=139.
    pub fn effective_prio(&self, static_prio: u8, sleep_avg: u64) -> u8 {
        (static_prio as i64 - self.bonus(sleep_avg)).clamp(MAX_RT_PRIO as i64, MAX_PRIO as i64 - 1) as u8
    }

    /// `TASK_INTERACTIVE(p)`. Mid 2002: `prio ≤ static_prio − DELTA(p)` with
    /// `DELTA(p) = nice·(MAX_USER_PRIO·RATIO/100)/40 + INTERACTIVE_DELTA` (C division,
    /// towards 0). -J7: `prio ≤ PRIO_INTERACTIVE`, or `prio < PRIO_CPU_HOG` and `prio ≤
    /// static_prio − INTERACTIVE_DELTA`, with `PRIO_X = MAX_RT_PRIO +
    /// MAX_USER_PRIO·X_RATIO/100` (108 and 124 at the -J7 ratios).
    pub fn interactive(&self, prio: u8, static_prio: u8) -> bool {
        let (prio, static_prio) = (prio as i64, static_prio as i64);
        match self.interactive_rule {
            InteractiveRule::Delta => {
                let nice = static_prio - 120;
                let delta = nice * (MAX_USER_PRIO * self.prio_bonus_ratio / 100) / 40 + self.interactive_delta;
                prio <= static_prio - delta
            }
            InteractiveRule::J7 => {
                let rt = MAX_RT_PRIO as i64;
                let prio_interactive = rt + MAX_USER_PRIO * self.prio_interactive_ratio / 100;
                let prio_cpu_hog = rt + MAX_USER_PRIO * self.prio_cpu_hog_ratio / 100;
                prio <= prio_interactive || (prio < prio_cpu_hog && prio <= static_prio - self.interactive_delta)
            }
        }
    }
}
