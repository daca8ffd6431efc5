//! TCP NewReno (RFC 5681, RFC 6582) with optional classic ECN (RFC 3168):
//! on ECN-Echo the window is halved, at most once per window of data.

use super::cc::{AckEvent, CongestionControl, Window};
use crate::net::Ecn;

#[derive(Clone, Debug)]
pub struct Reno {
    /// The codepoint of its data packets; ECN-Echo is acted on unless it is not ECT.
    pub ect: Ecn,
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, w: &mut Window, a: &AckEvent) {
        let AckEvent { acked, ece, ack, snd_nxt, .. } = *a;
        if self.ect.is_ect() && ece {
            if ack > w.cwr_end {
                w.reduce_to(0.5);
                w.cwr_end = snd_nxt;
            }
        } else {
            w.grow(acked);
        }
    }
    fn ect(&self) -> Ecn {
        self.ect
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimTime;

    fn ev(acked: u64, ece: bool, ack: u64, snd_nxt: u64) -> AckEvent {
        AckEvent { acked, ece, ack, snd_nxt, now: SimTime::ZERO, rtt: SimTime::ZERO }
    }
    #[test]
    fn slow_start_then_linear() {
        let mut r = Reno { ect: Ecn::NotEct };
        let mut w = Window { cwnd: 10_000.0, ssthresh: 20_000.0, mss: 1000.0, cwr_end: 0 };
        for i in 0..10 {
            r.on_ack(&mut w, &ev(1000, false, (i + 1) * 1000, 100_000));
        }
        assert_eq!(w.cwnd, 20_000.0);
        // one window of ACKs in congestion avoidance adds about one MSS
        for i in 0..20 {
            r.on_ack(&mut w, &ev(1000, false, (i + 11) * 1000, 100_000));
        }
        assert!((w.cwnd - 21_000.0).abs() < 30.0, "{}", w.cwnd);
    }
    #[test]
    fn ecn_halves_once_per_window() {
        let mut r = Reno { ect: Ecn::Ect0 };
        let mut w = Window { cwnd: 40_000.0, ssthresh: 1e9, mss: 1000.0, cwr_end: 0 };
        r.on_ack(&mut w, &ev(1000, true, 1000, 41_000));
        assert_eq!(w.cwnd, 20_000.0);
        r.on_ack(&mut w, &ev(1000, true, 2000, 42_000));
        assert_eq!(w.cwnd, 20_000.0);
        r.on_ack(&mut w, &ev(1000, true, 41_001, 60_000));
        assert_eq!(w.cwnd, 10_000.0);
    }
}
