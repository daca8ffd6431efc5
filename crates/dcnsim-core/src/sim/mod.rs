//! Simulation kernel: integer time, the deterministic event queue, seeded RNG streams.
pub mod event;
pub mod rng;
pub mod time;

pub use event::EventQueue;
pub use rng::{stream, Rng, Stream};
pub use time::{bytes_in, ser_time, SimTime};
