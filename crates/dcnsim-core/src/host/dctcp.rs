//! DCTCP sender (Alizadeh et al., "Data Center TCP", SIGCOMM 2010, sec. 3;
//! RFC 8257). The receiver echoes CE on every ACK (we ACK every packet, so no
//! delayed-ACK state machine is needed). Once per window of data the sender
//! updates alpha <- (1-g) alpha + g F, F the fraction of acknowledged bytes
//! that were marked; on ECN-Echo, at most once per window, it sets
//! cwnd <- cwnd (1 - alpha/2).

use super::cc::{AckEvent, CongestionControl, Window};
use crate::net::Ecn;

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
    /// The connection's sequence numbers start again (next message on it): alpha is kept,
    /// the observation window restarts.
    pub fn restart_window(&mut self) {
        self.acked = 0;
        self.marked = 0;
        self.win_end = 0;
    }

    /// alpha starts at 1 (RFC 8257 4.2: conservative until measured).
    pub fn new(g: f64, ect: Ecn) -> Dctcp {
        Dctcp { alpha: 1.0, g, acked: 0, marked: 0, win_end: 0, ect }
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, w: &mut Window, a: &AckEvent) {
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
        if ece && ack > w.cwr_end {
            w.reduce_to(1.0 - self.alpha / 2.0);
            w.cwr_end = snd_nxt;
        } else if !ece {
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
    fn alpha_follows_marked_fraction() {
        let mut d = Dctcp::new(1.0 / 16.0, Ecn::Ect1);
        let mut w = Window { cwnd: 100_000.0, ssthresh: 1.0, mss: 1000.0, cwr_end: u64::MAX };
        // every ACK marked, windows of 10 packets: alpha stays at 1
        let mut ack = 0;
        for _ in 0..100 {
            ack += 1000;
            d.on_ack(&mut w, &ev(1000, true, ack, ack + 10_000));
        }
        assert!((d.alpha - 1.0).abs() < 1e-12);
        // no marks for a long time: alpha decays geometrically by (1-g) per window
        let a0 = d.alpha;
        let mut windows = 0;
        for i in 0..1000 {
            ack += 1000;
            let before = d.win_end;
            d.on_ack(&mut w, &ev(1000, false, ack, ack + 10_000));
            if d.win_end != before && i > 0 {
                windows += 1;
            }
        }
        let expect = a0 * (1.0f64 - 1.0 / 16.0).powi(windows + 1);
        assert!((d.alpha - expect).abs() / expect < 0.07, "{} vs {}", d.alpha, expect);
    }
    #[test]
    fn cut_is_proportional_to_alpha_once_per_window() {
        let mut d = Dctcp::new(1.0 / 16.0, Ecn::Ect1);
        d.alpha = 0.5;
        d.win_end = 1_000_000;
        let mut w = Window { cwnd: 100_000.0, ssthresh: 1e9, mss: 1000.0, cwr_end: 0 };
        d.on_ack(&mut w, &ev(1000, true, 1000, 50_000));
        assert!((w.cwnd - 75_000.0).abs() < 1e-9);
        // further marks before ack passes 50_000 do not cut again
        d.on_ack(&mut w, &ev(1000, true, 2000, 51_000));
        assert!((w.cwnd - 75_000.0).abs() < 1e-9);
    }
}
