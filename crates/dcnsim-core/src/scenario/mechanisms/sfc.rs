//! `switch.sfc`: the checks of SFC (P802.1Qdw)'s scenario keys and their conversion to the
//! mechanism's parameters.

use super::super::*;

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
