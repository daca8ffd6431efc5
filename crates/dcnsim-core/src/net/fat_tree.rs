//! Three-tier fat-tree (Al-Fares, Loukissas & Vahdat, SIGCOMM 2008).
//!
//! Generalised to explicit sizes so that seed 004's fabric fits: 5 pods of
//! 4 ToR + 4 aggregation switches, 16 hosts per ToR, 16 cores (320 hosts,
//! 56 switches). Within a pod every ToR connects to every aggregation switch.
//! Between aggregation and core, [`CoreWiring`] chooses: Al-Fares's groups
//! (aggregation switch j of every pod to core group j, i.e. cores j*g ..
//! (j+1)*g with g = cores / aggs_per_pod), or every aggregation switch to every
//! core. The k-ary fat-tree is pods = k, tors_per_pod = aggs_per_pod =
//! hosts_per_tor = k/2, cores = (k/2)^2, with groups.

use super::topology::Topology;
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How aggregation switches connect to the cores (one link per connected pair).
#[derive(Deserialize, Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CoreWiring {
    /// Aggregation switch j of every pod to the j-th group of cores / aggs_per_pod cores
    /// (Al-Fares, Loukissas & Vahdat, SIGCOMM 2008, sec. 3.3): a core has one link per pod.
    #[default]
    Groups,
    /// Every aggregation switch to every core: a core has one link per aggregation switch.
    /// Seed 004's "20 agg sw to 16 core sw (1 links)" at "Switch radix: 20" (each of its
    /// 20 aggregation switches has 4 ToR links and 16 core links, each core 20 links).
    All,
}

/// Sizes of a 3-tier fat-tree.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FatTreeShape {
    pub pods: u32,
    pub tors_per_pod: u32,
    pub aggs_per_pod: u32,
    pub hosts_per_tor: u32,
    pub cores: u32,
    pub core_wiring: CoreWiring,
}

impl FatTreeShape {
    pub fn k_ary(k: u32) -> FatTreeShape {
        FatTreeShape { pods: k, tors_per_pod: k / 2, aggs_per_pod: k / 2, hosts_per_tor: k / 2, cores: k * k / 4, core_wiring: CoreWiring::Groups }
    }
    pub fn hosts(&self) -> u32 {
        self.pods * self.tors_per_pod * self.hosts_per_tor
    }
    pub fn switches(&self) -> u32 {
        self.pods * (self.tors_per_pod + self.aggs_per_pod) + self.cores
    }
    /// The cores aggregation switch `j` of a pod connects to.
    fn cores_of(&self, j: u32) -> std::ops::Range<u32> {
        match self.core_wiring {
            CoreWiring::Groups => {
                let g = self.cores / self.aggs_per_pod;
                j * g..(j + 1) * g
            }
            CoreWiring::All => 0..self.cores,
        }
    }
}

pub fn build(s: FatTreeShape, host: (u64, SimTime), fabric: (u64, SimTime), core: (u64, SimTime)) -> Topology {
    let mut t = Topology::default();
    let cores: Vec<_> = (0..s.cores).map(|i| t.add_switch(format!("core{i}"))).collect();
    let mut host_no = 0;
    for p in 0..s.pods {
        let aggs: Vec<_> = (0..s.aggs_per_pod).map(|j| t.add_switch(format!("agg{p}_{j}"))).collect();
        for (j, &a) in aggs.iter().enumerate() {
            for c in s.cores_of(j as u32) {
                t.connect(a, cores[c as usize], core.0, core.1);
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
        let s = FatTreeShape { pods: 5, tors_per_pod: 4, aggs_per_pod: 4, hosts_per_tor: 16, cores: 16, core_wiring: CoreWiring::Groups };
        assert_eq!(s.hosts(), 320);
        assert_eq!(s.switches(), 56);
        let build_it = |s| build(s, (100_000_000_000, SimTime(500_000)), (400_000_000_000, SimTime(500_000)), (400_000_000_000, SimTime(500_000)));
        let t = build_it(s);
        assert_eq!(t.num_hosts(), 320);
        // every core has one link per pod, every aggregation switch 4 ToR and 4 core links
        let radix =
            |t: &Topology, name: &str| t.switches.iter().filter(|&&n| t.nodes[n as usize].name.starts_with(name)).map(|&n| t.nodes[n as usize].ports.len()).collect::<Vec<_>>();
        assert_eq!(radix(&t, "core"), vec![5; 16]);
        assert_eq!(radix(&t, "agg"), vec![8; 20]);
        assert_eq!(radix(&t, "tor"), vec![20; 20]);
        // the seed's wiring: "Switch radix: 20" at every tier, 20 ToR x 4 + 20 agg x 16 links
        let t = build_it(FatTreeShape { core_wiring: CoreWiring::All, ..s });
        assert_eq!((t.num_hosts(), t.num_switches()), (320, 56));
        for tier in ["core", "agg", "tor"] {
            assert_eq!(radix(&t, tier), vec![20; if tier == "core" { 16 } else { 20 }], "{tier}");
        }
        assert_eq!(t.ports.len() / 2, 320 + 20 * 4 + 20 * 16);
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
