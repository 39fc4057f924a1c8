//! MQS placeholder (being written).
use crate::cpu::Topology;
use crate::platform::Platform;
pub struct Mqs<P: Platform>(crate::policies::dss::Dss<P>);
impl<P: Platform> Mqs<P> {
    pub fn new(p: &P, topo: &Topology, capacity: usize, hz: u32) -> Self {
        Mqs(crate::policies::dss::Dss::new(p, topo, capacity, hz))
    }
}
