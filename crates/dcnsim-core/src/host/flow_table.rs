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

/// The flows of a run by id: the live ones' records in a slab, every one's row but those
/// a streamed run has handed out (`take_final`).
#[derive(Debug, Default)]
pub struct FlowTable {
    /// Flows below this id have been handed out and forgotten (`forget`); `rows`,
    /// `slot_of` and `outstanding` start at it.
    base: usize,
    rows: Vec<FlowRow>,
    /// Slot in `live` of each flow id from `base`; `GONE` once finished.
    slot_of: Vec<u32>,
    /// Packets of each flow from `base` still in the network, counted only in a streamed
    /// run (`stream`): a finished flow's row is final once none is left, since a late
    /// packet can still count a drop on it or make a mechanism mark it.
    outstanding: Option<Vec<u32>>,
    /// Every flow below this id is final (finished, no packet left), up to `len()`.
    final_upto: usize,
    /// Flows handed out that had a drop.
    with_loss_out: usize,
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
        self.base + self.rows.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The first flow whose row is still held (those below were handed out).
    pub fn first_held(&self) -> usize {
        self.base
    }
    /// Count every flow's packets in the network so that final rows can be handed out
    /// (`take_final`); before any flow starts.
    pub fn stream(&mut self) {
        debug_assert!(self.is_empty());
        self.outstanding.get_or_insert_with(Vec::new);
    }
    /// A packet of flow `f` (or about it: a mechanism's message) entered the network.
    #[inline(always)]
    pub fn packet_made(&mut self, f: FlowId) {
        if let Some(o) = &mut self.outstanding {
            if let Some(n) = o.get_mut((f as usize).wrapping_sub(self.base)) {
                *n += 1;
            }
        }
    }
    /// A packet of flow `f` left the network (delivered, consumed or dropped).
    #[inline(always)]
    pub fn packet_gone(&mut self, f: FlowId) {
        if let Some(o) = &mut self.outstanding {
            if let Some(n) = o.get_mut((f as usize).wrapping_sub(self.base)) {
                *n -= 1;
            }
        }
    }
    /// The flows whose rows are final and not yet handed out: finished, or spent (a
    /// datagram flow that lost a datagram and will never finish), with no packet of theirs
    /// left, and every flow before them too (rows go out in id order).
    pub fn take_final(&mut self) -> std::ops::Range<usize> {
        let out = self.outstanding.as_deref().unwrap_or(&[]);
        while self.final_upto < self.len() {
            let i = self.final_upto - self.base;
            let s = self.slot_of[i];
            let done = s == GONE || {
                let fl = &self.live[s as usize];
                !fl.in_ready && fl.sender.spent(fl.size)
            };
            if !done || out.get(i).is_some_and(|&n| n > 0) {
                break;
            }
            self.final_upto += 1;
        }
        self.base..self.final_upto
    }
    /// Forget the rows below `upto` (handed out; at most `take_final`'s end), and free the
    /// slots of the spent flows among them.
    pub fn forget(&mut self, upto: usize) {
        debug_assert!(upto <= self.final_upto);
        let n = upto - self.base;
        for i in 0..n {
            let s = self.slot_of[i];
            if s != GONE {
                let fl = std::mem::replace(&mut self.live[s as usize], Flow::vacant(GONE));
                if let Some(r) = &mut self.retired {
                    r.push(fl);
                }
                self.free.push(s);
            }
        }
        self.with_loss_out += self.rows[..n].iter().filter(|r| r.drops > 0).count();
        self.rows.drain(..n);
        self.slot_of.drain(..n);
        if let Some(o) = &mut self.outstanding {
            o.drain(..n);
        }
        self.base = upto;
    }
    /// Flows handed out that had a drop.
    pub fn with_loss_handed_out(&self) -> usize {
        self.with_loss_out
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
        debug_assert_eq!(flow.id as usize, self.len());
        if let Some(o) = &mut self.outstanding {
            o.push(0);
        }
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
        match self.slot_of.get((f as usize).wrapping_sub(self.base)) {
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
        let i = f as usize - self.base;
        let s = self.slot_of[i];
        debug_assert_ne!(s, GONE, "flow {f} finished twice");
        self.slot_of[i] = GONE;
        self.free.push(s);
        let fl = &self.live[s as usize];
        let r = &mut self.rows[i];
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
                if let Some(r) = self.rows.get_mut((f as usize).wrapping_sub(self.base)) {
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

    /// Flow `f`'s row as it stands (not handed out yet): a flow in flight reports its
    /// counters so far, and `delivered` bytes (which the caller reads from its transport).
    pub fn row(&self, f: FlowId, delivered: impl FnOnce(&Flow) -> u64) -> FlowRow {
        let mut r = self.rows[f as usize - self.base];
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

/// A value per flow that a mechanism keeps beside the flow table (SFC's paused time, a QCN
/// reaction point, PFC's victim flag), by flow id; a streamed run forgets the values of the
/// flows whose rows it has handed out (`FlowTable::take_final`), as the table forgets their
/// rows.
#[derive(Clone, Debug, Default)]
pub struct PerFlow<T> {
    /// Values below this id are forgotten.
    base: usize,
    v: Vec<T>,
}

impl<T: Clone + Default> PerFlow<T> {
    /// Flow `f`'s value, if it has one.
    #[inline]
    pub fn get(&self, f: FlowId) -> Option<&T> {
        self.v.get((f as usize).wrapping_sub(self.base))
    }
    #[inline]
    pub fn get_mut(&mut self, f: FlowId) -> Option<&mut T> {
        self.v.get_mut((f as usize).wrapping_sub(self.base))
    }
    /// Flow `f`'s value, made (default) if it has none. A forgotten flow has no packet left
    /// to give it one, so asking for one is a bug.
    pub fn entry(&mut self, f: FlowId) -> &mut T {
        let i = (f as usize).checked_sub(self.base).unwrap_or_else(|| panic!("flow {f}'s row was handed out already"));
        if self.v.len() <= i {
            self.v.resize(i + 1, T::default());
        }
        &mut self.v[i]
    }
    /// The values of flows `ids` (default where none), mapped by `f`: a flows-table column.
    pub fn column<U>(&self, ids: std::ops::Range<usize>, f: impl Fn(&T) -> U) -> Vec<U> {
        let none = T::default();
        ids.map(|i| f(self.v.get(i.wrapping_sub(self.base)).unwrap_or(&none))).collect()
    }
    /// Every value held, in id order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.v.iter()
    }
    /// Forget the values of flows below `upto`; returns them, for totals.
    pub fn forget(&mut self, upto: usize) -> std::vec::Drain<'_, T> {
        let n = upto.saturating_sub(self.base).min(self.v.len());
        self.base = self.base.max(upto);
        self.v.drain(..n)
    }
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

    /// A streamed table hands rows out in id order once a flow has finished and its last
    /// packet has left, and forgets them; the others keep their ids and counters.
    #[test]
    fn final_rows_wait_for_earlier_flows_and_late_packets() {
        let mut t = FlowTable::default();
        t.stream();
        for id in 0..3 {
            t.start(started(id, 100));
        }
        t.packet_made(0);
        t.packet_made(1);
        t.packet_made(FlowId::MAX); // a frame about no flow
        t.finish(1, SimTime(5), 100);
        t.packet_gone(1);
        assert_eq!(t.take_final(), 0..0, "flow 0 still runs");
        t.finish(0, SimTime(7), 100);
        assert_eq!(t.take_final(), 0..0, "a packet of flow 0 is still out");
        t.count_drop(0);
        t.packet_gone(0);
        assert_eq!(t.take_final(), 0..2);
        assert_eq!(t.row(0, |_| 0).drops, 1, "the late drop counts on the row");
        t.forget(2);
        assert_eq!((t.len(), t.first_held(), t.with_loss_handed_out()), (3, 2, 1));
        assert!(t.get(0).is_none() && t.get(2).is_some());
        t.get_mut(2).unwrap().retx = 4;
        assert_eq!(t.row(2, |_| 9).retx, 4);
        t.start(started(3, 100));
        t.finish(3, SimTime(9), 100);
        assert_eq!(t.take_final(), 2..2, "flow 2 holds back flow 3");
        t.finish(2, SimTime(9), 100);
        assert_eq!(t.take_final(), 2..4);
    }
}
