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
pub mod cubic;
pub mod dcqcn;
pub mod dctcp;
pub mod pacer;
pub mod reno;
pub mod roce;
pub mod tcp;
pub mod transport;
pub mod udp;

use crate::net::{FlowId, HostId, NodeId, PortId};
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcp::Receiver;
pub use transport::Sender;

// The window-based congestion controls TCP runs, by their scenario name (`transport.cc`).
window_ccs! {
    /// DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257).
    dctcp: Dctcp => dctcp::Dctcp,
    /// NewReno (RFC 5681, RFC 6582), optionally with classic ECN (RFC 3168).
    reno: Reno => reno::Reno,
    /// CUBIC (RFC 9438), optionally with classic ECN (RFC 3168).
    cubic: Cubic => cubic::Cubic,
}

// The rate-based congestion controls RoCE runs, by their scenario name (`transport.cc`).
rate_ccs! {
    /// DCQCN (Zhu et al., SIGCOMM 2015).
    dcqcn: Dcqcn => dcqcn::Dcqcn,
}

/// A flow's transport and the congestion control it runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// TCP (byte sequence numbers, cumulative ACKs, SACK-less NewReno recovery, RTO).
    Tcp(WindowCc),
    /// RoCEv2 reliable connection (paced, go-back-N, CNPs).
    Roce(RateCcKind),
    /// Unacknowledged datagrams at a constant or Poisson rate.
    Udp,
}

impl Transport {
    /// Its congestion control's name ("udp" for UDP), as scenarios write it.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp(c) => c.name(),
            Transport::Roce(c) => c.name(),
            Transport::Udp => "udp",
        }
    }
    pub fn is_tcp(self) -> bool {
        matches!(self, Transport::Tcp(_))
    }
}

/// Transport protocols a flow can use.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257).
    #[default]
    Dctcp,
    /// TCP NewReno (RFC 5681, RFC 6582), optionally with classic ECN (RFC 3168).
    Reno,
    /// TCP CUBIC (RFC 9438), optionally with classic ECN (RFC 3168).
    Cubic,
    /// Unacknowledged datagrams at a constant or Poisson rate.
    Udp,
    /// RoCEv2 with DCQCN rate control (Zhu et al., SIGCOMM 2015) and go-back-N recovery.
    Dcqcn,
}

impl TransportKind {
    /// The transport and congestion control it names.
    pub fn transport(self) -> Transport {
        match self {
            TransportKind::Dctcp => Transport::Tcp(WindowCc::Dctcp),
            TransportKind::Reno => Transport::Tcp(WindowCc::Reno),
            TransportKind::Cubic => Transport::Tcp(WindowCc::Cubic),
            TransportKind::Udp => Transport::Udp,
            TransportKind::Dcqcn => Transport::Roce(RateCcKind::Dcqcn),
        }
    }
}

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
/// threaded through the flows' own records (`Flow::ready_next`), their ends in one flat
/// array by host and class. Finding a NIC's next flow reads that small array and the
/// flow's record, which sending reads anyway; a double-ended queue per host and class put
/// two more dependent cache misses before it on large fabrics (the host's list of queues,
/// then the queue's buffer).
#[derive(Clone, Debug)]
pub struct ReadyLists {
    /// (first, last) ready flow of host * classes + class.
    ends: Vec<(FlowId, FlowId)>,
    classes: usize,
}

impl ReadyLists {
    pub fn new(hosts: usize, classes: usize) -> ReadyLists {
        ReadyLists { ends: vec![(NO_FLOW, NO_FLOW); hosts * classes], classes }
    }

    /// Append flow `f`, in no list now, to host `h`'s list of `class`.
    #[inline]
    pub fn push_back(&mut self, flows: &mut [Flow], h: HostId, class: usize, f: FlowId) {
        debug_assert!(!flows[f as usize].in_ready, "flow {f} is on a ready list already");
        let fl = &mut flows[f as usize];
        fl.in_ready = true;
        fl.ready_next = NO_FLOW;
        let e = &mut self.ends[h as usize * self.classes + class];
        if e.1 == NO_FLOW {
            e.0 = f;
        } else {
            flows[e.1 as usize].ready_next = f;
        }
        e.1 = f;
    }

    /// Take the first flow of host `h`'s list of `class`.
    #[inline]
    pub fn pop_front(&mut self, flows: &mut [Flow], h: HostId, class: usize) -> Option<FlowId> {
        let e = &mut self.ends[h as usize * self.classes + class];
        let f = e.0;
        if f == NO_FLOW {
            return None;
        }
        let fl = &mut flows[f as usize];
        fl.in_ready = false;
        e.0 = fl.ready_next;
        if e.0 == NO_FLOW {
            e.1 = NO_FLOW;
        }
        Some(f)
    }

    /// Whether host `h` has a ready flow in any class.
    #[inline]
    pub fn any(&self, h: HostId) -> bool {
        let c = self.classes;
        self.ends[h as usize * c..(h as usize + 1) * c].iter().any(|e| e.0 != NO_FLOW)
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
    pub finished: bool,
    pub end: SimTime,
    /// On its NIC's ready list (`ReadyLists`), and the flow after it there.
    pub in_ready: bool,
    pub ready_next: FlowId,
    /// NIC traffic class after a CIP isolated the flow at its source (P802.1Qcz).
    pub nic_class: Option<u8>,
    /// The flow that continued this one's connection (`reuse_connection`), once started.
    pub continued_by: Option<FlowId>,
}

/// Hint the CPU to load every line of `bytes` bytes from `at` (a record at no particular
/// alignment spans one line more than its size says).
#[inline(always)]
fn prefetch_lines(at: *const u8, bytes: usize) {
    let mut o = 0;
    while o < bytes {
        crate::sim::prefetch_at(at.wrapping_add(o));
        o += 64;
    }
    crate::sim::prefetch_at(at.wrapping_add(bytes - 1));
}

/// Hint the CPU to load flow `f`'s record: a packet reaching its host reads it (is the flow
/// finished, the receiver), and on large fabrics the records of the flows in flight
/// outgrow the cache.
#[inline(always)]
pub(crate) fn prefetch_flow(flows: &[Flow], f: FlowId) {
    if let Some(x) = flows.get(f as usize) {
        prefetch_lines(x as *const Flow as *const u8, std::mem::size_of::<Flow>());
    }
}

impl Flow {
    /// What a capture needs to write the flow's headers.
    pub fn wire(&self) -> crate::metrics::wire::FlowWire {
        crate::metrics::wire::FlowWire { id: self.id, src: self.src, dst: self.dst, size: self.size, hash: self.hash, prio: self.prio, transport: self.transport }
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
            prefetch_lines(&**t as *const tcp::TcpSender as *const u8, std::mem::size_of::<tcp::TcpSender>());
        }
    }
}

/// Flows a mechanism holds at their NIC (SFC's pause): until when, and the time of the
/// live wake-up event. Kept beside the flow records, and empty in runs without holds, so
/// that the flows' hot record does not grow for a mechanism most runs do not configure.
#[derive(Clone, Debug, Default)]
pub struct Holds {
    until: Vec<SimTime>,
    wake: Vec<Option<SimTime>>,
}

impl Holds {
    /// Whether flow `f` may not send at `now`.
    #[inline]
    pub fn held(&self, f: FlowId, now: SimTime) -> bool {
        self.until.get(f as usize).is_some_and(|&t| t > now)
    }
    /// When flow `f`'s hold ends (ZERO if none).
    pub fn until(&self, f: FlowId) -> SimTime {
        self.until.get(f as usize).copied().unwrap_or(SimTime::ZERO)
    }
    /// Hold `f` until `until` (extend only).
    pub fn hold(&mut self, f: FlowId, until: SimTime) {
        let i = f as usize;
        if self.until.len() <= i {
            self.until.resize(i + 1, SimTime::ZERO);
            self.wake.resize(i + 1, None);
        }
        self.until[i] = self.until[i].max(until);
    }
    /// The wake-up to schedule for a held flow, if none is live (its time is recorded).
    pub fn arm(&mut self, f: FlowId) -> Option<SimTime> {
        let i = f as usize;
        match self.wake[i] {
            Some(_) => None,
            None => {
                self.wake[i] = Some(self.until[i]);
                self.wake[i]
            }
        }
    }
    /// The wake-up of `f` fired.
    pub fn woke(&mut self, f: FlowId) {
        if let Some(w) = self.wake.get_mut(f as usize) {
            *w = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn flow(id: FlowId) -> Flow {
        Flow {
            id,
            src: 0,
            dst: 0,
            size: 0,
            start: SimTime::ZERO,
            tag: 0,
            prio: 0,
            hash: 0,
            transport: Transport::Tcp(WindowCc::Dctcp),
            ideal: SimTime::ZERO,
            repeat_until: None,
            reuse_connection: false,
            sender: Sender::Done,
            rx: Receiver::default(),
            rrx: Default::default(),
            drops: 0,
            ecn_marks: 0,
            retx: 0,
            finished: false,
            end: SimTime::ZERO,
            in_ready: false,
            ready_next: NO_FLOW,
            nic_class: None,
            continued_by: None,
        }
    }

    proptest! {
        // any sequence of appends and takes over several hosts and classes leaves each list
        // what a double-ended queue per (host, class) holds, and flags exactly its flows
        #[test]
        fn ready_lists_behave_as_a_queue_per_host_and_class(ops in proptest::collection::vec((any::<bool>(), 0u32..3, 0usize..2, 0u32..10), 0..300)) {
            let mut flows: Vec<Flow> = (0..10).map(flow).collect();
            let mut lists = ReadyLists::new(3, 2);
            let mut model = vec![VecDeque::new(); 6];
            for (push, h, c, f) in ops {
                let m = &mut model[h as usize * 2 + c];
                if push {
                    if !flows[f as usize].in_ready {
                        lists.push_back(&mut flows, h, c, f);
                        m.push_back(f);
                    }
                } else {
                    prop_assert_eq!(lists.pop_front(&mut flows, h, c), m.pop_front());
                }
                for h in 0..3u32 {
                    prop_assert_eq!(lists.any(h), !model[h as usize * 2].is_empty() || !model[h as usize * 2 + 1].is_empty());
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
