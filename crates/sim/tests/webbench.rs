//! WebBench on the simulator: the colouring paper's mechanism emerges from the L2
//! model (set conflicts of 8 KB-aligned task structures), and colouring removes it.

use schedlab_core::policies::PolicySpec;
use schedlab_sim::{simulate, Machine, SimConfig};
use schedlab_workloads::parse_workload;

fn run(machine: &str, policy: &str, workload: &str) -> schedlab_sim::Report {
    let m = Machine::preset(machine).unwrap();
    let p = PolicySpec::parse(policy).unwrap();
    let w = parse_workload(workload).unwrap();
    simulate(&m, &p, &w, &SimConfig::default()).unwrap()
}

#[test]
fn colours_past_equation_3_threshold_remove_run_queue_walk_misses() {
    // 256 httpds on a 512 KB L2: equation (3) asks for 256 / (512 / 8) = 4 colours.
    let w = "webbench:servers=256,requests=6";
    let vanilla = run("ppro-4:l2=512k", "dss", w);
    let c2 = run("ppro-4:l2=512k", "dss:colours=2", w);
    let c4 = run("ppro-4:l2=512k", "dss:colours=4", w);
    assert!(vanilla.rq_traversal_miss_ratio > 0.8, "vanilla walk misses: {}", vanilla.rq_traversal_miss_ratio);
    assert!(
        c2.rq_traversal_miss_ratio < vanilla.rq_traversal_miss_ratio,
        "{} !< {}",
        c2.rq_traversal_miss_ratio,
        vanilla.rq_traversal_miss_ratio
    );
    assert!(c4.rq_traversal_miss_ratio < 0.2, "4 colours: {}", c4.rq_traversal_miss_ratio);
    assert!(c4.bus_transactions.task * 3 < vanilla.bus_transactions.task);
    // Shorter walks under the run-queue lock.
    let hold = |r: &schedlab_sim::Report| r.locks.iter().find(|l| l.name == "runqueue_lock").unwrap().hold_mean_ns;
    assert!(hold(&c4) < hold(&vanilla), "{} !< {}", hold(&c4), hold(&vanilla));
    // Each httpd's working set goes through the cache too.
    assert!(vanilla.bus_transactions.workload > 0);
}

#[test]
fn a_measured_span_keeps_every_httpd_runnable_and_ends_the_run() {
    // One CPU, 64 httpds: with a measured span the clients never run out, so the run
    // queue holds every httpd (and nothing drains); the run ends at the stop.
    let span = run("xeon-8:cpus=1", "dss", "webbench:servers=64,span=500ms,warmup=200ms");
    let start = span.clock_start_ns;
    assert!((200_000_000..260_000_000).contains(&start), "clock start {start}");
    assert!(span.virtual_ns - start >= 500_000_000 && span.virtual_ns - start < 510_000_000, "{}", span.virtual_ns);
    assert!(span.runqueue_len.mean > 60.0, "run queue mean {}", span.runqueue_len.mean);
    // A fixed request count drains: its queue is shorter on average.
    let fixed = run("xeon-8:cpus=1", "dss", "webbench:servers=64,requests=20");
    assert!(
        fixed.runqueue_len.mean < span.runqueue_len.mean,
        "{} vs {}",
        fixed.runqueue_len.mean,
        span.runqueue_len.mean
    );
    assert_eq!(fixed.messages_received, fixed.messages_sent);
    // The throughput counts the span's requests only: those of the warm-up are in
    // `completed` (the whole run) but not in it. A run that stops where this one's
    // warm-up ends completed about as many.
    let in_span = (span.throughput * (span.virtual_ns - start) as f64 / 1e9).round() as u64;
    let warmup = span.completed - in_span;
    let first = run("xeon-8:cpus=1", "dss", "webbench:servers=64,span=200ms,warmup=0");
    eprintln!("in span {in_span}, warm-up {warmup}, a 200 ms run {}", first.completed);
    assert!(in_span > 0 && warmup > 0);
    assert!(warmup.abs_diff(first.completed) <= 2, "warm-up {warmup} vs {}", first.completed);
}

#[test]
fn webbench_reports_are_deterministic_and_mqs_walks_short_queues() {
    let w = "webbench:servers=64,clients=16,requests=4";
    // Wall-clock figures aside, byte-identical.
    let json = || {
        let mut r = run("smp-8:l2=512k", "dss:colours=32", w);
        (r.wall_s, r.events_per_sec) = (0.0, 0.0);
        serde_json::to_string(&r).unwrap()
    };
    let (a, b) = (json(), json());
    assert_eq!(a, b);
    assert!(a.contains("\"rq_traversal_miss_ratio\"") && a.contains("\"bus_transactions\""));
    let mqs = run("smp-8:l2=512k", "mqs", w);
    assert_eq!(mqs.messages_received, mqs.messages_sent);
}
