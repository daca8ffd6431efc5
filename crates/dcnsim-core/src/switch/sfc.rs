//! Source Flow Control (IEEE P802.1Qdw), as simulated in seed 004 (Blendin et al., "Source
//! Flow Control simulation results", IEEE 802.1 interim, May 2022) and described in Le et
//! al., "SFC: Near-Source Congestion Signaling and Flow Control" (arXiv 2305.00538).
//!
//! * Trigger (seed: "use local switch telemetry to trigger back-to-sender signaling"): a data
//!   packet that leaves its egress queue at or above the trigger threshold (seed: 100 KB,
//!   2/3 BDP) once it has joined makes the switch send an SFC message back to the packet's
//!   source. The message carries the flow, the destination it was sent to, the traffic class
//!   and a pause duration that drains the queue from its depth to the target threshold
//!   (seed: 50 KB, 1/3 BDP) at the port's rate: (depth - target) x 8 / rate.
//! * The message is an L3 packet (seed: "edge-to-edge FC signaling using L3 message") of
//!   64 B on the wire (no format is published; a minimum Ethernet frame is assumed), routed
//!   toward the source like the flow's ACKs and forwarded ahead of the data queues and never
//!   paused (reading: signalling travels at the highest priority, as the paper's
//!   back-to-sender packets do).
//! * Suppression: at most one message per (congested port, flow) per suppression period
//!   (seed: 6 us, RTT/2); the others are counted as suppressed.
//! * Destination cache at the ToR (seed: "Destination cache: ToR"): the source's ToR, the
//!   last switch a message crosses, remembers per (destination, class) until when that
//!   destination is paused, and answers later data packets from its hosts to it with a
//!   message carrying the remaining pause at once (near-source signalling, one hop away);
//!   the data packet itself goes on.
//! * Reaction, `mode = "native"`: the NIC holds only the named flow until the pause ends
//!   (a later message extends the hold, never shortens it); the flow's congestion control
//!   keeps running. `mode = "proxy"` (seed: "SFC proxy converts SFC message to PFC frame at
//!   sender ToR"): the source's ToR sends the NIC an 802.1Qbb PFC frame for the class with
//!   quanta covering the duration, but only when the pause would end later than the one it
//!   already sent (extend, never shorten); the NIC pauses the whole class, so the seed's
//!   "small chance for head-of-line blocking at sender NIC" remains. NICs honour PFC frames
//!   whether or not the fabric runs PFC (the builder gives them the receive side).
//!
//! Readings the sources leave open: depth includes the arriving packet; ACKs and other
//! non-data packets never trigger; a pause longer than 65535 quanta (335 us at 100 Gbps) is
//! clamped by the proxy and renewed by later messages while the queue stays deep.
//!
//! On an input-buffered switch (`switch.architecture`) a packet triggers as it arrives at
//! its input (`on_held`; the destination cache answers it there too), judged by `depth`:
//! the queue it joins there (`"queue"`: its VOQ or input FIFO, the per-(input, output)
//! state VOQ ASICs expose; the pause still drains it at the output's rate, the most it can
//! drain at), or everything bound for its (output, class) wherever it waits (`"backlog"`,
//! `PortQueues::backlog`: what one output queue would hold). On an output-queued switch
//! both are its egress queue.

use super::mechanism::{Caps, Fabric, MsgAt, Never, SwitchMechanism};
use super::pipeline::{Arrival, Better, Ctx, Effect, Report};
use super::{Frame, Mechanisms, Msg};
use crate::metrics::{ColumnData as C, Outputs};
use crate::net::PerFlow;
use crate::net::{FlowId, HostId, PktId, PktKind, PortId};
use crate::sim::{ser_time, SimTime};
use crate::switch::pfc::{PauseFrame, PfcParams};
use rustc_hash::FxHashMap;

/// The SFC message's UDP port (ours: none is assigned; one from the dynamic range) and
/// the priority it travels at.
pub const SFC_UDP_PORT: u16 = 0xFFC0;
pub const SFC_PRIORITY: u8 = 7;
/// Version of our SFC message layout.
pub const SFC_VERSION: u8 = 1;

/// The bytes of an SFC message (ours, as no format is published: an IPv4/UDP packet from
/// the congested switch to the flow's source, DSCP CS6, whose 14-octet payload is the
/// version, the traffic class, the pause in ns (saturated), and the paused flow's
/// destination address and ports), routed hop by hop, no FCS. The packet's `payload`
/// names the switch that sent it, `seq` the pause in ps.
pub fn encode(class: u8, p: &crate::net::Packet, w: &crate::switch::mechanism::WireCtx, out: &mut Vec<u8>) {
    use crate::net::wire;
    let start = out.len();
    wire::eth(out, wire::mac_of(w.topo, w.rx), wire::mac_of(w.topo, w.tx), Some(SFC_PRIORITY), wire::ETHERTYPE_IPV4);
    let from = w.topo.switches[p.payload as usize];
    let ip = wire::Ip { src: wire::ip_of(w.topo, from), dst: wire::host_ip(w.topo, p.dst), dscp: 48, ecn: 0, ttl: wire::ttl(p.hops) };
    let mut pdu = vec![SFC_VERSION, class];
    pdu.extend_from_slice(&((p.seq / 1000).min(u32::MAX as u64) as u32).to_be_bytes());
    pdu.extend_from_slice(&wire::host_ip(w.topo, p.src));
    let ports = w.flow.map_or((0, 0), |f| f.ports());
    pdu.extend_from_slice(&ports.0.to_be_bytes());
    pdu.extend_from_slice(&ports.1.to_be_bytes());
    wire::udp(out, &ip, (SFC_UDP_PORT, SFC_UDP_PORT), &pdu, 0, true);
    wire::pad(out, start);
}

/// Wire size of an SFC message (a minimum Ethernet frame; no format is published).
pub const SFC_MSG_BYTES: u32 = 64;

/// Defaults of `switch.sfc` (seed 004's benefits runs).
pub const DEFAULT_TRIGGER: u64 = 100_000;
pub const DEFAULT_TARGET: u64 = 50_000;
pub const DEFAULT_SUPPRESSION: SimTime = SimTime::from_us(6);

/// How the source reacts to an SFC message.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SfcMode {
    /// The NIC pauses the named flow (queue pair) only.
    Native,
    /// The source's ToR converts the message into a PFC PAUSE for the class.
    Proxy,
}

/// What a packet's depth is on an input-buffered switch (module doc).
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, Copy, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SfcDepth {
    /// The queue the packet joins: its VOQ (or input FIFO) there.
    #[default]
    Queue,
    /// Everything bound for its (output, class), at every input and at the output.
    Backlog,
}

/// `switch.sfc`, resolved.
#[derive(Clone, Debug)]
pub struct SfcParams {
    pub depth: SfcDepth,
    pub trigger: u64,
    pub target: u64,
    pub suppression: SimTime,
    /// Destination cache at the ToR.
    pub cache: bool,
    pub mode: SfcMode,
}

impl SfcParams {
    /// The pause that drains a queue of `depth` bytes to the target at `rate_bps`.
    pub fn pause_for(&self, depth: u64, rate_bps: u64) -> SimTime {
        ser_time(depth.saturating_sub(self.target), rate_bps)
    }
}

/// Per-flow pause bookkeeping: the end of the flow's current pause and the total time it
/// has been paused by SFC (the union of its pause intervals).
#[derive(Copy, Clone, Debug, Default)]
struct FlowPause {
    until: SimTime,
    total: u64,
}

/// Source Flow Control on every switch (and its reaction point at the NICs): the module doc
/// describes the model.
#[derive(Clone, Debug)]
pub struct Sfc {
    pub p: SfcParams,
    queues: usize,
    /// When the last message went out per (port, flow).
    last_sent: FxHashMap<(PortId, FlowId), SimTime>,
    /// Destination cache per (ToR switch, destination host, class): paused until.
    cache: FxHashMap<(u32, HostId, u8), SimTime>,
    /// Sizes past which the tables drop their expired entries.
    prune_sent_at: usize,
    prune_cache_at: usize,
    /// Proxy: the end of the pause last sent per (host-facing port, class).
    proxy_until: Vec<SimTime>,
    /// Per (port, class) row: messages sent (by the congested port, or for a cache hit by
    /// the host-facing port the data came in through), suppressed, received by a NIC,
    /// cache hits (on the ingress port) and proxy PAUSE frames sent (a pause carried by a
    /// frame already waiting at the port is not one).
    sent: Vec<u64>,
    suppressed: Vec<u64>,
    received: Vec<u64>,
    cache_hits: Vec<u64>,
    proxy_pauses: Vec<u64>,
    flows: PerFlow<FlowPause>,
    /// Paused time of the flows `forget_flows` forgot.
    paused_forgotten: u64,
}

/// An SFC message (P802.1Qdw): pause the packet's `flow` (sent to destination `src`) in
/// traffic class `class` for `seq` picoseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SfcMsg {
    pub class: u8,
}

const PRUNE_MIN: usize = 4096;

impl Sfc {
    pub fn new(p: SfcParams, ports: usize, queues: usize) -> Sfc {
        let rows = ports * queues;
        Sfc {
            p,
            queues,
            last_sent: FxHashMap::default(),
            cache: FxHashMap::default(),
            prune_sent_at: PRUNE_MIN,
            prune_cache_at: PRUNE_MIN,
            proxy_until: vec![SimTime::ZERO; rows],
            sent: vec![0; rows],
            suppressed: vec![0; rows],
            received: vec![0; rows],
            cache_hits: vec![0; rows],
            proxy_pauses: vec![0; rows],
            flows: PerFlow::default(),
            paused_forgotten: 0,
        }
    }

    fn row(&self, port: PortId, class: u8) -> usize {
        port as usize * self.queues + class as usize
    }

    /// Send (unless suppressed) an SFC message from switch `sw` on behalf of its `port` to
    /// host `to`, naming `flow` to destination `about` in `class`, pausing for `pause`.
    #[allow(clippy::too_many_arguments)]
    fn signal(&mut self, sw: u32, port: PortId, flow: FlowId, to: HostId, about: HostId, class: u8, hash: u32, pause: SimTime, cx: &mut Ctx) {
        let now = cx.now;
        let row = self.row(port, class);
        if let Some(&last) = self.last_sent.get(&(port, flow)) {
            if now < last + self.p.suppression {
                self.suppressed[row] += 1;
                return;
            }
        }
        if self.last_sent.len() >= self.prune_sent_at {
            let keep = self.p.suppression;
            self.last_sent.retain(|_, t| now < *t + keep);
            self.prune_sent_at = (2 * self.last_sent.len()).max(PRUNE_MIN);
        }
        self.last_sent.insert((port, flow), now);
        self.sent[row] += 1;
        cx.push(Effect::Msg { sw, msg: Msg::Sfc(SfcMsg { class }), flow, to, about, hash, value: pause.0 });
    }

    /// A packet arrived at a queue that then holds `depth` bytes (its egress queue, or at an
    /// input-buffered switch what `depth` names): answer a data packet one of this ToR's
    /// hosts sent from the destination cache, then trigger on the depth.
    fn arrived(&mut self, a: &Arrival, depth: u64, cx: &mut Ctx) {
        let p = cx.pkts.get(a.pkt);
        if p.kind != PktKind::Data {
            return;
        }
        let (flow, src, dst, hash) = (p.flow, p.src, p.dst, p.hash);
        let class = a.class as u8;
        let now = cx.now;
        if self.p.cache && !self.cache.is_empty() && cx.peer_is_host(a.in_port) {
            if let Some(&until) = self.cache.get(&(a.sw, dst, class)) {
                if until > now {
                    let row = self.row(a.in_port, class);
                    self.cache_hits[row] += 1;
                    self.signal(a.sw, a.in_port, flow, src, dst, class, hash, until - now, cx);
                }
            }
        }
        if depth >= self.p.trigger {
            let pause = self.p.pause_for(depth, cx.topo.ports[a.out as usize].rate_bps);
            self.signal(a.sw, a.out, flow, src, dst, class, hash, pause, cx);
        }
    }

    /// Add [from, until) to the flow's paused time (the union of its pauses).
    fn flow_paused(&mut self, flow: FlowId, from: SimTime, until: SimTime) {
        let e = self.flows.entry(flow);
        if until > e.until {
            e.total += (until - from.max(e.until)).0;
            e.until = until;
        }
    }
}

impl SwitchMechanism for Sfc {
    type Params = SfcParams;
    type Frame = Never;
    type Msg = SfcMsg;
    type Timer = Never;
    const KEY: &'static str = "sfc";
    const CAPS: Caps = Caps::ENQUEUE;
    /// SFC's columns and summary keys (`Sfc::report`, `flow_columns`).
    const OUTPUTS: Outputs = Outputs {
        flows: &[(&["sfc_paused_ps"], "With SFC: the time the flow was paused by SFC (the union of its pauses)")],
        ports: &[(
            &["sfc_sent", "sfc_suppressed", "sfc_received", "sfc_cache_hits", "sfc_proxy_pauses"],
            "With Source Flow Control, on the row of the class paused: messages sent (congested port, or the ToR's host port \
             for a cache hit) and suppressed, received by the NIC (native), destination-cache hits (the ToR's host port) and proxy \
             PAUSE frames sent to the NIC (a pause given while a PAUSE frame waits at the port travels in that frame, as PFC's do: \
             a NIC's `pfc_rx_frames` are its ToR port's `pfc_tx_frames` plus `sfc_proxy_pauses`)",
        )],
        summary: &[
            (&["sfc_sent", "sfc_suppressed", "sfc_received", "sfc_cache_hits", "sfc_proxy_pauses"], "With SFC: the ports' columns of the same names, summed"),
            (&["sfc_paused_ps"], "With SFC: the flows' `sfc_paused_ps`, summed"),
        ],
    };

    fn build(p: SfcParams, f: &Fabric) -> Sfc {
        Sfc::new(p, f.topo.ports.len(), f.queues)
    }

    /// A trigger of 4 to 35 MTUs over a target below it, a suppression of 0 to 15 us, with
    /// or without the ToR's destination cache, native or by proxy PAUSE (then without the
    /// case's PFC, which may pause whole links: the proxy pauses one class).
    #[cfg(test)]
    fn arbitrary(draw: u64, _: u8, mtu: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        use crate::switch::mechanism::{bits, Arbitrary};
        let m = mtu as u64;
        let trigger = m * (4 + bits(draw, 0, 5));
        let target = trigger * (1 + bits(draw, 5, 3)) / 10;
        let proxy = bits(draw, 13, 1) == 1;
        let line = format!(
            "sfc = {{ trigger = \"{trigger}B\", target = \"{target}B\", suppression = \"{}us\", cache = \"{}\", mode = \"{}\" }}",
            bits(draw, 8, 4),
            ["tor", "none"][bits(draw, 12, 1) as usize],
            if proxy { "proxy" } else { "native" }
        );
        Some(Arbitrary { line, without: if proxy { &["pfc"] } else { &[] } })
    }
    /// on_held: a packet arrived at an input-buffered switch's input: it counts in its
    /// queue there, and is answered from the cache and triggers as on arrival at an egress
    /// queue.
    fn on_held(&mut self, a: &Arrival, cx: &mut Ctx) {
        let depth = match self.p.depth {
            SfcDepth::Queue => cx.port_queues.held_between(a.in_port, a.out, a.queue),
            SfcDepth::Backlog => cx.backlog(a.out, a.queue),
        };
        self.arrived(a, depth, cx);
    }

    /// on_enqueue: a packet joined its egress queue; `arrived`, unless it crossed from an
    /// input-buffered switch's input (`on_held` judged it).
    fn on_enqueue(&mut self, a: &Arrival, cx: &mut Ctx) {
        if !a.held {
            self.arrived(a, cx.queue_bytes(a.out, a.queue), cx);
        }
    }

    /// A message leaves switch `sw` through `out` (the switch that made it included): the
    /// source's ToR, whose `out` leads to a host, fills its destination cache and in proxy
    /// mode turns the message into a PAUSE. Returns whether the message was consumed.
    /// A pause the ToR's own PFC has running toward that NIC for the class (`pausing`) is
    /// longer: the proxy must not shorten it.
    fn on_msg(&mut self, m: SfcMsg, at: MsgAt, others: &Mechanisms, cx: &mut Ctx) -> bool {
        let (class, out, pkt, sw) = (m.class, at.out, at.pkt, at.sw);
        if !cx.peer_is_host(out) {
            return false;
        }
        let p = cx.pkts.get(pkt);
        let (flow, about, pause) = (p.flow, p.src, SimTime(p.seq));
        let now = cx.now;
        let until = now + pause;
        if self.p.cache {
            if self.cache.len() >= self.prune_cache_at {
                self.cache.retain(|_, t| *t > now);
                self.prune_cache_at = (2 * self.cache.len()).max(PRUNE_MIN);
            }
            let e = self.cache.entry((sw, about, class)).or_insert(until);
            *e = (*e).max(until);
        }
        if self.p.mode == SfcMode::Native {
            return false;
        }
        self.flow_paused(flow, now, until);
        let row = self.row(out, class);
        if until > self.proxy_until[row] && !others.pausing(out, class as usize) {
            let rate = cx.topo.ports[out as usize].rate_bps;
            let quanta = pause_quanta(pause, rate);
            self.proxy_until[row] = now + PfcParams::pause_time(quanta, rate);
            let frame = Frame::Pfc(PauseFrame::Pfc { class, quanta });
            // a PAUSE frame still waiting at the port carries this pause instead: counted
            // as PFC counts its own, frames put on the wire, so that a NIC's received PAUSE
            // frames are its ToR port's pfc_tx_frames plus these
            if !cx.replace_waiting_frame(out, frame) {
                self.proxy_pauses[row] += 1;
                cx.push(Effect::Frame { port: out, frame, flow: FlowId::MAX, hash: 0 });
            }
        }
        true
    }

    /// A message reached the NIC behind `port` (native mode): hold the flow.
    fn on_host_msg(&mut self, m: SfcMsg, port: PortId, pkt: PktId, cx: &mut Ctx) {
        let class = m.class;
        let p = cx.pkts.get(pkt);
        let (flow, until) = (p.flow, cx.now + SimTime(p.seq));
        let row = self.row(port, class);
        self.received[row] += 1;
        self.flow_paused(flow, cx.now, until);
        cx.push(Effect::HoldFlow { flow, until });
    }

    fn flow_columns(&self, ids: &[usize], t: &mut crate::metrics::Table) {
        t.push("sfc_paused_ps", C::U64(self.flows.column(ids, |e| e.total)));
    }
    fn forget_flows(&mut self, ids: &[usize], below: usize) {
        self.paused_forgotten += self.flows.forget(ids, below).iter().map(|e| e.total).sum::<u64>();
    }
    fn report(&self, r: &mut Report) {
        let cols = [
            ("sfc_sent", &self.sent),
            ("sfc_suppressed", &self.suppressed),
            ("sfc_received", &self.received),
            ("sfc_cache_hits", &self.cache_hits),
            ("sfc_proxy_pauses", &self.proxy_pauses),
        ];
        for (name, v) in cols {
            r.count(name, v.iter().sum::<u64>());
            r.ports_table.push(name, C::U64(v.clone()));
        }
        let paused = self.paused_forgotten + self.flows.values().map(|e| e.total).sum::<u64>();
        r.count("sfc_paused_ps", paused);
        r.metric("sfc_sent", "SFC messages sent", 1.0, "int", Better::Neither);
        r.metric("sfc_suppressed", "SFC messages suppressed", 1.0, "int", Better::Neither);
        r.metric("sfc_cache_hits", "SFC cache hits", 1.0, "int", Better::Neither);
        if self.p.mode == SfcMode::Proxy {
            r.metric("sfc_proxy_pauses", "SFC proxy PAUSEs to NICs", 1.0, "int", Better::Neither);
        }
        r.queue_threshold(None, "SFC trigger", self.p.trigger);
        r.acted("switch.sfc", "SFC messages sent", self.sent.iter().sum::<u64>());
    }

    fn msg_bytes(_: SfcMsg) -> u32 {
        SFC_MSG_BYTES
    }

    fn encode_msg(m: SfcMsg, p: &crate::net::Packet, w: &crate::switch::mechanism::WireCtx, out: &mut Vec<u8>) {
        encode(m.class, p, w, out)
    }
}

/// The fewest PFC quanta (512 bit times at `rate_bps`) that cover `pause`, at most 65535.
pub fn pause_quanta(pause: SimTime, rate_bps: u64) -> u16 {
    let bits = (pause.0 as u128 * rate_bps as u128).div_ceil(1_000_000_000_000);
    bits.div_ceil(512).clamp(1, u16::MAX as u128) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Packet;
    use crate::switch::bench::Bench;

    /// A data packet that has just joined queue 0 of `out`, which then holds `depth` bytes.
    #[allow(clippy::too_many_arguments)]
    fn arrive(b: &mut Bench, sfc: &mut Sfc, now: SimTime, flow: FlowId, src: u32, dst: u32, in_port: PortId, out: PortId, depth: u64) {
        let a = b.data(flow, src, dst, in_port, out, depth);
        sfc.on_enqueue(&a, &mut b.cx(now));
    }

    /// The messages pushed since the last call: (switch, flow, to, about, pause).
    fn msgs(b: &mut Bench) -> Vec<(u32, FlowId, u32, u32, SimTime)> {
        let out = b.fx.iter().filter_map(|e| if let Effect::Msg { sw, flow, to, about, value, .. } = *e { Some((sw, flow, to, about, SimTime(value))) } else { None }).collect();
        b.fx.clear();
        out
    }

    /// The switch's other mechanisms: none, or PFC with an XOFF running toward `port` in class 0.
    fn others(b: &Bench, xoff_on: Option<PortId>) -> Mechanisms {
        use crate::switch::pfc::Pfc;
        let n = b.topo.ports.len();
        let pfc = xoff_on.map(|port| {
            let mut p = Pfc::new(PfcParams::receive_only(n), n, 1, 2);
            p.set_xoff(port, 0);
            p
        });
        Mechanisms { pfc, ..Default::default() }
    }

    fn params(mode: SfcMode) -> SfcParams {
        SfcParams { depth: SfcDepth::Queue, trigger: DEFAULT_TRIGGER, target: DEFAULT_TARGET, suppression: DEFAULT_SUPPRESSION, cache: true, mode }
    }

    /// A queue built by hand to 173,587 B on a 100G port: the message names the packet's
    /// flow, goes back to its source and pauses for (173,587 - 50,000) x 8 / 100e9 s, to the ps.
    #[test]
    fn message_pauses_for_the_drain_to_target() {
        let mut b = Bench::new();
        let mut sfc = Sfc::new(params(SfcMode::Native), b.topo.ports.len(), 1);
        let (inp, out) = (b.port("left", "h0"), b.port("left", "right"));
        arrive(&mut b, &mut sfc, SimTime::from_us(3), 5, 0, 2, inp, out, 99_999);
        assert!(msgs(&mut b).is_empty(), "below the trigger");
        arrive(&mut b, &mut sfc, SimTime::from_us(3), 5, 0, 2, inp, out, 173_587);
        assert_eq!(msgs(&mut b), vec![(0, 5, 0, 2, SimTime(123_587 * 80))]);
        // an ACK never triggers
        let mut sfc2 = Sfc::new(params(SfcMode::Native), b.topo.ports.len(), 1);
        let ack = b.pkts.alloc(Packet { kind: PktKind::Ack, flow: 6, src: 0, dst: 2, size: 64, ..Packet::blank() });
        b.port_queues.get_mut(out, 0).bytes = 500_000;
        sfc2.on_enqueue(&Arrival::new(0, inp, out, ack, 64, 0, crate::net::Ecn::NotEct, 0, 0), &mut b.cx(SimTime::ZERO));
        assert!(msgs(&mut b).is_empty());
    }

    /// At most one message per (port, flow) per suppression period; the rest are counted.
    #[test]
    fn suppression_allows_one_message_per_period() {
        let mut b = Bench::new();
        let mut sfc = Sfc::new(SfcParams { cache: false, ..params(SfcMode::Native) }, b.topo.ports.len(), 1);
        let (inp, out) = (b.port("left", "h0"), b.port("left", "right"));
        let row = out as usize;
        arrive(&mut b, &mut sfc, SimTime::from_us(10), 1, 0, 2, inp, out, 200_000);
        arrive(&mut b, &mut sfc, SimTime::from_ns(15_999), 1, 0, 2, inp, out, 210_000);
        assert_eq!(msgs(&mut b).len(), 1, "two triggering packets of one flow within 6 us: one message");
        assert_eq!((sfc.sent[row], sfc.suppressed[row]), (1, 1));
        let from_h1 = b.port("left", "h1");
        arrive(&mut b, &mut sfc, SimTime::from_us(11), 2, 1, 2, from_h1, out, 220_000);
        assert_eq!(msgs(&mut b).len(), 1, "another flow has its own period");
        arrive(&mut b, &mut sfc, SimTime::from_us(16), 1, 0, 2, inp, out, 230_000);
        assert_eq!(msgs(&mut b), vec![(0, 1, 0, 2, SimTime(180_000 * 80))], "the period has passed");
        assert_eq!((sfc.sent[row], sfc.suppressed[row]), (3, 1));
    }

    /// The proxy at the source's ToR: the PAUSE's quanta cover the pause; an overlapping
    /// message that ends earlier sends nothing, one that ends later extends the pause.
    #[test]
    fn proxy_pause_covers_and_only_extends() {
        let mut b = Bench::new();
        let mut sfc = Sfc::new(params(SfcMode::Proxy), b.topo.ports.len(), 1);
        let to_h0 = b.port("left", "h0");
        let mut msg = |b: &mut Bench, now: SimTime, pause: SimTime| -> (bool, Vec<u16>) {
            let pkt = b.pkts.alloc(Packet { kind: PktKind::Msg(Msg::Sfc(SfcMsg { class: 0 })), flow: 9, src: 2, dst: 0, seq: pause.0, size: 64, ..Packet::blank() });
            let consumed = sfc.on_msg(SfcMsg { class: 0 }, MsgAt { sw: 0, out: to_h0, pkt }, &others(b, None), &mut b.cx(now));
            let q =
                b.fx.iter()
                    .filter_map(|e| {
                        if let Effect::Frame { port, frame: Frame::Pfc(PauseFrame::Pfc { class: 0, quanta }), .. } = *e {
                            assert_eq!(port, to_h0);
                            Some(quanta)
                        } else {
                            None
                        }
                    })
                    .collect();
            b.fx.clear();
            (consumed, q)
        };
        // 8 us at 100G: 1562.5 quanta -> 1563
        assert_eq!(msg(&mut b, SimTime::from_us(100), SimTime::from_us(8)), (true, vec![1563]));
        assert_eq!(msg(&mut b, SimTime::from_us(101), SimTime::from_us(2)), (true, vec![]), "ends before the running pause");
        // 10 us from 102 us ends after 108.00512 us: 1953.125 quanta -> 1954
        assert_eq!(msg(&mut b, SimTime::from_us(102), SimTime::from_us(10)), (true, vec![1954]));
        assert_eq!(sfc.proxy_pauses[to_h0 as usize], 2);
        // the flow was paused over [100, 112) us
        assert_eq!(sfc.flows.get(9).unwrap().total, SimTime::from_us(12).0);
        // the ToR's own XOFF toward the NIC is running: a proxy PAUSE would shorten it
        let pkt = b.pkts.alloc(Packet { kind: PktKind::Msg(Msg::Sfc(SfcMsg { class: 0 })), flow: 9, src: 2, dst: 0, seq: SimTime::from_us(20).0, size: 64, ..Packet::blank() });
        assert!(sfc.on_msg(SfcMsg { class: 0 }, MsgAt { sw: 0, out: to_h0, pkt }, &others(&b, Some(to_h0)), &mut b.cx(SimTime::from_us(103))));
        assert!(b.fx.is_empty());
        // a message crossing a switch that is not the source's ToR goes on
        let pkt = b.pkts.alloc(Packet { kind: PktKind::Msg(Msg::Sfc(SfcMsg { class: 0 })), flow: 9, src: 2, dst: 0, seq: 1, size: 64, ..Packet::blank() });
        let to_left = b.port("right", "left");
        assert!(!sfc.on_msg(SfcMsg { class: 0 }, MsgAt { sw: 1, out: to_left, pkt }, &others(&b, None), &mut b.cx(SimTime::from_us(103))));
    }

    /// The destination cache: a message forwarded by the source's ToR for destination h2 makes
    /// that ToR answer another of its hosts sending to h2 at once, with the remaining pause.
    #[test]
    fn tor_cache_answers_other_sources_with_the_remaining_pause() {
        let mut b = Bench::new();
        let mut sfc = Sfc::new(params(SfcMode::Native), b.topo.ports.len(), 1);
        let to_h0 = b.port("left", "h0");
        let pkt = b.pkts.alloc(Packet { kind: PktKind::Msg(Msg::Sfc(SfcMsg { class: 0 })), flow: 1, src: 2, dst: 0, seq: SimTime::from_us(20).0, size: 64, ..Packet::blank() });
        assert!(!sfc.on_msg(SfcMsg { class: 0 }, MsgAt { sw: 0, out: to_h0, pkt }, &others(&b, None), &mut b.cx(SimTime::from_us(50))), "native: the message goes on to the NIC");
        let (from_h1, up) = (b.port("left", "h1"), b.port("left", "right"));
        arrive(&mut b, &mut sfc, SimTime::from_us(58), 2, 1, 2, from_h1, up, 0);
        assert_eq!(msgs(&mut b), vec![(0, 2, 1, 2, SimTime::from_us(12))]);
        assert_eq!(sfc.cache_hits[from_h1 as usize], 1);
        // another destination, and the same one once the pause is over, are not answered
        arrive(&mut b, &mut sfc, SimTime::from_us(59), 3, 1, 0, from_h1, to_h0, 0);
        arrive(&mut b, &mut sfc, SimTime::from_us(70), 4, 1, 2, from_h1, up, 0);
        assert!(msgs(&mut b).is_empty());
        // a host on another switch is not the cache's
        let from_h2 = b.port("right", "h2");
        arrive(&mut b, &mut sfc, SimTime::from_us(55), 5, 2, 2, from_h2, from_h2, 0);
        assert!(msgs(&mut b).is_empty());
    }

    /// The pause drains the queue from its depth to the target at the port's rate, to the ps:
    /// 150 KB at 100 Gbps is 100 KB above a 50 KB target, 8 us.
    #[test]
    fn pause_drains_to_the_target_at_line_rate() {
        let p = SfcParams { depth: SfcDepth::Queue, trigger: DEFAULT_TRIGGER, target: DEFAULT_TARGET, suppression: DEFAULT_SUPPRESSION, cache: true, mode: SfcMode::Native };
        assert_eq!(p.pause_for(150_000, 100_000_000_000), SimTime::from_us(8));
        assert_eq!(p.pause_for(100_001, 400_000_000_000), SimTime(50_001 * 20));
        assert_eq!(p.pause_for(10_000, 100_000_000_000), SimTime::ZERO);
    }

    /// Quanta cover the pause: 8 us at 100 Gbps is 800,000 bits = 1562.5 quanta -> 1563.
    #[test]
    fn quanta_cover_the_pause() {
        let rate = 100_000_000_000;
        let q = pause_quanta(SimTime::from_us(8), rate);
        assert_eq!(q, 1563);
        assert!(PfcParams::pause_time(q, rate) >= SimTime::from_us(8));
        assert!(PfcParams::pause_time(q - 1, rate) < SimTime::from_us(8));
        assert_eq!(pause_quanta(SimTime::from_ms(10), rate), u16::MAX);
        assert_eq!(pause_quanta(SimTime(1), rate), 1);
    }
}
