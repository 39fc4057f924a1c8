//! # schedlab-converse — the Converse message layer
//!
//! A re-implementation of the message-driven core of Converse (Bhandarkar's
//! thesis; the Converse manual; Charm++'s `conv-core/converse.h`,
//! `convcore.C`, `queueing.C` and `arch/util/machine-common-core.C`; S7, S8 and
//! S9 in docs/sources.md). Where it reads those sources one way or
//! another, `docs/converse.md` says how and why.
//!
//! * **Generalised messages** ([`Msg`]): one contiguous block, an
//!   [`HEADER_SIZE`]-byte header holding the handler index, then the payload.
//!   [`Msg::alloc`] is `CmiAlloc(n)` (size includes the header);
//!   [`Msg::set_handler`] / [`Msg::handler`] are `CmiSetHandler` /
//!   `CmiGetHandler`.
//! * **Handlers**: `Fn(&mut Pe, Msg)`, registered in the same order on every
//!   PE so the indices agree ([`Pe::register_handler`], or once for all PEs
//!   with [`Converse::register_handler`] before start). The handler owns the
//!   message.
//! * **PEs**: each an OS thread (pinned with `core_affinity` if asked) with a
//!   network inbox — a lock-free MPSC `SegQueue` — and a scheduler queue
//!   ([`Cqs`]). [`Pe::send`] is `CmiSyncSendAndFree`; [`Pe::broadcast`] /
//!   [`Pe::broadcast_all`] the broadcasts. A send to the PE itself goes to
//!   its local queue (`CmiSendSelf`), not the network.
//! * **The scheduler loop** (Csd): each iteration takes one
//!   message — from another PE if there is one, else from the local queue,
//!   else from the scheduler queue (`CsdNextMessage`) — and calls its
//!   handler (handlers may process at once or [`Pe::enqueue`] the message
//!   with a [`Strategy`]). Entry points: [`Pe::schedule_forever`],
//!   [`Pe::schedule_count`] (returns 0, or `n` minus the number delivered if
//!   stopped early — as `CsdScheduleCount` does; `n = 0` schedules until
//!   stopped), [`Pe::schedule_poll`], [`Pe::scheduler`]
//!   (dispatch on the sign of `n`), [`Pe::deliver_msgs`] (network only),
//!   [`Pe::deliver_specific_msg`]. [`Pe::exit_scheduler`] is
//!   `CsdExitScheduler`: a stop counter that every running scheduler
//!   compares with its value at entry, so it ends all nested scheduler calls
//!   on the PE, as in `convcore.C`.
//! * **Cqs** ([`Cqs`]): FIFO, LIFO, IFIFO, ILIFO, BFIFO, BLIFO,
//!   LFIFO, LLIFO with the current `CQS_QUEUEING_*` numbering (2…9); a
//!   negative-priority heap of per-priority deques, a zero-priority deque and
//!   a positive-priority heap, dequeued in that order; integer priorities
//!   biased by 2³¹ (longs by 2⁶³) to pick the heap; priorities compared word
//!   by word, a prefix first, unmasked. See [`cqs`] for details.
//! * **Running a program**: [`Converse::run`]`(n, |pe| ...)` (or
//!   [`Converse::builder`]) runs the closure on every PE — register handlers,
//!   send the first messages, maybe schedule — then runs each PE's scheduler
//!   until it is stopped on that PE ([`Pe::exit_scheduler`]), as
//!   `ConverseInit` does before `ConverseExit`; the run ends when every PE
//!   has left its scheduler, and returns the closures' values in PE order.
//!   [`Pe::exit_all`] is a convenience like Charm++'s `CkExit` (Converse has
//!   no exit-all): it stops every PE's scheduler.
//!
//! * **Across processes** ([`machine`]): with [`ConverseBuilder::network`]
//!   each process (MPI rank, feature `mpi`) is a node of `pes` PEs, numbered
//!   globally; sends to other ranks go through the network, progress is made
//!   in the scheduler loop's network-drain step, and a failure ends the job
//!   naming rank and PE. `schedlab bench --mpi` runs Fig. 2.4/2.5 over MPI.
//!
//! ## Design decisions and differences from Converse
//!
//! * **Idle PEs spin, then park.** An idle scheduler polls its inbox for
//!   100 µs (configurable, [`ConverseBuilder::spin`]; yielding in the second
//!   half) and then parks its thread; a sender that finds the `sleeping`
//!   flag set unparks it (store–fence–load on both sides, so no wake-up is
//!   lost). Converse's idle conditions (`CcdPROCESSOR_BEGIN_IDLE` …) are not
//!   implemented.
//! * **Handler failures**: every handler call runs under `catch_unwind`. A
//!   panicking handler (or a message naming an unregistered handler) is
//!   recorded as a [`HandlerError`] (PE, handler index, panic message),
//!   counted in [`PeStats::handler_errors`], and the PE **keeps
//!   scheduling**; when the run ends [`Converse::start`] returns
//!   `Err(`[`RunError::Handlers`]`)` naming each failed handler (use
//!   [`Converse::start_report`] to get the results and counters anyway). A
//!   panic in a PE's start closure itself sends a global exit so the others
//!   do not wait forever, and yields [`RunError::Pe`]. Converse aborts the
//!   whole job instead.
//! * **Ending**: a PE is done when its scheduler returns after the start
//!   closure; messages still in flight to a PE that is done are dropped.
//!   The optional global exit is a message ([`Pe::exit_all`] sends one to
//!   each PE, itself included through its local queue), so messages a PE
//!   sent before calling it are delivered first. If the start closure ran
//!   the scheduler itself and stopped it, the scheduler runs again after the
//!   closure, as `ConverseInit` with `usched = 0` does. There is no quiescence
//!   detection.
//! * **Counting**: `schedule_count` counts handler invocations, as Converse
//!   does — a message that arrives, is enqueued by its handler and later
//!   dispatched counts twice. The internal exit message is not counted.
//! * **Ordering**: messages from one PE to another arrive in send order (the
//!   inbox is a FIFO); Converse only promises that on some machine layers.
//!   Messages to self wait in the local queue behind every message from
//!   other PEs (`CsdLocalMax = 0`, Converse's default).
//! * **Header**: 8 bytes — handler index and source PE ([`Msg::src_pe`]);
//!   Converse's header has more (the queueing priority lives in the
//!   message's envelope there, in the Cqs key here).
//! * **Handler tables are per PE** (`Rc`, so PE-local handlers may keep
//!   non-`Send` state); handlers registered on the [`Converse`] object are
//!   shared by all PEs and take the first indices.
//!   `CmiRegisterHandlerGlobal` + `CmiNumberHandler` are not provided.
//! * **Cqs priorities** are keyed as in `queueing.C` (bit count and words,
//!   bits past the count kept); priorities with equal words and different bit
//!   counts, which `queueing.C` leaves in heap order, run fewer bits first.
//!   As in Converse, an IFIFO/LFIFO priority 0 lands in the *positive* heap,
//!   so it runs after plain FIFO/LIFO messages.
//! * Not implemented: Cth threads, Cld load balancers, the message manager,
//!   futures, CPM, node queues, async sends (all sends are synchronous and
//!   "AndFree": the message moves).
//!
//! ## Benchmarks
//!
//! [`bench_pingpong`] (Fig. 2.4 / 2.5 of the thesis) and
//! [`bench_queueing_overhead`] return numbers for `schedlab bench`;
//! `cargo bench -p schedlab-converse` runs them under criterion.

pub mod bench;
pub mod cqs;
pub mod machine;
pub mod msg;
pub mod runtime;

pub use bench::{bench_pingpong, bench_pingpong_sized, bench_queueing_overhead};
pub use cqs::{
    Cqs, Prio, Strategy, CQS_QUEUEING_BFIFO, CQS_QUEUEING_BLIFO, CQS_QUEUEING_FIFO, CQS_QUEUEING_IFIFO,
    CQS_QUEUEING_ILIFO, CQS_QUEUEING_LFIFO, CQS_QUEUEING_LIFO, CQS_QUEUEING_LLIFO,
};
pub use machine::{Network, SendError};
pub use msg::{HandlerId, Msg, HEADER_SIZE};
pub use runtime::{Converse, ConverseBuilder, HandlerError, Pe, PeStats, RunError, RunReport, SharedHandler};
