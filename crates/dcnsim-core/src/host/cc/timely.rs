//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter",
//! SIGCOMM 2015, sec. 4 and Algorithm 1), as a rate control under the RoCE sender: the
//! rate follows the RTT the ACKs measure (now minus the echoed send time of the data).
//!
//! Once per round trip (an ACK beyond the sequence sent at the last update), with the RTT
//! of that ACK:
//!
//!   rtt_diff = (1 - alpha) rtt_diff + alpha (rtt - prev_rtt),  g = rtt_diff / minRTT
//!   rtt < T_low:   R += delta
//!   rtt > T_high:  R *= 1 - beta (1 - T_high / rtt)
//!   g <= 0:        R += N delta   (N = 5 after five increases in a row: HAI, else 1)
//!   otherwise:     R *= 1 - beta g
//!
//! Readings, as the HPCC authors' ns-3 fork (`alibaba-edu/High-Precision-Congestion-
//! Control`, `rdma-hw.cc` `UpdateRateTimely`, `run.py` for `timely`) runs TIMELY:
//! - One update per round trip rather than per completion event of 16-64 KB (the
//!   paper's segments); the first ACK only records its RTT; prev_rtt is the RTT of the
//!   last update. The paper's reading is `transport.timely.segment`: an update per that
//!   many acknowledged bytes, so the update frequency grows with the rate, which is what
//!   lets TIMELY settle at unfair rates (Zhu et al., "ECN or Delay", CoNEXT 2016, sec. 4).
//! - The increase step is delta until five increases in a row, then 5 delta (the paper's
//!   HAI with N = 5); a decrease resets the count. The T_low increase counts too.
//! - Constants: alpha = 0.875, beta = 0.8, T_low = 50 us, T_high = 500 us, minRTT = 20 us
//!   (the paper's Table 1 and the fork's RdmaHw defaults); delta = line rate / 1000 (the
//!   paper's 10 Mb/s at 10 Gb/s; the fork's `run.py` 10 Mb/s x bw / 10 Gb/s).
//! - The rate stays within [min_rate, line rate]; the factor of a decrease is not below 0.

use super::{AckEvent, NewCc, RateControl, RateSetup};
use crate::sim::SimTime;

pub const DEFAULT_ALPHA: f64 = 0.875;
pub const DEFAULT_BETA: f64 = 0.8;
pub const DEFAULT_T_LOW: SimTime = SimTime::from_us(50);
pub const DEFAULT_T_HIGH: SimTime = SimTime::from_us(500);
pub const DEFAULT_MIN_RTT: SimTime = SimTime::from_us(20);
/// delta as a fraction of the line rate (10 Mb/s at 10 Gb/s).
pub const DEFAULT_DELTA_OF_LINE: f64 = 1.0 / 1000.0;
/// Increases in a row before hyper-additive increase, and its multiple of delta (HAI).
pub const HAI_AFTER: u32 = 5;
/// The lowest rate (the fork's RdmaHw `MinRate` attribute default, 100 Mb/s).
pub const DEFAULT_MIN_RATE: u64 = 100_000_000;

/// TIMELY's constants as a scenario gives them (`transport.timely`).
#[derive(Clone, Debug)]
pub struct TimelyParams {
    pub alpha: f64,
    pub beta: f64,
    pub t_low: SimTime,
    pub t_high: SimTime,
    pub min_rtt: SimTime,
    pub delta_of_line: f64,
    pub min_rate_bps: u64,
    /// Update once per this many acknowledged bytes (the paper's completion events); None:
    /// once per round trip.
    pub segment: Option<u64>,
}

impl Default for TimelyParams {
    fn default() -> Self {
        TimelyParams {
            alpha: DEFAULT_ALPHA,
            beta: DEFAULT_BETA,
            t_low: DEFAULT_T_LOW,
            t_high: DEFAULT_T_HIGH,
            min_rtt: DEFAULT_MIN_RTT,
            delta_of_line: DEFAULT_DELTA_OF_LINE,
            min_rate_bps: DEFAULT_MIN_RATE,
            segment: None,
        }
    }
}

/// One flow's TIMELY sender state.
#[derive(Clone, Debug)]
pub struct Timely {
    p: TimelyParams,
    line_rate: f64,
    delta: f64,
    /// The rate, bits/s.
    pub rate: f64,
    /// The smoothed RTT difference, seconds.
    pub rtt_diff: f64,
    prev_rtt: SimTime,
    increases: u32,
    /// An ACK beyond this sequence updates the rate (None: no ACK yet).
    last_update_seq: Option<u64>,
    /// Bytes acknowledged since the last completion event (per-segment updates).
    acked_since: u64,
}

impl NewCc<RateSetup> for Timely {
    type Params = TimelyParams;
    fn build(p: &TimelyParams, s: &RateSetup) -> Timely {
        let line = s.line_rate_bps as f64;
        Timely { p: p.clone(), line_rate: line, delta: p.delta_of_line * line, rate: line, rtt_diff: 0.0, prev_rtt: SimTime::ZERO, increases: 0, last_update_seq: None, acked_since: 0 }
    }
}

impl Timely {
    /// Algorithm 1 for one RTT sample.
    fn update(&mut self, rtt: SimTime) {
        let secs = SimTime::as_secs_f64;
        let new_diff = secs(rtt) - secs(self.prev_rtt);
        let diff = (1.0 - self.p.alpha) * self.rtt_diff + self.p.alpha * new_diff;
        let gradient = diff / secs(self.p.min_rtt);
        let increase = rtt < self.p.t_low || (rtt <= self.p.t_high && gradient <= 0.0);
        if increase {
            let n = if self.increases < HAI_AFTER { 1.0 } else { HAI_AFTER as f64 };
            self.rate += n * self.delta;
            self.increases += 1;
        } else {
            let factor = if rtt > self.p.t_high { 1.0 - self.p.beta * (1.0 - secs(self.p.t_high) / secs(rtt)) } else { 1.0 - self.p.beta * gradient };
            self.rate *= factor.max(0.0);
            self.increases = 0;
        }
        self.rate = self.rate.clamp((self.p.min_rate_bps as f64).min(self.line_rate), self.line_rate);
        self.rtt_diff = diff;
        self.prev_rtt = rtt;
    }
}

impl RateControl for Timely {
    #[inline]
    fn rate_bps(&self) -> u64 {
        self.rate as u64
    }

    fn on_ack(&mut self, a: &AckEvent) {
        if let Some(seg) = self.p.segment {
            // a completion event per `seg` bytes: a faster flow updates more often
            if self.last_update_seq.is_none() {
                self.prev_rtt = a.rtt;
                self.last_update_seq = Some(a.snd_nxt);
                return;
            }
            self.acked_since += a.acked;
            if self.acked_since >= seg {
                self.acked_since %= seg;
                self.update(a.rtt);
            }
            return;
        }
        match self.last_update_seq {
            None => self.prev_rtt = a.rtt,
            Some(last) if a.ack > last => self.update(a.rtt),
            Some(_) => return,
        }
        self.last_update_seq = Some(a.snd_nxt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 10_000_000_000;

    fn timely() -> Timely {
        Timely::build(&TimelyParams::default(), &RateSetup { line_rate_bps: LINE, now: SimTime::ZERO, base_rtt: SimTime::from_us(10), mss: 1000 })
    }

    fn ack(ack: u64, rtt_us: f64) -> AckEvent<'static> {
        AckEvent { acked: 1000, ece: false, ack, snd_nxt: ack + 1, now: SimTime::ZERO, rtt: SimTime((rtt_us * 1e6) as u64), int: &[], hops: 0 }
    }

    /// Algorithm 1's four regions, from a rate of 5 Gb/s: below T_low +delta; above T_high
    /// the cut 1 - beta (1 - T_high / rtt); a rising RTT between them 1 - beta g with g
    /// the smoothed difference over minRTT; five increases in a row, then 5 delta.
    #[test]
    fn each_region_of_algorithm_1() {
        let mut t = timely();
        t.rate = 5e9;
        t.on_ack(&ack(0, 30.0));
        t.on_ack(&ack(10, 30.0));
        assert!((t.rate - (5e9 + 1e7)).abs() < 1.0, "below T_low: {}", t.rate);
        t.on_ack(&ack(20, 1000.0));
        let want = (5e9 + 1e7) * (1.0 - 0.8 * (1.0 - 500.0 / 1000.0));
        assert!((t.rate - want).abs() < 1.0, "above T_high: {} vs {want}", t.rate);
        // from 1000 us down to 100: a falling RTT increases
        let before = t.rate;
        t.on_ack(&ack(30, 100.0));
        assert!((t.rate - (before + 1e7)).abs() < 1.0);
        // a steady RTT lets the difference decay (an increase each time: g <= 0)
        for s in [32, 34, 36] {
            t.on_ack(&ack(s, 100.0));
        }
        // rising by 10 us: rtt_diff = 0.125 x old + 0.875 x 10 us
        let (old, before) = (t.rtt_diff, t.rate);
        t.on_ack(&ack(40, 110.0));
        let diff = 0.125 * old + 0.875 * 10e-6;
        assert!(diff > 0.0);
        let want = before * (1.0 - 0.8 * diff / 20e-6).max(0.0);
        assert!((t.rate - want).abs() < 1.0, "gradient: {} vs {want}", t.rate);
        // five increases in a row, then hyper-additive steps
        let mut seq = 50;
        let mut steps = Vec::new();
        for _ in 0..7 {
            let r = t.rate;
            t.on_ack(&ack(seq, 30.0));
            steps.push(((t.rate - r) / 1e7).round() as u32);
            seq += 10;
        }
        assert_eq!(steps, [1, 1, 1, 1, 1, 5, 5]);
        // ACKs within the round trip change nothing
        let r = t.rate;
        t.on_ack(&ack(seq - 10, 1000.0));
        assert_eq!(t.rate, r);
    }

    /// With `segment`, the rate updates once per that many acknowledged bytes, whatever the
    /// round trip: 16 KB in 1 KB ACKs is an update every 16 ACKs.
    #[test]
    fn per_segment_updates_count_acknowledged_bytes() {
        let p = TimelyParams { segment: Some(16_000), ..TimelyParams::default() };
        let mut t = Timely::build(&p, &RateSetup { line_rate_bps: LINE, now: SimTime::ZERO, base_rtt: SimTime::from_us(10), mss: 1000 });
        t.rate = 5e9;
        t.on_ack(&ack(0, 30.0));
        let mut updates = 0;
        for i in 1..=48 {
            let r = t.rate;
            // the same sequence each time: per-segment updates do not wait for a round trip
            t.on_ack(&ack(1, 30.0));
            if t.rate != r {
                updates += 1;
                assert_eq!(i % 16, 0, "update at ACK {i}");
            }
        }
        assert_eq!(updates, 3);
    }
}
