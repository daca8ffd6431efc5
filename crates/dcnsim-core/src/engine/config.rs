//! What a run is configured with (`SimConfig`), as the scenario builder resolves it.

use super::*;

/// UDP parameters shared by all UDP flows.
#[derive(Clone, Debug)]
pub struct UdpParams {
    pub rate_bps: Option<u64>,
    pub arrivals: Arrivals,
    pub sizes: SizeDist,
    pub packet_size: u32,
    /// Bytes a UDP source may have waiting in its NIC queue before it waits too (a transmit
    /// ring); None: unbounded.
    pub nic_buffer: Option<u64>,
}

/// Periodic sampling of every switch egress queue's depth (`metrics.queue_sample`), the
/// periodic queue-depth measurement of seed 003 and the queue-size pdfs of seed 002.
#[derive(Clone, Copy, Debug)]
pub struct QueueSampling {
    /// Interval between samples.
    pub every: SimTime,
    /// Histogram bin width in bytes.
    pub bin: u64,
    /// Time of the first sample: a warm-up left out of the histograms.
    pub from: SimTime,
}

/// Engine configuration, fully resolved (no defaults left, no files).
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    pub max_time: SimTime,
    pub mtu: u32,
    pub header: u32,
    pub ack_size: u32,
    pub queues: usize,
    /// Traffic class (queue index) of each packet priority 0..7 (IEEE 802.1Q table 8-5 style).
    pub class_of: [u8; 8],
    pub scheduler: Scheduler,
    pub buffer: BufferParams,
    pub switch_latency: SimTime,
    /// The switch mechanisms that are configured.
    pub mechanisms: MechanismParams,
    pub tcp: TcpParams,
    pub udp: UdpParams,
    pub roce: RoceParams,
    pub uet: crate::host::uet::UetParams,
    pub tags: Vec<String>,
    pub fct_bins: Vec<u64>,
    /// Check packet conservation and buffer bounds as the run goes.
    pub check_invariants: bool,
    /// Sample switch queue depths into histograms.
    pub queue_sample: Option<QueueSampling>,
    /// Record per-flow goodput in bins of this width.
    pub throughput_bin: Option<SimTime>,
    /// Capture the frames of some ports into a pcapng file.
    pub capture: Option<crate::capture::CaptureParams>,
    /// Closed-loop generators, by the id in `FlowSpec::closed_loop`.
    pub loops: Vec<crate::workload::closed_loop::ClosedLoop>,
    /// What the builder found suspicious but valid (reported in the summary's `warnings`).
    pub warnings: Vec<String>,
    /// The run has closed-loop UDP flows (seed 001's L2 generators): the flows table
    /// reports their mean frame latency.
    pub frame_latency: bool,
    /// Each frame a host puts on its link arrives at the far end later by a seeded draw from
    /// [0, `host_jitter`) ps, one per back-to-back run of frames (`Sim::host_jitter`); zero:
    /// exactly on time.
    pub host_jitter: SimTime,
    /// Bytes each host is planned to send and receive (the sizes of the flows the workloads
    /// make, repeats of closed loops not counted), by host index: the weights by which a
    /// run split over threads balances its partitions (`Sim::partition`). Empty: even.
    pub host_load: Vec<f64>,
    /// Some flow continues another when it ends (a closed loop's next message, a persistent
    /// flow's next transfer): a run split over threads gives flows local ids
    /// (engine/parallel.rs, `Ids`).
    pub repeats: bool,
    /// A datagram flow that is not a closed loop continues where it finishes, at its
    /// destination: the run cannot be split over threads (`Sim::parallel_blocker`).
    pub repeats_at_destination: bool,
    /// How senders set each data packet's entropy, which the switches' ECMP hashes: one per
    /// flow (the default) or one per packet (spraying), for every transport but UET, whose
    /// senders choose their own (`UetParams::path`).
    pub path: crate::host::path::PathChoice,
    /// Links that fail, come back or change rate during the run (`net::link`); no scenario
    /// key sets them yet.
    pub link_changes: Vec<crate::net::LinkChange>,
    /// How long after a link fails or comes back the routes follow it (the failure's
    /// detection and the routing protocol's convergence together).
    pub reroute_after: SimTime,
    /// Receivers that pace credits to their senders (`host::credit`); no scenario key sets
    /// it yet.
    pub credits: Option<crate::host::credit::CreditPacing>,
}

/// The default `SimConfig::host_jitter`: a quarter of a nanosecond, less than the 64 B frame
/// time of a 2 Tbit/s link (so no link reorders its own frames) and far below any time the
/// results resolve, but enough that two hosts' packets reaching a switch at the same
/// picosecond are queued in an order drawn from the seed, not in the order their events were
/// scheduled (issue 34, part 5).
pub const DEFAULT_HOST_JITTER: SimTime = SimTime(256);

impl SimConfig {
    /// Traffic class (queue index) of packet priority `prio` (its low 3 bits).
    #[inline]
    pub fn class(&self, prio: u8) -> usize {
        self.class_of[prio as usize & 7] as usize
    }
}
