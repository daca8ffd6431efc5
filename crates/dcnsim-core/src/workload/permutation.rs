//! Permutation traffic: every host sends one flow to a distinct other host,
//! the destinations forming a random derangement (Sattolo's algorithm yields
//! a single cycle, so no host sends to itself).

use super::{FlowSpec, GenCtx};
use rand::Rng as _;

pub fn generate(ctx: &GenCtx, size: u64) -> Vec<FlowSpec> {
    let mut rng = ctx.rng(0);
    let n = ctx.hosts as usize;
    let mut p: Vec<u32> = (0..ctx.hosts).collect();
    for i in (1..n).rev() {
        let j = rng.gen_range(0..i);
        p.swap(i, j);
    }
    (0..n).map(|h| ctx.spec(h as u32, p[h], size, ctx.start)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{Transport, WindowCc};
    use crate::sim::SimTime;
    #[test]
    fn is_a_derangement() {
        let ctx = GenCtx {
            hosts: 17,
            first: 0,
            host_rate_bps: 1,
            seed: 3,
            index: 0,
            start: SimTime::ZERO,
            stop: SimTime(1),
            prio: 0,
            tag: 0,
            transport: Transport::Tcp(WindowCc::Dctcp),
        };
        let f = generate(&ctx, 1000);
        let mut dsts: Vec<u32> = f.iter().map(|s| s.dst).collect();
        assert!(f.iter().all(|s| s.src != s.dst));
        dsts.sort();
        assert_eq!(dsts, (0..17).collect::<Vec<_>>());
    }
}
