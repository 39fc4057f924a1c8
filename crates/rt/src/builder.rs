//! [`Builder`]: the runtime's settings, and the choice of scheduler they make.

use crate::scheduler::fast::Fast;
use crate::scheduler::policy::PolicySched;
use crate::scheduler::{Handle, Scheduler};
use crate::Runtime;
use std::time::Duration;

/// Configures and builds a [`Runtime`].
#[derive(Clone, Debug)]
pub struct Builder {
    workers: usize,
    policy: String,
    pin: bool,
    hz: u32,
    max_tasks: usize,
    spin: Duration,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// Defaults: one worker per available CPU, policy `"fast"`, pinned workers,
    /// HZ = 1000, 65 536 task slots for policy schedulers, 50 µs idle spin.
    pub fn new() -> Builder {
        Builder {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            policy: "fast".into(),
            pin: true,
            hz: 1000,
            max_tasks: 1 << 16,
            spin: Duration::from_micros(50),
        }
    }
    /// Number of worker threads (at least 1, at most 64 for policy schedulers).
    pub fn workers(mut self, n: usize) -> Builder {
        self.workers = n.max(1);
        self
    }
    /// `"fast"` or any `schedlab_core::PolicySpec` string (`"dss"`, `"mqs"`,
    /// `"pmqs:pool=1,lb=lbp,period=10"`).
    pub fn policy(mut self, spec: &str) -> Builder {
        self.policy = spec.to_string();
        self
    }
    /// Pin worker `i` to CPU `i % ncpus`.
    pub fn pin(mut self, yes: bool) -> Builder {
        self.pin = yes;
        self
    }
    /// Timer tick rate for policy schedulers (counters are in ticks).
    pub fn hz(mut self, hz: u32) -> Builder {
        self.hz = hz.max(1);
        self
    }
    /// Task-table capacity of policy schedulers; further spawns wait for a free id.
    pub fn max_tasks(mut self, n: usize) -> Builder {
        self.max_tasks = n.clamp(1, u32::MAX as usize - 1);
        self
    }
    /// How long an idle worker spins before parking.
    pub fn spin(mut self, d: Duration) -> Builder {
        self.spin = d;
        self
    }

    /// Start the workers. Fails on a policy string that names no scheduler, more
    /// workers than a policy supports, or a worker thread that cannot start.
    pub fn build(self) -> Result<Runtime, String> {
        let scheduler = self.scheduler()?;
        Runtime::start(Handle::new(scheduler, self.workers), self.pin)
    }

    /// The scheduler the `policy` setting names — the one place that reads it:
    /// `"fast"` is the runtime's own scheduler, anything else a core `PolicySpec`.
    fn scheduler(&self) -> Result<Scheduler, String> {
        let n = self.workers;
        let scheduler = if self.policy.trim().eq_ignore_ascii_case("fast") {
            Scheduler::Fast(Box::new(Fast::new(n, self.spin)))
        } else {
            let spec = schedlab_core::PolicySpec::parse(&self.policy)
                .map_err(|e| format!("bad policy '{}': {e} (or use 'fast')", self.policy))?;
            if n > schedlab_core::cpu::MAX_CPUS {
                return Err(format!(
                    "policy '{}' supports at most {} workers",
                    self.policy,
                    schedlab_core::cpu::MAX_CPUS
                ));
            }
            Scheduler::Policy(
                PolicySched::new(&spec, n, self.max_tasks, self.hz, self.spin)
                    .map_err(|e| format!("bad policy '{}': {e}", self.policy))?,
            )
        };
        Ok(scheduler)
    }
}
