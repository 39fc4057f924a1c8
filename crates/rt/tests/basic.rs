#![cfg(not(loom))]
mod common;
use common::{policies, rt};
use schedlab_rt::{current_worker, spawn, yield_now, Builder, TaskOpts};
use std::sync::atomic::{
    AtomicUsize,
    Ordering::{AcqRel, Acquire, Relaxed},
};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn spawn_and_join_every_policy() {
    for p in policies() {
        let rt = rt(p);
        assert_eq!(rt.workers(), 2);
        let hs: Vec<_> = (0..100u64).map(|i| rt.spawn(async move { i * 2 })).collect();
        let sum: u64 = rt.block_on(async {
            let mut s = 0;
            for h in hs {
                s += h.await.unwrap();
            }
            s
        });
        assert_eq!(sum, 9900, "{p}");
        rt.check_invariants().unwrap();
    }
}

#[test]
fn nested_spawn_and_current_worker() {
    for p in policies() {
        let rt = rt(p);
        let v = rt.block_on(async {
            assert_eq!(current_worker(), None);
            let h = spawn(async {
                let w = current_worker().expect("on a worker");
                assert!(w < 2);
                let inner = spawn(async { current_worker().is_some() });
                inner.await.unwrap()
            });
            h.await.unwrap()
        });
        assert!(v, "{p}");
    }
}

#[test]
#[should_panic(expected = "outside a runtime")]
fn free_spawn_outside_runtime_panics() {
    drop(spawn(async {}));
}

#[test]
fn panic_is_reported_and_runtime_survives() {
    for p in policies() {
        let rt = rt(p);
        let h = rt.spawn(async {
            panic!("boom in task");
        });
        let e = rt.block_on(h).unwrap_err();
        assert!(e.is_panic(), "{p}");
        assert!(e.to_string().contains("boom in task"), "{e}");
        // Panics after an await point too, and many of them.
        let hs: Vec<_> = (0..20)
            .map(|i| {
                rt.spawn(async move {
                    yield_now().await;
                    if i % 2 == 0 {
                        panic!("even {i}");
                    }
                    i
                })
            })
            .collect();
        let (ok, bad) = rt.block_on(async {
            let (mut ok, mut bad) = (0, 0);
            for h in hs {
                match h.await {
                    Ok(_) => ok += 1,
                    Err(e) if e.is_panic() => bad += 1,
                    Err(e) => panic!("unexpected {e}"),
                }
            }
            (ok, bad)
        });
        assert_eq!((ok, bad), (10, 10), "{p}");
        // Still works.
        assert_eq!(rt.block_on(rt.spawn(async { 7 })).unwrap(), 7, "{p}");
    }
}

#[test]
fn bad_policy_is_an_error_naming_it() {
    let e = Builder::new().policy("nosuch").build().unwrap_err();
    assert!(e.to_string().contains("nosuch"), "{e}");
    let e = Builder::new().workers(2).policy("pmqs:pool=3").build().unwrap_err();
    assert!(e.to_string().contains("pmqs"), "{e}");
}

#[test]
fn policy_names() {
    assert_eq!(rt("fast").policy_name(), "fast");
    assert_eq!(rt("dss").policy_name(), "dss");
    assert_eq!(rt("pmqs:pool=1,lb=lbp,period=10").policy_name(), "pmqs:pool=1,lb=lbp,period=10");
}

/// A oneshot completed from a plain OS thread wakes the task.
#[test]
fn wakers_from_other_threads() {
    for p in policies() {
        let rt = rt(p);
        let hs: Vec<_> = (0..50u32)
            .map(|i| {
                let (tx, rx) = futures::channel::oneshot::channel::<u32>();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(1 + (i % 5) as u64));
                    tx.send(i).unwrap();
                });
                rt.spawn(async move { rx.await.unwrap() + 1 })
            })
            .collect();
        let s: u32 = rt.block_on(async {
            let mut s = 0;
            for h in hs {
                s += h.await.unwrap();
            }
            s
        });
        assert_eq!(s, (1..=50).sum::<u32>(), "{p}");
    }
}

#[test]
fn channels_work_unmodified() {
    for p in policies() {
        let rt = rt(p);
        // async-channel
        let (tx, rx) = async_channel::bounded::<u32>(4);
        let prod = rt.spawn(async move {
            for i in 0..1000 {
                tx.send(i).await.unwrap();
            }
        });
        let cons = rt.spawn(async move {
            let mut s = 0u64;
            while let Ok(v) = rx.recv().await {
                s += v as u64;
            }
            s
        });
        // flume
        let (ftx, frx) = flume::bounded::<u32>(2);
        let fprod = rt.spawn(async move {
            for i in 0..1000 {
                ftx.send_async(i).await.unwrap();
            }
        });
        let fcons = rt.spawn(async move {
            let mut s = 0u64;
            while let Ok(v) = frx.recv_async().await {
                s += v as u64;
            }
            s
        });
        // futures mpsc
        let (mut mtx, mut mrx) = futures::channel::mpsc::channel::<u32>(1);
        let mprod = rt.spawn(async move {
            use futures::SinkExt;
            for i in 0..1000 {
                mtx.send(i).await.unwrap();
            }
        });
        let mcons = rt.spawn(async move {
            use futures::StreamExt;
            let mut s = 0u64;
            while let Some(v) = mrx.next().await {
                s += v as u64;
            }
            s
        });
        rt.block_on(async {
            prod.await.unwrap();
            fprod.await.unwrap();
            mprod.await.unwrap();
            assert_eq!(cons.await.unwrap(), 499_500, "{p} async-channel");
            assert_eq!(fcons.await.unwrap(), 499_500, "{p} flume");
            assert_eq!(mcons.await.unwrap(), 499_500, "{p} futures mpsc");
        });
    }
}

/// N tasks that each yield K times all make progress in rounds: when the first
/// finishes, every other task has done most of its yields.
#[test]
fn yield_now_is_fair() {
    for p in policies() {
        // HZ = 1: no timer tick lands during the test, so quantum expiry (which makes
        // 2.4-family shares time-dependent) stays out of a test about `yield_now`.
        // cfs's default yield is CFS's skip buddy: it lets the next task run, not every
        // other one, so two tasks far left of the rest take turns between themselves
        // until their vruntime (µs per poll here) passes the others' (ms apart, from
        // START_DEBIT). Round-robin yielding is its `yield=tail` (2.6.23's compat_yield).
        let p = if p == "cfs" { "cfs:yield=tail" } else { p };
        let rt = Builder::new().workers(1).policy(p).hz(1).build().unwrap();
        let counts: Arc<Vec<AtomicUsize>> = Arc::new((0..4).map(|_| AtomicUsize::new(0)).collect());
        let min_at_first_finish = Arc::new(AtomicUsize::new(usize::MAX));
        // Spawned from this thread, so all four start with the same time slice (spawned by a
        // task, 2.4's fork would split the parent's counter, and with no tick the two richest
        // children would take turns to the end: correct 2.4, not what this test is about).
        // They count only once all four have been polled: before that some still wait in
        // the queue that outside spawns land in, which a worker reads when its own queues
        // are empty or at intervals (fast: every 61 picks, as Tokio and Go do), so a task
        // already running could do a third of its yields before the others are on the
        // worker at all. After its first poll every task yields into the worker's own run
        // queue, and what is measured is `yield_now` alone.
        let started = Arc::new(AtomicUsize::new(0));
        let hs: Vec<_> = (0..4)
            .map(|i| {
                let c = counts.clone();
                let m = min_at_first_finish.clone();
                let started = started.clone();
                rt.spawn(async move {
                    started.fetch_add(1, AcqRel);
                    while started.load(Acquire) < 4 {
                        yield_now().await;
                    }
                    for _ in 0..200 {
                        c[i].fetch_add(1, Relaxed);
                        yield_now().await;
                    }
                    let min = c.iter().map(|x| x.load(Relaxed)).min().unwrap();
                    m.fetch_min(min, Relaxed);
                })
            })
            .collect();
        rt.block_on(async {
            for h in hs {
                h.await.unwrap();
            }
        });
        let m = min_at_first_finish.load(Relaxed);
        // No task may starve: with no tick, every yield must let the others run. The
        // policies that share by yields keep the counts close. cfs and eevdf share by run
        // time read from the wall clock: a host preemption while one task runs is charged
        // to it, and it waits (ineligible, or right of the others) until they have run as
        // long — hundreds of their µs-short yields — so on a shared host their count
        // fairness is not a property; it is checked in virtual time (core's cfs and eevdf
        // tests). Here they must only let every task run before the first finishes.
        let floor = if p.starts_with("cfs") || p == "eevdf" { 1 } else { 150 };
        assert!(m >= floor, "{p}: when the first task finished, the slowest had yielded only {m}/200 times");
    }
}

#[test]
fn spawn_on_and_spawn_with() {
    for p in policies() {
        let rt = rt(p);
        let hs: Vec<_> = (0..20).map(|i| rt.spawn_on(i % 2, async move { i })).collect();
        let hs2: Vec<_> = (0..20)
            .map(|i| {
                rt.spawn_with(
                    TaskOpts { nice: (i as i32 % 40 - 20) as i8, worker: None, pinned: false, ..TaskOpts::default() },
                    async move { i },
                )
            })
            .collect();
        let s: usize = rt.block_on(async {
            let mut s = 0;
            for h in hs.into_iter().chain(hs2) {
                s += h.await.unwrap();
            }
            s
        });
        assert_eq!(s, 2 * 190, "{p}");
    }
}

#[test]
fn shutdown_cancels_pending_tasks() {
    for p in policies() {
        let rt = rt(p);
        let (_tx, rx) = futures::channel::oneshot::channel::<()>();
        let h = rt.spawn(async move {
            let _ = rx.await;
        });
        std::thread::sleep(Duration::from_millis(5));
        rt.shutdown();
        let r = futures::executor::block_on(h);
        assert!(r.unwrap_err().is_cancelled(), "{p}");
    }
}

#[test]
fn many_runtimes_start_and_stop() {
    for i in 0..20 {
        let rt = rt(policies()[i % policies().len()]);
        assert_eq!(rt.block_on(rt.spawn(async { 1 })).unwrap(), 1);
    }
}

#[test]
fn small_task_table_overflows_gracefully() {
    let rt = Builder::new().workers(2).policy("mqs").max_tasks(4).build().unwrap();
    let hs: Vec<_> = (0..100u32).map(|i| rt.spawn(async move { i })).collect();
    let s: u32 = rt.block_on(async {
        let mut s = 0;
        for h in hs {
            s += h.await.unwrap();
        }
        s
    });
    assert_eq!(s, 4950);
}
