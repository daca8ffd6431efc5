//! Print how the partitioner would split each scenario for a run over threads
//! (net/partition.rs, docs/parallel.md): per partition count, the heaviest partition's
//! planned load over the mean (the speed-up of that many threads is at most the count over
//! it) and the lookahead (the window of the barrier protocol). With `--run-us N`, each
//! split is also run for N simulated microseconds and the heaviest partition's events over
//! the mean given beside it (the work the planned load stands in for), and the run's events
//! over its critical path (the sum over windows of the busiest partition's events): the
//! most any number of threads could speed that partitioning up, however fast the barrier.
//! Usage: cargo run --release --example partition -- FILE... [--parts 2,4,8,16] [--run-us N]

use dcnsim_core::scenario::{load, RunOptions};

/// Large tables in 2 MiB pages (`dcnsim_core::sim::large_pages`), as in the Python package.
#[global_allocator]
static ALLOC: dcnsim_core::sim::large_pages::Allocator = dcnsim_core::sim::large_pages::Allocator;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut parts = vec![2, 4, 8, 16];
    if let Some(i) = args.iter().position(|a| a == "--parts") {
        let list = args.get(i + 1).expect("--parts takes a list such as 2,4,8");
        parts = list.split(',').map(|p| p.parse().expect("--parts: whole numbers")).collect();
        args.drain(i..i + 2);
    }
    let mut run_us = None;
    if let Some(i) = args.iter().position(|a| a == "--run-us") {
        run_us = Some(args.get(i + 1).and_then(|v| v.parse::<u64>().ok()).expect("--run-us takes simulated microseconds, a whole number"));
        args.drain(i..i + 2);
    }
    println!("| scenario | hosts | partitions | imbalance (max / mean load) | lookahead (ns) | events: max / mean | events / critical path |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for path in &args {
        let text = std::fs::read_to_string(path).expect("readable scenario file");
        let (_, sim) = match load(&text, false, None, &RunOptions::default()) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("{path}: error: {e}");
                std::process::exit(2);
            }
        };
        let name = std::path::Path::new(path).file_stem().unwrap().to_string_lossy();
        for &n in &parts {
            let pt = sim.partition(n);
            let events = run_us.map_or("- | -".to_string(), |us| {
                let (_, mut split) = load(&text, false, None, &RunOptions { threads: n, ..Default::default() }).expect("loaded once already");
                split.run_until(dcnsim_core::sim::SimTime::from_us(us));
                let ev = split.partition_events();
                let total = ev.iter().sum::<u64>() as f64;
                let mean = total / ev.len() as f64;
                let bound = split.critical_path_events().map_or("-".to_string(), |c| format!("{:.2}", total / c as f64));
                format!("{:.3} ({} partitions, {:.1} M events) | {bound}", *ev.iter().max().unwrap() as f64 / mean, ev.len(), total / 1e6)
            });
            println!("| {name} | {} | {} | {:.3} | {:.1} | {events} |", sim.topology().hosts.len(), pt.load.len(), pt.imbalance(), pt.lookahead.0 as f64 / 1e3);
        }
    }
}
