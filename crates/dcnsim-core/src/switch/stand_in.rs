//! A test's stand-in switch mechanism for the seams no shipped mechanism uses yet: it
//! chooses next hops (`Caps::ROUTE`) and trims packets the buffer cannot hold
//! (`Caps::TRIM`) by fixed rules, so that the engine's side of both is exercised before
//! adaptive routing and packet trimming (issue 59) land on them.

use super::mechanism::{Caps, Fabric, Never, SwitchMechanism};
use super::pipeline::{Arrival, Ctx, Overflow, Report, RouteAt};
use crate::net::{DropReason, PortId};

/// How the stand-in chooses among a packet's next hops.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RouteRule {
    /// The last candidate, always: all traffic between two places takes one path.
    Last,
    /// The candidate whose egress port holds the fewest bytes (the first of equals): a
    /// switch that routes by its own queue state.
    LeastQueued,
}

/// What the stand-in does: route by a rule, trim to `bytes` into queue `queue`.
#[derive(Clone, Debug, Default)]
pub struct StandInParams {
    pub route: Option<RouteRule>,
    pub trim: Option<(usize, u32)>,
}

/// The stand-in's state: what it did.
pub struct StandIn {
    p: StandInParams,
    /// Next hops it chose, and of those, ones other than ECMP's.
    pub routed: u64,
    pub rerouted: u64,
    pub trims: u64,
}

impl SwitchMechanism for StandIn {
    type Params = StandInParams;
    type Frame = Never;
    type Msg = Never;
    type Timer = Never;
    const KEY: &'static str = "stand_in";
    const CAPS: Caps = Caps::ROUTE.or(Caps::TRIM);

    fn build(p: StandInParams, f: &Fabric) -> Self {
        if let Some((q, _)) = p.trim {
            f.check_queue("stand_in.trim queue", q);
        }
        StandIn { p, routed: 0, rerouted: 0, trims: 0 }
    }

    fn caps(&self) -> Caps {
        Caps::when(self.p.route.is_some(), Caps::ROUTE).or(Caps::when(self.p.trim.is_some(), Caps::TRIM))
    }

    fn route(&mut self, r: &RouteAt, candidates: &[PortId], cx: &mut Ctx) -> Option<PortId> {
        let chosen = match self.p.route? {
            RouteRule::Last => *candidates.last().unwrap(),
            RouteRule::LeastQueued => *candidates.iter().min_by_key(|&&p| cx.egress[p as usize].bytes).unwrap(),
        };
        self.routed += 1;
        self.rerouted += (chosen != r.hashed) as u64;
        Some(chosen)
    }

    fn on_overflow(&mut self, a: &Arrival, _why: DropReason, _cx: &mut Ctx) -> Overflow {
        let Some((queue, bytes)) = self.p.trim else { return Overflow::Drop };
        self.trims += 1;
        Overflow::Trim { queue, bytes: bytes.min(a.size as u32) }
    }

    fn report(&self, r: &mut Report) {
        r.count("stand_in_routed", self.routed);
        r.count("stand_in_rerouted", self.rerouted);
        r.count("stand_in_trims", self.trims);
    }
}
