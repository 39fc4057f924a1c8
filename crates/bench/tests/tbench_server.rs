//! The tbench server of `schedlab_bench::tbench` on schedlab's runtime: plain TCP
//! clients speaking the protocol get every answer at its length under every scheduler,
//! and the real `tbench` client (when installed) runs against it with a nonzero MB/s.

use schedlab_bench::tbench::{self, ServerStats};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CLIENTS: usize = 4;
const EXCHANGES: usize = 300;

/// `EXCHANGES` request/answer exchanges of varied sizes, as `sockio.c` makes them: a
/// request of `send` bytes asking for `recv`; each answer's length word and length
/// checked.
fn client(addr: SocketAddr, id: usize) -> Result<(), String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| format!("connect: {e}"))?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    let sizes = [(8u32, 8u32), (39 + 20, 39 + 20 + 65_536), (39 + 20 + 4096, 39 + 16), (100, 39), (70_000, 70_000)];
    let mut buf = vec![0u8; tbench::MAX_MESSAGE];
    for i in 0..EXCHANGES {
        let (send, recv) = sizes[(i + id) % sizes.len()];
        let mut req = vec![id as u8; send as usize];
        req[..4].copy_from_slice(&(send - 4).to_be_bytes());
        req[4..8].copy_from_slice(&(recv - 4).to_be_bytes());
        s.write_all(&req).map_err(|e| format!("client {id} request {i}: {e}"))?;
        let got = &mut buf[..recv as usize];
        s.read_exact(got).map_err(|e| format!("client {id} answer {i}: {e}"))?;
        let word = u32::from_be_bytes([got[0], got[1], got[2], got[3]]);
        if word != recv - 4 {
            return Err(format!("client {id} answer {i}: length word {word}, expected {}", recv - 4));
        }
    }
    Ok(())
}

#[test]
fn server_answers_the_protocol_under_every_scheduler() {
    let deadline = Instant::now() + Duration::from_secs(120);
    for policy in schedlab_bench::pick_cost::runtime_policies() {
        let rt = schedlab_rt::Builder::new().workers(2).policy(&policy).build().expect("runtime builds");
        let listener = schedlab_rt::net::TcpListener::bind(([127, 0, 0, 1], 0)).expect("bind");
        let addr = listener.get_ref().local_addr().unwrap();
        let stats = Arc::new(ServerStats::default());
        drop(rt.spawn(tbench::serve(listener, schedlab_bench::http::rt::RtExecutor, stats.clone())));
        let clients: Vec<_> = (0..CLIENTS).map(|id| std::thread::spawn(move || client(addr, id))).collect();
        for c in clients {
            if let Err(e) = c.join().expect("client thread") {
                panic!("{policy}: {e}");
            }
        }
        // An answer is written before its client reads it, so the counts are final.
        assert_eq!(stats.requests.load(Ordering::Relaxed), (CLIENTS * EXCHANGES) as u64, "{policy}: {}", stats.line());
        assert_eq!(stats.connections.load(Ordering::Relaxed), CLIENTS as u64, "{policy}");
        assert_eq!(stats.protocol_errors.load(Ordering::Relaxed), 0, "{policy}");
        // A request outside the protocol closes its connection.
        let mut bad = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        bad.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        bad.write_all(&[0, 0, 0, 2, 0, 0, 0, 4]).unwrap();
        let mut b = [0u8; 1];
        assert_eq!(bad.read(&mut b).unwrap(), 0, "{policy}: closed");
        assert_eq!(stats.protocol_errors.load(Ordering::Relaxed), 1, "{policy}");
        rt.shutdown();
        assert!(Instant::now() < deadline, "{policy}: over the test's deadline");
    }
}

/// The server on one pinned worker, as `schedlab bench --servers` runs it, serving the
/// real `tbench` client (4 clients, `-t 2`: one measured second) with nonzero MB/s; and
/// `tbench_srv` under the same client where a private network namespace can be made.
#[test]
fn real_tbench_client_when_installed() {
    use schedlab_bench::netbench::{rows, TbenchScale};
    if schedlab_bench::tbench_client::find("tbench").is_none() {
        eprintln!("tbench not installed (apt-get install dbench): skipped");
        return;
    }
    let scale = TbenchScale { secs: 2, clients: vec![4] };
    let policies = ["fast".to_string()];
    let began = Instant::now();
    let filter = schedlab_bench::Filter(Some("schedlab".into()));
    let r = rows(&scale, &filter, schedlab_bench::Pin::All, &policies, None, &mut |w: &str| eprintln!("{w}"));
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(r[0].error.is_none() && r[0].value > 0.0 && r[0].cpus.is_some(), "{r:?}");
    eprintln!("schedlab fast, 4 clients: {:.1} MB/s in {:.1} s", r[0].value, began.elapsed().as_secs_f64());
    assert!(began.elapsed() < Duration::from_secs(30), "bounded in time");
    if schedlab_bench::tbench_client::Netns::new().is_ok()
        && schedlab_bench::tbench_client::find("tbench_srv").is_some()
    {
        let filter = schedlab_bench::Filter(Some("linux".into()));
        let r = rows(&scale, &filter, schedlab_bench::Pin::All, &policies, None, &mut |w: &str| eprintln!("{w}"));
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].error.is_none() && r[0].value > 0.0, "{r:?}");
    } else {
        eprintln!("no private network namespace or no tbench_srv: its row is not checked");
    }
}
