//! `name:key=value,key=value` specifications, shared by policy and workload specs
//! (`mqs`, `pmqs:pool=4,lb=lbp,period=45`, `chat:rooms=10,messages=100`).

use std::fmt;

/// A parse or validation failure, naming the offending part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SpecError {}

/// A parsed `name:key=value,...` string. Every key must be consumed ([`Spec::take`], by
/// [`crate::options::parse`]); [`Spec::finish`] rejects leftovers so that a misspelt key is an error, not a no-op.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    kind: &'static str,
    args: Vec<(String, String, bool)>,
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
        Ok(Spec { name: name.to_ascii_lowercase(), kind, args })
    }

    /// The raw value of `key`, marking it consumed; `None` when absent. Typed reading is
    /// [`crate::options`]'s.
    pub fn take(&mut self, key: &str) -> Option<String> {
        let slot = self.args.iter_mut().find(|(k, _, _)| k == key)?;
        slot.2 = true;
        Some(slot.1.clone())
    }

    /// An error about this spec: `policy 'pmqs': {msg}`.
    pub fn error(&self, msg: &str) -> SpecError {
        SpecError(format!("{} '{}': {msg}", self.kind, self.name))
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
    fn parses_and_takes() {
        let mut s = Spec::parse("workload", "Chat:rooms=10, messages=100").unwrap();
        assert_eq!(s.name, "chat");
        assert_eq!(s.take("rooms").as_deref(), Some("10"));
        assert_eq!(s.take("users"), None);
        assert!(s.finish(&["rooms", "messages"]).unwrap_err().0.contains("unknown key 'messages'"));
        assert_eq!(s.take("messages").as_deref(), Some("100"));
        s.finish(&["rooms", "messages"]).unwrap();
        assert_eq!(s.error("x").0, "workload 'chat': x");
    }

    #[test]
    fn errors_name_the_bad_part() {
        let e = Spec::parse("workload", "chat:rooms").unwrap_err();
        assert!(e.0.contains("'rooms' is not key=value"), "{e}");
        let s = Spec::parse("workload", "chat:romos=3").unwrap();
        assert!(s.finish(&["rooms"]).unwrap_err().0.contains("unknown key 'romos'"));
        assert!(Spec::parse("policy", "mqs:a=1,a=2").is_err());
        assert!(Spec::parse("policy", ":a=1").is_err());
    }
}
