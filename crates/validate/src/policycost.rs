//! DSS's own costs, timed on the free platform and counted on the counting one:
//! what `Calibration::machine` (`calibrate.rs`) turns into the host machine's
//! `schedule_entry_cycles`, `wakeup_entry_cycles`, `goodness_cycles`, `tick_cycles`
//! and `tree_op_cycles`, and the DSS hop whose spread `crate::spread` measures.

use crate::counting::{Charges, Counting};
use crate::timing::time_per;
use schedlab_core::policies::{cfs, dss};
use schedlab_core::{
    BuildEnv, Configured, NullPlatform, Platform, Policy, PolicySource, PrevState, TaskParams, Topology, Work,
};
use serde::Serialize;

/// DSS on one CPU at the runtime's HZ (the host machine's), built as the engines build it.
pub(crate) fn dss<P: Platform>(p: &P, capacity: usize) -> Box<dyn Policy<P>> {
    let env = BuildEnv { topo: &Topology::smp(1), capacity, hz: schedlab_rt::DEFAULT_HZ };
    Configured::<dss::Kind>(Default::default()).build(p, &env).expect("dss")
}

/// `schedule(prev blocked)` + `wake_up` + `schedule(idle)`: one task's hop through
/// DSS on platform `p`, the set-up, then `timed(call)` around the repeated hop.
fn pair_with<P: Platform, R>(p: &P, take_resched: impl Fn(), timed: impl FnOnce(&mut dyn FnMut()) -> R) -> R {
    let pol = dss(p, 2);
    pol.task_new(p, 0, &TaskParams::default(), None);
    pol.wake_up(p, 0, false);
    let t0 = pol.schedule(p, None, PrevState::Runnable);
    timed(&mut || {
        let _ = pol.schedule(p, t0, PrevState::Blocked);
        pol.wake_up(p, 0, false);
        let _ = pol.schedule(p, None, PrevState::Runnable);
        take_resched();
    })
}

/// One DSS hop on the free platform, timed by `timed` (`crate::spread`).
pub(crate) fn dss_hop<R>(timed: impl FnOnce(&mut dyn FnMut()) -> R) -> R {
    let p = NullPlatform::new(0);
    pair_with(&p, || drop(p.take_resched()), timed)
}

/// DSS's calls timed on the free platform (see [`PolicyCosts`]), and counted on the
/// counting one (the same calls: the counts are exact, not timed).
pub fn policy_costs(quick: bool) -> PolicyCosts {
    let reps = if quick { 20_000 } else { 200_000 };
    // `schedule(prev runnable)` with `k` runnable tasks, on platform `p`: the set-up,
    // then `timed(call)` around the repeated call.
    fn sched_with<P: Platform, R>(p: &P, k: u32, timed: impl FnOnce(&mut dyn FnMut()) -> R) -> R {
        let pol = dss(p, k as usize + 1);
        for t in 0..k {
            pol.task_new(p, t, &TaskParams::default(), None);
            pol.wake_up(p, t, false);
        }
        let mut curr = pol.schedule(p, None, PrevState::Runnable);
        timed(&mut || curr = pol.schedule(p, curr, PrevState::Runnable))
    }
    let time = |f: &mut dyn FnMut()| time_per(reps, f);
    const COUNTED: u64 = 100;
    /// Count `COUNTED` calls on `p` (after the set-up's charges are forgotten).
    fn count(p: &Counting) -> impl FnOnce(&mut dyn FnMut()) -> Charges + '_ {
        move |f: &mut dyn FnMut()| {
            p.reset();
            for _ in 0..COUNTED {
                f();
            }
            p.per_call(COUNTED)
        }
    }
    let (one, many) = (sched_with(&NullPlatform::new(0), 1, time), sched_with(&NullPlatform::new(0), 65, time));
    let p = NullPlatform::new(0);
    let pair = pair_with(&p, || drop(p.take_resched()), time);
    let (c1, c65) = (Counting::new(0), Counting::new(0));
    let (one_charges, many_charges) = (sched_with(&c1, 1, count(&c1)), sched_with(&c65, 65, count(&c65)));
    let cp = Counting::new(0);
    let pair_charges = pair_with(&cp, || drop(cp.inner.take_resched()), count(&cp));
    let pol = dss(&p, 2);
    pol.task_new(&p, 0, &TaskParams::default(), None);
    pol.wake_up(&p, 0, false);
    let t0 = pol.schedule(&p, None, PrevState::Runnable);
    let tick = time_per(reps, || {
        let _ = pol.tick(&p, t0);
    });
    PolicyCosts {
        schedule_base_ns: one,
        schedule_per_task_ns: ((many - one) / 64.0).max(0.1),
        wakeup_ns: (pair - 2.0 * one).max(1.0),
        tick_ns: tick,
        pair_ns: pair,
        scan_ns: many - one,
        schedule_charges: one_charges,
        scan_charges: many_charges.minus(&one_charges),
        pair_charges,
    }
}

/// DSS's own costs on this machine, measured on the free platform, and what the
/// simulator charges for the same calls (counted): `Calibration::machine` prices each
/// call's fixed path as the measured time less what the simulator charges separately.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PolicyCosts {
    /// `schedule()` with one runnable task (fixed path, its lock and its goodness calls).
    pub schedule_base_ns: f64,
    /// The extra time per additional task on the run list (the goodness scan).
    pub schedule_per_task_ns: f64,
    /// `pair_ns` less two `schedule_base_ns` (printed; the host's wake-up price is
    /// `Calibration::machine`'s residual).
    pub wakeup_ns: f64,
    /// `Policy::tick` on a running task.
    pub tick_ns: f64,
    /// `schedule(prev blocked)` + `wake_up` + `schedule(idle)` of one task.
    pub pair_ns: f64,
    /// `schedule()` with 65 runnable tasks less with one: 64 more goodness calls.
    pub scan_ns: f64,
    /// Per call: what the simulator is asked to charge by `schedule()` with one task,
    /// by the 64 extra tasks of the scan, and by the pair.
    pub schedule_charges: Charges,
    pub scan_charges: Charges,
    pub pair_charges: Charges,
}

/// One tree insert or removal of `fair`, from its own `schedule()` on the zero-cost
/// platform: the running task goes back into the tree and the leftmost comes out (one
/// insert, one removal), with `k` runnable tasks and the clock moving on 1 µs per call
/// as on a runtime (so `update_curr` accounts time). Beyond that, the call does what
/// DSS's `schedule()` with one task does, whose time is the host's schedule price, and
/// an accounting step the host prices like a goodness (`Recalc` = `Goodness`, one each
/// here against DSS's two goodness calls): so half the difference is one tree
/// operation. The mean over `k` = 1 (the tree empties at every pick, as a CPU's queue
/// does in a ping-pong) and `k` = 8 (it never does).
pub fn tree_op_ns(reps: u64, dss_schedule_ns: f64) -> f64 {
    let fair_schedule_ns = |k: u32| {
        let p = NullPlatform::new(0);
        let env = BuildEnv { topo: &Topology::smp(1), capacity: k as usize + 1, hz: schedlab_rt::DEFAULT_HZ };
        let pol = Configured::<cfs::Kind>(Default::default()).build(&p, &env).expect("cfs");
        for t in 0..k {
            pol.task_new(&p, t, &TaskParams::default(), None);
            pol.wake_up(&p, t, false);
        }
        let mut curr = pol.schedule(&p, None, PrevState::Runnable);
        let _ = p.take_resched();
        let mut now = 0;
        time_per(reps, || {
            now += 1000;
            p.set_now(now);
            curr = pol.schedule(&p, curr, PrevState::Runnable);
        })
    };
    let fair_ns = (fair_schedule_ns(1) + fair_schedule_ns(8)) / 2.0;
    ((fair_ns - dss_schedule_ns) / 2.0).max(1.0)
}

/// The host's price of a list link or unlink and of an L2 hit: the 1 ns floor (a few
/// stores; a load from a line this CPU holds), too small to measure apart.
pub const LIST_OP_NS: f64 = 1.0;
pub const L2_HIT_NS: f64 = 1.0;

/// The host's goodness, `schedule()` entry and `wake_up` entry prices, in ns: each
/// measured DSS call less what the simulator charges for the same call besides the
/// price being solved for (counted: [`PolicyCosts`]). `schedule_base_ns` is not the
/// entry price: it includes the call's lock (charged again as
/// `lock_cycles`), its two goodness calls (`goodness_cycles` each) and its L2 hits,
/// so taken as the entry price a `schedule()` with one task would cost 40 simulated ns
/// against 19 measured, and a hop's wake-up + two `schedule()`s 126 against 79
/// (`examples/fairops`).
pub fn dss_prices(d: &PolicyCosts, lock_ns: f64) -> (f64, f64, f64) {
    let mut work = [0.0; Work::COUNT];
    work[Work::ListOp.index()] = LIST_OP_NS;
    let lock = lock_ns.round().max(1.0);
    // Goodness first, from the scan: 64 more goodness calls and their task-line hits.
    let scan = &d.scan_charges;
    let goodness = ((d.scan_ns - scan.priced(&work, lock, L2_HIT_NS, &[Work::Goodness]))
        / scan.work[Work::Goodness.index()].max(1.0))
    .max(0.1);
    work[Work::Goodness.index()] = goodness.round().max(1.0);
    work[Work::Recalc.index()] = work[Work::Goodness.index()];
    let one = &d.schedule_charges;
    let entry = ((d.schedule_base_ns - one.priced(&work, lock, L2_HIT_NS, &[Work::ScheduleEntry]))
        / one.work[Work::ScheduleEntry.index()].max(1.0))
    .max(1.0);
    work[Work::ScheduleEntry.index()] = entry.round();
    let pair = &d.pair_charges;
    let wakeup = ((d.pair_ns - pair.priced(&work, lock, L2_HIT_NS, &[Work::WakeupEntry]))
        / pair.work[Work::WakeupEntry.index()].max(1.0))
    .max(1.0);
    (goodness, entry, wakeup)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts of DSS's calls (the real ones), timed as if each priced kind cost what
    /// `truth` says: the prices solved from those times are `truth`'s.
    #[test]
    fn dss_prices_recover_the_entry_prices_the_measured_calls_contain() {
        let (one, many, pair) = {
            let count = |k: u32| {
                let p = Counting::new(0);
                let pol = dss(&p, k as usize + 1);
                for t in 0..k {
                    pol.task_new(&p, t, &TaskParams::default(), None);
                    pol.wake_up(&p, t, false);
                }
                let curr = pol.schedule(&p, None, PrevState::Runnable);
                p.reset();
                let _ = pol.schedule(&p, curr, PrevState::Runnable);
                p.per_call(1)
            };
            let p = Counting::new(0);
            let pol = dss(&p, 2);
            pol.task_new(&p, 0, &TaskParams::default(), None);
            pol.wake_up(&p, 0, false);
            let t0 = pol.schedule(&p, None, PrevState::Runnable);
            p.reset();
            let _ = pol.schedule(&p, t0, PrevState::Blocked);
            pol.wake_up(&p, 0, false);
            let _ = pol.schedule(&p, None, PrevState::Runnable);
            (count(1), count(65), p.per_call(1))
        };
        // The one-task schedule() takes its lock and calls goodness: what was paid twice.
        assert_eq!(one.locks, 1.0);
        assert!(one.work[Work::Goodness.index()] >= 1.0);
        let (lock, goodness, entry, wakeup) = (10.0, 3.0, 5.0, 30.0);
        let mut work = [0.0; Work::COUNT];
        work[Work::ListOp.index()] = LIST_OP_NS;
        work[Work::Goodness.index()] = goodness;
        work[Work::Recalc.index()] = goodness;
        work[Work::ScheduleEntry.index()] = entry;
        work[Work::WakeupEntry.index()] = wakeup;
        let time = |c: &Charges| c.priced(&work, lock, L2_HIT_NS, &[]);
        let d = PolicyCosts {
            schedule_base_ns: time(&one),
            schedule_per_task_ns: 0.0,
            wakeup_ns: 0.0,
            tick_ns: 1.0,
            pair_ns: time(&pair),
            scan_ns: time(&many) - time(&one),
            schedule_charges: one,
            scan_charges: many.minus(&one),
            pair_charges: pair,
        };
        let (g, e, w) = dss_prices(&d, lock);
        assert!((g - goodness).abs() < 1e-9, "goodness {g}");
        assert!((e - entry).abs() < 1e-9, "schedule entry {e}");
        assert!((w - wakeup).abs() < 1e-9, "wake-up entry {w}");
        // The old price, the whole call, was more than the entry by the lock and goodness.
        assert!(d.schedule_base_ns >= entry + lock + goodness);
    }
}
