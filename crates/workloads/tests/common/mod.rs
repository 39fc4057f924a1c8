//! Reference interpreters for workload programs, independent of the library.
#![allow(dead_code)]

use schedlab_workloads::{Op, Workload};
use std::collections::{BTreeMap, VecDeque};

/// What one execution of a program (or of a block of it) does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    pub sends: BTreeMap<u32, u64>,
    pub recvs: BTreeMap<u32, u64>,
    pub spawns: BTreeMap<u32, u64>,
    pub ops: u64,
}

impl Effects {
    fn add(&mut self, other: &Effects, times: u64) {
        for (dst, src) in
            [(&mut self.sends, &other.sends), (&mut self.recvs, &other.recvs), (&mut self.spawns, &other.spawns)]
        {
            for (&k, &v) in src {
                *dst.entry(k).or_default() += v * times;
            }
        }
        self.ops += other.ops * times;
    }
}

/// Statically execute `ops[start..end]` once: loops are expanded by multiplying the
/// effects of one iteration by the count. Returns the effects and whether an `Exit`
/// was reached (then the loop/program stops at its first execution).
fn eval_block(ops: &[Op], start: usize, end: usize) -> (Effects, bool) {
    let mut fx = Effects::default();
    let mut i = start;
    while i < end {
        fx.ops += 1;
        match ops[i] {
            Op::Send { chan, .. } => *fx.sends.entry(chan).or_default() += 1,
            Op::Recv { chan } => *fx.recvs.entry(chan).or_default() += 1,
            Op::Spawn { program, .. } => *fx.spawns.entry(program).or_default() += 1,
            Op::Exit => return (fx, true),
            Op::Loop { count, body } => {
                let body_end = i + 1 + body as usize;
                assert!(body_end <= end, "loop escapes its block");
                let (inner, exited) = eval_block(ops, i + 1, body_end);
                if exited {
                    fx.add(&inner, 1);
                    return (fx, true);
                }
                fx.add(&inner, count as u64);
                i = body_end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    (fx, false)
}

/// Totals of a whole workload run, computed statically.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub tasks: u64,
    /// Task instances per program.
    pub instances: BTreeMap<u32, u64>,
    pub sends: BTreeMap<u32, u64>,
    pub recvs: BTreeMap<u32, u64>,
    /// Successful receives on counted channels.
    pub counted: u64,
    /// Instructions executed (loop headers count once per entry).
    pub ops: u64,
}

pub fn static_totals(w: &Workload) -> Totals {
    let per_prog: Vec<Effects> = w.programs.iter().map(|p| eval_block(&p.ops, 0, p.ops.len()).0).collect();
    let mut t = Totals::default();
    // Propagate instance counts down the (acyclic) spawn tree.
    let mut work = vec![(w.root, 1u64)];
    while let Some((p, n)) = work.pop() {
        *t.instances.entry(p).or_default() += n;
        t.tasks += n;
        let fx = &per_prog[p as usize];
        t.ops += fx.ops * n;
        for (&c, &k) in &fx.sends {
            *t.sends.entry(c).or_default() += k * n;
        }
        for (&c, &k) in &fx.recvs {
            *t.recvs.entry(c).or_default() += k * n;
        }
        for (&q, &k) in &fx.spawns {
            work.push((q, k * n));
        }
    }
    t.counted = t.recvs.iter().filter(|(&c, _)| w.metric.counted[c as usize]).map(|(_, &k)| k).sum();
    t
}

/// Result of a dynamic run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunResult {
    pub tasks: u64,
    pub sends: BTreeMap<u32, u64>,
    pub recvs: BTreeMap<u32, u64>,
    pub counted: u64,
    pub max_queue: u64,
}

struct Task {
    prog: u32,
    pc: usize,
    /// (body start, body end, iterations left).
    loops: Vec<(usize, usize, u32)>,
}

/// Dynamically execute the workload one instruction at a time, as an engine would:
/// tasks are picked pseudo-randomly (xorshift seeded with `seed`) among the runnable
/// ones, a `Recv` on an empty channel blocks the task until a message arrives, loops
/// keep a stack of frames. Panics on deadlock (live tasks, none runnable) or if more
/// than `max_steps` instructions execute.
pub fn run(w: &Workload, seed: u64, max_steps: u64) -> RunResult {
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut res = RunResult::default();
    let mut queues = vec![0u64; w.channels as usize];
    let mut waiters: Vec<VecDeque<usize>> = vec![VecDeque::new(); w.channels as usize];
    let mut tasks: Vec<Task> = vec![Task { prog: w.root, pc: 0, loops: vec![] }];
    res.tasks = 1;
    let mut runnable: Vec<usize> = vec![0];
    let mut live = 1u64;
    let mut steps = 0u64;
    while !runnable.is_empty() {
        let k = (next() % runnable.len() as u64) as usize;
        let tid = runnable.swap_remove(k);
        // Run the task for a few instructions (a "time slice") or until it blocks/exits.
        let slice = 1 + next() % 8;
        let mut state = 0; // 0 runnable, 1 blocked, 2 exited
        for _ in 0..slice {
            steps += 1;
            assert!(steps <= max_steps, "more than {max_steps} steps");
            let t = &mut tasks[tid];
            // Close finished loop iterations.
            while let Some(&mut (start, end, ref mut left)) = t.loops.last_mut() {
                if t.pc < end {
                    break;
                }
                *left -= 1;
                if *left > 0 {
                    t.pc = start;
                    break;
                }
                t.loops.pop();
            }
            let ops = &w.programs[t.prog as usize].ops;
            if t.pc >= ops.len() {
                state = 2;
                break;
            }
            match ops[t.pc] {
                Op::Send { chan, .. } => {
                    *res.sends.entry(chan).or_default() += 1;
                    queues[chan as usize] += 1;
                    res.max_queue = res.max_queue.max(queues[chan as usize]);
                    if let Some(wk) = waiters[chan as usize].pop_front() {
                        runnable.push(wk);
                    }
                    t.pc += 1;
                }
                Op::Recv { chan } => {
                    if queues[chan as usize] == 0 {
                        waiters[chan as usize].push_back(tid);
                        state = 1;
                        break; // retries the Recv when woken
                    }
                    queues[chan as usize] -= 1;
                    *res.recvs.entry(chan).or_default() += 1;
                    if w.metric.counted[chan as usize] {
                        res.counted += 1;
                    }
                    t.pc += 1;
                }
                Op::Loop { count, body } => {
                    t.loops.push((t.pc + 1, t.pc + 1 + body as usize, count));
                    t.pc += 1;
                }
                Op::Spawn { program, .. } => {
                    t.pc += 1;
                    tasks.push(Task { prog: program, pc: 0, loops: vec![] });
                    runnable.push(tasks.len() - 1);
                    res.tasks += 1;
                    live += 1;
                }
                Op::Exit => {
                    state = 2;
                    break;
                }
                _ => tasks[tid].pc += 1,
            }
        }
        match state {
            0 => runnable.push(tid),
            2 => live -= 1,
            _ => {}
        }
    }
    assert_eq!(live, 0, "deadlock: {live} live tasks, none runnable");
    assert!(queues.iter().all(|&q| q == 0), "messages left unread");
    res
}
