//! The policy registry: one file per policy, one line per policy in [`walk`].
//!
//! Each policy file defines its [`Policy`] implementation and a `Kind`, the
//! [`PolicyKind`] that names it, parses its options and constructs it. Everything that
//! lists, parses or builds policies — `schedlab list`, the CLI's help, both engines —
//! goes through [`walk`], so adding a policy is one new file here plus one line there.
//!
//! ```text
//!   "pmqs:pool=4,lb=lbp"  --PolicySpec::parse-->  PolicySpec (kind pmqs, its Config)
//!        --PolicySource::build(&platform, &env)-->  Box<dyn Policy<P>>   (sim or runtime)
//! ```
//!
//! [`PolicyKind::build`] is the one constructor: the simulator calls it with its
//! `SimPlatform`, the runtime with its `RtPlatform`, tests with `NullPlatform`. A
//! policy that is not in the registry (a toy in a test) reaches both engines through
//! the same constructor with [`Configured`].

pub mod cfs;
pub mod dss;
pub mod eevdf;
pub mod fast;
pub mod linux_balance;
pub mod mqs;
pub mod o1;
pub mod pmqs;

use crate::cpu::Topology;
use crate::options::{self, Options, Param, ParamHelp, Value};
use crate::platform::Platform;
use crate::policy::Policy;
use crate::spec::{Spec, SpecError};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// The registry: every policy schedlab knows, in the order `schedlab list` shows them.
///
/// A policy is registered by one `v.visit::<its Kind>()` line here; from then on a spec
/// names it, both engines build it, and `schedlab list` shows it:
///
/// ```
/// use schedlab_core::policies::{walk, KindVisitor, PolicyKind};
/// use schedlab_core::{BuildEnv, NullPlatform, PolicySource, PolicySpec, Topology};
///
/// struct Names(Vec<&'static str>);
/// impl KindVisitor for Names {
///     fn visit<K: PolicyKind>(&mut self) {
///         self.0.push(K::NAME);
///     }
/// }
/// let mut names = Names(Vec::new());
/// walk(&mut names);
/// assert_eq!(names.0, ["dss", "mqs", "pmqs", "o1", "cfs", "eevdf", "fast"]);
///
/// // A spec of a registered policy, built on the zero-cost platform for a 4-CPU machine.
/// let spec = PolicySpec::parse("pmqs:pool=2,lb=lbp").unwrap();
/// let env = BuildEnv { topo: &Topology::smp(4), capacity: 64, hz: 100 };
/// let policy = spec.build(&NullPlatform::new(0), &env).unwrap();
/// assert_eq!(policy.name(), "pmqs");
/// // Options that do not fit the machine are refused by the policy's constructor.
/// let bad = PolicySpec::parse("pmqs:pool=3").unwrap();
/// assert!(bad.build(&NullPlatform::new(0), &env).is_err());
/// ```
pub fn walk(v: &mut impl KindVisitor) {
    v.visit::<dss::Kind>();
    v.visit::<mqs::Kind>();
    v.visit::<pmqs::Kind>();
    v.visit::<o1::Kind>();
    v.visit::<cfs::Kind>();
    v.visit::<eevdf::Kind>();
    v.visit::<fast::Kind>();
}

/// A walk over the registry ([`walk`]): `visit` runs once per policy kind.
pub trait KindVisitor {
    fn visit<K: PolicyKind>(&mut self);
}

/// What a policy needs to know of the machine it is built for.
#[derive(Clone, Copy, Debug)]
pub struct BuildEnv<'a> {
    pub topo: &'a Topology,
    /// Task-table capacity: task ids are `0..capacity`.
    pub capacity: usize,
    /// Timer tick rate (counters and quanta are in ticks).
    pub hz: u32,
}

/// A policy's options: an [`Options`] table (declared once: parsed from a spec's
/// `key=value` pairs, printed back canonically, listed by `schedlab list`). `()` is "no
/// options" (`fast`).
pub trait PolicyOptions: Options + fmt::Debug + Send + Sync {}
impl<T: Options + fmt::Debug + Send + Sync> PolicyOptions for T {}

/// A policy as the registry knows it: its name, its options and its constructor.
pub trait PolicyKind: 'static {
    /// Name in specs (`"pmqs"`).
    const NAME: &'static str;
    /// One line for `schedlab list` and `--help`.
    const SUMMARY: &'static str;
    /// The configuration shown where every policy runs once (`schedlab bench`,
    /// `schedlab validate`, help examples); [`PolicyKind::NAME`] for most.
    const EXAMPLE: &'static str = Self::NAME;
    /// Other names a spec may give the policy (parsed as [`PolicyKind::NAME`]; the
    /// canonical spec uses `NAME`). Each is to be removed, as its summary says.
    const ALIASES: &'static [&'static str] = &[];
    /// A scheduler the runtime implements natively (its own data structures, no
    /// [`Policy`] implementation, no simulator model): [`PolicyKind::build`] fails and
    /// the runtime uses its own code instead.
    const RUNTIME_NATIVE: bool = false;

    /// The parsed options.
    type Config: PolicyOptions;

    /// Construct the policy on platform `p` for the machine `env`. Fails when the
    /// options do not fit the machine (a PMQS pool size that does not divide the CPUs).
    fn build<P: Platform>(cfg: &Self::Config, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError>;
}

/// What the engines build a policy from: a parsed [`PolicySpec`] or a [`Configured`]
/// kind. Both end in [`PolicyKind::build`].
pub trait PolicySource {
    /// Canonical spec, as reports print it.
    fn canonical(&self) -> String;
    /// See [`PolicyKind::RUNTIME_NATIVE`].
    fn runtime_native(&self) -> bool;
    fn build<P: Platform>(&self, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError>;
    /// Task-structure cache colours of the kernel (`colours=N`, 1 = vanilla): a kernel
    /// option any policy carries; the platform applies it where it makes addresses.
    fn colours(&self) -> u32 {
        1
    }
}

/// Largest `colours=N`: 64 colours × 32-byte lines shift a task structure by at most
/// 2 KB inside its 8 KB block, leaving the kernel stack 6 KB below the top (the 2.4
/// task_struct is ~1.7 KB on i386; the stack needs ~4 KB).
pub const MAX_COLOURS: u32 = 64;

/// The options every policy takes, whatever its kind: the kernel's, which the platform
/// applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelOptions {
    /// Task-structure cache colours (1 = vanilla).
    pub colours: u32,
}

impl Default for KernelOptions {
    fn default() -> Self {
        KernelOptions { colours: 1 }
    }
}

impl Options for KernelOptions {
    const PARAMS: &'static [Param<Self>] = &[Param::int(
        "colours",
        1,
        MAX_COLOURS as i64,
        "task-structure cache colours of the kernel, a power of two (1: vanilla)",
        |o| Value::Int(o.colours as i64),
        |o, v| o.colours = v.int() as u32,
    )];
    fn check_across(&self) -> Result<(), String> {
        match self.colours.is_power_of_two() {
            true => Ok(()),
            false => Err(format!("colours={} must be a power of two", self.colours)),
        }
    }
}

/// A kind and its options, whether or not the kind is in the registry.
#[derive(Clone, Debug)]
pub struct Configured<K: PolicyKind>(pub K::Config);

impl<K: PolicyKind> PolicySource for Configured<K> {
    fn canonical(&self) -> String {
        options::canonical(K::NAME, &self.0)
    }
    fn runtime_native(&self) -> bool {
        K::RUNTIME_NATIVE
    }
    fn build<P: Platform>(&self, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError> {
        K::build(&self.0, p, env)
    }
}

/// A registry entry, for listings and help texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    pub summary: &'static str,
    /// `key=SYNTAX,...` (empty without options).
    pub options: String,
    /// Each option: syntax, range, default and doc.
    pub params: Vec<ParamHelp>,
    pub example: &'static str,
    pub runtime_native: bool,
    /// Other names specs accept for it ([`PolicyKind::ALIASES`]).
    pub aliases: &'static [&'static str],
}

/// The schedulers the real runtime offers, as `bench`, `validate` and the tests run
/// them: every registry entry in its example configuration, runtime-native ones (the
/// default, `fast`) first.
pub fn runtime_examples() -> Vec<&'static str> {
    let mut entries = entries();
    entries.sort_by_key(|e| !e.runtime_native);
    entries.into_iter().map(|e| e.example).collect()
}

/// Every registry entry, in registry order.
pub fn entries() -> Vec<Entry> {
    struct List(Vec<Entry>);
    impl KindVisitor for List {
        fn visit<K: PolicyKind>(&mut self) {
            self.0.push(Entry {
                name: K::NAME,
                summary: K::SUMMARY,
                options: options::syntax::<K::Config>(),
                params: options::help::<K::Config>(),
                example: K::EXAMPLE,
                runtime_native: K::RUNTIME_NATIVE,
                aliases: K::ALIASES,
            });
        }
    }
    let mut l = List(Vec::new());
    walk(&mut l);
    l.0
}

/// Every policy name, in registry order.
pub fn names() -> Vec<&'static str> {
    entries().into_iter().map(|e| e.name).collect()
}

/// A policy selection parsed from `name[:key=value,...]` against the registry.
/// Two specs are equal when their canonical strings are.
#[derive(Clone)]
pub struct PolicySpec {
    name: &'static str,
    canonical: String,
    runtime_native: bool,
    /// Task-structure cache colours (`colours=N`, 1 = vanilla).
    colours: u32,
    /// The kind's `Config`.
    config: Arc<dyn Any + Send + Sync>,
}

impl PolicySpec {
    pub fn parse(s: &str) -> Result<PolicySpec, SpecError> {
        struct Parse {
            spec: Spec,
            out: Option<Result<PolicySpec, SpecError>>,
        }
        impl KindVisitor for Parse {
            fn visit<K: PolicyKind>(&mut self) {
                if self.out.is_none() && (self.spec.name == K::NAME || K::ALIASES.contains(&self.spec.name.as_str())) {
                    self.out = Some(options::parse::<K::Config>(&mut self.spec).and_then(|cfg| {
                        self.spec.finish(&options::keys::<K::Config>())?;
                        Ok(PolicySpec::of::<K>(cfg))
                    }));
                }
            }
        }
        let mut spec = Spec::parse("policy", s)?;
        // The kernel options, consumed before the kind parses its own.
        let KernelOptions { colours } = options::parse(&mut spec)?;
        let mut v = Parse { spec, out: None };
        walk(&mut v);
        v.out
            .unwrap_or_else(|| {
                Err(SpecError(format!("unknown policy '{}' (known: {})", v.spec.name, names().join(", "))))
            })
            .map(|p| p.with_colours(colours))
    }

    /// This spec with `colours` task-structure colours (canonical gains `colours=N`
    /// when N != 1).
    pub fn with_colours(mut self, colours: u32) -> PolicySpec {
        let base = match self.canonical.find(",colours=").or_else(|| self.canonical.find(":colours=")) {
            Some(i) => self.canonical[..i].to_string(),
            None => self.canonical.clone(),
        };
        self.colours = colours;
        self.canonical = if colours == 1 {
            base
        } else if base.contains(':') {
            format!("{base},colours={colours}")
        } else {
            format!("{base}:colours={colours}")
        };
        self
    }
    /// Task-structure cache colours (1 = vanilla).
    pub fn colours(&self) -> u32 {
        self.colours
    }

    /// The spec of kind `K` with options `cfg`.
    pub fn of<K: PolicyKind>(cfg: K::Config) -> PolicySpec {
        PolicySpec {
            name: K::NAME,
            canonical: options::canonical(K::NAME, &cfg),
            runtime_native: K::RUNTIME_NATIVE,
            colours: 1,
            config: Arc::new(cfg),
        }
    }

    /// The policy's name (`"pmqs"`).
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// Canonical spec string (round-trips through [`PolicySpec::parse`]).
    pub fn canonical(&self) -> String {
        self.canonical.clone()
    }
    /// The options, if this is a spec of kind `K`.
    pub fn config<K: PolicyKind>(&self) -> Option<&K::Config> {
        if self.name != K::NAME {
            return None;
        }
        self.config.downcast_ref::<K::Config>()
    }
}

impl PolicySource for PolicySpec {
    fn canonical(&self) -> String {
        self.canonical.clone()
    }
    fn runtime_native(&self) -> bool {
        self.runtime_native
    }
    fn colours(&self) -> u32 {
        self.colours
    }
    fn build<P: Platform>(&self, p: &P, env: &BuildEnv) -> Result<Box<dyn Policy<P>>, SpecError> {
        struct Build<'a, P: Platform> {
            spec: &'a PolicySpec,
            p: &'a P,
            env: &'a BuildEnv<'a>,
            out: Option<Result<Box<dyn Policy<P>>, SpecError>>,
        }
        impl<P: Platform> KindVisitor for Build<'_, P> {
            fn visit<K: PolicyKind>(&mut self) {
                if let (None, Some(cfg)) = (&self.out, self.spec.config::<K>()) {
                    self.out = Some(K::build(cfg, self.p, self.env));
                }
            }
        }
        let mut v = Build { spec: self, p, env, out: None };
        walk(&mut v);
        v.out.unwrap_or_else(|| Err(SpecError(format!("policy '{}' is not in the registry", self.name))))
    }
}

impl PartialEq for PolicySpec {
    fn eq(&self, other: &Self) -> bool {
        self.canonical == other.canonical
    }
}
impl Eq for PolicySpec {}

impl fmt::Debug for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PolicySpec({})", self.canonical)
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical)
    }
}

impl std::str::FromStr for PolicySpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PolicySpec::parse(s)
    }
}

#[cfg(test)]
mod colour_tests {
    use super::*;

    #[test]
    fn colours_parse_round_trip_and_reject() {
        for (s, c) in [("dss:colours=32", "dss:colours=32"), ("mqs:colours=1", "mqs"), ("dss", "dss")] {
            let p = PolicySpec::parse(s).unwrap();
            assert_eq!(p.canonical(), c);
            assert_eq!(PolicySpec::parse(&p.canonical()).unwrap(), p);
        }
        let p = PolicySpec::parse("pmqs:pool=4,lb=lbp,colours=32").unwrap();
        assert_eq!(p.colours(), 32);
        assert!(p.canonical().ends_with(",colours=32"), "{}", p.canonical());
        assert_eq!(PolicySpec::parse(&p.canonical()).unwrap(), p);
        for bad in ["dss:colours=3", "dss:colours=0", "dss:colours=128", "dss:colours=x"] {
            let e = PolicySpec::parse(bad).unwrap_err().0;
            assert!(e.contains("colours"), "{bad}: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_errors_name_the_part() {
        for s in [
            "dss",
            "mqs",
            "dss:preempt_threshold=0",
            "mqs:preempt_threshold=0",
            "fast",
            "pmqs:lb=off,period=45",
            "pmqs:pool=2,lb=lbc,period=45,preempt_threshold=0",
            "pmqs:pool=4,lb=lbp,period=10",
            "pmqs:pool=2,lb=lbc,period=45,reading=threshold",
            "pmqs:pool=1,lb=ip,period=7",
            "o1",
            "o1:starvation_limit=10s",
            "o1:min_timeslice=20ms,max_timeslice=200,cache_decay=3,expired_prio_guard=on,scale=off",
            "o1:max_sleep_avg=1500ms,prio_bonus_ratio=70,interactive_delta=3,child_penalty=50",
            "cfs",
            "cfs:latency=20ms",
            "cfs:latency=4ms,min_granularity=500us,wakeup_granularity=0,imbalance_pct=110",
            "cfs:min_granularity=1500ns,wakeup_granularity=2s",
            "cfs:yield=tail",
            "eevdf",
            "eevdf:base_slice=700us",
            "eevdf:scaling=none,place_lag=off,place_deadline_initial=off,run_to_parity=off,delay_dequeue=off",
            "eevdf:base_slice=3ms,scaling=linear,imbalance_pct=110",
        ] {
            let p = PolicySpec::parse(s).unwrap();
            assert_eq!(p.canonical(), s);
            assert_eq!(PolicySpec::parse(&p.canonical()).unwrap(), p);
        }
        let p = PolicySpec::parse("pmqs:pool=4,lb=lbp,period=45").unwrap();
        let cfg = p.config::<pmqs::Kind>().unwrap();
        assert_eq!(
            *cfg,
            pmqs::PmqsConfig {
                pool: Some(4),
                lb: pmqs::Balancer::Lbp,
                period: 45,
                reading: pmqs::LbReading::Period,
                scope: pmqs::LbScope::Pools,
                locks: pmqs::LbLocks::Pair,
                sched: Default::default()
            }
        );
        assert!(p.config::<mqs::Kind>().is_none());
        assert_eq!(PolicySpec::parse("pmqs").unwrap().canonical(), "pmqs:lb=off,period=45");
        assert!(PolicySpec::parse("pmqs:lb=xx").unwrap_err().0.contains("lb='xx'"));
        assert!(PolicySpec::parse("pmqs:pool=0").is_err());
        assert!(PolicySpec::parse("pmqs:reading=foo").is_err());
        assert!(PolicySpec::parse("pmqs:pol=4").unwrap_err().0.contains("unknown key 'pol'"));
        assert!(PolicySpec::parse("mqs:pool=4").is_err());
        // The 2.4 family's shared option: the default (2.4.7's 1) is not printed.
        assert_eq!(PolicySpec::parse("dss:preempt_threshold=1").unwrap().canonical(), "dss");
        assert_eq!(PolicySpec::parse("pmqs:preempt_threshold=1").unwrap().canonical(), "pmqs:lb=off,period=45");
        assert!(PolicySpec::parse("mqs:preempt_threshold=-1").unwrap_err().0.contains("preempt_threshold=-1"));
        assert!(PolicySpec::parse("o1:preempt_threshold=0").unwrap_err().0.contains("unknown key"));
        assert_eq!(PolicySpec::parse("o1:starvation_limit=2s,scale=on").unwrap().canonical(), "o1");
        assert_eq!(PolicySpec::parse("o1:starvation_limit=2000ms").unwrap().canonical(), "o1");
        for (bad, named) in [
            ("o1:starvation_limit=2h", "starvation_limit='2h'"),
            ("o1:min_timeslice=0", "min_timeslice=0"),
            ("o1:scale=maybe", "scale='maybe'"),
            ("o1:prio_bonus_ratio=101", "prio_bonus_ratio=101"),
            ("o1:max_sleep_avg=99999999999s", "max_sleep_avg"),
            ("o1:starvaton_limit=1", "unknown key 'starvaton_limit'"),
        ] {
            let e = PolicySpec::parse(bad).unwrap_err().0;
            assert!(e.contains(named), "{bad}: {e}");
        }
        assert_eq!(
            PolicySpec::parse(
                "cfs:latency=6ms,min_granularity=750us,wakeup_granularity=1ms,scaling=log,imbalance_pct=117,yield=skip"
            )
            .unwrap()
            .canonical(),
            "cfs"
        );
        assert_eq!(PolicySpec::parse("cfs:latency=6000000").unwrap().canonical(), "cfs");
        assert_eq!(PolicySpec::parse("cfs:latency=6000us").unwrap().canonical(), "cfs");
        let cfg = *PolicySpec::parse("cfs:latency=12ms,wakeup_granularity=0").unwrap().config::<cfs::Kind>().unwrap();
        assert_eq!(
            cfg,
            cfs::CfsConfig {
                latency: 12_000_000,
                min_granularity: 750_000,
                wakeup_granularity: 0,
                scaling: crate::policies::linux_balance::Scaling::Log,
                imbalance_pct: 117,
                yield_tail: false
            }
        );
        for (bad, named) in [
            ("cfs:latency=0", "latency=0"),
            ("cfs:latency=6min", "latency='6min'"),
            ("cfs:latency=11s", "latency=11s"),
            ("cfs:min_granularity=0ms", "min_granularity=0ms"),
            ("cfs:imbalance_pct=99", "imbalance_pct=99"),
            ("cfs:wakeup_granularity=-1ms", "wakeup_granularity='-1ms'"),
            ("cfs:latncy=1ms", "unknown key 'latncy'"),
            ("cfs:yield=maybe", "yield='maybe'"),
            ("cfs:scaling=cubic", "scaling='cubic'"),
        ] {
            let e = PolicySpec::parse(bad).unwrap_err().0;
            assert!(e.contains(named), "{bad}: {e}");
        }
        assert_eq!(
            PolicySpec::parse("eevdf:base_slice=750us,scaling=log,place_lag=on,delay_dequeue=on").unwrap().canonical(),
            "eevdf"
        );
        for (bad, named) in [
            ("eevdf:base_slice=0", "base_slice=0"),
            ("eevdf:base_slice=1h", "base_slice='1h'"),
            ("eevdf:scaling=cubic", "scaling='cubic'"),
            ("eevdf:run_to_parity=yes", "run_to_parity='yes'"),
            ("eevdf:latency=6ms", "unknown key 'latency'"),
        ] {
            let e = PolicySpec::parse(bad).unwrap_err().0;
            assert!(e.contains(named) && e.contains("eevdf"), "{bad}: {e}");
        }
        let e = PolicySpec::parse("bfs").unwrap_err().0;
        assert!(e.contains("unknown policy 'bfs'") && e.contains("dss, mqs, pmqs, o1, cfs, eevdf, fast"), "{e}");
        // `fair` is an alias of `cfs`: it parses to the same spec, printed as `cfs`.
        for (alias, canonical) in [
            ("fair", "cfs"),
            ("fair:yield=tail", "cfs:yield=tail"),
            ("fair:latency=6ms,wakeup_granularity=0", "cfs:wakeup_granularity=0"),
        ] {
            let p = PolicySpec::parse(alias).unwrap();
            assert_eq!((p.name(), p.canonical().as_str()), ("cfs", canonical));
            assert_eq!(p, PolicySpec::parse(canonical).unwrap());
            assert!(p.config::<cfs::Kind>().is_some());
        }
        assert!(PolicySpec::parse("fair:latncy=1ms").unwrap_err().0.contains("unknown key 'latncy'"));
    }

    #[test]
    fn the_registry_lists_every_file_once() {
        for e in entries() {
            let spec = PolicySpec::parse(e.example).expect(e.example);
            assert_eq!(spec.name(), e.name, "{e:?}");
            assert_eq!(spec.canonical(), e.example, "examples are canonical");
        }
        assert_eq!(names(), ["dss", "mqs", "pmqs", "o1", "cfs", "eevdf", "fast"]);
        let aliased: Vec<_> =
            entries().into_iter().filter(|e| !e.aliases.is_empty()).map(|e| (e.name, e.aliases)).collect();
        assert_eq!(aliased, [("cfs", &["fair"][..])]);
        let natives: Vec<_> = entries().into_iter().filter(|e| e.runtime_native).map(|e| e.name).collect();
        assert_eq!(natives, ["fast"]);
        assert!(PolicySpec::parse("fast").unwrap().runtime_native());
        assert!(!PolicySpec::parse("dss").unwrap().runtime_native());
    }
}
