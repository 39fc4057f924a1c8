//! Wake-to-run latency under load, written once over [`Exec`].
//!
//! `hogs_per_worker × workers` CPU hogs (10× oversubscription) each compute in chunks
//! of [`WakeScale::chunk`] (a spin on the clock) and call the runtime's `yield_now`
//! between chunks, since the runtimes are cooperative. A probe task waits on the
//! runtime's own channel ([`Exec::Chan`]); a driver thread outside the runtime sends it
//! the current `Instant` every [`WakeScale::period`], and the probe records, in an HDR
//! histogram, the time from that send (the wake) to its first poll after it. The run
//! lasts [`WakeScale::duration`]; the probe must have seen every message sent (checked).
//! Rows: p50, p99, p99.9 and max in ns ([`names::WAKE_LATENCY`]), the policy column
//! states workers, hogs and probes.
//!
//! The Go peer (`peers/go`) runs the same program with goroutines and
//! `runtime.Gosched`; its driver is a goroutine, since Go has no threads outside its
//! scheduler.

use crate::{names, units, ChanRx, ChanTx, Channels, Exec, Filter, Row};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// (bench name, ns) for p50, p99, p99.9 and max.
    pub fn quantiles(&self) -> [(&'static str, f64); 4] {
        let q = |x| self.hist.value_at_quantile(x) as f64;
        [
            (names::WAKE_LATENCY_P50, q(0.5)),
            (names::WAKE_LATENCY_P99, q(0.99)),
            (names::WAKE_LATENCY_P999, q(0.999)),
            (names::WAKE_LATENCY_MAX, self.hist.max() as f64),
        ]
    }
}

/// Spin on the clock for `d`.
fn compute(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Run the program on `e` (which has `workers` workers): see the module docs. Panics
/// if a probe was lost.
pub fn wake_latency<E: Exec>(e: &E, workers: usize, s: &WakeScale) -> WakeLatency {
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
    std::thread::sleep(s.warmup);
    let start = Instant::now();
    let mut sent = 0u64;
    loop {
        let next = start + s.period * (sent as u32 + 1);
        if next > start + s.duration {
            break;
        }
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        tx.send(Instant::now());
        sent += 1;
    }
    drop(tx);
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
    WakeLatency { workers, hogs, sent, ran, chunks, hist }
}

/// The four [`names::WAKE_LATENCY`] rows of `e` (with `workers` workers) if `filter`
/// wants any of them.
pub fn rows<E: Exec>(
    e: &E,
    workers: usize,
    s: &WakeScale,
    filter: &Filter,
    progress: &mut dyn FnMut(&str),
) -> Vec<Row> {
    let rt = e.runtime().to_string();
    if !names::WAKE_LATENCY.iter().any(|b| filter.wants(b, &rt)) {
        return Vec::new();
    }
    let policy = e.policy();
    let hogs = s.hogs_per_worker * workers;
    progress(&format!(
        "wake-latency on {rt} {policy} ({workers} workers, {hogs} hogs of {:?} chunks, a probe every {:?} for {:?})",
        s.chunk, s.period, s.duration
    ));
    let r = wake_latency(e, workers, s);
    let config = format!("{policy}, {workers} workers, {hogs} hogs, {} probes", r.ran);
    r.quantiles()
        .into_iter()
        .filter(|(b, _)| filter.wants(b, &rt))
        .map(|(b, v)| Row::new(b, &rt, &config, v, units::NS_WAKE))
        .collect()
}
