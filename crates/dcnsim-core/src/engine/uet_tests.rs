//! The Ultra Ethernet transport (`kind = "uet"`, host/uet.rs) with NSCC and switch
//! trimming (`switch.trim`), end to end, against numbers derived from the fabric and
//! against the UEC's htsim's own (its defaults printed by `htsim_uec`).

use crate::metrics::Results;
use crate::scenario::{build_adjusted, Document, RunOptions};
use crate::sim::SimTime;
use super::multipath_tests::run;
use crate::engine::Sim;

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
/// 64 B ACK serialized at each hop), so 10.517 us with trimming, the RTT itself without
/// (and where the switches drop what they would trim, `cut = false`, htsim's `-disable_trim`).
#[test]
fn the_defaults_are_htsims_on_its_fabric() {
    // trimming that drops instead of cutting (htsim's -disable_trim) targets the RTT too
    for (sw, target_ns) in [("trim = {}", 10_517.0), ("", 14_022.7), ("trim = { cut = false }", 14_022.7)] {
        let text = incast("1000000B", sw);
        let s = Document::from_toml(&text).and_then(|d| d.resolve(None)).unwrap();
        let mut sim = build_adjusted(&s, &RunOptions::default(), |_, _| {}).unwrap();
        assert_eq!(sim.cfg.uet.rto, SimTime(100_656_000));
        sim.run_until(SimTime::from_us(1));
        let Some(crate::host::Sender::Uet(u)) = sim.flow(0).map(|f| &f.sender) else { panic!("flow 0 runs UET") };
        assert!((u.cc.target() / 1e3 - target_ns).abs() < 1.0, "{} ns against {target_ns}", u.cc.target() / 1e3);
    }
}

/// trim_vs_pfc's variant that trims with the lossy variants' NSCC target writes that target
/// out (2,100.48 ns): it must be the fabric's network RTT, the target the lossy variants
/// take by default, on the study's fabric and on the tests' smaller one.
#[test]
fn trim_vs_pfc_writes_out_the_lossy_target() {
    for file in ["trim_vs_pfc.toml", "trim_vs_pfc_small.toml"] {
        let text = std::fs::read_to_string(format!("{}/../../scenarios/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let doc = Document::from_toml(&text).unwrap();
        let target = |variant: &str| {
            let s = doc.resolve(Some(variant)).unwrap();
            let sim = build_adjusted(&s, &RunOptions::default(), |_, _| {}).unwrap();
            (sim.cfg.uet.nscc.target, sim.cfg.uet.nscc.trimming, sim.fabric_base_rtt())
        };
        let (written, trimming, rtt) = target("trimming, UET, lossy's NSCC target");
        assert!(trimming, "{file}: the variant trims");
        assert_eq!(written, Some(rtt), "{file}: the written target against the network RTT");
        assert_eq!(rtt, SimTime(2_100_480), "{file}: the RTT the scenario's comment derives");
        let (lossy, trimming, _) = target("lossy, UET, control first");
        assert!(lossy.is_none() && !trimming, "{file}: the lossy variant takes the default, one RTT");
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
    assert_eq!(summary(&with, "timeouts"), 0, "no resend waited for the timer");
    let wire = 8.0 * (65_536.0 + 17.0 * 64.0);
    let ideal = wire * 8.0 / 100e9 * 1e6 + 14.02;
    let f = fcts(&with);
    let last = f.iter().cloned().fold(0.0, f64::max);
    assert!(last < 1.1 * ideal, "the burst took {last:.1} us against {ideal:.1}");
    let (_, without) = run(&incast("64KB", ""));
    assert!(without.flows.u32("drops").iter().sum::<u32>() > 0);
    let retx: u64 = without.flows.u32("retx").iter().map(|&x| x as u64).sum();
    assert!(retx > 0);
    assert_eq!(summary(&without, "timeouts"), retx, "without NACKs every resend is one the timer declared lost");
    let last = fcts(&without).iter().cloned().fold(0.0, f64::max);
    assert!(last > 100.656, "without trimming the tail waits for the timer: {last:.1} us");
}

/// `switch.trim.cut = false`, htsim's `-disable_trim`: the same burst's overflow is dropped
/// and waits for the timer, as without `switch.trim`, but the ACKs keep the priority queue
/// (queue 1 of the switch ports carries them, where without `switch.trim` it carries
/// nothing).
#[test]
fn trimming_off_keeps_the_control_packets_first() {
    let (_, r) = run(&incast("64KB", "trim = { cut = false }"));
    assert_eq!(summary(&r, "trims"), 0);
    let drops = summary(&r, "data_packets_dropped");
    let retx: u64 = r.flows.u32("retx").iter().map(|&x| x as u64).sum();
    assert!(drops > 0);
    assert_eq!(summary(&r, "timeouts"), retx, "every resend is the timer's");
    let q1 = |r: &Results| -> u64 {
        let u8s = |c: &str| match r.ports.get(c) {
            Some(crate::metrics::ColumnData::U8(v)) => v.clone(),
            other => panic!("{c}: {other:?}"),
        };
        let (q, host, tx) = (u8s("queue"), u8s("is_host"), r.ports.u64("tx_packets"));
        (0..q.len()).filter(|&i| q[i] == 1 && host[i] == 0).map(|i| tx[i]).sum()
    };
    assert!(q1(&r) > 0, "the ACKs cross the switches in queue 1");
    let (_, plain) = run(&incast("64KB", ""));
    assert_eq!(q1(&plain), 0, "without switch.trim they share queue 0 with the data");
}

/// The same burst into a shared buffer with per-port dynamic thresholds (seed 004's model):
/// the port a packet overflows is at its limit, where the data buffer would refuse its
/// header too; the headers are held in trimming's own memory (`switch.trim.buffer`, by
/// default beside a shared pool the port's guaranteed bytes, at least 64 MTUs), so again
/// nothing is lost and each trim is resent once. A header memory of one header drops
/// some of them.
#[test]
fn trimmed_headers_are_held_beside_a_full_shared_buffer() {
    let shared = |trim: &str| {
        incast("64KB", trim).replace(r#"buffer = { model = "static", queue = "178450B" }"#, r#"buffer = { model = "shared", pool = "300KB", guaranteed = "0B", alpha = 1.0 }"#)
    };
    let (_, r) = run(&shared("trim = {}"));
    let trims = summary(&r, "trims");
    let retx: u64 = r.flows.u32("retx").iter().map(|&x| x as u64).sum();
    assert!(trims > 0);
    assert_eq!(summary(&r, "packets_dropped"), 0, "no header refused");
    assert_eq!(retx, trims);
    let (_, tight) = run(&shared(r#"trim = { buffer = "64B" }"#));
    assert!(summary(&tight, "packets_dropped") > 0, "a one-header memory refuses headers");
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

/// RCCC without trimming on htsim's 8-to-1 incast of 1 MB: each sender's first window goes
/// on speculative credit (1.5 BDPs of the 14.02 us network RTT, 64 packets of 4,150 B), 512
/// packets at once toward one port that drains 64 of them meanwhile and holds 43, so at most
/// 405 are lost. What the timer then declares lost waits for the receiver's paced pulls,
/// asked for with an RTS (a header in the control class), and is not lost again: every
/// resend is a timer's and the losses stay within that first window. The incast ends
/// within 3% of 8 MB (with headers) at 100 Gbit/s plus a round trip. htsim
/// (`-receiver_cc_only -disable_trim -q 43`, seeds 1-3) resends 302-319 packets and ends at
/// 665-668 us; resending without credit, as this engine did before the RTS, lost 1,253-1,281
/// packets and ended at 700-702 us.
#[test]
fn rccc_without_trimming_loses_no_more_than_its_speculative_window() {
    let (_, r) = run(&incast("1000000B", "").replace("header = \"64B\"", "cc = \"rccc\"\nheader = \"64B\""));
    assert_eq!(r.summary["end_reason"], "completed");
    let drops = summary(&r, "data_packets_dropped");
    let retx: u64 = r.flows.u32("retx").iter().map(|&x| x as u64).sum();
    assert!(drops > 0 && drops <= 8 * 64 - 64 - 43, "{drops} packets lost");
    assert_eq!((summary(&r, "timeouts"), retx), (drops, drops), "each loss resent once, after the timer");
    let ideal = 8.0 * 245.0 * 4150.0 * 8.0 / 100e9 * 1e6 + 14.02;
    let last = fcts(&r).iter().cloned().fold(0.0, f64::max);
    assert!(last < 1.03 * ideal, "{last:.1} us against {ideal:.1}");
}

/// 4 UET flows of `size` from the hosts of ToR 0 to those of ToR 1 on a 2-tier leaf-spine
/// of 4 spines at 100 Gbit/s (1 us per link, MTU 4,150 B, trimming, htsim's queue and ECN
/// thresholds), ToR 0's uplink to spine 0 at `degraded` from the start; `path` the
/// entropy scheme.
fn degraded_uplink(size: &str, degraded: &str, path: &str) -> String {
    let flows: Vec<String> = (0..4).map(|i| format!(r#"{{ src = {i}, dst = {}, size = "{size}" }}"#, i + 4)).collect();
    format!(
        "[scenario]\nname = \"reps\"\nseed = 5\nmax_time = \"20ms\"\n\
         [topology]\nkind = \"clos2\"\nservers_per_tor = 4\ntors = 2\nspines = 4\nmtu = \"4150B\"\nhost_link = {{ rate = \"100Gbps\", delay = \"1us\" }}\n\
         [switch]\nqueues = 2\nbuffer = {{ model = \"static\", queue = \"178450B\" }}\naqm = {{ kind = \"ramp\", kmin = \"37350B\", kmax = \"145250B\", pmax = 1.0 }}\ntrim = {{}}\n\
         [transport]\nkind = \"uet\"\nheader = \"64B\"\nack_size = \"64B\"\npath = \"{path}\"\n\
         [faults]\nlinks = [{{ link = \"tor0->spine0\", at = \"0s\", state = \"rate\", rate = \"{degraded}\" }}]\n\
         [[workload]]\nkind = \"flows\"\nflows = [ {} ]\n",
        flows.join(", ")
    )
}

/// One of four uplinks at a tenth of its rate (a gray failure). Oblivious spraying puts a
/// quarter of every flow's packets on it: the 4 MB that makes of the 16 MB take 3.2 ms at
/// 10 Gbit/s, and every flow waits for its share. REPS recycles the entropies of packets
/// acknowledged unmarked: the slow path's packets come back marked or trimmed, its entropies
/// drop out of use. With an ACK per packet (the paper's set-up) the flows finish near the
/// time 16 MB take over the healthy uplinks (16 MB at 310 Gbit/s: 413 us), the slow link
/// carrying under 5% of the bytes. With ACKs coalesced (the default, htsim's 16 KB: one
/// ACK per 4 packets here) only the entropy of the packet that triggers an ACK comes back,
/// as in htsim's `processAck`, so most packets draw a random entropy: REPS still keeps the
/// slow link under 5% of the bytes, the flows take longer (605 against 511 us) and stay
/// well within the slow share's 3.2 ms.
#[test]
fn reps_moves_off_a_degraded_path_that_oblivious_spraying_keeps_using() {
    let slow_port = |sim: &Sim| {
        let t = sim.topology();
        t.nodes[t.switches[0] as usize].ports.iter().copied().find(|&p| t.nodes[t.ports[t.ports[p as usize].peer as usize].node as usize].name == "spine0").unwrap()
    };
    let total = 16_000_000.0 * 4150.0 / 4086.0;
    let (sim, spray) = run(&degraded_uplink("4000000B", "10Gbps", "spray"));
    let on_slow = spray.ports.u64("tx_bytes")[slow_port(&sim) as usize] as f64;
    assert!((on_slow / total - 0.25).abs() < 0.03, "spraying: {:.3} of the bytes on the slow link", on_slow / total);
    let floor = total / 4.0 * 8.0 / 10e9 * 1e6;
    let last = fcts(&spray).iter().cloned().fold(0.0, f64::max);
    assert!(last > 0.9 * floor, "spraying: {last:.0} us, the slow link's share alone takes {floor:.0} us");
    let per_packet = degraded_uplink("4000000B", "10Gbps", "reps").replace("path = \"reps\"", "path = \"reps\"\nuet = { ack_every = \"1B\" }");
    let (sim, reps) = run(&per_packet);
    let on_slow = reps.ports.u64("tx_bytes")[slow_port(&sim) as usize] as f64;
    assert!(on_slow / total < 0.05, "REPS: {:.3} of the bytes on the slow link", on_slow / total);
    let healthy = total * 8.0 / 310e9 * 1e6;
    let last = fcts(&reps).iter().cloned().fold(0.0, f64::max);
    assert!(last < 1.3 * healthy, "REPS: {last:.0} us against {healthy:.0} us over the healthy uplinks");
    let (sim, coalesced) = run(&degraded_uplink("4000000B", "10Gbps", "reps"));
    let on_slow_c = coalesced.ports.u64("tx_bytes")[slow_port(&sim) as usize] as f64;
    let last_c = fcts(&coalesced).iter().cloned().fold(0.0, f64::max);
    assert!(on_slow_c / total < 0.05, "REPS, ACKs coalesced: {:.3} of the bytes on the slow link", on_slow_c / total);
    assert!(last_c > last && last_c < 0.5 * floor, "REPS, ACKs coalesced: {last_c:.0} us against {last:.0} per packet and the slow share's {floor:.0}");
}

/// REPS needs the ACKs of a UET flow: beside flows of other transports it is refused.
#[test]
fn reps_with_other_transports_is_refused() {
    let text = degraded_uplink("1MB", "10Gbps", "reps").replace("kind = \"uet\"", "kind = \"dctcp\"");
    let e = Document::from_toml(&text).and_then(|d| d.resolve(None)).and_then(|s| build_adjusted(&s, &RunOptions::default(), |_, _| {}).map(|_| ())).unwrap_err().to_string();
    assert!(e.contains("transport.path") && e.contains("reps"), "{e}");
}

/// RCCC on htsim's 8-to-1 incast of 1 MB: after the first round trip's speculative
/// packets, the receiver's NIC paces credit to its 8 senders in turn at 99% of its line
/// rate, so they finish together (htsim's -receiver_cc_only: 644-665 us; its NSCC alone
/// spreads 573-672 us), within 5% of the 8 MB's time through the link (650 us) plus a round
/// trip; with NSCC and RCCC together every flow finishes too, and both trim fewer packets
/// than NSCC alone.
#[test]
fn rccc_paces_an_incast_so_its_flows_finish_together() {
    let with = |cc: &str| run(&incast("1000000B", "trim = {}").replace("kind = \"uet\"", &format!("kind = \"uet\"\ncc = \"{cc}\""))).1;
    let (nscc, rccc, both) = (with("nscc"), with("rccc"), with("nscc_rccc"));
    let f = fcts(&rccc);
    let (lo, hi) = (f.iter().cloned().fold(f64::MAX, f64::min), f.iter().cloned().fold(0.0, f64::max));
    assert!(hi / lo < 1.03, "RCCC's flows end within 3% of each other: {f:?}");
    let ideal = 8.0 * 245.0 * 4150.0 * 8.0 / 100e9 * 1e6 + 14.02;
    assert!(hi < 1.05 * ideal, "{hi:.1} us against {ideal:.1}");
    let g = fcts(&nscc);
    let spread = g.iter().cloned().fold(0.0, f64::max) / g.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread > hi / lo, "NSCC alone spreads its flows more ({spread:.3})");
    assert_eq!(summary(&both, "flows_finished"), 8);
    for r in [&rccc, &both] {
        assert!(summary(r, "trims") < summary(&nscc, "trims"));
        assert_eq!(r.flows.u32("drops").iter().sum::<u32>(), 0);
    }
}

/// UE's 64-packet SACK bitmap (`transport.uet.sack = "bitmap"`) against three ranges on
/// htsim's 8-to-1 incast of 1 MB with trimming, every packet acknowledged and with 16 KB
/// coalescing: every flow finishes, nothing is lost, and every trim is resent exactly once,
/// so no bitmap reported a packet its receiver lacked (a bitmap left in a reused packet
/// slot did: trimmed packets were taken as delivered and their NACKs ignored). The incast
/// ends within 2% of the ranges' time, and the run is the same split over threads.
#[test]
fn the_sack_bitmap_acknowledges_only_what_arrived() {
    for every in [", ack_every = \"1B\"", ""] {
        let text = |sack: &str| incast("1000000B", "trim = {}").replace("kind = \"uet\"", &format!("kind = \"uet\"\nuet = {{ sack = \"{sack}\"{every} }}"));
        let (_, bitmap) = run(&text("bitmap"));
        let (_, ranges) = run(&text("ranges"));
        assert_eq!(summary(&bitmap, "flows_finished"), 8, "{every}");
        assert_eq!(summary(&bitmap, "packets_dropped"), 0, "{every}");
        let retx: u64 = bitmap.flows.u32("retx").iter().map(|&x| x as u64).sum();
        assert!(summary(&bitmap, "trims") > 0);
        assert_eq!(retx, summary(&bitmap, "trims"), "{every}: each trim resent once");
        let last = |r: &Results| fcts(r).iter().cloned().fold(0.0, f64::max);
        assert!((last(&bitmap) / last(&ranges) - 1.0).abs() < 0.02, "{every}: {:.1} us against {:.1}", last(&bitmap), last(&ranges));
        // a bitmap crosses between partitions with its ACK: the same run on 2 and 3 threads
        super::parallel::split_tests::assert_identical("sack bitmap", &text("bitmap"));
    }
}

/// ACK coalescing as htsim's receiver has it (`transport.uet.ack_every`, 16 KB by default
/// as there). One 1 MB flow alone (245 packets of 4,150 B, no mark, no loss): one ACK per
/// packet at 1 B; at the default the first packet's, one per four packets (16,600 B reach 16,384) and the
/// last's, plus those a full window asks for (AR): between a quarter and a third of the
/// packets, and no fewer than the wire bytes / (16,384 + 4,150) B. The flow ends as late
/// within 2% (the ACKs that free its window come as often).
/// htsim's 8-to-1 incast of 1 MB for NSCC, RCCC and both, with trimming and without:
/// every flow finishes, never more replies than with an ACK per packet (the queue above the
/// ECN ramp's start marks most packets, and a CE mark is answered at once), and with
/// trimming nothing is lost and the incast ends within 10% of its bytes' time through the
/// link plus a round trip.
#[test]
fn coalesced_acks_are_fewer_and_every_flow_still_finishes() {
    let packets = 245.0;
    let alone = |every: &str| {
        let one = incast("1000000B", "").replace(
            &(9..16).map(|i| format!(r#", {{ src = {i}, dst = 0, size = "1000000B" }}"#)).collect::<String>(),
            "",
        );
        assert!(one.matches("src =").count() == 1);
        run(&one.replace("kind = \"uet\"", &format!("kind = \"uet\"\n{every}"))).1
    };
    let (each, coalesced) = (alone("uet = { ack_every = \"1B\" }"), alone(""));
    let replies = |r: &Results| summary(r, "packets_created") as f64 - packets;
    assert_eq!(replies(&each), packets, "one ACK per packet");
    let floor = packets * 4150.0 / (16_384.0 + 4150.0);
    let fewer = replies(&coalesced);
    assert!(fewer >= floor.max(packets / 4.0) && fewer <= packets / 3.0, "{fewer} ACKs for {packets} packets");
    let (a, b) = (fcts(&each)[0], fcts(&coalesced)[0]);
    assert!((b / a - 1.0).abs() < 0.02, "{b:.1} us coalesced against {a:.1}");

    let incast_packets = 8.0 * packets;
    let ideal = incast_packets * 4150.0 * 8.0 / 100e9 * 1e6 + 14.02;
    for cc in ["nscc", "rccc", "nscc_rccc"] {
        for trim in ["trim = {}", ""] {
            let text = |every: &str| incast("1000000B", trim).replace("kind = \"uet\"", &format!("kind = \"uet\"\ncc = \"{cc}\"\n{every}"));
            let (_, each) = run(&text("uet = { ack_every = \"1B\" }"));
            let (_, coalesced) = run(&text(""));
            assert_eq!(summary(&coalesced, "flows_finished"), 8, "{cc} {trim}");
            let sent = |r: &Results| incast_packets + r.flows.u32("retx").iter().map(|&x| x as f64).sum::<f64>();
            let replies = |r: &Results| summary(r, "packets_created") as f64 - sent(r);
            assert!(replies(&coalesced) < replies(&each), "{cc} {trim}: {} replies coalesced against {}", replies(&coalesced), replies(&each));
            if !trim.is_empty() {
                assert_eq!(summary(&coalesced, "packets_dropped"), 0, "{cc}");
                let last = fcts(&coalesced).iter().cloned().fold(0.0, f64::max);
                assert!(last < 1.1 * ideal, "{cc}: {last:.1} us against {ideal:.1}");
            }
        }
    }
}

/// UE's ACK_CC `rcvd_bytes` (`transport.uet.in_flight = "received"`, host/uet.rs
/// `Received`). One 1 MB flow alone, ACKs coalesced, nothing lost or reordered: every ACK's
/// count is exactly what it acknowledges cumulatively, so the run is the same as counting by
/// acknowledgements, packet for packet (a count taken twice, or never taken back, would
/// move the window and the flow's end). htsim's 8-to-1 incast without trimming (a full
/// queue drops): packets held above a lost one free the window as they arrive, so the runs
/// differ, every flow still finishes, and the count crosses between partitions with its
/// ACK (the same run on 2 and 3 threads).
#[test]
fn received_bytes_count_what_is_in_flight_as_ue_s_ack_cc_reports_it() {
    let with = |text: &str, counted: &str| text.replace("kind = \"uet\"", &format!("kind = \"uet\"\nuet = {{ in_flight = \"{counted}\" }}"));
    let one = incast("1000000B", "").replace(
        &(9..16).map(|i| format!(r#", {{ src = {i}, dst = 0, size = "1000000B" }}"#)).collect::<String>(),
        "",
    );
    assert_eq!(one.matches("src =").count(), 1);
    let (_, acked) = run(&with(&one, "acknowledged"));
    let (_, received) = run(&with(&one, "received"));
    assert_eq!(summary(&received, "packets_dropped"), 0);
    assert_eq!(fcts(&received), fcts(&acked));
    assert_eq!(summary(&received, "packets_created"), summary(&acked, "packets_created"));
    assert_eq!(summary(&received, "events"), summary(&acked, "events"));

    let lossy = incast("1000000B", "");
    let (_, acked) = run(&with(&lossy, "acknowledged"));
    let (_, received) = run(&with(&lossy, "received"));
    for r in [&acked, &received] {
        assert!(summary(r, "packets_dropped") > 0, "the incast overflows its queue");
        assert_eq!(summary(r, "flows_finished"), 8);
    }
    assert_ne!(fcts(&received), fcts(&acked), "held packets free the window");
    super::parallel::split_tests::assert_identical("uet received bytes", &with(&lossy, "received"));

    // trimmed, NSCC with RCCC: the count rides on the ACKs of held trimmed headers and of
    // RTSs too, and a NACK takes its packet off; nothing is lost, each trim resent once,
    // and the incast ends within 10% of its bytes' time through the link plus a round trip
    // (a count that leaked upward would shut the window and stretch it)
    let trimmed = with(&incast("1000000B", "trim = {}"), "received").replace("kind = \"uet\"", "kind = \"uet\"\ncc = \"nscc_rccc\"");
    let (_, r) = run(&trimmed);
    assert_eq!(summary(&r, "flows_finished"), 8);
    assert_eq!(summary(&r, "packets_dropped"), 0);
    assert!(summary(&r, "trims") > 0);
    let retx: u64 = r.flows.u32("retx").iter().map(|&x| x as u64).sum();
    assert_eq!(retx, summary(&r, "trims"), "each trim resent once");
    let ideal = 8.0 * 245.0 * 4150.0 * 8.0 / 100e9 * 1e6 + 14.02;
    let last = fcts(&r).iter().cloned().fold(0.0, f64::max);
    assert!(last < 1.1 * ideal, "{last:.1} us against {ideal:.1}");
    super::parallel::split_tests::assert_identical("uet received bytes, rccc", &trimmed);
}

/// htsim's incast fabric with RCCC alone and trimming, its flows replaced by 1 MB flows
/// `pairs` (source, destination), all starting at 0.
fn rccc_flows(pairs: &[(u32, u32)]) -> String {
    let incast_flows = (8..16).map(|i| format!(r#"{{ src = {i}, dst = 0, size = "1000000B" }}"#)).collect::<Vec<_>>().join(", ");
    let flows = pairs.iter().map(|(s, d)| format!(r#"{{ src = {s}, dst = {d}, size = "1000000B" }}"#)).collect::<Vec<_>>().join(", ");
    let t = incast("1000000B", "trim = {}").replace("kind = \"uet\"", "kind = \"uet\"\ncc = \"rccc\"").replace(&incast_flows, &flows);
    assert!(t.contains(&flows));
    t
}

/// RCCC's pull target is divided among the flows the sender's NIC holds ready to send
/// (htsim `computePullTarget`, `activeSources`). Two 1 MB flows start together; while a flow
/// sends on speculative credit its packet asks for an MTU (4,150 B) beyond its credit, so
/// the first packet its receiver sees carries 4,150 B rounded up to 256 B, 4,352, when the
/// flows start at two hosts. From one host, the first flow's first packet leaves an idle
/// NIC before the second flow starts (as htsim's first source sends without queueing: no
/// division) and asks as much; the second flow's first packet leaves while the first flow
/// waits ready, and asks half, 2,075 -> 2,304.
#[test]
fn rccc_flows_sharing_a_sender_ask_for_half_as_much() {
    let first_asks = |srcs: [u32; 2]| {
        let s = Document::from_toml(&rccc_flows(&[(srcs[0], 0), (srcs[1], 1)])).and_then(|d| d.resolve(None)).unwrap();
        let mut sim = build_adjusted(&s, &RunOptions::default(), |_, _| {}).unwrap();
        // in steps shorter than a packet's time on the receiver's link (332 ns): the first
        // packet's target is each receiver's first
        let mut first = [None; 2];
        let mut t = SimTime::ZERO;
        while first.iter().any(|x| x.is_none()) && t < SimTime::from_us(30) {
            t = t + SimTime::from_ns(50);
            sim.run_until(t);
            for f in 0..2 {
                if first[f].is_none() {
                    first[f] = sim.pull_pacers.as_ref().and_then(|pp| pp.state(f as u32)).map(|(target, _)| target);
                }
            }
        }
        first.map(|x| x.expect("no packet reached the receiver in 30 us"))
    };
    assert_eq!(first_asks([8, 9]), [4_352, 4_352]);
    assert_eq!(first_asks([8, 8]), [4_352, 2_304]);
}

/// One host sends 1 MB to each of eight (htsim's outcast, bench/peers/rccc_htsim.py): its
/// flows' targets are divided by eight, and the receivers' pacers, idle for want of asks,
/// keep the sender's credit full with slow pulls, so its link stays busy: the last flow
/// ends within 1% of the link's time for the 8 MB (8 x 245 packets of 4,150 B at 100 Gb/s,
/// 650.4 us) plus the network RTT (14.02 us); htsim: 663.3 us. Without slow pulls the
/// divided targets starve it (679.7 us).
#[test]
fn rccc_slow_pulls_keep_a_shared_sender_busy() {
    let (_, r) = run(&rccc_flows(&(0..8).map(|d| (8, d)).collect::<Vec<_>>()));
    let f = fcts(&r);
    assert_eq!(f.len(), 8);
    let last = f.iter().cloned().fold(0.0, f64::max);
    let bound = 8.0 * 245.0 * 4150.0 * 8.0 / 100e9 * 1e6 + 14.02;
    assert!(last < 1.01 * bound, "{last:.1} us against {bound:.1}: {f:?}");
    assert!(last > bound - 14.02, "{last:.1} us: faster than the link");
}
