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

/// What a policy knows about the machine: CPU count, the NUMA node of each CPU and
/// the nodes' distances (the firmware's SLIT, which Linux reads into `node_distance`).
/// Costs are not here: they belong to the platform.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Topology {
    /// `node_of[cpu]` is the NUMA node (quad) of `cpu`; all zero on an SMP.
    pub node_of: Vec<usize>,
    /// `distance[a][b]`: SLIT-style distance from node `a` to node `b` (10 = local).
    /// Empty: [`LOCAL_DISTANCE`] within a node, [`REMOTE_DISTANCE`] between nodes.
    pub distance: Vec<Vec<u32>>,
}

/// A node's distance to itself (`LOCAL_DISTANCE`, Linux `include/linux/topology.h`).
pub const LOCAL_DISTANCE: u32 = 10;
/// The distance between two nodes when the firmware gives none (`REMOTE_DISTANCE`,
/// Linux `include/linux/topology.h`).
pub const REMOTE_DISTANCE: u32 = 20;

impl Topology {
    /// A flat SMP of `n` CPUs.
    pub fn smp(n: usize) -> Topology {
        Topology { node_of: vec![0; n], distance: Vec::new() }
    }
    /// CPUs on the nodes `node_of` gives, at the default distances.
    pub fn nodes(node_of: Vec<usize>) -> Topology {
        Topology { node_of, distance: Vec::new() }
    }
    /// The distance from node `a` to node `b` (`node_distance`).
    pub fn node_distance(&self, a: usize, b: usize) -> u32 {
        match self.distance.get(a).and_then(|row| row.get(b)) {
            Some(&d) => d,
            None if a == b => LOCAL_DISTANCE,
            None => REMOTE_DISTANCE,
        }
    }
    pub fn ncpus(&self) -> usize {
        self.node_of.len()
    }
    pub fn nnodes(&self) -> usize {
        self.node_of.iter().copied().max().map_or(0, |m| m + 1)
    }
}
