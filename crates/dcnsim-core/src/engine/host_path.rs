//! Hosts: the NIC's arbitration among its queues and ready flows, the transports' packet
//! handling (TCP, RoCE, UDP), retransmission and pacing timers, and flow start and finish.

use super::{ctx, Ev, Sim};
use crate::host::transport::{Next, Nic, Ready};
use crate::host::udp::{Arrivals, SizeDist, UdpSource};
use crate::host::{Flow, Sender, Transport};
use crate::net::{Ecn, FlowId, Packet, PktId, PktKind, PortId};
use crate::sim::rng::mix64;
use crate::sim::{ser_time, stream, SimTime, Stream};
use crate::switch::mechanism::Caps;
use crate::switch::pipeline::Ctx;
use crate::net::{DropReason, Scheduler};
use crate::workload::FlowSpec;

impl Sim {
    /// Enqueue a host-generated packet (ACK, datagram) on the host's NIC.
    pub(super) fn nic_enqueue(&mut self, host: u32, pkt: PktId) {
        let port = self.hosts[host as usize].port;
        let (size, prio, flow, data, dst, hash) = {
            let p = self.pkts.get(pkt);
            (p.size, p.prio, p.flow, p.kind == PktKind::Data, p.dst, p.hash)
        };
        // datagrams of a flow a CIP isolated at this NIC go to the congested class
        let isolated = if data { self.flows.get(flow).and_then(|f| f.nic_class) } else { None };
        let qi = isolated.map_or(self.cfg.class(prio), |c| c as usize);
        self.pkts.get_mut(pkt).qc = qi as u8;
        // the NIC serves its own queues before its flows: from an idle, empty NIC the packet
        // may leave at once
        let route = self.route_beyond(port, dst, hash);
        if self.leave_at_once(port, qi, pkt, size, route) {
            return;
        }
        self.egress.at_mut(port).bytes += size as u64;
        self.queues.get_mut(port, qi).push(pkt, size, route, self.now);
        self.try_tx(port);
    }

    /// The next packet host `h`'s NIC sends, its size and its route at the switch the NIC
    /// leads to (`Sim::route_beyond`), as `switch_dequeue` gives them.
    pub(super) fn host_next_packet(&mut self, h: u32) -> Option<(PktId, u32, PortId)> {
        let (port, line_rate) = (self.hosts[h as usize].port, self.hosts[h as usize].rate_bps);
        let now = self.now;
        let reorders = self.mechs.acts_at(Caps::REORDER);
        let (eg, ctl) = self.egress.both_mut(port);
        let pkts = &self.pkts;
        let queues = self.queues.of_mut(port);
        if eg.bytes > 0 {
            // the NIC's own queues: also held when a mechanism that reorders lets none of a
            // queue's frames go
            let m = &self.mechs;
            let queue_blocked = |i: usize| m.gated(port, i, now) || (reorders && m.holds(port, i, queues, pkts, now));
            if let Some(qi) = Scheduler::Strict.select(queues, &mut ctl.sched, queue_blocked) {
                if reorders {
                    let idx = self.mechs.pick(port, qi, &queues[qi], pkts, now)?;
                    if idx > 0 {
                        queues[qi].to_front(idx);
                    }
                }
                let (pkt, size, route) = queues[qi].pop(now)?;
                eg.bytes -= size as u64;
                return Some((pkt, size, route));
            }
        }
        let mechs = &self.mechs;
        let blocked = |i: usize| mechs.gated(port, i, now);
        // paced flows found not ready: re-examined (and woken later) once we are done
        let mut pace: Vec<FlowId> = Vec::new();
        // flows whose direction DRC holds back: kept ready for when the mechanism wakes the port
        let mut skipped: Vec<(u32, usize)> = Vec::new();
        for class in (0..self.cfg.queues).rev() {
            if blocked(class) {
                continue;
            }
            while let Some(s) = self.ready.pop_front(self.flows.slab_mut(), h, class) {
                let fl = self.flows.at_mut(s);
                let f = fl.id;
                if self.holds.held(s, now) {
                    // held by a mechanism since it was queued: make_ready arms its return
                    pace.push(f);
                    continue;
                }
                if reorders && !self.mechs.nic_may_send(port, fl.dst, fl.hash, class, now) {
                    skipped.push((s, class));
                    continue;
                }
                if let Some(c) = fl.nic_class {
                    if c as usize != class {
                        // isolated at the NIC by a CIP since it was queued: move it
                        self.ready.push_back(self.flows.slab_mut(), h, c as usize, s);
                        continue;
                    }
                }
                let nic = Nic { mss: self.cfg.mtu - self.cfg.header, header: self.cfg.header, rate_bps: line_rate };
                let (seg, ect, still, recheck) = match fl.sender.next(fl.size, nic, now) {
                    Next::Send { seg, ect, still, recheck } => (seg, ect, still, recheck),
                    Next::Skip => continue,
                    Next::Recheck => {
                        pace.push(f);
                        continue;
                    }
                };
                if seg.retx {
                    fl.retx += 1;
                }
                let hash = fl.sender.entropy(self.cfg.path, fl.hash, &seg);
                // the flows this NIC holds ready, this one (taken off its list) included:
                // htsim's `activeSources`, the sources queued at the NIC for a free port
                let pull = fl.sender.pull_target(fl.size, self.ready.waiting(h) + 1);
                let p = Packet {
                    kind: PktKind::Data,
                    flow: f,
                    src: fl.src,
                    dst: fl.dst,
                    seq: seg.seq,
                    size: seg.len + self.cfg.header,
                    payload: seg.len,
                    prio: fl.prio,
                    ecn: ect,
                    ece: false,
                    flags: seg.retx as u8 * Packet::RETX | seg.ar as u8 * Packet::AR,
                    hash,
                    ts: self.now,
                    qc: class as u8,
                    ..Packet::blank()
                };
                if !fl.sender.rate_controlled() && self.mechs.acts_at(Caps::LIMIT_RATES) {
                    if let Some(until) = self.mechs.on_host_send(f, p.size, now) {
                        self.holds.hold(s, until);
                    }
                }
                if still {
                    self.ready.push_back(self.flows.slab_mut(), h, class, s);
                }
                self.ensure_timer(f);
                if recheck {
                    pace.push(f);
                }
                self.queues.get_mut(port, class).count_tx(p.size);
                let (size, route) = (p.size, self.route_beyond(port, p.dst, p.hash));
                let id = self.new_packet(p);
                if let Some(v) = pull {
                    self.pkts.set_pull(id, v);
                }
                if !skipped.is_empty() {
                    self.unskip(h, skipped);
                }
                for f in pace {
                    self.make_ready(f);
                }
                return Some((id, size, route));
            }
        }
        if !skipped.is_empty() {
            self.unskip(h, skipped);
        }
        for f in pace {
            self.make_ready(f);
        }
        None
    }

    /// Put flows a mechanism held back by direction back on their ready lists.
    #[cold]
    #[inline(never)]
    fn unskip(&mut self, h: u32, skipped: Vec<(u32, usize)>) {
        for (s, class) in skipped {
            self.ready.push_back(self.flows.slab_mut(), h, class, s);
        }
    }

    #[inline(always)]
    pub(super) fn host_rx(&mut self, host: u32, port: PortId, pkt: PktId) {
        let (kind, f, dst, prio) = {
            let p = self.pkts.get(pkt);
            (p.kind, p.flow, p.dst, p.prio)
        };
        if dst != host {
            let class = self.cfg.class(prio);
            return self.drop_pkt(pkt, Some((port, class)), DropReason::WrongHost);
        }
        if self.flows.slot(f).is_none() {
            // a late packet of a finished flow: a reliable flow's receiver, which held every
            // byte before its sender could finish, answers data with the cumulative ACK (as
            // it does while the sender runs: `Flow::receive`), from what it alone knows.
            // (Before, it answered nothing once the sender had finished: the receiver read
            // the sender's state at the same instant, which no partitioned run can do.)
            // A late SYN (a retransmission that crossed the SYN-ACK) is answered too.
            if self.cfg.uet.in_flight_received && matches!(kind, PktKind::Data | PktKind::Rts) {
                // the receiver's count of bytes taken left with its half: the ACK carries
                // none (it ends the flow; the slot's pull target must not pass for a count)
                self.pkts.set_pull(pkt, 0);
            }
            match (self.flows.answers_late(f), kind) {
                (Some(size), PktKind::Data) => {
                    let ce = self.pkts.get(pkt).ecn.is_ce();
                    self.reply_in_place(pkt, PktKind::Ack, size, ce);
                }
                (Some(_), PktKind::Syn) => self.reply_in_place(pkt, PktKind::SynAck, 0, false),
                (Some(size), PktKind::Rts) => self.reply_in_place(pkt, PktKind::Ack, size, false),
                (_, PktKind::Trimmed) => self.discard_trimmed(pkt),
                // a mechanism's message is for the host's side of the mechanism, which
                // outlives the flow (a CNM still reaches the NIC's reaction point); and a
                // split run retires a datagram flow's source half once it has sent
                // everything, where one thread keeps it until its last datagram arrives
                (_, PktKind::Msg(msg)) => self.host_msg(msg, port, pkt),
                _ => self.consume(pkt),
            }
            return;
        }
        match kind {
            PktKind::Data => self.on_data(f, pkt),
            PktKind::Trimmed => self.on_trimmed(f, pkt),
            PktKind::Rts => self.on_rts(f, pkt),
            PktKind::Ack | PktKind::Nack => self.on_ack(f, pkt),
            PktKind::Syn => self.reply_in_place(pkt, PktKind::SynAck, 0, false),
            PktKind::SynAck => {
                self.consume(pkt);
                if self.flows.get_mut(f).unwrap().sender.on_syn_ack() {
                    self.make_ready(f);
                }
            }
            PktKind::Cnp => {
                self.consume(pkt);
                let now = self.now;
                self.flows.get_mut(f).unwrap().sender.on_cnp(now);
            }
            PktKind::Credit => {
                let granted = self.pkts.get(pkt).seq;
                self.consume(pkt);
                self.flows.get_mut(f).unwrap().sender.on_credit(granted);
                self.make_ready(f);
            }
            PktKind::Msg(msg) => self.host_msg(msg, port, pkt),
            PktKind::Ctrl(_) => unreachable!("control frames are handled on arrival"),
        }
    }

    /// The receiver of flow `f` grants its sender the credit paced so far (`host::credit`)
    /// and sets its timer for the next grant, until it holds every byte.
    #[cold]
    pub(super) fn grant_credit(&mut self, f: FlowId) {
        let Some(c) = self.cfg.credits else { return };
        let Some(fl) = self.flows.get(f) else { return };
        if fl.receiver_complete() {
            return;
        }
        let (src, dst, prio, hash) = (fl.src, fl.dst, fl.prio, fl.hash);
        let granted = c.granted(fl.start, self.now);
        let p = Packet { kind: PktKind::Credit, flow: f, src: dst, dst: src, seq: granted, size: self.cfg.ack_size, prio, hash, ts: self.now, ..Packet::blank() };
        let id = self.new_packet(p);
        self.nic_enqueue(dst, id);
        self.q.push(self.now + c.every, Ev::Credit { flow: f });
    }

    /// A mechanism's message `msg` reached its host through `port`.
    fn host_msg(&mut self, msg: crate::net::Msg, port: PortId, pkt: PktId) {
        self.mechs.on_host_msg(msg, port, pkt, &mut ctx!(self));
        self.consume(pkt);
        self.apply_effects();
    }

    pub(super) fn on_data(&mut self, f: FlowId, pkt: PktId) {
        let pull = self.pkts.pull(pkt);
        // (a receiver that holds every byte pulls no more: a late duplicate asks for nothing,
        // as it does of a split run's retired receiver half)
        if pull > 0 && !self.flows.get(f).unwrap().receiver_complete() {
            self.pull_wanted(f, pull, false);
        }
        let fl = self.flows.get_mut(f).unwrap();
        let p = self.pkts.get(pkt);
        let ce = p.ecn.is_ce();
        // a receiver that holds every byte answers as a finished flow's does (host_rx)
        if ce && !fl.receiver_complete() {
            fl.ecn_marks += 1;
        }
        let r = fl.receive(p.seq, p.payload, ce, p.flags & Packet::AR != 0, self.now, self.cfg.roce.cnp_interval);
        if r.datagram && self.cfg.frame_latency {
            // a frame's latency: made at the source to its last byte in at the host
            let e = self.frame_latency.entry(f);
            e.0 += (self.now - p.ts).0;
            e.1 += 1;
        }
        self.count_goodput(f, r.delivered);
        let p = self.pkts.get(pkt);
        let (src, dst, prio, hash) = (p.src, p.dst, p.prio, p.hash);
        if r.reply == PktKind::Data {
            self.consume(pkt);
        } else {
            if r.sack {
                // before the reply is queued: an idle NIC sends it at once (and a capture
                // writes it then); the slot keeps its extensions as it turns into the ACK
                self.attach_sack(f, pkt);
            }
            // (a call and a flow lookup for every TCP segment, 0.6% of the k = 8 bench's
            // instructions, where only a UET sender has a count to carry)
            if r.uet && self.cfg.uet.in_flight_received {
                self.carry_received(f, pkt);
            }
            self.reply_in_place(pkt, r.reply, r.seq, r.ece);
        }
        if r.cnp {
            let c = Packet { kind: PktKind::Cnp, flow: f, src: dst, dst: src, size: self.cfg.ack_size, prio, hash, ts: self.now, ..Packet::blank() };
            let id = self.new_packet(c);
            self.nic_enqueue(dst, id);
        }
        // a receiver holding every byte pulls no more, whatever its last packet asked for (a
        // split run's receiver half retires now: one thread must not pull for it either)
        if let Some(pp) = &mut self.pull_pacers {
            if self.flows.get(f).is_some_and(|fl| fl.receiver_complete()) {
                pp.done(f);
            }
        }
        if r.done {
            self.finish_flow(f);
        } else if self.part.is_some() {
            self.retire_receiver_half(f);
        }
    }

    /// Flow `f`'s receiver saw the RCCC pull target a packet carried (`trimmed`: on its
    /// trimmed header): its NIC's pull pacer takes it (`host/rccc.rs`), started if idle.
    #[cold]
    fn pull_wanted(&mut self, f: FlowId, carried: u64, trimmed: bool) {
        let fl = self.flows.get(f).unwrap();
        // (a split run's receiver half builds the same sender: the same cap)
        let (h, cap) = (fl.dst, fl.sender.credit_cap().unwrap_or(0));
        let n = self.hosts.len();
        let pp = self.pull_pacers.get_or_insert_with(|| Box::new(crate::host::rccc::PullPacers::new(n)));
        if pp.want(h, f, carried, trimmed, cap) {
            self.q.push(self.now, Ev::Pull { host: h });
        }
    }

    /// Host `h`'s pull pacer's turn: a pull to one of its flows' senders, and the next turn.
    pub(super) fn pull_turn(&mut self, h: u32) {
        let rate = self.hosts[h as usize].rate_bps;
        let Some(pp) = &mut self.pull_pacers else { return };
        let t = pp.turn(h, self.now, rate);
        if let Some((f, granted)) = t.pull {
            if let Some(fl) = self.flows.get(f) {
                let (src, prio, hash) = (fl.src, fl.prio, fl.hash);
                let p = Packet { kind: PktKind::Credit, flow: f, src: h, dst: src, seq: granted, size: self.cfg.ack_size, prio, hash, ts: self.now, ..Packet::blank() };
                let id = self.new_packet(p);
                self.nic_enqueue(h, id);
            }
        }
        if let Some(at) = t.next {
            self.q.push(at, Ev::Pull { host: h });
        }
    }

    /// The header of a packet of flow `f` a switch trimmed reached its receiver. A transport
    /// that knows trimming (UET) answers it with a NACK naming the packet (or, if the
    /// packet arrived whole before, as its receiver answers a duplicate: an ACK); the
    /// others discard it, and so does a receiver that holds every byte, as a finished
    /// flow's does (host_rx): in a run split over threads the receiver's half may have
    /// retired by then.
    fn on_trimmed(&mut self, f: FlowId, pkt: PktId) {
        let fl = self.flows.get(f).unwrap();
        if !fl.transport.knows_trimming() || fl.receiver_complete() {
            return self.discard_trimmed(pkt);
        }
        let p = self.pkts.get(pkt);
        if fl.rx.holds_not(p.seq, p.payload as u64) {
            let (seq, pull) = (p.seq, self.pkts.pull(pkt));
            if pull > 0 {
                self.pull_wanted(f, pull, true);
            }
            self.reply_in_place(pkt, PktKind::Nack, seq, false);
        } else {
            let r = self.flows.get_mut(f).unwrap().receive(p.seq, p.payload, false, false, self.now, self.cfg.roce.cnp_interval);
            if r.sack {
                self.attach_sack(f, pkt);
            }
            self.carry_received(f, pkt);
            self.reply_in_place(pkt, r.reply, r.seq, false);
        }
    }

    /// UET's request to send reached flow `f`'s receiver (htsim `UecSink::processRts`): its
    /// pull pacer takes the pull target it carries (which asks for a pull whatever it is),
    /// and it answers at once with an ACK of what it holds.
    #[cold]
    fn on_rts(&mut self, f: FlowId, pkt: PktId) {
        let pull = self.pkts.pull(pkt);
        if pull > 0 && !self.flows.get(f).unwrap().receiver_complete() {
            self.pull_wanted(f, pull, false);
        }
        let (cum, sack) = self.flows.get_mut(f).unwrap().rts_reply();
        if sack {
            self.attach_sack(f, pkt);
        }
        self.carry_received(f, pkt);
        self.reply_in_place(pkt, PktKind::Ack, cum, false);
    }

    /// UE's ACK_CC `rcvd_bytes` (host/uet.rs `Received`): the UET ACK `pkt` of flow `f`
    /// carries its receiver's count of bytes taken where its sender counts what is in
    /// flight by it, in the slot's pull field (which otherwise holds the RCCC pull target
    /// of the data packet, RTS or trimmed header it answers: no ACK reads that).
    #[inline(never)]
    fn carry_received(&mut self, f: FlowId, pkt: PktId) {
        if let Some(v) = self.flows.get(f).and_then(|fl| fl.sender.received_to_carry()) {
            self.pkts.set_pull(pkt, v);
        }
    }

    /// A trimmed packet reached its host and is discarded: a transport that does not know
    /// trimming discards a truncated frame (its TCP checksum or RoCEv2 ICRC fails), so the
    /// sender learns of the loss as of a drop. Counted whatever the flow's state here (a
    /// split run's receiver half may have retired).
    #[cold]
    fn discard_trimmed(&mut self, pkt: PktId) {
        self.trimmed_discarded += 1;
        self.consume(pkt);
    }

    /// The ACK `pkt` of flow `f` carries its receiver's selective acknowledgement.
    #[cold]
    #[inline(never)]
    fn attach_sack(&mut self, f: FlowId, pkt: PktId) {
        let s = self.flows.get(f).expect("the receiver just answered").sack_to_send();
        self.pkts.set_sack(pkt, s);
    }

    /// A split run's receiver half, its sender elsewhere, is done once it holds every byte.
    #[cold]
    #[inline(never)]
    fn retire_receiver_half(&mut self, f: FlowId) {
        let fl = self.flows.get(f).unwrap();
        // complete first: the flow's record is at hand, where the table of hosts'
        // partitions, read at a random host on every segment, missed the cache (2% of k = 74's
        // samples on two threads)
        if fl.receiver_complete() && self.part.as_ref().is_some_and(|part| !part.owns_host(fl.src)) {
            self.flows.retire(f);
        }
    }

    /// Add `bytes` delivered in order to `f`'s goodput series (when recorded).
    #[inline]
    fn count_goodput(&mut self, f: FlowId, bytes: u64) {
        if let (Some(bin), true) = (self.cfg.throughput_bin, bytes > 0) {
            self.goodput.add(f, self.now.0 / bin.0, bytes);
        }
    }

    /// Turn a received data packet into its reply (ACK/NACK carrying `seq`) in place, with
    /// no allocation, and queue it at the receiving host's NIC. The reply keeps the data's
    /// slot and so its per-packet extensions: it echoes the telemetry the data collected
    /// (`PacketArena::telemetry`). Its hop count starts again: it is a new packet.
    pub(super) fn reply_in_place(&mut self, pkt: PktId, kind: PktKind, seq: u64, ece: bool) {
        // the data packet is delivered and the reply is a new packet, in the same slot
        self.pkts_consumed += 1;
        self.pkts_created += 1;
        let p = self.pkts.get_mut(pkt);
        // bytes the switches added on the way (INT records) come back in the reply, which
        // echoes them
        let added = if p.kind == PktKind::Data { p.size - (p.payload + self.cfg.header) } else { 0 };
        std::mem::swap(&mut p.src, &mut p.dst);
        p.kind = kind;
        p.seq = seq;
        p.size = self.cfg.ack_size + added;
        p.payload = 0;
        p.ece = ece;
        // (an RTS's answer has its SACK attached before it turns into the reply)
        p.flags &= Packet::RETX | Packet::SACKED;
        p.ecn = Ecn::NotEct;
        // the receiver echoes the path length (the IP TTL's decrease) in its reply
        p.echo_hops = p.hops;
        p.hops = 0;
        let host = p.src;
        self.nic_enqueue(host, pkt);
    }

    pub(super) fn on_ack(&mut self, f: FlowId, pkt: PktId) {
        let p = self.pkts.get(pkt);
        let now = self.now;
        let fl = self.flows.get_mut(f).unwrap();
        if self.cfg.uet.in_flight_received && p.kind == PktKind::Ack {
            fl.sender.ack_carries(self.pkts.pull(pkt));
        }
        let echo = crate::host::cc::PathEcho { int: self.pkts.telemetry(pkt), hops: p.echo_hops, sack: self.pkts.sack(pkt), bitmap: self.pkts.sack_bitmap(pkt) };
        let finished = fl.sender.on_ack(p, now, fl.size, echo);
        self.consume(pkt);
        let Some(finished) = finished else {
            return;
        };
        if finished {
            self.finish_flow(f);
            return;
        }
        self.make_ready(f);
        self.ensure_timer(f);
    }

    /// Put a flow on its host's ready list if its window (and, for a paced
    /// flow, its pacer) allows a segment now; a paced flow that must wait gets
    /// a wake-up at the earlier of its pacing time and its next rate increase.
    pub(super) fn make_ready(&mut self, f: FlowId) {
        let now = self.now;
        let Some(s) = self.flows.slot(f) else {
            return;
        };
        let fl = self.flows.at_mut(s);
        if fl.in_ready {
            return;
        }
        if self.holds.held(s, now) {
            if let Some(at) = self.holds.arm(s) {
                self.q.push(at, Ev::Unhold { flow: f });
            }
            return;
        }
        match fl.sender.ready(fl.size, now) {
            Ready::Now => {}
            Ready::No => return,
            Ready::Wake(at, gen) => {
                self.q.push(at, Ev::Pace { flow: f, gen });
                return;
            }
        }
        let class = fl.nic_class.map_or(self.cfg.class(fl.prio), |c| c as usize);
        let h = fl.src;
        self.ready.push_back(self.flows.slab_mut(), h, class, s);
        let port = self.hosts[h as usize].port;
        self.try_tx(port);
    }

    /// Keep one timer event in the queue no later than the RTO deadline.
    pub(super) fn ensure_timer(&mut self, f: FlowId) {
        let Some((deadline, timer_at, timer_gen)) = self.flows.get_mut(f).and_then(|fl| fl.sender.timer()) else {
            return;
        };
        if let Some(d) = *deadline {
            if timer_at.is_none_or(|t| d < t) {
                *timer_gen = timer_gen.wrapping_add(1);
                *timer_at = Some(d);
                let gen = *timer_gen;
                self.q.push(d, Ev::Rto { flow: f, gen });
            }
        }
    }

    pub(super) fn on_rto(&mut self, f: FlowId, gen: u32) {
        let now = self.now;
        let Some(fl) = self.flows.get_mut(f) else {
            return;
        };
        let Some((deadline, timer_at, timer_gen)) = fl.sender.timer() else {
            return;
        };
        if *timer_gen != gen {
            return; // superseded
        }
        *timer_at = None;
        match *deadline {
            None => return,
            Some(d) if d > now => {}
            Some(_) => {
                let e = fl.sender.on_timeout(now, fl.size);
                self.timeouts += e.lost as u64;
                if e.syn {
                    self.send_syn(f);
                }
                self.send_rts(f);
                self.make_ready(f);
            }
        }
        self.ensure_timer(f);
    }

    /// A UET sender's request to send, where it owes one (`Sender::take_rts`): a header in
    /// the control class carrying its pull target.
    #[cold]
    fn send_rts(&mut self, f: FlowId) {
        let Some(fl) = self.flows.get(f) else { return };
        let sharing = self.ready.waiting(fl.src) + 1;
        let fl = self.flows.get_mut(f).unwrap();
        let Some(pull) = fl.sender.take_rts(fl.size, sharing) else { return };
        let p = Packet { kind: PktKind::Rts, flow: f, src: fl.src, dst: fl.dst, size: self.cfg.header, prio: fl.prio, hash: fl.hash, ts: self.now, ..Packet::blank() };
        let src = fl.src;
        let id = self.new_packet(p);
        self.pkts.set_pull(id, pull);
        self.nic_enqueue(src, id);
    }

    pub(super) fn udp_send(&mut self, f: FlowId) {
        let Some(slot) = self.flows.slot(f) else {
            return;
        };
        let fl = self.flows.at_mut(slot);
        let Sender::Udp(u) = &mut fl.sender else {
            return;
        };
        if u.sent >= fl.size {
            return;
        }
        if self.holds.held(slot, self.now) {
            // a held source generates nothing until the hold ends, then resumes its pattern
            let at = self.holds.until(slot);
            self.q.push(at, Ev::UdpSend { flow: f });
            return;
        }
        if let Some(cap) = self.cfg.udp.nic_buffer {
            let port = self.hosts[fl.src as usize].port;
            let class = fl.nic_class.map_or(self.cfg.class(fl.prio), |c| c as usize);
            if self.queues.get(port, class).bytes >= cap {
                // the transmit ring is full: try again one full frame later
                let wait = ser_time(self.cfg.mtu as u64, self.topo.ports[port as usize].rate_bps);
                self.q.push(self.now + wait, Ev::UdpSend { flow: f });
                return;
            }
        }
        let sz = (u.next_size() as u64).min(fl.size - u.sent) as u32;
        u.sent += sz as u64;
        let more = u.sent < fl.size;
        let next_message = !more && !self.loops.is_empty() && self.loop_of.get(f as usize).is_some_and(|&l| l != u32::MAX);
        let gap = u.next_gap();
        let p = Packet {
            kind: PktKind::Data,
            flow: f,
            src: fl.src,
            dst: fl.dst,
            seq: u.sent - sz as u64,
            size: sz,
            payload: sz,
            prio: fl.prio,
            ece: false,
            hash: self.cfg.path.entropy(fl.hash, u.sent - sz as u64, 0),
            ts: self.now,
            ..Packet::blank()
        };
        let src = fl.src;
        if self.mechs.acts_at(Caps::LIMIT_RATES) {
            if let Some(until) = self.mechs.on_host_send(f, p.size, self.now) {
                self.holds.hold(slot, until);
            }
        }
        let id = self.new_packet(p);
        self.nic_enqueue(src, id);
        if more {
            self.q.push(self.now + gap, Ev::UdpSend { flow: f });
        }
        if next_message {
            // an L2 generator sends as fast as it can: its next message follows the last
            // frame of this one into the NIC, delivered or not
            let next = Continuation::of(self.flows.at(slot));
            self.next_message(next, Sender::Done);
        }
        if !more {
            let dst = self.flows.at(slot).dst;
            if let Some(part) = &mut self.part {
                part.done(f);
                if !part.owns_host(dst) {
                    // a split run's source half, its receiver elsewhere, has sent every byte
                    self.flows.retire(f);
                }
            }
        }
    }

    // ------------------------------------------------------------------ flows

    /// Start the flow `spec`; `conn` continues a finished flow's connection: its path hash,
    /// NIC class and sender (whose congestion-control state the new flow keeps). `key` seeds
    /// what the flow draws at random (its path hash, its transport's start, its datagram
    /// stream): an arrival's index among the arrivals, a continuation's `continuation_key`.
    /// (Until issue 38 the flow id seeded them: the same number where no flow continues
    /// another, but a continuation's id is its place among every flow started, which a run
    /// split over threads does not know where the continuation starts.)
    pub(super) fn start_flow(&mut self, spec: FlowSpec, conn: Option<(u32, Option<u8>, Sender)>, key: u64) {
        self.start_flow_heard(spec, conn, key, None);
    }

    /// `start_flow`, or (`heard`: its global id) in a partition of a split run, a
    /// continuation another partition started at `spec.start`, which this one learns of at
    /// the start of the next window (engine/parallel.rs): it makes the receiver's half, or
    /// the row its switches' drops count on, before any frame of the flow can arrive.
    pub(super) fn start_flow_heard(&mut self, spec: FlowSpec, conn: Option<(u32, Option<u8>, Sender)>, key: u64, heard: Option<u64>) {
        let id = self.flows.len() as FlowId;
        // (a heard flow started in another partition before now)
        let now = spec.start;
        // a partition of a split run keeps the halves of its hosts' flows (engine/parallel.rs)
        let (own_src, own_dst) = self.part.as_ref().map_or((true, true), |p| (p.owns_host(spec.src), p.owns_host(spec.dst)));
        if let Some(part) = &mut self.part {
            part.started(id, &spec, key, conn.as_ref().map(|c| (c.0, c.1)), heard, is_continuation_key(key));
        }
        // indexed by flow id: every flow has its entry, a passing one too
        if !self.loops.is_empty() {
            self.loop_of.push(spec.closed_loop.unwrap_or(u32::MAX));
        }
        let hash = match &conn {
            Some((h, _, _)) => *h,
            None => mix64(self.cfg.seed ^ mix64(key ^ 0xF10F)) as u32,
        };
        if !own_src && !own_dst {
            let FlowSpec { size, src, dst, tag, prio, transport, .. } = spec;
            let wire = || crate::net::wire::FlowWire { id, src, dst, size, hash, prio, proto: transport.wire_proto() };
            self.flows.pass(crate::host::FlowRow { size, start: now, src, dst, tag, prio, ..Default::default() }, wire);
            return;
        }
        let handshake = self.cfg.tcp.handshake && conn.is_none() && spec.transport.is_tcp();
        // a split run's flow row takes each partition's largest ideal FCT (`flow_merge`):
        // the source's half alone works it out (two path walks a flow, 3% of k = 74's
        // samples on 16 partitions when both halves did)
        let ideal = if own_src { self.ideal_fct(&spec, hash, handshake) } else { SimTime::ZERO };
        let host_rate = self.topo.ports[self.hosts[spec.src as usize].port as usize].rate_bps;
        let (mss, header) = (self.cfg.mtu - self.cfg.header, self.cfg.header);
        let udp = || UdpSource {
            rate_bps: self.cfg.udp.rate_bps.unwrap_or(host_rate),
            arrivals: self.cfg.udp.arrivals,
            sizes: self.cfg.udp.sizes,
            mean_size: self.cfg.udp.packet_size,
            max_size: self.cfg.mtu,
            sent: 0,
            rng: stream(self.cfg.seed, Stream::Flow, key),
        };
        let base_rtt = || *self.base_rtt.get_or_init(|| self.fabric_base_rtt());
        let mut sender = Sender::new(spec.transport, &self.cfg.tcp, &self.cfg.roce, &self.cfg.uet, udp, mss, header, host_rate, now, base_rtt, hash);
        let mut nic_class = None;
        if let Some((_, class, prev)) = conn {
            nic_class = class;
            sender.continue_from(prev);
        } else {
            sender.open(mix64(self.cfg.seed ^ mix64(key ^ 0xBB5)), || self.path_rtt(spec.src, spec.dst, hash), now);
        }
        if handshake {
            sender.await_syn_ack(now);
        }
        let is_udp = matches!(sender, Sender::Udp(_));
        if spec.repeat_until.is_some() && own_src {
            self.repeat_keys.insert(id, key);
        }
        let slot = self.flows.start(Flow {
            id,
            src: spec.src,
            dst: spec.dst,
            size: spec.size,
            start: now,
            tag: spec.tag,
            prio: spec.prio,
            hash,
            transport: spec.transport,
            ideal,
            repeat_until: spec.repeat_until,
            reuse_connection: spec.reuse_connection,
            sender,
            nic_class,
            // a UET receiver's every ACK carries its selective acknowledgement
            rx: crate::host::tcp::Receiver::new((self.cfg.tcp.sack && spec.transport.is_tcp()) || matches!(spec.transport, Transport::Uet(_)))
                .with_dsack(self.cfg.tcp.sack && self.cfg.tcp.rack && spec.transport.is_tcp()),
            ..Flow::vacant(id)
        });
        self.holds.clear(slot);
        // a flow counts where it finishes: a datagram flow at its destination, else its source
        if if is_udp { own_dst } else { own_src } {
            self.active += 1;
        }
        if let (Some(c), true, Transport::Tcp(_)) = (self.cfg.credits, own_dst, spec.transport) {
            self.q.push(now + c.every, Ev::Credit { flow: id });
        }
        if !own_src {
            return;
        }
        if is_udp {
            self.udp_send(id);
        } else if handshake {
            self.send_syn(id);
            self.ensure_timer(id);
        } else {
            self.make_ready(id);
        }
    }

    /// A SYN of `f`, header only (ACK-sized), from its source NIC in the flow's class.
    fn send_syn(&mut self, f: FlowId) {
        let fl = self.flows.get(f).unwrap();
        let p = Packet { kind: PktKind::Syn, flow: f, src: fl.src, dst: fl.dst, size: self.cfg.ack_size, prio: fl.prio, hash: fl.hash, ts: self.now, ..Packet::blank() };
        let src = fl.src;
        let id = self.new_packet(p);
        self.nic_enqueue(src, id);
    }

    pub(super) fn finish_flow(&mut self, f: FlowId) {
        let now = self.now;
        let delivered = self.flow_acked(f);
        let slot = self.flows.slot(f).unwrap();
        let fl = self.flows.at(slot);
        if fl.in_ready {
            let h = fl.src;
            self.ready.remove(self.flows.slab_mut(), h, slot);
        }
        let mut fl = self.flows.finish(f, now, delivered);
        if let Some(part) = &mut self.part {
            part.done(f);
        }
        self.active -= 1;
        self.finished += 1;
        // a UDP loop sends its next message once this one has left (udp_send)
        let udp_loop = fl.transport == Transport::Udp && self.loop_of.get(f as usize).is_some_and(|&l| l != u32::MAX);
        if udp_loop {
            return;
        }
        let prev = std::mem::replace(&mut fl.sender, Sender::Done);
        self.next_message(Continuation::of(&fl), prev);
    }

    /// Start the flow that follows `fl` in its closed loop or persistent stream (if any, and
    /// before its end): the loop's next destination and size, or the same again; `prev` is
    /// `fl`'s sender, whose connection a reused one continues.
    fn next_message(&mut self, fl: Continuation, prev: Sender) {
        let now = self.now;
        let f = fl.id;
        let key = self.repeat_keys.remove(&f);
        if let Some(until) = fl.repeat_until {
            if now < until {
                let lp = self.loop_of.get(f as usize).copied().filter(|&l| l != u32::MAX);
                let (dst, size) = match lp {
                    Some(l) => self.loops[l as usize].next(),
                    None => (fl.dst, fl.size),
                };
                let spec = FlowSpec {
                    src: fl.src,
                    dst,
                    size,
                    start: now,
                    prio: fl.prio,
                    tag: fl.tag,
                    transport: fl.transport,
                    repeat_until: Some(until),
                    reuse_connection: fl.reuse_connection,
                    closed_loop: lp,
                };
                let reuse = fl.reuse_connection;
                let conn = reuse.then_some((fl.hash, fl.nic_class, prev));
                self.start_flow(spec, conn, continuation_key(key.expect("a repeating flow's key")));
                if reuse {
                    self.flows.set_continued(f, (self.flows.len() - 1) as FlowId);
                }
            }
        }
    }

    /// The round trip of a full-size data packet from `src` to `dst` and its ACK back, on
    /// the idle paths flow hash `hash` takes.
    fn path_rtt(&self, src: u32, dst: u32, hash: u32) -> SimTime {
        let one_way = |path: &[PortId], bytes: u64| -> u64 {
            path.iter().map(|&p| ser_time(bytes, self.topo.ports[p as usize].rate_bps).0 + self.arrive_delay(p).0).sum()
        };
        let there = one_way(&self.routes.path(&self.topo, src, dst, hash), self.cfg.mtu as u64);
        SimTime(there + one_way(&self.routes.path(&self.topo, dst, src, hash), self.cfg.ack_size as u64))
    }

    /// The fabric's largest base RTT (`path_rtt`), HPCC's T: over every pair of hosts on
    /// a fabric of at most 64 hosts, else from the first and the last host to every other
    /// (the symmetric fabrics' farthest pairs are among those).
    pub(super) fn fabric_base_rtt(&self) -> SimTime {
        let n = self.hosts.len() as u32;
        let sources: Vec<u32> = if n <= 64 { (0..n).collect() } else { vec![0, n - 1] };
        let mut best = SimTime::ZERO;
        for &a in &sources {
            for b in (0..n).filter(|&b| b != a) {
                best = best.max(self.path_rtt(a, b, 0));
            }
        }
        best
    }

    /// FCT of the flow alone on an idle fabric with an unlimited window: the
    /// exact store-and-forward timing of its packets through idle hops, and
    /// (for TCP) of the last packet's ACK back to the sender.
    ///
    /// With n-1 full packets and a last one of size l, the (n-1)-th full
    /// packet leaves hop i at max over j <= i of the time the packet train
    /// "turns" at hop j (first packet down to j, n-1 packets through j, then
    /// down to i) plus propagation; the last packet and the ACKs follow by the
    /// recurrence D_i(k) = max(D_i(k-1), D_{i-1}(k) + d_{i-1}) + s_i(k), since a
    /// short last packet can queue behind the full one before it.
    /// The flow's FCT alone on an idle fabric; `handshake`: a SYN and its SYN-ACK first.
    pub fn ideal_fct(&self, spec: &FlowSpec, hash: u32, handshake: bool) -> SimTime {
        let path = self.routes.path(&self.topo, spec.src, spec.dst, hash);
        let udp = spec.transport == Transport::Udp;
        let rate = |p: PortId| self.topo.ports[p as usize].rate_bps;
        let s = |bytes: u64, p: PortId| ser_time(bytes, rate(p)).0;
        let d = |p: PortId| self.arrive_delay(p).0;
        let u = &self.cfg.udp;
        if udp && (u.sizes != SizeDist::Fixed || u.arrivals != Arrivals::Constant) {
            // random datagrams: no single idle-path time; use the lower bound of every
            // byte through the slowest link plus the propagation of the path
            let slowest = path.iter().map(|&p| rate(p)).min().unwrap();
            return SimTime(ser_time(spec.size, slowest).0 + path.iter().map(|&p| d(p)).sum::<u64>());
        }
        let (mss, hdr) = if udp { (u.packet_size as u64, 0) } else { ((self.cfg.mtu - self.cfg.header) as u64, self.cfg.header as u64) };
        let n = spec.size.div_ceil(mss).max(1);
        let last = spec.size - (n - 1) * mss + hdr;
        let full = mss + hdr;
        let l = path.len();
        if udp {
            // a source slower than its link spaces its datagrams: the last one leaves
            // (n-1) gaps after the first and then crosses the idle path alone
            let src_rate = u.rate_bps.unwrap_or(u64::MAX);
            if src_rate < rate(path[0]) {
                let gap = ser_time(full, src_rate).0;
                let alone: u64 = path.iter().map(|&p| s(last, p) + d(p)).sum();
                return SimTime((n - 1) * gap + alone);
            }
        }
        // departure of packet n-1 (full) from each hop, relative to the flow's start
        let mut prev = vec![0u64; l];
        if n > 1 {
            for i in 0..l {
                let mut best = 0;
                for j in 0..=i {
                    let down: u64 = path[..j].iter().map(|&p| s(full, p) + d(p)).sum();
                    let through = (n - 1) * s(full, path[j]);
                    let after: u64 = path[j + 1..=i].iter().map(|&p| s(full, p)).sum::<u64>() + path[j..i].iter().map(|&p| d(p)).sum::<u64>();
                    best = best.max(down + through + after);
                }
                prev[i] = best;
            }
        }
        // the last packet
        let mut t = 0u64;
        let mut last_dep = vec![0u64; l];
        for i in 0..l {
            let arrive = if i == 0 { 0 } else { last_dep[i - 1] + d(path[i - 1]) };
            t = arrive.max(if n > 1 { prev[i] } else { 0 }) + s(last, path[i]);
            last_dep[i] = t;
        }
        let delivered = t + d(path[l - 1]);
        if udp {
            return SimTime(delivered);
        }
        // ACKs of packets n-1 and n over the reverse path
        let ack = self.cfg.ack_size as u64;
        // the ACKs' own route (a static route may make it differ from the data's, reversed)
        let back = self.routes.path(&self.topo, spec.dst, spec.src, hash);
        // SYN out and SYN-ACK back, each ACK-sized, before the first data packet
        let syn = if handshake { path.iter().chain(back.iter()).map(|&p| s(ack, p) + d(p)).sum::<u64>() } else { 0 };
        let mut a_prev = if n > 1 { prev[l - 1] + d(path[l - 1]) } else { 0 };
        let mut a = delivered;
        for &p in &back {
            if n > 1 {
                a_prev += s(ack, p);
            }
            a = a.max(if n > 1 { a_prev } else { 0 }) + s(ack, p);
            a += d(p);
            a_prev += d(p);
        }
        SimTime(syn + a)
    }

    /// A mechanism holds `flow` at its NIC until `until` (extend only). One Unhold event is
    /// kept per held flow, armed when the NIC finds it held; a hold extended since re-arms
    /// when that event fires.
    pub(super) fn hold_flow(&mut self, flow: FlowId, until: SimTime) {
        // (a finished flow sends nothing more: its hold would be moot)
        if let Some(s) = self.flows.slot(flow) {
            self.holds.hold(s, until);
        }
    }

    pub(super) fn on_unhold(&mut self, f: FlowId) {
        if let Some(s) = self.flows.slot(f) {
            self.holds.woke(s);
            self.make_ready(f);
        }
    }

    /// A paced flow's wake-up: if it is still the live one, the flow may send again.
    pub(super) fn on_pace(&mut self, flow: FlowId, gen: u32) {
        if self.flows.get_mut(flow).is_some_and(|fl| fl.sender.pace_fired(gen)) {
            self.make_ready(flow);
        }
    }
}

/// The random-draw key (`Sim::start_flow`) of the flow that continues the flow of key
/// `key`: a function of that key alone, so that it is the same wherever the continuation
/// starts; the top bit set keeps it apart from the arrivals' indices.
fn continuation_key(key: u64) -> u64 {
    mix64(key ^ 0xC0_17_1A_0E) | 1 << 63
}

/// Whether `key` is a continuation's (`continuation_key`), not an arrival's index.
fn is_continuation_key(key: u64) -> bool {
    key >> 63 == 1
}

/// What starting the next message of a flow's closed loop or persistent stream reads of it
/// (`Sim::next_message`): a flow still sending (an L2 generator's) passes these, not a
/// copy of its whole record with its sender and receiver.
#[derive(Clone, Copy)]
struct Continuation {
    id: FlowId,
    src: u32,
    dst: u32,
    size: u64,
    prio: u8,
    tag: u16,
    transport: Transport,
    repeat_until: Option<SimTime>,
    reuse_connection: bool,
    hash: u32,
    nic_class: Option<u8>,
}

impl Continuation {
    fn of(fl: &Flow) -> Continuation {
        let Flow { id, src, dst, size, prio, tag, transport, repeat_until, reuse_connection, hash, nic_class, .. } = *fl;
        Continuation { id, src, dst, size, prio, tag, transport, repeat_until, reuse_connection, hash, nic_class }
    }
}
