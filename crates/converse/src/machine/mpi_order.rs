//! Send order across ranks, whatever the sizes: the MPI machine layer sends
//! small messages (≤ [`SMALL_MAX`]) and large ones by different routes (a
//! preposted receive; an announcement then a body on another communicator),
//! and Converse promises that messages from one PE to another arrive in the
//! order they were sent. This check interleaves the two kinds between PEs on
//! different ranks, in both directions at once, and fails the job (through
//! a handler panic, which [`crate::machine::Network::fail`] turns into an
//! `MPI_Abort` naming the rank and PE) at the first message out of place.
//! `schedlab bench --mpi --check-order` runs it (`crates/cli/tests/mpi.rs`).

use super::mpi::{MpiJob, MpiNet, SMALL_MAX};
use crate::msg::{HandlerId, Msg, HEADER_SIZE};
use crate::runtime::{Converse, Pe};
use mpi::topology::Communicator;
use std::cell::Cell;
use std::rc::Rc;

/// Largest message of the check: a few times the large route's threshold.
const LARGE_MAX: usize = 256 * 1024;

/// What one PE received from its partner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    pub pe: usize,
    pub from: usize,
    pub small: u64,
    pub large: u64,
    pub bytes: u64,
}

/// The size of message `seq` from PE `from` (header included): a seeded
/// sequence of runs of small and large sizes, with the boundary sizes
/// ([`SMALL_MAX`], one byte more) and the smallest message among them.
pub fn size_of(seed: u64, from: usize, seq: u64) -> usize {
    let r = splitmix(seed ^ (from as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ splitmix(seq));
    // Runs: the route changes every few messages, not at random each time,
    // so a large message follows small ones and the other way round.
    let large_run = splitmix(seed ^ from as u64 ^ (seq / 3)) & 1 == 1;
    match seq % 11 {
        0 => SMALL_MAX,
        5 => SMALL_MAX + 1,
        7 => HEADER_SIZE + 16,
        _ if large_run => SMALL_MAX + 1 + (r as usize) % (LARGE_MAX - SMALL_MAX),
        _ => HEADER_SIZE + 16 + (r as usize) % (SMALL_MAX - HEADER_SIZE - 16),
    }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Byte `i` of the payload of message `seq` (after its 16-byte seq/sender
/// prefix), so a message delivered whole but from the wrong send is caught.
fn pattern(seq: u64, i: usize) -> u8 {
    (seq as usize).wrapping_mul(31).wrapping_add(i) as u8
}

fn message(handler: HandlerId, seed: u64, from: usize, seq: u64) -> Msg {
    let mut m = Msg::alloc(size_of(seed, from, seq));
    m.set_handler(handler);
    m.write_u64(0, seq);
    m.write_u64(8, from as u64);
    for (i, b) in m.payload_mut()[16..].iter_mut().enumerate() {
        *b = pattern(seq, i);
    }
    m
}

/// Why message `m`, the `expect`-th from PE `from`, is not the one sent
/// `expect`-th, if it is not.
fn misplaced(m: &Msg, seed: u64, from: usize, expect: u64) -> Option<String> {
    let (seq, sender) = (m.read_u64(0), m.read_u64(8));
    let want = size_of(seed, from, expect);
    if sender != from as u64 || m.src_pe() != Some(from) {
        return Some(format!("expected a message from PE {from}, got one from PE {sender} (header {:?})", m.src_pe()));
    }
    if seq != expect {
        return Some(format!("out of send order: expected message {expect} from PE {from}, got message {seq}"));
    }
    if m.len() != want {
        return Some(format!("message {seq} from PE {from}: {} bytes, sent {want}", m.len()));
    }
    let bad = m.payload()[16..].iter().enumerate().position(|(i, &b)| b != pattern(seq, i));
    bad.map(|i| format!("message {seq} from PE {from}: payload byte {} differs from what was sent", 16 + i))
}

/// Run the check on the two ranks of `job` with `pes_per_rank` PEs each: PE
/// `p` of rank 0 and PE `p + pes_per_rank` of rank 1 send each other
/// `count` messages, all at once (so arrivals pile up between polls), then
/// an acknowledgement once they have received all of the partner's. Every
/// rank returns what its PEs received.
pub fn run(job: &MpiJob, pes_per_rank: usize, count: u64, seed: u64) -> Vec<Received> {
    let world = job.world();
    assert_eq!(world.size(), 2, "the order check runs on exactly two ranks");
    let comm = world.duplicate();
    let results = Converse::builder()
        .pes(pes_per_rank)
        .network(MpiNet::new(&comm, pes_per_rank))
        .build()
        .start(move |pe: &mut Pe| -> Received {
            let me = pe.my_pe();
            let partner = (me + pes_per_rank) % (2 * pes_per_rank);
            let got = Rc::new(Cell::new(Received { pe: me, from: partner, ..Received::default() }));
            let acked = Rc::new(Cell::new(false));
            // Same registration order on every PE: 0 = data, 1 = acknowledgement,
            let (got2, acked2) = (got.clone(), acked.clone());
            pe.register_handler(move |pe: &mut Pe, m: Msg| {
                let mut g = got2.get();
                if let Some(why) = misplaced(&m, seed, partner, g.small + g.large) {
                    panic!("{why}");
                }
                if m.len() <= SMALL_MAX {
                    g.small += 1;
                } else {
                    g.large += 1;
                }
                g.bytes += m.len() as u64;
                got2.set(g);
                if g.small + g.large == count {
                    pe.send(partner, Msg::with_payload_len(HandlerId(1), 0));
                    if acked2.get() {
                        pe.exit_scheduler();
                    }
                }
            });
            let (got3, acked3) = (got.clone(), acked.clone());
            pe.register_handler(move |pe: &mut Pe, _m: Msg| {
                acked3.set(true);
                let g = got3.get();
                if g.small + g.large == count {
                    pe.exit_scheduler();
                }
            });
            // 2 = stop the scheduler `Converse::start` runs after this closure.
            pe.register_handler(|pe: &mut Pe, _m: Msg| pe.exit_scheduler());
            for seq in 0..count {
                pe.send(partner, message(HandlerId(0), seed, me, seq));
            }
            pe.schedule_forever();
            pe.send(me, Msg::with_payload_len(HandlerId(2), 0));
            got.get()
        })
        .expect("the order check's handlers fail only through the network, which ends the job");
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sizes_interleave_both_routes_and_hit_the_boundaries() {
        let sizes: Vec<usize> = (0..200).map(|k| size_of(7, 1, k)).collect();
        assert!(sizes.iter().all(|&n| (HEADER_SIZE + 16..=LARGE_MAX).contains(&n)));
        let large: Vec<bool> = sizes.iter().map(|&n| n > SMALL_MAX).collect();
        let switches = large.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(switches > 40, "{switches} switches between small and large");
        assert!(sizes.contains(&SMALL_MAX) && sizes.contains(&(SMALL_MAX + 1)));
        assert_ne!(sizes, (0..200).map(|k| size_of(7, 2, k)).collect::<Vec<_>>(), "each sender has its own sizes");
    }

    #[test]
    fn a_misplaced_message_is_named() {
        let m = message(HandlerId(0), 3, 1, 4);
        let mut sent = Msg::from_bytes(m.clone().into_bytes()).unwrap();
        sent.set_src_pe(1);
        assert_eq!(misplaced(&sent, 3, 1, 4), None);
        assert!(misplaced(&sent, 3, 1, 3).unwrap().contains("expected message 3 from PE 1, got message 4"));
        let mut bent = sent.clone();
        let last = bent.len() - 1;
        bent.payload_mut()[last - HEADER_SIZE] ^= 1;
        assert!(misplaced(&bent, 3, 1, 4).unwrap().contains("payload byte"));
        assert!(misplaced(&m, 3, 1, 4).unwrap().contains("got one from PE 1 (header None)"));
    }
}
