//! A packet through a switch: the receive pipeline (route, classify, admit, AQM, enqueue,
//! on_enqueue) and the transmit side (select, on_dequeue), calling the mechanisms in the
//! order `switch::pipeline` documents.

use super::{ctx, Sim, MAX_HOPS};
use crate::net::Ecn;
use crate::net::{HostId, PktId, PktKind, PortId};
use crate::switch::mechanism::{Caps, Verdict};
use crate::switch::pipeline::{Admission, AqmAction, AqmRule, Arrival, Ctx, Departure, Overflow, RouteAt};
use crate::net::{DropReason, MarkReason};

impl Sim {
    /// A packet arrived at switch `sw` through `in_port`; `route` is its egress here if the
    /// hop before found it (`Sim::route_beyond`), else `PortId::MAX`.
    pub(super) fn switch_rx<const FIXED: bool>(&mut self, sw: u32, in_port: PortId, pkt: PktId, route: PortId) {
        // route_msg takes the same hop, TTL and route steps; a helper shared by both cost the
        // k=8 bench 0.5% more instructions (inlining), on the hottest path of the engine
        let (dst, hash, prio, size, tc, hops, ecn) = {
            let p = self.pkts.get_mut(pkt);
            p.hops = p.hops.saturating_add(1);
            p.tc = p.qc;
            (p.dst, p.hash, p.prio, p.size, p.tc, p.hops, p.ecn)
        };
        let class = self.cfg.class(prio);
        if hops > MAX_HOPS {
            self.drop_pkt(pkt, Some((in_port, class)), DropReason::Ttl);
            return;
        }
        #[cfg(test)]
        {
            self.routed_on_arrival.0 += (route == PortId::MAX) as u64;
            self.routed_on_arrival.1 += 1;
        }
        let out = match route {
            PortId::MAX => match self.routes.next_hop(sw, dst, hash) {
                // a router's choice is never looked up a hop ahead (`route_beyond`)
                Some(o) if self.mechs.acts_at(Caps::ROUTE) => self.choose_route(RouteAt { sw, in_port, pkt, dst, hash, class, size: size as u64, hashed: o }),
                Some(o) => o,
                None => return self.drop_pkt(pkt, Some((in_port, class)), DropReason::NoRoute),
            },
            out => out,
        };
        if FIXED {
            // what began before now has left; a departure that begins now is still queued
            // (the sequential model's TxDone runs after the arrivals of its instant)
            self.retire(out, self.now);
        }
        let mut size = size;
        let mut a = Arrival::new(sw, in_port, out, pkt, size as u64, hash, ecn, class, tc as usize);
        // a stage no mechanism acts at costs neither a context nor a call
        if self.mechs.acts_at(Caps::CLASSIFY) {
            self.mechs.classify(&mut a, &mut ctx!(self));
            self.apply_effects();
        }
        let admission = if self.mechs.acts_at(Caps::ADMIT) { self.mechs.admit(&mut a, &mut ctx!(self)) } else { Admission::Buffer };
        match admission {
            Admission::Drop(why, port, q) => return self.drop_pkt(pkt, Some((port, q)), why),
            Admission::Admitted => {}
            Admission::Held => {
                self.queues.hold(a.in_port, a.out, a.queue, a.size);
                if self.mechs.acts_at(Caps::ENQUEUE) {
                    self.mechs.on_held(&a, &mut ctx!(self));
                }
                return self.apply_effects();
            }
            Admission::Buffer => {
                if !self.buffer_fits(sw, out, a.queue, a.size) {
                    let why = if a.lossless { DropReason::Lossless } else { DropReason::BufferFull };
                    let q = a.queue;
                    match self.overflow(&mut a, why) {
                        Some(trimmed) => size = trimmed,
                        None => return self.drop_pkt(pkt, Some((out, q)), why),
                    }
                }
            }
        }
        self.join_egress::<FIXED>(&a, dst, size, true);
    }

    /// An admitted packet `a` (to `dst`, `size` bytes) joins its egress queue: the AQM
    /// stage, the enqueue, the on_enqueue hooks, the transmitter. Inlined into both callers
    /// (the receive path and a release from an ingress model). `by_buffer`: the switch's
    /// buffer model admitted it, so `--check-invariants` holds the queue and the switch to
    /// that model's limits; a packet an ingress model released was admitted by that
    /// model's own memory, which the buffer model's limits do not describe.
    #[inline(always)]
    fn join_egress<const FIXED: bool>(&mut self, a: &Arrival, dst: HostId, size: u32, by_buffer: bool) {
        self.queue_or_send::<FIXED>(a, dst, size, by_buffer);
        // an AQM's clock starts on an arrival (PI2's update timer): pushed as this event
        // ends, not by whichever later event applies effects next (in a split run, none may
        // before the timer is due, and one thread would run an update the partitions skip).
        // Here rather than after the AQM stage: a call there, between the stage and the
        // enqueue, cost the k = 8 bench 1.4% of its instructions (registers spilled).
        self.apply_effects();
    }

    #[inline(always)]
    fn queue_or_send<const FIXED: bool>(&mut self, a: &Arrival, dst: HostId, size: u32, by_buffer: bool) {
        let (sw, in_port, out, pkt, hash) = (a.sw, a.in_port, a.out, a.pkt, a.hash);
        let qi = a.queue;
        match self.mechs.aqm(a, || ctx!(self)) {
            AqmAction::Pass => {}
            AqmAction::Mark => self.mark(pkt, out, qi),
            AqmAction::Drop(why) => return self.drop_pkt(pkt, Some((out, qi)), why),
        }
        {
            let p = self.pkts.get_mut(pkt);
            p.ingress = in_port;
            p.enq = self.now;
            p.qc = qi as u8;
        }
        let beyond = self.route_beyond(out, dst, hash);
        if self.leave_at_once(out, qi, pkt, size, beyond) {
            return;
        }
        if FIXED {
            return self.fix_departure(out, qi, pkt, size, beyond);
        }
        let st = &mut self.switches[sw as usize];
        let eg = self.egress.at_mut(out);
        // a static buffer keeps no switch-wide count (`queue_admits`)
        if self.cfg.buffer.is_shared() {
            st.buffer.on_enqueue(eg.bytes, a.size);
        }
        eg.bytes += a.size;
        if !self.port_busy.is_empty() && !self.port_busy[out as usize] {
            // queue sampling reads the ports that hold something (Sim::busy_ports)
            self.port_busy[out as usize] = true;
            self.busy_ports.push(out);
        }
        let q = self.queues.get_mut(out, qi);
        q.push(pkt, size, beyond, self.now);
        if self.cfg.check_invariants && by_buffer {
            self.check_buffer(sw, out, qi, a.ingress_admitted);
        }
        if self.mechs.acts_at(Caps::ENQUEUE) {
            self.mechs.on_enqueue(a, &mut ctx!(self));
            self.apply_effects();
        }
        self.try_tx(out);
    }

    /// A mechanism that modelled the switch's ingress side releases a packet it held
    /// (`Admission::Held`, `Effect::Release`) to its egress queue; its buffer model admitted
    /// it, so the egress buffer does not refuse it.
    #[inline(never)]
    pub(super) fn release(&mut self, a: Arrival) {
        let dst = self.pkts.get(a.pkt).dst;
        self.queues.unhold(a.in_port, a.out, a.queue, a.size);
        self.join_egress::<false>(&a, dst, a.size as u32, false);
    }

    /// Whether the buffer model of switch `sw` has room for `size` more bytes in queue `qi`
    /// of `out`.
    #[inline(always)]
    fn buffer_fits(&self, sw: u32, out: PortId, qi: usize, size: u64) -> bool {
        let q = self.queues.get(out, qi);
        match self.cfg.buffer.queue_admits(q.bytes, size) {
            Some(fits) => fits,
            None => self.switches[sw as usize].buffer.admits(self.egress.at(out).bytes, q.bytes, size),
        }
    }

    /// The next hop a configured router chooses for the packet `r` describes (ECMP's,
    /// `r.hashed`, where there is one candidate or the router leaves it). Out of line: only
    /// runs with a router call it.
    #[inline(never)]
    fn choose_route(&mut self, r: RouteAt) -> PortId {
        let mut candidates = std::mem::take(&mut self.route_candidates);
        self.routes.candidates(r.sw, r.dst, &mut candidates);
        if candidates.len() < 2 {
            self.route_candidates = candidates;
            return r.hashed;
        }
        let chosen = self.mechs.route(&r, &candidates, &mut ctx!(self));
        if let Some(p) = chosen {
            assert!(candidates.contains(&p), "switch {}: a router chose port {p}, not a next hop toward host {}", r.sw, r.dst);
        }
        self.route_candidates = candidates;
        self.apply_effects();
        chosen.unwrap_or(r.hashed)
    }

    /// The buffer refused the arriving packet `a` (`why`): a trimming mechanism may cut a
    /// lossy data packet to its headers, held in its own memory in the queue it names. The
    /// trimmed packet's size, or None: it is dropped. Out of line: a packet that does not
    /// fit is the rare case.
    #[cold]
    #[inline(never)]
    fn overflow(&mut self, a: &mut Arrival, why: DropReason) -> Option<u32> {
        if a.lossless || !self.mechs.acts_at(Caps::TRIM) || self.pkts.get(a.pkt).kind != PktKind::Data {
            return None;
        }
        let verdict = self.mechs.on_overflow(a, why, &mut ctx!(self));
        self.apply_effects();
        let Overflow::Trim { queue, bytes } = verdict else {
            return None;
        };
        assert!(queue < self.cfg.queues && bytes > 0 && bytes as u64 <= a.size, "a trim to {bytes} B in queue {queue} of a {} B packet (the ports have {} queues)", a.size, self.cfg.queues);
        // (held in the trimmer's own memory, not the buffer model's)
        (a.queue, a.size, a.aqm, a.ingress_admitted) = (queue, bytes as u64, AqmRule::Skip, true);
        let p = self.pkts.get_mut(a.pkt);
        (p.kind, p.size) = (PktKind::Trimmed, bytes);
        Some(bytes)
    }

    /// Record a violation if queue `qi` of `out` exceeds its limit (unless lossless ingress
    /// accounting admitted the packet just queued) or switch `sw` holds more than its memory.
    /// Out of line: only `check_invariants` runs call it.
    #[cold]
    #[inline(never)]
    fn check_buffer(&mut self, sw: u32, out: PortId, qi: usize, ingress_admitted: bool) {
        let st = &self.switches[sw as usize];
        let q = self.queues.get(out, qi);
        let lim = st.buffer.queue_limit();
        if !ingress_admitted && q.bytes > lim {
            self.violations.push(format!("t={} port {out} queue {qi}: {} B > limit {lim} B", self.now, q.bytes));
        }
        let memory = st.buffer.memory();
        let held: u64 = self.topo.nodes[self.topo.switches[sw as usize] as usize].ports.iter().map(|&p| self.egress[p as usize].bytes).sum();
        if held > memory {
            let depth = q.bytes;
            self.violations.push(format!("t={} switch {sw}: {held} B buffered > memory {memory} B (port {out} queue {qi} holds {depth} B)", self.now));
        }
    }

    /// Take the next packet to send from switch `sw`'s egress `port`: the scheduler picks
    /// among the queues no mechanism holds; the on_dequeue hooks run before it leaves, and a
    /// packet they drop is replaced by the next. Gives the packet, its size and its route at
    /// the next switch.
    #[inline(always)]
    pub(super) fn switch_dequeue(&mut self, sw: u32, port: PortId) -> Option<(PktId, u32, PortId)> {
        loop {
            let now = self.now;
            let (eg, ctl) = self.egress.both_mut(port);
            let mechs = &mut self.mechs;
            let pkts = &self.pkts;
            let queues = self.queues.of_mut(port);
            let sched = &mut ctl.sched;
            // two instances of the scheduler: with nothing that can hold a queue (most runs) it
            // asks no mechanism at all
            let qi = if mechs.acts_at(Caps::HOLD) {
                let m = &*mechs;
                self.cfg.scheduler.select(queues, sched, |i: usize| m.holds(port, i, queues, pkts, now))
            } else {
                self.cfg.scheduler.select(queues, sched, |_| false)
            }?;
            if mechs.acts_at(Caps::REORDER) {
                let idx = mechs.pick(port, qi, &queues[qi], pkts, now)?;
                if idx > 0 {
                    queues[qi].to_front(idx);
                }
            }
            let (pkt, size, route) = queues[qi].pop(now).unwrap();
            if self.cfg.buffer.is_shared() {
                self.switches[sw as usize].buffer.on_dequeue(eg.bytes, size as u64);
            }
            eg.bytes -= size as u64;
            if self.mechs.acts_at(Caps::DEQUEUE) {
                let p = self.pkts.get(pkt);
                let d = Departure { sw, port, queue: qi, pkt, size: size as u64, flow: p.flow, in_port: p.ingress, tc: p.tc as usize, enq: p.enq };
                let verdict = self.mechs.on_dequeue(&d, &mut ctx!(self));
                self.apply_effects();
                match verdict {
                    Verdict::Send => {}
                    Verdict::Mark => self.mark(pkt, port, qi),
                    Verdict::Drop(why) => {
                        self.drop_pkt(pkt, Some((port, qi)), why);
                        continue;
                    }
                }
            }
            return Some((pkt, size, route));
        }
    }

    /// CE-mark `pkt` (an AQM marks only ECN-capable packets), counting the mark on queue
    /// `qi` of `port`.
    #[inline]
    fn mark(&mut self, pkt: PktId, port: PortId, qi: usize) {
        self.pkts.get_mut(pkt).ecn = Ecn::Ce;
        self.queues.stats_mut(port, qi).count_mark(MarkReason::Aqm);
        self.ecn_marks += 1;
    }
}
