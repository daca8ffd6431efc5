//! NSCC, the Ultra Ethernet transport's network-signal-based (sender) congestion control
//! (UE Specification 1.0, the congestion management sublayer's NSCC), as the UEC's htsim
//! implements it (`uec.cpp`, `initNsccParams`, `updateCwndOnAck_NSCC`, `quick_adapt`,
//! `updateCwndOnNack_NSCC`; ultraethernet/uet-htsim at 40ccb05). A window of bytes in flight,
//! no pacing; each ACK gives a delay sample (its RTT less the base RTT) and its packet's CE
//! mark, and one of four cases applies:
//! - no CE, delay at or above the target: fair increase (`fi` per window);
//! - no CE, delay below the target: proportional increase (`alpha` times the distance to
//!   the target), or fast increase while the delay stays under 1 us for a window;
//! - CE, delay at or above the target: multiplicative decrease by the averaged delay, at
//!   most once per base RTT, at most by half;
//! - CE, delay below the target: nothing (the path is marked, not the window).
//!
//! Increases accumulate and are applied every 8 MTUs acknowledged or every network RTT,
//! with `eta` added once per network RTT. Quick adapt: once per base RTT plus target, if
//! a NACK, a delay above 4 targets or a trim has been seen and the bytes acknowledged in
//! that time are below an eighth of the largest window, the window drops to what was
//! acknowledged, and the ECN-Echoes of the data then in flight are ignored. A NACK takes
//! the trimmed packet's bytes off the window; a timeout takes the lost packet's bytes.
//! The constants scale with the fabric's BDP against the reference 150,000 B (12 us at
//! 100 Gbit/s), as htsim derives them.

use crate::sim::SimTime;

/// The reference BDP and RTT the constants are scaled from (htsim `initNsccParams`).
const REFERENCE_BDP: f64 = 150_000.0;
const REFERENCE_RTT_PS: f64 = 12_000_000.0;
/// Below this delay sample, a window's worth of ACKs starts the fast increase.
const FAST_INCREASE_DELAY: SimTime = SimTime::from_us(1);
/// The delay average's weight of a new sample.
const DELAY_ALPHA: f64 = 0.0125;

/// NSCC's scenario-level settings (`transport.nscc`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NsccParams {
    /// The target queueing delay; None: 0.75 network RTTs with trimming, one without.
    pub target: Option<SimTime>,
    /// Whether the fabric's switches trim (the default target depends on it).
    pub trimming: bool,
    /// Quick adapt allowed only below max window >> qa_gate (htsim default 3).
    pub qa_gate: u32,
    /// The multiplicative decrease's gain (htsim 0.8).
    pub gamma: f64,
    /// The largest window in BDPs (htsim 1.5), which is also the initial window.
    pub max_window_bdp: f64,
}

impl NsccParams {
    /// htsim's defaults.
    pub fn defaults(trimming: bool) -> NsccParams {
        NsccParams { target: None, trimming, qa_gate: 3, gamma: 0.8, max_window_bdp: 1.5 }
    }
}

/// The per-flow NSCC state.
#[derive(Clone, Debug)]
pub struct Nscc {
    // constants, derived per flow from the fabric's RTT, the NIC's rate and the MTU
    target: f64,
    qa_threshold: f64,
    qa_gate: u32,
    alpha: f64,
    fi: f64,
    eta: f64,
    gamma: f64,
    fi_scale: f64,
    network_rtt: SimTime,
    adjust_bytes: f64,
    min_cwnd: f64,
    max_window_bdp: f64,
    line_rate_bps: u64,
    // state
    cwnd: f64,
    maxwnd: f64,
    base_rtt: SimTime,
    avg_delay: f64,
    achieved: f64,
    received: f64,
    inc_bytes: f64,
    fi_count: f64,
    increase: bool,
    trigger_qa: bool,
    qa_end: Option<SimTime>,
    bytes_to_ignore: f64,
    bytes_ignored: f64,
    last_adjust: SimTime,
    last_dec: SimTime,
    /// Times quick adapt acted (tests and diagnostics).
    pub quick_adapts: u32,
}

impl Nscc {
    /// A flow's state at a NIC of `line_rate_bps` with packets of `mss` payload bytes and
    /// `mtu` bytes on the wire, on a fabric whose largest unloaded RTT is `network_rtt`.
    pub fn new(p: &NsccParams, mss: u32, mtu: u32, line_rate_bps: u64, network_rtt: SimTime) -> Nscc {
        let rtt = network_rtt.0.max(1) as f64;
        let bdp = rtt * 1e-12 * line_rate_bps as f64 / 8.0;
        let target = p.target.map_or(if p.trimming { 0.75 * rtt } else { rtt }, |t| t.0.max(1) as f64);
        let (a, b) = (bdp / REFERENCE_BDP, target / REFERENCE_RTT_PS);
        let (mss, mtu) = (mss as f64, mtu as f64);
        let maxwnd = p.max_window_bdp * bdp;
        Nscc {
            target,
            qa_threshold: 4.0 * target,
            qa_gate: p.qa_gate,
            alpha: 4.0 * mss * a * b / target,
            fi: 5.0 * mss * a,
            eta: 0.15 * mss * a,
            gamma: p.gamma,
            fi_scale: 0.25 * a,
            network_rtt,
            adjust_bytes: 8.0 * mtu,
            min_cwnd: mtu,
            max_window_bdp: p.max_window_bdp,
            line_rate_bps,
            cwnd: maxwnd.max(mtu),
            maxwnd: maxwnd.max(mtu),
            base_rtt: network_rtt,
            avg_delay: 0.0,
            achieved: 0.0,
            received: 0.0,
            inc_bytes: 0.0,
            fi_count: 0.0,
            increase: false,
            trigger_qa: false,
            qa_end: None,
            bytes_to_ignore: 0.0,
            bytes_ignored: 0.0,
            last_adjust: SimTime::ZERO,
            last_dec: SimTime::ZERO,
            quick_adapts: 0,
        }
    }

    /// Bytes allowed in flight.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The target queueing delay, ps.
    pub fn target(&self) -> f64 {
        self.target
    }

    fn bound(&mut self) {
        self.cwnd = self.cwnd.clamp(self.min_cwnd, self.maxwnd.max(self.min_cwnd));
    }

    /// A lower RTT than any seen lowers the base RTT, and with it the largest window.
    fn update_base_rtt(&mut self, raw: SimTime) {
        if raw < self.base_rtt {
            self.base_rtt = raw;
            self.maxwnd = self.max_window_bdp * raw.0 as f64 * 1e-12 * self.line_rate_bps as f64 / 8.0;
        }
    }

    /// The delay average (htsim `update_delay`): a high delay without a mark feeds a quarter
    /// of the base RTT in instead (queueing without marking is not the path's congestion).
    fn update_delay(&mut self, raw: SimTime, skip: bool) {
        let d = raw.0.saturating_sub(self.base_rtt.0) as f64;
        let sample = if !skip && d > self.target { self.base_rtt.0 as f64 * 0.25 } else { d };
        self.avg_delay = DELAY_ALPHA * sample + (1.0 - DELAY_ALPHA) * self.avg_delay;
    }

    /// Quick adapt (htsim `quick_adapt`): whether it acted (or this ECN-Echo is ignored).
    fn quick_adapt(&mut self, loss: bool, skip: bool, delay: f64, now: SimTime, inflight: u64) -> bool {
        let mut done = false;
        if self.bytes_ignored < self.bytes_to_ignore && skip {
            done = true;
        } else if self.qa_end.is_none_or(|e| now > e) {
            if self.qa_end.is_some() && (self.trigger_qa || loss || delay > self.qa_threshold) && self.achieved < self.maxwnd / (1u64 << self.qa_gate) as f64 {
                self.cwnd = self.achieved.max(self.min_cwnd);
                self.bytes_to_ignore = inflight as f64;
                self.bytes_ignored = 0.0;
                self.trigger_qa = false;
                self.quick_adapts += 1;
                done = true;
            }
            self.achieved = 0.0;
            self.qa_end = Some(now + self.base_rtt + SimTime(self.target as u64));
        }
        if done {
            self.inc_bytes = 0.0;
            self.received = 0.0;
        }
        done
    }

    /// An ACK at `now` acknowledging `newly` bytes (wire bytes, headers included) of a
    /// packet whose round trip took `rtt` (None: no valid sample, a retransmission's);
    /// `ece`: the packet was CE-marked; `inflight`: bytes still in flight.
    pub fn on_ack(&mut self, newly: u64, ece: bool, rtt: Option<SimTime>, now: SimTime, inflight: u64) {
        let n = newly as f64;
        self.achieved += n;
        self.received += n;
        self.bytes_ignored += n;
        let delay = match rtt {
            Some(raw) => {
                self.update_base_rtt(raw);
                self.update_delay(raw, ece);
                (raw.0 - self.base_rtt.0) as f64
            }
            None => self.avg_delay,
        };
        if self.quick_adapt(false, ece, delay, now, inflight) {
            self.bound();
            return;
        }
        match (ece, delay >= self.target) {
            (false, true) => self.inc_bytes += self.fi * n,
            (false, false) => {
                // fast increase: a window's worth of ACKs with the delay under 1 us
                if delay < FAST_INCREASE_DELAY.0 as f64 {
                    self.fi_count += n;
                    if self.fi_count > self.cwnd || self.increase {
                        self.cwnd += n * self.fi_scale;
                        self.increase = true;
                    }
                } else {
                    self.fi_count = 0.0;
                    self.increase = false;
                }
                if !self.increase {
                    self.inc_bytes += self.alpha * n * (self.target - delay);
                }
            }
            (true, true) => {
                self.increase = false;
                self.fi_count = 0.0;
                let avg = self.avg_delay;
                if avg > self.target && now - self.last_dec > self.base_rtt {
                    self.cwnd *= (1.0 - self.gamma * (avg - self.target) / avg).max(0.5);
                    self.last_dec = now;
                }
            }
            (true, false) => {}
        }
        self.bound();
        if self.received > self.adjust_bytes || now - self.last_adjust > self.network_rtt {
            self.cwnd += (self.inc_bytes / self.cwnd).floor();
            if now - self.last_adjust >= self.network_rtt {
                self.cwnd += self.eta;
                self.last_adjust = now;
            }
            self.inc_bytes = 0.0;
            self.received = 0.0;
        }
        self.bound();
    }

    /// A NACK at `now`: a packet of `bytes` on the wire was trimmed; `rtt` its round trip
    /// (htsim lowers the base RTT by it; its delay does not enter the average, a network
    /// RTT of delay does, the trim's estimate of a full queue).
    pub fn on_nack(&mut self, bytes: u64, rtt: SimTime, now: SimTime, inflight: u64) {
        self.update_base_rtt(rtt);
        self.bytes_ignored += bytes as f64;
        self.update_delay(self.base_rtt + self.network_rtt, true);
        self.trigger_qa = true;
        if !self.quick_adapt(true, true, 0.0, now, inflight) {
            self.cwnd -= bytes as f64;
        }
        self.bound();
    }

    /// A packet of `bytes` on the wire timed out: its bytes come off the window.
    pub fn on_timeout(&mut self, bytes: u64) {
        self.cwnd -= bytes as f64;
        self.bound();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// htsim's printed constants at its defaults (100 Gbit/s, MTU 4,150 B, a network RTT of
    /// 14.02272 us, trimming on): target 10.51704 us, alpha 0.00159158 B/ps, fi 23,873.7 B,
    /// eta 716.21 B, max window 262,926 B (its MSS, 4,086 B, enters alpha, fi and eta; its
    /// MTU the smallest window).
    #[test]
    fn the_constants_are_htsims_at_its_defaults() {
        let rtt = SimTime(14_022_720);
        let c = Nscc::new(&NsccParams::defaults(true), 4086, 4150, 100_000_000_000, rtt);
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-4 * b.abs();
        assert!(near(c.target, 10_517_040.0), "{}", c.target);
        assert!(near(c.alpha, 0.00159158), "{}", c.alpha);
        assert!(near(c.fi, 23_873.7), "{}", c.fi);
        assert!(near(c.eta, 716.21), "{}", c.eta);
        assert!((c.cwnd - 262_926.0).abs() < 1.0, "{}", c.cwnd);
        let without = Nscc::new(&NsccParams::defaults(false), 4086, 4150, 100_000_000_000, rtt);
        assert!(near(without.target, 14_022_720.0));
    }

    /// Marked ACKs above the target cut the window by the averaged delay at most once per
    /// base RTT, never below half; unmarked ACKs below the target grow it; marked ones below
    /// the target leave it.
    #[test]
    fn the_four_cases() {
        let rtt = SimTime::from_us(10);
        let mut c = Nscc::new(&NsccParams::defaults(true), 4096, 4096, 100_000_000_000, rtt);
        let mut now = SimTime::from_us(1);
        // arm quick adapt's first window (it acts from the second on)
        c.on_ack(4096, false, Some(rtt), now, 0);
        c.cwnd = 60_000.0;
        c.avg_delay = 4.0 * c.target;
        // past a base RTT since the start (the last decrease)
        now = now + SimTime::from_us(11);
        // and no increase pending or due
        (c.inc_bytes, c.last_adjust) = (0.0, now);
        let before = c.cwnd;
        c.on_ack(4096, true, Some(rtt + SimTime(2 * c.target as u64)), now, 0);
        let factor = 1.0 - 0.8 * (c.avg_delay - c.target) / c.avg_delay;
        assert!((c.cwnd - before * factor.max(0.5)).abs() < 1.0, "{} vs {}", c.cwnd, before * factor);
        let cut = c.cwnd;
        c.on_ack(4096, true, Some(rtt + SimTime(2 * c.target as u64)), now + SimTime(1), 0);
        assert_eq!(c.cwnd, cut, "once per base RTT");
        c.on_ack(4096, true, Some(rtt), now + SimTime(2), 0);
        assert_eq!(c.cwnd, cut, "marked below the target: no change");
        let mut t = now + SimTime::from_us(3);
        for _ in 0..40 {
            t = t + SimTime::from_ns(400);
            c.on_ack(4096, false, Some(rtt + SimTime::from_us(2)), t, 0);
        }
        assert!(c.cwnd > cut, "{} <= {cut}", c.cwnd);
    }

    /// A NACK takes the trimmed packet off the window (or quick adapt cuts it to what was
    /// acknowledged); the window never goes below one MTU.
    #[test]
    fn a_nack_takes_the_packet_off_the_window() {
        let rtt = SimTime::from_us(10);
        let mut c = Nscc::new(&NsccParams::defaults(true), 4096, 4096, 100_000_000_000, rtt);
        let w = c.cwnd;
        c.on_nack(4096, rtt, SimTime::from_us(1), 0);
        assert_eq!(c.cwnd, w - 4096.0);
        // past the quick adapt window with little acknowledged: the window drops to it
        c.on_ack(8192, false, Some(rtt), SimTime::from_us(2), 0);
        c.on_nack(4096, rtt, SimTime::from_us(40), 0);
        assert_eq!(c.cwnd, 8192.0);
        assert_eq!(c.quick_adapts, 1);
        for i in 0..10 {
            c.on_timeout(4096);
            assert!(c.cwnd >= 4096.0, "{i}");
        }
    }
}
