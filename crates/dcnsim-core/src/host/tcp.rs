//! The window-based sender and the receiver shared by DCTCP, Reno, Cubic, Swift and BBR:
//! byte sequence numbers, per-packet cumulative ACKs with ECN-Echo and an
//! echoed timestamp, the ECN window reduction of Linux's CWR state (below),
//! loss recovery by selective acknowledgements (RFC 2018 blocks, RFC 6675's scoreboard in
//! `host/sack.rs`, the window by PRR, RFC 6937, as Linux has it; `transport.sack`, on by
//! default) or, without them, NewReno fast retransmit / fast recovery (RFC 6582), RTO per
//! RFC 6298 with exponential back-off and go-back-N after a timeout (skipping what the
//! receiver has SACKed).
//!
//! ECN response (RFC 3168 6.1.2, RFC 8257 3.3; Linux `tcp_enter_cwr`,
//! `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction` in net/ipv4/tcp_input.c): an ECN-Echo
//! in the Open state asks the algorithm for the new ssthresh and enters CWR, remembering
//! snd_nxt as high_seq. While in CWR the window does not grow and further ECN-Echoes are
//! ignored; Proportional Rate Reduction (RFC 6937, as Linux has it) lets out ssthresh /
//! prior_cwnd of the delivered bytes while more than ssthresh is in flight, then no more
//! than brings the flight up to ssthresh. CWR ends on the first ACK above high_seq (the
//! round trip after the cut, Linux's `snd_una != high_seq`): cwnd = ssthresh, then that
//! ACK grows the window as usual, or, if it carries ECN-Echo, starts the next CWR round.
//! A loss inferred in CWR enters fast recovery without a second reduction (Linux's
//! `tcp_enter_recovery` keeps the CWR ssthresh; RFC 3168: at most once per window).

use super::cc::{AckEvent, CaState, Control, CongestionControl, PathEcho, Window};
use super::cc::delivery_rate::DeliveryRate;
use super::pacer::Pacer;
use super::rack::{Early, Rack, Undo};
use super::sack::{Scoreboard, DUP_THRESH};
use super::{Cc, WindowCcParams};
use crate::net::Ecn;
use crate::sim::SimTime;
use std::collections::BTreeMap;

/// TCP parameters shared by every TCP flow, whatever its congestion control.
#[derive(Clone, Debug)]
pub struct TcpParams {
    pub init_cwnd: u32,
    pub min_rto: SimTime,
    pub init_rto: SimTime,
    /// Reno and Cubic use classic ECN (RFC 3168).
    pub classic_ecn: bool,
    /// The codepoint ECN-capable TCP data carries, when not the algorithm's own default
    /// (DCTCP ECT(1), classic ECN ECT(0)).
    pub ect: Option<Ecn>,
    /// Receiver window cap in bytes (`transport.window`).
    pub window: Option<u64>,
    /// New connections open with SYN / SYN-ACK before data (`transport.handshake`).
    pub handshake: bool,
    /// Each window-based algorithm's own parameters.
    pub cc: WindowCcParams,
    /// Selective acknowledgements (`transport.sack`): receivers send them (RFC 2018) and
    /// senders recover from loss by them (RFC 6675 with PRR, `host/sack.rs`); without,
    /// NewReno (RFC 6582).
    pub sack: bool,
    /// With `sack`: losses found by RACK-TLP (RFC 8985, `host/rack.rs`) rather than RFC
    /// 6675's DupThresh rules, and receivers that report duplicates by D-SACK (RFC 2883), as
    /// Linux's do (`transport.rack`).
    pub rack: bool,
}

impl TcpParams {
    /// A window algorithm's unit tests' parameters: 10-segment initial window, 1 ms RTOs,
    /// no ECN, no handshake, the algorithms' defaults.
    #[cfg(test)]
    pub(crate) fn for_tests() -> TcpParams {
        TcpParams {
            init_cwnd: 10,
            min_rto: SimTime::from_ms(1),
            init_rto: SimTime::from_ms(1),
            classic_ecn: false,
            ect: None,
            window: None,
            handshake: false,
            cc: Default::default(),
            sack: false,
            rack: false,
        }
    }
    /// The codepoint of a classic-ECN sender's data (RFC 3168): ECT(0) unless configured,
    /// not ECT without `transport.ecn`.
    pub fn classic_ect(&self) -> Ecn {
        if self.classic_ecn {
            self.ect.unwrap_or(Ecn::Ect0)
        } else {
            Ecn::NotEct
        }
    }
}

/// The CWR state after an ECN-triggered reduction (Linux TCP_CA_CWR, PRR's counters).
#[derive(Clone, Copy, Debug)]
struct Cwr {
    /// snd_nxt when the reduction began; CWR ends once an ACK passes it.
    high_seq: u64,
    /// cwnd when the reduction began (PRR's RecoverFS, Linux's prior_cwnd).
    prior_cwnd: f64,
    /// Bytes delivered (acknowledged) since it began.
    prr_delivered: u64,
    /// Bytes sent since it began.
    prr_out: u64,
}

/// Per-flow sender state, over any window-based congestion control (`Cc`, the list's
/// dispatch, in the engine).
// Cache-line aligned: an ACK reads most of its 304 B, which then span 5 lines, not 6.
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct TcpSender<C = Cc> {
    pub w: Window,
    pub cc: C,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest sequence ever sent (snd_nxt can move back after an RTO).
    pub snd_max: u64,
    dupacks: u32,
    in_recovery: bool,
    recover: u64,
    /// In CWR after an ECN-Echo (None: Open, or in fast recovery).
    cwr: Option<Cwr>,
    /// Segment to retransmit before any new data (fast retransmit / partial ACK).
    pending_retx: Option<u64>,
    srtt: f64,
    rttvar: f64,
    has_rtt: bool,
    pub rto: SimTime,
    min_rto: SimTime,
    /// When the retransmission timer expires, if armed.
    pub rto_deadline: Option<SimTime>,
    /// Time of the timer event currently in the event queue (lazy re-arming).
    pub timer_at: Option<SimTime>,
    pub timer_gen: u32,
    pub timeouts: u32,
    /// The receiver's advertised window, bytes (a fixed socket buffer; infinite: none).
    rwnd: f64,
    /// `transport.handshake`: the SYN is out and no SYN-ACK has come back yet.
    pub syn_pending: bool,
    /// Spaces segments at the algorithm's pacing rate: only for an algorithm that `PACES`
    /// (boxed: the record of every other flow stays as small as before pacing existed).
    pub pacer: Option<Box<Pacer>>,
    /// Delivery-rate sampling: only for an algorithm that owns the window (boxed, as the
    /// pacer, so every other flow's record stays as it was).
    pub rate: Option<Box<DeliveryRate>>,
    /// In Linux's Loss state: after a timeout, until `recover` is acknowledged (tracked for
    /// an algorithm that owns the window).
    in_loss: bool,
    /// Recovers by selective acknowledgements (RFC 6675) rather than NewReno.
    sack: bool,
    /// The SACK scoreboard, from the first ACK that carries blocks (boxed: a flow that
    /// never sees reordering or loss never gets one).
    pub board: Option<Box<Scoreboard>>,
    /// RACK-TLP's state, where it finds the losses (`TcpParams::rack`).
    pub rack: Option<Box<Rack>>,
    /// The loss probe may send one new segment whatever the window (RFC 8985 7.3).
    force_one: bool,
}

/// What an ACK did.
#[derive(Default, Debug, Clone, Copy)]
pub struct AckOutcome {
    pub finished: bool,
    pub retransmit: bool,
}

/// A segment to put on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub retx: bool,
    /// The sender asks for an ACK at once (UE's AR flag: `UetSender::next_segment`).
    pub ar: bool,
}

impl<C: CongestionControl + Clone> TcpSender<C> {
    /// Take over a finished flow's connection state (window, congestion-control state, RTT
    /// estimate and RTO), as the next message on a long-lived connection does; sequence
    /// numbers start afresh.
    pub fn continue_connection(&mut self, prev: &TcpSender<C>) {
        self.w = prev.w.clone();
        if prev.cwr.is_some() {
            // its high_seq belongs to the old numbering: end the reduction as the next ACK would
            self.w.cwnd = self.w.ssthresh;
        }
        self.cc = prev.cc.clone();
        self.cc.restart();
        self.srtt = prev.srtt;
        self.rttvar = prev.rttvar;
        self.has_rtt = prev.has_rtt;
        self.rto = prev.rto;
        if let (Some(r), Some(p)) = (&mut self.rate, &prev.rate) {
            **r = (**p).clone();
            r.restart();
        }
        if let (Some(r), Some(p)) = (&mut self.rack, &prev.rack) {
            **r = (**p).clone();
            r.restart();
        }
    }

    /// The connection opens (a new flow, not a continued one): the algorithm learns the
    /// handshake's RTT (`rtt`, asked only of an algorithm that owns the window) and its
    /// random seed.
    pub fn open(&mut self, seed: u64, rtt: impl FnOnce() -> SimTime, now: SimTime) {
        if self.rate.is_some() {
            self.cc.open(&mut self.w, seed, rtt(), now);
        }
    }

    /// Bytes in the network: those unacknowledged, less those duplicate ACKs reported
    /// delivered (for an algorithm that owns the window; the NewReno window inflation
    /// counts them for the others).
    #[inline]
    fn pipe(&self) -> u64 {
        if let Some(b) = &self.board {
            return b.pipe(self.snd_una, self.snd_nxt, self.in_recovery, self.w.mss as u64);
        }
        match &self.rate {
            Some(r) if C::CONG_CONTROL => r.pipe(self.inflight()),
            _ => self.inflight(),
        }
    }

    fn ca_state(&self) -> CaState {
        if self.in_loss {
            CaState::Loss
        } else if self.in_recovery {
            CaState::Recovery
        } else {
            CaState::Open
        }
    }

    pub fn new(cc: C, mss: u32, init_cwnd_pkts: u32, min_rto: SimTime, init_rto: SimTime) -> TcpSender<C> {
        // a zero RTO (a SimConfig built in code; scenarios refuse it) would re-arm the timer
        // at the same instant forever, doubling 0 on each expiry; 1 ps is the clock's tick,
        // and no valid scenario has less
        let min_rto = min_rto.max(SimTime(1));
        let mss = mss as f64;
        let owns = C::CONG_CONTROL && cc.owns_window();
        TcpSender {
            w: Window { cwnd: init_cwnd_pkts as f64 * mss, ssthresh: f64::INFINITY, mss },
            cc,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            cwr: None,
            pending_retx: None,
            srtt: 0.0,
            rttvar: 0.0,
            has_rtt: false,
            rto: init_rto.max(min_rto),
            min_rto,
            rto_deadline: None,
            timer_at: None,
            timer_gen: 0,
            timeouts: 0,
            rwnd: f64::INFINITY,
            syn_pending: false,
            pacer: C::PACES.then(Box::default),
            rate: owns.then(Box::default),
            in_loss: false,
            sack: false,
            board: None,
            rack: None,
            force_one: false,
        }
    }

    /// A new flow's sender of algorithm `cc` under the shared TCP parameters.
    pub fn from_params(cc: C, mss: u32, p: &TcpParams) -> TcpSender<C> {
        let mut s = TcpSender::new(cc, mss, p.init_cwnd, p.min_rto, p.init_rto).with_window(p.window);
        s.sack = p.sack;
        if p.sack && p.rack {
            s.rack = Some(Box::new(Rack::new(mss)));
        }
        s
    }

    /// Cap the bytes in flight at a receiver window of `bytes` (None: no cap).
    pub fn with_window(mut self, bytes: Option<u64>) -> TcpSender<C> {
        self.rwnd = bytes.map_or(f64::INFINITY, |b| b as f64);
        self
    }

    #[inline]
    pub fn inflight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// The algorithm's pacing rate now, if it paces.
    #[inline]
    pub fn pacing_rate(&self) -> Option<u64> {
        if !C::PACES || !self.cc.paces() {
            return None;
        }
        self.cc.pacing_rate(&self.w, self.srtt())
    }

    /// When a paced sender may start its next segment (None: unpaced).
    #[inline]
    pub fn paced_until(&self) -> Option<SimTime> {
        let r = self.pacing_rate()?;
        self.pacer.as_ref().map(|p| p.next_allowed(r))
    }

    /// Segment `seg` of a flow of `size` bytes starts at `now`, `wire` bytes on the wire
    /// (the pacer's clock; the delivery-rate record of an algorithm that owns the window).
    #[inline]
    pub fn on_wire(&mut self, seg: &Segment, wire: u32, now: SimTime, size: u64) {
        if C::CONG_CONTROL && self.rate.is_some() {
            self.rate_on_send(seg, now, size);
        }
        if let (Some(_), Some(p)) = (self.pacing_rate(), &mut self.pacer) {
            p.on_send(now, wire);
        }
        if self.rack.is_some() {
            self.rack_on_send(seg, now);
        }
    }

    /// RACK-TLP hears of a segment sent: its send time; a recovery's retransmission counts
    /// for undoing it; a probe is remembered; new data re-arms the probe timer.
    #[cold]
    fn rack_on_send(&mut self, seg: &Segment, now: SimTime) {
        let in_recovery = self.in_recovery;
        let r = self.rack.as_mut().unwrap();
        r.on_send(seg.seq, now, seg.retx);
        if seg.retx && in_recovery {
            if let Some(u) = &mut r.undo {
                u.retrans += 1;
                u.first_retx.get_or_insert(now);
            }
        }
        if !seg.retx {
            self.arm_probe(now);
        }
    }

    fn rate_on_send(&mut self, seg: &Segment, now: SimTime, size: u64) {
        let end = seg.seq + seg.len as u64;
        // this segment is already counted in snd_nxt unless it refills a hole
        let before = if end == self.snd_nxt { self.inflight() - seg.len as u64 } else { self.inflight() };
        let pipe_before = self.rate.as_ref().map_or(before, |r| r.pipe(before));
        if pipe_before == 0 {
            let app_limited = self.rate.as_ref().is_some_and(|r| r.is_app_limited());
            self.cc.on_tx_start(app_limited);
        }
        let pipe = self.pipe();
        let Some(r) = &mut self.rate else { return };
        r.on_send(end, now, before);
        if self.snd_nxt >= size && pipe < self.w.cwnd as u64 {
            // nothing more to send with room in the window (tcp_rate_check_app_limited)
            r.app_limited_now(pipe);
        }
    }

    /// Whether the window allows another segment now.
    #[inline]
    pub fn can_send(&self, size: u64) -> bool {
        if self.syn_pending {
            return false;
        }
        if self.pending_retx.is_some() {
            return true;
        }
        if self.force_one && self.snd_nxt < size {
            return true;
        }
        if let Some(b) = &self.board {
            return self.can_send_sack(b, size);
        }
        if self.snd_nxt >= size {
            return false;
        }
        let next = (size - self.snd_nxt).min(self.w.mss as u64);
        (self.pipe() + next) as f64 <= self.w.cwnd.max(self.w.mss) && (self.inflight() + next) as f64 <= self.rwnd
    }

    /// `can_send` with a scoreboard: RFC 6675's `NextSeg` rule 1 (a lost segment in
    /// recovery) before rule 2 (new data, after a timeout the next unSACKed byte), each only
    /// while `pipe` leaves it room in the window.
    #[cold]
    fn can_send_sack(&self, b: &Scoreboard, size: u64) -> bool {
        let mss = self.w.mss as u64;
        let room = self.w.cwnd.max(self.w.mss);
        let pipe = self.pipe();
        if self.in_recovery {
            if let Some(s) = b.next_lost(self.snd_una, mss) {
                return (pipe + (size - s).min(mss)) as f64 <= room;
            }
        }
        let nxt = if self.snd_nxt < self.snd_max { b.next_unsacked(self.snd_nxt) } else { self.snd_nxt };
        if nxt >= size {
            return false;
        }
        let next = (size - nxt).min(mss);
        (pipe + next) as f64 <= room && (nxt - self.snd_una + next) as f64 <= self.rwnd
    }

    /// The next segment to send; advances snd_nxt.
    pub fn next_segment(&mut self, size: u64) -> Option<Segment> {
        let mss = self.w.mss as u64;
        if let Some(seq) = self.pending_retx.take() {
            if seq < self.snd_max && seq >= self.snd_una {
                let len = (size - seq).min(mss);
                // (with a scoreboard only recovery sets `pending_retx`)
                if let Some(b) = &mut self.board {
                    b.on_resend(seq, seq + len, self.snd_max);
                }
                return Some(self.sent(Segment { seq, len: len as u32, retx: true, ar: false }));
            }
        }
        if !self.can_send(size) {
            return None;
        }
        if let Some(b) = &mut self.board {
            if self.in_recovery {
                if let Some(seq) = b.next_lost(self.snd_una, mss) {
                    let len = (size - seq).min(mss);
                    b.on_resend(seq, seq + len, self.snd_max);
                    return Some(self.sent(Segment { seq, len: len as u32, retx: true, ar: false }));
                }
            }
            if self.snd_nxt < self.snd_max {
                // go-back-N after a timeout skips what the receiver holds
                self.snd_nxt = b.next_unsacked(self.snd_nxt);
            }
        }
        let seq = self.snd_nxt;
        let len = (size - seq).min(mss);
        self.snd_nxt += len;
        let retx = seq < self.snd_max;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        self.force_one = false;
        Some(self.sent(Segment { seq, len: len as u32, retx, ar: false }))
    }

    /// A segment leaves: PRR counts what a reduction lets out.
    #[inline]
    fn sent(&mut self, seg: Segment) -> Segment {
        if let Some(c) = &mut self.cwr {
            c.prr_out += seg.len as u64;
        }
        seg
    }

    /// An ACK's ECN-Echo enters CWR unless a reduction (CWR or fast recovery) is under way
    /// or the sender is not ECN-capable (Linux `tcp_try_to_open` -> `tcp_enter_cwr`).
    fn on_ecn_echo(&mut self, ece: bool) {
        if ece && !self.in_recovery && self.cwr.is_none() && self.cc.ect().is_ect() {
            self.enter_cwr();
        }
    }

    /// Enter CWR (Linux `tcp_enter_cwr` / `tcp_init_cwnd_reduction`).
    fn enter_cwr(&mut self) {
        self.w.ssthresh = self.cc.ssthresh(&self.w);
        self.cwr = Some(Cwr { high_seq: self.snd_nxt, prior_cwnd: self.w.cwnd, prr_delivered: 0, prr_out: 0 });
    }

    /// PRR on an ACK in CWR (or, with SACK, in fast recovery) delivering `acked` bytes
    /// (Linux `tcp_cwnd_reduction`, in bytes: the proportional part rounds up to whole
    /// segments as Linux's packet counts do; the bytes in flight are `pipe`).
    fn reduce_cwnd(&mut self, acked: u64) {
        let pipe = self.pipe();
        let Some(c) = &mut self.cwr else { return };
        if acked == 0 {
            return;
        }
        c.prr_delivered += acked;
        let mss = self.w.mss;
        let inflight = pipe as f64;
        let ssthresh = self.w.ssthresh;
        let mut sndcnt = if inflight > ssthresh {
            let due = ssthresh * c.prr_delivered as f64 / c.prior_cwnd;
            // a hair below a whole segment is that segment: the products are of f64 byte counts
            (due / mss - 1e-9).ceil() * mss - c.prr_out as f64
        } else {
            ((c.prr_delivered as f64 - c.prr_out as f64).max(acked as f64)).min(ssthresh - inflight)
        };
        if c.prr_out == 0 {
            // Linux lets one segment out on the reduction's first ACK
            sndcnt = sndcnt.max(mss);
        }
        self.w.cwnd = inflight + sndcnt.max(0.0);
    }

    /// Whether the sender is in CWR (reducing its window after an ECN-Echo).
    pub fn in_cwr(&self) -> bool {
        self.cwr.is_some()
    }

    fn rtt_sample(&mut self, r: SimTime) {
        // RFC 6298 2.2/2.3 with alpha = 1/8, beta = 1/4.
        let r = r.0 as f64;
        if !self.has_rtt {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_rtt = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        let rto = SimTime((self.srtt + 4.0 * self.rttvar).round() as u64);
        self.rto = rto.max(self.min_rto);
    }

    /// Smoothed RTT, if sampled.
    pub fn srtt(&self) -> Option<SimTime> {
        self.has_rtt.then_some(SimTime(self.srtt as u64))
    }

    /// A cumulative ACK to `ack` above snd_una: the window slides, the RTT is sampled and the
    /// algorithm hears of it (`on_ack_event`); the event it was told.
    #[inline(always)]
    fn advance<'a>(&mut self, ack: u64, ece: bool, ts_echo: SimTime, now: SimTime, echo: PathEcho<'a>) -> AckEvent<'a> {
        let acked = ack - self.snd_una;
        self.snd_una = ack;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        let rtt = now - ts_echo;
        self.rtt_sample(rtt);
        self.dupacks = 0;
        let ev = AckEvent { acked, ece, ack, snd_nxt: self.snd_nxt, now, rtt, int: echo.int, hops: echo.hops };
        self.cc.on_ack_event(&self.w, &ev);
        ev
    }

    /// After an ACK of new data: the timer re-armed while anything is outstanding or due for
    /// retransmission; whether everything of a flow of `size` bytes is acknowledged.
    fn rearm(&mut self, size: u64, now: SimTime) -> bool {
        let finished = self.snd_una >= size;
        self.rto_deadline = (!finished && (self.inflight() > 0 || self.pending_retx.is_some())).then(|| now + self.rto);
        finished
    }

    /// Three duplicate ACKs: fast recovery until `recover` (everything sent so far) is
    /// acknowledged, the hole retransmitted first; true (a retransmission is due).
    fn enter_recovery(&mut self) -> bool {
        self.in_recovery = true;
        self.recover = self.snd_max;
        self.pending_retx = Some(self.snd_una);
        true
    }

    /// Process a cumulative ACK.
    #[inline]
    pub fn on_ack(&mut self, ack: u64, ece: bool, ts_echo: SimTime, now: SimTime, size: u64, echo: PathEcho) -> AckOutcome {
        if self.sack {
            // an ACK of new data with no selective acknowledgement ever seen, out of recovery,
            // is the same under both: the common case keeps NewReno's shorter path
            let plain = self.board.is_none() && echo.sack.is_empty() && !self.in_recovery && ack > self.snd_una;
            if !plain || (C::CONG_CONTROL && self.rate.is_some()) || self.rack.is_some() {
                return self.on_ack_sack(ack, ece, ts_echo, now, size, echo);
            }
        }
        if C::CONG_CONTROL && self.rate.is_some() {
            return self.on_ack_owned(ack, ts_echo, now, size, echo);
        }
        self.on_ack_newreno(ack, ece, ts_echo, now, size, echo)
    }

    /// An ACK of a connection with selective acknowledgements (RFC 6675 sec. 5; Linux
    /// `tcp_ack` -> `tcp_sacktag_write_queue`, `tcp_fastretrans_alert`,
    /// `tcp_cong_control`): the scoreboard takes its blocks; DupThresh duplicate ACKs or a
    /// lost first byte (`IsLost(HighACK + 1)`) enter recovery until everything sent so far
    /// is acknowledged, the first hole resent at once (and the next on each partial ACK)
    /// and the lost segments after it as `pipe` allows. The window: PRR (RFC 6937) in CWR and in recovery, as Linux has it,
    /// over the bytes each ACK delivers cumulatively or selectively; an algorithm that owns
    /// the window gets its delivery-rate sample (SACKed segments included) and the newly
    /// lost bytes.
    #[inline(never)]
    fn on_ack_sack(&mut self, ack: u64, ece: bool, ts_echo: SimTime, now: SimTime, size: u64, echo: PathEcho) -> AckOutcome {
        let mut out = AckOutcome::default();
        if ack < self.snd_una {
            return out;
        }
        let mss = self.w.mss as u64;
        let owned = C::CONG_CONTROL && self.rate.is_some();
        // (the delivery-rate sample's, before the scoreboard takes this ACK)
        let pipe_before = if owned { self.pipe() } else { 0 };
        let blocks = echo.sack;
        let rack = self.rack.is_some();
        if rack {
            self.rack_take_ack(ack, ts_echo, now, size, blocks);
        }
        let upd = if blocks.is_empty() && self.board.is_none() {
            Default::default()
        } else {
            let b = self.board.get_or_insert_with(|| Box::new(Scoreboard::new(rack)));
            match self.rack.as_deref_mut() {
                // each segment SACKed for the first time is delivered (RFC 8985 6.2 step 2)
                Some(r) => b.update_with(ack, blocks, |s, e| {
                    let mut k = s / mss;
                    while k * mss < e {
                        r.delivered(k, ((k + 1) * mss).min(size), ts_echo, now);
                        k += 1;
                    }
                }),
                None => b.update(ack, blocks),
            }
        };
        if let Some(r) = &mut self.rack {
            r.on_cum_ack(ack);
        }
        let delivered = (ack - self.snd_una) - upd.covered + upd.newly_sacked;
        let advanced = ack > self.snd_una;
        let mut ev = None;
        if advanced {
            let e = self.advance(ack, ece && !owned, ts_echo, now, echo);
            ev = Some(e);
            if self.in_recovery && ack >= self.recover {
                self.in_recovery = false;
                if !owned && !self.try_undo(ts_echo, true) {
                    self.cwr = None;
                    self.w.cwnd = self.w.ssthresh.max(self.w.min_cwnd());
                }
                if let Some(r) = &mut self.rack {
                    r.on_recovery_end();
                    r.undo = None;
                }
            } else if !rack && self.in_recovery && self.board.as_ref().is_some_and(|b| ack < b.delivered_rxt_to && !b.resent(ack)) {
                // a partial ACK of a retransmission: the next hole was sent before it, so it
                // is lost too, even with too little SACKed above it for IsLost (the tail of
                // a window); resent at once (ns-3's partial ACK with SACK resends it; Linux's
                // RACK finds it lost the same way, by send order)
                self.pending_retx = Some(ack);
                out.retransmit = true;
            }
            if self.in_loss && ack >= self.recover {
                self.in_loss = false;
            }
            if !owned && !self.in_recovery && self.cwr.is_some_and(|c| ack > c.high_seq) {
                self.cwr = None;
                self.w.cwnd = self.w.ssthresh;
            }
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.dupacks += 1;
        } else {
            return out;
        }
        if !owned && self.in_recovery && self.try_undo(ts_echo, false) {
            // every retransmission of the recovery was a duplicate: it was reordering
            self.in_recovery = false;
            if let Some(r) = &mut self.rack {
                r.on_recovery_end();
            }
        }
        if !owned && !self.in_recovery {
            self.on_ecn_echo(ece);
        }
        let mut rack_lost = 0;
        if rack {
            rack_lost = self.rack_detect(size, now);
            if rack_lost > 0 && !self.in_recovery && !self.in_loss {
                out.retransmit = self.enter_rack_recovery(now, owned);
            }
        } else {
            let lost = self.board.as_ref().is_some_and(|b| b.is_lost(self.snd_una, mss));
            if !self.in_recovery && !self.in_loss && self.snd_una >= self.recover && self.snd_max > self.snd_una && (self.dupacks >= DUP_THRESH as u32 || lost) {
                out.retransmit = self.enter_sack_recovery(now, owned);
            }
        }
        if owned {
            let lost = match (&mut self.board, self.in_recovery) {
                _ if rack => rack_lost,
                (Some(b), true) => b.newly_lost(self.snd_una, mss),
                _ => 0,
            };
            let state = self.ca_state();
            let pipe = self.pipe();
            let r = self.rate.as_mut().unwrap();
            let mut rs = r.on_sack(ack, delivered, blocks, pipe_before, now, ev.as_ref().map(|e| e.rtt));
            r.mark_lost(lost);
            rs.losses = r.take_losses();
            let ctl = Control { rs, state, pipe, delivered: r.delivered, now };
            self.cc.cong_control(&mut self.w, &ctl, r);
        } else if self.cwr.is_some() {
            self.reduce_cwnd(delivered);
        } else if let Some(e) = &ev {
            self.cc.cong_avoid(&mut self.w, e);
        }
        if advanced {
            out.finished = self.rearm(size, now);
        }
        if rack && !out.finished {
            self.rack_arm(now);
        }
        out
    }

    /// RACK-TLP takes an ACK before the scoreboard does: the timer it held goes back to the
    /// RTO; a D-SACK (RFC 2883: a first block at or below the cumulative point, or inside
    /// the second) grows the reordering window and counts against the recovery's
    /// retransmissions; the RTT sample; the segments the cumulative point newly covers that
    /// were not SACKed are delivered; a loss probe is settled (RFC 8985 7.4.2).
    #[cold]
    fn rack_take_ack(&mut self, ack: u64, ts_echo: SimTime, now: SimTime, size: u64, blocks: &[(u64, u64)]) {
        let mss = self.w.mss as u64;
        let r = self.rack.as_mut().unwrap();
        if let Some((_, rto)) = r.early.take() {
            self.rto_deadline = rto;
        }
        let dsack = blocks.first().copied().filter(|&(s, e)| e <= ack || blocks.get(1).is_some_and(|b| b.0 <= s && e <= b.1));
        if let Some((s, e)) = dsack {
            r.on_dsack(ack, self.snd_nxt);
            if let Some(u) = &mut r.undo {
                if s >= u.marker {
                    u.retrans -= (e - s).div_ceil(mss) as i64;
                }
            }
        }
        r.on_rtt(now - ts_echo);
        let mut k = self.snd_una / mss;
        while k * mss < ack {
            let end = ((k + 1) * mss).min(size);
            if !self.board.as_ref().is_some_and(|b| b.holds(k * mss, end)) {
                r.delivered(k, end, ts_echo, now);
            }
            k += 1;
        }
        if let Some((end, retx)) = r.probe {
            if ack >= end {
                r.probe = None;
                let spurious = dsack.is_some_and(|(s, e)| s < end && end <= e);
                if retx && !spurious && !self.in_recovery && !(C::CONG_CONTROL && self.rate.is_some()) {
                    // the probe repaired a loss: one reduction (Linux `tcp_process_tlp_ack`)
                    self.w.ssthresh = self.cc.ssthresh(&self.w);
                    self.w.cwnd = self.w.ssthresh.max(self.w.min_cwnd());
                    self.cwr = None;
                }
            }
        }
    }

    /// RACK's loss detection on the scoreboard (RFC 8985 6.2 step 5): segments found lost
    /// are marked for resending; a reorder timer is armed for those that may yet be; the
    /// bytes newly found lost.
    #[cold]
    fn rack_detect(&mut self, size: u64, now: SimTime) -> u64 {
        let mss = self.w.mss as u64;
        let (Some(r), Some(b)) = (self.rack.as_deref_mut(), self.board.as_deref_mut()) else {
            return 0;
        };
        if self.in_loss || self.snd_max <= self.snd_una {
            return 0;
        }
        match r.loss_until {
            Some(m) if self.snd_una < m => return 0,
            Some(_) => r.loss_until = None,
            None => {}
        }
        let srtt = SimTime(self.srtt as u64);
        let reo = r.reo_wnd(self.in_recovery, b.sacked_segments(mss), srtt);
        let mut lost = 0;
        let mut marks = Vec::new();
        let wait = r.detect_loss(size, self.snd_max, reo, now, |s, e| b.holds(s, e), |s, e| marks.push((s, e)));
        for (s, e) in marks {
            b.mark_lost(s, e);
            lost += e - s;
        }
        if let Some(w) = wait {
            self.arm_early(Early::Reorder, now + w);
        }
        lost
    }

    /// RACK found a loss out of recovery: fast recovery (the algorithm's reduction unless an
    /// ECN-Echo's CWR made it this round trip), with the record to undo it; the lost
    /// segments go first (`NextSeg` rule 1 over RACK's marks).
    fn enter_rack_recovery(&mut self, now: SimTime, owned: bool) -> bool {
        let undo = Undo { retrans: 0, first_retx: None, marker: self.snd_una, cwnd: self.w.cwnd, ssthresh: self.w.ssthresh };
        self.start_fast_recovery(now, owned);
        let b = self.board.as_mut().expect("RACK marks losses on the scoreboard");
        b.start_recovery(self.snd_una);
        self.rack.as_mut().unwrap().undo = Some(undo);
        true
    }

    /// Undo a fast recovery that was not needed (Linux `tcp_try_undo_dsack`, and at its end
    /// `tcp_try_undo_recovery`): every retransmission reported a duplicate, or, at the end
    /// (`ending`), the ACK echoes a send time before the first retransmission. The window
    /// and threshold from before the reduction come back; whether it undid.
    fn try_undo(&mut self, ts_echo: SimTime, ending: bool) -> bool {
        let Some(r) = &mut self.rack else { return false };
        let Some(u) = r.undo else { return false };
        let Some(first) = u.first_retx else { return false };
        let all_dsacked = u.retrans <= 0;
        let echo_predates_retx = ending && ts_echo < first;
        if !all_dsacked && !echo_predates_retx {
            return false;
        }
        r.undo = None;
        r.undone += 1;
        self.cwr = None;
        self.w.cwnd = self.w.cwnd.max(u.cwnd);
        self.w.ssthresh = self.w.ssthresh.max(u.ssthresh);
        true
    }

    /// After an ACK: RACK-TLP's probe timer, unless a reorder timer is armed (RFC 8985 7.2).
    #[cold]
    fn rack_arm(&mut self, now: SimTime) {
        if self.rack.as_ref().is_some_and(|r| r.early.is_none()) {
            self.arm_probe(now);
        }
    }

    /// Arm the loss probe (RFC 8985 7.2, Linux `tcp_schedule_loss_probe`): in the Open or
    /// CWR state with data outstanding and no probe out, PTO = 2 x SRTT from now, or the
    /// RTO's time if that comes first (the probe is then sent in its place).
    fn arm_probe(&mut self, now: SimTime) {
        let Some(r) = &self.rack else { return };
        if self.in_recovery || self.in_loss || self.syn_pending || r.probe.is_some() || !self.has_rtt || self.snd_max <= self.snd_una {
            return;
        }
        if r.early.is_some_and(|e| e.0 == Early::Reorder) {
            return;
        }
        let at = now + SimTime((2.0 * self.srtt) as u64);
        self.arm_early(Early::Probe, at);
    }

    /// Hold the retransmission timer for RACK-TLP's `kind` at `at` (the earlier wins; a
    /// probe due after the RTO is sent at the RTO's time instead).
    fn arm_early(&mut self, kind: Early, at: SimTime) {
        let r = self.rack.as_mut().unwrap();
        if let Some((_, rto)) = r.early.take() {
            self.rto_deadline = rto;
        }
        let at = match (kind, self.rto_deadline) {
            (Early::Probe, Some(d)) => at.min(d),
            (Early::Reorder, Some(d)) if d <= at => return,
            _ => at,
        };
        r.early = Some((kind, self.rto_deadline));
        self.rto_deadline = Some(at);
    }

    /// The flow's timer fired at `now` (a message of `size` bytes): RACK-TLP's reorder or
    /// probe timer where one holds it, else the retransmission timer (`on_timeout`).
    pub fn on_timer(&mut self, now: SimTime, size: u64) -> bool {
        let early = match &mut self.rack {
            Some(r) if self.rto_deadline.is_some_and(|d| d <= now) => r.early.take(),
            _ => None,
        };
        let Some((kind, rto)) = early else {
            return self.on_timeout(now);
        };
        self.rto_deadline = rto;
        match kind {
            Early::Reorder => {
                let owned = C::CONG_CONTROL && self.rate.is_some();
                let lost = self.rack_detect(size, now);
                if lost > 0 && !self.in_recovery && !self.in_loss {
                    self.enter_rack_recovery(now, owned);
                }
                if lost > 0 && owned {
                    self.rate.as_mut().unwrap().mark_lost(lost);
                }
                self.rack_arm(now);
            }
            Early::Probe => self.send_probe(now, size),
        }
        true
    }

    /// The probe timer fired (RFC 8985 7.3): one new segment whatever the window, or, with
    /// none to send, the highest segment again; the RTO re-armed from now.
    fn send_probe(&mut self, now: SimTime, size: u64) {
        let mss = self.w.mss as u64;
        if self.snd_max <= self.snd_una {
            return;
        }
        let probe = if self.snd_nxt < size && self.snd_nxt == self.snd_max && ((self.inflight() + mss.min(size - self.snd_nxt)) as f64) <= self.rwnd {
            self.force_one = true;
            (self.snd_nxt + mss.min(size - self.snd_nxt), false)
        } else {
            let last = (self.snd_max - 1) / mss * mss;
            let end = (last + mss).min(size);
            if last < self.snd_una || self.board.as_ref().is_some_and(|b| b.holds(last, end)) {
                self.rto_deadline = Some(now + self.rto);
                return;
            }
            self.pending_retx = Some(last);
            (end, true)
        };
        let r = self.rack.as_mut().unwrap();
        r.probe = Some(probe);
        r.probes += 1;
        self.rto_deadline = Some(now + self.rto);
    }

    /// Fast recovery begins until everything sent so far is acknowledged: the algorithm's
    /// reduction, unless an ECN-Echo's CWR already made it this round trip (PRR then
    /// carries on from that one, as Linux's `tcp_enter_recovery` keeps it).
    fn start_fast_recovery(&mut self, now: SimTime, owned: bool) {
        let inflight = self.snd_max - self.snd_una;
        if owned || self.cwr.is_none() {
            let prior_cwnd = self.w.cwnd;
            self.cc.on_fast_retransmit(&mut self.w, inflight, now);
            if !owned {
                self.cwr = Some(Cwr { high_seq: self.snd_max, prior_cwnd, prr_delivered: 0, prr_out: 0 });
            }
        }
        self.in_recovery = true;
        self.recover = self.snd_max;
    }

    /// Loss found with SACK (RFC 6675 sec. 5 step 4): the algorithm's reduction, unless an
    /// ECN-Echo's CWR already made it this round trip (PRR then carries on from that one,
    /// as Linux's `tcp_enter_recovery` keeps it); the first hole resent at once.
    fn enter_sack_recovery(&mut self, now: SimTime, owned: bool) -> bool {
        self.start_fast_recovery(now, owned);
        let b = self.board.get_or_insert_with(Box::default);
        // the last recovery may have resent it already (rule 1 goes past its RecoveryPoint)
        let again = !b.resent(self.snd_una);
        b.start_recovery(self.snd_una);
        if again {
            self.pending_retx = Some(self.snd_una);
        }
        again
    }

    /// An ACK for an algorithm that owns the window: NewReno's retransmission decisions,
    /// none of its window arithmetic; the delivery-rate sample and the recovery state go to
    /// the algorithm's `cong_control` (Linux's `tcp_ack` -> `tcp_fastretrans_alert`, then
    /// `tcp_cong_control`).
    fn on_ack_owned(&mut self, ack: u64, ts_echo: SimTime, now: SimTime, size: u64, echo: PathEcho) -> AckOutcome {
        let mut out = AckOutcome::default();
        let mss = self.w.mss as u64;
        let outstanding = self.inflight();
        let rs = if ack > self.snd_una {
            let ev = self.advance(ack, false, ts_echo, now, echo);
            let r = self.rate.as_mut().unwrap();
            let rs = r.on_ack(ack, ev.acked, mss, outstanding, now, ev.rtt);
            if self.in_recovery {
                if ack >= self.recover {
                    self.in_recovery = false;
                } else {
                    // a partial ACK: the next hole is lost too
                    self.pending_retx = Some(self.snd_una);
                    out.retransmit = true;
                    r.mark_lost(mss.min(size - self.snd_una));
                }
            }
            if self.in_loss && ack >= self.recover {
                self.in_loss = false;
            }
            out.finished = self.rearm(size, now);
            rs
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.dupacks += 1;
            let rs = self.rate.as_mut().unwrap().on_dupack(mss, outstanding, now);
            if self.dupacks == 3 && !self.in_recovery && !self.in_loss && ack >= self.recover {
                self.cc.on_fast_retransmit(&mut self.w, self.snd_max - self.snd_una, now);
                out.retransmit = self.enter_recovery();
                let lost = mss.min(size - self.snd_una);
                self.rate.as_mut().unwrap().mark_lost(lost);
            }
            rs
        } else {
            return out;
        };
        let state = self.ca_state();
        let r = self.rate.as_mut().unwrap();
        let mut rs = rs;
        rs.losses = r.take_losses();
        let ctl = Control { rs, state, pipe: r.pipe(self.snd_nxt - self.snd_una), delivered: r.delivered, now };
        self.cc.cong_control(&mut self.w, &ctl, r);
        out
    }

    /// An ACK under NewReno's window arithmetic (every algorithm but one that owns the window).
    #[inline]
    fn on_ack_newreno(&mut self, ack: u64, ece: bool, ts_echo: SimTime, now: SimTime, size: u64, echo: PathEcho) -> AckOutcome {
        let mut out = AckOutcome::default();
        if ack > self.snd_una {
            let ev = self.advance(ack, ece, ts_echo, now, echo);
            let acked = ev.acked;
            if self.in_recovery {
                if ack >= self.recover {
                    self.in_recovery = false;
                    self.w.cwnd = self.w.ssthresh.max(self.w.min_cwnd());
                } else {
                    // NewReno partial ACK: retransmit the next hole, deflate.
                    self.pending_retx = Some(self.snd_una);
                    out.retransmit = true;
                    self.w.cwnd = (self.w.cwnd - acked as f64 + self.w.mss).max(self.w.mss);
                }
            } else {
                if self.cwr.is_some_and(|c| ack > c.high_seq) {
                    self.cwr = None;
                    self.w.cwnd = self.w.ssthresh;
                }
                self.on_ecn_echo(ece);
                if self.cwr.is_some() {
                    self.reduce_cwnd(acked);
                } else {
                    self.cc.cong_avoid(&mut self.w, &ev);
                }
            }
            out.finished = self.rearm(size, now);
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.dupacks += 1;
            self.on_ecn_echo(ece);
            if self.dupacks == 3 && !self.in_recovery && ack >= self.recover {
                let inflight = self.snd_max - self.snd_una;
                if self.cwr.take().is_some() {
                    // reduced within this round trip already: recover from that ssthresh
                    self.w.cwnd = self.w.ssthresh + 3.0 * self.w.mss;
                } else {
                    self.cc.on_fast_retransmit(&mut self.w, inflight, now);
                }
                out.retransmit = self.enter_recovery();
            } else if self.in_recovery {
                self.w.cwnd += self.w.mss;
            }
        }
        out
    }

    /// The retransmission timer fired at `now`. Returns true if it really expired.
    pub fn on_timeout(&mut self, now: SimTime) -> bool {
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return false,
        }
        if self.syn_pending {
            // the SYN (or its SYN-ACK) was lost: send it again, backing off (RFC 6298 5.5)
            self.rto = SimTime((self.rto.0.saturating_mul(2)).min(SimTime::from_ms(60_000).0));
            self.rto_deadline = Some(now + self.rto);
            self.timeouts += 1;
            return true;
        }
        let inflight = self.snd_max - self.snd_una;
        self.cwr = None;
        self.force_one = false;
        if let Some(r) = &mut self.rack {
            r.early = None;
            r.on_timeout(self.snd_max);
            r.on_recovery_end();
        }
        let mut out = self.snd_nxt - self.snd_una;
        if let Some(b) = &mut self.board {
            out -= b.sacked_in(self.snd_una, self.snd_nxt);
            b.timed_out(self.snd_una, self.snd_max);
        }
        if let Some(r) = &mut self.rate {
            r.on_timeout(out);
            self.in_loss = true;
        }
        self.cc.on_timeout(&mut self.w, inflight, now);
        self.recover = self.snd_max;
        self.in_recovery = false;
        self.dupacks = 0;
        self.snd_nxt = self.snd_una; // go-back-N: resend everything unacknowledged
        self.pending_retx = None;
        self.rto = SimTime((self.rto.0.saturating_mul(2)).min(SimTime::from_ms(60_000).0));
        self.rto_deadline = Some(now + self.rto);
        self.timeouts += 1;
        true
    }

    /// The SYN-ACK arrived: the connection is open and data may go (the first data segment
    /// carries the handshake's final ACK).
    pub fn on_syn_ack(&mut self) {
        self.syn_pending = false;
        self.rto_deadline = None;
    }

    /// Arm the timer if data is outstanding and none is armed (on first transmission).
    pub fn arm_if_idle(&mut self, now: SimTime) {
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
        }
    }
}

/// Per-flow receiver: cumulative ACK point plus out-of-order segments, and, where it sends
/// selective acknowledgements, the blocks it holds above the cumulative point.
#[derive(Clone, Debug, Default)]
pub struct Receiver {
    pub rcv_nxt: u64,
    ooo: BTreeMap<u64, u64>,
    pub bytes: u64,
    /// It sends selective acknowledgements (`TcpParams::sack`).
    pub sack: bool,
    /// The blocks above `rcv_nxt`, the most recently changed first (RFC 2018 sec. 4: the
    /// first block reports the latest segment, the others the most recently reported;
    /// as ns-3's `TcpRxBuffer::UpdateSackList` keeps them).
    sack_list: Vec<(u64, u64)>,
    /// It reports a segment it already holds by a D-SACK (RFC 2883), as Linux receivers do
    /// (`net.ipv4.tcp_dsack = 1`; with `TcpParams::rack`).
    pub dsack: bool,
    /// The duplicate the next ACK reports first.
    dup: Option<(u64, u64)>,
}

impl Receiver {
    /// A receiver that sends selective acknowledgements if `sack`.
    pub fn new(sack: bool) -> Receiver {
        Receiver { sack, ..Default::default() }
    }
    /// The receiver, reporting duplicates by D-SACK if `dsack`.
    pub fn with_dsack(mut self, dsack: bool) -> Receiver {
        self.dsack = dsack;
        self
    }
    /// Accept a segment [seq, seq+len); returns the new cumulative ACK.
    pub fn on_data(&mut self, seq: u64, len: u64) -> u64 {
        let end = seq + len;
        if self.dsack {
            self.dup = (!self.holds_not(seq, len)).then_some((seq, end));
        }
        if end <= self.rcv_nxt {
            return self.rcv_nxt;
        }
        if seq <= self.rcv_nxt {
            self.bytes += end - self.rcv_nxt;
            self.rcv_nxt = end;
            while let Some((&s, &e)) = self.ooo.iter().next() {
                if s > self.rcv_nxt {
                    break;
                }
                self.ooo.remove(&s);
                if e > self.rcv_nxt {
                    self.bytes += e - self.rcv_nxt;
                    self.rcv_nxt = e;
                }
            }
            if !self.sack_list.is_empty() {
                let next = self.rcv_nxt;
                self.sack_list.retain(|&(_, e)| e > next);
            }
        } else {
            let e = self.ooo.entry(seq).or_insert(end);
            if end > *e {
                *e = end;
            }
            if self.sack {
                self.sack_block(seq, end);
            }
        }
        self.rcv_nxt
    }

    /// Whether the segment [seq, seq+len) is new to it (a segment resent at the boundaries it
    /// was first sent at: held whole or not at all).
    pub fn holds_not(&self, seq: u64, len: u64) -> bool {
        seq + len > self.rcv_nxt && self.ooo.get(&seq).is_none_or(|&e| e < seq + len)
    }

    /// UE's SACK bitmap of the 64 packets of `mss` bytes from PSN `base`: bit i set when the
    /// packet of PSN `base` + i is held above the cumulative point (packets start at
    /// multiples of `mss`, as UET's do).
    pub fn held_bitmap(&self, base: u64, mss: u64) -> u64 {
        let from = base * mss;
        let to = from + crate::host::uet::SACK_BITMAP_PACKETS * mss;
        self.ooo.range(from..to).fold(0, |bits, (&s, _)| bits | 1 << ((s - from) / mss))
    }

    /// Out-of-order bytes [seq, end) arrived: their block, merged with every block it
    /// overlaps or touches, goes first.
    fn sack_block(&mut self, seq: u64, end: u64) {
        let (mut s, mut e) = (seq, end);
        self.sack_list.retain(|&(bs, be)| {
            let joins = bs <= e && be >= s;
            if joins {
                (s, e) = (s.min(bs), e.max(be));
            }
            !joins
        });
        self.sack_list.insert(0, (s, e));
    }

    /// The selective acknowledgement to send now (empty when nothing is held above the
    /// cumulative point).
    pub fn sack_blocks(&self) -> crate::net::Sack {
        match self.dup {
            // the D-SACK first, then the usual blocks (RFC 2883 sec. 4)
            Some(d) => crate::net::Sack::of(&[&[d][..], &self.sack_list].concat()),
            None => crate::net::Sack::of(&self.sack_list),
        }
    }

    /// Whether it holds any block to report.
    #[inline]
    pub fn has_sack(&self) -> bool {
        !self.sack_list.is_empty() || self.dup.is_some()
    }
    pub fn clear(&mut self) {
        self.ooo = BTreeMap::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::cc::reno::Reno;
    use crate::host::Cc;

    /// RFC 2018 sec. 4's blocks, as ns-3 keeps them: with 1000-byte segments and the
    /// second lost, each out-of-order arrival's block comes first, merged with the blocks
    /// it touches; at most 3 are reported; blocks the cumulative point passes go. Without
    /// `sack` the receiver keeps none.
    #[test]
    fn a_receiver_reports_its_latest_block_first() {
        let mut r = Receiver::new(true);
        let seg = |r: &mut Receiver, i: u64| r.on_data(i * 1000, 1000);
        assert_eq!(seg(&mut r, 0), 1000);
        assert!(!r.has_sack());
        seg(&mut r, 2);
        assert_eq!(r.sack_blocks().blocks(), &[(2000, 3000)]);
        seg(&mut r, 3);
        assert_eq!(r.sack_blocks().blocks(), &[(2000, 4000)]);
        seg(&mut r, 5);
        seg(&mut r, 7);
        assert_eq!(r.sack_blocks().blocks(), &[(7000, 8000), (5000, 6000), (2000, 4000)]);
        seg(&mut r, 9);
        assert_eq!(r.sack_blocks().blocks(), &[(9000, 10000), (7000, 8000), (5000, 6000)], "three at most, the oldest left out");
        seg(&mut r, 6);
        assert_eq!(r.sack_blocks().blocks(), &[(5000, 8000), (9000, 10000), (2000, 4000)], "6 joins 5 and 7");
        assert_eq!(seg(&mut r, 1), 4000);
        assert_eq!(r.sack_blocks().blocks(), &[(5000, 8000), (9000, 10000)]);
        assert_eq!(seg(&mut r, 4), 8000);
        assert_eq!(r.sack_blocks().blocks(), &[(9000, 10000)]);
        let mut plain = Receiver::new(false);
        plain.on_data(2000, 1000);
        assert!(!plain.has_sack());
    }

    /// A window algorithm that paces at a fixed rate (as BBR sets `sk_pacing_rate`).
    #[derive(Clone, Debug)]
    struct Paced(u64);
    impl CongestionControl for Paced {
        fn ssthresh(&mut self, w: &Window) -> f64 {
            w.cwnd / 2.0
        }
        fn cong_avoid(&mut self, w: &mut Window, a: &AckEvent) {
            w.grow(a.acked);
        }
        fn ect(&self) -> Ecn {
            Ecn::NotEct
        }
        const PACES: bool = true;
        fn pacing_rate(&self, _w: &Window, _srtt: Option<SimTime>) -> Option<u64> {
            Some(self.0)
        }
    }

    /// The pacing hook: a sender whose algorithm sets a rate spaces its segments one
    /// serialization time at that rate apart, whatever its window allows; an unpaced one
    /// (every algorithm shipped today) is never held.
    #[test]
    fn a_pacing_rate_spaces_segments_at_that_rate() {
        let mut s = TcpSender::new(Paced(8_000_000_000), 1000, 10, SimTime::from_ms(1), SimTime::from_ms(1));
        let t0 = SimTime::from_us(3);
        assert_eq!(s.paced_until(), Some(SimTime::ZERO));
        let seg = s.next_segment(100_000).unwrap();
        s.on_wire(&seg, 1000, t0, 100_000);
        // 1000 B at 8 Gb/s = 1 us, though nine more segments fit the window
        assert!(s.can_send(100_000));
        assert_eq!(s.paced_until(), Some(t0 + SimTime::from_us(1)));
        assert!(s.paced_until().unwrap() > t0 + SimTime::from_ns(999));
        let mut r = TcpSender::new(Cc::Reno(Reno { ect: Ecn::NotEct }), 1000, 10, SimTime::from_ms(1), SimTime::from_ms(1));
        let seg = r.next_segment(100_000).unwrap();
        r.on_wire(&seg, 1000, t0, 100_000);
        assert_eq!(r.paced_until(), None);
    }

    #[test]
    fn receiver_reassembles() {
        let mut r = Receiver::default();
        assert_eq!(r.on_data(0, 100), 100);
        assert_eq!(r.on_data(200, 100), 100);
        assert_eq!(r.on_data(300, 100), 100);
        assert_eq!(r.on_data(100, 100), 400);
        assert_eq!(r.on_data(0, 100), 400);
        assert_eq!(r.bytes, 400);
    }

    /// A 3,000 B receiver window admits three 1,000 B segments of a 10-segment cwnd.
    #[test]
    fn receiver_window_caps_bytes_in_flight() {
        let mut s = TcpSender::new(Cc::Reno(Reno { ect: crate::net::Ecn::NotEct }), 1000, 10, SimTime::from_ms(1), SimTime::from_ms(1)).with_window(Some(3000));
        for _ in 0..3 {
            s.next_segment(100_000).unwrap();
        }
        assert!(!s.can_send(100_000));
        assert_eq!(s.inflight(), 3000);
    }

    /// A zero RTO from a config built in code (scenarios refuse it) still moves the clock:
    /// each expiry re-arms the timer later than now, never at the same instant.
    #[test]
    fn a_zero_rto_never_rearms_at_the_same_instant() {
        let mut s = TcpSender::new(Cc::Reno(Reno { ect: crate::net::Ecn::NotEct }), 1000, 10, SimTime::ZERO, SimTime::ZERO);
        s.next_segment(100_000).unwrap();
        let mut now = SimTime::from_us(5);
        s.arm_if_idle(now);
        for _ in 0..3 {
            let due = s.rto_deadline.unwrap();
            assert!(due > now, "timer at {due:?}, now {now:?}");
            now = due;
            assert!(s.on_timeout(now));
        }
    }

    /// A Reno sender in congestion avoidance with ten 1,000 B segments out.
    fn reno_ecn_with_ten_out() -> TcpSender {
        let mut s = TcpSender::new(Cc::Reno(Reno { ect: crate::net::Ecn::Ect0 }), 1000, 10, SimTime::from_ms(1), SimTime::from_ms(1));
        s.w.ssthresh = 2000.0;
        while s.next_segment(1_000_000).is_some() {}
        assert_eq!(s.snd_nxt, 10_000);
        s
    }

    /// Linux's CWR round trip (RFC 3168 6.1.2, tcp_enter_cwr + PRR): an ECN-Echo halves
    /// ssthresh; for the ACKs of the ten segments that were out, the window does not grow, a
    /// second ECN-Echo is ignored, and PRR lets out ssthresh / prior_cwnd of what is
    /// delivered: five segments, one every other ACK until the flight is down to ssthresh,
    /// then one per ACK that opens room under it. The first ACK above high_seq ends CWR
    /// with cwnd = ssthresh and grows it as congestion avoidance does (+ MSS^2 / cwnd).
    #[test]
    fn an_ecn_echo_holds_the_window_for_a_round_trip() {
        let mut s = reno_ecn_with_ten_out();
        let t = SimTime::from_us(10);
        let mut sent = vec![];
        for ack in (1000..=10_000).step_by(1000) {
            let ece = ack == 1000 || ack == 4000;
            s.on_ack(ack, ece, SimTime::ZERO, t, 1_000_000, PathEcho::default());
            assert!(s.in_cwr(), "ack {ack}");
            assert_eq!(s.w.ssthresh, 5000.0, "ack {ack}: one reduction per round trip");
            assert!(s.w.cwnd <= 10_000.0, "ack {ack}: cwnd {}", s.w.cwnd);
            while let Some(seg) = s.next_segment(1_000_000) {
                sent.push((ack, seg.seq));
            }
        }
        assert_eq!(sent.len(), 5, "PRR sends ssthresh over the round trip: {sent:?}");
        let at: Vec<u64> = sent.iter().map(|&(ack, _)| ack).collect();
        assert_eq!(at, [1000, 3000, 5000, 7000, 10_000], "{sent:?}");
        s.on_ack(11_000, false, SimTime::ZERO, t, 1_000_000, PathEcho::default());
        assert!(!s.in_cwr());
        assert!((s.w.cwnd - (5000.0 + 1000.0 * 1000.0 / 5000.0)).abs() < 1e-9, "cwnd {}", s.w.cwnd);
    }

    /// An ECN-Echo on the ACK that ends CWR starts the next reduction at once, from the
    /// window the last one reached.
    #[test]
    fn an_ecn_echo_after_the_round_trip_cuts_again() {
        let mut s = reno_ecn_with_ten_out();
        let t = SimTime::from_us(10);
        for ack in (1000..=10_000).step_by(1000) {
            s.on_ack(ack, ack == 1000, SimTime::ZERO, t, 1_000_000, PathEcho::default());
            while s.next_segment(1_000_000).is_some() {}
        }
        s.on_ack(11_000, true, SimTime::ZERO, t, 1_000_000, PathEcho::default());
        assert!(s.in_cwr());
        assert_eq!(s.w.ssthresh, 2500.0);
    }

    /// A loss found within the CWR round trip enters fast recovery from the CWR's ssthresh,
    /// without a second reduction (Linux tcp_enter_recovery in CWR; RFC 3168 6.1.2).
    #[test]
    fn a_loss_in_cwr_does_not_reduce_again() {
        let mut s = reno_ecn_with_ten_out();
        let t = SimTime::from_us(10);
        s.on_ack(1000, true, SimTime::ZERO, t, 1_000_000, PathEcho::default());
        for i in 0..3 {
            let o = s.on_ack(1000, false, SimTime::ZERO, t, 1_000_000, PathEcho::default());
            assert_eq!(o.retransmit, i == 2);
        }
        assert!(!s.in_cwr());
        assert_eq!(s.w.ssthresh, 5000.0);
        assert_eq!(s.w.cwnd, 8000.0);
    }

    /// Without ECN (not ECT) an ECN-Echo cannot arrive; one that does is no signal.
    #[test]
    fn a_sender_that_is_not_ect_ignores_ecn_echo() {
        let mut s = TcpSender::new(Cc::Reno(Reno { ect: crate::net::Ecn::NotEct }), 1000, 10, SimTime::from_ms(1), SimTime::from_ms(1));
        s.w.ssthresh = 2000.0;
        while s.next_segment(1_000_000).is_some() {}
        s.on_ack(1000, true, SimTime::ZERO, SimTime::from_us(10), 1_000_000, PathEcho::default());
        assert!(!s.in_cwr());
        assert!(s.w.cwnd > 10_000.0);
    }

    #[test]
    fn three_dupacks_trigger_fast_retransmit() {
        let mut s = TcpSender::new(Cc::Reno(Reno { ect: crate::net::Ecn::NotEct }), 1000, 10, SimTime::from_ms(1), SimTime::from_ms(1));
        for _ in 0..10 {
            s.next_segment(100_000).unwrap();
        }
        assert!(!s.can_send(100_000));
        let t = SimTime::from_us(10);
        s.on_ack(1000, false, SimTime::ZERO, t, 100_000, PathEcho::default());
        for i in 0..3 {
            let o = s.on_ack(1000, false, SimTime::ZERO, t, 100_000, PathEcho::default());
            assert_eq!(o.retransmit, i == 2);
        }
        let seg = s.next_segment(100_000).unwrap();
        assert_eq!(seg.seq, 1000);
        assert!(seg.retx);
    }

    /// Rounds of a lossy path: each round the sender sends what it may, the path drops the
    /// transmissions `drops` names (a segment's start and which of its sendings, from 1),
    /// the receiver answers each arrival and the ACKs are back before the next round; a
    /// round with nothing to send and data outstanding waits for the timeout. The rounds
    /// until every dropped segment is acknowledged, the timeouts and the segments resent.
    fn lossy_rounds(sack: bool, size: u64, drops: &[(u64, u32)]) -> (u32, u32, u32) {
        let last = drops.iter().map(|d| d.0 + 1000).max().unwrap_or(0);
        let mut recovered = None;
        let mut p = TcpParams::for_tests();
        p.sack = sack;
        let mut s = TcpSender::from_params(Cc::Reno(Reno { ect: crate::net::Ecn::NotEct }), 1000, &p);
        let mut r = Receiver::new(sack);
        let mut sent: std::collections::HashMap<u64, u32> = Default::default();
        let (mut now, rtt) = (SimTime::ZERO, SimTime::from_us(10));
        let mut resent = 0;
        for round in 1..=200 {
            let mut arrivals = vec![];
            while let Some(seg) = s.next_segment(size) {
                s.arm_if_idle(now);
                resent += seg.retx as u32;
                let n = sent.entry(seg.seq).or_default();
                *n += 1;
                if !drops.contains(&(seg.seq, *n)) {
                    arrivals.push(seg);
                }
            }
            let t0 = now;
            now += rtt;
            for seg in arrivals {
                let ack = r.on_data(seg.seq, seg.len as u64);
                let b = r.sack_blocks();
                s.on_ack(ack, false, t0, now, size, PathEcho { sack: b.blocks(), ..Default::default() });
            }
            if s.snd_una >= last {
                recovered.get_or_insert(round);
            }
            if s.snd_una >= size {
                return (recovered.unwrap(), s.timeouts, resent);
            }
            if !s.can_send(size) && s.inflight() > 0 && s.rto_deadline.is_some_and(|d| d > now) {
                // nothing moves until the timer: wait for it if no ACK is due back
                if sent.len() as u64 * 1000 >= size && r.rcv_nxt < size && s.snd_una == r.rcv_nxt {
                    now = s.rto_deadline.unwrap();
                    assert!(s.on_timeout(now));
                }
            }
        }
        panic!("not done in 200 rounds: una {} of {size}", s.snd_una);
    }

    /// Five segments of one window lost (the third round's 40 segments, 30-69, every fourth
    /// from 40): NewReno resends one hole per round trip, so the last is acknowledged in
    /// round 8; with SACK (RFC 6675) every hole has three SACKed segments above it and all
    /// five go in round 4, acknowledged that round. Each resends just the five and neither
    /// times out. With the window's last segment lost instead of one in its middle, nothing
    /// above it can be SACKed: it goes on the partial ACK that reaches it, a round later.
    #[test]
    fn sack_recovers_every_hole_of_a_window_in_one_round_trip() {
        let drops: Vec<(u64, u32)> = [40, 44, 48, 52, 56].iter().map(|&k| (k * 1000, 1)).collect();
        let (sack_rounds, sack_to, sack_retx) = lossy_rounds(true, 200_000, &drops);
        let (reno_rounds, reno_to, reno_retx) = lossy_rounds(false, 200_000, &drops);
        assert_eq!((sack_to, reno_to), (0, 0));
        assert_eq!((sack_retx, reno_retx), (5, 5));
        assert_eq!((sack_rounds, reno_rounds), (4, 8));
        let tail: Vec<(u64, u32)> = [40, 44, 48, 52, 69].iter().map(|&k| (k * 1000, 1)).collect();
        assert_eq!(lossy_rounds(true, 200_000, &tail).0, 5);
    }

    /// Losses in every window, recovery after recovery (every seventh segment from the 20th
    /// lost once): every loss is resent once and nothing else is, none by the timeout.
    /// (The holes one recovery resends past its RecoveryPoint stay resent in the next, and
    /// a partial ACK resends the next hole only when a retransmission reached the receiver
    /// after it was sent: what arrives in order after a retransmission sent earlier is not
    /// lost.)
    #[test]
    fn sack_resends_each_loss_once_over_successive_recoveries() {
        // (none in the last window: a lost tail waits for the timeout, as it does without TLP)
        let drops: Vec<(u64, u32)> = (20..360).step_by(7).map(|k| (k * 1000, 1)).collect();
        let (_, timeouts, resent) = lossy_rounds(true, 400_000, &drops);
        assert_eq!((timeouts, resent), (0, drops.len() as u32));
    }

    /// A retransmission lost too: with SACK it is found lost once three segments sent after
    /// it are SACKed, and resent without waiting for the timeout; NewReno waits for it.
    #[test]
    fn sack_finds_a_lost_retransmission_without_the_timeout() {
        let drops = [(20_000, 1), (20_000, 2), (26_000, 1)];
        let (_, sack_to, sack_retx) = lossy_rounds(true, 100_000, &drops);
        let (_, reno_to, _) = lossy_rounds(false, 100_000, &drops);
        assert_eq!(sack_to, 0);
        assert_eq!(sack_retx, 3, "20 KB twice, 26 KB once");
        assert!(reno_to >= 1);
    }

    #[test]
    fn timeout_goes_back_and_backs_off() {
        let mut s = TcpSender::new(Cc::Reno(Reno { ect: crate::net::Ecn::NotEct }), 1000, 4, SimTime::from_ms(1), SimTime::from_ms(1));
        for _ in 0..4 {
            s.next_segment(10_000).unwrap();
        }
        s.arm_if_idle(SimTime::ZERO);
        assert!(!s.on_timeout(SimTime::from_us(999)));
        assert!(s.on_timeout(SimTime::from_ms(1)));
        assert_eq!(s.snd_nxt, 0);
        assert_eq!(s.rto, SimTime::from_ms(2));
        assert_eq!(s.w.cwnd, 1000.0);
        let seg = s.next_segment(10_000).unwrap();
        assert!(seg.retx && seg.seq == 0);
    }

    /// An algorithm that owns the window and records what the sender tells it.
    #[derive(Clone, Debug, Default)]
    struct Owner {
        seen: Vec<(CaState, u64, u64, u64, bool)>,
        retransmits: u32,
    }
    impl CongestionControl for Owner {
        fn ssthresh(&mut self, w: &Window) -> f64 {
            w.ssthresh
        }
        fn cong_avoid(&mut self, _w: &mut Window, _a: &AckEvent) {}
        fn on_fast_retransmit(&mut self, _w: &mut Window, _inflight: u64, _now: SimTime) {
            self.retransmits += 1;
        }
        fn on_timeout(&mut self, w: &mut Window, _inflight: u64, _now: SimTime) {
            w.cwnd = w.mss;
        }
        fn ect(&self) -> Ecn {
            Ecn::NotEct
        }
        const CONG_CONTROL: bool = true;
        fn cong_control(&mut self, _w: &mut Window, c: &Control, _rate: &mut DeliveryRate) {
            self.seen.push((c.state, c.rs.acked, c.rs.losses, c.pipe, c.rs.interval.is_some()));
        }
    }

    /// For an algorithm that owns the window the sender keeps NewReno's retransmissions and
    /// none of its window arithmetic: each duplicate ACK reports a segment delivered and out
    /// of the network (the window is not inflated), the third enters Recovery with the hole
    /// lost, the partial ACK marks the next hole, a timeout is Loss until everything sent
    /// before it is acknowledged.
    #[test]
    fn an_owned_window_hears_every_ack_and_keeps_its_cwnd() {
        let mut s = TcpSender::new(Owner::default(), 1000, 10, SimTime::from_ms(1), SimTime::from_ms(1));
        assert!(s.rate.is_some());
        let size = 100_000;
        let mut t = SimTime::from_us(1);
        for _ in 0..10 {
            let seg = s.next_segment(size).unwrap();
            s.on_wire(&seg, 1040, t, size);
            t += SimTime::from_us(1);
        }
        let cwnd = s.w.cwnd;
        let t = SimTime::from_us(20);
        // segment 0 delivered (sent at 1 us: a 19 us RTT, over which the sample is timed),
        // segment 1 lost: duplicate ACKs for 1000
        s.on_ack(1000, false, SimTime::from_us(1), t, size, PathEcho::default());
        for i in 0..4 {
            let o = s.on_ack(1000, false, SimTime::ZERO, t, size, PathEcho::default());
            assert_eq!(o.retransmit, i == 2);
        }
        assert_eq!(s.w.cwnd, cwnd, "no NewReno inflation");
        assert_eq!(s.cc.retransmits, 1);
        let seen = &s.cc.seen;
        assert_eq!(seen.len(), 5);
        assert_eq!(seen[0], (CaState::Open, 1000, 0, 9000, true));
        // each duplicate ACK: a segment delivered, one fewer in the network
        assert_eq!(seen[1], (CaState::Open, 1000, 0, 8000, false));
        assert_eq!(seen[3], (CaState::Recovery, 1000, 1000, 6000, false));
        assert_eq!(seen[4].0, CaState::Recovery);
        assert_eq!(seen[4].3, 5000);
        // the retransmission fills the hole; a partial ACK (the 4 segments after the hole
        // arrived) counts only the hole's segment and marks the next hole lost
        let seg = s.next_segment(size).unwrap();
        assert!(seg.retx && seg.seq == 1000);
        s.on_wire(&seg, 1040, t, size);
        let o = s.on_ack(6000, false, SimTime::from_us(20), SimTime::from_us(40), size, PathEcho::default());
        assert!(o.retransmit);
        let last = *s.cc.seen.last().unwrap();
        assert_eq!(last.0, CaState::Recovery);
        assert_eq!(last.1, 1000, "the duplicate ACKs counted the other four");
        assert_eq!(last.2, 1000, "the next hole is lost");
        // a timeout: Loss, everything in flight lost, until the ACK passes what was sent
        s.arm_if_idle(SimTime::from_us(40));
        let deadline = s.rto_deadline.unwrap();
        assert!(s.on_timeout(deadline));
        assert_eq!(s.w.cwnd, 1000.0);
        let seg = s.next_segment(size).unwrap();
        s.on_wire(&seg, 1040, deadline, size);
        s.on_ack(7000, false, deadline, deadline + SimTime::from_us(20), size, PathEcho::default());
        let last = *s.cc.seen.last().unwrap();
        assert_eq!(last.0, CaState::Loss);
        assert_eq!(last.2, 4000, "the four segments in flight at the timeout");
        s.on_ack(10_000, false, deadline, deadline + SimTime::from_us(21), size, PathEcho::default());
        assert_eq!(s.cc.seen.last().unwrap().0, CaState::Open);
    }

    /// What one flow over `path` did (`path_run`).
    #[derive(Debug, Default)]
    struct PathRun {
        done: SimTime,
        resent: u32,
        timeouts: u32,
        probes: u64,
        undone: u64,
        cwnd: f64,
    }

    /// One Reno flow of `size` bytes (1000-byte segments, 1 us apart at the NIC) across a
    /// path whose one-way delay for the `n`-th sending of the segment at `seq` is
    /// `path(seq, n)` (None: dropped); ACKs take 5 us back and echo their data's send time;
    /// the flow's timer fires. SACK on; RACK-TLP as `rack` says.
    fn path_run(rack: bool, size: u64, path: impl Fn(u64, u32) -> Option<SimTime>) -> PathRun {
        #[derive(Debug)]
        enum Ev {
            Nic,
            Data(u64, u64, SimTime),
            Ack(u64, Vec<(u64, u64)>, SimTime),
        }
        let mut p = TcpParams::for_tests();
        p.sack = true;
        p.rack = rack;
        p.init_cwnd = 20;
        let mut s = TcpSender::from_params(Cc::Reno(Reno { ect: crate::net::Ecn::NotEct }), 1000, &p);
        let mut r = Receiver::new(true).with_dsack(rack);
        let (us, back) = (SimTime::from_us(1), SimTime::from_us(5));
        let mut sends: std::collections::HashMap<u64, u32> = Default::default();
        let mut q: Vec<(SimTime, u64, Ev)> = vec![(SimTime::ZERO, 0, Ev::Nic)];
        let (mut id, mut nic_free, mut nic_armed) = (1u64, SimTime::ZERO, true);
        let mut out = PathRun::default();
        while s.snd_una < size {
            let next = (0..q.len()).min_by_key(|&i| (q[i].0, q[i].1));
            let now = next.map_or(SimTime::MAX, |i| q[i].0);
            if s.rto_deadline.is_some_and(|d| d < now) {
                let now = s.rto_deadline.unwrap();
                let was = s.timeouts;
                s.on_timer(now, size);
                out.timeouts += s.timeouts - was;
                q.push((now.max(nic_free), id, Ev::Nic));
                id += 1;
                continue;
            }
            let (now, _, ev) = q.swap_remove(next.expect("a timer or an event is always pending"));
            assert!(now < SimTime::from_ms(1000), "stuck: una {} of {size}", s.snd_una);
            match ev {
                Ev::Nic => {
                    nic_armed = false;
                    if now >= nic_free {
                        if let Some(seg) = s.next_segment(size) {
                            s.arm_if_idle(now);
                            s.on_wire(&seg, 1000, now, size);
                            out.resent += seg.retx as u32;
                            let n = sends.entry(seg.seq).or_default();
                            *n += 1;
                            if let Some(d) = path(seg.seq, *n) {
                                q.push((now + d, id, Ev::Data(seg.seq, seg.len as u64, now)));
                                id += 1;
                            }
                            nic_free = now + us;
                        }
                    }
                }
                Ev::Data(seq, len, sent) => {
                    let ack = r.on_data(seq, len);
                    q.push((now + back, id, Ev::Ack(ack, r.sack_blocks().blocks().to_vec(), sent)));
                    id += 1;
                }
                Ev::Ack(ack, blocks, echo) => {
                    s.on_ack(ack, false, echo, now, size, PathEcho { sack: &blocks, ..Default::default() });
                }
            }
            if !nic_armed && s.can_send(size) {
                q.push((now.max(nic_free), id, Ev::Nic));
                id += 1;
                nic_armed = true;
            }
            out.done = now;
        }
        if let Some(k) = &s.rack {
            (out.probes, out.undone) = (k.probes, k.undone);
        }
        out.cwnd = s.w.cwnd;
        out
    }

    /// Every 10th segment of a 200-segment flow is 6 us late on a 10 us path (behind the
    /// five sent after it): DupThresh reads each as lost and resends it. RACK resends the
    /// first (nothing has shown reordering yet: its window is 0 with three segments
    /// SACKed) and learns from the original arriving before the resend that it was
    /// reordering; its window is then a quarter of the 15 us minimum RTT, 3.75 us, short of
    /// 6 us, so the second is resent too, and its D-SACK grows the window a step (7.5 us):
    /// no resend after that. Undoing the spurious recoveries keeps the window open.
    #[test]
    fn rack_waits_out_reordering_that_dupthresh_reads_as_loss() {
        let late = |seq: u64, _n: u32| Some(SimTime::from_us(if seq / 1000 % 10 == 5 { 16 } else { 10 }));
        let dup = path_run(false, 200_000, late);
        let rack = path_run(true, 200_000, late);
        assert!(dup.resent >= 20, "DupThresh resends every late segment: {dup:?}");
        assert_eq!(rack.resent, 2, "RACK the first two: {rack:?}");
        assert_eq!((dup.timeouts, rack.timeouts), (0, 0));
        assert!(rack.undone >= 1, "{rack:?}");
        assert!(rack.cwnd > 10.0 * dup.cwnd, "{rack:?} against {dup:?}");
        assert!(rack.done.0 * 2 < dup.done.0, "{rack:?} against {dup:?}");
    }

    /// A lost tail: the last two segments of a 30-segment flow dropped once. Without a
    /// probe nothing is SACKed above them and the flow waits for the 1 ms RTO; RACK-TLP
    /// probes with the last segment two SRTTs after the silence begins, its SACK shows the
    /// other lost, and the flow ends within tens of microseconds.
    #[test]
    fn a_loss_probe_recovers_a_lost_tail_before_the_rto() {
        let tail = |seq: u64, n: u32| (n > 1 || seq < 28_000).then_some(SimTime::from_us(10));
        let dup = path_run(false, 30_000, tail);
        let rack = path_run(true, 30_000, tail);
        assert_eq!((dup.timeouts, rack.timeouts), (1, 0), "{dup:?} {rack:?}");
        assert_eq!(rack.probes, 1);
        assert_eq!(rack.resent, 2, "the probe, then the other by RACK");
        assert!(dup.done > SimTime::from_ms(1), "{dup:?}");
        assert!(rack.done < SimTime::from_us(150), "{rack:?}");
    }

    /// A real loss in the middle of a window is found as DupThresh finds it and resent once;
    /// the recovery's reduction stands (no D-SACK, the echo is the resend's).
    #[test]
    fn rack_recovers_a_real_loss_and_keeps_the_reduction() {
        let drop = |seq: u64, n: u32| (n > 1 || seq != 50_000).then_some(SimTime::from_us(10));
        let dup = path_run(false, 100_000, drop);
        let rack = path_run(true, 100_000, drop);
        assert_eq!((dup.resent, rack.resent), (1, 1));
        assert_eq!((dup.timeouts, rack.timeouts), (0, 0));
        assert_eq!(rack.undone, 0);
        assert!(rack.done <= dup.done + SimTime::from_us(2), "{rack:?} {dup:?}");
    }
}
