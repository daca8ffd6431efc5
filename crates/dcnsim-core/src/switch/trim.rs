//! Packet trimming (`switch.trim`): a lossy data packet the switch's buffer cannot hold is
//! cut to its headers and forwarded in a higher-priority queue instead of being dropped,
//! so that its receiver learns of the loss one queueing delay later instead of a
//! retransmission timeout later. NDP (Handley et al., SIGCOMM 2017, sec. 3.1: "cut
//! payload", headers to a priority queue); Ultra Ethernet 1.0 (sec. 3.6.12, packet
//! trimming: the switch truncates the packet and marks it trimmed, in a traffic class
//! of its own); the UEC's htsim (`compositequeue.cpp`: a full data queue trims the
//! arriving packet to its header and queues it in the header queue, served first).
//!
//! Readings: a packet is trimmed where the buffer model refuses it (a full queue or a
//! full shared memory; htsim trims the arriving packet or, by a coin flip, the last one
//! queued: here always the arriving one), in the queue the configuration names (by default
//! the highest, which the default strict-priority scheduler serves first; with one queue
//! per port the header waits behind the data), and keeps to that queue at every later
//! switch, never ECN-marked. The switch's ACKs, NACKs and credits share that queue (htsim's
//! composite queue holds its control packets in its header queue). Headers and those
//! control packets are admitted by a memory of their own, as htsim's composite queue
//! admits its headers apart from its data: `buffer` per port (a static buffer's queue
//! size by default; beside a shared pool, reserved there, the port's guaranteed bytes, at
//! least 64 MTUs); with no room there they are dropped. Admitted by the shared pool's
//! per-port dynamic limit, headers would be refused exactly when the switch trims (the
//! data that overflows has reached that limit) and every trim would turn into a drop. Like
//! every byte in the switch they count in the pool's occupancy while queued (a few KB).
//! Only data is trimmed, and never a lossless class's (PFC's packets are not refused).
//! With `cut = false` nothing is trimmed: a refused data packet is dropped, and the control
//! packets keep their queue and memory, as htsim's composite queue under `-disable_trim`.
//! Receivers of a transport that knows trimming (UET, `host/uet.rs`) answer a trimmed
//! header with a NACK; the others discard it (`trimmed_discarded`).

use super::mechanism::{Caps, Fabric, Never, SwitchMechanism};
use super::pipeline::{Admission, AqmRule, Arrival, Ctx, Overflow, Report};
use crate::metrics::Outputs;
use crate::net::{DropReason, PktKind};
use crate::sim::error::{err, ScenarioError};
use crate::sim::units::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The size a packet is trimmed to where none is given: 64 B, the UEC's htsim's trimmed
/// header (`UecPacket`'s header size, `uec.cpp`) and NDP's 64 B headers.
pub const DEFAULT_TRIM_BYTES: u64 = 64;

/// `switch.trim`: cut data packets the buffer cannot hold to their headers and forward
/// those in a priority queue (switch/trim.rs).
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct TrimConfig {
    /// What is left of a trimmed packet on the wire (its headers), at least 1 B and less
    /// than the MTU. Default {default}.
    #[schemars(default = "d_bytes")]
    pub size: Option<Bytes>,
    /// The egress queue (0..queues-1) trimmed headers join. Default: the highest
    /// (switch.queues - 1), which the strict-priority scheduler serves first.
    pub queue: Option<u8>,
    /// Memory per port for the trimmed headers and the ACKs, NACKs and credits in that queue,
    /// apart from the data's (an empty queue takes any one packet). Default: a static
    /// buffer's queue size (switch.buffer.queue); beside a shared pool the port's guaranteed
    /// bytes, at least 64 MTUs.
    pub buffer: Option<Bytes>,
    /// Whether a data packet the buffer refuses is cut to its headers (true) or dropped
    /// (false: htsim's `-disable_trim`, whose composite queue still serves its ACKs, NACKs,
    /// pulls and RTS in the header queue, first). Default {default}.
    #[schemars(default = "d_cut")]
    pub cut: Option<bool>,
}

/// Whether a refused data packet is cut by default (`TrimConfig::cut`).
pub const DEFAULT_CUT: bool = true;

fn d_cut() -> Option<bool> {
    Some(DEFAULT_CUT)
}

fn d_bytes() -> Option<Bytes> {
    Some(Bytes(DEFAULT_TRIM_BYTES))
}

impl TrimConfig {
    /// Refuse a size that is no header and a queue the ports do not have.
    pub fn check(&self, mtu: u64, queues: u8) -> Result<(), ScenarioError> {
        if let Some(b) = self.size {
            if b.0 == 0 || b.0 >= mtu {
                return Err(err("switch.trim.size", format!("invalid value {} B, expected 1B up to less than the MTU ({mtu} B)", b.0)));
            }
        }
        if let Some(q) = self.queue {
            if q >= queues {
                return Err(err("switch.trim.queue", format!("invalid value {q}, expected a queue 0..{} (switch.queues = {queues})", queues - 1)));
            }
        }
        if let (Some(b), Some(size)) = (self.buffer, Some(self.size.map_or(DEFAULT_TRIM_BYTES, |s| s.0))) {
            if b.0 < size {
                return Err(err("switch.trim.buffer", format!("invalid value {} B, expected at least one trimmed header ({size} B)", b.0)));
            }
        }
        Ok(())
    }

    /// Whether the switches cut refused data to its headers (`cut`, by default yes).
    pub fn cuts(&self) -> bool {
        self.cut.unwrap_or(DEFAULT_CUT)
    }

    pub fn params(&self, queues: u8) -> TrimParams {
        TrimParams {
            bytes: self.size.map_or(DEFAULT_TRIM_BYTES, |b| b.0) as u32,
            queue: self.queue.unwrap_or(queues - 1) as usize,
            buffer: self.buffer.map(|b| b.0),
            cut: self.cuts(),
        }
    }
}

/// `switch.trim` resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrimParams {
    pub bytes: u32,
    pub queue: usize,
    /// The header memory per port (None: twice a data queue's limit, `header_buffer`).
    pub buffer: Option<u64>,
    /// A refused data packet is cut (else dropped, its control packets still first).
    pub cut: bool,
}

/// Headers a port keeps room for beside a shared pool by default, in MTUs (64 MTUs hold
/// about a thousand 64 B headers behind nothing but strict priority).
pub const DEFAULT_HEADER_MTUS: u64 = 64;

/// The header memory per port by default: on a static buffer the trim queue's own
/// capacity, as every queue's (htsim's composite queue allows its headers twice its data
/// queue); beside a shared pool the port's guaranteed bytes, at least 64 MTUs. (Twice what
/// one queue of an empty pool may hold, htsim's rule carried over, would reserve about the
/// whole pool again per port.)
pub fn header_buffer(buffer: &super::buffer::BufferParams, mtu: u32) -> u64 {
    use super::buffer::BufferParams;
    match *buffer {
        BufferParams::Static { queue_cap } => queue_cap,
        BufferParams::Shared { guaranteed, .. } => guaranteed.max(DEFAULT_HEADER_MTUS * mtu as u64),
    }
}

/// What the trim queue carries at every switch: trimmed headers, and the acknowledgements
/// and credits (htsim's composite queue holds its ACKs, NACKs and pulls in its header queue).
fn in_trim_queue(kind: PktKind) -> bool {
    matches!(kind, PktKind::Trimmed | PktKind::Ack | PktKind::Nack | PktKind::Credit | PktKind::Rts)
}

/// The trimming stage of every switch.
pub struct Trim {
    p: TrimParams,
    /// Header memory per port (`TrimParams::buffer` resolved).
    buffer: u64,
    trims: u64,
    /// Bytes of trimmed headers the switches put on their egress links (counted where a
    /// packet is trimmed and at every switch its header enters after).
    header_bytes: u64,
}

impl Trim {
    fn has_room(&self, out: crate::net::PortId, size: u64, cx: &Ctx) -> bool {
        header_room(cx, out, self.p.queue, size, self.buffer)
    }
}

/// Whether queue `queue` of port `out`, holding trimmed headers in a header memory of
/// `memory` bytes, has room for `size` more bytes (an empty queue takes any one packet: an
/// ACK may be larger than a small header memory). The trimmer's rule, which the tests'
/// stand-in trimmer keeps too.
pub(crate) fn header_room(cx: &Ctx, out: crate::net::PortId, queue: usize, size: u64, memory: u64) -> bool {
    let held = cx.queue_bytes(out, queue);
    held == 0 || held + size <= memory
}

impl SwitchMechanism for Trim {
    type Params = TrimParams;
    type Frame = Never;
    type Msg = Never;
    type Timer = Never;
    const KEY: &'static str = "trim";
    const CAPS: Caps = Caps::TRIM.or(Caps::CLASSIFY).or(Caps::ADMIT);
    /// The trimmer's summary key (`Trim::report`).
    const OUTPUTS: Outputs = Outputs {
        flows: &[],
        ports: &[],
        summary: &[
            (&["trims"], "With switch.trim: data packets the switches trimmed to their headers instead of dropping them"),
            (&["trimmed_header_bytes"], "With switch.trim: bytes of trimmed headers the switches sent on, one count per switch hop (what trimming costs the fabric's links)"),
        ],
    };

    fn build(p: TrimParams, f: &Fabric) -> Self {
        f.check_queue("switch.trim.queue", p.queue);
        let buffer = p.buffer.unwrap_or_else(|| header_buffer(f.buffer, f.mtu));
        Trim { p, buffer, trims: 0, header_bytes: 0 }
    }

    /// Trimming to 64 B into the highest queue, or into queue 0.
    #[cfg(test)]
    fn arbitrary(draw: u64, queues: u8, _: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        use crate::switch::mechanism::{bits, Arbitrary};
        let line = match bits(draw, 0, 1) {
            0 => "trim = {}".to_string(),
            _ => format!("trim = {{ size = \"48B\", queue = {} }}", queues.saturating_sub(1) / 2),
        };
        // CI classifies its own queues: the property tests draw it with CI's queues 0 and 1
        Some(Arbitrary { line, without: &["ci"] })
    }

    /// A header trimmed upstream keeps to the trim queue at every later hop (UE re-marks a
    /// trimmed packet's DSCP; htsim's headers are high priority everywhere), unmarked; so do
    /// the transports' acknowledgements and credits, as htsim's composite queue holds its
    /// ACKs, NACKs and pulls in the header queue.
    fn classify(&mut self, a: &mut Arrival, cx: &mut Ctx) {
        let kind = cx.pkts.get(a.pkt).kind;
        if in_trim_queue(kind) {
            (a.queue, a.aqm) = (self.p.queue, AqmRule::Skip);
        }
        if kind == PktKind::Trimmed {
            self.header_bytes += a.size;
        }
    }

    /// The headers and control packets `classify` put in the trim queue are admitted by the
    /// header memory, not the data buffer (but those of a lossless class).
    fn admit(&mut self, a: &mut Arrival, cx: &mut Ctx) -> Admission {
        // a lossless class's packets stay PFC's and its buffer's (PFC comes first in the list)
        if a.lossless || a.ingress_admitted {
            return Admission::Buffer;
        }
        if a.queue != self.p.queue || !in_trim_queue(cx.pkts.get(a.pkt).kind) {
            return Admission::Buffer;
        }
        if !self.has_room(a.out, a.size, cx) {
            return Admission::Drop(DropReason::BufferFull, a.out, self.p.queue);
        }
        a.ingress_admitted = true;
        Admission::Admitted
    }

    fn on_overflow(&mut self, a: &Arrival, _why: DropReason, cx: &mut Ctx) -> Overflow {
        let bytes = self.p.bytes.min(a.size as u32);
        if !self.p.cut || !self.has_room(a.out, bytes as u64, cx) {
            return Overflow::Drop;
        }
        self.trims += 1;
        self.header_bytes += bytes as u64;
        Overflow::Trim { queue: self.p.queue, bytes }
    }

    fn reserved_beside(&self, ports: &[crate::net::PortId]) -> u64 {
        ports.len() as u64 * self.buffer
    }

    fn report(&self, r: &mut Report) {
        r.count("trims", self.trims);
        r.count("trimmed_header_bytes", self.header_bytes);
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{build_adjusted, Document, RunOptions};

    /// Bad tables are refused naming the key, the value and what was expected.
    #[test]
    fn bad_tables_are_refused_naming_the_key() {
        for (table, says) in [
            ("trim = { size = \"0B\" }", "switch.trim.size"),
            ("trim = { size = \"1500B\" }", "switch.trim.size"),
            ("trim = { queue = 2 }", "switch.trim.queue"),
            ("trim = { buffer = \"32B\" }", "switch.trim.buffer"),
            ("trim = { bytes = 64 }", "bytes"),
            ("ci = {}\ntrim = {}", "one of switch.ci's queues"),
        ] {
            let text = format!(
                "[scenario]\nname = \"trim\"\n[topology]\nkind = \"clos2\"\nservers_per_tor = 1\ntors = 2\nspines = 2\nmtu = \"1500B\"\nhost_link = {{ rate = \"10Gbps\", delay = \"1us\" }}\n\
                 [switch]\nqueues = 2\n{table}\n[[workload]]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 1, size = \"10KB\" }}]\n"
            );
            let e = match Document::from_toml(&text).and_then(|d| d.resolve(None)).and_then(|s| build_adjusted(&s, &RunOptions::default(), |_, _| {}).map(|_| ())) {
                Ok(()) => panic!("accepted: {table}"),
                Err(e) => e.to_string(),
            };
            assert!(e.contains(says), "{table}: {e}");
        }
    }
}
