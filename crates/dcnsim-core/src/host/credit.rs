//! Receiver-paced credits: the seam a receiver-driven transport builds on (the Ultra
//! Ethernet transport's receiver credit congestion control, RCCC; NDP's and Homa's pull
//! pacing). The receiver of a flow grants its sender `bytes` more every `every`, on a timer
//! of its own, in a reply of kind `PktKind::Credit` whose `seq` is the cumulative grant;
//! the sender hands each grant to its congestion control
//! (`CongestionControl::on_credit`), which today's algorithms ignore.
//!
//! A grant is `k x bytes` at `start + k x every` (k = 1, 2, ...): it depends on the flow's
//! start and the time alone, so the receiver keeps no state for it, and a run split over
//! threads grants as one thread does. The receiver grants until it holds every byte.
//! Only TCP flows' receivers grant (a RoCE reply of this kind has no wire format).
//! `SimConfig::credits` sets it; no scenario key (a test seam). Ultra Ethernet's RCCC
//! (`host/rccc.rs`) sends its pulls as this kind too, from a pacer per receiving NIC.

use crate::sim::SimTime;

/// How every TCP receiver paces its credits (`SimConfig::credits`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CreditPacing {
    /// Time between two grants.
    pub every: SimTime,
    /// Bytes each grant adds.
    pub bytes: u32,
}

impl CreditPacing {
    /// The cumulative grant of a flow that started at `start`, at `now` (a grant time).
    pub fn granted(&self, start: SimTime, now: SimTime) -> u64 {
        (now - start).0 / self.every.0.max(1) * self.bytes as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_is_the_credits_paced_since_the_start() {
        let c = CreditPacing { every: SimTime::from_ns(1_200), bytes: 1_460 };
        let start = SimTime::from_us(3);
        assert_eq!(c.granted(start, start + SimTime::from_ns(1_200)), 1_460);
        assert_eq!(c.granted(start, start + SimTime::from_ns(12_000)), 14_600);
    }
}
