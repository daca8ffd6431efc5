//! The flows of a run: the full state of the flows in flight, and of every flow ever started
//! only its line of the flows table (`FlowRow`, 64 bytes).
//!
//! A flow's transport state (sender window, congestion control, receiver reassembly, timers)
//! is needed only while it runs; once it finishes what the run reports of it is a handful of
//! numbers. Keeping the whole record of every flow ever started made memory grow with the
//! arrival window (about 390 bytes per finished flow, issue 38), so a long run of a busy
//! fabric did not fit in memory. Here the records of the flows in flight live in a slab
//! whose slots are reused when flows finish, and a finished flow keeps only its row. Packets
//! and events name flows by id; the id-to-slot map (4 bytes per flow) says whether a flow is
//! still in flight and where.

use super::Flow;
use crate::metrics::wire::FlowWire;
use crate::net::{FlowId, HostId};
use crate::sim::SimTime;

/// No slot: the flow has finished.
const GONE: u32 = u32::MAX;

/// One flow's line of the flows table (`engine/results.rs`): fixed at its start (sizes,
/// ends, times) and, once it has finished, its outcome. 64 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowRow {
    pub size: u64,
    pub start: SimTime,
    /// Its completion time (zero until it finishes).
    pub end: SimTime,
    pub ideal: SimTime,
    /// Bytes acknowledged (datagrams: received) when it finished.
    pub delivered: u64,
    pub src: HostId,
    pub dst: HostId,
    pub drops: u32,
    pub ecn_marks: u32,
    pub retx: u32,
    pub tag: u16,
    pub prio: u8,
    pub finished: bool,
}

const _: () = assert!(std::mem::size_of::<FlowRow>() == 64);

/// The flows of a run by id: the live ones' records in a slab, every one's row.
#[derive(Debug, Default)]
pub struct FlowTable {
    rows: Vec<FlowRow>,
    /// Slot in `live` of each flow id; `GONE` once finished.
    slot_of: Vec<u32>,
    live: Vec<Flow>,
    free: Vec<u32>,
    /// The flow that continued each finished flow's connection (`Flow::reuse_connection`),
    /// by id, as far as the last one that was continued (empty in runs without).
    continued: Vec<FlowId>,
    /// Every flow's header fields, kept only for a packet capture (which writes the frames
    /// of finished flows too).
    wires: Option<Vec<FlowWire>>,
    /// Finished flows' whole records, kept only when asked (tests and diagnostics).
    retired: Option<Vec<Flow>>,
}

impl FlowTable {
    /// Flows started so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    /// Keep every flow's header fields (for a packet capture).
    pub fn keep_wires(&mut self) {
        self.wires.get_or_insert_with(Vec::new);
    }
    /// Keep finished flows' whole records (tests and diagnostics).
    pub fn keep_retired(&mut self) {
        self.retired.get_or_insert_with(Vec::new);
    }

    /// Add a started flow (its id is the next one, `len()`); returns its slot.
    pub fn start(&mut self, flow: Flow) -> u32 {
        debug_assert_eq!(flow.id as usize, self.rows.len());
        self.rows.push(FlowRow {
            size: flow.size,
            start: flow.start,
            ideal: flow.ideal,
            src: flow.src,
            dst: flow.dst,
            tag: flow.tag,
            prio: flow.prio,
            ..FlowRow::default()
        });
        if let Some(w) = &mut self.wires {
            w.push(flow.wire());
        }
        let slot = match self.free.pop() {
            Some(s) => {
                self.live[s as usize] = flow;
                s
            }
            None => {
                self.live.push(flow);
                (self.live.len() - 1) as u32
            }
        };
        self.slot_of.push(slot);
        slot
    }

    /// The slot of flow `f` while it is in flight.
    #[inline(always)]
    pub fn slot(&self, f: FlowId) -> Option<u32> {
        match self.slot_of.get(f as usize) {
            Some(&s) if s != GONE => Some(s),
            _ => None,
        }
    }
    /// Flow `f`'s record while it is in flight.
    #[inline(always)]
    pub fn get(&self, f: FlowId) -> Option<&Flow> {
        self.slot(f).map(|s| &self.live[s as usize])
    }
    #[inline(always)]
    pub fn get_mut(&mut self, f: FlowId) -> Option<&mut Flow> {
        let s = self.slot(f)?;
        Some(&mut self.live[s as usize])
    }
    /// The record in slot `s`.
    #[inline(always)]
    pub fn at(&self, s: u32) -> &Flow {
        &self.live[s as usize]
    }
    #[inline(always)]
    pub fn at_mut(&mut self, s: u32) -> &mut Flow {
        &mut self.live[s as usize]
    }
    /// The slab, for the lists threaded through its records (`ReadyLists`).
    #[inline(always)]
    pub fn slab_mut(&mut self) -> &mut [Flow] {
        &mut self.live
    }
    /// Hint the CPU to load flow `f`'s record (its slot's line of the map is loaded on the way).
    #[inline(always)]
    pub fn prefetch(&self, f: FlowId) {
        if let Some(s) = self.slot(f) {
            super::prefetch_record(&self.live[s as usize]);
        }
    }

    /// Flow `f` finished at `end` with `delivered` bytes: its row takes its outcome and its
    /// slot is freed; returns its record.
    pub fn finish(&mut self, f: FlowId, end: SimTime, delivered: u64) -> Flow {
        let s = self.slot_of[f as usize];
        debug_assert_ne!(s, GONE, "flow {f} finished twice");
        self.slot_of[f as usize] = GONE;
        self.free.push(s);
        let fl = &self.live[s as usize];
        let r = &mut self.rows[f as usize];
        r.end = end;
        r.delivered = delivered;
        r.drops = fl.drops;
        r.ecn_marks = fl.ecn_marks;
        r.retx = fl.retx;
        r.finished = true;
        // the slot keeps a husk until reused: the sender, receiver and buffers go now
        let husk = fl.husk();
        let fl = std::mem::replace(&mut self.live[s as usize], husk);
        if let Some(r) = &mut self.retired {
            r.push(fl.clone());
        }
        fl
    }

    /// A packet of flow `f` was dropped (finished flows count it too: a late retransmission).
    #[inline]
    pub fn count_drop(&mut self, f: FlowId) {
        match self.slot(f) {
            Some(s) => self.live[s as usize].drops += 1,
            None => {
                if let Some(r) = self.rows.get_mut(f as usize) {
                    r.drops += 1;
                }
            }
        }
    }

    /// Record that `next` continues finished flow `f`'s connection.
    pub fn set_continued(&mut self, f: FlowId, next: FlowId) {
        let i = f as usize;
        if self.continued.len() <= i {
            self.continued.resize(i + 1, crate::host::NO_FLOW);
        }
        self.continued[i] = next;
    }
    /// The flow that continued `f`'s connection, if any.
    pub fn continued_by(&self, f: FlowId) -> Option<FlowId> {
        self.continued.get(f as usize).copied().filter(|&n| n != crate::host::NO_FLOW)
    }

    /// Flow `f`'s header fields (only with `keep_wires`).
    pub fn wire(&self, f: FlowId) -> Option<FlowWire> {
        self.wires.as_ref()?.get(f as usize).copied()
    }

    /// Flow `f`'s row as it stands: a flow in flight reports its counters so far, and
    /// `delivered` bytes (which the caller reads from its transport).
    pub fn row(&self, f: FlowId, delivered: impl FnOnce(&Flow) -> u64) -> FlowRow {
        let mut r = self.rows[f as usize];
        if let Some(fl) = self.get(f) {
            r.drops = fl.drops;
            r.ecn_marks = fl.ecn_marks;
            r.retx = fl.retx;
            r.delivered = delivered(fl);
        }
        r
    }

    /// The records of the flows in flight, in no particular order.
    pub fn live(&self) -> impl Iterator<Item = &Flow> {
        self.slot_of.iter().filter(|&&s| s != GONE).map(|&s| &self.live[s as usize])
    }
    /// Every flow's whole record, in id order: the retired ones (with `keep_retired`; else
    /// none) and those in flight.
    pub fn records(&self) -> Vec<&Flow> {
        let mut all: Vec<&Flow> = self.retired.iter().flatten().chain(self.live()).collect();
        all.sort_by_key(|f| f.id);
        all
    }
    /// Bytes the table holds per flow ever started (rows, the slot map, and what is kept
    /// for continued connections and captures), for the docs and the memory estimate.
    pub const BYTES_PER_FLOW: usize = std::mem::size_of::<FlowRow>() + std::mem::size_of::<u32>();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(id: FlowId, size: u64) -> Flow {
        Flow { size, src: id, dst: id + 1, start: SimTime(id as u64 * 10), ..Flow::vacant(id) }
    }

    /// Finished flows free their slots for the next ones; ids keep naming the right flow, a
    /// finished one is no longer found, and its row keeps its outcome, a late drop included.
    #[test]
    fn finished_flows_leave_rows_and_free_slots() {
        let mut t = FlowTable::default();
        assert_eq!(t.start(started(0, 100)), 0);
        assert_eq!(t.start(started(1, 200)), 1);
        t.get_mut(0).unwrap().drops = 2;
        t.get_mut(0).unwrap().ecn_marks = 3;
        let fl = t.finish(0, SimTime(500), 100);
        assert_eq!((fl.id, fl.size), (0, 100));
        assert!(t.get(0).is_none() && t.slot(0).is_none());
        // flow 2 reuses flow 0's slot; flow 1 is untouched
        assert_eq!(t.start(started(2, 300)), 0);
        assert_eq!((t.get(2).unwrap().size, t.get(1).unwrap().size), (300, 200));
        assert_eq!(t.get(2).unwrap().drops, 0, "a reused slot starts clean");
        t.count_drop(0);
        t.count_drop(2);
        t.count_drop(FlowId::MAX);
        let r0 = t.row(0, |_| unreachable!("finished"));
        assert_eq!((r0.finished, r0.end, r0.delivered, r0.drops, r0.ecn_marks, r0.size, r0.src), (true, SimTime(500), 100, 3, 3, 100, 0));
        let r2 = t.row(2, |fl| fl.size / 2);
        assert_eq!((r2.finished, r2.drops, r2.delivered, r2.start), (false, 1, 150, SimTime(20)));
        assert_eq!(t.len(), 3);
        let mut live: Vec<FlowId> = t.live().map(|f| f.id).collect();
        live.sort();
        assert_eq!(live, vec![1, 2]);
        t.set_continued(0, 2);
        assert_eq!((t.continued_by(0), t.continued_by(1), t.continued_by(7)), (Some(2), None, None));
    }
}
