//! The distribution of the runtime's tick phases as `validate`'s real runs start them
//! (`schedlab_validate::tickphase`): per fresh runtime, each worker's first tick after
//! the root task's first run (the root's worker first) and each worker's start against
//! that run. `target/release/examples/tickphase [ROUNDS] [POLICY] [WORKERS]`
//! (default 200, dss, 2); one line per round, then quantiles.

fn quantiles(mut v: Vec<f64>) -> String {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    format!("min {:.1} p10 {:.1} p50 {:.1} p90 {:.1} max {:.1}", q(0.0), q(0.1), q(0.5), q(0.9), q(1.0))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().map_or(200, |s| s.parse().expect("rounds"));
    let policy = args.get(1).cloned().unwrap_or_else(|| "dss".into());
    let workers: usize = args.get(2).map_or(2, |s| s.parse().expect("workers"));
    let rs = schedlab_validate::tickphase::measure(workers, 1000, &policy, rounds).expect("measure");
    for r in &rs {
        println!(
            "root_worker {} clock_us {:.1} first_tick_us {:?} start_us {:?}",
            r.root_worker,
            r.clock_ns as f64 / 1e3,
            r.first_tick_ns.iter().map(|&t| t as f64 / 1e3).collect::<Vec<_>>(),
            r.start_ns.iter().map(|&s| s as f64 / 1e3).collect::<Vec<_>>()
        );
    }
    let us =
        |f: &dyn Fn(&schedlab_validate::tickphase::Round) -> Option<f64>| quantiles(rs.iter().filter_map(f).collect());
    println!("root on worker 0: {} of {}", rs.iter().filter(|r| r.root_worker == 0).count(), rs.len());
    println!("root's first run on the runtime's clock (us): {}", us(&|r| Some(r.clock_ns as f64 / 1e3)));
    for c in 0..workers {
        println!("cpu {c} first tick (us after root's first run): {}", us(&|r| Some(r.first_tick_ns[c] as f64 / 1e3)));
        println!("worker {c} start (us, against root's first run): {}", us(&|r| Some(r.start_ns[c] as f64 / 1e3)));
    }
    if workers > 1 {
        println!(
            "cpu 1 - cpu 0 first tick (us): {}",
            us(&|r| Some((r.first_tick_ns[1] as f64 - r.first_tick_ns[0] as f64) / 1e3))
        );
        println!("worker 1 - worker 0 start (us): {}", us(&|r| Some((r.start_ns[1] - r.start_ns[0]) as f64 / 1e3)));
    }
}
