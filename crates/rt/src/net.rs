//! Sockets on the process's one reactor (`async-io`'s `Async<T>`; docs/architecture.md,
//! "The runtime's I/O path").
//!
//! Each type is the standard library's socket in non-blocking mode, registered with
//! the reactor: an operation that would block registers the task's waker and returns
//! `Pending`; readiness fires the waker from the reactor's thread, through the
//! scheduler's ordinary wake path. They work under every scheduler, and in `block_on`.
//!
//! Streams implement `AsyncRead`/`AsyncWrite` (the `futures-io` traits); the
//! extension methods (`read`, `write_all`, `read_exact`, ...) are in [`crate::io`].
//! The constructors are `async-io`'s: `TcpListener::bind(addr)`, `listener.accept()`,
//! `TcpStream::connect(addr)`, `UdpSocket::bind(addr)`, `sock.send_to(..)`,
//! `sock.recv_from(..)`, `UnixListener::bind(path)`, `UnixStream::connect(path)`,
//! `UnixStream::pair()`; `Async::new(socket)` wraps any other pollable one.

pub use async_io::Async;

/// A TCP listener: `TcpListener::bind(addr)?`, then `listener.accept().await?`.
pub type TcpListener = Async<std::net::TcpListener>;
/// A TCP stream: `TcpStream::connect(addr).await?`.
pub type TcpStream = Async<std::net::TcpStream>;
/// A UDP socket: `UdpSocket::bind(addr)?`.
pub type UdpSocket = Async<std::net::UdpSocket>;
/// A Unix-domain stream listener: `UnixListener::bind(path)?`.
#[cfg(unix)]
pub type UnixListener = Async<std::os::unix::net::UnixListener>;
/// A Unix-domain stream: `UnixStream::connect(path).await?` or `UnixStream::pair()?`.
#[cfg(unix)]
pub type UnixStream = Async<std::os::unix::net::UnixStream>;
/// A Unix-domain datagram socket.
#[cfg(unix)]
pub type UnixDatagram = Async<std::os::unix::net::UnixDatagram>;
