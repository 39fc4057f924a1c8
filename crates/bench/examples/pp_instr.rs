//! Instruction counting aid for the same-worker ping-pong: a fixed number of round
//! trips (no clock in the loop, so callgrind's counts are deterministic), e.g.
//! `valgrind --tool=callgrind target/release/examples/pp_instr fast 100000`.
//! Running it at two counts and dividing the difference by the extra round trips
//! gives instructions per round trip with start-up and shutdown cancelled out.
//! Arguments: runtime (`tokio` = a `current_thread` runtime with `tokio::sync::mpsc`,
//! or a schedlab policy such as `fast`/`dss` with `schedlab_rt::channel`, two workers,
//! both tasks pinned to worker 0), round trips.

use schedlab_bench::schedlab_exec::{RtChannel, SchedlabExec};
use schedlab_bench::{ChanRx, ChanTx, Channels, Exec, TokioMpsc};
use std::future::Future;

/// Ping sends `n` numbers to pong and waits for each to come back incremented.
fn pingpong<C: Channels>(n: u64) -> (impl Future<Output = u64> + Send, impl Future<Output = u64> + Send) {
    let (to_pong, mut pong_rx) = C::unbounded::<u64>();
    let (to_ping, mut ping_rx) = C::unbounded::<u64>();
    let pong = async move {
        let mut seen = 0;
        while let Some(m) = pong_rx.recv().await {
            seen += 1;
            to_ping.send(m + 1);
        }
        seen
    };
    let ping = async move {
        let mut x = 0;
        for _ in 0..n {
            to_pong.send(x);
            x = ping_rx.recv().await.expect("pong alive");
        }
        x
    };
    (ping, pong)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map_or("fast", |s| s.as_str()).to_string();
    let n: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let t0 = std::time::Instant::now();
    let (got, seen) = if which == "tokio" {
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("tokio current_thread");
        rt.block_on(async move {
            let (ping, pong) = pingpong::<TokioMpsc>(n);
            let pong = tokio::spawn(pong);
            let got = tokio::spawn(ping).await.expect("ping");
            (got, pong.await.expect("pong"))
        })
    } else {
        let e = SchedlabExec::new(2, &which).expect("runtime");
        let (ping, pong) = pingpong::<RtChannel>(n);
        let pong = e.spawn_pinned(0, pong);
        let ping = e.spawn_pinned(0, ping);
        let r = e.block_on(async move { (ping.await, pong.await) });
        e.shutdown();
        r
    };
    assert_eq!((got, seen), (n, n), "every message came back");
    // Wall time includes start-up; use large counts when reading it.
    let ns = t0.elapsed().as_nanos() as f64 / n as f64;
    println!("{which}: {n} round trips, {ns:.1} ns each (wall, start-up included)");
}
