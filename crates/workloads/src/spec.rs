//! The workload registry: one file per workload, one line per workload in [`REGISTRY`].
//!
//! Each workload file defines its parameters struct, their [`Options`] table (parsing,
//! canonical spec and help texts all come from it) and its [`WorkloadKind`]: name,
//! summary, footprint and builder. Everything that lists or parses workloads —
//! `schedlab list`, [`parse_workload`], sweeps and experiments — goes through
//! [`REGISTRY`], so adding a workload is one new file plus one line there.
//!
//! ```text
//!   "chat:rooms=10,messages=100"  --WorkloadSpec::parse-->  WorkloadSpec (chat, its ChatParams)
//!        --footprint check, WorkloadSpec::build-->  Workload
//! ```

use crate::{
    ChatParams, Footprint, HackbenchParams, MkbenchParams, NetbenchParams, PingPongParams, WebbenchParams, Workload,
};
use schedlab_core::options::{self, Options, ParamHelp};
use schedlab_core::spec::Spec;
use schedlab_core::SpecError;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// The registry: every workload schedlab knows, in the order `schedlab list` shows them.
pub const REGISTRY: &[Entry] = &[
    Entry::of::<ChatParams>(),
    Entry::of::<HackbenchParams>(),
    Entry::of::<PingPongParams>(),
    Entry::of::<MkbenchParams>(),
    Entry::of::<NetbenchParams>(),
    Entry::of::<WebbenchParams>(),
];

/// A workload as the registry knows it: its parameters (an [`Options`] table), its name,
/// and what it needs and builds.
pub trait WorkloadKind: Options + fmt::Debug + Send + Sync {
    /// Name in specs (`"chat"`).
    const NAME: &'static str;
    /// One line for `schedlab list`: what it models.
    const SUMMARY: &'static str;
    /// Tasks, channels and program operations the build will make, from the parameters
    /// alone (the memory check before building).
    fn footprint(&self) -> Footprint;
    /// Build the workload's programs.
    fn build(&self) -> Result<Workload, SpecError>;
    /// Check every parameter against its accepted range (parameters built in code
    /// rather than parsed).
    fn check(&self) -> Result<(), SpecError> {
        options::check("workload", Self::NAME, self)
    }
}

/// A registry entry.
pub struct Entry {
    pub name: &'static str,
    pub summary: &'static str,
    /// Each parameter: syntax, range, default and doc.
    pub params: fn() -> Vec<ParamHelp>,
    parse: fn(&mut Spec) -> Result<WorkloadSpec, SpecError>,
}

impl Entry {
    pub const fn of<K: WorkloadKind>() -> Entry {
        Entry { name: K::NAME, summary: K::SUMMARY, params: options::help::<K>, parse: parse_as::<K> }
    }
}

fn parse_as<K: WorkloadKind>(spec: &mut Spec) -> Result<WorkloadSpec, SpecError> {
    let p: K = options::parse(spec)?;
    spec.finish(&options::keys::<K>())?;
    Ok(WorkloadSpec::of(p))
}

/// Every workload name, in registry order.
pub fn workload_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// A workload's parameters, whatever its kind.
trait AnyWorkload: Send + Sync + fmt::Debug {
    fn footprint(&self) -> Footprint;
    fn build(&self) -> Result<Workload, SpecError>;
    fn as_any(&self) -> &dyn Any;
}

impl<K: WorkloadKind> AnyWorkload for K {
    fn footprint(&self) -> Footprint {
        WorkloadKind::footprint(self)
    }
    fn build(&self) -> Result<Workload, SpecError> {
        WorkloadKind::build(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A parsed workload spec: the benchmark and its parameters, before building. Two specs
/// are equal when their canonical strings are.
#[derive(Clone)]
pub struct WorkloadSpec {
    name: &'static str,
    canonical: String,
    params: Arc<dyn AnyWorkload>,
}

impl WorkloadSpec {
    /// Parse `name:key=value,...`. Errors name the offending part: an unknown workload
    /// lists the known ones, a bad value names key and value, a misspelt key is
    /// rejected with the accepted keys.
    pub fn parse(s: &str) -> Result<WorkloadSpec, SpecError> {
        let mut spec = Spec::parse("workload", s)?;
        match REGISTRY.iter().find(|e| e.name == spec.name) {
            Some(e) => (e.parse)(&mut spec),
            None => {
                Err(SpecError(format!("unknown workload '{}' (known: {})", spec.name, workload_names().join(", "))))
            }
        }
    }

    /// The spec of kind `K` with parameters `p`.
    pub fn of<K: WorkloadKind>(p: K) -> WorkloadSpec {
        WorkloadSpec { name: K::NAME, canonical: options::canonical(K::NAME, &p), params: Arc::new(p) }
    }

    /// The workload's name (`"chat"`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Canonical spec string: round-trips through [`WorkloadSpec::parse`]; becomes
    /// [`Workload::spec`].
    pub fn canonical(&self) -> String {
        self.canonical.clone()
    }

    /// The parameters, if this is a spec of kind `K`.
    pub fn params<K: WorkloadKind>(&self) -> Option<&K> {
        self.params.as_any().downcast_ref::<K>()
    }

    /// What building and running it will need, from the parameters alone.
    pub fn footprint(&self) -> Footprint {
        self.params.footprint()
    }

    /// Build the workload's programs.
    pub fn build(&self) -> Result<Workload, SpecError> {
        self.params.build()
    }
}

impl PartialEq for WorkloadSpec {
    fn eq(&self, other: &Self) -> bool {
        self.canonical == other.canonical
    }
}
impl Eq for WorkloadSpec {}

impl fmt::Debug for WorkloadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WorkloadSpec({})", self.canonical)
    }
}

/// Parse a workload spec and build it.
///
/// ```
/// let w = schedlab_workloads::parse_workload("chat:rooms=30,messages=300").unwrap();
/// assert_eq!(w.expected_tasks, 2402);
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
