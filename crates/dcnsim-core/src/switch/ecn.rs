//! ECN marking on the instantaneous queue: RED's linear ramp (Floyd &
//! Jacobson, IEEE/ACM ToN 1993) with the DCQCN convention of marking every
//! packet above `high` (Zhu et al., SIGCOMM 2015, Kmin/Kmax/Pmax), and
//! DCTCP's step marking at K as the low == high case (Alizadeh et al., 2010).

use super::mechanism::{Caps, Fabric, Never, SwitchMechanism, Verdict};
use super::pipeline::{AqmAction, Arrival, Ctx, Departure, Report, EGRESS_DEPTH};
use crate::metrics::Outputs;
use crate::net::{DropReason, PktKind};
use rand::Rng as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The ramp's marking probability at `high` unless the scenario says (DCQCN's Pmax as the
/// step marks: every packet above the threshold), and whether a selected packet that is not
/// ECN-capable is dropped (no: RFC 3168 leaves it to tail drop).
pub const DEFAULT_PMAX: f64 = 1.0;
pub const DEFAULT_DROP_NON_ECT: bool = false;
/// Where the step and ramp markers judge a packet unless the scenario says: as it joins its
/// queue, on the depth it finds (ns-3's RED queue disc and DCTCP's description).
pub const DEFAULT_MARK_AT: MarkAt = MarkAt::Enqueue;
/// Which ports the step and ramp markers judge unless the scenario says: every switch port.
pub const DEFAULT_MARK_PORTS: MarkPorts = MarkPorts::All;

/// When the step and ramp markers judge a packet (`switch.aqm.at`): as it joins its queue
/// or as it leaves it. A mark at dequeue reports the queue as the packet departs, not as
/// it was a queueing delay earlier (Wu et al., "Tuning ECN for Data Center Networks",
/// CoNEXT 2012: dequeue marking).
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum MarkAt {
    /// As it arrives, on the depth of the queue it joins (DCTCP's description, Alizadeh et
    /// al., SIGCOMM 2010, sec. 3.1; ns-3's RED queue disc).
    Enqueue,
    /// As it leaves, on the depth it leaves behind, as the UEC's htsim marks
    /// (`CompositeQueue::completeService`: `decide_ECN` once the packet's bytes left
    /// `_queuesize_low`) and many switch ASICs can.
    Dequeue,
}

/// Which switch ports the step and ramp markers judge (`switch.aqm.ports`).
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum MarkPorts {
    /// Every switch port, a ToR's downlinks to its hosts too.
    All,
    /// Only ports toward another switch: a ToR's downlinks never mark, as the UEC's htsim
    /// builds a fabric for receiver-driven congestion control (RCCC, alone or with NSCC:
    /// `main_uec.cpp`, `set_ecn_parameters(true, !receiver_driven, ..)`, "enable on tor
    /// downlink"), where the receiver's pulls pace the last hop.
    Fabric,
}

/// The ECN marker of every switch queue (`switch.aqm` kinds "ramp" and "step"): RED's ramp
/// (or DCTCP's step) on the instantaneous depth of the queue a packet joins, drawn from the switch's stream. A
/// packet it selects is CE-marked when ECN-capable (ECT(0) and ECT(1) alike); otherwise it
/// passes, or with `drop_non_ect` is dropped unless its class is lossless.
#[derive(Clone, Debug)]
pub struct EcnMarker {
    pub red: Red,
    pub drop_non_ect: bool,
    pub ports: MarkPorts,
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
        if self.ports == MarkPorts::Fabric && spares(cx.topo, a.out) {
            return AqmAction::Pass;
        }
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

/// A fabric-only marker (`MarkPorts::Fabric`) spares `port`: it leads to a host. Out of
/// line: the default marker judges every port, and this lookup inlined into the hop's
/// marking stage cost the k = 8 bench 3-4% of its wall time (1.037 against fac11ab, 16
/// alternating pairs; out of line 1.018). It takes the topology, not the context: a
/// reference to the context made every hop build all of it in memory, where the marker
/// reads two of its fields (k = 8 bench: 3.5% of the run's instructions, 30 a hop).
#[cold]
#[inline(never)]
fn spares(topo: &crate::net::Topology, port: crate::net::PortId) -> bool {
    topo.peer_is_host(port)
}

impl EcnMarker {
    /// The marker at dequeue (`MarkAt::Dequeue`; run by `switch.aqm`'s stage, aqm/mod.rs):
    /// a data packet leaving its queue is judged on the bytes the queue still holds, and
    /// CE-marked if ECN-capable. Trimmed headers and the transports' control packets pass,
    /// as they do at enqueue (the trimmer exempts them; none is ECN-capable). It marks only:
    /// `drop_non_ect` is refused with it (scenario/mechanisms/aqm.rs).
    #[inline]
    pub fn on_departure(&self, d: &Departure, cx: &mut Ctx) -> Verdict {
        let p = cx.pkts.get(d.pkt);
        if p.kind != PktKind::Data || !p.ecn.is_ect() || (self.ports == MarkPorts::Fabric && spares(cx.topo, d.port)) {
            return Verdict::Send;
        }
        if self.red.decide(cx.queue_bytes(d.port, d.queue), &mut cx.switches[d.sw as usize].rng) {
            Verdict::Mark
        } else {
            Verdict::Send
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

    /// `ports = "fabric"`: a port toward a host (a ToR's downlink) never marks, at enqueue
    /// or at dequeue, however deep its queue; a port toward a switch marks as with "all".
    #[test]
    fn a_fabric_only_marker_leaves_the_downlinks_to_hosts_unmarked() {
        use crate::sim::SimTime;
        use crate::switch::bench::Bench;
        let mut b = Bench::new();
        let red = Red { low: 10_000, high: 10_000, pmax: 1.0 };
        let (from_h1, to_h0, to_right) = (b.port("left", "h1"), b.port("left", "h0"), b.port("left", "right"));
        for (ports, out, want) in [
            (MarkPorts::All, to_h0, true),
            (MarkPorts::All, to_right, true),
            (MarkPorts::Fabric, to_h0, false),
            (MarkPorts::Fabric, to_right, true),
        ] {
            let mut m = EcnMarker { red: red.clone(), drop_non_ect: false, ports };
            let a = b.data(1, 1, 0, from_h1, out, 50_000);
            let on_arrival = m.on_arrival(&a, true, &mut b.cx(SimTime::from_us(1)));
            assert_eq!(on_arrival == AqmAction::Mark, want, "{ports:?} at enqueue, out {out}");
            let d = Departure { sw: a.sw, port: out, queue: 0, pkt: a.pkt, size: 1086, flow: 1, in_port: from_h1, tc: 0, enq: SimTime::ZERO };
            let on_departure = m.on_departure(&d, &mut b.cx(SimTime::from_us(1)));
            assert_eq!(on_departure == Verdict::Mark, want, "{ports:?} at dequeue, out {out}");
        }
    }

    /// At dequeue the step judges the bytes a packet leaves behind: above K it marks an
    /// ECN-capable data packet, at K it does not; a non-ECT packet and a trimmed header
    /// pass whatever the queue holds.
    #[test]
    fn at_dequeue_the_step_judges_the_depth_left_behind() {
        use crate::net::Ecn;
        use crate::sim::SimTime;
        use crate::switch::bench::Bench;
        let mut b = Bench::new();
        let m = EcnMarker { red: Red { low: 10_000, high: 10_000, pmax: 1.0 }, drop_non_ect: false, ports: MarkPorts::All };
        let (inp, out) = (b.port("left", "h0"), b.port("left", "right"));
        for (left_behind, ecn, kind, want) in [
            (10_001, Ecn::Ect0, PktKind::Data, Verdict::Mark),
            (10_000, Ecn::Ect0, PktKind::Data, Verdict::Send),
            (0, Ecn::Ect1, PktKind::Data, Verdict::Send),
            (50_000, Ecn::Ect1, PktKind::Data, Verdict::Mark),
            (50_000, Ecn::NotEct, PktKind::Data, Verdict::Send),
            (50_000, Ecn::Ect0, PktKind::Trimmed, Verdict::Send),
        ] {
            let a = b.data(1, 0, 2, inp, out, left_behind);
            let p = b.pkts.get_mut(a.pkt);
            (p.ecn, p.kind) = (ecn, kind);
            let d = Departure { sw: a.sw, port: out, queue: 0, pkt: a.pkt, size: 1086, flow: 1, in_port: inp, tc: 0, enq: SimTime::ZERO };
            assert_eq!(m.on_departure(&d, &mut b.cx(SimTime::from_us(1))), want, "{left_behind} B behind, {ecn:?} {kind:?}");
        }
    }
}
