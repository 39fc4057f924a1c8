//! The machine layer over MPI (feature `mpi`): one Converse node per rank.
//!
//! * **Wire format**: a Converse message travels as its own bytes (header
//!   with handler index and source PE, then payload) in one MPI message of
//!   bytes; the MPI tag is the global destination PE, so the receiver routes
//!   it without a second header.
//! * **Small messages** (≤ [`SMALL_MAX`] bytes) go on the *small*
//!   communicator, where the receiver keeps [`PREPOSTED`] `MPI_Irecv`s of
//!   [`SMALL_MAX`] bytes posted (any source, any tag): an arriving message
//!   lands straight in a posted buffer instead of MPI's unexpected-message
//!   queue, which `MPI_Improbe` + `MPI_Mrecv` needed (one more copy and
//!   match: ~190 ns a message here, a third of MPI's own 16-byte latency).
//!   All posted receives match everything, so they complete in posting
//!   order and the receiver only ever tests the oldest one.
//! * **Large messages** go as an 8-byte announcement (the body's length) on
//!   the small communicator, tagged [`ANNOUNCE`] + destination PE, then an
//!   `MPI_Isend` of the body on the *large* one; the receiver takes the
//!   announcement in order with the small messages and receives the body at
//!   once (`MPI_Recv` straight into the block that becomes the message).
//!   So messages from one PE to another still arrive in send order,
//!   whatever their sizes (MPI orders messages only within one
//!   communicator). Announcing first lets the body's receive be posted
//!   before the body arrives (see [`Network::send`] below).
//! * **Sends** are `MPI_Isend`s of the message's own heap block (no copy),
//!   tested at once: an eager send is complete when `MPI_Isend` returns and
//!   its block is freed there (or kept to receive into, see `Inner::pool`);
//!   others wait in `pending` for a later progress call.
//! * **Progress** (`poll`, called by the scheduler loop's network-drain step
//!   when the PE's inbox is empty, and by idle PEs): test the oldest posted
//!   receive; an arrival is routed to its PE's inbox, and a receive takes
//!   its place in the ring when a later poll finds nothing (off the path
//!   from arrival to reply). The buffer itself
//!   becomes the message (no copy) when the pool has a block to repost in
//!   its place; otherwise an arrival under 4 KiB is copied out and its
//!   buffer reposted, a bigger one keeps its buffer and a new one is
//!   posted. So a user keeping many small messages keeps 16 KiB for each
//!   only while blocks it sent come back to the pool, and a ping-pong
//!   cycles through the same few blocks without allocating. One poll takes
//!   at most one arrival and tests the sends in flight only now and then:
//!   every `MPI_Test` that finds nothing is an `opal_progress`, the cost
//!   that counts at small sizes (`SCHEDLAB_MPI_STATS=1` prints the calls).
//! * **Communicators**: each [`MpiNet`] duplicates the one it is given
//!   twice, so successive Converse runs in one job (the benchmarks) never
//!   see each other's late messages.
//! * **Threads**: MPI must be initialised with at least
//!   `Threading::Serialized`; every MPI call of a rank goes through one mutex.
//! * **Failures** end the job with `MPI_Abort` after printing a message that
//!   names the rank and PE ([`Network::fail`]); a rank that dies is reported
//!   by the launcher (`mpirun` kills the others and names the rank).

use super::{check_arrival, Network, MAX_WIRE_BYTES};
use crate::msg::Msg;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use std::collections::VecDeque;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Exit code of a job ended by [`Network::fail`].
pub const FAIL_EXIT_CODE: i32 = 3;

/// Largest message (header included) sent in one piece into a preposted
/// receive. Above OpenMPI's shared-memory eager limit (4 KiB), so every
/// eager message takes the preposted path.
pub const SMALL_MAX: usize = 16 * 1024;

/// Receives kept posted on the small communicator: arrivals beyond this
/// many between two polls wait in MPI's unexpected queue (still in order).
pub const PREPOSTED: usize = 16;

/// An empty [`Network::poll`] tests the sends in flight once in this many
/// calls (see there).
const POLLS_PER_SEND_TEST: u64 = 16;

/// Blocks of completed sends kept for reuse as receive buffers (see
/// [`Inner::pool`]).
const POOL_MAX: usize = 8;

/// Ring buffers the pool starts with (see `MpiNet::new`).
const POOL_SEED: usize = 4;

/// Tag offset of a large message's announcement (tag = `ANNOUNCE` + PE).
/// Destination PEs must stay below it.
pub const ANNOUNCE: usize = 16_384;

/// How long [`Network::flush`] waits for sends still in flight at the end of
/// a run (a rendezvous send to a rank that has already left the run would
/// wait forever).
const FLUSH_LIMIT: Duration = Duration::from_secs(2);

/// A send in flight: the request and the block it reads from (a `Vec`'s
/// heap block does not move when the `Vec` does).
struct Pending {
    req: ffi::MPI_Request,
    /// Owned here only to outlive the send.
    #[allow(dead_code)]
    block: Vec<u8>,
}

/// A posted receive: the request and the buffer (capacity [`SMALL_MAX`],
/// length 0 until it completes) MPI writes into.
struct Posted {
    req: ffi::MPI_Request,
    buf: Vec<u8>,
}

struct Inner {
    small: SimpleCommunicator,
    large: SimpleCommunicator,
    /// Posted receives, oldest first (the order they complete in).
    ring: VecDeque<Posted>,
    /// Buffers (capacity [`SMALL_MAX`]) to post at the back of the ring.
    /// An arrival's replacement waits here until a poll finds nothing (or
    /// the ring runs low): posting it at once put an `MPI_Irecv` between
    /// each message's arrival and its handler's reply. Messages keep their
    /// order: every posted receive matches everything, so MPI hands
    /// arrivals to the receives in posting order, and arrivals meanwhile
    /// wait in MPI's unexpected queue in order.
    unposted: Vec<Vec<u8>>,
    /// The last poll took an arrival: the next one that finds nothing is
    /// usually the scheduler loop's drain step with the arrival's handler
    /// (or the message it enqueued) still to run, not idle time.
    just_arrived: bool,
    pending: Vec<Pending>,
    /// Blocks (capacity ≥ [`SMALL_MAX`]) of completed sends, reused for the
    /// next receives of a similar size, so a ping-pong cycles through warm
    /// blocks instead of fresh ones (glibc maps blocks above 128 KiB anew
    /// each time). Measured here it mostly helps 4–16 KiB. (The 20–30 %
    /// Converse once lost to MPI at 64 KiB and up was the raw ping-pong
    /// sending a buffer it never wrote, see `mpi_bench::raw_pingpong`; a
    /// `perf` profile had shown no extra copy here.) At most [`POOL_MAX`].
    pool: Vec<Vec<u8>>,
    /// What this rank's layer did (printed at the end with `SCHEDLAB_MPI_STATS=1`).
    stats: Stats,
}

/// Counters of the machine layer's work, to compare per message with a raw
/// MPI ping-pong's one `MPI_Send` and one `MPI_Recv` (`SCHEDLAB_MPI_STATS=1`
/// prints them on stderr when the network is dropped).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub polls: u64,
    pub ring_tests_empty: u64,
    pub arrivals: u64,
    pub irecvs: u64,
    pub isends: u64,
    pub isends_done_at_once: u64,
    pub pending_tests: u64,
    pub bodies: u64,
    pub fresh_blocks: u64,
    pub fresh_bytes: u64,
    pub copies: u64,
    pub freed: u64,
}

// SAFETY: `Inner` holds MPI handles (pointers owned by the MPI library) and
// blocks MPI reads or writes. MPI is initialised with `Threading::Serialized`
// or better (checked in `MpiNet::new`) and every use of `Inner` is under
// `MpiNet::inner`'s mutex, so calls are serialised.
unsafe impl Send for Inner {}

fn check(code: c_int, what: &str) {
    // The default error handler aborts first; this catches one that returns.
    if code != 0 {
        fail_job(&format!("{what} failed with MPI error {code}"));
    }
}

impl Inner {
    /// Post a receive of up to [`SMALL_MAX`] bytes into `buf` at the back
    /// of the ring.
    fn post(&mut self, mut buf: Vec<u8>) {
        buf.clear();
        debug_assert!(buf.capacity() >= SMALL_MAX);
        // SAFETY: MPI_REQUEST_NULL is a constant handle.
        let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: `buf` has SMALL_MAX bytes of capacity and stays in the
        // ring (its heap block unmoved) until the request completes or is
        // cancelled; MPI writes at most SMALL_MAX bytes.
        let code = unsafe {
            ffi::MPI_Irecv(
                buf.as_mut_ptr().cast(),
                SMALL_MAX as c_int,
                ffi::RSMPI_UINT8_T,
                ffi::RSMPI_ANY_SOURCE,
                ffi::RSMPI_ANY_TAG,
                self.small.as_raw(),
                &mut req,
            )
        };
        check(code, "MPI_Irecv");
        self.stats.irecvs += 1;
        self.ring.push_back(Posted { req, buf });
    }

    /// `MPI_Isend` of `block` to `rank` with `tag` on `comm`; freed at once
    /// if MPI is done with it (eager), else kept until a later test.
    fn isend(&mut self, block: Vec<u8>, large: bool, rank: usize, tag: usize) {
        let comm = if large { self.large.as_raw() } else { self.small.as_raw() };
        // SAFETY: as in `post`.
        let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
        let mut done: c_int = 0;
        // SAFETY: `block` is only read by MPI and lives (in `pending`) until
        // the request completes; its length fits a c_int (checked by
        // `Pe::try_send` against MAX_WIRE_BYTES).
        unsafe {
            let code = ffi::MPI_Isend(
                block.as_ptr().cast(),
                block.len() as c_int,
                ffi::RSMPI_UINT8_T,
                rank as c_int,
                tag as c_int,
                comm,
                &mut req,
            );
            check(code, "MPI_Isend");
            check(ffi::MPI_Test(&mut req, &mut done, ffi::RSMPI_STATUS_IGNORE), "MPI_Test");
        }
        self.stats.isends += 1;
        if done != 0 {
            self.stats.isends_done_at_once += 1;
            self.recycle(block);
        } else {
            self.pending.push(Pending { req, block });
            if self.pending.len() >= 64 {
                // A PE that only sends still frees its blocks.
                self.complete_sends();
            }
        }
    }

    /// Recycle or free the blocks of completed sends.
    fn complete_sends(&mut self) {
        let mut i = 0;
        while i < self.pending.len() {
            let mut done: c_int = 0;
            self.stats.pending_tests += 1;
            // SAFETY: a live send request; MPI_Test frees it (setting it to
            // MPI_REQUEST_NULL) when complete.
            check(unsafe { ffi::MPI_Test(&mut self.pending[i].req, &mut done, ffi::RSMPI_STATUS_IGNORE) }, "MPI_Test");
            if done != 0 {
                let p = self.pending.swap_remove(i);
                self.recycle(p.block);
            } else {
                i += 1;
            }
        }
    }

    /// Keep a block MPI is done with for a later receive (if big enough and
    /// the pool has room), else free it.
    fn recycle(&mut self, block: Vec<u8>) {
        if block.capacity() >= SMALL_MAX && self.pool.len() < POOL_MAX {
            self.pool.push(block);
        } else {
            self.stats.freed += 1;
        }
    }

    /// An empty block of at least `len` bytes: from the pool if one is no
    /// more than twice that (a user keeps what it receives), else new.
    fn block(&mut self, len: usize) -> Vec<u8> {
        self.pooled(len).unwrap_or_else(|| {
            self.stats.fresh_blocks += 1;
            self.stats.fresh_bytes += len as u64;
            Vec::with_capacity(len)
        })
    }

    /// An empty pooled block of `len..=2 * len` bytes, if there is one.
    fn pooled(&mut self, len: usize) -> Option<Vec<u8>> {
        let i = self.pool.iter().position(|b| b.capacity() >= len && b.capacity() <= 2 * len)?;
        let mut b = self.pool.swap_remove(i);
        b.clear();
        Some(b)
    }

    /// The next arrival on the small communicator, if the oldest posted
    /// receive has completed: (source rank, tag, bytes); its buffer is
    /// reposted.
    fn next_arrival(&mut self) -> Option<(usize, usize, Vec<u8>)> {
        let head = self.ring.front_mut()?;
        let mut done: c_int = 0;
        // SAFETY: a zeroed status is a valid out-parameter.
        let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: `head.req` is a live receive request into `head.buf`.
        check(unsafe { ffi::MPI_Test(&mut head.req, &mut done, &mut status) }, "MPI_Test");
        if done == 0 {
            self.stats.ring_tests_empty += 1;
            return None;
        }
        self.stats.arrivals += 1;
        let Posted { mut buf, .. } = self.ring.pop_front().expect("tested above");
        let mut count: c_int = 0;
        // SAFETY: `status` was filled by the completed receive.
        check(unsafe { ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut count) }, "MPI_Get_count");
        // SAFETY: MPI wrote `count` ≤ SMALL_MAX bytes at the start of `buf`.
        unsafe { buf.set_len(count as usize) };
        let (from, tag) = (status.MPI_SOURCE as usize, status.MPI_TAG as usize);
        let bytes = match self.pooled(SMALL_MAX) {
            // A recycled block can take its place in the ring: hand the
            // buffer itself over (no allocation, no copy).
            Some(fresh) => {
                self.unposted.push(fresh);
                buf
            }
            // Copy out; the big buffer goes straight back into the ring.
            None if (count as usize) < SMALL_MAX / 4 => {
                let out = buf.clone();
                self.stats.copies += 1;
                self.unposted.push(buf);
                out
            }
            None => {
                self.stats.fresh_blocks += 1;
                self.stats.fresh_bytes += SMALL_MAX as u64;
                self.unposted.push(Vec::with_capacity(SMALL_MAX));
                buf
            }
        };
        if self.ring.len() < PREPOSTED / 2 {
            // A long burst: keep enough posted that arrivals still land in them.
            self.post_unposted();
        }
        Some((from, tag, bytes))
    }

    /// Post the receive buffers waiting in `unposted`.
    fn post_unposted(&mut self) {
        while let Some(b) = self.unposted.pop() {
            self.post(b);
        }
    }

    /// Receive the body a large message's announcement (`len`, 8 bytes
    /// little-endian) promised from `from` for PE `dest`.
    fn receive_body(&mut self, from: usize, dest: usize, announcement: &[u8]) -> Result<Vec<u8>, String> {
        let len = <[u8; 8]>::try_from(announcement).map(u64::from_le_bytes).map_err(|_| {
            format!(
                "malformed message from rank {from} to PE {dest}: a {}-byte announcement (expected 8)",
                announcement.len()
            )
        })?;
        if len as usize > MAX_WIRE_BYTES || (len as usize) <= SMALL_MAX {
            return Err(format!(
                "malformed message from rank {from} to PE {dest}: announces {len} bytes, outside {}..={MAX_WIRE_BYTES}",
                SMALL_MAX + 1
            ));
        }
        self.stats.bodies += 1;
        let mut body = self.block(len as usize);
        // SAFETY: a zeroed status is a valid out-parameter.
        let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: `body` has `len` bytes of capacity; the sender posts the
        // body's send right after the announcement, so this receive completes.
        let code = unsafe {
            ffi::MPI_Recv(
                body.as_mut_ptr().cast(),
                len as c_int,
                ffi::RSMPI_UINT8_T,
                from as c_int,
                dest as c_int,
                self.large.as_raw(),
                &mut status,
            )
        };
        check(code, "MPI_Recv");
        let mut count: c_int = 0;
        // SAFETY: `status` was filled by the completed receive.
        check(unsafe { ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut count) }, "MPI_Get_count");
        // SAFETY: MPI wrote `count` ≤ `len` bytes.
        unsafe { body.set_len(count as usize) };
        Ok(body)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if std::env::var_os("SCHEDLAB_MPI_STATS").is_some_and(|v| v == "1") {
            eprintln!("schedlab converse: MPI layer of rank {}: {:?}", self.small.rank(), self.stats);
        }
        if mpi::environment::is_finalized() {
            // Nothing can be cancelled any more: leak the buffers MPI knew.
            self.ring.drain(..).for_each(std::mem::forget);
            self.pending.drain(..).for_each(std::mem::forget);
            return;
        }
        // Cancel the posted receives (a completed one just completes) before
        // the communicators are freed.
        for mut p in self.ring.drain(..) {
            // SAFETY: live receive requests; cancelled ones complete.
            unsafe {
                ffi::MPI_Cancel(&mut p.req);
                ffi::MPI_Wait(&mut p.req, ffi::RSMPI_STATUS_IGNORE);
            }
        }
        // Sends `flush` gave up on may still be read by MPI: leak their blocks.
        self.pending.drain(..).for_each(std::mem::forget);
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
    /// A network over (duplicates of) `comm` for a machine of
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
        let small = comm.duplicate();
        let large = comm.duplicate();
        let rank = small.rank() as usize;
        let ranks = small.size() as usize;
        let mine = pes_per_rank as u64;
        let mut all = vec![0u64; ranks];
        small.all_gather_into(&mine, &mut all[..]);
        if let Some((r, n)) = all.iter().enumerate().find(|(_, &n)| n != mine) {
            fail_job(&format!("rank {rank} has {mine} PEs but rank {r} has {n}: every rank needs the same PE count"));
        }
        // The standard guarantees tags up to 32767 (`MPI_TAG_UB` may be
        // larger); the upper half marks announcements.
        if pes_per_rank * ranks > ANNOUNCE {
            fail_job(&format!(
                "{} PEs exceed the {ANNOUNCE} the MPI layer supports (the tag carries the destination PE; tags above 32767 are not portable)",
                pes_per_rank * ranks
            ));
        }
        let mut inner = Inner {
            small,
            large,
            ring: VecDeque::with_capacity(PREPOSTED),
            unposted: Vec::new(),
            just_arrived: false,
            pending: Vec::new(),
            pool: Vec::new(),
            stats: Stats::default(),
        };
        for _ in 0..PREPOSTED {
            let b = inner.block(SMALL_MAX);
            inner.post(b);
        }
        // Spare ring buffers, so the first small arrivals are handed over
        // rather than copied: a handler that sends its message on returns
        // the block to the pool, and from then on small messages cycle
        // through these blocks (a 16-byte message is otherwise copied into
        // a fresh 16-byte block, which its send frees, every time).
        inner.pool.extend((0..POOL_SEED).map(|_| Vec::with_capacity(SMALL_MAX)));
        Arc::new(MpiNet { inner: Mutex::new(inner), rank, ranks, pes_per_rank })
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
        let block = msg.into_bytes();
        let mut g = self.lock();
        if block.len() <= SMALL_MAX {
            g.isend(block, false, dest_rank, dest_pe);
        } else {
            // Announcement first: the receiver usually sees it, and posts
            // the body's receive, before the body's first fragment (up to
            // 32 KiB, copied into shared memory by this `MPI_Isend`) has
            // arrived, so the body lands in a posted receive instead of
            // being copied once more through MPI's unexpected queue. Its
            // send is posted right after, so that receive completes.
            let announcement = (block.len() as u64).to_le_bytes().to_vec();
            g.isend(announcement, false, dest_rank, ANNOUNCE + dest_pe);
            g.isend(block, true, dest_rank, dest_pe);
        }
    }

    fn poll(&self, deliver: &mut dyn FnMut(usize, Msg)) -> usize {
        // Another PE of this rank is polling: it routes our messages too.
        let Ok(mut g) = self.inner.try_lock() else { return 0 };
        g.stats.polls += 1;
        // One arrival per call: testing the ring again after it would cost
        // one more `MPI_Test`, hence one more `opal_progress`, per message
        // (~40 ns of a ~580 ns 16-byte hop here), and the scheduler loop
        // polls again as soon as this PE's message is handled anyway.
        let Some((from, tag, bytes)) = g.next_arrival() else {
            // Idle (the second empty poll in a row): the time to post the
            // receives the last arrivals used.
            let idle = !std::mem::take(&mut g.just_arrived);
            if idle && !g.unposted.is_empty() {
                g.post_unposted();
            }
            // Each test of an incomplete send is an `opal_progress` too: an
            // idle loop testing them on every poll waits twice as long per
            // round for its next message. Their blocks are only wanted back
            // for the pool, so every POLLS_PER_SEND_TEST-th empty poll does.
            if !g.pending.is_empty() && g.stats.polls % POLLS_PER_SEND_TEST == 0 {
                g.complete_sends();
            }
            return 0;
        };
        g.just_arrived = true;
        let arrival = if tag >= ANNOUNCE {
            let dest = tag - ANNOUNCE;
            g.receive_body(from, dest, &bytes).map(|body| (dest, body))
        } else {
            Ok((tag, bytes))
        };
        let per_rank = self.pes_per_rank;
        match arrival.and_then(|(dest, b)| {
            check_arrival(b, dest, self.rank * per_rank, per_rank, from).map(|m| (dest, m)).map_err(|e| e.to_string())
        }) {
            Ok((dest, m)) => deliver(dest, m),
            Err(e) => fail_job(&e),
        }
        1
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

/// Why [`MpiJob::init`] could not start this rank's part of the job.
#[derive(Debug, thiserror::Error)]
pub enum MpiInitError {
    #[error("MPI is already initialised in this process")]
    AlreadyInitialised,
    /// The library's threading level (named) is below what Converse's PE threads need.
    #[error("this MPI library offers only {0} threading; Converse needs Serialized")]
    Threading(String),
}

/// This process's part in an MPI job: MPI is initialised (with
/// `Threading::Serialized`, what Converse PE threads need) until it drops.
pub struct MpiJob {
    universe: mpi::environment::Universe,
}

impl MpiJob {
    /// `MPI_Init_thread`; an error if MPI was initialised already or cannot
    /// give Serialized threading.
    pub fn init() -> Result<MpiJob, MpiInitError> {
        let (universe, threading) =
            mpi::initialize_with_threading(mpi::Threading::Serialized).ok_or(MpiInitError::AlreadyInitialised)?;
        if matches!(threading, mpi::Threading::Single | mpi::Threading::Funneled) {
            return Err(MpiInitError::Threading(format!("{threading:?}")));
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
