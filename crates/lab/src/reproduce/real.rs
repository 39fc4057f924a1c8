//! The part of `schedlab reproduce` that runs on the real runtimes of this machine:
//! Converse's ping-pong and scheduler overhead (S7 Fig. 2.4 / 2.5), and Chat,
//! ping-pong and hackbench under DSS, MQS and PMQS on schedlab's runtime beside the
//! simulator on the host machine that `schedlab validate`'s calibration measures here.
//!
//! Wall-clock numbers: they go to the report's last section and `measured.json`, never
//! to its deterministic part. Runs after the simulations, alone, so that no simulator
//! thread competes with the measured runtimes.
//!
//! The simulator-beside-runtime table is a validation (calibrate this host, then run
//! each row on both engines), so it calls `schedlab_validate`, which owns the
//! calibration and the two-engine rows, rather than a second copy of either.

use super::{Measured, MeasuredPart, MeasuredTable, MEASURED};
use serde_json::json;
use std::time::Instant;

/// Policies of the simulator-beside-runtime part: the PMQS paper's three kinds. On a
/// 2-CPU host, pool size 1 is one queue per CPU, balanced every 10 ticks (LBP-10).
const POLICIES: [&str; 3] = ["dss", "mqs", "pmqs:pool=1,lb=lbp,period=10"];
const BASELINE: &str = "mqs";
/// Workers of the real runtime = CPUs of the simulated host machine (validate's default).
const WORKERS: usize = 2;

/// Sizes of the measurements: `--quick` keeps the structure and shrinks the counts.
struct Sizes {
    /// Repetitions of each Converse measurement (min..max over them).
    reps: usize,
    round_trips: u64,
    queue_messages: u64,
    /// Seeds of the simulator; the runtime is run once per seed (its own spread).
    seeds: Vec<u64>,
    workloads: Vec<&'static str>,
    /// Round trips per message size of the Converse size sweep (Fig. 2.4's x axis).
    sized_round_trips: u64,
    /// The NetBench starvation probe on one real worker.
    netbench: &'static str,
}

impl Sizes {
    fn new(quick: bool) -> Sizes {
        if quick {
            Sizes {
                reps: 2,
                round_trips: 50_000,
                queue_messages: 500_000,
                seeds: vec![1, 2],
                workloads: vec!["chat:rooms=2,messages=40", "pingpong:rounds=20000", "hackbench:groups=1,loops=50"],
                sized_round_trips: 5_000,
                netbench: "netbench:clients=24,ops=25,probes=2,probe_every_ns=500000000,fork=daemon",
            }
        } else {
            Sizes {
                reps: 3,
                round_trips: 200_000,
                queue_messages: 2_000_000,
                seeds: vec![1, 2, 3],
                workloads: vec![
                    "chat:rooms=2,messages=100",
                    "chat:rooms=4,messages=100",
                    "pingpong:rounds=50000",
                    "hackbench:groups=2,loops=50",
                ],
                sized_round_trips: 50_000,
                netbench: "netbench:clients=24,ops=100,probes=4,probe_every_ns=500000000,fork=daemon",
            }
        }
    }
}

/// `mean (min..max)` of `v` with `d` decimals; one value when the spread does not show.
fn spread(v: &[f64], d: usize) -> String {
    if v.is_empty() {
        return "—".into();
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let (m, l, h) = (format!("{mean:.d$}"), format!("{lo:.d$}"), format!("{hi:.d$}"));
    if l == h {
        m
    } else {
        format!("{m} ({l}..{h})")
    }
}

fn signed(v: &[f64]) -> String {
    let s = spread(v, 1);
    if v.iter().sum::<f64>() >= 0.0 && !s.starts_with('-') {
        format!("+{s}")
    } else {
        s
    }
}

/// Which parts [`measure`] runs.
pub struct Parts<'a> {
    /// Everything that runs in this process (Converse, the sim-beside-real tables,
    /// the starvation probe).
    pub local: bool,
    /// The Converse-over-MPI ping-pong, launched as `bench --mpi` under this MPI
    /// launcher, writing its files into this directory ([`super::mpi`]).
    pub mpi: Option<(&'a [String], &'a std::path::Path)>,
}

/// Measure everything; a part that fails carries its error and the others still run.
pub fn measure(quick: bool, progress: bool, which: Parts) -> Measured {
    let sizes = Sizes::new(quick);
    let t = Instant::now();
    let say = |m: &str| {
        if progress {
            eprintln!("reproduce: [{MEASURED}] {m}");
        }
    };
    let machine = schedlab_bench::topology::Topology::detect().line();
    let mut parts = Vec::new();
    let mut j = serde_json::Map::new();
    j.insert("quick".into(), json!(quick));
    j.insert("machine".into(), json!(machine));
    if which.local {
        say(&format!(
            "Converse ping-pong, {} round trips × {} repetitions, then 9 message sizes",
            sizes.round_trips, sizes.reps
        ));
        let (converse, cj) = converse(&sizes, quick);
        parts.push(converse);
        j.insert("converse".into(), cj);
        say(&format!(
            "calibrating the host machine, then {} workloads × {} policies",
            sizes.workloads.len(),
            POLICIES.len()
        ));
        let (sim_real, vj) = match sim_beside_real(&sizes, quick) {
            Ok(x) => x,
            Err(e) => (
                MeasuredPart { title: SIM_REAL_TITLE.into(), error: Some(e.clone()), ..Default::default() },
                json!({ "error": e }),
            ),
        };
        parts.push(sim_real);
        j.insert("sim_beside_real".into(), vj);
        say(&format!("NetBench starvation on one real worker: {}", sizes.netbench));
        let (starve, sj) = starvation(&sizes, quick);
        parts.push(starve);
        j.insert("starvation".into(), sj);
    }
    if let Some((launcher, dir)) = which.mpi {
        say(&format!("Converse over MPI: {} … bench --mpi", launcher.join(" ")));
        let (part, mj) = super::mpi::part(quick, launcher, dir);
        parts.push(part);
        j.insert("mpi".into(), mj);
    }
    j.insert("fields".into(), fields(&j));
    let wall_s = t.elapsed().as_secs_f64();
    say(&format!("done in {wall_s:.1} s"));
    j.insert("wall_s".into(), json!(wall_s));
    Measured { json: serde_json::Value::Object(j), machine, parts, wall_s }
}

/// The quantities published cells can name (`MEASURED_FIELDS`), from the measurements:
/// Converse's one-way time for a 256-byte message between two PEs and what the scheduler
/// queue adds to it (the same ping-pong through the queue, one-way difference).
fn fields(j: &serde_json::Map<String, serde_json::Value>) -> serde_json::Value {
    let mean = |v: &serde_json::Value| {
        let xs: Vec<f64> =
            v.as_array().map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect()).unwrap_or_default();
        (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
    };
    let mut f = serde_json::Map::new();
    let at_256 = j
        .get("converse")
        .and_then(|c| c["by_size"].as_array())
        .and_then(|a| a.iter().find(|r| r["size"].as_u64() == Some(256)));
    if let Some(r) = at_256 {
        if let (Some(d), Some(q)) = (mean(&r["one_way_us"]["direct"]), mean(&r["one_way_us"]["via_queue"])) {
            f.insert("converse.one_way_us.256".into(), json!(d));
            f.insert("converse.queueing_overhead_us".into(), json!(q - d));
        }
    }
    serde_json::Value::Object(f)
}

fn regenerate(quick: bool) -> String {
    format!("**Regenerate:** `schedlab reproduce{} --only {MEASURED}`", if quick { " --quick" } else { "" })
}

/// Converse ping-pong between two pinned PEs, directly and through the scheduler
/// queue, and the queue's cost on one PE.
fn converse(s: &Sizes, quick: bool) -> (MeasuredPart, serde_json::Value) {
    let (mut direct, mut queued, mut q1, mut d1) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..s.reps {
        // Alternated, so that a burst of load on this shared machine hits both alike.
        direct.push(schedlab_converse::bench_pingpong(s.round_trips, false) / 1e3);
        queued.push(schedlab_converse::bench_pingpong(s.round_trips, true) / 1e3);
        let (q, d) = schedlab_converse::bench_queueing_overhead(s.queue_messages);
        q1.push(q);
        d1.push(d);
    }
    let (sized, sized_json) = converse_sizes(s);
    let half = |v: &[f64]| v.iter().map(|x| x / 2.0).collect::<Vec<_>>();
    // Two messages per round trip, each queued once: the difference over two.
    let per_msg: Vec<f64> = queued.iter().zip(&direct).map(|(q, d)| (q - d) / 2.0).collect();
    let queue_cost: Vec<f64> = q1.iter().zip(&d1).map(|(q, d)| q - d).collect();
    let pingpong = MeasuredTable {
        caption: format!(
            "Ping-pong between 2 pinned PEs (threads) of this machine, 16-byte messages, {} round trips; mean (min..max) over {} repetitions",
            s.round_trips, s.reps
        ),
        head: vec!["ping-pong".into(), "round trip µs".into(), "one-way µs".into(), "source (2002)".into()],
        rows: vec![
            vec![
                "handler replies at once (Fig. 2.4)".into(),
                spread(&direct, 2),
                spread(&half(&direct), 2),
                "37.14 µs one-way, 256-byte message, Converse over Myrinet GM (2-way 1 GHz PIII)".into(),
            ],
            vec![
                "through the scheduler queue (Fig. 2.5)".into(),
                spread(&queued, 2),
                spread(&half(&queued), 2),
                "curve values not recovered".into(),
            ],
            vec![
                "**queueing cost per message**".into(),
                "—".into(),
                spread(&per_msg, 3),
                "≈ 1.5–2 µs per message (Intel workstations + Myrinet)".into(),
            ],
        ],
        notes: vec![
            "One-way = round trip / 2 (the source's unit). The PEs share memory: no network, so the one-way time here is the runtime's own cost, which the source's 35 µs MPICH-GM transfer hides.".into(),
            "Queueing cost per message = (queued − direct round trip) / 2: each round trip queues two messages.".into(),
        ],
        plot: None,
    };
    let one_pe = MeasuredTable {
        caption: format!(
            "One PE, no network: {} messages; mean (min..max) over {} repetitions",
            s.queue_messages, s.reps
        ),
        head: vec!["one PE".into(), "ns per message".into()],
        rows: vec![
            vec!["enqueue + scheduler loop + dispatch (Cqs FIFO)".into(), spread(&q1, 1)],
            vec!["direct handler call (`CmiHandleMessage`)".into(), spread(&d1, 1)],
            vec!["**the scheduler queue's cost**".into(), spread(&queue_cost, 1)],
        ],
        notes: vec![],
        plot: None,
    };
    let part = MeasuredPart {
        title: "Converse ping-pong and scheduler overhead (S7 §2.4, Fig. 2.4 and 2.5), real runtime only".into(),
        lines: vec![
            "**Source:** the Converse thesis's ping-pong (average one-way time vs message size) and the same ping-pong with every message passed through the scheduler queue; the text gives 37.14 µs for a 256-byte message and ≈ 1.5–2 µs of queueing per message.".into(),
            "**Run:** `schedlab-converse`'s `bench_pingpong` and `bench_queueing_overhead` (the code of `schedlab bench`'s Converse rows); no simulator model.".into(),
            regenerate(quick),
        ],
        tables: vec![pingpong, sized, one_pe],
        error: None,
    };
    let j = json!({
        "round_trips": s.round_trips,
        "queue_messages": s.queue_messages,
        "pingpong_round_trip_us": { "direct": direct, "via_queue": queued },
        "one_pe_ns_per_message": { "via_queue": q1, "direct": d1 },
        "by_size": sized_json,
    });
    (part, j)
}

const SIM_REAL_TITLE: &str =
    "Chat, ping-pong and hackbench: the real runtime beside the simulator on the host-calibrated machine";

/// Calibrate, then every workload × policy on both engines, once per seed.
fn sim_beside_real(s: &Sizes, quick: bool) -> Result<(MeasuredPart, serde_json::Value), String> {
    let cal = schedlab_validate::calibrate(WORKERS, quick).map_err(|e| e.to_string())?;
    let policies: Vec<String> = POLICIES.iter().map(|p| p.to_string()).collect();
    let workloads: Vec<String> = s.workloads.iter().map(|w| w.to_string()).collect();
    let mut runs = Vec::new();
    for &seed in &s.seeds {
        runs.push(
            schedlab_validate::validate(&cal, &policies, &workloads, seed, false, None).map_err(|e| e.to_string())?,
        );
    }
    let mut tables = Vec::new();
    for w in &workloads {
        // value(seed index, policy) of one engine.
        let get = |i: usize, p: &str, sim: bool| -> Option<f64> {
            runs[i]
                .iter()
                .find(|r| &r.workload == w && r.policy == p)
                .and_then(|r| if sim { r.sim } else { Some(r.real) })
        };
        let unit = runs[0].iter().find(|r| &r.workload == w).map_or(String::new(), |r| r.unit.clone());
        let max = (0..runs.len())
            .flat_map(|i| POLICIES.iter().flat_map(move |p| [get(i, p, true), get(i, p, false)]))
            .flatten()
            .fold(0.0, f64::max);
        let (scale, prefix) = if max >= 1e6 {
            (1e6, "M ")
        } else if max >= 1e3 {
            (1e3, "k ")
        } else {
            (1.0, "")
        };
        // Three significant digits at the table's largest value.
        let d = if max / scale >= 100.0 {
            0
        } else if max / scale >= 10.0 {
            1
        } else {
            2
        };
        let mut rows = Vec::new();
        for p in POLICIES {
            let col = |sim: bool| -> Vec<f64> { (0..runs.len()).filter_map(|i| get(i, p, sim)).collect() };
            // % vs MQS, paired by seed, on each engine.
            let pct = |sim: bool| -> Vec<f64> {
                (0..runs.len())
                    .filter_map(|i| Some(100.0 * (get(i, p, sim)? - get(i, BASELINE, sim)?) / get(i, BASELINE, sim)?))
                    .collect()
            };
            let (sv, rv) = (col(true), col(false));
            let ratio: Vec<f64> = sv.iter().zip(&rv).map(|(a, b)| a / b.max(1e-9)).collect();
            let scaled = |v: &[f64]| v.iter().map(|x| x / scale).collect::<Vec<_>>();
            rows.push(vec![
                p.to_string(),
                spread(&scaled(&sv), d),
                spread(&scaled(&rv), d),
                spread(&ratio, 2),
                if p == BASELINE { "(baseline)".into() } else { signed(&pct(true)) },
                if p == BASELINE { "(baseline)".into() } else { signed(&pct(false)) },
            ]);
        }
        tables.push(MeasuredTable {
            caption: format!("`{w}`: throughput in {prefix}{unit}"),
            head: vec![
                "policy".into(),
                format!("simulated, host-{WORKERS}"),
                "real runtime".into(),
                "sim / real".into(),
                "sim % vs MQS".into(),
                "real % vs MQS".into(),
            ],
            rows,
            notes: vec![],
            plot: None,
        });
    }
    let seeds: Vec<String> = s.seeds.iter().map(u64::to_string).collect();
    let part = MeasuredPart {
        title: SIM_REAL_TITLE.into(),
        lines: vec![
            "**Source:** S1's Chat comparison (PMQS and DSS as % vs MQS), with ping-pong and hackbench as in `schedlab validate`; the sections above simulate the papers' machines, this one runs the same policy code on this machine's runtime.".into(),
            format!(
                "**Host machine `host-{WORKERS}`** (every cost measured here just before, ns): task switch {:.0}, IPI to a spinning worker {:.0}, send {:.0}, receive {:.0}, spawn {:.0} (+{:.0} onto a never-used task block), cache-line transfer {:.0}, memory {:.0}, lock {:.0}, DSS schedule {:.0} + {:.1}/task, wake-up {:.0}, tick {:.0}.",
                cal.dispatch_ns, cal.cross.ipi_latency_ns, cal.send_ns, cal.recv_ns, cal.spawn_ns, cal.task_block_fresh_ns, cal.atomic_rtt_ns / 2.0, cal.mem_latency_ns, cal.lock_ns, cal.dss.schedule_base_ns, cal.dss.schedule_per_task_ns, cal.dss.wakeup_ns, cal.dss.tick_ns
            ),
            format!(
                "**Seeds:** {} — the simulator once per seed; the runtime ({WORKERS} pinned workers) once per seed (its spread is this machine's noise). Cells are mean (min..max); % vs MQS is paired by seed.",
                seeds.join(", ")
            ),
            regenerate(quick),
        ],
        tables,
        error: None,
    };
    let j = json!({ "calibration": cal, "seeds": s.seeds, "runs": runs });
    Ok((part, j))
}

/// Fig. 2.4 and 2.5 between two PEs of this process: one-way time against message
/// size (16 B..1 MiB, powers of 4, as across MPI ranks), directly and through the
/// scheduler queue, alternated per repetition; a table and a log–log plot.
fn converse_sizes(s: &Sizes) -> (MeasuredTable, serde_json::Value) {
    let sizes = schedlab_converse::bench::paper_sizes();
    let mut rows = Vec::new();
    let mut js = Vec::new();
    let (mut line_d, mut line_q) = (Vec::new(), Vec::new());
    for &size in &sizes {
        let (mut d, mut q) = (Vec::new(), Vec::new());
        for _ in 0..s.reps {
            // ns per round trip → µs one way.
            d.push(schedlab_converse::bench_pingpong_sized(size, s.sized_round_trips, false) / 2e3);
            q.push(schedlab_converse::bench_pingpong_sized(size, s.sized_round_trips, true) / 2e3);
        }
        let per_msg: Vec<f64> = q.iter().zip(&d).map(|(q, d)| (q - d) * 1e3).collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        line_d.push((size as f64, mean(&d)));
        line_q.push((size as f64, mean(&q)));
        rows.push(vec![size_label(size), spread(&d, 3), spread(&q, 3), spread(&per_msg, 0)]);
        js.push(json!({ "size": size, "one_way_us": { "direct": d, "via_queue": q } }));
    }
    let plot = super::plots::size_lines_captioned(
        "Converse ping-pong on this machine: one-way time against message size",
        "message size",
        "average one-way time (µs)",
        &[("handler replies at once".into(), line_d), ("through the scheduler queue".into(), line_q)],
        &format!("Points: mean over {} repetitions (the table gives min..max); log–log scale", s.reps),
    );
    let (plot, mut notes) = match plot {
        Ok(svg) => (Some(svg), Vec::new()),
        Err(e) => (None, vec![format!("plot: {e}")]),
    };
    notes.push("Between PEs of one process a message moves by pointer (as in Converse's shared-memory machine layer), so the one-way time hardly grows with size; the thesis's curve rises with the bytes its network carries, which the MPI part (`schedlab reproduce --mpi`) measures across processes.".into());
    let table = MeasuredTable {
        caption: format!(
            "One-way time against message size, 2 pinned PEs, {} round trips per size; mean (min..max) over {} repetitions",
            s.sized_round_trips, s.reps
        ),
        head: vec!["size".into(), "direct µs".into(), "through the queue µs".into(), "queueing ns/message".into()],
        rows,
        notes,
        plot,
    };
    (table, json!(js))
}

fn size_label(b: usize) -> String {
    super::plots::size_label(b as f64)
}

/// Policies of the starvation probe: the 2.4 scheduler, O(1) as the report ran it (the
/// -J7 kernel) and its two fix options, and `cfs` — the policies of the simulated
/// `netbench-starvation` experiment, whose smbds are likewise forked by a sleeping
/// daemon (S10 in docs/sources.md; docs/policies.md, "The NetBench starvation").
const STARVATION_POLICIES: [&str; 5] =
    ["dss", "o1:era=j7", "o1:era=j7,scale=off", "o1:era=j7,expired_prio_guard=on", "cfs"];

/// NetBench on one real worker, saturated: the longest wait for a response (the
/// report's starved smbds) and the `ps` probe's longest wait to first run, per policy.
fn starvation(s: &Sizes, quick: bool) -> (MeasuredPart, serde_json::Value) {
    let title = "NetBench starvation on the uniprocessor (S10): one real worker beside the simulated UP".to_string();
    let w = match schedlab_workloads::parse_workload(s.netbench) {
        Ok(w) => w,
        Err(e) => {
            return (
                MeasuredPart { title, error: Some(e.to_string()), ..Default::default() },
                json!({ "error": e.to_string() }),
            )
        }
    };
    let mut rows = Vec::new();
    let mut js = Vec::new();
    let up = schedlab_sim::Machine::preset("up").expect("the up preset");
    for p in STARVATION_POLICIES {
        // The same workload on the modelled 700 MHz uniprocessor (deterministic).
        let sim = schedlab_core::PolicySpec::parse(p).map_err(|e| e.to_string()).and_then(|spec| {
            let cfg = schedlab_sim::SimConfig { seed: 1, ..Default::default() };
            schedlab_sim::simulate(&up, &spec, &w, &cfg).map_err(|e| e.to_string())
        });
        let (sim_tput, sim_resp, sim_ps) = match &sim {
            Ok(r) => (
                format!("{:.1}", r.throughput),
                r.responses.as_ref().map_or("—".into(), |x| format!("{:.3}", x.max_ns as f64 / 1e9)),
                r.waits
                    .iter()
                    .find(|x| x.role == "ps")
                    .map_or("—".into(), |x| format!("{:.3}", x.max_ns as f64 / 1e9)),
            ),
            Err(e) => (format!("failed: {e}"), String::new(), String::new()),
        };
        let sim_json = match &sim {
            Ok(r) => json!({
                "mbit_s": r.throughput,
                "response_max_s": r.responses.as_ref().map(|x| x.max_ns as f64 / 1e9),
                "ps_wait_max_s": r.waits.iter().find(|x| x.role == "ps").map(|x| x.max_ns as f64 / 1e9),
            }),
            Err(e) => json!({ "error": e }),
        };
        let run = schedlab_rt::Builder::new().workers(1).policy(p).build().map_err(|e| e.to_string()).and_then(|rt| {
            // 1.43 ns per cycle: the workload's cycles are the modelled 700 MHz CPU's.
            let r = schedlab_rtrun::run_on_runtime(&rt, &w, 1.43, 1);
            rt.shutdown();
            r.map_err(|e| e.to_string())
        });
        match run {
            Ok(r) => {
                let probe = r.first_run.iter().filter(|x| x.role == "ps").map(|x| x.max_ns).max().unwrap_or(0);
                rows.push(vec![
                    format!("`{p}`"),
                    format!("{:.1}", r.throughput),
                    sim_tput,
                    format!("{:.3}", r.response_max_ns as f64 / 1e9),
                    sim_resp,
                    format!("{} of {}", r.timed_out, r.responses),
                    format!("{:.3}", probe as f64 / 1e9),
                    sim_ps,
                ]);
                js.push(json!({
                    "policy": p, "mbit_s": r.throughput, "response_max_s": r.response_max_ns as f64 / 1e9,
                    "timed_out": r.timed_out, "responses": r.responses, "ps_first_run_max_s": probe as f64 / 1e9,
                    "wall_s": r.wall_s, "sim_up": sim_json,
                }));
            }
            Err(e) => {
                let mut row = vec![format!("`{p}`"), format!("failed: {e}"), sim_tput, String::new(), sim_resp];
                row.extend([String::new(), String::new(), sim_ps]);
                rows.push(row);
                js.push(json!({ "policy": p, "error": e, "sim_up": sim_json }));
            }
        }
    }
    let table = MeasuredTable {
        caption: format!("`{}` on 1 worker (cycles at 1.43 ns: the modelled 700 MHz CPU)", s.netbench),
        head: vec![
            "policy".into(),
            "Mbit/s real".into(),
            "simulated `up`".into(),
            "longest response s, real".into(),
            "simulated `up`".into(),
            "timed out, real".into(),
            "`ps` longest wait to run s, real".into(),
            "simulated `up`".into(),
        ],
        rows,
        notes: vec![
            "Real: the same policy code schedules real tasks on one worker of this machine, one run per policy, so the numbers carry its noise. Simulated: the same workload on the modelled 700 MHz uniprocessor (`up`, seed 1), the machine of the NetBench sections above (which run the report's own sizes).".into(),
        ],
        plot: None,
    };
    let part = MeasuredPart {
        title,
        lines: vec![
            "**Source:** the NetBench report's UP starvation: under O(1), smbds that lose their interactivity bonus wait seconds while others are served; the `ps` probe hangs.".into(),
            "**Run:** `schedlab_rtrun::run_on_runtime` on a one-worker runtime per policy (the code of `crates/rtrun/tests/netbench.rs`).".into(),
            regenerate(quick),
        ],
        tables: vec![table],
        error: None,
    };
    (part, json!({ "workload": s.netbench, "runs": js }))
}
