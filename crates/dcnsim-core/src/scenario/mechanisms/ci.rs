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
