//! The one option mechanism of policies and workloads: each option is declared once,
//! as a row of a [`Param`] table ([`Options::PARAMS`]), and everything else comes from
//! that table: parsing with range checks ([`parse`]), the canonical spec ([`canonical`]),
//! the range check of options built in code ([`check`]) and the help texts of
//! `schedlab list` and `--help` ([`help`]).
//!
//! ```text
//!   "cfs:latency=4ms"  --Spec::parse-->  Spec  --options::parse::<CfsConfig>-->  CfsConfig
//!   CfsConfig  --options::canonical-->  "cfs:latency=4ms"       (the same bytes back)
//!   CfsConfig::PARAMS  --options::help-->  "latency=TIME  ...; 1ns..=10s; default: 6ms"
//! ```
//!
//! Times have one syntax and one parser ([`parse_time`]): `Nns`, `Nus`, `Nms`, `Ns`,
//! and a bare number, which is nanoseconds, or ticks where the option counts ticks
//! (o1's).

use crate::spec::{Spec, SpecError};
use std::fmt;

/// A time option's value: ticks of the machine's timer, or nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Time {
    Ticks(u64),
    Ns(u64),
}

impl Time {
    pub const fn ms(ms: u64) -> Time {
        Time::Ns(ms * 1_000_000)
    }

    /// In ticks at `hz`, rounded down as the kernel's `x * HZ / 1000` is.
    pub fn ticks(self, hz: u32) -> u64 {
        match self {
            Time::Ticks(t) => t,
            Time::Ns(ns) => (ns as u128 * hz as u128 / 1_000_000_000) as u64,
        }
    }
}

/// `ns` in the largest unit that shows it exactly (`2s`, `750us`, `1500ns`; 0 is `0`).
pub fn show_ns(ns: u64) -> String {
    match ns {
        0 => "0".to_string(),
        _ if ns.is_multiple_of(1_000_000_000) => format!("{}s", ns / 1_000_000_000),
        _ if ns.is_multiple_of(1_000_000) => format!("{}ms", ns / 1_000_000),
        _ if ns.is_multiple_of(1_000) => format!("{}us", ns / 1_000),
        _ => format!("{ns}ns"),
    }
}

/// Why a time did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeError {
    /// Not a number with a unit.
    Malformed,
    /// A number, but too large.
    OutOfRange,
}

/// Why an option's value was refused: the key, the value as given, and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}{} {why}", match why { Why::OutOfRange(_) => format!("={raw}"), _ => format!("='{raw}'") })]
pub struct OptionError {
    pub key: &'static str,
    pub raw: String,
    pub why: Why,
}

/// What was wrong with an option's value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Why {
    /// A number or time outside the accepted range (shown).
    #[error("is out of range {0}")]
    OutOfRange(String),
    /// Not a number.
    #[error("is not a valid number")]
    NotNumber,
    /// Not a time (the syntax accepted is shown).
    #[error("is not a time ({0})")]
    NotTime(&'static str),
    /// None of the option's words (they are shown).
    #[error("is not {0}")]
    NotChoice(String),
}

/// The one time parser: `Nns`, `Nus`, `Nms`, `Ns`, or a bare number, which is ticks when
/// `bare_ticks` and nanoseconds otherwise.
pub fn parse_time(s: &str, bare_ticks: bool) -> Result<Time, TimeError> {
    let s = s.trim();
    let (digits, mult) = if let Some(d) = s.strip_suffix("ns") {
        (d, 1)
    } else if let Some(d) = s.strip_suffix("us") {
        (d, 1_000)
    } else if let Some(d) = s.strip_suffix("ms") {
        (d, 1_000_000)
    } else if let Some(d) = s.strip_suffix('s') {
        (d, 1_000_000_000)
    } else {
        (s, 0)
    };
    let digits = digits.trim();
    // A time has no sign: `-1ms` is malformed, not out of range.
    let v: u64 = digits.parse().map_err(|_| match digits.starts_with('-') {
        true => TimeError::Malformed,
        false => out_of_range_or_malformed(digits),
    })?;
    match mult {
        0 if bare_ticks => Ok(Time::Ticks(v)),
        0 => Ok(Time::Ns(v)),
        m => v.checked_mul(m).map(Time::Ns).ok_or(TimeError::OutOfRange),
    }
}

/// A well-formed integer that does not fit is out of range, not malformed.
fn out_of_range_or_malformed(s: &str) -> TimeError {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        TimeError::OutOfRange
    } else {
        TimeError::Malformed
    }
}

/// `a or b`, `a, b or c`.
fn either(words: &[&str]) -> String {
    match words.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// An option's value, as the table's accessors exchange it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Time(Time),
    /// A choice's (or a switch's `on`/`off`) canonical word.
    Word(&'static str),
    /// An option with no value: its absence has a meaning ([`Param::unset`]).
    Unset,
}

impl Value {
    pub fn int(self) -> i64 {
        match self {
            Value::Int(v) => v,
            _ => 0,
        }
    }
    pub fn time(self) -> Time {
        match self {
            Value::Time(t) => t,
            _ => Time::Ns(0),
        }
    }
    /// A time option's nanoseconds (its ticks, for a number of ticks).
    pub fn ns(self) -> u64 {
        match self {
            Value::Time(Time::Ns(n) | Time::Ticks(n)) => n,
            _ => 0,
        }
    }
    /// The value of a time of `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> Value {
        Value::Time(Time::Ns(ns))
    }
    pub fn word(self) -> &'static str {
        match self {
            Value::Word(w) => w,
            _ => "",
        }
    }
    /// A switch's value.
    pub fn on(self) -> bool {
        self == Value::Word("on")
    }
    /// The value of switch `b`.
    pub fn switch(b: bool) -> Value {
        Value::Word(if b { "on" } else { "off" })
    }
}

/// How a time option prints in a canonical spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeForm {
    /// The largest exact unit (`6ms`); a bare number would mean ticks when `ticks`, so
    /// then zero nanoseconds is `0ms`.
    Unit,
    /// A bare number of ns (the `*_ns` options of workloads).
    BareNs,
}

/// What an option holds.
#[derive(Clone, Copy, Debug)]
pub enum Type {
    /// An integer in `min..=max`, in `unit` (`""`: a count).
    Int { min: i64, max: i64, unit: &'static str },
    /// A time in `min_ns..=max_ns`; with `max_ticks > 0` a bare number is ticks, at
    /// most `max_ticks` (and at least 1 when `min_ns > 0`).
    Time { min_ns: u64, max_ns: u64, max_ticks: u64, form: TimeForm },
    /// One of `words`; `aliases` are other spellings of some.
    Choice { words: &'static [&'static str], aliases: &'static [(&'static str, &'static str)] },
}

/// `on|off`.
pub const ON_OFF: &[&str] = &["on", "off"];

/// [`Param::int`] over the integer field of the same name as the key: the table row of
/// a plain count, with its accessors written once here.
#[macro_export]
macro_rules! int_param {
    ($field:ident, $min:expr, $max:expr, $doc:expr) => {
        $crate::options::Param::int(
            stringify!($field),
            $min,
            $max,
            $doc,
            |p: &Self| $crate::options::Value::Int(p.$field as i64),
            |p: &mut Self, v| p.$field = v.int() as _,
        )
    };
}

/// [`Param::time`] over the nanosecond field of the same name as the key.
#[macro_export]
macro_rules! time_param {
    ($field:ident, $min:expr, $max:expr, $doc:expr) => {
        $crate::options::Param::time(
            stringify!($field),
            $min,
            $max,
            $doc,
            |p: &Self| $crate::options::Value::from_ns(p.$field),
            |p: &mut Self, v| p.$field = v.ns(),
        )
    };
}

/// One option: its name, type, documentation and how it is read from and written to
/// the options struct `T`.
pub struct Param<T> {
    pub name: &'static str,
    pub ty: Type,
    /// One line for the help texts.
    pub doc: &'static str,
    /// Printed in every canonical spec, default or not (a workload's size).
    pub always: bool,
    /// Its value sets other options' defaults ([`Options::defaults_given`]: o1's era);
    /// compared with `T::default()` in a canonical spec.
    pub sets_defaults: bool,
    /// What the option's absence means, when its default is [`Value::Unset`].
    pub unset: &'static str,
    pub get: fn(&T) -> Value,
    pub set: fn(&mut T, Value),
}

impl<T> Param<T> {
    const fn new(
        name: &'static str,
        ty: Type,
        doc: &'static str,
        get: fn(&T) -> Value,
        set: fn(&mut T, Value),
    ) -> Self {
        Param { name, ty, doc, always: false, sets_defaults: false, unset: "", get, set }
    }
    /// An integer count in `min..=max`.
    pub const fn int(
        name: &'static str,
        min: i64,
        max: i64,
        doc: &'static str,
        get: fn(&T) -> Value,
        set: fn(&mut T, Value),
    ) -> Self {
        Self::new(name, Type::Int { min, max, unit: "" }, doc, get, set)
    }
    /// A time in `min_ns..=max_ns`, printed in units.
    pub const fn time(
        name: &'static str,
        min_ns: u64,
        max_ns: u64,
        doc: &'static str,
        get: fn(&T) -> Value,
        set: fn(&mut T, Value),
    ) -> Self {
        Self::new(name, Type::Time { min_ns, max_ns, max_ticks: 0, form: TimeForm::Unit }, doc, get, set)
    }
    /// One of `words`.
    pub const fn choice(
        name: &'static str,
        words: &'static [&'static str],
        doc: &'static str,
        get: fn(&T) -> Value,
        set: fn(&mut T, Value),
    ) -> Self {
        Self::new(name, Type::Choice { words, aliases: &[] }, doc, get, set)
    }
    /// `on` or `off`.
    pub const fn switch(name: &'static str, doc: &'static str, get: fn(&T) -> Value, set: fn(&mut T, Value)) -> Self {
        Self::choice(name, ON_OFF, doc, get, set)
    }

    /// An integer option's unit (`cycles`, `bytes`, `%`).
    pub const fn unit(mut self, unit: &'static str) -> Self {
        if let Type::Int { min, max, .. } = self.ty {
            self.ty = Type::Int { min, max, unit };
        }
        self
    }
    /// A time option whose bare numbers are ticks, at most `max_ticks`.
    pub const fn or_ticks(mut self, max_ticks: u64) -> Self {
        if let Type::Time { min_ns, max_ns, form, .. } = self.ty {
            self.ty = Type::Time { min_ns, max_ns, max_ticks, form };
        }
        self
    }
    /// A time option printed as a bare number of ns.
    pub const fn bare_ns(mut self) -> Self {
        if let Type::Time { min_ns, max_ns, max_ticks, .. } = self.ty {
            self.ty = Type::Time { min_ns, max_ns, max_ticks, form: TimeForm::BareNs };
        }
        self
    }
    /// Other spellings of a choice's words.
    pub const fn aliases(mut self, aliases: &'static [(&'static str, &'static str)]) -> Self {
        if let Type::Choice { words, .. } = self.ty {
            self.ty = Type::Choice { words, aliases };
        }
        self
    }
    pub const fn always(mut self) -> Self {
        self.always = true;
        self
    }
    pub const fn sets_defaults(mut self) -> Self {
        self.sets_defaults = true;
        self
    }
    /// The option may be absent ([`Value::Unset`]), meaning `what`.
    pub const fn unset(mut self, what: &'static str) -> Self {
        self.unset = what;
        self
    }

    /// Read `raw` (as given in a spec) as this option's value; the error names key and value.
    pub fn read(&self, raw: &str) -> Result<Value, OptionError> {
        let key = self.name;
        let bad = |raw: &str, why: Why| OptionError { key, raw: raw.to_string(), why };
        match self.ty {
            Type::Int { min, max, .. } => {
                let range = || Why::OutOfRange(format!("{min}..={max}"));
                let v: i64 = raw.parse().map_err(|_| match out_of_range_or_malformed(raw) {
                    TimeError::OutOfRange => bad(raw, range()),
                    TimeError::Malformed => bad(raw, Why::NotNumber),
                })?;
                match (min..=max).contains(&v) {
                    true => Ok(Value::Int(v)),
                    false => Err(bad(&v.to_string(), range())),
                }
            }
            Type::Time { max_ticks, .. } => {
                let raw = raw.to_ascii_lowercase();
                let t = parse_time(&raw, max_ticks > 0).map_err(|e| match e {
                    TimeError::Malformed => bad(&raw, Why::NotTime(self.time_syntax())),
                    TimeError::OutOfRange => bad(&raw, Why::OutOfRange(self.range())),
                })?;
                match self.in_range(Value::Time(t)) {
                    true => Ok(Value::Time(t)),
                    false => Err(bad(&raw, Why::OutOfRange(self.range()))),
                }
            }
            Type::Choice { words, aliases } => {
                let raw = raw.to_ascii_lowercase();
                let word = aliases.iter().find(|(a, _)| *a == raw).map_or(raw.as_str(), |(_, w)| w);
                match words.iter().find(|w| **w == word) {
                    Some(w) => Ok(Value::Word(w)),
                    None => Err(bad(&raw, Why::NotChoice(either(words)))),
                }
            }
        }
    }

    fn in_range(&self, v: Value) -> bool {
        match (self.ty, v) {
            (Type::Int { min, max, .. }, Value::Int(x)) => (min..=max).contains(&x),
            (Type::Time { min_ns, max_ns, .. }, Value::Time(Time::Ns(ns))) => (min_ns..=max_ns).contains(&ns),
            (Type::Time { min_ns, max_ticks, .. }, Value::Time(Time::Ticks(t))) => {
                t <= max_ticks && (min_ns == 0 || t > 0)
            }
            (Type::Choice { words, .. }, Value::Word(w)) => words.contains(&w),
            (_, Value::Unset) => true,
            _ => false,
        }
    }

    /// `v` as a canonical spec prints it.
    pub fn show(&self, v: Value) -> String {
        match (self.ty, v) {
            (_, Value::Int(x)) => x.to_string(),
            (_, Value::Time(Time::Ticks(t))) => t.to_string(),
            (Type::Time { form: TimeForm::BareNs, .. }, Value::Time(Time::Ns(ns))) => ns.to_string(),
            (Type::Time { max_ticks, .. }, Value::Time(Time::Ns(0))) if max_ticks > 0 => "0ms".to_string(),
            (_, Value::Time(Time::Ns(ns))) => show_ns(ns),
            (_, Value::Word(w)) => w.to_string(),
            (_, Value::Unset) => self.unset.to_string(),
        }
    }

    /// The accepted values, for messages and help (`1..=64`, `1ns..=10s`, `on|off`).
    pub fn range(&self) -> String {
        match self.ty {
            Type::Int { min, max, unit: "" } => format!("{min}..={max}"),
            Type::Int { min, max, unit } => format!("{min}..={max} {unit}"),
            Type::Time { min_ns, max_ns, max_ticks: 0, .. } => format!("{}..={}", show_ns(min_ns), show_ns(max_ns)),
            Type::Time { min_ns, max_ns, max_ticks, .. } => {
                format!("{}..={max_ticks} ticks or {}..={}", (min_ns > 0) as u8, show_ns(min_ns), show_ns(max_ns))
            }
            Type::Choice { words, .. } => words.join("|"),
        }
    }

    fn time_syntax(&self) -> &'static str {
        match self.ty {
            Type::Time { max_ticks: 0, .. } => "a number with ns, us, ms or s; a bare number is ns",
            _ => "ticks, or a number with ns, us, ms or s",
        }
    }

    /// The value's syntax in help texts: `N`, `TIME`, `off|ip|lbp|lbc`.
    pub fn syntax(&self) -> String {
        match self.ty {
            Type::Int { .. } => "N".to_string(),
            Type::Time { max_ticks: 0, .. } => "TIME".to_string(),
            Type::Time { .. } => "TICKS|TIME".to_string(),
            Type::Choice { words, .. } => words.join("|"),
        }
    }
}

/// An options struct: its table, and how defaults depend on other options.
pub trait Options: Clone + Default + 'static {
    /// Every option, in canonical order.
    const PARAMS: &'static [Param<Self>];

    /// The defaults once the options that set defaults ([`Param::sets_defaults`]) are as
    /// in `self` (o1: the era's constants); `Self::default()` for most.
    fn defaults_given(&self) -> Self {
        Self::default()
    }
    /// Named sets of defaults, shown where an option's default depends on them
    /// (`("j7", O1Config::era(J7))`, ...); none for most.
    fn default_sets() -> Vec<(&'static str, Self)> {
        Vec::new()
    }
    /// Checks across options, once each is in its range (`unit_min ≤ unit_max`).
    fn check_across(&self) -> Result<(), String> {
        Ok(())
    }
}

/// No options (`fast`).
impl Options for () {
    const PARAMS: &'static [Param<()>] = &[];
}

/// The keys of `T`, in canonical order.
pub fn keys<T: Options>() -> Vec<&'static str> {
    T::PARAMS.iter().map(|p| p.name).collect()
}

/// Read `T`'s options from `spec`, consuming their keys (the caller rejects the rest
/// with [`Spec::finish`]). Absent options take their defaults, given those that set
/// defaults.
pub fn parse<T: Options>(spec: &mut Spec) -> Result<T, SpecError> {
    let mut given = Vec::new();
    for p in T::PARAMS {
        if let Some(raw) = spec.take(p.name) {
            given.push((p, p.read(&raw).map_err(|e| spec.error(&e.to_string()))?));
        }
    }
    let mut v = T::default();
    for (p, x) in &given {
        (p.set)(&mut v, *x);
    }
    let mut out = v.defaults_given();
    for (p, x) in &given {
        (p.set)(&mut out, *x);
    }
    out.check_across().map_err(|m| spec.error(&m))?;
    Ok(out)
}

/// The canonical spec of `name` with options `v`: the options printed always, and those
/// that differ from their defaults, in table order. It parses back to `v`.
pub fn canonical<T: Options>(name: &str, v: &T) -> String {
    let (base, d) = (T::default(), v.defaults_given());
    let parts: Vec<String> = T::PARAMS
        .iter()
        .filter_map(|p| {
            let x = (p.get)(v);
            let dx = (p.get)(if p.sets_defaults { &base } else { &d });
            (p.always || x != dx).then(|| format!("{}={}", p.name, p.show(x)))
        })
        .collect();
    if parts.is_empty() {
        name.to_string()
    } else {
        format!("{name}:{}", parts.join(","))
    }
}

/// Check options built in code rather than parsed: each in its range, then across.
/// `kind` and `name` as in a spec's messages (`workload 'chat'`).
pub fn check<T: Options>(kind: &str, name: &str, v: &T) -> Result<(), SpecError> {
    for p in T::PARAMS {
        let x = (p.get)(v);
        if !p.in_range(x) {
            return Err(SpecError(format!("{kind} '{name}': {}={} is out of range {}", p.name, p.show(x), p.range())));
        }
    }
    v.check_across().map_err(|m| SpecError(format!("{kind} '{name}': {m}")))
}

/// One option as the help texts show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHelp {
    pub name: &'static str,
    /// `N`, `TIME`, `off|ip|lbp|lbc`.
    pub syntax: String,
    /// The accepted values (`1..=64`, `1ns..=10s`; empty for a choice, whose syntax says it).
    pub range: String,
    /// The real default: a value, what absence means, or the value per set of defaults.
    pub default: String,
    pub doc: &'static str,
}

impl fmt::Display for ParamHelp {
    /// `key=SYNTAX  doc; range; default: d`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}  {}", self.name, self.syntax, self.doc)?;
        if !self.range.is_empty() {
            write!(f, "; {}", self.range)?;
        }
        write!(f, "; default: {}", self.default)
    }
}

/// `key=SYNTAX,...` of `T`, for one-line help (`--policy`).
pub fn syntax<T: Options>() -> String {
    T::PARAMS.iter().map(|p| format!("{}={}", p.name, p.syntax())).collect::<Vec<_>>().join(",")
}

/// Every option of `T` for the help texts.
pub fn help<T: Options>() -> Vec<ParamHelp> {
    let d = T::default();
    let sets = T::default_sets();
    // The option whose value names the sets (o1's `era`).
    let by = T::PARAMS.iter().find(|p| p.sets_defaults).map_or("", |p| p.name);
    T::PARAMS
        .iter()
        .map(|p| {
            let show = |v: &T| match (p.get)(v) {
                // In units whatever the canonical form, and ticks said.
                Value::Time(Time::Ns(ns)) => show_ns(ns),
                Value::Time(Time::Ticks(t)) => format!("{t} ticks"),
                x => p.show(x),
            };
            let per_set: Vec<String> = sets.iter().map(|(n, v)| format!("{n}: {}", show(v))).collect();
            let default = if !p.sets_defaults && sets.iter().any(|(_, v)| show(v) != show(&d)) {
                format!("per {by} ({})", per_set.join(", "))
            } else {
                show(&d)
            };
            ParamHelp {
                name: p.name,
                syntax: p.syntax(),
                range: if matches!(p.ty, Type::Choice { .. }) { String::new() } else { p.range() },
                default,
                doc: p.doc,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct T {
        n: u32,
        t: Time,
        w: &'static str,
        pool: Option<u32>,
    }
    impl Default for T {
        fn default() -> T {
            T { n: 3, t: Time::ms(2), w: "a", pool: None }
        }
    }
    impl Options for T {
        const PARAMS: &'static [Param<T>] = &[
            Param::int("n", 1, 10, "a count", |v: &T| Value::Int(v.n as i64), |v, x| v.n = x.int() as u32).always(),
            Param::time("t", 0, 10_000_000_000, "a time", |v: &T| Value::Time(v.t), |v, x| v.t = x.time())
                .or_ticks(100),
            Param::choice("w", &["a", "b"], "a word", |v: &T| Value::Word(v.w), |v, x| v.w = x.word())
                .aliases(&[("bee", "b")]),
            Param::int(
                "pool",
                1,
                8,
                "a size",
                |v: &T| v.pool.map_or(Value::Unset, |n| Value::Int(n as i64)),
                |v, x| {
                    v.pool = match x {
                        Value::Int(n) => Some(n as u32),
                        _ => None,
                    }
                },
            )
            .unset("everything"),
        ];
    }

    fn p(s: &str) -> Result<T, SpecError> {
        let mut spec = Spec::parse("policy", s)?;
        let v = parse::<T>(&mut spec)?;
        spec.finish(&keys::<T>())?;
        Ok(v)
    }

    #[test]
    fn one_time_parser() {
        for (s, ticks, t) in [
            ("6ms", false, Time::Ns(6_000_000)),
            ("750us", false, Time::Ns(750_000)),
            ("1500ns", false, Time::Ns(1500)),
            ("2s", true, Time::Ns(2_000_000_000)),
            ("15", false, Time::Ns(15)),
            ("15", true, Time::Ticks(15)),
        ] {
            assert_eq!(parse_time(s, ticks), Ok(t), "{s}");
        }
        assert_eq!(parse_time("6min", false), Err(TimeError::Malformed));
        assert_eq!(parse_time("-1ms", false), Err(TimeError::Malformed));
        assert_eq!(parse_time("99999999999999s", false), Err(TimeError::OutOfRange));
        assert_eq!(Time::ms(1500).ticks(100), 150);
    }

    #[test]
    fn parse_canonical_and_help_come_from_the_table() {
        let v = p("x:t=3ms,w=bee,pool=4").unwrap();
        assert_eq!(v, T { n: 3, t: Time::ms(3), w: "b", pool: Some(4) });
        assert_eq!(canonical("x", &v), "x:n=3,t=3ms,w=b,pool=4");
        assert_eq!(p(&canonical("x", &v)).unwrap(), v);
        assert_eq!(canonical("x", &p("x:t=0ms").unwrap()), "x:n=3,t=0ms");
        assert_eq!(canonical("x", &p("x:t=0").unwrap()), "x:n=3,t=0");
        for (bad, msg) in [
            ("x:n=0", "n=0 is out of range 1..=10"),
            ("x:n=y", "n='y' is not a valid number"),
            ("x:t=1h", "t='1h' is not a time"),
            ("x:t=11s", "t=11s is out of range"),
            ("x:t=101", "t=101 is out of range 0..=100 ticks"),
            ("x:w=c", "w='c' is not a or b"),
            ("x:pool=0", "pool=0 is out of range 1..=8"),
            ("x:m=1", "unknown key 'm' (accepted: n, t, w, pool)"),
        ] {
            let e = p(bad).unwrap_err().0;
            assert!(e.contains(msg) && e.starts_with("policy 'x': "), "{bad}: {e}");
        }
        let h: Vec<String> = help::<T>().iter().map(|h| h.to_string()).collect();
        assert_eq!(
            h,
            [
                "n=N  a count; 1..=10; default: 3",
                "t=TICKS|TIME  a time; 0..=100 ticks or 0..=10s; default: 2ms",
                "w=a|b  a word; default: a",
                "pool=N  a size; 1..=8; default: everything",
            ]
        );
        assert!(check("workload", "x", &T { n: 11, ..T::default() }).unwrap_err().0.contains("n=11 is out of range"));
    }
}
