//! Seed 002's own DualQ Coupled AQM, as its slides describe the 2015 implementation (De
//! Schepper, Tsang, Bondarenko, Briscoe, "Data Center to the Home", 2015, slides 19 and
//! 22-29): two queues per port, L (DCTCP) served with strict priority over Classic (Reno,
//! Cubic), no PI controller: both queues' probabilities come straight from the Classic
//! queue's instantaneous delay through two slopes given as bit shifts.
//!
//! * Classifier (slides 24, 29 "ECN Classifier"): ECT(1) and CE packets go to the L queue
//!   (`l_queue`, default 1), every other to the Classic queue (`c_queue`, default 0). The
//!   seed's Classic traffic is drop-based ("Drop TCP Reno"), so its "ECN" classifier and
//!   RFC 9331's ECT(1) identifier pick the same packets; with ECT(1), classic-ECN (ECT(0))
//!   traffic stays in the Classic queue, where it is marked instead of dropped.
//! * Scheduler (slides 23-25 "Strict priority"): the switch's; validation asks for
//!   `scheduler = "strict"` with the L queue above the Classic one (the highest index is
//!   served first), or DWRR with the L queue in `switch.strict`.
//! * Classic queue delay Q_r (slide 25, "Measure Q in time is important for optimal
//!   fairness"; slide 29 "Reno QTime"): the sojourn time of the packet at the head of the
//!   Classic queue now (0 when it is empty), in integer nanoseconds. The seed gives neither
//!   Q_r's unit nor the random numbers' width; ns and 32 bits are ours, and only the slopes
//!   relative to them matter.
//! * Classic (slide 29, p_r: "(Q_r << S_r) > R1 && R2"): with R1, R2 two independent uniform
//!   32-bit random numbers, a Classic packet is selected when Q_r << S_r exceeds both, i.e.
//!   their maximum ("Square is easy: compare Q size with 2 random variables", slide 19). With
//!   p' = min(Q_r 2^S_r, 2^32) / 2^32 that is probability p'^2 exactly. A selected packet is
//!   dropped, or CE-marked if ECN-capable (classic ECN, an option the seed does not use).
//! * L (slide 29, p_dc: "Q_d > T || (Q_r << S_d) > R1"): an L packet is CE-marked when the
//!   L queue it finds holds more than T bytes (`threshold`, "DCTCP threshold (Q size)") or
//!   when Q_r << S_d exceeds one uniform 32-bit random number: the coupled probability
//!   p_dc = min(Q_r 2^S_d, 2^32) / 2^32 = 2^(S_d - S_r) p', from the *Classic* queue's delay.
//! * Coupling (slides 22-23): equal rates need p_dc / sqrt(p_reno) = 1.63 RTT_reno / RTT_dc
//!   (Reno's 1.22 / (RTT sqrt(p)) against DCTCP's 2 / (RTT p)); the seed takes the L RTT at
//!   the 8 ms base and the Classic one at 8 + 32 ms ("1/5 = 8 ms / (8 + 32) ms"), so the
//!   factor is 1.63 x 5 = 8 = 2^3: S_d = S_r + 3 (slide 29's "S_r S_d 3" relation).
//! * Slopes (not given by the seed): at its operating point, n flows at equal rates over
//!   40 Mbit/s with the Classic queue at 32 ms (Classic RTT 40 ms), a Reno window 1.22 / p' =
//!   40 Mbit/s x 40 ms / (1500 B x n) = 133 / n packets needs p' = 0.0092 n at Q_r = 32 ms:
//!   2^S_r = 0.0092 n x 2^32 / 32e6 ns = 1.23 n. That is 2.5 for the shipped mix, one Cubic
//!   and one DCTCP flow (S_r = 1.3), 4.9 for two of each (2.3) and 25 for the seed's largest,
//!   ten of each (4.6): with no integrator a fixed slope holds the Classic queue at 32 ms for
//!   one number of flows only (PI2 later removed that dependence). S_r = 2 (`classic_slope`;
//!   p' = 1 at 1.07 s of Classic delay) puts the Classic queue at the seed's 32 ms in the
//!   middle of the seed's 1..10 x 1..10 flow-mix grid: measured with Linux's CWR round trip
//!   over 250 s (`bench/seed002_grid.py --classic-slopes 0 1 2 3`), the median Classic
//!   delay over the 100 mixes is 30.7 ms (5 + 5: 31.7 ms; 1 + 1: 14.9 ms), against 43.2 ms
//!   for S_r = 1 and 21.2 ms for S_r = 3, and its Cubic / DCTCP ratio has the geometric mean
//!   nearest 1 (1.04; S_r = 1: 0.74, S_r = 3: 1.29). S_d = S_r + 3 = 5 (`l_slope`).
//! * T (not given for the DualQ): 5 packets of the MTU, the DCTCP threshold of the seed's
//!   slide 8 ("Instant Q size", 5), as `seed002_queue_pdf` reads it.
//! * Decisions are taken as the packet arrives, before it joins its queue, with the Classic
//!   delay of that moment (the engine drops only at enqueue; the seed's slide 29 draws the
//!   markers at the queues' outputs). Nothing else: no overload rule, no minimum backlog.

use crate::switch::pipeline::{AqmAction, Arrival, Ctx};
use crate::net::DropReason;
use crate::net::Ecn;
use rand::Rng as _;

/// S_r: p' = Q_r 2^S_r / 2^32 with Q_r in ns (module doc: the seed's operating point).
pub const DEFAULT_CLASSIC_SLOPE: u8 = 2;
/// S_d = S_r + 3: the seed's coupling factor 8 = 2^3.
pub const DEFAULT_L_SLOPE: u8 = 5;
/// T in packets of the MTU (slide 8's DCTCP threshold).
pub const DEFAULT_THRESHOLD_PACKETS: u64 = 5;
pub const DEFAULT_L_QUEUE: u8 = 1;
pub const DEFAULT_C_QUEUE: u8 = 0;
/// The largest slope: at 32 the probability is already 1 at the first nanosecond of delay.
pub const MAX_SLOPE: u8 = 32;

/// The random numbers the slopes' outputs are compared with are uniform on [0, 2^32).
const RANDOM_RANGE: u128 = 1 << 32;

/// `switch.aqm` with `kind = "dualq2015"`.
#[derive(Clone, Debug)]
pub struct DualQ2015Params {
    /// S_r, bits.
    pub classic_slope: u8,
    /// S_d, bits.
    pub l_slope: u8,
    /// T: the L queue (bytes) above which every arriving L packet is marked.
    pub threshold: u64,
    pub l_queue: usize,
    pub c_queue: usize,
}

impl DualQ2015Params {
    /// Q << S, capped at 2^32 (it exceeds every 32-bit random number from there on).
    #[inline]
    fn scaled(q_ns: u64, slope: u8) -> u128 {
        ((q_ns as u128) << slope).min(RANDOM_RANGE)
    }

    /// p' at a Classic delay of `q_ns`: the probability that Q_r << S_r exceeds one random
    /// number.
    pub fn p_prime(&self, q_ns: u64) -> f64 {
        Self::scaled(q_ns, self.classic_slope) as f64 / RANDOM_RANGE as f64
    }

    /// The coupled L marking probability at a Classic delay of `q_ns`.
    pub fn p_coupled(&self, q_ns: u64) -> f64 {
        Self::scaled(q_ns, self.l_slope) as f64 / RANDOM_RANGE as f64
    }
}

/// The seed's DualQ on every switch egress port.
#[derive(Clone, Debug)]
pub struct DualQ2015 {
    pub p: DualQ2015Params,
    /// Per port: L packets CE-marked by the threshold T, and by the coupling alone.
    pub step_marks: Vec<u64>,
    pub coupled_marks: Vec<u64>,
}

impl DualQ2015 {
    pub fn new(p: DualQ2015Params, ports: usize) -> DualQ2015 {
        DualQ2015 { p, step_marks: vec![0; ports], coupled_marks: vec![0; ports] }
    }

    /// classify: ECT(1) and CE to the L queue.
    pub fn classify(&self, a: &mut Arrival) {
        a.queue = if matches!(a.ecn, Ecn::Ect1 | Ecn::Ce) { self.p.l_queue } else { self.p.c_queue };
    }

    /// Q_r: the sojourn time (ns) of the packet at the head of `port`'s Classic queue now.
    #[inline]
    fn classic_delay_ns(&self, port: u32, cx: &Ctx) -> u64 {
        let q = &cx.port_queues.of(port)[self.p.c_queue];
        q.head().map_or(0, |h| (cx.now - cx.pkts.get(h).enq).0 / 1000)
    }

    pub fn on_arrival(&mut self, a: &Arrival, ect: bool, cx: &mut Ctx) -> AqmAction {
        let q_ns = self.classic_delay_ns(a.out, cx);
        let port = a.out as usize;
        if a.queue == self.p.l_queue {
            if cx.queue_bytes(a.out, a.queue) > self.p.threshold {
                self.step_marks[port] += 1;
                return AqmAction::Mark;
            }
            let v = DualQ2015Params::scaled(q_ns, self.p.l_slope);
            // no draw when the outcome is certain: 0 never exceeds a random number, 2^32 always
            let marked = match v {
                0 => false,
                RANDOM_RANGE => true,
                v => v > cx.switches[a.sw as usize].rng.gen::<u32>() as u128,
            };
            if marked {
                self.coupled_marks[port] += 1;
                return AqmAction::Mark;
            }
            return AqmAction::Pass;
        }
        let v = DualQ2015Params::scaled(q_ns, self.p.classic_slope);
        let selected = match v {
            0 => false,
            RANDOM_RANGE => true,
            v => {
                let rng = &mut cx.switches[a.sw as usize].rng;
                let (r1, r2) = (rng.gen::<u32>(), rng.gen::<u32>());
                v > r1.max(r2) as u128
            }
        };
        match (selected, ect, a.lossless) {
            (false, _, _) => AqmAction::Pass,
            (true, true, _) => AqmAction::Mark,
            (true, false, true) => AqmAction::Pass,
            (true, false, false) => AqmAction::Drop(DropReason::Aqm),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Packet, PktKind};
    use crate::sim::SimTime;
    use crate::switch::bench::Bench;

    fn seed() -> DualQ2015Params {
        DualQ2015Params { classic_slope: DEFAULT_CLASSIC_SLOPE, l_slope: DEFAULT_L_SLOPE, threshold: DEFAULT_THRESHOLD_PACKETS * 1500, l_queue: 1, c_queue: 0 }
    }

    /// The defaults' reading of the seed: coupling factor 2^(S_d - S_r) = 8; p' at the seed's
    /// 32 ms of Classic delay is 32e6 x 4 / 2^32 = 0.0298, between the 0.0183 and 0.0367
    /// that one and two flows of each kind need there (0.0092 n, module doc); p' reaches 1 at
    /// 2^30 ns = 1.07 s.
    #[test]
    fn defaults_are_the_seeds_operating_point() {
        let p = seed();
        assert_eq!(p.p_coupled(1_000_000) / p.p_prime(1_000_000), 8.0);
        let at32 = p.p_prime(32_000_000);
        assert!((at32 - 32e6 * 4.0 / 4294967296.0).abs() < 1e-15, "{at32}");
        let need = |n: f64| 1.22 / (40e6 * 0.040 / (1500.0 * 8.0) / n);
        assert!(need(2.0) < at32 && at32 < need(4.0), "{} {at32} {}", need(2.0), need(4.0));
        assert!(p.p_prime((1 << 30) - 1) < 1.0 && p.p_prime(1 << 30) == 1.0);
    }

    /// `n` packets with codepoint `ecn` arriving at the bottleneck port while the packet at
    /// the head of its Classic queue has waited `q_ns` and its L queue holds `l_bytes`:
    /// the fractions marked and dropped, and the port's counters.
    fn fractions(p: DualQ2015Params, q_ns: u64, l_bytes: u64, ecn: Ecn, n: u32) -> (f64, f64, DualQ2015) {
        let mut b = Bench::with_queues(2);
        let (inp, out) = (b.port("left", "h0"), b.port("left", "right"));
        let mut d = DualQ2015::new(p, b.topo.ports.len());
        // later than the longest delay asked (2^32 / 2^S_r ns: 1.07 s at S_r = 2), so that the head's
        // enqueue time stays positive
        let now = SimTime::from_ms(2000);
        if q_ns > 0 {
            let head = b.pkts.alloc(Packet { kind: PktKind::Data, size: 1500, enq: SimTime(now.0 - q_ns * 1000), ..Packet::blank() });
            b.port_queues.get_mut(out, 0).push(head, 1500, 0, now);
        }
        let (mut marked, mut dropped) = (0u32, 0u32);
        for _ in 0..n {
            let mut a = b.data(1, 0, 2, inp, out, 0);
            a.ecn = ecn;
            d.classify(&mut a);
            assert_eq!(a.queue, if matches!(ecn, Ecn::Ect1 | Ecn::Ce) { 1 } else { 0 });
            b.port_queues.get_mut(out, 1).bytes = l_bytes;
            match d.on_arrival(&a, ecn.is_ect(), &mut b.cx(now)) {
                AqmAction::Mark => marked += 1,
                AqmAction::Drop(_) => dropped += 1,
                AqmAction::Pass => {}
            }
        }
        (marked as f64 / n as f64, dropped as f64 / n as f64, d)
    }

    /// The Classic delay (ns) at which the default S_r gives p' = 0.05: 0.05 x 2^32 / 2^S_r.
    fn q_at_5_percent() -> u64 {
        (0.05 * 4294967296.0) as u64 >> DEFAULT_CLASSIC_SLOPE
    }

    /// Slide 29's Classic rule, measured over 400,000 packets at a fixed Classic delay: at
    /// Q_r = 0.05 x 2^32 / 2^S_r ns (53.7 ms), p' = 0.05 and a not-ECT packet is dropped with
    /// p'^2 = 0.0025 (the max of two draws), not with p' (one draw): within 5% (the binomial's
    /// standard error is 1.6% there). An ECT(0) packet is marked instead. At Q_r = 0 nothing
    /// is selected; from 2^32 / 2^S_r ns on everything is.
    #[test]
    fn classic_probability_is_p_prime_squared() {
        let q = q_at_5_percent();
        let p = seed();
        let want = p.p_prime(q).powi(2);
        assert!((p.p_prime(q) - 0.05).abs() < 1e-8);
        let (m, d, _) = fractions(seed(), q, 0, Ecn::NotEct, 400_000);
        assert!(m == 0.0 && (d / want - 1.0).abs() < 0.05, "dropped {d}, want {want}");
        let (m, d, _) = fractions(seed(), q, 0, Ecn::Ect0, 400_000);
        assert!(d == 0.0 && (m / want - 1.0).abs() < 0.05, "marked {m}, want {want}");
        assert_eq!(fractions(seed(), 0, 0, Ecn::NotEct, 1000).1, 0.0);
        assert_eq!(fractions(seed(), 1 << (32 - DEFAULT_CLASSIC_SLOPE), 0, Ecn::NotEct, 1000).1, 1.0);
    }

    /// Slide 29's L rule: below T the coupling alone marks, with p_dc = Q_r 2^S_d / 2^32 =
    /// 8 p' = 0.4 at p' = 0.05 (one draw, from the Classic queue's delay): within 2% over
    /// 200,000 packets; none is dropped. An L queue holding more than T (7500 B) marks every
    /// packet whatever the Classic delay, one holding exactly T does not; the counters
    /// tell the two causes apart.
    #[test]
    fn l_marks_on_threshold_or_coupled_probability() {
        let q = q_at_5_percent();
        let (m, d, dq) = fractions(seed(), q, 0, Ecn::Ect1, 200_000);
        assert!(d == 0.0 && (m / 0.4 - 1.0).abs() < 0.02, "marked {m}");
        assert_eq!(dq.step_marks.iter().sum::<u64>(), 0);
        assert_eq!(dq.coupled_marks.iter().sum::<u64>(), (m * 200_000.0).round() as u64);
        let (m, _, dq) = fractions(seed(), 0, 7501, Ecn::Ect1, 1000);
        assert_eq!((m, dq.step_marks.iter().sum::<u64>()), (1.0, 1000));
        assert_eq!(fractions(seed(), 0, 7500, Ecn::Ect1, 1000).0, 0.0);
        // CE packets are L packets too (RFC 9331's classifier)
        assert_eq!(fractions(seed(), 0, 7501, Ecn::Ce, 10).0, 1.0);
    }
}
