//! Probe: what reading K lines the other CPU wrote last costs per
//! line, as a dependent chain, as a chain whose lines are also written, and as
//! independent loads (`schedlab_validate::linexfer`; the calibration measures K = 16
//! for the host machine's `mlp`). `target/release/examples/linexfer`

use schedlab_validate::linexfer::{cold_hot, measure, mlp_of, Pass, K};

fn main() {
    for k in [1usize, 4, 16, 64] {
        for (name, how) in
            [("chain", Pass::Chain), ("chain+write", Pass::ChainWrite), ("independent", Pass::Independent)]
        {
            let (cold, hot) = cold_hot(k, 20_000, how);
            println!("k {k:3} {name:12} cold {cold:6.0} hot {hot:6.0} ns → {:6.1} ns a line", (cold - hot) / k as f64);
        }
    }
    let (chain, independent) = measure(20_000);
    println!(
        "calibration (K = {K}): chain {chain:.1} ns a line, independent {independent:.1}: mlp {}",
        mlp_of(chain, independent)
    );
}
