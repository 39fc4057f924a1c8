//! schedlab's own trace file (Chrome JSON, `docs/traces.md`), read back with
//! `serde_json::Value` — not with the writer's types, so any file of the published
//! layout is accepted.
//!
//! From process 1 ("CPUs"): each run slice (`"ph":"X"`, `args.task`,
//! `args.end_state`) is a dispatch at `ts` and a switch-out at `ts + dur`;
//! instants `wakeup` (`args.task`, `args.waker`), `fork` (`args.parent`,
//! `args.child`) and `exit` (`args.task`). Everything else (migrations, IPIs, lock
//! holds, metadata) is skipped. Task ids are the engine's; the runtime recycles them
//! after an exit, and a `fork` of an id starts a new task. The file orders events by
//! track, so they are sorted by time; at one timestamp a switch-out comes before a
//! dispatch, then forks, wake-ups and exits, and otherwise file order is kept.
//!
//! Errors name the file and, for a syntax error, its line (from serde_json); for an
//! event with a missing or mistyped field, its index in `traceEvents` (the writer puts
//! event `k` on line `k + 2`).

use super::{err, Builder, Out, Raw, Replay};
use schedlab_core::SpecError;
use serde_json::Value;
use std::path::Path;

/// µs (the format's unit, a JSON number) → ns, exactly for the writer's 3 decimals.
fn ns(v: &Value) -> Option<u64> {
    let us = v.as_f64()?;
    // NaN and negatives fail `contains`; the bound keeps the ns in a u64 (exact to the
    // ns below 2^53 ns, 104 days).
    (0.0..1.8e13).contains(&us).then(|| (us * 1000.0).round() as u64)
}

/// Parse a schedlab Chrome JSON trace.
pub fn parse(path: &Path, text: &str) -> Result<Replay, SpecError> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| err(path, Some(e.line()), format!("not valid JSON: {e} (a truncated file?)")))?;
    let events = doc
        .get("traceEvents")
        .and_then(Value::as_array)
        .ok_or_else(|| err(path, None, "no \"traceEvents\" array: not a Chrome/Perfetto JSON trace"))?;
    // (ts, order at equal ts, index in the file, event)
    let mut raw: Vec<(u64, u8, usize, Raw)> = Vec::new();
    for (k, e) in events.iter().enumerate() {
        let bad = |what: &str| err(path, None, format!("traceEvents[{k}] (line {}): {what}", k + 2));
        if e.get("pid").and_then(Value::as_u64) != Some(1) {
            continue;
        }
        let ph = e.get("ph").and_then(Value::as_str).ok_or_else(|| bad("no \"ph\""))?;
        if ph == "M" {
            continue;
        }
        let ts = e.get("ts").and_then(ns).ok_or_else(|| bad("no valid \"ts\""))?;
        let args = e.get("args");
        let arg = |name: &str| args.and_then(|a| a.get(name));
        let id = |name: &str| arg(name).and_then(Value::as_u64).ok_or_else(|| bad(&format!("no task id args.{name}")));
        let opt_id = |name: &str| match arg(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| bad(&format!("args.{name} is not a task id or null"))),
        };
        match (ph, e.get("name").and_then(Value::as_str)) {
            ("X", _) => {
                let dur = e.get("dur").and_then(ns).ok_or_else(|| bad("no valid \"dur\""))?;
                let task = id("task")?;
                let how = match arg("end_state").and_then(Value::as_str) {
                    Some("blocked") => Out::Blocked,
                    Some("exited") => Out::Exited,
                    Some("runnable" | "unfinished") => Out::Runnable,
                    other => {
                        return Err(bad(&format!("args.end_state {other:?} is not runnable/blocked/exited/unfinished")))
                    }
                };
                raw.push((ts, 1, k, Raw::In { task }));
                // A zero-length slice's end must still follow its start (stable sort).
                raw.push((ts.saturating_add(dur), if dur == 0 { 1 } else { 0 }, k, Raw::Out { task, how }));
            }
            ("i", Some("fork")) => raw.push((ts, 2, k, Raw::Fork { parent: opt_id("parent")?, child: id("child")? })),
            ("i", Some("wakeup")) => raw.push((ts, 3, k, Raw::Wake { task: id("task")?, waker: opt_id("waker")? })),
            ("i", Some("exit")) => raw.push((ts, 4, k, Raw::Exit { task: id("task")? })),
            _ => {}
        }
    }
    if raw.is_empty() {
        return Err(err(path, None, "no run slices, wake-ups or forks on the CPU tracks (process 1)"));
    }
    raw.sort_by_key(|&(ts, order, k, _)| (ts, order, k));
    let mut b = Builder::new();
    for (ts, _, _, ev) in raw {
        b.event(ts, ev);
    }
    Ok(b.finish())
}
