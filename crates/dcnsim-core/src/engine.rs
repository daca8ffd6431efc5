//! The simulation: fabric state, hosts, flows and the event loop.
//!
//! Per hop a packet costs at most two events: its arrival at the next node
//! (scheduled when its transmission starts, at start + serialization +
//! propagation) and, only when the port has more to send, a TxDone at the end
//! of its serialization. An idle port transmits immediately on enqueue.
//!
//! PFC (switch/pfc.rs) adds MAC control frames, served ahead of every queue
//! and never paused, and per-class pause state on every egress port.

use crate::host::cc::{Cc, CongestionControl};
use crate::host::dctcp::Dctcp;
use crate::host::reno::Reno;
use crate::host::roce::{RoceParams, RoceReply, RoceSender};
use crate::host::tcp::{Receiver, TcpSender};
use crate::host::udp::UdpSource;
use crate::host::{Flow, Host, Sender};
use crate::metrics::{ColumnData as C, Results, Table};
use crate::net::port::Egress;
use crate::net::{FlowId, NodeKind, Packet, PacketArena, PktId, PktKind, PortId, Routes, Topology};
use crate::scenario::schema::{Arrivals, SizeDist, TransportKind};
use crate::sim::rng::mix64;
use crate::sim::{ser_time, stream, EventQueue, Rng, SimTime, Stream};
use crate::switch::ci::{CiMark, CiMode, CiParams, CiTable, CIP_BYTES};
use crate::switch::pfc::{Ingress, PfcParams, QueuePfc, Xoff, PAUSE_FRAME_BYTES};
use crate::switch::{BufferParams, DropReason, MarkReason, Red, Scheduler, SwitchBuffer};
use crate::workload::FlowSpec;

/// TCP parameters shared by all TCP flows.
#[derive(Clone, Debug)]
pub struct TcpParams {
    pub init_cwnd: u32,
    pub min_rto: SimTime,
    pub init_rto: SimTime,
    pub dctcp_g: f64,
    pub reno_ecn: bool,
}

/// UDP parameters shared by all UDP flows.
#[derive(Clone, Debug)]
pub struct UdpParams {
    pub rate_bps: Option<u64>,
    pub arrivals: Arrivals,
    pub sizes: SizeDist,
    pub packet_size: u32,
}

/// Engine configuration, fully resolved (no defaults left, no files).
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    pub max_time: SimTime,
    pub mtu: u32,
    pub header: u32,
    pub ack_size: u32,
    pub queues: usize,
    /// Traffic class (queue index) of each packet priority 0..7 (IEEE 802.1Q table 8-5 style).
    pub class_of: [u8; 8],
    pub scheduler: Scheduler,
    pub red: Option<Red>,
    /// Drop (rather than pass) non-ECT packets that RED selects.
    pub drop_non_ect: bool,
    pub buffer: BufferParams,
    pub switch_latency: SimTime,
    /// Priority-based Flow Control; None = lossy fabric.
    pub pfc: Option<PfcParams>,
    /// Congestion Isolation (or its hash baseline); None = off.
    pub ci: Option<CiParams>,
    pub tcp: TcpParams,
    pub udp: UdpParams,
    pub roce: RoceParams,
    pub tags: Vec<String>,
    pub fct_bins: Vec<u64>,
    /// Check packet conservation and buffer bounds as the run goes.
    pub check_invariants: bool,
    /// Sample switch queue depths every interval into histograms of this bin width (bytes).
    pub queue_sample: Option<(SimTime, u64)>,
}

#[derive(Copy, Clone, Debug)]
enum Ev {
    /// A packet has been fully received through `port` (the receiving end).
    Arrive { port: PortId, pkt: PktId },
    /// The transmitter of `port` finished a packet and has more to send.
    TxDone { port: PortId },
    /// The next pending flow spec starts.
    NextArrival,
    Rto { flow: FlowId, gen: u32 },
    UdpSend { flow: FlowId },
    /// A PFC pause of `port` may have expired: try to transmit.
    PauseEnd { port: PortId },
    /// Re-send XOFF for (ingress `port`, `class`) before the last one expires.
    PfcRefresh { port: PortId, class: u8, gen: u32 },
    /// Look for a cycle of egress queues paused on each other.
    DeadlockCheck,
    /// A paced (DCQCN) flow may send again.
    Pace { flow: FlowId, gen: u32 },
    /// Sample every switch queue's depth.
    Sample,
    /// Release flow `key` from `port`'s congested-flow table if it is still idle.
    CiRelease { port: PortId, key: u32, gen: u32 },
    /// Re-send the XOFFs of an egress queue above its XOFF (queue-based PFC).
    QueuePfcRefresh { port: PortId, queue: u8, gen: u32 },
}

/// Hop limit: a packet crossing more switches than this is in a routing loop.
const MAX_HOPS: u8 = 64;

/// Why a run ended.
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

/// What the hot path needs about a port, packed in one small record.
#[derive(Clone, Copy, Debug)]
struct PortHot {
    /// Where frames from this port arrive.
    peer: PortId,
    /// The owning node is a switch (else a host) and its switch or host index.
    is_switch: bool,
    owner: u32,
    /// Picoseconds per byte when the rate divides 8e12 exactly (every standard Ethernet
    /// rate does), else 0 and serialization falls back to the exact division.
    ps_per_byte: u64,
    rate_bps: u64,
    /// Propagation plus static switch latency to the peer.
    arrive_delay: SimTime,
}

impl PortHot {
    #[inline]
    fn ser(&self, bytes: u64) -> SimTime {
        if self.ps_per_byte != 0 {
            SimTime(bytes * self.ps_per_byte)
        } else {
            ser_time(bytes, self.rate_bps)
        }
    }
}

struct SwitchState {
    buffer: SwitchBuffer,
    rng: Rng,
}

/// A running simulation.
pub struct Sim {
    cfg: SimConfig,
    topo: Topology,
    routes: Routes,
    hot: Vec<PortHot>,
    egress: Vec<Egress>,
    switches: Vec<SwitchState>,
    hosts: Vec<Host>,
    flows: Vec<Flow>,
    specs: Vec<FlowSpec>,
    next_spec: usize,
    active: usize,
    finished: usize,
    pkts: PacketArena,
    q: EventQueue<Ev>,
    now: SimTime,
    events: u64,
    end: Option<EndReason>,
    // conservation counters
    pkts_created: u64,
    pkts_consumed: u64,
    pkts_dropped: u64,
    ecn_marks: u64,
    /// Data packets put on the wire by hosts (retransmissions included) and data packets dropped.
    data_sent: u64,
    data_dropped: u64,
    violations: Vec<String>,
    /// PFC ingress counters per port id (used on switch ports).
    ingress: Vec<Ingress>,
    deadlock_check_pending: bool,
    /// The paused queues ("node:port:class") of a detected deadlock cycle.
    deadlock: Vec<String>,
    /// Every transmission start, when tracing (tests and debugging).
    trace: Option<Vec<TxRecord>>,
    /// Per (switch port, queue) histogram of sampled depths, indexed like the ports table.
    depth_hist: Vec<Vec<u64>>,
    samples: u64,
    /// Congested-flow table of every port (CI isolate mode).
    ci_tables: Vec<CiTable>,
    /// Per port: the link's round trip (propagation both ways, switch latency, an MTU and a
    /// CIP on the wire), the least time between two CIPs for one flow through it.
    cip_guard: Vec<SimTime>,
    /// Queue-based PFC state per (port, queue) (`accounting = "egress_queue"`).
    queue_pfc: Vec<QueuePfc>,
}

/// One transmission start, recorded when tracing is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxRecord {
    pub time: SimTime,
    pub port: PortId,
    pub kind: PktKind,
    pub flow: FlowId,
    pub seq: u64,
    pub size: u32,
}

impl Sim {
    /// Build a simulation. `specs` need not be sorted.
    pub fn new(topo: Topology, routes: Routes, cfg: SimConfig, mut specs: Vec<FlowSpec>) -> Sim {
        specs.sort_by_key(|s| s.start); // stable: ties keep workload order
        let nq = cfg.queues;
        let has_pfc = cfg.pfc.is_some();
        let queue_pfc = cfg.pfc.as_ref().is_some_and(|p| p.egress_queue);
        let has_ci = cfg.ci.as_ref().is_some_and(|c| c.mode == CiMode::Isolate);
        let n_ports = topo.ports.len();
        let egress = (0..topo.ports.len()).map(|_| Egress::new(nq)).collect();
        let arrive_delay: Vec<SimTime> = topo
            .ports
            .iter()
            .map(|p| {
                let peer = topo.ports[p.peer as usize].node;
                let lat = if topo.nodes[peer as usize].kind == NodeKind::Switch { cfg.switch_latency } else { SimTime::ZERO };
                p.delay + lat
            })
            .collect();
        let cip_guard = match has_ci {
            true => topo.ports.iter().enumerate().map(|(i, p)| SimTime(2 * arrive_delay[i].0) + ser_time((cfg.mtu + CIP_BYTES) as u64, p.rate_bps)).collect(),
            false => Vec::new(),
        };
        let hot = topo
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let n = &topo.nodes[p.node as usize];
                let exact = 8_000_000_000_000u64 % p.rate_bps == 0;
                PortHot {
                    peer: p.peer,
                    is_switch: n.kind == NodeKind::Switch,
                    owner: n.index,
                    ps_per_byte: if exact { 8_000_000_000_000 / p.rate_bps } else { 0 },
                    rate_bps: p.rate_bps,
                    arrive_delay: arrive_delay[i],
                }
            })
            .collect();
        let switches = topo
            .switches
            .iter()
            .enumerate()
            .map(|(i, &n)| SwitchState {
                buffer: SwitchBuffer::new(cfg.buffer.clone(), topo.nodes[n as usize].ports.len()),
                rng: stream(cfg.seed, Stream::SwitchAqm, i as u64),
            })
            .collect();
        let hosts = topo
            .hosts
            .iter()
            .map(|&n| Host { node: n, port: topo.nodes[n as usize].ports[0], ready: vec![Default::default(); nq] })
            .collect();
        // Calendar slots of about 1/64 of the shortest frame time on the fabric:
        // packet events then spread over a few dozen slots ahead of now.
        let fastest = topo.ports.iter().map(|p| p.rate_bps).max().unwrap_or(1);
        let frame = ser_time(cfg.mtu as u64, fastest).0.max(64);
        let mut q = EventQueue::with_slot_bits(63 - (frame / 64).leading_zeros());
        if let Some(first) = specs.first() {
            q.push(first.start, Ev::NextArrival);
        }
        if cfg.queue_sample.is_some() {
            q.push(SimTime::ZERO, Ev::Sample);
        }
        Sim {
            cfg,
            topo,
            routes,
            hot,
            egress,
            switches,
            hosts,
            flows: Vec::new(),
            specs,
            next_spec: 0,
            active: 0,
            finished: 0,
            pkts: PacketArena::new(),
            q,
            now: SimTime::ZERO,
            events: 0,
            end: None,
            pkts_created: 0,
            pkts_consumed: 0,
            pkts_dropped: 0,
            ecn_marks: 0,
            data_sent: 0,
            data_dropped: 0,
            violations: Vec::new(),
            ingress: vec![Ingress::default(); if has_pfc { n_ports } else { 0 }],
            deadlock_check_pending: false,
            deadlock: Vec::new(),
            trace: None,
            depth_hist: Vec::new(),
            samples: 0,
            ci_tables: vec![CiTable::default(); if has_ci { n_ports } else { 0 }],
            cip_guard,
            queue_pfc: vec![QueuePfc::default(); if queue_pfc { n_ports * nq } else { 0 }],
        }
    }

    pub fn now(&self) -> SimTime {
        self.now
    }
    pub fn events(&self) -> u64 {
        self.events
    }
    pub fn flows_total(&self) -> usize {
        self.flows.len()
    }
    pub fn flows_planned(&self) -> usize {
        self.specs.len()
    }
    pub fn flows_finished(&self) -> usize {
        self.finished
    }
    pub fn done(&self) -> bool {
        self.end.is_some()
    }
    pub fn end_reason(&self) -> Option<EndReason> {
        self.end
    }
    pub fn max_time(&self) -> SimTime {
        self.cfg.max_time
    }
    pub fn topology(&self) -> &Topology {
        &self.topo
    }
    /// DCTCP alpha of a flow (tests and diagnostics).
    pub fn flow_alpha(&self, f: FlowId) -> Option<f64> {
        match &self.flows.get(f as usize)?.sender {
            Sender::Tcp(t) => t.cc.alpha(),
            _ => None,
        }
    }
    /// Bytes acknowledged so far by a flow (tests and diagnostics).
    pub fn flow_acked(&self, f: FlowId) -> u64 {
        match &self.flows[f as usize].sender {
            Sender::Tcp(t) => t.snd_una,
            Sender::Roce(r) => r.snd_una,
            Sender::Udp(_) | Sender::Done => self.flows[f as usize].rx.bytes,
        }
    }
    /// Current depth in bytes of queue `queue` of port `port`.
    pub fn queue_bytes(&self, port: PortId, queue: usize) -> u64 {
        self.egress[port as usize].queues[queue].bytes
    }
    /// Bytes transmitted so far by a port (all queues).
    pub fn port_tx_bytes(&self, port: PortId) -> u64 {
        self.egress[port as usize].queues.iter().map(|q| q.stats.tx_bytes).sum()
    }
    /// The paused queues of the deadlock cycle that ended the run ("node:port:class").
    pub fn deadlock(&self) -> &[String] {
        &self.deadlock
    }
    /// Whether (port, class) is paused now.
    pub fn is_paused(&self, port: PortId, class: usize) -> bool {
        self.egress[port as usize].paused.is_paused(class, self.now)
    }
    /// Record every transmission start from now on.
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }
    /// Transmission starts recorded since `enable_trace`.
    pub fn trace(&self) -> &[TxRecord] {
        self.trace.as_deref().unwrap_or(&[])
    }
    /// Send a PFC frame for `class` with `quanta` out of `port` now, as a switch would.
    pub fn inject_pause(&mut self, port: PortId, class: usize, quanta: u16) {
        self.send_pause(port, class, quanta);
    }
    /// Invariant violations found so far (only with `check_invariants`).
    pub fn violations(&self) -> &[String] {
        &self.violations
    }
    /// (created, consumed at hosts, dropped, live) packet counts.
    pub fn packet_counts(&self) -> (u64, u64, u64, u64) {
        (self.pkts_created, self.pkts_consumed, self.pkts_dropped, self.pkts.live() as u64)
    }

    /// Process events up to and including time `limit` (or until the run ends).
    pub fn run_until(&mut self, limit: SimTime) {
        if self.end.is_none() && self.specs.is_empty() && self.flows.is_empty() {
            self.end = Some(EndReason::Completed);
        }
        while self.end.is_none() {
            let t = match self.q.peek_time() {
                None => {
                    self.end = Some(if self.active == 0 { EndReason::Completed } else { EndReason::Idle });
                    break;
                }
                Some(t) => t,
            };
            if t > self.cfg.max_time {
                if limit >= self.cfg.max_time {
                    self.now = self.cfg.max_time;
                    self.end = Some(EndReason::MaxTime);
                }
                break;
            }
            if t > limit {
                break;
            }
            let (t, ev) = self.q.pop().unwrap();
            if let Some(Ev::Arrive { pkt, .. }) = self.q.peek_current() {
                self.pkts.prefetch(*pkt);
            }
            self.now = t;
            self.events += 1;
            self.dispatch(ev);
            if self.active == 0 && self.next_spec >= self.specs.len() {
                self.end = Some(EndReason::Completed);
            }
        }
        if self.end.is_none() && limit > self.now {
            self.now = limit.min(self.cfg.max_time);
        }
    }

    /// Run to the end.
    pub fn run(&mut self) {
        self.run_until(SimTime::MAX);
    }

    #[inline]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive { port, pkt } => {
                match self.pkts.get(pkt).kind {
                    PktKind::Pause => return self.pause_rx(port, pkt),
                    PktKind::Cip => return self.cip_rx(port, pkt),
                    _ => {}
                }
                let h = self.hot[port as usize];
                if h.is_switch {
                    self.switch_rx(h.owner, port, pkt)
                } else {
                    self.host_rx(pkt)
                }
            }
            Ev::TxDone { port } => {
                let eg = &mut self.egress[port as usize];
                if eg.txdone_at == Some(self.now) {
                    eg.txdone_at = None;
                    self.try_tx(port);
                }
            }
            Ev::NextArrival => {
                let spec = self.specs[self.next_spec].clone();
                self.next_spec += 1;
                if let Some(n) = self.specs.get(self.next_spec) {
                    self.q.push(n.start, Ev::NextArrival);
                }
                self.start_flow(spec, None);
            }
            Ev::Rto { flow, gen } => self.on_rto(flow, gen),
            Ev::UdpSend { flow } => self.udp_send(flow),
            Ev::PauseEnd { port } => self.try_tx(port),
            Ev::PfcRefresh { port, class, gen } => self.pfc_refresh(port, class as usize, gen),
            Ev::DeadlockCheck => self.deadlock_check(),
            Ev::Sample => self.sample_queues(),
            Ev::QueuePfcRefresh { port, queue, gen } => {
                let row = port as usize * self.cfg.queues + queue as usize;
                if self.queue_pfc[row].xoff && self.queue_pfc[row].refresh_gen == gen {
                    let quanta = self.cfg.pfc.as_ref().unwrap().quanta;
                    for (p, tc) in self.queue_pfc[row].paused.clone() {
                        self.send_pause(p, tc as usize, quanta);
                    }
                    self.schedule_queue_refresh(port, queue as usize);
                }
            }
            Ev::CiRelease { port, key, gen } => {
                // released once the congested queue has held none of the flow's packets for
                // release_after; while it holds some, the next drain re-arms the timer
                let release = self.cfg.ci.as_ref().unwrap().release_after;
                let t = &mut self.ci_tables[port as usize];
                let Some(e) = t.entries.get_mut(&key).filter(|e| e.release_gen == gen) else { return };
                e.timer = false;
                if e.c_pkts == 0 {
                    let due = e.empty_since + release;
                    if self.now >= due {
                        t.entries.remove(&key);
                        t.releases += 1;
                    } else {
                        e.timer = true;
                        self.q.push(due, Ev::CiRelease { port, key, gen });
                    }
                }
            }
            Ev::Pace { flow, gen } => {
                if let Sender::Roce(r) = &mut self.flows[flow as usize].sender {
                    if r.pace_gen == gen {
                        r.pace_at = None;
                        self.make_ready(flow);
                    }
                }
            }
        }
    }

    // ---------------------------------------------------------------- switch

    fn switch_rx(&mut self, sw: u32, in_port: PortId, pkt: PktId) {
        let (dst, hash, prio, size, ect, hops) = {
            let p = self.pkts.get_mut(pkt);
            p.hops = p.hops.saturating_add(1);
            (p.dst, p.hash, p.prio, p.size, p.ect, p.hops)
        };
        if hops > MAX_HOPS {
            self.drop_pkt(pkt, Some((in_port, self.cfg.class_of[prio as usize & 7] as usize)), DropReason::Ttl);
            return;
        }
        let out = match self.routes.next_hop(sw, dst, hash) {
            Some(o) => o,
            None => {
                // unreachable destination: routing guarantees this cannot happen on validated topologies
                self.drop_pkt(pkt, None, DropReason::BufferFull);
                return;
            }
        };
        let mut qi = self.cfg.class_of[prio as usize & 7] as usize;
        // Congestion Isolation: choose between the non-congested and the congested queue.
        let mut ci_isolated = false;
        let mut ci_isolating = false;
        let mut ci_managed = false;
        if let Some(ci) = self.cfg.ci.as_ref().map(|c| (c.mode.clone(), c.queue, c.congested_queue)) {
            let (mode, ci_queue, congested_queue) = ci;
            if qi == ci_queue {
                match mode {
                    CiMode::HashDst => {
                        if mix64(dst as u64 ^ 0xC1_D5) & 1 == 0 {
                            qi = congested_queue;
                        }
                    }
                    CiMode::Isolate => {
                        ci_managed = true;
                        if self.ci_tables[out as usize].entries.contains_key(&hash) {
                            ci_isolated = true;
                        } else {
                            let nc = self.egress[out as usize].queues[ci_queue].bytes;
                            let p = self.cfg.ci.as_ref().unwrap().prob(nc);
                            let st = &mut self.switches[sw as usize];
                            if p >= 1.0 || (p > 0.0 && rand::Rng::gen::<f64>(&mut st.rng) < p) {
                                self.ci_isolate(out, hash);
                                ci_isolated = true;
                                ci_isolating = true;
                            }
                        }
                        if ci_isolated {
                            qi = congested_queue;
                        }
                    }
                }
            }
        }
        // Admission: lossless classes by PFC ingress accounting, the rest by the buffer model.
        let mut hdrm = false;
        // PFC accounts a packet to the class it arrived in (what the upstream can pause); with
        // queue-based PFC, a packet CI put in the congested queue counts in the congested class
        // when the upstream can isolate it too, so that XOFF pauses the upstream's congested
        // queue and not its non-congested one (P802.1Qcz step 4)
        let mut arrival_tc = self.pkts.get(pkt).tc as usize;
        // isolated here but still sent in the non-congested class by an upstream that can
        // isolate it: PFC accounts it to the congested class, and a CIP may be due
        let nc_arrival = ci_isolated && arrival_tc != qi && self.ci_upstream_isolates(in_port);
        let queue_based = self.cfg.pfc.as_ref().is_some_and(|p| p.egress_queue);
        let mut escalate = None;
        if nc_arrival && queue_based {
            escalate = Some(arrival_tc as u8);
            arrival_tc = qi;
            self.pkts.get_mut(pkt).tc = qi as u8;
        }
        let lossless = self.cfg.pfc.as_ref().is_some_and(|p| if p.egress_queue { p.is_lossless(qi) } else { p.is_lossless(arrival_tc) });
        if lossless && !queue_based {
            let pfc = self.cfg.pfc.as_ref().unwrap();
            let c = pfc.class(arrival_tc);
            let thr = self.xoff_threshold(sw);
            let ing = &self.ingress[in_port as usize];
            if ing.bytes[c] - ing.headroom[c] + size as u64 > thr {
                if ing.headroom[c] + size as u64 > pfc.headroom[in_port as usize] {
                    self.drop_pkt(pkt, Some((in_port, arrival_tc)), DropReason::Headroom);
                    return;
                }
                hdrm = true;
            }
        } else {
            let st = &self.switches[sw as usize];
            let eg = &self.egress[out as usize];
            if !st.buffer.admits(eg.bytes, eg.queues[qi].bytes, size as u64) {
                self.drop_pkt(pkt, Some((out, qi)), DropReason::BufferFull);
                return;
            }
        }
        let st = &mut self.switches[sw as usize];
        let eg = &mut self.egress[out as usize];
        // "ECN is marked once a packet is isolated" (seed 003): the isolating packet always;
        // the rest of an isolated flow per `CiMark`
        let ci_mark = ci_isolating || (ci_isolated && self.cfg.ci.as_ref().unwrap().mark == CiMark::EveryIsolated);
        if ci_mark && ect {
            self.pkts.get_mut(pkt).ce = true;
            eg.queues[qi].stats.count_mark(MarkReason::EcnThreshold);
            self.ecn_marks += 1;
        } else if (ci_managed && !ci_isolated) || ci_mark {
            // isolation takes the place of RED on the non-congested queue
        } else if let Some(red) = &self.cfg.red {
            if red.decide(eg.queues[qi].bytes, &mut st.rng) {
                if ect {
                    self.pkts.get_mut(pkt).ce = true;
                    eg.queues[qi].stats.count_mark(MarkReason::EcnThreshold);
                    self.ecn_marks += 1;
                } else if self.cfg.drop_non_ect && !lossless {
                    self.drop_pkt(pkt, Some((out, qi)), DropReason::Aqm);
                    return;
                }
            }
        }
        st.buffer.on_enqueue(eg.bytes, size as u64);
        eg.bytes += size as u64;
        eg.queues[qi].push(pkt, size, self.now);
        {
            let p = self.pkts.get_mut(pkt);
            p.ingress = in_port;
            p.hdrm = hdrm;
            p.enq = self.now;
        }
        if self.cfg.check_invariants && (!lossless || queue_based) {
            let lim = st.buffer.queue_limit();
            if eg.queues[qi].bytes > lim {
                self.violations.push(format!("t={} port {out} queue {qi}: {} B > limit {lim} B", self.now, eg.queues[qi].bytes));
            }
        }
        if lossless && queue_based {
            self.queue_pfc_on_enqueue(sw, out, qi, in_port, arrival_tc as u8, size as u64, escalate);
        } else if lossless {
            self.pfc_on_enqueue(sw, in_port, arrival_tc, size as u64, hdrm);
        }
        if ci_isolated {
            let ci = self.cfg.ci.as_ref().unwrap();
            let over = self.egress[out as usize].queues[qi].bytes > ci.cip_threshold;
            let signal = nc_arrival && over;
            let now = self.now;
            let e = self.ci_tables[out as usize].entries.get_mut(&hash).unwrap();
            e.c_pkts += 1;
            e.last_active = now;
            // the upstream still sends the flow in the non-congested class: tell it, again
            // only if that persists past a round trip of the link
            if signal && e.cip_at.is_none_or(|t| now >= t + self.cip_guard[in_port as usize]) {
                e.cip_at = Some(now);
                let flow = self.pkts.get(pkt).flow;
                self.ci_tables[out as usize].cips_sent += 1;
                self.send_cip(in_port, hash, flow);
            }
        }
        self.try_tx(out);
    }

    // --------------------------------------------------------------------- CI

    /// Isolate flow `key` at egress `port`: its packets still in the non-congested
    /// queue must leave before its first packet in the congested queue.
    fn ci_isolate(&mut self, port: PortId, key: u32) -> bool {
        let ci = self.cfg.ci.as_ref().unwrap();
        let t = &self.ci_tables[port as usize];
        if t.entries.contains_key(&key) {
            return false;
        }
        let nc = self.egress[port as usize].queues[ci.queue].pkts.iter().filter(|&&id| self.pkts.get(id).hash == key).count() as u32;
        let (cap, release) = (ci.table_size, ci.release_after);
        let e = self.ci_tables[port as usize].insert(key, nc, self.now, cap);
        // an entry that never receives a packet must still age out
        e.timer = true;
        let gen = e.release_gen;
        self.q.push(self.now + release, Ev::CiRelease { port, key, gen });
        true
    }

    /// The peer behind `in_port` isolates flows named by a CIP (P802.1Qcz signalling on, and
    /// a CI bridge, or a NIC that honours CIPs).
    fn ci_upstream_isolates(&self, in_port: PortId) -> bool {
        let ci = self.cfg.ci.as_ref().unwrap();
        let up = self.topo.ports[self.topo.ports[in_port as usize].peer as usize].node;
        ci.signal && (ci.hosts || self.topo.nodes[up as usize].kind == NodeKind::Switch)
    }

    /// Keep the isolated flow's packet counts as its packets leave `port`.
    fn ci_on_dequeue(&mut self, port: PortId, qi: usize, pkt: PktId) {
        let ci = self.cfg.ci.as_ref().unwrap();
        let key = self.pkts.get(pkt).hash;
        let release = ci.release_after;
        let congested = qi == ci.congested_queue;
        let nc = qi == ci.queue;
        let Some(e) = self.ci_tables[port as usize].entries.get_mut(&key) else { return };
        if nc {
            e.nc_pkts = e.nc_pkts.saturating_sub(1);
        } else if congested {
            e.c_pkts = e.c_pkts.saturating_sub(1);
            if e.c_pkts == 0 {
                e.empty_since = self.now;
                if !e.timer {
                    e.timer = true;
                    let gen = e.release_gen;
                    self.q.push(self.now + release, Ev::CiRelease { port, key, gen });
                }
            }
        }
    }

    /// Send a CIP naming flow `key` out of `port` (toward the upstream peer).
    fn send_cip(&mut self, port: PortId, key: u32, flow: FlowId) {
        let p = Packet { kind: PktKind::Cip, flow, seq: key as u64, size: CIP_BYTES, ..Packet::blank() };
        self.pkts_created += 1;
        let id = self.pkts.alloc(p);
        self.egress[port as usize].ctrl.push_back(id);
        self.try_tx(port);
    }

    /// A CIP arrived through `port`: isolate the flow in this node's egress back through it.
    fn cip_rx(&mut self, port: PortId, pkt: PktId) {
        let (key, flow) = {
            let p = self.pkts.get(pkt);
            (p.seq as u32, p.flow)
        };
        self.consume(pkt);
        let ci = self.cfg.ci.as_ref().unwrap();
        let node = self.topo.ports[port as usize].node;
        match self.topo.nodes[node as usize].kind {
            NodeKind::Switch => {
                self.ci_tables[port as usize].cips_received += 1;
                self.ci_isolate(port, key);
            }
            NodeKind::Host => {
                if ci.hosts {
                    let c = ci.congested_queue as u8;
                    if let Some(f) = self.flows.get_mut(flow as usize) {
                        f.nic_class = Some(c);
                    }
                    self.ci_tables[port as usize].cips_received += 1;
                }
            }
        }
    }

    /// Add every switch queue's depth to its histogram; sample again after the interval
    /// while the run goes on.
    fn sample_queues(&mut self) {
        let (every, bin) = self.cfg.queue_sample.unwrap();
        let nq = self.cfg.queues;
        if self.depth_hist.is_empty() {
            self.depth_hist = vec![Vec::new(); self.egress.len() * nq];
        }
        for (pid, eg) in self.egress.iter().enumerate() {
            if self.topo.nodes[self.topo.ports[pid].node as usize].kind != NodeKind::Switch {
                continue;
            }
            for (qi, q) in eg.queues.iter().enumerate() {
                let b = (q.bytes / bin) as usize;
                let h = &mut self.depth_hist[pid * nq + qi];
                if h.len() <= b {
                    h.resize(b + 1, 0);
                }
                h[b] += 1;
            }
        }
        self.samples += 1;
        let busy = self.active > 0 || self.next_spec < self.specs.len();
        if busy {
            self.q.push(self.now + every, Ev::Sample);
        }
    }

    // -------------------------------------------------------------------- PFC

    /// XOFF threshold of switch `sw` now (static, or alpha x free shared buffer).
    fn xoff_threshold(&self, sw: u32) -> u64 {
        match self.cfg.pfc.as_ref().unwrap().xoff {
            Xoff::Static(x) => x,
            Xoff::Dynamic(a) => {
                let b = &self.switches[sw as usize].buffer;
                (a * b.shared_cap().saturating_sub(b.shared_used()) as f64) as u64
            }
        }
    }

    fn pfc_on_enqueue(&mut self, sw: u32, in_port: PortId, qi: usize, size: u64, hdrm: bool) {
        let pfc = self.cfg.pfc.as_ref().unwrap();
        let c = pfc.class(qi);
        let thr = self.xoff_threshold(sw);
        let ing = &mut self.ingress[in_port as usize];
        ing.bytes[c] += size;
        if hdrm {
            ing.headroom[c] += size;
        }
        if self.cfg.check_invariants && ing.headroom[c] > pfc.headroom[in_port as usize] {
            self.violations.push(format!("t={} ingress port {in_port} class {c}: headroom {} B > {} B", self.now, ing.headroom[c], pfc.headroom[in_port as usize]));
        }
        if !ing.xoff[c] && ing.bytes[c] > thr {
            ing.xoff[c] = true;
            let quanta = pfc.quanta;
            self.send_pause(in_port, c, quanta);
            self.schedule_refresh(in_port, c);
        }
    }

    fn pfc_on_dequeue(&mut self, sw: u32, in_port: PortId, qi: usize, size: u64, hdrm: bool) {
        let pfc = self.cfg.pfc.as_ref().unwrap();
        let c = pfc.class(qi);
        let resume_at = match pfc.xoff {
            Xoff::Static(_) => pfc.xon,
            Xoff::Dynamic(_) => self.xoff_threshold(sw).saturating_sub(pfc.xon),
        };
        let ing = &mut self.ingress[in_port as usize];
        ing.bytes[c] -= size;
        if hdrm {
            ing.headroom[c] -= size;
        }
        if ing.xoff[c] && ing.bytes[c] <= resume_at {
            ing.xoff[c] = false;
            ing.refresh_gen[c] = ing.refresh_gen[c].wrapping_add(1);
            self.send_pause(in_port, c, 0);
        }
    }

    /// Queue-based PFC: the egress queue (out, qi) grew by a packet from (in_port, tc).
    /// `escalate`: the class the packet arrived in, when CI accounts it to the congested class
    /// `tc` instead. Packets the upstream had queued in its non-congested queue before it
    /// isolated the flow still arrive in that class after the congested class is paused; once
    /// they have filled half the room above XOFF, that class is paused too (the last resort
    /// that keeps the class lossless).
    #[allow(clippy::too_many_arguments)]
    fn queue_pfc_on_enqueue(&mut self, sw: u32, out: PortId, qi: usize, in_port: PortId, tc: u8, size: u64, escalate: Option<u8>) {
        let thr = self.xoff_threshold(sw);
        let limit = self.switches[sw as usize].buffer.queue_limit();
        let depth = self.egress[out as usize].queues[qi].bytes;
        let row = out as usize * self.cfg.queues + qi;
        let quanta = self.cfg.pfc.as_ref().unwrap().quanta;
        let q = &mut self.queue_pfc[row];
        q.add(in_port, tc, size);
        let mut to_pause: Vec<(u32, u8)> = Vec::new();
        if !q.xoff && depth > thr {
            q.xoff = true;
            to_pause.extend(q.contrib.iter().map(|c| (c.0, c.1)));
        } else if q.xoff && !q.paused.contains(&(in_port, tc)) {
            to_pause.push((in_port, tc));
        }
        if let Some(c) = escalate {
            if q.xoff && depth > thr + limit.saturating_sub(thr) / 2 && !q.paused.contains(&(in_port, c)) && !to_pause.contains(&(in_port, c)) {
                to_pause.push((in_port, c));
            }
        }
        let start = !to_pause.is_empty() && q.paused.is_empty();
        for &(p, c) in &to_pause {
            self.queue_pfc[row].paused.push((p, c));
            self.send_pause(p, c as usize, quanta);
        }
        if start {
            self.schedule_queue_refresh(out, qi);
        }
    }

    /// Queue-based PFC: a packet from (in_port, tc) left the egress queue (port, qi).
    fn queue_pfc_on_dequeue(&mut self, _sw: u32, port: PortId, qi: usize, in_port: PortId, tc: u8, size: u64) {
        let xon = self.cfg.pfc.as_ref().unwrap().xon;
        let depth = self.egress[port as usize].queues[qi].bytes;
        let row = port as usize * self.cfg.queues + qi;
        let q = &mut self.queue_pfc[row];
        q.sub(in_port, tc, size);
        if q.xoff && depth <= xon {
            q.xoff = false;
            q.refresh_gen = q.refresh_gen.wrapping_add(1);
            for (p, c) in std::mem::take(&mut q.paused) {
                self.send_pause(p, c as usize, 0);
            }
        }
    }

    fn schedule_queue_refresh(&mut self, port: PortId, qi: usize) {
        let quanta = self.cfg.pfc.as_ref().unwrap().quanta;
        let pause = PfcParams::pause_time(quanta, self.topo.ports[port as usize].rate_bps);
        let row = port as usize * self.cfg.queues + qi;
        let q = &mut self.queue_pfc[row];
        q.refresh_gen = q.refresh_gen.wrapping_add(1);
        let gen = q.refresh_gen;
        self.q.push(self.now + SimTime((pause.0 / 2).max(1)), Ev::QueuePfcRefresh { port, queue: qi as u8, gen });
    }

    /// Queue a PAUSE (quanta > 0) or XON (quanta = 0) for class `c` out of `port`.
    fn send_pause(&mut self, port: PortId, c: usize, quanta: u16) {
        let link = self.cfg.pfc.as_ref().unwrap().link_mode;
        let p = Packet {
            kind: PktKind::Pause,
            flow: u32::MAX,
            seq: quanta as u64,
            size: PAUSE_FRAME_BYTES,
            prio: if link { 255 } else { c as u8 },
            ..Packet::blank()
        };
        self.pkts_created += 1;
        let id = self.pkts.alloc(p);
        let eg = &mut self.egress[port as usize];
        let row = c.min(eg.queues.len() - 1);
        eg.queues[row].stats.pfc_tx += 1;
        eg.ctrl.push_back(id);
        self.try_tx(port);
    }

    fn schedule_refresh(&mut self, port: PortId, c: usize) {
        let pfc = self.cfg.pfc.as_ref().unwrap();
        let pause = PfcParams::pause_time(pfc.quanta, self.topo.ports[port as usize].rate_bps);
        let ing = &mut self.ingress[port as usize];
        ing.refresh_gen[c] = ing.refresh_gen[c].wrapping_add(1);
        let gen = ing.refresh_gen[c];
        self.q.push(self.now + SimTime((pause.0 / 2).max(1)), Ev::PfcRefresh { port, class: c as u8, gen });
    }

    fn pfc_refresh(&mut self, port: PortId, c: usize, gen: u32) {
        let ing = &self.ingress[port as usize];
        if ing.refresh_gen[c] != gen || !ing.xoff[c] {
            return;
        }
        let quanta = self.cfg.pfc.as_ref().unwrap().quanta;
        self.send_pause(port, c, quanta);
        self.schedule_refresh(port, c);
    }

    /// A PAUSE frame arrived through `port`: pause (or resume) that port's egress.
    fn pause_rx(&mut self, port: PortId, pkt: PktId) {
        let (quanta, class) = {
            let p = self.pkts.get(pkt);
            (p.seq as u16, p.prio)
        };
        self.consume(pkt);
        let c = if class == 255 { 0 } else { class as usize };
        let rate = self.topo.ports[port as usize].rate_bps;
        let until = if quanta == 0 { self.now } else { self.now + PfcParams::pause_time(quanta, rate) };
        let eg = &mut self.egress[port as usize];
        let row = c.min(eg.queues.len() - 1);
        eg.queues[row].stats.pfc_rx += 1;
        eg.paused.set(c, until, self.now);
        if until > self.now {
            self.q.push(until, Ev::PauseEnd { port });
            if !self.deadlock_check_pending {
                self.deadlock_check_pending = true;
                let after = self.cfg.pfc.as_ref().map_or(SimTime::from_ms(5), |p| p.deadlock_after);
                self.q.push(self.now + after, Ev::DeadlockCheck);
            }
        } else {
            self.try_tx(port);
        }
    }

    /// End the run if egress queues have been paused on each other in a cycle for
    /// longer than `deadlock_after`: queue (port p, class c) waits on the node at
    /// the far end of p, whose paused egress queues of class c hold what p's
    /// pause protects.
    fn deadlock_check(&mut self) {
        self.deadlock_check_pending = false;
        let Some(pfc) = self.cfg.pfc.as_ref() else { return };
        let since = SimTime(self.now.0.saturating_sub(pfc.deadlock_after.0));
        let classes = if pfc.link_mode { 1 } else { self.cfg.queues };
        let n = self.egress.len();
        let long_paused = |sim: &Sim, p: usize, c: usize| sim.egress[p].paused.paused_since(c, since, sim.now);
        let mut any_paused = false;
        // iterative DFS over (port, class) nodes; colour 0 new, 1 on stack, 2 done
        let mut colour = vec![0u8; n * classes];
        for start in 0..n * classes {
            let (sp, sc) = (start / classes, start % classes);
            any_paused |= self.egress[sp].paused.is_paused(sc, self.now);
            if colour[start] != 0 || !long_paused(self, sp, sc) {
                continue;
            }
            let mut stack: Vec<(usize, Vec<usize>)> = Vec::new();
            let succ = |sim: &Sim, v: usize| -> Vec<usize> {
                let (p, c) = (v / classes, v % classes);
                let down = sim.topo.peer_node(p as PortId);
                sim.topo.nodes[down as usize]
                    .ports
                    .iter()
                    .map(|&q| q as usize * classes + c)
                    .filter(|&w| long_paused(sim, w / classes, c) && sim.egress[w / classes].bytes > 0)
                    .collect()
            };
            colour[start] = 1;
            stack.push((start, succ(self, start)));
            while let Some((v, next)) = stack.last_mut() {
                match next.pop() {
                    Some(w) if colour[w] == 1 => {
                        // cycle: the stack from w to the top
                        let pos = stack.iter().position(|(x, _)| *x == w).unwrap();
                        let cycle: Vec<String> = stack[pos..]
                            .iter()
                            .map(|(x, _)| {
                                let (p, c) = (x / classes, x % classes);
                                let info = &self.topo.ports[p];
                                format!("{}:{}:{}", self.topo.nodes[info.node as usize].name, info.local, c)
                            })
                            .collect();
                        self.deadlock = cycle;
                        self.end = Some(EndReason::Deadlock);
                        return;
                    }
                    Some(w) if colour[w] == 0 => {
                        colour[w] = 1;
                        let s = succ(self, w);
                        stack.push((w, s));
                    }
                    Some(_) => {}
                    None => {
                        colour[*v] = 2;
                        stack.pop();
                    }
                }
            }
        }
        if any_paused {
            self.deadlock_check_pending = true;
            let next = SimTime((pfc.deadlock_after.0 / 2).max(1));
            self.q.push(self.now + next, Ev::DeadlockCheck);
        }
    }

    /// A packet reached its end (delivered, or a control frame acted on): count it and free it.
    #[inline]
    fn consume(&mut self, pkt: PktId) {
        self.pkts_consumed += 1;
        self.pkts.free(pkt);
    }

    fn drop_pkt(&mut self, pkt: PktId, at: Option<(PortId, usize)>, why: DropReason) {
        if let Some((port, q)) = at {
            self.egress[port as usize].queues[q].stats.count_drop(why);
        }
        let (f, kind) = {
            let p = self.pkts.get(pkt);
            (p.flow, p.kind)
        };
        if let Some(fl) = self.flows.get_mut(f as usize) {
            fl.drops += 1;
        }
        if kind == PktKind::Data {
            self.data_dropped += 1;
        }
        self.pkts_dropped += 1;
        self.pkts.free(pkt);
    }

    // ------------------------------------------------------------ transmitter

    /// Start a transmission on `port` if it is idle and has something to send;
    /// if it is busy and has a backlog, make sure a TxDone will wake it.
    fn try_tx(&mut self, port: PortId) {
        let eg = &self.egress[port as usize];
        if eg.busy_until > self.now {
            let t = eg.busy_until;
            if eg.txdone_at != Some(t) && self.has_backlog(port) {
                self.egress[port as usize].txdone_at = Some(t);
                self.q.push(t, Ev::TxDone { port });
            }
            return;
        }
        if let Some(ctrl) = self.egress[port as usize].ctrl.pop_front() {
            self.transmit(port, ctrl);
            return;
        }
        let h = self.hot[port as usize];
        let pkt = match h.is_switch {
            true => {
                let sw = h.owner;
                let now = self.now;
                let link = self.cfg.pfc.as_ref().is_some_and(|p| p.link_mode);
                let eg = &mut self.egress[port as usize];
                let paused = &eg.paused;
                let queues = &eg.queues;
                let pkts = &self.pkts;
                // CI ordering: the congested queue waits while its head's flow still has
                // packets in the non-congested queue
                let ci_block = |i: usize| match (&self.cfg.ci, self.ci_tables.get(port as usize)) {
                    (Some(ci), Some(t)) if i == ci.congested_queue && !t.entries.is_empty() => queues[i]
                        .head()
                        .and_then(|h| t.entries.get(&pkts.get(h).hash))
                        .is_some_and(|e| e.nc_pkts > 0),
                    _ => false,
                };
                let can_block = self.cfg.pfc.is_some() || !self.ci_tables.is_empty();
                let blocked = |i: usize| can_block && (paused.is_paused(if link { 0 } else { i }, now) || ci_block(i));
                let qi = match self.cfg.scheduler.select(&eg.queues, &mut eg.sched, &self.pkts, blocked) {
                    Some(q) => q,
                    None => return,
                };
                let size = self.pkts.get(eg.queues[qi].head().unwrap()).size;
                self.switches[sw as usize].buffer.on_dequeue(eg.bytes, size as u64);
                eg.bytes -= size as u64;
                let pkt = eg.queues[qi].pop(size, self.now).unwrap();
                if !self.ci_tables.is_empty() {
                    self.ci_on_dequeue(port, qi, pkt);
                }
                if self.cfg.pfc.is_some() {
                    let (in_port, hdrm, enq, flow, arrival_tc) = {
                        let p = self.pkts.get(pkt);
                        (p.ingress, p.hdrm, p.enq, p.flow, p.tc as usize)
                    };
                    let c = if link { 0 } else { qi };
                    if self.egress[port as usize].paused.paused_during(c, enq) {
                        if let Some(f) = self.flows.get_mut(flow as usize) {
                            f.paused = true;
                        }
                    }
                    let pfc = self.cfg.pfc.as_ref().unwrap();
                    if pfc.egress_queue {
                        if pfc.is_lossless(qi) {
                            self.queue_pfc_on_dequeue(sw, port, qi, in_port, arrival_tc as u8, size as u64);
                        }
                    } else if pfc.is_lossless(arrival_tc) {
                        self.pfc_on_dequeue(sw, in_port, arrival_tc, size as u64, hdrm);
                    }
                }
                self.pkts.get_mut(pkt).tc = qi as u8;
                pkt
            }
            false => match self.host_next_packet(h.owner) {
                Some(p) => p,
                None => return,
            },
        };
        self.transmit(port, pkt);
    }

    fn has_backlog(&self, port: PortId) -> bool {
        let eg = &self.egress[port as usize];
        if eg.bytes > 0 || !eg.ctrl.is_empty() {
            return true;
        }
        let h = &self.hot[port as usize];
        !h.is_switch && self.hosts[h.owner as usize].ready.iter().any(|r| !r.is_empty())
    }

    fn transmit(&mut self, port: PortId, pkt: PktId) {
        let h = self.hot[port as usize];
        let (size, kind) = {
            let p = self.pkts.get(pkt);
            (p.size, p.kind)
        };
        if !h.is_switch && kind == PktKind::Data {
            self.data_sent += 1;
        }
        if let Some(tr) = &mut self.trace {
            let p = self.pkts.get(pkt);
            tr.push(TxRecord { time: self.now, port, kind: p.kind, flow: p.flow, seq: p.seq, size });
        }
        let done = self.now + h.ser(size as u64);
        self.q.push(done + h.arrive_delay, Ev::Arrive { port: h.peer, pkt });
        self.egress[port as usize].busy_until = done;
        if self.has_backlog(port) {
            self.egress[port as usize].txdone_at = Some(done);
            self.q.push(done, Ev::TxDone { port });
        }
    }

    // ------------------------------------------------------------------ hosts

    /// Enqueue a host-generated packet (ACK, datagram) on the host's NIC.
    fn nic_enqueue(&mut self, host: u32, pkt: PktId) {
        let port = self.hosts[host as usize].port;
        let (size, prio, flow, data) = {
            let p = self.pkts.get(pkt);
            (p.size, p.prio, p.flow, p.kind == PktKind::Data)
        };
        // datagrams of a flow a CIP isolated at this NIC go to the congested class
        let isolated = if data { self.flows.get(flow as usize).and_then(|f| f.nic_class) } else { None };
        let qi = isolated.map_or(self.cfg.class_of[prio as usize & 7] as usize, |c| c as usize);
        let eg = &mut self.egress[port as usize];
        eg.bytes += size as u64;
        eg.queues[qi].push(pkt, size, self.now);
        self.try_tx(port);
    }

    fn host_next_packet(&mut self, h: u32) -> Option<PktId> {
        let port = self.hosts[h as usize].port;
        let now = self.now;
        let link = self.cfg.pfc.as_ref().is_some_and(|p| p.link_mode);
        let eg = &mut self.egress[port as usize];
        let paused = &eg.paused;
        let blocked = |i: usize| paused.is_paused(if link { 0 } else { i }, now);
        if eg.bytes > 0 {
            if let Some(qi) = Scheduler::Strict.select(&eg.queues, &mut eg.sched, &self.pkts, blocked) {
                let size = self.pkts.get(eg.queues[qi].head().unwrap()).size;
                eg.bytes -= size as u64;
                let pkt = eg.queues[qi].pop(size, self.now)?;
                self.pkts.get_mut(pkt).tc = qi as u8;
                return Some(pkt);
            }
        }
        // paced flows found not ready: re-examined (and woken later) once we are done
        let mut pace: Vec<FlowId> = Vec::new();
        for class in (0..self.cfg.queues).rev() {
            if blocked(class) {
                continue;
            }
            while let Some(f) = self.hosts[h as usize].ready[class].pop_front() {
                let fl = &mut self.flows[f as usize];
                fl.in_ready = false;
                if fl.finished {
                    continue;
                }
                if let Some(c) = fl.nic_class {
                    if c as usize != class {
                        // isolated at the NIC by a CIP since it was queued: move it
                        fl.in_ready = true;
                        self.hosts[h as usize].ready[c as usize].push_back(f);
                        continue;
                    }
                }
                let now = self.now;
                let (seg, still, ect) = match &mut fl.sender {
                    Sender::Tcp(tcp) => {
                        let Some(seg) = tcp.next_segment(fl.size) else { continue };
                        tcp.arm_if_idle(now);
                        (seg, tcp.can_send(fl.size), tcp.cc.ecn_capable())
                    }
                    Sender::Roce(r) => {
                        let mss = self.cfg.mtu - self.cfg.header;
                        match r.next_segment(fl.size, mss, self.cfg.header, now) {
                            Some(seg) => {
                                // stay ready if the pacer allows the next packet by the time
                                // this one is serialized (always, at line rate)
                                let rate = self.topo.ports[self.hosts[h as usize].port as usize].rate_bps;
                                let free_at = now + ser_time((seg.len + self.cfg.header) as u64, rate);
                                let still = r.has_work(fl.size) && r.next_allowed() <= free_at;
                                (seg, still, true)
                            }
                            None => {
                                pace.push(f);
                                continue;
                            }
                        }
                    }
                    Sender::Udp(_) | Sender::Done => continue,
                };
                if seg.retx {
                    fl.retx += 1;
                }
                let p = Packet {
                    kind: PktKind::Data,
                    flow: f,
                    src: fl.src,
                    dst: fl.dst,
                    seq: seg.seq,
                    size: seg.len + self.cfg.header,
                    payload: seg.len,
                    prio: fl.prio,
                    ect,
                    ce: false,
                    ece: false,
                    retx: seg.retx,
                    hash: fl.hash,
                    ts: self.now,
                    tc: class as u8,
                    ..Packet::blank()
                };
                let paced = !still && matches!(fl.sender, Sender::Roce(_));
                if still {
                    fl.in_ready = true;
                    self.hosts[h as usize].ready[class].push_back(f);
                }
                self.ensure_timer(f);
                if paced {
                    pace.push(f);
                }
                self.pkts_created += 1;
                let id = self.pkts.alloc(p);
                for f in pace {
                    self.make_ready(f);
                }
                return Some(id);
            }
        }
        for f in pace {
            self.make_ready(f);
        }
        None
    }

    fn host_rx(&mut self, pkt: PktId) {
        let (kind, f) = {
            let p = self.pkts.get(pkt);
            (p.kind, p.flow)
        };
        if self.flows[f as usize].finished {
            self.consume(pkt);
            return;
        }
        match kind {
            PktKind::Data => self.on_data(f, pkt),
            PktKind::Ack | PktKind::Nack => self.on_ack(f, pkt),
            PktKind::Cnp => {
                self.consume(pkt);
                let now = self.now;
                if let Sender::Roce(r) = &mut self.flows[f as usize].sender {
                    r.on_cnp(now);
                }
            }
            PktKind::Pause | PktKind::Cip => unreachable!("control frames are handled on arrival"),
        }
    }

    fn on_data(&mut self, f: FlowId, pkt: PktId) {
        let fl = &mut self.flows[f as usize];
        let p = self.pkts.get_mut(pkt);
        if p.ce {
            fl.ecn_marks += 1;
        }
        match fl.sender {
            Sender::Tcp(_) => {
                let ack = fl.rx.on_data(p.seq, p.payload as u64);
                let ce = p.ce;
                self.reply_in_place(pkt, PktKind::Ack, ack, ce);
            }
            Sender::Roce(_) => {
                let reply = fl.rrx.on_data(p.seq, p.payload as u64);
                let cnp = p.ce && fl.rrx.np.on_marked(self.cfg.roce.cnp_interval, self.now);
                let (src, dst, prio, hash) = (p.src, p.dst, p.prio, p.hash);
                let (kind, seq) = match reply {
                    RoceReply::Ack(a) => (PktKind::Ack, a),
                    RoceReply::Nack(e) => (PktKind::Nack, e),
                    RoceReply::Nothing => (PktKind::Data, 0),
                };
                if kind == PktKind::Data {
                    self.consume(pkt);
                } else {
                    self.reply_in_place(pkt, kind, seq, false);
                }
                if cnp {
                    let c = Packet { kind: PktKind::Cnp, flow: f, src: dst, dst: src, size: self.cfg.ack_size, prio, hash, ts: self.now, ..Packet::blank() };
                    self.pkts_created += 1;
                    let id = self.pkts.alloc(c);
                    self.nic_enqueue(dst, id);
                }
            }
            Sender::Done => {
                self.consume(pkt);
            }
            Sender::Udp(_) => {
                fl.rx.bytes += p.size as u64;
                let done = fl.rx.bytes >= fl.size;
                self.consume(pkt);
                if done {
                    self.finish_flow(f);
                }
            }
        }
    }

    /// Turn a received data packet into its reply (ACK/NACK carrying `seq`) in place, with
    /// no allocation, and queue it at the receiving host's NIC.
    fn reply_in_place(&mut self, pkt: PktId, kind: PktKind, seq: u64, ece: bool) {
        let p = self.pkts.get_mut(pkt);
        std::mem::swap(&mut p.src, &mut p.dst);
        p.kind = kind;
        p.seq = seq;
        p.size = self.cfg.ack_size;
        p.payload = 0;
        p.ece = ece;
        p.ce = false;
        p.ect = false;
        p.hops = 0;
        let host = p.src;
        self.nic_enqueue(host, pkt);
    }

    fn on_ack(&mut self, f: FlowId, pkt: PktId) {
        let (ack, ece, ts, kind) = {
            let p = self.pkts.get(pkt);
            (p.seq, p.ece, p.ts, p.kind)
        };
        self.consume(pkt);
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let finished = match &mut fl.sender {
            Sender::Tcp(tcp) => tcp.on_ack(ack, ece, ts, now, fl.size).finished,
            Sender::Roce(r) if kind == PktKind::Nack => r.on_nack(ack, now, fl.size),
            Sender::Roce(r) => r.on_ack(ack, now, fl.size),
            Sender::Udp(_) | Sender::Done => return,
        };
        if finished {
            self.finish_flow(f);
            return;
        }
        self.make_ready(f);
        self.ensure_timer(f);
    }

    /// Put a flow on its host's ready list if its window (and, for a paced
    /// flow, its pacer) allows a segment now; a paced flow that must wait gets
    /// a wake-up at the earlier of its pacing time and its next rate increase.
    fn make_ready(&mut self, f: FlowId) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.in_ready || fl.finished {
            return;
        }
        match &mut fl.sender {
            Sender::Tcp(tcp) => {
                if !tcp.can_send(fl.size) {
                    return;
                }
            }
            Sender::Roce(r) => {
                if !r.has_work(fl.size) {
                    return;
                }
                r.rp.advance(&r.p, now);
                let at = r.next_allowed();
                if at > now {
                    let wake = at.min(r.rp.next_rate_event(&r.p).max(SimTime(now.0 + 1)));
                    if r.pace_at.is_none_or(|t| wake < t) {
                        r.pace_gen = r.pace_gen.wrapping_add(1);
                        r.pace_at = Some(wake);
                        let gen = r.pace_gen;
                        self.q.push(wake, Ev::Pace { flow: f, gen });
                    }
                    return;
                }
            }
            Sender::Udp(_) | Sender::Done => return,
        }
        fl.in_ready = true;
        let class = fl.nic_class.map_or(self.cfg.class_of[fl.prio as usize & 7] as usize, |c| c as usize);
        let h = fl.src;
        self.hosts[h as usize].ready[class].push_back(f);
        let port = self.hosts[h as usize].port;
        self.try_tx(port);
    }

    /// Keep one timer event in the queue no later than the RTO deadline.
    fn ensure_timer(&mut self, f: FlowId) {
        let Some((deadline, timer_at, timer_gen)) = timer_of(&mut self.flows[f as usize].sender) else { return };
        if let Some(d) = *deadline {
            if timer_at.is_none_or(|t| d < t) {
                *timer_gen = timer_gen.wrapping_add(1);
                *timer_at = Some(d);
                let gen = *timer_gen;
                self.q.push(d, Ev::Rto { flow: f, gen });
            }
        }
    }

    fn on_rto(&mut self, f: FlowId, gen: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if fl.finished {
            return;
        }
        let Some((deadline, timer_at, timer_gen)) = timer_of(&mut fl.sender) else { return };
        if *timer_gen != gen {
            return; // superseded
        }
        *timer_at = None;
        match *deadline {
            None => return,
            Some(d) if d > now => {}
            Some(_) => {
                match &mut fl.sender {
                    Sender::Tcp(tcp) => tcp.on_timeout(now),
                    Sender::Roce(r) => r.on_timeout(now),
                    Sender::Udp(_) | Sender::Done => false,
                };
                self.make_ready(f);
            }
        }
        self.ensure_timer(f);
    }

    fn udp_send(&mut self, f: FlowId) {
        let fl = &mut self.flows[f as usize];
        let Sender::Udp(u) = &mut fl.sender else { return };
        if u.sent >= fl.size {
            return;
        }
        let sz = (u.next_size() as u64).min(fl.size - u.sent) as u32;
        u.sent += sz as u64;
        let more = u.sent < fl.size;
        let gap = u.next_gap();
        let p = Packet {
            kind: PktKind::Data,
            flow: f,
            src: fl.src,
            dst: fl.dst,
            seq: u.sent - sz as u64,
            size: sz,
            payload: sz,
            prio: fl.prio,
            ect: false,
            ce: false,
            ece: false,
            retx: false,
            hash: fl.hash,
            ts: self.now,
            ..Packet::blank()
        };
        let src = fl.src;
        self.pkts_created += 1;
        let id = self.pkts.alloc(p);
        self.nic_enqueue(src, id);
        if more {
            self.q.push(self.now + gap, Ev::UdpSend { flow: f });
        }
    }

    // ------------------------------------------------------------------ flows

    /// Start the flow `spec`; `conn` continues a finished flow's connection: its path hash,
    /// NIC class and sender (whose congestion-control state the new flow keeps).
    fn start_flow(&mut self, spec: FlowSpec, conn: Option<(u32, Option<u8>, Sender)>) {
        let id = self.flows.len() as FlowId;
        let hash = match &conn {
            Some((h, _, _)) => *h,
            None => mix64(self.cfg.seed ^ mix64(id as u64 ^ 0xF10F)) as u32,
        };
        let ideal = self.ideal_fct(&spec, hash);
        let host_rate = self.topo.ports[self.hosts[spec.src as usize].port as usize].rate_bps;
        let mss = self.cfg.mtu - self.cfg.header;
        let mut sender = match spec.transport {
            TransportKind::Dctcp | TransportKind::Reno => {
                let cc = if spec.transport == TransportKind::Dctcp {
                    Cc::Dctcp(Dctcp::new(self.cfg.tcp.dctcp_g))
                } else {
                    Cc::Reno(Reno { ecn: self.cfg.tcp.reno_ecn })
                };
                Sender::Tcp(Box::new(TcpSender::new(cc, mss, self.cfg.tcp.init_cwnd, self.cfg.tcp.min_rto, self.cfg.tcp.init_rto)))
            }
            TransportKind::Dcqcn => Sender::Roce(Box::new(RoceSender::new(&self.cfg.roce, host_rate, self.now))),
            TransportKind::Udp => Sender::Udp(Box::new(UdpSource {
                rate_bps: self.cfg.udp.rate_bps.unwrap_or(host_rate),
                arrivals: self.cfg.udp.arrivals,
                sizes: self.cfg.udp.sizes,
                mean_size: self.cfg.udp.packet_size,
                max_size: self.cfg.mtu,
                sent: 0,
                rng: stream(self.cfg.seed, Stream::Flow, id as u64),
            })),
        };
        let mut nic_class = None;
        if let Some((_, class, prev)) = conn {
            nic_class = class;
            match (&mut sender, prev) {
                (Sender::Roce(r), Sender::Roce(p)) => r.rp = p.rp,
                (Sender::Tcp(t), Sender::Tcp(p)) => t.continue_connection(&p),
                _ => {}
            }
        }
        let is_udp = matches!(sender, Sender::Udp(_));
        self.flows.push(Flow {
            id,
            src: spec.src,
            dst: spec.dst,
            size: spec.size,
            start: self.now,
            tag: spec.tag,
            prio: spec.prio,
            hash,
            transport: spec.transport,
            ideal,
            repeat_until: spec.repeat_until,
            reuse_connection: spec.reuse_connection,
            sender,
            rx: Receiver::default(),
            rrx: Default::default(),
            drops: 0,
            ecn_marks: 0,
            retx: 0,
            paused: false,
            finished: false,
            end: SimTime::ZERO,
            in_ready: false,
            nic_class,
        });
        self.active += 1;
        if is_udp {
            self.udp_send(id);
        } else {
            self.make_ready(id);
        }
    }

    fn finish_flow(&mut self, f: FlowId) {
        let now = self.now;
        let delivered = self.flow_acked(f);
        let fl = &mut self.flows[f as usize];
        fl.finished = true;
        fl.end = now;
        fl.rx.clear();
        fl.rx = Receiver::default();
        fl.rx.bytes = delivered;
        fl.rrx = Default::default();
        let prev = std::mem::replace(&mut fl.sender, Sender::Done);
        self.active -= 1;
        self.finished += 1;
        if let Some(until) = fl.repeat_until {
            if now < until {
                let spec = FlowSpec {
                    src: fl.src,
                    dst: fl.dst,
                    size: fl.size,
                    start: now,
                    prio: fl.prio,
                    tag: fl.tag,
                    transport: fl.transport,
                    repeat_until: Some(until),
                    reuse_connection: fl.reuse_connection,
                };
                let conn = fl.reuse_connection.then_some((fl.hash, fl.nic_class, prev));
                self.start_flow(spec, conn);
            }
        }
    }

    /// FCT of the flow alone on an idle fabric with an unlimited window: the
    /// exact store-and-forward timing of its packets through idle hops, and
    /// (for TCP) of the last packet's ACK back to the sender.
    ///
    /// With n-1 full packets and a last one of size l, the (n-1)-th full
    /// packet leaves hop i at max over j <= i of the time the packet train
    /// "turns" at hop j (first packet down to j, n-1 packets through j, then
    /// down to i) plus propagation; the last packet and the ACKs follow by the
    /// recurrence D_i(k) = max(D_i(k-1), D_{i-1}(k) + d_{i-1}) + s_i(k), since a
    /// short last packet can queue behind the full one before it.
    pub fn ideal_fct(&self, spec: &FlowSpec, hash: u32) -> SimTime {
        let path = self.routes.path(&self.topo, spec.src, spec.dst, hash);
        let udp = spec.transport == TransportKind::Udp;
        let rate = |p: PortId| self.topo.ports[p as usize].rate_bps;
        let s = |bytes: u64, p: PortId| ser_time(bytes, rate(p)).0;
        let d = |p: PortId| self.hot[p as usize].arrive_delay.0;
        let u = &self.cfg.udp;
        if udp && (u.sizes != SizeDist::Fixed || u.arrivals != Arrivals::Constant) {
            // random datagrams: no single idle-path time; use the lower bound of every
            // byte through the slowest link plus the propagation of the path
            let slowest = path.iter().map(|&p| rate(p)).min().unwrap();
            return SimTime(ser_time(spec.size, slowest).0 + path.iter().map(|&p| d(p)).sum::<u64>());
        }
        let (mss, hdr) = if udp { (u.packet_size as u64, 0) } else { ((self.cfg.mtu - self.cfg.header) as u64, self.cfg.header as u64) };
        let n = spec.size.div_ceil(mss).max(1);
        let last = spec.size - (n - 1) * mss + hdr;
        let full = mss + hdr;
        let l = path.len();
        if udp {
            // a source slower than its link spaces its datagrams: the last one leaves
            // (n-1) gaps after the first and then crosses the idle path alone
            let src_rate = u.rate_bps.unwrap_or(u64::MAX);
            if src_rate < rate(path[0]) {
                let gap = ser_time(full, src_rate).0;
                let alone: u64 = path.iter().map(|&p| s(last, p) + d(p)).sum();
                return SimTime((n - 1) * gap + alone);
            }
        }
        // departure of packet n-1 (full) from each hop, relative to the flow's start
        let mut prev = vec![0u64; l];
        if n > 1 {
            for i in 0..l {
                let mut best = 0;
                for j in 0..=i {
                    let down: u64 = path[..j].iter().map(|&p| s(full, p) + d(p)).sum();
                    let through = (n - 1) * s(full, path[j]);
                    let after: u64 = path[j + 1..=i].iter().map(|&p| s(full, p)).sum::<u64>() + path[j..i].iter().map(|&p| d(p)).sum::<u64>();
                    best = best.max(down + through + after);
                }
                prev[i] = best;
            }
        }
        // the last packet
        let mut t = 0u64;
        let mut last_dep = vec![0u64; l];
        for i in 0..l {
            let arrive = if i == 0 { 0 } else { last_dep[i - 1] + d(path[i - 1]) };
            t = arrive.max(if n > 1 { prev[i] } else { 0 }) + s(last, path[i]);
            last_dep[i] = t;
        }
        let delivered = t + d(path[l - 1]);
        if udp {
            return SimTime(delivered);
        }
        // ACKs of packets n-1 and n over the reverse path
        let ack = self.cfg.ack_size as u64;
        let back: Vec<PortId> = path.iter().rev().map(|&p| self.topo.ports[p as usize].peer).collect();
        let mut a_prev = if n > 1 { prev[l - 1] + d(path[l - 1]) } else { 0 };
        let mut a = delivered;
        for &p in &back {
            if n > 1 {
                a_prev += s(ack, p);
            }
            a = a.max(if n > 1 { a_prev } else { 0 }) + s(ack, p);
            a += d(p);
            a_prev += d(p);
        }
        SimTime(a)
    }

    // ---------------------------------------------------------------- results

    /// Finalize at the current time and build the result tables.
    pub fn results(&mut self) -> Results {
        let now = self.now;
        let mut ft = Table::default();
        let n = self.flows.len();
        let mut cols: [Vec<u64>; 7] = Default::default();
        let (mut src, mut dst) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut slowdown = Vec::with_capacity(n);
        let (mut prio, mut tag, mut fin) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut drops, mut marks, mut retx) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let mut paused = Vec::with_capacity(n);
        for f in &self.flows {
            let fct = if f.finished { (f.end - f.start).0 } else { 0 };
            cols[0].push(f.id as u64);
            cols[1].push(f.size);
            cols[2].push(f.start.0);
            cols[3].push(if f.finished { f.end.0 } else { 0 });
            cols[4].push(fct);
            cols[5].push(f.ideal.0);
            cols[6].push(self.flow_acked(f.id));
            src.push(f.src);
            dst.push(f.dst);
            slowdown.push(if f.finished && f.ideal.0 > 0 { fct as f64 / f.ideal.0 as f64 } else { f64::NAN });
            prio.push(f.prio);
            tag.push(f.tag);
            fin.push(f.finished as u8);
            drops.push(f.drops);
            marks.push(f.ecn_marks);
            retx.push(f.retx);
            paused.push(f.paused as u8);
        }
        let [id, size, start, end, fct, ideal, acked] = cols;
        ft.push("flow_id", C::U64(id));
        ft.push("src", C::U32(src));
        ft.push("dst", C::U32(dst));
        ft.push("size_bytes", C::U64(size));
        ft.push("start_ps", C::U64(start));
        ft.push("end_ps", C::U64(end));
        ft.push("fct_ps", C::U64(fct));
        ft.push("ideal_fct_ps", C::U64(ideal));
        ft.push("slowdown", C::F64(slowdown));
        ft.push("priority", C::U8(prio));
        ft.push("tag", C::U16(tag));
        ft.push("finished", C::U8(fin));
        ft.push("delivered_bytes", C::U64(acked));
        ft.push("drops", C::U32(drops));
        ft.push("ecn_marks", C::U32(marks));
        ft.push("retx", C::U32(retx));
        ft.push("paused", C::U8(paused));

        let mut pt = Table::default();
        let mut node = vec![];
        let mut is_host = vec![];
        let mut port = vec![];
        let mut peer = vec![];
        let mut queue = vec![];
        let mut rate = vec![];
        let mut c: [Vec<u64>; 13] = Default::default();
        let mut cic: [Vec<u64>; 6] = Default::default();
        let ci_row = self.cfg.ci.as_ref().map(|c| c.congested_queue);
        let (mut iso_total, mut cip_total) = (0u64, 0u64);
        let mut mean = vec![];
        let link = self.cfg.pfc.as_ref().is_some_and(|p| p.link_mode);
        let mut ports_paused = 0u64;
        let mut pfc_frames = 0u64;
        for (pid, eg) in self.egress.iter_mut().enumerate() {
            let info = &self.topo.ports[pid];
            let peer_node = self.topo.ports[info.peer as usize].node;
            let mut port_was_paused = false;
            for (qi, qq) in eg.queues.iter_mut().enumerate() {
                let pc = if link { 0 } else { qi };
                node.push(info.node);
                is_host.push((self.topo.nodes[info.node as usize].kind == NodeKind::Host) as u8);
                port.push(info.local);
                peer.push(peer_node);
                queue.push(qi as u8);
                rate.push(info.rate_bps);
                mean.push(qq.mean_bytes(now));
                let s = &qq.stats;
                c[0].push(s.tx_bytes);
                c[1].push(s.tx_packets);
                c[2].push(s.drops());
                c[3].push(s.drops_buffer_full);
                c[4].push(s.drops_aqm);
                c[5].push(s.ecn_marks);
                c[6].push(s.max_bytes);
                c[7].push(s.drops_headroom);
                c[8].push(s.drops_ttl);
                c[9].push(s.pfc_tx);
                c[10].push(s.pfc_rx);
                // in link mode the port's single pause state is reported on queue 0
                let (xoff, periods) = if !link || qi == 0 { (eg.paused.xoff_time(pc, now), eg.paused.periods[pc]) } else { (0, 0) };
                c[11].push(xoff);
                c[12].push(periods);
                port_was_paused |= periods > 0;
                match (self.ci_tables.get(pid), ci_row) {
                    (Some(t), Some(r)) if r == qi => {
                        for (v, x) in cic.iter_mut().zip([t.isolations, t.releases, t.evictions, t.cips_sent, t.cips_received, t.max_occupancy as u64]) {
                            v.push(x);
                        }
                        iso_total += t.isolations;
                        cip_total += t.cips_sent;
                    }
                    _ => cic.iter_mut().for_each(|v| v.push(0)),
                }
                pfc_frames += s.pfc_tx;
            }
            ports_paused += port_was_paused as u64;
        }
        let [tx_b, tx_p, dr, dr_bf, dr_aqm, mk, mx, dr_hd, dr_ttl, pfc_tx, pfc_rx, xoff_t, periods] = c;
        pt.push("node", C::U32(node));
        pt.push("is_host", C::U8(is_host));
        pt.push("port", C::U32(port));
        pt.push("peer_node", C::U32(peer));
        pt.push("queue", C::U8(queue));
        pt.push("rate_bps", C::U64(rate));
        pt.push("tx_bytes", C::U64(tx_b));
        pt.push("tx_packets", C::U64(tx_p));
        pt.push("drops", C::U64(dr));
        pt.push("drops_buffer_full", C::U64(dr_bf));
        pt.push("drops_aqm", C::U64(dr_aqm));
        pt.push("drops_headroom", C::U64(dr_hd));
        pt.push("drops_ttl", C::U64(dr_ttl));
        pt.push("ecn_marks", C::U64(mk));
        pt.push("max_depth_bytes", C::U64(mx));
        pt.push("mean_depth_bytes", C::F64(mean));
        pt.push("pfc_tx_frames", C::U64(pfc_tx));
        pt.push("pfc_rx_frames", C::U64(pfc_rx));
        pt.push("xoff_time_ps", C::U64(xoff_t));
        pt.push("pause_periods", C::U64(periods));
        let [iso, rel, evi, cips, cipr, tmax] = cic;
        pt.push("ci_isolations", C::U64(iso));
        pt.push("ci_releases", C::U64(rel));
        pt.push("ci_evictions", C::U64(evi));
        pt.push("cips_sent", C::U64(cips));
        pt.push("cips_received", C::U64(cipr));
        pt.push("ci_table_max", C::U64(tmax));
        let victims = self.flows.iter().filter(|f| f.paused).count();

        let unfinished = self.flows.len() - self.finished + (self.specs.len() - self.next_spec);
        let summary = serde_json::json!({
            "seed": self.cfg.seed,
            "sim_time_ps": now.0,
            "events": self.events,
            "flows_total": self.flows.len() + (self.specs.len() - self.next_spec),
            "flows_started": self.flows.len(),
            "flows_finished": self.finished,
            "flows_unfinished": unfinished,
            "end_reason": self.end.map(|e| e.as_str()).unwrap_or("stopped"),
            "fct_bins": self.cfg.fct_bins,
            "hosts": self.topo.num_hosts(),
            "switches": self.topo.num_switches(),
            "packets_created": self.pkts_created,
            "packets_dropped": self.pkts_dropped,
            "ecn_marks": self.ecn_marks,
            "data_packets_sent": self.data_sent,
            "data_packets_dropped": self.data_dropped,
            "loss_rate": if self.data_sent > 0 { self.data_dropped as f64 / self.data_sent as f64 } else { 0.0 },
            "flows_with_loss": self.flows.iter().filter(|f| f.drops > 0).count(),
            "pfc_frames": pfc_frames,
            "ci_isolations": iso_total,
            "cips_sent": cip_total,
            "ports_paused": ports_paused,
            "flows_paused": victims,
            "deadlock": self.deadlock,
            "packets_in_flight": self.pkts.live(),
            "invariant_violations": self.violations,
            "queue_samples": self.samples,
            "version": env!("CARGO_PKG_VERSION"),
        });
        let mut qt = Table::default();
        if let Some((_, bin)) = self.cfg.queue_sample {
            let nq = self.cfg.queues;
            let (mut qn, mut qp, mut qq, mut qb, mut qs) = (vec![], vec![], vec![], vec![], vec![]);
            for (row, h) in self.depth_hist.iter().enumerate() {
                let info = &self.topo.ports[row / nq];
                for (b, &n) in h.iter().enumerate() {
                    if n > 0 {
                        qn.push(info.node);
                        qp.push(info.local);
                        qq.push((row % nq) as u8);
                        qb.push(b as u64 * bin);
                        qs.push(n);
                    }
                }
            }
            qt.push("node", C::U32(qn));
            qt.push("port", C::U32(qp));
            qt.push("queue", C::U8(qq));
            qt.push("depth_bytes", C::U64(qb));
            qt.push("samples", C::U64(qs));
        }
        Results {
            flows: ft,
            ports: pt,
            queues: qt,
            tags: self.cfg.tags.clone(),
            nodes: self.topo.nodes.iter().map(|n| n.name.clone()).collect(),
            summary,
        }
    }
}

/// The retransmission timer fields (deadline, queued event time, generation) of a reliable sender.
fn timer_of(s: &mut Sender) -> Option<(&mut Option<SimTime>, &mut Option<SimTime>, &mut u32)> {
    match s {
        Sender::Tcp(t) => Some((&mut t.rto_deadline, &mut t.timer_at, &mut t.timer_gen)),
        Sender::Roce(r) => Some((&mut r.rto_deadline, &mut r.timer_at, &mut r.timer_gen)),
        Sender::Udp(_) | Sender::Done => None,
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod pfc_tests;
#[cfg(test)]
mod dcqcn_tests;
#[cfg(test)]
mod ci_tests;
#[cfg(test)]
mod proptests;
