//! Validation of a resolved scenario: every key's value against what it may be, each error
//! naming the key, the value and what was expected, before anything is built.

use super::*;

pub(super) fn require<T: Copy>(v: Option<T>, key: &str, what: &str) -> Result<T, ScenarioError> {
    v.ok_or_else(|| err(key, format!("missing; expected {what}")))
}

pub(super) fn positive_rate(l: &LinkSpec, key: &str) -> Result<(), ScenarioError> {
    if l.rate.0 == 0 {
        return Err(err(format!("{key}.rate"), "invalid value \"0bps\", expected a rate > 0"));
    }
    Ok(())
}

/// Check every range and cross-key rule that serde cannot express.
pub fn validate(s: &Scenario) -> Result<(), ScenarioError> {
    validate_meta(&s.scenario)?;
    let n_hosts = validate_topology(&s.topology)?;
    validate_switch(s)?;
    transport::validate(s)?;
    if let Some(src) = &s.source {
        validate_source(src, n_hosts)?;
    }
    for (i, w) in s.workload.iter().enumerate() {
        validate_workload(w, i, n_hosts)?;
        if w.kind == WorkloadKind::ClosedLoop && s.transport.udp.nic_buffer.is_none() && transport::workload_transport(s, i)? == Transport::Udp {
            // its next message starts once the last frame of this one is in the NIC: an
            // unbounded NIC queue takes every message at once, without end at one instant
            return Err(err(
                "transport.udp.nic_buffer",
                format!("missing; expected a transmit ring (e.g. \"64KB\", seed 001's WLGs) for the datagram closed loop of workload[{i}], whose sources send their next message as soon as the last one is in the NIC"),
            ));
        }
    }
    if let Some(f) = &s.faults {
        super::faults::validate(f, s.scenario.max_time.0)?;
    }
    validate_metrics(s)
}

pub(super) fn validate_meta(m: &Meta) -> Result<(), ScenarioError> {
    if m.name.trim().is_empty() {
        return Err(err("scenario.name", "empty; expected a name"));
    }
    if m.max_time.0 .0 == 0 {
        return Err(err("scenario.max_time", "invalid value 0, expected a duration > 0"));
    }
    if let Some(a) = m.arrivals_for {
        if a.0 > m.max_time.0 {
            return Err(err("scenario.arrivals_for", format!("invalid value {}, expected at most max_time ({})", a.0, m.max_time.0)));
        }
    }
    Ok(())
}

/// The topology's keys for its kind; its number of hosts.
pub(super) fn validate_topology(t: &TopologyConfig) -> Result<u32, ScenarioError> {
    let mtu = t.mtu();
    if !(128..=65535).contains(&mtu) {
        return Err(err("topology.mtu", format!("invalid value {mtu} B, expected 128B..65535B")));
    }
    for (k, l) in [("topology.host_link", &t.host_link), ("topology.fabric_link", &t.fabric_link), ("topology.core_link", &t.core_link), ("topology.bottleneck", &t.bottleneck)] {
        if let Some(l) = l {
            positive_rate(l, k)?;
        }
    }
    let kind_name = match t.kind {
        TopologyKind::Dumbbell => "dumbbell",
        TopologyKind::Clos2 => "clos2",
        TopologyKind::FatTree3 => "fat_tree3",
        TopologyKind::Custom => "custom",
    };
    let allowed: &[&str] = match t.kind {
        TopologyKind::Dumbbell => &["senders", "receivers", "bottleneck", "host_link"],
        TopologyKind::Clos2 => &["servers_per_tor", "tors", "spines", "oversubscription", "placement", "host_link", "fabric_link"],
        TopologyKind::FatTree3 => &["k", "pods", "tors_per_pod", "aggs_per_pod", "hosts_per_tor", "cores", "core_wiring", "host_link", "fabric_link", "core_link"],
        TopologyKind::Custom => &["hosts", "switches", "links", "routes"],
    };
    let present: [(&str, bool); 19] = [
        ("placement", t.placement.is_some()),
        ("host_link", t.host_link.is_some()),
        ("fabric_link", t.fabric_link.is_some()),
        ("core_link", t.core_link.is_some()),
        ("senders", t.senders.is_some()),
        ("receivers", t.receivers.is_some()),
        ("bottleneck", t.bottleneck.is_some()),
        ("servers_per_tor", t.servers_per_tor.is_some()),
        ("tors", t.tors.is_some()),
        ("spines", t.spines.is_some()),
        ("oversubscription", t.oversubscription.is_some()),
        ("k", t.k.is_some()),
        ("pods", t.pods.is_some()),
        ("tors_per_pod", t.tors_per_pod.is_some()),
        ("aggs_per_pod", t.aggs_per_pod.is_some()),
        ("hosts_per_tor", t.hosts_per_tor.is_some()),
        ("cores", t.cores.is_some()),
        ("core_wiring", t.core_wiring.is_some()),
        ("links", t.links.is_some() || t.hosts.is_some() || t.switches.is_some() || t.routes.is_some()),
    ];
    for (k, p) in present {
        let ok = allowed.contains(&k) || (k == "links" && t.kind == TopologyKind::Custom);
        if p && !ok {
            return Err(err(format!("topology.{k}"), format!("not used by kind = \"{kind_name}\"; allowed keys: {}", allowed.join(", "))));
        }
    }
    let n_hosts = match t.kind {
        TopologyKind::Dumbbell => {
            require(t.host_link, "topology.host_link", "{ rate = \"...\", delay = \"...\" }")?;
            require(t.bottleneck, "topology.bottleneck", "{ rate = \"...\", delay = \"...\" }")?;
            let s = require(t.senders, "topology.senders", "the number of sending hosts (>= 1)")?;
            if s == 0 {
                return Err(err("topology.senders", "invalid value 0, expected >= 1"));
            }
            let r = t.receivers.unwrap_or(DEFAULT_RECEIVERS);
            if r == 0 {
                return Err(err("topology.receivers", "invalid value 0, expected >= 1"));
            }
            s.checked_add(r).filter(|&n| n < u32::MAX - 2).ok_or_else(|| err("topology.senders", format!("{s} + {r} hosts, expected fewer than 2^32 nodes (32-bit node ids)")))?
        }
        TopologyKind::Clos2 => validate_clos2(t)?,
        TopologyKind::FatTree3 => {
            require(t.host_link, "topology.host_link", "{ rate = \"...\", delay = \"...\" }")?;
            fat_tree_shape(t)?.hosts()
        }
        TopologyKind::Custom => validate_custom(t)?,
    };
    if n_hosts < 2 {
        return Err(err("topology", format!("{n_hosts} host(s), expected at least 2")));
    }
    Ok(n_hosts)
}

/// A clos2 fabric's shape; its number of hosts.
pub(super) fn validate_clos2(t: &TopologyConfig) -> Result<u32, ScenarioError> {
    require(t.host_link, "topology.host_link", "{ rate = \"...\", delay = \"...\" }")?;
    let spt = require(t.servers_per_tor, "topology.servers_per_tor", "hosts per ToR (>= 1)")?;
    let tors = require(t.tors, "topology.tors", "the number of ToR switches (>= 1)")?;
    if spt == 0 || tors == 0 {
        return Err(err(if spt == 0 { "topology.servers_per_tor" } else { "topology.tors" }, "invalid value 0, expected >= 1"));
    }
    match (t.spines, t.oversubscription) {
        (Some(0), _) => return Err(err("topology.spines", "invalid value 0, expected >= 1")),
        (Some(_), Some(_)) => return Err(err("topology.oversubscription", "give either spines or oversubscription, not both")),
        (None, None) => return Err(err("topology.spines", "missing; expected the number of spines (or give oversubscription)")),
        (None, Some(o)) if !(o > 0.0 && o.is_finite()) => return Err(err("topology.oversubscription", format!("invalid value {o}, expected a number > 0"))),
        _ => {}
    }
    let hosts = spt
        .checked_mul(tors)
        .filter(|&n| n.checked_add(tors).is_some())
        .ok_or_else(|| err("topology.tors", format!("{tors} ToRs x {spt} servers, expected fewer than 2^32 nodes (32-bit node ids)")))?;
    // a tiny oversubscription derives an astronomical spine count (1e-300: 2e300),
    // which would saturate the builder's u32 and build 2^32 spines
    let spines = clos2_spines(t);
    if hosts as f64 + tors as f64 + spines >= u32::MAX as f64 {
        let n = if spines < 1e16 { format!("{spines:.0}") } else { format!("{spines:.1e}") };
        return Err(match t.spines {
            Some(s) => err("topology.spines", format!("invalid value {s}: with {hosts} hosts and {tors} ToRs, expected fewer than 2^32 nodes (32-bit node ids)")),
            None => err(
                "topology.oversubscription",
                format!(
                    "invalid value {:?}: it makes {n} spines (servers_per_tor x host rate / (fabric rate x oversubscription)), \
                     expected a ratio that keeps the fabric below 2^32 nodes (32-bit node ids)",
                    t.oversubscription.unwrap_or(1.0)
                ),
            ),
        });
    }
    Ok(hosts)
}

/// A custom topology's nodes, links and static routes; its number of hosts.
pub(super) fn validate_custom(t: &TopologyConfig) -> Result<u32, ScenarioError> {
    let hosts = t.hosts.as_ref().ok_or_else(|| err("topology.hosts", "missing; expected a list of host names"))?;
    let sw = t.switches.as_ref().ok_or_else(|| err("topology.switches", "missing; expected a list of switch names"))?;
    let links = t.links.as_ref().ok_or_else(|| err("topology.links", "missing; expected a list of { a, b, rate, delay }"))?;
    if hosts.len() < 2 {
        return Err(err("topology.hosts", format!("{} host(s), expected at least 2", hosts.len())));
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, n) in hosts.iter().chain(sw.iter()).enumerate() {
        if !names.insert(n.as_str()) {
            let key = if i < hosts.len() { format!("topology.hosts[{i}]") } else { format!("topology.switches[{}]", i - hosts.len()) };
            return Err(err(key, format!("duplicate node name \"{n}\"")));
        }
    }
    for (i, l) in links.iter().enumerate() {
        for (end, name) in [("a", &l.a), ("b", &l.b)] {
            if !names.contains(name.as_str()) {
                return Err(err(format!("topology.links[{i}].{end}"), format!("invalid value \"{name}\", expected the name of a host or switch")));
            }
        }
        if l.a == l.b {
            return Err(err(format!("topology.links[{i}].b"), format!("\"{}\" links a node to itself", l.b)));
        }
        // a host's NIC leads to its edge switch: routing starts there
        if hosts.contains(&l.a) && hosts.contains(&l.b) {
            return Err(err(format!("topology.links[{i}]"), format!("links host \"{}\" to host \"{}\", expected a host to connect to a switch", l.a, l.b)));
        }
        if l.rate.0 == 0 {
            return Err(err(format!("topology.links[{i}].rate"), "invalid value \"0bps\", expected a rate > 0"));
        }
    }
    for (i, h) in hosts.iter().enumerate() {
        let deg = links.iter().filter(|l| &l.a == h || &l.b == h).count();
        if deg != 1 {
            return Err(err(format!("topology.hosts[{i}]"), format!("host \"{h}\" has {deg} links, expected exactly 1 (a single NIC)")));
        }
    }
    for (i, r) in t.routes.iter().flatten().enumerate() {
        if !sw.contains(&r.switch) {
            return Err(err(format!("topology.routes[{i}].switch"), format!("invalid value \"{}\", expected the name of a switch", r.switch)));
        }
        if !hosts.contains(&r.dst) {
            return Err(err(format!("topology.routes[{i}].dst"), format!("invalid value \"{}\", expected the name of a host", r.dst)));
        }
        let linked = links.iter().any(|l| (l.a == r.switch && l.b == r.via) || (l.b == r.switch && l.a == r.via));
        if !linked {
            return Err(err(format!("topology.routes[{i}].via"), format!("invalid value \"{}\", expected a neighbour of switch \"{}\"", r.via, r.switch)));
        }
        if hosts.contains(&r.via) && r.via != r.dst {
            return Err(err(
                format!("topology.routes[{i}].via"),
                format!("invalid value \"{}\": a host, but not the route's destination \"{}\"; expected \"{}\" or a switch", r.via, r.dst, r.dst),
            ));
        }
    }
    Ok(hosts.len() as u32)
}

pub(super) fn validate_switch(s: &Scenario) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    let nq = sw.queues();
    if !(1..=crate::net::queue::MAX_QUEUES as u8).contains(&nq) {
        return Err(err("switch.queues", format!("invalid value {nq}, expected 1..{}", crate::net::queue::MAX_QUEUES)));
    }
    if let Some(w) = &sw.weights {
        if sw.scheduler != SchedulerKind::Dwrr {
            return Err(err("switch.weights", "only used with scheduler = \"dwrr\""));
        }
        if w.len() != nq as usize {
            return Err(err("switch.weights", format!("{} weights for {nq} queues, expected one per queue", w.len())));
        }
        if let Some(i) = w.iter().position(|&x| x == 0) {
            return Err(err(format!("switch.weights[{i}]"), "invalid value 0, expected a weight >= 1"));
        }
    }
    if let Some(st) = &sw.strict {
        if sw.scheduler != SchedulerKind::Dwrr {
            return Err(err("switch.strict", "only used with scheduler = \"dwrr\" (strict queues ahead of the DWRR set)"));
        }
        if let Some(i) = st.iter().position(|&q| q >= nq) {
            return Err(err(format!("switch.strict[{i}]"), format!("invalid value {}, expected a queue 0..{}", st[i], nq - 1)));
        }
    }
    mechanisms::ci::validate(s)?;
    mechanisms::aqm::validate(s)?;
    mechanisms::qcn::validate(s)?;
    if let Some(f) = &sw.fq_codel {
        f.check(|key| sw.has(key))?;
    }
    if let Some(i) = &sw.int {
        i.check(s.topology.mtu())?;
    }
    if let Some(l) = &sw.load_balance {
        l.check()?;
    }
    if let Some(t) = &sw.trim {
        t.check(s.topology.mtu() as u64, nq as u8)?;
        // a header in CI's queues would be a packet CI classified, which it did not
        if let Some(ci) = &sw.ci {
            let tq = t.params(nq as u8).queue;
            let (cq, q) = (ci.congested_queue.unwrap_or(crate::switch::ci::DEFAULT_CONGESTED_QUEUE) as usize, ci.queue.unwrap_or(crate::switch::ci::DEFAULT_QUEUE) as usize);
            if tq == cq || tq == q {
                return Err(err("switch.trim.queue", format!("invalid value {tq}: it is one of switch.ci's queues ({q} and {cq}), expected a queue of its own for trimmed headers")));
            }
        }
    }
    if let Some(a) = &sw.architecture {
        // the kind of switch.aqm, and whether its ECN marker (if it is one) drops non-ECT
        let aqm = sw.aqm.as_ref().map(|q| (q.kind(), q.params(s.topology.mtu()).0.map(|m| m.drop_non_ect)));
        a.check(s.topology.mtu(), |key| sw.has(key), aqm)?;
    }
    mechanisms::drc::validate(s)?;
    mechanisms::sfc::validate(s)?;
    if let Some(c) = &sw.classes {
        if c.len() != 8 {
            return Err(err("switch.classes", format!("{} entries, expected 8 (one per priority 0..7)", c.len())));
        }
        if let Some(i) = c.iter().position(|&x| x >= nq) {
            return Err(err(format!("switch.classes[{i}]"), format!("invalid value {}, expected a queue 0..{}", c[i], nq - 1)));
        }
    }
    validate_buffer(sw)?;
    mechanisms::pfc::validate(s)?;
    Ok(())
}

pub(super) fn validate_buffer(sw: &SwitchConfig) -> Result<(), ScenarioError> {
    let b = &sw.buffer;
    match b.model {
        BufferModel::Static => {
            for (k, p) in [
                ("pool", b.pool.is_some()),
                ("pool_per_port", b.pool_per_port.is_some()),
                ("guaranteed", b.guaranteed.is_some()),
                ("alpha", b.alpha.is_some()),
                ("ingress_pool", b.ingress_pool.is_some()),
                ("ingress_guaranteed", b.ingress_guaranteed.is_some()),
            ] {
                if p {
                    return Err(err(format!("switch.buffer.{k}"), "only used with model = \"shared\""));
                }
            }
            if b.queue.map(|q| q.0) == Some(0) {
                return Err(err("switch.buffer.queue", "invalid value 0 B, expected a size > 0"));
            }
        }
        BufferModel::Shared => {
            if b.queue.is_some() {
                return Err(err("switch.buffer.queue", "only used with model = \"static\"; the shared model takes pool, guaranteed, alpha"));
            }
            if b.pool.map(|q| q.0) == Some(0) {
                return Err(err("switch.buffer.pool", "invalid value 0 B, expected a size > 0"));
            }
            if b.pool_per_port.map(|q| q.0) == Some(0) {
                return Err(err("switch.buffer.pool_per_port", "invalid value 0 B, expected a size > 0"));
            }
            if b.pool.is_some() && b.pool_per_port.is_some() {
                return Err(err("switch.buffer.pool_per_port", "given with switch.buffer.pool: expected one of them (a pool per switch, or per port)"));
            }
            if b.ingress_pool.map(|q| q.0) == Some(0) {
                return Err(err("switch.buffer.ingress_pool", "invalid value 0 B, expected a size > 0"));
            }
            if b.ingress_pool.is_some() && sw.pfc.as_ref().is_none_or(|p| p.alpha.is_none()) {
                return Err(err("switch.buffer.ingress_pool", "only used by PFC's dynamic XOFF; expected switch.pfc.alpha with it"));
            }
            if b.ingress_guaranteed.is_some() && b.ingress_pool.is_none() {
                return Err(err("switch.buffer.ingress_guaranteed", "only used with switch.buffer.ingress_pool"));
            }
            if let Some(a) = b.alpha {
                if !(a > 0.0 && a.is_finite()) {
                    return Err(err("switch.buffer.alpha", format!("invalid value {a}, expected a number > 0")));
                }
            }
        }
    }
    Ok(())
}

pub(super) fn validate_metrics(s: &Scenario) -> Result<(), ScenarioError> {
    if s.metrics.throughput_bin.map(|d| d.0 .0) == Some(0) {
        return Err(err("metrics.throughput_bin", "invalid value 0, expected a bin width > 0"));
    }
    if s.metrics.queue_sample.map(|d| d.0 .0) == Some(0) {
        return Err(err("metrics.queue_sample", "invalid value 0, expected an interval > 0"));
    }
    if let Some(from) = s.metrics.queue_sample_from {
        if s.metrics.queue_sample.is_none() {
            return Err(err("metrics.queue_sample_from", "only used with metrics.queue_sample"));
        }
        if from.0 >= s.scenario.max_time.0 {
            return Err(err("metrics.queue_sample_from", format!("invalid value {}, expected a time before scenario.max_time ({})", from.0, s.scenario.max_time.0)));
        }
    }
    if let Some(c) = &s.metrics.capture {
        if c.ports.is_empty() {
            return Err(err("metrics.capture.ports", "missing or empty; expected the ports to capture, e.g. [\"tor0\", \"tor0:2\", \"tor0->h3\"]"));
        }
        let from = c.from.map_or(SimTime::ZERO, |d| d.0);
        if from >= s.scenario.max_time.0 {
            return Err(err("metrics.capture.from", format!("invalid value {from}, expected a time before scenario.max_time ({})", s.scenario.max_time.0)));
        }
        if let Some(to) = c.to {
            if to.0 <= from {
                return Err(err("metrics.capture.to", format!("invalid value {}, expected a time after metrics.capture.from ({from})", to.0)));
            }
        }
        if c.max_frames == Some(0) {
            return Err(err("metrics.capture.max_frames", "invalid value 0, expected a number of frames > 0"));
        }
    }
    if s.metrics.queue_bin.map(|b| b.0) == Some(0) {
        return Err(err("metrics.queue_bin", "invalid value 0 B, expected > 0"));
    }
    if let Some(bins) = &s.metrics.fct_bins {
        if bins.is_empty() || bins.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(err("metrics.fct_bins", "expected a non-empty list of strictly increasing sizes"));
        }
    }
    Ok(())
}

/// A clos2 fabric's spines: `spines`, or as many as the ToR's uplinks need for its
/// downlinks' capacity over `oversubscription`. A float, not clamped: validate, the memory
/// estimate and the builder agree on it, and an absurd ratio shows as the count it means.
pub(crate) fn clos2_spines(t: &TopologyConfig) -> f64 {
    match t.spines {
        Some(n) => n as f64,
        None => {
            let h = t.host_link.map_or(1, |l| l.rate.0);
            let f = t.fabric_link.or(t.host_link).map_or(1, |l| l.rate.0);
            let down = t.servers_per_tor.unwrap_or(0) as f64 * h as f64;
            (down / (f.max(1) as f64 * t.oversubscription.unwrap_or(1.0))).ceil().max(1.0)
        }
    }
}

/// Largest fat-tree radix: k^3/4 hosts and 5k^2/4 switches stay below 2^32 nodes.
pub(super) const MAX_FAT_TREE_K: u32 = 2048;

pub(super) fn fat_tree_shape(t: &TopologyConfig) -> Result<FatTreeShape, ScenarioError> {
    if let Some(k) = t.k {
        for (name, p) in [("pods", t.pods), ("tors_per_pod", t.tors_per_pod), ("aggs_per_pod", t.aggs_per_pod), ("hosts_per_tor", t.hosts_per_tor), ("cores", t.cores)] {
            if p.is_some() {
                return Err(err(format!("topology.{name}"), "give either k or the explicit sizes, not both"));
            }
        }
        // k^3/4 hosts: node ids are 32-bit
        if !(2..=MAX_FAT_TREE_K).contains(&k) || k % 2 == 1 {
            return Err(err("topology.k", format!("invalid value {k}, expected an even radix 2..{MAX_FAT_TREE_K}")));
        }
        return Ok(FatTreeShape { core_wiring: t.core_wiring.unwrap_or_default(), ..FatTreeShape::k_ary(k) });
    }
    let what = "a count >= 1 (or give k for a k-ary fat-tree)";
    let s = FatTreeShape {
        pods: require(t.pods, "topology.pods", what)?,
        tors_per_pod: require(t.tors_per_pod, "topology.tors_per_pod", what)?,
        aggs_per_pod: require(t.aggs_per_pod, "topology.aggs_per_pod", what)?,
        hosts_per_tor: require(t.hosts_per_tor, "topology.hosts_per_tor", what)?,
        cores: require(t.cores, "topology.cores", what)?,
        core_wiring: t.core_wiring.unwrap_or_default(),
    };
    for (name, v) in [("pods", s.pods), ("tors_per_pod", s.tors_per_pod), ("aggs_per_pod", s.aggs_per_pod), ("hosts_per_tor", s.hosts_per_tor), ("cores", s.cores)] {
        if v == 0 {
            return Err(err(format!("topology.{name}"), "invalid value 0, expected >= 1"));
        }
    }
    let (p, t, a, h, c) = (s.pods as u64, s.tors_per_pod as u64, s.aggs_per_pod as u64, s.hosts_per_tor as u64, s.cores as u64);
    if p * t * h + p * (t + a) + c >= u32::MAX as u64 {
        return Err(err("topology.pods", format!("{} hosts and {} switches, expected fewer than 2^32 nodes (32-bit node ids)", p * t * h, p * (t + a) + c)));
    }
    if s.core_wiring == CoreWiring::Groups && s.cores % s.aggs_per_pod != 0 {
        return Err(err(
            "topology.cores",
            format!("invalid value {}, expected a multiple of aggs_per_pod ({}) with core_wiring = \"groups\" (or core_wiring = \"all\")", s.cores, s.aggs_per_pod),
        ));
    }
    Ok(s)
}

/// `[source]`: the claims must be measurable on this scenario's fabric.
pub(super) fn validate_source(src: &SourceConfig, hosts: u32) -> Result<(), ScenarioError> {
    if src.document.trim().is_empty() {
        return Err(err("source.document", "empty; expected the source's name and where it states the numbers"));
    }
    if let Some([a, b]) = src.rtt_hosts {
        for (k, h) in [("source.rtt_hosts[0]", a), ("source.rtt_hosts[1]", b)] {
            if h >= hosts {
                return Err(err(k, format!("invalid value {h}, expected a host index below {hosts}")));
            }
        }
        if a == b {
            return Err(err("source.rtt_hosts", format!("invalid value [{a}, {b}], expected two different hosts")));
        }
    }
    if src.peak_throughput.map(|r| r.0) == Some(0) {
        return Err(err("source.peak_throughput", "invalid value 0 bps, expected a rate > 0"));
    }
    if let Some(b) = src.bdp_packets {
        if !(b.is_finite() && b > 0.0) {
            return Err(err("source.bdp_packets", format!("invalid value {b}, expected a number of packets > 0")));
        }
        if src.bottleneck_rate.is_none() {
            return Err(err("source.bdp_packets", "given without source.bottleneck_rate, the rate it is taken at"));
        }
    }
    if let Some(l) = src.load {
        if !(l.is_finite() && l > 0.0 && l <= 1.0) {
            return Err(err("source.load", format!("invalid value {l}, expected a fraction in (0, 1]")));
        }
        if src.load_tag.is_none() {
            return Err(err("source.load", "given without source.load_tag, the tag of the flows it is about"));
        }
    }
    Ok(())
}

pub(super) fn validate_workload(w: &WorkloadConfig, i: usize, hosts: u32) -> Result<(), ScenarioError> {
    let key = |k: &str| format!("workload[{i}].{k}");
    let kind_name = match w.kind {
        WorkloadKind::Poisson => "poisson",
        WorkloadKind::Incast => "incast",
        WorkloadKind::Permutation => "permutation",
        WorkloadKind::Flows => "flows",
        WorkloadKind::ClosedLoop => "closed_loop",
        WorkloadKind::Trace => "trace",
    };
    let allowed: &[&str] = match w.kind {
        WorkloadKind::Poisson => &["sizes", "load", "cluster_size"],
        WorkloadKind::Incast => &["fan_in", "size", "period", "groups", "receiver", "load", "connection", "disjoint_groups", "stagger"],
        WorkloadKind::Permutation => &["size"],
        WorkloadKind::Flows => &["flows"],
        WorkloadKind::ClosedLoop => &["pairs", "in_flight", "mean_size", "min_size", "max_size", "connection"],
        WorkloadKind::Trace => &["path"],
    };
    for (k, p) in [
        ("sizes", w.sizes.is_some()),
        ("load", w.load.is_some()),
        ("cluster_size", w.cluster_size.is_some()),
        ("fan_in", w.fan_in.is_some()),
        ("size", w.size.is_some()),
        ("period", w.period.is_some()),
        ("groups", w.groups.is_some()),
        ("receiver", w.receiver.is_some()),
        ("disjoint_groups", w.disjoint_groups.is_some()),
        ("stagger", w.stagger.is_some()),
        ("connection", w.connection.is_some()),
        ("flows", w.flows.is_some()),
        ("pairs", w.pairs.is_some()),
        ("in_flight", w.in_flight.is_some()),
        ("mean_size", w.mean_size.is_some()),
        ("min_size", w.min_size.is_some()),
        ("max_size", w.max_size.is_some()),
        ("path", w.path.is_some()),
    ] {
        if p && !allowed.contains(&k) {
            return Err(err(key(k), format!("not used by kind = \"{kind_name}\"; allowed keys: {}", allowed.join(", "))));
        }
    }
    if let Some(p) = w.priority {
        if p > 7 {
            return Err(err(key("priority"), format!("invalid value {p}, expected 0..7")));
        }
    }
    let listed = matches!(w.kind, WorkloadKind::Flows | WorkloadKind::Trace);
    if listed {
        // a listed flow starts when its entry or row says: a window would be ignored
        for (k, p) in [("start", w.start.is_some()), ("stop", w.stop.is_some())] {
            if p {
                return Err(err(key(k), format!("not used by kind = \"{kind_name}\" (each flow gives its own start)")));
            }
        }
    }
    let mut hosts = hosts;
    if let Some(h) = &w.hosts {
        if listed {
            return Err(err(key("hosts"), format!("not used by kind = \"{kind_name}\" (flows name their hosts)")));
        }
        match h.as_slice() {
            [a, b] if a < b && *b <= hosts && b - a >= 2 => {}
            _ => return Err(err(key("hosts"), format!("invalid value {h:?}, expected [first, end] with first < end <= {hosts} and at least 2 hosts"))),
        }
        if let Some(r) = w.receiver {
            if r < h[0] || r >= h[1] {
                return Err(err(key("receiver"), format!("invalid value {r}, expected a host within hosts {h:?}")));
            }
        }
        hosts = h[1] - h[0];
    }
    match (w.mice_below, w.mice_priority) {
        (Some(_), None) => return Err(err(key("mice_priority"), "missing; expected the priority (0..7) of flows below mice_below")),
        (None, Some(_)) => return Err(err(key("mice_below"), "missing; expected a size such as \"100KB\" (mice_priority needs it)")),
        (_, Some(p)) if p > 7 => return Err(err(key("mice_priority"), format!("invalid value {p}, expected 0..7"))),
        _ => {}
    }
    if let (Some(a), Some(b)) = (w.start, w.stop) {
        if b.0 <= a.0 {
            return Err(err(key("stop"), format!("invalid value {}, expected a time after start ({})", b.0, a.0)));
        }
    }
    if let Some(l) = w.load {
        if !(l > 0.0 && l <= 1.0) {
            return Err(err(key("load"), format!("invalid value {l}, expected a fraction in (0, 1]")));
        }
    }
    match w.kind {
        WorkloadKind::Poisson => {
            let sizes = w.sizes.as_deref().ok_or_else(|| err(key("sizes"), format!("missing; expected one of {:?} or a CDF file path", FlowSizeCdf::builtin_names())))?;
            resolve_cdf(sizes).map_err(|m| err(key("sizes"), m))?;
            require(w.load, &key("load"), "the offered load, a fraction in (0, 1]")?;
            if let Some(c) = w.cluster_size {
                if c < 2 || c > hosts {
                    return Err(err(key("cluster_size"), format!("invalid value {c}, expected 2..{hosts} (the topology has {hosts} hosts)")));
                }
            }
        }
        WorkloadKind::Incast => validate_incast(w, i, hosts)?,
        WorkloadKind::ClosedLoop => validate_closed_loop(w, i, hosts)?,
        WorkloadKind::Permutation => {
            let sz = require(w.size, &key("size"), "bytes per flow, e.g. \"1MB\"")?;
            if sz.0 == 0 {
                return Err(err(key("size"), "invalid value 0 B, expected > 0"));
            }
        }
        WorkloadKind::Flows => validate_flow_entries(w, i, hosts)?,
        WorkloadKind::Trace => {
            let path = w.path.as_deref().ok_or_else(|| err(key("path"), "missing; expected the trace file, e.g. \"flows.csv\" or \"flows.parquet\""))?;
            let info = trace_info(i, path)?;
            if let Some((h, row, col)) = info.max_index {
                if h >= hosts {
                    return Err(err(key("path"), format!("{path}, row {row}, column {col}: invalid value {h}, expected a host index 0..{} (the topology has {hosts} hosts)", hosts - 1)));
                }
            }
        }
    }
    Ok(())
}

/// An incast's fan-in, size, period and groups.
pub(super) fn validate_incast(w: &WorkloadConfig, i: usize, hosts: u32) -> Result<(), ScenarioError> {
    let key = |k: &str| format!("workload[{i}].{k}");
    let n = require(w.fan_in, &key("fan_in"), "the number of senders per round")?;
    if n == 0 || n >= hosts {
        return Err(err(key("fan_in"), format!("invalid value {n}, expected 1..{} (the topology has {hosts} hosts)", hosts - 1)));
    }
    let sz = require(w.size, &key("size"), "bytes per sender, e.g. \"256KB\"")?;
    if sz.0 == 0 {
        return Err(err(key("size"), "invalid value 0 B, expected > 0"));
    }
    if w.period.is_some() && w.load.is_some() {
        return Err(err(key("load"), "give either period or load, not both"));
    }
    if let Some(IncastPeriod::Every(d)) = w.period {
        if d.0 .0 == 0 {
            return Err(err(key("period"), "invalid value 0, expected an interval > 0"));
        }
    }
    if w.connection.is_some() && w.period != Some(IncastPeriod::Persistent) {
        return Err(err(key("connection"), "only used with period = \"persistent\" (each sender's flows back to back)"));
    }
    let g = w.groups.unwrap_or(DEFAULT_GROUPS);
    if g == 0 {
        return Err(err(key("groups"), "invalid value 0, expected >= 1"));
    }
    if w.disjoint_groups == Some(true) {
        if !matches!(w.period, None | Some(IncastPeriod::Oneshot) | Some(IncastPeriod::Persistent)) || w.load.is_some() {
            return Err(err(key("disjoint_groups"), "only with period = \"oneshot\" or \"persistent\" (one round per group)"));
        }
        let need = g as u64 * (w.fan_in.unwrap_or(0) as u64 + 1);
        if need > hosts as u64 {
            return Err(err(
                key("disjoint_groups"),
                format!(
                    "{g} groups of {} hosts need {need} hosts, the workload has {hosts}; expected fewer groups, a smaller fan_in or disjoint_groups = false",
                    w.fan_in.unwrap_or(0) + 1
                ),
            ));
        }
    }
    if let Some(r) = w.receiver {
        if g > 1 {
            return Err(err(key("receiver"), format!("a fixed receiver needs groups = 1 (groups = {g}); expected no receiver, or groups = 1")));
        }
        // the topology's host index, as the builder reads it (within `hosts` when set,
        // not relative to it)
        let first = w.hosts.as_deref().map_or(0, |h| h[0]);
        if r < first || r - first >= hosts {
            return Err(err(key("receiver"), format!("invalid value {r}, expected a host index {first}..{}", first + hosts - 1)));
        }
    }
    Ok(())
}

/// A closed loop's message sizes, pairs and messages in flight.
pub(super) fn validate_closed_loop(w: &WorkloadConfig, i: usize, hosts: u32) -> Result<(), ScenarioError> {
    let key = |k: &str| format!("workload[{i}].{k}");
    let mean = require(w.mean_size, &key("mean_size"), "the mean message size, e.g. \"8000B\"")?.0;
    if mean == 0 {
        return Err(err(key("mean_size"), "invalid value 0 B, expected > 0"));
    }
    let min = w.min_size.map_or(DEFAULT_MIN_SIZE, |b| b.0);
    let max = w.max_size.map_or(mean.saturating_mul(16), |b| b.0);
    if min == 0 || min > max || min > mean.saturating_mul(16) {
        return Err(err(key("min_size"), format!("invalid value {min} B, expected 1 B up to max_size ({max} B) and at most 16 x mean_size")));
    }
    if max < mean / 16 {
        return Err(err(key("max_size"), format!("invalid value {max} B, expected at least mean_size / 16 ({} B)", mean / 16)));
    }
    // sizes are drawn until one falls in [min, max]: a window in the far tail (or a
    // sliver of a huge mean) would take forever per message
    let p = ExpSizes { mean: mean as f64, min, max }.window_probability();
    if !(p >= MIN_WINDOW_PROBABILITY) {
        let (k, v) = if min as f64 > mean as f64 { ("min_size", min) } else { ("max_size", max) };
        return Err(err(
            key(k),
            format!(
                "invalid value {v} B: an exponential size of mean {mean} B falls in [min_size, max_size] = [{min} B, {max} B] with probability {p:.1e}, \
                 expected a window of probability >= {MIN_WINDOW_PROBABILITY:e} (sizes are redrawn until one falls in it)"
            ),
        ));
    }
    if let Some(p) = &w.pairs {
        if w.hosts.is_some() {
            return Err(err(key("hosts"), "not used with pairs (pairs name their hosts)"));
        }
        if p.is_empty() {
            return Err(err(key("pairs"), "invalid value [], expected at least one [source, destination] pair"));
        }
        for (j, &[a, b]) in p.iter().enumerate() {
            if a >= hosts || b >= hosts || a == b {
                return Err(err(format!("workload[{i}].pairs[{j}]"), format!("invalid value [{a}, {b}], expected two different host indices 0..{}", hosts - 1)));
            }
        }
    } else if w.connection.is_some() {
        return Err(err(key("connection"), "only used with pairs (random destinations open a connection per message)"));
    }
    if w.in_flight == Some(0) {
        return Err(err(key("in_flight"), "invalid value 0, expected at least 1 message in flight per loop"));
    }
    Ok(())
}

/// Each listed flow's hosts, size and priority.
pub(super) fn validate_flow_entries(w: &WorkloadConfig, i: usize, hosts: u32) -> Result<(), ScenarioError> {
    let key = |k: &str| format!("workload[{i}].{k}");
    let flows = w.flows.as_ref().ok_or_else(|| err(key("flows"), "missing; expected a list of { src, dst, size, start }"))?;
    for (j, f) in flows.iter().enumerate() {
        let fk = |k: &str| format!("workload[{i}].flows[{j}].{k}");
        for (k, h) in [("src", f.src), ("dst", f.dst)] {
            if h >= hosts {
                return Err(err(fk(k), format!("invalid value {h}, expected a host index 0..{} (the topology has {hosts} hosts)", hosts - 1)));
            }
        }
        if f.src == f.dst {
            return Err(err(fk("dst"), format!("invalid value {}, expected a host other than src", f.dst)));
        }
        if f.size.0 == 0 {
            return Err(err(fk("size"), "invalid value 0 B, expected > 0"));
        }
        if let Some(p) = f.priority {
            if p > 7 {
                return Err(err(fk("priority"), format!("invalid value {p}, expected 0..7")));
            }
        }
    }
    Ok(())
}
