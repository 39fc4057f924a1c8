//! Wake-up placement and load balancing shared by Linux's fair classes, `cfs` and
//! `eevdf`: the two differ in how a queue orders and picks its tasks, not in how tasks
//! reach a queue.
//!
//! * **Placement** ([`select_cpu`], `select_task_rq`): the previous CPU if it is idle,
//!   else an idle CPU the task may use (the previous CPU's node first, then the
//!   others, each in CPU order from the previous CPU on), else the previous CPU.
//!   [`home_cpu`] is the placement of a `sync` wake-up: the previous CPU if allowed.
//! * **Newly idle balance** (`Balance::newidle_balance`, `newidle_balance`): a CPU
//!   whose queue runs empty in `schedule()` pulls the first movable waiting task of the
//!   busiest queue (highest published weighted load among queues with a task waiting).
//! * **Periodic balance** (`Balance::periodic_balance`): on every tick each CPU
//!   compares the published weighted loads and, while the busiest queue's load exceeds
//!   its own by more than `imbalance_pct` %, pulls waiting tasks lighter than the
//!   difference (so each move strictly reduces the imbalance), at most
//!   [`NR_MIGRATE`] per pass (`sysctl_sched_nr_migrate`). The last pulled task kicks
//!   an idle CPU or is tested for preemption against the running one.
//!
//! Balancing is flat: one level over all CPUs, no scheduling domains. Only waiting
//! (not running) tasks allowed on the pulling CPU move; each policy decides how a
//! moved task keeps its lag (`Balance::move_task`) and which waiting tasks may not
//! leave at all (`Balance::may_leave`).
//!
//! Costs: a `Work::Examine` and a read of the CPU's data per CPU placement looks at,
//! a `Work::Examine` and a read of the queue's line per queue balancing looks at, a
//! read of each candidate task's line.

use crate::common::{self, SchedCommon};
use crate::cpu::CpuId;
use crate::platform::{Access, Line, Platform, Work};
use crate::task::TaskId;

/// Most tasks one periodic balancing pass moves (`sysctl_sched_nr_migrate`).
pub const NR_MIGRATE: usize = 32;

// ------------------------------------------------------------ placement ------

fn is_idle<P: Platform>(common: &SchedCommon, p: &P, cpu: CpuId) -> bool {
    p.charge(Work::Examine);
    p.touch(Line::CpuData(cpu), Access::Read);
    common.cpu(cpu).curr().is_none() && common.queue_len(cpu) == 0
}

/// `select_task_rq`: the previous CPU if it is idle, else an idle CPU allowed for
/// `t` (the previous CPU's node first, then the others, each in CPU order from
/// `prev` on), else the previous CPU (or the first allowed CPU if `prev` is not).
pub fn select_cpu<P: Platform>(common: &SchedCommon, p: &P, t: TaskId, prev: CpuId) -> CpuId {
    let n = common.ncpus();
    let allowed = common.tasks.get(t).cpus_allowed();
    if allowed.contains(prev) && is_idle(common, p, prev) {
        return prev;
    }
    let node = common.topo.node_of[prev];
    for same_node in [true, false] {
        for k in 1..n {
            let c = (prev + k) % n;
            if (common.topo.node_of[c] == node) == same_node && allowed.contains(c) && is_idle(common, p, c) {
                return c;
            }
        }
    }
    home_cpu(common, t, prev)
}

/// `prev` if `t` may run there, else its first allowed CPU.
pub fn home_cpu(common: &SchedCommon, t: TaskId, prev: CpuId) -> CpuId {
    let allowed = common.tasks.get(t).cpus_allowed();
    if allowed.contains(prev) {
        prev
    } else {
        (0..common.ncpus()).find(|&c| allowed.contains(c)).unwrap_or(prev)
    }
}

/// The busiest queue other than `this` by `load` among those with a task waiting (at
/// least two linked), if its load is above `floor`; ties go to the lower CPU.
pub fn find_busiest<P: Platform>(
    common: &SchedCommon,
    p: &P,
    this: CpuId,
    floor: u64,
    load: impl Fn(CpuId) -> u64,
) -> Option<CpuId> {
    let mut best: Option<(CpuId, u64)> = None;
    for i in 0..common.ncpus() {
        if i == this {
            continue;
        }
        p.charge(Work::Examine);
        p.touch(Line::Queue(i), Access::Read);
        let l = load(i);
        if common.queue_len(i) >= 2 && l > floor && best.is_none_or(|(_, b)| l > b) {
            best = Some((i, l));
        }
    }
    best.map(|(i, _)| i)
}

// ------------------------------------------------------------ balancing ------

/// What the shared balancer needs of a policy with per-CPU queues of type
/// [`Balance::Rq`]; the passes themselves are the provided methods.
pub(crate) trait Balance<P: Platform> {
    /// One CPU's run queue, guarded by its platform lock.
    type Rq: Send;

    fn common(&self) -> &SchedCommon;
    /// The per-CPU queues' locks, by CPU.
    fn queues(&self) -> &[P::Lock<Self::Rq>];
    /// The weighted load queue `cpu` last published (read without its lock).
    fn published_load(&self, cpu: CpuId) -> u64;
    /// The periodic balance's threshold, in % of this CPU's load.
    fn imbalance_pct(&self) -> u32;

    /// Runnable tasks linked on `rq` (waiting and running).
    fn nr_running(rq: &Self::Rq) -> usize;
    /// Their weights' sum.
    fn load(rq: &Self::Rq) -> u64;
    /// The first waiting task of `rq`, in the order balancing considers them, for
    /// which `ok` holds.
    fn first_waiting(&self, rq: &Self::Rq, ok: impl FnMut(TaskId) -> bool) -> Option<TaskId>;
    fn weight(&self, t: TaskId) -> u64;
    /// May the waiting `t` leave its queue at all (besides being allowed on the
    /// destination and not running)?
    fn may_leave(&self, _t: TaskId) -> bool {
        true
    }
    /// Move the waiting `t` from `there` to `here` (both locked), keeping its lag.
    fn move_task(&self, p: &P, here: &mut Self::Rq, there: &mut Self::Rq, t: TaskId);
    /// Bring `rq`'s clock up to date (before a newly idle pull).
    fn sync_clock(&self, p: &P, rq: &mut Self::Rq);
    /// Account `rq`'s running task (before a periodic pull).
    fn account_curr(&self, p: &P, rq: &mut Self::Rq);
    /// `t` was just queued on `rq`: kick an idle CPU or test for preemption.
    fn check_preempt(&self, p: &P, rq: &Self::Rq, t: TaskId);

    /// May `t`, waiting on another queue, move to `cpu`? Allowed there, not running
    /// anywhere (`task_running`), and [`Balance::may_leave`].
    fn can_migrate(&self, p: &P, t: TaskId, cpu: CpuId) -> bool {
        p.touch(Line::Task(t), Access::Read);
        let ts = self.common().tasks.get(t);
        ts.cpus_allowed().contains(cpu) && !ts.has_cpu() && self.may_leave(t)
    }

    /// [`find_busiest`] over the published loads.
    fn find_busiest(&self, p: &P, this: CpuId, floor: u64) -> Option<CpuId> {
        find_busiest(self.common(), p, this, floor, |i| self.published_load(i))
    }

    /// `newidle_balance`: this CPU's queue is empty; pull the busiest queue's first
    /// migratable waiting task. Returns whether a task was pulled.
    fn newidle_balance(&self, p: &P, this: CpuId) -> bool {
        let Some(busiest) = self.find_busiest(p, this, 0) else { return false };
        common::with_two_queues(p, self.queues(), this, busiest, |here, there| {
            if Self::nr_running(there) < 2 {
                return false;
            }
            match self.first_waiting(there, |t| self.can_migrate(p, t, this)) {
                Some(t) => {
                    self.sync_clock(p, here);
                    self.move_task(p, here, there, t);
                    true
                }
                None => false,
            }
        })
    }

    /// The periodic balance: while the busiest queue's load exceeds this CPU's by more
    /// than `imbalance_pct`, pull waiting tasks lighter than the difference (at most
    /// [`NR_MIGRATE`]). The last pulled task kicks an idle CPU or may preempt the
    /// running one. Returns how many moved.
    fn periodic_balance(&self, p: &P, this: CpuId) -> usize {
        if self.common().ncpus() < 2 {
            return 0;
        }
        p.touch(Line::Queue(this), Access::Read);
        let here_load = self.published_load(this);
        let pct = self.imbalance_pct() as u128;
        let exceeds = |there: u64, here: u64| there as u128 * 100 > here as u128 * pct;
        let floor = (here_load as u128 * pct / 100).min(u64::MAX as u128) as u64;
        let Some(busiest) = self.find_busiest(p, this, floor) else { return 0 };
        common::with_two_queues(p, self.queues(), this, busiest, |here, there| {
            self.account_curr(p, here);
            let mut moved = 0;
            let mut last = None;
            while moved < NR_MIGRATE && Self::nr_running(there) >= 2 && exceeds(Self::load(there), Self::load(here)) {
                let diff = Self::load(there) - Self::load(here);
                let cand = self.first_waiting(there, |t| self.weight(t) < diff && self.can_migrate(p, t, this));
                let Some(t) = cand else { break };
                self.move_task(p, here, there, t);
                moved += 1;
                last = Some(t);
            }
            if let Some(t) = last {
                self.check_preempt(p, here, t);
            }
            moved
        })
    }
}
