#![allow(dead_code)]
use schedlab_rt::{Builder, Runtime};

/// Every scheduler the runtime offers, as tested: each registry entry in its example
/// configuration (runtime-native ones first, as `schedlab bench` runs them), so that a
/// policy added to the registry is covered here without editing this list.
pub fn policies() -> Vec<&'static str> {
    schedlab_core::policies::runtime_examples()
}

pub fn rt(policy: &str) -> Runtime {
    Builder::new().workers(2).policy(policy).build().unwrap()
}
