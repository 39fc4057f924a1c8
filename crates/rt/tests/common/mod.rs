#![allow(dead_code)]
use schedlab_rt::{Builder, Runtime};

/// Every scheduler the runtime offers, as tested.
pub const POLICIES: &[&str] = &["fast", "dss", "mqs", "pmqs:pool=1,lb=lbp,period=10"];

pub fn rt(policy: &str) -> Runtime {
    Builder::new().workers(2).policy(policy).build().unwrap()
}
