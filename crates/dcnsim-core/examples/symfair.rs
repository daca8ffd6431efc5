//! Per-flow shares of long TCP flows (issue 34 part 5): run a scenario file and print each
//! flow's goodput over [WARM_MS, the end], its CE marks, its DCTCP alpha and its mean cwnd
//! (sampled every 10 us); with two flows, the ratio of flow 0's goodput to flow 1's.
//! Usage: symfair FILE [SEED] [WARM_MS (default 10)]
//! Environment: SERIES=1 also prints each flow's goodput and marks every 1 ms;
//! CWND=1 prints only each flow's cwnd (packets), alpha and marks every 2 us for 1 ms after
//! the warm-up; TRACE=PATH writes the ports and every transmission start of the 2 ms
//! after the warm-up to PATH ("time port kind flow seq size") and prints nothing.
use dcnsim_core::host::Sender;
use dcnsim_core::scenario::{load, RunOptions};
use dcnsim_core::sim::SimTime;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).unwrap();
    let seed = args.get(2).map(|s| s.parse().unwrap());
    let warm_ms: u64 = args.get(3).map_or(10, |s| s.parse().unwrap());
    let (_, mut sim) = load(&text, false, None, &RunOptions { seed, check_invariants: false, ..Default::default() }).unwrap();
    let warm = SimTime::from_ms(warm_ms);
    if std::env::var("TRACE").is_ok() {
        // the trace starts after the warm-up: every departure must be a transmission then
        sim.wake_at_every_departure();
    }
    sim.run_until(warm);
    // TRACE=path: every transmission start over the next 2 ms, as "time port kind flow seq size"
    if std::env::var("CWND").is_ok() {
        // cwnd (packets) and alpha of each flow every 2 us over 1 ms
        let mut t = warm;
        while t < warm + SimTime::from_ms(1) {
            t = t + SimTime::from_ns(2000);
            sim.run_until(t);
            let mut line = format!("{:.1}", (t - warm).as_secs_f64() * 1e6);
            for f in 0..sim.flows_total() {
                if let Sender::Tcp(s) = &sim.flow(f as u32).unwrap().sender {
                    line += &format!(" {:.2} {:.3} {}", s.w.cwnd / s.w.mss, sim.flow(f as u32).unwrap().dctcp_alpha().unwrap(), sim.flow(f as u32).unwrap().ecn_marks);
                }
            }
            println!("{line}");
        }
        return;
    }
    let trace = std::env::var("TRACE").ok();
    if let Some(path) = &trace {
        use std::io::Write;
        let t = sim.topology();
        let mut f = std::fs::File::create(path).unwrap();
        for (i, p) in t.ports.iter().enumerate() {
            let peer = t.ports[p.peer as usize].node;
            writeln!(f, "# port {i} {} -> {} delay {}", t.nodes[p.node as usize].name, t.nodes[peer as usize].name, p.delay.0).unwrap();
        }
        sim.enable_trace();
        sim.run_until(warm + SimTime::from_ms(2));
        for r in sim.trace() {
            writeln!(f, "{} {} {:?} {} {} {}", r.time.0, r.port, r.kind, r.flow, r.seq, r.size).unwrap();
        }
        return;
    }
    let n = sim.flows_total();
    let acked0: Vec<u64> = (0..n).map(|f| sim.flow_acked(f as u32)).collect();
    let marks0: Vec<u32> = (0..n).map(|f| sim.flow(f as u32).unwrap().ecn_marks).collect();
    let mut cw = vec![0f64; n];
    let mut samples = 0u64;
    let step = SimTime::from_us(10);
    let mut t = warm;
    let series = std::env::var("SERIES").is_ok();
    let mut last: Vec<u64> = acked0.clone();
    while !sim.done() && t < sim.max_time() {
        t = t + step;
        sim.run_until(t);
        for f in 0..n {
            if let Sender::Tcp(s) = &sim.flow(f as u32).unwrap().sender {
                cw[f] += s.w.cwnd;
            }
        }
        samples += 1;
        if series && samples % 100 == 0 {
            let now: Vec<u64> = (0..n).map(|f| sim.flow_acked(f as u32)).collect();
            let d: Vec<String> = (0..n).map(|f| format!("{:.3}", (now[f] - last[f]) as f64 * 8.0 / 1e-3 / 1e9)).collect();
            let m: Vec<String> = (0..n).map(|f| format!("{}", sim.flow(f as u32).unwrap().ecn_marks)).collect();
            println!("t={:.0}ms {} marks {}", t.as_secs_f64() * 1e3, d.join(" "), m.join(" "));
            last = now;
        }
    }
    let dt = (sim.now() - warm).as_secs_f64();
    let mut tot = 0.0;
    let mut g = vec![];
    for f in 0..n {
        let b = sim.flow_acked(f as u32) - acked0[f];
        let gb = b as f64 * 8.0 / dt / 1e9;
        tot += gb;
        g.push(gb);
        let fl = sim.flow(f as u32).unwrap();
        println!(
            "flow {f} src {} goodput {:.4} Gbit/s marks {} alpha {:.4} mean_cwnd {:.0}B",
            fl.src,
            gb,
            fl.ecn_marks - marks0[f],
            sim.flow(f as u32).unwrap().dctcp_alpha().unwrap_or(f64::NAN),
            cw[f] / samples.max(1) as f64
        );
    }
    if n == 2 {
        println!("ratio f0/f1 {:.4} total {:.4}", g[0] / g[1], tot);
    }
}
