//! The engine's events: what a port, a host, a flow or a mechanism waits for, and their
//! canonical tie-break (`sim::event::Tie`), which makes a split run order equal-time
//! events as one thread does (docs/parallel.md).

use crate::net::{FlowId, PktId, PortId};
use crate::switch::MechTimer;

#[derive(Copy, Clone, Debug)]
pub(super) enum Ev {
    /// A packet has been fully received through `port` (the receiving end); at a switch,
    /// `route` is its egress there, found at the hop before (`Sim::route_beyond`), or
    /// `PortId::MAX`.
    Arrive {
        port: PortId,
        pkt: PktId,
        route: PortId,
    },
    /// The transmitter of `port` finished a packet and has more to send.
    TxDone {
        port: PortId,
    },
    /// The next pending flow spec starts.
    NextArrival,
    Rto {
        flow: FlowId,
        gen: u32,
    },
    UdpSend {
        flow: FlowId,
    },
    /// A paced flow may send again.
    Pace {
        flow: FlowId,
        gen: u32,
    },
    /// A flow a mechanism held at its NIC may send again.
    Unhold {
        flow: FlowId,
    },
    /// Sample every switch queue's depth.
    Sample,
    /// Link change `SimConfig::link_changes[i]` happens.
    Link(u32),
    /// The routes follow link change `i` (`SimConfig::reroute_after` after it).
    Reroute(u32),
    /// A switch mechanism's timer.
    Mech(MechTimer),
    /// The receiver of `flow` grants its sender more credit (`host::credit`).
    Credit { flow: FlowId },
    /// Host `host`'s RCCC pull pacer's turn (`host/rccc.rs`).
    Pull { host: u32 },
}

/// Equal-time events run by kind (this order), then by where they happen: the port, flow
/// or mechanism place they name (`Tie`). Queue samples come first, so that a sample at t
/// sees every queue as the events before t left it; flow starts next.
impl crate::sim::event::Tie for Ev {
    #[inline(always)]
    fn tie(&self) -> u64 {
        const K: u32 = 60;
        match *self {
            Ev::Sample => 0,
            Ev::NextArrival => 1 << K,
            Ev::Mech(t) => 2 << K | t.tie(),
            Ev::Arrive { port, .. } => 3 << K | port as u64,
            Ev::TxDone { port } => 4 << K | port as u64,
            Ev::Rto { flow, .. } => 5 << K | flow as u64,
            Ev::Pace { flow, .. } => 6 << K | flow as u64,
            Ev::UdpSend { flow } => 7 << K | flow as u64,
            Ev::Unhold { flow } => 8 << K | flow as u64,
            Ev::Link(i) => 9 << K | i as u64,
            Ev::Reroute(i) => 10 << K | i as u64,
            Ev::Credit { flow } => 11 << K | flow as u64,
            Ev::Pull { host } => 12 << K | host as u64,
        }
    }
}

impl Ev {
    /// The flow whose id its tie key holds (`Tie`), if any: a split run with local flow ids
    /// orders flow starts by the key with that id as one thread numbers the flow
    /// (engine/parallel.rs, `Numbering`).
    pub(super) fn tie_flow(&self) -> Option<FlowId> {
        match *self {
            Ev::Rto { flow, .. } | Ev::Pace { flow, .. } | Ev::UdpSend { flow } | Ev::Unhold { flow } | Ev::Credit { flow } => Some(flow),
            _ => None,
        }
    }
}
