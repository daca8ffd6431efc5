//! How a run ended: the reason every layer that can end a run names (the engine's event
//! loop, a mechanism's fabric-wide check such as PFC's deadlock watch), kept at the bottom
//! so that a mechanism can end a run without knowing the engine.

/// Why a run ended (the summary's `end_reason`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// Every flow finished.
    Completed,
    /// The max_time limit was reached.
    MaxTime,
    /// Nothing left to happen but flows are unfinished (e.g. lost UDP datagrams).
    Idle,
    /// A cycle of egress queues stayed PFC-paused on each other (see `Sim::deadlock`).
    Deadlock,
}

impl EndReason {
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Completed => "completed",
            EndReason::MaxTime => "max_time",
            EndReason::Idle => "idle",
            EndReason::Deadlock => "deadlock",
        }
    }
}
