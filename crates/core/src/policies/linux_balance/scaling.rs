//! The CPU-count scaling of the fair classes' time tunables ([`Scaling`]).

use super::*;

/// `sysctl_sched_tunable_scaling`: how the fair class's time tunables grow with the
/// CPU count (`get_update_sysctl_factor`, `update_sysctl` in `kernel/sched/fair.c`,
/// the same from 2.6.32 to v6.12): CFS scales `sched_latency`,
/// `sched_min_granularity` and `sched_wakeup_granularity`, EEVDF `sched_base_slice`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaling {
    /// ×1.
    None,
    /// ×(1 + ilog2(min(ncpus, 8))), the kernel's default.
    Log,
    /// ×min(ncpus, 8).
    Linear,
}

impl Scaling {
    /// The option's words, the default first.
    pub const WORDS: &'static [&'static str] = &["log", "none", "linear"];

    /// `get_update_sysctl_factor` for `ncpus` CPUs.
    pub fn factor(self, ncpus: usize) -> u64 {
        let cpus = ncpus.clamp(1, 8) as u64;
        match self {
            Scaling::None => 1,
            Scaling::Log => 1 + cpus.ilog2() as u64,
            Scaling::Linear => cpus,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Scaling::None => "none",
            Scaling::Log => "log",
            Scaling::Linear => "linear",
        }
    }
    /// The scaling a word of [`Scaling::WORDS`] names.
    pub fn from_word(w: &str) -> Scaling {
        match w {
            "none" => Scaling::None,
            "linear" => Scaling::Linear,
            _ => Scaling::Log,
        }
    }
    /// The `scaling=` option row of a policy whose config keeps it at `get`/`set`.
    pub(crate) const fn param<C>(doc: &'static str, get: fn(&C) -> Value, set: fn(&mut C, Value)) -> Param<C> {
        Param::choice("scaling", Scaling::WORDS, doc, get, set)
    }
}
