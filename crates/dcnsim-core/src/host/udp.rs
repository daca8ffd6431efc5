//! Unacknowledged datagram source: constant bit rate, or Poisson departures
//! (exponential gaps) with fixed or exponential packet sizes, for queueing
//! tests against M/D/1 and M/M/1 theory. A UDP flow's size counts wire bytes
//! (datagrams are not segmented payload), so exponential sizes stay exponential.

use crate::sim::{ser_time, Rng, SimTime};
use rand::Rng as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// UDP packet arrival process.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Packets evenly spaced at the configured rate.
    #[default]
    Constant,
    /// Exponential gaps with the configured mean rate.
    Poisson,
}

/// UDP packet size distribution.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SizeDist {
    /// Every packet is `packet_size`.
    #[default]
    Fixed,
    /// Exponential with mean `packet_size`, rounded to whole bytes and clamped to [1 B, MTU].
    Exponential,
}

/// Per-flow UDP source state.
#[derive(Clone, Debug)]
pub struct UdpSource {
    pub rate_bps: u64,
    pub arrivals: Arrivals,
    pub sizes: SizeDist,
    pub mean_size: u32,
    pub max_size: u32,
    pub sent: u64,
    pub rng: Rng,
}

impl UdpSource {
    /// Wire size of the next packet.
    pub fn next_size(&mut self) -> u32 {
        match self.sizes {
            SizeDist::Fixed => self.mean_size,
            SizeDist::Exponential => {
                let u: f64 = 1.0 - self.rng.gen::<f64>();
                let s = (-u.ln() * self.mean_size as f64).round() as u64;
                s.clamp(1, self.max_size as u64) as u32
            }
        }
    }
    /// Gap until the next packet.
    pub fn next_gap(&mut self) -> SimTime {
        let mean = ser_time(self.mean_size as u64, self.rate_bps);
        match self.arrivals {
            Arrivals::Constant => mean,
            Arrivals::Poisson => {
                let u: f64 = 1.0 - self.rng.gen::<f64>();
                SimTime((-u.ln() * mean.0 as f64).round() as u64)
            }
        }
    }
}
