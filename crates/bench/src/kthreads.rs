//! Kernel threads: the Chat and hackbench topologies, a ping-pong and the wake-latency
//! program with one OS thread per task and blocking pipes, with the async programs'
//! payloads and sizes (one `u64` per message: the same values, the same counts and
//! checks) and, under `--pin all`, the same 2-CPU affinity as schedlab's two workers
//! (none under `--pin none`); threads are created and wait on a start gate outside the
//! timed region. Plus `perf bench sched messaging -t -p` (hackbench with threads and
//! pipes, 100-byte messages, threads created inside its timing, all CPUs: not
//! like-for-like, reported as its own row) when `perf` is installed.

use crate::measure::{children_cpu_ns, Measure, Stopwatch};
use crate::wake_latency::{self, Driver, WakeLatency, WakeScale};
use crate::{ChatSize, HackSize, Pin};
use hdrhistogram::Histogram;
use std::io::{PipeReader, PipeWriter, Read, Write};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes per message: one `u64`, the async programs' payload.
pub const MSG: usize = 8;
const STACK: usize = 64 * 1024;

/// The CPUs schedlab's two workers are pinned to (the first two this process may use;
/// fewer on a smaller machine).
pub fn worker_cpus() -> Vec<usize> {
    core_affinity::get_core_ids().unwrap_or_default().into_iter().take(2).map(|c| c.id).collect()
}

/// The CPUs kernel threads are restricted to under `pin`: [`worker_cpus`] under
/// [`Pin::All`], none (no affinity set, the kernel places them) under [`Pin::None`].
fn cpus_for(pin: Pin) -> Vec<usize> {
    if pin.pinned() {
        worker_cpus()
    } else {
        Vec::new()
    }
}

/// Make `cmd`'s process start restricted to `cpus`: the child calls [`allow_cpus`]
/// between fork and exec, so every thread it starts inherits the set.
pub fn restrict_command(cmd: &mut std::process::Command, cpus: Vec<usize>) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure only calls sched_setaffinity
    // (async-signal-safe) on a set built before the fork.
    unsafe {
        cmd.pre_exec(move || if allow_cpus(&cpus) { Ok(()) } else { Err(std::io::Error::last_os_error()) });
    }
}

/// Restrict the calling thread to `cpus` (`sched_setaffinity`); false if that failed
/// or `cpus` is empty.
pub fn allow_cpus(cpus: &[usize]) -> bool {
    if cpus.is_empty() {
        return false;
    }
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET and sched_setaffinity only
    // touch the set we own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

fn pipe() -> (PipeReader, PipeWriter) {
    std::io::pipe().expect("pipe")
}

/// Threads started on `cpus` that, once running, wait at a start gate: the timed
/// region starts when every thread has arrived, just before the gate opens (so a
/// late-scheduled main thread cannot start the clock after the work is done).
struct Threads {
    cpus: Vec<usize>,
    threads: usize,
    ready: Arc<AtomicUsize>,
    gate: Arc<(Mutex<bool>, Condvar)>,
}

impl Threads {
    fn new(cpus: Vec<usize>, threads: usize) -> Threads {
        Threads {
            cpus,
            threads,
            ready: Arc::new(AtomicUsize::new(0)),
            gate: Arc::new((Mutex::new(false), Condvar::new())),
        }
    }
    fn spawn<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
        let (cpus, ready, gate) = (self.cpus.clone(), self.ready.clone(), self.gate.clone());
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn(move || {
                allow_cpus(&cpus);
                let (open, cv) = &*gate;
                let mut g = open.lock().expect("start gate");
                ready.fetch_add(1, Ordering::SeqCst);
                while !*g {
                    g = cv.wait(g).expect("start gate");
                }
                drop(g);
                f()
            })
            .expect("spawn thread")
    }
    /// Wait until every thread waits at the gate, start the clock, open the gate.
    fn go(&self) -> Stopwatch {
        while self.ready.load(Ordering::SeqCst) < self.threads {
            std::thread::sleep(Duration::from_micros(50));
        }
        let (open, cv) = &*self.gate;
        let mut g = open.lock().expect("start gate");
        let sw = Stopwatch::start();
        *g = true;
        cv.notify_all();
        drop(g);
        sw
    }
}

fn recv(r: &mut PipeReader) -> u64 {
    let mut buf = [0u8; MSG];
    r.read_exact(&mut buf).expect("read message");
    u64::from_le_bytes(buf)
}

fn send(w: &mut PipeWriter, v: u64) {
    // ≤ PIPE_BUF bytes: atomic even with several writers on one pipe.
    w.write_all(&v.to_le_bytes()).expect("write message");
}

/// Chat with one thread per task and a pipe per channel, on the workers' 2 CPUs:
/// messages/s delivered to the clients, timed from the start barrier to the last
/// delivery. Checks the count and payload sum like the async program.
pub fn chat(size: ChatSize) -> f64 {
    chat_measure(size, Pin::All).value
}

/// [`chat`] as a [`Measure`]; threads on the workers' 2 CPUs under [`Pin::All`],
/// anywhere under [`Pin::None`].
pub fn chat_measure(size: ChatSize, pin: Pin) -> Measure {
    let ChatSize { rooms, users, messages: m } = size;
    let n = rooms * users;
    let fanout = m * (users - 1);
    let th = Threads::new(cpus_for(pin), 4 * n);
    let mut c2s: Vec<_> = (0..n).map(|_| Some(pipe())).collect();
    let queue: Vec<_> = (0..n).map(|_| pipe()).collect();
    let mut s2c: Vec<_> = (0..n).map(|_| Some(pipe())).collect();
    let mut queue_rx: Vec<_> = Vec::with_capacity(n);
    let mut queue_tx: Vec<_> = Vec::with_capacity(n);
    for (r, w) in queue {
        queue_rx.push(Some(r));
        queue_tx.push(w);
    }
    let mut others = Vec::new();
    let mut c2s_tx = Vec::new();
    let mut s2c_rx = Vec::new();
    for u in 0..n {
        let (c_r, c_w) = c2s[u].take().expect("fresh");
        let (s_r, mut s_w) = s2c[u].take().expect("fresh");
        c2s_tx.push(c_w);
        s2c_rx.push(s_r);
        let mut q_r = queue_rx[u].take().expect("fresh");
        others.push(th.spawn(move || {
            for _ in 0..fanout {
                let x = recv(&mut q_r);
                send(&mut s_w, x);
            }
            fanout as u64
        }));
        let first = u / users * users;
        let mut outs: Vec<PipeWriter> =
            (first..first + users).filter(|&v| v != u).map(|v| queue_tx[v].try_clone().expect("clone pipe")).collect();
        let mut c_r = c_r;
        others.push(th.spawn(move || {
            for _ in 0..m {
                let x = recv(&mut c_r);
                for q in &mut outs {
                    send(q, x);
                }
            }
            m as u64
        }));
    }
    drop(queue_tx);
    let receivers: Vec<_> = s2c_rx
        .into_iter()
        .map(|mut r| {
            th.spawn(move || {
                let mut sum = 0u64;
                for _ in 0..fanout {
                    sum = sum.wrapping_add(recv(&mut r));
                }
                (fanout as u64, sum)
            })
        })
        .collect();
    for (u, mut w) in c2s_tx.into_iter().enumerate() {
        others.push(th.spawn(move || {
            for i in 0..m {
                send(&mut w, (u * m + i) as u64);
            }
            m as u64
        }));
    }
    let sw = th.go();
    let (mut delivered, mut sum) = (0u64, 0u64);
    for h in receivers {
        let (a, b) = h.join().expect("client_receive");
        delivered += a;
        sum = sum.wrapping_add(b);
    }
    let measure = sw.rate(delivered);
    let rest: u64 = others.into_iter().map(|h| h.join().expect("chat thread")).sum();
    assert_eq!(delivered, size.deliveries(), "chat: every message delivered");
    assert_eq!(sum, size.payload_sum(), "chat: payload sum of the deliveries");
    assert_eq!(rest, size.deliveries() + 2 * (n * m) as u64, "chat: forwarded, server-received and sent");
    measure
}

/// hackbench with one thread per sender and receiver and a pipe per receiver, on the
/// workers' 2 CPUs: messages/s received, timed from the start barrier. Checks the count
/// and payload sum like the async program.
pub fn hackbench(size: HackSize) -> f64 {
    hackbench_measure(size, Pin::All).value
}

/// [`hackbench`] as a [`Measure`]; threads on the workers' 2 CPUs under [`Pin::All`],
/// anywhere under [`Pin::None`].
pub fn hackbench_measure(size: HackSize, pin: Pin) -> Measure {
    let HackSize { groups, fds, loops } = size;
    let th = Threads::new(cpus_for(pin), 2 * groups * fds);
    let mut writers = Vec::with_capacity(groups * fds);
    let receivers: Vec<_> = (0..groups * fds)
        .map(|_| {
            let (mut r, w) = pipe();
            writers.push(w);
            th.spawn(move || {
                let mut sum = 0u64;
                for _ in 0..fds * loops {
                    sum = sum.wrapping_add(recv(&mut r));
                }
                ((fds * loops) as u64, sum)
            })
        })
        .collect();
    let senders: Vec<_> = (0..groups * fds)
        .map(|s| {
            let g = s / fds;
            let mut outs: Vec<PipeWriter> =
                writers[g * fds..(g + 1) * fds].iter().map(|w| w.try_clone().expect("clone pipe")).collect();
            th.spawn(move || {
                for i in 0..loops {
                    for w in &mut outs {
                        send(w, (s * loops + i) as u64);
                    }
                }
                (loops * fds) as u64
            })
        })
        .collect();
    drop(writers);
    let sw = th.go();
    let (mut got, mut sum) = (0u64, 0u64);
    for h in receivers {
        let (a, b) = h.join().expect("receiver");
        got += a;
        sum = sum.wrapping_add(b);
    }
    let measure = sw.rate(got);
    let sent: u64 = senders.into_iter().map(|h| h.join().expect("sender")).sum();
    assert_eq!(got, size.messages(), "hackbench: every message received");
    assert_eq!(sent, size.messages(), "hackbench: every message sent");
    assert_eq!(sum, size.payload_sum(), "hackbench: payload sum received");
    measure
}

/// Two threads bouncing a `u64` through two pipes, ping on the workers' first CPU and
/// pong on the second (`cross`) or the first too: ns per round trip.
pub fn pingpong(budget: Duration) -> f64 {
    pingpong_measure(true, budget, Pin::All).value
}

/// [`pingpong`] as a [`Measure`], same CPU or across the two under [`Pin::All`]
/// (under [`Pin::None`] both threads float, so `cross` changes nothing); checks every
/// message came back incremented.
pub fn pingpong_measure(cross: bool, budget: Duration, pin: Pin) -> Measure {
    let cpus = cpus_for(pin);
    let cpu = |i: usize| cpus.get(i.min(cpus.len().saturating_sub(1))).map(|&c| vec![c]).unwrap_or_default();
    let (mut a_r, mut a_w) = pipe();
    let (mut b_r, mut b_w) = pipe();
    let pong_cpu = cpu(usize::from(cross));
    let pong = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            allow_cpus(&pong_cpu);
            let mut seen = 0u64;
            let mut buf = [0u8; MSG];
            while a_r.read_exact(&mut buf).is_ok() {
                seen += 1;
                let x = u64::from_le_bytes(buf) + 1;
                if b_w.write_all(&x.to_le_bytes()).is_err() {
                    break;
                }
            }
            seen
        })
        .expect("spawn thread");
    let ping_cpu = cpu(0);
    let ping = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            allow_cpus(&ping_cpu);
            let mut x = 0u64;
            let mut round = |x: &mut u64| {
                send(&mut a_w, *x);
                *x = recv(&mut b_r);
            };
            let t0 = Instant::now();
            while x < 2_000 && (!x.is_multiple_of(32) || t0.elapsed() < budget / 4) {
                round(&mut x);
            }
            let warm = x;
            let sw = Stopwatch::start();
            let mut n = 0u64;
            while sw.elapsed() < budget {
                for _ in 0..32 {
                    round(&mut x);
                }
                n += 32;
            }
            let m = sw.per_op(n);
            assert_eq!(x, warm + n, "kernel-thread ping-pong: every message came back");
            (m, x)
        })
        .expect("spawn thread");
    let (m, rounds) = ping.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
    let seen = pong.join().expect("pong thread");
    assert_eq!(seen, rounds, "kernel-thread ping-pong: pong saw every message");
    m
}

/// The wake-latency program ([`crate::wake_latency`]) with one OS thread per task, the
/// kernel scheduling them: `hogs_per_worker` hog threads per CPU of [`worker_cpus`] that
/// spin a chunk on the clock and call `sched_yield` between chunks, a probe thread
/// blocked on a pipe, and the calling thread as driver, sleeping on the kernel's timer
/// and writing the send time every period. Hogs and probe run on those CPUs under
/// [`Pin::All`], anywhere under [`Pin::None`]. The kernel preempts, so no chunk bounds
/// the probe's wait: this is what preemption buys on this machine. Checks that every
/// probe sent ran and that the hogs ran.
pub fn wake_latency(s: &WakeScale, pin: Pin) -> WakeLatency {
    let cpus = worker_cpus().len().max(1);
    let hogs = s.hogs_per_worker * cpus;
    let th = Threads::new(cpus_for(pin), hogs + 1);
    let stop = Arc::new(AtomicBool::new(false));
    let base = Instant::now();
    let (mut rx, mut tx) = pipe();
    let probe = th.spawn(move || {
        let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds");
        let mut buf = [0u8; MSG];
        // The driver closes the pipe after its last send: EOF ends the probe.
        while rx.read_exact(&mut buf).is_ok() {
            let sent = u64::from_le_bytes(buf);
            let now = base.elapsed().as_nanos() as u64;
            hist.saturating_record(now.saturating_sub(sent).max(1));
        }
        hist
    });
    let chunk = s.chunk;
    let hog_threads: Vec<_> = (0..hogs)
        .map(|_| {
            let stop = stop.clone();
            th.spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    wake_latency::compute(chunk);
                    n += 1;
                    std::thread::yield_now();
                }
                n
            })
        })
        .collect();
    th.go();
    let sent = wake_latency::drive_from_outside(Instant::now() + s.warmup, s, || {
        send(&mut tx, base.elapsed().as_nanos() as u64)
    });
    drop(tx);
    // The last probes still run under load; then the hogs stop.
    let hist = probe.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
    stop.store(true, Ordering::Relaxed);
    let chunks: u64 = hog_threads.into_iter().map(|h| h.join().expect("hog thread")).sum();
    assert!(sent > 0, "no probe sent in {:?}", s.duration);
    assert_eq!(hist.len(), sent, "kernel-thread wake latency: every probe ran");
    WakeLatency { driver: Driver::Outside, workers: cpus, hogs, sent, ran: hist.len(), chunks, hist }
}

/// Command line of the `perf` hackbench run.
pub fn perf_args(size: HackSize) -> Vec<String> {
    ["bench", "sched", "messaging", "-t", "-p", "-g"]
        .iter()
        .map(|s| s.to_string())
        .chain([size.groups.to_string(), "-l".into(), size.loops.to_string()])
        .collect()
}

/// `perf bench sched messaging -t -p -g G -l L` (20 senders × 20 receivers per group,
/// threads and pipes): messages/s, or why it did not run. Needs `size.fds == 20`.
pub fn perf_messaging(size: HackSize) -> Result<f64, crate::BenchError> {
    perf_messaging_measure(size).map(|m| m.value)
}

/// [`perf_messaging`] as a [`Measure`]: CPU time is the perf child's whole run
/// (`getrusage(RUSAGE_CHILDREN)`, thread creation included), per perf's timed messages.
pub fn perf_messaging_measure(size: HackSize) -> Result<Measure, crate::BenchError> {
    perf_run(size).map_err(crate::BenchError::Tool)
}

fn perf_run(size: HackSize) -> Result<Measure, String> {
    if size.fds != 20 {
        return Err("perf messaging always uses 20 fds per group".into());
    }
    let cpu0 = children_cpu_ns();
    let out = Command::new("perf").args(perf_args(size)).output().map_err(|e| format!("perf: {e}"))?;
    let cpu = children_cpu_ns().saturating_sub(cpu0);
    if !out.status.success() {
        return Err(format!("perf failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let secs = parse_perf_total(&text).ok_or_else(|| format!("no 'Total time' in perf output: {text}"))?;
    Ok(Measure::rate(size.messages(), Duration::from_secs_f64(secs), cpu))
}

/// The seconds of perf's `Total time: 0.123 [sec]` line.
pub fn parse_perf_total(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.trim_start().starts_with("Total time"))?;
    let v: f64 = line.split(':').nth(1)?.split_whitespace().next()?.parse().ok()?;
    (v > 0.0).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topologies_deliver_every_message() {
        for pin in [Pin::All, Pin::None] {
            let c = chat_measure(ChatSize { rooms: 1, users: 4, messages: 5 }, pin);
            assert!(c.value > 0.0 && c.cpu_per_op > 0.0, "{c:?}");
            assert!(hackbench_measure(HackSize { groups: 2, fds: 3, loops: 4 }, pin).value > 0.0);
            for cross in [false, true] {
                let m = pingpong_measure(cross, Duration::from_millis(5), pin);
                assert!(m.value > 0.0 && m.cpu_per_op > 0.0, "{m:?}");
            }
        }
    }

    #[test]
    fn threads_run_on_the_workers_cpus() {
        let cpus = worker_cpus();
        let got = std::thread::spawn(move || {
            assert!(allow_cpus(&cpus));
            (cpus, core_affinity::get_core_ids().unwrap_or_default().into_iter().map(|c| c.id).collect::<Vec<_>>())
        })
        .join()
        .unwrap();
        assert_eq!(got.0, got.1);
    }

    #[test]
    fn perf_output_is_parsed() {
        let text = "# Running 'sched/messaging' benchmark:\n# 20 sender and receiver threads per group\n# 1 groups == 40 threads run\n\n     Total time: 0.041 [sec]\n";
        assert_eq!(parse_perf_total(text), Some(0.041));
        assert_eq!(parse_perf_total("nothing"), None);
        assert_eq!(
            perf_args(HackSize { groups: 2, fds: 20, loops: 10 }).join(" "),
            "bench sched messaging -t -p -g 2 -l 10"
        );
    }
}
