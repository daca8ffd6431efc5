//! Three-tier fat-tree (Al-Fares, Loukissas & Vahdat, SIGCOMM 2008).
//!
//! Generalised to explicit sizes so that seed 004's fabric fits: 5 pods of
//! 4 ToR + 4 aggregation switches, 16 hosts per ToR, 16 cores (320 hosts,
//! 56 switches). Within a pod every ToR connects to every aggregation switch;
//! aggregation switch j of every pod connects to core group j, i.e. cores
//! j*g .. (j+1)*g with g = cores / aggs_per_pod. The k-ary fat-tree is
//! pods = k, tors_per_pod = aggs_per_pod = hosts_per_tor = k/2, cores = (k/2)^2.

use super::topology::Topology;
use crate::sim::SimTime;

/// Sizes of a 3-tier fat-tree.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FatTreeShape {
    pub pods: u32,
    pub tors_per_pod: u32,
    pub aggs_per_pod: u32,
    pub hosts_per_tor: u32,
    pub cores: u32,
}

impl FatTreeShape {
    pub fn k_ary(k: u32) -> FatTreeShape {
        FatTreeShape { pods: k, tors_per_pod: k / 2, aggs_per_pod: k / 2, hosts_per_tor: k / 2, cores: k * k / 4 }
    }
    pub fn hosts(&self) -> u32 {
        self.pods * self.tors_per_pod * self.hosts_per_tor
    }
    pub fn switches(&self) -> u32 {
        self.pods * (self.tors_per_pod + self.aggs_per_pod) + self.cores
    }
}

pub fn build(s: FatTreeShape, host: (u64, SimTime), fabric: (u64, SimTime), core: (u64, SimTime)) -> Topology {
    let mut t = Topology::default();
    let g = s.cores / s.aggs_per_pod;
    let cores: Vec<_> = (0..s.cores).map(|i| t.add_switch(format!("core{i}"))).collect();
    let mut host_no = 0;
    for p in 0..s.pods {
        let aggs: Vec<_> = (0..s.aggs_per_pod).map(|j| t.add_switch(format!("agg{p}_{j}"))).collect();
        for (j, &a) in aggs.iter().enumerate() {
            for c in 0..g {
                t.connect(a, cores[(j as u32 * g + c) as usize], core.0, core.1);
            }
        }
        for i in 0..s.tors_per_pod {
            let tor = t.add_switch(format!("tor{p}_{i}"));
            for &a in &aggs {
                t.connect(tor, a, fabric.0, fabric.1);
            }
            for _ in 0..s.hosts_per_tor {
                let h = t.add_host(format!("h{host_no}"));
                host_no += 1;
                t.connect(h, tor, host.0, host.1);
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn seed_004_shape() {
        let s = FatTreeShape { pods: 5, tors_per_pod: 4, aggs_per_pod: 4, hosts_per_tor: 16, cores: 16 };
        assert_eq!(s.hosts(), 320);
        assert_eq!(s.switches(), 56);
        let t = build(s, (100_000_000_000, SimTime(500_000)), (400_000_000_000, SimTime(500_000)), (400_000_000_000, SimTime(500_000)));
        assert_eq!(t.num_hosts(), 320);
        // every core has one link per pod
        for &c in &t.switches[..16] {
            assert_eq!(t.nodes[c as usize].ports.len(), 5);
        }
    }
    #[test]
    fn k_ary() {
        let s = FatTreeShape::k_ary(8);
        assert_eq!(s.hosts(), 128);
        assert_eq!(s.switches(), 80);
        let t = build(s, (1, SimTime(1)), (1, SimTime(1)), (1, SimTime(1)));
        // every switch has radix k
        for &sw in &t.switches {
            assert_eq!(t.nodes[sw as usize].ports.len(), 8);
        }
    }
}
