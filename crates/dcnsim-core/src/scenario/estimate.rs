//! The memory a scenario will need, estimated from the schema alone, before anything is
//! built: an absurd size (a fat-tree of radix 1000, ten million senders, a billion incast
//! rounds) is refused in microseconds with the key responsible, instead of aborting on a
//! failed allocation or being killed by the kernel minutes later. `validate` and `run`
//! apply the same check, so they agree.
//!
//! The estimate counts what the builder allocates up front and what grows with the
//! scenario's size: nodes and ports (with their queues), the routing table (switches x
//! edge switches), hosts, and the flows the workloads will generate (a row each, the whole
//! state of those in flight), each from `size_of` of the engine's own records. Packets in flight are
//! bounded by the buffers and not counted. It is an estimate (within a small factor), and
//! only meant to tell "fits" from "cannot possibly fit".

use super::schema::*;
use super::{clos2_spines, err, resolve_cdf, ScenarioError};
use crate::host::tcp::TcpSender;
use crate::engine::FLOWS_TABLE_ROW_BYTES;
use crate::host::{Flow, FlowTable};
use crate::net::port::{Egress, PortCtl};
use crate::net::{Packet, TELEMETRY_BYTES_PER_PACKET};
use crate::net::queue::{PktQueue, QueueStats};
use crate::workload::FlowSpec;

/// Environment variable that sets the memory limit (a size such as "64GB").
pub const LIMIT_ENV: &str = "DCNSIM_MEMORY_LIMIT";

/// What a scenario needs, and the key whose value drives the largest part.
#[derive(Debug, Clone)]
pub struct Estimate {
    pub bytes: u128,
    pub key: String,
    pub what: String,
}

/// The memory limit: `DCNSIM_MEMORY_LIMIT` if set, else half the machine's memory (8 GB
/// where that cannot be read).
pub fn limit() -> Result<u64, ScenarioError> {
    if let Ok(v) = std::env::var(LIMIT_ENV) {
        return crate::sim::units::parse_size(&v).filter(|&b| b > 0).ok_or_else(|| err(LIMIT_ENV, format!("invalid value \"{v}\", expected a size such as \"64GB\"")));
    }
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().find(|l| l.starts_with("MemTotal:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
        .map(|kib| kib * 1024);
    Ok(total.map_or(8_000_000_000, |t| t / 2))
}

/// Which way `key` goes to need less memory: most keys count something, but a longer
/// period or bin, a larger mean message or oversubscription (fewer spines) means fewer
/// records.
fn less_memory(key: &str) -> &'static str {
    if key == THREADS_KEY {
        "fewer"
    } else if key == UDP_RING_KEY {
        "to set"
    } else if key.ends_with(".period") || key.ends_with(".throughput_bin") || key.ends_with(".queue_sample") {
        "a longer"
    } else if key.ends_with(".mean_size") || key.ends_with(".oversubscription") {
        "a larger"
    } else {
        "a smaller"
    }
}

/// What the process holds before a scenario is loaded: the Python interpreter with pandas,
/// pyarrow and the bindings (measured: 117 MB resident after importing them), which a run
/// from the command line or the API holds beside the engine's memory.
pub const PROCESS_BYTES: u128 = 150_000_000;

/// The results' ports table, per row (port and queue class): the core's table, the columns
/// handed to Python, the DataFrame with its node names and the copies its sorting makes
/// (measured: `dcnsim run` of a k = 64 fat-tree, 393,216 rows, peaks at 595 MB where the
/// engine alone peaks at 259 MB and the interpreter holds 117 MB: 560 B a row;
/// `dcnsim.run` of a k = 32, 49,152 rows, at 211 MB where the engine peaks at 33 MB: 1.2
/// KB a row, less the flows table).
const RESULTS_BYTES_PER_PORT_ROW: u128 = 800;

/// What each thread of a split run holds in its allocator's own regions beyond what it
/// allocates: mimalloc keeps a thread's small objects in regions of its own, backed in
/// 2 MiB pages (`sim::large_pages`), so a region holding a few kB is resident 2 MiB at a
/// time (measured: the core runner's peak on k = 32 for 20 us grew by 34, 54, 82 and 88 MB
/// on 1, 2, 4 and 8 threads with it).
const ALLOCATOR_BYTES_PER_THREAD: u128 = 24_000_000;

/// The key an estimate blames when the threads' copies of the fabric are its largest part.
pub const THREADS_KEY: &str = "--threads";

/// The key an estimate blames when UDP sources that outrun their host link are its largest
/// part: without a transmit ring their NIC queue has no bound.
const UDP_RING_KEY: &str = "transport.udp.nic_buffer";

/// What the NIC queues of listed UDP flows can hold, in bytes of packet records, when no
/// transmit ring (`transport.udp.nic_buffer`) holds the sources back: per host, its UDP
/// flows at their rate all at once, less what its link drains, for the whole run, at most
/// their bytes (flows listed in a file or a trace; other workloads' concurrency is not
/// known before the run, and the run's memory guard stops what passes the limit).
fn udp_backlog(s: &Scenario, host_rate: f64, per_packet: u128) -> Result<u128, ScenarioError> {
    let udp = &s.transport.udp;
    if udp.nic_buffer.is_some() || host_rate <= 0.0 {
        return Ok(0);
    }
    let rate = udp.rate.map_or(host_rate, |r| r.0 as f64);
    let packet = udp.packet_size.map_or(s.topology.mtu(), |b| b.0).max(1) as f64;
    // ordered by host: the float sum below comes out the same on every run
    let mut per_host: std::collections::BTreeMap<u32, (f64, f64)> = Default::default();
    for (i, w) in s.workload.iter().enumerate() {
        let of_workload = super::transport::workload_transport(s, i)?;
        for f in w.flows.iter().flatten() {
            if super::transport::flow_transport(f, of_workload) == crate::host::Transport::Udp {
                let e = per_host.entry(f.src).or_default();
                *e = (e.0 + 1.0, e.1 + f.size.0 as f64);
            }
        }
    }
    let secs = s.scenario.max_time.0 .0 as f64 * 1e-12;
    let bytes: f64 = per_host.values().map(|&(n, size)| ((n * rate - host_rate).max(0.0) * secs / 8.0).min(size)).sum();
    Ok(((bytes / packet).min(1e30) as u128).saturating_mul(per_packet))
}

/// Refuse a scenario whose estimate, run on `threads` threads, exceeds the limit.
pub fn check(s: &Scenario, threads: usize) -> Result<(), ScenarioError> {
    let e = estimate(s, threads)?;
    let limit = limit()?;
    if e.bytes > limit as u128 {
        return Err(refusal(&e, limit));
    }
    Ok(())
}

/// The error of a scenario whose estimate `e` is over `limit`. Where the process itself
/// (`PROCESS_BYTES`) is most of it, no smaller scenario fits: the limit is what to change.
fn refusal(e: &Estimate, limit: u64) -> ScenarioError {
    if e.bytes - PROCESS_BYTES.min(e.bytes) < PROCESS_BYTES {
        return err(
            LIMIT_ENV,
            format!(
                "invalid value {}: any run needs more ({} for the process itself: the interpreter, pandas and the bindings; this scenario about {} in all), expected a limit above {} ({} or --memory-limit)",
                human(limit as u128),
                human(PROCESS_BYTES),
                human(e.bytes),
                human(e.bytes),
                LIMIT_ENV
            ),
        );
    }
    err(
        e.key.clone(),
        format!(
            "the scenario needs about {} of memory ({}), more than the limit of {}; expected {} {}, or raise the limit ({} or --memory-limit)",
            human(e.bytes),
            e.what,
            human(limit as u128),
            less_memory(&e.key),
            e.key,
            LIMIT_ENV
        ),
    )
}

fn human(b: u128) -> String {
    match b {
        b if b >= 1_000_000_000_000 => format!("{:.1} TB", b as f64 / 1e12),
        b if b >= 1_000_000_000 => format!("{:.1} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} KB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}

/// The estimate (see the module doc) of a run on `threads` threads: a run split over
/// threads gives each partition its own copy of every port's egress record and host's
/// state (the topology and the routes are shared; the queue tables are resident only where
/// written), beside the whole one it was split from. Works on a
/// validated scenario.
pub fn estimate(s: &Scenario, threads: usize) -> Result<Estimate, ScenarioError> {
    let t = &s.topology;
    let q = s.switch.queues() as u128;
    let (hosts, switches, edges, links, key) = fabric_size(t);
    let ports = 2 * links;
    // every port's egress record, its control record and queues (each queue's counters
    // too), plus the port's entries in the topology and the mechanisms' tables (measured:
    // 1.32 GB for a 10^6-host dumbbell, when a 32-byte record of the port's wiring stood
    // beside the egress record; it is inside it now)
    let zeroed = (std::mem::size_of::<PortCtl>() + q as usize * (std::mem::size_of::<PktQueue>() + std::mem::size_of::<QueueStats>())) as u128;
    let per_port = (std::mem::size_of::<Egress>() + 224) as u128 + zeroed;
    let per_port = per_port + q * s.switch.fq_codel.as_ref().map_or(0, |f| f.memory_per_queue()) as u128;
    // INT counts each port's transmitted bytes
    let per_port = per_port + s.switch.int.as_ref().map_or(0, |_| 8);
    let whole = ports * per_port + hosts * (64 + 24 * q);
    let fabric = (hosts + switches) * 128 + whole + switches * edges * 8;
    // A partition of a split run copies every port's egress record (the topology and the
    // routes are shared) with the mechanisms' and the switch buffers' per-port state, 64 B
    // a port here (measured at k = 64: 95 B a port in all), and each host's arrival
    // process; its control, queue and counter tables are zeroed (net/zeroed.rs): together
    // the partitions make one whole run's worth of them resident, which replaces the
    // whole run's own (dropped once it is split).
    let per_partition = ports * (std::mem::size_of::<Egress>() + 64) as u128 + hosts * (64 + 24 * q);
    // vectors that grow by doubling may briefly hold twice their contents
    let (fabric, per_partition) = (fabric + fabric / 4, per_partition + per_partition / 4);
    let partitions = if threads > 1 { threads as u128 } else { 0 };
    let copies = (per_partition + ALLOCATOR_BYTES_PER_THREAD).saturating_mul(partitions);
    let results = ports.saturating_mul(q).saturating_mul(RESULTS_BYTES_PER_PORT_ROW);

    // flows the workloads will generate
    // the fastest host link, and the shortest round trip: two host links each way
    let (host_rate, link_delay) = match t.kind {
        TopologyKind::Custom => {
            let links = || t.links.iter().flatten();
            (links().map(|l| l.rate.0).max().unwrap_or(0), links().map(|l| l.delay.0 .0).min().unwrap_or(0))
        }
        _ => t.host_link.map_or((0, 0), |l| (l.rate.0, l.delay.0 .0)),
    };
    let (host_rate, round_trip) = (host_rate as f64, 4.0 * link_delay as f64 * 1e-12);
    // every flow keeps its row of the flow table and, at the end, its row of the results
    // table; a running flow also has its record, a sender and a window of packets in flight
    // (each with its event), for at most a few flows per host at a time (flows are made as
    // the run reaches them: one pending spec per host's process)
    let window = s.transport.init_cwnd.unwrap_or(DEFAULT_INIT_CWND) as u128;
    // (the flow table's rows grow by doubling: up to twice their contents; a mechanism may
    // keep a value per flow beside them, SFC's paused time or PFC's victim flag, 8 B
    // doubled; measured: seed 004's SFC study, 6.93 M flows, 1.74 GB on one thread)
    let per_flow = (2 * FlowTable::BYTES_PER_FLOW + FLOWS_TABLE_ROW_BYTES + 16) as u128;
    // with INT every packet slot also holds its telemetry records
    let telemetry = s.switch.int.as_ref().map_or(0, |_| TELEMETRY_BYTES_PER_PACKET);
    let per_window = window * (std::mem::size_of::<Packet>() + 32 + telemetry) as u128;
    let per_running = (std::mem::size_of::<Flow>() + std::mem::size_of::<TcpSender>()) as u128 + per_window;
    let mut flows_total: u128 = 0;
    let mut biggest: (u128, String) = (0, String::new());
    for i in 0..s.workload.len() {
        let (n, key) = workload_flows(s, i, hosts, host_rate, round_trip, key);
        flows_total = flows_total.saturating_add(n);
        if n > biggest.0 {
            biggest = (n, key);
        }
    }
    let udp_queues = udp_backlog(s, host_rate, (std::mem::size_of::<Packet>() + 32 + telemetry) as u128)?;
    let running = flows_total.min(8 * hosts);
    let pending = hosts * std::mem::size_of::<FlowSpec>() as u128;
    let flow_bytes = flows_total.saturating_mul(per_flow).saturating_add(running.saturating_mul(per_running)).saturating_add(pending);
    // a partition of a split run keeps rows of its own hosts' flows only (the run's rows,
    // a flow between two partitions' hosts twice: counted once more), and of every flow
    // its place in the id maps (two u32, doubling) and a mechanism's value (8 B, doubled);
    // at the end a second whole flows table, a partition's, is combined into the first
    // (measured: seed 004's study on 16 threads, 6.4 GB; 20.9 GB when every partition
    // kept a row of every flow and built its own flows table)
    let per_flow_copied = (4 * std::mem::size_of::<u32>() + 16) as u128;
    let copies = match partitions {
        0 => copies,
        n => copies.saturating_add(flows_total.saturating_mul(per_flow_copied.saturating_mul(n).saturating_add(per_flow))),
    };
    // the initial windows' packets, when they are most of the flows' memory, are the
    // transport's doing, not the workload's
    let windows = running.saturating_mul(per_window);
    // a goodput series has a row per flow and bin with deliveries: at most every flow in
    // every bin, and at most one per payload-carrying packet the hosts can receive in the run
    let series = match s.metrics.throughput_bin {
        Some(bin) => {
            let run = s.scenario.max_time.0 .0;
            let bins = (run / bin.0 .0.max(1)).max(1) as u128;
            let mss = s.topology.mtu().saturating_sub(s.transport.header()).max(1) as u128;
            let packets = (hosts as f64 * host_rate * run as f64 * 1e-12 / 8.0).min(1e30) as u128 / mss;
            // the row (20 B) while running and its copy in the results table
            flows_total.saturating_mul(bins).min(packets.saturating_add(flows_total)).saturating_mul(48)
        }
        None => 0,
    };
    // the queue depth series: a row per sample and queue class (32 B while running, 29 B in
    // the results table)
    let depth_series = match s.metrics.queue_sample {
        Some(every) => {
            let run = s.scenario.max_time.0 .0.saturating_sub(s.metrics.queue_sample_from.map_or(0, |d| d.0 .0));
            let samples = (run / every.0 .0.max(1)) as u128 + 1;
            samples.saturating_mul(s.switch.queues.unwrap_or(1).max(1) as u128).saturating_mul(64)
        }
        None => 0,
    };
    // a capture holds each frame (its bytes to the snaplen and the pcapng block's 44 B) until
    // the run ends, then hands over a copy, which the bindings copy once more
    let capture = match &s.metrics.capture {
        Some(c) => {
            let frame = c.snaplen().unwrap_or(u64::MAX).min(s.topology.mtu() + 80) as u128 + 44;
            (c.max_frames() as u128).saturating_mul(frame).saturating_mul(3)
        }
        None => 0,
    };
    let mut what = format!("{hosts} hosts, {switches} switches, {ports} ports, about {flows_total} flows");
    if partitions > 0 {
        what.push_str(&format!(", {threads} threads"));
    }
    let key = if udp_queues > fabric && udp_queues > flow_bytes && udp_queues > copies && udp_queues > series && udp_queues > depth_series && udp_queues > capture {
        what.push_str(", UDP sources queued at their NICs");
        UDP_RING_KEY.to_string()
    } else if copies > fabric && copies > flow_bytes && copies > series && copies > depth_series && copies > capture {
        THREADS_KEY.to_string()
    } else if capture > fabric && capture > flow_bytes && capture > series && capture > depth_series {
        what.push_str(", a packet capture");
        "metrics.capture.max_frames".to_string()
    } else if depth_series > fabric && depth_series > flow_bytes && depth_series > series {
        what.push_str(", a queue depth series");
        "metrics.queue_sample".to_string()
    } else if series > fabric && series > flow_bytes {
        what.push_str(", a per-flow goodput series");
        "metrics.throughput_bin".to_string()
    } else if flow_bytes > fabric {
        match s.transport.init_cwnd {
            Some(_) if windows > flow_bytes / 2 => "transport.init_cwnd".to_string(),
            _ => biggest.1,
        }
    } else {
        key.to_string()
    };
    let bytes = [fabric, copies, results, flow_bytes, udp_queues, series, depth_series, capture, PROCESS_BYTES].into_iter().fold(0u128, u128::saturating_add);
    Ok(Estimate { bytes, key, what })
}

/// Hosts, switches, edge switches (with hosts), links, and the key that sets the scale.
fn fabric_size(t: &TopologyConfig) -> (u128, u128, u128, u128, &'static str) {
    match t.kind {
        TopologyKind::Dumbbell => {
            let (a, b) = (t.senders.unwrap_or(0) as u128, t.receivers.unwrap_or(DEFAULT_RECEIVERS) as u128);
            (a + b, 2, 2, a + b + 1, if a >= b { "topology.senders" } else { "topology.receivers" })
        }
        TopologyKind::Clos2 => {
            let (spt, tors) = (t.servers_per_tor.unwrap_or(0) as u128, t.tors.unwrap_or(0) as u128);
            // a derived count can be astronomical (validate refuses it): capped, so that no
            // product below wraps into a small number that passes
            let spines = clos2_spines(t).min(1e20) as u128;
            let spines_key = if t.spines.is_some() { "topology.spines" } else { "topology.oversubscription" };
            // hosts x ToRs host links and ToRs x spines fabric links: blame the largest factor
            let key = [(spt, "topology.servers_per_tor"), (tors, "topology.tors"), (spines, spines_key)].into_iter().max_by_key(|(n, _)| *n).unwrap().1;
            (spt * tors, tors.saturating_add(spines), tors, (spt * tors).saturating_add(tors.saturating_mul(spines)), key)
        }
        TopologyKind::FatTree3 => {
            let ((p, tp, ap, hpt, c), key) = match t.k {
                Some(k) => {
                    let (k, h) = (k as u128, k as u128 / 2);
                    ((k, h, h, h, k * k / 4), "topology.k")
                }
                None => {
                    let v = |x: Option<u32>| x.unwrap_or(0) as u128;
                    ((v(t.pods), v(t.tors_per_pod), v(t.aggs_per_pod), v(t.hosts_per_tor), v(t.cores)), "topology.pods")
                }
            };
            let hosts = p * tp * hpt;
            let core_links = match t.core_wiring.unwrap_or_default() {
                CoreWiring::Groups if ap == 0 => 0,
                CoreWiring::Groups => p * ap * (c / ap),
                CoreWiring::All => p * ap * c,
            };
            (hosts, c + p * (tp + ap), p * tp, hosts + p * tp * ap + core_links, key)
        }
        TopologyKind::Custom => {
            let (h, sw, l) = (t.hosts.as_ref().map_or(0, |v| v.len()), t.switches.as_ref().map_or(0, |v| v.len()), t.links.as_ref().map_or(0, |v| v.len()));
            (h as u128, sw as u128, sw as u128, l as u128, "topology.links")
        }
    }
}

/// The flows workload `i` will generate, and the key that sets their number (`key`: the
/// fabric's, for a workload on every host).
fn workload_flows(s: &Scenario, i: usize, hosts: u128, host_rate: f64, round_trip: f64, key: &str) -> (u128, String) {
    let w = &s.workload[i];
    let arrivals_end = s.scenario.arrivals_for.map_or(s.scenario.max_time.0, |d| d.0);
    let n_hosts = match w.hosts.as_deref() {
        Some([a, b]) => b.saturating_sub(*a) as u128,
        _ => hosts,
    };
    let start = w.start.map_or(crate::sim::SimTime::ZERO, |d| d.0);
    let stop = w.stop.map_or(arrivals_end, |d| d.0);
    let secs = stop.0.saturating_sub(start.0) as f64 * 1e-12;
    match w.kind {
        WorkloadKind::Flows => (w.flows.as_ref().map_or(0, |f| f.len()) as u128, format!("workload[{i}].flows")),
        // validated: its rows were counted then
        WorkloadKind::Trace => (w.path.as_deref().and_then(|p| crate::workload::trace::info(p).ok()).map_or(0, |t| t.rows) as u128, format!("workload[{i}].path")),
        WorkloadKind::Permutation => (n_hosts, if w.hosts.is_some() { format!("workload[{i}].hosts") } else { key.to_string() }),
        WorkloadKind::Incast => {
            let (fan_in, groups) = (w.fan_in.unwrap_or(0) as u128, w.groups.unwrap_or(DEFAULT_GROUPS) as u128);
            let size = w.size.map_or(1, |b| b.0.max(1)) as f64;
            let (rounds, rounds_key) = match (w.period, w.load) {
                (_, Some(l)) => (l * n_hosts as f64 * host_rate * secs / (8.0 * size * (fan_in * groups).max(1) as f64), "load"),
                (Some(IncastPeriod::Every(d)), None) => (secs / (d.0 .0.max(1) as f64 * 1e-12), "period"),
                (Some(IncastPeriod::Persistent), None) => {
                    // each sender starts its next flow when one ends, while the run lasts: a
                    // flow takes at least its bytes at line rate and a round trip
                    let secs = stop.0.min(s.scenario.max_time.0 .0).saturating_sub(start.0) as f64 * 1e-12;
                    let flow = (size + s.transport.header() as f64) * 8.0 / host_rate.max(1.0) + round_trip;
                    ((secs / flow).min(1e30), "period")
                }
                _ => (1.0, "groups"),
            };
            let rounds = rounds.ceil().max(1.0) as u128;
            // flows = rounds x groups x fan_in: blame the largest factor (the later one of a
            // tie, so groups before fan_in before the rounds' key)
            let (_, key) = [(rounds, rounds_key), (fan_in, "fan_in"), (groups, "groups")].into_iter().max_by_key(|(n, _)| *n).unwrap();
            (rounds.saturating_mul(groups).saturating_mul(fan_in), format!("workload[{i}].{key}"))
        }
        WorkloadKind::ClosedLoop => {
            // the loops of one source share its link: it sends at most one mean-sized
            // message per the message's time at line rate, besides each loop's first
            let sources = w.pairs.as_ref().map_or(n_hosts, |p| p.iter().map(|&[s, _]| s).collect::<std::collections::BTreeSet<_>>().len() as u128) as f64;
            let loops = (w.pairs.as_ref().map_or(n_hosts, |p| p.len() as u128) * w.in_flight.unwrap_or(super::schema::DEFAULT_IN_FLIGHT) as u128) as f64;
            let mean = w.mean_size.map_or(1, |b| b.0.max(1)) as f64;
            ((sources * host_rate * secs / (8.0 * mean) + loops).min(1e30) as u128, format!("workload[{i}].mean_size"))
        }
        WorkloadKind::Poisson => {
            let mean = match w.sizes.as_deref().map(resolve_cdf) {
                Some(Ok(c)) => c.mean(),
                _ => 1.0,
            };
            let n = w.load.unwrap_or(0.0) * n_hosts as f64 * host_rate * secs / (8.0 * mean.max(1.0));
            (n.min(1e30) as u128, format!("workload[{i}].load"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{check as validate_file, load, Document, RunOptions};

    const HOST: &str = "host_link = { rate = \"100Gbps\", delay = \"1us\" }";

    fn refused(topology: &str, workload: &str, key: &str) -> String {
        refused_text(&format!("[scenario]\nname = \"big\"\n[topology]\n{topology}\n{HOST}\n[[workload]]\n{workload}\n"), key)
    }

    fn refused_text(text: &str, key: &str) -> String {
        let doc = Document::from_toml(text).unwrap();
        let ((v, r), largest) = crate::largest_alloc::during(|| (validate_file(&doc, None).err(), load(text, false, None, &RunOptions::default()).err()));
        let v = v.unwrap_or_else(|| panic!("validate accepted {text}"));
        let r = r.unwrap_or_else(|| panic!("run accepted {text}"));
        // refused before anything is built: the fabric or flow tables would be many MB
        assert!(largest < 1 << 20, "a refusal allocated {largest} B at once");
        assert_eq!((v.key.as_str(), r.key.as_str()), (key, key), "{v} / {r}");
        assert!(v.message.contains("of memory") && v.message.contains("more than the limit"), "{v}");
        v.message
    }

    /// The absurd sizes users tried: each refused by validate and run alike, at once, with
    /// the key responsible.
    #[test]
    fn absurd_sizes_are_refused_before_anything_is_built() {
        let perm = "kind = \"permutation\"\nsize = \"1MB\"";
        assert!(refused("kind = \"fat_tree3\"\nk = 1000", perm, "topology.k").contains("expected a smaller topology.k,"));
        refused(
            "kind = \"dumbbell\"\nsenders = 100000000\nbottleneck = { rate = \"100Gbps\", delay = \"1us\" }",
            "kind = \"incast\"\nfan_in = 1\nsize = \"1KB\"",
            "topology.senders",
        );
        let clos = "kind = \"clos2\"\ntors = 4\nservers_per_tor = 8\nspines = 2";
        refused(clos, "kind = \"incast\"\nfan_in = 8\nsize = \"1KB\"\ngroups = 1000000000", "workload[0].groups");
        // which way a key goes to need less memory: a longer period, not a smaller one
        let m = refused(clos, "kind = \"incast\"\nfan_in = 8\nsize = \"1KB\"\nperiod = \"1ps\"", "workload[0].period");
        assert!(m.contains("expected a longer workload[0].period,"), "{m}");
        refused(clos, "kind = \"poisson\"\nsizes = \"web-search\"\nload = 0.5\nstop = \"100000s\"", "workload[0].load");
        // a goodput series in 1 ns bins of a 1 s run on 800 hosts: a row per packet, 300 GB
        let wide = "kind = \"clos2\"\ntors = 100\nservers_per_tor = 8\nspines = 2";
        let m = refused(wide, "kind = \"poisson\"\nsizes = \"web-search\"\nload = 0.5\n[metrics]\nthroughput_bin = \"1ns\"", "metrics.throughput_bin");
        assert!(m.contains("expected a longer metrics.throughput_bin,"), "{m}");
        // a queue depth series sampled every picosecond of a 1 s run: 1e12 rows
        let m = refused(wide, "kind = \"poisson\"\nsizes = \"web-search\"\nload = 0.1\n[metrics]\nqueue_sample = \"1ps\"", "metrics.queue_sample");
        assert!(m.contains("expected a longer metrics.queue_sample,"), "{m}");
        let m = refused(
            wide,
            "kind = \"poisson\"\nsizes = \"web-search\"\nload = 0.1\n[metrics.capture]\nports = [\"tor0\"]\nsnaplen = \"0B\"\nmax_frames = 100000000000",
            "metrics.capture.max_frames",
        );
        assert!(m.contains("a packet capture"), "{m}");
    }

    /// The refusal names the key whose value is too large: the spines (given, or derived
    /// from a tiny oversubscription), the initial window, not the servers or the workload.
    #[test]
    fn the_refusal_names_the_key_that_is_too_large() {
        let clos = |extra: &str| format!("kind = \"clos2\"\ntors = 1\nservers_per_tor = 2\n{extra}");
        let flow = "kind = \"flows\"\nflows = [ { src = 0, dst = 1, size = \"100KB\" } ]";
        let m = refused(&clos("oversubscription = 1e-9"), flow, "topology.oversubscription");
        assert!(m.contains("expected a larger topology.oversubscription,"), "{m}");
        refused(&clos("spines = 4294967290"), flow, "topology.spines");
        refused(&clos("spines = 2"), &format!("{flow}\n[transport]\ninit_cwnd = 4294967295"), "transport.init_cwnd");
    }

    /// A persistent incast makes a flow per sender back to back for the whole run: 1 B
    /// messages for 1000 s are about a billion flows (it passed as one round and ran out of
    /// memory), while the same incast for 10 ms fits.
    #[test]
    fn persistent_incast_counts_its_flows_over_the_run() {
        let text = |max_time: &str| {
            format!(
                "[scenario]\nname = \"p\"\nmax_time = \"{max_time}\"\n[topology]\nkind = \"dumbbell\"\nsenders = 4\nreceivers = 4\n\
                 host_link = {{ rate = \"10Gbps\", delay = \"1us\" }}\nbottleneck = {{ rate = \"10Gbps\", delay = \"1us\" }}\n\
                 [[workload]]\nkind = \"incast\"\nfan_in = 7\nsize = \"1B\"\nperiod = \"persistent\"\nconnection = \"new\"\n"
            )
        };
        refused_text(&text("1000s"), "workload[0].period");
        let s = Document::from_toml(&text("10ms")).unwrap().scenario(None).unwrap();
        let e = super::estimate(&s, 1).unwrap();
        // 7 senders x 10 ms / (41 B at 10 Gbps + 4 us): 7 x 2480 flows at most
        assert!(e.bytes - super::PROCESS_BYTES < 100_000_000, "{} B ({})", e.bytes, e.what);
        assert!(e.what.contains("about 17360 flows"), "{}", e.what);
    }

    /// An astronomical spine count (validate refuses it first) gives an astronomical
    /// estimate, not one wrapped around to a few bytes.
    #[test]
    fn the_estimate_saturates_instead_of_wrapping() {
        let text = format!("[scenario]\nname = \"x\"\n[topology]\nkind = \"clos2\"\ntors = 1\nservers_per_tor = 2\noversubscription = 1e-300\n{HOST}\n");
        let s: super::Scenario = toml::from_str(&text).unwrap();
        let e = super::estimate(&s, 1).unwrap();
        assert!(e.bytes > 1_000_000_000_000_000, "{} B ({})", e.bytes, e.what);
        assert_eq!(e.key, "topology.oversubscription");
    }

    /// A run split over threads copies every port's egress record and host's state per
    /// partition: a k = 64 fat-tree for 20 us (`dcnsim.run`, its peak VmHWM, 2026-11-26,
    /// 2-core VM) measured 574 MB resident on one thread, 730 MB on 4 and 1,263 MB on 16
    /// (the partitions' copies about 43 MB each; 595 MB, 1.04 GB and 3.10 GB before the
    /// queue tables were zeroed and the partitions' flows tables held only their own
    /// rows); the estimate bounds each within 2.5x and, where the copies are most of it,
    /// blames the threads.
    #[test]
    fn threads_are_counted_in_the_estimate() {
        let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/scenarios/fat_tree_k64_websearch.toml")).unwrap();
        let s = Document::from_toml(&text).unwrap().scenario(None).unwrap();
        let one = super::estimate(&s, 1).unwrap();
        assert_eq!(one.bytes, super::estimate(&s, 0).unwrap().bytes);
        for (threads, measured) in [(4u128, 730_374_144u128), (16, 1_263_022_080)] {
            let e = super::estimate(&s, threads as usize).unwrap();
            assert!(e.bytes >= measured && 2 * e.bytes <= 5 * measured, "{threads} threads: {} B estimated, {measured} B measured", e.bytes);
            assert!(e.what.contains(&format!("{threads} threads")), "{}", e.what);
        }
        assert!(one.bytes >= 574_312_448 && 2 * one.bytes <= 5 * 574_312_448, "{} B", one.bytes);
        assert_eq!(super::estimate(&s, 16).unwrap().key, super::THREADS_KEY);
        let m = super::check(&s, 16).err().map(|e| e.to_string());
        if let Some(m) = m {
            assert!(m.contains("expected fewer --threads"), "{m}");
        }
    }

    /// A partition of a split run keeps rows of its own hosts' flows, and of every flow its
    /// place in the id maps: seed 004's SFC study (6.93 M flows) measured 1,738 MiB
    /// resident on one thread and 6,400 MiB on 16 (the core runner, its flows table built
    /// at the end; lent 16-core devices, 2026-11-26; 11,886 MiB before partitions held only
    /// their own rows, 20.9 GB before the partitions' tables were combined one at a time),
    /// 3,692 MiB on 4 (the 2-core VM); the estimate bounds each within 2.5x.
    #[test]
    fn split_runs_count_every_partitions_flow_rows() {
        let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/seed004_sfc_benefits.toml")).unwrap();
        let s = Document::from_toml(&text).unwrap().scenario(Some("SFC proxy+DCQCN")).unwrap();
        for (threads, measured) in [(1usize, 1738u128 << 20), (4, 3692 << 20), (16, 6400 << 20)] {
            let e = super::estimate(&s, threads).unwrap();
            assert!(e.bytes >= measured && 2 * e.bytes <= 5 * measured, "{threads} threads: {} B estimated, {measured} B measured", e.bytes);
        }
    }

    /// Listed UDP flows that outrun their host link queue at its NIC for the whole run
    /// without a transmit ring: eight line-rate sources on one 10G host for 10 s would
    /// hold 58 million packet records, about 5.6 GB (the run's guard stopped it at 600 MB
    /// after 1.3 simulated s); the estimate counts it and blames the missing ring, and a ring
    /// (or one source) needs none of it.
    #[test]
    fn udp_sources_outrunning_their_link_are_counted() {
        let flows: Vec<String> = (0..8).map(|k| format!("{{ src = 0, dst = {}, size = \"100GB\" }}", 1 + k % 3)).collect();
        let text = |extra: &str, flows: &str| {
            format!(
                "[scenario]\nname = \"u\"\nmax_time = \"10s\"\n[topology]\nkind = \"dumbbell\"\nsenders = 1\nreceivers = 3\n\
                 host_link = {{ rate = \"10Gbps\", delay = \"1us\" }}\nbottleneck = {{ rate = \"100Gbps\", delay = \"1us\" }}\n\
                 [transport]\nkind = \"udp\"\n{extra}\n[[workload]]\nkind = \"flows\"\nflows = [{flows}]\n"
            )
        };
        let est = |t: String| super::estimate(&Document::from_toml(&t).unwrap().scenario(None).unwrap(), 1).unwrap();
        let e = est(text("", &flows.join(", ")));
        // 7 x 10 Gbit/s for 10 s = 87.5 GB of 1500 B packets: 58 M records
        assert!(e.bytes > 5_000_000_000, "{} B ({})", e.bytes, e.what);
        assert_eq!(e.key, "transport.udp.nic_buffer");
        assert!(est(text("udp = { nic_buffer = \"1MB\" }", &flows.join(", "))).bytes < 400_000_000);
        assert!(est(text("", &flows[0])).bytes < 400_000_000, "one source at line rate queues nothing");
        // 7 x 10 Gbit/s for 1000 s: 580 GB of records, past any machine's default limit
        let long = text("", &flows.join(", ").replace("100GB", "100000GB")).replace("max_time = \"10s\"", "max_time = \"1000s\"");
        assert!(refused_text(&long, "transport.udp.nic_buffer").contains("expected to set transport.udp.nic_buffer"));
    }

    /// A limit below what the process itself holds is named as the thing to change (no
    /// smaller scenario would fit), with the sizes as they are (1 KB, not "0.0 MB"); a
    /// scenario that is most of its estimate names its own key.
    #[test]
    fn a_limit_below_the_process_itself_is_what_the_refusal_names() {
        use super::{human, refusal, Estimate, LIMIT_ENV, PROCESS_BYTES};
        let small = Estimate { bytes: PROCESS_BYTES + 2_000_000, key: "topology.senders".into(), what: "3 hosts".into() };
        let e = refusal(&small, 1_000);
        assert_eq!(e.key, LIMIT_ENV, "{e}");
        assert!(e.message.starts_with("invalid value 1.0 KB: any run needs more (150.0 MB for the process itself"), "{e}");
        assert!(e.message.contains("expected a limit above 152.0 MB"), "{e}");
        let big = Estimate { bytes: PROCESS_BYTES + 5_000_000_000, key: "topology.senders".into(), what: "10^6 hosts".into() };
        let e = refusal(&big, 4_000_000_000);
        assert_eq!(e.key, "topology.senders");
        assert!(e.message.contains("more than the limit of 4.0 GB; expected a smaller topology.senders"), "{e}");
        assert_eq!((human(999), human(1_500)), ("999 B".to_string(), "1.5 KB".to_string()));
    }

    /// Shipped scenarios, full size included, fit in the default limit of an 8 GB machine.
    #[test]
    fn shipped_scenarios_fit_on_a_laptop() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/dcnsim/scenarios");
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let doc = Document::from_toml(&std::fs::read_to_string(&p).unwrap()).unwrap();
            for v in std::iter::once(None).chain(doc.variant_names().into_iter().map(Some)) {
                let s = doc.scenario(v.as_deref()).unwrap();
                let est = super::estimate(&s, 1).unwrap();
                eprintln!("{}: {:.2} GB ({})", p.display(), est.bytes as f64 / 1e9, est.what);
                assert!(est.bytes < 4_000_000_000, "{}: {} B ({})", p.display(), est.bytes, est.what);
            }
        }
    }
}

/// Fuzz: scenario text mutated at random (bytes deleted, duplicated, replaced by TOML
/// punctuation, digits or unit letters) never makes the parser, the validation or the
/// estimate panic; it gives a scenario or an error naming a key.
#[cfg(test)]
mod fuzz {
    use super::super::{check, Document};
    use proptest::prelude::*;

    fn shipped() -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/dcnsim/scenarios");
        let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect();
        v.sort();
        v
    }

    const ALPHABET: &[u8] = b"[]{}=\",.0123456789-eKMGTBbpsnumk_ \n#";

    proptest! {
        #![proptest_config(crate::sim::proptest_config(256))]
        #[test]
        fn mutated_scenarios_never_panic(file in 0usize..64, edits in proptest::collection::vec((any::<u32>(), 0u8..3, any::<u8>()), 1..12)) {
            let files = shipped();
            let mut text = files[file % files.len()].clone().into_bytes();
            for (at, op, b) in edits {
                if text.is_empty() {
                    break;
                }
                let i = at as usize % text.len();
                match op {
                    0 => { text.remove(i); }
                    1 => { let c = text[i]; text.insert(i, c); }
                    _ => text[i] = ALPHABET[b as usize % ALPHABET.len()],
                }
            }
            let text = String::from_utf8_lossy(&text);
            if let Ok(doc) = Document::from_toml(&text) {
                let _ = check(&doc, None);
            }
        }
    }
}
