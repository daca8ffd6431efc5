//! The DualQ Coupled AQM, DualPI2 (RFC 9332; Linux sch_dualpi2 as the L4S team's
//! `sch_dualpi2.c` runs it): one egress port, two queues, L (scalable traffic: ECT(1) and
//! CE) and Classic (everything else), one PI2 controller coupling them.
//!
//! * Classifier: an ECT(1) or CE packet goes to the L queue (`l_queue`, default 1), any other
//!   to the Classic queue (`c_queue`, default 0). The port needs `switch.queues = 2`; the
//!   scheduler between them is the switch's: sch_dualpi2's byte-credit WRR with the Classic
//!   weight at 10% is `scheduler = "dwrr"` with weights [1, 9] (the shipped scenarios);
//!   `"strict"` gives the L queue strict priority, the seed 002 (2015) DualQ's scheduler.
//! * Controller: every `tupdate` the port's p' is updated from the larger of the two
//!   queues' head sojourn times (sch_dualpi2's `max(qdelay_c, qdelay_l)`), incrementally as
//!   in PI2 (`switch/aqm/pi2.rs`), with the same defaults (target 15 ms, alpha 0.16, beta 3.2).
//! * Coupling (RFC 9332 sec. 2.4): Classic packets are selected with p_C = p'^2 (marked if
//!   ECN-capable, else dropped); L packets are marked with p_CL = k p' (coupling factor `k`,
//!   default 2: window fairness with Reno at equal RTTs). Overload: once k p' exceeds 1, L
//!   packets are dropped with p'^2 instead (sch_dualpi2's `drop_overload`) and ECN-capable
//!   Classic packets are dropped rather than marked.
//! * Native L AQM: an L packet leaving after waiting more than `step` (default 1 ms) is
//!   CE-marked (the step threshold in time). sch_dualpi2 skips the step for a packet that
//!   found the L queue empty (`apply_step`); it is applied to every L packet here.
//! * Nothing is dropped or marked while the port holds less than two MTUs (sch_dualpi2's
//!   `must_drop` floor, RED's min_th in spirit).
//! * Decisions are taken at enqueue (sch_dualpi2's `drop_early`; its default decides at
//!   dequeue with the probability of that moment), the step at dequeue.

use super::select;
use super::pi2::{head_sojourn, Clocks, Controller, Pi2Params, Update};
use crate::switch::pipeline::{AqmAction, Arrival, Ctx, Departure};
use crate::net::DropReason;
use crate::net::Ecn;
use crate::sim::SimTime;
use rand::Rng as _;

/// Linux sch_dualpi2 / RFC 9332 defaults beyond PI2's.
pub const DEFAULT_K: f64 = 2.0;
pub const DEFAULT_STEP: SimTime = SimTime::from_ms(1);
pub const DEFAULT_L_QUEUE: u8 = 1;
pub const DEFAULT_C_QUEUE: u8 = 0;

/// DualPI2's parameters (`switch.aqm` with `kind = "dualpi2"`).
#[derive(Clone, Debug)]
pub struct DualPi2Params {
    pub pi2: Pi2Params,
    pub k: f64,
    pub step: SimTime,
    pub l_queue: usize,
    pub c_queue: usize,
    /// Two full-size packets: the port backlog below which nothing is selected.
    pub floor: u64,
}

/// DualPI2 on every switch egress port.
#[derive(Clone, Debug)]
pub struct DualPi2 {
    pub p: DualPi2Params,
    state: Vec<Controller>,
    clocks: Clocks,
    /// Per port: L packets CE-marked by the step, by the coupling, and L packets dropped
    /// on overload.
    pub step_marks: Vec<u64>,
    pub coupled_marks: Vec<u64>,
}

impl DualPi2 {
    pub fn new(p: DualPi2Params, ports: usize, switches: usize) -> DualPi2 {
        let clocks = Clocks::new(switches, p.pi2.tupdate);
        DualPi2 { p, state: vec![Controller::default(); ports], clocks, step_marks: vec![0; ports], coupled_marks: vec![0; ports] }
    }

    /// The port's p' (tests).
    pub fn p_prime(&self, port: u32) -> f64 {
        self.state[port as usize].p
    }

    /// classify: ECT(1) and CE to the L queue.
    pub fn classify(&self, a: &mut Arrival) {
        a.queue = if matches!(a.ecn, Ecn::Ect1 | Ecn::Ce) { self.p.l_queue } else { self.p.c_queue };
    }

    pub fn on_arrival(&mut self, a: &Arrival, ect: bool, cx: &mut Ctx) -> AqmAction {
        self.clocks.start(a.sw, cx);
        if cx.egress[a.out as usize].bytes < self.p.floor {
            return AqmAction::Pass;
        }
        let p = self.state[a.out as usize].p;
        let kp = self.p.k * p;
        let overload = kp > 1.0;
        let rng = &mut cx.switches[a.sw as usize].rng;
        if a.queue == self.p.l_queue {
            if overload {
                if rng.gen::<f64>() < p * p {
                    return if a.lossless { AqmAction::Pass } else { AqmAction::Drop(DropReason::Aqm) };
                }
                self.coupled_marks[a.out as usize] += 1;
                return AqmAction::Mark;
            }
            if kp > 0.0 && rng.gen::<f64>() < kp {
                self.coupled_marks[a.out as usize] += 1;
                return AqmAction::Mark;
            }
            return AqmAction::Pass;
        }
        select(p * p, ect && !overload, a.lossless, rng)
    }

    /// on_dequeue: the step threshold on L packets' sojourn time. Whether to CE-mark the
    /// departing packet: the engine marks it and counts the mark on its queue, with every
    /// other AQM mark (ports' and summary's `ecn_marks`).
    pub fn on_dequeue(&mut self, d: &Departure, cx: &mut Ctx) -> bool {
        if d.queue == self.p.l_queue && cx.now - d.enq > self.p.step {
            let pkt = cx.pkts.get(d.pkt);
            if pkt.ecn.is_ect() && !pkt.ecn.is_ce() {
                self.step_marks[d.port as usize] += 1;
                return true;
            }
        }
        false
    }

    /// The update timer of switch `sw`.
    pub fn on_timer(&mut self, t: Update, cx: &mut Ctx) {
        let node = cx.topo.switches[t.sw as usize];
        let mut busy = false;
        for &port in &cx.topo.nodes[node as usize].ports {
            let queues = cx.port_queues.of(port);
            let qdelay = head_sojourn(&queues[self.p.c_queue], cx).max(head_sojourn(&queues[self.p.l_queue], cx));
            let s = &mut self.state[port as usize];
            s.update(&self.p.pi2, qdelay);
            busy |= s.p > 0.0 || cx.egress[port as usize].bytes > 0;
        }
        self.clocks.next(t, busy, cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::bench::Bench;
    use crate::switch::aqm::pi2::{DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_TARGET, DEFAULT_TUPDATE};

    fn dual(b: &Bench) -> DualPi2 {
        let p = DualPi2Params {
            pi2: Pi2Params { target: DEFAULT_TARGET, tupdate: DEFAULT_TUPDATE, alpha: DEFAULT_ALPHA, beta: DEFAULT_BETA },
            k: DEFAULT_K,
            step: DEFAULT_STEP,
            l_queue: 1,
            c_queue: 0,
            floor: 3000,
        };
        DualPi2::new(p, b.topo.ports.len(), 2)
    }

    /// The fraction of `n` arrivals with codepoint `ecn` that are marked and dropped at p'.
    fn fractions(p_prime: f64, ecn: Ecn, n: u32) -> (f64, f64) {
        let mut b = Bench::with_queues(2);
        let mut d = dual(&b);
        let (inp, out) = (b.port("left", "h0"), b.port("left", "right"));
        d.state[out as usize].p = p_prime;
        let (mut marked, mut dropped) = (0, 0);
        for _ in 0..n {
            let mut a = b.data(1, 0, 2, inp, out, 10_000);
            b.egress[out as usize].bytes = 10_000;
            a.ecn = ecn;
            d.classify(&mut a);
            assert_eq!(a.queue, if matches!(ecn, Ecn::Ect1 | Ecn::Ce) { 1 } else { 0 });
            match d.on_arrival(&a, ecn.is_ect(), &mut b.cx(SimTime::ZERO)) {
                AqmAction::Mark => marked += 1,
                AqmAction::Drop(_) => dropped += 1,
                AqmAction::Pass => {}
            }
        }
        (marked as f64 / n as f64, dropped as f64 / n as f64)
    }

    /// RFC 9332's coupling: at p' = 0.1, L packets (ECT(1)) are marked with k p' = 0.2,
    /// Classic ECN-capable packets (ECT(0)) marked and not-ECT ones dropped with p'^2 = 0.01;
    /// on overload (k p' > 1, p' = 0.6) L packets are dropped with p'^2 = 0.36 and marked
    /// otherwise, and ECN-capable Classic packets are dropped, not marked. Each within 5% over
    /// 200,000 arrivals.
    #[test]
    fn coupled_probabilities_and_overload() {
        let close = |x: f64, want: f64| (x / want - 1.0).abs() < 0.05;
        let (m, d) = fractions(0.1, Ecn::Ect1, 200_000);
        assert!(close(m, 0.2) && d == 0.0, "{m} {d}");
        let (m, d) = fractions(0.1, Ecn::Ect0, 200_000);
        assert!(close(m, 0.01) && d == 0.0, "{m} {d}");
        let (m, d) = fractions(0.1, Ecn::NotEct, 200_000);
        assert!(m == 0.0 && close(d, 0.01), "{m} {d}");
        let (m, d) = fractions(0.6, Ecn::Ect1, 200_000);
        assert!(close(d, 0.36) && close(m, 0.64), "{m} {d}");
        let (m, d) = fractions(0.6, Ecn::Ect0, 200_000);
        assert!(m == 0.0 && close(d, 0.36), "{m} {d}");
    }

    /// Nothing is selected below two MTUs of backlog; the step marks an L packet that waited
    /// more than 1 ms, not one that waited less, and never a Classic one.
    #[test]
    fn floor_and_step() {
        let mut b = Bench::with_queues(2);
        let mut d = dual(&b);
        let (inp, out) = (b.port("left", "h0"), b.port("left", "right"));
        d.state[out as usize].p = 1.0;
        let a = b.data(1, 0, 2, inp, out, 0);
        b.egress[out as usize].bytes = 2999;
        assert_eq!(d.on_arrival(&a, true, &mut b.cx(SimTime::ZERO)), AqmAction::Pass);
        for (queue, waited_us, marked) in [(1, 1001, true), (1, 999, false), (0, 5000, false)] {
            let a = b.data(1, 0, 2, inp, out, 0);
            b.pkts.get_mut(a.pkt).ecn = Ecn::Ect1;
            let dep = Departure { sw: 0, port: out, queue, pkt: a.pkt, size: 1086, flow: 1, in_port: inp, tc: 0, enq: SimTime::ZERO };
            assert_eq!(d.on_dequeue(&dep, &mut b.cx(SimTime::from_us(waited_us))), marked, "queue {queue}, {waited_us} us");
        }
        assert_eq!(d.step_marks[out as usize], 1);
    }
}
