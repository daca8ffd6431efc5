//! Congestion control as a small trait with default hooks (smoltcp style),
//! dispatched statically through the `Cc` enum: a new algorithm is a new file
//! plus one enum arm.

use super::cubic::Cubic;
use super::dctcp::Dctcp;
use super::reno::Reno;
use crate::net::Ecn;
use crate::sim::SimTime;

/// What a new cumulative ACK tells the congestion controller.
#[derive(Copy, Clone, Debug)]
pub struct AckEvent {
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// ECN-Echo: the acknowledged packet was CE-marked.
    pub ece: bool,
    /// The new snd_una.
    pub ack: u64,
    pub snd_nxt: u64,
    pub now: SimTime,
    /// RTT sample of this ACK (from the echoed timestamp).
    pub rtt: SimTime,
}

/// The sender's window state that every algorithm manipulates (bytes).
#[derive(Clone, Debug)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub mss: f64,
    /// ECN reaction guard (RFC 3168 6.1.2): no further reduction until an ACK
    /// covers data sent after the last one, i.e. ack > cwr_end.
    pub cwr_end: u64,
}

impl Window {
    /// Smallest window any algorithm may set: two segments, as Linux does.
    pub fn min_cwnd(&self) -> f64 {
        2.0 * self.mss
    }
    /// Slow start below ssthresh (RFC 5681 3.1, byte counting), else additive
    /// increase of one MSS per window.
    pub fn grow(&mut self, acked: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += (acked as f64).min(2.0 * self.mss);
        } else {
            self.cwnd += self.mss * acked as f64 / self.cwnd;
        }
    }
    /// Multiplicative decrease to `factor` of the window; sets ssthresh to the result.
    pub fn reduce_to(&mut self, factor: f64) {
        self.cwnd = (self.cwnd * factor).max(self.min_cwnd());
        self.ssthresh = self.cwnd;
    }
}

/// Hooks every congestion-control algorithm provides.
pub trait CongestionControl {
    /// New data was cumulatively acknowledged.
    fn on_ack(&mut self, w: &mut Window, a: &AckEvent);
    /// Three duplicate ACKs at `now`: loss inferred (RFC 5681 3.2). Default: halve.
    fn on_fast_retransmit(&mut self, w: &mut Window, inflight: u64, _now: SimTime) {
        w.ssthresh = (inflight as f64 / 2.0).max(w.min_cwnd());
        w.cwnd = w.ssthresh + 3.0 * w.mss;
    }
    /// Retransmission timeout at `now` (RFC 5681 3.1 eq. 4): window of one segment.
    fn on_timeout(&mut self, w: &mut Window, inflight: u64, _now: SimTime) {
        w.ssthresh = (inflight as f64 / 2.0).max(w.min_cwnd());
        w.cwnd = w.mss;
    }
    /// The ECN codepoint of data packets: not ECT, ECT(0) (classic ECN, RFC 3168) or ECT(1)
    /// (a scalable sender, RFC 9331).
    fn ect(&self) -> Ecn;
}

/// The implemented window-based algorithms.
#[derive(Clone, Debug)]
pub enum Cc {
    Dctcp(Dctcp),
    Reno(Reno),
    Cubic(Cubic),
}

impl CongestionControl for Cc {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, a: &AckEvent) {
        match self {
            Cc::Dctcp(c) => c.on_ack(w, a),
            Cc::Reno(c) => c.on_ack(w, a),
            Cc::Cubic(c) => c.on_ack(w, a),
        }
    }
    fn on_fast_retransmit(&mut self, w: &mut Window, inflight: u64, now: SimTime) {
        match self {
            Cc::Dctcp(c) => c.on_fast_retransmit(w, inflight, now),
            Cc::Reno(c) => c.on_fast_retransmit(w, inflight, now),
            Cc::Cubic(c) => c.on_fast_retransmit(w, inflight, now),
        }
    }
    fn on_timeout(&mut self, w: &mut Window, inflight: u64, now: SimTime) {
        match self {
            Cc::Dctcp(c) => c.on_timeout(w, inflight, now),
            Cc::Reno(c) => c.on_timeout(w, inflight, now),
            Cc::Cubic(c) => c.on_timeout(w, inflight, now),
        }
    }
    fn ect(&self) -> Ecn {
        match self {
            Cc::Dctcp(c) => c.ect(),
            Cc::Reno(c) => c.ect(),
            Cc::Cubic(c) => c.ect(),
        }
    }
}

impl Cc {
    /// DCTCP's alpha, if this is DCTCP.
    pub fn alpha(&self) -> Option<f64> {
        match self {
            Cc::Dctcp(d) => Some(d.alpha),
            _ => None,
        }
    }
}
