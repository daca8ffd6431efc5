//! A test bench for switch mechanisms' hooks: the engine state a hook sees (`Ctx`) on a
//! small dumbbell, with queues filled by hand, so a hook's arithmetic can be checked against
//! a number derived by hand.

use super::pipeline::{Arrival, Ctx, Effect, SwitchState};
use super::{BufferParams, SwitchBuffer};
use crate::net::PortQueues;
use crate::net::port::{PortWire, Ports};
use crate::net::{dumbbell, FlowId, Packet, PacketArena, PktKind, PortId, Topology};
use crate::sim::{stream, SimTime, Stream};

pub const G100: u64 = 100_000_000_000;

/// Hosts h0, h1 on switch "left", h2 on "right", 100G links of 500 ns, one queue per port.
pub struct Bench {
    pub topo: Topology,
    pub egress: Ports,
    /// `queues` per port, as the engine keeps them.
    pub port_queues: PortQueues,
    pub pkts: PacketArena,
    pub switches: Vec<SwitchState>,
    pub fx: Vec<Effect>,
    pub queues: usize,
}

impl Bench {
    pub fn new() -> Bench {
        Bench::with_queues(1)
    }
    pub fn with_queues(queues: usize) -> Bench {
        let topo = dumbbell::build(2, 1, (G100, SimTime::from_ns(500)), (G100, SimTime::from_ns(500)));
        let egress = Ports::wired(topo.ports.len(), |_| PortWire::default());
        let port_queues = PortQueues::new(&topo, queues);
        let switches =
            (0..2).map(|i| SwitchState { buffer: SwitchBuffer::new(BufferParams::Static { queue_cap: 16_000_000 }, 3, 1), rng: stream(1, Stream::SwitchAqm, i) }).collect();
        Bench { topo, egress, port_queues, pkts: PacketArena::new(), switches, fx: Vec::new(), queues }
    }
    /// The port of node `from` that leads to node `to`.
    pub fn port(&self, from: &str, to: &str) -> PortId {
        let node = |n: &str| self.topo.nodes.iter().position(|x| x.name == n).unwrap() as u32;
        let (f, t) = (node(from), node(to));
        *self.topo.nodes[f as usize].ports.iter().find(|&&p| self.topo.peer_node(p) == t).unwrap()
    }
    pub fn cx(&mut self, now: SimTime) -> Ctx<'_> {
        Ctx {
            now,
            topo: &self.topo,
            egress: &self.egress,
            port_queues: &self.port_queues,
            pkts: &mut self.pkts,
            switches: &mut self.switches,
            queues: self.queues,
            fx: &mut self.fx,
            violations: None,
        }
    }
    /// A data packet of `flow` (1086 B, ECT(0)) from host `src` to host `dst`, arriving
    /// through `in_port` for queue 0 of `out`, which holds `depth` bytes.
    pub fn data(&mut self, flow: FlowId, src: u32, dst: u32, in_port: PortId, out: PortId, depth: u64) -> Arrival {
        let pkt = self.pkts.alloc(Packet { kind: PktKind::Data, flow, src, dst, size: 1086, payload: 1024, hash: 7, ecn: crate::net::Ecn::Ect0, ..Packet::blank() });
        self.port_queues.get_mut(out, 0).bytes = depth;
        let sw = self.topo.nodes[self.topo.ports[out as usize].node as usize].index;
        Arrival::new(sw, in_port, out, pkt, 1086, 7, crate::net::Ecn::Ect0, 0, 0)
    }
}
