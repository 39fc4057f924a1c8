//! Fork placement (`select_task_rq_fair` for `WF_FORK`): `find_idlest_group` and
//! `find_idlest_group_cpu` down the forking CPU's levels.

use super::*;

/// `update_sg_wakeup_stats`: a group's statistics for placing a new task (the task
/// is on no queue yet), `avg_load` for fully busy and overloaded groups.
fn wakeup_stats<P: Platform>(
    common: &SchedCommon,
    p: &P,
    group: CpuMask,
    pct: u64,
    load: &impl Fn(CpuId) -> u64,
) -> GroupStats {
    let mut s = sum_group(common, p, weight_of(group), group, pct, load);
    if s.kind != GroupType::HasSpare {
        s.avg_load = s.load * SCHED_CAPACITY_SCALE / s.capacity;
    }
    s
}

/// The sums both group statistics take over `cpus` (of a group of `weight` CPUs) and
/// the group's type: a `Work::Examine` and a read of the queue's line per CPU, and of
/// the CPU's data when its queue is empty; `avg_load` is left to the caller.
pub(super) fn sum_group<P: Platform>(
    common: &SchedCommon,
    p: &P,
    weight: usize,
    cpus: CpuMask,
    pct: u64,
    load: impl Fn(CpuId) -> u64,
) -> GroupStats {
    let mut s = GroupStats {
        load: 0,
        util: 0,
        runnable: 0,
        nr: 0,
        idle_cpus: 0,
        weight,
        capacity: SCHED_CAPACITY_SCALE * weight as u64,
        avg_load: 0,
        kind: GroupType::HasSpare,
    };
    for i in cpus_of(cpus) {
        p.charge(Work::Examine);
        p.touch(Line::Queue(i), Access::Read);
        let nr = common.queue_len(i);
        s.load += load(i);
        s.nr += nr;
        s.runnable += SCHED_CAPACITY_SCALE * nr as u64;
        if nr > 0 {
            s.util += SCHED_CAPACITY_SCALE;
        } else {
            p.touch(Line::CpuData(i), Access::Read);
            if common.cpu(i).curr().is_none() {
                s.idle_cpus += 1;
            }
        }
    }
    s.kind = if overloaded(pct, &s) {
        GroupType::Overloaded
    } else if !has_capacity(pct, &s) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    };
    s
}

/// `update_pick_idlest`: is `s` idler than the idlest so far?
fn pick_idlest(s: &GroupStats, idlest: Option<&GroupStats>) -> bool {
    let Some(b) = idlest else { return true };
    if s.kind != b.kind {
        return s.kind < b.kind;
    }
    match s.kind {
        GroupType::Overloaded | GroupType::FullyBusy => s.avg_load < b.avg_load,
        GroupType::HasSpare => !(b.idle_cpus > s.idle_cpus || (b.idle_cpus == s.idle_cpus && b.util <= s.util)),
    }
}

/// `find_idlest_group`: the idlest group of `level` allowed for `t` other than
/// `this`'s, if placing `t` there beats keeping it in `this`'s group.
fn find_idlest_group<P: Platform>(
    common: &SchedCommon,
    p: &P,
    level: &Level,
    t: TaskId,
    this: CpuId,
    load: &impl Fn(CpuId) -> u64,
) -> Option<CpuMask> {
    let allowed = common.tasks.get(t).cpus_allowed();
    let pct = level.imbalance_pct as u64;
    let mut local: Option<GroupStats> = None;
    let mut idlest: Option<(CpuMask, GroupStats)> = None;
    for &g in &level.groups {
        if g.0 & allowed.0 == 0 {
            continue;
        }
        let s = wakeup_stats(common, p, g, pct, load);
        if g.contains(this) {
            local = Some(s);
        } else if pick_idlest(&s, idlest.as_ref().map(|(_, b)| b)) {
            idlest = Some((g, s));
        }
    }
    let (group, idl) = idlest?;
    let Some(loc) = local else { return Some(group) };
    if loc.kind != idl.kind {
        return (loc.kind > idl.kind).then_some(group);
    }
    match loc.kind {
        GroupType::Overloaded | GroupType::FullyBusy => {
            let imbalance = SCHED_CAPACITY_SCALE * (pct - 100) / 100;
            if level.has(sd::NUMA) && idl.avg_load + imbalance >= loc.avg_load {
                return None;
            }
            if idl.avg_load >= loc.avg_load + imbalance || 100 * loc.avg_load <= pct * idl.avg_load {
                return None;
            }
        }
        GroupType::HasSpare => {
            if level.has(sd::NUMA) {
                // No preferred node (NUMA balancing is not modelled): keep the task
                // near its parent while the imbalance stays small.
                let local_allowed = weight_of(CpuMask(level.groups[0].0 & allowed.0));
                let imb_numa_nr = local_allowed.min(level.imb_numa_nr);
                let imb = (loc.idle_cpus as i64 - idl.idle_cpus as i64).abs();
                if loc.nr < imb_numa_nr && imb <= NUMA_IMBALANCE_MIN {
                    return None;
                }
            }
            if loc.idle_cpus >= idl.idle_cpus {
                return None;
            }
        }
    }
    Some(group)
}

/// `find_idlest_group_cpu`: the group's CPU if it has one; else, among those allowed
/// for `t`, the idle one that went idle most recently (`idle_stamp`; no idle states
/// are modelled), else the least loaded, else `this`.
fn find_idlest_group_cpu<P: Platform>(
    common: &SchedCommon,
    d: &Domains,
    p: &P,
    group: CpuMask,
    t: TaskId,
    this: CpuId,
    load: &impl Fn(CpuId) -> u64,
) -> CpuId {
    if weight_of(group) == 1 {
        return cpus_of(group).next().unwrap_or(this);
    }
    let allowed = common.tasks.get(t).cpus_allowed();
    let (mut shallowest, mut latest) = (None, 0u64);
    let (mut least, mut min_load) = (this, u64::MAX);
    for i in cpus_of(CpuMask(group.0 & allowed.0)) {
        if is_idle(common, p, i) {
            let stamp = d.rq[i].idle_stamp.load(Relaxed);
            if stamp > latest {
                latest = stamp;
                shallowest = Some(i);
            }
        } else if shallowest.is_none() {
            p.touch(Line::Queue(i), Access::Read);
            let l = load(i);
            if l < min_load {
                min_load = l;
                least = i;
            }
        }
    }
    shallowest.unwrap_or(least)
}

/// The placement of a task's first wake-up after fork (`select_task_rq_fair` with
/// `WF_FORK`, `find_idlest_cpu`): from the highest of `prev`'s domains reached by
/// levels with `SD_BALANCE_FORK`, down: the idlest group ([`find_idlest_group`]),
/// then its idlest CPU, continuing in that CPU's domains below the level; `prev`
/// when no level qualifies or the task may use no CPU of it. `prev` is the forking
/// CPU. A result the task may not use falls back as [`home_cpu`] does.
pub fn find_idlest_cpu<P: Platform>(
    common: &SchedCommon,
    d: &Domains,
    p: &P,
    t: TaskId,
    prev: CpuId,
    load: impl Fn(CpuId) -> u64,
) -> CpuId {
    let allowed = common.tasks.get(t).cpus_allowed();
    if (allowed.0 & CpuMask::first(common.ncpus()).0).count_ones() <= 1 {
        return home_cpu(common, t, prev);
    }
    let fork = |c: CpuId| d.levels(c).iter().take_while(|l| l.has(sd::BALANCE_FORK)).count();
    let Some(mut k) = fork(prev).checked_sub(1) else { return home_cpu(common, t, prev) };
    if d.levels(prev)[k].span.0 & allowed.0 == 0 {
        return home_cpu(common, t, prev);
    }
    p.touch(Line::CpuData(prev), Access::Read);
    let (mut cpu, mut new_cpu) = (prev, prev);
    let mut at = Some(k);
    while let Some(level_k) = at {
        k = level_k;
        let level = &d.levels(cpu)[k];
        let child = k.checked_sub(1);
        if !level.has(sd::BALANCE_FORK) {
            at = child;
            continue;
        }
        let Some(group) = find_idlest_group(common, p, level, t, cpu, &load) else {
            at = child;
            continue;
        };
        new_cpu = find_idlest_group_cpu(common, d, p, group, t, cpu, &load);
        if new_cpu == cpu {
            at = child;
            continue;
        }
        // Continue in `new_cpu`'s domains below this level's weight.
        let weight = level.weight();
        cpu = new_cpu;
        at = d
            .levels(cpu)
            .iter()
            .take_while(|l| l.weight() < weight)
            .enumerate()
            .filter(|(_, l)| l.has(sd::BALANCE_FORK))
            .map(|(j, _)| j)
            .last();
    }
    if allowed.contains(new_cpu) {
        new_cpu
    } else {
        home_cpu(common, t, prev)
    }
}
