//! FQ-CoDel (RFC 8290, "The Flow Queue CoDel Packet Scheduler and Active Queue Management
//! Algorithm", 2018) on every switch egress queue, with CoDel (RFC 8289) on each flow queue,
//! as Linux `sch_fq_codel.c` / `include/net/codel_impl.h` run it.
//!
//! Each egress queue (traffic class) of a switch port is split into `flows` flow queues by
//! the packet's flow hash. A deficit round robin serves them (RFC 8290 sec. 4.2): a flow
//! queue that turns active joins the new-flows list with a quantum of credit, the new
//! flows are served before the old ones, a queue out of credit gets another quantum and
//! goes to the end of the old list, and an empty queue leaves (or, from the new list while
//! old flows wait, goes to the end of the old list). CoDel decides at dequeue on the
//! packet's sojourn time: once the sojourn has stayed at or above `target` for an
//! `interval` (and the port's queue holds more than an MTU), it drops (or, for ECN-capable
//! packets with `ecn`, CE-marks) and keeps doing so at intervals of interval / sqrt(count)
//! until the sojourn falls below target (RFC 8289 sec. 5).
//!
//! Readings and simplifications (docs/mechanisms.md):
//! * The control law is the exact interval / sqrt(count) of RFC 8289 sec. 5.5; Linux
//!   approximates 1/sqrt with a Newton step.
//! * Time comparisons as Linux: the first drop comes when `now` is strictly past
//!   first_above_time; the next ones at or after drop_next.
//! * Overflow is the switch's buffer model refusing the arriving packet (tail drop), not
//!   fq_codel's drop from the head of the fattest flow queue (RFC 8290 sec. 4.1).
//! * A flow queue is picked from the egress queue in order: the packet that leaves is the
//!   first of its flow queue in arrival order (a scan of the queue, so a deep queue costs
//!   its depth per departure).
//! * The flow hash is the packet's ECMP hash, mixed (flows that ECMP put on one port share
//!   hash bits) and scaled to `flows` as Linux's reciprocal_scale, with no perturbation.

use super::mechanism::{Caps, Fabric, Never, SwitchMechanism, Verdict};
use super::pipeline::{Arrival, Better, Ctx, Departure, Report};
use crate::metrics::Outputs;
use crate::net::{DropReason, PktQueue};
use crate::net::{PacketArena, PortId};
use crate::sim::units::{Bytes, Duration};
use crate::sim::error::{err, ScenarioError};
use crate::sim::rng::mix64;
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Defaults: RFC 8289 sec. 4.3-4.4 (target 5 ms, interval 100 ms), RFC 8290 sec. 5.1 (1024
/// flow queues, a quantum of one MTU), ECN marking on as in Linux's fq_codel.
pub const DEFAULT_TARGET: SimTime = SimTime(5_000_000_000);
pub const DEFAULT_INTERVAL: SimTime = SimTime(100_000_000_000);
pub const DEFAULT_FLOWS: u32 = 1024;
pub const DEFAULT_ECN: bool = true;
/// Most flow queues per egress queue (Linux: 65536).
pub const MAX_FLOWS: u32 = 65_536;

/// `switch.fq_codel`: FQ-CoDel on every switch egress queue (RFC 8290; see
/// switch/fq_codel.rs). It replaces the queue's AQM, reorders packets across flows and drops
/// at dequeue, so it runs without `switch.aqm`, `switch.ci`, `switch.drc` and lossless PFC.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "FqCodelConfig::defaults")]
pub struct FqCodelConfig {
    /// CoDel's target sojourn time. Default {default} (RFC 8289 sec. 4.4, an Internet path:
    /// a fabric wants microseconds); > 0.
    pub target: Option<Duration>,
    /// CoDel's interval, about a worst-case round trip. Default {default} (RFC 8289 sec.
    /// 4.3); > 0.
    pub interval: Option<Duration>,
    /// Flow queues per switch egress queue. Default {default} (RFC 8290 sec. 5.1); 1..65536.
    pub flows: Option<u32>,
    /// Deficit round robin quantum. Default: the MTU (RFC 8290 sec. 5.1); > 0.
    pub quantum: Option<Bytes>,
    /// CE-mark ECN-capable packets instead of dropping them. Default {default} (Linux).
    pub ecn: Option<bool>,
}

impl FqCodelConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        FqCodelConfig {
            target: Some(Duration(DEFAULT_TARGET)),
            interval: Some(Duration(DEFAULT_INTERVAL)),
            flows: Some(DEFAULT_FLOWS),
            ecn: Some(DEFAULT_ECN),
            ..Default::default()
        }
    }

    /// Refuse values out of range and the mechanisms FQ-CoDel cannot run beside
    /// (`configured`: whether the scenario gives the table `switch.<key>`).
    pub fn check(&self, configured: impl Fn(&str) -> bool) -> Result<(), ScenarioError> {
        for (key, d) in [("target", self.target), ("interval", self.interval)] {
            if d.is_some_and(|d| d.0 == SimTime::ZERO) {
                return Err(err(format!("switch.fq_codel.{key}"), "invalid value 0, expected a duration > 0"));
            }
        }
        if let Some(n) = self.flows.filter(|n| !(1..=MAX_FLOWS).contains(n)) {
            return Err(err("switch.fq_codel.flows", format!("invalid value {n}, expected 1..{MAX_FLOWS} flow queues")));
        }
        if self.quantum.is_some_and(|q| q.0 == 0) {
            return Err(err("switch.fq_codel.quantum", "invalid value 0 B, expected a size > 0"));
        }
        let beside = [
            ("aqm", configured("aqm"), "both would mark or drop in the same queue"),
            ("ci", configured("ci"), "CI holds a queue's head, which FQ-CoDel reorders"),
            ("drc", configured("drc"), "both reorder a queue"),
            ("pfc", configured("pfc"), "FQ-CoDel drops at dequeue, which a lossless class must not"),
        ];
        match beside.into_iter().find(|b| b.1) {
            Some((key, _, why)) => Err(err("switch.fq_codel", format!("cannot run with switch.{key}: {why}; remove one of them"))),
            None => Ok(()),
        }
    }

    /// Bytes one switch egress queue may hold for its flow queues (made at its first packet).
    pub fn memory_per_queue(&self) -> u64 {
        self.flows.unwrap_or(DEFAULT_FLOWS) as u64 * std::mem::size_of::<FlowQueue>() as u64 + std::mem::size_of::<Sched>() as u64
    }

    /// The parameters, defaults filled in (`mtu`: the fabric's largest frame on the wire).
    pub fn params(&self, mtu: u32) -> FqCodelParams {
        FqCodelParams {
            target: self.target.map_or(DEFAULT_TARGET, |d| d.0),
            interval: self.interval.map_or(DEFAULT_INTERVAL, |d| d.0),
            flows: self.flows.unwrap_or(DEFAULT_FLOWS),
            quantum: self.quantum.map_or(mtu as u64, |q| q.0),
            ecn: self.ecn.unwrap_or(DEFAULT_ECN),
        }
    }
}

/// FQ-CoDel's parameters as the scenario resolved them.
#[derive(Clone, Debug, PartialEq)]
pub struct FqCodelParams {
    pub target: SimTime,
    pub interval: SimTime,
    pub flows: u32,
    pub quantum: u64,
    pub ecn: bool,
}

/// Where a CoDel decision stands between two departures of its flow queue: after a drop,
/// the next packet of the queue belongs to the same dequeue (Linux's loop in
/// `codel_dequeue`), which the engine runs as one more departure at the same time.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Start,
    /// The packet before was dropped on entering the dropping state.
    AfterFirstDrop,
    /// The packet before was dropped in the dropping state.
    InLoop,
}

/// One flow queue's CoDel state (RFC 8289 sec. 5; Linux `struct codel_vars`).
#[derive(Clone, Debug, Default)]
struct Codel {
    first_above: Option<SimTime>,
    drop_next: SimTime,
    count: u32,
    lastcount: u32,
    dropping: bool,
    phase: Phase,
}

impl Codel {
    /// `codel_should_drop`: whether the sojourn has stayed at or above target for an interval.
    fn should_drop(&mut self, p: &FqCodelParams, now: SimTime, sojourn: SimTime, backlog: u64, mtu: u64) -> bool {
        if sojourn < p.target || backlog <= mtu {
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + p.interval);
                false
            }
            Some(t) => now > t,
        }
    }

    /// interval / sqrt(count) after `t`.
    fn control_law(p: &FqCodelParams, t: SimTime, count: u32) -> SimTime {
        t + SimTime((p.interval.0 as f64 / (count.max(1) as f64).sqrt()) as u64)
    }

    /// A drop in the dropping state, or a mark in its place.
    fn next_drop(&mut self, p: &FqCodelParams, ect: bool) -> Verdict {
        self.count += 1;
        if p.ecn && ect {
            self.drop_next = Codel::control_law(p, self.drop_next, self.count);
            self.phase = Phase::Start;
            Verdict::Mark
        } else {
            self.phase = Phase::InLoop;
            Verdict::Drop(DropReason::Aqm)
        }
    }

    /// The decision for a packet leaving its flow queue (`codel_dequeue`).
    fn on_departure(&mut self, p: &FqCodelParams, now: SimTime, sojourn: SimTime, backlog: u64, mtu: u64, ect: bool) -> Verdict {
        let drop = self.should_drop(p, now, sojourn, backlog, mtu);
        match self.phase {
            Phase::AfterFirstDrop => {
                self.phase = Phase::Start;
                Verdict::Send
            }
            Phase::InLoop if !drop => {
                self.dropping = false;
                self.phase = Phase::Start;
                Verdict::Send
            }
            Phase::InLoop => {
                self.drop_next = Codel::control_law(p, self.drop_next, self.count);
                self.phase = Phase::Start;
                if now >= self.drop_next {
                    self.next_drop(p, ect)
                } else {
                    Verdict::Send
                }
            }
            Phase::Start if self.dropping => {
                if !drop {
                    self.dropping = false;
                    Verdict::Send
                } else if now >= self.drop_next {
                    self.next_drop(p, ect)
                } else {
                    Verdict::Send
                }
            }
            Phase::Start if drop => {
                let v = if p.ecn && ect { Verdict::Mark } else { Verdict::Drop(DropReason::Aqm) };
                if v != Verdict::Mark {
                    self.phase = Phase::AfterFirstDrop;
                }
                self.dropping = true;
                // re-entering soon after leaving: resume near the drop rate it had
                let delta = self.count.wrapping_sub(self.lastcount);
                let since = now.0 as i128 - self.drop_next.0 as i128;
                self.count = if delta > 1 && since < 16 * p.interval.0 as i128 { delta } else { 1 };
                self.lastcount = self.count;
                self.drop_next = Codel::control_law(p, now, self.count);
                v
            }
            Phase::Start => Verdict::Send,
        }
    }

    /// The flow queue emptied under a drop: the dequeue found no next packet.
    fn emptied(&mut self) {
        match self.phase {
            Phase::InLoop => {
                self.first_above = None;
                self.dropping = false;
            }
            Phase::AfterFirstDrop => self.first_above = None,
            Phase::Start => {}
        }
        self.phase = Phase::Start;
    }
}

/// Which list a flow queue is on.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum List {
    #[default]
    Inactive,
    New,
    Old,
}

#[derive(Clone, Debug, Default)]
struct FlowQueue {
    /// Packets of this flow queue in the egress queue.
    packets: u32,
    deficit: i64,
    list: List,
    codel: Codel,
}

/// The flow queues and lists of one egress queue.
#[derive(Clone, Debug)]
struct Sched {
    flows: Vec<FlowQueue>,
    new: VecDeque<u32>,
    old: VecDeque<u32>,
}

/// FQ-CoDel on every switch egress queue (module doc).
#[derive(Clone, Debug)]
pub struct FqCodel {
    p: FqCodelParams,
    mtu: u64,
    queues: usize,
    /// Per (port, queue), made at its first packet.
    sched: Vec<Option<Box<Sched>>>,
    new_flows: u64,
    drops: u64,
    marks: u64,
}

/// The flow queue, of `flows`, of a packet with flow hash `hash`.
#[inline]
fn flow_of(hash: u32, flows: u32) -> u32 {
    ((mix64(hash as u64) as u32 as u64 * flows as u64) >> 32) as u32
}

impl SwitchMechanism for FqCodel {
    type Params = FqCodelParams;
    type Frame = Never;
    type Msg = Never;
    type Timer = Never;
    const KEY: &'static str = "fq_codel";
    const CAPS: Caps = Caps::ENQUEUE.or(Caps::REORDER).or(Caps::DEQUEUE);
    /// FQ-CoDel's summary keys (`FqCodel::report`); its drops and marks are in the engine's
    /// columns too.
    const OUTPUTS: Outputs = Outputs {
        flows: &[],
        ports: &[],
        summary: &[
            (&["fq_codel_new_flows"], "With FQ-CoDel: the flow queues turned active"),
            (
                &["fq_codel_drops", "fq_codel_marks"],
                "With FQ-CoDel: CoDel's decisions, drops and CE marks (the ports table counts them per queue as `drops_aqm` and \
                 `ecn_marks`)",
            ),
        ],
    };

    fn build(p: FqCodelParams, f: &Fabric) -> FqCodel {
        FqCodel { p, mtu: f.mtu as u64, queues: f.queues, sched: vec![None; f.topo.ports.len() * f.queues], new_flows: 0, drops: 0, marks: 0 }
    }

    /// A target of 1 to 32 us and an interval of 10 to 640 us (fabric round trips), 1, 16 or
    /// 1,024 flow queues, a quantum of the MTU or 300 B, marking or dropping.
    #[cfg(test)]
    fn arbitrary(draw: u64, _: u8, mtu: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        use crate::switch::mechanism::{bits, Arbitrary};
        let flows = [1, 16, 1024][bits(draw, 10, 2) as usize % 3];
        let quantum = if bits(draw, 12, 1) == 1 { mtu } else { 300 };
        let line = format!(
            "fq_codel = {{ target = \"{}us\", interval = \"{}us\", flows = {flows}, quantum = \"{quantum}B\", ecn = {} }}",
            1 + bits(draw, 0, 5),
            10 * (1 + bits(draw, 5, 6)),
            bits(draw, 13, 1) == 1
        );
        Some(Arbitrary { line, without: &["aqm", "ci", "drc", "pfc"] })
    }

    /// A packet joins its flow queue; an inactive flow queue joins the new flows.
    fn on_enqueue(&mut self, a: &Arrival, _cx: &mut Ctx) {
        let fq = flow_of(a.hash, self.p.flows) as usize;
        let n = self.p.flows as usize;
        let s = self.sched[a.out as usize * self.queues + a.queue]
            .get_or_insert_with(|| Box::new(Sched { flows: vec![FlowQueue::default(); n], new: VecDeque::new(), old: VecDeque::new() }));
        let q = &mut s.flows[fq];
        q.packets += 1;
        if q.list == List::Inactive {
            q.list = List::New;
            q.deficit = self.p.quantum as i64;
            s.new.push_back(fq as u32);
            self.new_flows += 1;
        }
    }

    /// The deficit round robin: the first packet of the flow queue whose turn it is.
    fn pick(&mut self, port: PortId, queue: usize, q: &PktQueue, pkts: &PacketArena, _now: SimTime) -> Option<usize> {
        if q.is_empty() {
            return None;
        }
        let (quantum, flows) = (self.p.quantum as i64, self.p.flows);
        let Some(s) = self.sched.get_mut(port as usize * self.queues + queue).and_then(|s| s.as_deref_mut()) else {
            // a NIC's queue: in order
            return Some(0);
        };
        loop {
            let (fq, from_new) = match (s.new.front(), s.old.front()) {
                (Some(&f), _) => (f, true),
                (None, Some(&f)) => (f, false),
                (None, None) => unreachable!("a queue with packets has an active flow queue"),
            };
            let f = &mut s.flows[fq as usize];
            if f.deficit > 0 && f.packets > 0 {
                let at = q.ids().position(|id| flow_of(pkts.get(id).hash, flows) == fq);
                debug_assert!(at.is_some(), "flow queue {fq} counts packets the egress queue does not hold");
                return at.or(Some(0));
            }
            if from_new {
                s.new.pop_front()
            } else {
                s.old.pop_front()
            };
            if f.deficit <= 0 {
                // out of credit: another quantum, and to the end of the old flows
                f.deficit += quantum;
            } else {
                // codel_dequeue found it empty: it leaves, or from the new flows while old
                // ones wait, goes to the end of the old flows
                f.codel.dropping = false;
                if !from_new || s.old.is_empty() {
                    f.list = List::Inactive;
                    continue;
                }
            }
            f.list = List::Old;
            s.old.push_back(fq);
        }
    }

    /// CoDel on the departing packet; a packet that leaves is charged to its flow's deficit.
    fn on_dequeue(&mut self, d: &Departure, cx: &mut Ctx) -> Verdict {
        let p = cx.pkts.get(d.pkt);
        let (fq, ect) = (flow_of(p.hash, self.p.flows) as usize, p.ecn.is_ect());
        let backlog = cx.queue_bytes(d.port, d.queue);
        let Some(s) = self.sched[d.port as usize * self.queues + d.queue].as_deref_mut() else {
            return Verdict::Send;
        };
        let f = &mut s.flows[fq];
        f.packets -= 1;
        let v = f.codel.on_departure(&self.p, cx.now, cx.now - d.enq, backlog, self.mtu, ect);
        match v {
            Verdict::Drop(_) => {
                self.drops += 1;
                if f.packets == 0 {
                    f.codel.emptied();
                }
            }
            Verdict::Mark => {
                self.marks += 1;
                f.deficit -= d.size as i64;
            }
            Verdict::Send => f.deficit -= d.size as i64,
        }
        v
    }

    fn report(&self, r: &mut Report) {
        r.count("fq_codel_new_flows", self.new_flows);
        r.count("fq_codel_drops", self.drops);
        r.count("fq_codel_marks", self.marks);
        r.metric("fq_codel_drops", "FQ-CoDel drops", 1.0, "int", Better::Lower);
        r.metric("fq_codel_marks", "FQ-CoDel marks", 1.0, "int", Better::Neither);
        r.acted("switch.fq_codel", "packets CoDel dropped or marked", self.drops + self.marks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(ecn: bool) -> FqCodelParams {
        FqCodelParams { target: SimTime::from_us(5), interval: SimTime::from_us(100), flows: 1024, quantum: 1500, ecn }
    }

    /// RFC 8289's control law on a standing queue: no drop until the sojourn has stayed above
    /// target for an interval (strictly past, as Linux), then drops at interval / sqrt(n)
    /// after each other, each followed by the flow queue's next packet leaving.
    #[test]
    fn codel_drops_at_the_control_law() {
        let p = params(false);
        let mut c = Codel::default();
        let (sojourn, backlog) = (SimTime::from_us(50), 100_000);
        let at = |us: f64| SimTime((us * 1e6) as u64);
        assert_eq!(c.on_departure(&p, at(0.0), sojourn, backlog, 1500, false), Verdict::Send, "first above target: the interval starts");
        assert_eq!(c.on_departure(&p, at(100.0), sojourn, backlog, 1500, false), Verdict::Send, "not strictly past first_above_time");
        assert_eq!(c.on_departure(&p, at(100.5), sojourn, backlog, 1500, false), Verdict::Drop(DropReason::Aqm));
        assert_eq!(c.on_departure(&p, at(100.5), sojourn, backlog, 1500, false), Verdict::Send, "the next packet of the dequeue leaves");
        // drop_next = 100.5 + 100 / sqrt(1); then + 100 / sqrt(2), + 100 / sqrt(3)
        let mut next = 100.5 + 100.0;
        for n in 2..=4u32 {
            assert_eq!(c.on_departure(&p, at(next - 0.1), sojourn, backlog, 1500, false), Verdict::Send, "before drop {n}");
            assert_eq!(c.on_departure(&p, at(next), sojourn, backlog, 1500, false), Verdict::Drop(DropReason::Aqm), "drop {n} at {next} us");
            assert_eq!(c.count, n);
            next += 100.0 / (n as f64).sqrt();
            // after the drop the next packet is looked at in the same dequeue: it goes
            assert_eq!(c.on_departure(&p, at(next - 100.0 / (n as f64).sqrt()), sojourn, backlog, 1500, false), Verdict::Send);
        }
        // the sojourn falls below target: the dropping state ends
        assert_eq!(c.on_departure(&p, at(next), SimTime::from_us(1), backlog, 1500, false), Verdict::Send);
        assert!(!c.dropping && c.first_above.is_none());
        // an MTU or less in the port's queue never drops
        let mut c = Codel::default();
        c.on_departure(&p, at(0.0), sojourn, 1500, 1500, false);
        assert!(c.first_above.is_none());
    }

    /// With ECN, CoDel marks an ECN-capable packet where it would drop and keeps the same
    /// schedule; a non-ECT packet is still dropped.
    #[test]
    fn codel_marks_ecn_capable_packets() {
        let p = params(true);
        let mut c = Codel::default();
        let s = SimTime::from_us(50);
        c.on_departure(&p, SimTime::ZERO, s, 100_000, 1500, true);
        assert_eq!(c.on_departure(&p, SimTime::from_us(101), s, 100_000, 1500, true), Verdict::Mark);
        assert_eq!(c.drop_next, SimTime::from_us(201));
        assert_eq!(c.on_departure(&p, SimTime::from_us(201), s, 100_000, 1500, true), Verdict::Mark);
        assert_eq!((c.count, c.drop_next), (2, SimTime::from_us(201) + SimTime((100e6 / 2f64.sqrt()) as u64)));
        assert_eq!(c.on_departure(&p, SimTime::from_us(400), s, 100_000, 1500, false), Verdict::Drop(DropReason::Aqm));
    }

    /// Re-entering the dropping state soon after leaving it resumes at the drop count it
    /// had (RFC 8289 sec. 5.4's count - lastcount), not at 1.
    #[test]
    fn codel_resumes_its_drop_rate() {
        let p = params(false);
        let mut c = Codel { count: 10, lastcount: 4, drop_next: SimTime::from_us(500), ..Default::default() };
        let s = SimTime::from_us(50);
        c.on_departure(&p, SimTime::from_us(600), s, 100_000, 1500, false);
        assert_eq!(c.on_departure(&p, SimTime::from_us(701), s, 100_000, 1500, false), Verdict::Drop(DropReason::Aqm));
        assert_eq!(c.count, 6, "10 - 4");
        assert_eq!(c.drop_next, SimTime::from_us(701) + SimTime((100e6 / 6f64.sqrt()) as u64));
    }

    /// Bad values and the mechanisms FQ-CoDel cannot run beside are refused, naming the key.
    #[test]
    fn errors_name_the_key() {
        for (extra, key, what) in [
            ("[switch]\nfq_codel = { flows = 0 }", "switch.fq_codel.flows", "invalid value 0, expected 1..65536"),
            ("[switch]\nfq_codel = { target = \"0us\" }", "switch.fq_codel.target", "duration > 0"),
            ("[switch]\nfq_codel = { quantum = \"0B\" }", "switch.fq_codel.quantum", "size > 0"),
            ("[switch]\nfq_codel = { tagret = \"5us\" }", "switch.fq_codel.tagret", "did you mean \"target\""),
            ("[switch]\nfq_codel = {}\npfc = { xoff = \"100KB\" }", "switch.fq_codel", "cannot run with switch.pfc"),
            ("[switch]\nfq_codel = {}\naqm = { kind = \"step\", threshold = \"10KB\" }", "switch.fq_codel", "cannot run with switch.aqm"),
        ] {
            let e = crate::scenario::tests::error_of(extra);
            assert_eq!(e.key, key, "{extra}: {e}");
            assert!(e.message.contains(what), "{extra}: {e}");
        }
    }
}
