//! Labels in the sources' own words for machine, policy and workload specs
//! (`chat:rooms=10,messages=100` → `Chat (10,100)`), and the split of a PMQS spec
//! into balancer and pool size. Anything not recognised keeps its spec, so a new
//! experiment entry still reads correctly, just less tersely.

use super::catalog::Dim;
use schedlab_sim::Machine;

/// `key=value` of a spec's options (`name:k=v,k=v`).
fn opt<'a>(spec: &'a str, key: &str) -> Option<&'a str> {
    let (_, opts) = spec.split_once(':')?;
    opts.split(',').find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == key).map(|(_, v)| v))
}

fn kind(spec: &str) -> &str {
    spec.split(':').next().unwrap_or(spec)
}

/// A policy as the source names it.
pub fn policy(spec: &str, aliases: &[(&str, &str)]) -> String {
    if let Some((_, a)) = aliases.iter().find(|(s, _)| *s == spec) {
        return (*a).to_string();
    }
    match (kind(spec), spec.split_once(':')) {
        ("dss", None) => "DSS".into(),
        ("mqs", None) => "MQS".into(),
        ("o1", None) => "O(1)".into(),
        ("o1", Some((_, o))) => format!("O(1) {o}"),
        ("dss", Some(_)) if opt(spec, "colours").is_some() => format!("c{}", opt(spec, "colours").unwrap_or("?")),
        ("pmqs", Some(_)) => match (pool(spec), balancer(spec)) {
            (Some(p), Some(b)) => format!("PMQS {p} {b}"),
            _ => spec.into(),
        },
        _ => spec.into(),
    }
}

/// `pool 4` of a PMQS spec.
fn pool(spec: &str) -> Option<String> {
    (kind(spec) == "pmqs").then(|| format!("pool {}", opt(spec, "pool").unwrap_or("?")))
}

/// LBOFF, IP, LBP-45, LBC of a PMQS spec (the PMQS paper's names).
fn balancer(spec: &str) -> Option<String> {
    if kind(spec) != "pmqs" {
        return None;
    }
    Some(match opt(spec, "lb").unwrap_or("off") {
        "off" => "LBOFF".into(),
        "ip" => "IP".into(),
        "lbc" => "LBC".into(),
        "lbp" => format!("LBP-{}", opt(spec, "period").unwrap_or("?")),
        other => other.to_ascii_uppercase(),
    })
}

/// A workload as the source names it.
pub fn workload(spec: &str) -> String {
    match kind(spec) {
        "chat" => match (opt(spec, "rooms"), opt(spec, "messages")) {
            (Some(r), Some(m)) => format!("Chat ({r},{m})"),
            _ => spec.into(),
        },
        "webbench" => match opt(spec, "servers") {
            Some(n) => format!("{n} httpd"),
            None => spec.into(),
        },
        "netbench" => match opt(spec, "clients") {
            Some(n) => format!("{n} clients"),
            None => spec.into(),
        },
        "mkbench" => match (opt(spec, "builds"), opt(spec, "jobs")) {
            (Some(b), Some(j)) => format!("Mkbench {b} builds × -j{j}"),
            _ => spec.into(),
        },
        _ => spec.into(),
    }
}

/// A machine by what varies in the experiment: its CPU count, its L2, its affinity.
pub fn machine(spec: &str, m: &Machine) -> String {
    if opt(spec, "cpus").is_some() {
        return format!("{} CPU{}", m.cpus, if m.cpus == 1 { "" } else { "s" });
    }
    if opt(spec, "l2").is_some() {
        return format!("L2 {} KB", m.l2_kb);
    }
    if m.irq_affinity {
        return format!("{} (IRQ + process affinity)", m.name);
    }
    m.name.clone()
}

/// The label of one run's coordinate along `dim`; `None` when the policy has no such
/// part (DSS has no pool).
pub fn along(
    dim: Dim,
    machine_spec: &str,
    m: &Machine,
    policy_spec: &str,
    workload_spec: &str,
    aliases: &[(&str, &str)],
) -> Option<String> {
    match dim {
        Dim::Machine => Some(machine(machine_spec, m)),
        Dim::Policy => Some(policy(policy_spec, aliases)),
        Dim::Workload => Some(workload(workload_spec)),
        Dim::Balancer => balancer(policy_spec),
        Dim::Pool => pool(policy_spec),
    }
}

/// What a dimension is called in a table's corner.
pub fn dim_name(dim: Dim) -> &'static str {
    match dim {
        Dim::Machine => "machine",
        Dim::Policy => "scheduler",
        Dim::Workload => "workload",
        Dim::Balancer => "balancer",
        Dim::Pool => "pool size",
    }
}

/// The first number in a label (`12 clients` → 12): the x of a line plot.
pub fn number_in(label: &str) -> Option<f64> {
    let s: String =
        label.chars().skip_while(|c| !c.is_ascii_digit()).take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_names() {
        assert_eq!(policy("pmqs:pool=8,lb=lbp,period=10", &[]), "PMQS pool 8 LBP-10");
        assert_eq!(balancer("pmqs:pool=8,lb=lbp,period=10").as_deref(), Some("LBP-10"));
        assert_eq!(balancer("pmqs:pool=8,lb=off").as_deref(), Some("LBOFF"));
        assert_eq!(pool("dss"), None);
        assert_eq!(policy("dss:colours=32", &[]), "c32");
        assert_eq!(policy("dss", &[("dss", "vanilla")]), "vanilla");
        assert_eq!(workload("chat:rooms=30,messages=300"), "Chat (30,300)");
        assert_eq!(workload("netbench:clients=24,ops=200,probes=3"), "24 clients");
        assert_eq!(workload("hackbench:groups=2"), "hackbench:groups=2");
        assert_eq!(number_in("24 clients"), Some(24.0));
        assert_eq!(number_in("Chat"), None);
    }
}
