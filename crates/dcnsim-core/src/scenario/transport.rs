//! `[transport]` and the transport keys of workloads and flows: which transport and
//! congestion control each flow runs (`kind`, `cc`, resolved by `TransportKind::resolve`),
//! and the TCP, RoCE and UDP parameters every flow of a transport shares.

use super::schema::*;
use crate::sim::units::{Bytes, Duration, Rate};
use super::{err, ScenarioError};
use crate::engine::UdpParams;
use crate::host::cc::dcqcn::{DcqcnParams, DcqcnSettings, PAPER_CNP_INTERVAL, SEED004_CNP_INTERVAL, SEED004_RATE_AI_OF_LINE, SEED004_RATE_HAI_OF_LINE};
use crate::host::cc::bbr::{self, BbrParams, Quantum};
use crate::host::cc::dctcp::{self, DctcpParams};
use crate::host::cc::hpcc::{self, HpccParams};
use crate::host::roce::RoceParams;
use crate::host::cc::nscc::NsccParams;
use crate::host::uet::UetParams;
use crate::host::cc::swift::{self, SwiftParams};
use crate::host::tcp::TcpParams;
use crate::host::cc::timely::{self, TimelyParams};
use crate::host::{RateCcParams, Transport, WindowCcParams, DEFAULT_WINDOW_CC};
use crate::net::Ecn;
use crate::sim::SimTime;
use crate::workload::trace::RowKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The transport and congestion control of the scenario's flows (`[transport]`).
pub(super) fn scenario_transport(s: &Scenario) -> Result<Transport, ScenarioError> {
    let tr = &s.transport;
    TransportKind::resolve(tr.kind, tr.cc, Transport::Tcp(DEFAULT_WINDOW_CC)).map_err(|m| err("transport.cc", m))
}

/// Those of workload `i`'s flows (its `transport` and `cc`, else the scenario's).
pub(super) fn workload_transport(s: &Scenario, i: usize) -> Result<Transport, ScenarioError> {
    let w = &s.workload[i];
    TransportKind::resolve(w.transport, w.cc, scenario_transport(s)?).map_err(|m| err(format!("workload[{i}].cc"), m))
}

/// Those of flow `f`, whose workload's are `of_workload` (checked by [`validate`]).
pub(super) fn flow_transport(f: &FlowEntry, of_workload: Transport) -> Transport {
    TransportKind::resolve(f.transport, f.cc, of_workload).expect("validated")
}

/// Those of the rows of trace kind `k`, whose workload's are `of_workload` (a row's
/// transport and cc resolve over any transport or none: `workload::trace` checks them).
pub(super) fn row_transport(k: &RowKind, of_workload: Transport) -> Transport {
    TransportKind::resolve(k.transport, k.cc, of_workload).expect("validated")
}

/// Every key of the transport layer that names a transport or an algorithm resolves, and
/// so does every listed flow's.
pub(super) fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    scenario_transport(s)?;
    for (i, w) in s.workload.iter().enumerate() {
        let of_workload = workload_transport(s, i)?;
        for (j, f) in w.flows.iter().flatten().enumerate() {
            TransportKind::resolve(f.transport, f.cc, of_workload).map_err(|m| err(format!("workload[{i}].flows[{j}].cc"), m))?;
        }
    }
    validate_values(s)
}

/// Refuse a value of `key` outside (0, 1], saying what it is (`what`: "a gain", ...).
fn in_unit(key: &str, v: Option<f64>, what: &str) -> Result<(), ScenarioError> {
    match v {
        Some(v) if !(v > 0.0 && v <= 1.0) => Err(err(key, format!("invalid value {v}, expected {what} in (0, 1]"))),
        _ => Ok(()),
    }
}

/// The transport's sizes, timers and each algorithm's constants.
fn validate_values(s: &Scenario) -> Result<(), ScenarioError> {
    let mtu = s.topology.mtu();
    let tr = &s.transport;
    let header = tr.header();
    if header >= mtu {
        return Err(err("transport.header", format!("invalid value {header} B, expected less than the MTU ({mtu} B)")));
    }
    match tr.ack_size.map(|b| b.0) {
        Some(0) => return Err(err("transport.ack_size", "invalid value 0 B, expected >= 1B")),
        // an ACK is one frame: a larger one would be sent whole, and slow every reverse path
        Some(a) if a > mtu as u64 => return Err(err("transport.ack_size", format!("invalid value {a} B, expected at most the MTU ({mtu} B)"))),
        _ => {}
    }
    if let Some(b) = tr.udp.nic_buffer {
        if b.0 < s.topology.mtu() {
            return Err(err("transport.udp.nic_buffer", format!("invalid value {} B, expected at least the MTU ({} B)", b.0, s.topology.mtu())));
        }
    }
    if let Some(w) = tr.window {
        if w.0 < s.topology.mtu() {
            return Err(err("transport.window", format!("invalid value {} B, expected at least the MTU ({} B)", w.0, s.topology.mtu())));
        }
    }
    if tr.init_cwnd == Some(0) {
        return Err(err("transport.init_cwnd", "invalid value 0, expected >= 1 packet"));
    }
    // a zero timeout re-arms the timer at the same instant forever ("0.4ps" rounds to 0)
    for (k, d) in [("min_rto", tr.min_rto), ("init_rto", tr.init_rto)] {
        if d.map(|d| d.0 .0) == Some(0) {
            return Err(err(format!("transport.{k}"), "invalid value 0 (durations are whole picoseconds), expected a duration > 0"));
        }
    }
    in_unit("transport.g", tr.g, "a gain")?;
    tr.hpcc.validate()?;
    tr.timely.validate()?;
    tr.swift.validate()?;
    tr.nscc.validate()?;
    if tr.uet.rto.map(|d| d.0 .0) == Some(0) {
        return Err(err("transport.uet.rto", "invalid value 0, expected a duration > 0"));
    }
    if tr.uet.ack_every.map(|b| b.0) == Some(0) {
        return Err(err("transport.uet.ack_every", "invalid value 0 B, expected at least 1B (1B acknowledges every packet)"));
    }
    let dc = &tr.dcqcn;
    in_unit("transport.dcqcn.g", dc.g, "a gain")?;
    for (k, f, rate) in [("rate_ai", dc.rate_ai_fraction, dc.rate_ai.is_some()), ("rate_hai", dc.rate_hai_fraction, dc.rate_hai.is_some())] {
        let Some(f) = f else { continue };
        if !(f > 0.0 && f <= 1.0) {
            return Err(err(format!("transport.dcqcn.{k}_fraction"), format!("invalid value {f}, expected a fraction of the line rate in (0, 1]")));
        }
        if rate {
            return Err(err(format!("transport.dcqcn.{k}_fraction"), format!("give either {k} (a rate) or {k}_fraction (of the line rate), not both")));
        }
    }
    if dc.fast_recovery_steps == Some(0) {
        return Err(err("transport.dcqcn.fast_recovery_steps", "invalid value 0, expected >= 1"));
    }
    for (k, v) in [
        ("byte_counter", dc.byte_counter.map(|b| b.0)),
        ("rate_timer", dc.rate_timer.map(|d| d.0 .0)),
        ("alpha_timer", dc.alpha_timer.map(|d| d.0 .0)),
        ("cnp_interval", dc.cnp_interval.map(|d| d.0 .0)),
        ("min_rate", dc.min_rate.map(|r| r.0)),
    ] {
        if v == Some(0) {
            return Err(err(format!("transport.dcqcn.{k}"), "invalid value 0, expected > 0"));
        }
    }
    if let Some(r) = tr.udp.rate {
        if r.0 == 0 {
            return Err(err("transport.udp.rate", "invalid value \"0bps\", expected a rate > 0"));
        }
    }
    if let Some(p) = tr.udp.packet_size {
        if p.0 == 0 || p.0 > mtu {
            return Err(err("transport.udp.packet_size", format!("invalid value {} B, expected 1B..MTU ({mtu} B)", p.0)));
        }
    }
    Ok(())
}

/// The TCP parameters, with each window-based algorithm's own.
pub(super) fn tcp_params(tr: &TransportConfig, min_rto: SimTime) -> TcpParams {
    TcpParams {
        sack: tr.sack.unwrap_or(DEFAULT_SACK),
        rack: tr.rack.unwrap_or(DEFAULT_RACK),
        init_cwnd: tr.init_cwnd.unwrap_or(DEFAULT_INIT_CWND),
        min_rto,
        init_rto: tr.init_rto.map(|d| d.0).unwrap_or(min_rto),
        classic_ecn: tr.ecn.unwrap_or(false),
        window: tr.window.map(|b| b.0),
        handshake: tr.handshake.unwrap_or(false),
        ect: tr.ect.map(|e| match e {
            EctConfig::Ect0 => Ecn::Ect0,
            EctConfig::Ect1 => Ecn::Ect1,
        }),
        // every algorithm of the list by name (no `..Default::default()`): one added to
        // `window_ccs!` fails to compile here until its table is wired in
        cc: WindowCcParams {
            dctcp: DctcpParams { g: tr.g.unwrap_or(dctcp::DEFAULT_G) },
            // NewReno and CUBIC take no parameters
            reno: (),
            cubic: (),
            swift: (&tr.swift.params()).into(),
            bbr: tr.bbr.params(),
            #[cfg(test)]
            stand_in: Default::default(),
        },
    }
}

/// The UDP sources' parameters.
pub(super) fn udp_params(tr: &TransportConfig, mtu: u32) -> UdpParams {
    UdpParams {
        rate_bps: tr.udp.rate.map(|r| r.0),
        arrivals: tr.udp.arrivals,
        sizes: tr.udp.sizes,
        packet_size: tr.udp.packet_size.map(|b| b.0 as u32).unwrap_or(mtu),
        nic_buffer: tr.udp.nic_buffer.map(|b| b.0),
    }
}

/// The RoCE parameters: DCQCN's from its preset with the scenario's overrides (line rate
/// set per flow), the other rate-based algorithms' from their tables.
pub(super) fn roce_params(tr: &TransportConfig, rto: SimTime) -> RoceParams {
    let c = &tr.dcqcn;
    // the line rate is each flow's, so a preset's increase steps that are fractions of it
    // are resolved per flow (RoceSender::new)
    let (mut p, cnp, window, of_line) = match c.preset {
        DcqcnPreset::Seed004 => (DcqcnParams::seed004(0), SEED004_CNP_INTERVAL, Some(SimTime::from_us(15)), (Some(SEED004_RATE_AI_OF_LINE), Some(SEED004_RATE_HAI_OF_LINE))),
        DcqcnPreset::Paper => (DcqcnParams::paper(0), PAPER_CNP_INTERVAL, None, (None, None)),
    };
    // a rate given in the scenario replaces the preset's step, fraction or not
    let ai_of_line = c.rate_ai_fraction.or(of_line.0.filter(|_| c.rate_ai.is_none()));
    let hai_of_line = c.rate_hai_fraction.or(of_line.1.filter(|_| c.rate_hai.is_none()));
    if let Some(g) = c.g {
        p.g = g;
    }
    if let Some(f) = c.fast_recovery_steps {
        p.fast_recovery_steps = f;
    }
    if let Some(b) = c.byte_counter {
        p.byte_counter = b.0;
    }
    if let Some(t) = c.rate_timer {
        p.rate_timer = t.0;
    }
    if let Some(t) = c.alpha_timer {
        p.alpha_timer = t.0;
    }
    if let Some(r) = c.rate_ai {
        p.rate_ai_bps = r.0;
    }
    if let Some(r) = c.rate_hai {
        p.rate_hai_bps = r.0;
    }
    if let Some(r) = c.min_rate {
        p.min_rate_bps = r.0;
    }
    let window = match c.window {
        Some(w) if w.0 .0 == 0 => None,
        Some(w) => Some(w.0),
        None => window,
    };
    let dcqcn = DcqcnSettings { rp: p, increase_of_line: (ai_of_line, hai_of_line) };
    RoceParams { cc: RateCcParams { dcqcn, hpcc: tr.hpcc.params(), timely: tr.timely.params(), swift: (&tr.swift.params()).into() }, cnp_interval: c.cnp_interval.map(|d| d.0).unwrap_or(cnp), window, rto }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{CcName, RateCcKind, WindowCc};

    fn kind(s: &str) -> Option<TransportKind> {
        Some(TransportKind::from_name(s).unwrap())
    }
    fn cc(s: &str) -> Option<CcName> {
        Some(CcName::from_name(s).unwrap())
    }

    /// The transport and its congestion control, from either key or both, with what is
    /// inherited where they say nothing; the names scenarios wrote before `cc` still mean
    /// what they meant.
    #[test]
    fn kind_and_cc_resolve_to_one_transport() {
        let tcp = |c| Transport::Tcp(c);
        let dcqcn = Transport::Roce(RateCcKind::Dcqcn);
        let base = tcp(DEFAULT_WINDOW_CC);
        let r = |k, c, inherit| TransportKind::resolve(k, c, inherit);
        assert_eq!(r(None, None, base), Ok(tcp(WindowCc::Dctcp)));
        for (legacy, t) in [("dctcp", tcp(WindowCc::Dctcp)), ("reno", tcp(WindowCc::Reno)), ("cubic", tcp(WindowCc::Cubic)), ("dcqcn", dcqcn), ("udp", Transport::Udp)] {
            assert_eq!(r(kind(legacy), None, base), Ok(t), "{legacy}");
            assert_eq!(t.name(), legacy);
        }
        assert_eq!(r(kind("tcp"), cc("cubic"), base), Ok(tcp(WindowCc::Cubic)));
        assert_eq!(r(kind("roce"), None, base), Ok(dcqcn));
        assert_eq!(r(kind("roce"), cc("dcqcn"), base), Ok(dcqcn));
        assert_eq!(r(None, cc("reno"), base), Ok(tcp(WindowCc::Reno)));
        assert_eq!(r(None, cc("dcqcn"), base), Ok(dcqcn));
        assert_eq!(r(kind("cubic"), cc("cubic"), base), Ok(tcp(WindowCc::Cubic)));
        // "tcp" alone keeps an inherited window algorithm, and takes the default over roce
        assert_eq!(r(kind("tcp"), None, tcp(WindowCc::Reno)), Ok(tcp(WindowCc::Reno)));
        assert_eq!(r(kind("tcp"), None, dcqcn), Ok(tcp(DEFAULT_WINDOW_CC)));
        assert_eq!(r(None, None, dcqcn), Ok(dcqcn));
        // what cannot be: each error names the value and what was expected
        let e = r(kind("tcp"), cc("dcqcn"), base).unwrap_err();
        assert!(e.contains("\"dcqcn\"") && e.contains("over tcp") && e.contains("\"reno\""), "{e}");
        let e = r(kind("roce"), cc("cubic"), base).unwrap_err();
        assert!(e.contains("\"cubic\"") && e.contains("over roce") && e.contains("\"dcqcn\""), "{e}");
        let e = r(kind("udp"), cc("reno"), base).unwrap_err();
        assert!(e.contains("\"reno\"") && e.contains("UDP"), "{e}");
        let e = r(kind("cubic"), cc("reno"), base).unwrap_err();
        assert!(e.contains("\"reno\"") && e.contains("\"cubic\"") && e.contains("\"tcp\""), "{e}");
    }

    /// Scenario files: the old spelling and the new keys build the same flows (each
    /// workload's and each flow entry's own keys over the scenario's), and run them alike.
    #[test]
    fn old_spelling_and_new_keys_run_alike() {
        let text = |tr: &str, w: &str, f: &str| {
            format!(
                r#"
[scenario]
name = "x"
max_time = "200us"
[topology]
kind = "dumbbell"
senders = 3
host_link = {{ rate = "10Gbps", delay = "1us" }}
bottleneck = {{ rate = "10Gbps", delay = "1us" }}
[transport]
{tr}
[[workload]]
kind = "flows"
{w}
flows = [{{ src = 0, dst = 3, size = "100KB" }}, {{ src = 1, dst = 3, size = "100KB" {f} }}, {{ src = 2, dst = 3, size = "100KB", transport = "udp" }}]
"#
            )
        };
        let run = |t: String| {
            let (_, mut sim) = crate::scenario::load(&t, false, None, &crate::scenario::RunOptions { seed: None, check_invariants: true, ..Default::default() }).unwrap();
            sim.keep_flow_records();
            sim.run();
            let kinds: Vec<&str> = sim.flow_records().iter().map(|f| f.transport.name()).collect::<Vec<_>>();
            let r = sim.results();
            (kinds.join(","), r.summary.to_string(), r.flows.u64("fct_ps").to_vec())
        };
        let old = run(text("kind = \"cubic\"", "", ", transport = \"reno\""));
        assert_eq!(old.0, "cubic,reno,udp");
        assert_eq!(run(text("kind = \"tcp\"\ncc = \"cubic\"", "", ", transport = \"tcp\"")).0, "cubic,cubic,udp", "\"tcp\" alone keeps the workload's algorithm");
        assert_eq!(run(text("cc = \"cubic\"", "", ", transport = \"reno\"")), old);
        assert_eq!(run(text("", "transport = \"tcp\"\ncc = \"cubic\"", ", transport = \"reno\"")), old);
        let roce = run(text("kind = \"roce\"", "", ""));
        assert_eq!(roce.0, "dcqcn,dcqcn,udp");
        assert_eq!(run(text("kind = \"dcqcn\"", "", "")), roce);
        // a flow's own cc, alone or beside its transport
        assert_eq!(run(text("kind = \"cubic\"", "", ", cc = \"reno\"")).0, "cubic,reno,udp");
        assert_eq!(run(text("kind = \"cubic\"", "", ", transport = \"roce\", cc = \"hpcc\"")).0, "cubic,hpcc,udp");
        let bad = crate::scenario::load(&text("", "", ", transport = \"udp\", cc = \"reno\""), false, None, &Default::default()).err().unwrap();
        assert_eq!(bad.key, "workload[0].flows[1].cc");
        assert!(bad.message.contains("UDP runs no congestion control"), "{bad}");
    }

    /// transport.dcqcn: the paper's constants unless a preset or a key says otherwise; seed
    /// 004's preset takes R_AI and R_HAI as fractions of each flow's line rate, and a rate or
    /// a fraction given in the scenario replaces the preset's step.
    #[test]
    fn dcqcn_increase_steps_from_preset_rate_or_fraction() {
        let rto = SimTime::from_ms(1);
        let cfg = |text: &str| -> TransportConfig { TransportConfig { dcqcn: toml::from_str(text).unwrap(), ..Default::default() } };
        let r = roce_params(&cfg(""), rto);
        assert_eq!(r.cc.dcqcn.rp, DcqcnParams::paper(0));
        assert_eq!((r.cnp_interval, r.window, r.cc.dcqcn.increase_of_line), (PAPER_CNP_INTERVAL, None, (None, None)));
        let r = roce_params(&cfg("preset = \"seed004\""), rto);
        assert_eq!(r.cc.dcqcn.increase_of_line, (Some(0.0125), Some(0.025)));
        assert_eq!((r.cnp_interval, r.window), (SimTime::from_us(4), Some(SimTime::from_us(15))));
        let r = roce_params(&cfg("preset = \"seed004\"\nrate_ai = \"12.5Mbps\""), rto);
        assert_eq!((r.cc.dcqcn.rp.rate_ai_bps, r.cc.dcqcn.increase_of_line), (12_500_000, (None, Some(0.025))));
        let r = roce_params(&cfg("rate_ai_fraction = 0.0125\nrate_hai = \"25Mbps\""), rto);
        assert_eq!((r.cc.dcqcn.rp.rate_hai_bps, r.cc.dcqcn.increase_of_line), (25_000_000, (Some(0.0125), None)));
    }
}

/// Which published DCQCN constants to start from.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum DcqcnPreset {
    /// The DCQCN paper (Zhu et al., SIGCOMM 2015): F = 5, g = 1/256, byte counter 10 MiB,
    /// timers 55 us, AI 40 Mbps, hyper AI 200 Mbps, CNP every 50 us, no window.
    #[default]
    Paper,
    /// Seed 004 (Intel SFC study, 2022): F = 1, g = 0.0009813, byte counter 2 MiB, timer 4 us,
    /// alpha timer 5 us, AI 0.0125 and hyper AI 0.025 of the line rate (1.25 and 2.5 Gbps at
    /// 100 Gbps), CNP every 4 us, window 15 us.
    Seed004,
}

/// `transport.dcqcn`: every key overrides the preset.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "DcqcnConfig::defaults")]
pub struct DcqcnConfig {
    /// "paper" (default) or "seed004".
    #[serde(default)]
    pub preset: DcqcnPreset,
    /// Alpha EWMA gain, in (0, 1].
    pub g: Option<f64>,
    /// Fast-recovery steps F, >= 1.
    pub fast_recovery_steps: Option<u32>,
    /// Bytes sent per byte-counter increase event, > 0.
    pub byte_counter: Option<Bytes>,
    /// Period of the rate-increase timer, > 0.
    pub rate_timer: Option<Duration>,
    /// Period of the alpha decay timer, > 0.
    pub alpha_timer: Option<Duration>,
    /// Additive increase step R_AI, a rate; not with rate_ai_fraction.
    pub rate_ai: Option<Rate>,
    /// Hyper increase step R_HAI, a rate; not with rate_hai_fraction.
    pub rate_hai: Option<Rate>,
    /// R_AI as a fraction of each sender's line rate, in (0, 1]; not with rate_ai. Seed 004
    /// writes "AI: 0.0125" without a unit: 0.0125 here is 1.25 Gbit/s at 100 Gbit/s, where
    /// rate_ai = "12.5Mbps" reads it in Gbit/s.
    pub rate_ai_fraction: Option<f64>,
    /// R_HAI as a fraction of each sender's line rate, in (0, 1]; not with rate_hai (seed
    /// 004's "Hyper AI: 0.025").
    pub rate_hai_fraction: Option<f64>,
    /// Lowest sending rate. Default {default}.
    pub min_rate: Option<Rate>,
    /// Notification point: at most one CNP per flow per this interval.
    pub cnp_interval: Option<Duration>,
    /// Cap on bytes in flight, as a time at the host line rate (HPCC's "initial window"
    /// variant; seed 004: "15us"). "0ns" turns the cap off.
    pub window: Option<Duration>,
}

impl DcqcnConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        DcqcnConfig { min_rate: Some(Rate(crate::host::cc::dcqcn::DEFAULT_MIN_RATE)), ..Default::default() }
    }
}

/// `transport.hpcc`: HPCC's constants (Li et al., SIGCOMM 2019, sec. 3.3; see host/cc/hpcc.rs),
/// for flows with `cc = "hpcc"` over roce. HPCC reads the telemetry `switch.int` writes.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "HpccConfig::defaults")]
pub struct HpccConfig {
    /// eta, the target utilization of the most loaded link. Default {default} (sec. 3.3); in
    /// (0, 1].
    pub eta: Option<f64>,
    /// maxStage, the additive-increase rounds before a multiplicative one. Default {default}
    /// (sec. 3.3; the HPCC authors' ns-3 run.py uses 0).
    pub max_stage: Option<u32>,
    /// W_AI / T as a fraction of the flow's line rate. Default {default} (the authors' ns-3
    /// run.py: 10 Mb/s per 25 Gb/s, i.e. W_AI = W_init (1 - eta) / 125); in (0, 1].
    pub rate_ai_fraction: Option<f64>,
    /// The rate a flow is never cut below. Default {default} (the ns-3 fork's RdmaHw
    /// MinRate); > 0.
    pub min_rate: Option<Rate>,
    /// T, the base RTT of the window R T and of the utilization's time scale. Default: the
    /// fabric's largest base RTT, a full-size packet and its ACK over the idle path (the
    /// fork's GLOBAL_T); > 0.
    pub base_rtt: Option<Duration>,
}

impl HpccConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        HpccConfig {
            eta: Some(hpcc::DEFAULT_ETA),
            max_stage: Some(hpcc::DEFAULT_MAX_STAGE),
            rate_ai_fraction: Some(hpcc::DEFAULT_RATE_AI_OF_LINE),
            min_rate: Some(Rate(hpcc::DEFAULT_MIN_RATE)),
            base_rtt: None,
        }
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        in_unit("transport.hpcc.eta", self.eta, "a fraction")?;
        in_unit("transport.hpcc.rate_ai_fraction", self.rate_ai_fraction, "a fraction")?;
        if self.min_rate.map(|r| r.0) == Some(0) {
            return Err(err("transport.hpcc.min_rate", "invalid value \"0bps\", expected a rate > 0"));
        }
        if self.base_rtt.map(|d| d.0 .0) == Some(0) {
            return Err(err("transport.hpcc.base_rtt", "invalid value 0, expected a duration > 0"));
        }
        Ok(())
    }

    fn params(&self) -> HpccParams {
        let d = HpccParams::default();
        HpccParams {
            eta: self.eta.unwrap_or(d.eta),
            max_stage: self.max_stage.unwrap_or(d.max_stage),
            rate_ai_of_line: self.rate_ai_fraction.unwrap_or(d.rate_ai_of_line),
            min_rate_bps: self.min_rate.map_or(d.min_rate_bps, |r| r.0),
            base_rtt: self.base_rtt.map(|d| d.0),
        }
    }
}

/// `transport.uet`: the UET transport's timer and ACK coalescing (host/uet.rs), for flows
/// with `kind = "uet"`.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "UetConfig::defaults")]
pub struct UetConfig {
    /// The retransmission timeout, from a packet's send time (fixed, no back-off, as the
    /// UEC's htsim has it). Default: as htsim derives it, 15 us plus the time six full
    /// switch queues take to drain at the sender's line rate (a static buffer's queue, or
    /// what the dynamic threshold lets one queue of a shared buffer hold); > 0.
    pub rto: Option<Duration>,
    /// ACK coalescing at the receiver: an ACK once this many bytes (on the wire) arrived
    /// since the last, and at once for a CE-marked packet, the flow's first, a duplicate,
    /// one whose sender asks for it (UE's AR flag: its last new packet, a resend, a packet
    /// that fills its window or spends its credit) and, after such a request, when the
    /// packets missing below it have come (the UEC's htsim, `UecSink::processData`, and its
    /// threshold). 1B acknowledges every packet. Default {default}; at least 1B.
    pub ack_every: Option<Bytes>,
    /// The selective acknowledgement an ACK carries: "bitmap" (UE Specification 1.0's
    /// 64-packet SACK bitmap, built as the UEC's htsim does: the 64 packets ending at the
    /// ACK's own, none at or below the first missing one, or the 64 from it for a CE-marked
    /// packet or a new one with AR) or "ranges" (up to three byte ranges above the
    /// cumulative point, the ACK's own packet's first, as TCP's SACK blocks). They differ
    /// only where an ACK answers several packets (`ack_every`) or is lost. Default {default}.
    pub sack: Option<UetSack>,
    /// What the sender counts as in flight against NSCC's window: "acknowledged" (what no
    /// ACK has acknowledged or reported lost, as a TCP sender counts) or "received" (UE
    /// Specification 1.0's ACK_CC `rcvd_bytes`, as the UEC's htsim has it: every ACK carries
    /// the receiver's count of bytes taken, and the sender takes its increase off what is
    /// in flight and gives it to NSCC as the bytes delivered, so held packets an ACK's SACK
    /// does not report yet free the window). They differ where packets the receiver holds
    /// go unreported for a while: ACKs answering several packets (`ack_every`), an AR's
    /// bitmap starting at its own packet, a lost ACK, with packets lost or reordered.
    /// Default {default}.
    pub in_flight: Option<UetInFlight>,
}

impl UetConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`); the timer's
    /// depends on the fabric.
    fn defaults() -> Self {
        UetConfig {
            rto: None,
            ack_every: Some(Bytes(crate::host::uet::ACK_EVERY_DEFAULT as u64)),
            sack: Some(UetSack::default()),
            in_flight: Some(UetInFlight::default()),
        }
    }
}

/// `transport.uet.sack`: how a UET ACK reports the packets held above its cumulative point.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UetSack {
    /// Up to three byte ranges, the most recent first (RFC 2018's blocks).
    Ranges,
    /// UE's 64-packet SACK bitmap (host/uet.rs `UetSender::sack_bitmap`).
    #[default]
    Bitmap,
}

/// `transport.uet.in_flight`: how a UET sender counts its bytes in flight.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UetInFlight {
    /// Sent, and neither acknowledged nor reported lost.
    Acknowledged,
    /// Sent, less what the receiver reports taking (host/uet.rs `Received`). The default:
    /// it is what UE 1.0's ACK_CC `rcvd_bytes` field is for, and what the UEC's htsim does.
    #[default]
    Received,
}

/// 15 us of `UetConfig::rto`'s default (htsim main_uec.cpp: "15us + 6 full queues").
pub const UET_RTO_BASE: SimTime = SimTime::from_us(15);
/// The full queues of `UetConfig::rto`'s default.
pub const UET_RTO_QUEUES: u64 = 6;

/// `transport.nscc`: NSCC's constants (host/cc/nscc.rs), for flows with `cc = "nscc"`.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "NsccConfig::defaults")]
pub struct NsccConfig {
    /// The target queueing delay. Default: 0.75 of the fabric's largest base RTT with
    /// `switch.trim`, one base RTT without (the UEC's htsim); > 0.
    pub target: Option<Duration>,
    /// The largest window, which is also the first, in BDPs of the fabric's largest base RTT
    /// at the sender's line rate. Default {default}; > 0.
    pub max_window: Option<f64>,
    /// The multiplicative decrease's gain. Default {default}; in (0, 1].
    pub gamma: Option<f64>,
    /// Quick adapt acts only when less than max_window / 2^qa_gate was acknowledged in its
    /// period. Default {default}.
    pub qa_gate: Option<u32>,
}

impl NsccConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        let d = NsccParams::defaults(false);
        NsccConfig { target: None, max_window: Some(d.max_window_bdp), gamma: Some(d.gamma), qa_gate: Some(d.qa_gate) }
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        in_unit("transport.nscc.gamma", self.gamma, "a gain")?;
        if self.target.map(|d| d.0 .0) == Some(0) {
            return Err(err("transport.nscc.target", "invalid value 0, expected a duration > 0"));
        }
        match self.max_window {
            Some(w) if !(w > 0.0 && w.is_finite()) => Err(err("transport.nscc.max_window", format!("invalid value {w}, expected a number of BDPs > 0"))),
            _ => Ok(()),
        }
    }

    /// NSCC's parameters on a fabric whose switches trim (`trimming`) or not.
    pub(super) fn params(&self, trimming: bool) -> NsccParams {
        let d = NsccParams::defaults(trimming);
        NsccParams {
            target: self.target.map(|t| t.0),
            trimming,
            qa_gate: self.qa_gate.unwrap_or(d.qa_gate),
            gamma: self.gamma.unwrap_or(d.gamma),
            max_window_bdp: self.max_window.unwrap_or(d.max_window_bdp),
        }
    }
}

/// The UET parameters: NSCC's, and the timer (`rto_default` where the scenario gives none).
pub(super) fn uet_params(tr: &TransportConfig, trimming: bool, rto_default: SimTime) -> UetParams {
    UetParams {
        nscc: tr.nscc.params(trimming),
        rto: tr.uet.rto.map_or(rto_default, |d| d.0),
        path: tr.path.unwrap_or(crate::host::path::PathChoice::Spray),
        ack_every: tr.uet.ack_every.map_or(crate::host::uet::ACK_EVERY_DEFAULT, |b| b.0.min(u32::MAX as u64) as u32),
        sack_bitmap: tr.uet.sack.unwrap_or_default() == UetSack::Bitmap,
        in_flight_received: tr.uet.in_flight.unwrap_or_default() == UetInFlight::Received,
    }
}

/// `transport.timely`: TIMELY's constants (Mittal et al., SIGCOMM 2015, Table 1; see
/// host/cc/timely.rs), for flows with `cc = "timely"` over roce.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "TimelyConfig::defaults")]
pub struct TimelyConfig {
    /// EWMA weight of a new RTT difference. Default {default}; in (0, 1].
    pub alpha: Option<f64>,
    /// Multiplicative decrease factor. Default {default}; in (0, 1].
    pub beta: Option<f64>,
    /// Below this RTT the rate increases whatever the gradient. Default {default}; > 0.
    pub t_low: Option<Duration>,
    /// Above this RTT the rate is cut by beta (1 - t_high / rtt). Default {default}; above
    /// t_low.
    pub t_high: Option<Duration>,
    /// The gradient's normalizer. Default {default}; > 0.
    pub min_rtt: Option<Duration>,
    /// The additive step delta as a fraction of the flow's line rate. Default {default}
    /// (10 Mb/s at 10 Gb/s); in (0, 1].
    pub delta_fraction: Option<f64>,
    /// The rate a flow is never cut below. Default {default}; > 0.
    pub min_rate: Option<Rate>,
    /// When the rate updates: unset, once per round trip (the HPCC authors' ns-3 fork);
    /// a size, once per completion of that many acknowledged bytes, with the completing
    /// ACK's RTT (the paper's completion events of 16-64 KB, so a faster flow updates more
    /// often; Zhu et al., CoNEXT 2016, trace TIMELY's unfairness to this). > 0.
    pub segment: Option<Bytes>,
}

impl TimelyConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        TimelyConfig {
            alpha: Some(timely::DEFAULT_ALPHA),
            beta: Some(timely::DEFAULT_BETA),
            t_low: Some(Duration(timely::DEFAULT_T_LOW)),
            t_high: Some(Duration(timely::DEFAULT_T_HIGH)),
            min_rtt: Some(Duration(timely::DEFAULT_MIN_RTT)),
            delta_fraction: Some(timely::DEFAULT_DELTA_OF_LINE),
            min_rate: Some(Rate(timely::DEFAULT_MIN_RATE)),
            segment: None,
        }
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        for (k, v) in [("alpha", self.alpha), ("beta", self.beta), ("delta_fraction", self.delta_fraction)] {
            in_unit(&format!("transport.timely.{k}"), v, "a fraction")?;
        }
        for (k, v) in [("t_low", self.t_low), ("t_high", self.t_high), ("min_rtt", self.min_rtt)] {
            if v.map(|d| d.0 .0) == Some(0) {
                return Err(err(format!("transport.timely.{k}"), "invalid value 0, expected a duration > 0"));
            }
        }
        let p = self.params();
        if p.t_high <= p.t_low {
            return Err(err("transport.timely.t_high", format!("invalid value {}, expected more than t_low ({})", p.t_high, p.t_low)));
        }
        if self.min_rate.map(|r| r.0) == Some(0) {
            return Err(err("transport.timely.min_rate", "invalid value \"0bps\", expected a rate > 0"));
        }
        if self.segment.map(|b| b.0) == Some(0) {
            return Err(err("transport.timely.segment", "invalid value \"0B\", expected a size > 0"));
        }
        Ok(())
    }

    fn params(&self) -> TimelyParams {
        let d = TimelyParams::default();
        TimelyParams {
            alpha: self.alpha.unwrap_or(d.alpha),
            beta: self.beta.unwrap_or(d.beta),
            t_low: self.t_low.map_or(d.t_low, |t| t.0),
            t_high: self.t_high.map_or(d.t_high, |t| t.0),
            min_rtt: self.min_rtt.map_or(d.min_rtt, |t| t.0),
            delta_of_line: self.delta_fraction.unwrap_or(d.delta_of_line),
            min_rate_bps: self.min_rate.map_or(d.min_rate_bps, |r| r.0),
            segment: self.segment.map(|b| b.0),
        }
    }
}

/// `transport.bbr`: BBR v1's one reading to choose (host/cc/bbr.rs); its constants are Linux's.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "BbrConfig::defaults")]
pub struct BbrConfig {
    /// The send quantum of the window's quantization budget (3 quanta above the BDP target):
    /// "tso", Linux's TSO autosizing (min(pacing rate x 1 ms, 64 KB), as tcp_bbr.c's
    /// bbr_tso_segs_goal), or "segment", one segment (ns-3's TcpBbr; a host without TSO).
    /// Default {default}.
    pub quantum: Option<BbrQuantumConfig>,
}

/// BBR's send quantum (`transport.bbr.quantum`).
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BbrQuantumConfig {
    /// Linux's TSO autosizing.
    Tso,
    /// One segment.
    Segment,
}

impl BbrConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        BbrConfig { quantum: Some(match bbr::DEFAULT_QUANTUM {
            Quantum::Tso => BbrQuantumConfig::Tso,
            Quantum::Segment => BbrQuantumConfig::Segment,
        }) }
    }

    fn params(&self) -> BbrParams {
        BbrParams {
            quantum: match self.quantum {
                None => bbr::DEFAULT_QUANTUM,
                Some(BbrQuantumConfig::Tso) => Quantum::Tso,
                Some(BbrQuantumConfig::Segment) => Quantum::Segment,
            },
        }
    }
}

/// `transport.swift`: Swift's constants (Kumar et al., SIGCOMM 2020; see host/cc/swift.rs),
/// for flows with `cc = "swift"` over tcp or roce. The paper leaves most values out; the defaults
/// are htsim's (csg-htsim sim/swift.cpp).
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "SwiftConfig::defaults")]
pub struct SwiftConfig {
    /// The target delay with no hop or flow scaling. Default {default}; > 0.
    pub base_target: Option<Duration>,
    /// Target added per switch hop of the path. Default: base_target / 6.55.
    pub hop_scale: Option<Duration>,
    /// The flow-scaling term's range (largest at a window of 0.1 packets, 0 at 100).
    /// Default: 5 x base_target.
    pub fs_range: Option<Duration>,
    /// Additive increase, packets per window of ACKs. Default {default}; > 0.
    pub ai: Option<f64>,
    /// Multiplicative decrease factor on the delay above target. Default {default}; in (0, 1].
    pub beta: Option<f64>,
    /// The largest cut at once. Default {default}; in (0, 1).
    pub max_mdf: Option<f64>,
}

impl SwiftConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        SwiftConfig {
            base_target: Some(Duration(swift::DEFAULT_BASE_TARGET)),
            ai: Some(swift::DEFAULT_AI),
            beta: Some(swift::DEFAULT_BETA),
            max_mdf: Some(swift::DEFAULT_MAX_MDF),
            ..Default::default()
        }
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        // (hop_scale and fs_range may be 0: no hop or flow scaling)
        if self.base_target.map(|d| d.0 .0) == Some(0) {
            return Err(err("transport.swift.base_target", "invalid value 0, expected a duration > 0"));
        }
        if let Some(a) = self.ai.filter(|a| !(*a > 0.0 && a.is_finite())) {
            return Err(err("transport.swift.ai", format!("invalid value {a}, expected a number of packets > 0")));
        }
        in_unit("transport.swift.beta", self.beta, "a factor")?;
        if let Some(m) = self.max_mdf.filter(|m| !(*m > 0.0 && *m < 1.0)) {
            return Err(err("transport.swift.max_mdf", format!("invalid value {m}, expected a fraction in (0, 1)")));
        }
        Ok(())
    }

    fn params(&self) -> SwiftParams {
        let d = SwiftParams::default();
        SwiftParams {
            ai: self.ai.unwrap_or(d.ai),
            beta: self.beta.unwrap_or(d.beta),
            max_mdf: self.max_mdf.unwrap_or(d.max_mdf),
            base_target: self.base_target.map_or(d.base_target, |t| t.0),
            hop_scale: self.hop_scale.map(|t| t.0),
            fs_range: self.fs_range.map(|t| t.0),
        }
    }
}
