//! How `fast` serves wakes that cross workers: a task woken from outside runs at the
//! first pick of any worker, and a task handed to a spinning worker is seen there
//! without a park. Their own test binary: they hog both CPUs and read wall-clock
//! latencies, which other tests running beside them would distort.

mod common;

use common::rt;
use schedlab_rt::time::timeout;
use schedlab_rt::{channel, yield_now};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One test at a time: each keeps both CPUs busy.
static SERIAL: Mutex<()> = Mutex::new(());

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)]
}

/// Under `fast`, a task woken from outside the workers runs at the next pick of
/// whichever worker picks first. Worker 0 is inside one poll for the whole test and
/// worker 1 among yielders of 100 µs: every wake must run on worker 1. (A runnext queue
/// per worker, filled round robin, would leave every other wake behind worker 0's
/// poll, and the probe would not finish.)
#[test]
fn fast_outside_wake_is_taken_by_the_first_worker_to_pick() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let rt = rt("fast");
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (stop0, started0) = (stop.clone(), started.clone());
    let mut hogs = vec![rt.spawn_pinned(0, async move {
        started0.store(true, Relaxed);
        while !stop0.load(Relaxed) {
            std::hint::spin_loop();
        }
    })];
    hogs.extend((0..4).map(|_| {
        let stop = stop.clone();
        rt.spawn_pinned(1, async move {
            while !stop.load(Relaxed) {
                let t = Instant::now();
                while t.elapsed() < Duration::from_micros(100) {
                    std::hint::spin_loop();
                }
                yield_now().await;
            }
        })
    }));
    let (tx, rx) = channel::unbounded::<Instant>();
    let ready = Arc::new(AtomicBool::new(false));
    let ready1 = ready.clone();
    let probe = rt.spawn_on(1, async move {
        ready1.store(true, Relaxed);
        let mut rx = rx;
        let (mut lat, mut on_1) = (Vec::new(), 0usize);
        while let Some(sent) = rx.recv().await {
            lat.push(sent.elapsed().as_secs_f64() * 1e3);
            on_1 += usize::from(schedlab_rt::current_worker() == Some(1));
        }
        (lat, on_1)
    });
    while !started.load(Relaxed) || !ready.load(Relaxed) {
        std::thread::sleep(Duration::from_millis(1));
    }
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(2));
        tx.send(Instant::now()).unwrap();
    }
    drop(tx);
    let done = rt.block_on(timeout(Duration::from_secs(20), probe));
    stop.store(true, Relaxed);
    for h in hogs {
        rt.block_on(h).unwrap();
    }
    let (mut lat, on_1) = done.expect("the probe finished while worker 0 was inside its poll").unwrap();
    lat.sort_by(f64::total_cmp);
    println!(
        "fast: outside wake, worker 0 in one long poll, worker 1 among 100 µs yielders: {on_1} of 20 on worker 1, p50 {:.3} ms, max {:.3} ms",
        quantile(&lat, 0.5),
        lat[lat.len() - 1]
    );
    assert_eq!((lat.len(), on_1), (20, 20));
}

/// A cross-worker ping-pong (two tasks pinned to workers 0 and 1): each worker spins
/// while its partner runs, and a spinning round sees the task handed to it, so the
/// workers park only when the host keeps the partner off its CPU for longer than the
/// spin (50 µs).
#[test]
fn fast_cross_worker_hand_off_reaches_a_spinning_worker() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let rt = rt("fast");
    let (atx, mut arx) = channel::unbounded::<u64>();
    let (btx, mut brx) = channel::unbounded::<u64>();
    let pong = rt.spawn_pinned(1, async move {
        while let Some(x) = arx.recv().await {
            btx.send(x).unwrap();
        }
    });
    let n = 20_000u64;
    let ping = rt.spawn_pinned(0, async move {
        for i in 0..n {
            atx.send(i).unwrap();
            assert_eq!(brx.recv().await, Some(i));
        }
    });
    let before = rt.stats();
    rt.block_on(ping).unwrap();
    let after = rt.stats();
    rt.block_on(pong).unwrap();
    let parks = after.parks - before.parks;
    println!("fast: cross-worker ping-pong, {n} round trips, {parks} parks");
    assert!(parks < n / 20, "{parks} parks in {n} round trips");
}
