//! N:1 incast (Vasudevan et al., "Safe and effective fine-grained TCP
//! retransmissions for datacenter communication", SIGCOMM 2009): each round,
//! `fan_in` distinct senders each send `size` bytes to one receiver.
//! Rounds are one-shot, periodic, Poisson at a target share of the total host
//! capacity (seed 004: 120:1 of 256 KB at 8%), or persistent: every sender
//! sends back to back for the whole arrival window (seed 000's "permanent"
//! 20:1 incast sets).

use super::{exp_ps, FlowSpec, GenCtx};
use crate::sim::SimTime;
use rand::seq::index::sample;
use rand::Rng as _;

/// How rounds are spaced.
#[derive(Clone, Copy, Debug)]
pub enum Rounds {
    Oneshot,
    Persistent,
    Every(SimTime),
    /// Poisson rounds whose bytes make up this fraction of all host capacity.
    Load(f64),
}

/// `reuse`: persistent senders keep one connection for all their flows.
pub fn generate(ctx: &GenCtx, fan_in: u32, size: u64, rounds: Rounds, groups: u32, receiver: Option<u32>, reuse: bool) -> Vec<FlowSpec> {
    let mut out = Vec::new();
    for g in 0..groups {
        let mut rng = ctx.rng(g as u64);
        let round = |t: SimTime, rng: &mut crate::sim::Rng, out: &mut Vec<FlowSpec>, repeat: Option<SimTime>| {
            let r = receiver.unwrap_or_else(|| rng.gen_range(0..ctx.hosts));
            // choose fan_in distinct senders among the other hosts
            for i in sample(rng, (ctx.hosts - 1) as usize, fan_in as usize).into_iter() {
                let s = if (i as u32) >= r { i as u32 + 1 } else { i as u32 };
                let mut f = ctx.spec(s, r, size, t);
                f.repeat_until = repeat;
                f.reuse_connection = repeat.is_some() && reuse;
                out.push(f);
            }
        };
        match rounds {
            Rounds::Oneshot => round(ctx.start, &mut rng, &mut out, None),
            Rounds::Persistent => round(ctx.start, &mut rng, &mut out, Some(ctx.stop)),
            Rounds::Every(p) => {
                let mut t = ctx.start;
                while t < ctx.stop {
                    round(t, &mut rng, &mut out, None);
                    t += SimTime(p.0.max(1));
                }
            }
            Rounds::Load(load) => {
                let total = ctx.hosts as f64 * ctx.host_rate_bps as f64;
                let mean_ps = groups as f64 * fan_in as f64 * size as f64 * 8.0 / (load * total) * 1e12;
                let mut t = ctx.start.0 + exp_ps(&mut rng, mean_ps);
                while t < ctx.stop.0 {
                    round(SimTime(t), &mut rng, &mut out, None);
                    t += exp_ps(&mut rng, mean_ps);
                }
            }
        }
    }
    out
}
