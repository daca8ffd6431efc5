//! Runtime state of the egress ports: the transmitter, its control frames and the scheduler
//! state. Hosts and switches both have them. The port's queues (one per traffic class)
//! live in one array for all ports, at `port * queues + class` (`net::PortQueues`): their
//! address follows from the port alone, so the event loop can prefetch a queue before it
//! has read the port's record.

use crate::net::{PktId, PortId};
use crate::sim::{ser_time, SimTime};
use crate::net::SchedState;
use super::fifo::Fifo;
use super::zeroed::{ZeroDefault, ZeroedVec};

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
    /// The peer's switch index, when `peer_is_switch`: the switch whose route a packet sent
    /// here takes next (`Sim::route_beyond`).
    pub peer_owner: u32,
    pub is_switch: bool,
    pub peer_is_switch: bool,
    /// Where the peer belongs to another partition of a split run (frames sent here cross
    /// to it: docs/parallel.md), 1 + that partition; 0 where it is here, as in every run
    /// not split (and in the zeroed record of a port not wired). Kept in this record, which
    /// every transmission reads anyway: the per-port table of partitions, read at each
    /// transmission and again where the frame crossed, missed the cache on large fabrics
    /// (k = 74 on two threads: 9% of the run's samples on the first load).
    pub peer_part: u16,
}

impl PortWire {
    const INEXACT: u64 = 1 << 63;
    /// The `peer_part` of a port of partition `me` whose peer is in partition `peer`.
    pub fn peer_part_in(me: u16, peer: u16) -> u16 {
        if peer == me {
            0
        } else {
            1 + peer
        }
    }
    /// The partition frames sent here cross to, where the peer is in another.
    #[inline(always)]
    pub fn crosses_to(&self) -> Option<u16> {
        self.peer_part.checked_sub(1)
    }
    /// The `ser_rate` of a link of `rate_bps`.
    pub fn ser_rate(rate_bps: u64) -> u64 {
        match 8_000_000_000_000u64 % rate_bps {
            0 => 8_000_000_000_000 / rate_bps,
            _ => rate_bps | Self::INEXACT,
        }
    }
    /// Time to serialize `bytes`.
    #[inline(always)]
    pub fn ser(&self, bytes: u64) -> SimTime {
        if self.ser_rate & Self::INEXACT == 0 {
            SimTime(bytes * self.ser_rate)
        } else {
            Self::ser_inexact(bytes, self.ser_rate & !Self::INEXACT)
        }
    }
    /// A rate that is no whole number of picoseconds a byte: the 128-bit division, out of
    /// line (inlined, it made `ser` a call at every transmission).
    #[inline(never)]
    fn ser_inexact(bytes: u64, rate_bps: u64) -> SimTime {
        ser_time(bytes, rate_bps)
    }
}

/// What every packet through a port reads (depth, transmitter state, whether control frames
/// wait, the wiring), in one cache line. On large fabrics the port records outgrow the
/// cache: the wiring in a record of its own cost a second miss at every hop, and the control
/// frames and scheduler state in this record's second line (`PortCtl` now) left its hot
/// lines in half the cache's sets.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Egress {
    /// Bytes in all queues of the port.
    pub bytes: u64,
    /// The transmitter is busy until this time.
    pub busy_until: SimTime,
    /// Time of the live TxDone event for this port, `SimTime::ZERO` when none is queued (no
    /// TxDone is due at time zero: it is a frame's end, a serialization after its start). Any
    /// other TxDone for the port is stale (the port already moved on) and ignored.
    pub txdone_at: SimTime,
    /// Frames in the port's `PortCtl`, where the hot path can read it without that record.
    ctrl_len: u32,
    /// At a host's port: how late (ps) the frames of the current back-to-back run arrive
    /// (`Sim::host_jitter`). In the padding before `wire`: the record stays one line.
    pub jitter: u32,
    pub wire: PortWire,
}

impl Default for Egress {
    fn default() -> Self {
        Egress { bytes: 0, busy_until: SimTime::ZERO, txdone_at: SimTime::ZERO, ctrl_len: 0, jitter: 0, wire: PortWire::default() }
    }
}

// SAFETY: integers, times and flags of zero bytes, each its default
unsafe impl ZeroDefault for Egress {}

impl Egress {
    /// A port wired as `wire`, idle and empty.
    pub fn new(wire: PortWire) -> Self {
        Egress { wire, ..Egress::default() }
    }
    /// Whether its link is down (`net::link`): a failed link's transmitter is busy until
    /// the end of time, which is how `Sim::try_tx` tells.
    #[inline]
    pub fn link_down(&self) -> bool {
        self.busy_until == SimTime::MAX
    }
    /// Whether a control frame waits.
    #[inline(always)]
    pub fn has_ctrl(&self) -> bool {
        self.ctrl_len > 0
    }
}

/// What a port keeps beside its hot record, touched only when control frames are sent or a
/// scheduler other than strict priority serves its queues.
#[derive(Clone, Debug, Default)]
pub struct PortCtl {
    /// Link-local MAC control frames (PAUSE, PFC, CIP): sent before any queued packet,
    /// never gated.
    ctrl: Fifo<PktId>,
    pub sched: SchedState,
}

// SAFETY: a FIFO whose default is a null buffer with no entries, and `SchedState`'s
// (no deficits: `None`, a null box; the first queue; not fresh)
unsafe impl ZeroDefault for PortCtl {}

/// Every port's records, indexed by port: the hot ones (`Egress`, which the type derefs to)
/// in one dense array, their `PortCtl` in another. Both are zeroed tables (`net::zeroed`):
/// a record is resident once written, and a partition of a split run wires only the ports
/// it reads (its own and their peers), so that each does not hold the whole fabric's
/// records (64 B a port: 39 MB a partition at k = 74).
#[derive(Clone, Debug, Default)]
pub struct Ports {
    hot: ZeroedVec<Egress>,
    ctl: ZeroedVec<PortCtl>,
    /// Which records were wired (`wire`): the hot path's reads check it in debug builds,
    /// where an unwired record (all zeros) would be read as a port wired to port 0.
    #[cfg(debug_assertions)]
    wired: Vec<bool>,
}

impl Ports {
    /// `n` ports, none wired yet: each idle and empty, its wiring zeros until `wire`.
    pub fn new(n: usize) -> Ports {
        Ports {
            hot: ZeroedVec::new(n),
            ctl: ZeroedVec::new(n),
            #[cfg(debug_assertions)]
            wired: vec![false; n],
        }
    }
    /// Back the records in 4 KiB pages except the large pages that the records of the ports
    /// in `dense` (ranges of port ids) fill at least half of: a split run's partition
    /// writes only those (`ZeroedVec::back_sparsely`).
    pub fn back_sparsely(&self, dense: &[std::ops::Range<usize>]) {
        self.hot.back_sparsely(dense);
        self.ctl.back_sparsely(dense);
    }
    /// `n` ports wired as `wire(port)` gives.
    pub fn wired(n: usize, wire: impl Fn(usize) -> PortWire) -> Ports {
        let mut p = Ports::new(n);
        for i in 0..n {
            p.wire(i as PortId, wire(i));
        }
        p
    }
    /// Wire `port` (idle and empty) as `wire`.
    pub fn wire(&mut self, port: PortId, wire: PortWire) {
        self.hot[port as usize] = Egress::new(wire);
        #[cfg(debug_assertions)]
        {
            self.wired[port as usize] = true;
        }
    }
    /// Queue a control frame on `port` behind those already waiting.
    pub fn push_ctrl(&mut self, port: PortId, id: PktId) {
        self.ctl[port as usize].ctrl.push_back(id);
        self.hot[port as usize].ctrl_len += 1;
    }
    /// The control frames waiting on `port`, oldest first.
    pub fn pending_ctrl(&self, port: PortId) -> impl Iterator<Item = PktId> + '_ {
        self.ctl[port as usize].ctrl.iter().copied()
    }
    /// The next control frame to send on `port`, if one waits.
    #[inline]
    pub fn pop_ctrl(&mut self, port: PortId) -> Option<PktId> {
        let eg = &mut self.hot[port as usize];
        if eg.ctrl_len == 0 {
            return None;
        }
        eg.ctrl_len -= 1;
        self.ctl[port as usize].ctrl.pop_front()
    }
    /// Both records of `port`, which must be a port of the fabric (an id the engine holds).
    #[inline]
    pub(crate) fn both_mut(&mut self, port: PortId) -> (&mut Egress, &mut PortCtl) {
        debug_assert!((port as usize) < self.hot.len() && self.hot.len() == self.ctl.len());
        #[cfg(debug_assertions)]
        debug_assert!(self.wired[port as usize], "port {port}'s record is not wired here");
        // SAFETY: both arrays have a record for every port of the fabric (`new`), and the
        // engine only holds ids of those ports (see `at`)
        unsafe { (self.hot.get_unchecked_mut(port as usize), self.ctl.get_unchecked_mut(port as usize)) }
    }
    /// The hot record of `port`, a port of the fabric, without a bounds check: the engine
    /// reads it several times per event, and its ids come from the topology's wiring, its
    /// route table and its own events, never from input. Elsewhere, index (`ports[p]`).
    #[inline(always)]
    pub(crate) fn at(&self, port: PortId) -> &Egress {
        debug_assert!((port as usize) < self.hot.len());
        #[cfg(debug_assertions)]
        debug_assert!(self.wired[port as usize], "port {port}'s record is not wired here");
        // SAFETY: `port` is a port of the fabric, and `hot` has a record for each
        unsafe { self.hot.get_unchecked(port as usize) }
    }
    #[inline(always)]
    pub(crate) fn at_mut(&mut self, port: PortId) -> &mut Egress {
        debug_assert!((port as usize) < self.hot.len());
        #[cfg(debug_assertions)]
        debug_assert!(self.wired[port as usize], "port {port}'s record is not wired here");
        // SAFETY: as in `at`
        unsafe { self.hot.get_unchecked_mut(port as usize) }
    }
}

impl std::ops::Deref for Ports {
    type Target = [Egress];
    fn deref(&self) -> &[Egress] {
        &self.hot
    }
}

impl std::ops::DerefMut for Ports {
    fn deref_mut(&mut self) -> &mut [Egress] {
        &mut self.hot
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
        assert_eq!(std::mem::size_of::<Egress>(), 64);
        for end in [
            offset_of!(Egress, bytes) + 8,
            offset_of!(Egress, busy_until) + 8,
            offset_of!(Egress, txdone_at) + 8,
            offset_of!(Egress, ctrl_len) + 4,
            offset_of!(Egress, jitter) + 4,
            offset_of!(Egress, wire) + 32,
        ] {
            assert!(end <= 64, "a hot field ends at byte {end}");
        }
        for rate in [100_000_000_000u64, 25_000_000_000, 3_000_000_000, 7] {
            let w = PortWire { ser_rate: PortWire::ser_rate(rate), ..PortWire::default() };
            assert_eq!(w.ser(1500), ser_time(1500, rate), "{rate} bit/s");
        }
    }

    #[test]
    fn control_frames_leave_in_order_and_are_counted() {
        let mut e = Ports::wired(2, |_| PortWire::default());
        assert!(!e[1].has_ctrl() && e.pop_ctrl(1).is_none());
        e.push_ctrl(1, 7);
        e.push_ctrl(1, 9);
        assert!(e[1].has_ctrl() && !e[0].has_ctrl());
        assert_eq!((e.pop_ctrl(1), e.pop_ctrl(1), e.pop_ctrl(1)), (Some(7), Some(9), None));
        assert!(!e[1].has_ctrl());
    }
}
