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
//! * `dualpi2`: the DualQ Coupled AQM of RFC 9332 (`switch/dualpi2.rs`).
//! * `coupled`: seed 002's single-queue coupled AQM (`switch/coupled.rs`).

use super::coupled::Coupled;
use super::dualpi2::{DualPi2, DualPi2Params};
use super::pi2::{self, Pi2, Pi2Params};
use super::pipeline::{AqmAction, Arrival, Ctx, Departure, Report};
use super::red::{Red, RedParams};
use super::DropReason;
use crate::metrics::ColumnData;
use crate::sim::Rng;
use rand::Rng as _;

/// Select an arriving packet with probability `p` (one draw from `rng`, none when p is 0): a
/// selected packet is CE-marked when `mark` (it is ECN-capable and the AQM marks it), else
/// dropped, unless its class is lossless.
#[inline]
pub fn select(p: f64, mark: bool, lossless: bool, rng: &mut Rng) -> AqmAction {
    if p <= 0.0 || rng.gen::<f64>() >= p {
        AqmAction::Pass
    } else if mark {
        AqmAction::Mark
    } else if lossless {
        AqmAction::Pass
    } else {
        AqmAction::Drop(DropReason::Aqm)
    }
}

/// The AQM `switch.aqm` configures, as the scenario builder resolved it.
#[derive(Clone, Debug)]
pub enum AqmParams {
    /// Mark or drop with probability `p` (module doc).
    Fixed {
        p: f64,
    },
    Red(RedParams),
    Pi2(Pi2Params),
    DualPi2(DualPi2Params),
    Coupled(Coupled),
}

/// The AQM of every switch egress queue, with its per-queue state.
#[derive(Clone, Debug)]
pub enum Aqm {
    Fixed { p: f64 },
    Red(Red),
    Pi2(Pi2),
    DualPi2(DualPi2),
    Coupled(Coupled),
}

impl Aqm {
    pub fn new(p: AqmParams, ports: usize, queues: usize, switches: usize) -> Aqm {
        match p {
            AqmParams::Fixed { p } => Aqm::Fixed { p },
            AqmParams::Red(r) => Aqm::Red(Red::new(r, ports, queues)),
            AqmParams::Pi2(p) => Aqm::Pi2(Pi2::new(p, ports, queues, switches)),
            AqmParams::DualPi2(p) => Aqm::DualPi2(DualPi2::new(p, ports, switches)),
            AqmParams::Coupled(c) => Aqm::Coupled(c),
        }
    }

    /// classify: DualPI2 puts ECT(1) and CE packets in its L queue.
    #[inline]
    pub fn classify(&self, a: &mut Arrival, cx: &Ctx) {
        if let Aqm::DualPi2(d) = self {
            d.classify(a, cx);
        }
    }

    /// Per-port columns (DualPI2's marks by cause) and summary totals.
    pub fn report(&self, r: &mut Report) {
        if let Aqm::DualPi2(d) = self {
            let rows = r.topo.ports.len() * r.queues;
            for (name, v) in [("dualpi2_step_marks", &d.step_marks), ("dualpi2_coupled_marks", &d.coupled_marks)] {
                let mut col = vec![0u64; rows];
                for (port, &x) in v.iter().enumerate() {
                    col[port * r.queues + d.p.l_queue] = x;
                }
                r.summary.insert(name.into(), v.iter().sum::<u64>().into());
                r.ports_table.push(name, ColumnData::U64(col));
            }
            r.queue_role(d.p.l_queue, "L");
            r.queue_role(d.p.c_queue, "Classic");
        }
    }

    /// An AQM timer (the PI2 controllers' periodic update).
    pub fn on_timer(&mut self, t: pi2::Update, cx: &mut Ctx) {
        match self {
            Aqm::Pi2(p) => p.on_timer(t, cx),
            Aqm::DualPi2(d) => d.on_timer(t, cx),
            Aqm::Fixed { .. } | Aqm::Red(_) | Aqm::Coupled(_) => {}
        }
    }

    #[inline]
    pub fn on_arrival(&mut self, a: &Arrival, ect: bool, cx: &mut Ctx) -> AqmAction {
        match self {
            Aqm::Fixed { p } => select(*p, ect, a.lossless, &mut cx.switches[a.sw as usize].rng),
            Aqm::Red(r) => r.on_arrival(a, ect, cx),
            Aqm::Pi2(p) => p.on_arrival(a, ect, cx),
            Aqm::DualPi2(d) => d.on_arrival(a, ect, cx),
            Aqm::Coupled(c) => c.on_arrival(a, ect, cx),
        }
    }

    #[inline]
    pub fn on_dequeue(&mut self, d: &Departure, cx: &mut Ctx) {
        match self {
            Aqm::Red(r) => r.on_dequeue(d.port, d.queue, cx.queue_bytes(d.port, d.queue), cx.now),
            Aqm::DualPi2(q) => q.on_dequeue(d, cx),
            Aqm::Fixed { .. } | Aqm::Pi2(_) | Aqm::Coupled(_) => {}
        }
    }
}
