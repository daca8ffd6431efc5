//! `switch.sfc`: the table, the checks of SFC (P802.1Qdw)'s scenario keys and their conversion to the
//! mechanism's parameters.

use crate::sim::units::{Bytes, Duration};
use super::super::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Refuse a configuration of SFC (P802.1Qdw) that cannot run, naming the key.
pub(in crate::scenario) fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    if let Some(sfc) = &sw.sfc {
        let trigger = sfc.trigger.map_or(sfc::DEFAULT_TRIGGER, |b| b.0);
        let target = sfc.target.map_or(sfc::DEFAULT_TARGET, |b| b.0);
        if trigger == 0 {
            return Err(err("switch.sfc.trigger", "invalid value 0 B, expected a depth > 0"));
        }
        if target >= trigger {
            return Err(err("switch.sfc.target", format!("invalid value {target} B, expected a depth below the trigger ({trigger} B)")));
        }
        if sfc.depth.is_some() && sw.architecture.is_none() {
            return Err(err("switch.sfc.depth", "given without switch.architecture: an output-queued switch judges the egress queue the packet joins; expected switch.architecture, or no depth"));
        }
        if sfc.mode == Some(SfcModeConfig::Proxy) && sw.pfc.as_ref().is_some_and(|p| p.mode == PfcMode::Link) {
            return Err(err(
                "switch.sfc.mode",
                "invalid value \"proxy\" with switch.pfc.mode = \"link\": the proxy pauses one traffic class (802.1Qbb), expected \"native\" or PFC mode \"priority\"",
            ));
        }
    }
    Ok(())
}

pub(in crate::scenario) fn params(c: &SfcConfig) -> SfcParams {
    SfcParams {
        depth: c.depth.unwrap_or_default(),
        trigger: c.trigger.map_or(sfc::DEFAULT_TRIGGER, |b| b.0),
        target: c.target.map_or(sfc::DEFAULT_TARGET, |b| b.0),
        suppression: c.suppression.map_or(sfc::DEFAULT_SUPPRESSION, |d| d.0),
        cache: c.cache.unwrap_or_default() == SfcCacheConfig::Tor,
        mode: match c.mode.unwrap_or_default() {
            SfcModeConfig::Native => SfcMode::Native,
            SfcModeConfig::Proxy => SfcMode::Proxy,
        },
    }
}

/// Where SFC keeps a destination cache.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SfcCacheConfig {
    /// At the source's ToR (seed 004: "Destination cache: ToR").
    #[default]
    Tor,
    /// No cache: only the congested switch signals.
    None,
}

/// How sources react to SFC messages.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SfcModeConfig {
    /// The NIC pauses only the named flow (queue pair).
    #[default]
    Native,
    /// The source's ToR turns the message into a PFC PAUSE of the class to the NIC.
    Proxy,
}

/// `switch.sfc`: Source Flow Control (IEEE P802.1Qdw) as seed 004 simulates it: switches
/// signal the sources of packets that join a deep queue to pause for as long as the queue
/// takes to drain to the target (see switch/sfc.rs).
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "SfcConfig::defaults")]
pub struct SfcConfig {
    /// Egress queue depth at or above which an arriving data packet triggers a message to its
    /// source. Default {default} (seed: 2/3 BDP); > target.
    pub trigger: Option<Bytes>,
    /// Depth the pause drains the queue to: pause = (depth - target) x 8 / port rate.
    /// Default {default} (seed: 1/3 BDP; its fairness runs use "64KB").
    pub target: Option<Bytes>,
    /// At most one message per (congested port, flow) per this period. Default {default} (seed:
    /// RTT/2); 0 = no suppression.
    pub suppression: Option<Duration>,
    /// "tor" (default: destination cache at the source's ToR) or "none".
    pub cache: Option<SfcCacheConfig>,
    /// "native" (default: the NIC pauses the flow) or "proxy" (the source's ToR sends the NIC
    /// a PFC PAUSE for the class).
    pub mode: Option<SfcModeConfig>,
    /// With switch.architecture (input-buffered switches, where a packet triggers as it
    /// arrives at its input): the depth judged, "queue" (the VOQ or input FIFO it joins) or
    /// "backlog" (everything bound for its output and class, at every input and at the
    /// output). Default {default}.
    #[schemars(default = "d_depth")]
    pub depth: Option<sfc::SfcDepth>,
}

fn d_depth() -> Option<sfc::SfcDepth> {
    Some(sfc::SfcDepth::default())
}

impl SfcConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        SfcConfig {
            trigger: Some(Bytes(sfc::DEFAULT_TRIGGER)),
            target: Some(Bytes(sfc::DEFAULT_TARGET)),
            suppression: Some(Duration(sfc::DEFAULT_SUPPRESSION)),
            ..Default::default()
        }
    }
}
