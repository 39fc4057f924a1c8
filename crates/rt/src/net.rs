//! Sockets on the runtime's reactor (`reactor/`; docs/architecture.md, "The runtime's
//! I/O path").
//!
//! [`Async<T>`] is a standard-library socket in non-blocking mode, registered with the
//! reactor: an operation that would block clears the socket's readiness, registers the
//! task's waker and returns `Pending` (a short stream read or write clears the
//! readiness too, and the next operation waits for the reactor:
//! `Async::poll_read_some`); readiness fires the waker on the thread that drives the
//! reactor — an idle or busy worker — through the scheduler's ordinary wake
//! path. They work under every scheduler, and in `block_on`, while a runtime is
//! running (its workers drive the reactor).
//!
//! Streams implement `AsyncRead`/`AsyncWrite` (the `futures-io` traits), also through
//! `&Async<T>` so that one task can read while another writes; the extension methods
//! (`read`, `write_all`, `read_exact`, ...) are in [`crate::io`]. The constructors:
//! `TcpListener::bind(addr)`, `listener.accept()`, `TcpStream::connect(addr)`,
//! `UdpSocket::bind(addr)`, `sock.send_to(..)`, `sock.recv_from(..)`,
//! `UnixListener::bind(path)`, `UnixStream::connect(path)`, `UnixStream::pair()`;
//! `Async::new(socket)` wraps any other socket (any `AsRawFd` that epoll accepts).
//! One task at a time waits on each direction of a socket (a second one takes the
//! first one's place, and the first is woken to poll again).

use crate::reactor::source::{Direction, ScheduledIo};
use crate::reactor::{self, Reactor};
use futures_lite::io::{AsyncRead, AsyncWrite};
use std::future::poll_fn;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, RawFd};
use std::os::unix::net as unix;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

/// A socket registered with the reactor.
pub struct Async<T: AsRawFd> {
    reactor: &'static Reactor,
    key: usize,
    ready: Arc<ScheduledIo>,
    /// `None` only inside `into_inner`, after deregistering.
    io: Option<T>,
}

/// A TCP listener: `TcpListener::bind(addr)?`, then `listener.accept().await?`.
pub type TcpListener = Async<std::net::TcpListener>;
/// A TCP stream: `TcpStream::connect(addr).await?`.
pub type TcpStream = Async<std::net::TcpStream>;
/// A UDP socket: `UdpSocket::bind(addr)?`.
pub type UdpSocket = Async<std::net::UdpSocket>;
/// A Unix-domain stream listener: `UnixListener::bind(path)?`.
pub type UnixListener = Async<unix::UnixListener>;
/// A Unix-domain stream: `UnixStream::connect(path).await?` or `UnixStream::pair()?`.
pub type UnixStream = Async<unix::UnixStream>;
/// A Unix-domain datagram socket.
pub type UnixDatagram = Async<unix::UnixDatagram>;

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: `fcntl` on a descriptor the caller owns, with integer arguments.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    if flags & libc::O_NONBLOCK == 0 {
        // SAFETY: as above.
        if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

impl<T: AsRawFd> Async<T> {
    /// Put `io` in non-blocking mode and register it with the reactor.
    pub fn new(io: T) -> io::Result<Async<T>> {
        let fd = io.as_raw_fd();
        set_nonblocking(fd)?;
        let reactor = reactor::get()?;
        let (key, ready) = reactor.register(fd)?;
        Ok(Async { reactor, key, ready, io: Some(io) })
    }

    /// The socket.
    pub fn get_ref(&self) -> &T {
        self.io.as_ref().expect("registered socket")
    }

    /// The socket, deregistered (still in non-blocking mode).
    pub fn into_inner(mut self) -> io::Result<T> {
        let io = self.io.take().expect("registered socket");
        self.reactor.deregister(io.as_raw_fd(), self.key);
        Ok(io)
    }

    /// Run `op` until it does not return `WouldBlock`: at once if the socket may be
    /// ready for `dir`, otherwise after the reactor reports it. A result for which
    /// `drained` holds clears `dir` too (see [`Async::poll_io_some`]).
    fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        dir: Direction,
        mut op: impl FnMut(&T) -> io::Result<R>,
        drained: impl Fn(&R) -> bool,
    ) -> Poll<io::Result<R>> {
        loop {
            let tick = ready!(self.ready.poll_ready(cx, dir));
            match op(self.get_ref()) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.ready.clear(dir, tick),
                r => {
                    if r.as_ref().is_ok_and(&drained) {
                        self.ready.clear(dir, tick);
                    }
                    return Poll::Ready(r);
                }
            }
        }
    }

    /// [`Async::poll_io`] for a stream operation that moves at most `len` bytes: a short
    /// one (more than 0, fewer than `len`) also clears `dir`. Under edge-triggered epoll
    /// a short read shows the receive buffer drained (a short write, the send buffer
    /// full), so the next operation waits for the next edge instead of making the
    /// system call that would only return `WouldBlock`: one call less per message of a
    /// request-reply protocol (Tokio's `PollEvented` does the same). An edge that came
    /// after the operation is kept: the clear names the tick it saw.
    fn poll_io_some(
        &self,
        cx: &mut Context<'_>,
        dir: Direction,
        len: usize,
        op: impl FnMut(&T) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        self.poll_io(cx, dir, op, |&n| n > 0 && n < len)
    }

    /// Poll a stream read into `len` bytes of buffer (`op` returns how many it read):
    /// as [`Async::poll_read_with`], and a short read clears the readiness, saving the
    /// read that would find the buffer empty (see `poll_io_some`). For byte streams
    /// only: a datagram shorter than the buffer says nothing about the next one.
    pub fn poll_read_some(
        &self,
        cx: &mut Context<'_>,
        len: usize,
        op: impl FnMut(&T) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        self.poll_io_some(cx, Direction::Read, len, op)
    }

    /// Poll a stream write of `len` bytes: as [`Async::poll_write_with`], and a short
    /// write clears the writability (the send buffer is full).
    pub fn poll_write_some(
        &self,
        cx: &mut Context<'_>,
        len: usize,
        op: impl FnMut(&T) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        self.poll_io_some(cx, Direction::Write, len, op)
    }

    /// Poll a read-side operation (`recv`, `accept`, ...): `op` is retried whenever the
    /// reactor reports the socket readable, until it does not return `WouldBlock`.
    pub fn poll_read_with<R>(&self, cx: &mut Context<'_>, op: impl FnMut(&T) -> io::Result<R>) -> Poll<io::Result<R>> {
        self.poll_io(cx, Direction::Read, op, |_| false)
    }

    /// Poll a write-side operation: as [`Async::poll_read_with`], on writability.
    pub fn poll_write_with<R>(&self, cx: &mut Context<'_>, op: impl FnMut(&T) -> io::Result<R>) -> Poll<io::Result<R>> {
        self.poll_io(cx, Direction::Write, op, |_| false)
    }

    /// Run a read-side operation to completion (see [`Async::poll_read_with`]).
    pub async fn read_with<R>(&self, mut op: impl FnMut(&T) -> io::Result<R>) -> io::Result<R> {
        poll_fn(|cx| self.poll_io(cx, Direction::Read, &mut op, |_| false)).await
    }

    /// Run a write-side operation to completion.
    pub async fn write_with<R>(&self, mut op: impl FnMut(&T) -> io::Result<R>) -> io::Result<R> {
        poll_fn(|cx| self.poll_io(cx, Direction::Write, &mut op, |_| false)).await
    }

    /// Ready when the socket may be readable: the reactor reported it so and no
    /// operation has found otherwise since (a hint: the next read may still see
    /// `WouldBlock`; prefer [`Async::read_with`]).
    pub fn poll_readable(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.ready.poll_ready(cx, Direction::Read).map(|_| Ok(()))
    }

    /// Ready when the socket may be writable (a hint, as [`Async::poll_readable`]).
    pub fn poll_writable(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.ready.poll_ready(cx, Direction::Write).map(|_| Ok(()))
    }

    /// Wait until the socket may be readable (see [`Async::poll_readable`]).
    pub async fn readable(&self) -> io::Result<()> {
        poll_fn(|cx| self.poll_readable(cx)).await
    }

    /// Wait until the socket may be writable.
    pub async fn writable(&self) -> io::Result<()> {
        poll_fn(|cx| self.poll_writable(cx)).await
    }
}

impl<T: AsRawFd + std::fmt::Debug> std::fmt::Debug for Async<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Async").field("io", &self.io).field("key", &self.key).finish()
    }
}

impl<T: AsRawFd> Drop for Async<T> {
    fn drop(&mut self) {
        if let Some(io) = &self.io {
            self.reactor.deregister(io.as_raw_fd(), self.key);
        }
    }
}

impl<T: AsRawFd> AsRawFd for Async<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.get_ref().as_raw_fd()
    }
}

/// A connect in progress is done when the socket has a peer; its failure is the
/// socket's pending error.
fn connected(peer: io::Result<impl Sized>, error: io::Result<Option<io::Error>>) -> io::Result<()> {
    match peer {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotConnected => match error? {
            Some(e) => Err(e),
            None => Err(io::ErrorKind::WouldBlock.into()),
        },
        Err(e) => Err(e),
    }
}

impl Async<std::net::TcpListener> {
    /// Listen on `addr` (port 0: any free port; `get_ref().local_addr()` tells which).
    pub fn bind(addr: impl Into<SocketAddr>) -> io::Result<TcpListener> {
        Async::new(std::net::TcpListener::bind(addr.into())?)
    }

    /// The next connection.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let (s, addr) = self.read_with(|l| l.accept()).await?;
        Ok((Async::new(s)?, addr))
    }
}

impl Async<std::net::TcpStream> {
    /// Connect to `addr` without blocking the worker.
    pub async fn connect(addr: impl Into<SocketAddr>) -> io::Result<TcpStream> {
        let s = mio::net::TcpStream::connect(addr.into())?;
        // SAFETY: the descriptor comes from `into_raw_fd`, so it is owned by nobody else.
        let s = Async::new(unsafe { std::net::TcpStream::from_raw_fd(s.into_raw_fd()) })?;
        s.write_with(|s| connected(s.peer_addr(), s.take_error())).await?;
        Ok(s)
    }
}

impl Async<std::net::UdpSocket> {
    /// A UDP socket bound to `addr`.
    pub fn bind(addr: impl Into<SocketAddr>) -> io::Result<UdpSocket> {
        Async::new(std::net::UdpSocket::bind(addr.into())?)
    }
    /// Receive a datagram and its sender's address.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.read_with(|s| s.recv_from(buf)).await
    }
    /// Send a datagram to `addr`.
    pub async fn send_to(&self, buf: &[u8], addr: impl Into<SocketAddr>) -> io::Result<usize> {
        let addr = addr.into();
        self.write_with(|s| s.send_to(buf, addr)).await
    }
    /// Receive a datagram from the connected peer.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_with(|s| s.recv(buf)).await
    }
    /// Send a datagram to the connected peer.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.write_with(|s| s.send(buf)).await
    }
}

impl Async<unix::UnixListener> {
    /// Listen on the socket file `path`.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixListener> {
        Async::new(unix::UnixListener::bind(path)?)
    }
    /// The next connection.
    pub async fn accept(&self) -> io::Result<(UnixStream, unix::SocketAddr)> {
        let (s, addr) = self.read_with(|l| l.accept()).await?;
        Ok((Async::new(s)?, addr))
    }
}

impl Async<unix::UnixStream> {
    /// Connect to the socket file `path`.
    pub async fn connect(path: impl AsRef<Path>) -> io::Result<UnixStream> {
        let s = mio::net::UnixStream::connect(path)?;
        // SAFETY: the descriptor comes from `into_raw_fd`, so it is owned by nobody else.
        let s = Async::new(unsafe { unix::UnixStream::from_raw_fd(s.into_raw_fd()) })?;
        s.write_with(|s| connected(s.peer_addr(), s.take_error())).await?;
        Ok(s)
    }
    /// Two connected streams.
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = unix::UnixStream::pair()?;
        Ok((Async::new(a)?, Async::new(b)?))
    }
}

impl Async<unix::UnixDatagram> {
    /// A datagram socket bound to the socket file `path`.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixDatagram> {
        Async::new(unix::UnixDatagram::bind(path)?)
    }
    /// A datagram socket bound to no path.
    pub fn unbound() -> io::Result<UnixDatagram> {
        Async::new(unix::UnixDatagram::unbound()?)
    }
    /// Two connected datagram sockets.
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = unix::UnixDatagram::pair()?;
        Ok((Async::new(a)?, Async::new(b)?))
    }
    /// Receive a datagram and its sender's address.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, unix::SocketAddr)> {
        self.read_with(|s| s.recv_from(buf)).await
    }
    /// Send a datagram to the socket file `path`.
    pub async fn send_to(&self, buf: &[u8], path: impl AsRef<Path>) -> io::Result<usize> {
        let path = path.as_ref();
        self.write_with(|s| s.send_to(buf, path)).await
    }
    /// Receive a datagram from the connected peer.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_with(|s| s.recv(buf)).await
    }
    /// Send a datagram to the connected peer.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.write_with(|s| s.send(buf)).await
    }
}

/// Shut a stream's writing half (`poll_close`).
trait ShutdownWrite {
    fn shutdown_write(&self) -> io::Result<()>;
}
impl ShutdownWrite for std::net::TcpStream {
    fn shutdown_write(&self) -> io::Result<()> {
        self.shutdown(Shutdown::Write)
    }
}
impl ShutdownWrite for unix::UnixStream {
    fn shutdown_write(&self) -> io::Result<()> {
        self.shutdown(Shutdown::Write)
    }
}

/// The stream types whose `&T` reads and writes (the standard library's sockets): the
/// traits on `&Async<T>`, and on `Async<T>` through it.
macro_rules! stream_io {
    ($t:ty) => {
        impl AsyncRead for &Async<$t> {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.poll_read_some(cx, buf.len(), |mut s| s.read(buf))
            }
            fn poll_read_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &mut [IoSliceMut<'_>],
            ) -> Poll<io::Result<usize>> {
                let len = bufs.iter().map(|b| b.len()).sum();
                self.poll_read_some(cx, len, |mut s| s.read_vectored(bufs))
            }
        }
        impl AsyncWrite for &Async<$t> {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.poll_write_some(cx, buf.len(), |mut s| s.write(buf))
            }
            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                let len = bufs.iter().map(|b| b.len()).sum();
                self.poll_write_some(cx, len, |mut s| s.write_vectored(bufs))
            }
            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
            fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.get_ref().shutdown_write())
            }
        }
        impl AsyncRead for Async<$t> {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                Pin::new(&mut &*self).poll_read(cx, buf)
            }
            fn poll_read_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &mut [IoSliceMut<'_>],
            ) -> Poll<io::Result<usize>> {
                Pin::new(&mut &*self).poll_read_vectored(cx, bufs)
            }
        }
        impl AsyncWrite for Async<$t> {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                Pin::new(&mut &*self).poll_write(cx, buf)
            }
            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                Pin::new(&mut &*self).poll_write_vectored(cx, bufs)
            }
            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Pin::new(&mut &*self).poll_flush(cx)
            }
            fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Pin::new(&mut &*self).poll_close(cx)
            }
        }
    };
}

stream_io!(std::net::TcpStream);
stream_io!(unix::UnixStream);
