//! The machine-layer hooks without MPI: two "ranks" (two Converse machines in
//! one process) joined by an in-memory [`Network`], 2 PEs each, global PEs 0..4.

use schedlab_converse::machine::{check_arrival, Network};
use schedlab_converse::{Converse, HandlerId, Msg, Pe, SendError};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Per rank, the messages in flight to it: (destination PE, bytes).
type Wires = Arc<Vec<Mutex<VecDeque<(usize, Vec<u8>)>>>>;

struct Loopback {
    rank: usize,
    per_rank: usize,
    wires: Wires,
}

impl Network for Loopback {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.wires.len()
    }
    fn send(&self, dest_rank: usize, dest_pe: usize, msg: Msg) {
        assert_ne!(dest_rank, self.rank, "local PEs never reach the network");
        self.wires[dest_rank].lock().unwrap().push_back((dest_pe, msg.into_bytes()));
    }
    fn poll(&self, deliver: &mut dyn FnMut(usize, Msg)) -> usize {
        let arrived: Vec<_> = self.wires[self.rank].lock().unwrap().drain(..).collect();
        let n = arrived.len();
        for (pe, bytes) in arrived {
            let first = self.rank * self.per_rank;
            deliver(pe, check_arrival(bytes, pe, first, self.per_rank, 1 - self.rank).unwrap());
        }
        n
    }
    fn flush(&self) {}
    fn fail(&self, message: &str) -> ! {
        panic!("job failed: {message}")
    }
}

#[test]
fn ring_and_broadcast_cross_ranks() {
    let wires: Wires = Arc::new((0..2).map(|_| Mutex::new(VecDeque::new())).collect());
    let results: Vec<Vec<(usize, u64, u64)>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|rank| {
                let net = Arc::new(Loopback { rank, per_rank: 2, wires: wires.clone() });
                s.spawn(move || {
                    Converse::builder()
                        .pes(2)
                        .network(net)
                        .build()
                        .start(|pe: &mut Pe| {
                            use std::cell::Cell;
                            use std::rc::Rc;
                            let laps = Rc::new(Cell::new(0u64));
                            let seen = Rc::new(Cell::new(0u64));
                            // On PE 0: how many other PEs have reported their copy.
                            let reported = Rc::new(Cell::new(0u64));
                            let (l2, s2, s3, r3) = (laps.clone(), seen.clone(), seen.clone(), reported.clone());
                            // PE 0 ends the run once every PE has handled its copy: its own,
                            // which waits in its local queue behind any message from another
                            // PE, and the three the others report.
                            let end_when_all_seen = |pe: &mut Pe, seen: u64, reported: u64| {
                                if pe.my_pe() == 0 && seen == 1 && reported == 3 {
                                    pe.exit_all();
                                }
                            };
                            // 0: the token goes round the ring of 4 PEs 3 times, then PE 0 broadcasts.
                            pe.register_handler(move |pe: &mut Pe, mut m: Msg| {
                                let hops = m.read_u64(0) + 1;
                                m.write_u64(0, hops);
                                l2.set(l2.get() + 1);
                                if pe.my_pe() == 0 && hops == 12 {
                                    pe.broadcast_all(Msg::new(HandlerId(1), &[7]));
                                } else {
                                    let next = (pe.my_pe() + 1) % pe.num_pes();
                                    pe.send(next, m);
                                }
                            });
                            // 1: broadcast arrival; the other PEs report theirs to PE 0.
                            let r2 = reported.clone();
                            pe.register_handler(move |pe: &mut Pe, m: Msg| {
                                assert_eq!((m.payload(), m.src_pe()), (&[7u8][..], Some(0)));
                                s2.set(s2.get() + 1);
                                if pe.my_pe() != 0 {
                                    pe.send(0, Msg::new(HandlerId(2), &[]));
                                }
                                end_when_all_seen(pe, s2.get(), r2.get());
                            });
                            // 2: on PE 0, another PE's report.
                            pe.register_handler(move |pe: &mut Pe, _m: Msg| {
                                r3.set(r3.get() + 1);
                                end_when_all_seen(pe, s3.get(), r3.get());
                            });
                            assert_eq!(pe.num_pes(), 4);
                            assert_eq!(pe.my_rank(), pe.my_pe() / 2);
                            assert_eq!(
                                pe.try_send(4, Msg::new(HandlerId(0), &[])),
                                Err(SendError::NoSuchPe { pe: 4, num_pes: 4 })
                            );
                            if pe.my_pe() == 0 {
                                pe.send(1, Msg::with_payload_len(HandlerId(0), 8));
                            }
                            pe.schedule_forever();
                            (pe.my_pe(), laps.get(), seen.get())
                        })
                        .expect("no handler fails")
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Rank 0 holds PEs 0 and 1, rank 1 PEs 2 and 3; each PE held the token 3 times and
    // handled its broadcast copy before the exit (each reported it to PE 0 first).
    assert_eq!(results[0].iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(results[1].iter().map(|r| r.0).collect::<Vec<_>>(), [2, 3]);
    for &(pe, laps, seen) in results.iter().flatten() {
        assert_eq!(laps, 3, "PE {pe} token visits");
        assert_eq!(seen, 1, "PE {pe} broadcast copies");
    }
}
