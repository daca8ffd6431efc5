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
}

/// Hooks every congestion-control algorithm provides, named after Linux's
/// `tcp_congestion_ops` (include/net/tcp.h): the sender (`host/tcp.rs`) runs the state
/// machine of `tcp_ack` (Open, CWR, Recovery) and asks the algorithm for the three things
/// that differ between algorithms: what an ACK tells it, the window after a congestion
/// signal, and growth while no reduction is under way.
pub trait CongestionControl {
    /// Every ACK of new data, in any state, before the sender acts on it (Linux's
    /// `in_ack_event` / `pkts_acked`): DCTCP counts marked bytes here, Cubic its RTT.
    fn on_ack_event(&mut self, _w: &Window, _a: &AckEvent) {}
    /// The slow-start threshold after an ECN-Echo (Linux's `ssthresh` op, called by
    /// `tcp_enter_cwr`), in bytes; the sender then reduces cwnd to it over one round trip.
    fn ssthresh(&mut self, w: &Window) -> f64;
    /// Window growth on an ACK of new data while no reduction is under way (Linux's
    /// `cong_avoid`; slow start included).
    fn cong_avoid(&mut self, w: &mut Window, a: &AckEvent);
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
    fn on_ack_event(&mut self, w: &Window, a: &AckEvent) {
        match self {
            Cc::Dctcp(c) => c.on_ack_event(w, a),
            Cc::Reno(c) => c.on_ack_event(w, a),
            Cc::Cubic(c) => c.on_ack_event(w, a),
        }
    }
    fn ssthresh(&mut self, w: &Window) -> f64 {
        match self {
            Cc::Dctcp(c) => c.ssthresh(w),
            Cc::Reno(c) => c.ssthresh(w),
            Cc::Cubic(c) => c.ssthresh(w),
        }
    }
    #[inline]
    fn cong_avoid(&mut self, w: &mut Window, a: &AckEvent) {
        match self {
            Cc::Dctcp(c) => c.cong_avoid(w, a),
            Cc::Reno(c) => c.cong_avoid(w, a),
            Cc::Cubic(c) => c.cong_avoid(w, a),
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
