//! Workload specs: `name:key=value,...` → [`WorkloadSpec`] → [`Workload`].

use crate::{
    ChatParams, Footprint, HackbenchParams, MkbenchParams, NetbenchParams, PingPongParams, WebbenchParams, Workload,
};
use schedlab_core::spec::Spec;
use schedlab_core::SpecError;

/// Names accepted by [`parse_workload`].
pub const WORKLOAD_NAMES: &[&str] = &["chat", "hackbench", "pingpong", "mkbench", "netbench", "webbench"];

/// A parsed workload spec: the benchmark and its parameters, before building.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadSpec {
    Chat(ChatParams),
    Hackbench(HackbenchParams),
    PingPong(PingPongParams),
    Mkbench(MkbenchParams),
    Netbench(NetbenchParams),
    Webbench(WebbenchParams),
}

impl WorkloadSpec {
    /// Parse `name:key=value,...`. Errors name the offending part: an unknown workload
    /// lists the known ones, a bad value names key and value, a misspelt key is
    /// rejected with the accepted keys.
    pub fn parse(s: &str) -> Result<WorkloadSpec, SpecError> {
        Self::parse_spec(&mut Spec::parse("workload", s)?)
    }

    /// The keys of workload `name`, `key=min..=max (default d)` each, as its parser
    /// reads them (for `schedlab list` and help texts).
    pub fn keys(name: &str) -> Result<Vec<String>, SpecError> {
        let mut spec = Spec::parse("workload", name)?;
        Self::parse_spec(&mut spec)?;
        Ok(spec.asked().to_vec())
    }

    fn parse_spec(spec: &mut Spec) -> Result<WorkloadSpec, SpecError> {
        Ok(match spec.name.as_str() {
            "chat" => WorkloadSpec::Chat(ChatParams::from_spec(spec)?),
            "hackbench" => WorkloadSpec::Hackbench(HackbenchParams::from_spec(spec)?),
            "pingpong" => WorkloadSpec::PingPong(PingPongParams::from_spec(spec)?),
            "mkbench" => WorkloadSpec::Mkbench(MkbenchParams::from_spec(spec)?),
            "netbench" => WorkloadSpec::Netbench(NetbenchParams::from_spec(spec)?),
            "webbench" => WorkloadSpec::Webbench(WebbenchParams::from_spec(spec)?),
            other => {
                return Err(SpecError(format!("unknown workload '{other}' (known: {})", WORKLOAD_NAMES.join(", "))))
            }
        })
    }

    /// Canonical spec string: round-trips through [`WorkloadSpec::parse`]; becomes
    /// [`Workload::spec`].
    pub fn canonical(&self) -> String {
        match self {
            WorkloadSpec::Chat(p) => p.canonical(),
            WorkloadSpec::Hackbench(p) => p.canonical(),
            WorkloadSpec::PingPong(p) => p.canonical(),
            WorkloadSpec::Mkbench(p) => p.canonical(),
            WorkloadSpec::Netbench(p) => p.canonical(),
            WorkloadSpec::Webbench(p) => p.canonical(),
        }
    }

    /// What building and running it will need, from the parameters alone.
    pub fn footprint(&self) -> Footprint {
        match self {
            WorkloadSpec::Chat(p) => p.footprint(),
            WorkloadSpec::Hackbench(p) => p.footprint(),
            WorkloadSpec::PingPong(p) => p.footprint(),
            WorkloadSpec::Mkbench(p) => p.footprint(),
            WorkloadSpec::Netbench(p) => p.footprint(),
            WorkloadSpec::Webbench(p) => p.footprint(),
        }
    }

    /// Build the workload's programs.
    pub fn build(&self) -> Result<Workload, SpecError> {
        match self {
            WorkloadSpec::Chat(p) => p.build(),
            WorkloadSpec::Hackbench(p) => p.build(),
            WorkloadSpec::PingPong(p) => p.build(),
            WorkloadSpec::Mkbench(p) => p.build(),
            WorkloadSpec::Netbench(p) => p.build(),
            WorkloadSpec::Webbench(p) => p.build(),
        }
    }
}

/// Parse a workload spec and build it.
///
/// ```
/// let w = schedlab_workloads::parse_workload("chat:rooms=30,messages=300").unwrap();
/// assert_eq!(w.expected_tasks, 2401);
/// assert_eq!(w.spec, "chat:rooms=30,messages=300");
/// let e = schedlab_workloads::parse_workload("chat:romos=3").unwrap_err();
/// assert!(e.0.contains("unknown key 'romos'"));
/// ```
pub fn parse_workload(s: &str) -> Result<Workload, SpecError> {
    parse_workload_within(s, crate::footprint::DEFAULT_MAX_BYTES)
}

/// [`parse_workload`] with a memory limit: a workload whose [`Footprint`] estimate
/// exceeds `max_bytes` is refused before it is built.
pub fn parse_workload_within(s: &str, max_bytes: u64) -> Result<Workload, SpecError> {
    // A file path does not fit `key=value` spec syntax: read before it.
    if s.starts_with("trace:") {
        return crate::trace_in::load(s, max_bytes).map(|(w, _)| w);
    }
    let spec = WorkloadSpec::parse(s)?;
    spec.footprint().check(&spec.canonical(), max_bytes)?;
    spec.build()
}
