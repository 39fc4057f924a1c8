//! What a simulation is asked to do ([`SimConfig`]) and why it can fail ([`SimError`]).

use std::fmt;

/// Where a running simulation is: passed to [`SimConfig::progress`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub virtual_ns: u64,
    pub events: u64,
}

/// A progress observer (it sees the run; it cannot change it).
pub type ProgressFn = std::sync::Arc<dyn Fn(Progress) + Send + Sync>;

/// Events between two calls of [`SimConfig::progress`] (about a tenth of a second).
pub const PROGRESS_EVERY: u64 = 1 << 20;

/// Simulation options.
#[derive(Clone)]
pub struct SimConfig {
    pub seed: u64,
    /// Give up (error) when virtual time passes this.
    pub max_virtual_ns: u64,
    /// Check the policy's invariants and the engine's conservation laws after every event (slow).
    pub check_invariants: bool,
    /// Record every run queue's length at most once per this many virtual ns (sampled
    /// at CPU 0's timer ticks) into [`Report::rq_series`](crate::Report::rq_series); `None` = off.
    pub rq_series_interval_ns: Option<u64>,
    /// Called every [`PROGRESS_EVERY`] events (`schedlab sim` shows it on stderr).
    pub progress: Option<ProgressFn>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            max_virtual_ns: 3_600 * 1_000_000_000,
            check_invariants: false,
            rq_series_interval_ns: None,
            progress: None,
        }
    }
}

impl std::fmt::Debug for SimConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimConfig")
            .field("seed", &self.seed)
            .field("max_virtual_ns", &self.max_virtual_ns)
            .field("check_invariants", &self.check_invariants)
            .field("rq_series_interval_ns", &self.rq_series_interval_ns)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// Why a simulation could not complete.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    /// The workload description is malformed.
    Workload(String),
    /// The policy spec does not fit the machine (e.g. a PMQS pool size that does not
    /// divide the CPU count).
    Policy(String),
    /// Live tasks remain but nothing can ever make progress.
    Deadlock(String),
    /// Virtual-time limit reached.
    TimeLimit(u64),
    /// A policy or engine invariant broke (a bug).
    Invariant(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Workload(s) => write!(f, "invalid workload: {s}"),
            SimError::Policy(s) => write!(f, "invalid policy: {s}"),
            SimError::Deadlock(s) => write!(f, "simulation cannot progress: {s}"),
            SimError::TimeLimit(ns) => {
                write!(f, "virtual-time limit of {:.3} s reached before the workload finished", *ns as f64 / 1e9)
            }
            SimError::Invariant(s) => write!(f, "invariant violated: {s}"),
        }
    }
}
impl std::error::Error for SimError {}
