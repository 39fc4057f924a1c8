//! Wake-up placement and load balancing shared by Linux's fair classes, `cfs` and
//! `eevdf`: the two differ in how a queue orders and picks its tasks, not in how tasks
//! reach a queue. Also the CPU-count scaling of their tunables ([`Scaling`]). Read
//! from Linux v6.6 `kernel/sched/fair.c` and `kernel/sched/topology.c`.
//!
//! * **Scheduling domains** ([`Domains`], `build_sched_domains`, `sd_init`). Built from
//!   the machine description the policies see (`SchedCommon::topo`: each CPU's NUMA
//!   node and the nodes' SLIT distances, no cache topology). The lowest level, `MC`,
//!   the last-level-cache domain (`sd_llc`), is a CPU's NUMA node; its groups are
//!   single CPUs. Above it, one `NUMA` level per distinct node distance beyond the
//!   local one spans the nodes within that distance; its groups are the spans of the
//!   level below. A level of one CPU, or with its child's span, is degenerate and
//!   dropped, so a 1-CPU machine has no domain, a 1-node machine one (`MC`), and a
//!   preset of several nodes at one distance two (`MC`, `NUMA`); nodes of one CPU
//!   keep only `NUMA`. The presets' Pentium III CPUs each have a private L2, so on
//!   that hardware the kernel would find no cache shared between CPUs and no LLC
//!   domain wider than one CPU; schedlab takes the node as the LLC, as on a
//!   multi-core socket. Every level starts with `SD_BALANCE_NEWIDLE`,
//!   `SD_BALANCE_EXEC`, `SD_BALANCE_FORK` and `SD_WAKE_AFFINE`, `imbalance_pct` 117
//!   (the policies' `imbalance_pct=` option), `busy_factor` 16, `min_interval` its
//!   weight in ms, `max_interval` twice that, `balance_interval` starting at the
//!   minimum. `MC` adds `SD_SHARE_PKG_RESOURCES` and `SD_PREFER_SIBLING`,
//!   `cache_nice_tries` 1; `NUMA` adds `SD_NUMA` and `SD_SERIALIZE`, `cache_nice_tries`
//!   2, and loses `SD_WAKE_AFFINE`, `SD_BALANCE_FORK` and `SD_BALANCE_EXEC` when its
//!   distance exceeds `RECLAIM_DISTANCE` (30: `numa-4x4`'s 100 does). `imb_numa_nr`
//!   is the node's weight / 8 (at least 1), scaled by the level's weight over the
//!   first NUMA level's.
//! * **Wake-up placement** ([`select_task_rq`], `select_task_rq_fair`, its fast path
//!   for `WF_TTWU`). The waker (the task running
//!   on the waking CPU, `current`) records the wakee (`record_wakee`: a flip each time
//!   it wakes another task than the last one, the count halved at most once a
//!   second). Unless the pair looks many-to-many (`wake_wide`: the smaller of the two
//!   flip counts at least the LLC's size and the larger at least that many times the
//!   smaller), a wake-up from another CPU the wakee may use asks `wake_affine`
//!   between the waking CPU and the previous one if the lowest domain spanning both
//!   has `SD_WAKE_AFFINE` ([`wake_affine_domain`]): `wake_affine_idle` (the waking CPU
//!   idle and sharing the LLC with the previous one: the previous one if it is idle,
//!   else the waking one; a `sync` wake-up with the waker alone on its CPU: the
//!   waking CPU; the previous CPU idle: the previous one), else `wake_affine_weight`
//!   (the waking CPU if its load with the wakee, minus the waker's for `sync`, ×100 is
//!   below the previous CPU's ×(100 + (117 − 100)/2), +1 for `sync`), else the
//!   previous CPU. Then `select_idle_sibling` from that target: the target if idle,
//!   the previous CPU if idle and in the target's LLC, the task's recently used CPU
//!   (`recent_used_cpu`, its previous CPU at its last wake-up) if idle and in the
//!   target's LLC, else the first idle CPU of the target's LLC from the target on
//!   (`select_idle_cpu`, wrapping), else the target.
//! * **Fork placement** ([`find_idlest_cpu`], `select_task_rq_fair` for `WF_FORK`):
//!   from the highest of the forking CPU's levels reached through `SD_BALANCE_FORK`,
//!   down: `find_idlest_group` (the allowed group of the lowest kind — has spare
//!   capacity, fully busy, overloaded —, then the most idle CPUs and least
//!   utilisation, or the lowest `avg_load`; taken over the forking CPU's own group
//!   only if it is of a lower kind, or has more idle CPUs, or its load is lower by
//!   more than `imbalance_pct`; a NUMA level keeps a task near its parent while the
//!   idle-CPU difference is at most 2 and the local group runs fewer than
//!   `imb_numa_nr` tasks), then `find_idlest_group_cpu` (the idle CPU that went idle
//!   last, by `idle_stamp`, else the least loaded one), continuing in that CPU's
//!   levels below. A `sync` first wake-up stays on the forking CPU.
//! * **Periodic balance** (`Balance::periodic_balance`, `rebalance_domains`): at each
//!   tick each CPU walks its levels from the lowest; a level is balanced when its
//!   `balance_interval` (×`busy_factor` while the CPU is not idle), in jiffies rounded
//!   up, at least 1 and at most `HZ × CPUs / 10`, has passed since its last balance;
//!   an `SD_SERIALIZE` level only while no other CPU balances one. `load_balance`:
//!   `should_we_balance` (the local group's first idle CPU, or its first CPU, does the
//!   work; otherwise the higher levels are not tried), the groups' statistics
//!   (`update_sg_lb_stats`: load, tasks, idle CPUs, and the kind: overloaded when it
//!   has more tasks than CPUs and its utilisation or runnable figure exceeds its
//!   capacity by `imbalance_pct`, fully busy when it has no spare capacity, else spare),
//!   the busiest group (`update_sd_pick_busiest`), `find_busiest_group`'s tests (a
//!   local group of a higher kind, or overloaded and within `imbalance_pct` of the
//!   busiest or above the average, is balanced; `SD_PREFER_SIBLING` groups with a
//!   task-count difference above 1 force a move; a busy CPU does not pull from a group
//!   that is not overloaded), `calculate_imbalance` (local group with spare capacity:
//!   at a level not sharing the LLC and a busiest group overloaded, fill the local
//!   spare capacity — `migrate_util` —; else half the task-count difference —
//!   `sibling_imbalance` for single-CPU or sibling-preferring groups, the idle-CPU
//!   difference otherwise —, a NUMA level ignoring up to 2 while the local group runs
//!   fewer than `imb_numa_nr` tasks; otherwise move load to bring both groups to the
//!   domain's average — `migrate_load`), `find_busiest_queue` (the most loaded queue,
//!   skipping one whose lone task outweighs the imbalance; the most utilised with two
//!   tasks or more; or the one with the most tasks), then `detach_tasks`: at most
//!   `min(`[`NR_MIGRATE`]`, nr_running)` tasks looked at, none if the source would be
//!   left with fewer than one while this CPU is idle, each subject to
//!   `can_migrate_task` (allowed here, not running, not cache hot — ran less than
//!   `sysctl_sched_migration_cost`, 0.5 ms, ago by the source's clock — unless the
//!   level has failed more than `cache_nice_tries` times in a row), a load move taking
//!   a task whose load shifted right by the failure count fits the remaining
//!   imbalance. Each pulled task is tested for preemption against this CPU's running
//!   one (an idle CPU is kicked). When every task looked at is pinned elsewhere the
//!   source CPU is dropped and the level tried again without it. A pass that moves
//!   nothing counts a failure; an unbalanced pass resets `balance_interval` to
//!   `min_interval`; a balanced one doubles it up to `max_interval` (to
//!   `MAX_PINNED_INTERVAL`, 512 ms, when everything was pinned).
//! * **Newly idle balance** (`Balance::newidle_balance`, `newidle_balance`): a CPU whose
//!   queue runs empty in `schedule()` stamps `idle_stamp` and, unless no queue has a
//!   task waiting (`rd->overload`) or its `avg_idle` is below the lowest level's
//!   `max_newidle_lb_cost`, runs `load_balance` on each `SD_BALANCE_NEWIDLE` level from
//!   the lowest while `avg_idle` covers the cost so far plus the level's
//!   `max_newidle_lb_cost`, stopping at the first pull (one task per pass). The cost
//!   of a level is the platform time the pass took (`sched_clock_cpu` before and
//!   after): virtual time in the simulator, the host's clock in the runtime. Each
//!   level's maximum decays by 1 % a second (`update_newidle_cost`); `avg_idle` (1 ms
//!   at first) moves an eighth of the way to each idle period ended by a wake-up, at
//!   most twice `max_idle_balance_cost`.
//!
//! Left out of the placement: `SIS_UTIL` (the kernel bounds the LLC scan by the LLC's
//! recent utilisation; here the whole LLC is scanned), idle cores (`has_idle_cores`,
//! `select_idle_smt`, `select_idle_core`: the machines have no SMT), clusters, energy-
//! and capacity-aware placement (every CPU has the same capacity, which cancels in
//! `wake_affine_weight`), `WF_CURRENT_CPU`, the per-CPU-kthread stacking rule, NUMA
//! balancing's preferred node, and group scheduling (`task_h_load` is the task's
//! weight). A CPU is idle when it runs nothing and has nothing queued
//! (`available_idle_cpu`; no `SCHED_IDLE` tasks, no idle states). Every CPU the
//! placement tests must be allowed for the task; a result outside its mask falls back
//! to the previous CPU or the first allowed one (`select_fallback_rq`). A task allowed
//! on one CPU only is not placed at all.
//!
//! Left out of the balancing. PELT is not modelled: a queue's load is the sum of its
//! runnable tasks' weights as last published (so a sleeping wakee is not in its
//! previous CPU's load, and `wake_affine_weight` subtracts nothing for it); a CPU's
//! utilisation is its full capacity (1024) when it has a task and 0 when not, its
//! runnable figure 1024 per task, a task's utilisation a full CPU. Active balancing
//! (the stopper pushing a running task) is left out: only waiting tasks move, so a
//! queue whose one task runs is never emptied by balancing. Also left out: the
//! `group_imbalanced` kind (the flag a child domain leaves when pinned tasks kept it
//! unbalanced), misfit, asymmetric-packing and SMT-balance groups, `LBF_DST_PINNED`'s
//! retry with another destination CPU, `LBF_NEED_BREAK` (with at most 32 tasks looked
//! at, the kernel's break at 32 never comes first), nohz idle balancing (every CPU's
//! tick runs here, idle or not, so an idle CPU balances itself at its idle interval),
//! `next_balance` bookkeeping, and the cache-hot rule's next-buddy and NUMA-locality
//! terms. Tasks are looked at in the policy's queue order (`cfs`: by vruntime,
//! `eevdf`: real-time then by deadline), where the kernel walks `cfs_tasks` from its
//! least recently run end. Each policy decides how a moved task keeps its lag
//! (`Balance::move_task`) and which waiting tasks may not leave at all
//! (`Balance::may_leave`).
//!
//! Costs: a `Work::Examine` and a read of the CPU's data per CPU placement tests for
//! idleness, a read of the queue's line per load `wake_affine_weight` reads, a write of
//! the waker's line (`record_wakee`; the wakee's line is already read by the wake-up).
//! Balancing and fork placement: a read of this CPU's data for its domains, a
//! `Work::Examine` and a read of the queue's line per CPU whose statistics a group
//! gathers or `find_busiest_queue` looks at (and of the CPU's data when its queue is
//! empty), a read of each candidate task's line, a read of one machine-wide line for
//! `rd->overload`, both queues locked for a move. `avg_idle` and `idle_stamp` sit on
//! the queue's line, which the wake-up that updates them writes.
//!
//! Observations, free and read by no decision: the placement's counters
//! ([`Wakeups::stats`]) and the balancing's and the migrations' by cause
//! ([`BalanceStats`]), which both policies report with their own.

use crate::common::{self, SchedCommon};
use crate::cpu::{CpuId, CpuMask, Topology, LOCAL_DISTANCE, MAX_CPUS};
use crate::options::{Param, Value};
use crate::platform::{Access, Line, Platform, Work};
use crate::task::TaskId;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

/// Most tasks one periodic balancing pass moves (`sysctl_sched_nr_migrate`).
pub const NR_MIGRATE: usize = 32;

/// `imbalance_pct` of every scheduling domain level above SMT (`sd_init`, Linux v6.6
/// `kernel/sched/topology.c`), which `wake_affine_weight` halves into its bias.
pub const SD_IMBALANCE_PCT: u64 = 117;

mod balancing;
mod domains;
mod fork;
mod placement;
mod scaling;

pub use balancing::*;
pub use domains::*;
pub use fork::*;
pub use placement::*;
pub use scaling::*;
