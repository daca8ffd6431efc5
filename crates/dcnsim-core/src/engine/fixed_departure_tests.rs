//! Departures fixed at enqueue (transmit.rs) against the model as written, a TxDone per
//! departure (`Sim::wake_at_every_departure`): every table, the summary and the event
//! count identical, run whole, cut into calls at odd times, streamed, to a run's end and
//! to a time limit.

use super::parallel::split_tests::{build_capped, bytes, streamed_rows, time_of_events};
use crate::metrics::Results;
use crate::sim::SimTime;

/// `text` on one thread, its `max_time` cut to `cap` at most, its departures fixed where
/// they can be (`fixed`) or each woken by a TxDone.
fn build(text: &str, cap: Option<SimTime>, fixed: bool) -> crate::engine::Sim {
    let mut sim = build_capped(text, 1, cap);
    if !fixed {
        sim.wake_at_every_departure();
    }
    sim
}

fn assert_same(at: &str, a: &(Results, u64), b: &(Results, u64)) {
    assert_eq!(a.1, b.1, "{at}: events");
    for (x, y, what) in [(&a.0.flows, &b.0.flows, "flows"), (&a.0.ports, &b.0.ports, "ports"), (&a.0.queues, &b.0.queues, "queues"), (&a.0.timeseries, &b.0.timeseries, "timeseries")] {
        assert!(bytes(x) == bytes(y), "{at}: the {what} tables differ");
    }
    assert_eq!(a.0.summary, b.0.summary, "{at}: summary");
}

/// Run to the end in calls of `step` (None: one call).
fn run(mut sim: crate::engine::Sim, step: Option<SimTime>) -> (Results, u64) {
    match step {
        None => sim.run(),
        Some(step) => {
            while !sim.done() {
                sim.run_until(sim.now() + step);
            }
        }
    }
    let r = sim.results();
    (r, sim.events())
}

fn check(name: &str, text: &str, events: u64) -> bool {
    let cap = time_of_events(text, events, u64::MAX);
    if !build(text, cap, true).fixed_departures {
        return false;
    }
    let model = run(build(text, cap, false), None);
    assert_same(&format!("{name}, whole"), &run(build(text, cap, true), None), &model);
    // calls that end on no grid point, at no frame's end, and a time limit inside a run
    for step in [SimTime(7_301_013), SimTime(1_000_000)] {
        assert_same(&format!("{name}, in calls of {step:?}"), &run(build(text, cap, true), Some(step)), &model);
    }
    // in lockstep, the clock and the pause the model would record (a run found complete
    // at the next grid point ends there) after every call
    let (mut a, mut b) = (build(text, cap, true), build(text, cap, false));
    while !b.done() {
        let t = b.now() + SimTime(61_003);
        a.run_until(t);
        b.run_until(t);
        assert_eq!((a.now, a.paused_at, a.events, a.done()), (b.now, b.paused_at, b.events, b.done()), "{name}: in lockstep to {t:?}");
    }
    let step = SimTime(53_170_001);
    assert!(streamed_rows(build(text, cap, true), step) == streamed_rows(build(text, cap, false), step), "{name}: streamed rows");
    true
}

#[test]
fn fixed_departures_give_the_models_tables_and_event_count() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut names: Vec<String> = std::fs::read_dir(format!("{root}/scenarios")).unwrap().filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| n.ends_with("_small.toml")).map(|n| format!("scenarios/{n}")).collect();
    names.sort();
    names.extend(["scenarios/dumbbell_dctcp.toml", "scenarios/incast_reno_vs_dctcp.toml", "scenarios/leaf_spine_dctcp.toml", "bench/scenarios/fat_tree_k8_websearch.toml"].map(String::from));
    let mut fixed = Vec::new();
    for n in &names {
        let text = std::fs::read_to_string(format!("{root}/{n}")).unwrap();
        if check(n, &text, 150_000) {
            fixed.push(n.as_str());
        }
    }
    eprintln!("fixed departures in {fixed:?}");
    assert!(fixed.len() >= 4, "the shipped DCTCP fabrics fix their departures: {fixed:?}");
}

/// Ends the sequential model reaches through a TxDone: an incast whose last flow finishes
/// while the switch still sends to another receiver, ended by completion and by time
/// limits inside the run.
#[test]
fn fixed_departures_end_where_the_model_does() {
    let text = |max: &str| {
        format!(
            "[scenario]\nname = \"ends\"\nseed = 3\nmax_time = \"{max}\"\n\
             [topology]\nkind = \"dumbbell\"\nmtu = \"1500B\"\nsenders = 4\nreceivers = 2\n\
             host_link = {{ rate = \"100Gbps\", delay = \"1us\" }}\nbottleneck = {{ rate = \"10Gbps\", delay = \"1us\" }}\n\
             [switch]\nbuffer = {{ model = \"static\", queue = \"300000B\" }}\nqueues = 1\n\
             aqm = {{ kind = \"step\", threshold = \"60000B\" }}\n\
             [transport]\nkind = \"dctcp\"\n\
             [[workload]]\nkind = \"flows\"\nflows = [{{ src = 0, dst = 4, size = \"50000B\" }}, {{ src = 1, dst = 4, size = \"50000B\" }}, {{ src = 2, dst = 5, size = \"200000B\", start = \"3us\" }}, {{ src = 3, dst = 5, size = \"7000B\", start = \"5us\" }}]\n"
        )
    };
    let whole = text("10ms");
    assert!(check("ends, whole", &whole, u64::MAX));
    let (r, _) = run(build(&whole, None, true), None);
    assert_eq!(r.summary["end_reason"], "completed");
    let end = r.summary["sim_time_ps"].as_u64().unwrap();
    for t in [end / 3, end / 2, end - 1] {
        assert!(check(&format!("ends at {t} ps"), &text(&format!("{t}ps")), u64::MAX));
    }
}

/// The end the sequential model reaches through a TxDone at or past a synchronisation point
/// of a run already complete (`run_until`'s `departure_by`): packets still queued after
/// every flow has finished. A few senders share a 1 Gbps link whose queue holds a quarter
/// of a millisecond, with minimum RTOs of 5-24 us: they time out while their packets wait
/// and send again, so that copies still wait when the last ACK ends the last flow. Each
/// run's time limit, and a pause of a run without one, is swept over the time after that
/// ACK, where the model's next event is the next copy's TxDone; each end and each pause is
/// compared with the model's.
#[test]
fn a_run_complete_before_a_fixed_departure_ends_where_the_model_does() {
    let text = |n: u64, max: u64| {
        let senders = 3 + n % 4;
        let mut hosts: Vec<String> = (0..senders).map(|i| format!("\"s{i}\"")).collect();
        hosts.push("\"r\"".into());
        let mut links: Vec<String> = (0..senders).map(|i| format!("{{ a = \"s{i}\", b = \"x\", rate = \"10Gbps\", delay = \"1us\" }}")).collect();
        links.push("{ a = \"r\", b = \"x\", rate = \"1Gbps\", delay = \"1us\" }".into());
        let flows: Vec<String> = (0..senders).map(|i| format!("{{ src = {i}, dst = {senders}, size = \"{}B\", start = \"{}ns\" }}", 3000 + (n * 7919 + i * 3571) % 40000, (n * 104729 + i * 7727) % 150_000)).collect();
        format!(
            "[scenario]\nname = \"copies\"\nseed = {n}\nmax_time = \"{max}ps\"\n\
             [topology]\nkind = \"custom\"\nmtu = \"1500B\"\nhosts = [{}]\nswitches = [\"x\"]\nlinks = [{}]\n\
             [switch]\nbuffer = {{ model = \"static\", queue = \"300000B\" }}\nqueues = 1\n\
             aqm = {{ kind = \"step\", threshold = \"200000B\" }}\n\
             [transport]\nkind = \"dctcp\"\nmin_rto = \"{}us\"\n\
             [[workload]]\nkind = \"flows\"\nflows = [{}]\n",
            hosts.join(", "), links.join(", "), 5 + n % 20, flows.join(", ")
        )
    };
    // a max_time no run reaches (1 s)
    let unbounded = 1_000_000_000_000;
    let (mut ends, mut pauses, mut runs, mut cases) = (0, 0, 0, 0);
    for n in 50..80 {
        let mut whole = build(&text(n, unbounded), None, true);
        assert!(whole.fixed_departures, "case {n}: the fabric fixes its departures");
        whole.run();
        if whole.packet_counts().3 < 2 {
            continue;
        }
        cases += 1;
        let end = whole.now.0;
        for max in (end..end + 20_000_000).step_by(467_111) {
            runs += 1;
            let mut fixed = build(&text(n, max), None, true);
            fixed.run();
            ends += fixed.completed_at_fixed_departure;
            let a = (fixed.results(), fixed.events());
            assert_same(&format!("case {n} to {max} ps"), &a, &run(build(&text(n, max), None, false), None));
            // the same bound as a pause of a run with no time limit
            let (mut a, mut b) = (build(&text(n, unbounded), None, true), build(&text(n, unbounded), None, false));
            a.run_until(SimTime(max));
            b.run_until(SimTime(max));
            pauses += a.completed_at_fixed_departure;
            assert_eq!((a.now, a.paused_at, a.events, a.done()), (b.now, b.paused_at, b.events, b.done()), "case {n}: paused at {max} ps");
        }
    }
    eprintln!("of {runs} bounds after the last ACK in {cases} cases, {ends} ends and {pauses} pauses came where the model's next event was a fixed departure's TxDone");
    assert!(ends > 0 && pauses > 0, "no run reached its bound through a fixed departure ({runs} bounds, {cases} cases)");
}
