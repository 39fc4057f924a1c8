//! The async benchmark programs, written once over [`Exec`].
//!
//! Every program runs one repetition and returns a [`Measure`]: wall time and process
//! CPU time around its timed region. Time-bounded micro-benchmarks (ping-pong, local
//! dispatch, spawn) warm up (up to [`WARMUP`] iterations or a quarter of the budget),
//! then run in chunks until [`Scale::budget`] has elapsed, timed inside the task. Chat
//! and hackbench run a fixed size. `schedlab bench` repeats the whole [`suite`]
//! [`Scale::reps`] times, every runtime once per round, and reports the median.
//!
//! Every program checks its result (messages counted, payload sums, polls, spawned
//! tasks) and panics with what went wrong; [`suite`] turns that into a failed row.
//!
//! The message programs are generic over a [`Channels`] family (unbounded MPSC, the
//! simulator's channel semantics). [`suite`] runs them with the runtime's own channel
//! ([`Exec::Chan`]: `schedlab_rt::channel`, `tokio::sync::mpsc`; the Go peer uses Go
//! channels), with `async-channel` on every Rust runtime (`/async-channel` benches), and
//! with `tokio::sync::mpsc` on runtimes whose own channel it is not (`/tokio-mpsc`).

use crate::exec::{AsyncChannel, ChanRx, ChanTx, Channels, Exec};
use crate::measure::{Measure, Stopwatch};
use crate::row::NO_CHANNEL;
use crate::{names, units, ChatSize, Filter, HackSize, Row, Scale, TokioMpsc};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Checks of the clock: every this many iterations.
const CHUNK: u64 = 64;
/// Most warm-up iterations before a time-bounded measurement (fewer if they take more
/// than a quarter of the budget).
pub const WARMUP: u64 = 2_000;

/// Whether warm-up iteration `i` (started at `t0`) should stop.
fn warm_enough(i: u64, t0: Instant, budget: Duration) -> bool {
    i >= WARMUP || (i.is_multiple_of(CHUNK) && t0.elapsed() >= budget / 4)
}

/// Ping-pong between two tasks through two channels of family `C` (at most one message
/// is ever in flight per channel, so unbounded ones behave as bounded(1)): ns per round
/// trip. `cross = false`: both tasks on worker 0; `true`: worker 0 ↔ worker 1 (placed
/// with [`Exec::spawn_pinned`]).
pub fn pingpong<E: Exec, C: Channels>(e: &E, cross: bool, budget: Duration) -> f64 {
    pingpong_placed::<E, C>(e, cross, budget).value
}

/// [`pingpong`] as a [`Measure`] whose `crossed` is the fraction of timed round trips
/// whose two sides ran on different workers ([`Exec::current_worker`] recorded by each
/// side on every round trip; `None` if the runtime cannot tell). Checks that every
/// message came back and that pong saw each one.
pub fn pingpong_placed<E: Exec, C: Channels>(e: &E, cross: bool, budget: Duration) -> Measure {
    // A message carries the count in its high bits and the sender's worker (+1, 0 =
    // unknown) in its low byte.
    const W: u64 = 256;
    let tag = || E::current_worker().map_or(0, |w| w as u64 % (W - 1) + 1);
    let (to_pong, mut pong_rx) = C::unbounded::<u64>();
    let (to_ping, mut ping_rx) = C::unbounded::<u64>();
    let pong = e.spawn_pinned(usize::from(cross), async move {
        let mut seen = 0u64;
        while let Some(m) = pong_rx.recv().await {
            assert_eq!(m / W, seen, "pong: message {seen} out of order");
            seen += 1;
            to_ping.send((m / W + 1) * W + tag());
        }
        seen
    });
    let ping = e.spawn_pinned(0, async move {
        let (mut x, t0) = (0, Instant::now());
        while !warm_enough(x, t0, budget) {
            to_pong.send(x * W);
            x = ping_rx.recv().await.expect("pong alive") / W;
        }
        let warm = x;
        let sw = Stopwatch::start();
        let (mut n, mut crossed, mut known) = (0u64, 0u64, true);
        while sw.elapsed() < budget {
            for _ in 0..CHUNK {
                let me = tag();
                to_pong.send(x * W + me);
                let m = ping_rx.recv().await.expect("pong alive");
                x = m / W;
                let (other, after) = (m % W, tag());
                known &= me != 0 && other != 0;
                crossed += u64::from(other != me && other != after);
            }
            n += CHUNK;
        }
        let mut m = sw.per_op(n);
        assert_eq!(x, warm + n, "ping-pong: every message came back");
        m.crossed = known.then(|| crossed as f64 / n as f64);
        (m, warm + n)
    });
    e.block_on(async move {
        let (m, sent) = ping.await;
        let seen = pong.await;
        assert_eq!(seen, sent, "ping-pong: pong received every message");
        m
    })
}

/// A future wrapper counting how often it was polled.
struct CountPolls<F> {
    inner: Pin<Box<F>>,
    polls: Arc<AtomicU64>,
}

impl<F: Future> Future for CountPolls<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.polls.fetch_add(1, Ordering::Relaxed);
        self.inner.as_mut().poll(cx)
    }
}

/// A future that wakes itself (`waker.wake_by_ref()`) and returns `Pending` on its
/// first poll, then `Ready`: one dispatch through the runtime's wake path, the same
/// code on every runtime.
pub struct SelfWake(bool);

impl SelfWake {
    /// Not yet polled.
    pub fn new() -> SelfWake {
        SelfWake(false)
    }
}

impl Default for SelfWake {
    fn default() -> Self {
        SelfWake::new()
    }
}

impl Future for SelfWake {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// One task on worker 0 awaiting `step()` in a loop (each returns `Pending` once and is
/// re-dispatched): ns per dispatch. Checks the task was polled once per dispatch.
fn dispatch_loop<E: Exec, F: Future<Output = ()> + Send + 'static>(
    e: &E,
    budget: Duration,
    step: fn() -> F,
) -> Measure {
    let polls = Arc::new(AtomicU64::new(0));
    let t = e.spawn_on(
        0,
        CountPolls {
            polls: polls.clone(),
            inner: Box::pin(async move {
                let (mut warm, t0) = (0, Instant::now());
                while !warm_enough(warm, t0, budget) {
                    step().await;
                    warm += 1;
                }
                let sw = Stopwatch::start();
                let mut n = 0u64;
                while sw.elapsed() < budget {
                    for _ in 0..CHUNK * 16 {
                        step().await;
                    }
                    n += CHUNK * 16;
                }
                (sw.per_op(n), warm + n)
            }),
        },
    );
    let (m, dispatches) = e.block_on(t);
    let polls = polls.load(Ordering::Relaxed);
    assert!(polls > dispatches, "dispatch: {dispatches} dispatches but only {polls} polls");
    m
}

/// One task on worker 0 calling the runtime's `yield_now` in a loop: ns per dispatch
/// (enqueue + pick + poll).
pub fn local_dispatch<E: Exec>(e: &E, budget: Duration) -> f64 {
    local_dispatch_measure(e, budget).value
}

/// [`local_dispatch`] as a [`Measure`].
pub fn local_dispatch_measure<E: Exec>(e: &E, budget: Duration) -> Measure {
    dispatch_loop(e, budget, E::yield_now)
}

/// One task on worker 0 awaiting [`SelfWake`] in a loop: ns per dispatch, the same
/// future on every runtime.
pub fn self_wake_dispatch<E: Exec>(e: &E, budget: Duration) -> Measure {
    dispatch_loop(e, budget, SelfWake::new)
}

/// Tasks spawned per batch in [`spawn_throughput`].
pub const SPAWN_BATCH: usize = 1_000;

/// A task on worker 0 spawning batches of empty tasks and joining them: tasks/s.
pub fn spawn_throughput<E: Exec>(e: &E, budget: Duration) -> f64 {
    spawn_measure(e, budget).value
}

/// [`spawn_throughput`] as a [`Measure`]; checks every task ran once and returned.
pub fn spawn_measure<E: Exec>(e: &E, budget: Duration) -> Measure {
    let ran = Arc::new(AtomicU64::new(0));
    let r = ran.clone();
    let t = e.spawn_on(0, async move {
        async fn batch<E: Exec>(ran: &Arc<AtomicU64>) -> u64 {
            let handles: Vec<_> = (0..SPAWN_BATCH)
                .map(|_| {
                    let ran = ran.clone();
                    E::spawn(async move {
                        ran.fetch_add(1, Ordering::Relaxed);
                        1u64
                    })
                })
                .collect();
            join_sum(handles).await
        }
        let mut joined = batch::<E>(&r).await;
        let sw = Stopwatch::start();
        let mut n = 0u64;
        while sw.elapsed() < budget {
            joined += batch::<E>(&r).await;
            n += SPAWN_BATCH as u64;
        }
        (sw.rate(n), n + SPAWN_BATCH as u64, joined)
    });
    let (m, spawned, joined) = e.block_on(t);
    assert_eq!(joined, spawned, "spawn: every task joined with its output");
    assert_eq!(ran.load(Ordering::Relaxed), spawned, "spawn: every task ran once");
    m
}

/// Await every handle in order; the sum of their outputs.
async fn join_sum<F: Future<Output = u64>>(handles: Vec<F>) -> u64 {
    let mut sum = 0;
    for h in handles {
        sum += h.await;
    }
    sum
}

/// A receiving task: take `n` messages from `rx`; their count and payload sum.
async fn receive_n<R: ChanRx<u64>>(mut rx: R, n: usize) -> (u64, u64) {
    let (mut got, mut sum) = (0u64, 0u64);
    for _ in 0..n {
        sum = sum.wrapping_add(rx.recv().await.expect("senders alive"));
        got += 1;
    }
    (got, sum)
}

/// Await `(count, sum)` handles; the totals.
async fn join_counts<F: Future<Output = (u64, u64)>>(handles: Vec<F>) -> (u64, u64) {
    let (mut n, mut s) = (0u64, 0u64);
    for h in handles {
        let (a, b) = h.await;
        n += a;
        s = s.wrapping_add(b);
    }
    (n, s)
}

impl ChatSize {
    /// Sum of every payload the clients receive: user `u` sends `u·m + i` for `i < m`,
    /// and every other user of its room receives each.
    pub fn payload_sum(&self) -> u64 {
        let m = self.messages as u64;
        let per_sender = |u: u64| u * m * m + m * m.saturating_sub(1) / 2;
        let n = (self.rooms * self.users) as u64;
        (0..n).map(|u| per_sender(u) * (self.users as u64 - 1)).fold(0u64, u64::wrapping_add)
    }
}

impl HackSize {
    /// Sum of every payload received: sender `s` sends `s·loops + i` (`i < loops`) to
    /// each of the `fds` receivers of its group.
    pub fn payload_sum(&self) -> u64 {
        let l = self.loops as u64;
        let n = (self.groups * self.fds) as u64;
        (0..n).map(|s| (s * l * l + l * l.saturating_sub(1) / 2) * self.fds as u64).fold(0u64, u64::wrapping_add)
    }
}

/// The Chat topology (as `crates/workloads/src/chat.rs`): per user `client_send` →
/// `server_receive` → broadcast to the other users' `server_send` → `client_receive`.
/// Spawned from a root task on worker 0, downstream stages first. Returns messages/s
/// delivered to the clients, timed from the first spawn to the last delivery.
pub fn chat<E: Exec, C: Channels>(e: &E, size: ChatSize) -> f64 {
    chat_measure::<E, C>(e, size).value
}

/// [`chat`] as a [`Measure`]; checks the count and the payload sum of the deliveries.
pub fn chat_measure<E: Exec, C: Channels>(e: &E, size: ChatSize) -> Measure {
    let t = e.spawn_on(0, async move {
        let ChatSize { rooms, users, messages: m } = size;
        let n = rooms * users;
        let sw = Stopwatch::start();
        let (c2s_tx, c2s_rx): (Vec<_>, Vec<_>) = (0..n).map(|_| C::unbounded::<u64>()).unzip();
        let (queue_tx, queue_rx): (Vec<_>, Vec<_>) = (0..n).map(|_| C::unbounded::<u64>()).unzip();
        let (s2c_tx, s2c_rx): (Vec<_>, Vec<_>) = (0..n).map(|_| C::unbounded::<u64>()).unzip();
        let fanout = m * (users - 1);
        let (mut server_send, mut server_receive) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for (u, ((mut queue_rx, s2c_tx), mut c2s_rx)) in queue_rx.into_iter().zip(s2c_tx).zip(c2s_rx).enumerate() {
            server_send.push(E::spawn(async move {
                for _ in 0..fanout {
                    let x = queue_rx.recv().await.expect("server_receive alive");
                    s2c_tx.send(x);
                }
                fanout as u64
            }));
            // server_receive: broadcast to the other users of the room.
            let first = u / users * users;
            let others: Vec<_> = (first..first + users).filter(|&v| v != u).map(|v| queue_tx[v].clone()).collect();
            server_receive.push(E::spawn(async move {
                for _ in 0..m {
                    let x = c2s_rx.recv().await.expect("client_send alive");
                    for q in &others {
                        q.send(x);
                    }
                }
                m as u64
            }));
        }
        let receivers: Vec<_> = s2c_rx.into_iter().map(|rx| E::spawn(receive_n(rx, fanout))).collect();
        let senders: Vec<_> = c2s_tx
            .into_iter()
            .enumerate()
            .map(|(u, tx)| {
                E::spawn(async move {
                    for i in 0..m {
                        tx.send((u * m + i) as u64);
                    }
                    m as u64
                })
            })
            .collect();
        drop(queue_tx);
        let (delivered, sum) = join_counts(receivers).await;
        let mut measure = sw.rate(delivered);
        let sent = join_sum(senders).await;
        let forwarded = join_sum(server_send).await;
        let received = join_sum(server_receive).await;
        assert_eq!(delivered, size.deliveries(), "chat: every message delivered");
        assert_eq!(sum, size.payload_sum(), "chat: payload sum of the deliveries");
        assert_eq!((sent, received), ((n * m) as u64, (n * m) as u64), "chat: sent and server-received");
        assert_eq!(forwarded, size.deliveries(), "chat: forwarded by server_send");
        measure.crossed = None;
        measure
    });
    e.block_on(t)
}

/// The hackbench topology (as `crates/workloads/src/hackbench.rs`): every sender of a
/// group sends `loops` rounds of one message to each receiver of its group. Receivers
/// of all groups are spawned first, from a root task on worker 0. Returns messages/s
/// received, timed from the first spawn to the last receive.
pub fn hackbench<E: Exec, C: Channels>(e: &E, size: HackSize) -> f64 {
    hackbench_measure::<E, C>(e, size).value
}

/// [`hackbench`] as a [`Measure`]; checks the count and the payload sum received.
pub fn hackbench_measure<E: Exec, C: Channels>(e: &E, size: HackSize) -> Measure {
    let t = e.spawn_on(0, async move {
        let HackSize { groups, fds, loops } = size;
        let sw = Stopwatch::start();
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..groups * fds).map(|_| C::unbounded::<u64>()).unzip();
        let receivers: Vec<_> = rxs.into_iter().map(|rx| E::spawn(receive_n(rx, fds * loops))).collect();
        let senders: Vec<_> = (0..groups * fds)
            .map(|s| {
                let g = s / fds;
                let txs: Vec<_> = txs[g * fds..(g + 1) * fds].to_vec();
                E::spawn(async move {
                    for i in 0..loops {
                        for tx in &txs {
                            tx.send((s * loops + i) as u64);
                        }
                    }
                    (loops * fds) as u64
                })
            })
            .collect();
        drop(txs);
        let (got, sum) = join_counts(receivers).await;
        let measure = sw.rate(got);
        let sent = join_sum(senders).await;
        assert_eq!(got, size.messages(), "hackbench: every message received");
        assert_eq!(sent, size.messages(), "hackbench: every message sent");
        assert_eq!(sum, size.payload_sum(), "hackbench: payload sum received");
        measure
    });
    e.block_on(t)
}

/// The message of a panic payload.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panicked".into())
}

/// Run `f` and make its row: a measured one, or a failed one (with the panic message)
/// if the program's result check failed.
pub fn measured_row(
    bench: &str,
    runtime: &str,
    policy: &str,
    unit: &str,
    channel: &str,
    f: impl FnOnce() -> Measure,
) -> Row {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(m) => Row::measured(bench, runtime, policy, unit, channel, m),
        Err(p) => {
            let msg = panic_message(&*p);
            eprintln!("schedlab bench: FAILED {bench} on {runtime} {policy}: {msg}");
            Row::failed(bench, runtime, policy, unit, channel, msg)
        }
    }
}

/// Run one repetition of every async program that `filter` wants on `e` and return its
/// rows (a failed result check gives a failed row); `progress` is called with a short
/// description before each program.
pub fn suite<E: Exec>(e: &E, scale: &Scale, filter: &Filter, progress: &mut dyn FnMut(&str)) -> Vec<Row> {
    let rt = e.runtime().to_string();
    let policy = e.policy();
    let mut rows = Vec::new();
    let mut run = |bench: &str, policy: String, unit: &str, channel: &str, f: &mut dyn FnMut() -> Measure| {
        if filter.wants(bench, &rt) {
            progress(&format!("{bench} on {rt} {policy}"));
            rows.push(measured_row(bench, &rt, &policy, unit, channel, f));
        }
    };
    let b = scale.budget;
    let (cs, hs) = (scale.chat, scale.hackbench);
    let (own, ac, tm) = (E::Chan::NAME, AsyncChannel::NAME, TokioMpsc::NAME);
    let pinned = e.pinned_policy();
    let (ns_rt, rate) = (units::NS_ROUND_TRIP, units::MESSAGES_PER_S);
    run(names::PINGPONG_SAME, pinned.clone(), ns_rt, own, &mut || pingpong_placed::<E, E::Chan>(e, false, b));
    run(names::PINGPONG_CROSS, pinned.clone(), ns_rt, own, &mut || pingpong_placed::<E, E::Chan>(e, true, b));
    run(names::LOCAL_DISPATCH, policy.clone(), units::NS_DISPATCH, NO_CHANNEL, &mut || local_dispatch_measure(e, b));
    run(names::LOCAL_DISPATCH_SELF_WAKE, policy.clone(), units::NS_DISPATCH, NO_CHANNEL, &mut || {
        self_wake_dispatch(e, b)
    });
    run(names::SPAWN, policy.clone(), units::TASKS_PER_S, NO_CHANNEL, &mut || spawn_measure(e, b));
    run(names::CHAT, policy.clone(), rate, own, &mut || chat_measure::<E, E::Chan>(e, cs));
    run(names::HACKBENCH, policy.clone(), rate, own, &mut || hackbench_measure::<E, E::Chan>(e, hs));
    run(names::PINGPONG_SAME_AC, pinned.clone(), ns_rt, ac, &mut || pingpong_placed::<E, AsyncChannel>(e, false, b));
    run(names::PINGPONG_CROSS_AC, pinned.clone(), ns_rt, ac, &mut || pingpong_placed::<E, AsyncChannel>(e, true, b));
    run(names::CHAT_AC, policy.clone(), rate, ac, &mut || chat_measure::<E, AsyncChannel>(e, cs));
    run(names::HACKBENCH_AC, policy.clone(), rate, ac, &mut || hackbench_measure::<E, AsyncChannel>(e, hs));
    if own != tm {
        run(names::PINGPONG_SAME_TM, pinned.clone(), ns_rt, tm, &mut || pingpong_placed::<E, TokioMpsc>(e, false, b));
        run(names::PINGPONG_CROSS_TM, pinned.clone(), ns_rt, tm, &mut || pingpong_placed::<E, TokioMpsc>(e, true, b));
        run(names::CHAT_TM, policy.clone(), rate, tm, &mut || chat_measure::<E, TokioMpsc>(e, cs));
        run(names::HACKBENCH_TM, policy.clone(), rate, tm, &mut || hackbench_measure::<E, TokioMpsc>(e, hs));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_sums_match_a_direct_count() {
        let c = ChatSize { rooms: 2, users: 3, messages: 4 };
        let mut direct = 0u64;
        for u in 0..6u64 {
            let room = u / 3 * 3;
            for v in (room..room + 3).filter(|&v| v != u) {
                direct += (0..4).map(|i| v * 4 + i).sum::<u64>();
            }
        }
        assert_eq!(c.payload_sum(), direct);
        let h = HackSize { groups: 2, fds: 3, loops: 4 };
        let direct: u64 = (0..6u64).map(|s| (0..4).map(|i| s * 4 + i).sum::<u64>() * 3).sum();
        assert_eq!(h.payload_sum(), direct);
    }

    #[test]
    fn a_failed_check_fails_its_row_loudly() {
        let ok = measured_row("chat", "x", "p", units::MESSAGES_PER_S, "c", || Measure {
            value: 2.0,
            cpu_per_op: 1.0,
            crossed: None,
        });
        assert_eq!((ok.value, ok.cpu_per_op, ok.error.as_deref()), (2.0, Some(1.0), None));
        let bad = measured_row("chat", "x", "p", units::MESSAGES_PER_S, "c", || {
            let delivered = std::hint::black_box(1);
            assert_eq!(delivered, 3, "chat: every message delivered");
            unreachable!()
        });
        assert!(bad.error.as_deref().is_some_and(|e| e.contains("chat: every message delivered")), "{bad:?}");
        assert_eq!((bad.value, bad.reps), (0.0, 0));
    }
}
