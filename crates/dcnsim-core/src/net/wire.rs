//! Frames as they would be on the wire, for packet captures (`metrics.capture`,
//! docs/capture.md). The model keeps no header bytes, only the fields that matter to it;
//! this writes the headers those fields mean: Ethernet II with an IEEE 802.1Q priority tag,
//! IPv4 (RFC 791) with the ECN field of RFC 3168 section 5, TCP (RFC 9293) and UDP
//! (RFC 768), and RoCEv2 (InfiniBand Architecture Specification vol. 1, annex A17: UDP
//! destination port 4791, the Base Transport Header; a flow is one RDMA WRITE message, its
//! first packet with the RETH; AETH on acknowledgements; the CNP of annex A17.9.3). The mechanisms' own PDUs are written by their modules (`Frame::encode`,
//! `Msg::encode`).
//!
//! Addresses (ours: the model has none): host `i` is 10.0.0.0 + i + 1 and switch `i` is
//! 10.128.0.0 + i + 1 (`i`: the index among hosts or switches); a node's MAC address is
//! 02:00 followed by its IPv4 address (locally administered, unicast). A flow's TCP or UDP
//! source port is 49152 + its id modulo 16384 (the dynamic range, which no dissector
//! claims) and its destination port 5201; a RoCEv2 flow is queue pair (its id modulo 2^24)
//! from an entropy source port 49152 + (its ECMP hash modulo 16384) to 4791.

use crate::net::{Ecn, HostId, NodeId, Packet, PktKind};
use crate::net::{NodeKind, Topology};

pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// RoCEv2's UDP destination port (IANA).
pub const ROCEV2_PORT: u16 = 4791;
/// The UDP port of the Ultra Ethernet transport (IANA: 4793, "UET").
pub const UET_PORT: u16 = 4793;
/// Destination port of every TCP and UDP flow (ours: iperf3's).
pub const FLOW_DPORT: u16 = 5201;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;
/// Ethernet header with its 802.1Q tag.
pub const TAGGED_ETH_BYTES: usize = 18;
/// The shortest Ethernet frame less its FCS (IEEE 802.3 clause 3.2.7: 64 B with it).
pub const MIN_FRAME_BYTES: usize = 60;
/// Bytes of the FCS, which captures leave out.
pub const FCS_BYTES: u32 = 4;
const IPV4_BYTES: usize = 20;
const TCP_BYTES: usize = 20;
const UDP_BYTES: usize = 8;
const BTH_BYTES: usize = 12;
/// The queue pair of flow 0: queue pairs 0 and 1 are the subnet management and general
/// services QPs (IBTA vol. 1, 3.9.1), whose payloads Wireshark dissects as MADs; a flow's
/// RC queue pair is this plus its id.
pub const FIRST_QP: u32 = 0x100;
const ICRC_BYTES: usize = 4;

/// The IPv4 TTL of a packet that has crossed `hops` switches (sent with 64, Linux's default).
pub fn ttl(hops: u8) -> u8 {
    64u8.saturating_sub(hops)
}

/// IPv4 address of a node (see the module doc).
pub fn ip_of(topo: &Topology, node: NodeId) -> [u8; 4] {
    let n = &topo.nodes[node as usize];
    let base: u32 = if n.kind == NodeKind::Host { 0x0A00_0000 } else { 0x0A80_0000 };
    (base + ((n.index + 1) & 0x7F_FFFF)).to_be_bytes()
}

/// MAC address of a node: 02:00 and its IPv4 address.
pub fn mac_of(topo: &Topology, node: NodeId) -> [u8; 6] {
    let ip = ip_of(topo, node);
    [0x02, 0x00, ip[0], ip[1], ip[2], ip[3]]
}

pub fn host_ip(topo: &Topology, h: HostId) -> [u8; 4] {
    ip_of(topo, topo.hosts[h as usize])
}

pub fn host_mac(topo: &Topology, h: HostId) -> [u8; 6] {
    mac_of(topo, topo.hosts[h as usize])
}

/// Ethernet II header, with an 802.1Q tag of priority `pcp` (VLAN 0: priority-tagged) when
/// given.
pub fn eth(out: &mut Vec<u8>, dst: [u8; 6], src: [u8; 6], pcp: Option<u8>, ethertype: u16) {
    out.extend_from_slice(&dst);
    out.extend_from_slice(&src);
    if let Some(pcp) = pcp {
        out.extend_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
        out.extend_from_slice(&(((pcp & 7) as u16) << 13).to_be_bytes());
    }
    out.extend_from_slice(&ethertype.to_be_bytes());
}

/// Pad a frame to the minimum Ethernet size.
pub fn pad(out: &mut Vec<u8>, start: usize) {
    if out.len() - start < MIN_FRAME_BYTES {
        out.resize(start + MIN_FRAME_BYTES, 0);
    }
}

/// The ones'-complement sum of RFC 1071 over `data`, added to `sum`.
fn sum16(mut sum: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        sum += (*b as u32) << 8;
    }
    sum
}

fn fold(mut sum: u32) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// The ECN field's bits (RFC 3168 section 5).
pub fn ecn_bits(e: Ecn) -> u8 {
    match e {
        Ecn::NotEct => 0b00,
        Ecn::Ect1 => 0b01,
        Ecn::Ect0 => 0b10,
        Ecn::Ce => 0b11,
    }
}

/// Where an IPv4 packet goes and how it is marked.
#[derive(Clone, Copy, Debug)]
pub struct Ip {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub dscp: u8,
    pub ecn: u8,
    pub ttl: u8,
}

/// IPv4 header (no options, don't fragment) for `payload` bytes of `proto`.
fn ipv4(out: &mut Vec<u8>, ip: &Ip, proto: u8, payload: usize) {
    let start = out.len();
    let total = (IPV4_BYTES + payload).min(u16::MAX as usize) as u16;
    out.extend_from_slice(&[0x45, (ip.dscp << 2) | (ip.ecn & 3)]);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0x40, 0, ip.ttl, proto, 0, 0]);
    out.extend_from_slice(&ip.src);
    out.extend_from_slice(&ip.dst);
    let c = fold(sum16(0, &out[start..]));
    out[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
}

/// The pseudo-header's sum (RFC 9293 section 3.1, RFC 768).
fn pseudo(ip: &Ip, proto: u8, len: usize) -> u32 {
    let s = sum16(sum16(0, &ip.src), &ip.dst);
    s + proto as u32 + len as u32
}

/// TCP flags.
pub const TCP_SYN: u8 = 0x02;
pub const TCP_ACK: u8 = 0x10;
pub const TCP_ECE: u8 = 0x40;

/// IPv4 and TCP headers of a segment of `payload` bytes (zeros, not written: the checksum
/// holds for them), with `sack`'s blocks (byte offsets, written in the 32-bit sequence
/// space the segments' numbers are in) as the SACK option. Returns the TCP header's bytes,
/// the option included.
#[allow(clippy::too_many_arguments)]
pub fn tcp(out: &mut Vec<u8>, ip: &Ip, ports: (u16, u16), seq: u32, ack: u32, flags: u8, payload: usize, sack: &[(u64, u64)]) -> usize {
    // the SACK option (RFC 2018 sec. 3): two NOPs, kind 5, its length, the blocks' edges
    let options = if sack.is_empty() { 0 } else { 4 + 8 * sack.len() };
    let header = TCP_BYTES + options;
    ipv4(out, ip, IPPROTO_TCP, header + payload);
    let start = out.len();
    out.extend_from_slice(&ports.0.to_be_bytes());
    out.extend_from_slice(&ports.1.to_be_bytes());
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(&ack.to_be_bytes());
    out.extend_from_slice(&[(header as u8 / 4) << 4, flags, 0xFF, 0xFF, 0, 0, 0, 0]);
    if !sack.is_empty() {
        out.extend_from_slice(&[1, 1, 5, (2 + 8 * sack.len()) as u8]);
        for &(left, right) in sack {
            out.extend_from_slice(&(left as u32).to_be_bytes());
            out.extend_from_slice(&(right as u32).to_be_bytes());
        }
    }
    let c = fold(sum16(pseudo(ip, IPPROTO_TCP, header + payload), &out[start..]));
    out[start + 16..start + 18].copy_from_slice(&c.to_be_bytes());
    header
}

/// IPv4 and UDP headers and `data`, followed by `zeros` payload bytes not written. With
/// `checksum` false the UDP checksum is 0 (RoCEv2 leaves it so: the ICRC covers the payload).
pub fn udp(out: &mut Vec<u8>, ip: &Ip, ports: (u16, u16), data: &[u8], zeros: usize, checksum: bool) {
    let len = UDP_BYTES + data.len() + zeros;
    ipv4(out, ip, IPPROTO_UDP, len);
    let start = out.len();
    out.extend_from_slice(&ports.0.to_be_bytes());
    out.extend_from_slice(&ports.1.to_be_bytes());
    out.extend_from_slice(&(len.min(u16::MAX as usize) as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(data);
    if checksum {
        let c = match fold(sum16(pseudo(ip, IPPROTO_UDP, len), &out[start..])) {
            0 => 0xFFFF,
            c => c,
        };
        out[start + 6..start + 8].copy_from_slice(&c.to_be_bytes());
    }
}

/// InfiniBand BTH opcodes (IBA table 38, reliable connection) and the CNP's (annex A17).
pub mod bth {
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_ONLY: u8 = 0x0A;
    pub const ACKNOWLEDGE: u8 = 0x11;
    pub const CNP: u8 = 0x81;
}

/// Base Transport Header: `opcode`, the destination queue pair, the AckReq bit and the PSN
/// (both 24 bits); partition key 0xFFFF (the default partition).
fn bth(out: &mut Vec<u8>, opcode: u8, qp: u32, ack_req: bool, psn: u32) {
    out.extend_from_slice(&[opcode, 0, 0xFF, 0xFF, 0]);
    out.extend_from_slice(&(qp & 0xFF_FFFF).to_be_bytes()[1..]);
    out.push(if ack_req { 0x80 } else { 0 });
    out.extend_from_slice(&(psn & 0xFF_FFFF).to_be_bytes()[1..]);
}

/// The protocol stack a flow's frames carry on the wire (IPv4 on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireProto {
    Tcp,
    /// RoCEv2: UDP to port 4791, the Base Transport Header, the ICRC.
    Roce,
    Udp,
    /// Ultra Ethernet: UDP to port 4793, the source port the packet's entropy (the PDS and
    /// SES headers are not written: their bytes are in the frame's length, zeros).
    Uet,
}

/// What a flow's packets carry beyond the packet record: its protocols, size and ports.
#[derive(Clone, Copy, Debug)]
pub struct FlowWire {
    pub id: u32,
    pub src: HostId,
    pub dst: HostId,
    pub size: u64,
    pub hash: u32,
    pub prio: u8,
    pub proto: WireProto,
}

impl FlowWire {
    /// (source port, destination port) of the flow's data direction.
    pub fn ports(&self) -> (u16, u16) {
        match self.proto {
            WireProto::Roce => (0xC000 | (self.hash & 0x3FFF) as u16, ROCEV2_PORT),
            _ => (0xC000 | (self.id & 0x3FFF) as u16, FLOW_DPORT),
        }
    }
}

/// The transport headers of `p`, a packet of flow `f`, from IPv4 on (what follows the
/// Ethernet header), with `mss` payload bytes per full segment. Returns the bytes of the IP
/// packet on the wire, of which only the headers are written.
pub fn transport(out: &mut Vec<u8>, topo: &Topology, p: &Packet, f: &FlowWire, mss: u32, sack: &[(u64, u64)]) -> usize {
    let ip = Ip { src: host_ip(topo, p.src), dst: host_ip(topo, p.dst), dscp: 0, ecn: ecn_bits(p.ecn), ttl: ttl(p.hops) };
    let fwd = f.ports();
    let back = (fwd.1, fwd.0);
    // a trimmed packet keeps its headers as they were and carries none of its payload
    let payload = if p.kind == PktKind::Trimmed { 0 } else { p.payload as usize };
    match f.proto {
        WireProto::Udp => {
            udp(out, &ip, fwd, &[], payload, true);
            IPV4_BYTES + UDP_BYTES + payload
        }
        WireProto::Uet => {
            let entropy = 0xC000 | (p.hash & 0x3FFF) as u16;
            let ports = match p.kind {
                PktKind::Data | PktKind::Trimmed | PktKind::Rts => (entropy, UET_PORT),
                _ => (UET_PORT, entropy),
            };
            udp(out, &ip, ports, &[], payload, true);
            IPV4_BYTES + UDP_BYTES + payload
        }
        WireProto::Roce => {
            // PSNs count MTU-sized packets from 0; an acknowledgement carries the last PSN
            // received in order (its seq is the next byte expected), a NAK the one expected
            let psn = (p.seq / mss.max(1) as u64) as u32;
            let qp = FIRST_QP.wrapping_add(f.id);
            let mut h = Vec::with_capacity(BTH_BYTES + 16);
            let (ports, tail) = match p.kind {
                PktKind::Data | PktKind::Trimmed => {
                    let (first, last) = (p.seq == 0, p.seq + p.payload as u64 >= f.size);
                    let op = match (first, last) {
                        (true, true) => bth::WRITE_ONLY,
                        (true, false) => bth::WRITE_FIRST,
                        (false, true) => bth::WRITE_LAST,
                        (false, false) => bth::WRITE_MIDDLE,
                    };
                    bth(&mut h, op, qp, last, psn);
                    if first {
                        // RETH: virtual address 0, R_Key the queue pair's, the whole message
                        h.extend_from_slice(&[0; 8]);
                        h.extend_from_slice(&(qp & 0xFF_FFFF).to_be_bytes());
                        h.extend_from_slice(&(f.size.min(u32::MAX as u64) as u32).to_be_bytes());
                    }
                    (fwd, payload + ICRC_BYTES)
                }
                PktKind::Ack | PktKind::Nack => {
                    let nak = p.kind == PktKind::Nack;
                    bth(&mut h, bth::ACKNOWLEDGE, qp, false, if nak { psn } else { psn.wrapping_sub(1) });
                    // AETH: ACK with no credit count (0x1F), or NAK "PSN sequence error"
                    h.extend_from_slice(&[if nak { 0x60 } else { 0x1F }, 0, 0, 0]);
                    (back, ICRC_BYTES)
                }
                _ => {
                    // CNP (annex A17.9.3): 16 reserved bytes
                    bth(&mut h, bth::CNP, qp, false, 0);
                    h.extend_from_slice(&[0; 16]);
                    (back, ICRC_BYTES)
                }
            };
            udp(out, &ip, ports, &h, tail, false);
            IPV4_BYTES + UDP_BYTES + h.len() + tail
        }
        _ => {
            // the SYN takes sequence number 2^32 - 1 so that data starts at 0 (as the
            // model's byte offsets do), in both directions
            let (ports, seq, ack, flags) = match p.kind {
                PktKind::Data | PktKind::Trimmed => (fwd, p.seq as u32, 0, TCP_ACK),
                PktKind::Syn => (fwd, u32::MAX, 0, TCP_SYN),
                PktKind::SynAck => (back, u32::MAX, 0, TCP_SYN | TCP_ACK),
                _ => (back, 0, p.seq as u32, TCP_ACK | if p.ece { TCP_ECE } else { 0 }),
            };
            IPV4_BYTES + tcp(out, &ip, ports, seq, ack, flags, payload, sack) + payload
        }
    }
}

/// The first `n` octets of a full-size data packet of flow `f` from its IPv4 header on
/// (the payload zeros): what a CNM or CIM encapsulates of the frame that caused it.
pub fn flow_msdu(out: &mut Vec<u8>, topo: &Topology, f: &FlowWire, mss: u32, n: usize) {
    let p = Packet { kind: PktKind::Data, src: f.src, dst: f.dst, payload: (f.size.min(mss as u64)) as u32, ..Packet::blank() };
    let start = out.len();
    transport(out, topo, &p, f, mss, &[]);
    out.resize(start + n, 0);
}

/// Header bytes of a transport's full-size data packet (IPv4 on), for CNMs' MSDU length.
pub fn header_bytes(t: WireProto) -> usize {
    match t {
        WireProto::Udp | WireProto::Uet => IPV4_BYTES + UDP_BYTES,
        WireProto::Roce => IPV4_BYTES + UDP_BYTES + BTH_BYTES + ICRC_BYTES,
        _ => IPV4_BYTES + TCP_BYTES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 1071's worked example: the sum of 00 01 f2 03 f4 f5 f6 f7 is ddf2, so the
    /// checksum is its complement 220d.
    #[test]
    fn checksum_matches_rfc1071_example() {
        assert_eq!(fold(sum16(0, &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7])), !0xddf2u16);
    }

    /// A header with its checksum in place sums to 0xffff (RFC 791), and the ECN bits sit
    /// in the low two bits of the second octet.
    #[test]
    fn ipv4_header_verifies() {
        let ip = Ip { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], dscp: 0, ecn: ecn_bits(Ecn::Ce), ttl: 64 };
        let mut out = vec![];
        ipv4(&mut out, &ip, IPPROTO_TCP, 1460);
        assert_eq!(out.len(), 20);
        assert_eq!(fold(sum16(0, &out)), 0);
        assert_eq!(out[1] & 3, 3);
        assert_eq!(u16::from_be_bytes([out[2], out[3]]), 1480);
    }

    /// The TCP checksum covers the pseudo-header and zero payload: re-summing with it in
    /// place gives 0.
    #[test]
    fn tcp_checksum_verifies_over_zero_payload() {
        let ip = Ip { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], dscp: 0, ecn: 0, ttl: 64 };
        let mut out = vec![];
        tcp(&mut out, &ip, (1025, 5201), 1460, 0, TCP_ACK, 1000, &[]);
        let seg = &out[20..];
        assert_eq!(fold(sum16(pseudo(&ip, IPPROTO_TCP, 20 + 1000), seg)), 0);
    }

    /// An ACK with two selective acknowledgement blocks carries RFC 2018's option (two NOPs,
    /// kind 5, length 18, each block's left and right edge), its data offset counts the
    /// option (10 words), the IP length the whole header, and the checksum still verifies.
    #[test]
    fn an_ack_carries_its_sack_blocks_as_the_rfc_2018_option() {
        let ip = Ip { src: [10, 0, 0, 2], dst: [10, 0, 0, 1], dscp: 0, ecn: 0, ttl: 64 };
        let mut out = vec![];
        assert_eq!(tcp(&mut out, &ip, (5201, 1025), 0, 1000, TCP_ACK, 0, &[(3000, 5000), (7000, 8000)]), 20 + 4 + 16);
        let seg = &out[20..];
        assert_eq!(seg.len(), 20 + 4 + 16);
        assert_eq!(seg[12] >> 4, 10, "data offset in 32-bit words");
        assert_eq!(u16::from_be_bytes([out[2], out[3]]), 20 + 40);
        assert_eq!(&seg[20..24], &[1, 1, 5, 18]);
        let word = |i: usize| u32::from_be_bytes(seg[i..i + 4].try_into().unwrap());
        assert_eq!((word(24), word(28), word(32), word(36)), (3000, 5000, 7000, 8000));
        assert_eq!(fold(sum16(pseudo(&ip, IPPROTO_TCP, 40), seg)), 0);
    }
}
