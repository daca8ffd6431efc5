//! `switch.aqm`: one table per AQM kind (`kind` chooses which keys apply), its checks and its
//! conversion to the mechanism's parameters.

use super::super::tagged;
use crate::sim::units::{Bytes, Duration, Rate};
use super::super::*;
use crate::switch::ecn;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// One variant per kind, the kind's name and its table: the enum `switch.aqm` reads, its
/// names and the reading of a table by its `kind`.
macro_rules! aqm_kinds {
    ($($(#[$doc:meta])* $variant:ident($ty:ident) = $name:literal,)*) => {
        /// `switch.aqm`: the active queue management (ECN marking or dropping) of every switch
        /// egress queue, chosen by `kind`; each kind takes its own keys.
        #[derive(Serialize, JsonSchema, Debug, Clone, PartialEq)]
        #[serde(tag = "kind")]
        pub enum AqmConfig {
            $($(#[$doc])* #[serde(rename = $name)] $variant($ty),)*
        }

        impl AqmConfig {
            /// The kinds as scenario files name them, in declaration order.
            pub const KINDS: &'static [&'static str] = &[$($name),*];

            /// This table's kind as the scenario file names it.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(AqmConfig::$variant(_) => $name,)*
                }
            }

            /// The kinds whose table takes `key`.
            fn kinds_with(key: &str) -> Vec<&'static str> {
                let mut out = Vec::new();
                $(if tagged::keys::<$ty>().iter().any(|k| k == key) { out.push($name); })*
                out
            }
        }

        impl<'de> Deserialize<'de> for AqmConfig {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let (kind, t) = tagged::split(d, "kind", Self::KINDS)?;
                match kind {
                    $($name => tagged::body(t, "kind", kind, Self::kinds_with).map(AqmConfig::$variant),)*
                    _ => unreachable!("split returns one of KINDS"),
                }
            }
        }
    };
}

aqm_kinds! {
    /// DCTCP's step marking (Alizadeh et al., SIGCOMM 2010): every ECN-capable packet that
    /// arrives to a queue deeper than `threshold` is CE-marked.
    Step(StepAqm) = "step",
    /// RED's linear ramp on the instantaneous queue as DCQCN configures it (Zhu et al.,
    /// SIGCOMM 2015, Kmin/Kmax/Pmax): probability 0 at or below `kmin`, rising linearly to
    /// `pmax` at `kmax`, 1 above `kmax`.
    Ramp(RampAqm) = "ramp",
    /// Mark ECN-capable packets and drop the others with a fixed probability `p`, whatever
    /// the queue holds: the instrument that checks a congestion controller's rate law.
    Fixed(FixedAqm) = "fixed",
    /// RED as Linux `tc red` configures it: EWMA of the queue, min/max thresholds, marking
    /// probability, ECN or drop (seed 002's AQM).
    Red(RedAqm) = "red",
    /// The PI2 controller (De Schepper et al., CoNEXT 2016; RFC 9332's Classic AQM): p' from
    /// the queue delay every `tupdate`, every packet marked or dropped with p'^2.
    Pi2(Pi2Aqm) = "pi2",
    /// The DualQ Coupled AQM (RFC 9332, Linux sch_dualpi2): ECT(1)/CE to the L queue marked
    /// with k p' and a 1 ms step, the Classic queue with p'^2; needs switch.queues = 2.
    Dualpi2(DualPi2Aqm) = "dualpi2",
    /// Seed 002's own DualQ (De Schepper et al., "Data Center to the Home", 2015, slides
    /// 22-29): ECT(1)/CE to the L queue, served with strict priority; Classic packets dropped
    /// (marked if ECN-capable) with p'^2, p' = Q 2^classic_slope / 2^32 from the Classic
    /// queue's delay Q in ns; L packets marked above `threshold` or with Q 2^l_slope / 2^32;
    /// needs switch.queues = 2.
    Dualq2015(DualQ2015Aqm) = "dualq2015",
    /// Seed 002's single-queue coupled AQM: P = queue / max; ECT(1)/CE marked with P, others
    /// marked or dropped with (P / k)^2.
    Coupled(CoupledAqm) = "coupled",
}

/// `switch.aqm` with `kind = "step"`.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "StepAqm::defaults")]
pub struct StepAqm {
    /// Required: DCTCP's K, the depth above which every arriving ECN-capable packet is
    /// marked, e.g. "30KB".
    pub threshold: Option<Bytes>,
    /// Drop, instead of passing unmarked, packets that are not ECN-capable when the marker
    /// selects them (RFC 3168 6.1.1 behaviour of a RED queue with ECN). Default {default}:
    /// non-ECT packets (pure ACKs, UDP) only see tail drop.
    pub drop_non_ect: Option<bool>,
    /// When a packet is judged: "enqueue", as it arrives, on the depth it finds, or
    /// "dequeue", as it leaves, on the depth it leaves behind (htsim's reading; marks only,
    /// not with drop_non_ect, switch.ci or switch.architecture). Default {default}.
    pub at: Option<ecn::MarkAt>,
    /// Which switch ports judge packets: "all", or "fabric", only ports toward another
    /// switch (a ToR's downlinks to its hosts never mark, as the UEC's htsim builds a
    /// fabric for receiver-driven congestion control). Default {default}.
    pub ports: Option<ecn::MarkPorts>,
}

impl StepAqm {
    fn defaults() -> Self {
        StepAqm { threshold: None, drop_non_ect: Some(ecn::DEFAULT_DROP_NON_ECT), at: Some(ecn::DEFAULT_MARK_AT), ports: Some(ecn::DEFAULT_MARK_PORTS) }
    }
}

/// `switch.aqm` with `kind = "ramp"`.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "RampAqm::defaults")]
pub struct RampAqm {
    /// Required: depth where marking starts (DCQCN's Kmin); kmin <= kmax.
    pub kmin: Option<Bytes>,
    /// Required: depth above which every packet is marked (DCQCN's Kmax).
    pub kmax: Option<Bytes>,
    /// Marking probability reached at kmax (DCQCN's Pmax). Default {default}; in (0, 1].
    pub pmax: Option<f64>,
    /// As for kind "step". Default {default}.
    pub drop_non_ect: Option<bool>,
    /// As for kind "step". Default {default}.
    pub at: Option<ecn::MarkAt>,
    /// As for kind "step". Default {default}.
    pub ports: Option<ecn::MarkPorts>,
}

impl RampAqm {
    fn defaults() -> Self {
        RampAqm {
            pmax: Some(ecn::DEFAULT_PMAX),
            drop_non_ect: Some(ecn::DEFAULT_DROP_NON_ECT),
            at: Some(ecn::DEFAULT_MARK_AT),
            ports: Some(ecn::DEFAULT_MARK_PORTS),
            ..Default::default()
        }
    }
}

/// `switch.aqm` with `kind = "fixed"`.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct FixedAqm {
    /// Required: the probability in [0, 1] that an arriving packet is marked (ECN-capable)
    /// or dropped (not ECN-capable; a lossless class's packets are never dropped).
    pub p: Option<f64>,
}

/// `switch.aqm` with `kind = "red"`: `tc red`'s keys
/// (`limit`, `min`, `max`, `avpkt`, `burst`, `probability`, `bandwidth`, `ecn`).
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "RedAqm::defaults")]
pub struct RedAqm {
    /// Tail-drop when the queue would exceed this (tc's `limit`). Default: none (the switch
    /// buffer's own limit).
    pub limit: Option<Bytes>,
    /// Required: average queue where marking starts (tc's `min`).
    pub min: Option<Bytes>,
    /// Required: average queue from which every packet is marked or dropped (tc's `max`);
    /// > min.
    pub max: Option<Bytes>,
    /// Average packet size, for the EWMA weight and the idle decay. Default {default} (tc).
    pub avpkt: Option<Bytes>,
    /// Packets a burst into an empty queue may bring before the average reaches min; sets
    /// the EWMA weight as tc does. Default (2 min + max) / (3 avpkt) (tc); > min / avpkt - 1.
    pub burst: Option<u32>,
    /// Marking probability at max (tc's `probability`). Default {default} (tc); in (0, 1].
    pub probability: Option<f64>,
    /// The rate the idle decay assumes (tc's `bandwidth`). Default: the port's rate.
    pub bandwidth: Option<Rate>,
    /// Mark ECN-capable packets instead of dropping them (tc's `ecn`). Default {default}.
    pub ecn: Option<bool>,
}

impl RedAqm {
    fn defaults() -> Self {
        RedAqm { avpkt: Some(Bytes(red::DEFAULT_AVPKT)), probability: Some(red::DEFAULT_PROBABILITY), ecn: Some(red::DEFAULT_ECN), ..Default::default() }
    }

    /// tc's parameters, the unset ones derived as tc derives them.
    pub(in crate::scenario) fn params(&self) -> RedParams {
        let (min, max) = (self.min.map_or(0, |b| b.0), self.max.map_or(0, |b| b.0));
        let avpkt = self.avpkt.map_or(red::DEFAULT_AVPKT, |b| b.0).max(1);
        RedParams {
            limit: self.limit.map(|b| b.0),
            min,
            max,
            avpkt,
            burst: self.burst.unwrap_or(((2 * min + max) / (3 * avpkt)) as u32),
            probability: self.probability.unwrap_or(red::DEFAULT_PROBABILITY),
            bandwidth_bps: self.bandwidth.map(|r| r.0),
            ecn: self.ecn.unwrap_or(red::DEFAULT_ECN),
        }
    }

    fn check(&self) -> Result<(), ScenarioError> {
        let min = require(self.min.map(|b| b.0), "switch.aqm.min", "the average queue where RED starts marking, e.g. \"120000B\"")?;
        let max = require(self.max.map(|b| b.0), "switch.aqm.max", "the average queue where RED marks every packet, e.g. \"360000B\"")?;
        if max <= min {
            return Err(err("switch.aqm.max", format!("invalid value {max} B, expected more than min ({min} B)")));
        }
        if self.avpkt.map(|b| b.0) == Some(0) {
            return Err(err("switch.aqm.avpkt", "invalid value 0 B, expected a size > 0"));
        }
        if let Some(p) = self.probability.filter(|p| !(*p > 0.0 && *p <= 1.0)) {
            return Err(err("switch.aqm.probability", format!("invalid value {p}, expected a probability in (0, 1]")));
        }
        if self.bandwidth.map(|r| r.0) == Some(0) {
            return Err(err("switch.aqm.bandwidth", "invalid value 0 bps, expected a rate > 0"));
        }
        let r = self.params();
        if r.wlog().is_some() {
            return Ok(());
        }
        // tc's tc_red_eval_ewma refuses a burst below min / avpkt, or else (its bound tending
        // to burst) a min not above avpkt
        let ratio = r.min as f64 / r.avpkt.max(1) as f64;
        if r.burst_fits() {
            return Err(match self.avpkt {
                Some(_) => err(
                    "switch.aqm.avpkt",
                    format!("invalid value {} B: not below min ({min} B), and RED's average then finds no weight (tc refuses it too); expected avpkt below min", r.avpkt),
                ),
                None => err(
                    "switch.aqm.min",
                    format!("invalid value {min} B: not above the default avpkt ({} B), and RED's average then finds no weight (tc refuses it too); expected min above avpkt, or set avpkt", r.avpkt),
                ),
            });
        }
        let need = format!("RED needs burst >= min / avpkt ({}), at least {} (as tc does)", (ratio * 1000.0).round() / 1000.0, ratio.ceil().max(1.0));
        // an unset burst is derived, (2 min + max) / (3 avpkt): name the key the user set
        Err(match (self.burst, self.avpkt) {
            (Some(_), _) => err("switch.aqm.burst", format!("invalid value {}: {need}", r.burst)),
            (None, Some(_)) => err(
                "switch.aqm.avpkt",
                format!("invalid value {} B: the burst it derives, (2 min + max) / (3 avpkt), is {}, and {need}; expected a smaller avpkt, or set burst", r.avpkt, r.burst),
            ),
            (None, None) => err(
                "switch.aqm.min",
                format!(
                    "invalid value {min} B: the burst derived from min, max and the default avpkt ({} B), (2 min + max) / (3 avpkt), is {}, and {need}; \
                     expected thresholds further apart, or set burst",
                    r.avpkt, r.burst
                ),
            ),
        })
    }
}

/// `switch.aqm` with `kind = "pi2"`.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "Pi2Aqm::defaults")]
pub struct Pi2Aqm {
    /// The queue delay (head sojourn) the controller holds. Default {default} (Linux
    /// sch_dualpi2, RFC 9332); > 0.
    pub target: Option<Duration>,
    /// Controller update interval. Default {default}; > 0.
    pub tupdate: Option<Duration>,
    /// Integral gain in Hz (p' changes by alpha x the delay error in seconds per update).
    /// Default {default}; >= 0.
    pub alpha: Option<f64>,
    /// Proportional gain in Hz (p' changes by beta x the change of delay in seconds).
    /// Default {default}; >= 0.
    pub beta: Option<f64>,
}

impl Pi2Aqm {
    fn defaults() -> Self {
        Pi2Aqm { target: Some(Duration(pi2::DEFAULT_TARGET)), tupdate: Some(Duration(pi2::DEFAULT_TUPDATE)), alpha: Some(pi2::DEFAULT_ALPHA), beta: Some(pi2::DEFAULT_BETA) }
    }

    fn params(&self) -> Pi2Params {
        Pi2Params {
            target: self.target.map_or(pi2::DEFAULT_TARGET, |d| d.0),
            tupdate: self.tupdate.map_or(pi2::DEFAULT_TUPDATE, |d| d.0),
            alpha: self.alpha.unwrap_or(pi2::DEFAULT_ALPHA),
            beta: self.beta.unwrap_or(pi2::DEFAULT_BETA),
        }
    }

    fn check(&self) -> Result<(), ScenarioError> {
        for (k, d) in [("target", self.target), ("tupdate", self.tupdate)] {
            if d.map(|d| d.0 .0) == Some(0) {
                return Err(err(format!("switch.aqm.{k}"), "invalid value 0, expected a duration > 0"));
            }
        }
        for (k, g) in [("alpha", self.alpha), ("beta", self.beta)] {
            if let Some(g) = g.filter(|g| !(*g >= 0.0 && g.is_finite())) {
                return Err(err(format!("switch.aqm.{k}"), format!("invalid value {g}, expected a gain >= 0 (Hz)")));
            }
        }
        Ok(())
    }
}

/// `switch.aqm` with `kind = "dualpi2"`: PI2's keys (`target`, `tupdate`, `alpha`, `beta`,
/// as for kind "pi2") and the coupling's.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "DualPi2Aqm::defaults")]
pub struct DualPi2Aqm {
    /// As for kind "pi2". Default {default}.
    pub target: Option<Duration>,
    /// As for kind "pi2". Default {default}.
    pub tupdate: Option<Duration>,
    /// As for kind "pi2". Default {default}.
    pub alpha: Option<f64>,
    /// As for kind "pi2". Default {default}.
    pub beta: Option<f64>,
    /// Coupling factor: L packets are marked with k p'. Default {default} (window fairness
    /// with Reno at equal RTTs); > 0.
    pub k: Option<f64>,
    /// The L queue's native step: an L packet that waited longer is CE-marked. Default
    /// {default}; > 0.
    pub step: Option<Duration>,
    /// The queue of ECT(1) and CE packets. Default {default}; not c_queue.
    pub l_queue: Option<u8>,
    /// The queue of every other packet. Default {default}.
    pub c_queue: Option<u8>,
}

impl DualPi2Aqm {
    fn defaults() -> Self {
        let Pi2Aqm { target, tupdate, alpha, beta } = Pi2Aqm::defaults();
        DualPi2Aqm {
            target,
            tupdate,
            alpha,
            beta,
            k: Some(dualpi2::DEFAULT_K),
            step: Some(Duration(dualpi2::DEFAULT_STEP)),
            l_queue: Some(dualpi2::DEFAULT_L_QUEUE),
            c_queue: Some(dualpi2::DEFAULT_C_QUEUE),
        }
    }

    fn pi2(&self) -> Pi2Aqm {
        Pi2Aqm { target: self.target, tupdate: self.tupdate, alpha: self.alpha, beta: self.beta }
    }

    fn queues(&self) -> (u8, u8) {
        (self.l_queue.unwrap_or(dualpi2::DEFAULT_L_QUEUE), self.c_queue.unwrap_or(dualpi2::DEFAULT_C_QUEUE))
    }

    fn params(&self, mtu: u64) -> DualPi2Params {
        let (l_queue, c_queue) = self.queues();
        DualPi2Params {
            pi2: self.pi2().params(),
            k: self.k.unwrap_or(dualpi2::DEFAULT_K),
            step: self.step.map_or(dualpi2::DEFAULT_STEP, |d| d.0),
            l_queue: l_queue as usize,
            c_queue: c_queue as usize,
            floor: 2 * mtu,
        }
    }

    fn check(&self, sw: &SwitchConfig) -> Result<(), ScenarioError> {
        two_queues(sw, "dualpi2", self.queues())?;
        if let Some(k) = self.k.filter(|k| !(*k > 0.0 && k.is_finite())) {
            return Err(err("switch.aqm.k", format!("invalid value {k}, expected a coupling factor > 0")));
        }
        if self.step.map(|d| d.0 .0) == Some(0) {
            return Err(err("switch.aqm.step", "invalid value 0, expected a duration > 0"));
        }
        self.pi2().check()
    }
}

/// `switch.aqm` with `kind = "dualq2015"`.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "DualQ2015Aqm::defaults")]
pub struct DualQ2015Aqm {
    /// T, the L queue depth above which every arriving L packet is marked (the seed's
    /// "DCTCP threshold (Q size)"). Default: 5 MTUs (the seed's DCTCP threshold of 5
    /// packets); > 0.
    pub threshold: Option<Bytes>,
    /// The queue of ECT(1) and CE packets. Default {default}; above c_queue, so that the
    /// strict scheduler serves it first.
    pub l_queue: Option<u8>,
    /// The queue of every other packet. Default {default}.
    pub c_queue: Option<u8>,
    /// The seed's Reno slope S_r in bits: a Classic packet is dropped (marked if
    /// ECN-capable) when Q << S_r exceeds two uniform 32-bit random numbers, Q the Classic
    /// queue's delay in ns: probability p'^2, p' = Q 2^S_r / 2^32. Default {default} (p' =
    /// 0.03 at the seed's 32 ms of Classic delay: its operating point for one to two flows
    /// of each kind); 0..32.
    pub classic_slope: Option<u8>,
    /// The seed's DCTCP slope S_d in bits: an L packet is marked when Q << S_d exceeds one
    /// uniform 32-bit random number (the coupling factor is 2^(S_d - S_r)). Default
    /// {default} (S_r + 3: the seed's factor 8); 0..32.
    pub l_slope: Option<u8>,
}

impl DualQ2015Aqm {
    fn defaults() -> Self {
        DualQ2015Aqm {
            threshold: None,
            l_queue: Some(dualq2015::DEFAULT_L_QUEUE),
            c_queue: Some(dualq2015::DEFAULT_C_QUEUE),
            classic_slope: Some(dualq2015::DEFAULT_CLASSIC_SLOPE),
            l_slope: Some(dualq2015::DEFAULT_L_SLOPE),
        }
    }

    fn queues(&self) -> (u8, u8) {
        (self.l_queue.unwrap_or(dualq2015::DEFAULT_L_QUEUE), self.c_queue.unwrap_or(dualq2015::DEFAULT_C_QUEUE))
    }

    fn params(&self, mtu: u64) -> DualQ2015Params {
        let (l_queue, c_queue) = self.queues();
        DualQ2015Params {
            classic_slope: self.classic_slope.unwrap_or(dualq2015::DEFAULT_CLASSIC_SLOPE),
            l_slope: self.l_slope.unwrap_or(dualq2015::DEFAULT_L_SLOPE),
            threshold: self.threshold.map_or(dualq2015::DEFAULT_THRESHOLD_PACKETS * mtu, |b| b.0),
            l_queue: l_queue as usize,
            c_queue: c_queue as usize,
        }
    }

    fn check(&self, sw: &SwitchConfig) -> Result<(), ScenarioError> {
        let (l, c) = self.queues();
        two_queues(sw, "dualq2015", (l, c))?;
        // the seed's DualQ serves L with strict priority: the strict scheduler serves the
        // higher queue index first, DWRR the queues listed in switch.strict
        match sw.scheduler {
            SchedulerKind::Strict if l < c => {
                return Err(err(
                    "switch.aqm.l_queue",
                    format!("invalid value {l} below c_queue {c} with scheduler = \"strict\", expected the higher queue (strict priority serves it first; the seed's DualQ serves L first)"),
                ));
            }
            SchedulerKind::Dwrr if !sw.strict.iter().flatten().any(|&q| q == l) => {
                return Err(err(
                    "switch.scheduler",
                    format!("invalid value \"dwrr\" with switch.aqm.kind = \"dualq2015\" and the L queue ({l}) not in switch.strict, expected \"strict\" (the seed's DualQ gives the L queue strict priority)"),
                ));
            }
            _ => {}
        }
        if self.threshold.map(|b| b.0) == Some(0) {
            return Err(err("switch.aqm.threshold", "invalid value 0 B, expected a depth > 0"));
        }
        for (k, s) in [("classic_slope", self.classic_slope), ("l_slope", self.l_slope)] {
            if let Some(s) = s.filter(|&s| s > dualq2015::MAX_SLOPE) {
                return Err(err(
                    format!("switch.aqm.{k}"),
                    format!("invalid value {s}, expected a shift in bits 0..{max} (at {max} the probability is 1 from the first ns of delay)", max = dualq2015::MAX_SLOPE),
                ));
            }
        }
        Ok(())
    }
}

/// `switch.aqm` with `kind = "coupled"`.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "CoupledAqm::defaults")]
pub struct CoupledAqm {
    /// Required: the instantaneous queue at which P reaches 1; > 0.
    pub max: Option<Bytes>,
    /// Classic packets are selected with (P / k)^2. Default {default} (the seed's
    /// equal-rate factor); > 0.
    pub k: Option<f64>,
}

impl CoupledAqm {
    fn defaults() -> Self {
        CoupledAqm { max: None, k: Some(coupled::DEFAULT_K) }
    }
}

/// The step and ramp markers at dequeue: they mark only, judge the egress queue a packet
/// leaves, and leave each packet's marking to the queue (CI decides it as a packet arrives).
fn at_dequeue_fits(sw: &SwitchConfig, at: Option<ecn::MarkAt>, drop_non_ect: Option<bool>) -> Result<(), ScenarioError> {
    if at != Some(ecn::MarkAt::Dequeue) {
        return Ok(());
    }
    let with = if drop_non_ect == Some(true) {
        "switch.aqm.drop_non_ect = true: at dequeue the marker marks only"
    } else if sw.ci.is_some() {
        "switch.ci: CI decides each packet's marking as it arrives"
    } else if sw.architecture.is_some() {
        "switch.architecture: the marker at dequeue runs on output-queued switches only"
    } else {
        return Ok(());
    };
    Err(err("switch.aqm.at", format!("invalid value \"dequeue\" with {with}; expected \"enqueue\"")))
}

/// The two-queue AQMs' shared conditions: two queues, distinct L and Classic queues, and no
/// CI (both choose the egress queue).
fn two_queues(sw: &SwitchConfig, kind: &str, (l, c): (u8, u8)) -> Result<(), ScenarioError> {
    let nq = sw.queues();
    if nq != 2 {
        return Err(err("switch.queues", format!("invalid value {nq} with switch.aqm.kind = \"{kind}\", expected 2 (its L and Classic queues)")));
    }
    if l >= nq || c >= nq || l == c {
        return Err(err("switch.aqm.l_queue", format!("invalid value {l} (c_queue {c}), expected two different queues 0..{}", nq - 1)));
    }
    if sw.ci.is_some() {
        return Err(err("switch.aqm.kind", format!("invalid value \"{kind}\" with switch.ci: both choose the egress queue; expected one of them")));
    }
    Ok(())
}

impl AqmConfig {
    /// Refuse a configuration that cannot run, naming the key.
    pub(in crate::scenario) fn check(&self, sw: &SwitchConfig) -> Result<(), ScenarioError> {
        match self {
            AqmConfig::Step(a) => {
                require(a.threshold, "switch.aqm.threshold", "DCTCP's step threshold K, e.g. \"30KB\"")?;
                at_dequeue_fits(sw, a.at, a.drop_non_ect)
            }
            AqmConfig::Ramp(a) => {
                at_dequeue_fits(sw, a.at, a.drop_non_ect)?;
                let lo = require(a.kmin.map(|b| b.0), "switch.aqm.kmin", "the depth where marking starts, e.g. \"10KB\"")?;
                let hi = require(a.kmax.map(|b| b.0), "switch.aqm.kmax", "the depth above which every packet is marked, e.g. \"300KB\"")?;
                if lo > hi {
                    return Err(err("switch.aqm.kmin", format!("invalid value {lo} B, expected kmin <= kmax ({hi} B)")));
                }
                match a.pmax.filter(|p| !(*p > 0.0 && *p <= 1.0)) {
                    Some(p) => Err(err("switch.aqm.pmax", format!("invalid value {p}, expected a probability in (0, 1]"))),
                    None => Ok(()),
                }
            }
            AqmConfig::Fixed(a) => match a.p {
                None => Err(err("switch.aqm.p", "missing; expected a probability in [0, 1] for kind = \"fixed\"")),
                Some(p) if !(0.0..=1.0).contains(&p) => Err(err("switch.aqm.p", format!("invalid value {p}, expected a probability in [0, 1]"))),
                Some(_) => Ok(()),
            },
            AqmConfig::Red(a) => a.check(),
            AqmConfig::Pi2(a) => a.check(),
            AqmConfig::Dualpi2(a) => a.check(sw),
            AqmConfig::Dualq2015(a) => a.check(sw),
            AqmConfig::Coupled(a) => {
                let max = require(a.max.map(|b| b.0), "switch.aqm.max", "the queue at which the coupled AQM's P reaches 1, e.g. \"100KB\"")?;
                if max == 0 {
                    return Err(err("switch.aqm.max", "invalid value 0 B, expected a size > 0"));
                }
                match a.k.filter(|k| !(*k > 0.0 && k.is_finite())) {
                    Some(k) => Err(err("switch.aqm.k", format!("invalid value {k}, expected a coupling factor > 0"))),
                    None => Ok(()),
                }
            }
        }
    }

    /// The marker on the instantaneous queue (kinds "step" and "ramp": the pipeline's ECN
    /// stage) or the AQM (every other kind), as the switch runs them (`mtu`: the fabric's
    /// largest frame).
    pub(in crate::scenario) fn params(&self, mtu: u64) -> (Option<EcnMarker>, Option<AqmParams>) {
        // at enqueue the pipeline's ECN stage runs the marker; at dequeue, switch.aqm's stage
        let marker = |red: Red, drop_non_ect: Option<bool>, at: Option<ecn::MarkAt>, ports: Option<ecn::MarkPorts>| {
            let m = EcnMarker { red, drop_non_ect: drop_non_ect.unwrap_or(ecn::DEFAULT_DROP_NON_ECT), ports: ports.unwrap_or(ecn::DEFAULT_MARK_PORTS) };
            match at.unwrap_or(ecn::DEFAULT_MARK_AT) {
                ecn::MarkAt::Enqueue => (Some(m), None),
                ecn::MarkAt::Dequeue => (None, Some(AqmParams::AtDequeue(m))),
            }
        };
        let required = |b: Option<Bytes>| b.expect("validated").0;
        match self {
            AqmConfig::Step(a) => marker(Red { low: required(a.threshold), high: required(a.threshold), pmax: 1.0 }, a.drop_non_ect, a.at, a.ports),
            AqmConfig::Ramp(a) => marker(Red { low: required(a.kmin), high: required(a.kmax), pmax: a.pmax.unwrap_or(ecn::DEFAULT_PMAX) }, a.drop_non_ect, a.at, a.ports),
            AqmConfig::Fixed(a) => (None, Some(AqmParams::Fixed { p: a.p.expect("validated") })),
            AqmConfig::Red(a) => (None, Some(AqmParams::Red(a.params()))),
            AqmConfig::Pi2(a) => (None, Some(AqmParams::Pi2(a.params()))),
            AqmConfig::Dualpi2(a) => (None, Some(AqmParams::DualPi2(a.params(mtu)))),
            AqmConfig::Dualq2015(a) => (None, Some(AqmParams::DualQ2015(a.params(mtu)))),
            AqmConfig::Coupled(a) => (None, Some(AqmParams::Coupled(Coupled { max: required(a.max), k: a.k.unwrap_or(coupled::DEFAULT_K) }))),
        }
    }
}

/// Refuse a configuration of the AQMs that cannot run, naming the key.
pub(in crate::scenario) fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    s.switch.aqm.as_ref().map_or(Ok(()), |a| a.check(&s.switch))
}
