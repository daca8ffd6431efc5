//! Shortest-path ECMP routing. For every (switch, destination host) the table
//! holds the egress ports on a shortest path; in Clos and fat-tree fabrics
//! these are exactly the up-down paths. A flow picks one by hashing its flow
//! hash with the switch id, so a flow keeps one path (per-flow ECMP).

use super::packet::{HostId, NodeId, PortId};
use super::topology::{NodeKind, Topology};
use crate::sim::rng::mix64;
use std::collections::HashMap;
use std::collections::VecDeque;

/// Next-hop table of every switch.
pub struct Routes {
    hosts: usize,
    /// Per (switch index * hosts + host): (offset into `hops`, count).
    table: Vec<(u32, u16)>,
    hops: Vec<PortId>,
}

/// Why a topology cannot be routed.
#[derive(Debug)]
pub struct Unreachable {
    pub from: String,
    pub to: String,
}

impl Routes {
    pub fn build(t: &Topology) -> Result<Routes, Unreachable> {
        let nh = t.num_hosts();
        let mut table = vec![(0u32, 0u16); t.num_switches() * nh];
        let mut hops: Vec<PortId> = Vec::new();
        let mut interned: HashMap<Vec<PortId>, (u32, u16)> = HashMap::new();
        let mut dist = vec![u32::MAX; t.nodes.len()];
        let mut q = VecDeque::new();
        let mut cand = Vec::new();
        for h in 0..nh {
            let target = t.hosts[h];
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[target as usize] = 0;
            q.clear();
            q.push_back(target);
            while let Some(n) = q.pop_front() {
                let node = &t.nodes[n as usize];
                if node.kind == NodeKind::Host && n != target {
                    continue; // hosts do not forward
                }
                for &p in &node.ports {
                    let m = t.peer_node(p);
                    if dist[m as usize] == u32::MAX {
                        dist[m as usize] = dist[n as usize] + 1;
                        q.push_back(m);
                    }
                }
            }
            for (hi, &other) in t.hosts.iter().enumerate() {
                if dist[other as usize] == u32::MAX {
                    return Err(Unreachable { from: t.nodes[other as usize].name.clone(), to: t.nodes[target as usize].name.clone() });
                }
                let _ = hi;
            }
            for (si, &sw) in t.switches.iter().enumerate() {
                let d = dist[sw as usize];
                if d == u32::MAX {
                    continue;
                }
                cand.clear();
                for &p in &t.nodes[sw as usize].ports {
                    let m = t.peer_node(p);
                    let is_fwd = t.nodes[m as usize].kind == NodeKind::Switch || m == target;
                    if is_fwd && dist[m as usize] != u32::MAX && dist[m as usize] + 1 == d {
                        cand.push(p);
                    }
                }
                let entry = *interned.entry(cand.clone()).or_insert_with(|| {
                    let off = hops.len() as u32;
                    hops.extend_from_slice(&cand);
                    (off, cand.len() as u16)
                });
                table[si * nh + h] = entry;
            }
        }
        Ok(Routes { hosts: nh, table, hops })
    }

    /// Replace the choice of switch `sw` (switch index) toward host `dst` by one port.
    pub fn set_static(&mut self, sw: u32, dst: HostId, port: PortId) {
        let off = self.hops.len() as u32;
        self.hops.push(port);
        self.table[sw as usize * self.hosts + dst as usize] = (off, 1);
    }

    /// Shortest-path egress ports of switch `sw` (switch index) toward host `dst`.
    #[inline]
    pub fn candidates(&self, sw: u32, dst: HostId) -> &[PortId] {
        let (off, n) = self.table[sw as usize * self.hosts + dst as usize];
        &self.hops[off as usize..off as usize + n as usize]
    }

    /// The ECMP choice of switch `sw` for a flow with hash `h`.
    #[inline]
    pub fn next_hop(&self, sw: u32, dst: HostId, h: u32) -> Option<PortId> {
        let c = self.candidates(sw, dst);
        match c.len() {
            0 => None,
            1 => Some(c[0]),
            n => Some(c[(mix64(h as u64 ^ ((sw as u64) << 32)) % n as u64) as usize]),
        }
    }

    /// Egress ports a flow with hash `h` traverses from host `src` to host `dst`
    /// (the source NIC port first).
    pub fn path(&self, t: &Topology, src: HostId, dst: HostId, h: u32) -> Vec<PortId> {
        let mut out = vec![t.host_port(src)];
        let mut node: NodeId = t.peer_node(out[0]);
        let mut guard = 0;
        while t.nodes[node as usize].kind == NodeKind::Switch && guard < 256 {
            let p = match self.next_hop(t.nodes[node as usize].index, dst, h) {
                Some(p) => p,
                None => break,
            };
            out.push(p);
            node = t.peer_node(p);
            guard += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{clos, fat_tree};
    use crate::sim::SimTime;
    #[test]
    fn clos_paths_are_up_down() {
        let t = clos::build(4, 4, 3, (1, SimTime(1)), (1, SimTime(1)));
        let r = Routes::build(&t).unwrap();
        // host 0 -> host 15: NIC, tor->spine, spine->tor, tor->host
        for h in 0..50 {
            assert_eq!(r.path(&t, 0, 15, h).len(), 4);
        }
        // same ToR: NIC, tor->host
        assert_eq!(r.path(&t, 0, 1, 7).len(), 2);
        // a ToR has 3 uplink choices toward a remote host
        assert_eq!(r.candidates(0, 15).len(), 3);
    }
    #[test]
    fn fat_tree_path_lengths() {
        let t = fat_tree::build(fat_tree::FatTreeShape::k_ary(4), (1, SimTime(1)), (1, SimTime(1)), (1, SimTime(1)));
        let r = Routes::build(&t).unwrap();
        assert_eq!(r.path(&t, 0, 1, 3).len(), 2); // same ToR
        assert_eq!(r.path(&t, 0, 2, 3).len(), 4); // same pod
        assert_eq!(r.path(&t, 0, 15, 3).len(), 6); // other pod, via core
    }
    #[test]
    fn disconnected_is_reported() {
        let mut t = Topology::default();
        let a = t.add_host("a");
        let b = t.add_host("b");
        let s1 = t.add_switch("s1");
        let s2 = t.add_switch("s2");
        t.connect(a, s1, 1, SimTime(1));
        t.connect(b, s2, 1, SimTime(1));
        assert!(Routes::build(&t).is_err());
    }
}
