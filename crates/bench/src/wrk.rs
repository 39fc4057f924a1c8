//! Running `wrk` (the HTTP load generator) against a server and reading its results.
//!
//! wrk runs with a Lua script ([`SCRIPT`]) that requests the [`crate::http::PAGES`]
//! in turn on every connection and, at the end, prints one line with the request
//! count, the duration, every error count and the latency percentiles (p50, p99,
//! p99.9, max) from wrk's own histogram: `--latency` prints no p99.9.

use crate::BenchError;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Lua script: requests prepared once and sent in turn, and the summary line.
pub const SCRIPT: &str = r#"-- schedlab bench --servers: the pages in turn, and one summary line.
local paths = {PATHS}
local reqs = {}
local i = 0
init = function(args)
  for k, p in ipairs(paths) do reqs[k] = wrk.format("GET", p) end
end
request = function()
  i = i + 1
  return reqs[(i % #reqs) + 1]
end
done = function(s, latency, requests)
  local e = s.errors
  io.write(string.format(
    "schedlab-wrk requests=%d duration_us=%d bytes=%d connect=%d read=%d write=%d status=%d timeout=%d p50_us=%d p99_us=%d p999_us=%d max_us=%d\n",
    s.requests, s.duration, s.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max))
end
"#;

/// One wrk run's results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WrkResult {
    /// Requests completed.
    pub requests: u64,
    /// How long wrk ran, µs.
    pub duration_us: u64,
    /// Bytes read (headers and bodies).
    pub bytes: u64,
    /// Socket errors: connect, read, write; non-2xx/3xx answers; requests that timed out.
    pub connect: u64,
    /// Read errors.
    pub read: u64,
    /// Write errors.
    pub write: u64,
    /// Answers with a status other than 2xx/3xx.
    pub status: u64,
    /// Requests that timed out.
    pub timeout: u64,
    /// Latency percentiles and maximum, µs (wrk's resolution).
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
    /// Maximum.
    pub max_us: u64,
}

impl WrkResult {
    /// Requests per second over wrk's duration.
    pub fn rate(&self) -> f64 {
        self.requests as f64 / (self.duration_us.max(1) as f64 / 1e6)
    }
    /// Every error wrk counted.
    pub fn errors(&self) -> u64 {
        self.connect + self.read + self.write + self.status + self.timeout
    }
    /// The errors, e.g. `connect 0, read 3, write 0, status 0, timeout 0`.
    pub fn describe_errors(&self) -> String {
        format!(
            "connect {}, read {}, write {}, status {}, timeout {}",
            self.connect, self.read, self.write, self.status, self.timeout
        )
    }
    /// Parse the script's summary line out of wrk's stdout.
    pub fn parse(out: &str) -> Result<WrkResult, BenchError> {
        Self::parse_line(out).map_err(BenchError::Tool)
    }

    fn parse_line(out: &str) -> Result<WrkResult, String> {
        let line = out
            .lines()
            .find(|l| l.starts_with("schedlab-wrk "))
            .ok_or_else(|| format!("no summary line in wrk's output: {out:?}"))?;
        let mut r = WrkResult::default();
        for kv in line.split_whitespace().skip(1) {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("bad field {kv:?}"))?;
            let v: u64 = v.parse().map_err(|e| format!("bad value in {kv:?}: {e}"))?;
            let f = match k {
                "requests" => &mut r.requests,
                "duration_us" => &mut r.duration_us,
                "bytes" => &mut r.bytes,
                "connect" => &mut r.connect,
                "read" => &mut r.read,
                "write" => &mut r.write,
                "status" => &mut r.status,
                "timeout" => &mut r.timeout,
                "p50_us" => &mut r.p50_us,
                "p99_us" => &mut r.p99_us,
                "p999_us" => &mut r.p999_us,
                "max_us" => &mut r.max_us,
                _ => continue,
            };
            *f = v;
        }
        Ok(r)
    }
}

/// `wrk` on `PATH`, if any.
pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("wrk")).find(|p| p.is_file())
}

/// The script with the pages filled in, written to a file of its own in the temporary
/// directory (wrk reads scripts from files).
pub fn write_script() -> Result<PathBuf, BenchError> {
    let paths: Vec<String> = crate::http::PAGES.iter().map(|(p, _)| format!("{p:?}")).collect();
    let text = SCRIPT.replace("{PATHS}", &format!("{{{}}}", paths.join(", ")));
    let file = std::env::temp_dir().join(format!("schedlab-wrk-{}.lua", std::process::id()));
    std::fs::write(&file, text).map_err(|e| BenchError::Tool(format!("writing {}: {e}", file.display())))?;
    Ok(file)
}

/// How wrk runs: connections, threads, seconds, and the CPUs it may use.
#[derive(Clone, Debug)]
pub struct WrkRun {
    /// Open connections (each with one request in flight).
    pub connections: usize,
    /// wrk's threads.
    pub threads: usize,
    /// Duration, whole seconds (wrk's unit).
    pub secs: u64,
    /// CPUs wrk is restricted to (`sched_setaffinity` before exec, as `taskset`);
    /// empty: anywhere.
    pub cpus: Vec<usize>,
}

/// Run `wrk` against `url` with `script`; an error if it could not run, failed, or
/// overran its duration by 20 s (then it is killed).
pub fn run(wrk: &Path, script: &Path, url: &str, how: &WrkRun) -> Result<WrkResult, BenchError> {
    run_wrk(wrk, script, url, how).map_err(BenchError::Tool)
}

fn run_wrk(wrk: &Path, script: &Path, url: &str, how: &WrkRun) -> Result<WrkResult, String> {
    let mut cmd = Command::new(wrk);
    cmd.arg(format!("-t{}", how.threads))
        .arg(format!("-c{}", how.connections))
        .arg(format!("-d{}s", how.secs))
        .arg("--timeout")
        .arg("5s")
        .arg("-s")
        .arg(script)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !how.cpus.is_empty() {
        let cpus = how.cpus.clone();
        // SAFETY: between fork and exec the closure only calls sched_setaffinity
        // (async-signal-safe) on a set built before the fork.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(move || {
                if crate::kthreads::allow_cpus(&cpus) {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
    let mut child = cmd.spawn().map_err(|e| format!("wrk {}: {e}", wrk.display()))?;
    let deadline = Instant::now() + Duration::from_secs(how.secs + 20);
    let status = loop {
        match child.try_wait().map_err(|e| format!("wrk: {e}"))? {
            Some(s) => break s,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("wrk did not finish within {} s; killed", how.secs + 20));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    if !status.success() {
        return Err(format!("wrk failed ({status}): {}", err.trim()));
    }
    WrkResult::parse_line(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_summary_line() {
        let out = "Running 1s test @ http://127.0.0.1:1/\n  1 threads and 16 connections\n\
                   schedlab-wrk requests=5000 duration_us=1000000 bytes=900 connect=0 read=2 write=0 status=0 \
                   timeout=1 p50_us=100 p99_us=900 p999_us=2000 max_us=3000\n";
        let r = WrkResult::parse(out).unwrap();
        assert_eq!((r.requests, r.read, r.timeout, r.p999_us, r.max_us), (5000, 2, 1, 2000, 3000));
        assert_eq!((r.rate(), r.errors()), (5000.0, 3));
        assert!(WrkResult::parse("nothing").is_err());
    }

    #[test]
    fn script_names_every_page() {
        let f = write_script().unwrap();
        let s = std::fs::read_to_string(&f).unwrap();
        let _ = std::fs::remove_file(f);
        for (p, _) in crate::http::PAGES {
            assert!(s.contains(&format!("\"{p}\"")), "{s}");
        }
    }
}
