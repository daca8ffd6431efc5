//! TCP NewReno (RFC 5681, RFC 6582) with optional classic ECN (RFC 3168): an ECN-Echo
//! halves ssthresh (Linux `tcp_reno_ssthresh`) and the sender's CWR state brings cwnd
//! down to it over one round trip (RFC 3168 6.1.2; `host/tcp.rs`).

use super::{AckEvent, CongestionControl, NewCc, Window};
use crate::host::tcp::TcpParams;
use crate::net::Ecn;

#[derive(Clone, Debug)]
pub struct Reno {
    /// The codepoint of its data packets; ECN-Echo is acted on unless it is not ECT.
    pub ect: Ecn,
}

/// No constants of its own; ECN as `transport.ecn` says (classic, RFC 3168).
impl NewCc<TcpParams> for Reno {
    type Params = ();
    fn build(_: &(), tcp: &TcpParams) -> Reno {
        Reno { ect: tcp.classic_ect() }
    }
}

impl CongestionControl for Reno {
    fn ssthresh(&mut self, w: &Window) -> f64 {
        (w.cwnd / 2.0).max(w.min_cwnd())
    }
    fn cong_avoid(&mut self, w: &mut Window, a: &AckEvent) {
        w.grow(a.acked);
    }
    fn ect(&self) -> Ecn {
        self.ect
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimTime;

    fn ev(acked: u64, ack: u64) -> AckEvent<'static> {
        AckEvent { acked, ece: false, ack, snd_nxt: 100_000, now: SimTime::ZERO, rtt: SimTime::ZERO, int: &[], hops: 0 }
    }
    #[test]
    fn slow_start_then_linear() {
        let mut r = Reno { ect: Ecn::NotEct };
        let mut w = Window { cwnd: 10_000.0, ssthresh: 20_000.0, mss: 1000.0 };
        for i in 0..10 {
            r.cong_avoid(&mut w, &ev(1000, (i + 1) * 1000));
        }
        assert_eq!(w.cwnd, 20_000.0);
        // one window of ACKs in congestion avoidance adds about one MSS
        for i in 0..20 {
            r.cong_avoid(&mut w, &ev(1000, (i + 11) * 1000));
        }
        assert!((w.cwnd - 21_000.0).abs() < 30.0, "{}", w.cwnd);
    }
    #[test]
    fn ecn_halves() {
        let mut r = Reno { ect: Ecn::Ect0 };
        assert_eq!(r.ssthresh(&Window { cwnd: 40_000.0, ssthresh: 1e9, mss: 1000.0 }), 20_000.0);
        assert_eq!(r.ssthresh(&Window { cwnd: 3_000.0, ssthresh: 1e9, mss: 1000.0 }), 2_000.0);
    }
}
