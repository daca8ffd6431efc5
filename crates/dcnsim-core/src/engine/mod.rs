//! The simulation core: the event loop, dispatch, the packet arena and the application of
//! mechanism effects (here); the events (`events.rs`), port transmission (`transmit.rs`)
//! and the look-ahead (`look_ahead.rs`). It knows no mechanism by name: switch mechanisms
//! are reached through the pipeline in `switch::pipeline` (`switch_path.rs` drives it),
//! hosts and transports through `host_path.rs`; `results.rs` builds the tables.
//! docs/architecture.md describes the layers and the hook order.
//!
//! Per hop a packet costs at most two events: its arrival at the next node
//! (scheduled when its transmission starts, at start + serialization +
//! propagation) and, only when the port has more to send, a TxDone at the end
//! of its serialization. An idle port transmits immediately on enqueue.
//! Link-local control frames are served ahead of every queue and never held.
//! Where every switch port is one FIFO that nothing acts on as packets leave, a
//! queued packet's start is known as it joins, and its departure is fixed then,
//! with no TxDone (`transmit.rs`, "Departures fixed at enqueue"); each such
//! departure is still counted as the event it stands for, and every output is
//! the one the TxDones give.

mod config;
mod events;
mod host_path;
mod links;
mod look_ahead;
pub use config::*;
mod parallel;
mod results;
pub use results::{ENGINE_OUTPUTS, FLOWS_TABLE_ROW_BYTES};
mod switch_path;
mod transmit;

use events::Ev;

use crate::host::roce::RoceParams;
use crate::host::tcp::TcpParams;
use crate::host::udp::{Arrivals, SizeDist};
use crate::host::{Flow, FlowTable, Holds, Host, ReadyLists};
use crate::net::port::{Egress, PortWire, Ports};
use crate::net::{FlowId, Frame, Msg, NodeKind, Packet, PacketArena, PktId, PktKind, PortId, Routes, Topology};
use crate::sim::EndReason;
use crate::sim::{ser_time, stream, EventQueue, SimTime, Stream};
use crate::switch::mechanism::{Caps, Fabric, MsgAt};
use crate::switch::pipeline::{Ctx, Effect};
use crate::switch::{BufferParams, SwitchBuffer, SwitchState};
use crate::net::{DropReason, PortQueues, Scheduler};
use crate::switch::{MechanismParams, Mechanisms};
use crate::workload::arrivals::FlowArrivals;
use crate::workload::FlowSpec;

/// The time from the end of a frame leaving `port` to its arrival at the peer: the link's
/// propagation, plus the switch latency where the peer is a switch.
fn arrive_delay(topo: &Topology, switch_latency: SimTime, port: usize) -> SimTime {
    let p = &topo.ports[port];
    let peer = topo.ports[p.peer as usize].node;
    p.delay + if topo.nodes[peer as usize].kind == NodeKind::Switch { switch_latency } else { SimTime::ZERO }
}

/// The summary's warning that `metrics.capture` stopped at its `max_frames`.
fn capture_warning(frames: u64, missed: u64) -> String {
    format!("metrics.capture stopped at max_frames = {frames}: {missed} later frames were not captured")
}

/// Hop limit: a packet crossing more switches than this is in a routing loop.
const MAX_HOPS: u8 = 64;

/// A running simulation.
pub struct Sim {
    cfg: SimConfig,
    /// Read-only once built: the partitions of a split run share one copy.
    topo: std::sync::Arc<Topology>,
    routes: std::sync::Arc<Routes>,
    egress: Ports,
    /// Switch hops that had to route on arrival (no route from the hop before), and all
    /// switch hops.
    #[cfg(test)]
    routed_on_arrival: (u64, u64),
    /// Runs found complete where the sequential model's next event would have been a fixed
    /// departure's TxDone at or past a synchronisation point (`run_until`).
    #[cfg(test)]
    completed_at_fixed_departure: u64,
    /// How far ahead the event loop fetches, by the fabric's port state (the ports' and
    /// queues' records a packet reads): staged loads several events ahead from
    /// `look_ahead::LARGE_FROM`, the event after next's packet and egress state from
    /// `look_ahead::SMALL_FROM`, nothing below.
    look_ahead: look_ahead::LookAhead,
    /// Whether a packet that finds its egress port (switch or NIC) idle and empty may leave at once without
    /// passing through the queue's FIFO (`PktQueue::pass_through`): nothing watches it
    /// there (no enqueue or dequeue hook, nothing holds or reorders queues), the
    /// scheduler is stateless and no invariant checks look at the queue in between.
    cut_through: bool,
    /// Every port's queues, `cfg.queues` per port.
    queues: PortQueues,
    switches: Vec<SwitchState>,
    /// The configured switch mechanisms (switch/pipeline.rs).
    mechs: Mechanisms,
    /// Effects pushed by mechanism hooks, applied in order when the hook returns.
    fx: Vec<Effect>,
    fx_spare: Vec<Effect>,
    hosts: Vec<Host>,
    /// Each NIC's flows with a segment ready to send.
    ready: ReadyLists,
    flows: FlowTable,
    /// A streamed run (`stream_flows`) moves the rows that became final into `outbox` when
    /// the first event at or after this time comes (MAX: not streamed).
    next_final: SimTime,
    outbox: Option<crate::metrics::Table>,
    /// The flows still to start, made as the run reaches them.
    arrivals: FlowArrivals,
    /// The run's synchronisation grid: the shortest time a frame takes from one node to
    /// the next (link delay plus a switch's latency; 0 where a link takes no time). Whether
    /// every flow has finished is asked at its points only (before the first event at or
    /// after each multiple, `next_sync`), not after every event: a run split over threads
    /// (docs/parallel.md) learns it there, where all its partitions meet, and must end at
    /// the very event the sequential run ends at.
    sync: SimTime,
    next_sync: SimTime,
    /// The last event's time and the event count when `run_until` last moved the clock on
    /// to its limit: a run found complete at the next synchronisation point ends at that
    /// event's time, however it was cut into calls.
    paused_at: (SimTime, u64),
    active: usize,
    finished: usize,
    pkts: PacketArena,
    q: EventQueue<Ev>,
    now: SimTime,
    events: u64,
    end: Option<EndReason>,
    // conservation: created = consumed (delivered, or a control frame acted on) + dropped
    // + live, with a reply made in place from a delivered packet counted as both
    pkts_created: u64,
    pkts_consumed: u64,
    pkts_dropped: u64,
    /// Link-local control frames created by mechanisms (part of pkts_created).
    ctrl_frames: u64,
    ecn_marks: u64,
    /// Trimmed packets their receivers discarded (a transport that does not know trimming).
    trimmed_discarded: u64,
    /// The receiving NICs' RCCC pull pacers, made when a flow first asks for a pull.
    pull_pacers: Option<Box<crate::host::rccc::PullPacers>>,
    /// Data packets put on the wire by hosts (retransmissions included) and data packets dropped.
    data_sent: u64,
    data_dropped: u64,
    /// Retransmission-timer expiries that declared data lost (`Sender::on_timeout`).
    timeouts: u64,
    violations: Vec<String>,
    /// Every transmission start, when tracing (tests and debugging).
    trace: Option<Vec<TxRecord>>,
    /// The packet capture of `metrics.capture`, when configured.
    capture: Option<Box<crate::capture::Capture>>,
    /// Something watches transmission starts: the trace, or a mechanism (`watches_tx`).
    watch_tx: bool,
    /// Per (switch port, queue) histogram of sampled depths, indexed like the ports table.
    depth_hist: Vec<Vec<u64>>,
    /// Per sample and queue class: (time, class, deepest, total, busy queues).
    depth_series: Vec<(SimTime, u8, u64, u64, u32)>,
    samples: u64,
    /// With queue sampling: the switch ports a packet joined since the last sample found
    /// them empty (each once: `port_busy`), so that a sample reads the ports that hold
    /// something, not every port of the fabric (a 100,000-host dumbbell idled at 12 s per
    /// simulated second sampling 200,000 empty ports every 100 us). An empty queue's
    /// sample is the implicit rest of its histogram's first bin.
    busy_ports: Vec<PortId>,
    port_busy: Vec<bool>,
    /// Departures fixed at enqueue (transmit.rs): where every switch port is one FIFO that
    /// nothing but an arrival-time marker acts on, a queued packet's start is known as it
    /// joins, and no TxDone wakes a switch port. Set when the run is built, where
    /// `fixed_departures_apply` holds.
    pub(super) fixed_departures: bool,
    /// The latest start of a fixed departure taken off its queue (`Sim::retire`).
    last_departure: SimTime,
    /// Per-flow goodput series, when recorded.
    goodput: Goodput,
    /// Flows a mechanism holds at their NIC.
    holds: Holds,
    /// The ECMP candidates a router chooses among (`choose_route`), kept to be reused.
    route_candidates: Vec<PortId>,
    /// Closed-loop generators (taken from the config) and each flow's loop (u32::MAX: none),
    /// kept only when there are loops.
    loops: Vec<crate::workload::closed_loop::ClosedLoop>,
    loop_of: Vec<u32>,
    /// The random-draw key (`start_flow`) of each running flow that another continues.
    repeat_keys: rustc_hash::FxHashMap<crate::net::FlowId, u64>,
    /// Flows the arrival processes have started: the next arrival's key.
    arrivals_started: u64,
    /// Closed-loop UDP flows: (sum of frame latencies in ps, frames) per flow.
    frame_latency: crate::net::PerFlow<(u64, u64)>,
    /// How many picoseconds a host jitter draw spans (`cfg.host_jitter`, at most 2^32); 0: none.
    jitter_range: u64,
    /// The fabric's largest base RTT, worked out for the first flow that asks for it (at the
    /// start, in runs whose links change).
    base_rtt: std::cell::OnceCell<SimTime>,
    /// The seed's salt of the host jitter draws.
    jitter_salt: u64,
    /// This run is one partition of a run split over threads (engine/parallel.rs).
    part: Option<Box<parallel::Part>>,
    /// This run is split over threads: its partitions, which run its events.
    par: Option<Box<parallel::Parallel>>,
    /// The flows whose rows `results` gives, when not those held (a partition of a split
    /// run gives a row for every flow some partition holds).
    row_ids: Option<Vec<usize>>,
}

/// Per-flow goodput per time bin (`metrics.throughput_bin`): each flow's open bin, and the
/// closed (flow, bin, bytes) rows, kept sparse (a bin with nothing delivered has no row).
#[derive(Default)]
struct Goodput {
    open: Vec<(u64, u64)>,
    flow: Vec<u32>,
    bin: Vec<u64>,
    bytes: Vec<u64>,
}

impl Goodput {
    fn add(&mut self, f: FlowId, bin: u64, bytes: u64) {
        let f = f as usize;
        if self.open.len() <= f {
            self.open.resize(f + 1, (0, 0));
        }
        let o = &mut self.open[f];
        if o.0 != bin && o.1 > 0 {
            self.flow.push(f as u32);
            self.bin.push(o.0);
            self.bytes.push(o.1);
            o.1 = 0;
        }
        o.0 = bin;
        o.1 += bytes;
    }
}

/// One transmission start, recorded when tracing is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxRecord {
    pub time: SimTime,
    pub port: PortId,
    pub kind: PktKind,
    pub flow: FlowId,
    pub seq: u64,
    pub size: u32,
}

/// The mechanism context over the engine's fields (a macro, so that `self.mechs` stays
/// borrowable beside it).
macro_rules! ctx {
    ($s:ident) => {
        Ctx {
            now: $s.now,
            topo: &$s.topo,
            egress: &$s.egress,
            port_queues: &$s.queues,
            pkts: &mut $s.pkts,
            switches: &mut $s.switches,
            queues: $s.cfg.queues,
            fx: &mut $s.fx,
            violations: if $s.cfg.check_invariants { Some(&mut $s.violations) } else { None },
        }
    };
}
pub(crate) use ctx;

impl Sim {
    /// Build a simulation of the flows `specs` (in any order; of equal starts the earlier
    /// starts first).
    pub fn new(topo: Topology, routes: Routes, cfg: SimConfig, specs: Vec<FlowSpec>) -> Sim {
        Sim::with_arrivals(topo, routes, cfg, FlowArrivals::from_specs(specs))
    }

    /// Build a simulation of the flows `arrivals` makes.
    pub fn with_arrivals(topo: Topology, routes: Routes, cfg: SimConfig, arrivals: FlowArrivals) -> Sim {
        Sim::with_shared(std::sync::Arc::new(topo), std::sync::Arc::new(routes), cfg, arrivals, None)
    }

    /// `with_arrivals` on a fabric other simulations may share (a split run's partitions).
    /// `wires(port)`, for a partition: None where it does not read `port`'s record (it
    /// reads its own ports' and their peers'), else the record's `PortWire::peer_part`.
    /// Absent: every record is wired, every peer here.
    pub(super) fn with_shared(topo: std::sync::Arc<Topology>, routes: std::sync::Arc<Routes>, mut cfg: SimConfig, arrivals: FlowArrivals, wires: Option<&dyn Fn(usize) -> Option<u16>>) -> Sim {
        let loops = std::mem::take(&mut cfg.loops);
        let nq = cfg.queues;
        let queues = PortQueues::new(&topo, nq);
        let port_state = topo.ports.len() * (std::mem::size_of::<Egress>() + nq * std::mem::size_of::<crate::net::PktQueue>());
        let arrive_delay: Vec<SimTime> = (0..topo.ports.len()).map(|p| arrive_delay(&topo, cfg.switch_latency, p)).collect();
        let sync = arrive_delay.iter().copied().min().unwrap_or(SimTime::ZERO);
        let mechs = Mechanisms::new(cfg.mechanisms.clone(), &Fabric { topo: &topo, routes: &routes, arrive_delay: &arrive_delay, mtu: cfg.mtu, queues: nq, buffer: &cfg.buffer, scheduler: &cfg.scheduler });
        let mut egress = Ports::new(topo.ports.len());
        // a partition's: each port's `wires`, asked once
        let wired: Option<Vec<Option<u16>>> = wires.map(|w| (0..topo.ports.len()).map(w).collect());
        if let Some(wired) = &wired {
            // its records lie in runs of port ids; told before any is written, the tables
            // keep large pages where those runs fill them
            let mut dense: Vec<std::ops::Range<usize>> = Vec::new();
            for i in (0..wired.len()).filter(|&i| wired[i].is_some()) {
                match dense.last_mut() {
                    Some(r) if r.end == i => r.end += 1,
                    _ => dense.push(i..i + 1),
                }
            }
            egress.back_sparsely(&dense);
            queues.back_sparsely(&dense);
        }
        for (i, p) in topo.ports.iter().enumerate() {
            let peer_part = match wired.as_ref().map(|w| w[i]) {
                None => 0,
                Some(None) => continue,
                Some(Some(part)) => part,
            };
            let n = &topo.nodes[p.node as usize];
            let m = &topo.nodes[topo.ports[p.peer as usize].node as usize];
            egress.wire(
                i as PortId,
                PortWire {
                    peer: p.peer,
                    is_switch: n.kind == NodeKind::Switch,
                    owner: n.index,
                    ser_rate: PortWire::ser_rate(p.rate_bps),
                    arrive_delay: arrive_delay[i],
                    peer_owner: m.index,
                    peer_is_switch: m.kind == NodeKind::Switch,
                    peer_part,
                },
            );
        }
        let switches = topo
            .switches
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let ports = &topo.nodes[n as usize].ports;
                let mut buffer = SwitchBuffer::new(cfg.buffer.clone(), ports.len(), nq);
                buffer.reserve_beside(mechs.reserved_beside(ports));
                SwitchState { buffer, rng: stream(cfg.seed, Stream::SwitchAqm, i as u64) }
            })
            .collect();
        let hosts: Vec<Host> =
            topo.hosts.iter().map(|&n| Host { node: n, port: topo.nodes[n as usize].ports[0], rate_bps: topo.ports[topo.nodes[n as usize].ports[0] as usize].rate_bps }).collect();
        let ready = ReadyLists::new(hosts.len(), nq);
        let port_busy = if cfg.queue_sample.is_some() { vec![false; topo.ports.len()] } else { Vec::new() };
        // Calendar slots of 1/16 to 1/32 of the shortest frame time on the fabric (1/16
        // rounded down to a power of two): a frame's time spans 16 to 32 slots. Each
        // slot turned costs a load (the pool, the occupancy scan, the sort's entry), and
        // whether the next event lies in the current slot is a branch the look-ahead takes
        // at random: at k = 8, 1/16 against 1/32 took 0.9% fewer instructions, 13% fewer
        // mispredicted branches and 0.952 of the wall time (k = 16 0.979, k = 74 0.981);
        // 1/8 sorted too much (4% more instructions, k = 16 1.008), as did 1/64 too little.
        let fastest = topo.ports.iter().map(|p| p.rate_bps).max().unwrap_or(1);
        let frame = ser_time(cfg.mtu as u64, fastest).0.max(32);
        let mut q = EventQueue::with_slot_bits(63 - (frame / 16).leading_zeros());
        if let Some(first) = arrivals.peek_start() {
            q.push(first, Ev::NextArrival);
        }
        if let Some(s) = &cfg.queue_sample {
            q.push(s.from, Ev::Sample);
        }
        for (i, c) in cfg.link_changes.iter().enumerate() {
            q.push(c.at, Ev::Link(i as u32));
            if c.reroutes() {
                q.push(c.at + cfg.reroute_after, Ev::Reroute(i as u32));
            }
        }
        // the held draw is a u32 (`Egress::jitter`): 4.3 ms at most
        let jitter_range = cfg.host_jitter.0.min(1 << 32);
        let jitter_salt = crate::sim::rng::mix64(cfg.seed ^ 0x7A3D_5C1E_9B24_F60D);
        let capture = cfg.capture.as_ref().map(|c| Box::new(crate::capture::Capture::new(c, &topo, cfg.mtu - cfg.header, cfg.class_of)));
        let mechs_watch_tx = mechs.acts_at(Caps::WATCH_TX) || capture.is_some();
        let mut flows = FlowTable::default();
        if capture.is_some() {
            flows.keep_wires();
        }
        let cut_through = matches!(cfg.scheduler, Scheduler::Strict) && !cfg.check_invariants && !mechs.acts_at(Caps::ENQUEUE.or(Caps::DEQUEUE).or(Caps::HOLD).or(Caps::REORDER));
        let mut sim = Sim {
            cfg,
            topo,
            routes,
            egress,
            #[cfg(test)]
            routed_on_arrival: (0, 0),
            #[cfg(test)]
            completed_at_fixed_departure: 0,
            look_ahead: look_ahead::LookAhead::for_port_state(port_state),
            cut_through,
            queues,
            switches,
            mechs,
            fx: Vec::new(),
            fx_spare: Vec::new(),
            hosts,
            ready,
            flows,
            next_final: SimTime::MAX,
            outbox: None,
            arrivals,
            sync,
            next_sync: sync,
            paused_at: (SimTime::ZERO, u64::MAX),
            active: 0,
            finished: 0,
            pkts: PacketArena::new(),
            q,
            now: SimTime::ZERO,
            events: 0,
            end: None,
            pkts_created: 0,
            pkts_consumed: 0,
            pkts_dropped: 0,
            ctrl_frames: 0,
            ecn_marks: 0,
            trimmed_discarded: 0,
            pull_pacers: None,
            data_sent: 0,
            data_dropped: 0,
            timeouts: 0,
            violations: Vec::new(),
            trace: None,
            capture,
            watch_tx: mechs_watch_tx,
            depth_hist: Vec::new(),
            depth_series: Vec::new(),
            samples: 0,
            busy_ports: Vec::new(),
            route_candidates: Vec::new(),
            port_busy,
            fixed_departures: false,
            last_departure: SimTime::ZERO,
            goodput: Goodput::default(),
            holds: Holds::default(),
            loops,
            loop_of: Vec::new(),
            repeat_keys: Default::default(),
            arrivals_started: 0,
            frame_latency: Default::default(),
            jitter_range,
            base_rtt: Default::default(),
            jitter_salt,
            part: None,
            par: None,
            row_ids: None,
        };
        // the fabric's base RTT is a constant of the fabric as built (HPCC's T): worked out
        // later, it would read the routes and rates of whenever the first flow asked for it,
        // and each partition of a split run asks at its own first flow
        if !sim.cfg.link_changes.is_empty() {
            sim.base_rtt.get_or_init(|| sim.fabric_base_rtt());
        }
        sim.fixed_departures = wired.is_none() && sim.fixed_departures_apply();
        sim
    }

    /// Whether departures can be fixed at enqueue (`fixed_departures`): one queue a port, a
    /// static buffer, the idle-port cut-through, no mechanism but an arrival-time ECN marker
    /// (none that classifies, admits, sees an enqueue or a dequeue, holds, gates, reorders,
    /// watches a transmission, limits rates, judges the grid, routes or trims), nothing
    /// that reads a port between arrivals (captures, queue samples, link changes) and a
    /// synchronisation grid (`sync`, where the run ends). A split run's partitions keep
    /// their TxDones: a frame that crosses to another partition is sent as it starts. And
    /// only where the port state fits a core's L2 (the look-ahead off, below 256 KB: the
    /// k = 8 bench ran 0.925 of the TxDones' time, 20 pairs, 2026-12-02); from there the
    /// earlier-scheduled arrivals cost more memory than the wake-ups they spare (the k = 16
    /// bench 1.088x, 8 pairs; docs/performance.md, "Departures fixed at enqueue").
    fn fixed_departures_apply(&self) -> bool {
        let others = Caps::CLASSIFY.or(Caps::ADMIT).or(Caps::ENQUEUE).or(Caps::DEQUEUE).or(Caps::HOLD).or(Caps::GATE).or(Caps::REORDER).or(Caps::WATCH_TX).or(Caps::LIMIT_RATES).or(Caps::GRID).or(Caps::ROUTE).or(Caps::TRIM);
        self.look_ahead == look_ahead::LookAhead::Off && self.cfg.queues == 1 && !self.cfg.buffer.is_shared() && self.cut_through && !self.mechs.acts_at(others) && self.capture.is_none() && self.cfg.link_changes.is_empty() && self.port_busy.is_empty() && self.sync != SimTime::ZERO
    }

    /// Give every departure its TxDone event, as the model is written: the tables and the
    /// event count are the same (the fixed-departure tests compare them); before the run
    /// (a departure fixed at enqueue cannot be taken back).
    #[doc(hidden)]
    pub fn wake_at_every_departure(&mut self) {
        assert_eq!(self.events, 0, "departures are fixed at enqueue in this run: give each its TxDone (wake_at_every_departure, enable_trace) before the run");
        self.fixed_departures = false;
    }

    pub fn now(&self) -> SimTime {
        self.now
    }
    pub fn events(&self) -> u64 {
        self.events
    }
    pub fn flows_total(&self) -> usize {
        self.par.as_ref().map_or(self.flows.len(), |p| p.parts[0].flows.len())
    }
    pub fn flows_planned(&self) -> usize {
        self.arrivals.planned()
    }
    pub fn flows_finished(&self) -> usize {
        self.finished
    }
    pub fn done(&self) -> bool {
        self.end.is_some()
    }
    pub fn end_reason(&self) -> Option<EndReason> {
        self.end
    }
    pub fn max_time(&self) -> SimTime {
        self.cfg.max_time
    }
    pub fn topology(&self) -> &Topology {
        &self.topo
    }
    /// The switch mechanisms (tests and diagnostics).
    pub fn mechanisms(&self) -> &Mechanisms {
        &self.mechs
    }
    /// The flows table's tag names (`FlowSpec::tag` indexes them).
    pub fn tags(&self) -> &[String] {
        &self.cfg.tags
    }
    /// A flow's record while it is in flight (tests and diagnostics).
    pub fn flow(&self, f: FlowId) -> Option<&Flow> {
        self.flows.get(f)
    }
    /// Keep finished flows' whole records for `flow_records` (tests and diagnostics; a run
    /// otherwise keeps only their rows).
    pub fn keep_flow_records(&mut self) {
        self.flows.keep_retired();
    }
    /// Every flow's whole record in id order: those in flight and, after
    /// `keep_flow_records`, the finished ones.
    pub fn flow_records(&self) -> Vec<&Flow> {
        self.flows.records()
    }
    /// A flow's line of the flows table as it stands.
    pub fn flow_row(&self, f: FlowId) -> crate::host::FlowRow {
        self.flows.row(f, Self::acked)
    }
    /// Bytes acknowledged so far by a flow (datagrams: received), for tests and diagnostics.
    pub fn flow_acked(&self, f: FlowId) -> u64 {
        self.flow_row(f).delivered
    }
    /// Bytes a flow in flight has had acknowledged (datagrams: received).
    fn acked(fl: &Flow) -> u64 {
        fl.sender.acked().unwrap_or(fl.rx.bytes)
    }
    /// Current depth in bytes of queue `queue` of port `port`.
    pub fn queue_bytes(&self, port: PortId, queue: usize) -> u64 {
        self.queues.of(port)[queue].bytes
    }
    /// Bytes transmitted so far by a port (all queues).
    pub fn port_tx_bytes(&self, port: PortId) -> u64 {
        self.queues.of(port).iter().map(|q| q.tx_bytes).sum()
    }
    /// The paused queues of the deadlock cycle that ended the run ("node:port:class").
    pub fn deadlock(&self) -> &[String] {
        self.mechs.deadlock()
    }
    /// Whether (port, class) is paused now.
    pub fn is_paused(&self, port: PortId, class: usize) -> bool {
        self.mechs.gated(port, class, self.now)
    }
    /// Record every transmission start from now on.
    /// Where departures are fixed at enqueue (`fixed_departures`), before the run, or after
    /// `wake_at_every_departure`: the trace records each start as it happens.
    pub fn enable_trace(&mut self) {
        if self.fixed_departures {
            self.wake_at_every_departure();
        }
        self.trace = Some(Vec::new());
        self.watch_tx = true;
    }
    /// Transmission starts recorded since `enable_trace`.
    pub fn trace(&self) -> &[TxRecord] {
        self.trace.as_deref().unwrap_or(&[])
    }
    /// Invariant violations found so far (only with `check_invariants`).
    pub fn violations(&self) -> &[String] {
        &self.violations
    }
    /// Packets waiting in host NICs' own queues (ACKs, CNPs, datagrams not yet sent).
    pub fn nic_backlog(&self) -> u64 {
        self.hosts.iter().map(|h| self.queues.of(h.port).iter().map(|q| q.len() as u64).sum::<u64>()).sum()
    }
    /// (created, consumed: delivered or acted on, dropped, live) packet counts.
    pub fn packet_counts(&self) -> (u64, u64, u64, u64) {
        (self.pkts_created, self.pkts_consumed, self.pkts_dropped, self.pkts.live() as u64)
    }

    /// `arrive_delay` of any port of the fabric (a partition wires only the ports it reads,
    /// `Ports`: a path's ports may be another's).
    pub(super) fn arrive_delay(&self, port: PortId) -> SimTime {
        arrive_delay(&self.topo, self.cfg.switch_latency, port as usize)
    }

    /// The fabric split into at most `parts` partitions for a run over threads, balanced by
    /// the hosts' planned load (`net::partition`).
    pub fn partition(&self, parts: usize) -> crate::net::partition::Partitioning {
        let delay: Vec<SimTime> = (0..self.topo.ports.len()).map(|p| self.arrive_delay(p as PortId)).collect();
        let even;
        let load = if self.cfg.host_load.is_empty() {
            even = vec![1.0; self.hosts.len()];
            &even
        } else {
            &self.cfg.host_load
        };
        crate::net::partition::partition(&self.topo, &delay, load, parts)
    }

    /// Process events up to and including time `limit` (or until the run ends).
    pub fn run_until(&mut self, limit: SimTime) {
        if self.end.is_none() && self.arrivals.planned() == 0 && self.flows.is_empty() {
            self.end = Some(EndReason::Completed);
        }
        if self.par.is_some() {
            if self.end.is_none() {
                self.run_split(limit);
            }
            return;
        }
        let due = limit.min(self.cfg.max_time);
        // events before the next synchronisation point (with no grid: every event, and the
        // check after each)
        let before_sync = |s: &Sim| if s.sync == SimTime::ZERO { due } else { due.min(SimTime(s.next_sync.0.saturating_sub(1))) };
        let mut until = before_sync(self);
        while self.end.is_none() {
            let (t, ev) = match self.q.pop_by(until) {
                Ok(next) => next,
                Err(None) => {
                    // (a fixed departure's arrival comes after its start: all have started)
                    self.settle_departures(self.now);
                    self.end = Some(if self.active == 0 { EndReason::Completed } else { EndReason::Idle });
                    break;
                }
                Err(Some(t)) if t <= due => {
                    // at or past a synchronisation point
                    if self.active == 0 && self.arrivals.is_done() {
                        self.settle_departures(until);
                        self.complete_at_sync();
                        break;
                    }
                    if let Some(r) = self.grid_checks(self.next_sync) {
                        self.end = Some(r);
                        break;
                    }
                    self.next_sync = SimTime((t.0 / self.sync.0 + 1) * self.sync.0);
                    until = before_sync(self);
                    continue;
                }
                Err(Some(t)) => {
                    let complete = self.active == 0 && self.arrivals.is_done();
                    if complete {
                        self.settle_departures(until);
                        if self.departure_by(due) {
                            // the sequential model's next event, a TxDone by `due`, is at
                            // or past a synchronisation point
                            #[cfg(test)]
                            {
                                self.completed_at_fixed_departure += 1;
                            }
                            self.complete_at_sync();
                            break;
                        }
                    }
                    if t > self.cfg.max_time && limit >= self.cfg.max_time {
                        // a synchronisation point before max_time comes first
                        if self.sync != SimTime::ZERO && self.next_sync <= due && complete {
                            self.complete_at_sync();
                            break;
                        }
                        self.settle_departures(due);
                        self.now = self.cfg.max_time;
                        self.end = Some(EndReason::MaxTime);
                    } else {
                        self.settle_departures(due);
                    }
                    break;
                }
            };
            self.look_ahead();
            self.now = t;
            if t >= self.next_final {
                self.collect_final();
            }
            self.events += 1;
            self.dispatch(ev);
            if self.sync == SimTime::ZERO {
                // no grid: the checks after every event
                if self.active == 0 && self.arrivals.is_done() {
                    self.end = Some(EndReason::Completed);
                } else if let Some(r) = self.grid_checks(t) {
                    self.end = Some(r);
                }
            }
        }
        if self.end.is_none() && limit > self.now {
            if self.paused_at.1 != self.events {
                self.paused_at = (self.now, self.events);
            }
            self.now = limit.min(self.cfg.max_time);
        }
    }

    /// The mechanisms' fabric-wide checks at grid point `at` (`SwitchMechanism::grid_judge`)
    /// over the whole fabric: the run's end, if one ends it.
    fn grid_checks(&mut self, at: SimTime) -> Option<EndReason> {
        if !self.mechs.acts_at(Caps::GRID) {
            return None;
        }
        let seen = self.mechs.grid_seen();
        let views = self.mechs.grid_views(at, &|_| true, &ctx!(self));
        if seen.iter().all(Option::is_none) && views.iter().all(Option::is_none) {
            return None;
        }
        self.mechs.grid_judge(at, &[seen], &[views], &self.topo)
    }

    /// Every flow had finished at a synchronisation point: the run ends at its last event.
    fn complete_at_sync(&mut self) {
        if self.paused_at.1 == self.events {
            self.now = self.paused_at.0;
        }
        self.end = Some(EndReason::Completed);
    }

    /// Run to the end.
    pub fn run(&mut self) {
        self.run_until(SimTime::MAX);
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            // a packet that carries its route is data at a switch: the egress record it reads
            // anyway names the switch, and the ingress port's record (a cache line on a large
            // fabric) is not read at all
            Ev::Arrive { port, pkt, route } if route != PortId::MAX => {
                debug_assert!(!matches!(self.pkts.get(pkt).kind, PktKind::Ctrl(_) | PktKind::Msg(_)));
                let sw = self.egress.at(route).wire.owner;
                if self.fixed_departures {
                    self.switch_rx::<true>(sw, port, pkt, route)
                } else {
                    self.switch_rx::<false>(sw, port, pkt, route)
                }
            }
            Ev::Arrive { port, pkt, route } => {
                let p = self.pkts.get(pkt);
                let h = self.egress.at(port).wire;
                match p.kind {
                    PktKind::Ctrl(frame) => {
                        let (flow, hash) = (p.flow, p.hash);
                        self.consume(pkt);
                        self.mechs.on_frame(frame, port, flow, hash, &mut ctx!(self));
                        self.apply_effects()
                    }
                    PktKind::Msg(msg) if h.is_switch => self.route_msg(h.owner, msg, pkt),
                    _ if h.is_switch && self.fixed_departures => self.switch_rx::<true>(h.owner, port, pkt, route),
                    _ if h.is_switch => self.switch_rx::<false>(h.owner, port, pkt, route),
                    _ => self.host_rx(h.owner, port, pkt),
                }
            }
            Ev::TxDone { port } => {
                let eg = self.egress.at_mut(port);
                if eg.txdone_at == self.now {
                    eg.txdone_at = SimTime::ZERO;
                    self.try_tx(port);
                }
            }
            Ev::NextArrival => {
                // every partition starts every flow
                self.count_once_per_run();
                let spec = self.arrivals.pop().expect("an arrival event has its flow");
                if let Some(n) = self.arrivals.peek_start() {
                    self.q.push(n, Ev::NextArrival);
                }
                let key = self.arrivals_started;
                self.arrivals_started += 1;
                self.start_flow(spec, None, key);
            }
            Ev::Rto { flow, gen } => self.on_rto(flow, gen),
            Ev::UdpSend { flow } => self.udp_send(flow),
            Ev::Sample => {
                // every partition samples its own queues at the same times
                self.count_once_per_run();
                self.sample_queues()
            }
            Ev::Mech(t) => {
                self.mechs.on_timer(t, &mut ctx!(self));
                self.apply_effects();
            }
            Ev::Pace { flow, gen } => self.on_pace(flow, gen),
            Ev::Unhold { flow } => self.on_unhold(flow),
            Ev::Link(i) => {
                // every partition changes its copy of the link
                self.count_once_per_run();
                self.link_change(i as usize);
            }
            Ev::Reroute(_) => {
                self.count_once_per_run();
                self.reroute();
            }
            Ev::Credit { flow } => self.grant_credit(flow),
            Ev::Pull { host } => self.pull_turn(host),
        }
    }

    /// Apply the effects the last hook pushed, in order. Applying one may run further hooks
    /// (a frame starts a transmission, whose dequeue hooks push effects): those are applied
    /// where they arise, before the rest of this batch, as a direct call would order them.
    #[inline(always)]
    fn apply_effects(&mut self) {
        // most hooks push nothing: that check stays inline at every call site
        if !self.fx.is_empty() {
            self.apply_pending_effects();
        }
    }

    #[inline(never)]
    fn apply_pending_effects(&mut self) {
        // swap in the spare buffer so that pushing effects allocates only while buffers grow
        let mut fx = std::mem::replace(&mut self.fx, std::mem::take(&mut self.fx_spare));
        for e in fx.drain(..) {
            match e {
                Effect::Frame { port, frame, flow, hash } => self.send_frame(port, frame, flow, hash),
                Effect::Timer { at, timer } => self.q.push(at, Ev::Mech(timer)),
                Effect::Wake { port } => self.try_tx(port),
                Effect::Release(a) => self.release(a),
                Effect::SteerFlow { port, mut flow, class } => {
                    // a NIC classifies a connection's frames: the message now on it
                    while let Some(next) = self.flows.continued_by(flow) {
                        flow = next;
                    }
                    let host = self.egress.at(port).wire.owner;
                    // (until issue 38 a CIP at a flow's receiver steered its sender's data, a
                    // host away: the record was one for both ends)
                    if let Some(f) = self.flows.get_mut(flow).filter(|f| f.src == host) {
                        f.nic_class = class;
                    }
                }
                Effect::Msg { sw, msg, flow, to, about, hash, value } => {
                    let id = self.new_control(Packet {
                        kind: PktKind::Msg(msg),
                        flow,
                        src: about,
                        dst: to,
                        seq: value,
                        hash,
                        size: msg.wire_bytes(),
                        payload: sw,
                        ts: self.now,
                        ..Packet::blank()
                    });
                    self.route_msg(sw, msg, id);
                }
                Effect::HoldFlow { flow, until } => self.hold_flow(flow, until),
                Effect::End(r) => self.end = Some(r),
            }
        }
        self.fx_spare = fx;
    }

    /// Put a link-local control frame on `port`, ahead of its queues.
    fn send_frame(&mut self, port: PortId, frame: Frame, flow: FlowId, hash: u32) {
        let id = self.new_control(Packet { kind: PktKind::Ctrl(frame), flow, hash, size: frame.wire_bytes(), ..Packet::blank() });
        self.egress.push_ctrl(port, id);
        self.try_tx(port);
    }

    /// Allocate a mechanism's control frame or routed message, counted as control traffic.
    fn new_control(&mut self, p: Packet) -> PktId {
        self.ctrl_frames += 1;
        self.new_packet(p)
    }

    /// Allocate a packet entering the network, counted on its flow (a streamed run keeps
    /// a finished flow's row until its last packet is gone).
    #[inline]
    fn new_packet(&mut self, p: Packet) -> PktId {
        self.pkts_created += 1;
        self.flows.packet_made(p.flow);
        if let Some(part) = &mut self.part {
            part.packet(p.flow, 1);
        }
        self.pkts.alloc(p)
    }

    /// Forward a routed message one hop from switch `sw`, ahead of the data queues, unless a
    /// mechanism consumes it on its way out.
    fn route_msg(&mut self, sw: u32, msg: Msg, pkt: PktId) {
        let (dst, hash, hops) = {
            let p = self.pkts.get_mut(pkt);
            p.hops = p.hops.saturating_add(1);
            (p.dst, p.hash, p.hops)
        };
        if hops > MAX_HOPS {
            return self.drop_pkt(pkt, None, DropReason::Ttl);
        }
        let Some(out) = self.routes.next_hop(sw, dst, hash) else {
            return self.drop_pkt(pkt, None, DropReason::NoRoute);
        };
        let consumed = self.mechs.on_msg(msg, MsgAt { sw, out, pkt }, &mut ctx!(self));
        if consumed {
            self.consume(pkt);
        } else {
            self.egress.push_ctrl(out, pkt);
        }
        self.apply_effects();
        self.try_tx(out);
    }

    /// Add every switch queue's depth to its histogram; sample again after the interval
    /// while the run goes on.
    fn sample_queues(&mut self) {
        let QueueSampling { every, bin, .. } = self.cfg.queue_sample.unwrap();
        let nq = self.cfg.queues;
        if self.depth_hist.is_empty() {
            self.depth_hist = vec![Vec::new(); self.egress.len() * nq];
        }
        let first = self.depth_series.len();
        self.depth_series.extend((0..nq).map(|qi| (self.now, qi as u8, 0, 0, 0)));
        let mut k = 0;
        while k < self.busy_ports.len() {
            let pid = self.busy_ports[k] as usize;
            if self.egress[pid].bytes == 0 {
                // empty since: its samples are implicit until a packet joins it again
                self.port_busy[pid] = false;
                self.busy_ports.swap_remove(k);
                continue;
            }
            k += 1;
            if self.part.as_ref().is_some_and(|p| p.remote(pid as PortId)) {
                continue;
            }
            for (qi, q) in self.queues.of(pid as PortId).iter().enumerate() {
                if q.bytes == 0 {
                    continue;
                }
                let b = (q.bytes / bin) as usize;
                let h = &mut self.depth_hist[pid * nq + qi];
                if h.len() <= b {
                    h.resize(b + 1, 0);
                }
                h[b] += 1;
                let s = &mut self.depth_series[first + qi];
                s.2 = s.2.max(q.bytes);
                s.3 += q.bytes;
                s.4 += (q.bytes > 0) as u32;
            }
        }
        self.samples += 1;
        // sample again for as long as the run goes on (it ends at a synchronisation point
        // once every flow has finished, or at max_time). (Sampling stopped at the first
        // sample that found every flow finished until issue 38: a rule that reads every
        // partition's flows at one instant.)
        self.q.push(self.now + every, Ev::Sample);
    }

    /// A packet reached its end (delivered, or a control frame acted on): count it and free it.
    #[inline]
    fn consume(&mut self, pkt: PktId) {
        self.pkts_consumed += 1;
        let f = self.pkts.get(pkt).flow;
        self.flows.packet_gone(f);
        if let Some(part) = &mut self.part {
            part.packet(f, -1);
        }
        self.pkts.free(pkt);
    }

    fn drop_pkt(&mut self, pkt: PktId, at: Option<(PortId, usize)>, why: DropReason) {
        if let Some((port, q)) = at {
            self.queues.stats_mut(port, q).count_drop(why);
        }
        let (f, kind) = {
            let p = self.pkts.get(pkt);
            (p.flow, p.kind)
        };
        self.flows.count_drop(f);
        self.flows.packet_gone(f);
        if let Some(part) = &mut self.part {
            part.packet(f, -1);
        }
        if kind == PktKind::Data {
            self.data_dropped += 1;
        }
        self.pkts_dropped += 1;
        self.pkts.free(pkt);
    }
}

#[cfg(test)]
mod ci_tests;
#[cfg(test)]
mod dcqcn_tests;
#[cfg(test)]
mod fixed_departure_tests;
#[cfg(test)]
mod multipath_tests;
#[cfg(test)]
mod uet_tests;
#[cfg(test)]
mod pfc_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod seam_tests;
#[cfg(test)]
mod tests;
