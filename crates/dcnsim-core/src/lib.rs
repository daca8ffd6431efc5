//! dcnsim-core: a packet-level simulator of data-center network fabrics and
//! their congestion management.
//!
//! Layers, bottom up (DESIGN.md "Architecture"):
//! * [`sim`]: integer-picosecond time, the deterministic event queue, seeded RNG streams.
//! * [`net`]: packets (pooled), the fabric graph, topology builders, ECMP routing.
//! * [`switch`]: output-queued shared-memory switch: queues, buffer models, ECN, schedulers.
//! * [`host`]: NIC and transports (DCTCP, Reno, UDP) behind a congestion-control trait.
//! * [`workload`]: flow-size distributions and traffic generators.
//! * [`engine`]: the event loop that ties them together.
//! * [`metrics`]: result tables.
//! * [`scenario`]: the scenario schema, validation and the builder; the only layer that
//!   knows about scenario text. The engine knows nothing of files.
pub mod engine;
pub mod host;
pub mod metrics;
pub mod net;
pub mod scenario;
pub mod sim;
pub mod switch;
pub mod workload;

pub use engine::{EndReason, Sim, SimConfig};
pub use scenario::{load, Document, RunOptions, ScenarioError};

/// The test binary's allocator: the system allocator, also keeping each thread's largest
/// single request, so a test can show that refused input allocated nothing big without
/// timing it (a wall-clock bound flakes on a loaded machine).
#[cfg(test)]
pub(crate) mod largest_alloc {
    use std::alloc::{GlobalAlloc, Layout, System};
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
            System.alloc(l)
        }
        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            note(l.size());
            System.alloc_zeroed(l)
        }
        unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
            note(new);
            System.realloc(p, l, new)
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            System.dealloc(p, l)
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
