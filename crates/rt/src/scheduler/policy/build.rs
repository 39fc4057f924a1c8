//! Building the core policy: the runtime keeps its policy choice as an [`RtSource`]
//! and builds it with core's one constructor (`PolicySource::build`, which ends in
//! `PolicyKind::build`) when the runtime starts. Every core policy is `Send + Sync`
//! (core's `Policy` says so), so the workers can share it as it is.

use super::platform::RtPlatform;
use schedlab_core::{BuildEnv, Policy, PolicySource, SpecError, Topology};

/// A policy choice as the runtime keeps it until it starts: any [`PolicySource`] (a
/// parsed `PolicySpec`, or a `Configured` kind from outside the registry), made
/// object-safe for [`RtPlatform`].
pub(crate) trait RtSource: Send + Sync {
    fn canonical(&self) -> String;
    fn runtime_native(&self) -> bool;
    /// The spec's `colours=N` (1 = vanilla): the colours of the task blocks.
    fn colours(&self) -> u32;
    fn build(&self, p: &RtPlatform, env: &BuildEnv) -> Result<Box<dyn Policy<RtPlatform>>, SpecError>;
}

impl<S: PolicySource + Send + Sync> RtSource for S {
    fn canonical(&self) -> String {
        PolicySource::canonical(self)
    }
    fn runtime_native(&self) -> bool {
        PolicySource::runtime_native(self)
    }
    fn colours(&self) -> u32 {
        PolicySource::colours(self)
    }
    fn build(&self, p: &RtPlatform, env: &BuildEnv) -> Result<Box<dyn Policy<RtPlatform>>, SpecError> {
        PolicySource::build(self, p, env)
    }
}

/// The policy `source` for `n` workers with a task table of `capacity` and `hz` ticks
/// per second; `plat` is the platform view it is built with (worker 0's).
pub(super) fn policy(
    source: &dyn RtSource,
    plat: &RtPlatform,
    n: usize,
    capacity: usize,
    hz: u32,
) -> Result<Box<dyn Policy<RtPlatform>>, String> {
    let env = BuildEnv { topo: &Topology::smp(n), capacity, hz };
    source.build(plat, &env).map_err(|e| e.0)
}
