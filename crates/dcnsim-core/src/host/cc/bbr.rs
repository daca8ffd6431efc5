//! BBR v1 (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5),
//! 2016) as Linux has it (net/ipv4/tcp_bbr.c): a model of the path - the bottleneck
//! bandwidth, a windowed maximum of delivery-rate samples over 10 packet-timed rounds, and
//! the round-trip propagation time, a windowed minimum of RTT samples over 10 s - sets the
//! pacing rate (pacing_gain x bw, 1% below) and the window (cwnd_gain x bw x min_rtt plus
//! Linux's quantization budget). A state machine sets the gains:
//!
//! - Startup: pacing and window gain 2/ln 2 (739/256) until three rounds in a row raise the
//!   bandwidth estimate by less than 25%;
//! - Drain: pacing gain 1/2.885 (88/256) until the packets in the network fit one BDP;
//! - ProbeBW: window gain 2, pacing gain cycling 5/4, 3/4, then 1 for six phases of one
//!   min_rtt each, from a random phase other than 3/4; the 5/4 phase lasts until the flight
//!   reaches 5/4 BDP (or a loss), the 3/4 phase until it falls to one BDP;
//! - ProbeRTT: when min_rtt has not been refreshed for 10 s, the window is 4 packets for
//!   200 ms and one round, then back to ProbeBW (or Startup).
//!
//! The window owns every state (Linux's `cong_control`): on the first round of fast
//! recovery packet conservation (cwnd = packets in flight + acked), after it the window
//! grows by at most the acked packets toward the target, and leaving recovery restores the
//! window from before it; a timeout cuts to one packet and counts as the end of a round.
//! The ACK-aggregation allowance (`bbr_update_ack_aggregation`, extra_acked over 5-10
//! rounds) is in.
//!
//! Readings (docs/mechanisms.md):
//! - Windows are in packets as Linux counts them; the sender's bytes divide by the MSS
//!   (a short last segment counts as one).
//! - The quantization budget added to the target window is 3 send quanta (`bbr_tso_segs_goal`).
//!   Linux's quantum is its TSO burst, min(pacing rate x 1 ms, 64 KB) (45 segments at 10
//!   Gb/s), though the simulated NIC sends segment by segment; ns-3's TcpBbr uses one
//!   segment. Both readings are there (`transport.bbr.quantum`, default Linux's "tso"); with
//!   two flows on a 10 Gb/s, 104 us dumbbell the standing queue is ~330 packets with "tso" and
//!   ~75 with "segment" (bench/peers/ns3/bbr_dumbbell.py). Pacing is per segment, so the
//!   "packets in the network at the next departure" is the flight now (plus one segment
//!   while probing).
//! - The long-term bandwidth sampling that detects token-bucket policers (`lt_bw`) is not
//!   modelled: no simulated fabric polices. (ns-3's TcpBbr has it.)
//! - The initial pacing rate and min_rtt come from the handshake's RTT (the idle path's, see
//!   `CongestionControl::open`), as Linux's `bbr_init` reads the SYN's.
//! - BBR v1 reads no ECN: its data is not ECN-capable.

use super::{CaState, Control, CongestionControl, NewCc, Window};
use super::delivery_rate::DeliveryRate;
use crate::host::tcp::TcpParams;
use crate::net::Ecn;
use crate::sim::rng::mix64;
use crate::sim::SimTime;

/// Linux's fixed-point gains, BBR_UNIT = 256.
const UNIT: f64 = 256.0;
/// 2/ln 2 (`bbr_high_gain` = 256 x 2885 / 1000 + 1).
pub const HIGH_GAIN: f64 = 739.0 / UNIT;
/// 1/high_gain (`bbr_drain_gain` = 256 x 1000 / 2885).
pub const DRAIN_GAIN: f64 = 88.0 / UNIT;
pub const CWND_GAIN: f64 = 2.0;
/// The ProbeBW pacing-gain cycle.
pub const PACING_GAINS: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Phases the starting phase is drawn from (`bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;
/// The bandwidth filter's window, rounds.
pub const BW_ROUNDS: u64 = 10;
pub const MIN_RTT_WINDOW: SimTime = SimTime::from_ms(10_000);
pub const PROBE_RTT_TIME: SimTime = SimTime::from_ms(200);
/// Packets kept in flight at least, and the ProbeRTT window.
pub const MIN_CWND_PKTS: u64 = 4;
pub const FULL_BW_THRESH: f64 = 1.25;
pub const FULL_BW_ROUNDS: u32 = 3;
/// Pacing 1% below the estimate.
pub const PACING_MARGIN: f64 = 0.01;
/// The ACK-aggregation window (rounds) and its cap (bw x this).
const EXTRA_ACKED_ROUNDS: u32 = 5;
const EXTRA_ACKED_MAX: f64 = 0.1;
/// Linux's TSO sizing: pacing_rate >> sk_pacing_shift (10) bytes, at most GSO_MAX_SIZE - 1
/// - MAX_TCP_HEADER, at most 127 segments; 2 segments at least above 1.2 Mb/s.
const TSO_MAX_BYTES: f64 = 65536.0 - 1.0 - 320.0;
const MIN_TSO_RATE_BYTES: f64 = 1_200_000.0 / 8.0;
/// The nominal RTT Linux assumes before any sample (`bbr_init_pacing_rate_from_rtt`).
const NOMINAL_RTT: SimTime = SimTime::from_ms(1);

/// The send quantum of the window's quantization budget (`transport.bbr.quantum`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Quantum {
    /// Linux's TSO autosizing (`bbr_tso_segs_goal`).
    Tso,
    /// One segment (ns-3's TcpBbr; a host without TSO).
    Segment,
}

pub const DEFAULT_QUANTUM: Quantum = Quantum::Tso;

/// BBR's one reading a scenario chooses; its constants are Linux's.
#[derive(Copy, Clone, Debug)]
pub struct BbrParams {
    pub quantum: Quantum,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams { quantum: DEFAULT_QUANTUM }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Kathleen Nichols' windowed maximum over three samples (Linux lib/win_minmax.c), of
/// bandwidth (bytes/s) against the round count.
#[derive(Clone, Copy, Debug, Default)]
struct MaxFilter {
    s: [(u64, f64); 3],
}

impl MaxFilter {
    fn get(&self) -> f64 {
        self.s[0].1
    }
    fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [(t, v); 3];
        v
    }
    fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        let val = (t, v);
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        let dt = t - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// One connection's BBR state (Linux's `struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr {
    pub mode: Mode,
    bw: MaxFilter,
    /// Packet-timed rounds so far.
    pub rounds: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    /// The min_rtt estimate and when it was taken.
    pub min_rtt: Option<SimTime>,
    min_rtt_stamp: SimTime,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    prev_state: CaState,
    /// The window before recovery or ProbeRTT cut it, packets.
    prior_cwnd: u64,
    idle_restart: bool,
    pub full_bw_reached: bool,
    full_bw: f64,
    full_bw_cnt: u32,
    cycle_idx: usize,
    cycle_stamp: SimTime,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// The pacing rate, bytes/s.
    pacing_rate: f64,
    has_seen_rtt: bool,
    extra_acked: [u64; 2],
    extra_acked_rounds: u32,
    extra_acked_idx: usize,
    ack_epoch_stamp: SimTime,
    ack_epoch_acked: u64,
    init_cwnd: u64,
    quantum: Quantum,
    seed: u64,
    draws: u64,
}

/// BBR v1's constants are Linux's (static in tcp_bbr.c); the scenario chooses the quantum.
impl NewCc<TcpParams> for Bbr {
    type Params = BbrParams;
    fn build(p: &BbrParams, tcp: &TcpParams) -> Bbr {
        let init_cwnd = tcp.init_cwnd as u64;
        Bbr {
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            rounds: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            prev_state: CaState::Open,
            prior_cwnd: 0,
            idle_restart: false,
            full_bw_reached: false,
            full_bw: 0.0,
            full_bw_cnt: 0,
            cycle_idx: 0,
            cycle_stamp: SimTime::ZERO,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            pacing_rate: Self::rate(init_cwnd as f64 * 1500.0 / NOMINAL_RTT.as_secs_f64(), HIGH_GAIN),
            has_seen_rtt: false,
            extra_acked: [0; 2],
            extra_acked_rounds: 0,
            extra_acked_idx: 0,
            ack_epoch_stamp: SimTime::ZERO,
            ack_epoch_acked: 0,
            init_cwnd,
            quantum: p.quantum,
            seed: 0,
            draws: 0,
        }
    }
}

/// Whole packets in `bytes` (a partial one counts).
fn pkts(bytes: u64, mss: f64) -> u64 {
    (bytes as f64 / mss).ceil() as u64
}

impl Bbr {
    /// The bandwidth estimate, bytes/s.
    pub fn bw(&self) -> f64 {
        self.bw.get()
    }

    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// A rate with a gain, 1% below (`bbr_rate_bytes_per_sec`).
    fn rate(bw: f64, gain: f64) -> f64 {
        bw * gain * (1.0 - PACING_MARGIN)
    }

    fn init_pacing_rate(&mut self, rtt: SimTime, cwnd_pkts: u64, mss: f64) {
        self.has_seen_rtt = true;
        let rtt = rtt.as_secs_f64().max(1e-6);
        self.pacing_rate = Self::rate(cwnd_pkts as f64 * mss / rtt, HIGH_GAIN);
    }

    fn set_pacing_rate(&mut self, gain: f64, srtt: Option<SimTime>, cwnd_pkts: u64, mss: f64) {
        let rate = Self::rate(self.bw(), gain);
        if !self.has_seen_rtt {
            if let Some(r) = srtt {
                self.init_pacing_rate(r, cwnd_pkts, mss);
            }
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: the segments of one TSO burst at the pacing rate.
    fn tso_segs_goal(&self, mss: f64) -> u64 {
        if self.quantum == Quantum::Segment {
            return 1;
        }
        let bytes = (self.pacing_rate / 1024.0).min(TSO_MAX_BYTES);
        let min = if self.pacing_rate < MIN_TSO_RATE_BYTES { 1 } else { 2 };
        ((bytes / mss) as u64).max(min).min(0x7F)
    }

    /// ceil(bw x min_rtt x gain) packets (`bbr_bdp`); the initial window before any RTT.
    fn bdp(&self, bw: f64, gain: f64, mss: f64) -> u64 {
        match self.min_rtt {
            None => self.init_cwnd,
            Some(r) => (bw * r.as_secs_f64() * gain / mss).ceil() as u64,
        }
    }

    fn quantization_budget(&self, cwnd: u64, mss: f64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(mss);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    fn inflight(&self, bw: f64, gain: f64, mss: f64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain, mss), mss)
    }

    /// Packets in the network when the next segment leaves (`bbr_packets_in_net_at_edt`):
    /// pacing is per segment here, so the flight now, plus that segment while probing.
    fn in_net_at_edt(&self, inflight: u64) -> u64 {
        if self.pacing_gain > 1.0 {
            inflight + 1
        } else {
            inflight
        }
    }

    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn advance_cycle_phase(&mut self, now: SimTime) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAINS.len();
        self.cycle_stamp = now;
    }

    fn reset_probe_bw_mode(&mut self, now: SimTime) {
        self.mode = Mode::ProbeBw;
        self.draws += 1;
        let r = mix64(self.seed ^ mix64(self.draws)) % CYCLE_RAND;
        self.cycle_idx = PACING_GAINS.len() - 1 - r as usize;
        self.advance_cycle_phase(now);
    }

    fn reset_mode(&mut self, now: SimTime) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn update_bw(&mut self, c: &Control) {
        self.round_start = false;
        let rs = &c.rs;
        let Some(interval) = rs.interval else { return };
        if interval == SimTime::ZERO {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = c.delivered;
            self.rounds += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = rs.delivered as f64 / interval.as_secs_f64();
        if !rs.app_limited || bw >= self.bw() {
            self.bw.update(BW_ROUNDS, self.rounds, bw);
        }
    }

    fn update_ack_aggregation(&mut self, c: &Control, cwnd: u64, mss: f64) {
        if c.rs.acked == 0 || c.rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_rounds = (self.extra_acked_rounds + 1).min(0x1F);
            if self.extra_acked_rounds >= EXTRA_ACKED_ROUNDS {
                self.extra_acked_rounds = 0;
                self.extra_acked_idx ^= 1;
                self.extra_acked[self.extra_acked_idx] = 0;
            }
        }
        let epoch = (c.now - self.ack_epoch_stamp).as_secs_f64();
        let mut expected = (self.bw() * epoch / mss) as u64;
        let acked = pkts(c.rs.acked, mss);
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + acked >= 1 << 20 {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = c.now;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + acked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(cwnd);
        if extra > self.extra_acked[self.extra_acked_idx] {
            self.extra_acked[self.extra_acked_idx] = extra;
        }
    }

    fn ack_aggregation_cwnd(&self, mss: f64) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let max = (self.bw() * EXTRA_ACKED_MAX / mss) as u64;
        self.extra_acked[0].max(self.extra_acked[1]).min(max)
    }

    fn update_cycle_phase(&mut self, c: &Control, mss: f64) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = self.min_rtt.is_none_or(|r| c.now - self.cycle_stamp > r);
        let next = if self.pacing_gain == 1.0 {
            full_length
        } else {
            let inflight = self.in_net_at_edt(pkts(c.rs.prior_in_flight, mss));
            let bw = self.bw();
            if self.pacing_gain > 1.0 {
                full_length && (c.rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain, mss))
            } else {
                full_length || inflight <= self.inflight(bw, 1.0, mss)
            }
        };
        if next {
            self.advance_cycle_phase(c.now);
        }
    }

    fn check_full_bw_reached(&mut self, c: &Control) {
        if self.full_bw_reached || !self.round_start || c.rs.app_limited {
            return;
        }
        if self.bw() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_ROUNDS;
    }

    fn check_drain(&mut self, c: &Control, mss: f64) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain && self.in_net_at_edt(pkts(c.pipe, mss)) <= self.inflight(self.bw(), 1.0, mss) {
            self.reset_probe_bw_mode(c.now);
        }
    }

    fn check_probe_rtt_done(&mut self, w: &mut Window, now: SimTime) {
        if !self.probe_rtt_done.is_some_and(|d| now > d) {
            return;
        }
        self.min_rtt_stamp = now;
        w.cwnd = w.cwnd.max(self.prior_cwnd as f64 * w.mss);
        self.reset_mode(now);
    }

    fn update_min_rtt(&mut self, w: &mut Window, c: &Control, rate: &mut DeliveryRate) {
        let expired = c.now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        if let Some(rtt) = c.rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt <= m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = c.now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(pkts(w.cwnd as u64, w.mss));
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            // low-rate samples of this mode do not lower the estimate
            rate.app_limited_now(c.pipe);
            if self.probe_rtt_done.is_none() && pkts(c.pipe, w.mss) <= MIN_CWND_PKTS {
                self.probe_rtt_done = Some(c.now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = c.delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(w, c.now);
                }
            }
        }
        if c.rs.acked > 0 && c.rs.interval.is_some() {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAINS[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: the window in packets, and whether packet
    /// conservation decides it.
    fn recover_or_restore(&mut self, c: &Control, cwnd: u64, acked: u64, mss: f64) -> (u64, bool) {
        let mut cwnd = cwnd;
        let losses = pkts(c.rs.losses, mss);
        if losses > 0 {
            cwnd = cwnd.saturating_sub(losses).max(1);
        }
        let pipe = pkts(c.pipe, mss);
        if c.state == CaState::Recovery && self.prev_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = c.delivered;
            cwnd = pipe + acked;
        } else if self.prev_state >= CaState::Recovery && c.state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = c.state;
        if self.packet_conservation {
            return (cwnd.max(pipe + acked), true);
        }
        (cwnd, false)
    }

    fn set_cwnd(&mut self, w: &mut Window, c: &Control) {
        let mss = w.mss;
        let acked = pkts(c.rs.acked, mss);
        let mut cwnd = pkts(w.cwnd as u64, mss);
        if acked > 0 {
            let (cw, conserving) = self.recover_or_restore(c, cwnd, acked, mss);
            cwnd = cw;
            if !conserving {
                let mut target = self.bdp(self.bw(), self.cwnd_gain, mss);
                target += self.ack_aggregation_cwnd(mss);
                target = self.quantization_budget(target, mss);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || c.delivered < self.init_cwnd * mss as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(MIN_CWND_PKTS);
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(MIN_CWND_PKTS);
        }
        w.cwnd = cwnd as f64 * mss;
    }
}

impl CongestionControl for Bbr {
    /// BBR reads no ECN.
    fn ssthresh(&mut self, w: &Window) -> f64 {
        w.ssthresh
    }

    /// Never called: the window is BBR's in every state (`cong_control`).
    fn cong_avoid(&mut self, _w: &mut Window, _a: &super::AckEvent) {}

    /// Entering recovery keeps the window (packet conservation sets it on the next ACK);
    /// it is remembered for when recovery ends (`bbr_ssthresh` -> `bbr_save_cwnd`).
    fn on_fast_retransmit(&mut self, w: &mut Window, _inflight: u64, _now: SimTime) {
        self.save_cwnd(pkts(w.cwnd as u64, w.mss));
    }

    /// A timeout: the window saved, then one packet (`tcp_enter_loss`); the round ends and
    /// full-pipe detection restarts (`bbr_set_state(TCP_CA_Loss)`).
    fn on_timeout(&mut self, w: &mut Window, _inflight: u64, _now: SimTime) {
        self.save_cwnd(pkts(w.cwnd as u64, w.mss));
        w.cwnd = w.mss;
        self.prev_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
    }

    fn ect(&self) -> Ecn {
        Ecn::NotEct
    }

    const PACES: bool = true;

    fn pacing_rate(&self, _w: &Window, _srtt: Option<SimTime>) -> Option<u64> {
        Some((self.pacing_rate * 8.0).max(1.0) as u64)
    }

    const CONG_CONTROL: bool = true;

    /// `bbr_main`: update the model, then the pacing rate and the window.
    fn cong_control(&mut self, w: &mut Window, c: &Control, rate: &mut DeliveryRate) {
        let mss = w.mss;
        self.update_bw(c);
        self.update_ack_aggregation(c, pkts(w.cwnd as u64, mss), mss);
        self.update_cycle_phase(c, mss);
        self.check_full_bw_reached(c);
        self.check_drain(c, mss);
        self.update_min_rtt(w, c, rate);
        self.update_gains();
        let cwnd_pkts = pkts(w.cwnd as u64, mss);
        self.set_pacing_rate(self.pacing_gain, c.rs.rtt, cwnd_pkts, mss);
        self.set_cwnd(w, c);
    }

    /// `bbr_init` with the handshake's RTT: min_rtt and the first pacing rate from it.
    fn open(&mut self, w: &mut Window, seed: u64, rtt: SimTime, now: SimTime) {
        self.seed = seed;
        self.min_rtt = Some(rtt);
        // the filter's 10 s run from the connection's start, not the simulation's
        self.min_rtt_stamp = now;
        self.ack_epoch_stamp = now;
        self.init_pacing_rate(rtt, pkts(w.cwnd as u64, w.mss), w.mss);
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: restarting from idle after running out of data,
    /// pace at the estimate rather than probe.
    fn on_tx_start(&mut self, app_limited: bool) {
        if !app_limited {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_acked = 0;
        if self.mode == Mode::ProbeBw {
            self.pacing_rate = Self::rate(self.bw(), 1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The windowed maximum keeps the best of the last `win` rounds and forgets older ones.
    #[test]
    fn max_filter_windows_by_rounds() {
        let mut f = MaxFilter::default();
        f.reset(0, 10.0);
        assert_eq!(f.update(10, 1, 5.0), 10.0);
        assert_eq!(f.update(10, 5, 7.0), 10.0);
        assert_eq!(f.update(10, 11, 6.0), 7.0, "the round-0 maximum aged out");
        assert_eq!(f.update(10, 12, 20.0), 20.0);
        assert_eq!(f.update(10, 40, 1.0), 1.0, "nothing left in the window");
    }

    /// The gains are Linux's fixed-point values.
    #[test]
    fn gains_are_linux_fixed_point() {
        assert!((HIGH_GAIN - 2.0 / std::f64::consts::LN_2).abs() < 0.003);
        assert!((DRAIN_GAIN * HIGH_GAIN - 1.0).abs() < 0.02);
        assert_eq!(PACING_GAINS.iter().sum::<f64>(), 8.0, "the cycle averages 1");
    }

    /// ProbeRTT comes when min_rtt has not been refreshed for 10 s of the connection's life
    /// (Linux's `bbr_init` stamps the filter at the connection's start): a flow opened at 5 s
    /// that never sees its handshake RTT again enters it just after 15 s, not at 10 s.
    #[test]
    fn probe_rtt_after_ten_seconds_of_the_connection() {
        let tcp = TcpParams::for_tests();
        let mut b = Bbr::build(&BbrParams::default(), &tcp);
        let mut w = Window { cwnd: 10_000.0, ssthresh: f64::INFINITY, mss: 1000.0 };
        let start = SimTime::from_ms(5_000);
        b.open(&mut w, 1, SimTime::from_us(10), start);
        let mut rate = DeliveryRate::default();
        let ctl = |now: SimTime| Control {
            rs: crate::host::cc::delivery_rate::RateSample { acked: 1000, rtt: Some(SimTime::from_us(20)), ..Default::default() },
            state: CaState::Open,
            pipe: 10_000,
            delivered: 1000,
            now,
        };
        b.cong_control(&mut w, &ctl(SimTime::from_ms(14_000)), &mut rate);
        assert_ne!(b.mode, Mode::ProbeRtt, "9 s into the connection");
        b.cong_control(&mut w, &ctl(SimTime::from_ms(15_001)), &mut rate);
        assert_eq!(b.mode, Mode::ProbeRtt);
        assert_eq!(w.cwnd, MIN_CWND_PKTS as f64 * 1000.0);
    }
}
