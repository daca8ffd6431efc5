//! RoCEv2 reliable connection with DCQCN rate control (Zhu et al., SIGCOMM
//! 2015) as RDMA NICs implement it: the sender is paced at the DCQCN rate,
//! optionally capped to a window of bytes in flight (the "initial window"
//! variant of the HPCC paper, Li et al., SIGCOMM 2019, sec. 5); the receiver
//! accepts only in-order packets (go-back-N): an out-of-order packet is
//! dropped and answered by one NACK carrying the expected sequence number,
//! after which the sender resends from there. A retransmission timeout
//! covers a lost tail.

use super::dcqcn::{DcqcnNp, DcqcnParams, DcqcnRp};
use super::pacer::Pacer;
use super::tcp::Segment;
use crate::sim::{bytes_in, SimTime};

/// RoCE parameters shared by every flow (the DCQCN line rate is set per flow).
#[derive(Clone, Debug)]
pub struct RoceParams {
    pub dcqcn: DcqcnParams,
    /// NP: at most one CNP per flow per this interval.
    pub cnp_interval: SimTime,
    /// Cap on bytes in flight as a time at line rate (seed 004: 15 us), if any.
    pub window: Option<SimTime>,
    pub rto: SimTime,
    /// R_AI and R_HAI as fractions of each flow's line rate, replacing `dcqcn.rate_ai_bps`
    /// and `dcqcn.rate_hai_bps` where given: seed 004 writes "AI: 0.0125" and "Hyper AI:
    /// 0.025" without a unit, and one reading is a fraction of the NIC's rate.
    pub increase_of_line: (Option<f64>, Option<f64>),
}

/// Sender (requester) state of one flow.
#[derive(Clone, Debug)]
pub struct RoceSender {
    pub p: DcqcnParams,
    pub rp: DcqcnRp,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    /// Bytes allowed in flight, if capped.
    pub window: Option<u64>,
    /// Paces the flow at the DCQCN rate.
    pub pacer: Pacer,
    pub rto: SimTime,
    pub rto_deadline: Option<SimTime>,
    pub timer_at: Option<SimTime>,
    pub timer_gen: u32,
}

impl RoceSender {
    pub fn new(params: &RoceParams, line_rate_bps: u64, now: SimTime) -> RoceSender {
        let mut p = params.dcqcn.clone();
        p.line_rate_bps = line_rate_bps;
        let of_line = |f: f64| (f * line_rate_bps as f64).round() as u64;
        if let Some(f) = params.increase_of_line.0 {
            p.rate_ai_bps = of_line(f);
        }
        if let Some(f) = params.increase_of_line.1 {
            p.rate_hai_bps = of_line(f);
        }
        let window = params.window.map(|w| bytes_in(w, line_rate_bps));
        RoceSender {
            rp: DcqcnRp::new(&p, now),
            p,
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

    /// Data left to send and room in the window (ignoring the pacer).
    pub fn has_work(&self, size: u64) -> bool {
        self.snd_nxt < size && self.window.is_none_or(|w| self.snd_nxt - self.snd_una < w)
    }

    /// Earliest time the pacer allows the next packet, at the current rate.
    pub fn next_allowed(&self) -> SimTime {
        self.pacer.next_allowed(self.rp.rate_bps())
    }

    /// The next segment if the pacer and window allow it at `now`.
    pub fn next_segment(&mut self, size: u64, mss: u32, header: u32, now: SimTime) -> Option<Segment> {
        self.rp.advance(&self.p, now);
        if !self.has_work(size) || self.next_allowed() > now {
            return None;
        }
        let seq = self.snd_nxt;
        let len = (size - seq).min(mss as u64);
        self.snd_nxt += len;
        let retx = seq < self.snd_max;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        self.pacer.on_send(now, len as u32 + header);
        self.rp.on_sent(&self.p, len + header as u64, now);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto);
        }
        Some(Segment { seq, len: len as u32, retx })
    }

    /// Cumulative ACK; returns true when everything is acknowledged.
    pub fn on_ack(&mut self, ack: u64, now: SimTime, size: u64) -> bool {
        if ack > self.snd_una {
            self.snd_una = ack;
            if self.snd_nxt < ack {
                self.snd_nxt = ack;
            }
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
    pub fn on_nack(&mut self, expected: u64, now: SimTime, size: u64) -> bool {
        let done = self.on_ack(expected, now, size);
        if !done && expected < self.snd_nxt {
            self.snd_nxt = expected;
        }
        done
    }

    pub fn on_cnp(&mut self, now: SimTime) {
        self.rp.on_cnp(&self.p, now);
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
    use crate::sim::ser_time;

    fn params() -> RoceParams {
        RoceParams { dcqcn: DcqcnParams::seed004(100_000_000_000), cnp_interval: SimTime::from_us(4), window: None, rto: SimTime::from_ms(1), increase_of_line: (None, None) }
    }

    #[test]
    fn increase_steps_as_fractions_scale_with_each_flows_line_rate() {
        let p = RoceParams { increase_of_line: (Some(0.0125), Some(0.025)), ..params() };
        for line in [100_000_000_000u64, 25_000_000_000] {
            let s = RoceSender::new(&p, line, SimTime::ZERO);
            assert_eq!((s.p.rate_ai_bps, s.p.rate_hai_bps), (line / 80, line / 40), "{line}");
        }
        // without fractions the rates stand as given, whatever the flow's line rate
        let p = RoceParams { dcqcn: DcqcnParams { rate_ai_bps: 12_500_000, rate_hai_bps: 25_000_000, ..DcqcnParams::seed004(100_000_000_000) }, ..params() };
        let s = RoceSender::new(&p, 25_000_000_000, SimTime::ZERO);
        assert_eq!((s.p.rate_ai_bps, s.p.rate_hai_bps), (12_500_000, 25_000_000));
    }

    #[test]
    fn paced_at_the_dcqcn_rate() {
        let mut s = RoceSender::new(&params(), 100_000_000_000, SimTime::ZERO);
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
        let mut s = RoceSender::new(&p, 100_000_000_000, SimTime::ZERO);
        assert_eq!(s.window, Some(2500));
        let mut t = SimTime::ZERO;
        let mut sent = 0;
        while let Some(seg) = s.next_segment(1_000_000, 1000, 48, t) {
            sent += seg.len;
            t = s.next_allowed();
        }
        assert_eq!(sent, 3000);
        s.on_ack(2000, t, 1_000_000);
        assert!(s.has_work(1_000_000));
    }

    /// A zero RTO from a config built in code (scenarios refuse it): the timer still
    /// re-arms later than now.
    #[test]
    fn a_zero_rto_never_rearms_at_the_same_instant() {
        let mut p = params();
        p.rto = SimTime::ZERO;
        let mut s = RoceSender::new(&p, 100_000_000_000, SimTime::ZERO);
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
        let mut s = RoceSender::new(&params(), 100_000_000_000, SimTime::ZERO);
        let mut t = SimTime::ZERO;
        for _ in 0..4 {
            s.next_segment(10_000, 1000, 48, t).unwrap();
            t = s.next_allowed();
        }
        s.on_nack(1000, t, 10_000);
        let seg = s.next_segment(10_000, 1000, 48, t).unwrap();
        assert_eq!((seg.seq, seg.retx), (1000, true));
    }
}
