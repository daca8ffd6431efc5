//! A FIFO of packets with the counters every queue keeps: bytes, drops and
//! marks by reason, max depth and the time integral of depth (so the mean
//! depth is exact, not sampled).

use crate::net::{PktId, PortId};
use crate::sim::SimTime;
use std::collections::VecDeque;

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
}

/// Why a packet was ECN-marked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MarkReason {
    /// RED / step threshold on the instantaneous queue.
    EcnThreshold,
}

/// Per-queue counters, reported as one row of ports.parquet.
///
/// In memory order: the counters every enqueue and dequeue updates first, so that with the
/// queue's depth before them (`PktQueue` is `repr(C)` and cache-line aligned) they share
/// one cache line: a packet that passes an idle port through touches only that line, and
/// a queued one that line and the FIFO's.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct QueueStats {
    pub last_change: SimTime,
    pub max_bytes: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    /// Integral of depth over time, in byte-picoseconds.
    pub area: u128,
    pub drops_buffer_full: u64,
    pub drops_aqm: u64,
    pub drops_headroom: u64,
    pub drops_ttl: u64,
    pub drops_no_route: u64,
    pub drops_wrong_host: u64,
    pub drops_lossless: u64,
    pub ecn_marks: u64,
    /// PFC frames this port sent (XOFF and XON) for this class.
    pub pfc_tx: u64,
    /// PFC frames this port received for this class.
    pub pfc_rx: u64,
}

impl QueueStats {
    pub fn drops(&self) -> u64 {
        self.drops_buffer_full + self.drops_aqm + self.drops_headroom + self.drops_ttl + self.drops_no_route + self.drops_wrong_host + self.drops_lossless
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
        }
    }
    /// A packet of `size` bytes left in this class.
    #[inline]
    pub fn count_tx(&mut self, size: u32) {
        self.tx_bytes += size as u64;
        self.tx_packets += 1;
    }
    pub fn count_mark(&mut self, r: MarkReason) {
        match r {
            MarkReason::EcnThreshold => self.ecn_marks += 1,
        }
    }
}

/// A queued packet: its id, and its size on the wire, which the FIFO keeps so that taking
/// the head off reads no packet record (on large fabrics a record written when the packet
/// joined the queue has long left the cache when it leaves).
#[derive(Copy, Clone, Debug)]
struct Queued {
    id: PktId,
    size: u32,
}

/// One egress queue (a traffic class of a port).
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct PktQueue {
    pub bytes: u64,
    pub stats: QueueStats,
    fifo: VecDeque<Queued>,
}

impl PktQueue {
    #[inline]
    fn integrate(&mut self, now: SimTime) {
        let dt = now.0 - self.stats.last_change.0;
        self.stats.area += self.bytes as u128 * dt as u128;
        self.stats.last_change = now;
    }
    #[inline]
    pub fn push(&mut self, id: PktId, size: u32, now: SimTime) {
        self.integrate(now);
        self.fifo.push_back(Queued { id, size });
        self.bytes += size as u64;
        if self.bytes > self.stats.max_bytes {
            self.stats.max_bytes = self.bytes;
        }
    }
    /// Take the head packet off: its id and size.
    #[inline]
    pub fn pop(&mut self, now: SimTime) -> Option<(PktId, u32)> {
        let Queued { id, size } = self.fifo.pop_front()?;
        self.integrate(now);
        self.bytes -= size as u64;
        self.stats.count_tx(size);
        Some((id, size))
    }
    /// A packet of `size` bytes joins this queue, empty, and leaves it at once (its port
    /// was idle): the counters `push` then `pop` at `now` would leave, without the FIFO.
    #[inline]
    pub fn pass_through(&mut self, size: u32, now: SimTime) {
        debug_assert!(self.fifo.is_empty() && self.bytes == 0);
        self.stats.last_change = now;
        self.stats.max_bytes = self.stats.max_bytes.max(size as u64);
        self.stats.count_tx(size);
    }
    /// Move the packet at position `idx` to the head, the packets ahead of it back by one,
    /// for a transmitter that sends out of order (DRC); the FIFO path then takes it. (Indexing
    /// only: another VecDeque method here cost the FIFO path its inlining.)
    #[inline(never)]
    pub fn to_front(&mut self, idx: usize) {
        let e = self.fifo[idx];
        for i in (1..=idx).rev() {
            self.fifo[i] = self.fifo[i - 1];
        }
        self.fifo[0] = e;
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
    /// Time-averaged depth over [0, now].
    pub fn mean_bytes(&mut self, now: SimTime) -> f64 {
        self.integrate(now);
        if now.0 == 0 {
            0.0
        } else {
            self.stats.area as f64 / now.0 as f64
        }
    }
}

/// Every port's queues, `per_port` (one per traffic class) for each, in one array at
/// `port * per_port + class`: a queue's address follows from the port alone, so the event
/// loop can prefetch a queue before it has read the port's record (docs/architecture.md,
/// "Memory layout of the hot path").
#[derive(Clone, Debug)]
pub struct PortQueues {
    all: Vec<PktQueue>,
    per_port: usize,
}

impl PortQueues {
    pub fn new(ports: usize, per_port: usize) -> PortQueues {
        PortQueues { all: vec![PktQueue::default(); ports * per_port], per_port }
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
    /// Queue `q` of `port`.
    #[inline]
    pub fn get(&self, port: PortId, q: usize) -> &PktQueue {
        &self.all[self.at(port, q)]
    }
    #[inline]
    pub fn get_mut(&mut self, port: PortId, q: usize) -> &mut PktQueue {
        let i = self.at(port, q);
        &mut self.all[i]
    }
    /// Hint the CPU to load queue `q` of `port` into cache: its counters' line and its FIFO
    /// header's, which a packet that does not pass through idle touches as well.
    #[inline(always)]
    pub fn prefetch(&self, port: PortId, q: usize) {
        if let Some(x) = self.all.get(self.at(port, q)) {
            let at = x as *const PktQueue as *const u8;
            crate::sim::prefetch_at(at);
            crate::sim::prefetch_at(at.wrapping_add(std::mem::offset_of!(PktQueue, fifo)));
        }
    }
    /// Hint the CPU to load the head entry of each of `port`'s queues (reading the queues'
    /// FIFO headers now: fetch them first with `prefetch`). A transmitter that finishes a
    /// frame takes the next from there, and on large fabrics the entry, written when its
    /// packet was queued, has left the cache.
    #[inline(always)]
    pub fn prefetch_heads(&self, port: PortId) {
        for q in self.of(port) {
            let (head, _) = q.fifo.as_slices();
            if !head.is_empty() {
                crate::sim::prefetch_at(head.as_ptr() as *const u8);
            }
        }
    }
    /// Every port's queues, in port order.
    pub fn ports(&self) -> std::slice::Chunks<'_, PktQueue> {
        self.all.chunks(self.per_port)
    }
    pub fn ports_mut(&mut self) -> std::slice::ChunksMut<'_, PktQueue> {
        self.all.chunks_mut(self.per_port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passage_counters_share_the_first_cache_line() {
        use std::mem::offset_of;
        // what pass_through and the admission test touch: depth, and the counters up to the area
        let end = offset_of!(PktQueue, stats) + offset_of!(QueueStats, area) + std::mem::size_of::<u128>();
        assert!(offset_of!(PktQueue, bytes) < 64 && end <= 64, "hot counters end at {end} B");
        assert_eq!(std::mem::align_of::<PktQueue>(), 64);
    }
    #[test]
    fn pass_through_counts_as_push_then_pop_at_once() {
        let (mut a, mut b) = (PktQueue::default(), PktQueue::default());
        for q in [&mut a, &mut b] {
            q.push(1, 1500, SimTime(100));
            q.pop(SimTime(400));
        }
        a.push(2, 64, SimTime(900));
        assert_eq!(a.pop(SimTime(900)), Some((2, 64)));
        b.pass_through(64, SimTime(900));
        assert_eq!(format!("{:?}", a.stats), format!("{:?}", b.stats));
        assert_eq!((a.bytes, a.mean_bytes(SimTime(1000))), (b.bytes, b.mean_bytes(SimTime(1000))));
        // a first packet larger than any before sets the maximum
        b.pass_through(9000, SimTime(950));
        assert_eq!(b.stats.max_bytes, 9000);
    }
}
