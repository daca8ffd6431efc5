//! HPCC, High Precision Congestion Control (Li et al., "HPCC: High Precision Congestion
//! Control", SIGCOMM 2019, sec. 3 and Algorithm 1), as a rate control under the RoCE
//! sender, fed by the in-band telemetry (`switch.int`, switch/int.rs) that each ACK echoes.
//!
//! On every ACK the sender estimates the normalized inflight bytes of each hop of the
//! path from the hop's record in this ACK and in the previous one (Algorithm 1,
//! `MeasureInflight`):
//!
//!   u_j = min(qlen, qlen_prev) / (B_j T) + txRate_j / B_j,
//!   txRate_j = (txBytes - txBytes_prev) / (ts - ts_prev),
//!
//! takes the most loaded hop (u, and tau = its ts - ts_prev, at most T) and folds it into
//! U = (1 - tau/T) U + (tau/T) u. The window then follows `ComputeWind`:
//! W = Wc / (U/eta) + W_AI when U >= eta or after `max_stage` additive steps, else
//! W = Wc + W_AI; the reference window Wc (and the stage) is updated only once per round
//! trip (an ACK beyond the sequence sent at the last update), every other ACK reacts from
//! Wc without moving it (sec. 3.2, "fast reaction"). The sender paces at R = W / T and
//! keeps at most W bytes in flight (sec. 3.1).
//!
//! Readings, each as the HPCC authors' ns-3 code (`alibaba-edu/High-Precision-Congestion-
//! Control`, `rdma-hw.cc` `UpdateRateHp`, with `run.py`'s settings for `hp`) does it:
//! - The state is kept as rates (R = W/T; W_AI as `rate_ai` = W_AI / T): the window is
//!   R T, the fork's `VAR_WIN` (window = BDP x R / line rate).
//! - T is the fabric's largest base RTT (`GLOBAL_T 1`: one T for every flow), unless
//!   `transport.hpcc.base_rtt` gives one; B_j T uses each hop's own rate.
//! - The first ACK only records the telemetry; a hop whose two records share a timestamp
//!   (no time between them) gives no sample; an ACK whose path has a different number of
//!   hops than the last one only records it.
//! - The rate stays within [min_rate, line rate].
//! - `rate_ai`: the fork sets RATE_AI = 10 Mb/s per 25 Gb/s of line rate (1/2500 of it),
//!   which is the paper's W_AI = W_init (1 - eta) / N (sec. 3.3) for N = 125 flows;
//!   `max_stage` is the paper's 5 (the fork's `run.py` default MI_THRESH is 0, i.e.
//!   multiplicative steps only; set `max_stage = 0` for that reading).

use super::{AckEvent, NewCc, RateControl, RateSetup};
use crate::net::{HopTelemetry, MAX_TELEMETRY_HOPS};
use crate::sim::SimTime;

/// eta, the target utilization (sec. 3.3; the fork's U_TARGET 0.95).
pub const DEFAULT_ETA: f64 = 0.95;
/// maxStage, the additive steps before a multiplicative one (sec. 3.3, 5).
pub const DEFAULT_MAX_STAGE: u32 = 5;
/// W_AI / T as a fraction of the line rate (the fork's RATE_AI = 10 Mb/s x bw / 25 Gb/s).
pub const DEFAULT_RATE_AI_OF_LINE: f64 = 1.0 / 2500.0;
/// The lowest rate (the fork's RdmaHw `MinRate` attribute default, 100 Mb/s).
pub const DEFAULT_MIN_RATE: u64 = 100_000_000;

/// HPCC's constants as a scenario gives them (`transport.hpcc`).
#[derive(Clone, Debug)]
pub struct HpccParams {
    pub eta: f64,
    pub max_stage: u32,
    /// W_AI / T as a fraction of the flow's line rate.
    pub rate_ai_of_line: f64,
    pub min_rate_bps: u64,
    /// T; None: the fabric's largest base RTT (`RateSetup::base_rtt`).
    pub base_rtt: Option<SimTime>,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams { eta: DEFAULT_ETA, max_stage: DEFAULT_MAX_STAGE, rate_ai_of_line: DEFAULT_RATE_AI_OF_LINE, min_rate_bps: DEFAULT_MIN_RATE, base_rtt: None }
    }
}

/// One flow's HPCC sender state.
#[derive(Clone, Debug)]
pub struct Hpcc {
    eta: f64,
    max_stage: u32,
    rate_ai: f64,
    min_rate: f64,
    line_rate: f64,
    /// T, seconds.
    t: f64,
    /// The current rate R (W / T), bits/s.
    rate: f64,
    /// The reference rate Rc (Wc / T).
    rate_c: f64,
    inc_stage: u32,
    /// U, the smoothed normalized inflight of the most loaded hop.
    pub u: f64,
    /// The reference window is updated by an ACK beyond this sequence (None: no ACK yet).
    last_update_seq: Option<u64>,
    hops: [HopTelemetry; MAX_TELEMETRY_HOPS],
    n_hops: usize,
}

impl NewCc<RateSetup> for Hpcc {
    type Params = HpccParams;
    fn build(p: &HpccParams, s: &RateSetup) -> Hpcc {
        let line = s.line_rate_bps as f64;
        let t = p.base_rtt.unwrap_or(s.base_rtt).0.max(1) as f64 * 1e-12;
        Hpcc {
            eta: p.eta,
            max_stage: p.max_stage,
            rate_ai: p.rate_ai_of_line * line,
            min_rate: (p.min_rate_bps as f64).min(line),
            line_rate: line,
            t,
            rate: line,
            rate_c: line,
            inc_stage: 0,
            u: 0.0,
            last_update_seq: None,
            hops: [HopTelemetry::default(); MAX_TELEMETRY_HOPS],
            n_hops: 0,
        }
    }
}

impl Hpcc {
    /// `MeasureInflight` over the hops of `int` against the last records: the most loaded
    /// hop's normalized inflight and the time between its two records, or None when no
    /// hop gives a sample.
    fn measure(&self, int: &[HopTelemetry]) -> Option<(f64, SimTime)> {
        let mut best: Option<(f64, SimTime)> = None;
        for (h, prev) in int.iter().zip(&self.hops[..self.n_hops]) {
            if h.ts <= prev.ts || h.rate_bps == 0 {
                continue;
            }
            let tau = h.ts - prev.ts;
            let b = h.rate_bps as f64;
            let tx_rate = h.tx_bytes.saturating_sub(prev.tx_bytes) as f64 * 8.0 / tau.as_secs_f64();
            let u = h.qlen.min(prev.qlen) as f64 * 8.0 / (b * self.t) + tx_rate / b;
            if best.is_none_or(|(bu, _)| u > bu) {
                best = Some((u, tau));
            }
        }
        best
    }

    fn remember(&mut self, int: &[HopTelemetry]) {
        let n = int.len().min(MAX_TELEMETRY_HOPS);
        self.hops[..n].copy_from_slice(&int[..n]);
        self.n_hops = n;
    }

    /// The window HPCC allows in flight, bytes: R T.
    pub fn window_bytes(&self) -> u64 {
        ((self.rate * self.t / 8.0) as u64).max(1)
    }
}

impl RateControl for Hpcc {
    #[inline]
    fn rate_bps(&self) -> u64 {
        self.rate as u64
    }

    /// Algorithm 1's `NewAck`.
    fn on_ack(&mut self, a: &AckEvent) {
        let Some(last) = self.last_update_seq else {
            self.last_update_seq = Some(a.snd_nxt);
            self.remember(a.int);
            return;
        };
        if a.int.len() != self.n_hops {
            self.remember(a.int);
            return;
        }
        let full = a.ack > last;
        if let Some((u, tau)) = self.measure(a.int) {
            let tau = tau.as_secs_f64().min(self.t);
            self.u = (1.0 - tau / self.t) * self.u + tau / self.t * u;
            let (new, stage) = if self.u >= self.eta || self.inc_stage >= self.max_stage {
                (self.rate_c / (self.u / self.eta) + self.rate_ai, 0)
            } else {
                (self.rate_c + self.rate_ai, self.inc_stage + 1)
            };
            self.rate = new.clamp(self.min_rate, self.line_rate);
            if full {
                self.rate_c = self.rate;
                self.inc_stage = stage;
            }
        }
        if full {
            self.last_update_seq = Some(last.max(a.snd_nxt));
        }
        self.remember(a.int);
    }

    #[inline]
    fn window(&self) -> Option<u64> {
        Some(self.window_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 100_000_000_000;

    fn hpcc() -> Hpcc {
        Hpcc::build(&HpccParams::default(), &RateSetup { line_rate_bps: LINE, now: SimTime::ZERO, base_rtt: SimTime::from_us(10), mss: 1000 })
    }

    fn ack<'a>(ack: u64, snd_nxt: u64, int: &'a [HopTelemetry]) -> AckEvent<'a> {
        AckEvent { acked: 1000, ece: false, ack, snd_nxt, now: SimTime::ZERO, rtt: SimTime::ZERO, int, hops: 0 }
    }

    /// A hop sending at `share` of 100G with `qlen` queued, sampled at `t_us`.
    fn hop(t_us: f64, share: f64, qlen: u64) -> HopTelemetry {
        let ps = (t_us * 1e6) as u64;
        HopTelemetry { qlen, tx_bytes: (share * LINE as f64 / 8.0 * ps as f64 * 1e-12) as u64, ts: SimTime(ps), rate_bps: LINE }
    }

    /// A link at 100% with a queue of half a BDP: u = 1.5; after a full round trip of such
    /// samples (tau = T) U = u, and the reference rate is cut to Rc eta / U + R_AI.
    #[test]
    fn multiplicative_decrease_follows_the_measured_inflight() {
        let mut h = hpcc();
        let bdp = LINE / 8 * 10 / 1_000_000; // 125 KB
        h.on_ack(&ack(1_000, 100_000, &[hop(0.0, 1.0, bdp / 2)]));
        assert_eq!(h.rate_bps(), LINE, "the first ACK only records");
        // one sample spanning T: U = u = 1 + 0.5
        h.on_ack(&ack(200_000, 300_000, &[hop(10.0, 1.0, bdp / 2)]));
        assert!((h.u - 1.5).abs() < 1e-3, "U = {}", h.u);
        let want = LINE as f64 * 0.95 / 1.5 + LINE as f64 / 2500.0;
        assert!((h.rate_bps() as f64 / want - 1.0).abs() < 1e-3, "rate {} want {want}", h.rate_bps());
        assert_eq!(h.window(), Some((h.rate_bps() as f64 * 10e-6 / 8.0) as u64));
    }

    /// Below eta the rate grows by R_AI per round trip for max_stage rounds, then a
    /// multiplicative step (U / eta < 1 raises it) follows.
    #[test]
    fn additive_steps_then_multiplicative_increase() {
        let mut h = hpcc();
        h.rate = 50e9;
        h.rate_c = 50e9;
        let mut t = 0.0;
        let mut seq = 0;
        h.on_ack(&ack(seq, seq + 1, &[hop(t, 0.5, 0)]));
        let ai = LINE as f64 / 2500.0;
        for stage in 1..=5 {
            t += 10.0;
            seq += 10;
            h.on_ack(&ack(seq, seq + 1, &[hop(t, 0.5, 0)]));
            assert!((h.rate - (50e9 + stage as f64 * ai)).abs() < 1.0, "stage {stage}: {}", h.rate);
        }
        t += 10.0;
        seq += 10;
        let before = h.rate_c;
        h.on_ack(&ack(seq, seq + 1, &[hop(t, 0.5, 0)]));
        let want = before / (0.5 / 0.95) + ai;
        assert!((h.rate - want).abs() / want < 1e-9, "{} vs {want}", h.rate);
    }

    /// An ACK within the round trip reacts from the reference rate without moving it; the
    /// next round's update starts from the reference again.
    #[test]
    fn fast_reaction_keeps_the_reference() {
        let mut h = hpcc();
        h.on_ack(&ack(0, 100, &[hop(0.0, 1.0, 200_000)]));
        h.on_ack(&ack(10, 100, &[hop(10.0, 1.0, 200_000)]));
        // u = 1 + 200 KB / (100G x 10 us) = 2.6
        let cut = LINE as f64 * 0.95 / 2.6 + LINE as f64 / 2500.0;
        assert!((h.rate - cut).abs() / cut < 1e-9, "cut on the queue: {} vs {cut}", h.rate);
        assert_eq!(h.rate_c, LINE as f64, "the reference waits for the round trip");
        assert_eq!(h.inc_stage, 0);
        h.on_ack(&ack(200, 300, &[hop(20.0, 1.0, 200_000)]));
        assert_eq!(h.rate_c, h.rate, "a full update moves the reference");
        // the most loaded of two hops decides
        let mut h = hpcc();
        h.remember(&[hop(0.0, 0.3, 0), hop(0.0, 0.8, 0)]);
        let (u, tau) = h.measure(&[hop(10.0, 0.3, 0), hop(10.0, 0.8, 0)]).unwrap();
        assert!((u - 0.8).abs() < 1e-6 && tau == SimTime::from_us(10), "the busier hop: {u} {tau}");
    }
}
