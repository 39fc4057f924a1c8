//! The thesis's two experiments across MPI ranks (Fig. 2.4 and 2.5, spec
//! §4.4): ping-pong average one-way time against message size, through
//! Converse and through raw `MPI_Send`/`MPI_Recv` in the same run, and the
//! scheduler-overhead variant where each arriving message's handler enqueues
//! it and the scheduler loop dispatches it later.
//!
//! Message size is the whole Converse message, header included
//! (`CmiAlloc(size)`, as the thesis's program allocates it); the raw MPI
//! ping-pong sends the same number of bytes. Each repetition runs the three
//! variants back to back (raw, Converse direct, Converse queued), so slow
//! phases of a shared machine hit all three alike.

use super::mpi::MpiNet;
use crate::msg::{HandlerId, Msg, HEADER_SIZE};
use crate::runtime::{Converse, Pe};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The thesis's sizes: 16 B to 1 MiB in powers of 4.
pub fn paper_sizes() -> Vec<usize> {
    (0..9).map(|k| 16usize << (2 * k)).collect()
}

/// Median, min and max over repetitions, in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub reps: usize,
}

impl Stat {
    fn of(mut v: Vec<f64>) -> Stat {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        Stat { median, min: v[0], max: v[n - 1], reps: n }
    }
}

/// One message size: average one-way times in ns.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Bytes per message (Converse: header included).
    pub size: usize,
    /// Round trips per repetition.
    pub round_trips: u64,
    /// Raw MPI blocking send/receive ping-pong.
    pub raw: Stat,
    /// Converse, the handler replying at once.
    pub direct: Stat,
    /// Converse, the handler enqueueing (FIFO) and the scheduler dispatching.
    pub queued: Stat,
}

/// A failure to inject on PE 1 (rank 1), for the failure tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The ping-pong handler panics at its 10th message.
    HandlerPanic,
    /// The ping-pong handler sends its 10th message to a PE that does not exist.
    SendToMissingPe,
}

/// Settings of [`run`].
#[derive(Clone, Debug)]
pub struct Settings {
    pub sizes: Vec<usize>,
    /// Repetitions per size and variant.
    pub reps: usize,
    /// Wall time one repetition of one variant aims at (sets the round trips).
    pub target: Duration,
    /// Bounds on the round trips per repetition.
    pub min_round_trips: u64,
    pub max_round_trips: u64,
    /// Failure injection (tests only).
    pub fault: Option<Fault>,
}

/// Run the experiments on ranks 0 and 1 of `world` (which must have exactly
/// two ranks; both call this). Rank 0 gets the points, rank 1 `None`.
/// `progress` is called on rank 0 after each size.
pub fn run(job: &super::mpi::MpiJob, s: &Settings, mut progress: impl FnMut(&Point)) -> Option<Vec<Point>> {
    let world = job.world();
    assert_eq!(world.size(), 2, "the ping-pong runs on exactly two ranks");
    assert!(s.sizes.iter().all(|&n| n >= HEADER_SIZE), "sizes hold the {HEADER_SIZE}-byte header");
    let comm = world.duplicate();
    let mut points = Vec::new();
    for &size in &s.sizes {
        let round_trips = calibrate(&comm, size, s);
        let (mut raw, mut direct, mut queued) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..s.reps.max(1) {
            raw.push(raw_pingpong(&comm, size, round_trips));
            direct.push(converse_pingpong(&comm, size, round_trips, false, s.fault));
            queued.push(converse_pingpong(&comm, size, round_trips, true, s.fault));
        }
        if comm.rank() == 0 {
            let one_way = |v: Vec<Option<Duration>>| {
                Stat::of(
                    v.into_iter()
                        .map(|d| d.expect("rank 0 times").as_nanos() as f64 / (2 * round_trips) as f64)
                        .collect(),
                )
            };
            let p = Point { size, round_trips, raw: one_way(raw), direct: one_way(direct), queued: one_way(queued) };
            progress(&p);
            points.push(p);
        }
    }
    (comm.rank() == 0).then_some(points)
}

/// Round trips for one repetition of `size`: rank 0 times a short raw
/// ping-pong and both ranks get its choice.
fn calibrate(comm: &SimpleCommunicator, size: usize, s: &Settings) -> u64 {
    let probe = 20;
    let t = raw_pingpong(comm, size, probe);
    let mut n: u64 = t.map_or(0, |t| {
        let per = t.as_secs_f64() / probe as f64;
        ((s.target.as_secs_f64() / per.max(1e-9)) as u64).clamp(s.min_round_trips, s.max_round_trips)
    });
    comm.process_at_rank(0).broadcast_into(&mut n);
    n
}

/// Blocking `MPI_Send`/`MPI_Recv` ping-pong of `size` bytes; rank 0 returns
/// the time of `round_trips` round trips after a warm-up.
fn raw_pingpong(comm: &SimpleCommunicator, size: usize, round_trips: u64) -> Option<Duration> {
    let me = comm.rank();
    let other = comm.process_at_rank(1 - me);
    let out = vec![0x5au8; size];
    let mut back = vec![0u8; size];
    let warm = (round_trips / 10).clamp(1, 100);
    let mut t0 = Instant::now();
    for i in 0..warm + round_trips {
        if i == warm {
            t0 = Instant::now();
        }
        if me == 0 {
            other.send_with_tag(&out[..], 7);
            other.receive_into_with_tag(&mut back[..], 7);
        } else {
            other.receive_into_with_tag(&mut back[..], 7);
            other.send_with_tag(&back[..], 7);
        }
    }
    let t = t0.elapsed();
    assert_eq!(back[size - 1], 0x5a, "the ping-pong carried the payload");
    (me == 0).then_some(t)
}

/// The Converse ping-pong of `bench::bench_pingpong`, with one PE per rank:
/// PE 0 on rank 0 and PE 1 on rank 1, messages of `size` bytes. Rank 0
/// returns the time of `round_trips` round trips after a warm-up.
fn converse_pingpong(
    comm: &SimpleCommunicator,
    size: usize,
    round_trips: u64,
    via_queue: bool,
    fault: Option<Fault>,
) -> Option<Duration> {
    let warm = (round_trips / 10).clamp(1, 100);
    // Unpinned: with one PE per rank, pinning would put both ranks' PEs on core 0.
    let results = Converse::builder()
        .pes(1)
        .network(MpiNet::new(comm, 1))
        .build()
        .start(move |pe: &mut Pe| -> Option<Duration> {
            // Same registration order on both ranks: 0 = arrival, 1 = real.
            let arrival = HandlerId(0);
            let real = HandlerId(1);
            let to_wire = if via_queue { arrival } else { real };
            pe.register_handler(move |pe: &mut Pe, mut m: Msg| {
                m.set_handler(real);
                pe.enqueue_fifo(m);
            });
            let done = Rc::new(Cell::new(None::<Duration>));
            let count = Rc::new(Cell::new(0u64));
            let t0 = Rc::new(Cell::new(Instant::now()));
            let (done2, count2, t02) = (done.clone(), count.clone(), t0.clone());
            pe.register_handler(move |pe: &mut Pe, mut m: Msg| {
                m.set_handler(to_wire);
                let c = count2.get() + 1;
                count2.set(c);
                if pe.my_pe() == 1 {
                    match fault {
                        Some(Fault::HandlerPanic) if c == 10 => panic!("injected fault: the ping-pong handler panics"),
                        Some(Fault::SendToMissingPe) if c == 10 => pe.send(pe.num_pes() + 5, m),
                        _ => pe.send(0, m),
                    }
                    return;
                }
                if c == warm {
                    t02.set(Instant::now());
                }
                if c == warm + round_trips {
                    done2.set(Some(t02.get().elapsed()));
                    assert_eq!(m.len(), size, "the message came back whole");
                    pe.exit_all();
                } else {
                    pe.send(1, m);
                }
            });
            if pe.my_pe() == 0 {
                let mut m = Msg::alloc(size);
                m.set_handler(to_wire);
                pe.send(1, m);
            }
            pe.schedule_forever();
            done.get()
        })
        .expect("ping-pong handlers do not panic");
    results[0]
}
