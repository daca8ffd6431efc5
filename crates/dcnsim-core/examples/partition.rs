//! Print how the partitioner would split each scenario for a run over threads
//! (net/partition.rs, docs/parallel.md): per partition count, the heaviest partition's
//! planned load over the mean (the speed-up of that many threads is at most the count over
//! it) and the lookahead (the window of the barrier protocol).
//! Usage: cargo run --release --example partition -- FILE... [--parts 2,4,8,16]

use dcnsim_core::scenario::{load, RunOptions};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut parts = vec![2, 4, 8, 16];
    if let Some(i) = args.iter().position(|a| a == "--parts") {
        let list = args.get(i + 1).expect("--parts takes a list such as 2,4,8");
        parts = list.split(',').map(|p| p.parse().expect("--parts: whole numbers")).collect();
        args.drain(i..i + 2);
    }
    println!("| scenario | hosts | partitions | imbalance (max / mean load) | lookahead (ns) |");
    println!("| --- | --- | --- | --- | --- |");
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
            println!("| {name} | {} | {} | {:.3} | {:.1} |", sim.topology().hosts.len(), pt.load.len(), pt.imbalance(), pt.lookahead.0 as f64 / 1e3);
        }
    }
}
