//! RACK-TLP loss detection (RFC 8985, "The RACK-TLP Loss Detection Algorithm for TCP"), as
//! Linux runs it by default since 4.18 (`net.ipv4.tcp_recovery = 1`, `tcp_early_retrans = 3`;
//! net/ipv4/tcp_recovery.c, `tcp_send_loss_probe` in tcp_output.c): a segment is lost once
//! a segment sent after it is delivered and a reordering window has passed since, not after
//! DupThresh duplicate ACKs; a probe retransmission after two round trips of silence turns
//! a lost tail into SACK feedback instead of a retransmission timeout.
//!
//! This module keeps what RACK needs beside the SACK scoreboard (`host/sack.rs`, whose
//! DupThresh rule it replaces): the send time of every outstanding segment, the most
//! recently sent delivered segment (RACK.xmit_ts, RACK.end_seq, RACK.rtt), the reordering
//! window and its D-SACK driven growth, the tail loss probe's state and the record of a
//! recovery's retransmissions that lets D-SACKs or the echoed send times undo a spurious
//! one. The TCP sender (`host/tcp.rs`) calls it; marking lost goes through the scoreboard.
//!
//! Readings (RFC 8985 and Linux; where they differ the RFC, unless said):
//! - Segments are the sender's MSS-aligned packets (`seq / mss` indexes them).
//! - Each ACK echoes the send time of the data that triggered it (the model's timestamp
//!   option): RACK.rtt is taken from segments the ACK newly delivers, skipping a
//!   retransmitted one when the echo predates its last send or its RTT is below the
//!   minimum RTT (RFC 8985 6.2 step 2: ambiguous).
//! - Reordering window (step 4, Linux `tcp_rack_reo_wnd`): 0 until reordering is seen while
//!   in recovery or with DupThresh segments SACKed (RACK then finds losses as quickly as
//!   the DupThresh rule); else min(min RTT / 4 x steps, SRTT), the steps grown by one per
//!   round trip with a D-SACK and reset after 16 recoveries without (step 3).
//! - Loss probe (sec. 7): PTO = 2 x SRTT, no more than the time left to the RTO; the
//!   receivers of this model acknowledge every segment, so the delayed-ACK allowance for a
//!   single segment in flight (WCDelAckT) is 0 (Linux adds its 200 ms minimum RTO there,
//!   and 2 jiffies otherwise: timer granularity the model does not have). It is armed in
//!   the Open and CWR states with SACK, one probe per episode; it sends one new segment
//!   whatever the window if there is one, else resends the highest segment. An ACK of a
//!   probe retransmission with no D-SACK of it means it repaired a loss: the window is
//!   reduced once (RFC 8985 7.4.2, Linux `tcp_process_tlp_ack`).
//! - Undo (Linux `tcp_try_undo_recovery` / `tcp_try_undo_dsack`): a fast recovery whose
//!   every retransmission the receiver reports as a duplicate (D-SACK, RFC 2883), or whose
//!   ending ACK echoes a send time before its first retransmission (the original arrived:
//!   Linux's timestamp check, `tcp_packet_delayed`), gives back the window it took. Undo
//!   after a timeout (Linux's F-RTO and `tcp_try_undo_loss`) is not modelled.
//! - The reorder timer shares the flow's retransmission timer (Linux's `icsk_pending`):
//!   the earliest of the RTO, the reorder timeout and the probe timeout fires.

use crate::sim::SimTime;
use std::collections::VecDeque;

/// Recoveries a grown reordering window persists for without another D-SACK (RFC 8985
/// 6.2 step 3, Linux `TCP_RACK_RECOVERY_THRESH`).
const REO_WND_PERSIST: u32 = 16;

/// The send record of one outstanding segment.
#[derive(Clone, Copy, Debug)]
struct Sent {
    /// When it last left.
    at: SimTime,
    /// It was sent more than once.
    retx: bool,
    /// RACK (or a timeout) marked it lost and it was not sent again since.
    lost: bool,
}

/// The timer RACK-TLP holds in place of the retransmission timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Early {
    /// The reorder timer: look for losses again (RFC 8985 6.3).
    Reorder,
    /// The probe timer (sec. 7.3).
    Probe,
}

/// A fast recovery's record for undoing it (Linux's `undo_marker`, `undo_retrans`,
/// `retrans_stamp`, `prior_cwnd`, `prior_ssthresh`).
#[derive(Clone, Copy, Debug)]
pub struct Undo {
    /// Retransmissions of this recovery not yet reported duplicate.
    pub retrans: i64,
    /// The first retransmission's send time.
    pub first_retx: Option<SimTime>,
    /// snd_una when the recovery began: a D-SACK above it is of this recovery.
    pub marker: u64,
    /// The window and threshold before the reduction.
    pub cwnd: f64,
    pub ssthresh: f64,
}

/// RACK-TLP's state of one TCP sender (RFC 8985 sec. 6 and 7).
#[derive(Clone, Debug)]
pub struct Rack {
    /// Payload bytes per segment.
    mss: u64,
    /// Index of the first record (the segment holding snd_una).
    base: u64,
    sent: VecDeque<Sent>,
    /// The most recently sent segment delivered so far: its send time and end (RACK.xmit_ts,
    /// RACK.end_seq), and its RTT (RACK.rtt); None before the first.
    last: Option<(SimTime, u64)>,
    rtt: SimTime,
    min_rtt: Option<SimTime>,
    /// The highest end delivered (RACK.fack).
    fack: u64,
    /// Reordering was seen (RACK.reordering_seen).
    pub reordering: bool,
    /// The reordering window's multiplier, its persistence and the end of the round trip in
    /// which a D-SACK last grew it (RACK.reo_wnd_mult, reo_wnd_persist, dsack_round).
    steps: u32,
    persist: u32,
    dsack_round: Option<u64>,
    /// The held retransmission timer: (what fires early, the RTO deadline it displaced).
    pub early: Option<(Early, Option<SimTime>)>,
    /// The outstanding probe: its end and whether it was a retransmission (TLP.end_seq,
    /// TLP.is_retrans).
    pub probe: Option<(u64, bool)>,
    /// The current fast recovery's undo record.
    pub undo: Option<Undo>,
    /// After a timeout, until everything then sent is acknowledged (Linux's Loss state):
    /// go-back-N resends every segment, and RACK finds no losses of its own.
    pub loss_until: Option<u64>,
    /// Lifetime counts: probes sent, recoveries undone.
    pub probes: u64,
    pub undone: u64,
}

impl Rack {
    pub fn new(mss: u32) -> Rack {
        Rack {
            mss: mss as u64,
            base: 0,
            sent: VecDeque::new(),
            last: None,
            rtt: SimTime::ZERO,
            min_rtt: None,
            fack: 0,
            reordering: false,
            steps: 1,
            persist: 0,
            dsack_round: None,
            early: None,
            probe: None,
            undo: None,
            loss_until: None,
            probes: 0,
            undone: 0,
        }
    }

    /// Sequence numbers start afresh on a continued connection; what RACK learned of the
    /// path (its minimum RTT, reordering and window steps) stays, as on one Linux socket.
    pub fn restart(&mut self) {
        self.base = 0;
        self.sent.clear();
        self.last = None;
        self.fack = 0;
        self.dsack_round = None;
        self.early = None;
        self.probe = None;
        self.undo = None;
        self.loss_until = None;
    }

    /// Segment [seq, seq + len) left at `now` (`retx`: not for the first time).
    pub fn on_send(&mut self, seq: u64, now: SimTime, retx: bool) {
        let k = seq / self.mss;
        debug_assert!(k >= self.base, "a segment below snd_una is never sent");
        let i = (k - self.base) as usize;
        if i == self.sent.len() {
            self.sent.push_back(Sent { at: now, retx, lost: false });
        } else if let Some(s) = self.sent.get_mut(i) {
            *s = Sent { at: now, retx: s.retx || retx, lost: false };
        }
    }

    /// A round-trip sample (`now` less an echoed send time) for the minimum RTT.
    pub fn on_rtt(&mut self, rtt: SimTime) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// The segment with index `k`, ending at `end`, is newly delivered (cumulatively or
    /// selectively) by an ACK echoing send time `echo` (RFC 8985 6.2 steps 1 and 2).
    pub fn delivered(&mut self, k: u64, end: u64, echo: SimTime, now: SimTime) {
        let Some(s) = k.checked_sub(self.base).and_then(|i| self.sent.get(i as usize)).copied() else {
            return;
        };
        // an echo from before its last send shows the original arrived (the model's
        // timestamps tell what RFC 8985 without them cannot): late, not lost
        let original = !s.retx || echo < s.at;
        if end > self.fack {
            self.fack = end;
        } else if end < self.fack && original {
            self.reordering = true;
        }
        let rtt = now - s.at;
        if s.retx && (echo < s.at || self.min_rtt.is_some_and(|m| rtt < m)) {
            // whether the original or the retransmission arrived is ambiguous
            return;
        }
        self.rtt = rtt;
        if self.last.is_none_or(|l| sent_after((s.at, end), l)) {
            self.last = Some((s.at, end));
        }
    }

    /// The cumulative point moved to `una`: the records below it go.
    pub fn on_cum_ack(&mut self, una: u64) {
        let k = una / self.mss;
        while self.base < k && self.sent.pop_front().is_some() {
            self.base += 1;
        }
        if self.sent.is_empty() {
            self.base = self.base.max(k);
        }
    }

    /// A D-SACK arrived on an ACK with cumulative point `una` while `nxt` was the next byte to
    /// send: the reordering window grows a step, once per round trip (RFC 8985 6.2 step 3).
    pub fn on_dsack(&mut self, una: u64, nxt: u64) {
        if self.dsack_round.is_some_and(|r| una >= r) {
            self.dsack_round = None;
        }
        if self.dsack_round.is_none() {
            self.dsack_round = Some(nxt);
            self.steps = (self.steps + 1).min(u8::MAX as u32);
            self.persist = REO_WND_PERSIST;
        }
    }

    /// A recovery (fast or after a timeout) ended: a grown window shrinks back after
    /// `REO_WND_PERSIST` of them without a D-SACK.
    pub fn on_recovery_end(&mut self) {
        if self.persist > 0 {
            self.persist -= 1;
            if self.persist == 0 {
                self.steps = 1;
            }
        }
    }

    /// The reordering window (RFC 8985 6.2 step 4): `recovering` in fast recovery or after a
    /// timeout, `sacked` segments SACKed, `srtt` the smoothed RTT.
    pub fn reo_wnd(&self, recovering: bool, sacked: u64, srtt: SimTime) -> SimTime {
        if !self.reordering && (recovering || sacked >= super::sack::DUP_THRESH) {
            return SimTime::ZERO;
        }
        let m = self.min_rtt.unwrap_or(SimTime::ZERO);
        SimTime((m.0 / 4).saturating_mul(self.steps as u64).min(srtt.0))
    }

    /// RFC 8985 6.2 step 5 (`RACK_detect_loss`): every outstanding segment not SACKed
    /// (`sacked(start, end)`), sent before the most recently sent delivered one and
    /// outstanding longer than RACK.rtt + `reo_wnd` is lost; `lost(start, end)` marks it.
    /// Segments of a message of `size` bytes up to `max` (snd_max). Returns the wait
    /// until the next segment would be (RACK's reorder timeout), if any is waiting.
    pub fn detect_loss(&mut self, size: u64, max: u64, reo_wnd: SimTime, now: SimTime, sacked: impl Fn(u64, u64) -> bool, mut lost: impl FnMut(u64, u64)) -> Option<SimTime> {
        let last = self.last?;
        let mut wait: Option<SimTime> = None;
        for (i, s) in self.sent.iter_mut().enumerate() {
            let start = (self.base + i as u64) * self.mss;
            if start >= max {
                break;
            }
            let end = (start + self.mss).min(size);
            if s.lost || !sent_after(last, (s.at, end)) {
                // originals leave in sequence order: none above a later one is earlier
                if !s.lost && !s.retx {
                    break;
                }
                continue;
            }
            if sacked(start, end) {
                continue;
            }
            let due = s.at + self.rtt + reo_wnd;
            if due <= now {
                s.lost = true;
                lost(start, end);
            } else {
                let w = due - now;
                wait = Some(wait.map_or(w, |x| x.max(w)));
            }
        }
        wait
    }

    /// A retransmission timeout: every outstanding segment is to be sent again, the marks
    /// of this recovery go with the timer's go-back-N.
    /// (`max`: snd_max.)
    pub fn on_timeout(&mut self, max: u64) {
        for s in &mut self.sent {
            s.lost = false;
        }
        self.probe = None;
        self.undo = None;
        self.loss_until = Some(max);
    }
}

/// RFC 8985's `RACK_sent_after(t1, seq1, t2, seq2)`: (t1, end1) was sent after (t2, end2).
fn sent_after(a: (SimTime, u64), b: (SimTime, u64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn us(n: u64) -> SimTime {
        SimTime::from_us(n)
    }

    /// Ten segments sent 1 us apart from t = 0; those in `delivered` reported at `at`
    /// by ACKs echoing their own send times.
    fn rack_with(delivered: &[u64], at: SimTime) -> Rack {
        let mut r = Rack::new(MSS as u32);
        for k in 0..10 {
            r.on_send(k * MSS, us(k), false);
        }
        r.on_rtt(us(10));
        for &k in delivered {
            r.delivered(k, (k + 1) * MSS, us(k), at);
        }
        r
    }

    fn lost_at(r: &mut Rack, reo: SimTime, now: SimTime, sacked: &[u64]) -> (Vec<u64>, Option<SimTime>) {
        let mut out = vec![];
        let w = r.detect_loss(10 * MSS, 10 * MSS, reo, now, |s, _| sacked.contains(&(s / MSS)), |s, _| out.push(s / MSS));
        (out, w)
    }

    /// Segment 2 missing, 3 and 4 delivered at t = 14 us (RACK.rtt = 10 us): with no
    /// reordering window 2 is lost once 2 + 10 us have passed, i.e. at once; with a 3 us
    /// window it waits until t = 15 us; segments sent after the last delivered one are
    /// never lost by time.
    #[test]
    fn a_segment_is_lost_a_window_after_a_later_one_is_delivered() {
        let mut r = rack_with(&[0, 1, 3, 4], us(14));
        r.on_cum_ack(2 * MSS);
        let (lost, wait) = lost_at(&mut r, us(3), us(14), &[3, 4]);
        assert!(lost.is_empty());
        assert_eq!(wait, Some(us(1)), "2 + 10 + 3 = 15 us");
        let (lost, wait) = lost_at(&mut r, us(3), us(15), &[3, 4]);
        assert_eq!(lost, vec![2]);
        assert_eq!(wait, None);
        let (lost, _) = lost_at(&mut r, us(3), us(100), &[3, 4]);
        assert!(lost.is_empty(), "marked once; 5..9 were sent after segment 4");
        r.on_send(2 * MSS, us(20), true);
        let (lost, _) = lost_at(&mut r, us(3), us(100), &[3, 4]);
        assert!(lost.is_empty(), "the resend was sent after the last delivered segment");
    }

    #[test]
    fn a_late_original_is_reordering_and_the_window_is_zero_until_then() {
        let mut r = rack_with(&[0, 2, 3, 4], us(14));
        assert!(!r.reordering);
        assert_eq!(r.reo_wnd(false, 3, us(12)), SimTime::ZERO, "DupThresh SACKed, no reordering seen");
        assert_eq!(r.reo_wnd(false, 2, us(12)), SimTime(us(10).0 / 4), "min RTT / 4");
        r.delivered(1, 2 * MSS, us(1), us(16));
        assert!(r.reordering, "segment 1, never resent, arrived after 4");
        assert_eq!(r.reo_wnd(true, 3, us(12)), SimTime(us(10).0 / 4));
        r.on_dsack(0, 10 * MSS);
        r.on_dsack(0, 10 * MSS);
        assert_eq!(r.reo_wnd(true, 3, us(12)), SimTime(us(10).0 / 4 * 2), "one step per round trip");
        r.on_dsack(10 * MSS, 12 * MSS);
        assert_eq!(r.reo_wnd(true, 3, us(12)), SimTime(us(10).0 / 4 * 3));
        assert_eq!(r.reo_wnd(true, 3, us(6)), us(6), "never above SRTT");
        for _ in 0..REO_WND_PERSIST {
            r.on_recovery_end();
        }
        assert_eq!(r.reo_wnd(true, 3, us(12)), SimTime(us(10).0 / 4), "back to one step");
    }

    #[test]
    fn an_ambiguous_retransmission_gives_no_rtt() {
        let mut r = rack_with(&[], us(0));
        r.on_send(0, us(30), true);
        // the ACK echoes the original's send time: the original arrived, not the resend
        r.delivered(0, MSS, us(0), us(32));
        assert!(r.last.is_none());
        r.delivered(0, MSS, us(30), us(45));
        assert_eq!(r.last, Some((us(30), MSS)));
        assert_eq!(r.rtt, us(15));
    }
}
