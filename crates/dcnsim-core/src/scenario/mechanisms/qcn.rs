//! `switch.qcn and transport.qcn`: the checks of QCN (IEEE 802.1Qau)'s scenario keys and their conversion to the
//! mechanism's parameters.

use super::super::*;

/// Refuse a configuration of QCN (IEEE 802.1Qau) that cannot run, naming the key.
pub(in crate::scenario) fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    if let Some(t) = &s.transport.qcn {
        if sw.qcn.is_none() {
            return Err(err("transport.qcn", "only used with switch.qcn (the congestion points that send CNMs)"));
        }
        if let Some(g) = t.gd {
            if !(g > 0.0 && g <= 1.0) {
                return Err(err("transport.qcn.gd", format!("invalid value {g}, expected a gain in (0, 1]")));
            }
        }
        if let Some(m) = t.min_decrease {
            if !(m > 0.0 && m < 1.0) {
                return Err(err("transport.qcn.min_decrease", format!("invalid value {m}, expected a fraction in (0, 1)")));
            }
        }
        if t.byte_counter.map(|b| b.0) == Some(0) {
            return Err(err("transport.qcn.byte_counter", "invalid value 0 B, expected a size > 0"));
        }
        if t.timer.map(|d| d.0 .0) == Some(0) {
            return Err(err("transport.qcn.timer", "invalid value 0, expected a duration > 0"));
        }
        if t.min_rate.map(|r| r.0) == Some(0) {
            return Err(err("transport.qcn.min_rate", "invalid value 0 bps, expected a rate > 0"));
        }
    }
    if let Some(q) = &sw.qcn {
        if q.q_eq.map(|b| b.0) == Some(0) {
            return Err(err("switch.qcn.q_eq", "invalid value 0 B, expected a set point > 0"));
        }
        if let Some(w) = q.w {
            if !(w > 0.0 && w.is_finite()) {
                return Err(err("switch.qcn.w", format!("invalid value {w}, expected a weight > 0")));
            }
        }
        if q.sample_base.map(|b| b.0) == Some(0) {
            return Err(err("switch.qcn.sample_base", "invalid value 0 B, expected a size > 0"));
        }
    }
    Ok(())
}

pub(in crate::scenario) fn params(cp: &QcnCpConfig, rp: Option<&QcnRpConfig>) -> QcnParams {
    let rp = rp.cloned().unwrap_or_default();
    QcnParams {
        cp: qcn::CpParams {
            q_eq: cp.q_eq.map_or(qcn::DEFAULT_Q_EQ, |b| b.0),
            w: cp.w.unwrap_or(qcn::DEFAULT_W),
            sample_base: cp.sample_base.map_or(qcn::DEFAULT_SAMPLE_BASE, |b| b.0),
        },
        rp: qcn::RpParams {
            gd: rp.gd.unwrap_or(qcn::DEFAULT_GD),
            min_decrease: rp.min_decrease.unwrap_or(qcn::DEFAULT_MIN_DECREASE),
            byte_counter: rp.byte_counter.map_or(qcn::DEFAULT_BYTE_COUNTER, |b| b.0),
            timer: rp.timer.map_or(qcn::DEFAULT_TIMER, |d| d.0),
            fast_recovery: rp.fast_recovery.unwrap_or(qcn::DEFAULT_FAST_RECOVERY),
            rate_ai_bps: rp.rate_ai.map_or(qcn::DEFAULT_RATE_AI, |r| r.0),
            rate_hai_bps: rp.rate_hai.map_or(qcn::DEFAULT_RATE_HAI, |r| r.0),
            min_rate_bps: rp.min_rate.map_or(qcn::DEFAULT_MIN_RATE, |r| r.0),
        },
    }
}
