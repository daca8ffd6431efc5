//! `switch.aqm`: the active queue management of every switch egress queue, by kind.
//!
//! * `fixed`: marks an ECN-capable packet (ECT(0), ECT(1) or CE) and drops any other with
//!   the same fixed probability `p`, drawn from the switch's stream, whatever the queue
//!   holds. It is the instrument behind the steady-state rate laws of the congestion
//!   controllers (Mathis et al. 1997 for Reno, RFC 9438 sec. 5 for Cubic, the seed 002
//!   reading 2 / (R p) for DCTCP under probabilistic marking). A lossless class's packets
//!   are never dropped.

use super::pipeline::{AqmAction, Arrival, Ctx};
use super::DropReason;
use rand::Rng as _;

/// The configured AQM of every switch egress queue.
#[derive(Clone, Debug)]
pub enum Aqm {
    /// Mark or drop with probability `p` (module doc).
    Fixed { p: f64 },
}

impl Aqm {
    #[inline]
    pub fn on_arrival(&self, a: &Arrival, ect: bool, cx: &mut Ctx) -> AqmAction {
        match *self {
            Aqm::Fixed { p } => {
                if p <= 0.0 || cx.switches[a.sw as usize].rng.gen::<f64>() >= p {
                    AqmAction::Pass
                } else if ect {
                    AqmAction::Mark
                } else if a.lossless {
                    AqmAction::Pass
                } else {
                    AqmAction::Drop(DropReason::Aqm)
                }
            }
        }
    }
}
