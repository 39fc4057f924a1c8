//! Probe: the runtime alone, traced, one row several times, without a
//! calibration (pinned, 2 workers, 1000 Hz as the host machine): each run's trace goes
//! to `PREFIX-<n>.json` with its counters and host wait on stdout, so only the runs the
//! host left alone need be read.
//! `target/release/examples/vtrace dss chat:rooms=2,messages=100 3 /tmp/t`

use schedlab_rtrun::run_on_runtime;
use schedlab_validate::hostdelay;
use schedlab_workloads::parse_workload;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy = args.first().map_or("dss", |s| s.as_str());
    let spec = args.get(1).map_or("chat:rooms=2,messages=100", |s| s.as_str());
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let prefix = args.get(3).map_or("/tmp/vtrace", |s| s.as_str());
    let traced = std::env::var("UNTRACED").is_err();
    let w = parse_workload(spec).expect("workload");
    for n in 0..reps {
        let mut b = schedlab_rt::Builder::new().workers(2).pin(true).hz(1000).policy(policy);
        if traced {
            b = b.trace(schedlab_core::trace::DEFAULT_CAP / 2);
        }
        let rt = b.build().expect("runtime");
        let before = hostdelay::worker_run_delays();
        let r = run_on_runtime(&rt, &w, 1.0, 1).expect("run");
        let wait = match (before, hostdelay::worker_run_delays()) {
            (Some(b), Some(a)) if !a.is_empty() => hostdelay::delay_pct(&b, &a, r.wall_s, 2),
            _ => f64::NAN,
        };
        let (stats, trace) = rt.shutdown_traced();
        println!("{n} {policy} {spec}: {:.0} per s, host wait {wait:.1} %, {stats:?}", r.throughput);
        if let Some(t) = trace {
            let f = std::fs::File::create(format!("{prefix}-{n}.json")).expect("trace file");
            schedlab_core::trace::chrome::write(&t, std::io::BufWriter::new(f)).expect("write");
        }
    }
}
