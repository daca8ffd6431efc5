//! `switch.drc`: the table, the checks of DRC (seed 001)'s scenario keys and their conversion to the
//! mechanism's parameters.

use super::super::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Refuse a configuration of DRC (seed 001) that cannot run, naming the key.
pub(in crate::scenario) fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    let nq = sw.queues();
    if let Some(d) = &sw.drc {
        for (key, v) in [("thresholds", &d.thresholds), ("rates", &d.rates)] {
            if let Some(v) = v {
                if v.len() != 3 {
                    return Err(err(format!("switch.drc.{key}"), format!("invalid length {}, expected 3 values (severity 1, 2, 3)", v.len())));
                }
            }
        }
        if let Some(t) = &d.thresholds {
            if !(t.iter().all(|&x| x > 0.0 && x <= 1.0) && t[0] < t[1] && t[1] < t[2]) {
                return Err(err("switch.drc.thresholds", format!("invalid value {t:?}, expected three increasing fills in (0, 1]")));
            }
        }
        if let Some(r) = &d.rates {
            if !(r.iter().all(|&x| (0.0..=1.0).contains(&x)) && r[0] >= r[1] && r[1] >= r[2]) {
                return Err(err("switch.drc.rates", format!("invalid value {r:?}, expected three rate fractions in [0, 1], not increasing")));
            }
        }
        if let Some(h) = d.hysteresis {
            if !(0.0..1.0).contains(&h) {
                return Err(err("switch.drc.hysteresis", format!("invalid value {h}, expected a fill difference in [0, 1)")));
            }
        }
        // a level is kept while fill >= threshold - hysteresis, which an empty queue (fill 0)
        // meets once the hysteresis reaches the threshold: that level would never be left
        let h = d.hysteresis.unwrap_or(drc::DEFAULT_HYSTERESIS);
        let t0 = d.thresholds.as_ref().map_or(drc::DEFAULT_THRESHOLDS[0], |t| t[0]);
        if h >= t0 {
            let (key, v) = if d.hysteresis.is_some() { ("hysteresis", format!("{h}")) } else { ("thresholds", format!("{:?}", d.thresholds.as_ref().unwrap())) };
            return Err(err(
                format!("switch.drc.{key}"),
                format!("invalid value {v}: hysteresis {h} >= the first threshold {t0}, expected hysteresis below every threshold (an empty queue would never leave severity 1)"),
            ));
        }
        if d.input_fill.is_some() && sw.architecture.is_none() {
            return Err(err("switch.drc.input_fill", "given without switch.architecture: an output-queued switch judges each direction by its egress queue; expected switch.architecture, or no input_fill"));
        }
        if let Some(c) = &d.classes {
            if let Some(&q) = c.iter().find(|&&q| q >= nq) {
                return Err(err("switch.drc.classes", format!("invalid class {q}, expected classes 0..{} (switch.queues = {nq})", nq - 1)));
            }
        }
    }
    Ok(())
}

/// `inputs`: per port, the memory its input draws on where its switch is input-buffered
/// (`switch.architecture`; `DrcParams::inputs`).
pub(in crate::scenario) fn params(c: &DrcConfig, inputs: Vec<crate::net::InputMemory>) -> DrcParams {
    let d = DrcParams::default();
    let three = |v: &Option<Vec<f64>>, d: [f64; 3]| v.as_ref().map_or(d, |v| [v[0], v[1], v[2]]);
    DrcParams {
        thresholds: three(&c.thresholds, d.thresholds),
        rates: three(&c.rates, d.rates),
        hysteresis: c.hysteresis.unwrap_or(d.hysteresis),
        classes: c.classes.as_ref().map_or(d.classes, |v| v.iter().fold(0u8, |m, &q| m | (1 << q))),
        inputs,
        input_fill: c.input_fill.unwrap_or_default(),
    }
}

/// `switch.drc`: Directional Rate Control as seed 001 proposes it (see switch/drc.rs):
/// every switch tells its link peers, per egress port (direction), a 2-bit severity from how
/// full that port's queue is; the peers (switch ports and NICs) limit what they send toward
/// each direction and send frames bound elsewhere first. The seed gives no thresholds or
/// rates; the defaults are ours.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "DrcConfig::defaults")]
pub struct DrcConfig {
    /// Fill of a direction's queue (against what the buffer would admit there) at which
    /// severity 1, 2 and 3 start. Default [0.25, 0.5, 0.75]; increasing, in (0, 1].
    pub thresholds: Option<Vec<f64>>,
    /// Fraction of the link rate a peer may send toward a direction at severity 1, 2 and 3
    /// (0 = stop). Default [0.5, 0.25, 0.0]; each in [0, 1], not increasing.
    pub rates: Option<Vec<f64>>,
    /// A severity is left once the fill is this far below its threshold. Default {default}; in
    /// [0, 1) and below the first threshold (else an empty queue would keep severity 1).
    pub hysteresis: Option<f64>,
    /// Rate-controlled traffic classes (the frame's priority mask). Default: all.
    pub classes: Option<Vec<u8>>,
    /// With switch.architecture (input-buffered switches, whose feedback is per (ingress,
    /// direction)): "direction" (what the input holds for that direction against what it
    /// would still admit for it: those bytes and its free room; from a shared input pool,
    /// as far as its VOQ's dynamic threshold lets it grow) or "direction_or_input" (the
    /// larger of what it holds for the direction and of all it holds, against the input
    /// buffer: a full input stops every direction; from a shared pool the direction as
    /// under "direction" and the input against its bytes and the pool's free ones).
    /// Default {default}.
    #[schemars(default = "d_input_fill")]
    pub input_fill: Option<drc::InputFill>,
}

fn d_input_fill() -> Option<drc::InputFill> {
    Some(drc::InputFill::default())
}

impl DrcConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        DrcConfig { hysteresis: Some(drc::DEFAULT_HYSTERESIS), ..Default::default() }
    }
}
