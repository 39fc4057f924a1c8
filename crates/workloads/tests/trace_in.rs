//! `trace:FILE` workloads: every replay runs to completion (no `Recv` without its
//! `Send`), on generated traces and on the real captures in `tests/data/`, and bad
//! files are refused with the file and line named.

use proptest::prelude::*;
use schedlab_workloads::trace_in::{self, Builder, Out, Raw, Step};
use schedlab_workloads::{Op, Workload};
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// Run `w` to completion, picking the next task to step by a seeded random choice
/// among the runnable ones (an interpreter of its own, not an engine: every order is
/// a schedule some policy could produce). `Err` names a deadlock.
fn run_random_order(w: &Workload, seed: u64) -> Result<u64, String> {
    struct T {
        prog: usize,
        pc: usize,
    }
    let mut rng = seed | 1;
    let mut next = |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let mut queued = vec![0u64; w.channels as usize];
    let mut tasks = vec![T { prog: w.root as usize, pc: 0 }];
    let mut done = 0usize;
    let mut live: Vec<usize> = vec![0];
    let mut received = 0u64;
    while !live.is_empty() {
        let ready: Vec<usize> = live
            .iter()
            .copied()
            .filter(|&t| match w.programs[tasks[t].prog].ops.get(tasks[t].pc) {
                Some(Op::Recv { chan }) => queued[*chan as usize] > 0,
                _ => true,
            })
            .collect();
        if ready.is_empty() {
            let stuck: Vec<String> =
                live.iter().map(|&t| format!("task {t} (program {}) at op {}", tasks[t].prog, tasks[t].pc)).collect();
            return Err(format!("deadlock: {}", stuck.join(", ")));
        }
        let t = ready[next(ready.len())];
        let op = w.programs[tasks[t].prog].ops.get(tasks[t].pc).copied().unwrap_or(Op::Exit);
        tasks[t].pc += 1;
        match op {
            Op::Send { chan, .. } => queued[chan as usize] += 1,
            Op::Recv { chan } => {
                queued[chan as usize] -= 1;
                received += 1;
            }
            Op::Spawn { program, .. } => {
                tasks.push(T { prog: program as usize, pc: 0 });
                live.push(tasks.len() - 1);
            }
            Op::Exit => {
                live.retain(|&x| x != t);
                done += 1;
            }
            Op::Loop { .. } => return Err("a replay has no loops".into()),
            Op::Compute { .. }
            | Op::ComputeUniform { .. }
            | Op::Sleep { .. }
            | Op::Yield
            | Op::StartClock
            | Op::StopClock => {}
        }
    }
    if done as u64 != w.expected_tasks {
        return Err(format!("{done} tasks ran, expected {}", w.expected_tasks));
    }
    if received != w.expected_messages || queued.iter().any(|&q| q != 0) {
        return Err(format!("{received} received of {} sent; left queued: {queued:?}", w.expected_messages));
    }
    Ok(received)
}

/// Any event on any of 6 task keys (key 6: an untraced waker), in any order — far
/// messier than a real trace: switches of tasks never dispatched, double wake-ups,
/// forks of live ids, events after exits.
fn raw_event() -> impl Strategy<Value = (u64, Raw)> {
    let key = 0u64..6;
    let out = prop_oneof![Just(Out::Runnable), Just(Out::Blocked), Just(Out::Blocked), Just(Out::Exited)];
    let ev = prop_oneof![
        3 => key.clone().prop_map(|task| Raw::In { task }),
        3 => (key.clone(), out).prop_map(|(task, how)| Raw::Out { task, how }),
        4 => (key.clone(), proptest::option::of(0u64..7)).prop_map(|(task, waker)| Raw::Wake { task, waker }),
        1 => (proptest::option::of(key.clone()), key.clone()).prop_map(|(parent, child)| Raw::Fork { parent, child }),
        1 => key.prop_map(|task| Raw::Exit { task }),
    ];
    (0u64..3, ev)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_generated_trace_replays_to_completion(events in proptest::collection::vec(raw_event(), 0..120), seed in any::<u64>()) {
        let mut b = Builder::new();
        let mut t = 0;
        for (dt, ev) in events {
            t += dt;
            b.event(t, ev);
        }
        let replay = b.finish();
        let w = replay.workload("trace:generated", 700);
        prop_assert!(w.validate().is_ok(), "{:?}", w.validate());
        // Pairs: one send per wake edge, and as many receives.
        let sends = w.programs.iter().flat_map(|p| &p.ops).filter(|o| matches!(o, Op::Send { .. })).count() as u64;
        let recvs = w.programs.iter().flat_map(|p| &p.ops).filter(|o| matches!(o, Op::Recv { .. })).count() as u64;
        prop_assert_eq!(sends, replay.summary.wake_edges);
        prop_assert_eq!(recvs, replay.summary.wake_edges);
        for k in 0..4 {
            let r = run_random_order(&w, seed.wrapping_add(k));
            prop_assert!(r.is_ok(), "{:?}\n{:#?}", r, replay);
        }
    }
}

/// The mapping rules on a hand-written trace: a wake-up from a traced task is a
/// send/receive pair at the waker's point, a wake-up from outside a sleep of the gap,
/// a wake-up of a running task that does not then block is dropped.
#[test]
fn mapping_rules() {
    let mut b = Builder::new();
    b.event(0, Raw::Fork { parent: None, child: 1 });
    b.event(0, Raw::Fork { parent: Some(1), child: 2 }); // 1 not yet run: acts from now
    b.event(10, Raw::In { task: 2 });
    b.event(30, Raw::Out { task: 2, how: Out::Blocked });
    b.event(50, Raw::Wake { task: 2, waker: Some(1) });
    b.event(60, Raw::In { task: 2 });
    b.event(70, Raw::Out { task: 2, how: Out::Blocked });
    b.event(170, Raw::Wake { task: 2, waker: None });
    b.event(170, Raw::In { task: 2 });
    b.event(175, Raw::Wake { task: 2, waker: Some(1) }); // 2 running, then preempted
    b.event(180, Raw::Out { task: 2, how: Out::Runnable });
    b.event(190, Raw::Exit { task: 2 });
    let r = b.finish();
    assert_eq!(r.roots, vec![0]);
    assert_eq!(
        r.tasks[0].steps,
        vec![
            Step::Fork { child: 1 },
            Step::Run { ns: 50 },
            Step::Wake { task: 1 },
            Step::Run { ns: 125 },
            // the cancelled tentative wake-up, which the last run then extends
            Step::Run { ns: 15 },
        ]
    );
    assert_eq!(
        r.tasks[1].steps,
        vec![
            Step::Run { ns: 20 },
            Step::Block { waker: Some(0), ns: 20 },
            Step::Run { ns: 10 },
            Step::Block { waker: None, ns: 100 },
            Step::Run { ns: 10 },
        ]
    );
    assert_eq!((r.summary.wake_edges, r.summary.sleeps, r.summary.dropped_wakeups), (1, 1, 1));
    let w = r.workload("trace:x", 1000);
    assert_eq!(
        w.programs[2].ops,
        vec![
            Op::Compute { cycles: 20 },
            Op::Recv { chan: 0 },
            Op::Compute { cycles: 10 },
            Op::Sleep { ns: 100 },
            Op::Compute { cycles: 10 },
            Op::Exit,
        ]
    );
    assert!(matches!(w.programs[1].ops[2], Op::Send { chan: 0, .. }));
}

/// The checked-in captures: `perf script` of `perf bench sched messaging -g 1 -l 10`
/// and a runtime trace of Chat (`chat:rooms=1,messages=40` under o1, 2 workers).
#[test]
fn real_captures_replay_to_completion() {
    for (file, min_tasks) in [("perf-messaging-g1-l10.txt", 41), ("rt-chat-rooms1-messages40-o1.json", 41)] {
        let spec = format!("trace:{}", data(file).display());
        let (w, s) = trace_in::load(&spec, 1 << 30).unwrap();
        assert!(w.expected_tasks > min_tasks, "{file}: {} tasks", w.expected_tasks);
        // Most blocks of both programs end by a traced wake-up (messages between tasks).
        assert!(s.wake_edges > 5 * s.sleeps, "{file}: {s:?}");
        for seed in 1..=8 {
            run_random_order(&w, seed).unwrap_or_else(|e| panic!("{file}: {e}"));
        }
        // Identical from run to run.
        assert_eq!(trace_in::load(&spec, 1 << 30).unwrap().0, w);
    }
}

/// perf: only the recorded command's tree (perf-exec and its forks) is kept.
#[test]
fn perf_keeps_the_command_tree() {
    let replay = trace_in::read(&data("perf-messaging-g1-l10.txt")).unwrap();
    let names: std::collections::BTreeSet<&str> = replay.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["perf-exec", "sched-messaging"].into_iter().collect(), "{names:?}");
    assert_eq!(replay.tasks.len(), 41);
}

#[test]
fn bad_files_name_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("schedlab-trace-in-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let perf = std::fs::read_to_string(data("perf-messaging-g1-l10.txt")).unwrap();
    let json = std::fs::read_to_string(data("rt-chat-rooms1-messages40-o1.json")).unwrap();
    let mut cut = perf.lines().take(30).collect::<Vec<_>>().join("\n");
    cut.truncate(cut.len() - 40); // the last switch line loses its next_pid
    let cases: Vec<(&str, String, &str)> = vec![
        ("empty", String::new(), "empty file"),
        ("garbage", "hello\nworld\n".into(), "line 1: not a perf script event line"),
        ("truncated-perf", cut, "line 30:"),
        ("truncated-json", json[..json.len() / 2].to_string(), "not valid JSON"),
        ("no-events", "{\"traceEvents\":[]}".into(), "no run slices"),
        ("bad-slice", "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":1.0,\"dur\":2.0,\"args\":{\"end_state\":\"blocked\"}}]}".into(), "traceEvents[0]"),
    ];
    for (name, text, want) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let e = trace_in::load(&format!("trace:{}", path.display()), 1 << 30).unwrap_err().0;
        assert!(e.contains(&path.display().to_string()) && e.contains(want), "{name}: {e}");
    }
    let e = trace_in::load(&format!("trace:{}", dir.join("missing").display()), 1 << 30).unwrap_err().0;
    assert!(e.contains("missing"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
