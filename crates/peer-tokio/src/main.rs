//! `schedlab-peer-tokio [--quick] [--only SUBSTR] [--pin all|none]`: schedlab's async
//! benchmark programs (`schedlab-bench`) on Tokio's multi-thread runtime with 2 workers
//! (ping-pong on `current_thread` runtimes, each on its own thread: one for same-worker,
//! two for cross); with `--pin all` (the default) every worker thread and both
//! `current_thread` threads are pinned one per CPU, as schedlab's workers; runs one
//! repetition of every program and prints the rows as a JSON array on stdout and progress
//! on stderr. `schedlab bench` runs it once per round (interleaved with the other runtimes)
//! and aggregates the repetitions.
//!
//! `schedlab-peer-tokio --http-server [--max-secs N]`: instead, the HTTP server of
//! `schedlab_bench::http` (written once on hyper) on a Tokio multi-thread runtime with
//! 1 worker, for `schedlab bench --servers`: it prints `listening ADDR`, counts from a
//! `go` line on stdin, and when stdin closes prints `served requests=N not_found=M
//! cpu_ns=C` (its process CPU time since `go`) and exits; after `--max-secs` (default
//! 120) it exits on its own. Under `--pin all` `schedlab bench` restricts this whole
//! process to the server's CPU before it starts.
//!
//! `schedlab-peer-tokio --tbench-server --bind ADDR [--max-secs N]`: the tbench server
//! of `schedlab_bench::tbench` (written once) on a Tokio multi-thread runtime with 1
//! worker, listening on `ADDR` (a loopback address: tbench's client connects to a fixed
//! port, so `schedlab bench --servers` chooses the address and starts this process in
//! a private network namespace where it can). It prints `listening ADDR`, and when
//! stdin closes `served connections=C requests=R ... cpu_ns=N` (the server's counts and
//! its process CPU time since it listened) and exits.

use schedlab_bench::{
    http, measure, programs, row, runtimes, tbench, wake_latency, Exec, Filter, Pin, Scale, TokioMpsc,
};
use std::future::Future;
use std::io::{BufRead, Read, Write};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Tokio's listener for the server loop of `schedlab_bench::http`.
struct TokioListener(tokio::net::TcpListener);

impl http::Accept for TokioListener {
    type Io = hyper_util::rt::TokioIo<tokio::net::TcpStream>;
    async fn accept(&mut self) -> std::io::Result<Self::Io> {
        let (s, _) = self.0.accept().await?;
        s.set_nodelay(true)?;
        Ok(hyper_util::rt::TokioIo::new(s))
    }
}

/// The one-worker runtime a server flag serves on, and the watchdog that ends the
/// process after `max_secs` (exit 3) should its driver never close stdin.
fn server_runtime(flag: &'static str, max_secs: u64) -> Result<tokio::runtime::Runtime, ExitCode> {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(max_secs));
        eprintln!("schedlab-peer-tokio: {flag} ran {max_secs} s; exiting");
        std::process::exit(3);
    });
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().map_err(|e| {
        eprintln!("schedlab-peer-tokio: tokio runtime: {e}");
        ExitCode::FAILURE
    })
}

/// `--http-server`: serve until stdin closes (protocol in the crate's docs).
fn http_server(max_secs: u64) -> ExitCode {
    let rt = match server_runtime("--http-server", max_secs) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let listener = match rt.block_on(tokio::net::TcpListener::bind(("127.0.0.1", 0))) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("schedlab-peer-tokio: bind: {e}");
            return ExitCode::FAILURE;
        }
    };
    let addr = listener.local_addr().expect("bound listener has an address");
    let stats = Arc::new(http::ServerStats::default());
    rt.spawn(http::serve(
        TokioListener(listener),
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioTimer::new(),
        Arc::new(http::Site::new()),
        stats.clone(),
    ));
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "listening {addr}").and_then(|_| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    let mut stdin = std::io::stdin().lock();
    let mut line = String::new();
    let _ = stdin.read_line(&mut line);
    let cpu0 = measure::process_cpu_ns();
    let _ = stdin.read_to_end(&mut Vec::new());
    let cpu_ns = measure::process_cpu_ns().saturating_sub(cpu0);
    let (pages, not_found) = (stats.pages.load(Ordering::Relaxed), stats.not_found.load(Ordering::Relaxed));
    let _ = writeln!(stdout, "served requests={} not_found={not_found} cpu_ns={cpu_ns}", pages + not_found);
    let _ = stdout.flush();
    rt.shutdown_timeout(Duration::from_millis(200));
    ExitCode::SUCCESS
}

/// Tokio's TCP stream as the tbench server's stream.
struct TokioConn(tokio::net::TcpStream);

impl tbench::Stream for TokioConn {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let mut rb = tokio::io::ReadBuf::new(buf);
        match tokio::io::AsyncRead::poll_read(std::pin::Pin::new(&mut self.0), cx, &mut rb) {
            std::task::Poll::Ready(Ok(())) => std::task::Poll::Ready(Ok(rb.filled().len())),
            std::task::Poll::Ready(Err(e)) => std::task::Poll::Ready(Err(e)),
            std::task::Poll::Pending => std::task::Poll::Pending,
        }
    }
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        tokio::io::AsyncWrite::poll_write(std::pin::Pin::new(&mut self.0), cx, buf)
    }
}

impl tbench::Listen for TokioListener {
    type Conn = TokioConn;
    async fn accept(&mut self) -> std::io::Result<TokioConn> {
        let (s, _) = self.0.accept().await?;
        s.set_nodelay(true)?;
        Ok(TokioConn(s))
    }
}

/// `--tbench-server --bind ADDR`: serve until stdin closes (protocol in the crate's docs).
fn tbench_server(bind: &str, max_secs: u64) -> ExitCode {
    let addr: std::net::SocketAddr = match bind.parse() {
        Ok(a) => a,
        Err(_) => {
            eprintln!("schedlab-peer-tokio: --bind {bind:?}: expected IP:PORT");
            return ExitCode::from(2);
        }
    };
    if !addr.ip().is_loopback() {
        eprintln!("schedlab-peer-tokio: --bind {addr}: only loopback addresses are served");
        return ExitCode::from(2);
    }
    let rt = match server_runtime("--tbench-server", max_secs) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let listener = match rt.block_on(tokio::net::TcpListener::bind(addr)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("schedlab-peer-tokio: bind {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stats = Arc::new(tbench::ServerStats::default());
    rt.spawn(tbench::serve(TokioListener(listener), hyper_util::rt::TokioExecutor::new(), stats.clone()));
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "listening {addr}").and_then(|_| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    let cpu0 = measure::process_cpu_ns();
    let _ = std::io::stdin().lock().read_to_end(&mut Vec::new());
    let cpu_ns = measure::process_cpu_ns().saturating_sub(cpu0);
    let _ = writeln!(stdout, "served {} cpu_ns={cpu_ns}", stats.line());
    let _ = stdout.flush();
    rt.shutdown_timeout(Duration::from_millis(200));
    ExitCode::SUCCESS
}

/// Tokio's multi-thread runtime as an [`Exec`]; placed tasks
/// ([`Exec::spawn_pinned`], the ping-pong rows) run on one of two `current_thread`
/// runtimes, each driven by its own thread (Tokio's way to keep a task on one thread),
/// pinned to its own CPU under [`Pin::All`].
pub struct TokioExec {
    rt: tokio::runtime::Runtime,
    workers: usize,
    placed: Vec<tokio::runtime::Handle>,
    stop: Option<tokio::sync::watch::Sender<bool>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

thread_local! {
    /// Which placed runtime's thread this is.
    static PLACED: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

impl TokioExec {
    /// A multi-thread runtime with `workers` workers, and two placed `current_thread`
    /// ones; under [`Pin::All`] each worker thread is pinned to a CPU as it starts (in
    /// start order, one per CPU like schedlab's workers) and so is each placed thread.
    pub fn new(workers: usize, pin: Pin) -> TokioExec {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        // The timer: the wake-latency driver inside the runtime sleeps on it.
        b.worker_threads(workers).enable_time();
        if pin.pinned() {
            // Tokio starts its `workers` worker threads first; the programs never use
            // the blocking pool, whose threads would be pinned round-robin too.
            let started = std::sync::atomic::AtomicUsize::new(0);
            b.on_thread_start(move || {
                let i = started.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                schedlab_bench::pin_to_cpu(i);
            });
        }
        let rt = b.build().expect("tokio runtime");
        let (stop, rx) = tokio::sync::watch::channel(false);
        let mut placed = Vec::new();
        let mut threads = Vec::new();
        for i in 0..2 {
            let (tx, handle) = std::sync::mpsc::channel();
            let mut rx = rx.clone();
            threads.push(std::thread::spawn(move || {
                if pin.pinned() {
                    schedlab_bench::pin_to_cpu(i);
                }
                PLACED.with(|p| p.set(Some(i)));
                let ct = tokio::runtime::Builder::new_current_thread().build().expect("tokio current_thread");
                tx.send(ct.handle().clone()).expect("constructor waits");
                ct.block_on(async move {
                    while !*rx.borrow() {
                        if rx.changed().await.is_err() {
                            break;
                        }
                    }
                });
            }));
            placed.push(handle.recv().expect("placed runtime starts"));
        }
        TokioExec { rt, workers, placed, stop: Some(stop), threads }
    }
}

impl Drop for TokioExec {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(true);
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

async fn join<T>(h: tokio::task::JoinHandle<T>) -> T {
    match h.await {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

impl Exec for TokioExec {
    type Chan = TokioMpsc;
    fn runtime(&self) -> &str {
        runtimes::TOKIO
    }
    fn policy(&self) -> String {
        format!("multi_thread({})", self.workers)
    }
    fn placement(&self) -> bool {
        true
    }
    fn pinned_policy(&self) -> String {
        "current_thread (placed)".into()
    }
    fn block_on<F>(&self, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.rt.block_on(f)
    }
    fn spawn_on<T, F>(&self, _worker: usize, f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        join(self.rt.spawn(f))
    }
    fn spawn_pinned<T, F>(&self, worker: usize, f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        join(self.placed[worker % self.placed.len()].spawn(f))
    }
    fn current_worker() -> Option<usize> {
        PLACED.with(|p| p.get())
    }
    fn spawn<T, F>(f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        join(tokio::spawn(f))
    }
    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }
    fn sleep_until(deadline: std::time::Instant) -> impl Future<Output = ()> + Send {
        tokio::time::sleep_until(tokio::time::Instant::from_std(deadline))
    }
}

fn main() -> ExitCode {
    let mut quick = false;
    let mut only = None;
    let mut pin = Pin::All;
    let mut server = false;
    let mut tbench_srv = false;
    let mut bind = None;
    let mut max_secs = 120;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--http-server" => server = true,
            "--tbench-server" => tbench_srv = true,
            "--bind" => match args.next() {
                Some(a) => bind = Some(a),
                None => {
                    eprintln!("schedlab-peer-tokio: --bind needs an address (IP:PORT)");
                    return ExitCode::from(2);
                }
            },
            "--max-secs" => match args.next().map(|s| s.parse::<u64>()) {
                Some(Ok(n)) => max_secs = n,
                _ => {
                    eprintln!("schedlab-peer-tokio: --max-secs needs a number of seconds");
                    return ExitCode::from(2);
                }
            },
            "--only" => match args.next() {
                Some(s) => only = Some(s),
                None => {
                    eprintln!("schedlab-peer-tokio: --only needs a value");
                    return ExitCode::from(2);
                }
            },
            "--pin" => match args.next().as_deref().map(Pin::parse) {
                Some(Ok(p)) => pin = p,
                Some(Err(e)) => {
                    eprintln!("schedlab-peer-tokio: {e}");
                    return ExitCode::from(2);
                }
                None => {
                    eprintln!("schedlab-peer-tokio: --pin needs a value (all or none)");
                    return ExitCode::from(2);
                }
            },
            _ => {
                eprintln!(
                    "schedlab-peer-tokio: unknown argument '{a}' (usage: [--quick] [--only SUBSTR] [--pin all|none] \
                     | --http-server [--max-secs N] [--pin all|none] | --tbench-server --bind ADDR [--max-secs N])"
                );
                return ExitCode::from(2);
            }
        }
    }
    if tbench_srv {
        let Some(bind) = bind else {
            eprintln!("schedlab-peer-tokio: --tbench-server needs --bind ADDR (tbench connects to a fixed port)");
            return ExitCode::from(2);
        };
        return tbench_server(&bind, max_secs);
    }
    if server {
        // Affinity is the caller's (the whole process), so `pin` changes nothing here.
        return http_server(max_secs);
    }
    let exec = TokioExec::new(2, pin);
    let filter = Filter(only);
    let mut rows = programs::suite(&exec, &Scale::new(quick), &filter, &mut |what| eprintln!("  {what}"));
    let ws = wake_latency::WakeScale::new(quick);
    rows.extend(wake_latency::rows(&exec, 2, &ws, &filter, &mut |what| eprintln!("  {what}")));
    row::label_pin(&mut rows, pin);
    print!("{}", row::to_json(&rows));
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_bench::{AsyncChannel, ChatSize, HackSize};
    use std::time::Duration;

    #[test]
    fn programs_run_on_tokio() {
        let e = TokioExec::new(2, Pin::All);
        let b = Duration::from_millis(5);
        for cross in [false, true] {
            assert!(programs::pingpong::<_, TokioMpsc>(&e, cross, b) > 0.0);
            assert!(programs::pingpong::<_, AsyncChannel>(&e, cross, b) > 0.0);
        }
        assert!(programs::local_dispatch(&e, b) > 0.0);
        assert!(programs::self_wake_dispatch(&e, b).cpu_per_op > 0.0);
        assert!(programs::spawn_throughput(&e, b) > 0.0);
        let (cs, hs) = (ChatSize { rooms: 2, users: 5, messages: 7 }, HackSize { groups: 2, fds: 4, loops: 5 });
        assert!(programs::chat::<_, TokioMpsc>(&e, cs) > 0.0);
        assert!(programs::chat::<_, AsyncChannel>(&e, cs) > 0.0);
        assert!(programs::hackbench::<_, TokioMpsc>(&e, hs) > 0.0);
        assert!(programs::hackbench::<_, AsyncChannel>(&e, hs) > 0.0);
    }

    /// Tokio's cross-worker ping-pong (two `current_thread` runtimes) crosses on every
    /// round trip, the same-worker one on none.
    #[test]
    fn tokio_pingpong_placement_is_real() {
        // Pinned or not, the placed tasks stay on their own runtime's thread.
        for pin in [Pin::All, Pin::None] {
            let e = TokioExec::new(2, pin);
            let b = Duration::from_millis(30);
            for cross in [false, true] {
                let c = programs::pingpong_placed::<_, TokioMpsc>(&e, cross, b).crossed;
                let c = c.expect("placed threads are known");
                assert!(if cross { c > 0.95 } else { c < 0.05 }, "{pin:?} cross={cross}: crossed on {c}");
            }
        }
    }

    #[test]
    fn suite_rows_follow_the_filter() {
        let e = TokioExec::new(2, Pin::All);
        let mut scale = Scale::quick();
        scale.budget = Duration::from_millis(5);
        scale.reps = 1;
        scale.hackbench = HackSize { groups: 1, fds: 4, loops: 3 };
        let rows = programs::suite(&e, &scale, &Filter(Some("hackbench".into())), &mut |_| {});
        assert_eq!(rows.len(), 2, "hackbench with tokio's mpsc and with async-channel (no /tokio-mpsc twin)");
        assert_eq!((rows[0].bench.as_str(), rows[0].runtime.as_str()), ("hackbench", "tokio"));
        assert_eq!((rows[0].unit.as_str(), rows[0].channel.as_str()), ("messages/s", "tokio::sync::mpsc"));
        assert_eq!((rows[1].channel.as_str(), rows[0].reps), ("async-channel", 1));
        assert!(rows.iter().all(|r| r.cpu_per_op.is_some_and(|c| c > 0.0) && r.error.is_none()), "{rows:?}");
        assert!(programs::suite(&e, &scale, &Filter(Some("nothing".into())), &mut |_| {}).is_empty());
    }
}
