//! The event queue, ordered by (time, tie key, insertion sequence): events at equal
//! times run in the order of a key that is a function of the event alone (what it is and
//! where it happens, `Tie`), and only events of equal key in the order they were scheduled
//! (docs/parallel.md: the order must not depend on how a run is split). Events are small `Copy` values; the payload enum lives in
//! `engine/mod.rs`.

use super::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The tie-break of events at equal times: a key that depends on the event alone, never on
/// when or by whom it was scheduled.
///
/// Why: a run split over partitions (docs/parallel.md) schedules a partition's events in
/// an order no other partitioning reproduces, and insertion order would make results
/// depend on the partitioning. Ordered by (time, key), each node sees its own events in one
/// canonical order whatever the split. Events of equal key and time keep insertion order,
/// which stays canonical as long as such events are scheduled by one node (a port's
/// arrivals by its peer, its timers by its owner, a flow's timers by its source).
pub trait Tie {
    fn tie(&self) -> u64;
}

/// Deterministic discrete-event queue: a calendar queue (Brown, CACM 1988)
/// in the form of hierarchical timing wheels (Varghese and Lauck, SOSP 1987).
///
/// Time is cut into slots of 2^`slot_bits` ps. Events within the next
/// `WHEEL` slots go unsorted into their slot, in O(1). Later ones (timers, pause
/// expiries, future flow arrivals) go unsorted into a bucket of a second wheel of
/// `BUCKETS` buckets of `WHEEL / 2` slots each, in O(1), and a bucket is handed to the
/// first wheel as the current slot reaches the bucket before it; only events past the
/// second wheel's span wait in a binary heap. When a slot becomes current its events are
/// sorted by (time, tie key, insertion sequence) (`Tie`). Packet events cluster a few
/// microseconds ahead of now, where a binary heap pays log(n) cache misses per push and
/// pop; so do the timers of a fabric with many flows in flight (seed 004's growth study
/// at 640 hosts, 0.3 ms of PFC + DCQCN: a fifth of its time popped the heap of timers).
pub struct EventQueue<E> {
    slot_bits: u32,
    /// Events of the current slot, ascending by (time, tie, seq); `pos` is the next to pop.
    current: Vec<Near<E>>,
    pos: usize,
    cur_slot: u64,
    /// The current slot's start time (`cur_slot << slot_bits`): every pop adds an offset.
    cur_base: u64,
    wheel: Vec<Vec<Near<E>>>,
    /// Emptied slot buffers, the most recently emptied last. A slot takes one when its
    /// first event comes: that buffer was read moments ago and is still cached, where a
    /// buffer that stayed with its slot (emptied a turn of the wheel earlier, 4 us of
    /// simulated time) has left the cache on a large fabric, and every line of it written
    /// again was a write miss (most of the k = 20 run's).
    pool: Vec<Vec<Near<E>>>,
    /// Scratch space of the sorts of slots.
    spare: Vec<Near<E>>,
    /// Bit (slot % WHEEL) set when that wheel slot is non-empty.
    occupied: Vec<u64>,
    /// Events on the first wheel are before this slot: the end of the last bucket handed
    /// to it (`handed`), between `WHEEL / 2` and `WHEEL` slots past the current one. Kept,
    /// not derived from `handed` in every push: derived, the k = 8 bench ran 0.7% more
    /// instructions (9,186 M against 9,120 M).
    wheel_end: u64,
    /// The last bucket handed to the first wheel (bucket n holds slots
    /// `n << BUCKET_BITS ..`); the second wheel holds buckets `handed + 1 ..= handed +
    /// BUCKETS`.
    handed: u64,
    /// The second wheel's buckets, each in push order.
    buckets: Vec<Vec<Timed<E>>>,
    /// Bit (bucket % BUCKETS) set when that bucket is non-empty.
    bucket_occupied: Vec<u64>,
    /// Events past the second wheel's span.
    far: BinaryHeap<Far<E>>,
    /// Events popped so far; `seq - popped` are queued. Not a length that push and pop both
    /// update: the compiler then loads it with `seq` as one 16-byte vector in push, which
    /// stalls on forwarding from pop's 8-byte store (a tenth of the k = 20 transmit path).
    popped: u64,
    seq: u64,
    /// The processor has AVX2 (and POPCNT): small slots sort with them (`rank_sort_avx2`).
    avx2: bool,
}

/// An event on the wheel: its time as the offset into its slot, and no sequence number.
/// A slot's vector receives its events in sequence order (the far events of the slot move
/// onto the wheel, in (time, seq) order, before the wheel's horizon lets any other event
/// in; later events have later sequence numbers), so a stable sort by offset and then by
/// tie key within runs of equal offsets gives the (time, tie, seq) order. Half the size of (time, seq, event): the wheel holds every
/// packet in flight, and on large fabrics it outgrows the cache.
#[derive(Clone, Copy)]
struct Near<E>(u32, E);

/// 2048 slots of 1/16 frame (4.096 ns at 100G, the engine's choice) span 8.4 us, past a
/// link delay plus a frame on the usual fabrics. Slot buffers keep the largest size they
/// have held and pass through `pool` between slots, so the wheel's memory follows the
/// events it holds (before the pool each slot kept its own buffer, and 4096 slots of
/// 2.048 ns cost k = 16 6.5 MB more).
const WHEEL: usize = 2048;

/// A bucket of the second wheel spans 2^BUCKET_BITS slots, half the first wheel: a bucket
/// handed over when the current slot enters the bucket before it then lies wholly within
/// the first wheel's span, whose slots it cannot alias.
const BUCKET_BITS: u32 = WHEEL.trailing_zeros() - 1;

/// 4096 buckets of 1024 slots span 17 ms at 100 Gbps (4.3 ms at 400 Gbps): past the usual
/// timers (DCQCN's 55 us, a retransmission timer of a millisecond, a PAUSE of 335 us).
const BUCKETS: usize = 4096;

/// Events of the next slot prefetched when a slot is loaded (a dozen cache lines).
const PREFETCH_EVENTS: usize = 40;

/// Slots with more events than this are sorted by radix: on large fabrics a slot holds
/// dozens of events, where a comparison sort cost 7% of the run (k = 20 bench); below it,
/// the rank sort (`rank_sort`) wins.
const RADIX_FROM: usize = 24;

/// Stable LSD radix sort of `v` by offset (`bits` significant bits), in passes of at most
/// 6 bits (64 counters), with `spare` as the second buffer.
fn radix_sort<E: Copy>(v: &mut Vec<Near<E>>, spare: &mut Vec<Near<E>>, bits: u32) {
    match bits.div_ceil(6) {
        0 | 1 => radix_passes::<1, E>(v, spare, bits),
        2 => radix_passes::<2, E>(v, spare, bits),
        3 => radix_passes::<3, E>(v, spare, bits),
        4 => radix_passes::<4, E>(v, spare, bits),
        5 => radix_passes::<5, E>(v, spare, bits),
        _ => radix_passes::<6, E>(v, spare, bits),
    }
}

/// `radix_sort` in `P` passes. Every pass's counts come from one read of the slot (not a
/// read a pass), and a pass writes every place of the other buffer, so that buffer is not
/// filled beforehand.
#[inline(always)]
fn radix_passes<const P: usize, E: Copy>(v: &mut Vec<Near<E>>, spare: &mut Vec<Near<E>>, bits: u32) {
    let width = bits.div_ceil(P as u32).max(1);
    let mask = (1u32 << width) - 1;
    let n = v.len();
    let mut at = [[0u32; 64]; P];
    for e in v.iter() {
        for (p, c) in at.iter_mut().enumerate() {
            c[((e.0 >> (p as u32 * width)) & mask) as usize] += 1;
        }
    }
    for c in at.iter_mut() {
        let mut sum = 0;
        for c in c.iter_mut() {
            let k = *c;
            *c = sum;
            sum += k;
        }
    }
    spare.clear();
    spare.reserve(n);
    for (p, c) in at.iter_mut().enumerate() {
        let shift = p as u32 * width;
        let to = spare.as_mut_ptr();
        for &e in v.iter() {
            let d = &mut c[((e.0 >> shift) & mask) as usize];
            // SAFETY: the counts are the prefix sums of this pass's digits over `v`, so
            // each of the `n` places below `spare`'s capacity is written once
            unsafe { to.add(*d as usize).write(e) };
            *d += 1;
        }
        // SAFETY: all `n` places written above (`Near` is `Copy`: nothing to drop)
        unsafe { spare.set_len(n) };
        std::mem::swap(v, spare);
    }
}

/// Stable sort of a small slot by offset, without a data-dependent branch: each event goes
/// to its rank, the number of (offset, position) keys below its own, counted over `W` keys
/// (the slot's, then keys above any) so that the count's loop has a fixed length.
/// Insertion sort's compares of random offsets mispredicted about once per event, a fifth
/// of k = 8's mispredicted branches; so did a count over the slot's own length.
#[inline(always)]
fn rank_sort<const W: usize, E: Copy>(v: &mut Vec<Near<E>>, spare: &mut Vec<Near<E>>) {
    debug_assert!(v.len() <= W && W <= 32);
    // signed 32-bit keys (offset, at most 26 bits, above 5 bits of position): a signed
    // compare is one instruction on SSE2, where an unsigned one takes three
    let mut keys = [i32::MAX; W];
    for (k, (i, e)) in keys.iter_mut().zip(v.iter().enumerate()) {
        *k = (e.0 << 5 | i as u32) as i32;
    }
    spare.clear();
    spare.extend_from_slice(v);
    for (&k, &e) in keys.iter().zip(v.iter()) {
        let rank = keys.iter().map(|&o| (o < k) as u32).sum::<u32>();
        spare[rank as usize] = e;
    }
    std::mem::swap(v, spare);
}

/// `rank_sort` out of line, for the baseline x86-64 (SSE2: the count compares 4 keys at a
/// time) or, where the processor has it (`EventQueue::avx2`), AVX2 (8 at a time, and a
/// population count of the compare's mask). The same integer steps either way, so the
/// same order.
#[inline(never)]
fn rank_sort_sse<const W: usize, E: Copy>(v: &mut Vec<Near<E>>, spare: &mut Vec<Near<E>>) {
    rank_sort::<W, E>(v, spare)
}
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
#[inline(never)]
unsafe fn rank_sort_avx2<const W: usize, E: Copy>(v: &mut Vec<Near<E>>, spare: &mut Vec<Near<E>>) {
    rank_sort::<W, E>(v, spare)
}

/// Stable sort of each run of equal offsets in `v` (sorted by offset) by tie key: runs
/// are short (events at the very same picosecond), so an insertion sort. Most equal
/// offsets are already in key order (k = 16 bench: 2.3 M of 12.8 M are not), so the keys
/// are compared here and only an event out of order is moved, out of line.
#[inline(always)]
fn order_ties<E: Copy + Tie>(v: &mut [Near<E>]) {
    for i in 1..v.len() {
        if v[i].0 == v[i - 1].0 {
            let k = v[i].1.tie();
            if v[i - 1].1.tie() > k {
                tie_at(v, i, k);
            }
        }
    }
}

/// Move `v[i]` (tie key `k`) back past the earlier events of its offset whose key is
/// larger.
#[inline(never)]
fn tie_at<E: Copy + Tie>(v: &mut [Near<E>], i: usize, k: u64) {
    let mut j = i;
    let e = v[i];
    while j > 0 && v[j - 1].0 == e.0 && v[j - 1].1.tie() > k {
        v[j] = v[j - 1];
        j -= 1;
    }
    v[j] = e;
}

/// How far past bit `start` of a wheel's occupancy bits (a ring of `64 * WORDS`) the first
/// set bit lies, `start` included. (`WORDS` a constant, so that the ring's wrap is a mask.)
#[inline(always)]
fn first_set_from<const WORDS: usize>(bits: &[u64], start: usize) -> Option<usize> {
    let (words, len) = (WORDS, WORDS * 64);
    for k in 0..=words {
        let w = ((start >> 6) + k) % words;
        let mut b = bits[w];
        if k == 0 {
            b &= !0u64 << (start & 63);
        }
        if k == words {
            b &= !(!0u64 << (start & 63));
        }
        if b != 0 {
            let i = (w << 6) + b.trailing_zeros() as usize;
            return Some((i + len - start) % len);
        }
    }
    None
}

/// An event of the second wheel: its time. Its bucket holds events in push order, which is
/// sequence order.
#[derive(Clone, Copy)]
struct Timed<E>(u64, E);

/// An event past the second wheel: its time and sequence number.
struct Far<E>(u64, u64, E);
impl<E> PartialEq for Far<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.0, self.1) == (o.0, o.1)
    }
}
impl<E> Eq for Far<E> {}
impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Far<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.0, o.1).cmp(&(self.0, self.1)) // min-heap
    }
}

impl<E: Copy + Tie> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy + Tie> EventQueue<E> {
    /// Slots of 4.096 ns, the engine's choice at 100 Gbps (1/16 of a 1500 B frame, rounded
    /// down to a power of two).
    pub fn new() -> Self {
        Self::with_slot_bits(12)
    }
    /// Slots of 2^bits picoseconds (at most 2^32: offsets are 32 bits). Pick about
    /// 1/16..1/32 of the shortest frame time.
    pub fn with_slot_bits(bits: u32) -> Self {
        EventQueue {
            slot_bits: bits.clamp(1, 32),
            current: Vec::new(),
            pos: 0,
            cur_slot: 0,
            cur_base: 0,
            wheel: (0..WHEEL).map(|_| Vec::new()).collect(),
            pool: Vec::new(),
            spare: Vec::new(),
            occupied: vec![0; WHEEL / 64],
            wheel_end: 2 << BUCKET_BITS,
            handed: 1,
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            bucket_occupied: vec![0; BUCKETS / 64],
            far: BinaryHeap::new(),
            popped: 0,
            seq: 0,
            #[cfg(target_arch = "x86_64")]
            avx2: std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt"),
            #[cfg(not(target_arch = "x86_64"))]
            avx2: false,
        }
    }
    #[inline(always)]
    fn offset(&self, t: u64) -> u32 {
        (t & ((1u64 << self.slot_bits) - 1)) as u32
    }
    #[inline(always)]
    fn place(&mut self, t: u64, seq: u64, ev: E) {
        let s = t >> self.slot_bits;
        let off = self.offset(t);
        if s == self.cur_slot {
            // seq is the largest yet: the new event goes after every event at or before
            // (t, tie); only events at t itself need their keys
            let tie = ev.tie();
            let at = self.pos + self.current[self.pos..].partition_point(|e| e.0 < off || (e.0 == off && e.1.tie() <= tie));
            self.current.insert(at, Near(off, ev));
        } else if s < self.wheel_end {
            self.wheel_push(s, off, ev);
        } else if (s >> BUCKET_BITS) <= self.handed + BUCKETS as u64 {
            let i = (s >> BUCKET_BITS) as usize & (BUCKETS - 1);
            self.buckets[i].push(Timed(t, ev));
            self.bucket_occupied[i >> 6] |= 1 << (i & 63);
        } else {
            self.far.push(Far(t, seq, ev));
        }
    }
    /// Onto the first wheel, at slot `s` (after the current one, before `wheel_end`).
    #[inline(always)]
    fn wheel_push(&mut self, s: u64, off: u32, ev: E) {
        let i = (s as usize) & (WHEEL - 1);
        let slot = &mut self.wheel[i];
        if slot.capacity() == 0 {
            if let Some(b) = self.pool.pop() {
                *slot = b;
            }
        }
        slot.push(Near(off, ev));
        self.occupied[i >> 6] |= 1 << (i & 63);
    }
    /// Onto the first wheel or, at the current slot, at the end of `current`, which
    /// `load_next_slot` sorts next.
    #[inline(always)]
    fn hand_one(&mut self, t: u64, ev: E) {
        let (s, off) = (t >> self.slot_bits, self.offset(t));
        if s == self.cur_slot {
            self.current.push(Near(off, ev));
        } else {
            self.wheel_push(s, off, ev);
        }
    }
    /// Hand bucket `handed + 1` to the first wheel: first its events still in the heap
    /// (pushed while it lay past the second wheel, so before any in the bucket), in (time,
    /// sequence) order, then the bucket's in push order. Each slot then receives its events
    /// in sequence order, as the first wheel's sort needs.
    fn hand_next_bucket(&mut self) {
        self.handed += 1;
        self.wheel_end = (self.handed + 1) << BUCKET_BITS;
        while let Some(f) = self.far.peek() {
            if f.0 >> self.slot_bits >= self.wheel_end {
                break;
            }
            let Far(t, _, ev) = self.far.pop().unwrap();
            self.hand_one(t, ev);
        }
        let i = self.handed as usize & (BUCKETS - 1);
        if self.bucket_occupied[i >> 6] & (1 << (i & 63)) != 0 {
            self.bucket_occupied[i >> 6] &= !(1 << (i & 63));
            // freed, not kept for another bucket: a bucket of a burst of timers would keep
            // its size for good
            for Timed(t, ev) in std::mem::take(&mut self.buckets[i]) {
                self.hand_one(t, ev);
            }
        }
    }
    /// The first non-empty bucket of the second wheel, as an absolute bucket number.
    fn next_bucket(&self) -> Option<u64> {
        first_set_from::<{ BUCKETS / 64 }>(&self.bucket_occupied, (self.handed as usize + 1) & (BUCKETS - 1)).map(|off| self.handed + 1 + off as u64)
    }
    /// With the first wheel empty: the earliest slot of the second wheel and the heap, or
    /// (`exact` false) a slot at or before it without reading a bucket's events.
    fn next_beyond_wheel(&self, exact: bool) -> Option<u64> {
        let heap = self.far.peek().map(|f| f.0 >> self.slot_bits);
        match self.next_bucket() {
            Some(c) if heap.is_none_or(|h| h >> BUCKET_BITS >= c) => {
                if !exact {
                    return Some(c << BUCKET_BITS);
                }
                let i = c as usize & (BUCKETS - 1);
                let first = self.buckets[i].iter().map(|e| e.0).min().unwrap() >> self.slot_bits;
                Some(heap.map_or(first, |h| h.min(first)))
            }
            _ => heap,
        }
    }
    #[inline(always)]
    pub fn push(&mut self, t: SimTime, ev: E) {
        debug_assert!(t.0 >> self.slot_bits >= self.cur_slot, "event scheduled in the past");
        let seq = self.seq;
        self.seq += 1;
        self.place(t.0, seq, ev);
    }
    /// Next occupied wheel slot at or after the current one, as an absolute slot number.
    fn next_wheel_slot(&self) -> Option<u64> {
        first_set_from::<{ WHEEL / 64 }>(&self.occupied, self.cur_slot as usize & (WHEEL - 1)).map(|off| self.cur_slot + off as u64)
    }
    /// Make `current` hold an event if any event exists.
    #[inline(always)]
    fn settle(&mut self) -> bool {
        self.pos < self.current.len() || self.load_next_slot()
    }

    /// The current slot is used up: turn the wheel to the next occupied slot.
    #[inline(never)]
    fn load_next_slot(&mut self) -> bool {
        if self.current.capacity() > 0 {
            self.current.clear();
            self.pool.push(std::mem::take(&mut self.current));
        }
        self.pos = 0;
        if self.is_empty() {
            return false;
        }
        // events on the first wheel come before any beyond it
        let Some(next) = self.next_wheel_slot().or_else(|| self.next_beyond_wheel(true)) else {
            return false;
        };
        self.cur_slot = next;
        self.cur_base = next << self.slot_bits;
        let i = (next as usize) & (WHEEL - 1);
        if self.occupied[i >> 6] & (1 << (i & 63)) != 0 {
            self.occupied[i >> 6] &= !(1 << (i & 63));
            std::mem::swap(&mut self.current, &mut self.wheel[i]);
        }
        if self.current.capacity() == 0 {
            if let Some(b) = self.pool.pop() {
                self.current = b;
            }
        }
        // the wheel turned: hand it the bucket after the current slot's. Past a jump over
        // empty buckets (the first wheel was empty) the buckets skipped hold nothing, nor
        // does the heap before `next`.
        let bucket = next >> BUCKET_BITS;
        if self.handed + 1 < bucket {
            self.handed = bucket - 1;
        }
        while self.handed <= bucket {
            self.hand_next_bucket();
        }
        // the next slot's events were written a link delay ago: on a large fabric they have
        // left the cache since, and its first read would stall the wheel's next turn
        let next = &self.wheel[(i + 1) & (WHEEL - 1)];
        let (n, step) = (next.len().min(PREFETCH_EVENTS), (64 / std::mem::size_of::<Near<E>>()).max(1));
        let mut k = 0;
        while k < n {
            super::prefetch(next, k as u32);
            k += step;
        }
        // a slot is often already in order; stable, so equal times keep sequence order
        if !self.current.is_sorted_by_key(|e| e.0) {
            match self.current.len() {
                n if n > RADIX_FROM => radix_sort(&mut self.current, &mut self.spare, self.slot_bits),
                _ if self.slot_bits > 26 => self.current.sort_by_key(|e| e.0),
                n => self.rank_sort(n),
            }
        }
        order_ties(&mut self.current);
        true
    }
    /// Sort the current slot of `n` events (at most `RADIX_FROM`) by rank.
    #[inline(always)]
    fn rank_sort(&mut self, n: usize) {
        let (v, spare) = (&mut self.current, &mut self.spare);
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: the processor has AVX2 (detected in `with_slot_bits`)
            unsafe {
                match n {
                    0..=8 => rank_sort_avx2::<8, E>(v, spare),
                    9..=16 => rank_sort_avx2::<16, E>(v, spare),
                    _ => rank_sort_avx2::<RADIX_FROM, E>(v, spare),
                }
            }
            return;
        }
        match n {
            0..=8 => rank_sort_sse::<8, E>(v, spare),
            9..=16 => rank_sort_sse::<16, E>(v, spare),
            _ => rank_sort_sse::<RADIX_FROM, E>(v, spare),
        }
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if !self.settle() {
            return None;
        }
        let Near(off, e) = self.current[self.pos];
        self.pos += 1;
        self.popped += 1;
        Some((SimTime(self.cur_base | off as u64), e))
    }
    /// The next event if it is due by `limit`; else, left queued, the time it is due
    /// (`None`: no event is left). The engine's loop in one call, not a peek and a pop.
    #[inline]
    pub fn pop_by(&mut self, limit: SimTime) -> Result<(SimTime, E), Option<SimTime>> {
        if !self.settle() {
            return Err(None);
        }
        let Near(off, e) = self.current[self.pos];
        let t = SimTime(self.cur_base | off as u64);
        if t > limit {
            return Err(Some(t));
        }
        self.pos += 1;
        self.popped += 1;
        Ok((t, e))
    }
    /// As `pop_by`, but the wheel never turns to a slot that starts after `limit`, so that
    /// events may still be pushed at any time after `limit`: a partitioned run's frames from
    /// other threads, which arrive once this partition has run up to the window's end
    /// (engine/parallel.rs). Err(Some(t)): no event is due by `limit`, and none is due
    /// before `t` (the next event's time, or the start of its slot).
    #[inline]
    pub fn pop_within(&mut self, limit: SimTime) -> Result<(SimTime, E), Option<SimTime>> {
        if self.pos >= self.current.len() {
            let next = match self.next_wheel_slot() {
                Some(n) => n,
                // a bound first, so that a partition idle to a timer does not read the
                // timer's bucket every window; the exact slot before the wheel turns to it
                None => match self.next_beyond_wheel(false) {
                    Some(b) if b << self.slot_bits > limit.0 => b,
                    Some(_) => self.next_beyond_wheel(true).unwrap(),
                    None => return Err(None),
                },
            };
            if next << self.slot_bits > limit.0 {
                return Err(Some(SimTime(next << self.slot_bits)));
            }
        }
        self.pop_by(limit)
    }
    /// The event `n` after the one `pop` returns next (0: that one), if it is already in
    /// the current slot (no wheel turn): lets the caller prefetch what it will touch.
    #[inline(always)]
    pub fn peek_ahead(&self, n: usize) -> Option<&E> {
        self.current.get(self.pos + n).map(|e| &e.1)
    }
    pub fn len(&self) -> usize {
        (self.seq - self.popped) as usize
    }
    pub fn is_empty(&self) -> bool {
        self.seq == self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    // plain values tie by insertion order alone
    impl Tie for char {
        fn tie(&self) -> u64 {
            0
        }
    }
    impl Tie for usize {
        fn tie(&self) -> u64 {
            0
        }
    }
    /// An event with a tie key (its first field) and its insertion index.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Keyed(u8, usize);
    impl Tie for Keyed {
        fn tie(&self) -> u64 {
            self.0 as u64
        }
    }

    #[test]
    fn equal_times_pop_by_tie_key_then_insertion_order() {
        let mut q = EventQueue::new();
        for (i, (t, k)) in [(5, 2), (5, 1), (1, 9), (5, 2), (1, 3), (5, 0)].into_iter().enumerate() {
            q.push(SimTime(t), Keyed(k, i));
        }
        // scheduled at the time being run: after what is due before it in key order
        let (t, first) = q.pop().unwrap();
        assert_eq!((t, first), (SimTime(1), Keyed(3, 4)));
        q.push(SimTime(1), Keyed(1, 6));
        q.push(SimTime(5), Keyed(1, 7));
        let order: Vec<usize> = std::iter::from_fn(|| q.pop().map(|x| x.1 .1)).collect();
        assert_eq!(order, vec![6, 2, 5, 1, 7, 0, 3]);
    }
    /// `pop_by` takes what is due and leaves the rest, across a wheel turn and from the far
    /// heap, telling when the next is due.
    #[test]
    fn pop_by_takes_only_what_is_due() {
        let mut q = EventQueue::new();
        for (t, e) in [(5_000, 'b'), (1, 'a'), (5_000, 'c'), (3 << 40, 'd')] {
            q.push(SimTime(t), e);
        }
        assert_eq!(q.pop_by(SimTime(0)), Err(Some(SimTime(1))));
        assert_eq!(q.pop_by(SimTime(1)), Ok((SimTime(1), 'a')));
        assert_eq!(q.pop_by(SimTime(4_999)), Err(Some(SimTime(5_000))));
        assert_eq!(q.len(), 3);
        assert_eq!(q.pop_by(SimTime(5_000)), Ok((SimTime(5_000), 'b')));
        assert_eq!(q.pop_by(SimTime(5_000)), Ok((SimTime(5_000), 'c')));
        assert_eq!(q.pop_by(SimTime(3 << 39)), Err(Some(SimTime(3 << 40))));
        assert_eq!(q.pop_by(SimTime::MAX), Ok((SimTime(3 << 40), 'd')));
        assert_eq!(q.pop_by(SimTime::MAX), Err(None));
        assert!(q.is_empty());
    }
    /// Events at one time scheduled while it lay past the second wheel (the heap), then in
    /// its span, then on the first wheel, and after a jump of the wheel over empty time:
    /// popped by tie key, then in the order scheduled, whatever held each.
    #[test]
    fn equal_times_keep_their_order_through_both_wheels_and_the_heap() {
        let bits = 11;
        let slot = 1u64 << bits;
        let bucket = slot << BUCKET_BITS;
        let t = (BUCKETS as u64 + 50) * bucket + 77;
        let mut q = EventQueue::with_slot_bits(bits);
        q.push(SimTime(t), Keyed(1, 0)); // past the second wheel: the heap
        q.push(SimTime(t), Keyed(0, 1));
        // a clock event every 3 buckets pulls the wheel along to `t`
        let mut now = 0;
        let mut pushed_in_span = false;
        let mut n = 2;
        while now + 3 * bucket < t {
            q.push(SimTime(now + 3 * bucket), Keyed(9, usize::MAX));
            let (at, e) = q.pop().unwrap();
            assert_eq!(e.1, usize::MAX, "the clock pops before anything at {t}");
            now = at.0;
            if !pushed_in_span && t < now + (BUCKETS as u64 - 2) * bucket {
                q.push(SimTime(t), Keyed(1, n)); // in the second wheel's span
                pushed_in_span = true;
                n += 1;
            }
        }
        q.push(SimTime(t), Keyed(1, n)); // on the first wheel or its next bucket
        q.push(SimTime(t), Keyed(0, n + 1));
        let got: Vec<(u64, u8, usize)> = std::iter::from_fn(|| q.pop().map(|(at, e)| (at.0, e.0, e.1))).collect();
        assert!(pushed_in_span);
        assert_eq!(got, vec![(t, 0, 1), (t, 0, 4), (t, 1, 0), (t, 1, 2), (t, 1, 3)]);
        // a jump: the wheels empty, one event far past them, then one before it
        q.push(SimTime(t + 3 * BUCKETS as u64 * bucket), Keyed(0, 100));
        q.push(SimTime(t + 5), Keyed(0, 101));
        assert_eq!(q.pop().map(|(at, _)| at.0), Some(t + 5));
        assert_eq!(q.pop().map(|(at, _)| at.0), Some(t + 3 * BUCKETS as u64 * bucket));
        assert!(q.is_empty());
    }
    /// `pop_within` never turns the wheel past its limit, so an event may still be pushed
    /// just after the limit when the next one waits in the second wheel or the heap.
    #[test]
    fn pop_within_leaves_room_after_its_limit() {
        for far in [5_000_000u64, 1 << 45] {
            let mut q = EventQueue::new();
            q.push(SimTime(far), 'b');
            let limit = SimTime(far / 2);
            assert!(matches!(q.pop_within(limit), Err(Some(t)) if t > limit && t.0 <= far));
            q.push(SimTime(limit.0 + 1), 'a');
            assert_eq!(q.pop_within(SimTime(far)), Ok((SimTime(limit.0 + 1), 'a')));
            assert_eq!(q.pop_within(SimTime(far)), Ok((SimTime(far), 'b')));
            assert_eq!(q.pop_within(SimTime::MAX), Err(None));
        }
    }
    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), 'a');
        q.push(SimTime(1), 'b');
        q.push(SimTime(5), 'c');
        q.push(SimTime(1), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    #[test]
    fn a_crowded_slot_pops_in_time_then_insertion_order() {
        // 300 events in one future slot (radix-sorted), times repeating so ties are many
        for bits in [5, 11, 13, 32] {
            let mut q = EventQueue::with_slot_bits(bits);
            let base = 1u64 << bits;
            let span = (1u64 << bits).min(97);
            let mut want: Vec<(u64, usize)> = (0..300).map(|i| (base + (i as u64 * 7919) % span, i)).collect();
            for &(t, i) in &want {
                q.push(SimTime(t), i);
            }
            want.sort();
            let got: Vec<(u64, usize)> = std::iter::from_fn(|| q.pop().map(|(t, i)| (t.0, i))).collect();
            assert_eq!(got, want, "slot_bits {bits}");
        }
    }

    proptest::proptest! {
        #![proptest_config(crate::sim::proptest_config(256))]

        /// The small slots' rank sort is the stable sort by offset, at every width it runs
        /// with, ties and offsets up to its 26 bits included.
        #[test]
        fn rank_sort_is_a_stable_sort(offs in proptest::collection::vec(proptest::prop_oneof![0u32..4, 0u32..(1 << 26)], 0..=24)) {
            let v: Vec<Near<usize>> = offs.iter().enumerate().map(|(i, &o)| Near(o, i)).collect();
            let mut want = v.clone();
            want.sort_by_key(|e| e.0);
            let key = |x: &Vec<Near<usize>>| x.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>();
            let mut spare = Vec::new();
            for w in [8, 16, 24, 32] {
                if v.len() > w {
                    continue;
                }
                let mut got = v.clone();
                match w {
                    8 => rank_sort_sse::<8, usize>(&mut got, &mut spare),
                    16 => rank_sort_sse::<16, usize>(&mut got, &mut spare),
                    24 => rank_sort_sse::<24, usize>(&mut got, &mut spare),
                    _ => rank_sort_sse::<32, usize>(&mut got, &mut spare),
                }
                proptest::prop_assert_eq!(key(&got), key(&want), "width {}", w);
                // the AVX2 build of the same sort, where this processor runs it
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt") {
                    let mut got = v.clone();
                    // SAFETY: the processor has AVX2 and POPCNT
                    unsafe {
                        match w {
                            8 => rank_sort_avx2::<8, usize>(&mut got, &mut spare),
                            16 => rank_sort_avx2::<16, usize>(&mut got, &mut spare),
                            24 => rank_sort_avx2::<24, usize>(&mut got, &mut spare),
                            _ => rank_sort_avx2::<32, usize>(&mut got, &mut spare),
                        }
                    }
                    proptest::prop_assert_eq!(key(&got), key(&want), "AVX2, width {}", w);
                }
            }
        }

        /// Against a sorted reference by (time, tie key, insertion), with pushes interleaved
        /// with pops as the engine does. (An event scheduled at the time being run with a key
        /// below the one just run cannot go back: the reference holds only what is queued.)
        #[test]
        fn matches_sorted_order(ops in proptest::collection::vec((proptest::prop_oneof![0u64..100, 0u64..100_000, 0u64..2, 0u64..(1 << 24), 0u64..(1 << 40)], 0u8..4, proptest::bool::ANY), 1..400), bits in proptest::prop_oneof![proptest::strategy::Just(3u32), 8u32..=17, 27u32..=32]) {
            // 3: a few events per slot (rank sort); 8..17: dozens (radix sort, in 2 or 3
            // passes); 27..32: offsets too wide for the rank sort's keys. Delays up to 2^24
            // reach the second wheel at the narrow slots, 2^40 the heap past it.
            let mut q: EventQueue<Keyed> = EventQueue::with_slot_bits(bits);
            let mut reference: Vec<(u64, u8, usize)> = Vec::new();
            let mut now = 0u64;
            for (i, (dt, key, pop)) in ops.into_iter().enumerate() {
                if pop {
                    let got = q.pop();
                    reference.sort();
                    let want = if reference.is_empty() { None } else { Some(reference.remove(0)) };
                    proptest::prop_assert_eq!(got.map(|(t, e)| (t.0, e.0, e.1)), want);
                    if let Some((t, _, _)) = want { now = t; }
                } else {
                    q.push(SimTime(now + dt), Keyed(key, i));
                    reference.push((now + dt, key, i));
                }
            }
        }
    }
}
