//! One run split over threads (issue 38; docs/parallel.md): conservative synchronisation
//! with the fabric's smallest link delay as lookahead (Chandy-Misra-Bryant; the barrier
//! windows of YAWNS, Nicol 1993; Fujimoto, "Parallel and Distributed Simulation Systems",
//! 2000, ch. 3).
//!
//! The fabric is split by `net::partition` (each ToR with its hosts, pods where they fit).
//! Each partition is a whole `Sim` that runs only its own nodes' events: a frame one of its
//! ports starts toward another partition's port leaves its packet arena and travels, with
//! its arrival time, in a mailbox that the receiving partition empties into its event queue
//! at the start of the next window. Windows are the run's synchronisation grid (`Sim::sync`,
//! the shortest delay of any link plus a switch's latency): a frame started in one window
//! arrives in a later one, so no partition's window depends on another's. Every partition
//! runs the same flow-arrival processes, so without continuations flow ids are the
//! sequential run's; a flow that continues another starts where its source is and is
//! announced to the others, each partition numbering flows in its own order and the results
//! renumbered as one thread numbers them (`Ids`, `Numbering`). A flow's
//! record is kept where its source or its destination is (the sender's half and the
//! receiver's), and every other partition keeps only its row (a streamed run: only the
//! drops), on which drops in its switches count. The run ends where the sequential one
//! does: the completion test and the mechanisms' fabric-wide checks run at the grid points,
//! where all partitions meet, and equal-time events run in an order that depends on no
//! partitioning (`sim::event::Tie`). Results are byte-identical to one thread (the property
//! test in engine/proptests.rs and `split_tests` check it at 2 and 3 threads,
//! tests/test_parallel.py the commands).
//!
//! A capture's frames are kept by the partition whose port sends them and written at the
//! end in one thread's order (`Parallel::merge_capture`). What cannot be partitioned makes
//! the run stay on one thread, with a warning in the summary (`Sim::parallel_blocker`).

use super::results::FINAL_EVERY;
use super::{EndReason, Ev, Sim, SimConfig};
use crate::workload::arrivals::FlowArrivals;
use crate::metrics::{ColumnData as C, Combine, Results};
use crate::net::port::PortWire;
use crate::net::{FlowId, HopTelemetry, Packet, PortId};
use crate::sim::event::Tie;
use crate::sim::SimTime;
use crate::workload::FlowSpec;
use crate::switch::mechanism::{Caps, WaitFor};
use crate::switch::pipeline::Ctx;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How many allocations ahead `take_in` fetches the packet slot a crossing frame will take
/// (k = 74 for 200 us: 24 ahead ran 0.961 of 8 ahead's time on 16 partitions, 0.982 on 2;
/// both noisy, 3-4 pairs).
const TAKE_AHEAD: usize = 24;

/// A frame on its way to another partition's port.
pub(super) struct Crossing {
    at: SimTime,
    port: PortId,
    route: PortId,
    pkt: Packet,
    /// Its flow's global id (`Ids`): `pkt.flow` is the sender's local one.
    flow: u64,
    /// Its INT records (`PacketArena::telemetry`), which live beside the packet record.
    tel: Vec<HopTelemetry>,
    /// Its selective acknowledgement (`PacketArena::sack`), which lives there too.
    sack: Option<Box<crate::net::Sack>>,
    /// Its RCCC pull target or UET count of bytes taken (`PacketArena::pull`), 0 for none.
    pull: u64,
}

/// A continuation (a closed loop's next message, a persistent flow's next transfer) that a
/// partition started, for every other partition: the destination makes the receiver's half,
/// the others the row their switches' drops count on (`Sim::start_flow_heard`). It reaches
/// them at the start of the next window, before any frame of the flow can.
#[derive(Clone)]
pub(super) struct Announce {
    gid: u64,
    spec: FlowSpec,
    key: u64,
    /// The connection it continues: its path hash and NIC class (the sender's state stays
    /// at the source).
    conn: Option<(u32, Option<u8>)>,
}

/// Flow identities in a split run where flows continue others (closed loops, persistent
/// flows). A continuation takes its id, in one thread, from its place among every flow
/// started, which no partition knows of the others' continuations. So each partition
/// numbers the flows it knows in its own order (local ids: the arrivals, its own
/// continuations as they start, the others' as it hears of them), which its flow table,
/// packets, timers and mechanisms use; across partitions a flow goes by a global id that
/// does not depend on where flows start (an arrival's index among the arrivals; a
/// continuation's partition and count there, top bit set), translated as frames cross. Each
/// partition logs the flows it starts first with the event that started them; the main
/// thread orders the logs as one thread starts flows and gives each flow the id one thread
/// gives it (`Numbering`), by which the results are sorted and named.
///
/// Local order is start order among a partition's own flows (those whose source is here:
/// all their starts run here), which is what the tie keys holding a flow id need (they
/// belong to events at the flow's source: `Ev::tie_flow`); heard flows take later ids than
/// their start would give them, and have no such events here.
#[derive(Default)]
struct Ids {
    /// Global id by local id, from `base`.
    l2g: Vec<u64>,
    base: usize,
    g2l: rustc_hash::FxHashMap<u64, FlowId>,
    /// Continuations started here.
    made: u64,
    /// The flows this partition started first, since the main thread last read them.
    log: Vec<StartNote>,
    /// Continuations started here this window, for the others.
    out: Vec<Announce>,
    /// Every local id below this was handed out (a streamed run); and those above it that were.
    low: usize,
    handed: rustc_hash::FxHashSet<usize>,
    /// Keep the global ids of flows handed out (`Numbering::keep`).
    keep: bool,
}

/// A flow start as `Numbering` orders it: (time, the starting event's tie key with its flow
/// id taken out, that flow's global id, the flow's global id).
#[derive(Clone, Copy)]
struct StartNote {
    at: SimTime,
    tie: u64,
    about: Option<u64>,
    gid: u64,
}

impl Ids {
    fn global(&self, f: FlowId) -> u64 {
        self.l2g[f as usize - self.base]
    }
    fn local(&self, g: u64) -> FlowId {
        *self.g2l.get(&g).unwrap_or_else(|| panic!("flow {g:#x} unknown to this partition"))
    }
    /// Local ids `ids` (of global ids) were handed out: forget their global ids.
    fn hand_out(&mut self, gids: &[u64]) -> Vec<usize> {
        let locals: Vec<usize> = gids.iter().map(|g| self.g2l.remove(g).expect("a flow every partition knows") as usize).collect();
        self.handed.extend(locals.iter().copied());
        while self.handed.remove(&self.low) {
            self.low += 1;
        }
        // the map drops its handed-out prefix once that is most of it (unless the goodput
        // series or a capture names flows by it at the end)
        let k = self.low - self.base;
        if !self.keep && k > 4096 && 2 * k >= self.l2g.len() {
            self.l2g.drain(..k);
            self.base = self.low;
        }
        locals
    }
}

/// The ids one thread gives the flows of a split run with continuations (`Ids`): flows
/// numbered in the order one thread starts them, (time, the starting event's tie key with
/// its flow's own number, within one partition its order); a tie key is never equal in two
/// partitions at one time (an arrival's is logged by the first only, the others name a port
/// or a flow of that partition).
#[derive(Default)]
struct Numbering {
    of: rustc_hash::FxHashMap<u64, u64>,
    next: u64,
    /// Keep the ids of flows handed out: the goodput series and the capture name flows by
    /// them at the end.
    keep: bool,
}

impl Numbering {
    /// Number the flows the partitions started since the last call (all after those numbered
    /// before: every partition stopped at the same point).
    fn take(&mut self, parts: &mut [Sim]) {
        let mut notes: Vec<(usize, usize, StartNote)> = Vec::new();
        for (p, s) in parts.iter_mut().enumerate() {
            if let Some(ids) = s.part.as_mut().unwrap().ids.as_mut() {
                notes.extend(ids.log.drain(..).enumerate().map(|(i, n)| (p, i, n)));
            }
        }
        notes.sort_by_key(|n| n.2.at);
        let mut i = 0;
        while i < notes.len() {
            let j = i + notes[i..].iter().position(|n| n.2.at != notes[i].2.at).unwrap_or(notes.len() - i);
            let group = &mut notes[i..j];
            // a flow whose start event names another flow started at the same time (a
            // datagram generator's zero gap) takes that flow's number in this group: settle
            // the order until it holds
            let mut order: Vec<usize> = (0..group.len()).collect();
            for _ in 0..=group.len() {
                let at: rustc_hash::FxHashMap<u64, u64> = order.iter().enumerate().map(|(k, &g)| (group[g].2.gid, self.next + k as u64)).collect();
                let key = |n: &(usize, usize, StartNote)| (n.2.tie, n.2.about.map_or(0, |a| self.of.get(&a).or(at.get(&a)).copied().unwrap_or(u64::MAX)), n.0, n.1);
                let mut again = order.clone();
                again.sort_by_key(|&g| key(&group[g]));
                if again == order {
                    break;
                }
                order = again;
            }
            for &g in &order {
                self.of.insert(group[g].2.gid, self.next);
                self.next += 1;
            }
            i = j;
        }
    }
    fn seq(&self, g: u64) -> u64 {
        *self.of.get(&g).unwrap_or_else(|| panic!("flow {g:#x} was not numbered"))
    }
    /// Name the rows of flows table `t`, those of global ids `ids`, by one thread's ids.
    fn name(&self, t: &mut crate::metrics::Table, ids: &[u64]) {
        t.set("flow_id", C::U64(ids.iter().map(|&g| self.seq(g)).collect()));
    }
}

/// Flow `f`'s global id in a partition with `ids` (without continuations, its id): a free
/// function so that `Part`'s methods can use it while they hold its other fields.
fn global_of(ids: &Option<Box<Ids>>, f: FlowId) -> u64 {
    ids.as_ref().map_or(f as u64, |ids| ids.global(f))
}

/// What makes a `Sim` one partition of a split run.
pub(super) struct Part {
    me: u16,
    /// The partition of each port's node, by port id.
    port_part: Arc<Vec<u16>>,
    /// The partition of each host, by host index.
    host_part: Arc<Vec<u16>>,
    /// The partition of each node, by node id.
    node_part: Arc<Vec<u16>>,
    /// Frames sent during this window to other partitions, by partition.
    out: Vec<Vec<Crossing>>,
    /// A streamed run's notes of which flows' rows are final (`Sim::stream_flows`).
    track: Option<FinalTrack>,
    /// The sum over windows of the busiest partition's events in each: the run's critical
    /// path in events, against which no number of threads can do better
    /// (`Sim::critical_path_events`).
    critical: u64,
    /// Each partition's events at the last window's end, for `critical`.
    before: Vec<u64>,
    /// A run where flows continue others: local flow ids and their global ones (`Ids`).
    ids: Option<Box<Ids>>,
    /// The event being run (whose handling may start a flow or send a captured frame), and
    /// the arrivals started before it.
    ev: Option<(Ev, u64)>,
}

/// What a partition of a streamed split run notes per flow, for the flows whose rows are
/// final (`Sim::split_collect`): its packets made here less those gone here (a packet may
/// end in another partition than the one that made it), and whether the flow finished here
/// or its datagram source, here, sent every byte (spent). A flow's notes go once its row is
/// handed out.
#[derive(Default)]
struct FinalTrack {
    /// By global id.
    notes: rustc_hash::FxHashMap<u64, (i32, bool)>,
}

impl Part {
    #[inline(always)]
    pub(super) fn owns_host(&self, h: u32) -> bool {
        self.host_part[h as usize] == self.me
    }
    #[inline(always)]
    pub(super) fn owns_node(&self, node: u32) -> bool {
        self.node_part[node as usize] == self.me
    }
    #[inline(always)]
    pub(super) fn remote(&self, port: PortId) -> bool {
        self.port_part[port as usize] != self.me
    }
    /// Events every partition runs (flow starts, queue samples): the first counts them.
    fn counts_shared_events(&self) -> bool {
        self.me == 0
    }
    /// A packet of (or about) flow `f` entered the network here (+1) or left it (-1).
    /// Out of line: its map update would otherwise swell every packet path of the
    /// sequential engine, which only tests that a `Part` exists (2.7% more instructions at
    /// k = 8 when it was inlined).
    #[inline(never)]
    pub(super) fn packet(&mut self, f: FlowId, d: i32) {
        if let (Some(t), true) = (&mut self.track, f != FlowId::MAX) {
            t.notes.entry(global_of(&self.ids, f)).or_default().0 += d;
        }
    }
    /// Flow `f` finished here, or (a datagram flow) its source here sent its last byte.
    pub(super) fn done(&mut self, f: FlowId) {
        if let Some(t) = &mut self.track {
            t.notes.entry(global_of(&self.ids, f)).or_default().1 = true;
        }
    }
    /// Flow `f`'s global id (`Ids`; without continuations, its id).
    fn global(&self, f: FlowId) -> u64 {
        global_of(&self.ids, f)
    }
    /// The local id of the flow of global id `g`.
    fn local(&self, g: u64) -> FlowId {
        self.ids.as_ref().map_or(g as FlowId, |ids| ids.local(g))
    }
    /// The event this partition is about to run (a run with continuations notes it: its
    /// handling may start a flow).
    #[inline(always)]
    fn running(&mut self, ev: Ev, arrivals: u64) {
        self.ev = Some((ev, arrivals));
    }
    /// The running event's place among one instant's events as one thread orders them: its
    /// tie key with the id of the flow it names taken out, and that flow's global id (which
    /// the main thread turns into one thread's id: `Numbering`).
    ///
    /// Every partition runs every flow arrival, and one thread runs one instant's arrivals
    /// in their order (each schedules the next): an arrival's events are told apart by its
    /// index, for what its handling starts or sends where its source is (a continuation of
    /// a one-frame message, the flow's first frames).
    fn event_order(&self) -> (u64, Option<u64>) {
        let (ev, arrivals) = self.ev.expect("a flow starts or a frame leaves in an event's handling");
        if matches!(ev, Ev::NextArrival) {
            return (ev.tie() | arrivals, None);
        }
        let about = ev.tie_flow();
        (ev.tie() - about.map_or(0, |f| f as u64), about.map(|f| self.global(f)))
    }
    /// Where a captured frame of flow `f` falls in the run's order (`Capture::record`).
    pub(super) fn frame_order(&self, f: FlowId) -> (u64, Option<u64>, u64) {
        let (tie, about) = self.event_order();
        (tie, about, if f == FlowId::MAX { u64::MAX } else { self.global(f) })
    }
    /// Flow `id` (local) started here at `spec.start`: an arrival (`key` its index), a
    /// continuation of a flow whose source is here (`cont`), or one heard of (`heard`: its
    /// global id). Notes its global id, logs the start for `Numbering` where this partition
    /// is the first to start it, and announces a continuation to the others.
    pub(super) fn started(&mut self, id: FlowId, spec: &FlowSpec, key: u64, conn: Option<(u32, Option<u8>)>, heard: Option<u64>, cont: bool) {
        let me = self.me as u64;
        if self.ids.is_none() {
            return;
        }
        let order = (heard.is_none() && (cont || me == 0)).then(|| self.event_order());
        let ids = self.ids.as_mut().unwrap();
        let gid = match heard {
            Some(g) => g,
            None if cont => {
                ids.made += 1;
                1 << 63 | me << 40 | (ids.made - 1)
            }
            None => key,
        };
        debug_assert_eq!(ids.base + ids.l2g.len(), id as usize, "local ids are dense");
        ids.l2g.push(gid);
        ids.g2l.insert(gid, id);
        if let Some((tie, about)) = order {
            ids.log.push(StartNote { at: spec.start, tie, about, gid });
        }
        if heard.is_none() && cont {
            ids.out.push(Announce { gid, spec: spec.clone(), key, conn });
        }
    }
}

/// A split run's partitions and where they stand, held by the `Sim` the caller sees.
pub(super) struct Parallel {
    pub(super) parts: Vec<Sim>,
    port_part: Arc<Vec<u16>>,
    /// The window length: the synchronisation grid's step.
    window: SimTime,
    /// Every partition has run every event before this time.
    at: SimTime,
    /// The latest event any partition ran.
    last: SimTime,
    /// A streamed run (`Sim::stream_flows`): where its hand-out of final rows stands.
    stream: Option<SplitStream>,
    /// A run where flows continue others: the ids one thread gives them (`Ids`).
    numbering: Option<Numbering>,
}

/// Where a streamed split run's hand-out of final rows stands (`Sim::split_collect`).
struct SplitStream {
    /// The next multiple of `FINAL_EVERY` the threads stop at.
    next: SimTime,
    /// The rows found final at the last stop, waiting for an event after it: their flows
    /// (global ids, in the order of one thread's ids), and the run's event count then.
    pending: Option<(Vec<u64>, u64)>,
    /// Rows handed out and not yet taken (`take_final_flows`).
    outbox: Option<crate::metrics::Table>,
    /// Of the flows handed out, those with a drop and the PFC victims (the summary counts
    /// them too).
    with_loss: usize,
    paused: usize,
}

/// Where one partition stands after a window, for the decision every thread makes alike.
/// Written before the window's barrier and read after it (the barrier orders them), so
/// plain atomics: every thread reads every stand each window, and a lock there was
/// contended by the readers.
#[derive(Default)]
struct Stand {
    active: AtomicUsize,
    /// Its events so far.
    events: AtomicU64,
    /// Its next event (or a lower bound of it), frames it sent included; MAX: none.
    next: AtomicU64,
    last: AtomicU64,
    /// What its mechanisms' fabric-wide checks saw and see of its nodes at the window's
    /// end, when that is a grid point and a mechanism checks there (`Caps::GRID`;
    /// `Mechanisms::grid_seen`, `grid_views`).
    grid: Mutex<(Vec<Option<SimTime>>, Vec<Option<WaitFor>>)>,
}

/// A mailbox between two partitions, with a flag
/// set when it holds something: the receivers test the flag each window instead of taking
/// a lock on every box (most windows send nothing to most partitions).
struct Mailbox<T> {
    full: AtomicBool,
    items: Mutex<Vec<T>>,
}

impl<T> Default for Mailbox<T> {
    fn default() -> Self {
        Mailbox { full: AtomicBool::new(false), items: Mutex::new(Vec::new()) }
    }
}

impl<T> Mailbox<T> {
    /// Hand `v` over (it comes back holding the box's earlier, already read, contents).
    fn put(&self, v: &mut Vec<T>) {
        std::mem::swap(&mut *self.items.lock().unwrap(), v);
        self.full.store(true, Ordering::Release);
    }
    /// The contents, if the box was filled since it was last read.
    fn take(&self) -> Option<std::sync::MutexGuard<'_, Vec<T>>> {
        if !self.full.load(Ordering::Acquire) {
            return None;
        }
        self.full.store(false, Ordering::Relaxed);
        Some(self.items.lock().unwrap())
    }
}

/// A partition's announcements of a window, for every other partition to read after the
/// barrier, with a flag set when there are any (most windows have none): the readers test
/// the flag instead of taking the lock.
struct Bulletin<T> {
    full: AtomicBool,
    items: std::sync::RwLock<Vec<T>>,
}

impl<T> Default for Bulletin<T> {
    fn default() -> Self {
        Bulletin { full: AtomicBool::new(false), items: std::sync::RwLock::new(Vec::new()) }
    }
}

impl<T> Bulletin<T> {
    /// Post this window's `v` (emptied: it takes back the board's earlier, already read,
    /// items); none, and the board reads as empty.
    fn post(&self, v: &mut Vec<T>) {
        let full = !v.is_empty();
        if full {
            std::mem::swap(&mut *self.items.write().unwrap(), v);
            v.clear();
        }
        self.full.store(full, Ordering::Release);
    }
    /// The items posted last, if any.
    fn read(&self) -> Option<std::sync::RwLockReadGuard<'_, Vec<T>>> {
        self.full.load(Ordering::Acquire).then(|| self.items.read().unwrap())
    }
}

/// A barrier that spins briefly before yielding, and sleeps after yielding a while: windows
/// are a few microseconds of work on small fabrics, where a futex sleep and wake per window
/// would cost as much again; but a thread that only yields keeps taking a core from the
/// thread it waits for when the cores are busy with other work (the split-run test beside
/// the rest of the test binary on 2 cores took 110 s against 25 s alone).
struct SpinBarrier {
    n: usize,
    /// Spins before yielding: none when the threads outnumber the cores, where a spinning
    /// thread holds the core that the thread it waits for needs (3 threads on 2 cores ran
    /// the fingerprint runs in 17 minutes against 74 s on 2).
    spins: u32,
    /// Yields before sleeping until the last thread arrives.
    yields: u32,
    count: AtomicUsize,
    round: AtomicUsize,
    /// A thread panicked: the others stop waiting for it (and panic too) instead of hanging.
    broken: std::sync::atomic::AtomicBool,
    /// Threads asleep or going to sleep: the last to arrive wakes them.
    sleepers: AtomicUsize,
    lock: std::sync::Mutex<()>,
    wake: std::sync::Condvar,
}

impl SpinBarrier {
    fn new(n: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let (spins, yields) = if n > cores { (0, 100) } else { (2000, 200) };
        SpinBarrier {
            n,
            spins,
            yields,
            count: AtomicUsize::new(0),
            round: AtomicUsize::new(0),
            broken: Default::default(),
            sleepers: AtomicUsize::new(0),
            lock: Default::default(),
            wake: Default::default(),
        }
    }
    fn wait(&self) {
        let round = self.round.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            // SeqCst with the sleepers' count: either a sleeper sees the new round before
            // it sleeps or this sees the sleeper and wakes it
            self.round.fetch_add(1, Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                self.wake_all();
            }
            return;
        }
        let (mut spins, mut yields) = (0u32, 0u32);
        while self.round.load(Ordering::Acquire) == round {
            if self.broken.load(Ordering::SeqCst) {
                panic!("another partition's thread of this split run panicked");
            }
            if spins < self.spins {
                std::hint::spin_loop();
                spins += 1;
            } else if yields < self.yields {
                std::thread::yield_now();
                yields += 1;
            } else {
                self.sleepers.fetch_add(1, Ordering::SeqCst);
                let mut g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                while self.round.load(Ordering::SeqCst) == round && !self.broken.load(Ordering::SeqCst) {
                    g = self.wake.wait(g).unwrap_or_else(|e| e.into_inner());
                }
                drop(g);
                self.sleepers.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
    fn wake_all(&self) {
        // under the lock: a sleeper checks the round and sleeps holding it, so it cannot
        // miss this
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.wake.notify_all();
    }
    /// A thread panicked: wake and stop the others.
    fn set_broken(&self) {
        self.broken.store(true, Ordering::SeqCst);
        self.wake_all();
    }
}

/// What the threads share: mailboxes and stands, double-buffered by window parity (a window's
/// are read after its barrier while the next window's are written).
struct Shared {
    n: usize,
    barrier: SpinBarrier,
    /// [parity][from * n + to]
    mail: [Vec<Mailbox<Crossing>>; 2],
    /// [parity][from]: the continuations a partition started, for every other one.
    heard: [Vec<Bulletin<Announce>>; 2],
    /// [parity][partition]
    stand: [Vec<Stand>; 2],
}

/// How a window ended, decided alike by every thread from the partitions' stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    /// Run the window that starts here.
    Next(SimTime),
    End(EndReason),
    /// Stopped at the caller's limit before the run's end.
    Pause,
}

impl Sim {
    /// Why this run cannot be split over threads yet, if it cannot (it then runs on one).
    pub fn parallel_blocker(&self) -> Option<String> {
        let c = &self.cfg;
        let why = if self.sync == SimTime::ZERO {
            "a link takes no time (the windows of a split run are the shortest link delay)"
        } else if c.repeats_at_destination {
            "a datagram flow's next transfer starts where it finishes, at its destination, for a source that may be in another partition at that very time"
        } else if self.trace.is_some() {
            "a transmission trace is recorded"
        } else {
            return None;
        };
        Some(why.to_string())
    }

    /// Split this run (not started) over `threads` threads: `arrivals` makes each partition
    /// its own copy of the flow-arrival processes. Returns the run, and a warning where it
    /// stays on one thread (`parallel_blocker`), also added to its summary's warnings.
    pub fn split(mut self, threads: usize, mut arrivals: impl FnMut() -> FlowArrivals) -> Sim {
        if threads <= 1 {
            return self;
        }
        if let Some(why) = self.parallel_blocker() {
            self.cfg.warnings.push(format!("threads = {threads}: the run stays on one thread: {why}"));
            return self;
        }
        let pt = self.partition(threads);
        let n = pt.part.iter().copied().max().map_or(1, |m| m as usize + 1);
        if n <= 1 {
            return self;
        }
        let port_part: Arc<Vec<u16>> = Arc::new(self.topo.ports.iter().map(|p| pt.part[p.node as usize]).collect());
        let host_part: Arc<Vec<u16>> = Arc::new(self.topo.hosts.iter().map(|&h| pt.part[h as usize]).collect());
        let node_part: Arc<Vec<u16>> = Arc::new(pt.part.clone());
        let repeats = self.cfg.repeats;
        let keep = self.cfg.capture.is_some() || self.cfg.throughput_bin.is_some();
        // every partition has every loop; a loop's generator advances only where its source is
        let inputs: Vec<(SimConfig, FlowArrivals)> = (0..n)
            .map(|_| {
                let mut cfg = self.cfg.clone();
                cfg.loops = self.loops.clone();
                (cfg, arrivals())
            })
            .collect();
        // built on the threads that will run them: each partition's per-port tables are
        // written (first touched) by its own thread, and the build takes one partition's time
        // (k = 74 on 16 threads spent 10 s building them one after another)
        let parts: Vec<Sim> = std::thread::scope(|sc| {
            let made: Vec<_> = inputs
                .into_iter()
                .enumerate()
                .map(|(i, (cfg, arr))| {
                    let (topo, routes) = (self.topo.clone(), self.routes.clone());
                    let part = Box::new(Part { me: i as u16, port_part: port_part.clone(), host_part: host_part.clone(), node_part: node_part.clone(), out: (0..n).map(|_| Vec::new()).collect(), track: None, critical: 0, before: vec![0; n], ids: repeats.then(|| Box::new(Ids { keep, ..Default::default() })), ev: None });
                    sc.spawn(move || {
                        // its own ports' records, and their peers' (a frame's destination, a
                        // pause's sender)
                        let wires = |p: usize| {
                            let there = part.port_part[topo.ports[p].peer as usize];
                            (part.port_part[p] == part.me || there == part.me).then(|| PortWire::peer_part_in(part.me, there))
                        };
                        let mut s = Sim::with_shared(topo.clone(), routes, cfg, arr, Some(&wires));
                        s.flows.own_rows_only();
                        if let Some(c) = &mut s.capture {
                            // its frames are written at the end, the partitions' in one thread's order
                            c.hold();
                        }
                        s.part = Some(part);
                        s
                    })
                })
                .collect();
            made.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        });
        // the whole run's own per-port tables are never read again (its partitions run its
        // events and give its results): 160 MB at k = 74
        self.egress = crate::net::port::Ports::default();
        self.queues = crate::net::PortQueues::new(&crate::net::Topology::default(), self.cfg.queues);
        self.switches = Vec::new();
        self.port_busy = Vec::new();
        let numbering = repeats.then(|| Numbering { keep, ..Default::default() });
        self.par = Some(Box::new(Parallel { parts, port_part, window: self.sync, at: SimTime::ZERO, last: SimTime::ZERO, stream: None, numbering }));
        self
    }

    /// `stream_flows` of a split run: its threads stop at each multiple of `FINAL_EVERY`,
    /// where the rows final in every partition's view are handed out (`split_collect`).
    pub(super) fn stream_split(&mut self) {
        let par = self.par.as_mut().unwrap();
        for p in &mut par.parts {
            p.part.as_mut().unwrap().track = Some(FinalTrack::default());
            p.flows.stream();
        }
        par.stream = Some(SplitStream { next: FINAL_EVERY, pending: None, outbox: None, with_loss: 0, paused: 0 });
    }

    /// An event that every partition of a split run runs (a flow start, a queue sample) is
    /// counted once, by the first.
    #[inline(always)]
    pub(super) fn count_once_per_run(&mut self) {
        if self.part.as_ref().is_some_and(|p| !p.counts_shared_events()) {
            self.events -= 1;
        }
    }

    /// How many partitions the run is split into (1: not split).
    pub fn partitions(&self) -> usize {
        self.par.as_ref().map_or(1, |p| p.parts.len())
    }

    /// The sum over the windows so far of the busiest partition's events in each (None when
    /// not split): the run's events over it bound the speed-up of any number of threads on
    /// this partitioning, however fast the barrier.
    pub fn critical_path_events(&self) -> Option<u64> {
        self.par.as_ref().map(|p| p.parts[0].part.as_ref().unwrap().critical)
    }

    /// The events each partition has run so far (one entry when not split): the work the
    /// partitioner's planned load stands in for (`examples/partition --run-us`). Events
    /// every partition runs (flow starts, queue samples) count in the first only.
    pub fn partition_events(&self) -> Vec<u64> {
        self.par.as_ref().map_or_else(|| vec![self.events], |p| p.parts.iter().map(|s| s.events).collect())
    }

    /// A frame leaves for partition `to`'s `port`: its record moves into the mailbox.
    #[inline(never)]
    pub(super) fn cross(&mut self, at: SimTime, to: u16, port: PortId, pkt: crate::net::PktId, route: PortId) {
        let p = self.pkts.get(pkt).clone();
        let tel = self.pkts.telemetry(pkt).to_vec();
        let sack = self.pkts.sack_record(pkt).map(Box::new);
        let pull = self.pkts.pull(pkt);
        self.pkts.free(pkt);
        let part = self.part.as_mut().unwrap();
        debug_assert_eq!(part.port_part[port as usize], to);
        let flow = if p.flow == FlowId::MAX { u64::MAX } else { part.global(p.flow) };
        part.out[to as usize].push(Crossing { at, port, route, pkt: p, flow, tel, sack, pull });
    }

    /// Take in the continuations other partitions started (before their frames).
    fn hear(&mut self, heard: &[Announce]) {
        for a in heard {
            let conn = a.conn.map(|(hash, class)| (hash, class, crate::host::Sender::Done));
            self.start_flow_heard(a.spec.clone(), conn, a.key, Some(a.gid));
        }
    }

    /// Take in the frames other partitions sent: their arrivals join the event queue.
    fn take_in(&mut self, frames: &mut Vec<Crossing>) {
        for mut c in frames.drain(..) {
            self.pkts.prefetch_free(TAKE_AHEAD);
            if c.flow != u64::MAX {
                c.pkt.flow = self.part.as_ref().unwrap().local(c.flow);
            }
            let id = self.pkts.alloc(c.pkt);
            for h in c.tel {
                self.pkts.push_telemetry(id, h);
            }
            if let Some(s) = c.sack {
                self.pkts.set_sack(id, *s);
            }
            if c.pull > 0 {
                self.pkts.set_pull(id, c.pull);
            }
            self.q.push(c.at, Ev::Arrive { port: c.port, pkt: id, route: c.route });
        }
    }

    /// Run this partition's events up to and including `to`; returns when its next one is
    /// due (or a lower bound of it; MAX: none).
    fn run_window(&mut self, to: SimTime) -> SimTime {
        loop {
            match self.q.pop_within(to) {
                Ok((t, ev)) => {
                    self.look_ahead();
                    self.part.as_mut().unwrap().running(ev, self.arrivals_started);
                    self.now = t;
                    self.events += 1;
                    self.dispatch(ev);
                }
                Err(next) => return next.unwrap_or(SimTime::MAX),
            }
        }
    }

    /// `run_until` of a split run. A streamed one stops its threads at each multiple of
    /// `FINAL_EVERY`, where it collects the rows that became final (`split_collect`).
    pub(super) fn run_split(&mut self, limit: SimTime) {
        loop {
            let next = self.par.as_ref().unwrap().stream.as_ref().map(|s| s.next);
            match next {
                Some(at) if at.0 - 1 < limit.0 => {
                    let next = self.run_split_to(SimTime(at.0 - 1));
                    if self.end.is_some() {
                        break;
                    }
                    self.split_collect();
                    // the multiples before the next event's interval ends would see the same
                    // rows: the next stop is the one after it
                    let after = SimTime((next.0.min(u64::MAX - FINAL_EVERY.0) / FINAL_EVERY.0 + 1) * FINAL_EVERY.0);
                    self.par.as_mut().unwrap().stream.as_mut().unwrap().next = after.max(SimTime(at.0 + FINAL_EVERY.0));
                }
                _ => {
                    let _ = self.run_split_to(limit);
                    break;
                }
            }
        }
        if self.end.is_some() {
            self.split_collect();
        }
    }

    /// The rows of a streamed split run that became final, at a multiple of `FINAL_EVERY`
    /// (every partition stopped there) or at the run's end. One thread looks for final rows
    /// before the first event at or after each multiple, so the rows taken here go out once
    /// an event has run after them (the run's event count has grown), each collection's in
    /// id order; at the end, a collection no event followed stays with the rest.
    fn split_collect(&mut self) {
        let events = self.events;
        let ended = self.end.is_some();
        let par = self.par.as_mut().unwrap();
        let Some(st) = par.stream.as_mut() else {
            return;
        };
        if st.pending.as_ref().is_some_and(|p| events > p.1) {
            let (ids, _) = st.pending.take().unwrap();
            par.hand_out(&ids);
        }
        let st = par.stream.as_mut().unwrap();
        if ended || st.pending.is_some() {
            return;
        }
        par.number();
        // final: finished (or spent) in some partition, every packet made gone somewhere
        let mut sum: rustc_hash::FxHashMap<u64, (i64, bool)> = Default::default();
        for p in &par.parts {
            for (&f, &(d, done)) in &p.part.as_ref().unwrap().track.as_ref().unwrap().notes {
                let e = sum.entry(f).or_default();
                e.0 += d as i64;
                e.1 |= done;
            }
        }
        let mut ids: Vec<u64> = sum.into_iter().filter(|(_, (d, done))| *done && *d == 0).map(|(f, _)| f).collect();
        par.sort(&mut ids);
        if !ids.is_empty() {
            par.stream.as_mut().unwrap().pending = Some((ids, events));
        }
    }

    /// `run_until` of a split run, to `limit` at most; returns when the next event is due
    /// (or a lower bound of it).
    fn run_split_to(&mut self, limit: SimTime) -> SimTime {
        let max_time = self.cfg.max_time;
        let par = self.par.as_mut().unwrap();
        let n = par.parts.len();
        let due = limit.min(max_time);
        let shared = Shared {
            n,
            barrier: SpinBarrier::new(n),
            mail: std::array::from_fn(|_| (0..n * n).map(|_| Mailbox::default()).collect()),
            heard: std::array::from_fn(|_| (0..n).map(|_| Bulletin::default()).collect()),
            stand: std::array::from_fn(|_| (0..n).map(|_| Stand::default()).collect()),
        };
        let (w, start) = (par.window, par.at);
        let outcome: Vec<(Step, SimTime, SimTime, SimTime)> = std::thread::scope(|s| {
            let handles: Vec<_> = par.parts.iter_mut().enumerate().map(|(i, sim)| {
                let shared = &shared;
                s.spawn(move || {
                    let run = std::panic::AssertUnwindSafe(|| worker(i, sim, shared, w, start, due, limit, max_time));
                    std::panic::catch_unwind(run).unwrap_or_else(|e| {
                        shared.barrier.set_broken();
                        std::panic::resume_unwind(e)
                    })
                })
            }).collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        });
        let (step, at, last, next) = outcome[0];
        debug_assert!(outcome.iter().all(|o| *o == outcome[0]), "the partitions decided alike");
        par.at = at;
        par.last = par.last.max(last);
        self.events = par.parts.iter().map(|p| p.events).sum();
        self.finished = par.parts.iter().map(|p| p.finished).sum();
        self.active = par.parts.iter().map(|p| p.active).sum();
        match step {
            Step::End(EndReason::MaxTime) => {
                self.now = max_time;
                self.end = Some(EndReason::MaxTime);
            }
            Step::End(r) => {
                self.now = par.last;
                self.end = Some(r);
            }
            Step::Pause | Step::Next(_) => self.now = limit.min(max_time).max(par.last),
        }
        next
    }

    /// The result tables of a split run: each port's rows from the partition that owns it,
    /// each flow's row combined from the partitions' rows, counters summed.
    pub(super) fn split_results(&mut self) -> Results {
        let now = self.now;
        let end = self.end;
        let par = self.par.as_mut().unwrap();
        // queue samples: every partition sampled its own ports at the same times; the first
        // gathers them and builds the queues tables
        let (first, rest) = par.parts.split_first_mut().unwrap();
        for (k, p) in rest.iter_mut().enumerate() {
            let me = (k + 1) as u16;
            let nq = p.cfg.queues;
            for (row, h) in p.depth_hist.iter_mut().enumerate() {
                if par.port_part[row / nq] == me {
                    first.depth_hist[row] = std::mem::take(h);
                }
            }
            for (a, b) in first.depth_series.iter_mut().zip(&p.depth_series) {
                debug_assert_eq!((a.0, a.1), (b.0, b.1), "partitions sample at the same times");
                (a.2, a.3, a.4) = (a.2.max(b.2), a.3 + b.3, a.4 + b.4);
            }
        }
        // the flows rows not handed out: those any partition holds, in id order
        par.number();
        if self.cfg.capture.is_some() {
            par.merge_capture();
        }
        let mut ids: Vec<u64> = par.parts.iter().flat_map(|p| p.flows.held().into_iter().map(|f| p.part.as_ref().unwrap().global(f as FlowId))).collect();
        par.sort(&mut ids);
        ids.dedup();
        let numbering = par.numbering.as_ref();
        // built one partition at a time and absorbed into the first's (a flows table per
        // partition at once would hold partitions x flows rows)
        let mut rs = par
            .parts
            .iter_mut()
            .map(|p| {
                p.now = now;
                p.end = end;
                let part = p.part.as_ref().unwrap();
                p.row_ids = Some(ids.iter().map(|&g| part.local(g) as usize).collect());
                let mut r = p.results();
                // the goodput series names flows by the ids one thread gives them
                if let (Some(num), Some(C::U32(f))) = (numbering, r.timeseries.columns.iter_mut().find(|c| c.0 == "flow").map(|c| &mut c.1)) {
                    let part = p.part.as_ref().unwrap();
                    for x in f.iter_mut() {
                        *x = num.seq(part.global(*x)) as u32;
                    }
                }
                r
            });
        let first = rs.next().expect("a split run has partitions");
        let (with_loss, paused) = par.stream.as_ref().map_or((0, 0), |s| (s.with_loss, s.paused));
        let mut r = merge(first, rs, &par.port_part, self.events, self.finished, &self.cfg.warnings, (with_loss, paused));
        if let Some(num) = numbering {
            num.name(&mut r.flows, &ids);
        }
        if let Some(c) = &par.parts[0].capture {
            // the merged capture's counts, as one thread reports them
            let (frames, missed) = c.counts();
            let s = r.summary.as_object_mut().unwrap();
            s.insert("capture_frames".into(), frames.into());
            if missed > 0 {
                let w = s.entry("warnings").or_insert_with(|| serde_json::Value::Array(Vec::new()));
                w.as_array_mut().unwrap().push(super::capture_warning(frames, missed).into());
            }
        }
        r
    }

    /// `take_final_flows` of a split run.
    pub(super) fn split_take_final(&mut self) -> Option<crate::metrics::Table> {
        self.par.as_mut().unwrap().stream.as_mut()?.outbox.take()
    }
}

impl Parallel {
    /// Hand out the rows of flows `ids` (final, in id order): each partition's row of each
    /// (a partition that holds none gives an empty one with the drops it counted), combined;
    /// then every partition forgets them.
    fn hand_out(&mut self, ids: &[u64]) {
        let mut tables = self.parts.iter().map(|p| {
            let part = p.part.as_ref().unwrap();
            p.flows_table(&ids.iter().map(|&g| part.local(g) as usize).collect::<Vec<_>>())
        });
        let mut t = tables.next().expect("a split run has partitions");
        for o in tables {
            absorb_flows(&mut t, &o);
        }
        derive_flows(&mut t);
        if let Some(num) = &self.numbering {
            num.name(&mut t, ids);
        }
        let st = self.stream.as_mut().unwrap();
        st.with_loss += t.u32("drops").iter().filter(|&&d| d > 0).count();
        if let Some(C::U8(p)) = t.get("paused") {
            st.paused += p.iter().filter(|&&v| v > 0).count();
        }
        match &mut st.outbox {
            Some(o) => o.append(t),
            None => st.outbox = Some(t),
        }
        // one id space (no continuations): every flow below the oldest any partition holds
        // was handed out (with continuations each partition has its own bound, below)
        let below = if self.numbering.is_none() { self.parts.iter().map(|p| p.flows.oldest_held()).min().unwrap_or(0) } else { 0 };
        for p in &mut self.parts {
            let part = p.part.as_mut().unwrap();
            let notes = &mut part.track.as_mut().unwrap().notes;
            for f in ids {
                notes.remove(f);
            }
            match &mut part.ids {
                // every flow below its lowest id not handed out was
                Some(own) => {
                    let locals = own.hand_out(ids);
                    let below = own.low;
                    p.forget_rows(&locals, below);
                }
                None => p.forget_rows(&ids.iter().map(|&f| f as usize).collect::<Vec<_>>(), below),
            }
        }
        if let Some(num) = &mut self.numbering {
            if !num.keep {
                for g in ids {
                    num.of.remove(g);
                }
            }
        }
    }

    /// Write the frames the partitions captured (`Capture::hold`) into the first's capture,
    /// in the order one thread writes them: by time, then the sending event's tie key (with
    /// one thread's id of the flow it names), then within a partition its order (one
    /// instant's frames of one event are one partition's).
    fn merge_capture(&mut self) {
        let (mut all, mut missed) = (Vec::new(), 0);
        for (k, p) in self.parts.iter_mut().enumerate() {
            let (held, m) = p.capture.as_mut().unwrap().take_held();
            missed += m;
            all.extend(held.into_iter().enumerate().map(|(i, f)| (k, i, f)));
        }
        let num = self.numbering.as_ref();
        let seq = |g: u64| num.map_or(g, |n| n.seq(g));
        all.sort_by_key(|(k, i, f)| (f.at, f.order.0, f.order.1.map_or(0, seq), *k, *i));
        let frames = all.into_iter().map(|(_, _, mut f)| {
            if let Some(w) = &mut f.flow {
                w.id = seq(f.order.2) as u32;
            }
            f
        });
        let first = &mut self.parts[0];
        first.capture.as_mut().unwrap().write_held(frames, missed, &first.topo, &first.cfg.mechanisms);
    }

    /// Number the flows started since the last call (`Numbering`), in a run with
    /// continuations.
    fn number(&mut self) {
        if let Some(num) = &mut self.numbering {
            num.take(&mut self.parts);
        }
    }

    /// Sort global ids `ids` by the ids one thread gives their flows.
    fn sort(&self, ids: &mut [u64]) {
        match &self.numbering {
            Some(num) => ids.sort_unstable_by_key(|&g| num.seq(g)),
            None => ids.sort_unstable(),
        }
    }
}

/// One partition's thread: windows until the run ends or reaches `due`. Returns the
/// decision, the time the next call starts at, the latest event it ran and when the next
/// event of any partition is due (or a lower bound of it).
#[allow(clippy::too_many_arguments)]
fn worker(me: usize, sim: &mut Sim, sh: &Shared, w: SimTime, start: SimTime, due: SimTime, limit: SimTime, max_time: SimTime) -> (Step, SimTime, SimTime, SimTime) {
    let n = sh.n;
    let mut at = start;
    let mut parity = 0usize;
    let mut before = std::mem::take(&mut sim.part.as_mut().unwrap().before);
    let repeats = sim.part.as_ref().unwrap().ids.is_some();
    loop {
        // the continuations and frames the others sent in the window before
        take_mail(me, sim, sh, parity ^ 1, repeats);
        let grid = SimTime((at.0 / w.0 + 1) * w.0);
        let to = SimTime(grid.0 - 1).min(due);
        let mut next = sim.run_window(to);
        let part = sim.part.as_mut().unwrap();
        if let Some(ids) = &mut part.ids {
            sh.heard[parity][me].post(&mut ids.out);
        }
        for (to_part, frames) in part.out.iter_mut().enumerate() {
            if let Some(c) = frames.first() {
                next = next.min(frames.iter().fold(c.at, |m, c| m.min(c.at)));
                sh.mail[parity][me * n + to_part].put(frames);
            }
        }
        // the window ran to the grid point (it was not cut short by `due`): the sequential
        // run's checks at that point (completion, the mechanisms' fabric-wide checks) run
        // here, before any later event, as they run there before the first event at or after it
        let full = grid.0 - 1 <= due.0;
        let checks = full && sim.mechs.acts_at(Caps::GRID);
        let stand = &sh.stand[parity][me];
        if checks {
            let own = |node: u32| sim.part.as_ref().unwrap().owns_node(node);
            let views = sim.mechs.grid_views(grid, &own, &super::ctx!(sim));
            *stand.grid.lock().unwrap() = (sim.mechs.grid_seen(), views);
        }
        stand.active.store(sim.active, Ordering::Relaxed);
        stand.events.store(sim.events, Ordering::Relaxed);
        stand.next.store(next.0, Ordering::Relaxed);
        stand.last.store(sim.now.0, Ordering::Relaxed);
        sh.barrier.wait();
        // every thread decides alike from the stands
        let (mut active, mut next_all, mut last_all) = (0, SimTime::MAX, SimTime::ZERO);
        let (mut seen, mut views) = (Vec::new(), Vec::new());
        let mut busiest = 0;
        for p in 0..n {
            let s = &sh.stand[parity][p];
            let events = s.events.load(Ordering::Relaxed);
            busiest = busiest.max(events - before[p]);
            before[p] = events;
            active += s.active.load(Ordering::Relaxed);
            next_all = next_all.min(SimTime(s.next.load(Ordering::Relaxed)));
            last_all = last_all.max(SimTime(s.last.load(Ordering::Relaxed)));
            if checks {
                let g = s.grid.lock().unwrap();
                seen.push(g.0.clone());
                views.push(g.1.clone());
            }
        }
        sim.part.as_mut().unwrap().critical += busiest;
        let arrivals_done = sim.arrivals.is_done();
        let at_max_time = next_all > max_time && limit >= max_time;
        let step = if next_all == SimTime::MAX {
            Step::End(if active == 0 { EndReason::Completed } else { EndReason::Idle })
        } else if full && active == 0 && arrivals_done {
            Step::End(EndReason::Completed)
        } else if let Some(r) = (full && !at_max_time).then(|| sim.mechs.grid_judge(grid, &seen, &views, &sim.topo)).flatten() {
            Step::End(r)
        } else if next_all > due {
            if limit >= max_time && next_all > max_time {
                Step::End(EndReason::MaxTime)
            } else {
                Step::Pause
            }
        } else {
            Step::Next(grid.max(SimTime(next_all.0 / w.0 * w.0)))
        };
        // (one barrier a window: the next window writes the other parity's mail and stands,
        // and this parity's again only after everyone has passed the next barrier)
        parity ^= 1;
        match step {
            Step::Next(t) => at = t,
            _ => {
                // frames still in the mailboxes are in flight: the receivers hold them (and
                // know their flows)
                take_mail(me, sim, sh, parity ^ 1, repeats);
                sim.part.as_mut().unwrap().before = before;
                let resume = if step == Step::Pause { SimTime(due.0 + 1) } else { at };
                return (step, resume, last_all, next_all);
            }
        }
    }
}

/// Take in what the other partitions sent in the window of `parity`: first the
/// continuations they started (`repeats`: a run with continuations), then their frames.
fn take_mail(me: usize, sim: &mut Sim, sh: &Shared, parity: usize, repeats: bool) {
    let n = sh.n;
    if repeats {
        for from in (0..n).filter(|&f| f != me) {
            if let Some(heard) = sh.heard[parity][from].read() {
                sim.hear(&heard);
            }
        }
    }
    for from in 0..n {
        if let Some(mut m) = sh.mail[parity][from * n + me].take() {
            sim.take_in(&mut m);
        }
    }
}

/// How a flows-table column combines over the partitions' rows.
enum Merge {
    /// Set where the flow's source or destination is, zero elsewhere (or a flag); its
    /// fields (the same wherever the row is held, zero where it is not).
    Max,
    /// Counted where it happens.
    Sum,
    /// Worked out from the merged columns.
    Derived,
}

fn flow_merge(name: &str) -> Merge {
    match name {
        "flow_id" | "src" | "dst" | "size_bytes" | "start_ps" | "priority" | "tag" | "end_ps" | "fct_ps" | "ideal_fct_ps" | "finished" | "delivered_bytes" | "paused" | "mean_frame_latency_ps" => Merge::Max,
        "drops" | "ecn_marks" | "retx" | "qcn_cnms_received" | "sfc_paused_ps" => Merge::Sum,
        "slowdown" => Merge::Derived,
        other => panic!("flows column {other} has no rule for a split run (engine/parallel.rs)"),
    }
}

fn combine(a: &mut C, b: &C, m: &Merge) {
    fn each<T: Copy>(a: &mut [T], b: &[T], f: impl Fn(T, T) -> T) {
        for (x, &y) in a.iter_mut().zip(b) {
            *x = f(*x, y);
        }
    }
    match (m, a, b) {
        (Merge::Derived, _, _) => {}
        (Merge::Max, C::U8(a), C::U8(b)) => each(a, b, u8::max),
        (Merge::Max, C::U16(a), C::U16(b)) => each(a, b, u16::max),
        (Merge::Max, C::U32(a), C::U32(b)) => each(a, b, u32::max),
        (Merge::Max, C::U64(a), C::U64(b)) => each(a, b, u64::max),
        (Merge::Max, C::F64(a), C::F64(b)) => each(a, b, |x, y| if x.is_nan() { y } else { x }),
        (Merge::Sum, C::U32(a), C::U32(b)) => each(a, b, |x, y| x + y),
        (Merge::Sum, C::U64(a), C::U64(b)) => each(a, b, |x, y| x + y),
        (_, a, _) => panic!("a split run cannot combine a column of type {}", a.dtype()),
    }
}

/// Combine another partition's rows of the same flows into `t`, row for row, toward the
/// sequential run's (the derived columns are worked out once all are in: `derive_flows`).
fn absorb_flows(t: &mut crate::metrics::Table, o: &crate::metrics::Table) {
    for (name, col) in t.columns.iter_mut() {
        combine(col, o.get(name).expect("flows column in every partition"), &flow_merge(name));
    }
}

/// Work out the flows table's derived columns from the combined ones.
fn derive_flows(t: &mut crate::metrics::Table) {
    let (fct, ideal, fin) = (t.u64("fct_ps").to_vec(), t.u64("ideal_fct_ps").to_vec(), t.get("finished").cloned());
    if let Some(C::U8(fin)) = fin {
        let sd: Vec<f64> = (0..fct.len()).map(|i| if fin[i] == 1 && ideal[i] > 0 { fct[i] as f64 / ideal[i] as f64 } else { f64::NAN }).collect();
        t.set("slowdown", C::F64(sd));
    }
}

/// Combine the partitions' results (`first` and `rest`) into the sequential run's;
/// `handed`: of the flows whose rows a streamed run handed out, those with a drop and the
/// PFC victims (the summary counts them too).
#[allow(clippy::too_many_arguments)]
fn merge(mut r: Results, rest: impl Iterator<Item = Results>, port_part: &[u16], events: u64, finished: usize, warnings: &[String], handed: (usize, usize)) -> Results {
    let rows = r.ports.rows();
    let per_port = rows / port_part.len().max(1);
    // goodput rows: each flow's are in its destination's partition
    let goodput = |t: &crate::metrics::Table, all: &mut Vec<(u32, u64, u64)>| {
        if t.rows() > 0 {
            let (f, b, y) = (t.u32("flow"), t.u64("bin_start_ps"), t.u64("bytes"));
            all.extend((0..f.len()).map(|i| (f[i], b[i], y[i])));
        }
    };
    let mut all: Vec<(u32, u64, u64)> = Vec::new();
    goodput(&r.timeseries, &mut all);
    // each partition's port rows (by port, then queue), as runs of rows: its ports lie in a
    // few runs of ids (its pods', its core switches'), where a pass over every row for each
    // partition cost k = 74 on 16 partitions about 0.4 s at the run's end
    let parts = port_part.iter().max().map_or(0, |&m| m as usize + 1);
    let mut runs: Vec<Vec<std::ops::Range<usize>>> = vec![Vec::new(); parts];
    let mut at = 0;
    for run in port_part.chunk_by(|a, b| a == b) {
        runs[run[0] as usize].push(at * per_port..(at + run.len()) * per_port);
        at += run.len();
    }
    for (k, o) in rest.enumerate() {
        let p = k + 1;
        // ports: each row from the partition owning its port
        for (name, col) in r.ports.columns.iter_mut() {
            let other = o.ports.get(name).unwrap_or_else(|| panic!("ports column {name} in every partition"));
            col.take_rows_in(other, runs.get(p).map_or(&[], |r| &r[..]));
        }
        // flows: every partition gives a row for each flow not handed out
        absorb_flows(&mut r.flows, &o.flows);
        goodput(&o.timeseries, &mut all);
        // summary: each key by its rule (`merge_summary`); the engine's derived counts are
        // worked out again below
        merge_summary(r.summary.as_object_mut().unwrap(), &o.summary, &r.combine);
    }
    derive_flows(&mut r.flows);
    if !all.is_empty() {
        all.sort_unstable();
        r.timeseries.set("flow", C::U32(all.iter().map(|x| x.0).collect()));
        r.timeseries.set("bin_start_ps", C::U64(all.iter().map(|x| x.1).collect()));
        r.timeseries.set("bytes", C::U64(all.iter().map(|x| x.2).collect()));
    }
    let s = r.summary.as_object_mut().unwrap();
    let total = s["flows_total"].as_u64().unwrap();
    s.insert("events".into(), events.into());
    s.insert("flows_finished".into(), finished.into());
    s.insert("flows_unfinished".into(), (total - finished as u64).into());
    let (sent, dropped) = (s["data_packets_sent"].as_u64().unwrap(), s["data_packets_dropped"].as_u64().unwrap());
    s.insert("loss_rate".into(), (if sent > 0 { dropped as f64 / sent as f64 } else { 0.0 }).into());
    let drops = r.flows.u32("drops");
    s.insert("flows_with_loss".into(), (handed.0 + drops.iter().filter(|&&d| d > 0).count()).into());
    if let Some(C::U8(paused)) = r.flows.get("paused") {
        s.insert("flows_paused".into(), (handed.1 + paused.iter().filter(|&&p| p > 0).count()).into());
    }
    // the run's own, not the first partition's (its capture's is added by the caller)
    s.remove("warnings");
    if !warnings.is_empty() {
        s.insert("warnings".into(), warnings.to_vec().into());
    }
    r
}

/// How a split run combines the engine's own summary keys (a mechanism's say so where it
/// writes them: `Report::count`, `same`). The keys worked out again after the merge
/// (events, the flow counts, the loss rate, the warnings) are `First` here.
fn engine_combine(key: &str) -> Option<Combine> {
    Some(match key {
        "packets_created" | "packets_dropped" | "packets_delivered" | "control_frames" | "ecn_marks" | "data_packets_sent" | "data_packets_dropped" | "packets_in_flight" | "capture_frames" | "timeouts" => Combine::Sum,
        "invariant_violations" => Combine::Concat,
        "seed" | "sim_time_ps" | "hosts" | "switches" | "flows_total" | "flows_started" | "throughput_bin_ps" | "queue_samples" | "fct_bins" | "metrics" | "queue_notes" | "version" | "end_reason" | "link_changes" => Combine::First,
        "events" | "flows_finished" | "flows_unfinished" | "loss_rate" | "flows_with_loss" | "warnings" => Combine::First,
        _ => return None,
    })
}

/// Add another partition's summary `o` into `s` (`merge`): each key as its rule says
/// (`engine_combine`, or `combine`, what the mechanisms declared); a key with no rule is a
/// bug, said by name (it was summed when an integer before, which is wrong for a maximum).
fn merge_summary(s: &mut serde_json::Map<String, serde_json::Value>, o: &serde_json::Value, combine: &[(String, Combine)]) {
    for (k, v) in o.as_object().unwrap() {
        if k == "activity" {
            // every partition declares the same mechanisms in the same order: counts add
            if let (Some(serde_json::Value::Array(a)), serde_json::Value::Array(b)) = (s.get_mut(k), v) {
                for (x, y) in a.iter_mut().zip(b) {
                    let n = x["count"].as_u64().unwrap_or(0) + y["count"].as_u64().unwrap_or(0);
                    x["count"] = n.into();
                }
            }
            continue;
        }
        let rule = engine_combine(k)
            .or_else(|| combine.iter().find(|c| c.0 == *k).map(|c| c.1))
            .unwrap_or_else(|| panic!("summary key {k} has no rule for a split run: write it with Report::count or same, or list it in engine_combine (engine/parallel.rs)"));
        match (rule, s.get_mut(k)) {
            (Combine::Sum, Some(a)) => {
                let (x, y) = (a.as_u64(), v.as_u64());
                let (Some(x), Some(y)) = (x, y) else { panic!("summary key {k} is summed over a split run's partitions but is not a count: {a} and {v}") };
                *a = (x + y).into();
            }
            (Combine::Concat, Some(a)) => {
                let (Some(x), Some(y)) = (a.as_array_mut(), v.as_array()) else { panic!("summary key {k} is joined over a split run's partitions but is not a list: {a} and {v}") };
                x.extend(y.iter().cloned());
            }
            // every partition writes the same keys (its mechanisms are the same)
            (Combine::First, _) | (_, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A split run's summary: counts add, values every partition has alike stay, and a key
    /// with no rule (a mechanism that wrote around `Report::count` / `same`) is said by name.
    #[test]
    fn summary_keys_combine_by_their_rules() {
        let mut s = serde_json::json!({ "packets_created": 3, "seed": 7, "pfc_frames": 5, "deadlock": ["a"] });
        let o = serde_json::json!({ "packets_created": 4, "seed": 7, "pfc_frames": 1, "deadlock": ["a"] });
        let rules = [("pfc_frames".to_string(), Combine::Sum), ("deadlock".to_string(), Combine::First)];
        merge_summary(s.as_object_mut().unwrap(), &o, &rules);
        assert_eq!(s, serde_json::json!({ "packets_created": 7, "seed": 7, "pfc_frames": 6, "deadlock": ["a"] }));
        let unruled = std::panic::catch_unwind(|| {
            let mut s = serde_json::json!({ "max_queue": 3 });
            merge_summary(s.as_object_mut().unwrap(), &serde_json::json!({ "max_queue": 4 }), &[]);
        });
        let msg = unruled.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("summary key max_queue has no rule"), "{msg}");
    }

    #[test]
    fn the_spin_barrier_holds_every_thread_until_the_last_arrives() {
        let b = SpinBarrier::new(3);
        let hits = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for round in 0..100 {
                        hits.fetch_add(1, Ordering::SeqCst);
                        b.wait();
                        // all three counted this round before anyone goes on
                        assert!(hits.load(Ordering::SeqCst) >= 3 * (round + 1));
                        b.wait();
                    }
                });
            }
        });
        assert_eq!(hits.load(Ordering::SeqCst), 300);
    }

    /// Threads that wait long go to sleep, and the last to arrive wakes them, round after
    /// round (the late thread arrives only once both others sleep).
    #[test]
    fn threads_that_wait_long_sleep_and_the_last_to_arrive_wakes_them() {
        let b = SpinBarrier::new(3);
        let passed = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for late in [true, false, false] {
                let (b, passed) = (&b, &passed);
                s.spawn(move || {
                    for round in 0..5 {
                        if late {
                            let t = std::time::Instant::now();
                            while b.sleepers.load(Ordering::SeqCst) < 2 {
                                assert!(t.elapsed().as_secs() < 60, "round {round}: the waiting threads never slept");
                                std::thread::sleep(std::time::Duration::from_micros(200));
                            }
                        }
                        b.wait();
                        passed.fetch_add(1, Ordering::SeqCst);
                        b.wait();
                    }
                });
            }
        });
        assert_eq!(passed.load(Ordering::SeqCst), 15);
        assert_eq!(b.sleepers.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_thread_that_panicked_does_not_leave_the_others_waiting() {
        let b = SpinBarrier::new(2);
        let waited = std::thread::scope(|s| {
            let w = s.spawn(|| b.wait());
            // the other thread dies before the barrier, as a worker's panic marks it
            b.set_broken();
            w.join()
        });
        assert!(waited.is_err(), "the waiting thread gave up");
    }
}

#[cfg(test)]
pub(crate) mod split_tests {
    use crate::metrics::{Results, Table};
    use crate::scenario::{load, RunOptions};

    /// Flattened (name, dtype, bytes) of a table, for exact comparison.
    pub(crate) fn bytes(t: &Table) -> Vec<(String, &'static str, Vec<u8>)> {
        t.columns.iter().map(|(n, c)| (n.clone(), c.dtype(), c.to_le_bytes())).collect()
    }

    /// `a` and `b` are the same column, or the first row where they differ is named.
    fn assert_same(a: &(String, &'static str, Vec<u8>), b: &(String, &'static str, Vec<u8>), at: &str) {
        assert_eq!((a.1, a.2.len()), (b.1, b.2.len()), "{at}: type and length");
        if let Some(i) = a.2.iter().zip(&b.2).position(|(x, y)| x != y) {
            let w: usize = a.1[2..].parse().unwrap();
            let row = i / w;
            let show = |v: &[u8]| v[row * w..((row + 4) * w).min(v.len())].to_vec();
            panic!("{at}: first differs at row {row} of {}: {:?} against {:?} (bytes of it and the next rows)", a.2.len() / w, show(&a.2), show(&b.2));
        }
    }

    /// `text` built for `threads` threads, its `max_time` cut to `cap` at most.
    pub(crate) fn build_capped(text: &str, threads: usize, cap: Option<crate::sim::SimTime>) -> crate::engine::Sim {
        let opts = RunOptions { threads, ..Default::default() };
        let mut s = crate::scenario::Document::from_toml(text).and_then(|d| d.resolve(None)).unwrap_or_else(|e| panic!("{e}"));
        if let Some(cap) = cap {
            s.scenario.max_time.0 = s.scenario.max_time.0.min(cap);
        }
        crate::scenario::build(&s, &opts).unwrap_or_else(|e| panic!("{e}"))
    }

    fn run_capped(text: &str, threads: usize, cap: Option<crate::sim::SimTime>) -> (Results, u64, usize) {
        let mut sim = build_capped(text, threads, cap);
        sim.run();
        let mut r = sim.results();
        // the one-thread fallback's note is the only thing a thread count may add
        r.summary.as_object_mut().unwrap().remove("warnings");
        (r, sim.events(), sim.partitions())
    }

    /// Results at 2 and 3 threads are byte-identical to one thread's (every table, the
    /// summary, the event count); returns the partition counts.
    pub(crate) fn assert_identical(name: &str, text: &str) -> Vec<usize> {
        assert_identical_to(name, text, None)
    }

    /// `assert_identical` of `text` run to `cap` at most (its `max_time` cut).
    pub(crate) fn assert_identical_to(name: &str, text: &str, cap: Option<crate::sim::SimTime>) -> Vec<usize> {
        let (one, events, _) = run_capped(text, 1, cap);
        let mut parts = Vec::new();
        for threads in [2, 3] {
            let (r, e, p) = run_capped(text, threads, cap);
            let at = format!("{name} at {threads} threads ({p} partitions)");
            assert_eq!(e, events, "{at}: events");
            for (a, b, what) in [(&one.flows, &r.flows, "flows"), (&one.ports, &r.ports, "ports"), (&one.timeseries, &r.timeseries, "timeseries"), (&one.queues, &r.queues, "queues")] {
                let (a, b) = (bytes(a), bytes(b));
                for (ca, cb) in a.iter().zip(&b) {
                    assert_same(ca, cb, &format!("{at}: {what} column {}", ca.0));
                }
                assert_eq!(a.len(), b.len(), "{at}: {what} columns");
            }
            assert_eq!(one.summary, r.summary, "{at}: summary");
            parts.push(p);
        }
        // streamed (`dcnsim run -o`): the rows in the order one thread hands them out
        let streamed = |threads| streamed_rows(build_capped(text, threads, cap), crate::sim::SimTime::from_us(250));
        assert_eq!(streamed(1), streamed(2), "{name}: streamed rows at 2 threads");
        parts
    }

    /// `sim` streamed (`dcnsim run -o`) to its end in calls of `step`: its flows rows, each
    /// column's bytes, in the order handed out (the rows left at the end last).
    pub(crate) fn streamed_rows(mut sim: crate::engine::Sim, step: crate::sim::SimTime) -> Vec<(String, &'static str, Vec<u8>)> {
        sim.stream_flows();
        let mut rows: Vec<Table> = Vec::new();
        while !sim.done() {
            sim.run_until(sim.now() + step);
            rows.extend(sim.take_final_flows());
        }
        rows.push(sim.results().flows);
        let mut all = bytes(&rows[0]);
        for t in &rows[1..] {
            for (a, b) in all.iter_mut().zip(bytes(t)) {
                a.2.extend(b.2);
            }
        }
        all
    }

    #[test]
    fn the_critical_path_lies_between_the_busiest_partition_and_all_the_work() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/cc_k8_websearch_small.toml")).unwrap();
        let opts = RunOptions { threads: 3, ..Default::default() };
        let (_, mut whole) = load(&text, false, None, &opts).unwrap();
        assert!(whole.partitions() > 1, "the scenario splits");
        whole.run();
        let ev = whole.partition_events();
        let critical = whole.critical_path_events().unwrap();
        // a sum of per-window maxima: at least the busiest partition's sum, at most everyone's
        assert!(critical >= *ev.iter().max().unwrap() && critical <= ev.iter().sum::<u64>(), "{critical} against {ev:?}");
        assert!(critical < ev.iter().sum::<u64>(), "more than one partition worked at once");
        assert_eq!(ev.iter().sum::<u64>(), whole.events());
        // cut into calls (as a streamed run is): each call goes on from the counts where the
        // last stopped (a window cut in two can only add to the sum of maxima)
        let (_, mut cut) = load(&text, false, None, &opts).unwrap();
        while !cut.done() {
            cut.run_until(cut.now() + crate::sim::SimTime::from_us(37));
        }
        assert_eq!(cut.partition_events(), ev);
        let c = cut.critical_path_events().unwrap();
        assert!(c >= critical && c <= ev.iter().sum::<u64>(), "{c} cut into calls against {critical} in one");
        let (_, one) = load(&text, false, None, &RunOptions::default()).unwrap();
        assert_eq!(one.critical_path_events(), None);
    }

    /// Each partition's own ports name, in their wiring, the partition their peer belongs
    /// to where it is another's (the frames sent there cross), and none where it is its
    /// own; a run not split names none.
    #[test]
    fn a_partitions_ports_name_the_partition_of_a_peer_elsewhere() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/cc_k8_websearch_small.toml")).unwrap();
        let (_, whole) = load(&text, false, None, &RunOptions { threads: 3, ..Default::default() }).unwrap();
        let par = whole.par.as_ref().unwrap();
        assert_eq!(par.parts.len(), 3);
        let mut crossing = 0;
        for (me, p) in par.parts.iter().enumerate() {
            for (port, info) in whole.topo.ports.iter().enumerate() {
                if par.port_part[port] as usize != me {
                    continue;
                }
                let there = par.port_part[info.peer as usize];
                let want = if there as usize == me { 0 } else { 1 + there };
                assert_eq!(p.egress.at(port as crate::net::PortId).wire.peer_part, want, "port {port} of partition {me}");
                crossing += (want != 0) as usize;
            }
        }
        assert!(crossing > 0, "some links join two partitions");
        let (_, one) = load(&text, false, None, &RunOptions::default()).unwrap();
        assert!((0..one.topo.ports.len()).all(|p| one.egress.at(p as crate::net::PortId).wire.peer_part == 0));
    }

    /// How far the shipped scenarios run in the split-run test, in one thread's events:
    /// far enough that their flows start, continue, finish and are handed out, their
    /// mechanisms act and a streamed run stops several times; not to the end of the longest
    /// (seed 002's 60 s of DualQ, the seed 000/003 incasts' 100 ms), which the 19 scenarios
    /// at five runs each would take minutes to reach.
    const EVENTS: u64 = 1_500_000;
    /// And in windows (a split run's barriers, which cost more than a window's few events
    /// on a fabric of a few hosts).
    const WINDOWS: u64 = 100_000;

    /// The time by which one thread has run `events` events of `text`, or `windows`
    /// windows of a split run of it, whichever comes first (None: it ends before).
    pub(crate) fn time_of_events(text: &str, events: u64, windows: u64) -> Option<crate::sim::SimTime> {
        let mut sim = build_capped(text, 1, None);
        let end = crate::sim::SimTime(sim.sync.0.saturating_mul(windows));
        while !sim.done() {
            sim.run_until(sim.now() + crate::sim::SimTime::from_us(20));
            if (sim.events() >= events || sim.now() >= end) && !sim.done() {
                return Some(sim.now());
            }
        }
        None
    }

    /// PI2's update timer starts on an arrival at an idle switch (`Clocks::start`). On this
    /// dumbbell the sender's switch goes idle, a packet restarts its timer at 528.786 us, and
    /// the run ends 0.3 ns after the timer is due: the timer must be on the switch's own
    /// queue at once. It was left among the pending effects until some later event applied
    /// them; one thread ran it (an event on the far side applied them) and a split run did
    /// not (found by the seams property test: 385 events against 384).
    #[test]
    fn an_aqm_timer_started_by_an_arrival_runs_on_every_thread_count() {
        let text = "[scenario]\nname = \"pi2_clock\"\nseed = 29\nmax_time = \"530786ns\"\n\
                    [topology]\nkind = \"dumbbell\"\nmtu = \"1500B\"\nsenders = 2\nreceivers = 3\n\
                    host_link = { rate = \"60Gbps\", delay = \"4609ns\" }\nbottleneck = { rate = \"1Gbps\", delay = \"1267ns\" }\n\
                    [switch]\nbuffer = { model = \"static\", queue = \"70500B\" }\nqueues = 1\nlatency = \"0ns\"\n\
                    aqm = { kind = \"pi2\", target = \"30us\", tupdate = \"2us\", alpha = 0.16, beta = 10000.0 }\n\
                    [transport]\nkind = \"reno\"\necn = false\nmin_rto = \"100us\"\ninit_cwnd = 10\n\
                    [[workload]]\nkind = \"flows\"\nflows = [{ src = 0, dst = 2, size = \"42341B\" }]\n";
        let (_, events, _) = run_capped(text, 1, None);
        assert_eq!(events, 385, "the run's last event is the timer's, due at 530.785717 us");
        assert_identical("pi2 clock", text);
        // and to its end, which the timers' updates then follow alike
        assert_identical("pi2 clock, whole", &text.replace("530786ns", "612us"));
    }

    #[test]
    fn shipped_small_scenarios_give_the_same_results_on_two_and_three_threads() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
        let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| n.ends_with("_small.toml")).collect();
        names.sort();
        let mut split = 0;
        for n in &names {
            let text = std::fs::read_to_string(format!("{dir}/{n}")).unwrap();
            let t = std::time::Instant::now();
            let cap = time_of_events(&text, EVENTS, WINDOWS);
            let parts = assert_identical_to(n, &text, cap);
            eprintln!("{n}: partitions {parts:?} in {:.1}s, to {cap:?}", t.elapsed().as_secs_f64());
            split += (parts[0] > 1) as usize;
        }
        assert!(split > 0, "some shipped scenario runs split");
    }
}
