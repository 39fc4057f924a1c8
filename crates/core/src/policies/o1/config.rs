//! The O(1) policy's options (`o1:key=value,...`): the eras and every 2002 constant,
//! declared once ([`O1Config`]).

use super::*;

/// A time option: a number of ticks, or a time (`150ms`, `2s`) converted to ticks at
/// the machine's HZ as the kernel's `x * HZ / 1000` does ([`Time::ticks`]).
pub use crate::options::Time as Span;

/// Largest time option: a day, or 10^8 ticks.
const MAX_SPAN_NS: u64 = 86_400 * 1_000_000_000;
const MAX_TICKS: u64 = 100_000_000;

/// A kernel the options' defaults are taken from (`era=`); every option still
/// overrides its era's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// The kernel of the NetBench report: the -J7 patch (2.5.3-pre5 / 2.4.17, 25–26
    /// Jan 2002). Its constants (`PRIO_BONUS_RATIO` 70, `INTERACTIVE_DELTA` 3,
    /// `PRIO_INTERACTIVE_RATIO` 20, `PRIO_CPU_HOG_RATIO` 60, 300 ms, 2 s, 2 s) as in
    /// include/linux/sched.h of Ingo Molnar's "[patch] [sched] interactiveness updates
    /// to -J4, 2.5.3-pre3" (LKML, 25 Jan 2002), which -J7 combines with eight other
    /// patches ("[patch] O(1) scheduler, -J7", LKML, 25 Jan 2002), and as Jack Vogel's
    /// "[PATCH]: O(1) 2.5.3-pre5 J7 Tuneable Parameters" (LKML, 26 Jan 2002) shows them
    /// in J7's sched.h; its `TASK_INTERACTIVE` and the early-2002 `load_balance`.
    J7,
    /// Mid 2002 (kernel/sched.c of 2.5.27–2.5.59): `PRIO_BONUS_RATIO` 25,
    /// `INTERACTIVE_DELTA` 2, `TASK_INTERACTIVE` by `DELTA(p)`, and Ingo Molnar's July
    /// 2002 `load_balance` ("[patch] scheduler bits for 2.5.27, -B3", LKML, 22 Jul
    /// 2002: "scan the whole list to find imbalance number of tasks, not just the tail
    /// of the list"). The default.
    V25,
    /// 2.6's starvation changes (kernel/sched.c of 2.6.0–2.6.7): the `best_expired_prio`
    /// clause, `expired_timestamp` set at every slice expiry, run-queue waiting credited
    /// to `sleep_avg` (`ON_RUNQUEUE_WEIGHT` 30 %), `sleep_avg` charged by run time
    /// instead of per tick, `MAX_TIMESLICE` 200 ms, `MAX_SLEEP_AVG` =
    /// `AVG_TIMESLICE · MAX_BONUS` (1 s at HZ = 100), `STARVATION_LIMIT` =
    /// `MAX_SLEEP_AVG`, `BUSY_REBALANCE_TICK` HZ/5.
    V26,
}

impl Era {
    pub const ALL: [Era; 3] = [Era::J7, Era::V25, Era::V26];

    pub fn name(self) -> &'static str {
        match self {
            Era::J7 => "j7",
            Era::V25 => "2.5",
            Era::V26 => "2.6",
        }
    }

    fn named(s: &str) -> Era {
        Era::ALL.into_iter().find(|e| e.name() == s).unwrap_or(Era::V25)
    }
}

/// How `TASK_INTERACTIVE` rates a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InteractiveRule {
    /// January 2002 (-J4 to -J7): `prio ≤ PRIO_INTERACTIVE` or (`prio < PRIO_CPU_HOG`
    /// and `prio ≤ NICE_TO_PRIO(nice) − INTERACTIVE_DELTA`), the two thresholds at
    /// `PRIO_INTERACTIVE_RATIO` and `PRIO_CPU_HOG_RATIO` percent of the nice range.
    J7,
    /// Mid 2002 on: `prio ≤ static_prio − DELTA(p)`, `DELTA(p)` nice-scaled.
    Delta,
}

/// Which tasks `load_balance` looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalanceScan {
    /// Before July 2002: each list's tail only, at most one task from the expired
    /// array and then one from the active array.
    Tail,
    /// From July 2002: each list from its tail towards its head, up to `imbalance`
    /// tasks over both arrays.
    Walk,
}

/// The `o1:` options. Defaults are those of [`Era::V25`] (the policy's behaviour
/// before eras existed); times are kept as given and converted to ticks when the
/// policy is built for a machine's HZ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct O1Config {
    /// The kernel the other options' defaults come from.
    pub era: Era,
    /// `MIN_TIMESLICE` (10 ms).
    pub min_timeslice: Span,
    /// `MAX_TIMESLICE` (300 ms; 180 ms before -J4, 200 ms in 2.6).
    pub max_timeslice: Span,
    /// `MAX_SLEEP_AVG` (2 s; 1 s in 2.6 at HZ = 100).
    pub max_sleep_avg: Span,
    /// `STARVATION_LIMIT` (2 s; `MAX_SLEEP_AVG` in 2.6).
    pub starvation_limit: Span,
    /// `BUSY_REBALANCE_TICK` (HZ/4 = 250 ms; HZ/5 in 2.6).
    pub busy_rebalance: Span,
    /// `IDLE_REBALANCE_TICK` (HZ/1000, at least one tick).
    pub idle_rebalance: Span,
    /// `cache_decay_ticks`: a task that left a CPU this recently is cache-hot there and
    /// is not pulled away. 2002's i386 value, `cacheflush_time/cpu_khz × HZ/1000`, is 0
    /// at HZ = 100 for every machine of the original experiments.
    pub cache_decay: Span,
    /// `PRIO_BONUS_RATIO` (25 %; 70 in -J4 to -J7).
    pub prio_bonus_ratio: u32,
    /// `INTERACTIVE_DELTA` (2; 3 in -J4 to -J7).
    pub interactive_delta: i32,
    /// `TASK_INTERACTIVE`'s form (`interactive=j7|delta`).
    pub interactive: InteractiveRule,
    /// `PRIO_INTERACTIVE_RATIO` (20 %; the J7 rule only).
    pub prio_interactive_ratio: u32,
    /// `PRIO_CPU_HOG_RATIO` (60 %; the J7 rule only).
    pub prio_cpu_hog_ratio: u32,
    /// `CHILD_PENALTY` (95 %).
    pub child_penalty: u32,
    /// `PARENT_PENALTY` (100 %).
    pub parent_penalty: u32,
    /// `load_balance`'s scan (`balance=tail|walk`).
    pub balance: BalanceScan,
    /// 2.6's `best_expired_prio` clause of `EXPIRED_STARVING` (off in 2002).
    pub expired_prio_guard: bool,
    /// `STARVATION_LIMIT` scaled by `nr_running`, as in 2002 and 2.6 (on); off is a
    /// fix option.
    pub scale: bool,
    /// 2.6: `expired_timestamp` is set at every slice expiry, also when the task is
    /// re-inserted into the active array (2002: only when a task is expired).
    pub stamp_any: bool,
    /// 2.6's `ON_RUNQUEUE_WEIGHT`: this percentage of the time a woken task waited on
    /// the run queue is credited to its `sleep_avg` when it is picked (0: off, 2002).
    pub runqueue_credit: u32,
    /// 2.6: `sleep_avg` is charged the run time at each switch-out instead of one
    /// tick per tick run (2002).
    pub charge_run: bool,
}

impl O1Config {
    /// The options of `era`.
    pub fn era(era: Era) -> O1Config {
        let v25 = O1Config {
            era,
            min_timeslice: Span::ms(10),
            max_timeslice: Span::ms(300),
            max_sleep_avg: Span::ms(2000),
            starvation_limit: Span::ms(2000),
            busy_rebalance: Span::ms(250),
            idle_rebalance: Span::ms(1),
            cache_decay: Span::Ticks(0),
            prio_bonus_ratio: 25,
            interactive_delta: 2,
            interactive: InteractiveRule::Delta,
            prio_interactive_ratio: 20,
            prio_cpu_hog_ratio: 60,
            child_penalty: 95,
            parent_penalty: 100,
            balance: BalanceScan::Walk,
            expired_prio_guard: false,
            scale: true,
            stamp_any: false,
            runqueue_credit: 0,
            charge_run: false,
        };
        match era {
            Era::V25 => v25,
            Era::J7 => O1Config {
                prio_bonus_ratio: 70,
                interactive_delta: 3,
                interactive: InteractiveRule::J7,
                balance: BalanceScan::Tail,
                ..v25
            },
            Era::V26 => O1Config {
                max_timeslice: Span::ms(200),
                max_sleep_avg: Span::ms(1000),
                starvation_limit: Span::ms(1000),
                busy_rebalance: Span::ms(200),
                expired_prio_guard: true,
                stamp_any: true,
                runqueue_credit: 30,
                charge_run: true,
                ..v25
            },
        }
    }
}

impl Default for O1Config {
    fn default() -> Self {
        O1Config::era(Era::V25)
    }
}

/// `s` as a spec writes it.
pub(super) fn show_span(s: Span) -> String {
    O1Config::PARAMS[1].show(Value::Time(s))
}

/// A time option of the table: positive unless `zero_ok`.
const fn span<const ZERO_OK: bool>(
    name: &'static str,
    doc: &'static str,
    get: fn(&O1Config) -> Value,
    set: fn(&mut O1Config, Value),
) -> Param<O1Config> {
    Param::time(name, if ZERO_OK { 0 } else { 1 }, MAX_SPAN_NS, doc, get, set).or_ticks(MAX_TICKS)
}

const fn ratio(
    name: &'static str,
    doc: &'static str,
    get: fn(&O1Config) -> Value,
    set: fn(&mut O1Config, Value),
) -> Param<O1Config> {
    Param::int(name, 0, 100, doc, get, set).unit("%")
}

/// `o1[:key=value,...]`: the era first, as it sets every other option's default.
impl Options for O1Config {
    const PARAMS: &'static [Param<O1Config>] = &[
        Param::choice(
            "era",
            &["j7", "2.5", "2.6"],
            "the kernel whose constants are the other options' defaults",
            |c: &Self| Value::Word(c.era.name()),
            |c, v| c.era = Era::named(v.word()),
        )
        .sets_defaults(),
        span::<false>(
            "min_timeslice",
            "MIN_TIMESLICE",
            |c| Value::Time(c.min_timeslice),
            |c, v| c.min_timeslice = v.time(),
        ),
        span::<false>(
            "max_timeslice",
            "MAX_TIMESLICE",
            |c| Value::Time(c.max_timeslice),
            |c, v| c.max_timeslice = v.time(),
        ),
        span::<false>(
            "max_sleep_avg",
            "MAX_SLEEP_AVG",
            |c| Value::Time(c.max_sleep_avg),
            |c, v| c.max_sleep_avg = v.time(),
        ),
        span::<true>(
            "starvation_limit",
            "STARVATION_LIMIT",
            |c| Value::Time(c.starvation_limit),
            |c, v| c.starvation_limit = v.time(),
        ),
        span::<false>(
            "busy_rebalance",
            "BUSY_REBALANCE_TICK",
            |c| Value::Time(c.busy_rebalance),
            |c, v| c.busy_rebalance = v.time(),
        ),
        span::<false>(
            "idle_rebalance",
            "IDLE_REBALANCE_TICK",
            |c| Value::Time(c.idle_rebalance),
            |c, v| c.idle_rebalance = v.time(),
        ),
        span::<true>(
            "cache_decay",
            "cache_decay_ticks: a task that left a CPU this recently is cache-hot there",
            |c| Value::Time(c.cache_decay),
            |c, v| c.cache_decay = v.time(),
        ),
        ratio(
            "prio_bonus_ratio",
            "PRIO_BONUS_RATIO",
            |c| Value::Int(c.prio_bonus_ratio as i64),
            |c, v| c.prio_bonus_ratio = v.int() as u32,
        ),
        Param::int(
            "interactive_delta",
            -40,
            40,
            "INTERACTIVE_DELTA",
            |c| Value::Int(c.interactive_delta as i64),
            |c, v| c.interactive_delta = v.int() as i32,
        ),
        Param::choice(
            "interactive",
            &["j7", "delta"],
            "TASK_INTERACTIVE's form",
            |c| {
                Value::Word(match c.interactive {
                    InteractiveRule::J7 => "j7",
                    InteractiveRule::Delta => "delta",
                })
            },
            |c, v| {
                c.interactive = match v.word() {
                    "j7" => InteractiveRule::J7,
                    _ => InteractiveRule::Delta,
                }
            },
        ),
        ratio(
            "prio_interactive_ratio",
            "PRIO_INTERACTIVE_RATIO (the j7 rule)",
            |c| Value::Int(c.prio_interactive_ratio as i64),
            |c, v| c.prio_interactive_ratio = v.int() as u32,
        ),
        ratio(
            "prio_cpu_hog_ratio",
            "PRIO_CPU_HOG_RATIO (the j7 rule)",
            |c| Value::Int(c.prio_cpu_hog_ratio as i64),
            |c, v| c.prio_cpu_hog_ratio = v.int() as u32,
        ),
        ratio(
            "child_penalty",
            "CHILD_PENALTY",
            |c| Value::Int(c.child_penalty as i64),
            |c, v| c.child_penalty = v.int() as u32,
        ),
        ratio(
            "parent_penalty",
            "PARENT_PENALTY",
            |c| Value::Int(c.parent_penalty as i64),
            |c, v| c.parent_penalty = v.int() as u32,
        ),
        Param::choice(
            "balance",
            &["tail", "walk"],
            "load_balance's scan: each list's tail, or the walk of July 2002",
            |c| {
                Value::Word(match c.balance {
                    BalanceScan::Tail => "tail",
                    BalanceScan::Walk => "walk",
                })
            },
            |c, v| {
                c.balance = match v.word() {
                    "tail" => BalanceScan::Tail,
                    _ => BalanceScan::Walk,
                }
            },
        ),
        Param::switch(
            "expired_prio_guard",
            "2.6's best_expired_prio clause of EXPIRED_STARVING",
            |c| Value::switch(c.expired_prio_guard),
            |c, v| c.expired_prio_guard = v.on(),
        ),
        Param::switch(
            "scale",
            "STARVATION_LIMIT scaled by nr_running (off: a fix)",
            |c| Value::switch(c.scale),
            |c, v| c.scale = v.on(),
        ),
        Param::switch(
            "stamp_any",
            "2.6: expired_timestamp set at every slice expiry",
            |c| Value::switch(c.stamp_any),
            |c, v| c.stamp_any = v.on(),
        ),
        ratio(
            "runqueue_credit",
            "ON_RUNQUEUE_WEIGHT: run-queue wait credited to sleep_avg (0: off)",
            |c| Value::Int(c.runqueue_credit as i64),
            |c, v| c.runqueue_credit = v.int() as u32,
        ),
        Param::switch(
            "charge_run",
            "2.6: sleep_avg charged the run time at switch-out, not per tick",
            |c| Value::switch(c.charge_run),
            |c, v| c.charge_run = v.on(),
        ),
    ];

    fn defaults_given(&self) -> O1Config {
        O1Config::era(self.era)
    }

    fn default_sets() -> Vec<(&'static str, O1Config)> {
        Era::ALL.into_iter().map(|e| (e.name(), O1Config::era(e))).collect()
    }
}
