//! dcnsim-core: a packet-level simulator of data-center network fabrics and
//! their congestion management.
//!
//! Layers, bottom up; a module imports only those below it, and `switch` and `host` never
//! import each other (`layers.rs` tests it; docs/architecture.md, "Layers"):
//! * [`sim`]: integer-picosecond time, the deterministic event queue, seeded RNG streams,
//!   quantities with units, how a run ended and the error of a parameter.
//! * [`metrics`]: result tables.
//! * [`net`]: packets (pooled), the fabric graph, topology builders, ECMP routing, the
//!   ports' queues and schedulers, per-flow containers and wire formats.
//! * [`switch`]: the output-queued shared-memory switch (buffer models) and the
//!   mechanisms that act in its pipeline (ECN, AQMs, PFC, CI, SFC, QCN, DRC, INT).
//! * [`host`]: NIC and transports (TCP, RoCE, UDP) under their congestion controls.
//! * [`workload`]: flow-size distributions and traffic generators.
//! * [`capture`]: pcapng captures of the frames ports send.
//! * [`engine`]: the event loop that ties them together.
//! * [`scenario`]: the scenario schema, validation and the builder; the only layer that
//!   knows about scenario text. The engine knows nothing of files.
pub mod capture;
pub mod engine;
pub mod host;
pub mod metrics;
pub mod net;
pub mod scenario;
pub mod sim;
pub mod switch;
pub mod workload;

#[cfg(test)]
mod layers;

pub use engine::{Sim, SimConfig};
pub use sim::EndReason;
pub use scenario::{load, Document, RunOptions};
pub use sim::error::ScenarioError;

/// The test binary's allocator: the programs' (`sim::large_pages`), also keeping each
/// thread's largest single request, so a test can show that refused input allocated nothing
/// big without timing it (a wall-clock bound flakes on a loaded machine).
#[cfg(test)]
pub(crate) mod largest_alloc {
    use crate::sim::large_pages::Allocator;
    use std::alloc::{GlobalAlloc, Layout};
    use std::cell::Cell;

    struct Tracking;

    thread_local! {
        static LARGEST: Cell<usize> = const { Cell::new(0) };
    }

    fn note(size: usize) {
        // try_with: a thread being torn down has no slot left, and its requests do not matter
        let _ = LARGEST.try_with(|c| c.set(c.get().max(size)));
    }

    unsafe impl GlobalAlloc for Tracking {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            note(l.size());
            Allocator.alloc(l)
        }
        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            note(l.size());
            Allocator.alloc_zeroed(l)
        }
        unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
            note(new);
            Allocator.realloc(p, l, new)
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            Allocator.dealloc(p, l)
        }
    }

    #[global_allocator]
    static A: Tracking = Tracking;

    /// Runs `f` and gives its result with the largest single allocation it asked for on
    /// this thread.
    pub(crate) fn during<T>(f: impl FnOnce() -> T) -> (T, usize) {
        let before = LARGEST.with(|c| c.replace(0));
        let out = f();
        let largest = LARGEST.with(|c| c.replace(before.max(c.get())));
        (out, largest)
    }
}
