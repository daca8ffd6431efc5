//! Switch models: output-queued shared-memory switch with several queues per
//! egress port, buffer admission, ECN marking and egress scheduling.
pub mod buffer;
pub mod ci;
pub mod ecn;
pub mod pfc;
pub mod queue;
pub mod scheduler;

pub use buffer::{BufferParams, SwitchBuffer};
pub use ecn::Red;
pub use queue::{DropReason, MarkReason, PktQueue, QueueStats};
pub use scheduler::{SchedState, Scheduler};
