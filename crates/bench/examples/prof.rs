//! Profiling aid: run one async benchmark program repeatedly on schedlab's runtime,
//! e.g. `perf record -g target/release/examples/prof fast chat 20`.
//! Arguments: policy (default `fast`), bench (`chat|hackbench|pingpong-same|pingpong-cross|spawn|dispatch`), reps.

use schedlab_bench::schedlab_exec::{RtChannel, SchedlabExec};
use schedlab_bench::{programs, AsyncChannel, ChatSize, HackSize};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy = args.first().map_or("fast", |s| s.as_str());
    let bench = args.get(1).map_or("chat", |s| s.as_str());
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let e = SchedlabExec::new(2, policy).expect("runtime");
    let budget = Duration::from_millis(1000);
    for _ in 0..reps {
        let v = match bench {
            "chat" => programs::chat::<_, RtChannel>(&e, ChatSize { rooms: 10, users: 20, messages: 500 }),
            "hackbench" => programs::hackbench::<_, RtChannel>(&e, HackSize { groups: 10, fds: 20, loops: 500 }),
            "pingpong-same" => programs::pingpong::<_, RtChannel>(&e, false, budget),
            "pingpong-cross" => programs::pingpong::<_, RtChannel>(&e, true, budget),
            "chat-ac" => programs::chat::<_, AsyncChannel>(&e, ChatSize { rooms: 10, users: 20, messages: 500 }),
            "hackbench-ac" => programs::hackbench::<_, AsyncChannel>(&e, HackSize { groups: 10, fds: 20, loops: 500 }),
            "spawn" => programs::spawn_throughput(&e, budget),
            "dispatch" => programs::local_dispatch(&e, budget),
            other => panic!("unknown bench {other}"),
        };
        println!("{bench} {policy}: {v:.1}");
    }
    e.shutdown();
}
