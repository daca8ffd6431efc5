//! Open-loop Poisson flow arrivals at every host (as in pFabric, HPCC and the
//! seeds): host h starts flows with exponential gaps of mean
//! E[size] * 8 / (load * host rate), so each host link is offered `load` of
//! its capacity in payload bytes; the destination is uniform over the other
//! hosts, or over the other hosts of h's cluster (seed 000: 50 clusters of 21
//! servers running many-to-many).

use super::cdf::FlowSizeCdf;
use super::{exp_ps, FlowSpec, GenCtx};
use crate::sim::SimTime;
use rand::Rng as _;

pub fn generate(ctx: &GenCtx, cdf: &FlowSizeCdf, load: f64, cluster_size: Option<u32>) -> Vec<FlowSpec> {
    let mut out = Vec::new();
    let mean_gap_ps = cdf.mean() * 8.0 / (load * ctx.host_rate_bps as f64) * 1e12;
    let cs = cluster_size.unwrap_or(ctx.hosts).max(2);
    let clusters = ctx.hosts / cs; // hosts beyond the last full cluster stay idle
    for h in 0..clusters * cs {
        let mut rng = ctx.rng(h as u64);
        let base = h / cs * cs;
        let mut t = ctx.start.0 + exp_ps(&mut rng, mean_gap_ps);
        while t < ctx.stop.0 {
            let mut d = base + rng.gen_range(0..cs - 1);
            if d >= h {
                d += 1;
            }
            let size = cdf.sample(&mut rng);
            out.push(ctx.spec(h, d, size, SimTime(t)));
            t += exp_ps(&mut rng, mean_gap_ps);
        }
    }
    out
}
