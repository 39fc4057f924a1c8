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
