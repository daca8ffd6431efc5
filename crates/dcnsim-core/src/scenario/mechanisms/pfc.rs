//! `switch.pfc`: the table, the checks of PFC (IEEE 802.1Qbb)'s scenario keys and their conversion to the
//! mechanism's parameters.

use crate::sim::units::{Bytes, Duration};
use super::super::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Refuse a configuration of PFC (IEEE 802.1Qbb) that cannot run, naming the key.
pub(in crate::scenario) fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    let nq = sw.queues();
    let b = &sw.buffer;
    if let Some(p) = &sw.pfc {
        match (p.xoff, p.alpha) {
            (Some(_), Some(_)) => return Err(err("switch.pfc.alpha", "give either xoff (static) or alpha (dynamic), not both")),
            (None, None) => return Err(err("switch.pfc.xoff", "missing; expected a threshold such as \"750KB\" (or give alpha)")),
            (None, Some(a)) => {
                if !(a > 0.0 && a.is_finite()) {
                    return Err(err("switch.pfc.alpha", format!("invalid value {a}, expected a number > 0")));
                }
                if b.model != BufferModel::Shared {
                    return Err(err("switch.pfc.alpha", "a dynamic XOFF needs switch.buffer.model = \"shared\"; expected xoff with a static buffer"));
                }
            }
            (Some(x), None) => {
                if x.0 == 0 {
                    return Err(err("switch.pfc.xoff", "invalid value 0 B, expected > 0"));
                }
                if let Some(xon) = p.xon {
                    if xon.0 >= x.0 {
                        return Err(err("switch.pfc.xon", format!("invalid value {} B, expected below xoff ({} B)", xon.0, x.0)));
                    }
                }
            }
        }
        // under a memory architecture packets wait at the inputs: only the per-ingress
        // counters, which count a packet from its arrival, see them
        if sw.architecture.is_some() {
            if p.accounting == PfcAccounting::EgressQueue {
                return Err(err("switch.pfc.accounting", "invalid value \"egress_queue\" with switch.architecture: its thresholds watch the egress queues, where an input-buffered switch keeps few packets; expected \"ingress\" (802.1Qbb per-ingress counters, which follow the input buffers)"));
            }
            if let Some(pool) = b.ingress_pool {
                return Err(err("switch.buffer.ingress_pool", format!("invalid value {} B with switch.architecture: an input-buffered switch keeps its memory at its inputs (per-port buffers, or one pool with input_memory = \"shared\"), which a dynamic XOFF follows there; expected no ingress_pool", pool.0)));
            }
        }
        if p.accounting == PfcAccounting::EgressQueue && p.headroom.is_some() {
            return Err(err("switch.pfc.headroom", "not used with accounting = \"egress_queue\" (the queue above XOFF is the headroom)"));
        }
        if let Some(q) = p.quanta {
            if !(1..=65535).contains(&q) {
                return Err(err("switch.pfc.quanta", format!("invalid value {q}, expected 1..65535")));
            }
        }
        for (i, &c) in p.priorities.iter().flatten().enumerate() {
            if c >= nq {
                return Err(err(format!("switch.pfc.priorities[{i}]"), format!("invalid value {c}, expected a traffic class 0..{} (switch.queues = {nq})", nq - 1)));
            }
        }
        if p.deadlock_after.map(|d| d.0 .0) == Some(0) {
            return Err(err("switch.pfc.deadlock_after", "invalid value 0, expected a duration > 0"));
        }
    }
    Ok(())
}

/// PFC's parameters with the headroom of every switch port (given, or derived from the
/// link), refusing a static XOFF whose headroom does not fit a static queue's share of the
/// switch memory. Used by validate and by the builder alike.
pub(in crate::scenario) fn params(s: &Scenario, topo: &Topology, buffer: &BufferParams) -> Result<Option<PfcParams>, ScenarioError> {
    let sw = &s.switch;
    let Some(p) = sw.pfc.as_ref() else { return Ok(None) };
    let (mtu, nq) = (s.topology.mtu() as u32, sw.queues() as usize);
    let switch_latency = sw.latency.map(|d| d.0).unwrap_or(SimTime::ZERO);
    let is_switch = |n: u32| topo.nodes[n as usize].kind == crate::net::NodeKind::Switch;
    let headroom = topo
        .ports
        .iter()
        .map(|info| {
            if !is_switch(info.node) {
                return 0;
            }
            match p.headroom {
                Some(h) => h.0,
                None => {
                    let up = topo.ports[info.peer as usize].node;
                    let lat = switch_latency.0 * (1 + is_switch(up) as u64);
                    PfcParams::derived_headroom(info.rate_bps, SimTime(2 * info.delay.0 + lat), mtu)
                }
            }
        })
        .collect();
    let classes: Vec<u8> = p.priorities.clone().unwrap_or_else(|| (0..nq as u8).collect());
    let params = PfcParams {
        link_mode: p.mode == PfcMode::Link,
        xoff: match (p.xoff, p.alpha) {
            (Some(x), _) => Xoff::Static(x.0),
            (None, a) => {
                let alpha = a.expect("validate requires xoff or alpha");
                match sw.buffer.ingress_pool {
                    Some(pool) => Xoff::DynamicIngress { alpha, pool: pool.0, guaranteed: sw.buffer.ingress_guaranteed.map_or(DEFAULT_GUARANTEED, |b| b.0) },
                    None => Xoff::Dynamic(alpha),
                }
            }
        },
        xon: p.xon.map(|b| b.0).unwrap_or(pfc::DEFAULT_XON),
        quanta: p.quanta.map_or(pfc::DEFAULT_QUANTA, |q| q as u16),
        lossless: classes.iter().fold(0u8, |m, &c| m | (1 << c)),
        headroom,
        deadlock_after: p.deadlock_after.map(|d| d.0).unwrap_or(pfc::DEFAULT_DEADLOCK_AFTER),
        egress_queue: p.accounting == PfcAccounting::EgressQueue,
    };
    // A static buffer's memory is queue x queues x ports: a lossless class must fit its
    // XOFF and the headroom above it in one queue's share, or PFC would promise more
    // buffer than the switch has.
    if let (BufferParams::Static { queue_cap }, &Xoff::Static(x)) = (buffer, &params.xoff) {
        let h = params.headroom.iter().copied().max().unwrap_or(0);
        if x.saturating_add(h) > *queue_cap {
            return Err(err(
                "switch.pfc.xoff",
                format!(
                    "invalid value {x} B: with the headroom above it ({h} B on the largest link) it exceeds a queue's share of the switch memory \
                     (switch.buffer.queue = {queue_cap} B); expected xoff <= {} B, or a larger queue",
                    queue_cap.saturating_sub(h)
                ),
            ));
        }
    }
    Ok(Some(params))
}

/// Where PFC counts bytes against XOFF/XON.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum PfcAccounting {
    /// IEEE 802.1Qbb: per (ingress port, class) counters with headroom.
    #[default]
    Ingress,
    /// Seeds 000/003 reading ("queue size 1 MB, XOFF 750 KB, XON 4 KB"): thresholds on each
    /// egress queue's depth; the ports feeding it are paused (CI's congested queue pauses the
    /// congested class upstream); the queue never exceeds its size.
    EgressQueue,
}

/// PFC scope.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum PfcMode {
    /// IEEE 802.1Qbb: per traffic class counters and pauses.
    #[default]
    Priority,
    /// IEEE 802.3x link-level PAUSE: one counter per port, a pause stops every class.
    Link,
}

/// `switch.pfc`: Priority-based Flow Control (IEEE 802.1Qbb) with ingress accounting per
/// (ingress port, traffic class), XOFF/XON thresholds and headroom.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "PfcConfig::defaults")]
pub struct PfcConfig {
    /// "priority" (802.1Qbb, default) or "link" (802.3x PAUSE on all classes).
    #[serde(default)]
    pub mode: PfcMode,
    /// "ingress" (802.1Qbb per-ingress counters, default) or "egress_queue" (thresholds on
    /// each egress queue, as seeds 000/003 state them).
    #[serde(default)]
    pub accounting: PfcAccounting,
    /// Static XOFF threshold per (ingress port, class), e.g. "750KB" (seeds 000/003) or "650KB"
    /// (seed 004). Give either xoff or alpha.
    pub xoff: Option<Bytes>,
    /// Dynamic XOFF threshold: alpha x free shared buffer (needs switch.buffer.model = "shared");
    /// at an input-buffered switch (switch.architecture), alpha x the free part of the
    /// ingress port's input buffer (of the switch's input pool with input_memory =
    /// "shared"). > 0.
    pub alpha: Option<f64>,
    /// Send XON when the ingress counter falls to this. Default {default} (seeds 000/003); below
    /// the static xoff.
    pub xon: Option<Bytes>,
    /// Headroom per (ingress port, class) for bytes that arrive after XOFF. Default: derived
    /// per link as the round trip at line rate (propagation both ways plus static switch
    /// latency at each switch end) + 3 x MTU + 64 B (see switch/pfc/mod.rs).
    pub headroom: Option<Bytes>,
    /// Pause quanta (512 bit times each) in an XOFF frame, 1..65535. Default {default}.
    pub quanta: Option<u32>,
    /// Lossless traffic classes (queue indices, 0..7). Default: all.
    pub priorities: Option<Vec<u8>>,
    /// End the run as deadlocked when a cycle of egress queues has been paused on each other
    /// for this long. Default {default}; > 0.
    pub deadlock_after: Option<Duration>,
}

impl PfcConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        PfcConfig {
            xon: Some(Bytes(pfc::DEFAULT_XON)),
            quanta: Some(pfc::DEFAULT_QUANTA as u32),
            deadlock_after: Some(Duration(pfc::DEFAULT_DEADLOCK_AFTER)),
            ..Default::default()
        }
    }
}
