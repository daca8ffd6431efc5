//! Transmission selection among the queues of one egress port: strict
//! priority (IEEE 802.1Q 8.6.8.1, highest queue index first) and deficit
//! weighted round robin (Shreedhar & Varghese, SIGCOMM 1995).

use super::queue::{PktQueue, MAX_QUEUES};

/// Scheduler configuration, shared by all ports of a node.
#[derive(Clone, Debug)]
pub enum Scheduler {
    Strict,
    /// DWRR among the queues not in the `strict` bit mask; those are served first,
    /// highest index first.
    Dwrr {
        quanta: Vec<u64>,
        strict: u8,
    },
}

/// Per-port scheduler state (DWRR deficits and round-robin pointer). 16 bytes, and all
/// zero bytes by default (the per-port tables are zeroed: net/zeroed.rs): the deficits
/// are boxed, made the first time DWRR serves the port.
#[derive(Clone, Debug, Default)]
pub struct SchedState {
    deficit: Option<Box<[u64; MAX_QUEUES]>>,
    cur: u32,
    fresh: bool,
}

/// A copy of a `SchedState`, to undo a choice that was not acted on (a crossbar output
/// that chose a class and then matched no input).
#[derive(Clone, Copy, Debug)]
pub struct SchedSnapshot {
    deficit: Option<[u64; MAX_QUEUES]>,
    cur: u32,
    fresh: bool,
}

impl SchedState {
    pub fn snapshot(&self) -> SchedSnapshot {
        SchedSnapshot { deficit: self.deficit.as_deref().copied(), cur: self.cur, fresh: self.fresh }
    }
    pub fn restore(&mut self, s: &SchedSnapshot) {
        self.deficit = s.deficit.map(Box::new);
        self.cur = s.cur;
        self.fresh = s.fresh;
    }
    /// DWRR charged queue `q` `charged` bytes for a packet that turned out to be `sent`
    /// bytes: correct its deficit.
    pub fn recharge(&mut self, q: usize, charged: u64, sent: u64) {
        if let Some(d) = &mut self.deficit {
            d[q] = (d[q] + charged).saturating_sub(sent);
        }
    }
}

impl Scheduler {
    /// Pick the queue to serve next, among queues not `blocked` (e.g. PFC-paused).
    /// Returns None when every eligible queue is empty.
    #[inline(always)]
    pub fn select(&self, queues: &[PktQueue], st: &mut SchedState, blocked: impl Fn(usize) -> bool) -> Option<usize> {
        self.pick(queues.len(), |i| queues[i].is_empty(), blocked, |i| queues[i].head_size().unwrap() as u64, st)
    }

    /// `select` over `n` queues of any kind: `empty(i)`, `blocked(i)`, and `head(i)`, the
    /// size of a queue's head (asked only of a queue neither empty nor blocked). A switch
    /// memory architecture serves an input's VOQs for one output with it.
    #[inline(always)]
    pub fn pick(&self, n: usize, empty: impl Fn(usize) -> bool, blocked: impl Fn(usize) -> bool, head: impl Fn(usize) -> u64, st: &mut SchedState) -> Option<usize> {
        match self {
            Scheduler::Strict => (0..n).rev().find(|&i| !empty(i) && !blocked(i)),
            Scheduler::Dwrr { quanta, strict } => {
                if let Some(i) = (0..n).rev().find(|&i| strict & (1 << i) != 0 && !empty(i) && !blocked(i)) {
                    return Some(i);
                }
                let in_rr = |i: usize| strict & (1 << i) == 0;
                if !(0..n).any(|i| in_rr(i) && !empty(i) && !blocked(i)) {
                    return None;
                }
                let deficit = st.deficit.get_or_insert_with(|| {
                    st.cur = 0;
                    st.fresh = true;
                    Box::new([0; MAX_QUEUES])
                });
                loop {
                    let i = st.cur as usize;
                    if !in_rr(i) || empty(i) || blocked(i) {
                        if empty(i) {
                            deficit[i] = 0;
                        }
                        st.cur = ((i + 1) % n) as u32;
                        st.fresh = true;
                        continue;
                    }
                    if st.fresh {
                        deficit[i] += quanta[i];
                        st.fresh = false;
                    }
                    let head = head(i);
                    if head <= deficit[i] {
                        deficit[i] -= head;
                        return Some(i);
                    }
                    st.cur = ((i + 1) % n) as u32;
                    st.fresh = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimTime;

    fn fill(q: &mut PktQueue, n: usize, size: u32) {
        for id in 0..n as u32 {
            q.push(id, size, 0, SimTime::ZERO);
        }
    }

    #[test]
    fn dwrr_shares_bytes_by_weight() {
        let mut qs = vec![PktQueue::default(), PktQueue::default()];
        fill(&mut qs[0], 3000, 1500);
        fill(&mut qs[1], 3000, 500);
        let s = Scheduler::Dwrr { quanta: vec![1500, 4500], strict: 0 };
        let mut st = SchedState::default();
        let mut served = [0u64; 2];
        for _ in 0..2000 {
            let i = s.select(&qs, &mut st, |_| false).unwrap();
            let (_, sz, _) = qs[i].pop(SimTime::ZERO).unwrap();
            served[i] += sz as u64;
        }
        let ratio = served[1] as f64 / served[0] as f64;
        assert!((ratio - 3.0).abs() < 0.05, "ratio {ratio}");
    }

    #[test]
    fn strict_queues_go_before_the_dwrr_set() {
        let mut qs = vec![PktQueue::default(), PktQueue::default(), PktQueue::default()];
        fill(&mut qs[0], 2, 100);
        fill(&mut qs[1], 2, 100);
        fill(&mut qs[2], 1, 100);
        let s = Scheduler::Dwrr { quanta: vec![100, 100, 100], strict: 0b100 };
        let mut st = SchedState::default();
        assert_eq!(s.select(&qs, &mut st, |_| false), Some(2));
        qs[2].pop(SimTime::ZERO);
        let a = s.select(&qs, &mut st, |_| false).unwrap();
        qs[a].pop(SimTime::ZERO);
        let b = s.select(&qs, &mut st, |_| false).unwrap();
        assert_ne!(a, b, "queues 0 and 1 alternate");
    }

    #[test]
    fn strict_serves_highest_first() {
        let mut qs = vec![PktQueue::default(), PktQueue::default()];
        fill(&mut qs[0], 2, 100);
        fill(&mut qs[1], 1, 100);
        let mut st = SchedState::default();
        assert_eq!(Scheduler::Strict.select(&qs, &mut st, |_| false), Some(1));
        assert_eq!(Scheduler::Strict.select(&qs, &mut st, |i| i == 1), Some(0));
    }
}
