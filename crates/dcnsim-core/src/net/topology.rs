//! The fabric as a graph: nodes (hosts and switches) joined by full-duplex
//! links. Each link is two ports, one per end; a port is the egress side of
//! that end. Ids are dense integers: indices into the node and port arrays.

use super::packet::{HostId, NodeId, PortId};
use crate::sim::SimTime;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

/// A host or switch.
#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    pub name: String,
    /// Host index or switch index, depending on `kind`.
    pub index: u32,
    pub ports: Vec<PortId>,
}

/// Static description of one port (the egress direction of one link end).
#[derive(Clone, Debug)]
pub struct PortInfo {
    pub node: NodeId,
    /// The port at the other end of the link (where this port's frames arrive).
    pub peer: PortId,
    pub rate_bps: u64,
    pub delay: SimTime,
    /// Position of this port in its node's port list.
    pub local: u32,
}

/// Graph of the fabric. Builders in `dumbbell.rs`, `clos.rs`, `fat_tree.rs`, `custom.rs`.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub nodes: Vec<Node>,
    pub ports: Vec<PortInfo>,
    /// Node id of each host, by host index.
    pub hosts: Vec<NodeId>,
    /// Node id of each switch, by switch index.
    pub switches: Vec<NodeId>,
}

impl Topology {
    pub fn add_host(&mut self, name: impl Into<String>) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node { kind: NodeKind::Host, name: name.into(), index: self.hosts.len() as u32, ports: vec![] });
        self.hosts.push(id);
        id
    }
    pub fn add_switch(&mut self, name: impl Into<String>) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node { kind: NodeKind::Switch, name: name.into(), index: self.switches.len() as u32, ports: vec![] });
        self.switches.push(id);
        id
    }
    /// Full-duplex link of the given rate and one-way delay between `a` and `b`.
    pub fn connect(&mut self, a: NodeId, b: NodeId, rate_bps: u64, delay: SimTime) -> (PortId, PortId) {
        let pa = self.ports.len() as PortId;
        let pb = pa + 1;
        let la = self.nodes[a as usize].ports.len() as u32;
        let lb = self.nodes[b as usize].ports.len() as u32;
        self.ports.push(PortInfo { node: a, peer: pb, rate_bps, delay, local: la });
        self.ports.push(PortInfo { node: b, peer: pa, rate_bps, delay, local: lb });
        self.nodes[a as usize].ports.push(pa);
        self.nodes[b as usize].ports.push(pb);
        (pa, pb)
    }
    pub fn num_hosts(&self) -> usize {
        self.hosts.len()
    }
    pub fn num_switches(&self) -> usize {
        self.switches.len()
    }
    /// The single NIC port of a host.
    pub fn host_port(&self, h: HostId) -> PortId {
        self.nodes[self.hosts[h as usize] as usize].ports[0]
    }
    /// Node at the far end of `port`.
    pub fn peer_node(&self, port: PortId) -> NodeId {
        self.ports[self.ports[port as usize].peer as usize].node
    }
    /// Whether the far end of `port` is a host (the port is a ToR's downlink).
    #[inline]
    pub fn peer_is_host(&self, port: PortId) -> bool {
        self.nodes[self.peer_node(port) as usize].kind == NodeKind::Host
    }
}
