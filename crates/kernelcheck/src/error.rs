//! [`Error`]: why a kernel check (or one of its children) did not complete.

/// Why a kernel check did not complete. Each variant carries the message a CLI prints
/// as it is; the variant says which part failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The `--machine` file or preset does not load.
    #[error("{0}")]
    Machine(String),
    /// `perf` is missing or cannot record scheduler events here.
    #[error("{0}")]
    Perf(String),
    /// A child (a recorded workload, `perf`, `tbench`) could not start, failed, or was
    /// killed at its time limit.
    #[error("{0}")]
    Child(String),
    /// The arguments a parent passed to a child command are malformed.
    #[error("{0}")]
    Usage(String),
    /// A recording, a trace or a tool's output did not read as expected, or a file could
    /// not be written; or a simulation of the recorded workload failed.
    #[error("{0}")]
    Run(String),
}

/// The messages of the crate's private helpers are run failures.
impl From<String> for Error {
    fn from(m: String) -> Error {
        Error::Run(m)
    }
}

impl From<&str> for Error {
    fn from(m: &str) -> Error {
        Error::Run(m.to_string())
    }
}
