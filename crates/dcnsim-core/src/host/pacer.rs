//! Rate pacing of a rate-based sender, as an RDMA NIC's per-QP rate limiter does it: the
//! next packet may start one serialization time, at the sender's current rate, after the
//! previous one started. The pacer also keeps the sender's single live wake-up (lazy:
//! a wake-up superseded by a later rate change is recognised by its generation).

use crate::sim::{ser_time, SimTime};

#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Start of the last transmission and its wire size.
    last_tx: Option<(SimTime, u32)>,
    /// Generation of the live wake-up.
    pub wake_gen: u32,
    /// When the live wake-up fires, if one is queued.
    pub wake_at: Option<SimTime>,
}

impl Pacer {
    /// Earliest time the next packet may start at `rate_bps`.
    #[inline]
    pub fn next_allowed(&self, rate_bps: u64) -> SimTime {
        match self.last_tx {
            None => SimTime::ZERO,
            Some((t, wire)) => t + ser_time(wire as u64, rate_bps.max(1)),
        }
    }
    /// A packet of `wire` bytes starts now.
    #[inline]
    pub fn on_send(&mut self, now: SimTime, wire: u32) {
        self.last_tx = Some((now, wire));
    }
    /// Queue a wake-up at `at` unless one at or before it is live; returns its generation
    /// when the caller must schedule it.
    pub fn arm(&mut self, at: SimTime) -> Option<u32> {
        if self.wake_at.is_some_and(|t| t <= at) {
            return None;
        }
        self.wake_gen = self.wake_gen.wrapping_add(1);
        self.wake_at = Some(at);
        Some(self.wake_gen)
    }
    /// A wake-up of generation `gen` fired: whether it is the live one.
    pub fn fire(&mut self, gen: u32) -> bool {
        if self.wake_gen != gen {
            return false;
        }
        self.wake_at = None;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn spacing_is_the_serialization_time_at_the_rate() {
        let mut p = Pacer::default();
        assert_eq!(p.next_allowed(10_000_000_000), SimTime::ZERO);
        p.on_send(SimTime::from_us(1), 1250);
        // 1250 B at 10 Gb/s = 1 us; at 5 Gb/s = 2 us
        assert_eq!(p.next_allowed(10_000_000_000), SimTime::from_us(2));
        assert_eq!(p.next_allowed(5_000_000_000), SimTime::from_us(3));
    }
    #[test]
    fn one_live_wake_up() {
        let mut p = Pacer::default();
        let g1 = p.arm(SimTime(100)).unwrap();
        assert_eq!(p.arm(SimTime(150)), None, "a later wake-up is covered by the live one");
        let g2 = p.arm(SimTime(50)).unwrap();
        assert!(!p.fire(g1), "superseded");
        assert!(p.fire(g2));
        assert_eq!(p.wake_at, None);
    }
}
