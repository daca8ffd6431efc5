//! Hosts: a NIC with per-priority queues and the flows it serves.
//!
//! The NIC pulls: when its port is free it first drains its own queues
//! (ACKs, UDP datagrams), then asks the ready flows of the highest priority,
//! round robin, for one segment each, as an RDMA NIC arbitrates its queue
//! pairs. So a window-limited flow never sits in an unbounded host queue.
//!
//! A flow's transport (`transport.rs`: TCP, RoCE, UDP) is separate from its congestion
//! control: TCP runs a window-based algorithm (`cc::CongestionControl`), RoCE a rate-based
//! one (`cc::RateControl`), each from the lists below.
#[macro_use]
pub mod cc;
pub mod credit;
pub mod flow_table;
pub mod pacer;
pub mod path;
pub mod rccc;
pub mod reps;
pub mod roce;
pub mod rack;
pub mod sack;
pub mod tcp;
pub mod transport;
pub mod udp;
pub mod uet;

use crate::net::{FlowId, HostId, NodeId, PortId};
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
pub use flow_table::{FlowRow, FlowTable};
use tcp::Receiver;
pub use transport::Sender;

// The window-based congestion controls TCP runs, by their scenario name (`transport.cc`).
window_ccs! {
    /// DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257).
    dctcp: Dctcp => cc::dctcp::Dctcp,
    /// NewReno (RFC 5681, RFC 6582), optionally with classic ECN (RFC 3168).
    reno: Reno => cc::reno::Reno,
    /// CUBIC (RFC 9438), optionally with classic ECN (RFC 3168).
    cubic: Cubic => cc::cubic::Cubic,
    /// Swift (Kumar et al., SIGCOMM 2020): delay-target AIMD, paced below one packet.
    swift: Swift => cc::swift::Swift,
    /// BBR v1 (Cardwell et al., ACM Queue 2016; Linux net/ipv4/tcp_bbr.c): paced at the
    /// modelled bottleneck bandwidth, the window two bandwidth-delay products.
    // boxed: its state is 248 B, the others' at most 56 (a sender holds its algorithm)
    bbr: Bbr => Box<cc::bbr::Bbr>,
    /// A test's stand-in: a fixed window (`host/cc/stand_in.rs`).
    #[cfg(test)]
    stand_in: StandIn => cc::stand_in::StandInCc,
}

// The rate-based congestion controls RoCE runs, by their scenario name (`transport.cc`).
rate_ccs! {
    /// DCQCN (Zhu et al., SIGCOMM 2015).
    dcqcn: Dcqcn => cc::dcqcn::Dcqcn,
    /// HPCC (Li et al., SIGCOMM 2019), fed by the in-band telemetry of `switch.int`.
    hpcc: Hpcc => cc::hpcc::Hpcc,
    /// TIMELY (Mittal et al., SIGCOMM 2015): RTT-gradient rate control.
    timely: Timely => cc::timely::Timely,
    /// Swift (Kumar et al., SIGCOMM 2020) over RoCE: the delay-target window caps the flight.
    swift: Swift => cc::swift::SwiftRate,
}

/// The congestion controls the UET transport runs (`transport.cc` with `kind = "uet"`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UetCc {
    /// NSCC (UE Specification 1.0; the UEC's htsim, `uec.cpp`): the sender's window by
    /// delay and ECN, quick adapt on trims.
    Nscc,
    /// RCCC alone (`host/rccc.rs`): the receiver's NIC paces credit to its senders.
    Rccc,
    /// NSCC and RCCC together: the sender needs both window and credit.
    NsccRccc,
}

impl UetCc {
    pub const ALL: &'static [UetCc] = &[UetCc::Nscc, UetCc::Rccc, UetCc::NsccRccc];
    pub const fn name(self) -> &'static str {
        match self {
            UetCc::Nscc => "nscc",
            UetCc::Rccc => "rccc",
            UetCc::NsccRccc => "nscc_rccc",
        }
    }
    /// Whether the sender runs NSCC's window, and whether it needs the receiver's credit.
    pub const fn parts(self) -> (bool, bool) {
        match self {
            UetCc::Nscc => (true, false),
            UetCc::Rccc => (false, true),
            UetCc::NsccRccc => (true, true),
        }
    }
    pub fn from_name(s: &str) -> Option<UetCc> {
        Self::ALL.iter().copied().find(|c| c.name() == s)
    }
    pub fn doc(self) -> &'static str {
        match self {
            UetCc::Nscc => "NSCC, Ultra Ethernet's sender-based congestion control (UE Specification 1.0; the UEC's htsim, uec.cpp): a window by queueing delay and ECN, quick adapt on trimmed packets.",
            UetCc::Rccc => "RCCC, Ultra Ethernet's receiver credit congestion control (UE Specification 1.0; the UEC's htsim): each receiving NIC paces credit to its senders at 99% of its line rate; senders start with a window of speculative credit.",
            UetCc::NsccRccc => "NSCC and RCCC together (the UEC's htsim's -sender_cc -receiver_cc): a packet needs room in NSCC's window and the receiver's credit.",
        }
    }
}

/// The UET transport's algorithm when a scenario names none.
pub const DEFAULT_UET_CC: UetCc = UetCc::Nscc;

/// A flow's transport and the congestion control it runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// TCP (byte sequence numbers, cumulative ACKs with SACK blocks, RFC 6675 recovery or
    /// NewReno's without SACK, RTO).
    Tcp(WindowCc),
    /// RoCEv2 reliable connection (paced, go-back-N, CNPs).
    Roce(RateCcKind),
    /// Unacknowledged datagrams at a constant or Poisson rate.
    Udp,
    /// Ultra Ethernet's reliable unordered delivery (`host/uet.rs`): PSNs, selective ACKs,
    /// NACKs of trimmed packets, sprayed.
    Uet(UetCc),
}

impl Transport {
    /// The protocols its frames carry on the wire (a capture's headers).
    pub fn wire_proto(self) -> crate::net::wire::WireProto {
        use crate::net::wire::WireProto;
        match self {
            Transport::Tcp(_) => WireProto::Tcp,
            Transport::Roce(_) => WireProto::Roce,
            Transport::Udp => WireProto::Udp,
            Transport::Uet(_) => WireProto::Uet,
        }
    }
    /// Its congestion control's name ("udp" for UDP), as scenarios write it.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp(c) => c.name(),
            Transport::Roce(c) => c.name(),
            Transport::Udp => "udp",
            Transport::Uet(c) => c.name(),
        }
    }
    pub fn is_tcp(self) -> bool {
        matches!(self, Transport::Tcp(_))
    }
    /// Whether it expects a flow's packets in order and reads reordering as loss (TCP, RoCE).
    pub fn in_order(self) -> bool {
        matches!(self, Transport::Tcp(_) | Transport::Roce(_))
    }
    /// Whether its receivers answer a trimmed packet (`PktKind::Trimmed`) with a NACK.
    pub fn knows_trimming(self) -> bool {
        matches!(self, Transport::Uet(_))
    }
}

/// The window-based algorithm a TCP flow runs when a scenario names none.
pub const DEFAULT_WINDOW_CC: WindowCc = WindowCc::Dctcp;
/// The rate-based algorithm a RoCE flow runs when a scenario names none.
pub const DEFAULT_RATE_CC: RateCcKind = RateCcKind::Dcqcn;

/// A congestion control as scenarios name it (`transport.cc`): any entry of either list.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CcName {
    Window(WindowCc),
    Rate(RateCcKind),
    Uet(UetCc),
}

impl CcName {
    /// Every algorithm, windows first, in list order.
    pub fn all() -> impl Iterator<Item = CcName> {
        WindowCc::ALL.iter().map(|&c| CcName::Window(c)).chain(RateCcKind::ALL.iter().map(|&c| CcName::Rate(c))).chain(UetCc::ALL.iter().map(|&c| CcName::Uet(c)))
    }
    pub fn name(self) -> &'static str {
        match self {
            CcName::Window(c) => c.name(),
            CcName::Rate(c) => c.name(),
            CcName::Uet(c) => c.name(),
        }
    }
    /// What it is, with its source.
    pub fn doc(self) -> &'static str {
        match self {
            CcName::Window(c) => c.doc(),
            CcName::Rate(c) => c.doc(),
            CcName::Uet(c) => c.doc(),
        }
    }
    /// Every shipped algorithm once, by name (one that runs over both transports: its window
    /// entry): what the reference and error messages list.
    pub fn distinct() -> impl Iterator<Item = CcName> {
        Self::listed().filter(|c| !c.test_only())
    }
    /// Every listed algorithm once, by name, a test build's stand-ins included: what the
    /// property tests draw.
    pub fn listed() -> impl Iterator<Item = CcName> {
        Self::all().filter(|c| Self::from_name(c.name()) == Some(*c))
    }
    /// Whether it is a test build's stand-in (`#[cfg(test)]` in its list).
    pub const fn test_only(self) -> bool {
        match self {
            CcName::Window(c) => c.test_only(),
            CcName::Rate(c) => c.test_only(),
            CcName::Uet(_) => false,
        }
    }
    /// Whether an algorithm of this name runs over both transports (Swift).
    pub fn on_both(self) -> bool {
        Self::all().filter(|c| c.name() == self.name()).count() > 1
    }
    /// The algorithm of this name (one that runs over both transports: its window entry).
    pub fn from_name(s: &str) -> Option<CcName> {
        Self::all().find(|c| c.name() == s)
    }
    /// It over the transport it runs on (its window entry when it has both).
    pub fn transport(self) -> Transport {
        match self {
            CcName::Window(c) => Transport::Tcp(c),
            CcName::Rate(c) => Transport::Roce(c),
            CcName::Uet(c) => Transport::Uet(c),
        }
    }
}

/// A transport as scenarios name it (`transport.kind`, a workload's or a flow's
/// `transport`): "tcp", "roce" or "udp", each with the congestion control `cc` names; or,
/// standing for itself over its transport, a congestion control's name ("dctcp", "reno",
/// "cubic": TCP; "dcqcn": RoCE), as scenarios wrote it before `cc` was a key of its own.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TransportKind {
    Tcp,
    Roce,
    Udp,
    Uet,
    Cc(CcName),
}

impl TransportKind {
    const PLAIN: [(TransportKind, &'static str, &'static str); 4] = [
        (TransportKind::Tcp, "tcp", "TCP: byte sequence numbers, cumulative ACKs with ECN-Echo, NewReno recovery (RFC 6582), RTO (RFC 6298), under a window-based congestion control (`cc`, default dctcp)."),
        (TransportKind::Roce, "roce", "RoCEv2 reliable connection: paced at its rate-based congestion control's rate (`cc`, default dcqcn), go-back-N, CNPs (IBTA Annex A17)."),
        (TransportKind::Udp, "udp", "Unacknowledged datagrams at a constant or Poisson rate (`transport.udp`); no congestion control."),
        (TransportKind::Uet, "uet", "Ultra Ethernet's reliable unordered delivery (UE Specification 1.0): PSNs, an ACK per packet with selective acknowledgements, a NACK for a trimmed packet (`switch.trim`) resent at once, a retransmission timer (`transport.uet`), packets sprayed over the paths (`transport.path`, default \"spray\" for UET), under its congestion control (`cc`, default nscc)."),
    ];

    /// Every name a scenario may write, with what it means.
    pub fn names() -> Vec<(&'static str, String)> {
        let plain = Self::PLAIN.iter().map(|&(_, n, d)| (n, d.to_string()));
        let ccs = CcName::distinct().map(|c| {
            let over = match c.transport() {
                Transport::Tcp(_) => "tcp",
                Transport::Uet(_) => "uet",
                _ => "roce",
            };
            let both = if c.on_both() { format!(" (It also runs over roce: `kind = \"roce\"` with `cc = \"{}\"`.)", c.name()) } else { String::new() };
            (
                c.name(),
                format!(
                    "{} Short for `kind = \"{over}\"` with `cc = \"{}\"`.{both}",
                    c.doc(),
                    c.name()
                ),
            )
        });
        plain.chain(ccs).collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Cc(c) => c.name(),
            k => Self::PLAIN.iter().find(|p| p.0 == k).map(|p| p.1).unwrap(),
        }
    }

    pub fn from_name(s: &str) -> Option<TransportKind> {
        Self::PLAIN.iter().find(|p| p.1 == s).map(|p| p.0).or_else(|| CcName::from_name(s).map(TransportKind::Cc))
    }

    /// The transport and congestion control that `kind` and `cc` (either may be absent)
    /// name, where `inherit` is what applies when they say nothing: the scenario's for a
    /// workload, the workload's for a flow. "tcp" or "roce" alone keeps the inherited
    /// algorithm if it runs over that transport, else takes the default; `cc` alone keeps
    /// the inherited transport if the algorithm runs over it. The error says what is wrong
    /// with `cc` (or, for a kind naming an algorithm, with the pair).
    pub fn resolve(kind: Option<TransportKind>, cc: Option<CcName>, inherit: Transport) -> Result<Transport, String> {
        let on_tcp = |c: CcName| WindowCc::from_name(c.name());
        let on_roce = |c: CcName| RateCcKind::from_name(c.name());
        let on_uet = |c: CcName| UetCc::from_name(c.name());
        let names = |all: &mut dyn Iterator<Item = &'static str>| all.map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
        Ok(match (kind, cc) {
            (None, None) => inherit,
            (None, Some(c)) => match (inherit, on_tcp(c), on_roce(c)) {
                (Transport::Tcp(_), Some(w), _) => Transport::Tcp(w),
                (Transport::Roce(_), _, Some(r)) => Transport::Roce(r),
                _ => c.transport(),
            },
            (Some(TransportKind::Uet), None) => match inherit {
                Transport::Uet(u) => Transport::Uet(u),
                _ => Transport::Uet(DEFAULT_UET_CC),
            },
            (Some(TransportKind::Uet), Some(c)) => match on_uet(c) {
                Some(u) => Transport::Uet(u),
                None => return Err(format!("invalid value \"{}\", expected a congestion control that runs over uet: {}", c.name(), names(&mut UetCc::ALL.iter().map(|c| c.name())))),
            },
            (Some(TransportKind::Udp), None) => Transport::Udp,
            (Some(TransportKind::Udp), Some(c)) => return Err(format!("invalid value \"{}\": UDP runs no congestion control; remove cc", c.name())),
            (Some(TransportKind::Tcp), None) => match inherit {
                Transport::Tcp(w) => Transport::Tcp(w),
                _ => Transport::Tcp(DEFAULT_WINDOW_CC),
            },
            (Some(TransportKind::Tcp), Some(c)) => match on_tcp(c) {
                Some(w) => Transport::Tcp(w),
                None => {
                    return Err(format!("invalid value \"{}\", expected a congestion control that runs over tcp: {}", c.name(), names(&mut WindowCc::ALL.iter().map(|c| c.name()))))
                }
            },
            (Some(TransportKind::Roce), None) => match inherit {
                Transport::Roce(r) => Transport::Roce(r),
                _ => Transport::Roce(DEFAULT_RATE_CC),
            },
            (Some(TransportKind::Roce), Some(c)) => match on_roce(c) {
                Some(r) => Transport::Roce(r),
                None => {
                    return Err(format!(
                        "invalid value \"{}\", expected a congestion control that runs over roce: {}",
                        c.name(),
                        names(&mut RateCcKind::ALL.iter().map(|c| c.name()))
                    ))
                }
            },
            (Some(TransportKind::Cc(k)), None) => k.transport(),
            (Some(TransportKind::Cc(k)), Some(c)) if c == k => k.transport(),
            (Some(TransportKind::Cc(k)), Some(c)) => {
                let over = if on_tcp(c).is_some() {
                    "tcp"
                } else if on_uet(c).is_some() {
                    "uet"
                } else {
                    "roce"
                };
                return Err(format!(
                    "invalid value \"{}\" beside transport \"{}\", which names its own congestion control: write \"{over}\" as the transport with cc = \"{}\"",
                    c.name(),
                    k.name(),
                    c.name()
                ));
            }
        })
    }
}

/// The one list of names both `TransportKind` and `CcName` parse from, as serde's
/// unknown-variant error wants it (built once).
fn static_names(transports: bool) -> &'static [&'static str] {
    static T: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    static C: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    if transports {
        T.get_or_init(|| TransportKind::names().into_iter().map(|(n, _)| n).collect())
    } else {
        C.get_or_init(|| CcName::distinct().map(CcName::name).collect())
    }
}

/// A string enumeration schema: one `const` per name with its description.
fn names_schema(description: &str, names: Vec<(&'static str, String)>) -> schemars::schema::Schema {
    use schemars::schema::{InstanceType, Metadata, SchemaObject, SubschemaValidation};
    let one = |n: &str, d: String| -> schemars::schema::Schema {
        SchemaObject {
            instance_type: Some(InstanceType::String.into()),
            const_value: Some(serde_json::Value::String(n.to_string())),
            metadata: Some(Box::new(Metadata { description: Some(d), ..Default::default() })),
            ..Default::default()
        }
        .into()
    };
    SchemaObject {
        metadata: Some(Box::new(Metadata { description: Some(description.to_string()), ..Default::default() })),
        subschemas: Some(Box::new(SubschemaValidation { one_of: Some(names.into_iter().map(|(n, d)| one(n, d)).collect()), ..Default::default() })),
        ..Default::default()
    }
    .into()
}

macro_rules! named_enum_serde {
    ($T:ident, $transports:expr, $description:expr, $names:expr) => {
        impl<'de> Deserialize<'de> for $T {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$T, D::Error> {
                let s = String::deserialize(d)?;
                $T::from_name(&s).ok_or_else(|| serde::de::Error::unknown_variant(&s, static_names($transports)))
            }
        }
        impl Serialize for $T {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }
        impl JsonSchema for $T {
            fn schema_name() -> String {
                stringify!($T).to_string()
            }
            fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
                names_schema($description, $names)
            }
        }
    };
}

named_enum_serde!(TransportKind, true, "A transport, or a congestion control standing for itself over its transport.", TransportKind::names());
named_enum_serde!(
    CcName,
    false,
    "A congestion control: window-based ones run over tcp, rate-based ones over roce, NSCC over uet.",
    CcName::distinct()
        .map(|c| (
            c.name(),
            match c {
                CcName::Window(w) if c.on_both() => format!("{} Window-based over tcp, rate-based over roce.", w.doc()),
                CcName::Window(w) => format!("{} Window-based: over tcp.", w.doc()),
                CcName::Rate(r) => format!("{} Rate-based: over roce.", r.doc()),
                CcName::Uet(u) => format!("{} Over uet.", u.doc()),
            }
        ))
        .collect()
);

/// One host.
#[derive(Clone, Debug)]
pub struct Host {
    pub node: NodeId,
    pub port: PortId,
    /// Its NIC's line rate, bits/s (read where the NIC paces, beside `port`).
    pub rate_bps: u64,
}

/// No flow: the end of a ready list.
pub(crate) const NO_FLOW: FlowId = FlowId::MAX;

/// The flows at each NIC with a segment ready to send, per traffic class, in the order they
/// became ready: the NIC serves them round robin (`Sim::host_next_packet`). FIFO lists
/// threaded through the flows' own records (`Flow::ready_next`, by slot of the
/// `FlowTable`'s slab), their ends in one flat array by host and class. Finding a NIC's next
/// flow reads that small array and the flow's record, which sending reads anyway; a
/// double-ended queue per host and class put two more dependent cache misses before it on
/// large fabrics (the host's list of queues, then the queue's buffer).
#[derive(Clone, Debug)]
pub struct ReadyLists {
    /// (first, last) ready slot of host * classes + class.
    ends: Vec<(u32, u32)>,
    /// By host: the flows on its lists, every class.
    waiting: Vec<u32>,
    classes: usize,
}

impl ReadyLists {
    pub fn new(hosts: usize, classes: usize) -> ReadyLists {
        ReadyLists { ends: vec![(NO_FLOW, NO_FLOW); hosts * classes], waiting: vec![0; hosts], classes }
    }

    /// How many flows wait on host `h`'s lists, every class (RCCC's `activeSources`).
    #[inline]
    pub fn waiting(&self, h: HostId) -> u32 {
        self.waiting[h as usize]
    }

    /// Append the flow in slot `s`, in no list now, to host `h`'s list of `class`.
    #[inline]
    pub fn push_back(&mut self, flows: &mut [Flow], h: HostId, class: usize, s: u32) {
        debug_assert!(!flows[s as usize].in_ready, "slot {s} is on a ready list already");
        let fl = &mut flows[s as usize];
        fl.in_ready = true;
        fl.ready_next = NO_FLOW;
        self.waiting[h as usize] += 1;
        let e = &mut self.ends[h as usize * self.classes + class];
        if e.1 == NO_FLOW {
            e.0 = s;
        } else {
            flows[e.1 as usize].ready_next = s;
        }
        e.1 = s;
    }

    /// Take the first slot of host `h`'s list of `class`.
    #[inline]
    pub fn pop_front(&mut self, flows: &mut [Flow], h: HostId, class: usize) -> Option<u32> {
        let e = &mut self.ends[h as usize * self.classes + class];
        let s = e.0;
        if s == NO_FLOW {
            return None;
        }
        let fl = &mut flows[s as usize];
        fl.in_ready = false;
        self.waiting[h as usize] -= 1;
        e.0 = fl.ready_next;
        if e.0 == NO_FLOW {
            e.1 = NO_FLOW;
        }
        Some(s)
    }

    /// Take slot `s`, on one of host `h`'s lists, out of it (a flow that finished while
    /// ready: its slot is about to be reused). The others keep their order.
    pub fn remove(&mut self, flows: &mut [Flow], h: HostId, s: u32) {
        for class in 0..self.classes {
            let e = &mut self.ends[h as usize * self.classes + class];
            let (mut prev, mut at) = (NO_FLOW, e.0);
            while at != NO_FLOW && at != s {
                prev = at;
                at = flows[at as usize].ready_next;
            }
            if at == NO_FLOW {
                continue;
            }
            let next = flows[s as usize].ready_next;
            if prev == NO_FLOW {
                e.0 = next;
            } else {
                flows[prev as usize].ready_next = next;
            }
            if e.1 == s {
                e.1 = prev;
            }
            flows[s as usize].in_ready = false;
            self.waiting[h as usize] -= 1;
            return;
        }
        debug_assert!(false, "slot {s} is on none of host {h}'s ready lists");
    }

    /// The slot host `h`'s NIC serves next of its ready flows, if any: the first of the
    /// highest class with one (as `Sim::host_next_packet` looks, before the mechanisms'
    /// gates and holds, which the look-ahead does not guess).
    #[inline(always)]
    pub fn first(&self, h: HostId) -> Option<u32> {
        let c = self.classes;
        self.ends[h as usize * c..(h as usize + 1) * c].iter().rev().map(|e| e.0).find(|&s| s != NO_FLOW)
    }

    /// Whether host `h` has a ready flow in any class.
    #[inline]
    pub fn any(&self, h: HostId) -> bool {
        self.first(h).is_some()
    }

    /// Hint the CPU to load host `h`'s list ends, which `any` reads.
    #[inline(always)]
    pub fn prefetch(&self, h: HostId) {
        crate::sim::prefetch(&self.ends, (h as usize * self.classes) as u32);
    }
}

/// One flow: a transfer of `size` bytes from `src` to `dst`.
#[derive(Clone, Debug)]
pub struct Flow {
    pub id: FlowId,
    pub src: HostId,
    pub dst: HostId,
    pub size: u64,
    pub start: SimTime,
    pub tag: u16,
    pub prio: u8,
    pub hash: u32,
    pub transport: Transport,
    pub ideal: SimTime,
    /// Persistent workloads: start an identical flow when this one finishes, until then.
    pub repeat_until: Option<SimTime>,
    /// The repeated flow continues this one's connection (`FlowSpec::reuse_connection`).
    pub reuse_connection: bool,
    pub sender: Sender,
    pub rx: Receiver,
    /// RoCE receiver state (go-back-N point, CNP notification point).
    pub rrx: roce::RoceReceiver,
    pub drops: u32,
    pub ecn_marks: u32,
    pub retx: u32,
    /// On its NIC's ready list (`ReadyLists`), and the slot of the flow after it there.
    pub in_ready: bool,
    pub ready_next: u32,
    /// NIC traffic class after a CIP isolated the flow at its source (P802.1Qcz).
    pub nic_class: Option<u8>,
}

/// Hint the CPU to load a flow's record: a packet reaching its host reads it (is the flow
/// finished, the receiver), and on large fabrics the records of the flows in flight
/// outgrow the cache.
#[inline(always)]
pub(crate) fn prefetch_record(x: &Flow) {
    crate::sim::prefetch_lines(x as *const Flow as *const u8, std::mem::size_of::<Flow>());
}

impl Flow {
    /// A record holding nothing: a free slot of the `FlowTable`, or a start for tests.
    pub fn vacant(id: FlowId) -> Flow {
        Flow {
            id,
            src: 0,
            dst: 0,
            size: 0,
            start: SimTime::ZERO,
            tag: 0,
            prio: 0,
            hash: 0,
            transport: Transport::Udp,
            ideal: SimTime::ZERO,
            repeat_until: None,
            reuse_connection: false,
            sender: Sender::Done,
            rx: Receiver::default(),
            rrx: Default::default(),
            drops: 0,
            ecn_marks: 0,
            retx: 0,
            in_ready: false,
            ready_next: NO_FLOW,
            nic_class: None,
        }
    }
    /// What is left in a finished flow's slot until it is reused.
    pub fn husk(&self) -> Flow {
        Flow::vacant(self.id)
    }
    /// What a capture needs to write the flow's headers.
    pub fn wire(&self) -> crate::net::wire::FlowWire {
        crate::net::wire::FlowWire { id: self.id, src: self.src, dst: self.dst, size: self.size, hash: self.hash, prio: self.prio, proto: self.transport.wire_proto() }
    }
    /// DCTCP's alpha of the flow, if it runs DCTCP (tests and diagnostics).
    pub fn dctcp_alpha(&self) -> Option<f64> {
        self.sender.tcp()?.cc.dctcp().map(|d| d.alpha)
    }
    /// Hint the CPU to load the sender's state, which an acknowledgement updates (it lives
    /// behind a pointer: read the record first, `prefetch_flow`).
    #[inline(always)]
    pub(crate) fn prefetch_sender(&self) {
        if let Sender::Tcp(t) = &self.sender {
            crate::sim::prefetch_lines(&**t as *const tcp::TcpSender as *const u8, std::mem::size_of::<tcp::TcpSender>());
        }
    }
}

/// Flows a mechanism holds at their NIC (SFC's pause), by slot of the `FlowTable`: until
/// when, and the time of the live wake-up event. Kept beside the flow records, and empty in
/// runs without holds, so that the flows' hot record does not grow for a mechanism most runs
/// do not configure.
#[derive(Clone, Debug, Default)]
pub struct Holds {
    until: Vec<SimTime>,
    wake: Vec<Option<SimTime>>,
}

impl Holds {
    /// Whether the flow in slot `s` may not send at `now`.
    #[inline]
    pub fn held(&self, s: u32, now: SimTime) -> bool {
        self.until.get(s as usize).is_some_and(|&t| t > now)
    }
    /// When slot `s`'s hold ends (ZERO if none).
    pub fn until(&self, s: u32) -> SimTime {
        self.until.get(s as usize).copied().unwrap_or(SimTime::ZERO)
    }
    /// Hold slot `s` until `until` (extend only).
    pub fn hold(&mut self, s: u32, until: SimTime) {
        let i = s as usize;
        if self.until.len() <= i {
            self.until.resize(i + 1, SimTime::ZERO);
            self.wake.resize(i + 1, None);
        }
        self.until[i] = self.until[i].max(until);
    }
    /// The wake-up to schedule for a held slot, if none is live (its time is recorded).
    pub fn arm(&mut self, s: u32) -> Option<SimTime> {
        let i = s as usize;
        match self.wake[i] {
            Some(_) => None,
            None => {
                self.wake[i] = Some(self.until[i]);
                self.wake[i]
            }
        }
    }
    /// The wake-up of slot `s` fired.
    pub fn woke(&mut self, s: u32) {
        if let Some(w) = self.wake.get_mut(s as usize) {
            *w = None;
        }
    }
    /// Slot `s` now holds a new flow: nothing of the last one's hold stays.
    pub fn clear(&mut self, s: u32) {
        if let Some(u) = self.until.get_mut(s as usize) {
            *u = SimTime::ZERO;
            self.wake[s as usize] = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn flow(id: FlowId) -> Flow {
        Flow::vacant(id)
    }

    /// The names a scenario may write are listed once each (Swift runs over both
    /// transports: one entry saying so), and the reference's `kind` and `cc` keys name
    /// every algorithm.
    #[test]
    fn every_algorithm_is_named_once_and_in_the_reference() {
        let names: Vec<&str> = TransportKind::names().into_iter().map(|(n, _)| n).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        let swift = TransportKind::names().into_iter().find(|(n, _)| *n == "swift").unwrap().1;
        assert!(swift.contains("also runs over roce"), "{swift}");
        assert_eq!(static_names(false).len(), CcName::distinct().count());
        let reference = crate::scenario::reference::markdown();
        let row = |key: &str| reference.lines().find(|l| l.starts_with(&format!("| `{key}` | [one of](#")) && l.contains("over its transport") == (key == "kind")).unwrap().to_string();
        for key in ["kind", "cc"] {
            let r = row(key);
            let description = r.trim_end().trim_end_matches('|').trim_end().rsplit(" | ").next().unwrap();
            for c in CcName::distinct() {
                assert!(description.contains(&format!("\"{}\"", c.name())), "transport.{key} does not name {}: {description}", c.name());
            }
        }
    }

    proptest! {
        // any sequence of appends, takes and removals (a flow finishing while ready) over
        // several hosts and classes leaves each list what a double-ended queue per (host,
        // class) holds, flags exactly its flows, counts them per host and names the first
        // of the highest class
        #[test]
        fn ready_lists_behave_as_a_queue_per_host_and_class(ops in proptest::collection::vec((0u8..3, 0u32..3, 0usize..2, 0u32..10), 0..300)) {
            let mut flows: Vec<Flow> = (0..10).map(flow).collect();
            let mut lists = ReadyLists::new(3, 2);
            let mut model = vec![VecDeque::new(); 6];
            for (op, h, c, f) in ops {
                match op {
                    0 => {
                        if !flows[f as usize].in_ready {
                            lists.push_back(&mut flows, h, c, f);
                            model[h as usize * 2 + c].push_back(f);
                        }
                    }
                    1 => prop_assert_eq!(lists.pop_front(&mut flows, h, c), model[h as usize * 2 + c].pop_front()),
                    _ => {
                        // remove f from whichever list of host h holds it
                        let on = (0..2).find(|&c| model[h as usize * 2 + c].contains(&f));
                        if let Some(c) = on {
                            lists.remove(&mut flows, h, f);
                            model[h as usize * 2 + c].retain(|&x| x != f);
                        }
                    }
                }
                for h in 0..3u32 {
                    prop_assert_eq!(lists.any(h), !model[h as usize * 2].is_empty() || !model[h as usize * 2 + 1].is_empty());
                    prop_assert_eq!(lists.waiting(h) as usize, model[h as usize * 2].len() + model[h as usize * 2 + 1].len());
                    // the head of the highest class that has one
                    prop_assert_eq!(lists.first(h), model[h as usize * 2 + 1].front().or(model[h as usize * 2].front()).copied());
                }
                for (i, fl) in flows.iter().enumerate() {
                    prop_assert_eq!(fl.in_ready, model.iter().any(|m| m.contains(&(i as FlowId))));
                }
            }
            for h in 0..3u32 {
                for c in 0..2 {
                    let mut got = Vec::new();
                    while let Some(f) = lists.pop_front(&mut flows, h, c) {
                        got.push(f);
                    }
                    prop_assert_eq!(got, model[h as usize * 2 + c].iter().copied().collect::<Vec<_>>());
                }
            }
        }
    }
}
