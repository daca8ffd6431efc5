//! PI2, the PI controller "improved with a square" (De Schepper, Bondarenko, Tsang, Briscoe,
//! "PI2: A Linearized AQM for both Classic and Scalable TCP", ACM CoNEXT 2016), as the
//! single-queue AQM of RFC 9332's Classic side and Linux sch_dualpi2's controller:
//!
//! * Every `tupdate` (default 16 ms) the controller of each egress queue reads the queue
//!   delay (the sojourn time of the packet at its head, 0 when empty: "measure Q in time",
//!   seed 002) and updates its output incrementally (RFC 9332 sec. 2.4 and appendix A):
//!   p' <- p' + alpha (qdelay - target) + beta (qdelay - qdelay_prev), clamped to [0, 1], with
//!   alpha 0.16 Hz, beta 3.2 Hz and target 15 ms (the Linux defaults). p' accumulates: a
//!   controller that recomputes it from the error alone is a P controller, not PI.
//! * An arriving packet is selected with p = p'^2 (the square linearises Reno's and
//!   Cubic's 1/sqrt(p) response: "square is easy", two random draws, done here as one
//!   draw against p'^2); a selected ECN-capable packet is CE-marked, any other dropped
//!   (a lossless class's packets are never dropped).
//! * A switch's controllers run while any of its queues holds packets or any p' is above
//!   0; when all are idle the timer stops and the next arrival restarts it (nothing would
//!   change: qdelay 0 only lowers p', which is already 0).

use super::select;
use crate::switch::pipeline::{AqmAction, Arrival, Ctx};
use crate::switch::MechTimer;
use crate::net::PktQueue;
use crate::sim::SimTime;

/// Linux sch_dualpi2 / RFC 9332 defaults.
pub const DEFAULT_TARGET: SimTime = SimTime::from_ms(15);
pub const DEFAULT_TUPDATE: SimTime = SimTime::from_ms(16);
pub const DEFAULT_ALPHA: f64 = 0.16;
pub const DEFAULT_BETA: f64 = 3.2;

/// PI2's parameters (`switch.aqm` with `kind = "pi2"`).
#[derive(Clone, Debug)]
pub struct Pi2Params {
    pub target: SimTime,
    pub tupdate: SimTime,
    /// Integral gain, per second of queue delay error.
    pub alpha: f64,
    /// Proportional gain, per second of queue delay change.
    pub beta: f64,
}

impl Pi2Params {
    /// One controller step: the new p' from the old one, the queue delay now and at the
    /// last step (seconds).
    pub fn step(&self, p: f64, qdelay: f64, prev: f64) -> f64 {
        let target = self.target.0 as f64 * 1e-12;
        (p + self.alpha * (qdelay - target) + self.beta * (qdelay - prev)).clamp(0.0, 1.0)
    }
}

/// One PI2 controller: its output p' and the queue delay of its last update (seconds).
#[derive(Clone, Copy, Debug, Default)]
pub struct Controller {
    pub p: f64,
    prev: f64,
}

impl Controller {
    /// Step with the queue delay `qdelay` (seconds) seen now.
    #[inline]
    pub fn update(&mut self, params: &Pi2Params, qdelay: f64) {
        self.p = params.step(self.p, qdelay, self.prev);
        self.prev = qdelay;
    }
}

/// The sojourn time (seconds) of the packet at the head of `q`, 0 when it is empty: the
/// queue delay the PI2 controllers read.
#[inline]
pub fn head_sojourn(q: &PktQueue, cx: &Ctx) -> f64 {
    q.head().map_or(0.0, |h| (cx.now - cx.pkts.get(h).enq).0 as f64 * 1e-12)
}

/// PI2's timer: update every controller of switch `sw`.
#[derive(Copy, Clone, Debug)]
pub struct Update {
    pub sw: u32,
}

/// The per-switch update timers of PI2 controllers: one runs while the switch has work
/// (module doc), started again by the next arrival.
#[derive(Clone, Debug)]
pub struct Clocks {
    running: Vec<bool>,
    tupdate: SimTime,
}

impl Clocks {
    pub fn new(switches: usize, tupdate: SimTime) -> Clocks {
        Clocks { running: vec![false; switches], tupdate }
    }
    /// An arrival at switch `sw`: start its timer unless it runs.
    #[inline]
    pub fn start(&mut self, sw: u32, cx: &mut Ctx) {
        if !self.running[sw as usize] {
            self.running[sw as usize] = true;
            cx.timer(cx.now + self.tupdate, MechTimer::Aqm(Update { sw }));
        }
    }
    /// After the update `t`: run again while `busy`, else stop.
    pub fn next(&mut self, t: Update, busy: bool, cx: &mut Ctx) {
        if busy {
            cx.timer(cx.now + self.tupdate, MechTimer::Aqm(t));
        } else {
            self.running[t.sw as usize] = false;
        }
    }
}

/// PI2 on every switch egress queue.
#[derive(Clone, Debug)]
pub struct Pi2 {
    pub p: Pi2Params,
    queues: usize,
    state: Vec<Controller>,
    clocks: Clocks,
}

impl Pi2 {
    pub fn new(p: Pi2Params, ports: usize, queues: usize, switches: usize) -> Pi2 {
        let clocks = Clocks::new(switches, p.tupdate);
        Pi2 { p, queues, state: vec![Controller::default(); ports * queues], clocks }
    }

    /// The controller output p' of (port, queue) (tests and reports).
    pub fn p_prime(&self, port: u32, queue: usize) -> f64 {
        self.state[port as usize * self.queues + queue].p
    }

    pub fn on_arrival(&mut self, a: &Arrival, ect: bool, cx: &mut Ctx) -> AqmAction {
        self.clocks.start(a.sw, cx);
        let p = self.state[a.out as usize * self.queues + a.queue].p;
        select(p * p, ect, a.lossless, &mut cx.switches[a.sw as usize].rng)
    }

    /// The update timer of switch `sw`: step every controller of its egress queues.
    pub fn on_timer(&mut self, t: Update, cx: &mut Ctx) {
        let node = cx.topo.switches[t.sw as usize];
        let mut busy = false;
        for &port in &cx.topo.nodes[node as usize].ports {
            for qi in 0..self.queues {
                let q = &cx.port_queues.of(port)[qi];
                let s = &mut self.state[port as usize * self.queues + qi];
                s.update(&self.p, head_sojourn(q, cx));
                busy |= s.p > 0.0 || !q.is_empty();
            }
        }
        self.clocks.next(t, busy, cx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Pi2Params {
        Pi2Params { target: DEFAULT_TARGET, tupdate: DEFAULT_TUPDATE, alpha: DEFAULT_ALPHA, beta: DEFAULT_BETA }
    }

    /// With a constant queue delay error, one update moves p' by alpha x error (the
    /// proportional term is zero once the delay is steady), and successive updates
    /// accumulate: 25 ms against a 15 ms target adds 0.16 x 0.010 = 0.0016 per update.
    #[test]
    fn p_prime_accumulates_alpha_times_error() {
        let p = params();
        let one = p.step(0.1, 0.025, 0.025);
        assert!((one - (0.1 + 0.16 * 0.010)).abs() < 1e-15, "{one}");
        let two = p.step(one, 0.025, 0.025);
        assert!((two - (0.1 + 2.0 * 0.0016)).abs() < 1e-15);
        // the proportional term reacts to the change of delay
        assert!((p.step(0.1, 0.025, 0.015) - (0.1 + 0.0016 + 3.2 * 0.010)).abs() < 1e-15);
        // clamped to [0, 1]
        assert_eq!(p.step(0.0, 0.0, 0.0), 0.0);
        assert_eq!(p.step(0.999, 1.0, 0.0), 1.0);
    }
}
