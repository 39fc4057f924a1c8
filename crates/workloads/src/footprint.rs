//! What a workload will need, estimated from its parameters before anything is built,
//! so that a spec whose parameters multiply to millions of tasks (or a billion program
//! operations: hackbench's senders each hold one send per receiver) is refused with a
//! message instead of allocating until the machine falls over.
//!
//! The per-item sizes are measured upper bounds, not exact: a simulated task costs
//! about 0.6 KB (its `task_struct` fields, engine state, cache-line state, program
//! header; `schedlab sim` peak RSS over 1,600 → 16,000 Chat tasks), a runtime task
//! somewhat more (its future); 1 KiB per task covers both. Operations are
//! `size_of::<Op>()` each, channels 64 bytes (queue and waiters).

use crate::Op;
use schedlab_core::SpecError;

/// Bytes charged per task in the estimate.
pub const TASK_BYTES: u64 = 1024;
/// Bytes charged per channel.
pub const CHANNEL_BYTES: u64 = 64;
/// The default limit of [`Footprint::check`]: 4 GiB (a sixth of this kind of machine).
pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;

/// Counts a workload's builder knows from its parameters alone (upper bounds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Tasks that will exist, the root included.
    pub tasks: u64,
    pub channels: u64,
    /// Operations over all programs.
    pub ops: u64,
}

impl Footprint {
    /// Estimated peak memory of running the workload, in bytes.
    pub fn bytes(&self) -> u64 {
        self.tasks
            .saturating_mul(TASK_BYTES)
            .saturating_add(self.channels.saturating_mul(CHANNEL_BYTES))
            .saturating_add(self.ops.saturating_mul(std::mem::size_of::<Op>() as u64))
    }

    /// Refuse `workload` if its estimate exceeds `max_bytes`, with the estimate, its
    /// parts and the limit in the message.
    pub fn check(&self, workload: &str, max_bytes: u64) -> Result<(), SpecError> {
        let need = self.bytes();
        if need <= max_bytes {
            return Ok(());
        }
        Err(SpecError(format!(
            "workload '{workload}' would need about {} ({} tasks, {} channels, {} program operations), over the limit of {} (raise it with --max-memory)",
            human(need),
            self.tasks,
            self.channels,
            self.ops,
            human(max_bytes)
        )))
    }
}

/// `1.5 GiB`, `300.0 MiB`, `12 KiB`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// Parse a memory size: `512m`, `4g`, `4GiB`, `100000k`, or bytes.
pub fn parse_size(s: &str) -> Result<u64, NotASize> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.trim_end_matches("ib").trim_end_matches('b');
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'm')) => (&t[..i], 1 << 20),
        Some((i, 'g')) => (&t[..i], 1 << 30),
        Some((i, 't')) => (&t[..i], 1 << 40),
        _ => (t, 1),
    };
    match num.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x * (mult as f64) < 1.8e19 => Ok((x * mult as f64) as u64),
        _ => Err(NotASize(s.to_string())),
    }
}

/// A text [`parse_size`] does not read as a memory size.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a memory size (e.g. 512m, 4g, 8GiB)")]
pub struct NotASize(pub String);
