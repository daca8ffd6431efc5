//! Switch models: output-queued shared-memory switch with several queues per
//! egress port, buffer admission and egress scheduling, and the mechanisms that act in
//! the switch pipeline (`pipeline`): ECN marking, PFC, Congestion Isolation.
pub mod aqm;
pub mod architecture;
#[cfg(test)]
pub mod bench;
pub mod buffer;
pub mod ci;
pub mod drc;
pub mod ecn;
pub mod fq_codel;
pub mod int;
pub mod load_balance;
pub mod mechanism;
pub mod pfc;
pub mod pipeline;
pub mod qcn;
pub mod sfc;
#[cfg(test)]
pub mod stand_in;
pub mod trim;

pub use buffer::{BufferParams, SwitchBuffer};
pub use ecn::{EcnMarker, Red};
pub use pipeline::SwitchState;

use crate::net::{FlowId, HostId, PacketArena, PktId, PktQueue, PortId};
use crate::sim::SimTime;
use crate::net::DropReason;
use pipeline::{Admission, AqmAction, AqmRule, Arrival, Ctx, Departure, Overflow, Report, RouteAt};

// The switch mechanisms in pipeline order: every stage calls the configured ones that act
// there in this order (`switch::mechanism`). A new mechanism is its own file and one entry.
mechanism::switch_mechanisms! {
    /// PFC (802.1Qbb) or 802.3x link pause.
    pfc: Pfc => pfc::Pfc,
    /// Congestion Isolation (P802.1Qcz) or its hash baseline.
    ci: Ci => ci::Ci,
    /// ECN marking (RED ramp / step).
    ecn: Ecn => ecn::EcnMarker,
    /// Source Flow Control (P802.1Qdw).
    sfc: Sfc => sfc::Sfc,
    /// `switch.aqm` (validation keeps it apart from `ecn`).
    aqm: Aqm => aqm::Aqm,
    /// Quantized Congestion Notification (802.1Qau): congestion points and reaction points.
    qcn: Qcn => qcn::Qcn,
    /// Directional Rate Control (seed 001).
    drc: Drc => drc::Drc,
    /// FQ-CoDel (RFC 8290).
    fq_codel: FqCodel => fq_codel::FqCodel,
    /// In-band network telemetry (HPCC sec. 3.2).
    int: Int => int::Int,
    /// Switch memory architectures: input queues, VOQs and a crossbar (issue 58).
    architecture: Architecture => architecture::Architecture,
    /// Flowlet switching and adaptive routing (issue 59).
    load_balance: LoadBalance => load_balance::LoadBalance,
    /// Packet trimming (NDP; Ultra Ethernet).
    trim: Trim => trim::Trim,
    /// A test's stand-in for the seams no shipped mechanism uses yet (routing, trimming).
    #[cfg(test)]
    stand_in: StandIn => stand_in::StandIn,
}
