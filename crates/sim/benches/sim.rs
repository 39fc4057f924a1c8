//! Simulator speed: whole simulations of Chat, hackbench and ping-pong.
//! `cargo bench -p schedlab-sim` (events/s for a run are printed by `schedlab sim` too).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedlab_core::PolicySpec;
use schedlab_sim::{simulate, Machine, SimConfig};
use schedlab_workloads::parse_workload;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulate");
    g.sample_size(10);
    for (machine, workload) in [
        ("smp-8", "chat:rooms=10,messages=100"),
        ("smp-8", "hackbench:groups=4,loops=100"),
        ("smp-8", "pingpong:rounds=100000"),
    ] {
        let m = Machine::preset(machine).unwrap();
        let w = parse_workload(workload).unwrap();
        for policy in ["dss", "mqs"] {
            let p = PolicySpec::parse(policy).unwrap();
            let events = simulate(&m, &p, &w, &SimConfig::default()).unwrap().sim_events;
            g.throughput(Throughput::Elements(events));
            g.bench_function(format!("{policy}/{machine}/{workload}"), |b| {
                b.iter(|| simulate(&m, &p, &w, &SimConfig::default()).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
