//! Packet captures (`metrics.capture`, docs/capture.md): the frames chosen ports send, in a
//! pcapng file (IETF draft-ietf-opsawg-pcapng) that Wireshark and tshark read. Each port
//! is one interface (Ethernet link type, nanosecond timestamps, its name, description and
//! speed); a frame is stamped when its first bit leaves the port and flagged outbound.
//! Frames are kept up to the snaplen (as `tcpdump -s` keeps them: the default holds every
//! header, payload bytes are zeros), with their full length recorded.

use crate::net::wire::{self, FlowWire};
use crate::switch::mechanism::WireCtx;
use crate::net::{Packet, PktKind, PortId, Topology};
use crate::sim::SimTime;
use crate::switch::MechanismParams;
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;
use std::borrow::Cow;

/// `metrics.capture`, resolved: the ports (ids), the window and which frames.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureParams {
    pub ports: Vec<PortId>,
    pub from: SimTime,
    pub to: SimTime,
    /// Every frame, or only the congestion-management ones.
    pub all: bool,
    pub max_frames: u64,
    /// Bytes kept of each frame (u32::MAX: all).
    pub snaplen: u32,
}

/// pcapng's EPB flags word: outbound (bits 0-1 = 2).
const OUTBOUND: u32 = 2;
/// No interface: the port is not captured.
const NOT_CAPTURED: u32 = u32::MAX;

/// A capture in progress: the pcapng file so far, in memory.
pub struct Capture {
    /// Interface index of each port, or NOT_CAPTURED.
    iface: Vec<u32>,
    from: SimTime,
    to: SimTime,
    all: bool,
    max_frames: u64,
    snaplen: usize,
    frames: u64,
    /// Frames past `max_frames`, not written.
    missed: u64,
    mss: u32,
    /// Class of each priority, to write the priority a frame's class stands for.
    class_of: [u8; 8],
    writer: PcapNgWriter<Vec<u8>>,
    buf: Vec<u8>,
    /// A partition of a run split over threads keeps its frames unwritten: the partitions'
    /// frames are written at the end in the order one thread writes them (`write_held`).
    held: Option<Vec<HeldFrame>>,
}

/// A frame a partition of a split run captured (engine/parallel.rs): the packet as it left
/// the port, its flow's header fields, and where it falls in the run's order.
#[derive(Clone, Debug)]
pub struct HeldFrame {
    pub at: SimTime,
    /// The sending event's place among one instant's events, and the frame's flow's global
    /// id (engine/parallel.rs orders and names them).
    pub order: (u64, Option<u64>, u64),
    pub port: PortId,
    pub pkt: Packet,
    pub flow: Option<FlowWire>,
    /// Its selective acknowledgement (`PacketArena::sack`), which lives beside the packet.
    pub sack: Option<Box<crate::net::Sack>>,
}

/// Whether a frame of this kind is congestion-management signalling (`frames = "control"`).
pub fn is_control(kind: PktKind) -> bool {
    matches!(kind, PktKind::Ctrl(_) | PktKind::Msg(_) | PktKind::Cnp)
}

impl Capture {
    /// A capture of `p.ports` on `topo`; `mss` is a full segment's payload and `class_of`
    /// the class of each priority (for the frames' fields).
    pub fn new(p: &CaptureParams, topo: &Topology, mss: u32, class_of: [u8; 8]) -> Capture {
        let shb = SectionHeaderBlock { options: vec![SectionHeaderOption::UserApplication(Cow::Owned(format!("dcnsim {}", env!("CARGO_PKG_VERSION"))))], ..Default::default() };
        let mut writer = PcapNgWriter::with_section_header(Vec::new(), shb).expect("writing to memory");
        let mut iface = vec![NOT_CAPTURED; topo.ports.len()];
        for (i, &port) in p.ports.iter().enumerate() {
            let info = &topo.ports[port as usize];
            let (node, peer) = (&topo.nodes[info.node as usize].name, &topo.nodes[topo.peer_node(port) as usize].name);
            iface[port as usize] = i as u32;
            let idb = InterfaceDescriptionBlock {
                linktype: DataLink::ETHERNET,
                snaplen: if p.snaplen == u32::MAX { 0 } else { p.snaplen },
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(format!("{node}:{}", info.local))),
                    InterfaceDescriptionOption::IfDescription(Cow::Owned(format!("{node} port {} -> {peer}, transmit side", info.local))),
                    InterfaceDescriptionOption::IfMacAddr(Cow::Owned(wire::mac_of(topo, info.node).to_vec())),
                    InterfaceDescriptionOption::IfSpeed(info.rate_bps),
                    InterfaceDescriptionOption::IfTsResol(9),
                    InterfaceDescriptionOption::IfFcsLen(0),
                ],
            };
            writer.write_pcapng_block(idb).expect("writing to memory");
        }
        Capture {
            iface,
            from: p.from,
            to: p.to,
            all: p.all,
            max_frames: p.max_frames,
            snaplen: p.snaplen as usize,
            frames: 0,
            missed: 0,
            mss,
            class_of,
            writer,
            buf: Vec::with_capacity(256),
            held: None,
        }
    }

    /// Keep frames unwritten (a partition of a split run: `HeldFrame`).
    pub fn hold(&mut self) {
        self.held = Some(Vec::new());
    }

    /// Whether the capture keeps a frame of `kind` starting on `port` at `now` (counting
    /// one it would keep but for `max_frames` as missed).
    fn keeps(&mut self, now: SimTime, port: PortId, kind: PktKind) -> bool {
        if self.iface[port as usize] == NOT_CAPTURED || now < self.from || now >= self.to || !(self.all || is_control(kind)) {
            return false;
        }
        if self.frames >= self.max_frames {
            self.missed += 1;
            return false;
        }
        true
    }

    /// Record `pkt` starting on `port` at `now`, if the capture keeps it. `flow` gives the
    /// packet's flow (or the flow a mechanism frame names); `mechs`: the mechanisms'
    /// parameters, which their frames' encodings may read.
    /// `order`: where a partition of a split run holds it (`hold`).
    #[allow(clippy::too_many_arguments)]
    pub fn record(&mut self, now: SimTime, port: PortId, pkt: &Packet, sack: &[(u64, u64)], topo: &Topology, mechs: &MechanismParams, flow: impl Fn(u32) -> Option<FlowWire>, order: impl FnOnce(u32) -> (u64, Option<u64>, u64)) {
        if !self.keeps(now, port, pkt.kind) {
            return;
        }
        if let Some(held) = &mut self.held {
            let flow = flow(pkt.flow);
            // (as `encode` leaves out a data frame of no known flow)
            if flow.is_some() || matches!(pkt.kind, PktKind::Ctrl(_) | PktKind::Msg(_)) {
                held.push(HeldFrame { at: now, order: order(pkt.flow), port, pkt: pkt.clone(), flow, sack: crate::net::Sack::boxed(sack) });
                self.frames += 1;
            }
            return;
        }
        self.write(now, port, pkt, sack, topo, mechs, flow);
    }

    /// Write the frames the partitions held (`HeldFrame`), in the order given, into this
    /// capture (a partition's, which writes none of its own: at most `max_frames`, the rest
    /// counted as missed, with `missed`, those the partitions missed).
    pub fn write_held(&mut self, frames: impl IntoIterator<Item = HeldFrame>, missed: u64, topo: &Topology, mechs: &MechanismParams) {
        self.held = None;
        (self.frames, self.missed) = (0, missed);
        for f in frames {
            if self.keeps(f.at, f.port, f.pkt.kind) {
                let sack = f.sack.as_deref().map_or(&[][..], |s| s.blocks());
                self.write(f.at, f.port, &f.pkt, sack, topo, mechs, |_| f.flow);
            }
        }
    }

    /// The frames a partition held and those it missed (`hold`).
    pub fn take_held(&mut self) -> (Vec<HeldFrame>, u64) {
        (self.held.take().unwrap_or_default(), self.missed)
    }

    #[allow(clippy::too_many_arguments)]
    fn write(&mut self, now: SimTime, port: PortId, pkt: &Packet, sack: &[(u64, u64)], topo: &Topology, mechs: &MechanismParams, flow: impl Fn(u32) -> Option<FlowWire>) {
        let iface = self.iface[port as usize];
        let Some(len) = self.encode(port, pkt, sack, topo, mechs, flow) else { return };
        let epb = EnhancedPacketBlock {
            interface_id: iface,
            timestamp: std::time::Duration::from_nanos(now.0 / 1000),
            original_len: len as u32,
            data: Cow::Borrowed(&self.buf),
            options: vec![EnhancedPacketOption::Flags(OUTBOUND)],
        };
        self.writer.write_pcapng_block(epb).expect("writing to memory");
        self.frames += 1;
    }

    /// Write `pkt`'s frame, as it leaves `port`, into `self.buf` up to the snaplen: its
    /// length on the wire (FCS left out), or None for a packet of no known flow.
    fn encode(&mut self, port: PortId, pkt: &Packet, sack: &[(u64, u64)], topo: &Topology, mechs: &MechanismParams, flow: impl Fn(u32) -> Option<FlowWire>) -> Option<usize> {
        let info = &topo.ports[port as usize];
        let w = WireCtx { topo, tx: info.node, rx: topo.peer_node(port), flow: flow(pkt.flow), mss: self.mss, mechs };
        self.buf.clear();
        let len = match pkt.kind {
            PktKind::Ctrl(f) => {
                f.encode(&w, &mut self.buf);
                self.buf.len()
            }
            PktKind::Msg(m) => {
                m.encode(pkt, &w, &mut self.buf);
                self.buf.len()
            }
            _ => {
                let f = w.flow?;
                let pcp = self.pcp(pkt);
                wire::eth(&mut self.buf, wire::mac_of(topo, w.rx), wire::mac_of(topo, w.tx), Some(pcp), wire::ETHERTYPE_IPV4);
                let ip_len = wire::transport(&mut self.buf, topo, pkt, &f, self.mss, sack);
                let len = (wire::TAGGED_ETH_BYTES + ip_len).max(wire::MIN_FRAME_BYTES);
                // the payload (and a RoCEv2 ICRC, and padding) as zeros, up to the snaplen
                self.buf.resize(len.min(self.snaplen).max(self.buf.len()), 0);
                len
            }
        };
        self.buf.truncate(self.snaplen);
        Some(len)
    }

    /// The priority the receiver classifies `pkt` by: its own, unless it is sent in
    /// another class than that priority's (CI isolation), then the first priority of that
    /// class.
    fn pcp(&self, pkt: &Packet) -> u8 {
        let prio = pkt.prio & 7;
        if self.class_of[prio as usize] == pkt.qc {
            return prio;
        }
        (0..8u8).find(|&q| self.class_of[q as usize] == pkt.qc).unwrap_or(pkt.qc & 7)
    }

    /// Frames written, and frames left out past `max_frames`.
    pub fn counts(&self) -> (u64, u64) {
        (self.frames, self.missed)
    }

    /// The pcapng file so far.
    pub fn bytes(&self) -> &[u8] {
        self.writer.get_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{RateCcKind, Transport, WindowCc};
    use crate::net::{Ecn, Frame, Msg};
    use crate::switch::ci::Cip;
    use crate::switch::drc::DrcFrame;
    use crate::switch::pfc::PauseFrame;
    use crate::switch::qcn::Cnm;
    use crate::switch::qcn::CnmFields;
    use crate::switch::sfc::SfcMsg;

    fn fabric() -> Topology {
        let mut t = Topology::default();
        let h0 = t.add_host("h0");
        let h1 = t.add_host("h1");
        let s = t.add_switch("s0");
        t.connect(h0, s, 100_000_000_000, SimTime::from_us(1));
        t.connect(s, h1, 100_000_000_000, SimTime::from_us(1));
        t
    }

    fn flow(transport: Transport) -> FlowWire {
        FlowWire { id: 7, src: 0, dst: 1, size: 100_000, hash: 0xABCD, prio: 3, proto: transport.wire_proto() }
    }

    /// Every mechanism frame and message is written as long as the model says it is on
    /// the wire (its `wire_bytes`, FCS included), so captures and serialization agree.
    #[test]
    fn encoded_lengths_are_the_models_wire_sizes() {
        let t = fabric();
        let mechs = MechanismParams { drc: Some(crate::switch::drc::DrcParams::default()), ..Default::default() };
        let w = WireCtx { topo: &t, tx: 2, rx: 0, flow: Some(flow(Transport::Tcp(WindowCc::Dctcp))), mss: 1460, mechs: &mechs };
        for f in [
            Frame::Pfc(PauseFrame::Pause { quanta: 7 }),
            Frame::Pfc(PauseFrame::Pfc { class: 3, quanta: 65535 }),
            Frame::Ci(Cip { bytes: 94 }),
            Frame::Ci(Cip { bytes: 64 }),
            Frame::Drc(DrcFrame::one(1, 2)),
            Frame::Drc(DrcFrame::new(1, 0b1011, 3)),
            Frame::Drc(DrcFrame::every(1)),
        ] {
            let mut out = vec![];
            f.encode(&w, &mut out);
            assert_eq!(out.len() as u32 + wire::FCS_BYTES, f.wire_bytes(), "{f:?}");
        }
        let fields = CnmFields::new(40, 20_000, -640, 5, 2);
        for (m, seq) in [(Msg::Qcn(Cnm), fields.pack()), (Msg::Sfc(SfcMsg { class: 0 }), 5_000_000)] {
            let p = Packet { kind: PktKind::Msg(m), flow: 7, src: 1, dst: 0, seq, payload: 0, ..Packet::blank() };
            let mut out = vec![];
            m.encode(&p, &w, &mut out);
            assert_eq!(out.len() as u32 + wire::FCS_BYTES, m.wire_bytes(), "{m:?}");
        }
    }

    /// The CNM's fields survive the routed message's value, the queue quantities to 64
    /// octets (rounded down) and saturated at 16 bits.
    #[test]
    fn cnm_fields_pack_and_unpack() {
        for (q_off, q_delta) in [(0i64, 0i64), (20_000, -640), (-26_000, 5_000_000), (-10_000_000, 63)] {
            let f = CnmFields::new(17, q_off, q_delta, 1234, 5);
            let g = CnmFields::unpack(f.pack());
            assert_eq!(g, f);
            assert_eq!((g.qntz, g.cpid_low >> 3, g.cpid_low & 7), (17, 1234, 5));
            let wire = |b: i64| (b.div_euclid(64)).clamp(i16::MIN as i64, i16::MAX as i64) * 64;
            assert_eq!((g.q_off as i64 * 64, g.q_delta as i64 * 64), (wire(q_off), wire(q_delta)));
        }
    }

    /// 802.1Qbb: opcode 0x0101, the class's enable bit and its pause time in its slot.
    #[test]
    fn pfc_frame_layout() {
        let mut out = vec![];
        crate::switch::pfc::encode(PauseFrame::Pfc { class: 3, quanta: 0x1234 }, [2, 0, 10, 0, 0, 1], &mut out);
        assert_eq!(&out[..6], &[0x01, 0x80, 0xC2, 0, 0, 1]);
        assert_eq!(&out[12..18], &[0x88, 0x08, 0x01, 0x01, 0x00, 0x08]);
        assert_eq!(&out[18 + 6..18 + 8], &[0x12, 0x34]);
        assert!(out[18..18 + 6].iter().chain(&out[26..34]).all(|&b| b == 0));
        assert_eq!(out.len(), wire::MIN_FRAME_BYTES);
    }

    /// The data frames' header fields: the priority tag, ECN bits, RoCEv2's BTH with the
    /// segment's PSN and AckReq on the last, the RETH only on the first, and the lengths.
    #[test]
    fn data_frames_carry_ecn_priority_and_bth() {
        let t = fabric();
        let p = CaptureParams { ports: vec![0], from: SimTime::ZERO, to: SimTime::from_ms(1), all: true, max_frames: 10, snaplen: u32::MAX };
        let mut c = Capture::new(&p, &t, 1460, [0, 1, 2, 3, 4, 5, 6, 7]);
        let mechs = MechanismParams::default();
        let roce = flow(Transport::Roce(RateCcKind::Dcqcn));
        let data = |seq: u64, payload: u32, ecn: Ecn| Packet { kind: PktKind::Data, flow: 7, src: 0, dst: 1, seq, payload, prio: 3, qc: 3, ecn, ..Packet::blank() };

        let len = c.encode(0, &data(0, 1460, Ecn::Ect0), &[], &t, &mechs, |_| Some(roce)).unwrap();
        let b = &c.buf;
        assert_eq!(len, 18 + 20 + 8 + 12 + 16 + 1460 + 4);
        assert_eq!(b.len(), len, "snaplen 0 keeps it whole");
        assert_eq!(&b[12..16], &[0x81, 0x00, 0x60, 0x00], "priority 3");
        assert_eq!(b[19] & 3, 2, "ECT(0)");
        assert_eq!(u16::from_be_bytes([b[40], b[41]]), 4791);
        assert_eq!(b[46], wire::bth::WRITE_FIRST);
        assert_eq!(&b[51..54], &(wire::FIRST_QP + 7).to_be_bytes()[1..], "queue pair: the flow's, past the management QPs 0 and 1");
        assert_eq!(&b[55..58], &[0, 0, 0], "PSN 0");
        assert_eq!(&b[70..74], &100_000u32.to_be_bytes(), "RETH DMA length: the message");

        let last = data(98_552, 1448, Ecn::Ce);
        let len = c.encode(0, &last, &[], &t, &mechs, |_| Some(roce)).unwrap();
        let b = &c.buf;
        assert_eq!(len, 18 + 20 + 8 + 12 + 1448 + 4);
        assert_eq!(b[19] & 3, 3, "CE");
        assert_eq!((b[46], b[54] >> 7), (wire::bth::WRITE_LAST, 1), "the last asks for an ack");
        assert_eq!(&b[55..58], &[0, 0, 67], "PSN: 98552 / 1460");

        // CI isolation: sent in class 0, so tagged with the first priority of class 0
        let isolated = Packet { qc: 0, ..data(1460, 1460, Ecn::Ect0) };
        c.encode(0, &isolated, &[], &t, &mechs, |_| Some(roce)).unwrap();
        assert_eq!(c.buf[14] >> 5, 0);
        // no flow: nothing to write
        assert_eq!(c.encode(0, &data(0, 1, Ecn::NotEct), &[], &t, &mechs, |_| None), None);
    }
}
