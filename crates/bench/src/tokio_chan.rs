//! `tokio::sync::mpsc` as a [`Channels`] family. Tokio's own channel; it needs no Tokio
//! runtime (outside one its cooperative budget is never spent), so schedlab's runtime
//! runs the same programs with it too (the `/tokio-mpsc` rows).

use crate::{ChanRx, ChanTx, Channels};
use std::future::Future;

/// `tokio::sync::mpsc`'s unbounded channel.
pub struct TokioMpsc;

impl Channels for TokioMpsc {
    const NAME: &'static str = "tokio::sync::mpsc";
    type Tx<T: Send + 'static> = Tx<T>;
    type Rx<T: Send + 'static> = Rx<T>;
    fn unbounded<T: Send + 'static>() -> (Self::Tx<T>, Self::Rx<T>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (Tx(tx), Rx(rx))
    }
}

/// Tokio's unbounded sender (local newtypes: the orphan rule).
pub struct Tx<T>(tokio::sync::mpsc::UnboundedSender<T>);

/// Tokio's unbounded receiver.
pub struct Rx<T>(tokio::sync::mpsc::UnboundedReceiver<T>);

impl<T> Clone for Tx<T> {
    fn clone(&self) -> Self {
        Tx(self.0.clone())
    }
}

impl<T: Send + 'static> ChanTx<T> for Tx<T> {
    fn send(&self, msg: T) {
        if self.0.send(msg).is_err() {
            panic!("tokio mpsc: receiver gone");
        }
    }
}

impl<T: Send + 'static> ChanRx<T> for Rx<T> {
    fn recv(&mut self) -> impl Future<Output = Option<T>> + Send {
        self.0.recv()
    }
}
