//! Network: packets, the fabric graph, topology builders and ECMP routing.
pub mod clos;
pub mod dumbbell;
pub mod fat_tree;
pub mod packet;
pub mod partition;
pub mod port;
pub mod routing;
pub mod topology;

pub use packet::{Ecn, FlowId, Frame, HopTelemetry, HostId, Msg, NodeId, Packet, PacketArena, PktId, PktKind, PortId, MAX_TELEMETRY_HOPS, TELEMETRY_BYTES_PER_PACKET};
pub use routing::Routes;
pub use topology::{NodeKind, Topology};
