//! Runtime state of one egress port: the transmitter, its control frames and the scheduler
//! state. Hosts and switches both have them. The port's queues (one per traffic class)
//! live in one array for all ports, at `port * queues + class` (`switch::PortQueues`): their
//! address follows from the port alone, so the event loop can prefetch a queue before it
//! has read the port's record.

use crate::net::PktId;
use crate::sim::SimTime;
use crate::switch::SchedState;
use std::collections::VecDeque;

/// In memory order: what every packet through the port reads (depth, transmitter state,
/// control frames) in the first cache line, the scheduler state in the second.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct Egress {
    /// Bytes in all queues of the port.
    pub bytes: u64,
    /// The transmitter is busy until this time.
    pub busy_until: SimTime,
    /// Time of the live TxDone event for this port, if one is queued. Any
    /// other TxDone for the port is stale (the port already moved on) and ignored.
    pub txdone_at: Option<SimTime>,
    /// Link-local MAC control frames (PAUSE, PFC, CIP): sent before any queued packet,
    /// never gated.
    pub ctrl: VecDeque<PktId>,
    pub sched: SchedState,
}
