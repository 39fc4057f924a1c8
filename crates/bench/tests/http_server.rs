//! The hyper server of `schedlab_bench::http` on schedlab's runtime answers every
//! request of plain TCP clients, under every scheduler: each answer is checked (status,
//! length, the page's bytes), the server counts exactly the requests sent, and every
//! socket operation has a deadline.

use schedlab_bench::http::{self, ServerStats, Site, PAGES};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Clients, each on its own keep-alive connection, and the requests each sends.
const CLIENTS: usize = 4;
const REQUESTS: usize = 1000;

/// One response on a keep-alive connection: (status, body).
fn read_response(r: &mut BufReader<TcpStream>) -> std::io::Result<(u16, Vec<u8>)> {
    let mut status = String::new();
    r.read_line(&mut status)?;
    let code = status.split_whitespace().nth(1).and_then(|c| c.parse().ok());
    let code = code.ok_or_else(|| std::io::Error::other(format!("bad status line {status:?}")))?;
    let mut len = None;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse::<usize>().ok();
            }
        }
    }
    let len = len.ok_or_else(|| std::io::Error::other("no content-length"))?;
    let mut body = vec![0; len];
    r.read_exact(&mut body)?;
    Ok((code, body))
}

/// `REQUESTS` requests for the pages in turn on one connection, every answer checked;
/// then one request for a missing page (404).
fn client(addr: SocketAddr, id: usize) -> Result<(), String> {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| format!("connect: {e}"))?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    let mut w = s.try_clone().map_err(|e| e.to_string())?;
    let mut r = BufReader::new(s);
    for i in 0..REQUESTS {
        let (path, size) = PAGES[(i + id) % PAGES.len()];
        // One write per request (`write!` would send its pieces apart).
        let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        w.write_all(req.as_bytes()).map_err(|e| format!("request {i}: {e}"))?;
        let (code, body) = read_response(&mut r).map_err(|e| format!("client {id} response {i}: {e}"))?;
        if code != 200 || body.len() != size || body != http::page(path, size) {
            return Err(format!("client {id} request {i} {path}: status {code}, {} bytes", body.len()));
        }
    }
    w.write_all(b"GET /missing HTTP/1.1\r\nHost: localhost\r\n\r\n").map_err(|e| e.to_string())?;
    match read_response(&mut r) {
        Ok((404, _)) => Ok(()),
        Ok((code, _)) => Err(format!("client {id}: /missing answered {code}")),
        Err(e) => Err(format!("client {id}: /missing: {e}")),
    }
}

#[test]
fn hyper_server_answers_every_request_under_every_scheduler() {
    let deadline = Instant::now() + Duration::from_secs(120);
    for policy in schedlab_bench::pick_cost::runtime_policies() {
        let began = Instant::now();
        let rt = schedlab_rt::Builder::new().workers(2).policy(&policy).build().expect("runtime builds");
        let listener = schedlab_rt::net::TcpListener::bind(([127, 0, 0, 1], 0)).expect("bind");
        let addr = listener.get_ref().local_addr().unwrap();
        let stats = Arc::new(ServerStats::default());
        let server =
            http::serve(listener, http::rt::RtExecutor, http::rt::RtTimer, Arc::new(Site::new()), stats.clone());
        drop(rt.spawn(server));
        let clients: Vec<_> = (0..CLIENTS).map(|id| std::thread::spawn(move || client(addr, id))).collect();
        for c in clients {
            if let Err(e) = c.join().expect("client thread") {
                panic!("{policy}: {e}");
            }
        }
        let sent = (CLIENTS * REQUESTS) as u64;
        // A response is written before the client reads it, so the counts are final.
        assert_eq!(stats.pages.load(Ordering::Relaxed), sent, "{policy}: pages served");
        assert_eq!(stats.not_found.load(Ordering::Relaxed), CLIENTS as u64, "{policy}: 404s");
        assert_eq!(stats.connections.load(Ordering::Relaxed), CLIENTS as u64, "{policy}: connections");
        rt.shutdown();
        eprintln!("{policy}: {} requests in {:.2} s", sent + CLIENTS as u64, began.elapsed().as_secs_f64());
        assert!(Instant::now() < deadline, "{policy}: over the test's deadline");
    }
}

/// The server on one pinned worker, as `schedlab bench --servers` runs it, loaded by
/// wrk when it is installed (two rounds of 1 s at 16 connections): no error, no
/// request lost, each row the merge of its two rounds.
#[test]
fn wrk_against_the_server_when_installed() {
    use schedlab_bench::servers::{rows, ServerScale};
    if schedlab_bench::wrk::find().is_none() {
        eprintln!("wrk not installed: skipped");
        return;
    }
    let scale = ServerScale { secs: 1, connections: vec![16], rounds: 2 };
    let policies = ["fast".to_string(), "o1".to_string()];
    let filter = schedlab_bench::Filter(Some("schedlab".into()));
    let r = rows(&scale, &filter, schedlab_bench::Pin::All, &policies, None, &mut |w: &str| eprintln!("{w}"));
    assert_eq!(r.len(), 8, "4 rows per scheduler: {r:?}");
    assert!(r.iter().all(|r| r.error.is_none() && r.value > 0.0 && r.cpus.is_some()), "{r:?}");
    assert!(r.iter().all(|r| r.reps == 2 && r.samples.len() == 2), "two rounds per row: {r:?}");
}
