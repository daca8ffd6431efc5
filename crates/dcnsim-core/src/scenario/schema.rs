//! The scenario schema: every key a scenario file may contain, with its unit,
//! default and valid range documented once, here.
//!
//! Structs are flat with a `kind` discriminator instead of serde-tagged enums
//! so that error messages keep the full key path; `validate` then rejects keys
//! that do not belong to the chosen kind. Unknown keys are always errors.

pub use super::mechanisms::aqm::{AqmConfig, CoupledAqm, DualPi2Aqm, DualQ2015Aqm, FixedAqm, Pi2Aqm, RampAqm, RedAqm, StepAqm};
pub use super::mechanisms::ci::{CiConfig, CiMarkConfig, CiModeConfig, CimReleaseConfig};
pub use super::mechanisms::drc::DrcConfig;
pub use super::mechanisms::pfc::{PfcAccounting, PfcConfig, PfcMode};
pub use super::mechanisms::qcn::{QcnCpConfig, QcnRpConfig};
pub use super::mechanisms::sfc::{SfcCacheConfig, SfcConfig, SfcModeConfig};
pub use super::transport::{BbrConfig, BbrQuantumConfig, DcqcnConfig, DcqcnPreset, HpccConfig, SwiftConfig, TimelyConfig};
use crate::sim::units::{Bytes, Duration, Rate};
pub use crate::host::udp::{Arrivals, SizeDist};
pub use crate::host::{CcName, TransportKind};
pub use crate::net::fat_tree::CoreWiring;
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// Defaults of the keys whose model has no module of its own, declared once: `validate`, the
// builder and the tables' schema defaults read them, and the reference writes them into the
// doc comments' `{default}`. Mechanism defaults live with their mechanism (`pfc::DEFAULT_*`,
// `ci::DEFAULT_*`, `DcqcnParams`); their tables live in scenario/mechanisms/.
pub const DEFAULT_SEED: u64 = 1;
pub const DEFAULT_MAX_TIME: SimTime = SimTime::from_ms(1000);
pub const DEFAULT_MTU: u64 = 1500;
pub const DEFAULT_RECEIVERS: u32 = 1;
pub const DEFAULT_QUEUES: u8 = 1;
pub const DEFAULT_QUEUE_CAP: u64 = 1_000_000;
pub const DEFAULT_POOL: u64 = 16_000_000;
pub const DEFAULT_GUARANTEED: u64 = 50_000;
pub const DEFAULT_BUFFER_ALPHA: f64 = 1.0;
pub const DEFAULT_HEADER: u64 = 40;
pub const DEFAULT_ACK_SIZE: u64 = 64;
pub const DEFAULT_INIT_CWND: u32 = 10;
pub const DEFAULT_MIN_RTO: SimTime = SimTime::from_ms(1);
/// TCP negotiates selective acknowledgements, as every Linux connection does
/// (`net.ipv4.tcp_sack = 1`).
pub const DEFAULT_SACK: bool = true;
/// TCP finds losses by RFC 6675's DupThresh rules, as ns-3 3.44 does, until the studies are
/// rerun under RACK-TLP (Linux's default since 4.18, `transport.rack = true`).
pub const DEFAULT_RACK: bool = false;
pub const DEFAULT_GROUPS: u32 = 1;
pub const DEFAULT_IN_FLIGHT: u32 = 1;
pub const DEFAULT_MIN_SIZE: u64 = 1;
pub const DEFAULT_FCT_BINS: [u64; 3] = [100_000, 1_000_000, 10_000_000];
pub const DEFAULT_QUEUE_BIN: u64 = 10_000;
pub const DEFAULT_CAPTURE_MAX_FRAMES: u64 = 1_000_000;
pub const DEFAULT_CAPTURE_SNAPLEN: u64 = 128;

fn d_seed() -> u64 {
    DEFAULT_SEED
}
fn d_max_time() -> Duration {
    Duration(DEFAULT_MAX_TIME)
}

/// The whole scenario file.
#[derive(Deserialize, Serialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name, description, seed and run length.
    pub scenario: Meta,
    /// The fabric: hosts, switches and links.
    pub topology: TopologyConfig,
    /// Switch buffers, queues, scheduling and marking (applies to every switch).
    #[serde(default)]
    pub switch: SwitchConfig,
    /// Host transport defaults (a workload may override `kind`).
    #[serde(default)]
    pub transport: TransportConfig,
    /// Traffic sources; several may be combined.
    #[serde(default)]
    pub workload: Vec<WorkloadConfig>,
    /// What results to compute.
    #[serde(default)]
    pub metrics: MetricsConfig,
    /// What the source document of a reproduction states about its set-up.
    #[serde(default)]
    pub source: Option<SourceConfig>,
    /// Links that fail, come back or degrade during the run, and the routes that follow.
    #[serde(default)]
    pub faults: Option<super::faults::FaultsConfig>,
}

/// `[source]`: the numbers the source document a scenario reproduces states about its
/// set-up (docs/reproductions.md), in a form tests/test_source_fidelity.py
/// reads and measures on the fabric the scenario builds: the unloaded RTT with a probe
/// flow, host and switch counts and link rates from the built ports, the link delay from
/// the probe's path, the offered load from the generated flows. The simulation reads none
/// of it. Every key but `document` is optional: declare what the source states.
#[derive(Deserialize, Serialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    /// Where the numbers come from, e.g. "seed 002, slides 8, 13, 26". Required, non-empty.
    pub document: String,
    /// Unloaded round-trip time of one full-sized segment and its ACK between the hosts
    /// `rtt_hosts`, serialization included.
    #[serde(default)]
    pub rtt: Option<Duration>,
    /// The two hosts (indices) of the RTT probe, from and to. Default: the first and the
    /// last host.
    #[serde(default)]
    pub rtt_hosts: Option<[u32; 2]>,
    /// Bandwidth-delay product in full-sized (MTU) packets: `bottleneck_rate` x the measured
    /// RTT / MTU. Needs `bottleneck_rate`.
    #[serde(default)]
    pub bdp_packets: Option<f64>,
    /// The rate the BDP is taken at (the path's bottleneck).
    #[serde(default)]
    pub bottleneck_rate: Option<Rate>,
    /// Number of hosts.
    #[serde(default)]
    pub hosts: Option<u32>,
    /// Number of switches.
    #[serde(default)]
    pub switches: Option<u32>,
    /// Rate of every host link.
    #[serde(default)]
    pub host_rate: Option<Rate>,
    /// Rate of every switch-to-switch link.
    #[serde(default)]
    pub fabric_rate: Option<Rate>,
    /// One-way propagation delay of every link on the probe's path.
    #[serde(default)]
    pub link_delay: Option<Duration>,
    /// Buffer of one egress queue (the static per-queue limit).
    #[serde(default)]
    pub queue_buffer: Option<Bytes>,
    /// Offered load of the workloads tagged `load_tag`: their bytes over the arrival window
    /// as a fraction of the capacity of every host link. Needs `load_tag`.
    #[serde(default)]
    pub load: Option<f64>,
    /// The tag of the flows `load` is about (e.g. "background").
    #[serde(default)]
    pub load_tag: Option<String>,
    /// The most the scenario's workload can deliver on this fabric (payload, above L2), e.g.
    /// seed 001's "peak throughput = 116.73 Gbs above L2": measured with ample buffers and
    /// no congestion control in the switches, where only the links limit it.
    #[serde(default)]
    pub peak_throughput: Option<Rate>,
}

/// `[scenario]`: identity and run control.
#[derive(Deserialize, Serialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Short identifier, used in output tables. Required, non-empty.
    pub name: String,
    /// One line shown by `dcnsim scenarios`. Default {default}.
    #[serde(default)]
    pub description: String,
    /// Master seed; every random stream derives from it. Default {default}.
    #[serde(default = "d_seed")]
    pub seed: u64,
    /// New flows of open-loop workloads arrive during [0, arrivals_for). Default: max_time;
    /// at most max_time.
    #[serde(default)]
    pub arrivals_for: Option<Duration>,
    /// Hard stop; flows not finished by then are reported unfinished. Default {default}; > 0.
    #[serde(default = "d_max_time")]
    pub max_time: Duration,
}

/// Topology families.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// N senders on one switch, M receivers on another, one bottleneck link between.
    Dumbbell,
    /// 2-tier leaf-spine Clos: every ToR connects to every spine.
    Clos2,
    /// 3-tier fat-tree (Al-Fares et al., SIGCOMM 2008), k-ary or explicit sizes (seed 004).
    FatTree3,
    /// Hosts, switches and links listed explicitly.
    Custom,
}

/// A link's rate and one-way propagation delay.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Line rate, e.g. "100Gbps". Must be > 0.
    pub rate: Rate,
    /// One-way propagation delay, e.g. "200ns"; >= 0.
    pub delay: Duration,
}

/// One link of a custom topology.
#[derive(Deserialize, Serialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomLink {
    /// Name of one end (a host or a switch of the topology).
    pub a: String,
    /// Name of the other end; not the same node as `a`.
    pub b: String,
    /// Line rate, e.g. "100Gbps". Must be > 0.
    pub rate: Rate,
    /// One-way propagation delay, e.g. "200ns"; >= 0.
    pub delay: Duration,
}

/// `[topology]`. Which keys apply depends on `kind`.
#[derive(Deserialize, Serialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopologyConfig {
    /// Topology family (required); it decides which of the keys below apply.
    pub kind: TopologyKind,
    /// Full-size packet on the wire, headers included. Default {default}; 128B..65535B.
    #[serde(default)]
    #[schemars(default = "d_topology_config_mtu")]
    pub mtu: Option<Bytes>,
    /// Host-to-switch links. Required for dumbbell, clos2 and fat_tree3.
    #[serde(default)]
    pub host_link: Option<LinkSpec>,
    /// Switch-to-switch links (clos2, fat_tree3). Default: host_link.
    #[serde(default)]
    pub fabric_link: Option<LinkSpec>,
    /// fat_tree3 only: aggregation-to-core links. Default: fabric_link.
    #[serde(default)]
    pub core_link: Option<LinkSpec>,
    /// dumbbell (required): hosts on the left switch. >= 1.
    #[serde(default)]
    pub senders: Option<u32>,
    /// dumbbell: hosts on the right switch. Default {default}; >= 1.
    #[serde(default)]
    #[schemars(default = "d_topology_config_receivers")]
    pub receivers: Option<u32>,
    /// dumbbell (required): the link between the two switches.
    #[serde(default)]
    pub bottleneck: Option<LinkSpec>,
    /// clos2 (required): hosts per ToR. >= 1.
    #[serde(default)]
    pub servers_per_tor: Option<u32>,
    /// clos2 (required): number of ToR (leaf) switches. >= 1.
    #[serde(default)]
    pub tors: Option<u32>,
    /// clos2: number of spine switches, >= 1; required unless `oversubscription` is given.
    #[serde(default)]
    pub spines: Option<u32>,
    /// clos2: ToR downlink capacity / uplink capacity (> 0), used instead of `spines` to derive
    /// spines = ceil(servers_per_tor * host rate / (fabric rate * oversubscription)).
    #[serde(default)]
    pub oversubscription: Option<f64>,
    /// clos2: how server indices map onto ToRs: "by_tor" (default: servers 0..servers_per_tor-1
    /// on tor0, and so on) or "interleaved" (server i on ToR i mod tors, so that a workload's
    /// range of consecutive servers spreads over every ToR).
    #[serde(default)]
    pub placement: Option<Placement>,
    /// fat_tree3: switch radix k (even); k pods, k/2 ToR and k/2 aggregation switches per pod,
    /// (k/2)^2 cores, k/2 hosts per ToR. Even, >= 2. Alternative to the explicit keys below.
    #[serde(default)]
    pub k: Option<u32>,
    /// fat_tree3 explicit: number of pods. >= 1.
    #[serde(default)]
    pub pods: Option<u32>,
    /// fat_tree3 explicit: ToR switches per pod (each connects to every aggregation switch of its
    /// pod). >= 1.
    #[serde(default)]
    pub tors_per_pod: Option<u32>,
    /// fat_tree3 explicit: aggregation switches per pod. >= 1.
    #[serde(default)]
    pub aggs_per_pod: Option<u32>,
    /// fat_tree3 explicit: hosts per ToR. >= 1.
    #[serde(default)]
    pub hosts_per_tor: Option<u32>,
    /// fat_tree3 explicit: core switches; with core_wiring = "groups" a multiple of aggs_per_pod.
    #[serde(default)]
    pub cores: Option<u32>,
    /// fat_tree3: how aggregation switches connect to the cores, one link per connected pair:
    /// "groups" (default; aggregation switch j of every pod to core group j, cores /
    /// aggs_per_pod cores, as Al-Fares et al.) or "all" (every aggregation switch to every
    /// core: seed 004's "20 agg sw to 16 core sw (1 links)" at "Switch radix: 20").
    #[serde(default)]
    pub core_wiring: Option<CoreWiring>,
    /// custom (required): host names, unique, at least 2; host index = position in this list.
    /// Every host has exactly one link (a single NIC).
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
    /// custom (required): switch names, unique.
    #[serde(default)]
    pub switches: Option<Vec<String>>,
    /// custom (required): links between named nodes; every host must reach every other host.
    #[serde(default)]
    pub links: Option<Vec<CustomLink>>,
    /// custom: static routes that replace the shortest-path (ECMP) choice of one switch for one
    /// destination host; they may form loops (e.g. to study PFC deadlock).
    #[serde(default)]
    pub routes: Option<Vec<StaticRoute>>,
}

fn d_topology_config_mtu() -> Option<Bytes> {
    Some(Bytes(DEFAULT_MTU))
}
fn d_topology_config_receivers() -> Option<u32> {
    Some(DEFAULT_RECEIVERS)
}

/// One static route of a custom topology.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct StaticRoute {
    /// The switch whose forwarding entry is replaced.
    pub switch: String,
    /// The destination host.
    pub dst: String,
    /// The neighbour the traffic is sent to: a switch, or the destination host itself; must be
    /// linked to `switch`.
    pub via: String,
}

/// Switch buffer models.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BufferModel {
    /// Each egress queue has its own fixed capacity (seeds 000/003: 1 MB per queue).
    #[default]
    Static,
    /// One shared pool per switch with per-port guarantees and dynamic thresholds
    /// (Choudhury & Hahne, IEEE/ACM ToN 1998; seed 004).
    Shared,
}

/// `switch.buffer`.
#[derive(Deserialize, Serialize, Debug, Clone, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(default = "BufferConfig::defaults")]
pub struct BufferConfig {
    /// "static" (default) or "shared".
    #[serde(default)]
    pub model: BufferModel,
    /// static: capacity of each egress queue, for the packets the buffer model admits.
    /// Default {default}; > 0. A packet of a lossless (PFC) class is admitted by PFC's ingress
    /// accounting instead, per ingress port, so an egress queue fed by several ingress
    /// ports can hold more than this (reported max queue depths above it are by design;
    /// the switch's memory, queue x queues x ports, still bounds the total).
    pub queue: Option<Bytes>,
    /// shared: total buffer of a switch (guarantees included). Default {default}; > 0.
    pub pool: Option<Bytes>,
    /// shared, instead of pool: the buffer per port, each switch's pool this times its
    /// ports (a fabric whose switches differ in radix, e.g. a fat tree's cores grown with
    /// its pods, each switch with the memory per port of a smaller one: 16 MB over 20
    /// ports is 800 KB). Default: none (pool); > 0, at least guaranteed.
    pub pool_per_port: Option<Bytes>,
    /// shared: bytes reserved for each egress port. Default {default}; guaranteed x ports of the
    /// largest switch must fit in the pool.
    pub guaranteed: Option<Bytes>,
    /// shared: dynamic-threshold coefficient: a port may hold alpha * (free shared buffer)
    /// beyond its guarantee. Default {default}; > 0.
    pub alpha: Option<f64>,
    /// shared: an ingress pool for lossless traffic (seed 004's fairness runs: "9MB"), the
    /// view of the buffer PFC's dynamic XOFF (switch.pfc.alpha) takes: a (port, class) pauses
    /// past ingress_guaranteed + alpha x the free ingress pool. Lossy traffic is not
    /// ingress-accounted (the seed disables its ingress pool: "no ingress drops"). Needs
    /// switch.pfc.alpha. Default: none (the dynamic XOFF uses the free egress pool); > 0.
    pub ingress_pool: Option<Bytes>,
    /// shared, with ingress_pool: bytes of each (ingress port, lossless class) counter not
    /// drawn from the ingress pool. Default {default} (seed 004).
    pub ingress_guaranteed: Option<Bytes>,
}

impl BufferConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        BufferConfig {
            queue: Some(Bytes(DEFAULT_QUEUE_CAP)),
            pool: Some(Bytes(DEFAULT_POOL)),
            guaranteed: Some(Bytes(DEFAULT_GUARANTEED)),
            alpha: Some(DEFAULT_BUFFER_ALPHA),
            ingress_guaranteed: Some(Bytes(DEFAULT_GUARANTEED)),
            ..Default::default()
        }
    }
}

/// Egress scheduler among the queues of a port.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// Highest queue index first (802.1Q strict priority: 7 is the highest).
    #[default]
    Strict,
    /// Deficit weighted round robin (Shreedhar & Varghese, SIGCOMM 1995), `weights` per queue.
    Dwrr,
}

/// `[switch]`.
#[derive(Deserialize, Serialize, Debug, Clone, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(default = "SwitchConfig::defaults")]
pub struct SwitchConfig {
    /// Buffer model and sizes (see `switch.buffer`). Default: static, "1MB" per egress queue.
    #[serde(default)]
    pub buffer: BufferConfig,
    /// Queues (traffic classes) per egress port, 1..8. A packet of priority p uses queue
    /// min(p, queues-1) unless `classes` says otherwise. Default {default}.
    pub queues: Option<u8>,
    /// Priority-to-traffic-class table (the DSCP/PCP mapping of the fabric): entry p is the
    /// queue (0..queues-1) of packets of priority p. 8 entries. Default: min(p, queues-1).
    pub classes: Option<Vec<u8>>,
    /// "strict" (default) or "dwrr".
    #[serde(default)]
    pub scheduler: SchedulerKind,
    /// dwrr: one weight >= 1 per queue; queue i's quantum is weights[i] x MTU bytes. Default all 1.
    pub weights: Option<Vec<u32>>,
    /// Static per-hop forwarding latency added at every switch (seed 003 used "400ns"). Default {default}.
    pub latency: Option<Duration>,
    /// Priority-based Flow Control; absent = no PFC (lossy fabric).
    pub pfc: Option<PfcConfig>,
    /// dwrr: queues served with strict priority ahead of the DWRR set (highest index first),
    /// e.g. [2] for seed 000's mice queue in the 3-queue model. Default none.
    pub strict: Option<Vec<u8>>,
    /// Congestion Isolation (IEEE P802.1Qcz) or its hash-by-destination baseline; absent = off.
    pub ci: Option<CiConfig>,
    /// Source Flow Control (IEEE P802.1Qdw, seed 004); absent = off.
    pub sfc: Option<SfcConfig>,
    /// Quantized Congestion Notification's congestion points (IEEE 802.1Qau); absent = off.
    /// The NICs' reaction points take their constants from `transport.qcn`.
    pub qcn: Option<QcnCpConfig>,
    /// Directional Rate Control (seed 001); absent = off.
    pub drc: Option<DrcConfig>,
    /// FQ-CoDel on every egress queue (RFC 8290, see `switch.fq_codel`); absent = off.
    pub fq_codel: Option<crate::switch::fq_codel::FqCodelConfig>,
    /// In-band network telemetry at switch egress ports (HPCC sec. 3.2, see `switch.int`),
    /// which `transport.cc = "hpcc"` reads; absent = off.
    pub int: Option<crate::switch::int::IntConfig>,
    /// The switches' memory architecture: input queues, VOQs with a crossbar scheduler, or
    /// CIOQ (see `switch.architecture`); an array of such tables (`[[switch.architecture]]`,
    /// each naming its `switches`) where a fabric mixes kinds; absent = output-queued.
    pub architecture: Option<crate::switch::architecture::Architectures>,
    /// Active queue management and ECN marking, chosen by kind (see `switch.aqm`); absent =
    /// none (drop-tail only).
    pub aqm: Option<AqmConfig>,
    /// Switch-side load balancing: a next hop per flowlet (LetFlow) or per packet by the
    /// egress queues (see `switch.load_balance`); absent = per-flow ECMP.
    pub load_balance: Option<crate::switch::load_balance::LoadBalanceConfig>,
    /// Packet trimming: a data packet the buffer cannot hold is cut to its headers and
    /// forwarded in a priority queue (see `switch.trim`); absent = dropped.
    pub trim: Option<crate::switch::trim::TrimConfig>,
}

impl SwitchConfig {
    /// Whether the scenario gives the table `switch.<key>` (for a mechanism's check of the
    /// mechanisms it cannot run beside, which knows them by key, not by this type).
    pub fn has(&self, key: &str) -> bool {
        let v = serde_json::to_value(self).expect("a switch table serializes");
        debug_assert!(v.get(key).is_some(), "switch.{key} is no key of the switch table");
        v.get(key).is_some_and(|t| !t.is_null())
    }
}

impl SwitchConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        SwitchConfig { queues: Some(DEFAULT_QUEUES), latency: Some(Duration(SimTime::ZERO)), ..Default::default() }
    }
}

/// `transport.udp`.
#[derive(Deserialize, Serialize, Debug, Clone, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UdpConfig {
    /// Sending rate of each UDP flow. Default: the host link rate; > 0.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// "constant" (default) or "poisson" packet departures.
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Packet size on the wire (the mean for exponential). Default: MTU; 1B..MTU.
    #[serde(default)]
    pub packet_size: Option<Bytes>,
    /// The source waits while its NIC queue holds this much (a transmit ring: an application
    /// sending "as fast as possible" is held back by a paused or limited NIC), retrying
    /// every frame time. Default: none (the source never waits). At least the MTU. Required
    /// by a datagram closed loop, whose next message starts once the last is in the NIC.
    #[serde(default)]
    pub nic_buffer: Option<Bytes>,
    /// "fixed" (default) or "exponential".
    #[serde(default)]
    pub sizes: SizeDist,
}

/// `[transport]`.
#[derive(Deserialize, Serialize, Debug, Clone, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(default = "TransportConfig::defaults")]
pub struct TransportConfig {
    /// The transport: "tcp", "roce", "udp" or "uet"; or a congestion control's name standing
    /// for itself over its transport ("dctcp", "reno", "cubic", "swift", "bbr": tcp; "dcqcn",
    /// "hpcc", "timely": roce; "nscc", "rccc", "nscc_rccc": uet; "swift" over roce is
    /// `kind = "roce"` with `cc = "swift"`). Default: the transport `cc` runs over, else
    /// "dctcp".
    pub kind: Option<TransportKind>,
    /// The congestion control of tcp (window-based: "dctcp", "reno", "cubic", "swift",
    /// "bbr"), roce (rate-based: "dcqcn", "hpcc", "timely", "swift") or uet ("nscc", "rccc",
    /// "nscc_rccc").
    /// Default: the one `kind` names, else "dctcp" over tcp, "dcqcn" over roce and "nscc"
    /// over uet. Each algorithm's constants are keys of this table (`g` and `ecn` for DCTCP,
    /// `dcqcn`, `hpcc`, `timely`, `swift`, `bbr`, `nscc`).
    pub cc: Option<CcName>,
    /// Header bytes in every data packet (payload = MTU - header). Default {default}; below the MTU.
    pub header: Option<Bytes>,
    /// Size of an ACK on the wire. Default {default}; >= 1B, at most the MTU (an ACK is one frame).
    pub ack_size: Option<Bytes>,
    /// Receiver window of every TCP connection: bytes in flight never exceed it (a fixed
    /// socket buffer without window scaling, e.g. seed 001's "TCP Window size = 64KB").
    /// Default: none; at least the MTU.
    pub window: Option<Bytes>,
    /// Initial congestion window in full-size packets. Default {default} (RFC 6928); >= 1.
    pub init_cwnd: Option<u32>,
    /// TCP (DCTCP, Reno, Cubic): a new connection sends a SYN and waits for the SYN-ACK
    /// (ACK-sized, retransmitted on the RTO with back-off) before its data, and the FCT counts
    /// from the SYN, as ns-3 and htsim count it; the ideal FCT includes that round trip. Flows
    /// that continue a connection (`connection = "reuse"`) have none. Default {default} (RDMA and
    /// persistent connections have no set-up).
    pub handshake: Option<bool>,
    /// TCP: selective acknowledgements. Receivers report the blocks they hold above the
    /// cumulative point (RFC 2018, three at most) and senders recover from loss by them:
    /// RFC 6675's scoreboard, fast recovery on three duplicate ACKs or three segments SACKed
    /// above the first hole, every lost segment resent as the bytes in flight allow, the
    /// window by PRR (RFC 6937), as Linux does; after a timeout go-back-N skips what the
    /// receiver holds. false: NewReno (RFC 6582), one hole per round trip. Default {default}
    /// (Linux's).
    pub sack: Option<bool>,
    /// TCP with `sack`: losses found by RACK-TLP (RFC 8985), as Linux finds them since 4.18
    /// (`net.ipv4.tcp_recovery = 1`, `tcp_early_retrans = 3`): a segment is lost once one
    /// sent after it is delivered and a reordering window has passed (0 until reordering
    /// is seen, then a quarter of the minimum RTT, grown by D-SACKs); two round trips of
    /// silence send a loss probe before the RTO; a recovery whose retransmissions all
    /// prove spurious (D-SACK or echoed send times) is undone. Receivers report duplicates
    /// by D-SACK (RFC 2883). false: RFC 6675's DupThresh rules, as ns-3 3.44. Default
    /// {default}.
    pub rack: Option<bool>,
    /// Minimum retransmission timeout (RFC 6298 uses 1 s; data centers use far less). Default {default}; > 0.
    pub min_rto: Option<Duration>,
    /// RTO before the first RTT sample. Default: min_rto; > 0; a value below min_rto is raised to it.
    pub init_rto: Option<Duration>,
    /// DCTCP: EWMA gain g of alpha. Default {default} (1/16); in (0, 1].
    pub g: Option<f64>,
    /// Reno and Cubic: classic ECN (RFC 3168): ECT(0) data, an ECN-Echo is a congestion event
    /// (Reno halves, Cubic cuts by beta), at most once per window. Default {default}. DCTCP always
    /// uses ECN.
    pub ecn: Option<bool>,
    /// The ECN codepoint of ECN-capable TCP data: "ect1" or "ect0". Default: "ect1" for DCTCP
    /// (the scalable sender of RFC 9331, which a DualQ AQM puts in its L queue), "ect0" for
    /// Reno and Cubic with classic ECN. RoCEv2 data is ECT(0).
    pub ect: Option<EctConfig>,
    /// UDP source parameters.
    #[serde(default)]
    pub udp: UdpConfig,
    /// DCQCN / RoCEv2 parameters.
    #[serde(default)]
    pub dcqcn: DcqcnConfig,
    /// HPCC's constants.
    #[serde(default)]
    pub hpcc: HpccConfig,
    /// TIMELY's constants.
    #[serde(default)]
    pub timely: TimelyConfig,
    /// Swift's constants.
    #[serde(default)]
    pub swift: SwiftConfig,
    /// BBR's send quantum.
    #[serde(default)]
    pub bbr: BbrConfig,
    /// QCN reaction point constants (IEEE 802.1Qau); only with `switch.qcn`.
    pub qcn: Option<QcnRpConfig>,
    /// How senders spread a flow's packets over the fabric's equal-cost paths: "per_flow"
    /// (one entropy per flow, so the switches' ECMP hash keeps it on one path, RFC 2992) or
    /// "spray" (a new pseudo-random entropy per data packet, so its packets take every path
    /// and may arrive out of order: oblivious packet spraying, the UEC htsim's oblivious
    /// mode), or, with UET flows only, "reps" (each packet on the entropy of an earlier
    /// packet acknowledged unmarked: REPS, arXiv 2407.21625, as the UEC's htsim has it).
    /// Default: "per_flow", and "spray" for UET flows (Ultra Ethernet sprays). TCP and RoCE
    /// read reordering as loss.
    pub path: Option<crate::host::path::PathChoice>,
    /// The UET transport's timer (`kind = "uet"`).
    #[serde(default)]
    pub uet: super::transport::UetConfig,
    /// NSCC's constants (`cc = "nscc"`, over uet).
    #[serde(default)]
    pub nscc: super::transport::NsccConfig,
}

impl TransportConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        TransportConfig {
            header: Some(Bytes(DEFAULT_HEADER)),
            ack_size: Some(Bytes(DEFAULT_ACK_SIZE)),
            init_cwnd: Some(DEFAULT_INIT_CWND),
            handshake: Some(false),
            sack: Some(DEFAULT_SACK),
            rack: Some(DEFAULT_RACK),
            min_rto: Some(Duration(DEFAULT_MIN_RTO)),
            g: Some(crate::host::cc::dctcp::DEFAULT_G),
            ecn: Some(false),
            ..Default::default()
        }
    }
}

/// An ECN-capable transport codepoint (RFC 3168 section 5).
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EctConfig {
    /// ECT(0).
    Ect0,
    /// ECT(1).
    Ect1,
}

/// Workload generators.
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    /// Open-loop Poisson flow arrivals at every host, sizes from a CDF, sized to a target load.
    Poisson,
    /// N senders to one receiver (Vasudevan et al., SIGCOMM 2009).
    Incast,
    /// Every host sends one flow to a distinct other host (a random derangement).
    Permutation,
    /// Flows listed explicitly.
    Flows,
    /// Closed-loop message streams (seed 001's database-entry clients and L2 workload
    /// generators): each loop sends its next message as soon as the last one completes, with
    /// exponential sizes, to a fixed destination (`pairs`) or a random other host.
    ClosedLoop,
    /// Flows read from a CSV or Parquet file (`path`), one per row, in start order, as the
    /// run reaches them (docs/workloads.md, "Trace files").
    Trace,
}

/// How `clos2` numbers its servers over the ToRs.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Server i on ToR i / servers_per_tor.
    #[default]
    ByTor,
    /// Server i on ToR i mod tors.
    Interleaved,
}

/// What a persistent incast sender's next flow is.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Connection {
    /// The next message on the same connection, as on a long-lived RDMA queue pair or TCP
    /// connection: same ECMP path and flow identity (CI, ECN), congestion-control state
    /// (DCQCN rate and alpha, TCP window) carried over.
    #[default]
    Reuse,
    /// A new connection: fresh path hash, identity and congestion-control state.
    New,
}

/// When incast rounds happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncastPeriod {
    /// One round at `start`.
    Oneshot,
    /// Each sender sends back-to-back: a new flow as soon as its previous one finishes.
    Persistent,
    /// A new round every given interval.
    Every(Duration),
}

impl Serialize for IncastPeriod {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            IncastPeriod::Oneshot => s.serialize_str("oneshot"),
            IncastPeriod::Persistent => s.serialize_str("persistent"),
            IncastPeriod::Every(d) => d.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for IncastPeriod {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match s.as_str() {
            "oneshot" => Ok(IncastPeriod::Oneshot),
            "persistent" => Ok(IncastPeriod::Persistent),
            _ => crate::sim::units::parse_duration(&s)
                .map(|t| IncastPeriod::Every(Duration(t)))
                .ok_or_else(|| serde::de::Error::custom(format!("invalid value \"{s}\", expected \"oneshot\", \"persistent\" or a duration such as \"100us\""))),
        }
    }
}

impl JsonSchema for IncastPeriod {
    fn schema_name() -> String {
        "IncastPeriod".to_string()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        crate::sim::units::string_schema(
            "incast period",
            "\"oneshot\" (one round at `start`), \"persistent\" (each sender starts a new flow as soon as \
             its previous one finishes) or a duration such as \"100us\" (a new round every interval, > 0).",
            format!("^(?:oneshot|persistent|{})$", crate::sim::units::duration_pattern_body()),
            &["oneshot", "persistent", "100us"],
        )
    }
}

/// One flow of an explicit `flows` workload.
#[derive(Deserialize, Serialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowEntry {
    /// Source host index, 0..hosts-1.
    pub src: u32,
    /// Destination host index, 0..hosts-1, not src.
    pub dst: u32,
    /// Bytes of payload to deliver (wire bytes for UDP), > 0.
    pub size: Bytes,
    /// Start time. Default {default}.
    #[serde(default)]
    #[schemars(default = "d_flow_entry_start")]
    pub start: Option<Duration>,
    /// Priority (traffic class) of this flow, 0..7. Default: the workload's `priority`.
    #[serde(default)]
    pub priority: Option<u8>,
    /// Label in the `tag` column. Default: the workload's `tag`.
    #[serde(default)]
    pub tag: Option<String>,
    /// Transport of this flow, named as `[transport] kind` names one. Default: the
    /// workload's; "tcp" or "roce" alone keep the workload's congestion control if it runs
    /// over that transport.
    #[serde(default)]
    pub transport: Option<TransportKind>,
    /// Congestion control of this flow, as `[transport] cc`. Default: the one `transport`
    /// names, else the workload's if it runs over this flow's transport, else that
    /// transport's default.
    #[serde(default)]
    pub cc: Option<CcName>,
}

fn d_flow_entry_start() -> Option<Duration> {
    Some(Duration(SimTime::ZERO))
}

/// `[[workload]]`. Which keys apply depends on `kind`.
#[derive(Deserialize, Serialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Generator (required); it decides which of the keys below apply.
    pub kind: WorkloadKind,
    /// Label in the `tag` column. Default: the kind ("poisson" is labelled "background").
    #[serde(default)]
    pub tag: Option<String>,
    /// Priority (traffic class) of the flows, 0..7. Default {default}.
    #[serde(default)]
    #[schemars(default = "d_workload_config_priority")]
    pub priority: Option<u8>,
    /// Transport of these flows, named as `[transport] kind` names one. Default: the
    /// scenario's (`[transport]`); "tcp" or "roce" alone keep its congestion control if it
    /// runs over that transport.
    #[serde(default)]
    pub transport: Option<TransportKind>,
    /// Congestion control of these flows, as `[transport] cc`. Default: the one `transport`
    /// names, else the scenario's if it runs over this transport, else that transport's
    /// default.
    #[serde(default)]
    pub cc: Option<CcName>,
    /// First arrival not before this time (not for flows or trace, whose flows give their
    /// own). Default {default}.
    #[serde(default)]
    #[schemars(default = "d_workload_config_start")]
    pub start: Option<Duration>,
    /// No arrival at or after this time (not for flows or trace). Default:
    /// scenario.arrivals_for; after `start`.
    #[serde(default)]
    pub stop: Option<Duration>,
    /// poisson (required): flow-size distribution: "web-search", "data-mining", "google-rpc" or
    /// the path of a CDF file (docs/workloads.md), relative to the working directory.
    #[serde(default)]
    pub sizes: Option<String>,
    /// poisson: offered load as a fraction of each host's link rate, in (0, 1].
    /// incast with a load: incast bytes as a fraction of the total host capacity.
    #[serde(default)]
    pub load: Option<f64>,
    /// poisson: partition hosts into consecutive clusters of this size (2..hosts); destinations stay
    /// within the cluster (seed 000: 50 clusters of 21 servers). Default: all hosts.
    #[serde(default)]
    pub cluster_size: Option<u32>,
    /// incast (required): senders per round (N of N:1), 1..hosts-1.
    #[serde(default)]
    pub fan_in: Option<u32>,
    /// incast and permutation (required): bytes per flow, > 0.
    #[serde(default)]
    pub size: Option<Bytes>,
    /// incast: "oneshot" (default), "persistent" or an interval such as "100us". Not together
    /// with `load`.
    #[serde(default)]
    pub period: Option<IncastPeriod>,
    /// incast: independent incast sets (seed 000 uses 4 sets of 20:1). Default {default}; >= 1.
    #[serde(default)]
    #[schemars(default = "d_workload_config_groups")]
    pub groups: Option<u32>,
    /// incast: fixed receiver host index (only with groups = 1): an index of the topology's
    /// hosts, within `hosts` when the workload has them. Default: random per round.
    #[serde(default)]
    pub receiver: Option<u32>,
    /// incast, oneshot or persistent: the groups' receivers and senders are distinct hosts
    /// (seed 000's four separate 20:1 sets); needs groups x (fan_in + 1) hosts. Default {default}:
    /// each group draws its hosts independently, so groups may share servers.
    #[serde(default)]
    #[schemars(default = "d_workload_config_disjoint_groups")]
    pub disjoint_groups: Option<bool>,
    /// incast: each sender of a round starts at a uniform random offset in [0, stagger) after
    /// the round's start, rather than all together at line rate. Default {default}.
    #[serde(default)]
    #[schemars(default = "d_workload_config_stagger")]
    pub stagger: Option<Duration>,
    /// incast with period = "persistent", and closed_loop with pairs: "reuse" (default: each
    /// sender's flows follow one another on one connection, keeping its path, identity and
    /// congestion-control state) or "new" (every flow starts afresh at line rate on a new
    /// path).
    #[serde(default)]
    pub connection: Option<Connection>,
    /// closed_loop: one loop per [source, destination] pair of host indices; without it, every
    /// host (of `hosts`, if given) loops to a random other host of the set per message.
    #[serde(default)]
    pub pairs: Option<Vec<[u32; 2]>>,
    /// closed_loop: messages each pair (or each host, without pairs) keeps in flight, each
    /// its own loop and connection: a client with that many outstanding requests, e.g. 8 (a
    /// 64 KB window of 8,000 B entries, seed 001). Default {default}.
    #[serde(default)]
    #[schemars(default = "d_workload_config_in_flight")]
    pub in_flight: Option<u32>,
    /// closed_loop (required): mean message size of the exponential sizes, e.g. "8000B" (seed 001).
    #[serde(default)]
    pub mean_size: Option<Bytes>,
    /// closed_loop: smallest message; smaller draws are redrawn. Default {default}.
    #[serde(default)]
    #[schemars(default = "d_workload_config_min_size")]
    pub min_size: Option<Bytes>,
    /// closed_loop: largest message; larger draws are redrawn. Default: 16 x mean_size. A draw
    /// must fall in [min_size, max_size] with probability >= 1e-6.
    #[serde(default)]
    pub max_size: Option<Bytes>,
    /// flows (required): the explicit list.
    #[serde(default)]
    pub flows: Option<Vec<FlowEntry>>,
    /// trace (required): the file of flows, CSV (*.csv) or Parquet (*.parquet), relative to
    /// the working directory; columns src, dst, size_bytes (or size), start_ps (or start) and
    /// optionally priority, tag, transport and cc (docs/workloads.md, "Trace files").
    #[serde(default)]
    pub path: Option<String>,
    /// poisson, incast and permutation: only hosts first..end-1 take part, given as
    /// [first, end] (seed 000 runs its clusters and its incast sets on separate servers).
    /// Default: all hosts.
    #[serde(default)]
    pub hosts: Option<Vec<u32>>,
    /// Flows smaller than this get `mice_priority` (a sender that knows its message sizes,
    /// as in seed 000's 3-queue model with a mice queue). Default: no mice class.
    #[serde(default)]
    pub mice_below: Option<Bytes>,
    /// Priority of mice flows, 0..7. Required with mice_below.
    #[serde(default)]
    pub mice_priority: Option<u8>,
}

fn d_workload_config_priority() -> Option<u8> {
    Some(0)
}
fn d_workload_config_start() -> Option<Duration> {
    Some(Duration(SimTime::ZERO))
}
fn d_workload_config_groups() -> Option<u32> {
    Some(DEFAULT_GROUPS)
}
fn d_workload_config_disjoint_groups() -> Option<bool> {
    Some(false)
}
fn d_workload_config_stagger() -> Option<Duration> {
    Some(Duration(SimTime::ZERO))
}
fn d_workload_config_in_flight() -> Option<u32> {
    Some(DEFAULT_IN_FLIGHT)
}
fn d_workload_config_min_size() -> Option<Bytes> {
    Some(Bytes(DEFAULT_MIN_SIZE))
}

/// `[metrics]`.
#[derive(Deserialize, Serialize, Debug, Clone, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(default = "MetricsConfig::defaults")]
pub struct MetricsConfig {
    /// Upper edges of the FCT size bins, non-empty and strictly increasing.
    /// Default ["100KB", "1MB", "10MB"] (seed 000).
    pub fct_bins: Option<Vec<Bytes>>,
    /// Sample the depth of every switch egress queue at this interval into per-queue histograms
    /// (queues.parquet), as seed 003 samples "the queue depth in the fabric periodically",
    /// and per class over time (queue_series.parquet: the deepest queue, the total, the busy
    /// ones). Default: no sampling; > 0.
    pub queue_sample: Option<Duration>,
    /// Take the first sample at this time, leaving a warm-up (slow start) out of the
    /// histograms, e.g. "10s" for seed 002's steady-state pdfs. Default {default}; before max_time.
    pub queue_sample_from: Option<Duration>,
    /// Histogram bin width of the sampled depths. Default {default}; > 0.
    pub queue_bin: Option<Bytes>,
    /// Record each flow's goodput (payload bytes delivered in order to the receiver) per bin
    /// of this width (timeseries.parquet: flow, bin start, bytes), e.g. "10us" for the
    /// per-flow link shares of a fairness study. Default: not recorded; > 0.
    pub throughput_bin: Option<Duration>,
    /// Write the frames that chosen ports send into a pcapng file (capture.pcapng) that
    /// Wireshark opens, with real encodings (docs/capture.md). Default: no capture.
    pub capture: Option<CaptureConfig>,
    /// Record each UDP flow's mean frame latency, from a frame's making at its source to its
    /// arrival (`mean_frame_latency_ps` in flows.parquet; other transports' flows NaN), e.g.
    /// for a switch's delay against queueing theory. Default: on in runs with closed-loop UDP
    /// flows, off in others.
    pub frame_latency: Option<bool>,
}

impl MetricsConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        MetricsConfig { queue_sample_from: Some(Duration(SimTime::ZERO)), queue_bin: Some(Bytes(DEFAULT_QUEUE_BIN)), ..Default::default() }
    }
}

/// `metrics.capture`: a packet capture of chosen ports, as a tap on each port's transmit
/// side would take it (one pcapng interface per port, timestamps at the first bit, in ns).
#[derive(Deserialize, Serialize, Debug, Clone, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(default = "CaptureConfig::defaults")]
pub struct CaptureConfig {
    /// The ports to capture (required, non-empty): a node's name for all its ports ("tor0"),
    /// "node:N" for its port N (the `port` column of ports.parquet, "tor0:2") or "node->peer"
    /// for its port toward a neighbour ("tor0->h3"). Each captures what that port sends; list
    /// both ends of a link for both directions.
    #[serde(default)]
    pub ports: Vec<String>,
    /// Frames that start before this time are not captured. Default {default}.
    pub from: Option<Duration>,
    /// Frames that start at or after this time are not captured. Default: scenario.max_time;
    /// after `from`.
    pub to: Option<Duration>,
    /// "control" (default): the congestion-management frames only (PFC and PAUSE, QCN CNMs,
    /// CI's CIMs, SFC messages, DRC frames and DCQCN's CNPs); "all": every frame, data and
    /// acknowledgements too (only their headers are kept).
    pub frames: Option<CaptureFrames>,
    /// Bytes kept of each frame, as `tcpdump -s` keeps them (the frame's length is recorded
    /// whole). Default {default}: every header dcnsim writes, the payload (zeros) cut; "0B"
    /// keeps whole frames. Wireshark marks a cut RoCEv2 data frame "Invalid Packet
    /// Length from LRH! [Malformed Packet]", as it does any cut RoCEv2 capture.
    pub snaplen: Option<Bytes>,
    /// The capture stops after this many frames, and the run's warnings say so. Default
    /// {default} (up to 170 MB at the default snaplen, held in memory until the run ends); > 0.
    pub max_frames: Option<u64>,
}

impl CaptureConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        CaptureConfig { from: Some(Duration(SimTime::ZERO)), snaplen: Some(Bytes(DEFAULT_CAPTURE_SNAPLEN)), max_frames: Some(DEFAULT_CAPTURE_MAX_FRAMES), ..Default::default() }
    }
}

/// Which frames `metrics.capture` keeps.
#[derive(Deserialize, Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CaptureFrames {
    /// Congestion-management frames and messages.
    #[default]
    Control,
    /// Every frame.
    All,
}

// Keys read by both `validate` and the builder resolve their default here, once.
impl TopologyConfig {
    /// `topology.mtu` in bytes.
    pub fn mtu(&self) -> u64 {
        self.mtu.map_or(DEFAULT_MTU, |b| b.0)
    }
}

impl CaptureConfig {
    /// `metrics.capture.snaplen` in bytes; None: whole frames ("0B").
    pub fn snaplen(&self) -> Option<u64> {
        Some(self.snaplen.map_or(DEFAULT_CAPTURE_SNAPLEN, |b| b.0)).filter(|&n| n > 0)
    }
    /// `metrics.capture.max_frames`.
    pub fn max_frames(&self) -> u64 {
        self.max_frames.unwrap_or(DEFAULT_CAPTURE_MAX_FRAMES)
    }
}

impl SwitchConfig {
    /// `switch.queues`.
    pub fn queues(&self) -> u8 {
        self.queues.unwrap_or(DEFAULT_QUEUES)
    }
}

impl TransportConfig {
    /// `transport.header` in bytes.
    pub fn header(&self) -> u64 {
        self.header.map_or(DEFAULT_HEADER, |b| b.0)
    }
}
