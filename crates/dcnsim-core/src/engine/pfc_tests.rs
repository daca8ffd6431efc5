//! PFC (802.1Qbb) and 802.3x behaviour against numbers derived by hand.

use super::tests::build;
use super::tests::HOL_FABRIC;
use crate::sim::EndReason;
use crate::net::PktKind;
use crate::sim::{ser_time, SimTime};
use crate::switch::pfc::PauseFrame;
use crate::switch::pfc::PfcParams;
use crate::Sim;

impl super::Sim {
    /// Send a PFC frame for `class` with `quanta` out of `port` now, as a switch would.
    fn inject_pause(&mut self, port: crate::net::PortId, class: usize, quanta: u16) {
        use crate::switch::pipeline::Ctx;
        if let Some(p) = &mut self.mechs.pfc {
            p.send(port, class, quanta, &mut super::ctx!(self));
        }
        self.apply_effects();
    }
}

/// A star: hosts h0..h{n-1} on one switch `s`, every link `rate` with `delay`.
fn star(n: usize, rate: &str, delay: &str, slow_last: Option<&str>, switch: &str, flows: &str, max_time: &str) -> String {
    let hosts: Vec<String> = (0..n).map(|i| format!("\"h{i}\"")).collect();
    let links: Vec<String> = (0..n)
        .map(|i| {
            let r = if i == n - 1 { slow_last.unwrap_or(rate) } else { rate };
            format!("{{ a = \"h{i}\", b = \"s\", rate = \"{r}\", delay = \"{delay}\" }}")
        })
        .collect();
    format!(
        r#"
[scenario]
name = "pfc"
max_time = "{max_time}"
[topology]
kind = "custom"
hosts = [{}]
switches = ["s"]
links = [{}]
[switch]
{switch}
[transport]
kind = "udp"
[[workload]]
kind = "flows"
flows = [ {flows} ]
"#,
        hosts.join(", "),
        links.join(", ")
    )
}

fn incast_flows(n: usize, size: &str) -> String {
    (0..n).map(|i| format!("{{ src = {i}, dst = {n}, size = \"{size}\" }}")).collect::<Vec<_>>().join(", ")
}

/// Port of switch `s` (node id of the only switch) toward host `h`.
fn switch_port_to(sim: &Sim, h: u32) -> u32 {
    let t = sim.topology();
    let hp = t.host_port(h);
    t.ports[hp as usize].peer
}

#[test]
fn incast_is_lossless_with_pfc_and_lossy_without() {
    // 20:1 incast of 1 MB per sender at 100G line rate into one 100G port.
    let flows = incast_flows(20, "1MB");
    let with = star(21, "100Gbps", "1us", None, "buffer = { model = \"static\", queue = \"1MB\" }\npfc = { xoff = \"750KB\", xon = \"4KB\" }", &flows, "20ms");
    let mut sim = build(&with);
    sim.run();
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let r = sim.results();
    assert_eq!(r.summary["end_reason"], "completed");
    assert_eq!(r.summary["packets_dropped"], 0);
    assert!(r.summary["pfc_frames"].as_u64().unwrap() > 0);
    // bottleneck busy while the incast lasts: 20 MB through 100G takes 1.6 ms of wire time
    let start = *r.flows.u64("start_ps").iter().min().unwrap();
    let end = *r.flows.u64("end_ps").iter().max().unwrap();
    let busy = ser_time(20_000_000, 100_000_000_000).0 as f64 / (end - start) as f64;
    assert!(busy >= 0.95, "bottleneck busy {busy}");

    let without = star(21, "100Gbps", "1us", None, "buffer = { model = \"static\", queue = \"200KB\" }", &flows, "20ms");
    let mut sim = build(&without);
    sim.run();
    let r = sim.results();
    let bf: u64 = r.ports.u64("drops_buffer_full").iter().sum();
    assert!(bf > 0, "no BufferFull drops without PFC");
    assert_eq!(r.ports.u64("drops").iter().sum::<u64>(), bf, "every drop is BufferFull");
    assert!(r.ports.get("pfc_tx_frames").is_none() && r.summary.get("pfc_frames").is_none(), "no PFC columns without PFC");
}

#[test]
fn derived_headroom_absorbs_a_long_cable_and_too_little_drops() {
    // 100G sender on a 10 us (2 km) cable into a 25G receiver: the switch must pause the
    // sender; 2 * 10 us of line rate (250 KB) is in flight when it does.
    let flows = "{ src = 0, dst = 1, size = \"20MB\" }";
    let cfg = |hdrm: &str| format!("buffer = {{ model = \"static\", queue = \"1MB\" }}\npfc = {{ xoff = \"100KB\", xon = \"50KB\" {hdrm} }}");
    let mut sim = build(&star(2, "100Gbps", "10us", Some("25Gbps"), &cfg(""), flows, "50ms"));
    let need = PfcParams::derived_headroom(100_000_000_000, SimTime::from_us(20), 1500);
    assert_eq!(need, 250_000 + 4500 + 64);
    sim.run();
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let r = sim.results();
    assert_eq!(r.summary["end_reason"], "completed");
    assert_eq!(r.summary["packets_dropped"], 0, "derived headroom must be enough");
    assert!(r.summary["pfc_frames"].as_u64().unwrap() > 0);

    let mut sim = build(&star(2, "100Gbps", "10us", Some("25Gbps"), &cfg(", headroom = \"50KB\""), flows, "50ms"));
    sim.run();
    let r = sim.results();
    let hd: u64 = r.ports.u64("drops_headroom").iter().sum();
    assert!(hd > 0, "a 50 KB headroom on a 250 KB round trip must overflow");
    assert_eq!(r.ports.u64("drops").iter().sum::<u64>(), hd, "all drops are attributed to headroom");
}

#[test]
fn pause_stops_the_upstream_for_quanta_times_512_bit_times() {
    // h0 sends at line rate through s to h1; at t0 the switch sends h0 one PAUSE of q quanta.
    let flows = "{ src = 0, dst = 1, size = \"10MB\" }";
    let mut sim = build(&star(2, "100Gbps", "500ns", None, "buffer = { queue = \"2MB\" }\npfc = { xoff = \"1MB\", xon = \"4KB\" }", flows, "5ms"));
    sim.enable_trace();
    let t0 = SimTime::from_us(10);
    sim.run_until(t0);
    let s_to_h0 = switch_port_to(&sim, 0);
    let h0_port = sim.topology().host_port(0);
    let q = 1000u16;
    sim.inject_pause(s_to_h0, 0, q);
    sim.run_until(SimTime::from_us(40));
    let tr = sim.trace();
    // the PAUSE leaves at t0 (the reverse direction is idle) and arrives after 64 B + 500 ns
    let pause = tr.iter().find(|r| matches!(r.kind, PktKind::Ctrl(crate::net::Frame::Pfc(PauseFrame::Pfc { .. })))).unwrap();
    assert_eq!(pause.time, t0);
    let arrives = t0 + ser_time(64, 100_000_000_000) + SimTime::from_ns(500);
    let h0: Vec<_> = tr.iter().filter(|r| r.port == h0_port && r.kind == PktKind::Data).collect();
    let before = h0.iter().filter(|r| r.time < arrives).last().unwrap();
    let after = h0.iter().find(|r| r.time >= arrives).unwrap();
    // the frame on the wire when the PAUSE arrives completes; the next one starts exactly
    // q * 512 bit times after the PAUSE arrived
    let pause_time = PfcParams::pause_time(q, 100_000_000_000);
    assert_eq!(pause_time, SimTime(5_120_000));
    assert!(before.time + ser_time(1500, 100_000_000_000) > arrives, "a frame was on the wire when the PAUSE arrived");
    let next = h0.iter().position(|r| std::ptr::eq(*r, *before)).unwrap() + 1;
    assert!(std::ptr::eq(h0[next], *after), "nothing starts between the frame in progress and the resumption");
    assert_eq!(after.time, arrives + pause_time, "resumed at {:?}, paused at {:?}", after.time, arrives);
    assert_eq!(sim.results().ports.u64("xoff_time_ps")[h0_port as usize], pause_time.0);
}

#[test]
fn xon_resumes_immediately() {
    let flows = "{ src = 0, dst = 1, size = \"10MB\" }";
    let mut sim = build(&star(2, "100Gbps", "500ns", None, "buffer = { queue = \"2MB\" }\npfc = { xoff = \"1MB\", xon = \"4KB\" }", flows, "5ms"));
    sim.enable_trace();
    let s_to_h0 = switch_port_to(&sim, 0);
    sim.run_until(SimTime::from_us(10));
    sim.inject_pause(s_to_h0, 0, 65535);
    sim.run_until(SimTime::from_us(20));
    sim.inject_pause(s_to_h0, 0, 0);
    sim.run_until(SimTime::from_us(30));
    let h0_port = sim.topology().host_port(0);
    let xon_arrives = SimTime::from_us(20) + ser_time(64, 100_000_000_000) + SimTime::from_ns(500);
    let after = sim.trace().iter().find(|r| r.port == h0_port && r.time >= xon_arrives).unwrap().time;
    assert_eq!(after, xon_arrives);
}

#[test]
fn head_of_line_blocking_slows_a_victim() {
    // Two switches: h0..h2 (incast senders, 25G each) and h4 (victim sender, 20G) on s1;
    // s1 -> s2 at 100G carries 95G, so without PFC nothing queues there;
    // on s2, r5 (incast receiver, 25G) and r6 (victim receiver, 100G). The incast congests
    // s2 -> r5, s2 pauses s1's port toward s2, which also holds the victim's packets.
    let text = |pfc: &str| {
        format!(
            r#"
[scenario]
name = "hol"
max_time = "50ms"
{HOL_FABRIC}
[switch]
buffer = {{ model = "static", queue = "100MB" }}
{pfc}
[transport]
kind = "udp"
udp = {{ rate = "20Gbps" }}
[[workload]]
kind = "flows"
flows = [
  {{ src = 0, dst = 5, size = "2MB", tag = "incast" }},
  {{ src = 1, dst = 5, size = "2MB", tag = "incast" }},
  {{ src = 2, dst = 5, size = "2MB", tag = "incast" }},
  {{ src = 3, dst = 5, size = "1KB", start = "10ms", tag = "idle" }},
  {{ src = 4, dst = 6, size = "2MB", start = "20us", tag = "victim" }},
]
"#
        )
    };
    let victim_fct = |pfc: &str| {
        let mut sim = build(&text(pfc));
        sim.run();
        let r = sim.results();
        assert_eq!(r.summary["packets_dropped"], 0);
        // flows are numbered in start order: find the victim (source h4)
        let v = match r.flows.get("src").unwrap() {
            crate::metrics::ColumnData::U32(s) => s.iter().position(|&x| x == 4).unwrap(),
            _ => unreachable!(),
        };
        // the column is PFC's: absent without PFC
        let paused = match r.flows.get("paused") {
            Some(crate::metrics::ColumnData::U8(p)) => p[v],
            None => 0,
            _ => unreachable!(),
        };
        (r.flows.u64("fct_ps")[v], r.flows.u64("ideal_fct_ps")[v], paused)
    };
    let (lossy, ideal, p0) = victim_fct("");
    let (lossless, _, p1) = victim_fct("pfc = { xoff = \"200KB\", xon = \"100KB\" }");
    // Without PFC the victim is paced by its own 20G source: FCT = ideal.
    assert!((lossy as f64) < ideal as f64 * 1.02, "lossy victim fct {lossy} ideal {ideal}");
    assert_eq!(p0, 0);
    // With PFC the s1 -> s2 port is paused for the incast's sake. s1 then drains in FIFO
    // order at the rate r5 empties s2, so the victim gets about its share of arrivals
    // (20 of 80 Gbps) of the 25G + v that passes: v = (25 + v)/4, v = 8.3G, a 2.4x slowdown
    // in the fluid limit (measured: 2.03x, pauses come in bursts).
    let factor = lossless as f64 / lossy as f64;
    assert!(factor > 1.8, "HOL slowdown factor {factor}");
    assert_eq!(p1, 1, "the victim is flagged as having crossed a paused port");
}

/// A ring s0 - s1 - s2 - s0 with a host on each. Static routes send traffic for h0 around
/// the ring forever from s1: s1 -> s2 -> s0 -> s1 ... (s0 also forwards to s1).
const LOOP: &str = r#"
[scenario]
name = "loop"
max_time = "100ms"
[topology]
kind = "custom"
hosts = ["h0", "h1", "h2"]
switches = ["s0", "s1", "s2"]
links = [
  { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h1", b = "s1", rate = "100Gbps", delay = "1us" },
  { a = "h2", b = "s2", rate = "100Gbps", delay = "1us" },
  { a = "s0", b = "s1", rate = "100Gbps", delay = "1us" },
  { a = "s1", b = "s2", rate = "100Gbps", delay = "1us" },
  { a = "s2", b = "s0", rate = "100Gbps", delay = "1us" },
]
routes = [
  { switch = "s0", dst = "h0", via = "s1" },
  { switch = "s1", dst = "h0", via = "s2" },
  { switch = "s2", dst = "h0", via = "s0" },
]
[switch]
buffer = { model = "static", queue = "1MB" }
pfc = { xoff = "100KB", xon = "10KB", deadlock_after = "1ms" }
[transport]
kind = "udp"
[[workload]]
kind = "flows"
flows = [ { src = 1, dst = 0, size = "50MB" }, { src = 2, dst = 0, size = "50MB" } ]
"#;

#[test]
fn routing_loop_deadlock_is_detected_and_reported() {
    let text = LOOP;
    // the same loop in class 1 of two (class 0 idle), and in class 0 of two with class 1
    // carrying a flow that the loop does not touch (h2 -> h1)
    let two = |prio: u8, other: &str| {
        text.replace("buffer = {", "queues = 2\nbuffer = {")
            .replace("size = \"50MB\" }, { src = 2", &format!("size = \"50MB\", priority = {prio} }}, {{ src = 2"))
            .replace("dst = 0, size = \"50MB\" } ]", &format!("dst = 0, size = \"50MB\", priority = {prio} }}{other} ]"))
    };
    for (text, class) in [(text.to_string(), 0), (two(1, ""), 1), (two(0, ", { src = 2, dst = 1, size = \"1MB\", priority = 1 }"), 0)] {
        let mut sim = build(&text);
        sim.run();
        assert_eq!(sim.end_reason(), Some(EndReason::Deadlock), "{text}");
        // the loop fills within a few hundred microseconds; then at most 1.5 x deadlock_after
        assert!(sim.now() < SimTime::from_ms(3), "detected at {}", sim.now());
        let cycle = sim.deadlock().to_vec();
        assert!(cycle.len() >= 3, "{cycle:?}");
        for s in ["s0", "s1", "s2"] {
            assert!(cycle.iter().any(|c| c.starts_with(&format!("{s}:"))), "{s} not in {cycle:?}");
        }
        assert!(cycle.iter().all(|c| c.ends_with(&format!(":{class}"))), "class {class}: {cycle:?}");
        let r = sim.results();
        assert_eq!(r.summary["end_reason"], "deadlock");
        assert!(r.summary["flows_unfinished"].as_u64().unwrap() > 0);
        // split over threads, each switch apart from the others at 3: the cycle crosses
        // every partition, found at the same grid point and reported alike
        let parts = super::parallel::split_tests::assert_identical("loop", &text);
        assert_eq!(parts, [2, 3], "the ring is split");
    }
}

/// The routing loop of `routing_loop_deadlock_is_detected_and_reported` on input-buffered
/// switches: the packets a pause protects wait in the inputs (FIFOs or VOQs), not in an
/// egress queue, and the check still finds the cycle (PFC's ingress counters keep what
/// each input holds for which egress queue).
#[test]
fn a_deadlock_among_input_queues_is_detected() {
    for kind in ["input_queued", "voq", "cioq"] {
        let text = LOOP.replace("[transport]", &format!("architecture = {{ kind = \"{kind}\" }}\n[transport]"));
        let mut sim = build(&text);
        sim.run();
        assert_eq!(sim.end_reason(), Some(EndReason::Deadlock), "{kind}");
        assert!(sim.now() < SimTime::from_ms(3), "{kind}: detected at {}", sim.now());
        let cycle = sim.deadlock().to_vec();
        for s in ["s0", "s1", "s2"] {
            assert!(cycle.iter().any(|c| c.starts_with(&format!("{s}:"))), "{kind}: {s} not in {cycle:?}");
        }
        let r = sim.results();
        assert!(r.summary["crossbar_transfers"].as_u64().unwrap() > 0);
        let parts = super::parallel::split_tests::assert_identical("loop", &text);
        assert_eq!(parts, [2, 3], "the ring is split");
    }
}

#[test]
fn link_pause_stops_every_class() {
    // 802.3x: with two classes, a link-level PAUSE stops both.
    let flows = "{ src = 0, dst = 1, size = \"5MB\", priority = 0 }, { src = 0, dst = 1, size = \"5MB\", priority = 1 }";
    let mut sim = build(&star(2, "100Gbps", "500ns", None, "queues = 2\nbuffer = { queue = \"2MB\" }\npfc = { mode = \"link\", xoff = \"1MB\", xon = \"4KB\" }", flows, "5ms"));
    sim.enable_trace();
    let s_to_h0 = switch_port_to(&sim, 0);
    let h0_port = sim.topology().host_port(0);
    sim.run_until(SimTime::from_us(10));
    sim.inject_pause(s_to_h0, 0, 1000);
    let arrives = SimTime::from_us(10) + ser_time(64, 100_000_000_000) + SimTime::from_ns(500);
    let pause = PfcParams::pause_time(1000, 100_000_000_000);
    sim.run_until(arrives + SimTime(pause.0 / 2));
    assert!(sim.is_paused(h0_port, 0) && sim.is_paused(h0_port, 1), "both classes paused mid-pause");
    sim.run_until(SimTime::from_us(20));
    assert!(!sim.is_paused(h0_port, 0) && !sim.is_paused(h0_port, 1), "the pause has expired");
    let gap_start = arrives + ser_time(1500, 100_000_000_000);
    let resumed = arrives + PfcParams::pause_time(1000, 100_000_000_000);
    let during = sim.trace().iter().filter(|r| r.port == h0_port && r.time > gap_start && r.time < resumed).count();
    assert_eq!(during, 0, "no class may transmit during a link-level pause");
}

#[test]
fn queue_based_pfc_keeps_each_queue_within_its_size() {
    // Seeds 000/003 reading: 1 MB queues, XOFF 750 KB / XON 4 KB on the egress queue depth.
    // The 20:1 incast's queue stays under 1 MB without loss; with per-ingress accounting the
    // same thresholds let twenty ingress ports pile up far more in one egress queue.
    let flows = incast_flows(20, "1MB");
    let run = |pfc: &str| {
        // seed cables (200 ns): the 250 KB above XOFF holds what 20 senders have in flight
        let mut sim = build(&star(21, "100Gbps", "200ns", None, &format!("buffer = {{ model = \"static\", queue = \"1MB\" }}\n{pfc}"), &flows, "20ms"));
        sim.run();
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
        let r = sim.results();
        assert_eq!(r.summary["end_reason"], "completed");
        assert_eq!(r.summary["packets_dropped"], 0);
        assert!(r.summary["pfc_frames"].as_u64().unwrap() > 0);
        *r.ports.u64("max_depth_bytes").iter().max().unwrap()
    };
    let queue_max = run("pfc = { accounting = \"egress_queue\", xoff = \"750KB\", xon = \"4KB\" }");
    let ingress_max = run("pfc = { xoff = \"750KB\", xon = \"4KB\" }");
    assert!(queue_max <= 1_000_000, "queue-based PFC: max depth {queue_max}");
    assert!(queue_max > 750_000, "it does reach XOFF: {queue_max}");
    assert!(ingress_max > 1_000_000, "ingress accounting lets the queue exceed its size: {ingress_max}");
}

/// Dynamic XOFF (alpha x free shared buffer) keeps an incast lossless: headroom is freed
/// first on departure and XON waits for it to empty, so what arrives after an XON finds an
/// empty headroom. Before the fix: 188 (8:1) and 7,141 (20:1) headroom drops, no flow done.
#[test]
fn dynamic_xoff_incast_is_lossless() {
    for (n, pool) in [(8usize, "8MB"), (20, "2MB")] {
        let cfg = format!("buffer = {{ model = \"shared\", pool = \"{pool}\", guaranteed = \"10KB\", alpha = 1.0 }}\npfc = {{ alpha = 0.5 }}");
        let mut sim = build(&star(n + 1, "100Gbps", "1us", None, &cfg, &incast_flows(n, "1MB"), "50ms"));
        sim.run();
        assert!(sim.violations().is_empty(), "{n}:1 {:?}", sim.violations());
        let r = sim.results();
        assert_eq!(r.summary["end_reason"], "completed", "{n}:1");
        assert_eq!(r.summary["packets_dropped"], 0, "{n}:1");
        assert!(r.summary["pfc_frames"].as_u64().unwrap() > 0, "{n}:1 the pool is too small to hold the incast without pausing");
        // n MB through the 100G port, which PFC keeps busy
        let end = *r.flows.u64("end_ps").iter().max().unwrap();
        let wire = ser_time(n as u64 * 1_000_000, 100_000_000_000).0;
        assert!((end as f64) < wire as f64 * 1.05, "{n}:1 done at {end} ps, n MB take {wire} ps");
        // the switch held at most its memory: the pool plus the headroom beside it
        let memory = sim.switches[0].buffer.memory();
        let max: u64 = *r.ports.u64("max_depth_bytes").iter().max().unwrap();
        assert!(max <= memory, "{n}:1 queue {max} B > memory {memory} B");
    }
}

/// A static buffer's memory is queue x queues x ports: an XOFF whose headroom does not fit
/// in a queue's share is refused, and a lossless incast stays within the memory.
#[test]
fn lossless_traffic_stays_within_switch_memory() {
    let flows = incast_flows(20, "5MB");
    let e = crate::scenario::load(
        &star(21, "100Gbps", "1us", None, "buffer = { model = \"static\", queue = \"1MB\" }\npfc = { xoff = \"50MB\" }", &flows, "20ms"),
        false,
        None,
        &Default::default(),
    )
    .err()
    .expect("refused");
    assert_eq!(e.key, "switch.pfc.xoff", "{e}");
    assert!(e.message.contains("switch.buffer.queue = 1000000 B"), "{e}");

    let mut sim = build(&star(21, "100Gbps", "1us", None, "buffer = { model = \"static\", queue = \"1MB\" }\npfc = { xoff = \"500KB\" }", &flows, "20ms"));
    sim.run();
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let r = sim.results();
    assert_eq!(r.summary["end_reason"], "completed");
    assert_eq!(r.summary["packets_dropped"], 0);
    let memory = sim.switches[0].buffer.memory();
    assert_eq!(memory, 21 * 1_000_000);
    let max: u64 = *r.ports.u64("max_depth_bytes").iter().max().unwrap();
    // 20 ingress counters of at most XOFF + headroom each feed the one queue
    let h = PfcParams::derived_headroom(100_000_000_000, SimTime::from_us(2), 1500);
    assert!(max > 1_000_000 && max <= 20 * (500_000 + h), "max depth {max}");
}

/// `--check-invariants` flags a switch that holds more than its memory (here a memory made
/// smaller after the build, as a model error would leave it).
#[test]
fn check_invariants_flags_a_switch_beyond_its_memory() {
    let flows = incast_flows(20, "1MB");
    let mut sim = build(&star(21, "100Gbps", "1us", None, "buffer = { model = \"static\", queue = \"1MB\" }\npfc = { xoff = \"500KB\" }", &flows, "20ms"));
    sim.switches[0].buffer.set_memory(2_000_000);
    sim.run();
    let v = sim.violations();
    assert!(v.iter().any(|m| m.contains("> memory 2000000 B")), "{v:?}");
}

/// Two switches, each pausing the other while their packets wait for slow receivers: the
/// pauses last, but the protected packets drain (at 100 Mbps), so no cycle of the wait-for
/// graph exists and the run completes. The detector once followed every port of the
/// downstream switch and ended this run as "deadlock" at 5.4 ms with 0 of 4 flows done.
#[test]
fn long_pauses_behind_slow_receivers_are_not_a_deadlock() {
    let text = r#"
[scenario]
name = "slow receivers"
max_time = "1s"
[topology]
kind = "custom"
hosts = ["a1", "a2", "ra", "b1", "b2", "rb"]
switches = ["s1", "s2"]
links = [
  { a = "a1", b = "s1", rate = "10Gbps", delay = "1us" },
  { a = "a2", b = "s1", rate = "10Gbps", delay = "1us" },
  { a = "ra", b = "s1", rate = "100Mbps", delay = "1us" },
  { a = "b1", b = "s2", rate = "10Gbps", delay = "1us" },
  { a = "b2", b = "s2", rate = "10Gbps", delay = "1us" },
  { a = "rb", b = "s2", rate = "100Mbps", delay = "1us" },
  { a = "s1", b = "s2", rate = "10Gbps", delay = "1us" },
]
[switch]
pfc = { xoff = "500KB" }
[transport]
kind = "udp"
[[workload]]
kind = "flows"
flows = [ { src = 0, dst = 5, size = "3MB" }, { src = 1, dst = 5, size = "3MB" }, { src = 3, dst = 2, size = "3MB" }, { src = 4, dst = 2, size = "3MB" } ]
"#;
    let mut sim = build(text);
    sim.run();
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let r = sim.results();
    assert_eq!(r.summary["end_reason"], "completed", "deadlock cycle reported: {}", r.summary["deadlock"]);
    assert_eq!(r.summary["packets_dropped"], 0);
    // each receiver takes 6 MB at 100 Mbps: 480 ms
    let end = *r.flows.u64("end_ps").iter().max().unwrap() as f64;
    assert!((end / 480e9 - 1.0).abs() < 0.01, "done at {end} ps");
    assert!(r.summary["xoff_time_ps"].as_u64().unwrap() > 100_000_000_000, "the fabric link was paused for most of the run");
}

/// Lossy traffic fills a shared pool while a lossless class's static XOFF (500 KB) lies
/// beyond the pool (200 KB): lossless packets that find the pool full go to headroom and
/// pause their upstream at once, so the lossless class loses nothing and the switch stays
/// within its memory (pool + headroom), while the lossy class drops.
#[test]
fn a_full_shared_pool_pauses_the_lossless_class() {
    let flows = "{ src = 0, dst = 4, size = \"2MB\", priority = 0 }, { src = 1, dst = 4, size = \"2MB\", priority = 0 }, \
                 { src = 2, dst = 4, size = \"2MB\", priority = 1 }, { src = 3, dst = 4, size = \"2MB\", priority = 1 }";
    let cfg = "queues = 2\nbuffer = { model = \"shared\", pool = \"200KB\", guaranteed = \"0B\", alpha = 8.0 }\npfc = { xoff = \"500KB\", priorities = [1] }";
    let mut sim = build(&star(5, "100Gbps", "1us", None, cfg, flows, "50ms"));
    sim.run();
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let r = sim.results();
    let q = match r.ports.get("queue") {
        Some(crate::metrics::ColumnData::U8(v)) => v.clone(),
        _ => unreachable!(),
    };
    let col = |name: &str, k: u8| r.ports.u64(name).iter().zip(&q).filter(|(_, &qq)| qq == k).map(|(x, _)| *x).sum::<u64>();
    assert!(r.summary["pfc_frames"].as_u64().unwrap() > 0, "the full pool paused the lossless senders");
    assert_eq!(col("drops_headroom", 1) + col("drops_lossless", 1), 0, "no lossless drop");
    assert!(col("drops_buffer_full", 0) > 0, "the lossy class drops when the pool is full");
    let (src, fin) = match (r.flows.get("src"), r.flows.get("finished")) {
        (Some(crate::metrics::ColumnData::U32(s)), Some(crate::metrics::ColumnData::U8(f))) => (s.clone(), f.clone()),
        _ => unreachable!(),
    };
    assert!(src.iter().zip(&fin).filter(|(&s, _)| s >= 2).all(|(_, &f)| f == 1), "every lossless flow finished");
}

/// One 100G sender into a 25G receiver: the switch pauses the sender when the ingress
/// counter crosses XOFF, so the receiver's queue peaks between XOFF and XOFF plus the
/// headroom in flight. Static XOFF 500 KB; dynamic XOFF alpha x free shared pool, which
/// with a 1 MB pool, no guarantee and alpha 0.5 crosses at b = 0.5 (1 MB - b), b = 333 KB;
/// and the same on seed 004's ingress pool, above the ingress guarantee.
#[test]
fn a_lone_sender_is_paused_at_its_xoff_threshold() {
    let flows = "{ src = 0, dst = 1, size = \"5MB\" }";
    let h = PfcParams::derived_headroom(100_000_000_000, SimTime::from_us(2), 1500);
    for (cfg, xoff) in [
        ("buffer = { queue = \"2MB\" }\npfc = { xoff = \"500KB\", xon = \"400KB\" }", 500_000.0),
        ("buffer = { model = \"shared\", pool = \"1MB\", guaranteed = \"0B\", alpha = 8.0 }\npfc = { alpha = 0.5, xon = \"50KB\" }", 1e6 / 3.0),
        // an ingress pool of 900 KB, 50 KB guaranteed: b - 50 KB = 0.5 (900 KB - (b - 50 KB)), b = 350 KB
        (
            "buffer = { model = \"shared\", pool = \"2MB\", guaranteed = \"0B\", alpha = 8.0, ingress_pool = \"900KB\", ingress_guaranteed = \"50KB\" }\npfc = { alpha = 0.5, xon = \"50KB\" }",
            350_000.0,
        ),
    ] {
        let mut sim = build(&star(2, "100Gbps", "1us", Some("25Gbps"), cfg, flows, "20ms"));
        sim.run();
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
        let r = sim.results();
        assert_eq!(r.summary["packets_dropped"], 0, "{cfg}");
        assert!(r.summary["pfc_frames"].as_u64().unwrap() > 0, "{cfg}");
        let peak = r.ports.u64("max_depth_bytes")[switch_port_to(&sim, 1) as usize] as f64;
        assert!(peak >= xoff - 1500.0 && peak <= xoff + h as f64, "{cfg}: peak {peak} B, XOFF {xoff:.0} B, headroom {h} B");
        // XON comes while the queue still holds far more than the round trip: the 25G port
        // never idles, and the flow takes its 5 MB at 25 Gbps (1.6 ms) plus one path delay
        // (measured 2.12 us over; a resume level of 0 would idle the port: +16.5 us)
        let fct = r.flows.u64("fct_ps")[0] as f64;
        let wire = ser_time(5_000_000, 25_000_000_000).0 as f64;
        assert!(fct <= wire + 3e6, "{cfg}: FCT {fct} ps, 5 MB at 25G {wire} ps");
    }
}

/// Found by the random-scenario property: a shared pool smaller than XOFF is full all the
/// time, so each lossless ACK from h8 lands in headroom (XOFF) and leaves it at once (XON).
/// Queued one behind the other, those requests held back the XOFF that a burst of h8's
/// data needed, and the burst overflowed a headroom derived for one frame ahead of the
/// PAUSE. A request now replaces the waiting one of its class (`Frame::replacing`).
#[test]
fn a_storm_of_xoff_and_xon_does_not_delay_a_later_xoff_past_the_headroom() {
    let text = r#"
[scenario]
name = "xoff-storm"
max_time = "230us"
[topology]
kind = "clos2"
tors = 3
servers_per_tor = 4
spines = 1
host_link = { rate = "99Gbps", delay = "394ns" }
fabric_link = { rate = "17Gbps", delay = "367ns" }
[switch]
buffer = { model = "shared", pool = "8115B", guaranteed = "423B", alpha = 0.5 }
pfc = { mode = "priority", accounting = "ingress", xoff = "12000B", xon = "6000B" }
[transport]
kind = "dctcp"
ecn = false
min_rto = "100us"
[[workload]]
kind = "flows"
flows = [
  { src = 11, dst = 0, size = "151157B", start = "107745ns" },
  { src = 8, dst = 0, size = "31467B", start = "124814ns" },
  { src = 10, dst = 8, size = "166441B", start = "116445ns" },
]
"#;
    let mut sim = build(text);
    sim.run();
    let r = sim.results();
    assert_eq!(r.summary["end_reason"], "completed");
    assert!(r.summary["pfc_frames"].as_u64().unwrap() > 200, "the ACKs set off a storm of XOFF and XON");
    assert_eq!(r.ports.u64("drops_headroom").iter().sum::<u64>(), 0, "the derived headroom held every lossless packet");
    assert_eq!(r.ports.u64("drops").iter().sum::<u64>(), 0);
}
