//! Switch buffer admission.
//!
//! * Static: every egress queue owns a fixed capacity (seeds 000/003: 1 MB).
//! * Shared with dynamic thresholds (Choudhury & Hahne, "Dynamic queue length
//!   thresholds for shared-memory packet switches", IEEE/ACM ToN 6(2), 1998),
//!   as configured in seed 004: a switch-wide pool, a guaranteed share per
//!   egress port, and beyond it a port may hold at most alpha times the free
//!   shared buffer.
//!
//! The switch's memory, which no queue may exceed (`--check-invariants` checks the switch
//! total against it): static, queue x queues x ports; shared, the pool plus the reserves a
//! mechanism keeps beside it (PFC headroom per ingress port and lossless class, see
//! `pfc.rs`), which only packets that mechanism admits may use.

/// Buffer model parameters.
#[derive(Clone, Debug)]
pub enum BufferParams {
    Static { queue_cap: u64 },
    /// `per_port`: `pool` is the memory per port, and each switch's pool that times its
    /// ports (`switch.buffer.pool_per_port`: fabrics whose switches differ in radix, as a
    /// growing fat tree's cores, each with the memory per port of the seed's switch).
    Shared { pool: u64, guaranteed: u64, alpha: f64, per_port: bool },
}

impl BufferParams {
    /// The shared pool of a switch of `ports` ports (0 for a static buffer).
    #[inline]
    pub fn pool_of(&self, ports: usize) -> u64 {
        match *self {
            BufferParams::Static { .. } => 0,
            BufferParams::Shared { pool, per_port: true, .. } => pool.saturating_mul(ports as u64),
            BufferParams::Shared { pool, .. } => pool,
        }
    }
    /// A shared pool (a static buffer has none).
    #[inline]
    pub fn is_shared(&self) -> bool {
        matches!(self, BufferParams::Shared { .. })
    }
    /// The verdict on a packet of `size` joining a queue holding `queue_bytes` where the queue
    /// alone decides it (static: its own capacity), None where the switch's pool does
    /// (shared, `SwitchBuffer::admits`). The engine asks this first, so that on a static
    /// buffer a switch hop reads no switch record: on large fabrics that record is a cache
    /// miss of its own.
    #[inline]
    pub fn queue_admits(&self, queue_bytes: u64, size: u64) -> Option<bool> {
        match *self {
            BufferParams::Static { queue_cap } => Some(queue_bytes + size <= queue_cap),
            BufferParams::Shared { .. } => None,
        }
    }
}

/// Occupancy state of one switch's buffer.
#[derive(Clone, Debug)]
pub struct SwitchBuffer {
    params: BufferParams,
    /// Shared part of the pool (pool minus all guarantees).
    shared_cap: u64,
    shared_used: u64,
    /// The switch's memory (module doc).
    memory: u64,
}

/// A port holding `port_bytes` grows by `size`: its bytes beyond the guarantee afterwards,
/// and how many of the new bytes fall beyond it (what the shared pool must supply).
#[inline]
fn beyond_guarantee(port_bytes: u64, size: u64, guaranteed: u64) -> (u64, u64) {
    let new = (port_bytes + size).saturating_sub(guaranteed);
    (new, new - port_bytes.saturating_sub(guaranteed))
}

/// Choudhury and Hahne's dynamic threshold: a queue that takes `added` bytes of a shared
/// pool with `free` bytes left may do so if they fit and it then holds `after` bytes (of
/// the pool) at most alpha times the free bytes. Also the admission of a shared input pool
/// (switch/architecture).
#[inline]
pub fn dynamic_threshold_admits(free: u64, after: u64, added: u64, alpha: f64) -> bool {
    added <= free && (after as f64) <= alpha * free as f64
}

impl SwitchBuffer {
    pub fn new(params: BufferParams, ports: usize, queues: usize) -> SwitchBuffer {
        let (shared_cap, memory) = match params {
            BufferParams::Static { queue_cap } => (0, queue_cap.saturating_mul((ports * queues) as u64)),
            BufferParams::Shared { guaranteed, .. } => {
                let pool = params.pool_of(ports);
                (pool.saturating_sub(guaranteed * ports as u64), pool)
            }
        };
        SwitchBuffer { params, shared_cap, shared_used: 0, memory }
    }

    /// Add memory reserved beside a shared pool (a mechanism's headroom); a static buffer's
    /// reserves live inside each queue's capacity (validation holds them there).
    pub fn reserve_beside(&mut self, bytes: u64) {
        if let BufferParams::Shared { .. } = self.params {
            self.memory = self.memory.saturating_add(bytes);
        }
    }

    /// A shared pool (a static buffer has none).
    #[inline]
    pub fn is_shared(&self) -> bool {
        self.params.is_shared()
    }

    /// Whether the shared pool itself (not the per-port dynamic limit) has room for `size`
    /// more bytes on a port holding `port_bytes`; always true for a static buffer, whose
    /// lossless traffic is bounded by its thresholds instead.
    #[inline]
    pub fn pool_admits(&self, port_bytes: u64, size: u64) -> bool {
        match self.params {
            BufferParams::Static { .. } => true,
            BufferParams::Shared { guaranteed, .. } => self.shared_used + beyond_guarantee(port_bytes, size, guaranteed).1 <= self.shared_cap,
        }
    }

    /// Whether a packet of `size` may join a queue holding `queue_bytes` on a port holding
    /// `port_bytes`. Does not change state; call `on_enqueue` if it is accepted.
    #[inline]
    pub fn admits(&self, port_bytes: u64, queue_bytes: u64, size: u64) -> bool {
        match self.params {
            BufferParams::Static { .. } => self.params.queue_admits(queue_bytes, size) == Some(true),
            BufferParams::Shared { guaranteed, alpha, .. } => {
                let (new, delta) = beyond_guarantee(port_bytes, size, guaranteed);
                if delta == 0 {
                    return true;
                }
                // bytes a mechanism admitted into its reserve count here too and may
                // overfill the pool: then nothing else is free
                dynamic_threshold_admits(self.shared_cap.saturating_sub(self.shared_used), new, delta, alpha)
            }
        }
    }
    #[inline]
    pub fn on_enqueue(&mut self, port_bytes_before: u64, size: u64) {
        if let BufferParams::Shared { guaranteed, .. } = self.params {
            self.shared_used += beyond_guarantee(port_bytes_before, size, guaranteed).1;
        }
    }
    #[inline]
    pub fn on_dequeue(&mut self, port_bytes_before: u64, size: u64) {
        if let BufferParams::Shared { guaranteed, .. } = self.params {
            let old = port_bytes_before.saturating_sub(guaranteed);
            let new = (port_bytes_before - size).saturating_sub(guaranteed);
            self.shared_used -= old - new;
        }
    }
    /// Shrink or grow the memory after the build (tests of the invariant checks).
    #[cfg(test)]
    pub fn set_memory(&mut self, bytes: u64) {
        self.memory = bytes;
    }
    /// The memory the switch's queues must fit in (the invariant checks add up the
    /// queues themselves: no per-packet bookkeeping for a check most runs do not make).
    pub fn memory(&self) -> u64 {
        self.memory
    }
    pub fn shared_used(&self) -> u64 {
        self.shared_used
    }
    pub fn shared_cap(&self) -> u64 {
        self.shared_cap
    }
    /// How full a queue holding `queue_bytes` on a port holding `port_bytes` is against what
    /// the buffer would admit there now, in [0, 1]: the queue against its capacity (static),
    /// or the port against its dynamic limit, guarantee + alpha x free pool (shared).
    pub fn fill(&self, port_bytes: u64, queue_bytes: u64) -> f64 {
        let (held, limit) = match self.params {
            BufferParams::Static { queue_cap } => (queue_bytes, queue_cap as f64),
            BufferParams::Shared { guaranteed, alpha, .. } => (port_bytes, guaranteed as f64 + alpha * self.shared_cap.saturating_sub(self.shared_used) as f64),
        };
        if limit <= 0.0 {
            1.0
        } else {
            (held as f64 / limit).min(1.0)
        }
    }
    /// Upper bound on what one egress queue can ever hold (for invariant checks).
    pub fn queue_limit(&self) -> u64 {
        match self.params {
            BufferParams::Static { queue_cap } => queue_cap,
            BufferParams::Shared { guaranteed, .. } => guaranteed + self.shared_cap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn static_caps_each_queue() {
        let b = SwitchBuffer::new(BufferParams::Static { queue_cap: 3000 }, 4, 1);
        assert!(b.admits(0, 1500, 1500));
        assert!(!b.admits(0, 2000, 1500));
        // the engine's per-hop shortcut gives the same verdict without the switch's state,
        // and defers to the switch wherever a pool decides
        let p = BufferParams::Static { queue_cap: 3000 };
        assert_eq!((p.queue_admits(1500, 1500), p.queue_admits(2000, 1500)), (Some(true), Some(false)));
        assert_eq!(BufferParams::Shared { pool: 30_000, guaranteed: 0, alpha: 1.0, per_port: false }.queue_admits(0, 1), None);
    }
    /// `pool_per_port`: a switch's pool is its ports times the memory per port, so a core of
    /// 520 ports has 26 times the memory of a switch of 20 (the seed 004 growth study's
    /// reading of a grown core); the guarantees come off each switch's own pool.
    #[test]
    fn a_pool_per_port_grows_with_the_switch() {
        let p = BufferParams::Shared { pool: 800_000, guaranteed: 50_000, alpha: 1.0, per_port: true };
        for (ports, pool) in [(20, 16_000_000), (520, 416_000_000)] {
            let b = SwitchBuffer::new(p.clone(), ports, 1);
            assert_eq!(b.memory(), pool);
            assert_eq!(b.shared_cap(), pool - 50_000 * ports as u64);
            assert_eq!(p.pool_of(ports), pool);
        }
        let per_switch = BufferParams::Shared { pool: 16_000_000, guaranteed: 50_000, alpha: 1.0, per_port: false };
        assert_eq!(SwitchBuffer::new(per_switch, 300, 1).memory(), 16_000_000);
    }

    /// The pool check for a mechanism's own admissions: room for the bytes beyond the port's
    /// guarantee, whatever the dynamic per-port limit says; a static buffer leaves it to
    /// the mechanism's thresholds.
    #[test]
    fn pool_admits_counts_only_bytes_beyond_the_guarantee() {
        // 2 ports x 10 KB guaranteed of a 30 KB pool: 10 KB shared
        let mut b = SwitchBuffer::new(BufferParams::Shared { pool: 30_000, guaranteed: 10_000, alpha: 0.1, per_port: false }, 2, 1);
        assert!(b.pool_admits(0, 10_000), "within the guarantee");
        assert!(b.pool_admits(5_000, 15_000), "5 KB guaranteed + 10 KB shared");
        assert!(!b.pool_admits(5_000, 15_001));
        // 8 KB of the shared part used by the other port
        b.on_enqueue(0, 18_000);
        assert_eq!(b.shared_used(), 8_000);
        assert!(b.pool_admits(9_000, 3_000), "1 KB guaranteed + 2 KB shared");
        assert!(!b.pool_admits(9_000, 3_001));
        assert!(!b.admits(9_000, 9_000, 3_000), "the dynamic limit (0.1 x 2 KB free) is stricter");
        // a port already 2 KB beyond its guarantee: only the new bytes count
        assert!(b.pool_admits(12_000, 2_000) && !b.pool_admits(12_000, 2_001));
        let st = SwitchBuffer::new(BufferParams::Static { queue_cap: 1 }, 1, 1);
        assert!(st.pool_admits(u64::MAX / 2, 1_000_000));
    }
    #[test]
    fn dynamic_threshold_converges_to_alpha_share() {
        // One congested port with alpha = 1 settles at alpha/(1+alpha) of the shared pool.
        let mut b = SwitchBuffer::new(BufferParams::Shared { pool: 1_000_000, guaranteed: 0, alpha: 1.0, per_port: false }, 1, 1);
        let mut q = 0u64;
        while b.admits(q, q, 1000) {
            b.on_enqueue(q, 1000);
            q += 1000;
        }
        assert_eq!(q, 500_000);
        // the guarantee is always available
        let b2 = SwitchBuffer::new(BufferParams::Shared { pool: 100_000, guaranteed: 50_000, alpha: 1.0, per_port: false }, 2, 1);
        assert_eq!(b2.shared_cap(), 0);
        assert!(b2.admits(49_000, 49_000, 1000));
        assert!(!b2.admits(50_000, 50_000, 1000));
    }
}
