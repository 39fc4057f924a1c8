//! `fast`: the runtime's own work-stealing scheduler (`schedlab-rt`, `scheduler/fast`).
//!
//! It is in the registry so that every crate names schedulers the same way (specs,
//! `schedlab list`, the bench and validate tables), but it is not a [`Policy`]: its
//! per-worker deques, LIFO slot and stealing are the runtime's code, and the simulator
//! has no model of it. [`PolicyKind::RUNTIME_NATIVE`] tells the runtime to use its own
//! scheduler; [`PolicyKind::build`] says why nothing else can.

use crate::platform::Platform;
use crate::policies::{BuildEnv, PolicyKind};
use crate::policy::Policy;
use crate::spec::SpecError;

/// The registry entry.
pub struct Kind;

impl PolicyKind for Kind {
    const NAME: &'static str = "fast";
    const SUMMARY: &'static str =
        "the runtime's work-stealing scheduler (LIFO slot, stealing, spin-then-park); runtime only, no simulator model";
    const RUNTIME_NATIVE: bool = true;
    type Config = ();

    fn build<P: Platform>(_: &(), _: &P, _: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError> {
        Err(SpecError(
            "policy 'fast' is the real runtime's own scheduler and has no simulator model (simulate dss, mqs or pmqs)"
                .into(),
        ))
    }
}
