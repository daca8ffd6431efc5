//! How a sender spreads a flow's packets over the fabric's equal-cost paths: the entropy
//! each packet carries (`Packet::hash`), which switches hash to pick among next hops
//! (`Routes::next_hop`).

use crate::sim::rng::mix64;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a flow's sender sets the entropy of each data packet it sends. Per-flow ECMP keeps
/// one entropy for the whole flow, so every packet takes one path; packet spraying gives
/// each packet its own, so a flow's packets spread over every equal-cost path (and may
/// arrive out of order). A packet's reply (ACK, NACK, CNP) carries the entropy of the
/// packet it answers.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PathChoice {
    /// One entropy per flow (per-flow ECMP, RFC 2992).
    #[default]
    PerFlow,
    /// A pseudo-random entropy per packet, from the flow's entropy, the packet's sequence
    /// number and how often it was sent before (every retransmission tries another path,
    /// as htsim gives every packet it sends the next entropy):
    /// oblivious packet spraying (Dixit et al., "On the impact of packet spraying in data
    /// center networks", INFOCOM 2013; the UEC's htsim, `uec.cpp`, its oblivious mode).
    Spray,
    /// UET flows only: REPS, recycled entropies (`host/reps.rs`): each packet on the entropy
    /// of an earlier packet acknowledged unmarked, else a random one.
    Reps,
}

impl PathChoice {
    /// The entropy of a data packet of a flow whose own entropy is `flow`, starting at byte
    /// `seq`, sent `resent` times before (0: its first transmission).
    #[inline(always)]
    pub fn entropy(self, flow: u32, seq: u64, resent: u32) -> u32 {
        match self {
            PathChoice::PerFlow => flow,
            // (a REPS sender chooses its own: `UetSender::entropy`; others spray.) The first
            // resend's bit and the later ones' count are apart, so that the first two
            // transmissions keep the entropies they had before resends were counted.
            PathChoice::Spray | PathChoice::Reps => {
                let again = (resent > 0) as u64;
                mix64((flow as u64) << 32 ^ seq ^ again << 63 ^ (resent.saturating_sub(1) as u64) << 40) as u32
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PathChoice;
    /// Per-flow: one entropy. Spraying: one per packet, spread evenly enough that a
    /// 4-way ECMP choice (multiply-shift on the hash, as `Routes::next_hop` does it) sends
    /// each way between 20% and 30% of 4,000 packets; every retransmission gets another.
    #[test]
    fn spraying_spreads_a_flows_packets_per_flow_keeps_one() {
        let seqs = (0..4_000u64).map(|i| i * 1_460);
        assert!(seqs.clone().all(|s| PathChoice::PerFlow.entropy(99, s, 0) == 99));
        let mut ways = [0u32; 4];
        for s in seqs {
            let e = PathChoice::Spray.entropy(99, s, 0);
            ways[((crate::sim::rng::mix64(e as u64) as u128 * 4) >> 64) as usize] += 1;
            // every resend another entropy, not only the first
            let resends: std::collections::BTreeSet<u32> = (0..6).map(|n| PathChoice::Spray.entropy(99, s, n)).collect();
            assert_eq!(resends.len(), 6);
        }
        assert!(ways.iter().all(|&n| (800..1_200).contains(&n)), "{ways:?}");
    }
}
