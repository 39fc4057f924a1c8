//! The Chrome JSON trace-event format, which Perfetto's UI (https://ui.perfetto.dev)
//! and `chrome://tracing` open directly: `{"displayTimeUnit":"ns","traceEvents":[...]}`.
//!
//! Layout: process 1 "CPUs" has one thread track per CPU; each run of a task on a CPU
//! is a complete event (`"ph":"X"`) named `t<id> <role>`, from the switch that put it
//! there to the switch that took it off (its `args.end_state`: runnable, blocked or
//! exited). Wake-ups, migrations, forks, exits and IPIs are thread-scoped instants
//! (`"ph":"i"`) on the CPU they happened on. Process 2 "Locks" has one track per lock
//! with a slice per hold (named by the holding CPU).
//!
//! Timestamps are µs (the format's unit) written exactly as `<µs>.<3 digits of ns>`.
//! Output is deterministic: events are ordered by track, then time, then recording
//! order, so every track's events are in time order in the file. It is written
//! through a `BufWriter`, one event at a time; memory is the records' (bounded by the
//! cap) plus one index per record for the sort.

use super::{state_name, Event, Record, Trace};
use std::io::{self, BufWriter, Write};

/// What a write produced (for the command line's summary and the tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Trace events written, metadata included.
    pub events: u64,
    pub slices: u64,
    pub wakeups: u64,
    pub migrations: u64,
    pub forks: u64,
    pub exits: u64,
    pub ipis: u64,
    pub lock_holds: u64,
    /// Run slices still open at the end of the records (a truncated trace), closed at
    /// the last timestamp.
    pub unfinished: u64,
    /// Events past the cap, not in the file.
    pub dropped: u64,
}

/// Process ids of the two groups of tracks.
const PID_CPUS: u32 = 1;
const PID_LOCKS: u32 = 2;

/// Write `trace` to `out` in the Chrome JSON trace-event format.
pub fn write<W: Write>(trace: &Trace, out: W) -> io::Result<Summary> {
    let mut w = BufWriter::with_capacity(1 << 16, out);
    let mut s = Summary { dropped: trace.dropped, ..Summary::default() };
    let recs = &trace.records;
    let end_ns = recs.iter().map(|r| r.ts_ns).max().unwrap_or(0);
    writeln!(
        w,
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"source\":{},\"cap\":{},\"dropped\":{}}},\"traceEvents\":[",
        json_str(&trace.meta.source),
        trace.cap,
        trace.dropped
    )?;
    let mut first = true;
    let mut sep = |w: &mut BufWriter<W>| -> io::Result<()> {
        if !std::mem::take(&mut first) {
            w.write_all(b",\n")?;
        }
        Ok(())
    };

    // Track names. Records may name CPUs beyond `meta.cpus` (a caller's mistake);
    // they still get a named track.
    let cpus = trace.meta.cpus.max(recs.iter().map(|r| r.cpu as usize + 1).max().unwrap_or(0));
    sep(&mut w)?;
    write!(
        w,
        "{{\"ph\":\"M\",\"pid\":{PID_CPUS},\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":\"CPUs\"}}}}"
    )?;
    s.events += 1;
    for c in 0..cpus {
        sep(&mut w)?;
        let name = trace.meta.track_names.get(c).cloned().unwrap_or_else(|| format!("CPU {c}"));
        writeln!(
            w,
            "{{\"ph\":\"M\",\"pid\":{PID_CPUS},\"tid\":{c},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}},",
            json_str(&name)
        )?;
        write!(w, "{{\"ph\":\"M\",\"pid\":{PID_CPUS},\"tid\":{c},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{c}}}}}")?;
        s.events += 2;
    }

    // CPU tracks: records ordered by (CPU, time, recording order).
    let mut order: Vec<u32> = (0..recs.len() as u32).filter(|&i| !is_lock(&recs[i as usize].ev)).collect();
    order.sort_by_key(|&i| (recs[i as usize].cpu, recs[i as usize].ts_ns, i));
    for run in order.chunk_by(|&a, &b| recs[a as usize].cpu == recs[b as usize].cpu) {
        // Index in `run` of the next switch after position k (found by one forward scan).
        let mut next_switch = 0usize;
        for (k, &i) in run.iter().enumerate() {
            let r = &recs[i as usize];
            let (tid, ts) = (r.cpu, us(r.ts_ns));
            match r.ev {
                Event::Switch { prev, next: Some(n), .. } => {
                    next_switch = next_switch.max(k + 1);
                    while next_switch < run.len() && !matches!(recs[run[next_switch] as usize].ev, Event::Switch { .. })
                    {
                        next_switch += 1;
                    }
                    let (end, end_state) = match run.get(next_switch).map(|&j| &recs[j as usize]) {
                        Some(Record { ts_ns, ev: Event::Switch { prev_state, .. }, .. }) => {
                            (*ts_ns, state_name(*prev_state))
                        }
                        _ => {
                            s.unfinished += 1;
                            (end_ns, "unfinished")
                        }
                    };
                    sep(&mut w)?;
                    write!(
                        w,
                        "{{\"ph\":\"X\",\"pid\":{PID_CPUS},\"tid\":{tid},\"ts\":{ts},\"dur\":{},\"name\":{},\"cat\":\"run\",\"args\":{{\"task\":{n},\"prev\":{},\"end_state\":\"{end_state}\"}}}}",
                        us(end.saturating_sub(r.ts_ns)),
                        json_str(&trace.task_label(n)),
                        opt(prev),
                    )?;
                    s.slices += 1;
                }
                Event::Switch { next: None, .. } => continue, // the CPU goes idle: ends a slice, starts none
                Event::Wakeup { task, waker, target } => {
                    sep(&mut w)?;
                    write!(
                        w,
                        "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{PID_CPUS},\"tid\":{tid},\"ts\":{ts},\"name\":\"wakeup\",\"cat\":\"wakeup\",\"args\":{{\"task\":{task},\"label\":{},\"waker\":{},\"target_cpu\":{}}}}}",
                        json_str(&trace.task_label(task)),
                        opt(waker),
                        opt(target)
                    )?;
                    s.wakeups += 1;
                }
                Event::Migrate { task, from, to } => {
                    sep(&mut w)?;
                    write!(
                        w,
                        "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{PID_CPUS},\"tid\":{tid},\"ts\":{ts},\"name\":\"migrate\",\"cat\":\"migrate\",\"args\":{{\"task\":{task},\"from\":{from},\"to\":{to}}}}}"
                    )?;
                    s.migrations += 1;
                }
                Event::Fork { parent, child } => {
                    sep(&mut w)?;
                    write!(
                        w,
                        "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{PID_CPUS},\"tid\":{tid},\"ts\":{ts},\"name\":\"fork\",\"cat\":\"fork\",\"args\":{{\"parent\":{},\"child\":{child},\"label\":{}}}}}",
                        opt(parent),
                        json_str(&trace.task_label(child))
                    )?;
                    s.forks += 1;
                }
                Event::Exit { task } => {
                    sep(&mut w)?;
                    write!(
                        w,
                        "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{PID_CPUS},\"tid\":{tid},\"ts\":{ts},\"name\":\"exit\",\"cat\":\"exit\",\"args\":{{\"task\":{task}}}}}"
                    )?;
                    s.exits += 1;
                }
                Event::Ipi { to } => {
                    sep(&mut w)?;
                    write!(
                        w,
                        "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{PID_CPUS},\"tid\":{tid},\"ts\":{ts},\"name\":\"ipi\",\"cat\":\"ipi\",\"args\":{{\"to\":{to}}}}}"
                    )?;
                    s.ipis += 1;
                }
                Event::LockAcquire { .. } | Event::LockRelease { .. } => unreachable!("filtered out above"),
            }
            s.events += 1;
        }
    }
    drop(order);

    // Lock tracks: acquire/release pairs per lock, in time order.
    let mut order: Vec<u32> = (0..recs.len() as u32).filter(|&i| is_lock(&recs[i as usize].ev)).collect();
    if !order.is_empty() {
        order.sort_by_key(|&i| (lock_of(&recs[i as usize].ev), recs[i as usize].ts_ns, i));
        sep(&mut w)?;
        write!(
            w,
            "{{\"ph\":\"M\",\"pid\":{PID_LOCKS},\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":\"Locks\"}}}}"
        )?;
        s.events += 1;
        for run in order.chunk_by(|&a, &b| lock_of(&recs[a as usize].ev) == lock_of(&recs[b as usize].ev)) {
            let lock = lock_of(&recs[run[0] as usize].ev);
            let name = trace.meta.locks.get(lock as usize).cloned().unwrap_or_else(|| format!("lock {lock}"));
            sep(&mut w)?;
            write!(
                w,
                "{{\"ph\":\"M\",\"pid\":{PID_LOCKS},\"tid\":{lock},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
                json_str(&format!("{name} #{lock}"))
            )?;
            s.events += 1;
            // A hold whose release is past the cap has no end: it is left out.
            for pair in run.windows(2) {
                let (a, b) = (&recs[pair[0] as usize], &recs[pair[1] as usize]);
                if let (Event::LockAcquire { wait_ns, .. }, Event::LockRelease { .. }) = (a.ev, b.ev) {
                    sep(&mut w)?;
                    write!(
                        w,
                        "{{\"ph\":\"X\",\"pid\":{PID_LOCKS},\"tid\":{lock},\"ts\":{},\"dur\":{},\"name\":\"CPU {}\",\"cat\":\"lock\",\"args\":{{\"cpu\":{},\"wait_ns\":{wait_ns}}}}}",
                        us(a.ts_ns),
                        us(b.ts_ns.saturating_sub(a.ts_ns)),
                        a.cpu,
                        a.cpu
                    )?;
                    s.lock_holds += 1;
                    s.events += 1;
                }
            }
        }
    }
    w.write_all(b"\n]}\n")?;
    w.flush()?;
    Ok(s)
}

fn is_lock(ev: &Event) -> bool {
    matches!(ev, Event::LockAcquire { .. } | Event::LockRelease { .. })
}

fn lock_of(ev: &Event) -> u32 {
    match *ev {
        Event::LockAcquire { lock, .. } | Event::LockRelease { lock } => lock,
        _ => u32::MAX,
    }
}

/// ns as the format's µs, exactly: `<µs>.<ns within the µs, 3 digits>`.
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn opt(v: Option<u32>) -> String {
    v.map_or_else(|| "null".to_string(), |v| v.to_string())
}

/// `s` as a JSON string literal (RFC 8259 §7). Hand-written so that the core crate
/// does not link serde_json: its extra `PartialEq` impls (`usize == Value`) break type
/// inference in every dependent crate's `assert_eq!(x, vec![])`.
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{TraceBuf, TraceMeta};
    use crate::PrevState;

    fn sample() -> Trace {
        let mut b = TraceBuf::new(100);
        b.push(0, 0, Event::Fork { parent: None, child: 0 });
        b.push(0, 0, Event::Wakeup { task: 0, waker: None, target: Some(0) });
        b.push(1_500, 0, Event::Switch { prev: None, next: Some(0), prev_state: PrevState::Runnable });
        b.push(1_600, 0, Event::LockAcquire { lock: 0, wait_ns: 7 });
        b.push(1_700, 0, Event::LockRelease { lock: 0 });
        // Recorded out of time order on CPU 0: the writer sorts the track.
        b.push(1_550, 0, Event::Ipi { to: 1 });
        b.push(2_000_001, 0, Event::Switch { prev: Some(0), next: None, prev_state: PrevState::Exited });
        b.finish(TraceMeta {
            source: "unit \"test\"".into(),
            cpus: 2,
            task_roles: vec!["root".into()],
            locks: vec!["rq".into()],
            track_names: Vec::new(),
        })
    }

    #[test]
    fn writes_valid_json_with_exact_timestamps_and_sorted_tracks() {
        let mut out = Vec::new();
        let s = write(&sample(), &mut out).unwrap();
        assert_eq!((s.slices, s.wakeups, s.forks, s.ipis, s.lock_holds, s.unfinished), (1, 1, 1, 1, 1, 0));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let evs = v["traceEvents"].as_array().unwrap();
        let slice = evs.iter().find(|e| e["ph"] == "X" && e["pid"] == 1).unwrap();
        assert_eq!(slice["name"], "t0 root");
        assert_eq!(slice["ts"].as_f64().unwrap(), 1.5);
        assert_eq!(slice["dur"].as_f64().unwrap(), 1998.501);
        assert_eq!(slice["args"]["end_state"], "exited");
        let ts: Vec<f64> =
            evs.iter().filter(|e| e["pid"] == 1 && e["ph"] != "M").map(|e| e["ts"].as_f64().unwrap()).collect();
        assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
        assert_eq!(v["otherData"]["source"], "unit \"test\"");
    }

    #[test]
    fn output_is_deterministic_and_an_open_slice_is_closed_at_the_end() {
        let mut t = sample();
        t.records.pop(); // the last switch: task 0's slice stays open
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let s = write(&t, &mut a).unwrap();
        write(&t, &mut b).unwrap();
        assert_eq!(a, b);
        assert_eq!(s.unfinished, 1);
    }

    #[test]
    fn labels_are_escaped() {
        let mut b = TraceBuf::new(4);
        b.push(0, 0, Event::Fork { parent: None, child: 0 });
        let odd = "a\"b\\c\nd\u{1}é";
        let t = b.finish(TraceMeta {
            source: odd.into(),
            cpus: 1,
            task_roles: vec![odd.into()],
            locks: vec![],
            track_names: vec![odd.into()],
        });
        let mut out = Vec::new();
        write(&t, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["otherData"]["source"], odd);
        let fork = v["traceEvents"].as_array().unwrap().iter().find(|e| e["name"] == "fork").unwrap();
        assert_eq!(fork["args"]["label"], format!("t0 {odd}"));
        let track = v["traceEvents"].as_array().unwrap().iter().find(|e| e["name"] == "thread_name").unwrap();
        assert_eq!(track["args"]["name"], odd);
    }

    #[test]
    fn the_cap_keeps_a_prefix_and_counts_the_rest() {
        let mut b = TraceBuf::new(2);
        for t in 0..5 {
            b.push(t, 0, Event::Exit { task: t as u32 });
        }
        assert_eq!((b.len(), b.dropped()), (2, 3));
        let t = b.finish(TraceMeta::default());
        let mut out = Vec::new();
        let s = write(&t, &mut out).unwrap();
        assert_eq!((s.exits, s.dropped), (2, 3));
    }
}
