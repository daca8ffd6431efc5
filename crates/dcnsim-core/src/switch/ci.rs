//! Congestion Isolation (IEEE P802.1Qcz; seed 000: Congdon, "P802.1Qcz
//! Congestion Isolation", IETF 101, 2018; seed 003: Shen & Sun, "Simulation
//! Analysis of Congestion Isolation", IEEE 802.1, Jan 2018).
//!
//! Per egress port a bridge keeps a table of congested flows. Reading of the
//! seeds (seed 003 "Compared Solutions", seed 000 "Congestion Isolation"
//! steps 1-4), as implemented here:
//! 1. Identify and isolate locally: a packet of the CI traffic class arriving
//!    to the non-congested queue isolates its flow with a probability that
//!    rises linearly from 0 at `low` to `pmax` at `high` of the non-congested
//!    queue's depth, and with certainty above `high` (the RED reading of
//!    "CI: Low 10 KB, High 300 KB, Max Probability 1%").
//! 2. Packets of isolated flows join the congested queue of the same port. A
//!    flow's packets already in the non-congested queue leave first: the
//!    congested queue's head waits while its flow still has packets there.
//!    ECN ("ECN is marked once a packet is isolated"), `CiMark::QueueEcn`,
//!    the default: the packet whose arrival isolates its flow is CE-marked
//!    (isolation takes the place of RED's mark on the non-congested queue,
//!    with the same Low/High/Pmax ramp), and packets in the congested queue
//!    are marked by the switch's ECN rule on that queue's depth, as any
//!    queue is. `CiMark::EveryIsolated` marks every packet of an isolated
//!    flow whatever the congested queue holds: the literal reading, which
//!    drives rate-based senders (DCQCN) far below their share for as long as
//!    the flow stays isolated (docs/reproductions.md, "elephants").
//! 3. Signal: when a packet of an isolated flow arrives in the non-congested
//!    class (its upstream has not isolated it) and finds the congested queue
//!    above `cip_threshold`, a Congestion Isolation Packet naming the flow goes
//!    to the upstream peer it came from; the upstream bridge (or NIC) isolates
//!    the flow in its egress toward this bridge. A CIP is repeated only when
//!    the flow still arrives in the non-congested class a round trip of that
//!    link after the last one (seed 000: "no adverse effects of single packet
//!    loss", "low overhead").
//! 4. Last resort: PFC on the congested queue's traffic class. A packet in the
//!    congested queue counts toward PFC in the congested class when its
//!    upstream can isolate (a CI bridge, or a NIC that honours CIPs, with
//!    signalling on), so XOFF pauses the upstream's congested queue and never
//!    its non-congested one; what the upstream still sends in the
//!    non-congested class before the CIP lands in the headroom. Without
//!    signalling it counts in the class it arrived in (the only one the
//!    upstream can pause).
//!
//! A flow is released when the congested queue has held none of its packets
//! for `release_after` (the time-based rule; the seeds leave it open).
//! Baseline "without CI" (seed 003): flows hashed by destination onto the same
//! two queues.

use super::ecn::Red;
use crate::sim::SimTime;
// The keys are already well-mixed flow hashes; the table is looked up on every packet of
// the CI class at every hop, where SipHash costs more than the rest of the lookup.
use rustc_hash::FxHashMap as HashMap;

/// Wire size of a CIP (seed 000 suggests reusing the 802.1Qau CNM format: a minimum-size frame
/// plus the encapsulated flow identification; 64 B + 18 B of flow id here).
pub const CIP_BYTES: u32 = 82;

/// Which packets of isolated flows are CE-marked (seed 003: "ECN is marked once a
/// packet is isolated"; see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CiMark {
    /// The isolating packet, then the switch's ECN rule on the congested queue.
    QueueEcn,
    /// Every packet of an isolated flow.
    EveryIsolated,
}

/// How CI-managed traffic is queued.
#[derive(Clone, Debug, PartialEq)]
pub enum CiMode {
    Isolate,
    /// Baseline: hash the destination onto {queue, congested_queue}.
    HashDst,
}

/// CI configuration of every switch.
#[derive(Clone, Debug)]
pub struct CiParams {
    pub mode: CiMode,
    /// Traffic class of the non-congested queue (the traffic CI manages arrives here).
    pub queue: usize,
    pub congested_queue: usize,
    /// Isolation probability ramp on the non-congested queue: RED's Low/High/Pmax shape.
    pub isolate: Red,
    pub mark: CiMark,
    pub table_size: usize,
    pub signal: bool,
    pub cip_threshold: u64,
    pub release_after: SimTime,
    /// NICs isolate flows named by a CIP.
    pub hosts: bool,
}

impl CiParams {
    /// Isolation probability for a packet arriving to a non-congested queue of `q` bytes.
    #[inline]
    pub fn prob(&self, q: u64) -> f64 {
        self.isolate.prob(q)
    }
}

/// One isolated flow at one egress port.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its packets still in the non-congested queue (must leave first).
    pub nc_pkts: u32,
    /// Its packets in the congested queue.
    pub c_pkts: u32,
    pub last_active: SimTime,
    /// Identifies this entry's release timer (unique in its table, so a timer left by an
    /// evicted entry of the same flow is ignored).
    pub release_gen: u32,
    /// When its congested-queue count last fell to zero (or it was isolated).
    pub empty_since: SimTime,
    /// A release timer is pending: at most one per entry, re-armed lazily, so a flow whose
    /// packets cross an empty congested queue one by one costs no event per packet.
    pub timer: bool,
    /// When the last CIP for this flow left (repeated at most once per link round trip).
    pub cip_at: Option<SimTime>,
}

/// The congested-flow table of one egress port.
#[derive(Clone, Debug, Default)]
pub struct CiTable {
    pub entries: HashMap<u32, Entry>,
    pub max_occupancy: usize,
    pub isolations: u64,
    pub releases: u64,
    pub evictions: u64,
    pub cips_sent: u64,
    pub cips_received: u64,
    next_gen: u32,
}

impl CiTable {
    /// Insert `key`, evicting the least recently active entry (ties: smallest key) when full.
    pub fn insert(&mut self, key: u32, nc_pkts: u32, now: SimTime, capacity: usize) -> &mut Entry {
        if !self.entries.contains_key(&key) && self.entries.len() >= capacity {
            let victim = *self.entries.iter().min_by_key(|(k, e)| (e.last_active, **k)).map(|(k, _)| k).unwrap();
            self.entries.remove(&victim);
            self.evictions += 1;
        }
        self.isolations += 1;
        self.next_gen = self.next_gen.wrapping_add(1);
        let gen = self.next_gen;
        let e = self.entries.entry(key).or_insert(Entry { nc_pkts: 0, c_pkts: 0, last_active: now, release_gen: gen, empty_since: now, timer: false, cip_at: None });
        e.nc_pkts = nc_pkts;
        e.last_active = now;
        self.max_occupancy = self.max_occupancy.max(self.entries.len());
        self.entries.get_mut(&key).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn isolation_probability_follows_the_seed_reading() {
        let p = CiParams {
            mode: CiMode::Isolate,
            queue: 1,
            congested_queue: 0,
            isolate: Red { low: 10_000, high: 300_000, pmax: 0.01 },
            mark: CiMark::QueueEcn,
            table_size: 4,
            signal: true,
            cip_threshold: 100_000,
            release_after: SimTime::from_us(100),
            hosts: true,
        };
        assert_eq!(p.prob(10_000), 0.0);
        assert!((p.prob(155_000) - 0.005).abs() < 1e-12);
        assert_eq!(p.prob(300_001), 1.0);
    }
    #[test]
    fn table_is_bounded_and_evicts_least_recent() {
        let mut t = CiTable::default();
        for k in 0..4u32 {
            t.insert(k, 0, SimTime(10 + k as u64), 4);
        }
        t.entries.get_mut(&0).unwrap().last_active = SimTime(100);
        t.insert(9, 0, SimTime(200), 4);
        assert_eq!(t.entries.len(), 4);
        assert!(!t.entries.contains_key(&1), "least recently active evicted");
        assert!(t.entries.contains_key(&0) && t.entries.contains_key(&9));
        assert_eq!(t.evictions, 1);
        assert_eq!(t.max_occupancy, 4);
    }
}
