//! Preemption points: a policy scheduler switches out a task that offers them when its
//! time slice ends, so two CPU-bound tasks on one worker interleave; without them (or
//! under `fast`) the first runs to completion.
#![cfg(not(loom))]
use schedlab_rt::{preemption_point, should_yield, Builder, TaskOpts};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Spin for `d` with a preemption point every ~10 µs (if `offer`); records its start
/// in `started` and returns its end, in µs since `t0`.
async fn hog(d: Duration, started: Arc<AtomicU64>, t0: Instant, offer: bool) -> u64 {
    started.store(t0.elapsed().as_micros() as u64 + 1, SeqCst);
    let end = Instant::now() + d;
    while Instant::now() < end {
        let step = Instant::now() + Duration::from_micros(10);
        while Instant::now() < step {
            std::hint::spin_loop();
        }
        if offer {
            preemption_point().await;
        }
    }
    t0.elapsed().as_micros() as u64
}

/// Whether the two tasks overlapped in time (each started before the other ended),
/// with the (start, end) of each in µs since the spawn; one worker.
fn race(policy: &str, offer: bool) -> (bool, String) {
    let rt = Builder::new().workers(1).policy(policy).hz(1000).build().unwrap();
    let t0 = Instant::now();
    let (sa, sb) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    // nice 19: the shortest 2.4 quantum (10 ms at any HZ), so the test stays short.
    let opts = TaskOpts { nice: 19, worker: Some(0), pinned: false, ..TaskOpts::default() };
    let a = rt.spawn_with(opts, hog(Duration::from_millis(60), sa.clone(), t0, offer));
    let sa_ = sa;
    // B only once A runs: spawned while both wait, B (queued last, at the list's head)
    // would run first and end within its quantum, overlapping nothing. That happened
    // on a busy host, where the worker thread started late.
    while sa_.load(SeqCst) == 0 {
        std::thread::yield_now();
    }
    let b = rt.spawn_with(opts, hog(Duration::from_millis(5), sb.clone(), t0, offer));
    let a_end = rt.block_on(a).unwrap();
    let b_end = rt.block_on(b).unwrap();
    let (a_start, b_start) = (sa_.load(SeqCst), sb.load(SeqCst));
    let overlap = a_start.max(b_start) < a_end.min(b_end);
    (overlap, format!("A {a_start}..{a_end} µs, B {b_start}..{b_end} µs"))
}

#[test]
fn dss_switches_out_a_task_at_its_preemption_points() {
    let (overlap, what) = race("dss", true);
    assert!(overlap, "no preemption: {what}");
}

#[test]
fn without_preemption_points_the_first_task_runs_to_completion() {
    let (overlap, what) = race("dss", false);
    assert!(!overlap, "a task was switched out without a preemption point: {what}");
}

#[test]
fn fast_and_non_worker_threads_never_yield() {
    assert!(!should_yield(), "outside a runtime");
    let (overlap, what) = race("fast", true);
    assert!(!overlap, "fast has no time slice: {what}");
}

/// The workers' counters once they have stopped. `block_on` returns as soon as the
/// task's result is in, which is inside its last poll: the worker charges that poll's
/// ticks (and steal) only after the poll returns, so `rt.stats()` read at once can miss
/// them (it did in CI under load: 0 ticks for 31 ms of computing).
fn final_stats(rt: schedlab_rt::Runtime) -> schedlab_rt::Stats {
    rt.shutdown_traced().0
}

/// A worker that did not run for 30 periods (here a poll that blocks its thread, as
/// when the host takes the worker's CPU) takes one tick for all of them, not 30 in a
/// row charged to the task it resumes with.
#[test]
fn a_stalled_worker_takes_one_tick_for_the_periods_it_missed() {
    let rt = Builder::new().workers(1).policy("dss").hz(1000).build().unwrap();
    let h = rt.spawn(async {
        std::thread::sleep(Duration::from_millis(30));
    });
    rt.block_on(h).unwrap();
    let s = final_stats(rt);
    assert!(s.skipped_ticks >= 25, "the stall's periods were delivered as ticks: {s:?}");
    assert!(s.ticks < s.skipped_ticks, "{s:?}");
}

/// This thread's time on a CPU in ns (`/proc/thread-self/schedstat`, first field).
fn thread_cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    s.split_whitespace().next().and_then(|x| x.parse().ok()).expect("schedstat field")
}

/// The other side: a poll that computes through 30 periods without yielding is charged
/// the periods its thread was on a CPU, as the kernel's timer interrupt would have
/// charged them.
#[test]
fn a_poll_that_computes_through_its_ticks_is_charged_them() {
    let rt = Builder::new().workers(1).policy("dss").hz(1000).build().unwrap();
    let h = rt.spawn(async {
        let cpu0 = thread_cpu_ns();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        // 30 ms on a CPU (however long the host makes that take, up to 3 s).
        while thread_cpu_ns() - cpu0 < 30_000_000 && t.elapsed() < Duration::from_secs(3) {
            for _ in 0..1000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        thread_cpu_ns() - cpu0
    });
    let on_cpu_ns = rt.block_on(h).unwrap();
    let s = final_stats(rt);
    // One tick per millisecond on a CPU, give or take the rounding at either end.
    let periods = on_cpu_ns / 1_000_000;
    assert!(periods >= 5, "the poll hardly ran ({on_cpu_ns} ns on a CPU): host too busy");
    assert!(s.ticks + 2 >= periods, "{periods} ms computing in one poll, {s:?}");
}

/// This thread's time waiting for a CPU while runnable, in ns (`run_delay`, the second
/// field of `/proc/thread-self/schedstat`): what the host stole from it.
fn thread_run_delay_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    s.split_whitespace().nth(1).and_then(|x| x.parse().ok()).expect("schedstat field")
}

/// Steal time: a poll whose worker thread shares its CPU with a spinning thread of the
/// host is kept off the CPU about half the time. The runtime counts that time as steal
/// (left out of the task clock that charges the running task, `Platform::task_clock`),
/// as the kernel measures it (`run_delay`), and not the time the worker computed.
#[test]
fn time_the_host_keeps_a_worker_off_its_cpu_is_counted_as_steal() {
    use std::sync::atomic::AtomicBool;
    let rt = Builder::new().workers(1).policy("cfs").hz(1000).build().unwrap();
    // The worker's CPU, then a host thread spinning on it while the poll computes.
    let cpu = rt.block_on(rt.spawn(async { unsafe { libc::sched_getcpu() } })).unwrap();
    assert!(cpu >= 0, "sched_getcpu failed");
    let stop = Arc::new(AtomicBool::new(false));
    let hog = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            core_affinity::set_for_current(core_affinity::CoreId { id: cpu as usize });
            while !stop.load(SeqCst) {
                std::hint::spin_loop();
            }
        })
    };
    let h = rt.spawn(async {
        let (cpu0, delay0) = (thread_cpu_ns(), thread_run_delay_ns());
        let t = Instant::now();
        let mut x = 0u64;
        // 40 ms on a CPU (up to 3 s of wall time).
        while thread_cpu_ns() - cpu0 < 40_000_000 && t.elapsed() < Duration::from_secs(3) {
            for _ in 0..1000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        (thread_run_delay_ns() - delay0, thread_cpu_ns() - cpu0)
    });
    let (delayed, ran) = rt.block_on(h).unwrap();
    stop.store(true, SeqCst);
    hog.join().unwrap();
    let stolen = final_stats(rt).stolen_ns;
    assert!(delayed >= 10_000_000, "the spinning thread took little of the worker's CPU: {delayed} ns waited");
    // The worker's steal, taken at its ticks, is the kernel's run_delay of the poll,
    // give or take the tick periods at either end; never its 40 ms of computing.
    let slack = delayed / 4 + 3_000_000;
    assert!(
        stolen + slack >= delayed && stolen <= delayed + slack,
        "steal {stolen} ns, kernel run_delay {delayed} ns, on a CPU {ran} ns"
    );
}
