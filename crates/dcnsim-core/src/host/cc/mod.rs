//! The two congestion-control interfaces a flow's transport runs, and the macros that turn
//! the ordered lists in `host/mod.rs` into their static dispatch:
//! - [`CongestionControl`]: a window-based algorithm under the TCP sender (`host/tcp.rs`),
//!   named after Linux's `tcp_congestion_ops`; `window_ccs!` makes [`Cc`].
//! - [`RateControl`]: a rate-based algorithm under the RoCE sender (`host/roce.rs`), as an
//!   RDMA NIC's per-queue-pair rate limiter runs it (DCQCN's reaction point); `rate_ccs!`
//!   makes `RateCc`.
//!
//! An algorithm is one file: its state, its `Params` (built by `NewCc::build`), the hooks
//! it overrides. Adding one is that file and one entry in a list (docs/architecture.md,
//! "How to add a congestion control"); the scenario names it in `transport.cc`.

pub mod bbr;
pub mod cubic;
pub mod dcqcn;
pub mod dctcp;
pub mod delivery_rate;
pub mod hpcc;
pub mod nscc;
pub mod reno;
#[cfg(test)]
pub mod stand_in;
pub mod swift;
pub mod timely;

use delivery_rate::{DeliveryRate, RateSample};
use crate::net::{Ecn, HopTelemetry};
use crate::sim::SimTime;
use std::fmt::Debug;

/// What a new cumulative ACK tells the congestion controller.
#[derive(Copy, Clone, Debug)]
pub struct AckEvent<'a> {
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// ECN-Echo: the acknowledged packet was CE-marked.
    pub ece: bool,
    /// The new snd_una.
    pub ack: u64,
    pub snd_nxt: u64,
    pub now: SimTime,
    /// RTT sample of this ACK (from the echoed timestamp).
    pub rtt: SimTime,
    /// The per-hop telemetry the acknowledged packet collected on its way and the ACK echoes
    /// (in-band network telemetry, HPCC sec. 3.2), first hop first; empty when no switch
    /// on the path writes any.
    pub int: &'a [HopTelemetry],
    /// Switch hops of the data's path (Swift's hop count, from the IP TTL the receiver
    /// echoes; 0 when not known).
    pub hops: u8,
}

/// What an ACK echoes of the path its data packet took.
#[derive(Copy, Clone, Debug, Default)]
pub struct PathEcho<'a> {
    /// The per-hop telemetry (see `AckEvent::int`).
    pub int: &'a [HopTelemetry],
    /// Switch hops from the data's sender to its receiver.
    pub hops: u8,
    /// The selective acknowledgement blocks the reply carries (RFC 2018), the most recent
    /// first; empty where the receiver sends none.
    pub sack: &'a [(u64, u64)],
    /// UE's SACK bitmap the reply carries instead (`net::Sack::bitmap`: base PSN, bits).
    pub bitmap: Option<(u64, u64)>,
}

/// The sender's window state that every algorithm manipulates (bytes).
#[derive(Clone, Debug)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
    pub mss: f64,
}

impl Window {
    /// Smallest window any algorithm may set: two segments, as Linux does.
    pub fn min_cwnd(&self) -> f64 {
        2.0 * self.mss
    }
    /// Slow start below ssthresh (RFC 5681 3.1, byte counting), else additive
    /// increase of one MSS per window.
    pub fn grow(&mut self, acked: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += (acked as f64).min(2.0 * self.mss);
        } else {
            self.cwnd += self.mss * acked as f64 / self.cwnd;
        }
    }
}

/// The sender's loss-recovery state, as Linux orders its `tcp_ca_state` (Disorder and CWR
/// fold into Open: an algorithm that owns the window reads no ECN and no duplicate-ACK count).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    /// Fast recovery after three duplicate ACKs (RFC 6582).
    Recovery,
    /// After a retransmission timeout, until everything sent before it is acknowledged.
    Loss,
}

/// What an algorithm that owns the window (`CongestionControl::CONG_CONTROL`) is told on
/// every ACK, duplicate ACKs included (Linux's `cong_control` arguments).
#[derive(Copy, Clone, Debug)]
pub struct Control {
    /// The ACK's delivery-rate sample (host/cc/delivery_rate.rs).
    pub rs: RateSample,
    /// The recovery state after the sender acted on the ACK.
    pub state: CaState,
    /// Bytes in the network after the ACK (Linux's `tcp_packets_in_flight`).
    pub pipe: u64,
    /// Bytes delivered since the connection began.
    pub delivered: u64,
    pub now: SimTime,
}

/// How an algorithm of a list is made for a new flow: its parameters (one field of the
/// list's params struct, from the scenario) and what the transport knows (`S`: the TCP
/// parameters for a window algorithm, [`RateSetup`] for a rate algorithm).
pub trait NewCc<S>: Sized {
    /// The algorithm's constants, shared by every flow that runs it.
    type Params: Clone + Debug + Default;
    fn build(p: &Self::Params, setup: &S) -> Self;
}

/// Hooks every window-based algorithm provides, named after Linux's
/// `tcp_congestion_ops` (include/net/tcp.h): the sender (`host/tcp.rs`) runs the state
/// machine of `tcp_ack` (Open, CWR, Recovery) and asks the algorithm for what differs
/// between algorithms: what an ACK tells it, the window after a congestion signal, growth
/// while no reduction is under way, and (for a paced algorithm) the pacing rate.
pub trait CongestionControl {
    /// Every ACK of new data, in any state, before the sender acts on it (Linux's
    /// `in_ack_event` / `pkts_acked`): DCTCP counts marked bytes here, Cubic its RTT.
    fn on_ack_event(&mut self, _w: &Window, _a: &AckEvent) {}
    /// The slow-start threshold after an ECN-Echo (Linux's `ssthresh` op, called by
    /// `tcp_enter_cwr`), in bytes; the sender then reduces cwnd to it over one round trip.
    fn ssthresh(&mut self, w: &Window) -> f64;
    /// Window growth on an ACK of new data while no reduction is under way (Linux's
    /// `cong_avoid`; slow start included).
    fn cong_avoid(&mut self, w: &mut Window, a: &AckEvent);
    /// Three duplicate ACKs at `now`: loss inferred (RFC 5681 3.2). Default: halve.
    fn on_fast_retransmit(&mut self, w: &mut Window, inflight: u64, _now: SimTime) {
        w.ssthresh = (inflight as f64 / 2.0).max(w.min_cwnd());
        w.cwnd = w.ssthresh + 3.0 * w.mss;
    }
    /// Retransmission timeout at `now` (RFC 5681 3.1 eq. 4): window of one segment.
    fn on_timeout(&mut self, w: &mut Window, inflight: u64, _now: SimTime) {
        w.ssthresh = (inflight as f64 / 2.0).max(w.min_cwnd());
        w.cwnd = w.mss;
    }
    /// The ECN codepoint of data packets: not ECT, ECT(0) (classic ECN, RFC 3168) or ECT(1)
    /// (a scalable sender, RFC 9331).
    fn ect(&self) -> Ecn;
    /// Whether it ever paces (`pacing_rate` may return a rate): false compiles the pacing
    /// checks out of the sender for algorithms that never do.
    const PACES: bool = false;
    /// The rate the sender paces its segments at, bits/s, given the window and the smoothed
    /// RTT (Linux's `sk_pacing_rate`, which BBR sets and fq enforces); None: unpaced, sent
    /// as the window and the ACK clock allow. Only asked of an algorithm that `PACES`.
    fn pacing_rate(&self, _w: &Window, _srtt: Option<SimTime>) -> Option<u64> {
        None
    }
    /// Whether this flow's algorithm paces (a list's dispatch `PACES` when any of its
    /// algorithms does; this says which flow's does), asked before its pacing rate, whose
    /// smoothed RTT argument costs a float conversion on every segment and ACK.
    fn paces(&self) -> bool {
        Self::PACES
    }
    /// The connection carries a new message with sequence numbers starting again (the
    /// algorithm keeps what it learned; per-window bookkeeping restarts).
    fn restart(&mut self) {}
    /// Its receiver has granted credit up to byte `granted` (`host::credit`), `snd_una` of
    /// which are acknowledged: a receiver-driven algorithm opens the window to what is
    /// granted; the others ignore it.
    fn on_credit(&mut self, _w: &mut Window, _granted: u64, _snd_una: u64) {}
    /// Whether it owns the window in every state (Linux's `cong_control` op, which BBR
    /// provides): the sender then keeps delivery-rate samples, does none of its own window
    /// arithmetic (no CWR, no NewReno inflation or deflation: only the retransmissions) and
    /// calls `cong_control` on every ACK; `on_fast_retransmit` and `on_timeout` still mark
    /// those events.
    const CONG_CONTROL: bool = false;
    /// Whether this flow's algorithm owns the window (a list's dispatch is `CONG_CONTROL`
    /// when any of its algorithms is; this says which flow's is).
    fn owns_window(&self) -> bool {
        Self::CONG_CONTROL
    }
    /// An ACK, for an algorithm that owns the window: set `w.cwnd` (and the pacing rate it
    /// reports); `rate` is the connection's sampler (an algorithm may mark it
    /// application-limited, as BBR's ProbeRTT does).
    fn cong_control(&mut self, _w: &mut Window, _c: &Control, _rate: &mut DeliveryRate) {}
    /// A new connection opens at `now`: `seed` is the flow's own random stream (an algorithm
    /// that randomizes draws from it), `rtt` the handshake's RTT sample (the idle path's RTT,
    /// as every TCP connection measures one on its SYN before data; Linux's `init` reads it).
    fn open(&mut self, _w: &mut Window, _seed: u64, _rtt: SimTime, _now: SimTime) {}
    /// The sender starts transmitting with nothing in the network (Linux's
    /// `CA_EVENT_TX_START`); `app_limited`: it had run out of data before.
    fn on_tx_start(&mut self, _app_limited: bool) {}
}

/// A boxed algorithm is the algorithm, every hook forwarded: how one whose state is much
/// larger than the others' (BBR's 248 B, against at most 56) sits in `Cc` without every TCP
/// sender carrying its size (a sender's state is read on every ACK; its size is cache lines).
impl<T: CongestionControl> CongestionControl for Box<T> {
    const PACES: bool = T::PACES;
    const CONG_CONTROL: bool = T::CONG_CONTROL;
    #[inline]
    fn on_ack_event(&mut self, w: &Window, a: &AckEvent) {
        (**self).on_ack_event(w, a)
    }
    #[inline]
    fn ssthresh(&mut self, w: &Window) -> f64 {
        (**self).ssthresh(w)
    }
    #[inline]
    fn cong_avoid(&mut self, w: &mut Window, a: &AckEvent) {
        (**self).cong_avoid(w, a)
    }
    #[inline]
    fn on_fast_retransmit(&mut self, w: &mut Window, inflight: u64, now: SimTime) {
        (**self).on_fast_retransmit(w, inflight, now)
    }
    #[inline]
    fn on_timeout(&mut self, w: &mut Window, inflight: u64, now: SimTime) {
        (**self).on_timeout(w, inflight, now)
    }
    #[inline]
    fn ect(&self) -> Ecn {
        (**self).ect()
    }
    #[inline]
    fn pacing_rate(&self, w: &Window, srtt: Option<SimTime>) -> Option<u64> {
        (**self).pacing_rate(w, srtt)
    }
    #[inline]
    fn restart(&mut self) {
        (**self).restart()
    }
    #[inline]
    fn on_credit(&mut self, w: &mut Window, granted: u64, snd_una: u64) {
        (**self).on_credit(w, granted, snd_una)
    }
    #[inline]
    fn owns_window(&self) -> bool {
        (**self).owns_window()
    }
    #[inline]
    fn paces(&self) -> bool {
        (**self).paces()
    }
    #[inline]
    fn cong_control(&mut self, w: &mut Window, c: &Control, rate: &mut DeliveryRate) {
        (**self).cong_control(w, c, rate)
    }
    #[inline]
    fn open(&mut self, w: &mut Window, seed: u64, rtt: SimTime, now: SimTime) {
        (**self).open(w, seed, rtt, now)
    }
    #[inline]
    fn on_tx_start(&mut self, app_limited: bool) {
        (**self).on_tx_start(app_limited)
    }
}

/// A boxed algorithm is made as the algorithm is (`CongestionControl for Box<T>`).
impl<S, T: NewCc<S>> NewCc<S> for Box<T> {
    type Params = T::Params;
    fn build(p: &Self::Params, setup: &S) -> Self {
        Box::new(T::build(p, setup))
    }
}

/// What a rate algorithm is made with for one flow.
#[derive(Copy, Clone, Debug)]
pub struct RateSetup {
    /// The flow's NIC line rate: where a flow starts and its ceiling.
    pub line_rate_bps: u64,
    pub now: SimTime,
    /// The fabric's largest base RTT: a full-size packet and its ACK over an idle path
    /// (the T of window-from-rate algorithms, HPCC sec. 3.1).
    pub base_rtt: SimTime,
    /// The flow's largest payload per packet, bytes (an algorithm that counts its window in
    /// packets divides by it).
    pub mss: u32,
}

/// Hooks every rate-based algorithm provides. The RoCE sender (`host/roce.rs`) paces each
/// packet one serialization time at `rate_bps` after the previous one, caps the bytes in
/// flight at `window` when the algorithm keeps one (and at the transport's own cap), and
/// feeds back what it sends and what comes back: ACKs (with their telemetry) and CNPs.
pub trait RateControl {
    /// The current sending rate, bits/s.
    fn rate_bps(&self) -> u64;
    /// Bring time-driven state (timers replayed lazily) up to `now`.
    fn advance(&mut self, _now: SimTime) {}
    /// `bytes` (on the wire) started at `now`.
    fn on_sent(&mut self, _bytes: u64, _now: SimTime) {}
    /// A Congestion Notification Packet arrived (RoCEv2, IBTA Annex A17).
    fn on_cnp(&mut self, _now: SimTime) {}
    /// An ACK of new data, with its RTT sample and echoed telemetry.
    fn on_ack(&mut self, _a: &AckEvent) {}
    /// When the rate next changes with no packet, ACK or CNP (a paced flow waiting for its
    /// turn wakes then too); `SimTime::MAX`: never.
    fn next_change(&self) -> SimTime {
        SimTime::MAX
    }
    /// Bytes the algorithm allows in flight (HPCC's window), if it keeps a window.
    fn window(&self) -> Option<u64> {
        None
    }
    /// Whether the receiving NIC answers CE-marked data with CNPs (the notification point
    /// of IBTA Annex A17 that DCQCN relies on); an algorithm fed by ACKs alone sends none.
    fn wants_cnp(&self) -> bool {
        false
    }
}

/// What both lists expand to: the per-flow state enum (`$Enum`, dispatching statically),
/// which algorithm (`$Kind`, by its scenario name, the list entry's field name), and every
/// algorithm's parameters (`$Params`, one field each), made with `$Setup`.
macro_rules! cc_list {
    ($Enum:ident, $Kind:ident, $Params:ident, $Setup:ty; $($(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])? $field:ident: $Arm:ident => $T:ty),*) => {
        /// An algorithm's per-flow state.
        #[derive(Clone, Debug)]
        pub enum $Enum { $($(#[cfg($cfg)])? $Arm($T)),* }

        /// Which algorithm: `transport.cc`.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $Kind { $($(#[doc = $doc])* $(#[cfg($cfg)])? $Arm),* }

        /// Every algorithm's parameters, as the scenario builder resolved them.
        #[derive(Clone, Debug, Default)]
        pub struct $Params { $($(#[cfg($cfg)])? pub $field: <$T as $crate::host::cc::NewCc<$Setup>>::Params,)* }

        impl $Kind {
            /// In list order.
            pub const ALL: &'static [$Kind] = &[$($(#[cfg($cfg)])? $Kind::$Arm),*];
            /// Its name in scenarios.
            pub const fn name(self) -> &'static str {
                match self { $($(#[cfg($cfg)])? $Kind::$Arm => stringify!($field)),* }
            }
            pub fn from_name(s: &str) -> Option<$Kind> {
                Self::ALL.iter().copied().find(|c| c.name() == s)
            }
            /// Whether the list entry is compiled for tests alone (a stand-in): it parses in
            /// test scenarios and is drawn by the property tests, but no reference or error
            /// message names it.
            pub const fn test_only(self) -> bool {
                match self { $($(#[cfg($cfg)])? $Kind::$Arm => false $(|| { let _ = stringify!($cfg); true })?),* }
            }
            /// What it is, with its source (the list entry's doc comment).
            pub fn doc(self) -> &'static str {
                match self { $($(#[cfg($cfg)])? $Kind::$Arm => concat!($($doc),*).trim()),* }
            }
        }

        impl $Enum {
            /// A new flow's state of algorithm `kind`.
            pub fn build(kind: $Kind, p: &$Params, setup: &$Setup) -> $Enum {
                use $crate::host::cc::NewCc;
                match kind { $($(#[cfg($cfg)])? $Kind::$Arm => $Enum::$Arm(<$T>::build(&p.$field, setup))),* }
            }
            $(
                /// This algorithm's state, if the flow runs it (tests and diagnostics).
                $(#[cfg($cfg)])?
                pub fn $field(&self) -> Option<&$T> {
                    #[allow(unreachable_patterns)]
                    match self { $Enum::$Arm(c) => Some(c), _ => None }
                }
            )*
        }
    };
}

/// Expands the ordered list of window-based algorithms into `Cc` (the enum the TCP sender
/// holds), `WindowCc` and `WindowCcParams`, and `Cc`'s `CongestionControl` dispatch.
macro_rules! window_ccs {
    ($($(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])? $field:ident: $Arm:ident => $T:ty),* $(,)?) => {
        cc_list!(Cc, WindowCc, WindowCcParams, $crate::host::tcp::TcpParams; $($(#[doc = $doc])* $(#[cfg($cfg)])? $field: $Arm => $T),*);

        impl $crate::host::cc::CongestionControl for Cc {
            const PACES: bool = { let mut _any = false; $($(#[cfg($cfg)])? { _any = _any || <$T as $crate::host::cc::CongestionControl>::PACES; })* _any };
            #[inline]
            fn on_ack_event(&mut self, w: &$crate::host::cc::Window, a: &$crate::host::cc::AckEvent) {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.on_ack_event(w, a)),* }
            }
            fn ssthresh(&mut self, w: &$crate::host::cc::Window) -> f64 {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.ssthresh(w)),* }
            }
            #[inline]
            fn cong_avoid(&mut self, w: &mut $crate::host::cc::Window, a: &$crate::host::cc::AckEvent) {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.cong_avoid(w, a)),* }
            }
            fn on_fast_retransmit(&mut self, w: &mut $crate::host::cc::Window, inflight: u64, now: $crate::sim::SimTime) {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.on_fast_retransmit(w, inflight, now)),* }
            }
            fn on_timeout(&mut self, w: &mut $crate::host::cc::Window, inflight: u64, now: $crate::sim::SimTime) {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.on_timeout(w, inflight, now)),* }
            }
            #[inline]
            fn ect(&self) -> $crate::net::Ecn {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.ect()),* }
            }
            #[inline]
            fn pacing_rate(&self, w: &$crate::host::cc::Window, srtt: Option<$crate::sim::SimTime>) -> Option<u64> {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.pacing_rate(w, srtt)),* }
            }
            fn on_credit(&mut self, w: &mut $crate::host::cc::Window, granted: u64, snd_una: u64) {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.on_credit(w, granted, snd_una)),* }
            }
            fn restart(&mut self) {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.restart()),* }
            }
            const CONG_CONTROL: bool = { let mut _any = false; $($(#[cfg($cfg)])? { _any = _any || <$T as $crate::host::cc::CongestionControl>::CONG_CONTROL; })* _any };
            fn owns_window(&self) -> bool {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.owns_window()),* }
            }
            #[inline]
            fn paces(&self) -> bool {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.paces()),* }
            }
            fn cong_control(&mut self, w: &mut $crate::host::cc::Window, ctl: &$crate::host::cc::Control, rate: &mut $crate::host::cc::delivery_rate::DeliveryRate) {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.cong_control(w, ctl, rate)),* }
            }
            fn open(&mut self, w: &mut $crate::host::cc::Window, seed: u64, rtt: $crate::sim::SimTime, now: $crate::sim::SimTime) {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.open(w, seed, rtt, now)),* }
            }
            fn on_tx_start(&mut self, app_limited: bool) {
                match self { $($(#[cfg($cfg)])? Cc::$Arm(c) => c.on_tx_start(app_limited)),* }
            }
        }
    };
}

/// Expands the ordered list of rate-based algorithms into `RateCc` (the enum the RoCE
/// sender holds), `RateCcKind` and `RateCcParams`, and `RateCc`'s `RateControl` dispatch.
macro_rules! rate_ccs {
    ($($(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])? $field:ident: $Arm:ident => $T:ty),* $(,)?) => {
        cc_list!(RateCc, RateCcKind, RateCcParams, $crate::host::cc::RateSetup; $($(#[doc = $doc])* $(#[cfg($cfg)])? $field: $Arm => $T),*);

        impl $crate::host::cc::RateControl for RateCc {
            #[inline]
            fn rate_bps(&self) -> u64 {
                match self { $($(#[cfg($cfg)])? RateCc::$Arm(c) => c.rate_bps()),* }
            }
            #[inline]
            fn advance(&mut self, now: $crate::sim::SimTime) {
                match self { $($(#[cfg($cfg)])? RateCc::$Arm(c) => c.advance(now)),* }
            }
            #[inline]
            fn on_sent(&mut self, bytes: u64, now: $crate::sim::SimTime) {
                match self { $($(#[cfg($cfg)])? RateCc::$Arm(c) => c.on_sent(bytes, now)),* }
            }
            fn on_cnp(&mut self, now: $crate::sim::SimTime) {
                match self { $($(#[cfg($cfg)])? RateCc::$Arm(c) => c.on_cnp(now)),* }
            }
            #[inline]
            fn on_ack(&mut self, a: &$crate::host::cc::AckEvent) {
                match self { $($(#[cfg($cfg)])? RateCc::$Arm(c) => c.on_ack(a)),* }
            }
            fn next_change(&self) -> $crate::sim::SimTime {
                match self { $($(#[cfg($cfg)])? RateCc::$Arm(c) => c.next_change()),* }
            }
            #[inline]
            fn window(&self) -> Option<u64> {
                match self { $($(#[cfg($cfg)])? RateCc::$Arm(c) => c.window()),* }
            }
            #[inline]
            fn wants_cnp(&self) -> bool {
                match self { $($(#[cfg($cfg)])? RateCc::$Arm(c) => c.wants_cnp()),* }
            }
        }
    };
}
