//! The interface every switch mechanism implements (`SwitchMechanism`) and the macro that
//! turns the ordered list of mechanisms in `switch/mod.rs` into the engine's static
//! dispatch (`Mechanisms`) and the payload enums (`Frame`, `Msg`, `MechTimer`) whose arms
//! route each frame, message and timer to the mechanism that owns it.
//!
//! A mechanism is one file: its state, its parameters (`Params`, built by `build`), the
//! hooks it overrides and the capabilities (`Caps`) it declares, and its own frame,
//! message and timer types. Adding one is that file and one entry in the list; the engine
//! core names none of them (docs/architecture.md, "How to add a switch mechanism").

use super::pipeline::{Admission, AqmAction, Arrival, Ctx, Departure, Overflow, Report, RouteAt};
use crate::net::{DropReason, PktQueue};
use crate::net::wire::FlowWire;
use crate::net::{FlowId, HostId, NodeId, PacketArena, PktId, PortId, Routes, Topology};
use crate::sim::SimTime;
use std::fmt::Debug;


/// What the encoders of the mechanisms' frames need beyond the packet: the fabric, the
/// link's two ends, the flow the frame is of or names (if any) and the run's parameters.
#[derive(Clone, Copy)]
pub struct WireCtx<'a> {
    pub topo: &'a Topology,
    /// The node that sends the frame on this link, and the one it reaches.
    pub tx: NodeId,
    pub rx: NodeId,
    pub flow: Option<FlowWire>,
    /// Payload bytes of a full-size segment.
    pub mss: u32,
    /// The mechanisms' parameters (DRC's frames carry its priority mask).
    pub mechs: &'a super::MechanismParams,
}

/// What a mechanism may do, declared once so the engine skips a stage (and the context it
/// would build for it) no configured mechanism acts at, and asks only mechanisms that can
/// answer a query. `SwitchMechanism::CAPS` is what the type may ever do (the dispatch
/// compiles the other hooks out); `caps()` narrows it for a configuration.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Caps(u16);

impl Caps {
    pub const NONE: Caps = Caps(0);
    /// `classify`: may change an arriving packet's queue.
    pub const CLASSIFY: Caps = Caps(1);
    /// `admit`: admits packets by its own accounting before the buffer model.
    pub const ADMIT: Caps = Caps(1 << 1);
    /// `on_arrival`: the queue's marker (marks or drops on arrival). One per configuration.
    pub const MARK: Caps = Caps(1 << 2);
    /// `on_enqueue`.
    pub const ENQUEUE: Caps = Caps(1 << 3);
    /// `on_dequeue` (and its verdict).
    pub const DEQUEUE: Caps = Caps(1 << 4);
    /// `holds`: may stop a switch queue from transmitting.
    pub const HOLD: Caps = Caps(1 << 5);
    /// `gated`: a received pause may stop a class of a port, NICs' included.
    pub const GATE: Caps = Caps(1 << 6);
    /// `pick` / `nic_may_send`: may send a queue's packets out of order. One per configuration.
    pub const REORDER: Caps = Caps(1 << 7);
    /// `on_transmit`: sees every transmission start.
    pub const WATCH_TX: Caps = Caps(1 << 8);
    /// `on_host_send`: limits the rate of flows at their NIC.
    pub const LIMIT_RATES: Caps = Caps(1 << 9);
    /// `grid_seen` / `grid_due` / `grid_view` / `grid_judge`: a fabric-wide check at the
    /// synchronisation grid's points (PFC's deadlock watch).
    pub const GRID: Caps = Caps(1 << 10);
    /// `route`: chooses an arriving packet's next hop among the shortest-path candidates
    /// by its own state (adaptive routing). One per configuration.
    pub const ROUTE: Caps = Caps(1 << 11);
    /// `on_overflow`: may trim a data packet the buffer cannot hold instead of dropping
    /// it. One per configuration.
    pub const TRIM: Caps = Caps(1 << 12);

    #[inline(always)]
    pub const fn has(self, c: Caps) -> bool {
        self.0 & c.0 != 0
    }
    #[inline(always)]
    pub const fn or(self, c: Caps) -> Caps {
        Caps(self.0 | c.0)
    }
    /// `c` when `on`, else nothing (a capability a configuration may lack).
    #[inline(always)]
    pub const fn when(on: bool, c: Caps) -> Caps {
        if on {
            c
        } else {
            Caps::NONE
        }
    }
}

/// The capabilities that only one configured mechanism may declare, with what they do: the
/// first configured MARK mechanism alone decides a packet's mark or drop on arrival, and
/// one REORDER mechanism alone picks a queue's next packet, so a second would be silently
/// ignored (`MechanismParams::check_exclusive` refuses it).
pub const EXCLUSIVE: [(Caps, &str); 4] = [
    (Caps::MARK, "mark or drop packets as they arrive"),
    (Caps::REORDER, "reorder a queue's packets"),
    (Caps::ROUTE, "choose packets' next hops"),
    (Caps::TRIM, "decide what becomes of a packet the buffer cannot hold"),
];

/// The hooks docs/architecture.md's table shows, in pipeline order, with their column names.
pub const HOOK_COLUMNS: [(&str, Caps); 13] = [
    ("route", Caps::ROUTE),
    ("classify", Caps::CLASSIFY),
    ("admit", Caps::ADMIT),
    ("on_overflow (trim)", Caps::TRIM),
    ("on_arrival (mark)", Caps::MARK),
    ("on_enqueue", Caps::ENQUEUE),
    ("holds", Caps::HOLD),
    ("gated", Caps::GATE),
    ("pick", Caps::REORDER),
    ("on_dequeue", Caps::DEQUEUE),
    ("on_transmit", Caps::WATCH_TX),
    ("on_host_send", Caps::LIMIT_RATES),
    ("grid checks", Caps::GRID),
];

/// The markdown table of which mechanism declares which hook, one row per mechanism in list
/// (pipeline) order: docs/architecture.md carries it between `<!-- hooks:begin -->` and
/// `<!-- hooks:end -->` (a test keeps it true; `gen_reference` rewrites it).
pub fn hook_table() -> String {
    let mut t = String::from("| mechanism |");
    for (name, _) in HOOK_COLUMNS {
        t += &format!(" {name} |");
    }
    t += &format!("\n|{}\n", " --- |".repeat(HOOK_COLUMNS.len() + 1));
    for (mech, caps) in super::Mechanisms::declared() {
        t += &format!("| {mech} |");
        for (_, c) in HOOK_COLUMNS {
            t += if caps.has(c) { " x |" } else { "   |" };
        }
        t += "\n";
    }
    t
}

/// docs/architecture.md (relative to the workspace root) with its hook table replaced by
/// `hook_table()`.
pub const ARCHITECTURE_PATH: &str = "docs/architecture.md";
pub fn with_hook_table(doc: &str) -> String {
    let (begin, end) = ("<!-- hooks:begin -->\n", "<!-- hooks:end -->");
    let (Some(a), Some(b)) = (doc.find(begin), doc.find(end)) else {
        panic!("{ARCHITECTURE_PATH} has no {begin:?} ... {end:?} block");
    };
    format!("{}{begin}{}{}", &doc[..a], hook_table(), &doc[b..])
}

/// The payload type of a mechanism that sends no frames, messages or timers of that kind.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Never {}

/// What a mechanism is built for: the fabric and the ports' queue count.
pub struct Fabric<'a> {
    pub topo: &'a Topology,
    pub routes: &'a Routes,
    /// Per port: propagation plus static switch latency to its peer.
    pub arrive_delay: &'a [SimTime],
    pub mtu: u32,
    /// Queues (traffic classes) per port.
    pub queues: usize,
    /// The switches' buffer model (a memory architecture places the same memory elsewhere).
    pub buffer: &'a super::buffer::BufferParams,
    /// How a port serves its queues (`switch.scheduler`).
    pub scheduler: &'a crate::net::Scheduler,
}

impl Fabric<'_> {
    /// Stop the build when a parameter names a queue the ports do not have: the engine takes
    /// a packet's queue from it without a bounds check. A scenario's validation refuses it
    /// first, naming the key; a configuration built in code stops here.
    pub fn check_queue(&self, what: &str, q: usize) {
        assert!(q < self.queues, "{what} = {q}: the ports have {} queues", self.queues);
    }
}

/// Where a routed message is at a switch: about to leave switch `sw` through `out`.
#[derive(Copy, Clone, Debug)]
pub struct MsgAt {
    pub sw: u32,
    pub out: PortId,
    pub pkt: PktId,
}

/// What an `on_dequeue` hook does with the departing packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It leaves as it is.
    Send,
    /// It leaves CE-marked (give it only for an ECN-capable packet; the engine counts the
    /// mark on its queue).
    Mark,
    /// It is dropped: the transmitter takes the next packet instead.
    Drop(DropReason),
}

impl Verdict {
    /// Both hooks' verdicts: a drop over a mark over sending, the earlier of two equals.
    #[inline(always)]
    pub fn and(self, v: Verdict) -> Verdict {
        match (self, v) {
            (Verdict::Drop(_), _) | (Verdict::Mark, Verdict::Send) => self,
            _ => v,
        }
    }
}

/// One partition's part of a wait-for graph over (port, class) vertices (`port * classes +
/// class`), for a fabric-wide check at the synchronisation grid (`SwitchMechanism::grid_view`):
/// the vertices it holds that are waiting (`waiting`, ascending), the out-edges of the
/// vertices whose successors its nodes hold (`edges`, each list in the order the check
/// walks it), and whether any of its vertices is held at all (`any`). A vertex's
/// out-edges are all in one partition, so the union of the views is the whole graph.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaitFor {
    pub waiting: Vec<u32>,
    pub edges: Vec<(u32, Vec<u32>)>,
    pub any: bool,
}

/// A mechanism's table as the property tests draw it (`SwitchMechanism::arbitrary`).
#[cfg(test)]
#[derive(Clone, Debug)]
pub struct Arbitrary {
    /// Its line under `[switch]`, e.g. `qcn = { q_eq = "30000B" }`.
    pub line: String,
    /// The keys under `switch.` it cannot run with as the case drew them (`scheduler`: a
    /// DWRR scheduler, strict priority then; `pfc:ingress`: PFC other than ingress
    /// accounting with a static XOFF).
    pub without: &'static [&'static str],
}

/// `draw`'s bits from `at`, `n` of them: the settings an `arbitrary` picks.
#[cfg(test)]
pub fn bits(draw: u64, at: u32, n: u32) -> u64 {
    (draw >> at) & ((1u64 << n) - 1)
}

/// A switch mechanism (PFC, CI, ECN marking, SFC, the AQMs, QCN, DRC, ...): the hooks the
/// engine calls at each stage of a packet's life in a switch (`switch::pipeline`), each a
/// no-op by default. A hook reads the engine through `Ctx` and changes it only by pushing
/// `Effect`s. Every hook a mechanism overrides is named in its `CAPS`.
pub trait SwitchMechanism: Sized {
    /// Its parameters as the scenario builder resolves them.
    type Params: Clone + Debug;
    /// Its link-local control frame (`Never`: none).
    type Frame: Copy + Debug + PartialEq + Eq;
    /// Its routed message to hosts (`Never`: none).
    type Msg: Copy + Debug + PartialEq + Eq;
    /// Its timer (`Never`: none).
    type Timer: Copy + Debug;
    /// The scenario table that configures it: `switch.<KEY>`.
    const KEY: &'static str;
    /// The hooks and queries this type implements.
    const CAPS: Caps;
    /// Its columns of the flows and ports tables and its summary keys, each with what it
    /// means, declared beside `report` and `flow_columns`, which write them: the user
    /// guide's outputs reference is generated from them (`scenario::outputs`), and a test
    /// holds every run's columns and keys to them.
    const OUTPUTS: crate::metrics::Outputs;

    fn build(p: Self::Params, f: &Fabric) -> Self;

    /// Random settings of its scenario table for the engine's property tests
    /// (engine/proptests.rs), chosen by `draw`, for a case of `queues` switch queues and
    /// `mtu`: the table's line under `[switch]` and the other tables the case must then go
    /// without. `None` where the property tests draw it themselves, shaping the case around
    /// it (PFC, Congestion Isolation and ECN marking), or `queues` cannot run it. Every
    /// listed mechanism writes one, so that a new one is drawn from the day it is listed.
    #[cfg(test)]
    fn arbitrary(draw: u64, queues: u8, mtu: u32) -> Option<Arbitrary>;

    /// The part of `CAPS` this configuration uses.
    fn caps(&self) -> Caps {
        Self::CAPS
    }

    /// route: the next hop of an arriving packet among `candidates` (the shortest-path
    /// egress ports toward its destination, in port order; `r.hashed` is ECMP's pick);
    /// None leaves ECMP's. Asked only where there is more than one candidate. A switch
    /// that routes by its state routes each packet as it arrives, so the engine does not
    /// look a configured router's choice up a hop ahead.
    fn route(&mut self, _r: &RouteAt, _candidates: &[PortId], _cx: &mut Ctx) -> Option<PortId> {
        None
    }
    /// classify: may move the packet to another queue (`a.queue`) or set its AQM rule.
    fn classify(&mut self, _a: &mut Arrival, _cx: &mut Ctx) {}
    /// admit: admit by own accounting, drop, or leave it to the buffer model.
    fn admit(&mut self, _a: &mut Arrival, _cx: &mut Ctx) -> Admission {
        Admission::Buffer
    }
    /// on_overflow: the buffer model refused a lossy data packet (`why`): drop it, or trim
    /// it to its headers (`Overflow::Trim`).
    fn on_overflow(&mut self, _a: &Arrival, _why: DropReason, _cx: &mut Ctx) -> Overflow {
        Overflow::Drop
    }
    /// The queue's marker: mark, drop or pass an admitted packet before it joins.
    fn on_arrival(&mut self, _a: &Arrival, _ect: bool, _cx: &mut Ctx) -> AqmAction {
        AqmAction::Pass
    }
    /// The packet joined its queue (with `a.held`: its egress queue, as a mechanism that
    /// held it at the ingress side released it).
    fn on_enqueue(&mut self, _a: &Arrival, _cx: &mut Ctx) {}
    /// A mechanism holds the admitted packet at the switch's ingress side (`a.held`;
    /// `Admission::Held`); it joins its egress queue later (`on_enqueue`). Declared with
    /// `Caps::ENQUEUE`: a mechanism that counts a packet from its arrival (PFC's ingress
    /// accounting) counts a held one here.
    fn on_held(&mut self, _a: &Arrival, _cx: &mut Ctx) {}
    /// Whether switch queue `queue` of `port` may not transmit now.
    fn holds(&self, _port: PortId, _queue: usize, _queues: &[PktQueue], _pkts: &PacketArena, _now: SimTime) -> bool {
        false
    }
    /// Whether a received pause holds class `class` of `port` (a switch's or a NIC's).
    fn gated(&self, _port: PortId, _class: usize, _now: SimTime) -> bool {
        false
    }
    /// Which packet of the queue the scheduler chose leaves (its index; None: none may).
    fn pick(&mut self, _port: PortId, _queue: usize, q: &PktQueue, _pkts: &PacketArena, _now: SimTime) -> Option<usize> {
        (!q.is_empty()).then_some(0)
    }
    /// Whether a NIC may start a frame of a flow to `dst` on `port` now.
    fn nic_may_send(&self, _port: PortId, _dst: HostId, _hash: u32, _class: usize, _now: SimTime) -> bool {
        true
    }
    /// A packet left its queue (popped, buffer released): send it, mark it or drop it.
    fn on_dequeue(&mut self, _d: &Departure, _cx: &mut Ctx) -> Verdict {
        Verdict::Send
    }
    /// A packet of class `class` starts transmission on `port` (switch or NIC).
    fn on_transmit(&mut self, _port: PortId, _pkt: PktId, _class: usize, _cx: &mut Ctx) {}
    /// A data frame of `wire` bytes of `flow` left its NIC: until when the flow is held.
    fn on_host_send(&mut self, _flow: FlowId, _wire: u32, _now: SimTime) -> Option<SimTime> {
        None
    }
    /// Whether this node has paused the peer of `port` in class `class` and not released it
    /// (a query other mechanisms' message hooks may ask through `Mechanisms::pausing`).
    fn pausing(&self, _port: PortId, _class: usize) -> bool {
        false
    }
    /// One of its frames arrived through `port` (of a switch or a host).
    fn on_frame(&mut self, _f: Self::Frame, _port: PortId, _flow: FlowId, _hash: u32, _cx: &mut Ctx) {}
    /// One of its routed messages is about to leave a switch: whether it consumed it.
    /// `others` are the switch's other mechanisms, for their queries.
    fn on_msg(&mut self, _m: Self::Msg, _at: MsgAt, _others: &super::Mechanisms, _cx: &mut Ctx) -> bool {
        false
    }
    /// One of its routed messages reached its host through `port`.
    fn on_host_msg(&mut self, _m: Self::Msg, _port: PortId, _pkt: PktId, _cx: &mut Ctx) {}
    /// One of its timers is due.
    fn on_timer(&mut self, _t: Self::Timer, _cx: &mut Ctx) {}
    /// Whether its timers ask the other mechanisms (`on_timer_asking`): it is then taken out
    /// of the set for the call, which costs a move of it per timer, so only those that ask
    /// pay it.
    const TIMER_ASKS_OTHERS: bool = false;
    /// One of its timers is due, with the switch's other mechanisms to ask (a crossbar asks
    /// whether a packet may go toward its next hop now); `on_timer` unless it asks.
    fn on_timer_asking(&mut self, t: Self::Timer, _others: &super::Mechanisms, cx: &mut Ctx) {
        self.on_timer(t, cx)
    }
    /// Add its columns to the ports table and its keys to the summary (totals over every
    /// flow, those `forget_flows` forgot included).
    fn report(&self, _r: &mut Report) {}
    /// Its columns of the flows table for flows `ids`, in id order (the rows `report`'s
    /// table has, or those a streamed run hands out).
    fn flow_columns(&self, _ids: &[usize], _t: &mut crate::metrics::Table) {}
    /// The rows of flows `ids` were handed out (a streamed run), as were those of every flow
    /// below `below`: forget what it keeps per flow for them, keeping what its summary totals.
    fn forget_flows(&mut self, _ids: &[usize], _below: usize) {}
    /// Memory a switch with these ports keeps beside its shared pool for this mechanism.
    fn reserved_beside(&self, _ports: &[PortId]) -> u64 {
        0
    }
    /// What stopped the run, when this mechanism ended it (e.g. a PFC deadlock's cycle).
    fn deadlock(&self) -> &[String] {
        &[]
    }
    /// A fabric-wide check (PFC deadlock detection) runs between events, at the run's
    /// synchronisation grid, where a run split over threads has every partition stopped
    /// (docs/parallel.md): what it watches for since the last grid point (the earliest
    /// such instant), taken and forgotten. The partitions' answers are combined (the
    /// earliest) and given to `grid_judge`. The engine asks only when a configured
    /// mechanism declares `Caps::GRID`: one that checks here must.
    fn grid_seen(&mut self) -> Option<SimTime> {
        None
    }
    /// Whether the check is due at grid point `at` (its views are then asked for).
    fn grid_due(&self, _at: SimTime) -> bool {
        false
    }
    /// The check's view at grid point `at` of the nodes `own` says this partition holds.
    fn grid_view(&self, _at: SimTime, _own: &dyn Fn(u32) -> bool, _cx: &Ctx) -> WaitFor {
        WaitFor::default()
    }
    /// Judge the views of every partition (in partition order; none when not due) and what
    /// was seen since the last grid point: the run's end, if the check ends it. Every
    /// partition judges alike, so its state stays the same in all of them.
    fn grid_judge(&mut self, _at: SimTime, _seen: Option<SimTime>, _views: &[WaitFor], _topo: &Topology) -> Option<crate::sim::EndReason> {
        None
    }

    /// Bytes on the wire of one of its frames.
    fn frame_bytes(_f: Self::Frame) -> u32 {
        unreachable!("a mechanism that sends frames sizes them")
    }
    /// Write one of its frames as its standard lays it out (no FCS).
    fn encode_frame(_f: Self::Frame, _w: &crate::switch::mechanism::WireCtx, _out: &mut Vec<u8>) {
        unreachable!("a mechanism that sends frames encodes them")
    }
    /// The frame to send in place of `pending`, not yet sent on the same port (None: both go).
    fn replacing(_f: Self::Frame, _pending: Self::Frame) -> Option<Self::Frame> {
        None
    }
    /// Where one of its timers runs, the port or switch it belongs to (part of the event's
    /// tie key, `sim::event::Tie`): a timer is scheduled by the node of that place.
    fn timer_place(_t: Self::Timer) -> u32 {
        unreachable!("a mechanism with timers says where they run")
    }
    /// Bytes on the wire of one of its messages.
    fn msg_bytes(_m: Self::Msg) -> u32 {
        unreachable!("a mechanism that sends messages sizes them")
    }
    /// Write one of its messages as it crosses the link from `w.tx` to `w.rx` (no FCS).
    fn encode_msg(_m: Self::Msg, _p: &crate::net::Packet, _w: &crate::switch::mechanism::WireCtx, _out: &mut Vec<u8>) {
        unreachable!("a mechanism that sends messages encodes them")
    }
}

/// Expands the ordered list of switch mechanisms (`field: Arm => Type`) into:
/// `Mechanisms` (one optional field per mechanism and the union of their capabilities) with
/// one method per stage calling the mechanisms that act there in list order; the payload
/// enums `Frame`, `Msg` and `MechTimer` with one arm per mechanism; `MechanismParams`.
/// The order is the pipeline order of every stage: it decides which effects come first and
/// which mechanism draws first from the switch's random stream.
macro_rules! switch_mechanisms {
    ($($(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])? $field:ident: $Arm:ident => $T:ty),* $(,)?) => {
        /// The payload of a link-local control frame, by the mechanism that owns it
        /// (docs/architecture.md). The frame's flow identity (for a CIP, the flow it names)
        /// is the packet's own `flow` and `hash`.
        #[derive(Copy, Clone, Debug, PartialEq, Eq)]
        pub enum Frame { $($(#[cfg($cfg)])? $Arm(<$T as $crate::switch::mechanism::SwitchMechanism>::Frame)),* }

        /// What a routed mechanism message carries beyond the packet's own fields, by the
        /// mechanism that owns it.
        #[derive(Copy, Clone, Debug, PartialEq, Eq)]
        pub enum Msg { $($(#[cfg($cfg)])? $Arm(<$T as $crate::switch::mechanism::SwitchMechanism>::Msg)),* }

        /// A mechanism's timer, carried by the engine's single mechanism event kind.
        #[derive(Copy, Clone, Debug)]
        pub enum MechTimer { $($(#[cfg($cfg)])? $Arm(<$T as $crate::switch::mechanism::SwitchMechanism>::Timer)),* }

        /// Each mechanism's parameters (`None`: off), as the scenario builder resolved them.
        #[derive(Clone, Debug, Default)]
        pub struct MechanismParams { $($(#[doc = $doc])* $(#[cfg($cfg)])? pub $field: Option<<$T as $crate::switch::mechanism::SwitchMechanism>::Params>,)* }

        impl MechanismParams {
            /// Refuse two configured mechanisms that declare one exclusive capability
            /// (`EXCLUSIVE`), naming both tables.
            pub fn check_exclusive(&self) -> Result<(), $crate::sim::error::ScenarioError> {
                use $crate::switch::mechanism::{SwitchMechanism, EXCLUSIVE};
                for (cap, what) in EXCLUSIVE {
                    let mut have: Vec<&str> = Vec::new();
                    $($(#[cfg($cfg)])? if <$T>::CAPS.has(cap) && self.$field.is_some() { have.push(<$T>::KEY); })*
                    if let [first, second, ..] = have[..] {
                        return Err($crate::sim::error::err(format!("switch.{second}"), format!("cannot run with switch.{first}: both {what}, and only one may; remove one of them")));
                    }
                }
                Ok(())
            }
        }

        /// Every listed mechanism's table key, the stages it may act at and its random table
        /// (`SwitchMechanism::arbitrary`), in list order: what the engine's property tests
        /// draw from (and what they may expect of a run with it).
        #[cfg(test)]
        pub const ARBITRARY: &[(&str, $crate::switch::mechanism::Caps, fn(u64, u8, u32) -> Option<$crate::switch::mechanism::Arbitrary>)] =
            &[$($(#[cfg($cfg)])? (<$T as $crate::switch::mechanism::SwitchMechanism>::KEY, <$T as $crate::switch::mechanism::SwitchMechanism>::CAPS, <$T as $crate::switch::mechanism::SwitchMechanism>::arbitrary),)*];

        /// Every listed mechanism's field name and its columns and summary keys, in list
        /// order, with whether the entry is compiled for tests alone (a stand-in the outputs
        /// reference leaves out).
        pub const OUTPUTS: &[(&str, $crate::metrics::Outputs, bool)] =
            &[$($(#[cfg($cfg)])? (stringify!($field), <$T as $crate::switch::mechanism::SwitchMechanism>::OUTPUTS, false $(|| { let _ = stringify!($cfg); true })?),)*];

        /// The configured switch mechanisms, each `None` when off, called in list order.
        #[derive(Default)]
        pub struct Mechanisms {
            $($(#[doc = $doc])* $(#[cfg($cfg)])? pub $field: Option<$T>,)*
            /// The union of the configured mechanisms' capabilities.
            caps: $crate::switch::mechanism::Caps,
        }

        impl MechTimer {
            /// The tie key of the timer's event: its mechanism's place in the list, then
            /// where it runs (`SwitchMechanism::timer_place`).
            pub fn tie(self) -> u64 {
                use $crate::switch::mechanism::SwitchMechanism;
                let mut _arm = 0u64;
                $(
                    $(#[cfg($cfg)])? {
                        if let MechTimer::$Arm(t) = self {
                            return _arm << 32 | <$T>::timer_place(t) as u64;
                        }
                        _arm += 1;
                    }
                )*
                unreachable!()
            }
        }

        impl Frame {
            /// Bytes on the wire.
            pub fn wire_bytes(self) -> u32 {
                use $crate::switch::mechanism::SwitchMechanism;
                match self { $($(#[cfg($cfg)])? Frame::$Arm(f) => <$T>::frame_bytes(f)),* }
            }
            /// Write the frame's bytes as its mechanism's standard lays them out (no FCS):
            /// the link's sender and receiver are `w.tx` and `w.rx`.
            pub fn encode(self, w: &$crate::switch::mechanism::WireCtx, out: &mut Vec<u8>) {
                use $crate::switch::mechanism::SwitchMechanism;
                match self { $($(#[cfg($cfg)])? Frame::$Arm(f) => <$T>::encode_frame(f, w, out)),* }
            }
            /// The frame to send in place of `pending`, which has not left its port yet,
            /// when this one is asked for on the same port; None when both must go.
            pub fn replacing(self, pending: Frame) -> Option<Frame> {
                use $crate::switch::mechanism::SwitchMechanism;
                match (self, pending) {
                    $($(#[cfg($cfg)])? (Frame::$Arm(f), Frame::$Arm(p)) => <$T>::replacing(f, p).map(Frame::$Arm),)*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        }

        impl Msg {
            /// Bytes on the wire.
            pub fn wire_bytes(self) -> u32 {
                use $crate::switch::mechanism::SwitchMechanism;
                match self { $($(#[cfg($cfg)])? Msg::$Arm(m) => <$T>::msg_bytes(m)),* }
            }
            /// Write the message's bytes as it crosses the link from `w.tx` to `w.rx`.
            pub fn encode(self, p: &$crate::net::Packet, w: &$crate::switch::mechanism::WireCtx, out: &mut Vec<u8>) {
                use $crate::switch::mechanism::SwitchMechanism;
                match self { $($(#[cfg($cfg)])? Msg::$Arm(m) => <$T>::encode_msg(m, p, w, out)),* }
            }
        }

        #[allow(unused_variables)]
        impl Mechanisms {
            pub fn new(p: MechanismParams, f: &$crate::switch::mechanism::Fabric) -> Mechanisms {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                let mut m = Mechanisms { $($(#[cfg($cfg)])? $field: p.$field.map(|p| <$T>::build(p, f)),)* caps: Caps::NONE };
                $($(#[cfg($cfg)])? if let Some(x) = &m.$field { m.caps = m.caps.or(x.caps()); })*
                m
            }

            /// Whether some configured mechanism declares `c` (a stage none acts at costs
            /// neither a context nor a call).
            #[inline(always)]
            pub fn acts_at(&self, c: $crate::switch::mechanism::Caps) -> bool {
                self.caps.has(c)
            }

            /// The next hop a mechanism that routes chooses (None: ECMP's stands).
            #[inline]
            pub fn route(&mut self, r: &RouteAt, candidates: &[PortId], cx: &mut Ctx) -> Option<PortId> {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::ROUTE) { if let Some(m) = &mut self.$field { if m.caps().has(Caps::ROUTE) { return m.route(r, candidates, cx); } } })*
                None
            }

            /// What becomes of a lossy data packet the buffer refused: the trimming
            /// mechanism's answer, else a drop.
            #[inline]
            pub fn on_overflow(&mut self, a: &Arrival, why: DropReason, cx: &mut Ctx) -> Overflow {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::TRIM) { if let Some(m) = &mut self.$field { if m.caps().has(Caps::TRIM) { return m.on_overflow(a, why, cx); } } })*
                Overflow::Drop
            }

            #[inline]
            pub fn classify(&mut self, a: &mut Arrival, cx: &mut Ctx) {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::CLASSIFY) { if let Some(m) = &mut self.$field { m.classify(a, cx); } })*
            }

            /// The first mechanism that drops or holds the packet decides; one that admits it
            /// by its own accounting (`Admitted`) lets a later one hold it, never drop it
            /// (the admitting one has counted it). Otherwise the buffer model decides.
            #[inline]
            pub fn admit(&mut self, a: &mut Arrival, cx: &mut Ctx) -> Admission {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                let mut admitted = false;
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::ADMIT) {
                    if let Some(m) = &mut self.$field {
                        match m.admit(a, cx) {
                            Admission::Buffer => {}
                            Admission::Admitted => admitted = true,
                            x => {
                                debug_assert!(!admitted || x == Admission::Held, "{}: dropped a packet an earlier mechanism admitted", <$T>::KEY);
                                debug_assert!(x != Admission::Held || a.held, "{}: held a packet without setting Arrival::held", <$T>::KEY);
                                return x;
                            }
                        }
                    }
                })*
                if admitted { Admission::Admitted } else { Admission::Buffer }
            }

            /// Every mechanism that counts queued packets sees one held at the ingress side.
            #[inline]
            pub fn on_held(&mut self, a: &Arrival, cx: &mut Ctx) {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::ENQUEUE) { if let Some(m) = &mut self.$field { m.on_held(a, cx); } })*
            }

            /// Mark or drop on arrival, before the packet joins its queue: a classifier's
            /// rule first, else the queue's marker. The context is built in the branch that
            /// uses it: on every switch hop, with the step marker inlined, the compiler then
            /// keeps only the fields the marker reads (a context built before the match cost
            /// the k = 8 bench 1.8% of its instructions).
            #[inline(always)]
            pub fn aqm<'a>(&mut self, a: &Arrival, cx: impl FnOnce() -> Ctx<'a>) -> AqmAction {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                let ect = a.ecn.is_ect();
                match a.aqm {
                    AqmRule::Skip => return AqmAction::Pass,
                    AqmRule::MarkCe => return if ect { AqmAction::Mark } else { AqmAction::Pass },
                    AqmRule::Queue => {}
                }
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::MARK) { if let Some(m) = &mut self.$field { return m.on_arrival(a, ect, &mut cx()); } })*
                AqmAction::Pass
            }

            #[inline]
            pub fn on_enqueue(&mut self, a: &Arrival, cx: &mut Ctx) {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::ENQUEUE) { if let Some(m) = &mut self.$field { m.on_enqueue(a, cx); } })*
            }

            /// Every mechanism sees the departure; the verdict is the strongest of theirs.
            #[inline]
            pub fn on_dequeue(&mut self, d: &Departure, cx: &mut Ctx) -> $crate::switch::mechanism::Verdict {
                use $crate::switch::mechanism::{Caps, SwitchMechanism, Verdict};
                let mut v = Verdict::Send;
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::DEQUEUE) { if let Some(m) = &mut self.$field { v = v.and(m.on_dequeue(d, cx)); } })*
                v
            }

            /// hold: whether switch queue `queue` of `port` may not transmit now.
            #[inline]
            pub fn holds(&self, port: PortId, queue: usize, queues: &[PktQueue], pkts: &PacketArena, now: SimTime) -> bool {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::HOLD) && self.$field.as_ref().is_some_and(|m| m.holds(port, queue, queues, pkts, now)) { return true; })*
                false
            }

            /// Whether a received pause holds class `class` of `port` (switch or NIC).
            #[inline]
            pub fn gated(&self, port: PortId, class: usize, now: SimTime) -> bool {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::GATE) && self.$field.as_ref().is_some_and(|m| m.gated(port, class, now)) { return true; })*
                false
            }

            /// Which packet of the queue the scheduler chose leaves: the head, or what the
            /// mechanism that reorders picks (None: none may leave now).
            #[inline]
            pub fn pick(&mut self, port: PortId, queue: usize, q: &PktQueue, pkts: &PacketArena, now: SimTime) -> Option<usize> {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::REORDER) { if let Some(m) = &mut self.$field { if m.caps().has(Caps::REORDER) { return m.pick(port, queue, q, pkts, now); } } })*
                (!q.is_empty()).then_some(0)
            }

            /// Whether a NIC may start a frame of a flow to `dst` (hash `hash`, class
            /// `class`) on `port` now.
            #[inline]
            pub fn nic_may_send(&self, port: PortId, dst: HostId, hash: u32, class: usize, now: SimTime) -> bool {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::REORDER) && !self.$field.as_ref().is_none_or(|m| m.nic_may_send(port, dst, hash, class, now)) { return false; })*
                true
            }

            /// A packet of class `class` starts transmission on `port` (switch or NIC).
            pub fn on_transmit(&mut self, port: PortId, pkt: PktId, class: usize, cx: &mut Ctx) {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::WATCH_TX) { if let Some(m) = &mut self.$field { m.on_transmit(port, pkt, class, cx); } })*
            }

            /// A data frame of `wire` bytes of `flow` left its NIC at `now`: until when a
            /// rate limiter holds the flow, if one does.
            #[inline]
            pub fn on_host_send(&mut self, flow: FlowId, wire: u32, now: SimTime) -> Option<SimTime> {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                let mut until: Option<SimTime> = None;
                $($(#[cfg($cfg)])? if <$T>::CAPS.has(Caps::LIMIT_RATES) { if let Some(m) = &mut self.$field { until = until.max(m.on_host_send(flow, wire, now)); } })*
                until
            }

            /// Whether a mechanism of this node has paused the peer of `port` in `class`.
            pub fn pausing(&self, port: PortId, class: usize) -> bool {
                use $crate::switch::mechanism::SwitchMechanism;
                $($(#[cfg($cfg)])? if self.$field.as_ref().is_some_and(|m| m.pausing(port, class)) { return true; })*
                false
            }

            /// A link-local frame arrived through `port` (of a switch or a host).
            pub fn on_frame(&mut self, frame: Frame, port: PortId, flow: FlowId, hash: u32, cx: &mut Ctx) {
                use $crate::switch::mechanism::SwitchMechanism;
                match frame { $($(#[cfg($cfg)])? Frame::$Arm(f) => if let Some(m) = &mut self.$field { m.on_frame(f, port, flow, hash, cx) }),* }
            }

            /// A routed message is about to leave switch `at.sw` through `at.out`: whether a
            /// mechanism consumed it instead. Its owner is taken out for the call, so that it
            /// can ask the others (`pausing`).
            pub fn on_msg(&mut self, msg: Msg, at: $crate::switch::mechanism::MsgAt, cx: &mut Ctx) -> bool {
                use $crate::switch::mechanism::SwitchMechanism;
                match msg {
                    $($(#[cfg($cfg)])? Msg::$Arm(x) => match self.$field.take() {
                        Some(mut m) => {
                            let consumed = m.on_msg(x, at, self, cx);
                            self.$field = Some(m);
                            consumed
                        }
                        None => false,
                    }),*
                }
            }

            /// A routed message reached its host through `port`.
            pub fn on_host_msg(&mut self, msg: Msg, port: PortId, pkt: PktId, cx: &mut Ctx) {
                use $crate::switch::mechanism::SwitchMechanism;
                match msg { $($(#[cfg($cfg)])? Msg::$Arm(x) => if let Some(m) = &mut self.$field { m.on_host_msg(x, port, pkt, cx) }),* }
            }

            /// A mechanism's timer is due. One that asks the others is taken out for the call
            /// (as for `on_msg`).
            pub fn on_timer(&mut self, t: MechTimer, cx: &mut Ctx) {
                use $crate::switch::mechanism::SwitchMechanism;
                match t {
                    $($(#[cfg($cfg)])? MechTimer::$Arm(t) => if <$T>::TIMER_ASKS_OTHERS {
                        if let Some(mut m) = self.$field.take() {
                            m.on_timer_asking(t, self, cx);
                            self.$field = Some(m);
                        }
                    } else if let Some(m) = &mut self.$field {
                        m.on_timer(t, cx)
                    }),*
                }
            }

            /// Add the mechanisms' columns to the ports table (one row per port and queue, in
            /// port order), and their keys to the summary.
            pub fn report(&mut self, r: &mut Report) {
                use $crate::switch::mechanism::SwitchMechanism;
                $($(#[cfg($cfg)])? if let Some(m) = &self.$field { m.report(r); })*
            }

            /// The mechanisms' columns of the flows table for flows `ids`.
            pub fn flow_columns(&self, ids: &[usize], t: &mut $crate::metrics::Table) {
                use $crate::switch::mechanism::SwitchMechanism;
                $($(#[cfg($cfg)])? if let Some(m) = &self.$field { m.flow_columns(ids, t); })*
            }

            /// Flows `ids` (and every one below `below`) were handed out: the mechanisms
            /// forget them.
            pub fn forget_flows(&mut self, ids: &[usize], below: usize) {
                use $crate::switch::mechanism::SwitchMechanism;
                $($(#[cfg($cfg)])? if let Some(m) = &mut self.$field { m.forget_flows(ids, below); })*
            }

            /// Memory a switch with these ports keeps beside its shared pool for the
            /// mechanisms' own admissions (PFC headroom).
            pub fn reserved_beside(&self, ports: &[PortId]) -> u64 {
                use $crate::switch::mechanism::SwitchMechanism;
                let mut sum = 0;
                $($(#[cfg($cfg)])? { sum += self.$field.as_ref().map_or(0, |m| m.reserved_beside(ports)); })*
                sum
            }

            /// What stopped the run, when a mechanism ended it.
            pub fn deadlock(&self) -> &[String] {
                use $crate::switch::mechanism::SwitchMechanism;
                $($(#[cfg($cfg)])? if let Some(d) = self.$field.as_ref().map(|m| m.deadlock()).filter(|d| !d.is_empty()) { return d; })*
                &[]
            }

            /// What the mechanisms' fabric-wide checks saw since the last grid point (the
            /// earliest instant of each, by mechanism in list order; `SwitchMechanism::grid_seen`).
            #[allow(clippy::vec_init_then_push)] // one push per listed mechanism, some under cfg
            pub fn grid_seen(&mut self) -> Vec<Option<SimTime>> {
                use $crate::switch::mechanism::{Caps, SwitchMechanism};
                let mut seen = Vec::new();
                $($(#[cfg($cfg)])? seen.push(self.$field.as_mut().filter(|_| <$T>::CAPS.has(Caps::GRID)).and_then(|m| m.grid_seen()));)*
                seen
            }

            /// The views of this partition for the checks due at grid point `at` (by
            /// mechanism in list order; empty for one not due).
            #[allow(clippy::vec_init_then_push)] // one push per listed mechanism, some under cfg
            pub fn grid_views(&self, at: SimTime, own: &dyn Fn(u32) -> bool, cx: &Ctx) -> Vec<Option<$crate::switch::mechanism::WaitFor>> {
                use $crate::switch::mechanism::SwitchMechanism;
                use $crate::switch::mechanism::Caps;
                let mut views = Vec::new();
                $($(#[cfg($cfg)])? views.push(self.$field.as_ref().filter(|m| <$T>::CAPS.has(Caps::GRID) && m.grid_due(at)).map(|m| m.grid_view(at, own, cx)));)*
                views
            }

            /// Judge every partition's seen instants and views (`seen[p]` and `views[p]`,
            /// as `grid_seen` and `grid_views` gave them): the run's end, if a check ends it.
            pub fn grid_judge(&mut self, at: SimTime, seen: &[Vec<Option<SimTime>>], views: &[Vec<Option<$crate::switch::mechanism::WaitFor>>], topo: &$crate::net::Topology) -> Option<$crate::sim::EndReason> {
                use $crate::switch::mechanism::SwitchMechanism;
                let mut _k = 0usize;
                let mut end = None;
                $(
                    $(#[cfg($cfg)])? {
                        if let Some(m) = self.$field.as_mut() {
                            let first = seen.iter().filter_map(|s| s[_k]).min();
                            let v: Vec<$crate::switch::mechanism::WaitFor> = views.iter().filter_map(|v| v[_k].clone()).collect();
                            if end.is_none() && (first.is_some() || !v.is_empty()) {
                                end = m.grid_judge(at, first, &v, topo);
                            }
                        }
                        _k += 1;
                    }
                )*
                end
            }

            /// The mechanisms' names and capabilities in list order (docs/architecture.md's
            /// hook table is checked against this): the shipped ones, not a test's stand-in
            /// (an entry under `#[cfg(..)]`).
            #[allow(clippy::vec_init_then_push)] // one push per listed mechanism, some under cfg
            pub fn declared() -> Vec<(&'static str, $crate::switch::mechanism::Caps)> {
                use $crate::switch::mechanism::SwitchMechanism;
                let mut d = Vec::new();
                $($(#[cfg(all(any(), $cfg))])? d.push((stringify!($field), <$T>::CAPS));)*
                d
            }
        }
    };
}
pub(crate) use switch_mechanisms;

#[cfg(test)]
mod tests {
    /// Two configured mechanisms that both declare an exclusive capability (here REORDER:
    /// DRC and FQ-CoDel) are refused, the error naming both tables; one alone passes.
    #[test]
    fn two_reordering_mechanisms_are_refused_naming_both() {
        use crate::switch::{drc::DrcParams, fq_codel::FqCodelConfig, MechanismParams};
        let one = MechanismParams { drc: Some(DrcParams::default()), ..Default::default() };
        assert!(one.check_exclusive().is_ok());
        let two = MechanismParams { fq_codel: Some(FqCodelConfig::default().params(1500)), ..one };
        let e = two.check_exclusive().unwrap_err();
        assert_eq!(e.key, "switch.fq_codel");
        assert!(e.message.contains("cannot run with switch.drc") && e.message.contains("reorder"), "{e}");
    }
    /// docs/architecture.md's hook table is the one the mechanism list declares (regenerate
    /// it with `cargo run -p dcnsim-core --example gen_reference`).
    #[test]
    fn architecture_hook_table_is_up_to_date() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/architecture.md");
        let doc = std::fs::read_to_string(path).unwrap();
        assert!(doc == super::with_hook_table(&doc), "docs/architecture.md's hook table is stale: run `cargo run -p dcnsim-core --example gen_reference`");
    }
}
