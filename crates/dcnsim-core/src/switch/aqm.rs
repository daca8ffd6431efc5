//! `switch.aqm`: the active queue management of every switch egress queue, by kind.
//!
//! * `fixed`: marks an ECN-capable packet (ECT(0), ECT(1) or CE) and drops any other with
//!   the same fixed probability `p`, drawn from the switch's stream, whatever the queue
//!   holds. It is the instrument behind the steady-state rate laws of the congestion
//!   controllers (Mathis et al. 1997 for Reno, RFC 9438 sec. 5 for Cubic, the seed 002
//!   reading 2 / (R p) for DCTCP under probabilistic marking). A lossless class's packets
//!   are never dropped.
//! * `red`: RED as Linux `tc red` runs it (`switch/red.rs`).
//! * `pi2`: the PI2 controller, p'^2 on every packet (`switch/pi2.rs`).

use super::pi2::{self, Pi2, Pi2Params};
use super::pipeline::{AqmAction, Arrival, Ctx, Departure};
use super::red::{Red, RedParams};
use super::DropReason;
use rand::Rng as _;

/// The AQM `switch.aqm` configures, as the scenario builder resolved it.
#[derive(Clone, Debug)]
pub enum AqmParams {
    /// Mark or drop with probability `p` (module doc).
    Fixed {
        p: f64,
    },
    Red(RedParams),
    Pi2(Pi2Params),
}

/// The AQM of every switch egress queue, with its per-queue state.
#[derive(Clone, Debug)]
pub enum Aqm {
    Fixed { p: f64 },
    Red(Red),
    Pi2(Pi2),
}

impl Aqm {
    pub fn new(p: AqmParams, ports: usize, queues: usize, switches: usize) -> Aqm {
        match p {
            AqmParams::Fixed { p } => Aqm::Fixed { p },
            AqmParams::Red(r) => Aqm::Red(Red::new(r, ports, queues)),
            AqmParams::Pi2(p) => Aqm::Pi2(Pi2::new(p, ports, queues, switches)),
        }
    }

    /// An AQM timer (PI2's periodic update).
    pub fn on_timer(&mut self, t: pi2::Update, cx: &mut Ctx) {
        if let Aqm::Pi2(p) = self {
            p.on_timer(t, cx);
        }
    }

    #[inline]
    pub fn on_arrival(&mut self, a: &Arrival, ect: bool, cx: &mut Ctx) -> AqmAction {
        match self {
            Aqm::Fixed { p } => {
                let p = *p;
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
            Aqm::Red(r) => r.on_arrival(a, ect, cx),
            Aqm::Pi2(p) => p.on_arrival(a, ect, cx),
        }
    }

    #[inline]
    pub fn on_dequeue(&mut self, d: &Departure, cx: &Ctx) {
        if let Aqm::Red(r) = self {
            r.on_dequeue(d.port, d.queue, cx.queue_bytes(d.port, d.queue), cx.now);
        }
    }
}
