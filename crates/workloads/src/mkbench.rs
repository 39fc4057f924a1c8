//! Mkbench: several parallel kernel builds (`make -j J`) at once (the PMQS paper, S1 in
//! docs/sources.md).
//!
//! `mkbench:builds=B,jobs=J,units=U[,unit_min=..,unit_max=..,io_ns=..,link=..]`
//!
//! The PMQS paper's Mkbench runs "multiple parallel compilations of the Linux kernel";
//! its runnable-task count is about the `-j` value. The configuration (J values,
//! number of concurrent builds, unit times) and the metric of its tables are
//! **[UNKNOWN]** (the tables are not recovered); every default below is therefore a documented
//! guess, and every one is a parameter.
//!
//! | task | process | program |
//! |------|---------|---------|
//! | root  | shell (mm 1) | `Spawn make` × B; `Exit` |
//! | `make` of build b | mm 2 + 2b | `Loop min(J,U) { Spawn job }`; `Loop U−J { Recv done[b]; Spawn job }`; `Loop min(J,U) { Recv done[b] }`; `Compute link`; `Exit` |
//! | `job` (one compile unit) | mm 3 + 2b | `Sleep io; ComputeUniform unit_min..=unit_max; Sleep io; Send done[b]; Exit` |
//!
//! **Job slots.** Channel `done[b] = b` is build b's job-slot semaphore: `make` starts
//! with J free slots (it spawns the first `min(J, U)` jobs without waiting — the
//! pre-filled slots), and from then on receives one "slot free" message, sent by a
//! finishing job, before spawning each further job. After the last unit it waits for
//! the J outstanding jobs and runs the final link step. So at most J compile jobs of a
//! build exist at any time, and about J are runnable (minus those in I/O waits).
//!
//! **Metric.** Every received `done` message is a job completion, so the reported
//! throughput is **jobs/s** (`counted` = the `done` channels, B·U in total). The
//! benchmark's real metric is the **completion time** of all builds, which is the run's
//! `virtual_ns` (completion time = virtual_ns; compare policies by it, as % vs MQS).
//!
//! **Defaults [UNKNOWN]-derived:** `builds=2`, `jobs=8` (J between #CPUs and 4×#CPUs,
//! the paper's range; 8 = #CPUs of the 8-way), `units=64`, compile unit CPU time uniform in
//! 50–400 ms at 700 MHz (`unit_min=35000000`, `unit_max=280000000` cycles), I/O waits
//! `io_ns=2000000` (2 ms) before (reading sources/headers) and after (writing the
//! object) each unit, `link=350000000` cycles (500 ms at 700 MHz). All compile jobs of a
//! build share one address-space id (they are separate `cc1` processes in reality; the
//! instruction set gives one `params` per `Spawn`), distinct from `make`'s.
//!
//! `expected_tasks = 1 + B·(1 + U)`, `expected_messages = B·U`.

use crate::spec::WorkloadKind;
use crate::{in_mm, push_loop, Footprint, Metric, Op, Program, Workload};
use schedlab_core::options::{self, Options, Param};
use schedlab_core::SpecError;
use schedlab_core::{int_param, time_param};

/// Parameters of a Mkbench run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MkbenchParams {
    /// Concurrent builds B (default 2).
    pub builds: u32,
    /// `make -j` J per build (default 8).
    pub jobs: u32,
    /// Compile units per build U (default 64).
    pub units: u32,
    /// Shortest compile unit, cycles (default 35,000,000 = 50 ms at 700 MHz).
    pub unit_min: u64,
    /// Longest compile unit, cycles (default 280,000,000 = 400 ms at 700 MHz).
    pub unit_max: u64,
    /// Each of the two I/O waits of a unit, ns (default 2 ms; 0 = none).
    pub io_ns: u64,
    /// Final link step, cycles (default 350,000,000 = 500 ms at 700 MHz; 0 = none).
    pub link: u64,
}

impl Default for MkbenchParams {
    fn default() -> Self {
        MkbenchParams {
            builds: 2,
            jobs: 8,
            units: 64,
            unit_min: 35_000_000,
            unit_max: 280_000_000,
            io_ns: 2_000_000,
            link: 350_000_000,
        }
    }
}

impl Options for MkbenchParams {
    const PARAMS: &'static [Param<MkbenchParams>] = &[
        int_param!(builds, 1, 256, "concurrent builds B").always(),
        int_param!(jobs, 1, 4096, "make -j J per build").always(),
        int_param!(units, 1, 1_000_000, "compile units per build U").always(),
        int_param!(unit_min, 0, 100_000_000_000, "shortest compile unit").unit("cycles"),
        int_param!(unit_max, 0, 100_000_000_000, "longest compile unit").unit("cycles"),
        time_param!(io_ns, 0, 10_000_000_000, "each of the two I/O waits of a unit (0: none)").bare_ns(),
        int_param!(link, 0, 100_000_000_000, "final link step (0: none)").unit("cycles"),
    ];

    fn check_across(&self) -> Result<(), String> {
        match self.unit_min <= self.unit_max {
            true => Ok(()),
            false => Err(format!("unit_min={} is greater than unit_max={}", self.unit_min, self.unit_max)),
        }
    }
}

impl WorkloadKind for MkbenchParams {
    const NAME: &'static str = "mkbench";
    const SUMMARY: &'static str = "B concurrent `make -j J` builds of U compile units each";
    /// Build the workload (see the module documentation for its shape).
    /// Tasks, channels and program operations of [`MkbenchParams::build`].
    fn footprint(&self) -> Footprint {
        let b = self.builds as u64;
        Footprint { tasks: 1 + b * (1 + self.units as u64), channels: b, ops: (b + 1) + b * (9 + 5) }
    }

    fn build(&self) -> Result<Workload, SpecError> {
        WorkloadKind::check(self)?;
        let &MkbenchParams { builds, jobs, units, unit_min, unit_max, io_ns, link } = self;
        let first = jobs.min(units);
        // Program ids: 0 = root, then per build b: 1 + 2b = make, 2 + 2b = job.
        let make = |b: u32| 1 + 2 * b;
        let job = |b: u32| 2 + 2 * b;
        let mut programs = Vec::with_capacity(1 + 2 * builds as usize);
        let mut root: Vec<Op> = (0..builds).map(|b| Op::Spawn { program: make(b), params: in_mm(2 + 2 * b) }).collect();
        root.push(Op::Exit);
        programs.push(Program { role: "root".into(), ops: root });
        for b in 0..builds {
            let spawn = Op::Spawn { program: job(b), params: in_mm(3 + 2 * b) };
            let done = Op::Recv { chan: b };
            let mut ops = Vec::with_capacity(8);
            push_loop(&mut ops, first, &[spawn]);
            if units > first {
                push_loop(&mut ops, units - first, &[done, spawn]);
            }
            push_loop(&mut ops, first, &[done]);
            if link > 0 {
                ops.push(Op::Compute { cycles: link });
            }
            ops.push(Op::Exit);
            programs.push(Program { role: "make".into(), ops });

            let mut ops = Vec::with_capacity(5);
            if io_ns > 0 {
                ops.push(Op::Sleep { ns: io_ns });
            }
            ops.push(Op::ComputeUniform { min: unit_min, max: unit_max });
            if io_ns > 0 {
                ops.push(Op::Sleep { ns: io_ns });
            }
            ops.push(Op::Send { chan: b, bytes: 1 });
            ops.push(Op::Exit);
            programs.push(Program { role: "job".into(), ops });
        }
        let (b, u) = (builds as u64, units as u64);
        Ok(Workload {
            spec: options::canonical(Self::NAME, self),
            programs,
            channels: builds,
            root: 0,
            root_params: in_mm(1),
            metric: Metric::counting("jobs/s", vec![true; builds as usize]),
            expected_messages: b * u,
            expected_tasks: 1 + b * (1 + u),
            bound: Vec::new(),
            working_set: Vec::new(),
            buffers: Vec::new(),
        })
    }
}
