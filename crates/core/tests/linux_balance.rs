//! The wake-up placement `cfs` and `eevdf` share (`policies::linux_balance`), over
//! random machines, CPU occupancies and affinity masks: the previous CPU if it is
//! idle, else the first idle allowed CPU from the previous one on (its node first),
//! else the previous CPU, or the first allowed one when the previous is not.

use proptest::prelude::*;
use schedlab_core::common::SchedCommon;
use schedlab_core::cpu::{CpuId, CpuMask};
use schedlab_core::policies::linux_balance::{home_cpu, select_cpu};
use schedlab_core::{NullPlatform, TaskParams, Topology};

/// The other CPUs in the order placement looks at them, from `prev` on.
fn after(prev: CpuId, n: usize) -> impl Iterator<Item = CpuId> {
    (1..n).map(move |k| (prev + k) % n)
}

proptest! {
    #[test]
    fn placement_prefers_prev_then_an_idle_cpu_of_its_node_then_any_idle_cpu(
        ncpus in 1usize..=8,
        node_size in 1usize..=4,
        busy in proptest::collection::vec((any::<bool>(), 0usize..3), 8),
        mask in any::<u64>(),
        prev in 0usize..8,
    ) {
        let prev = prev % ncpus;
        let topo = Topology { node_of: (0..ncpus).map(|c| c / node_size).collect() };
        let p = NullPlatform::new(0);
        let common = SchedCommon::new(&p, &topo, ncpus, 4, 100);
        let idle: Vec<bool> = (0..ncpus)
            .map(|c| {
                let (running, queued) = busy[c];
                common.cpu(c).set_curr(running.then_some(1));
                common.publish_len(c, queued + running as usize);
                !running && queued == 0
            })
            .collect();
        let allowed = CpuMask(mask & CpuMask::first(ncpus).0);
        let params = TaskParams { cpus_allowed: allowed, ..Default::default() };
        common.tasks.init(0, &params, prev, 0);

        let got = select_cpu(&common, &p, 0, prev);
        let ok = |c: CpuId| allowed.contains(c) && idle[c];
        let node = topo.node_of[prev];
        let want = if ok(prev) {
            prev
        } else if let Some(c) = after(prev, ncpus).find(|&c| ok(c) && topo.node_of[c] == node) {
            c
        } else if let Some(c) = after(prev, ncpus).find(|&c| ok(c)) {
            c
        } else {
            home_cpu(&common, 0, prev)
        };
        prop_assert_eq!(got, want, "idle {:?}, allowed {:#x}, nodes {:?}", idle, allowed.0, topo.node_of);
        if !allowed.is_empty() {
            prop_assert!(allowed.contains(got), "placed on {} outside {:#x}", got, allowed.0);
        }
    }
}
