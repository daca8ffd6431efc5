//! Links whose state changes during a run (`net::link`): a failure stops both ends'
//! transmitters and drains their switch queues, a recovery starts them again, a rate change
//! applies from the next frame, and the routes follow after `SimConfig::reroute_after`.

use super::*;

impl Sim {
    /// Link change `i` (`SimConfig::link_changes`): a failed link's transmitters stop for
    /// good (busy until the end of time, which `try_tx` reads as down) and its switch ends
    /// drop what they hold; one that comes back starts again; a rate applies from the next
    /// frame. Every partition of a split run changes both ends in its copy, and acts on the
    /// ends it holds.
    #[cold]
    #[inline(never)]
    pub(super) fn link_change(&mut self, i: usize) {
        use crate::net::LinkState;
        let c = self.cfg.link_changes[i];
        let ends = [c.port, self.topo.ports[c.port as usize].peer];
        // every partition keeps the link's state in both ends' records, wired there or not
        // (`reroute` reads it for every port)
        for p in ends {
            let held = !self.part.as_ref().is_some_and(|part| part.remote(p));
            let eg = &mut self.egress[p as usize];
            match c.state {
                LinkState::Down => {
                    eg.busy_until = SimTime::MAX;
                    if held {
                        self.drain_down(p);
                    }
                }
                LinkState::Up if eg.link_down() => {
                    eg.busy_until = self.now;
                    if held {
                        self.try_tx(p);
                    }
                }
                LinkState::Up => {}
                LinkState::Rate(bps) => {
                    eg.wire.ser_rate = crate::net::port::PortWire::ser_rate(bps);
                    std::sync::Arc::make_mut(&mut self.topo).ports[p as usize].rate_bps = bps;
                }
            }
        }
    }

    /// The routes follow the links as they are now: every partition computes the same.
    #[cold]
    #[inline(never)]
    pub(super) fn reroute(&mut self) {
        let egress = &self.egress;
        self.routes = std::sync::Arc::new(self.routes.without(&self.topo, &|p| egress[p as usize].link_down()));
    }

    /// A switch port whose link is down drops what its queues hold, each packet leaving as
    /// it would have left (its mechanisms see the departure, so their accounting of it ends)
    /// but going nowhere. A NIC keeps its frames until the link is back.
    #[cold]
    #[inline(never)]
    pub(super) fn drain_down(&mut self, port: PortId) {
        let h = self.egress.at(port).wire;
        if !h.is_switch {
            return;
        }
        while let Some((pkt, _, _)) = self.switch_dequeue(h.owner, port) {
            let qi = self.pkts.get(pkt).qc as usize;
            self.drop_pkt(pkt, Some((port, qi)), DropReason::LinkDown);
        }
    }

    /// `link_changes` of the summary: each change the run reached, with its link named.
    pub(super) fn link_change_rows(&self) -> Vec<serde_json::Value> {
        use crate::net::LinkState;
        let t = &self.topo;
        let rows = self.cfg.link_changes.iter().filter(|c| c.at <= self.now).map(|c| {
            let p = &t.ports[c.port as usize];
            let (state, rate) = match c.state {
                LinkState::Down => ("down", None),
                LinkState::Up => ("up", None),
                LinkState::Rate(r) => ("rate", Some(r)),
            };
            serde_json::json!({
                "at_ps": c.at.0,
                "link": format!("{}:{}", t.nodes[p.node as usize].name, p.local),
                "peer": t.nodes[t.peer_node(c.port) as usize].name,
                "state": state,
                "rate_bps": rate,
            })
        });
        rows.collect()
    }
}
