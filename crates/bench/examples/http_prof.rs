//! Profiling aid: the HTTP server of the server rows on schedlab's runtime (one pinned
//! worker under a policy) for a number of seconds, printing its address, for `wrk` and
//! `perf record` from outside. Arguments: policy (default `fast`), seconds (default 10).

use schedlab_bench::http::{self, ServerStats, Site};
use std::sync::Arc;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy = args.first().map_or("fast", |s| s.as_str());
    let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let rt = schedlab_rt::Builder::new().workers(1).policy(policy).pin(true).build().expect("runtime");
    let stats = Arc::new(ServerStats::default());
    let st = stats.clone();
    let addr = rt.block_on(async move {
        let listener = schedlab_rt::net::TcpListener::bind(([127, 0, 0, 1], 0)).expect("bind");
        let addr = listener.get_ref().local_addr().expect("addr");
        schedlab_rt::spawn(http::serve(listener, http::rt::RtExecutor, http::rt::RtTimer, Arc::new(Site::new()), st));
        addr
    });
    println!("{addr}");
    std::thread::sleep(Duration::from_secs(secs));
    println!("pages {}", stats.pages.load(std::sync::atomic::Ordering::Relaxed));
    rt.shutdown();
}
