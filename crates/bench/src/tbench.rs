//! A server of the tbench protocol, written once over a small async stream trait
//! ([`Stream`], [`Listen`]) and run on schedlab's runtime ([`rt`]) and on Tokio
//! (`schedlab-peer-tokio --tbench-server`), for the NetBench-style rows of `schedlab
//! bench --servers` ([`crate::netbench`]).
//!
//! The protocol is the one the `tbench` client of the `dbench` package speaks (Andrew
//! Tridgell, dbench, `sockio.c` and `tbench_srv.c`, <https://github.com/sahlberg/dbench>):
//! every operation of its SMB-like load file is one exchange on the client's own TCP
//! connection. The client sends a request of `4 + n` bytes: a 4-byte big-endian `n`,
//! then `n` bytes of which the first 4 are the big-endian length `m` of the answer it
//! expects; the server answers with a 4-byte big-endian `m` and `m` bytes (their
//! content is not looked at: the client discards them). The client checks the answer's
//! length word and reads exactly `m` bytes, then sends its next request; it counts the
//! bytes of its reads and writes (the load file's `ReadX`/`WriteX` sizes) as its MB/s.
//! The client's buffer is 70,000 bytes, so is [`MAX_MESSAGE`]; the client connects to
//! port [`PORT`].
//!
//! What is written once: the protocol ([`Decoder`]), one connection
//! ([`serve_connection`]) and the accept loop ([`serve`], which spawns a task per
//! connection through hyper's `Executor`, as [`crate::http::serve`] does). A runtime
//! brings only its listener and stream.

use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// The port the `tbench` client connects to (fixed in dbench: `TCP_PORT` of `dbench.h`).
pub const PORT: u16 = 7003;

/// The largest request or answer, length word included: the size of the client's and
/// `tbench_srv`'s buffer (`char buf[70000]` in `sockio.c` and `tbench_srv.c`).
pub const MAX_MESSAGE: usize = 70_000;

/// A request the server refuses (the connection is closed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// The request's body is shorter than the 4-byte answer length.
    ShortRequest(u32),
    /// The request, length word included, is over [`MAX_MESSAGE`].
    RequestTooLarge(u32),
    /// The answer asked for, length word included, is over [`MAX_MESSAGE`].
    AnswerTooLarge(u32),
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtocolError::ShortRequest(n) => write!(f, "request body of {n} bytes (at least 4)"),
            ProtocolError::RequestTooLarge(n) => {
                write!(f, "request of {} bytes (at most {MAX_MESSAGE})", *n as u64 + 4)
            }
            ProtocolError::AnswerTooLarge(m) => {
                write!(f, "answer of {} bytes asked (at most {MAX_MESSAGE})", *m as u64 + 4)
            }
        }
    }
}

/// The request parser: bytes in as they arrive (any split), the length of each
/// requested answer out. A request's body past its answer length is skipped, not kept.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    /// The request's first 8 bytes (its length, the answer's length) as they arrive.
    head: [u8; 8],
    /// How many of `head` have arrived.
    have: usize,
    /// Body bytes of the current request still to skip.
    skip: usize,
    /// The current request's answer length, once its head is complete.
    answer: u32,
}

impl Decoder {
    /// A decoder at the start of a request.
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Consume bytes from `input`, up to the end of one request: how many were
    /// consumed, and the answer length when a request ended there (then call again
    /// with the rest).
    pub fn feed(&mut self, input: &[u8]) -> Result<(usize, Option<u32>), ProtocolError> {
        let mut used = 0;
        if self.have < 8 {
            let take = (8 - self.have).min(input.len());
            self.head[self.have..self.have + take].copy_from_slice(&input[..take]);
            self.have += take;
            used += take;
            if self.have < 8 {
                return Ok((used, None));
            }
            let n = u32::from_be_bytes([self.head[0], self.head[1], self.head[2], self.head[3]]);
            let m = u32::from_be_bytes([self.head[4], self.head[5], self.head[6], self.head[7]]);
            if n < 4 {
                return Err(ProtocolError::ShortRequest(n));
            }
            if n as usize + 4 > MAX_MESSAGE {
                return Err(ProtocolError::RequestTooLarge(n));
            }
            if m as usize + 4 > MAX_MESSAGE {
                return Err(ProtocolError::AnswerTooLarge(m));
            }
            self.skip = n as usize - 4;
            self.answer = m;
        }
        let take = self.skip.min(input.len() - used);
        self.skip -= take;
        used += take;
        if self.skip > 0 {
            return Ok((used, None));
        }
        self.have = 0;
        Ok((used, Some(self.answer)))
    }
}

/// Write the answer of length `m` into `buf` (at least `m + 4` bytes): its length
/// word; the `m` bytes after it are sent as they are. Returns the answer's bytes.
pub fn answer(buf: &mut [u8], m: u32) -> &[u8] {
    buf[..4].copy_from_slice(&m.to_be_bytes());
    &buf[..m as usize + 4]
}

/// What a server has done, counted as it goes.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Requests answered (counted as their answer is written).
    pub requests: AtomicU64,
    /// Bytes received (length words included).
    pub bytes_in: AtomicU64,
    /// Bytes sent or being sent (length words included).
    pub bytes_out: AtomicU64,
    /// Connections closed for a request outside the protocol ([`ProtocolError`]).
    pub protocol_errors: AtomicU64,
    /// Connections that ended with a socket error (a client killed mid-request counts
    /// here; a client closing between requests does not).
    pub connection_errors: AtomicU64,
    /// Failed accepts (the loop carries on).
    pub accept_errors: AtomicU64,
}

impl ServerStats {
    /// The counts in one line, e.g. `connections=4 requests=1000 protocol_errors=0 ...`.
    pub fn line(&self) -> String {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "connections={} requests={} bytes_in={} bytes_out={} protocol_errors={} connection_errors={} accept_errors={}",
            l(&self.connections),
            l(&self.requests),
            l(&self.bytes_in),
            l(&self.bytes_out),
            l(&self.protocol_errors),
            l(&self.connection_errors),
            l(&self.accept_errors)
        )
    }
}

/// A connected byte stream, as [`serve_connection`] sees it: non-blocking reads and
/// writes that register the task's waker when they would block.
pub trait Stream: Unpin + Send + 'static {
    /// Read into `buf`; `Ok(0)` at the end of the stream.
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>>;
    /// Write some of `buf`; how many bytes were written.
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>>;
}

async fn read<S: Stream>(s: &mut S, buf: &mut [u8]) -> io::Result<usize> {
    poll_fn(|cx| Pin::new(&mut *s).poll_read(cx, buf)).await
}

async fn write_all<S: Stream>(s: &mut S, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        let n = poll_fn(|cx| Pin::new(&mut *s).poll_write(cx, buf)).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        buf = &buf[n..];
    }
    Ok(())
}

/// Serve one connection until the client closes it: every request answered in order
/// with one write of its answer.
pub async fn serve_connection<S: Stream>(mut s: S, stats: Arc<ServerStats>) {
    let mut input = vec![0u8; 64 * 1024];
    // Answers go out of this buffer: its length word set per answer, zeros after it.
    let mut out = vec![0u8; MAX_MESSAGE];
    let mut dec = Decoder::new();
    loop {
        let got = match read(&mut s, &mut input).await {
            Ok(0) => return,
            Ok(n) => n,
            Err(_) => {
                stats.connection_errors.fetch_add(1, Ordering::Relaxed);
                return;
            }
        };
        stats.bytes_in.fetch_add(got as u64, Ordering::Relaxed);
        let mut at = 0;
        while at < got {
            let (used, done) = match dec.feed(&input[at..got]) {
                Ok(x) => x,
                Err(_) => {
                    stats.protocol_errors.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            };
            at += used;
            if let Some(m) = done {
                // Counted before the answer goes out, so the counts are final once a
                // client has its answer.
                stats.requests.fetch_add(1, Ordering::Relaxed);
                stats.bytes_out.fetch_add(m as u64 + 4, Ordering::Relaxed);
                if write_all(&mut s, answer(&mut out, m)).await.is_err() {
                    stats.connection_errors.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            }
        }
    }
}

/// A listening socket, as [`serve`] sees it.
pub trait Listen: Send + 'static {
    /// The connection type.
    type Conn: Stream;
    /// The next connection (with `TCP_NODELAY` set, as `tbench_srv` sets it).
    fn accept(&mut self) -> impl Future<Output = io::Result<Self::Conn>> + Send;
}

/// A connection's future, as the accept loop hands it to the executor.
pub type ConnFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The accept loop: every connection is served by its own task, spawned through
/// hyper's `Executor` on the runtime. Runs until the runtime stops.
pub async fn serve<L, E>(mut listener: L, exec: E, stats: Arc<ServerStats>)
where
    L: Listen,
    E: hyper::rt::Executor<ConnFuture>,
{
    loop {
        match listener.accept().await {
            Ok(s) => {
                stats.connections.fetch_add(1, Ordering::Relaxed);
                exec.execute(Box::pin(serve_connection(s, stats.clone())));
            }
            Err(_) => {
                stats.accept_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The server on schedlab's runtime: its TCP stream (the reactor's `Async<TcpStream>`)
/// as a [`Stream`]; spawn with [`crate::http::rt::RtExecutor`].
pub mod rt {
    use super::{Listen, Stream};
    use schedlab_rt::io::{AsyncRead, AsyncWrite};
    use schedlab_rt::net::{TcpListener, TcpStream};
    use std::io;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// The runtime's TCP stream as a [`Stream`].
    #[derive(Debug)]
    pub struct RtConn(pub TcpStream);

    impl Stream for RtConn {
        fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
            Pin::new(&mut self.0).poll_read(cx, buf)
        }
        fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            Pin::new(&mut self.0).poll_write(cx, buf)
        }
    }

    impl Listen for TcpListener {
        type Conn = RtConn;
        async fn accept(&mut self) -> io::Result<RtConn> {
            let (s, _) = TcpListener::accept(self).await?;
            s.get_ref().set_nodelay(true)?;
            Ok(RtConn(s))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request as `sockio.c` builds it: `send` bytes in all, asking for `recv`.
    fn request(send: u32, recv: u32) -> Vec<u8> {
        let mut v = vec![0xa5; send as usize];
        v[..4].copy_from_slice(&(send - 4).to_be_bytes());
        v[4..8].copy_from_slice(&(recv - 4).to_be_bytes());
        v
    }

    /// Every answer length of `bytes`, fed `chunk` bytes at a time.
    fn answers(bytes: &[u8], chunk: usize) -> Result<Vec<u32>, ProtocolError> {
        let mut d = Decoder::new();
        let mut out = Vec::new();
        for piece in bytes.chunks(chunk) {
            let mut at = 0;
            while at < piece.len() {
                let (used, done) = d.feed(&piece[at..])?;
                assert!(used > 0, "progress");
                at += used;
                out.extend(done);
            }
        }
        Ok(out)
    }

    #[test]
    fn requests_are_parsed_however_they_arrive() {
        // The client's first exchange (8 and 8), a WriteX of 65,536 bytes (39+20+65536
        // out, 39+16 back) and a ReadX answering 4,096 bytes (39+20 out, 39+20+4096 back).
        let mut bytes = request(8, 8);
        bytes.extend(request(39 + 20 + 65_536, 39 + 16));
        bytes.extend(request(39 + 20, 39 + 20 + 4096));
        let want = vec![4, 39 + 16 - 4, 39 + 20 + 4096 - 4];
        for chunk in [1, 3, 7, 8, 9, 1000, bytes.len()] {
            assert_eq!(answers(&bytes, chunk).unwrap(), want, "chunk {chunk}");
        }
    }

    #[test]
    fn the_answer_carries_its_length() {
        let mut buf = vec![0u8; MAX_MESSAGE];
        let a = answer(&mut buf, 51);
        assert_eq!(a.len(), 55);
        assert_eq!(&a[..4], &[0, 0, 0, 51]);
    }

    #[test]
    fn requests_outside_the_protocol_are_refused() {
        let short = [0, 0, 0, 2, 0, 0, 0, 4];
        assert_eq!(answers(&short, 8), Err(ProtocolError::ShortRequest(2)));
        assert_eq!(answers(&request(70_001, 8), 100_000), Err(ProtocolError::RequestTooLarge(69_997)));
        assert_eq!(answers(&request(8, 70_001), 8), Err(ProtocolError::AnswerTooLarge(69_997)));
        // The largest of each is accepted.
        assert_eq!(answers(&request(70_000, 70_000), 4096), Ok(vec![69_996]));
        assert!(ProtocolError::AnswerTooLarge(69_997).to_string().contains("70001"));
    }
}
