//! # schedlab-sim: a deterministic discrete-event simulator of SMP/NUMA machines
//!
//! The simulator runs schedlab policies (the same code the runtime uses) on a modelled
//! machine: CPUs in NUMA nodes, a timer tick, context-switch and IPI costs, run-queue
//! locks in virtual time, and a cache-coherence model for the lines a scheduler
//! touches. Workloads are task programs from `schedlab-workloads`.
//!
//! ```no_run
//! use schedlab_sim::{simulate, Machine, SimConfig};
//! let machine = Machine::preset("smp-8").unwrap();
//! let policy = schedlab_core::PolicySpec::parse("mqs").unwrap();
//! let workload = schedlab_workloads::parse_workload("chat:rooms=10,messages=100").unwrap();
//! let report = simulate(&machine, &policy, &workload, &SimConfig::default()).unwrap();
//! println!("{}", report.to_text());
//! ```

pub mod cost;
pub mod engine;
pub mod events;
pub mod machine;
pub mod platform;
pub mod report;

pub use cost::{CostModel, CostParams};
pub use engine::{simulate, SimConfig, SimError};
pub use machine::{Machine, MachineError};
pub use report::{Report, RqSeries};
