//! Probe: run one workload on the real runtime under one policy, repeatedly.
//! `target/release/examples/vrun pmqs:pool=1,lb=lbp,period=10 'chat:rooms=2;pingpong:rounds=50000' 3`
//! (several workloads separated by `;` run one after the other in one process).

use schedlab_workloads::parse_workload;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy = args.first().map_or("fast", |s| s.as_str());
    let spec = args.get(1).map_or("pingpong:rounds=50000", |s| s.as_str());
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    if std::env::var("PIN_MAIN").is_ok() {
        core_affinity::set_for_current(core_affinity::get_core_ids().unwrap()[0]);
    }
    for _ in 0..reps {
        for spec in spec.split(';') {
            let w = parse_workload(spec).expect("workload");
            let spin = std::env::var("SPIN_US").ok().and_then(|s| s.parse().ok()).unwrap_or(50);
            let rt = schedlab_rt::Builder::new()
                .workers(2)
                .policy(policy)
                .pin(true)
                .spin(std::time::Duration::from_micros(spin))
                .build()
                .expect("runtime");
            let r = schedlab_rtrun::run_on_runtime(&rt, &w, 1.0, 1).expect("run");
            println!("{policy} {spec}: {:.0} per s in {:.3} s {:?}", r.throughput, r.wall_s, rt.stats());
        }
    }
}
