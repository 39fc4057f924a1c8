//! CPUs, CPU masks and the machine topology a policy may look at.

/// Index of a CPU, `0..ncpus`.
pub type CpuId = usize;

/// A set of CPUs (`cpus_allowed`). schedlab supports up to 64 CPUs per machine,
/// which covers every machine of the original experiments (at most 16-way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CpuMask(pub u64);

/// Largest number of CPUs a machine may have.
pub const MAX_CPUS: usize = 64;

impl CpuMask {
    /// All of the first `n` CPUs.
    pub fn first(n: usize) -> CpuMask {
        if n >= 64 {
            CpuMask(u64::MAX)
        } else {
            CpuMask((1u64 << n) - 1)
        }
    }
    pub fn all() -> CpuMask {
        CpuMask(u64::MAX)
    }
    pub fn single(cpu: CpuId) -> CpuMask {
        CpuMask(1u64 << cpu)
    }
    #[inline]
    pub fn contains(self, cpu: CpuId) -> bool {
        cpu < 64 && self.0 & (1u64 << cpu) != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// What a policy knows about the machine: CPU count and the NUMA node of each CPU.
/// Costs are not here: they belong to the platform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// `node_of[cpu]` is the NUMA node (quad) of `cpu`; all zero on an SMP.
    pub node_of: Vec<usize>,
}

impl Topology {
    /// A flat SMP of `n` CPUs.
    pub fn smp(n: usize) -> Topology {
        Topology { node_of: vec![0; n] }
    }
    pub fn ncpus(&self) -> usize {
        self.node_of.len()
    }
    pub fn nnodes(&self) -> usize {
        self.node_of.iter().copied().max().map_or(0, |m| m + 1)
    }
}
