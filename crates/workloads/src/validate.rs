//! Structural validation of workloads.

use crate::{Op, Workload, MAX_LOOP_DEPTH};
use schedlab_core::{SchedClass, TaskParams};

fn check_params(p: &TaskParams) -> Result<(), String> {
    if !(-20..=19).contains(&p.nice) {
        return Err(format!("nice {} is outside -20..=19", p.nice));
    }
    match p.class {
        SchedClass::Other if p.rt_priority != 0 => {
            Err(format!("rt_priority {} given for SCHED_OTHER (must be 0)", p.rt_priority))
        }
        SchedClass::Fifo | SchedClass::Rr if !(1..=99).contains(&p.rt_priority) => {
            Err(format!("rt_priority {} is outside 1..=99 for {:?}", p.rt_priority, p.class))
        }
        _ if p.cpus_allowed.is_empty() => Err("cpus_allowed is empty".into()),
        _ => Ok(()),
    }
}

/// Why [`Workload::validate`] refused a workload: what is malformed, where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidWorkload(pub String);

impl Workload {
    /// Check that the workload is well formed, so that an engine may interpret it
    /// without further checks:
    ///
    /// * there is at least one program and `root` is one of them; `root_params` and
    ///   the parameters of every `Spawn` are valid (nice −20..=19, rt_priority 1..=99
    ///   for real-time classes and 0 otherwise, non-empty `cpus_allowed`);
    /// * every channel id is `< channels`; `metric.counted` has `channels` entries, and
    ///   `buffers` none or `channels`;
    ///   the metric has a unit and a non-zero `per_count` denominator;
    /// * every `bound` program id is in range;
    /// * every spawned program id is in range, and no program can (transitively) spawn
    ///   itself — there are no conditionals, so a spawn cycle would create tasks forever;
    /// * every `Loop` has `count ≥ 1` and a non-empty body that lies within the program
    ///   and within the body of every enclosing loop (loops nest properly), at most
    ///   [`MAX_LOOP_DEPTH`] deep (a [`Cursor`](crate::Cursor) has that many frames);
    /// * `ComputeUniform` has `min ≤ max`;
    /// * `expected_tasks ≥ 1` (the root).
    ///
    /// It does not execute the programs: that message counts balance is the builders'
    /// responsibility (and the integration tests').
    pub fn validate(&self) -> Result<(), InvalidWorkload> {
        self.check_structure().map_err(InvalidWorkload)
    }

    fn check_structure(&self) -> Result<(), String> {
        let nprogs = self.programs.len();
        if nprogs == 0 {
            return Err("workload has no programs".into());
        }
        if self.root as usize >= nprogs {
            return Err(format!("root program {} out of range ({} programs)", self.root, nprogs));
        }
        check_params(&self.root_params).map_err(|e| format!("root_params: {e}"))?;
        if self.metric.counted.len() != self.channels as usize {
            return Err(format!(
                "metric.counted has {} entries for {} channels",
                self.metric.counted.len(),
                self.channels
            ));
        }
        if !self.buffers.is_empty() && self.buffers.len() != self.channels as usize {
            return Err(format!("buffers has {} entries for {} channels", self.buffers.len(), self.channels));
        }
        if self.metric.unit.is_empty() {
            return Err("metric unit is empty".into());
        }
        if self.metric.per_count.1 == 0 {
            return Err("metric per_count has a zero denominator".into());
        }
        if self.expected_tasks == 0 {
            return Err("expected_tasks is 0 (the root task counts)".into());
        }
        if let Some(&(prog, _)) = self.bound.iter().find(|&&(prog, _)| prog as usize >= nprogs) {
            return Err(format!("bound program {prog} out of range ({nprogs} programs)"));
        }

        let mut loop_ends: Vec<usize> = Vec::new();
        for (pi, prog) in self.programs.iter().enumerate() {
            let at = |i: usize| format!("program {pi} ('{}') op {i}", prog.role);
            let chan_ok = |i: usize, chan: u32| {
                if chan < self.channels {
                    Ok(())
                } else {
                    Err(format!("{}: channel {chan} out of range ({} channels)", at(i), self.channels))
                }
            };
            loop_ends.clear();
            for (i, op) in prog.ops.iter().enumerate() {
                while loop_ends.last().is_some_and(|&end| i >= end) {
                    loop_ends.pop();
                }
                match *op {
                    Op::Send { chan, .. } | Op::Recv { chan } => chan_ok(i, chan)?,
                    Op::ComputeUniform { min, max } if min > max => {
                        return Err(format!("{}: ComputeUniform min {min} > max {max}", at(i)))
                    }
                    Op::Spawn { program, params } => {
                        if program as usize >= nprogs {
                            return Err(format!(
                                "{}: Spawn of program {program} out of range ({nprogs} programs)",
                                at(i)
                            ));
                        }
                        check_params(&params).map_err(|e| format!("{}: Spawn: {e}", at(i)))?;
                    }
                    Op::Loop { count, body } => {
                        if count == 0 {
                            return Err(format!("{}: Loop count 0 (must be ≥ 1)", at(i)));
                        }
                        if body == 0 {
                            return Err(format!("{}: Loop with empty body", at(i)));
                        }
                        let end = i + 1 + body as usize;
                        let limit = loop_ends.last().copied().unwrap_or(prog.ops.len());
                        if end > limit {
                            return Err(format!(
                                "{}: Loop body of {body} ops ends at {end}, past the end of its {} ({limit})",
                                at(i),
                                if loop_ends.is_empty() { "program" } else { "enclosing loop" }
                            ));
                        }
                        loop_ends.push(end);
                        if loop_ends.len() > MAX_LOOP_DEPTH {
                            return Err(format!(
                                "{}: loops nest {} deep; engines support at most {MAX_LOOP_DEPTH}",
                                at(i),
                                loop_ends.len()
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }

        // Spawn graph must be acyclic. Iterative DFS; a stack entry is (program, index
        // of the next op to scan); colours: 0 unvisited, 1 on the stack, 2 done.
        let mut colour = vec![0u8; nprogs];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for start in 0..nprogs {
            if colour[start] != 0 {
                continue;
            }
            colour[start] = 1;
            stack.push((start, 0));
            while let Some((p, next)) = stack.last_mut() {
                let p = *p;
                let ops = &self.programs[p].ops;
                let child = ops[*next..].iter().position(|op| matches!(op, Op::Spawn { .. }));
                let Some(off) = child else {
                    colour[p] = 2;
                    stack.pop();
                    continue;
                };
                let Op::Spawn { program, .. } = ops[*next + off] else { unreachable!() };
                *next += off + 1;
                let c = program as usize;
                match colour[c] {
                    0 => {
                        colour[c] = 1;
                        stack.push((c, 0));
                    }
                    1 => {
                        return Err(format!(
                            "spawn cycle: program {c} ('{}') can spawn itself (via program {p} ('{}'))",
                            self.programs[c].role, self.programs[p].role
                        ))
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}
