//! Simulated time: an integer count of picoseconds.
//! No floating-point clock: serialization times are exact integer divisions
//! rounded up, so a 1500 B frame on a 100 Gbps link takes exactly 120 000 ps.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in (or span of) simulated time, in picoseconds.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    pub const fn ps(self) -> u64 {
        self.0
    }
    pub const fn from_ns(ns: u64) -> SimTime {
        SimTime(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> SimTime {
        SimTime(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000_000)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime((s * 1e12).round().max(0.0) as u64)
    }
    pub fn saturating_sub(self, o: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(o.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, o: SimTime) -> SimTime {
        SimTime(self.0 + o.0)
    }
}
impl AddAssign for SimTime {
    #[inline]
    fn add_assign(&mut self, o: SimTime) {
        self.0 += o.0
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, o: SimTime) -> SimTime {
        SimTime(self.0 - o.0)
    }
}

impl fmt::Debug for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ps", self.0)
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps >= 1_000_000_000 {
            write!(f, "{:.3}ms", ps as f64 / 1e9)
        } else if ps >= 1_000_000 {
            write!(f, "{:.3}us", ps as f64 / 1e6)
        } else {
            write!(f, "{}ns", ps as f64 / 1e3)
        }
    }
}

/// Bytes a link of `rate_bps` clocks out in `t`, rounded up; saturates at u64::MAX (a
/// cap that large is no cap) rather than wrapping.
pub fn bytes_in(t: SimTime, rate_bps: u64) -> u64 {
    let b = (t.0 as u128 * rate_bps as u128).div_ceil(8 * 1_000_000_000_000u128);
    b.min(u64::MAX as u128) as u64
}

/// Time to clock `bytes` onto a link of `rate_bps`, rounded up to the next picosecond.
#[inline]
pub fn ser_time(bytes: u64, rate_bps: u64) -> SimTime {
    let num = bytes as u128 * 8 * 1_000_000_000_000u128;
    let r = rate_bps as u128;
    SimTime(num.div_ceil(r) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn serialization_is_exact() {
        assert_eq!(ser_time(1500, 100_000_000_000), SimTime(120_000));
        assert_eq!(ser_time(1500, 10_000_000_000), SimTime(1_200_000));
        assert_eq!(ser_time(64, 400_000_000_000), SimTime(1_280));
        // 1 byte at 3 bps = 8/3 s, rounded up
        assert_eq!(ser_time(1, 3), SimTime(2_666_666_666_667));
    }
}
