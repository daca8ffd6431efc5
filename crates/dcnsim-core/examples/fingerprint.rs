//! Fingerprint of what scenarios produce, to prove that an engine refactor changes nothing:
//!
//!     cargo run --release -p dcnsim-core --example fingerprint -- [--limit-us N] [--threads T] FILE...
//!
//! Runs every variant of each file (base first) for at most N simulated microseconds
//! (default: to its own max_time), split over T threads (default 1: a split run's lines
//! must be one thread's), and prints one line per run: file, variant, events,
//! a 64-bit FNV-1a hash each of the flows table, the ports table, the sampled-queue
//! table and the summary, and a few summary counts that show which mechanisms acted. `bench/fingerprint.sh` runs the shipped `*_small` and bench
//! scenarios and compares the lines with `bench/fingerprints.txt`.
use dcnsim_core::metrics::Table;
use dcnsim_core::scenario::{build, Document, RunOptions};
use dcnsim_core::sim::SimTime;

struct Fnv(u64);
impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= x as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

fn table_hash(t: &Table) -> u64 {
    let mut h = Fnv::new();
    for (name, col) in &t.columns {
        h.bytes(name.as_bytes());
        h.bytes(&col.to_le_bytes());
    }
    h.0
}

/// Large tables in 2 MiB pages (`dcnsim_core::sim::large_pages`), as in the Python package.
#[global_allocator]
static ALLOC: dcnsim_core::sim::large_pages::Allocator = dcnsim_core::sim::large_pages::Allocator;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut limit = None;
    if let Some(i) = args.iter().position(|a| a == "--limit-us") {
        limit = Some(SimTime::from_us(args[i + 1].parse().expect("--limit-us takes an integer")));
        args.drain(i..i + 2);
    }
    let mut threads = 1;
    if let Some(i) = args.iter().position(|a| a == "--threads") {
        threads = args[i + 1].parse().expect("--threads takes an integer");
        args.drain(i..i + 2);
    }
    let opts = RunOptions { threads, ..RunOptions::default() };
    for path in &args {
        let text = std::fs::read_to_string(path).expect("readable scenario file");
        let doc = Document::from_toml(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut variants: Vec<Option<String>> = vec![None];
        variants.extend(doc.variant_names().into_iter().map(Some));
        for v in variants {
            let s = doc.scenario(v.as_deref()).unwrap_or_else(|e| panic!("{path}: {e}"));
            let mut sim = build(&s, &opts).unwrap_or_else(|e| panic!("{path}: {e}"));
            match limit {
                Some(l) => sim.run_until(l),
                None => sim.run(),
            }
            let r = sim.results();
            let mut sh = Fnv::new();
            sh.bytes(r.summary.to_string().as_bytes());
            let name = std::path::Path::new(path).file_name().unwrap().to_string_lossy();
            println!(
                "{name} {} events={} flows={:016x} ports={:016x} queues={:016x} summary={:016x} pfc={} ci={} drops={} end={}",
                v.as_deref().unwrap_or("-").replace(' ', "_"),
                sim.events(),
                table_hash(&r.flows),
                table_hash(&r.ports),
                table_hash(&r.queues),
                sh.0,
                r.summary["pfc_frames"],
                r.summary["ci_isolations"],
                r.summary["packets_dropped"],
                r.summary["end_reason"].as_str().unwrap_or("?"),
            );
        }
    }
}
