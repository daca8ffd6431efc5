//! Partitions of a fabric for one run split over threads (docs/parallel.md): which node
//! each logical process owns, and the lookahead that the links between partitions give.
//!
//! Conservative parallel simulation (Chandy-Misra-Bryant; Fujimoto, "Parallel and
//! Distributed Simulation Systems", 2000, ch. 3) runs each partition's events of a window
//! [T, T + L) without waiting, L the shortest delay of a link that crosses partitions. The
//! split must keep each ToR with its hosts (SFC's proxy and the NIC effects act between
//! them with no link delay) and should give every partition about the same work. Work
//! follows load, not node count: an incast loads one pod (Unison, Bai et al., EuroSys
//! 2024, sec. 4, on fine-grained partitions scheduled by load).

use super::packet::{NodeId, PortId};
use super::topology::{NodeKind, Topology};
use crate::sim::SimTime;

/// An assignment of every node to one of `load.len()` partitions.
#[derive(Clone, Debug, PartialEq)]
pub struct Partitioning {
    /// Partition of every node, by node id.
    pub part: Vec<u16>,
    /// Expected work of each partition (the sum of its units' weights, in the unit of the
    /// host loads given).
    pub load: Vec<f64>,
    /// The shortest time a frame takes between two partitions (link delay plus the
    /// receiving switch's latency); `SimTime::MAX` with one partition.
    pub lookahead: SimTime,
}

impl Partitioning {
    /// The heaviest partition's load over the mean: 1 is a perfect balance, and the
    /// speed-up of `parts` threads is at most `parts` over it.
    pub fn imbalance(&self) -> f64 {
        let mean = self.load.iter().sum::<f64>() / self.load.len() as f64;
        let max = self.load.iter().cloned().fold(0.0, f64::max);
        if mean > 0.0 { max / mean } else { 1.0 }
    }
}

/// Split `topo` into at most `parts` partitions balanced by `host_load` (a weight per host
/// index: the bytes it is expected to send and receive, in any unit). `arrive_delay` is each
/// port's delay to the far end (link delay plus the latency of a switch there).
///
/// Units that are never split: each edge switch (one with hosts) with its hosts; and each
/// switch without hosts that links to at most half of the edge switches joins them (a
/// fat-tree's aggregation switches make pods with their ToRs), while one linked to more
/// (a spine, a core switch) is a unit of its own. Where that leaves fewer than two units
/// with hosts per partition, the edge switches with their hosts are the units and every
/// other switch is one of its own (finer units balance better; pods cut fewer links). A unit weighs its hosts' load, twice (at
/// the NIC and at the edge switch); a switch of its own weighs the total load in proportion
/// to its ports among such switches (the traffic crossing the upper tiers). Units go to
/// the least loaded partition, heaviest first (longest processing time first: within 4/3
/// of the best balance; Graham 1969). Ties go to the lower node id and partition, so the
/// result is a function of its inputs alone.
pub fn partition(topo: &Topology, arrive_delay: &[SimTime], host_load: &[f64], parts: usize) -> Partitioning {
    assert_eq!(host_load.len(), topo.hosts.len(), "a load per host");
    let n = topo.nodes.len();
    let mut up: Vec<usize> = (0..n).collect();
    fn find(up: &mut [usize], mut x: usize) -> usize {
        while up[x] != x {
            up[x] = up[up[x]];
            x = up[x];
        }
        x
    }
    fn union(up: &mut [usize], a: usize, b: usize) {
        let (ra, rb) = (find(up, a), find(up, b));
        // the lower id roots the unit
        if ra != rb {
            up[ra.max(rb)] = ra.min(rb);
        }
    }
    let neighbours = |v: usize| topo.nodes[v].ports.iter().map(|&p| topo.peer_node(p) as usize);
    let is_host = |v: usize| topo.nodes[v].kind == NodeKind::Host;
    let edge: Vec<bool> = (0..n).map(|v| !is_host(v) && neighbours(v).any(is_host)).collect();
    let edges = edge.iter().filter(|&&e| e).count();
    for &h in &topo.hosts {
        for s in neighbours(h as usize) {
            union(&mut up, h as usize, s);
        }
    }
    let upper: Vec<usize> = topo.switches.iter().map(|&s| s as usize).filter(|&s| !edge[s]).collect();
    // pods: upper switches that link to few edge switches join them, unless that leaves
    // fewer than two units with hosts per partition (k = 8's 8 pods on 16 threads): then
    // edge switches with their hosts are the units, and every upper switch is alone
    let mut pods = up.clone();
    let mut alone = Vec::new();
    for &s in &upper {
        let below: Vec<usize> = neighbours(s).filter(|&v| edge[v]).collect();
        if !below.is_empty() && 2 * below.len() <= edges {
            for v in below {
                union(&mut pods, s, v);
            }
        } else {
            alone.push(s);
        }
    }
    let with_hosts: std::collections::BTreeSet<usize> = topo.hosts.iter().map(|&h| find(&mut pods, h as usize)).collect();
    if with_hosts.len() >= 2 * parts {
        up = pods;
    } else {
        alone = upper.clone();
    }
    // weights
    let mut weight = vec![0.0f64; n];
    let total: f64 = host_load.iter().sum();
    for (h, &node) in topo.hosts.iter().enumerate() {
        let r = find(&mut up, node as usize);
        weight[r] += 2.0 * host_load[h];
    }
    let alone_ports: usize = alone.iter().map(|&s| topo.nodes[s].ports.len()).sum();
    for &s in &alone {
        weight[s] += total * topo.nodes[s].ports.len() as f64 / alone_ports.max(1) as f64;
    }
    let mut units: Vec<usize> = (0..n).filter(|&v| find(&mut up, v) == v).collect();
    units.sort_by(|&a, &b| weight[b].total_cmp(&weight[a]).then(a.cmp(&b)));
    // partitions are numbered in u16, and a port's wiring names its peer's as 1 + that
    // number (`PortWire::peer_part`)
    let parts = parts.clamp(1, units.len().max(1)).min(u16::MAX as usize);
    let mut load = vec![0.0f64; parts];
    let mut part_of_unit = vec![0u16; n];
    for &u in &units {
        let p = (0..parts).min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b))).unwrap();
        load[p] += weight[u];
        part_of_unit[u] = p as u16;
    }
    // Switches of their own of equal weight take the partitions LPT gave them in id order,
    // each partition a run of them (the same loads): LPT deals them out in turn, which gave
    // each partition of a k = 74 fat tree every sixteenth core switch, and a core switch's
    // ports lie one in each pod's stretch of port ids, so that a partition's port records
    // (and their pages) spread over every per-port table. In runs, its ports lie together.
    let mut is_alone = vec![false; n];
    for &s in &alone {
        is_alone[s] = true;
    }
    for run in units.chunk_by(|&a, &b| weight[a] == weight[b]) {
        let run: Vec<usize> = run.iter().copied().filter(|&u| is_alone[u]).collect();
        let mut ids = run.clone();
        ids.sort_unstable();
        let mut got: Vec<u16> = run.iter().map(|&u| part_of_unit[u]).collect();
        got.sort_unstable();
        for (u, p) in ids.into_iter().zip(got) {
            part_of_unit[u] = p;
        }
    }
    let part: Vec<u16> = (0..n).map(|v| part_of_unit[find(&mut up, v)]).collect();
    let lookahead = topo
        .ports
        .iter()
        .enumerate()
        .filter(|&(i, p)| part[p.node as usize] != part[topo.peer_node(i as PortId) as usize])
        .map(|(i, _)| arrive_delay[i])
        .min()
        .unwrap_or(SimTime::MAX);
    Partitioning { part, load, lookahead }
}

/// Nodes of partition `p` (tests and diagnostics).
pub fn members(pt: &Partitioning, p: u16) -> Vec<NodeId> {
    pt.part.iter().enumerate().filter(|(_, &q)| q == p).map(|(v, _)| v as NodeId).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::fat_tree::{build, FatTreeShape};

    fn k4() -> (Topology, Vec<SimTime>) {
        let us = SimTime::from_us(1);
        let t = build(FatTreeShape::k_ary(4), (100_000_000_000, us), (100_000_000_000, us), (100_000_000_000, us));
        let d = t.ports.iter().map(|p| p.delay + if t.nodes[t.ports[p.peer as usize].node as usize].kind == NodeKind::Switch { SimTime(500_000) } else { SimTime::ZERO }).collect();
        (t, d)
    }

    /// The switch and hosts of each host's edge, and of each pod, share a partition.
    fn pods_whole(t: &Topology, pt: &Partitioning) {
        for &h in &t.hosts {
            let tor = t.peer_node(t.nodes[h as usize].ports[0]);
            assert_eq!(pt.part[h as usize], pt.part[tor as usize], "host {h} apart from its ToR");
        }
    }

    #[test]
    fn a_uniform_load_splits_by_pod_or_by_tor_as_the_partitions_need() {
        let (t, d) = k4();
        // two partitions: two whole pods (4 hosts, 2 ToRs, 2 aggregation switches) each
        let pt = partition(&t, &d, &vec![1.0; 16], 2);
        pods_whole(&t, &pt);
        for h in 0..16 {
            assert_eq!(pt.part[t.hosts[h] as usize], pt.part[t.hosts[h / 4 * 4] as usize], "pod of host {h} split");
        }
        // the cut links are aggregation-core links: 1 us and the core switch's 0.5 us
        // latency, or the way back into an aggregation switch
        assert_eq!(pt.lookahead, SimTime(1_500_000));
        // four partitions, 4 pods: too few to balance, so ToRs with their hosts are the
        // units (2 ToRs of 2 hosts in each) and the upper switches spread, 3 in each
        let pt = partition(&t, &d, &vec![1.0; 16], 4);
        pods_whole(&t, &pt);
        for p in 0..4 {
            let m = members(&pt, p);
            let hosts = m.iter().filter(|&&v| t.nodes[v as usize].kind == NodeKind::Host).count();
            assert_eq!((hosts, m.len()), (4, 4 + 2 + 3), "partition {p}: {m:?}");
        }
        assert!(pt.imbalance() < 1.05, "{:?}", pt.load);
        assert_eq!(pt.lookahead, SimTime(1_500_000));
    }

    #[test]
    fn an_incast_pod_gets_a_partition_to_itself() {
        let (t, d) = k4();
        // hosts 0-3 (pod 0) carry ten times the others' load (an incast into the pod)
        let load: Vec<f64> = (0..16).map(|h| if h < 4 { 10.0 } else { 1.0 }).collect();
        let pt = partition(&t, &d, &load, 2);
        pods_whole(&t, &pt);
        let heavy = pt.part[t.hosts[0] as usize];
        let with_it: Vec<usize> = (4..16).filter(|&h| pt.part[t.hosts[h] as usize] == heavy).collect();
        assert!(with_it.is_empty(), "the loaded pod shares its partition with hosts {with_it:?}");
        // by node count the split would be 8 hosts each; by load the light partition takes
        // the other three pods and the core
        assert!(pt.imbalance() < 1.2, "{:?}", pt.load);
    }

    #[test]
    fn the_result_depends_on_its_inputs_alone_and_one_partition_is_the_whole() {
        let (t, d) = k4();
        let load: Vec<f64> = (0..16).map(|h| (h % 3) as f64).collect();
        assert_eq!(partition(&t, &d, &load, 3), partition(&t, &d, &load, 3));
        let one = partition(&t, &d, &load, 1);
        assert!(one.part.iter().all(|&p| p == 0));
        assert_eq!(one.lookahead, SimTime::MAX);
        // more partitions than units: one per unit (8 ToRs with their hosts, 8 aggregation
        // and 4 core switches)
        assert_eq!(partition(&t, &d, &load, 64).load.len(), 20);
    }

    /// A partition's core switches are a run of ids (LPT would deal them out in turn), and
    /// the split is as balanced as LPT's: the same load in each partition.
    #[test]
    fn the_core_switches_of_a_partition_are_a_run() {
        let us = SimTime::from_us(1);
        let t = build(FatTreeShape::k_ary(8), (100_000_000_000, us), (100_000_000_000, us), (100_000_000_000, us));
        let d: Vec<SimTime> = t.ports.iter().map(|p| p.delay).collect();
        let peers = |v: usize| t.nodes[v].ports.iter().map(|&q| t.peer_node(q) as usize).collect::<Vec<_>>();
        let edge = |v: usize| peers(v).iter().any(|&w| t.nodes[w].kind == NodeKind::Host);
        let core: Vec<usize> = t.switches.iter().map(|&s| s as usize).filter(|&s| !edge(s) && !peers(s).into_iter().any(edge)).collect();
        assert_eq!(core.len(), 16);
        for parts in [2, 3, 4] {
            let pt = partition(&t, &d, &vec![1.0; 128], parts);
            pods_whole(&t, &pt);
            let mut seen = std::collections::HashSet::new();
            for w in core.windows(2) {
                let (a, b) = (pt.part[w[0]], pt.part[w[1]]);
                if a != b {
                    assert!(seen.insert(a), "{parts} partitions: partition {a}'s core switches are not one run: {:?}", core.iter().map(|&c| pt.part[c]).collect::<Vec<_>>());
                }
            }
            assert!(pt.imbalance() < 1.05, "{parts}: {:?}", pt.load);
        }
    }

    #[test]
    fn a_leaf_spine_splits_by_leaf_and_spreads_the_spines() {
        let us = SimTime::from_us(1);
        // 4 leaves of 4 servers, 2 spines each linked to every leaf: a spine is a unit of its own
        let t = crate::net::clos::build(4, 4, 2, false, (100_000_000_000, us), (100_000_000_000, us));
        let d: Vec<SimTime> = t.ports.iter().map(|p| p.delay).collect();
        let pt = partition(&t, &d, &vec![1.0; 16], 2);
        pods_whole(&t, &pt);
        for p in 0..2 {
            let m = members(&pt, p);
            let spines = m.iter().filter(|&&v| t.nodes[v as usize].kind == NodeKind::Switch && t.nodes[v as usize].ports.iter().all(|&q| t.nodes[t.peer_node(q) as usize].kind == NodeKind::Switch)).count();
            let hosts = m.iter().filter(|&&v| t.nodes[v as usize].kind == NodeKind::Host).count();
            assert_eq!((hosts, spines), (8, 1), "partition {p}: {m:?}");
        }
        assert_eq!(pt.lookahead, us);
    }
}
