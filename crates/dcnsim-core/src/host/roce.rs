//! RoCEv2 reliable connection as RDMA NICs implement it, under any rate-based congestion
//! control (`RateControl`; DCQCN, Zhu et al., SIGCOMM 2015, is one): the sender is paced
//! at the algorithm's rate, capped to the algorithm's window where it keeps one, and
//! optionally capped to a window of bytes in flight (the "initial window"
//! variant of the HPCC paper, Li et al., SIGCOMM 2019, sec. 5); the receiver
//! accepts only in-order packets (go-back-N): an out-of-order packet is
//! dropped and answered by one NACK carrying the expected sequence number,
//! after which the sender resends from there. A retransmission timeout
//! covers a lost tail.

use super::cc::{AckEvent, PathEcho, RateControl, RateSetup};
use super::cc::dcqcn::DcqcnNp;
use super::pacer::Pacer;
use super::tcp::Segment;
use super::{RateCc, RateCcKind, RateCcParams};
use crate::sim::{bytes_in, SimTime};

/// RoCE parameters shared by every flow (each algorithm's line rate is set per flow).
#[derive(Clone, Debug)]
pub struct RoceParams {
    /// Each rate-based algorithm's own parameters.
    pub cc: RateCcParams,
    /// The receiver's notification point: at most one CNP per flow per this interval.
    pub cnp_interval: SimTime,
    /// Cap on bytes in flight as a time at line rate (seed 004: 15 us, the "initial
    /// window" of HPCC sec. 5), if any.
    pub window: Option<SimTime>,
    pub rto: SimTime,
}

/// Sender (requester) state of one flow, over any rate-based algorithm (`RateCc`, the
/// list's dispatch, in the engine).
#[derive(Clone, Debug)]
pub struct RoceSender<R = RateCc> {
    pub cc: R,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    /// Bytes allowed in flight by the transport, if capped (the algorithm may cap lower).
    pub window: Option<u64>,
    /// Paces the flow at the algorithm's rate.
    pub pacer: Pacer,
    pub rto: SimTime,
    pub rto_deadline: Option<SimTime>,
    pub timer_at: Option<SimTime>,
    pub timer_gen: u32,
}

impl RoceSender<RateCc> {
    /// A new flow's sender running algorithm `cc` at a NIC of `line_rate_bps` on a fabric
    /// whose largest base RTT is `base_rtt`, `mss` payload bytes per packet.
    pub fn new(params: &RoceParams, cc: RateCcKind, line_rate_bps: u64, now: SimTime, base_rtt: SimTime, mss: u32) -> RoceSender {
        RoceSender::with_cc(params, RateCc::build(cc, &params.cc, &RateSetup { line_rate_bps, now, base_rtt, mss }), line_rate_bps)
    }
}

impl<R: RateControl> RoceSender<R> {
    /// A sender over the algorithm state `cc`.
    pub fn with_cc(params: &RoceParams, cc: R, line_rate_bps: u64) -> RoceSender<R> {
        let window = params.window.map(|w| bytes_in(w, line_rate_bps));
        RoceSender {
            cc,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            window,
            pacer: Pacer::default(),
            // never 0: the timer would fire at the same instant forever (see TcpSender::new)
            rto: params.rto.max(SimTime(1)),
            rto_deadline: None,
            timer_at: None,
            timer_gen: 0,
        }
    }

    /// Data left to send and room in the windows, the transport's and the algorithm's
    /// (ignoring the pacer).
    #[inline]
    pub fn has_work(&self, size: u64) -> bool {
        let inflight = self.snd_nxt - self.snd_una;
        self.snd_nxt < size && self.window.is_none_or(|w| inflight < w) && self.cc.window().is_none_or(|w| inflight < w)
    }

    /// Earliest time the pacer allows the next packet, at the current rate.
    pub fn next_allowed(&self) -> SimTime {
        self.pacer.next_allowed(self.cc.rate_bps())
    }

    /// When a flow with work waiting for its pacer should be looked at again: its turn, or
    /// sooner if the algorithm's rate rises by then (never at `now` itself).
    pub fn wake_at(&self, now: SimTime) -> SimTime {
        self.next_allowed().min(self.cc.next_change().max(SimTime(now.0 + 1)))
    }

    /// The next segment if the pacer and window allow it at `now`.
    pub fn next_segment(&mut self, size: u64, mss: u32, header: u32, now: SimTime) -> Option<Segment> {
        self.cc.advance(now);
        if !self.has_work(size) || self.next_allowed() > now {
            return None;
        }
        let seq = self.snd_nxt;
        let len = (size - seq).min(mss as u64);
        self.snd_nxt += len;
        let retx = seq < self.snd_max;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        self.pacer.on_send(now, len as u32 + header);
        self.cc.on_sent(len + header as u64, now);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
        }
        Some(Segment { seq, len: len as u32, retx, ar: false })
    }

    /// Cumulative ACK (echoing the data's send time `ts` and telemetry `int`); returns true
    /// when everything is acknowledged.
    pub fn on_ack(&mut self, ack: u64, ts: SimTime, now: SimTime, size: u64, echo: PathEcho) -> bool {
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            if self.snd_nxt < ack {
                self.snd_nxt = ack;
            }
            self.cc.on_ack(&AckEvent { acked, ece: false, ack, snd_nxt: self.snd_nxt, now, rtt: now - ts, int: echo.int, hops: echo.hops });
            self.rto_deadline = if self.snd_una >= size {
                None
            } else if self.snd_nxt > self.snd_una {
                Some(now + self.rto)
            } else {
                None
            };
        }
        self.snd_una >= size
    }

    /// NACK: the receiver expects `expected`; resend from there (go-back-N).
    pub fn on_nack(&mut self, expected: u64, ts: SimTime, now: SimTime, size: u64, echo: PathEcho) -> bool {
        let done = self.on_ack(expected, ts, now, size, echo);
        // a NACK from before the cumulative point (overtaken by a later ACK on another
        // path) is stale: going back to it would resend acknowledged bytes
        if !done && self.snd_una <= expected && expected < self.snd_nxt {
            self.snd_nxt = expected;
        }
        done
    }

    pub fn on_cnp(&mut self, now: SimTime) {
        self.cc.on_cnp(now);
    }

    /// Retransmission timer expiry: resend everything unacknowledged.
    pub fn on_timeout(&mut self, now: SimTime) -> bool {
        match self.rto_deadline {
            Some(d) if d <= now => {
                self.snd_nxt = self.snd_una;
                self.rto_deadline = Some(now + self.rto);
                true
            }
            _ => false,
        }
    }
}

/// Receiver (responder) state of one flow.
#[derive(Clone, Debug, Default)]
pub struct RoceReceiver {
    pub rcv_nxt: u64,
    /// A NACK for the current gap has been sent.
    nacked: bool,
    pub np: DcqcnNp,
}

/// What the receiver answers to a data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoceReply {
    Ack(u64),
    Nack(u64),
    /// Out of order again before the gap closed: drop silently.
    Nothing,
}

impl RoceReceiver {
    pub fn on_data(&mut self, seq: u64, len: u64) -> RoceReply {
        if seq == self.rcv_nxt {
            self.rcv_nxt += len;
            self.nacked = false;
            RoceReply::Ack(self.rcv_nxt)
        } else if seq < self.rcv_nxt {
            RoceReply::Ack(self.rcv_nxt)
        } else if !self.nacked {
            self.nacked = true;
            RoceReply::Nack(self.rcv_nxt)
        } else {
            RoceReply::Nothing
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::cc::dcqcn::{DcqcnParams, DcqcnSettings};
    use crate::sim::ser_time;

    fn settings(rp: DcqcnParams, increase_of_line: (Option<f64>, Option<f64>)) -> RoceParams {
        RoceParams {
            cc: RateCcParams { dcqcn: DcqcnSettings { rp, increase_of_line }, ..Default::default() },
            cnp_interval: SimTime::from_us(4),
            window: None,
            rto: SimTime::from_ms(1),
        }
    }

    fn params() -> RoceParams {
        settings(DcqcnParams::seed004(100_000_000_000), (None, None))
    }

    fn dcqcn(s: &RoceSender) -> &DcqcnParams {
        &s.cc.dcqcn().unwrap().p
    }

    #[test]
    fn increase_steps_as_fractions_scale_with_each_flows_line_rate() {
        let p = settings(DcqcnParams::seed004(100_000_000_000), (Some(0.0125), Some(0.025)));
        for line in [100_000_000_000u64, 25_000_000_000] {
            let s = RoceSender::new(&p, RateCcKind::Dcqcn, line, SimTime::ZERO, SimTime::from_us(10), 1000);
            assert_eq!((dcqcn(&s).rate_ai_bps, dcqcn(&s).rate_hai_bps), (line / 80, line / 40), "{line}");
        }
        // without fractions the rates stand as given, whatever the flow's line rate
        let p = settings(DcqcnParams { rate_ai_bps: 12_500_000, rate_hai_bps: 25_000_000, ..DcqcnParams::seed004(100_000_000_000) }, (None, None));
        let s = RoceSender::new(&p, RateCcKind::Dcqcn, 25_000_000_000, SimTime::ZERO, SimTime::from_us(10), 1000);
        assert_eq!((dcqcn(&s).rate_ai_bps, dcqcn(&s).rate_hai_bps), (12_500_000, 25_000_000));
    }

    /// Go-back-N on a NACK, but not on a stale one: with packets sprayed over several paths
    /// a NACK can arrive after an ACK beyond it, and going back to it would put the next
    /// byte to send below the cumulative point (the bytes in flight underflowed).
    #[test]
    fn a_nack_overtaken_by_a_later_ack_is_ignored() {
        let mut s = RoceSender::new(&params(), RateCcKind::Dcqcn, 100_000_000_000, SimTime::ZERO, SimTime::from_us(10), 1000);
        let mut now = SimTime::ZERO;
        while s.snd_nxt < 5_000 {
            now = now.max(s.next_allowed());
            s.next_segment(10_000, 1000, 48, now).unwrap();
        }
        let echo = PathEcho::default();
        assert!(!s.on_nack(2_000, now, now, 10_000, echo));
        assert_eq!((s.snd_una, s.snd_nxt), (2_000, 2_000), "go back to the byte the receiver expects");
        while s.snd_nxt < 5_000 {
            now = now.max(s.next_allowed());
            s.next_segment(10_000, 1000, 48, now).unwrap();
        }
        assert!(!s.on_ack(4_000, now, now, 10_000, echo));
        assert!(!s.on_nack(3_000, now, now, 10_000, echo));
        assert_eq!((s.snd_una, s.snd_nxt), (4_000, 5_000), "a NACK below the cumulative point changes nothing");
        assert!(s.has_work(10_000));
    }

    #[test]
    fn paced_at_the_dcqcn_rate() {
        let mut s = RoceSender::new(&params(), RateCcKind::Dcqcn, 100_000_000_000, SimTime::ZERO, SimTime::from_us(10), 1000);
        let t0 = SimTime::ZERO;
        assert!(s.next_segment(1_000_000, 1000, 48, t0).is_some());
        // at line rate the next packet may go when this one is serialized
        assert_eq!(s.next_allowed(), ser_time(1048, 100_000_000_000));
        s.on_cnp(SimTime(1));
        // after the first CNP (alpha = 1) the rate halves: twice the gap
        assert_eq!(s.next_allowed(), ser_time(1048, 50_000_000_000));
        assert!(s.next_segment(1_000_000, 1000, 48, SimTime(100)).is_none());
    }

    #[test]
    fn window_caps_bytes_in_flight() {
        let mut p = params();
        p.window = Some(SimTime::from_ns(200)); // 2500 B at 100G
        let mut s = RoceSender::new(&p, RateCcKind::Dcqcn, 100_000_000_000, SimTime::ZERO, SimTime::from_us(10), 1000);
        assert_eq!(s.window, Some(2500));
        let mut t = SimTime::ZERO;
        let mut sent = 0;
        while let Some(seg) = s.next_segment(1_000_000, 1000, 48, t) {
            sent += seg.len;
            t = s.next_allowed();
        }
        assert_eq!(sent, 3000);
        s.on_ack(2000, SimTime::ZERO, t, 1_000_000, PathEcho::default());
        assert!(s.has_work(1_000_000));
    }

    /// A zero RTO from a config built in code (scenarios refuse it): the timer still
    /// re-arms later than now.
    #[test]
    fn a_zero_rto_never_rearms_at_the_same_instant() {
        let mut p = params();
        p.rto = SimTime::ZERO;
        let mut s = RoceSender::new(&p, RateCcKind::Dcqcn, 100_000_000_000, SimTime::ZERO, SimTime::from_us(10), 1000);
        s.next_segment(10_000, 1000, 48, SimTime::ZERO).unwrap();
        let now = SimTime::from_us(1);
        s.rto_deadline = Some(now);
        assert!(s.on_timeout(now));
        assert!(s.rto_deadline.unwrap() > now);
    }

    #[test]
    fn go_back_n() {
        let mut r = RoceReceiver::default();
        assert_eq!(r.on_data(0, 1000), RoceReply::Ack(1000));
        assert_eq!(r.on_data(2000, 1000), RoceReply::Nack(1000));
        assert_eq!(r.on_data(3000, 1000), RoceReply::Nothing);
        assert_eq!(r.on_data(1000, 1000), RoceReply::Ack(2000));
        let mut s = RoceSender::new(&params(), RateCcKind::Dcqcn, 100_000_000_000, SimTime::ZERO, SimTime::from_us(10), 1000);
        let mut t = SimTime::ZERO;
        for _ in 0..4 {
            s.next_segment(10_000, 1000, 48, t).unwrap();
            t = s.next_allowed();
        }
        s.on_nack(1000, SimTime::ZERO, t, 10_000, PathEcho::default());
        let seg = s.next_segment(10_000, 1000, 48, t).unwrap();
        assert_eq!((seg.seq, seg.retx), (1000, true));
    }
}
