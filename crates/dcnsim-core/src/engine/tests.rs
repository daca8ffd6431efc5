//! Engine tests against numbers derived by hand.

use crate::scenario::{load, RunOptions};
use crate::sim::{ser_time, SimTime};

fn run(text: &str) -> crate::Sim {
    let (_, mut sim) = load(text, false, None, &RunOptions { seed: None, check_invariants: true }).unwrap();
    sim.run();
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    sim
}

fn dumbbell(transport: &str, flows: &str, extra: &str) -> String {
    let cwnd = if extra.is_empty() { 1000 } else { 10 };
    format!(
        r#"
[scenario]
name = "t"
max_time = "1s"
[topology]
kind = "dumbbell"
senders = 2
receivers = 1
host_link = {{ rate = "10Gbps", delay = "1us" }}
bottleneck = {{ rate = "10Gbps", delay = "1us" }}
[transport]
kind = "{transport}"
init_cwnd = {cwnd}
[[workload]]
kind = "flows"
flows = [ {flows} ]
{extra}
"#
    )
}

#[test]
fn single_flow_fct_matches_closed_form() {
    // 100 KB over 3 hops of 10G, 1us each; MSS 1460, header 40, ack 64 B.
    let mut sim = run(&dumbbell("dctcp", r#"{ src = 0, dst = 2, size = "100KB" }"#, ""));
    let r = sim.results();
    let fct = r.flows.u64("fct_ps")[0];
    let ideal = r.flows.u64("ideal_fct_ps")[0];
    // hand derivation: 68 full packets + one of 720+40 B
    let rate = 10_000_000_000;
    let wire = 68 * 1500 + 760;
    let fwd = ser_time(wire, rate).0 + 2 * (ser_time(760, rate).0) + 3 * 1_000_000;
    let back = 3 * (ser_time(64, rate).0 + 1_000_000);
    assert_eq!(ideal, fwd + back);
    let pkt = ser_time(1500, rate).0;
    assert!(fct >= ideal && fct - ideal <= pkt, "fct {fct} ideal {ideal}");
    assert_eq!(r.summary["end_reason"], "completed");
}

#[test]
fn udp_flow_is_one_way() {
    let mut sim = run(&dumbbell("udp", r#"{ src = 0, dst = 2, size = "15000B" }"#, ""));
    let r = sim.results();
    let fct = r.flows.u64("fct_ps")[0];
    let ideal = r.flows.u64("ideal_fct_ps")[0];
    assert_eq!(fct, ideal);
    assert_eq!(ideal, ser_time(15000, 10_000_000_000).0 + 2 * ser_time(1500, 10_000_000_000).0 + 3_000_000);
}

#[test]
fn two_flows_share_the_bottleneck() {
    let mut sim = run(&dumbbell(
        "dctcp",
        r#"{ src = 0, dst = 2, size = "10MB" }, { src = 1, dst = 2, size = "10MB" }"#,
        "[switch]\necn = { k = \"30KB\" }",
    ));
    let r = sim.results();
    let fct = r.flows.u64("fct_ps");
    // 20 MB of payload through one 10G port takes at least 16.4 ms of wire time
    let min = ser_time(20_000_000 * 1500 / 1460, 10_000_000_000).0;
    for &f in fct {
        assert!(f >= min / 2);
    }
    let last = *fct.iter().max().unwrap();
    assert!(last >= min && (last as f64) < min as f64 * 1.05, "last {last} min {min}");
    assert_eq!(sim.now(), SimTime(r.flows.u64("end_ps").iter().copied().max().unwrap()));
}
