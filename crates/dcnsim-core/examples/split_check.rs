//! Run a scenario on one thread and split over N (default 2) and name every column and
//! summary key that differs: the tool behind the byte-identity tests of engine/parallel.rs.
//! Usage: cargo run --release --example split_check -- FILE [N]

use dcnsim_core::scenario::{load, RunOptions};

/// Large tables in 2 MiB pages (`dcnsim_core::sim::large_pages`), as in the Python package.
#[global_allocator]
static ALLOC: dcnsim_core::sim::large_pages::Allocator = dcnsim_core::sim::large_pages::Allocator;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("readable scenario file");
    let n: usize = args.get(2).map_or(2, |a| a.parse().expect("N"));
    let run = |threads| {
        let (_, mut sim) = load(&text, false, None, &RunOptions { threads, ..Default::default() }).unwrap_or_else(|e| panic!("{e}"));
        sim.run();
        (sim.results(), sim.partitions())
    };
    let ((a, _), (b, parts)) = (run(1), run(n));
    println!("partitions: {parts}");
    let mut same = true;
    for (what, x, y) in [("flows", &a.flows, &b.flows), ("ports", &a.ports, &b.ports), ("queues", &a.queues, &b.queues), ("timeseries", &a.timeseries, &b.timeseries)] {
        for ((name, c), (_, d)) in x.columns.iter().zip(&y.columns) {
            if c.to_le_bytes() != d.to_le_bytes() {
                same = false;
                println!("{what}.{name}:\n  1: {c:?}\n  {n}: {d:?}");
            }
        }
    }
    for (k, v) in a.summary.as_object().unwrap() {
        if b.summary.get(k) != Some(v) {
            same = false;
            println!("summary.{k}: {v} vs {:?}", b.summary.get(k));
        }
    }
    println!("{}", if same { "identical" } else { "DIFFERENT" });
}
