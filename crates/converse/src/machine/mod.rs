//! Machine layers: how messages reach PEs of *other processes*.
//!
//! Within one process the PEs share memory and a send is a push onto the
//! destination's inbox (`runtime.rs`). A [`Network`] adds other processes
//! (MPI ranks with the `mpi` feature, [`mpi`]): each process is a Converse
//! *node* holding `pes_per_rank` PEs, and PEs are numbered globally, node
//! by node — PE `p` lives on rank `p / pes_per_rank`. [`crate::Pe::send`]
//! to a PE of another rank hands the message to [`Network::send`]; the
//! scheduler loop's network-drain step calls [`Network::poll`] when the PE's
//! own inbox is empty (as Converse's scheduler loop does, S7), which routes arrived messages to the
//! inboxes of this rank's PEs. The message keeps its header (handler index,
//! source PE) on the wire, so handler tables work unchanged.
//!
//! This module is feature-free so that the runtime's hooks compile (and are
//! tested with an in-process loopback network) without MPI.

use crate::msg::{Msg, HEADER_SIZE};
use std::fmt;

#[cfg(feature = "mpi")]
pub mod mpi;
#[cfg(feature = "mpi")]
pub mod mpi_bench;
#[cfg(feature = "mpi")]
pub mod mpi_order;

/// Largest message (header included) a network accepts: MPI counts are C
/// `int`s, and anything this big is a bug rather than a message.
pub const MAX_WIRE_BYTES: usize = i32::MAX as usize;

/// A transport between processes. Implementations serialise their own calls
/// (several PE threads of a rank may send and poll at once).
pub trait Network: Send + Sync {
    /// This process's rank.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn ranks(&self) -> usize;
    /// Send `msg` (header included, `src_pe` already set) to global PE
    /// `dest_pe`, which lives on rank `dest_rank` ≠ [`Network::rank`].
    /// Non-blocking: the message is on its way when this returns.
    fn send(&self, dest_rank: usize, dest_pe: usize, msg: Msg);
    /// Make progress: complete finished sends and hand messages that
    /// arrived to `deliver(global destination PE, message)`. Returns how
    /// many it handed over; it may stop after one (callers poll again
    /// until it returns 0, as the scheduler loop does). A message that cannot be valid (shorter than the
    /// header, or addressed to a PE this rank does not hold) ends the job
    /// through [`Network::fail`].
    fn poll(&self, deliver: &mut dyn FnMut(usize, Msg)) -> usize;
    /// Wait (bounded) for this rank's sends to complete: the end of a run.
    fn flush(&self);
    /// End the whole job (every rank) after printing `message`; for errors
    /// that leave the other ranks waiting forever otherwise.
    fn fail(&self, message: &str) -> !;
}

/// Why a send was refused at the sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The destination PE does not exist.
    NoSuchPe { pe: usize, num_pes: usize },
    /// The message is larger than [`MAX_WIRE_BYTES`].
    Oversized { len: usize },
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::NoSuchPe { pe, num_pes } => {
                write!(f, "send to PE {pe}, but the machine has PEs 0..{num_pes}")
            }
            SendError::Oversized { len } => {
                write!(f, "message of {len} bytes is larger than the {MAX_WIRE_BYTES}-byte limit of the network")
            }
        }
    }
}

impl std::error::Error for SendError {}

/// Check bytes received from the network: `Ok(msg)` or why they are not a
/// message for one of PEs `first..first + local` (`dest_pe` is what the
/// transport says the destination was).
pub fn check_arrival(
    bytes: Vec<u8>,
    dest_pe: usize,
    first: usize,
    local: usize,
    from_rank: usize,
) -> Result<Msg, BadArrival> {
    if !(first..first + local).contains(&dest_pe) {
        return Err(BadArrival::NotHere { from_rank, dest_pe, first, end: first + local });
    }
    let len = bytes.len();
    Msg::from_bytes(bytes).ok_or(BadArrival::Short { from_rank, dest_pe, len })
}

/// Why bytes from the network are not a message for this rank ([`check_arrival`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadArrival {
    /// Addressed to a PE another rank holds.
    #[error(
        "malformed message from rank {from_rank}: addressed to PE {dest_pe}, but this rank holds PEs {first}..{end}"
    )]
    NotHere { from_rank: usize, dest_pe: usize, first: usize, end: usize },
    /// Shorter than a message header.
    #[error(
        "malformed message from rank {from_rank} to PE {dest_pe}: {len} bytes, shorter than the {HEADER_SIZE}-byte header"
    )]
    Short { from_rank: usize, dest_pe: usize, len: usize },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_are_checked() {
        let ok = check_arrival(vec![0; HEADER_SIZE + 3], 5, 4, 2, 1).unwrap();
        assert_eq!(ok.payload().len(), 3);
        let e = check_arrival(vec![0; HEADER_SIZE], 6, 4, 2, 1).unwrap_err().to_string();
        assert!(e.contains("PE 6") && e.contains("rank 1") && e.contains("4..6"), "{e}");
        let e = check_arrival(vec![0; 3], 4, 4, 2, 0).unwrap_err().to_string();
        assert!(e.contains("3 bytes") && e.contains("header"), "{e}");
    }

    #[test]
    fn send_errors_name_the_problem() {
        assert_eq!(SendError::NoSuchPe { pe: 9, num_pes: 4 }.to_string(), "send to PE 9, but the machine has PEs 0..4");
        assert!(SendError::Oversized { len: usize::MAX }.to_string().contains("larger than"));
    }
}
