//! The receiving side of PAUSE and PFC frames: when each class of a transmitter may send
//! again, and the paused periods it has been through (IEEE 802.3 Annex 31B, 802.1Qbb: a
//! frame's pause time replaces the running one, and zero quanta end it).

use super::CLASSES;
use crate::sim::SimTime;

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
