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
use crate::net::wire::FlowWire;
use crate::net::{FlowId, HostId};
use crate::sim::SimTime;

/// No slot: the flow has finished (and, in a streamed table, its row was handed out).
const GONE: u32 = u32::MAX;
/// In a streamed table, a finished flow whose row waits in its slot to be handed out:
/// `DONE | slot`. `slot()` treats it as gone (any value at or above `DONE`).
const DONE: u32 = 1 << 31;

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

/// The flows of a run by id: the live ones' records in a slab, and every flow's row.
///
/// Two ways to keep the rows. By default every row stays, by flow id, to the end of the run
/// (`results` reads them all). A streamed table (`stream`) keeps a row only until it is
/// final and handed out (`take_final`): in the flow's slot, which the flow keeps after it
/// finishes until then, so what stays per flow ever started is its entry in the id-to-slot
/// map (4 bytes, and only from the oldest flow not yet handed out).
#[derive(Debug, Default)]
pub struct FlowTable {
    /// Flows started.
    started: usize,
    /// Flows below this id are all handed out; `slot_of` (and by default `rows`) start at it.
    base: usize,
    /// The rows: by id from `base` by default, by slot in a streamed table.
    rows: Vec<FlowRow>,
    /// Slot in `live` of each flow id from `base`; `GONE` once finished (streamed: once
    /// handed out; `DONE | slot` while a finished flow's row waits).
    slot_of: Vec<u32>,
    live: Vec<Flow>,
    free: Vec<u32>,
    /// A streamed table: packets of the flow in each slot still in the network (a finished
    /// flow's row is final once none is left, since a late packet can still count a drop on
    /// it or make a mechanism mark it).
    outstanding: Option<Vec<u32>>,
    /// Flows handed out that had a drop.
    with_loss_out: usize,
    /// The flow that continued each finished flow's connection (`Flow::reuse_connection`),
    /// by id, as far as the last one that was continued (empty in runs without).
    continued: Vec<FlowId>,
    /// Every flow's header fields, kept only for a packet capture (which writes the frames
    /// of finished flows too).
    wires: Option<Vec<FlowWire>>,
    /// Finished flows' whole records, kept only when asked (tests and diagnostics).
    retired: Option<Vec<Flow>>,
    /// Finished reliable flows, one bit per flow id: their receivers still answer late
    /// data with an ACK (`answers_late`).
    late_acks: Vec<u64>,
    /// A partition of a split run that keeps its rows to the end: where each flow's row is
    /// in `rows` (`NO_ROW`: a flow passing through, neither end here). A partition holds rows
    /// of its own hosts' flows only, so that memory grows with flows, not partitions x flows
    /// (seed 004's 6.9 M flows took 20.9 GB on 16 threads when every partition kept a row
    /// of every flow).
    row_of: Option<Vec<u32>>,
    /// A partition of a split run: drops of the flows it holds no row of (neither end is
    /// here), until their rows are handed out (streamed) or to the end.
    passing_drops: rustc_hash::FxHashMap<FlowId, u32>,
}

/// `row_of`'s mark of a flow with no row here.
const NO_ROW: u32 = u32::MAX;

impl FlowTable {
    /// Flows started so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.started
    }
    pub fn is_empty(&self) -> bool {
        self.started == 0
    }
    fn streamed(&self) -> bool {
        self.outstanding.is_some()
    }
    /// Flows passing through (`pass`) get no row: their drops are kept aside. A streamed
    /// table never gives them one; a default table does unless `own_rows_only`.
    fn passing_rowless(&self) -> bool {
        self.outstanding.is_some() || self.row_of.is_some()
    }
    /// A partition of a split run: keep rows of the flows this table starts (`start`), none
    /// of those passing through (`pass`); before any flow starts.
    pub fn own_rows_only(&mut self) {
        debug_assert!(self.is_empty());
        if !self.streamed() {
            self.row_of.get_or_insert_with(Vec::new);
        }
    }
    /// Hand rows out as they become final (`take_final`) instead of keeping them all; before
    /// any flow starts.
    pub fn stream(&mut self) {
        debug_assert!(self.is_empty());
        self.outstanding.get_or_insert_with(Vec::new);
        // (its rows are by slot, none passing)
        self.row_of = None;
    }
    /// The slot holding flow `f`'s record or waiting row (streamed), if any.
    #[inline(always)]
    fn held_slot(&self, f: FlowId) -> Option<u32> {
        match self.slot_of.get((f as usize).wrapping_sub(self.base)) {
            Some(&s) if s != GONE => Some(s & !DONE),
            _ => None,
        }
    }
    /// A packet of flow `f` (or about it: a mechanism's message) entered the network.
    #[inline(always)]
    pub fn packet_made(&mut self, f: FlowId) {
        if self.outstanding.is_some() {
            if let Some(s) = self.held_slot(f) {
                let n = &mut self.outstanding.as_mut().unwrap()[s as usize];
                *n = n.wrapping_add(1);
            }
        }
    }
    /// A packet of flow `f` left the network (delivered, consumed or dropped).
    ///
    /// Wrapping: a partition of a split run counts only the packets made and gone in it (a
    /// frame that crosses partitions is made in one and gone in another), so its count can
    /// go below zero; a split run decides finality from every partition's counts together
    /// (`Part::packet`), never from this table's.
    #[inline(always)]
    pub fn packet_gone(&mut self, f: FlowId) {
        if self.outstanding.is_some() {
            if let Some(s) = self.held_slot(f) {
                let n = &mut self.outstanding.as_mut().unwrap()[s as usize];
                *n = n.wrapping_sub(1);
            }
        }
    }
    /// A streamed table's flows whose rows are final and not handed out yet, in id order:
    /// finished, or spent (a datagram flow that lost a datagram and will never finish), with
    /// no packet of theirs left in the network. Rows go out as they become final, so the
    /// order of the flows table is that of `take_final`'s calls, each in id order.
    pub fn take_final(&self) -> Vec<usize> {
        let Some(out) = &self.outstanding else {
            return Vec::new();
        };
        let mut ids: Vec<usize> = Vec::new();
        for (s, fl) in self.live.iter().enumerate() {
            if fl.id == GONE || out[s] > 0 {
                continue;
            }
            let f = fl.id as usize;
            let done = self.slot_of[f - self.base] & DONE != 0;
            if done || (!fl.in_ready && fl.sender.spent(fl.size)) {
                ids.push(f);
            }
        }
        ids.sort_unstable();
        ids
    }
    /// Forget the rows of `ids` (handed out: from `take_final`) and free their slots.
    pub fn forget(&mut self, ids: &[usize]) {
        for &f in ids {
            // (a spent flow's counters are still on its record)
            self.with_loss_out += (self.row(f as FlowId, |_| 0).drops > 0) as usize;
            let i = f - self.base;
            let s = self.slot_of[i] & !DONE;
            self.slot_of[i] = GONE;
            self.live[s as usize] = Flow::vacant(GONE);
            self.free.push(s);
        }
        // the map drops its prefix of handed-out flows once that is most of it
        let k = self.slot_of.iter().position(|&s| s != GONE).unwrap_or(self.slot_of.len());
        if k > 0 && 2 * k >= self.slot_of.len() {
            self.slot_of.drain(..k);
            self.base += k;
        }
    }
    /// The flows whose rows are still held (all but those handed out), in id order.
    pub fn held(&self) -> Vec<usize> {
        let streamed = self.streamed();
        (self.base..self.started).filter(|&f| !streamed || self.slot_of[f - self.base] != GONE).collect()
    }
    /// The oldest flow not handed out (every one below it was).
    pub fn first_held(&self) -> usize {
        self.base
    }
    /// The oldest flow whose row this table holds (`len()` if none): in a partition of a
    /// split run, where flows passing through are never held, it can be above `first_held`.
    pub fn oldest_held(&self) -> usize {
        self.slot_of.iter().position(|&s| s != GONE).map_or(self.started, |i| self.base + i)
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
        debug_assert_eq!(flow.id as usize, self.started);
        self.started += 1;
        let row = FlowRow { size: flow.size, start: flow.start, ideal: flow.ideal, src: flow.src, dst: flow.dst, tag: flow.tag, prio: flow.prio, ..FlowRow::default() };
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
        if let Some(out) = &mut self.outstanding {
            if out.len() < self.live.len() {
                out.resize(self.live.len(), 0);
                self.rows.resize(self.live.len(), FlowRow::default());
            }
            self.rows[slot as usize] = row;
        } else {
            if let Some(m) = &mut self.row_of {
                m.push(self.rows.len() as u32);
            }
            self.rows.push(row);
        }
        self.slot_of.push(slot);
        slot
    }

    /// The slot of flow `f` while it is in flight.
    #[inline(always)]
    pub fn slot(&self, f: FlowId) -> Option<u32> {
        match self.slot_of.get((f as usize).wrapping_sub(self.base)) {
            Some(&s) if s < DONE => Some(s),
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
    /// Where flow `f`'s row is in `rows`, if it is still held (by default rows stay by id;
    /// a streamed table's wait in their slots until handed out).
    #[inline]
    fn held_row(&self, f: FlowId) -> Option<usize> {
        let i = (f as usize).wrapping_sub(self.base);
        match (self.streamed(), &self.row_of) {
            (true, _) => self.held_slot(f).map(|s| s as usize),
            (false, None) => Some(i).filter(|&i| i < self.rows.len()),
            (false, Some(m)) => m.get(i).copied().filter(|&r| r != NO_ROW).map(|r| r as usize),
        }
    }
    /// Where flow `f`'s row is (not handed out).
    fn row_index(&self, f: FlowId) -> usize {
        self.held_row(f).expect("a row not handed out")
    }

    /// Flow `f` finished at `end` with `delivered` bytes: its row takes its outcome and its
    /// record is released (by default its slot is freed; a streamed table's keeps the row
    /// until it is handed out); returns its record.
    pub fn finish(&mut self, f: FlowId, end: SimTime, delivered: u64) -> Flow {
        self.release(f, Some((end, delivered)))
    }

    /// A partition of a run split over threads (engine/parallel.rs) is done with its half
    /// of flow `f` before the flow finishes elsewhere: a receiver that holds every byte,
    /// or a datagram source that has sent every byte. Its row keeps the counters this half
    /// made (drops, marks, retransmissions; the run sums the partitions' rows) and, for a
    /// reliable flow, its receiver answers late data as a finished flow's does.
    pub fn retire(&mut self, f: FlowId) {
        self.release(f, None);
    }

    /// A started flow that neither end of is in this partition (engine/parallel.rs): it
    /// takes its id and no record; a row (which drops in this partition's switches count
    /// on) only in a default table not `own_rows_only` (else its drops are kept aside);
    /// and, for a capture, its header fields (`wire`).
    pub fn pass(&mut self, row: FlowRow, wire: impl FnOnce() -> FlowWire) {
        self.started += 1;
        if let Some(w) = &mut self.wires {
            // (a capture at this partition's ports may see its frames)
            w.push(wire());
        }
        if let Some(m) = &mut self.row_of {
            m.push(NO_ROW);
        } else if !self.streamed() {
            self.rows.push(row);
        }
        self.slot_of.push(GONE);
    }

    /// Whether flow `f`'s row is held here (not handed out; in a streamed partition, not
    /// passing).
    pub fn holds(&self, f: FlowId) -> bool {
        self.held_row(f).is_some()
    }

    /// Flow `f`'s row as `row` gives it, or (a partition that holds none: a flow passing
    /// through) an empty one with the drops counted here.
    pub fn row_or_passing(&self, f: FlowId, delivered: impl FnOnce(&Flow) -> u64) -> FlowRow {
        match self.held_row(f) {
            Some(_) => self.row(f, delivered),
            None => FlowRow { drops: self.passing_drops.get(&f).copied().unwrap_or(0), ..FlowRow::default() },
        }
    }

    /// Forget the drops kept aside for passing flows `ids` (their rows were handed out).
    pub fn forget_passing(&mut self, ids: &[usize]) {
        if !self.passing_drops.is_empty() {
            for &f in ids {
                self.passing_drops.remove(&(f as FlowId));
            }
        }
    }

    fn release(&mut self, f: FlowId, outcome: Option<(SimTime, u64)>) -> Flow {
        let i = f as usize - self.base;
        let s = self.slot_of[i];
        debug_assert!(s < DONE, "flow {f} finished twice");
        let r = self.row_index(f);
        let fl = &self.live[s as usize];
        // a reliable sender (one that takes ACKs) finishes after its receiver held every byte
        let reliable = fl.sender.acked().is_some();
        let r = &mut self.rows[r];
        r.drops = fl.drops;
        r.ecn_marks = fl.ecn_marks;
        r.retx = fl.retx;
        if let Some((end, delivered)) = outcome {
            r.end = end;
            r.delivered = delivered;
            r.finished = true;
        }
        if self.streamed() {
            self.slot_of[i] = DONE | s;
        } else {
            self.slot_of[i] = GONE;
            self.free.push(s);
        }
        if reliable {
            self.answer_late(f);
        }
        // the slot keeps a husk (its id) until reused: the sender, receiver and buffers go now
        let husk = self.live[s as usize].husk();
        let fl = std::mem::replace(&mut self.live[s as usize], husk);
        if !self.streamed() {
            if let Some(r) = &mut self.retired {
                r.push(fl.clone());
            }
        }
        fl
    }

    /// A packet of flow `f` was dropped (finished flows count it too: a late retransmission).
    #[inline]
    pub fn count_drop(&mut self, f: FlowId) {
        match self.slot(f) {
            Some(s) => self.live[s as usize].drops += 1,
            None => match self.held_row(f) {
                Some(i) => self.rows[i].drops += 1,
                // a partition's passing flow (in a streamed one a drop of a handed-out flow
                // cannot happen: its row went out once none of its packets was left)
                None if self.passing_rowless() && f != FlowId::MAX => *self.passing_drops.entry(f).or_default() += 1,
                None => {}
            },
        }
    }

    /// Finished flow `f` was reliable: its receiver, which held every byte before the
    /// sender could finish, answers late data from now on.
    fn answer_late(&mut self, f: FlowId) {
        let i = f as usize;
        if self.late_acks.len() <= i / 64 {
            self.late_acks.resize(i / 64 + 1, 0);
        }
        self.late_acks[i / 64] |= 1 << (i % 64);
    }

    /// The size of finished flow `f` if its receiver answers late data (its cumulative
    /// ACK); None for a datagram flow or one whose row is gone.
    pub fn answers_late(&self, f: FlowId) -> Option<u64> {
        let i = f as usize;
        if self.late_acks.get(i / 64).is_none_or(|w| w >> (i % 64) & 1 == 0) {
            return None;
        }
        self.held_row(f).map(|r| self.rows[r].size)
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
        let mut r = self.rows[self.row_index(f)];
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
        self.slot_of.iter().filter(|&&s| s < DONE).map(|&s| &self.live[s as usize])
    }
    /// Every flow's whole record, in id order: the retired ones (with `keep_retired`; else
    /// none) and those in flight.
    pub fn records(&self) -> Vec<&Flow> {
        let mut all: Vec<&Flow> = self.retired.iter().flatten().chain(self.live()).collect();
        all.sort_by_key(|f| f.id);
        all
    }
    /// Bytes the table holds per flow ever started by default (its row and map entry), for
    /// the docs and the memory estimate; a streamed table holds only the map entry.
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

    /// A streamed table hands a row out once its flow has finished and its last packet has
    /// left, whatever the flows before it do, and forgets it; the others keep their ids,
    /// counters and rows.
    #[test]
    fn final_rows_wait_for_late_packets_not_for_earlier_flows() {
        let mut t = FlowTable::default();
        t.stream();
        for id in 0..3 {
            t.start(started(id, 100));
        }
        t.packet_made(0);
        t.packet_made(1);
        t.packet_made(FlowId::MAX); // a frame about no flow
        t.finish(1, SimTime(5), 100);
        assert_eq!(t.take_final(), Vec::<usize>::new(), "a packet of flow 1 is still out");
        t.count_drop(1);
        t.packet_gone(1);
        assert_eq!(t.take_final(), vec![1], "flow 0 still runs: flow 1 goes first");
        assert_eq!(t.row(1, |_| 0).drops, 1, "the late drop counts on the row");
        assert!(t.slot(1).is_none() && t.get(1).is_none(), "finished: no record");
        t.forget(&[1]);
        assert_eq!((t.len(), t.first_held(), t.with_loss_handed_out()), (3, 0, 1));
        assert_eq!(t.held(), vec![0, 2]);
        // flow 3 reuses flow 1's slot
        assert_eq!(t.start(started(3, 100)), 1);
        t.finish(0, SimTime(7), 100);
        t.packet_gone(0);
        t.finish(3, SimTime(9), 100);
        assert_eq!(t.take_final(), vec![0, 3]);
        t.forget(&[0, 3]);
        assert_eq!((t.first_held(), t.held()), (2, vec![2]), "the map drops its handed-out prefix");
        assert_eq!(t.row(2, |_| 9).delivered, 9);
    }
}
