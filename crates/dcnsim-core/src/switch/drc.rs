//! Directional Rate Control (DRC), as seed 001 proposes it (Wadekar, McAlpine, Gupta, Intel,
//! "Rate Control in Short Range 802.3 Interconnects", IEEE 802.3, September 2004, slides
//! "Direction Rate Control" and the backup slide "DRC Model Implementation").
//!
//! Documented there: the link peer (a switch) supplies *directional congestion feedback*,
//! 2 bits of severity per direction (its own egress ports) and a priority mask (1 bit per
//! priority: where rate control is enabled), in a MAC control frame (MAC control address,
//! source address, DRC type, direction statuses, priority mask, padding, FCS: 64 B). The
//! transmitter "controls rate of Tx from individual queues" and "determines order of Tx from
//! the frame buffer", so a congested direction no longer blocks frames bound elsewhere, the
//! head-of-line blocking 802.3x PAUSE causes at Tx ports.
//!
//! Inferred (the slides give no thresholds, rates or timing; scenario keys, stated defaults):
//! * Severity of a direction: how full its egress queue is against what the buffer would
//!   admit there (`SwitchBuffer::fill`: a static queue against its capacity, a shared-buffer
//!   port against guarantee + alpha x free), the fullest of the rate-controlled classes.
//!   Levels 1, 2, 3 from `thresholds` 0.25, 0.5, 0.75; a level is left only once the fill
//!   is `hysteresis` (0.1) below its threshold, so a queue at a threshold does not make a
//!   frame per packet.
//! * A frame goes to every other port's peer (switch or NIC) when a direction's level
//!   changes, ahead of the data queues. It carries the new status of the directions that
//!   changed at that instant, as a mask of directions at one severity: the seed's frame
//!   carries every direction's status at once, so directions that change together (an
//!   arrival at an input-buffered switch moves every direction's share of the input's free
//!   room) take one frame, not one each. Directions that change to different levels at
//!   once take one frame per level, and a switch of more than 16 ports one per 16
//!   directions (`DIRS_PER_FRAME`: the payload a packet record holds).
//! * Rate per level, as a fraction of the link rate the transmitter may send toward that
//!   direction: `rates` 0.5, 0.25 and 0 (stop). A frame toward a limited direction may start
//!   one serialization time at that rate after the previous one toward it started.
//! * The transmitter's order: within each egress queue (the scheduler between queues is
//!   unchanged), the first frame whose direction may send now goes; at a NIC, a flow whose
//!   direction may not send is skipped. A frame's direction is the peer switch's routing
//!   choice for it (its ECMP hash included).
//! * On an input-buffered switch (`switch.architecture`), whose per-port memory holds what
//!   the port receives, the feedback is per (ingress, direction): the switch tells the peer
//!   on ingress port i the severity of each direction o from what i holds for o (its VOQ,
//!   or its FIFO's packets for o; the rate-controlled classes together) against what i
//!   would still admit for o (those bytes and i's free room: the input is a buffer its
//!   directions share), or (`input_fill = "direction_or_input"`) from the larger of what i
//!   holds for o and all i holds, against i's buffer, so that a full input stops every
//!   direction. Only that peer fills i, so a stop needs room for what it has in flight, not
//!   for every other port's. Where the switch's inputs share one pool
//!   (`input_memory = "shared"`) a direction is judged against what the pool's dynamic
//!   threshold lets its queue grow to, the input against its bytes and the pool's free
//!   ones, and every input again on each arrival and crossing at any of them; then every
//!   peer fills the pool, and a stop cannot keep room for what its peer has in flight. A
//!   FIFO input's packets count toward their own directions,
//!   although the head's blocks them. A packet counts from its arrival at the input until
//!   it crosses the crossbar; the crossbar lets a packet cross only when its direction at
//!   the next switch may receive now, as the output queue's order would
//!   (`Mechanisms::nic_may_send`).

use super::mechanism::{Caps, Fabric, Never, SwitchMechanism, Verdict};
use super::pipeline::{Arrival, Better, Ctx, Departure, Effect, Report};
use super::{Frame, MechTimer};
use crate::net::{InputMemory, PktQueue};
use crate::metrics::{ColumnData as C, Outputs};
use crate::net::{FlowId, HostId, NodeKind, PacketArena, PktId, PktKind, PortId, Routes, Topology};
use crate::sim::{ser_time, SimTime};
use rustc_hash::FxHashMap;

/// Wire bytes of a DRC frame (a minimum MAC control frame).
pub const DRC_FRAME_BYTES: u32 = 64;
/// A Directional Rate Control frame (seed 001): the directions it names are at severity
/// `level()`. The directions are the sender's egress ports by their index among its node's
/// ports: `DIRS_PER_FRAME x block() + i` for each bit `i` of `mask`; block
/// `EVERY_DIRECTION` names every direction at once. Packed, as every frame payload:
/// `Packet` keeps its frame in 4 bytes (net/packet.rs).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(C, packed)]
pub struct DrcFrame {
    /// The severity (top 2 bits) and the block of directions (low 6 bits).
    head: u8,
    pub mask: u16,
}

/// Directions one frame can name (the bits of its mask).
pub const DIRS_PER_FRAME: usize = 16;

/// The block of a frame for every direction of the sender's ingress at once: the input's
/// whole fill sets a floor under each direction's own level (`InputFill::DirectionOrInput`),
/// as the seed's frame carries every direction's status in one.
pub const EVERY_DIRECTION: u8 = 63;

/// Most ports of a switch that runs DRC: every direction must have a block below
/// `EVERY_DIRECTION`.
pub const MAX_PORTS: usize = EVERY_DIRECTION as usize * DIRS_PER_FRAME;

impl DrcFrame {
    /// The directions of `block` set in `mask` are at `level` (0..3).
    pub fn new(block: u8, mask: u16, level: u8) -> DrcFrame {
        debug_assert!(block <= EVERY_DIRECTION && level <= 3);
        DrcFrame { head: level << 6 | block, mask }
    }
    /// Direction `dir` alone is at `level`.
    pub fn one(dir: u16, level: u8) -> DrcFrame {
        let d = dir as usize;
        DrcFrame::new((d / DIRS_PER_FRAME) as u8, 1 << (d % DIRS_PER_FRAME), level)
    }
    /// Every direction is at least at `level` (a floor).
    pub fn every(level: u8) -> DrcFrame {
        DrcFrame::new(EVERY_DIRECTION, u16::MAX, level)
    }
    pub fn level(self) -> u8 {
        self.head >> 6
    }
    pub fn block(self) -> u8 {
        self.head & 63
    }
    /// The directions named, lowest first (none for a floor of every direction).
    pub fn dirs(self) -> impl Iterator<Item = u16> {
        let (base, mut m) = (self.block() as u16 * DIRS_PER_FRAME as u16, if self.block() == EVERY_DIRECTION { 0 } else { self.mask });
        std::iter::from_fn(move || {
            (m != 0).then(|| {
                let i = m.trailing_zeros() as u16;
                m &= m - 1;
                base + i
            })
        })
    }
}

/// The directions of one ingress that changed level at one instant, gathered into the
/// fewest frames (one per severity and block of `DIRS_PER_FRAME` directions). Directions
/// are added in increasing order.
#[derive(Default, Clone, Debug)]
struct Changes {
    block: u8,
    masks: [u16; 4],
    out: Vec<DrcFrame>,
}

impl Changes {
    fn add(&mut self, dir: usize, level: u8) {
        let block = (dir / DIRS_PER_FRAME) as u8;
        if block != self.block {
            self.flush();
            self.block = block;
        }
        self.masks[level as usize] |= 1 << (dir % DIRS_PER_FRAME);
    }
    fn flush(&mut self) {
        for (level, m) in self.masks.iter_mut().enumerate() {
            if *m != 0 {
                self.out.push(DrcFrame::new(self.block, *m, level as u8));
                *m = 0;
            }
        }
    }
}

/// The DRC frame's MAC Control opcode. The seed names a "DRC type" but gives no value; this
/// one is assigned to nothing (802.3 clause 31 annex 31A).
pub const OPCODE_DRC: u16 = 0xFF01;

/// The bytes of a DRC frame from `src` (seed 001's layout: MAC control address, source
/// address, DRC type, then ours for the directions a frame carries: the priority mask
/// `classes`, the first direction of its block (0xFFFF: every direction), the mask of the
/// block's directions it names and their severity), padded to the minimum frame, no FCS.
pub fn encode(f: DrcFrame, classes: u8, src: [u8; 6], out: &mut Vec<u8>) {
    use crate::switch::pfc::{ETHERTYPE_MAC_CONTROL, MAC_CONTROL_DA};
    let start = out.len();
    crate::net::wire::eth(out, MAC_CONTROL_DA, src, None, ETHERTYPE_MAC_CONTROL);
    out.extend_from_slice(&OPCODE_DRC.to_be_bytes());
    out.push(classes);
    let first = if f.block() == EVERY_DIRECTION { u16::MAX } else { f.block() as u16 * DIRS_PER_FRAME as u16 };
    out.extend_from_slice(&first.to_be_bytes());
    out.extend_from_slice(&{ f.mask }.to_be_bytes());
    out.push(f.level());
    crate::net::wire::pad(out, start);
}

/// Defaults of `switch.drc` (ours: the seed gives none).
pub const DEFAULT_THRESHOLDS: [f64; 3] = [0.25, 0.5, 0.75];
pub const DEFAULT_RATES: [f64; 3] = [0.5, 0.25, 0.0];
pub const DEFAULT_HYSTERESIS: f64 = 0.1;

/// On an input-buffered switch, what a direction's severity judges (module doc).
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, Copy, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum InputFill {
    /// What the input holds for the direction against what it would admit for it (those
    /// bytes and the input's free room; from a pool its switch's inputs share, as far as
    /// the pool's dynamic threshold lets it grow), as an output queue's fill is judged
    /// against what the buffer would admit there: the input is a buffer its directions
    /// share.
    #[default]
    Direction,
    /// The larger of what the input holds for the direction and of all it holds, against
    /// the input buffer: a full input stops every direction. From a shared pool, the
    /// direction as under "direction" (against what the threshold leaves its queue) and
    /// the input against what it holds and the pool's free bytes.
    DirectionOrInput,
}

/// How many bytes a shared pool's dynamic threshold still lets a queue holding `unit`
/// grow by, `free` bytes of the pool free: to alpha (free + unit) / (1 + alpha), where
/// its bytes meet alpha x what is then free.
#[inline]
fn threshold_room(unit: u64, free: u64, alpha: f64) -> f64 {
    (alpha * (free + unit) as f64 / (1.0 + alpha) - unit as f64).max(0.0)
}

/// How many more bytes an input drawing on memory `m` may take while it holds `own`
/// bytes and the memory `held`: its free buffer; from a shared pool, the pool's free bytes
/// (VOQs, each held alone) or what the threshold leaves its one FIFO.
#[inline]
fn input_room(own: u64, held: u64, m: InputMemory) -> f64 {
    let free = m.bytes.saturating_sub(held);
    match m.alpha {
        Some(alpha) if m.fifo => threshold_room(own, free, alpha),
        _ => free as f64,
    }
}

/// `part` of `part + room`, 1 where both are 0.
#[inline]
fn share(part: u64, room: f64) -> f64 {
    match part as f64 + room {
        0.0 => 1.0,
        all => part as f64 / all,
    }
}

impl InputFill {
    /// Under "direction_or_input", the fill of the whole input that holds `own` bytes
    /// (the floor under each of its directions): against its buffer, or against its bytes
    /// and the pool's free ones where its switch's inputs share one (a filling pool stops
    /// an input that holds nothing only once nothing is free: DRC's feedback is per
    /// ingress).
    pub fn input(own: u64, held: u64, m: InputMemory) -> f64 {
        match m.alpha {
            None => own as f64 / m.bytes as f64,
            Some(_) => share(own, input_room(own, held, m)),
        }
    }

    /// The fill of its own of a direction for which an input drawing on memory `m` holds
    /// `mine`, of `own` it holds in all, where the memory holds `held` (all its switch's
    /// inputs, where they share a pool; else `own`). Under "direction_or_input" the
    /// input's fill (`InputFill::input`) is a floor sent apart, for every direction at
    /// once.
    pub fn fill(self, mine: u64, own: u64, held: u64, m: InputMemory) -> f64 {
        let free = m.bytes.saturating_sub(held);
        match (self, m.alpha) {
            // what the input would still admit for the direction: its own bytes and the room
            // (a full input admits nothing more for a direction it holds nothing for)
            (InputFill::Direction, None) => match mine + free {
                0 => 1.0,
                room => mine as f64 / room as f64,
            },
            // from a shared pool, in both readings, what the threshold leaves the queue that
            // holds the direction's bytes (its VOQ, or the input's FIFO): the direction's
            // own limit, as the input's buffer is with an input to itself
            (_, Some(alpha)) => share(mine, threshold_room(if m.fifo { own } else { mine }, free, alpha)),
            (InputFill::DirectionOrInput, None) => mine as f64 / m.bytes as f64,
        }
    }
}

/// `switch.drc`, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct DrcParams {
    /// Fill at which levels 1, 2, 3 start.
    pub thresholds: [f64; 3],
    /// Fraction of the link rate allowed toward a direction at levels 1, 2, 3.
    pub rates: [f64; 3],
    pub hysteresis: f64,
    /// Rate-controlled traffic classes (the priority mask), one bit per class.
    pub classes: u8,
    /// Per port: the memory its input draws on where its switch holds packets at its inputs
    /// (`switch.architecture`), 0 where it is output-queued; empty: every switch is.
    pub inputs: Vec<InputMemory>,
    pub input_fill: InputFill,
}

/// The defaults: every class rate-controlled.
impl Default for DrcParams {
    fn default() -> Self {
        DrcParams { thresholds: DEFAULT_THRESHOLDS, rates: DEFAULT_RATES, hysteresis: DEFAULT_HYSTERESIS, classes: 0xff, inputs: Vec::new(), input_fill: InputFill::Direction }
    }
}

impl DrcParams {
    /// The level for `fill` when the direction is at `cur`: up at once, down only past the
    /// hysteresis.
    pub fn level(&self, fill: f64, cur: u8) -> u8 {
        let up = self.thresholds.iter().filter(|&&t| fill >= t).count() as u8;
        let keep = self.thresholds[..cur as usize].iter().filter(|&&t| fill >= t - self.hysteresis).count() as u8;
        up.max(keep)
    }
}

/// The transmitter's view of one direction of its peer.
#[derive(Copy, Clone, Debug, Default)]
struct Dir {
    level: u8,
    /// Earliest start of the next frame toward it (levels 1 and 2).
    next: SimTime,
}

/// DRC on every switch (feedback) and every transmitter that faces one (switch ports and
/// NICs): the module doc describes the model.
#[derive(Clone, Debug)]
pub struct Drc {
    pub p: DrcParams,
    queues: usize,
    /// The level each switch port last advertised.
    level: Vec<u8>,
    /// A port's index among its node's ports (the frame's direction field).
    local: Vec<u16>,
    /// Per (transmitting port, direction port of its peer).
    dirs: FxHashMap<(PortId, PortId), Dir>,
    /// Directions above level 0, per transmitting port, and one more while its floor is
    /// (the fast path when none is).
    limited: Vec<u32>,
    /// Per transmitting port: the level its peer gave every direction at once
    /// (`EVERY_DIRECTION`).
    floor: Vec<u8>,
    /// The switch index of each port's peer (u32::MAX: a host), and the fabric's routes: a
    /// frame's direction is its next hop there (a copy, kept only in DRC runs, so the
    /// transmitter's hot path passes nothing extra).
    peer_switch: Vec<u32>,
    routes: Routes,
    /// A wake-up is queued for the port at this time.
    wake_at: Vec<SimTime>,
    /// DRC frames sent per port; frames that stopped a direction (level 3).
    frames: Vec<u64>,
    stops: Vec<u64>,
    /// Per (ingress, direction) at input-buffered switches: each ingress port's first
    /// entry (u32::MAX at an output-queued switch; its directions follow by local index)
    /// and the level last sent for each direction. What the input holds for a direction
    /// the switch counts (`PortQueues::held_between`, `held_in`).
    at_input: Vec<u32>,
    toward_level: Vec<u8>,
    /// Per port at input-buffered switches: the level of its input's whole fill last sent
    /// ("direction_or_input").
    input_level: Vec<u8>,
    /// Scratch space of the frames one arrival's changes make (`Changes`).
    changes: Changes,
}

impl Drc {
    pub fn new(p: DrcParams, topo: &Topology, routes: &Routes, queues: usize) -> Drc {
        let n = topo.ports.len();
        let mut local = vec![0u16; n];
        for node in &topo.nodes {
            for (i, &port) in node.ports.iter().enumerate() {
                local[port as usize] = i as u16;
            }
        }
        let peer_switch = (0..n as PortId)
            .map(|p| {
                let peer = &topo.nodes[topo.peer_node(p) as usize];
                if peer.kind == NodeKind::Switch {
                    peer.index
                } else {
                    u32::MAX
                }
            })
            .collect();
        let mut at_input = vec![u32::MAX; n];
        let mut entries = 0usize;
        for node in topo.nodes.iter().filter(|nd| nd.kind == NodeKind::Switch) {
            for &port in node.ports.iter().filter(|&&pt| p.inputs.get(pt as usize).is_some_and(|m| m.bytes > 0)) {
                at_input[port as usize] = entries as u32;
                entries += node.ports.len();
            }
        }
        Drc {
            at_input,
            toward_level: vec![0; entries],
            input_level: vec![0; if entries > 0 { n } else { 0 }],
            changes: Changes::default(),
            floor: vec![0; n],
            p,
            queues,
            level: vec![0; n],
            local,
            dirs: FxHashMap::default(),
            limited: vec![0; n],
            peer_switch,
            routes: routes.clone(),
            wake_at: vec![SimTime::MAX; n],
            frames: vec![0; n],
            stops: vec![0; n],
        }
    }

    /// Recompute `port`'s level; on a change, tell every other peer of switch `sw`.
    fn update(&mut self, sw: u32, port: PortId, cx: &mut Ctx) {
        let eg = &cx.egress[port as usize];
        let buf = &cx.switches[sw as usize].buffer;
        let queues = cx.port_queues.of(port);
        let fill = (0..self.queues).filter(|&q| self.p.classes & (1 << q) != 0).map(|q| buf.fill(eg.bytes, queues[q].bytes)).fold(0.0, f64::max);
        let cur = self.level[port as usize];
        let new = self.p.level(fill, cur);
        if new == cur {
            return;
        }
        self.level[port as usize] = new;
        let node = cx.topo.ports[port as usize].node;
        let dir = self.local[port as usize];
        for &q in &cx.topo.nodes[node as usize].ports {
            if q != port {
                self.send(q, DrcFrame::one(dir, new), cx);
            }
        }
    }

    /// A packet `a` held at an input-buffered switch's input arrived or crossed (the
    /// switch's counts already say so): the directions of its ingress it may have moved a
    /// level; where the switch's inputs share a pool, of every input, whose free bytes
    /// move them all.
    fn held(&mut self, a: &Arrival, cx: &mut Ctx) {
        if !self.input_buffered(a.in_port) {
            return;
        }
        let o = self.local[a.out as usize] as usize;
        if self.p.inputs[a.in_port as usize].alpha.is_none() {
            return self.relevel_input(a.in_port, Some(o), cx);
        }
        let node = cx.topo.ports[a.in_port as usize].node;
        for k in 0..cx.topo.nodes[node as usize].ports.len() {
            let port = cx.topo.nodes[node as usize].ports[k];
            self.relevel_input(port, None, cx);
        }
    }

    /// Judge input `port` again: under "direction", or with `o` None, each of its
    /// directions, the directions that change level going to the peer together; under
    /// "direction_or_input" with `o` Some, direction `o`; under "direction_or_input" also
    /// the input's whole fill.
    fn relevel_input(&mut self, port: PortId, o: Option<usize>, cx: &mut Ctx) {
        let i = port as usize;
        match (self.p.input_fill, o) {
            // the input's room moves every direction's fill
            (InputFill::Direction, _) | (InputFill::DirectionOrInput, None) => {
                let node = cx.topo.ports[i].node;
                let mut ch = std::mem::take(&mut self.changes);
                for d in 0..cx.topo.nodes[node as usize].ports.len() {
                    if let Some(new) = self.relevel_toward(port, d, cx) {
                        ch.add(d, new);
                    }
                }
                ch.flush();
                for f in ch.out.drain(..) {
                    self.send(port, f, cx);
                }
                self.changes = ch;
            }
            (InputFill::DirectionOrInput, Some(o)) => {
                if let Some(new) = self.relevel_toward(port, o, cx) {
                    self.send(port, DrcFrame::one(o as u16, new), cx);
                }
            }
        }
        if self.p.input_fill == InputFill::DirectionOrInput {
            let (m, q) = (self.p.inputs[i], cx.port_queues);
            let (cur, fill) = (self.input_level[i], InputFill::input(q.held_in(port), q.held_against(port, m), m));
            let new = self.p.level(fill, cur);
            if new != cur {
                self.input_level[i] = new;
                self.send(port, DrcFrame::every(new), cx);
            }
        }
    }

    /// Send `f` to the peer on `port`.
    fn send(&mut self, port: PortId, f: DrcFrame, cx: &mut Ctx) {
        self.frames[port as usize] += 1;
        self.stops[port as usize] += (f.level() == 3) as u64;
        cx.push(Effect::Frame { port, frame: Frame::Drc(f), flow: FlowId::MAX, hash: 0 });
    }

    /// Recompute the level of direction `o` (a local port index) at ingress `port`: the
    /// new level if it changed.
    fn relevel_toward(&mut self, port: PortId, o: usize, cx: &Ctx) -> Option<u8> {
        let (i, slot) = (port as usize, self.at_input[port as usize] as usize + o);
        if self.local[i] as usize == o {
            return None;
        }
        // the bytes of the rate-controlled classes the input holds for the direction
        let q = cx.port_queues;
        let mine = q.held_toward(port, o, self.p.classes);
        let m = self.p.inputs[i];
        let fill = self.p.input_fill.fill(mine, q.held_in(port), q.held_against(port, m), m);
        let cur = self.toward_level[slot];
        let new = self.p.level(fill, cur);
        (new != cur).then(|| {
            self.toward_level[slot] = new;
            new
        })
    }

    /// Whether `port` belongs to an input-buffered switch.
    #[inline]
    fn input_buffered(&self, port: PortId) -> bool {
        self.at_input[port as usize] != u32::MAX
    }

    /// The peer switch's egress port for a frame to `dst` with `hash` sent out of `port`.
    fn direction(&self, port: PortId, dst: HostId, hash: u32) -> Option<PortId> {
        match self.peer_switch[port as usize] {
            u32::MAX => None,
            sw => self.routes.next_hop(sw, dst, hash),
        }
    }

    /// The position in `queue` of the first frame that may start on `port` now (None: none).
    pub fn first_allowed(&self, port: PortId, queue: usize, q: &PktQueue, pkts: &PacketArena, now: SimTime) -> Option<usize> {
        if self.limited[port as usize] == 0 || self.p.classes & (1 << queue) == 0 {
            return (!q.is_empty()).then_some(0);
        }
        q.ids().position(|id| {
            let p = pkts.get(id);
            self.nic_may_send(port, p.dst, p.hash, queue, now)
        })
    }
}

impl SwitchMechanism for Drc {
    type Params = DrcParams;
    type Frame = DrcFrame;
    type Msg = Never;
    type Timer = PortId;
    const KEY: &'static str = "drc";
    const CAPS: Caps = Caps::ENQUEUE.or(Caps::DEQUEUE).or(Caps::HOLD).or(Caps::REORDER).or(Caps::WATCH_TX);
    /// DRC's columns and summary keys (`Drc::report`).
    const OUTPUTS: Outputs = Outputs {
        flows: &[],
        ports: &[(
            &["drc_frames", "drc_stops"],
            "With Directional Rate Control: DRC frames sent out of this port, and of them those at level 3 (a stop of the \
             direction), on the port's queue 0 row",
        )],
        summary: &[(&["drc_frames", "drc_stops"], "With DRC: the ports' columns of the same names, summed")],
    };

    fn build(p: DrcParams, f: &Fabric) -> Drc {
        Drc::new(p, f.topo, f.routes, f.queues)
    }

    /// Increasing thresholds in (0, 1], rates that do not increase (a stop at the last
    /// level half the time), a hysteresis below the first threshold.
    #[cfg(test)]
    fn arbitrary(draw: u64, _: u8, _: u32) -> Option<crate::switch::mechanism::Arbitrary> {
        use crate::switch::mechanism::{bits, Arbitrary};
        let t1 = 0.05 + bits(draw, 0, 4) as f64 * 0.02;
        let t2 = t1 + 0.05 + bits(draw, 4, 3) as f64 * 0.03;
        let t3 = (t2 + 0.05 + bits(draw, 7, 3) as f64 * 0.03).min(1.0);
        let r1 = 0.25 + bits(draw, 10, 2) as f64 * 0.25;
        let r2 = r1 / 2.0;
        let r3 = if bits(draw, 12, 1) == 1 { 0.0 } else { r2 / 2.0 };
        let h = t1 * bits(draw, 13, 2) as f64 / 4.0;
        let line = format!("drc = {{ thresholds = [{t1:?}, {t2:?}, {t3:?}], rates = [{r1:?}, {r2:?}, {r3:?}], hysteresis = {h:?} }}");
        Some(Arbitrary { line, without: &[] })
    }

    /// hold: no frame of the queue may go toward its direction now.
    #[inline]
    fn holds(&self, port: PortId, queue: usize, queues: &[PktQueue], pkts: &PacketArena, now: SimTime) -> bool {
        self.first_allowed(port, queue, &queues[queue], pkts, now).is_none()
    }

    #[inline]
    fn pick(&mut self, port: PortId, queue: usize, q: &PktQueue, pkts: &PacketArena, now: SimTime) -> Option<usize> {
        self.first_allowed(port, queue, q, pkts, now)
    }
    /// on_enqueue at a switch: the direction the packet joined may have grown a level; at an
    /// input-buffered one, the packet has crossed and left its ingress's count.
    fn on_enqueue(&mut self, a: &Arrival, cx: &mut Ctx) {
        if a.held {
            self.held(a, cx);
        } else if !self.input_buffered(a.in_port) {
            self.update(a.sw, a.out, cx);
        }
    }

    /// on_held: a packet arrived at an input-buffered switch's input.
    fn on_held(&mut self, a: &Arrival, cx: &mut Ctx) {
        self.held(a, cx);
    }

    /// on_dequeue at a switch: the direction may have drained a level.
    fn on_dequeue(&mut self, d: &Departure, cx: &mut Ctx) -> Verdict {
        if !self.input_buffered(d.port) {
            self.update(d.sw, d.port, cx);
        }
        Verdict::Send
    }

    /// A DRC frame arrived through `port` from its peer switch: the status of the
    /// directions it names, or a floor under all of them.
    fn on_frame(&mut self, f: DrcFrame, port: PortId, _flow: FlowId, _hash: u32, cx: &mut Ctx) {
        let level = f.level();
        let mut fell = false;
        let mut set = |old: u8, limited: &mut u32| {
            match (old, level) {
                (0, 1..) => *limited += 1,
                (1.., 0) => *limited -= 1,
                _ => {}
            }
            fell |= level < old;
        };
        if f.block() == EVERY_DIRECTION {
            set(std::mem::replace(&mut self.floor[port as usize], level), &mut self.limited[port as usize]);
        } else {
            let peer = &cx.topo.nodes[cx.topo.peer_node(port) as usize];
            for dir in f.dirs() {
                let Some(&dport) = peer.ports.get(dir as usize) else {
                    continue;
                };
                let e = self.dirs.entry((port, dport)).or_default();
                set(std::mem::replace(&mut e.level, level), &mut self.limited[port as usize]);
            }
        }
        if fell {
            cx.push(Effect::Wake { port });
        }
    }

    /// Whether a frame to `dst` with `hash` in class `class` may start on `port` now.
    #[inline]
    fn nic_may_send(&self, port: PortId, dst: HostId, hash: u32, class: usize, now: SimTime) -> bool {
        if self.limited[port as usize] == 0 || self.p.classes & (1 << class) == 0 {
            return true;
        }
        let Some(d) = self.direction(port, dst, hash) else {
            return true;
        };
        let (level, next) = self.dirs.get(&(port, d)).map_or((0, SimTime::ZERO), |d| (d.level, d.next));
        let level = level.max(self.floor[port as usize]);
        level == 0 || (self.p.rates[level as usize - 1] > 0.0 && now >= next)
    }

    /// A frame starts on `port`: a limited direction's next frame waits one serialization
    /// time at the direction's rate, and the port is woken then.
    fn on_transmit(&mut self, port: PortId, pkt: PktId, class: usize, cx: &mut Ctx) {
        if self.limited[port as usize] == 0 || self.p.classes & (1 << class) == 0 {
            return;
        }
        let p = cx.pkts.get(pkt);
        if matches!(p.kind, PktKind::Ctrl(_) | PktKind::Msg(_)) {
            return;
        }
        let (dst, hash, size) = (p.dst, p.hash, p.size);
        let Some(dport) = self.direction(port, dst, hash) else {
            return;
        };
        let floor = self.floor[port as usize];
        let level = self.dirs.get(&(port, dport)).map_or(0, |d| d.level).max(floor);
        if level == 0 {
            return;
        }
        let rate = self.p.rates[level as usize - 1];
        if rate <= 0.0 {
            return;
        }
        let d = self.dirs.entry((port, dport)).or_default();
        let link = cx.topo.ports[port as usize].rate_bps as f64;
        d.next = cx.now + ser_time(size as u64, (link * rate).max(1.0) as u64);
        let at = d.next;
        let w = &mut self.wake_at[port as usize];
        if *w <= cx.now || at < *w {
            *w = at;
            cx.timer(at, MechTimer::Drc(port));
        }
    }

    fn timer_place(port: PortId) -> u32 {
        port
    }

    /// A port's wake-up: try to transmit.
    fn on_timer(&mut self, port: PortId, cx: &mut Ctx) {
        if self.wake_at[port as usize] == cx.now {
            self.wake_at[port as usize] = SimTime::MAX;
        }
        cx.push(Effect::Wake { port });
    }

    fn report(&self, r: &mut Report) {
        for (name, v) in [("drc_frames", &self.frames), ("drc_stops", &self.stops)] {
            r.count(name, v.iter().sum::<u64>());
            let mut col = Vec::with_capacity(v.len() * r.queues);
            for &x in v.iter() {
                col.push(x);
                col.extend(std::iter::repeat(0).take(r.queues - 1));
            }
            r.ports_table.push(name, C::U64(col));
        }
        r.metric("drc_frames", "DRC frames", 1.0, "int", Better::Neither);
        r.acted("switch.drc", "DRC frames sent", self.frames.iter().sum::<u64>());
    }

    fn frame_bytes(_: DrcFrame) -> u32 {
        DRC_FRAME_BYTES
    }

    fn encode_frame(f: DrcFrame, w: &crate::switch::mechanism::WireCtx, out: &mut Vec<u8>) {
        let classes = w.mechs.drc.as_ref().map_or(0, |d| d.classes);
        encode(f, classes, crate::net::wire::mac_of(w.topo, w.tx), out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> DrcParams {
        DrcParams::default()
    }

    /// DRC with its defaults on the bench's dumbbell (h0, h1 on "left", h2 on "right").
    fn dumbbell() -> (crate::switch::bench::Bench, Drc) {
        let b = crate::switch::bench::Bench::new();
        let d = Drc::new(params(), &b.topo, &Routes::build(&b.topo).unwrap(), 1);
        (b, d)
    }

    /// The transmitter's side on a dumbbell (h0, h1 on "left", h2 on "right"): the left
    /// switch's port to "right" learns that right's port to h2 is at severity 1, 2, 3 and
    /// spaces frames toward it at 1/2, 1/4 of 100G, then stops; back at 0 it wakes the port.
    #[test]
    fn a_direction_is_spaced_by_its_severity_and_stopped_at_three() {
        use crate::net::Packet;
        use crate::switch::bench::G100;
        let (mut b, mut d) = dumbbell();
        let up = b.port("left", "right");
        let dir = b.port("right", "h2");
        let dir_idx = d.local[dir as usize];
        let pkt = b.pkts.alloc(Packet { kind: PktKind::Data, flow: 1, src: 0, dst: 2, size: 1500, hash: 7, ..Packet::blank() });
        let t0 = SimTime::from_us(10);
        assert!(d.nic_may_send(up, 2, 7, 0, t0), "no feedback yet");
        for (level, share) in [(1u8, 2u64), (2, 4)] {
            d.on_frame(DrcFrame::one(dir_idx, level), up, 0, 0, &mut b.cx(t0));
            d.on_transmit(up, pkt, 0, &mut b.cx(t0));
            let gap = ser_time(1500, G100 / share);
            assert!(!d.nic_may_send(up, 2, 7, 0, t0 + gap - SimTime(1)), "level {level}");
            assert!(d.nic_may_send(up, 2, 7, 0, t0 + gap), "level {level}: one frame per {gap} ps");
        }
        b.fx.clear();
        d.on_frame(DrcFrame::one(dir_idx, 3), up, 0, 0, &mut b.cx(t0));
        assert!(!d.nic_may_send(up, 2, 7, 0, SimTime::from_ms(10)), "stopped");
        d.on_frame(DrcFrame::one(dir_idx, 0), up, 0, 0, &mut b.cx(t0));
        assert!(d.nic_may_send(up, 2, 7, 0, t0));
        assert!(matches!(b.fx[..], [Effect::Wake { port }] if port == up), "resumed: the port is woken");
        assert_eq!(d.limited[up as usize], 0);
    }

    /// A frame for every direction (an input-buffered peer's whole input at a level) sets a
    /// floor under each direction's own level: stopped at 3 whatever a direction's own
    /// level, spaced at level 1 toward a direction the peer never named, and back to each
    /// direction's own level (with a wake-up) when it falls.
    #[test]
    fn floor_of_every_direction() {
        use crate::switch::bench::G100;
        let (mut b, mut d) = dumbbell();
        let up = b.port("left", "right");
        let dir_idx = d.local[b.port("right", "h2") as usize];
        let t0 = SimTime::from_us(10);
        d.on_frame(DrcFrame::one(dir_idx, 0), up, 0, 0, &mut b.cx(t0));
        d.on_frame(DrcFrame::every(3), up, 0, 0, &mut b.cx(t0));
        assert!(!d.nic_may_send(up, 2, 7, 0, t0), "stopped by the floor");
        d.on_frame(DrcFrame::every(1), up, 0, 0, &mut b.cx(t0));
        assert!(d.nic_may_send(up, 2, 7, 0, t0));
        let pkt = b.pkts.alloc(crate::net::Packet { kind: PktKind::Data, flow: 1, src: 0, dst: 2, size: 1500, hash: 7, ..crate::net::Packet::blank() });
        d.on_transmit(up, pkt, 0, &mut b.cx(t0));
        assert!(!d.nic_may_send(up, 2, 7, 0, t0 + ser_time(1500, G100 / 2) - SimTime(1)), "spaced at half the rate");
        b.fx.clear();
        d.on_frame(DrcFrame::every(0), up, 0, 0, &mut b.cx(t0));
        assert!(d.nic_may_send(up, 2, 7, 0, t0));
        assert!(matches!(b.fx[..], [Effect::Wake { port }] if port == up));
        assert_eq!(d.limited[up as usize], 0);
    }

    /// The congested switch's side: a queue filling past a threshold sends its new level to
    /// every other peer, once.
    #[test]
    fn feedback_goes_to_every_other_peer_on_a_change() {
        let (mut b, mut d) = dumbbell();
        let (inp, out) = (b.port("left", "h0"), b.port("left", "right"));
        // Bench queues hold 16 MB: 30% full is severity 1
        let a = b.data(1, 0, 2, inp, out, 4_800_000);
        d.on_enqueue(&a, &mut b.cx(SimTime::ZERO));
        let frames: Vec<(PortId, Frame)> = b.fx.drain(..).filter_map(|e| if let Effect::Frame { port, frame, .. } = e { Some((port, frame)) } else { None }).collect();
        let dir = d.local[out as usize];
        let mut to: Vec<PortId> = frames.iter().map(|f| f.0).collect();
        to.sort();
        let mut others: Vec<PortId> = b.topo.nodes[b.topo.ports[out as usize].node as usize].ports.iter().copied().filter(|&p| p != out).collect();
        others.sort();
        assert_eq!(to, others);
        assert!(frames.iter().all(|f| f.1 == Frame::Drc(DrcFrame::one(dir, 1))));
        let a = b.data(2, 0, 2, inp, out, 4_900_000);
        d.on_enqueue(&a, &mut b.cx(SimTime::ZERO));
        assert!(b.fx.is_empty(), "no change, no frame");
    }

    /// Directions that change at one instant go in the fewest frames: one per severity and
    /// block of 16, each naming its directions, and the receiver reads them all back.
    #[test]
    fn changes_share_frames_by_level_and_block() {
        let mut c = Changes::default();
        for (d, l) in [(1, 2), (3, 2), (4, 0), (15, 2), (16, 3), (40, 3)] {
            c.add(d, l);
        }
        c.flush();
        let got: Vec<(u8, u8, Vec<u16>)> = c.out.iter().map(|f| (f.block(), f.level(), f.dirs().collect())).collect();
        assert_eq!(got, vec![(0, 0, vec![4]), (0, 2, vec![1, 3, 15]), (1, 3, vec![16]), (2, 3, vec![40])]);
        assert_eq!(DrcFrame::every(2).dirs().count(), 0, "a floor names no direction of its own");
        assert_eq!((DrcFrame::every(2).level(), DrcFrame::every(2).block()), (2, EVERY_DIRECTION));
        assert_eq!(DrcFrame::one(1007, 1).dirs().collect::<Vec<_>>(), vec![1007]);
    }

    /// A frame naming several directions sets each of them: stopped toward both, and one
    /// wake-up when they fall back.
    #[test]
    fn one_frame_sets_every_direction_it_names() {
        let (mut b, mut d) = dumbbell();
        let up = b.port("left", "right");
        let right = b.topo.ports[b.port("right", "h2") as usize].node;
        let n = b.topo.nodes[right as usize].ports.len();
        let mask = ((1u32 << n) - 1) as u16;
        let t0 = SimTime::from_us(10);
        d.on_frame(DrcFrame::new(0, mask, 3), up, 0, 0, &mut b.cx(t0));
        assert!(!d.nic_may_send(up, 2, 7, 0, t0), "toward h2 stopped");
        assert_eq!(d.limited[up as usize] as usize, n, "every direction named is limited");
        b.fx.clear();
        d.on_frame(DrcFrame::new(0, mask, 0), up, 0, 0, &mut b.cx(t0));
        assert!(d.nic_may_send(up, 2, 7, 0, t0));
        assert_eq!(d.limited[up as usize], 0);
        assert!(matches!(b.fx[..], [Effect::Wake { port }] if port == up), "one wake-up");
    }

    /// A direction's fill at an input of 16,000 B: under "direction" against its bytes and
    /// the free room (a full input is full for every direction), under
    /// "direction_or_input" its bytes against the buffer (the input's fill is a floor
    /// under every direction, `floor_of_every_direction`).
    #[test]
    fn input_fill_readings() {
        let (d, o) = (InputFill::Direction, InputFill::DirectionOrInput);
        let own = InputMemory { bytes: 16_000, alpha: None, fifo: false };
        let f = |r: InputFill, mine, held| r.fill(mine, held, held, own);
        assert_eq!(f(d, 3_000, 4_000), 0.2);
        assert_eq!(f(d, 0, 4_000), 0.0);
        assert_eq!(f(d, 0, 16_000), 1.0);
        assert_eq!(f(d, 4_000, 17_000), 1.0, "PFC's headroom above the buffer");
        assert_eq!(f(o, 4_000, 12_000), 0.25, "its own; the input's 0.75 goes apart");
        assert_eq!(InputFill::input(12_000, 12_000, own), 0.75);
        // a pool of 64 KB at alpha 1 whose inputs hold 40 KB, 30 KB of it this input's: a
        // direction holding 20 KB could grow to (24 + 20) / 2 = 22 KB, where it meets the
        // 22 KB then free
        let pool = InputMemory { bytes: 64_000, alpha: Some(1.0), fifo: false };
        assert_eq!(d.fill(20_000, 30_000, 40_000, pool), 20.0 / 22.0);
        assert_eq!(d.fill(32_000, 32_000, 32_000, pool), 1.0, "at the threshold");
        assert_eq!(d.fill(0, 0, 64_000, pool), 1.0, "a full pool");
        // the input as a whole: against what it holds and the pool's 24 KB free
        assert_eq!(o.fill(20_000, 30_000, 40_000, pool), 20.0 / 22.0, "the direction's own limit, as under direction");
        assert_eq!(InputFill::input(30_000, 40_000, pool), 30.0 / 54.0);
        assert_eq!(InputFill::input(0, 40_000, pool), 0.0, "an input that holds nothing");
        assert_eq!(InputFill::input(0, 64_000, pool), 1.0, "of a full pool");
        // a FIFO input is the threshold's queue: holding 20 KB it can grow to 22 KB, and
        // its directions share that room
        let fifo = InputMemory { fifo: true, ..pool };
        assert_eq!(InputFill::input(20_000, 40_000, fifo), 20.0 / 22.0);
        assert_eq!(d.fill(5_000, 20_000, 40_000, fifo), 5.0 / 7.0);
        assert_eq!(o.fill(5_000, 20_000, 40_000, fifo), 5.0 / 7.0);
    }

    /// Levels rise at the thresholds and fall only past the hysteresis.
    #[test]
    fn levels_with_hysteresis() {
        let p = params();
        assert_eq!(p.level(0.1, 0), 0);
        assert_eq!(p.level(0.25, 0), 1);
        assert_eq!(p.level(0.8, 0), 3);
        assert_eq!(p.level(0.7, 3), 3, "0.7 is within 0.1 of the 0.75 threshold");
        assert_eq!(p.level(0.64, 3), 2);
        assert_eq!(p.level(0.16, 1), 1);
        assert_eq!(p.level(0.14, 1), 0);
        assert_eq!(p.level(0.0, 2), 0);
    }
}
