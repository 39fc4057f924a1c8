//! The kernel-thread child that `perf sched record` runs: schedlab's Chat or hackbench
//! topology on OS threads and pipes (`schedlab_bench::kthreads`), in a process of its
//! own so that the recording has a command to run and the trace a name to filter on.
//! The bench's harness runs the same programs in its own process instead.

use schedlab_bench::{kthreads, ChatSize, HackSize, Pin};

/// The command name the child takes before it starts a thread (every thread inherits
/// it): what the trace is filtered on.
pub fn comm(program: &str) -> String {
    format!("kc-{program}")
}

/// The child's arguments after the subcommand: `chat ROOMS USERS MESSAGES` or
/// `hackbench GROUPS FDS LOOPS`.
pub fn args(program: &str, a: usize, b: usize, c: usize) -> Vec<String> {
    vec![program.to_string(), a.to_string(), b.to_string(), c.to_string()]
}

/// Run the child: name the process, run the topology with no CPU affinity (the
/// kernel places the threads), print `Total time: S [sec]` as `perf bench` does.
pub fn main(args: &[String]) -> Result<(), crate::Error> {
    let usage = "expected `chat ROOMS USERS MESSAGES` or `hackbench GROUPS FDS LOOPS`";
    let [program, a, b, c] = args else { return Err(crate::Error::Usage(usage.into())) };
    let n = |s: &String| s.parse::<usize>().ok().filter(|&v| (1..=1000).contains(&v));
    let (Some(a), Some(b), Some(c)) = (n(a), n(b), n(c)) else {
        return Err(crate::Error::Usage(format!("bad size: {usage}")));
    };
    let name = std::ffi::CString::new(comm(program)).expect("no NUL");
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, name.as_ptr());
    }
    let (units, rate) = match program.as_str() {
        "chat" => {
            if b < 2 {
                return Err("chat needs 2 or more users".into());
            }
            let size = ChatSize { rooms: a, users: b, messages: c };
            (size.deliveries(), kthreads::chat_measure(size, Pin::None).value)
        }
        "hackbench" => {
            let size = HackSize { groups: a, fds: b, loops: c };
            (size.messages(), kthreads::hackbench_measure(size, Pin::None).value)
        }
        _ => return Err(usage.into()),
    };
    println!("     Total time: {:.6} [sec]", units as f64 / rate);
    Ok(())
}
