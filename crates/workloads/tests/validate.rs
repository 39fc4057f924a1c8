//! `Workload::validate` accepts every built-in workload and rejects malformed ones.

use schedlab_core::{CpuMask, SchedClass, TaskParams};
use schedlab_workloads::{parse_workload, Metric, Op, Program, Workload, MAX_LOOP_DEPTH};

/// A small valid workload: root spawns a sender and a receiver over channel 0.
fn base() -> Workload {
    let p = |role: &str, ops: Vec<Op>| Program { role: role.into(), ops };
    Workload {
        spec: "test".into(),
        programs: vec![
            p(
                "root",
                vec![
                    Op::Spawn { program: 2, params: TaskParams::default() },
                    Op::Spawn { program: 1, params: TaskParams::default() },
                ],
            ),
            p(
                "sender",
                vec![
                    Op::Loop { count: 3, body: 4 },
                    Op::Compute { cycles: 10 },
                    Op::Loop { count: 2, body: 1 },
                    Op::Send { chan: 0, bytes: 8 },
                    Op::ComputeUniform { min: 1, max: 2 },
                    Op::Exit,
                ],
            ),
            p("receiver", vec![Op::Loop { count: 6, body: 1 }, Op::Recv { chan: 0 }]),
        ],
        channels: 1,
        root: 0,
        root_params: TaskParams::default(),
        metric: Metric::counting("messages/s", vec![true]),
        expected_messages: 6,
        expected_tasks: 3,
        bound: Vec::new(),
        working_set: Vec::new(),
        buffers: Vec::new(),
    }
}

fn rejects(w: &Workload, needle: &str) {
    let e = w.validate().expect_err(needle);
    assert!(e.0.contains(needle), "expected '{needle}' in: {e}");
}

#[test]
fn builtins_and_base_are_valid() {
    base().validate().unwrap();
    for s in [
        "chat",
        "chat:rooms=1,messages=1,users=2,think=3,work=0",
        "hackbench",
        "hackbench:groups=1,loops=1,fds=1,threads=1",
        "pingpong",
        "pingpong:rounds=1,compute=4",
    ] {
        parse_workload(s).unwrap().validate().unwrap();
    }
}

#[test]
fn rejects_bad_channels() {
    let mut w = base();
    w.programs[2].ops[1] = Op::Recv { chan: 1 };
    rejects(&w, "program 2 ('receiver') op 1: channel 1 out of range");
    let mut w = base();
    w.programs[1].ops[3] = Op::Send { chan: 5, bytes: 1 };
    rejects(&w, "op 3: channel 5 out of range");
    let mut w = base();
    w.metric.counted.push(false);
    rejects(&w, "metric.counted has 2 entries for 1 channels");
    let mut w = base();
    w.metric.unit.clear();
    rejects(&w, "unit");
}

#[test]
fn rejects_bad_program_ids() {
    let mut w = base();
    w.root = 3;
    rejects(&w, "root program 3 out of range");
    let mut w = base();
    w.programs[0].ops[0] = Op::Spawn { program: 9, params: TaskParams::default() };
    rejects(&w, "Spawn of program 9 out of range");
    let mut w = base();
    w.programs.clear();
    rejects(&w, "no programs");
    let mut w = base();
    w.expected_tasks = 0;
    rejects(&w, "expected_tasks");
}

#[test]
fn rejects_spawn_cycles() {
    let mut w = base();
    w.programs[2].ops.push(Op::Spawn { program: 0, params: TaskParams::default() });
    rejects(&w, "spawn cycle");
    let mut w = base();
    w.programs[1].ops.insert(0, Op::Spawn { program: 1, params: TaskParams::default() });
    rejects(&w, "spawn cycle: program 1 ('sender')");
}

#[test]
fn rejects_malformed_loops() {
    let mut w = base();
    w.programs[2].ops[0] = Op::Loop { count: 0, body: 1 };
    rejects(&w, "Loop count 0");
    let mut w = base();
    w.programs[2].ops[0] = Op::Loop { count: 2, body: 0 };
    rejects(&w, "empty body");
    let mut w = base();
    w.programs[2].ops[0] = Op::Loop { count: 2, body: 2 };
    rejects(&w, "past the end of its program");
    // Inner loop (op 2) extends past the outer loop's body (ops 1..5).
    let mut w = base();
    w.programs[1].ops[2] = Op::Loop { count: 2, body: 3 };
    rejects(&w, "program 1 ('sender') op 2: Loop body of 3 ops ends at 6, past the end of its enclosing loop (5)");
    // Ending exactly with the enclosing loop is fine.
    let mut w = base();
    w.programs[1].ops[2] = Op::Loop { count: 2, body: 2 };
    w.validate().unwrap();
}

#[test]
fn rejects_loops_nested_deeper_than_a_cursor_holds() {
    // The receiver's Recv wrapped in `depth` loops, one inside the other.
    let nested = |depth: u32| {
        let mut w = base();
        let mut ops: Vec<Op> = (0..depth).map(|d| Op::Loop { count: 1, body: depth - d }).collect();
        ops[depth as usize - 1] = Op::Loop { count: 6, body: 1 };
        ops.push(Op::Recv { chan: 0 });
        w.programs[2].ops = ops;
        w
    };
    nested(MAX_LOOP_DEPTH as u32).validate().unwrap();
    rejects(
        &nested(MAX_LOOP_DEPTH as u32 + 1),
        "program 2 ('receiver') op 4: loops nest 5 deep; engines support at most 4",
    );
}

#[test]
fn rejects_bad_compute_and_params() {
    let mut w = base();
    w.programs[1].ops[4] = Op::ComputeUniform { min: 5, max: 4 };
    rejects(&w, "ComputeUniform min 5 > max 4");
    let mut w = base();
    w.root_params.nice = 20;
    rejects(&w, "root_params: nice 20");
    let mut w = base();
    w.programs[0].ops[1] = Op::Spawn {
        program: 1,
        params: TaskParams { class: SchedClass::Fifo, rt_priority: 0, ..TaskParams::default() },
    };
    rejects(&w, "program 0 ('root') op 1: Spawn: rt_priority 0");
    let mut w = base();
    w.programs[0].ops[1] = Op::Spawn { program: 1, params: TaskParams { rt_priority: 5, ..TaskParams::default() } };
    rejects(&w, "SCHED_OTHER");
    let mut w = base();
    w.root_params.cpus_allowed = CpuMask(0);
    rejects(&w, "cpus_allowed is empty");
    // A real-time task with a valid priority is fine.
    let mut w = base();
    w.root_params = TaskParams { class: SchedClass::Rr, rt_priority: 50, ..TaskParams::default() };
    w.validate().unwrap();
}
