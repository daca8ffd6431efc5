//! Multipath and failures from scenario files (`transport.path`, `[faults]`), against
//! numbers worked out from the paths the run's flows took.

use crate::metrics::Results;
use crate::net::PortId;
use crate::scenario::{build_adjusted, Document, RunOptions};
use crate::sim::SimTime;
use crate::engine::Sim;

/// A 2-tier leaf-spine of 4 ToRs with 4 hosts each and 4 spines (full bisection), 10 Gbit/s
/// and 1 us per link; host i sends Poisson datagrams of one MTU at 90% of its link to host
/// i + 4 (a permutation across ToRs), for `us` microseconds; `switch`: more of the switch
/// table; `rest`: more tables.
fn permutation(us: u64, switch: &str, rest: &str) -> String {
    let flows: Vec<String> = (0..16).map(|i| format!(r#"{{ src = {i}, dst = {}, size = "1GB" }}"#, (i + 4) % 16)).collect();
    format!(
        "[scenario]\nname = \"perm\"\nmax_time = \"{us}us\"\nseed = 11\n[topology]\nkind = \"clos2\"\nservers_per_tor = 4\ntors = 4\nspines = 4\n\
         host_link = {{ rate = \"10Gbps\", delay = \"1us\" }}\n[switch]\nbuffer = {{ queue = \"150KB\" }}\n{switch}\n\
         [transport]\nkind = \"udp\"\nudp = {{ rate = \"9Gbps\", arrivals = \"poisson\" }}\n{rest}\n[[workload]]\nkind = \"flows\"\nflows = [ {} ]\n",
        flows.join(", ")
    )
}

/// Run `text` with the invariant checks on (which must find nothing).
pub(super) fn run(text: &str) -> (Sim, Results) {
    let s = Document::from_toml(text).and_then(|d| d.resolve(None)).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut sim = build_adjusted(&s, &RunOptions { check_invariants: true, ..Default::default() }, |_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let r = sim.results();
    (sim, r)
}

/// Each flow's bytes delivered between T1 and T2, as a fraction of its link's capacity.
fn delivered(rest: &str) -> (Vec<f64>, Sim, Results) {
    balanced("", rest)
}

/// The same with `switch` added to the switch table.
fn balanced(switch: &str, rest: &str) -> (Vec<f64>, Sim, Results) {
    const T1: u64 = 500;
    const T2: u64 = 3_000;
    let (_, a) = run(&permutation(T1, switch, rest));
    let (sim, b) = run(&permutation(T2, switch, rest));
    let secs = SimTime::from_us(T2 - T1).as_secs_f64();
    let got = a.flows.u64("delivered_bytes").iter().zip(b.flows.u64("delivered_bytes")).map(|(x, y)| (y - x) as f64 * 8.0 / (10e9 * secs)).collect();
    (got, sim, b)
}

/// What each flow of a run would deliver in a fluid model of its path (the egress ports
/// its flow hash takes): every link passes min(1, capacity / offered) of each flow that
/// reaches it, hop by hop from the source, as a drop-tail queue does to Poisson arrivals
/// (each sees the same loss). In a 2-tier fabric a link is at one hop of every path
/// through it, so the hops can be taken in turn.
fn fluid(sim: &Sim, offered: f64) -> Vec<f64> {
    let t = sim.topology();
    let paths: Vec<Vec<PortId>> = (0..16u32)
        .map(|f| {
            let fl = sim.flows.get(f).unwrap();
            sim.routes.path(t, fl.src, fl.dst, fl.hash)
        })
        .collect();
    let mut rate = vec![offered; paths.len()];
    for hop in 0..paths[0].len() {
        let mut load = std::collections::HashMap::<PortId, f64>::new();
        for (p, r) in paths.iter().zip(&rate) {
            *load.entry(p[hop]).or_default() += r;
        }
        for (p, r) in paths.iter().zip(rate.iter_mut()) {
            *r *= (1.0 / load[&p[hop]]).min(1.0);
        }
    }
    rate
}

/// Per-flow ECMP against packet spraying on a permutation across a full-bisection
/// leaf-spine: with one path per flow, flows whose hashes pick one uplink or one spine's
/// downlink share it and lose what exceeds it (ECMP's hash collisions; Al-Fares et al.,
/// "Hedera", NSDI 2010, sec. 2). Together the flows carry what the fluid model of their
/// paths gives (within 2%), and a flow whose path it shares with none gets its 90% through
/// (within what Poisson arrivals give in 2.5 ms, about 2.3% of 1,830 packets, 3 sigma; two
/// flows that share a link split it unevenly, as drop-tail queues fed by links of one rate
/// do, so the model's even split is not held to). Sprayed, every link carries 90% on
/// average: every flow gets its 90% (within the same noise), nothing is dropped.
#[test]
fn spraying_carries_a_permutation_that_per_flow_ecmp_loses_to_hash_collisions() {
    let noise = 0.07;
    let (ecmp, sim, r) = delivered("");
    let model = fluid(&sim, 0.9);
    let (sum_e, sum_m): (f64, f64) = (ecmp.iter().sum(), model.iter().sum());
    assert!((sum_e / sum_m - 1.0).abs() < 0.02, "ECMP carried {sum_e:.3} links' worth, the fluid model of its paths {sum_m:.3}");
    assert!(sum_m < 0.85 * 0.9 * 16.0, "the hashes collide: {model:?}");
    for (f, (e, m)) in ecmp.iter().zip(&model).enumerate().filter(|(_, (_, &m))| m == 0.9) {
        assert!((e - m).abs() < noise, "flow {f}, alone on its path: {e:.4}");
    }
    assert!(r.summary["packets_dropped"].as_u64().unwrap() > 0);
    let (spray, _, r) = delivered("path = \"spray\"");
    assert!(spray.iter().all(|&s| (s - 0.9).abs() < noise), "{spray:?}");
    let total: f64 = spray.iter().sum();
    // Poisson counts over the 16 flows: 0.6% either way, 3 sigma
    assert!((total / (0.9 * 16.0) - 1.0).abs() < 0.018, "sprayed: {total:.3} links' worth");
    assert_eq!(r.summary["packets_dropped"], 0);
    println!("ECMP {sum_e:.3} (model {sum_m:.3}), spray {total:.3}");
}

/// The mean over flows `fs` of what they carried (`delivered`).
fn mean(got: &[f64], fs: std::ops::Range<usize>) -> f64 {
    let n = fs.len() as f64;
    got[fs].iter().sum::<f64>() / n
}

/// The sprayed permutation with tor0's link to spine1 failed at 100 us (`[faults]`), the
/// routes following 50 us later. Until then tor0 and spine1 route a quarter of what they
/// send each other's way onto the dead link and lose it (`drops_link_down`). After, tor0's four flows (to tor1) have three
/// uplinks for 4 x 0.9 links' worth, and tor3's four flows (to tor0) three spines that
/// still reach tor0: each of those flows carries 3 / 4 = 0.75 of its link, the others
/// keep their 0.9. A gray failure instead (the link at 5 of its 10 Gbit/s) moves no route:
/// oblivious spraying keeps sending it a quarter, 4 x 0.225 = 9 Gbit/s, of which 5 pass,
/// and the same eight flows carry 0.9 - 4 x 0.225 / 9 = 0.8 each.
#[test]
fn a_failed_link_moves_sprayed_traffic_to_the_spines_left_and_a_degraded_one_does_not() {
    let down = "path = \"spray\"\n[faults]\ndetect = \"50us\"\nlinks = [{ link = \"tor0->spine1\", at = \"100us\", state = \"down\" }]";
    let (got, sim, r) = delivered(down);
    // a group of four flows: Poisson counts 1.2% either way, 3 sigma
    let tol = 0.035;
    for (what, fs, want) in [("tor0 -> tor1", 0..4, 0.75), ("tor1 -> tor2", 4..8, 0.9), ("tor2 -> tor3", 8..12, 0.9), ("tor3 -> tor0", 12..16, 0.75)] {
        let m = mean(&got, fs);
        assert!((m - want).abs() < tol, "{what}: {m:.4} of each link, expected {want} ({got:?})");
    }
    let lost: u64 = r.ports.u64("drops_link_down").iter().sum();
    // 50 us of 9 Gbit/s routed onto each end of the dead link (a quarter of tor0's 36, and
    // spine1's quarter of tor3's), 73 frames, and the few the two queues held
    assert!((65..110).contains(&lost), "{lost} dropped at the dead link before the routes moved");
    let changes = r.summary["link_changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!((changes[0]["peer"].as_str(), changes[0]["state"].as_str(), changes[0]["at_ps"].as_u64()), (Some("spine1"), Some("down"), Some(SimTime::from_us(100).0)));
    assert!(changes[0]["link"].as_str().unwrap().starts_with("tor0:"));
    drop(sim);

    let gray = "path = \"spray\"\n[faults]\nlinks = [{ link = \"tor0->spine1\", at = \"0s\", state = \"rate\", rate = \"5Gbps\" }]";
    let (got, _, r) = delivered(gray);
    for (what, fs, want) in [("tor0 -> tor1", 0..4, 0.8), ("tor1 -> tor2", 4..8, 0.9), ("tor3 -> tor0", 12..16, 0.8)] {
        let m = mean(&got, fs);
        assert!((m - want).abs() < tol, "gray, {what}: {m:.4} of each link, expected {want} ({got:?})");
    }
    assert_eq!(r.summary["link_changes"][0]["rate_bps"], 5_000_000_000u64);
    assert_eq!(r.ports.u64("drops_link_down").iter().sum::<u64>(), 0);
}

/// Switch-side load balancing (`switch.load_balance`) on the same permutation. Per-packet
/// adaptive routing (each packet to the least queued uplink) and flowlets with a gap of 0
/// (each packet its own flowlet, a random uplink) carry it as host spraying does: every
/// flow its 0.9, nothing dropped. Flowlets with a gap longer than the run keep each flow on
/// the uplink its first packet drew: one flowlet per flow at its ToR (the spines have one
/// way down), 16 in all. Under the gray failure above (tor0's link to spine1 at 5 of 10
/// Gbit/s), adaptive routing at tor0 sees the slow uplink's queue and sends it less: tor0's
/// four uplinks pass 35 of the 36 Gbit/s offered, each of its flows 0.9 x 35/36 = 0.875
/// (sprayed: 0.8); tor3's flows to tor0 still lose at spine1's slow link, which tor3's own
/// queues do not show: 0.8, as sprayed.
#[test]
fn switches_balance_by_flowlet_or_by_queue() {
    let noise = 0.07;
    for table in ["load_balance = { kind = \"adaptive\" }", "load_balance = { kind = \"flowlet\", gap = \"0s\" }"] {
        let (got, _, r) = balanced(table, "");
        assert!(got.iter().all(|&g| (g - 0.9).abs() < noise), "{table}: {got:?}");
        assert_eq!(r.summary["packets_dropped"], 0, "{table}");
        assert!(r.summary["load_balance_moved"].as_u64().unwrap() > 0);
    }
    let (_, _, r) = balanced("load_balance = { kind = \"flowlet\", gap = \"1s\" }", "");
    assert_eq!(r.summary["flowlets"], 16);
    let gray = "[faults]\nlinks = [{ link = \"tor0->spine1\", at = \"0s\", state = \"rate\", rate = \"5Gbps\" }]";
    let (got, _, _) = balanced("load_balance = { kind = \"adaptive\" }", gray);
    let tol = 0.035;
    for (what, fs, want) in [("tor0 -> tor1", 0..4, 0.875), ("tor1 -> tor2", 4..8, 0.9), ("tor3 -> tor0", 12..16, 0.8)] {
        let m = mean(&got, fs);
        assert!((m - want).abs() < tol, "adaptive, gray, {what}: {m:.4} of each link, expected {want} ({got:?})");
    }
}

/// A link that dies and that the routes never leave (no detection: `detect` past the end):
/// sprayed flows lose what they send onto it, and finish only because every resend of a
/// packet takes another entropy (a packet resent on one fixed entropy, hashed onto the dead
/// link, would be lost for ever). Sixteen 200 KB flows, i to i + 4, tor0's link to spine1
/// dead from 20 us: the flows from tor0 and to tor0 lose a quarter of what they spray (and
/// of their ACKs), the others nothing; over UET (timer recovery: NSCC's window falls to one
/// packet, as htsim's does when every loss takes a timer) and over DCTCP (SACK, and the
/// timeouts that move resends to other paths).
#[test]
fn sprayed_flows_finish_past_a_dead_link_the_routes_never_leave() {
    for (kind, extra) in [("uet", "queues = 2\ntrim = {}\n"), ("dctcp", "")] {
        let flows: Vec<String> = (0..16).map(|i| format!(r#"{{ src = {i}, dst = {}, size = "200KB" }}"#, (i + 4) % 16)).collect();
        let text = format!(
            "[scenario]\nname = \"dead\"\nmax_time = \"900ms\"\nseed = 3\n[topology]\nkind = \"clos2\"\nservers_per_tor = 4\ntors = 4\nspines = 4\n\
             host_link = {{ rate = \"10Gbps\", delay = \"1us\" }}\n[switch]\nbuffer = {{ queue = \"150KB\" }}\n{extra}[transport]\nkind = \"{kind}\"\npath = \"spray\"\n\
             [faults]\ndetect = \"1s\"\nlinks = [{{ link = \"tor0->spine1\", at = \"20us\", state = \"down\" }}]\n\
             [[workload]]\nkind = \"flows\"\nflows = [ {} ]\n",
            flows.join(", ")
        );
        let (_, r) = run(&text);
        assert_eq!(r.summary["flows_unfinished"], 0, "{kind}: every flow finishes");
        let lost: u64 = r.ports.u64("drops_link_down").iter().sum();
        assert!(lost > 20, "{kind}: {lost} lost at the dead link");
        // tor0's flows (0..4) and those to tor0 (12..16) lose packets; the others cross no
        // dead link (sprayed DCTCP resends there too: it reads reordering as loss)
        let drops = r.flows.u32("drops");
        for f in (0..4).chain(12..16) {
            assert!(drops[f] > 0, "{kind}: flow {f} crosses the dead link ({drops:?})");
        }
        for f in 4..12 {
            assert_eq!(drops[f], 0, "{kind}: flow {f} crosses no dead link ({drops:?})");
        }
    }
}

/// DCTCP sprayed over the 4 spines of a 16-host leaf-spine (a permutation of 1 MB flows
/// across ToRs, ECN at 20 packets): with RFC 6675's DupThresh every packet a spine's
/// queue delays behind three later ones is resent and cuts the window (770 resends,
/// none needed: nothing is dropped); with RACK-TLP (`transport.rack`) only those before a
/// flow has seen reordering or before D-SACKs have grown its window (144), and the
/// spurious recoveries are undone: the last flow ends sooner (1.31 against 1.52 ms) and
/// within twice the 0.8 ms that 1 MB needs alone at 10 Gbit/s.
#[test]
fn rack_tlp_lets_sprayed_tcp_ride_out_reordering() {
    let flows: Vec<String> = (0..16).map(|i| format!(r#"{{ src = {i}, dst = {}, size = "1MB" }}"#, (i + 4) % 16)).collect();
    let text = |rack: bool| {
        format!(
            "[scenario]\nname = \"spray\"\nmax_time = \"100ms\"\nseed = 5\n[topology]\nkind = \"clos2\"\nservers_per_tor = 4\ntors = 4\nspines = 4\n\
             host_link = {{ rate = \"10Gbps\", delay = \"1us\" }}\n[switch]\nbuffer = {{ queue = \"300KB\" }}\naqm = {{ kind = \"step\", threshold = \"30KB\" }}\n\
             [transport]\nkind = \"dctcp\"\npath = \"spray\"\nrack = {rack}\n[[workload]]\nkind = \"flows\"\nflows = [ {} ]\n",
            flows.join(", ")
        )
    };
    let (_, dup) = run(&text(false));
    let (_, rack) = run(&text(true));
    let last = |r: &Results| r.flows.u64("fct_ps").iter().max().copied().unwrap() as f64 / 1e6;
    let resent = |r: &Results| r.flows.u32("retx").iter().sum::<u32>();
    eprintln!("DupThresh: last {:.0} us, {} resent; RACK-TLP: last {:.0} us, {} resent", last(&dup), resent(&dup), last(&rack), resent(&rack));
    for r in [&dup, &rack] {
        assert_eq!(r.summary["flows_unfinished"], 0);
        assert_eq!(r.summary["packets_dropped"], 0);
    }
    assert!(resent(&rack) * 5 < resent(&dup), "RACK-TLP resends a fifth at most");
    assert!(last(&rack) < last(&dup), "and its flows finish sooner");
    assert!(last(&rack) < 1_600.0, "within twice the 0.8 ms ideal");
}
