//! Open-loop Poisson flow arrivals at every host (as in pFabric, HPCC and the
//! seeds): host h starts flows with exponential gaps of mean
//! E[size] * 8 / (load * host rate), so each host link is offered `load` of
//! its capacity in payload bytes; the destination is uniform over the other
//! hosts, or over the other hosts of h's cluster (seed 000: 50 clusters of 21
//! servers running many-to-many).

use super::cdf::FlowSizeCdf;
use super::arrivals::Process;
use super::{exp_ps, FlowSpec, GenCtx};
use std::sync::Arc;
use crate::sim::SimTime;
use rand::Rng as _;

pub fn generate(ctx: &GenCtx, cdf: &FlowSizeCdf, load: f64, cluster_size: Option<u32>) -> Vec<FlowSpec> {
    processes(ctx, &Arc::new(cdf.clone()), load, cluster_size).into_iter().flatten().collect()
}

/// One process per host, each making its flows in start order as the run reaches them
/// (`arrivals.rs`); `generate` is all of them, host after host.
pub fn processes(ctx: &GenCtx, cdf: &Arc<FlowSizeCdf>, load: f64, cluster_size: Option<u32>) -> Vec<Process> {
    let mean_gap_ps = cdf.mean() * 8.0 / (load * ctx.host_rate_bps as f64) * 1e12;
    let cs = cluster_size.unwrap_or(ctx.hosts).max(2);
    let clusters = ctx.hosts / cs; // hosts beyond the last full cluster stay idle
    // one context for every host's source: a split run holds every host's source in each
    // partition (engine/parallel.rs), 101,306 of them at k = 74
    let shared = Arc::new(ctx.clone());
    (0..clusters * cs)
        .map(|h| {
            let mut rng = ctx.rng(h as u64);
            let t = ctx.start.0 + exp_ps(&mut rng, mean_gap_ps);
            Box::new(HostArrivals { ctx: shared.clone(), cdf: cdf.clone(), h, base: h / cs * cs, cs, mean_gap_ps, rng, t }) as Process
        })
        .collect()
}

/// Host `h`'s Poisson source: its next flow starts at `t`.
struct HostArrivals {
    ctx: Arc<GenCtx>,
    cdf: Arc<FlowSizeCdf>,
    h: u32,
    base: u32,
    cs: u32,
    mean_gap_ps: f64,
    rng: crate::sim::Rng,
    t: u64,
}

impl Iterator for HostArrivals {
    type Item = FlowSpec;
    fn next(&mut self) -> Option<FlowSpec> {
        if self.t >= self.ctx.stop.0 {
            return None;
        }
        let mut d = self.base + self.rng.gen_range(0..self.cs - 1);
        if d >= self.h {
            d += 1;
        }
        let size = self.cdf.sample(&mut self.rng);
        let f = self.ctx.spec(self.h, d, size, SimTime(self.t));
        self.t += exp_ps(&mut self.rng, self.mean_gap_ps);
        Some(f)
    }
}
