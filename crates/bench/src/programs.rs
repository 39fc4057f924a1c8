//! The async benchmark programs, written once over [`Exec`].
//!
//! Time-bounded micro-benchmarks (ping-pong, local dispatch, spawn) warm up, then run
//! in chunks until [`Scale::budget`] has elapsed, timed inside the task. Chat and
//! hackbench run a fixed size [`Scale::reps`] times; the median is reported.
//!
//! The message programs are generic over a [`Channels`] family (unbounded MPSC, the
//! simulator's channel semantics). [`suite`] runs them twice: with the runtime's own
//! channel ([`Exec::Chan`]: `schedlab_rt::channel`, `tokio::sync::mpsc`; the Go peer
//! uses Go channels), which is what a user of each runtime would write, and with
//! `async-channel` on every Rust runtime (bench names ending in
//! `/async-channel`), the same channel code everywhere.

use crate::exec::{AsyncChannel, ChanRx, ChanTx, Channels, Exec};
use crate::{median_of, names, units, ChatSize, Filter, HackSize, Row, Scale};
use std::time::{Duration, Instant};

/// Checks of the clock: every this many iterations.
const CHUNK: u64 = 64;
/// Warm-up iterations before a time-bounded measurement.
const WARMUP: u64 = 2_000;

/// Ping-pong between two tasks through two channels of family `C` (at most one message
/// is ever in flight per channel, so unbounded ones behave as bounded(1)): ns per round
/// trip. `cross = false`: both tasks on worker 0; `true`: worker 0 ↔ worker 1 (placed
/// with [`Exec::spawn_on`], which pins where the runtime can).
pub fn pingpong<E: Exec, C: Channels>(e: &E, cross: bool, budget: Duration) -> f64 {
    pingpong_placed::<E, C>(e, cross, budget).0
}

/// [`pingpong`], and the fraction of timed round trips whose two sides ran on
/// different workers ([`Exec::current_worker`] recorded by each side on every round
/// trip; `None` if the runtime cannot tell).
pub fn pingpong_placed<E: Exec, C: Channels>(e: &E, cross: bool, budget: Duration) -> (f64, Option<f64>) {
    // A message carries the count in its high bits and the sender's worker (+1, 0 =
    // unknown) in its low byte.
    const W: u64 = 256;
    let tag = || E::current_worker().map_or(0, |w| w as u64 % (W - 1) + 1);
    let (to_pong, mut pong_rx) = C::unbounded::<u64>();
    let (to_ping, mut ping_rx) = C::unbounded::<u64>();
    let pong = e.spawn_pinned(usize::from(cross), async move {
        while let Some(m) = pong_rx.recv().await {
            to_ping.send((m / W + 1) * W + tag());
        }
    });
    let ping = e.spawn_pinned(0, async move {
        let mut x = 0;
        for _ in 0..WARMUP {
            to_pong.send(x * W);
            x = ping_rx.recv().await.expect("pong alive") / W;
        }
        let start = Instant::now();
        let (mut n, mut crossed, mut known) = (0u64, 0u64, true);
        while start.elapsed() < budget {
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
        let ns = start.elapsed().as_nanos() as f64 / n as f64;
        assert_eq!(x, WARMUP + n, "every message came back");
        (ns, known.then(|| crossed as f64 / n as f64))
    });
    e.block_on(async move {
        let r = ping.await;
        pong.await;
        r
    })
}

/// One task on worker 0 calling the runtime's `yield_now` in a loop: ns per dispatch
/// (enqueue + pick + poll).
pub fn local_dispatch<E: Exec>(e: &E, budget: Duration) -> f64 {
    let t = e.spawn_on(0, async move {
        for _ in 0..WARMUP {
            E::yield_now().await;
        }
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < budget {
            for _ in 0..CHUNK * 16 {
                E::yield_now().await;
            }
            n += CHUNK * 16;
        }
        start.elapsed().as_nanos() as f64 / n as f64
    });
    e.block_on(t)
}

/// Tasks spawned per batch in [`spawn_throughput`].
pub const SPAWN_BATCH: usize = 1_000;

/// A task on worker 0 spawning batches of empty tasks and joining them: tasks/s.
pub fn spawn_throughput<E: Exec>(e: &E, budget: Duration) -> f64 {
    let t = e.spawn_on(0, async move {
        async fn batch<E: Exec>() {
            let handles: Vec<_> = (0..SPAWN_BATCH).map(|_| E::spawn(async {})).collect();
            for h in handles {
                h.await;
            }
        }
        batch::<E>().await;
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < budget {
            batch::<E>().await;
            n += SPAWN_BATCH as u64;
        }
        n as f64 / start.elapsed().as_secs_f64()
    });
    e.block_on(t)
}

/// Await every handle in order; the sum of their outputs.
async fn join_sum<F: std::future::Future<Output = u64>>(handles: Vec<F>) -> u64 {
    let mut sum = 0;
    for h in handles {
        sum += h.await;
    }
    sum
}

/// A receiving task: take `n` messages from `rx` and return how many arrived.
async fn receive_n<R: ChanRx<u64>>(mut rx: R, n: usize) -> u64 {
    let mut got = 0u64;
    for _ in 0..n {
        rx.recv().await.expect("senders alive");
        got += 1;
    }
    got
}

/// The Chat topology (as `crates/workloads/src/chat.rs`): per user `client_send` →
/// `server_receive` → broadcast to the other users' `server_send` → `client_receive`.
/// Spawned from a root task on worker 0, downstream stages first. Returns messages/s
/// delivered to the clients, timed from the first spawn to the last delivery.
pub fn chat<E: Exec, C: Channels>(e: &E, size: ChatSize) -> f64 {
    let t = e.spawn_on(0, async move {
        let ChatSize { rooms, users, messages: m } = size;
        let n = rooms * users;
        let start = Instant::now();
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
                0u64
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
                0u64
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
                    0u64
                })
            })
            .collect();
        drop(queue_tx);
        let delivered = join_sum(receivers).await;
        let secs = start.elapsed().as_secs_f64();
        join_sum(senders).await;
        join_sum(server_send).await;
        join_sum(server_receive).await;
        assert_eq!(delivered, size.deliveries(), "every message delivered");
        delivered as f64 / secs
    });
    e.block_on(t)
}

/// The hackbench topology (as `crates/workloads/src/hackbench.rs`): every sender of a
/// group sends `loops` rounds of one message to each receiver of its group. Receivers
/// of all groups are spawned first, from a root task on worker 0. Returns messages/s
/// received, timed from the first spawn to the last receive.
pub fn hackbench<E: Exec, C: Channels>(e: &E, size: HackSize) -> f64 {
    let t = e.spawn_on(0, async move {
        let HackSize { groups, fds, loops } = size;
        let start = Instant::now();
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..groups * fds).map(|_| C::unbounded::<u64>()).unzip();
        let receivers: Vec<_> = rxs.into_iter().map(|rx| E::spawn(receive_n(rx, fds * loops))).collect();
        let senders: Vec<_> = (0..groups * fds)
            .map(|s| {
                let g = s / fds;
                let txs: Vec<_> = txs[g * fds..(g + 1) * fds].to_vec();
                E::spawn(async move {
                    for i in 0..loops {
                        for tx in &txs {
                            tx.send(i as u64);
                        }
                    }
                    0u64
                })
            })
            .collect();
        drop(txs);
        let got = join_sum(receivers).await;
        let secs = start.elapsed().as_secs_f64();
        join_sum(senders).await;
        assert_eq!(got, size.messages(), "every message received");
        got as f64 / secs
    });
    e.block_on(t)
}

/// Run every async program that `filter` wants on `e` and return its rows; `progress`
/// is called with a short description before each program.
pub fn suite<E: Exec>(e: &E, scale: &Scale, filter: &Filter, progress: &mut dyn FnMut(&str)) -> Vec<Row> {
    let rt = e.runtime().to_string();
    let policy = e.policy();
    let mut rows = Vec::new();
    let mut run = |bench: &str, policy: String, unit: &str, f: &mut dyn FnMut() -> (f64, Option<f64>)| {
        if filter.wants(bench, &rt) {
            progress(&format!("{bench} on {rt} {policy}"));
            let (value, crossed) = f();
            rows.push(Row { crossed, ..Row::new(bench, &rt, &policy, value, unit) });
        }
    };
    let b = scale.budget;
    let reps = scale.reps;
    let (cs, hs) = (scale.chat, scale.hackbench);
    run(names::PINGPONG_SAME, e.pinned_policy(), units::NS_ROUND_TRIP, &mut || {
        pingpong_placed::<E, E::Chan>(e, false, b)
    });
    run(names::PINGPONG_CROSS, e.pinned_policy(), units::NS_ROUND_TRIP, &mut || {
        pingpong_placed::<E, E::Chan>(e, true, b)
    });
    run(names::LOCAL_DISPATCH, policy.clone(), units::NS_DISPATCH, &mut || (local_dispatch(e, b), None));
    run(names::SPAWN, policy.clone(), units::TASKS_PER_S, &mut || (spawn_throughput(e, b), None));
    run(names::CHAT, policy.clone(), units::MESSAGES_PER_S, &mut || {
        (median_of(reps, || chat::<E, E::Chan>(e, cs)), None)
    });
    run(names::HACKBENCH, policy.clone(), units::MESSAGES_PER_S, &mut || {
        (median_of(reps, || hackbench::<E, E::Chan>(e, hs)), None)
    });
    let pp = |cross| move || pingpong_placed::<E, AsyncChannel>(e, cross, b);
    run(names::PINGPONG_SAME_AC, e.pinned_policy(), units::NS_ROUND_TRIP, &mut pp(false));
    run(names::PINGPONG_CROSS_AC, e.pinned_policy(), units::NS_ROUND_TRIP, &mut pp(true));
    run(names::CHAT_AC, policy.clone(), units::MESSAGES_PER_S, &mut || {
        (median_of(reps, || chat::<E, AsyncChannel>(e, cs)), None)
    });
    run(names::HACKBENCH_AC, policy.clone(), units::MESSAGES_PER_S, &mut || {
        (median_of(reps, || hackbench::<E, AsyncChannel>(e, hs)), None)
    });
    rows
}
