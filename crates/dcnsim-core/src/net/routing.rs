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
/// smaller than a per-host table.
///
/// The table is the one structure every switch hop reads at a random place, so it is
/// kept small enough to stay in cache on the largest fabrics. A candidate set names ports
/// by their place among the switch's links to other switches (`ports`), not by port id,
/// so that switches wired alike share sets, and switches with the same sets toward every
/// edge share one row: a fat tree's edge switches all have one row, the aggregation
/// switches of a pod one, the core switches one (k = 74: 76 rows of 2,738 entries, 416 KB,
/// where a row per switch took 75 MB and missed the cache on most hops). A row's entry
/// holds where its interned set starts in `hops`, a count followed by the places, 2 bytes
/// per entry where all sets take fewer than 65,536 words. A lookup is a chain of dependent
/// loads (the host's edge, the table, the set, the port), the switch's record read beside
/// them.
#[derive(Clone, Debug)]
pub struct Routes {
    /// Per switch index: where its row starts in `table`, where its links start in `ports`.
    switch: Vec<SwitchRow>,
    /// Per (row * edges + edge index): where its candidate set starts in `hops`.
    table: SetIndex,
    /// Interned candidate sets, each its count then places among a switch's links; the set
    /// at 0 is empty, and the word after it is place 0.
    hops: Vec<u32>,
    /// Every switch's ports toward other switches, in port order, switch after switch
    /// (a set's places index a switch's stretch), and one spare word at the end.
    ports: Vec<PortId>,
    /// Per host: its edge switch's index among edges (the first load of every lookup: 4
    /// bytes a host, 400 KB at 100,000 hosts, where it is the load that still misses most).
    host_edge: Vec<u32>,
    /// Per host: its edge switch's port toward it, read beside the chain, not in it.
    host_port: Vec<PortId>,
    /// Static routes (switch index, host) -> port, consulted first.
    overrides: HashMap<(u32, HostId), PortId>,
}

/// Where a switch's row starts in the table, where its links start in `Routes::ports`,
/// how many it has, and its index among edge switches (`u32::MAX`: no host hangs off it).
#[derive(Clone, Copy, Debug)]
struct SwitchRow {
    at: u32,
    first: u32,
    links: u32,
    edge: u32,
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
    sets: Vec<Vec<u32>>,
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
        let (mut host_edge, mut host_port) = (Vec::with_capacity(t.num_hosts()), Vec::with_capacity(t.num_hosts()));
        for &h in &t.hosts {
            let nic = t.nodes[h as usize].ports[0];
            let sw_node = t.peer_node(nic);
            let sw = t.nodes[sw_node as usize].index;
            if edge_of_switch[sw as usize] == u32::MAX {
                edge_of_switch[sw as usize] = edge_nodes.len() as u32;
                edge_nodes.push(sw_node);
            }
            host_edge.push(edge_of_switch[sw as usize]);
            host_port.push(t.ports[nic as usize].peer);
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
            let mut interned: rustc_hash::FxHashMap<Vec<u32>, u32> = Default::default();
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
                    for (place, &(_, m)) in adj[si].iter().enumerate() {
                        if dist[m as usize] != u32::MAX && dist[m as usize] + 1 == d {
                            cand.push(place as u32);
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
        // the empty set, then a word its pick reads: place 0, which every switch's stretch
        // of `ports` has (the spare word at the end for the last switch)
        let mut hops: Vec<u32> = vec![0, 0];
        let mut interned: rustc_hash::FxHashMap<Vec<u32>, u32> = Default::default();
        for c in chunks {
            // (the first chunk with an unreachable pair is the one a single pass meets first)
            let c = c?;
            let at: Vec<u32> = c
                .sets
                .into_iter()
                .map(|set| {
                    *interned.entry(set).or_insert_with_key(|set| {
                        let at = hops.len() as u32;
                        hops.push(set.len() as u32);
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
        // An edge switch's entry toward its own edge is never read (its hosts are reached
        // by `host_port`): it takes another column's set, so that edge switches
        // wired alike have equal rows.
        if ne > 1 {
            for (e, &node) in edge_nodes.iter().enumerate() {
                let row = t.nodes[node as usize].index as usize * ne;
                table[row + e] = table[row + usize::from(e == 0)];
            }
        }
        let mut rows: Vec<u32> = Vec::new();
        let mut switch = Vec::with_capacity(ns);
        let mut ports = Vec::new();
        {
            let mut row_of: rustc_hash::FxHashMap<&[u32], u32> = Default::default();
            for (si, links) in adj.iter().enumerate() {
                let cols = &table[si * ne..(si + 1) * ne];
                let next = row_of.len() as u32;
                let row = *row_of.entry(cols).or_insert_with(|| {
                    rows.extend_from_slice(cols);
                    next
                });
                let at = u32::try_from(row as usize * ne).expect("a route table of under 2^32 entries");
                switch.push(SwitchRow { at, first: ports.len() as u32, links: links.len() as u32, edge: edge_of_switch[si] });
                ports.extend(links.iter().map(|&(p, _)| p));
            }
        }
        ports.push(0);
        let table = if hops.len() <= narrow { SetIndex::Narrow(rows.iter().map(|&i| i as u16).collect()) } else { SetIndex::Wide(rows) };
        Ok(Routes { switch, table, hops, ports, host_edge, host_port, overrides: HashMap::new() })
    }

    /// Replace the choice of switch `sw` (switch index) toward host `dst` by one port.
    pub fn set_static(&mut self, sw: u32, dst: HostId, port: PortId) {
        self.overrides.insert((sw, dst), port);
    }

    /// Shortest-path egress ports of switch `sw` (switch index) toward host `dst`, in port
    /// order (a static route's one port where there is one), into `out` (cleared first).
    pub fn candidates(&self, sw: u32, dst: HostId, out: &mut Vec<PortId>) {
        out.clear();
        if let Some(&p) = self.overrides.get(&(sw, dst)) {
            out.push(p);
            return;
        }
        let (edge, s) = (self.host_edge[dst as usize], self.switch[sw as usize]);
        if s.edge == edge {
            out.push(self.host_port[dst as usize]);
            return;
        }
        let set = self.set_of(s, edge);
        let n = self.hops[set] as usize;
        let first = s.first as usize;
        out.extend(self.hops[set + 1..set + 1 + n].iter().map(|&place| self.ports[first + place as usize]));
    }

    /// Where the entry of switch `s` toward edge switch `edge` is in the table.
    #[inline(always)]
    fn entry(s: SwitchRow, edge: u32) -> usize {
        s.at as usize + edge as usize
    }

    /// Where that entry's candidate set starts in `hops`.
    #[inline(always)]
    fn set_of(&self, s: SwitchRow, edge: u32) -> usize {
        let at = Self::entry(s, edge);
        match &self.table {
            SetIndex::Narrow(t) => t[at] as usize,
            SetIndex::Wide(t) => t[at] as usize,
        }
    }

    /// Hint the CPU to load the table entry `next_hop(sw, dst, _)` reads (the host's own
    /// edge and the switch's record are read now: they are small and stay cached), and the
    /// switch's stretch of `ports`, whose place the entry's set picks: 1.6 MB at k = 74,
    /// where that last load of the chain missed as well.
    #[inline(always)]
    pub fn prefetch(&self, sw: u32, dst: HostId) {
        let (Some(&edge), Some(s)) = (self.host_edge.get(dst as usize), self.switch.get(sw as usize)) else { return };
        let at = Self::entry(*s, edge) as u32;
        match &self.table {
            SetIndex::Narrow(t) => crate::sim::prefetch(t, at),
            SetIndex::Wide(t) => crate::sim::prefetch(t, at),
        }
        crate::sim::prefetch_lines(self.ports[s.first as usize..].as_ptr() as *const u8, s.links as usize * std::mem::size_of::<PortId>());
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
        // learn, and mispredicted on most switch hops. An empty set's pick reads the word
        // after it, and `ports` ends in a spare word for a switch with no links beyond.
        let (edge, s) = (self.host_edge[dst as usize], self.switch[sw as usize]);
        let set = self.set_of(s, edge);
        let n = self.hops[set] as usize;
        // multiply-shift maps the hash onto 0..n without a division
        let pick = ((mix64(h as u64 ^ ((sw as u64) << 32)) as u128 * n as u128) >> 64) as usize;
        let place = s.first as usize + self.hops[set + 1 + pick] as usize;
        debug_assert!(place < self.ports.len() && (dst as usize) < self.host_port.len());
        // SAFETY: a set's places lie within its switch's stretch of `ports`, and the empty
        // set's pick reads place 0, which the spare last word keeps in range for the last
        // switch; `host_port` is as long as `host_edge`, which `dst` indexed above.
        let (local, up_or_down, own) = unsafe { (s.edge == edge, *self.ports.get_unchecked(place), *self.host_port.get_unchecked(dst as usize)) };
        // one test, never true in a routed fabric (`n == 0 && !local` branched on n first)
        if n | local as usize == 0 {
            return None;
        }
        Some(if local { own } else { up_or_down })
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
        let mut c = Vec::new();
        r.candidates(0, 15, &mut c);
        assert_eq!(c.len(), 3);
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
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for sw in 0..t.num_switches() as u32 {
            for dst in 0..t.num_hosts() as u32 {
                narrow.candidates(sw, dst, &mut a);
                wide.candidates(sw, dst, &mut b);
                assert_eq!(a, b);
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
                        let mut c = Vec::new();
                        r.candidates(sw, dst, &mut c);
                        assert!(!c.is_empty());
                        let picked: std::collections::BTreeSet<PortId> = (0..64u32).map(|h| r.next_hop(sw, dst, h.wrapping_mul(2_654_435_761)).unwrap()).collect();
                        assert_eq!(picked, c.iter().copied().collect(), "switch {sw} to host {dst}");
                    }
                }
            }
        }
    }
    /// The candidates, found again without the table: a switch's ports toward a switch one
    /// hop nearer the destination's edge switch (distances by a search over the working
    /// switch links), or the edge switch's own port to the host. On a fat tree, a Clos, an
    /// irregular mesh with hosts on several switches, and the fat tree with links down.
    #[test]
    fn candidates_are_the_shortest_path_next_hops() {
        let ft = fat_tree::build(fat_tree::FatTreeShape::k_ary(6), (1, SimTime(1)), (1, SimTime(1)), (1, SimTime(1)));
        let clos = clos::build(5, 3, 2, true, (1, SimTime(1)), (1, SimTime(1)));
        let mesh = {
            let mut t = Topology::default();
            let s: Vec<_> = (0..7).map(|i| t.add_switch(&format!("s{i}"))).collect();
            for (a, b) in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 5), (5, 3), (2, 6), (6, 4), (1, 6), (0, 1)] {
                t.connect(s[a], s[b], 1, SimTime(1));
            }
            for (i, &at) in [0, 0, 2, 3, 3, 3, 6].iter().enumerate() {
                let h = t.add_host(&format!("h{i}"));
                t.connect(h, s[at], 1, SimTime(1));
            }
            t
        };
        let no_down = |_: PortId| false;
        // two fabric links of the fat tree down: one ToR uplink, one aggregation-core link
        let fabric: Vec<PortId> = (0..ft.ports.len() as PortId).filter(|&p| ft.nodes[ft.ports[p as usize].node as usize].kind == NodeKind::Switch && ft.nodes[ft.peer_node(p) as usize].kind == NodeKind::Switch).collect();
        let (d1, d2) = (fabric[3], fabric[fabric.len() - 5]);
        let (d1p, d2p) = (ft.ports[d1 as usize].peer, ft.ports[d2 as usize].peer);
        let some_down = move |p: PortId| [d1, d1p, d2, d2p].contains(&p);
        let cases: [(&Topology, &dyn Fn(PortId) -> bool); 4] = [(&ft, &no_down), (&clos, &no_down), (&mesh, &no_down), (&ft, &some_down)];
        for (t, down) in cases {
            let r = Routes::build(t).unwrap().without(t, down);
            let ns = t.num_switches();
            let sw_node = |i: usize| t.switches[i];
            let mut c = Vec::new();
            for dst in 0..t.num_hosts() as u32 {
                let edge = t.peer_node(t.host_port(dst));
                // hops to the edge switch over working switch links, by switch index
                let mut dist = vec![u32::MAX; ns];
                dist[t.nodes[edge as usize].index as usize] = 0;
                for d in 0.. {
                    let mut grew = false;
                    for i in 0..ns {
                        if dist[i] != d {
                            continue;
                        }
                        for &p in &t.nodes[sw_node(i) as usize].ports {
                            let m = &t.nodes[t.peer_node(p) as usize];
                            if m.kind == NodeKind::Switch && !down(p) && dist[m.index as usize] == u32::MAX {
                                dist[m.index as usize] = d + 1;
                                grew = true;
                            }
                        }
                    }
                    if !grew {
                        break;
                    }
                }
                for i in 0..ns {
                    let want: Vec<PortId> = if i == t.nodes[edge as usize].index as usize {
                        vec![t.ports[t.host_port(dst) as usize].peer]
                    } else {
                        t.nodes[sw_node(i) as usize]
                            .ports
                            .iter()
                            .copied()
                            .filter(|&p| {
                                let m = &t.nodes[t.peer_node(p) as usize];
                                m.kind == NodeKind::Switch && !down(p) && dist[i] != u32::MAX && dist[m.index as usize] != u32::MAX && dist[m.index as usize] + 1 == dist[i]
                            })
                            .collect()
                    };
                    r.candidates(i as u32, dst, &mut c);
                    assert_eq!(c, want, "switch {i} toward host {dst}");
                    let hop = r.next_hop(i as u32, dst, dst.wrapping_mul(40_503) ^ i as u32);
                    assert_eq!(hop.is_some(), !want.is_empty());
                    assert!(hop.is_none_or(|p| want.contains(&p)));
                }
            }
        }
    }

    /// Switches wired alike share one row of the table: a fat tree's edge switches one,
    /// each pod's aggregation switches one, the core switches one; a Clos's leaves one and
    /// its spines one.
    #[test]
    fn switches_wired_alike_share_a_row() {
        let rows = |r: &Routes| r.switch.iter().map(|s| s.at).collect::<std::collections::BTreeSet<_>>().len();
        let ft = fat_tree::build(fat_tree::FatTreeShape::k_ary(8), (1, SimTime(1)), (1, SimTime(1)), (1, SimTime(1)));
        assert_eq!(rows(&Routes::build(&ft).unwrap()), 8 + 2);
        let clos = clos::build(6, 4, 3, false, (1, SimTime(1)), (1, SimTime(1)));
        assert_eq!(rows(&Routes::build(&clos).unwrap()), 2);
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
