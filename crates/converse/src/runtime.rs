//! PEs, the network (one lock-free inbox per PE), handler tables and the Csd
//! scheduler loop (S7, S8 in docs/sources.md).

use crate::cqs::{Cqs, Strategy};
use crate::machine::{Network, SendError, MAX_WIRE_BYTES};
use crate::msg::{HandlerId, Msg, EXIT_HANDLER, HEADER_SIZE};
use crossbeam_queue::SegQueue;
use crossbeam_utils::CachePadded;
use std::any::Any;
use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// A handler shared by every PE (registered on [`Converse`] before start).
pub type SharedHandler = Arc<dyn Fn(&mut Pe, Msg) + Send + Sync>;

type LocalHandler = Rc<dyn Fn(&mut Pe, Msg)>;

/// One PE's network inbox: a lock-free MPSC queue plus the sleeping flag of
/// the spin-then-park protocol.
struct Inbox {
    queue: SegQueue<Msg>,
    sleeping: AtomicBool,
    thread: OnceLock<Thread>,
}

struct Shared {
    /// This process's PEs, `first..first + inboxes.len()` in global numbers.
    inboxes: Box<[CachePadded<Inbox>]>,
    spin: Duration,
    /// The other processes (none: this process is the whole machine).
    net: Option<Arc<dyn Network>>,
    first: usize,
    /// PEs of the whole machine, every rank.
    total: usize,
}

impl Shared {
    /// Deliver to global PE `pe`: its inbox if it is ours, else the network.
    fn route(&self, pe: usize, msg: Msg) {
        let local = self.inboxes.len();
        match (pe.checked_sub(self.first).filter(|&i| i < local), &self.net) {
            (Some(i), _) => self.push(i, msg),
            (None, Some(net)) => net.send(pe / local, pe, msg),
            (None, None) => unreachable!("PE {pe} checked against num_pes before routing"),
        }
    }

    fn push(&self, pe: usize, msg: Msg) {
        let inbox = &self.inboxes[pe];
        inbox.queue.push(msg);
        // Dekker with `Pe::idle`: push; fence; load sleeping  vs  store
        // sleeping; fence; load queue. One side sees the other.
        fence(Ordering::SeqCst);
        if inbox.sleeping.load(Ordering::Relaxed) && inbox.sleeping.swap(false, Ordering::AcqRel) {
            if let Some(t) = inbox.thread.get() {
                t.unpark();
            }
        }
    }
}

/// Per-PE counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeStats {
    /// Handler invocations of user messages (network and scheduler queue).
    pub delivered: u64,
    /// Messages taken from the network inbox (sent by other PEs).
    pub from_network: u64,
    /// Messages taken from the local queue: sends to this PE itself, and
    /// network messages set aside by [`Pe::deliver_specific_msg`].
    pub from_local: u64,
    /// Messages taken from the scheduler queue (Cqs).
    pub from_queue: u64,
    /// Messages sent (a broadcast counts once per destination).
    pub sent: u64,
    /// Messages put into the scheduler queue.
    pub enqueued: u64,
    /// Times the PE parked its thread after spinning idle.
    pub parks: u64,
    /// Handler invocations that panicked or named no registered handler.
    pub handler_errors: u64,
}

/// A handler that panicked, or a message naming no registered handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerError {
    /// The PE it happened on.
    pub pe: usize,
    /// The handler index in the message header.
    pub handler: HandlerId,
    /// The panic message, or "no handler registered with this index".
    pub message: String,
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on PE {} failed: {}", self.handler, self.pe, self.message)
    }
}

/// Why [`Converse::start`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// Handlers panicked (each PE caught the panic, counted it and kept
    /// scheduling; the run went on to its exit).
    Handlers(Vec<HandlerError>),
    /// A PE's start closure itself panicked; the others were told to exit.
    Pe {
        /// The PE whose closure panicked.
        pe: usize,
        /// The panic message.
        message: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Handlers(errs) => {
                write!(f, "{} handler invocation(s) failed", errs.len())?;
                for e in errs.iter().take(5) {
                    write!(f, "; {e}")?;
                }
                Ok(())
            }
            RunError::Pe { pe, message } => write!(f, "PE {pe} panicked: {message}"),
        }
    }
}

impl std::error::Error for RunError {}

/// Everything a run produced.
#[derive(Debug)]
pub struct RunReport<R> {
    /// The start closure's value per PE (`None` if that closure panicked).
    pub results: Vec<Option<R>>,
    /// Counters per PE.
    pub stats: Vec<PeStats>,
    /// Failed handler invocations, all PEs.
    pub handler_errors: Vec<HandlerError>,
    /// A PE whose start closure panicked, with the message.
    pub pe_panic: Option<(usize, String)>,
}

impl<R> RunReport<R> {
    /// `Ok(results)` if nothing failed.
    pub fn into_result(self) -> Result<Vec<R>, RunError> {
        if let Some((pe, message)) = self.pe_panic {
            return Err(RunError::Pe { pe, message });
        }
        if !self.handler_errors.is_empty() {
            return Err(RunError::Handlers(self.handler_errors));
        }
        Ok(self.results.into_iter().map(|r| r.expect("no PE panicked")).collect())
    }
}

/// Configures a [`Converse`] machine.
#[derive(Clone)]
pub struct ConverseBuilder {
    pes: usize,
    pin: bool,
    spin: Duration,
    net: Option<Arc<dyn Network>>,
}

impl fmt::Debug for ConverseBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConverseBuilder")
            .field("pes", &self.pes)
            .field("pin", &self.pin)
            .field("spin", &self.spin)
            .field("ranks", &self.net.as_ref().map(|n| n.ranks()))
            .finish()
    }
}

impl ConverseBuilder {
    /// Span the machine over processes: this process is rank
    /// `net.rank()` and holds the [`ConverseBuilder::pes`] PEs numbered
    /// from `rank × pes` (every rank must use the same count). See
    /// [`crate::machine`].
    pub fn network(mut self, net: Arc<dyn Network>) -> Self {
        self.net = Some(net);
        self
    }

    /// Number of PEs (OS threads). Default 1.
    pub fn pes(mut self, n: usize) -> Self {
        assert!(n >= 1, "a Converse machine needs at least one PE");
        self.pes = n;
        self
    }

    /// Pin PE `i` to core `i mod cores` (core_affinity). Default false.
    pub fn pin(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// How long an idle PE polls its inbox before parking. Default 100 µs:
    /// a cross-CPU futex wake-up costs tens of µs here.
    pub fn spin(mut self, spin: Duration) -> Self {
        self.spin = spin;
        self
    }

    /// The machine (no threads yet: they start with [`Converse::start`]).
    pub fn build(self) -> Converse {
        Converse { pes: self.pes, pin: self.pin, spin: self.spin, handlers: Vec::new(), net: self.net }
    }
}

/// A Converse machine: a number of PEs and the handlers they share.
pub struct Converse {
    pes: usize,
    pin: bool,
    spin: Duration,
    handlers: Vec<SharedHandler>,
    net: Option<Arc<dyn Network>>,
}

impl Converse {
    /// 1 PE, unpinned, 100 µs spin.
    pub fn builder() -> ConverseBuilder {
        ConverseBuilder { pes: 1, pin: false, spin: Duration::from_micros(100), net: None }
    }

    /// Run `f` on `n_pes` pinned PEs (see [`Converse::start`]).
    pub fn run<R, F>(n_pes: usize, f: F) -> Result<Vec<R>, RunError>
    where
        R: Send,
        F: Fn(&mut Pe) -> R + Sync,
    {
        Converse::builder().pes(n_pes).pin(true).build().start(f)
    }

    /// Number of PEs (of this process).
    pub fn num_pes(&self) -> usize {
        self.pes
    }

    /// Register a handler on every PE (`CmiRegisterHandler` done once for
    /// all, before start). Indices start at 0 and increase; handlers that a
    /// PE registers itself with [`Pe::register_handler`] come after these.
    pub fn register_handler<F>(&mut self, f: F) -> HandlerId
    where
        F: Fn(&mut Pe, Msg) + Send + Sync + 'static,
    {
        self.handlers.push(Arc::new(f));
        HandlerId(self.handlers.len() as u32 - 1)
    }

    /// Start the PEs (`ConverseInit` with `usched = 0`): each PE thread runs
    /// `f` — which typically registers handlers, sends the first messages and
    /// may call the scheduler itself — and then the scheduler
    /// ([`Pe::schedule_forever`]) until it is stopped on that PE
    /// ([`Pe::exit_scheduler`], or a global exit, [`Pe::exit_all`]); then the
    /// PE is done (`ConverseExit`). The run ends when every PE is done;
    /// messages still on their way to a PE that is done are dropped. Returns
    /// each PE's value of `f`, or the failures.
    pub fn start<R, F>(&self, f: F) -> Result<Vec<R>, RunError>
    where
        R: Send,
        F: Fn(&mut Pe) -> R + Sync,
    {
        self.start_report(f).into_result()
    }

    /// As [`Converse::start`], returning every PE's counters too.
    pub fn start_report<R, F>(&self, f: F) -> RunReport<R>
    where
        R: Send,
        F: Fn(&mut Pe) -> R + Sync,
    {
        let n = self.pes;
        let shared = Arc::new(Shared {
            inboxes: (0..n)
                .map(|_| {
                    CachePadded::new(Inbox {
                        queue: SegQueue::new(),
                        sleeping: AtomicBool::new(false),
                        thread: OnceLock::new(),
                    })
                })
                .collect(),
            spin: self.spin,
            first: self.net.as_ref().map_or(0, |net| net.rank() * n),
            total: self.net.as_ref().map_or(n, |net| net.ranks() * n),
            net: self.net.clone(),
        });
        let cores = if self.pin { core_affinity::get_core_ids().unwrap_or_default() } else { Vec::new() };
        type PeOutcome<R> = (Option<R>, PeStats, Vec<HandlerError>, Option<String>);
        let outcomes: Vec<PeOutcome<R>> = thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|local| {
                    let id = shared.first + local;
                    let shared = Arc::clone(&shared);
                    let core = (!cores.is_empty()).then(|| cores[local % cores.len()]);
                    let handlers = &self.handlers;
                    let f = &f;
                    thread::Builder::new()
                        .name(format!("converse-pe-{id}"))
                        .spawn_scoped(s, move || {
                            if let Some(c) = core {
                                core_affinity::set_for_current(c);
                            }
                            shared.inboxes[local].thread.set(thread::current()).expect("each PE starts once");
                            let mut pe = Pe::new(id, shared, handlers);
                            let out = catch_unwind(AssertUnwindSafe(|| f(&mut pe)));
                            match out {
                                Ok(r) => {
                                    // convcore's `CsdScheduler(-1)` after the start
                                    // function; its return ends the PE.
                                    pe.schedule_forever();
                                    (Some(r), pe.stats, pe.errors, None)
                                }
                                Err(p) => {
                                    if let Some(net) = &pe.shared.net {
                                        let rank = net.rank();
                                        net.fail(&format!("PE {id} (rank {rank}) panicked: {}", panic_message(&*p)));
                                    }
                                    // Don't leave the others waiting forever.
                                    pe.exit_all();
                                    (None, pe.stats, pe.errors, Some(panic_message(&*p)))
                                }
                            }
                        })
                        .expect("spawn PE thread")
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("PE thread catches its panics")).collect()
        });
        if let Some(net) = &self.net {
            net.flush();
        }
        let mut report = RunReport {
            results: Vec::with_capacity(n),
            stats: Vec::with_capacity(n),
            handler_errors: Vec::new(),
            pe_panic: None,
        };
        for (pe, (r, stats, errors, panic)) in (shared.first..).zip(outcomes) {
            report.results.push(r);
            report.stats.push(stats);
            report.handler_errors.extend(errors);
            if let (None, Some(m)) = (&report.pe_panic, panic) {
                report.pe_panic = Some((pe, m));
            }
        }
        report
    }
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Where the next message comes from in one scheduler iteration.
enum Next {
    Msg(Msg),
    Idle,
}

/// A PE's context: what Converse keeps in `Cpv` variables. Lives on its PE
/// thread (not `Send`); handlers get it as `&mut Pe`.
pub struct Pe {
    /// Global PE number.
    id: usize,
    /// Index of this PE's inbox in this process (`id - shared.first`).
    slot: usize,
    shared: Arc<Shared>,
    handlers: Vec<LocalHandler>,
    cqs: Cqs<Msg>,
    /// `CmiLocalQueue`: messages sent to this PE by itself, and network
    /// messages set aside by `deliver_specific_msg`; checked after the network.
    local: VecDeque<Msg>,
    /// Messages from other ranks that this PE's own progress call took for
    /// it, skipping the inbox (a push, a fence and a pop). Popped before the
    /// inbox: a message goes here only while the inbox is empty, so every
    /// network message here is older than any in the inbox (only the PE
    /// polling routes network messages, and its poll holds the network).
    direct: VecDeque<Msg>,
    /// `CsdStopFlag`: bumped by `exit_scheduler`; a scheduler returns when it
    /// differs from the value it saw on entry.
    stop_flag: u64,
    /// A global exit message arrived: every scheduler call returns at once.
    global_exit: bool,
    stats: PeStats,
    errors: Vec<HandlerError>,
}

impl Pe {
    fn new(id: usize, shared: Arc<Shared>, shared_handlers: &[SharedHandler]) -> Pe {
        let handlers = shared_handlers
            .iter()
            .map(|h| {
                let h = Arc::clone(h);
                Rc::new(move |pe: &mut Pe, m: Msg| h(pe, m)) as LocalHandler
            })
            .collect();
        Pe {
            id,
            slot: id - shared.first,
            shared,
            handlers,
            cqs: Cqs::new(),
            local: VecDeque::new(),
            direct: VecDeque::new(),
            stop_flag: 0,
            global_exit: false,
            stats: PeStats::default(),
            errors: Vec::new(),
        }
    }

    /// `CmiMyPe`.
    pub fn my_pe(&self) -> usize {
        self.id
    }

    /// `CmiNumPes` (every rank's PEs).
    pub fn num_pes(&self) -> usize {
        self.shared.total
    }

    /// `CmiMyNode` (this process's rank; 0 without a network).
    pub fn my_rank(&self) -> usize {
        self.shared.net.as_ref().map_or(0, |n| n.rank())
    }

    /// `CmiRegisterHandler`: must be called in the same order on every PE so
    /// indices agree. The handler need not be `Send`/`Sync` (it never leaves
    /// this PE), so it can keep per-PE state in `Rc<RefCell<_>>`.
    pub fn register_handler<F>(&mut self, f: F) -> HandlerId
    where
        F: Fn(&mut Pe, Msg) + 'static,
    {
        self.handlers.push(Rc::new(f));
        HandlerId(self.handlers.len() as u32 - 1)
    }

    /// Number of handlers registered on this PE.
    pub fn num_handlers(&self) -> usize {
        self.handlers.len()
    }

    /// `CmiSyncSendAndFree`: hand `msg` to PE `pe`'s network inbox (through
    /// the [`Network`] if `pe` is on another rank), or, sent to this PE
    /// itself, to its local queue (`CmiSendSelf`), which the scheduler checks
    /// after the network. Messages from one PE to another arrive in send order.
    ///
    /// # Panics
    /// On the errors of [`Pe::try_send`] (in a handler, the panic is a
    /// [`HandlerError`]).
    pub fn send(&mut self, pe: usize, msg: Msg) {
        if let Err(e) = self.try_send(pe, msg) {
            panic!("PE {}: {e}", self.id);
        }
    }

    /// [`Pe::send`], returning an error instead of panicking for a PE that
    /// does not exist or a message too large for the network.
    pub fn try_send(&mut self, pe: usize, mut msg: Msg) -> Result<(), SendError> {
        if pe >= self.num_pes() {
            return Err(SendError::NoSuchPe { pe, num_pes: self.num_pes() });
        }
        if msg.len() > MAX_WIRE_BYTES {
            return Err(SendError::Oversized { len: msg.len() });
        }
        msg.set_src_pe(self.id);
        self.stats.sent += 1;
        if pe == self.id {
            self.local.push_back(msg);
        } else {
            self.shared.route(pe, msg);
        }
        Ok(())
    }

    /// `CmiSyncBroadcastAndFree`: a copy to every PE except this one.
    pub fn broadcast(&mut self, msg: Msg) {
        let me = self.id;
        self.broadcast_where(msg, |pe| pe != me);
    }

    /// `CmiSyncBroadcastAllAndFree`: a copy to every PE including this one.
    pub fn broadcast_all(&mut self, msg: Msg) {
        self.broadcast_where(msg, |_| true);
    }

    fn broadcast_where(&mut self, msg: Msg, to: impl Fn(usize) -> bool) {
        let targets: Vec<usize> = (0..self.num_pes()).filter(|&p| to(p)).collect();
        if let Some((&last, rest)) = targets.split_last() {
            for &p in rest {
                self.send(p, msg.clone());
            }
            self.send(last, msg);
        }
    }

    /// `CsdEnqueueGeneral`: put `msg` into this PE's scheduler queue.
    pub fn enqueue(&mut self, msg: Msg, strategy: Strategy) {
        self.stats.enqueued += 1;
        self.cqs.enqueue(msg, strategy);
    }

    /// `CsdEnqueueGeneral` in Converse's raw form; panics on an unknown
    /// strategy or too few priority words.
    pub fn enqueue_general(&mut self, msg: Msg, queueing: u32, priobits: u32, prioptr: &[u32]) {
        let s = Strategy::from_raw(queueing, priobits, prioptr)
            .unwrap_or_else(|| panic!("bad queueing strategy {queueing} / {priobits} bits"));
        self.enqueue(msg, s);
    }

    /// `CsdEnqueueFifo` / `CsdEnqueue`.
    pub fn enqueue_fifo(&mut self, msg: Msg) {
        self.stats.enqueued += 1;
        self.cqs.enqueue_fifo(msg);
    }

    /// `CsdEnqueueLifo`.
    pub fn enqueue_lifo(&mut self, msg: Msg) {
        self.stats.enqueued += 1;
        self.cqs.enqueue_lifo(msg);
    }

    /// Messages waiting in the scheduler queue (`CqsLength`).
    pub fn queue_len(&self) -> usize {
        self.cqs.len()
    }

    /// `CsdExitScheduler`: every scheduler call running on this PE returns
    /// after the current handler (as in Converse, where `CsdStopFlag` is
    /// bumped and each running scheduler compares it with its entry value).
    /// A later scheduler call runs normally.
    pub fn exit_scheduler(&mut self) {
        self.stop_flag += 1;
    }

    /// A global exit, like Charm++'s `CkExit` (Converse itself has none: a
    /// Converse program ends when every PE has left its scheduler, e.g. by a
    /// broadcast whose handler calls [`Pe::exit_scheduler`]). Sends an exit
    /// message to every PE, this one included (to its local queue, as any
    /// send to self); a PE handles it in arrival order (messages this PE sent
    /// earlier are delivered first); from then on its scheduler calls return
    /// at once.
    pub fn exit_all(&mut self) {
        let mut m = Msg::alloc(HEADER_SIZE);
        m.set_handler(HandlerId(EXIT_HANDLER));
        m.set_src_pe(self.id);
        for pe in 0..self.num_pes() {
            if pe == self.id {
                // Behind this PE's earlier sends to itself, like any send to self.
                self.local.push_back(m.clone());
            } else {
                self.shared.route(pe, m.clone());
            }
        }
    }

    /// Whether a global exit has reached this PE.
    pub fn exiting(&self) -> bool {
        self.global_exit
    }

    /// This PE's counters so far.
    pub fn stats(&self) -> PeStats {
        self.stats
    }

    /// Failed handler invocations on this PE so far.
    pub fn handler_errors(&self) -> &[HandlerError] {
        &self.errors
    }

    /// `CmiHandleMessage`: call `msg`'s handler now. A panic in the handler
    /// is caught, recorded as a [`HandlerError`] and counted; the PE goes on.
    pub fn handle_message(&mut self, msg: Msg) {
        let h = msg.raw_handler();
        if h == EXIT_HANDLER {
            self.global_exit = true;
            return;
        }
        self.stats.delivered += 1;
        let Some(f) = self.handlers.get(h as usize).cloned() else {
            self.record_error(h, "no handler registered with this index".to_string());
            return;
        };
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(self, msg))) {
            self.record_error(h, panic_message(&*p));
        }
    }

    fn record_error(&mut self, h: u32, message: String) {
        if let Some(net) = &self.shared.net {
            // Across processes nobody would collect the error: end the job.
            let (pe, rank) = (self.id, net.rank());
            net.fail(&format!("handler #{h} failed on PE {pe} (rank {rank}): {message}"));
        }
        self.stats.handler_errors += 1;
        self.errors.push(HandlerError { pe: self.id, handler: HandlerId(h), message });
    }

    /// The next message from another PE, else from the local queue
    /// (`CsdNextMessage` with `CsdLocalMax = 0`: `CmiGetNonLocal`, then
    /// `CmiLocalQueue`).
    fn pop_network(&mut self) -> Option<Msg> {
        // The machine layer's progress belongs to the network-drain step.
        let from_network = match self.pop_arrived() {
            Some(m) => Some(m),
            None if self.poll_net() > 0 => self.pop_arrived(),
            None => None,
        };
        if let Some(m) = from_network {
            self.stats.from_network += 1;
            return Some(m);
        }
        let m = self.local.pop_front()?;
        self.stats.from_local += 1;
        Some(m)
    }

    /// The oldest message from another PE already here: taken by this PE's
    /// own poll, else in its inbox.
    fn pop_arrived(&mut self) -> Option<Msg> {
        self.direct.pop_front().or_else(|| self.shared.inboxes[self.slot].queue.pop())
    }

    /// The network-drain step's progress call: messages from other ranks
    /// move to their PEs (this PE's own to `direct` while its inbox is
    /// empty). Returns how many arrived.
    fn poll_net(&mut self) -> usize {
        let Some(net) = &self.shared.net else { return 0 };
        let (shared, slot, direct) = (&*self.shared, self.slot, &mut self.direct);
        net.poll(&mut |pe, m| {
            let i = pe - shared.first;
            if i == slot && shared.inboxes[slot].queue.is_empty() {
                direct.push_back(m);
            } else {
                shared.push(i, m);
            }
        })
    }

    /// Spin (then yield) for the configured time, then park until a message
    /// arrives. Returns when the inbox is non-empty (or spuriously).
    fn idle(&mut self) {
        if self.shared.net.is_some() {
            // Other ranks cannot unpark us: poll the network instead of
            // parking, as MPI's own blocking calls do — back to back, since
            // each poll is a progress call (no pause between them, which
            // would only add to the time a message waits unseen).
            while self.direct.is_empty() && self.shared.inboxes[self.slot].queue.is_empty() && self.poll_net() == 0 {}
            return;
        }
        let inbox = &self.shared.inboxes[self.slot];
        let spin = self.shared.spin;
        let start = Instant::now();
        let mut i: u32 = 0;
        loop {
            if !inbox.queue.is_empty() {
                return;
            }
            i = i.wrapping_add(1);
            if i & 63 == 0 {
                let t = start.elapsed();
                if t >= spin {
                    break;
                }
                if t >= spin / 2 {
                    // Over-subscribed machines: let the sender run.
                    thread::yield_now();
                }
            }
            std::hint::spin_loop();
        }
        inbox.sleeping.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if inbox.queue.is_empty() {
            self.stats.parks += 1;
            thread::park();
        }
        inbox.sleeping.store(false, Ordering::Relaxed);
    }

    /// The thesis's scheduler loop. `budget`: messages still to deliver
    /// (`None` = unlimited). `block`: idle-wait when nothing is available
    /// (otherwise return). Returns the budget left.
    fn run_loop(&mut self, mut budget: Option<u64>, block: bool) -> Option<u64> {
        let cycle = self.stop_flag;
        if self.global_exit {
            return budget;
        }
        loop {
            // 1. Drain the network: each arrived message's handler runs now.
            // 2. Then dequeue ONE message from the scheduler queue.
            let next = match self.pop_network() {
                Some(m) => Next::Msg(m),
                None => match self.cqs.dequeue() {
                    Some(m) => {
                        self.stats.from_queue += 1;
                        Next::Msg(m)
                    }
                    None => Next::Idle,
                },
            };
            match next {
                Next::Msg(m) => {
                    let user = m.raw_handler() != EXIT_HANDLER;
                    self.handle_message(m);
                    if user {
                        if let Some(b) = budget.as_mut() {
                            // From 0 it goes on past 0: `CsdScheduleCount(0)`
                            // runs until stopped.
                            *b = b.wrapping_sub(1);
                        }
                    }
                    if self.stop_flag != cycle || self.global_exit || budget == Some(0) {
                        return budget;
                    }
                }
                Next::Idle => {
                    if !block {
                        return budget;
                    }
                    self.idle();
                }
            }
        }
    }

    /// `CsdScheduleForever`: deliver messages until [`Pe::exit_scheduler`]
    /// or a global exit.
    pub fn schedule_forever(&mut self) {
        self.run_loop(None, true);
    }

    /// `CsdScheduleCount(n)`: deliver `n` messages (handler invocations,
    /// network and queue alike), waiting for them if need be; returns 0, or
    /// `n` minus the number delivered if stopped early by `exit_scheduler`
    /// or a global exit. `n = 0` delivers until stopped (convcore decrements
    /// before it tests for 0) and returns 0 (convcore returns minus the
    /// number delivered, which a `u64` cannot hold).
    pub fn schedule_count(&mut self, n: u64) -> u64 {
        let left = self.run_loop(Some(n), true).unwrap_or(0);
        if n == 0 {
            0
        } else {
            left
        }
    }

    /// `CsdSchedulePoll`: deliver until nothing is available (network and
    /// scheduler queue both empty) or the scheduler is stopped; never waits.
    pub fn schedule_poll(&mut self) {
        self.run_loop(None, false);
    }

    /// `CsdScheduler(n)`: `n == 0` polls, `n < 0` schedules forever, `n > 0`
    /// counts; returns what `schedule_count` returns (0 for the others).
    pub fn scheduler(&mut self, n: i64) -> i64 {
        match n {
            0 => {
                self.schedule_poll();
                0
            }
            n if n < 0 => {
                self.schedule_forever();
                0
            }
            n => self.schedule_count(n as u64) as i64,
        }
    }

    /// `CmiDeliverMsgs(max)`: deliver messages from the network only (the
    /// scheduler queue is ignored), at most `max` (`max < 0`: all that are
    /// there); never waits. Returns `max` minus the number delivered (for
    /// `max < 0`, `max` unchanged).
    pub fn deliver_msgs(&mut self, max: i64) -> i64 {
        let cycle = self.stop_flag;
        let mut left = max;
        while left != 0 && !self.global_exit && self.stop_flag == cycle {
            let Some(m) = self.pop_network() else { break };
            let user = m.raw_handler() != EXIT_HANDLER;
            self.handle_message(m);
            if user && left > 0 {
                left -= 1;
            }
        }
        left
    }

    /// `CmiDeliverSpecificMsg(h)`: wait for a message for handler `h` (in the
    /// local queue or from the network) and handle it; other network
    /// messages arriving meanwhile are appended to the local queue, as in
    /// convcore, and delivered by later scheduler calls after the network.
    /// Returns false if a global exit arrived first.
    pub fn deliver_specific_msg(&mut self, h: HandlerId) -> bool {
        if let Some(i) = self.local.iter().position(|m| m.handler() == h) {
            let m = self.local.remove(i).expect("index from position");
            self.handle_message(m);
            return true;
        }
        loop {
            while let Some(m) = self.pop_arrived() {
                self.stats.from_network += 1;
                if m.handler() == h {
                    self.handle_message(m);
                    return true;
                }
                if m.raw_handler() == EXIT_HANDLER {
                    self.global_exit = true;
                    return false;
                }
                self.local.push_back(m);
            }
            if self.global_exit {
                return false;
            }
            self.idle();
        }
    }
}
