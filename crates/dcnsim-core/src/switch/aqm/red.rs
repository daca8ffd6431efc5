//! RED as Linux `tc red` configures and runs it (Floyd & Jacobson, "Random Early Detection
//! gateways for congestion avoidance", IEEE/ACM ToN 1(4), 1993; net/sched/sch_red.c and
//! include/net/red.h; tc/tc_red.c), so that seed 002's line
//! `tc qdisc add dev eth2 root red limit 1600000 min 120000 max 360000 avpkt 1000 burst 220
//! ecn bandwidth 40Mbit` is a scenario: `switch.aqm = { kind = "red", limit = "1600000B",
//! min = "120000B", max = "360000B", avpkt = "1000B", burst = 220, ecn = true,
//! bandwidth = "40Mbps" }`.
//!
//! * The average queue (bytes) is an EWMA updated at every arrival, avg += W (backlog - avg),
//!   with W = 2^-Wlog and Wlog the smallest with burst + 1 - min / avpkt <= (1 - (1 - W)^burst)
//!   / W (tc's `tc_red_eval_ewma`; the seed's line gives Wlog 7).
//! * After the queue has been empty for a time, the first arrival decays the average as if
//!   `idle / (avpkt x 8 / bandwidth)` empty packets had arrived: avg (1 - W)^m (tc's
//!   idle-damping table approximates this exponential; it is computed exactly here).
//! * avg < min: pass. min <= avg < max: RED's marking probability p_b = probability (avg -
//!   min) / (max - min), spread uniformly between marks as sch_red does it: a packet is
//!   selected once count x p_b exceeds a uniform draw made after the last selection.
//!   avg >= max: every packet is selected. A selected packet is CE-marked when `ecn` is on
//!   and it is ECN-capable, else dropped (Linux's behaviour without `harddrop`).
//! * `limit`: the backlog at which the queue tail-drops (in addition to the switch's buffer),
//!   after RED has averaged and decided, as sch_red's child fifo does.

use crate::switch::pipeline::{AqmAction, Arrival, Ctx};
use crate::net::DropReason;
use crate::net::PortId;
use crate::sim::{ser_time, SimTime};
use rand::Rng as _;

/// `tc red`'s defaults: marking probability at `max`, average packet size, drop (not mark).
pub const DEFAULT_PROBABILITY: f64 = 0.02;
pub const DEFAULT_AVPKT: u64 = 1000;
pub const DEFAULT_ECN: bool = false;

/// RED parameters as `tc red` takes them (bytes unless said).
#[derive(Clone, Debug)]
pub struct RedParams {
    pub limit: Option<u64>,
    pub min: u64,
    pub max: u64,
    pub avpkt: u64,
    /// Packets.
    pub burst: u32,
    pub probability: f64,
    /// For the idle decay; `None`: the port's rate.
    pub bandwidth_bps: Option<u64>,
    pub ecn: bool,
}

impl RedParams {
    /// tc's `tc_red_eval_ewma`: the smallest Wlog whose EWMA lets `burst` back-to-back packets
    /// of `avpkt` through an empty queue before the average reaches `min`. None when the
    /// burst is too small for the threshold (tc refuses it too).
    pub fn wlog(&self) -> Option<u32> {
        let a = self.burst_room();
        if a < 1.0 {
            return None;
        }
        let mut w = 0.5f64;
        for wlog in 1..32 {
            if a <= (1.0 - (1.0 - w).powi(self.burst as i32)) / w {
                return Some(wlog);
            }
            w /= 2.0;
        }
        None
    }
    /// tc's `a` in `tc_red_eval_ewma`: burst + 1 - min / avpkt.
    fn burst_room(&self) -> f64 {
        self.burst as f64 + 1.0 - self.min as f64 / self.avpkt as f64
    }
    /// Whether the burst reaches min / avpkt, tc's first test (`a >= 1`); a burst that does
    /// and still finds no Wlog has a min not above avpkt.
    pub fn burst_fits(&self) -> bool {
        self.burst_room() >= 1.0
    }
}

/// RED's state of one egress queue.
#[derive(Clone, Debug, Default)]
struct QueueRed {
    avg: f64,
    /// Packets since the last selection while min <= avg < max; None outside that band.
    count: Option<u64>,
    draw: f64,
    /// When the queue last went empty.
    idle_since: Option<SimTime>,
}

/// RED on every switch egress queue.
#[derive(Clone, Debug)]
pub struct Red {
    pub p: RedParams,
    w: f64,
    queues: usize,
    state: Vec<QueueRed>,
}

impl Red {
    pub fn new(p: RedParams, ports: usize, queues: usize) -> Red {
        let w = 0.5f64.powi(p.wlog().expect("validated") as i32);
        Red { p, w, queues, state: vec![QueueRed { idle_since: Some(SimTime::ZERO), ..Default::default() }; ports * queues] }
    }

    /// The EWMA weight W.
    pub fn weight(&self) -> f64 {
        self.w
    }

    /// The average queue of (port, queue) now (tests).
    pub fn avg(&self, port: PortId, queue: usize) -> f64 {
        self.state[port as usize * self.queues + queue].avg
    }

    pub fn on_arrival(&mut self, a: &Arrival, ect: bool, cx: &mut Ctx) -> AqmAction {
        let backlog = cx.queue_bytes(a.out, a.queue);
        let rate = self.p.bandwidth_bps.unwrap_or(cx.topo.ports[a.out as usize].rate_bps);
        let (w, p) = (self.w, &self.p);
        let s = &mut self.state[a.out as usize * self.queues + a.queue];
        match s.idle_since.take() {
            Some(t) if backlog == 0 => {
                let m = (cx.now - t).0 as f64 / ser_time(p.avpkt, rate).0.max(1) as f64;
                s.avg *= (1.0 - w).powf(m);
            }
            _ => s.avg += w * (backlog as f64 - s.avg),
        }
        let selected = if s.avg < p.min as f64 {
            s.count = None;
            false
        } else if s.avg >= p.max as f64 {
            s.count = None;
            true
        } else {
            let rng = &mut cx.switches[a.sw as usize].rng;
            let pb = p.probability * (s.avg - p.min as f64) / (p.max - p.min) as f64;
            match s.count {
                None => {
                    s.count = Some(0);
                    s.draw = rng.gen::<f64>();
                    false
                }
                Some(c) => {
                    let c = c + 1;
                    if c as f64 * pb > s.draw {
                        s.count = Some(0);
                        s.draw = rng.gen::<f64>();
                        true
                    } else {
                        s.count = Some(c);
                        false
                    }
                }
            }
        };
        let action = match (selected, p.ecn && ect, a.lossless) {
            (false, _, _) => AqmAction::Pass,
            (true, true, _) => AqmAction::Mark,
            (true, false, true) => AqmAction::Pass,
            (true, false, false) => AqmAction::Drop(DropReason::Aqm),
        };
        // sch_red's child fifo enforces the limit after RED has decided (and averaged)
        match action {
            AqmAction::Drop(_) => action,
            _ if p.limit.is_some_and(|l| backlog + a.size > l) => AqmAction::Drop(DropReason::BufferFull),
            _ => action,
        }
    }

    /// A packet left (port, queue), which now holds `left` bytes: an idle period starts when
    /// it is empty.
    pub fn on_dequeue(&mut self, port: PortId, queue: usize, left: u64, now: SimTime) {
        if left == 0 {
            self.state[port as usize * self.queues + queue].idle_since = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::bench::Bench;

    fn seed002() -> RedParams {
        RedParams { limit: Some(1_600_000), min: 120_000, max: 360_000, avpkt: 1000, burst: 220, probability: DEFAULT_PROBABILITY, bandwidth_bps: Some(40_000_000), ecn: true }
    }

    /// tc's EWMA weight for the seed's line: a = 220 + 1 - 120 = 101; W = 1/64 lets
    /// (1 - (63/64)^220) x 64 = 62.0 packets through, W = 1/128 105.2: Wlog 7.
    #[test]
    fn seed_line_gives_wlog_7() {
        assert_eq!(seed002().wlog(), Some(7));
        assert_eq!(RedParams { burst: 100, ..seed002() }.wlog(), None, "burst below min / avpkt");
    }

    fn red(p: RedParams) -> (Bench, Red, PortId, PortId) {
        let b = Bench::new();
        let (inp, out) = (b.port("left", "h0"), b.port("left", "right"));
        let r = Red::new(p, b.topo.ports.len(), 1);
        (b, r, inp, out)
    }

    /// The average follows avg += W (backlog - avg) at each arrival: after n arrivals to a
    /// queue held at B it is B (1 - (1 - W)^n); once the queue has been empty for k packet
    /// times of avpkt at `bandwidth`, the next arrival finds it decayed by (1 - W)^k.
    #[test]
    fn average_is_tc_ewma_with_idle_decay() {
        let (mut b, mut r, inp, out) = red(seed002());
        let w = 1.0 / 128.0;
        assert_eq!(r.weight(), w);
        let mut now = SimTime::from_us(1);
        for _ in 0..100 {
            let a = b.data(1, 0, 2, inp, out, 50_000);
            r.on_arrival(&a, true, &mut b.cx(now));
        }
        let expect = 50_000.0 * (1.0 - (1.0f64 - w).powi(100));
        assert!((r.avg(out, 0) - expect).abs() < 1e-6, "{} vs {expect}", r.avg(out, 0));
        // empty from 1 ms on; 10 x 200 us (1000 B at 40 Mbit/s) later a packet arrives
        r.on_dequeue(out, 0, 0, SimTime::from_ms(1));
        now = SimTime::from_ms(3);
        let a = b.data(1, 0, 2, inp, out, 0);
        r.on_arrival(&a, true, &mut b.cx(now));
        assert!((r.avg(out, 0) - expect * (1.0 - w).powi(10)).abs() < 1e-6);
    }

    /// With the average held between min and max, RED selects packets spaced uniformly on
    /// 1..1/p_b (count x p_b against a fresh uniform draw): a selected fraction of
    /// 2 / (1 / p_b + 1). At avg = 240 KB, p_b = 0.02 x 120 / 240 = 0.01: 1.98%, within 5% over
    /// 200,000 packets; with `ecn` they are marked, without it dropped; above max all are.
    #[test]
    fn selection_spacing_gives_twice_pb() {
        for ecn in [true, false] {
            let (mut b, mut r, inp, out) = red(RedParams { ecn, limit: None, ..seed002() });
            r.state[out as usize].avg = 240_000.0;
            let (mut marked, mut dropped) = (0, 0);
            let n = 200_000;
            for i in 0..n {
                let a = b.data(1, 0, 2, inp, out, 240_000);
                match r.on_arrival(&a, true, &mut b.cx(SimTime(i))) {
                    AqmAction::Mark => marked += 1,
                    AqmAction::Drop(DropReason::Aqm) => dropped += 1,
                    _ => {}
                }
            }
            let frac = (marked + dropped) as f64 / n as f64;
            let expect = 2.0 / (1.0 / 0.01 + 1.0);
            assert!((frac / expect - 1.0).abs() < 0.05, "{frac} vs {expect}");
            assert_eq!(if ecn { dropped } else { marked }, 0);
        }
        let (mut b, mut r, inp, out) = red(seed002());
        r.state[out as usize].avg = 400_000.0;
        let a = b.data(1, 0, 2, inp, out, 400_000);
        assert_eq!(r.on_arrival(&a, true, &mut b.cx(SimTime(1))), AqmAction::Mark);
        assert_eq!(r.on_arrival(&a, false, &mut b.cx(SimTime(2))), AqmAction::Drop(DropReason::Aqm), "not ECN-capable");
        // the limit tail-drops what RED let through
        let a = b.data(1, 0, 2, inp, out, 1_599_000);
        r.state[out as usize].avg = 0.0;
        assert_eq!(r.on_arrival(&a, true, &mut b.cx(SimTime(3))), AqmAction::Drop(DropReason::BufferFull));
    }
}
