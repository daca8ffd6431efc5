//! An Ultra Ethernet-style reliable unordered delivery transport (UE Specification 1.0,
//! the packet delivery sublayer's RUD service; the UEC's htsim, `uec.cpp`, `UecSrc` and
//! `UecSink`): every packet has a sequence number (its index in the message, the PSN), the
//! receiver acknowledges packets with its cumulative point and selective
//! acknowledgements and delivers each packet as it comes, in any order; a trimmed packet's
//! header is answered by a NACK naming it, and the sender resends that packet at once; a
//! retransmission timer covers what neither ACK nor NACK reports. The sender sprays: each
//! packet carries an entropy of its own (the UDP source port UE uses for multipath), drawn
//! afresh for a retransmission (`transport.path`, default "spray" for UET flows).
//!
//! Readings (where the spec leaves the sender a choice, or the model is coarser than a
//! NIC; htsim's choices followed where it makes one): sequence numbers are bytes as in the
//! other transports, one packet per MSS, so a PSN is `seq / mss`; the receiver coalesces
//! its ACKs as htsim's does (`transport.uet.ack_every`, 16 KB by default as there: an ACK
//! per that many bytes, and at once for a CE mark, the first packet, a duplicate and a
//! packet whose sender sets AR, `UetSender::ack_now`; 1 B acknowledges every packet); the
//! ACK's selective acknowledgement is UE's 64-packet SACK bitmap by default (as htsim's
//! `UecSink::sack` builds it: `UetSender::sack_bitmap`), or byte ranges with
//! `transport.uet.sack = "ranges"` (`Sack`, the block of the packet that triggered it
//! first, at most three). Ranges tell the sender what the
//! bitmap tells it while every packet is acknowledged and no ACK is lost; with coalescing
//! the bitmap reports every held packet of the 64 ending at the ACK's, three ranges only
//! the latest three runs of them. The ACK
//! echoes its packet's send time, so every ACK is an RTT sample, a retransmission's too;
//! the bytes in flight count headers, as htsim's do. The retransmission timer is htsim's: a
//! fixed `rto` from the send time of the oldest packet in flight, no back-off; a packet
//! that times out is resent and its bytes come off NSCC's window. NACKed and timed-out
//! packets are resent before new data, lowest first.

use super::cc::nscc::{Nscc, NsccParams};
use super::cc::PathEcho;
use super::path::PathChoice;
use super::rccc::{asking, Credit};
use super::reps::{PathFeedback, Reps};
use super::UetCc;
use super::tcp::Segment;
use crate::sim::SimTime;
use std::collections::VecDeque;

/// The UET parameters every flow shares.
#[derive(Clone, Debug)]
pub struct UetParams {
    /// NSCC's constants (sender-based congestion control).
    pub nscc: NsccParams,
    /// The retransmission timeout, from a packet's send time.
    pub rto: SimTime,
    /// How the sender sets each packet's entropy (`transport.path`, default spraying).
    pub path: PathChoice,
    /// The receiver's ACK coalescing (`transport.uet.ack_every`): an ACK per this many
    /// bytes on the wire, 0 for one per packet.
    pub ack_every: u32,
    /// The ACK's selective acknowledgement is UE's 64-packet SACK bitmap
    /// (`transport.uet.sack = "bitmap"`) instead of byte ranges.
    pub sack_bitmap: bool,
    /// The sender counts its bytes in flight by what its receiver reports taking (UE's
    /// ACK_CC `rcvd_bytes`, `transport.uet.in_flight = "received"`) instead of by the
    /// packets its ACKs acknowledge.
    pub in_flight_received: bool,
}

/// Packets a SACK bitmap covers (UE Specification 1.0's SACK_BITMAP: 64 bits).
pub const SACK_BITMAP_PACKETS: u64 = 64;

/// The receiver's default ACK coalescing, bytes on the wire per ACK: the UEC's htsim's
/// (`UecSink::_bytes_unacked_threshold`, 16,384).
pub const ACK_EVERY_DEFAULT: u32 = 16_384;

/// What the sender knows of one packet it has sent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum PktState {
    /// Sent at this time, neither acknowledged nor reported lost.
    InFlight(SimTime),
    /// Selectively or cumulatively acknowledged.
    Acked,
    /// NACKed (its header arrived trimmed) or timed out: to resend.
    Lost,
}

/// The sender of one UET flow.
#[derive(Clone, Debug)]
pub struct UetSender {
    pub cc: Nscc,
    /// The flow's own entropy, and how its packets' entropies derive from it.
    flow_hash: u32,
    path: PathChoice,
    /// REPS state, where the flow uses it.
    reps: Option<Box<Reps>>,
    /// Whether NSCC's window limits it (not with RCCC alone), and its RCCC credit (with RCCC).
    windowed: bool,
    credit: Option<Box<Credit>>,
    /// An RTS is due (`take_rts`): the timer found packets lost, or nothing in flight after
    /// a whole timer's wait, with the credit spent (htsim `UecSrc::rtxTimerExpired`'s
    /// `sendRTS`). When the last went: at most one per `network_rtt`, as htsim's.
    rts_due: bool,
    last_rts: Option<SimTime>,
    network_rtt: SimTime,
    /// Payload bytes per packet, and header bytes on the wire per packet.
    mss: u32,
    header: u32,
    /// Everything below is acknowledged.
    pub snd_una: u64,
    /// The next byte never sent.
    pub snd_nxt: u64,
    /// The state of each packet from the one holding `snd_una` up to `snd_nxt`.
    states: VecDeque<PktState>,
    /// How often each of them was resent (beside `states`): every resend is sprayed
    /// on an entropy of its own.
    resent: VecDeque<u32>,
    /// Packets (by index) to resend, lowest first; an entry acknowledged since is skipped.
    resend: VecDeque<u64>,
    /// Bytes on the wire (headers included) sent and neither acknowledged nor reported lost.
    pub inflight: u64,
    /// NACKs taken (trimmed packets reported by the receiver) and packets timed out.
    pub nacks: u32,
    pub timeouts: u32,
    pub rto: SimTime,
    pub rto_deadline: Option<SimTime>,
    pub timer_at: Option<SimTime>,
    pub timer_gen: u32,
    /// ACK coalescing (`UetParams::ack_every`; 0: every packet is acknowledged).
    ack_every: u32,
    /// The receiver's side (the flow's two ends share this record): wire bytes taken since
    /// its last ACK, and an AR not yet answered by an ACK with nothing missing below it.
    rx_unacked: u32,
    rx_ack_request: bool,
    /// The receiver reports UE's SACK bitmap (`UetParams::sack_bitmap`): the one its
    /// latest ACK carries (base PSN, bits).
    sack_bitmap: bool,
    rx_bitmap: (u64, u64),
    /// UE's received-bytes count (`UetParams::in_flight_received`); None: in flight is
    /// what no ACK acknowledged yet (`inflight`).
    received: Option<Box<Received>>,
}

/// UE Specification 1.0's ACK_CC `rcvd_bytes` for NSCC, as the UEC's htsim has it
/// (`UecSink::_recvd_bytes`, `UecSrc::processAck`): every ACK carries the receiver's count
/// of bytes (on the wire) of new packets taken, and the sender takes its increase off its
/// bytes in flight and gives it to NSCC as the bytes newly delivered. So packets the
/// receiver holds but its ACKs' SACK has not reported yet (coalesced ACKs; an AR's bitmap
/// starts at its own packet) free the window as they arrive, not when a later ACK reports
/// them. A packet reported lost leaves the count when it is; if the receiver held it after
/// all, its report takes it off once more, and its acknowledgement puts it back (htsim
/// `handleAckno`, "don't double count"). A duplicate is not counted, so a resend of a
/// packet that was not lost stays in the count (as in htsim).
#[derive(Debug, Clone, Default)]
struct Received {
    /// The receiver's side: wire bytes of new packets taken.
    taken: u64,
    /// The count the ACK being handled carries (set by the engine before `on_ack`).
    carried: Option<u64>,
    /// The largest count an ACK brought so far.
    seen: u64,
    /// Bytes in flight by this count: below 0 where the count took off packets already
    /// reported lost (until they are resent or acknowledged), as htsim's `_in_flight` may.
    in_flight: i64,
}

impl UetSender {
    /// A new flow's sender at a NIC of `line_rate_bps`, `mss` payload and `header` bytes
    /// per packet, on a fabric whose largest unloaded RTT is `network_rtt`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(p: &UetParams, cc: UetCc, mss: u32, header: u32, line_rate_bps: u64, network_rtt: SimTime, flow_hash: u32) -> UetSender {
        let nscc = Nscc::new(&p.nscc, mss, mss + header, line_rate_bps, network_rtt);
        let (windowed, credited) = cc.parts();
        UetSender {
            credit: credited.then(|| Box::new(Credit::new(nscc.cwnd() as u64))),
            windowed,
            rts_due: false,
            last_rts: None,
            network_rtt,
            cc: nscc,
            flow_hash,
            path: p.path,
            reps: (p.path == PathChoice::Reps).then(|| Box::new(Reps::new(flow_hash as u64))),
            mss,
            header,
            snd_una: 0,
            snd_nxt: 0,
            states: VecDeque::new(),
            resent: VecDeque::new(),
            resend: VecDeque::new(),
            inflight: 0,
            nacks: 0,
            timeouts: 0,
            // never 0: the timer would fire at the same instant forever (see TcpSender::new)
            rto: p.rto.max(SimTime(1)),
            rto_deadline: None,
            timer_at: None,
            timer_gen: 0,
            ack_every: p.ack_every,
            rx_unacked: 0,
            rx_ack_request: false,
            sack_bitmap: p.sack_bitmap,
            rx_bitmap: (0, 0),
            received: p.in_flight_received.then(Box::default),
        }
    }

    /// The bytes in flight NSCC's window is checked against (`Received`), which may be
    /// below 0 (htsim checks `_cwnd >= _in_flight + size` on its signed count).
    #[inline]
    fn window_inflight(&self) -> i64 {
        match &self.received {
            None => self.inflight as i64,
            Some(r) => r.in_flight,
        }
    }

    /// Wire bytes of this flow's packets its receiver took (UE's ACK_CC `rcvd_bytes`), for
    /// the ACK it sends now to carry; None where the sender counts by acknowledgements.
    pub fn received_to_carry(&self) -> Option<u64> {
        self.received.as_ref().map(|r| r.taken)
    }

    /// The ACK about to be handled carries the receiver's count `taken` (`received_to_carry`).
    pub fn ack_carries(&mut self, taken: u64) {
        if let Some(r) = &mut self.received {
            r.carried = Some(taken);
        }
    }

    /// Add `delta` to the bytes in flight by received bytes (`Received`): a packet sent or
    /// a lost one acknowledged after all, or (negative) one reported lost.
    fn count_in_flight(&mut self, delta: i64) {
        if let Some(r) = &mut self.received {
            r.in_flight += delta;
        }
    }

    /// A new connection opens: its random draws (REPS's) are seeded by `seed`.
    pub fn open(&mut self, seed: u64) {
        if let Some(r) = &mut self.reps {
            r.seed(seed);
        }
    }

    /// The entropy of segment `seg`, about to be sent.
    #[inline]
    pub fn entropy(&mut self, seg: &Segment) -> u32 {
        match &mut self.reps {
            Some(r) => self.flow_hash ^ r.next(),
            None => {
                // (still in `resent`: nothing is acknowledged between sending and this)
                let i = (seg.seq / self.mss as u64 - self.base()) as usize;
                self.path.entropy(self.flow_hash, seg.seq, self.resent[i])
            }
        }
    }

    /// Feedback for REPS on the packet whose entropy `hash` an ACK or NACK echoes.
    fn path_feedback(&mut self, hash: u32, fb: PathFeedback, now: SimTime) {
        if let Some(r) = &mut self.reps {
            r.feedback(hash ^ self.flow_hash, fb, now);
        }
    }

    /// The index of the packet holding `snd_una` (the first of `states`).
    fn base(&self) -> u64 {
        self.snd_una / self.mss as u64
    }

    /// The payload bytes of packet `k` of a message of `size` bytes.
    fn len_of(&self, k: u64, size: u64) -> u64 {
        (size - k * self.mss as u64).min(self.mss as u64)
    }

    /// Packet `k`'s bytes on the wire.
    fn wire_of(&self, k: u64, size: u64) -> u64 {
        self.len_of(k, size) + self.header as u64
    }

    /// The first packet to resend that is still lost.
    fn next_resend(&mut self) -> Option<u64> {
        while let Some(&k) = self.resend.front() {
            match k.checked_sub(self.base()).and_then(|i| self.states.get(i as usize)) {
                Some(PktState::Lost) => return Some(k),
                _ => {
                    self.resend.pop_front();
                }
            }
        }
        None
    }

    /// Queue packet `k` for resending, in order.
    fn queue_resend(&mut self, k: u64) {
        let at = self.resend.partition_point(|&q| q < k);
        if self.resend.get(at) != Some(&k) {
            self.resend.insert(at, k);
        }
    }

    /// Whether a packet may go now: one to resend or new data, within the window and the
    /// credit.
    pub fn can_send(&mut self, size: u64) -> bool {
        let next = match self.next_resend() {
            Some(k) => self.wire_of(k, size),
            None if self.snd_nxt < size => (size - self.snd_nxt).min(self.mss as u64) + self.header as u64,
            None => return false,
        };
        if self.windowed && (self.window_inflight() + next as i64) as f64 > self.cc.cwnd() {
            return false;
        }
        match &self.credit {
            Some(c) => c.credit > 0,
            None => true,
        }
    }

    /// The RCCC pull target a packet sent now carries (None without RCCC). `sharing`: the
    /// flows its NIC holds ready to send, this one included.
    pub fn pull_target(&self, size: u64, sharing: u32) -> Option<u64> {
        let c = self.credit.as_ref()?;
        let left = size - self.snd_nxt;
        let backlog = left + left.div_ceil(self.mss as u64) * self.header as u64;
        let resend = self.resend.len() as u64 * (self.mss + self.header) as u64;
        Some(c.target(backlog, resend, self.windowed.then(|| self.cc.cwnd()), (self.mss + self.header) as u64, sharing))
    }

    /// The RTS due now, if one is (RCCC): the pull target it carries, asking for a pull
    /// whatever the target (`rccc::asking`: a pull lost on the way leaves the receiver
    /// believing it granted what the sender never got, and only a pull repeating the
    /// cumulative grant repairs that).
    pub fn take_rts(&mut self, size: u64, sharing: u32) -> Option<u64> {
        if !std::mem::take(&mut self.rts_due) {
            return None;
        }
        self.pull_target(size, sharing).map(asking)
    }

    /// Ask for credit with an RTS, unless one went within the last network RTT.
    fn ask(&mut self, now: SimTime) {
        if self.last_rts.is_none_or(|t| now >= t + self.network_rtt) {
            self.rts_due = true;
            self.last_rts = Some(now);
        }
    }

    /// Its RCCC credit's cap (the largest window), if it runs RCCC.
    pub fn credit_cap(&self) -> Option<u64> {
        self.credit.as_ref().map(|c| c.cap())
    }

    /// A pull of the receiver granting `granted` bytes cumulatively.
    pub fn on_pull(&mut self, granted: u64) {
        if let Some(c) = &mut self.credit {
            c.on_pull(granted);
        }
    }

    /// The next packet to send at `now`, if the window allows one: a lost one first.
    pub fn next_segment(&mut self, size: u64, now: SimTime) -> Option<Segment> {
        if !self.can_send(size) {
            return None;
        }
        let (k, mut seg) = match self.next_resend() {
            Some(k) => {
                self.resend.pop_front();
                (k, Segment { seq: k * self.mss as u64, len: self.len_of(k, size) as u32, retx: true, ar: false })
            }
            None => {
                let seq = self.snd_nxt;
                let len = (size - seq).min(self.mss as u64);
                self.snd_nxt += len;
                self.states.push_back(PktState::Lost);
                self.resent.push_back(0);
                (seq / self.mss as u64, Segment { seq, len: len as u32, retx: false, ar: false })
            }
        };
        let i = (k - self.base()) as usize;
        self.states[i] = PktState::InFlight(now);
        if seg.retx {
            self.resent[i] += 1;
        }
        let wire = seg.len as u64 + self.header as u64;
        self.inflight += wire;
        self.count_in_flight(wire as i64);
        if let Some(c) = &mut self.credit {
            c.credit -= wire as i64;
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
        }
        // htsim's AR (`UecSrc::sendNewPacket`, `sendRtxPacket`): a resend, the last new
        // packet, and one after which the window or the credit has no room for another
        seg.ar = self.ack_every > 0
            && (seg.retx
                || self.snd_nxt >= size
                || (self.windowed && (self.window_inflight() + (self.mss + self.header) as i64) as f64 >= self.cc.cwnd())
                || self.credit.as_ref().is_some_and(|c| c.credit <= 0));
        Some(seg)
    }

    /// Header bytes on the wire per packet.
    pub fn header(&self) -> u32 {
        self.header
    }

    /// The receiver took a packet of `wire` bytes (`new`: not held before; `first`: it held
    /// nothing before; `ce`: marked; `ar`: its sender asks for an ACK; `drained`: nothing
    /// is missing below the highest byte held): whether it acknowledges now. With `ack_every` set, as htsim's
    /// `UecSink::processData`: at once for a duplicate, the first packet, a CE mark, an AR,
    /// and, after an AR, once the packets missing below it have come; else once `ack_every`
    /// bytes have come since the last ACK.
    pub fn ack_now(&mut self, wire: u32, new: bool, first: bool, ce: bool, ar: bool, drained: bool) -> bool {
        if let Some(r) = self.received.as_mut().filter(|_| new) {
            r.taken += wire as u64;
        }
        if self.ack_every == 0 {
            return true;
        }
        self.rx_unacked = self.rx_unacked.saturating_add(wire);
        let mut now = !new || first || ce || self.rx_unacked >= self.ack_every;
        if new {
            self.rx_ack_request |= ar;
            now |= ar;
            if drained && self.rx_ack_request {
                self.rx_ack_request = false;
                now = true;
            }
        }
        if now {
            self.rx_unacked = 0;
        }
        now
    }

    /// The receiver took the packet of PSN `psn` and holds every packet below PSN `cum`
    /// (the first it misses); `from_it`: a CE mark or, on a new packet, an AR. With UE's
    /// SACK bitmap (`UetParams::sack_bitmap`), the bitmap its ACK carries, as htsim's
    /// `UecSink` builds it: the 64 packets ending at this one, none at or below `cum`
    /// (`sackBitmapBase`: max(psn - 63, cum + 1)), or with `from_it` the 64 starting at
    /// it; `held` gives the bits of 64 packets from a base. Whether it carries one.
    pub fn sack_bitmap(&mut self, psn: u64, cum: u64, from_it: bool, held: impl Fn(u64) -> u64) -> bool {
        let base = if from_it { psn } else { (psn + 1).saturating_sub(SACK_BITMAP_PACKETS).max(cum + 1) };
        self.rx_bitmap = (base, held(base));
        self.rx_bitmap.1 != 0
    }

    /// The SACK bitmap the receiver's latest ACK carries, where it has one (`sack_bitmap`).
    pub fn rx_bitmap(&self) -> Option<(u64, u64)> {
        (self.rx_bitmap.1 != 0).then_some(self.rx_bitmap)
    }

    /// Whether the receiver's answer to an RTS carries a selective acknowledgement, where it
    /// holds packets above its cumulative point (`held_above`). With UE's bitmap it carries
    /// none: htsim's RTS takes the sender's next PSN (`UecSrc::sendRTS`, `_highest_sent`),
    /// above every packet sent, and the reply's bitmap starts at it (an RTS asks for an
    /// ACK, `UecSink::processRts`), so it reports no packet the receiver holds; the sender
    /// learns of those from later ACKs or resends them at its timer. With byte ranges
    /// (dcnsim's own reading) the receiver's blocks, as on any ACK.
    pub fn rts_reply_sacks(&self, held_above: bool) -> bool {
        !self.sack_bitmap && held_above
    }

    /// Whether its receiver reports UE's SACK bitmap (`UetParams::sack_bitmap`).
    pub fn reports_bitmap(&self) -> bool {
        self.sack_bitmap
    }

    /// Payload bytes per packet.
    pub fn mss(&self) -> u32 {
        self.mss
    }

    /// Mark the packets of bytes [start, end) acknowledged: the wire bytes newly so.
    fn ack_range(&mut self, start: u64, end: u64, size: u64) -> u64 {
        let mss = self.mss as u64;
        let base = self.base();
        let (first, last) = (start.div_ceil(mss).max(base), end.min(self.snd_nxt).div_ceil(mss));
        let mut newly = 0;
        for k in first..last {
            // a block ends at a packet's end (the last packet's end is the message's)
            if (k + 1) * mss > end && end < size {
                break;
            }
            let wire = self.wire_of(k, size);
            match std::mem::replace(&mut self.states[(k - base) as usize], PktState::Acked) {
                PktState::InFlight(_) => {
                    self.inflight -= wire;
                    newly += wire;
                }
                PktState::Lost => {
                    newly += wire;
                    // reported lost, it left the count of bytes in flight; if the
                    // receiver held it after all, its count took it off again
                    self.count_in_flight(wire as i64);
                }
                PktState::Acked => {}
            }
        }
        newly
    }

    /// An ACK: `cum` is the receiver's cumulative point, `echo.sack` its blocks above it
    /// (the triggering packet's first) or `echo.bitmap` UE's SACK bitmap, `ece` the
    /// packet's CE, `ts` its send time, `hash`
    /// its entropy. True when every byte is acknowledged.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(&mut self, cum: u64, ece: bool, ts: SimTime, hash: u32, now: SimTime, size: u64, echo: PathEcho) -> bool {
        self.path_feedback(hash, if ece { PathFeedback::Congested } else { PathFeedback::Good }, now);
        if let Some(c) = &mut self.credit {
            c.stop_speculating();
        }
        // UE's rcvd_bytes: what the receiver took since the last count
        let delivered = self.received.as_mut().map(|r| {
            let d = r.carried.take().map_or(0, |c| c.saturating_sub(r.seen));
            r.seen += d;
            r.in_flight -= d as i64;
            d
        });
        let mut newly = self.ack_range(self.snd_una, cum, size);
        for &(s, e) in echo.sack {
            newly += self.ack_range(s, e, size);
        }
        if let Some((base, mut bits)) = echo.bitmap {
            let mss = self.mss as u64;
            while bits != 0 {
                let k = base + bits.trailing_zeros() as u64;
                bits &= bits - 1;
                newly += self.ack_range(k * mss, ((k + 1) * mss).min(size), size);
            }
        }
        while self.states.front() == Some(&PktState::Acked) {
            self.states.pop_front();
            self.resent.pop_front();
            let k = self.base();
            self.snd_una += self.len_of(k, size);
        }
        let inflight = self.window_inflight().max(0) as u64;
        self.cc.on_ack(delivered.unwrap_or(newly), ece, Some(now - ts), now, inflight);
        if self.inflight == 0 {
            self.rto_deadline = self.credit_wait_deadline(now, size);
        }
        self.snd_una >= size
    }

    /// A NACK: the packet starting at byte `seq`, sent at `ts` with entropy `hash`, reached
    /// the receiver trimmed.
    pub fn on_nack(&mut self, seq: u64, ts: SimTime, hash: u32, now: SimTime, size: u64) {
        self.path_feedback(hash, PathFeedback::Congested, now);
        if let Some(c) = &mut self.credit {
            c.stop_speculating();
        }
        let k = seq / self.mss as u64;
        let Some(i) = k.checked_sub(self.base()) else { return };
        // stale: acknowledged since, or already resent (this NACK is of an earlier copy)
        match self.states.get(i as usize) {
            Some(PktState::InFlight(sent)) if *sent == ts => {}
            _ => return,
        }
        self.states[i as usize] = PktState::Lost;
        let wire = self.wire_of(k, size);
        self.inflight -= wire;
        self.count_in_flight(-(wire as i64));
        self.nacks += 1;
        self.queue_resend(k);
        let inflight = self.window_inflight().max(0) as u64;
        self.cc.on_nack(wire, now - ts, now, inflight);
        if self.inflight == 0 {
            self.rto_deadline = self.credit_wait_deadline(now, size);
        }
    }

    /// The timer once nothing is in flight: none, unless packets wait on credit that may
    /// never come. The receiver pulls up to the targets the sender's packets carried: a
    /// packet sent on speculative credit as its flow's last carried none for itself, so,
    /// trimmed, its resend would wait for a pull forever; a lost pull or a lost RTS leaves
    /// data waiting the same way. At the timer's expiry the flow asks again (an RTS,
    /// `on_timeout`).
    fn credit_wait_deadline(&mut self, now: SimTime, size: u64) -> Option<SimTime> {
        (self.starved() && (self.next_resend().is_some() || self.snd_nxt < size)).then(|| now + self.rto)
    }

    /// RCCC's credit is spent (false without RCCC).
    fn starved(&self) -> bool {
        self.credit.as_ref().is_some_and(|c| c.credit <= 0)
    }

    /// The retransmission timer's deadline passed at `now`: every packet sent an `rto` or
    /// more ago is lost (htsim recovers them one expiry at a time, each at once after the
    /// last). The timer then waits for the oldest packet still in flight, or, with nothing
    /// in flight and packets waiting on spent credit, for another `rto`. Where the credit is
    /// spent the flow asks for it (an RTS, `take_rts`): when it declared packets lost, and
    /// when it found nothing in flight after that wait. Whether it declared any lost.
    pub fn on_timeout(&mut self, now: SimTime, size: u64) -> bool {
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return false,
        }
        let base = self.base();
        let mut oldest = None::<SimTime>;
        let mut lost = Vec::new();
        for (i, st) in self.states.iter_mut().enumerate() {
            if let PktState::InFlight(sent) = *st {
                if sent + self.rto <= now {
                    *st = PktState::Lost;
                    lost.push(base + i as u64);
                } else {
                    oldest = Some(oldest.map_or(sent, |o| o.min(sent)));
                }
            }
        }
        if !lost.is_empty() {
            self.path_feedback(self.flow_hash, PathFeedback::Timeout, now);
        }
        for &k in &lost {
            let wire = self.wire_of(k, size);
            self.inflight -= wire;
            self.count_in_flight(-(wire as i64));
            self.timeouts += 1;
            self.queue_resend(k);
            self.cc.on_timeout(wire);
        }
        if self.starved() && (!lost.is_empty() || oldest.is_none()) {
            self.ask(now);
        }
        self.rto_deadline = match oldest {
            Some(o) => Some(o + self.rto),
            None => self.credit_wait_deadline(now, size),
        };
        !lost.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sender() -> UetSender {
        sender_with(UetCc::Nscc)
    }

    /// A 1,000 B-packet sender at 100 Gbit/s, a 100 us timer, a 10 us network RTT.
    fn sender_with(cc: UetCc) -> UetSender {
        UetSender::new(&params(), cc, 1000, 0, 100_000_000_000, SimTime::from_us(10), 7)
    }

    fn params() -> UetParams {
        UetParams { nscc: NsccParams::defaults(true), rto: SimTime::from_us(100), path: PathChoice::Spray, ack_every: 0, sack_bitmap: false, in_flight_received: false }
    }

    fn blocks(b: &[(u64, u64)]) -> PathEcho<'_> {
        PathEcho { sack: b, ..Default::default() }
    }

    /// htsim's RTS answer: its bitmap starts at the RTS's own PSN, above every packet held,
    /// so with the bitmap it reports none; with ranges the receiver's blocks.
    #[test]
    fn an_rts_is_answered_without_a_bitmap_and_with_the_ranges() {
        let bitmap = UetSender::new(&UetParams { sack_bitmap: true, ..params() }, UetCc::Rccc, 1_000, 64, 100_000_000_000, SimTime::from_us(10), 7);
        assert!(!bitmap.rts_reply_sacks(true));
        let ranges = sender_with(UetCc::Rccc);
        assert!(ranges.rts_reply_sacks(true));
        assert!(!ranges.rts_reply_sacks(false));
    }

    /// UE's SACK bitmap as htsim's `UecSink` builds it, against three ranges. Packets of
    /// 1,000 B; 0, 2, 4, 6, 8 and 9 arrive (1, 3, 5 and 7 missing): the ACK of packet 9
    /// carries the 64 packets from max(9 - 63, 1 + 1) = PSN 2, bits for 2, 4, 6, 8 and 9,
    /// where three ranges (the latest first) leave out packet 2. A sender that sent 0-9 and
    /// takes that ACK holds the four missing packets in flight with the bitmap, five with
    /// the ranges. A CE-marked packet's bitmap starts at it; packet 70 arriving, the bitmap
    /// ends at it and no longer reaches packets 2-6.
    #[test]
    fn the_sack_bitmap_reports_what_three_ranges_cannot() {
        let mss = 1_000;
        let mut rx = crate::host::tcp::Receiver::new(true);
        for k in [0u64, 2, 4, 6, 8, 9] {
            rx.on_data(k * mss, mss);
        }
        let p = UetParams { sack_bitmap: true, ..params() };
        let mut u = UetSender::new(&p, UetCc::Nscc, 1000, 0, 100_000_000_000, SimTime::from_us(10), 7);
        assert!(u.reports_bitmap());
        assert!(u.sack_bitmap(9, rx.rcv_nxt / mss, false, |b| rx.held_bitmap(b, mss)));
        assert_eq!(u.rx_bitmap(), Some((2, 0b1101_0101)));
        assert_eq!(rx.sack_blocks().blocks(), &[(8_000, 10_000), (6_000, 7_000), (4_000, 5_000)]);
        let in_flight = |echo: PathEcho| {
            let mut s = sender();
            let size = 100_000;
            for _ in 0..10 {
                s.next_segment(size, SimTime::ZERO).unwrap();
            }
            s.on_ack(1_000, false, SimTime::ZERO, 0, SimTime::from_us(1), size, echo);
            s.inflight
        };
        assert_eq!(in_flight(PathEcho { bitmap: u.rx_bitmap(), ..Default::default() }), 4_000);
        assert_eq!(in_flight(blocks(rx.sack_blocks().blocks())), 5_000);
        // a CE mark: the 64 from the packet
        assert!(u.sack_bitmap(9, 1, true, |b| rx.held_bitmap(b, mss)));
        assert_eq!(u.rx_bitmap(), Some((9, 1)));
        // packet 70: from max(70 - 63, 2) = 7, bits for 8, 9 and 70
        rx.on_data(70 * mss, mss);
        assert!(u.sack_bitmap(70, 1, false, |b| rx.held_bitmap(b, mss)));
        assert_eq!(u.rx_bitmap(), Some((7, 0b110 | 1 << 63)));
        // nothing held in the window: no bitmap
        assert!(!u.sack_bitmap(200, 1, true, |b| rx.held_bitmap(b, mss)));
        assert_eq!(u.rx_bitmap(), None);
    }

    /// UE's ACK_CC `rcvd_bytes` (`transport.uet.in_flight = "received"`). 1,000 B packets,
    /// no header: the sender sends 20 packets; packet 0 is lost and 1-3 arrive, and the
    /// receiver's ACK (cumulative point 0, no SACK) carries its count, 3,000 B. NSCC's
    /// window after it is 18,750 B in both readings (asserted, so that the two compare
    /// against the same window). Counting by
    /// acknowledgements 20 packets stay in flight and no 21st fits; counting by received
    /// bytes 17 are, and one fits. Then packets the timer declared lost that the receiver
    /// held after all: two packets sent, both taken, both timed out (0 in flight), the ACK
    /// of both with the count 2,000 B: 0 in flight again, not -2,000 (the count's report
    /// is taken back by the acknowledgement). A duplicate is not counted.
    #[test]
    fn received_bytes_free_the_window_before_a_sack_reports_them() {
        let size = 10_000_000;
        let t0 = SimTime::ZERO;
        let counting = |received: bool| {
            let p = UetParams { in_flight_received: received, ..params() };
            let mut s = UetSender::new(&p, UetCc::Nscc, 1000, 0, 100_000_000_000, SimTime::from_us(10), 7);
            for _ in 0..20 {
                assert!(s.can_send(size));
                s.next_segment(size, t0).unwrap();
            }
            for _ in 1..=3 {
                s.ack_now(1000, true, false, false, false, false);
            }
            s.ack_now(1000, false, false, false, false, false);
            if let Some(c) = s.received_to_carry() {
                assert_eq!(c, 3_000, "three new packets, the duplicate not counted");
                s.ack_carries(c);
            }
            s.on_ack(0, false, t0, 0, SimTime::from_us(1), size, PathEcho::default());
            assert_eq!(s.cc.cwnd(), 18_750.0);
            (s.inflight, s.window_inflight(), s.can_send(size))
        };
        assert_eq!(counting(false), (20_000, 20_000, false));
        assert_eq!(counting(true), (20_000, 17_000, true), "SACK reported none; the count three");

        let p = UetParams { in_flight_received: true, ..params() };
        let mut s = UetSender::new(&p, UetCc::Nscc, 1000, 0, 100_000_000_000, SimTime::from_us(10), 7);
        for _ in 0..2 {
            s.next_segment(size, t0).unwrap();
            s.ack_now(1000, true, false, false, false, false);
        }
        assert!(s.on_timeout(t0 + s.rto, size));
        assert_eq!((s.inflight, s.window_inflight()), (0, 0));
        s.ack_carries(s.received_to_carry().unwrap());
        s.on_ack(2_000, false, t0, 0, t0 + s.rto + SimTime::from_us(1), size, PathEcho::default());
        assert_eq!(s.received.as_ref().unwrap().in_flight, 0);
    }

    /// A packet NACKed again and again is resent on another entropy every time (htsim gives
    /// every packet it sends the next entropy): one resent always on its first resend's
    /// entropy would be lost for good on a path that drops it (a dead link the routes have
    /// not left).
    #[test]
    fn every_resend_of_a_sprayed_packet_takes_another_entropy() {
        let mut s = sender();
        let size = 2_000;
        let t = SimTime::ZERO;
        let first = s.next_segment(size, t).unwrap();
        let mut seen = vec![s.entropy(&first)];
        s.next_segment(size, t).unwrap();
        // the second packet arrives (SACKed): only the first is left
        assert!(!s.on_ack(0, false, t, 0, SimTime::from_us(1), size, blocks(&[(1_000, 2_000)])));
        for n in 1..6u64 {
            // (a NACK names the copy it answers by its send time)
            s.on_nack(0, SimTime::from_us(n - 1), 0, SimTime::from_us(n), size);
            let again = s.next_segment(size, SimTime::from_us(n)).unwrap();
            assert_eq!((again.seq, again.retx), (0, true));
            seen.push(s.entropy(&again));
        }
        // the first two match what a bool "resent" gave (runs that resend a packet at most
        // once are unchanged)
        assert_eq!(seen[1], PathChoice::Spray.entropy(7, 0, 1));
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 6, "six transmissions, six entropies");
        // acknowledged, its count leaves with it
        assert!(s.on_ack(2_000, false, t, 0, SimTime::from_us(9), size, blocks(&[])));
        assert!(s.resent.is_empty() && s.states.is_empty());
    }

    /// Out-of-order ACKs (sprayed packets) each report their packet; the cumulative point
    /// moves over every packet acknowledged; a NACKed packet is resent before new data and
    /// is not in flight until then.
    #[test]
    fn selective_acks_and_a_nack_resend_exactly_the_trimmed_packet() {
        let mut s = sender();
        let size = 5_500;
        let t = SimTime::ZERO;
        let segs: Vec<Segment> = std::iter::from_fn(|| s.next_segment(size, t)).collect();
        assert_eq!(segs.iter().map(|g| (g.seq, g.len)).collect::<Vec<_>>(), vec![(0, 1000), (1000, 1000), (2000, 1000), (3000, 1000), (4000, 1000), (5000, 500)]);
        assert_eq!(s.inflight, 5_500);
        let now = SimTime::from_us(10);
        // packet 2 arrives first, out of order
        assert!(!s.on_ack(0, false, t, 0, now, size, blocks(&[(2000, 3000)])));
        assert_eq!((s.snd_una, s.inflight), (0, 4_500));
        // packet 1 was trimmed
        s.on_nack(1000, t, 0, now, size);
        s.on_nack(1000, t, 0, now, size);
        assert_eq!(s.inflight, 3_500);
        assert_eq!(s.nacks, 1);
        // packet 0 and 3..5 arrive
        s.on_ack(1000, false, t, 0, now, size, blocks(&[]));
        s.on_ack(1000, false, t, 0, now, size, blocks(&[(2000, 4000)]));
        s.on_ack(1000, false, t, 0, now, size, blocks(&[(2000, 5500)]));
        assert_eq!((s.snd_una, s.inflight), (1000, 0));
        let again = s.next_segment(size, now).unwrap();
        assert_eq!((again.seq, again.len, again.retx), (1000, 1000, true));
        assert!(s.next_segment(size, now).is_none(), "nothing else to send");
        assert!(s.on_ack(5500, false, t, 0, now, size, blocks(&[])));
        assert_eq!(s.snd_una, 5500);
    }

    /// A stale NACK (of a packet acknowledged since) and a duplicate ACK change nothing; a
    /// timeout marks the packets sent an RTO ago lost and waits for the next oldest.
    #[test]
    fn stale_reports_change_nothing_and_a_timeout_resends_what_is_in_flight() {
        let mut s = sender();
        let size = 3_000;
        let (t, now) = (SimTime::ZERO, SimTime::from_us(10));
        while s.next_segment(size, t).is_some() {}
        s.on_ack(0, false, t, 0, now, size, blocks(&[(1000, 2000)]));
        s.on_nack(1000, t, 0, now, size);
        s.on_ack(0, false, t, 0, now, size, blocks(&[(1000, 2000)]));
        assert_eq!((s.inflight, s.nacks), (2_000, 0));
        let d = s.rto_deadline.unwrap();
        assert_eq!(d, SimTime::from_us(100));
        assert!(!s.on_timeout(SimTime(d.0 - 1), size));
        assert!(s.on_timeout(d, size));
        assert_eq!((s.inflight, s.timeouts), (0, 2));
        assert_eq!(s.rto_deadline, None);
        let resent: Vec<u64> = std::iter::from_fn(|| s.next_segment(size, d)).map(|g| g.seq).collect();
        assert_eq!(resent, vec![0, 2000]);
        assert_eq!(s.rto_deadline, Some(d + s.rto), "the resent packets' timer");
    }

    /// RCCC: a one-packet flow's packet, sent on speculative credit, comes back NACKed. Its
    /// pull target asked for nothing (nothing was left to send), so no pull will come: the
    /// timer, not cleared with nothing in flight, expires after an RTO and the flow asks for
    /// credit with an RTS, whose pull target asks for a pull whatever it is (bit 0), as
    /// htsim's does. The resend waits for that pull. A pull repeating a cumulative grant the
    /// sender already had gives it nothing.
    #[test]
    fn rccc_a_trimmed_last_packet_that_no_pull_covers_asks_with_an_rts_after_the_timer() {
        let mut s = sender_with(UetCc::Rccc);
        let size = 500;
        let t = SimTime::ZERO;
        assert_eq!(s.next_segment(size, t).map(|g| (g.seq, g.len)), Some((0, 500)));
        assert_eq!(s.pull_target(size, 1).unwrap() & 1, 0, "a data packet asks for nothing beyond its target");
        let now = SimTime::from_us(10);
        s.on_nack(0, t, 0, now, size);
        assert!(s.next_segment(size, now).is_none(), "the NACK ended the speculative credit");
        assert_eq!(s.take_rts(size, 1), None, "no RTS before the timer");
        let d = s.rto_deadline.expect("nothing in flight, but a resend waits for credit");
        assert_eq!(d, now + s.rto);
        assert!(!s.on_timeout(d, size), "nothing was in flight to declare lost");
        let rts = s.take_rts(size, 1).expect("the flow asks for credit");
        assert_eq!(rts & 1, 1, "asks for a pull whatever its target");
        assert_eq!(s.take_rts(size, 1), None, "one RTS");
        assert!(s.next_segment(size, d).is_none(), "the resend waits for credit");
        assert_eq!(s.rto_deadline, Some(d + s.rto), "and the timer waits again, in case the RTS is lost");
        s.on_pull(0);
        assert!(s.next_segment(size, d).is_none(), "a grant the sender already had gives nothing");
        s.on_pull(512);
        let again = s.next_segment(size, d).expect("resent on the pulled credit");
        assert_eq!((again.seq, again.retx), (0, true));
        assert!(s.on_ack(500, false, d, 0, d + SimTime::from_us(10), size, blocks(&[])));
        assert_eq!(s.rto_deadline, None);
    }

    /// RCCC: a flow whose pulls were lost waits with nothing in flight and data left; each
    /// expiry of the timer sends an RTS (none of data), which asks for a pull; that pull's
    /// cumulative grant, above what the sender had, restores its credit.
    #[test]
    fn rccc_a_flow_whose_pulls_were_lost_asks_again_at_each_expiry() {
        let mut s = sender_with(UetCc::Rccc);
        let size = 10_000_000;
        let t = SimTime::ZERO;
        let n = std::iter::from_fn(|| s.next_segment(size, t)).count();
        assert!(n > 10, "a window of speculative credit: {n} packets");
        let now = SimTime::from_us(10);
        s.on_ack(n as u64 * 1000, false, t, 0, now, size, blocks(&[]));
        assert!(s.next_segment(size, now).is_none(), "no credit left, the pulls lost");
        let d = s.rto_deadline.expect("data left and no credit: the timer stays");
        s.on_timeout(d, size);
        assert!(s.take_rts(size, 1).is_some_and(|t| t & 1 == 1));
        assert!(s.next_segment(size, d).is_none(), "no data without credit");
        let d2 = s.rto_deadline.expect("the timer waits again");
        s.on_timeout(d2, size);
        assert!(s.take_rts(size, 1).is_some(), "the RTS is repeated a timer later");
        s.on_pull(50_000);
        assert!(s.next_segment(size, d2).is_some(), "the repeated grant restores credit");
        assert_eq!(s.pull_target(size, 1).unwrap() & 1, 0);
    }

    /// RCCC: packets the timer declares lost while the credit is spent wait for credit, and
    /// the flow asks for it with an RTS; a second expiry within a network RTT (10 us here)
    /// asks no more, a later one again (htsim's `sendRTS`: one per RTT). With credit left
    /// the resend goes at once and nothing is asked.
    #[test]
    fn rccc_timed_out_packets_wait_for_credit_and_the_flow_asks_once_per_rtt() {
        let mut s = sender_with(UetCc::Rccc);
        let size = 10_000_000;
        let t0 = SimTime::ZERO;
        let n = std::iter::from_fn(|| s.next_segment(size, t0)).count() as u64;
        // the first and last packet lost, the rest acknowledged: the credit is spent
        let now = SimTime::from_us(5);
        s.on_ack(0, false, t0, 0, now, size, blocks(&[(1000, (n - 1) * 1000)]));
        assert_eq!(s.inflight, 2_000);
        let d = s.rto_deadline.unwrap();
        assert!(s.on_timeout(d, size));
        assert_eq!(s.timeouts, 2);
        assert!(s.take_rts(size, 1).is_some());
        assert!(s.next_segment(size, d).is_none(), "the resends wait for credit");
        // a packet sent at d, lost, expires within an RTT of the RTS... (none in flight here):
        // the next expiry is the credit wait, an RTO later, past the RTT: asked again
        let d2 = s.rto_deadline.unwrap();
        assert_eq!(d2, d + s.rto);
        s.on_timeout(d2, size);
        assert!(s.take_rts(size, 1).is_some());
        s.on_pull(30_000);
        let first = s.next_segment(size, d2).expect("credit: the resend goes");
        assert_eq!((first.seq, first.retx), (0, true));
        s.ask(d2 + SimTime::from_us(1));
        assert_eq!(s.take_rts(size, 1), None, "within a network RTT of the last RTS");
        s.ask(d2 + SimTime::from_us(10));
        assert!(s.take_rts(size, 1).is_some(), "a network RTT later");
        // NSCC alone has no credit and sends no RTS
        let mut w = sender();
        while w.next_segment(size, t0).is_some() {}
        let dw = w.rto_deadline.unwrap();
        assert!(w.on_timeout(dw, size));
        assert_eq!(w.take_rts(size, 1), None);
        assert!(w.next_segment(size, dw).is_some_and(|g| g.retx));
    }

    /// htsim's coalescing rules (`UecSink::processData`), packet by packet: the first
    /// packet at once, then one ACK per `ack_every` bytes; a CE mark, a duplicate and an AR
    /// at once; an AR that arrived above a hole is answered again when the hole fills.
    #[test]
    fn coalescing_acknowledges_as_htsims_receiver_does() {
        let mut u = sender();
        assert!(u.ack_now(1064, true, false, false, false, true), "every packet without coalescing");
        u.ack_every = 4000;
        let mut got = vec![];
        // first; three more reach 4,256 B; then a CE; a duplicate; an AR above a hole, a
        // plain packet above it, and the one that fills the hole
        for (i, (new, ce, ar, drained)) in [(true, false, false, true), (true, false, false, true), (true, false, false, true), (true, false, false, true), (true, false, false, true),
                                            (true, true, false, true), (false, false, false, true), (true, false, true, false), (true, false, false, false), (true, false, false, true)]
            .into_iter()
            .enumerate()
        {
            got.push(u.ack_now(1064, new, i == 0, ce, ar, drained));
        }
        assert_eq!(got, [true, false, false, false, true, true, true, true, false, true]);
    }

    /// The sender asks for an ACK (AR) only where ACKs coalesce: on its last new packet and
    /// on a resend (a window or credit with no room for another: the engine tests).
    #[test]
    fn the_ack_request_marks_a_resend_the_last_packet_and_a_full_window() {
        let mut u = sender();
        let now = SimTime::from_us(1);
        assert!(!u.next_segment(10_000, now).unwrap().ar, "not without coalescing");
        u.ack_every = 16_384;
        let mut ars = vec![];
        while let Some(s) = u.next_segment(10_000, now) {
            ars.push((s.seq, s.ar));
        }
        assert_eq!(ars.last(), Some(&(9000, true)), "the last new packet");
        assert!(ars[..ars.len() - 1].iter().all(|&(_, ar)| !ar), "{ars:?}");
        // packet 0 reported lost (as a NACK would, without NSCC's cut closing the window)
        u.states[0] = PktState::Lost;
        u.inflight -= u.wire_of(0, 10_000);
        u.queue_resend(0);
        let again = u.next_segment(10_000, now).unwrap();
        assert!(again.retx && again.ar, "a resend");
    }
}
