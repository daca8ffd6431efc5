//! N:1 incast (Vasudevan et al., "Safe and effective fine-grained TCP
//! retransmissions for datacenter communication", SIGCOMM 2009): each round,
//! `fan_in` distinct senders each send `size` bytes to one receiver.
//! Rounds are one-shot, periodic, Poisson at a target share of the total host
//! capacity (seed 004: 120:1 of 256 KB at 8%), or persistent: every sender
//! sends back to back for the whole arrival window (seed 000's "permanent"
//! 20:1 incast sets).

use super::arrivals::Process;
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
    processes(ctx, fan_in, size, rounds, groups, receiver, reuse, disjoint, stagger).into_iter().flatten().collect()
}

/// One process per group making its rounds as the run reaches them (`arrivals.rs`), or,
/// where a group's flows do not come in start order (staggered senders) or are few (one
/// round), one process of every flow made at once; `generate` is all of them in order.
#[allow(clippy::too_many_arguments)]
pub fn processes(ctx: &GenCtx, fan_in: u32, size: u64, rounds: Rounds, groups: u32, receiver: Option<u32>, reuse: bool, disjoint: bool, stagger: SimTime) -> Vec<Process> {
    let shares: Vec<u32> = match disjoint {
        true => sample(&mut ctx.rng(groups as u64), ctx.hosts as usize, (groups * (fan_in + 1)) as usize).into_iter().map(|h| h as u32).collect(),
        false => Vec::new(),
    };
    let group = |g: u32| Group {
        ctx: ctx.clone(),
        fan_in,
        size,
        receiver,
        reuse,
        stagger,
        share: if disjoint { shares[(g * (fan_in + 1)) as usize..((g + 1) * (fan_in + 1)) as usize].to_vec() } else { Vec::new() },
        rng: ctx.rng(g as u64),
    };
    let lazy = stagger.0 == 0 && matches!(rounds, Rounds::Every(_) | Rounds::Load(_));
    if !lazy {
        let mut out = Vec::new();
        for g in 0..groups {
            let mut gr = group(g);
            match rounds {
                Rounds::Oneshot => out.extend(gr.round(ctx.start, None)),
                Rounds::Persistent => out.extend(gr.round(ctx.start, Some(ctx.stop))),
                Rounds::Every(_) | Rounds::Load(_) => out.extend(RoundStream::new(gr, rounds, groups)),
            }
        }
        return vec![super::arrivals::made(out)];
    }
    (0..groups).map(|g| Box::new(RoundStream::new(group(g), rounds, groups)) as Process).collect()
}

/// One group's senders and receiver, and its random stream.
struct Group {
    ctx: GenCtx,
    fan_in: u32,
    size: u64,
    receiver: Option<u32>,
    reuse: bool,
    stagger: SimTime,
    /// Disjoint groups: the group's hosts, its receiver first.
    share: Vec<u32>,
    rng: crate::sim::Rng,
}

impl Group {
    /// One round at `t`: `fan_in` senders to one receiver; `repeat`: persistent until then.
    fn round(&mut self, t: SimTime, repeat: Option<SimTime>) -> Vec<FlowSpec> {
        let mut out = Vec::with_capacity(self.fan_in as usize);
        let mut offsets = Vec::new();
        if self.stagger.0 > 0 {
            offsets = (0..self.fan_in).map(|_| SimTime(self.rng.gen_range(0..self.stagger.0))).collect();
        }
        let mut emit = |s: u32, r: u32| {
            let at = t + offsets.get(out.len()).copied().unwrap_or(SimTime::ZERO);
            let mut f = self.ctx.spec(s, r, self.size, at);
            f.repeat_until = repeat;
            f.reuse_connection = repeat.is_some() && self.reuse;
            out.push(f);
        };
        if !self.share.is_empty() {
            for &s in &self.share[1..] {
                emit(s, self.share[0]);
            }
            return out;
        }
        let r = self.receiver.unwrap_or_else(|| self.rng.gen_range(0..self.ctx.hosts));
        // choose fan_in distinct senders among the other hosts
        for i in sample(&mut self.rng, (self.ctx.hosts - 1) as usize, self.fan_in as usize).into_iter() {
            emit(if (i as u32) >= r { i as u32 + 1 } else { i as u32 }, r);
        }
        out
    }
}

/// A group's periodic or Poisson rounds, a round at a time.
struct RoundStream {
    g: Group,
    /// The next round's time, and the mean gap of Poisson rounds (None: periodic).
    t: u64,
    every: u64,
    mean_ps: Option<f64>,
    buf: std::collections::VecDeque<FlowSpec>,
}

impl RoundStream {
    fn new(mut g: Group, rounds: Rounds, groups: u32) -> RoundStream {
        let start = g.ctx.start.0;
        match rounds {
            Rounds::Every(p) => RoundStream { t: start, every: p.0.max(1), mean_ps: None, g, buf: Default::default() },
            Rounds::Load(load) => {
                let total = g.ctx.hosts as f64 * g.ctx.host_rate_bps as f64;
                let mean_ps = groups as f64 * g.fan_in as f64 * g.size as f64 * 8.0 / (load * total) * 1e12;
                let t = start + exp_ps(&mut g.rng, mean_ps);
                RoundStream { t, every: 0, mean_ps: Some(mean_ps), g, buf: Default::default() }
            }
            Rounds::Oneshot | Rounds::Persistent => unreachable!("one round: made at once"),
        }
    }
}

impl Iterator for RoundStream {
    type Item = FlowSpec;
    fn next(&mut self) -> Option<FlowSpec> {
        if self.buf.is_empty() {
            if self.t >= self.g.ctx.stop.0 {
                return None;
            }
            self.buf.extend(self.g.round(SimTime(self.t), None));
            self.t += match self.mean_ps {
                Some(m) => exp_ps(&mut self.g.rng, m),
                None => self.every,
            };
        }
        self.buf.pop_front()
    }
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
