//! Probe for the host's `fork_cycles` (calibrate.rs, `policy_spawn_ns`): what a
//! spawn from a task costs on a one-worker policy runtime with ids no task had before
//! (every spawn of the workloads) against ids recycled from exited tasks (their task
//! blocks already touched), and the minor page faults per spawn (`/proc/self/stat`).
//! `target/release/examples/spawnpath [POLICY] [ROUNDS]` (default dss, 20).

use std::time::Instant;

/// Minor page faults of this process so far (`/proc/self/stat`, field 10).
fn minflt() -> i64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    rest.split_whitespace().nth(7).and_then(|f| f.parse().ok()).unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy = args.first().cloned().unwrap_or_else(|| "dss".into());
    let rounds: usize = args.get(1).map_or(20, |s| s.parse().expect("rounds"));
    const K: usize = 40;
    let (mut fresh, mut reused, mut ffl, mut rfl) = (vec![], vec![], vec![], vec![]);
    for _ in 0..rounds {
        let rt = schedlab_rt::Builder::new().workers(1).policy(&policy).pin(true).build().expect("runtime");
        let batch = || async {
            let f = minflt();
            let t = Instant::now();
            let hs: Vec<_> = (0..K).map(|_| schedlab_rt::spawn(async {})).collect();
            let took = t.elapsed().as_nanos() as f64 / K as f64;
            let faults = (minflt() - f) as f64 / K as f64;
            for h in hs {
                h.await.expect("empty task");
            }
            (took, faults)
        };
        let (a, fa) = rt.block_on(rt.spawn(batch())).expect("first batch");
        // The 40 ids just freed are handed out again (the free list is a stack).
        let (b, fb) = rt.block_on(rt.spawn(batch())).expect("second batch");
        fresh.push(a);
        reused.push(b);
        ffl.push(fa);
        rfl.push(fb);
        rt.shutdown();
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "{policy}: spawn from a task, {K} per batch, median of {rounds} runtimes: fresh ids {:.0} ns ({:.2} minor faults/spawn), recycled ids {:.0} ns ({:.2})",
        med(fresh),
        med(ffl),
        med(reused),
        med(rfl)
    );
}
