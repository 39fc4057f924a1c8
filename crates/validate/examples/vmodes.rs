//! Probe: one workload under one policy on the real runtime (validate's
//! builder: calibrated workers, pinned, the host machine's HZ), alternately untraced
//! and traced, printing the runtime's counters and how long the workers waited for
//! their CPUs. `target/release/examples/vmodes mqs 'chat:rooms=2,messages=100' 6`

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy = args.first().map_or("mqs", |s| s.as_str());
    let spec = args.get(1).map_or("chat:rooms=2,messages=100", |s| s.as_str());
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(4);
    let cal = schedlab_validate::calibrate(2, true).expect("calibrate");
    let w = schedlab_workloads::parse_workload(spec).expect("workload");
    let ps = schedlab_core::PolicySpec::parse(policy).expect("policy");
    for i in 0..reps * 2 {
        let traced = i % 2 == 1;
        let mut b = schedlab_validate::runtime_builder(&cal).policy_source(ps.clone());
        if traced {
            b = b.trace(schedlab_core::trace::DEFAULT_CAP / cal.workers);
        }
        let rt = b.build().expect("runtime");
        let before = schedlab_validate::hostdelay::worker_run_delays().unwrap_or_default();
        let r = schedlab_rtrun::run_on_runtime(&rt, &w, 1.0, 1).expect("run");
        let after = schedlab_validate::hostdelay::worker_run_delays().unwrap_or_default();
        let wait = schedlab_validate::hostdelay::delay_pct(&before, &after, r.wall_s, cal.workers);
        let (s, _) = rt.shutdown_traced();
        println!(
            "{} {:>9.0}/s wall {:>6.1} ms  switches {:>7} wakeups {:>7} ipis {:>6} parks {:>6} polls {:>7} ticks {:>4} skipped {:>4}  host wait {:>5.1} %",
            if traced { "traced  " } else { "untraced" },
            r.throughput,
            r.wall_s * 1e3,
            s.switches,
            s.wakeups,
            s.ipis,
            s.parks,
            s.polls,
            s.ticks,
            s.skipped_ticks,
            wait
        );
    }
}
