//! A test's stand-in switch mechanism for the seams no shipped mechanism uses yet: it
//! chooses next hops (`Caps::ROUTE`), trims packets the buffer cannot hold (`Caps::TRIM`)
//! and queues packets at their input port (`Admission::Held`, `Effect::Release`) by fixed
//! rules, so that the engine's side of each is exercised before adaptive routing, packet
//! trimming (issue 59) and input-queued switches (issue 58) land on them.

use super::mechanism::{Caps, Fabric, Never, SwitchMechanism};
use super::pipeline::{Admission, Arrival, Ctx, Effect, Overflow, Report, RouteAt};
use super::MechTimer;
use crate::metrics::Outputs;
use crate::net::{DropReason, PortId};
use crate::sim::{ser_time, SimTime};
use std::collections::VecDeque;

/// How the stand-in chooses among a packet's next hops.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RouteRule {
    /// The last candidate, always: all traffic between two places takes one path.
    Last,
    /// The candidate whose egress port holds the fewest bytes (the first of equals): a
    /// switch that routes by its own queue state.
    LeastQueued,
}

/// What the stand-in does: route by a rule, trim to `bytes` into queue `queue`, queue
/// every packet in one FIFO per input port of `input_fifo` bytes.
#[derive(Clone, Debug, Default)]
pub struct StandInParams {
    pub route: Option<RouteRule>,
    pub trim: Option<(usize, u32)>,
    pub input_fifo: Option<u64>,
}

/// The stand-in's state: what it did, and its input FIFOs.
pub struct StandIn {
    p: StandInParams,
    /// Next hops it chose, and of those, ones other than ECMP's.
    pub routed: u64,
    pub rerouted: u64,
    pub trims: u64,
    /// An input-queued switch: by port, the packets that came in through it, in order,
    /// and their bytes; by switch, its ports, the input its next scan starts at and the
    /// latest time a scan is due.
    fifo: Vec<VecDeque<Arrival>>,
    fifo_bytes: Vec<u64>,
    ports: Vec<Vec<PortId>>,
    next_input: Vec<usize>,
    scan_at: Vec<SimTime>,
    released: u64,
    /// With `trim`, header memory per port, as the trimmer proper has it (`trim::header_buffer`):
    /// inside a static queue's capacity, or reserved beside a shared pool.
    header_memory: u64,
}

impl StandIn {
    /// Release the head of each input of switch `sw` whose output is idle and empty (one
    /// input per output, the inputs taken in turn from a rotating start): a FIFO per input
    /// port, so a head waiting for a busy output blocks every packet behind it. Scan again
    /// when a released packet is sent, or when the first busy output is free.
    fn scan(&mut self, sw: u32, cx: &mut Ctx) {
        let ports = &self.ports[sw as usize];
        let n = ports.len();
        let start = self.next_input[sw as usize];
        self.next_input[sw as usize] = (start + 1) % n;
        let mut granted: Vec<PortId> = Vec::new();
        let mut again = SimTime::MAX;
        for k in 0..n {
            let i = ports[(start + k) % n] as usize;
            let Some(&head) = self.fifo[i].front() else { continue };
            let eg = &cx.egress[head.out as usize];
            if granted.contains(&head.out) || eg.bytes > 0 || eg.busy_until > cx.now {
                if !granted.contains(&head.out) && eg.busy_until > cx.now && eg.busy_until < SimTime::MAX {
                    again = again.min(eg.busy_until);
                }
                continue;
            }
            granted.push(head.out);
            self.fifo[i].pop_front();
            self.fifo_bytes[i] -= head.size;
            self.released += 1;
            again = again.min(cx.now + ser_time(head.size, cx.topo.ports[head.out as usize].rate_bps));
            cx.push(Effect::Release(head));
        }
        if again < SimTime::MAX && (self.scan_at[sw as usize] <= cx.now || again < self.scan_at[sw as usize]) {
            self.scan_at[sw as usize] = again;
            cx.timer(again, MechTimer::StandIn(sw));
        }
    }
}

impl SwitchMechanism for StandIn {
    type Params = StandInParams;
    type Frame = Never;
    type Msg = Never;
    /// A scan of this switch's inputs.
    type Timer = u32;
    const KEY: &'static str = "stand_in";
    const CAPS: Caps = Caps::ROUTE.or(Caps::TRIM).or(Caps::ADMIT);
    /// The stand-in's summary keys (`StandIn::report`), which only tests see.
    const OUTPUTS: Outputs = Outputs {
        flows: &[],
        ports: &[],
        summary: &[
            (&["stand_in_routed", "stand_in_rerouted"], "With the stand-in: next hops it chose, and of them those other than ECMP's"),
            (&["stand_in_trims"], "With the stand-in: packets it trimmed"),
            (&["stand_in_released"], "With the stand-in: packets its input FIFOs released to their egress queues"),
        ],
    };

    fn build(p: StandInParams, f: &Fabric) -> Self {
        if let Some((q, _)) = p.trim {
            f.check_queue("stand_in.trim queue", q);
        }
        let ports: Vec<Vec<PortId>> = f.topo.switches.iter().map(|&n| f.topo.nodes[n as usize].ports.clone()).collect();
        let (np, ns) = (f.topo.ports.len(), ports.len());
        let header_memory = super::trim::header_buffer(f.buffer, f.mtu);
        StandIn { p, routed: 0, rerouted: 0, trims: 0, fifo: vec![VecDeque::new(); np], fifo_bytes: vec![0; np], ports, next_input: vec![0; ns], scan_at: vec![SimTime::ZERO; ns], released: 0, header_memory }
    }

    /// Drawn through the seams the property tests set on the configuration (`Seams`).
    #[cfg(test)]
    fn arbitrary(_: u64, _: u8, _: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        None
    }

    fn caps(&self) -> Caps {
        Caps::when(self.p.route.is_some(), Caps::ROUTE).or(Caps::when(self.p.trim.is_some(), Caps::TRIM)).or(Caps::when(self.p.input_fifo.is_some(), Caps::ADMIT))
    }

    fn admit(&mut self, a: &mut Arrival, cx: &mut Ctx) -> Admission {
        let Some(cap) = self.p.input_fifo else { return Admission::Buffer };
        let i = a.in_port as usize;
        if !a.ingress_admitted && self.fifo_bytes[i] + a.size > cap {
            return Admission::Drop(DropReason::BufferFull, a.in_port, a.class);
        }
        a.held = true;
        self.fifo_bytes[i] += a.size;
        self.fifo[i].push_back(*a);
        self.scan(a.sw, cx);
        Admission::Held
    }

    fn on_timer(&mut self, sw: u32, cx: &mut Ctx) {
        self.scan(sw, cx);
    }

    fn timer_place(sw: u32) -> u32 {
        sw
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

    fn on_overflow(&mut self, a: &Arrival, _why: DropReason, cx: &mut Ctx) -> Overflow {
        let Some((queue, bytes)) = self.p.trim else { return Overflow::Drop };
        let bytes = bytes.min(a.size as u32);
        // a header is held in a memory of its own, as the trimmer proper holds it: a check
        // against the whole switch's memory alone let the buffer model then admit data up to
        // all of it (18,009 B in an 18,000 B switch, found by the property test)
        if !super::trim::header_room(cx, a.out, queue, bytes as u64, self.header_memory) {
            return Overflow::Drop;
        }
        self.trims += 1;
        Overflow::Trim { queue, bytes }
    }

    fn reserved_beside(&self, ports: &[PortId]) -> u64 {
        if self.p.trim.is_some() { ports.len() as u64 * self.header_memory } else { 0 }
    }

    fn report(&self, r: &mut Report) {
        r.count("stand_in_routed", self.routed);
        r.count("stand_in_rerouted", self.rerouted);
        r.count("stand_in_trims", self.trims);
        r.count("stand_in_released", self.released);
    }
}
