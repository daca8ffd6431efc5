//! REPS, recycled entropies for packet spraying (Bonato et al., "REPS: Recycled Entropy
//! Packet Spraying for Adaptive Load Balancing and Failure Mitigation", arXiv 2407.21625;
//! the UEC's htsim, `uec_mp.cpp` `UecMpReps` and `buffer_reps.cpp`, whose constants these
//! are): a sender keeps the entropies of its last 8 packets that came back acknowledged and
//! unmarked, and sends each new packet on the oldest of them not used since; with none,
//! it draws one of `ENTROPIES` at random. A marked, NACKed or lost packet's entropy is not
//! recycled, so congested and failed paths drop out of use. After a retransmission timeout
//! it freezes for 10 ms: it cycles through the entropies it holds (the paths that worked)
//! instead of exploring, then empties its buffer and explores 16 random entropies.
//!
//! Readings: the entropy a packet carries is the flow's own hash XOR the REPS value (htsim's
//! switches hash the flow's id with the path id, which this gives them), so the value
//! comes back in the ACK; every NACK counts as a congested path (htsim treats a trim at
//! the last hop by the header's ECN mark); freezing also applies without trimming (the
//! paper's design; htsim's implementation requires trimming).

use crate::sim::SimTime;
use crate::sim::rng::Rng;
use rand::{Rng as _, SeedableRng};

/// The entropies REPS draws from (htsim's `-paths`, default 64).
pub const ENTROPIES: u32 = 64;
/// Recycled entropies kept (htsim's `repsBufferSize`).
const BUFFER: usize = 8;
/// How long a sender stays frozen after a timeout (htsim's `exit_freeze_after`, 10 ms).
const FREEZE: SimTime = SimTime::from_ms(10);
/// Random entropies tried after a freeze ends.
const EXPLORE: u32 = 16;

/// What came back of a packet: the feedback REPS takes (htsim's `PathFeedback`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PathFeedback {
    /// Acknowledged, not CE-marked: the entropy is recycled.
    Good,
    /// Acknowledged with a CE mark, or NACKed (trimmed): not recycled.
    Congested,
    /// A retransmission timeout.
    Timeout,
}

/// One flow's REPS state.
#[derive(Clone, Debug)]
pub struct Reps {
    evs: [u16; BUFFER],
    valid: [bool; BUFFER],
    head: usize,
    fresh: usize,
    count: usize,
    frozen: bool,
    head_frozen: usize,
    exit_at: SimTime,
    explore: u32,
    rng: Rng,
}

impl Reps {
    /// A new flow's state, its random draws seeded by `seed`.
    pub fn new(seed: u64) -> Reps {
        Reps {
            evs: [0; BUFFER],
            valid: [false; BUFFER],
            head: 0,
            fresh: 0,
            count: 0,
            frozen: false,
            head_frozen: 0,
            exit_at: SimTime::ZERO,
            explore: 0,
            rng: Rng::seed_from_u64(seed),
        }
    }

    /// Reseed its draws (a connection opens: `Sender::open`).
    pub fn seed(&mut self, seed: u64) {
        self.rng = Rng::seed_from_u64(seed);
    }

    fn reset(&mut self) {
        (self.valid, self.head, self.fresh, self.count, self.head_frozen) = ([false; BUFFER], 0, 0, 0, 0);
    }

    fn add(&mut self, ev: u16) {
        if !self.valid[self.head] {
            self.fresh = (self.fresh + 1).min(BUFFER);
        }
        (self.evs[self.head], self.valid[self.head]) = (ev, true);
        self.head = (self.head + 1) % BUFFER;
        self.count = (self.count + 1).min(BUFFER);
    }

    /// Feedback `fb` on entropy value `ev` at `now` (htsim `UecMpReps::processEv`).
    pub fn feedback(&mut self, ev: u32, fb: PathFeedback, now: SimTime) {
        if fb == PathFeedback::Timeout && !self.frozen && self.explore == 0 {
            self.frozen = true;
            self.exit_at = now + FREEZE;
        }
        if self.frozen && now > self.exit_at {
            self.frozen = false;
            self.reset();
            self.explore = EXPLORE;
        }
        if fb == PathFeedback::Good {
            self.add((ev % ENTROPIES) as u16);
        }
    }

    /// The entropy value of the next packet (htsim `UecMpReps::nextEntropy`).
    pub fn next(&mut self) -> u32 {
        if self.explore > 0 {
            self.explore -= 1;
            return self.rng.gen_range(0..ENTROPIES);
        }
        if self.frozen {
            if self.count == 0 {
                return self.rng.gen_range(0..ENTROPIES);
            }
            let i = self.head_frozen;
            if self.valid[i] {
                self.fresh -= 1;
            }
            self.valid[i] = false;
            self.head_frozen = (self.head_frozen + 1) % self.count;
            return self.evs[i] as u32;
        }
        if self.fresh == 0 {
            return self.rng.gen_range(0..ENTROPIES);
        }
        let i = (self.head + BUFFER - self.fresh) % BUFFER;
        self.valid[i] = false;
        self.fresh -= 1;
        self.evs[i] as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Good entropies come back in the order they were acknowledged, each once; marked ones
    /// never; with none fresh it draws.
    #[test]
    fn good_entropies_are_recycled_oldest_first_and_congested_ones_dropped() {
        let mut r = Reps::new(1);
        let t = SimTime::from_us(1);
        for ev in [5, 9, 13] {
            r.feedback(ev, PathFeedback::Good, t);
        }
        r.feedback(21, PathFeedback::Congested, t);
        assert_eq!((r.next(), r.next(), r.next()), (5, 9, 13));
        let drawn: Vec<u32> = (0..200).map(|_| r.next()).collect();
        assert!(drawn.iter().all(|&e| e < ENTROPIES));
        assert!(drawn.iter().collect::<std::collections::BTreeSet<_>>().len() > 40, "random draws spread over the entropies");
        // more than 8 acknowledged: the oldest are overwritten
        for ev in 0..12 {
            r.feedback(ev, PathFeedback::Good, t);
        }
        assert_eq!((0..8).map(|_| r.next()).collect::<Vec<_>>(), (4..12).collect::<Vec<_>>());
    }

    /// After a timeout it reuses what it holds (cycling) for 10 ms, then explores 16 random
    /// entropies with an empty buffer.
    #[test]
    fn a_timeout_freezes_on_the_paths_that_worked() {
        let mut r = Reps::new(2);
        let t = SimTime::from_us(1);
        for ev in [3, 7] {
            r.feedback(ev, PathFeedback::Good, t);
        }
        r.feedback(0, PathFeedback::Timeout, t);
        assert_eq!((0..6).map(|_| r.next()).collect::<Vec<_>>(), vec![3, 7, 3, 7, 3, 7]);
        r.feedback(11, PathFeedback::Congested, t + FREEZE + SimTime(1));
        assert_eq!(r.count, 0);
        assert_eq!(r.explore, EXPLORE);
        for _ in 0..EXPLORE {
            r.next();
        }
        assert_eq!(r.explore, 0);
    }
}
