//! Switch models: output-queued shared-memory switch with several queues per
//! egress port, buffer admission and egress scheduling, and the mechanisms that act in
//! the switch pipeline (`pipeline`): ECN marking, PFC, Congestion Isolation.
pub mod aqm;
#[cfg(test)]
pub mod bench;
pub mod buffer;
pub mod ci;
pub mod coupled;
pub mod drc;
pub mod dualpi2;
pub mod dualq2015;
pub mod ecn;
mod fifo;
pub mod pfc;
pub mod pi2;
pub mod pipeline;
pub mod qcn;
pub mod queue;
pub mod red;
pub mod scheduler;
pub mod sfc;

pub use buffer::{BufferParams, SwitchBuffer};
pub use ecn::{EcnMarker, Red};
pub use pipeline::{Mechanisms, SwitchState};
pub use queue::{DropReason, MarkReason, PktQueue, PortQueues, QueueStats};
pub use scheduler::{SchedState, Scheduler};
