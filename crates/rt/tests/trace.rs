//! The runtime's scheduling trace (`Builder::trace`), written by core's Chrome-JSON
//! writer and read back with a generic JSON parser (`serde_json::Value`, none of
//! schedlab's trace types): every switch, wake-up and IPI the runtime counted is in
//! the file, each worker's track is in time order, run slices of one worker (and
//! holds of one lock) never overlap, every fork has its exit inside a slice of the
//! task on the worker that ran it.
#![cfg(not(loom))]

use schedlab_core::trace::chrome;
use schedlab_rt::{channel, spawn, yield_now, Builder, Runtime, Stats, DEFAULT_RING_CAPACITY};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// Tasks in the token ring, and laps of the token.
const RING: u64 = 4;
const LAPS: u64 = 100;
/// Every task the workload spawns: the ring, plus a yielder and its child.
const TASKS: u64 = RING + 2;

/// A token passed round a ring of tasks (each hand-off a wake-up of a blocked task),
/// next to a task that yields and forks a child: every event kind, on 2 workers.
fn workload(rt: &Runtime) {
    rt.block_on(async {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..RING).map(|_| channel::unbounded::<u64>()).unzip();
        let mut hs = Vec::new();
        for (i, mut rx) in rxs.into_iter().enumerate() {
            let next = txs[(i + 1) % RING as usize].clone();
            hs.push(spawn(async move {
                let mut seen = 0;
                while let Some(v) = rx.recv().await {
                    seen += 1;
                    if v + 1 == LAPS * RING {
                        break;
                    }
                    let _ = next.send(v + 1);
                    if seen == LAPS {
                        break;
                    }
                }
                seen
            }));
        }
        let yielder = spawn(async {
            for _ in 0..20 {
                yield_now().await;
            }
            spawn(async { 7u64 }).await.unwrap()
        });
        txs[0].send(0).unwrap();
        let mut total = 0;
        for h in hs {
            total += h.await.unwrap();
        }
        assert_eq!(total, LAPS * RING);
        assert_eq!(yielder.await.unwrap(), 7);
    });
}

/// Run the workload under `policy` with tracing on; the final counters and the file.
/// The run happens on another thread so that a hang fails the test instead of stalling it.
fn traced_run(policy: &'static str, cap: usize) -> (Stats, Vec<u8>, chrome::Summary) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = Builder::new().workers(2).pin(false).policy(policy).trace(cap).build().unwrap();
        workload(&rt);
        let (stats, trace) = rt.shutdown_traced();
        let trace = trace.expect("tracing was on");
        let mut out = Vec::new();
        let summary = chrome::write(&trace, &mut out).unwrap();
        tx.send((stats, out, summary)).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("{policy}: the run did not finish in 60 s"))
}

/// µs with 3 decimals, as written, back to integer ns.
fn ns(v: &Value) -> u64 {
    (v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")) * 1000.0).round() as u64
}

const POLICIES: &[&str] = &["dss", "mqs", "pmqs:pool=1"];

#[test]
fn every_counted_switch_and_wakeup_is_in_the_file_in_order() {
    for &p in POLICIES {
        let (stats, out, summary) = traced_run(p, DEFAULT_RING_CAPACITY);
        let v: Value = serde_json::from_slice(&out).expect("the file is JSON");
        assert_eq!(v["displayTimeUnit"], "ns");
        assert_eq!(v["otherData"]["dropped"], 0, "{p}");
        let evs = v["traceEvents"].as_array().expect("traceEvents");

        let mut tracks: BTreeMap<(u64, u64), Vec<&Value>> = BTreeMap::new();
        let mut names = BTreeMap::new();
        for e in evs {
            let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            if e["ph"] == "M" {
                if e["name"] == "thread_name" {
                    names.insert(key, e["args"]["name"].as_str().unwrap().to_string());
                }
                continue;
            }
            tracks.entry(key).or_default().push(e);
        }
        let count = |name: &str| evs.iter().filter(|e| e["name"] == name).count() as u64;
        let slices: Vec<&Value> = evs.iter().filter(|e| e["ph"] == "X" && e["pid"] == 1).collect();

        // Every counted event is there (and the writer's own summary agrees).
        assert!(stats.switches > 0 && stats.wakeups >= TASKS, "{p}: {stats:?}");
        assert_eq!(slices.len() as u64, stats.switches, "{p}: run slices vs switches counted");
        assert_eq!(count("wakeup"), stats.wakeups, "{p}: wake-ups");
        assert_eq!(count("ipi"), stats.ipis, "{p}: IPIs");
        assert_eq!(count("fork"), TASKS, "{p}: forks");
        assert_eq!(count("exit"), TASKS, "{p}: exits");
        assert_eq!(summary.slices, stats.switches, "{p}");
        // Shutdown closes every slice: none is left unfinished.
        for s in &slices {
            let st = s["args"]["end_state"].as_str().unwrap();
            assert!(["runnable", "blocked", "exited"].contains(&st), "{p}: {s}");
        }

        // Worker tracks (and the outside thread's) are in time order; a worker's run
        // slices do not overlap; a migration's `to` is the worker it is on.
        for (&(pid, tid), t) in tracks.iter().filter(|(k, _)| k.0 == 1) {
            assert!(tid <= 2, "{p}: track {tid} on a 2-worker runtime");
            let want = if tid < 2 { format!("worker {tid}") } else { "other threads".to_string() };
            assert_eq!(names.get(&(pid, tid)), Some(&want), "{p}");
            let ts: Vec<u64> = t.iter().map(|e| ns(&e["ts"])).collect();
            assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{p}: track {tid} out of order");
            let mut end = 0;
            for s in t.iter().filter(|e| e["ph"] == "X") {
                assert!(ns(&s["ts"]) >= end, "{p}: overlapping run slices on worker {tid}: {s}");
                end = ns(&s["ts"]) + ns(&s["dur"]);
            }
            for m in t.iter().filter(|e| e["name"] == "migrate") {
                assert_eq!(m["args"]["to"].as_u64(), Some(tid), "{p}: {m}");
                assert_ne!(m["args"]["from"], m["args"]["to"], "{p}: {m}");
            }
            if tid == 2 {
                assert!(t.iter().all(|e| e["ph"] == "i"), "{p}: no task runs outside the workers");
            }
        }

        // A task's exit is inside one of its run slices on the same worker.
        for e in evs.iter().filter(|e| e["name"] == "exit") {
            let (tid, ts, task) = (&e["tid"], ns(&e["ts"]), &e["args"]["task"]);
            assert!(
                slices.iter().any(|s| &s["tid"] == tid
                    && &s["args"]["task"] == task
                    && ns(&s["ts"]) <= ts
                    && ts <= ns(&s["ts"]) + ns(&s["dur"])),
                "{p}: exit outside its task's slices: {e}"
            );
        }

        // The run-queue lock(s): named tracks, holds that do not overlap.
        let locks: Vec<_> = tracks.iter().filter(|(k, _)| k.0 == 2).collect();
        assert!(!locks.is_empty(), "{p}: no lock track");
        for ((pid, tid), t) in locks {
            assert!(names[&(*pid, *tid)].contains(" #"), "{p}: {}", names[&(*pid, *tid)]);
            let mut end = 0;
            for h in t {
                assert!(ns(&h["ts"]) >= end, "{p}: overlapping holds of lock {tid}: {h}");
                end = ns(&h["ts"]) + ns(&h["dur"]);
            }
        }
    }
}

#[test]
fn a_full_buffer_drops_the_newest_events_and_counts_them() {
    let (stats, out, summary) = traced_run("dss", 8);
    let v: Value = serde_json::from_slice(&out).unwrap();
    let dropped = v["otherData"]["dropped"].as_u64().unwrap();
    assert!(dropped > 0 && summary.dropped == dropped, "{dropped}");
    assert_eq!(v["otherData"]["cap"], 8);
    // At most 8 events per track (2 workers + other threads); the first switch of
    // the run is kept, so the prefix survives.
    let kept = v["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] != "M").count();
    assert!(kept <= 3 * 8, "{kept}");
    assert!(stats.switches > summary.slices);
}

#[test]
fn off_by_default_and_refused_by_fast() {
    let rt = Builder::new().workers(2).pin(false).policy("dss").build().unwrap();
    assert!(rt.take_trace().is_none());
    let (_, t) = rt.shutdown_traced();
    assert!(t.is_none());
    let e = Builder::new().workers(1).pin(false).policy("fast").trace(16).build().unwrap_err();
    assert!(matches!(&e, schedlab_rt::BuildError::NoTrace(p) if p == "fast"), "{e}");
}
