//! Running dbench's `tbench` client (and its `tbench_srv`) against a server, and
//! reading its MB/s.
//!
//! `tbench N HOST` forks `N` client processes, each on its own TCP connection to
//! `HOST` port [`crate::tbench::PORT`] (fixed in the client), and replays dbench's load
//! file as request/answer exchanges for `-t` seconds after a warm-up of `-t`/5 whole
//! seconds (dbench 4.0 has no option for it; the warm-up also lasts until every client
//! has moved bytes). Every second it prints the MB/s so far; at the end `Throughput X
//! MB/sec  N clients ...`, which is the figure read here ([`TbenchResult::parse`]).
//!
//! The port being fixed, the server and the client of a run meet in a [`Place`] of
//! their own: a private network namespace ([`Netns`]: only a loopback interface,
//! where `127.0.0.1:7003` is free and reachable from nowhere else) when this process
//! may create one (`CAP_SYS_ADMIN`), otherwise a loopback address of the run's own
//! (`127.x.y.z`, chosen where the port is free). `tbench_srv`, which listens on every
//! interface, runs only in a private namespace.
//!
//! Every process started here is in a process group of its own, killed with the group
//! when its [`Group`] is dropped (so a client's forked processes go too), and asked to
//! die with this process (`PR_SET_PDEATHSIG`); every wait has a deadline.

use crate::BenchError;
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An executable named `name` on `PATH`, if any.
pub fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// A private network namespace with its loopback interface up, held by a file
/// descriptor (it lives as long as this, or a socket or process in it).
#[derive(Debug)]
pub struct Netns {
    fd: OwnedFd,
}

fn os_err(what: &str) -> BenchError {
    BenchError::Net(format!("{what}: {}", std::io::Error::last_os_error()))
}

impl Netns {
    /// A new namespace (`unshare(CLONE_NEWNET)` on a thread of its own, which then
    /// ends; this process's other threads stay where they are). Fails without
    /// `CAP_SYS_ADMIN`.
    pub fn new() -> Result<Netns, BenchError> {
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: unshare, socket, ioctl, open and close on values owned here;
                // the ifreq is a plain C struct of the kernel's layout.
                unsafe {
                    if libc::unshare(libc::CLONE_NEWNET) != 0 {
                        return Err(os_err("unshare(CLONE_NEWNET)"));
                    }
                    loopback_up()?;
                    let fd = libc::open(c"/proc/thread-self/ns/net".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(os_err("open /proc/thread-self/ns/net"));
                    }
                    Ok(Netns { fd: OwnedFd::from_raw_fd(fd) })
                }
            })
            .join()
            .unwrap_or_else(|_| Err(BenchError::Net("namespace thread panicked".into())))
        })
    }

    /// Run `f` on a thread inside the namespace (sockets it creates stay there).
    pub fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R, BenchError> {
        let fd = self.fd.as_raw_fd();
        std::thread::scope(|s| {
            s.spawn(move || {
                // SAFETY: setns on a namespace descriptor this struct owns.
                if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
                    return Err(os_err("setns"));
                }
                Ok(f())
            })
            .join()
            .unwrap_or_else(|_| Err(BenchError::Net("namespace thread panicked".into())))
        })
    }
}

/// The ifreq of SIOCGIFFLAGS / SIOCSIFFLAGS: a name and the flags (the union after
/// the name is 24 bytes on Linux).
#[repr(C)]
struct IfreqFlags {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Bring `lo` up in the calling thread's network namespace.
unsafe fn loopback_up() -> Result<(), BenchError> {
    let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    if sock < 0 {
        return Err(os_err("socket"));
    }
    let sock = OwnedFd::from_raw_fd(sock);
    let mut req = IfreqFlags { name: [0; libc::IFNAMSIZ], flags: 0, _pad: [0; 22] };
    for (d, s) in req.name.iter_mut().zip(b"lo") {
        *d = *s as libc::c_char;
    }
    if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut req) != 0 {
        return Err(os_err("SIOCGIFFLAGS lo"));
    }
    req.flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    if libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS as _, &mut req) != 0 {
        return Err(os_err("SIOCSIFFLAGS lo up"));
    }
    Ok(())
}

/// Where a run's server and client meet: the server's address is
/// [`Place::addr`], port [`crate::tbench::PORT`].
#[derive(Debug)]
pub enum Place {
    /// A private network namespace: `127.0.0.1`.
    Netns(Netns),
    /// This machine's loopback, on an address of the run's own.
    Loopback(Ipv4Addr),
}

impl Place {
    /// A private namespace if one can be made, otherwise a loopback address in
    /// `127.0.0.0/8` where the port is free (a listener bound there for a moment,
    /// from an address derived from this process's id and `salt`).
    pub fn new(salt: u32) -> Result<Place, BenchError> {
        if let Ok(ns) = Netns::new() {
            return Ok(Place::Netns(ns));
        }
        let base = std::process::id().wrapping_mul(2_654_435_761).wrapping_add(salt.wrapping_mul(40_503));
        for i in 0..64u32 {
            let x = base.wrapping_add(i.wrapping_mul(7919));
            let addr = Ipv4Addr::new(127, 100 + (x % 100) as u8, ((x >> 8) % 256) as u8, 1 + ((x >> 16) % 254) as u8);
            if TcpListener::bind(SocketAddrV4::new(addr, crate::tbench::PORT)).is_ok() {
                return Ok(Place::Loopback(addr));
            }
        }
        Err(BenchError::Net(format!("no loopback address with port {} free", crate::tbench::PORT)))
    }

    /// Whether this is a private namespace.
    pub fn private(&self) -> bool {
        matches!(self, Place::Netns(_))
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        let ip = match self {
            Place::Netns(_) => Ipv4Addr::LOCALHOST,
            Place::Loopback(a) => *a,
        };
        SocketAddr::V4(SocketAddrV4::new(ip, crate::tbench::PORT))
    }

    /// A short description for notes: `private network namespace` or the address.
    pub fn describe(&self) -> String {
        match self {
            Place::Netns(_) => "a private network namespace, 127.0.0.1".into(),
            Place::Loopback(a) => format!("loopback address {a}"),
        }
    }

    /// A listener on [`Place::addr`], created inside the namespace if there is one.
    pub fn bind(&self) -> Result<TcpListener, BenchError> {
        let addr = self.addr();
        let bind = move || TcpListener::bind(addr).map_err(|e| BenchError::Net(format!("bind {addr}: {e}")));
        match self {
            Place::Netns(ns) => ns.run(bind)?,
            Place::Loopback(_) => bind(),
        }
    }

    /// Wait until something accepts on [`Place::addr`] (a connection, closed at once),
    /// for at most `within`.
    pub fn wait_listening(&self, within: Duration) -> Result<(), BenchError> {
        let addr = self.addr();
        let probe = move || {
            let until = Instant::now() + within;
            loop {
                match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
                    Ok(_) => return Ok(()),
                    Err(e) if Instant::now() > until => {
                        return Err(BenchError::Net(format!("nothing listens on {addr}: {e}")))
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        };
        match self {
            Place::Netns(ns) => ns.run(probe)?,
            Place::Loopback(_) => probe(),
        }
    }

    /// Prepare `cmd` to start in this place, in a process group of its own, restricted
    /// to `cpus` (none: anywhere), and killed if the thread that starts it exits
    /// (`PR_SET_PDEATHSIG`: start it from a thread that outlives it).
    pub fn prepare(&self, cmd: &mut Command, cpus: &[usize]) {
        let ns = match self {
            Place::Netns(ns) => Some(ns.fd.as_raw_fd()),
            Place::Loopback(_) => None,
        };
        let cpus = cpus.to_vec();
        cmd.process_group(0);
        // SAFETY: between fork and exec the closure calls only setns, sched_setaffinity
        // and prctl (plain system calls) on values built before the fork; the
        // namespace's descriptor is open until this `Place` is dropped.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(fd) = ns {
                    if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                if !cpus.is_empty() && !crate::kthreads::allow_cpus(&cpus) {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// A started process group (see [`Place::prepare`]): whatever is left of the group is
/// killed when its leader has exited ([`Group::wait_for`]) or when this is dropped.
#[derive(Debug)]
pub struct Group {
    /// The group's leader.
    pub child: Child,
    /// Its exit status, once reaped.
    status: Option<std::process::ExitStatus>,
}

impl Group {
    /// Start `cmd` (prepared with [`Place::prepare`]).
    pub fn spawn(cmd: &mut Command) -> std::io::Result<Group> {
        cmd.spawn().map(|child| Group { child, status: None })
    }

    /// Kill every process of the group, then reap the leader. The leader is not reaped
    /// before the kill (a zombie keeps its id), so the group's id cannot be reused.
    fn end(&mut self) -> std::io::Result<std::process::ExitStatus> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        // SAFETY: kill of the process group this struct started; its leader is not
        // reaped yet, so the id is still the group's.
        unsafe {
            libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
        }
        let s = self.child.wait()?;
        self.status = Some(s);
        Ok(s)
    }

    /// Wait for the leader to exit, for at most `within`; then kill what is left of
    /// its group and return the leader's status. `None` if it did not exit in time.
    pub fn wait_for(&mut self, within: Duration) -> std::io::Result<Option<std::process::ExitStatus>> {
        if let Some(s) = self.status {
            return Ok(Some(s));
        }
        let until = Instant::now() + within;
        loop {
            // SAFETY: waitid on our own child with WNOWAIT (it stays a zombie, not
            // reaped) into a zeroed siginfo_t we own.
            let exited = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                let r = libc::waitid(
                    libc::P_PID,
                    self.child.id() as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                );
                if r != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                info.si_pid() != 0
            };
            if exited {
                return self.end().map(Some);
            }
            if Instant::now() > until {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = self.end();
    }
}

/// One `tbench` run's result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TbenchResult {
    /// The final `Throughput`, MB/s (10^6 bytes).
    pub mb_per_s: f64,
    /// Clients the run reports.
    pub clients: usize,
    /// Its `max_latency`, ms.
    pub max_latency_ms: f64,
}

impl TbenchResult {
    /// Parse tbench's output: its final `Throughput X MB/sec  N clients  N procs
    /// max_latency=Y ms` line, and no line saying the protocol went wrong.
    pub fn parse(out: &str) -> Result<TbenchResult, BenchError> {
        Self::parse_text(out).map_err(BenchError::Tool)
    }

    fn parse_text(out: &str) -> Result<TbenchResult, String> {
        if let Some(bad) = out.lines().find(|l| {
            let l = l.trim();
            l.starts_with("lost sync") || l.starts_with("error ") || l.contains("failed to start")
        }) {
            return Err(format!("tbench said: {}", bad.trim()));
        }
        let line = out
            .lines()
            .find(|l| l.starts_with("Throughput "))
            .ok_or_else(|| format!("no Throughput line in tbench's output: {:?}", tail(out)))?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| words.get(i).and_then(|w| w.parse::<f64>().ok());
        let mb_per_s = num(1).ok_or_else(|| format!("bad Throughput line {line:?}"))?;
        let clients = words
            .iter()
            .position(|w| *w == "clients")
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| words[i].parse::<usize>().ok())
            .ok_or_else(|| format!("no client count in {line:?}"))?;
        let max_latency_ms = words
            .iter()
            .find_map(|w| w.strip_prefix("max_latency="))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0);
        Ok(TbenchResult { mb_per_s, clients, max_latency_ms })
    }
}

/// The last lines of `out`, for a message.
fn tail(out: &str) -> String {
    let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(4)..].join(" | ")
}

/// How `tbench` runs: clients, seconds, the CPUs its processes may use.
#[derive(Clone, Debug)]
pub struct TbenchRun {
    /// Client processes (`tbench N`), one connection each.
    pub clients: usize,
    /// `-t`: measured seconds, after the client's own warm-up of `secs / 5` whole seconds.
    pub secs: u64,
    /// CPUs of every client process (empty: anywhere).
    pub cpus: Vec<usize>,
}

impl TbenchRun {
    /// The longest a run may take before it is killed: warm-up, run, a second for the
    /// last report, and 20 s for starting the clients and their cleanup.
    pub fn limit(&self) -> Duration {
        Duration::from_secs(self.secs + self.secs / 5 + 1 + 20)
    }
}

/// Run `tbench` (at `bin`) against the server at `place`; an error if it could not
/// run, failed, printed no throughput, or overran [`TbenchRun::limit`] (then its
/// whole process group is killed).
pub fn run(bin: &Path, place: &Place, how: &TbenchRun) -> Result<TbenchResult, BenchError> {
    run_text(bin, place, how).map_err(BenchError::Tool)
}

fn run_text(bin: &Path, place: &Place, how: &TbenchRun) -> Result<TbenchResult, String> {
    let mut cmd = Command::new(bin);
    cmd.arg("-t")
        .arg(how.secs.to_string())
        .arg(how.clients.to_string())
        .arg(place.addr().ip().to_string())
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    place.prepare(&mut cmd, &how.cpus);
    let mut g = Group::spawn(&mut cmd).map_err(|e| format!("tbench {}: {e}", bin.display()))?;
    // Read its output as it comes, so a full pipe never stalls it.
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(g.child.stdout.take().map(|o| Box::new(o) as Box<dyn Read + Send>));
    let err = drain(g.child.stderr.take().map(|e| Box::new(e) as Box<dyn Read + Send>));
    let status = g.wait_for(how.limit()).map_err(|e| format!("tbench: {e}"))?;
    drop(g);
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    let Some(status) = status else {
        return Err(format!(
            "tbench did not finish within {} s; killed (last output: {})",
            how.limit().as_secs(),
            tail(&out)
        ));
    };
    if !status.success() {
        return Err(format!("tbench failed ({status}): {} {}", tail(&out), err.trim()));
    }
    let r = TbenchResult::parse_text(&out)?;
    if r.clients != how.clients {
        return Err(format!("tbench ran {} clients, not {}", r.clients, how.clients));
    }
    if r.mb_per_s <= 0.0 {
        return Err(format!("tbench measured 0 MB/s (its run ended before a measured second: {})", tail(&out)));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_throughput_line() {
        let out = "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n\
                   releasing clients\n  16      3558   575.00 MB/sec  execute   1 sec  latency 4.028 ms\n\
                   \x20 16  cleanup   2 sec\n\n Operation      Count    AvgLat    MaxLat\n\
                   \x20ReadX          13811     0.073     4.162\n\n\
                   Throughput 574.996 MB/sec  16 clients  16 procs  max_latency=4.028 ms\n";
        let r = TbenchResult::parse(out).unwrap();
        assert_eq!(r, TbenchResult { mb_per_s: 574.996, clients: 16, max_latency_ms: 4.028 });
        assert!(TbenchResult::parse("releasing clients\n").is_err());
        let sync = format!("lost sync (35 51)\n{out}");
        assert!(TbenchResult::parse(&sync).unwrap_err().to_string().contains("lost sync"));
    }

    /// A process forked by the group's leader dies with the group: after a timed-out
    /// wait and the drop, and after the leader exits on its own.
    #[test]
    fn a_group_is_killed_whole() {
        use std::io::BufRead;
        let alive = |pid: &str| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|st| st.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
        };
        for leader_exits in [false, true] {
            let script = if leader_exits { "sleep 30 & echo $!; sleep 0.2" } else { "sleep 30 & echo $!; wait" };
            let mut cmd = Command::new("sh");
            cmd.args(["-c", script]).stdout(Stdio::piped()).process_group(0);
            let mut g = Group::spawn(&mut cmd).expect("sh");
            let mut line = String::new();
            std::io::BufReader::new(g.child.stdout.take().unwrap()).read_line(&mut line).unwrap();
            let pid = line.trim().to_string();
            assert!(alive(&pid), "{pid} runs");
            let waited = g.wait_for(Duration::from_millis(if leader_exits { 5000 } else { 100 })).unwrap();
            assert_eq!(waited.is_some(), leader_exits);
            drop(g);
            let until = Instant::now() + Duration::from_secs(5);
            while alive(&pid) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(!alive(&pid), "the forked sleep {pid} is gone (leader exits: {leader_exits})");
        }
    }

    #[test]
    fn limit_covers_warmup_and_start() {
        let how = TbenchRun { clients: 4, secs: 5, cpus: Vec::new() };
        assert_eq!(how.limit(), Duration::from_secs(27));
    }
}
