//! The scheduling trace a traced run records (`simulate_traced`): the engine's
//! events and the platform's lock acquires and releases, in the trace vocabulary of
//! `schedlab_core::trace`. Off (the default), each recording point costs one branch.

use super::SimPlatform;
use schedlab_core::trace::{Event, TraceBuf};
use schedlab_core::CpuId;
use std::cell::RefCell;

impl SimPlatform {
    /// This platform recording a scheduling trace of at most `cap` events.
    pub fn with_trace(mut self, cap: usize) -> SimPlatform {
        self.trace = Some(RefCell::new(TraceBuf::new(cap)));
        self
    }

    /// Record `ev()` at the cursor on the current CPU, when tracing.
    #[inline]
    pub fn trace(&self, ev: impl FnOnce() -> Event) {
        if let Some(t) = &self.trace {
            t.borrow_mut().push(self.cursor.get(), self.cpu.get(), ev());
        }
    }

    /// Record `ev()` at `ts_ns` on `cpu`, when tracing.
    #[inline]
    pub fn trace_at(&self, ts_ns: u64, cpu: CpuId, ev: impl FnOnce() -> Event) {
        if let Some(t) = &self.trace {
            t.borrow_mut().push(ts_ns, cpu, ev());
        }
    }

    /// Whether a trace is being recorded.
    #[inline]
    pub fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    /// The recorded events, leaving tracing off.
    pub fn take_trace(&mut self) -> Option<TraceBuf> {
        self.trace.take().map(RefCell::into_inner)
    }

    /// A lock event of a traced run.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_lock(&self, ev: Event) {
        self.trace(|| ev);
    }
}
