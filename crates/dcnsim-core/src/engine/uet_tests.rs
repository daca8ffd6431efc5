//! The Ultra Ethernet transport (`kind = "uet"`, host/uet.rs) with NSCC and switch
//! trimming (`switch.trim`), end to end, against numbers derived from the fabric and
//! against the UEC's htsim's own (its defaults printed by `htsim_uec`).

use crate::metrics::Results;
use crate::scenario::{build_adjusted, Document, RunOptions};
use crate::sim::SimTime;
use super::multipath_tests::run;

/// htsim's 8-to-1 incast on its smallest default fat tree (k = 4, 16 hosts, 100 Gbit/s,
/// 1 us per link, MTU 4,150 B with 64 B of headers, a switch queue of one BDP, 178,450 B,
/// ECN from 20% to 80% of it): hosts 8-15 (other pods) send `size` bytes each to host 0.
fn incast(size: &str, switch: &str) -> String {
    let flows: Vec<String> = (8..16).map(|i| format!(r#"{{ src = {i}, dst = 0, size = "{size}" }}"#)).collect();
    format!(
        "[scenario]\nname = \"uet_incast\"\nseed = 3\nmax_time = \"20ms\"\n\
         [topology]\nkind = \"fat_tree3\"\nk = 4\nmtu = \"4150B\"\nhost_link = {{ rate = \"100Gbps\", delay = \"1us\" }}\nfabric_link = {{ rate = \"100Gbps\", delay = \"1us\" }}\n\
         [switch]\nqueues = 2\nbuffer = {{ model = \"static\", queue = \"178450B\" }}\naqm = {{ kind = \"ramp\", kmin = \"37350B\", kmax = \"145250B\", pmax = 1.0 }}\n{switch}\n\
         [transport]\nkind = \"uet\"\nheader = \"64B\"\nack_size = \"64B\"\n\
         [[workload]]\nkind = \"flows\"\nflows = [ {} ]\n",
        flows.join(", ")
    )
}

fn summary(r: &Results, key: &str) -> u64 {
    r.summary.get(key).and_then(|v| v.as_u64()).unwrap_or_else(|| panic!("no {key} in {}", r.summary))
}

/// Every flow's FCT, us.
fn fcts(r: &Results) -> Vec<f64> {
    r.flows.u64("fct_ps").iter().map(|&p| p as f64 / 1e6).collect()
}

/// The defaults derived as htsim derives them on its own fabric: the retransmission
/// timeout 15 us plus six full queues at 100 Gbit/s (15 + 6 x 178,450 x 8 / 100e9 s =
/// 100.656 us, htsim's "Setting min RTO to 100.656"), and NSCC's target 0.75 of the
/// network RTT htsim prints, 14.0227 us (two 6-hop paths of 1 us links, an MTU and a
/// 64 B ACK serialized at each hop), so 10.517 us with trimming, the RTT itself without.
#[test]
fn the_defaults_are_htsims_on_its_fabric() {
    for (sw, target_ns) in [("trim = {}", 10_517.0), ("", 14_022.7)] {
        let text = incast("1000000B", sw);
        let s = Document::from_toml(&text).and_then(|d| d.resolve(None)).unwrap();
        let mut sim = build_adjusted(&s, &RunOptions::default(), |_, _| {}).unwrap();
        assert_eq!(sim.cfg.uet.rto, SimTime(100_656_000));
        sim.run_until(SimTime::from_us(1));
        let Some(crate::host::Sender::Uet(u)) = sim.flow(0).map(|f| &f.sender) else { panic!("flow 0 runs UET") };
        assert!((u.cc.target() / 1e3 - target_ns).abs() < 1.0, "{} ns against {target_ns}", u.cc.target() / 1e3);
    }
}

/// A burst of 64 KB from each of 8 senders into one 100 Gbit/s port (about 533 KB on the
/// wire, three times the queue): with trimming, every packet the queue cannot hold leaves as
/// its 64 B header in the priority queue, its receiver NACKs it and the sender resends it at
/// once, so nothing is lost and every retransmission answers a trim (none waited for the
/// timer); the burst ends near the time its bytes take through the port (42.6 us) plus the
/// round trip (14 us). Without trimming the same overflow is lost and the tail waits for
/// the 100.656 us timer.
#[test]
fn trimming_turns_an_incast_loss_into_an_immediate_resend() {
    let (_, with) = run(&incast("64KB", "trim = {}"));
    let trims = summary(&with, "trims");
    let retx: u64 = with.flows.u32("retx").iter().map(|&x| x as u64).sum();
    assert!(trims > 0);
    assert_eq!(with.flows.u32("drops").iter().sum::<u32>(), 0, "a trimmed packet is not lost");
    assert_eq!(retx, trims, "each trim resent once, nothing else");
    let wire = 8.0 * (65_536.0 + 17.0 * 64.0);
    let ideal = wire * 8.0 / 100e9 * 1e6 + 14.02;
    let f = fcts(&with);
    let last = f.iter().cloned().fold(0.0, f64::max);
    assert!(last < 1.1 * ideal, "the burst took {last:.1} us against {ideal:.1}");
    let (_, without) = run(&incast("64KB", ""));
    assert!(without.flows.u32("drops").iter().sum::<u32>() > 0);
    let last = fcts(&without).iter().cloned().fold(0.0, f64::max);
    assert!(last > 100.656, "without trimming the tail waits for the timer: {last:.1} us");
}

/// htsim's 8-to-1 incast of 1 MB flows: trimming keeps the receiver's link busy, so the
/// incast ends within 10% of 8 MB (with headers) at 100 Gbit/s plus a round trip, and no
/// packet is dropped; about one packet in five of each flow is trimmed (htsim prints 396
/// NACKs of 1,960 packets on this input; bench/peers/uet_htsim.py).
#[test]
fn an_incast_of_htsims_keeps_the_receivers_link_busy() {
    let (_, r) = run(&incast("1000000B", "trim = {}"));
    let packets = 8.0 * 245.0;
    let ideal = packets * 4150.0 * 8.0 / 100e9 * 1e6 + 14.02;
    let last = fcts(&r).iter().cloned().fold(0.0, f64::max);
    assert!(last < 1.1 * ideal, "{last:.1} us against {ideal:.1}");
    assert_eq!(r.flows.u32("drops").iter().sum::<u32>(), 0);
    let trims = summary(&r, "trims") as f64;
    assert!(trims > 0.1 * packets && trims < 0.3 * packets, "{trims} trims of {packets} packets");
}
