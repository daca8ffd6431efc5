//! Priority-based Flow Control (IEEE 802.1Qbb-2011, clause 36) and 802.3x
//! link-level PAUSE (IEEE 802.3 Annex 31B) as "PFC on all priorities".
//!
//! A switch counts, per (ingress port, traffic class), the bytes that entered
//! through that port and are still buffered. When the count passes XOFF it
//! sends a PAUSE frame upstream with `quanta` (units of 512 bit times at the
//! link rate); while the count stays above XON it refreshes the pause before
//! it expires; when the count falls to XON it sends a zero-quanta PAUSE (XON).
//! Bytes beyond XOFF land in the headroom reserved for that (port, class);
//! only headroom overflow drops a lossless packet. The upstream egress stops
//! serving that class after the frame it is transmitting, exactly for
//! quanta x 512 bit times unless refreshed or resumed.
//!
//! `accounting = "egress_queue"` is the reading of seeds 000/003 ("queue size
//! 1 MB, XOFF 750 KB, XON 4 KB"): the thresholds apply to each egress queue's
//! depth; above XOFF the switch pauses, in the class they arrived in, the
//! ingress ports that have packets in that queue (and any that add to it
//! while it stays above), and sends XON to them when it falls to XON. The
//! queue's capacity above XOFF is the headroom, so a queue never exceeds its
//! size; overflowing it drops even lossless packets (BufferFull). Under
//! Congestion Isolation the congested queue pauses its feeders in the
//! congested class when they can isolate (P802.1Qcz step 4; `switch/ci.rs`),
//! and escalates to the class the packets arrived in past half the headroom.
//!
//! Simplification (documented in docs/mechanisms.md): lossless packets are
//! admitted by this ingress accounting alone (the seeds' "no egress drops");
//! they still count in egress queue depth (for ECN) and in the shared pool.

use crate::sim::{ser_time, SimTime};

/// Most traffic classes a port can have (802.1Q).
pub const CLASSES: usize = 8;

/// Wire size of a PAUSE / PFC frame (minimum Ethernet frame).
pub const PAUSE_FRAME_BYTES: u32 = 64;

/// How XOFF is set.
#[derive(Clone, Debug)]
pub enum Xoff {
    /// A fixed byte count per (ingress port, class) (seeds 000/003: 750 KB; 004: 650 KB).
    Static(u64),
    /// Dynamic: alpha times the free shared buffer, like the dynamic egress threshold.
    Dynamic(f64),
}

/// PFC configuration of every switch.
#[derive(Clone, Debug)]
pub struct PfcParams {
    /// 802.3x: one counter and one pause for all classes of a port.
    pub link_mode: bool,
    pub xoff: Xoff,
    pub xon: u64,
    /// Quanta carried by an XOFF frame (512 bit times each).
    pub quanta: u16,
    /// Bit c set when traffic class c is lossless.
    pub lossless: u8,
    /// Headroom per port id (0 for host ports).
    pub headroom: Vec<u64>,
    /// A cycle of queues paused on each other for this long is a deadlock.
    pub deadlock_after: SimTime,
    /// Thresholds apply to each egress queue's depth instead of per-ingress counters.
    pub egress_queue: bool,
}

/// Queue-based PFC state of one egress queue (`accounting = "egress_queue"`): the bytes
/// each (ingress port, arrival class) has in the queue, and whom an XOFF went to.
#[derive(Clone, Debug, Default)]
pub struct QueuePfc {
    pub contrib: Vec<(u32, u8, u64)>,
    pub xoff: bool,
    pub paused: Vec<(u32, u8)>,
    pub refresh_gen: u32,
}

impl QueuePfc {
    pub fn add(&mut self, port: u32, tc: u8, bytes: u64) {
        match self.contrib.iter_mut().find(|c| c.0 == port && c.1 == tc) {
            Some(c) => c.2 += bytes,
            None => self.contrib.push((port, tc, bytes)),
        }
    }
    pub fn sub(&mut self, port: u32, tc: u8, bytes: u64) {
        if let Some(i) = self.contrib.iter().position(|c| c.0 == port && c.1 == tc) {
            self.contrib[i].2 -= bytes;
            if self.contrib[i].2 == 0 {
                self.contrib.swap_remove(i);
            }
        }
    }
}

impl PfcParams {
    /// Counter / pause index of traffic class `c`.
    #[inline]
    pub fn class(&self, c: usize) -> usize {
        if self.link_mode {
            0
        } else {
            c
        }
    }
    #[inline]
    pub fn is_lossless(&self, c: usize) -> bool {
        self.lossless & (1 << c) != 0
    }
    /// How long `quanta` pause a link of `rate_bps`.
    pub fn pause_time(quanta: u16, rate_bps: u64) -> SimTime {
        ser_time(quanta as u64 * 64, rate_bps)
    }
    /// Headroom that absorbs everything that can arrive once the ingress
    /// counter crosses XOFF on a link of `rate_bps` whose round trip
    /// (propagation both ways plus any static switch latency on the way) is
    /// `round_trip`: the crossing frame itself (it is the first one held in
    /// headroom), the frame the downstream is sending when it decides (the
    /// PAUSE waits behind it), the PAUSE frame, the round trip at line rate,
    /// and the frame the upstream has started when the PAUSE arrives
    /// (802.1Qbb's delay components, with zero interface and higher-layer
    /// response delay in this model).
    pub fn derived_headroom(rate_bps: u64, round_trip: SimTime, mtu: u32) -> u64 {
        let cable = (round_trip.0 as u128 * rate_bps as u128).div_ceil(8 * 1_000_000_000_000u128) as u64;
        cable + 3 * mtu as u64 + PAUSE_FRAME_BYTES as u64
    }
}

/// Per (ingress port) counters of a switch.
#[derive(Clone, Debug, Default)]
pub struct Ingress {
    /// Bytes buffered that entered through this port, per class.
    pub bytes: [u64; CLASSES],
    /// Of those, bytes held in headroom.
    pub headroom: [u64; CLASSES],
    /// XOFF sent and not yet released by XON.
    pub xoff: [bool; CLASSES],
    /// Generation of the live refresh event, per class.
    pub refresh_gen: [u32; CLASSES],
}

/// Pause state of one egress port (the receiving side of PAUSE frames).
#[derive(Clone, Debug, Default)]
pub struct Paused {
    /// The class may not transmit before this time.
    pub until: [SimTime; CLASSES],
    /// Start of the current (or last) paused period.
    since: [Option<SimTime>; CLASSES],
    /// Last instant the class was paused (victim-flow detection).
    pub last_paused: [SimTime; CLASSES],
    /// Total paused time of closed periods.
    closed: [u64; CLASSES],
    /// Number of paused periods.
    pub periods: [u64; CLASSES],
}

impl Paused {
    #[inline]
    pub fn is_paused(&self, c: usize, now: SimTime) -> bool {
        self.until[c] > now
    }
    /// A PAUSE for class `c` arrived: paused until `until` (== now for XON).
    pub fn set(&mut self, c: usize, until: SimTime, now: SimTime) {
        if self.until[c] > now {
            // a running period is extended or cut short
            if until <= now {
                self.closed[c] += (now - self.since[c].unwrap()).0;
                self.since[c] = None;
                self.last_paused[c] = now;
            }
            self.until[c] = until;
        } else {
            // the previous period (if any) ended when its quanta ran out
            if let Some(s) = self.since[c].take() {
                self.closed[c] += (self.until[c] - s).0;
                self.last_paused[c] = self.until[c];
            }
            if until > now {
                self.since[c] = Some(now);
                self.periods[c] += 1;
            }
            self.until[c] = until;
        }
    }
    /// Total time class `c` was paused up to `now`.
    pub fn xoff_time(&self, c: usize, now: SimTime) -> u64 {
        self.closed[c]
            + match self.since[c] {
                Some(s) => (self.until[c].min(now) - s).0,
                None => 0,
            }
    }
    /// Whether class `c` has been paused without interruption since at least `t`.
    pub fn paused_since(&self, c: usize, t: SimTime, now: SimTime) -> bool {
        self.until[c] > now && self.since[c].is_some_and(|s| s <= t)
    }
    /// Whether class `c` was paused at any instant in [t, now].
    pub fn paused_during(&self, c: usize, t: SimTime) -> bool {
        // the open (possibly expired, not yet closed) period ends at `until`;
        // closed periods ended at or before `last_paused`
        (self.since[c].is_some() && self.until[c] >= t) || (self.periods[c] > 0 && self.last_paused[c] >= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn pause_time_is_quanta_times_512_bit_times() {
        // 65535 quanta at 100 Gbps = 65535 * 512 / 100e9 s = 335.5392 us
        assert_eq!(PfcParams::pause_time(65535, 100_000_000_000), SimTime(335_539_200));
        assert_eq!(PfcParams::pause_time(1, 10_000_000_000), SimTime(51_200));
    }
    #[test]
    fn headroom_formula() {
        // 100G, 200 ns cable each way: 2 * 2500 B + 3 * 1500 + 64
        assert_eq!(PfcParams::derived_headroom(100_000_000_000, SimTime::from_ns(400), 1500), 9564);
    }
    #[test]
    fn xoff_time_accounting() {
        let mut p = Paused::default();
        let t = |us| SimTime::from_us(us);
        p.set(0, t(10), t(0)); // paused 0..10
        p.set(0, t(20), t(5)); // refreshed at 5: until 20
        p.set(0, t(12), t(12)); // XON at 12
        assert_eq!(p.xoff_time(0, t(100)), t(12).0);
        p.set(0, t(40), t(30)); // new period 30..40, expires by itself
        assert_eq!(p.xoff_time(0, t(35)), t(17).0);
        assert_eq!(p.xoff_time(0, t(100)), t(22).0);
        p.set(0, t(60), t(50));
        assert_eq!(p.xoff_time(0, t(100)), t(32).0);
        assert_eq!(p.periods[0], 3);
        assert!(p.paused_during(0, t(11)));
        assert!(p.paused_during(0, t(55)));
        assert!(!p.paused_during(0, t(61)));
        assert!(!p.paused_during(1, t(0)));
    }
}
