//! Diagnosis aid: the cross-CPU micro-benchmarks of the calibration, printed.
fn main() {
    let quick = std::env::args().nth(1).is_some_and(|a| a == "quick");
    let (tx, rx) = async_channel::unbounded::<()>();
    let t = std::time::Instant::now();
    for _ in 0..100_000 {
        tx.try_send(()).unwrap();
        rx.try_recv().unwrap();
    }
    let pair = t.elapsed().as_nanos() as f64 / 1e5;
    for _ in 0..3 {
        println!("{:?}", schedlab_validate::xcpu::measure(quick, pair));
    }
}
