//! Event-to-event spreads of the varied prices (`schedlab_validate::spread`), alone:
//! `cargo run --release -p schedlab-validate --example spread [quick]`.
fn main() {
    let quick = std::env::args().nth(1).as_deref() == Some("quick");
    match schedlab_validate::spread::measure(quick) {
        Ok(s) => {
            println!("clock step {:.1} ns", s.step_ns);
            for o in &s.ops {
                println!(
                    "{:10} median {:6.1} ns  cv {:5.1} % (batches of K/4: {:5.1} %)  batch p10/p50/p90 {:.0}/{:.0}/{:.0}",
                    o.name,
                    o.median_ns,
                    o.cv * 100.0,
                    o.cv_small * 100.0,
                    o.batch_ns[0],
                    o.batch_ns[1],
                    o.batch_ns[2]
                );
            }
            println!("cost_jitter_pct = {}", s.jitter_pct());
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}
