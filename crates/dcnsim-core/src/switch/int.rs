//! In-band network telemetry (INT) as HPCC uses it (Li et al., "HPCC: High Precision
//! Congestion Control", SIGCOMM 2019, sec. 3.2 and 4.1): every switch egress port that
//! sends a data packet appends one record to it, the port's queue length, the bytes it has
//! transmitted, the time and its link rate, and the receiver copies the records into the
//! ACK (the engine's reply keeps the packet's records: `PacketArena::telemetry`).
//!
//! The records are counted in the bytes on the wire as the HPCC authors' ns-3 code
//! (`alibaba-edu/High-Precision-Congestion-Control`, `int-header.h`) sizes them: an 8-byte
//! record per hop and a 2-byte hop count, added as the packet leaves the port (this port
//! serializes the grown packet, the next hop queues it), and the ACK that echoes them is
//! as much longer. Readings:
//! - The queue length is the port's bytes queued in every class as the packet leaves (the
//!   fork's `GetNBytesTotal` at dequeue), not counting the packet itself.
//! - The transmitted bytes are every frame the port has sent (data, ACKs, control
//!   frames), this packet included; HPCC reads only their difference between two records.
//! - Records are exact (picosecond time, byte counts): the fork's packed 8-byte record
//!   keeps 24-bit time and 20-bit byte fields in coarser units (`INT_MULTI`); a record
//!   here costs the same bytes on the wire without their rounding.
//! - Only data packets carry records; a packet that already holds `MAX_TELEMETRY_HOPS`
//!   records gets no more (counted as `int_full`).

use super::mechanism::{Caps, Fabric, Never, SwitchMechanism};
use super::pipeline::{Ctx, Report};
use crate::metrics::Outputs;
use crate::net::{HopTelemetry, PktId, PktKind, PortId};
use crate::sim::units::Bytes;
use crate::sim::error::{err, ScenarioError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Bytes of one hop's record (the fork's `IntHop`: 64 bits).
pub const DEFAULT_HOP_BYTES: u64 = 8;
/// Bytes of the INT header before the records (the fork's `nhop`: 16 bits).
pub const DEFAULT_HEADER_BYTES: u64 = 2;

/// `switch.int`: in-band network telemetry at switch egress ports (HPCC sec. 3.2; see
/// switch/int.rs), which `transport.cc = "hpcc"` reads.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
#[schemars(default = "IntConfig::defaults")]
pub struct IntConfig {
    /// Wire bytes of one hop's record. Default {default} (the HPCC authors' ns-3 IntHop).
    pub hop_bytes: Option<Bytes>,
    /// Wire bytes of the INT header, added with the first record. Default {default}.
    pub header_bytes: Option<Bytes>,
    /// The switches (by name, as ports.parquet names them) that write records. Default:
    /// every switch.
    pub switches: Option<Vec<String>>,
}

impl IntConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        IntConfig { hop_bytes: Some(Bytes(DEFAULT_HOP_BYTES)), header_bytes: Some(Bytes(DEFAULT_HEADER_BYTES)), switches: None }
    }

    /// Refuse record sizes that could not be on a wire.
    pub fn check(&self, mtu: u64) -> Result<(), ScenarioError> {
        for (k, v) in [("hop_bytes", self.hop_bytes), ("header_bytes", self.header_bytes)] {
            if let Some(b) = v.filter(|b| b.0 > mtu) {
                return Err(err(format!("switch.int.{k}"), format!("invalid value {} B, expected at most the MTU ({mtu} B)", b.0)));
            }
        }
        if self.switches.as_ref().is_some_and(|s| s.is_empty()) {
            return Err(err("switch.int.switches", "invalid value [], expected switch names (or leave the key out for every switch)"));
        }
        Ok(())
    }

    /// The parameters, with `on` the switches `switches` names, resolved on the fabric
    /// (by switch index).
    pub fn params(&self, on: Option<Vec<bool>>) -> IntParams {
        IntParams {
            hop_bytes: self.hop_bytes.map_or(DEFAULT_HOP_BYTES, |b| b.0) as u32,
            header_bytes: self.header_bytes.map_or(DEFAULT_HEADER_BYTES, |b| b.0) as u32,
            switches: on,
        }
    }
}

/// INT's parameters as the scenario resolved them.
#[derive(Clone, Debug, PartialEq)]
pub struct IntParams {
    pub hop_bytes: u32,
    pub header_bytes: u32,
    /// By switch index, the switches that write records (None: all).
    pub switches: Option<Vec<bool>>,
}

/// INT at every (or the chosen) switch's egress ports.
pub struct Int {
    p: IntParams,
    /// By port: bytes the port has transmitted (switch ports only; host ports stay 0).
    tx_bytes: Vec<u64>,
    records: u64,
    full: u64,
}

impl SwitchMechanism for Int {
    type Params = IntParams;
    type Frame = Never;
    type Msg = Never;
    type Timer = Never;
    const KEY: &'static str = "int";
    const CAPS: Caps = Caps::WATCH_TX;
    /// INT's summary keys (`Int::report`).
    const OUTPUTS: Outputs = Outputs {
        flows: &[],
        ports: &[],
        summary: &[(&["int_records"], "With INT (`switch.int`): the hop records written"), (&["int_full"], "With INT: the packets that found their record list full")],
    };

    fn build(p: IntParams, f: &Fabric) -> Int {
        Int { p, tx_bytes: vec![0; f.topo.ports.len()], records: 0, full: 0 }
    }

    /// Records of 8 or 16 B under a header of 2 or 8 B, at every switch.
    #[cfg(test)]
    fn arbitrary(draw: u64, _: u8, _: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        use crate::switch::mechanism::{bits, Arbitrary};
        let line = format!("int = {{ hop_bytes = \"{}B\", header_bytes = \"{}B\" }}", 8 << bits(draw, 0, 1), [2, 8][bits(draw, 1, 1) as usize]);
        Some(Arbitrary { line, without: &[] })
    }

    /// A frame starts on a switch's `port`: count its bytes, and a data packet takes the
    /// port's record (and grows by its bytes). Host ports write no records.
    fn on_transmit(&mut self, port: PortId, pkt: PktId, _class: usize, cx: &mut Ctx) {
        let eg = &cx.egress[port as usize];
        if !eg.wire.is_switch {
            return;
        }
        let (owner, qlen) = (eg.wire.owner, eg.bytes);
        let p = cx.pkts.get(pkt);
        let (kind, size) = (p.kind, p.size);
        if kind != PktKind::Data || self.p.switches.as_ref().is_some_and(|on| !on[owner as usize]) {
            self.tx_bytes[port as usize] += size as u64;
            return;
        }
        let first = cx.pkts.telemetry(pkt).is_empty();
        let grow = self.p.hop_bytes + if first { self.p.header_bytes } else { 0 };
        let tx = self.tx_bytes[port as usize] + (size + grow) as u64;
        let hop = HopTelemetry { qlen, tx_bytes: tx, ts: cx.now, rate_bps: cx.topo.ports[port as usize].rate_bps };
        if cx.pkts.push_telemetry(pkt, hop) {
            cx.pkts.get_mut(pkt).size += grow;
            self.tx_bytes[port as usize] = tx;
            self.records += 1;
        } else {
            self.tx_bytes[port as usize] += size as u64;
            self.full += 1;
        }
    }

    fn report(&self, r: &mut Report) {
        r.count("int_records", self.records);
        r.count("int_full", self.full);
        r.acted("switch.int", "INT records written", self.records);
    }
}
