//! The async I/O traits the sockets of [`crate::net`] implement, and their extension
//! methods (`futures-io`'s traits, through `futures-lite`).

pub use futures_lite::io::{split, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
