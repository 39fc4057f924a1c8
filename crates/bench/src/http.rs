//! An HTTP/1.1 server of static pages from memory, written once on `hyper` 1.x
//! (server side, `http1` only) and run on schedlab's runtime ([`rt`]: hyper's
//! `rt::{Read, Write}` for the runtime's TCP stream, an `Executor` that spawns on the
//! runtime, a `Timer` on the reactor's timers) and on Tokio (`schedlab-peer-tokio
//! --http-server`, with `hyper-util`'s Tokio glue).
//!
//! What is written once: the pages ([`Site`]), the response to a request
//! ([`respond`]), one connection ([`serve_connection`]: hyper's `http1::Builder` with
//! the runtime's timer, so hyper's 30 s header-read timeout is armed for every request
//! as in a production server) and the accept loop ([`serve`], over [`Accept`] and
//! hyper's `Executor`). A runtime brings only its listener, stream, executor and timer.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::rt::{Executor, Timer};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The pages, path and size in bytes: a small and a larger static page (WebBench's
/// static mix averages a few KB). [`crate::wrk`]'s script requests them in turn.
pub const PAGES: &[(&str, usize)] = &[("/1k.html", 1024), ("/6k.html", 6 * 1024)];

/// The pages, built once and served from memory (a response's body is a reference to
/// the page, not a copy).
pub struct Site {
    pages: Vec<(&'static str, Bytes)>,
}

impl Site {
    /// The [`PAGES`], each filled with deterministic HTML text of its size.
    pub fn new() -> Site {
        Site { pages: PAGES.iter().map(|&(path, size)| (path, page(path, size))).collect() }
    }
    /// The page at `path`.
    pub fn get(&self, path: &str) -> Option<&Bytes> {
        self.pages.iter().find(|(p, _)| *p == path).map(|(_, b)| b)
    }
}

impl Default for Site {
    fn default() -> Site {
        Site::new()
    }
}

/// A page of exactly `size` bytes: an HTML head naming `path`, filler text, a tail.
pub fn page(path: &str, size: usize) -> Bytes {
    let head = format!("<!DOCTYPE html>\n<html><head><title>{path}</title></head><body><p>");
    let tail = "</p></body></html>\n";
    let mut v = head.into_bytes();
    let filler = b"schedlab serves static pages from memory. ";
    let mut i = 0;
    while v.len() + tail.len() < size {
        v.push(filler[i % filler.len()]);
        i += 1;
    }
    v.extend_from_slice(tail.as_bytes());
    v.truncate(size);
    Bytes::from(v)
}

/// What a server has done, counted as it goes.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Requests answered with a page.
    pub pages: AtomicU64,
    /// Requests answered 404.
    pub not_found: AtomicU64,
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Connections that ended with an error (a client resetting a keep-alive
    /// connection counts here; it is not a lost request).
    pub connection_errors: AtomicU64,
    /// Failed accepts (the loop carries on).
    pub accept_errors: AtomicU64,
}

impl ServerStats {
    /// Requests answered (pages and 404s).
    pub fn requests(&self) -> u64 {
        self.pages.load(Ordering::Relaxed) + self.not_found.load(Ordering::Relaxed)
    }
}

/// The response to `req`: its page (200, `text/html`), or 404.
pub fn respond(site: &Site, stats: &ServerStats, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let (status, body) = match site.get(req.uri().path()) {
        Some(b) => {
            stats.pages.fetch_add(1, Ordering::Relaxed);
            (StatusCode::OK, b.clone())
        }
        None => {
            stats.not_found.fetch_add(1, Ordering::Relaxed);
            (StatusCode::NOT_FOUND, Bytes::from_static(b"not found\n"))
        }
    };
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = status;
    r.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("text/html"));
    r
}

/// Serve one connection until the client closes it: HTTP/1.1 with keep-alive, hyper's
/// `http1::Builder` with `timer` (its default 30 s header-read timeout armed per request).
pub async fn serve_connection<I, T>(io: I, timer: T, site: Arc<Site>, stats: Arc<ServerStats>)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    T: Timer + Send + Sync + 'static,
{
    let st = stats.clone();
    let svc = service_fn(move |req: Request<Incoming>| {
        let r = respond(&site, &st, &req);
        std::future::ready(Ok::<_, Infallible>(r))
    });
    if http1::Builder::new().timer(timer).serve_connection(io, svc).await.is_err() {
        stats.connection_errors.fetch_add(1, Ordering::Relaxed);
    }
}

/// A listening socket, as [`serve`] sees it.
pub trait Accept: Send + 'static {
    /// The connection type hyper reads and writes.
    type Io: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static;
    /// The next connection (with `TCP_NODELAY` set).
    fn accept(&mut self) -> impl Future<Output = std::io::Result<Self::Io>> + Send;
}

/// A connection's future, as the accept loop hands it to the executor.
pub type ConnFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The accept loop: every connection is served by its own task, spawned through
/// hyper's `Executor` on the runtime. Runs until the runtime stops.
pub async fn serve<L, E, T>(mut listener: L, exec: E, timer: T, site: Arc<Site>, stats: Arc<ServerStats>)
where
    L: Accept,
    E: Executor<ConnFuture>,
    T: Timer + Clone + Send + Sync + 'static,
{
    loop {
        match listener.accept().await {
            Ok(io) => {
                stats.connections.fetch_add(1, Ordering::Relaxed);
                exec.execute(Box::pin(serve_connection(io, timer.clone(), site.clone(), stats.clone())));
            }
            Err(_) => {
                stats.accept_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// hyper on schedlab's runtime: its TCP stream as hyper's `Read`/`Write`, an executor
/// that spawns on the runtime, a timer on the reactor's timers.
pub mod rt {
    use super::Accept;
    use schedlab_rt::io::AsyncWrite;
    use schedlab_rt::net::{TcpListener, TcpStream};
    use std::future::Future;
    use std::io;
    use std::os::fd::AsRawFd;
    use std::pin::Pin;
    use std::task::{ready, Context, Poll};
    use std::time::{Duration, Instant};

    /// The runtime's TCP stream (`schedlab_rt::net::Async<std::net::TcpStream>`) as hyper's
    /// `rt::Read` and `rt::Write`.
    #[derive(Debug)]
    pub struct RtTcp(pub TcpStream);

    impl hyper::rt::Read for RtTcp {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            mut buf: hyper::rt::ReadBufCursor<'_>,
        ) -> Poll<io::Result<()>> {
            // As `Async`'s own `poll_read` (a short read clears the readiness), but
            // `recv` straight into hyper's unfilled (possibly uninitialised) buffer,
            // without zeroing it first.
            // SAFETY: only the length is read.
            let want = unsafe { buf.as_mut().len() };
            let n = ready!(self.0.poll_read_some(cx, want, |s| {
                let fd = s.as_raw_fd();
                loop {
                    // SAFETY: `recv` writes at most `dst.len()` bytes into `dst` and
                    // never de-initialises any; `advance` is called with the count.
                    let n = unsafe {
                        let dst = buf.as_mut();
                        libc::recv(fd, dst.as_mut_ptr().cast(), dst.len(), 0)
                    };
                    if n >= 0 {
                        return Ok(n as usize);
                    }
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }))?;
            // SAFETY: the kernel initialised `n` bytes of the unfilled part.
            unsafe { buf.advance(n) };
            Poll::Ready(Ok(()))
        }
    }

    impl hyper::rt::Write for RtTcp {
        fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            Pin::new(&mut self.0).poll_write(cx, buf)
        }
        fn poll_write_vectored(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            bufs: &[io::IoSlice<'_>],
        ) -> Poll<io::Result<usize>> {
            Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
        }
        fn is_write_vectored(&self) -> bool {
            true
        }
        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_flush(cx)
        }
        fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_close(cx)
        }
    }

    impl Accept for TcpListener {
        type Io = RtTcp;
        async fn accept(&mut self) -> io::Result<RtTcp> {
            let (s, _) = TcpListener::accept(self).await?;
            s.get_ref().set_nodelay(true)?;
            Ok(RtTcp(s))
        }
    }

    /// hyper's `Executor` on schedlab's runtime: `schedlab_rt::spawn` (from inside a
    /// task of the runtime), the task detached.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct RtExecutor;

    impl<F> hyper::rt::Executor<F> for RtExecutor
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        fn execute(&self, fut: F) {
            drop(schedlab_rt::spawn(fut));
        }
    }

    /// hyper's `Timer` on the runtime's timers (its reactor).
    #[derive(Clone, Copy, Debug, Default)]
    pub struct RtTimer;

    /// A sleep of [`RtTimer`].
    #[derive(Debug)]
    pub struct RtSleep(schedlab_rt::time::Timer);

    impl Future for RtSleep {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            Pin::new(&mut self.0).poll(cx).map(drop)
        }
    }

    impl hyper::rt::Sleep for RtSleep {}

    impl hyper::rt::Timer for RtTimer {
        fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
            Box::pin(RtSleep(schedlab_rt::time::Timer::after(duration)))
        }
        fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
            Box::pin(RtSleep(schedlab_rt::time::Timer::at(deadline)))
        }
        fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, new_deadline: Instant) {
            match sleep.as_mut().downcast_mut_pin::<RtSleep>() {
                Some(mut s) => s.0.set_at(new_deadline),
                None => *sleep = self.sleep_until(new_deadline),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_have_their_sizes() {
        let site = Site::new();
        for &(path, size) in PAGES {
            let b = site.get(path).expect("page");
            assert_eq!(b.len(), size, "{path}");
            assert!(b.starts_with(b"<!DOCTYPE html>"));
        }
        assert!(site.get("/nope").is_none());
    }
}
