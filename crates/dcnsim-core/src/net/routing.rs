//! Shortest-path ECMP routing. For every (switch, destination host) the table
//! holds the egress ports on a shortest path; in Clos and fat-tree fabrics
//! these are exactly the up-down paths. A flow picks one by hashing its flow
//! hash with the switch id, so a flow keeps one path (per-flow ECMP).

use super::packet::{HostId, NodeId, PortId};
use super::topology::{NodeKind, Topology};
use crate::sim::rng::mix64;
use std::collections::HashMap;

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
    /// Per host: its edge switch's index among edges and that switch's port toward it.
    hosts: HostPlaces,
    /// Static routes (switch index, host) -> port, consulted first.
    overrides: HashMap<(u32, HostId), PortId>,
}

/// Where each host hangs: its edge switch's index among edges (the first load of every
/// route lookup) and that switch's port toward it.
///
/// Why arithmetic where it can be: as tables these are 4 bytes a host each, 400 KB apiece
/// at 100,000 hosts, read at a random place on every switch hop (the lookup's first load,
/// and the port beside it): two of the lines a hop waits for on a large fabric, where the
/// run is bound by the lines it keeps in flight (docs/performance.md). A fat tree or a
/// Clos numbers its hosts edge by edge, the same number to each, and wires each edge's
/// host ports at one stride: then both follow from the host's id and a table of one entry
/// an edge switch (11 KB at k = 74, which stays cached).
#[derive(Clone, Debug)]
enum HostPlaces {
    /// Host h hangs off edge `h / per`, on its port `first[h / per] + stride * (h % per)`;
    /// `recip` is ceil(2^64 / per), whose product with a 32-bit h has h / per in its high
    /// word exactly (Lemire, Kaser and Kurz, "Faster remainder by direct computation",
    /// 2019, Theorem 1), a multiply where a division takes tens of cycles.
    Regular { per: u32, recip: u64, stride: u32, first: Vec<PortId> },
    /// Any other numbering: a table each.
    Table { edge: Vec<u32>, port: Vec<PortId> },
}

/// The tables' size (8 bytes a host) from which `HostPlaces` takes the arithmetic: a
/// core's L2 (512 KB), at 65,536 hosts. Below it the tables stay cached and the arithmetic
/// only adds a multiply to every hop: with it on every fabric, k = 16 (1,024 hosts) ran
/// 1.035x the time (6 alternating pairs; 0.971 and 1.093 in two noisier series of 4),
/// where k = 74 ran 0.917x (6 pairs).
const ARITHMETIC_FROM: usize = crate::sim::CORE_L2_BYTES;

impl HostPlaces {
    /// From each host's edge index and port, the arithmetic form where it holds for
    /// every host and the tables would be `ARITHMETIC_FROM` bytes or more.
    fn new(edge: Vec<u32>, port: Vec<PortId>) -> HostPlaces {
        Self::new_from(edge, port, ARITHMETIC_FROM)
    }
    fn new_from(edge: Vec<u32>, port: Vec<PortId>, min_bytes: usize) -> HostPlaces {
        let n = edge.len();
        if n * 8 < min_bytes {
            return HostPlaces::Table { edge, port };
        }
        // hosts of the first edge give the count per edge and the stride
        let per = edge.iter().take_while(|&&e| e == 0).count();
        // (one host an edge, a dumbbell's: tables, small ones)
        if per < 2 || n % per != 0 {
            return HostPlaces::Table { edge, port };
        }
        let stride = port[1].wrapping_sub(port[0]);
        let first: Vec<PortId> = (0..n / per).map(|e| port[e * per]).collect();
        let regular = (0..n).all(|h| {
            let (e, i) = (h / per, (h % per) as u32);
            edge[h] as usize == e && u64::from(first[e]) + u64::from(stride) * u64::from(i) == u64::from(port[h])
        });
        if !regular {
            return HostPlaces::Table { edge, port };
        }
        let per = per as u32;
        HostPlaces::Regular { per, recip: reciprocal(per), stride, first }
    }
    /// Host `h`'s edge index and the edge switch's port toward it; panics past the hosts.
    #[inline(always)]
    fn place(&self, h: HostId) -> (u32, PortId) {
        match self {
            HostPlaces::Regular { per, recip, stride, first } => {
                let e = quotient(*recip, h);
                (e, first[e as usize] + stride * (h - e * per))
            }
            HostPlaces::Table { edge, port } => (edge[h as usize], port[h as usize]),
        }
    }
    /// Host `h`'s edge index, if `h` is a host.
    #[inline(always)]
    fn edge(&self, h: HostId) -> Option<u32> {
        match self {
            HostPlaces::Regular { per, first, .. } => ((h as usize) < *per as usize * first.len()).then(|| self.place(h).0),
            HostPlaces::Table { edge, .. } => edge.get(h as usize).copied(),
        }
    }
}

/// ceil(2^64 / `d`), `d` >= 2 (for a power of two the floor of (2^64 - 1) / d is one below
/// 2^64 / d, so the sum is exact there too).
fn reciprocal(d: u32) -> u64 {
    u64::MAX / u64::from(d) + 1
}

/// `h / d` from `reciprocal(d)`, exactly for every 32-bit `h`.
#[inline(always)]
fn quotient(recip: u64, h: u32) -> u32 {
    ((u128::from(recip) * u128::from(h)) >> 64) as u32
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

/// The breadth-first searches toward up to 64 edge switches at once (`columns`): bit `b`
/// of a switch's words is about the `b`th of them.
struct Columns {
    /// Per switch, the edges it reaches (a path of working links leads to it from them).
    reached: Vec<u64>,
    /// Per switch, per edge, per word of its places among its links to other switches
    /// (`adj`), the places that lead toward that edge on a shortest path (`words` words
    /// each).
    by_edge: Vec<u64>,
    words: usize,
}

impl Columns {
    /// The places of switch `si` on a shortest path toward the edge of bit `bit`, a bit
    /// per place.
    fn toward(&self, si: usize, bit: usize) -> &[u64] {
        let at = (si * 64 + bit) * self.words;
        &self.by_edge[at..at + self.words]
    }
}

/// Breadth-first searches over the switch graph `adj` (each switch's links to other
/// switches, as (port, switch index)) from each switch of `targets` (at most 64), level by
/// level with a word per switch whose bits are the searches that reached it at that
/// level (one at a time, with a pass over every link per target to find the links toward
/// it, k = 74's build took 3.9-5.1 s of CPU on the 2-core VM; this way 0.7-1.1 s, most of
/// it no longer the searches). A link is on a shortest path toward a target where its
/// far switch is one level nearer to the target than the switch.
fn columns(adj: &[Vec<(PortId, u32)>], targets: &[usize]) -> Columns {
    debug_assert!(targets.len() <= 64);
    let ns = adj.len();
    let mut reached = vec![0u64; ns];
    let mut levels: Vec<Vec<u64>> = Vec::new();
    let mut level = vec![0u64; ns];
    for (b, &ti) in targets.iter().enumerate() {
        level[ti] |= 1 << b;
        reached[ti] |= 1 << b;
    }
    loop {
        let mut next = vec![0u64; ns];
        for (n, links) in adj.iter().enumerate() {
            if level[n] != 0 {
                for &(_, m) in links {
                    next[m as usize] |= level[n];
                }
            }
        }
        let mut any = false;
        for (x, r) in next.iter_mut().zip(reached.iter_mut()) {
            *x &= !*r;
            *r |= *x;
            any |= *x != 0;
        }
        levels.push(std::mem::replace(&mut level, next));
        if !any {
            break;
        }
    }
    // (the last level pushed is empty)
    let words = adj.iter().map(|l| l.len()).max().unwrap_or(0).div_ceil(64).max(1);
    let mut by_edge = vec![0u64; ns * 64 * words];
    let mut block = [0u64; 64];
    for (si, (links, t)) in adj.iter().zip(by_edge.chunks_exact_mut(64 * words)).enumerate() {
        for w in 0..words {
            // per place of this word, the edges toward which its link is on a shortest path
            block.fill(0);
            for (x, &(_, m)) in block.iter_mut().zip(links.iter().skip(64 * w)) {
                *x = (1..levels.len()).fold(0, |acc, d| acc | (levels[d][si] & levels[d - 1][m as usize]));
            }
            transpose64(&mut block);
            for (b, &x) in block.iter().enumerate() {
                t[b * words + w] = x;
            }
        }
    }
    Columns { reached, by_edge, words }
}

/// Transpose a 64 x 64 matrix of bits in place: bit `j` of word `i` becomes bit `i` of word
/// `j` (Hacker's Delight, 7-3: swap the off-diagonal blocks of halving size).
fn transpose64(a: &mut [u64; 64]) {
    let mut j = 32;
    let mut m: u64 = 0x0000_0000_FFFF_FFFF;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            let t = ((a[k] >> j) ^ a[k + j]) & m;
            a[k] ^= t << j;
            a[k + j] ^= t;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        m ^= m << j;
    }
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
        // k = 74 (2,738 edges x 6,845 switches) took 3 s on one core, searched for one edge
        // at a time. They are searched 64 at a time (`columns`: which of 64 searches reached
        // a switch at each level, in the bits of a word), and chunks of edges run on threads, each
        // interning its sets in the order it meets them, edge by edge, and the chunks'
        // sets are then interned in chunk order, which is the order one pass meets them:
        // the table is the same whatever the number of threads.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(ne.div_ceil(64)).max(1);
        // whole words of edges per chunk
        let per = ne.div_ceil(threads).div_ceil(64).max(1) * 64;
        let column = |lo: usize, hi: usize| -> Result<EdgeChunk, Unreachable> {
            let mut c = EdgeChunk { lo, hi, local: vec![NO_SET; ns * (hi - lo)], sets: Vec::new() };
            let mut interned: rustc_hash::FxHashMap<Vec<u32>, u32> = Default::default();
            // per switch, the last set it took and its id: switches take the same set toward
            // most edges in turn (a fat tree's edge switch: all its uplinks toward every
            // other pod), and this skips the set's hashing then
            let mut last: Vec<(Vec<u64>, u32)> = vec![(Vec::new(), NO_SET); ns];
            let target = |e: usize| t.nodes[edge_nodes[e] as usize].index as usize;
            for b in (lo..hi).step_by(64) {
                let batch = b..(b + 64).min(hi);
                let word = columns(&adj, &batch.clone().map(target).collect::<Vec<_>>());
                // the searches that reached every edge switch, found once for the batch (per
                // search, a scan of every edge switch was ne^2 tests: 7.5 M at k = 74)
                let everywhere = if strict { (0..ne).fold(!0u64, |acc, o| acc & word.reached[target(o)]) } else { !0 };
                for (bit, e) in batch.enumerate() {
                    if everywhere >> bit & 1 == 0 {
                        if let Some(other) = (0..ne).find(|&o| word.reached[target(o)] >> bit & 1 == 0).map(|o| edge_nodes[o]) {
                            let host_on = |sw: NodeId| t.hosts.iter().find(|&&h| t.peer_node(t.nodes[h as usize].ports[0]) == sw).unwrap();
                            return Err(Unreachable { from: t.nodes[*host_on(other) as usize].name.clone(), to: t.nodes[*host_on(edge_nodes[e]) as usize].name.clone() });
                        }
                    }
                    let ti = target(e);
                    for si in 0..ns {
                        if si == ti || word.reached[si] >> bit & 1 == 0 {
                            continue;
                        }
                        let mask = word.toward(si, bit);
                        let id = if last[si].0 == mask {
                            last[si].1
                        } else {
                            // the places toward the edge, in port order
                            let cand: Vec<u32> = (0..adj[si].len() as u32).filter(|&p| mask[p as usize / 64] >> (p % 64) & 1 == 1).collect();
                            let id = match interned.get(cand.as_slice()) {
                                Some(&id) => id,
                                None => {
                                    let id = c.sets.len() as u32;
                                    c.sets.push(cand.clone());
                                    interned.insert(cand, id);
                                    id
                                }
                            };
                            last[si].0.clear();
                            last[si].0.extend_from_slice(mask);
                            last[si].1 = id;
                            id
                        };
                        c.local[si * (hi - lo) + (e - lo)] = id;
                    }
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
        Ok(Routes { switch, table, hops, ports, hosts: HostPlaces::new(host_edge, host_port), overrides: HashMap::new() })
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
        let ((edge, own), s) = (self.hosts.place(dst), self.switch[sw as usize]);
        if s.edge == edge {
            out.push(own);
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

    /// Hint the CPU to load the table entry `next_hop(sw, dst, _)` reads (the host's edge
    /// and the switch's record are found now: arithmetic or tables that stay cached,
    /// `HostPlaces`), and the switch's stretch of `ports`, whose place the entry's set
    /// picks: 1.6 MB at k = 74, where that last load of the chain missed as well.
    #[inline(always)]
    pub fn prefetch(&self, sw: u32, dst: HostId) {
        let (Some(edge), Some(s)) = (self.hosts.edge(dst), self.switch.get(sw as usize)) else { return };
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
        let ((edge, own), s) = (self.hosts.place(dst), self.switch[sw as usize]);
        let set = self.set_of(s, edge);
        let n = self.hops[set] as usize;
        // multiply-shift maps the hash onto 0..n without a division
        let pick = ((mix64(h as u64 ^ ((sw as u64) << 32)) as u128 * n as u128) >> 64) as usize;
        let place = s.first as usize + self.hops[set + 1 + pick] as usize;
        debug_assert!(place < self.ports.len());
        // SAFETY: a set's places lie within its switch's stretch of `ports`, and the empty
        // set's pick reads place 0, which the spare last word keeps in range for the last
        // switch
        let (local, up_or_down) = (s.edge == edge, unsafe { *self.ports.get_unchecked(place) });
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
        // more edges than a word of searches holds (162: two whole words and part of a
        // third), and switches with more links than a word of places (70 spines)
        let ft18 = fat_tree::build(fat_tree::FatTreeShape::k_ary(18), (1, SimTime(1)), (1, SimTime(1)), (1, SimTime(1)));
        let wide = clos::build(1, 66, 70, false, (1, SimTime(1)), (1, SimTime(1)));
        let cases: [(&Topology, &dyn Fn(PortId) -> bool); 6] = [(&ft, &no_down), (&clos, &no_down), (&mesh, &no_down), (&ft, &some_down), (&ft18, &no_down), (&wide, &no_down)];
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
    /// Each host's edge index (edge switches numbered as hosts first meet them) and the
    /// edge switch's port toward it, from the topology alone.
    fn places_of(t: &Topology) -> Vec<(u32, PortId)> {
        let mut edges: HashMap<NodeId, u32> = HashMap::new();
        t.hosts
            .iter()
            .map(|&h| {
                let nic = t.nodes[h as usize].ports[0];
                let next = edges.len() as u32;
                let e = *edges.entry(t.peer_node(nic)).or_insert(next);
                (e, t.ports[nic as usize].peer)
            })
            .collect()
    }

    /// Where a host hangs, found by arithmetic on the fabrics that number their hosts edge
    /// by edge, is what the topology says for every host; and the fat trees and Clos
    /// fabrics take the arithmetic (the tables only where the numbering is not regular).
    #[test]
    fn host_places_are_the_topology_s() {
        let link = (1, SimTime(1));
        let mut interleaved = Topology::default();
        let hs: Vec<_> = (0..6).map(|i| interleaved.add_host(format!("h{i}"))).collect();
        let sws: Vec<_> = (0..3).map(|i| interleaved.add_switch(format!("s{i}"))).collect();
        for (i, &h) in hs.iter().enumerate() {
            interleaved.connect(h, sws[i % 2], 1, SimTime(1));
        }
        interleaved.connect(sws[0], sws[2], 1, SimTime(1));
        interleaved.connect(sws[1], sws[2], 1, SimTime(1));
        let cases = [
            (fat_tree::build(fat_tree::FatTreeShape::k_ary(4), link, link, link), true),
            (fat_tree::build(fat_tree::FatTreeShape::k_ary(8), link, link, link), true),
            (fat_tree::build(fat_tree::FatTreeShape::k_ary(10), link, link, link), true),
            (clos::build(6, 4, 3, false, link, link), true),
            (clos::build(5, 3, 2, true, link, link), false),
            (interleaved, false),
        ];
        for (i, (t, regular)) in cases.iter().enumerate() {
            let want = places_of(t);
            // (these fabrics are small: the arithmetic taken whatever the tables' size)
            let (edge, port) = want.iter().copied().unzip();
            let hosts = HostPlaces::new_from(edge, port, 0);
            let got: Vec<_> = (0..t.num_hosts() as u32).map(|h| hosts.place(h)).collect();
            assert_eq!(got, want, "case {i}");
            assert_eq!(matches!(hosts, HostPlaces::Regular { .. }), *regular, "case {i}: {hosts:?}");
            assert_eq!(hosts.edge(t.num_hosts() as u32), None, "case {i}");
            // and the routes built take the tables, as small as these
            let r = Routes::build(t).unwrap();
            assert!(matches!(r.hosts, HostPlaces::Table { .. }), "case {i}");
            assert_eq!((0..t.num_hosts() as u32).map(|h| r.hosts.place(h)).collect::<Vec<_>>(), want, "case {i}");
        }
    }

    /// A fabric of 65,536 hosts (a Clos of 256 ToRs, one spine: cheap to route) has tables
    /// of `ARITHMETIC_FROM` bytes, and its routes take the arithmetic, which finds every
    /// host where the topology has it.
    #[test]
    fn a_fabric_of_65536_hosts_finds_its_hosts_by_arithmetic() {
        let t = clos::build(256, 256, 1, false, (1, SimTime(1)), (1, SimTime(1)));
        let r = Routes::build(&t).unwrap();
        assert!(matches!(r.hosts, HostPlaces::Regular { per: 256, .. }));
        let want = places_of(&t);
        assert!((0..t.num_hosts() as u32).all(|h| r.hosts.place(h) == want[h as usize]));
        assert_eq!(r.path(&t, 0, 65_535, 9).len(), 4);
    }

    proptest::proptest! {
        /// The reciprocal's high word is the quotient for every 32-bit host id and count.
        #[test]
        fn the_reciprocal_divides_exactly(per in 2u32.., h: u32) {
            proptest::prop_assert_eq!(quotient(reciprocal(per), h), h / per);
        }
    }

    #[test]
    fn the_reciprocal_divides_exactly_at_the_edges() {
        for per in [2, 3, 4, 7, 37, 64, 65_537, u32::MAX / 2 + 1, u32::MAX - 1, u32::MAX] {
            for h in [0, 1, per - 1, per, per.wrapping_mul(2).wrapping_sub(1), u32::MAX - 1, u32::MAX] {
                assert_eq!(quotient(reciprocal(per), h), h / per, "{h} / {per}");
            }
        }
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

    /// Bit `j` of word `i` becomes bit `i` of word `j`.
    #[test]
    fn transpose64_transposes() {
        let mut a = [0u64; 64];
        for (i, x) in a.iter_mut().enumerate() {
            *x = mix64(i as u64 + 1);
        }
        let before = a;
        transpose64(&mut a);
        for i in 0..64 {
            for j in 0..64 {
                assert_eq!(a[j] >> i & 1, before[i] >> j & 1, "bit {j} of word {i}");
            }
        }
    }
}
