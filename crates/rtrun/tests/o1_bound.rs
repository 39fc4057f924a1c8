//! O(1)'s expired-array wait against its documented bound on the real runtime (the
//! simulator's side, and the derivation, are in `crates/sim/tests/o1_bound.rs` and
//! `o1::Tunables::expired_wait_bound`): one worker, random SCHED_OTHER workloads, both
//! deadline rules and the `best_expired_prio` guard on and off.
//!
//! The runtime charges ticks at poll boundaries, so a poll that the host stretches past
//! the end of its task's slice charges the ticks after it to a task that has already
//! expired, and they shorten no other slice. The check therefore allows the bound plus
//! half a second of such ticks for a noisy shared VM.

use proptest::prelude::*;
use schedlab_core::policies::o1::{self, nice_to_prio, Tunables};
use schedlab_core::PolicySpec;
use schedlab_rtrun::run_on_runtime;
use schedlab_workloads::parse_workload;

const HZ: u32 = 1000;
/// Ticks a stretched poll may waste (half a second at `HZ`).
const HOST_SLACK: u64 = HZ as u64 / 2;

fn workload_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..=2, 1u32..=10, 2u32..=5).prop_map(|(r, m, u)| format!("chat:rooms={r},messages={m},users={u}")),
        (1u32..=2, 1u32..=10, 1u32..=4).prop_map(|(g, l, f)| format!("hackbench:groups={g},loops={l},fds={f}")),
        (1u32..=200, 0u64..200_000).prop_map(|(n, c)| format!("pingpong:rounds={n},compute={c}")),
        (1u32..=2, 1u32..=4, 1u32..=8).prop_map(|(b, j, u)| format!("mkbench:builds={b},jobs={j},units={u}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn no_task_waits_in_the_expired_array_beyond_the_bound_on_the_runtime(
        ws in workload_strategy(),
        limit in 0u64..=20,
        slice in 1u64..=10,
        scale in any::<bool>(),
        guard in any::<bool>(),
    ) {
        let onoff = |b: bool| if b { "on" } else { "off" };
        let policy = format!(
            "o1:starvation_limit={limit},min_timeslice=1,max_timeslice={slice},scale={},expired_prio_guard={}",
            onoff(scale),
            onoff(guard)
        );
        let w = parse_workload(&ws).unwrap();
        let rt = schedlab_rt::Builder::new().workers(1).hz(HZ).policy(&policy).build().unwrap();
        let r = run_on_runtime(&rt, &w, 1.0, 1);
        let stats = rt.policy_stats();
        rt.shutdown();
        let r = r.unwrap_or_else(|e| panic!("{policy} {ws}: {e}"));
        prop_assert_eq!((r.sent, r.received, r.tasks), (w.expected_messages, w.expected_messages, w.expected_tasks));
        let waited = stats.iter().find(|(k, _)| *k == "max_swap_wait_ticks").map(|(_, v)| *v).unwrap();
        let cfg = *PolicySpec::parse(&policy).unwrap().config::<o1::Kind>().unwrap();
        let bound = Tunables::new(&cfg, HZ).unwrap().expired_wait_bound(w.expected_tasks, nice_to_prio(0));
        prop_assert!(waited <= bound + HOST_SLACK, "{policy} {ws}: waited {waited} ticks, bound {bound} + {HOST_SLACK}");
    }
}
