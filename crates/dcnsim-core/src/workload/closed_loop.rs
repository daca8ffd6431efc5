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

impl ExpSizes {
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        loop {
            let u: f64 = 1.0 - rng.gen::<f64>();
            let x = (-u.ln() * self.mean).round().max(1.0) as u64;
            if (self.min..=self.max).contains(&x) {
                return x;
            }
        }
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
/// (relative to the workload's first host): one loop per pair; None: one loop per host of
/// the set with random destinations. Loop ids start at `first_id`.
pub fn generate(ctx: &GenCtx, pairs: Option<&[(u32, u32)]>, sizes: ExpSizes, reuse: bool, first_id: u32) -> (Vec<FlowSpec>, Vec<ClosedLoop>) {
    let fixed: Vec<(u32, Option<u32>)> = match pairs {
        Some(p) => p.iter().map(|&(s, d)| (s, Some(d))).collect(),
        None => (0..ctx.hosts).map(|s| (s, None)).collect(),
    };
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
    use crate::host::TransportKind;
    use crate::sim::SimTime;

    fn ctx() -> GenCtx {
        GenCtx {
            hosts: 5,
            first: 0,
            host_rate_bps: 10_000_000_000,
            seed: 1,
            index: 0,
            start: SimTime::ZERO,
            stop: SimTime::from_ms(1),
            prio: 0,
            tag: 0,
            transport: TransportKind::Udp,
        }
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

    /// Random destinations are uniform over the other hosts and never the source.
    #[test]
    fn random_destinations_skip_the_source() {
        let (specs, mut loops) = generate(&ctx(), None, ExpSizes { mean: 8000.0, min: 1, max: 87_040 }, true, 7);
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
}
