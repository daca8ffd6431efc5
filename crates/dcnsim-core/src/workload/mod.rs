//! Workloads: generators that turn a `[[workload]]` table into flow specs, made as the
//! run reaches them (`arrivals.rs`: one pending flow per process, merged in start order;
//! the engine keeps one pending arrival event). Every generator draws
//! from its own RNG stream, per host where it has per-host processes, so one
//! workload's flows do not move when another workload is added.
pub mod arrivals;
pub mod cdf;
pub mod closed_loop;
pub mod incast;
pub mod permutation;
pub mod poisson;
pub mod trace;

use crate::host::Transport;
use crate::net::HostId;
use crate::sim::SimTime;

/// A flow to start.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub src: HostId,
    pub dst: HostId,
    pub size: u64,
    pub start: SimTime,
    pub prio: u8,
    pub tag: u16,
    pub transport: Transport,
    /// Closed loop: when the flow finishes before this time, an identical one starts at once.
    pub repeat_until: Option<SimTime>,
    /// A repeated flow continues the previous one's connection (path, identity, CC state).
    pub reuse_connection: bool,
    /// Closed loop with a generator (`closed_loop::ClosedLoop`, by id): the repeated flow's
    /// destination and size come from it instead of repeating this one's.
    pub closed_loop: Option<u32>,
}

/// What every generator needs to know about its surroundings.
#[derive(Clone, Debug)]
pub struct GenCtx {
    /// Hosts taking part: indices first..first+hosts.
    pub hosts: u32,
    pub first: u32,
    pub host_rate_bps: u64,
    pub seed: u64,
    /// Position of the workload in the scenario (stream separation).
    pub index: u32,
    pub start: SimTime,
    pub stop: SimTime,
    pub prio: u8,
    pub tag: u16,
    pub transport: Transport,
}

impl GenCtx {
    /// A flow between hosts given relative to `first`.
    pub fn spec(&self, src: HostId, dst: HostId, size: u64, start: SimTime) -> FlowSpec {
        FlowSpec {
            src: src + self.first,
            dst: dst + self.first,
            size,
            start,
            prio: self.prio,
            tag: self.tag,
            transport: self.transport,
            repeat_until: None,
            reuse_connection: false,
            closed_loop: None,
        }
    }
    /// RNG stream for sub-process `sub` of this workload.
    pub fn rng(&self, sub: u64) -> crate::sim::Rng {
        crate::sim::stream(self.seed, crate::sim::Stream::Workload, ((self.index as u64) << 32) | sub)
    }
}

/// Exponential variate with the given mean, in picoseconds.
pub fn exp_ps(rng: &mut crate::sim::Rng, mean_ps: f64) -> u64 {
    use rand::Rng as _;
    let u: f64 = 1.0 - rng.gen::<f64>();
    (-u.ln() * mean_ps).round() as u64
}
