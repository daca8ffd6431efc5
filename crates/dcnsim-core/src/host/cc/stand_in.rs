//! A test's stand-in congestion control: a window fixed at `segments` full segments,
//! whatever the ACKs, ECN-Echoes and losses say; or, once its receiver grants credit
//! (`host::credit`), the credit granted and not yet acknowledged, a receiver-driven window. It is an entry of `window_ccs!` under
//! `#[cfg(test)]`, so that the property tests draw it as they draw every listed algorithm,
//! and it shows what adding an algorithm takes (this file and one list entry). Its law is
//! derivable: a lone flow whose window is below the path's bandwidth-delay product moves
//! `segments` x MSS per round trip.

use super::{AckEvent, CongestionControl, NewCc, Window};
use crate::host::tcp::TcpParams;
use crate::net::Ecn;

/// The window, in full segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StandInParams {
    pub segments: u32,
}

impl Default for StandInParams {
    fn default() -> Self {
        StandInParams { segments: 4 }
    }
}

/// A flow's state: the window it keeps.
#[derive(Clone, Debug)]
pub struct StandInCc {
    pub segments: u32,
    /// The receiver's grant once a credit has arrived: the window is the credit's from then
    /// on.
    pub granted: Option<u64>,
}

impl NewCc<TcpParams> for StandInCc {
    type Params = StandInParams;
    fn build(p: &StandInParams, _: &TcpParams) -> StandInCc {
        StandInCc { segments: p.segments.max(1), granted: None }
    }
}

impl StandInCc {
    fn fixed(&self, w: &Window) -> f64 {
        self.segments as f64 * w.mss
    }
}

impl CongestionControl for StandInCc {
    /// After a loss the window it returns to is the one it keeps.
    fn ssthresh(&mut self, w: &Window) -> f64 {
        self.fixed(w)
    }
    fn cong_avoid(&mut self, w: &mut Window, a: &AckEvent) {
        w.cwnd = match self.granted {
            Some(g) => g.saturating_sub(a.ack) as f64,
            None => self.fixed(w),
        };
    }
    /// The window is what the receiver has granted beyond the acknowledged bytes.
    fn on_credit(&mut self, w: &mut Window, granted: u64, snd_una: u64) {
        self.granted = Some(granted);
        w.cwnd = granted.saturating_sub(snd_una) as f64;
    }
    fn ect(&self) -> Ecn {
        Ecn::NotEct
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimTime;

    #[test]
    fn the_window_is_fixed_whatever_the_acks_say() {
        let mut c = StandInCc { segments: 3, granted: None };
        let mut w = Window { cwnd: 10_000.0, ssthresh: 1e9, mss: 1_000.0 };
        let a = AckEvent { acked: 1_000, ece: true, ack: 1_000, snd_nxt: 5_000, now: SimTime::ZERO, rtt: SimTime::ZERO, int: &[], hops: 0 };
        c.cong_avoid(&mut w, &a);
        assert_eq!(w.cwnd, 3_000.0);
        assert_eq!(c.ssthresh(&w), 3_000.0);
    }
}
