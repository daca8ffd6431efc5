//! Seed 002's single-queue coupled AQM (De Schepper et al., "Data Center to the Home", 2015,
//! slides 18-21): one queue, one marking probability P from the instantaneous queue, applied
//! to scalable and classic traffic in the two forms that give them equal rates.
//!
//! * P = q / max, a linear slope from the origin ("slope starts from the origin to avoid
//!   ON/OFF behaviour in steady state"), capped at 1; q is the queue in bytes the packet
//!   finds ("instant Q size"). `max` is not given by the seed: a scenario key.
//! * Scalable packets (ECT(1) or CE: DCTCP) are CE-marked with p_dc = P.
//! * Classic packets (Reno, Cubic) are selected with p_reno = (P / k)^2, k = 1.63 by default:
//!   the seed's equal-rate relation 1.22 / (R sqrt(p_reno)) = 2 / (R p_dc). "Square is easy":
//!   a classic packet is selected when two independent draws both fall below P / k (one draw
//!   against the square is the same probability); a selected ECN-capable packet is marked,
//!   another dropped.
//! * The seed's verdict (slide 21): it works, with no latency gain: both kinds share one
//!   queue.

use super::select;
use crate::switch::pipeline::{AqmAction, Arrival, Ctx};
use crate::net::Ecn;

/// The seed's coupling factor for equal rates (sqrt of 2 / 1.22 squared: 1.63).
pub const DEFAULT_K: f64 = 1.63;

/// `switch.aqm` with `kind = "coupled"`.
#[derive(Clone, Debug)]
pub struct Coupled {
    /// Queue (bytes) at which P reaches 1.
    pub max: u64,
    pub k: f64,
}

impl Coupled {
    /// P for a queue of `q` bytes.
    #[inline]
    pub fn p(&self, q: u64) -> f64 {
        (q as f64 / self.max as f64).min(1.0)
    }

    pub fn on_arrival(&self, a: &Arrival, ect: bool, cx: &mut Ctx) -> AqmAction {
        let p = self.p(cx.queue_bytes(a.out, a.queue));
        let scalable = matches!(a.ecn, Ecn::Ect1 | Ecn::Ce);
        let rng = &mut cx.switches[a.sw as usize].rng;
        if scalable {
            select(p, true, a.lossless, rng)
        } else {
            let c = p / self.k;
            select(c * c, ect, a.lossless, rng)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::bench::Bench;

    /// At a queue of half `max` (P = 0.5): ECT(1) packets are marked with 0.5, ECT(0) ones
    /// with (0.5 / 1.63)^2 = 0.0941, not-ECT ones dropped with the same; within 3% over
    /// 100,000 arrivals each.
    #[test]
    fn scalable_p_classic_p_over_k_squared() {
        let mut b = Bench::new();
        let c = Coupled { max: 200_000, k: DEFAULT_K };
        let (inp, out) = (b.port("left", "h0"), b.port("left", "right"));
        for (ecn, want_mark, want_drop) in [(Ecn::Ect1, 0.5, 0.0), (Ecn::Ect0, (0.5f64 / 1.63).powi(2), 0.0), (Ecn::NotEct, 0.0, (0.5f64 / 1.63).powi(2))] {
            let (mut m, mut d) = (0u32, 0u32);
            let n = 100_000;
            for _ in 0..n {
                let a = b.data(1, 0, 2, inp, out, 100_000);
                let a = Arrival { ecn, ..a };
                match c.on_arrival(&a, ecn.is_ect(), &mut b.cx(crate::sim::SimTime::ZERO)) {
                    AqmAction::Mark => m += 1,
                    AqmAction::Drop(_) => d += 1,
                    AqmAction::Pass => {}
                }
            }
            let (fm, fd) = (m as f64 / n as f64, d as f64 / n as f64);
            let close = |x: f64, w: f64| if w == 0.0 { x == 0.0 } else { (x / w - 1.0).abs() < 0.03 };
            assert!(close(fm, want_mark) && close(fd, want_drop), "{ecn:?}: marked {fm}, dropped {fd}");
        }
        assert_eq!(c.p(400_000), 1.0);
    }
}
