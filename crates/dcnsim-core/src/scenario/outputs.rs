//! The outputs reference, generated from the code (docs/user-guide.md, "Outputs"): every
//! column of flows.parquet and ports.parquet and every key of summary.json is described
//! once, beside the code that writes it (`engine::ENGINE_OUTPUTS`, each switch mechanism's
//! `SwitchMechanism::OUTPUTS`), and the user guide's column tables are rendered from those descriptions.
//!
//! The user guide carries each table between `<!-- generated: outputs PART -->` and
//! `<!-- end generated -->` (PART: flows, ports or summary), with its hand-written prose
//! around them; `cargo run -p dcnsim-core --example gen_reference` rewrites them, and a test
//! fails when they drift. Another runs a configuration of every mechanism and holds the
//! columns and keys the runs write to the descriptions, both ways: a column written with no
//! description, or a description of a column no run writes, fails it.

use crate::metrics::{Described, Outputs};

/// The user guide, relative to the workspace root.
pub const USER_GUIDE_PATH: &str = "docs/user-guide.md";

/// Everything that writes columns or summary keys, in the order they come: the engine, then
/// each switch mechanism of `switch_mechanisms!` in list (pipeline) order (`switch::OUTPUTS`,
/// made by the list, so a new mechanism is in from the day it is listed), a test's stand-ins
/// left out when `shipped`.
pub fn writers(shipped: bool) -> impl Iterator<Item = (&'static str, &'static Outputs)> {
    std::iter::once(("engine", &crate::engine::ENGINE_OUTPUTS)).chain(crate::switch::OUTPUTS.iter().filter(move |w| !(shipped && w.2)).map(|w| (w.0, &w.1)))
}

/// Columns the reference names that no run of the core writes: the Python layer adds them
/// beside the node numbers they name (python/dcnsim/api.py, `ports_frame`).
pub const ADDED_BY_PYTHON: [&str; 2] = ["node_name", "peer_name"];

/// A writer's descriptions of one part of the results.
type PartOf = fn(&Outputs) -> &'static [Described];

/// The parts of the results the reference tables: the marker's name, the header of the
/// names' column and the writers' descriptions of that part.
const PARTS: [(&str, &str, PartOf); 3] = [("flows", "Column", |o| o.flows), ("ports", "Column", |o| o.ports), ("summary", "Key", |o| o.summary)];

/// The comment that closes a generated table.
pub const END_MARKER: &str = "<!-- end generated -->";

/// The comment that opens the generated table of `part`.
fn begin_marker(part: &str) -> String {
    format!("<!-- generated: outputs {part} -->")
}

fn part(name: &str) -> (&'static str, PartOf) {
    let p = PARTS.iter().find(|p| p.0 == name).unwrap_or_else(|| panic!("no part {name} of the results"));
    (p.1, p.2)
}

/// A description as one markdown table cell.
fn cell(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// The markdown table of part `name` of the results ("flows", "ports" or "summary"): a row per
/// description, the engine's first, then each mechanism's in list order (the order the
/// columns come in).
pub fn table(name: &str) -> String {
    let (head, of) = part(name);
    let mut t = format!("| {head} | Meaning |\n|---|---|\n");
    for (_, o) in writers(true) {
        for (names, meaning) in of(o) {
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            t += &format!("| {} | {} |\n", names.join(", "), cell(meaning));
        }
    }
    t
}

/// `doc` (docs/user-guide.md) with each generated table replaced by `table`'s. Panics where
/// a table's markers are missing: the guide would silently lose the table.
pub fn with_outputs_tables(doc: &str) -> String {
    let mut out = doc.to_string();
    for (part, _, _) in PARTS {
        let open = format!("{}\n", begin_marker(part));
        let a = out.find(&open).unwrap_or_else(|| panic!("{USER_GUIDE_PATH} has no {open:?} ... {END_MARKER:?} block")) + open.len();
        let b = a + out[a..].find(END_MARKER).unwrap_or_else(|| panic!("{USER_GUIDE_PATH}: {open:?} is not closed by {END_MARKER:?}"));
        out.replace_range(a..b, &table(part));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimConfig;
    use crate::net::{LinkChange, LinkState, Topology};
    use crate::scenario::reference::REGENERATE;
    use crate::scenario::{build_adjusted, Document, RunOptions};
    use crate::sim::SimTime;
    use crate::switch::stand_in::StandInParams;
    use std::collections::{BTreeMap, BTreeSet};

    const USER_GUIDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/user-guide.md");

    /// docs/user-guide.md's tables of the outputs are the ones the code describes.
    #[test]
    fn user_guide_outputs_tables_are_up_to_date() {
        let on_disk = std::fs::read_to_string(USER_GUIDE).unwrap_or_else(|e| panic!("cannot read {USER_GUIDE} ({e})"));
        let generated = with_outputs_tables(&on_disk);
        if on_disk != generated {
            let line = on_disk.lines().zip(generated.lines()).position(|(a, b)| a != b).map_or("end of file".to_string(), |i| (i + 1).to_string());
            panic!("{USER_GUIDE_PATH}'s outputs tables are out of date with the code's descriptions (first difference at line {line}); run `{REGENERATE}` and commit the result");
        }
    }

    /// Part `part`'s described names, each with its meaning and its writer. A name described
    /// twice in one part (two writers, or one twice) is a bug: one of them would be wrong.
    fn described(part: &str) -> BTreeMap<&'static str, (&'static str, &'static str)> {
        let mut out = BTreeMap::new();
        for (writer, o) in writers(false) {
            for (names, meaning) in super::part(part).1(o) {
                assert!(!names.is_empty() && !meaning.trim().is_empty(), "{writer}: a {part} description without names or meaning");
                for n in names.iter() {
                    if let Some((other, _)) = out.insert(*n, (writer, *meaning)) {
                        panic!("{part} {n} is described twice (by {other} and {writer})");
                    }
                }
            }
        }
        out
    }

    /// Hosts h0..h3 send 50 KB each to r (priority 1) over one switch `s`, 100G and 1 us per
    /// link, with `switch` in the switch table and `rest` after the workload.
    fn incast(switch: &str, rest: &str) -> String {
        let hosts = ["h0", "h1", "h2", "h3", "r"];
        let links: Vec<String> = hosts.iter().map(|h| format!(r#"  {{ a = "{h}", b = "s", rate = "100Gbps", delay = "1us" }},"#)).collect();
        let flows: Vec<String> = (0..4).map(|h| format!(r#"{{ src = {h}, dst = 4, size = "50KB", priority = 1 }}"#)).collect();
        format!(
            "[scenario]\nname = \"outputs\"\nmax_time = \"5ms\"\n[topology]\nkind = \"custom\"\nhosts = {hosts:?}\nswitches = [\"s\"]\nlinks = [\n{}\n]\n\
             [switch]\n{switch}\n[transport]\nkind = \"dctcp\"\n[[workload]]\nkind = \"flows\"\nflows = [ {} ]\n{rest}",
            links.join("\n"),
            flows.join(", ")
        )
    }

    /// The switch's port toward host `host`.
    fn port_to(t: &Topology, host: &str) -> u32 {
        let s = t.nodes.iter().find(|n| n.name == "s").unwrap();
        *s.ports.iter().find(|&&p| t.nodes[t.peer_node(p) as usize].name == host).unwrap()
    }

    /// What a run of `text` (adjusted by `adjust`) writes: its flows and ports columns and
    /// its summary keys, by part.
    fn written(text: &str, adjust: impl FnOnce(&mut SimConfig, &Topology)) -> BTreeMap<&'static str, BTreeSet<String>> {
        let s = Document::from_toml(text).and_then(|d| d.resolve(None)).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut sim = build_adjusted(&s, &RunOptions::default(), adjust).unwrap_or_else(|e| panic!("{e}\n{text}"));
        sim.run();
        let r = sim.results();
        let names = |t: &crate::metrics::Table| t.columns.iter().map(|c| c.0.clone()).collect::<BTreeSet<_>>();
        BTreeMap::from([("flows", names(&r.flows)), ("ports", names(&r.ports)), ("summary", r.summary.as_object().unwrap().keys().cloned().collect())])
    }

    /// Every column and summary key a run writes is described, and every description names
    /// something a run writes: a run of each mechanism (each AQM kind with outputs of its
    /// own), of the engine's optional outputs (closed-loop UDP, queue sampling, a goodput
    /// series, a capture cut short, link changes, trimming) and of none. What the plain run
    /// does not write says when it is written ("With PFC: ...").
    #[test]
    fn every_output_a_run_writes_is_described_and_every_description_is_written() {
        let stand_in = |c: &mut SimConfig, t: &Topology| {
            c.mechanisms.stand_in = Some(StandInParams { trim: Some((1, 64)), ..Default::default() });
            let p = port_to(t, "h0");
            c.link_changes = vec![LinkChange { at: SimTime::from_us(5), port: p, state: LinkState::Down }, LinkChange { at: SimTime::from_us(10), port: p, state: LinkState::Up }];
        };
        let udp_loop = "[[workload]]\nkind = \"closed_loop\"\ntransport = \"udp\"\npairs = [[0, 4]]\nmean_size = \"1000B\"\nstop = \"20us\"\n\
                        [transport.udp]\nnic_buffer = \"3KB\"\n";
        let metrics = "[metrics]\nqueue_sample = \"1us\"\nthroughput_bin = \"10us\"\ncapture = { ports = [\"s\"], frames = \"all\", max_frames = 1 }\n";
        // (the writer a run is for, its switch table, the rest of the scenario)
        let runs: [(&str, &str, &str); 17] = [
            ("engine", "", ""),
            ("engine", "", udp_loop),
            ("engine", "", metrics),
            ("pfc", "queues = 2\npfc = { xoff = \"20KB\" }", ""),
            ("ci", "queues = 2\nci = {}", ""),
            ("ecn", "aqm = { kind = \"step\", threshold = \"20KB\" }", ""),
            ("sfc", "sfc = {}", ""),
            ("aqm", "queues = 2\naqm = { kind = \"dualpi2\" }", ""),
            ("aqm", "queues = 2\naqm = { kind = \"dualq2015\" }", ""),
            ("aqm", "aqm = { kind = \"red\", min = \"10KB\", max = \"30KB\", ecn = true }", ""),
            ("qcn", "qcn = {}", ""),
            ("drc", "drc = {}", ""),
            ("fq_codel", "fq_codel = {}", ""),
            ("int", "int = {}", ""),
            ("architecture", "architecture = { kind = \"voq\" }", ""),
            ("load_balance", "load_balance = { kind = \"flowlet\" }", ""),
            ("trim", "queues = 2\nbuffer = { queue = \"30KB\" }\ntrim = {}", ""),
        ];
        let mut all: Vec<(String, BTreeMap<&str, BTreeSet<String>>)> =
            runs.iter().map(|(w, switch, rest)| (format!("{w} ({switch}{})", if rest.is_empty() { "" } else { " + more" }), written(&incast(switch, rest), |_, _| {}))).collect();
        all.push(("stand_in (trimming, link changes)".to_string(), written(&incast("queues = 2\nbuffer = { queue = \"30KB\" }", ""), stand_in)));

        let covered: BTreeSet<&str> = runs.iter().map(|r| r.0).chain(["stand_in"]).collect();
        for (w, _) in writers(false) {
            assert!(covered.contains(w), "no run configures {w}: add one to this test, so that its outputs are held to its descriptions");
        }
        let plain = &all[0].1;
        let mut missing = Vec::new();
        let mut unwritten = Vec::new();
        let mut unsaid = Vec::new();
        for (part, _, _) in PARTS {
            let described = described(part);
            for (run, w) in &all {
                missing.extend(w[part].iter().filter(|n| !described.contains_key(n.as_str())).map(|n| format!("{part} {n} (run {run})")));
            }
            for (name, (writer, meaning)) in &described {
                let runs_write = all.iter().any(|(_, w)| w[part].contains(*name));
                if !runs_write && !ADDED_BY_PYTHON.contains(name) {
                    unwritten.push(format!("{part} {name} ({writer})"));
                }
                let says_when = meaning.starts_with("With ") || meaning.starts_with("Only ") || meaning.contains(" only");
                if !plain[part].contains(*name) && !ADDED_BY_PYTHON.contains(name) && !says_when {
                    unsaid.push(format!("{part} {name} ({writer})"));
                }
            }
        }
        assert!(missing.is_empty(), "written without a description (describe each in its writer's OUTPUTS, then run `{REGENERATE}`): {missing:?}");
        assert!(unwritten.is_empty(), "described, but no run writes it (a stale description, or a run this test lacks): {unwritten:?}");
        assert!(unsaid.is_empty(), "written only in some runs, and its description does not say when (\"With ...\"): {unsaid:?}");
    }
}
