//! Links whose state changes during a run: a link that fails, comes back, or runs at a
//! degraded rate, and the routes that follow a failure after a detection delay.

use super::packet::PortId;
use crate::sim::SimTime;

/// What a link becomes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// It carries nothing, either way: frames queued at either end are dropped, and frames
    /// routed to it are dropped until the routes follow. Frames already on the wire when it
    /// fails still arrive (a reading: the failure cuts the transmitters, not the fiber).
    Down,
    /// It works again, at the rate it had.
    Up,
    /// It works at this rate (bit/s) in both directions, from the next frame it starts (a
    /// degraded link, e.g. lanes lost; or its rate restored).
    Rate(u64),
}

/// A change of the link that `port` (either end) belongs to, at `at`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LinkChange {
    pub at: SimTime,
    pub port: PortId,
    pub state: LinkState,
}

impl LinkChange {
    /// Whether the change moves the routes (a rate does not: routing is by hops).
    pub fn reroutes(&self) -> bool {
        !matches!(self.state, LinkState::Rate(_))
    }
}
