//! [`Builder`]: the runtime's settings, and the choice of scheduler they make.

use crate::scheduler::fast::Fast;
use crate::scheduler::policy::{PolicySched, RtSource};
use crate::scheduler::{Handle, Scheduler};
use crate::{BuildError, Runtime};
use schedlab_core::policies::fast;
use schedlab_core::{Configured, PolicySource, PolicySpec};
use std::sync::Arc;
use std::time::Duration;

/// Configures and builds a [`Runtime`].
#[derive(Clone)]
pub struct Builder {
    workers: usize,
    /// The scheduler: a registry spec or any policy source; a spec that does not parse
    /// is kept as its error for `build` to report.
    policy: Result<Arc<dyn RtSource>, (String, String)>,
    pin: bool,
    hz: u32,
    max_tasks: usize,
    spin: Duration,
    /// Record a scheduling trace, keeping this many events per worker.
    trace: Option<usize>,
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("workers", &self.workers)
            .field("policy", &self.policy.as_ref().map(|s| s.canonical()))
            .field("pin", &self.pin)
            .field("hz", &self.hz)
            .field("max_tasks", &self.max_tasks)
            .field("spin", &self.spin)
            .field("trace", &self.trace)
            .finish()
    }
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

/// How long an idle worker spins before parking, unless [`Builder::spin`] says
/// otherwise (a futex wake of a parked worker costs tens of µs on a VM; the
/// calibration of `schedlab validate` measures it).
pub const DEFAULT_IDLE_SPIN: Duration = Duration::from_micros(50);

/// The timer tick rate of a runtime unless [`Builder::hz`] says otherwise.
pub const DEFAULT_HZ: u32 = 1000;

impl Builder {
    /// Defaults: one worker per available CPU, policy `"fast"`, pinned workers,
    /// HZ = 1000, 65 536 task slots for policy schedulers, 50 µs idle spin.
    pub fn new() -> Builder {
        Builder {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            policy: Ok(Arc::new(Configured::<fast::Kind>(()))),
            pin: true,
            hz: DEFAULT_HZ,
            max_tasks: 1 << 16,
            spin: DEFAULT_IDLE_SPIN,
            trace: None,
        }
    }
    /// Number of worker threads (at least 1, at most 64 for policy schedulers).
    pub fn workers(mut self, n: usize) -> Builder {
        self.workers = n.max(1);
        self
    }
    /// Any scheduler of the registry by its spec (`schedlab_core::PolicySpec`):
    /// `"fast"`, `"dss"`, `"mqs"`, `"pmqs:pool=1,lb=lbp,period=10"`, ...
    pub fn policy(mut self, spec: &str) -> Builder {
        self.policy = PolicySpec::parse(spec)
            .map(|s| Arc::new(s) as Arc<dyn RtSource>)
            .map_err(|e| (spec.to_string(), e.to_string()));
        self
    }
    /// Any policy source: a parsed `PolicySpec`, or a `schedlab_core::Configured`
    /// policy kind that is not in the registry (built by the same constructor).
    pub fn policy_source<S: PolicySource + Send + Sync + 'static>(mut self, source: S) -> Builder {
        self.policy = Ok(Arc::new(source));
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

    /// Record a scheduling trace (`docs/traces.md`): switches, wake-ups, migrations,
    /// forks, exits, run-queue lock holds and IPIs, in buffers of `capacity` events per
    /// worker (plus one for other threads), preallocated here; when a buffer is full its
    /// newest events are dropped and counted. Read it with [`Runtime::take_trace`] or
    /// [`Runtime::shutdown_traced`]. Off by default ([`crate::DEFAULT_RING_CAPACITY`] is
    /// a reasonable capacity). Policy schedulers only: `build` refuses it with `fast`.
    pub fn trace(mut self, capacity: usize) -> Builder {
        self.trace = Some(capacity.max(1));
        self
    }

    /// Start the workers. Fails on a policy spec that names no scheduler, more
    /// workers than a policy supports, or a worker thread that cannot start.
    ///
    /// ```
    /// // Two workers whose run queue is Linux 2.4's scheduler, the simulator's own code.
    /// let rt = schedlab_rt::Builder::new().workers(2).policy("dss").build().unwrap();
    /// let sum = rt.block_on(async {
    ///     let tasks: Vec<_> = (1..=10u64).map(|i| schedlab_rt::spawn(async move { i * i })).collect();
    ///     let mut sum = 0;
    ///     for t in tasks {
    ///         sum += t.await.unwrap();
    ///     }
    ///     sum
    /// });
    /// assert_eq!(sum, 385);
    /// rt.shutdown();
    ///
    /// let err = schedlab_rt::Builder::new().policy("bfs").build().unwrap_err();
    /// assert!(err.to_string().starts_with("bad policy 'bfs'"), "{err}");
    /// ```
    pub fn build(self) -> Result<Runtime, BuildError> {
        let source = self.policy.clone().map_err(|(spec, reason)| BuildError::Policy { spec, reason })?;
        let scheduler = self.scheduler(&*source)?;
        Runtime::start(Handle::new(scheduler, self.workers, source.canonical()), self.pin)
    }

    /// The scheduler the policy choice names — the one place that reads it: a
    /// runtime-native registry entry (`fast`) is the runtime's own scheduler, any other
    /// a core policy run by the adapter.
    fn scheduler(&self, source: &dyn RtSource) -> Result<Scheduler, BuildError> {
        let n = self.workers;
        if source.runtime_native() {
            if self.trace.is_some() {
                return Err(BuildError::NoTrace(source.canonical()));
            }
            return Ok(Scheduler::Fast(Box::new(Fast::new(n, self.spin))));
        }
        let name = source.canonical();
        if n > schedlab_core::cpu::MAX_CPUS {
            return Err(BuildError::TooManyWorkers { policy: name, max: schedlab_core::cpu::MAX_CPUS });
        }
        let policy = PolicySched::new(source, n, self.max_tasks, self.hz, self.spin, self.trace)
            .map_err(|reason| BuildError::Policy { spec: name, reason })?;
        Ok(Scheduler::Policy(policy))
    }
}
