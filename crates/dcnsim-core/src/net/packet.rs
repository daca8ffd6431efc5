//! Packets and the packet arena. Packets are pooled and addressed by index
//! (as htsim pools them); events carry a `PktId`, never a packet.

use crate::sim::SimTime;

pub type PktId = u32;
pub type FlowId = u32;
pub type HostId = u32;
pub type NodeId = u32;
pub type PortId = u32;

/// What a frame carries.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PktKind {
    /// Transport payload.
    Data,
    /// Cumulative acknowledgement (`seq` = next byte expected).
    Ack,
    /// RoCE negative acknowledgement: `seq` = the next byte the receiver expects.
    Nack,
    /// DCQCN Congestion Notification Packet, receiver to sender.
    Cnp,
    /// A receiver's credit (`host::credit`): `seq` = the bytes it has granted its sender so
    /// far.
    Credit,
    /// TCP connection set-up (`transport.handshake`): SYN, sender to receiver.
    Syn,
    /// The receiver's SYN-ACK.
    SynAck,
    /// UET's request to send (UE 1.0; htsim `UecRtsPacket`): a header-sized packet, sender
    /// to receiver, carrying the RCCC pull target (`PacketArena::pull`) that asks for credit
    /// (`host::rccc`); answered by an ACK.
    Rts,
    /// The headers of a data packet a switch trimmed (`Overflow::Trim`) instead of
    /// dropping it: `seq` and `payload` name the bytes it no longer carries, `size` is what
    /// is left on the wire.
    Trimmed,
    /// A link-local MAC control frame of a switch mechanism: consumed by the link peer,
    /// never queued behind data (docs/architecture.md, "control frames").
    Ctrl(Frame),
    /// A switch mechanism's message to a host, routed hop by hop like data toward `dst`
    /// ahead of the data queues; the mechanisms see it at every switch it crosses and at
    /// the host (docs/architecture.md, "routed messages").
    Msg(Msg),
}

pub use crate::switch::{Frame, Msg};

/// The ECN field of the IP header (RFC 3168 section 5; ECT(1) is the L4S identifier of
/// RFC 9331).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
    /// Congestion Experienced.
    Ce,
}

impl Ecn {
    /// ECN-capable: ECT(0), ECT(1) or already CE (a CE packet stays ECN-capable).
    #[inline]
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
    #[inline]
    pub fn is_ce(self) -> bool {
        self == Ecn::Ce
    }
}

/// One frame in flight or in a queue.
///
/// Cache-line aligned: the arena's buffer comes from the allocator 16-byte aligned, and a
/// 64-byte record at 16 mod 64 spans two cache lines, so every first touch of a packet cost
/// two misses.
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct Packet {
    pub kind: PktKind,
    pub flow: FlowId,
    pub src: HostId,
    pub dst: HostId,
    /// Data: byte offset of the first payload byte. Ack: cumulative ack.
    pub seq: u64,
    /// Bytes on the wire (what the link serializes and the buffer holds).
    pub size: u32,
    /// Data: payload bytes. Msg: the index of the switch that sent it (what a capture
    /// writes as its source).
    pub payload: u32,
    /// Traffic class, 0..7.
    pub prio: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// ACK: ECN-Echo of the acknowledged packet's CE (DCTCP per-packet echo).
    pub ece: bool,
    /// Data: what its sender says of it, `Packet::RETX` and `Packet::AR`; an ACK echoes
    /// RETX; `Packet::SACKED`, the arena's. One byte of bits: the record fills its cache line.
    pub flags: u8,
    /// ECMP hash of the flow (stable per flow).
    pub hash: u32,
    /// Data: when the sender sent it. Ack: echoed timestamp (RTT sample, RFC 7323 style).
    pub ts: SimTime,
    /// Port this packet entered the current switch through (ingress accounting).
    pub ingress: PortId,
    /// Switch hops so far (dropped past the hop limit: routing loops).
    pub hops: u8,
    /// ACK / NACK: the switch hops of the data packet it answers, as the receiver saw them
    /// (the path length a TTL echo gives the sender). Carried by the reply, so that the
    /// sender reads what the receiver saw when it replied, not its later state.
    pub echo_hops: u8,
    /// Traffic class it was transmitted in on its last link: the class PFC at the receiving
    /// switch accounts it to and pauses (it differs from the local queue under CI). The
    /// receiving switch copies it from `qc` on arrival.
    pub tc: u8,
    /// The queue (traffic class) it joins at the node that holds it, written when it is
    /// queued there, not when it leaves: on large fabrics its record has left the cache by
    /// then, and a write at dequeue was a miss of its own (k = 20: 8% of `try_tx`).
    pub qc: u8,
    /// When it joined its current queue (victim-flow detection).
    pub enq: SimTime,
}

impl Packet {
    /// `flags`: a retransmission.
    pub const RETX: u8 = 1;
    /// `flags`: the sender asks for an ACK at once (UE's AR flag; a UET receiver that
    /// coalesces its ACKs, `transport.uet.ack_every`, answers it without waiting).
    pub const AR: u8 = 2;
    /// `flags`: the arena's SACK table holds this packet's record (`PacketArena::set_sack`
    /// sets it, `alloc` clears it). An ACK without one then never reads the table, whose
    /// record is another cache line: on large fabrics a miss on every ACK.
    pub const SACKED: u8 = 4;

    pub fn blank() -> Packet {
        Packet {
            kind: PktKind::Data,
            flow: 0,
            src: 0,
            dst: 0,
            seq: 0,
            size: 0,
            payload: 0,
            prio: 0,
            ecn: Ecn::NotEct,
            ece: false,
            flags: 0,
            hash: 0,
            ts: SimTime::ZERO,
            ingress: u32::MAX,
            hops: 0,
            echo_hops: 0,
            tc: 0,
            qc: 0,
            enq: SimTime::ZERO,
        }
    }
}

/// One switch hop's in-band network telemetry record as HPCC uses it (Li et al., SIGCOMM
/// 2019, sec. 3.2 and 4.1): the egress queue's length, the bytes the port had transmitted
/// and the time, when the packet left, and the link's rate.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct HopTelemetry {
    /// Bytes queued at the egress port as the packet left.
    pub qlen: u64,
    /// Bytes the port had transmitted (all classes) by then.
    pub tx_bytes: u64,
    pub ts: SimTime,
    pub rate_bps: u64,
}

/// Most hops a packet's telemetry holds: a 3-tier fat-tree path has 5 switches; HPCC's
/// fabrics have at most that.
pub const MAX_TELEMETRY_HOPS: usize = 8;

/// Bytes of telemetry kept for each packet slot once any switch writes telemetry.
pub const TELEMETRY_BYTES_PER_PACKET: usize = std::mem::size_of::<Telemetry>();

/// A packet's telemetry stack, first hop first.
#[derive(Copy, Clone, Debug, Default)]
struct Telemetry {
    hops: [HopTelemetry; MAX_TELEMETRY_HOPS],
    n: u8,
}

/// Most selective-acknowledgement blocks one reply carries: 3, what a TCP ACK with the
/// timestamps option has room for (RFC 2018 sec. 3; Linux sends 3 with timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;

const _: () = assert!(std::mem::size_of::<Sack>() == 56);

/// The selective acknowledgement a reply carries: up to `MAX_SACK_BLOCKS` byte ranges
/// [start, end) the receiver holds above its cumulative point, the block of the segment
/// that triggered the reply first (RFC 2018), or UE's SACK bitmap (UE Specification 1.0,
/// the PDS ACK's SACK_PSN_OFFSET and SACK_BITMAP; htsim's `UecSink::sack`): bit i set when
/// the packet of PSN `base` + i is held.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Sack {
    /// The blocks; a bitmap's (base PSN, bits) in the first, with `n` 0 (in the padding
    /// the blocks leave, so that the record of every ACK slot stays 56 bytes).
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
    n: u8,
    is_bitmap: bool,
}

impl Sack {
    /// The first `MAX_SACK_BLOCKS` of `blocks`.
    pub fn of(blocks: &[(u64, u64)]) -> Sack {
        let mut s = Sack::default();
        for (i, &b) in blocks.iter().take(MAX_SACK_BLOCKS).enumerate() {
            s.blocks[i] = b;
            s.n = i as u8 + 1;
        }
        s
    }
    /// `of(blocks)` boxed, or None where there are none: how a record that is rarely
    /// given one (a crossing frame, a held capture frame, a sender) keeps it.
    pub fn boxed(blocks: &[(u64, u64)]) -> Option<Box<Sack>> {
        (!blocks.is_empty()).then(|| Box::new(Sack::of(blocks)))
    }
    pub fn blocks(&self) -> &[(u64, u64)] {
        &self.blocks[..self.n as usize]
    }
    /// A SACK bitmap of 64 packets from PSN `base`.
    pub fn bitmap_of(base: u64, bits: u64) -> Sack {
        let mut s = Sack { is_bitmap: true, ..Sack::default() };
        s.blocks[0] = (base, bits);
        s
    }
    /// The bitmap's base PSN and bits, where it has one.
    pub fn bitmap(&self) -> Option<(u64, u64)> {
        self.is_bitmap.then_some(self.blocks[0])
    }
    /// Whether it reports nothing.
    pub fn is_empty(&self) -> bool {
        self.n == 0 && !self.is_bitmap
    }
}

/// Reusable packet storage with a free list, and the per-packet extensions that do not fit
/// the 64-byte record (INT telemetry), kept beside it by packet id. A reply made in place
/// (`Sim::reply_in_place`: the data packet's slot becomes its ACK) keeps the data's
/// extensions, which is how an ACK echoes the telemetry its data collected; a new packet in
/// a reused slot starts with none.
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<PktId>,
    live: usize,
    /// By packet id; empty in runs where no switch writes telemetry (then nothing is paid).
    telemetry: Vec<Telemetry>,
    /// By packet id: the selective acknowledgement a reply carries, read only where the
    /// packet's `Packet::SACKED` flag is set; empty in runs where no receiver sends one.
    sack: Vec<Sack>,
    /// By packet id: the RCCC pull target a data packet, RTS or trimmed header carries
    /// (`host/rccc.rs`), 0 for none (with whether the packet went without credit,
    /// `rccc::carried`), or the receiver's count of bytes taken a UET ACK carries
    /// (`transport.uet.in_flight = "received"`, host/uet.rs `Received`); empty in runs
    /// with neither.
    pull: Vec<u64>,
    /// Some packet has had an extension (one test per allocation for all).
    extended: bool,
}

impl PacketArena {
    pub fn new() -> Self {
        Self::default()
    }
    #[inline]
    pub fn alloc(&mut self, mut p: Packet) -> PktId {
        self.live += 1;
        // a copy of a packet (a frame crossing between partitions) takes its SACK along by
        // `set_sack`, not by the flag
        p.flags &= !Packet::SACKED;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            if self.extended {
                self.clear_extensions(id);
            }
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PktId
        }
    }
    /// Hint the CPU to load the slot that the `n`-th allocation from now takes (0: the
    /// next), if it is a freed one. A batch of allocations (the frames that crossed from
    /// other partitions in a window: `Sim::take_in`) writes slots freed long before, whose
    /// lines have left the cache; each write waited on its line in turn.
    #[inline(always)]
    pub fn prefetch_free(&self, n: usize) {
        if let Some(&id) = self.free.len().checked_sub(n + 1).and_then(|i| self.free.get(i)) {
            crate::sim::prefetch(&self.slots, id);
        }
    }
    #[inline]
    pub fn free(&mut self, id: PktId) {
        self.live -= 1;
        self.free.push(id);
    }
    /// Packet `id`, which this arena allocated. No bounds check: every hop reads its packet
    /// a few times, and ids come only from `alloc` (the arena never shrinks).
    #[inline]
    pub(crate) fn get(&self, id: PktId) -> &Packet {
        debug_assert!((id as usize) < self.slots.len());
        // SAFETY: `id` came from `alloc`, so it is below `slots.len()`, which never falls
        unsafe { self.slots.get_unchecked(id as usize) }
    }
    #[inline]
    pub(crate) fn get_mut(&mut self, id: PktId) -> &mut Packet {
        debug_assert!((id as usize) < self.slots.len());
        // SAFETY: as in `get`
        unsafe { self.slots.get_unchecked_mut(id as usize) }
    }
    /// Hint the CPU to load packet `id` into cache: on large fabrics the packets in flight
    /// outgrow the cache and the first touch of an arriving packet is the engine's costliest
    /// miss, so the event loop prefetches the next event's packet while handling this one.
    #[inline(always)]
    pub fn prefetch(&self, id: PktId) {
        crate::sim::prefetch(&self.slots, id);
    }
    /// A reused slot `id` starts with no extensions (in runs with INT, at every allocation).
    #[inline]
    fn clear_extensions(&mut self, id: PktId) {
        if let Some(t) = self.telemetry.get_mut(id as usize) {
            t.n = 0;
        }
        if let Some(p) = self.pull.get_mut(id as usize) {
            *p = 0;
        }
    }
    /// The RCCC pull target packet `id` carries (0: none).
    #[inline]
    pub fn pull(&self, id: PktId) -> u64 {
        self.pull.get(id as usize).copied().unwrap_or(0)
    }
    /// Give packet `id` the pull target (or, an ACK, the count of bytes taken) `v`.
    pub fn set_pull(&mut self, id: PktId, v: u64) {
        let i = id as usize;
        if self.pull.len() <= i {
            self.pull.resize(self.slots.len().max(i + 1), 0);
        }
        self.extended = true;
        self.pull[i] = v;
    }
    /// The selective acknowledgement blocks packet `id` carries (none for most).
    #[inline]
    pub fn sack(&self, id: PktId) -> &[(u64, u64)] {
        match self.sack_of(id) {
            Some(s) => s.blocks(),
            None => &[],
        }
    }
    /// Packet `id`'s entry in the SACK table, where its flag says it has one.
    #[inline]
    fn sack_of(&self, id: PktId) -> Option<&Sack> {
        if self.get(id).flags & Packet::SACKED == 0 {
            return None;
        }
        self.sack.get(id as usize)
    }
    /// The SACK bitmap packet `id` carries (`Sack::bitmap`), where it has one.
    #[inline]
    pub fn sack_bitmap(&self, id: PktId) -> Option<(u64, u64)> {
        self.sack_of(id).and_then(Sack::bitmap)
    }
    /// Packet `id`'s whole selective acknowledgement, where it carries one: what a frame
    /// takes along when it leaves the arena (a crossing between partitions).
    pub fn sack_record(&self, id: PktId) -> Option<Sack> {
        self.sack_of(id).filter(|s| !s.is_empty()).copied()
    }
    /// Give packet `id` (a reply) selective acknowledgement blocks `s`.
    pub fn set_sack(&mut self, id: PktId, s: Sack) {
        let i = id as usize;
        if self.sack.len() <= i {
            self.sack.resize(self.slots.len().max(i + 1), Sack::default());
        }
        self.sack[i] = s;
        self.get_mut(id).flags |= Packet::SACKED;
    }
    /// The telemetry packet `id` carries, first hop first (empty if none).
    #[inline]
    pub fn telemetry(&self, id: PktId) -> &[HopTelemetry] {
        match self.telemetry.get(id as usize) {
            Some(t) => &t.hops[..t.n as usize],
            None => &[],
        }
    }
    /// Append a hop's record to packet `id`'s telemetry; false when its stack is full
    /// (`MAX_TELEMETRY_HOPS`), which leaves it as it was.
    pub fn push_telemetry(&mut self, id: PktId, hop: HopTelemetry) -> bool {
        let i = id as usize;
        if self.telemetry.len() <= i {
            self.telemetry.resize(self.slots.len().max(i + 1), Telemetry::default());
            self.extended = true;
        }
        let t = &mut self.telemetry[i];
        if t.n as usize == MAX_TELEMETRY_HOPS {
            return false;
        }
        t.hops[t.n as usize] = hop;
        t.n += 1;
        true
    }
    /// Packets currently allocated (in queues or on links).
    pub fn live(&self) -> usize {
        self.live
    }
    /// High-water mark of the arena.
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}

// The packet record fills one cache line, and only one: a field that grows it costs every
// hop. Per-packet data a mechanism needs beyond these fields (e.g. INT records) lives
// outside the packet, keyed by its id. A frame or message payload (`Frame`, `Msg`, from
// each mechanism's own types) must keep `PktKind` at 4 bytes: 3 bytes or fewer, packed, or
// an enum with a spare tag value, as PFC's.
const _: () = assert!(std::mem::size_of::<Packet>() == 64 && std::mem::align_of::<Packet>() == 64);
const _: () = assert!(std::mem::size_of::<PktKind>() == 4);

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(q: u64) -> HopTelemetry {
        HopTelemetry { qlen: q, tx_bytes: 2 * q, ts: SimTime(q), rate_bps: 100 }
    }

    /// Telemetry stays with its slot while the packet lives (a reply in place echoes it),
    /// a new packet in a freed slot starts with none, and a full stack refuses more.
    #[test]
    fn telemetry_lives_with_the_packet_not_the_slot() {
        let mut a = PacketArena::new();
        let x = a.alloc(Packet::blank());
        let y = a.alloc(Packet::blank());
        assert!(a.telemetry(x).is_empty());
        assert!(a.push_telemetry(x, hop(1)) && a.push_telemetry(x, hop(2)));
        assert_eq!(a.telemetry(x), &[hop(1), hop(2)]);
        assert!(a.telemetry(y).is_empty());
        // the reply keeps its slot and so the records
        a.get_mut(x).kind = PktKind::Ack;
        assert_eq!(a.telemetry(x).len(), 2);
        a.free(x);
        let z = a.alloc(Packet::blank());
        assert_eq!(z, x, "the freed slot is reused");
        assert!(a.telemetry(z).is_empty());
        for i in 0..MAX_TELEMETRY_HOPS as u64 {
            assert!(a.push_telemetry(z, hop(i)));
        }
        assert!(!a.push_telemetry(z, hop(99)));
        assert_eq!(a.telemetry(z).len(), MAX_TELEMETRY_HOPS);
        // a slot beyond the store's end reads as none
        let w = a.alloc(Packet::blank());
        assert!(a.telemetry(w).is_empty());
    }

    /// A SACK record is read only through its packet's flag: the reply carries it, a new
    /// packet in the freed slot has none although the table still holds the old record, and
    /// a copy of a packet (a crossing frame) takes its record along only by `set_sack`.
    #[test]
    fn a_sack_record_lives_with_the_packet_not_the_slot() {
        let mut a = PacketArena::new();
        let x = a.alloc(Packet::blank());
        assert!(a.sack(x).is_empty() && a.sack_record(x).is_none());
        a.set_sack(x, Sack::of(&[(3000, 4500), (6000, 7500)]));
        assert_eq!(a.sack(x), &[(3000, 4500), (6000, 7500)]);
        assert_ne!(a.get(x).flags & Packet::SACKED, 0);
        // a slot whose table entry holds an old record
        let w = a.alloc(Packet::blank());
        a.set_sack(w, Sack::of(&[(9000, 10500)]));
        a.free(w);
        let copy = a.get(x).clone();
        let y = a.alloc(copy);
        assert_eq!(y, w);
        assert!(a.sack(y).is_empty(), "an allocated copy has no record until it is given one");
        a.set_sack(y, Sack::bitmap_of(7, 0b101));
        assert_eq!((a.sack_bitmap(y), a.sack(y)), (Some((7, 0b101)), &[][..]));
        a.free(x);
        let z = a.alloc(Packet::blank());
        assert_eq!(z, x, "the freed slot is reused");
        assert!(a.sack(z).is_empty() && a.sack_bitmap(z).is_none() && a.sack_record(z).is_none());
    }
}
