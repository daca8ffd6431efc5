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
