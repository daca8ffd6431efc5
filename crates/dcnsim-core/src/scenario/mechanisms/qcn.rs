//! `switch.qcn` and `transport.qcn`: the table, the checks of QCN (IEEE 802.1Qau)'s scenario keys and their conversion to the
//! mechanism's parameters.

use crate::sim::units::{Bytes, Duration, Rate};
use super::super::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

/// `switch.qcn`: the congestion point of every switch egress queue (IEEE 802.1Qau, 802.1Q
/// clause 32; see switch/qcn.rs). Sampled data frames make a CNM to their source when
/// Fb = -(Q - q_eq + w (Q - Q_old)) < 0.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "QcnCpConfig::defaults")]
pub struct QcnCpConfig {
    /// Queue set point Q_eq. Default {default}; > 0.
    pub q_eq: Option<Bytes>,
    /// Weight w of the queue's growth in Fb. Default {default}; > 0.
    pub w: Option<f64>,
    /// Bytes between samples with no congestion (fewer, down to 1/8 of it, as |Fb| grows).
    /// Default {default}; > 0.
    pub sample_base: Option<Bytes>,
}

impl QcnCpConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        QcnCpConfig { q_eq: Some(Bytes(qcn::DEFAULT_Q_EQ)), w: Some(qcn::DEFAULT_W), sample_base: Some(Bytes(qcn::DEFAULT_SAMPLE_BASE)), ..Default::default() }
    }
}

/// `transport.qcn`: the reaction point of every NIC flow (IEEE 802.1Qau, 802.1Q clause 32.13;
/// see switch/qcn.rs); the defaults are the 802.1Q MIB's.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "QcnRpConfig::defaults")]
pub struct QcnRpConfig {
    /// Gd: the rate cut per unit of quantised feedback (6 bits). Default {default} (1/128);
    /// in (0, 1].
    pub gd: Option<f64>,
    /// The largest cut per CNM as a fraction of the rate. Default {default}; in (0, 1).
    pub min_decrease: Option<f64>,
    /// Bytes sent per byte-counter cycle (half that after fast recovery). Default {default}; > 0.
    pub byte_counter: Option<Bytes>,
    /// Timer cycle (half that after fast recovery). Default {default}; > 0.
    pub timer: Option<Duration>,
    /// Fast-recovery cycles per counter. Default {default}.
    pub fast_recovery: Option<u32>,
    /// Active increase of the target rate per cycle. Default {default}.
    pub rate_ai: Option<Rate>,
    /// Hyper-active increase step. Default {default}.
    pub rate_hai: Option<Rate>,
    /// The rate a flow is never cut below. Default {default} (the MIB's); > 0.
    pub min_rate: Option<Rate>,
}

impl QcnRpConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        QcnRpConfig {
            gd: Some(qcn::DEFAULT_GD),
            min_decrease: Some(qcn::DEFAULT_MIN_DECREASE),
            byte_counter: Some(Bytes(qcn::DEFAULT_BYTE_COUNTER)),
            timer: Some(Duration(qcn::DEFAULT_TIMER)),
            fast_recovery: Some(qcn::DEFAULT_FAST_RECOVERY),
            rate_ai: Some(Rate(qcn::DEFAULT_RATE_AI)),
            rate_hai: Some(Rate(qcn::DEFAULT_RATE_HAI)),
            min_rate: Some(Rate(qcn::DEFAULT_MIN_RATE)),
            ..Default::default()
        }
    }
}
