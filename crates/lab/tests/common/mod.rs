//! A small experiment matrix shared by the tests that compare a sweep's files byte for
//! byte (resumed against whole, split over ranks against whole).

/// 2 machines × 3 policies × 2 workloads × 2 seeds, named `name`.
pub fn matrix(name: &str) -> String {
    format!(
        r#"
name = "{name}"
machines = ["smp-2", "smp-4"]
policies = ["dss", "mqs", "pmqs:pool=2,lb=lbp,period=10"]
workloads = ["pingpong:rounds=300", "chat:rooms=1,messages=5"]
seeds = [1, 2]
baseline = "mqs"
"#
    )
}

/// The deterministic output files of a sweep (`timing.json`, the wall clock, aside).
pub const OUTPUTS: [&str; 4] = ["results.json", "results.csv", "table.md", "chart.svg"];
