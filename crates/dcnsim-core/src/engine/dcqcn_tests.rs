//! RoCEv2 + DCQCN behaviour in the engine.

use super::tests::build;
use crate::sim::SimTime;

/// n senders to one receiver on one switch; all links `rate`.
fn star(n: usize, rate: &str, switch: &str, transport: &str, flows: &str, max_time: &str) -> String {
    let hosts: Vec<String> = (0..=n).map(|i| format!("\"h{i}\"")).collect();
    let links: Vec<String> = (0..=n).map(|i| format!("{{ a = \"h{i}\", b = \"s\", rate = \"{rate}\", delay = \"1us\" }}")).collect();
    format!(
        r#"
[scenario]
name = "dcqcn"
max_time = "{max_time}"
[topology]
kind = "custom"
hosts = [{}]
switches = ["s"]
links = [{}]
[switch]
{switch}
[transport]
kind = "dcqcn"
{transport}
[[workload]]
kind = "flows"
flows = [ {flows} ]
"#,
        hosts.join(", "),
        links.join(", ")
    )
}

pub(super) struct Steady {
    pub shares: Vec<f64>,
    pub util: f64,
    pub q_mean: f64,
    pub q_p99: f64,
}

/// Run n long flows into h{n}; sample delivered bytes and the bottleneck queue in [from, to].
pub(super) fn steady(n: usize, switch: &str, transport: &str, from: SimTime, to: SimTime) -> Steady {
    let flows: Vec<String> = (0..n).map(|i| format!("{{ src = {i}, dst = {n}, size = \"10GB\", start = \"{}us\" }}", i * 10)).collect();
    let mut sim = build(&star(n, "100Gbps", switch, transport, &flows.join(", "), "1s"));
    let t = sim.topology();
    let bottleneck = t.ports[t.host_port(n as u32) as usize].peer;
    sim.run_until(from);
    let d0: Vec<u64> = (0..n as u32).map(|f| sim.flow_acked(f)).collect();
    let tx0 = sim.port_tx_bytes(bottleneck);
    let mut qs = vec![];
    let mut t = from;
    while t < to {
        t += SimTime::from_us(1);
        sim.run_until(t);
        qs.push(sim.queue_bytes(bottleneck, 0) as f64);
    }
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let shares: Vec<f64> = (0..n as u32).map(|f| (sim.flow_acked(f) - d0[f as usize]) as f64).collect();
    let util = (sim.port_tx_bytes(bottleneck) - tx0) as f64 * 8.0 / 100e9 / (to - from).as_secs_f64();
    let q_mean = qs.iter().sum::<f64>() / qs.len() as f64;
    qs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let q_p99 = qs[(qs.len() as f64 * 0.99) as usize];
    Steady { shares, util, q_mean, q_p99 }
}

pub(super) fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    s * s / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

/// N:1 long RoCE flows under DCQCN with PFC: fair shares (Jain >= 0.95 over 30 ms of steady
/// state), a busy bottleneck, and a queue held by the marking each preset's source pairs it
/// with. The paper's constants on the paper's RED ramp (Kmin 5 KB, Kmax 200 KB, Pmax 1%): the
/// mean above Kmin and the 99th percentile within 25% above Kmax (above Kmax every packet is
/// marked, so only the feedback delay lets it grow further). Seed 004's constants on the
/// seed's step at K = 50 KB: every packet above K is marked and each flow is cut once per
/// 4 us CNP interval while it stays there, so the queue stays near K: mean in [K/4, 2K],
/// 99th percentile within 3K. Measured: Jain 0.988 / 1.000 / 1.000, utilisation 82% (the
/// paper's 55 us timers recover slowly at this 10 us RTT) / 92% / 91%, queue mean 12 / 34 /
/// 53 KB, p99 59 / 101 / 135 KB. (Seed 004's constants on the paper's ramp, whose 1%
/// marking cannot hold back its 1.25 Gbit/s increase steps, sit at PFC's XOFF instead: p99
/// 450 KB.)
#[test]
fn dcqcn_long_flows_share_fairly_with_a_bounded_queue() {
    let buffers = "buffer = { model = \"static\", queue = \"4MB\" }\npfc = { xoff = \"500KB\", xon = \"400KB\" }";
    let paper_red = "aqm = { kind = \"ramp\", kmin = \"5KB\", kmax = \"200KB\", pmax = 0.01 }";
    let seed_step = "aqm = { kind = \"step\", threshold = \"50KB\" }";
    for (preset, aqm, n) in [("paper", paper_red, 4), ("seed004", seed_step, 4), ("seed004", seed_step, 8)] {
        let r = steady(n, &format!("{buffers}\n{aqm}"), &format!("dcqcn = {{ preset = \"{preset}\" }}"), SimTime::from_ms(10), SimTime::from_ms(40));
        let j = jain(&r.shares);
        eprintln!("{preset} n={n} jain={j:.4} util={:.4} q_mean={:.0} q_p99={:.0}", r.util, r.q_mean, r.q_p99);
        assert!(j >= 0.95, "{preset} n={n}: Jain {j}");
        assert!(r.util >= 0.8, "{preset} n={n}: utilisation {}", r.util);
        if aqm == paper_red {
            assert!(r.q_mean > 5_000.0, "{preset} n={n}: queue mean {} below Kmin", r.q_mean);
            assert!(r.q_p99 <= 1.25 * 200_000.0, "{preset} n={n}: queue p99 {}", r.q_p99);
        } else {
            assert!((12_500.0..=100_000.0).contains(&r.q_mean), "{preset} n={n}: queue mean {}", r.q_mean);
            assert!(r.q_p99 <= 3.0 * 50_000.0, "{preset} n={n}: queue p99 {}", r.q_p99);
        }
    }
}

/// Without PFC a shallow buffer drops RoCE packets; the receiver NACKs the first gap and the
/// sender goes back to it, so every flow still delivers exactly its bytes.
#[test]
fn go_back_n_recovers_losses_in_a_lossy_fabric() {
    let flows: Vec<String> = (0..8).map(|i| format!("{{ src = {i}, dst = 8, size = \"1MB\" }}")).collect();
    let text = star(
        8,
        "100Gbps",
        "buffer = { model = \"static\", queue = \"60KB\" }\naqm = { kind = \"ramp\", kmin = \"5KB\", kmax = \"50KB\", pmax = 0.01 }",
        "",
        &flows.join(", "),
        "100ms",
    );
    let mut sim = build(&text);
    sim.run();
    let r = sim.results();
    assert_eq!(r.summary["end_reason"], "completed");
    assert!(r.summary["packets_dropped"].as_u64().unwrap() > 0, "the shallow buffer must drop");
    let retx: u32 = match r.flows.get("retx").unwrap() {
        crate::metrics::ColumnData::U32(v) => v.iter().sum(),
        _ => unreachable!(),
    };
    assert!(retx > 0);
    assert_eq!(r.flows.u64("delivered_bytes"), r.flows.u64("size_bytes"));
}

/// With PFC the same incast is lossless and needs no retransmission.
#[test]
fn roce_incast_is_lossless_with_pfc() {
    let flows: Vec<String> = (0..8).map(|i| format!("{{ src = {i}, dst = 8, size = \"1MB\" }}")).collect();
    let text = star(
        8,
        "100Gbps",
        "buffer = { model = \"static\", queue = \"1MB\" }\naqm = { kind = \"ramp\", kmin = \"5KB\", kmax = \"50KB\", pmax = 0.01 }\npfc = { xoff = \"60KB\", xon = \"30KB\" }",
        "",
        &flows.join(", "),
        "100ms",
    );
    let mut sim = build(&text);
    sim.run();
    let r = sim.results();
    assert_eq!(r.summary["end_reason"], "completed");
    assert_eq!(r.summary["packets_dropped"], 0);
    assert!(r.summary["pfc_frames"].as_u64().unwrap() > 0);
    assert!(r.flows.u64("fct_ps").iter().all(|&f| f > 0));
}

/// DCQCN end to end: a 2:1 incast at 100G (flows 0 and 1 into h3) marks at the switch, the
/// receiver's CNPs reach exactly the two incast senders (flow 2, h2 -> h4 on an idle port,
/// gets none and keeps the line rate), and a sender whose rate was cut paces at that rate:
/// over the 2 us after a cut it puts rc x 2 us on the wire, within one packet.
#[test]
fn cnps_reach_the_marked_flows_which_pace_at_the_cut_rate() {
    use crate::host::Sender;
    let flows = r#"{ src = 0, dst = 3, size = "20MB" }, { src = 1, dst = 3, size = "20MB" }, { src = 2, dst = 4, size = "20MB" }"#;
    let text = star(4, "100Gbps", "buffer = { queue = \"4MB\" }\naqm = { kind = \"ramp\", kmin = \"5KB\", kmax = \"200KB\", pmax = 0.01 }", "", flows, "2ms");
    let mut sim = build(&text);
    sim.enable_trace();
    let rp = |sim: &crate::Sim, f: u32| match sim.flow(f).map(|fl| &fl.sender) {
        Some(Sender::Roce(r)) => (r.cc.dcqcn().unwrap().rp.cnps, r.cc.dcqcn().unwrap().rp.rate_bps()),
        None => (0, 0),
        Some(_) => panic!("flow {f} is not RoCE"),
    };
    // step until flow 0's first cut
    let mut t = SimTime::ZERO;
    while rp(&sim, 0).0 == 0 {
        t += SimTime::from_ns(100);
        assert!(t < SimTime::from_ms(1), "no CNP reached flow 0");
        sim.run_until(t);
    }
    let (_, rate) = rp(&sim, 0);
    assert!(rate < 100_000_000_000, "the first CNP cuts the rate");
    let window = SimTime::from_us(2);
    sim.run_until(t + window);
    let (_, rate_after) = rp(&sim, 0);
    let port = sim.topology().host_port(0);
    let sent: u64 = sim.trace().iter().filter(|r| r.port == port && r.flow == 0 && r.time >= t && r.time < t + window).map(|r| r.size as u64).sum();
    let expect = crate::sim::bytes_in(window, rate.max(rate_after)) as f64;
    eprintln!("cut at {t}: rate {rate} -> {rate_after} bps, sent {sent} B in 2 us, expected {expect:.0} B");
    assert!((sent as f64 - expect).abs() <= 1500.0 + 0.02 * expect, "flow 0 sent {sent} B in 2 us at {rate} bps (expected {expect:.0} B)");
    sim.run_until(SimTime::from_ms(1));
    let ((c0, _), (c1, _), (c2, r2)) = (rp(&sim, 0), rp(&sim, 1), rp(&sim, 2));
    assert!(c0 > 0 && c1 > 0, "both incast senders are notified ({c0}, {c1})");
    assert_eq!(c2, 0, "the flow on the idle port gets no CNP");
    assert_eq!(r2, 100_000_000_000, "and keeps the line rate");
}

/// `transport.kind = "dcqcn"` with nothing else is the paper's DCQCN (Zhu et al., SIGCOMM
/// 2015: g 1/256, F 5, timers 55 us, R_AI 40 Mbit/s, at most one CNP per 50 us). A lone 2 MB
/// flow (1370 frames of 1500 B, 2,054,800 B on the wire) from a 100G NIC through a 40G
/// bottleneck, 1 us links, step marking at K = 50 KB, a queue that never drops:
/// * at line rate the queue grows by 900 B per frame and passes K at the 56th, which is at
///   the switch at 56 x 0.12 + 1 = 7.72 us, waits K / 40G = 10 us, and reaches the receiver
///   2.42 us after it leaves; its CNP takes 3.02 us back: the first cut, at t1 = 23.16 us;
/// * from then on every frame is marked while the queue is above K, so the receiver sends a
///   CNP every 50 us and the rate halves each time (alpha stays 1: the 55 us alpha timer
///   restarts at every CNP, as does the 55 us rate timer, so nothing increases in between):
///   50 Gbit/s at t1, 25 at t1 + 50 us, 12.5 at t3 = t1 + 100 us, when the queue, which grew
///   at 10 Gbit/s and fell at 15, still holds about 145 KB;
/// * at 12.5 Gbit/s the queue falls below K some 28 us later, and its last marked frame is
///   at the receiver about 7 us before the NP could send again: no fourth CNP;
/// * then only the rate timer acts (2 MB never reaches the 10 MiB byte counter): every
///   55 us after t3 Rc <- (Rt + Rc) / 2 with Rt = 25 Gbit/s (five fast-recovery steps:
///   18.75, 21.875, 23.44, 24.22, 24.61), then Rt grows by R_AI = 40 Mbit/s per step;
/// * the last frame leaves when the sender's cumulative bytes reach the flow's wire bytes,
///   and 3.54 us (through the empty path) plus 3.02 us (its ACK back) later the FCT ends.
/// That gives an FCT of 599.2 us (26.7 Gbit/s; the run: 597.4 us); it must agree within 1% and count
/// exactly 3 CNPs. With seed 004's constants read in Gbit/s (the default before 2026-11,
/// R_AI 12.5 Mbit/s every 4 us), the same flow took 2,358 us (6.8 Gbit/s).
#[test]
fn the_default_is_the_papers_dcqcn_and_a_lone_flow_follows_its_derived_cuts() {
    use crate::host::Sender;
    let text = r#"
[scenario]
name = "lone"
max_time = "100ms"
[topology]
kind = "dumbbell"
senders = 1
host_link = { rate = "100Gbps", delay = "1us" }
bottleneck = { rate = "40Gbps", delay = "1us" }
[switch]
buffer = { queue = "16MB" }
aqm = { kind = "step", threshold = "50KB" }
[transport]
kind = "dcqcn"
[[workload]]
kind = "flows"
flows = [{ src = 0, dst = 1, size = "2MB" }]
"#;
    let mut sim = build(text);
    // the CNPs counted while the flow still runs (a finished flow keeps no sender state)
    sim.run_until(SimTime::from_us(500));
    let cnps = match sim.flow(0).map(|f| &f.sender) {
        Some(Sender::Roce(r)) => r.cc.dcqcn().unwrap().rp.cnps,
        _ => panic!("flow 0 is not a running RoCE flow at 500 us"),
    };
    sim.run();
    let fct_us = sim.results().flows.u64("fct_ps")[0] as f64 / 1e6;

    // The derivation above, in bytes per us (Gbit/s x 125) and us.
    let (frame, k, line, neck): (f64, f64, f64, f64) = (1500.0, 50_000.0, 100.0 * 125.0, 40.0 * 125.0);
    let wire = 2e6 + (2e6_f64 / 1460.0).ceil() * 40.0;
    let hop = |b: f64, rate: f64| b / rate + 1.0; // serialization and 1 us of propagation
    let t_k = (k / (frame * (1.0 - neck / line)) as f64).ceil() * frame / line + 1.0;
    let cnp_back = hop(64.0, line) + hop(64.0, neck) + hop(64.0, line);
    let t1 = t_k + k / neck + hop(frame, neck) + hop(frame, line) + cnp_back;
    // the sender's rate (B/us) from each time on: three halvings 50 us apart, then the timer's
    // steps every 55 us
    let mut steps = vec![(0.0, line), (t1, line / 2.0), (t1 + 50.0, line / 4.0)];
    let t3 = t1 + 100.0;
    let (mut rt, mut rc) = (line / 4.0, line / 8.0);
    steps.push((t3, rc));
    for i in 1..=20 {
        if i > 5 {
            rt += 0.04 * 125.0;
        }
        rc = (rt + rc) / 2.0;
        steps.push((t3 + 55.0 * i as f64, rc));
    }
    let sent_by = |t: f64| -> f64 {
        let mut s = 0.0;
        for (i, &(a, r)) in steps.iter().enumerate() {
            let b = steps.get(i + 1).map_or(f64::INFINITY, |x| x.0);
            if t > a {
                s += r * (t.min(b) - a);
            }
        }
        s
    };
    // the premises: the queue (busy since the first frame arrived at 1.12 us) is above K at
    // t3, and the last frame marked before it falls below K (at 40 - 12.5 Gbit/s) reaches the
    // receiver (after at most K / 40G = 10 us of queueing and 2.42 us more) before the NP
    // could send a fourth CNP, 150 us after its first
    let queue = |t: f64| sent_by(t - hop(frame, line)) - neck * (t - hop(frame, line));
    let below_k = t3 + (queue(t3) - k) / (neck - line / 8.0);
    assert!(queue(t3) > k, "queue {} at t3", queue(t3));
    assert!(below_k + k / neck + 2.42 < t1 - cnp_back + 150.0, "last mark at {below_k} us");
    // the last frame leaves when the sender has sent the flow's wire bytes
    let (mut lo, mut hi) = (0.0, 10_000.0);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if sent_by(mid) < wire {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let tail = hop(frame, line) + hop(frame, neck) + hop(frame, line) + cnp_back;
    let derived = hi + tail;
    eprintln!("t1 {t1:.2} us, FCT {fct_us:.2} us, derived {derived:.2} us, {cnps} CNPs, {:.2} Gbit/s", 2e6 * 8.0 / fct_us / 1e3);
    assert_eq!(cnps, 3);
    assert!((fct_us - derived).abs() <= 0.01 * derived, "FCT {fct_us:.2} us vs derived {derived:.2} us");
}
