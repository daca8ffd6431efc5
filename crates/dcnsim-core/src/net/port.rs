//! Runtime state of one egress port: its queues (one per traffic class), the
//! transmitter, and the scheduler state. Hosts and switches both have them.

use crate::net::PktId;
use crate::sim::SimTime;
use crate::switch::{PktQueue, SchedState};
use std::collections::VecDeque;

/// In memory order: what every packet through the port reads (queues, depth, transmitter
/// state) in the first cache line, the control frames and scheduler state in the second.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct Egress {
    pub queues: Vec<PktQueue>,
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

impl Egress {
    pub fn new(queues: usize) -> Egress {
        Egress { queues: vec![PktQueue::default(); queues], ..Default::default() }
    }
}
