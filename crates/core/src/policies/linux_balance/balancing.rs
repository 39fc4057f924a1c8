//! Load balancing: the [`Balance`] hooks a fair class provides, the group statistics,
//! `find_busiest_group`'s tests, `load_balance`, the newly idle and periodic balance.

use super::*;

/// `enum cpu_idle_type`: why a CPU balances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleType {
    /// The periodic balance of an idle CPU.
    Idle,
    /// The periodic balance of a busy CPU.
    NotIdle,
    /// A CPU about to go idle (`newidle_balance`).
    NewlyIdle,
}

/// `enum group_type`, the kinds schedlab's machines produce, in the kernel's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GroupType {
    HasSpare,
    FullyBusy,
    Overloaded,
}

/// `enum migration_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Migration {
    Load,
    Util,
    Task,
}

/// `struct sg_lb_stats`: one group's statistics.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupStats {
    pub(super) load: u64,
    pub(super) util: u64,
    pub(super) runnable: u64,
    pub(super) nr: usize,
    pub(super) idle_cpus: usize,
    pub(super) weight: usize,
    pub(super) capacity: u64,
    pub(super) avg_load: u64,
    pub(super) kind: GroupType,
}

/// `group_is_overloaded`.
pub(super) fn overloaded(pct: u64, s: &GroupStats) -> bool {
    s.nr > s.weight && (s.capacity * 100 < s.util * pct || s.capacity * pct < s.runnable * 100)
}

/// `group_has_capacity`.
pub(super) fn has_capacity(pct: u64, s: &GroupStats) -> bool {
    s.nr < s.weight || (s.capacity * pct >= s.runnable * 100 && s.capacity * 100 > s.util * pct)
}

/// `update_sd_pick_busiest`: is `s` busier than the busiest so far?
fn pick_busiest(s: &GroupStats, busiest: Option<&GroupStats>) -> bool {
    if s.nr == 0 {
        return false;
    }
    let Some(b) = busiest else { return true };
    if s.kind != b.kind {
        return s.kind > b.kind;
    }
    match s.kind {
        GroupType::Overloaded => s.avg_load > b.avg_load,
        // `avg_load` is computed for overloaded groups only, so the last one wins.
        GroupType::FullyBusy => s.avg_load >= b.avg_load,
        GroupType::HasSpare => !(s.idle_cpus > b.idle_cpus || (s.idle_cpus == b.idle_cpus && s.nr <= b.nr)),
    }
}

/// `sibling_imbalance`: the task-count difference to spread between two groups,
/// normalised by their CPU counts when they differ.
fn sibling_imbalance(idle: IdleType, busiest: &GroupStats, local: &GroupStats) -> i64 {
    if idle == IdleType::NotIdle || busiest.nr == 0 {
        return 0;
    }
    let (nb, nl) = (busiest.weight as i64, local.weight as i64);
    if nb == nl {
        return (busiest.nr as i64 - local.nr as i64).max(0);
    }
    let mut imb = (nl * busiest.nr as i64 - nb * local.nr as i64).max(0);
    imb = (2 * imb + nl + nb) / (nl + nb);
    if imb <= 1 && local.nr == 0 && busiest.nr > 1 {
        imb = 2;
    }
    imb
}

/// `calculate_imbalance`, for the group kinds schedlab's machines produce.
fn calculate_imbalance(
    level: &Level,
    idle: IdleType,
    local: &mut GroupStats,
    busiest: &GroupStats,
    sds_avg: &mut u64,
    total: (u64, u64),
) -> (Migration, i64) {
    if local.kind == GroupType::HasSpare {
        if busiest.kind > GroupType::FullyBusy && !level.has(sd::SHARE_PKG_RESOURCES) {
            let imb = local.capacity.max(local.util) - local.util;
            if idle != IdleType::NotIdle && imb == 0 {
                return (Migration::Task, 1);
            }
            return (Migration::Util, imb as i64);
        }
        let mut imb = if busiest.weight == 1 || level.groups_prefer_sibling {
            sibling_imbalance(idle, busiest, local)
        } else {
            (local.idle_cpus as i64 - busiest.idle_cpus as i64).max(0)
        };
        // `adjust_numa_imbalance`.
        if level.has(sd::NUMA) && local.nr < level.imb_numa_nr && imb <= NUMA_IMBALANCE_MIN {
            imb = 0;
        }
        return (Migration::Task, imb >> 1);
    }
    if local.kind < GroupType::Overloaded {
        local.avg_load = local.load * SCHED_CAPACITY_SCALE / local.capacity;
        if local.avg_load >= busiest.avg_load {
            return (Migration::Load, 0);
        }
        *sds_avg = total.0 * SCHED_CAPACITY_SCALE / total.1.max(1);
        if local.avg_load >= *sds_avg {
            return (Migration::Load, 0);
        }
    }
    let a = busiest.avg_load.saturating_sub(*sds_avg) as u128 * busiest.capacity as u128;
    let b = sds_avg.saturating_sub(local.avg_load) as u128 * local.capacity as u128;
    (Migration::Load, (a.min(b) / SCHED_CAPACITY_SCALE as u128).min(i64::MAX as u128) as i64)
}

/// What the shared balancer needs of a policy with per-CPU queues of type
/// [`Balance::Rq`]; the passes themselves are the provided methods.
pub(crate) trait Balance<P: Platform> {
    /// One CPU's run queue, guarded by its platform lock.
    type Rq: Send;

    fn common(&self) -> &SchedCommon;
    /// The wake-up placement's per-task fields.
    fn wakeups(&self) -> &Wakeups;
    /// The scheduling domains and their balancing state.
    fn domains(&self) -> &Domains;
    /// The per-CPU queues' locks, by CPU.
    fn queues(&self) -> &[P::Lock<Self::Rq>];
    /// The weighted load queue `cpu` last published (read without its lock).
    fn published_load(&self, cpu: CpuId) -> u64;

    /// Runnable tasks linked on `rq` (waiting and running).
    fn nr_running(rq: &Self::Rq) -> usize;
    /// The queue's clock (`rq_clock_task`), as last brought up to date.
    fn rq_clock(rq: &Self::Rq) -> u64;
    /// The first waiting task of `rq`, in the order balancing considers them, for
    /// which `ok` holds.
    fn first_waiting(&self, rq: &Self::Rq, ok: impl FnMut(TaskId) -> bool) -> Option<TaskId>;
    fn weight(&self, t: TaskId) -> u64;
    /// When `t` last ran (`se.exec_start`: the queue clock at its last accounting).
    fn exec_start(&self, t: TaskId) -> u64;
    /// May the waiting `t` leave its queue at all (besides being allowed on the
    /// destination and not running)?
    fn may_leave(&self, _t: TaskId) -> bool {
        true
    }
    /// Move the waiting `t` from `there` to `here` (both locked), keeping its lag.
    fn move_task(&self, p: &P, here: &mut Self::Rq, there: &mut Self::Rq, t: TaskId);
    /// Bring `rq`'s clock up to date.
    fn sync_clock(&self, p: &P, rq: &mut Self::Rq);
    /// Account `rq`'s running task (before tasks are attached to it).
    fn account_curr(&self, p: &P, rq: &mut Self::Rq);
    /// `t` was just queued on `rq`: kick an idle CPU or test for preemption.
    fn check_preempt(&self, p: &P, rq: &Self::Rq, t: TaskId);

    /// [`select_task_rq`] over the published loads and the policy's weights.
    fn select_task_rq(&self, p: &P, t: TaskId, prev: CpuId, sync: bool) -> CpuId {
        let w = Wake { wakeups: self.wakeups(), load: |c| self.published_load(c), weight: |t| self.weight(t) };
        select_task_rq(self.common(), p, &w, t, prev, sync)
    }

    /// The CPU of `t`'s wake-up from `prev`: its first one after fork is placed by
    /// [`find_idlest_cpu`] (on `prev` if `sync`: no placement), every later one by
    /// [`Balance::select_task_rq`].
    fn wake_cpu(&self, p: &P, t: TaskId, prev: CpuId, sync: bool, forked: bool) -> CpuId {
        match (forked, sync) {
            (true, true) => home_cpu(self.common(), t, prev),
            (true, false) => find_idlest_cpu(self.common(), self.domains(), p, t, prev, |c| self.published_load(c)),
            (false, _) => {
                let cpu = self.select_task_rq(p, t, prev, sync);
                if cpu != prev {
                    // Observation only: read without charge.
                    let common = self.common();
                    let stats = &self.domains().stats;
                    let idle = common.cpu(cpu).curr().is_none() && common.queue_len(cpu) == 0;
                    BalanceStats::bump(if idle { &stats.wake_moved_to_idle } else { &stats.wake_moved_to_busy });
                    self.wakeups().set_moved(t, Moved::Wake);
                }
                cpu
            }
        }
    }

    /// Observation (uncharged): `schedule()` on `cpu` dispatches `t`. If `t` last ran
    /// on another CPU, count the migration by what last moved it.
    fn note_dispatch(&self, t: TaskId, cpu: CpuId) {
        let f = &self.wakeups().tasks[t as usize];
        let last = f.last_ran.swap(cpu as u32, Relaxed);
        let why = Moved::from_byte(f.moved.swap(Moved::Not as u8, Relaxed));
        if last == NO_CPU || last as usize == cpu {
            return;
        }
        let s = &self.domains().stats;
        BalanceStats::bump(match why {
            Moved::Wake => &s.migr_wake,
            Moved::Not => &s.migr_other,
            Moved::NewIdle => &s.migr_newidle,
            Moved::Idle => &s.migr_idle,
            Moved::Busy => &s.migr_busy,
        });
    }

    /// `idle_cpu`: nothing running, nothing queued.
    fn cpu_idle(&self, p: &P, cpu: CpuId) -> bool {
        is_idle(self.common(), p, cpu)
    }

    /// `update_sg_lb_stats` of `group`'s CPUs in `cpus`: a `Work::Examine` and a read
    /// of the queue's line per CPU, and of the CPU's data when its queue is empty.
    fn group_stats(&self, p: &P, group: CpuMask, cpus: CpuMask, pct: u64) -> GroupStats {
        let both = CpuMask(group.0 & cpus.0);
        let mut s = sum_group(self.common(), p, weight_of(group), both, pct, |i| self.published_load(i));
        if s.kind == GroupType::Overloaded {
            s.avg_load = s.load * SCHED_CAPACITY_SCALE / s.capacity;
        }
        s
    }

    /// `should_we_balance`: a newly idle CPU with nothing queued balances; otherwise
    /// the first idle CPU of the local group, or its first CPU if none is idle.
    fn should_we_balance(&self, p: &P, this: CpuId, level: &Level, idle: IdleType) -> bool {
        if idle == IdleType::NewlyIdle {
            return self.common().queue_len(this) == 0;
        }
        let local = level.groups[0];
        for c in cpus_of(local) {
            if self.cpu_idle(p, c) {
                return c == this;
            }
        }
        cpus_of(local).next() == Some(this)
    }

    /// `find_busiest_queue` among `cpus`: the most loaded (`migrate_load`, skipping a
    /// lone task heavier than the imbalance), the most utilised with two tasks or
    /// more (`migrate_util`), or the one with the most tasks (`migrate_task`); ties to
    /// the lower CPU.
    fn find_busiest_queue(&self, p: &P, cpus: CpuMask, migration: Migration, imbalance: i64) -> Option<CpuId> {
        let common = self.common();
        let mut best: Option<(CpuId, u64)> = None;
        for i in cpus_of(cpus) {
            p.charge(Work::Examine);
            p.touch(Line::Queue(i), Access::Read);
            let nr = common.queue_len(i);
            if nr == 0 {
                continue;
            }
            let key = match migration {
                Migration::Load => {
                    let load = self.published_load(i);
                    if nr == 1 && load as i128 > imbalance as i128 {
                        continue;
                    }
                    load
                }
                Migration::Util if nr <= 1 => continue,
                Migration::Util => SCHED_CAPACITY_SCALE,
                Migration::Task => nr as u64,
            };
            if best.is_none_or(|(_, b)| key > b) {
                best = Some((i, key));
            }
        }
        best.map(|(i, _)| i)
    }

    /// `load_balance` of `this`'s level `k` (see the module doc). Returns the tasks
    /// moved and whether higher levels are to be balanced (`continue_balancing`).
    fn load_balance(&self, p: &P, this: CpuId, k: usize, idle: IdleType) -> (usize, bool) {
        let d = self.domains();
        let level = &d.levels[this][k];
        let st = &d.state[this][k];
        p.touch(Line::CpuData(this), Access::Read);
        let pct = level.imbalance_pct as u64;
        let mut cpus = level.span;
        let mut all_pinned = false;
        let mut cont = true;
        let balanced = 'redo: loop {
            if !self.should_we_balance(p, this, level, idle) {
                cont = false;
                break 'redo true;
            }
            // `update_sd_lb_stats`.
            let mut local = self.group_stats(p, level.groups[0], cpus, pct);
            let mut total = (local.load, local.capacity);
            let mut busiest: Option<(CpuMask, GroupStats)> = None;
            for &g in &level.groups[1..] {
                let s = self.group_stats(p, g, cpus, pct);
                total.0 += s.load;
                total.1 += s.capacity;
                if pick_busiest(&s, busiest.as_ref().map(|(_, b)| b)) {
                    busiest = Some((g, s));
                }
            }
            // `find_busiest_group`.
            let Some((group, b)) = busiest else { break 'redo true };
            if local.kind > b.kind {
                break 'redo true;
            }
            let mut sds_avg = 0;
            if local.kind == GroupType::Overloaded {
                if local.avg_load >= b.avg_load {
                    break 'redo true;
                }
                sds_avg = total.0 * SCHED_CAPACITY_SCALE / total.1.max(1);
                if local.avg_load >= sds_avg || 100 * b.avg_load <= pct * local.avg_load {
                    break 'redo true;
                }
            }
            let force = level.groups_prefer_sibling
                && local.kind == GroupType::HasSpare
                && sibling_imbalance(idle, &b, &local) > 1;
            if !force
                && b.kind != GroupType::Overloaded
                && (idle == IdleType::NotIdle || (b.weight > 1 && local.idle_cpus <= b.idle_cpus + 1) || b.nr == 1)
            {
                break 'redo true;
            }
            let (migration, mut imbalance) = calculate_imbalance(level, idle, &mut local, &b, &mut sds_avg, total);
            if imbalance <= 0 {
                break 'redo true;
            }
            let Some(src) =
                self.find_busiest_queue(p, CpuMask(group.0 & cpus.0 & !CpuMask::single(this).0), migration, imbalance)
            else {
                break 'redo true;
            };
            // `detach_tasks` and `attach_tasks`.
            all_pinned = true;
            let failed = st.nr_balance_failed.load(Relaxed);
            let moved = common::with_two_queues(p, self.queues(), this, src, |here, there| {
                let n = Self::nr_running(there);
                if n <= 1 {
                    all_pinned = false;
                    return 0;
                }
                self.sync_clock(p, there);
                let clock = Self::rq_clock(there);
                // The running task is on the kernel's task list too: if it may run
                // here, not every task is pinned.
                if let Some(c) = self.common().cpu(src).curr() {
                    if self.common().tasks.get(c).cpus_allowed().contains(this) {
                        all_pinned = false;
                    }
                }
                let loop_max = NR_MIGRATE.min(n);
                let (mut seen, mut rejected) = (0usize, 0usize);
                let mut pulled = Vec::new();
                loop {
                    if idle != IdleType::NotIdle && Self::nr_running(there) <= 1 {
                        break;
                    }
                    let mut skip = rejected;
                    let cand = self.first_waiting(there, |_| {
                        if skip > 0 {
                            skip -= 1;
                            false
                        } else {
                            true
                        }
                    });
                    let Some(t) = cand else { break };
                    seen += 1;
                    if seen > loop_max && !all_pinned {
                        break;
                    }
                    // `can_migrate_task`.
                    p.touch(Line::Task(t), Access::Read);
                    let ts = self.common().tasks.get(t);
                    let mut ok = ts.cpus_allowed().contains(this);
                    if ok {
                        all_pinned = false;
                        ok = !ts.has_cpu() && self.may_leave(t);
                    }
                    if ok {
                        let hot = clock.saturating_sub(self.exec_start(t)) < MIGRATION_COST_NS;
                        ok = !hot || failed > level.cache_nice_tries;
                        if !ok {
                            let s = &d.stats;
                            BalanceStats::bump(if idle == IdleType::NewlyIdle {
                                &s.hot_refused_newidle
                            } else {
                                &s.hot_refused_periodic
                            });
                        }
                    }
                    if ok {
                        ok = match migration {
                            Migration::Load => {
                                let load = self.weight(t).max(1);
                                let bound = load >> failed.min(63);
                                bound as i128 <= imbalance as i128 && {
                                    imbalance = imbalance.saturating_sub(load.min(i64::MAX as u64) as i64);
                                    true
                                }
                            }
                            Migration::Util => {
                                let util = SCHED_CAPACITY_SCALE as i64;
                                util <= imbalance && {
                                    imbalance -= util;
                                    true
                                }
                            }
                            Migration::Task => {
                                imbalance -= 1;
                                true
                            }
                        };
                    }
                    if !ok {
                        rejected += 1;
                        continue;
                    }
                    if pulled.is_empty() {
                        self.account_curr(p, here);
                    }
                    self.move_task(p, here, there, t);
                    self.wakeups().set_moved(t, Moved::by(idle));
                    pulled.push(t);
                    if idle == IdleType::NewlyIdle || imbalance <= 0 {
                        break;
                    }
                }
                for &t in &pulled {
                    self.check_preempt(p, here, t);
                }
                pulled.len()
            });
            if moved == 0 && all_pinned {
                cpus = CpuMask(cpus.0 & !CpuMask::single(src).0);
                if cpus.0 & !level.groups[0].0 != 0 {
                    continue 'redo;
                }
                // `out_all_pinned`.
                st.nr_balance_failed.store(0, Relaxed);
                break 'redo false;
            }
            if moved == 0 {
                if idle != IdleType::NewlyIdle {
                    st.nr_balance_failed.store(failed + 1, Relaxed);
                }
            } else {
                st.nr_balance_failed.store(0, Relaxed);
            }
            st.balance_interval.store(level.min_interval, Relaxed);
            return (moved, cont);
        };
        if balanced {
            st.nr_balance_failed.store(0, Relaxed);
        }
        // `out_one_pinned`: a balanced (or wholly pinned) periodic pass doubles the
        // interval, up to `max_interval` (`MAX_PINNED_INTERVAL` when pinned).
        if idle != IdleType::NewlyIdle {
            let bi = st.balance_interval.load(Relaxed);
            if (all_pinned && bi < MAX_PINNED_INTERVAL) || bi < level.max_interval {
                st.balance_interval.store(bi * 2, Relaxed);
            }
        }
        (0, cont)
    }

    /// `newidle_balance`: this CPU's queue is empty. Unless no queue has a task
    /// waiting (`rd->overload`) or the CPU's average idle time is shorter than its
    /// lowest domain's highest balancing cost, balance each level with
    /// `SD_BALANCE_NEWIDLE` from the lowest up while the idle time covers the cost so
    /// far plus the level's, until a task is pulled. Returns whether one was.
    fn newidle_balance(&self, p: &P, this: CpuId) -> bool {
        let d = self.domains();
        let common = self.common();
        let rq = &d.rq[this];
        let now = p.now();
        rq.idle_stamp.store(now.max(1), Relaxed);
        // `rd->overload`: one machine-wide word.
        p.touch(Line::IdleMap, Access::Read);
        let overload = (0..common.ncpus()).any(|c| common.queue_len(c) > 1);
        let levels = d.levels(this);
        let avg_idle = rq.avg_idle.load(Relaxed);
        BalanceStats::bump(&d.stats.newidle);
        if !overload {
            BalanceStats::bump(&d.stats.newidle_no_overload);
            return false;
        }
        if levels.first().is_some_and(|_| avg_idle < d.state[this][0].max_newidle_lb_cost.load(Relaxed)) {
            BalanceStats::bump(&d.stats.newidle_short_idle);
            return false;
        }
        let jiffies = d.jiffies(now);
        let (mut t0, mut curr_cost, mut pulled) = (now, 0u64, false);
        for (k, level) in levels.iter().enumerate() {
            if avg_idle < curr_cost + d.state[this][k].max_newidle_lb_cost.load(Relaxed) {
                break;
            }
            if level.has(sd::BALANCE_NEWIDLE) {
                pulled = self.load_balance(p, this, k, IdleType::NewlyIdle).0 > 0;
                let t1 = p.now();
                let cost = t1.saturating_sub(t0);
                d.update_newidle_cost(this, k, cost, jiffies);
                curr_cost += cost;
                t0 = t1;
            }
            if pulled || common.queue_len(this) > 0 {
                break;
            }
        }
        if curr_cost > rq.max_idle_balance_cost.load(Relaxed) {
            rq.max_idle_balance_cost.store(curr_cost, Relaxed);
        }
        if pulled || common.queue_len(this) > 0 {
            rq.idle_stamp.store(0, Relaxed);
        }
        if pulled {
            BalanceStats::bump(&d.stats.newidle_pulled);
        }
        pulled
    }

    /// `rebalance_domains`, at a tick of `this`: each level whose interval
    /// (×`busy_factor` while the CPU is busy) has passed since its last balance is
    /// balanced, lowest first; an `SD_SERIALIZE` level only if no other CPU is
    /// balancing one. Returns how many tasks moved.
    fn periodic_balance(&self, p: &P, this: CpuId) -> usize {
        let d = self.domains();
        if d.levels(this).is_empty() {
            return 0;
        }
        p.touch(Line::CpuData(this), Access::Read);
        let jiffies = d.jiffies(p.now());
        let mut idle = if self.cpu_idle(p, this) { IdleType::Idle } else { IdleType::NotIdle };
        let mut busy = idle == IdleType::NotIdle;
        let mut moved = 0;
        let mut max_cost = 0;
        let mut need_decay = false;
        for (k, level) in d.levels(this).iter().enumerate() {
            let st = &d.state[this][k];
            need_decay |= d.update_newidle_cost(this, k, 0, jiffies);
            max_cost = max_cost.max(st.max_newidle_lb_cost.load(Relaxed));
            let interval = d.interval_jiffies(this, k, busy);
            if jiffies < st.last_balance.load(Relaxed) + interval {
                continue;
            }
            let serialize = level.has(sd::SERIALIZE);
            if serialize && d.serialize.compare_exchange(false, true, Relaxed, Relaxed).is_err() {
                break;
            }
            let (m, cont) = self.load_balance(p, this, k, idle);
            BalanceStats::bump(&d.stats.periodic_passes);
            d.stats.periodic_pulled.fetch_add(m as u64, Relaxed);
            if serialize {
                d.serialize.store(false, Relaxed);
            }
            if m > 0 {
                moved += m;
                idle = if self.cpu_idle(p, this) { IdleType::Idle } else { IdleType::NotIdle };
                busy = idle == IdleType::NotIdle;
            }
            st.last_balance.store(jiffies, Relaxed);
            if !cont {
                break;
            }
        }
        if need_decay {
            d.rq[this].max_idle_balance_cost.store(max_cost.max(MIGRATION_COST_NS), Relaxed);
        }
        moved
    }
}
