//! TCP CUBIC (RFC 9438, "CUBIC for Fast and Long-Distance Networks", 2023) with optional
//! classic ECN (RFC 3168: an ECN-Echo is a congestion event like a loss; the sender's CWR
//! state brings cwnd down to the new ssthresh over one round trip and ignores further
//! ECN-Echoes meanwhile, `host/tcp.rs`). Windows are in segments inside the algorithm,
//! bytes in `Window`.
//!
//! * Congestion avoidance (sec. 4.2-4.5): W_cubic(t) = C (t - K)^3 + W_max with
//!   K = cbrt((W_max - cwnd_epoch) / C), t the time since the epoch began (the first ACK
//!   in congestion avoidance after a congestion event). Each ACK moves cwnd toward
//!   target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd], by (target - cwnd) / cwnd.
//! * Reno-friendly region (sec. 4.3): W_est starts at cwnd_epoch and grows by
//!   alpha_cubic = 3 (1 - beta) / (1 + beta) segments per window of ACKed data; when
//!   W_cubic(t) < W_est, cwnd = W_est. As Linux's tcp_cubic.c (`bictcp_update`'s
//!   tcp_friendliness, one segment per cwnd * beta_scale / 8 ACKs) and RFC 8312 have it,
//!   alpha stays 0.53: RFC 9438's switch to 1 once W_est passes the window before the last
//!   reduction is not in Linux (nor in ns-3 3.44), and under ECN marks it made Cubic 11-14%
//!   faster than Reno at data-center RTTs where Linux's and ns-3's run at Reno's rate.
//! * Multiplicative decrease (sec. 4.6): cwnd_prior = cwnd, ssthresh = cwnd = beta cwnd
//!   (beta = 0.7, at least 2 segments). Fast convergence (sec. 4.7): when cwnd_prior is
//!   below the last W_max, W_max = cwnd_prior (1 + beta) / 2, else W_max = cwnd_prior.
//! * Timeout (sec. 4.8): the reduction above, then cwnd = 1 segment and slow start; the
//!   epoch restarts when congestion avoidance resumes.
//! * Slow start is RFC 5681's (HyStart++ is not modelled).
//!
//! The RTT in the target is the smoothed RTT the sender measures (RFC 9438 uses the
//! current RTT estimate; the ACK's own sample is used until one exists).

use super::{AckEvent, CongestionControl, NewCc, Window};
use crate::host::tcp::TcpParams;
use crate::net::Ecn;
use crate::sim::SimTime;

/// RFC 9438 sec. 5 defaults.
pub const C: f64 = 0.4;
pub const BETA: f64 = 0.7;

/// CUBIC's state of one connection.
#[derive(Clone, Debug)]
pub struct Cubic {
    /// The codepoint of its data packets; unless it is not ECT, an ECN-Echo is a
    /// congestion event (classic ECN, RFC 3168).
    pub ect: Ecn,
    pub fast_convergence: bool,
    /// Window before the last reduction at which the cubic curve plateaus (segments).
    w_max: f64,
    /// Start of the current congestion-avoidance epoch.
    epoch: Option<SimTime>,
    k: f64,
    /// Reno-friendly estimate (segments).
    w_est: f64,
    /// Smoothed RTT seen by the algorithm, in seconds.
    srtt: f64,
}

impl Cubic {
    pub fn new(ect: Ecn) -> Cubic {
        Cubic { ect, fast_convergence: true, w_max: 0.0, epoch: None, k: 0.0, w_est: 0.0, srtt: 0.0 }
    }

    /// W_cubic(t) in segments, t in seconds since the epoch began.
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }

    /// A congestion event (loss or ECN-Echo): remember the window; the new ssthresh is
    /// beta of it (Linux `cubictcp_recalc_ssthresh`). The epoch restarts at the next growth.
    fn event_ssthresh(&mut self, w: &Window) -> f64 {
        let cwnd = w.cwnd / w.mss;
        self.w_max = if self.fast_convergence && cwnd < self.w_max { cwnd * (1.0 + BETA) / 2.0 } else { cwnd };
        self.epoch = None;
        (cwnd * BETA * w.mss).max(w.min_cwnd())
    }

    /// A loss: the reduction at once (fast recovery and timeouts set cwnd themselves).
    fn reduce(&mut self, w: &mut Window) {
        w.ssthresh = self.event_ssthresh(w);
        w.cwnd = w.ssthresh;
    }

    /// Congestion avoidance on `acked` bytes at `now`.
    fn avoid(&mut self, w: &mut Window, acked: u64, now: SimTime) {
        let mss = w.mss;
        let cwnd = w.cwnd / mss;
        let epoch = *self.epoch.get_or_insert_with(|| {
            // a new epoch: K from where the window stands against W_max (sec. 4.2)
            if self.w_max < cwnd {
                self.w_max = cwnd;
            }
            self.k = ((self.w_max - cwnd) / C).cbrt();
            self.w_est = cwnd;
            now
        });
        let t = (now - epoch).0 as f64 * 1e-12;
        let segs = acked as f64 / mss;
        self.w_est += 3.0 * (1.0 - BETA) / (1.0 + BETA) * segs / cwnd;
        if self.w_cubic(t) < self.w_est {
            w.cwnd = self.w_est * mss;
        } else {
            let target = self.w_cubic(t + self.srtt).clamp(cwnd, 1.5 * cwnd);
            w.cwnd = (cwnd + (target - cwnd) / cwnd * segs) * mss;
        }
    }
}

/// RFC 9438's constants (C, beta) are fixed; ECN as `transport.ecn` says (classic).
impl NewCc<TcpParams> for Cubic {
    type Params = ();
    fn build(_: &(), tcp: &TcpParams) -> Cubic {
        Cubic::new(tcp.classic_ect())
    }
}

impl CongestionControl for Cubic {
    fn on_ack_event(&mut self, _w: &Window, a: &AckEvent) {
        let r = a.rtt.0 as f64 * 1e-12;
        self.srtt = if self.srtt == 0.0 { r } else { 0.875 * self.srtt + 0.125 * r };
    }
    fn ssthresh(&mut self, w: &Window) -> f64 {
        self.event_ssthresh(w)
    }
    fn cong_avoid(&mut self, w: &mut Window, a: &AckEvent) {
        if w.cwnd < w.ssthresh {
            w.grow(a.acked);
        } else {
            self.avoid(w, a.acked, a.now);
        }
    }
    fn on_fast_retransmit(&mut self, w: &mut Window, _inflight: u64, _now: SimTime) {
        self.reduce(w);
        // fast recovery inflates by the three segments the duplicate ACKs stand for
        w.cwnd = w.ssthresh + 3.0 * w.mss;
    }
    fn on_timeout(&mut self, w: &mut Window, _inflight: u64, _now: SimTime) {
        self.reduce(w);
        w.cwnd = w.mss;
    }
    fn ect(&self) -> Ecn {
        self.ect
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(acked: u64, now_ms: f64, ece: bool, ack: u64) -> AckEvent<'static> {
        ev_rtt(acked, now_ms, ece, ack, 10.0)
    }

    fn ev_rtt(acked: u64, now_ms: f64, ece: bool, ack: u64, rtt_ms: f64) -> AckEvent<'static> {
        AckEvent { acked, ece, ack, snd_nxt: ack + 1_000_000, now: SimTime((now_ms * 1e9) as u64), rtt: SimTime((rtt_ms * 1e9) as u64), int: &[], hops: 0 }
    }

    /// An ACK of new data in the Open state, as the sender hands it over.
    fn ack_open(c: &mut Cubic, w: &mut Window, a: &AckEvent) {
        c.on_ack_event(w, a);
        c.cong_avoid(w, a);
    }

    /// After a reduction from W = 1000 segments (RTT 100 ms, one ACK per segment, a
    /// window's worth per RTT) the window follows W_cubic(t + RTT): back at W_max after
    /// K = cbrt(W_max (1 - beta) / C) = cbrt(750) = 9.086 s, concave before and convex after
    /// (the Reno-friendly estimate grows only 0.53 segments per RTT: far below); without
    /// fast convergence W_max is the window at the event.
    #[test]
    fn window_follows_the_cubic_curve() {
        let mss = 1000.0;
        let rtt = 100.0;
        let mut c = Cubic::new(Ecn::NotEct);
        c.fast_convergence = false;
        let mut w = Window { cwnd: 1000.0 * mss, ssthresh: 1.0, mss };
        c.on_fast_retransmit(&mut w, 0, SimTime::ZERO);
        assert_eq!(w.ssthresh, 700.0 * mss);
        w.cwnd = w.ssthresh;
        let k = (1000.0f64 * 0.3 / 0.4).cbrt();
        let at = [0.5 * k, k, 1.2 * k];
        let mut samples = vec![];
        let (mut t, mut ack) = (0.0, 0);
        while samples.len() < at.len() {
            ack += 1000;
            ack_open(&mut c, &mut w, &ev_rtt(1000, t, false, ack, rtt));
            if t >= at[samples.len()] * 1000.0 {
                samples.push(w.cwnd / mss);
            }
            t += rtt / (w.cwnd / mss);
        }
        let wc = |t: f64| 0.4 * (t + rtt / 1000.0 - k).powi(3) + 1000.0;
        for (s, at) in samples.iter().zip(at) {
            assert!((s - wc(at)).abs() < 0.01 * wc(at), "t {at:.3} s: window {s:.2}, W_cubic(t + RTT) {:.2}", wc(at));
        }
        assert!(samples[0] > 700.0 && samples[0] < 1000.0 && samples[2] > 1000.0);
    }

    /// Fast convergence: a second event below the previous W_max plateaus lower, at
    /// W (1 + beta) / 2; an ECN-Echo's ssthresh is beta of the window.
    #[test]
    fn fast_convergence_and_ecn() {
        let mss = 1000.0;
        let mut c = Cubic::new(Ecn::Ect0);
        let mut w = Window { cwnd: 100.0 * mss, ssthresh: 1.0, mss };
        w.ssthresh = c.ssthresh(&w);
        assert_eq!(w.ssthresh, 70.0 * mss);
        assert_eq!(c.w_max, 100.0);
        w.cwnd = w.ssthresh;
        w.ssthresh = c.ssthresh(&w);
        assert!((w.ssthresh - 49.0 * mss).abs() < 1e-6);
        assert!((c.w_max - 70.0 * 1.7 / 2.0).abs() < 1e-9);
    }

    /// In the Reno-friendly region (small W_max - cwnd, short time) the window grows like
    /// W_est: alpha_cubic = 3 (1 - 0.7) / 1.7 = 0.529 segments per window.
    #[test]
    fn reno_friendly_region_grows_by_alpha_per_window() {
        let mss = 1000.0;
        let mut c = Cubic::new(Ecn::NotEct);
        let mut w = Window { cwnd: 10.0 * mss, ssthresh: 1.0, mss };
        c.on_fast_retransmit(&mut w, 0, SimTime::ZERO);
        w.cwnd = w.ssthresh; // 7 segments, W_max 10: K = cbrt(7.5) = 1.96 s
        let mut ack = 0;
        // 10 windows of ACKs within 100 ms: W_cubic barely moves, W_est grows
        for i in 0..70 {
            ack += 1000;
            ack_open(&mut c, &mut w, &ev(1000, i as f64 * 1.4, false, ack));
        }
        let grown = w.cwnd / mss - 7.0;
        let alpha = 3.0 * 0.3 / 1.7;
        // about 70 / 7.x windows of alpha each
        assert!(grown > 0.8 * 9.0 * alpha && grown < 1.2 * 10.0 * alpha, "{grown}");
    }
}
