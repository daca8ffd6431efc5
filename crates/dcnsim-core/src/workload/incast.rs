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

/// `reuse`: persistent senders keep one connection for all their flows. `disjoint`
/// (oneshot and persistent rounds): the groups' hosts are distinct, drawn as one sample of
/// groups x (fan_in + 1) hosts, the first of each group's share its receiver.
/// `stagger`: each sender starts at a uniform random offset in [0, stagger) after its round
/// (0: all at once).
#[allow(clippy::too_many_arguments)]
pub fn generate(ctx: &GenCtx, fan_in: u32, size: u64, rounds: Rounds, groups: u32, receiver: Option<u32>, reuse: bool, disjoint: bool, stagger: SimTime) -> Vec<FlowSpec> {
    let mut out = Vec::new();
    let shares: Vec<u32> = match disjoint {
        true => sample(&mut ctx.rng(groups as u64), ctx.hosts as usize, (groups * (fan_in + 1)) as usize).into_iter().map(|h| h as u32).collect(),
        false => Vec::new(),
    };
    for g in 0..groups {
        let mut rng = ctx.rng(g as u64);
        let round = |t: SimTime, rng: &mut crate::sim::Rng, out: &mut Vec<FlowSpec>, repeat: Option<SimTime>| {
            let mut offsets = Vec::new();
            if stagger.0 > 0 {
                offsets = (0..fan_in).map(|_| SimTime(rng.gen_range(0..stagger.0))).collect();
            }
            let mut k = 0;
            let mut emit = |s: u32, r: u32| {
                let at = t + offsets.get(k).copied().unwrap_or(SimTime::ZERO);
                k += 1;
                let mut f = ctx.spec(s, r, size, at);
                f.repeat_until = repeat;
                f.reuse_connection = repeat.is_some() && reuse;
                out.push(f);
            };
            if disjoint {
                let share = &shares[(g * (fan_in + 1)) as usize..((g + 1) * (fan_in + 1)) as usize];
                for &s in &share[1..] {
                    emit(s, share[0]);
                }
                return;
            }
            let r = receiver.unwrap_or_else(|| rng.gen_range(0..ctx.hosts));
            // choose fan_in distinct senders among the other hosts
            for i in sample(rng, (ctx.hosts - 1) as usize, fan_in as usize).into_iter() {
                emit(if (i as u32) >= r { i as u32 + 1 } else { i as u32 }, r);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{RateCcKind, Transport};
    use std::collections::BTreeSet;

    fn ctx(hosts: u32, seed: u64) -> GenCtx {
        GenCtx {
            hosts,
            first: 0,
            host_rate_bps: 100_000_000_000,
            seed,
            index: 0,
            start: SimTime::ZERO,
            stop: SimTime::from_ms(1),
            prio: 0,
            tag: 0,
            transport: Transport::Roce(RateCcKind::Dcqcn),
        }
    }

    /// Seed 000's four separate 20:1 sets: with disjoint groups no host is in two sets;
    /// drawn independently, 4 sets of 21 among 102 hosts share some for most seeds.
    #[test]
    fn disjoint_groups_share_no_host() {
        let mut shared_seeds = 0;
        for seed in 1..=20 {
            let sets = |disjoint: bool| -> Vec<BTreeSet<u32>> {
                let f = generate(&ctx(102, seed), 20, 1_000_000, Rounds::Persistent, 4, None, true, disjoint, SimTime::ZERO);
                assert_eq!(f.len(), 80);
                f.chunks(20).map(|g| g.iter().flat_map(|x| [x.src, x.dst]).collect()).collect()
            };
            let d = sets(true);
            assert!(d.iter().all(|s| s.len() == 21), "one receiver and 20 distinct senders per set");
            assert_eq!(d.iter().flatten().collect::<BTreeSet<_>>().len(), 84, "no host in two sets");
            let ind = sets(false);
            shared_seeds += (ind.iter().flatten().collect::<BTreeSet<_>>().len() < 84) as u32;
        }
        assert!(shared_seeds >= 15, "independent sets overlap for most seeds ({shared_seeds} of 20)");
    }

    #[test]
    fn staggered_senders_start_within_the_window() {
        let f = generate(&ctx(50, 3), 20, 1_000, Rounds::Oneshot, 1, None, false, false, SimTime::from_us(100));
        let starts: BTreeSet<u64> = f.iter().map(|x| x.start.0).collect();
        assert!(f.iter().all(|x| x.start < SimTime::from_us(100)));
        assert!(starts.len() >= 19, "the senders start apart: {starts:?}");
        let together = generate(&ctx(50, 3), 20, 1_000, Rounds::Oneshot, 1, None, false, false, SimTime::ZERO);
        assert!(together.iter().all(|x| x.start == SimTime::ZERO));
    }
}
