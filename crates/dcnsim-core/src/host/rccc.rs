//! RCCC, the Ultra Ethernet transport's receiver credit congestion control (UE
//! Specification 1.0; the UEC's htsim, `uec.cpp`: `UecSrc::computePullTarget`,
//! `handlePull`, `stopSpeculating`, `UecSink::pull`, `UecPullPacer`), on the receiver-credit
//! seam (`PktKind::Credit`):
//! - the sender starts with a window's worth of speculative credit (the largest NSCC window,
//!   1.5 BDPs), spends each packet's bytes on the wire from it and may send while it has
//!   any; its first ACK, NACK or pull ends the speculation (unspent credit is dropped);
//! - every data packet (and a trimmed one's header) carries the sender's pull target: the
//!   bytes it still has to send, new and to resend (capped at its NSCC window plus an MTU
//!   where NSCC runs too, and at the largest window), less its credit, on top of what it
//!   has been pulled so far (at least an MTU while speculating with data left);
//! - each receiving NIC has one pull pacer: round robin over its flows that want more, each
//!   turn granting at most 16,384 B up to the flow's target, then waiting the time the
//!   granted bytes take at 99% of its line rate (or 1,024 B's time if it granted nothing).
//!   A pull carries the flow's cumulative grant; the sender adds the increase to its credit,
//!   never above the largest window;
//! - slow pulls (`UecPullPacer::doNextEvent`'s idle senders): a flow whose target a pull
//!   met joins the pacer's idle list; while no flow wants more, each turn grants the first
//!   idle flow 16,384 B beyond its target, and the flow stays on the list while its target is
//!   met and it holds less than its largest window (rounded down to 256 B) beyond it. Idle
//!   NIC time so keeps a sender's credit full: where the division below makes targets small
//!   (one sender's many flows), these grants, not the targets, fill its credit;
//! - the target (before the grant it adds to) is divided by the flows the sender's NIC
//!   holds ready to send, the flow itself included, where there are several: htsim's
//!   `activeSources`, the sources queued at its NIC (`UecNIC::_active_srcs`) for a free
//!   port, which a source joins whenever its credit and window let it send and the port is
//!   busy. A sender's flows then ask together for about what one would.
//!
//! - a packet the retransmission timer declared lost waits for credit like any other; where
//!   the credit is spent the sender asks for it with an RTS (htsim `UecSrc::sendRTS`, at most
//!   one per network RTT): a header in the control class carrying the pull target, which
//!   asks for a pull whatever the target; the receiver answers it at once with an ACK of
//!   what it holds (`UecSink::processRts`). A flow with nothing in flight that waited a whole
//!   timer for credit asks again.
//!
//! Readings: a flow whose receiver holds every byte gets no more pulls (htsim's idle list
//! keeps it until its slow credit reaches the window); an RTS takes no sequence number of
//! its own (htsim's does, and is timed and acknowledged as a packet; here a lost RTS is
//! repeated by the flow's timer); pulls carry no quanta (htsim counts credit in 256 B units:
//! targets here are rounded up to them, grants follow).

use crate::net::{FlowId, HostId};
use crate::sim::{ser_time, SimTime};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// The most one pull grants (htsim `_credit_per_pull`: 64 quanta of 256 B).
pub const CREDIT_PER_PULL: u64 = 16_384;
/// htsim's credit unit: targets are rounded up to it.
pub const QUANTUM: u64 = 256;
/// The pacer grants at this fraction of the line rate.
pub const PULL_RATE: f64 = 0.99;
/// What a pull that granted nothing waits for (htsim: 4 quanta).
const IDLE_PULL_BYTES: u64 = 1_024;
/// Bit 0 of the pull target a packet carries (targets are whole quanta, so it is free): an
/// RTS, which asks for a pull whatever its target.
const ASKS: u64 = 1;

/// The value an RTS carries: the pull target, asking for a pull whatever it is.
pub fn asking(target: u64) -> u64 {
    target | ASKS
}

/// A sender's credit state (`UetSender`).
#[derive(Clone, Debug)]
pub struct Credit {
    /// Bytes it may still send (may go below 0 by one packet).
    pub credit: i64,
    /// It sends on speculative credit until its first ACK, NACK or pull.
    pub speculating: bool,
    /// The cumulative grant of the last pull taken.
    pub pulled: u64,
    /// The largest credit (and the first).
    max: i64,
}

impl Credit {
    pub fn new(max_window: u64) -> Credit {
        Credit { credit: max_window as i64, speculating: true, pulled: 0, max: max_window as i64 }
    }

    /// The largest credit.
    pub fn cap(&self) -> u64 {
        self.max as u64
    }

    /// The first word back from the receiver: unspent speculative credit is dropped.
    pub fn stop_speculating(&mut self) {
        if self.speculating {
            self.speculating = false;
            self.credit = self.credit.min(0);
        }
    }

    /// A pull granting up to `granted` bytes, cumulatively.
    pub fn on_pull(&mut self, granted: u64) {
        self.stop_speculating();
        if granted > self.pulled {
            self.credit = (self.credit + (granted - self.pulled) as i64).min(self.max);
            self.pulled = granted;
        }
    }

    /// The pull target to carry: `backlog` bytes (on the wire) left to send new, `resend`
    /// to resend, `window` what NSCC allows (None: RCCC alone), `mtu` a packet's bytes,
    /// `sharing` the flows the sender's NIC holds ready to send, this one included (htsim
    /// `computePullTarget` divides by its NIC's `activeSources` where there are several).
    pub fn target(&self, backlog: u64, resend: u64, window: Option<f64>, mtu: u64, sharing: u32) -> u64 {
        let mut pt = (backlog + resend) as i64;
        if let Some(w) = window {
            pt = pt.min(w as i64 + mtu as i64);
        }
        pt = pt.min(self.max) - self.credit;
        if self.speculating && pt < mtu as i64 && backlog > 0 {
            pt = mtu as i64;
        }
        if sharing > 1 {
            // truncating toward zero, as htsim's integer division does
            pt /= sharing as i64;
        }
        (self.pulled + pt.max(0) as u64).div_ceil(QUANTUM) * QUANTUM
    }
}

/// One receiving flow's pull state.
#[derive(Clone, Debug, Default)]
struct Sink {
    latest: u64,
    target: u64,
    in_pull: bool,
    /// The most slow pulls grant beyond the target: the sender's largest window, rounded
    /// down to whole quanta.
    slow_cap: u64,
}

/// Every receiving NIC's pull pacer and its flows' pull state.
#[derive(Clone, Debug, Default)]
pub struct PullPacers {
    sinks: FxHashMap<FlowId, Sink>,
    /// By host: the flows waiting for a pull, in turn; the flows whose target a pull met, for
    /// slow pulls (a flow may be on both, as in htsim); whether its pacer's event is queued.
    active: Vec<VecDeque<FlowId>>,
    idle: Vec<VecDeque<FlowId>>,
    armed: Vec<bool>,
}

/// What a pacer's turn did: the pull to send (flow, cumulative grant) and when the next
/// turn is due.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    pub pull: Option<(FlowId, u64)>,
    pub next: Option<SimTime>,
}

impl PullPacers {
    pub fn new(hosts: usize) -> PullPacers {
        PullPacers { sinks: FxHashMap::default(), active: vec![VecDeque::new(); hosts], idle: vec![VecDeque::new(); hosts], armed: vec![false; hosts] }
    }

    /// Flow `f`'s receiver at host `h` saw a packet carrying `carried` (the pull target;
    /// `asking()` on an RTS); `trimmed`: its trimmed header. An RTS and a trimmed header
    /// ask for a pull whatever the target:
    /// the pull then repeats the cumulative grant, as htsim's does. `max_window`: the
    /// sender's largest window (its credit's cap). Whether host `h`'s pacer must be started
    /// now.
    pub fn want(&mut self, h: HostId, f: FlowId, carried: u64, trimmed: bool, max_window: u64) -> bool {
        let (target, ask) = (carried & !ASKS, trimmed || carried & ASKS != 0);
        let s = self.sinks.entry(f).or_insert_with(|| Sink { slow_cap: max_window / QUANTUM * QUANTUM, ..Sink::default() });
        let higher = target > s.target;
        if higher {
            s.target = target;
        }
        if (higher || ask) && !s.in_pull {
            s.in_pull = true;
            self.active[h as usize].push_back(f);
            if !self.armed[h as usize] {
                self.armed[h as usize] = true;
                return true;
            }
        }
        false
    }

    /// Flow `f`'s receiver's pull target and what it has granted, cumulatively.
    #[cfg(test)]
    pub fn state(&self, f: FlowId) -> Option<(u64, u64)> {
        self.sinks.get(&f).map(|s| (s.target, s.latest))
    }

    /// Flow `f`'s receiver holds every byte: it pulls no more.
    pub fn done(&mut self, f: FlowId) {
        self.sinks.remove(&f);
    }

    /// Host `h`'s pacer's turn at `now`, its line rate `rate_bps`.
    pub fn turn(&mut self, h: HostId, now: SimTime, rate_bps: u64) -> Turn {
        let (q, idle) = (&mut self.active[h as usize], &mut self.idle[h as usize]);
        let mut pull = None;
        let mut granted = 0;
        // a flow whose receiver finished since it asked is skipped, on either list
        while let Some(f) = q.pop_front() {
            let Some(s) = self.sinks.get_mut(&f) else { continue };
            let prev = s.latest;
            s.latest = (s.latest + CREDIT_PER_PULL).min(s.target.max(prev));
            granted = s.latest - prev;
            pull = Some((f, s.latest));
            if s.target > s.latest {
                q.push_back(f);
            } else {
                s.in_pull = false;
                idle.push_back(f);
            }
            break;
        }
        if pull.is_none() {
            // no flow wants more: a slow pull to the first idle one
            while let Some(f) = idle.pop_front() {
                let Some(s) = self.sinks.get_mut(&f) else { continue };
                s.latest += CREDIT_PER_PULL;
                granted = CREDIT_PER_PULL;
                pull = Some((f, s.latest));
                if s.target <= s.latest && s.latest - s.target < s.slow_cap {
                    idle.push_back(f);
                }
                break;
            }
        }
        let more = !q.is_empty() || !idle.is_empty();
        self.armed[h as usize] = more;
        let wait = ser_time(if granted > 0 { granted } else { IDLE_PULL_BYTES }, (rate_bps as f64 * PULL_RATE) as u64);
        Turn { pull, next: more.then_some(now + wait) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Speculative credit first, dropped at the first word back; pulls add their increase,
    /// never above the largest window; the target asks for what is left less the credit.
    #[test]
    fn a_senders_credit() {
        let mut c = Credit::new(100_000);
        assert_eq!(c.target(1_000_000, 0, None, 4_150, 1), 4_352, "a full window of credit: an MTU (rounded up to 256 B) while speculating");
        c.credit -= 60_000;
        c.stop_speculating();
        assert_eq!(c.credit, 0);
        assert_eq!(c.target(1_000_000, 0, None, 4_150, 1), 100_096, "the largest window, rounded up to 256 B");
        c.on_pull(16_384);
        assert_eq!((c.credit, c.pulled), (16_384, 16_384));
        c.on_pull(10_000);
        assert_eq!(c.credit, 16_384, "an older pull adds nothing");
        c.on_pull(1_000_000);
        assert_eq!(c.credit, 100_000, "never above the largest window");
        assert_eq!(c.target(8_300, 0, Some(50_000.0), 4_150, 1), 1_000_192, "with credit for all it needs: nothing beyond the grant (rounded up to 256 B)");
        // three flows ready at the sender's NIC: a third of what it would ask alone
        let mut d = Credit::new(100_000);
        d.stop_speculating();
        assert_eq!(d.target(1_000_000, 0, None, 4_150, 1), 100_096);
        assert_eq!(d.target(1_000_000, 0, None, 4_150, 3), 33_536, "100,000 / 3 = 33,333, rounded up to 256 B");
        d.on_pull(16_384);
        assert_eq!(d.target(1_000_000, 0, None, 4_150, 3), 16_384 + 27_904, "(100,000 - 16,384 of credit) / 3 above the grant: 27,872 -> 27,904");
        d.credit = 120_000;
        assert_eq!(d.target(1_000_000, 0, None, 4_150, 3), 16_384, "more credit than the target: nothing beyond the grant");
    }

    /// Two flows into one NIC take turns; each turn waits the granted bytes' time at 99% of
    /// the line rate; a flow is pulled up to its target and no further.
    #[test]
    fn a_pacer_takes_its_flows_in_turn_at_line_rate() {
        let mut p = PullPacers::new(2);
        assert!(p.want(1, 7, 40_000, false, 40_000));
        assert!(!p.want(1, 8, 20_000, false, 40_000), "started already");
        let rate = 100_000_000_000;
        let mut now = SimTime::ZERO;
        let mut got = Vec::new();
        loop {
            let t = p.turn(1, now, rate);
            got.push(t.pull.unwrap());
            match t.next {
                Some(n) => {
                    let (_, g) = *got.last().unwrap();
                    assert!(n > now && g > 0);
                    now = n;
                }
                None => break,
            }
        }
        // then slow pulls, 16,384 B each beyond the target, in the order the targets were met,
        // while a flow holds less than its window (40,000 -> 39,936 B) beyond it: three each
        let slow = [(8, 36_384), (7, 56_384), (8, 52_768), (7, 72_768), (8, 69_152), (7, 89_152)];
        assert_eq!(got, [&[(7, 16_384), (8, 16_384), (7, 32_768), (8, 20_000), (7, 40_000)][..], &slow[..]].concat());
        let per = ser_time(16_384, (rate as f64 * PULL_RATE) as u64);
        assert!((per.0 as f64 - 16_384.0 * 8.0 / 99e9 * 1e12).abs() <= 1.0, "16 KB at 99 Gbit/s: {per:?}");
        assert!(!p.armed[1]);
        // a higher target starts it again (htsim compares it with the highest target, not
        // the grant): below what slow pulls granted, the pull repeats the grant
        assert!(p.want(1, 8, 60_000, false, 40_000));
        assert_eq!(p.turn(1, now, rate).pull, Some((8, 69_152)));
        assert!(!p.want(1, 7, 100_000, false, 40_000), "running: flow 7 joins the queue");
        assert_eq!(p.turn(1, now, rate).pull, Some((7, 100_000)), "a flow that wants more comes before slow pulls");
    }

    /// A flow whose receiver finished gets no more pulls, slow or not, and an idle pacer
    /// with no flow left stops.
    #[test]
    fn finished_flows_get_no_slow_pulls() {
        let mut p = PullPacers::new(1);
        assert!(p.want(0, 3, 8_192, false, 1_000_000));
        assert_eq!(p.turn(0, SimTime::ZERO, 100_000_000_000).pull, Some((3, 8_192)));
        let t = p.turn(0, SimTime::ZERO, 100_000_000_000);
        assert_eq!(t.pull, Some((3, 24_576)), "a slow pull");
        assert!(t.next.is_some());
        p.done(3);
        assert_eq!(p.turn(0, SimTime::ZERO, 100_000_000_000), Turn { pull: None, next: None });
    }
}
