//! The machine layer over MPI (feature `mpi`): one Converse node per rank.
//!
//! * **Wire format**: a Converse message travels as its own bytes (header
//!   with handler index and source PE, then payload) in one MPI message of
//!   `MPI_BYTE`s; the MPI tag is the global destination PE, so the receiver
//!   routes it without a second header.
//! * **Sends** are `MPI_Isend`s of the message's own heap block (no copy):
//!   the block is leaked to MPI and freed when `MPI_Test` reports the send
//!   complete, in the next progress call.
//! * **Progress** (`poll`, called by the scheduler loop's network-drain step
//!   when the PE's inbox is empty, and by idle PEs): test pending sends, then
//!   `MPI_Improbe` + `MPI_Mrecv` every arrived message (so any size is
//!   received without a preposted buffer) and route it to its PE's inbox.
//! * **Communicator**: each [`MpiNet`] duplicates the one it is given, so
//!   successive Converse runs in one job (the benchmarks) never see each
//!   other's late messages.
//! * **Threads**: MPI must be initialised with at least
//!   `Threading::Serialized`; every MPI call of a rank goes through one mutex.
//! * **Failures** end the job with `MPI_Abort` after printing a message that
//!   names the rank and PE ([`Network::fail`]); a rank that dies is reported
//!   by the launcher (`mpirun` kills the others and names the rank).

use super::{check_arrival, Network, MAX_WIRE_BYTES};
use crate::msg::Msg;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Exit code of a job ended by [`Network::fail`].
pub const FAIL_EXIT_CODE: i32 = 3;

/// How long [`Network::flush`] waits for sends still in flight at the end of
/// a run (a rendezvous send to a rank that has already left the run would
/// wait forever).
const FLUSH_LIMIT: Duration = Duration::from_secs(2);

/// A send in flight: the request and the leaked block it reads from.
struct Pending {
    req: Request<'static, [u8], StaticScope>,
    block: *mut [u8],
}

struct Inner {
    comm: SimpleCommunicator,
    pending: Vec<Pending>,
}

// SAFETY: `Inner` holds MPI handles (integers or pointers owned by the MPI
// library) and blocks owned by in-flight sends. MPI is initialised with
// `Threading::Serialized` or better (checked in `MpiNet::new`) and every use
// of `Inner` is under `MpiNet::inner`'s mutex, so calls are serialised.
unsafe impl Send for Inner {}

impl Inner {
    /// Free the blocks of completed sends.
    fn complete_sends(&mut self) {
        let mut i = 0;
        while i < self.pending.len() {
            let p = self.pending.swap_remove(i);
            match p.req.test() {
                Ok(_) => {
                    // SAFETY: MPI has finished reading the block; it came
                    // from `Box::leak` in `send` and nothing else refers to it.
                    drop(unsafe { Box::from_raw(p.block) });
                }
                Err(req) => {
                    self.pending.push(Pending { req, block: p.block });
                    let last = self.pending.len() - 1;
                    self.pending.swap(i, last);
                    i += 1;
                }
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // A request dropped uncompleted aborts the process (rsmpi); sends
        // `flush` gave up on are leaked with their blocks instead.
        for p in self.pending.drain(..) {
            std::mem::forget(p.req);
        }
    }
}

/// One rank's end of the network.
pub struct MpiNet {
    inner: Mutex<Inner>,
    rank: usize,
    ranks: usize,
    pes_per_rank: usize,
}

impl MpiNet {
    /// A network over (a duplicate of) `comm` for a machine of
    /// `pes_per_rank` PEs on every rank. Collective: every rank of `comm`
    /// must call it with the same `pes_per_rank` (checked; a mismatch ends
    /// the job with a message).
    pub fn new(comm: &SimpleCommunicator, pes_per_rank: usize) -> Arc<MpiNet> {
        let threading = mpi::environment::threading_support();
        if matches!(threading, mpi::Threading::Single | mpi::Threading::Funneled) {
            fail_job(&format!(
                "MPI was initialised with {threading:?} threading; Converse PEs are threads and need at least Serialized"
            ));
        }
        let comm = comm.duplicate();
        let rank = comm.rank() as usize;
        let ranks = comm.size() as usize;
        let mine = pes_per_rank as u64;
        let mut all = vec![0u64; ranks];
        comm.all_gather_into(&mine, &mut all[..]);
        if let Some((r, n)) = all.iter().enumerate().find(|(_, &n)| n != mine) {
            fail_job(&format!("rank {rank} has {mine} PEs but rank {r} has {n}: every rank needs the same PE count"));
        }
        // The standard guarantees tags up to 32767 (`MPI_TAG_UB` may be larger).
        if pes_per_rank * ranks > 32_768 {
            fail_job(&format!(
                "{} PEs exceed the 32767 largest MPI tag every implementation has (the tag carries the destination PE)",
                pes_per_rank * ranks
            ));
        }
        Arc::new(MpiNet { inner: Mutex::new(Inner { comm, pending: Vec::new() }), rank, ranks, pes_per_rank })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock means a panic inside an MPI call: the job is over.
        self.inner.lock().unwrap_or_else(|_| fail_job("MPI machine layer: a thread panicked during an MPI call"))
    }
}

/// Print `message` and end every rank of the job.
fn fail_job(message: &str) -> ! {
    eprintln!("schedlab converse: {message}");
    SimpleCommunicator::world().abort(FAIL_EXIT_CODE)
}

impl Network for MpiNet {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn send(&self, dest_rank: usize, dest_pe: usize, msg: Msg) {
        debug_assert!(msg.len() <= MAX_WIRE_BYTES, "Pe::try_send checks the size");
        let block: &'static mut [u8] = Box::leak(msg.into_bytes().into_boxed_slice());
        let ptr: *mut [u8] = block;
        // SAFETY: `ptr` is the block leaked just above; it is only read by
        // MPI until the request completes, then freed in `complete_sends`.
        let buf: &'static [u8] = unsafe { &*ptr };
        let mut g = self.lock();
        let req = g.comm.process_at_rank(dest_rank as i32).immediate_send_with_tag(StaticScope, buf, dest_pe as i32);
        g.pending.push(Pending { req, block: ptr });
        if g.pending.len() >= 64 {
            // A PE that only sends still frees its blocks.
            g.complete_sends();
        }
    }

    fn poll(&self, deliver: &mut dyn FnMut(usize, Msg)) -> usize {
        // Another PE of this rank is polling: it routes our messages too.
        let Ok(mut g) = self.inner.try_lock() else { return 0 };
        if !g.pending.is_empty() {
            g.complete_sends();
        }
        let mut n = 0;
        while let Some(probed) = g.comm.any_process().immediate_matched_probe() {
            let (bytes, status): (Vec<u8>, _) = probed.matched_receive_vec();
            let (from, dest) = (status.source_rank() as usize, status.tag() as usize);
            let per_rank = self.pes_per_rank;
            match check_arrival(bytes, dest, self.rank * per_rank, per_rank, from) {
                Ok(m) => deliver(dest, m),
                Err(e) => fail_job(&e),
            }
            n += 1;
        }
        n
    }

    fn flush(&self) {
        let start = Instant::now();
        loop {
            let mut g = self.lock();
            g.complete_sends();
            if g.pending.is_empty() {
                return;
            }
            if start.elapsed() > FLUSH_LIMIT {
                eprintln!(
                    "schedlab converse: rank {}: {} send(s) still in flight after {FLUSH_LIMIT:?} at the end of the run; abandoned",
                    self.rank,
                    g.pending.len()
                );
                return;
            }
            drop(g);
            std::thread::yield_now();
        }
    }

    fn fail(&self, message: &str) -> ! {
        fail_job(message)
    }
}

static KILL_NOTICE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

extern "C" fn on_sigterm(sig: libc::c_int) {
    if let Some(t) = KILL_NOTICE.get() {
        // SAFETY: write(2) of an immutable, initialised buffer.
        unsafe { libc::write(2, t.as_ptr().cast(), t.len()) };
    }
    // SAFETY: restore the default action and re-raise: the process ends
    // with SIGTERM as the launcher asked.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// This process's part in an MPI job: MPI is initialised (with
/// `Threading::Serialized`, what Converse PE threads need) until it drops.
pub struct MpiJob {
    universe: mpi::environment::Universe,
}

impl MpiJob {
    /// `MPI_Init_thread`; an error if MPI was initialised already or cannot
    /// give Serialized threading.
    pub fn init() -> Result<MpiJob, String> {
        let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Serialized)
            .ok_or("MPI is already initialised in this process")?;
        if matches!(threading, mpi::Threading::Single | mpi::Threading::Funneled) {
            return Err(format!("this MPI library offers only {threading:?} threading; Converse needs Serialized"));
        }
        Ok(MpiJob { universe })
    }

    /// `MPI_COMM_WORLD`.
    pub fn world(&self) -> SimpleCommunicator {
        self.universe.world()
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.universe.world().rank() as usize
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.universe.world().size() as usize
    }

    /// The host this rank runs on (`MPI_Get_processor_name`).
    pub fn host(&self) -> String {
        mpi::environment::processor_name().unwrap_or_else(|_| "?".into())
    }

    /// When the launcher ends this rank with SIGTERM (as `mpirun` does to
    /// the survivors when a rank dies or aborts), print which PEs this rank
    /// held and what the PE numbering is, so the launcher's "rank N died"
    /// names PEs too. Call once, after the PE layout is known.
    pub fn notice_launcher_kill(&self, pes_per_rank: usize) {
        let (rank, size) = (self.rank(), self.size());
        let first = rank * pes_per_rank;
        let text = format!(
            "schedlab converse: rank {rank} (PEs {first}..{}) stopped by the MPI launcher: another rank died or \
             aborted (the launcher names it; rank r of {size} holds PEs r*{pes_per_rank}..(r+1)*{pes_per_rank})\n",
            first + pes_per_rank
        );
        if KILL_NOTICE.set(text.into_bytes()).is_err() {
            return;
        }
        // SAFETY: the handler only calls async-signal-safe functions (write,
        // signal, raise) on a buffer built before installation.
        unsafe {
            libc::signal(libc::SIGTERM, on_sigterm as extern "C" fn(libc::c_int) as libc::sighandler_t);
        }
    }

    /// End every rank of the job with `message` (`MPI_Abort`).
    pub fn fail(&self, message: &str) -> ! {
        fail_job(message)
    }
}
