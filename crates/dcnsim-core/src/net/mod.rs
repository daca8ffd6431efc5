//! Network: packets, the fabric graph, topology builders and ECMP routing.
pub mod clos;
pub mod dumbbell;
mod fifo;
pub mod fat_tree;
pub mod link;
pub mod packet;
pub mod partition;
pub mod per_flow;
pub mod port;
pub mod queue;
pub mod routing;
pub mod scheduler;
pub mod topology;
pub mod wire;
pub mod zeroed;

pub use packet::{Ecn, FlowId, Frame, HopTelemetry, HostId, Msg, NodeId, Packet, PacketArena, PktId, PktKind, PortId, Sack, MAX_SACK_BLOCKS, MAX_TELEMETRY_HOPS, TELEMETRY_BYTES_PER_PACKET};
pub use per_flow::PerFlow;
pub use queue::{DropReason, InputMemory, MarkReason, PktQueue, PortQueues, QueueStats};
pub use link::{LinkChange, LinkState};
pub use routing::Routes;
pub use scheduler::{SchedSnapshot, SchedState, Scheduler};
pub use topology::{NodeKind, Topology};
