//! Congestion Isolation (IEEE P802.1Qcz; seed 000: Congdon, "P802.1Qcz
//! Congestion Isolation", IETF 101, 2018; seed 003: Shen & Sun, "Simulation
//! Analysis of Congestion Isolation", IEEE 802.1, Jan 2018).
//!
//! Per egress port a bridge keeps a table of congested flows. Reading of the
//! seeds (seed 003 "Compared Solutions", seed 000 "Congestion Isolation"
//! steps 1-4), as implemented here:
//! 1. Identify and isolate locally: a packet of the CI traffic class arriving
//!    to the non-congested queue isolates its flow with a probability that
//!    rises linearly from 0 at `low` to `pmax` at `high` of the non-congested
//!    queue's depth, and with certainty above `high` (the RED reading of
//!    "CI: Low 10 KB, High 300 KB, Max Probability 1%").
//! 2. Packets of isolated flows join the congested queue of the same port. A
//!    flow's packets already in the non-congested queue leave first: the
//!    congested queue's head waits while its flow still has packets there.
//!    ECN ("ECN is marked once a packet is isolated"), `CiMark::QueueEcn`,
//!    the default: the packet whose arrival isolates its flow is CE-marked
//!    (isolation takes the place of RED's mark on the non-congested queue,
//!    with the same Low/High/Pmax ramp), and packets in the congested queue
//!    are marked by the switch's ECN rule on that queue's depth, as any
//!    queue is. `CiMark::EveryIsolated` marks every packet of an isolated
//!    flow whatever the congested queue holds: the literal reading, which
//!    drives rate-based senders (DCQCN) far below their share for as long as
//!    the flow stays isolated (docs/reproductions.md, "elephants").
//! 3. Signal: when a packet of an isolated flow arrives in the non-congested
//!    class (its upstream has not isolated it) and finds the congested queue
//!    above `cip_threshold`, a Congestion Isolation Packet naming the flow goes
//!    to the upstream peer it came from; the upstream bridge (or NIC) isolates
//!    the flow in its egress toward this bridge. A CIP is repeated only when
//!    the flow still arrives in the non-congested class a round trip of that
//!    link after the last one (seed 000: "no adverse effects of single packet
//!    loss", "low overhead").
//! 4. Last resort: PFC on the congested queue's traffic class. A packet in the
//!    congested queue counts toward PFC in the congested class when its
//!    upstream can isolate (a CI bridge, or a NIC that honours CIPs, with
//!    signalling on), so XOFF pauses the upstream's congested queue and never
//!    its non-congested one; what the upstream still sends in the
//!    non-congested class before the CIP lands in the headroom. Without
//!    signalling it counts in the class it arrived in (the only one the
//!    upstream can pause).
//!
//! A flow isolated here (a local entry) is released when the congested queue has held none
//! of its packets for `release_after` (the time-based rule; the seeds leave it open).
//!
//! IEEE Std 802.1Qcz-2023 (clause 49 of 802.1Q; names and defaults from its YANG modules
//! `ieee802-dot1q-congestion-isolation` and `ieee802-dot1q-lldp-ci-tlv`, revision
//! 2023-07-03) fixes what the seeds left open about the signal, and is the default:
//! - the Congestion Isolation Message (CIM, EtherType 0x89A2) carries the first
//!   `cim_encap` octets of the offending frame's MSDU (`min-header-octets`, default 48);
//!   its header is not public: we take the 802.1Qau CNM's (MAC addresses, VLAN tag and
//!   EtherType 18 B, PDU header 24 B, FCS 4 B), so 94 B on the wire by default;
//! - it is sent at priority 6 (`ci-cim-tx-priority`): here ahead of the data queues, as a
//!   strict-priority class 6 that carries nothing else would send it;
//! - at most `cim_max` CIMs per congesting flow (`max-cim-tx`, default 3; 0 = no limit,
//!   the earlier reading), still at most one per round trip of the link;
//! - an entry created by a received CIM stays until the congesting queue has been
//!   non-congested (below `low`) for `max_flow_life` (`ci-max-flow-life`, 100
//!   centiseconds = 1 s); `cim_release = "flow_idle"` applies the local rule instead
//!   (the earlier reading);
//! - an end station that honours CIMs (clause 5.32, whose text is not public) ages its
//!   isolation out too: here `max_flow_life` after the last CIM for the flow (its NIC has
//!   no congesting-queue state in this model); "flow_idle" keeps it for good.
//! The queue map (which queue is monitored, which is congesting) is `queue` /
//! `congested_queue` for the one CI-managed priority; the scheduler between them is the
//! switch's (`scheduler = "strict"` serves the monitored queue first, the seed's "pause for
//! low priority queue takes longer time to resume").
//! Baseline "without CI" (seed 003): flows hashed by destination onto the same
//! two queues.

use super::ecn::Red;
use super::mechanism::{Caps, Fabric, Never, SwitchMechanism, Verdict};
use super::pipeline::{AqmRule, Arrival, Better, Ctx, Departure, Effect, Report};
use super::{Frame, MechTimer};
use crate::net::PktQueue;
use crate::metrics::{ColumnData as C, Outputs};
use crate::net::{FlowId, NodeKind, PacketArena, PortId, Topology};
use crate::sim::rng::mix64;
use crate::sim::{ser_time, SimTime};
// The keys are already well-mixed flow hashes; the table is looked up on every packet of
// the CI class at every hop, where SipHash costs more than the rest of the lookup.
use rustc_hash::FxHashMap as HashMap;

/// CIM bytes on the wire besides the encapsulated MSDU (module doc: the CNM's layout, as
/// seed 000 suggests reusing the 802.1Qau CNM format).
pub const CIM_OVERHEAD_BYTES: u32 = 46;

/// The CIM's EtherType and transmit priority (802.1Qcz YANG: `ci-cim-tx-priority`, 6).
pub const ETHERTYPE_CIM: u16 = 0x89A2;
pub const CIM_PRIORITY: u8 = 6;

/// The bytes of a CIM of `bytes` on the wire (the module doc: the CNM's layout), sent to
/// the upstream neighbour about the flow the packet names, no FCS. The CPID is the sending
/// switch's MAC address (its congesting port is not kept with the frame); no feedback.
pub fn encode(bytes: u32, w: &crate::switch::mechanism::WireCtx, out: &mut Vec<u8>) {
    use crate::net::wire;
    let start = out.len();
    wire::eth(out, wire::mac_of(w.topo, w.rx), wire::mac_of(w.topo, w.tx), Some(CIM_PRIORITY), ETHERTYPE_CIM);
    let encap = bytes.saturating_sub(CIM_OVERHEAD_BYTES) as usize;
    super::qcn::cn_pdu(out, w, w.tx, &super::qcn::CnmFields::default(), encap);
    wire::pad(out, start);
}

/// Wire bytes of a CIM carrying `encap` octets of the offending frame (a minimum-size
/// Ethernet frame at least).
pub fn cim_bytes(encap: u32) -> u32 {
    (CIM_OVERHEAD_BYTES + encap).max(64)
}

/// A Congestion Isolation Packet (P802.1Qcz CIM): isolate the flow named by the packet's
/// `flow` / `hash` in the egress back toward the sender of this frame; `bytes` on the wire.
/// Packed, as every frame payload: `Packet` keeps its frame in 4 bytes (net/packet.rs).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(C, packed)]
pub struct Cip {
    pub bytes: u16,
}

/// Defaults of `switch.ci` (seed 003: "CI: Low 10 KB, High 300 KB, Max Probability 1%").
pub const DEFAULT_QUEUE: u8 = 1;
pub const DEFAULT_CONGESTED_QUEUE: u8 = 0;
pub const DEFAULT_LOW: u64 = 10_000;
pub const DEFAULT_HIGH: u64 = 300_000;
pub const DEFAULT_PMAX: f64 = 0.01;
pub const DEFAULT_TABLE_SIZE: u32 = 1024;
pub const DEFAULT_CIP_THRESHOLD: u64 = 100_000;
pub const DEFAULT_RELEASE_AFTER: SimTime = SimTime::from_us(50);
pub const DEFAULT_SIGNAL: bool = true;
pub const DEFAULT_HOSTS: bool = true;
/// 802.1Qcz `min-header-octets` / LLDP `cim-encap-length`.
pub const DEFAULT_CIM_ENCAP: u32 = 48;
/// 802.1Qcz `max-cim-tx`.
pub const DEFAULT_CIM_MAX: u32 = 3;
/// 802.1Qcz `ci-max-flow-life`: 100 centiseconds.
pub const DEFAULT_MAX_FLOW_LIFE: SimTime = SimTime::from_ms(1000);
pub const DEFAULT_CIM_RELEASE: CimRelease = CimRelease::Standard;

/// When entries created by a received CIM (at a bridge or an end station) are released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CimRelease {
    /// 802.1Qcz: `max_flow_life` after the congesting queue turns non-congested (an end
    /// station: after the last CIM for the flow).
    Standard,
    /// As local entries (`release_after` after the flow's last packet left the congested
    /// queue); end stations keep the isolation for good.
    FlowIdle,
}

/// Which packets of isolated flows are CE-marked (seed 003: "ECN is marked once a
/// packet is isolated"; see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CiMark {
    /// The isolating packet, then the switch's ECN rule on the congested queue.
    QueueEcn,
    /// Every packet of an isolated flow.
    EveryIsolated,
}

/// How CI-managed traffic is queued.
#[derive(Clone, Debug, PartialEq)]
pub enum CiMode {
    Isolate,
    /// Baseline: hash the destination onto {queue, congested_queue}.
    HashDst,
}

/// CI configuration of every switch.
#[derive(Clone, Debug)]
pub struct CiParams {
    pub mode: CiMode,
    /// Traffic class of the non-congested queue (the traffic CI manages arrives here).
    pub queue: usize,
    pub congested_queue: usize,
    /// Isolation probability ramp on the non-congested queue: RED's Low/High/Pmax shape.
    pub isolate: Red,
    pub mark: CiMark,
    pub table_size: usize,
    pub signal: bool,
    pub cip_threshold: u64,
    pub release_after: SimTime,
    /// NICs isolate flows named by a CIP.
    pub hosts: bool,
    /// CIM wire bytes.
    pub cim_bytes: u32,
    /// CIMs per congesting flow and table entry; 0 = no limit.
    pub cim_max: u32,
    pub cim_release: CimRelease,
    pub max_flow_life: SimTime,
}

impl CiParams {
    /// Isolation probability for a packet arriving to a non-congested queue of `q` bytes.
    #[inline]
    pub fn prob(&self, q: u64) -> f64 {
        self.isolate.prob(q)
    }
}

/// One isolated flow at one egress port.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its packets still in the non-congested queue (must leave first).
    pub nc_pkts: u32,
    /// Its packets in the congested queue.
    pub c_pkts: u32,
    pub last_active: SimTime,
    /// Identifies this entry's release timer (unique in its table, so a timer left by an
    /// evicted entry of the same flow is ignored).
    pub release_gen: u32,
    /// When its congested-queue count last fell to zero (or it was isolated).
    pub empty_since: SimTime,
    /// A release timer is pending: at most one per entry, re-armed lazily, so a flow whose
    /// packets cross an empty congested queue one by one costs no event per packet.
    pub timer: bool,
    /// When the last CIP for this flow left (repeated at most once per link round trip).
    pub cip_at: Option<SimTime>,
    /// CIMs sent for it (802.1Qcz `cim-count`).
    pub cims: u32,
    /// Created (or joined) by a received CIM (`create-mask` cim-create).
    pub by_cim: bool,
}

/// The congested-flow table of one egress port.
#[derive(Clone, Debug, Default)]
pub struct CiTable {
    pub entries: HashMap<u32, Entry>,
    pub max_occupancy: usize,
    pub isolations: u64,
    pub releases: u64,
    pub evictions: u64,
    pub cips_sent: u64,
    pub cips_received: u64,
    next_gen: u32,
}

impl CiTable {
    /// Insert `key`, evicting the least recently active entry (ties: smallest key) when full.
    pub fn insert(&mut self, key: u32, nc_pkts: u32, now: SimTime, capacity: usize) -> &mut Entry {
        if !self.entries.contains_key(&key) && self.entries.len() >= capacity {
            let victim = *self.entries.iter().min_by_key(|(k, e)| (e.last_active, **k)).map(|(k, _)| k).unwrap();
            self.entries.remove(&victim);
            self.evictions += 1;
        }
        self.isolations += 1;
        self.next_gen = self.next_gen.wrapping_add(1);
        let gen = self.next_gen;
        let e = self.entries.entry(key).or_insert(Entry {
            nc_pkts: 0,
            c_pkts: 0,
            last_active: now,
            release_gen: gen,
            empty_since: now,
            timer: false,
            cip_at: None,
            cims: 0,
            by_cim: false,
        });
        e.nc_pkts = nc_pkts;
        e.last_active = now;
        self.max_occupancy = self.max_occupancy.max(self.entries.len());
        self.entries.get_mut(&key).unwrap()
    }
}

/// CI's timer.
#[derive(Copy, Clone, Debug)]
pub enum Timer {
    /// Release flow `key` from `port`'s congested-flow table if it is still idle.
    Release { port: PortId, key: u32, gen: u32 },
    /// An end station's isolation of connection `key` (the flow hash) from NIC `port` ages
    /// out if no CIM renewed it.
    HostRelease { port: PortId, key: u32 },
}

/// Congestion Isolation on every switch (and CIP handling at NICs): the module doc
/// describes the model.
#[derive(Clone, Debug)]
pub struct Ci {
    pub p: CiParams,
    /// Congested-flow table of every port (isolate mode; empty for the hash baseline).
    tables: Vec<CiTable>,
    /// Per port: the link's round trip (propagation both ways, switch latency, an MTU and a
    /// CIP on the wire), the least time between two CIPs for one flow through it.
    cip_guard: Vec<SimTime>,
    /// Per port (standard CIM release): since when its congested queue is non-congested
    /// (below `low`); None while congested.
    calm_since: Vec<Option<SimTime>>,
    /// End stations (standard CIM release): per (NIC port, flow hash), that is per
    /// connection, the last CIM and the flow it named. A reused connection's next message
    /// keeps the class (the NIC classifies the connection's frames), and ages out with it.
    host_cims: HashMap<(PortId, u32), (SimTime, FlowId)>,
    /// On a switch memory architecture: per (egress port, flow hash), the flow's packets
    /// bound for the non-congested queue and still held at an input, which count among an
    /// entry's `nc_pkts` when it is isolated (they must leave before its congested ones).
    held_nc: HashMap<(PortId, u32), u32>,
}

impl Ci {
    /// `arrive_delay[p]`: propagation plus static switch latency from port p to its peer.
    pub fn new(p: CiParams, topo: &Topology, arrive_delay: &[SimTime], mtu: u32) -> Ci {
        let isolate = p.mode == CiMode::Isolate;
        let n = topo.ports.len();
        let cip_guard = match isolate {
            true => topo.ports.iter().enumerate().map(|(i, port)| SimTime(2 * arrive_delay[i].0) + ser_time((mtu + p.cim_bytes) as u64, port.rate_bps)).collect(),
            false => Vec::new(),
        };
        let calm = if isolate && p.cim_release == CimRelease::Standard { vec![Some(SimTime::ZERO); n] } else { Vec::new() };
        Ci { p, tables: vec![CiTable::default(); if isolate { n } else { 0 }], cip_guard, calm_since: calm, host_cims: HashMap::default(), held_nc: HashMap::default() }
    }

    /// Isolate mode (not the hash baseline).
    #[inline]
    pub fn isolates(&self) -> bool {
        !self.tables.is_empty()
    }

    /// The congested-flow table of `port` (tests and diagnostics).
    pub fn table(&self, port: PortId) -> Option<&CiTable> {
        self.tables.get(port as usize)
    }

    /// Isolate flow `key` at egress `port`: its packets still in the non-congested
    /// queue must leave before its first packet in the congested queue.
    fn isolate(&mut self, port: PortId, key: u32, by_cim: bool, cx: &mut Ctx) {
        let standard = by_cim && self.p.cim_release == CimRelease::Standard;
        if let Some(e) = self.tables[port as usize].entries.get_mut(&key) {
            e.by_cim |= by_cim;
            if standard && !e.timer {
                e.timer = true;
                let gen = e.release_gen;
                cx.timer(cx.now + self.p.max_flow_life, MechTimer::Ci(Timer::Release { port, key, gen }));
            }
            return;
        }
        let queued = cx.port_queues.of(port)[self.p.queue].ids().filter(|&id| cx.pkts.get(id).hash == key).count() as u32;
        let nc = queued + self.held_nc.get(&(port, key)).copied().unwrap_or(0);
        let e = self.tables[port as usize].insert(key, nc, cx.now, self.p.table_size);
        e.by_cim = by_cim;
        // an entry that never receives a packet must still age out
        e.timer = true;
        let gen = e.release_gen;
        let after = if standard { self.p.max_flow_life } else { self.p.release_after };
        cx.timer(cx.now + after, MechTimer::Ci(Timer::Release { port, key, gen }));
    }

    /// Standard CIM release: whether `port`'s congested queue is congested (at least `low`).
    #[inline]
    fn track_calm(&mut self, port: PortId, cx: &Ctx) {
        if let Some(c) = self.calm_since.get_mut(port as usize) {
            let congested = cx.backlog(port, self.p.congested_queue) >= self.p.isolate.low;
            match (congested, *c) {
                (true, Some(_)) => *c = None,
                (false, None) => *c = Some(cx.now),
                _ => {}
            }
        }
    }

    /// A packet arrived in the switch (joined its egress queue, or was held at its input):
    /// count the isolated flow's packet; signal the upstream when the flow still arrives in
    /// the non-congested class and the congested queue is deep.
    fn arrived(&mut self, a: &Arrival, cx: &mut Ctx) {
        if !self.isolates() || a.queue != self.p.congested_queue {
            return;
        }
        self.track_calm(a.out, cx);
        if a.class != self.p.queue {
            return;
        }
        let over = cx.backlog(a.out, a.queue) > self.p.cip_threshold;
        let signal = a.account_tc.is_some() && over;
        let now = cx.now;
        let guard = self.cip_guard[a.in_port as usize];
        let t = &mut self.tables[a.out as usize];
        let e = t.entries.get_mut(&a.hash).unwrap();
        e.c_pkts += 1;
        e.last_active = now;
        // the upstream still sends the flow in the non-congested class: tell it, again
        // only if that persists past a round trip of the link
        if signal && e.cip_at.is_none_or(|t| now >= t + guard) && (self.p.cim_max == 0 || e.cims < self.p.cim_max) {
            e.cip_at = Some(now);
            e.cims += 1;
            t.cips_sent += 1;
            let flow = cx.pkts.get(a.pkt).flow;
            cx.push(Effect::Frame { port: a.in_port, frame: Frame::Ci(Cip { bytes: self.p.cim_bytes as u16 }), flow, hash: a.hash });
        }
    }

    /// The peer behind `in_port` isolates flows named by a CIP (P802.1Qcz signalling on, and
    /// a CI bridge, or a NIC that honours CIPs).
    fn upstream_isolates(&self, in_port: PortId, topo: &Topology) -> bool {
        let up = topo.ports[topo.ports[in_port as usize].peer as usize].node;
        self.p.signal && (self.p.hosts || topo.nodes[up as usize].kind == NodeKind::Switch)
    }
}

impl SwitchMechanism for Ci {
    type Params = CiParams;
    type Frame = Cip;
    type Msg = Never;
    type Timer = Timer;
    const KEY: &'static str = "ci";
    const CAPS: Caps = Caps::CLASSIFY.or(Caps::ENQUEUE).or(Caps::DEQUEUE).or(Caps::HOLD);
    /// CI's columns and summary keys (`Ci::report`).
    const OUTPUTS: Outputs = Outputs {
        flows: &[],
        ports: &[
            (
                &["ci_isolations", "ci_releases", "ci_evictions"],
                "With Congestion Isolation: flows isolated, released and evicted on this port (congested queue's row; 0 under the \
                 `hash_dst` baseline)",
            ),
            (
                &["cips_sent", "cips_received", "ci_table_max"],
                "With Congestion Isolation: CIPs sent and received, and the largest number of isolated flows at once (congested \
                 queue's row)",
            ),
        ],
        summary: &[(&["ci_isolations", "cips_sent"], "With Congestion Isolation: the ports' columns of the same names, summed")],
    };

    fn build(p: CiParams, f: &Fabric) -> Ci {
        f.check_queue("ci.queue", p.queue);
        f.check_queue("ci.congested_queue", p.congested_queue);
        Ci::new(p, f.topo, f.arrive_delay, f.mtu)
    }

    /// Drawn by the property tests themselves (`engine/proptests.rs`), which shape the
    /// case around it.
    #[cfg(test)]
    fn arbitrary(_: u64, _: u8, _: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        None
    }

    /// The hash baseline never holds a queue.
    fn caps(&self) -> Caps {
        Caps::CLASSIFY.or(Caps::ENQUEUE).or(Caps::DEQUEUE).or(Caps::when(self.isolates(), Caps::HOLD))
    }
    /// classify: a packet of the CI class joins the congested queue when its flow is
    /// isolated here, or is isolated now by the ramp on the non-congested queue (the hash
    /// baseline: when its destination hashes there).
    fn classify(&mut self, a: &mut Arrival, cx: &mut Ctx) {
        if a.class != self.p.queue {
            return;
        }
        let congested = self.p.congested_queue;
        if self.p.mode == CiMode::HashDst {
            if mix64(cx.pkts.get(a.pkt).dst as u64 ^ 0xC1_D5) & 1 == 0 {
                a.queue = congested;
            }
            return;
        }
        let mut isolated = self.tables[a.out as usize].entries.contains_key(&a.hash);
        let mut isolating = false;
        if !isolated {
            let p = self.p.prob(cx.backlog(a.out, self.p.queue));
            let rng = &mut cx.switches[a.sw as usize].rng;
            if p >= 1.0 || (p > 0.0 && rand::Rng::gen::<f64>(rng) < p) {
                self.isolate(a.out, a.hash, false, cx);
                isolated = true;
                isolating = true;
            }
        }
        // "ECN is marked once a packet is isolated" (seed 003): the isolating packet always;
        // the rest of an isolated flow per `CiMark`; isolation takes the place of the ECN
        // ramp on the non-congested queue
        a.aqm = if isolating || (isolated && self.p.mark == CiMark::EveryIsolated) {
            AqmRule::MarkCe
        } else if !isolated {
            AqmRule::Skip
        } else {
            AqmRule::Queue
        };
        if isolated {
            a.queue = congested;
            // isolated here but still sent in the non-congested class by an upstream that
            // can isolate it: PFC accounts it to the congested class, and a CIP may be due
            if a.tc != congested && self.upstream_isolates(a.in_port, cx.topo) {
                a.account_tc = Some(congested);
            }
        }
    }

    /// on_enqueue: a packet's arrival in the switch (`arrived`); one held at an input
    /// arrived when it was held (`on_held`).
    fn on_enqueue(&mut self, a: &Arrival, cx: &mut Ctx) {
        if !a.held {
            self.arrived(a, cx);
        } else if a.queue == self.p.queue && self.isolates() {
            let k = (a.out, a.hash);
            match self.held_nc.get_mut(&k) {
                Some(n) if *n > 1 => *n -= 1,
                _ => {
                    self.held_nc.remove(&k);
                }
            }
        }
    }

    /// A packet held at its input (a memory architecture) has arrived: it counts from now.
    fn on_held(&mut self, a: &Arrival, cx: &mut Ctx) {
        if a.queue == self.p.queue && self.isolates() {
            *self.held_nc.entry((a.out, a.hash)).or_insert(0) += 1;
        }
        self.arrived(a, cx);
    }

    /// hold: the congested queue waits while its head's flow still has packets in the
    /// non-congested queue (order within a flow is kept).
    #[inline]
    fn holds(&self, port: PortId, queue: usize, queues: &[PktQueue], pkts: &PacketArena, _now: SimTime) -> bool {
        match self.tables.get(port as usize) {
            Some(t) if queue == self.p.congested_queue && !t.entries.is_empty() => {
                queues[queue].head().and_then(|h| t.entries.get(&pkts.get(h).hash)).is_some_and(|e| e.nc_pkts > 0)
            }
            _ => false,
        }
    }

    /// on_dequeue: keep the isolated flow's packet counts as its packets leave.
    fn on_dequeue(&mut self, d: &Departure, cx: &mut Ctx) -> Verdict {
        if !self.isolates() {
            return Verdict::Send;
        }
        let key = cx.pkts.get(d.pkt).hash;
        let release = self.p.release_after;
        let congested = d.queue == self.p.congested_queue;
        let nc = d.queue == self.p.queue;
        if congested {
            self.track_calm(d.port, cx);
        }
        let Some(e) = self.tables[d.port as usize].entries.get_mut(&key) else {
            return Verdict::Send;
        };
        if nc {
            e.nc_pkts = e.nc_pkts.saturating_sub(1);
        } else if congested {
            e.c_pkts = e.c_pkts.saturating_sub(1);
            if e.c_pkts == 0 {
                e.empty_since = cx.now;
                if !e.timer {
                    e.timer = true;
                    let gen = e.release_gen;
                    cx.timer(cx.now + release, MechTimer::Ci(Timer::Release { port: d.port, key, gen }));
                }
            }
        }
        Verdict::Send
    }

    /// A CIP arrived through `port`: isolate the flow in this node's egress back through it
    /// (a switch), or move it to the congested class (a NIC that honours CIPs).
    fn on_frame(&mut self, _f: Cip, port: PortId, flow: FlowId, key: u32, cx: &mut Ctx) {
        let node = cx.topo.ports[port as usize].node;
        match cx.topo.nodes[node as usize].kind {
            NodeKind::Switch => {
                self.tables[port as usize].cips_received += 1;
                self.isolate(port, key, true, cx);
            }
            NodeKind::Host => {
                if self.p.hosts {
                    cx.push(Effect::SteerFlow { port, flow, class: Some(self.p.congested_queue as u8) });
                    self.tables[port as usize].cips_received += 1;
                    if self.p.cim_release == CimRelease::Standard && self.host_cims.insert((port, key), (cx.now, flow)).is_none() {
                        cx.timer(cx.now + self.p.max_flow_life, MechTimer::Ci(Timer::HostRelease { port, key }));
                    }
                }
            }
        }
    }

    fn timer_place(t: Timer) -> u32 {
        match t {
            Timer::Release { port, .. } | Timer::HostRelease { port, .. } => port,
        }
    }

    /// Released once the congested queue has held none of the flow's packets for
    /// release_after; while it holds some, the next drain re-arms the timer.
    fn on_timer(&mut self, t: Timer, cx: &mut Ctx) {
        let (port, key, gen) = match t {
            Timer::Release { port, key, gen } => (port, key, gen),
            Timer::HostRelease { port, key } => {
                let (last, flow) = self.host_cims[&(port, key)];
                if cx.now >= last + self.p.max_flow_life {
                    self.host_cims.remove(&(port, key));
                    cx.push(Effect::SteerFlow { port, flow, class: None });
                } else {
                    cx.timer(last + self.p.max_flow_life, MechTimer::Ci(Timer::HostRelease { port, key }));
                }
                return;
            }
        };
        let release = self.p.release_after;
        let life = self.p.max_flow_life;
        let standard = self.p.cim_release == CimRelease::Standard;
        let calm = self.calm_since.get(port as usize).copied().flatten();
        let t = &mut self.tables[port as usize];
        let Some(e) = t.entries.get_mut(&key).filter(|e| e.release_gen == gen) else {
            return;
        };
        e.timer = false;
        if e.by_cim && standard {
            // 802.1Qcz: max_flow_life after the congesting queue turned non-congested
            match calm {
                Some(since) if cx.now >= since + life => {
                    t.entries.remove(&key);
                    t.releases += 1;
                }
                _ => {
                    e.timer = true;
                    cx.timer(calm.map_or(cx.now, |s| s) + life, MechTimer::Ci(Timer::Release { port, key, gen }));
                }
            }
            return;
        }
        if e.c_pkts == 0 {
            let due = e.empty_since + release;
            if cx.now >= due {
                t.entries.remove(&key);
                t.releases += 1;
            } else {
                e.timer = true;
                cx.timer(due, MechTimer::Ci(Timer::Release { port, key, gen }));
            }
        }
    }

    fn report(&self, r: &mut Report) {
        let rows = r.topo.ports.len() * r.queues;
        let mut c: [Vec<u64>; 6] = std::array::from_fn(|_| vec![0; rows]);
        let (mut iso, mut cips) = (0u64, 0u64);
        for (port, t) in self.tables.iter().enumerate() {
            let row = port * r.queues + self.p.congested_queue;
            for (v, x) in c.iter_mut().zip([t.isolations, t.releases, t.evictions, t.cips_sent, t.cips_received, t.max_occupancy as u64]) {
                v[row] = x;
            }
            iso += t.isolations;
            cips += t.cips_sent;
        }
        for (name, v) in ["ci_isolations", "ci_releases", "ci_evictions", "cips_sent", "cips_received", "ci_table_max"].into_iter().zip(c) {
            r.ports_table.push(name, C::U64(v));
        }
        r.count("ci_isolations", iso);
        r.count("cips_sent", cips);
        r.metric("ci_isolations", "CI isolations", 1.0, "int", Better::Neither);
        r.metric("cips_sent", "CIPs sent", 1.0, "int", Better::Neither);
        if self.p.mode == CiMode::Isolate {
            r.acted("switch.ci", "flows isolated", iso);
            r.queue_role(self.p.congested_queue, "congested");
            r.queue_role(self.p.queue, "non-congested");
            r.queue_threshold(Some(self.p.queue), "CI High", self.p.isolate.high);
        }
    }

    fn frame_bytes(f: Cip) -> u32 {
        f.bytes as u32
    }

    fn encode_frame(f: Cip, w: &crate::switch::mechanism::WireCtx, out: &mut Vec<u8>) {
        encode(f.bytes as u32, w, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn isolation_probability_follows_the_seed_reading() {
        let p = CiParams {
            mode: CiMode::Isolate,
            queue: 1,
            congested_queue: 0,
            isolate: Red { low: 10_000, high: 300_000, pmax: 0.01 },
            mark: CiMark::QueueEcn,
            table_size: 4,
            signal: true,
            cip_threshold: 100_000,
            release_after: SimTime::from_us(100),
            hosts: true,
            cim_bytes: cim_bytes(DEFAULT_CIM_ENCAP),
            cim_max: DEFAULT_CIM_MAX,
            cim_release: DEFAULT_CIM_RELEASE,
            max_flow_life: DEFAULT_MAX_FLOW_LIFE,
        };
        assert_eq!(p.prob(10_000), 0.0);
        assert!((p.prob(155_000) - 0.005).abs() < 1e-12);
        assert_eq!(p.prob(300_001), 1.0);
    }
    #[test]
    fn table_is_bounded_and_evicts_least_recent() {
        let mut t = CiTable::default();
        for k in 0..4u32 {
            t.insert(k, 0, SimTime(10 + k as u64), 4);
        }
        t.entries.get_mut(&0).unwrap().last_active = SimTime(100);
        t.insert(9, 0, SimTime(200), 4);
        assert_eq!(t.entries.len(), 4);
        assert!(!t.entries.contains_key(&1), "least recently active evicted");
        assert!(t.entries.contains_key(&0) && t.entries.contains_key(&9));
        assert_eq!(t.evictions, 1);
        assert_eq!(t.max_occupancy, 4);
    }
}
