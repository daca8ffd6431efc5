//! Quantized Congestion Notification (QCN), IEEE Std 802.1Qau-2010, now clauses 30-33 of
//! IEEE Std 802.1Q, and the QCN design it standardised (Alizadeh, Atikoglu, Kabbani,
//! Lakshmikantha, Pan, Prabhakar, Seaman, "Data center transport mechanisms: congestion
//! control theory and IEEE standardization", Allerton 2008).
//!
//! **Congestion point (CP)**, at every switch egress queue (802.1Q 32.8): data frames are
//! sampled by bytes; at a sample, with Q the queue (bytes, the sampled frame included) and
//! Q_old the queue at the previous sample,
//! `Fb = -(Q_off + w Q_delta)`, `Q_off = Q - Q_eq`, `Q_delta = Q - Q_old` (set point Q_eq,
//! default 26,000 B; w = 2: the MIB's QueueSizeSetPoint and FeedbackWeight). |Fb| is
//! quantised to 6 bits, QntzFb = floor(|Fb| 63 / Fb_max) with Fb_max = (1 + 2w) Q_eq,
//! saturating at 63; when it is above 0 a Congestion Notification Message goes to the
//! source of the sampled frame. The next sample comes after the sampling table's interval
//! for QntzFb / 8: 150, 75, 50, 37.5, 30, 25, 21.5, 18.5 KB (scaled by `sample_base` / 150 KB),
//! drawn uniformly within +-15% of that from the switch's stream so CPs do not sample in
//! lockstep. (The standard's text was not at hand: the MIB's defaults, an HPE manual's
//! quantisation, the table and jitter of public OMNeT++ QCN models and a Linux QCN patch,
//! which send no CNM when QntzFb is 0, are what this follows.) On an input-buffered switch
//! (`switch.architecture`) a CP per (egress port, class) samples a frame as it arrives at
//! its input, with Q the backlog bound for that port and class wherever it waits (its
//! VOQs at every input and the output queue: `PortQueues::backlog`), the queue the CP
//! would see on an output-queued switch.
//!
//! **Reaction point (RP)**, per flow in the source NIC (802.1Q 32.13), starting at the
//! first CNM at line rate: on a CNM, target rate `TR <- CR` (unless no increase cycle has
//! run since the last CNM: back-to-back CNMs keep the target, as in the OMNeT++ QCN models
//! and htsim), current rate `CR <- CR (1 - Gd QntzFb)` with the cut at most `min_decrease`
//! (Gd = 1/128: 63/128 < 50%), never below `min_rate` (5 Mbps), and the byte counter and
//! timer restart. At the end of the first cycle after a CNM a target above 10 CR is divided
//! by 8 (QCN's guard against a stale target; OMNeT++ models, the DCQCN authors' code). Rate increases come from the byte counter (every
//! `byte_counter` bytes sent, 150 KB) and the timer (every `timer`, 15 ms); once a counter
//! has completed `fast_recovery` (5) cycles its period halves (75 KB, 7.5 ms). Each cycle is
//! fast recovery `CR <- (CR + TR) / 2` while both counters are below 5 cycles, active
//! increase `TR <- TR + R_AI` (5 Mbps) then averaging when one is past, and hyper-active
//! increase `TR <- TR + i R_HAI` (50 Mbps, i = 1, 2, ... the cycles both are past) when both
//! are. A cycle is classed by the counts completed before it, so exactly five are fast
//! recovery, closing 1 - 2^-5 of the gap to TR. Back at line rate the limiter is released.
//! The limiter spaces a flow's frames by their serialization time at CR (the NIC holds the
//! flow, `Effect::HoldFlow`, which a TCP or UDP sender waits out); RoCE flows keep DCQCN.
//!
//! **CNM** (802.1Q 33.4): EtherType 0x22E7; 110 B on the wire: MAC addresses, VLAN tag and
//! EtherType (18), the CNM PDU's version/QntzFb (2), CPID (8), cnmQOffset and cnmQDelta
//! (2 + 2), encapsulated priority, destination MAC and MSDU length (2 + 6 + 2), the first
//! 64 octets of the sampled frame's MSDU, and FCS (4). It is routed to the source like the
//! flow's ACKs, ahead of the data queues (CNMs travel at a priority above the
//! congestion-controlled one).
//!
//! Readings the sources leave open here (ours): only data frames are sampled (a CNM for an
//! ACK would reach a host with no reaction point for it); the RP's counters are not
//! randomised (the OMNeT++ models draw them within +-15%); the timer is 15 ms as the MIB
//! says (the models use 10 ms or 1 ms); the timer and byte counter are replayed lazily, so
//! the state depends only on the times of CNMs and sends.

use super::mechanism::{Caps, Fabric, Never, SwitchMechanism};
use super::pipeline::{Arrival, Better, Ctx, Effect, Report};
use super::{Msg};
use crate::metrics::{ColumnData as C, Outputs};
use crate::net::PerFlow;
use crate::net::{FlowId, PktId, PktKind, PortId};
use crate::sim::{ser_time, SimTime};
use rand::Rng as _;

/// Wire bytes of a CNM (see the module doc).
pub const CNM_BYTES: u32 = 110;
/// 6-bit quantised feedback.
pub const QNTZ_MAX: u8 = 63;
/// The CNM's EtherType (802.1Q 33.4) and the priority CNMs are sent at (ours: the
/// highest below network control, as CI's CIMs use).
pub const ETHERTYPE_CNM: u16 = 0x22E7;
pub const CNM_PRIORITY: u8 = 6;
/// Octets of the sampled frame's MSDU a CNM carries.
pub const CNM_ENCAP: usize = 64;

/// A Congestion Notification Message (IEEE 802.1Qau) about the packet's `flow`: its fields
/// travel packed in the packet's `seq` (`CnmFields::pack`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cnm;

/// What a CNM tells its reaction point, as its PDU carries it (and as the routed message's
/// value carries it to the source, `pack`): QntzFb, cnmQOffset and cnmQDelta, and the
/// low two octets of the CPID (`port << 3 | class` of the congestion point). CI's CIMs
/// carry the same fields, all 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CnmFields {
    pub qntz: u8,
    pub q_off: i16,
    pub q_delta: i16,
    pub cpid_low: u16,
}

impl CnmFields {
    /// The fields of a sample: QntzFb, the queue's offset from the set point and change
    /// since the last sample in bytes, and the congestion point's port (mod 8192) and class.
    pub fn new(qntz: u8, q_off: i64, q_delta: i64, port: u32, class: u8) -> CnmFields {
        CnmFields { qntz, q_off: Self::wire_q(q_off), q_delta: Self::wire_q(q_delta), cpid_low: ((port & 0x1FFF) << 3 | (class & 7) as u32) as u16 }
    }
    /// cnmQOffset and cnmQDelta are 16-bit in 64-octet units (our reading; the standard's
    /// text was not at hand: in octets they would saturate at 32 KB, below Fb_max = 130 KB
    /// for the default set point), saturated.
    fn wire_q(bytes: i64) -> i16 {
        (bytes.div_euclid(64)).clamp(i16::MIN as i64, i16::MAX as i64) as i16
    }
    /// QntzFb in bits 0-7, cnmQOffset in 16-31, cnmQDelta in 32-47, the CPID's low octets
    /// in 48-63.
    pub fn pack(&self) -> u64 {
        self.qntz as u64 | (self.q_off as u16 as u64) << 16 | (self.q_delta as u16 as u64) << 32 | (self.cpid_low as u64) << 48
    }
    pub fn unpack(v: u64) -> CnmFields {
        CnmFields { qntz: v as u8, q_off: (v >> 16) as u16 as i16, q_delta: (v >> 32) as u16 as i16, cpid_low: (v >> 48) as u16 }
    }
}

/// The 802.1Q clause 33.4 PDU a CNM carries (CI's CIM reuses it): version 0 and QntzFb;
/// the CPID (the congestion point's switch `cp`, its MAC address, then `f.cpid_low`);
/// cnmQOffset and cnmQDelta; the sampled frame's priority, destination address and MSDU
/// length; then `encap` octets of that MSDU (the flow's headers: the model keeps no frame
/// after it is gone).
pub fn cn_pdu(out: &mut Vec<u8>, w: &crate::switch::mechanism::WireCtx, cp: crate::net::NodeId, f: &CnmFields, encap: usize) {
    use crate::net::wire;
    out.extend_from_slice(&(f.qntz as u16 & 0x3F).to_be_bytes());
    out.extend_from_slice(&wire::mac_of(w.topo, cp));
    out.extend_from_slice(&f.cpid_low.to_be_bytes());
    out.extend_from_slice(&f.q_off.to_be_bytes());
    out.extend_from_slice(&f.q_delta.to_be_bytes());
    match &w.flow {
        Some(fl) => {
            out.extend_from_slice(&((fl.prio as u16 & 7) << 13).to_be_bytes());
            out.extend_from_slice(&wire::host_mac(w.topo, fl.dst));
            let msdu = fl.size.min(w.mss as u64) as usize + wire::header_bytes(fl.proto);
            out.extend_from_slice(&(msdu.min(u16::MAX as usize) as u16).to_be_bytes());
            wire::flow_msdu(out, w.topo, fl, w.mss, encap);
        }
        None => out.resize(out.len() + 10 + encap, 0),
    }
}

/// The bytes of a CNM (see the module doc), routed hop by hop toward the reaction point:
/// from the link's sender to its receiver, addressed from the congestion point to the
/// flow's source, no FCS. The packet's `payload` names the switch that sent it.
pub fn encode(p: &crate::net::Packet, w: &crate::switch::mechanism::WireCtx, out: &mut Vec<u8>) {
    use crate::net::wire;
    let cp = w.topo.switches[p.payload as usize];
    wire::eth(out, wire::host_mac(w.topo, p.dst), wire::mac_of(w.topo, cp), Some(CNM_PRIORITY), ETHERTYPE_CNM);
    cn_pdu(out, w, cp, &CnmFields::unpack(p.seq), CNM_ENCAP);
}

/// Bytes between samples by QntzFb / 8, for the 150 KB base.
const SAMPLE_TABLE: [u64; 8] = [150_000, 75_000, 50_000, 37_500, 30_000, 25_000, 21_500, 18_500];

/// Defaults of `switch.qcn` (802.1Q CP managed objects).
pub const DEFAULT_Q_EQ: u64 = 26_000;
pub const DEFAULT_W: f64 = 2.0;
pub const DEFAULT_SAMPLE_BASE: u64 = 150_000;
/// Defaults of `transport.qcn` (802.1Q RP managed objects).
pub const DEFAULT_GD: f64 = 1.0 / 128.0;
pub const DEFAULT_MIN_DECREASE: f64 = 0.5;
pub const DEFAULT_BYTE_COUNTER: u64 = 150_000;
pub const DEFAULT_TIMER: SimTime = SimTime::from_us(15_000);
pub const DEFAULT_FAST_RECOVERY: u32 = 5;
pub const DEFAULT_RATE_AI: u64 = 5_000_000;
pub const DEFAULT_RATE_HAI: u64 = 50_000_000;
pub const DEFAULT_MIN_RATE: u64 = 5_000_000;

/// The congestion point's constants (`switch.qcn`).
#[derive(Clone, Debug, PartialEq)]
pub struct CpParams {
    /// Set point Q_eq, bytes.
    pub q_eq: u64,
    /// Weight w of the queue's growth in Fb.
    pub w: f64,
    /// Bytes between samples when not congested.
    pub sample_base: u64,
}

/// The reaction point's constants (`transport.qcn`). Rates in bits/s.
#[derive(Clone, Debug, PartialEq)]
pub struct RpParams {
    /// Gd: the cut per unit of quantised feedback.
    pub gd: f64,
    /// The largest cut, as a fraction of CR.
    pub min_decrease: f64,
    pub byte_counter: u64,
    pub timer: SimTime,
    /// Fast-recovery cycles per counter.
    pub fast_recovery: u32,
    pub rate_ai_bps: u64,
    pub rate_hai_bps: u64,
    pub min_rate_bps: u64,
}

/// `switch.qcn` and `transport.qcn`, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct QcnParams {
    pub cp: CpParams,
    pub rp: RpParams,
}

impl CpParams {
    /// Fb for a queue of `q` bytes that held `q_old` at the previous sample.
    pub fn feedback(&self, q: u64, q_old: u64) -> f64 {
        let q_off = q as f64 - self.q_eq as f64;
        let q_delta = q as f64 - q_old as f64;
        -(q_off + self.w * q_delta)
    }
    /// |Fb| in 6 bits against Fb_max = (1 + 2w) Q_eq, truncated; 0 when Fb >= 0 (no CNM).
    pub fn quantize(&self, fb: f64) -> u8 {
        if fb >= 0.0 {
            return 0;
        }
        let fb_max = (1.0 + 2.0 * self.w) * self.q_eq as f64;
        (-fb / fb_max * QNTZ_MAX as f64).floor().min(QNTZ_MAX as f64) as u8
    }
    /// Bytes to the next sample before the +-15% draw.
    pub fn interval(&self, qntz: u8) -> u64 {
        (self.sample_base as u128 * SAMPLE_TABLE[qntz as usize / 8] as u128 / SAMPLE_TABLE[0] as u128) as u64
    }
}

/// Which counter completed a cycle.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Counter {
    Bytes,
    Timer,
}

/// One flow's reaction point (module doc). Rates in bits/s as f64: the averaging steps are
/// fractional; [`Rp::rate_bps`] is the integer rate the limiter spaces frames at.
#[derive(Clone, Debug)]
pub struct Rp {
    pub cr: f64,
    pub tr: f64,
    line: f64,
    byte_stage: u32,
    time_stage: u32,
    /// Bytes left in the byte counter's cycle.
    bytes_left: u64,
    /// When the timer's cycle ends.
    timer_at: SimTime,
    /// Rate-limiting (a CNM arrived and CR has not yet come back to line rate).
    pub active: bool,
    now: SimTime,
    /// CNMs received.
    pub cnms: u64,
}

impl Rp {
    pub fn new(line_bps: u64) -> Rp {
        let line = line_bps as f64;
        Rp { cr: line, tr: line, line, byte_stage: 0, time_stage: 0, bytes_left: 0, timer_at: SimTime::MAX, active: false, now: SimTime::ZERO, cnms: 0 }
    }

    /// A CNM with quantised feedback `qntz` arrived at `now`.
    pub fn on_cnm(&mut self, p: &RpParams, qntz: u8, now: SimTime) {
        self.advance(p, now);
        let now = self.now;
        self.cnms += 1;
        if !self.active || self.byte_stage > 0 || self.time_stage > 0 {
            self.tr = self.cr;
        }
        self.active = true;
        let cut = (p.gd * qntz as f64).min(p.min_decrease);
        self.cr = (self.cr * (1.0 - cut)).max(p.min_rate_bps as f64);
        self.byte_stage = 0;
        self.time_stage = 0;
        self.bytes_left = p.byte_counter;
        self.timer_at = now + p.timer;
    }

    /// `bytes` of the flow left the NIC at `now`.
    pub fn on_sent(&mut self, p: &RpParams, bytes: u64, now: SimTime) {
        self.advance(p, now);
        let mut bytes = bytes;
        while self.active && bytes >= self.bytes_left {
            bytes -= self.bytes_left;
            self.byte_stage = self.byte_stage.saturating_add(1);
            self.increase(p, Counter::Bytes);
            self.bytes_left = period_bytes(p, self.byte_stage);
        }
        if self.active {
            self.bytes_left -= bytes;
        }
    }

    /// Apply every timer cycle that ended by `now`, in order.
    pub fn advance(&mut self, p: &RpParams, now: SimTime) {
        self.now = self.now.max(now);
        while self.active && self.timer_at <= self.now {
            let at = self.timer_at;
            self.time_stage = self.time_stage.saturating_add(1);
            self.increase(p, Counter::Timer);
            self.timer_at = at + period_time(p, self.time_stage);
        }
    }

    pub fn rate_bps(&self) -> u64 {
        self.cr.round() as u64
    }

    /// One completed cycle of `c`, classed by the counts completed before it.
    fn increase(&mut self, p: &RpParams, c: Counter) {
        let (b, t) = match c {
            Counter::Bytes => (self.byte_stage - 1, self.time_stage),
            Counter::Timer => (self.byte_stage, self.time_stage - 1),
        };
        if b == 0 && t == 0 && self.tr > 10.0 * self.cr {
            self.tr /= 8.0;
        }
        let f = p.fast_recovery;
        if b.max(t) < f {
            // fast recovery: TR stays
        } else if b.min(t) >= f {
            self.tr += (b.min(t) - f + 1) as f64 * p.rate_hai_bps as f64;
        } else {
            self.tr += p.rate_ai_bps as f64;
        }
        self.tr = self.tr.min(self.line);
        self.cr = ((self.cr + self.tr) / 2.0).min(self.line);
        // within a few ulps of the target, land on it (halving can stall one ulp short)
        if (self.tr - self.cr).abs() <= self.tr * 4.0 * f64::EPSILON {
            self.cr = self.tr;
        }
        if self.cr >= self.line {
            self.active = false;
            self.timer_at = SimTime::MAX;
        }
    }
}

fn period_bytes(p: &RpParams, stage: u32) -> u64 {
    if stage < p.fast_recovery {
        p.byte_counter
    } else {
        (p.byte_counter / 2).max(1)
    }
}

fn period_time(p: &RpParams, stage: u32) -> SimTime {
    if stage < p.fast_recovery {
        p.timer
    } else {
        SimTime((p.timer.0 / 2).max(1))
    }
}

/// A congestion point's state: the queue at the last sample and the bytes to the next.
#[derive(Copy, Clone, Debug)]
struct Cp {
    q_old: u64,
    to_sample: u64,
}

/// QCN on every switch egress queue and a reaction point per flow at the NICs.
#[derive(Clone, Debug)]
pub struct Qcn {
    pub p: QcnParams,
    queues: usize,
    /// Per (port, queue).
    cp: Vec<Cp>,
    cnms_sent: Vec<u64>,
    /// Per flow, from its first CNM.
    rp: PerFlow<Option<Rp>>,
    /// Flows `forget_flows` forgot that received a CNM.
    limited_forgotten: usize,
}

impl Qcn {
    pub fn new(p: QcnParams, ports: usize, queues: usize) -> Qcn {
        let cp = vec![Cp { q_old: 0, to_sample: p.cp.sample_base }; ports * queues];
        Qcn { p, queues, cp, cnms_sent: vec![0; ports * queues], rp: PerFlow::default(), limited_forgotten: 0 }
    }

    /// The congestion point of `a`'s (egress port, queue), which holds `q` bytes with the
    /// packet (802.1Q 30.2): a data packet due to be sampled makes a CNM to its source when
    /// the feedback is negative.
    fn sample(&mut self, a: &Arrival, q: u64, cx: &mut Ctx) {
        let p = cx.pkts.get(a.pkt);
        if p.kind != PktKind::Data {
            return;
        }
        let row = a.out as usize * self.queues + a.queue;
        let cp = &mut self.cp[row];
        if a.size < cp.to_sample {
            cp.to_sample -= a.size;
            return;
        }
        let (flow, src, dst, hash) = (p.flow, p.src, p.dst, p.hash);
        let fb = self.p.cp.feedback(q, cp.q_old);
        let fields = CnmFields::new(self.p.cp.quantize(fb), q as i64 - self.p.cp.q_eq as i64, q as i64 - cp.q_old as i64, cx.topo.ports[a.out as usize].local, a.queue as u8);
        cp.q_old = q;
        let qntz = fields.qntz;
        let jitter = cx.switches[a.sw as usize].rng.gen_range(0.85..1.15);
        cp.to_sample = ((self.p.cp.interval(qntz) as f64 * jitter) as u64).max(1);
        if qntz > 0 {
            self.cnms_sent[row] += 1;
            cx.push(Effect::Msg { sw: a.sw, msg: Msg::Qcn(Cnm), flow, to: src, about: dst, hash, value: fields.pack() });
        }
    }
}

impl SwitchMechanism for Qcn {
    type Params = QcnParams;
    type Frame = Never;
    type Msg = Cnm;
    type Timer = Never;
    const KEY: &'static str = "qcn";
    const CAPS: Caps = Caps::ENQUEUE.or(Caps::LIMIT_RATES);
    /// QCN's columns and summary keys (`Qcn::report`, `flow_columns`).
    const OUTPUTS: Outputs = Outputs {
        flows: &[(&["qcn_cnms_received"], "With QCN (`switch.qcn`): the CNMs the flow's reaction point received")],
        ports: &[(&["qcn_cnms"], "With QCN (`switch.qcn`): congestion notification messages this congestion point sent")],
        summary: &[(&["qcn_cnms"], "With QCN: the ports' `qcn_cnms`, summed"), (&["qcn_limited_flows"], "With QCN: the flows a reaction point limited (those that received a CNM)")],
    };

    fn build(p: QcnParams, f: &Fabric) -> Qcn {
        Qcn::new(p, f.topo.ports.len(), f.queues)
    }

    /// A set point of 2 to 33 MTUs, the weight 0.5, 2 or 4, samples every 5 to 68 MTUs.
    #[cfg(test)]
    fn arbitrary(draw: u64, _: u8, mtu: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        use crate::switch::mechanism::{bits, Arbitrary};
        let m = mtu as u64;
        let w = [0.5, 2.0, 4.0][bits(draw, 5, 2) as usize % 3];
        let line = format!("qcn = {{ q_eq = \"{}B\", w = {w:?}, sample_base = \"{}B\" }}", m * (2 + bits(draw, 0, 5)), m * (5 + bits(draw, 7, 6)));
        Some(Arbitrary { line, without: &[] })
    }
    /// on_enqueue: count the data frame toward the next sample; at a sample, compute Fb and
    /// send a CNM to the frame's source if the queue is congested.
    fn on_enqueue(&mut self, a: &Arrival, cx: &mut Ctx) {
        // a packet that crossed an input-buffered switch's crossbar was sampled on arrival
        if !a.held {
            self.sample(a, cx.queue_bytes(a.out, a.queue), cx);
        }
    }

    /// on_held: a packet arrived at an input-buffered switch's input; the congestion point
    /// of its (output, class) samples it against the backlog bound there, wherever it waits.
    fn on_held(&mut self, a: &Arrival, cx: &mut Ctx) {
        self.sample(a, cx.backlog(a.out, a.queue), cx);
    }

    /// A CNM reached the source NIC behind `port`: the flow's reaction point cuts its rate.
    fn on_host_msg(&mut self, _m: Cnm, port: PortId, pkt: PktId, cx: &mut Ctx) {
        let p = cx.pkts.get(pkt);
        let (flow, qntz) = (p.flow, CnmFields::unpack(p.seq).qntz.min(QNTZ_MAX));
        let line = cx.topo.ports[port as usize].rate_bps;
        self.rp.entry(flow).get_or_insert_with(|| Rp::new(line)).on_cnm(&self.p.rp, qntz, cx.now);
    }

    /// A frame of `wire` bytes of `flow` left its NIC at `now`: until when the limiter holds
    /// the flow, if it limits it.
    #[inline]
    fn on_host_send(&mut self, flow: FlowId, wire: u32, now: SimTime) -> Option<SimTime> {
        let rp = self.rp.get_mut(flow)?.as_mut()?;
        if !rp.active {
            return None;
        }
        rp.on_sent(&self.p.rp, wire as u64, now);
        rp.active.then(|| now + ser_time(wire as u64, rp.rate_bps().max(1)))
    }

    fn flow_columns(&self, ids: &[usize], t: &mut crate::metrics::Table) {
        t.push("qcn_cnms_received", C::U64(self.rp.column(ids, |rp| rp.as_ref().map_or(0, |rp| rp.cnms))));
    }
    fn forget_flows(&mut self, ids: &[usize], below: usize) {
        self.limited_forgotten += self.rp.forget(ids, below).iter().filter(|rp| rp.as_ref().is_some_and(|rp| rp.cnms > 0)).count();
    }
    fn report(&self, r: &mut Report) {
        r.count("qcn_cnms", self.cnms_sent.iter().sum::<u64>());
        r.ports_table.push("qcn_cnms", C::U64(self.cnms_sent.clone()));
        let limited = self.limited_forgotten + self.rp.values().filter(|rp| rp.as_ref().is_some_and(|rp| rp.cnms > 0)).count();
        r.count("qcn_limited_flows", limited as u64);
        r.metric("qcn_cnms", "QCN CNMs sent", 1.0, "int", Better::Neither);
        r.queue_threshold(None, "QCN Q_eq", self.p.cp.q_eq);
        r.acted("switch.qcn", "CNMs sent", self.cnms_sent.iter().sum::<u64>());
    }

    fn msg_bytes(_: Cnm) -> u32 {
        CNM_BYTES
    }

    fn encode_msg(_: Cnm, p: &crate::net::Packet, w: &crate::switch::mechanism::WireCtx, out: &mut Vec<u8>) {
        encode(p, w, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::bench::Bench;

    fn rp_params() -> RpParams {
        RpParams {
            gd: DEFAULT_GD,
            min_decrease: DEFAULT_MIN_DECREASE,
            byte_counter: DEFAULT_BYTE_COUNTER,
            timer: DEFAULT_TIMER,
            fast_recovery: DEFAULT_FAST_RECOVERY,
            rate_ai_bps: DEFAULT_RATE_AI,
            rate_hai_bps: DEFAULT_RATE_HAI,
            min_rate_bps: DEFAULT_MIN_RATE,
        }
    }

    fn params() -> QcnParams {
        QcnParams { cp: CpParams { q_eq: DEFAULT_Q_EQ, w: DEFAULT_W, sample_base: DEFAULT_SAMPLE_BASE }, rp: rp_params() }
    }

    const G10: u64 = 10_000_000_000;

    /// Fb = -(Q_off + w Q_delta) by hand, quantised against (1 + 2w) Q_eq = 130,000 B.
    #[test]
    fn feedback_and_quantization() {
        let cp = params().cp;
        // Q = 40,000, Q_old = 30,000: Fb = -(14,000 + 2 x 10,000) = -34,000 -> 63 x 34/130 = 16.48 -> 16
        assert_eq!(cp.feedback(40_000, 30_000), -34_000.0);
        assert_eq!(cp.quantize(-34_000.0), 16);
        assert_eq!(cp.interval(16), 50_000);
        // below the set point and draining: no CNM, base sampling
        assert_eq!(cp.quantize(cp.feedback(20_000, 25_000)), 0);
        assert_eq!(cp.interval(0), 150_000);
        // the feedback saturates at 63, the interval at the table's last entry
        assert_eq!(cp.quantize(cp.feedback(500_000, 0)), 63);
        assert_eq!(cp.interval(63), 18_500);
        // congestion under one 64th of Fb_max quantises to 0: no CNM
        assert_eq!(cp.quantize(-2_000.0), 0);
        assert_eq!(CpParams { sample_base: 75_000, ..cp }.interval(8), 37_500);
    }

    /// The CP samples by bytes and sends the CNM to the sampled frame's source.
    #[test]
    fn congestion_point_samples_and_notifies_the_source() {
        let mut b = Bench::new();
        let mut q = Qcn::new(params(), b.topo.ports.len(), 1);
        let (inp, out) = (b.port("left", "h0"), b.port("left", "right"));
        // 1086 B frames: the first sample falls on the 139th frame (150,000 B)
        let mut cnms = Vec::new();
        for i in 0..139u32 {
            let a = b.data(i, 0, 2, inp, out, 60_000);
            q.on_enqueue(&a, &mut b.cx(SimTime::ZERO));
            cnms.extend(b.fx.drain(..).filter_map(|e| if let Effect::Msg { to, about, value, flow, .. } = e { Some((flow, to, about, value)) } else { None }));
        }
        // Q = 60,000 against Q_old = 0: Fb = -(34,000 + 120,000) -> 63 x 154/130 > 63 -> 63
        assert_eq!(cnms.iter().map(|c| (c.0, c.1, c.2, CnmFields::unpack(c.3).qntz)).collect::<Vec<_>>(), vec![(138, 0, 2, 63)]);
        // the CNM also carries Q_off and Q_delta (to 64 B) and the congestion point
        let f = CnmFields::unpack(cnms[0].3);
        assert_eq!((f.q_off as i64 * 64, f.q_delta as i64 * 64), (33_984, 60_000 - 60_000 % 64));
        assert_eq!(f.cpid_low as u32, b.topo.ports[out as usize].local << 3);
        assert_eq!(q.cnms_sent[out as usize], 1);
        let next = q.cp[out as usize].to_sample;
        assert!((15_725..=21_275).contains(&next), "18,500 B +-15%, got {next}");
    }

    /// After one CNM the rate is R (1 - Gd QntzFb), and TR is the rate before the cut.
    #[test]
    fn one_cnm_cuts_by_gd_times_feedback() {
        let p = rp_params();
        let mut rp = Rp::new(G10);
        rp.on_cnm(&p, 32, SimTime::ZERO);
        assert_eq!(rp.cr, 10e9 * (1.0 - 32.0 / 128.0));
        assert_eq!(rp.tr, 10e9);
        // the largest feedback cuts 63/128, under the 50% bound
        let mut rp = Rp::new(G10);
        rp.on_cnm(&p, 63, SimTime::ZERO);
        assert_eq!(rp.cr, 10e9 * (1.0 - 63.0 / 128.0));
        // a larger Gd is capped at min_decrease
        let mut rp = Rp::new(G10);
        rp.on_cnm(&RpParams { gd: 1.0 / 64.0, ..p.clone() }, 63, SimTime::ZERO);
        assert_eq!(rp.cr, 5e9);
    }

    /// Five byte-counter cycles of fast recovery close 1 - 2^-5 of the gap to TR; the sixth
    /// is active increase (TR + R_AI) after a half-length cycle.
    #[test]
    fn fast_recovery_closes_all_but_one_thirty_second_of_the_gap() {
        let p = rp_params();
        let mut rp = Rp::new(G10);
        rp.on_cnm(&p, 64, SimTime::ZERO);
        let cut = rp.cr;
        for _ in 0..5 {
            rp.on_sent(&p, 150_000, SimTime::ZERO);
        }
        let gap = 10e9 - cut;
        assert!((rp.cr - (10e9 - gap / 32.0)).abs() < 1e-3, "{}", rp.cr);
        assert_eq!(rp.tr, 10e9);
        // the byte counter is now in its half-length cycles
        rp.on_sent(&p, 74_999, SimTime::ZERO);
        let before = rp.cr;
        rp.on_sent(&p, 1, SimTime::ZERO);
        assert!(rp.cr > before);
        assert!(!rp.active || rp.tr == 10e9, "TR stays clamped at line rate");
    }

    /// The timer alone: 15 ms cycles in fast recovery, then 7.5 ms; applied lazily, the state
    /// is the same however the calls are spaced.
    #[test]
    fn timer_cycles_halve_after_fast_recovery_and_replay_exactly() {
        let p = RpParams { min_rate_bps: 1_000_000, ..rp_params() };
        let line = 1_000_000_000; // 1 Gbps so that active increase is visible
        let mut a = Rp::new(line);
        a.on_cnm(&p, 63, SimTime::ZERO);
        let r0 = a.cr;
        a.advance(&p, SimTime::from_us(74_999));
        assert_eq!(a.time_stage, 4, "cycles end at 15, 30, 45, 60 ms");
        a.advance(&p, SimTime::from_us(75_000));
        assert_eq!(a.time_stage, 5);
        assert!((a.cr - (1e9 - (1e9 - r0) / 32.0)).abs() < 1e-6);
        a.advance(&p, SimTime::from_us(82_500));
        assert_eq!(a.time_stage, 6, "the sixth cycle is 7.5 ms: active increase");
        assert_eq!(a.tr, 1e9, "TR clamped at line rate");
        let mut b = Rp::new(line);
        b.on_cnm(&p, 63, SimTime::ZERO);
        for t in (0..=82_500).step_by(500) {
            b.advance(&p, SimTime::from_us(t));
        }
        assert_eq!((a.cr, a.tr, a.time_stage), (b.cr, b.tr, b.time_stage));
    }

    /// Active increase adds R_AI to TR per cycle once one counter is past fast recovery;
    /// hyper-active adds i R_HAI once both are. Checked below line rate.
    #[test]
    fn active_and_hyper_active_increase() {
        let p = rp_params();
        let mut rp = Rp::new(G10);
        rp.on_cnm(&p, 63, SimTime::ZERO);
        let tr = rp.tr;
        rp.on_cnm(&p, 63, SimTime::ZERO);
        assert_eq!(rp.tr, tr, "back-to-back CNMs keep the target");
        rp.on_sent(&p, 150_000, SimTime::ZERO);
        rp.on_cnm(&p, 63, SimTime::ZERO);
        assert!(rp.tr < 10e9, "after an increase cycle, TR <- CR");
        let tr = rp.tr;
        for _ in 0..5 {
            rp.on_sent(&p, 150_000, SimTime::ZERO);
        }
        assert_eq!(rp.tr, tr, "fast recovery keeps TR");
        rp.on_sent(&p, 75_000, SimTime::ZERO);
        assert_eq!(rp.tr, tr + 5e6, "byte counter past 5 cycles, timer not: active increase");
        // five timer cycles (15 ms each) bring the timer past fast recovery too
        rp.advance(&p, SimTime::from_us(75_000));
        let tr = rp.tr;
        rp.on_sent(&p, 75_000, SimTime::from_us(75_000));
        assert_eq!(rp.tr, tr + 50e6, "both past: hyper-active with i = min(6, 5) - 5 + 1 = 1");
    }

    /// Back-to-back CNMs keep the target; a target above 10 CR at the end of the first cycle
    /// after a CNM is divided by 8.
    #[test]
    fn stale_target_is_divided_by_eight() {
        let p = rp_params();
        let mut rp = Rp::new(G10);
        for _ in 0..4 {
            rp.on_cnm(&p, 63, SimTime::ZERO);
        }
        let cr = 10e9 * (1.0f64 - 63.0 / 128.0).powi(4);
        assert!((rp.cr - cr).abs() < 1e-3 && rp.tr == 10e9, "{} {}", rp.cr, rp.tr);
        rp.on_sent(&p, 150_000, SimTime::ZERO);
        assert_eq!(rp.tr, 10e9 / 8.0);
        assert!((rp.cr - (cr + 10e9 / 8.0) / 2.0).abs() < 1e-3);
    }

    /// A flow with a CNM is held for its frame's serialization time at CR; released at line
    /// rate.
    #[test]
    fn limiter_spaces_frames_at_the_current_rate() {
        let mut b = Bench::new();
        let mut q = Qcn::new(params(), b.topo.ports.len(), 1);
        assert_eq!(q.on_host_send(3, 1500, SimTime::ZERO), None, "no CNM yet: not limited");
        let pkt = b.pkts.alloc(crate::net::Packet { kind: PktKind::Msg(Msg::Qcn(Cnm)), flow: 3, seq: 64, ..crate::net::Packet::blank() });
        let h0 = b.port("h0", "left");
        q.on_host_msg(Cnm, h0, pkt, &mut b.cx(SimTime::ZERO));
        let rate = q.rp.get(3).unwrap().as_ref().unwrap().rate_bps();
        assert_eq!(rate, 50_781_250_000, "100G NIC cut by 63/128 (the feedback saturates at 63)");
        assert_eq!(q.on_host_send(3, 1500, SimTime::from_us(1)), Some(SimTime::from_us(1) + ser_time(1500, rate)));
    }
}
