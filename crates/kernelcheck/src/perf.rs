//! Running `perf` and the workloads it records, every child under a time limit.
//!
//! Each child starts in a process group of its own; past its limit the whole group is
//! killed (`perf sched record` forks the workload, which forks or starts threads of
//! its own: killing perf alone would leave them running).

use crate::parse::{Builder, Counts};
use crate::Error;
use schedlab_core::trace::Trace;
use std::io::{BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// A started child and the watchdog that kills its process group at the deadline.
struct Limited {
    child: Child,
    stop: mpsc::Sender<()>,
    fired: Arc<AtomicBool>,
    what: String,
    limit: Duration,
}

impl Limited {
    fn spawn(mut cmd: Command, what: &str, limit: Duration) -> Result<Limited, Error> {
        cmd.process_group(0).stdin(Stdio::null());
        let child = cmd.spawn().map_err(|e| {
            Error::Child(if e.kind() == std::io::ErrorKind::NotFound {
                format!("{what}: `{}` not found", cmd.get_program().to_string_lossy())
            } else {
                format!("{what}: cannot start: {e}")
            })
        })?;
        let (stop, rx) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let (pgid, f) = (child.id() as libc::pid_t, fired.clone());
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
                f.store(true, Ordering::SeqCst);
                // SAFETY: kill(2) on the process group this module created for the child.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
            }
        });
        Ok(Limited { child, stop, fired, what: what.to_string(), limit })
    }

    /// Wait for the child; an error if it was killed at its limit or failed.
    fn finish(mut self, stderr: &str) -> Result<(), Error> {
        let status = self.child.wait().map_err(|e| format!("{}: {e}", self.what))?;
        let _ = self.stop.send(());
        if self.fired.load(Ordering::SeqCst) {
            return Err(Error::Child(format!(
                "{}: killed after its time limit of {} s",
                self.what,
                self.limit.as_secs()
            )));
        }
        if !status.success() {
            let tail: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            let tail = tail[tail.len().saturating_sub(4)..].join(" | ");
            return Err(Error::Child(format!("{}: {status}: {tail}", self.what)));
        }
        Ok(())
    }
}

/// Run `cmd` to its end within `limit`: its stdout, or why not.
pub fn run(mut cmd: Command, what: &str, limit: Duration) -> Result<String, Error> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut l = Limited::spawn(cmd, what, limit)?;
    let mut err = l.child.stderr.take().expect("piped");
    let errs = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let mut out = String::new();
    let _ = l.child.stdout.take().expect("piped").read_to_string(&mut out);
    let err = errs.join().unwrap_or_default();
    l.finish(&err)?;
    Ok(out)
}

/// A file name for a recording, unique in this process, in the temporary directory.
pub fn temp_data() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    std::env::temp_dir().join(format!("schedlab-kernelcheck-{}-{n}.data", std::process::id()))
}

/// Removes a recording when dropped (`perf` writes it as root, mode 600).
pub struct TempFile(pub PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_file(self.0.with_extension("data.old"));
    }
}

/// `perf sched record -o DATA -- argv...` within `limit`: the workload's stdout.
pub fn record(data: &Path, argv: &[String], limit: Duration) -> Result<String, Error> {
    let mut cmd = Command::new("perf");
    cmd.args(["sched", "record", "-o"]).arg(data).arg("--").args(argv);
    run(cmd, &format!("perf sched record -- {}", argv.join(" ")), limit)
}

/// `argv` alone within `limit`: its stdout.
pub fn plain(argv: &[String], limit: Duration) -> Result<String, Error> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    run(cmd, &argv.join(" "), limit)
}

/// `perf sched script --ns -i DATA`, read as it streams, filtered to the tasks named
/// one of `comms`.
pub fn script(data: &Path, comms: &[&str], limit: Duration) -> Result<(Trace, Counts), Error> {
    let mut cmd = Command::new("perf");
    cmd.args(["sched", "script", "--ns", "-i"]).arg(data).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut l = Limited::spawn(cmd, "perf sched script", limit)?;
    let mut err = l.child.stderr.take().expect("piped");
    let errs = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let mut b = Builder::of(comms);
    let read = b.read(BufReader::new(l.child.stdout.take().expect("piped")));
    let err = errs.join().unwrap_or_default();
    l.finish(&err)?;
    read.map_err(|e| format!("perf sched script: {e}"))?;
    Ok(b.finish(&format!("perf sched script: {}", comms.join(", "))))
}

/// Whether `perf sched record` works here: `perf` on PATH, and a recording of `true`
/// that produces scheduler events (root or a permissive `perf_event_paranoid`, and the
/// `sched` tracepoints). The reason otherwise.
pub fn check() -> Result<String, Error> {
    let version = plain(&["perf".into(), "--version".into()], Duration::from_secs(20))
        .map_err(|e| Error::Perf(format!("perf is not usable: {e}")))?;
    let data = TempFile(temp_data());
    record(&data.0, &["true".into()], Duration::from_secs(60)).map_err(|e| {
        Error::Perf(format!("`perf sched record` does not work here (root and the sched tracepoints are needed): {e}"))
    })?;
    let mut cmd = Command::new("perf");
    cmd.args(["sched", "script", "--ns", "-i"]).arg(&data.0);
    let text = run(cmd, "perf sched script", Duration::from_secs(60))?;
    if !text.lines().any(|l| l.contains("sched:sched_switch")) {
        return Err(Error::Perf("`perf sched record` recorded no sched_switch events".into()));
    }
    Ok(version.trim().to_string())
}
