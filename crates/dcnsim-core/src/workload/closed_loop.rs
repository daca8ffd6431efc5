//! Closed-loop request streams: each loop sends one message (a flow) at a time and the next
//! as soon as the previous one completes, for the whole arrival window. Seed 001's
//! workloads are of this kind: "database entry" requests over TCP from clients to servers
//! ("response time = DB entry request to completion"), and L2 workload generators "sending
//! to all others randomly as fast as possible", each with exponentially distributed sizes
//! (mean 8,000 B, from 46 B or 1 B to about 64 KB or 85 KB).
//!
//! A loop either has a fixed destination (a client-server pair, which may keep its
//! connection from request to request) or draws a destination uniformly among the other
//! hosts of its set for every message. Sizes are exponential with the given mean, redrawn
//! until they fall within [min, max] (a truncated exponential), from the loop's own stream.

use super::{FlowSpec, GenCtx};
use crate::net::HostId;
use crate::sim::Rng;
use rand::Rng as _;

/// Exponential message sizes truncated to [min, max] bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpSizes {
    pub mean: f64,
    pub min: u64,
    pub max: u64,
}

/// Smallest probability of [min, max] that validation accepts: at most a million draws per
/// message on average.
pub const MIN_WINDOW_PROBABILITY: f64 = 1e-6;

/// Failed draws after which `draw` checks whether the window can be drawn from at all.
const DRAWS_BEFORE_CHECK: u32 = 1 << 20;

impl ExpSizes {
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        let mut failed = 0u32;
        loop {
            let x = self.untruncated(rng);
            if (self.min..=self.max).contains(&x) {
                return x;
            }
            failed += 1;
            // Only a window that validation refuses (ExpSizes built in code) gets here with
            // a probability below the bound: it would take forever, so it takes the draw
            // moved into the window. Validated windows keep drawing, so their sizes are the
            // rejection sampler's whatever the luck.
            if failed == DRAWS_BEFORE_CHECK && !(self.window_probability() >= MIN_WINDOW_PROBABILITY) {
                return x.max(self.min).min(self.max);
            }
        }
    }

    /// One draw before the window is applied: the exponential's value rounded to whole
    /// bytes, at least 1.
    fn untruncated(&self, rng: &mut Rng) -> u64 {
        let u: f64 = 1.0 - rng.gen::<f64>();
        (-u.ln() * self.mean).round().max(1.0) as u64
    }

    /// The probability that one draw lands in [min, max]: a draw is the exponential's value
    /// y rounded to whole bytes (at least 1), which is in the window when y is in
    /// [min - 0.5, max + 0.5) (from 0 when min <= 1).
    pub fn window_probability(&self) -> f64 {
        if self.min > self.max {
            return 0.0;
        }
        let lo = if self.min <= 1 { 0.0 } else { self.min as f64 - 0.5 };
        let hi = self.max as f64 + 0.5;
        // e^{-lo/m} - e^{-hi/m}, without cancelling when the window is narrow
        (-lo / self.mean).exp() * -(-(hi - lo) / self.mean).exp_m1()
    }
}

/// One loop's state.
#[derive(Clone, Debug)]
pub struct ClosedLoop {
    pub src: HostId,
    /// A fixed destination, or None: uniform among hosts first..end other than `src`.
    pub dst: Option<HostId>,
    pub first: HostId,
    pub end: HostId,
    pub sizes: ExpSizes,
    rng: Rng,
}

impl ClosedLoop {
    /// The next message: destination and size.
    pub fn next(&mut self) -> (HostId, u64) {
        let dst = match self.dst {
            Some(d) => d,
            None => {
                let i = self.rng.gen_range(self.first..self.end - 1);
                if i >= self.src {
                    i + 1
                } else {
                    i
                }
            }
        };
        (dst, self.sizes.draw(&mut self.rng))
    }
}

/// The loops of one workload and their first messages (at the workload's start). `pairs`
/// (relative to the workload's first host): `in_flight` loops per pair; None: `in_flight`
/// loops per host of the set with random destinations. Loop ids start at `first_id`.
pub fn generate(ctx: &GenCtx, pairs: Option<&[(u32, u32)]>, in_flight: u32, sizes: ExpSizes, reuse: bool, first_id: u32) -> (Vec<FlowSpec>, Vec<ClosedLoop>) {
    let ends: Vec<(u32, Option<u32>)> = match pairs {
        Some(p) => p.iter().map(|&(s, d)| (s, Some(d))).collect(),
        None => (0..ctx.hosts).map(|s| (s, None)).collect(),
    };
    let fixed: Vec<(u32, Option<u32>)> = ends.into_iter().flat_map(|e| std::iter::repeat(e).take(in_flight as usize)).collect();
    let mut specs = Vec::with_capacity(fixed.len());
    let mut loops = Vec::with_capacity(fixed.len());
    for (i, (s, d)) in fixed.into_iter().enumerate() {
        let mut l = ClosedLoop { src: s + ctx.first, dst: d.map(|d| d + ctx.first), first: ctx.first, end: ctx.first + ctx.hosts, sizes: sizes.clone(), rng: ctx.rng(i as u64) };
        let (dst, size) = l.next();
        let mut f = ctx.spec(s, dst - ctx.first, size, ctx.start);
        f.repeat_until = Some(ctx.stop);
        f.reuse_connection = reuse && d.is_some();
        f.closed_loop = Some(first_id + i as u32);
        specs.push(f);
        loops.push(l);
    }
    (specs, loops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Transport;
    use crate::sim::SimTime;

    fn ctx() -> GenCtx {
        GenCtx { hosts: 5, first: 0, host_rate_bps: 10_000_000_000, seed: 1, index: 0, start: SimTime::ZERO, stop: SimTime::from_ms(1), prio: 0, tag: 0, transport: Transport::Udp }
    }

    /// Truncated exponential: every size within [min, max], the mean within 2% of the
    /// truncated exponential's (for mean 8000 and max 64 KB the truncation moves it by 0.3%).
    #[test]
    fn sizes_are_truncated_exponential() {
        let s = ExpSizes { mean: 8000.0, min: 46, max: 65_536 };
        let mut rng = crate::sim::stream(3, crate::sim::Stream::Workload, 0);
        let xs: Vec<u64> = (0..200_000).map(|_| s.draw(&mut rng)).collect();
        assert!(xs.iter().all(|&x| (46..=65_536).contains(&x)));
        let mean = xs.iter().sum::<u64>() as f64 / xs.len() as f64;
        // E[X | a <= X <= b] for X ~ Exp(m): m + (a e^{-a/m} - b e^{-b/m}) / (e^{-a/m} - e^{-b/m})
        let (m, a, b) = (8000.0f64, 46.0f64, 65_536.0f64);
        let want = m + (a * (-a / m).exp() - b * (-b / m).exp()) / ((-a / m).exp() - (-b / m).exp());
        assert!((mean / want - 1.0).abs() < 0.02, "{mean} vs {want}");
    }

    /// The window's probability is the exponential's mass over it, rounding included.
    #[test]
    fn window_probability_is_the_mass_of_the_window() {
        let p = |mean: f64, min, max| ExpSizes { mean, min, max }.window_probability();
        assert!((p(8000.0, 1, u64::MAX) - 1.0).abs() < 1e-12);
        assert!((p(8000.0, 1, 8000) - (1.0 - (-8000.5f64 / 8000.0).exp())).abs() < 1e-12);
        let far = p(8000.0, 128_000, 128_001);
        let want = (-127_999.5f64 / 8000.0).exp() - (-128_001.5f64 / 8000.0).exp();
        assert!((far / want - 1.0).abs() < 1e-6 && far < MIN_WINDOW_PROBABILITY, "{far} vs {want}");
        assert_eq!(p(8000.0, 10, 9), 0.0);
        // a sample agrees with it
        let s = ExpSizes { mean: 100.0, min: 150, max: 160 };
        let mut rng = crate::sim::stream(3, crate::sim::Stream::Workload, 0);
        let hits = (0..200_000).filter(|_| (150..=160).contains(&s.untruncated(&mut rng))).count();
        assert!((hits as f64 / 200_000.0 / s.window_probability() - 1.0).abs() < 0.05, "{hits}");
    }

    /// A window no draw can reach (sizes built in code; validation refuses them) gives a
    /// size in the window after a bounded number of draws instead of spinning forever.
    #[test]
    fn an_unreachable_window_does_not_spin_forever() {
        let mut rng = crate::sim::stream(3, crate::sim::Stream::Workload, 0);
        assert_eq!(ExpSizes { mean: 8000.0, min: 128_000, max: 128_000 }.draw(&mut rng), 128_000);
        assert_eq!(ExpSizes { mean: 8000.0, min: 10, max: 9 }.draw(&mut rng), 9);
    }

    /// Random destinations are uniform over the other hosts and never the source.
    #[test]
    fn random_destinations_skip_the_source() {
        let (specs, mut loops) = generate(&ctx(), None, 1, ExpSizes { mean: 8000.0, min: 1, max: 87_040 }, true, 7);
        assert_eq!(specs.len(), 5);
        assert_eq!(specs[2].closed_loop, Some(9));
        assert!(!specs[0].reuse_connection, "random destinations: a new connection per message");
        let mut count = [0u32; 5];
        for _ in 0..40_000 {
            let (d, _) = loops[2].next();
            count[d as usize] += 1;
        }
        assert_eq!(count[2], 0);
        for (h, &c) in count.iter().enumerate().filter(|(h, _)| *h != 2) {
            assert!((9_500..10_500).contains(&c), "host {h}: {c} of 40,000");
        }
    }

    /// `in_flight` loops per pair: each its own loop id, connection and size stream, the
    /// pair's loops side by side.
    #[test]
    fn in_flight_opens_that_many_loops_per_pair() {
        let sizes = ExpSizes { mean: 8000.0, min: 1, max: 87_040 };
        let (specs, loops) = generate(&ctx(), Some(&[(0, 3), (1, 3)]), 3, sizes, true, 0);
        let ends: Vec<(u32, u32)> = specs.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(ends, [(0, 3), (0, 3), (0, 3), (1, 3), (1, 3), (1, 3)]);
        let ids: Vec<_> = specs.iter().map(|f| f.closed_loop.unwrap()).collect();
        assert_eq!(ids, [0, 1, 2, 3, 4, 5]);
        assert!(specs.iter().all(|f| f.reuse_connection));
        // the loops of one pair draw different sizes (their own streams)
        assert_eq!(loops.len(), 6);
        assert!(specs[0].size != specs[1].size || specs[1].size != specs[2].size);
    }
}
