//! `perf script` text of `perf sched record` or `perf record -e 'sched:*'`.
//!
//! Each event line reads `COMM TID [CPU] SECS.FRAC: sched:EVENT: key=value ...`
//! (the default `perf script` layout; COMM may contain spaces). Read:
//! `sched_switch` (`prev_pid`, `prev_state`, `next_pid`), `sched_waking` (or
//! `sched_wakeup` when the file has no `sched_waking`: both fire for one wake-up),
//! `sched_process_fork` (`pid`, `child_pid`), `sched_process_exit`. Other events
//! (`sched_stat_runtime`, `sched_wakeup_new`, `sched_migrate_task`, ...) and `#`
//! comments are skipped. The waker of a wake-up is the line's TID: the task running
//! when it fired (the swapper's, pid 0, is an interrupt: no traced waker).
//!
//! **Which tasks.** `perf sched record` traces the whole machine. The recorded
//! command's process tree is kept: its root is the first task named `perf-exec` (the
//! child perf starts the command in, before it `exec`s), or, if there is none, the
//! task that is not forked in the file and forks the largest tree; every task it
//! forks, transitively, is kept. Everything else (swapper, perf, other processes)
//! only counts as an untraced waker.

use super::{err, Builder, Out, Raw, Replay};
use schedlab_core::SpecError;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One parsed event line.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Line<'a> {
    no: usize,
    comm: &'a str,
    /// `None`: perf printed `-1`, a task already reaped when the event was read.
    tid: Option<u64>,
    ts_ns: u64,
    kind: Kind<'a>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind<'a> {
    Switch { prev: u64, state: &'a str, next: u64, next_comm: &'a str },
    Waking { pid: u64 },
    Wakeup { pid: u64 },
    Fork { parent: u64, child: u64 },
    Exit { pid: u64 },
}

/// The value of `key=` in `fields`: up to the next space.
fn field<'a>(fields: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(at) = fields[from..].find(key) {
        let at = from + at;
        let before_ok = at == 0 || fields.as_bytes()[at - 1] == b' ';
        let rest = &fields[at + key.len()..];
        if before_ok && rest.starts_with('=') {
            let v = &rest[1..];
            return Some(v.split(' ').next().unwrap_or(""));
        }
        from = at + key.len();
    }
    None
}

fn num(fields: &str, key: &str) -> Result<u64, String> {
    let v = field(fields, key).ok_or_else(|| format!("no '{key}=' field"))?;
    v.parse().map_err(|_| format!("{key}={v} is not a number"))
}

/// `50775.908111` (µs, or ns with `--ns`) → ns.
fn timestamp(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let frac_ns: u64 = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Parse one line; `Ok(None)` for a line to skip (blank, comment, another event).
fn parse_line(no: usize, line: &str) -> Result<Option<Line<'_>>, String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        return Ok(None);
    }
    // The CPU column `[NNN]` splits the line: COMM TID before it, the rest after.
    let mut head = None;
    for (at, _) in line.match_indices('[') {
        let Some(close) = line[at..].find(']') else { break };
        let cpu = &line[at + 1..at + close];
        if !cpu.is_empty() && cpu.bytes().all(|b| b.is_ascii_digit()) && line[..at].ends_with(' ') {
            head = Some((at, at + close + 1));
            break;
        }
    }
    let (open, close) = head.ok_or("not a perf script event line (no [CPU] column)")?;
    let before = line[..open].trim_end();
    let (comm, tid) = match before.rsplit_once(' ') {
        Some((c, t)) => (c.trim(), t),
        None => return Err("no COMM and TID before the [CPU] column".into()),
    };
    let tid = match tid.parse::<i64>() {
        Ok(t) if t >= 0 => Some(t as u64),
        Ok(_) => None,
        Err(_) => return Err(format!("TID '{tid}' is not a number")),
    };
    // perf pads the event name to a column: split on runs of spaces.
    let rest = line[close..].trim_start();
    let (ts, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let ts_ns = ts.strip_suffix(':').and_then(timestamp).ok_or_else(|| format!("bad timestamp '{ts}'"))?;
    let rest = rest.trim_start();
    let (event, fields) = rest.split_once(' ').unwrap_or((rest, ""));
    if event.is_empty() {
        return Err("no event name".into());
    }
    let fields = fields.trim_start();
    let event = event.strip_suffix(':').ok_or_else(|| format!("bad event name '{event}'"))?;
    let kind = match event {
        "sched:sched_switch" => {
            // Fields in line order, so a truncated line names the first one missing.
            let prev = num(fields, "prev_pid")?;
            let state = field(fields, "prev_state").ok_or("no 'prev_state=' field")?;
            let next_comm = fields
                .split_once("next_comm=")
                .and_then(|(_, r)| r.rsplit_once(" next_pid="))
                .map(|(c, _)| c)
                .ok_or("no 'next_comm=' field")?;
            Kind::Switch { prev, state, next: num(fields, "next_pid")?, next_comm }
        }
        "sched:sched_waking" => Kind::Waking { pid: num(fields, "pid")? },
        "sched:sched_wakeup" => Kind::Wakeup { pid: num(fields, "pid")? },
        "sched:sched_process_fork" => Kind::Fork { parent: num(fields, "pid")?, child: num(fields, "child_pid")? },
        "sched:sched_process_exit" => Kind::Exit { pid: num(fields, "pid")? },
        _ => return Ok(None),
    };
    Ok(Some(Line { no, comm, tid, ts_ns, kind }))
}

/// `prev_state` → how the task left: `R`/`R+` preempted, `Z`/`X` exited, any other
/// (`S`, `D`, `I`, `T`, ...) a block.
fn out_state(s: &str) -> Out {
    match s.trim_end_matches('+') {
        "R" => Out::Runnable,
        "Z" | "X" | "X|Z" | "Z|X" => Out::Exited,
        _ => Out::Blocked,
    }
}

/// The recorded command's tasks (see the module documentation).
fn traced_tasks(lines: &[Line]) -> BTreeSet<u64> {
    let perf_exec = lines.iter().find_map(|l| match l.kind {
        Kind::Switch { next, next_comm: "perf-exec", .. } => Some(next),
        _ if l.comm == "perf-exec" => l.tid,
        _ => None,
    });
    let forks: Vec<(u64, u64)> = lines
        .iter()
        .filter_map(|l| match l.kind {
            Kind::Fork { parent, child } => Some((parent, child)),
            _ => None,
        })
        .collect();
    let tree_of = |root: u64| {
        let mut set = BTreeSet::from([root]);
        // Fork lines are in time order: a parent is in the set before its children fork.
        for &(p, c) in &forks {
            if set.contains(&p) {
                set.insert(c);
            }
        }
        set
    };
    if let Some(root) = perf_exec.filter(|&r| r != 0) {
        return tree_of(root);
    }
    let children: BTreeSet<u64> = forks.iter().map(|&(_, c)| c).collect();
    let mut best: Option<BTreeSet<u64>> = None;
    let mut seen = BTreeSet::new();
    for &(p, _) in &forks {
        if p == 0 || children.contains(&p) || !seen.insert(p) {
            continue;
        }
        let tree = tree_of(p);
        if best.as_ref().is_none_or(|b| tree.len() > b.len()) {
            best = Some(tree);
        }
    }
    best.unwrap_or_default()
}

/// Parse `perf script` text into the replay of the recorded command's tasks.
pub fn parse(path: &Path, text: &str) -> Result<Replay, SpecError> {
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(l) = parse_line(i + 1, line).map_err(|e| err(path, Some(i + 1), e))? {
            lines.push(l);
        }
    }
    if lines.is_empty() {
        return Err(err(
            path,
            None,
            "no sched_switch/sched_waking/sched_process_* events (is it `perf script` output?)",
        ));
    }
    // perf script sorts by time; a hand-edited file may not be: keep file order on ties.
    for w in lines.windows(2) {
        if w[1].ts_ns < w[0].ts_ns {
            return Err(err(path, Some(w[1].no), "timestamp goes back in time"));
        }
    }
    let traced = traced_tasks(&lines);
    if traced.is_empty() {
        return Err(err(path, None, "no recorded command found: no task named perf-exec and no fork events"));
    }
    let has_waking = lines.iter().any(|l| matches!(l.kind, Kind::Waking { .. }));
    let is = |pid: u64| traced.contains(&pid);
    let who = |pid: u64| Some(pid).filter(|&p| is(p));
    let mut b = Builder::new();
    let mut names: BTreeMap<u64, &str> = BTreeMap::new();
    for l in &lines {
        let t = l.ts_ns;
        if let Some(tid) = l.tid.filter(|&t| is(t)) {
            names.entry(tid).or_insert(l.comm);
        }
        match l.kind {
            Kind::Switch { prev, state, next, next_comm } => {
                if is(prev) {
                    b.event(t, Raw::Out { task: prev, how: out_state(state) });
                }
                if is(next) {
                    names.entry(next).or_insert(next_comm);
                    b.event(t, Raw::In { task: next });
                }
            }
            Kind::Waking { pid } | Kind::Wakeup { pid } => {
                let use_it = matches!(l.kind, Kind::Waking { .. }) == has_waking;
                if use_it && is(pid) {
                    b.event(t, Raw::Wake { task: pid, waker: l.tid.and_then(who) });
                }
            }
            Kind::Fork { parent, child } => {
                if is(child) {
                    b.event(t, Raw::Fork { parent: who(parent), child });
                }
            }
            Kind::Exit { pid } => {
                if is(pid) {
                    b.event(t, Raw::Exit { task: pid });
                }
            }
        }
    }
    for (pid, name) in names {
        b.name(pid, name);
    }
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_default_layout_with_a_comm_containing_spaces() {
        let l = parse_line(
            7,
            "  Web Content 23087 [001] 50745.753682: sched:sched_process_fork: comm=Web Content pid=23087 child_comm=x child_pid=23089",
        )
        .unwrap()
        .unwrap();
        assert_eq!((l.comm, l.tid, l.ts_ns), ("Web Content", Some(23087), 50_745_753_682_000));
        assert_eq!(l.kind, Kind::Fork { parent: 23087, child: 23089 });
        let s = parse_line(1, " swapper     0 [000] 1.5: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=perf exec next_pid=5 next_prio=120").unwrap().unwrap();
        assert_eq!(s.kind, Kind::Switch { prev: 0, state: "R", next: 5, next_comm: "perf exec" });
        assert_eq!(s.ts_ns, 1_500_000_000);
        let w = parse_line(
            2,
            "  perf 23529 [000] 50775.908111:       sched:sched_waking: comm=migration/0 pid=18 prio=0 target_cpu=000",
        )
        .unwrap()
        .unwrap();
        assert_eq!((w.tid, w.kind), (Some(23529), Kind::Waking { pid: 18 }));
        let reaped = parse_line(3, "             :-1    -1 [001] 50775.936373:       sched:sched_switch: prev_comm=a prev_pid=23533 prev_prio=120 prev_state=X ==> next_comm=b next_pid=23538 next_prio=120").unwrap().unwrap();
        assert_eq!((reaped.comm, reaped.tid), (":-1", None));
    }

    #[test]
    fn truncated_and_garbage_lines_are_errors() {
        let e = parse_line(1, " a 1 [000] 1.000001: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_st")
            .unwrap_err();
        assert!(e.contains("prev_state"), "{e}");
        assert!(parse_line(1, "hello world").unwrap_err().contains("[CPU]"));
        assert!(parse_line(1, " a 1 [000] 1.x: sched:sched_waking: pid=2").unwrap_err().contains("timestamp"));
        assert_eq!(parse_line(1, "# captured on: x").unwrap(), None);
        assert_eq!(parse_line(1, " a 1 [000] 1.0: sched:sched_stat_runtime: comm=a pid=1").unwrap(), None);
    }

    #[test]
    fn prev_states() {
        assert_eq!(out_state("R+"), Out::Runnable);
        assert_eq!(out_state("S"), Out::Blocked);
        assert_eq!(out_state("D"), Out::Blocked);
        assert_eq!(out_state("Z"), Out::Exited);
    }
}
