//! Measure this machine's costs and turn them into a simulator machine (`host-N`).
//!
//! Every number of the host machine's cost model comes from a measurement made here,
//! at run time, with the method named beside it; the machine uses a nominal 1000 MHz
//! clock so that one "cycle" is one nanosecond of this host. Nothing is fitted to a
//! throughput: the measurements are micro-benchmarks of the parts the simulator
//! charges for (a task switch, a wake-up of a parked worker, a channel operation, a
//! cache-line transfer, the policy's own scan), and the comparison with real runs in
//! [`crate::validate`] is then a test of the model.
//!
//! The top of the calibration's files: it runs the measurements (`timing.rs`, the
//! primitives; `policycost.rs`, `xcpu.rs`, `backoff.rs`, `spread.rs`,
//! `workerstart.rs`, `tickphase.rs`) and imports from them, never the other way.

use crate::backoff::{self, LockBackoff};
use crate::policycost::{dss, dss_prices, policy_costs, tree_op_ns, L2_HIT_NS, LIST_OP_NS};
use crate::spread::{self, Spreads};
use crate::timing::{median, pin, runtime, time_per, BATCH};
use crate::xcpu::{self, CrossCpu};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_core::{NullPlatform, TaskParams};
use schedlab_rt::park::Parker;
use schedlab_sim::{CostParams, HardwareCosts, HostKnobs, KernelCosts, Machine};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::policycost::PolicyCosts;

/// The measurements, in ns.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Calibration {
    pub workers: usize,
    /// Round trip of a cache line between two pinned threads (atomic ping-pong; the
    /// median of five runs, each the median of batches of 100 round trips).
    pub atomic_rtt_ns: f64,
    /// Dependent load from a 64 MiB random cycle (memory latency).
    pub mem_latency_ns: f64,
    /// A dependent load served by the last-level cache: the price of a line the L2 no
    /// longer holds but the L3 does (the host machine's `llc_latency_ns`). From two
    /// random cycles, one through half the L2 (all hits) and one through twice it (half
    /// of its loads still hit the L2): the second's time less the hits' share, per
    /// miss. Twice, not more: the L3 is shared with the other users of the machine, and
    /// under their load a 3–4 MiB cycle here no longer stays in it (80–170 ns per load,
    /// against 10–11 ns for 2 MiB), which would measure its share, not its latency.
    /// At least the L2 hit.
    pub llc_latency_ns: f64,
    /// This machine's L2 as Linux describes it (`/sys/devices/system/cpu/cpu0/cache`):
    /// size in KiB, ways, line bytes; [`FALLBACK_L2`] where that is not readable. The
    /// host machine's modelled L2 has this geometry.
    pub l2: (u32, u32, u32),
    /// One `yield_now` re-dispatch on one worker of the fast runtime (task switch).
    pub dispatch_ns: f64,
    /// One spawn from a task on a policy runtime, of a task that takes an exited
    /// task's id (its block already mapped), less the policy's own `task_new` +
    /// `wake_up` (the simulator charges those through the policy's work):
    /// [`policy_spawns`].
    pub spawn_ns: f64,
    /// What a spawn onto a never-used task block adds (its first page touched: a page
    /// fault): [`policy_spawns`].
    pub task_block_fresh_ns: f64,
    /// Spawn + run + join of an empty task on the fast runtime, one worker. Printed, not
    /// used as the host's `fork_cycles`: the fast scheduler's spawn has
    /// no task table, no policy and no task block, which every policy row's spawn has.
    pub fast_spawn_ns: f64,
    /// Unbounded async-channel send, and receive of an available message.
    pub send_ns: f64,
    pub recv_ns: f64,
    /// Half a ping-pong round trip between two tasks spawned on different workers of
    /// the fast runtime, minus send, receive and dispatch. Printed, not used: `spawn_on`
    /// only places a task's start, and the fast runtime's wake-ups bring the pair onto
    /// one worker, so this is not a cross-CPU wake-up (`cross` measures that).
    pub wake_ns: f64,
    /// Uncontended lock + unlock of the runtime's policy-lock mutex (`schedlab_rt::PolicyMutex`).
    pub lock_ns: f64,
    /// DSS's `schedule()`, `wake_up` and tick on the free platform, and what the
    /// simulator charges for the same calls.
    pub dss: PolicyCosts,
    /// One insert or removal in `fair`'s vruntime-ordered run queue: half of what its
    /// `schedule()` (prev runnable: one insert, one removal) costs beyond DSS's with
    /// one task, on the zero-cost platform ([`tree_op_ns`]).
    pub tree_op_ns: f64,
    /// Wake-up of a parked worker: from `Parker::unpark` on one pinned thread to the
    /// parked thread (pinned on the other CPU, asleep in the futex for 200 µs) running
    /// again; the median of the rounds.
    pub park_wake_ns: f64,
    /// How far apart consecutive workers of a fresh runtime start their loops, and so
    /// their tick grids (`crate::workerstart`): the host machine's `tick_stagger_ns`.
    pub worker_start_ns: f64,
    /// Where a fresh runtime's workers' first ticks fall after its root task first
    /// runs (`crate::tickphase`): the host machine's `tick_first_*` and `tick_other_*`;
    /// and the root's first run on the runtime's clock (`clock_ns`; the clock starts
    /// once the policy is built, so one policy measures it for all): `clock_origin_*`.
    pub tick_phases: crate::tickphase::Ranges,
    /// The runtime's idle spin before a worker parks (its setting, not a measurement).
    pub idle_spin_ns: f64,
    /// A contended run-queue lock's waiter: one `pause` and one `sched_yield` of
    /// `parking_lot`'s back-off ([`crate::backoff`]).
    pub lock_backoff: LockBackoff,
    /// Share of the CPUs' time other processes took while a pinned thread per CPU
    /// spun reading the clock (gaps over 20 µs), in percent: the load of the other
    /// users of this machine, which neither engine's model contains. Not used by the
    /// machine; printed to explain misses.
    pub stolen_pct: f64,
    /// What a hop between two workers costs beyond the hot-cache operations above
    /// (`crate::xcpu`): the reschedule IPI's send and latency, a lock and a task
    /// header last written by the other CPU, a blocking receive, the channel's lines.
    pub cross: CrossCpu,
    /// Event-to-event spread of single switches, channel operations and DSS hops
    /// (`crate::spread`): the host machine's `cost_jitter_pct`.
    pub spreads: Spreads,
}

/// Both ends run on threads of their own: pinning the caller would also confine every
/// runtime it builds later (a new thread inherits its creator's CPU mask, and
/// `core_affinity` lists only the CPUs of that mask), which once put both workers
/// of every validation run on CPU 0.
fn atomic_rtt(n: u64) -> f64 {
    let flag = Arc::new(AtomicU64::new(0));
    let f2 = flag.clone();
    let echo = std::thread::spawn(move || {
        pin(1);
        for i in 0..n {
            while f2.load(Ordering::Acquire) != 2 * i + 1 {
                std::hint::spin_loop();
            }
            f2.store(2 * i + 2, Ordering::Release);
        }
    });
    let ping = std::thread::spawn(move || {
        pin(0);
        let mut batches = Vec::new();
        let mut t = Instant::now();
        for i in 0..n {
            flag.store(2 * i + 1, Ordering::Release);
            while flag.load(Ordering::Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
            if (i + 1) % BATCH == 0 {
                batches.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
                t = Instant::now();
            }
        }
        median(batches)
    });
    let ns = ping.join().expect("ping thread");
    echo.join().expect("echo thread");
    ns
}

/// Memory latency: a cycle far larger than any cache here.
const MEM_CHASE_BYTES: usize = 64 << 20;
/// The host machine's L2 where sysfs does not describe one.
pub const FALLBACK_L2: (u32, u32, u32) = (512, 8, 64);

/// This machine's unified level-2 cache from sysfs (CPU 0's), if it is described and
/// has a geometry the simulator models (a power-of-two number of sets).
fn l2_geometry() -> Option<(u32, u32, u32)> {
    let base = "/sys/devices/system/cpu/cpu0/cache";
    (0..8).find_map(|i| {
        let read = |f: &str| std::fs::read_to_string(format!("{base}/index{i}/{f}")).ok();
        if read("level")?.trim() != "2" || read("type")?.trim() != "Unified" {
            return None;
        }
        let kb: u32 = read("size")?.trim().strip_suffix('K')?.parse().ok()?;
        let ways: u32 = read("ways_of_associativity")?.trim().parse().ok()?;
        let line: u32 = read("coherency_line_size")?.trim().parse().ok()?;
        let sets = (kb as u64 * 1024).checked_div(ways as u64 * line as u64)?;
        (line.is_power_of_two() && sets.is_power_of_two() && sets * ways as u64 * line as u64 == kb as u64 * 1024)
            .then_some((kb, ways, line))
    })
}

/// The last-level cache's load latency (see [`Calibration::llc_latency_ns`]).
fn llc_latency(l2_kb: u32, steps: u64) -> f64 {
    let l2 = l2_kb as usize * 1024;
    let hit = chase_latency(l2 / 2, steps, true);
    let mixed = chase_latency(2 * l2, steps, true);
    ((mixed - 0.5 * hit) / 0.5).max(hit)
}

/// Mean time of one dependent load in a random cycle through `bytes` of 4-byte slots;
/// `warm`: after one whole turn of the cycle (for a cycle meant to sit in a cache).
fn chase_latency(bytes: usize, steps: u64, warm: bool) -> f64 {
    // Sattolo's algorithm: one random cycle through every slot.
    let n = bytes / 4;
    let mut next: Vec<u32> = (0..n as u32).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for i in (1..n).rev() {
        let j = rng.gen_range(0..i);
        next.swap(i, j);
    }
    let mut p = 0u32;
    if warm {
        for _ in 0..n {
            p = next[p as usize];
        }
    }
    let ns = time_per(steps, || p = next[p as usize]);
    std::hint::black_box(p);
    ns
}

/// The hot `try_send` + `try_recv` pair (`pair`, timed as a loop) split between its
/// send and its receive in the ratio of their own hot times (`send_hot`, `recv_hot`:
/// each operation timed alone, the clock read taken off; `xcpu::measure`). Half
/// each would be wrong: a send does more (it CASes the tail, writes the slot
/// and reads the receive side's event) than a receive (here 41–50 against 30 ns), and
/// the split sets how fast a producer feeds its consumer (docs/traces.md, "Chat
/// under DSS and MQS: the switches the simulator lacks"). Half each when either time is not positive.
pub fn split_pair(pair: f64, send_hot: f64, recv_hot: f64) -> (f64, f64) {
    if send_hot <= 0.0 || recv_hot <= 0.0 {
        return (pair / 2.0, pair / 2.0);
    }
    let send = pair * send_hot / (send_hot + recv_hot);
    (send, pair - send)
}

/// The atomic round trip between CPUs 0 and 1 now (ns; about a millisecond of
/// measuring): where the hypervisor has put the two vCPUs, probed before each real run
/// of [`crate::validate`] to see whether they moved since the calibration.
pub fn placement_probe() -> f64 {
    atomic_rtt(20 * BATCH)
}

/// Spawns timed together by [`policy_spawns`]: as many as hackbench's root makes
/// (41 tasks), about Chat's per room.
const SPAWNS_PER_RUNTIME: usize = 40;

/// What a spawn costs a workload's task on a policy scheduler beyond the policy's own
/// `task_new` + `wake_up`, and what a never-used task block adds to it. A task running
/// on a one-worker DSS runtime built as `validate` builds its runtimes (default
/// capacity, so lazily mapped kernel-layout task blocks) spawns `k` empty tasks, timed
/// together; each gets an id no task had on that runtime, as the workloads' spawns do
/// while their task count grows, so the policy's `task_new` is the first touch of the
/// task's 8 KB block (a page fault). After those tasks have exited, a second task
/// spawns `k` more, which take the freed ids (the table's free list is a stack) and
/// touch blocks already mapped, as a spawn after an exit does. One worker, so no
/// wake-up IPIs (the simulator prices those apart); the spawned tasks run only after
/// the timing. Medians over `rounds` fresh runtimes, per spawn. Returns (the recycled
/// spawn less DSS's `task_new` + `wake_up` of a fresh id on the zero-cost platform,
/// which the simulator charges as DSS's work; the fresh spawn less the recycled one).
fn policy_spawns(rounds: usize, k: usize) -> Result<(f64, f64), String> {
    let (mut fresh, mut recycled) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for _ in 0..rounds {
        let rt = schedlab_rt::Builder::new()
            .workers(1)
            .policy("dss")
            .pin(true)
            .build()
            .map_err(|e| format!("calibration runtime (dss, 1 worker): {e}"))?;
        let batch = || async move {
            let t = Instant::now();
            let hs: Vec<_> = (0..k).map(|_| schedlab_rt::spawn(async {})).collect();
            let took = t.elapsed().as_nanos() as f64 / k as f64;
            for h in hs {
                h.await.map_err(|e| format!("calibration spawn: {e:?}"))?;
            }
            Ok::<f64, String>(took)
        };
        let run = || rt.block_on(rt.spawn(batch())).map_err(|e| format!("calibration spawn task: {e:?}"))?;
        fresh.push(run()?);
        recycled.push(run()?);
        rt.shutdown();
    }
    let policy_ns = median(
        (0..rounds)
            .map(|_| {
                let p = NullPlatform::new(0);
                let pol = dss(&p, k + 1);
                let t = Instant::now();
                for id in 0..k as schedlab_core::TaskId {
                    pol.task_new(&p, id, &TaskParams::default(), None);
                    pol.wake_up(&p, id, false);
                }
                t.elapsed().as_nanos() as f64 / k as f64
            })
            .collect::<Vec<f64>>(),
    );
    let (fresh, recycled) = (median(fresh), median(recycled));
    Ok(((recycled - policy_ns).max(1.0), (fresh - recycled).max(0.0)))
}

/// Measure everything (a few seconds; `quick` for CI). Fails only if a runtime's
/// worker threads cannot start.
pub fn calibrate(workers: usize, quick: bool) -> Result<Calibration, crate::ValidateError> {
    let n = if quick { 20_000 } else { 200_000 };
    // The median of five: on a VM the two vCPUs sometimes sit on SMT siblings of one
    // host core (a ~25 ns round trip) and usually not (~230 ns); one sample can be
    // either, and it sets every simulated cache-line transfer.
    let mut rtts: Vec<f64> = (0..5).map(|_| atomic_rtt(n / 5)).collect();
    rtts.sort_by(f64::total_cmp);
    let atomic_rtt_ns = rtts[2];
    let chase_steps = if quick { 200_000 } else { 2_000_000 };
    let mem_latency_ns = chase_latency(MEM_CHASE_BYTES, chase_steps, false);
    let l2 = l2_geometry().unwrap_or(FALLBACK_L2);
    let llc_latency_ns = llc_latency(l2.0, chase_steps);
    let (tx, rx) = async_channel::unbounded::<()>();
    let pair = time_per(n, || {
        tx.try_send(()).unwrap();
        rx.try_recv().unwrap();
    });
    // The runtime's policy-lock mutex (`parking_lot`'s, or the `spin-lock` build's).
    let lock = schedlab_rt::PolicyMutex::new(0u64);
    let lock_ns = time_per(n, || *schedlab_rt::lock_policy_mutex(&lock) += 1);

    let one = runtime(1)?;
    let dispatch_ns = one_task_yields(&one, n);
    let fast_spawn_ns = {
        let t = Instant::now();
        let hs: Vec<_> = (0..n).map(|_| one.spawn(async {})).collect();
        for h in hs {
            one.block_on(h).expect("empty task");
        }
        t.elapsed().as_nanos() as f64 / n as f64
    };
    one.shutdown();
    let (spawn_ns, task_block_fresh_ns) =
        policy_spawns(if quick { 5 } else { 25 }, SPAWNS_PER_RUNTIME).map_err(crate::ValidateError::Runtime)?;

    let two = runtime(workers.max(2))?;
    let rtt = cross_worker_rtt(&two, n / 4);
    two.shutdown();
    let wake_ns = (rtt / 2.0 - pair - dispatch_ns).max(1.0);
    let dss = policy_costs(quick);
    let tree_op_ns = tree_op_ns(if quick { 20_000 } else { 200_000 }, dss.schedule_base_ns);
    let park_wake_ns = park_wake(if quick { 100 } else { 500 });
    let lock_backoff = backoff::measure(quick);
    let cross = xcpu::measure(quick, pair);
    let (send_ns, recv_ns) =
        split_pair(pair, cross.chan_send_hot_ns - cross.clock_read_ns, cross.chan_recv_hot_ns - cross.clock_read_ns);
    let spreads = spread::measure(quick)?;
    let worker_start_ns = crate::workerstart::stagger_ns(workers.max(2), if quick { 9 } else { 31 });
    let tick_rounds = crate::tickphase::measure(workers, schedlab_rt::DEFAULT_HZ, "dss", if quick { 9 } else { 31 })?;
    let tick_phases = crate::tickphase::ranges(&tick_rounds);
    let stolen_pct = stolen_pct(workers.max(2), Duration::from_millis(if quick { 20 } else { 100 }));
    Ok(Calibration {
        workers,
        atomic_rtt_ns,
        mem_latency_ns,
        llc_latency_ns,
        l2,
        dispatch_ns,
        spawn_ns,
        task_block_fresh_ns,
        fast_spawn_ns,
        send_ns,
        recv_ns,
        wake_ns,
        lock_ns,
        dss,
        tree_op_ns,
        park_wake_ns,
        worker_start_ns,
        tick_phases,
        idle_spin_ns: schedlab_rt::DEFAULT_IDLE_SPIN.as_nanos() as f64,
        lock_backoff,
        stolen_pct,
        cross,
        spreads,
    })
}

/// The median time from `unpark` to the parked thread running, over `rounds` rounds
/// between two threads pinned on CPUs 0 and 1, with the runtime's own [`Parker`]. The
/// waker waits 200 µs after the sleeper's last round so that it is asleep in the futex
/// (a worker parks after its 50 µs spin), not spinning.
pub fn park_wake(rounds: u64) -> f64 {
    let parker = Arc::new(Parker::new());
    let base = Instant::now();
    // The unpark's time in ns since `base`, plus one (0: no unpark pending).
    let sent = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let (p2, s2, d2) = (parker.clone(), sent.clone(), done.clone());
    let sleeper = std::thread::spawn(move || {
        pin(1);
        let mut samples = Vec::with_capacity(rounds as usize);
        for i in 0..rounds {
            let t = loop {
                p2.park();
                let t = s2.swap(0, Ordering::AcqRel);
                if t != 0 {
                    break t - 1;
                }
            };
            samples.push((base.elapsed().as_nanos() as u64).saturating_sub(t));
            d2.store(i + 1, Ordering::Release);
        }
        samples
    });
    let waker = std::thread::spawn(move || {
        pin(0);
        for i in 0..rounds {
            while done.load(Ordering::Acquire) != i {
                std::hint::spin_loop();
            }
            let t = Instant::now();
            while t.elapsed() < Duration::from_micros(200) {
                std::hint::spin_loop();
            }
            sent.store(base.elapsed().as_nanos() as u64 + 1, Ordering::Release);
            parker.unpark();
        }
    });
    waker.join().expect("waker thread");
    let mut s = sleeper.join().expect("sleeper thread");
    s.sort_unstable();
    s[s.len() / 2] as f64
}

/// Percent of `dur` that other processes took from a thread pinned on each CPU
/// spinning on the clock (a gap of more than 20 µs between two reads is time the
/// thread did not run), averaged over the CPUs.
fn stolen_pct(cpus: usize, dur: Duration) -> f64 {
    let hs: Vec<_> = (0..cpus)
        .map(|c| {
            std::thread::spawn(move || {
                pin(c);
                let start = Instant::now();
                let (mut last, mut lost) = (start, Duration::ZERO);
                while last - start < dur {
                    let now = Instant::now();
                    if now - last > Duration::from_micros(20) {
                        lost += now - last;
                    }
                    last = now;
                }
                100.0 * lost.as_secs_f64() / (last - start).as_secs_f64()
            })
        })
        .collect();
    hs.into_iter().map(|h| h.join().expect("steal probe")).sum::<f64>() / cpus as f64
}

fn one_task_yields(rt: &schedlab_rt::Runtime, n: u64) -> f64 {
    let h = rt.spawn(async move {
        let mut batches = Vec::new();
        for _ in 0..(n / BATCH).max(1) {
            let t = Instant::now();
            for _ in 0..BATCH {
                schedlab_rt::yield_now().await;
            }
            batches.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
        }
        median(batches)
    });
    rt.block_on(h).expect("yield task")
}

fn cross_worker_rtt(rt: &schedlab_rt::Runtime, n: u64) -> f64 {
    let (a_tx, a_rx) = async_channel::unbounded::<()>();
    let (b_tx, b_rx) = async_channel::unbounded::<()>();
    let n = (n / BATCH).max(1) * BATCH;
    let pong = rt.spawn_on(1, async move {
        for _ in 0..n {
            a_rx.recv().await.unwrap();
            b_tx.send(()).await.unwrap();
        }
    });
    let ping = rt.spawn_on(0, async move {
        let mut batches = Vec::new();
        for _ in 0..n / BATCH {
            let t = Instant::now();
            for _ in 0..BATCH {
                a_tx.send(()).await.unwrap();
                b_rx.recv().await.unwrap();
            }
            batches.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
        }
        median(batches)
    });
    let rtt = rt.block_on(ping).expect("ping");
    rt.block_on(pong).expect("pong");
    rtt
}

impl Calibration {
    /// The simulator machine these measurements describe.
    pub fn machine(&self) -> Machine {
        let c = |ns: f64| ns.round().max(1.0) as u32;
        // `tick_phase = "boot"`: `validate` builds a fresh runtime right before each
        // real run, and each worker's tick grid starts with its loop (`tick_first_*`,
        // `tick_other_*`; docs/traces.md, "`fair` hackbench: the start-up", "O(1)
        // hackbench: the first idle balance").
        let (goodness_ns, schedule_entry_ns, wakeup_entry_ns) = dss_prices(&self.dss, self.lock_ns);
        let costs = CostParams {
            kernel: KernelCosts {
                schedule_entry_cycles: c(schedule_entry_ns),
                wakeup_entry_cycles: c(wakeup_entry_ns),
                goodness_cycles: c(goodness_ns),
                list_op_cycles: LIST_OP_NS as u32,
                recalc_cycles: c(goodness_ns),
                tick_cycles: c(self.dss.tick_ns),
                examine_cycles: 1,
                tree_op_cycles: c(self.tree_op_ns),
                context_switch_cycles: c(self.dispatch_ns),
                mm_switch_cycles: 0,
                // A runtime has no system calls: a send or receive is a channel operation.
                syscall_cycles: 0,
                send_cycles: c(self.send_ns),
                recv_cycles: c(self.recv_ns),
                copy_cycles_per_kb: 0,
                fork_cycles: c(self.spawn_ns),
                exit_cycles: 1,
            },
            hw: HardwareCosts {
                lock_cycles: c(self.lock_ns),
                l2_hit_cycles: L2_HIT_NS as u32,
                // The `need_resched` store and the unpark (a swap: the target spins).
                ipi_send_cycles: c(self.cross.ipi_send_ns),
                mem_latency_ns: c(self.mem_latency_ns),
                // A line evicted from the modelled L2 comes back from the L3, not from
                // memory (both measured; an L3 slower than memory is no L3).
                llc_latency_ns: c(self.llc_latency_ns.min(self.mem_latency_ns)),
                c2c_latency_ns: c(self.atomic_rtt_ns / 2.0),
                // From the end of the send: the simulator charges `ipi_send` before the latency.
                // The target can see the flag while the sender is still in its unpark, so the
                // median can round to 0 (it did under CI load); the machine description wants a
                // positive latency, and 1 ns is the nearest it can say.
                ipi_latency_ns: c(self.cross.ipi_after_send_ns),
                // One node: no remote cache.
                remote_cache_ns: 0,
                // Lines the other CPU wrote, read as a chain and as independent loads: how
                // many misses the core overlaps where a policy marks the accesses independent.
                mlp: self.cross.mlp(),
                // The same chain with every line written: a store that costs the chain
                // nothing more retires into a store buffer (docs/cost-model.md, "The store
                // buffer"; DSS hackbench's schedule moves with it through the simulator's
                // lock order: docs/traces.md, "Lock order in virtual
                // time").
                store_buffer: self.cross.store_buffer(),
            },
            // What the runtime adds to the model (`HostKnobs`: every preset's are 0).
            host: HostKnobs {
                task_block_fresh_ns: self.task_block_fresh_ns.round() as u32,
                // The IPI latency (a wake of a spinning worker) is already in the measured
                // unpark-to-run time.
                park_wake_ns: (self.park_wake_ns - self.cross.ipi_after_send_ns).max(0.0).round() as u32,
                idle_spin_ns: self.idle_spin_ns.round() as u32,
                clock_read_cycles: c(self.cross.clock_read_ns),
                recv_block_cycles: c(self.cross.recv_block_ns),
                chan_send_xcpu_ns: self.cross.chan_send_xcpu_ns.round() as u32,
                chan_recv_xcpu_ns: self.cross.chan_recv_xcpu_ns.round() as u32,
                // Charged. On a calibration with a 210 ns line transfer the registration's
                // +120 ns takes the simulated DSS ping-pong from 284 k to 167 k round trips/s
                // (wake-up latency +860 ns): not a price amplified but a decision, the
                // registration delaying the waker's own `schedule()` past the IPI'd CPU's, so
                // that the woken task runs there, as on the runtime (its traces: 92 % of DSS
                // hops on the IPI'd CPU), instead of on the waker's CPU with no IPI and no line
                // transfer on the critical path (docs/traces.md, "Ping-pong: one hop priced
                // step by step").
                recv_register_xcpu_ns: self.cross.recv_register_xcpu_ns.max(0.0).round() as u32,
                notify_xcpu_ns: self.cross.notify_xcpu_ns.max(0.0).round() as u32,
                // A hand-off is priced as measured, transfer included (`lock_remote_ns`), not
                // as the transfer (atomic round trip / 2) plus the measurement less the lock
                // and that transfer, clipped at 0: on SMT siblings the measurement (20 ns) is
                // below lock (10) + transfer (24), and that reading charges 34 ns for a 20 ns
                // hand-off, twice per ping-pong hop.
                lock_handoff_ns: 0,
                lock_remote_ns: (self.cross.lock_handoff_ns - self.lock_ns).max(1.0).round() as u32,
                // A contended acquire's waiter backs off as the runtime's lock does: the step
                // prices measured, the step counts the library's (`crate::backoff`;
                // `parking_lot`'s, or none for the `spin-lock` build's polling waiter).
                lock_pause_ns: c(self.lock_backoff.pause_ns),
                lock_spin_steps: backoff::runtime_waiter().spin_steps,
                lock_yield_ns: c(self.lock_backoff.yield_ns),
                lock_yields: backoff::runtime_waiter().yields,
                // Not the parked phase (a waiter past its last yield keeps polling): the
                // simulator grants a lock in event order, so a waiter's grant, once made,
                // holds off every later acquire, where the real lock is free while its
                // waiter sleeps and the other CPU takes it (barging). Charged, a parked
                // waiter's ~15 µs blocked the other CPU too, which then parked: simulated DSS
                // Chat rooms=4 fell from 2.9-3.1 M to 0.28-1.2 M msg/s, its contended wait
                // from 104 ns to 2.3 µs, where the runtime's is 265-276 ns
                // (docs/cost-model.md, "The lock waiter's back-off"). The price is measured
                // (`park_wake_ns`) and `lockwait` checks it.
                lock_unpark_ns: 0,
                wake_transfer_ns: self.cross.rmw_transfer_ns.round() as u32,
                // Single events' p10-p90 width over their median (switch, channel pair,
                // DSS hop): how much one event's price varies from the next.
                cost_jitter_pct: self.spreads.jitter_pct(),
                tick_stagger_ns: self.worker_start_ns.round() as u32,
                // Each run draws its CPUs' first ticks from the measured ranges (the gap between the workers' grids varies far more from one fresh
                // runtime to the next than the thread-start gap's median says).
                tick_first_min_ns: c(self.tick_phases.first_ns.0),
                tick_first_max_ns: c(self.tick_phases.first_ns.1),
                tick_other_min_ns: c(self.tick_phases.other_ns.0),
                tick_other_max_ns: c(self.tick_phases.other_ns.1),
                // The root's first run on the runtime's clock, which O(1)'s jiffies and
                // PMQS's balancing interval count from (it decides whether CPU 1's
                // first idle balance finds the root cold).
                clock_origin_min_ns: c(self.tick_phases.clock_ns.0),
                clock_origin_max_ns: c(self.tick_phases.clock_ns.1),
            },
        };
        Machine::host(self.workers, self.l2, schedlab_rt::DEFAULT_HZ, costs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pair_is_split_in_the_ratio_of_the_hot_send_and_receive() {
        let (send, recv) = split_pair(80.0, 50.0, 30.0);
        assert_eq!((send, recv), (50.0, 30.0));
        // Nothing measured (a clock read at least as long as the operation): halves.
        assert_eq!(split_pair(80.0, 0.0, 30.0), (40.0, 40.0));
        assert_eq!(split_pair(80.0, 50.0, -1.0), (40.0, 40.0));
    }
}
