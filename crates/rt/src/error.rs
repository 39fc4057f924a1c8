//! [`BuildError`]: why a runtime did not start.

/// Why [`Builder::build`](crate::Builder::build) did not start a runtime. Each variant
/// names what was wrong, so a CLI can print it as it is.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The policy spec does not parse, or the policy refuses the settings (task-table
    /// capacity, worker count) it was given.
    #[error("bad policy '{spec}': {reason}")]
    Policy { spec: String, reason: String },
    /// A trace was asked of a scheduler that does not record one (`fast`).
    #[error("scheduler '{0}' does not record traces (policy schedulers do)")]
    NoTrace(String),
    /// More workers than a policy's CPU masks hold.
    #[error("policy '{policy}' supports at most {max} workers")]
    TooManyWorkers { policy: String, max: usize },
    /// The operating system refused a worker thread.
    #[error("cannot start worker thread {index}: {source}")]
    WorkerThread {
        index: usize,
        #[source]
        source: std::io::Error,
    },
}
