//! The CPU topology the benchmarks ran on, from sysfs (`/sys/devices/system/cpu`) and
//! `/proc/cpuinfo`: how many CPUs, cores and packages, and whether CPUs are SMT
//! siblings (two hardware threads of one core share its caches and execution units,
//! which changes every cross-worker figure).

use std::collections::BTreeSet;
use std::fs;

/// The machine's CPU topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Online CPUs.
    pub cpus: Vec<usize>,
    /// Distinct (package, core) pairs among them.
    pub cores: usize,
    /// Distinct packages.
    pub packages: usize,
    /// Most hardware threads any core has among the online CPUs (1 = no SMT).
    pub threads_per_core: usize,
    /// CPUs this process may run on (its affinity mask).
    pub allowed: Vec<usize>,
    /// Model name, if `/proc/cpuinfo` has one.
    pub model: Option<String>,
}

/// Parse a sysfs CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.trim().parse::<usize>().ok()),
        }
    }
    out
}

fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok()
}

impl Topology {
    /// Read it from this machine (falls back to the CPUs Rust can see).
    pub fn detect() -> Topology {
        let base = "/sys/devices/system/cpu";
        let mut cpus = read(&format!("{base}/online")).map(|s| parse_cpu_list(&s)).unwrap_or_default();
        if cpus.is_empty() {
            cpus = (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
        }
        let (mut cores, mut packages, mut tpc) = (BTreeSet::new(), BTreeSet::new(), 1);
        for &c in &cpus {
            let t = |f: &str| read(&format!("{base}/cpu{c}/topology/{f}"));
            let pkg = t("physical_package_id").and_then(|s| s.trim().parse::<i64>().ok()).unwrap_or(0);
            let core = t("core_id").and_then(|s| s.trim().parse::<i64>().ok()).unwrap_or(c as i64);
            cores.insert((pkg, core));
            packages.insert(pkg);
            let sib = t("thread_siblings_list").map(|s| parse_cpu_list(&s)).unwrap_or_default();
            tpc = tpc.max(sib.iter().filter(|s| cpus.contains(s)).count());
        }
        let allowed = core_affinity::get_core_ids().unwrap_or_default().into_iter().map(|c| c.id).collect();
        let model = read("/proc/cpuinfo").and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        });
        Topology { cpus, cores: cores.len(), packages: packages.len(), threads_per_core: tpc, allowed, model }
    }

    /// One line, e.g. `2 CPUs (0-1 online), 2 cores, 1 package, no SMT siblings; this process may use CPUs 0,1; Intel(R) Xeon(R) Processor`.
    pub fn line(&self) -> String {
        let list = |v: &[usize]| v.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
        let smt = if self.threads_per_core > 1 {
            format!("SMT: {} hardware threads per core (siblings share a core)", self.threads_per_core)
        } else {
            "no SMT siblings".to_string()
        };
        format!(
            "{} CPUs ({}), {} cores, {} package{}, {smt}; this process may use CPUs {}{}",
            self.cpus.len(),
            list(&self.cpus),
            self.cores,
            self.packages,
            if self.packages == 1 { "" } else { "s" },
            list(&self.allowed),
            self.model.as_ref().map_or(String::new(), |m| format!("; {m}"))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("0"), vec![0]);
        assert!(parse_cpu_list("").is_empty());
    }

    #[test]
    fn this_machine_has_a_topology() {
        let t = Topology::detect();
        assert!(!t.cpus.is_empty() && t.cores >= 1 && t.packages >= 1 && t.threads_per_core >= 1, "{t:?}");
        assert!(t.line().contains("CPUs"), "{}", t.line());
    }
}
