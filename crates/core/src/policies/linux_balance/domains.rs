//! Scheduling domains (`build_sched_domains`, `sd_init`): the levels each CPU balances
//! and places over.

use super::*;

/// A scheduling domain's behaviour flags (the names of Linux v6.6
/// `include/linux/sched/sd_flags.h`; the bit values are schedlab's).
pub mod sd {
    /// Balance when a CPU is about to go idle (`newidle_balance`).
    pub const BALANCE_NEWIDLE: u32 = 1 << 0;
    /// Balance on `exec`.
    pub const BALANCE_EXEC: u32 = 1 << 1;
    /// Place a forked task with `find_idlest_cpu`.
    pub const BALANCE_FORK: u32 = 1 << 2;
    /// `wake_affine` may pull a wakee to the waking CPU across this domain.
    pub const WAKE_AFFINE: u32 = 1 << 3;
    /// The CPUs share the last-level cache (`SD_SHARE_PKG_RESOURCES`).
    pub const SHARE_PKG_RESOURCES: u32 = 1 << 4;
    /// Only one CPU at a time balances this domain (`SD_SERIALIZE`).
    pub const SERIALIZE: u32 = 1 << 5;
    /// Spread tasks over the child domains first (`SD_PREFER_SIBLING`).
    pub const PREFER_SIBLING: u32 = 1 << 6;
    /// A NUMA level.
    pub const NUMA: u32 = 1 << 7;
}

/// `SCHED_CAPACITY_SCALE`: one CPU's capacity; every CPU here has it.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;
/// `busy_factor` of every domain (`sd_init`, Linux v6.6 `kernel/sched/topology.c`):
/// a busy CPU balances this many times less often.
pub const BUSY_FACTOR: u64 = 16;
/// `sysctl_sched_migration_cost` (Linux v6.6 `kernel/sched/fair.c`): a task that ran
/// less than this long ago is cache hot; also the initial `max_idle_balance_cost`.
pub const MIGRATION_COST_NS: u64 = 500_000;
/// `RECLAIM_DISTANCE` (`node_reclaim_distance`, Linux v6.6 `include/linux/topology.h`):
/// a NUMA level farther than this loses `SD_WAKE_AFFINE`, `SD_BALANCE_FORK` and
/// `SD_BALANCE_EXEC` (`sd_init`).
pub const RECLAIM_DISTANCE: u32 = 30;
/// `NUMA_IMBALANCE_MIN` (Linux v6.6 `kernel/sched/fair.c`): an imbalance of at most
/// this many tasks between NUMA groups is allowed while the destination is lightly
/// loaded (`adjust_numa_imbalance`).
pub const NUMA_IMBALANCE_MIN: i64 = 2;
/// `MAX_PINNED_INTERVAL` (ms, Linux v6.6 `kernel/sched/fair.c`): how far the interval
/// of a domain whose tasks are all pinned may double.
pub const MAX_PINNED_INTERVAL: u64 = 512;

/// One scheduling domain of one CPU (`struct sched_domain` as `sd_init` and
/// `build_sched_domains` make it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    /// `MC` (the LLC, a node here) or `NUMA`.
    pub name: &'static str,
    pub span: CpuMask,
    /// The level's groups: the spans of the level below (`build_sched_groups`), one
    /// CPU each at the lowest level; this CPU's group first, then from this CPU on in
    /// CPU order, wrapping.
    pub groups: Vec<CpuMask>,
    /// [`sd`] flags.
    pub flags: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    /// In ms: `min_interval` is the span's weight, `max_interval` twice it.
    pub min_interval: u64,
    pub max_interval: u64,
    /// `imb_numa_nr`: up to how many running tasks a NUMA level tolerates a small
    /// imbalance (`adjust_numa_imbalance`); 0 elsewhere.
    pub imb_numa_nr: usize,
    /// The groups' `SD_PREFER_SIBLING` (a group carries its child domain's flags).
    pub groups_prefer_sibling: bool,
}

impl Level {
    /// `span_weight`.
    pub fn weight(&self) -> usize {
        self.span.0.count_ones() as usize
    }
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
}

/// What one CPU's copy of a domain changes as it balances.
#[derive(Debug)]
pub(super) struct LevelState {
    /// `balance_interval`, ms.
    pub(super) balance_interval: AtomicU64,
    /// `last_balance`, jiffies.
    pub(super) last_balance: AtomicU64,
    pub(super) nr_balance_failed: AtomicU32,
    /// `max_newidle_lb_cost`, ns.
    pub(super) max_newidle_lb_cost: AtomicU64,
    /// `last_decay_max_lb_cost`, jiffies.
    last_decay: AtomicU64,
}

/// A run queue's idle statistics (`struct rq`: `avg_idle`, `idle_stamp`,
/// `max_idle_balance_cost`).
#[derive(Debug)]
pub(super) struct RqIdle {
    pub(super) avg_idle: AtomicU64,
    /// When the CPU last went newly idle and has not had a task since (0: not idle).
    pub(super) idle_stamp: AtomicU64,
    pub(super) max_idle_balance_cost: AtomicU64,
}

/// The scheduling domains of every CPU and their balancing state.
#[derive(Debug)]
pub struct Domains {
    pub(super) levels: Vec<Vec<Level>>,
    pub(super) state: Vec<Vec<LevelState>>,
    pub(super) rq: Box<[RqIdle]>,
    /// Timer ticks per second (`HZ`).
    hz: u64,
    /// `max_load_balance_interval`: `HZ * ncpus / 10` jiffies.
    max_lb_interval: u64,
    /// The `SD_SERIALIZE` balancing lock.
    pub(super) serialize: AtomicBool,
    /// Observations of placement and balancing.
    pub(super) stats: BalanceStats,
}

fn mask_of(cpus: impl Iterator<Item = CpuId>) -> CpuMask {
    CpuMask(cpus.fold(0u64, |m, c| m | 1u64 << c))
}

pub(super) fn cpus_of(m: CpuMask) -> impl Iterator<Item = CpuId> {
    (0..MAX_CPUS).filter(move |&c| m.contains(c))
}

pub(super) fn weight_of(m: CpuMask) -> usize {
    m.0.count_ones() as usize
}

impl Domains {
    /// The domains `build_sched_domains` makes for `topo` (see the module doc), each
    /// level's `imbalance_pct` `imbalance_pct`, at `hz` ticks per second.
    pub fn new(topo: &Topology, hz: u32, imbalance_pct: u32) -> Domains {
        let n = topo.ncpus();
        let node = &topo.node_of;
        let nnodes = topo.nnodes();
        // The distances above local, in increasing order (`sched_domains_numa_distance`).
        let mut dists: Vec<u32> = (0..nnodes)
            .flat_map(|a| (0..nnodes).map(move |b| (a, b)))
            .map(|(a, b)| topo.node_distance(a, b))
            .filter(|&d| d > LOCAL_DISTANCE)
            .collect();
        dists.sort_unstable();
        dists.dedup();
        // Candidate levels, before degenerate ones go: MC (the node), then one NUMA
        // level per distance. Their spans, by level and CPU.
        let mc = |c: CpuId| mask_of((0..n).filter(|&i| node[i] == node[c]));
        let mut spans: Vec<Vec<CpuMask>> = vec![(0..n).map(mc).collect()];
        for &d in &dists {
            spans
                .push((0..n).map(|c| mask_of((0..n).filter(|&i| topo.node_distance(node[c], node[i]) <= d))).collect());
        }
        // `imb_numa_nr` (`build_sched_domains`): the first level above the LLC spans
        // one LLC (the node), so `imb` is its weight / 8, at least 1, scaled by the
        // level's weight over the first NUMA level's.
        let node_weight = |c: CpuId| weight_of(spans[0][c]);
        let levels: Vec<Vec<Level>> = (0..n)
            .map(|c| {
                let mut out: Vec<Level> = Vec::new();
                for (k, row) in spans.iter().enumerate() {
                    let span = row[c];
                    let groups = {
                        let mut g: Vec<CpuMask> = Vec::new();
                        for i in (0..n).map(|j| (c + j) % n).filter(|&i| span.contains(i)) {
                            let m = if k == 0 { CpuMask::single(i) } else { spans[k - 1][i] };
                            if !g.contains(&m) {
                                g.push(m);
                            }
                        }
                        g
                    };
                    let base = sd::BALANCE_NEWIDLE | sd::BALANCE_EXEC | sd::BALANCE_FORK | sd::WAKE_AFFINE;
                    let w = weight_of(span) as u64;
                    let level = if k == 0 {
                        Level {
                            name: "MC",
                            span,
                            groups,
                            flags: base | sd::PREFER_SIBLING | sd::SHARE_PKG_RESOURCES,
                            imbalance_pct,
                            cache_nice_tries: 1,
                            min_interval: w,
                            max_interval: 2 * w,
                            imb_numa_nr: 0,
                            groups_prefer_sibling: false,
                        }
                    } else {
                        let d = dists[k - 1];
                        let mut flags = base | sd::NUMA | sd::SERIALIZE;
                        if d > RECLAIM_DISTANCE {
                            flags &= !(sd::BALANCE_EXEC | sd::BALANCE_FORK | sd::WAKE_AFFINE);
                        }
                        let imb = (node_weight(c) >> 3).max(1);
                        let imb_span = weight_of(spans[1][c]).max(1);
                        Level {
                            name: "NUMA",
                            span,
                            groups,
                            flags,
                            imbalance_pct,
                            cache_nice_tries: 2,
                            min_interval: w,
                            max_interval: 2 * w,
                            imb_numa_nr: imb * (weight_of(span) / imb_span).max(1),
                            // The first NUMA level's groups are nodes, whose domain
                            // (`NODE`) prefers siblings; a NUMA level's does not.
                            groups_prefer_sibling: k == 1,
                        }
                    };
                    // `sd_degenerate` (one CPU) and `sd_parent_degenerate` (the span
                    // of the level kept below).
                    let degenerate = level.weight() <= 1 || out.last().is_some_and(|l| l.span == level.span);
                    if !degenerate {
                        out.push(level);
                    }
                }
                out
            })
            .collect();
        let state = levels
            .iter()
            .map(|ls| {
                ls.iter()
                    .map(|l| LevelState {
                        balance_interval: AtomicU64::new(l.min_interval),
                        last_balance: AtomicU64::new(0),
                        nr_balance_failed: AtomicU32::new(0),
                        max_newidle_lb_cost: AtomicU64::new(0),
                        last_decay: AtomicU64::new(0),
                    })
                    .collect()
            })
            .collect();
        let rq = (0..n)
            .map(|_| RqIdle {
                avg_idle: AtomicU64::new(2 * MIGRATION_COST_NS),
                idle_stamp: AtomicU64::new(0),
                max_idle_balance_cost: AtomicU64::new(MIGRATION_COST_NS),
            })
            .collect();
        let hz = hz.max(1) as u64;
        Domains {
            levels,
            state,
            rq,
            hz,
            max_lb_interval: (hz * n as u64 / 10).max(1),
            serialize: AtomicBool::new(false),
            stats: BalanceStats::default(),
        }
    }

    /// CPU `cpu`'s domains, lowest first (none on a machine of one CPU).
    pub fn levels(&self, cpu: CpuId) -> &[Level] {
        &self.levels[cpu]
    }

    /// `balance_interval` (ms) of `cpu`'s level `k`.
    pub fn balance_interval(&self, cpu: CpuId, k: usize) -> u64 {
        self.state[cpu][k].balance_interval.load(Relaxed)
    }

    /// `nr_balance_failed` of `cpu`'s level `k`.
    pub fn nr_balance_failed(&self, cpu: CpuId, k: usize) -> u32 {
        self.state[cpu][k].nr_balance_failed.load(Relaxed)
    }

    /// The placement and balancing counters (observation).
    pub fn stats(&self) -> &BalanceStats {
        &self.stats
    }

    /// `avg_idle` of `cpu`'s queue (ns).
    pub fn avg_idle(&self, cpu: CpuId) -> u64 {
        self.rq[cpu].avg_idle.load(Relaxed)
    }

    /// `jiffies` at `now` ns.
    pub(super) fn jiffies(&self, now: u64) -> u64 {
        now / (1_000_000_000 / self.hz).max(1)
    }

    /// `get_sd_balance_interval`: level `k`'s interval in jiffies, ×`busy_factor`
    /// when the CPU is busy, at least 1 and at most `max_load_balance_interval`.
    pub fn interval_jiffies(&self, cpu: CpuId, k: usize, busy: bool) -> u64 {
        let ms = self.balance_interval(cpu, k) * if busy { BUSY_FACTOR } else { 1 };
        // `msecs_to_jiffies` rounds up.
        (ms * self.hz).div_ceil(1000).clamp(1, self.max_lb_interval)
    }

    /// `update_newidle_cost`: raise `cpu`'s level `k`'s `max_newidle_lb_cost` to
    /// `cost`, or decay it by 1 % once a second. Returns whether it decayed.
    pub(super) fn update_newidle_cost(&self, cpu: CpuId, k: usize, cost: u64, jiffies: u64) -> bool {
        let st = &self.state[cpu][k];
        if cost > st.max_newidle_lb_cost.load(Relaxed) {
            st.max_newidle_lb_cost.store(cost, Relaxed);
            st.last_decay.store(jiffies, Relaxed);
        } else if jiffies > st.last_decay.load(Relaxed) + self.hz {
            st.max_newidle_lb_cost.store(st.max_newidle_lb_cost.load(Relaxed) * 253 / 256, Relaxed);
            st.last_decay.store(jiffies, Relaxed);
            return true;
        }
        false
    }

    /// A task was woken onto `cpu` at `now`, its queue's clock (`ttwu_do_activate`;
    /// the fields are on the queue's line the wake-up writes): if the CPU went
    /// newly idle, fold the idle period into `avg_idle` (an eighth of the difference,
    /// `update_avg`), at most twice `max_idle_balance_cost`.
    pub fn note_wakeup(&self, cpu: CpuId, now: u64) {
        let rq = &self.rq[cpu];
        let stamp = rq.idle_stamp.swap(0, Relaxed);
        if stamp != 0 {
            let delta = now.saturating_sub(stamp) as i64;
            let avg = rq.avg_idle.load(Relaxed) as i64;
            let new = (avg + (delta - avg) / 8).max(0) as u64;
            rq.avg_idle.store(new.min(2 * rq.max_idle_balance_cost.load(Relaxed)), Relaxed);
        }
    }
}

/// Does `this`'s lowest domain spanning `prev` have `SD_WAKE_AFFINE`? Within a node
/// (the LLC) always; across nodes when their distance is at most
/// [`RECLAIM_DISTANCE`] (the NUMA level of that distance keeps the flag).
pub fn wake_affine_domain(common: &SchedCommon, this: CpuId, prev: CpuId) -> bool {
    let topo = &common.topo;
    shares_cache(common, this, prev) || topo.node_distance(topo.node_of[this], topo.node_of[prev]) <= RECLAIM_DISTANCE
}
