//! `switch.ci`: the checks of CI (IEEE 802.1Qcz)'s scenario keys and their conversion to the
//! mechanism's parameters.

use super::super::*;

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
