//! O(1)'s expired-array wait against its documented bound
//! (`o1::Tunables::expired_wait_bound`, `docs/policies.md` "What the fix options bound").
//!
//! On a uniprocessor running only SCHED_OTHER tasks, no task waits in the expired array
//! longer than `deadline + 2 + tasks × (max_timeslice + 1)` ticks, where the deadline is
//! `STARVATION_LIMIT × nr_running` in 2002 and `STARVATION_LIMIT` with `scale=off`. The
//! property checks both forms over random workloads, tick rates and constants; the
//! NetBench cases show the bound of the fix is one the 2002 rule really breaks.

use proptest::prelude::*;
use schedlab_core::policies::o1::{self, nice_to_prio, Tunables};
use schedlab_core::PolicySpec;
use schedlab_sim::{simulate, Machine, Report, SimConfig};
use schedlab_workloads::parse_workload;

/// The bound for `tasks` nice-0 tasks (every workload's tasks are nice 0).
fn bound(policy: &str, hz: u32, tasks: u64) -> u64 {
    let cfg = *PolicySpec::parse(policy).unwrap().config::<o1::Kind>().unwrap();
    Tunables::new(&cfg, hz).unwrap().expired_wait_bound(tasks, nice_to_prio(0))
}

fn stat(r: &Report, key: &str) -> u64 {
    r.policy_stats.iter().find(|(k, _)| k == key).map(|(_, v)| *v).unwrap_or_else(|| panic!("no {key}"))
}

/// One run; `check`: the policy's invariants and the engine's conservation laws after
/// every event as well.
fn run(machine: &Machine, policy: &str, workload: &str, seed: u64, check: bool) -> Report {
    let w = parse_workload(workload).unwrap();
    let cfg = SimConfig { seed, check_invariants: check, ..SimConfig::default() };
    simulate(machine, &PolicySpec::parse(policy).unwrap(), &w, &cfg)
        .unwrap_or_else(|e| panic!("{policy} {workload}: {e}"))
}

/// Workloads with no real-time task (NetBench's and WebBench's `nic` tasks are
/// SCHED_FIFO, and ticks that land on them shorten no slice, so the bound does not
/// cover them).
fn workload_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..=3, 1u32..=20, 2u32..=6, 0u64..3000)
            .prop_map(|(r, m, u, t)| format!("chat:rooms={r},messages={m},users={u},think={t}")),
        (1u32..=3, 1u32..=20, 1u32..=5).prop_map(|(g, l, f)| format!("hackbench:groups={g},loops={l},fds={f}")),
        (1u32..=300, 0u64..200_000).prop_map(|(n, c)| format!("pingpong:rounds={n},compute={c}")),
        (1u32..=2, 1u32..=6, 1u32..=12).prop_map(|(b, j, u)| format!("mkbench:builds={b},jobs={j},units={u}")),
    ]
}

/// O(1) with short limits and slices, so that arrays expire and swap within small runs.
fn policy_strategy() -> impl Strategy<Value = String> {
    (0u64..=40, 1u64..=30, any::<bool>(), any::<bool>(), prop::sample::select(vec!["2s", "200ms", "20s"])).prop_map(
        |(limit, slice, scale, guard, sleep)| {
            let onoff = |b: bool| if b { "on" } else { "off" };
            format!(
                "o1:starvation_limit={limit},min_timeslice=1,max_timeslice={slice},max_sleep_avg={sleep},\
                 scale={},expired_prio_guard={}",
                onoff(scale),
                onoff(guard)
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn no_task_waits_in_the_expired_array_beyond_the_bound(
        ws in workload_strategy(),
        policy in policy_strategy(),
        hz in prop::sample::select(vec![100u32, 250, 1000]),
        seed in 0u64..1000,
    ) {
        let machine = Machine::from_toml(&format!("cpus = 1\nhz = {hz}\n")).unwrap();
        let r = run(&machine, &policy, &ws, seed, true);
        let bound = bound(&policy, hz, r.tasks);
        let waited = stat(&r, "max_swap_wait_ticks");
        prop_assert!(waited <= bound, "{policy} {ws} hz={hz}: waited {waited} ticks, bound {bound}");
    }
}

/// The property is not vacuous: at these settings the expired array fills and waits.
#[test]
fn short_limits_make_tasks_wait_in_the_expired_array() {
    let machine = Machine::from_toml("cpus = 1\nhz = 1000\n").unwrap();
    let policy = "o1:starvation_limit=20,min_timeslice=1,max_timeslice=5,max_sleep_avg=200ms,scale=off";
    let r = run(&machine, policy, "mkbench:builds=2,jobs=6,units=12", 1, true);
    let waited = stat(&r, "max_swap_wait_ticks");
    assert!(waited > 5, "waited {waited} ticks");
    assert!(waited <= bound(policy, 1000, r.tasks));
}

/// NetBench at 32 clients on the report's uniprocessor: the 2002 rule lets the first
/// expired smbd wait longer than the fixed rule's bound allows, and `scale=off` keeps it
/// within. The bound is for SCHED_OTHER tasks only: the 32 `nic` tasks are SCHED_FIFO,
/// and the ticks that land on their interrupt work (32 × 4000 operations × 50 µs = 640
/// ticks of 10 ms, in expectation) are added to it, twice over for margin.
///
/// Whether a run starves depends on where the tick falls (the seed draws its phase):
/// under the 2002 rule seeds 1–3 wait thousands of ticks or a few hundred depending on the
/// cost model (e.g. 159 / 3,020 / 3,100 with list operations charging their neighbours'
/// lines). So the claim is
/// per seed for the fix (never beyond the bound) and for some seed of the three for the
/// 2002 rule (it can break it).
///
/// These runs check the bound only: with the invariant checks after every event
/// (`SimConfig::check_invariants`, a sweep of every run queue and task) each of the six
/// 1.6-million-event runs takes about 25 times as long. O(1)'s invariants are checked on
/// NetBench in every era and form by `netbench_eras.rs` and `netbench.rs` (smaller runs),
/// and under `scale=off` by the property above.
#[test]
fn netbench_2002_rule_breaks_the_bound_the_fix_keeps() {
    let machine = Machine::preset("up").unwrap();
    let clients = 32u64;
    let fixed = "o1:scale=off";
    let w = parse_workload(&format!("netbench:clients={clients}")).unwrap();
    let other = w.expected_tasks - clients; // all but the nic tasks
    let rt_ticks = clients * 4000 * 50_000 / 10_000_000 * 2;
    let bound = bound(fixed, machine.hz, other) + rt_ticks;
    let workload = format!("netbench:clients={clients}");
    let mut in_2002 = Vec::new();
    for seed in 1..=3 {
        let with_fix = stat(&run(&machine, fixed, &workload, seed, false), "max_swap_wait_ticks");
        assert!(with_fix <= bound, "seed {seed}: o1:scale=off waited {with_fix} ticks, bound {bound}");
        in_2002.push(stat(&run(&machine, "o1", &workload, seed, false), "max_swap_wait_ticks"));
    }
    eprintln!("netbench:clients={clients}: o1 waited {in_2002:?} ticks (seeds 1-3), bound {bound}");
    assert!(
        in_2002.iter().any(|&w| w > bound),
        "o1 (2002) waited {in_2002:?} ticks (seeds 1-3), never beyond the fix's bound {bound}"
    );
}
