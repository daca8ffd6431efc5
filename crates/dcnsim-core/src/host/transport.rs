//! The one transport dispatch: what a flow's sender does when its NIC asks it for a packet,
//! when an ACK, NACK, SYN-ACK or CNP comes back and when its timers fire, and what its
//! receiver answers to data, for each transport (TCP, RoCE, UDP). The engine
//! (`engine/host_path.rs`) owns the packets, queues and events and acts on what these
//! return; it names no transport and no congestion control.

use super::cc::{CongestionControl, PathEcho, RateControl};
use super::roce::{RoceReply, RoceSender};
use super::tcp::{Segment, TcpParams, TcpSender};
use super::udp::UdpSource;
use super::uet::{UetParams, UetSender};
use super::{Cc, Flow, Transport};
use crate::net::{Ecn, Packet, PktKind};
use crate::sim::{ser_time, SimTime};

/// What a flow's retransmission timer did when it expired (`Sender::on_timeout`): the
/// timeouts it counts (RFC 6298 5.4's RTO for TCP; for UET, the packets it declared lost) and
/// whether the SYN goes again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expiry {
    pub lost: u32,
    pub syn: bool,
}

/// Sender side of a flow.
#[derive(Clone, Debug)]
pub enum Sender {
    Tcp(Box<TcpSender>),
    Udp(Box<UdpSource>),
    Roce(Box<RoceSender>),
    Uet(Box<UetSender>),
    /// Finished: the transport state is released (memory follows in-flight flows).
    Done,
}

/// Whether a flow may join its NIC's ready list.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ready {
    /// It has a segment to send now.
    Now,
    /// Nothing to send until an ACK (or the end of a hold) changes that.
    No,
    /// Its pacer holds it: schedule its wake-up at this time with this generation.
    Wake(SimTime, u32),
}

/// What the NIC's port sending a flow's segment looks like.
#[derive(Copy, Clone, Debug)]
pub struct Nic {
    pub mss: u32,
    pub header: u32,
    pub rate_bps: u64,
}

impl Nic {
    /// When segment `seg`, starting at `now`, is serialized: a paced sender whose next turn
    /// comes by then stays on the ready list.
    fn sent_by(self, seg: &Segment, now: SimTime) -> SimTime {
        now + ser_time((seg.len + self.header) as u64, self.rate_bps)
    }
}

/// What a sender answers when its NIC asks for a segment.
#[derive(Copy, Clone, Debug)]
pub enum Next {
    /// Send this segment with this ECN codepoint; `still`: another is ready at once (it
    /// stays on the ready list); `recheck`: a paced sender to look at again (`Sender::ready`).
    Send { seg: Segment, ect: Ecn, still: bool, recheck: bool },
    /// Nothing now: it left the ready list.
    Skip,
    /// Nothing now, but its pacer may allow one later: look at it again.
    Recheck,
}

/// What a receiver does with a data packet.
#[derive(Copy, Clone, Debug)]
pub struct Receipt {
    /// The reply the data packet turns into (`Data`: none, the packet is consumed) and the
    /// sequence number it carries, with the ECN-Echo of the data's CE.
    pub reply: PktKind,
    pub seq: u64,
    pub ece: bool,
    /// Bytes newly delivered in order (goodput).
    pub delivered: u64,
    /// Send the sender a CNP (RoCEv2's notification point).
    pub cnp: bool,
    /// Every byte has arrived: the flow is finished (a datagram flow: no ACK ends it).
    pub done: bool,
    /// A datagram (its frame latency counts in closed loops).
    pub datagram: bool,
    /// The reply carries selective acknowledgement blocks (`Receiver::sack_blocks`).
    pub sack: bool,
    /// A UET flow's: its reply may carry the receiver's count of bytes taken
    /// (`Sender::received_to_carry`), which the other transports' replies never do.
    pub uet: bool,
}

impl Sender {
    /// Whether the flow can do nothing more by itself: a datagram source that has made all
    /// of its `size` bytes (a lost datagram is never sent again, so the flow may never
    /// finish).
    pub fn spent(&self, size: u64) -> bool {
        matches!(self, Sender::Udp(u) if u.sent >= size)
    }
    /// A new flow's sender of `transport` at a NIC of `line_rate_bps`; `base_rtt`: the
    /// fabric's largest base RTT, asked only for a rate-controlled transport.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        transport: Transport,
        tcp: &TcpParams,
        roce: &super::roce::RoceParams,
        uet: &UetParams,
        udp: impl FnOnce() -> UdpSource,
        mss: u32,
        header: u32,
        line_rate_bps: u64,
        now: SimTime,
        base_rtt: impl FnOnce() -> SimTime,
        flow_hash: u32,
    ) -> Sender {
        match transport {
            Transport::Tcp(cc) => Sender::Tcp(Box::new(TcpSender::from_params(Cc::build(cc, &tcp.cc, tcp), mss, tcp))),
            Transport::Roce(cc) => Sender::Roce(Box::new(RoceSender::new(roce, cc, line_rate_bps, now, base_rtt(), mss))),
            Transport::Udp => Sender::Udp(Box::new(udp())),
            Transport::Uet(cc) => Sender::Uet(Box::new(UetSender::new(uet, cc, mss, header, line_rate_bps, base_rtt(), flow_hash))),
        }
    }

    /// A new message continues `prev`'s connection: TCP keeps its window, RTT estimate and
    /// algorithm state, RoCE its rate state.
    pub fn continue_from(&mut self, prev: Sender) {
        match (self, prev) {
            (Sender::Roce(r), Sender::Roce(p)) => r.cc = p.cc,
            (Sender::Tcp(t), Sender::Tcp(p)) => t.continue_connection(&p),
            _ => {}
        }
    }

    /// A new connection opens (not a continued one): its congestion control learns the
    /// handshake's RTT (`rtt`: asked only where the algorithm reads it) and its seed.
    pub fn open(&mut self, seed: u64, rtt: impl FnOnce() -> SimTime, now: SimTime) {
        match self {
            Sender::Tcp(t) => t.open(seed, rtt, now),
            Sender::Uet(u) => u.open(seed),
            _ => {}
        }
    }

    /// UE's ACK_CC `rcvd_bytes` the flow's ACK carries (`UetSender::received_to_carry`).
    pub fn received_to_carry(&self) -> Option<u64> {
        match self {
            Sender::Uet(u) => u.received_to_carry(),
            _ => None,
        }
    }

    /// The ACK about to be handled carries the receiver's count `taken` (UET only).
    pub fn ack_carries(&mut self, taken: u64) {
        if let Sender::Uet(u) = self {
            u.ack_carries(taken);
        }
    }

    /// The entropy of data segment `seg` of a flow whose own is `flow_hash`: a UET sender
    /// chooses its own (`transport.path`, spraying by default; REPS), the others follow
    /// `path`.
    #[inline]
    pub fn entropy(&mut self, path: crate::host::path::PathChoice, flow_hash: u32, seg: &Segment) -> u32 {
        match self {
            Sender::Uet(u) => u.entropy(seg),
            // a TCP resend after the n-th timeout is on its (n + 1)-th try at least: each
            // timeout moves the resends to other paths, as Linux rehashes a timed-out
            // connection's flow label (`sk_rethink_txhash`)
            Sender::Tcp(t) if seg.retx => path.entropy(flow_hash, seg.seq, 1 + t.timeouts),
            _ => path.entropy(flow_hash, seg.seq, seg.retx as u32),
        }
    }

    /// Open a TCP connection with a SYN first (`transport.handshake`): no data until the
    /// SYN-ACK; the SYN is retransmitted on the RTO.
    pub fn await_syn_ack(&mut self, now: SimTime) {
        if let Sender::Tcp(t) = self {
            t.syn_pending = true;
            t.arm_if_idle(now);
        }
    }

    /// The SYN-ACK arrived: whether it opened a pending connection.
    pub fn on_syn_ack(&mut self) -> bool {
        match self {
            Sender::Tcp(t) if t.syn_pending => {
                t.on_syn_ack();
                true
            }
            _ => false,
        }
    }

    /// Whether the flow has a segment to send at `now`: a paced sender that must wait arms
    /// its one live wake-up (at its turn, or when its rate next rises).
    #[inline]
    pub fn ready(&mut self, size: u64, now: SimTime) -> Ready {
        match self {
            Sender::Tcp(t) => {
                if !t.can_send(size) {
                    return Ready::No;
                }
                match t.paced_until() {
                    Some(at) if at > now => t.pacer.as_mut().and_then(|p| p.arm(at)).map_or(Ready::No, |g| Ready::Wake(at, g)),
                    _ => Ready::Now,
                }
            }
            Sender::Roce(r) => {
                if !r.has_work(size) {
                    return Ready::No;
                }
                r.cc.advance(now);
                if r.next_allowed() > now {
                    let wake = r.wake_at(now);
                    return r.pacer.arm(wake).map_or(Ready::No, |g| Ready::Wake(wake, g));
                }
                Ready::Now
            }
            Sender::Uet(u) => {
                if u.can_send(size) {
                    Ready::Now
                } else {
                    Ready::No
                }
            }
            Sender::Udp(_) | Sender::Done => Ready::No,
        }
    }

    /// The NIC asks a ready flow of `size` bytes for its next segment at `now`.
    #[inline]
    pub fn next(&mut self, size: u64, nic: Nic, now: SimTime) -> Next {
        match self {
            Sender::Tcp(t) => {
                if t.paced_until().is_some_and(|at| at > now) {
                    return Next::Recheck;
                }
                let Some(seg) = t.next_segment(size) else {
                    return Next::Skip;
                };
                t.arm_if_idle(now);
                t.on_wire(&seg, seg.len + nic.header, now, size);
                let can = t.can_send(size);
                // a paced sender stays ready only if its next turn comes by the time this
                // segment is serialized; else it is looked at again (and woken at its turn)
                let still = can && t.paced_until().is_none_or(|at| at <= nic.sent_by(&seg, now));
                Next::Send { seg, ect: t.cc.ect(), still, recheck: can && !still }
            }
            Sender::Roce(r) => match r.next_segment(size, nic.mss, nic.header, now) {
                Some(seg) => {
                    // stay ready if the pacer allows the next packet by the time this one
                    // is serialized (always, at line rate)
                    let still = r.has_work(size) && r.next_allowed() <= nic.sent_by(&seg, now);
                    Next::Send { seg, ect: Ecn::Ect0, still, recheck: !still }
                }
                None => Next::Recheck,
            },
            Sender::Uet(u) => match u.next_segment(size, now) {
                Some(seg) => Next::Send { seg, ect: Ecn::Ect0, still: u.can_send(size), recheck: false },
                None => Next::Skip,
            },
            Sender::Udp(_) | Sender::Done => Next::Skip,
        }
    }

    /// Whether the sender runs its own rate control at the NIC (RoCE's algorithm), so a
    /// switch mechanism's NIC rate limiter (QCN's reaction point) leaves it alone.
    pub fn rate_controlled(&self) -> bool {
        matches!(self, Sender::Roce(_))
    }

    /// An ACK or NACK `p` of a flow of `size` bytes: its `seq` the cumulative point (a
    /// NACK's: the next byte expected), `ts` the echoed send time, `int` the echoed
    /// telemetry. Some(true) when everything is acknowledged; None: the transport takes no
    /// acknowledgements.
    #[inline]
    pub fn on_ack(&mut self, p: &Packet, now: SimTime, size: u64, echo: PathEcho) -> Option<bool> {
        let (kind, ack, ece, ts) = (p.kind, p.seq, p.ece, p.ts);
        Some(match self {
            Sender::Tcp(tcp) => tcp.on_ack(ack, ece, ts, now, size, echo).finished,
            Sender::Roce(r) if kind == PktKind::Nack => r.on_nack(ack, ts, now, size, echo),
            Sender::Roce(r) => r.on_ack(ack, ts, now, size, echo),
            Sender::Uet(u) if kind == PktKind::Nack => {
                u.on_nack(ack, ts, p.hash, now, size);
                false
            }
            Sender::Uet(u) => u.on_ack(ack, ece, ts, p.hash, now, size, echo),
            Sender::Udp(_) | Sender::Done => return None,
        })
    }

    /// A credit of this flow's receiver arrived: it has granted bytes up to `granted`
    /// (`host::credit`).
    pub fn on_credit(&mut self, granted: u64) {
        match self {
            Sender::Tcp(t) => t.cc.on_credit(&mut t.w, granted, t.snd_una),
            Sender::Uet(u) => u.on_pull(granted),
            _ => {}
        }
    }

    /// The RCCC pull target its last data packet carries (`host/rccc.rs`), if it runs RCCC;
    /// `sharing`: the flows its NIC holds ready to send, this one included.
    #[inline]
    pub fn pull_target(&self, size: u64, sharing: u32) -> Option<u64> {
        match self {
            Sender::Uet(u) => u.pull_target(size, sharing),
            _ => None,
        }
    }

    /// Its RCCC credit's cap, the largest window, if it runs RCCC.
    pub fn credit_cap(&self) -> Option<u64> {
        match self {
            Sender::Uet(u) => u.credit_cap(),
            _ => None,
        }
    }

    /// A Congestion Notification Packet for this flow arrived.
    pub fn on_cnp(&mut self, now: SimTime) {
        if let Sender::Roce(r) = self {
            r.on_cnp(now);
        }
    }

    /// The retransmission timer fields (deadline, queued event time, generation) of a
    /// reliable sender.
    pub fn timer(&mut self) -> Option<(&mut Option<SimTime>, &mut Option<SimTime>, &mut u32)> {
        match self {
            Sender::Tcp(t) => Some((&mut t.rto_deadline, &mut t.timer_at, &mut t.timer_gen)),
            Sender::Roce(r) => Some((&mut r.rto_deadline, &mut r.timer_at, &mut r.timer_gen)),
            Sender::Uet(u) => Some((&mut u.rto_deadline, &mut u.timer_at, &mut u.timer_gen)),
            Sender::Udp(_) | Sender::Done => None,
        }
    }

    /// The retransmission timer of a flow of `size` bytes expired at `now`: what it declared
    /// lost, and whether to send the SYN again.
    pub fn on_timeout(&mut self, now: SimTime, size: u64) -> Expiry {
        match self {
            Sender::Tcp(tcp) => {
                let was = tcp.timeouts;
                let again = tcp.on_timer(now, size);
                Expiry { lost: tcp.timeouts - was, syn: again && tcp.syn_pending }
            }
            Sender::Roce(r) => Expiry { lost: r.on_timeout(now) as u32, syn: false },
            Sender::Uet(u) => {
                let was = u.timeouts;
                u.on_timeout(now, size);
                Expiry { lost: u.timeouts - was, syn: false }
            }
            Sender::Udp(_) | Sender::Done => Expiry::default(),
        }
    }

    /// The RTS a UET sender with RCCC owes now (`UetSender::take_rts`): the pull target it
    /// carries. `sharing`: the flows its NIC holds ready to send, this one included.
    pub fn take_rts(&mut self, size: u64, sharing: u32) -> Option<u64> {
        match self {
            Sender::Uet(u) => u.take_rts(size, sharing),
            _ => None,
        }
    }

    /// A pacing wake-up of generation `gen` fired: whether it is the live one.
    pub fn pace_fired(&mut self, gen: u32) -> bool {
        match self {
            Sender::Tcp(t) => t.pacer.as_mut().is_some_and(|p| p.fire(gen)),
            Sender::Roce(r) => r.pacer.fire(gen),
            Sender::Uet(_) | Sender::Udp(_) | Sender::Done => false,
        }
    }

    /// The TCP sender, if the flow runs TCP (tests and diagnostics).
    pub fn tcp(&self) -> Option<&TcpSender> {
        match self {
            Sender::Tcp(t) => Some(t),
            _ => None,
        }
    }

    /// Bytes acknowledged so far, for a reliable sender.
    pub fn acked(&self) -> Option<u64> {
        match self {
            Sender::Tcp(t) => Some(t.snd_una),
            Sender::Roce(r) => Some(r.snd_una),
            Sender::Uet(u) => Some(u.snd_una),
            Sender::Udp(_) | Sender::Done => None,
        }
    }
}

impl Flow {
    /// The selective acknowledgement its receiver's ACK carries now: UE's SACK bitmap where
    /// a UET flow reports one, else the receiver's blocks.
    pub fn sack_to_send(&self) -> crate::net::Sack {
        match &self.sender {
            Sender::Uet(u) if u.reports_bitmap() => u.rx_bitmap().map_or_else(crate::net::Sack::default, |(base, bits)| crate::net::Sack::bitmap_of(base, bits)),
            _ => self.rx.sack_blocks(),
        }
    }

    /// The ACK a UET receiver answers an RTS with (htsim `UecSink::processRts`): its
    /// cumulative point, and whether the ACK carries a selective acknowledgement
    /// (`UetSender::rts_reply_sacks`).
    pub fn rts_reply(&mut self) -> (u64, bool) {
        if self.receiver_complete() {
            return (self.size, false);
        }
        let sack = match &self.sender {
            Sender::Uet(u) => u.rts_reply_sacks(self.rx.has_sack()),
            _ => self.rx.has_sack(),
        };
        (self.rx.rcv_nxt, sack)
    }

    /// Whether a reliable flow's receiver holds every byte (it then only re-acknowledges).
    pub fn receiver_complete(&self) -> bool {
        match &self.sender {
            Sender::Tcp(_) | Sender::Uet(_) => self.rx.rcv_nxt >= self.size,
            Sender::Roce(_) => self.rrx.rcv_nxt >= self.size,
            Sender::Udp(_) | Sender::Done => false,
        }
    }

    /// The receiver takes a data packet (`payload` bytes of data from `seq`; a datagram's
    /// whole size as it was sent; `ce` its CE mark) at `now`; `cnp_interval` limits its CNPs.
    #[inline(always)]
    pub fn receive(&mut self, seq: u64, payload: u32, ce: bool, ar: bool, now: SimTime, cnp_interval: SimTime) -> Receipt {
        let uet = matches!(self.sender, Sender::Uet(_));
        let mut r = Receipt { reply: PktKind::Data, seq: 0, ece: false, delivered: 0, cnp: false, done: false, datagram: false, sack: false, uet };
        if self.receiver_complete() {
            // every byte is in: the cumulative ACK with the packet's CE echoed, as a finished
            // flow's receiver answers (host_rx), and no CNP (its notification point's state
            // went with it)
            (r.reply, r.seq, r.ece) = (PktKind::Ack, self.size, ce);
            return r;
        }
        match &mut self.sender {
            Sender::Tcp(_) => {
                let before = self.rx.rcv_nxt;
                let ack = self.rx.on_data(seq, payload as u64);
                r.delivered = ack - before;
                (r.reply, r.seq, r.ece) = (PktKind::Ack, ack, ce);
                r.sack = self.rx.has_sack();
            }
            Sender::Uet(u) => {
                // delivered as it comes, in any order: a packet not held before
                let new = self.rx.holds_not(seq, payload as u64);
                let first = self.rx.rcv_nxt == 0 && !self.rx.has_sack();
                let ack = self.rx.on_data(seq, payload as u64);
                r.delivered = if new { payload as u64 } else { 0 };
                let held_above = self.rx.has_sack();
                // (with ACK coalescing a packet may go unanswered: the reply is then none)
                let reply = if u.ack_now(payload + u.header(), new, first, ce, ar, !held_above) { PktKind::Ack } else { PktKind::Data };
                (r.reply, r.seq, r.ece) = (reply, ack, ce);
                let mss = u.mss() as u64;
                let rx = &self.rx;
                r.sack = match u.reports_bitmap() {
                    true => reply == PktKind::Ack && u.sack_bitmap(seq / mss, ack / mss, ce || (new && ar), |base| rx.held_bitmap(base, mss)),
                    false => held_above,
                };
            }
            Sender::Roce(s) => {
                let before = self.rrx.rcv_nxt;
                let reply = self.rrx.on_data(seq, payload as u64);
                r.delivered = self.rrx.rcv_nxt - before;
                r.cnp = ce && s.cc.wants_cnp() && self.rrx.np.on_marked(cnp_interval, now);
                (r.reply, r.seq) = match reply {
                    RoceReply::Ack(a) => (PktKind::Ack, a),
                    RoceReply::Nack(e) => (PktKind::Nack, e),
                    RoceReply::Nothing => (PktKind::Data, 0),
                };
            }
            Sender::Udp(_) => {
                // the datagram's own bytes (its wire size when sent): telemetry a switch
                // wrote into it on the way grew the wire size, not what was delivered
                self.rx.bytes += payload as u64;
                r.delivered = payload as u64;
                r.done = self.rx.bytes >= self.size;
                r.datagram = true;
            }
            Sender::Done => {}
        }
        r
    }
}
