//! Run a scenario file with the core alone (no Python) and print engine
//! statistics: used for profiling and by bench/run.py as a cross-check.
//! Usage: cargo run --release --example run_scenario -- FILE [VARIANT] [--stream] [--threads N]
//! With --stream the finished flows' rows are handed out (and dropped) as they become
//! final, as `dcnsim run -o` does; --threads splits the run over N threads.

use dcnsim_core::scenario::{load, RunOptions};
use std::time::Instant;

/// Large tables in 2 MiB pages (`dcnsim_core::sim::large_pages`), as in the Python package.
#[global_allocator]
static ALLOC: dcnsim_core::sim::large_pages::Allocator = dcnsim_core::sim::large_pages::Allocator;

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let stream = args.iter().any(|a| a == "--stream");
    args.retain(|a| a != "--stream");
    let mut threads = 1;
    if let Some(i) = args.iter().position(|a| a == "--threads") {
        threads = args.get(i + 1).and_then(|n| n.parse().ok()).expect("--threads N");
        args.drain(i..i + 2);
    }
    let path = args.get(1).expect("usage: run_scenario FILE [VARIANT]");
    let text = std::fs::read_to_string(path).expect("readable scenario file");
    let t0 = Instant::now();
    let (_, mut sim) = match load(&text, false, args.get(2).map(|s| s.as_str()), &RunOptions { threads, ..Default::default() }) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let build = t0.elapsed();
    if stream {
        sim.stream_flows();
        let mut rows = 0;
        while !sim.done() {
            let t = sim.now() + dcnsim_core::sim::SimTime::from_us(100);
            sim.run_until(t);
            rows += sim.take_final_flows().map_or(0, |t| t.rows());
        }
        rows += sim.take_final_flows().map_or(0, |t| t.rows());
        println!("rows handed out during the run: {rows}");
    } else {
        sim.run();
    }
    let wall = t0.elapsed();
    let r = sim.results();
    let s = &r.summary;
    println!(
        "flows {}/{} end={} sim_time={:.3}ms events={} build={:.3}s wall={:.3}s events/s={:.2}M threads={}",
        s["flows_finished"],
        s["flows_total"],
        s["end_reason"],
        sim.now().as_secs_f64() * 1e3,
        sim.events(),
        build.as_secs_f64(),
        wall.as_secs_f64(),
        sim.events() as f64 / wall.as_secs_f64() / 1e6,
        sim.partitions()
    );
    if let Some(w) = s.get("warnings") {
        println!("warnings: {w}");
    }
    // the peak resident memory of the whole run (results included), where the kernel says
    if let Some(kb) = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| s.lines().find_map(|l| l.strip_prefix("VmHWM:").and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok()))) {
        println!("peak_rss_mb={}", kb / 1024);
    }
}
