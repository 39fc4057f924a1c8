//! Probe: what `fair`'s, MQS's and DSS's scheduler calls cost on this machine, timed on
//! the free platform, against what the calibrated host machine charges for the same
//! calls (each `Work` the call reports, counted, times the host's price for it).
//! `target/release/examples/fairops`

use schedlab_core::policies::{cfs, dss, mqs};
use schedlab_core::{BuildEnv, Configured, Policy, PolicySource, PrevState, TaskParams, Topology, Work};
use schedlab_validate::counting::Counting;

const NAMES: [&str; Work::COUNT] =
    ["ScheduleEntry", "WakeupEntry", "Goodness", "ListOp", "Recalc", "Tick", "Examine", "TreeOp"];

/// The median over batches of 100 calls of the mean time per call (calibrate.rs's method).
fn time_per<F: FnMut()>(n: u64, mut f: F) -> f64 {
    let mut v: Vec<f64> = (0..n / 100)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..100 {
                f();
            }
            t.elapsed().as_nanos() as f64 / 100.0
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let cal = schedlab_validate::calibrate(2, true).expect("calibrate");
    let m = cal.machine();
    let c = &m.costs;
    let price = [
        c.kernel.schedule_entry_cycles,
        c.kernel.wakeup_entry_cycles,
        c.kernel.goodness_cycles,
        c.kernel.list_op_cycles,
        c.kernel.recalc_cycles,
        c.kernel.tick_cycles,
        c.kernel.examine_cycles,
        c.kernel.tree_op_cycles,
    ];
    println!("host prices (ns): {:?}", NAMES.iter().zip(price).collect::<Vec<_>>());
    let reps = 200_000u64;
    for pol in ["dss", "mqs", "cfs"] {
        for cpus in [1usize, 2] {
            for k in [1u32, 2, 8, 64] {
                let build = |p: &Counting| -> Box<dyn Policy<Counting>> {
                    let env = BuildEnv { topo: &Topology::smp(cpus), capacity: k as usize + 1, hz: 1000 };
                    match pol {
                        "dss" => Configured::<dss::Kind>(Default::default()).build(p, &env).unwrap(),
                        "mqs" => Configured::<mqs::Kind>(Default::default()).build(p, &env).unwrap(),
                        _ => Configured::<cfs::Kind>(Default::default()).build(p, &env).unwrap(),
                    }
                };
                let mk = || Counting::new(0);
                let report = |what: &str, p: &Counting, ns: f64, calls: u64| {
                    let per = p.per_call(calls);
                    let counts = per.work;
                    let charged: f64 = counts.iter().zip(price).map(|(n, pr)| n * pr as f64).sum();
                    let lk = per.locks;
                    let lines = per.lines;
                    let total = charged + lk * c.hw.lock_cycles as f64 + lines * c.hw.l2_hit_cycles as f64;
                    let per: Vec<String> = NAMES
                        .iter()
                        .zip(&counts)
                        .filter(|(_, &n)| n > 0.0)
                        .map(|(nm, n)| format!("{nm} {n:.2}"))
                        .collect();
                    println!(
                        "{pol:<5} cpus={cpus} k={k:<3} {what:<10} measured {ns:7.1} ns  charged {total:6.1} = work {charged:6.1} + locks {lk:.1}x{} + lines {lines:.1}x{}  [{}]",
                        c.hw.lock_cycles,
                        c.hw.l2_hit_cycles,
                        per.join(", ")
                    );
                };
                // (a) schedule(prev runnable) with k runnable tasks, the clock moving on.
                let p = mk();
                let s = build(&p);
                for t in 0..k {
                    s.task_new(&p, t, &TaskParams::default(), None);
                    s.wake_up(&p, t, false);
                }
                let mut curr = s.schedule(&p, None, PrevState::Runnable);
                let _ = p.inner.take_resched();
                p.reset();
                let mut now = 0u64;
                let ns = time_per(reps, || {
                    now += 1000;
                    p.inner.set_now(now);
                    curr = s.schedule(&p, curr, PrevState::Runnable);
                });
                report("schedule", &p, ns, reps / 100 * 100);
                // (b) wake-up + schedule(blocked) + schedule(idle -> it) of one task, k-1 others queued.
                if k == 1 {
                    let p = mk();
                    let s = build(&p);
                    s.task_new(&p, 0, &TaskParams::default(), None);
                    s.wake_up(&p, 0, false);
                    let t0 = s.schedule(&p, None, PrevState::Runnable);
                    p.reset();
                    let mut now = 0u64;
                    let ns = time_per(reps, || {
                        now += 1000;
                        p.inner.set_now(now);
                        let _ = s.schedule(&p, t0, PrevState::Blocked);
                        now += 1000;
                        p.inner.set_now(now);
                        s.wake_up(&p, 0, false);
                        let _ = s.schedule(&p, None, PrevState::Runnable);
                        let _ = p.inner.take_resched();
                    });
                    report("wake+2sch", &p, ns, reps / 100 * 100);
                    p.reset();
                    let ns = time_per(reps, || {
                        now += 1000;
                        p.inner.set_now(now);
                        let _ = s.tick(&p, t0);
                    });
                    report("tick", &p, ns, reps / 100 * 100);
                }
            }
        }
    }
}
