//! Flow arrivals made as the run reaches them: every workload's processes (a Poisson
//! source per host, an incast group's rounds) each make their flows in start order, and a
//! merge of them hands the engine the next one. A run holds one pending flow per process
//! instead of every flow of the arrival window (issue 38: 56 bytes a flow, 390 MB for seed
//! 004's 10 ms of arrivals).
//!
//! The order is exactly that of generating every flow up front, workload after workload and
//! process after process, and sorting them stably by start time: the merge orders by (start,
//! process in generation order, place within the process). A workload whose flows a process
//! cannot make in start order (an incast with staggered senders) is made up front and sorted
//! as one process.

use super::FlowSpec;
use crate::sim::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One process's flows, in nondecreasing start order.
pub type Process = Box<dyn Iterator<Item = FlowSpec> + Send>;

/// A process that hands out flows already made (sorted stably by start here).
pub fn made(mut specs: Vec<FlowSpec>) -> Process {
    specs.sort_by_key(|s| s.start); // stable: ties keep the order they were made in
    Box::new(specs.into_iter())
}

/// The merge of the processes' flows in start order.
pub struct FlowArrivals {
    procs: Vec<Process>,
    /// Each process's next flow.
    next: Vec<Option<FlowSpec>>,
    /// (start, process) of each process's next flow: the smallest goes first, and of equal
    /// starts the earlier process's (its flows come first in generation order).
    heap: BinaryHeap<Reverse<(SimTime, u32)>>,
    planned: usize,
    taken: usize,
}

impl FlowArrivals {
    /// The arrivals of `procs`, listed in generation order; `planned`: how many flows they
    /// make in all (counted by the caller from a second set of the same processes, or known).
    pub fn new(procs: Vec<Process>, planned: usize) -> FlowArrivals {
        let mut a = FlowArrivals { next: Vec::with_capacity(procs.len()), procs, heap: BinaryHeap::new(), planned, taken: 0 };
        for i in 0..a.procs.len() {
            let n = a.procs[i].next();
            if let Some(f) = &n {
                a.heap.push(Reverse((f.start, i as u32)));
            }
            a.next.push(n);
        }
        a
    }

    /// Arrivals of flows already made, in any order.
    pub fn from_specs(specs: Vec<FlowSpec>) -> FlowArrivals {
        let n = specs.len();
        FlowArrivals::new(vec![made(specs)], n)
    }

    /// When the next flow starts.
    pub fn peek_start(&self) -> Option<SimTime> {
        self.heap.peek().map(|r| r.0 .0)
    }

    /// Take the next flow.
    pub fn pop(&mut self) -> Option<FlowSpec> {
        let Reverse((_, i)) = self.heap.pop()?;
        let i = i as usize;
        let f = self.next[i].take();
        self.next[i] = self.procs[i].next();
        if let Some(n) = &self.next[i] {
            debug_assert!(n.start >= f.as_ref().unwrap().start, "process {i} makes flows out of start order");
            self.heap.push(Reverse((n.start, i as u32)));
        }
        self.taken += 1;
        f
    }

    /// Flows in all, started or not.
    pub fn planned(&self) -> usize {
        self.planned
    }
    /// Flows not started yet.
    pub fn remaining(&self) -> usize {
        self.planned - self.taken
    }
    /// Whether every flow has started.
    pub fn is_done(&self) -> bool {
        self.heap.is_empty()
    }
}

impl std::fmt::Debug for FlowArrivals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FlowArrivals {{ processes: {}, planned: {}, taken: {} }}", self.procs.len(), self.planned, self.taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Transport;
    use proptest::prelude::*;

    fn spec(src: u32, start: u64) -> FlowSpec {
        FlowSpec { src, dst: 0, size: 1, start: SimTime(start), prio: 0, tag: 0, transport: Transport::Udp, repeat_until: None, reuse_connection: false, closed_loop: None }
    }

    proptest! {
        // processes with sorted starts (many ties) merge into exactly the stable sort of
        // their concatenation
        #[test]
        fn merge_is_the_stable_sort_of_every_flow(gaps in proptest::collection::vec(proptest::collection::vec(0u64..3, 0..20), 0..6)) {
            let lists: Vec<Vec<FlowSpec>> = gaps.iter().enumerate().map(|(p, g)| {
                let mut t = 0;
                g.iter().enumerate().map(|(k, &d)| { t += d; FlowSpec { size: k as u64, ..spec(p as u32, t) } }).collect()
            }).collect();
            let mut all: Vec<FlowSpec> = lists.iter().flatten().cloned().collect();
            all.sort_by_key(|s| s.start);
            let n = all.len();
            let mut a = FlowArrivals::new(lists.into_iter().map(|l| Box::new(l.into_iter()) as Process).collect(), n);
            let mut got = Vec::new();
            while let Some(t) = a.peek_start() {
                let f = a.pop().unwrap();
                prop_assert_eq!(f.start, t);
                got.push(f);
            }
            prop_assert!(a.is_done());
            prop_assert_eq!(a.remaining(), 0);
            prop_assert_eq!(got, all);
        }
    }
}
