//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
//! Datacenter", SIGCOMM 2020, sec. 3 and Algorithm 1) as a window algorithm under the TCP
//! sender: AIMD on the delay each ACK measures against a target that grows with the path's
//! hops and shrinks with the flow's window.
//!
//! On every ACK (the sender's Open state), with `delay` the ACK's RTT sample:
//!
//!   target = base_target + hops x hop_scale + clamp(fs_alpha / sqrt(cwnd) + fs_beta, 0, fs_range)
//!   delay < target:  cwnd += ai x acked / cwnd  (cwnd >= 1 packet; else cwnd += ai x acked)
//!   otherwise, at most once per RTT:  cwnd *= max(1 - beta (delay - target) / delay, 1 - max_mdf)
//!
//! with fs_alpha = fs_range / (1/sqrt(fs_min_cwnd) - 1/sqrt(fs_max_cwnd)) and
//! fs_beta = -fs_alpha / sqrt(fs_max_cwnd) (windows in packets). Below one packet the
//! window is a pacing rate: one packet every RTT / cwnd (sec. 3.4). A fast retransmit cuts
//! by max_mdf (at most once per RTT); a retransmission timeout cuts by max_mdf, and to the
//! minimum window after `RETX_RESET` timeouts in a row.
//!
//! Readings (docs/mechanisms.md):
//! - The delay is the whole RTT: a simulated host adds no NIC or stack delay, so the
//!   paper's fabric/endpoint split has no endpoint part, and the fabric window alone
//!   decides. The hop count is the data's switch hops, which the receiver echoes (the
//!   paper's TTL echo).
//! - The paper publishes the algorithm but not every constant; the defaults are those of
//!   htsim's Swift (`csg-htsim`, sim/swift.cpp), which its authors chose to reproduce the
//!   paper's figures: ai = 1 packet, beta = 0.8, max_mdf = 0.5, base_target = 20 us,
//!   hop_scale = base_target / 6.55, fs_range = 5 base_target, fs_min_cwnd = 0.1 and
//!   fs_max_cwnd = 100 packets, 5 timeouts to reset, a window of 10 bytes at least and
//!   1000 packets at most. "At most once per RTT" uses the smoothed RTT, as htsim does.
//! - Loss recovery is the TCP sender's NewReno (htsim's Swift inflates its window in fast
//!   recovery the same way).

use super::{AckEvent, CongestionControl, NewCc, RateControl, RateSetup, Window};
use crate::host::tcp::TcpParams;
use crate::net::Ecn;
use crate::sim::SimTime;

pub const DEFAULT_AI: f64 = 1.0;
pub const DEFAULT_BETA: f64 = 0.8;
pub const DEFAULT_MAX_MDF: f64 = 0.5;
pub const DEFAULT_BASE_TARGET: SimTime = SimTime::from_us(20);
/// hop_scale = base_target / this (htsim's guess, "to be clarified by experiment").
pub const HOP_SCALE_DIVISOR: f64 = 6.55;
/// fs_range = this x base_target.
pub const FS_RANGE_OF_BASE: f64 = 5.0;
pub const FS_MIN_CWND: f64 = 0.1;
pub const FS_MAX_CWND: f64 = 100.0;
/// Timeouts in a row that reset the window to its minimum.
pub const RETX_RESET: u32 = 5;
/// The smallest window, bytes, and the largest, packets.
pub const MIN_CWND_BYTES: f64 = 10.0;
pub const MAX_CWND_PKTS: f64 = 1000.0;

/// Swift's constants as a scenario gives them (`transport.swift`).
#[derive(Clone, Debug)]
pub struct SwiftParams {
    pub ai: f64,
    pub beta: f64,
    pub max_mdf: f64,
    pub base_target: SimTime,
    /// Target added per switch hop; None: base_target / 6.55.
    pub hop_scale: Option<SimTime>,
    /// The flow-scaling range; None: 5 base_target.
    pub fs_range: Option<SimTime>,
}

impl Default for SwiftParams {
    fn default() -> Self {
        SwiftParams { ai: DEFAULT_AI, beta: DEFAULT_BETA, max_mdf: DEFAULT_MAX_MDF, base_target: DEFAULT_BASE_TARGET, hop_scale: None, fs_range: None }
    }
}

/// Algorithm 1's per-ACK law and the state it keeps, shared by Swift over TCP and over RoCE.
#[derive(Clone, Debug)]
struct Law {
    k: std::sync::Arc<Consts>,
    /// Smoothed RTT, seconds (0: no sample yet).
    srtt: f64,
    last_decrease: SimTime,
}

/// One flow's Swift state over TCP: the constants are shared (every TCP sender holds the
/// largest algorithm's state, so Swift's stays small).
#[derive(Clone, Debug)]
pub struct Swift {
    law: Law,
    retx: u32,
}

/// Swift's constants in seconds, resolved once.
#[derive(Debug)]
struct Consts {
    ai: f64,
    beta: f64,
    max_mdf: f64,
    /// Seconds.
    base: f64,
    hop: f64,
    fs_range: f64,
    fs_alpha: f64,
    fs_beta: f64,
}

/// Swift's constants resolved once for a run, shared by its flows.
#[derive(Clone, Debug)]
pub struct SwiftConstants(std::sync::Arc<Consts>);

impl Default for SwiftConstants {
    fn default() -> Self {
        SwiftConstants::from(&SwiftParams::default())
    }
}

impl From<&SwiftParams> for SwiftConstants {
    fn from(p: &SwiftParams) -> Self {
        let secs = SimTime::as_secs_f64;
        let base = secs(p.base_target);
        let fs_range = p.fs_range.map_or(FS_RANGE_OF_BASE * base, secs);
        let fs_alpha = fs_range / (1.0 / FS_MIN_CWND.sqrt() - 1.0 / FS_MAX_CWND.sqrt());
        let k = Consts {
            ai: p.ai,
            beta: p.beta,
            max_mdf: p.max_mdf,
            base,
            hop: p.hop_scale.map_or(base / HOP_SCALE_DIVISOR, secs),
            fs_range,
            fs_alpha,
            fs_beta: -fs_alpha / FS_MAX_CWND.sqrt(),
        };
        SwiftConstants(std::sync::Arc::new(k))
    }
}

impl NewCc<TcpParams> for Swift {
    type Params = SwiftConstants;
    fn build(k: &SwiftConstants, _: &TcpParams) -> Swift {
        Swift { law: Law { k: k.0.clone(), srtt: 0.0, last_decrease: SimTime::ZERO }, retx: 0 }
    }
}

impl Law {
    fn target(&self, cwnd_pkts: f64, hops: u8) -> f64 {
        let fs = if cwnd_pkts > 0.0 { (self.k.fs_alpha / cwnd_pkts.sqrt() + self.k.fs_beta).clamp(0.0, self.k.fs_range) } else { 0.0 };
        self.k.base + hops as f64 * self.k.hop + fs
    }

    /// Whether a decrease is allowed at `now`: none in the last smoothed RTT.
    fn can_decrease(&self, now: SimTime) -> bool {
        (now - self.last_decrease).as_secs_f64() >= self.srtt
    }

    fn clamp(cwnd: &mut f64, mss: f64) {
        *cwnd = cwnd.clamp(MIN_CWND_BYTES, MAX_CWND_PKTS * mss);
    }

    /// Algorithm 1 on an ACK of `acked` bytes with RTT `rtt` over `hops` switches: the
    /// window `cwnd` (bytes, segments of `mss`) grows below target and is cut above it.
    fn on_ack(&mut self, cwnd: &mut f64, mss: f64, acked: u64, rtt: SimTime, hops: u8, now: SimTime) {
        let delay = rtt.as_secs_f64();
        let can_decrease = self.can_decrease(now);
        self.srtt = if self.srtt == 0.0 { delay } else { 0.875 * self.srtt + 0.125 * delay };
        let target = self.target(*cwnd / mss, hops);
        if delay < target {
            let acked = acked as f64;
            if *cwnd >= mss {
                *cwnd += self.k.ai * mss * acked / *cwnd;
            } else {
                *cwnd += self.k.ai * acked;
            }
        } else if can_decrease {
            *cwnd *= (1.0 - self.k.beta * (delay - target) / delay).max(1.0 - self.k.max_mdf);
            self.last_decrease = now;
        }
        Self::clamp(cwnd, mss);
    }
}

impl Swift {
    /// The target delay, seconds, for a window of `cwnd_pkts` packets on a path of `hops`.
    pub fn target(&self, cwnd_pkts: f64, hops: u8) -> f64 {
        self.law.target(cwnd_pkts, hops)
    }

    /// A loss: cut by max_mdf, at most once per RTT.
    fn cut(&mut self, w: &mut Window, now: SimTime) {
        if self.law.can_decrease(now) {
            w.cwnd *= 1.0 - self.law.k.max_mdf;
            self.law.last_decrease = now;
        }
        Law::clamp(&mut w.cwnd, w.mss);
        w.ssthresh = w.cwnd;
    }
}

impl CongestionControl for Swift {
    /// Swift reads no ECN; an ECN-Echo (never sent to non-ECT data) keeps the window.
    fn ssthresh(&mut self, w: &Window) -> f64 {
        w.cwnd
    }

    /// Algorithm 1's per-ACK update.
    fn cong_avoid(&mut self, w: &mut Window, a: &AckEvent) {
        self.retx = 0;
        self.law.on_ack(&mut w.cwnd, w.mss, a.acked, a.rtt, a.hops, a.now);
        // no slow start: the window is Swift's alone
        w.ssthresh = w.cwnd;
    }

    fn on_fast_retransmit(&mut self, w: &mut Window, _inflight: u64, now: SimTime) {
        self.cut(w, now);
    }

    fn on_timeout(&mut self, w: &mut Window, _inflight: u64, now: SimTime) {
        self.retx += 1;
        if self.retx >= RETX_RESET {
            w.cwnd = MIN_CWND_BYTES;
            w.ssthresh = w.cwnd;
        } else {
            self.cut(w, now);
        }
    }

    fn ect(&self) -> Ecn {
        Ecn::NotEct
    }

    const PACES: bool = true;

    /// Below one packet the window is a rate: a packet every RTT / cwnd (sec. 3.4).
    fn pacing_rate(&self, w: &Window, srtt: Option<SimTime>) -> Option<u64> {
        if w.cwnd >= w.mss {
            return None;
        }
        let rtt = srtt.map_or(self.law.srtt, SimTime::as_secs_f64);
        (rtt > 0.0).then(|| (w.cwnd * 8.0 / rtt) as u64)
    }
}

/// Swift over RoCE: the same law on a window the RoCE sender caps the bytes in flight at,
/// as the paper's NIC transport (Pony Express, sec. 4) runs it; at one packet or more the
/// flow sends at line rate within the window (ACK-clocked), below one packet at cwnd / RTT
/// (sec. 3.4). The window starts at one BDP of the fabric's largest base RTT at line rate
/// (HPCC's initial window), the flow at line rate. RoCE's go-back-N tells the algorithm of
/// no loss, so the loss cuts of the TCP version have no counterpart: run it lossless.
#[derive(Clone, Debug)]
pub struct SwiftRate {
    law: Law,
    /// The window, bytes.
    pub cwnd: f64,
    mss: f64,
    line_rate: f64,
}

impl NewCc<RateSetup> for SwiftRate {
    type Params = SwiftConstants;
    fn build(k: &SwiftConstants, s: &RateSetup) -> SwiftRate {
        let line_rate = s.line_rate_bps as f64;
        let mss = s.mss.max(1) as f64;
        let bdp = line_rate / 8.0 * s.base_rtt.0 as f64 * 1e-12;
        let mut cwnd = bdp.max(mss);
        Law::clamp(&mut cwnd, mss);
        SwiftRate { law: Law { k: k.0.clone(), srtt: 0.0, last_decrease: SimTime::ZERO }, cwnd, mss, line_rate }
    }
}

impl RateControl for SwiftRate {
    #[inline]
    fn rate_bps(&self) -> u64 {
        if self.cwnd >= self.mss || self.law.srtt == 0.0 {
            self.line_rate as u64
        } else {
            ((self.cwnd * 8.0 / self.law.srtt) as u64).max(1)
        }
    }

    fn on_ack(&mut self, a: &AckEvent) {
        self.law.on_ack(&mut self.cwnd, self.mss, a.acked, a.rtt, a.hops, a.now);
    }

    /// The window, at least one packet (below it the rate spaces the packets).
    fn window(&self) -> Option<u64> {
        Some(self.cwnd.max(self.mss) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swift() -> Swift {
        let tcp = TcpParams::for_tests();
        Swift::build(&SwiftConstants::default(), &tcp)
    }

    fn ev(acked: u64, rtt_us: f64, now_us: f64, hops: u8) -> AckEvent<'static> {
        AckEvent { acked, ece: false, ack: 0, snd_nxt: 0, now: SimTime((now_us * 1e6) as u64), rtt: SimTime((rtt_us * 1e6) as u64), int: &[], hops }
    }

    /// The target: base + hops x h + the flow-scaling term, which is fs_range at
    /// fs_min_cwnd and 0 at fs_max_cwnd (and clamped beyond them).
    #[test]
    fn target_scales_with_hops_and_window() {
        let s = swift();
        let us = |x: f64| x * 1e6;
        assert!((us(s.target(100.0, 0)) - 20.0).abs() < 1e-9);
        assert!((us(s.target(0.1, 0)) - 120.0).abs() < 1e-9);
        assert!((us(s.target(0.01, 0)) - 120.0).abs() < 1e-9, "clamped to fs_range");
        assert!((us(s.target(1000.0, 4)) - (20.0 + 4.0 * 20.0 / 6.55)).abs() < 1e-9);
        // 1/sqrt(cwnd) in between
        let mid = us(s.target(10.0, 0)) - 20.0;
        let alpha = 100.0 / (1.0 / 0.1f64.sqrt() - 0.1);
        assert!((mid - (alpha / 10f64.sqrt() - alpha / 10.0)).abs() < 1e-9, "{mid}");
    }

    /// Below target: +ai packets per window of ACKs; above: the cut
    /// max(1 - beta (delay - target) / delay, 1 - max_mdf), once per RTT.
    #[test]
    fn aimd_on_delay() {
        let mut s = swift();
        let mut w = Window { cwnd: 50_000.0, ssthresh: f64::INFINITY, mss: 1000.0 };
        s.cong_avoid(&mut w, &ev(1000, 10.0, 100.0, 0));
        assert!((w.cwnd - (50_000.0 + 1000.0 * 1000.0 / 50_000.0)).abs() < 1e-9);
        let before = w.cwnd;
        let target = s.target(before / 1000.0, 0);
        s.cong_avoid(&mut w, &ev(1000, 30.0, 200.0, 0));
        let want = before * (1.0 - 0.8 * (30e-6 - target) / 30e-6);
        assert!(want > 0.5 * before, "within max_mdf");
        assert!((w.cwnd - want).abs() < 1e-6, "{} vs {want}", w.cwnd);
        // a second cut within the smoothed RTT does not come
        let after = w.cwnd;
        s.cong_avoid(&mut w, &ev(1000, 30.0, 201.0, 0));
        assert_eq!(w.cwnd, after);
        // a huge delay cuts by max_mdf at most
        s.cong_avoid(&mut w, &ev(1000, 10_000.0, 1000.0, 0));
        assert!((w.cwnd - after * 0.5).abs() < 1e-6);
        // below one packet: +ai x acked, and a pacing rate of cwnd per RTT
        let mut w = Window { cwnd: 500.0, ssthresh: f64::INFINITY, mss: 1000.0 };
        s.cong_avoid(&mut w, &ev(100, 10.0, 2000.0, 0));
        assert!((w.cwnd - 600.0).abs() < 1e-9);
        let r = s.pacing_rate(&w, Some(SimTime::from_us(20))).unwrap();
        assert!((r as f64 - 600.0 * 8.0 / 20e-6).abs() <= 1.0, "{r}");
        assert!(s.pacing_rate(&Window { cwnd: 2000.0, ..w }, None).is_none());
    }

    /// Five timeouts in a row reset the window to its minimum.
    #[test]
    fn timeouts_cut_then_reset() {
        let mut s = swift();
        let mut w = Window { cwnd: 64_000.0, ssthresh: f64::INFINITY, mss: 1000.0 };
        s.on_timeout(&mut w, 0, SimTime::from_ms(1));
        assert_eq!(w.cwnd, 32_000.0);
        for i in 2..=5 {
            s.on_timeout(&mut w, 0, SimTime::from_ms(i));
        }
        assert_eq!(w.cwnd, MIN_CWND_BYTES);
    }

    /// Over RoCE: the window starts at a BDP, follows the same law per ACK and caps the
    /// flight; below one packet the rate is cwnd per RTT.
    #[test]
    fn over_roce_the_window_caps_the_flight() {
        let setup = RateSetup { line_rate_bps: 100_000_000_000, now: SimTime::ZERO, base_rtt: SimTime::from_us(8), mss: 1000 };
        let mut s = SwiftRate::build(&SwiftConstants::default(), &setup);
        assert!((s.cwnd - 100_000.0).abs() < 1e-6, "one BDP: {}", s.cwnd);
        assert_eq!(s.window(), Some(100_000));
        assert_eq!(s.rate_bps(), 100_000_000_000);
        // below target: +ai x mss x acked / cwnd
        s.on_ack(&ev(1000, 10.0, 10.0, 0));
        assert!((s.cwnd - (100_000.0 + 1000.0 * 1000.0 / 100_000.0)).abs() < 1e-6);
        // far above target: cut by max_mdf, repeatedly once per RTT, down below a packet
        let mut t = 100.0;
        for _ in 0..20 {
            s.on_ack(&ev(1000, 10_000.0, t, 0));
            t += 20_000.0;
        }
        assert!(s.cwnd < 1000.0, "{}", s.cwnd);
        assert_eq!(s.window(), Some(1000));
        let want = s.cwnd * 8.0 / s.law.srtt;
        assert!((s.rate_bps() as f64 - want).abs() <= 1.0);
    }
}
