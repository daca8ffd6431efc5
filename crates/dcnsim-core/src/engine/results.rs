//! The result tables: flows, ports (per port and queue) and sampled queue depths, with the
//! summary. The engine writes its own columns; each configured switch mechanism adds its
//! own (`Mechanisms::report`).

use super::{QueueSampling, Sim};
use crate::net::NodeKind;
use crate::metrics::{ColumnData as C, Described, Outputs, Results, Table};
use crate::sim::SimTime;
use crate::switch::mechanism::Caps;
use crate::switch::pipeline::Report;

/// How often a streamed run looks for rows that became final (`Sim::take_final_flows`):
/// often enough that what waits stays small beside the flows in flight, rarely enough that
/// the look (over the flows held) costs nothing.
pub(super) const FINAL_EVERY: SimTime = SimTime::from_us(100);

/// Bytes of one row of the flows table `results` builds (its 16 engine columns).
pub const FLOWS_TABLE_ROW_BYTES: usize = 8 * 8 + 2 * 4 + 1 + 2 + 1 + 3 * 4;

/// The engine's own columns and summary keys, each described where it is written
/// (`Sim::FLOW_COLUMNS`, `PORT_COLUMNS`, `SUMMARY_KEYS`).
pub const ENGINE_OUTPUTS: Outputs = Outputs { flows: Sim::FLOW_COLUMNS, ports: Sim::PORT_COLUMNS, summary: Sim::SUMMARY_KEYS };

impl Sim {
    /// Hand out the flows' rows as they become final (`take_final_flows`) instead of keeping
    /// them to the end (`dcnsim run -o` writes them as they come, so that its memory does not
    /// grow with the flows that have finished). Before the run.
    pub fn stream_flows(&mut self) {
        if self.par.is_some() {
            // its partitions' rows, combined at each collection
            self.stream_split();
            return;
        }
        self.flows.stream();
        self.next_final = self.now + FINAL_EVERY;
    }

    /// The rows of the flows table that became final and were not handed out yet; the run
    /// forgets them, so `results` holds only the others. None: none yet.
    ///
    /// A row is final once its flow has finished (or, a datagram flow, is spent) with no
    /// packet of it left in the network. The run looks for final rows every `FINAL_EVERY`
    /// of simulated time (before the first event at or after each multiple), and each look
    /// adds its rows in id order: the order of the rows handed out is the run's own, however
    /// often the caller takes them. A run split over threads hands out the same rows in the
    /// same order (`Sim::split_collect`).
    pub fn take_final_flows(&mut self) -> Option<Table> {
        if self.par.is_some() {
            return self.split_take_final();
        }
        self.outbox.take()
    }

    /// Move the rows that became final into the outbox.
    #[cold]
    #[inline(never)]
    pub(super) fn collect_final(&mut self) {
        let t = self.now.0;
        self.next_final = SimTime(t - t % FINAL_EVERY.0 + FINAL_EVERY.0);
        let ids = self.flows.take_final();
        if ids.is_empty() {
            return;
        }
        let rows = self.flows_table(&ids);
        self.flows.forget(&ids);
        let below = self.flows.first_held();
        self.frame_latency.forget(&ids, below);
        self.mechs.forget_flows(&ids, below);
        match &mut self.outbox {
            Some(o) => o.append(rows),
            None => self.outbox = Some(rows),
        }
    }

    /// A partition of a streamed split run hands out the rows of flows `ids`, and of every
    /// flow below `below` (the oldest flow any partition holds): it forgets them (those it
    /// holds; a passing flow's drops). (Its own oldest held flow is no bound: a flow passing
    /// through it is held elsewhere.)
    pub(super) fn forget_rows(&mut self, ids: &[usize], below: usize) {
        let held: Vec<usize> = ids.iter().copied().filter(|&f| self.flows.holds(f as u32)).collect();
        self.flows.forget(&held);
        self.flows.forget_passing(ids);
        self.frame_latency.forget(ids, below);
        self.mechs.forget_flows(ids, below);
    }

    /// The columns `flows_table` writes (the mechanisms' follow theirs).
    const FLOW_COLUMNS: &'static [Described] = &[
        (&["flow_id"], "Flow number, in order of start time"),
        (&["src", "dst"], "Host indices"),
        (&["size_bytes"], "Bytes to deliver. TCP counts payload bytes; UDP counts wire bytes (datagrams are not segmented)"),
        (&["start_ps"], "When the flow started"),
        (&["end_ps", "fct_ps"], "When the last byte was acknowledged (TCP) or received (UDP), and `end_ps - start_ps`. Null if unfinished"),
        (
            &["ideal_fct_ps"],
            "FCT of the flow alone on an idle fabric with an unlimited window: serialization at the bottleneck of its path, \
             the propagation and switch latency of every hop, and for TCP the return of the last ACK",
        ),
        (&["slowdown"], "`fct_ps / ideal_fct_ps`. NaN if unfinished"),
        (&["priority"], "Traffic class, 0..7"),
        (&["tag"], "Which workload produced the flow: its `tag`, by default the kind (`background` for poisson, `incast`, `permutation`, `flows`)"),
        (&["finished"], "Whether the flow completed before the run ended"),
        (&["delivered_bytes"], "Bytes acknowledged (TCP) or received (UDP) when the run ended"),
        (&["drops"], "Packets of this flow dropped anywhere, data and ACKs"),
        (
            &["ecn_marks"],
            "Data packets of this flow that arrived CE-marked while its receiver still missed bytes (a receiver that holds \
             every byte only re-acknowledges: duplicates are answered, not counted)",
        ),
        (&["retx"], "Data segments retransmitted"),
        (
            &["mean_frame_latency_ps"],
            "Runs with closed-loop UDP flows, or metrics.frame_latency, only: the mean latency of the flow's delivered \
             frames, from their making at the source to their arrival (NaN: none delivered, or not a UDP flow)",
        ),
    ];

    /// The flows table's rows of flows `ids` (in id order, none of them handed out).
    pub(super) fn flows_table(&self, ids: &[usize]) -> Table {
        let mut ft = Table::default();
        let n = ids.len();
        let mut cols: [Vec<u64>; 7] = Default::default();
        let (mut src, mut dst) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut slowdown = Vec::with_capacity(n);
        let (mut prio, mut tag, mut fin) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut drops, mut marks, mut retx) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        for &id in ids {
            // (a partition of a split run has no row of a flow neither end of which it holds)
            let f = if self.part.is_some() { self.flows.row_or_passing(id as u32, Self::acked) } else { self.flow_row(id as u32) };
            let fct = if f.finished { (f.end - f.start).0 } else { 0 };
            cols[0].push(id as u64);
            cols[1].push(f.size);
            cols[2].push(f.start.0);
            cols[3].push(if f.finished { f.end.0 } else { 0 });
            cols[4].push(fct);
            cols[5].push(f.ideal.0);
            cols[6].push(f.delivered);
            src.push(f.src);
            dst.push(f.dst);
            slowdown.push(if f.finished && f.ideal.0 > 0 { fct as f64 / f.ideal.0 as f64 } else { f64::NAN });
            prio.push(f.prio);
            tag.push(f.tag);
            fin.push(f.finished as u8);
            drops.push(f.drops);
            marks.push(f.ecn_marks);
            retx.push(f.retx);
        }
        let [id, size, start, end, fct, ideal, acked] = cols;
        ft.push("flow_id", C::U64(id));
        ft.push("src", C::U32(src));
        ft.push("dst", C::U32(dst));
        ft.push("size_bytes", C::U64(size));
        ft.push("start_ps", C::U64(start));
        ft.push("end_ps", C::U64(end));
        ft.push("fct_ps", C::U64(fct));
        ft.push("ideal_fct_ps", C::U64(ideal));
        ft.push("slowdown", C::F64(slowdown));
        ft.push("priority", C::U8(prio));
        ft.push("tag", C::U16(tag));
        ft.push("finished", C::U8(fin));
        ft.push("delivered_bytes", C::U64(acked));
        ft.push("drops", C::U32(drops));
        ft.push("ecn_marks", C::U32(marks));
        ft.push("retx", C::U32(retx));
        if self.cfg.frame_latency {
            // closed-loop UDP flows (seed 001's L2 generators): mean latency of the frames
            // delivered, from their making at the source to their arrival (NaN: none)
            let lat = self.frame_latency.column(ids, |&(s, c)| if c == 0 { f64::NAN } else { s as f64 / c as f64 });
            ft.push("mean_frame_latency_ps", C::F64(lat));
        }
        self.mechs.flow_columns(ids, &mut ft);
        ft
    }

    /// The ports table's columns `results` writes (the mechanisms' follow theirs);
    /// `node_name` and `peer_name` are the Python layer's (`ports_frame`), beside the
    /// numbers they name.
    const PORT_COLUMNS: &'static [Described] = &[
        (&["node", "node_name"], "The node the port belongs to (names such as `tor0`, `spine3`, `h17`)"),
        (&["is_host"], "1 for a host NIC's port, 0 for a switch port"),
        (&["port"], "Port number within the node"),
        (&["peer_node", "peer_name"], "The node at the other end of the link"),
        (&["queue"], "Queue (traffic class) of the port"),
        (&["rate_bps"], "Link rate"),
        (&["tx_bytes", "tx_packets"], "Transmitted by this queue"),
        (&["drops"], "Packets dropped, the sum of the reasons below"),
        (&["drops_buffer_full"], "The buffer model refused a lossy packet joining this queue"),
        (
            &["drops_aqm"],
            "Packets the AQM dropped instead of marking on this queue (not ECN-capable, or RED without `ecn`; step and ramp \
             drop only with `drop_non_ect`)",
        ),
        (&["drops_headroom"], "Lossless packets that found the PFC headroom of this (ingress port, class) full"),
        (&["drops_ttl"], "Packets past the hop limit (a routing loop), on the row of the port they arrived through"),
        (&["drops_no_route"], "Packets a switch had no route for (defensive: validated fabrics have none)"),
        (&["drops_wrong_host"], "Packets that reached a host other than their destination, on that host's row"),
        (&["drops_lossless"], "Lossless packets the buffer model refused (queue-based PFC with too little room above XOFF)"),
        (
            &["drops_link_down"],
            "With `[faults]` only: packets this switch queue held when its link went down or that joined it while the link \
             was down (until the routes moved off it)",
        ),
        (
            &["ecn_marks"],
            "Packets CE-marked by this queue's AQM: on entering it, or on leaving it (DualPI2's step on the L queue's sojourn \
             time); each mark counted once, where it was given",
        ),
        (&["max_depth_bytes"], "Largest depth reached"),
        (&["mean_depth_bytes"], "Time-averaged depth over the run, exact (the integral of depth over time divided by the simulated time)"),
    ];

    /// The summary keys `results` writes (the mechanisms' come between `trimmed_discarded`
    /// and `metrics`).
    const SUMMARY_KEYS: &'static [Described] = &[
        (&["seed"], "The run's seed"),
        (&["sim_time_ps", "events"], "The simulated time the run ended at, and the events it ran"),
        (
            &["flows_total", "flows_started", "flows_finished", "flows_unfinished"],
            "Flow counts: `flows_total` = `flows_started` + the flows not started yet, `flows_unfinished` = `flows_total` - \
             `flows_finished` (see [Unfinished flows](#unfinished-flows))",
        ),
        (&["end_reason"], "Why the run ended (see [Unfinished flows](#unfinished-flows))"),
        (&["fct_bins"], "The upper edges of the FCT table's size bins, in bytes (`metrics.fct_bins`)"),
        (&["hosts", "switches"], "How many of each the fabric has"),
        (
            &["packets_created", "packets_dropped", "packets_delivered", "packets_in_flight"],
            "Packet counts: `packets_created` = `packets_delivered` + `packets_dropped` + `packets_in_flight` (a reply \
             made in place from a delivered packet counts as a new packet)",
        ),
        (&["control_frames"], "PAUSE, PFC and CIP frames, and routed mechanism messages such as SFC's (part of `packets_created`)"),
        (&["ecn_marks"], "CE marks the switches gave (the ports table's `ecn_marks`, summed)"),
        (&["data_packets_sent", "data_packets_dropped"], "Data packets the hosts sent (retransmissions included), and data packets dropped"),
        (&["loss_rate"], "`data_packets_dropped / data_packets_sent` (0 when none was sent)"),
        (&["flows_with_loss"], "Flows that lost a packet, data or ACK (`drops` above 0 in the flows table)"),
        (
            &["timeouts"],
            "Retransmission-timer expiries that declared data lost, over all flows: TCP's RTO (the SYN's included; not \
             RACK-TLP's reorder and probe timers), RoCE's go-back-N timer, and UET's timer, one per packet it declares lost \
             (htsim's `UecSrc::rtxTimerExpired` takes one packet per expiry). A flow that waits for its timer without a loss \
             (e.g. for an ACK its receiver holds back) counts here too",
        ),
        (&["invariant_violations"], "With `--check-invariants`, what was found (empty when fine)"),
        (&["queue_samples"], "How many times the switch queues were sampled (`[metrics] queue_sample`; 0 without)"),
        (&["version"], "The version of dcnsim that ran"),
        (
            &["trimmed_discarded"],
            "With switch.trim only: trimmed packets their receivers discarded (TCP, RoCE and UDP do not know trimming: a \
             receiver discards a trimmed frame as a NIC discards one whose checksum fails, and its sender learns of the loss \
             as of a drop; UET's receivers NACK it unless they hold every byte)",
        ),
        (
            &["metrics"],
            "The summary keys a comparison table shows (the configured mechanisms' totals), with label, unit scale, number \
             format and better direction",
        ),
        (
            &["activity"],
            "With a switch mechanism configured: each configured mechanism's scenario key, what it counts and how often it \
             acted (`{\"key\": \"switch.pfc\", \"what\": \"PAUSE frames sent\", \"count\": 0}`; see \
             [Mechanisms that never acted](#mechanisms-that-never-acted))",
        ),
        (
            &["queue_notes"],
            "With a mechanism that says something about the switch queues: for plots, roles \
             (`{\"queue\": 0, \"role\": \"congested\"}`) and depth thresholds \
             (`{\"queue\": 1, \"threshold\": \"CI High\", \"bytes\": 300000}`)",
        ),
        (&["capture_frames"], "With `[metrics] capture`: the frames captured (see `capture.pcapng` above)"),
        (
            &["link_changes"],
            "With `[faults]`: the link changes the run reached, in the order made, each {at_ps, link (\"node:N\", one \
             end), peer (the other end's node), state (\"down\", \"up\" or \"rate\"), rate_bps (the new rate; null unless \
             \"rate\")}",
        ),
        (
            &["warnings"],
            "Only when the scenario looked suspicious (no flows, a buffer smaller than a packet), configures a mechanism its \
             flows cannot bring into play (see [Mechanisms that never acted](#mechanisms-that-never-acted)) or had its \
             capture cut at `max_frames`",
        ),
        (&["throughput_bin_ps"], "With a goodput series (`[metrics] throughput_bin`): its bin width"),
    ];

    /// Finalize at the current time and build the result tables (in a streamed run, the
    /// flows table holds the rows not handed out yet).
    pub fn results(&mut self) -> Results {
        if self.par.is_some() {
            return self.split_results();
        }
        let now = self.now;
        let ids = self.row_ids.take().unwrap_or_else(|| self.flows.held());
        let ft = self.flows_table(&ids);
        let with_loss = self.flows.with_loss_handed_out() + ft.u32("drops").iter().filter(|&&d| d > 0).count();

        let mut pt = Table::default();
        let mut node = vec![];
        let mut is_host = vec![];
        let mut port = vec![];
        let mut peer = vec![];
        let mut queue = vec![];
        let mut rate = vec![];
        let mut c: [Vec<u64>; 13] = Default::default();
        let mut mean = vec![];
        for (pid, queues) in self.queues.ports().enumerate() {
            let info = &self.topo.ports[pid];
            let peer_node = self.topo.ports[info.peer as usize].node;
            for (qi, qq) in queues.iter().enumerate() {
                node.push(info.node);
                is_host.push((self.topo.nodes[info.node as usize].kind == NodeKind::Host) as u8);
                port.push(info.local);
                peer.push(peer_node);
                queue.push(qi as u8);
                rate.push(info.rate_bps);
                mean.push(qq.mean_bytes(now));
                let s = self.queues.stats(pid as u32, qi);
                for (v, x) in c.iter_mut().zip([
                    qq.tx_bytes,
                    qq.tx_packets,
                    s.drops(),
                    s.drops_buffer_full,
                    s.drops_aqm,
                    s.ecn_marks,
                    qq.max_bytes,
                    s.drops_headroom,
                    s.drops_ttl,
                    s.drops_no_route,
                    s.drops_wrong_host,
                    s.drops_lossless,
                    s.drops_link_down,
                ]) {
                    v.push(x);
                }
            }
        }
        let [tx_b, tx_p, dr, dr_bf, dr_aqm, mk, mx, dr_hd, dr_ttl, dr_nr, dr_wh, dr_ll, dr_ld] = c;
        pt.push("node", C::U32(node));
        pt.push("is_host", C::U8(is_host));
        pt.push("port", C::U32(port));
        pt.push("peer_node", C::U32(peer));
        pt.push("queue", C::U8(queue));
        pt.push("rate_bps", C::U64(rate));
        pt.push("tx_bytes", C::U64(tx_b));
        pt.push("tx_packets", C::U64(tx_p));
        pt.push("drops", C::U64(dr));
        pt.push("drops_buffer_full", C::U64(dr_bf));
        pt.push("drops_aqm", C::U64(dr_aqm));
        pt.push("drops_headroom", C::U64(dr_hd));
        pt.push("drops_ttl", C::U64(dr_ttl));
        pt.push("drops_no_route", C::U64(dr_nr));
        pt.push("drops_wrong_host", C::U64(dr_wh));
        pt.push("drops_lossless", C::U64(dr_ll));
        if !self.cfg.link_changes.is_empty() {
            // only where links change: every other run's table keeps its columns
            pt.push("drops_link_down", C::U64(dr_ld));
        }
        pt.push("ecn_marks", C::U64(mk));
        pt.push("max_depth_bytes", C::U64(mx));
        pt.push("mean_depth_bytes", C::F64(mean));

        let unfinished = self.flows.len() - self.finished + self.arrivals.remaining();
        let mut summary = serde_json::json!({
            "seed": self.cfg.seed,
            "sim_time_ps": now.0,
            "events": self.events,
            "flows_total": self.flows.len() + self.arrivals.remaining(),
            "flows_started": self.flows.len(),
            "flows_finished": self.finished,
            "flows_unfinished": unfinished,
            "end_reason": self.end.map(|e| e.as_str()).unwrap_or("stopped"),
            "fct_bins": self.cfg.fct_bins,
            "hosts": self.topo.num_hosts(),
            "switches": self.topo.num_switches(),
            "packets_created": self.pkts_created,
            "packets_dropped": self.pkts_dropped,
            "packets_delivered": self.pkts_consumed,
            "control_frames": self.ctrl_frames,
            "ecn_marks": self.ecn_marks,
            "data_packets_sent": self.data_sent,
            "data_packets_dropped": self.data_dropped,
            "loss_rate": if self.data_sent > 0 { self.data_dropped as f64 / self.data_sent as f64 } else { 0.0 },
            "flows_with_loss": with_loss,
            "timeouts": self.timeouts,
            "packets_in_flight": self.pkts.live(),
            "invariant_violations": self.violations,
            "queue_samples": self.samples,
            "version": env!("CARGO_PKG_VERSION"),
        });
        let mut r = Report::new(now, &self.topo, self.cfg.queues, &mut pt, summary.as_object_mut().unwrap());
        if self.mechs.acts_at(Caps::TRIM) {
            r.count("trimmed_discarded", self.trimmed_discarded);
        }
        self.mechs.report(&mut r);
        let combine = r.take_combine();
        let metrics = std::mem::take(&mut r.metrics);
        let notes = std::mem::take(&mut r.queue_notes);
        let activity = std::mem::take(&mut r.activity);
        summary["metrics"] = metrics.into();
        if !activity.is_empty() {
            summary["activity"] = activity.into();
        }
        if !notes.is_empty() {
            summary["queue_notes"] = notes.into();
        }
        if !self.cfg.link_changes.is_empty() {
            summary["link_changes"] = self.link_change_rows().into();
        }
        let mut warnings = self.cfg.warnings.clone();
        if let Some(c) = &self.capture {
            let (frames, missed) = c.counts();
            summary["capture_frames"] = frames.into();
            if missed > 0 {
                warnings.push(super::capture_warning(frames, missed));
            }
        }
        if !warnings.is_empty() {
            summary["warnings"] = warnings.into();
        }
        let mut qt = Table::default();
        if let Some(QueueSampling { bin, .. }) = self.cfg.queue_sample {
            let nq = self.cfg.queues;
            let (mut qn, mut qp, mut qq, mut qb, mut qs) = (vec![], vec![], vec![], vec![], vec![]);
            for (row, h) in self.depth_hist.iter().enumerate() {
                let info = &self.topo.ports[row / nq];
                // the samples that found the queue empty were not taken one by one
                // (Sim::busy_ports): the first bin holds the rest of every sample
                let empty = if self.topo.nodes[info.node as usize].kind == NodeKind::Switch { self.samples - h.iter().sum::<u64>() } else { 0 };
                let first = [h.first().copied().unwrap_or(0) + empty];
                for (b, &n) in first.iter().chain(h.iter().skip(1)).enumerate() {
                    if n > 0 {
                        qn.push(info.node);
                        qp.push(info.local);
                        qq.push((row % nq) as u8);
                        qb.push(b as u64 * bin);
                        qs.push(n);
                    }
                }
            }
            qt.push("node", C::U32(qn));
            qt.push("port", C::U32(qp));
            qt.push("queue", C::U8(qq));
            qt.push("depth_bytes", C::U64(qb));
            qt.push("samples", C::U64(qs));
        }
        let mut qs = Table::default();
        if self.cfg.queue_sample.is_some() {
            let d = &self.depth_series;
            qs.push("time_ps", C::U64(d.iter().map(|r| r.0 .0).collect()));
            qs.push("queue", C::U8(d.iter().map(|r| r.1).collect()));
            qs.push("max_depth_bytes", C::U64(d.iter().map(|r| r.2).collect()));
            qs.push("total_depth_bytes", C::U64(d.iter().map(|r| r.3).collect()));
            qs.push("busy_queues", C::U32(d.iter().map(|r| r.4).collect()));
        }
        let mut ts = Table::default();
        if let Some(bin) = self.cfg.throughput_bin {
            // closed bins, then each flow's open one, ordered by (flow, bin)
            let g = &self.goodput;
            let mut rows: Vec<(u32, u64, u64)> = (0..g.flow.len()).map(|i| (g.flow[i], g.bin[i], g.bytes[i])).collect();
            rows.extend(g.open.iter().enumerate().filter(|(_, o)| o.1 > 0).map(|(f, o)| (f as u32, o.0, o.1)));
            rows.sort_unstable();
            ts.push("flow", C::U32(rows.iter().map(|r| r.0).collect()));
            ts.push("bin_start_ps", C::U64(rows.iter().map(|r| r.1 * bin.0).collect()));
            ts.push("bytes", C::U64(rows.iter().map(|r| r.2).collect()));
            summary["throughput_bin_ps"] = bin.0.into();
        }
        Results {
            flows: ft,
            ports: pt,
            queues: qt,
            timeseries: ts,
            queue_series: qs,
            tags: self.cfg.tags.clone(),
            nodes: self.topo.nodes.iter().map(|n| n.name.clone()).collect(),
            summary,
            combine,
            capture: self.capture.as_ref().map(|c| c.bytes().to_vec()),
        }
    }
}
