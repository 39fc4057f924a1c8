//! Measurements for `schedlab bench`: library functions returning numbers.

use crate::msg::{HandlerId, Msg};
use crate::runtime::{Converse, Pe};
use std::cell::Cell;
use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The thesis's message sizes (Fig. 2.4's x axis): 16 B to 1 MiB in powers of 4.
pub fn paper_sizes() -> Vec<usize> {
    (0..9).map(|k| 16usize << (2 * k)).collect()
}

/// Payload bytes of the benchmark messages (the round trip is about the
/// runtime, not copying).
const PAYLOAD: usize = 16;

/// Ping-pong between PE 0 and PE 1 (two pinned OS threads): ns per round
/// trip, averaged over `round_trips` after a warm-up of a tenth as many
/// (at most 10,000). S7's Fig. 2.4.
///
/// `via_queue = false`: each arriving message's handler replies at once.
/// `via_queue = true` (Fig. 2.5, "scheduler overhead"): each arriving
/// message's handler only re-targets it to the real handler and enqueues it
/// (FIFO) in the scheduler queue; the scheduler later dequeues it and the
/// real handler replies. The difference of the two is the cost of two
/// enqueue + dispatch passes (one per PE) per round trip.
pub fn bench_pingpong(round_trips: u64, via_queue: bool) -> f64 {
    bench_pingpong_sized(PAYLOAD, round_trips, via_queue)
}

/// [`bench_pingpong`] with a `payload`-byte message (the thesis's Fig. 2.4 sweeps
/// 16 B..1 MB). Between PEs of one process a message moves by pointer, so the size
/// shows only where the runtime touches the payload; across ranks
/// (`machine::mpi_bench`) every message is copied through MPI.
pub fn bench_pingpong_sized(payload: usize, round_trips: u64, via_queue: bool) -> f64 {
    let round_trips = round_trips.max(1);
    let warm = (round_trips / 10).min(10_000);
    let results = Converse::builder()
        .pes(2)
        .pin(true)
        .build()
        .start(move |pe: &mut Pe| -> Option<Duration> {
            // Same registration order on both PEs: 0 = arrival, 1 = real.
            let arrival = HandlerId(0);
            let real = HandlerId(1);
            let to_wire = if via_queue { arrival } else { real };
            let h = pe.register_handler(move |pe: &mut Pe, mut m: Msg| {
                m.set_handler(real);
                pe.enqueue_fifo(m);
            });
            debug_assert_eq!(h, arrival);
            let done = Rc::new(Cell::new(None::<Duration>));
            let count = Rc::new(Cell::new(0u64));
            let t0 = Rc::new(Cell::new(Instant::now()));
            let (done2, count2, t02) = (done.clone(), count.clone(), t0.clone());
            let h = pe.register_handler(move |pe: &mut Pe, mut m: Msg| {
                m.set_handler(to_wire);
                if pe.my_pe() == 1 {
                    pe.send(0, m);
                    return;
                }
                let c = count2.get() + 1;
                count2.set(c);
                if c == warm {
                    t02.set(Instant::now());
                }
                if c == warm + round_trips {
                    done2.set(Some(t02.get().elapsed()));
                    pe.exit_all();
                } else {
                    pe.send(1, m);
                }
            });
            debug_assert_eq!(h, real);
            if pe.my_pe() == 0 {
                let mut m = Msg::with_payload_len(to_wire, payload.max(8));
                m.write_u64(0, 0x5eed);
                t0.set(Instant::now()); // reset after the warm-up, if any
                pe.send(1, m);
            }
            pe.schedule_forever();
            done.get()
        })
        .expect("ping-pong handlers do not panic");
    let elapsed = results[0].expect("PE 0 finished the ping-pong");
    elapsed.as_nanos() as f64 / round_trips as f64
}

/// On one PE: `(ns per message through the scheduler queue, ns per direct
/// handler call)`. The first number is a handler that re-enqueues its
/// message (FIFO) `n` times, run by `schedule_forever` — enqueue, one
/// scheduler iteration (empty network poll + Cqs dequeue) and the handler
/// dispatch; the second is `n` direct `handle_message` calls
/// (`CmiHandleMessage`) of the same handler body.
pub fn bench_queueing_overhead(n: u64) -> (f64, f64) {
    let n = n.max(1);
    let results = Converse::builder()
        .pes(1)
        .pin(true)
        .build()
        .start(move |pe: &mut Pe| -> (Duration, Duration) {
            let count = Rc::new(Cell::new(0u64));
            let c1 = count.clone();
            let queued = pe.register_handler(move |pe: &mut Pe, m: Msg| {
                let c = c1.get() + 1;
                c1.set(c);
                if c < n {
                    pe.enqueue_fifo(black_box(m));
                } else {
                    pe.exit_scheduler();
                }
            });
            let slot = Rc::new(Cell::new(None::<Msg>));
            let (c2, slot2) = (count.clone(), slot.clone());
            let direct = pe.register_handler(move |_pe: &mut Pe, m: Msg| {
                c2.set(c2.get() + 1);
                slot2.set(Some(black_box(m)));
            });

            pe.enqueue_fifo(Msg::with_payload_len(queued, PAYLOAD));
            let t = Instant::now();
            pe.schedule_forever();
            let through_queue = t.elapsed();
            assert_eq!(count.get(), n);

            slot.set(Some(Msg::with_payload_len(direct, PAYLOAD)));
            let t = Instant::now();
            for _ in 0..n {
                let m = slot.take().expect("handler put it back");
                pe.handle_message(m);
            }
            let direct_calls = t.elapsed();
            assert_eq!(count.get(), 2 * n);
            pe.exit_all();
            (through_queue, direct_calls)
        })
        .expect("queueing handlers do not panic");
    let (q, d) = results[0];
    (q.as_nanos() as f64 / n as f64, d.as_nanos() as f64 / n as f64)
}
