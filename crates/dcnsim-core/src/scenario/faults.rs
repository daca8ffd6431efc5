//! `[faults]`: links that fail, come back or run at a degraded rate during a run, given one
//! by one or drawn by a failure generator, and the delay until the routes follow them. The
//! engine's side is `net::link` and `engine/links.rs`; this file reads the table, checks it
//! and resolves its link names on the built fabric.

use super::build::NodeNames;
use crate::net::{LinkChange, LinkState, NodeKind, PortId, Topology};
use crate::sim::error::{err, ScenarioError};
use crate::sim::units::{Duration, Rate};
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The time from a link's change to the routes following it, where `faults.detect` is not
/// given: at once, as ns-3's global routing recomputes its routes on an interface event.
pub const DEFAULT_DETECT: SimTime = SimTime::ZERO;

/// `[faults]`: link failures, recoveries and degraded rates at set times or drawn at random
/// (a gray-failure study), and the routes following them after a detection delay. A failed
/// link carries nothing either way: the switch queues at its ends drop what they hold and
/// what they are given until the routes move off it (`drops_link_down` in ports.parquet),
/// the NICs keep their frames until it is back, and frames already on the wire arrive.
/// Routing is ECMP over the shortest paths of the fabric that is up (a rate change moves no
/// route: routing is by hops).
#[derive(Deserialize, Serialize, Debug, Clone, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(default = "FaultsConfig::defaults")]
pub struct FaultsConfig {
    /// The time from a link going down or up to the routes following it: the failure's
    /// detection (loss of signal, BFD) and the routing's convergence, e.g. "1ms". Until then
    /// the switches keep routing onto a failed link. Default {default} (at once, as ns-3's
    /// global routing responding to interface events).
    pub detect: Option<Duration>,
    /// Changes at given times.
    #[serde(default)]
    pub links: Vec<LinkChangeConfig>,
    /// Failures drawn at random.
    pub generator: Option<FailureGenerator>,
}

impl FaultsConfig {
    /// Every key's default, for the reference (the doc comments' `{default}`).
    fn defaults() -> Self {
        FaultsConfig { detect: Some(Duration(DEFAULT_DETECT)), ..Default::default() }
    }
}

/// What a link becomes (`faults.links[].state`).
#[derive(Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkStateConfig {
    /// It carries nothing, either way.
    Down,
    /// It works again, at the rate it had.
    Up,
    /// It runs at `rate` both ways, from the next frame each end starts.
    Rate,
}

/// One entry of `faults.links`.
#[derive(Deserialize, Serialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkChangeConfig {
    /// The link, by one of its ends: "node->peer" (the link between the two, if only one)
    /// or "node:N" (the link on the node's port N, the `port` column of ports.parquet).
    /// Required.
    pub link: String,
    /// When. Required; before scenario.max_time.
    pub at: Duration,
    /// "down", "up" or "rate" (with `rate`). Required.
    pub state: LinkStateConfig,
    /// The link's new rate, with state = "rate" only (required there); > 0.
    pub rate: Option<Rate>,
}

/// `faults.generator`: `count` failures, one every `period` from `start`, each of a link
/// drawn uniformly among `links` that it has not failed at the time; each lasts `duration`.
#[derive(Deserialize, Serialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailureGenerator {
    /// The links it draws from, each named as `faults.links[].link` names one. Default: every
    /// switch-to-switch link.
    pub links: Option<Vec<String>>,
    /// The first failure. Required; before scenario.max_time.
    pub start: Duration,
    /// The time between failures. Required with count > 1; > 0.
    pub period: Option<Duration>,
    /// How many failures. Required; >= 1.
    pub count: u32,
    /// How long each failure lasts before the link is back (up, or at its own rate again).
    /// Default: to the end of the run; > 0.
    pub duration: Option<Duration>,
    /// A gray failure: the link runs at this rate instead of going down. Default: it goes
    /// down; > 0.
    pub rate: Option<Rate>,
    /// The draws' seed. Default: the run's seed, so each seed of a study fails other links.
    pub seed: Option<u64>,
}

/// Refuse values out of range, before anything is built.
pub(super) fn validate(f: &FaultsConfig, max_time: SimTime) -> Result<(), ScenarioError> {
    for (i, c) in f.links.iter().enumerate() {
        let key = format!("faults.links[{i}]");
        if c.at.0 >= max_time {
            return Err(err(format!("{key}.at"), format!("invalid value {}, expected a time before scenario.max_time ({max_time})", c.at.0)));
        }
        match (c.state, c.rate) {
            (LinkStateConfig::Rate, None) => return Err(err(format!("{key}.rate"), "missing; expected the link's new rate with state = \"rate\"")),
            (LinkStateConfig::Rate, Some(r)) if r.0 == 0 => return Err(err(format!("{key}.rate"), "invalid value \"0bps\", expected a rate > 0 (state = \"down\" takes a link out)")),
            (s, Some(_)) if s != LinkStateConfig::Rate => {
                return Err(err(format!("{key}.rate"), format!("given with state = \"{}\"; expected state = \"rate\", or no rate", if s == LinkStateConfig::Down { "down" } else { "up" })))
            }
            _ => {}
        }
    }
    if let Some(g) = &f.generator {
        let key = "faults.generator";
        if g.count == 0 {
            return Err(err(format!("{key}.count"), "invalid value 0, expected at least 1 failure"));
        }
        if g.start.0 >= max_time {
            return Err(err(format!("{key}.start"), format!("invalid value {}, expected a time before scenario.max_time ({max_time})", g.start.0)));
        }
        match g.period {
            None if g.count > 1 => return Err(err(format!("{key}.period"), format!("missing; expected the time between failures with count = {}", g.count))),
            Some(p) if p.0 == SimTime::ZERO => return Err(err(format!("{key}.period"), "invalid value 0s, expected a time > 0")),
            _ => {}
        }
        if g.duration.is_some_and(|d| d.0 == SimTime::ZERO) {
            return Err(err(format!("{key}.duration"), "invalid value 0s, expected a time > 0 (or no duration: failed to the end)"));
        }
        if g.rate.is_some_and(|r| r.0 == 0) {
            return Err(err(format!("{key}.rate"), "invalid value \"0bps\", expected a rate > 0 (or no rate: the link goes down)"));
        }
        if g.links.as_ref().is_some_and(|l| l.is_empty()) {
            return Err(err(format!("{key}.links"), "invalid value [], expected link names (or no list: every switch-to-switch link)"));
        }
    }
    Ok(())
}

/// The port a link name (`key`) gives: "node->peer" or "node:N" (module doc).
fn link_port(names: &NodeNames, topo: &Topology, spec: &str, key: &str) -> Result<PortId, ScenarioError> {
    if !spec.contains("->") && !spec.contains(':') {
        return Err(err(key, format!("invalid value \"{spec}\", expected a link: \"node->peer\" or \"node:N\"")));
    }
    let ports = names.ports(topo, spec, key)?;
    match ports[..] {
        [p] => Ok(p),
        _ => Err(err(key, format!("invalid value \"{spec}\": {} links join the two; expected \"node:N\" for one of them (ports {})", ports.len(), ports.iter().map(|&p| topo.ports[p as usize].local.to_string()).collect::<Vec<_>>().join(", ")))),
    }
}

/// The changes `[faults]` gives on the fabric `topo`, in the order the engine takes them
/// (the listed ones, then the generator's by time), and the time the routes take to follow
/// them. `seed`: the run's.
pub(super) fn link_changes(f: &FaultsConfig, topo: &Topology, seed: u64) -> Result<(Vec<LinkChange>, SimTime), ScenarioError> {
    let names = NodeNames::of(topo);
    let mut out = Vec::new();
    for (i, c) in f.links.iter().enumerate() {
        let port = link_port(&names, topo, &c.link, &format!("faults.links[{i}].link"))?;
        let state = match c.state {
            LinkStateConfig::Down => LinkState::Down,
            LinkStateConfig::Up => LinkState::Up,
            LinkStateConfig::Rate => LinkState::Rate(c.rate.map_or(0, |r| r.0)),
        };
        out.push(LinkChange { at: c.at.0, port, state });
    }
    if let Some(g) = &f.generator {
        out.extend(generated(g, &names, topo, seed)?);
    }
    Ok((out, f.detect.map_or(DEFAULT_DETECT, |d| d.0)))
}

/// The generator's failures and recoveries (`FailureGenerator`), ordered by time.
fn generated(g: &FailureGenerator, names: &NodeNames, topo: &Topology, seed: u64) -> Result<Vec<LinkChange>, ScenarioError> {
    use rand::Rng as _;
    let key = "faults.generator.links";
    // each link once, by its lower port
    let mut pool: Vec<PortId> = match &g.links {
        Some(list) => list.iter().enumerate().map(|(i, spec)| link_port(names, topo, spec, &format!("{key}[{i}]"))).collect::<Result<_, _>>()?,
        None => (0..topo.ports.len() as PortId)
            .filter(|&p| {
                let peer = topo.ports[p as usize].peer;
                let switch = |q: PortId| topo.nodes[topo.ports[q as usize].node as usize].kind == NodeKind::Switch;
                switch(p) && switch(peer)
            })
            .collect(),
    };
    for p in pool.iter_mut() {
        *p = (*p).min(topo.ports[*p as usize].peer);
    }
    pool.sort_unstable();
    pool.dedup();
    if pool.is_empty() {
        return Err(err(key, "the fabric has no switch-to-switch link to fail; name the links"));
    }
    let mut rng = crate::sim::rng::stream(g.seed.unwrap_or(seed), crate::sim::rng::Stream::Faults, 0);
    let period = g.period.map_or(SimTime::ZERO, |p| p.0);
    // each failed link and when it comes back (MAX: never)
    let mut failed: Vec<(PortId, SimTime)> = Vec::new();
    let mut out = Vec::new();
    for k in 0..g.count as u64 {
        let at = g.start.0 + SimTime(period.0 * k);
        failed.retain(|&(_, back)| back > at);
        let free: Vec<PortId> = pool.iter().copied().filter(|p| !failed.iter().any(|f| f.0 == *p)).collect();
        if free.is_empty() {
            return Err(err("faults.generator.count", format!("invalid value {}: at {at} every one of the {} links it draws from is failed already; expected fewer failures, a shorter duration or more links", g.count, pool.len())));
        }
        let port = free[rng.gen_range(0..free.len())];
        let back = g.duration.map_or(SimTime::MAX, |d| at + d.0);
        failed.push((port, back));
        let (down, up) = match g.rate {
            Some(r) => (LinkState::Rate(r.0), LinkState::Rate(topo.ports[port as usize].rate_bps)),
            None => (LinkState::Down, LinkState::Up),
        };
        out.push(LinkChange { at, port, state: down });
        if back < SimTime::MAX {
            out.push(LinkChange { at: back, port, state: up });
        }
    }
    out.sort_by_key(|c| c.at);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::net::{LinkChange, LinkState};
    use crate::scenario::{build_adjusted, Document, RunOptions};
    use crate::sim::SimTime;

    /// A 2-tier leaf-spine (clos2: 4 ToRs of 2 hosts, 2 spines) with `faults` appended.
    fn text(faults: &str) -> String {
        format!(
            "[scenario]\nname = \"f\"\nmax_time = \"1ms\"\nseed = 3\n[topology]\nkind = \"clos2\"\nservers_per_tor = 2\ntors = 4\nspines = 2\n\
             host_link = {{ rate = \"10Gbps\", delay = \"1us\" }}\n[[workload]]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 7, size = \"10KB\" }}]\n{faults}"
        )
    }

    /// The changes a scenario's `[faults]` builds, with the link of each as "node->peer".
    fn changes(faults: &str) -> Result<(Vec<(SimTime, String, LinkState)>, SimTime), String> {
        let t = text(faults);
        let s = Document::from_toml(&t).and_then(|d| d.resolve(None)).map_err(|e| e.to_string())?;
        let mut got = None;
        build_adjusted(&s, &RunOptions::default(), |c, topo| {
            let name = |c: &LinkChange| {
                let p = &topo.ports[c.port as usize];
                format!("{}->{}", topo.nodes[p.node as usize].name, topo.nodes[topo.peer_node(c.port) as usize].name)
            };
            got = Some((c.link_changes.iter().map(|x| (x.at, name(x), x.state)).collect(), c.reroute_after));
        })
        .map_err(|e| e.to_string())?;
        Ok(got.unwrap())
    }

    #[test]
    fn listed_changes_name_their_links_and_the_detection_delay() {
        let (c, detect) = changes(
            "[faults]\ndetect = \"50us\"\nlinks = [{ link = \"tor0->spine1\", at = \"100us\", state = \"down\" }, { link = \"spine1:0\", at = \"200us\", state = \"up\" }, \
             { link = \"h0->tor0\", at = \"0s\", state = \"rate\", rate = \"1Gbps\" }]",
        )
        .unwrap();
        assert_eq!(detect, SimTime::from_us(50));
        assert_eq!(c[0], (SimTime::from_us(100), "tor0->spine1".into(), LinkState::Down));
        // spine1's port 0 leads to tor0: the same link
        assert_eq!(c[1], (SimTime::from_us(200), "spine1->tor0".into(), LinkState::Up));
        assert_eq!(c[2], (SimTime::ZERO, "h0->tor0".into(), LinkState::Rate(1_000_000_000)));
        assert_eq!(changes("").unwrap(), (vec![], SimTime::ZERO), "no [faults]: no change, routes at once");
    }

    /// The generator fails `count` switch-to-switch links, one per period, never one it has
    /// failed already, each back after `duration`; a gray failure degrades and restores the
    /// rate; the seed decides which links, the same seed the same ones.
    #[test]
    fn the_generator_draws_distinct_fabric_links_and_brings_them_back() {
        let g = "[faults]\ngenerator = { start = \"100us\", period = \"100us\", count = 8, duration = \"250us\" }";
        let (c, _) = changes(g).unwrap();
        let downs: Vec<_> = c.iter().filter(|x| x.2 == LinkState::Down).collect();
        assert_eq!(downs.len(), 8);
        assert_eq!(c.iter().filter(|x| x.2 == LinkState::Up).count(), 8);
        for (k, d) in downs.iter().enumerate() {
            assert_eq!(d.0, SimTime::from_us(100 * (k as u64 + 1)));
            assert!(d.1.starts_with("tor") && d.1.contains("->spine"), "{d:?}: switch-to-switch links only");
            // at most three failures overlap (250 us over a 100 us period): all distinct
            let overlapping = downs.iter().filter(|e| e.0 > d.0 && e.0 < d.0 + SimTime::from_us(250)).map(|e| &e.1);
            let mirror = |n: &String| n.split("->").collect::<Vec<_>>().join("<-");
            for e in overlapping {
                assert!(e != &d.1 && mirror(e) != mirror(&d.1), "{d:?} failed twice at once");
            }
        }
        assert!(c.windows(2).all(|w| w[0].0 <= w[1].0), "ordered by time");
        assert_eq!(changes(g).unwrap(), changes(g).unwrap());
        let other = changes(&g.replace("count = 8", "count = 8, seed = 99")).unwrap();
        assert_ne!(other.0, c.clone(), "another seed draws other links");
        let (gray, _) = changes("[faults]\ngenerator = { start = \"100us\", count = 1, duration = \"50us\", rate = \"1Gbps\" }").unwrap();
        assert_eq!(gray.iter().map(|x| (x.0, x.2)).collect::<Vec<_>>(), vec![(SimTime::from_us(100), LinkState::Rate(1_000_000_000)), (SimTime::from_us(150), LinkState::Rate(10_000_000_000))]);
    }

    #[test]
    fn bad_faults_are_refused_naming_the_key() {
        for (faults, says) in [
            ("links = [{ link = \"tor0->spine1\", at = \"2ms\", state = \"down\" }]", "faults.links[0].at"),
            ("links = [{ link = \"tor0->spine1\", at = \"1us\", state = \"rate\" }]", "faults.links[0].rate"),
            ("links = [{ link = \"tor0->spine1\", at = \"1us\", state = \"down\", rate = \"1Gbps\" }]", "given with state = \"down\""),
            ("links = [{ link = \"tor0->spine1\", at = \"1us\", state = \"rate\", rate = \"0bps\" }]", "expected a rate > 0"),
            ("links = [{ link = \"tor0\", at = \"1us\", state = \"down\" }]", "expected a link: \"node->peer\" or \"node:N\""),
            ("links = [{ link = \"tor0->tor1\", at = \"1us\", state = \"down\" }]", "tor0 has no link to tor1"),
            ("links = [{ link = \"tor9->spine1\", at = \"1us\", state = \"down\" }]", "faults.links[0].link"),
            ("links = [{ link = \"tor0:7\", at = \"1us\", state = \"down\" }]", "expected a port number 0..3"),
            ("links = [{ link = \"tor0->spine1\", at = \"1us\", state = \"broken\" }]", "broken"),
            ("generator = { start = \"1us\", count = 0 }", "faults.generator.count"),
            ("generator = { start = \"1us\", count = 2 }", "faults.generator.period"),
            ("generator = { start = \"1us\", count = 9, period = \"1us\" }", "every one of the 8 links"),
            ("generator = { start = \"5ms\", count = 1 }", "faults.generator.start"),
            ("generator = { start = \"1us\", count = 1, links = [] }", "faults.generator.links"),
            ("generator = { start = \"1us\", count = 1, duration = \"0s\" }", "faults.generator.duration"),
            ("generator = { start = \"1us\", count = 1, links = [\"h0->tor0\", \"x->y\"] }", "faults.generator.links[1]"),
        ] {
            let e = changes(&format!("[faults]\n{faults}")).unwrap_err();
            assert!(e.contains(says), "{faults}: {e}");
        }
    }
}
