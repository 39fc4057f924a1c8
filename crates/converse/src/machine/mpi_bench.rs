//! The thesis's two experiments across MPI ranks (Fig. 2.4 and 2.5 of S7
//! in docs/sources.md): ping-pong average one-way time against message size, through
//! Converse and through raw `MPI_Send`/`MPI_Recv` in the same run, and the
//! scheduler-overhead variant where each arriving message's handler enqueues
//! it and the scheduler loop dispatches it later.
//!
//! Message size is the whole Converse message, header included
//! (`CmiAlloc(size)`, as the thesis's program allocates it); the raw MPI
//! ping-pong sends the same number of bytes.
//!
//! **Like for like, and noise made visible.** Both sides run on the same
//! cores: whatever binding the launcher gives a rank (OpenMPI binds rank r
//! to core r for two ranks) is inherited by the Converse PE thread, and
//! [`Report::binding`] records it. Each repetition runs the three variants
//! back to back (raw, Converse direct, Converse queued; the order rotates
//! from one repetition to the next), each with the same warm-up, and is
//! short (about [`Settings::rep_target`]) so that on a shared machine most
//! repetitions fit between two preemptions: a preemption inflates one
//! repetition of one variant, which the median then ignores. Repetitions
//! continue until the size's time budget is spent, so small sizes get many.

use super::mpi::MpiNet;
use crate::msg::{HandlerId, Msg, HEADER_SIZE};
use crate::runtime::{Converse, Pe};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

pub use crate::bench::paper_sizes;

/// Median, min and max over repetitions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub reps: usize,
}

impl Stat {
    pub fn of(mut v: Vec<f64>) -> Stat {
        assert!(!v.is_empty(), "a statistic needs at least one value");
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
    /// Converse direct ÷ raw MPI, paired within each repetition (×).
    pub ratio: Stat,
    /// Converse queued − direct, paired within each repetition (ns/message).
    pub overhead: Stat,
}

/// What [`run`] measured, on rank 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub points: Vec<Point>,
    /// The CPUs each rank (and so its PE thread) may run on, e.g.
    /// `rank 0: cpu 0; rank 1: cpu 1`.
    pub binding: String,
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
    /// Wall time one repetition of one variant aims at (sets the round
    /// trips); shorter than a scheduler time slice, so most repetitions of
    /// a loaded machine see no preemption.
    pub rep_target: Duration,
    /// Time per size: repetitions go on (within the bounds) until it is spent.
    pub size_budget: Duration,
    /// Bounds on the repetitions per size.
    pub min_reps: usize,
    pub max_reps: usize,
    /// Bounds on the round trips per repetition.
    pub min_round_trips: u64,
    pub max_round_trips: u64,
    /// Failure injection (tests only).
    pub fault: Option<Fault>,
}

/// The three timed variants of one repetition.
#[derive(Clone, Copy)]
enum Variant {
    Raw,
    Direct,
    Queued,
}

/// Run the experiments on ranks 0 and 1 of `world` (which must have exactly
/// two ranks; both call this). Rank 0 gets the report, rank 1 `None`.
/// `progress` is called on rank 0 after each size.
pub fn run(job: &super::mpi::MpiJob, s: &Settings, mut progress: impl FnMut(&Point)) -> Option<Report> {
    let world = job.world();
    assert_eq!(world.size(), 2, "the ping-pong runs on exactly two ranks");
    assert!(s.sizes.iter().all(|&n| n >= HEADER_SIZE), "sizes hold the {HEADER_SIZE}-byte header");
    assert!(s.min_reps >= 1 && s.min_reps <= s.max_reps, "1 ≤ min_reps ≤ max_reps");
    let comm = world.duplicate();
    let binding = binding(&comm);
    let mut points = Vec::new();
    for &size in &s.sizes {
        let round_trips = calibrate(&comm, size, s);
        let (mut raw, mut direct, mut queued) = (Vec::new(), Vec::new(), Vec::new());
        let start = Instant::now();
        for rep in 0.. {
            // Rank 0's clock decides for both.
            let mut go = u8::from(rep < s.min_reps || (rep < s.max_reps && start.elapsed() < s.size_budget));
            comm.process_at_rank(0).broadcast_into(&mut go);
            if go == 0 {
                break;
            }
            let order = [Variant::Raw, Variant::Direct, Variant::Queued];
            for k in 0..3 {
                match order[(rep + k) % 3] {
                    Variant::Raw => raw.push(raw_pingpong(&comm, size, round_trips)),
                    Variant::Direct => direct.push(converse_pingpong(&comm, size, round_trips, false, s.fault)),
                    Variant::Queued => queued.push(converse_pingpong(&comm, size, round_trips, true, s.fault)),
                }
            }
        }
        if comm.rank() == 0 {
            let one_way = |v: &[Option<Duration>]| -> Vec<f64> {
                v.iter().map(|d| d.expect("rank 0 times").as_nanos() as f64 / (2 * round_trips) as f64).collect()
            };
            let (raw, direct, queued) = (one_way(&raw), one_way(&direct), one_way(&queued));
            let ratio = direct.iter().zip(&raw).map(|(d, r)| d / r).collect();
            let overhead = queued.iter().zip(&direct).map(|(q, d)| q - d).collect();
            let p = Point {
                size,
                round_trips,
                raw: Stat::of(raw),
                direct: Stat::of(direct),
                queued: Stat::of(queued),
                ratio: Stat::of(ratio),
                overhead: Stat::of(overhead),
            };
            progress(&p);
            points.push(p);
        }
    }
    (comm.rank() == 0).then_some(Report { points, binding })
}

/// Round trips for one repetition of `size`: rank 0 times three short raw
/// ping-pongs and takes the fastest (a preempted probe would otherwise set
/// far too few), and both ranks get its choice.
fn calibrate(comm: &SimpleCommunicator, size: usize, s: &Settings) -> u64 {
    let probe = 20;
    let fastest = (0..3).filter_map(|_| raw_pingpong(comm, size, probe)).min();
    let mut n: u64 = fastest.map_or(0, |t| {
        let per = t.as_secs_f64() / probe as f64;
        ((s.rep_target.as_secs_f64() / per.max(1e-9)) as u64).clamp(s.min_round_trips, s.max_round_trips)
    });
    comm.process_at_rank(0).broadcast_into(&mut n);
    n
}

/// The CPUs each rank may run on (`sched_getaffinity`, first 64 CPUs),
/// gathered on every rank.
fn binding(comm: &SimpleCommunicator) -> String {
    let mine = cpu_mask();
    let mut all = vec![0u64; comm.size() as usize];
    comm.all_gather_into(&mine, &mut all[..]);
    let cpus = |m: u64| (0..64).filter(|c| m >> c & 1 == 1).map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    all.iter().enumerate().map(|(r, &m)| format!("rank {r}: cpu {}", cpus(m))).collect::<Vec<_>>().join("; ")
}

fn cpu_mask() -> u64 {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 = this thread; the size is the set's own.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return 0;
    }
    // SAFETY: CPU_ISSET reads the set filled above.
    (0..64).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).fold(0, |m, c| m | 1 << c)
}

/// Blocking `MPI_Send`/`MPI_Recv` ping-pong of `size` bytes; rank 0 returns
/// the time of `round_trips` round trips after a warm-up.
fn raw_pingpong(comm: &SimpleCommunicator, size: usize, round_trips: u64) -> Option<Duration> {
    let me = comm.rank();
    let other = comm.process_at_rank(1 - me);
    // One buffer per rank, each sending back what it received: the
    // Converse handler forwards the message it was given, so both measure
    // bytes the sending core has just written. (Rank 0 sending a separate
    // buffer it never writes made MPI 14–29 % faster at 4 KiB–256 KiB here:
    // the other rank's single-copy read then finds clean cache lines.)
    let mut buf = vec![0x5au8; size];
    let warm = (round_trips / 10).clamp(1, 100);
    let mut t0 = Instant::now();
    for i in 0..warm + round_trips {
        if i == warm {
            t0 = Instant::now();
        }
        if me == 0 {
            other.send_with_tag(&buf[..], 7);
            other.receive_into_with_tag(&mut buf[..], 7);
        } else {
            other.receive_into_with_tag(&mut buf[..], 7);
            other.send_with_tag(&buf[..], 7);
        }
    }
    let t = t0.elapsed();
    assert_eq!(buf[size - 1], 0x5a, "the ping-pong carried the payload");
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
    // Not pinned by Converse (with one PE per rank it would put both ranks'
    // PEs on core 0): the PE thread inherits the rank's binding, as the raw
    // ping-pong on the main thread does.
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
