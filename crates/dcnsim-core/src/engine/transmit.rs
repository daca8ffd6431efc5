//! The transmitter: a port starts a frame when it is idle and has something to send
//! (control frames first, then its queues in the scheduler's order, a host's ready flows
//! last), and wakes at the frame's end when more waits.

use super::{ctx, Ev, Sim, TxRecord};
use crate::net::{PktId, PktKind, PortId};
use crate::sim::SimTime;
use crate::switch::mechanism::Caps;
use crate::switch::pipeline::Ctx;

impl Sim {
    /// Start a transmission on `port` if it is idle and has something to send;
    /// if it is busy and has a backlog, make sure a TxDone will wake it.
    pub(super) fn try_tx(&mut self, port: PortId) {
        let eg = self.egress.at(port);
        if eg.busy_until > self.now {
            let t = eg.busy_until;
            if t == SimTime::MAX {
                return self.drain_down(port);
            }
            if eg.txdone_at != t && self.has_backlog(port) {
                self.egress.at_mut(port).txdone_at = t;
                self.q.push(t, Ev::TxDone { port });
            }
            return;
        }
        if let Some(ctrl) = self.egress.pop_ctrl(port) {
            let size = self.pkts.get(ctrl).size;
            self.transmit(port, ctrl, size, PortId::MAX);
            return;
        }
        let h = self.egress.at(port).wire;
        let next = if h.is_switch { self.switch_dequeue(h.owner, port) } else { self.host_next_packet(h.owner) };
        if let Some((pkt, size, route)) = next {
            self.transmit(port, pkt, size, route);
        }
    }

    /// The idle-port cut-through, where `cut_through` allows it: if `port` is idle with
    /// nothing queued, `pkt` (`size` bytes, for queue `qi`) starts now without passing
    /// through the queue's FIFO, leaving what enqueue, try_tx and dequeue would leave at this
    /// instant (the buffer's accounting nets to nothing). False: it must be enqueued.
    #[inline(always)]
    pub(super) fn leave_at_once(&mut self, port: PortId, qi: usize, pkt: PktId, size: u32, route: PortId) -> bool {
        let eg = self.egress.at(port);
        if !(self.cut_through && eg.bytes == 0 && eg.busy_until <= self.now && !eg.has_ctrl()) {
            return false;
        }
        self.queues.get_mut(port, qi).pass_through(size);
        self.transmit(port, pkt, size, route);
        true
    }

    /// Tell the mechanisms that watch transmissions (DRC, INT) that `pkt` starts on `port`,
    /// then record it, as they left it, in the trace and the capture.
    #[inline(never)]
    pub(super) fn notify_transmit(&mut self, port: PortId, pkt: PktId) {
        if self.mechs.acts_at(Caps::WATCH_TX) {
            let class = self.pkts.get(pkt).qc as usize;
            self.mechs.on_transmit(port, pkt, class, &mut ctx!(self));
            self.apply_effects();
        }
        let p = self.pkts.get(pkt);
        if let Some(tr) = &mut self.trace {
            tr.push(TxRecord { time: self.now, port, kind: p.kind, flow: p.flow, seq: p.seq, size: p.size });
        }
        if let Some(c) = &mut self.capture {
            let (flows, part) = (&self.flows, &self.part);
            c.record(self.now, port, p, self.pkts.sack(pkt), &self.topo, &self.cfg.mechanisms, |f| flows.wire(f), |f| part.as_ref().expect("a partition holds frames").frame_order(f));
        }
    }

    /// Whether `port` has more to send: queued bytes or control frames, or at a NIC a flow
    /// ready to send.
    #[inline(always)]
    pub(super) fn has_backlog(&self, port: PortId) -> bool {
        let eg = self.egress.at(port);
        eg.bytes > 0 || eg.has_ctrl() || (!eg.wire.is_switch && self.host_has_ready(eg.wire.owner))
    }

    #[inline(never)]
    pub(super) fn host_has_ready(&self, host: u32) -> bool {
        self.ready.any(host)
    }

    /// Start `pkt` (`size` bytes on the wire, passed in so that a switch's dequeue reads no
    /// packet record) on `port` now: its arrival at the peer, and a TxDone if more waits.
    /// `route` is its egress at the switch the port leads to, if found (`route_beyond`).
    /// Inlined into its three callers: the call's register saves and restores were 16
    /// instructions of about 130 per transmission (k = 8 bench -3% instructions).
    #[inline(always)]
    pub(super) fn transmit(&mut self, port: PortId, pkt: PktId, size: u32, route: PortId) {
        let h = self.egress.at(port).wire;
        if !h.is_switch && self.pkts.get(pkt).kind == PktKind::Data {
            self.data_sent += 1;
        }
        let size = if self.watch_tx {
            self.notify_transmit(port, pkt);
            // a mechanism may have grown it as it leaves (INT records)
            let p = self.pkts.get(pkt);
            // (a control frame leaves from no queue)
            if p.size != size && !matches!(p.kind, PktKind::Ctrl(_)) {
                self.queues.get_mut(port, p.qc as usize).count_grown(p.size - size);
            }
            p.size
        } else {
            size
        };
        let done = self.now + h.ser(size as u64);
        let jitter = if h.is_switch { SimTime::ZERO } else { self.host_jitter(port) };
        let at = done + h.arrive_delay + jitter;
        if let Some(to) = h.crosses_to() {
            self.cross(at, to, h.peer, pkt, route);
        } else {
            self.q.push(at, Ev::Arrive { port: h.peer, pkt, route });
        }
        self.egress.at_mut(port).busy_until = done;
        if self.has_backlog(port) {
            self.egress.at_mut(port).txdone_at = done;
            self.q.push(done, Ev::TxDone { port });
        }
    }
}

impl Sim {
    /// How much later than `arrive_delay` after its last bit the frame host port `port`
    /// starts now reaches the far end: a draw in [0, `cfg.host_jitter`) from a hash of the
    /// seed, the time and the port (no state beyond the port's record: the same run gives
    /// the same draws), made when the port starts sending after an idle spell and held for
    /// the frames that follow back to back, so that a run of frames keeps its exact spacing
    /// (a fresh draw per frame made half of them reach a switch port of the same rate just
    /// before it was free, queue there and cost a TxDone event: 3-9% more events on the
    /// bench fabrics).
    ///
    /// Why (issue 34, part 5): every serialization time and delay in a scenario is exact, so
    /// identical flows on identical paths put packets on a common lattice of times, and two
    /// hosts' packets reach a switch at the same picosecond again and again. The event queue
    /// runs such ties in the order the events were scheduled, which on a dumbbell always
    /// favoured the same sender: it joined the queue first, was marked less, and the two
    /// flows' synchronized DCTCP sawtooths locked with it ahead for as long as they ran
    /// (4.96 / 4.77 Gbit/s at 2 us host links and K = 20 packets, 2.54 / 7.19 with every
    /// link 1 us, for every seed; docs/mechanisms.md, "Host jitter"). A quarter of
    /// a nanosecond of jitter on host links orders those ties by the seed instead, as any
    /// real pair of NICs would, and changes no time a result can resolve. Switch ports stay
    /// exact: what they send follows from what arrives, which the hosts' jitter spreads.
    #[inline(always)]
    pub(super) fn host_jitter(&mut self, port: PortId) -> SimTime {
        if self.jitter_range == 0 {
            return SimTime::ZERO;
        }
        let now = self.now;
        let (range, salt) = (self.jitter_range, self.jitter_salt);
        let eg = self.egress.at_mut(port);
        // transmit runs on an idle port: busy_until == now is a frame that follows the last
        // one back to back (at time 0 every port looks so: draw then too)
        if eg.busy_until != now || now == SimTime::ZERO {
            let h = crate::sim::rng::mix64(salt ^ now.0 ^ (port as u64) << 44);
            eg.jitter = (h % range) as u32;
        }
        SimTime(eg.jitter as u64)
    }
}

/// Departures fixed at enqueue (`Sim::fixed_departures`). A switch port with one FIFO
/// queue, a static buffer and nothing acting as packets leave sends each queued packet the
/// instant the one ahead of it ends: the packet's whole future at the port is known when
/// it joins. So it is scheduled then (its arrival at the far end pushed at once) and no
/// TxDone wakes the port. What the sequential model's TxDone would have done at a
/// departure's start, taking the packet off the queue and its counters, is done lazily:
/// by the next arrival at the port (`retire`), or where the run stops or pauses
/// (`settle_departures`), each counted as the event it stands for, so that the event count,
/// the clock and the tables are the ones the model gives with a TxDone per departure.
impl Sim {
    /// `pkt` (`size` bytes, to `route` at the next switch) joins `out`'s busy queue `qi`:
    /// it starts when the frames ahead end (`busy_until`). The port's `txdone_at`, which
    /// no wake-up uses here, holds its queue head's start: each packet starts as the one
    /// ahead of it ends, so the head's start gives every start.
    #[inline(never)]
    pub(super) fn fix_departure(&mut self, out: PortId, qi: usize, pkt: PktId, size: u32, route: PortId) {
        let now = self.now;
        let eg = self.egress.at_mut(out);
        let start = eg.busy_until.max(now);
        if eg.bytes == 0 {
            eg.txdone_at = start;
        }
        eg.bytes += size as u64;
        let h = eg.wire;
        let done = start + h.ser(size as u64);
        eg.busy_until = done;
        self.queues.get_mut(out, qi).push(pkt, size, route, now);
        self.q.push(done + h.arrive_delay, Ev::Arrive { port: h.peer, pkt, route });
        // the sequential model's kick: an arrival at the instant the frame ahead ends finds
        // the port idle and starts the head at once
        self.retire(out, SimTime(now.0 + 1));
    }

    /// The packets of `port`'s queue whose departures begin before `before` leave it, each
    /// counted as the TxDone event that started it in the sequential model.
    #[inline(always)]
    pub(super) fn retire(&mut self, port: PortId, before: SimTime) {
        let eg = self.egress.at(port);
        let (mut s, mut bytes, w) = (eg.txdone_at, eg.bytes, eg.wire);
        if bytes == 0 || s >= before {
            return;
        }
        let q = self.queues.get_mut(port, 0);
        let mut n = 0;
        let mut last = s;
        while bytes > 0 && s < before {
            let (_, size, _) = q.pop(s).expect("a fixed port's bytes are its queue's");
            bytes -= size as u64;
            last = s;
            s = s + w.ser(size as u64);
            n += 1;
        }
        let eg = self.egress.at_mut(port);
        (eg.bytes, eg.txdone_at) = (bytes, s);
        self.events += n;
        self.last_departure = self.last_departure.max(last);
    }

    /// The run stops or pauses having run every event up to and including `through`: the
    /// departures that began by then leave their queues, the clock reads the last of them
    /// if it came after every other event, and the final flows' rows are looked for as the
    /// first of those TxDones past a look's time would have (`collect_final`: no other
    /// event came between, so the rows are the same).
    pub(super) fn settle_departures(&mut self, through: SimTime) {
        if !self.fixed_departures {
            return;
        }
        let before = SimTime(through.0.saturating_add(1));
        for port in 0..self.topo.ports.len() as PortId {
            if self.egress.at(port).wire.is_switch {
                self.retire(port, before);
            }
        }
        if self.last_departure > self.now {
            self.now = self.last_departure;
            if self.now >= self.next_final {
                self.collect_final();
            }
        }
    }

    /// Whether a fixed departure not yet settled begins by `t` (a TxDone the sequential
    /// model would run by then).
    pub(super) fn departure_by(&self, t: SimTime) -> bool {
        self.fixed_departures && (0..self.topo.ports.len() as PortId).any(|p| {
            let eg = self.egress.at(p);
            eg.wire.is_switch && eg.bytes > 0 && eg.txdone_at <= t
        })
    }
}
