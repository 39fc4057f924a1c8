//! `schedlab-peer-tokio --http-server`: the hyper server of `schedlab_bench::http` on
//! Tokio answers a plain TCP client's requests with the pages, and reports exactly the
//! requests it answered when its stdin closes; bounded by socket timeouts and the
//! peer's own `--max-secs`.

use schedlab_bench::http::{page, PAGES};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn tokio_server_answers_and_counts() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab-peer-tokio"))
        .args(["--http-server", "--max-secs", "60"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("peer starts");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("listening ").unwrap_or_else(|| panic!("{line:?}")).to_string();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"go\n").unwrap();
    let s = TcpStream::connect(&addr).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    let n = 200;
    for i in 0..n {
        let (path, size) = PAGES[i % PAGES.len()];
        w.write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes()).unwrap();
        let mut len = None;
        let mut status = String::new();
        r.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status:?}");
        loop {
            let mut h = String::new();
            r.read_line(&mut h).unwrap();
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some(v) = h.strip_prefix("content-length:") {
                len = v.trim().parse::<usize>().ok();
            }
        }
        assert_eq!(len, Some(size), "request {i}");
        let mut body = vec![0; size];
        r.read_exact(&mut body).unwrap();
        assert_eq!(body, page(path, size), "request {i}");
    }
    drop(stdin);
    line.clear();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with(&format!("served requests={n} not_found=0 cpu_ns=")), "{line:?}");
    assert!(child.wait().unwrap().success());
}
