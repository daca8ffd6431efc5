//! Shortest-path ECMP routing. For every (switch, destination host) the table
//! holds the egress ports on a shortest path; in Clos and fat-tree fabrics
//! these are exactly the up-down paths. A flow picks one by hashing its flow
//! hash with the switch id, so a flow keeps one path (per-flow ECMP).

use super::packet::{HostId, NodeId, PortId};
use super::topology::{NodeKind, Topology};
use crate::sim::rng::mix64;
use std::collections::HashMap;
use std::collections::VecDeque;

/// Next-hop table of every switch, indexed by destination *edge switch* (the
/// switch a host hangs off): shortest paths to a host are the shortest paths
/// to its edge switch plus the last hop, so the table is hosts-per-ToR times
/// smaller than a per-host table and stays in cache on large fabrics.
///
/// A switch's row holds few distinct candidate sets (its up-ports, and one down-port per
/// destination below it), so the table stores where the interned set starts in `hops`,
/// a count followed by the ports: 2 bytes per entry where all sets take fewer than 65,536
/// words. The table is the one structure every switch hop reads at a random place; at
/// k = 20 (500 switches x 200 edges) it is 200 KB instead of 800 KB. A lookup is a chain
/// of three dependent loads (host record, table, set), each an L1 miss on the hot path.
#[derive(Clone, Debug)]
pub struct Routes {
    edges: usize,
    /// Per (switch index * edges + edge index): where its candidate set starts in `hops`.
    table: SetIndex,
    /// Interned candidate sets, each its count then its ports; the set at 0 is empty.
    hops: Vec<PortId>,
    /// Per host: its edge switch's index among edges, that switch's index, and the
    /// switch's port toward the host (one record: one cache miss per lookup).
    host: Vec<HostAttach>,
    /// Static routes (switch index, host) -> port, consulted first.
    overrides: HashMap<(u32, HostId), PortId>,
}

#[derive(Clone, Copy, Debug)]
struct HostAttach {
    edge: u32,
    sw: u32,
    port: PortId,
}

#[derive(Clone, Debug)]
enum SetIndex {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

/// One chunk of edge switches' columns of the table (`Routes::build_over`): per (switch,
/// edge in `lo..hi`) the chunk's own id of its candidate set (`NO_SET`: none), and the sets
/// by those ids, in the order the chunk met them.
struct EdgeChunk {
    lo: usize,
    hi: usize,
    local: Vec<u32>,
    sets: Vec<Vec<PortId>>,
}

const NO_SET: u32 = u32::MAX;

/// Why a topology cannot be routed.
#[derive(Debug)]
pub struct Unreachable {
    pub from: String,
    pub to: String,
}

impl Routes {
    pub fn build(t: &Topology) -> Result<Routes, Unreachable> {
        Self::build_narrow_up_to(t, u16::MAX as usize + 1)
    }

    /// The routes of `t` over its working links (`down(port)`: the link of `port` carries
    /// nothing), keeping these routes' static ones: what switches converge to once they see
    /// a failure. A destination no working path reaches has no route (its packets are
    /// dropped, `DropReason::NoRoute`).
    pub fn without(&self, t: &Topology, down: &dyn Fn(PortId) -> bool) -> Routes {
        let mut r = Self::build_over(t, u16::MAX as usize + 1, down, false).expect("a lenient build refuses nothing");
        r.overrides = self.overrides.clone();
        r
    }

    /// `build`, with 2-byte table entries only where the sets take at most `narrow` words.
    fn build_narrow_up_to(t: &Topology, narrow: usize) -> Result<Routes, Unreachable> {
        Self::build_over(t, narrow, &|_| false, true)
    }

    /// `build_narrow_up_to` over the links not `down`; `strict`: a pair of hosts no path
    /// joins is an error (else it has no route).
    fn build_over(t: &Topology, narrow: usize, down: &dyn Fn(PortId) -> bool, strict: bool) -> Result<Routes, Unreachable> {
        // edge switches: those with hosts attached, in switch order
        let mut edge_of_switch = vec![u32::MAX; t.num_switches()];
        let mut edge_nodes: Vec<NodeId> = Vec::new();
        let mut host = Vec::with_capacity(t.num_hosts());
        for &h in &t.hosts {
            let nic = t.nodes[h as usize].ports[0];
            let sw_node = t.peer_node(nic);
            let sw = t.nodes[sw_node as usize].index;
            if edge_of_switch[sw as usize] == u32::MAX {
                edge_of_switch[sw as usize] = edge_nodes.len() as u32;
                edge_nodes.push(sw_node);
            }
            host.push(HostAttach { edge: edge_of_switch[sw as usize], sw, port: t.ports[nic as usize].peer });
        }
        let ne = edge_nodes.len();
        let ns = t.num_switches();
        // switch-to-switch links only, in port order (the order of ECMP candidates): the
        // BFS per edge switch then never walks the (many) host ports of a large fabric
        let adj: Vec<Vec<(PortId, u32)>> = t
            .switches
            .iter()
            .map(|&sw| {
                t.nodes[sw as usize]
                    .ports
                    .iter()
                    .filter_map(|&p| {
                        let m = &t.nodes[t.peer_node(p) as usize];
                        (m.kind == NodeKind::Switch && !down(p)).then_some((p, m.index))
                    })
                    .collect()
            })
            .collect();
        // Each edge switch's column is a breadth-first search over the switches, which at
        // k = 74 (2,738 edges x 6,845 switches) took 2 s on one core: chunks of edges run on
        // threads, each interning its sets in the order it meets them, and the chunks'
        // sets are then interned in chunk order, which is the order one pass meets them:
        // the table is the same whatever the number of threads.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(ne.div_ceil(64)).max(1);
        let per = ne.div_ceil(threads).max(1);
        let column = |lo: usize, hi: usize| -> Result<EdgeChunk, Unreachable> {
            let mut c = EdgeChunk { lo, hi, local: vec![NO_SET; ns * (hi - lo)], sets: Vec::new() };
            let mut interned: rustc_hash::FxHashMap<Vec<PortId>, u32> = Default::default();
            // distance to the target edge switch, by switch index
            let mut dist = vec![u32::MAX; ns];
            let mut q = VecDeque::new();
            let mut cand = Vec::new();
            for (e, &target) in edge_nodes.iter().enumerate().take(hi).skip(lo) {
                dist.iter_mut().for_each(|d| *d = u32::MAX);
                let ti = t.nodes[target as usize].index;
                dist[ti as usize] = 0;
                q.clear();
                q.push_back(ti);
                while let Some(n) = q.pop_front() {
                    for &(_, m) in &adj[n as usize] {
                        if dist[m as usize] == u32::MAX {
                            dist[m as usize] = dist[n as usize] + 1;
                            q.push_back(m);
                        }
                    }
                }
                if let Some(&other) = edge_nodes.iter().find(|&&o| strict && dist[t.nodes[o as usize].index as usize] == u32::MAX) {
                    let host_on = |sw: NodeId| t.hosts.iter().find(|&&h| t.peer_node(t.nodes[h as usize].ports[0]) == sw).unwrap();
                    return Err(Unreachable { from: t.nodes[*host_on(other) as usize].name.clone(), to: t.nodes[*host_on(target) as usize].name.clone() });
                }
                for si in 0..ns {
                    let d = dist[si];
                    if d == u32::MAX || d == 0 {
                        continue;
                    }
                    cand.clear();
                    for &(p, m) in &adj[si] {
                        if dist[m as usize] != u32::MAX && dist[m as usize] + 1 == d {
                            cand.push(p);
                        }
                    }
                    let id = match interned.get(cand.as_slice()) {
                        Some(&id) => id,
                        None => {
                            let id = c.sets.len() as u32;
                            c.sets.push(cand.clone());
                            interned.insert(cand.clone(), id);
                            id
                        }
                    };
                    c.local[si * (hi - lo) + (e - lo)] = id;
                }
            }
            Ok(c)
        };
        let chunks: Vec<Result<EdgeChunk, Unreachable>> = if threads == 1 {
            vec![column(0, ne)]
        } else {
            std::thread::scope(|sc| {
                let hs: Vec<_> = (0..ne).step_by(per).map(|lo| sc.spawn(move || column(lo, (lo + per).min(ne)))).collect();
                hs.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
            })
        };
        let mut table = vec![0u32; ns * ne];
        let mut hops: Vec<PortId> = vec![0];
        let mut interned: rustc_hash::FxHashMap<Vec<PortId>, u32> = Default::default();
        for c in chunks {
            // (the first chunk with an unreachable pair is the one a single pass meets first)
            let c = c?;
            let at: Vec<u32> = c
                .sets
                .into_iter()
                .map(|set| {
                    *interned.entry(set).or_insert_with_key(|set| {
                        let at = hops.len() as u32;
                        hops.push(set.len() as PortId);
                        hops.extend_from_slice(set);
                        at
                    })
                })
                .collect();
            let w = c.hi - c.lo;
            for si in 0..ns {
                for (k, &id) in c.local[si * w..(si + 1) * w].iter().enumerate() {
                    if id != NO_SET {
                        table[si * ne + c.lo + k] = at[id as usize];
                    }
                }
            }
        }
        // a word past the last set: `next_hop` reads the first port of even an empty set
        hops.push(0);
        let table = if hops.len() <= narrow { SetIndex::Narrow(table.iter().map(|&i| i as u16).collect()) } else { SetIndex::Wide(table) };
        Ok(Routes { edges: ne, table, hops, host, overrides: HashMap::new() })
    }

    /// Replace the choice of switch `sw` (switch index) toward host `dst` by one port.
    pub fn set_static(&mut self, sw: u32, dst: HostId, port: PortId) {
        self.overrides.insert((sw, dst), port);
    }

    /// Shortest-path egress ports of switch `sw` (switch index) toward host `dst`, in port
    /// order (a static route's one port where there is one).
    #[inline]
    pub fn candidates(&self, sw: u32, dst: HostId) -> &[PortId] {
        if let Some(p) = self.overrides.get(&(sw, dst)) {
            return std::slice::from_ref(p);
        }
        let a = &self.host[dst as usize];
        if a.sw == sw {
            return std::slice::from_ref(&a.port);
        }
        let set = self.set_of(sw, a);
        let n = self.hops[set] as usize;
        &self.hops[set + 1..set + 1 + n]
    }

    /// Where switch `sw`'s entry toward the edge switch of host `a` is in the table.
    #[inline(always)]
    fn entry(&self, sw: u32, a: &HostAttach) -> usize {
        sw as usize * self.edges + a.edge as usize
    }

    /// Where that entry's candidate set starts in `hops`.
    #[inline(always)]
    fn set_of(&self, sw: u32, a: &HostAttach) -> usize {
        let at = self.entry(sw, a);
        match &self.table {
            SetIndex::Narrow(t) => t[at] as usize,
            SetIndex::Wide(t) => t[at] as usize,
        }
    }

    /// Hint the CPU to load the table entry `next_hop(sw, dst, _)` reads (the host's own
    /// attach record is read now: it is small and stays cached).
    #[inline(always)]
    pub fn prefetch(&self, sw: u32, dst: HostId) {
        let Some(a) = self.host.get(dst as usize) else { return };
        let at = self.entry(sw, a) as u32;
        match &self.table {
            SetIndex::Narrow(t) => crate::sim::prefetch(t, at),
            SetIndex::Wide(t) => crate::sim::prefetch(t, at),
        }
    }

    /// The ECMP choice of switch `sw` for a flow with hash `h`.
    #[inline(always)]
    pub fn next_hop(&self, sw: u32, dst: HostId, h: u32) -> Option<PortId> {
        if !self.overrides.is_empty() {
            if let Some(&p) = self.overrides.get(&(sw, dst)) {
                return Some(p);
            }
        }
        // Without a branch on where the packet is: a hop up (several candidates), down (one)
        // or to the host (the edge switch's own port) comes in no order a predictor could
        // learn, and mispredicted on most switch hops. The table's entry for the host's own
        // edge is the empty set, whose pick reads the word after it.
        let a = &self.host[dst as usize];
        let set = self.set_of(sw, a);
        let n = self.hops[set] as usize;
        // multiply-shift maps the hash onto 0..n without a division
        let pick = ((mix64(h as u64 ^ ((sw as u64) << 32)) as u128 * n as u128) >> 64) as usize;
        let (local, up_or_down) = (a.sw == sw, self.hops[set + 1 + pick]);
        // one test, never true in a routed fabric (`n == 0 && !local` branched on n first)
        if n | local as usize == 0 {
            return None;
        }
        Some(if local { a.port } else { up_or_down })
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
        let t = clos::build(4, 4, 3, false, (1, SimTime(1)), (1, SimTime(1)));
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
    fn wide_table_routes_as_narrow() {
        let t = fat_tree::build(fat_tree::FatTreeShape::k_ary(4), (1, SimTime(1)), (1, SimTime(1)), (1, SimTime(1)));
        let narrow = Routes::build(&t).unwrap();
        let wide = Routes::build_narrow_up_to(&t, 0).unwrap();
        assert!(matches!(narrow.table, SetIndex::Narrow(_)) && matches!(wide.table, SetIndex::Wide(_)));
        for sw in 0..t.num_switches() as u32 {
            for dst in 0..t.num_hosts() as u32 {
                assert_eq!(narrow.candidates(sw, dst), wide.candidates(sw, dst));
            }
        }
    }
    /// The branch-free choice is the hashed pick among the candidates: the only one where
    /// there is one (down, or the edge switch's own port to the host), every candidate
    /// taken by some flow where there are several, on a one-switch star (no set at all),
    /// a Clos and a fat tree, in both table widths.
    #[test]
    fn next_hop_picks_among_the_candidates() {
        let star = {
            let mut t = Topology::default();
            let s = t.add_switch("s");
            for i in 0..3 {
                let h = t.add_host(&format!("h{i}"));
                t.connect(h, s, 1, SimTime(1));
            }
            t
        };
        let clos = clos::build(4, 4, 3, false, (1, SimTime(1)), (1, SimTime(1)));
        let ft = fat_tree::build(fat_tree::FatTreeShape::k_ary(4), (1, SimTime(1)), (1, SimTime(1)), (1, SimTime(1)));
        for t in [star, clos, ft] {
            for r in [Routes::build(&t).unwrap(), Routes::build_narrow_up_to(&t, 0).unwrap()] {
                for sw in 0..t.num_switches() as u32 {
                    for dst in 0..t.num_hosts() as u32 {
                        let c = r.candidates(sw, dst);
                        assert!(!c.is_empty());
                        let picked: std::collections::BTreeSet<PortId> = (0..64u32).map(|h| r.next_hop(sw, dst, h.wrapping_mul(2_654_435_761)).unwrap()).collect();
                        assert_eq!(picked, c.iter().copied().collect(), "switch {sw} to host {dst}");
                    }
                }
            }
        }
    }
    #[test]
    fn a_2000_host_fat_tree_keeps_the_2_byte_table() {
        let t = fat_tree::build(fat_tree::FatTreeShape::k_ary(20), (1, SimTime(1)), (1, SimTime(1)), (1, SimTime(1)));
        let r = Routes::build(&t).unwrap();
        assert!(matches!(r.table, SetIndex::Narrow(_)), "{} words of sets", r.hops.len());
        assert_eq!(r.path(&t, 0, 1999, 5).len(), 6);
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
