//! Kernel threads: the Chat and hackbench topologies (and a ping-pong) with one OS
//! thread per task and blocking pipes carrying 100-byte messages, like the originals;
//! plus `perf bench sched messaging -t -p` (hackbench with threads and pipes) when
//! `perf` is installed.

use crate::{ChatSize, HackSize};
use std::io::{PipeReader, PipeWriter, Read, Write};
use std::process::Command;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes per message (the originals' default).
pub const MSG: usize = 100;
const STACK: usize = 64 * 1024;

fn pipe() -> (PipeReader, PipeWriter) {
    std::io::pipe().expect("pipe")
}

fn thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    std::thread::Builder::new().stack_size(STACK).spawn(f).expect("spawn thread")
}

fn recv(r: &mut PipeReader) {
    let mut buf = [0u8; MSG];
    r.read_exact(&mut buf).expect("read message");
}

fn send(w: &mut PipeWriter, byte: u8) {
    // ≤ PIPE_BUF bytes: atomic even with several writers on one pipe.
    w.write_all(&[byte; MSG]).expect("write message");
}

/// Chat with one thread per task and a pipe per channel: messages/s delivered to the
/// clients, timed from the first thread creation to the last delivery.
pub fn chat(size: ChatSize) -> f64 {
    let ChatSize { rooms, users, messages: m } = size;
    let n = rooms * users;
    let fanout = m * (users - 1);
    let start = Instant::now();
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
        others.push(thread(move || {
            for _ in 0..fanout {
                recv(&mut q_r);
                send(&mut s_w, 2);
            }
        }));
        let first = u / users * users;
        let mut outs: Vec<PipeWriter> =
            (first..first + users).filter(|&v| v != u).map(|v| queue_tx[v].try_clone().expect("clone pipe")).collect();
        let mut c_r = c_r;
        others.push(thread(move || {
            for _ in 0..m {
                recv(&mut c_r);
                for q in &mut outs {
                    send(q, 1);
                }
            }
        }));
    }
    drop(queue_tx);
    let receivers: Vec<_> = s2c_rx
        .into_iter()
        .map(|mut r| {
            thread(move || {
                for _ in 0..fanout {
                    recv(&mut r);
                }
                fanout as u64
            })
        })
        .collect();
    for mut w in c2s_tx {
        others.push(thread(move || {
            for _ in 0..m {
                send(&mut w, 0);
            }
        }));
    }
    let delivered: u64 = receivers.into_iter().map(|h| h.join().expect("client_receive")).sum();
    let secs = start.elapsed().as_secs_f64();
    for h in others {
        h.join().expect("chat thread");
    }
    assert_eq!(delivered, size.deliveries());
    delivered as f64 / secs
}

/// hackbench with one thread per sender and receiver and a pipe per receiver:
/// messages/s received.
pub fn hackbench(size: HackSize) -> f64 {
    let HackSize { groups, fds, loops } = size;
    let start = Instant::now();
    let mut writers = Vec::with_capacity(groups * fds);
    let receivers: Vec<_> = (0..groups * fds)
        .map(|_| {
            let (mut r, w) = pipe();
            writers.push(w);
            thread(move || {
                for _ in 0..fds * loops {
                    recv(&mut r);
                }
                (fds * loops) as u64
            })
        })
        .collect();
    let senders: Vec<_> = (0..groups * fds)
        .map(|s| {
            let g = s / fds;
            let mut outs: Vec<PipeWriter> =
                writers[g * fds..(g + 1) * fds].iter().map(|w| w.try_clone().expect("clone pipe")).collect();
            thread(move || {
                for _ in 0..loops {
                    for w in &mut outs {
                        send(w, 0);
                    }
                }
            })
        })
        .collect();
    drop(writers);
    let got: u64 = receivers.into_iter().map(|h| h.join().expect("receiver")).sum();
    let secs = start.elapsed().as_secs_f64();
    for h in senders {
        h.join().expect("sender");
    }
    assert_eq!(got, size.messages());
    got as f64 / secs
}

/// Two unpinned threads bouncing a 100-byte message through two pipes: ns per round trip.
pub fn pingpong(budget: Duration) -> f64 {
    let (mut a_r, mut a_w) = pipe();
    let (mut b_r, mut b_w) = pipe();
    let pong = thread(move || {
        let mut buf = [0u8; MSG];
        while a_r.read_exact(&mut buf).is_ok() {
            if b_w.write_all(&buf).is_err() {
                break;
            }
        }
    });
    let mut round = || {
        send(&mut a_w, 0);
        recv(&mut b_r);
    };
    for _ in 0..200 {
        round();
    }
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < budget {
        for _ in 0..32 {
            round();
        }
        n += 32;
    }
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    drop(a_w);
    pong.join().expect("pong thread");
    ns
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
pub fn perf_messaging(size: HackSize) -> Result<f64, String> {
    if size.fds != 20 {
        return Err("perf messaging always uses 20 fds per group".into());
    }
    let out = Command::new("perf").args(perf_args(size)).output().map_err(|e| format!("perf: {e}"))?;
    if !out.status.success() {
        return Err(format!("perf failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let secs = parse_perf_total(&text).ok_or_else(|| format!("no 'Total time' in perf output: {text}"))?;
    Ok(size.messages() as f64 / secs)
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
        assert!(chat(ChatSize { rooms: 1, users: 4, messages: 5 }) > 0.0);
        assert!(hackbench(HackSize { groups: 2, fds: 3, loops: 4 }) > 0.0);
        assert!(pingpong(Duration::from_millis(5)) > 0.0);
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
