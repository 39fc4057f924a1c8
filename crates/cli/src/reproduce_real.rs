//! The part of `schedlab reproduce` that runs on the real runtimes of this machine:
//! Converse's ping-pong and scheduler overhead (S7 Fig. 2.4 / 2.5), and Chat,
//! ping-pong and hackbench under DSS, MQS and PMQS on schedlab's runtime beside the
//! simulator on the host machine that `schedlab validate`'s calibration measures here.
//!
//! Wall-clock numbers: they go to the report's last section and `measured.json`, never
//! to its deterministic part. Runs after the simulations, alone, so that no simulator
//! thread competes with the measured runtimes.

use schedlab_lab::reproduce::{Measured, MeasuredPart, MeasuredTable, MEASURED};
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

/// Measure everything; a part that fails carries its error and the others still run.
pub fn measure(quick: bool, progress: bool) -> Measured {
    let sizes = Sizes::new(quick);
    let t = Instant::now();
    let say = |m: &str| {
        if progress {
            eprintln!("reproduce: [{MEASURED}] {m}");
        }
    };
    let machine = schedlab_bench::topology::Topology::detect().line();
    say(&format!("Converse ping-pong, {} round trips × {} repetitions", sizes.round_trips, sizes.reps));
    let (converse, cj) = converse(&sizes, quick);
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
    let wall_s = t.elapsed().as_secs_f64();
    say(&format!("done in {wall_s:.1} s"));
    Measured {
        json: json!({ "quick": quick, "machine": machine, "converse": cj, "sim_beside_real": vj, "wall_s": wall_s }),
        machine,
        parts: vec![converse, sim_real],
        wall_s,
    }
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
    };
    let part = MeasuredPart {
        title: "Converse ping-pong and scheduler overhead (S7 §2.4, Fig. 2.4 and 2.5), real runtime only".into(),
        lines: vec![
            "**Source:** the Converse thesis's ping-pong (average one-way time vs message size) and the same ping-pong with every message passed through the scheduler queue; the text gives 37.14 µs for a 256-byte message and ≈ 1.5–2 µs of queueing per message.".into(),
            "**Run:** `schedlab-converse`'s `bench_pingpong` and `bench_queueing_overhead` (the code of `schedlab bench`'s Converse rows); no simulator model.".into(),
            regenerate(quick),
        ],
        tables: vec![pingpong, one_pe],
        error: None,
    };
    let j = json!({
        "round_trips": s.round_trips,
        "queue_messages": s.queue_messages,
        "pingpong_round_trip_us": { "direct": direct, "via_queue": queued },
        "one_pe_ns_per_message": { "via_queue": q1, "direct": d1 },
    });
    (part, j)
}

const SIM_REAL_TITLE: &str =
    "Chat, ping-pong and hackbench: the real runtime beside the simulator on the host-calibrated machine";

/// Calibrate, then every workload × policy on both engines, once per seed.
fn sim_beside_real(s: &Sizes, quick: bool) -> Result<(MeasuredPart, serde_json::Value), String> {
    let cal = schedlab_validate::calibrate(WORKERS, quick)?;
    let policies: Vec<String> = POLICIES.iter().map(|p| p.to_string()).collect();
    let workloads: Vec<String> = s.workloads.iter().map(|w| w.to_string()).collect();
    let mut runs = Vec::new();
    for &seed in &s.seeds {
        runs.push(schedlab_validate::validate(&cal, &policies, &workloads, seed, false, None)?);
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
        });
    }
    let seeds: Vec<String> = s.seeds.iter().map(u64::to_string).collect();
    let part = MeasuredPart {
        title: SIM_REAL_TITLE.into(),
        lines: vec![
            "**Source:** S1's Chat comparison (PMQS and DSS as % vs MQS), with ping-pong and hackbench as in `schedlab validate`; the sections above simulate the papers' machines, this one runs the same policy code on this machine's runtime.".into(),
            format!(
                "**Host machine `host-{WORKERS}`** (every cost measured here just before, ns): task switch {:.0}, cross-worker wake {:.0}, send {:.0}, receive {:.0}, spawn {:.0}, cache-line transfer {:.0}, memory {:.0}, lock {:.0}, DSS schedule {:.0} + {:.1}/task, wake-up {:.0}, tick {:.0}.",
                cal.dispatch_ns, cal.wake_ns, cal.send_ns, cal.recv_ns, cal.spawn_ns, cal.atomic_rtt_ns / 2.0, cal.mem_latency_ns, cal.lock_ns, cal.schedule_base_ns, cal.schedule_per_task_ns, cal.wakeup_ns, cal.tick_ns
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
