//! Scenario layer: text -> schema (validated) -> running simulation.
//!
//! A scenario may list `[[variant]]` tables; each is a set of keys that
//! override the base scenario (tables merge key by key, everything else is
//! replaced). Every error names the key, the value and what was expected.
pub mod estimate;
mod mechanisms;
pub mod reference;
pub mod schema;
mod tagged;
mod transport;
use crate::sim::units;
use crate::sim::error::ScenarioError;
use crate::sim::error::err;

use crate::engine::{QueueSampling, Sim, SimConfig};
use crate::host::Transport;
use crate::capture::CaptureParams;
use crate::net::fat_tree::FatTreeShape;
use crate::net::{clos, dumbbell, fat_tree, Routes, Topology};
use crate::sim::SimTime;
use crate::switch::aqm::AqmParams;
use crate::switch::ci::{self, CiMark, CiMode, CiParams, CimRelease};
use crate::switch::coupled::{self, Coupled};
use crate::switch::drc::{self, DrcParams};
use crate::switch::dualpi2::{self, DualPi2Params};
use crate::switch::dualq2015::{self, DualQ2015Params};
use crate::switch::pfc::{self, PfcParams, Xoff};
use crate::switch::pi2::{self, Pi2Params};
use crate::switch::qcn::{self, QcnParams};
use crate::switch::red::{self, RedParams};
use crate::switch::sfc::{self, SfcMode, SfcParams};
use crate::switch::MechanismParams;
use crate::switch::{BufferParams, EcnMarker, Red};
use crate::net::Scheduler;
use crate::workload::cdf::FlowSizeCdf;
use crate::workload::closed_loop::{ExpSizes, MIN_WINDOW_PROBABILITY};
use crate::workload::incast::Rounds;
use crate::workload::arrivals::{made, FlowArrivals, Process};
use crate::workload::{self, GenCtx};
use schema::*;
use std::fmt;

/// A parsed scenario file: the base table and its variants, not yet validated.
#[derive(Debug, Clone)]
pub struct Document {
    base: toml::Table,
    variants: Vec<(String, toml::Table)>,
}

impl Document {
    /// Parse TOML text.
    pub fn from_toml(text: &str) -> Result<Document, ScenarioError> {
        let line_of = |at: usize| text[..at].matches('\n').count() + 1;
        // the TOML parser refuses these without a word of why
        if let Some(at) = text.find('\0') {
            return Err(err("", format!("malformed TOML: a NUL byte (line {}); expected text (is this a binary file?)", line_of(at))));
        }
        if let Some(at) = text.char_indices().find(|&(i, c)| c == '\r' && text.as_bytes().get(i + 1) != Some(&b'\n')).map(|(i, _)| i) {
            return Err(err(
                "",
                format!("malformed TOML: a carriage return not followed by a line feed (line {}); expected lines ending in LF or CR LF (old Mac line ends?)", line_of(at)),
            ));
        }
        let v: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let msg = e.message().replace('\n', " ");
            let pos = e.span().map(|s| {
                let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                format!(" (line {line})")
            });
            err("", format!("malformed TOML: {}{}", msg.trim(), pos.unwrap_or_default()))
        })?;
        Document::from_table(v)
    }

    /// Parse JSON text (a scenario given as a dict).
    pub fn from_json(text: &str) -> Result<Document, ScenarioError> {
        let v: toml::Value = serde_json::from_str(text).map_err(|e| err("", format!("malformed JSON scenario: {e}")))?;
        match v {
            toml::Value::Table(t) => Document::from_table(t),
            _ => Err(err("", "a scenario must be a table (dict) at the top level")),
        }
    }

    fn from_table(mut base: toml::Table) -> Result<Document, ScenarioError> {
        // `[sweep]` is the grid `dcnsim sweep` runs (keys to vary, seeds); a single run ignores it
        match base.remove("sweep") {
            None | Some(toml::Value::Table(_)) => {}
            Some(other) => return Err(err("sweep", format!("invalid value {other}, expected a table of key paths and value lists"))),
        }
        let mut variants = Vec::new();
        if let Some(v) = base.remove("variant") {
            let arr = match v {
                toml::Value::Array(a) => a,
                _ => return Err(err("variant", "expected an array of tables ([[variant]])")),
            };
            for (i, item) in arr.into_iter().enumerate() {
                let mut t = match item {
                    toml::Value::Table(t) => t,
                    other => return Err(err(format!("variant[{i}]"), format!("invalid value {other}, expected a table"))),
                };
                let name = match t.remove("name") {
                    Some(toml::Value::String(s)) if !s.is_empty() => s,
                    Some(other) => return Err(err(format!("variant[{i}].name"), format!("invalid value {other}, expected a non-empty string"))),
                    None => return Err(err(format!("variant[{i}].name"), "missing; every variant needs a name")),
                };
                if variants.iter().any(|(n, _): &(String, toml::Table)| *n == name) {
                    return Err(err(format!("variant[{i}].name"), format!("duplicate variant name \"{name}\"")));
                }
                variants.push((name, t));
            }
        }
        Ok(Document { base, variants })
    }

    /// Pairs of variants (earlier, later) whose resolved scenarios are equal (see
    /// [`identical_pairs`]).
    pub fn identical_variants(&self) -> Result<Vec<(String, String)>, ScenarioError> {
        identical_pairs(&self.resolve_all(None)?.1)
    }

    pub fn variant_names(&self) -> Vec<String> {
        self.variants.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The scenario to run, base (`None`) or a named variant, once the base and every
    /// variant have been validated: a file with one invalid variant is refused whichever
    /// part of it is run, as `validate` refuses it.
    pub fn resolve(&self, variant: Option<&str>) -> Result<Scenario, ScenarioError> {
        Ok(self.resolve_all(variant)?.0)
    }

    /// [`Document::resolve`], with every variant's validated scenario beside the selected
    /// one (in file order), for what compares them.
    pub fn resolve_all(&self, variant: Option<&str>) -> Result<(Scenario, Vec<(&str, Scenario)>), ScenarioError> {
        let selected = self.scenario(variant)?;
        let mut all = Vec::with_capacity(self.variants.len());
        for (name, _) in &self.variants {
            let s = if Some(name.as_str()) == variant { selected.clone() } else { self.scenario(Some(name))? };
            all.push((name.as_str(), s));
        }
        if variant.is_some() {
            self.scenario(None)?;
        }
        Ok((selected, all))
    }

    /// The base table (`None`) or a named variant merged into it, not yet validated: what
    /// the variant runs, as a scenario file would spell it.
    pub fn merged(&self, variant: Option<&str>) -> Result<toml::Table, ScenarioError> {
        let mut t = self.base.clone();
        if let Some(name) = variant {
            let (_, over) = self.variants.iter().find(|(n, _)| n == name).ok_or_else(|| match self.variants.is_empty() {
                true => err("variant", format!("no variant named \"{name}\": the file has no [[variant]] tables")),
                false => {
                    let names: Vec<&str> = self.variants.iter().map(|(n, _)| n.as_str()).collect();
                    err("variant", unknown_name("no variant named", name, &names))
                }
            })?;
            let mut over = over.clone();
            if let Some(paths) = over.remove(REMOVE_KEY) {
                remove_paths(&mut t, &paths, name)?;
            }
            merge(&mut t, &over);
        }
        Ok(t)
    }

    /// The validated scenario for the base (`None`) or a named variant (this one only).
    pub fn scenario(&self, variant: Option<&str>) -> Result<Scenario, ScenarioError> {
        let t = self.merged(variant)?;
        let s: Scenario = serde_path_to_error::deserialize(toml::Value::Table(t.clone())).map_err(|e| {
            let path = e.path().to_string();
            let mut key = if path == "." { String::new() } else { path };
            let mut msg = serde_message(e.into_inner());
            if msg.starts_with("invalid type: unit variant") {
                msg = not_a_name(&t, &key).unwrap_or(msg);
            }
            // a kind's table names the key inside it (scenario/tagged.rs)
            if let Some((inner, rest)) = msg.strip_prefix(tagged::IN_KEY).and_then(|r| r.split_once("`: ")) {
                key = format!("{key}.{inner}");
                msg = rest.to_string();
            }
            let key = match variant {
                Some(v) if !key.is_empty() => format!("{key} (variant \"{v}\")"),
                _ => key,
            };
            if key.starts_with("switch.ecn") {
                msg = "switch.ecn is now switch.aqm: write { kind = \"step\", threshold = K } for DCTCP's step, \
                       { kind = \"ramp\", kmin, kmax, pmax } for the RED ramp on the instantaneous queue"
                    .to_string();
            }
            err(key, suggest(&msg))
        })?;
        validate(&s).map_err(|e| match variant {
            Some(v) if !e.key.is_empty() => err(format!("{} (variant \"{v}\")", e.key), e.message),
            _ => e,
        })?;
        Ok(s)
    }
}

/// Pairs of variants (earlier, later) whose validated scenarios are equal, every key read
/// as the engine reads it (a value written out that equals the default still counts as a
/// difference): a comparison of the two would measure nothing.
fn identical_pairs(variants: &[(&str, Scenario)]) -> Result<Vec<(String, String)>, ScenarioError> {
    let mut seen: Vec<(&str, serde_json::Value)> = Vec::with_capacity(variants.len());
    let mut pairs = Vec::new();
    for (name, s) in variants {
        let v = serde_json::to_value(s).map_err(|e| err("variant", e.to_string()))?;
        if let Some((first, _)) = seen.iter().find(|(_, w)| *w == v) {
            pairs.push((first.to_string(), name.to_string()));
        }
        seen.push((name, v));
    }
    Ok(pairs)
}

/// The value at a dotted key path as serde's errors write it ("workload[0].kind").
fn value_at<'a>(t: &'a mut toml::Table, path: &str) -> Option<&'a mut toml::Value> {
    let mut table = t;
    let mut segments = path.split('.').peekable();
    while let Some(seg) = segments.next() {
        let (name, mut rest) = seg.find('[').map_or((seg, ""), |i| (&seg[..i], &seg[i..]));
        let mut v = table.get_mut(name)?;
        while let Some(r) = rest.strip_prefix('[') {
            let (n, after) = r.split_once(']')?;
            v = v.as_array_mut()?.get_mut(n.parse::<usize>().ok()?)?;
            rest = after;
        }
        if segments.peek().is_none() {
            return Some(v);
        }
        table = v.as_table_mut()?;
    }
    None
}

/// For a key that takes a name (an enumeration) given a number, a boolean, a list or a
/// table: the error the toml deserializer words as "invalid type: unit variant" (naming
/// the wrong type), with the type given and the names the key takes.
fn not_a_name(t: &toml::Table, key: &str) -> Option<String> {
    let mut t = t.clone();
    let v = value_at(&mut t, key)?;
    let given = format!("invalid type: {} {v}, expected a string", v.type_str());
    // the names: what the deserializer lists for a string that is none of them
    *v = toml::Value::String(String::new());
    let names = match serde_path_to_error::deserialize::<_, Scenario>(toml::Value::Table(t)) {
        Err(e) if e.path().to_string() == key => suggest(&serde_message(e.into_inner())).split_once("expected ").map(|(_, l)| l.to_string()),
        _ => None,
    };
    Some(names.map_or(given.clone(), |l| format!("{given}: {l}")))
}

/// A deserializer's error on one line, without the " in `path`" the toml deserializer
/// appends (the error's key says it).
pub(crate) fn serde_message(e: impl fmt::Display) -> String {
    let mut msg = e.to_string().replace('\n', " ").trim_end().to_string();
    if let Some(i) = msg.rfind(" in `").filter(|_| msg.ends_with('`')) {
        msg.truncate(i);
    }
    msg
}

/// serde's "unknown field `x`, expected one of `a`, `b`" and "unknown variant `x`, ..." in
/// the scenario's words, with the closest allowed name when one is near: "unknown variant"
/// read as a `[[variant]]` table, and a typo should name its fix.
pub fn suggest(msg: &str) -> String {
    let (what, rest) = if let Some(r) = msg.strip_prefix("unknown field `") {
        ("unknown key", r)
    } else if let Some(r) = msg.strip_prefix("unknown variant `") {
        ("invalid value", r)
    } else {
        return msg.to_string();
    };
    let Some((got, tail)) = rest.split_once('`') else { return msg.to_string() };
    let allowed: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
    unknown_name(what, got, &allowed)
}

/// `{what} "got" (did you mean "x"?), expected one of "a", "b"`: the suggestion is the
/// allowed name nearest `got` (Damerau-Levenshtein, ignoring case, within a quarter of its
/// length or 2), else the only one `got` begins.
fn unknown_name(what: &str, got: &str, allowed: &[&str]) -> String {
    let lower = got.to_lowercase();
    let prefixed: Vec<&str> = allowed.iter().copied().filter(|a| a.to_lowercase().starts_with(&lower) && !got.is_empty()).collect();
    let near = allowed
        .iter()
        .map(|a| (strsim::damerau_levenshtein(&lower, &a.to_lowercase()), *a))
        .filter(|&(d, a)| d <= 2.max(a.len() / 4) && d < a.len())
        .min()
        .or_else(|| (prefixed.len() == 1).then(|| (0, prefixed[0])));
    let hint = near.map(|(_, a)| format!(" (did you mean \"{a}\"?)")).unwrap_or_default();
    let list = allowed.iter().map(|a| format!("\"{a}\"")).collect::<Vec<_>>().join(", ");
    match allowed.is_empty() {
        true => format!("{what} \"{got}\"{hint}"),
        false => format!("{what} \"{got}\"{hint}, expected one of {list}"),
    }
}

/// The variant key listing base keys to drop before the variant's own keys merge in: how a
/// variant switches a mechanism off (`remove = ["switch.pfc"]`) or replaces a table whole
/// (remove it, then write it).
pub const REMOVE_KEY: &str = "remove";

/// Drop each dotted key path of `paths` (the variant's `remove`) from `base`. A path the
/// base does not have is an error: a typo would otherwise leave the mechanism on.
fn remove_paths(base: &mut toml::Table, paths: &toml::Value, variant: &str) -> Result<(), ScenarioError> {
    let key = format!("{REMOVE_KEY} (variant \"{variant}\")");
    let list = match paths {
        toml::Value::Array(a) => a,
        other => return Err(err(key, format!("invalid value {other}, expected a list of key paths such as [\"switch.pfc\"]"))),
    };
    for p in list {
        let Some(path) = p.as_str().filter(|s| !s.is_empty()) else {
            return Err(err(key, format!("invalid value {p}, expected a key path such as \"switch.pfc\"")));
        };
        let (parents, last) = match path.rsplit_once('.') {
            Some((a, b)) => (a.split('.').collect::<Vec<_>>(), b),
            None => (Vec::new(), path),
        };
        let mut t = &mut *base;
        for part in parents {
            t = match t.get_mut(part) {
                Some(toml::Value::Table(inner)) => inner,
                _ => return Err(err(key, format!("invalid value \"{path}\": the base scenario has no table \"{part}\" there; expected a key path of the base"))),
            };
        }
        if t.remove(last).is_none() {
            return Err(err(key, format!("invalid value \"{path}\": the base scenario does not set it; expected a key path of the base")));
        }
    }
    Ok(())
}

/// Deep-merge `over` into `base`: tables merge recursively, other values replace. A table
/// whose `model` (`switch.buffer`) or AQM `kind` (`switch.aqm`) the variant changes is
/// replaced whole: another model or AQM takes other keys (a static buffer has no pool, a
/// step marker no RED thresholds), so the base's would not fit it.
fn merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) if !changes_kind(k, b, o) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Whether `over` sets a table's `model` (or `switch.aqm`'s `kind`) to another value than
/// `base` has.
fn changes_kind(key: &str, base: &toml::Table, over: &toml::Table) -> bool {
    let differs = |field: &str| over.get(field).is_some_and(|v| base.get(field) != Some(v));
    differs("model") || (key == "aqm" && differs("kind"))
}

// ------------------------------------------------------------------ validation

fn require<T: Copy>(v: Option<T>, key: &str, what: &str) -> Result<T, ScenarioError> {
    v.ok_or_else(|| err(key, format!("missing; expected {what}")))
}

fn positive_rate(l: &LinkSpec, key: &str) -> Result<(), ScenarioError> {
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
    validate_metrics(s)
}

fn validate_meta(m: &Meta) -> Result<(), ScenarioError> {
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
fn validate_topology(t: &TopologyConfig) -> Result<u32, ScenarioError> {
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
fn validate_clos2(t: &TopologyConfig) -> Result<u32, ScenarioError> {
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
fn validate_custom(t: &TopologyConfig) -> Result<u32, ScenarioError> {
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

fn validate_switch(s: &Scenario) -> Result<(), ScenarioError> {
    let sw = &s.switch;
    let nq = sw.queues();
    if !(1..=8).contains(&nq) {
        return Err(err("switch.queues", format!("invalid value {nq}, expected 1..8")));
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

fn validate_buffer(sw: &SwitchConfig) -> Result<(), ScenarioError> {
    let b = &sw.buffer;
    match b.model {
        BufferModel::Static => {
            for (k, p) in [
                ("pool", b.pool.is_some()),
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

fn validate_metrics(s: &Scenario) -> Result<(), ScenarioError> {
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
const MAX_FAT_TREE_K: u32 = 2048;

fn fat_tree_shape(t: &TopologyConfig) -> Result<FatTreeShape, ScenarioError> {
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
fn validate_source(src: &SourceConfig, hosts: u32) -> Result<(), ScenarioError> {
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

fn validate_workload(w: &WorkloadConfig, i: usize, hosts: u32) -> Result<(), ScenarioError> {
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
fn validate_incast(w: &WorkloadConfig, i: usize, hosts: u32) -> Result<(), ScenarioError> {
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
fn validate_closed_loop(w: &WorkloadConfig, i: usize, hosts: u32) -> Result<(), ScenarioError> {
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
fn validate_flow_entries(w: &WorkloadConfig, i: usize, hosts: u32) -> Result<(), ScenarioError> {
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

fn link(l: LinkSpec) -> (u64, SimTime) {
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
fn buffer_params(b: &BufferConfig, topo: &Topology) -> Result<BufferParams, ScenarioError> {
    Ok(match b.model {
        BufferModel::Static => BufferParams::Static { queue_cap: b.queue.map_or(DEFAULT_QUEUE_CAP, |b| b.0) },
        BufferModel::Shared => {
            let pool = b.pool.map_or(DEFAULT_POOL, |b| b.0);
            let guaranteed = b.guaranteed.map_or(DEFAULT_GUARANTEED, |b| b.0);
            let max_ports = topo.switches.iter().map(|&n| topo.nodes[n as usize].ports.len()).max().unwrap_or(0) as u64;
            if guaranteed * max_ports > pool {
                return Err(err(
                    "switch.buffer.guaranteed",
                    format!("invalid value {guaranteed} B: {max_ports} ports x {guaranteed} B exceeds the pool ({pool} B); expected guaranteed <= pool / ports"),
                ));
            }
            BufferParams::Shared { pool, guaranteed, alpha: b.alpha.unwrap_or(DEFAULT_BUFFER_ALPHA) }
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

/// Information about a validated scenario, without running it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    pub name: String,
    pub description: String,
    pub variants: Vec<String>,
    pub hosts: usize,
    pub switches: usize,
    /// Pairs of variants (earlier, later) that resolve to the same scenario: a comparison
    /// of the two would measure nothing.
    pub identical_variants: Vec<(String, String)>,
    /// What would make a run read as "no effect": the document's ([`unused_transport_tables`])...
    pub document_warnings: Vec<String>,
    /// ... the selected scenario's (base or variant, [`advice`]) ...
    pub warnings: Vec<String>,
    /// ... and every variant's, in file order.
    pub variant_warnings: Vec<(String, Vec<String>)>,
}

/// Validate the base and every variant; build the topology to check it routes.
pub fn check(doc: &Document, variant: Option<&str>) -> Result<Summary, ScenarioError> {
    let names = doc.variant_names();
    let (s, all) = doc.resolve_all(variant)?;
    estimate::check(&s, 1)?;
    let topo = build_topology(&s.topology)?;
    check_flow_sizes(&s, &topo)?;
    check_trace_hosts(&s, &topo)?;
    build_routes(&s.topology, &topo)?;
    let buffer = buffer_params(&s.switch.buffer, &topo)?;
    mechanisms::pfc::params(&s, &topo, &buffer)?;
    capture_params(&s, &topo)?;
    let identical_variants = identical_pairs(&all)?;
    let (document_warnings, warnings) = document_advice(doc, &s, &all, variant)?;
    let variant_warnings = all.iter().map(|(name, v)| Ok((name.to_string(), advice(v)?))).collect::<Result<Vec<_>, ScenarioError>>()?;
    Ok(Summary {
        name: s.scenario.name.clone(),
        description: s.scenario.description.clone(),
        variants: names,
        hosts: topo.num_hosts(),
        switches: topo.num_switches(),
        identical_variants,
        document_warnings,
        warnings,
        variant_warnings,
    })
}

/// `metrics.capture` with its port names resolved on the built fabric: "node" (all its
/// ports), "node:N" (its port N) or "node->peer" (its port toward that neighbour), each
/// port once, in the order named.
/// The fabric's nodes by name, for keys that name them.
struct NodeNames<'t>(std::collections::HashMap<&'t str, u32>);

impl<'t> NodeNames<'t> {
    fn of(topo: &'t Topology) -> Self {
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
}

/// `switch.int`'s parameters, its switch names resolved on the built fabric.
fn int_params(s: &Scenario, topo: &Topology) -> Result<Option<crate::switch::int::IntParams>, ScenarioError> {
    let Some(c) = &s.switch.int else { return Ok(None) };
    let names = NodeNames::of(topo);
    let switch_of = |name: &str, key: &str| -> Result<u32, ScenarioError> {
        let n = &topo.nodes[names.node(name, key)? as usize];
        if n.kind != crate::net::NodeKind::Switch {
            return Err(err(key, format!("invalid value \"{name}\": a host, expected a switch")));
        }
        Ok(n.index)
    };
    c.params(switch_of, topo.switches.len()).map(Some)
}

fn capture_params(s: &Scenario, topo: &Topology) -> Result<Option<CaptureParams>, ScenarioError> {
    let Some(c) = &s.metrics.capture else { return Ok(None) };
    let names = NodeNames::of(topo);
    let mut ports = Vec::new();
    for (i, spec) in c.ports.iter().enumerate() {
        let key = format!("metrics.capture.ports[{i}]");
        let node = |name: &str| names.node(name, &key);
        let ids: Vec<u32> = if let Some((a, b)) = spec.split_once("->") {
            let (a, b) = (node(a.trim())?, node(b.trim())?);
            let to_b: Vec<u32> = topo.nodes[a as usize].ports.iter().copied().filter(|&p| topo.peer_node(p) == b).collect();
            if to_b.is_empty() {
                return Err(err(&key, format!("invalid value \"{spec}\": {} has no link to {}", topo.nodes[a as usize].name, topo.nodes[b as usize].name)));
            }
            to_b
        } else if let Some((a, n)) = spec.rsplit_once(':') {
            let a = node(a.trim())?;
            let own = &topo.nodes[a as usize].ports;
            match n.trim().parse::<usize>() {
                Ok(n) if n < own.len() => vec![own[n]],
                _ => return Err(err(&key, format!("invalid value \"{spec}\", expected a port number 0..{} of {}", own.len() - 1, topo.nodes[a as usize].name))),
            }
        } else {
            topo.nodes[node(spec.trim())? as usize].ports.clone()
        };
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
fn check_flow_sizes(s: &Scenario, topo: &Topology) -> Result<(), ScenarioError> {
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
fn trace_info(i: usize, path: &str) -> Result<std::sync::Arc<workload::trace::TraceInfo>, ScenarioError> {
    workload::trace::info(path).map_err(|m| err(format!("workload[{i}].path"), m))
}

/// Every host name a trace's rows use is a host of the built fabric.
fn check_trace_hosts(s: &Scenario, topo: &Topology) -> Result<(), ScenarioError> {
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
fn configure(s: &Scenario, opts: &RunOptions) -> Result<(Topology, Routes, SimConfig, FlowArrivals), ScenarioError> {
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
    let (planned, hpcc, udp_loops, repeats, at_dst) = flow_specs(s, &topo, seed)?.procs.into_iter().flatten().fold((0, false, false, false, false), |(n, h, u, r, d), f| {
        host_load[f.src as usize] += f.size as f64;
        host_load[f.dst as usize] += f.size as f64;
        let udp = f.transport == crate::host::Transport::Udp;
        let repeats = f.closed_loop.is_some() || f.repeat_until.is_some();
        (n + 1, h || f.transport == HPCC, u || (udp && f.closed_loop.is_some()), r || repeats, d || (udp && repeats && f.closed_loop.is_none()))
    });
    let Flows { procs, loops, tags } = flow_specs(s, &topo, seed)?;
    let switch_latency = sw.latency.map(|d| d.0).unwrap_or(SimTime::ZERO);
    let ci = sw.ci.as_ref().map(mechanisms::ci::params);
    let sfc = sw.sfc.as_ref().map(mechanisms::sfc::params);
    let qcn = sw.qcn.as_ref().map(|cp| mechanisms::qcn::params(cp, s.transport.qcn.as_ref()));
    let drc = sw.drc.as_ref().map(mechanisms::drc::params);
    let mut pfc = mechanisms::pfc::params(s, &topo, &buffer)?;
    if sfc.as_ref().is_some_and(|p| p.mode == SfcMode::Proxy) && pfc.is_none() {
        // the proxy's PAUSE frames need the NICs' PFC receive side, present in every RoCE NIC
        pfc = Some(PfcParams::receive_only(topo.ports.len()));
    }
    let mechanisms = MechanismParams { ecn, pfc, ci, sfc, aqm, qcn, drc, fq_codel: sw.fq_codel.as_ref().map(|f| f.params(mtu)),
        int: int_params(s, &topo)?,
        #[cfg(test)]
        stand_in: None,
    };
    mechanisms.check_exclusive()?;
    let mut cfg = SimConfig {
        host_jitter: crate::engine::DEFAULT_HOST_JITTER,
        path: Default::default(),
        link_changes: Vec::new(),
        reroute_after: SimTime::ZERO,
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
        frame_latency: udp_loops,
        host_load,
        repeats,
        repeats_at_destination: at_dst,
    };
    cfg.warnings = warnings(s, &cfg, planned, hpcc);
    Ok((topo, routes, cfg, FlowArrivals::new(procs, planned)))
}

const HPCC: crate::host::Transport = crate::host::Transport::Roce(crate::host::RateCcKind::Hpcc);

/// The processes that make the flows a scenario's workloads start, in workload order
/// (`workload::arrivals`), with the closed loops that start more and the tag names
/// (`FlowSpec::tag` indexes them).
struct Flows {
    procs: Vec<Process>,
    loops: Vec<workload::closed_loop::ClosedLoop>,
    tags: Vec<String>,
}

/// Generate every workload's flows (`seed`: the run's).
fn flow_specs(s: &Scenario, topo: &Topology, seed: u64) -> Result<Flows, ScenarioError> {
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
/// the command line.
fn warnings(s: &Scenario, cfg: &SimConfig, flows: usize, hpcc: bool) -> Vec<String> {
    let mut w = Vec::new();
    if flows == 0 {
        w.push(format!("workload: no flows (the {} workload table(s) generate none); nothing is simulated", s.workload.len()));
    }
    let (key, bytes) = match cfg.buffer {
        BufferParams::Static { queue_cap } => ("switch.buffer.queue", queue_cap),
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
    w.extend(advice(s).unwrap_or_default());
    w
}

/// What a scenario's flows use, read from the scenario (no flow is made): the transports'
/// names ("dctcp", "dcqcn", "udp", ...) and a mask of the switch queues their priorities map to.
fn flows_use(s: &Scenario) -> Result<(Vec<&'static str>, u8), ScenarioError> {
    let nq = s.switch.queues() as usize;
    let class = |p: u8| -> usize {
        match &s.switch.classes {
            Some(c) => c[p as usize] as usize,
            None => (p as usize).min(nq - 1),
        }
    };
    let (mut names, mut queues) = (Vec::new(), 0u8);
    let mut add = |t: crate::host::Transport, prio: u8, names: &mut Vec<&'static str>| {
        if !names.contains(&t.name()) {
            names.push(t.name());
        }
        queues |= 1 << class(prio);
    };
    for (i, w) in s.workload.iter().enumerate() {
        let wt = transport::workload_transport(s, i)?;
        let prio = w.priority.unwrap_or(0);
        match (&w.kind, &w.flows, &w.path) {
            (WorkloadKind::Flows, Some(flows), _) => {
                for f in flows {
                    add(transport::flow_transport(f, wt), f.priority.unwrap_or(prio), &mut names);
                }
            }
            (WorkloadKind::Trace, _, Some(path)) => {
                for k in &trace_info(i, path)?.kinds {
                    add(transport::row_transport(k, wt), k.priority.unwrap_or(prio), &mut names);
                }
            }
            _ => add(wt, prio, &mut names),
        }
        if let Some(p) = w.mice_priority {
            add(wt, p, &mut names);
        }
    }
    Ok((names, queues))
}

/// Mechanisms a scenario configures that its flows cannot bring into play: valid, but a
/// run would read as "no effect" (said before the run and in the summary's warnings).
pub fn advice(s: &Scenario) -> Result<Vec<String>, ScenarioError> {
    let (names, queues) = flows_use(s)?;
    let sw = &s.switch;
    let mut w = Vec::new();
    if s.workload.is_empty() {
        return Ok(w);
    }
    if let Some(c) = &sw.ci {
        let p = mechanisms::ci::params(c);
        if p.mode == crate::switch::ci::CiMode::Isolate && queues & (1 << p.queue) == 0 {
            let used: Vec<String> = (0..8).filter(|q| queues & (1 << q) != 0).map(|q: usize| q.to_string()).collect();
            w.push(format!(
                "switch.ci watches queue {} but every flow is in queue {} (by its priority and switch.classes): CI cannot isolate a flow",
                p.queue,
                used.join(", ")
            ));
        }
    }
    let marks = sw.aqm.is_some() || sw.fq_codel.as_ref().is_some_and(|f| f.ecn.unwrap_or(crate::switch::fq_codel::DEFAULT_ECN));
    let lossless = sw.pfc.as_ref().is_some_and(|p| p.mode == PfcMode::Link || p.priorities.as_ref().map_or(true, |v| !v.is_empty()));
    if names.contains(&"dctcp") && !marks {
        w.push("transport.cc = \"dctcp\" but no switch marks ECN (switch.aqm, or switch.fq_codel with ecn): DCTCP reacts only to loss".to_string());
    }
    if names.contains(&"dcqcn") && !marks && !lossless {
        w.push("transport.cc = \"dcqcn\" with neither ECN marking (switch.aqm) nor PFC (switch.pfc): no CNP is ever sent and the fabric drops".to_string());
    }
    Ok(w)
}

/// [`unused_transport_tables`] of a document and the [`advice`] for its `selected` scenario
/// (`variant`, else the base), from [`Document::resolve_all`]: what a run of it is warned
/// of before it starts, without building the fabric.
pub fn document_advice(doc: &Document, selected: &Scenario, all: &[(&str, Scenario)], variant: Option<&str>) -> Result<(Vec<String>, Vec<String>), ScenarioError> {
    let base = if variant.is_none() { selected.clone() } else { doc.resolve(None)? };
    Ok((unused_transport_tables(&base, all)?, advice(selected)?))
}

/// The transport tables (`transport.dcqcn`, `transport.hpcc`, ...) a document sets for an
/// algorithm that no flow of the base or of any variant uses.
pub fn unused_transport_tables(base: &Scenario, all: &[(&str, Scenario)]) -> Result<Vec<String>, ScenarioError> {
    fn tables(t: &TransportConfig) -> [(&'static str, serde_json::Value); 6] {
        let v = |x: serde_json::Result<serde_json::Value>| x.unwrap_or_default();
        [
            ("dcqcn", v(serde_json::to_value(&t.dcqcn))),
            ("hpcc", v(serde_json::to_value(&t.hpcc))),
            ("timely", v(serde_json::to_value(&t.timely))),
            ("swift", v(serde_json::to_value(&t.swift))),
            ("bbr", v(serde_json::to_value(&t.bbr))),
            ("udp", v(serde_json::to_value(&t.udp))),
        ]
    }
    let defaults = tables(&TransportConfig::default());
    let mut used = Vec::new();
    let mut set = Vec::new();
    for s in std::iter::once(base).chain(all.iter().map(|(_, s)| s)) {
        used.extend(flows_use(s)?.0);
        for (name, v) in tables(&s.transport) {
            if defaults.iter().any(|(n, d)| *n == name && *d != v) && !set.contains(&name) {
                set.push(name);
            }
        }
    }
    let what = if all.is_empty() { "no flow" } else { "no flow of the base or of any variant" };
    Ok(set.into_iter().filter(|n| !used.contains(n)).map(|n| format!("transport.{n} is set but {what} uses {n}: its values act on nothing")).collect())
}

/// Parse, validate and build in one step.
pub fn load(text: &str, json: bool, variant: Option<&str>, opts: &RunOptions) -> Result<(Scenario, Sim), ScenarioError> {
    let doc = if json { Document::from_json(text)? } else { Document::from_toml(text)? };
    let s = doc.resolve(variant)?;
    let sim = build(&s, opts)?;
    Ok((s, sim))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Each key's default is declared once, as a constant; its doc comment (and so the
    /// scenario reference) quotes it, and this holds the quote to the constant.
    /// Sizes beyond what the arithmetic holds are refused with the key, not clamped; a flow
    /// whose ideal completion time the clock cannot hold is refused with its workload's key.
    #[test]
    fn sizes_out_of_range_are_refused_with_their_key() {
        let flows = |size: &str, rate: &str| {
            BASE.replace("10Gbps\", delay = \"1us\" }\nbottleneck", &format!("{rate}\", delay = \"1us\" }}\nbottleneck"))
                + &format!("[[workload]]\nkind = \"flows\"\nflows = [ {{ src = 0, dst = 2, size = \"{size}\" }} ]\n")
        };
        let e = load(&flows("99999999999999999999GB", "10Gbps"), false, None, &RunOptions::default()).err().unwrap();
        assert_eq!(e.key, "workload[0].flows[0].size", "{e}");
        assert!(e.message.contains("out of range") && e.message.contains("1000000GB"), "{e}");
        let e = load(&(BASE.to_string() + "[switch]\nbuffer = { queue = \"99999999999999999999GB\" }\n"), false, None, &RunOptions::default()).err().unwrap();
        assert_eq!(e.key, "switch.buffer.queue", "{e}");
        assert!(e.message.contains("out of range"), "{e}");
        // 1000000GB is representable, but at 1 Mbps it needs 8e9 s
        let e = load(&flows("1000000GB", "1Mbps"), false, None, &RunOptions::default()).err().unwrap();
        assert_eq!(e.key, "workload[0].flows[0].size", "{e}");
        assert!(e.message.contains("beyond the longest simulated time"), "{e}");
        // at 10 Gbps the same flow takes 8e5 s: allowed (the run simply stops at max_time)
        let (_, mut sim) = load(&flows("1000000GB", "10Gbps").replace("name = \"x\"", "name = \"x\"\nmax_time = \"1ms\""), false, None, &RunOptions::default()).unwrap();
        sim.run();
        let r = sim.results();
        assert_eq!(r.summary["flows_finished"], 0);
        assert!(r.flows.u64("ideal_fct_ps")[0] > 800_000 * 1_000_000_000_000, "ideal FCT held exactly, not wrapped");
    }

    /// A mechanism the flows cannot bring into play is said before the run (advice, in the
    /// summary's warnings) and its zero activity after it; a set-up where each acts says
    /// neither.
    #[test]
    fn configured_mechanisms_that_cannot_act_are_said() {
        let two = "[[workload]]\nkind = \"flows\"\nflows = [ { src = 0, dst = 2, size = \"2MB\" }, { src = 1, dst = 2, size = \"2MB\" } ]\n";
        let run = |extra: &str| {
            let (s, mut sim) = load(&format!("{BASE}{extra}{two}"), false, None, &RunOptions::default()).unwrap();
            sim.run();
            (advice(&s).unwrap(), sim.results().summary)
        };
        let acted = |summary: &serde_json::Value, key: &str| -> Option<u64> {
            summary["activity"].as_array()?.iter().find(|a| a["key"] == key).map(|a| a["count"].as_u64().unwrap())
        };
        // CI watching queue 1 while every flow is in queue 0
        let (w, sum) = run("[switch]\nqueues = 2\naqm = { kind = \"step\", threshold = \"30KB\" }\nci = { queue = 1, congested_queue = 0 }\n");
        assert!(w.iter().any(|x| x.starts_with("switch.ci watches queue 1 but every flow is in queue 0")), "{w:?}");
        assert_eq!(acted(&sum, "switch.ci"), Some(0));
        assert!(acted(&sum, "switch.aqm").unwrap() > 0, "two 2 MB flows into one 10G port pass 30 KB: {sum}");
        assert!(sum["warnings"].as_array().unwrap().iter().any(|x| x.as_str().unwrap().starts_with("switch.ci watches")));
        // the same with the flows in CI's queue: no advice, and it isolates
        let (w, sum) = run("[switch]\nqueues = 2\naqm = { kind = \"step\", threshold = \"30KB\" }\nci = { queue = 1, congested_queue = 0 }\nclasses = [1, 1, 1, 1, 1, 1, 1, 1]\n");
        assert!(w.is_empty(), "{w:?}");
        assert!(acted(&sum, "switch.ci").unwrap() > 0, "{sum}");
        // DCTCP with nothing marking; DCQCN with neither ECN nor PFC
        let (w, sum) = run("[transport]\ncc = \"dctcp\"\n");
        assert!(w.iter().any(|x| x.contains("\"dctcp\" but no switch marks ECN")), "{w:?}");
        assert!(sum.get("activity").is_none(), "no mechanism configured, none reported: {sum}");
        let (w, _) = run("[transport]\ncc = \"dcqcn\"\n");
        assert!(w.iter().any(|x| x.contains("\"dcqcn\" with neither ECN marking")), "{w:?}");
        let (w, sum) = run("[transport]\ncc = \"dcqcn\"\n[switch]\npfc = { xoff = \"100KB\", xon = \"50KB\" }\n");
        assert!(w.is_empty(), "PFC alone keeps DCQCN's fabric lossless: {w:?}");
        assert!(acted(&sum, "switch.pfc").is_some(), "{sum}");
    }

    /// PFC's XOFF is drawn on the egress queues only where it bounds them.
    #[test]
    fn xoff_is_a_queue_threshold_only_with_egress_queue_accounting() {
        let notes = |acc: &str| {
            let text = format!("{BASE}[switch]\npfc = {{ xoff = \"100KB\", xon = \"50KB\"{acc} }}\n[[workload]]\nkind = \"flows\"\nflows = [ {{ src = 0, dst = 2, size = \"10KB\" }} ]\n");
            let (_, mut sim) = load(&text, false, None, &RunOptions::default()).unwrap();
            sim.run();
            sim.results().summary.get("queue_notes").cloned().unwrap_or_default().to_string()
        };
        assert!(!notes("").contains("XOFF"), "ingress counters: {}", notes(""));
        assert!(notes(", accounting = \"egress_queue\"").contains("XOFF"));
    }

    /// A transport table is said unused only where no flow of the base or of any variant
    /// uses its algorithm.
    #[test]
    fn unused_transport_tables_are_said_per_document() {
        let text = |variant: &str| format!("{BASE}[transport]\ncc = \"dctcp\"\nhpcc = {{ eta = 0.9 }}\n[[workload]]\nkind = \"flows\"\nflows = [ {{ src = 0, dst = 2, size = \"10KB\" }} ]\n{variant}");
        let said = |t: &str| {
            let doc = Document::from_toml(t).unwrap();
            let (s, all) = doc.resolve_all(None).unwrap();
            document_advice(&doc, &s, &all, None).unwrap().0
        };
        assert_eq!(said(&text("")), vec!["transport.hpcc is set but no flow uses hpcc: its values act on nothing".to_string()]);
        assert!(said(&text("[[variant]]\nname = \"h\"\ntransport.cc = \"hpcc\"\n")).is_empty());
    }

    /// An error quotes a value, a key or a name whole up to LONGEST_WORD characters, and a
    /// longer one cut; TOML the parser refuses without a word says why.
    #[test]
    fn errors_stay_readable() {
        let long = "5".repeat(100_000);
        let e = load(&format!("{BASE}[[workload]]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 1, size = \"{long}MB\" }}]\n"), false, None, &RunOptions::default()).err().unwrap();
        assert_eq!(e.key, "workload[0].flows[0].size");
        assert!(e.to_string().len() < 400 && e.message.contains(" characters]...") && e.message.contains("expected"), "{e}");
        let e = load(&format!("{BASE}[switch]\n{} = 1\n", "x".repeat(100_000)), false, None, &RunOptions::default()).err().unwrap();
        assert!(e.key.len() < 200 && e.message.contains("unknown key"), "{e}");
        let e = load(&format!("{BASE}[[variant]]\nname = \"{}\"\nswitch.queues = 9\n", "v".repeat(50_000)), false, None, &RunOptions::default()).err().unwrap();
        assert!(e.to_string().len() < 400 && e.key.starts_with("switch.queues (variant"), "{e}");
        assert_eq!(crate::sim::error::cut_long_words("short words stay"), "short words stay");
        let e = Document::from_toml(&BASE.replace('\n', "\r")).err().unwrap();
        assert!(e.message.contains("a carriage return not followed by a line feed (line 1)"), "{e}");
        assert!(Document::from_toml(&BASE.replace('\n', "\r\n")).is_ok());
        let e = Document::from_toml(&BASE.replace("name = \"x\"", "name = \"x\0\"")).err().unwrap();
        assert!(e.message.contains("a NUL byte (line"), "{e}");
    }

    const BASE: &str = r#"
[scenario]
name = "x"
[topology]
kind = "dumbbell"
senders = 2
host_link = { rate = "10Gbps", delay = "1us" }
bottleneck = { rate = "10Gbps", delay = "1us" }
"#;

    /// The error a scenario of the test fabric plus `extra` (TOML) is refused with.
    pub(crate) fn error_of(extra: &str) -> ScenarioError {
        let doc = Document::from_toml(&format!("{BASE}\n{extra}")).and_then(|d| check(&d, None).map(|_| ()).map(|_| d));
        match doc {
            Ok(_) => panic!("accepted: {extra}"),
            Err(e) => e,
        }
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            ("[switch]\nbogus = 1", "switch.bogus", "unknown key"),
            ("[switch]\naqm = { kind = \"ramp\", kmin = \"400KB\", kmax = \"300KB\" }", "switch.aqm.kmin", "kmin <= kmax"),
            ("[switch]\naqm = { kind = \"ramp\", kmin = \"4KB\" }", "switch.aqm.kmax", "missing"),
            ("[switch]\naqm = { kind = \"ramp\", kmin = \"4KB\", kmax = \"8KB\", pmax = 0 }", "switch.aqm.pmax", "(0, 1]"),
            ("[switch]\naqm = { kind = \"step\" }", "switch.aqm.threshold", "missing"),
            ("[transport]\nqcn = { gd = 0.01 }", "transport.qcn", "only used with switch.qcn"),
            ("[switch]\ndrc = { thresholds = [0.5, 0.25, 0.75] }", "switch.drc.thresholds", "increasing"),
            ("[switch]\ndrc = { rates = [0.5, 0.25] }", "switch.drc.rates", "expected 3 values"),
            ("[switch]\ndrc = { rates = [0.25, 0.5, 0.0] }", "switch.drc.rates", "not increasing"),
            ("[switch]\ndrc = { classes = [3] }", "switch.drc.classes", "classes 0..0"),
            ("[transport]\nwindow = \"1000B\"", "transport.window", "at least the MTU"),
            ("[transport]\nmin_rto = \"0s\"", "transport.min_rto", "expected a duration > 0"),
            ("[transport]\nack_size = \"100KB\"", "transport.ack_size", "expected at most the MTU"),
            ("[transport]\nmin_rto = \"0.4ps\"", "transport.min_rto", "expected a duration > 0"),
            ("[transport]\nkind = \"dcqcn\"\nmin_rto = \"0us\"", "transport.min_rto", "expected a duration > 0"),
            ("[transport]\ndcqcn = { rate_ai_fraction = 1.25 }", "transport.dcqcn.rate_ai_fraction", "invalid value 1.25, expected a fraction of the line rate in (0, 1]"),
            ("[transport]\ndcqcn = { rate_hai_fraction = 0.0 }", "transport.dcqcn.rate_hai_fraction", "in (0, 1]"),
            ("[transport]\ndcqcn = { rate_hai = \"25Mbps\", rate_hai_fraction = 0.025 }", "transport.dcqcn.rate_hai_fraction", "either rate_hai (a rate) or rate_hai_fraction"),
            ("[transport]\ninit_rto = \"0s\"", "transport.init_rto", "expected a duration > 0"),
            ("[transport]\nhpcc = { eta = 0.0 }", "transport.hpcc.eta", "invalid value 0, expected a fraction in (0, 1]"),
            ("[transport]\ntimely = { beta = 1.5 }", "transport.timely.beta", "invalid value 1.5, expected a fraction in (0, 1]"),
            ("[transport]\ntimely = { t_low = \"600us\" }", "transport.timely.t_high", "expected more than t_low"),
            ("[transport]\ntimely = { min_rtt = \"0s\" }", "transport.timely.min_rtt", "expected a duration > 0"),
            ("[transport]\nswift = { beta = 0.0 }", "transport.swift.beta", "invalid value 0, expected a factor in (0, 1]"),
            ("[transport]\nswift = { max_mdf = 1.0 }", "transport.swift.max_mdf", "expected a fraction in (0, 1)"),
            ("[transport]\ntimely = { segment = \"0B\" }", "transport.timely.segment", "expected a size > 0"),
            ("[transport]\nbbr = { quantum = \"gso\" }", "transport.bbr.quantum", "expected one of \"tso\", \"segment\""),
            ("[transport]\nswift = { ai = -1.0 }", "transport.swift.ai", "expected a number of packets > 0"),
            ("[transport]\nswift = { base_target = \"0s\" }", "transport.swift.base_target", "expected a duration > 0"),
            ("[switch]\nint = { switches = [] }", "switch.int.switches", "expected switch names"),
            ("[transport]\nudp = { nic_buffer = \"100B\" }", "transport.udp.nic_buffer", "at least the MTU"),
            ("[[workload]]\nkind = \"closed_loop\"", "workload[0].mean_size", "missing"),
            ("[[workload]]\nkind = \"closed_loop\"\nmean_size = \"8000B\"\npairs = [[0, 0]]", "workload[0].pairs[0]", "two different host"),
            ("[[workload]]\nkind = \"closed_loop\"\nmean_size = \"8000B\"\nconnection = \"new\"", "workload[0].connection", "only used with pairs"),
            ("[[workload]]\nkind = \"closed_loop\"\nmean_size = \"8000B\"\nin_flight = 0", "workload[0].in_flight", "at least 1 message"),
            ("[[workload]]\nkind = \"closed_loop\"\ntransport = \"udp\"\nmean_size = \"100B\"", "transport.udp.nic_buffer", "datagram closed loop of workload[0]"),
            ("[switch]\ndrc = { thresholds = [0.05, 0.1, 0.2] }", "switch.drc.thresholds", "hysteresis 0.1 >= the first threshold 0.05"),
            ("[switch]\ndrc = { hysteresis = 0.25 }", "switch.drc.hysteresis", "never leave severity 1"),
            (
                "[[workload]]\nkind = \"closed_loop\"\nmean_size = \"8000B\"\nmin_size = \"128KB\"\nmax_size = \"128001B\"",
                "workload[0].min_size",
                "invalid value 128000 B: an exponential size of mean 8000 B falls in [min_size, max_size] = [128000 B, 128001 B] with probability 2.8e-11, expected a window of probability >= 1e-6",
            ),
            ("[[workload]]\nkind = \"closed_loop\"\nmean_size = \"1GB\"\nmin_size = \"1GB\"\nmax_size = \"1GB\"", "workload[0].max_size", "probability 3.7e-10"),
            ("[[workload]]\nkind = \"closed_loop\"\nmean_size = \"8000B\"\nsize = \"1KB\"", "workload[0].size", "not used by kind = \"closed_loop\""),
            ("[switch]\nqcn = { q_eq = \"0B\" }", "switch.qcn.q_eq", "set point > 0"),
            ("[switch]\nqcn = { w = -1.0 }", "switch.qcn.w", "weight > 0"),
            ("[switch]\nqcn = {}\n[transport]\nqcn = { min_decrease = 1.0 }", "transport.qcn.min_decrease", "(0, 1)"),
            ("[switch]\nqcn = {}\n[transport]\nqcn = { timer = \"0ms\" }", "transport.qcn.timer", "> 0"),
            ("[switch]\naqm = { kind = \"step\", threshold = \"30KB\", pmax = 0.5 }", "switch.aqm.pmax", "only used with kind = \"ramp\""),
            ("[switch]\naqm = { kind = \"red\", min = \"1KB\", max = \"9KB\", drop_non_ect = true }", "switch.aqm.drop_non_ect", "kind = \"step\" or \"ramp\", not \"red\""),
            ("[switch]\necn = { k = \"30KB\" }", "switch.ecn", "kind = \"step\", threshold = K"),
            ("[[workload]]\nkind = \"poisson\"\nsizes = \"web-search\"\nload = 1.5", "workload[0].load", "(0, 1]"),
            ("[[workload]]\nkind = \"poisson\"\nsizes = \"web-search\"\nload = 0.0", "workload[0].load", "(0, 1]"),
            ("[switch]\nlatency = 400", "switch.latency", "bare number"),
            ("[[workload]]\nkind = \"flows\"\nflows = [{ src = 0, dst = 9, size = \"1KB\" }]", "workload[0].flows[0].dst", "3 hosts"),
            ("[[workload]]\nkind = \"incast\"\nfan_in = 5\nsize = \"1KB\"", "workload[0].fan_in", "3 hosts"),
            ("[transport]\nkind = \"tcp\"\ncc = \"dcqcn\"", "transport.cc", "runs over tcp"),
            ("[transport]\nkind = \"quic\"", "transport.kind", "invalid value \"quic\""),
            // a name given as another type: the type given, and the names
            ("[switch]\nbuffer = { model = 3 }", "switch.buffer.model", "invalid type: integer 3, expected a string: one of \"static\", \"shared\""),
            ("[switch]\nbuffer = { model = true }", "switch.buffer.model", "invalid type: boolean true, expected a string: one of"),
            ("[[workload]]\nkind = [\"flows\"]", "workload[0].kind", "invalid type: array [\"flows\"], expected a string: one of \"poisson\""),
            ("[transport]\ncc = \"vegas\"", "transport.cc", "invalid value \"vegas\""),
            ("[[workload]]\nkind = \"poisson\"\nsizes = \"web-search\"\nload = 0.5\ntransport = \"udp\"\ncc = \"reno\"", "workload[0].cc", "UDP runs no congestion control"),
            ("[[variant]]\nname = \"v\"\nswitch.queues = 9", "switch.queues (variant \"v\")", "1..8"),
            ("[switch]\nsfc = { trigger = \"0B\" }", "switch.sfc.trigger", "depth > 0"),
            ("[switch]\nsfc = { trigger = \"100KB\", target = \"100KB\" }", "switch.sfc.target", "below the trigger (100000 B)"),
            ("[switch]\nsfc = { mode = \"proxy\" }\npfc = { xoff = \"100KB\", mode = \"link\" }", "switch.sfc.mode", "one traffic class"),
            ("[switch]\nsfc = { cache = \"spine\" }", "switch.sfc.cache", "invalid value \""),
            ("[switch]\nbuffer = { model = \"shared\", ingress_pool = \"9MB\" }", "switch.buffer.ingress_pool", "switch.pfc.alpha"),
            ("[switch]\nbuffer = { queue = \"1MB\", ingress_pool = \"9MB\" }", "switch.buffer.ingress_pool", "model = \"shared\""),
            ("[metrics]\nthroughput_bin = \"0us\"", "metrics.throughput_bin", "> 0"),
            ("[switch]\naqm = { kind = \"fixed\" }", "switch.aqm.p", "missing"),
            ("[switch]\naqm = { kind = \"fixed\", p = 1.5 }", "switch.aqm.p", "[0, 1]"),
            ("[switch]\naqm = { kind = \"codel\" }", "switch.aqm.kind", "invalid value \""),
            ("[transport]\nect = \"ce\"", "transport.ect", "invalid value \""),
            ("[switch]\naqm = { kind = \"red\", max = \"300KB\" }", "switch.aqm.min", "missing"),
            ("[switch]\naqm = { kind = \"red\", min = \"300KB\", max = \"300KB\" }", "switch.aqm.max", "more than min"),
            ("[switch]\naqm = { kind = \"red\", min = \"120000B\", max = \"360000B\", burst = 100 }", "switch.aqm.burst", "burst > min / avpkt - 1"),
            (
                "[switch]\naqm = { kind = \"red\", min = \"100KB\", max = \"300KB\", avpkt = \"1000000GB\" }",
                "switch.aqm.avpkt",
                "invalid value 1000000000000000 B: the burst it derives, (2 min + max) / (3 avpkt), is 0, and RED needs burst > min / avpkt - 1",
            ),
            ("[switch]\naqm = { kind = \"red\", min = \"1500B\", max = \"1600B\" }", "switch.aqm.min", "default avpkt (1000 B), (2 min + max) / (3 avpkt), is 1"),
            ("[switch]\naqm = { kind = \"red\", min = \"1KB\", max = \"9KB\", p = 0.1 }", "switch.aqm.p", "only used with kind = \"fixed\""),
            ("[switch]\naqm = { kind = \"fixed\", p = 0.1, min = \"1KB\" }", "switch.aqm.min", "only used with kind = \"red\""),
            ("[switch]\naqm = { kind = \"pi2\", target = \"0ms\" }", "switch.aqm.target", "> 0"),
            ("[switch]\naqm = { kind = \"pi2\", alpha = -1.0 }", "switch.aqm.alpha", ">= 0"),
            ("[switch]\naqm = { kind = \"pi2\", min = \"1KB\" }", "switch.aqm.min", "only used with kind = \"red\""),
            ("[switch]\naqm = { kind = \"dualpi2\" }", "switch.queues", "expected 2"),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualpi2\", l_queue = 0 }", "switch.aqm.l_queue", "two different queues"),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualpi2\", k = 0.0 }", "switch.aqm.k", "> 0"),
            ("[switch]\nqueues = 2\naqm = { kind = \"pi2\", k = 2.0 }", "switch.aqm.k", "only used with kind = \"dualpi2\""),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualpi2\" }\nci = {}", "switch.aqm.kind", "both choose the egress queue"),
            ("[switch]\naqm = { kind = \"dualq2015\" }", "switch.queues", "invalid value 1 with switch.aqm.kind = \"dualq2015\", expected 2"),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualq2015\", l_queue = 0 }", "switch.aqm.l_queue", "invalid value 0 (c_queue 0), expected two different queues 0..1"),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualq2015\", l_queue = 0, c_queue = 1 }", "switch.aqm.l_queue", "invalid value 0 below c_queue 1 with scheduler = \"strict\""),
            ("[switch]\nqueues = 2\nscheduler = \"dwrr\"\naqm = { kind = \"dualq2015\" }", "switch.scheduler", "L queue (1) not in switch.strict, expected \"strict\""),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualq2015\", classic_slope = 33 }", "switch.aqm.classic_slope", "invalid value 33, expected a shift in bits 0..32"),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualq2015\", l_slope = 40 }", "switch.aqm.l_slope", "invalid value 40"),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualq2015\", threshold = \"0B\" }", "switch.aqm.threshold", "invalid value 0 B, expected a depth > 0"),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualq2015\", k = 8.0 }", "switch.aqm.k", "only used with kind = \"dualpi2\" or \"coupled\", not \"dualq2015\""),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualpi2\", l_slope = 4 }", "switch.aqm.l_slope", "only used with kind = \"dualq2015\", not \"dualpi2\""),
            ("[switch]\nqueues = 2\naqm = { kind = \"dualq2015\" }\nci = {}", "switch.aqm.kind", "invalid value \"dualq2015\" with switch.ci"),
            ("[switch]\naqm = { kind = \"coupled\" }", "switch.aqm.max", "missing"),
            ("[switch]\naqm = { kind = \"coupled\", max = \"100KB\", min = \"1KB\" }", "switch.aqm.min", "only used with kind = \"red\""),
            ("[switch]\naqm = { kind = \"red\", min = \"1KB\", max = \"90KB\", burst = 200, target = \"1ms\" }", "switch.aqm.target", "only used with kind = \"pi2\""),
            ("[switch]\nqueues = 2\nci = { cim_encap = \"600B\" }", "switch.ci.cim_encap", "0..512 B"),
            ("[switch]\nqueues = 2\nci = { max_flow_life = \"0s\" }", "switch.ci.max_flow_life", "> 0"),
            ("[switch]\nqueues = 2\nci = { cim_release = \"never\" }", "switch.ci.cim_release", "invalid value \""),
            ("[[workload]]\nkind = \"incast\"\nfan_in = 1\nsize = \"1KB\"\ngroups = 2\ndisjoint_groups = true", "workload[0].disjoint_groups", "need 4 hosts"),
            ("[[workload]]\nkind = \"incast\"\nfan_in = 1\nsize = \"1KB\"\nperiod = \"10us\"\ndisjoint_groups = true", "workload[0].disjoint_groups", "oneshot"),
            ("[[workload]]\nkind = \"poisson\"\nsizes = \"web-search\"\nload = 0.5\nstagger = \"1us\"", "workload[0].stagger", "not used by kind = \"poisson\""),
        ];
        for (extra, key, what) in cases {
            let e = error_of(extra);
            assert_eq!(e.key, key, "{extra}: {e}");
            assert!(e.message.contains(what), "{extra}: {e}");
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn zero_rate_and_disconnected_topologies_are_rejected() {
        let t = BASE.replace("rate = \"10Gbps\", delay = \"1us\" }\nbottleneck", "rate = \"0Gbps\", delay = \"1us\" }\nbottleneck");
        let e = Document::from_toml(&t).and_then(|d| d.scenario(None)).unwrap_err();
        assert_eq!(e.key, "topology.host_link.rate");
        let custom = r#"
[scenario]
name = "x"
[topology]
kind = "custom"
hosts = ["a", "b"]
switches = ["s1", "s2"]
links = [ { a = "a", b = "s1", rate = "1Gbps", delay = "1us" }, { a = "b", b = "s2", rate = "1Gbps", delay = "1us" } ]
"#;
        let e = check(&Document::from_toml(custom).unwrap(), None).unwrap_err();
        assert!(e.message.contains("disconnected"), "{e}");
    }

    /// A host's one link goes to a switch: two hosts wired together (routing panicked) or a
    /// host with two NICs are refused with the key of the link or the host.
    #[test]
    fn custom_hosts_have_one_link_to_a_switch() {
        let text = |switches: &str, links: &str| {
            format!("[scenario]\nname = \"x\"\n[topology]\nkind = \"custom\"\nhosts = [\"h0\", \"h1\"]\nswitches = [{switches}]\nlinks = [{links}]\n")
        };
        let l = |a: &str, b: &str| format!("{{ a = \"{a}\", b = \"{b}\", rate = \"10Gbps\", delay = \"1us\" }}, ");
        for (sw, links, key, what) in [
            ("", l("h0", "h1"), "topology.links[0]", "links host \"h0\" to host \"h1\", expected a host to connect to a switch"),
            ("\"s\"", l("h0", "s") + &l("h1", "s") + &l("h1", "h0"), "topology.links[2]", "links host \"h1\" to host \"h0\""),
            ("\"s\", \"t\"", l("h0", "s") + &l("h0", "t") + &l("h1", "s") + &l("s", "t"), "topology.hosts[0]", "host \"h0\" has 2 links, expected exactly 1"),
        ] {
            let e = check(&Document::from_toml(&text(sw, &links)).unwrap(), None).unwrap_err();
            assert_eq!(e.key, key, "{e}");
            assert!(e.message.contains(what), "{e}");
        }
        assert!(check(&Document::from_toml(&text("\"s\"", &(l("h0", "s") + &l("h1", "s")))).unwrap(), None).is_ok());
    }

    #[test]
    fn workloads_stay_within_their_host_range() {
        let text = r#"
[scenario]
name = "x"
arrivals_for = "200us"
max_time = "1ms"
[topology]
kind = "clos2"
tors = 4
servers_per_tor = 16
spines = 2
host_link = { rate = "100Gbps", delay = "1us" }
[[workload]]
kind = "poisson"
sizes = "web-search"
load = 0.5
cluster_size = 21
hosts = [0, 42]
[[workload]]
kind = "incast"
fan_in = 20
size = "64KB"
period = "persistent"
hosts = [42, 63]
"#;
        let (_, mut sim) = load(text, false, None, &RunOptions::default()).unwrap();
        sim.run_until(SimTime::from_us(300));
        let r = sim.results();
        let (crate::metrics::ColumnData::U32(src), crate::metrics::ColumnData::U32(dst)) = (r.flows.get("src").unwrap(), r.flows.get("dst").unwrap()) else { unreachable!() };
        let tag = match r.flows.get("tag").unwrap() {
            crate::metrics::ColumnData::U16(t) => t.clone(),
            _ => unreachable!(),
        };
        for i in 0..src.len() {
            let (lo, hi) = if tag[i] == 0 { (0, 42) } else { (42, 63) };
            assert!((lo..hi).contains(&src[i]) && (lo..hi).contains(&dst[i]), "flow {i}: {} -> {}", src[i], dst[i]);
            if tag[i] == 0 {
                assert_eq!(src[i] / 21, dst[i] / 21, "background stays in its cluster");
            }
        }
        assert!(tag.iter().any(|&t| t == 1) && tag.iter().any(|&t| t == 0));
    }

    #[test]
    fn clos2_placement_interleaves_servers_over_the_tors() {
        let text = |placement: &str| {
            format!("[scenario]\nname = \"x\"\n[topology]\nkind = \"clos2\"\n{placement}tors = 3\nservers_per_tor = 4\nspines = 2\nhost_link = {{ rate = \"100Gbps\", delay = \"1us\" }}\n")
        };
        for (placement, tor_of) in [("", (|i: u32| i / 4) as fn(u32) -> u32), ("placement = \"interleaved\"\n", |i| i % 3), ("placement = \"by_tor\"\n", |i| i / 4)] {
            let (_, sim) = load(&text(placement), false, None, &RunOptions::default()).unwrap();
            let t = sim.topology();
            for h in 0..12u32 {
                let tor = t.nodes[t.peer_node(t.host_port(h)) as usize].name.clone();
                assert_eq!(tor, format!("tor{}", tor_of(h)), "{placement}host {h}");
            }
        }
        let dumbbell = BASE.replace("kind = \"dumbbell\"", "kind = \"dumbbell\"\nplacement = \"interleaved\"");
        let e = check(&Document::from_toml(&dumbbell).unwrap(), None).unwrap_err();
        assert_eq!(e.key, "topology.placement", "{e}");
    }

    /// fat_tree3's core_wiring: "all" builds seed 004's radix-20 fabric from its sizes and
    /// lifts the groups' divisibility rule; other topology kinds refuse the key.
    #[test]
    fn fat_tree_core_wiring_all_connects_every_aggregation_switch_to_every_core() {
        let text = |extra: &str| {
            format!(
                "[scenario]\nname = \"x\"\n[topology]\nkind = \"fat_tree3\"\npods = 5\ntors_per_pod = 4\naggs_per_pod = 4\nhosts_per_tor = 16\n{extra}\nhost_link = {{ rate = \"100Gbps\", delay = \"500ns\" }}\n"
            )
        };
        let (_, sim) = load(&text("cores = 16\ncore_wiring = \"all\""), false, None, &RunOptions::default()).unwrap();
        let t = sim.topology();
        assert_eq!((t.num_hosts(), t.num_switches()), (320, 56));
        assert!(t.switches.iter().all(|&s| t.nodes[s as usize].ports.len() == 20));
        let (_, sim) = load(&text("cores = 16"), false, None, &RunOptions::default()).unwrap();
        let core_radix: Vec<usize> = sim.topology().switches[..16].iter().map(|&s| sim.topology().nodes[s as usize].ports.len()).collect();
        assert_eq!(core_radix, vec![5; 16], "groups: one link per pod");
        let e = check(&Document::from_toml(&text("cores = 10")).unwrap(), None).unwrap_err();
        assert_eq!(e.key, "topology.cores", "{e}");
        assert!(e.to_string().contains("multiple of aggs_per_pod (4) with core_wiring = \"groups\""), "{e}");
        assert!(load(&text("cores = 10\ncore_wiring = \"all\""), false, None, &RunOptions::default()).is_ok());
        let dumbbell = BASE.replace("kind = \"dumbbell\"", "kind = \"dumbbell\"\ncore_wiring = \"all\"");
        let e = check(&Document::from_toml(&dumbbell).unwrap(), None).unwrap_err();
        assert_eq!(e.key, "topology.core_wiring", "{e}");
    }

    /// A clos2 spine count that node ids cannot hold is refused with the key that sets
    /// it, derived (a tiny oversubscription) or given, before anything is built.
    #[test]
    fn clos2_spines_beyond_node_ids_are_refused() {
        let text = |extra: &str| {
            format!("[scenario]\nname = \"x\"\n[topology]\nkind = \"clos2\"\ntors = 1\nservers_per_tor = 2\n{extra}\nhost_link = {{ rate = \"10Gbps\", delay = \"1us\" }}\n")
        };
        for (extra, key, what) in [
            ("oversubscription = 1e-300", "topology.oversubscription", "invalid value 1e-300: it makes 2.0e300 spines"),
            ("oversubscription = 1e-40", "topology.oversubscription", "2^32 nodes"),
            ("spines = 4294967295", "topology.spines", "invalid value 4294967295"),
        ] {
            let e = check(&Document::from_toml(&text(extra)).unwrap(), None).unwrap_err();
            assert_eq!(e.key, key, "{extra}: {e}");
            assert!(e.message.contains(what) && e.message.contains("2^32 nodes"), "{extra}: {e}");
        }
        // a ratio below 1 is legitimate: more uplink than downlink capacity
        let (_, sim) = load(&text("oversubscription = 0.5"), false, None, &RunOptions::default()).unwrap();
        assert_eq!(sim.topology().num_switches(), 1 + 4);
    }

    /// An incast's fixed receiver is a host index of the topology, within the workload's
    /// hosts: [4, 8] takes 4..7 (only 0..3 passed the incast check, only 4..7 the hosts
    /// check, so none was accepted).
    #[test]
    fn incast_receiver_is_a_host_within_the_workload_hosts() {
        let text = |receiver: u32| {
            format!(
                "[scenario]\nname = \"x\"\nmax_time = \"1ms\"\n[topology]\nkind = \"dumbbell\"\nsenders = 4\nreceivers = 4\n\
                 host_link = {{ rate = \"10Gbps\", delay = \"1us\" }}\nbottleneck = {{ rate = \"10Gbps\", delay = \"1us\" }}\n\
                 [[workload]]\nkind = \"incast\"\nfan_in = 2\nsize = \"10KB\"\nhosts = [4, 8]\nreceiver = {receiver}\n"
            )
        };
        let (_, mut sim) = load(&text(6), false, None, &RunOptions::default()).unwrap();
        sim.run();
        let r = sim.results();
        let (src, dst) = (r.flows.get("src").unwrap(), r.flows.get("dst").unwrap());
        let (crate::metrics::ColumnData::U32(src), crate::metrics::ColumnData::U32(dst)) = (src, dst) else { unreachable!() };
        assert_eq!(dst, &vec![6, 6]);
        assert!(src.iter().all(|s| (4..8).contains(s) && *s != 6), "{src:?}");
        for r in [2, 8] {
            let e = check(&Document::from_toml(&text(r)).unwrap(), None).unwrap_err();
            assert_eq!(e.key, "workload[0].receiver", "{e}");
            assert!(e.message.contains(&format!("invalid value {r}, expected a host")) && e.message.contains("4"), "{e}");
        }
    }

    #[test]
    fn incast_connection_needs_a_persistent_period() {
        let e = error_of("[[workload]]\nkind = \"incast\"\nfan_in = 1\nsize = \"1KB\"\nconnection = \"new\"");
        assert_eq!(e.key, "workload[0].connection", "{e}");
        assert!(e.message.contains("persistent"), "{e}");
    }

    #[test]
    fn variants_override_the_base() {
        let doc = Document::from_toml(&format!(
            "{BASE}\n[[variant]]\nname = \"A\"\n[[variant]]\nname = \"B\"\ntopology.senders = 5\nswitch.aqm = {{ kind = \"step\", threshold = \"30KB\" }}\n"
        ))
        .unwrap();
        assert_eq!(doc.variant_names(), vec!["A", "B"]);
        assert_eq!(doc.scenario(Some("A")).unwrap().topology.senders, Some(2));
        let b = doc.scenario(Some("B")).unwrap();
        assert_eq!(b.topology.senders, Some(5));
        assert_eq!(b.topology.host_link.unwrap().rate.0, 10_000_000_000);
        assert_eq!(b.switch.aqm, Some(AqmConfig::Step(StepAqm { threshold: Some(units::Bytes(30_000)), drop_non_ect: None })));
        assert!(doc.scenario(Some("C")).is_err());
    }

    /// A variant that changes the buffer model replaces the base's buffer table (the shared
    /// model's keys would not fit a static buffer); one that keeps the model merges into it.
    #[test]
    fn a_new_buffer_model_replaces_the_buffer_table() {
        let base = format!("{BASE}\n[switch]\nbuffer = {{ model = \"shared\", pool = \"4MB\", alpha = 2.0 }}\n");
        let doc = Document::from_toml(&format!(
            "{base}\n[[variant]]\nname = \"S\"\nswitch.buffer = {{ model = \"static\", queue = \"1MB\" }}\n[[variant]]\nname = \"M\"\nswitch.buffer = {{ model = \"shared\", guaranteed = \"1KB\" }}\n"
        ))
        .unwrap();
        let s = doc.scenario(Some("S")).unwrap().switch.buffer;
        assert_eq!((s.model, s.queue.map(|b| b.0), s.pool.is_none(), s.alpha), (BufferModel::Static, Some(1_000_000), true, None));
        let m = doc.scenario(Some("M")).unwrap().switch.buffer;
        assert_eq!((m.pool.map(|b| b.0), m.guaranteed.map(|b| b.0), m.alpha), (Some(4_000_000), Some(1_000), Some(2.0)));
    }

    /// `remove` drops base keys before the variant's own merge in: a mechanism switched off,
    /// a static threshold replaced by a dynamic one (a merge would keep both), and a typo or
    /// a wrong type refused with the key and the variant named.
    #[test]
    fn a_variant_removes_base_tables() {
        let base = format!("{BASE}\n[switch]\nbuffer = {{ model = \"shared\", pool = \"4MB\" }}\npfc = {{ xoff = \"100KB\", xon = \"80KB\" }}\n");
        let doc = Document::from_toml(&format!(
            "{base}\n[[variant]]\nname = \"off\"\nremove = [\"switch.pfc\"]\n\
             [[variant]]\nname = \"dynamic\"\nremove = [\"switch.pfc\"]\nswitch.pfc = {{ alpha = 0.5 }}\n\
             [[variant]]\nname = \"empty\"\nswitch.pfc = {{}}\n"
        ))
        .unwrap();
        assert!(doc.scenario(None).unwrap().switch.pfc.is_some());
        assert!(doc.scenario(Some("off")).unwrap().switch.pfc.is_none());
        let d = doc.scenario(Some("dynamic")).unwrap().switch.pfc.unwrap();
        assert_eq!((d.xoff, d.alpha), (None, Some(0.5)));
        // an empty table merges into the base's: PFC stays on, as documented
        assert!(doc.scenario(Some("empty")).unwrap().switch.pfc.unwrap().xoff.is_some());
        assert!(!doc.merged(Some("off")).unwrap()["switch"].as_table().unwrap().contains_key("pfc"));
        for (remove, what) in
            [("[\"switch.pfcc\"]", "does not set it"), ("[\"swich.pfc\"]", "no table \"swich\""), ("\"switch.pfc\"", "expected a list"), ("[3]", "expected a key path")]
        {
            let doc = Document::from_toml(&format!("{base}\n[[variant]]\nname = \"v\"\nremove = {remove}\n")).unwrap();
            let e = doc.scenario(Some("v")).unwrap_err();
            assert!(e.key == "remove (variant \"v\")" && e.message.contains(what), "{remove}: {e}");
        }
    }

    /// serde's unknown-key and unknown-value messages become the scenario's words with the
    /// nearest allowed name; an unknown variant name gets the same treatment.
    #[test]
    fn typos_name_their_fix() {
        let e = error_of("[switch]\nbufer = 1");
        assert_eq!(e.key, "switch.bufer");
        assert!(e.message.starts_with("unknown key \"bufer\" (did you mean \"buffer\"?), expected one of "), "{e}");
        let e = error_of("[transport]\nkind = \"dcqnc\"");
        assert!(e.message.starts_with("invalid value \"dcqnc\" (did you mean \"dcqcn\"?), expected one of \"tcp\", \"roce\", \"udp\", \"dctcp\""), "{e}");
        // nothing near: no guess
        let e = error_of("[transport]\nkind = \"vegas\"");
        assert!(e.message.starts_with("invalid value \"vegas\", expected one of"), "{e}");
        let doc = Document::from_toml(&format!("{BASE}\n[[variant]]\nname = \"DRC_RED_ECN\"\n[[variant]]\nname = \"802.3x\"\n")).unwrap();
        for (typo, fix) in [("802.3", "802.3x"), ("drc_red", "DRC_RED_ECN"), ("DRC_RED_ECM", "DRC_RED_ECN")] {
            let e = doc.scenario(Some(typo)).unwrap_err();
            assert_eq!(e.message, format!("no variant named \"{typo}\" (did you mean \"{fix}\"?), expected one of \"DRC_RED_ECN\", \"802.3x\""));
        }
    }

    /// Variants that resolve to the same scenario are reported (the base never is).
    #[test]
    fn identical_variants_are_found() {
        let doc = Document::from_toml(&format!(
            "{BASE}\n[[variant]]\nname = \"A\"\n[[variant]]\nname = \"B\"\ntopology.senders = 5\n[[variant]]\nname = \"C\"\n\
             [[variant]]\nname = \"D\"\ntopology.senders = 5\n[[variant]]\nname = \"E\"\ntopology.senders = 2\n"
        ))
        .unwrap();
        let pairs = doc.identical_variants().unwrap();
        // E writes out the base's own value: the same scenario as A
        assert_eq!(pairs, vec![("A".into(), "C".into()), ("B".into(), "D".into()), ("A".into(), "E".into())]);
    }

    /// One invalid variant makes the file invalid for every command, whichever part runs.
    #[test]
    fn an_invalid_variant_refuses_the_whole_file() {
        let flows = "[[workload]]\nkind = \"flows\"\nflows = [ { src = 0, dst = 2, size = \"1KB\" } ]\n";
        for (variant, key) in [("bogus_key = 1", "bogus_key"), ("topology.senders = 0", "topology.senders"), ("scenario.name = \"\"", "scenario.name")] {
            let text = format!("{BASE}{flows}[[variant]]\nname = \"ok\"\n[[variant]]\nname = \"bad\"\n{variant}\n");
            for selected in [None, Some("ok")] {
                let e = load(&text, false, selected, &RunOptions::default()).err().unwrap_or_else(|| panic!("{variant}: ran {selected:?}"));
                assert!(e.key.starts_with(key) && e.key.ends_with("(variant \"bad\")"), "{variant} / {selected:?}: {e}");
            }
        }
        let e = load(&format!("{BASE}{flows}"), false, Some("x"), &RunOptions::default()).err().unwrap();
        assert!(e.message.contains("has no [[variant]] tables"), "{e}");
    }
}
