//! Switch memory architectures other than output queueing (`switch.architecture`): where a
//! packet waits inside the switch between its input port and its output link.
//!
//! Without this table a switch is output-queued: an arriving packet joins its output's
//! queue at once, as if the switch fabric ran N times faster than a port. With it, packets
//! wait at their input and cross a crossbar that moves one packet per input and per output
//! at a time, in cell times:
//! * `input_queued`: one FIFO per input port. Only the head of a FIFO may cross, so a head
//!   waiting for a busy output blocks the packets behind it (head-of-line blocking): under
//!   saturated uniform traffic an N x N switch carries 2 - sqrt(2) = 58.6% of its capacity
//!   as N grows (Karol, Hluchyj, Morgan, IEEE Trans. Communications 35(12), 1987, sec. III;
//!   75% at N = 2, 61.8% at N = 8).
//! * `voq`: a virtual output queue per (input, output, class) at every input, scheduled by a
//!   crossbar scheduler (`matching`: iSLIP or PIM) each cell time: no head-of-line
//!   blocking; iSLIP with one iteration carries 100% of uniform traffic (McKeown, IEEE/ACM
//!   ToN 7(2), 1999).
//! * `cioq`: VOQs and a crossbar `speedup` times faster than a port, into output queues: a
//!   combined input-output queued switch (speed-up 2 comes close to output queueing;
//!   Chuang, Goel, McKeown, Prabhakar, IEEE JSAC 17(6), 1999).
//!
//! The model (readings stated in docs/mechanisms.md, "Switch memory architectures"):
//! * The crossbar works in cell times of one MTU at the switch's fastest port times the
//!   speed-up, on a grid from time zero. A matched input sends its packet whole (packet
//!   mode: no segmentation into cells): input and output stay connected for the packet's
//!   bytes at the output's rate times the speed-up, so a short packet leaves the rest of
//!   its cell time idle, as an unsegmented cell switch does.
//! * The packet reaches its output queue as the transfer starts (cut-through across the
//!   crossbar: at speed-up >= 1 the output link never outruns it), so without a speed-up
//!   and with no output buffer a packet crosses only to an output whose queue is empty and
//!   whose previous transfer is over, and goes onto the link in the same cell time.
//! * An output takes part in a cell time when no transfer into it is in progress and its
//!   queue has room for the requesting packet within `output_buffer`, or the packet's
//!   class has nothing queued there.
//! * Memory sits where the packets wait: `input_buffer` bytes per input port (its VOQs
//!   share them), `output_buffer` per output port. By default a switch keeps the memory
//!   of `switch.buffer`: a port's share (a shared pool over the switch's ports; a static
//!   buffer's queues of one port) goes to its input, or half to its input and half to its
//!   output with a speed-up. A packet the input cannot hold is dropped there (tail drop,
//!   counted on the input port). With `input_memory = "shared"` the inputs' bytes are one
//!   pool per switch, from which each VOQ (a FIFO input) takes a packet while it then
//!   holds at most alpha times the pool's free bytes (a dynamic threshold per VOQ,
//!   `InputSharing::Shared`); PFC's dynamic XOFF and DRC's fill then judge the pool.
//! * VOQs are per (input, output, class). With more than one class an output takes, each
//!   cell time, the class its port scheduler (`switch.scheduler`) chooses among those some
//!   free input can send it, and iSLIP or PIM share that class among the inputs (a grant
//!   pointer per (output, class): McKeown 1999, sec. VI, "Prioritized iSLIP").
//! * PFC counts a packet from its arrival (802.1Qbb ingress accounting, `on_held`), so
//!   XOFF follows the input buffer (a dynamic XOFF: alpha x its free bytes,
//!   `Xoff::DynamicInput`); the ECN marker judges the VOQ or input FIFO the packet
//!   joins (`marking = "input"`) or, with a speed-up, the output queue (`"output"`, with
//!   which every AQM and FQ-CoDel run on the output queues).
//! * Congestion Isolation judges each (output, class)'s backlog (`PortQueues::backlog`),
//!   wherever its packets wait, and counts a packet from its arrival.
//! * A packet crosses only when the mechanism that orders a transmitter's frames by their
//!   next hop (DRC) lets it go toward that hop now: a VOQ offers its first such packet, a
//!   FIFO its head or nothing.

pub mod matching;

use super::buffer::BufferParams;
use super::mechanism::{Caps, Fabric, Never, SwitchMechanism};
use super::Mechanisms;
use super::pipeline::{Admission, Arrival, Ctx, Effect, Report};
use super::MechTimer;
use crate::metrics::{ColumnData as C, Outputs};
use crate::net::{DropReason, InputMemory, PortId, PortQueues, SchedSnapshot, SchedState, Scheduler as PortScheduler};
use crate::sim::error::{err, ScenarioError};
use crate::sim::units::Bytes;
use crate::sim::{ser_time, SimTime};
use matching::{Pointers, Requests};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where packets wait (module doc).
#[derive(Deserialize, Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Queueing {
    /// One FIFO per input port (head-of-line blocking).
    InputQueued,
    /// A virtual output queue per (input, output) and a crossbar scheduler.
    Voq,
    /// VOQs, a crossbar `speedup` times a port's rate, and output queues.
    Cioq,
}

/// The crossbar scheduler (`matching`).
#[derive(Deserialize, Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scheduler {
    /// Round-robin grants and accepts with pointers that move on a first-iteration accept
    /// (McKeown 1999).
    Islip,
    /// Random grants and accepts (Anderson et al. 1993); on FIFO inputs, Karol's random
    /// choice among the heads that want one output.
    Pim,
}

/// Where the ECN marker (`switch.aqm` kinds "step" and "ramp") judges the depth of a
/// packet's queue, and whether the mechanisms that run on output queues (the other AQMs of
/// `switch.aqm`, `switch.fq_codel`) may run.
#[derive(Deserialize, Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Marking {
    /// The queue the packet joins at its input as it arrives: its VOQ, or its input's FIFO
    /// (`input_queued`), as VOQ switch ASICs mark by VOQ depth.
    Input,
    /// The output queue as the packet joins it after crossing, as on an output-queued
    /// switch: `cioq` only (the other kinds keep at most the packet going onto the link
    /// there, so it would never mark). Every AQM of `switch.aqm` and FQ-CoDel then run on
    /// the output queues as on an output-queued switch.
    Output,
}

/// How an input-buffered switch's inputs hold its memory (`input_memory`).
#[derive(Deserialize, Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum InputSharing {
    /// Each input holds its own `input_buffer` bytes, which its VOQs share: an input
    /// cannot lend its memory to another.
    PerInput,
    /// One pool per switch, its inputs' `input_buffer` bytes together, from which each
    /// VOQ (an `input_queued` FIFO) takes what a dynamic threshold lets it: at most alpha
    /// times the pool's free bytes (Choudhury and Hahne, IEEE/ACM ToN 6(2), 1998, applied
    /// per VOQ), as VOQ switches keep their VOQs in one ingress buffer from which each
    /// draws beyond its guarantee (e.g. Extreme SLX 9740, a Jericho2 system: VOQs in a
    /// 128 MB on-chip buffer or external DRAM, the non-guaranteed part "allocated from a
    /// shared pool").
    Shared,
}

/// Defaults: iSLIP with one iteration (McKeown 1999's 1-SLIP, the case it analyses), the
/// speed-up of 2 that lets a CIOQ switch behave as an output-queued one (Chuang et al.
/// 1999).
pub const DEFAULT_SCHEDULER: Scheduler = Scheduler::Islip;
pub const DEFAULT_ITERATIONS: u32 = 1;
pub const DEFAULT_CIOQ_SPEEDUP: f64 = 2.0;
/// Marking on the input queues: the only reading every kind supports.
pub const DEFAULT_MARKING: Marking = Marking::Input;
/// Each input its own memory: the reading every kind was built with first.
pub const DEFAULT_INPUT_MEMORY: InputSharing = InputSharing::PerInput;
/// Most scheduler iterations (iSLIP converges within N; 64 covers the ports of any switch
/// we build).
pub const MAX_ITERATIONS: u32 = 64;
/// Largest speed-up.
pub const MAX_SPEEDUP: f64 = 16.0;

/// What the property tests' cases leave out beside it: PFC's queue-based accounting
/// ("pfc:ingress"; refused by scenario/mechanisms/pfc.rs), a
/// marker that drops non-ECT packets ("aqm:no_drop"), FQ-CoDel (which needs `marking =
/// "output"`, not drawn) and trimming (refused).
#[cfg(test)]
const DRAWN_WITHOUT: [&str; 4] = ["pfc:ingress", "aqm:no_drop", "fq_codel", "trim"];

/// `switch.architecture`: the switches' memory architecture (see switch/architecture);
/// absent = output-queued. It decides where packets wait: DRC's feedback is per (ingress,
/// direction) on it (switch/drc.rs), SFC triggers and QCN's congestion points sample as a
/// packet arrives at its input (switch/sfc.rs, switch/qcn.rs). PFC runs with it on its
/// 802.1Qbb ingress accounting, which counts a packet from its arrival, so XOFF follows
/// the input buffer (or the inputs' pool); the ECN marker judges the queue
/// `marking` names; the other AQMs and FQ-CoDel run on a CIOQ switch's output queues
/// (`marking = "output"`); Congestion Isolation judges each (output, class)'s backlog, the
/// packets bound for it wherever they wait.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ArchitectureConfig {
    /// "input_queued" (a FIFO per input), "voq" (virtual output queues and a crossbar
    /// scheduler) or "cioq" (VOQs, a crossbar with a speed-up, output queues).
    pub kind: Queueing,
    /// The crossbar scheduler: "islip" or "pim". Default {default}.
    #[schemars(default = "d_scheduler")]
    pub scheduler: Option<Scheduler>,
    /// Request-grant-accept rounds per cell time, "voq" and "cioq" only. Default {default}
    /// (1-SLIP); 1..64.
    #[schemars(default = "d_iterations")]
    pub iterations: Option<u32>,
    /// How many times a port's rate the crossbar runs, "cioq" only. Default {default};
    /// above 1 and at most 16.
    #[schemars(default = "d_speedup")]
    pub speedup: Option<f64>,
    /// Bytes each input port holds (its VOQs share them; with input_memory = "shared", its
    /// part of the switch's pool). Default: the port's share of `switch.buffer` (half of
    /// it for "cioq"); >= the MTU.
    pub input_buffer: Option<Bytes>,
    /// Bytes each output queue holds, "cioq" only. Default: half the port's share of
    /// `switch.buffer`; >= the MTU.
    pub output_buffer: Option<Bytes>,
    /// Where `switch.aqm`'s ECN marker (kinds "step", "ramp") judges a packet's queue:
    /// "input" (its VOQ or input FIFO as it arrives) or "output" (the output queue after
    /// crossing, "cioq" only; the other AQM kinds and switch.fq_codel run only with it, on
    /// the output queues). Default {default}; only with switch.aqm or switch.fq_codel.
    #[schemars(default = "d_marking")]
    pub marking: Option<Marking>,
    /// "per_input" (each input holds `input_buffer` bytes, which its VOQs share) or
    /// "shared" (one pool per switch, its inputs' `input_buffer` bytes together: a VOQ, or
    /// an "input_queued" FIFO, takes a packet while the pool has room for it and the VOQ
    /// then holds at most `alpha` times the pool's free bytes, a dynamic threshold per
    /// VOQ). Default {default}.
    #[schemars(default = "d_input_memory")]
    pub input_memory: Option<InputSharing>,
    /// The dynamic threshold's alpha of a shared input pool, with input_memory = "shared"
    /// only. Default: switch.buffer's alpha with a shared buffer, else that key's default
    /// (1); > 0.
    pub alpha: Option<f64>,
    /// The switches (by name, as ports.parquet names them) built with this architecture;
    /// the others stay output-queued, as where a fabric mixes switch models (e.g. VOQ
    /// spines above output-queued ToRs), or take another entry's where
    /// `[[switch.architecture]]` lists several (each switch in one). Default: every switch;
    /// required in a list of several.
    pub switches: Option<Vec<String>>,
}

/// `switch.architecture` as written: one table, the architecture of every switch it names
/// (every switch by default), or an array of tables (`[[switch.architecture]]`), each naming
/// its switches, for a fabric that mixes kinds (e.g. CIOQ spines above VOQ leaves, as
/// deployments mix switch ASICs); a switch no entry names stays output-queued.
#[derive(Debug, Clone)]
pub struct Architectures(pub Vec<ArchitectureConfig>);

impl<'de> Deserialize<'de> for Architectures {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OneOrMany;
        impl<'de> serde::de::Visitor<'de> for OneOrMany {
            type Value = Architectures;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table (one architecture) or an array of tables ([[switch.architecture]], each naming its switches)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<Architectures, A::Error> {
                ArchitectureConfig::deserialize(serde::de::value::MapAccessDeserializer::new(m)).map(|a| Architectures(vec![a]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, s: A) -> Result<Architectures, A::Error> {
                Vec::deserialize(serde::de::value::SeqAccessDeserializer::new(s)).map(Architectures)
            }
        }
        d.deserialize_any(OneOrMany)
    }
}

impl Serialize for Architectures {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }
}

impl JsonSchema for Architectures {
    fn schema_name() -> String {
        "Architectures".to_string()
    }
    fn json_schema(g: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        use schemars::schema::{SchemaObject, SubschemaValidation};
        let any_of = vec![g.subschema_for::<ArchitectureConfig>(), g.subschema_for::<Vec<ArchitectureConfig>>()];
        SchemaObject { subschemas: Some(Box::new(SubschemaValidation { any_of: Some(any_of), ..Default::default() })), ..Default::default() }.into()
    }
}

/// The key the errors of entry `i` of `entries` name: `switch.architecture`, or
/// `switch.architecture[i]` in an array of several.
fn entry_key(entries: usize, i: usize) -> String {
    if entries == 1 {
        "switch.architecture".to_string()
    } else {
        format!("switch.architecture[{i}]")
    }
}

impl Architectures {
    /// Each entry's `check`, and in an array every entry naming its switches.
    pub fn check(&self, mtu: u64, configured: impl Fn(&str) -> bool, aqm: Option<(&str, Option<bool>)>) -> Result<(), ScenarioError> {
        if self.0.is_empty() {
            return Err(err("switch.architecture", "invalid value [], expected a table or a non-empty array of tables (or leave the key out: output-queued)"));
        }
        for (i, a) in self.0.iter().enumerate() {
            if self.0.len() > 1 && a.switches.is_none() {
                return Err(err(format!("{}.switches", entry_key(self.0.len(), i)), "missing: with more than one architecture each names its switches (a switch none names stays output-queued)"));
            }
            a.check(&entry_key(self.0.len(), i), mtu, &configured, aqm)?;
        }
        Ok(())
    }
    /// The entries' parameters, defaults filled in; `named(key, list)`: the switches `list`
    /// names (by switch index), its entries' errors naming `key`. A switch two entries name
    /// is refused; `buffer_alpha` as `ArchitectureConfig::params`.
    pub fn params(&self, buffer_alpha: f64, mut named: impl FnMut(&str, Option<&[String]>) -> Result<Option<Vec<bool>>, ScenarioError>) -> Result<ArchitecturesParams, ScenarioError> {
        let mut out = ArchitecturesParams(Vec::with_capacity(self.0.len()));
        for (i, a) in self.0.iter().enumerate() {
            let key = format!("{}.switches", entry_key(self.0.len(), i));
            let on = named(&key, a.switches.as_deref())?;
            let taken = on.iter().flatten().enumerate().find_map(|(sw, &x)| Some((sw, out.of(sw).filter(|_| x)?.0)));
            if let Some((sw, j)) = taken {
                // which of this entry's names it was, each looked up alone (on this path only)
                let mut name = String::new();
                for n in a.switches.iter().flatten() {
                    if named(&key, Some(std::slice::from_ref(n)))?.is_some_and(|v| v[sw]) {
                        name = n.clone();
                        break;
                    }
                }
                return Err(err(key, format!("invalid value: switch \"{name}\" is named by switch.architecture[{j}] too, expected each switch in one architecture")));
            }
            out.0.push(a.params(on, buffer_alpha));
        }
        Ok(out)
    }
}

// The documented defaults (the doc comments' `{default}`); `kind` has none.
fn d_scheduler() -> Option<Scheduler> {
    Some(DEFAULT_SCHEDULER)
}
fn d_iterations() -> Option<u32> {
    Some(DEFAULT_ITERATIONS)
}
fn d_speedup() -> Option<f64> {
    Some(DEFAULT_CIOQ_SPEEDUP)
}
fn d_marking() -> Option<Marking> {
    Some(DEFAULT_MARKING)
}
fn d_input_memory() -> Option<InputSharing> {
    Some(DEFAULT_INPUT_MEMORY)
}

impl ArchitectureConfig {
    /// Refuse values out of range, keys of another kind, and the combinations that cannot
    /// run on it (`configured`: whether the scenario gives the table `switch.<key>`;
    /// `aqm`: the kind of `switch.aqm`, if any, and, where it is the ECN marker on the
    /// instantaneous queue, whether that drops non-ECT packets).
    pub fn check(&self, k: &str, mtu: u64, configured: impl Fn(&str) -> bool, aqm: Option<(&str, Option<bool>)>) -> Result<(), ScenarioError> {
        let kind = self.kind_name();
        if self.kind == Queueing::InputQueued && self.iterations.is_some() {
            return Err(err(format!("{k}.iterations"), "kind = \"input_queued\": a FIFO input asks for one output, so iterations add nothing; remove it or use kind = \"voq\""));
        }
        if self.switches.as_ref().is_some_and(|s| s.is_empty()) {
            return Err(err(format!("{k}.switches"), "invalid value [], expected switch names (or leave the key out for every switch)"));
        }
        if let Some(n) = self.iterations.filter(|n| !(1..=MAX_ITERATIONS).contains(n)) {
            return Err(err(format!("{k}.iterations"), format!("invalid value {n}, expected 1..{MAX_ITERATIONS} iterations")));
        }
        for (key, given) in [("speedup", self.speedup.is_some()), ("output_buffer", self.output_buffer.is_some())] {
            if given && self.kind != Queueing::Cioq {
                return Err(err(format!("{k}.{key}"), format!("only with kind = \"cioq\" (kind = \"{kind}\" has no output queues: its crossbar runs at a port's rate)")));
            }
        }
        if let Some(s) = self.speedup.filter(|s| !(*s > 1.0 && *s <= MAX_SPEEDUP)) {
            return Err(err(format!("{k}.speedup"), format!("invalid value {s}, expected a speed-up above 1 and at most {MAX_SPEEDUP}")));
        }
        for (key, b) in [("input_buffer", self.input_buffer), ("output_buffer", self.output_buffer)] {
            if let Some(b) = b.filter(|b| b.0 < mtu) {
                return Err(err(format!("{k}.{key}"), format!("invalid value {} B, expected at least the MTU ({mtu} B): a full frame must fit", b.0)));
            }
        }
        if let Some(a) = self.alpha {
            if self.input_memory != Some(InputSharing::Shared) {
                return Err(err(format!("{k}.alpha"), "only with input_memory = \"shared\" (each input's own buffer takes packets until it is full)"));
            }
            if !(a > 0.0 && a.is_finite()) {
                return Err(err(format!("{k}.alpha"), format!("invalid value {a}, expected a number > 0")));
            }
        }
        if self.marking == Some(Marking::Output) && self.kind != Queueing::Cioq {
            return Err(err(format!("{k}.marking"), format!("invalid value \"output\" with kind = \"{kind}\": its outputs hold at most the packet going onto the link, so the marker would never mark; expected \"input\", or kind = \"cioq\"")));
        }
        let output = self.marking == Some(Marking::Output);
        let fq_codel = configured("fq_codel");
        match (aqm, self.marking) {
            (None, Some(_)) if !(output && fq_codel) => {
                return Err(err(format!("{k}.marking"), "given without a mechanism to place; expected switch.aqm (or, with \"output\", switch.fq_codel), or no marking"))
            }
            (Some((aqm_kind, None)), _) if !output => {
                return Err(err(k, format!("cannot run with switch.aqm kind \"{aqm_kind}\" on the input queues: it runs on output queues, where kind = \"{kind}\" keeps few packets (kinds \"step\" and \"ramp\" mark the input queues); expected kind = \"cioq\" with marking = \"output\", or one of them")))
            }
            (Some((_, Some(true))), _) if !output => {
                return Err(err("switch.aqm.drop_non_ect", "true with marking on the input queues: the decision is taken as the packet crosses, after it held its input's room; expected false with switch.architecture, or marking = \"output\" with kind = \"cioq\""))
            }
            _ => {}
        }
        if fq_codel && !output {
            return Err(err(k, format!("cannot run with switch.fq_codel on the input queues: it schedules and drops at the output queues, where kind = \"{kind}\" keeps few packets; expected kind = \"cioq\" with marking = \"output\", or one of them")));
        }
        // the input queues hold every packet before trimming is asked (it comes later in the
        // list): an input that cannot take a packet drops it, and nothing is ever trimmed
        if configured("trim") {
            return Err(err(k, format!("cannot run with switch.trim: kind = \"{kind}\" holds every packet in its input queues, where a packet that does not fit is dropped before any trimming; remove one of them")));
        }
        // CI, DRC and SFC count a packet from its arrival at the input (`on_held`); a drop at
        // the output after it crossed would leave it counted
        let drops = matches!(aqm, Some((_, None)) | Some((_, Some(true))));
        if let Some(key) = ["ci", "drc", "sfc"].into_iter().find(|key| configured(key)).filter(|_| output && drops) {
            return Err(err(k, format!("cannot run switch.{key} with an AQM of switch.aqm that drops at the output queues (a kind other than \"step\" and \"ramp\", or drop_non_ect = true): {key} counts a packet from its arrival at the input; remove one of them")));
        }
        Ok(())
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            Queueing::InputQueued => "input_queued",
            Queueing::Voq => "voq",
            Queueing::Cioq => "cioq",
        }
    }

    /// The parameters, defaults filled in; `on`: the switches `switches` names, resolved on
    /// the fabric (by switch index); `buffer_alpha`: switch.buffer's alpha (its default
    /// with a static buffer), a shared input pool's by default.
    pub fn params(&self, on: Option<Vec<bool>>, buffer_alpha: f64) -> ArchitectureParams {
        let cioq = self.kind == Queueing::Cioq;
        ArchitectureParams {
            queueing: self.kind,
            scheduler: self.scheduler.unwrap_or(DEFAULT_SCHEDULER),
            iterations: if self.kind == Queueing::InputQueued { 1 } else { self.iterations.unwrap_or(DEFAULT_ITERATIONS) },
            speedup: if cioq { self.speedup.unwrap_or(DEFAULT_CIOQ_SPEEDUP) } else { 1.0 },
            input_buffer: self.input_buffer.map(|b| b.0),
            output_buffer: if cioq { self.output_buffer.map(|b| b.0) } else { Some(0) },
            mark_input: self.marking.unwrap_or(DEFAULT_MARKING) == Marking::Input,
            shared_inputs: self.input_memory.unwrap_or(DEFAULT_INPUT_MEMORY) == InputSharing::Shared,
            alpha: self.alpha.unwrap_or(buffer_alpha),
            switches: on,
        }
    }
}

impl ArchitectureParams {
    /// The input and output buffers of a switch of `ports` ports under `buffer` with
    /// `queues` queues per port: the configured ones, or the port's share of its memory.
    pub fn buffers(&self, buffer: &BufferParams, ports: usize, queues: usize) -> (u64, u64) {
        let share = match *buffer {
            BufferParams::Shared { .. } => buffer.pool_of(ports) / ports.max(1) as u64,
            BufferParams::Static { queue_cap } => queue_cap.saturating_mul(queues as u64),
        };
        let cioq = self.queueing == Queueing::Cioq;
        (self.input_buffer.unwrap_or(if cioq { share / 2 } else { share }), self.output_buffer.unwrap_or(share / 2))
    }
}

/// Every entry of `switch.architecture` resolved (`Architectures`), in the order written.
#[derive(Clone, Debug)]
pub struct ArchitecturesParams(pub Vec<ArchitectureParams>);

impl ArchitecturesParams {
    /// The entry switch `sw` (its index) is built with, and its position (None: the switch
    /// is output-queued).
    pub fn of(&self, sw: usize) -> Option<(usize, &ArchitectureParams)> {
        self.0.iter().enumerate().find(|(_, e)| e.on(sw))
    }

    /// Per port of `topo`: the memory its input draws on where its switch is built with an
    /// architecture (its own buffer, or its switch's pool), none elsewhere.
    pub fn input_buffers(&self, topo: &crate::net::Topology, buffer: &BufferParams, queues: usize) -> Vec<InputMemory> {
        let mut inputs = vec![InputMemory::default(); topo.ports.len()];
        for n in topo.switches.iter().map(|&node| &topo.nodes[node as usize]) {
            if let Some((_, e)) = self.of(n.index as usize) {
                let m = e.input_memory(e.buffers(buffer, n.ports.len(), queues).0, n.ports.len());
                for &p in &n.ports {
                    inputs[p as usize] = m;
                }
            }
        }
        inputs
    }

    /// Refuse a default buffer (a port's share of `switch.buffer`) that cannot hold a full
    /// frame at some switch of `topo`, or a shared pool whose threshold would not let an
    /// empty queue take one: its input would drop every packet of that size.
    pub fn check_buffers(&self, topo: &crate::net::Topology, buffer: &BufferParams, queues: usize, mtu: u64) -> Result<(), ScenarioError> {
        for &node in &topo.switches {
            let n = &topo.nodes[node as usize];
            let Some((i, e)) = self.of(n.index as usize) else { continue };
            let (input, output) = e.buffers(buffer, n.ports.len(), queues);
            // an empty pool lets a queue take alpha x the pool: a full frame must fit there
            let m = e.input_memory(input, n.ports.len());
            if let Some(alpha) = m.alpha.filter(|&a| a * (m.bytes as f64) < mtu as f64) {
                return Err(err(
                    format!("{}.alpha", entry_key(self.0.len(), i)),
                    format!(
                        "{alpha} with a pool of {} B at switch {} ({} ports x {input} B): an empty pool would admit a queue at most alpha x the pool = {:.0} B, below the MTU ({mtu} B); expected a larger alpha or input_buffer",
                        m.bytes,
                        n.name,
                        n.ports.len(),
                        alpha * m.bytes as f64
                    ),
                ));
            }
            for (key, b, given) in [("input_buffer", input, e.input_buffer.is_some()), ("output_buffer", output, e.queueing != Queueing::Cioq || e.output_buffer.is_some())] {
                if !given && b < mtu {
                    return Err(err(
                        format!("{}.{key}", entry_key(self.0.len(), i)),
                        format!("not given, and its default (the port's share of switch.buffer) is {b} B at switch {} of {} ports, below the MTU ({mtu} B); give it, or more buffer", n.name, n.ports.len()),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `switch.architecture` resolved. A buffer left `None` is the port's share of the switch's
/// memory (`ArchitectureConfig`).
#[derive(Clone, Debug)]
pub struct ArchitectureParams {
    pub queueing: Queueing,
    pub scheduler: Scheduler,
    pub iterations: u32,
    pub speedup: f64,
    pub input_buffer: Option<u64>,
    pub output_buffer: Option<u64>,
    /// The ECN marker judges the input queue's depth as the packet arrives (`Marking`).
    pub mark_input: bool,
    /// The inputs share one pool per switch (`InputSharing::Shared`), its VOQs admitted by
    /// a dynamic threshold of `alpha`.
    pub shared_inputs: bool,
    pub alpha: f64,
    /// By switch index, the switches built with it (None: all).
    pub switches: Option<Vec<bool>>,
}

impl ArchitectureParams {
    /// Whether switch `sw` (its index) is built with the architecture.
    pub fn on(&self, sw: usize) -> bool {
        self.switches.as_ref().is_none_or(|on| on[sw])
    }
    /// The memory an input of a switch of `ports` ports with `input` bytes per input
    /// draws on: its own, or the pool of all of them.
    pub fn input_memory(&self, input: u64, ports: usize) -> InputMemory {
        let fifo = self.queueing == Queueing::InputQueued;
        match self.shared_inputs {
            true => InputMemory { bytes: input.saturating_mul(ports as u64), alpha: Some(self.alpha), fifo },
            false => InputMemory { bytes: input, alpha: None, fifo },
        }
    }
}

/// Take the lowest set bit of `m` off it.
#[inline]
fn next_bit(m: &mut u128) -> Option<usize> {
    (*m != 0).then(|| {
        let i = m.trailing_zeros() as usize;
        *m &= *m - 1;
        i
    })
}

/// The inputs a mask names, lowest first; every input of `n` without one (a switch with
/// more ports than the masks hold).
fn inputs(mask: Option<u128>, n: usize) -> impl Iterator<Item = usize> {
    let mut m = mask;
    let mut all = 0..if m.is_none() { n } else { 0 };
    std::iter::from_fn(move || m.as_mut().and_then(next_bit).or_else(|| all.next()))
}

/// A crossbar's input queues: each a singly linked list through one slab of nodes, so a
/// queue that holds nothing costs its head and tail (8 bytes; a `VecDeque`'s header is 32,
/// and a VOQ switch keeps ports^2 x classes queues: 2,048 per switch at 16 ports and 8
/// classes).
#[derive(Clone, Debug, Default)]
struct Lists {
    /// Per queue: its first and last node (`NIL`: empty).
    head: Vec<u32>,
    tail: Vec<u32>,
    /// The nodes: a packet and the next node of its queue (or of the free list).
    nodes: Vec<(Arrival, u32)>,
    /// The first free node (`NIL`: none).
    free: u32,
}

const NIL: u32 = u32::MAX;

impl Lists {
    fn new(queues: usize) -> Lists {
        Lists { head: vec![NIL; queues], tail: vec![NIL; queues], nodes: Vec::new(), free: NIL }
    }
    #[inline]
    fn is_empty(&self, q: usize) -> bool {
        self.head[q] == NIL
    }
    #[inline]
    fn front(&self, q: usize) -> Option<&Arrival> {
        self.iter(q).next()
    }
    /// Queue `q`'s packets, first first.
    #[inline]
    fn iter(&self, q: usize) -> impl Iterator<Item = &Arrival> + '_ {
        let mut at = self.head[q];
        std::iter::from_fn(move || {
            (at != NIL).then(|| {
                let (a, next) = &self.nodes[at as usize];
                at = *next;
                a
            })
        })
    }
    fn push_back(&mut self, q: usize, a: Arrival) {
        let n = match self.free {
            NIL => {
                self.nodes.push((a, NIL));
                (self.nodes.len() - 1) as u32
            }
            n => {
                self.free = self.nodes[n as usize].1;
                self.nodes[n as usize] = (a, NIL);
                n
            }
        };
        match self.tail[q] {
            NIL => self.head[q] = n,
            t => self.nodes[t as usize].1 = n,
        }
        self.tail[q] = n;
    }
    /// Take the packet at position `k` of queue `q` out of it.
    fn remove(&mut self, q: usize, k: usize) -> Option<Arrival> {
        let (mut prev, mut at) = (NIL, self.head[q]);
        for _ in 0..k {
            if at == NIL {
                return None;
            }
            (prev, at) = (at, self.nodes[at as usize].1);
        }
        if at == NIL {
            return None;
        }
        let (a, next) = self.nodes[at as usize];
        match prev {
            NIL => self.head[q] = next,
            p => self.nodes[p as usize].1 = next,
        }
        if self.tail[q] == at {
            self.tail[q] = prev;
        }
        self.nodes[at as usize].1 = self.free;
        self.free = at;
        Some(a)
    }
}

/// One switch's crossbar and input queues.
struct Crossbar {
    /// Its ports (inputs and outputs alike), by local index.
    ports: Vec<PortId>,
    /// Its entry of `switch.architecture` (`Switches::p`).
    kind: usize,
    /// The cell time.
    cell: SimTime,
    /// What the inputs hold: each its own buffer, or one pool (`InputMemory`), whose VOQs
    /// a dynamic threshold admits.
    input: InputMemory,
    output_cap: u64,
    /// Per input: a FIFO (`input_queued`), or a VOQ per output and traffic class
    /// (`slot(i, o, q)`).
    /// Their bytes, and each input's, the switch counts (`PortQueues::held_between`,
    /// `held_in`).
    queues: Lists,
    voq: bool,
    /// Traffic classes per port (VOQs per (input, output)).
    classes: usize,
    /// With more than one class: per output, its port scheduler's state as it chooses the
    /// class it takes each cell time (`offer`), and this cell time's choice (the class, the
    /// bytes charged for it, the state before).
    out_sched: Vec<SchedState>,
    chosen: Vec<Option<(usize, u64, SchedSnapshot)>>,
    /// With more than one class: iSLIP's grant pointer of each (output, class), swapped
    /// into `ptr` for the class the output chose while the scheduler runs.
    class_grant: Vec<usize>,
    /// With more than one class, at most `matching::MASK_BITS` ports: per (output, class),
    /// bit `i` set while input `i`'s VOQ for them holds a packet.
    holders: Vec<u128>,
    /// When each input's and output's current transfer ends.
    in_busy: Vec<SimTime>,
    out_busy: Vec<SimTime>,
    ptr: Pointers,
    req: Requests,
    /// Per input of a one-class VOQ switch of at most `matching::MASK_BITS` ports: bit `o`
    /// set while its VOQ for output `o` holds a packet (empty otherwise: the scan asks
    /// every VOQ; with more classes `holders` serves).
    waiting: Vec<u128>,
    /// Packets held.
    held: u64,
    /// The cell time a scan is due at (`SimTime::MAX`: none), and the last one scanned.
    due: SimTime,
    last: SimTime,
}

impl Crossbar {
    /// Where input `i`'s packets for output `o` in class `q` wait in `queues`.
    #[inline]
    fn slot(&self, i: usize, o: usize, q: usize) -> usize {
        if self.voq {
            (i * self.ports.len() + o) * self.classes + q
        } else {
            i
        }
    }
    /// The position in `queues[slot]` of the packet that may cross to output `o` now, if
    /// one may: the first that `may` lets go toward its next hop (the head of a FIFO
    /// input, which blocks the rest), with no transfer into `o` under way and room at the
    /// output: within `output_cap`, or its class's queue empty (an output always takes one
    /// packet per class, the one going onto the link).
    #[inline]
    fn fits(&self, slot: usize, o: usize, now: SimTime, egress: &crate::net::port::Ports, queues: &PortQueues, may: &impl Fn(&Arrival) -> bool) -> Option<usize> {
        if self.out_busy[o] > now {
            return None;
        }
        // the head first: where nothing gates (most runs) it is the one
        let (k, a) = match self.queues.front(slot) {
            None => return None,
            Some(a) if may(a) => (0, a),
            Some(_) if self.voq => self.queues.iter(slot).enumerate().skip(1).find(|(_, a)| may(a))?,
            Some(_) => return None,
        };
        let out = self.ports[o];
        (egress[out as usize].bytes + a.size <= self.output_cap || queues.get(out, a.queue).bytes == 0).then_some(k)
    }
    /// With one class (or FIFO inputs): input `i` asks for output `o` if it holds a packet
    /// for it that `o` can take now (`fits`).
    #[inline]
    fn request(&mut self, i: usize, o: usize, now: SimTime, egress: &crate::net::port::Ports, queues: &PortQueues, may: &impl Fn(&Arrival) -> bool) {
        if self.fits(self.slot(i, o, 0), o, now, egress, queues, may).is_some() {
            self.req.set(i, o);
        }
    }
    /// With more than one class: output `o` chooses the class it takes this cell time as
    /// its port scheduler would, among the classes of which some input free now
    /// (`in_busy`) holds a packet it can take (`fits`), each charged the size of the first
    /// such input's head; the inputs that hold one of the chosen class request `o`.
    fn offer(&mut self, o: usize, now: SimTime, sched: &PortScheduler, egress: &crate::net::port::Ports, queues: &PortQueues, may: &impl Fn(&Arrival) -> bool) {
        let (n, nq) = (self.ports.len(), self.classes);
        let mut first = [None; crate::net::queue::MAX_QUEUES];
        for (c, f) in first.iter_mut().enumerate().take(nq) {
            *f = self.inputs_for(o, c).filter(|&i| self.in_busy[i] <= now).find_map(|i| Some((i, self.fits(self.slot(i, o, c), o, now, egress, queues, may)?)));
        }
        let mut size = [0; crate::net::queue::MAX_QUEUES];
        for c in 0..nq {
            size[c] = first[c].map_or(0, |(i, k)| self.queues.iter(self.slot(i, o, c)).nth(k).expect("fits found it").size);
        }
        let before = self.out_sched[o].snapshot();
        let Some(c) = sched.pick(nq, |c| first[c].is_none(), |_| false, |c| size[c], &mut self.out_sched[o]) else { return };
        self.chosen[o] = Some((c, size[c], before));
        for i in inputs(self.holders.get(o * nq + c).copied(), n) {
            if self.in_busy[i] <= now && self.fits(self.slot(i, o, c), o, now, egress, queues, may).is_some() {
                self.req.set(i, o);
            }
        }
    }
    /// The inputs that may hold packets of class `c` for output `o`: those whose VOQ holds
    /// one (`holders`), or every input where the switch has too many ports for the masks.
    fn inputs_for(&self, o: usize, c: usize) -> impl Iterator<Item = usize> {
        inputs(self.holders.get(o * self.classes + c).copied(), self.ports.len())
    }
    /// The first cell time at or after `t` not yet scanned.
    fn next_cell(&self, t: SimTime) -> SimTime {
        let c = self.cell.0;
        let at = SimTime(t.0.div_ceil(c) * c);
        if at <= self.last && self.last != SimTime::MAX {
            SimTime(self.last.0 + c)
        } else {
            at
        }
    }
}

/// The switches' memory architecture: per switch, its input queues and crossbar. Boxed: it
/// is taken out of the mechanism set for each cell time's scan (`TIMER_ASKS_OTHERS`), and a
/// pointer moves for less than its 192 bytes (a 3.5% slower VOQ run unboxed).
pub struct Architecture(Box<Switches>);

/// What `Architecture` holds.
struct Switches {
    /// The entries of `switch.architecture`; each crossbar runs by its own (`Crossbar::kind`).
    p: Vec<ArchitectureParams>,
    /// How the ports serve their classes (`switch.scheduler`): an input serves its VOQs for
    /// one output the same way.
    sched: PortScheduler,
    /// By switch index.
    xbars: Vec<Crossbar>,
    /// By port: its local index at its switch.
    local: Vec<u32>,
    /// By port: the most bytes its input held.
    in_peak: Vec<u64>,
    transfers: u64,
    cells: u64,
}

impl Switches {
    /// One cell time at switch `sw`: match the inputs that hold packets to the outputs that
    /// can take them, start the transfers, and come back next cell time while packets wait.
    fn scan(&mut self, sw: u32, others: &Mechanisms, cx: &mut Ctx) {
        let now = cx.now;
        // a mechanism that orders a transmitter's frames by their next hop (DRC) decides
        // which packets may cross to their output now, as it would at an output queue
        let (pkts, gated) = (&*cx.pkts, others.acts_at(Caps::REORDER));
        let may = |a: &Arrival| !gated || others.nic_may_send(a.out, pkts.get(a.pkt).dst, a.hash, a.queue, now);
        let x = &mut self.xbars[sw as usize];
        let p = &self.p[x.kind];
        x.due = SimTime::MAX;
        x.last = now;
        self.cells += 1;
        let n = x.ports.len();
        x.req.clear();
        if x.classes > 1 {
            // each output takes the class its scheduler chooses (`offer`)
            for o in 0..n {
                x.chosen[o] = None;
                if x.out_busy[o] <= now {
                    x.offer(o, now, &self.sched, cx.egress, cx.port_queues, &may);
                }
            }
        }
        let fifo_or_one_class = if x.classes == 1 { n } else { 0 };
        for i in 0..fifo_or_one_class {
            if x.in_busy[i] > now {
                continue;
            }
            // a FIFO asks for its head's output only; a VOQ input for each output it holds
            // packets for (its mask of them where it has one)
            if !x.voq {
                if let Some(a) = x.queues.front(i) {
                    let o = self.local[a.out as usize] as usize;
                    x.request(i, o, now, cx.egress, cx.port_queues, &may);
                }
            } else if let Some(&m) = x.waiting.get(i) {
                let mut m = m;
                while let Some(o) = next_bit(&mut m) {
                    x.request(i, o, now, cx.egress, cx.port_queues, &may);
                }
            } else {
                for o in 0..n {
                    x.request(i, o, now, cx.egress, cx.port_queues, &may);
                }
            }
        }
        let swap = |x: &mut Crossbar| {
            for o in 0..x.chosen.len() {
                if let Some((c, ..)) = x.chosen[o] {
                    x.ptr.swap_grant(o, &mut x.class_grant[o * x.classes + c]);
                }
            }
        };
        swap(x);
        let matched = match p.scheduler {
            Scheduler::Islip => matching::islip(&x.req, p.iterations, &mut x.ptr),
            Scheduler::Pim => matching::pim(&x.req, p.iterations, &mut cx.switches[sw as usize].rng),
        };
        swap(x);
        for (i, o) in matched.into_iter().enumerate() {
            let Some(o) = o else { continue };
            let chosen = x.chosen.get_mut(o).and_then(Option::take);
            let class = chosen.map_or(0, |(c, ..)| c);
            let q = x.slot(i, o, class);
            let k = if gated { x.fits(q, o, now, cx.egress, cx.port_queues, &may).expect("a matched input holds a packet its output can take") } else { 0 };
            let a = x.queues.remove(q, k).expect("a matched input holds a packet for its output");
            if let Some((c, charged, _)) = chosen {
                x.out_sched[o].recharge(c, charged, a.size);
            }
            if x.queues.is_empty(q) {
                if let Some(h) = x.holders.get_mut(o * x.classes + class) {
                    *h &= !(1 << i);
                }
                if let Some(w) = x.waiting.get_mut(i) {
                    *w &= !(1 << o);
                }
            }
            x.held -= 1;
            let rate = (cx.topo.ports[a.out as usize].rate_bps as f64 * p.speedup) as u64;
            let end = now + ser_time(a.size, rate);
            x.in_busy[i] = end;
            x.out_busy[o] = end;
            self.transfers += 1;
            cx.fx.push(Effect::Release(a));
        }
        // an output that chose a class and took nothing has served nothing
        for o in 0..x.chosen.len() {
            if let Some((_, _, before)) = x.chosen[o].take() {
                x.out_sched[o].restore(&before);
            }
        }
        if x.held > 0 {
            let at = x.next_cell(now);
            x.due = at;
            cx.fx.push(Effect::Timer { at, timer: MechTimer::Architecture(sw) });
        }
    }

    /// An arriving packet joins its input's FIFO or the VOQ of its output, or is dropped
    /// when its input's buffer is full (from a shared pool: when the pool's dynamic
    /// threshold refuses its queue) (a lossless one PFC admitted is not: its XOFF and
    /// headroom bound it, as on an output-queued switch); a scan is due at the next cell
    /// time.
    fn admit(&mut self, a: &mut Arrival, cx: &mut Ctx) -> Admission {
        if self.local[a.in_port as usize] == u32::MAX {
            // an output-queued switch of a mixed fabric (`switches`)
            return Admission::Buffer;
        }
        let i = self.local[a.in_port as usize] as usize;
        let o = self.local[a.out as usize] as usize;
        let x = &mut self.xbars[a.sw as usize];
        // a lossless packet PFC admitted is bounded by its XOFF and headroom instead
        // the switch adds the packet to its counts once it is held
        let q = cx.port_queues;
        let held = q.held_in(a.in_port);
        let fits = || match x.input.alpha {
            None => held + a.size <= x.input.bytes,
            Some(alpha) => {
                // the threshold holds each VOQ (a FIFO input) to alpha x the pool's free bytes
                let unit = if x.voq { q.held_between(a.in_port, a.out, a.queue) } else { held };
                let free = x.input.bytes.saturating_sub(q.held_against(a.in_port, x.input));
                crate::switch::buffer::dynamic_threshold_admits(free, unit + a.size, a.size, alpha)
            }
        };
        if !a.ingress_admitted && !fits() {
            return Admission::Drop(DropReason::BufferFull, a.in_port, a.class);
        }
        a.held = true;
        x.held += 1;
        let peak = &mut self.in_peak[a.in_port as usize];
        *peak = (*peak).max(held + a.size);
        let q = x.slot(i, o, a.queue);
        if self.p[x.kind].mark_input {
            a.judged_depth = if x.voq { cx.port_queues.held_between(a.in_port, a.out, a.queue) } else { held };
        }
        x.queues.push_back(q, *a);
        if let Some(w) = x.waiting.get_mut(i) {
            *w |= 1 << o;
        }
        if let Some(h) = x.holders.get_mut(o * x.classes + a.queue) {
            *h |= 1 << i;
        }
        if x.due == SimTime::MAX {
            let at = x.next_cell(cx.now);
            x.due = at;
            cx.timer(at, MechTimer::Architecture(a.sw));
        }
        Admission::Held
    }
}

impl SwitchMechanism for Architecture {
    type Params = ArchitecturesParams;
    type Frame = Never;
    type Msg = Never;
    /// A cell time of switch `sw`.
    type Timer = u32;
    const KEY: &'static str = "architecture";
    const CAPS: Caps = Caps::ADMIT;
    const OUTPUTS: Outputs = Outputs {
        flows: &[],
        ports: &[(&["input_peak_bytes"], "With switch.architecture: the most bytes the port's input buffer held (its VOQs together), on the port's queue 0 row")],
        summary: &[
            (&["crossbar_transfers"], "With switch.architecture: packets that crossed a crossbar from an input queue to an output"),
            (&["crossbar_cells"], "With switch.architecture: cell times the crossbar schedulers ran (each switch counts its own)"),
        ],
    };

    fn build(all: ArchitecturesParams, f: &Fabric) -> Self {
        let mut local = vec![u32::MAX; f.topo.ports.len()];
        let xbars = f
            .topo
            .switches
            .iter()
            .map(|&node| {
                // a switch left output-queued (`switches`) keeps an empty crossbar
                let on = all.of(f.topo.nodes[node as usize].index as usize);
                let (kind, p) = on.unwrap_or((0, &all.0[0]));
                let ports = if on.is_some() { f.topo.nodes[node as usize].ports.clone() } else { Vec::new() };
                let n = ports.len();
                for (k, &pt) in ports.iter().enumerate() {
                    local[pt as usize] = k as u32;
                }
                let fastest = ports.iter().map(|&pt| f.topo.ports[pt as usize].rate_bps).max().unwrap_or(1);
                let (input_cap, output_cap) = p.buffers(f.buffer, n, f.queues);
                let input = p.input_memory(input_cap, n);
                let voq = p.queueing != Queueing::InputQueued;
                let classes = if voq { f.queues } else { 1 };
                Crossbar {
                    cell: ser_time(f.mtu as u64, (fastest as f64 * p.speedup) as u64).max(SimTime(1)),
                    input,
                    output_cap,
                    queues: Lists::new(if voq { n * n * classes } else { n }),
                    voq,
                    classes,
                    out_sched: if classes > 1 { vec![SchedState::default(); n] } else { Vec::new() },
                    chosen: vec![None; if classes > 1 { n } else { 0 }],
                    class_grant: vec![0; if classes > 1 { n * classes } else { 0 }],
                    holders: vec![0; if classes > 1 && n <= matching::MASK_BITS { n * classes } else { 0 }],
                    in_busy: vec![SimTime::ZERO; n],
                    out_busy: vec![SimTime::ZERO; n],
                    ptr: Pointers::new(n),
                    req: Requests::new(n),
                    waiting: vec![0; if voq && classes == 1 && n <= matching::MASK_BITS { n } else { 0 }],
                    held: 0,
                    due: SimTime::MAX,
                    last: SimTime::MAX,
                    ports,
                    kind,
                }
            })
            .collect();
        Architecture(Box::new(Switches { p: all.0, sched: f.scheduler.clone(), xbars, local, in_peak: vec![0; f.topo.ports.len()], transfers: 0, cells: 0 }))
    }

    #[cfg(test)]
    fn arbitrary(draw: u64, _queues: u8, mtu: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        use crate::switch::mechanism::bits;
        let kind = ["input_queued", "voq", "cioq"][bits(draw, 0, 2) as usize % 3];
        let scheduler = ["islip", "pim"][bits(draw, 2, 1) as usize];
        let mut line = format!("architecture = {{ kind = \"{kind}\", scheduler = \"{scheduler}\"");
        if kind != "input_queued" {
            line += &format!(", iterations = {}", 1 + bits(draw, 3, 2));
        }
        if kind == "cioq" {
            line += &format!(", speedup = {}, output_buffer = \"{}B\"", 1.5 + bits(draw, 5, 1) as f64 * 0.5, mtu as u64 * (1 + bits(draw, 6, 3)));
        }
        // always given: the default, a port's share of the case's buffer, may be under an MTU
        // (refused, `ArchitectureParams::check_buffers`); a shared pool with alpha 0.25 (at
        // least one port's input buffer) gets four frames' worth, so that an empty pool
        // admits a full frame (also refused otherwise: a one-port switch drew 2 MTU)
        let shared = (bits(draw, 14, 1) == 1).then(|| [1.0, 0.25][bits(draw, 15, 1) as usize]);
        let least = if shared == Some(0.25) { 4 } else { 2 };
        line += &format!(", input_buffer = \"{}B\"", mtu as u64 * (least + bits(draw, 9, 5)));
        if let Some(alpha) = shared {
            line += &format!(", input_memory = \"shared\", alpha = {alpha}");
        }
        line += " }";
        Some(crate::switch::mechanism::Arbitrary { line, without: &DRAWN_WITHOUT })
    }

    /// An arriving packet joins its input's FIFO or the VOQ of its output (`Switches::admit`).
    fn admit(&mut self, a: &mut Arrival, cx: &mut Ctx) -> Admission {
        self.0.admit(a, cx)
    }

    const TIMER_ASKS_OTHERS: bool = true;

    fn on_timer_asking(&mut self, sw: u32, others: &Mechanisms, cx: &mut Ctx) {
        self.0.scan(sw, others, cx);
    }

    fn timer_place(sw: u32) -> u32 {
        sw
    }

    fn report(&self, r: &mut Report) {
        let s = &self.0;
        let mut col = Vec::with_capacity(s.in_peak.len() * r.queues);
        for &b in &s.in_peak {
            col.push(b);
            col.extend(std::iter::repeat(0).take(r.queues - 1));
        }
        r.ports_table.push("input_peak_bytes", C::U64(col));
        r.count("crossbar_transfers", s.transfers);
        r.count("crossbar_cells", s.cells);
        r.acted("switch.architecture", "packets that crossed a crossbar", s.transfers);
    }
}

#[cfg(test)]
mod tests;
