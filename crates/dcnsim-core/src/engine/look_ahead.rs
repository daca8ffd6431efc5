//! The look-ahead: prefetching what the next events will touch, on fabrics whose records
//! outgrow the cache (docs/performance.md, "Cache layout and look-ahead").

use super::{Ev, Sim};
use crate::net::{HostId, PktId, PktKind, PortId};
use crate::host::prefetch_record;
use crate::sim::prefetch;
use crate::switch::mechanism::Caps;

/// How far ahead the look-ahead of large fabrics fetches an arrival's packet record and
/// egress state, or a TxDone's queues (`peek_ahead` index: 5 is the sixth event after the
/// one being handled), then (`THEN_AHEAD`, through the lines those fetched) the host's flow
/// record an arrival at a NIC reads, the route-table entry a switch's arrival reads for the
/// switch after, or a TxDone's FIFO head entry. At k = 20, with the record fetched one event
/// (about 120 ns) before its first read, that read held a fifth of the event loop's
/// samples; fetched three events before, 4%. Eight and four ahead were slower again (k = 20
/// 1.09x the wall time of six and three): lines evicted or fill buffers full before use.
/// The second stage reads the packet record (its destination, its flow): three events
/// after the first, that read still stalled (a tenth of the loop's samples at k = 20); four
/// after, k = 20 ran 0.965 and k = 16 0.956 of the wall time (2026-11-23).
const PKT_AHEAD: usize = 5;
const THEN_AHEAD: usize = 1;
/// The port state (`Egress` and `PktQueue` records, 128 bytes a port with one queue) from
/// which the large look-ahead runs (`LookAhead::Large`). Its staged loads pay where the
/// run's data outgrows the last-level cache and its misses go to memory; while that data
/// fits, the out-of-order core hides the misses to the last level about as well, and the
/// look-ahead's 40-50 instructions an event only add to the run. Measured on the 2-core VM
/// (32 MB L3, alternating pairs, 2026-12-01): the small look-ahead took k = 16 (786 KB of
/// port state, 21 MB peak RSS) 0.934 of the large one's time and k = 20 for 1 ms
/// (1.5 MB, 27 MB) 0.968; k = 24 for 1 ms (2.5 MB, 43 MB) 1.102, k = 28 1.384, k = 32
/// 1.416. (Until then the gate was 512 KB, set when the hot records were larger and the
/// engine fetched less on its own.)
pub(super) const LARGE_FROM: usize = 2 << 20;
/// The port state from which the small look-ahead runs; below it, none. A fabric this small
/// keeps its records in a core's L2, where the prefetches find their lines already in and
/// cost only their instructions and the registers the event loop gives up to them.
/// Measured on the 2-core VM against no look-ahead (alternating pairs, 2026-12-01, a Xeon
/// with 2 MB of L2 a core and 260 MB of L3): none took the k = 8 bench (98 KB) 0.852 of the small
/// one's time (16 pairs, 15 of them below 1; 5.6% fewer instructions), a k = 12 fat tree
/// (332 KB, 1 ms of the same load) 0.999 (8 pairs, 0.92-1.47) and the k = 16 bench
/// (786 KB) 1.268 (6 pairs, 1.06-1.37).
pub(super) const SMALL_FROM: usize = 256 << 10;

/// How much of the next events' memory the event loop fetches ahead (`Sim::look_ahead`),
/// chosen once from the fabric's port state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LookAhead {
    /// Below `SMALL_FROM`: nothing.
    Off,
    /// The event after next's packet and egress state.
    Small,
    /// From `LARGE_FROM`: staged loads several events ahead.
    Large,
}

impl LookAhead {
    /// The look-ahead for `port_state` bytes of `Egress` and `PktQueue` records.
    pub(super) fn for_port_state(port_state: usize) -> LookAhead {
        match port_state {
            s if s >= LARGE_FROM => LookAhead::Large,
            s if s >= SMALL_FROM => LookAhead::Small,
            _ => LookAhead::Off,
        }
    }
}
/// Ports with at most this many queues have them all fetched ahead of a TxDone, and their
/// FIFO heads; with more, which queue the scheduler serves is too open to guess.
const QUEUES_AHEAD: usize = 2;

impl Sim {
    /// Prefetch what the next events will touch: an arrival's packet record, its port and
    /// (at a switch) the egress record and queues of the route it carries, a few events
    /// ahead; then, for an arrival at a NIC, the flow record and the host's. On large fabrics those records
    /// outgrow the cache, and each is otherwise a stall. An arrival carries its route from
    /// the hop before (`route_beyond`), so fetching its egress state waits on no packet
    /// record and no route table.
    #[inline(always)]
    pub(super) fn look_ahead(&mut self) {
        match self.look_ahead {
            LookAhead::Off => {}
            LookAhead::Small => self.look_ahead_small(),
            LookAhead::Large => self.look_ahead_large(),
        }
    }

    /// The event after next: its packet, and the egress record and queues it joins (a
    /// switch's: the route it carries; a host's: the NIC its reply joins), which the buffer's
    /// admission test reads first (against the arrival port's record alone, 2026-12-01:
    /// k = 16 0.968 of the time, k = 20 0.94, k = 8 the same).
    #[inline(always)]
    fn look_ahead_small(&mut self) {
        if let Some(&Ev::Arrive { pkt, port, route }) = self.q.peek_ahead(1) {
            self.pkts.prefetch(pkt);
            self.prefetch_egress(if route != PortId::MAX { route } else { port });
        }
        if let Some(&Ev::TxDone { port }) = self.q.peek_ahead(0) {
            prefetch(&self.egress, port);
        }
    }

    /// Staged loads several events ahead (`PKT_AHEAD`, then `THEN_AHEAD`), then what the
    /// next event itself reads beyond its packet and port.
    #[inline(always)]
    fn look_ahead_large(&mut self) {
        match self.q.peek_ahead(PKT_AHEAD) {
            Some(&Ev::Arrive { pkt, port, route }) => {
                self.pkts.prefetch(pkt);
                // at a host, the NIC's record and queues, which an ACK or the segment it
                // releases joins
                self.prefetch_egress(if route != PortId::MAX { route } else { port });
            }
            Some(&Ev::TxDone { port }) => self.prefetch_egress(port),
            _ => {}
        }
        match self.q.peek_ahead(THEN_AHEAD) {
            Some(&Ev::Arrive { pkt, port, route }) => {
                if route != PortId::MAX {
                    self.prefetch_route_beyond(route, pkt);
                } else {
                    let w = &self.egress.at(port).wire;
                    if !w.is_switch {
                        self.flows.prefetch(self.pkts.get(pkt).flow);
                        // the host's record, which its reply's NIC reads, and its ready
                        // lists, which the transmitter asks whether more waits once the
                        // reply leaves (`has_backlog`): a miss on 2.8% of k = 74's samples
                        prefetch(&self.hosts, w.owner);
                        self.ready.prefetch(w.owner);
                    }
                }
            }
            Some(&Ev::TxDone { port }) => {
                if self.cfg.queues <= QUEUES_AHEAD {
                    self.queues.prefetch_heads(port);
                }
                // at a NIC, the record of the flow it serves next, whose sender that
                // record names
                if let Some(s) = self.nic_next_flow(port) {
                    prefetch_record(self.flows.at(s));
                }
            }
            _ => {}
        }
        match self.q.peek_ahead(0) {
            Some(&Ev::Arrive { pkt, port, route: PortId::MAX }) => {
                let h = &self.egress.at(port).wire;
                if !h.is_switch {
                    let p = self.pkts.get(pkt);
                    if p.kind == PktKind::Ack {
                        if let Some(f) = self.flows.get(p.flow) {
                            f.prefetch_sender();
                        }
                    }
                }
            }
            Some(&Ev::TxDone { port }) => {
                prefetch(&self.egress, port);
                // a frame that crosses to another partition takes its packet record along
                // (`cross`), which a switch's dequeue otherwise leaves unread: that read
                // was 3% of k = 74's samples on two threads. (A run not split reads no
                // egress record here: on one thread that read, the record perhaps not yet
                // in, took k = 74 1.03x the time.)
                if self.part.is_some() && self.egress.at(port).wire.crosses_to().is_some() && self.cfg.queues <= QUEUES_AHEAD {
                    for pkt in self.queues.heads(port) {
                        self.pkts.prefetch(pkt);
                    }
                }
                // the next flow's sender, which the NIC's next segment reads (its window,
                // its pacing): a stall of a fifth of `try_tx` at k = 74 before
                if let Some(s) = self.nic_next_flow(port) {
                    self.flows.at(s).prefetch_sender();
                }
            }
            _ => {}
        }
    }

    /// The flow slot a TxDone at `port` would send from next, where `port` is a NIC's
    /// (`ReadyLists::first`).
    #[inline(always)]
    fn nic_next_flow(&self, port: PortId) -> Option<u32> {
        let w = &self.egress.at(port).wire;
        if w.is_switch {
            return None;
        }
        self.ready.first(w.owner)
    }

    /// Prefetch egress `port`'s record and, where there are at most `QUEUES_AHEAD`, its
    /// queues: what a packet joining it, or its transmitter's next TxDone, reads.
    #[inline(always)]
    pub(super) fn prefetch_egress(&self, port: PortId) {
        prefetch(&self.egress, port);
        if self.cfg.queues <= QUEUES_AHEAD {
            for q in 0..self.cfg.queues {
                self.queues.prefetch(port, q);
            }
        }
    }

    /// The route a packet to `dst` with `hash`, sent out of `out`, takes at the switch `out`
    /// leads to (`PortId::MAX` where it leads to a host, or that switch has no route). Found
    /// while the packet's record is at hand, and carried to that switch by the FIFO and the
    /// arrival event: routing is static, so it is the route that switch would find, and the
    /// look-ahead fetches its egress state with no packet record or route table in the way.
    #[inline(always)]
    pub(super) fn route_beyond(&self, out: PortId, dst: HostId, hash: u32) -> PortId {
        let w = &self.egress.at(out).wire;
        // a router chooses by the state it finds when the packet arrives
        if !w.peer_is_switch || self.mechs.acts_at(Caps::ROUTE) {
            return PortId::MAX;
        }
        self.routes.next_hop(w.peer_owner, dst, hash).unwrap_or(PortId::MAX)
    }

    /// Prefetch the route-table entry `route_beyond(out, ..)` will read for packet `pkt`
    /// (whose record the look-ahead fetched before).
    #[inline(always)]
    pub(super) fn prefetch_route_beyond(&self, out: PortId, pkt: PktId) {
        let w = &self.egress.at(out).wire;
        if w.peer_is_switch {
            self.routes.prefetch(w.peer_owner, self.pkts.get(pkt).dst);
        }
    }
}
