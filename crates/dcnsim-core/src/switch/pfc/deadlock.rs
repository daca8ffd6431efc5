//! PFC deadlock detection (Hu et al., "Deadlocks in Datacenter Networks: Why Do They Form,
//! and How to Avoid Them", HotNets 2016): a cycle of egress queues, each paused and each
//! waiting on the next to drain what its pause protects, checked on the synchronisation
//! grid so that a split run finds the same cycle.

use super::Pfc;
use crate::switch::mechanism::WaitFor;
use crate::switch::pipeline::Ctx;
use crate::net::{PktId, Topology};
use crate::sim::SimTime;

impl Pfc {
    /// The wait-for graph of the deadlock check at `now`, of the nodes `own` holds. A
    /// vertex is a paused egress queue (port p, class c), the port's transmitter paused
    /// throughout the last `deadlock_after`; it waits on the egress queues of the node at
    /// the far end of p that hold packets which entered through p's peer in class c, or
    /// that such packets held at that node's input wait for (what p's pause protects: the
    /// pause ends when they drain), an edge only to a queue that is
    /// itself a vertex. Paused queues whose protected packets wait for a slow but moving
    /// port are not deadlocked, however long the pause. A vertex's out-edges are computed
    /// where its far-end node is held; only nodes with a waiting port can have any.
    pub(super) fn wait_for(&self, now: SimTime, own: &dyn Fn(u32) -> bool, cx: &Ctx) -> WaitFor {
        let since = SimTime(now.0.saturating_sub(self.p.deadlock_after.0));
        let classes = if self.p.link_mode { 1 } else { cx.queues };
        let link_mode = self.p.link_mode;
        let long_paused = |p: usize, c: usize| self.paused[p].paused_since(c, since, now);
        let mut view = WaitFor::default();
        for (n, node) in cx.topo.nodes.iter().enumerate() {
            if !own(n as u32) {
                continue;
            }
            let mut waits = false;
            for &q in &node.ports {
                for c in 0..classes {
                    view.any |= self.paused[q as usize].is_paused(c, now);
                    if long_paused(q as usize, c) {
                        view.waiting.push(q * classes as u32 + c as u32);
                        waits = true;
                    }
                }
            }
            if !waits {
                continue;
            }
            // out-edges of the vertices (p, c) whose far end is this node: p is the peer of
            // one of its ports, `entered`
            for &entered in &node.ports {
                let p = cx.topo.ports[entered as usize].peer;
                for c in 0..classes {
                    let mut out = Vec::new();
                    for &q in &node.ports {
                        for (k, queue) in cx.port_queues.of(q).iter().enumerate() {
                            let w = q as usize * classes + if link_mode { 0 } else { k };
                            if out.contains(&(w as u32)) || !long_paused(q as usize, w % classes) {
                                continue;
                            }
                            let protected = |id: PktId| {
                                let pk = cx.pkts.get(id);
                                pk.ingress == entered && (link_mode || pk.tc as usize == c)
                            };
                            // or held at this node's input for that queue (a memory architecture)
                            let held = self.ingress[entered as usize].held.keys().any(|(hc, hq, hk)| hq == q && hk as usize == k && hc as usize == c);
                            if held || queue.ids().any(protected) {
                                out.push(w as u32);
                            }
                        }
                    }
                    if !out.is_empty() {
                        view.edges.push((p * classes as u32 + c as u32, out));
                    }
                }
            }
        }
        view
    }

    /// The first cycle of the wait-for graph that `views` make up, walked depth first from
    /// the vertices in ascending order: its paused queues as "node:port:class".
    pub(super) fn find_cycle(&self, views: &[WaitFor], topo: &Topology) -> Option<Vec<String>> {
        let classes = if self.p.link_mode { 1 } else { self.queues };
        let n = topo.ports.len() * classes;
        let mut waiting = vec![false; n];
        let mut edges: Vec<&[u32]> = vec![&[]; n];
        for v in views {
            for &w in &v.waiting {
                waiting[w as usize] = true;
            }
            for (x, out) in &v.edges {
                edges[*x as usize] = out;
            }
        }
        let succ = |v: usize| -> Vec<usize> { if waiting[v] { edges[v].iter().map(|&w| w as usize).collect() } else { Vec::new() } };
        // iterative DFS; colour 0 new, 1 on stack, 2 done
        let mut colour = vec![0u8; n];
        for start in 0..n {
            if colour[start] != 0 || !waiting[start] {
                continue;
            }
            let mut stack: Vec<(usize, Vec<usize>)> = vec![(start, succ(start))];
            colour[start] = 1;
            while let Some((v, next)) = stack.last_mut() {
                match next.pop() {
                    Some(w) if colour[w] == 1 => {
                        // cycle: the stack from w to the top
                        let pos = stack.iter().position(|(x, _)| *x == w).unwrap();
                        return Some(
                            stack[pos..]
                                .iter()
                                .map(|(x, _)| {
                                    let (p, c) = (x / classes, x % classes);
                                    let info = &topo.ports[p];
                                    format!("{}:{}:{}", topo.nodes[info.node as usize].name, info.local, c)
                                })
                                .collect(),
                        );
                    }
                    Some(w) if colour[w] == 0 => {
                        colour[w] = 1;
                        let s = succ(w);
                        stack.push((w, s));
                    }
                    Some(_) => {}
                    None => {
                        colour[*v] = 2;
                        stack.pop();
                    }
                }
            }
        }
        None
    }
}
