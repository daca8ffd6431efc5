//! Delivery-rate sampling, as Linux's TCP keeps it for a congestion control that owns the
//! window (net/ipv4/tcp_rate.c; Cheng et al., draft-cheng-iccrg-delivery-rate-estimation):
//! each segment sent remembers how much had been delivered by then and when; the ACK that
//! reports it delivered turns the difference into a sample,
//!
//!   delivered = delivered_now - delivered_at_send
//!   interval  = max(send_elapsed, ack_elapsed)
//!
//! with send_elapsed the time between the first and this segment's send of the flight it
//! belongs to and ack_elapsed the time since the delivery the segment saw when it left. A
//! sample over less than the connection's minimum RTT is discarded (`tcp_rate_gen`), and
//! one taken while the application had nothing to send is marked application-limited.
//!
//! A connection with selective acknowledgements reports each segment delivered when it is
//! first SACKed or acknowledged (`on_sack`). One without (`transport.sack = false`) counts
//! as Linux does for such a connection (`tcp_add_reno_sack`, `tcp_remove_reno_sacks`):
//! each duplicate ACK counts one segment delivered and out of
//! the network (`sacked`), and the cumulative ACK that later covers it counts only the
//! rest. Unlike Linux without SACK (`tcp_reset_reno_sack`), the delivered count keeps them
//! across a timeout: there the cumulative ACK that fills the hole after go-back-N would
//! count the out-of-order data a second time and its sample would show a multiple of the
//! link rate, a burst Linux's SACK (which every Linux connection negotiates) never sees.
//! Counts are in bytes (Linux's are packets).

use crate::sim::SimTime;
use std::collections::VecDeque;

/// What the connection knew when one segment left.
#[derive(Clone, Copy, Debug)]
struct TxRecord {
    /// The segment's end (sequence number past its last byte).
    end: u64,
    sent: SimTime,
    delivered: u64,
    delivered_at: SimTime,
    first_tx: SimTime,
    app_limited: bool,
    /// Reported delivered by a selective acknowledgement: it gave its sample then.
    sacked: bool,
}

/// One connection's delivery counters and the record of each segment in flight (Linux's
/// `tcp_sock` rate fields and `tcp_skb_cb.tx`).
#[derive(Clone, Debug, Default)]
pub struct DeliveryRate {
    /// Bytes delivered since the connection began (Linux's `tp->delivered`).
    pub delivered: u64,
    delivered_at: SimTime,
    first_tx: SimTime,
    /// Non-zero while application-limited: the sample is so marked until `delivered` passes it.
    app_limited: u64,
    /// Sent segments not yet cumulatively acknowledged, in sequence order.
    records: VecDeque<TxRecord>,
    /// Bytes the duplicate ACKs since the last cumulative advance reported delivered and
    /// the sender counts out of the network (Linux's `sacked_out`; a timeout clears it).
    pub sacked: u64,
    /// Bytes the duplicate ACKs counted delivered that no cumulative ACK has covered yet
    /// (kept across a timeout, so the cumulative ACK that fills the hole afterwards does
    /// not count them a second time, as SACK would not).
    ooo: u64,
    /// Bytes marked lost since the connection began (Linux's `tp->lost`).
    pub lost: u64,
    /// Bytes newly marked lost since the last ACK's sample.
    pending_losses: u64,
    /// The connection's smallest RTT sample (Linux's `tcp_min_rtt`).
    min_rtt: Option<SimTime>,
}

/// One ACK's sample (Linux's `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    /// Bytes this ACK reported delivered, cumulatively or by a duplicate ACK (`acked_sacked`).
    pub acked: u64,
    /// Bytes delivered over `interval`; meaningful when `interval` is Some.
    pub delivered: u64,
    /// The sample's interval; None: no valid sample (a duplicate ACK, nothing timed, or an
    /// interval shorter than the minimum RTT).
    pub interval: Option<SimTime>,
    /// The connection's `delivered` when the newest segment this ACK covers was sent: a
    /// packet-timed round ends when this reaches the `delivered` of the round's start.
    pub prior_delivered: u64,
    /// Whether that segment left while the application had nothing more to send.
    pub app_limited: bool,
    /// Bytes marked lost since the previous ACK.
    pub losses: u64,
    /// Bytes in the network before this ACK (Linux's `prior_in_flight`).
    pub prior_in_flight: u64,
    /// The ACK's RTT sample (none for a duplicate ACK).
    pub rtt: Option<SimTime>,
}

impl DeliveryRate {
    /// A segment ending at `end` leaves at `now` with `outstanding` bytes unacknowledged
    /// before it (Linux `tcp_rate_skb_sent`; a retransmission refreshes its segment's record).
    pub fn on_send(&mut self, end: u64, now: SimTime, outstanding: u64) {
        if outstanding == 0 {
            // a flight starting from nothing in the network times from here
            self.first_tx = now;
            self.delivered_at = now;
        }
        let rec = TxRecord { end, sent: now, delivered: self.delivered, delivered_at: self.delivered_at, first_tx: self.first_tx, app_limited: self.app_limited != 0, sacked: false };
        match self.records.back() {
            Some(last) if last.end >= end => {
                if let Ok(i) = self.records.binary_search_by_key(&end, |r| r.end) {
                    self.records[i] = rec;
                }
            }
            _ => self.records.push_back(rec),
        }
    }

    /// The application has nothing more to send with `pipe` bytes in the network (Linux
    /// `tcp_rate_check_app_limited`): samples until that much more is delivered are marked.
    pub fn app_limited_now(&mut self, pipe: u64) {
        self.app_limited = (self.delivered + pipe).max(1);
    }

    /// Whether the sender is application-limited now.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// `bytes` more are taken as lost (a fast retransmission's segment, a timeout's flight).
    pub fn mark_lost(&mut self, bytes: u64) {
        self.lost += bytes;
        self.pending_losses += bytes;
    }

    /// Bytes in the network of `outstanding` unacknowledged ones (Linux's
    /// `tcp_packets_in_flight` without SACK: the duplicate-ACKed ones have left).
    pub fn pipe(&self, outstanding: u64) -> u64 {
        outstanding.saturating_sub(self.sacked)
    }

    /// A retransmission timeout: every segment in flight is lost and the duplicate-ACK
    /// count restarts (Linux `tcp_enter_loss`, `tcp_reset_reno_sack`).
    pub fn on_timeout(&mut self, outstanding: u64) {
        self.mark_lost(outstanding.saturating_sub(self.sacked));
        self.sacked = 0;
    }

    /// A duplicate ACK with `outstanding` bytes unacknowledged: one more segment of `mss`
    /// delivered out of order; the sample has no interval (nothing is known delivered).
    pub fn on_dupack(&mut self, mss: u64, outstanding: u64, now: SimTime) -> RateSample {
        let prior_in_flight = self.pipe(outstanding);
        // at least one segment stays unreported: the hole (Linux `tcp_limit_reno_sacked`)
        let add = mss.min(outstanding.saturating_sub(mss).saturating_sub(self.sacked));
        self.sacked += add;
        self.ooo += add;
        self.delivered += add;
        if add > 0 {
            self.delivered_at = now;
        }
        self.finish(RateSample { acked: add, prior_in_flight, ..Default::default() })
    }

    /// A cumulative ACK to `ack` that newly acknowledges `acked` bytes, `outstanding`
    /// unacknowledged before it (`tcp_clean_rtx_queue`, `tcp_rate_skb_delivered`,
    /// `tcp_rate_gen`).
    pub fn on_ack(&mut self, ack: u64, acked: u64, mss: u64, outstanding: u64, now: SimTime, rtt: SimTime) -> RateSample {
        let prior_in_flight = self.pipe(outstanding);
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        // the segments the duplicate ACKs counted are not counted again
        let newly = acked.saturating_sub(self.ooo).max(acked.min(mss));
        self.ooo -= self.ooo.min(acked.saturating_sub(mss));
        self.sacked -= self.sacked.min(acked.saturating_sub(mss));
        self.delivered += newly;
        self.delivered_at = now;
        let mut newest: Option<TxRecord> = None;
        while let Some(r) = self.records.front() {
            if r.end > ack {
                break;
            }
            let r = self.records.pop_front().unwrap();
            if newest.is_none_or(|n| r.delivered >= n.delivered) {
                newest = Some(r);
            }
        }
        let mut rs = RateSample { acked: newly, prior_in_flight, rtt: Some(rtt), ..Default::default() };
        self.sample(&mut rs, newest, now);
        self.finish(rs)
    }

    /// An ACK of a connection with selective acknowledgements: cumulative point `ack`,
    /// `delivered` bytes newly reported delivered, cumulatively or by its SACK `blocks`,
    /// `prior_in_flight` in the network before it, `rtt` its RTT sample if it moved the
    /// cumulative point. The sample is of the newest segment it reports, SACKed ones
    /// included, each segment once (Linux `tcp_sacktag_one` and `tcp_clean_rtx_queue`, both
    /// through `tcp_rate_skb_delivered`).
    pub fn on_sack(&mut self, ack: u64, delivered: u64, blocks: &[(u64, u64)], prior_in_flight: u64, now: SimTime, rtt: Option<SimTime>) -> RateSample {
        if let Some(rtt) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        self.delivered += delivered;
        if delivered > 0 {
            self.delivered_at = now;
        }
        let newer = |r: &TxRecord, n: &Option<TxRecord>| n.is_none_or(|n| r.delivered >= n.delivered);
        let mut newest: Option<TxRecord> = None;
        while let Some(r) = self.records.front() {
            if r.end > ack {
                break;
            }
            let r = self.records.pop_front().unwrap();
            if !r.sacked && newer(&r, &newest) {
                newest = Some(r);
            }
        }
        for &(s, e) in blocks {
            let i = self.records.partition_point(|r| r.end <= s);
            for r in self.records.range_mut(i..) {
                if r.end > e {
                    break;
                }
                if !r.sacked {
                    r.sacked = true;
                    if newer(r, &newest) {
                        newest = Some(*r);
                    }
                }
            }
        }
        let mut rs = RateSample { acked: delivered, prior_in_flight, rtt, ..Default::default() };
        self.sample(&mut rs, newest, now);
        self.finish(rs)
    }

    /// The sample of the newest segment an ACK reports delivered (`tcp_rate_gen`).
    fn sample(&mut self, rs: &mut RateSample, newest: Option<TxRecord>, now: SimTime) {
        if let Some(r) = newest {
            rs.prior_delivered = r.delivered;
            rs.app_limited = r.app_limited;
            // the next sample's send interval starts at this segment's send
            self.first_tx = r.sent;
            let snd = r.sent - r.first_tx;
            let ack_elapsed = now - r.delivered_at;
            let interval = snd.max(ack_elapsed);
            rs.delivered = self.delivered - r.delivered;
            if self.min_rtt.is_none_or(|m| interval >= m) {
                rs.interval = Some(interval);
            }
        }
    }

    fn finish(&mut self, rs: RateSample) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        rs
    }

    /// Bytes marked lost since the last call: an ACK's `losses`, taken once the sender has
    /// acted on the ACK (a fast retransmission it triggers counts in its own sample).
    pub fn take_losses(&mut self) -> u64 {
        std::mem::take(&mut self.pending_losses)
    }

    /// The connection carries a new message with sequence numbers from 0: the counters go
    /// on, the records of the old numbering go.
    pub fn restart(&mut self) {
        self.records.clear();
        self.sacked = 0;
        self.ooo = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(x: u64) -> SimTime {
        SimTime::from_us(x)
    }

    /// Ten 1,000 B segments sent back to back from idle, each ACKed 10 us after its send:
    /// the samples measure the 1,000 B per us of the ACK clock, and the first one (over
    /// less than the minimum RTT) is discarded.
    #[test]
    fn samples_measure_the_ack_clock() {
        let mut d = DeliveryRate::default();
        for i in 0..10 {
            d.on_send((i + 1) * 1000, us(i), i * 1000);
        }
        let mut rates = vec![];
        for i in 0..10u64 {
            let rs = d.on_ack((i + 1) * 1000, 1000, 1000, (10 - i) * 1000, us(10 + i), us(10));
            assert_eq!(rs.acked, 1000);
            assert_eq!(rs.prior_delivered, 0);
            if let Some(iv) = rs.interval {
                rates.push(rs.delivered as f64 / (iv.0 as f64 * 1e-12));
            }
        }
        // intervals: max(send i us, ack 10 + i us) = 10 + i; delivered (i + 1) x 1000
        assert_eq!(rates.len(), 10);
        assert!((rates[9] - 10_000.0 / 19e-6).abs() < 1.0, "{rates:?}");
        assert_eq!(d.delivered, 10_000);
    }

    /// Duplicate ACKs count a segment each (all but the hole), and the cumulative ACK
    /// after the retransmission counts only what they did not; the pipe excludes them.
    #[test]
    fn duplicate_acks_count_once() {
        let mut d = DeliveryRate::default();
        for i in 0..5 {
            d.on_send((i + 1) * 1000, us(i), i * 1000);
        }
        for k in 0..6 {
            let rs = d.on_dupack(1000, 5000, us(10 + k));
            assert!(rs.interval.is_none());
        }
        assert_eq!(d.sacked, 4000, "the hole stays unreported");
        assert_eq!(d.pipe(5000), 1000);
        d.mark_lost(1000);
        d.on_send(1000, us(20), 5000);
        let rs = d.on_ack(5000, 5000, 1000, 5000, us(30), us(10));
        assert_eq!(rs.acked, 1000);
        assert_eq!(d.take_losses(), 1000);
        assert_eq!(d.delivered, 5000);
        assert_eq!(d.sacked, 0);
    }

    /// A segment sent while application-limited marks its sample, until the delivered
    /// count passes the mark.
    #[test]
    fn application_limited_samples_are_marked() {
        let mut d = DeliveryRate::default();
        d.on_send(1000, us(0), 0);
        d.app_limited_now(1000);
        d.on_send(2000, us(1), 1000);
        assert!(!d.on_ack(1000, 1000, 1000, 2000, us(10), us(10)).app_limited);
        assert!(d.on_ack(2000, 1000, 1000, 1000, us(11), us(10)).app_limited);
        d.on_send(3000, us(12), 0);
        assert!(!d.on_ack(3000, 1000, 1000, 1000, us(22), us(10)).app_limited);
    }
}
