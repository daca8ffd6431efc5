//! The switch pipeline: the fixed order in which the engine calls the switch mechanisms,
//! what a mechanism sees of the engine (`Ctx`) and what it asks of it (`Effect`).
//! docs/architecture.md describes the order and what each mechanism does at each hook.
//!
//! A packet's life in a switch:
//! ```text
//! rx:    route -> classify -> admit -> aqm -> (enqueue) -> on_enqueue
//! tx:    select (scheduler, skipping queues a mechanism holds) -> on_dequeue -> (transmit)
//! ctrl:  link-local frames (PktKind::Ctrl) go to the mechanism that owns their Frame arm
//! msg:   routed messages (PktKind::Msg) see on_msg at each switch (before the hop out) and
//!        on_host_msg at their host, in the mechanism that owns their Msg arm
//! time:  Ev::Mech(MechTimer) goes to the mechanism that owns its arm
//! end:   each mechanism adds its columns to the ports and flows tables and keys to the summary
//! ```
//! A mechanism owns its state, reads the engine through `Ctx` and changes the engine only by
//! pushing `Effect`s, which the engine applies in the order they were pushed as soon as the
//! hook returns. Dispatch is static: `Mechanisms` has one field per mechanism and calls
//! them in the order written in each stage below.

use crate::engine::EndReason;
use crate::metrics::Table;
use crate::net::port::Ports;
use crate::net::{Ecn, FlowId, Frame, HostId, Msg, PacketArena, PktId, PktKind, PortId, Routes, Topology};
use crate::sim::{Rng, SimTime};
use crate::switch::aqm::{Aqm, AqmParams};
use crate::switch::ci::{self, Ci, CiParams};
use crate::switch::drc::{self, Drc, DrcParams};
use crate::switch::ecn::EcnMarker;
use crate::switch::pfc::{self, Pfc, PfcParams};
use crate::switch::qcn::{self, Qcn, QcnParams};
use crate::switch::sfc::{self, Sfc, SfcParams};
use crate::switch::{DropReason, PktQueue, PortQueues, SwitchBuffer};

/// The per-switch state the engine core owns: the buffer model and the switch's random
/// stream (shared by every mechanism of the switch that draws, in pipeline order).
#[derive(Clone, Debug)]
pub struct SwitchState {
    pub buffer: SwitchBuffer,
    pub rng: Rng,
}

/// What a mechanism may read (and, for packet fields, the switch buffer and its random
/// stream, change) of the engine while one of its hooks runs.
pub struct Ctx<'a> {
    pub now: SimTime,
    pub topo: &'a Topology,
    pub egress: &'a Ports,
    /// Every port's queues, `queues` per port.
    pub port_queues: &'a PortQueues,
    pub pkts: &'a mut PacketArena,
    pub switches: &'a mut [SwitchState],
    /// Traffic classes (queues) per port.
    pub queues: usize,
    pub fx: &'a mut Vec<Effect>,
    /// Invariant violations are recorded here when `--check-invariants` is on.
    pub violations: Option<&'a mut Vec<String>>,
}

impl Ctx<'_> {
    #[inline]
    pub fn push(&mut self, e: Effect) {
        self.fx.push(e);
    }
    #[inline]
    pub fn timer(&mut self, at: SimTime, t: MechTimer) {
        self.fx.push(Effect::Timer { at, timer: t });
    }
    #[inline]
    pub(crate) fn queue_bytes(&self, port: PortId, queue: usize) -> u64 {
        self.port_queues.get(port, queue).bytes
    }
    /// Put `frame` in the place of a control frame not yet sent on `port` that it replaces
    /// (`Frame::replacing`): one asked for earlier in this event, or one waiting in the
    /// port's control queue. False when there is none; the caller sends it.
    pub fn replace_waiting_frame(&mut self, port: PortId, frame: Frame) -> bool {
        for e in self.fx.iter_mut() {
            if let Effect::Frame { port: p, frame: f, .. } = e {
                if let Some(merged) = frame.replacing(*f).filter(|_| *p == port) {
                    *f = merged;
                    return true;
                }
            }
        }
        if !self.egress[port as usize].has_ctrl() {
            return false;
        }
        for id in self.egress.pending_ctrl(port) {
            let p = self.pkts.get_mut(id);
            if let PktKind::Ctrl(f) = p.kind {
                if let Some(merged) = frame.replacing(f) {
                    p.kind = PktKind::Ctrl(merged);
                    return true;
                }
            }
        }
        false
    }
    pub fn violation(&mut self, msg: impl FnOnce() -> String) {
        if let Some(v) = self.violations.as_deref_mut() {
            v.push(msg());
        }
    }
}

/// What a mechanism asks the engine to do.
#[derive(Copy, Clone, Debug)]
pub enum Effect {
    /// Send a link-local control frame out of `port`, ahead of its queues.
    Frame { port: PortId, frame: Frame, flow: FlowId, hash: u32 },
    /// Call the mechanism back at `at`.
    Timer { at: SimTime, timer: MechTimer },
    /// Something that held `port`'s transmitter may have cleared: try to transmit.
    Wake { port: PortId },
    /// The NIC sends `flow`'s packets in traffic class `class` from now on (None: in its own
    /// priority again); on a reused connection, the message now on it (`Flow::continued_by`).
    SteerFlow { flow: FlowId, class: Option<u8> },
    /// Send a routed message from switch `sw` to host `to` about `flow` (whose data went to
    /// `about`), routed by `hash`; `value` is the message's number (`Packet::seq`).
    Msg { sw: u32, msg: Msg, flow: FlowId, to: HostId, about: HostId, hash: u32, value: u64 },
    /// The NIC sends nothing of `flow` before `until` (a later hold may extend it, an
    /// earlier one leaves it).
    HoldFlow { flow: FlowId, until: SimTime },
    /// End the run.
    End(EndReason),
}

/// A mechanism's timer, carried by the engine's single mechanism event kind.
#[derive(Copy, Clone, Debug)]
pub enum MechTimer {
    Pfc(pfc::Timer),
    Ci(ci::Timer),
    Aqm(crate::switch::pi2::Update),
    /// DRC: a limited direction of this port may send again.
    Drc(PortId),
}

/// What the queue's AQM does with an arriving packet; a classifier may take its place.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AqmRule {
    /// The queue's AQM decides (marks, drops or passes).
    Queue,
    /// No AQM action for this packet.
    Skip,
    /// CE-mark it if it is ECN-capable, and nothing else.
    MarkCe,
}

/// An arriving packet as the stages see it.
#[derive(Copy, Clone, Debug)]
pub struct Arrival {
    pub sw: u32,
    pub in_port: PortId,
    pub out: PortId,
    pub pkt: PktId,
    pub size: u64,
    pub hash: u32,
    /// The packet's ECN codepoint as it arrived: what the AQM stage and the classifiers read
    /// of it, beside its size and hash, so that none of them reads the packet's record.
    pub ecn: Ecn,
    /// Traffic class of the packet's priority (802.1Q priority-to-class table).
    pub class: usize,
    /// The egress queue it joins (classify may change it).
    pub queue: usize,
    /// The class it was transmitted in on its last link (what the upstream can pause);
    /// admission may re-account it.
    pub tc: usize,
    /// Set by a classifier that put the packet in another queue than the class its upstream
    /// sent it in, when the upstream can move the flow too: the class PFC should account
    /// the packet to.
    pub account_tc: Option<usize>,
    pub aqm: AqmRule,
    /// Lossless class (set by admission).
    pub lossless: bool,
    /// Admitted by lossless ingress accounting rather than by the buffer model.
    pub ingress_admitted: bool,
    /// Held in PFC headroom.
    pub hdrm: bool,
    /// The class to pause as well if the queue keeps growing (queue-based PFC under CI).
    pub escalate: Option<u8>,
}

impl Arrival {
    /// A packet of traffic class `class` arriving at switch `sw` through `in_port`, routed
    /// to `out`, before any stage has acted (it joins the class's queue, accounted to the
    /// class it was sent in, `tc`).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn new(sw: u32, in_port: PortId, out: PortId, pkt: PktId, size: u64, hash: u32, ecn: Ecn, class: usize, tc: usize) -> Arrival {
        Arrival {
            sw,
            in_port,
            out,
            pkt,
            size,
            hash,
            ecn,
            class,
            queue: class,
            tc,
            account_tc: None,
            aqm: AqmRule::Queue,
            lossless: false,
            ingress_admitted: false,
            hdrm: false,
            escalate: None,
        }
    }
}

/// What the AQM stage decided for an arriving packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AqmAction {
    Pass,
    /// Set CE (the engine counts the mark on the packet's queue).
    Mark,
    Drop(DropReason),
}

/// How admission went.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The switch's buffer model decides.
    Buffer,
    /// Admitted by a lossless mechanism's own accounting.
    Admitted,
    /// Dropped, counted on (port, queue).
    Drop(DropReason, PortId, usize),
}

/// A packet leaving an egress queue.
#[derive(Copy, Clone, Debug)]
pub struct Departure {
    pub sw: u32,
    pub port: PortId,
    pub queue: usize,
    pub pkt: PktId,
    pub size: u64,
    pub flow: FlowId,
    pub in_port: PortId,
    pub tc: usize,
    pub enq: SimTime,
}

/// Each mechanism's parameters (`None`: off), as the scenario builder resolved them.
#[derive(Clone, Debug, Default)]
pub struct MechanismParams {
    pub ecn: Option<EcnMarker>,
    pub pfc: Option<PfcParams>,
    pub ci: Option<CiParams>,
    pub sfc: Option<SfcParams>,
    pub aqm: Option<AqmParams>,
    pub qcn: Option<QcnParams>,
    pub drc: Option<DrcParams>,
}

impl Frame {
    /// Bytes on the wire.
    pub fn wire_bytes(self) -> u32 {
        match self {
            Frame::Pause { .. } | Frame::Pfc { .. } => pfc::PAUSE_FRAME_BYTES,
            Frame::Cip { bytes } => bytes as u32,
            Frame::Drc { .. } => drc::DRC_FRAME_BYTES,
        }
    }

    /// Write the frame's bytes as the mechanism's standard lays them out (no FCS): the
    /// link's sender and receiver are `w.tx` and `w.rx`.
    pub fn encode(self, w: &crate::metrics::wire::WireCtx, out: &mut Vec<u8>) {
        match self {
            Frame::Pause { .. } | Frame::Pfc { .. } => pfc::encode(self, crate::metrics::wire::mac_of(w.topo, w.tx), out),
            Frame::Cip { bytes } => ci::encode(bytes as u32, w, out),
            Frame::Drc { dir, level } => drc::encode(dir, level, w.drc_classes, crate::metrics::wire::mac_of(w.topo, w.tx), out),
        }
    }

    /// The frame to send in place of `pending`, which has not left its port yet, when this
    /// one is asked for on the same port; None when both must go. A PAUSE or PFC frame
    /// carries its class's pause time from its arrival (802.3 Annex 31B, 802.1Qbb clause
    /// 36.1.3): MACs that build them from per-class XOFF state send the latest state, and
    /// queued one behind the other, a run of XOFF/XON requests would delay a later XOFF by
    /// one frame each, past what the derived headroom allows for. An XON replaces the
    /// waiting frame; an XOFF keeps the longer of the two pause times, so a pause is never
    /// cut short (SFC's proxy asks for pauses of different lengths).
    pub fn replacing(self, pending: Frame) -> Option<Frame> {
        match (self, pending) {
            (Frame::Pause { quanta: 0 }, Frame::Pause { .. }) => Some(self),
            (Frame::Pause { quanta: a }, Frame::Pause { quanta: b }) => Some(Frame::Pause { quanta: a.max(b) }),
            (Frame::Pfc { class: a, quanta: 0 }, Frame::Pfc { class: b, .. }) if a == b => Some(self),
            (Frame::Pfc { class: a, quanta: qa }, Frame::Pfc { class: b, quanta: qb }) if a == b => Some(Frame::Pfc { class: a, quanta: qa.max(qb) }),
            _ => None,
        }
    }
}

impl Msg {
    /// Bytes on the wire.
    pub fn wire_bytes(self) -> u32 {
        match self {
            Msg::Sfc { .. } => sfc::SFC_MSG_BYTES,
            Msg::Qcn => qcn::CNM_BYTES,
        }
    }

    /// Write the message's bytes as it crosses the link from `w.tx` to `w.rx` (no FCS).
    pub fn encode(self, p: &crate::net::Packet, w: &crate::metrics::wire::WireCtx, out: &mut Vec<u8>) {
        match self {
            Msg::Sfc { class } => sfc::encode(class, p, w, out),
            Msg::Qcn => qcn::encode(p, w, out),
        }
    }
}

/// The configured switch mechanisms, each `None` when off. A new mechanism adds a field
/// here and its calls in the stages where it acts.
#[derive(Default)]
pub struct Mechanisms {
    /// Congestion Isolation (P802.1Qcz) or its hash baseline.
    pub ci: Option<Ci>,
    /// PFC (802.1Qbb) or 802.3x link pause.
    pub pfc: Option<Pfc>,
    /// ECN marking (RED ramp / step).
    pub ecn: Option<EcnMarker>,
    /// Source Flow Control (P802.1Qdw).
    pub sfc: Option<Sfc>,
    /// `switch.aqm` (validation keeps it apart from `ecn`).
    pub aqm: Option<Aqm>,
    /// Quantized Congestion Notification (802.1Qau): congestion points and reaction points.
    pub qcn: Option<Qcn>,
    /// Directional Rate Control (seed 001).
    pub drc: Option<Drc>,
    /// Whether any configured mechanism acts at each `Hook`: one test per stage and packet
    /// when none does (most runs configure one mechanism or none).
    hooks: [bool; 4],
}

/// The packet stages a configured mechanism may not act at (`Mechanisms::acts_at`): the
/// engine skips them, and the context it would build for them, when none does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Hook {
    Classify,
    Admit,
    Enqueue,
    Dequeue,
}

impl Mechanisms {
    /// `arrive_delay[p]`: propagation plus static switch latency from port p to its peer.
    pub fn new(p: MechanismParams, topo: &Topology, routes: &Routes, arrive_delay: &[SimTime], mtu: u32, queues: usize) -> Mechanisms {
        // the engine takes a packet's queue from these without a bounds check
        // (`PortQueues::get`); a scenario's validation refuses them first, naming the key,
        // and a configuration built in code stops here
        let named = p.ci.iter().flat_map(|c| [("ci.queue", c.queue), ("ci.congested_queue", c.congested_queue)]);
        let named = named.chain(p.aqm.iter().flat_map(|a| match a {
            AqmParams::DualPi2(d) => vec![("dualpi2.l_queue", d.l_queue), ("dualpi2.c_queue", d.c_queue)],
            AqmParams::DualQ2015(d) => vec![("dualq2015.l_queue", d.l_queue), ("dualq2015.c_queue", d.c_queue)],
            _ => vec![],
        }));
        for (what, q) in named {
            assert!(q < queues, "{what} = {q}: the ports have {queues} queues");
        }
        let mut m = Mechanisms {
            ci: p.ci.map(|c| Ci::new(c, topo, arrive_delay, mtu)),
            pfc: p.pfc.map(|c| Pfc::new(c, topo.ports.len(), queues, topo.switches.len())),
            ecn: p.ecn,
            sfc: p.sfc.map(|c| Sfc::new(c, topo.ports.len(), queues)),
            aqm: p.aqm.map(|a| Aqm::new(a, topo.ports.len(), queues, topo.switches.len())),
            qcn: p.qcn.map(|q| Qcn::new(q, topo.ports.len(), queues)),
            drc: p.drc.map(|d| Drc::new(d, topo, routes, queues)),
            hooks: [false; 4],
        };
        let (ci, pfc, sfc, aqm, qcn, drc) = (m.ci.is_some(), m.pfc.is_some(), m.sfc.is_some(), m.aqm.is_some(), m.qcn.is_some(), m.drc.is_some());
        m.hooks = [ci || aqm, pfc, pfc || ci || sfc || qcn || drc, ci || pfc || aqm || drc];
        m
    }

    /// Whether some configured mechanism acts at `hook` (else the stage does nothing: the
    /// buffer model alone admits).
    #[inline(always)]
    pub fn acts_at(&self, hook: Hook) -> bool {
        self.hooks[hook as usize]
    }

    /// Memory a switch with these ports keeps beside its shared pool for the mechanisms'
    /// own admissions (PFC headroom).
    pub fn reserved_beside(&self, ports: &[PortId]) -> u64 {
        self.pfc.as_ref().map_or(0, |p| p.headroom_reserve(ports))
    }

    /// Some mechanism may hold a queue (pause or ordering): the transmitter must ask.
    #[inline]
    pub fn can_hold(&self) -> bool {
        self.pfc.is_some() || self.ci.as_ref().is_some_and(|c| c.isolates()) || self.drc.is_some()
    }

    /// classify: which egress queue (CI).
    #[inline]
    pub fn classify(&mut self, a: &mut Arrival, cx: &mut Ctx) {
        if let Some(ci) = &mut self.ci {
            ci.classify(a, cx);
        }
        if let Some(q) = &self.aqm {
            q.classify(a);
        }
    }

    /// admit: lossless accounting (PFC) before the buffer model.
    #[inline]
    pub fn admit(&mut self, a: &mut Arrival, cx: &mut Ctx) -> Admission {
        match &mut self.pfc {
            Some(p) => p.admit(a, cx),
            None => Admission::Buffer,
        }
    }

    /// aqm: mark or drop on arrival, before the packet joins its queue (a classifier's
    /// rule first, else the queue's marker). The context is built in the branch that uses
    /// it: on every switch hop, with the step marker inlined, the compiler then keeps only
    /// the fields the marker reads (a context built before the match cost the k = 8 bench
    /// 1.8% of its instructions).
    #[inline(always)]
    pub fn aqm<'a>(&mut self, a: &Arrival, cx: impl FnOnce() -> Ctx<'a>) -> AqmAction {
        let ect = a.ecn.is_ect();
        match a.aqm {
            AqmRule::Skip => AqmAction::Pass,
            AqmRule::MarkCe => match ect {
                true => AqmAction::Mark,
                false => AqmAction::Pass,
            },
            AqmRule::Queue => match (&self.ecn, &mut self.aqm) {
                (Some(e), _) => e.on_arrival(a, ect, &mut cx()),
                (None, Some(q)) => q.on_arrival(a, ect, &mut cx()),
                (None, None) => AqmAction::Pass,
            },
        }
    }

    /// on_enqueue: PFC XOFF, then CI signalling, then SFC (cache, trigger), then QCN's
    /// congestion point.
    #[inline]
    pub fn on_enqueue(&mut self, a: &Arrival, cx: &mut Ctx) {
        if let Some(p) = &mut self.pfc {
            p.on_enqueue(a, cx);
        }
        if let Some(ci) = &mut self.ci {
            ci.on_enqueue(a, cx);
        }
        if let Some(s) = &mut self.sfc {
            s.on_enqueue(a, cx);
        }
        if let Some(q) = &mut self.qcn {
            q.on_enqueue(a, cx);
        }
        if let Some(d) = &mut self.drc {
            d.on_enqueue(a, cx);
        }
    }

    /// A routed message is about to leave switch `sw` through `out`: whether a mechanism
    /// consumed it instead.
    pub fn on_msg(&mut self, msg: Msg, sw: u32, out: PortId, pkt: PktId, cx: &mut Ctx) -> bool {
        match msg {
            Msg::Sfc { class } => {
                // a running XOFF toward the NIC already pauses the class, and for longer: a
                // proxy PAUSE with fewer quanta would replace (shorten) it
                let xoff = self.pfc.as_ref().is_some_and(|p| p.xoff_sent(out, class as usize));
                self.sfc.as_mut().is_some_and(|s| s.on_msg(class, out, pkt, sw, xoff, cx))
            }
            Msg::Qcn => false,
        }
    }

    /// A routed message reached its host through `port`.
    pub fn on_host_msg(&mut self, msg: Msg, port: PortId, pkt: PktId, cx: &mut Ctx) {
        match msg {
            Msg::Sfc { class } => {
                if let Some(s) = &mut self.sfc {
                    s.on_host_msg(class, port, pkt, cx);
                }
            }
            Msg::Qcn => {
                if let Some(q) = &mut self.qcn {
                    q.on_host_msg(port, pkt, cx);
                }
            }
        }
    }

    /// Whether a mechanism limits the rate of flows at their NIC (and wants `on_host_send`).
    #[inline]
    pub fn limits_rates(&self) -> bool {
        self.qcn.is_some()
    }

    /// A data frame of `wire` bytes of `flow` left its NIC at `now`: until when a rate
    /// limiter (QCN's reaction point) holds the flow, if one does.
    #[inline]
    pub fn on_host_send(&mut self, flow: FlowId, wire: u32, now: SimTime) -> Option<SimTime> {
        self.qcn.as_mut().and_then(|q| q.on_host_send(flow, wire, now))
    }

    /// Whether a received pause holds class `class` of `port`'s transmitter (switch or NIC).
    #[inline]
    pub fn gated(&self, port: PortId, class: usize, now: SimTime) -> bool {
        self.pfc.as_ref().is_some_and(|p| p.holds(port, class, now))
    }

    /// hold: whether queue `queue` of switch port `port` may not transmit now (a received
    /// pause, CI's order, or DRC with no frame of the queue allowed toward its direction).
    #[inline]
    pub fn holds(&self, port: PortId, queue: usize, queues: &[PktQueue], pkts: &PacketArena, now: SimTime) -> bool {
        self.gated(port, queue, now)
            || self.ci.as_ref().is_some_and(|c| c.holds(port, queue, queues, pkts))
            || self.drc.as_ref().is_some_and(|d| d.pick(port, queue, &queues[queue], pkts, now).is_none())
    }

    /// Which packet of the queue the scheduler chose leaves: the head, or with DRC the first
    /// one whose direction may send (None: none may).
    #[inline]
    pub fn pick(&self, port: PortId, queue: usize, q: &PktQueue, pkts: &PacketArena, now: SimTime) -> Option<usize> {
        match &self.drc {
            Some(d) => d.pick(port, queue, q, pkts, now),
            None => (!q.is_empty()).then_some(0),
        }
    }

    /// Whether a NIC may start a frame of a flow to `dst` (hash `hash`, class `class`) on
    /// `port` now (DRC's direction toward it is not stopped or spaced).
    #[inline]
    pub fn nic_may_send(&self, port: PortId, dst: HostId, hash: u32, class: usize, now: SimTime) -> bool {
        self.drc.as_ref().is_none_or(|d| d.may_send(port, dst, hash, class, now))
    }

    /// Whether a mechanism may send a queue's packets out of order (DRC): the transmitter
    /// asks `pick` which one leaves.
    #[inline]
    pub fn reorders(&self) -> bool {
        self.drc.is_some()
    }

    /// Whether a mechanism wants `on_transmit` (DRC's spacing per direction).
    #[inline]
    pub fn watches_tx(&self) -> bool {
        self.drc.is_some()
    }

    /// A packet of class `class` starts transmission on `port` (switch or NIC).
    pub fn on_transmit(&mut self, port: PortId, pkt: PktId, class: usize, cx: &mut Ctx) {
        if let Some(d) = &mut self.drc {
            d.on_transmit(port, pkt, class, cx);
        }
    }

    /// on_dequeue: CI bookkeeping, then PFC (victims, XON), then the AQM (RED's idle time).
    #[inline]
    pub fn on_dequeue(&mut self, d: &Departure, cx: &mut Ctx) {
        if let Some(ci) = &mut self.ci {
            ci.on_dequeue(d, cx);
        }
        if let Some(p) = &mut self.pfc {
            p.on_dequeue(d, cx);
        }
        if let Some(a) = &mut self.aqm {
            a.on_dequeue(d, cx);
        }
        if let Some(r) = &mut self.drc {
            r.on_dequeue(d, cx);
        }
    }

    /// A link-local frame arrived through `port` (of a switch or a host).
    pub fn on_frame(&mut self, frame: Frame, port: PortId, flow: FlowId, hash: u32, cx: &mut Ctx) {
        match frame {
            Frame::Pause { .. } | Frame::Pfc { .. } => {
                if let Some(p) = &mut self.pfc {
                    p.on_frame(frame, port, cx);
                }
            }
            Frame::Cip { .. } => {
                if let Some(ci) = &mut self.ci {
                    ci.on_cip(port, flow, hash, cx);
                }
            }
            Frame::Drc { dir, level } => {
                if let Some(d) = &mut self.drc {
                    d.on_frame(port, dir, level, cx);
                }
            }
        }
    }

    pub fn on_timer(&mut self, t: MechTimer, cx: &mut Ctx) {
        match t {
            MechTimer::Pfc(t) => {
                if let Some(p) = &mut self.pfc {
                    p.on_timer(t, cx);
                }
            }
            MechTimer::Ci(t) => {
                if let Some(ci) = &mut self.ci {
                    ci.on_timer(t, cx);
                }
            }
            MechTimer::Aqm(t) => {
                if let Some(a) = &mut self.aqm {
                    a.on_timer(t, cx);
                }
            }
            MechTimer::Drc(port) => {
                if let Some(d) = &mut self.drc {
                    d.on_timer(port, cx);
                }
            }
        }
    }

    /// Add the mechanisms' columns to the ports table (one row per port and queue, in port
    /// order) and to the flows table (`flows` rows), and their keys to the summary.
    pub fn report(&mut self, r: &mut Report) {
        if let Some(p) = &self.pfc {
            p.report(r);
        }
        if let Some(ci) = &self.ci {
            ci.report(r);
        }
        if let Some(s) = &self.sfc {
            s.report(r);
        }
        if let Some(q) = &self.aqm {
            q.report(r);
        }
        if let Some(q) = &self.qcn {
            q.report(r);
        }
        if let Some(d) = &self.drc {
            d.report(r);
        }
    }
}

/// What the engine hands the mechanisms to report into.
pub struct Report<'a> {
    pub now: SimTime,
    pub topo: &'a Topology,
    pub queues: usize,
    pub flows: usize,
    pub ports_table: &'a mut Table,
    pub flows_table: &'a mut Table,
    pub summary: &'a mut serde_json::Map<String, serde_json::Value>,
    /// The summary keys a comparison table shows, in order (summary "metrics").
    pub metrics: Vec<serde_json::Value>,
    /// What the mechanisms say about the switch queues, for plots (summary "queues"):
    /// a role per queue index and depth thresholds.
    pub queue_notes: Vec<serde_json::Value>,
}

/// Which direction of a metric is an improvement (comparison tables colour by it).
#[derive(Copy, Clone, Debug)]
pub enum Better {
    Lower,
    Higher,
    Neither,
}

impl Report<'_> {
    /// Declare summary key `key` a metric of the comparison table: its row label, the
    /// factor from the summary's unit to the label's, the number format ("int", "f3") and
    /// which way is better.
    pub fn metric(&mut self, key: &str, label: &str, scale: f64, fmt: &str, better: Better) {
        let better = match better {
            Better::Lower => "lower",
            Better::Higher => "higher",
            Better::Neither => "neither",
        };
        self.metrics.push(serde_json::json!({ "key": key, "label": label, "scale": scale, "format": fmt, "better": better }));
    }

    /// Name the role of switch queue `queue` (e.g. CI's "congested").
    pub fn queue_role(&mut self, queue: usize, role: &str) {
        self.queue_notes.push(serde_json::json!({ "queue": queue, "role": role }));
    }

    /// A depth threshold of switch queue `queue` (every queue when `None`) worth drawing on
    /// a depth plot, e.g. CI's High or PFC's XOFF.
    pub fn queue_threshold(&mut self, queue: Option<usize>, label: &str, bytes: u64) {
        self.queue_notes.push(serde_json::json!({ "queue": queue, "threshold": label, "bytes": bytes }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Packet;
    use crate::switch::bench::Bench;

    /// DualPI2 on `queues` queues per port with its L queue at `l_queue`.
    fn dualpi2_on(queues: usize, l_queue: usize) -> Mechanisms {
        use crate::switch::dualpi2::{DualPi2Params, DEFAULT_K, DEFAULT_STEP};
        use crate::switch::pi2::{Pi2Params, DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_TARGET, DEFAULT_TUPDATE};
        let b = Bench::with_queues(queues);
        let routes = Routes::build(&b.topo).unwrap();
        let pi2 = Pi2Params { target: DEFAULT_TARGET, tupdate: DEFAULT_TUPDATE, alpha: DEFAULT_ALPHA, beta: DEFAULT_BETA };
        let d = DualPi2Params { pi2, k: DEFAULT_K, step: DEFAULT_STEP, l_queue, c_queue: 0, floor: 3000 };
        let p = MechanismParams { aqm: Some(AqmParams::DualPi2(d)), ..Default::default() };
        Mechanisms::new(p, &b.topo, &routes, &vec![SimTime::ZERO; b.topo.ports.len()], 1500, queues)
    }

    /// A queue a mechanism's parameters name must be one the ports have: the engine takes a
    /// packet's queue from it without a bounds check. Within them, it builds.
    #[test]
    #[should_panic(expected = "dualpi2.l_queue = 2: the ports have 2 queues")]
    fn a_queue_the_ports_do_not_have_stops_the_build() {
        assert!(dualpi2_on(2, 1).aqm.is_some());
        dualpi2_on(2, 2);
    }

    /// A PFC request replaces the one for its class that has not left yet, whether it is
    /// still an effect of this event or waits in the port's control queue; other classes,
    /// other ports and other frame kinds are left alone.
    #[test]
    fn a_pause_request_replaces_the_waiting_one_of_its_class() {
        let mut b = Bench::new();
        let (p, other) = (b.port("left", "h0"), b.port("left", "h1"));
        let xoff = |class| Frame::Pfc { class, quanta: 65_535 };
        let xon = |class| Frame::Pfc { class, quanta: 0 };
        let cip = b.pkts.alloc(Packet { kind: PktKind::Ctrl(Frame::Cip { bytes: 64 }), ..Packet::blank() });
        let waiting = b.pkts.alloc(Packet { kind: PktKind::Ctrl(xoff(3)), ..Packet::blank() });
        b.egress.push_ctrl(p, cip);
        b.egress.push_ctrl(p, waiting);
        let mut cx = b.cx(SimTime::ZERO);
        assert!(!cx.replace_waiting_frame(p, xon(2)), "another class");
        assert!(!cx.replace_waiting_frame(other, xon(3)), "another port");
        assert!(!cx.replace_waiting_frame(p, Frame::Pause { quanta: 0 }), "802.3x PAUSE does not replace a PFC frame");
        // a shorter pause does not cut the waiting one short; an XON ends it
        assert!(cx.replace_waiting_frame(p, Frame::Pfc { class: 3, quanta: 100 }));
        assert_eq!(cx.pkts.get(waiting).kind, PktKind::Ctrl(xoff(3)));
        assert!(cx.replace_waiting_frame(p, xon(3)));
        assert!(cx.replace_waiting_frame(p, Frame::Pfc { class: 3, quanta: 100 }));
        cx.push(Effect::Frame { port: other, frame: xoff(1), flow: FlowId::MAX, hash: 0 });
        assert!(cx.replace_waiting_frame(other, xon(1)));
        assert!(matches!(b.fx[..], [Effect::Frame { frame: Frame::Pfc { class: 1, quanta: 0 }, .. }]));
        assert_eq!(b.pkts.get(waiting).kind, PktKind::Ctrl(Frame::Pfc { class: 3, quanta: 100 }));
        assert_eq!(b.pkts.get(cip).kind, PktKind::Ctrl(Frame::Cip { bytes: 64 }));
        assert_eq!((b.egress.pop_ctrl(p), b.egress.pop_ctrl(p), b.egress.pop_ctrl(p)), (Some(cip), Some(waiting), None));
    }
}
