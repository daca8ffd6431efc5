//! Run a scenario file with the core alone (no Python) and print engine
//! statistics: used for profiling and by bench/run.py as a cross-check.
//! Usage: cargo run --release --example run_scenario -- FILE [VARIANT]

use dcnsim_core::scenario::{load, RunOptions};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: run_scenario FILE [VARIANT]");
    let text = std::fs::read_to_string(path).expect("readable scenario file");
    let t0 = Instant::now();
    let (_, mut sim) = match load(&text, false, args.get(2).map(|s| s.as_str()), &RunOptions::default()) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let build = t0.elapsed();
    sim.run();
    let wall = t0.elapsed();
    let r = sim.results();
    let s = &r.summary;
    println!(
        "flows {}/{} end={} sim_time={:.3}ms events={} build={:.3}s wall={:.3}s events/s={:.2}M",
        s["flows_finished"],
        s["flows_total"],
        s["end_reason"],
        sim.now().as_secs_f64() * 1e3,
        sim.events(),
        build.as_secs_f64(),
        wall.as_secs_f64(),
        sim.events() as f64 / wall.as_secs_f64() / 1e6
    );
}
