//! Simulation kernel: integer time, the deterministic event queue, seeded RNG streams.
pub mod doc_links;
pub mod end;
pub mod error;
pub mod event;
pub mod large_pages;
pub mod rng;
pub mod time;
pub mod units;

pub use end::EndReason;
pub use event::EventQueue;
pub use rng::{stream, Rng, Stream};
pub use time::{bytes_in, ser_time, SimTime};

/// The property tests' configuration: `default_cases` cases, or as many as PROPTEST_CASES
/// says (a longer hunt); up to 4,000 shrinking steps; and no regression file written into
/// the tree (a failure prints its case, shrunk).
#[cfg(test)]
pub(crate) fn proptest_config(default_cases: u32) -> proptest::prelude::ProptestConfig {
    proptest::prelude::ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default_cases),
        max_shrink_iters: 4_000,
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    }
}

/// A core's L2 cache as the engine assumes it: data read at random places past this size
/// misses on every read (the route table's host arithmetic, `net::routing::HostPlaces`).
pub(crate) const CORE_L2_BYTES: usize = 1 << 19;

/// Hint the CPU to load `v[i]` into cache (the event loop's look-ahead: on large fabrics
/// the per-port records outgrow the cache, and the next event's are known one event early).
#[inline(always)]
pub(crate) fn prefetch<T>(v: &[T], i: u32) {
    if let Some(x) = v.get(i as usize) {
        prefetch_at(x as *const T as *const u8);
    }
}

/// Hint the CPU to load every line of `bytes` bytes from `at` (a record at no particular
/// alignment spans one line more than its size says).
#[inline(always)]
pub(crate) fn prefetch_lines(at: *const u8, bytes: usize) {
    if bytes == 0 {
        return;
    }
    let mut o = 0;
    while o < bytes {
        prefetch_at(at.wrapping_add(o));
        o += 64;
    }
    prefetch_at(at.wrapping_add(bytes - 1));
}

/// Hint the CPU to load the cache line holding `p` (any address: a prefetch never faults).
#[inline(always)]
pub(crate) fn prefetch_at(p: *const u8) {
    // SAFETY: a prefetch has no architectural effect, whatever the address.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
