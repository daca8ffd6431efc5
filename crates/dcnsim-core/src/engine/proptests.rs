//! Property tests of the engine's invariants on random small scenarios
//! (property tests for invariants).
//!
//! Each case is a small dumbbell, 2-tier Clos or custom line/ring of switches with random
//! static routes (loops included) with random link rates and
//! delays, MTU and switch latency, a static or shared buffer, optional ECN,
//! 1-4 queues under strict priority or DWRR, Congestion Isolation (isolate or
//! hash-by-destination, random thresholds and marking) when there are 2 queues
//! or more, PFC (802.1Qbb or 802.3x, ingress or egress-queue accounting, static or
//! dynamic XOFF, derived headroom), any one more mechanism of the list in switch/mod.rs
//! with the table it draws for itself (`SwitchMechanism::arbitrary`: SFC, QCN, DRC,
//! FQ-CoDel, INT, every `switch.aqm` kind), and 1-12 explicit flows (1 B to 2 MB, random
//! start and priority) mixing every listed congestion control (a test's stand-in
//! included, `CcName::listed`) and UDP. The
//! case is rendered to scenario TOML and loaded through the scenario layer
//! with `check_invariants` on, so a failing case prints as a scenario file
//! that can be run by hand. Properties:
//!
//! - packet conservation: created == consumed + dropped + live, part-way
//!   through the run and at the end; in the tables, every packet a host made
//!   was sent by its NIC (ports table) or still waits there;
//! - no invariant violation (queue occupancy never above its buffer limit);
//! - a finished TCP flow has delivered exactly its size, no flow more than its
//!   size; every finished flow has fct >= its ideal fct and ended by the end
//!   of the run, which is not after max_time;
//! - a packet is only delivered to its destination host (no wrong-host drop);
//! - with 802.1Qbb ingress accounting and derived headroom, no lossless packet is dropped;
//! - determinism: a second run (driven to the end in one call instead of two, and
//!   without the invariant checks, so with the idle-port cut-through where it applies)
//!   gives identical flow and port tables and summary, and so does the run split over 2
//!   and 3 threads (engine/parallel.rs) where it can be; with closed loops or a
//!   persistent incast beside the flows, and a capture and goodput series in some cases,
//!   the split run gives one thread's tables, summary and capture bytes
//!   (`split_runs_with_continuations_match_one_thread`);
//! - end reason "completed" means every flow finished; "idle" (nothing left to
//!   happen) leaves only UDP flows unfinished, since an unfinished TCP flow
//!   always has a retransmission timer pending.
//!
//! `engine_invariants_hold_through_the_seams` runs the same properties with the engine's
//! seams set on the configuration (`Seams`: the test stand-in mechanism routing, trimming
//! or queueing at its inputs, sprayed entropies, selective acknowledgements, a link that
//! fails and may come back, receivers that pace credits), relaxing only what they change by design: a sprayed, routed
//! or rerouted flow may beat the ideal FCT of its hash path, a failed link drops lossless
//! packets, and a TCP flow behind a failed NIC link may never send.

use crate::metrics::{Results, Table};
use crate::sim::SimTime;
use proptest::prelude::*;
use std::fmt;

#[derive(Clone, Copy, Debug)]
struct Link {
    gbps: u32,
    delay_ns: u32,
}

#[derive(Clone, Debug)]
enum Topo {
    Dumbbell {
        senders: u32,
        receivers: u32,
        host: Link,
        bottleneck: Link,
    },
    Clos {
        tors: u32,
        servers_per_tor: u32,
        spines: u32,
        host: Link,
        fabric: Link,
    },
    /// `switches` in a line (a ring when `ring`), `hosts` spread round-robin over them, and
    /// static routes (switch, destination host, choice of neighbour) that may form loops.
    Custom {
        switches: u32,
        hosts: u32,
        ring: bool,
        routes: Vec<(u32, u32, u32)>,
        host: Link,
        fabric: Link,
    },
}

impl Topo {
    /// Custom: the neighbours of switch `s` a route to host `d` may go via (adjacent
    /// switches, and `d` itself when it hangs off `s`).
    fn custom_neighbours(switches: u32, ring: bool, s: u32, d: u32) -> Vec<String> {
        let mut n = Vec::new();
        if s > 0 {
            n.push(format!("s{}", s - 1));
        }
        if s + 1 < switches {
            n.push(format!("s{}", s + 1));
        }
        if ring && switches > 2 && (s == 0 || s + 1 == switches) {
            n.push(format!("s{}", if s == 0 { switches - 1 } else { 0 }));
        }
        if d % switches == s {
            n.push(format!("h{d}"));
        }
        n
    }
}

impl Topo {
    fn hosts(&self) -> u32 {
        match self {
            Topo::Dumbbell { senders, receivers, .. } => senders + receivers,
            Topo::Clos { tors, servers_per_tor, .. } => tors * servers_per_tor,
            Topo::Custom { hosts, .. } => *hosts,
        }
    }
    /// Ports of the switch with the most ports (for the shared-buffer guarantee check).
    fn max_switch_ports(&self) -> u32 {
        match self {
            Topo::Dumbbell { senders, receivers, .. } => senders.max(receivers) + 1,
            Topo::Clos { tors, servers_per_tor, spines, .. } => (servers_per_tor + spines).max(*tors),
            Topo::Custom { switches, hosts, .. } => hosts.div_ceil(*switches) + 2,
        }
    }
}

#[derive(Clone, Debug)]
enum Buffer {
    Static {
        packets: u32,
    },
    /// `extra_packets` of shared pool beyond every port's guarantee.
    Shared {
        extra_packets: u32,
        guaranteed: u32,
        alpha: f64,
    },
}

#[derive(Clone, Debug)]
enum Ecn {
    Step { k: u32 },
    Red { low: u32, high: u32, pmax: f64 },
}

/// `switch.pfc`: link-level (802.3x) or per class, queue-based accounting, XOFF in
/// packets (static) or a dynamic alpha (used with a shared buffer only).
#[derive(Clone, Copy, Debug)]
struct Pfc {
    link: bool,
    egress_queue: bool,
    xoff_packets: u32,
    alpha: Option<f64>,
}

/// A flow's transport: every congestion control of the lists in host/mod.rs by its name
/// (`CcName::listed`: a new algorithm, or a test's stand-in, is drawn here once it is
/// listed), or UDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Cc(crate::host::CcName),
    Udp,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Cc(c) => c.name(),
            Transport::Udp => "udp",
        }
    }
}

#[derive(Clone, Debug)]
struct FlowCase {
    /// Taken modulo the host count.
    src: u32,
    /// Destination = src + 1 + (dst_offset mod (hosts - 1)), modulo hosts: never src.
    dst_offset: u32,
    size: u64,
    start_ns: u64,
    priority: u8,
    transport: Transport,
}

#[derive(Clone)]
struct Case {
    seed: u64,
    max_time_us: u64,
    /// Where to stop part-way for the first conservation check, in percent of max_time.
    split_pct: u64,
    topo: Topo,
    buffer: Buffer,
    ecn: Option<(Ecn, bool)>,
    queues: u8,
    dwrr_weights: Option<Vec<u32>>,
    /// `switch.ci` (used when queues >= 2): isolate (else hash_dst), low, high - low, pmax,
    /// cip_threshold, mark every isolated packet.
    ci: Option<(bool, u32, u32, f64, u32, bool)>,
    pfc: Option<Pfc>,
    default_transport: Transport,
    classic_ecn: bool,
    min_rto_us: u32,
    udp_gbps: Option<u32>,
    /// `transport.udp.packet_size` (fixed datagram size on the wire), when not the MTU.
    udp_packet_size: Option<u32>,
    /// Poisson departures and exponential sizes for UDP instead of constant/fixed.
    udp_random: bool,
    mtu: u32,
    switch_latency_ns: u32,
    init_cwnd: u32,
    flows: Vec<FlowCase>,
    /// A workload of flows that continue others, beside `flows` (split-run cases).
    repeat: Option<Repeat>,
    /// `metrics.capture` of every frame at two NICs and the first switch, up to this many
    /// frames, and a goodput series (split-run cases).
    capture: Option<u64>,
    /// The seams no scenario key reaches yet, set on the configuration
    /// (engine/seam_tests.rs has each on its own).
    seams: Option<Seams>,
    /// A mechanism of the list in switch/mod.rs and the draw of its table
    /// (`SwitchMechanism::arbitrary`), beside the ones drawn here; `None` when the drawn
    /// one is drawn here or cannot run in this case (`with_listed`).
    listed: Option<(usize, u64)>,
}

/// What a case sets through the engine's seams: the test stand-in switch mechanism's
/// router, trimmer (to `trim` bytes, into the highest queue) or input FIFOs of
/// `input_fifo` bytes (one of the three), sprayed entropies, selective acknowledgements,
/// and a link that fails at `down_pct` percent of the run (port `port` modulo the ports),
/// comes back `up_us` later, with routes that follow `reroute_us` after each change.
#[derive(Clone, Debug)]
struct Seams {
    stand_in: Option<StandIn>,
    spray: bool,
    sack: bool,
    link: Option<(u32, u64, Option<u64>, u64)>,
    /// Receivers pace credits (`host::credit`): every this many ns, this many bytes.
    credits: Option<(u64, u32)>,
}

#[derive(Clone, Copy, Debug)]
enum StandIn {
    Route(crate::switch::stand_in::RouteRule),
    Trim(u32),
    InputFifo(u64),
}

impl Seams {
    fn apply(&self, c: &Case, cfg: &mut crate::engine::SimConfig, topo: &crate::net::Topology) {
        use crate::net::{LinkChange, LinkState};
        use crate::switch::stand_in::StandInParams;
        cfg.mechanisms.stand_in = self.stand_in.map(|s| match s {
            StandIn::Route(r) => StandInParams { route: Some(r), ..Default::default() },
            StandIn::Trim(bytes) => StandInParams { trim: Some((c.queues as usize - 1, bytes)), ..Default::default() },
            StandIn::InputFifo(cap) => StandInParams { input_fifo: Some(cap), ..Default::default() },
        });
        if self.spray {
            cfg.path = crate::host::path::PathChoice::Spray;
        }
        cfg.tcp.sack = self.sack;
        if let Some((port, down_pct, up_us, reroute_us)) = self.link {
            let port = port % topo.ports.len() as u32;
            let down = SimTime::from_us(c.max_time_us * down_pct / 100);
            cfg.link_changes.push(LinkChange { at: down, port, state: LinkState::Down });
            if let Some(up) = up_us {
                cfg.link_changes.push(LinkChange { at: down + SimTime::from_us(up), port, state: LinkState::Up });
            }
            cfg.reroute_after = SimTime::from_us(reroute_us);
        }
        cfg.credits = self.credits.map(|(ns, bytes)| crate::host::credit::CreditPacing { every: SimTime::from_ns(ns), bytes });
    }
}

fn seams_strategy() -> impl Strategy<Value = Seams> {
    use crate::switch::stand_in::RouteRule;
    let stand_in = proptest::option::of(prop_oneof![
        Just(StandIn::Route(RouteRule::Last)),
        Just(StandIn::Route(RouteRule::LeastQueued)),
        (64u32..=200).prop_map(StandIn::Trim),
        (3_000u64..=200_000).prop_map(StandIn::InputFifo),
    ]);
    let credits = proptest::option::of((100u64..=20_000, 64u32..=9_000));
    (stand_in, any::<bool>(), any::<bool>(), proptest::option::of((any::<u32>(), 0u64..=90, proptest::option::of(1u64..=200), 0u64..=100)), credits)
        .prop_map(|(stand_in, spray, sack, link, credits)| Seams { stand_in, spray, sack, link, credits })
}

/// Flows that continue others when they end: closed loops (seed 001's L2 generators and
/// request streams) or a persistent incast (seeds 000 and 003).
#[derive(Clone, Debug)]
enum Repeat {
    /// `pairs`: each host loops to the next (else to a random other host per message);
    /// `reuse`: a pair keeps its connection.
    Loop { transport: Transport, mean_size: u64, in_flight: u32, pairs: bool, reuse: bool },
    Persistent { transport: Transport, fan_in: u32, size: u64, reuse: bool },
}

/// Shown on failure: the scenario file itself, ready to run by hand.
impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seams = self.seams.as_ref().map_or(String::new(), |s| format!("; seams (set on the configuration): {s:?}"));
        write!(f, "split at {}% of max_time{seams}; scenario:\n{}", self.split_pct, self.toml())
    }
}

fn link(l: Link) -> String {
    format!("{{ rate = \"{}Gbps\", delay = \"{}ns\" }}", l.gbps, l.delay_ns)
}

impl Case {
    /// The listed mechanism's table, if the case has one.
    fn listed_table(&self) -> Option<crate::switch::mechanism::Arbitrary> {
        let (i, draw) = self.listed?;
        (crate::switch::ARBITRARY[i].2)(draw, self.queues, self.mtu)
    }

    /// Whether the listed mechanism may choose next hops (`Caps::ROUTE`).
    fn listed_routes(&self) -> bool {
        self.listed.is_some_and(|(i, _)| crate::switch::ARBITRARY[i].1.has(crate::switch::mechanism::Caps::ROUTE))
    }

    /// The case with its listed mechanism (`listed`), the tables drawn here that it cannot
    /// run with left out; `listed` cleared where the mechanism gives no table.
    fn with_listed(mut self, listed: Option<(usize, u64)>) -> Case {
        self.listed = listed;
        match self.listed_table() {
            None => self.listed = None,
            Some(a) => {
                for &key in a.without {
                    match key {
                        "aqm" => self.ecn = None,
                        "ci" => self.ci = None,
                        "pfc" => self.pfc = None,
                        "aqm:no_drop" => {
                            if let Some((_, drop)) = &mut self.ecn {
                                *drop = false;
                            }
                        }
                        "pfc:ingress" => {
                            if let Some(p) = &mut self.pfc {
                                p.egress_queue = false;
                            }
                        }
                        "scheduler" => self.dwrr_weights = None,
                        _ => {}
                    }
                }
            }
        }
        self
    }

    fn toml(&self) -> String {
        let mut s = format!("[scenario]\nname = \"prop\"\nseed = {}\nmax_time = \"{}us\"\n\n[topology]\n", self.seed, self.max_time_us);
        s += &format!("mtu = \"{}B\"\n", self.mtu);
        match &self.topo {
            Topo::Dumbbell { senders, receivers, host, bottleneck } => {
                s += &format!("kind = \"dumbbell\"\nsenders = {senders}\nreceivers = {receivers}\nhost_link = {}\nbottleneck = {}\n", link(*host), link(*bottleneck));
            }
            Topo::Custom { switches, hosts, ring, routes, host, fabric } => {
                let hl: Vec<String> = (0..*hosts).map(|h| format!("\"h{h}\"")).collect();
                let sl: Vec<String> = (0..*switches).map(|i| format!("\"s{i}\"")).collect();
                let mut links: Vec<String> =
                    (0..*hosts).map(|h| format!("{{ a = \"h{h}\", b = \"s{}\", rate = \"{}Gbps\", delay = \"{}ns\" }}", h % switches, host.gbps, host.delay_ns)).collect();
                let mut pairs: Vec<(u32, u32)> = (1..*switches).map(|i| (i - 1, i)).collect();
                if *ring && *switches > 2 {
                    pairs.push((switches - 1, 0));
                }
                links.extend(pairs.iter().map(|(a, b)| format!("{{ a = \"s{a}\", b = \"s{b}\", rate = \"{}Gbps\", delay = \"{}ns\" }}", fabric.gbps, fabric.delay_ns)));
                let mut seen = std::collections::HashSet::new();
                let mut rl = Vec::new();
                for &(s, d, via) in routes {
                    let (s, d) = (s % switches, d % hosts);
                    let n = Topo::custom_neighbours(*switches, *ring, s, d);
                    if seen.insert((s, d)) {
                        rl.push(format!("{{ switch = \"s{s}\", dst = \"h{d}\", via = \"{}\" }}", n[via as usize % n.len()]));
                    }
                }
                s += &format!("kind = \"custom\"\nhosts = [{}]\nswitches = [{}]\nlinks = [{}]\nroutes = [{}]\n", hl.join(", "), sl.join(", "), links.join(", "), rl.join(", "));
            }
            Topo::Clos { tors, servers_per_tor, spines, host, fabric } => {
                s += &format!(
                    "kind = \"clos2\"\ntors = {tors}\nservers_per_tor = {servers_per_tor}\nspines = {spines}\nhost_link = {}\nfabric_link = {}\n",
                    link(*host),
                    link(*fabric)
                );
            }
        }
        s += "\n[switch]\n";
        match &self.buffer {
            Buffer::Static { packets } => {
                // a lossless class must fit XOFF and its headroom (at most ~180 KB here) in a queue
                let floor = self.pfc.map_or(0, |p| p.xoff_packets * 1500 + 200_000);
                s += &format!("buffer = {{ model = \"static\", queue = \"{}B\" }}\n", (packets * 1500).max(floor));
            }
            Buffer::Shared { extra_packets, guaranteed, alpha } => {
                let pool = guaranteed * self.topo.max_switch_ports() + extra_packets * 1500;
                s += &format!("buffer = {{ model = \"shared\", pool = \"{pool}B\", guaranteed = \"{guaranteed}B\", alpha = {alpha:?} }}\n");
            }
        }
        s += &format!("queues = {}\nlatency = \"{}ns\"\n", self.queues, self.switch_latency_ns);
        match &self.dwrr_weights {
            None => s += "scheduler = \"strict\"\n",
            Some(w) => s += &format!("scheduler = \"dwrr\"\nweights = {w:?}\n"),
        }
        if let (Some((isolate, low, extra, pmax, cip, every)), true) = (self.ci, self.queues >= 2) {
            s += &match isolate {
                true => format!(
                    "ci = {{ mode = \"isolate\", low = \"{low}B\", high = \"{}B\", pmax = {pmax:?}, cip_threshold = \"{cip}B\", mark = \"{}\" }}\n",
                    low + extra,
                    if every { "every_isolated" } else { "queue_ecn" }
                ),
                false => "ci = { mode = \"hash_dst\" }\n".to_string(),
            };
        }
        if let Some(p) = self.pfc {
            let shared = matches!(self.buffer, Buffer::Shared { .. });
            let xoff = match (p.alpha, shared) {
                (Some(a), true) => format!("alpha = {a:?}"),
                _ => format!("xoff = \"{}B\", xon = \"{}B\"", p.xoff_packets * 1500, p.xoff_packets * 1500 / 2),
            };
            let mode = if p.link { "link" } else { "priority" };
            let acc = if p.egress_queue { "egress_queue" } else { "ingress" };
            s += &format!("pfc = {{ mode = \"{mode}\", accounting = \"{acc}\", {xoff} }}\n");
        }
        // the marker judges at dequeue where it can (marking only, no CI, output queues) and
        // its drawn threshold is odd
        let at = |odd: bool, drop: bool| {
            let ci = self.ci.is_some() && self.queues >= 2;
            let architecture = self.listed_table().is_some_and(|a| a.line.starts_with("architecture"));
            if odd && !drop && !ci && !architecture { "dequeue" } else { "enqueue" }
        };
        match &self.ecn {
            None => {}
            Some((Ecn::Step { k }, drop)) => s += &format!("aqm = {{ kind = \"step\", threshold = \"{k}B\", drop_non_ect = {drop}, at = \"{}\" }}\n", at(k % 2 == 1, *drop)),
            Some((Ecn::Red { low, high, pmax }, drop)) => {
                s += &format!(
                    "aqm = {{ kind = \"ramp\", kmin = \"{low}B\", kmax = \"{high}B\", pmax = {pmax:?}, drop_non_ect = {drop}, at = \"{}\" }}\n",
                    at(low % 2 == 1, *drop)
                )
            }
        }
        if let Some(a) = self.listed_table() {
            s += &a.line;
            s += "\n";
        }
        s += &format!(
            "\n[transport]\nkind = \"{}\"\necn = {}\nmin_rto = \"{}us\"\ninit_cwnd = {}\n",
            self.default_transport.name(),
            self.classic_ecn,
            self.min_rto_us,
            self.init_cwnd
        );
        let mut udp = Vec::new();
        if let Some(g) = self.udp_gbps {
            udp.push(format!("rate = \"{g}Gbps\""));
        }
        if let Some(p) = self.udp_packet_size {
            udp.push(format!("packet_size = \"{p}B\""));
        }
        if self.udp_random {
            udp.push("arrivals = \"poisson\", sizes = \"exponential\"".to_string());
        }
        if let Some(Repeat::Loop { transport: Transport::Udp, .. }) = self.repeat {
            // a datagram loop needs a transmit ring (seed 001's WLGs)
            udp.push(format!("nic_buffer = \"{}B\"", self.mtu.max(1500) * 8));
        }
        if !udp.is_empty() {
            s += &format!("udp = {{ {} }}\n", udp.join(", "));
        }
        s += "\n[[workload]]\nkind = \"flows\"\nflows = [\n";
        let hosts = self.topo.hosts();
        for f in &self.flows {
            let src = f.src % hosts;
            let dst = (src + 1 + f.dst_offset % (hosts - 1)) % hosts;
            s += &format!(
                "  {{ src = {src}, dst = {dst}, size = \"{}B\", start = \"{}ns\", priority = {}, transport = \"{}\" }},\n",
                f.size,
                f.start_ns,
                f.priority,
                f.transport.name()
            );
        }
        s += "]\n";
        let stop = format!("\"{}us\"", self.max_time_us * 3 / 4);
        match &self.repeat {
            None => {}
            Some(Repeat::Loop { transport, mean_size, in_flight, pairs, reuse }) => {
                s += &format!(
                    "\n[[workload]]\nkind = \"closed_loop\"\ntransport = \"{}\"\nmean_size = \"{mean_size}B\"\nmin_size = \"1B\"\nmax_size = \"{}B\"\nin_flight = {in_flight}\nstop = {stop}\n",
                    transport.name(),
                    mean_size * 8
                );
                if *pairs {
                    let p: Vec<String> = (0..hosts).map(|h| format!("[{h}, {}]", (h + 1) % hosts)).collect();
                    s += &format!("pairs = [{}]\nconnection = \"{}\"\n", p.join(", "), if *reuse { "reuse" } else { "new" });
                }
            }
            Some(Repeat::Persistent { transport, fan_in, size, reuse }) => {
                s += &format!(
                    "\n[[workload]]\nkind = \"incast\"\ntransport = \"{}\"\nfan_in = {}\nsize = \"{size}B\"\nperiod = \"persistent\"\nconnection = \"{}\"\nstop = {stop}\n",
                    transport.name(),
                    1 + fan_in % (hosts - 1),
                    if *reuse { "reuse" } else { "new" }
                );
            }
        }
        if let Some(max) = self.capture {
            let switch = match self.topo {
                Topo::Dumbbell { .. } => "left",
                Topo::Custom { .. } => "s0",
                Topo::Clos { .. } => "tor0",
            };
            s += &format!("\n[metrics]\nthroughput_bin = \"{}us\"\n[metrics.capture]\nports = [\"h0\", \"h1\", \"{switch}\"]\nframes = \"all\"\nmax_frames = {max}\n", (self.max_time_us / 7).max(1));
        }
        s
    }
}

fn link_strategy() -> impl Strategy<Value = Link> {
    (1u32..=100, 10u32..=5_000).prop_map(|(gbps, delay_ns)| Link { gbps, delay_ns })
}

fn topo_strategy() -> impl Strategy<Value = Topo> {
    prop_oneof![
        (1u32..=4, 1u32..=3, link_strategy(), link_strategy()).prop_map(|(senders, receivers, host, bottleneck)| Topo::Dumbbell { senders, receivers, host, bottleneck }),
        (2u32..=4, 2u32..=8, any::<bool>(), proptest::collection::vec((any::<u32>(), any::<u32>(), any::<u32>()), 0..=4), link_strategy(), link_strategy())
            .prop_map(|(switches, hosts, ring, routes, host, fabric)| Topo::Custom { switches, hosts, ring, routes, host, fabric }),
        (2u32..=3, 2u32..=4, 1u32..=2, link_strategy(), link_strategy()).prop_map(|(tors, servers_per_tor, spines, host, fabric)| Topo::Clos {
            tors,
            servers_per_tor,
            spines,
            host,
            fabric
        }),
    ]
}

fn buffer_strategy() -> impl Strategy<Value = Buffer> {
    prop_oneof![
        (4u32..=200).prop_map(|packets| Buffer::Static { packets }),
        (4u32..=100, 0u32..=3_000, 0.5f64..=2.0).prop_map(|(extra_packets, guaranteed, alpha)| { Buffer::Shared { extra_packets, guaranteed, alpha } }),
    ]
}

fn ecn_strategy() -> impl Strategy<Value = Option<(Ecn, bool)>> {
    let ecn = prop_oneof![
        (1u32..=100_000).prop_map(|k| Ecn::Step { k }),
        (0u32..=100_000, 0u32..=200_000, 0.01f64..=1.0).prop_map(|(low, extra, pmax)| Ecn::Red { low, high: low + extra, pmax }),
    ];
    proptest::option::of((ecn, any::<bool>()))
}

fn transport_strategy() -> impl Strategy<Value = Transport> {
    let all: Vec<Transport> = crate::host::CcName::listed().map(Transport::Cc).chain([Transport::Udp]).collect();
    proptest::sample::select(all)
}

fn flow_strategy() -> impl Strategy<Value = FlowCase> {
    let size = prop_oneof![1u64..=1_500, 1u64..=100_000, 1u64..=2_000_000];
    (any::<u32>(), any::<u32>(), size, 0u64..=200_000, 0u8..=7, transport_strategy()).prop_map(|(src, dst_offset, size, start_ns, priority, transport)| FlowCase {
        src,
        dst_offset,
        size,
        start_ns,
        priority,
        transport,
    })
}

/// Random cases. `udp_sizes` also varies the UDP datagram size (fixed below the
/// MTU, or exponential) and departure process; see `udp_datagram_sizes_keep_fct_above_ideal`.
fn case_strategy(udp_sizes: bool) -> impl Strategy<Value = Case> {
    let udp_size_opts = if udp_sizes { (proptest::option::of(64u32..=1_500), any::<bool>()).boxed() } else { Just((None, false)).boxed() };
    let sched = (1u8..=4).prop_flat_map(|q| (Just(q), proptest::option::of(proptest::collection::vec(1u32..=8, q as usize))));
    (
        (0u64..1000, 20u64..=2_000, 1u64..=99),
        topo_strategy(),
        buffer_strategy(),
        ecn_strategy(),
        sched,
        (transport_strategy(), any::<bool>(), prop_oneof![Just(100u32), Just(1_000u32)], proptest::option::of(1u32..=100), udp_size_opts),
        (prop_oneof![3 => Just(1500u32), 1 => 256u32..=9000], prop_oneof![Just(0u32), 1u32..=1_000], prop_oneof![Just(10u32), 1u32..=20]),
        proptest::collection::vec(flow_strategy(), 1..=12),
        // CI thresholds mostly low enough for the small flows here to cross them, so that
        // isolation, CIPs and release happen in a good share of the cases
        proptest::option::of((
            prop_oneof![3 => Just(true), 1 => Just(false)],
            prop_oneof![3 => 0u32..=3_000, 1 => 0u32..=50_000],
            prop_oneof![3 => 0u32..=10_000, 1 => 0u32..=100_000],
            prop_oneof![1 => 0.01f64..=0.1, 1 => 0.1f64..=1.0],
            0u32..=100_000,
            any::<bool>(),
        )),
        proptest::option::of((any::<bool>(), any::<bool>(), 2u32..=100, proptest::option::of(0.1f64..=2.0))),
        // every mechanism of the list, with its own random table
        proptest::option::of((0..crate::switch::ARBITRARY.len(), any::<u64>())),
    )
        .prop_map(
            |(
                (seed, max_time_us, split_pct),
                topo,
                buffer,
                ecn,
                (queues, dwrr_weights),
                (default_transport, classic_ecn, min_rto_us, udp_gbps, (udp_packet_size, udp_random)),
                (mtu, switch_latency_ns, init_cwnd),
                flows,
                ci,
                pfc,
                listed,
            )| Case {
                seed,
                max_time_us,
                split_pct,
                topo,
                buffer,
                ecn,
                queues,
                dwrr_weights,
                ci,
                pfc: pfc.map(|(link, egress_queue, xoff_packets, alpha)| Pfc { link, egress_queue, xoff_packets, alpha }),
                default_transport,
                classic_ecn,
                min_rto_us,
                udp_gbps,
                udp_packet_size: udp_packet_size.map(|p| p.min(mtu)),
                udp_random,
                mtu,
                switch_latency_ns,
                init_cwnd,
                flows,
                repeat: None,
                capture: None,
                seams: None,
                listed: None,
            }
            .with_listed(listed),
        )
}

fn repeat_strategy() -> impl Strategy<Value = Repeat> {
    prop_oneof![
        (transport_strategy(), 1u64..=20_000, 1u32..=3, any::<bool>(), any::<bool>()).prop_map(|(transport, mean_size, in_flight, pairs, reuse)| Repeat::Loop { transport, mean_size, in_flight, pairs, reuse }),
        (transport_strategy(), any::<u32>(), 1u64..=200_000, any::<bool>()).prop_map(|(transport, fan_in, size, reuse)| Repeat::Persistent { transport, fan_in, size, reuse }),
    ]
}

/// A case with the seams set (`Seams`).
fn seams_case_strategy() -> impl Strategy<Value = Case> {
    (case_strategy(false), seams_strategy()).prop_map(|(mut c, s)| {
        c.seams = Some(s);
        c
    })
}

/// Case `c` (as `text`) built with the invariant checks on or off, split over `threads`,
/// with its seams set. Every drawn case is a valid scenario: a refusal is a bug of the
/// strategy or of the scenario layer, and fails the case with its message.
fn sim_of(c: &Case, text: &str, check_invariants: bool, threads: usize) -> crate::engine::Sim {
    let opts = crate::scenario::RunOptions { threads, check_invariants, ..Default::default() };
    crate::scenario::Document::from_toml(text)
        .and_then(|d| d.resolve(None))
        .and_then(|s| {
            crate::scenario::build_adjusted(&s, &opts, |cfg, topo| {
                if let Some(seams) = &c.seams {
                    seams.apply(c, cfg, topo);
                }
            })
        })
        .unwrap_or_else(|e| panic!("a drawn case was refused: {e}\n{text}"))
}

/// Cases with flows that continue others and, in some, a capture and a goodput series:
/// the runs a split run numbers flows in (engine/parallel.rs, `Ids`).
fn repeat_case_strategy() -> impl Strategy<Value = Case> {
    (case_strategy(false), repeat_strategy(), proptest::option::of(1u64..=3_000)).prop_map(|(mut c, r, capture)| {
        c.repeat = Some(r);
        c.capture = capture;
        c
    })
}

use super::tests::build;

fn check_conservation(sim: &crate::Sim, when: &str) -> Result<(), TestCaseError> {
    let (created, consumed, dropped, live) = sim.packet_counts();
    prop_assert_eq!(created, consumed + dropped + live, "{}: created {} != consumed {} + dropped {} + live {}", when, created, consumed, dropped, live);
    Ok(())
}

/// Flattened (name, dtype, bytes) of a table, for exact comparison.
fn table_bytes(t: &Table) -> Vec<(String, &'static str, Vec<u8>)> {
    t.columns.iter().map(|(n, c)| (n.clone(), c.dtype(), c.to_le_bytes())).collect()
}

/// What a case's results may show.
struct Expect {
    /// 802.1Qbb ingress accounting with derived headroom and no failed link: no lossless
    /// packet is dropped.
    lossless: bool,
    /// Every flow's packets take one path, the one its ideal FCT is computed on (sprayed or
    /// adaptively routed packets overtake each other on parallel paths, and rerouted ones
    /// may find a shorter path: either may beat it).
    one_path: bool,
    /// Every NIC can send: a TCP flow whose NIC's link failed never sends, so arms no
    /// retransmission timer, and the run may go idle with it unfinished.
    nics_up: bool,
}

fn check_results(r: &Results, sim: &crate::Sim, transports: &[Transport], x: Expect) -> Result<(), TestCaseError> {
    let f = &r.flows;
    let n = f.rows();
    let col_u8 = |name: &str| -> Vec<u8> {
        match f.get(name) {
            Some(crate::metrics::ColumnData::U8(v)) => v.clone(),
            _ => panic!("no u8 column {name}"),
        }
    };
    let finished = col_u8("finished");
    let ids = f.u64("flow_id");
    let size = f.u64("size_bytes");
    let delivered = f.u64("delivered_bytes");
    let fct = f.u64("fct_ps");
    let ideal = f.u64("ideal_fct_ps");
    let end = f.u64("end_ps");
    let now = sim.now().0;
    prop_assert!(now <= sim.max_time().0, "ran past max_time: now {} > {}", now, sim.max_time().0);
    // conservation as the tables report it: every packet a host made (all but the switches'
    // control frames) was put on the wire by its NIC (ports table, host rows) or still waits
    // there; and the summary's counts balance
    let s = &r.summary;
    let (created, delivered_pkts, dropped, in_flight, ctrl) = (
        s["packets_created"].as_u64().unwrap(),
        s["packets_delivered"].as_u64().unwrap(),
        s["packets_dropped"].as_u64().unwrap(),
        s["packets_in_flight"].as_u64().unwrap(),
        s["control_frames"].as_u64().unwrap(),
    );
    prop_assert_eq!(created, delivered_pkts + dropped + in_flight, "summary: created != delivered + dropped + in flight");
    let is_host = match r.ports.get("is_host") {
        Some(crate::metrics::ColumnData::U8(v)) => v.clone(),
        _ => panic!("no is_host column"),
    };
    let host_tx: u64 = r.ports.u64("tx_packets").iter().zip(&is_host).filter(|(_, &h)| h == 1).map(|(x, _)| x).sum();
    prop_assert_eq!(host_tx + sim.nic_backlog(), created - ctrl, "host NIC tx {} + backlog {} != packets made by hosts {}", host_tx, sim.nic_backlog(), created - ctrl);
    // `transports` is indexed by flow id (see transports_by_id).
    for i in 0..n {
        prop_assert!(delivered[i] <= size[i], "flow {} delivered {} B of {} B", ids[i], delivered[i], size[i]);
        if finished[i] == 1 {
            prop_assert!(end[i] <= now, "flow {} ends at {} after the run's end {}", ids[i], end[i], now);
        }
        if finished[i] == 1 {
            let tr = transports[ids[i] as usize];
            // a UET flow sprays by default: its packets overtake each other on parallel paths
            let one_path = x.one_path && !matches!(tr, Transport::Cc(crate::host::CcName::Uet(_)));
            prop_assert!(fct[i] >= ideal[i] || !one_path, "flow {}: fct {} < ideal {}", ids[i], fct[i], ideal[i]);
            if tr != Transport::Udp {
                prop_assert_eq!(delivered[i], size[i], "finished {:?} flow {} delivered {} B of {} B", tr, ids[i], delivered[i], size[i]);
            }
        }
    }
    let total = r.summary["flows_total"].as_u64().unwrap();
    let done = r.summary["flows_finished"].as_u64().unwrap();
    prop_assert_eq!(total as usize, transports.len());
    if r.summary["end_reason"] == "completed" {
        prop_assert_eq!(done, total, "end_reason completed with {} of {} flows finished", done, total);
        prop_assert!(finished.iter().all(|&x| x == 1));
        prop_assert_eq!(n, transports.len());
    }
    if r.summary["end_reason"] == "idle" && x.nics_up {
        // Nothing left to happen: a TCP flow with unacknowledged data always has a
        // retransmission timer pending, so only UDP flows (lost datagrams) may be unfinished.
        for i in 0..n {
            if finished[i] == 0 {
                let tr = transports[ids[i] as usize];
                prop_assert_eq!(tr, Transport::Udp, "run went idle with TCP flow {} unfinished", ids[i]);
            }
        }
    }
    prop_assert!(sim.violations().is_empty(), "invariant violations: {:?}", sim.violations());
    let sum = |col: &str| r.ports.get(col).map_or(0, |_| r.ports.u64(col).iter().sum::<u64>());
    prop_assert_eq!(sum("drops_wrong_host"), 0, "a packet reached a host other than its destination");
    if x.lossless {
        prop_assert_eq!(sum("drops_headroom") + sum("drops_lossless"), 0, "lossless packets dropped under 802.1Qbb accounting with derived headroom");
    }
    Ok(())
}

/// Transport of each flow in flow-id order: flows start in order of start time,
/// ties in list order (the engine sorts its specs stably by start).
fn transports_by_id(c: &Case) -> Vec<Transport> {
    let mut idx: Vec<usize> = (0..c.flows.len()).collect();
    idx.sort_by_key(|&i| c.flows[i].start_ns);
    idx.into_iter().map(|i| c.flows[i].transport).collect()
}

proptest! {
    // 64 cases by default (well under a second in a debug build); PROPTEST_CASES=N for a longer hunt.
    #![proptest_config(crate::sim::proptest_config(64))]

    #[test]
    fn engine_invariants_hold_on_random_scenarios(c in case_strategy(false)) {
        check_case(&c)?;
    }

    /// The same properties with UDP datagrams smaller than the MTU (fixed
    /// `transport.udp.packet_size`, or exponential sizes). Fails on
    /// fct_ps >= ideal_fct_ps: `Sim::ideal_fct` segments a UDP flow into
    /// MTU-size packets whatever the configured datagram size, so smaller
    /// datagrams pipeline through the store-and-forward hops faster than the
    /// "ideal". See `udp_small_datagrams_beat_ideal_fct` for the minimal case.
    #[test]
    fn udp_datagram_sizes_keep_fct_above_ideal(c in case_strategy(true)) {
        check_case(&c)?;
    }

    /// The same properties with the seams set (a stand-in router, trimmer or input FIFOs,
    /// sprayed entropies, selective acknowledgements, a link that fails and may come back):
    /// what a mechanism built on a seam may do cannot break the engine's invariants,
    /// determinism or split-run equivalence.
    #[test]
    fn engine_invariants_hold_through_the_seams(c in seams_case_strategy()) {
        check_case(&c)?;
    }
}

proptest! {
    // 16 cases by default: each runs six times, on up to three threads (about a second a
    // case on two cores); PROPTEST_CASES=N for a longer hunt.
    #![proptest_config(crate::sim::proptest_config(16))]

    /// Closed loops and persistent flows (and captures) split over 2 and 3 threads give one
    /// thread's tables, summary, capture and event count, whole and streamed.
    #[test]
    fn split_runs_with_continuations_match_one_thread(c in repeat_case_strategy()) {
        check_split(&c)?;
    }
}

/// A split run of `c` at 2 and 3 threads against one thread: every table, the summary, the
/// capture's bytes and the event count, run in two calls; streamed, the rows in the order
/// one thread hands them out.
fn check_split(c: &Case) -> Result<(), TestCaseError> {
    let text = c.toml();
    let load = |threads| crate::scenario::load(&text, false, None, &crate::scenario::RunOptions { threads, ..Default::default() }).map(|x| x.1);
    let mut one = match load(1) {
        Ok(s) => s,
        // (a drawn workload the scenario refuses, e.g. a loop's window that cannot be drawn)
        Err(_) => return Ok(()),
    };
    let split = SimTime::from_us(c.max_time_us * c.split_pct / 100);
    one.run();
    check_conservation(&one, "one thread")?;
    let r1 = one.results();
    let mut s1 = load(1).unwrap();
    let (rows1, _) = streamed(&mut s1, c.max_time_us);
    let tables = |r: &crate::metrics::Results| [table_bytes(&r.flows), table_bytes(&r.ports), table_bytes(&r.timeseries), table_bytes(&r.queues)];
    let no_warnings = |r: &crate::metrics::Results| {
        let mut s = r.summary.clone();
        let o = s.as_object_mut().unwrap();
        if let Some(w) = o.get_mut("warnings") {
            // the one-thread fallback's note is the only thing a thread count may add
            w.as_array_mut().unwrap().retain(|x| !x.as_str().unwrap_or("").contains("stays on one thread"));
            if w.as_array().unwrap().is_empty() {
                o.remove("warnings");
            }
        }
        s
    };
    for threads in [2, 3] {
        let mut t = load(threads).unwrap();
        let at = format!("{threads} threads, {} partitions", t.partitions());
        t.run_until(split);
        t.run();
        let rt = t.results();
        prop_assert_eq!(t.events(), one.events(), "event counts differ ({})", at);
        prop_assert_eq!(tables(&rt), tables(&r1), "tables differ ({})", at);
        let (a, b) = (no_warnings(&rt), no_warnings(&r1));
        let keys: std::collections::BTreeSet<&String> = a.as_object().unwrap().keys().chain(b.as_object().unwrap().keys()).collect();
        let differ: Vec<String> = keys.into_iter().filter(|k| a.get(k.as_str()) != b.get(k.as_str())).map(|k| format!("{k}: {:?} one thread, {:?} split", b.get(k.as_str()), a.get(k.as_str()))).collect();
        prop_assert!(a == b, "summaries differ ({}): {:?}", at, differ);
        prop_assert!(rt.capture == r1.capture, "captures differ ({})", at);
        let mut t = load(threads).unwrap();
        let (rows, _) = streamed(&mut t, c.max_time_us);
        prop_assert_eq!(&rows, &rows1, "streamed flows rows differ in order ({})", at);
    }
    Ok(())
}

/// All the properties on one case (see the module doc).
/// Run `s` streamed to its end, its final rows taken at ten points on the way: every row
/// in the order handed out (those left at the end last), and the results.
fn streamed(s: &mut crate::engine::Sim, max_time_us: u64) -> (Vec<(String, &'static str, Vec<u8>)>, crate::metrics::Results) {
    s.stream_flows();
    let mut rows: Vec<(String, &'static str, Vec<u8>)> = Vec::new();
    let mut take = |t: Table| {
        let t = table_bytes(&t);
        if rows.is_empty() {
            rows = t;
        } else {
            for (r, c) in rows.iter_mut().zip(t) {
                r.2.extend(c.2);
            }
        }
    };
    for k in 1..=10 {
        s.run_until(SimTime::from_us(max_time_us * k / 10));
        if let Some(t) = s.take_final_flows() {
            take(t);
        }
    }
    s.run();
    if let Some(t) = s.take_final_flows() {
        take(t);
    }
    let mut r = s.results();
    take(std::mem::take(&mut r.flows));
    (rows, r)
}

fn check_case(c: &Case) -> Result<(), TestCaseError> {
    let text = c.toml();
    let transports = transports_by_id(c);

    // Run 1: stop part-way, check, then run to the end.
    let mut a = sim_of(c, &text, true, 1);
    let split = SimTime::from_us(c.max_time_us * c.split_pct / 100);
    a.run_until(split);
    check_conservation(&a, "part-way")?;
    prop_assert!(a.violations().is_empty(), "invariant violations part-way: {:?}", a.violations());
    a.run();
    check_conservation(&a, "at the end")?;
    let ra = a.results();
    // a failed link drops lossless packets too
    let links_fail = c.seams.as_ref().is_some_and(|s| s.link.is_some());
    // a router that chooses by queue depth spreads a flow over paths as spraying does (and
    // may take a shorter one than ECMP's, past a static route), and a flow whose routes
    // change after it starts may take a shorter path than its ideal's
    let one_path = !c.listed_routes() && !c.seams.as_ref().is_some_and(|s| s.spray || s.link.is_some() || matches!(s.stand_in, Some(StandIn::Route(_))));
    let lossless = c.pfc.is_some_and(|p| !p.egress_queue) && !links_fail;
    check_results(&ra, &a, &transports, Expect { lossless, one_path, nics_up: !links_fail })?;

    // Run 2: the same scenario in one go, without the invariant checks, must give identical
    // tables (without them, packets that find their port idle skip the queue's FIFO).
    let mut b = sim_of(c, &text, false, 1);
    b.run();
    check_conservation(&b, "at the end (second run)")?;
    let rb = b.results();
    let (rb_flows, rb_ports) = (rb.flows.clone(), rb.ports.clone());
    prop_assert_eq!(a.events(), b.events(), "event counts differ");
    prop_assert_eq!(table_bytes(&ra.flows), table_bytes(&rb.flows), "flows tables differ");
    prop_assert_eq!(table_bytes(&ra.ports), table_bytes(&rb.ports), "ports tables differ");
    prop_assert_eq!(&ra.summary, &rb.summary, "summaries differ");

    // Run 2b: with a TxDone at every departure (where run 2 fixed them at enqueue,
    // transmit.rs), in lockstep with run 2 cut into calls at odd times: the clock, the
    // pause the run records, the event count and the end after every call, then every
    // table.
    if b.fixed_departures {
        let mut w = sim_of(c, &text, false, 1);
        w.wake_at_every_departure();
        let mut f = sim_of(c, &text, false, 1);
        let step = SimTime(c.max_time_us * 1_000_000 / 37 + 1_013);
        while !w.done() {
            let t = w.now() + step;
            f.run_until(t);
            w.run_until(t);
            prop_assert_eq!((f.now, f.paused_at, f.events, f.done()), (w.now, w.paused_at, w.events, w.done()), "fixed departures and the model's TxDones, in lockstep to {:?}", t);
        }
        let (rf, rw) = (f.results(), w.results());
        for (x, y, what) in [(&rf.flows, &rw.flows, "flows"), (&rf.ports, &rw.ports, "ports"), (&rf.queues, &rw.queues, "queues"), (&rf.timeseries, &rw.timeseries, "timeseries")] {
            prop_assert_eq!(table_bytes(x), table_bytes(y), "fixed departures and the model's TxDones: {} tables", what);
        }
        prop_assert_eq!(&rf.summary, &rw.summary, "fixed departures and the model's TxDones: summaries");
    }

    // Run 3: streamed, the final rows taken at ten points on the way: those rows and the
    // rest at the end, put in id order, are the whole run's flows table, and nothing else
    // changes.
    let mut s = sim_of(c, &text, false, 1);
    let (mut rows, rs) = streamed(&mut s, c.max_time_us);
    // the order one thread streams rows in, which a split run's streamed table reproduces
    let streamed_rows = rows.clone();
    // put the rows in id order (each column's bytes per row, by the flow_id column)
    let ids: Vec<u64> = rows.iter().find(|c| c.0 == "flow_id").map(|c| c.2.chunks(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect()).unwrap_or_default();
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by_key(|&i| ids[i]);
    for c in rows.iter_mut() {
        let w = c.2.len() / ids.len().max(1);
        c.2 = order.iter().flat_map(|&i| c.2[i * w..(i + 1) * w].to_vec()).collect();
    }
    prop_assert_eq!(s.events(), b.events(), "event counts differ (streamed)");
    prop_assert_eq!(rows, table_bytes(&rb.flows), "streamed flows rows differ");
    prop_assert_eq!(table_bytes(&rs.ports), table_bytes(&rb.ports), "ports tables differ (streamed)");
    prop_assert_eq!(&rs.summary, &rb.summary, "summaries differ (streamed)");

    // Run 4: split over 2 and 3 threads (where the run can be: else it stays on one and
    // says so), driven in two calls: the same tables, summary and event count.
    for threads in [2, 3] {
        let mut t = sim_of(c, &text, false, threads);
        t.run_until(split);
        t.run();
        let mut rt = t.results();
        rt.summary.as_object_mut().unwrap().remove("warnings");
        let mut rb = rb.summary.clone();
        rb.as_object_mut().unwrap().remove("warnings");
        let at = format!("{threads} threads, {} partitions", t.partitions());
        prop_assert_eq!(t.events(), b.events(), "event counts differ ({})", at);
        prop_assert_eq!(table_bytes(&rt.flows), table_bytes(&rb_flows), "flows tables differ ({})", at);
        prop_assert_eq!(table_bytes(&rt.ports), table_bytes(&rb_ports), "ports tables differ ({})", at);
        prop_assert_eq!(&rt.summary, &rb, "summaries differ ({})", at);
        // streamed, driven in steps: the rows come in the order one thread hands them out
        let mut t = sim_of(c, &text, false, threads);
        let (all, rt) = streamed(&mut t, c.max_time_us);
        prop_assert_eq!(t.events(), b.events(), "event counts differ (streamed, {})", at);
        prop_assert_eq!(&rt.summary.get("flows_with_loss"), &rs.summary.get("flows_with_loss"), "flows with loss (streamed, {})", at);
        prop_assert_eq!(&rt.summary.get("flows_paused"), &rs.summary.get("flows_paused"), "flows paused (streamed, {})", at);
        prop_assert_eq!(&all, &streamed_rows, "streamed flows rows differ in order ({})", at);
    }
    Ok(())
}

/// Minimal case of the bug behind `udp_datagram_sizes_keep_fct_above_ideal`: one
/// 1500 B UDP flow sent as three 500 B datagrams through two 10G store-and-forward
/// hops. `ideal_fct` assumes a single 1500 B packet (3 x 1.2 us of serialization);
/// the three datagrams pipeline and arrive after 1.2 + 0.4 + 0.4 us.
#[test]
fn udp_small_datagrams_beat_ideal_fct() {
    let text = r#"
[scenario]
name = "udp-small-datagrams"
max_time = "1ms"
[topology]
kind = "dumbbell"
senders = 1
receivers = 1
host_link = { rate = "10Gbps", delay = "10ns" }
bottleneck = { rate = "10Gbps", delay = "10ns" }
[transport]
kind = "udp"
udp = { packet_size = "500B" }
[[workload]]
kind = "flows"
flows = [ { src = 0, dst = 1, size = "1500B" } ]
"#;
    let mut sim = build(text);
    sim.run();
    let r = sim.results();
    let (fct, ideal) = (r.flows.u64("fct_ps")[0], r.flows.u64("ideal_fct_ps")[0]);
    assert!(fct >= ideal, "fct {fct} ps < ideal {ideal} ps");
}
