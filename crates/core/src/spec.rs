//! `name:key=value,key=value` specifications, shared by policy and workload specs
//! (`mqs`, `pmqs:pool=4,lb=lbp,period=45`, `chat:rooms=10,messages=100`).

use std::fmt;
use std::str::FromStr;

/// A parse or validation failure, naming the offending part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SpecError {}

/// A parsed `name:key=value,...` string. Every key must be consumed by a typed getter;
/// [`Spec::finish`] rejects leftovers so that a misspelt key is an error, not a no-op.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    kind: &'static str,
    args: Vec<(String, String, bool)>,
    /// Every key a parser asked for, with its range and default, in order: the help
    /// texts (`schedlab list`) come from the parsers themselves, so they cannot drift.
    asked: Vec<String>,
}

impl Spec {
    /// `kind` ("policy", "workload") is used in error messages.
    pub fn parse(kind: &'static str, s: &str) -> Result<Spec, SpecError> {
        let s = s.trim();
        let (name, rest) = match s.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (s, None),
        };
        if name.is_empty() {
            return Err(SpecError(format!("empty {kind} name in '{s}'")));
        }
        let mut args: Vec<(String, String, bool)> = Vec::new();
        for part in rest.into_iter().flat_map(|r| r.split(',')) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let Some((k, v)) = part.split_once('=') else {
                return Err(SpecError(format!("{kind} '{name}': '{part}' is not key=value")));
            };
            let (k, v) = (k.trim(), v.trim());
            if args.iter().any(|(a, _, _)| a == k) {
                return Err(SpecError(format!("{kind} '{name}': key '{k}' given twice")));
            }
            args.push((k.to_string(), v.to_string(), false));
        }
        Ok(Spec { name: name.to_ascii_lowercase(), kind, args, asked: Vec::new() })
    }

    /// Typed value of `key`, or `default` when absent; checked against `range`.
    pub fn get<T>(&mut self, key: &str, default: T, range: std::ops::RangeInclusive<T>) -> Result<T, SpecError>
    where
        T: FromStr + PartialOrd + fmt::Display + Copy,
    {
        self.asked.push(format!("{key}={}..={} (default {default})", range.start(), range.end()));
        let (kind, name) = (self.kind, self.name.clone());
        let Some(slot) = self.args.iter_mut().find(|(k, _, _)| k == key) else {
            return Ok(default);
        };
        slot.2 = true;
        let v: T = slot.1.parse().map_err(|_| {
            // A well-formed integer that does not fit the type is out of range, not
            // malformed.
            let digits = slot.1.strip_prefix('-').unwrap_or(&slot.1);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                SpecError(format!(
                    "{kind} '{name}': {key}={} is out of range {}..={}",
                    slot.1,
                    range.start(),
                    range.end()
                ))
            } else {
                SpecError(format!("{kind} '{name}': {key}='{}' is not a valid number", slot.1))
            }
        })?;
        if !range.contains(&v) {
            return Err(SpecError(format!(
                "{kind} '{name}': {key}={v} is out of range {}..={}",
                range.start(),
                range.end()
            )));
        }
        Ok(v)
    }

    /// String value of `key` (e.g. a balancer name), or `default`.
    pub fn get_str(&mut self, key: &str, default: &str) -> String {
        self.asked.push(format!("{key}=... (default {default})"));
        match self.args.iter_mut().find(|(k, _, _)| k == key) {
            Some(slot) => {
                slot.2 = true;
                slot.1.to_ascii_lowercase()
            }
            None => default.to_string(),
        }
    }

    /// The keys the parser asked for so far, `key=min..=max (default d)` each.
    pub fn asked(&self) -> &[String] {
        &self.asked
    }

    /// Fail if any key was not consumed. `known` lists the accepted keys for the message.
    pub fn finish(&self, known: &[&str]) -> Result<(), SpecError> {
        if let Some((k, _, _)) = self.args.iter().find(|(_, _, used)| !used) {
            return Err(SpecError(format!(
                "{} '{}': unknown key '{k}' (accepted: {})",
                self.kind,
                self.name,
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_validates() {
        let mut s = Spec::parse("workload", "Chat:rooms=10, messages=100").unwrap();
        assert_eq!(s.name, "chat");
        assert_eq!(s.get("rooms", 1u32, 1..=1000).unwrap(), 10);
        assert_eq!(s.get("messages", 1u32, 1..=100_000).unwrap(), 100);
        assert_eq!(s.get("users", 20u32, 1..=100).unwrap(), 20);
        s.finish(&["rooms", "messages", "users"]).unwrap();
    }

    #[test]
    fn errors_name_the_bad_part() {
        let e = Spec::parse("workload", "chat:rooms").unwrap_err();
        assert!(e.0.contains("'rooms' is not key=value"), "{e}");
        let mut s = Spec::parse("workload", "chat:rooms=x").unwrap();
        assert!(s.get("rooms", 1u32, 1..=10).unwrap_err().0.contains("rooms='x'"));
        let mut s = Spec::parse("workload", "chat:rooms=0").unwrap();
        assert!(s.get("rooms", 1u32, 1..=10).unwrap_err().0.contains("out of range"));
        for big in ["99999999999999999999", "-1"] {
            let mut s = Spec::parse("workload", &format!("chat:rooms={big}")).unwrap();
            let e = s.get("rooms", 1u32, 1..=10).unwrap_err().0;
            assert!(e.contains("out of range 1..=10") && e.contains(big), "{e}");
        }
        let s = Spec::parse("workload", "chat:romos=3").unwrap();
        assert!(s.finish(&["rooms"]).unwrap_err().0.contains("unknown key 'romos'"));
        assert!(Spec::parse("policy", "mqs:a=1,a=2").is_err());
        assert!(Spec::parse("policy", ":a=1").is_err());
    }
}
