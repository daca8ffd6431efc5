//! A FIFO of packets with the counters every queue keeps: bytes, drops and
//! marks by reason, max depth and the time integral of depth (so the mean
//! depth is exact, not sampled).

use super::fifo::Fifo;
use super::zeroed::{ZeroDefault, ZeroedVec};
use crate::net::topology::{NodeKind, Topology};
use crate::net::{PktId, PortId};
use crate::sim::SimTime;

/// The most queues (traffic classes) a port has: IEEE 802.1Q's eight.
pub const MAX_QUEUES: usize = 8;

/// Why a packet was dropped (ns-3 style: every drop carries a reason).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer model refused the packet (queue or shared pool full).
    BufferFull,
    /// The AQM chose to drop a packet that is not ECN-capable.
    Aqm,
    /// A lossless packet found the PFC headroom of its ingress port full.
    Headroom,
    /// The packet exceeded the hop limit (a routing loop).
    Ttl,
    /// No route to the packet's destination from this switch.
    NoRoute,
    /// A lossless packet found no room: its queue's share or the switch memory was full
    /// (queue-based PFC whose headroom was too small, or a mechanism's reserve exhausted).
    Lossless,
    /// The packet reached a host other than its destination (a wrong static route); the
    /// host discards it, as a NIC discards a frame not addressed to it.
    WrongHost,
    /// Its egress port's link was down (`net::link`).
    LinkDown,
}

/// Why a packet was ECN-marked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MarkReason {
    /// An AQM or ECN marker chose it, on arrival or at dequeue.
    Aqm,
}

/// A queue's counters of drops and marks, reported with the counters every packet updates
/// (`PktQueue`) as one row of ports.parquet. Kept apart from the queue (`PortQueues::stats`),
/// so that the queues' hot lines are dense.
#[derive(Clone, Debug, Default)]
pub struct QueueStats {
    pub drops_buffer_full: u64,
    pub drops_aqm: u64,
    pub drops_headroom: u64,
    pub drops_ttl: u64,
    pub drops_no_route: u64,
    pub drops_wrong_host: u64,
    pub drops_lossless: u64,
    pub drops_link_down: u64,
    pub ecn_marks: u64,
}

// SAFETY: counters only; zero is each one's default
unsafe impl ZeroDefault for QueueStats {}

impl QueueStats {
    pub fn drops(&self) -> u64 {
        self.drops_buffer_full + self.drops_aqm + self.drops_headroom + self.drops_ttl + self.drops_no_route + self.drops_wrong_host + self.drops_lossless + self.drops_link_down
    }
    pub fn count_drop(&mut self, r: DropReason) {
        match r {
            DropReason::BufferFull => self.drops_buffer_full += 1,
            DropReason::Aqm => self.drops_aqm += 1,
            DropReason::Headroom => self.drops_headroom += 1,
            DropReason::Ttl => self.drops_ttl += 1,
            DropReason::NoRoute => self.drops_no_route += 1,
            DropReason::WrongHost => self.drops_wrong_host += 1,
            DropReason::Lossless => self.drops_lossless += 1,
            DropReason::LinkDown => self.drops_link_down += 1,
        }
    }
    pub fn count_mark(&mut self, r: MarkReason) {
        match r {
            MarkReason::Aqm => self.ecn_marks += 1,
        }
    }
}

/// A queued packet: its id, its size on the wire and its route at the next switch (or
/// `PortId::MAX`), which the FIFO keeps so that taking the head off and sending it reads no
/// packet record (on large fabrics a record written when the packet joined the queue has
/// long left the cache when it leaves).
#[derive(Copy, Clone, Debug)]
struct Queued {
    id: PktId,
    size: u32,
    route: PortId,
}

/// One egress queue (a traffic class of a port): its FIFO, and the counters every packet
/// reads or updates (depth, FIFO header, maximum depth, the depth's time integral,
/// transmitted bytes and packets), in one cache line (`repr(C)`, cache-line aligned). A
/// packet that passes an idle port through, or is queued and later sent, touches that line
/// and its FIFO entry; on large fabrics each further line was a miss of its own. Drops and
/// marks are counted apart (`QueueStats`).
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct PktQueue {
    pub bytes: u64,
    fifo: Fifo<Queued>,
    pub max_bytes: u64,
    /// The sum, over every change of depth, of minus the change times its time (byte-ps):
    /// the integral of depth over [0, t] is this plus the depth times t, exactly, without
    /// the time of the last change the integral would otherwise keep.
    area_acc: i128,
    pub tx_bytes: u64,
    pub tx_packets: u64,
}

// SAFETY: counters, and a FIFO whose default is a null buffer with no entries
unsafe impl ZeroDefault for PktQueue {}

impl PktQueue {
    #[inline]
    pub fn push(&mut self, id: PktId, size: u32, route: PortId, now: SimTime) {
        self.area_acc -= size as i128 * now.0 as i128;
        self.fifo.push_back(Queued { id, size, route });
        self.bytes += size as u64;
        if self.bytes > self.max_bytes {
            self.max_bytes = self.bytes;
        }
    }
    /// Take the head packet off: its id, size and route at the next switch.
    #[inline]
    pub fn pop(&mut self, now: SimTime) -> Option<(PktId, u32, PortId)> {
        let Queued { id, size, route } = self.fifo.pop_front()?;
        self.area_acc += size as i128 * now.0 as i128;
        self.bytes -= size as u64;
        self.count_tx(size);
        Some((id, size, route))
    }
    /// A packet of `size` bytes left in this class (one that never joined its FIFO counts
    /// here: a NIC's flows send from their own state).
    #[inline]
    pub fn count_tx(&mut self, size: u32) {
        self.tx_bytes += size as u64;
        self.tx_packets += 1;
    }
    /// The packet that just left grew by `extra` bytes as it left (INT records): the wire
    /// carried them too.
    pub fn count_grown(&mut self, extra: u32) {
        self.tx_bytes += extra as u64;
    }
    /// A packet of `size` bytes joins this queue, empty, and leaves it at once (its port
    /// was idle): the counters `push` then `pop` at one instant would leave, without the
    /// FIFO (the depth integral does not change: it keeps no time of last change).
    #[inline]
    pub fn pass_through(&mut self, size: u32) {
        debug_assert!(self.fifo.is_empty() && self.bytes == 0);
        self.max_bytes = self.max_bytes.max(size as u64);
        self.count_tx(size);
    }
    /// Move the packet at position `idx` to the head, the packets ahead of it back by one,
    /// for a transmitter that sends out of order (DRC); the FIFO path then takes it.
    #[inline(never)]
    pub fn to_front(&mut self, idx: usize) {
        let e = *self.fifo.get(idx).expect("to_front: index within the queue");
        for i in (1..=idx).rev() {
            let prev = *self.fifo.get(i - 1).unwrap();
            self.fifo.set(i, prev);
        }
        self.fifo.set(0, e);
    }
    #[inline]
    pub fn head(&self) -> Option<PktId> {
        self.fifo.front().map(|e| e.id)
    }
    /// The head packet's size on the wire.
    #[inline]
    pub fn head_size(&self) -> Option<u32> {
        self.fifo.front().map(|e| e.size)
    }
    /// The queued packets, head first.
    pub fn ids(&self) -> impl Iterator<Item = PktId> + '_ {
        self.fifo.iter().map(|e| e.id)
    }
    /// Packets queued.
    pub fn len(&self) -> usize {
        self.fifo.len()
    }
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }
    /// Integral of depth over [0, now], in byte-picoseconds (`now` no earlier than the
    /// last change).
    pub fn area(&self, now: SimTime) -> u128 {
        (self.area_acc + self.bytes as i128 * now.0 as i128) as u128
    }
    /// Time-averaged depth over [0, now].
    pub fn mean_bytes(&self, now: SimTime) -> f64 {
        if now.0 == 0 {
            0.0
        } else {
            self.area(now) as f64 / now.0 as f64
        }
    }
}

/// Every port's queues, `per_port` (one per traffic class) for each, in one array at
/// `port * per_port + class`: a queue's address follows from the port alone, so the event
/// loop can prefetch a queue before it has read the port's record (docs/architecture.md,
/// "Memory layout of the hot path").
///
/// Their drop and mark counters are a second array in the same order: a queue's hot line
/// and its counters are then each dense (as one 128-byte record, the hot lines fell in half
/// the cache's sets: k = 20 cachegrind L2 misses +13%).
#[derive(Clone, Debug)]
pub struct PortQueues {
    all: ZeroedVec<PktQueue>,
    stats: ZeroedVec<QueueStats>,
    /// Per queue: the bytes bound for it that a switch holds at its ingress side (a memory
    /// architecture's input queues, `Admission::Held`) until they join it.
    held: ZeroedVec<u64>,
    /// The same bytes by the port they arrived on: per (ingress port, egress port, queue),
    /// and per ingress port in all (what SFC and DRC judge at an input-buffered switch).
    /// Per switch, a dense array by (local ingress, local egress, queue), as a crossbar
    /// keeps its VOQs; allocated at the switch's first hold, so a switch that never holds
    /// (every output-queued one) costs nothing. (A hash map by the three cost
    /// input-buffered runs 7-11%: docs/performance.md.)
    between: Vec<Vec<u64>>,
    /// By port: its switch's index (`u32::MAX` at a host) and its local index there.
    place: Vec<(u32, u32)>,
    /// By switch: its ports.
    radix: Vec<u32>,
    held_in: ZeroedVec<u64>,
    /// By switch: the bytes held at its inputs together (what a pool its inputs share
    /// holds, `InputMemory::alpha`).
    held_at: Vec<u64>,
    per_port: usize,
}

/// The memory the packets an input holds draw on, at a switch that holds packets at its
/// inputs (`switch.architecture`): the input's own buffer, or a pool every input of its
/// switch shares (`input_memory = "shared"`), from which a dynamic threshold of `alpha`
/// lets each VOQ take at most alpha x its free bytes. `bytes` 0: the port's switch holds
/// nothing at its inputs (output-queued).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct InputMemory {
    pub bytes: u64,
    /// The shared pool's alpha; None: the input's own buffer.
    pub alpha: Option<f64>,
    /// The input is one FIFO (`input_queued`), which the threshold holds whole; else each
    /// of its VOQs is held alone.
    pub fifo: bool,
}

impl PortQueues {
    /// The queues of every port of `topo`, `per_port` each.
    pub fn new(topo: &Topology, per_port: usize) -> PortQueues {
        let ports = topo.ports.len();
        let place = topo
            .ports
            .iter()
            .map(|p| {
                let node = &topo.nodes[p.node as usize];
                (if node.kind == NodeKind::Switch { node.index } else { u32::MAX }, p.local)
            })
            .collect();
        let radix = topo.switches.iter().map(|&n| topo.nodes[n as usize].ports.len() as u32).collect();
        PortQueues {
            all: ZeroedVec::new(ports * per_port),
            stats: ZeroedVec::new(ports * per_port),
            held: ZeroedVec::new(ports * per_port),
            between: vec![Vec::new(); topo.switches.len()],
            place,
            radix,
            held_in: ZeroedVec::new(ports),
            held_at: vec![0; topo.switches.len()],
            per_port,
        }
    }
    /// Back the queues in 4 KiB pages except the large pages that the queues of the ports
    /// in `dense` (ranges of port ids) fill at least half of: a split run's partition
    /// writes only those (`ZeroedVec::back_sparsely`).
    pub fn back_sparsely(&self, dense: &[std::ops::Range<usize>]) {
        let by_queue: Vec<_> = dense.iter().map(|r| r.start * self.per_port..r.end * self.per_port).collect();
        self.all.back_sparsely(&by_queue);
        self.stats.back_sparsely(&by_queue);
        self.held.back_sparsely(&by_queue);
        self.held_in.back_sparsely(dense);
    }
    /// Where the counts of bytes held from `from` for the switch's port of local index `out`
    /// begin (one per queue): its switch and the position in that switch's `between`.
    #[inline]
    fn toward_at(&self, from: PortId, out: usize) -> (usize, usize) {
        let (sw, i) = self.place[from as usize];
        debug_assert!(sw != u32::MAX, "held at a switch's ingress");
        let n = self.radix[sw as usize] as usize;
        (sw as usize, (i as usize * n + out) * self.per_port)
    }
    /// Where the count of bytes held from `from` for queue `q` of `port` lives.
    #[inline]
    fn between_at(&self, from: PortId, port: PortId, q: usize) -> (usize, usize) {
        let (sw_out, o) = self.place[port as usize];
        debug_assert!(sw_out == self.place[from as usize].0, "held between two ports of one switch");
        let (sw, at) = self.toward_at(from, o as usize);
        (sw, at + q)
    }
    /// A packet of `size` that arrived on `from`, bound for queue `q` of `port`, is held at
    /// its switch's ingress side (`unhold` as it joins the queue).
    #[inline]
    pub(crate) fn hold(&mut self, from: PortId, port: PortId, q: usize, size: u64) {
        let i = self.at(port, q);
        self.held[i] += size;
        self.held_in[from as usize] += size;
        let (sw, at) = self.between_at(from, port, q);
        self.held_at[sw] += size;
        let row = &mut self.between[sw];
        if row.is_empty() {
            let n = self.radix[sw] as usize;
            *row = vec![0; n * n * self.per_port];
        }
        row[at] += size;
    }
    #[inline]
    pub(crate) fn unhold(&mut self, from: PortId, port: PortId, q: usize, size: u64) {
        let i = self.at(port, q);
        self.held[i] -= size;
        self.held_in[from as usize] -= size;
        let (sw, at) = self.between_at(from, port, q);
        self.held_at[sw] -= size;
        self.between[sw][at] -= size;
    }
    /// The bytes held at the ingress side of its switch that arrived on `from` and are bound
    /// for queue `q` of `port` (`hold`).
    #[inline]
    pub fn held_between(&self, from: PortId, port: PortId, q: usize) -> u64 {
        let (sw, at) = self.between_at(from, port, q);
        self.between[sw].get(at).copied().unwrap_or(0)
    }
    /// The bytes held at the ingress side of its switch that arrived on `from` and are bound
    /// for the switch's port of local index `out` (`PortInfo::local`), in the queues whose
    /// bits `classes` sets.
    #[inline]
    pub fn held_toward(&self, from: PortId, out: usize, classes: u8) -> u64 {
        let (sw, at) = self.toward_at(from, out);
        let Some(row) = self.between[sw].get(at..at + self.per_port) else { return 0 };
        row.iter().enumerate().filter(|&(c, _)| classes & (1 << c) != 0).map(|(_, &b)| b).sum()
    }
    /// The bytes held at the ingress side of its switch that arrived on `from`.
    #[inline]
    pub fn held_in(&self, from: PortId) -> u64 {
        self.held_in[from as usize]
    }
    /// The bytes held against the memory `m` that input `from` draws on: the input's own
    /// (`held_in`), or every input's of its switch where they share a pool.
    #[inline]
    pub fn held_against(&self, from: PortId, m: InputMemory) -> u64 {
        if m.alpha.is_some() {
            self.held_at[self.place[from as usize].0 as usize]
        } else {
            self.held_in(from)
        }
    }
    /// The bytes bound for queue `q` of `port` in its switch: in the queue, and held for it
    /// at the switch's inputs (on an output-queued switch, the queue's depth).
    #[inline]
    pub fn backlog(&self, port: PortId, q: usize) -> u64 {
        let i = self.at(port, q);
        self.all[i].bytes + self.held[i]
    }
    /// The drop and mark counters of queue `q` of `port`.
    #[inline]
    pub fn stats(&self, port: PortId, q: usize) -> &QueueStats {
        &self.stats[self.at(port, q)]
    }
    #[inline]
    pub fn stats_mut(&mut self, port: PortId, q: usize) -> &mut QueueStats {
        let i = self.at(port, q);
        &mut self.stats[i]
    }
    #[inline]
    fn at(&self, port: PortId, q: usize) -> usize {
        port as usize * self.per_port + q
    }
    /// The queues of `port`, one per traffic class.
    #[inline]
    pub fn of(&self, port: PortId) -> &[PktQueue] {
        let i = self.at(port, 0);
        &self.all[i..i + self.per_port]
    }
    #[inline]
    pub fn of_mut(&mut self, port: PortId) -> &mut [PktQueue] {
        let i = self.at(port, 0);
        &mut self.all[i..i + self.per_port]
    }
    /// Queue `q` of `port`, where the engine gives both: a port of the fabric and one of
    /// its classes (the class map's, or a queue a mechanism's parameters name, which
    /// `Mechanisms::new` checks).
    /// No bounds check, on the hot path; a number from elsewhere indexes `of(port)`.
    #[inline]
    pub(crate) fn get(&self, port: PortId, q: usize) -> &PktQueue {
        let i = self.at(port, q);
        debug_assert!(q < self.per_port && i < self.all.len());
        // SAFETY: port < ports and q < per_port, so i < ports * per_port = all.len()
        unsafe { self.all.get_unchecked(i) }
    }
    #[inline]
    pub(crate) fn get_mut(&mut self, port: PortId, q: usize) -> &mut PktQueue {
        let i = self.at(port, q);
        debug_assert!(q < self.per_port && i < self.all.len());
        // SAFETY: as in `get`
        unsafe { self.all.get_unchecked_mut(i) }
    }
    /// Hint the CPU to load queue `q` of `port` into cache: the line of its depth, FIFO
    /// header and per-packet counters.
    #[inline(always)]
    pub fn prefetch(&self, port: PortId, q: usize) {
        crate::sim::prefetch(&self.all, self.at(port, q) as u32);
    }
    /// Hint the CPU to load the head entry of each of `port`'s queues (reading the queues'
    /// FIFO headers now: fetch them first with `prefetch`). A transmitter that finishes a
    /// frame takes the next from there, and on large fabrics the entry, written when its
    /// packet was queued, has left the cache.
    #[inline(always)]
    pub fn prefetch_heads(&self, port: PortId) {
        for q in self.of(port) {
            if let Some(head) = q.fifo.front_ptr() {
                crate::sim::prefetch_at(head as *const u8);
            }
        }
    }
    /// The packets at the head of `port`'s queues, one of which its transmitter sends
    /// next (fetch the heads first with `prefetch_heads`).
    #[inline(always)]
    pub fn heads(&self, port: PortId) -> impl Iterator<Item = PktId> + '_ {
        self.of(port).iter().filter_map(|q| q.fifo.front().map(|e| e.id))
    }
    /// Every port's queues, in port order.
    pub fn ports(&self) -> std::slice::Chunks<'_, PktQueue> {
        self.all.chunks(self.per_port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes held at the ingress side count toward their egress queue's backlog, per
    /// (ingress, egress, queue) and per ingress, until they join the queue.
    #[test]
    fn held_bytes_count_by_ingress_and_egress() {
        // two switches of four hosts each, joined: the switch's ports a, b, c, d are its hosts'
        let mut topo = Topology::default();
        let (s0, s1) = (topo.add_switch("s0"), topo.add_switch("s1"));
        let mut at = Vec::new();
        for s in [s0, s1] {
            for h in 0..4 {
                let host = topo.add_host(format!("h{s}{h}"));
                at.push(topo.connect(host, s, 1, SimTime::ZERO).1);
            }
        }
        topo.connect(s0, s1, 1, SimTime::ZERO);
        let [a, b, c, d, e, f, ..] = at[..] else { unreachable!() };
        let mut q = PortQueues::new(&topo, 2);
        q.hold(a, d, 1, 1500);
        q.hold(b, d, 1, 500);
        q.hold(a, c, 0, 100);
        q.hold(e, f, 1, 7);
        assert_eq!((q.backlog(d, 1), q.held_between(a, d, 1), q.held_between(b, d, 1), q.held_in(a), q.held_in(b)), (2000, 1500, 500, 1600, 500));
        assert_eq!((q.held_between(d, a, 1), q.held_between(a, d, 0), q.held_between(e, f, 1), q.held_between(f, e, 1)), (0, 0, 7, 0), "each direction and class its own");
        let local = |p: PortId| topo.ports[p as usize].local as usize;
        q.hold(a, d, 0, 20);
        assert_eq!((q.held_toward(a, local(d), 0b11), q.held_toward(a, local(d), 0b10), q.held_toward(a, local(d), 0b01), q.held_toward(a, local(c), 0b10)), (1520, 1500, 20, 0));
        q.unhold(a, d, 0, 20);
        q.unhold(a, d, 1, 1500);
        assert_eq!((q.backlog(d, 1), q.held_between(a, d, 1), q.held_in(a)), (500, 0, 100));
    }

    #[test]
    fn what_every_packet_touches_shares_one_cache_line() {
        use std::mem::offset_of;
        // depth, FIFO header and the per-packet counters
        assert!(offset_of!(PktQueue, tx_packets) < 64);
        assert_eq!(std::mem::align_of::<PktQueue>(), 64);
        assert_eq!(std::mem::size_of::<PktQueue>(), 64);
    }
    #[test]
    fn the_depth_integral_is_exact() {
        // 1500 B from t = 100 to 400, 3000 B to 500 (a second packet at 400 leaves at 700)
        let mut q = PktQueue::default();
        q.push(1, 1500, 0, SimTime(100));
        q.push(2, 1500, 0, SimTime(400));
        q.pop(SimTime(500));
        assert_eq!(q.area(SimTime(600)), 1500 * 300 + 3000 * 100 + 1500 * 100);
        q.pop(SimTime(700));
        assert_eq!(q.area(SimTime(1000)), 1500 * 300 + 3000 * 100 + 1500 * 200);
        assert_eq!(q.mean_bytes(SimTime(1000)), 1050.0);
        assert_eq!((q.tx_bytes, q.tx_packets, q.max_bytes), (3000, 2, 3000));
    }
    #[test]
    fn pass_through_counts_as_push_then_pop_at_once() {
        let (mut a, mut b) = (PktQueue::default(), PktQueue::default());
        for q in [&mut a, &mut b] {
            q.push(1, 1500, 0, SimTime(100));
            q.pop(SimTime(400));
        }
        a.push(2, 64, 0, SimTime(900));
        assert_eq!(a.pop(SimTime(900)), Some((2, 64, 0)));
        b.pass_through(64);
        assert_eq!(format!("{:?}", a), format!("{:?}", b));
        assert_eq!((a.bytes, a.mean_bytes(SimTime(1000))), (b.bytes, b.mean_bytes(SimTime(1000))));
        // a first packet larger than any before sets the maximum
        b.pass_through(9000);
        assert_eq!(b.max_bytes, 9000);
    }
}
