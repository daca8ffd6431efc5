//! A validated scenario built into a ready-to-run simulation: the fabric, its routes, the
//! engine's configuration (mechanisms' parameters included) and the flows the workloads make.

use super::*;

/// A built-in distribution name or a CDF file path.
pub fn resolve_cdf(name: &str) -> Result<FlowSizeCdf, String> {
    if let Some(c) = FlowSizeCdf::builtin(name) {
        return Ok(c);
    }
    let text = std::fs::read_to_string(name).map_err(|e| {
        // a relative path is read from the working directory: say where that was
        let looked = std::path::absolute(name).map(|p| p.display().to_string()).unwrap_or_else(|_| name.to_string());
        format!("invalid value \"{name}\", expected one of {:?} or a readable CDF file (looked for {looked}: {e})", FlowSizeCdf::builtin_names())
    })?;
    FlowSizeCdf::parse(&text).map_err(|e| format!("CDF file \"{name}\": {e}"))
}

// ------------------------------------------------------------------- building

pub(super) fn link(l: LinkSpec) -> (u64, SimTime) {
    (l.rate.0, l.delay.0)
}

/// The fabric described by a validated topology config.
pub fn build_topology(t: &TopologyConfig) -> Result<Topology, ScenarioError> {
    Ok(match t.kind {
        TopologyKind::Dumbbell => dumbbell::build(t.senders.unwrap(), t.receivers.unwrap_or(DEFAULT_RECEIVERS), link(t.host_link.unwrap()), link(t.bottleneck.unwrap())),
        TopologyKind::Clos2 => {
            let h = t.host_link.unwrap();
            let f = t.fabric_link.unwrap_or(h);
            let spt = t.servers_per_tor.unwrap();
            let spines = clos2_spines(t) as u32;
            clos::build(spt, t.tors.unwrap(), spines, t.placement.unwrap_or_default() == Placement::Interleaved, link(h), link(f))
        }
        TopologyKind::FatTree3 => {
            let h = t.host_link.unwrap();
            let f = t.fabric_link.unwrap_or(h);
            let c = t.core_link.unwrap_or(f);
            fat_tree::build(fat_tree_shape(t)?, link(h), link(f), link(c))
        }
        TopologyKind::Custom => {
            let mut topo = Topology::default();
            let mut ids = std::collections::BTreeMap::new();
            for h in t.hosts.as_ref().unwrap() {
                ids.insert(h.clone(), topo.add_host(h.clone()));
            }
            for s in t.switches.as_ref().unwrap() {
                ids.insert(s.clone(), topo.add_switch(s.clone()));
            }
            for l in t.links.as_ref().unwrap() {
                topo.connect(ids[&l.a], ids[&l.b], l.rate.0, l.delay.0);
            }
            topo
        }
    })
}

/// The buffer model of every switch, checked against the largest switch's port count.
pub(super) fn buffer_params(b: &BufferConfig, topo: &Topology) -> Result<BufferParams, ScenarioError> {
    Ok(match b.model {
        BufferModel::Static => BufferParams::Static { queue_cap: b.queue.map_or(DEFAULT_QUEUE_CAP, |b| b.0) },
        BufferModel::Shared => {
            let guaranteed = b.guaranteed.map_or(DEFAULT_GUARANTEED, |b| b.0);
            let (pool, per_port) = match b.pool_per_port {
                Some(per_port) if guaranteed > per_port.0 => {
                    return Err(err(
                        "switch.buffer.guaranteed",
                        format!("invalid value {guaranteed} B: more than switch.buffer.pool_per_port ({} B); expected guaranteed <= pool_per_port", per_port.0),
                    ))
                }
                Some(per_port) => (per_port.0, true),
                None => {
                    let pool = b.pool.map_or(DEFAULT_POOL, |b| b.0);
                    let max_ports = topo.switches.iter().map(|&n| topo.nodes[n as usize].ports.len()).max().unwrap_or(0) as u64;
                    if guaranteed * max_ports > pool {
                        return Err(err(
                            "switch.buffer.guaranteed",
                            format!(
                                "invalid value {guaranteed} B: {max_ports} ports x {guaranteed} B exceeds the pool ({pool} B); expected guaranteed <= pool / ports \
                                 (or switch.buffer.pool_per_port, a pool per switch that grows with its ports)"
                            ),
                        ));
                    }
                    (pool, false)
                }
            };
            BufferParams::Shared { pool, guaranteed, alpha: b.alpha.unwrap_or(DEFAULT_BUFFER_ALPHA), per_port }
        }
    })
}

/// Shortest-path ECMP routes plus the custom topology's static routes.
pub fn build_routes(t: &TopologyConfig, topo: &Topology) -> Result<Routes, ScenarioError> {
    let mut routes = Routes::build(topo).map_err(|u| err("topology", format!("disconnected: {} cannot reach {}", u.from, u.to)))?;
    for r in t.routes.iter().flatten() {
        let find = |name: &str| topo.nodes.iter().position(|n| n.name == name).unwrap() as u32;
        let (sw, dst, via) = (find(&r.switch), find(&r.dst), find(&r.via));
        let port = *topo.nodes[sw as usize].ports.iter().find(|&&p| topo.peer_node(p) == via).unwrap();
        routes.set_static(topo.nodes[sw as usize].index, topo.nodes[dst as usize].index, port);
    }
    Ok(routes)
}

/// The fabric's nodes by name, for keys that name them.
pub(super) struct NodeNames<'t>(std::collections::HashMap<&'t str, u32>);

impl<'t> NodeNames<'t> {
    pub(super) fn of(topo: &'t Topology) -> Self {
        NodeNames(topo.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i as u32)).collect())
    }
    /// Node `name`'s id, or an error naming `key` with the nearest names.
    fn node(&self, name: &str, key: &str) -> Result<u32, ScenarioError> {
        self.0.get(name).copied().ok_or_else(|| {
            let mut all: Vec<&str> = self.0.keys().copied().collect();
            all.sort_unstable();
            let msg = unknown_name("no node named", name, &all);
            // thousands of names are no help: the nearest is
            let msg = if all.len() > 24 { msg.split(", expected one of").next().unwrap_or_default().to_string() + " (see the nodes in ports.parquet)" } else { msg };
            err(key, msg)
        })
    }

    /// The ports a port name (`key`) gives on `topo`: "node" (all its ports), "node:N" (its
    /// port N, the `port` column of ports.parquet) or "node->peer" (its ports toward that
    /// neighbour), in port order.
    pub(super) fn ports(&self, topo: &Topology, spec: &str, key: &str) -> Result<Vec<crate::net::PortId>, ScenarioError> {
        let node = |name: &str| self.node(name, key);
        Ok(if let Some((a, b)) = spec.split_once("->") {
            let (a, b) = (node(a.trim())?, node(b.trim())?);
            let to_b: Vec<u32> = topo.nodes[a as usize].ports.iter().copied().filter(|&p| topo.peer_node(p) == b).collect();
            if to_b.is_empty() {
                return Err(err(key, format!("invalid value \"{spec}\": {} has no link to {}", topo.nodes[a as usize].name, topo.nodes[b as usize].name)));
            }
            to_b
        } else if let Some((a, n)) = spec.rsplit_once(':') {
            let a = node(a.trim())?;
            let own = &topo.nodes[a as usize].ports;
            match n.trim().parse::<usize>() {
                Ok(n) if n < own.len() => vec![own[n]],
                _ => return Err(err(key, format!("invalid value \"{spec}\", expected a port number 0..{} of {}", own.len() - 1, topo.nodes[a as usize].name))),
            }
        } else {
            topo.nodes[node(spec.trim())? as usize].ports.clone()
        })
    }
}

/// `switch.int`'s parameters, its switch names resolved on the built fabric.
pub(super) fn int_params(s: &Scenario, topo: &Topology) -> Result<Option<crate::switch::int::IntParams>, ScenarioError> {
    let Some(c) = &s.switch.int else { return Ok(None) };
    Ok(Some(c.params(switches_named(topo, c.switches.as_deref(), "switch.int.switches")?)))
}

/// By switch index, the switches a list of names (`key`) gives, resolved on the built
/// fabric (None: no list, every switch); an unknown name or a host is refused, naming its
/// entry.
fn switches_named(topo: &Topology, list: Option<&[String]>, key: &str) -> Result<Option<Vec<bool>>, ScenarioError> {
    let Some(list) = list else { return Ok(None) };
    let names = NodeNames::of(topo);
    let mut on = vec![false; topo.switches.len()];
    for (i, name) in list.iter().enumerate() {
        let key = format!("{key}[{i}]");
        let n = &topo.nodes[names.node(name, &key)? as usize];
        if n.kind != crate::net::NodeKind::Switch {
            return Err(err(key, format!("invalid value \"{name}\": a host, expected a switch")));
        }
        on[n.index as usize] = true;
    }
    Ok(Some(on))
}

/// `metrics.capture` with its port names resolved on the built fabric (`NodeNames::ports`),
/// each port once, in the order named.
pub(super) fn capture_params(s: &Scenario, topo: &Topology) -> Result<Option<CaptureParams>, ScenarioError> {
    let Some(c) = &s.metrics.capture else { return Ok(None) };
    let names = NodeNames::of(topo);
    let mut ports = Vec::new();
    for (i, spec) in c.ports.iter().enumerate() {
        let ids = names.ports(topo, spec, &format!("metrics.capture.ports[{i}]"))?;
        for p in ids {
            if !ports.contains(&p) {
                ports.push(p);
            }
        }
    }
    Ok(Some(CaptureParams {
        ports,
        from: c.from.map_or(SimTime::ZERO, |d| d.0),
        to: c.to.map_or(s.scenario.max_time.0, |d| d.0),
        all: c.frames.unwrap_or_default() == CaptureFrames::All,
        max_frames: c.max_frames(),
        snaplen: c.snaplen().map_or(u32::MAX, |n| n.min(u32::MAX as u64) as u32),
    }))
}

/// Every flow's ideal completion time must be a time the clock can hold (it is reported,
/// and slowdowns divide by it), even if the run stops long before: refuse a workload whose
/// largest flow needs longer than the longest simulated time at the slowest link. From
/// the configuration alone, so that validate and run agree.
pub(super) fn check_flow_sizes(s: &Scenario, topo: &Topology) -> Result<(), ScenarioError> {
    let tr = &s.transport;
    let mtu = s.topology.mtu();
    let slowest_link = topo.ports.iter().map(|p| p.rate_bps).min().unwrap_or(1).max(1);
    // (size, key, where in the key's file, transport)
    let largest = |i: usize, w: &WorkloadConfig| -> Result<Vec<(u64, String, String, Transport)>, ScenarioError> {
        let of_workload = transport::workload_transport(s, i)?;
        Ok(match w.kind {
            // each transport's largest: a smaller UDP flow may take longer than a larger TCP one
            WorkloadKind::Flows => {
                let flows = w.flows.as_deref().unwrap_or_default();
                flows.iter().enumerate().map(|(j, f)| (f.size.0, format!("workload[{i}].flows[{j}].size"), String::new(), transport::flow_transport(f, of_workload))).collect()
            }
            WorkloadKind::Trace => {
                let path = w.path.as_deref().unwrap_or_default();
                let info = trace_info(i, path)?;
                let kinds = info.kinds.iter();
                kinds.map(|k| (k.max_size.0, format!("workload[{i}].path"), format!("{path}, row {}: ", k.max_size.1), transport::row_transport(k, of_workload))).collect()
            }
            WorkloadKind::Poisson => match w.sizes.as_deref().map(resolve_cdf) {
                Some(Ok(cdf)) => vec![(cdf.max(), format!("workload[{i}].sizes"), String::new(), of_workload)],
                _ => vec![],
            },
            _ => vec![(w.size.map_or(0, |b| b.0), format!("workload[{i}].size"), String::new(), of_workload)],
        })
    };
    for (size, key, at, transport) in s.workload.iter().enumerate().map(|(i, w)| largest(i, w)).collect::<Result<Vec<_>, _>>()?.into_iter().flatten() {
        let (mss, hdr, slowest) = match transport {
            Transport::Udp => (tr.udp.packet_size.map_or(mtu, |b| b.0), 0, tr.udp.rate.map_or(slowest_link, |r| r.0.min(slowest_link)).max(1)),
            _ => (mtu - tr.header(), tr.header(), slowest_link),
        };
        let wire = size.div_ceil(mss.max(1)).max(1) as u128 * (mss + hdr) as u128;
        let t = wire * 8 * 1_000_000_000_000 / slowest as u128;
        if t > units::MAX_DURATION.0 as u128 {
            return Err(err(
                key,
                format!(
                    "{at}a flow of {size} B takes {:.3e} s at the slowest link ({slowest} bps), beyond the longest simulated time (1000000s); expected a smaller size",
                    t as f64 * 1e-12
                ),
            ));
        }
    }
    Ok(())
}

/// What the trace of workload `i` holds ([`workload::trace::info`]), or why it is refused.
pub(super) fn trace_info(i: usize, path: &str) -> Result<std::sync::Arc<workload::trace::TraceInfo>, ScenarioError> {
    workload::trace::info(path).map_err(|m| err(format!("workload[{i}].path"), m))
}

/// Every host name a trace's rows use is a host of the built fabric.
pub(super) fn check_trace_hosts(s: &Scenario, topo: &Topology) -> Result<(), ScenarioError> {
    let names = NodeNames::of(topo);
    for (i, w) in s.workload.iter().enumerate() {
        let (WorkloadKind::Trace, Some(path)) = (w.kind, &w.path) else { continue };
        let key = format!("workload[{i}].path");
        for (name, row, col) in &trace_info(i, path)?.names {
            let at = format!("{path}, row {row}, column {col}");
            let n = names.node(name, &key).map_err(|e| err(&key, format!("{at}: {}", e.message)))?;
            if topo.nodes[n as usize].kind != crate::net::NodeKind::Host {
                return Err(err(&key, format!("{at}: invalid value \"{name}\": a switch, expected a host")));
            }
        }
    }
    Ok(())
}

/// Options that do not belong in the scenario file.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub seed: Option<u64>,
    pub check_invariants: bool,
    /// Threads to split the run over (engine/parallel.rs); 0 or 1: one. Results are the
    /// same at any count.
    pub threads: usize,
}

/// Turn a validated scenario into a ready-to-run simulation.
pub fn build(s: &Scenario, opts: &RunOptions) -> Result<Sim, ScenarioError> {
    build_adjusted(s, opts, |_, _| {})
}

/// `build`, with the configuration changed by `adjust` (given the fabric) first: tests that
/// set what no scenario key sets.
pub(crate) fn build_adjusted(s: &Scenario, opts: &RunOptions, adjust: impl FnOnce(&mut SimConfig, &Topology)) -> Result<Sim, ScenarioError> {
    let (topo, routes, mut cfg, arrivals) = configure(s, opts)?;
    adjust(&mut cfg, &topo);
    let sim = Sim::with_arrivals(topo, routes, cfg, arrivals);
    if opts.threads <= 1 {
        return Ok(sim);
    }
    let seed = opts.seed.unwrap_or(s.scenario.seed);
    let (topo, planned) = (build_topology(&s.topology)?, sim.flows_planned());
    // each partition runs the same arrival processes (made from the scenario, as configure
    // made them: it has already checked they can be)
    Ok(sim.split(opts.threads, || FlowArrivals::new(flow_specs(s, &topo, seed).expect("made once already").procs, planned)))
}

/// What a simulation is made of: the fabric, its routes, the configuration and the flows.
pub(super) fn configure(s: &Scenario, opts: &RunOptions) -> Result<(Topology, Routes, SimConfig, FlowArrivals), ScenarioError> {
    estimate::check(s, opts.threads)?;
    let seed = opts.seed.unwrap_or(s.scenario.seed);
    let topo = build_topology(&s.topology)?;
    check_flow_sizes(s, &topo)?;
    check_trace_hosts(s, &topo)?;
    let routes = build_routes(&s.topology, &topo)?;
    let mtu = s.topology.mtu() as u32;
    let sw = &s.switch;
    let nq = sw.queues() as usize;
    let buffer = buffer_params(&sw.buffer, &topo)?;
    let scheduler = match sw.scheduler {
        SchedulerKind::Strict => Scheduler::Strict,
        SchedulerKind::Dwrr => {
            let w = sw.weights.clone().unwrap_or_else(|| vec![1; nq]);
            let strict = sw.strict.iter().flatten().fold(0u8, |m, &q| m | (1 << q));
            Scheduler::Dwrr { quanta: w.iter().map(|&x| x as u64 * mtu as u64).collect(), strict }
        }
    };
    let (ecn, aqm) = sw.aqm.as_ref().map_or((None, None), |a| a.params(mtu as u64));
    let tr = &s.transport;
    let min_rto = tr.min_rto.map_or(DEFAULT_MIN_RTO, |d| d.0);
    // the flows are made as the run reaches them; a first set of the same processes,
    // made and dropped flow by flow, counts them (for the progress and the summary), sums
    // each host's bytes (the partitioner's weights) and finds what the warnings look for
    let mut host_load = vec![0.0f64; topo.hosts.len()];
    let mut udp_any = false;
    let (planned, hpcc, udp_loops, repeats, at_dst, ordered) = flow_specs(s, &topo, seed)?.procs.into_iter().flatten().fold((0, false, false, false, false, false), |(n, h, u, r, d, o), f| {
        host_load[f.src as usize] += f.size as f64;
        host_load[f.dst as usize] += f.size as f64;
        let udp = f.transport == crate::host::Transport::Udp;
        udp_any |= udp;
        let repeats = f.closed_loop.is_some() || f.repeat_until.is_some();
        (n + 1, h || f.transport == HPCC, u || (udp && f.closed_loop.is_some()), r || repeats, d || (udp && repeats && f.closed_loop.is_none()), o || f.transport.in_order())
    });
    if tr.path == Some(crate::host::path::PathChoice::Reps) && (ordered || udp_any) {
        return Err(err(
            "transport.path",
            "invalid value \"reps\": REPS recycles the entropies a UET flow's ACKs bring back, and some flows here are not UET (use \"spray\" for them, or make every flow uet)",
        ));
    }
    let Flows { procs, loops, tags } = flow_specs(s, &topo, seed)?;
    let switch_latency = sw.latency.map(|d| d.0).unwrap_or(SimTime::ZERO);
    let ci = sw.ci.as_ref().map(mechanisms::ci::params);
    let sfc = sw.sfc.as_ref().map(mechanisms::sfc::params);
    let qcn = sw.qcn.as_ref().map(|cp| mechanisms::qcn::params(cp, s.transport.qcn.as_ref()));
    let mut pfc = mechanisms::pfc::params(s, &topo, &buffer)?;
    if sfc.as_ref().is_some_and(|p| p.mode == SfcMode::Proxy) && pfc.is_none() {
        // the proxy's PAUSE frames need the NICs' PFC receive side, present in every RoCE NIC
        pfc = Some(PfcParams::receive_only(topo.ports.len()));
    }
    let architecture = match &sw.architecture {
        Some(a) => {
            // a shared input pool's threshold takes the buffer's alpha unless it has its own
            let alpha = match buffer {
                BufferParams::Shared { alpha, .. } => alpha,
                BufferParams::Static { .. } => DEFAULT_BUFFER_ALPHA,
            };
            Some(a.params(alpha, |key, list| switches_named(&topo, list, key))?)
        }
        None => None,
    };
    if let Some(n) = sw.drc.as_ref().and_then(|_| topo.switches.iter().map(|&n| &topo.nodes[n as usize]).find(|n| n.ports.len() > crate::switch::drc::MAX_PORTS)) {
        return Err(err("switch.drc", format!("switch {} has {} ports; a DRC frame names at most {} directions, expected switches of at most that many ports", n.name, n.ports.len(), crate::switch::drc::MAX_PORTS)));
    }
    // DRC's feedback and PFC's dynamic XOFF at an input-buffered switch judge its input buffers
    let inputs = architecture.as_ref().map_or_else(Vec::new, |a| a.input_buffers(&topo, &buffer, nq));
    if let (Some(p), Some(_)) = (pfc.as_mut(), &architecture) {
        p.on_inputs(inputs.clone());
    }
    let drc = sw.drc.as_ref().map(|d| mechanisms::drc::params(d, inputs));
    let mechanisms = MechanismParams { ecn, pfc, ci, sfc, aqm, qcn, drc, fq_codel: sw.fq_codel.as_ref().map(|f| f.params(mtu)),
        int: int_params(s, &topo)?,
        architecture,
        load_balance: sw.load_balance.as_ref().map(|l| l.params()),
        trim: sw.trim.as_ref().map(|t| t.params(nq as u8)),
        #[cfg(test)]
        stand_in: None,
    };
    mechanisms.check_exclusive()?;
    if let Some(a) = &mechanisms.architecture {
        a.check_buffers(&topo, &buffer, nq, mtu as u64)?;
    }
    let (link_changes, reroute_after) = match &s.faults {
        Some(f) => super::faults::link_changes(f, &topo, seed)?,
        None => (Vec::new(), super::faults::DEFAULT_DETECT),
    };
    let uet_rto = uet_rto(&buffer, &topo);
    let mut cfg = SimConfig {
        host_jitter: crate::engine::DEFAULT_HOST_JITTER,
        path: tr.path.unwrap_or_default(),
        link_changes,
        credits: None,
        reroute_after,
        seed,
        max_time: s.scenario.max_time.0,
        mtu,
        header: tr.header() as u32,
        ack_size: tr.ack_size.map_or(DEFAULT_ACK_SIZE, |b| b.0) as u32,
        queues: nq,
        class_of: match &sw.classes {
            Some(c) => std::array::from_fn(|p| c[p]),
            None => std::array::from_fn(|p| (p as u8).min(nq as u8 - 1)),
        },
        scheduler,
        buffer,
        switch_latency,
        mechanisms,
        tcp: transport::tcp_params(tr, min_rto),
        udp: transport::udp_params(tr, mtu),
        roce: transport::roce_params(tr, min_rto),
        // NSCC's default target follows whether the switches trim: with cut = false they drop,
        // as htsim's -disable_trim, whose NSCC then targets one network RTT
        uet: transport::uet_params(tr, sw.trim.as_ref().is_some_and(|t| t.cuts()), uet_rto),
        tags,
        fct_bins: s.metrics.fct_bins.as_ref().map(|v| v.iter().map(|b| b.0).collect()).unwrap_or_else(|| DEFAULT_FCT_BINS.to_vec()),
        check_invariants: opts.check_invariants,
        queue_sample: s.metrics.queue_sample.map(|d| QueueSampling {
            every: d.0,
            bin: s.metrics.queue_bin.map_or(DEFAULT_QUEUE_BIN, |b| b.0),
            from: s.metrics.queue_sample_from.map_or(SimTime::ZERO, |d| d.0),
        }),
        throughput_bin: s.metrics.throughput_bin.map(|d| d.0),
        capture: capture_params(s, &topo)?,
        loops,
        warnings: Vec::new(),
        frame_latency: s.metrics.frame_latency.unwrap_or(udp_loops),
        host_load,
        repeats,
        repeats_at_destination: at_dst,
    };
    cfg.warnings = warnings(s, &cfg, planned, hpcc, ordered);
    Ok((topo, routes, cfg, FlowArrivals::new(procs, planned)))
}

/// `transport.uet.rto`'s default: htsim's 15 us plus six full queues drained at the
/// slowest host's line rate (a static buffer's queue; what the dynamic threshold lets one
/// queue of an otherwise empty shared buffer hold, of the switch with the largest pool).
fn uet_rto(buffer: &crate::switch::BufferParams, topo: &Topology) -> SimTime {
    use crate::switch::BufferParams;
    let queue = match *buffer {
        BufferParams::Static { queue_cap } => queue_cap,
        BufferParams::Shared { guaranteed, alpha, .. } => {
            let pool = topo.switches.iter().map(|&n| buffer.pool_of(topo.nodes[n as usize].ports.len())).max().unwrap_or(0);
            guaranteed + (alpha / (1.0 + alpha) * pool as f64) as u64
        }
    };
    let slowest = (0..topo.hosts.len() as u32).map(|h| topo.ports[topo.host_port(h) as usize].rate_bps).min().unwrap_or(1);
    transport::UET_RTO_BASE + crate::sim::ser_time(transport::UET_RTO_QUEUES * queue, slowest)
}

pub(super) const HPCC: crate::host::Transport = crate::host::Transport::Roce(crate::host::RateCcKind::Hpcc);

/// The processes that make the flows a scenario's workloads start, in workload order
/// (`workload::arrivals`), with the closed loops that start more and the tag names
/// (`FlowSpec::tag` indexes them).
pub(super) struct Flows {
    procs: Vec<Process>,
    loops: Vec<workload::closed_loop::ClosedLoop>,
    tags: Vec<String>,
}

/// Generate every workload's flows (`seed`: the run's).
pub(super) fn flow_specs(s: &Scenario, topo: &Topology, seed: u64) -> Result<Flows, ScenarioError> {
    let tags = &mut Vec::<String>::new();
    let mut tag_id = |name: &str| -> u16 {
        if let Some(p) = tags.iter().position(|t| t == name) {
            p as u16
        } else {
            tags.push(name.to_string());
            (tags.len() - 1) as u16
        }
    };
    let max_time = s.scenario.max_time.0;
    let arrivals_end = s.scenario.arrivals_for.map(|d| d.0).unwrap_or(max_time);
    let hosts = topo.num_hosts() as u32;
    let host_rate = topo.ports[topo.host_port(0) as usize].rate_bps;
    let mut procs: Vec<Process> = Vec::new();
    let mut loops = Vec::new();
    for (i, w) in s.workload.iter().enumerate() {
        let first_proc = procs.len();
        let default_tag = match w.kind {
            WorkloadKind::Poisson => "background",
            WorkloadKind::Incast => "incast",
            WorkloadKind::Permutation => "permutation",
            WorkloadKind::Flows => "flows",
            WorkloadKind::ClosedLoop => "closed_loop",
            WorkloadKind::Trace => "trace",
        };
        let (first, end) = match w.hosts.as_deref() {
            Some([a, b]) => (*a, *b),
            _ => (0, hosts),
        };
        let ctx = GenCtx {
            hosts: end - first,
            first,
            host_rate_bps: host_rate,
            seed,
            index: i as u32,
            start: w.start.map(|d| d.0).unwrap_or(SimTime::ZERO),
            stop: w.stop.map(|d| d.0).unwrap_or(arrivals_end),
            prio: w.priority.unwrap_or(0),
            tag: tag_id(w.tag.as_deref().unwrap_or(default_tag)),
            transport: transport::workload_transport(s, i)?,
        };
        match w.kind {
            WorkloadKind::Poisson => {
                let cdf = resolve_cdf(w.sizes.as_deref().unwrap()).map_err(|m| err(format!("workload[{i}].sizes"), m))?;
                procs.extend(workload::poisson::processes(&ctx, &std::sync::Arc::new(cdf), w.load.unwrap(), w.cluster_size));
            }
            WorkloadKind::Incast => {
                let rounds = match (w.period, w.load) {
                    (_, Some(l)) => Rounds::Load(l),
                    (None | Some(IncastPeriod::Oneshot), None) => Rounds::Oneshot,
                    (Some(IncastPeriod::Persistent), None) => Rounds::Persistent,
                    (Some(IncastPeriod::Every(d)), None) => Rounds::Every(d.0),
                };
                let reuse = w.connection.unwrap_or_default() == Connection::Reuse;
                procs.extend(workload::incast::processes(
                    &ctx,
                    w.fan_in.unwrap(),
                    w.size.unwrap().0,
                    rounds,
                    w.groups.unwrap_or(DEFAULT_GROUPS),
                    w.receiver.map(|r| r - first),
                    reuse,
                    w.disjoint_groups.unwrap_or(false),
                    w.stagger.map_or(SimTime::ZERO, |d| d.0),
                ));
            }
            WorkloadKind::Permutation => procs.push(made(workload::permutation::generate(&ctx, w.size.unwrap().0))),
            WorkloadKind::ClosedLoop => {
                let mean = w.mean_size.unwrap().0;
                let sizes = ExpSizes { mean: mean as f64, min: w.min_size.map_or(DEFAULT_MIN_SIZE, |b| b.0), max: w.max_size.map_or(mean.saturating_mul(16), |b| b.0) };
                let pairs: Option<Vec<(u32, u32)>> = w.pairs.as_ref().map(|p| p.iter().map(|&[a, b]| (a - first, b - first)).collect());
                let reuse = w.connection.unwrap_or_default() == Connection::Reuse;
                let in_flight = w.in_flight.unwrap_or(DEFAULT_IN_FLIGHT);
                let (s, l) = workload::closed_loop::generate(&ctx, pairs.as_deref(), in_flight, sizes, reuse, loops.len() as u32);
                procs.push(made(s));
                loops.extend(l);
            }
            WorkloadKind::Flows => {
                let mut specs = Vec::new();
                for f in w.flows.as_ref().unwrap() {
                    let mut spec = ctx.spec(f.src, f.dst, f.size.0, f.start.map(|d| d.0).unwrap_or(SimTime::ZERO));
                    if let Some(p) = f.priority {
                        spec.prio = p;
                    }
                    if let Some(t) = &f.tag {
                        spec.tag = tag_id(t);
                    }
                    spec.transport = transport::flow_transport(f, ctx.transport);
                    specs.push(spec);
                }
                procs.push(made(specs));
            }
            WorkloadKind::Trace => {
                let path = w.path.as_deref().unwrap();
                let info = trace_info(i, path)?;
                let tags = info.tags.iter().map(|t| (t.clone(), tag_id(t))).collect();
                let hosts = match info.names.is_empty() {
                    true => Default::default(),
                    false => topo.hosts.iter().enumerate().map(|(h, &node)| (topo.nodes[node as usize].name.clone(), h as u32)).collect(),
                };
                let template = ctx.spec(0, 0, 0, SimTime::ZERO);
                let flows = workload::trace::TraceFlows::new(path, template, hosts, tags).map_err(|m| err(format!("workload[{i}].path"), m))?;
                procs.push(Box::new(flows));
            }
        }
        if let (Some(below), Some(p)) = (w.mice_below, w.mice_priority) {
            for proc in &mut procs[first_proc..] {
                let inner = std::mem::replace(proc, Box::new(std::iter::empty()));
                *proc = Box::new(inner.map(move |mut f| {
                    if f.size < below.0 {
                        f.prio = p;
                    }
                    f
                }));
            }
        }
    }
    Ok(Flows { procs, loops, tags: std::mem::take(tags) })
}

/// Valid but almost certainly not what was meant: said in the summary's `warnings` and by
/// the command line. `ordered`: some flow's transport expects its packets in order (TCP,
/// RoCE).
pub(super) fn warnings(s: &Scenario, cfg: &SimConfig, flows: usize, hpcc: bool, ordered: bool) -> Vec<String> {
    let mut w = Vec::new();
    if flows == 0 {
        w.push(format!("workload: no flows (the {} workload table(s) generate none); nothing is simulated", s.workload.len()));
    }
    let (key, bytes) = match cfg.buffer {
        BufferParams::Static { queue_cap } => ("switch.buffer.queue", queue_cap),
        BufferParams::Shared { pool, per_port: true, .. } => ("switch.buffer.pool_per_port", pool),
        BufferParams::Shared { pool, .. } => ("switch.buffer.pool", pool),
    };
    if bytes < cfg.mtu as u64 {
        w.push(format!("{key} = {bytes} B is smaller than one full-size packet (MTU {} B): every full-size packet a switch queues is dropped", cfg.mtu));
    }
    let m = &cfg.mechanisms;
    if m.sfc.as_ref().is_some_and(|p| p.mode == SfcMode::Proxy) && m.pfc.as_ref().is_some_and(|p| p.lossless != 0) {
        w.push(
            "switch.sfc.mode = \"proxy\" with lossless PFC classes: the ToR's own XON and the proxy's PAUSEs share the NIC's one pause timer per class \
             (802.1Qbb: a later frame replaces it), so an XON can end a proxy pause early (the proxy never shortens a running XOFF)"
                .to_string(),
        );
    }
    if m.int.is_none() && hpcc {
        w.push("transport.cc = \"hpcc\" without switch.int: no switch writes the telemetry HPCC reads, so its flows stay at line rate".to_string());
    }
    if cfg.path == crate::host::path::PathChoice::Spray && ordered {
        w.push(
            if cfg.tcp.sack && cfg.tcp.rack {
                "transport.path = \"spray\" with TCP or RoCE flows: their packets take every path and arrive out of order; TCP's RACK-TLP waits a \
                 reordering window before it reads a late segment as lost (0 until it has seen reordering, then a quarter of the minimum RTT, grown \
                 by D-SACKs), RoCE's go-back-N reads every gap as loss (a NACK and a resend); their FCTs measure that, not the paths"
            } else {
                "transport.path = \"spray\" with TCP or RoCE flows: their packets take every path and arrive out of order, which TCP reads as loss \
                 (three duplicate ACKs, or with SACK three segments SACKed above a hole; transport.rack = true finds losses as Linux does, by \
                 RACK-TLP, which waits out reordering) and RoCE's go-back-N as a gap (a NACK and a resend); their FCTs measure that, not the paths"
            }
            .to_string(),
        );
    }
    if m.trim.as_ref().is_some_and(|t| t.cut) && ordered {
        w.push(
            "switch.trim with TCP or RoCE flows: their receivers discard a trimmed header (trimmed_discarded) and their senders recover \
             as from a drop; only UET flows (transport.kind = \"uet\") answer it with a NACK"
                .to_string(),
        );
    }
    w.extend(advice(s).unwrap_or_default());
    w
}
