//! Congestion Isolation (P802.1Qcz) behaviour.

use super::tests::run;
use super::tests::HOL_FABRIC;
use crate::metrics::ColumnData;
use crate::scenario::{load, RunOptions};
use crate::Sim;

fn u32s(c: Option<&ColumnData>) -> Vec<u32> {
    match c.unwrap() {
        ColumnData::U32(v) => v.clone(),
        _ => unreachable!(),
    }
}

fn u8s(c: Option<&ColumnData>) -> Vec<u8> {
    match c.unwrap() {
        ColumnData::U8(v) => v.clone(),
        _ => unreachable!(),
    }
}

/// seed-003-like two-switch fabric: incast h0..h2 -> r5 (25G) and victim h4 -> r6 share s1 -> s2.
fn two_switch(switch: &str, transport: &str, victim_start: &str) -> String {
    format!(
        r#"
[scenario]
name = "ci"
max_time = "50ms"
{HOL_FABRIC}
[switch]
queues = 2
scheduler = "dwrr"
buffer = {{ model = "static", queue = "100MB" }}
{switch}
[transport]
{transport}
[[workload]]
kind = "flows"
priority = 1
flows = [
  {{ src = 0, dst = 5, size = "2MB", tag = "incast" }},
  {{ src = 1, dst = 5, size = "2MB", tag = "incast" }},
  {{ src = 2, dst = 5, size = "2MB", tag = "incast" }},
  {{ src = 4, dst = 6, size = "2MB", start = "{victim_start}", tag = "victim" }},
  {{ src = 3, dst = 5, size = "1KB", start = "20ms", tag = "late" }},
]
"#
    )
}

const UDP: &str = "kind = \"udp\"\nudp = { rate = \"20Gbps\" }";
// as in the seeds, CI's High (300 KB) sits below XOFF, so isolation comes before PFC
const PFC: &str = "pfc = { xoff = \"600KB\", xon = \"100KB\" }";

fn victim(sim: &mut Sim) -> (u64, u64, bool, crate::metrics::Results) {
    let r = sim.results();
    let src = u32s(r.flows.get("src"));
    let v = src.iter().position(|&s| s == 4).unwrap();
    let paused = u8s(r.flows.get("paused"))[v] == 1;
    (r.flows.u64("fct_ps")[v], r.flows.u64("ideal_fct_ps")[v], paused, r)
}

#[test]
fn isolation_protects_the_victim_from_pfc_head_of_line_blocking() {
    // Without CI (both queues hashed by destination) the victim shares a paused queue at s1
    // whenever its destination hashes with r5's; with one queue it always does.
    let mut base = run(&two_switch(&format!("{PFC}\nqueues = 1"), UDP, "20us").replace("queues = 2\nscheduler = \"dwrr\"\n", ""));
    let (fct_base, ideal, _, rb) = victim(&mut base);
    assert!(rb.summary["pfc_frames"].as_u64().unwrap() > 0);
    let mut ci = run(&two_switch(&format!("{PFC}\nci = {{ mode = \"isolate\" }}"), UDP, "20us"));
    let (fct_ci, _, paused, r) = victim(&mut ci);
    let slow_base = fct_base as f64 / ideal as f64;
    let slow_ci = fct_ci as f64 / ideal as f64;
    eprintln!("victim slowdown: PFC alone {slow_base:.2}, PFC + CI {slow_ci:.2}; isolations {} cips {}", r.summary["ci_isolations"], r.summary["cips_sent"]);
    assert_eq!(r.summary["packets_dropped"], 0);
    assert!(r.summary["ci_isolations"].as_u64().unwrap() >= 3, "the three incast flows are isolated");
    assert!(r.summary["cips_sent"].as_u64().unwrap() >= 3, "and signalled upstream");
    assert!(slow_base > 1.8, "baseline victim slowdown {slow_base}");
    assert!(slow_ci < 1.1, "CI victim slowdown {slow_ci}");
    assert!(!paused, "with CI the victim never waits in a paused queue");
}

#[test]
fn isolation_keeps_packet_order() {
    // DCTCP flows on a lossless fabric: any reordering by isolation would show up as
    // duplicate ACKs and spurious fast retransmits.
    let tcp = "kind = \"dctcp\"\ninit_cwnd = 50";
    let mut sim = run(&two_switch(&format!("{PFC}\nci = {{ mode = \"isolate\", low = \"5KB\", high = \"50KB\", pmax = 0.2 }}"), tcp, "20us"));
    let r = sim.results();
    assert!(r.summary["ci_isolations"].as_u64().unwrap() > 0);
    assert_eq!(r.summary["packets_dropped"], 0);
    let retx: u32 = u32s(r.flows.get("retx")).iter().sum();
    assert_eq!(retx, 0, "isolation reordered packets");
    assert_eq!(r.summary["end_reason"], "completed");
}

#[test]
fn flows_are_released_when_the_congested_queue_drains() {
    // entries made by CIMs follow the local rule under "flow_idle"
    let mut sim = run(&two_switch(&format!("{PFC}\nci = {{ mode = \"isolate\", release_after = \"20us\", cim_release = \"flow_idle\" }}"), UDP, "20us"));
    let r = sim.results();
    let iso: u64 = r.ports.u64("ci_isolations").iter().sum();
    let rel: u64 = r.ports.u64("ci_releases").iter().sum();
    let evi: u64 = r.ports.u64("ci_evictions").iter().sum();
    let cims: u64 = r.ports.u64("cips_received").iter().sum();
    assert!(iso > 0 && cims > 0);
    // the late flow at 20 ms keeps the run going long after the incast drained
    assert_eq!(rel + evi, iso, "every isolation ends in a release by the end");
}

/// (isolations, releases + evictions) at switch ports, and the run's end in ms.
fn released(ci: &str) -> (u64, u64, f64) {
    let mut sim = run(&two_switch(&format!("{PFC}\nci = {{ mode = \"isolate\", release_after = \"20us\"{ci} }}"), UDP, "20us"));
    let r = sim.results();
    let iso: u64 = r.ports.u64("ci_isolations").iter().sum();
    let gone: u64 = r.ports.u64("ci_releases").iter().sum::<u64>() + r.ports.u64("ci_evictions").iter().sum::<u64>();
    (iso, gone, sim.now().as_secs_f64() * 1e3)
}

#[test]
fn cim_entries_stay_max_flow_life_after_the_congesting_queue_calms() {
    // 802.1Qcz ci-max-flow-life: the entries s1 made on s2's CIMs outlive the incast by
    // max_flow_life of a non-congested congesting queue; s2's own entries go 20 us after
    // their flow's last packet
    let (iso, gone, end) = released("");
    assert!(end < 1000.0, "the run ends before the default 1 s has passed");
    assert!(gone < iso, "CIM-made entries still there at the end ({gone} of {iso} released)");
    let (iso2, gone2, _) = released(", max_flow_life = \"2ms\"");
    assert_eq!(iso2, iso, "release timing does not change what is isolated here");
    assert_eq!(gone2, iso2, "with max_flow_life 2 ms (the incast drains by about 8 ms, the run ends at 20 ms) every entry goes");
}

#[test]
fn at_most_cim_max_cims_per_congesting_flow() {
    // seed 003's small fabric, where flows keep arriving in the non-congested class after a
    // first CIM (upstream entries age out while their flow goes on)
    let base = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/dcnsim/scenarios/seed003_ci_2queue_small.toml")).unwrap();
    let run_with = |cap: &str| {
        let text = base.replace("arrivals_for = \"5ms\"", "arrivals_for = \"1ms\"").replace("pmax = 0.01 }\n", &format!("pmax = 0.01, cim_max = {cap} }}\n"));
        let (_, mut sim) = load(&text, false, Some("CI"), &RunOptions::default()).unwrap();
        sim.run();
        let r = sim.results();
        (r.ports.u64("ci_isolations").to_vec(), r.ports.u64("cips_sent").to_vec())
    };
    let (iso0, unlimited) = run_with("0");
    let (iso1, one) = run_with("1");
    let (s0, s1) = (unlimited.iter().sum::<u64>(), one.iter().sum::<u64>());
    assert!(s0 > iso0.iter().sum::<u64>(), "without a cap some flows get several CIMs ({s0} for {} entries)", iso0.iter().sum::<u64>());
    assert!(s1 < s0, "the cap bites: {s1} vs {s0}");
    for p in 0..iso1.len() {
        assert!(one[p] <= iso1[p], "port {p}: {} CIMs for {} entries", one[p], iso1[p]);
    }
}

#[test]
fn hash_baseline_spreads_destinations_over_both_queues() {
    let mut sim = run(&two_switch(&format!("{PFC}\nci = {{ mode = \"hash_dst\" }}"), UDP, "20us"));
    let r = sim.results();
    assert_eq!(r.summary["ci_isolations"], 0);
    // s1 -> s2 is port 5 of s1; r5 and r6 hash to the queues deterministically
    let q = u8s(r.ports.get("queue"));
    let tx = r.ports.u64("tx_bytes");
    let used: std::collections::BTreeSet<u8> = (0..tx.len()).filter(|&i| tx[i] > 0 && r.ports.u64("rate_bps")[i] > 0).map(|i| q[i]).collect();
    assert!(used.contains(&0) && used.contains(&1), "both queues carry traffic: {used:?}");
}

#[test]
fn local_only_isolation_sends_no_cip_and_nics_honour_cips() {
    let mut local = run(&two_switch(&format!("{PFC}\nci = {{ mode = \"isolate\", signal = false }}"), UDP, "20us"));
    let r = local.results();
    assert!(r.summary["ci_isolations"].as_u64().unwrap() > 0);
    assert_eq!(r.summary["cips_sent"], 0);
    // single switch incast: the ToR's CIPs go to the senders' NICs
    let text = two_switch(&format!("{PFC}\nci = {{ mode = \"isolate\", cip_threshold = \"20KB\" }}"), UDP, "20us");
    let mut sim = run(&text);
    let r = sim.results();
    let host_rx: u64 = (0..r.ports.rows()).filter(|&i| matches!(r.ports.get("is_host"), Some(ColumnData::U8(h)) if h[i] == 1)).map(|i| r.ports.u64("cips_received")[i]).sum();
    let switch_rx: u64 = r.ports.u64("cips_received").iter().sum::<u64>() - host_rx;
    assert!(switch_rx > 0, "s1 received CIPs from s2");
    assert!(host_rx > 0, "s1 passed isolation on to the senders' NICs");
}

#[test]
fn queue_based_pfc_pauses_the_congested_class_upstream() {
    // Seeds 000/003 queue-based PFC: the congested queue s2 -> r5 passes XOFF; its PAUSE goes
    // to s1 in the congested class (s1 isolates the incast by CIP), never in class 1, so the
    // victim h4 -> r6 in s1's non-congested queue never waits.
    let pfc = "pfc = { accounting = \"egress_queue\", xoff = \"600KB\", xon = \"100KB\" }";
    let mut sim = run(&two_switch(&format!("{pfc}\nci = {{ mode = \"isolate\" }}"), UDP, "20us"));
    let (fct, ideal, paused, r) = victim(&mut sim);
    let q = u8s(r.ports.get("queue"));
    let tx = r.ports.u64("pfc_tx_frames");
    let by_class = |c: u8| -> u64 { (0..q.len()).filter(|&i| q[i] == c).map(|i| tx[i]).sum() };
    assert!(by_class(0) > 0, "the congested queue paused its feeders");
    assert_eq!(by_class(1), 0, "no PAUSE for the non-congested class");
    assert_eq!(r.summary["packets_dropped"], 0);
    assert!(!paused && (fct as f64) < 1.1 * ideal as f64, "victim fct {fct} ideal {ideal}");
    // one CIP per incast flow and hop (s2 -> s1, s1 -> NIC), repeated only if the flow still
    // arrives in the non-congested class a link round trip later
    let cips = r.summary["cips_sent"].as_u64().unwrap();
    assert!((6..=12).contains(&cips), "{cips} CIPs for 3 flows over 2 hops");
}

#[test]
fn isolated_packets_are_marked_by_the_congested_queue_not_all() {
    // Two DCTCP flows into r5 with step marking at 30 KB: under "queue_ecn" an isolated flow's
    // packets are marked only while the congested queue is above K, so far fewer marks than
    // "every_isolated", which marks each of them; and DCTCP still gets its feedback.
    let marks = |mark: &str| {
        let sw = format!("{PFC}\naqm = {{ kind = \"step\", threshold = \"30KB\" }}\nci = {{ mode = \"isolate\", low = \"5KB\", high = \"20KB\", mark = \"{mark}\" }}");
        let mut sim = run(&two_switch(&sw, "kind = \"dctcp\"", "20us"));
        let r = sim.results();
        assert_eq!(r.summary["end_reason"], "completed");
        // every mark is on the congested queue (0): the non-congested queue is not marked,
        // isolation takes the place of its ECN ramp
        let (q, marks) = (u8s(r.ports.get("queue")), r.ports.u64("ecn_marks"));
        let on = |k: u8| q.iter().zip(marks).filter(|(&qq, _)| qq == k).map(|(_, &m)| m).sum::<u64>();
        assert_eq!(on(1), 0, "{mark}: marks on the non-congested queue");
        assert_eq!(on(0), r.summary["ecn_marks"].as_u64().unwrap(), "{mark}");
        (r.summary["ecn_marks"].as_u64().unwrap(), r.summary["ci_isolations"].as_u64().unwrap())
    };
    let (queue, iso) = marks("queue_ecn");
    let (every, _) = marks("every_isolated");
    assert!(iso >= 3 && queue >= iso, "queue_ecn: {queue} marks, {iso} isolations");
    assert!(every > 3 * queue, "every_isolated {every} vs queue_ecn {queue}");
}

#[test]
fn persistent_incast_reuses_its_connection() {
    let text = |conn: &str| {
        format!(
            r#"
[scenario]
name = "conn"
arrivals_for = "300us"
max_time = "5ms"
{HOL_FABRIC}
[switch]
aqm = {{ kind = "step", threshold = "20KB" }}
[transport]
kind = "dcqcn"
dcqcn = {{ preset = "seed004" }}
[[workload]]
kind = "incast"
fan_in = 3
size = "20KB"
period = "persistent"
receiver = 5
{conn}
"#
        )
    };
    // Three 100G senders into the 25G r5: DCQCN cuts their rates. A message on a reused
    // connection starts at the rate the previous one left (its first two packets leave the
    // NIC further apart than back to back); a new connection starts at line rate.
    let line_gap = crate::sim::ser_time(1500, 100_000_000_000);
    for (conn, same) in [("", true), ("connection = \"reuse\"", true), ("connection = \"new\"", false)] {
        let mut sim = super::tests::build(&text(conn));
        sim.enable_trace();
        sim.keep_flow_records();
        sim.run();
        let mut first_two: std::collections::BTreeMap<u32, Vec<crate::sim::SimTime>> = Default::default();
        for r in sim.trace().iter().filter(|r| r.kind == crate::net::PktKind::Data && sim.topology().ports[r.port as usize].node < 5) {
            let v = first_two.entry(r.flow).or_default();
            if v.len() < 2 {
                v.push(r.time);
            }
        }
        let mut first_of_sender = std::collections::BTreeMap::<u32, u32>::new();
        for f in sim.flow_records() {
            first_of_sender.entry(f.src).or_insert(f.id);
        }
        let firsts: Vec<u32> = first_of_sender.into_values().collect();
        let later: Vec<&Vec<crate::sim::SimTime>> = first_two.iter().filter(|&(f, t)| !firsts.contains(f) && t.len() == 2).map(|(_, t)| t).collect();
        let paced = later.iter().filter(|t| t[1] - t[0] > line_gap).count();
        eprintln!("{conn:?}: {paced} of {} later messages started below line rate", later.len());
        assert!(later.len() >= 9, "{conn:?}: {} later messages", later.len());
        assert_eq!(paced > 0, same, "{conn:?}: {paced} later messages started below line rate");
        let mut by_src: std::collections::BTreeMap<u32, std::collections::BTreeSet<u32>> = Default::default();
        let mut n = std::collections::BTreeMap::<u32, u32>::new();
        for f in sim.flow_records() {
            by_src.entry(f.src).or_default().insert(f.hash);
            *n.entry(f.src).or_default() += 1;
        }
        assert_eq!(by_src.len(), 3);
        for (src, hashes) in &by_src {
            assert!(n[src] > 3, "sender {src} sent {} flows", n[src]);
            assert_eq!(hashes.len() == 1, same, "{conn:?}: sender {src} used {} paths/identities", hashes.len());
        }
    }
}

#[test]
fn release_comes_exactly_release_after_the_last_packet_left_the_congested_queue() {
    // s2's port to r5 isolates the incast flows; each is released exactly `release_after`
    // after its last packet left the congested queue (a packet's dequeue is its trace time),
    // not a picosecond earlier, however its release timer was re-armed on the way.
    let text = two_switch(&format!("{PFC}\nci = {{ mode = \"isolate\", release_after = \"20us\" }}"), UDP, "20us");
    let release = crate::sim::SimTime::from_us(20);
    let mut traced = super::tests::build(&text);
    traced.enable_trace();
    traced.keep_flow_records();
    traced.run();
    let t = traced.topology();
    let port = (0..t.ports.len() as u32).find(|&p| t.nodes[t.ports[p as usize].node as usize].name == "s2" && t.nodes[t.peer_node(p) as usize].name == "r5").unwrap();
    let mut last: std::collections::BTreeMap<u32, crate::sim::SimTime> = Default::default();
    for r in traced.trace().iter().filter(|r| r.port == port && r.kind == crate::net::PktKind::Data) {
        last.insert(r.flow, r.time);
    }
    let mut checked = 0;
    for (&flow, &t_last) in &last {
        let key = traced.flow_records()[flow as usize].hash;
        let mut sim = super::tests::build(&text);
        sim.run_until(t_last + release - crate::sim::SimTime(1));
        let Some(e) = sim.mechanisms().ci.as_ref().unwrap().table(port).unwrap().entries.get(&key) else {
            continue;
        };
        assert_eq!(e.c_pkts, 0, "flow {flow}: its last packet has left");
        sim.run_until(t_last + release);
        assert!(!sim.mechanisms().ci.as_ref().unwrap().table(port).unwrap().entries.contains_key(&key), "flow {flow} still isolated at last dequeue + release_after");
        checked += 1;
    }
    assert!(checked >= 3, "the three incast flows were isolated at s2 and released: {checked}");
}

#[test]
fn nic_isolation_of_a_reused_connection_ages_out_with_the_connection() {
    // Three persistent senders into the 25G r5, on one connection each: s2 isolates them and
    // its CIMs (at most cim_max per flow) reach s1 and the NICs, which move the connection to
    // the congested class. CIMs stop once each entry has had its cap, so the NICs' isolation
    // must age out max_flow_life after the last one, for the message then on the connection,
    // not only for the message the CIMs named.
    let text = format!(
        r#"
[scenario]
name = "nic-ageing"
arrivals_for = "6ms"
max_time = "6ms"
{HOL_FABRIC}
[switch]
queues = 2
scheduler = "dwrr"
buffer = {{ model = "static", queue = "100MB" }}
{PFC}
ci = {{ mode = "isolate", cip_threshold = "20KB", max_flow_life = "1ms" }}
[transport]
kind = "dcqcn"
dcqcn = {{ preset = "seed004" }}
[[workload]]
kind = "incast"
fan_in = 3
size = "50KB"
period = "persistent"
receiver = 5
priority = 1
"#
    );
    let mut sim = super::tests::build(&text);
    sim.keep_flow_records();
    sim.run();
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let r = sim.results();
    let host_cims: u64 = (0..r.ports.rows()).filter(|&i| matches!(r.ports.get("is_host"), Some(ColumnData::U8(h)) if h[i] == 1)).map(|i| r.ports.u64("cips_received")[i]).sum();
    assert!(host_cims > 0, "the senders' NICs received CIMs");
    let mut last = std::collections::BTreeMap::<u32, &crate::host::Flow>::new();
    for f in sim.flow_records() {
        last.insert(f.src, f);
    }
    assert_eq!(last.len(), 3);
    for (src, f) in last {
        assert!(f.id > 3, "sender {src}: its connection carried several messages");
        assert_eq!(f.nic_class, None, "sender {src}: message {} (started {}) is still isolated at the end", f.id, f.start);
    }
}
