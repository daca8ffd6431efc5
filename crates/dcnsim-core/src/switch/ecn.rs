//! ECN marking on the instantaneous queue: RED's linear ramp (Floyd &
//! Jacobson, IEEE/ACM ToN 1993) with the DCQCN convention of marking every
//! packet above `high` (Zhu et al., SIGCOMM 2015, Kmin/Kmax/Pmax), and
//! DCTCP's step marking at K as the low == high case (Alizadeh et al., 2010).

use super::mechanism::{Caps, Fabric, Never, SwitchMechanism};
use super::pipeline::{AqmAction, Arrival, Ctx, Report, EGRESS_DEPTH};
use crate::metrics::Outputs;
use crate::net::DropReason;
use rand::Rng as _;

/// The ramp's marking probability at `high` unless the scenario says (DCQCN's Pmax as the
/// step marks: every packet above the threshold), and whether a selected packet that is not
/// ECN-capable is dropped (no: RFC 3168 leaves it to tail drop).
pub const DEFAULT_PMAX: f64 = 1.0;
pub const DEFAULT_DROP_NON_ECT: bool = false;

/// The ECN marker of every switch queue (`switch.aqm` kinds "ramp" and "step"): RED's ramp
/// (or DCTCP's step) on the instantaneous depth of the queue a packet joins, drawn from the switch's stream. A
/// packet it selects is CE-marked when ECN-capable (ECT(0) and ECT(1) alike); otherwise it
/// passes, or with `drop_non_ect` is dropped unless its class is lossless.
#[derive(Clone, Debug)]
pub struct EcnMarker {
    pub red: Red,
    pub drop_non_ect: bool,
}

impl SwitchMechanism for EcnMarker {
    type Params = EcnMarker;
    type Frame = Never;
    type Msg = Never;
    type Timer = Never;
    // the step and ramp kinds of switch.aqm resolve to this marker
    const KEY: &'static str = "aqm";
    const CAPS: Caps = Caps::MARK;
    /// The marker writes no columns or keys: its marks are the engine's (`ecn_marks`).
    const OUTPUTS: Outputs = Outputs::NONE;

    fn build(p: EcnMarker, _: &Fabric) -> EcnMarker {
        p
    }

    /// Drawn by the property tests themselves (`engine/proptests.rs`), which shape the
    /// case around it.
    #[cfg(test)]
    fn arbitrary(_: u64, _: u8, _: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        None
    }
    /// Its marks are the engine's (summary ecn_marks): said as its activity.
    fn report(&self, r: &mut Report) {
        let marks = r.summary_u64("ecn_marks").unwrap_or(0);
        r.acted("switch.aqm", "packets marked CE", marks);
    }
    #[inline]
    fn on_arrival(&mut self, a: &Arrival, ect: bool, cx: &mut Ctx) -> AqmAction {
        let depth = if a.judged_depth == EGRESS_DEPTH { cx.queue_bytes(a.out, a.queue) } else { a.judged_depth };
        if !self.red.decide(depth, &mut cx.switches[a.sw as usize].rng) {
            AqmAction::Pass
        } else if ect {
            AqmAction::Mark
        } else if self.drop_non_ect && !a.lossless {
            AqmAction::Drop(DropReason::Aqm)
        } else {
            AqmAction::Pass
        }
    }
}

/// Marking thresholds in bytes.
#[derive(Clone, Debug)]
pub struct Red {
    pub low: u64,
    pub high: u64,
    pub pmax: f64,
}

impl Red {
    /// Marking probability for a packet arriving to a queue of `q` bytes.
    #[inline]
    pub fn prob(&self, q: u64) -> f64 {
        if q <= self.low {
            0.0
        } else if q > self.high || self.high == self.low {
            1.0
        } else {
            self.pmax * (q - self.low) as f64 / (self.high - self.low) as f64
        }
    }
    #[inline]
    pub fn decide(&self, q: u64, rng: &mut crate::sim::Rng) -> bool {
        let p = self.prob(q);
        p >= 1.0 || (p > 0.0 && rng.gen::<f64>() < p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ramp_and_step() {
        let r = Red { low: 10_000, high: 300_000, pmax: 0.01 };
        assert_eq!(r.prob(10_000), 0.0);
        assert!((r.prob(155_000) - 0.005).abs() < 1e-12);
        assert_eq!(r.prob(300_001), 1.0);
        let k = Red { low: 22_500, high: 22_500, pmax: 1.0 };
        assert_eq!(k.prob(22_500), 0.0);
        assert_eq!(k.prob(22_501), 1.0);
    }
}
