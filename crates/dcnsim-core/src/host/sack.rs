//! The SACK scoreboard of a TCP sender: the byte ranges its receiver has reported holding
//! above the cumulative point (RFC 2018), and what RFC 6675 ("A Conservative Loss Recovery
//! Algorithm Based on Selective Acknowledgment (SACK) for TCP") derives from them: which
//! unacknowledged bytes are lost (`IsLost`), how many are still in the network (`SetPipe`)
//! and which segment recovery sends next (`NextSeg`).
//!
//! Readings (RFC 6675 sec. 4 and 5):
//! - DupThresh is 3, as RFC 6675 and Linux's initial `tp->reordering` have it, and a
//!   sprayed flow's reordering reads as loss here as it does in ns-3 3.44. Linux marks
//!   losses by time instead (RACK, RFC 8985): with `transport.rack` the scoreboard takes
//!   RACK's marks (`host/rack.rs`, `mark_lost`) and none of the DupThresh rules below.
//! - `IsLost(S)`: more than (DupThresh - 1) * SMSS bytes, or DupThresh discontiguous ranges,
//!   SACKed above S. Both grow as S falls, so the lost bytes are exactly the unSACKed ones
//!   below one frontier, which `lost_below` finds in one walk from the top.
//! - `NextSeg` rules 1 and 2 (the first lost segment above HighRxt, else new data); rule 3
//!   (an unSACKed segment not yet lost) is left out, as Linux, which retransmits only what
//!   it has marked lost, leaves it out.
//! - A retransmission is lost too once the receiver SACKs data sent DupThresh segments
//!   after it (Linux's `tcp_mark_lost_retrans` before RACK, which finds the same loss by
//!   time); RFC 6675 alone leaves it to the timeout. It is then resent before any other.
//! - The receiver never reneges (it keeps what it reported), so the scoreboard survives a
//!   retransmission timeout and the go-back-N that follows skips SACKed segments, as
//!   Linux's `tcp_enter_loss` keeps SACKed segments and marks the rest lost.

/// RFC 6675's DupThresh.
pub const DUP_THRESH: u64 = 3;

/// One sender's SACKed ranges and recovery marks (RFC 6675 sec. 3 and 4).
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed byte ranges [start, end) above the cumulative point: sorted, disjoint and not
    /// touching.
    ranges: Vec<(u64, u64)>,
    /// Bytes in `ranges`.
    bytes: u64,
    /// RFC 6675's HighRxt: the end of the highest byte retransmitted in this recovery.
    pub high_rxt: u64,
    /// The loss frontier last counted into the delivery-rate losses (`newly_lost`).
    counted_lost: u64,
    /// This recovery's retransmissions not yet delivered: [start, end) and the highest byte
    /// sent when each left (Linux's `ack_seq` of a retransmitted skb).
    resent: Vec<(u64, u64, u64)>,
    /// Retransmissions found lost (`resent` entries), to be sent again first, lowest first.
    relost: Vec<(u64, u64)>,
    /// The highest byte sent before any retransmission the latest ACK reported delivered
    /// (0: none): whatever is still missing below it was sent before that retransmission
    /// and, the path keeping a flow's order, is lost.
    pub delivered_rxt_to: u64,
    /// RACK (`host/rack.rs`) marks losses (`mark_lost`) in place of the DupThresh rules:
    /// no loss frontier, no retransmission lost by the segments SACKed past it.
    rack: bool,
}

/// What one ACK changed on the scoreboard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Update {
    /// Bytes SACKed by this ACK for the first time.
    pub newly_sacked: u64,
    /// Bytes SACKed earlier that this ACK's cumulative point now covers.
    pub covered: u64,
}

impl Scoreboard {
    /// A scoreboard whose losses RACK marks (`rack`) or RFC 6675's rules find.
    pub fn new(rack: bool) -> Scoreboard {
        Scoreboard { rack, ..Default::default() }
    }

    /// An ACK with cumulative point `una` and the SACK `blocks` it carries (the part of a
    /// block at or below `una`, a D-SACK or a stale block, is ignored).
    pub fn update(&mut self, una: u64, blocks: &[(u64, u64)]) -> Update {
        self.update_with(una, blocks, |_, _| {})
    }

    /// `update`, telling `newly(start, end)` of each range SACKed for the first time.
    pub fn update_with(&mut self, una: u64, blocks: &[(u64, u64)], mut newly: impl FnMut(u64, u64)) -> Update {
        self.delivered_rxt_to = 0;
        let covered = self.trim(una);
        let before = self.bytes;
        for &(s, e) in blocks {
            let s = s.max(una);
            if s < e {
                self.insert(s, e, &mut newly);
            }
        }
        if !self.resent.is_empty() || !self.relost.is_empty() {
            self.check_resent(una);
        }
        Update { newly_sacked: self.bytes - before, covered }
    }

    /// Retransmissions delivered leave `resent` (and `relost`); those the receiver has
    /// SACKed DupThresh segments of later data past are lost again.
    #[cold]
    fn check_resent(&mut self, una: u64) {
        let top = self.ranges.last().map_or(0, |r| r.1);
        let mut resent = std::mem::take(&mut self.resent);
        let mut delivered_to = 0;
        resent.retain(|&(s, e, sent_to)| {
            if e <= una || self.holds(s.max(una), e) {
                delivered_to = delivered_to.max(sent_to);
                return false;
            }
            // DupThresh segments of `e - s` each (the retransmission's own size)
            if !self.rack && top >= sent_to + DUP_THRESH * (e - s) {
                self.relost.push((s, e));
                return false;
            }
            true
        });
        self.resent = resent;
        self.delivered_rxt_to = delivered_to;
        let mut relost = std::mem::take(&mut self.relost);
        relost.retain(|&(s, e)| e > una && !self.holds(s.max(una), e));
        relost.sort_unstable();
        self.relost = relost;
    }

    /// A segment [s, e) is retransmitted in recovery with `sent_to` the highest byte sent.
    pub fn on_resend(&mut self, s: u64, e: u64, sent_to: u64) {
        self.high_rxt = self.high_rxt.max(e);
        self.relost.retain(|r| r.0 != s);
        self.resent.retain(|r| r.0 != s);
        self.resent.push((s, e, sent_to));
    }

    /// Whether the segment at `seq` was resent and is not known lost again.
    pub fn resent(&self, seq: u64) -> bool {
        seq < self.high_rxt && !self.relost.iter().any(|r| r.0 == seq)
    }

    /// Drop what lies below `una`; the bytes dropped.
    fn trim(&mut self, una: u64) -> u64 {
        let mut gone = 0;
        let n = self.ranges.iter().take_while(|r| r.1 <= una).count();
        for r in self.ranges.drain(..n) {
            gone += r.1 - r.0;
        }
        if let Some(r) = self.ranges.first_mut() {
            if r.0 < una {
                gone += una - r.0;
                r.0 = una;
            }
        }
        self.bytes -= gone;
        gone
    }

    fn insert(&mut self, s: u64, e: u64, newly: &mut impl FnMut(u64, u64)) {
        // the ranges that overlap or touch [s, e) merge with it
        let lo = self.ranges.partition_point(|r| r.1 < s);
        let hi = self.ranges.partition_point(|r| r.0 <= e);
        // the gaps between them within [s, e) are new
        let mut from = s;
        for r in &self.ranges[lo..hi] {
            if r.0 > from {
                newly(from, r.0.min(e));
            }
            from = from.max(r.1);
        }
        if from < e {
            newly(from, e);
        }
        let (mut s, mut e) = (s, e);
        for r in &self.ranges[lo..hi] {
            s = s.min(r.0);
            e = e.max(r.1);
            self.bytes -= r.1 - r.0;
        }
        self.ranges.splice(lo..hi, [(s, e)]);
        self.bytes += e - s;
    }

    /// The SACKed ranges, lowest first.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// Bytes SACKed in all.
    pub fn sacked(&self) -> u64 {
        self.bytes
    }

    /// Bytes SACKed within [a, b).
    pub fn sacked_in(&self, a: u64, b: u64) -> u64 {
        if a >= b || self.ranges.is_empty() {
            return 0;
        }
        let lo = self.ranges.partition_point(|r| r.1 <= a);
        self.ranges[lo..].iter().take_while(|r| r.0 < b).map(|r| r.1.min(b) - r.0.max(a)).sum()
    }

    /// Whether [s, e) is SACKed whole.
    pub fn holds(&self, s: u64, e: u64) -> bool {
        let i = self.ranges.partition_point(|r| r.1 < e);
        self.ranges.get(i).is_some_and(|r| r.0 <= s && e <= r.1)
    }

    /// The first byte at or above `seq` that is not SACKed.
    pub fn next_unsacked(&self, seq: u64) -> u64 {
        let i = self.ranges.partition_point(|r| r.1 <= seq);
        match self.ranges.get(i) {
            Some(r) if r.0 <= seq => r.1,
            _ => seq,
        }
    }

    /// The loss frontier: every unSACKed byte below it is lost (RFC 6675 `IsLost`, with
    /// segments of `mss`); 0 when none is.
    pub fn lost_below(&self, mss: u64) -> u64 {
        if self.rack {
            return 0;
        }
        let mut bytes = 0;
        for (n, r) in self.ranges.iter().rev().enumerate() {
            bytes += r.1 - r.0;
            if bytes > (DUP_THRESH - 1) * mss || n as u64 + 1 >= DUP_THRESH {
                return r.0;
            }
        }
        0
    }

    /// Whether the unSACKed byte `seq` is lost (RFC 6675 `IsLost`).
    pub fn is_lost(&self, seq: u64, mss: u64) -> bool {
        seq < self.lost_below(mss)
    }

    /// RFC 6675 `NextSeg` rule 1: the first lost, unSACKed byte above both `una` and
    /// HighRxt, if any.
    pub fn next_lost(&self, una: u64, mss: u64) -> Option<u64> {
        if let Some(&(s, _)) = self.relost.first() {
            return Some(s.max(una));
        }
        let s = self.next_unsacked(self.high_rxt.max(una));
        (s < self.lost_below(mss)).then_some(s)
    }

    /// RFC 6675 `SetPipe` over the bytes sent [una, nxt): each unSACKed byte counts once
    /// unless it is lost, and once more if it was retransmitted in this recovery (below
    /// HighRxt). Out of recovery nothing is counted lost: after a timeout the bytes below
    /// `nxt` are the ones sent again.
    pub fn pipe(&self, una: u64, nxt: u64, in_recovery: bool, mss: u64) -> u64 {
        let out = (nxt - una) - self.sacked_in(una, nxt);
        if !in_recovery {
            return out;
        }
        // a retransmission found lost has left the network too
        let relost: u64 = self.relost.iter().map(|&(s, e)| (e - s.max(una)) - self.sacked_in(s.max(una), e)).sum();
        let (a, b) = (self.high_rxt.max(una), self.lost_below(mss).min(nxt));
        if a >= b {
            return out - relost;
        }
        out - relost - ((b - a) - self.sacked_in(a, b))
    }

    /// Bytes newly found lost since the last call (for the delivery-rate losses), of those
    /// unacknowledged above `una`.
    pub fn newly_lost(&mut self, una: u64, mss: u64) -> u64 {
        let f = self.lost_below(mss);
        let from = self.counted_lost.max(una);
        if f <= from {
            return 0;
        }
        self.counted_lost = f;
        (f - from) - self.sacked_in(from, f)
    }

    /// Recovery starts (RFC 6675 sec. 5 step 4.1: HighRxt = HighACK). What the last
    /// recovery already resent above `una` (rule 1 goes past its RecoveryPoint) stays
    /// resent, as Linux's per-segment retransmitted mark keeps it: it is not sent again
    /// unless found lost again.
    pub fn start_recovery(&mut self, una: u64) {
        self.high_rxt = self.high_rxt.max(una);
    }

    /// RACK found [s, e) lost: it is resent before new data (and counts out of `pipe` until
    /// it is).
    pub fn mark_lost(&mut self, s: u64, e: u64) {
        debug_assert!(self.rack);
        let at = self.relost.partition_point(|r| r.0 < s);
        if self.relost.get(at).is_none_or(|r| r.0 != s) {
            self.relost.insert(at, (s, e));
        }
        self.resent.retain(|r| r.0 != s);
    }

    /// Segments SACKed, of `mss` bytes (Linux's `sacked_out`).
    pub fn sacked_segments(&self, mss: u64) -> u64 {
        self.bytes.div_ceil(mss)
    }

    /// A retransmission timeout: every unSACKed byte below `max` is taken as lost (counted
    /// by the timeout itself) and go-back-N resends from `una` (Linux `tcp_enter_loss`).
    pub fn timed_out(&mut self, una: u64, max: u64) {
        self.high_rxt = una;
        self.resent.clear();
        self.relost.clear();
        self.counted_lost = max;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn board(blocks: &[(u64, u64)]) -> Scoreboard {
        let mut b = Scoreboard::default();
        b.update(0, blocks);
        b
    }

    #[test]
    fn blocks_merge_and_the_cumulative_point_trims_them() {
        let mut b = Scoreboard::default();
        assert_eq!(b.update(0, &[(2000, 3000)]), Update { newly_sacked: 1000, covered: 0 });
        assert_eq!(b.update(0, &[(4000, 5000), (2000, 3000)]), Update { newly_sacked: 1000, covered: 0 });
        assert_eq!(b.update(0, &[(3000, 4000)]).newly_sacked, 1000, "fills the gap");
        assert_eq!(b.ranges(), &[(2000, 5000)]);
        assert_eq!(b.update(0, &[(2500, 6000)]).newly_sacked, 1000, "overlap counts once");
        assert_eq!(b.update(3000, &[(8000, 9000)]), Update { newly_sacked: 1000, covered: 1000 });
        assert_eq!(b.ranges(), &[(3000, 6000), (8000, 9000)]);
        assert_eq!(b.sacked(), 4000);
        assert_eq!(b.update(7000, &[(1000, 2000)]), Update { newly_sacked: 0, covered: 3000 }, "a stale block adds nothing");
        assert_eq!(b.ranges(), &[(8000, 9000)]);
    }

    #[test]
    fn is_lost_needs_three_segments_or_three_ranges_above() {
        // segment 0 lost, 1 and 2 SACKed: two segments above it, not lost yet
        let b = board(&[(1000, 3000)]);
        assert_eq!(b.lost_below(MSS), 0);
        assert!(!b.is_lost(0, MSS));
        // a third: more than 2 SMSS above 0 and above the hole at 3000? No: only 0 has them
        let b = board(&[(1000, 4000)]);
        assert!(b.is_lost(0, MSS));
        assert_eq!(b.next_lost(0, MSS), Some(0));
        // three discontiguous single bytes above 0 (short segments) also make 0 lost
        let b = board(&[(1000, 1001), (2000, 2001), (3000, 3001)]);
        assert!(b.is_lost(0, MSS) && !b.is_lost(1500, MSS), "1500 has two above it");
        // holes at 0 and 4000, SACKed 1-3 and 5-7: 4000 has 3 above it, so both are lost
        let b = board(&[(1000, 4000), (5000, 8000)]);
        assert_eq!(b.lost_below(MSS), 5000);
        assert_eq!(b.next_lost(0, MSS), Some(0));
        let mut b = b;
        b.start_recovery(0);
        b.high_rxt = 1000;
        assert_eq!(b.next_lost(0, MSS), Some(4000), "rule 1 skips SACKed bytes and what was resent");
        b.high_rxt = 5000;
        assert_eq!(b.next_lost(0, MSS), None);
    }

    #[test]
    fn pipe_counts_as_set_pipe_does() {
        // 10 segments out, 0 and 4 lost, the rest SACKed
        let mut b = board(&[(1000, 4000), (5000, 10000)]);
        b.start_recovery(0);
        assert_eq!(b.pipe(0, 10000, false, MSS), 2000, "out of recovery: the unSACKed");
        assert_eq!(b.pipe(0, 10000, true, MSS), 0, "both holes lost, none resent");
        b.high_rxt = 1000;
        assert_eq!(b.pipe(0, 10000, true, MSS), 1000, "segment 0 resent");
        b.high_rxt = 5000;
        assert_eq!(b.pipe(0, 10000, true, MSS), 2000);
        assert_eq!(b.pipe(0, 11000, true, MSS), 3000, "new data counts");
    }

    #[test]
    fn a_retransmission_is_lost_once_later_data_is_sacked_past_it() {
        // of 10 segments out, 0 lost and the rest SACKed: 0 resent
        let mut b = board(&[(1000, 10_000)]);
        b.start_recovery(0);
        assert_eq!(b.next_lost(0, MSS), Some(0));
        b.high_rxt = 1000;
        b.on_resend(0, 1000, 10_000);
        assert_eq!(b.next_lost(0, MSS), None);
        assert_eq!(b.pipe(0, 10_000, true, MSS), 1000, "the retransmission");
        b.update(0, &[(10_000, 12_000)]);
        assert_eq!(b.next_lost(0, MSS), None, "two segments sent after it SACKed: reordering yet");
        b.update(0, &[(10_000, 13_000)]);
        assert_eq!(b.next_lost(0, MSS), Some(0), "three: lost again");
        assert_eq!(b.pipe(0, 13_000, true, MSS), 0, "it left the network");
        b.on_resend(0, 1000, 13_000);
        assert_eq!(b.next_lost(0, MSS), None);
        b.update(1000, &[]);
        assert!(b.resent.is_empty(), "delivered");
    }

    #[test]
    fn losses_are_counted_once_and_go_back_n_skips_sacked_bytes() {
        let mut b = board(&[(1000, 4000)]);
        assert_eq!(b.newly_lost(0, MSS), 1000);
        assert_eq!(b.newly_lost(0, MSS), 0);
        b.update(0, &[(5000, 8000)]);
        assert_eq!(b.newly_lost(0, MSS), 1000, "the hole at 4000");
        assert_eq!(b.next_unsacked(1000), 4000);
        assert_eq!(b.next_unsacked(4000), 4000);
        assert_eq!(b.next_unsacked(6500), 8000);
        assert!(b.holds(5000, 6000) && !b.holds(3500, 4500));
        assert_eq!(b.sacked_in(3500, 5500), 1000);
    }
}
