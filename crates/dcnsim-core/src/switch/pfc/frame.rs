//! PFC's frames on the wire: IEEE 802.3 Annex 31B PAUSE and IEEE 802.1Qbb (802.3 Annex 31D)
//! PFC, as MAC Control frames.

use super::CLASSES;

/// PFC's link-local frames.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PauseFrame {
    /// IEEE 802.3 Annex 31B PAUSE (802.3x): stops every class of the link for `quanta` x 512
    /// bit times (0 = resume).
    Pause { quanta: u16 },
    /// IEEE 802.1Qbb PFC frame for one traffic class (0 quanta = XON).
    Pfc { class: u8, quanta: u16 },
}

/// Wire size of a PAUSE / PFC frame (minimum Ethernet frame).
pub const PAUSE_FRAME_BYTES: u32 = 64;

/// The MAC Control frames' destination address and EtherType (IEEE 802.3 clause 31).
pub const MAC_CONTROL_DA: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// MAC Control opcodes: PAUSE (802.3 Annex 31B) and PFC (802.1Qbb, 802.3 Annex 31D).
pub const OPCODE_PAUSE: u16 = 0x0001;
pub const OPCODE_PFC: u16 = 0x0101;

/// The bytes of a PAUSE frame (opcode, pause_time) or a PFC frame (opcode, class-enable
/// vector with the class's bit, eight pause times of which the class's is set; an XON is
/// its bit with 0 quanta) sent by `src`, padded to the minimum frame, no FCS.
pub fn encode(frame: PauseFrame, src: [u8; 6], out: &mut Vec<u8>) {
    let start = out.len();
    crate::net::wire::eth(out, MAC_CONTROL_DA, src, None, ETHERTYPE_MAC_CONTROL);
    match frame {
        PauseFrame::Pause { quanta } => {
            out.extend_from_slice(&OPCODE_PAUSE.to_be_bytes());
            out.extend_from_slice(&quanta.to_be_bytes());
        }
        PauseFrame::Pfc { class, quanta } => {
            out.extend_from_slice(&OPCODE_PFC.to_be_bytes());
            out.extend_from_slice(&(1u16 << (class & 7)).to_be_bytes());
            for c in 0..CLASSES as u8 {
                out.extend_from_slice(&(if c == class { quanta } else { 0 }).to_be_bytes());
            }
        }
    }
    crate::net::wire::pad(out, start);
}
