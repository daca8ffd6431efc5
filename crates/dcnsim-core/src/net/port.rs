//! Runtime state of one egress port: the transmitter, its control frames and the scheduler
//! state. Hosts and switches both have them. The port's queues (one per traffic class)
//! live in one array for all ports, at `port * queues + class` (`switch::PortQueues`): their
//! address follows from the port alone, so the event loop can prefetch a queue before it
//! has read the port's record.

use crate::net::{PktId, PortId};
use crate::sim::{ser_time, SimTime};
use crate::switch::SchedState;
use std::collections::VecDeque;

/// How a port is wired, read for every packet it sends or receives: the peer port, the
/// owning node, the serialization rate and the delay to the peer.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct PortWire {
    /// Where frames from this port arrive.
    pub peer: PortId,
    /// The owning node's switch or host index (`is_switch` says which).
    pub owner: u32,
    /// Picoseconds per byte when the rate divides 8e12 exactly (every standard Ethernet
    /// rate does), else the rate in bit/s with `INEXACT` set, and serialization falls back
    /// to the exact division (one field: the record stays 32 bytes).
    pub ser_rate: u64,
    /// Propagation plus static switch latency to the peer.
    pub arrive_delay: SimTime,
    pub is_switch: bool,
}

impl PortWire {
    const INEXACT: u64 = 1 << 63;
    /// The `ser_rate` of a link of `rate_bps`.
    pub fn ser_rate(rate_bps: u64) -> u64 {
        match 8_000_000_000_000u64 % rate_bps {
            0 => 8_000_000_000_000 / rate_bps,
            _ => rate_bps | Self::INEXACT,
        }
    }
    /// Time to serialize `bytes`.
    #[inline]
    pub fn ser(&self, bytes: u64) -> SimTime {
        if self.ser_rate & Self::INEXACT == 0 {
            SimTime(bytes * self.ser_rate)
        } else {
            ser_time(bytes, self.ser_rate & !Self::INEXACT)
        }
    }
}

/// In memory order: what every packet through the port reads (depth, transmitter state,
/// whether control frames wait, the wiring) in the first cache line, the control frames
/// themselves and the scheduler state after it. One line per port and packet: on large
/// fabrics the port records outgrow the cache, and the wiring in a record of its own cost
/// a second miss at every hop.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Egress {
    /// Bytes in all queues of the port.
    pub bytes: u64,
    /// The transmitter is busy until this time.
    pub busy_until: SimTime,
    /// Time of the live TxDone event for this port, `SimTime::MAX` when none is queued. Any
    /// other TxDone for the port is stale (the port already moved on) and ignored.
    pub txdone_at: SimTime,
    /// Frames in `ctrl`, where the hot path can read it without the queue's cache line.
    ctrl_len: u32,
    pub wire: PortWire,
    /// Link-local MAC control frames (PAUSE, PFC, CIP): sent before any queued packet,
    /// never gated.
    ctrl: VecDeque<PktId>,
    pub sched: SchedState,
}

impl Default for Egress {
    fn default() -> Self {
        Egress { bytes: 0, busy_until: SimTime::ZERO, txdone_at: SimTime::MAX, ctrl_len: 0, wire: PortWire::default(), ctrl: VecDeque::new(), sched: SchedState::default() }
    }
}

impl Egress {
    /// A port wired as `wire`, idle and empty.
    pub fn new(wire: PortWire) -> Self {
        Egress { wire, ..Egress::default() }
    }
    /// Queue a control frame behind those already waiting.
    pub fn push_ctrl(&mut self, id: PktId) {
        self.ctrl.push_back(id);
        self.ctrl_len += 1;
    }
    /// The next control frame to send, if one waits.
    #[inline]
    pub fn pop_ctrl(&mut self) -> Option<PktId> {
        if self.ctrl_len == 0 {
            return None;
        }
        self.ctrl_len -= 1;
        self.ctrl.pop_front()
    }
    /// Whether a control frame waits.
    #[inline(always)]
    pub fn has_ctrl(&self) -> bool {
        self.ctrl_len > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    /// What the hot path reads of a port is one cache line; it serializes at any rate.
    #[test]
    fn hot_fields_share_the_first_cache_line() {
        assert_eq!((std::mem::size_of::<PortWire>(), std::mem::align_of::<Egress>()), (32, 64));
        // the control frames and the scheduler state fill the second line, no third
        assert_eq!(std::mem::size_of::<Egress>(), 128);
        for end in
            [offset_of!(Egress, bytes) + 8, offset_of!(Egress, busy_until) + 8, offset_of!(Egress, txdone_at) + 8, offset_of!(Egress, ctrl_len) + 4, offset_of!(Egress, wire) + 32]
        {
            assert!(end <= 64, "a hot field ends at byte {end}");
        }
        for rate in [100_000_000_000u64, 25_000_000_000, 3_000_000_000, 7] {
            let w = PortWire { ser_rate: PortWire::ser_rate(rate), ..PortWire::default() };
            assert_eq!(w.ser(1500), ser_time(1500, rate), "{rate} bit/s");
        }
    }

    #[test]
    fn control_frames_leave_in_order_and_are_counted() {
        let mut e = Egress::default();
        assert!(!e.has_ctrl() && e.pop_ctrl().is_none());
        e.push_ctrl(7);
        e.push_ctrl(9);
        assert!(e.has_ctrl());
        assert_eq!((e.pop_ctrl(), e.pop_ctrl(), e.pop_ctrl()), (Some(7), Some(9), None));
        assert!(!e.has_ctrl());
    }
}
