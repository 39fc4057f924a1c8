//! `schedlab-peer-tokio [--quick] [--only SUBSTR]`: schedlab's async benchmark programs
//! (`schedlab-bench`) on Tokio's multi-thread runtime with 2 workers; prints the rows
//! as a JSON array on stdout and progress on stderr. `schedlab bench` runs it.

use schedlab_bench::{programs, row, runtimes, ChanRx, ChanTx, Channels, Exec, Filter, Scale};
use std::future::Future;
use std::process::ExitCode;

/// Tokio's multi-thread runtime as an [`Exec`].
pub struct TokioExec {
    rt: tokio::runtime::Runtime,
    workers: usize,
}

impl TokioExec {
    /// A multi-thread runtime with `workers` workers.
    pub fn new(workers: usize) -> TokioExec {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).build().expect("tokio runtime");
        TokioExec { rt, workers }
    }
}

async fn join<T>(h: tokio::task::JoinHandle<T>) -> T {
    match h.await {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

impl Exec for TokioExec {
    type Chan = TokioMpsc;
    fn runtime(&self) -> &str {
        runtimes::TOKIO
    }
    fn policy(&self) -> String {
        format!("multi_thread({})", self.workers)
    }
    fn placement(&self) -> bool {
        false
    }
    fn block_on<F>(&self, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.rt.block_on(f)
    }
    fn spawn_on<T, F>(&self, _worker: usize, f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        join(self.rt.spawn(f))
    }
    fn spawn<T, F>(f: F) -> impl Future<Output = T> + Send + 'static
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        join(tokio::spawn(f))
    }
    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }
}

/// `tokio::sync::mpsc`'s unbounded channel, Tokio's own.
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

fn main() -> ExitCode {
    let mut quick = false;
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--only" => match args.next() {
                Some(s) => only = Some(s),
                None => {
                    eprintln!("schedlab-peer-tokio: --only needs a value");
                    return ExitCode::from(2);
                }
            },
            _ => {
                eprintln!("schedlab-peer-tokio: unknown argument '{a}' (usage: [--quick] [--only SUBSTR])");
                return ExitCode::from(2);
            }
        }
    }
    let exec = TokioExec::new(2);
    let rows = programs::suite(&exec, &Scale::new(quick), &Filter(only), &mut |what| eprintln!("  {what}"));
    print!("{}", row::to_json(&rows));
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_bench::{AsyncChannel, ChatSize, HackSize};
    use std::time::Duration;

    #[test]
    fn programs_run_on_tokio() {
        let e = TokioExec::new(2);
        let b = Duration::from_millis(5);
        for cross in [false, true] {
            assert!(programs::pingpong::<_, TokioMpsc>(&e, cross, b) > 0.0);
            assert!(programs::pingpong::<_, AsyncChannel>(&e, cross, b) > 0.0);
        }
        assert!(programs::local_dispatch(&e, b) > 0.0);
        assert!(programs::spawn_throughput(&e, b) > 0.0);
        let (cs, hs) = (ChatSize { rooms: 2, users: 5, messages: 7 }, HackSize { groups: 2, fds: 4, loops: 5 });
        assert!(programs::chat::<_, TokioMpsc>(&e, cs) > 0.0);
        assert!(programs::chat::<_, AsyncChannel>(&e, cs) > 0.0);
        assert!(programs::hackbench::<_, TokioMpsc>(&e, hs) > 0.0);
        assert!(programs::hackbench::<_, AsyncChannel>(&e, hs) > 0.0);
    }

    #[test]
    fn suite_rows_follow_the_filter() {
        let e = TokioExec::new(2);
        let mut scale = Scale::quick();
        scale.budget = Duration::from_millis(5);
        scale.reps = 1;
        scale.hackbench = HackSize { groups: 1, fds: 4, loops: 3 };
        let rows = programs::suite(&e, &scale, &Filter(Some("hackbench".into())), &mut |_| {});
        assert_eq!(rows.len(), 2, "hackbench with tokio's mpsc and with async-channel");
        assert_eq!((rows[0].bench.as_str(), rows[0].runtime.as_str()), ("hackbench", "tokio"));
        assert_eq!(rows[0].unit, "messages/s");
        assert!(programs::suite(&e, &scale, &Filter(Some("nothing".into())), &mut |_| {}).is_empty());
    }
}
