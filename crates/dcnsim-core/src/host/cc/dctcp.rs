//! DCTCP sender (Alizadeh et al., "Data Center TCP", SIGCOMM 2010, sec. 3;
//! RFC 8257). The receiver echoes CE on every ACK (we ACK every packet, so no
//! delayed-ACK state machine is needed). Once per window of data the sender
//! updates alpha <- (1-g) alpha + g F, F the fraction of acknowledged bytes
//! that were marked (Linux `dctcp_update_alpha`, on every ACK in any state); an
//! ECN-Echo sets ssthresh <- cwnd (1 - alpha/2) (`dctcp_ssthresh`) and the sender's CWR
//! state brings cwnd down to it over one round trip, ignoring further ECN-Echoes
//! meanwhile (RFC 8257 3.3, Linux `tcp_enter_cwr`; `host/tcp.rs`).

use super::{AckEvent, CongestionControl, NewCc, Window};
use crate::host::tcp::TcpParams;
use crate::net::Ecn;

/// The EWMA gain g of alpha: 1/16 (the paper's sec. 3.4 and Linux's `dctcp_shift_g` = 4).
pub const DEFAULT_G: f64 = 1.0 / 16.0;

/// DCTCP's parameters (`transport.g`).
#[derive(Clone, Debug, PartialEq)]
pub struct DctcpParams {
    /// EWMA gain of alpha, in (0, 1].
    pub g: f64,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { g: DEFAULT_G }
    }
}

/// DCTCP's data is ECT(1) unless configured: the scalable sender of RFC 9331.
impl NewCc<TcpParams> for Dctcp {
    type Params = DctcpParams;
    fn build(p: &DctcpParams, tcp: &TcpParams) -> Dctcp {
        Dctcp::new(p.g, tcp.ect.unwrap_or(Ecn::Ect1))
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    /// Estimated fraction of marked bytes.
    pub alpha: f64,
    /// EWMA gain, 1/16 in the paper.
    pub g: f64,
    acked: u64,
    marked: u64,
    /// Sequence number closing the current observation window.
    win_end: u64,
    /// The codepoint of its data packets (ECT(1) unless configured: the scalable sender).
    pub ect: Ecn,
}

impl Dctcp {
    /// alpha starts at 1 (RFC 8257 4.2: conservative until measured).
    pub fn new(g: f64, ect: Ecn) -> Dctcp {
        Dctcp { alpha: 1.0, g, acked: 0, marked: 0, win_end: 0, ect }
    }
}

impl CongestionControl for Dctcp {
    /// The connection's sequence numbers start again (next message on it): alpha is kept,
    /// the observation window restarts.
    fn restart(&mut self) {
        self.acked = 0;
        self.marked = 0;
        self.win_end = 0;
    }
    fn on_ack_event(&mut self, _w: &Window, a: &AckEvent) {
        let AckEvent { acked, ece, ack, snd_nxt, .. } = *a;
        self.acked += acked;
        if ece {
            self.marked += acked;
        }
        if ack > self.win_end {
            if self.acked > 0 {
                let f = self.marked as f64 / self.acked as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            }
            self.acked = 0;
            self.marked = 0;
            self.win_end = snd_nxt;
        }
    }
    fn ssthresh(&mut self, w: &Window) -> f64 {
        (w.cwnd * (1.0 - self.alpha / 2.0)).max(w.min_cwnd())
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

    fn ev(acked: u64, ece: bool, ack: u64, snd_nxt: u64) -> AckEvent<'static> {
        AckEvent { acked, ece, ack, snd_nxt, now: SimTime::ZERO, rtt: SimTime::ZERO, int: &[], hops: 0 }
    }
    #[test]
    fn alpha_follows_marked_fraction() {
        let mut d = Dctcp::new(1.0 / 16.0, Ecn::Ect1);
        let w = Window { cwnd: 100_000.0, ssthresh: 1.0, mss: 1000.0 };
        // every ACK marked, windows of 10 packets: alpha stays at 1
        let mut ack = 0;
        for _ in 0..100 {
            ack += 1000;
            d.on_ack_event(&w, &ev(1000, true, ack, ack + 10_000));
        }
        assert!((d.alpha - 1.0).abs() < 1e-12);
        // no marks for a long time: alpha decays geometrically by (1-g) per window
        let a0 = d.alpha;
        let mut windows = 0;
        for i in 0..1000 {
            ack += 1000;
            let before = d.win_end;
            d.on_ack_event(&w, &ev(1000, false, ack, ack + 10_000));
            if d.win_end != before && i > 0 {
                windows += 1;
            }
        }
        let expect = a0 * (1.0f64 - 1.0 / 16.0).powi(windows + 1);
        assert!((d.alpha - expect).abs() / expect < 0.07, "{} vs {}", d.alpha, expect);
    }
    /// RFC 8257 3.3: the window after a mark is cwnd (1 - alpha / 2), never below two segments.
    #[test]
    fn ssthresh_is_proportional_to_alpha() {
        let mut d = Dctcp::new(1.0 / 16.0, Ecn::Ect1);
        d.alpha = 0.5;
        let w = Window { cwnd: 100_000.0, ssthresh: 1e9, mss: 1000.0 };
        assert!((d.ssthresh(&w) - 75_000.0).abs() < 1e-9);
        d.alpha = 1.0;
        let small = Window { cwnd: 3000.0, ssthresh: 1e9, mss: 1000.0 };
        assert_eq!(d.ssthresh(&small), 2000.0);
    }
}
