//! An idle policy worker waits for `need_resched`, as 2.4's idle loop does: it calls
//! `schedule()` (and takes the policy's run-queue lock) only when asked, not every few
//! µs of its spin or after every timer-bounded park.

use std::time::Duration;

/// Workers with nothing to run for 40 ms (40 ticks at HZ = 1000): one `schedule()` each
/// when they start, then none. (The spinning idle loop this replaced called it every
/// 2,048 `pause`s of its 50 µs spin and after each park: dozens per worker here.)
#[test]
fn idle_workers_do_not_call_schedule_on_their_own() {
    for policy in ["dss", "mqs", "pmqs:pool=1,lb=lbp,period=10", "o1", "cfs", "eevdf"] {
        let rt = schedlab_rt::Builder::new().workers(2).hz(1000).policy(policy).build().unwrap();
        // One task, so that both workers have started and been idle since.
        rt.block_on(rt.spawn(async {})).unwrap();
        let before = rt.stats().schedule_calls;
        std::thread::sleep(Duration::from_millis(40));
        let idle = rt.stats().schedule_calls - before;
        // A balancer's tick may `resched` an idle CPU now and then (none of these does
        // with no task); allow a few, far from the dozens of a polling idle loop.
        assert!(idle <= 4, "{policy}: {idle} schedule() calls by idle workers in 40 ms");
        // Work still reaches idle (parked) workers: their wake-up is a resched.
        let sum: u64 = rt.block_on(async {
            let hs: Vec<_> = (0..8u64).map(|i| rt.spawn(async move { i })).collect();
            let mut s = 0;
            for h in hs {
                s += h.await.unwrap();
            }
            s
        });
        assert_eq!(sum, 28, "{policy}");
        rt.shutdown();
    }
}

/// A future that wakes itself once and is then ready: a dispatch through the back of the
/// worker's queue, as `yield_now`.
struct SelfWake(bool);

impl std::future::Future for SelfWake {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            return std::task::Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// Under `fast`, a task woken during its own poll wakes an idle worker only if other
/// work waits beside it: a lone self-waking task keeps its worker, and the idle worker
/// stays asleep (each wake-up would let it steal the task and move it to its core);
/// two such tasks on one worker wake the other, which takes one of them.
#[test]
fn fast_wakes_an_idle_worker_for_a_self_woken_task_only_when_more_work_waits() {
    let rt = schedlab_rt::Builder::new().workers(2).policy("fast").build().unwrap();
    let lone = rt.spawn_on(0, async {
        // Long enough for the other worker to give up spinning and park.
        let t0 = std::time::Instant::now();
        while t0.elapsed() < Duration::from_millis(20) {
            SelfWake(false).await;
        }
        let mut last = schedlab_rt::current_worker();
        let mut moves = 0;
        for _ in 0..200_000 {
            SelfWake(false).await;
            let now = schedlab_rt::current_worker();
            moves += u32::from(now != last);
            last = now;
        }
        moves
    });
    // Woken for every self-wake, the idle worker steals the task every few tens of µs
    // (hundreds of moves here); left asleep, it moves none. A worker still spinning
    // when the count starts (its thread held off its CPU by a loaded host) may take it
    // once, and the one it left may take it back while it spins: a few moves at most.
    let moves = rt.block_on(lone).unwrap();
    assert!(moves < 20, "a lone self-waking task moved between the workers {moves} times");

    // Two self-waking tasks on one worker: the second waits while the first runs, so the
    // idle worker is woken and runs its share.
    let pair: Vec<_> = (0..2)
        .map(|_| {
            rt.spawn_on(0, async {
                let mut on = [0u32; 2];
                for _ in 0..200_000 {
                    SelfWake(false).await;
                    on[schedlab_rt::current_worker().unwrap_or(0) % 2] += 1;
                }
                on
            })
        })
        .collect();
    let on = rt.block_on(async move {
        let mut on = [0u32; 2];
        for h in pair {
            let o = h.await.unwrap();
            on[0] += o[0];
            on[1] += o[1];
        }
        on
    });
    assert!(on[0] > 0 && on[1] > 0, "both workers ran the two tasks: {on:?}");
    rt.shutdown();
}
