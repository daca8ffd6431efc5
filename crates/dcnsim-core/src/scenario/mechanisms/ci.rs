//! `switch.ci`: the table, the checks of CI (IEEE 802.1Qcz)'s scenario keys and their conversion to the
//! mechanism's parameters.

use crate::sim::units::{Bytes, Duration};
use super::super::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Refuse a configuration of CI (IEEE 802.1Qcz) that cannot run, naming the key.
pub(in crate::scenario) fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    let nq = sw.queues();
    if let Some(ci) = &sw.ci {
        let q = ci.queue.unwrap_or(ci::DEFAULT_QUEUE);
        let c = ci.congested_queue.unwrap_or(ci::DEFAULT_CONGESTED_QUEUE);
        if q >= nq {
            return Err(err("switch.ci.queue", format!("invalid value {q}, expected a queue 0..{} (switch.queues = {nq})", nq - 1)));
        }
        if c >= nq || c == q {
            return Err(err("switch.ci.congested_queue", format!("invalid value {c}, expected a queue 0..{} other than switch.ci.queue ({q})", nq - 1)));
        }
        if let (Some(lo), Some(hi)) = (ci.low, ci.high) {
            if lo.0 > hi.0 {
                return Err(err("switch.ci.low", format!("invalid value {} B, expected low <= high ({} B)", lo.0, hi.0)));
            }
        }
        if let Some(p) = ci.pmax {
            if !(p > 0.0 && p <= 1.0) {
                return Err(err("switch.ci.pmax", format!("invalid value {p}, expected a probability in (0, 1]")));
            }
        }
        if ci.table_size == Some(0) {
            return Err(err("switch.ci.table_size", "invalid value 0, expected >= 1"));
        }
        if ci.release_after.map(|d| d.0 .0) == Some(0) {
            return Err(err("switch.ci.release_after", "invalid value 0, expected a duration > 0"));
        }
        if ci.max_flow_life.map(|d| d.0 .0) == Some(0) {
            return Err(err("switch.ci.max_flow_life", "invalid value 0, expected a duration > 0"));
        }
        if let Some(b) = ci.cim_encap.filter(|b| b.0 > 512) {
            return Err(err("switch.ci.cim_encap", format!("invalid value {} B, expected 0..512 B (802.1Qcz peer-cim-encap-len)", b.0)));
        }
    }
    Ok(())
}

/// CI's parameters, defaults filled in.
pub(in crate::scenario) fn params(c: &CiConfig) -> CiParams {
    CiParams {
        mode: if c.mode == CiModeConfig::HashDst { CiMode::HashDst } else { CiMode::Isolate },
        queue: c.queue.unwrap_or(ci::DEFAULT_QUEUE) as usize,
        congested_queue: c.congested_queue.unwrap_or(ci::DEFAULT_CONGESTED_QUEUE) as usize,
        isolate: Red { low: c.low.map(|b| b.0).unwrap_or(ci::DEFAULT_LOW), high: c.high.map(|b| b.0).unwrap_or(ci::DEFAULT_HIGH), pmax: c.pmax.unwrap_or(ci::DEFAULT_PMAX) },
        mark: match c.mark.unwrap_or_default() {
            CiMarkConfig::QueueEcn => CiMark::QueueEcn,
            CiMarkConfig::EveryIsolated => CiMark::EveryIsolated,
        },
        table_size: c.table_size.unwrap_or(ci::DEFAULT_TABLE_SIZE) as usize,
        signal: c.signal.unwrap_or(ci::DEFAULT_SIGNAL),
        cip_threshold: c.cip_threshold.map(|b| b.0).unwrap_or(ci::DEFAULT_CIP_THRESHOLD),
        release_after: c.release_after.map(|d| d.0).unwrap_or(ci::DEFAULT_RELEASE_AFTER),
        hosts: c.hosts.unwrap_or(ci::DEFAULT_HOSTS),
        cim_bytes: ci::cim_bytes(c.cim_encap.map(|b| b.0 as u32).unwrap_or(ci::DEFAULT_CIM_ENCAP)),
        cim_max: c.cim_max.unwrap_or(ci::DEFAULT_CIM_MAX),
        cim_release: match c.cim_release {
            None => ci::DEFAULT_CIM_RELEASE,
            Some(CimReleaseConfig::Standard) => CimRelease::Standard,
            Some(CimReleaseConfig::FlowIdle) => CimRelease::FlowIdle,
        },
        max_flow_life: c.max_flow_life.map(|d| d.0).unwrap_or(ci::DEFAULT_MAX_FLOW_LIFE),
    }
}

/// How the CI-managed traffic class is queued.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CiModeConfig {
    /// Congestion Isolation: flows start in `queue`; congested flows are isolated to
    /// `congested_queue`, marked per `mark`, and signalled upstream.
    #[default]
    Isolate,
    /// Seed 003's "without CI" baseline: flows hashed by destination onto `queue` and
    /// `congested_queue` (ECN from switch.aqm on both).
    HashDst,
}

/// Which packets of isolated flows CI CE-marks (seed 003: "ECN is marked once a packet is
/// isolated").
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CiMarkConfig {
    /// The packet whose arrival isolates its flow, then `switch.aqm` (step or ramp) on the
    /// congested queue's depth (no marks there without it).
    #[default]
    QueueEcn,
    /// Every packet of an isolated flow, whatever the congested queue holds.
    EveryIsolated,
}

/// `switch.ci`: Congestion Isolation per IEEE P802.1Qcz as simulated in seeds 000 and 003.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "CiConfig::defaults")]
pub struct CiConfig {
    /// "isolate" (default) or "hash_dst" (the baseline).
    #[serde(default)]
    pub mode: CiModeConfig,
    /// Traffic class whose traffic CI manages and its non-congested queue. Default {default}.
    pub queue: Option<u8>,
    /// The congested queue (same class semantics, separate queue). Default {default}; not `queue`.
    pub congested_queue: Option<u8>,
    /// isolate: non-congested depth where isolation starts. Default {default} (seed); low <= high.
    pub low: Option<Bytes>,
    /// isolate: depth above which every arriving flow is isolated. Default {default} (seed).
    pub high: Option<Bytes>,
    /// isolate: isolation probability at `high`. Default {default} (seed); in (0, 1].
    pub pmax: Option<f64>,
    /// isolate: "queue_ecn" (default: the isolating packet is CE-marked, then `switch.aqm`
    /// marks on the congested queue's depth) or "every_isolated" (every packet of an isolated
    /// flow is CE-marked).
    pub mark: Option<CiMarkConfig>,
    /// isolate: congested-flow table entries per egress port; when full, the least recently
    /// active entry is evicted. Default {default}; >= 1.
    pub table_size: Option<u32>,
    /// isolate: signal isolated flows upstream with CIPs; false = local isolation only (a
    /// degree of conformance in seed 000). Default {default}.
    pub signal: Option<bool>,
    /// isolate: congested-queue depth above which a packet of an isolated flow that arrives in
    /// the non-congested class triggers a CIP to its upstream peer (repeated at most once per
    /// round trip of that link). Default {default}.
    pub cip_threshold: Option<Bytes>,
    /// isolate: release a flow when the congested queue has held none of its packets for this
    /// long. Default {default}; > 0.
    pub release_after: Option<Duration>,
    /// isolate: NICs honour CIPs by moving the flow to the congested queue's class. Default {default}.
    pub hosts: Option<bool>,
    /// isolate: octets of the offending frame a CIM carries (IEEE 802.1Qcz-2023
    /// `min-header-octets`). Default {default} (the standard); 0..512 B. The CIM is 46 B more on
    /// the wire (the 802.1Qau CNM's header, as the CIM's is not public), 64 B at least.
    pub cim_encap: Option<Bytes>,
    /// isolate: CIMs sent at most per congesting flow (802.1Qcz `max-cim-tx`). Default {default} (the
    /// standard); 0 = no limit (one per link round trip while the flow keeps arriving).
    pub cim_max: Option<u32>,
    /// isolate: when entries made by a received CIM are released: "standard" (default,
    /// 802.1Qcz: `max_flow_life` after the congesting queue turns non-congested, below `low`;
    /// NICs: `max_flow_life` after the flow's last CIM) or "flow_idle" (as local entries,
    /// `release_after` after the flow's last packet left; NICs keep the isolation for good).
    pub cim_release: Option<CimReleaseConfig>,
    /// isolate: 802.1Qcz `ci-max-flow-life` (100 centiseconds). Default {default}; > 0.
    pub max_flow_life: Option<Duration>,
}

impl CiConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        CiConfig {
            queue: Some(ci::DEFAULT_QUEUE),
            congested_queue: Some(ci::DEFAULT_CONGESTED_QUEUE),
            low: Some(Bytes(ci::DEFAULT_LOW)),
            high: Some(Bytes(ci::DEFAULT_HIGH)),
            pmax: Some(ci::DEFAULT_PMAX),
            table_size: Some(ci::DEFAULT_TABLE_SIZE),
            signal: Some(ci::DEFAULT_SIGNAL),
            cip_threshold: Some(Bytes(ci::DEFAULT_CIP_THRESHOLD)),
            release_after: Some(Duration(ci::DEFAULT_RELEASE_AFTER)),
            hosts: Some(ci::DEFAULT_HOSTS),
            cim_encap: Some(Bytes(ci::DEFAULT_CIM_ENCAP as u64)),
            cim_max: Some(ci::DEFAULT_CIM_MAX),
            max_flow_life: Some(Duration(ci::DEFAULT_MAX_FLOW_LIFE)),
            ..Default::default()
        }
    }
}

/// When CI entries made by a received CIM are released (`switch.ci.cim_release`).
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CimReleaseConfig {
    /// IEEE 802.1Qcz-2023: `max_flow_life` after the congesting queue turns non-congested.
    #[default]
    Standard,
    /// As entries made locally (`release_after` after the flow's last packet left).
    FlowIdle,
}
