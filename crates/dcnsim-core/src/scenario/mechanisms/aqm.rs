//! `switch.aqm`: the checks of the AQMs's scenario keys and their conversion to the
//! mechanism's parameters.

use super::super::*;

/// Refuse a configuration of the AQMs that cannot run, naming the key.
pub(in crate::scenario) fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    let nq = sw.queues();
    if let Some(aqm) = &sw.aqm {
        // Each key belongs to the kinds that read it; a key set for another kind is refused
        // rather than silently ignored.
        use AqmKind::*;
        let keys: [(&str, bool, &[AqmKind]); 24] = [
            ("threshold", aqm.threshold.is_some(), &[Step, Dualq2015]),
            ("kmin", aqm.kmin.is_some(), &[Ramp]),
            ("kmax", aqm.kmax.is_some(), &[Ramp]),
            ("pmax", aqm.pmax.is_some(), &[Ramp]),
            ("drop_non_ect", aqm.drop_non_ect.is_some(), &[Step, Ramp]),
            ("p", aqm.p.is_some(), &[Fixed]),
            ("limit", aqm.limit.is_some(), &[Red]),
            ("min", aqm.min.is_some(), &[Red]),
            ("max", aqm.max.is_some(), &[Red, Coupled]),
            ("avpkt", aqm.avpkt.is_some(), &[Red]),
            ("burst", aqm.burst.is_some(), &[Red]),
            ("probability", aqm.probability.is_some(), &[Red]),
            ("bandwidth", aqm.bandwidth.is_some(), &[Red]),
            ("ecn", aqm.ecn.is_some(), &[Red]),
            ("target", aqm.target.is_some(), &[Pi2, Dualpi2]),
            ("tupdate", aqm.tupdate.is_some(), &[Pi2, Dualpi2]),
            ("alpha", aqm.alpha.is_some(), &[Pi2, Dualpi2]),
            ("beta", aqm.beta.is_some(), &[Pi2, Dualpi2]),
            ("k", aqm.k.is_some(), &[Dualpi2, Coupled]),
            ("step", aqm.step.is_some(), &[Dualpi2]),
            ("l_queue", aqm.l_queue.is_some(), &[Dualpi2, Dualq2015]),
            ("c_queue", aqm.c_queue.is_some(), &[Dualpi2, Dualq2015]),
            ("classic_slope", aqm.classic_slope.is_some(), &[Dualq2015]),
            ("l_slope", aqm.l_slope.is_some(), &[Dualq2015]),
        ];
        if let Some((k, _, kinds)) = keys.iter().find(|(_, set, kinds)| *set && !kinds.contains(&aqm.kind)) {
            let names: Vec<String> = kinds.iter().map(|k| format!("\"{}\"", aqm_kind_name(*k))).collect();
            return Err(err(format!("switch.aqm.{k}"), format!("only used with kind = {}, not \"{}\"", names.join(" or "), aqm_kind_name(aqm.kind))));
        }
        match aqm.kind {
            AqmKind::Step => {
                require(aqm.threshold, "switch.aqm.threshold", "DCTCP's step threshold K, e.g. \"30KB\"")?;
            }
            AqmKind::Ramp => {
                let lo = require(aqm.kmin.map(|b| b.0), "switch.aqm.kmin", "the depth where marking starts, e.g. \"10KB\"")?;
                let hi = require(aqm.kmax.map(|b| b.0), "switch.aqm.kmax", "the depth above which every packet is marked, e.g. \"300KB\"")?;
                if lo > hi {
                    return Err(err("switch.aqm.kmin", format!("invalid value {lo} B, expected kmin <= kmax ({hi} B)")));
                }
                if let Some(p) = aqm.pmax {
                    if !(p > 0.0 && p <= 1.0) {
                        return Err(err("switch.aqm.pmax", format!("invalid value {p}, expected a probability in (0, 1]")));
                    }
                }
            }
            AqmKind::Fixed => match aqm.p {
                None => return Err(err("switch.aqm.p", "missing; expected a probability in [0, 1] for kind = \"fixed\"")),
                Some(p) if !(0.0..=1.0).contains(&p) => return Err(err("switch.aqm.p", format!("invalid value {p}, expected a probability in [0, 1]"))),
                Some(_) => {}
            },
            AqmKind::Coupled => {
                let max = require(aqm.max.map(|b| b.0), "switch.aqm.max", "the queue at which the coupled AQM's P reaches 1, e.g. \"100KB\"")?;
                if max == 0 {
                    return Err(err("switch.aqm.max", "invalid value 0 B, expected a size > 0"));
                }
                if aqm.k.is_some_and(|k| !(k > 0.0 && k.is_finite())) {
                    return Err(err("switch.aqm.k", format!("invalid value {}, expected a coupling factor > 0", aqm.k.unwrap())));
                }
            }
            AqmKind::Dualq2015 => {
                let (l, c) = (aqm.l_queue.unwrap_or(dualq2015::DEFAULT_L_QUEUE), aqm.c_queue.unwrap_or(dualq2015::DEFAULT_C_QUEUE));
                if nq != 2 {
                    return Err(err("switch.queues", format!("invalid value {nq} with switch.aqm.kind = \"dualq2015\", expected 2 (its L and Classic queues)")));
                }
                if l >= nq || c >= nq || l == c {
                    return Err(err("switch.aqm.l_queue", format!("invalid value {l} (c_queue {c}), expected two different queues 0..{}", nq - 1)));
                }
                // the seed's DualQ serves L with strict priority: the strict scheduler serves
                // the higher queue index first, DWRR the queues listed in switch.strict
                match sw.scheduler {
                    SchedulerKind::Strict if l < c => {
                        return Err(err("switch.aqm.l_queue", format!("invalid value {l} below c_queue {c} with scheduler = \"strict\", expected the higher queue (strict priority serves it first; the seed's DualQ serves L first)")));
                    }
                    SchedulerKind::Dwrr if !sw.strict.iter().flatten().any(|&q| q as usize == l as usize) => {
                        return Err(err("switch.scheduler", format!("invalid value \"dwrr\" with switch.aqm.kind = \"dualq2015\" and the L queue ({l}) not in switch.strict, expected \"strict\" (the seed's DualQ gives the L queue strict priority)")));
                    }
                    _ => {}
                }
                if sw.ci.is_some() {
                    return Err(err("switch.aqm.kind", "invalid value \"dualq2015\" with switch.ci: both choose the egress queue; expected one of them"));
                }
                if aqm.threshold.map(|b| b.0) == Some(0) {
                    return Err(err("switch.aqm.threshold", "invalid value 0 B, expected a depth > 0"));
                }
                for (k, s) in [("classic_slope", aqm.classic_slope), ("l_slope", aqm.l_slope)] {
                    if let Some(s) = s.filter(|&s| s > dualq2015::MAX_SLOPE) {
                        return Err(err(
                            format!("switch.aqm.{k}"),
                            format!("invalid value {s}, expected a shift in bits 0..{max} (at {max} the probability is 1 from the first ns of delay)", max = dualq2015::MAX_SLOPE),
                        ));
                    }
                }
            }
            AqmKind::Pi2 | AqmKind::Dualpi2 => {
                if aqm.kind == AqmKind::Dualpi2 {
                    let (l, c) = (aqm.l_queue.unwrap_or(dualpi2::DEFAULT_L_QUEUE), aqm.c_queue.unwrap_or(dualpi2::DEFAULT_C_QUEUE));
                    if nq != 2 {
                        return Err(err("switch.queues", format!("invalid value {nq} with switch.aqm.kind = \"dualpi2\", expected 2 (its L and Classic queues)")));
                    }
                    if l >= nq || c >= nq || l == c {
                        return Err(err("switch.aqm.l_queue", format!("invalid value {l} (c_queue {c}), expected two different queues 0..{}", nq - 1)));
                    }
                    if sw.ci.is_some() {
                        return Err(err("switch.aqm.kind", "invalid value \"dualpi2\" with switch.ci: both choose the egress queue; expected one of them"));
                    }
                    if aqm.k.is_some_and(|k| !(k > 0.0 && k.is_finite())) {
                        return Err(err("switch.aqm.k", format!("invalid value {}, expected a coupling factor > 0", aqm.k.unwrap())));
                    }
                    if aqm.step.map(|d| d.0 .0) == Some(0) {
                        return Err(err("switch.aqm.step", "invalid value 0, expected a duration > 0"));
                    }
                }
                for (k, d) in [("target", aqm.target), ("tupdate", aqm.tupdate)] {
                    if d.map(|d| d.0 .0) == Some(0) {
                        return Err(err(format!("switch.aqm.{k}"), "invalid value 0, expected a duration > 0"));
                    }
                }
                for (k, g) in [("alpha", aqm.alpha), ("beta", aqm.beta)] {
                    if let Some(g) = g {
                        if !(g >= 0.0 && g.is_finite()) {
                            return Err(err(format!("switch.aqm.{k}"), format!("invalid value {g}, expected a gain >= 0 (Hz)")));
                        }
                    }
                }
            }
            AqmKind::Red => {
                let min = require(aqm.min.map(|b| b.0), "switch.aqm.min", "the average queue where RED starts marking, e.g. \"120000B\"")?;
                let max = require(aqm.max.map(|b| b.0), "switch.aqm.max", "the average queue where RED marks every packet, e.g. \"360000B\"")?;
                if max <= min {
                    return Err(err("switch.aqm.max", format!("invalid value {max} B, expected more than min ({min} B)")));
                }
                if aqm.avpkt.map(|b| b.0) == Some(0) {
                    return Err(err("switch.aqm.avpkt", "invalid value 0 B, expected a size > 0"));
                }
                if let Some(p) = aqm.probability {
                    if !(p > 0.0 && p <= 1.0) {
                        return Err(err("switch.aqm.probability", format!("invalid value {p}, expected a probability in (0, 1]")));
                    }
                }
                if aqm.bandwidth.map(|r| r.0) == Some(0) {
                    return Err(err("switch.aqm.bandwidth", "invalid value 0 bps, expected a rate > 0"));
                }
                let r = red_params(aqm);
                if r.wlog().is_none() {
                    let need = format!("RED needs burst > min / avpkt - 1 = {} (as tc does)", r.min / r.avpkt.max(1));
                    // an unset burst is derived, (2 min + max) / (3 avpkt): name the key the user set
                    return Err(match (aqm.burst, aqm.avpkt) {
                        (Some(_), _) => err("switch.aqm.burst", format!("invalid value {}: {need}", r.burst)),
                        (None, Some(_)) => err(
                            "switch.aqm.avpkt",
                            format!(
                                "invalid value {} B: the burst it derives, (2 min + max) / (3 avpkt), is {}, and {need}; expected a smaller avpkt, or set burst",
                                r.avpkt, r.burst
                            ),
                        ),
                        (None, None) => err(
                            "switch.aqm.min",
                            format!(
                                "invalid value {min} B: the burst derived from min, max and the default avpkt ({} B), (2 min + max) / (3 avpkt), is {}, and {need}; \
                                 expected thresholds further apart, or set burst",
                                r.avpkt, r.burst
                            ),
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}

pub(in crate::scenario) fn pi2_params(a: &AqmConfig) -> Pi2Params {
    Pi2Params {
        target: a.target.map_or(pi2::DEFAULT_TARGET, |d| d.0),
        tupdate: a.tupdate.map_or(pi2::DEFAULT_TUPDATE, |d| d.0),
        alpha: a.alpha.unwrap_or(pi2::DEFAULT_ALPHA),
        beta: a.beta.unwrap_or(pi2::DEFAULT_BETA),
    }
}

pub(in crate::scenario) fn red_params(c: &AqmConfig) -> RedParams {
    let (min, max) = (c.min.map_or(0, |b| b.0), c.max.map_or(0, |b| b.0));
    let avpkt = c.avpkt.map_or(red::DEFAULT_AVPKT, |b| b.0).max(1);
    RedParams {
        limit: c.limit.map(|b| b.0),
        min,
        max,
        avpkt,
        burst: c.burst.unwrap_or(((2 * min + max) / (3 * avpkt)) as u32),
        probability: c.probability.unwrap_or(red::DEFAULT_PROBABILITY),
        bandwidth_bps: c.bandwidth.map(|r| r.0),
        ecn: c.ecn.unwrap_or(false),
    }
}
