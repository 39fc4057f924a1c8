//! Building the core policy: the one place that calls `schedlab_core::build_policy`,
//! and the `Send + Sync` assertion the runtime needs on its result.
//!
//! `build_policy` returns `Box<dyn Policy<P>>` without `Send + Sync` bounds, but the
//! workers share the policy across threads. Once core's `Policy` has those bounds
//! itself, [`SyncPolicy`] and its `unsafe impl`s go away and this file is the
//! `build_policy` call alone.

use super::platform::RtPlatform;
use schedlab_core::{build_policy, Policy, PolicySpec, Topology};

/// A core policy, asserted `Send + Sync`: every policy `build_policy` builds holds
/// only atomics and platform locks (checked for the known ones by
/// `_assert_policies_are_sync` below).
pub(super) struct SyncPolicy(Box<dyn Policy<RtPlatform>>);
// SAFETY: see above; DSS, MQS and PMQS keep all mutable state in atomics or in
// `RtLock`s (parking_lot mutexes).
unsafe impl Send for SyncPolicy {}
unsafe impl Sync for SyncPolicy {}

fn _assert_policies_are_sync() {
    fn is_sync<T: Send + Sync>() {}
    is_sync::<schedlab_core::policies::dss::Dss<RtPlatform>>();
    is_sync::<schedlab_core::policies::mqs::Mqs<RtPlatform>>();
    is_sync::<schedlab_core::policies::pmqs::Pmqs<RtPlatform>>();
}

impl SyncPolicy {
    #[inline]
    pub fn get(&self) -> &dyn Policy<RtPlatform> {
        &*self.0
    }
}

/// The policy `spec` for `n` workers with a task table of `capacity` and `hz` ticks
/// per second; `plat` is the platform view it is built with (worker 0's).
pub(super) fn policy(
    spec: &PolicySpec,
    plat: &RtPlatform,
    n: usize,
    capacity: usize,
    hz: u32,
) -> Result<SyncPolicy, String> {
    let policy = build_policy(spec, plat, &Topology::smp(n), capacity, hz).map_err(|e| e.0)?;
    Ok(SyncPolicy(policy))
}
