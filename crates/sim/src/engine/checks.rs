//! Consistency checks: the policy's invariants and the engine's conservation laws
//! after every event (`--check`), and the detection of runs that can never finish.

use super::exec::TState;
use super::{Engine, Mode};
use crate::config::SimError;

impl Engine<'_> {
    /// Detect a workload that can never finish, or a policy that lost a task.
    pub(super) fn check_progress(&self) -> Result<(), SimError> {
        if self.runnable_or_running == 0 && self.sleeping == 0 && self.live > 0 {
            return Err(SimError::Deadlock(format!(
                "all {} live tasks are blocked in receives that no task will satisfy (workload deadlock)",
                self.live
            )));
        }
        let all_idle = self
            .cpus
            .iter()
            .enumerate()
            .all(|(i, c)| c.mode == Mode::Idle && !c.need_resched && !self.plat.ipi_in_flight(i));
        if all_idle && self.runnable_or_running > 0 {
            return Err(SimError::Deadlock(format!(
                "{} tasks are runnable but every CPU is idle and none was asked to reschedule (lost wake-up in policy {})",
                self.runnable_or_running,
                self.policy.name()
            )));
        }
        Ok(())
    }

    /// Every running task is on exactly one CPU and every message is sent, queued or
    /// received; plus the policy's own invariants.
    pub(super) fn check_invariants(&self) -> Result<(), SimError> {
        self.policy.check_invariants().map_err(|e| SimError::Invariant(e.0))?;
        let mut on_cpu = vec![None; self.tasks.len()];
        for (c, cpu) in self.cpus.iter().enumerate() {
            if let Some(t) = cpu.curr {
                if let Some(other) = on_cpu[t as usize] {
                    return Err(SimError::Invariant(format!("task {t} is running on CPUs {other} and {c}")));
                }
                on_cpu[t as usize] = Some(c);
                if self.tasks[t as usize].state != TState::Running {
                    return Err(SimError::Invariant(format!(
                        "CPU {c} runs task {t} in state {:?}",
                        self.tasks[t as usize].state
                    )));
                }
            }
        }
        for (i, t) in self.tasks.iter().enumerate() {
            if t.state == TState::Running && on_cpu[i].is_none() {
                return Err(SimError::Invariant(format!("task {i} is Running but on no CPU")));
            }
        }
        let in_flight: u64 = self.chans.iter().map(|c| c.pending).sum();
        if self.rec.sent != self.rec.received + in_flight {
            return Err(SimError::Invariant(format!(
                "{} sent != {} received + {in_flight} queued",
                self.rec.sent, self.rec.received
            )));
        }
        Ok(())
    }
}
