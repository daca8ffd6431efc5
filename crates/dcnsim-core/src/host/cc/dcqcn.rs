//! DCQCN rate control (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015, sec. 3), as pure state machines that the engine
//! drives: [`DcqcnNp`] at the receiver NIC turns ECN marks into CNPs, and
//! [`DcqcnRp`] at the sender NIC turns CNPs, sent bytes and elapsed time into
//! a sending rate.
//!
//! The RP follows the paper's sec. 3.1 and its Fig. 5 state machine, which
//! inherits rate increase from QCN (IEEE 802.1Qau):
//! - On a CNP: `Rt <- Rc`, `Rc <- Rc (1 - alpha/2)`, `alpha <- (1-g) alpha + g`
//!   (eq. 1, in that order, so the cut uses the alpha estimated *before* this
//!   CNP), and the byte counter, the rate timer and both stage counts restart.
//! - Every `alpha_timer` without a CNP: `alpha <- (1-g) alpha` (eq. 2).
//! - Every `rate_timer` (timer event) and every `byte_counter` bytes sent
//!   (byte-counter event) is one increase event; with `T`, `BC` the numbers of
//!   timer and byte-counter events already completed since the last cut:
//!   - fast recovery while `max(T, BC) < F`: `Rc <- (Rt + Rc)/2` (eq. 3);
//!   - hyper increase once `min(T, BC) >= F`: `Rt <- Rt + i R_HAI`,
//!     `Rc <- (Rt + Rc)/2`, with `i = min(T, BC) - F + 1` (1 for the first
//!     round in which both counters are past F, 2 for the next, ...);
//!   - additive increase otherwise (one counter past F): `Rt <- Rt + R_AI`,
//!     `Rc <- (Rt + Rc)/2` (eq. 4).
//!
//!   "Completed since the last cut" means an event is classified by the phase
//!   the RP was in while that cycle ran, so exactly F timer events after a cut
//!   are fast recovery ("for F = 5 successive iterations", sec. 3.1).
//!
//! Timers are not events in the engine's queue: [`DcqcnRp::advance`] replays
//! every alpha and rate timer expiry up to `now`, and `on_cnp` / `on_sent`
//! call it first, so timer events that fell before a byte-counter event or a
//! CNP are applied before it, exactly as if each expiry had been scheduled.
//! The state after any sequence of calls therefore depends only on the times
//! of the CNPs and sends, not on how often the engine called `advance` (a test
//! checks this bit for bit). Alpha decay and rate increase never read each
//! other's state, so the two timers are replayed one after the other.
//!
//! Differences from the ns-3 DCQCN used by the HPCC authors
//! (`alibaba-edu/High-Precision-Congestion-Control`,
//! `simulation/src/point-to-point/model/rdma-hw.cc`, "Mellanox's version"):
//! - No byte counter there: `RateIncEventTimerMlx` is the only increase
//!   source, so hyper increase is reached by the timer alone (`RateIncEventMlx`:
//!   stage `< F` fast recovery, `== F` active increase, `> F` hyper increase).
//!   Here, as in the paper and QCN, timer events alone never pass additive
//!   increase; hyper increase needs both counters past F.
//! - `HyperIncreaseMlx` adds a constant `R_HAI`; here the default adds
//!   `i R_HAI` (QCN, and the paper authors' own ns-3 code,
//!   `bobzhuyb/ns3-rdma` `rpr_hyper_increase`), selectable with
//!   [`DcqcnParams::hyper_increase_scaled`].
//! - Rate cuts there happen at most once per `RateDecreaseInterval` (4 us,
//!   `CheckRateDecreaseMlx` polls a "CNP arrived" bit) and use the alpha kept by
//!   a free-running `UpdateAlphaMlx` timer that adds `g` once per period in
//!   which any CNP arrived. Here every CNP cuts and updates alpha at once
//!   (eq. 1), and the alpha timer restarts at each CNP ("no feedback for K",
//!   sec. 3.1); the NP's CNP interval is what limits the cut frequency.
//! - There the first CNP only sets alpha to 1 and schedules the first cut
//!   4 us later (`RateOnFirstCnp` = 1); here alpha is 1 from the start and the
//!   first CNP cuts at once. In both, the timers start at the first CNP.
//! - `ClampTargetRate` defaults to false there: `Rt <- Rc` only if a timer
//!   increase happened since the last cut. Here the paper's unconditional
//!   clamp is the default; `clamp_target_on_cnp = false` gives the
//!   conditional one, counting timer and byte-counter events alike.
//! - Differences from `bobzhuyb/ns3-rdma` (the paper authors' code): it
//!   classifies with the stage counts *after* incrementing them (so F - 1
//!   fast-recovery events), updates alpha before cutting, halves the timer and
//!   byte counter in hyper increase, and divides `Rt` by 8 when `Rt > 10 Rc`
//!   on the first increase (the last two are QCN details); none of these
//!   are modelled.

use super::{NewCc, RateControl, RateSetup};
use crate::sim::SimTime;

/// DCQCN as a flow's rate control at its sender NIC: the reaction point under the RoCE
/// sender's pacer, fed the CNPs its receiver's notification point sends.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    /// This flow's constants (its line rate and increase steps resolved).
    pub p: DcqcnParams,
    pub rp: DcqcnRp,
}

/// DCQCN's parameters as a scenario gives them: the constants with a line rate still to
/// set per flow, and R_AI / R_HAI as fractions of each flow's line rate where given,
/// replacing `rp.rate_ai_bps` and `rp.rate_hai_bps` (seed 004 writes "AI: 0.0125" and
/// "Hyper AI: 0.025" without a unit, and one reading is a fraction of the NIC's rate).
#[derive(Clone, Debug, PartialEq)]
pub struct DcqcnSettings {
    pub rp: DcqcnParams,
    pub increase_of_line: (Option<f64>, Option<f64>),
}

impl Default for DcqcnSettings {
    fn default() -> Self {
        DcqcnSettings { rp: DcqcnParams::paper(0), increase_of_line: (None, None) }
    }
}

impl NewCc<RateSetup> for Dcqcn {
    type Params = DcqcnSettings;
    fn build(s: &DcqcnSettings, setup: &RateSetup) -> Dcqcn {
        let line = setup.line_rate_bps;
        let mut p = s.rp.clone();
        p.line_rate_bps = line;
        let of_line = |f: f64| (f * line as f64).round() as u64;
        if let Some(f) = s.increase_of_line.0 {
            p.rate_ai_bps = of_line(f);
        }
        if let Some(f) = s.increase_of_line.1 {
            p.rate_hai_bps = of_line(f);
        }
        Dcqcn { rp: DcqcnRp::new(&p, setup.now), p }
    }
}

impl RateControl for Dcqcn {
    #[inline]
    fn rate_bps(&self) -> u64 {
        self.rp.rate_bps()
    }
    #[inline]
    fn advance(&mut self, now: SimTime) {
        self.rp.advance(&self.p, now);
    }
    #[inline]
    fn on_sent(&mut self, bytes: u64, now: SimTime) {
        self.rp.on_sent(&self.p, bytes, now);
    }
    fn on_cnp(&mut self, now: SimTime) {
        self.rp.on_cnp(&self.p, now);
    }
    /// Only the rate timer moves the rate between packets (alpha's decay matters at the
    /// next CNP, which replays it).
    fn next_change(&self) -> SimTime {
        self.rp.next_rate_event(&self.p)
    }
    fn wants_cnp(&self) -> bool {
        true
    }
}

/// DCQCN parameters of one sender NIC (paper sec. 3.1): the paper's values via
/// [`DcqcnParams::paper`], or seed 004's "Congestion control configurations" via
/// [`DcqcnParams::seed004`]. Rates are bits/s, sizes bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct DcqcnParams {
    /// NIC line rate, bits/s: the starting rate and the ceiling of `Rc`, `Rt`.
    pub line_rate_bps: u64,
    /// Floor of `Rc` and `Rt`, bits/s. Not in the paper; 100 Mbps is the
    /// `MinRate` default of the HPCC authors' ns-3 code.
    pub min_rate_bps: u64,
    /// EWMA gain of alpha, dimensionless, in (0, 1]. Paper: 1/256 (the value
    /// in the authors' released ns-3 configuration, `DCTCP_GAIN 0.00390625`).
    /// Seed 004: 0.0009813 (about 1/1019).
    pub g: f64,
    /// F: number of fast-recovery increase events per counter before additive
    /// increase. Paper: 5. Seed 004: 1.
    pub fast_recovery_steps: u32,
    /// B: bytes sent per byte-counter increase event; 0 disables the byte
    /// counter. Paper: 10 MB (taken as 10 MiB). Seed 004: 2097152 (2 MiB).
    pub byte_counter: u64,
    /// T: period of timer increase events, restarted at each CNP; 0 disables
    /// the timer. Paper: 55 us. Seed 004 "Timer": 4 us.
    pub rate_timer: SimTime,
    /// K: period of alpha decay without CNPs, restarted at each CNP; 0
    /// disables decay. Paper: 55 us. Seed 004 "Alpha timer": 5 us.
    pub alpha_timer: SimTime,
    /// R_AI: additive increase of `Rt`, bits/s. Paper: 40 Mbps. Seed 004 "AI:
    /// 0.0125" has no unit; it is read as a fraction of the line rate,
    /// [`SEED004_RATE_AI_OF_LINE`] (1.25 Gbps at 100 Gbps): read as Gbps
    /// (12.5 Mbps), DCQCN recovers from a cut by about 3 Gbps per ms and leaves
    /// the receiver's link of the seed's fairness runs up to 70% idle after a
    /// flow joins (docs/reproductions.md, seed 004).
    pub rate_ai_bps: u64,
    /// R_HAI: hyper increase step of `Rt`, bits/s. Paper: not stated; 200 Mbps
    /// in the authors' released ns-3 configuration (`RATE_HAI 200Mb/s`).
    /// Seed 004 "Hyper AI: 0.025", a fraction of the line rate as R_AI:
    /// [`SEED004_RATE_HAI_OF_LINE`] (2.5 Gbps at 100 Gbps).
    pub rate_hai_bps: u64,
    /// On a CNP set `Rt <- Rc` unconditionally (paper eq. 1: true), or only if
    /// an increase event happened since the last cut (false, like both ns-3
    /// codes' `ClampTargetRate = false`: back-to-back cuts keep the target).
    pub clamp_target_on_cnp: bool,
    /// Hyper increase adds `i R_HAI` in its i-th round (true: QCN and the
    /// paper authors' code) or a constant `R_HAI` (false: HPCC's ns-3 code).
    pub hyper_increase_scaled: bool,
}

impl DcqcnParams {
    /// Seed 004's constants ("Congestion control configurations", DCQCN) at
    /// this line rate (R_AI and R_HAI are fractions of it).
    /// Its "CNP period 4 us" is the NP interval, [`SEED004_CNP_INTERVAL`];
    /// its "Window 15us" caps inflight bytes, which is the sender's business,
    /// not the rate state machine's.
    pub fn seed004(line_rate_bps: u64) -> Self {
        let of_line = |f: f64| (f * line_rate_bps as f64).round() as u64;
        DcqcnParams {
            line_rate_bps,
            min_rate_bps: DEFAULT_MIN_RATE,
            g: 0.0009813,
            fast_recovery_steps: 1,
            byte_counter: 2_097_152,
            rate_timer: SimTime::from_us(4),
            alpha_timer: SimTime::from_us(5),
            rate_ai_bps: of_line(SEED004_RATE_AI_OF_LINE),
            rate_hai_bps: of_line(SEED004_RATE_HAI_OF_LINE),
            clamp_target_on_cnp: true,
            hyper_increase_scaled: true,
        }
    }

    /// The paper's values (sec. 3.1 and its parameter list), with R_HAI from
    /// the authors' released configuration; the NP interval is
    /// [`PAPER_CNP_INTERVAL`].
    pub fn paper(line_rate_bps: u64) -> Self {
        DcqcnParams {
            line_rate_bps,
            min_rate_bps: DEFAULT_MIN_RATE,
            g: 1.0 / 256.0,
            fast_recovery_steps: 5,
            byte_counter: 10 * 1024 * 1024,
            rate_timer: SimTime::from_us(55),
            alpha_timer: SimTime::from_us(55),
            rate_ai_bps: 40_000_000,
            rate_hai_bps: 200_000_000,
            clamp_target_on_cnp: true,
            hyper_increase_scaled: true,
        }
    }

    /// Checks ranges, naming the offending field, so the scenario layer can
    /// reject bad input before the engine runs.
    pub fn validate(&self) -> Result<(), String> {
        if self.line_rate_bps == 0 {
            return Err("line_rate_bps: must be > 0".into());
        }
        if self.min_rate_bps == 0 || self.min_rate_bps > self.line_rate_bps {
            return Err(format!("min_rate_bps: must be in [1, line rate {}], got {}", self.line_rate_bps, self.min_rate_bps));
        }
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("g: must be in (0, 1], got {}", self.g));
        }
        Ok(())
    }
}

/// The lowest rate a flow is cut to, in both presets (the paper's and seed 004's).
pub const DEFAULT_MIN_RATE: u64 = 100_000_000;

/// Seed 004's "AI: 0.0125" as a fraction of the sender's line rate.
pub const SEED004_RATE_AI_OF_LINE: f64 = 0.0125;
/// Seed 004's "Hyper AI: 0.025" as a fraction of the sender's line rate.
pub const SEED004_RATE_HAI_OF_LINE: f64 = 0.025;
/// CNP interval of seed 004 ("CNP period: 4 us").
pub const SEED004_CNP_INTERVAL: SimTime = SimTime::from_us(4);
/// CNP interval of the paper (sec. 3.2: at most one CNP per 50 us per flow).
pub const PAPER_CNP_INTERVAL: SimTime = SimTime::from_us(50);

/// Which counter produced an increase event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Source {
    Timer,
    Bytes,
}

/// Reaction point (sender NIC) state of one flow (paper sec. 3.1, Fig. 5).
/// Rates are kept as `f64` bits/s because the halving steps are fractional;
/// [`DcqcnRp::rate_bps`] gives the integer rate the engine paces at.
#[derive(Clone, Debug)]
pub struct DcqcnRp {
    /// Current rate `Rc`, bits/s, as of the last call.
    pub rc: f64,
    /// Target rate `Rt`, bits/s.
    pub rt: f64,
    /// Congestion estimate alpha, as of the last call (decays lazily: call
    /// [`DcqcnRp::advance`] before reading it).
    pub alpha: f64,
    /// Line rate captured at creation, so `next_timer` can tell when increase
    /// events stop changing anything.
    line: f64,
    /// Timer events completed since the last cut (`T`).
    t_stage: u32,
    /// Byte-counter events completed since the last cut (`BC`).
    bc_stage: u32,
    /// Bytes sent since the last byte-counter event or cut.
    bytes: u64,
    /// False until the first CNP: DCQCN starts at line rate with no timers
    /// running (both reference ns-3 codes start them at the first CNP), so a
    /// flow that never sees congestion costs nothing.
    active: bool,
    /// Time of the last cut; rate timer expiries are at `cut + k T`.
    rate_epoch: SimTime,
    /// Rate timer expiries already applied since `rate_epoch`.
    rate_done: u64,
    /// Time alpha last rose; decays are at `alpha_epoch + k K`.
    alpha_epoch: SimTime,
    /// Alpha decays already applied since `alpha_epoch`.
    alpha_done: u64,
    /// Latest time seen; earlier `now` arguments are treated as this.
    now: SimTime,
    /// CNPs received.
    pub cnps: u64,
}

impl DcqcnRp {
    /// A flow starts at line rate (no slow start, sec. 3.1) with alpha = 1,
    /// as the paper's fluid model and both reference codes initialise it.
    pub fn new(p: &DcqcnParams, now: SimTime) -> Self {
        let line = p.line_rate_bps as f64;
        DcqcnRp {
            rc: line,
            rt: line,
            alpha: 1.0,
            line,
            t_stage: 0,
            bc_stage: 0,
            bytes: 0,
            active: false,
            rate_epoch: now,
            rate_done: 0,
            alpha_epoch: now,
            alpha_done: 0,
            now,
            cnps: 0,
        }
    }

    /// A CNP arrived (eq. 1): `Rt <- Rc`, `Rc <- Rc (1 - alpha/2)`,
    /// `alpha <- (1-g) alpha + g`; the byte counter, the rate timer, the alpha
    /// timer and both stage counts restart (Fig. 5). Timer expiries up to
    /// `now` are applied first.
    pub fn on_cnp(&mut self, p: &DcqcnParams, now: SimTime) {
        self.advance(p, now);
        let now = self.now;
        self.active = true;
        self.cnps += 1;
        if p.clamp_target_on_cnp || self.t_stage > 0 || self.bc_stage > 0 {
            self.rt = self.rc;
        }
        // The cut uses alpha as estimated before this CNP (eq. 1's order).
        self.rc *= 1.0 - self.alpha / 2.0;
        self.alpha = (1.0 - p.g) * self.alpha + p.g;
        self.clamp(p);
        self.t_stage = 0;
        self.bc_stage = 0;
        self.bytes = 0;
        self.rate_epoch = now;
        self.rate_done = 0;
        self.alpha_epoch = now;
        self.alpha_done = 0;
    }

    /// `bytes` were sent at `now`: timer expiries up to `now` are applied
    /// first, then every `byte_counter` bytes since the last one is one
    /// byte-counter increase event. Bytes sent before the first CNP do not
    /// count (the counter restarts at every CNP anyway).
    pub fn on_sent(&mut self, p: &DcqcnParams, bytes: u64, now: SimTime) {
        self.advance(p, now);
        if !self.active || p.byte_counter == 0 {
            return;
        }
        self.bytes += bytes;
        let n = self.bytes / p.byte_counter;
        self.bytes %= p.byte_counter;
        for k in 0..n {
            if self.at_line() {
                // Further increases cannot move Rc or Rt; only the count grows.
                self.bc_stage = sat_add(self.bc_stage, n - k);
                break;
            }
            self.increase(p, Source::Bytes);
        }
    }

    /// Applies every alpha decay and rate timer expiry in `(last call, now]`,
    /// in time order. Call it before reading the rate; `on_cnp` and `on_sent`
    /// call it themselves. An expiry at exactly `now` is applied.
    pub fn advance(&mut self, p: &DcqcnParams, now: SimTime) {
        if now > self.now {
            self.now = now;
        }
        if !self.active {
            return;
        }
        let now = self.now;
        // Alpha decay (eq. 2): replayed one period at a time so the value is
        // bit-identical however the calls are spaced.
        if let Some(due) = (now - self.alpha_epoch).0.checked_div(p.alpha_timer.0) {
            while self.alpha_done < due {
                if self.alpha == 0.0 {
                    self.alpha_done = due;
                    break;
                }
                self.alpha *= 1.0 - p.g;
                self.alpha_done += 1;
                // Below this, alpha changes neither a cut (1 - alpha/2 == 1)
                // nor the next update ((1-g) alpha + g == g) in f64, so zero
                // is exact and ends the replay (repeated multiplication would
                // otherwise stick at the smallest subnormal forever).
                if self.alpha < p.g * f64::EPSILON / 4.0 {
                    self.alpha = 0.0;
                }
            }
        }
        // Rate timer: one increase event per expiry.
        if let Some(due) = (now - self.rate_epoch).0.checked_div(p.rate_timer.0) {
            while self.rate_done < due {
                if self.at_line() {
                    self.t_stage = sat_add(self.t_stage, due - self.rate_done);
                    self.rate_done = due;
                    break;
                }
                self.increase(p, Source::Timer);
                self.rate_done += 1;
            }
        }
    }

    /// When the next alpha or rate timer expiry that changes `rc`, `rt` or
    /// `alpha` falls, or `SimTime::MAX` if none will (before the first CNP, or
    /// once the rate is back at line rate and alpha has decayed to zero).
    /// Alpha only matters at the next CNP, which replays it, so an idle flow
    /// only needs a wake-up at [`DcqcnRp::next_rate_event`].
    pub fn next_timer(&self, p: &DcqcnParams) -> SimTime {
        let alpha_next = if self.active && self.alpha > 0.0 && p.alpha_timer.0 > 0 { at(self.alpha_epoch, self.alpha_done + 1, p.alpha_timer) } else { SimTime::MAX };
        alpha_next.min(self.next_rate_event(p))
    }

    /// When the next rate timer expiry that can change the rate falls, or
    /// `SimTime::MAX` if none can (before the first CNP or at line rate).
    pub fn next_rate_event(&self, p: &DcqcnParams) -> SimTime {
        if self.active && !self.at_line() && p.rate_timer.0 > 0 {
            at(self.rate_epoch, self.rate_done + 1, p.rate_timer)
        } else {
            SimTime::MAX
        }
    }

    /// Current rate, bits/s, rounded to the nearest integer.
    pub fn rate_bps(&self) -> u64 {
        self.rc.round() as u64
    }

    /// Timer increase events since the last cut (`T`).
    pub fn timer_stage(&self) -> u32 {
        self.t_stage
    }

    /// Byte-counter increase events since the last cut (`BC`).
    pub fn byte_stage(&self) -> u32 {
        self.bc_stage
    }

    fn at_line(&self) -> bool {
        self.rc >= self.line && self.rt >= self.line
    }

    /// One increase event, classified by the counts completed before it.
    fn increase(&mut self, p: &DcqcnParams, src: Source) {
        let f = p.fast_recovery_steps;
        let (t, bc) = (self.t_stage, self.bc_stage);
        if t.max(bc) < f {
            // Fast recovery: Rt stays, Rc halves its distance to it (eq. 3).
        } else if t.min(bc) >= f {
            let step = if p.hyper_increase_scaled { (t.min(bc) - f + 1) as f64 * p.rate_hai_bps as f64 } else { p.rate_hai_bps as f64 };
            self.rt += step;
        } else {
            self.rt += p.rate_ai_bps as f64;
        }
        // Rt is clamped before averaging, as in ns-3's ActiveIncreaseMlx, so
        // Rc never overshoots the line rate.
        self.rt = self.rt.clamp(p.min_rate_bps as f64, self.line);
        self.rc = (self.rt + self.rc) / 2.0;
        // Within a few ulps of the target, land on it: halving alone can stall
        // one ulp short under round-to-even, and then the RP would never be
        // seen as recovered and the engine would keep waking it.
        if (self.rt - self.rc).abs() <= self.rt * 4.0 * f64::EPSILON {
            self.rc = self.rt;
        }
        self.clamp(p);
        match src {
            Source::Timer => self.t_stage = self.t_stage.saturating_add(1),
            Source::Bytes => self.bc_stage = self.bc_stage.saturating_add(1),
        }
    }

    fn clamp(&mut self, p: &DcqcnParams) {
        let lo = p.min_rate_bps as f64;
        self.rc = self.rc.clamp(lo, self.line);
        self.rt = self.rt.clamp(lo, self.line);
    }
}

fn sat_add(a: u32, b: u64) -> u32 {
    (a as u64).saturating_add(b).min(u32::MAX as u64) as u32
}

/// `epoch + n * period`, saturating at `SimTime::MAX`.
fn at(epoch: SimTime, n: u64, period: SimTime) -> SimTime {
    SimTime(n.checked_mul(period.0).and_then(|d| epoch.0.checked_add(d)).unwrap_or(u64::MAX))
}

/// Notification point (receiver NIC) of one flow (paper sec. 3.2): when an
/// ECN-marked packet arrives and no CNP has been sent for the flow in the last
/// `interval`, send one now (50 us in the paper, 4 us in seed 004). The HPCC
/// authors' ns-3 code instead sets a CNP flag on every ACK of a marked packet
/// and rate-limits the cuts at the sender.
#[derive(Clone, Debug, Default)]
pub struct DcqcnNp {
    last_cnp: Option<SimTime>,
}

impl DcqcnNp {
    /// A marked packet of this flow arrived at `now`: send a CNP now?
    pub fn on_marked(&mut self, interval: SimTime, now: SimTime) -> bool {
        match self.last_cnp {
            Some(t) if now.saturating_sub(t) < interval => false,
            _ => {
                self.last_cnp = Some(now);
                true
            }
        }
    }

    /// When the last CNP was sent.
    pub fn last_cnp(&self) -> Option<SimTime> {
        self.last_cnp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: u64 = 100_000_000_000;

    fn us(x: u64) -> SimTime {
        SimTime::from_us(x)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Parameters with round numbers for hand simulation: no alpha decay
    /// within a test, F = 2, steps of 0.5 and 1 Gbps.
    fn hand() -> DcqcnParams {
        DcqcnParams {
            line_rate_bps: G100,
            min_rate_bps: 100_000_000,
            g: 1.0 / 16.0,
            fast_recovery_steps: 2,
            byte_counter: 10_000,
            rate_timer: us(10),
            alpha_timer: SimTime::from_ms(1000),
            rate_ai_bps: 500_000_000,
            rate_hai_bps: 1_000_000_000,
            clamp_target_on_cnp: true,
            hyper_increase_scaled: true,
        }
    }

    #[test]
    fn cut_uses_alpha_before_update() {
        let p = DcqcnParams::seed004(G100);
        let mut rp = DcqcnRp::new(&p, SimTime::ZERO);
        assert_eq!(rp.rate_bps(), G100);
        assert_eq!(rp.next_timer(&p), SimTime::MAX, "no timers before the first CNP");
        rp.on_cnp(&p, us(1));
        // alpha = 1 initially: R (1 - 1/2); the update keeps alpha at 1.
        assert!(close(rp.rc, G100 as f64 / 2.0));
        assert!(close(rp.rt, G100 as f64));
        assert!(close(rp.alpha, 1.0));
        // Right after: the updated alpha (still 1) halves again; Rt <- Rc.
        rp.on_cnp(&p, SimTime(us(1).0 + 1));
        assert!(close(rp.rc, G100 as f64 / 4.0));
        assert!(close(rp.rt, G100 as f64 / 2.0));
        // With alpha below 1, the cut factor is 1 - alpha/2 of the old alpha.
        rp.alpha = 0.5;
        let rc0 = rp.rc;
        rp.on_cnp(&p, SimTime(us(1).0 + 2));
        assert!(close(rp.rc, rc0 * 0.75));
        assert!(close(rp.alpha, (1.0 - p.g) * 0.5 + p.g));
        // A decayed alpha: k alpha periods after that CNP, the cut uses
        // a0 (1-g)^k. Rate timer events (every 4 us) also fired meanwhile, so
        // compare against the rate just before the CNP.
        let a0 = rp.alpha;
        let rc1 = rp.rc;
        let k = 3u64;
        let t = SimTime(us(1).0 + 2 + k * p.alpha_timer.0);
        rp.advance(&p, t);
        let rc_before = rp.rc;
        assert!(rc_before > rc1, "timer increases happened before the CNP");
        rp.on_cnp(&p, t);
        let a_dec = a0 * (1.0 - p.g).powi(k as i32);
        assert!(close(rp.rc, rc_before * (1.0 - a_dec / 2.0)), "{} vs {}", rp.rc, rc_before);
        assert!(close(rp.alpha, (1.0 - p.g) * a_dec + p.g));
    }

    #[test]
    fn alpha_decays_per_period_without_cnp() {
        let p = DcqcnParams::seed004(G100);
        let mut rp = DcqcnRp::new(&p, SimTime::ZERO);
        rp.on_cnp(&p, SimTime::ZERO);
        let a0 = rp.alpha;
        for k in [0u64, 1, 7, 1000] {
            let mut r = rp.clone();
            // Just before the (k+1)-th expiry: exactly k decays.
            r.advance(&p, SimTime((k + 1) * p.alpha_timer.0 - 1));
            let want = a0 * (1.0 - p.g).powi(k as i32);
            assert!((r.alpha - want).abs() <= 1e-12 * want, "k={k}: {} vs {want}", r.alpha);
        }
        // Decay stops at exactly zero and then no alpha wake-ups remain.
        let mut r = rp.clone();
        r.advance(&p, SimTime::from_ms(1000));
        assert_eq!(r.alpha, 0.0);
        assert_eq!(r.rate_bps(), G100);
        assert_eq!(r.next_timer(&p), SimTime::MAX);
        // The cut at zero alpha leaves the rate unchanged; alpha becomes g.
        r.on_cnp(&p, SimTime::from_ms(1000));
        assert_eq!(r.rate_bps(), G100);
        assert_eq!(r.alpha, p.g);
    }

    #[test]
    fn fast_recovery_then_additive_then_hyper() {
        let p = DcqcnParams::paper(G100);
        let f = p.fast_recovery_steps;
        let t = p.rate_timer.0;
        let mut rp = DcqcnRp::new(&p, SimTime::ZERO);
        rp.on_cnp(&p, SimTime::ZERO);
        rp.on_cnp(&p, SimTime::ZERO); // Rt = 50 G, Rc = 25 G, below line rate
        let (rt, rc0) = (rp.rt, rp.rc);
        assert!(close(rt, 50e9) && close(rc0, 25e9));
        // F timer events, no bytes: Rc = Rt - (Rt - Rc0) / 2^F, Rt unchanged.
        rp.advance(&p, SimTime(f as u64 * t));
        assert!(close(rp.rt, rt));
        assert!(close(rp.rc, rt - (rt - rc0) / 2f64.powi(f as i32)), "{}", rp.rc);
        // Then additive increase: Rt + R_AI per timer event.
        let mut rc = rp.rc;
        for j in 1..=4u64 {
            rp.advance(&p, SimTime((f as u64 + j) * t));
            let want_rt = rt + j as f64 * p.rate_ai_bps as f64;
            assert!(close(rp.rt, want_rt), "j={j}");
            rc = (want_rt + rc) / 2.0;
            assert!(close(rp.rc, rc));
        }
        // Bytes flowing: F byte events are additive (the timer is past F) ...
        let now = SimTime((f as u64 + 4) * t + 1);
        let rt1 = rp.rt;
        rp.on_sent(&p, f as u64 * p.byte_counter, now);
        assert_eq!(rp.byte_stage(), f);
        assert!(close(rp.rt, rt1 + f as f64 * p.rate_ai_bps as f64));
        // ... and now both counters are past F: hyper increase, i = 1, 1, 2.
        let rt2 = rp.rt;
        rp.advance(&p, SimTime((f as u64 + 5) * t)); // T = F+4, BC = F: i = 1
        assert!(close(rp.rt, rt2 + p.rate_hai_bps as f64));
        rp.on_sent(&p, p.byte_counter, SimTime((f as u64 + 5) * t + 1)); // BC = F: i = 1
        assert!(close(rp.rt, rt2 + 2.0 * p.rate_hai_bps as f64));
        rp.advance(&p, SimTime((f as u64 + 6) * t)); // min(F+5, F+1) = F+1: i = 2
        assert!(close(rp.rt, rt2 + 4.0 * p.rate_hai_bps as f64));
        // Constant R_HAI (HPCC's ns-3) against i R_HAI: 2F byte events first
        // (F fast recovery, F additive), then timer events: T = 0..F-1
        // additive, T = F hyper with i = 1, T = F+1 hyper with i = 2.
        for scaled in [true, false] {
            let pc = DcqcnParams { hyper_increase_scaled: scaled, ..p.clone() };
            let mut a = DcqcnRp::new(&pc, SimTime::ZERO);
            a.on_cnp(&pc, SimTime::ZERO);
            a.on_cnp(&pc, SimTime::ZERO);
            a.on_sent(&pc, 2 * f as u64 * pc.byte_counter, SimTime(1));
            a.advance(&pc, SimTime(f as u64 * t));
            let rt0 = a.rt;
            assert!(close(rt0, 50e9 + 2.0 * f as f64 * pc.rate_ai_bps as f64));
            a.advance(&pc, SimTime((f as u64 + 1) * t));
            assert!(close(a.rt, rt0 + pc.rate_hai_bps as f64));
            a.advance(&pc, SimTime((f as u64 + 2) * t));
            let i2 = if scaled { 2.0 } else { 1.0 };
            assert!(close(a.rt, rt0 + (1.0 + i2) * pc.rate_hai_bps as f64), "scaled={scaled}");
        }
    }

    #[test]
    fn hand_simulated_sequence() {
        let p = hand();
        let mut rp = DcqcnRp::new(&p, SimTime::ZERO);
        enum Ev {
            Cnp,
            Sent(u64),
            Adv,
        }
        // (time us, event, expected Rt Gbps, expected Rc Gbps); comments give
        // the completed (T, BC) counts each increase event is classified by.
        let seq: [(u64, Ev, f64, f64); 12] = [
            (1, Ev::Cnp, 100.0, 50.0),                    // cut with alpha = 1
            (11, Ev::Adv, 100.0, 75.0),                   // T=0 BC=0: fast recovery
            (12, Ev::Sent(10_000), 100.0, 87.5),          // T=1 BC=0: fast recovery
            (21, Ev::Adv, 100.0, 93.75),                  // T=1 BC=1: fast recovery
            (25, Ev::Cnp, 93.75, 46.875),                 // cut, counters reset
            (35, Ev::Adv, 93.75, 70.3125),                // T=0: fast recovery
            (45, Ev::Adv, 93.75, 82.03125),               // T=1: fast recovery
            (55, Ev::Adv, 94.25, 88.140625),              // T=2 BC=0: additive
            (56, Ev::Sent(20_000), 95.25, 93.34765625),   // (3,0), (3,1): additive x2
            (65, Ev::Adv, 96.25, 94.798828125),           // (3,2): hyper, i = 1
            (66, Ev::Sent(10_000), 97.25, 96.0244140625), // (4,2): hyper, i = 1
            (75, Ev::Adv, 99.25, 97.63720703125),         // (4,3): hyper, i = 2
        ];
        for (i, (t, ev, rt, rc)) in seq.iter().enumerate() {
            let now = us(*t);
            match ev {
                Ev::Cnp => rp.on_cnp(&p, now),
                Ev::Sent(b) => rp.on_sent(&p, *b, now),
                Ev::Adv => rp.advance(&p, now),
            }
            assert!(close(rp.rt, rt * 1e9), "step {i}: rt {} want {}", rp.rt, rt * 1e9);
            assert!(close(rp.rc, rc * 1e9), "step {i}: rc {} want {}", rp.rc, rc * 1e9);
        }
        // (5,3): hyper i = 2 would take Rt to 101.25 G: clamped to line rate.
        rp.on_sent(&p, 10_000, us(76));
        assert!(close(rp.rt, 100e9));
        assert!(close(rp.rc, (100.0 + 97.63720703125) / 2.0 * 1e9));
    }

    #[test]
    fn clamp_target_only_after_an_increase_when_disabled() {
        let p = DcqcnParams { clamp_target_on_cnp: false, ..hand() };
        let mut rp = DcqcnRp::new(&p, SimTime::ZERO);
        rp.on_cnp(&p, us(1));
        rp.on_cnp(&p, us(2)); // no increase in between: Rt stays at line rate
        assert!(close(rp.rt, 100e9) && close(rp.rc, 25e9));
        rp.advance(&p, us(12)); // one fast-recovery event
        assert!(close(rp.rc, 62.5e9));
        rp.on_cnp(&p, us(13)); // now Rt <- Rc
        assert!(close(rp.rt, 62.5e9) && close(rp.rc, 31.25e9));
    }

    #[test]
    fn rates_stay_in_bounds_and_recover_to_line_rate() {
        let p = DcqcnParams::seed004(G100);
        let mut rp = DcqcnRp::new(&p, SimTime::ZERO);
        for i in 0..100 {
            rp.on_cnp(&p, SimTime(i));
            assert!(rp.rc >= p.min_rate_bps as f64 && rp.rt >= p.min_rate_bps as f64);
        }
        assert_eq!(rp.rate_bps(), p.min_rate_bps);
        assert!(rp.next_rate_event(&p) < SimTime::MAX);
        // Recovery with bytes flowing at the current rate, 1 KB packets.
        let mut now = SimTime(100);
        let mut prev = rp.rc;
        while rp.rc < G100 as f64 && now < SimTime::from_ms(100) {
            rp.on_sent(&p, 1000, now);
            assert!(rp.rc >= prev && rp.rc <= G100 as f64 && rp.rt <= G100 as f64);
            assert!(rp.rc <= rp.rt);
            prev = rp.rc;
            now += crate::sim::ser_time(1000, rp.rate_bps());
        }
        assert_eq!(rp.rate_bps(), G100, "recovered by {now}");
        assert_eq!(rp.rc, G100 as f64);
        assert_eq!(rp.next_rate_event(&p), SimTime::MAX);
        // Timer alone (no bytes) also recovers, by additive increase.
        let mut q = DcqcnRp::new(&p, SimTime::ZERO);
        q.on_cnp(&p, SimTime::ZERO);
        q.on_cnp(&p, SimTime::ZERO);
        let per_event = p.rate_ai_bps as f64;
        let events = ((G100 as f64 - q.rt) / per_event).ceil() as u64 + 200;
        q.advance(&p, SimTime(events * p.rate_timer.0));
        assert_eq!(q.rc, G100 as f64);
    }

    #[test]
    fn advance_spacing_does_not_change_the_result() {
        // Same CNPs and sends; one RP is advanced every 100 ns, the other only
        // when something happens. States must agree bit for bit.
        let p = DcqcnParams::seed004(G100);
        let mut a = DcqcnRp::new(&p, SimTime::ZERO);
        let mut b = a.clone();
        let mut x: u64 = 12345;
        let mut t = SimTime::ZERO;
        for _ in 0..3000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let dt = SimTime::from_ns(50 + (x >> 33) % 3000);
            let end = t + dt;
            while t + SimTime::from_ns(100) < end {
                t += SimTime::from_ns(100);
                a.advance(&p, t);
            }
            t = end;
            if (x >> 20) % 50 == 7 {
                a.on_cnp(&p, t);
                b.on_cnp(&p, t);
            } else {
                let n = 1000 + (x >> 40) % 600_000;
                a.on_sent(&p, n, t);
                b.on_sent(&p, n, t);
            }
            assert_eq!(a.rc.to_bits(), b.rc.to_bits());
            assert_eq!(a.rt.to_bits(), b.rt.to_bits());
            assert_eq!(a.alpha.to_bits(), b.alpha.to_bits());
            assert_eq!(a.next_timer(&p), b.next_timer(&p));
        }
        assert!(a.cnps > 10);
    }

    #[test]
    fn periodic_cnps_converge_to_the_fluid_fixed_point() {
        // CNPs every P = 18 us, no bytes. Per period: m_a = 3 alpha decays
        // (K = 5 us), n = 4 timer events (T = 4 us): F = 2 fast recovery then
        // m = 2 additive. With a the (decayed) alpha used at a cut:
        //   alpha* = g / (1 - (1-g) d), d = (1-g)^m_a, a* = d alpha*;
        // after the cut Rt - Rc = x a/2, after F halvings x a / 2^(F+1), and
        // each additive step maps e -> (e + A)/2 while Rt grows by A, so the
        // rate just before a CNP is fixed when
        //   x* = A (1 + (m-1) 2^m) 2^(F+1) / a*.
        let p = DcqcnParams { g: 1.0 / 16.0, fast_recovery_steps: 2, rate_timer: us(4), alpha_timer: us(5), rate_ai_bps: 100_000_000, ..DcqcnParams::seed004(G100) };
        let period = us(18);
        let (f, m, ma) = (2i32, 2i32, 3i32);
        let d = (1.0 - p.g).powi(ma);
        let alpha_star = p.g / (1.0 - (1.0 - p.g) * d);
        let a_star = d * alpha_star;
        let aa = p.rate_ai_bps as f64;
        let x_star = aa * (1.0 + (m - 1) as f64 * 2f64.powi(m)) * 2f64.powi(f + 1) / a_star;
        assert!(x_star > 1e9 && x_star < 1e11, "{x_star}");
        let mut rp = DcqcnRp::new(&p, SimTime::ZERO);
        let mut x = 0.0;
        for k in 1..=6000u64 {
            let now = SimTime(k * period.0);
            rp.advance(&p, now);
            x = rp.rc;
            rp.on_cnp(&p, now);
        }
        assert!((x - x_star).abs() / x_star < 1e-6, "{x} vs {x_star}");
        assert!((rp.alpha - alpha_star).abs() < 1e-12);
    }

    #[test]
    fn np_sends_at_most_one_cnp_per_interval() {
        let mut np = DcqcnNp::default();
        let iv = PAPER_CNP_INTERVAL;
        assert!(np.on_marked(iv, us(10)));
        assert!(!np.on_marked(iv, us(10)));
        assert!(!np.on_marked(iv, us(59)));
        assert!(!np.on_marked(iv, SimTime(us(60).0 - 1)));
        assert!(np.on_marked(iv, us(60)));
        assert_eq!(np.last_cnp(), Some(us(60)));
        // Marks every 1 us for 1 ms: 20 CNPs at 50 us spacing.
        let mut np = DcqcnNp::default();
        let sent = (0..1000).filter(|&i| np.on_marked(iv, us(i))).count();
        assert_eq!(sent, 20);
    }

    #[test]
    fn params_validate() {
        assert!(DcqcnParams::seed004(G100).validate().is_ok());
        assert!(DcqcnParams::paper(G100).validate().is_ok());
        let bad = DcqcnParams { min_rate_bps: 2 * G100, ..DcqcnParams::seed004(G100) };
        assert!(bad.validate().unwrap_err().starts_with("min_rate_bps"));
        let bad = DcqcnParams { g: 0.0, ..DcqcnParams::seed004(G100) };
        assert!(bad.validate().unwrap_err().starts_with("g:"));
    }
}
