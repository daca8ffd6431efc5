//! `switch.aqm`: the active queue management of every switch egress queue, by kind.
//!
//! * `fixed`: marks an ECN-capable packet (ECT(0), ECT(1) or CE) and drops any other with
//!   the same fixed probability `p`, drawn from the switch's stream, whatever the queue
//!   holds. It is the instrument behind the steady-state rate laws of the congestion
//!   controllers (Mathis et al. 1997 for Reno, RFC 9438 sec. 5 for Cubic, the seed 002
//!   reading 2 / (R p) for DCTCP under probabilistic marking). A lossless class's packets
//!   are never dropped.
//! * `red`: RED as Linux `tc red` runs it (`switch/aqm/red.rs`).
//! * `pi2`: the PI2 controller, p'^2 on every packet (`switch/aqm/pi2.rs`).
//! * `dualpi2`: the DualQ Coupled AQM of RFC 9332 (`switch/aqm/dualpi2.rs`).
//! * `dualq2015`: seed 002's own DualQ, two slopes on the Classic delay and strict priority
//!   (`switch/aqm/dualq2015.rs`).
//! * `coupled`: seed 002's single-queue coupled AQM (`switch/aqm/coupled.rs`).
//! * `step` and `ramp` with `at = "dequeue"`: the ECN marker (`switch/ecn.rs`) judging a
//!   packet as it leaves; at enqueue (the default) the pipeline's ECN stage runs it.

pub mod coupled;
pub mod dualpi2;
pub mod dualq2015;
pub mod pi2;
pub mod red;

use coupled::Coupled;
use dualpi2::{DualPi2, DualPi2Params};
use dualq2015::{DualQ2015, DualQ2015Params};
use super::mechanism::{Caps, Fabric, Never, SwitchMechanism, Verdict};
use pi2::{Pi2, Pi2Params};
use super::pipeline::{AqmAction, Arrival, Ctx, Departure, Report};
use red::{Red, RedParams};
use super::ecn::EcnMarker;
use crate::net::DropReason;
use crate::metrics::{ColumnData, Outputs};
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
    DualQ2015(DualQ2015Params),
    Coupled(Coupled),
    /// The step or ramp marker judging packets as they leave (`MarkAt::Dequeue`).
    AtDequeue(EcnMarker),
}

/// The algorithm of `switch.aqm`, with its per-queue state.
#[derive(Clone, Debug)]
pub enum Algo {
    Fixed { p: f64 },
    Red(Red),
    Pi2(Pi2),
    DualPi2(DualPi2),
    DualQ2015(DualQ2015),
    Coupled(Coupled),
    AtDequeue(EcnMarker),
}

/// Sojourn times of the packets leaving each switch egress queue, kept while an AQM is
/// configured (the delay the AQMs act on): their sum, for the mean, and a histogram of
/// 8 buckets per octave of nanoseconds (within 12.5%), for the 99th percentile.
#[derive(Clone, Debug, Default)]
pub struct Sojourn {
    queues: usize,
    sum_ps: Vec<u64>,
    count: Vec<u64>,
    hist: Vec<Vec<u32>>,
}

/// Sub-buckets per octave of the sojourn histogram.
const SUB: u32 = 8;

impl Sojourn {
    fn new(ports: usize, queues: usize) -> Sojourn {
        Sojourn { queues, sum_ps: vec![0; ports * queues], count: vec![0; ports * queues], hist: vec![Vec::new(); ports * queues] }
    }

    /// The histogram bucket of a sojourn of `ns` nanoseconds.
    fn bucket(ns: u64) -> usize {
        if ns < SUB as u64 {
            return ns as usize;
        }
        let octave = 63 - ns.leading_zeros();
        let sub = (ns >> (octave - SUB.trailing_zeros())) as u32 & (SUB - 1);
        ((octave - SUB.trailing_zeros() + 1) * SUB + sub) as usize
    }

    /// The upper edge (ns) of bucket `b`: every sojourn counted in it is below this.
    fn upper(b: usize) -> u64 {
        let b = b as u32;
        if b < SUB {
            return b as u64 + 1;
        }
        let shift = b / SUB - 1;
        ((SUB + b % SUB + 1) as u64) << shift
    }

    fn add(&mut self, port: u32, queue: usize, ps: u64) {
        let row = port as usize * self.queues + queue;
        self.sum_ps[row] += ps;
        self.count[row] += 1;
        let h = &mut self.hist[row];
        let b = Sojourn::bucket(ps / 1000);
        if h.len() <= b {
            h.resize(b + 1, 0);
        }
        h[b] += 1;
    }

    /// The 99th percentile of a queue's sojourns, as its bucket's upper edge in ps.
    fn p99_ps(&self, row: usize) -> u64 {
        let n = self.count[row];
        if n == 0 {
            return 0;
        }
        let want = (n * 99).div_ceil(100);
        let mut seen = 0u64;
        for (b, &c) in self.hist[row].iter().enumerate() {
            seen += c as u64;
            if seen >= want {
                return Sojourn::upper(b) * 1000;
            }
        }
        unreachable!("the histogram holds every departure")
    }
}

/// `switch.aqm` on every switch egress queue: the algorithm and the sojourn statistics.
#[derive(Clone, Debug)]
pub struct Aqm {
    pub algo: Algo,
    sojourn: Sojourn,
}

impl Aqm {
    pub fn new(p: AqmParams, ports: usize, queues: usize, switches: usize) -> Aqm {
        let algo = match p {
            AqmParams::Fixed { p } => Algo::Fixed { p },
            AqmParams::Red(r) => Algo::Red(Red::new(r, ports, queues)),
            AqmParams::Pi2(p) => Algo::Pi2(Pi2::new(p, ports, queues, switches)),
            AqmParams::DualPi2(p) => Algo::DualPi2(DualPi2::new(p, ports, switches)),
            AqmParams::DualQ2015(p) => Algo::DualQ2015(DualQ2015::new(p, ports)),
            AqmParams::Coupled(c) => Algo::Coupled(c),
            AqmParams::AtDequeue(m) => Algo::AtDequeue(m),
        };
        Aqm { algo, sojourn: Sojourn::new(ports, queues) }
    }
}

impl SwitchMechanism for Aqm {
    type Params = AqmParams;
    type Frame = Never;
    type Msg = Never;
    type Timer = pi2::Update;
    const KEY: &'static str = "aqm";
    const CAPS: Caps = Caps::CLASSIFY.or(Caps::MARK).or(Caps::DEQUEUE);
    /// The AQMs' columns and summary keys (`Aqm::report`). The step and ramp kinds at enqueue
    /// are the ECN marker (`switch::ecn`), which has none.
    const OUTPUTS: Outputs = Outputs {
        flows: &[],
        ports: &[
            (
                &["sojourn_mean_ps", "sojourn_p99_ps"],
                "With `switch.aqm` of a kind other than `step` and `ramp` (or of those with `at = \"dequeue\"`): the mean and 99th percentile (within 12.5% above) of the \
                 sojourn time of the packets that left this switch queue",
            ),
            (&["dualpi2_step_marks", "dualpi2_coupled_marks"], "With DualPI2: L packets CE-marked by the step (`step`, on their sojourn) and by the coupling (on the L queue's row)"),
            (
                &["dualq2015_step_marks", "dualq2015_coupled_marks"],
                "With seed 002's DualQ (`dualq2015`): L packets CE-marked by the L queue's threshold T and by the coupling alone (on \
                 the L queue's row)",
            ),
        ],
        summary: &[
            (&["dualpi2_step_marks", "dualpi2_coupled_marks"], "With DualPI2: the ports' columns of the same names, summed"),
            (&["dualq2015_step_marks", "dualq2015_coupled_marks"], "With seed 002's DualQ (`dualq2015`): the ports' columns of the same names, summed"),
        ],
    };

    fn build(p: AqmParams, f: &Fabric) -> Aqm {
        if let AqmParams::DualPi2(d) = &p {
            f.check_queue("dualpi2.l_queue", d.l_queue);
            f.check_queue("dualpi2.c_queue", d.c_queue);
        }
        if let AqmParams::DualQ2015(d) = &p {
            f.check_queue("dualq2015.l_queue", d.l_queue);
            f.check_queue("dualq2015.c_queue", d.c_queue);
        }
        Aqm::new(p, f.topo.ports.len(), f.queues, f.topo.switches.len())
    }

    /// One of the kinds this table runs (the step and ramp markers are `ecn.rs`'s), at
    /// fabric scales: thresholds of a few to a hundred MTUs, controllers updating every few
    /// microseconds.
    #[cfg(test)]
    fn arbitrary(draw: u64, queues: u8, mtu: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        use crate::switch::mechanism::{bits, Arbitrary};
        let m = mtu as u64;
        let kind = match bits(draw, 0, 3) % 6 {
            3 if queues != 2 => 2,
            4 if queues != 2 => 5,
            k => k,
        };
        let pi = |kind: &str| {
            format!(
                "kind = \"{kind}\", target = \"{}us\", tupdate = \"{}us\", alpha = {:?}, beta = {:?}",
                5 + bits(draw, 3, 5),
                2 + bits(draw, 8, 4),
                [0.16, 10.0, 1000.0][bits(draw, 12, 2) as usize % 3],
                [3.2, 100.0, 10000.0][bits(draw, 14, 2) as usize % 3]
            )
        };
        let line = match kind {
            0 => format!("kind = \"fixed\", p = {:?}", bits(draw, 3, 7) as f64 / 127.0 * 0.2),
            1 => {
                // tc's RED refuses a burst, derived as (2 min + max) / (3 avpkt), below
                // min / avpkt, and a min under avpkt (red::Red::wlog): min at least 2 avpkt
                // and max at least 3 avpkt above it (an MTU or two above left it short)
                let min = (m * (2 + bits(draw, 3, 4))).max(2 * red::DEFAULT_AVPKT);
                let max = (min + m * (1 + bits(draw, 7, 5))).max(min + 3 * red::DEFAULT_AVPKT);
                let limit = if bits(draw, 12, 1) == 1 { format!(", limit = \"{}B\"", 2 * max) } else { String::new() };
                format!("kind = \"red\", min = \"{min}B\", max = \"{max}B\", probability = {:?}, ecn = {}{limit}", (1 + bits(draw, 13, 6)) as f64 / 64.0, bits(draw, 19, 1) == 1)
            }
            2 => pi("pi2"),
            3 => format!("{}, k = {:?}, step = \"{}us\"", pi("dualpi2"), 1.0 + bits(draw, 20, 2) as f64, 1 + bits(draw, 22, 6)),
            4 => format!("kind = \"dualq2015\", threshold = \"{}B\"", m * (1 + bits(draw, 3, 4))),
            _ => format!("kind = \"coupled\", max = \"{}B\", k = {:?}", m * (5 + bits(draw, 3, 7)), 1.0 + bits(draw, 10, 3) as f64 / 4.0),
        };
        // the dual queues classify, as Congestion Isolation does; seed 002's serves its L
        // queue with strict priority
        let without: &'static [&'static str] = match kind {
            3 => &["aqm", "ci"],
            4 => &["aqm", "ci", "scheduler"],
            _ => &["aqm"],
        };
        Some(Arbitrary { line: format!("aqm = {{ {line} }}"), without })
    }

    /// Only the dual-queue AQMs classify.
    fn caps(&self) -> Caps {
        Caps::MARK.or(Caps::DEQUEUE).or(Caps::when(matches!(self.algo, Algo::DualPi2(_) | Algo::DualQ2015(_)), Caps::CLASSIFY))
    }
    /// classify: the dual-queue AQMs put ECT(1) and CE packets in their L queue.
    #[inline]
    fn classify(&mut self, a: &mut Arrival, _cx: &mut Ctx) {
        match &self.algo {
            Algo::DualPi2(d) => d.classify(a),
            Algo::DualQ2015(d) => d.classify(a),
            _ => {}
        }
    }

    #[inline]
    fn on_arrival(&mut self, a: &Arrival, ect: bool, cx: &mut Ctx) -> AqmAction {
        match &mut self.algo {
            Algo::Fixed { p } => select(*p, ect, a.lossless, &mut cx.switches[a.sw as usize].rng),
            Algo::Red(r) => r.on_arrival(a, ect, cx),
            Algo::Pi2(p) => p.on_arrival(a, ect, cx),
            Algo::DualPi2(d) => d.on_arrival(a, ect, cx),
            Algo::DualQ2015(d) => d.on_arrival(a, ect, cx),
            Algo::Coupled(c) => c.on_arrival(a, ect, cx),
            Algo::AtDequeue(_) => AqmAction::Pass,
        }
    }

    #[inline]
    fn on_dequeue(&mut self, d: &Departure, cx: &mut Ctx) -> Verdict {
        self.sojourn.add(d.port, d.queue, (cx.now - d.enq).0);
        match &mut self.algo {
            Algo::Red(r) => r.on_dequeue(d.port, d.queue, cx.queue_bytes(d.port, d.queue), cx.now),
            Algo::DualPi2(q) => {
                if q.on_dequeue(d, cx) {
                    return Verdict::Mark;
                }
            }
            Algo::AtDequeue(m) => return m.on_departure(d, cx),
            Algo::Fixed { .. } | Algo::Pi2(_) | Algo::DualQ2015(_) | Algo::Coupled(_) => {}
        }
        Verdict::Send
    }

    fn timer_place(t: pi2::Update) -> u32 {
        t.sw
    }

    /// An AQM timer (the PI2 controllers' periodic update).
    fn on_timer(&mut self, t: pi2::Update, cx: &mut Ctx) {
        match &mut self.algo {
            Algo::Pi2(p) => p.on_timer(t, cx),
            Algo::DualPi2(d) => d.on_timer(t, cx),
            Algo::Fixed { .. } | Algo::Red(_) | Algo::DualQ2015(_) | Algo::Coupled(_) | Algo::AtDequeue(_) => {}
        }
    }

    /// The p99 is its histogram bucket's upper edge, so within 12.5% above the true one.
    fn report(&self, r: &mut Report) {
        let rows = r.topo.ports.len() * r.queues;
        let so = &self.sojourn;
        let mean: Vec<u64> = (0..rows).map(|i| if so.count[i] > 0 { so.sum_ps[i] / so.count[i] } else { 0 }).collect();
        let p99: Vec<u64> = (0..rows).map(|i| so.p99_ps(i)).collect();
        r.ports_table.push("sojourn_mean_ps", ColumnData::U64(mean));
        r.ports_table.push("sojourn_p99_ps", ColumnData::U64(p99));
        let dual = match &self.algo {
            Algo::DualPi2(d) => Some(([("dualpi2_step_marks", &d.step_marks), ("dualpi2_coupled_marks", &d.coupled_marks)], d.p.l_queue, d.p.c_queue)),
            Algo::DualQ2015(d) => Some(([("dualq2015_step_marks", &d.step_marks), ("dualq2015_coupled_marks", &d.coupled_marks)], d.p.l_queue, d.p.c_queue)),
            _ => None,
        };
        if let Some((counters, l_queue, c_queue)) = dual {
            for (name, v) in counters {
                let mut col = vec![0u64; rows];
                for (port, &x) in v.iter().enumerate() {
                    col[port * r.queues + l_queue] = x;
                }
                r.count(name, v.iter().sum::<u64>());
                r.ports_table.push(name, ColumnData::U64(col));
            }
            r.queue_role(l_queue, "L");
            r.queue_role(c_queue, "Classic");
        }
        let marks = r.summary_u64("ecn_marks").unwrap_or(0);
        let drops: u64 = r.ports_table.u64("drops_aqm").iter().sum();
        r.acted("switch.aqm", "packets marked CE or dropped", marks + drops);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every CE mark an AQM gives is counted once where it is given: DualPI2's step marks
    /// (given as packets leave) are in the ports' and the summary's ecn_marks with its
    /// coupled and Classic marks, the L queue's ecn_marks are exactly its step and coupled
    /// marks, and no flow saw more CE marks than the switches gave (seed 002's 1 Cubic + 1
    /// DCTCP under DualPI2, 3 s; the flows' count once exceeded the ports').
    #[test]
    fn dualpi2_marks_are_counted_once_where_given() {
        let text = include_str!("../../../../../scenarios/seed002_dualq_small.toml").replace("max_time = \"60s\"", "max_time = \"3s\"");
        let (_, mut sim) = crate::scenario::load(&text, false, Some("DualPI2"), &Default::default()).unwrap();
        sim.run();
        let r = sim.results();
        let summary = |k: &str| r.summary[k].as_u64().unwrap();
        let ports: u64 = r.ports.u64("ecn_marks").iter().sum();
        let (step, coupled) = (summary("dualpi2_step_marks"), summary("dualpi2_coupled_marks"));
        assert!(step > 0 && coupled > 0, "step {step}, coupled {coupled}");
        assert_eq!(summary("ecn_marks"), ports);
        let l_queue: u64 = r.ports.u64("ecn_marks").iter().zip(r.ports.u64("dualpi2_step_marks")).zip(r.ports.u64("dualpi2_coupled_marks")).filter(|((_, s), c)| **s + **c > 0).map(|((m, _), _)| *m).sum();
        assert_eq!(l_queue, step + coupled);
        let flows: u64 = r.flows.u32("ecn_marks").iter().map(|&m| m as u64).sum();
        assert!(flows <= ports, "flows saw {flows} CE marks, the switches gave {ports}");
    }

    /// Buckets: exact below 8 ns, then 8 per octave; every value lies below its bucket's
    /// upper edge and at or above the previous bucket's, and the edges grow by at most 12.5%.
    #[test]
    fn sojourn_buckets_bracket_their_values() {
        for ns in (0..5000u64).chain([15_000_000, 123_456_789, 1 << 40]) {
            let b = Sojourn::bucket(ns);
            assert!(ns < Sojourn::upper(b), "{ns} in bucket {b} with upper {}", Sojourn::upper(b));
            if b > 0 {
                assert!(ns >= Sojourn::upper(b - 1), "{ns} below bucket {b}'s lower edge");
            }
            if b >= SUB as usize {
                let (lo, hi) = (Sojourn::upper(b - 1), Sojourn::upper(b));
                assert!((hi - lo) as f64 <= 0.125 * lo as f64 + 1e-9, "{lo}..{hi}");
            }
        }
        // the 99th percentile of 1..=100 us is 99 us's bucket edge: within 12.5% above
        let mut s = Sojourn::new(1, 1);
        for us in 1..=100u64 {
            s.add(0, 0, us * 1_000_000);
        }
        let p = s.p99_ps(0) as f64;
        assert!((99e6..=99e6 * 1.125).contains(&p), "{p}");
        assert_eq!(s.sum_ps[0] / s.count[0], 50_500_000);
    }
}
