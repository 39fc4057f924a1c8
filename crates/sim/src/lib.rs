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

//!
//! ## Files
//!
//! | file | what |
//! |------|------|
//! | `cachecheck/` | the L2 model of `platform/cache.rs` against cachegrind on one run-queue walk (`schedlab cachecheck`): the walk (`walk.rs`), the model side, the replay run under valgrind (`replay.rs`) and its counts (`cachegrind.rs`) |
//! | `machine.rs` | [`Machine`]: presets and TOML machine files |
//! | `machine/costs.rs` | [`CostParams`]: a machine's cost parameters (kernel, hardware, host knobs) and their presets |
//! | `cost.rs` | [`CostModel`]: the cost parameters resolved to ns for the event loop |
//! | `config.rs` | [`SimConfig`] and [`SimError`] |
//! | `engine.rs` | [`simulate`], the event loop and the CPU state machine (step, interrupt, tick, schedule, IPIs) |
//! | `engine/exec.rs` | tasks executing their programs, one op at a time; channels |
//! | `engine/checks.rs` | invariant and progress (deadlock) checks |
//! | `events.rs` | the event kinds and the sleep-timer queue |
//! | `lockwait.rs` | [`lockwait::Backoff`]: when a contended lock's waiter sees the release (its back-off) |
//! | `platform/mod.rs` | [`platform::SimPlatform`]: the policies' view of the machine; its state, the call's cursor, reschedule IPIs, the `Platform` trait |
//! | `platform/layout.rs` | where every modelled line lives: indices, kernel-layout addresses, classes |
//! | `platform/coherence.rs` | a touch: MESI-like coherence, misses, bus transactions |
//! | `platform/cache.rs` | each CPU's set-associative L2 |
//! | `platform/overlap.rs` | overlapped misses (`mlp`) and the store buffer |
//! | `platform/locks.rs` | virtual-time locks, a waiter's back-off, Lockmeter statistics |
//! | `platform/trace.rs` | the scheduling trace of a traced run |
//! | `recorder.rs` | counters, run-queue sampling, each `schedule()`'s queue length and walk, wake-up latencies; builds the [`Report`] |
//! | `report.rs` | [`Report`]: JSON and text output |

pub mod cachecheck;
pub mod config;
pub mod cost;
pub mod engine;
pub mod events;
pub mod jitter;
pub mod lockwait;
pub mod machine;
pub mod platform;
mod recorder;
pub mod report;

pub use config::{Progress, ProgressFn, SimConfig, SimError};
pub use cost::CostModel;
pub use engine::{simulate, simulate_traced};
pub use machine::{CostParams, HardwareCosts, HostKnobs, KernelCosts, Machine, MachineError, TaskStruct, TickPhase};
pub use report::{Report, RoleStats, RqSeries, StatSummary};
