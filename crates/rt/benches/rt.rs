//! Ping-pong: two tasks bouncing a token over two async-channel channels; reports
//! time per round trip for schedlab-rt ("fast" and the policy schedulers) and Tokio's
//! multi-threaded scheduler, both with 2 workers. Also a spawn/join burst.
//!
//! `cargo bench -p schedlab-rt --bench rt`
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::{Duration, Instant};

const ROUNDS: u64 = 10_000;

async fn pingpong(rounds: u64, spawn: impl Fn(std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>)) {
    let (atx, arx) = async_channel::bounded::<u64>(1);
    let (btx, brx) = async_channel::bounded::<u64>(1);
    let (done_tx, done_rx) = async_channel::bounded::<()>(1);
    spawn(Box::pin(async move {
        while let Ok(v) = arx.recv().await {
            if btx.send(v + 1).await.is_err() {
                break;
            }
        }
    }));
    spawn(Box::pin(async move {
        for i in 0..rounds {
            atx.send(i).await.unwrap();
            brx.recv().await.unwrap();
        }
        done_tx.send(()).await.unwrap();
    }));
    done_rx.recv().await.unwrap();
}

fn bench_pingpong(c: &mut Criterion) {
    let mut g = c.benchmark_group("pingpong");
    g.throughput(Throughput::Elements(ROUNDS));
    g.sample_size(20).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    for policy in ["fast", "dss", "mqs", "pmqs:pool=1,lb=lbp,period=10"] {
        let rt = schedlab_rt::Builder::new().workers(2).policy(policy).build().unwrap();
        g.bench_function(BenchmarkId::new("schedlab-rt", policy), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    rt.block_on(pingpong(ROUNDS, |f| drop(rt.spawn(f))));
                }
                t.elapsed()
            })
        });
    }
    let tk = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    g.bench_function(BenchmarkId::new("tokio", "multi_thread"), |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                tk.block_on(pingpong(ROUNDS, |f| drop(tk.spawn(f))));
            }
            t.elapsed()
        })
    });
    g.finish();
}

fn bench_spawn(c: &mut Criterion) {
    const N: u64 = 10_000;
    let mut g = c.benchmark_group("spawn_join");
    g.throughput(Throughput::Elements(N));
    g.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    let rt = schedlab_rt::Builder::new().workers(2).build().unwrap();
    g.bench_function("schedlab-rt/fast", |b| {
        b.iter(|| {
            rt.block_on(async {
                let hs: Vec<_> = (0..N).map(|i| schedlab_rt::spawn(async move { i })).collect();
                for h in hs {
                    h.await.unwrap();
                }
            })
        })
    });
    let tk = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    g.bench_function("tokio/multi_thread", |b| {
        b.iter(|| {
            tk.block_on(async {
                let hs: Vec<_> = (0..N).map(|i| tokio::spawn(async move { i })).collect();
                for h in hs {
                    h.await.unwrap();
                }
            })
        })
    });
    g.finish();
}

criterion_group!(benches, bench_pingpong, bench_spawn);
criterion_main!(benches);
