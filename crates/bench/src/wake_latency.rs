//! Wake-to-run latency under load, written once over [`Exec`].
//!
//! `hogs_per_worker × workers` CPU hogs (10× oversubscription) each compute in chunks
//! of [`WakeScale::chunk`] (a spin on the clock) and call the runtime's `yield_now`
//! between chunks, since the runtimes are cooperative. A probe task waits on the
//! runtime's own channel ([`Exec::Chan`]); a driver sends it the current `Instant`
//! every [`WakeScale::period`], and the probe records, in an HDR histogram, the time
//! from that send (the wake) to its first poll after it. The run lasts
//! [`WakeScale::duration`]; the probe must have seen every message sent (checked).
//! Two drivers ([`Driver`]), two sets of rows, p50, p99, p99.9 and max in ns; the
//! policy column states workers, hogs and probes:
//!
//! * [`Driver::Outside`] ([`names::WAKE_LATENCY`]): a thread outside the runtime
//!   sends, as a reactor or a foreign thread would. The probe's wake comes from no
//!   worker; with every worker inside an uninterruptible chunk, no cooperative runtime
//!   can run it before one of them reaches its next scheduling point, so the floor is
//!   about one chunk at the tail.
//! * [`Driver::Inside`] ([`names::WAKE_LATENCY_INSIDE`]): a task of the runtime
//!   sleeps on the runtime's timer ([`Exec::sleep_until`]) and sends when it wakes:
//!   the probe is woken by a task on a worker, and can run as soon as the driver
//!   blocks. The driver arms its next timer before it sends, so that nothing but its
//!   return to the scheduler lies between the send and the probe's turn (arming
//!   schedlab's timer writes to the reactor's eventfd); after the last send it sleeps
//!   one more period before it ends, since its end wakes the thread in `block_on`
//!   (a futex wake) from the probe's worker. This is the program of the Go
//!   peer (`peers/go`), whose driver is a goroutine (Go has no thread outside its
//!   scheduler): it emits these rows only.

use crate::{names, units, ChanRx, ChanTx, Channels, Exec, Filter, Row};
use hdrhistogram::Histogram;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

/// Who sends to the probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    /// A thread outside the runtime (the [`names::WAKE_LATENCY`] rows).
    Outside,
    /// A task of the runtime sleeping on its timer (the [`names::WAKE_LATENCY_INSIDE`]
    /// rows).
    Inside,
}

impl Driver {
    /// Both drivers, in row order.
    pub const ALL: [Driver; 2] = [Driver::Outside, Driver::Inside];
    /// The four benches (p50, p99, p99.9, max) of this driver's rows.
    pub fn benches(self) -> &'static [&'static str] {
        match self {
            Driver::Outside => names::WAKE_LATENCY,
            Driver::Inside => names::WAKE_LATENCY_INSIDE,
        }
    }
    /// For progress lines.
    pub fn describe(self) -> &'static str {
        match self {
            Driver::Outside => "driver: a thread outside the runtime",
            Driver::Inside => "driver: a task on the runtime's timer",
        }
    }
}

/// Load, probe rate and length of one run.
#[derive(Clone, Debug)]
pub struct WakeScale {
    /// Measured run (probes are sent for this long).
    pub duration: Duration,
    /// Time between two probes.
    pub period: Duration,
    /// A hog's compute chunk between two yields.
    pub chunk: Duration,
    /// Hogs per worker.
    pub hogs_per_worker: usize,
    /// Load before the first probe.
    pub warmup: Duration,
}

impl WakeScale {
    /// 0.3 s of probes every 5 ms, 100 µs chunks, 10 hogs per worker.
    pub fn quick() -> WakeScale {
        WakeScale { duration: Duration::from_millis(300), ..WakeScale::full() }
    }
    /// 1 s of probes every 5 ms, 100 µs chunks, 10 hogs per worker.
    pub fn full() -> WakeScale {
        WakeScale {
            duration: Duration::from_secs(1),
            period: Duration::from_millis(5),
            chunk: Duration::from_micros(100),
            hogs_per_worker: 10,
            warmup: Duration::from_millis(20),
        }
    }
    /// [`WakeScale::quick`] if `quick`, else [`WakeScale::full`].
    pub fn new(quick: bool) -> WakeScale {
        if quick {
            WakeScale::quick()
        } else {
            WakeScale::full()
        }
    }
}

/// The outcome of one run.
#[derive(Clone, Debug)]
pub struct WakeLatency {
    /// Who sent to the probe.
    pub driver: Driver,
    /// Workers of the runtime.
    pub workers: usize,
    /// Hog tasks.
    pub hogs: usize,
    /// Probes sent by the driver.
    pub sent: u64,
    /// Probes the probe task ran for (equal to `sent`).
    pub ran: u64,
    /// Compute chunks the hogs completed (load really ran).
    pub chunks: u64,
    /// Wake-to-run latencies, ns.
    pub hist: Histogram<u64>,
}

impl WakeLatency {
    /// (bench name, ns) for p50, p99, p99.9 and max (the driver's benches).
    pub fn quantiles(&self) -> [(&'static str, f64); 4] {
        let q = |x| self.hist.value_at_quantile(x) as f64;
        let b = self.driver.benches();
        [(b[0], q(0.5)), (b[1], q(0.99)), (b[2], q(0.999)), (b[3], self.hist.max() as f64)]
    }
}

impl WakeLatency {
    /// The rows of this run that `filter` wants, on `runtime` with `config` as policy.
    pub fn rows(&self, runtime: &str, config: &str, filter: &Filter) -> Vec<Row> {
        self.quantiles()
            .into_iter()
            .filter(|(b, _)| filter.wants(b, runtime))
            .map(|(b, v)| Row::new(b, runtime, config, v, units::NS_WAKE))
            .collect()
    }
}

/// Spin on the clock for `d`.
pub(crate) fn compute(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// The outside driver: from `start` on, every [`WakeScale::period`] until
/// [`WakeScale::duration`] has passed, sleep on the kernel's timer until the next
/// period and `send`; returns how many sends.
pub(crate) fn drive_from_outside(start: Instant, s: &WakeScale, mut send: impl FnMut()) -> u64 {
    let end = start + s.duration;
    let mut sent = 0u64;
    loop {
        let next = start + s.period * (sent as u32 + 1);
        if next > end {
            return sent;
        }
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        send();
        sent += 1;
    }
}

/// Run the program on `e` (which has `workers` workers) with `driver`: see the module
/// docs. Panics if a probe was lost.
pub fn wake_latency<E: Exec>(e: &E, workers: usize, s: &WakeScale, driver: Driver) -> WakeLatency {
    let hogs = s.hogs_per_worker * workers;
    let (tx, mut rx) = <E::Chan as Channels>::unbounded::<Instant>();
    let probe = e.spawn_on(0, async move {
        let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds");
        let mut ran = 0u64;
        while let Some(sent) = rx.recv().await {
            hist.saturating_record(sent.elapsed().as_nanos().max(1) as u64);
            ran += 1;
        }
        (hist, ran)
    });
    let stop = Arc::new(AtomicBool::new(false));
    let chunk = s.chunk;
    let hog_tasks: Vec<_> = (0..hogs)
        .map(|i| {
            let stop = stop.clone();
            e.spawn_on(i % workers.max(1), async move {
                let mut n = 0u64;
                while !stop.load(Relaxed) {
                    compute(chunk);
                    n += 1;
                    E::yield_now().await;
                }
                n
            })
        })
        .collect();
    let start = Instant::now() + s.warmup;
    let (period, end) = (s.period, start + s.duration);
    let sent = match driver {
        Driver::Outside => {
            let sent = drive_from_outside(start, s, || tx.send(Instant::now()));
            drop(tx);
            sent
        }
        Driver::Inside => e.block_on(e.spawn_on(workers.saturating_sub(1), async move {
            let mut sent = 0u64;
            for k in 1u32.. {
                let deadline = start + period * k;
                let last = deadline > end;
                let mut sleep = std::pin::pin!(E::sleep_until(deadline));
                // Arm the next timer first (one poll), then send, then block on it
                // (after the last send too: see the module docs).
                let fired = std::future::poll_fn(|cx| Poll::Ready(sleep.as_mut().poll(cx).is_ready())).await;
                if k > 1 {
                    tx.send(Instant::now());
                    sent += 1;
                }
                if !fired {
                    sleep.await;
                }
                if last {
                    break;
                }
            }
            sent
        })),
    };
    // The last probes still run under load; then the hogs stop.
    let (hist, ran) = e.block_on(probe);
    stop.store(true, Relaxed);
    let chunks = e.block_on(async move {
        let mut n = 0;
        for h in hog_tasks {
            n += h.await;
        }
        n
    });
    assert!(sent > 0, "no probe sent in {:?}", s.duration);
    assert_eq!(ran, sent, "every probe ran");
    assert_eq!(hist.len(), sent, "every probe recorded");
    WakeLatency { driver, workers, hogs, sent, ran, chunks, hist }
}

/// The [`names::WAKE_LATENCY`] and [`names::WAKE_LATENCY_INSIDE`] rows of `e` (with
/// `workers` workers) that `filter` wants, one run per driver.
pub fn rows<E: Exec>(
    e: &E,
    workers: usize,
    s: &WakeScale,
    filter: &Filter,
    progress: &mut dyn FnMut(&str),
) -> Vec<Row> {
    let rt = e.runtime().to_string();
    let mut rows = Vec::new();
    for driver in Driver::ALL {
        if !driver.benches().iter().any(|b| filter.wants(b, &rt)) {
            continue;
        }
        let policy = e.policy();
        let hogs = s.hogs_per_worker * workers;
        progress(&format!(
            "wake-latency on {rt} {policy} ({workers} workers, {hogs} hogs of {:?} chunks, a probe every {:?} for {:?}; {})",
            s.chunk,
            s.period,
            s.duration,
            driver.describe()
        ));
        let r = wake_latency(e, workers, s, driver);
        let config = format!("{policy}, {workers} workers, {hogs} hogs, {} probes", r.ran);
        rows.extend(r.rows(&rt, &config, filter));
    }
    rows
}
