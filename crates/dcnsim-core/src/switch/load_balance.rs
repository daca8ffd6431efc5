//! Switch load balancing beyond per-flow ECMP (`switch.load_balance`): the switch chooses
//! each packet's next hop among the equal-cost ones by its own state, on the routing seam
//! (`SwitchMechanism::route`). Two kinds:
//! - `flowlet`: flowlet switching (Kandula et al., "Dynamic load balancing without packet
//!   reordering", CCR 37(2), 2007; LetFlow, Vanini et al., NSDI 2017, sec. 3). A packet of
//!   a flow (its entropy, `Packet::hash`) whose previous packet went through this switch
//!   more than `gap` ago starts a new flowlet, which takes a next hop of its own: uniformly
//!   at random (`choose = "random"`, LetFlow) or the one whose egress queue holds the
//!   fewest bytes (`"least_queued"`, a local reading of CONGA's choice, Alizadeh et al.,
//!   SIGCOMM 2014, without its remote congestion feedback); later packets of the flowlet
//!   follow it. With a gap above the flows' pauses, each flow keeps one path; with a gap of
//!   0, each packet is routed on its own.
//! - `adaptive`: every packet takes the next hop whose egress queue holds the fewest bytes
//!   (uniformly among equals): per-packet adaptive routing on local queue state, DRILL
//!   (Ghorbani et al., SIGCOMM 2017, sec. 3) with every next hop sampled and no memory. It
//!   sees only this switch's queues: a congested link further on is not seen.
//!
//! Readings: the flowlet table is exact (one entry per flow entropy seen at the switch, no
//! hash collisions, where a hardware table indexed by a hash of the flow has a few); a flowlet's
//! port that is no longer a next hop (a link failed and the routes moved) starts a new
//! flowlet; the queue compared is the egress port's bytes in every class.

use super::mechanism::{Caps, Fabric, Never, SwitchMechanism};
use super::pipeline::{Ctx, Report, RouteAt};
use crate::metrics::Outputs;
use crate::net::PortId;
use crate::sim::error::{err, ScenarioError};
use crate::sim::units::Duration;
use crate::sim::SimTime;
use rand::Rng as _;
use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The flowlet timeout where none is given: of the order of those CONGA's and LetFlow's
/// evaluations use for TCP (hundreds of microseconds), many round trips of a data center.
pub const DEFAULT_FLOWLET_GAP: SimTime = SimTime::from_us(500);

/// Which load balancing (module doc).
#[derive(Deserialize, Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BalanceKind {
    /// A next hop per flowlet.
    Flowlet,
    /// A next hop per packet, by the egress queues.
    Adaptive,
}

/// How a new flowlet picks its next hop.
#[derive(Deserialize, Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FlowletChoice {
    /// Uniformly at random (LetFlow).
    #[default]
    Random,
    /// The one whose egress queue holds the fewest bytes.
    LeastQueued,
}

/// `switch.load_balance`: switch-side load balancing over the equal-cost next hops, by
/// flowlet or per packet (switch/load_balance.rs).
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct LoadBalanceConfig {
    /// "flowlet" (a next hop per flowlet; LetFlow) or "adaptive" (each packet to the least
    /// queued next hop; DRILL). Required.
    pub kind: BalanceKind,
    /// "flowlet" only: the idle time after which a flow's next packet starts a new flowlet.
    /// Default {default} (of the order of CONGA's and LetFlow's for TCP); >= 0.
    #[schemars(default = "d_gap")]
    pub gap: Option<Duration>,
    /// "flowlet" only: how a new flowlet picks its next hop, "random" or "least_queued".
    /// Default {default}.
    #[schemars(default = "d_choose")]
    pub choose: Option<FlowletChoice>,
}

// The documented defaults (the doc comments' `{default}`); `kind` has none.
fn d_gap() -> Option<Duration> {
    Some(Duration(DEFAULT_FLOWLET_GAP))
}
fn d_choose() -> Option<FlowletChoice> {
    Some(FlowletChoice::Random)
}

impl LoadBalanceConfig {
    /// Refuse keys of the other kind.
    pub fn check(&self) -> Result<(), ScenarioError> {
        if self.kind == BalanceKind::Adaptive {
            for (k, given) in [("gap", self.gap.is_some()), ("choose", self.choose.is_some())] {
                if given {
                    return Err(err(format!("switch.load_balance.{k}"), "only with kind = \"flowlet\" (kind = \"adaptive\" routes every packet on its own)"));
                }
            }
        }
        Ok(())
    }

    pub fn params(&self) -> LoadBalanceParams {
        LoadBalanceParams { kind: self.kind, gap: self.gap.map_or(DEFAULT_FLOWLET_GAP, |d| d.0), choose: self.choose.unwrap_or_default() }
    }
}

/// `switch.load_balance` resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadBalanceParams {
    pub kind: BalanceKind,
    pub gap: SimTime,
    pub choose: FlowletChoice,
}

/// The load balancer of every switch.
pub struct LoadBalance {
    p: LoadBalanceParams,
    /// By switch: flow entropy -> (its last packet's time, its flowlet's port).
    flowlets: Vec<FxHashMap<u32, (SimTime, PortId)>>,
    /// Packets it routed (at a switch with more than one next hop for them), flowlets
    /// started, and next hops chosen other than ECMP's.
    routed: u64,
    started: u64,
    moved: u64,
}

impl LoadBalance {
    /// The candidate whose egress queue holds the fewest bytes, drawn uniformly among equals
    /// (as DRILL breaks ties): at light load every queue is empty, and a fixed pick would
    /// put each flow back on one path.
    fn least_queued(sw: u32, candidates: &[PortId], cx: &mut Ctx) -> PortId {
        let bytes = |p: PortId| cx.egress[p as usize].bytes;
        let least = candidates.iter().map(|&p| bytes(p)).min().unwrap_or(0);
        let ties = candidates.iter().filter(|&&p| bytes(p) == least).count();
        let k = if ties > 1 { cx.switches[sw as usize].rng.gen_range(0..ties) } else { 0 };
        candidates.iter().copied().filter(|&p| bytes(p) == least).nth(k).unwrap_or(candidates[0])
    }
}

impl SwitchMechanism for LoadBalance {
    type Params = LoadBalanceParams;
    type Frame = Never;
    type Msg = Never;
    type Timer = Never;
    const KEY: &'static str = "load_balance";
    const CAPS: Caps = Caps::ROUTE;
    /// The load balancer's summary keys (`LoadBalance::report`).
    const OUTPUTS: Outputs = Outputs {
        flows: &[],
        ports: &[],
        summary: &[
            (&["flowlets"], "With switch.load_balance kind \"flowlet\": flowlets started (a flow's packet after a gap, at each switch with more than one next hop)"),
            (&["load_balance_moved"], "With switch.load_balance: packets sent to a next hop other than per-flow ECMP's"),
        ],
    };

    fn build(p: LoadBalanceParams, f: &Fabric) -> Self {
        LoadBalance { p, flowlets: vec![FxHashMap::default(); f.topo.switches.len()], routed: 0, started: 0, moved: 0 }
    }

    /// Flowlets with a gap of 0, 20 us or 500 us, chosen at random or by queue, or
    /// per-packet adaptive routing.
    #[cfg(test)]
    fn arbitrary(draw: u64, _: u8, _: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        use crate::switch::mechanism::{bits, Arbitrary};
        let line = match bits(draw, 0, 2) {
            0 => "load_balance = { kind = \"adaptive\" }".to_string(),
            k => format!("load_balance = {{ kind = \"flowlet\", gap = \"{}us\", choose = \"{}\" }}", [0, 20, 500][k as usize - 1], ["random", "least_queued"][bits(draw, 2, 1) as usize]),
        };
        Some(Arbitrary { line, without: &[] })
    }

    fn route(&mut self, r: &RouteAt, candidates: &[PortId], cx: &mut Ctx) -> Option<PortId> {
        let chosen = match self.p.kind {
            BalanceKind::Adaptive => Self::least_queued(r.sw, candidates, cx),
            BalanceKind::Flowlet => {
                let now = cx.now;
                let table = &mut self.flowlets[r.sw as usize];
                match table.get_mut(&r.hash) {
                    Some((last, port)) if now - *last <= self.p.gap && candidates.contains(port) => {
                        *last = now;
                        *port
                    }
                    _ => {
                        self.started += 1;
                        let port = match self.p.choose {
                            FlowletChoice::Random => candidates[cx.switches[r.sw as usize].rng.gen_range(0..candidates.len())],
                            FlowletChoice::LeastQueued => Self::least_queued(r.sw, candidates, cx),
                        };
                        self.flowlets[r.sw as usize].insert(r.hash, (now, port));
                        port
                    }
                }
            }
        };
        self.routed += 1;
        self.moved += (chosen != r.hashed) as u64;
        Some(chosen)
    }

    fn report(&self, r: &mut Report) {
        if self.p.kind == BalanceKind::Flowlet {
            r.count("flowlets", self.started);
        }
        r.count("load_balance_moved", self.moved);
        // a fabric with one path between every two hosts (a dumbbell, one switch) gives it
        // no choice to make
        r.acted("switch.load_balance", "packets routed among equal-cost next hops", self.routed);
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{build_adjusted, Document, RunOptions};

    /// Bad tables are refused naming the key, the value and what was expected.
    #[test]
    fn bad_tables_are_refused_naming_the_key() {
        for (table, says) in [
            ("load_balance = { kind = \"adaptive\", gap = \"10us\" }", "switch.load_balance.gap"),
            ("load_balance = { kind = \"adaptive\", choose = \"random\" }", "switch.load_balance.choose"),
            ("load_balance = { kind = \"flowlet\", choose = \"best\" }", "best"),
            ("load_balance = { kind = \"spray\" }", "spray"),
            ("load_balance = { gap = \"10us\" }", "kind"),
        ] {
            let text = format!(
                "[scenario]\nname = \"lb\"\n[topology]\nkind = \"clos2\"\nservers_per_tor = 1\ntors = 2\nspines = 2\nhost_link = {{ rate = \"10Gbps\", delay = \"1us\" }}\n\
                 [switch]\n{table}\n[[workload]]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 1, size = \"10KB\" }}]\n"
            );
            let e = match Document::from_toml(&text).and_then(|d| d.resolve(None)).and_then(|s| build_adjusted(&s, &RunOptions::default(), |_, _| {}).map(|_| ())) {
                Ok(()) => panic!("accepted: {table}"),
                Err(e) => e.to_string(),
            };
            assert!(e.contains(says), "{table}: {e}");
        }
    }
}
