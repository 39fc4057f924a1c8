//! `perf sched script --ns` text → a trace in schedlab's vocabulary.
//!
//! A line of `perf script`'s default output reads
//! `COMM TID [CPU] SECS.NANOS: sched:EVENT: key=value ...`, where a command name may
//! hold spaces (`lto cgu.08`), so a line is cut at the ` [CPU] ` field and the values
//! at the known keys, never at spaces. Only the workload's tasks are kept: those whose
//! command name, as the event itself spells it, is one of the workload's
//! (`sched-messaging`, `sched-pipe`, the name the kernel-thread child gives itself, or
//! `tbench` and `tbench_srv`). The events of a task before it took that name (the
//! launcher's fork and exec) are not the workload's. Every other task is, for the
//! workload, an idle CPU.
//!
//! Kept: `sched_switch`, `sched_waking` (or `sched_wakeup` where a perf records that
//! instead; one of the two, never both), `sched_wakeup_new`, `sched_migrate_task`,
//! `sched_process_fork`. A wake-up of a task that is on a CPU at that moment
//! (`ttwu_runnable`: it set its state to sleep and was woken before it switched out)
//! starts no wait and is dropped, as the simulator records none for it either. The
//! waker of a wake-up is the task the line names before its CPU field (the task
//! running when the wake-up fired), when it is one of the workload's; otherwise (an
//! interrupt, another process) the wake-up has none: that is what `trace:` replays
//! as a message from the waker or as a sleep (docs/traces.md).

use schedlab_core::trace::{Event, Record, Trace, TraceMeta};
use schedlab_core::{PrevState, TaskId};
use std::collections::BTreeMap;
use std::io::BufRead;

/// One parsed line.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The running task's command name and id, as the line's head names them (`None`
    /// where the head is not `COMM TID`, or perf printed `-1` for a reaped task).
    pub comm: String,
    pub tid: Option<u64>,
    pub cpu: u32,
    pub ts_ns: u64,
    pub event: String,
    /// The fields after the event name, as `key=value` text.
    pub fields: String,
}

/// Cut one `perf script` line; `None` for anything that is not an event line.
pub fn parse_line(line: &str) -> Option<Line> {
    // The CPU field: the first " [digits]" followed by a space.
    let bytes = line.as_bytes();
    let mut i = 0;
    let (cpu, head, after) = loop {
        let open = line[i..].find(" [")? + i;
        let close = line[open..].find(']')? + open;
        let digits = &line[open + 2..close];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && bytes.get(close + 1) == Some(&b' ') {
            break (digits.parse::<u32>().ok()?, line[..open].trim(), &line[close + 1..]);
        }
        i = open + 2;
    };
    let (comm, tid) = match head.rsplit_once(' ') {
        Some((c, t)) => (c.trim(), t.parse::<u64>().ok()),
        None => ("", None),
    };
    let after = after.trim_start();
    let (ts, rest) = after.split_once(": ")?;
    let ts_ns = parse_secs(ts.trim())?;
    let rest = rest.trim_start();
    let (event, fields) = match rest.split_once(": ") {
        Some((e, f)) => (e, f),
        None => (rest.trim_end_matches(':'), ""),
    };
    let event = event.trim().strip_prefix("sched:")?.to_string();
    Some(Line { comm: comm.to_string(), tid, cpu, ts_ns, event, fields: fields.trim().to_string() })
}

/// `23603.606044123` seconds → ns (any number of decimals up to 9).
fn parse_secs(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let w: u64 = whole.parse().ok()?;
    let f: u64 = if frac.is_empty() { 0 } else { frac.parse().ok()? };
    Some(w.checked_mul(1_000_000_000)? + f * 10u64.pow(9 - frac.len() as u32))
}

/// The value of `key` in `fields`: from after `key=` to the next ` k=` of one of
/// `keys` (or ` ==>`, or the end). Values may hold spaces (command names).
pub fn field<'a>(fields: &'a str, key: &str, keys: &[&str]) -> Option<&'a str> {
    let start = find_key(fields, key)? + key.len() + 1;
    let tail = &fields[start..];
    let mut end = tail.len();
    for k in keys.iter().filter(|&&k| k != key) {
        if let Some(p) = find_key(tail, k) {
            end = end.min(p);
        }
    }
    if let Some(p) = tail.find(" ==>") {
        end = end.min(p);
    }
    Some(tail[..end].trim_end())
}

/// Where `key=` starts in `s`, at the start or after a space.
fn find_key(s: &str, key: &str) -> Option<usize> {
    let pat = format!("{key}=");
    let mut from = 0;
    while let Some(p) = s[from..].find(&pat) {
        let at = from + p;
        if at == 0 || s.as_bytes()[at - 1] == b' ' {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

const SWITCH_KEYS: &[&str] =
    &["prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"];
const TASK_KEYS: &[&str] = &["comm", "pid", "prio", "target_cpu", "orig_cpu", "dest_cpu", "success"];
const FORK_KEYS: &[&str] = &["comm", "pid", "child_comm", "child_pid"];

/// What a recorded run held, besides the trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    /// Event lines read (all tasks).
    pub lines: u64,
    /// Distinct workload tasks seen.
    pub tasks: u64,
    /// Wake-ups of a task that was still on its CPU (dropped).
    pub wakeups_of_running: u64,
}

/// Builds a [`Trace`] of the tasks named by the workload's command names from `perf
/// sched script` lines.
pub struct Builder {
    comms: Vec<String>,
    ids: BTreeMap<u64, TaskId>,
    /// Each task's pid and command name, by id.
    pids: Vec<(u64, String)>,
    records: Vec<Record>,
    /// The workload task on each CPU, by the switches seen so far.
    on_cpu: BTreeMap<u32, TaskId>,
    max_cpu: u32,
    /// Which wake-up event this recording uses (`sched_waking` or `sched_wakeup`).
    wake_event: Option<String>,
    counts: Counts,
}

impl Builder {
    /// A builder of the tasks named `comm`.
    pub fn new(comm: &str) -> Builder {
        Builder::of(&[comm])
    }

    /// A builder of the tasks named any of `comms` (a client and its server).
    pub fn of(comms: &[&str]) -> Builder {
        Builder {
            comms: comms.iter().map(|c| c.to_string()).collect(),
            ids: BTreeMap::new(),
            pids: Vec::new(),
            records: Vec::new(),
            on_cpu: BTreeMap::new(),
            max_cpu: 0,
            wake_event: None,
            counts: Counts::default(),
        }
    }

    fn id(&mut self, pid: u64, comm: &str) -> TaskId {
        let next = self.ids.len() as TaskId;
        *self.ids.entry(pid).or_insert_with(|| {
            self.pids.push((pid, comm.to_string()));
            next
        })
    }

    /// The workload's id of `pid` when the event names it `comm`.
    fn member(&mut self, comm: Option<&str>, pid: Option<&str>) -> Option<TaskId> {
        let pid: u64 = pid?.parse().ok()?;
        let comm = comm?;
        if pid == 0 || !self.comms.iter().any(|c| c == comm) {
            return None;
        }
        Some(self.id(pid, comm))
    }

    /// Read one line (ignored unless it is one of the kept events).
    pub fn line(&mut self, text: &str) {
        let Some(l) = parse_line(text) else { return };
        self.counts.lines += 1;
        self.max_cpu = self.max_cpu.max(l.cpu);
        let f = l.fields.as_str();
        let ev = match l.event.as_str() {
            "sched_switch" => {
                let prev = self.member(field(f, "prev_comm", SWITCH_KEYS), field(f, "prev_pid", SWITCH_KEYS));
                let next = self.member(field(f, "next_comm", SWITCH_KEYS), field(f, "next_pid", SWITCH_KEYS));
                let state = field(f, "prev_state", SWITCH_KEYS).unwrap_or("");
                match next {
                    Some(n) => self.on_cpu.insert(l.cpu, n),
                    None => self.on_cpu.remove(&l.cpu),
                };
                if prev.is_none() && next.is_none() {
                    return;
                }
                Event::Switch { prev, next, prev_state: prev_state(state) }
            }
            e @ ("sched_waking" | "sched_wakeup") => {
                // One wake-up event per wake: the first kind seen is this recording's.
                if self.wake_event.get_or_insert_with(|| e.to_string()) != e {
                    return;
                }
                let Some(task) = self.member(field(f, "comm", TASK_KEYS), field(f, "pid", TASK_KEYS)) else { return };
                if self.on_cpu.values().any(|&t| t == task) {
                    self.counts.wakeups_of_running += 1;
                    return;
                }
                let tid = l.tid.map(|t| t.to_string());
                let waker = self.member(Some(l.comm.as_str()), tid.as_deref()).filter(|&w| w != task);
                Event::Wakeup { task, waker, target: None }
            }
            "sched_wakeup_new" => {
                let Some(task) = self.member(field(f, "comm", TASK_KEYS), field(f, "pid", TASK_KEYS)) else { return };
                Event::Wakeup { task, waker: None, target: None }
            }
            "sched_migrate_task" => {
                let Some(task) = self.member(field(f, "comm", TASK_KEYS), field(f, "pid", TASK_KEYS)) else { return };
                let cpu = |k| field(f, k, TASK_KEYS).and_then(|v| v.parse::<u32>().ok());
                let (Some(from), Some(to)) = (cpu("orig_cpu"), cpu("dest_cpu")) else { return };
                self.max_cpu = self.max_cpu.max(from).max(to);
                Event::Migrate { task, from, to }
            }
            "sched_process_fork" => {
                let Some(child) = self.member(field(f, "child_comm", FORK_KEYS), field(f, "child_pid", FORK_KEYS))
                else {
                    return;
                };
                let parent = self.member(field(f, "comm", FORK_KEYS), field(f, "pid", FORK_KEYS));
                Event::Fork { parent, child }
            }
            _ => return,
        };
        self.records.push(Record { ts_ns: l.ts_ns, cpu: l.cpu, ev });
    }

    /// Read every line of `r`.
    pub fn read(&mut self, r: impl BufRead) -> std::io::Result<()> {
        for line in r.lines() {
            self.line(&line?);
        }
        Ok(())
    }

    /// The workload's trace (task roles: `COMM pid N`) and the counts.
    pub fn finish(mut self, source: &str) -> (Trace, Counts) {
        self.counts.tasks = self.ids.len() as u64;
        let meta = TraceMeta {
            source: source.to_string(),
            cpus: self.max_cpu as usize + 1,
            task_roles: self.pids.iter().map(|(p, c)| format!("{c} pid {p}")).collect(),
            locks: Vec::new(),
            track_names: Vec::new(),
        };
        let cap = self.records.len();
        (Trace { meta, records: self.records, cap, dropped: 0 }, self.counts)
    }
}

/// `prev_state` letters: `R`/`R+` still runnable (preempted), `X`/`Z` exited, anything
/// else (`S`, `D`, `I`, ...) asleep.
fn prev_state(s: &str) -> PrevState {
    match s.chars().next() {
        Some('R') => PrevState::Runnable,
        Some('X' | 'Z') => PrevState::Exited,
        _ => PrevState::Blocked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "\
      lto cgu.08 25402 [001] 23603.610017000: sched:sched_stat_runtime: comm=lto cgu.08 pid=25402 runtime=13263 [ns]
      lto cgu.08 25402 [001] 23603.610020000:       sched:sched_switch: prev_comm=lto cgu.08 prev_pid=25402 prev_prio=120 prev_state=R ==> next_comm=sched-pipe next_pid=7 next_prio=120
      sched-pipe     7 [001] 23603.610030000:       sched:sched_waking: comm=sched-pipe pid=8 prio=120 target_cpu=000
      sched-pipe     7 [001] 23603.610031000:       sched:sched_waking: comm=sched-pipe pid=7 prio=120 target_cpu=001
      sched-pipe     7 [001] 23603.610032000: sched:sched_migrate_task: comm=sched-pipe pid=8 prio=120 orig_cpu=1 dest_cpu=0
          <idle>     0 [000] 23603.610040000:       sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sched-pipe next_pid=8 next_prio=120
      sched-pipe     7 [001] 23603.610050000:       sched:sched_switch: prev_comm=sched-pipe prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=rustc next_pid=99 next_prio=130
           rustc    99 [001] 23603.610060000:       sched:sched_switch: prev_comm=rustc prev_pid=99 prev_prio=130 prev_state=R ==> next_comm=swapper/1 next_pid=0 next_prio=120
";

    #[test]
    fn lines_are_cut_at_the_cpu_field() {
        let l =
            parse_line("  lto cgu.08 25402 [001] 23603.610017: sched:sched_stat_runtime: comm=lto cgu.08 pid=25402")
                .unwrap();
        assert_eq!((l.cpu, l.ts_ns, l.event.as_str()), (1, 23_603_610_017_000, "sched_stat_runtime"));
        assert_eq!(field(&l.fields, "comm", TASK_KEYS), Some("lto cgu.08"));
        assert_eq!(field(&l.fields, "pid", TASK_KEYS), Some("25402"));
        assert!(parse_line("[ perf record: Woken up 2 times ]").is_none());
        assert!(parse_line("").is_none());
        assert_eq!(parse_secs("1.5"), Some(1_500_000_000));
        assert_eq!(parse_secs("2.000000007"), Some(2_000_000_007));
    }

    #[test]
    fn only_the_workload_is_kept() {
        let mut b = Builder::new("sched-pipe");
        b.read(SCRIPT.as_bytes()).unwrap();
        let (t, c) = b.finish("test");
        assert_eq!(c.tasks, 2);
        assert_eq!(c.wakeups_of_running, 1, "pid 7 woken while on CPU 1");
        let d = schedlab_validate::dist::analyze(&t);
        assert_eq!(d.switches, 2);
        assert_eq!(d.migrations, 1);
        assert_eq!(d.wakeups, 1);
        assert_eq!(d.wake_to_run_p50_ns, Some(10_000));
        // pid 7 ran 30 µs on CPU 1, then rustc (not the workload: idle for it).
        assert_eq!(d.run_len_p50_ns, Some(30_000));
        assert_eq!(t.meta.cpus, 2);
    }
}
